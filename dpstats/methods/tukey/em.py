"""TukeyEM's release: propose-test-release and the restricted exponential mechanism on the depth regions.

Amin, Joseph, Ribero & Vassilvitskii (ICLR 2023), Algorithms 1-2, with the
propose-test-release check of Brown, Gaboardi, Smith, Ullman & Zakynthinou
(NeurIPS 2021).  :func:`tukey_em` takes m models that differ in at most one
model between neighbouring data sets and releases one point; the proof
(replace-one, the factor exp(epsilon q / 2), the safety argument, the PTR
composition) is in docs/proofs/tukey.md.  The restricted exponential
mechanism lives here because TukeyEM is its only user.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstats.errors import MethodOptionError, PTRFailure
from dpstats.methods.common.extremes import QUIET, clamp_finite
from dpstats.methods.tukey.depth import (
    coordinate_shifts,
    finite_models,
    lemma_distance,
    log_exact_volumes,
    log_region_volumes,
    log_side_lengths,
    log_volumes,
    mass_distance,
    max_depth,
    point_of_depth,
)
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import MOVED_UP, exponential_mechanism, laplace_mechanism, public_uniform

__all__ = ["JITTER", "TukeyRelease", "jitter_models", "ptr_threshold", "restricted_exponential_mechanism",
           "tukey_em"]

JITTER = 1e-10
MIN_MODELS = 8  # t = floor(m/4) >= 2


def ptr_threshold(epsilon_ptr: float, delta: float) -> float:
    """tau = ln(1/(2 delta)) / epsilon_PTR: the noisy distance must exceed it for the test to pass."""
    return math.log(1.0 / (2.0 * delta)) / epsilon_ptr


@dataclass(frozen=True)
class TukeyRelease:
    """What one run of :func:`tukey_em` releases (all of it may be published).

    Attributes
    ----------
    point : numpy.ndarray
        The output of the restricted exponential mechanism.
    noisy_distance : float
        The PTR statistic with its Laplace noise.
    threshold : float
        The value it had to exceed.
    t : int
        The restriction depth.
    """

    point: np.ndarray
    noisy_distance: float
    threshold: float
    t: int


def jitter_models(models: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Break ties: b + 1e-10 * u * max(|b|, 1e-100) with u ~ U[-1, 1) public, independently per entry.

    Each model is moved by its own independent draw, which leaves neighbouring
    model sets differing in one model (coupling), so privacy is unaffected;
    the relative size keeps the jitter negligible at any scale of the data.
    An entry within 1e-10 of the largest double that the jitter would push
    past it is clamped to it (a function of the entry and its own draw).

    Parameters
    ----------
    models : numpy.ndarray
        (m, d).
    rng : numpy.random.Generator
        The fit's random source.

    Returns
    -------
    numpy.ndarray
    """
    u = public_uniform(-1.0, 1.0, models.shape, rng)
    with np.errstate(**QUIET):
        return clamp_finite(models + JITTER * u * np.maximum(np.abs(models), 1e-100))


def restricted_exponential_mechanism(log_base_measure: np.ndarray, scores: np.ndarray, *, sensitivity: float,
                                     epsilon: float, delta: float, rng: np.random.Generator, ledger: PrivacyLedger,
                                     name: str, note: str = "") -> int:
    """Exponential mechanism on a data-dependent candidate set admitted by a propose-test-release check.

    Samples index i with probability proportional to
    exp(log_base_measure[i] + epsilon * scores[i] / (2 * sensitivity)), the
    standard factor.  The candidates are restricted to a set that depends on
    the data (Brown et al. 2021), so the draw is (epsilon, delta)-
    indistinguishable only on data sets that a preceding PTR test has
    certified as safe, and the test passes an unsafe data set with
    probability at most delta.  The step is therefore charged (epsilon,
    delta); with the test's own epsilon the pair is (epsilon_test + epsilon,
    delta)-DP (Amin et al. 2023, Thm 1.1 and Lemma 3.7), which basic
    composition in the ledger reproduces exactly.  There is no ``monotone``
    option: under replace-one the un-halved factor costs up to 2 epsilon
    (docs/proofs/tukey.md).  The ledger is charged before the Gumbel draw.

    Parameters
    ----------
    log_base_measure : numpy.ndarray
        Log volume each candidate stands for (-inf: never chosen).
    scores : numpy.ndarray
        Score of each candidate.
    sensitivity : float
        Sensitivity of the scores.
    epsilon, delta : float
        Privacy of the step.
    rng : numpy.random.Generator
        The fit's random source.
    ledger : PrivacyLedger
        The fit's ledger.
    name, note : str
        The ledger step.

    Returns
    -------
    int
        The chosen index.
    """
    return exponential_mechanism(log_base_measure, scores, sensitivity=sensitivity, epsilon=epsilon, rng=rng,
                                 ledger=ledger, name=name, delta=delta, note=note)


