"""Privacy audit of TukeyEM's radius check (dpstats.methods.tukey.radius_check: ``check_radii``, ``clip_excess``).

With ``blocks="moments"`` TukeyEM spends CHECK_SHARE (4%) of epsilon on two discrete Laplace releases
computed by ``_clip_excess`` over the sample rows (the rows at the first positions of the public order):

* the excesses T_j = sum_i [min(z_ij^2, CHECK_CAP^2) - (1 + CHECK_EXCESS) min(z_ij^2, 1)], one per column
  with a released radius, at (1 - MASS_SHARE) of the check's budget; a row adds a value in
  [-CHECK_EXCESS, CHECK_CAP^2 - 1 - CHECK_EXCESS] to each, so the claimed L1 sensitivity under replace-one
  is (CHECK_CAP^2 - 1) k for k such columns;
* max_j C_j, C_j = #{i : |z_ij| <= 1 / (2 RADIUS_K)} (the mass at the centre), at MASS_SHARE of it; a
  replaced row moves every C_j, hence their maximum, by at most 1.

Each audit calls what the fit calls, ``check_radii(prep, clip_excess(X_sub, prep), epsilon=..., ...)``, with
the package's PrivacyLedger and the check's budget from a plan made by ``make_plan`` (the fit's own planning),
on two sample matrices that differ in one row, chosen so that the audited statistic moves by its full claimed
sensitivity (checked exactly by ``test_the_pairs_move_the_statistics_by_their_full_sensitivity``).  The
released values are read from the returned ``RadiusCheck`` ("radius_check": the noisy excesses in noise scales;
"mass_check": the noisy count as a fraction of the sample), which is exactly what a fit publishes, and the
Clopper-Pearson lower bound on epsilon (dpstats.privacy.audit) is compared with the epsilon the ledger
charged for that release.

The released centres and radii are held fixed: they are released before the check, which must be DP
given them (adaptive composition).  The ledger's budget is 100, so the check spends 4 (1 on the count, 3
on the excesses): at 4% of an everyday epsilon (a few hundredths) no audit of feasible size could tell a
correct check from a broken one, while the sensitivity claims do not depend on the budget.

False-failure rate: alpha = 1e-3 per validity audit (for a correct release the lower bound exceeds the
charged epsilon with probability at most alpha over seeds); seeds are fixed, so every run is reproducible.
The fast audits (a couple of seconds each) run in CI; the ``@pytest.mark.slow`` ones use 10x the runs and
add the k = 3 excess vector and the joint release.  ``test_audit_flags_a_check_with_half_its_noise`` shows
that the fast configuration has teeth.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from dpstats.methods.common.row_passes import add_arrays
from dpstats.methods.registry import FitContext
from dpstats.methods.tukey import SPEC, radius_check
from dpstats.methods.tukey.passes import SampleCheck
from dpstats.methods.tukey.plan import FitLog, Plan, make_plan
from dpstats.methods.tukey.preprocessing import RADIUS_K, Preprocessing
from dpstats.methods.tukey.radius_check import CHECK_CAP, CHECK_EXCESS, check_radii, clip_excess
from dpstats.privacy.audit import audit_mechanism
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.rows import InMemoryRows

ALPHA = 1e-3  # false-failure rate of every validity audit below
FAST_RUNS = 5_000  # runs per data set in CI (about 0.2 ms per run)
SLOW_RUNS = 50_000
EPSILON, DELTA = 100.0, 1e-6  # the check spends CHECK_SHARE * EPSILON = 4: 1 on the count, 3 on the excesses
N_ROWS = 100  # the sample (n <= PREP_ROWS, so every row); mass_check is rounded to 1e-3 of it (0.1 rows)
CENTRE, RADIUS = 5.0, 2.0  # the released centre and radius of every private column: z = (x - 5) / 2
FAR = 1e6  # a value far outside the clip radius (z = 5e5)
EXCESS_STEP, MASS_STEP = "excess of the second moments", "largest count of rows"  # ledger step names
PER_ROW = (-CHECK_EXCESS, CHECK_CAP ** 2 - 1.0 - CHECK_EXCESS)  # what one row adds to each T_j


def _prep(k: int) -> Preprocessing:
    """Released centres and radii of an intercept (column 0) and k private columns."""
    d = k + 1
    centre, radius = np.full(d, CENTRE), np.full(d, RADIUS)
    centre[0], radius[0] = 0.0, 1.0
    return Preprocessing(centre, radius, 0.0, 1.0, 0, clip=True, private_columns=tuple(range(1, d)))


def _sample(k: int) -> np.ndarray:
    """N_ROWS sample rows, every private column at its centre (all of them in the half-quantile window)."""
    X = np.full((N_ROWS, k + 1), CENTRE)
    X[:, 0] = 1.0
    return X


def _mass_pair(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row 0 moves from the centre (inside every half-quantile window) to far outside every clip radius:
    every C_j, so max_j C_j, falls by 1."""
    D, Dp = _sample(k), _sample(k)
    Dp[0, 1:] = FAR
    return D, Dp


