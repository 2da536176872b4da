"""Exact Gaussian calibration (dpstats.privacy.calibration).

Every test here is deterministic (closed forms, root finding, dp_accounting's
numerical accountants); none is statistical, so none has a false-failure rate.
"""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from scipy import optimize, stats

from dpstats.bounds import DataBounds
from dpstats.methods import adassp, ssp
from dpstats.privacy.calibration import gaussian_delta, gaussian_epsilon, gaussian_mu, gaussian_sigma, split_mu
from dpstats.privacy.ledger import PrivacyLedger

EPSILONS = [0.05, 0.3, 1.0, 3.0, 10.0]
DELTAS = [1e-3, 1e-6, 1e-10]


def _delta_reference(mu: float, eps: float) -> float:
    """Balle & Wang (2018, Thm 8) written with scipy.stats.norm, independently of calibration.py."""
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2))


def _classic_mu(eps: float, delta: float) -> float:
    """mu = Delta/sigma of the classic calibration sigma = Delta sqrt(2 ln(1.25/delta)) / eps."""
    return eps / math.sqrt(2 * math.log(1.25 / delta))


# ---------------------------------------------------------------------------------------------
# gaussian_delta itself
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 4.0])
def test_gaussian_delta_matches_the_balle_wang_formula(mu, eps):
    ref = _delta_reference(mu, eps)
    got = gaussian_delta(mu, eps)
    assert got == pytest.approx(ref, rel=1e-7, abs=1e-15)


def test_gaussian_delta_is_decreasing_in_epsilon_and_increasing_in_mu():
    eps = np.linspace(0, 8, 200)
    for mu in (0.2, 1.0, 2.5):
        d = np.array([gaussian_delta(mu, e) for e in eps])
        assert np.all(np.diff(d) <= 0)
        pos = d > 1e-290  # below that delta underflows to 0
        assert pos.sum() > 50 and np.all(np.diff(d[pos]) < 0)
    mus = np.linspace(0.05, 4, 100)
    d = np.array([gaussian_delta(m, 1.0) for m in mus])
    assert np.all(np.diff(d) > 0)


def test_gaussian_delta_edge_values():
    assert gaussian_delta(0.0, 1.0) == 0.0          # no release
    assert gaussian_delta(math.inf, 1.0) == 1.0     # no noise
    assert gaussian_delta(1.0, math.inf) == 0.0
    # where 1 - exp(b - a) cancels in floating point the function must not claim delta = 0:
    # a Gaussian mechanism is (eps, delta)-DP with delta > 0 for every finite eps
    assert gaussian_delta(0.5, 19.3) > 0.0


# ---------------------------------------------------------------------------------------------
# gaussian_mu: exact round trips
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_gaussian_mu_round_trip_is_exact_and_on_the_safe_side(eps, delta):
    mu = gaussian_mu(eps, delta)
    achieved = gaussian_delta(mu, eps)
    assert achieved <= delta                       # never above the target
    assert achieved >= delta * (1 - 1e-6)          # and no budget left on the table
    # the independent scipy.stats formula agrees (tiny deltas are below its absolute precision)
    if delta >= 1e-6:
        assert _delta_reference(mu, eps) <= delta * (1 + 1e-9)


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_gaussian_mu_agrees_with_dp_accounting_and_an_independent_root_finder(eps, delta):
    mu = gaussian_mu(eps, delta)
    sigma_dpa = dp_accounting.get_sigma_gaussian(eps, delta)
    assert 1.0 / mu == pytest.approx(sigma_dpa, rel=1e-6)
    assert 1.0 / mu >= sigma_dpa  # dpstats' sigma is never smaller than the accountant's
    # an independent solve of delta(mu) = delta in log space with brentq
    f = lambda m: math.log(max(gaussian_delta(m, eps), 1e-300)) - math.log(delta)  # noqa: E731
    root = optimize.brentq(f, 1e-4, 50.0, xtol=1e-14, rtol=1e-13)
    assert mu == pytest.approx(root, rel=1e-6)
    assert mu <= root * (1 + 1e-12)


def test_gaussian_mu_documented_value():
    # the analytic Gaussian mechanism (Balle & Wang 2018): eps = 1, delta = 1e-6 -> sigma = 4.2247 (sensitivity 1)
    assert gaussian_sigma(1.0, 1.0, 1e-6) == pytest.approx(4.2247, abs=1e-4)
    assert gaussian_sigma(3.0, 1.0, 1e-6) == pytest.approx(3 * 4.2247, abs=3e-4)