def tukey_em(models: np.ndarray, *, epsilon_ptr: float, epsilon_em: float, delta: float, rng: np.random.Generator,
             ledger: PrivacyLedger, ptr: str = "lemma", hint: str = "") -> TukeyRelease:
    """PTRCheck + RestrictedTukeyEM on m models (Amin et al., Algorithms 1-2; docs/proofs/tukey.md).

    The ``models`` are jittered here (:func:`jitter_models`) before anything
    is computed from them; a model with a non-finite entry is first replaced
    by the public fallback point
    (:func:`~dpstats.methods.tukey.depth.finite_models`), and coordinates
    whose models come near the largest double are divided by 4 while the
    volumes and the point are formed
    (:func:`~dpstats.methods.tukey.depth.coordinate_shifts`: the law of the
    output is unchanged, nothing overflows).

    Parameters
    ----------
    models : numpy.ndarray
        (m, d) block models, m >= 8.
    epsilon_ptr, epsilon_em : float
        Budgets of the test and of the exponential mechanism.
    delta : float
        The delta of the release.
    rng : numpy.random.Generator
        The fit's random source.
    ledger : PrivacyLedger
        The fit's ledger.
    ptr : str
        ``"lemma"`` (Lemma 3.6) or ``"mass"`` (docs/proofs/tukey.md).
    hint : str
        Appended to the refusal's message.

    Returns
    -------
    TukeyRelease

    Raises
    ------
    PTRFailure
        When the test refuses (its budget is spent).
    """
    m, d = models.shape
    t = (m // 2) // 2
    q_max = max_depth(m)
    if t < 2:
        raise ValueError(f"TukeyEM needs at least {MIN_MODELS} models")
    if ptr not in ("lemma", "mass"):
        raise MethodOptionError(f"ptr must be 'lemma' or 'mass', got {ptr!r}")
    s = np.sort(jitter_models(finite_models(np.array(models, dtype=float)), rng).T, axis=1)
    shifts = coordinate_shifts(s)
    if shifts.any():
        s = np.ldexp(s, -shifts[:, None])
    log_sides = log_side_lengths(s)
    log_vol = log_volumes(log_sides)
    log_region = log_region_volumes(s, log_sides)
    log_exact = log_exact_volumes(log_region)
    if ptr == "lemma":
        distance = lemma_distance(log_vol, t, epsilon_em, delta)
    else:
        distance = mass_distance(log_vol, log_exact, t, epsilon_em, delta)
    threshold = ptr_threshold(epsilon_ptr, delta)
    noisy = float(laplace_mechanism(float(distance), l1_sensitivity=1.0, epsilon=epsilon_ptr, rng=rng, ledger=ledger,
                                    name="TukeyEM PTR: noisy distance to unsafety "
                                         + ("(Lemma 3.6)" if ptr == "lemma" else "(mass bound)")))
    if not noisy > threshold:
        spent = ledger.spent
        raise PTRFailure(
            f"TukeyEM's propose-test-release check refused to release: the noisy distance to an unsafe data set "
            f"was {noisy:.1f}, below the threshold {threshold:.1f}, so the {m} block estimates are not concentrated "
            f"enough for this budget. No coefficients were released, but the test's budget is spent "
            f"(epsilon={spent[0]:.4g}, delta={spent[1]:.3g}).",
            privacy_spent=spent, hint=hint, noisy_statistic=noisy, threshold=threshold)
    depths = np.arange(t, q_max + 1)
    index = restricted_exponential_mechanism(
        log_exact[t - 1:], depths.astype(float), sensitivity=1.0, epsilon=epsilon_em, delta=delta, rng=rng,
        ledger=ledger, name=f"TukeyEM restricted exponential mechanism (depth >= {t} of {m} models)",
        note="its delta: the PTR test passes an unsafe data set with probability <= delta")
    q = int(depths[index])
    point = point_of_depth(s, log_sides, log_region, q, public_uniform(0.0, 1.0, d + 2, rng))
    if shifts.any():  # back to the models' scale (exact), inside the coordinate's range so that nothing overflows
        point = np.where(shifts > 0, np.ldexp(np.clip(point, s[:, 0], s[:, -1]), shifts), point)
    return TukeyRelease(point=point, noisy_distance=noisy, threshold=threshold, t=t)


# the deprecated dpstats.privacy.mechanisms.restricted_exponential_mechanism (one release)
MOVED_UP.add("restricted_exponential_mechanism", f"{__name__}.restricted_exponential_mechanism",
             restricted_exponential_mechanism)