def _excess_pair(k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row 0 moves from |z| = 1 in every private column (the least a row adds to T_j, -CHECK_EXCESS) to far
    beyond CHECK_CAP (the most, CHECK_CAP^2 - 1 - CHECK_EXCESS): each T_j moves by CHECK_CAP^2 - 1, the L1
    norm by the claimed sensitivity; the counts C_j do not change (row 0 is outside the window in both)."""
    D, Dp = _sample(k), _sample(k)
    D[0, 1:] = CENTRE + RADIUS
    Dp[0, 1:] = FAR
    return D, Dp


def _plan(k: int) -> Plan:
    """The fit's own plan for 100,000 rows, an intercept and k columns, blocks="moments" (m = 1000 public: 16
    models would be refused before anything is spent, their test being hopeless at any epsilon)."""
    ctx = FitContext(n=100_000, d=k + 1, ledger=PrivacyLedger(EPSILON, DELTA), rng=np.random.default_rng(0),
                     intercept_index=0)
    return make_plan(ctx, SPEC.parse_options({"m": 1000, "blocks": "moments"}), FitLog())


def _release(k: int) -> Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, float, PrivacyLedger]]:
    """run(sample, rng) -> (radius_check, mass_check as a count, ledger): one release of the check, through the
    fit's code path (the fit calls exactly ``check_radii(prep, clip_excess(X_sub, prep), ...)``)."""
    plan, prep = _plan(k), _prep(k)
    assert plan.share_check == radius_check.CHECK_SHARE  # a check is planned: k > 0 columns need a private radius

    def run(X: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float, PrivacyLedger]:
        ledger = PrivacyLedger(EPSILON, DELTA)
        out = check_radii(prep, clip_excess(X, prep), epsilon=plan.share_check * EPSILON, sample_rows=N_ROWS,
                          ledger=ledger, rng=rng)
        return out.radius_check, out.mass_check * N_ROWS, ledger
    return run


def _charged(k: int, step: str) -> tuple[float, float]:
    """(epsilon, noise scale) the ledger records for the release named ``step`` of the check."""
    *_, ledger = _release(k)(_sample(k), np.random.default_rng(0))
    (found,) = [s for s in ledger.steps if step in s.name]
    return float(found.epsilon), float(found.noise_scale)


def _laplace_llr(x: np.ndarray, mean_d: np.ndarray, mean_dp: np.ndarray, scale: float) -> float:
    """The log-likelihood ratio of Laplace(mean_dp, scale) against Laplace(mean_d, scale) at x, coordinates
    independent: the most powerful statistic for a threshold test between the two (Neyman-Pearson)."""
    return float(np.sum(np.abs(x - mean_d) - np.abs(x - mean_dp)) / scale)


def _excess_in_noise_scales(X: np.ndarray, k: int) -> np.ndarray:
    """The exact T_j of a sample in the units of radius_check (T_j / s, s = (CHECK_CAP^2 - 1) k / eps_excess)."""
    eps_excess, _ = _charged(k, EXCESS_STEP)
    return clip_excess(X, _prep(k))[:k] / ((CHECK_CAP ** 2 - 1.0) * k / eps_excess)


def _audit(k: int, pair: tuple[np.ndarray, np.ndarray], statistic: Callable, runs: int, seed: int) -> float:
    return audit_mechanism(_release(k), pair[0], pair[1], runs=runs, statistic=statistic, alpha=ALPHA,
                           seed=seed).epsilon_lower_bound


def _mass_statistic(out: tuple) -> float:
    return float(out[1])