@pytest.mark.parametrize("eps, delta", [(0.3, 1e-6), (1.0, 1e-6), (3.0, 1e-9), (8.0, 1e-6)])
def test_privacy_profile_checked_numerically_with_the_pld_accountant(eps, delta):
    """dp_accounting's PLD of N(0, (1/mu)^2) reproduces the calibrated point and the whole curve."""
    mu = gaussian_mu(eps, delta)
    dist = pld.privacy_loss_distribution.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0)
    assert dist.get_delta_for_epsilon(eps) == pytest.approx(delta, rel=1e-4)
    assert dist.get_epsilon_for_delta(delta) == pytest.approx(eps, rel=1e-4)
    for e in (0.5 * eps, 2 * eps):  # the rest of the profile: gaussian_delta is the exact curve
        ref = dist.get_delta_for_epsilon(e)
        assert gaussian_delta(mu, e) == pytest.approx(ref, rel=1e-3, abs=1e-14)
    # and the accountant-level API (a GaussianDpEvent with noise multiplier 1/mu) agrees
    acct = dp_accounting.pld.PLDAccountant()
    acct.compose(dp_accounting.GaussianDpEvent(1.0 / mu))
    assert acct.get_epsilon(delta) == pytest.approx(eps, rel=1e-4)


def test_gaussian_mu_validates_its_arguments():
    for eps, delta in [(0.0, 1e-6), (-1.0, 1e-6), (1.0, 0.0), (1.0, 1.0), (1.0, -1e-6), (float("nan"), 1e-6)]:
        with pytest.raises(ValueError, match="gaussian_mu needs epsilon > 0 and 0 < delta < 1"):
            gaussian_mu(eps, delta)
    assert gaussian_mu(math.inf, 1e-6) == math.inf


def test_gaussian_sigma_scales_with_the_sensitivity():
    s1 = gaussian_sigma(1.0, 0.7, 1e-7)
    assert gaussian_sigma(2.5, 0.7, 1e-7) == pytest.approx(2.5 * s1, rel=1e-15)
    assert s1 == pytest.approx(1.0 / gaussian_mu(0.7, 1e-7), rel=1e-15)


# ---------------------------------------------------------------------------------------------
# the classic and the AdaSSP-paper calibrations are not exact
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("eps", [0.05, 0.2, 0.5, 0.9])
@pytest.mark.parametrize("delta", [1e-5, 1e-6, 1e-9])
def test_classic_calibration_is_looser_for_small_epsilon(eps, delta):
    sigma_classic = 1.0 / _classic_mu(eps, delta)
    sigma_exact = gaussian_sigma(1.0, eps, delta)
    assert sigma_classic > sigma_exact * 1.05  # at least 5% more noise than needed
    assert gaussian_delta(_classic_mu(eps, delta), eps) < delta  # valid, merely wasteful


@pytest.mark.parametrize("eps, delta, factor", [(10.0, 1e-6, 1.5), (10.0, 1e-5, 2.0), (10.0, 1e-9, 1.1),
                                                (20.0, 1e-6, 100.0)])
def test_classic_calibration_is_invalid_for_large_epsilon(eps, delta, factor):
    """The classic theorem needs eps < 1; beyond, its sigma eventually overspends delta.

    Numerically the classic constant still happens to hold at eps = 5 (delta' = 0.11 delta at
    delta = 1e-6); it first fails between eps = 5 and eps = 10 for deltas from 1e-9 to 1e-3.
    """
    achieved = gaussian_delta(_classic_mu(eps, delta), eps)
    assert achieved > factor * delta  # the classic constant overspends delta
    assert gaussian_sigma(1.0, eps, delta) > 1.0 / _classic_mu(eps, delta)  # exact needs more noise


def test_classic_calibration_at_eps_5_holds_numerically_but_wastes_noise():
    achieved = gaussian_delta(_classic_mu(5.0, 1e-6), 5.0)
    assert achieved == pytest.approx(0.107e-6, rel=0.02)
    assert 1.0 / _classic_mu(5.0, 1e-6) > 1.05 * gaussian_sigma(1.0, 5.0, 1e-6)


