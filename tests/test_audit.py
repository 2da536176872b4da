"""The statistical audit helper (dpstats.privacy.audit): Clopper-Pearson, power and validity.

Fixed seeds throughout.  A "false failure" is a failure of a correct
implementation for an unlucky seed; its rate is stated per test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpstats.privacy.audit import AuditResult, audit_mechanism, audit_samples, clopper_pearson, epsilon_lower_bound
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism, laplace_mechanism

# ---------------------------------------------------------------------------------------------
# Clopper-Pearson
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [10, 57, 200])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_clopper_pearson_has_exact_coverage(n, alpha):
    """Each one-sided bound misses p with probability <= alpha, for every p (exact sums over k, no simulation).

    The sup over p of the miss rate comes close to alpha, so the bounds are not trivially wide.
    """
    ks = np.arange(n + 1)
    bounds = np.array([clopper_pearson(int(k), n, alpha) for k in ks])
    worst_lo = worst_hi = 0.0
    for p in np.linspace(0.001, 0.999, 181):
        pmf = stats.binom.pmf(ks, n, p)
        lo_miss = float(pmf[bounds[:, 0] > p].sum())  # P(lower bound > p)
        hi_miss = float(pmf[bounds[:, 1] < p].sum())  # P(upper bound < p)
        assert lo_miss <= alpha * (1 + 1e-9)
        assert hi_miss <= alpha * (1 + 1e-9)
        worst_lo, worst_hi = max(worst_lo, lo_miss), max(worst_hi, hi_miss)
    assert worst_lo > 0.5 * alpha and worst_hi > 0.5 * alpha


@pytest.mark.parametrize("n, p", [(30, 0.2), (500, 0.01), (1000, 0.5)])
def test_clopper_pearson_coverage_by_simulation(n, p):
    """20000 simulated binomials (seed 5): miss rate of each one-sided 95% bound <= 5% + 4.5 SE.

    False-failure rate: two one-sided z-tests at 4.5 SE, below 7e-6 together.
    """
    alpha, sims = 0.05, 20_000
    ks = np.random.default_rng(5).binomial(n, p, size=sims)
    table = {int(k): clopper_pearson(int(k), n, alpha) for k in np.unique(ks)}
    lo_miss = np.mean([table[int(k)][0] > p for k in ks])
    hi_miss = np.mean([table[int(k)][1] < p for k in ks])
    se = math.sqrt(alpha * (1 - alpha) / sims)
    assert lo_miss <= alpha + 4.5 * se
    assert hi_miss <= alpha + 4.5 * se


def test_clopper_pearson_edges_and_width():
    assert clopper_pearson(0, 100, 0.05)[0] == 0.0
    assert clopper_pearson(100, 100, 0.05)[1] == 1.0
    assert clopper_pearson(0, 100, 0.05)[1] == pytest.approx(1 - 0.05 ** (1 / 100))  # (1-p)^n = alpha
    assert clopper_pearson(100, 100, 0.05)[0] == pytest.approx(0.05 ** (1 / 100))
    lo, hi = clopper_pearson(500, 1000, 0.025)
    assert 0.46 < lo < 0.5 < hi < 0.54  # about 0.5 +- 1.96 * 0.0158


def test_epsilon_lower_bound_formula():
    n, alpha, delta = 1000, 1e-3, 1e-4
    p_lo, _ = clopper_pearson(600, n, alpha / 2)
    _, q_hi = clopper_pearson(100, n, alpha / 2)
    assert epsilon_lower_bound(600, 100, n, delta, alpha) == pytest.approx(math.log((p_lo - delta) / q_hi))
    assert epsilon_lower_bound(100, 600, n, 0.0, alpha) == 0.0       # never negative
    assert epsilon_lower_bound(600, 100, n, 0.9, alpha) == 0.0       # delta swallows p
    assert epsilon_lower_bound(600, 100, n, 0.1, alpha) < epsilon_lower_bound(600, 100, n, 0.0, alpha)


# ---------------------------------------------------------------------------------------------
# power and validity of the audit
# ---------------------------------------------------------------------------------------------

def _laplace_run(scale_factor: float, eps: float):
    """A counting query on data in {0, 1}^n (L1 sensitivity 1) through the Laplace mechanism.

    ``scale_factor`` < 1 divides the noise (a broken mechanism) while still claiming ``eps``.
    """
    def run(data, rng):
        ledger = PrivacyLedger(eps, 1e-9)
        if scale_factor == 1.0:
            return laplace_mechanism(float(np.sum(data)), l1_sensitivity=1.0, epsilon=eps, rng=rng,
                                     ledger=ledger, name="count")
        return float(np.sum(data)) + rng.laplace(0.0, scale_factor / eps)
    return run


D = np.zeros(10)
D_PRIME = np.r_[1.0, np.zeros(9)]  # one row replaced: the count moves by its full sensitivity


def test_audit_has_power_against_half_the_noise():
    """Laplace with half the calibrated noise is really 2-DP; claimed 1.  4000 runs per data set catch it.

    With a fixed seed this is deterministic; the expected lower bound is about 1.75, so the
    chance (over seeds) of missing the bug is far below 1e-3.
    """
    res = audit_mechanism(_laplace_run(0.5, 1.0), D, D_PRIME, runs=4000, seed=3)
    assert isinstance(res, AuditResult)
    assert res.epsilon_lower_bound > 1.0
    assert res.epsilon_lower_bound <= 2.0 + 1e-9  # and still a valid bound on the true epsilon 2


@pytest.mark.parametrize("seed", range(5))
def test_audit_is_valid_for_a_correct_laplace_mechanism(seed):
    """Claimed = true epsilon = 1.  False-failure rate: alpha = 1e-3 per seed."""
    res = audit_mechanism(_laplace_run(1.0, 1.0), D, D_PRIME, runs=4000, seed=seed)
    assert res.epsilon_lower_bound <= 1.0
    assert res.epsilon_lower_bound > 0.5  # and it is not vacuous: the bound is close to the truth


@pytest.mark.parametrize("seed", range(3))
def test_audit_is_valid_for_a_correct_gaussian_mechanism_with_delta(seed):
    """(2, 1e-3) exact Gaussian.  False-failure rate: alpha = 1e-3 per seed."""
    eps, delta = 2.0, 1e-3

    def run(data, rng):
        return gaussian_mechanism(float(np.sum(data)), l2_sensitivity=1.0, epsilon=eps, delta=delta, rng=rng,
                                  ledger=PrivacyLedger(eps, delta), name="count")

    res = audit_mechanism(run, D, D_PRIME, runs=4000, delta=delta, seed=seed)
    assert res.delta == delta and res.runs == 4000
    assert 0.0 < res.epsilon_lower_bound <= eps


@pytest.mark.parametrize("seed", range(10))
def test_audit_of_identical_distributions_gives_zero(seed):
    """A mechanism whose output ignores the data is 0-DP: P(lower bound > 0) <= alpha = 1e-3 per seed.

    This checks that choosing the event on one half and evaluating it on the other removes the
    selection bias of the threshold search.
    """
    rng = np.random.default_rng(100 + seed)
    res = audit_samples(rng.normal(size=2000), rng.normal(size=2000), alpha=1e-3, rng=np.random.default_rng(seed))
    assert res.epsilon_lower_bound == 0.0


def test_audit_event_is_reported_consistently():
    rng = np.random.default_rng(8)
    a, b = rng.laplace(1.0, 0.5, 3000), rng.laplace(0.0, 0.5, 3000)
    res = audit_samples(a, b, rng=np.random.default_rng(1))
    assert res.epsilon_lower_bound > 1.0
    assert 0 <= res.q_hat < res.p_hat <= 1
    # recompute the counts on the evaluation half from the reported event
    perm = np.random.default_rng(1)
    ea, eb = perm.permutation(a)[1500:], perm.permutation(b)[1500:]
    if res.swapped:
        ea, eb = eb, ea
    in_a = ea > res.threshold if res.direction > 0 else ea < res.threshold
    in_b = eb > res.threshold if res.direction > 0 else eb < res.threshold
    assert res.p_hat == in_a.mean() and res.q_hat == in_b.mean()
    # swapping D and D' finds the same evidence (the audit is symmetric)
    res_swapped = audit_samples(b, a, rng=np.random.default_rng(1))
    assert res_swapped.epsilon_lower_bound > 1.0


def test_audit_samples_rejects_bad_input():
    with pytest.raises(ValueError, match=r"need the same number \(>= 20\) of runs on D and on D'"):
        audit_samples(np.zeros(30), np.zeros(31))
    with pytest.raises(ValueError, match=r"need the same number \(>= 20\) of runs on D and on D'"):
        audit_samples(np.zeros(10), np.zeros(10))
    with pytest.raises(ValueError, match="audited outputs must be finite"):
        audit_samples(np.r_[np.zeros(29), np.nan], np.zeros(30))


def test_audit_mechanism_is_reproducible_and_statistic_is_used():
    run = _laplace_run(1.0, 1.0)
    r1 = audit_mechanism(run, D, D_PRIME, runs=500, seed=4)
    r2 = audit_mechanism(run, D, D_PRIME, runs=500, seed=4)
    assert r1 == r2
    # a statistic that throws the output away leaves nothing to detect
    r3 = audit_mechanism(run, D, D_PRIME, runs=500, seed=4, statistic=lambda out: 0.0 * out + 1.0)
    assert r3.epsilon_lower_bound == 0.0