def _excess_statistic(k: int) -> Callable[[tuple], float]:
    D, Dp = _excess_pair(k)
    a, b = _excess_in_noise_scales(D, k), _excess_in_noise_scales(Dp, k)
    return lambda out: _laplace_llr(np.asarray(out[0], dtype=float), a, b, 1.0)


# ---------------------------------------------------------------------------------------------
# The sensitivity claims, checked exactly
# ---------------------------------------------------------------------------------------------

# single rows at the edges of every case of _clip_excess: the centre, the half-quantile window's edge and just
# past it, the clip radius, CHECK_CAP, beyond it, the largest floats and infinities (z^2 overflows to inf)
EDGE_Z = np.array([0.0, 1 / (2 * RADIUS_K), np.nextafter(1 / (2 * RADIUS_K), 1.0), 0.5, np.nextafter(1.0, 0.0), 1.0,
                   2.0, CHECK_CAP, np.nextafter(CHECK_CAP, 9.0), 1e3, 1e154, 1e300, np.inf])


def test_one_row_adds_a_bounded_amount_to_every_statistic():
    """Each statistic is a sum over rows, so its replace-one sensitivity is the width of what one row adds:
    CHECK_CAP^2 - 1 to each T_j (so (CHECK_CAP^2 - 1) k in L1) and 0 or 1 to each C_j (so 1 to their
    maximum).  Deterministic."""
    prep = _prep(1)
    rows = np.column_stack([np.ones(2 * EDGE_Z.size), CENTRE + RADIUS * np.r_[EDGE_Z, -EDGE_Z]])
    with np.errstate(over="ignore", invalid="ignore"):
        added = np.array([clip_excess(row[None, :], prep) for row in rows])
    assert np.all(np.isfinite(added))
    assert added[:, 0].min() == PER_ROW[0] and added[:, 0].max() == PER_ROW[1]
    assert set(added[:, 1]) == {0.0, 1.0}


def test_the_pairs_move_the_statistics_by_their_full_sensitivity():
    """The audited pairs are worst cases: the excess pair moves the L1 norm of (T_j) by exactly the charged
    sensitivity (without the grid's rounding allowance) and keeps the counts; the mass pair moves max_j C_j
    by exactly 1.  The chunked path (rows read in chunks or on a cluster) sums the same statistics.
    Deterministic."""
    for k in (1, 3):
        prep = _prep(k)
        D, Dp = _excess_pair(k)
        a, b = clip_excess(D, prep), clip_excess(Dp, prep)
        assert np.abs(b[:k] - a[:k]).sum() == (CHECK_CAP ** 2 - 1.0) * k
        assert np.array_equal(a[k:], b[k:])
        D, Dp = _mass_pair(k)
        assert clip_excess(D, prep)[k:].max() - clip_excess(Dp, prep)[k:].max() == 1.0
        for X in (D, Dp):
            chunked = InMemoryRows(X, np.zeros(N_ROWS), 7).reduce(SampleCheck(np.arange(N_ROWS), prep), add_arrays)
            np.testing.assert_allclose(chunked, clip_excess(X, prep), rtol=1e-12)


def test_the_ledger_charges_the_claimed_sensitivities():
    """The two steps the check charges: the excesses at (1 - MASS_SHARE) of CHECK_SHARE * epsilon with L1
    sensitivity (CHECK_CAP^2 - 1) k plus the rounding allowance, the count at MASS_SHARE of it with
    sensitivity 1 plus the allowance; both discrete Laplace."""
    for k in (1, 3):
        *_, ledger = _release(k)(_sample(k), np.random.default_rng(1))
        excess, mass = ledger.steps
        e_c = radius_check.CHECK_SHARE * EPSILON
        assert EXCESS_STEP in excess.name and MASS_STEP in mass.name
        assert excess.epsilon == pytest.approx((1 - radius_check.MASS_SHARE) * e_c)
        assert mass.epsilon == pytest.approx(radius_check.MASS_SHARE * e_c)
        assert excess.sensitivity == pytest.approx((CHECK_CAP ** 2 - 1.0) * k, rel=1e-12)
        assert mass.sensitivity == pytest.approx(1.0, rel=1e-12)
        assert excess.discrete and mass.discrete


# ---------------------------------------------------------------------------------------------
# Black-box audits (fast: CI)
# ---------------------------------------------------------------------------------------------

