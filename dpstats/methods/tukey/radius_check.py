"""The private check that clipping at TukeyEM's private radii keeps the columns' second moments.

The moments path corrects its pilot by one step, the unclipped block moments
whitened by the Gram matrix G of the data clipped at the private radii.  With
H the unclipped Gram matrix, the step shrinks the pilot's error by the factor
I - G^{-1} H: small when clipping rarely bites, and larger than 1 in size
(the step overshoots) once clipping removes half of a column's second moment,
as for a column whose values sit mostly at one point (a zero-inflated count:
its private quartile of |v - centre| is about zero) or whose tails are
extreme.  Two discrete Laplace releases over the preprocessing sample decide
whether the fit falls back to per-block OLS (which needs no radii); their
sensitivities are derived in docs/proofs/tukey.md, and
``tests/test_tukey_check_audit.py`` audits them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstats.methods.tukey.preprocessing import RADIUS_K, Preprocessing
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import laplace_mechanism

__all__ = [
    "CHECK_CAP",
    "CHECK_EXCESS",
    "CHECK_MARGIN",
    "CHECK_SHARE",
    "MASS_LIMIT",
    "MASS_SHARE",
    "RadiusCheck",
    "check_radii",
    "clip_excess",
]

CHECK_SHARE = 0.04  # blocks="moments": fraction of epsilon spent checking the private radii
CHECK_CAP = 3.0  # the check compares the second moment of z capped at CHECK_CAP with the clipped one (cap 1)
CHECK_EXCESS = 0.5  # a column fails when the capped moment exceeds (1 + CHECK_EXCESS) x the clipped one ...
CHECK_MARGIN = 6.0  # ... by more than CHECK_MARGIN noise scales
MASS_SHARE = 0.25  # fraction of the check's budget spent on the mass-at-the-centre count
MASS_LIMIT = 0.7  # ... which fails when some column has more than this fraction of the sample within half its
#                   private quantile of |x - centre|: the quantile is then degenerate (about 0)


@dataclass(frozen=True)
class RadiusCheck:
    """The outcome of :func:`check_radii` (released values and what they imply).

    Attributes
    ----------
    passed : bool
        No column failed.
    radius_check : numpy.ndarray
        The noisy excesses in noise scales (a column fails above CHECK_MARGIN).
    mass_check : float
        The noisy largest count as a fraction of the sample (fails above MASS_LIMIT).
    why, short : str
        Why it failed, in a sentence and in a few words ("" when it passed).
    """

    passed: bool
    radius_check: np.ndarray
    mass_check: float
    why: str = ""
    short: str = ""


def clip_excess(X_sub: np.ndarray, prep: Preprocessing) -> np.ndarray:
    """The statistics of :func:`check_radii` over sample rows, for the k columns in ``prep.private_columns``.

    One array of length 2k: first T_j = sum_i [min(z_ij^2, CHECK_CAP^2) -
    (1 + CHECK_EXCESS) min(z_ij^2, 1)], positive when clipping at 1 (the
    pilot's) removes more than a fraction CHECK_EXCESS / (1 + CHECK_EXCESS)
    of the column's second moment capped at CHECK_CAP (each row adds a value
    in [-CHECK_EXCESS, CHECK_CAP^2 - 1 - CHECK_EXCESS]); then C_j =
    #{i : |z_ij| <= 1 / (2 RADIUS_K)}, the rows within half the column's
    private quantile of |x - centre|.  Sums over rows, so chunks add them up.

    Parameters
    ----------
    X_sub : numpy.ndarray
        Sample rows (rows x d).
    prep : Preprocessing
        The released centres and radii.

    Returns
    -------
    numpy.ndarray
        (2k,).
    """
    cols = list(prep.private_columns)
    z = (X_sub[:, cols] - prep.centre[cols]) / prep.radius[cols]
    z *= z
    excess = np.minimum(z, CHECK_CAP ** 2).sum(axis=0) - (1.0 + CHECK_EXCESS) * np.minimum(z, 1.0).sum(axis=0)
    near = (z <= 1.0 / (2.0 * RADIUS_K) ** 2).sum(axis=0)
    return np.concatenate([excess, near.astype(float)])


def check_radii(prep: Preprocessing, statistics: np.ndarray, *, epsilon: float, sample_rows: int,
                ledger: PrivacyLedger, rng: np.random.Generator) -> RadiusCheck:
    """Check privately that clipping at the private radii leaves the columns' second moments nearly intact.

    ``statistics`` (:func:`clip_excess` over the sample) holds two releases,
    both discrete Laplace, with the check's budget e_c split between them:
    (a) the excesses T_j at (1 - MASS_SHARE) e_c, L1 sensitivity
    (CHECK_CAP^2 - 1) k; a column fails when its noisy T_j exceeds
    CHECK_MARGIN noise scales; (b) max_j C_j at MASS_SHARE e_c, sensitivity 1;
    the check fails when it exceeds MASS_LIMIT times the sample (without
    margin: a needless fall back costs little accuracy, a missed one
    multiplies the noise of that column's coefficient by 1 / radius).  A
    column with T_j <= 0 fails with probability at most e^-CHECK_MARGIN / 2.

    Parameters
    ----------
    prep : Preprocessing
        The released centres and radii (k = ``len(prep.private_columns)`` > 0 columns are checked).
    statistics : numpy.ndarray
        :func:`clip_excess` summed over the sample rows.
    epsilon : float
        e_c, the check's budget.
    sample_rows : int
        Rows in the sample (public).
    ledger : PrivacyLedger
        The fit's ledger.
    rng : numpy.random.Generator
        The fit's random source.

    Returns
    -------
    RadiusCheck
    """
    k = len(prep.private_columns)
    excess, near = statistics[:k], statistics[k:]
    eps_mass = MASS_SHARE * epsilon
    eps_excess = epsilon - eps_mass
    sensitivity = (CHECK_CAP ** 2 - 1.0) * k
    scale = sensitivity / eps_excess
    noisy = np.asarray(laplace_mechanism(excess, l1_sensitivity=sensitivity, epsilon=eps_excess, rng=rng,
                                         ledger=ledger,
                                         name="TukeyEM preprocessing: private check of the radii (excess of the "
                                              f"second moments capped at {CHECK_CAP:g} over the clipped ones)"),
                       dtype=float).reshape(k)
    mass = float(laplace_mechanism(float(near.max()), l1_sensitivity=1.0, epsilon=eps_mass, rng=rng, ledger=ledger,
                                   name="TukeyEM preprocessing: private check of the radii (largest count of rows "
                                        "within half a column's private quantile of |x - centre|)"))
    bad = [j for j, t in zip(prep.private_columns, noisy, strict=True) if t > CHECK_MARGIN * scale]
    degenerate = mass > MASS_LIMIT * sample_rows
    radius_check, mass_check = (noisy / scale).round(2), round(mass / sample_rows, 3)
    if not bad and not degenerate:
        return RadiusCheck(True, radius_check, mass_check)
    why = (f"clipping at the private radius removes much of the second moment of column(s) "
           f"{', '.join(str(j) for j in bad)}" if bad else "")
    if degenerate:
        why += ("; " if why else "") + (f"more than {MASS_LIMIT:.0%} of the sample lies within half of some "
                                         "column's private quantile of |x - centre|, so that quantile is about zero")
    return RadiusCheck(False, radius_check, mass_check, why=f"a private check found that {why}",
                       short="mass at the centre" if not bad else f"radius check failed for columns {bad}")