def test_adassp_paper_constant_undershoots_delta():
    """AdaSSP as published (Wang 2018, Algorithm 2): per release s/Delta = sqrt(ln(6/delta))/(eps/3) at target
    (eps/3, delta/3)."""
    def per_release_delta(eps, delta):
        mu_paper = (eps / 3) / math.sqrt(math.log(6 / delta))
        return gaussian_delta(mu_paper, eps / 3)

    assert per_release_delta(1.0, 1e-6) == pytest.approx(8.9e-7, rel=0.02)
    assert per_release_delta(1.0, 1e-6) > 1e-6 / 3 * 2.5
    assert per_release_delta(5.0, 1e-6) == pytest.approx(8.5e-6, rel=0.03)
    assert per_release_delta(0.1, 1e-6) <= 1e-6 / 3  # "at eps = 0.1 it is fine"


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-6), (5.0, 1e-6), (2.0, 1e-3)])
def test_dpstats_three_way_split_is_exact(eps, delta):
    mu = gaussian_mu(eps, delta)
    parts = split_mu(mu, [1.0, 1.0, 1.0])
    total = math.sqrt(float(np.sum(parts**2)))
    assert gaussian_delta(total, eps) <= delta
    assert gaussian_delta(total, eps) >= delta * (1 - 1e-6)


@pytest.mark.parametrize("eps, delta", [(0.1, 1e-6), (1.0, 1e-6), (5.0, 1e-6)])
@pytest.mark.parametrize("inference", [True, False])
def test_adassp_and_ssp_fits_spend_exactly_their_budget(eps, delta, inference):
    """The ledgers of real fits: GDP composition of the steps lands on (eps, delta), never above."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(50, 3))
    y = rng.uniform(-1, 1, size=50)
    bounds = DataBounds(np.full(3, -1.0), np.full(3, 1.0), -1.0, 1.0)
    mu = gaussian_mu(eps, delta)
    for module in (adassp, ssp):
        ledger = PrivacyLedger(eps, delta)
        module.SPEC.fit_arrays(X, y, ledger=ledger, rng=rng, bounds=bounds, inference=inference, bootstrap=100)
        assert ledger.steps and all(s.mechanism == "gaussian" for s in ledger.steps)
        mu_total = math.sqrt(sum(s.mu**2 for s in ledger.steps))
        assert mu_total == pytest.approx(mu, rel=1e-12)  # the split composes back to the calibrated mu
        spent_eps, spent_delta = ledger.spent
        assert spent_eps <= eps  # no tolerance needed: the calibration is on the safe side
        assert spent_eps == pytest.approx(eps, rel=1e-6)
        assert spent_delta == delta


# ---------------------------------------------------------------------------------------------
# gaussian_epsilon and split_mu
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mu", [0.01, 0.2, 1.0, 4.0, 20.0])
@pytest.mark.parametrize("delta", [0.1, 1e-6, 1e-12])
def test_gaussian_epsilon_inverts_gaussian_delta(mu, delta):
    eps = gaussian_epsilon(mu, delta)
    assert gaussian_delta(mu, eps) <= delta
    if eps > 0:
        # minimal: a slightly smaller epsilon is not enough
        assert gaussian_delta(mu, eps * (1 - 1e-9)) > delta
    else:
        assert gaussian_delta(mu, 0.0) <= delta


@pytest.mark.parametrize("eps", EPSILONS)
@pytest.mark.parametrize("delta", DELTAS)
def test_gaussian_epsilon_of_the_calibrated_mu_gives_back_epsilon(eps, delta):
    got = gaussian_epsilon(gaussian_mu(eps, delta), delta)
    assert got <= eps
    assert got == pytest.approx(eps, rel=1e-6)


def test_gaussian_epsilon_edge_cases():
    assert gaussian_epsilon(0.0, 1e-6) == 0.0
    assert gaussian_epsilon(math.inf, 1e-6) == math.inf
    # a Gaussian mechanism is never pure DP; this used to return 19.3 through underflow
    assert gaussian_epsilon(0.5, 0.0) == math.inf
    assert gaussian_epsilon(0.5, 1e-300) < math.inf


@pytest.mark.parametrize("weights", [[1, 1], [1, 1, 1], [3, 1, 0.5, 2], [1e-3, 1]])
def test_split_mu_parts_compose_back_to_mu(weights):
    mu = 0.83
    parts = split_mu(mu, weights)
    assert parts.shape == (len(weights),)
    assert math.sqrt(float(np.sum(parts**2))) == pytest.approx(mu, rel=1e-12)
    w = np.asarray(weights, dtype=float)
    np.testing.assert_allclose(parts**2 / mu**2, w / w.sum(), rtol=1e-12)  # mu^2 is shared by weight


@pytest.mark.parametrize("weights", [[1, 0], [1, -1], [0.0]])
def test_split_mu_rejects_non_positive_weights(weights):
    with pytest.raises(ValueError, match="budget weights must be positive"):
        split_mu(1.0, weights)