def test_audit_mass_count():
    """The count max_j C_j on the mass pair (k = 3: the row leaves every column's window at once).
    False-failure rate alpha = 1e-3.  Measured lower bound 0.80 against the charged 1 (0.78-0.83 over seeds
    11-16)."""
    eps, _ = _charged(3, MASS_STEP)
    bound = _audit(3, _mass_pair(3), _mass_statistic, FAST_RUNS, seed=11)
    assert 0.5 < bound <= eps


def test_audit_excess():
    """The excess T_1 on the excess pair (k = 1).  False-failure rate alpha = 1e-3.  Measured lower bound
    2.69 against the charged 3 (2.39-2.69 over seeds 11-16)."""
    eps, _ = _charged(1, EXCESS_STEP)
    bound = _audit(1, _excess_pair(1), _excess_statistic(1), FAST_RUNS, seed=12)
    assert 1.5 < bound <= eps


def test_audit_flags_a_check_with_half_its_noise(monkeypatch):
    """A check that claims half its true sensitivity (so its count has half the noise and a true epsilon of 2
    against the charged 1) is caught by the fast configuration.  Measured lower bound 1.69; over seeds 13-18
    it ranged from 1.61 to 1.79 (sd about 0.07), so missing the broken check would take a bound 9 sd below its
    mean."""
    real = radius_check.laplace_mechanism

    def halved(value, *, l1_sensitivity, **kw):
        return real(value, l1_sensitivity=l1_sensitivity / 2.0, **kw)

    monkeypatch.setattr(radius_check, "laplace_mechanism", halved)
    eps, _ = _charged(3, MASS_STEP)
    assert _audit(3, _mass_pair(3), _mass_statistic, FAST_RUNS, seed=13) > eps


# ---------------------------------------------------------------------------------------------
# Black-box audits (slow: 10x the runs, the excess vector and the joint release)
# ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_audit_mass_count_slow():
    """False-failure rate alpha = 1e-3.  Measured lower bound 0.905 against the charged 1."""
    eps, _ = _charged(3, MASS_STEP)
    assert 0.8 < _audit(3, _mass_pair(3), _mass_statistic, SLOW_RUNS, seed=21) <= eps


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 3])
def test_audit_excess_slow(k: int):
    """The excess vector (T_1..T_k) through its Laplace log-likelihood ratio (the optimal threshold
    statistic; with k = 3 the sensitivity is shared by three coordinates).  False-failure rate 1e-3 per k.
    Measured lower bounds 2.80 (k = 1) and 2.84 (k = 3) against the charged 3: the claimed L1 sensitivity
    (CHECK_CAP^2 - 1) k is attained, not just an upper bound."""
    eps, _ = _charged(k, EXCESS_STEP)
    assert 0.8 * eps < _audit(k, _excess_pair(k), _excess_statistic(k), SLOW_RUNS, seed=22 + k) <= eps


@pytest.mark.slow
def test_audit_joint_release_slow():
    """Both releases at once on the mass pair (the row leaves the window and goes past CHECK_CAP in all three
    columns: the count moves by 1, each T_j by CHECK_CAP^2 - 1 - CHECK_EXCESS), through the joint Laplace
    log-likelihood ratio, against the check's whole charge (basic composition).  The true privacy loss of
    this pair is 1 + 3 x 7.5 / 8 = 3.81 of the charged 4.  False-failure rate alpha = 1e-3.  Measured lower
    bound 3.47."""
    k = 3
    eps_excess, _ = _charged(k, EXCESS_STEP)
    eps_mass, mass_scale = _charged(k, MASS_STEP)
    D, Dp = _mass_pair(k)
    a, b = _excess_in_noise_scales(D, k), _excess_in_noise_scales(Dp, k)
    prep = _prep(k)
    count_d, count_dp = clip_excess(D, prep)[k:].max(), clip_excess(Dp, prep)[k:].max()

    def joint(out: tuple) -> float:
        return (_laplace_llr(np.asarray(out[0], dtype=float), a, b, 1.0)
                + _laplace_llr(np.array([out[1]]), np.array([count_d]), np.array([count_dp]), mass_scale))

    bound = _audit(k, (D, Dp), joint, SLOW_RUNS, seed=31)
    assert 3.0 < bound <= eps_excess + eps_mass
