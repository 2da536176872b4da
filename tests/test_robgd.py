"""DP-RobGD, DP-AMBSSGD, their private estimators, and the corrupted-label simulation.

Seeds are fixed, so every test is deterministic; the false-failure rate
stated for a statistical test is the probability that it would fail for a
fresh seed although the code is correct (estimated by rerunning it on many
seeds, or given by the audit's confidence level).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import BudgetExceededError, InsufficientDataError, MethodOptionError
from dpstats.methods.common import robust_estimators as est
from dpstats.methods.common.private_centring import CENTRE_GRID
from dpstats.methods.registry import get_method
from dpstats.methods.robgd import PRECONDITION_SHARE
from dpstats.privacy import PrivacyAccountant, PrivacyLedger
from dpstats.privacy.audit import audit_mechanism
from dpstats.privacy.calibration import gaussian_epsilon, gaussian_mu
from dpstats.privacy.mechanisms import GaussianBlock, gaussian_block
from dpstats.privacy.missing_screen import fit_epsilon
from dpstats.simulate import projected_covariance, robust_regression_data

AUDIT_DELTA = 1e-3


def _ledger() -> PrivacyLedger:
    """A roomy ledger for running one subroutine in isolation (its own privacy is what is audited)."""
    return PrivacyLedger(1e3, 0.5)


# ----------------------------------------------------------------------------- registration, simulation


def test_registered_without_bounds_and_not_auto() -> None:
    for name in ("robgd", "ambssgd"):
        spec = get_method(name)
        assert spec.needs_bounds is False and spec.auto_rank is None and spec.private
        assert spec.relation == "replace-one" and spec.guarantee == "worst-case"
    assert dpstats.simulate.robust_regression_data is robust_regression_data


def test_simulation_matches_the_paper_setting() -> None:
    sim = robust_regression_data(20000, 6, kappa=5.0, sigma=0.2, corruption=0.05, random_state=0)
    X, y = sim.X, sim.y
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0)
    assert math.isclose(np.linalg.norm(sim.w_star), 1.0)
    assert sim.corrupted.sum() == 1000
    clean = ~sim.corrupted
    assert np.max(np.abs(y[clean] - X[clean] @ sim.w_star)) <= 0.2
    assert np.all(np.abs(y) <= sim.label_bound)
    # the adversary pulls against w*: corrupted labels have the opposite sign of x^T w*
    assert np.all(np.sign(y[sim.corrupted]) == -np.sign(X[sim.corrupted] @ sim.w_star))
    # quadrature covariance against Monte Carlo (20000 rows: sd of each entry < 0.004; a 0.015 band
    # is > 3.5 sd, false-failure rate < 1e-3)
    emp = X.T @ X / X.shape[0]
    assert np.allclose(np.diag(emp), np.diag(sim.covariance), atol=0.015)
    assert math.isclose(np.trace(projected_covariance(6, 5.0)), 1.0)


# ----------------------------------------------------------------------------- mechanism helper


def test_gaussian_block_charges_once_and_refuses_extra_releases() -> None:
    led = PrivacyLedger(1.0, 1e-6)
    mu = gaussian_mu(1.0, 1e-6)
    block = gaussian_block(rounds=4, mu_round=mu / 2, ledger=led, name="g")
    assert len(led.steps) == 1 and math.isclose(led.steps[0].mu, mu)
    rng = np.random.default_rng(0)
    for _ in range(4):
        block.release(np.zeros(3), l2_sensitivity=1.0, rng=rng)
    with pytest.raises(RuntimeError, match="this Gaussian block has already made all the releases it was charged for"):
        block.release(np.zeros(3), l2_sensitivity=1.0, rng=rng)
    # a fifth round on top of the full budget is refused up front
    with pytest.raises(BudgetExceededError, match="would bring this fit's spend to .*, above its budget"):
        GaussianBlock(rounds=1, mu_round=mu / 2, ledger=led, name="more")
    disjoint = gaussian_block(rounds=50, mu_round=mu, ledger=PrivacyLedger(1.0, 1e-6), name="d", disjoint=True)
    assert disjoint.rounds == 50


# ----------------------------------------------------------------------------- estimators are accurate


def test_norm_estimator_within_constant_factor() -> None:
    # paper setting (||x||^2 = Tr Sigma = 1) and unprojected Gaussians (Tr Sigma = kappa + d - 1);
    # 100 seeds gave ratios in [0.70, 1.19]; the band [1/2, 2] was never approached (false-failure
    # rate estimated < 1%).
    mu_n = gaussian_mu(1.0, 1e-6) * math.sqrt(0.05)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        sim = robust_regression_data(4000, 10, kappa=10, sigma=0.5, random_state=seed)
        b = est.norm_group_size(4000, mu_n)
        for X, trace in ((sim.X, 1.0), (rng.standard_normal((4000, 10)) * np.sqrt([10.0] + [1.0] * 9), 19.0)):
            block = gaussian_block(rounds=1, mu_round=mu_n, ledger=_ledger(), name="norm")
            norm = est.private_norm_estimate(X, group_size=b, block=block, rng=rng)
            assert norm.released and 0.5 <= norm.gamma / trace <= 2.0


def test_norm_estimate_falls_back_when_its_mode_does_not_clear() -> None:
    """Issue 17.  Groups of one row at small n mu: 200 standardised rows (an intercept and 3 N(0, 1) columns,
    Tr Sigma = 4) at robgd's norm budget for epsilon = 0.5.  The count noise sd (54) puts the clearance (297) above
    the number of groups, so the modal count never clears: the argmax of the noisy counts was the largest of the
    512 bins' noises, an arbitrary bin of [2^-64, 2^64) (Gamma from 1e-16 to 1e18 in these seeds).  Now Gamma is
    the public fallback d = 4.  A released Gamma needs some window of up to 4 bins to clear 5.5 of its noise sds;
    for a window of noise alone that has probability below 3 * 512 * P(Z > 5.5) < 3e-5 per draw, so these 20
    draws fail falsely with probability below 1e-3."""
    mu_n = gaussian_mu(0.5, 1e-6) * math.sqrt((1.0 - PRECONDITION_SHARE) * 0.05)
    for seed in range(20):
        rng = np.random.default_rng(seed)
        X = np.column_stack([np.ones(200), rng.standard_normal((200, 3))])
        block = gaussian_block(rounds=1, mu_round=mu_n, ledger=_ledger(), name="norm")
        norm = est.private_norm_estimate(X, group_size=1, block=block, rng=rng)
        assert 0.5 <= norm.gamma / 4.0 <= 2.0, (seed, norm)
    assert est.norm_fallback(4) == 4.0


def test_distance_estimator_within_constant_factor_under_corruption() -> None:
    # 5% corrupted labels, 4000 rows, the per-round budget of a 20-round fit at eps=1.  300 draws gave
    # gamma / (||w - w*||_Sigma^2 + sigma_z^2) in [0.66, 2.6]; the band [1/4, 4] was never approached
    # (false-failure rate estimated < 1%).
    mu_h = gaussian_mu(1.0, 1e-6) * math.sqrt(0.9 / 20)
    for seed in range(10):
        rng = np.random.default_rng(seed)
        sim = robust_regression_data(4000, 10, kappa=10, sigma=0.5, corruption=0.05, random_state=seed)
        block = gaussian_block(rounds=3, mu_round=mu_h, ledger=_ledger(), name="dist")
        for w in (np.zeros(10), sim.w_star, sim.w_star + 0.3 * rng.standard_normal(10)):
            truth = sim.error(w) ** 2 + sim.sigma**2 / 3.0
            gamma = est.private_distance_estimate(sim.X, sim.y, w, group_size=est.distance_group_size(0.05),
                                                  block=block, rng=rng)
            assert 0.25 <= gamma / truth <= 4.0


def test_modal_fraction_and_caps_are_public_functions() -> None:
    assert 0.15 < est.modal_fraction(1) < est.modal_fraction(2) < est.modal_fraction(10) < 0.5
    assert est.max_histogram_releases(10000, 2, 0.2, 0.1) > est.max_histogram_releases(1000, 2, 0.2, 0.1)
    assert est.distance_group_size(0.05) == 2 and est.distance_group_size(0.0) == 10


# ----------------------------------------------------------------------------- privacy audits
# Each audit asserts epsilon_lb <= the claimed epsilon at AUDIT_DELTA; the audit's lower bound is a
# 1 - 1e-3 confidence bound, so each audit has a false-failure rate of at most 1e-3.


def _histogram_pair(k: int, low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-group statistics: half the groups in one bin, half in the next; the neighbour moves one group up."""
    stats = np.array([low] * (k // 2) + [high] * (k // 2))
    moved = stats.copy()
    moved[0] = high
    return stats, moved


def test_audit_histogram_release_is_calibrated_and_the_audit_has_power() -> None:
    mu = 1.0
    grid = est.LogHistogram(1)
    d_stats, n_stats = _histogram_pair(40, 1.5, 3.0)
    j_low, j_high = grid.index(np.array([1.5, 3.0]))

    def run(stats: np.ndarray, rng: np.random.Generator, claimed_mu: float = mu, true_mu: float = mu) -> float:
        counts = np.bincount(grid.index(stats), minlength=grid.size).astype(float)
        block = GaussianBlock(rounds=1, mu_round=true_mu, ledger=_ledger(), name="h")
        noisy = block.release(counts, l2_sensitivity=est.HISTOGRAM_SENSITIVITY, rng=rng)
        return float(noisy[j_high] - noisy[j_low])

    claim = gaussian_epsilon(mu, AUDIT_DELTA)
    res = audit_mechanism(run, d_stats, n_stats, runs=3000, delta=AUDIT_DELTA, seed=1)
    assert res.epsilon_lower_bound <= claim
    # power: the same audit catches a histogram with 3x too little noise (3000 runs a side, seed 1: 4.23 against
    # the claim's 3.14; 6000 runs gave no more margin)
    weak = audit_mechanism(lambda s, r: run(s, r, true_mu=3.0 * mu), d_stats, n_stats, runs=3000,
                           delta=AUDIT_DELTA, seed=1)
    assert weak.epsilon_lower_bound > claim


def test_audit_norm_estimator() -> None:
    mu = 1.0
    # group size 1: rows with ||x||^2 = 1.05 (bin [1, 1.19)) or 1.25 (next bin); the neighbour moves one row
    X = np.zeros((60, 2))
    X[:30, 0] = math.sqrt(1.05)
    X[30:, 0] = math.sqrt(1.25)
    Xn = X.copy()
    Xn[0, 0] = math.sqrt(1.25)

    def run(data: np.ndarray, rng: np.random.Generator) -> float:
        block = GaussianBlock(rounds=1, mu_round=mu, ledger=_ledger(), name="norm")
        return est.private_norm_estimate(data, group_size=1, block=block, rng=rng).gamma

    res = audit_mechanism(run, X, Xn, runs=4000, delta=AUDIT_DELTA, seed=2)
    assert res.epsilon_lower_bound <= gaussian_epsilon(mu, AUDIT_DELTA)


def test_audit_distance_estimator() -> None:
    mu = 1.0
    X = np.zeros((60, 2))
    y = np.array([math.sqrt(1.5)] * 30 + [math.sqrt(3.0)] * 30)  # w = 0: squared residuals in bins [1,2), [2,4)
    yn = y.copy()
    yn[0] = -1e6  # a corrupted label: its group statistic jumps bins

    def run(labels: np.ndarray, rng: np.random.Generator) -> float:
        block = GaussianBlock(rounds=1, mu_round=mu, ledger=_ledger(), name="dist")
        return est.private_distance_estimate(X, labels, np.zeros(2), group_size=1, block=block, rng=rng)

    res = audit_mechanism(run, y, yn, runs=4000, delta=AUDIT_DELTA, seed=3)
    assert res.epsilon_lower_bound <= gaussian_epsilon(mu, AUDIT_DELTA)


def test_audit_separately_clipped_gradient() -> None:
    mu, theta_x, theta_r = 1.0, 2.0, 0.5
    m = 50
    X = np.zeros((m, 3))
    X[0, 0] = 100.0  # clipped to norm theta_x
    y = np.zeros(m)
    y[0] = -1e6  # residual clipped to +theta_r
    yn = y.copy()
    yn[0] = 1e6  # residual clipped to -theta_r: the worst case, difference 2 theta_x theta_r / m
    c = est.clip_factors(X, theta_x)

    def run(labels: np.ndarray, rng: np.random.Generator) -> float:
        block = GaussianBlock(rounds=1, mu_round=mu, ledger=_ledger(), name="grad")
        g = est.separately_clipped_gradient(X, labels, np.zeros(3), c, theta_r)
        return float(block.release(g, l2_sensitivity=2.0 * theta_x * theta_r / m, rng=rng)[0])

    res = audit_mechanism(run, y, yn, runs=6000, delta=AUDIT_DELTA, seed=4)
    assert res.epsilon_lower_bound <= gaussian_epsilon(mu, AUDIT_DELTA)
    assert res.epsilon_lower_bound > 0.5  # the pair is worst case: the audit sees most of the claim


def _whole_method_pair(n: int) -> tuple[dict, dict]:
    sim = robust_regression_data(n, 2, sigma=0.1, random_state=5)
    d_frame = sim.frame
    n_frame = d_frame.copy()
    n_frame.loc[0, ["y", "x1", "x2"]] = [-1e6, 1e3, 0.0]  # one row replaced by an extreme one
    return {"frame": d_frame, "formula": sim.formula, "bounds": sim.bounds()}, \
        {"frame": n_frame, "formula": sim.formula, "bounds": sim.bounds()}


def _audit_method(method: str, runs: int, epsilon: float, delta: float, bounds: bool = False) -> float:
    """Whole-method audit on worst-case neighbours; with ``bounds`` the simulation's declared bounds are passed
    (the preconditioning's clipped Gaussian releases; the replaced row is clipped to them)."""
    d_set, n_set = _whole_method_pair(2000)

    def run(ds: dict, rng: np.random.Generator) -> float:
        res = dpstats.dp_ols(ds["formula"], ds["frame"], epsilon=epsilon, delta=delta, method=method,
                             random_state=rng, bounds=ds["bounds"] if bounds else None)
        return float(res.params.iloc[0])

    return audit_mechanism(run, d_set, n_set, runs=runs, delta=AUDIT_DELTA, seed=6).epsilon_lower_bound


@pytest.mark.parametrize("bounds", [False, True], ids=["no-bounds", "bounds"])
@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_audit_whole_method(method: str, bounds: bool) -> None:
    # validity only: a sound method exceeds the claim with probability at most alpha = 1e-3 (audit_mechanism's
    # default) at any number of runs; 150 runs a side still bound a method that told the pair apart every time above
    # the claim (2.20 against 1.36).  The power of the audit is the slow test's (4000 runs a side)
    epsilon, delta = 2.0, 1e-5
    claim = gaussian_epsilon(gaussian_mu(epsilon, delta), AUDIT_DELTA)
    assert _audit_method(method, 150, epsilon, delta, bounds) <= claim


@pytest.mark.slow
@pytest.mark.parametrize("bounds", [False, True], ids=["no-bounds", "bounds"])
@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_audit_whole_method_long(method: str, bounds: bool) -> None:
    epsilon, delta = 2.0, 1e-5
    claim = gaussian_epsilon(gaussian_mu(epsilon, delta), AUDIT_DELTA)
    assert _audit_method(method, 4000, epsilon, delta, bounds) <= claim


@pytest.mark.slow
def test_audit_estimators_long() -> None:
    mu = 0.5
    X = np.zeros((40, 2))
    y = np.array([math.sqrt(1.5)] * 20 + [math.sqrt(3.0)] * 20)
    yn = y.copy()
    yn[0] = math.sqrt(3.0)

    def run(labels: np.ndarray, rng: np.random.Generator) -> float:
        block = GaussianBlock(rounds=1, mu_round=mu, ledger=_ledger(), name="dist")
        return est.private_distance_estimate(X, labels, np.zeros(2), group_size=1, block=block, rng=rng)

    res = audit_mechanism(run, y, yn, runs=40000, delta=AUDIT_DELTA, seed=7)
    assert res.epsilon_lower_bound <= gaussian_epsilon(mu, AUDIT_DELTA)


# ----------------------------------------------------------------------------- accounting and data flow


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_accounting_is_exact_and_itemised(method: str) -> None:
    sim = robust_regression_data(20000, 4, sigma=0.1, random_state=0)
    res = dpstats.dp_ols(sim.formula, sim.frame, epsilon=1.0, delta=1e-6, method=method, random_state=0)
    rep = res.privacy
    assert rep.epsilon_spent <= 1.0 + 1e-9 and rep.delta_spent <= 1e-6
    mu = gaussian_mu(1.0, 1e-6)
    # the missing-value screen (Gaussian: every release of the method is), then two steps: the parallel block and
    # the private preconditioning on all rows; the method's two compose to its mu, all three to exactly mu
    screen, block, pre = rep.steps
    method_mu = gaussian_mu(fit_epsilon(1.0, screened=True), 1e-6)  # the rest of the budget after the screen
    assert screen.name.startswith("missing-value screen") and math.isclose(screen.mu, math.sqrt(mu**2 - method_mu**2))
    assert "parallel" in block.note and "preconditioning" in pre.name
    assert math.isclose(math.hypot(block.mu, pre.mu), method_mu, rel_tol=1e-8)
    assert math.isclose(math.sqrt(screen.mu**2 + block.mu**2 + pre.mu**2), mu, rel_tol=1e-8)
    assert math.isclose(pre.mu, method_mu * math.sqrt(PRECONDITION_SHARE), rel_tol=1e-8)
    # every part, on its own ledger, is exactly mu_block-GDP (no part wastes or overspends budget)
    for steps in res.info["part_steps"].values():
        part_mu = math.sqrt(sum(s.mu**2 for s in steps))
        assert part_mu <= block.mu * (1 + 1e-9)
    assert any("S_a" in n or "S_0" in n for n in rep.notes)
    assert any("scales released from" in n for n in rep.notes)
    # standardize=False: the paper's algorithm, one step of exactly mu
    off = dpstats.dp_ols(sim.formula, sim.frame, epsilon=1.0, delta=1e-6, method=method, random_state=0,
                         standardize=False).privacy
    assert len(off.steps) == 2 and math.isclose(math.hypot(off.steps[0].mu, off.steps[1].mu), mu, rel_tol=1e-8)


def test_output_depends_on_the_data_only_through_released_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay every noisy release of a fit on D into a fit on unrelated data D2: the output must not change.

    If any data-derived quantity entered the fit without going through a
    charged release (a bound, a range, T or eta read from the data), the
    second fit would differ.  The zero-inflated, skewed response makes rounds hold (PooledHistogram): holding
    and pooling must follow from the released histograms alone.
    """
    from dpstats.privacy import mechanisms

    sim = robust_regression_data(20000, 4, kappa=3, sigma=0.1, corruption=0.05, random_state=0)
    other = robust_regression_data(20000, 4, kappa=1, sigma=1.0, random_state=9)
    X1, y1, X2, y2 = sim.X, sim.y, other.X * 3.0, other.y - 5.0
    rs = np.random.default_rng(5)
    zero_inflated = np.where(rs.random(y1.size) < 0.7, 0.0, np.exp(2.0 * rs.standard_normal(y1.size)))
    recorded: list[tuple[object, float]] = []
    real_release = mechanisms.GaussianBlock.release
    real_gauss = est.gaussian_mechanism_mu

    def rec_release(self, value, *, l2_sensitivity, rng):  # type: ignore[no-untyped-def]
        out = real_release(self, value, l2_sensitivity=l2_sensitivity, rng=rng)
        recorded.append((out, l2_sensitivity))
        return out

    def rec_gauss(value, **kw):  # type: ignore[no-untyped-def]
        out = real_gauss(value, **kw)
        recorded.append((out, kw["l2_sensitivity"]))
        return out

    for method, opts, y_first in (("robgd", {"best_iterate": True}, y1), ("ambssgd", {}, y1),
                                  ("robgd", {"best_iterate": True}, zero_inflated), ("ambssgd", {}, zero_inflated)):
        recorded.clear()
        monkeypatch.setattr(mechanisms.GaussianBlock, "release", rec_release)
        monkeypatch.setattr(est, "gaussian_mechanism_mu", rec_gauss)
        fit = get_method(method).fit_arrays  # the method's own fit on arrays
        first = fit(X1, y_first, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(1), **opts)
        assert (first.diagnostics["held_rounds"] > 0) == (y_first is zero_inflated), method
        replay = iter(list(recorded))
        sens_seen: list[float] = []

        def rep_release(self, value, *, l2_sensitivity, rng, replay=replay, sens_seen=sens_seen):  # type: ignore[no-untyped-def]
            out, _ = next(replay)
            self.used += 1
            sens_seen.append(l2_sensitivity)
            return out

        def rep_gauss(value, *, replay=replay, sens_seen=sens_seen, **kw):  # type: ignore[no-untyped-def]
            out, _ = next(replay)
            sens_seen.append(kw["l2_sensitivity"])
            return out

        monkeypatch.setattr(mechanisms.GaussianBlock, "release", rep_release)
        monkeypatch.setattr(est, "gaussian_mechanism_mu", rep_gauss)
        second = fit(X2, y2, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(1), **opts)
        assert np.array_equal(first.params, second.params), method
        assert second.diagnostics["held_rounds"] == first.diagnostics["held_rounds"], method
        assert sens_seen == [s for _, s in recorded], method  # sensitivities are functions of released values


def test_refusal_spends_nothing() -> None:
    sim = robust_regression_data(1500, 2, sigma=0.1, random_state=0)
    acct = PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(InsufficientDataError, match="cannot clear its noise even for 2 rounds; use more rows"):
        dpstats.dp_ols(sim.formula, sim.frame, epsilon=0.05, delta=1e-6, method="robgd", accountant=acct,
                       random_state=0)
    with pytest.raises(MethodOptionError, match=r"gamma_fraction must lie in \(0, 1\.0\)"):
        dpstats.dp_ols(sim.formula, sim.frame, epsilon=1.0, delta=1e-6, method="robgd", accountant=acct,
                       gamma_fraction=1.5)
    with pytest.raises(MethodOptionError, match="trace must be a positive number"):
        dpstats.dp_ols(sim.formula, sim.frame, epsilon=1.0, delta=1e-6, method="ambssgd", accountant=acct,
                       trace=-1.0)
    assert acct.spent[0] == 0.0


# ----------------------------------------------------------------------------- utility


def test_robgd_and_ambssgd_recover_the_coefficients_on_clean_data() -> None:
    # n = 1e5, eps = 1: observed errors about 6e-4 (robgd) and 1.4e-3 (ambssgd), OLS 6e-4; over 10 further
    # seeds the maxima were 1.5e-3 and 2.2e-3, far inside the bounds (false-failure rate estimated < 1%)
    sim = robust_regression_data(100000, 10, sigma=0.1, random_state=1)
    for method, tol in (("robgd", 0.01), ("ambssgd", 0.02)):
        res = dpstats.dp_ols(sim.formula, sim.frame, epsilon=1.0, delta=1e-10, method=method, random_state=3,
                             covariate_tail=1.0)
        assert sim.error(res.params) < tol, method


def test_best_iterate_picks_the_smallest_gamma() -> None:
    sim = robust_regression_data(20000, 4, kappa=5, sigma=0.1, random_state=2)
    res = dpstats.dp_ols(sim.formula, sim.frame, epsilon=1.0, delta=1e-6, method="robgd", random_state=0,
                         best_iterate=True)
    g = res.info["gammas"]
    chosen = res.info["chosen_iterate"]
    assert g[chosen] == g.min() and np.all(g[chosen + 1:] > g.min())


def _mean_errors(method: str, n: int, d: int, eps: float, corruption: float, seeds: range, **kw: object) -> float:
    errs = []
    for seed in seeds:
        sim = robust_regression_data(n, d, sigma=0.1, corruption=corruption, random_state=seed)
        opts = dict(kw)
        if method == "ssp":
            opts["bounds"] = sim.bounds()  # x on the unit sphere: (-1, 1) per column; |y| <= label_bound
        res = dpstats.dp_ols(sim.formula, sim.frame, epsilon=eps, delta=1e-6, method=method, random_state=100 + seed,
                             **opts)
        errs.append(sim.error(res.params))
    return float(np.mean(errs))


def test_corrupted_labels_privacy_dominated_regime() -> None:
    """5% corrupted labels where privacy noise dominates (n eps = 6000, d = 10): robgd within 2x its clean error.

    Observed mean ratio 1.6 (8 seeds).  Over 40 further seed sets the ratio of 8-seed means stayed in
    [1.27, 1.73], never above 2 (false-failure rate estimated < 3%).
    """
    seeds = range(8)
    clean = _mean_errors("robgd", 20000, 10, 0.3, 0.0, seeds, covariate_tail=1.0)
    corrupt = _mean_errors("robgd", 20000, 10, 0.3, 0.05, seeds, covariate_tail=1.0)
    assert corrupt <= 2.0 * clean


def test_corrupted_labels_sampling_dominated_regime() -> None:
    """5% corrupted labels at n eps = 20000, d = 3: ssp's error grows many-fold, robgd's stays O(alpha sigma).

    Observed (4 seeds): ssp 0.04 -> 0.26 (6.5x); robgd 0.0022 -> 0.011.  robgd cannot stay within 2x of
    its clean error here: its clean error is below the information-theoretic floor alpha_corrupt*sigma
    that label corruption imposes on every estimator (Liu et al. Prop. 3.1); it stays within
    clean + 4 alpha sigma and an order of magnitude below ssp.  Over 40 further seed sets: ssp's ratio
    >= 5.3, robgd's excess <= 0.5 of its allowance, ssp/robgd >= 21; no failure (false-failure rate
    estimated < 3%).
    """
    seeds = range(4)
    alpha, sigma = 0.05, 0.1
    ssp_clean = _mean_errors("ssp", 20000, 3, 0.5, 0.0, seeds)
    ssp_bad = _mean_errors("ssp", 20000, 3, 0.5, alpha, seeds)
    rob_clean = _mean_errors("robgd", 20000, 3, 0.5, 0.0, seeds, covariate_tail=1.0)
    rob_bad = _mean_errors("robgd", 20000, 3, 0.5, alpha, seeds, covariate_tail=1.0)
    assert ssp_bad >= 4.0 * ssp_clean
    assert rob_bad <= rob_clean + 4.0 * alpha * sigma
    assert rob_bad <= ssp_bad / 10.0


# ----------------------------------------------------------------------------- private preconditioning


def _uncentred(n: int, seed: int, shift: bool) -> tuple[object, np.ndarray]:
    """x1 ~ N(50, 10^2), x2 on a scale 1000x larger, intercept; or the same columns centred and scaled."""
    rng = np.random.default_rng(seed)
    g = rng.standard_normal((n, 2))
    x1, x2 = (50 + 10 * g[:, 0], 1e4 * (3 + g[:, 1])) if shift else (g[:, 0], g[:, 1])
    beta = np.array([1.0, 0.5, -0.5])
    y = beta[0] + beta[1] * g[:, 0] + beta[2] * g[:, 1] + 0.5 * rng.standard_normal(n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2}), np.array([10.0, 1e4])


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_uncentred_covariates_fit_as_well_as_centred(method: str) -> None:
    """The same regression written on raw (x1 ~ N(50, 100), x2 ~ 1e4 (3 + N(0, 1))) and on standard columns:
    the mean error in the standard parametrisation (slope * sd) over 3 seeds stays within 3x (+0.02) of the
    centred fit's.  Measured: robgd 0.031 (raw) vs 0.041 (centred), ambssgd 0.058 vs 0.044, per-seed sd about
    0.03, so a false failure needs a ~5-sd excursion; with standardize=False the raw-data error is 0.87-0.96."""
    errs = {}
    for shift in (False, True):
        total = 0.0
        for seed in range(3):
            frame, sd = _uncentred(20000, seed, shift)
            res = dpstats.dp_ols("y ~ x1 + x2", frame, 1.0, 1e-6, method=method, random_state=seed)
            slopes = res.params.values[1:] * (sd if shift else 1.0)
            total += float(np.linalg.norm(slopes - [0.5, -0.5]))
        errs[shift] = total / 3
    assert errs[True] <= 3 * errs[False] + 0.02, errs


def test_rare_binary_column_gets_a_finite_coefficient() -> None:
    """A 0/1 column with ~2% ones (no declared range): its scale either resolves or falls back to 1 (noted);
    the coefficient is finite and the other coefficients are recovered."""
    rng = np.random.default_rng(5)
    n = 20000
    frame = pd.DataFrame({"x": rng.normal(30, 5, n), "b": (rng.random(n) < 0.02).astype(float)})
    frame["y"] = 2 + 0.1 * frame.x + 1.0 * frame.b + rng.normal(0, 0.3, n)
    res = dpstats.dp_ols("y ~ x + b", frame, 1.0, 1e-6, method="robgd", random_state=0)
    assert np.all(np.isfinite(res.params.values)) and res.info["scale"][2] > 0
    # deterministic under the fixed seed (error 0.0037); over 50 re-seeds (1-50) the error's root mean square was
    # 0.0053 (largest 0.019, near the former bound 0.02): 0.025 is 4.7 of those sds, so a re-seed fails with
    # probability about 2 Phi(-4.7) = 3e-6 (normal tail)
    assert abs(res.params["x"] - 0.1) < 0.025


def test_centre_grid_bins_and_values() -> None:
    u = np.array([-1e300, -3.3, 0.0, 0.13, 1023.9, 1024.2, 1e300])
    idx = CENTRE_GRID.index(u)
    assert np.all(np.diff(idx) > 0) and idx[0] >= 0 and idx[-1] == CENTRE_GRID.size - 1
    vals = [CENTRE_GRID.value(int(j)) for j in idx]
    assert vals[1:5] == [-3.25, 0.0, 0.25, 1024.0] and 1024 < vals[5] < 1100


FAIR_FORMULA = "affairs ~ rate_marriage + age + yrs_married + children"


@pytest.fixture(scope="module")
def fair() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """statsmodels' fair data, its design matrix (intercept first) and the OLS coefficients."""
    sm = pytest.importorskip("statsmodels.api")
    data = sm.datasets.fair.load_pandas().data
    X = np.column_stack([np.ones(len(data)), data[["rate_marriage", "age", "yrs_married", "children"]].to_numpy()])
    return data, X, np.linalg.lstsq(X, data["affairs"].to_numpy(), rcond=None)[0]


@pytest.mark.parametrize("method,floor", [("robgd", 0.4), ("ambssgd", 0.3)])
def test_fair_data_at_epsilon_one_points_the_way_ols_does(fair, method: str, floor: float) -> None:
    """statsmodels' fair data (6366 rows; age ~ 29 beside an intercept: kappa of E[x x^T] ~ 7e4) at epsilon = 1.

    R^2 is not the criterion: the response is zero-inflated (68% zeros) and the methods estimate a
    clipped-residual (Huber-like) fit, whose R^2 is negative even without privacy (statsmodels RLM HuberT:
    -0.058; OLS: 0.045).  The criterion is the correlation of the fitted linear predictor with OLS's, averaged
    over 15 seeds: without preconditioning the coefficients stay at ~1e-10 and it is -0.43 for both methods
    (measured over 40 seeds).  With it and with held rounds (PooledHistogram), over 100 seeds: per-seed mean
    0.63, sd 0.20 (robgd), mean 0.66, sd 0.37 (ambssgd), so the mean of 15 falls below the floor with
    probability below 1e-4 (normal approximation: 4.4 and 3.8 sds).
    """
    data, X, ols = fair
    corr = []
    for seed in range(15):
        params = dpstats.dp_ols(FAIR_FORMULA, data, 1.0, 1e-5, method=method, random_state=seed).params.to_numpy()
        pred = X @ params
        corr.append(np.corrcoef(pred, X @ ols)[0, 1] if np.std(pred) > 0 else 0.0)
    assert np.mean(corr) > floor, np.round(corr, 2)


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_fair_data_at_epsilon_one_does_not_diverge(fair, method: str) -> None:
    """Regression: at w = 0 the residuals are the response, whose squares are spread over many ratio-2 bins (the
    largest holds ~48 of 635 groups, the noise sd of a count is ~22), so the distance histogram's argmax was often
    an empty bin's noise: gamma up to 2^60, a residual threshold and gradient noise to match, and coefficients
    of 1e2 to 2e7 in 6 of 20 seeds for robgd (seeds 2, 3, 6 and 9 among these), 1 of 40 for ambssgd (OLS: at most
    3.2).  Rounds whose (pooled) histogram does not clear its noise now hold the iterate.  Over 200 seeds per
    method the largest |coefficient| was 1.8 (robgd) and 3.6 (ambssgd), in none above 5, so a fit above the
    bound 50 here is a regression, not chance (the seeds are fixed: the test is deterministic).  The fits do
    hold rounds (asserted), so the test exercises the pooled readout.
    """
    data, _, _ = fair
    held = 0
    for seed in range(10):
        res = dpstats.dp_ols(FAIR_FORMULA, data, 1.0, 1e-5, method=method, random_state=seed)
        assert np.abs(res.params.to_numpy()).max() < 50.0, (seed, res.params.to_numpy())
        held += res.info["held_rounds"]
    assert held > 0


def test_reliable_mode_accepts_a_bin_or_window_only_above_the_noise() -> None:
    """Noise-free counts against the rule: one bin must exceed clearance (sqrt(2 ln B) + 2 = 5.1 noise sds for
    B = 128); mass spread over w adjacent bins is accepted when the window's sum exceeds 5.1 sqrt(w) sds, and the
    answer is a bin of that window; bins before ``start`` are ignored."""
    grid, mu = est.DISTANCE_GRID, 0.5
    sd = est.HISTOGRAM_SENSITIVITY / mu
    one = np.zeros(grid.size)
    one[70] = 6.0 * sd
    assert est.reliable_mode(one, mu) == 70
    one[70] = 5.0 * sd
    assert est.reliable_mode(one, mu) is None
    spread = np.zeros(grid.size)
    spread[60:64] = 3.0 * sd  # single bins 3 sds, pairs 6/sqrt(2) = 4.2, the window of 4: 12/2 = 6 sds
    assert est.reliable_mode(spread, mu) in range(60, 64)
    assert est.reliable_mode(spread, mu, widths=(1,)) is None  # single bins only
    assert est.reliable_mode(spread, mu, start=64) is None
    bottom = np.zeros(grid.size)
    bottom[0] = 100.0 * sd  # exact zeros: not a scale when start=1
    assert est.reliable_mode(bottom, mu) == 0 and est.reliable_mode(bottom, mu, start=1) is None


def test_pooled_histogram_rejects_noise_and_recovers_a_weak_mode() -> None:
    """Pure noise is accepted as a mode with probability about 3 * 128 * P(N > 5.1) = 6e-5 per readout; 0 of 2000
    here (false-failure rate of the bound 10: below 1e-20).  A bin of 3.5 noise sds clears one release with
    probability about P(N > 1.6) = 0.055 (bound 0.15 over 200 trials: false-failure below 1e-6); pooled over 8
    releases of the same counts its mean stands 9.9 sds above the mean's noise and is found in each of 200 trials
    (a miss needs a 4.8-sd excursion: probability below 1e-3 over all trials)."""
    grid, mu = est.DISTANCE_GRID, 0.3
    rng = np.random.default_rng(11)

    def release(counts: np.ndarray) -> np.ndarray:
        block = gaussian_block(rounds=1, mu_round=mu, ledger=_ledger(), name="histogram")
        return est.release_histogram(counts, grid, block=block, rng=rng)

    empty = np.zeros(grid.size, dtype=np.int64)
    false = sum(est.PooledHistogram(mu, start=1).add(release(empty)) is not None for _ in range(2000))
    assert false < 10
    counts = np.zeros(grid.size, dtype=np.int64)
    counts[66] = round(3.5 * est.HISTOGRAM_SENSITIVITY / mu)
    once, pooled = 0, 0
    for _ in range(200):
        pool = est.PooledHistogram(mu, start=1)
        once += pool.add(release(counts)) is not None
        for _ in range(7):
            j = pool.add(release(counts))
        pooled += j == 66
    assert once < 30 and pooled == 200


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_a_wide_declared_response_range_does_not_hurt(method: str) -> None:
    # Regression (statsmodels' fair: hours in a declared 0-60, sd 2.2, mostly zeros): the response's declared
    # range used to replace its private centre, and the fit collapsed (in-sample R^2 -7 / -15).  Here a
    # zero-inflated response (63% zeros, sd 1.3) declared in [0, 60]: before the fix ambssgd reached R^2 0.05,
    # 0.24, 0.25 on seeds 0-2 against about 0.31 without bounds; after it, the gap is at most 0.016 over
    # these seeds, and the margin 0.05 is about 4 of its standard deviations.  Deterministic under the fixed seeds;
    # a re-seed of the three fits fails with probability about 3 x Phi(-4) = 1e-4 (normal tail).
    rng = np.random.default_rng(5)
    n = 20_000
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.uniform(0, 10, n)})
    df["y"] = 2.0 * np.maximum(-1.0 + 0.3 * df.x1 - 0.2 * df.x2 + rng.normal(size=n), 0.0)
    bounds = {"x1": (0, 10), "x2": (0, 10), "y": (0, 60)}
    y = df.y.to_numpy()

    def r2(res: dpstats.DPRegressionResults) -> float:
        return 1 - float(np.sum((y - res.predict(df)) ** 2) / np.sum((y - y.mean()) ** 2))

    for seed in range(3):
        with_bounds = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method=method, bounds=bounds, random_state=seed)
        without = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method=method, random_state=seed)
        assert r2(with_bounds) > r2(without) - 0.05


def _wide_bounds_frame() -> tuple[pd.DataFrame, dict[str, tuple[float, float]]]:
    """x2 ~ N(50, 5^2) declared in [0, 1000] (a documented cap, 100 sds wide), a factor, y declared wide."""
    rng = np.random.default_rng(5)
    n = 20_000
    g = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])  # public levels
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(50, 5, n), "g": g})
    df["y"] = 1.0 + 0.5 * df.x1 - 0.3 * df.x2 + (df.g == "b") * 1.0 + rng.normal(size=n)
    return df, {"x1": (0, 10), "x2": (0, 1000), "y": (-1000, 1000)}


def test_declared_ranges_are_marked_and_released_privately() -> None:
    """A declared range is a privacy domain, not a scale: the pipeline marks the columns whose range comes from
    declared bounds (x1, x2), not the intercept or the factor's dummies (ranges by construction), and robgd
    releases a private centre and scale for the marked columns while the dummies' ranges stay free."""
    from dpstats.pipeline import _declared_ranges

    df, bounds = _wide_bounds_frame()
    design = dpstats.formula.build_design("y ~ x1 + x2 + C(g)", df, bounds=bounds)
    assert design.column_names == ["Intercept", "C(g)[T.b]", "C(g)[T.c]", "x1", "x2"]
    assert _declared_ranges(design) == (False, False, False, True, True)
    res = dpstats.dp_ols("y ~ x1 + x2 + C(g)", df, 1.0, 1e-6, method="robgd", bounds=bounds, random_state=0)
    assert any(note.startswith("columns C(g)[T.b], C(g)[T.c]: centred and scaled by their public ranges")
               for note in res.privacy.notes)
    assert any(note.startswith("variables x1, x2, y (response): private centres and scales")
               for note in res.privacy.notes)
    # inside the domain the scale comes from the data: x2 ~ N(50, 5^2) declared in [0, 1000] is centred near 50 and
    # scaled near 5, not by its half-width 500 (the map is in the units of the public rescaling to [-1, 1]: x2 =
    # 500 + 500 x2').  At n = 20000, epsilon = 1 the histograms clear (groups of 13 rows): the scale is within a
    # factor of about 2 of the sd (bins of ratio 2 on the variance, group variances with 12 degrees of freedom),
    # the centre within about s / 8 of the mode of the group means; were a histogram not to clear, the clipped
    # Gaussian fallback has noise sds 1.6 (centre) and 1.7 (scale).  Margins of 4+ sds either way: false-failure
    # rate below 1e-4 for a fresh seed
    assert abs(500.0 + 500.0 * res.info["centre"][4] - 50.0) < 8.0 and 1.0 < 500.0 * res.info["scale"][4] < 14.0


def test_integer_declared_column_scale_is_its_spread_not_its_step() -> None:
    """Issue 17 part 4: years of schooling (integers, half of them at 12, sd 2.6) declared in [0, 18] and publicly
    rescaled to [-1, 1], at n = 12000 and the preconditioning's mu = 0.03 (cps at epsilon 0.5): the groups hold 2
    or 3 rows, and the mode of their variances read the column's step 1/9, not its spread: a scale of 0.33 sd on
    every seed here before the fix (robgd's headline error on cps 0.68 with bounds against 0.51 without, 160
    seeds).  The released clipped mean absolute deviation (sqrt(pi/2) MAD is 0.77 sd for this column; its noise
    sd about 0.09 sd) now replaces the histogram's reading: 0.63 to 0.90 sd on these seeds; the bounds below are
    2.5+ noise sds away."""
    from dpstats.methods.common.private_centring import release_standardisation
    from dpstats.rows.memory import InMemoryRows

    rng, n = np.random.default_rng(5), 12000
    educ = np.clip(np.rint(12 + 2.6 * rng.standard_normal(n) * (rng.random(n) > 0.4)), 0, 18)
    age = np.rint(rng.uniform(16, 55, n))
    X = np.column_stack([np.ones(n), (educ - 9) / 9, (age - 35.5) / 19.5])
    y = X[:, 1] + rng.standard_normal(n)
    for seed in range(6):
        st, notes = release_standardisation(InMemoryRows(X, y).reduce, n, 3, intercept_index=0,
                                            column_ranges=[None, (-1.0, 1.0), (-1.0, 1.0)], mu=0.03,
                                            rng=np.random.default_rng(seed), ledger=_ledger(),
                                            declared=(False, True, True), moments_first=True)
        assert 0.4 < st.scale[1] / (educ.std() / 9) < 1.2, seed
        assert st.passes == 3 and any("mean absolute deviations" in note for note in notes)


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_wide_declared_covariate_bounds_do_not_hurt(method: str) -> None:
    # Issue 17: a declared range used to be the column's scale in the preconditioning, so x2 (sd 5, declared in
    # [0, 1000]) was scaled to a spread of 0.01 and the descent barely moved along it: in-sample R^2 0.33-0.40 with
    # bounds against 0.79-0.82 without (seeds 0-2, both methods).  Declared ranges are now released privately like
    # undeclared ones; the gap over these seeds is at most 0.018, and the margin 0.05 is about 4 of its standard
    # deviations.  Deterministic under the fixed seeds; a re-seed of the three fits fails with probability about
    # 3 x Phi(-4) = 1e-4 (normal tail).
    df, bounds = _wide_bounds_frame()
    y = df.y.to_numpy()

    def r2(res: dpstats.DPRegressionResults) -> float:
        return 1 - float(np.sum((y - res.predict(df)) ** 2) / np.sum((y - y.mean()) ** 2))

    for seed in range(3):
        with_bounds = dpstats.dp_ols("y ~ x1 + x2 + C(g)", df, 1.0, 1e-6, method=method, bounds=bounds,
                                     random_state=seed)
        without = dpstats.dp_ols("y ~ x1 + x2 + C(g)", df, 1.0, 1e-6, method=method, random_state=seed)
        assert r2(with_bounds) > r2(without) - 0.05


def _count_response_frame() -> tuple[pd.DataFrame, dict[str, tuple[float, float]]]:
    """A count response (mean ~150, sd ~70, >= 0) declared in [0, 2000], a proportion in [0, 1] and a count
    (Poisson(8)) declared in [0, 100]: documented caps far wider than the spreads, at n = 6000 (the real-data
    benchmark's bikeshare and randhie in miniature)."""
    rng = np.random.default_rng(3)
    n = 6000
    df = pd.DataFrame({"x1": rng.uniform(0, 1, n), "x2": rng.poisson(8, n).astype(float)})
    df["y"] = np.maximum(0.0, 40 + 120 * df.x1 + 6 * df.x2 + 60 * rng.standard_normal(n)).round()
    return df, {"x1": (0, 1), "x2": (0, 100), "y": (0, 2000)}


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_wide_declared_bounds_at_small_n_epsilon_do_not_hurt(method: str) -> None:
    # Issue 17 part 4.  At n = 6000, epsilon = 0.5 the preconditioning's histograms (groups of 2-3 rows) often do
    # not clear their noise; a declared variable then fell back to the midpoint and half-width of its range: the
    # fit started at y = 1000 instead of ~150 and the few rounds allowed left it there (in-sample R^2 -75, -69, 2.1,
    # -1.1, -75 on seeds 0-4 for robgd against -2.6, -2.3, -2.1, -0.6, -2.1 without bounds; ambssgd alike).  A
    # declared variable now falls back to clipped Gaussian estimates inside its range.  Since issue 17's fix (the
    # norm estimate's clearance check, windows for the preconditioning's histograms) neither path diverges: over
    # 60 other seeds (15-74) the per-seed R^2 had median 0.037 with bounds (quartiles -0.01, 0.06; 1 below -1) and
    # 0.029 without (quartiles -0.05, 0.05; 4 below -1) for robgd, 0.035 and 0.016 for ambssgd (before the fix:
    # medians -0.46 and -2.34, 40% of the fits with bounds below -1).  Criterion: the median R^2 over 15 seeds
    # with bounds is above the median without, less 0.1.  From those quartiles the sd of a median of 15 is about
    # 0.017 (with) and 0.024 (without), so the margin 0.108 is about 3.7 sds of the difference: a false failure
    # for fresh seeds has probability about 1e-4 (normal approximation).  The seeds here are fixed.
    df, bounds = _count_response_frame()
    y = df.y.to_numpy()

    def r2(res: dpstats.DPRegressionResults) -> float:
        return 1 - float(np.sum((y - res.predict(df)) ** 2) / np.sum((y - y.mean()) ** 2))

    with_bounds, without = [], []
    for seed in range(15):
        with_bounds.append(r2(dpstats.dp_ols("y ~ x1 + x2", df, 0.5, 1e-6, method=method, bounds=bounds,
                                             random_state=seed)))
        without.append(r2(dpstats.dp_ols("y ~ x1 + x2", df, 0.5, 1e-6, method=method, random_state=seed)))
    assert np.median(with_bounds) > np.median(without) - 0.1, (np.round(with_bounds, 2), np.round(without, 2))


def _declared_release_pair() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Neighbours for the declared-range releases: 60 rows inside [0, 10] (x) and [0, 100] (y); the neighbour
    moves row 0 from the bottom of both ranges to far beyond their tops (clipped to the tops: the worst case)."""
    rng = np.random.default_rng(2)
    X = np.column_stack([np.ones(60), rng.uniform(0, 10, 60)])
    y = rng.uniform(0, 100, 60)
    X[0, 1], y[0] = 0.0, 0.0
    Xn, yn = X.copy(), y.copy()
    Xn[0, 1], yn[0] = 1e6, 1e9
    return (X, y), (Xn, yn)


def _audit_declared_release(runs: int, moments_first: bool = False) -> tuple[float, float]:
    """Audit of the preconditioning's clipped Gaussian releases (centres of x and y, scale of x) at mu = 1: the
    released centre of x is the statistic (``moments_first``: robgd's path, where they are always released).
    Returns (lower bound, claim)."""
    from dpstats.methods.common.private_centring import release_standardisation
    from dpstats.rows.memory import InMemoryRows

    mu = 1.0

    def run(data: tuple[np.ndarray, np.ndarray], rng: np.random.Generator) -> float:
        rows = InMemoryRows(*data)
        st, _ = release_standardisation(rows.reduce, 60, 2, intercept_index=0, column_ranges=[None, (0.0, 10.0)],
                                        mu=mu, rng=rng, ledger=_ledger(), declared=(False, True),
                                        response_range=(0.0, 100.0), moments_first=moments_first)
        return float(st.centre[1])

    d_set, n_set = _declared_release_pair()
    res = audit_mechanism(run, d_set, n_set, runs=runs, delta=AUDIT_DELTA, seed=8)
    return res.epsilon_lower_bound, gaussian_epsilon(mu, AUDIT_DELTA)


@pytest.mark.parametrize("moments_first", [False, True])
def test_audit_declared_range_release(moments_first: bool) -> None:
    # validity only: a sound release exceeds the claim with probability at most alpha = 1e-3 (audit_mechanism's
    # default) at any number of runs; 600 runs a side still bound a release that told the pair apart every time above
    # the claim (log(p / (1 - p)), p = (alpha / 2)^(2 / 600): 3.66 against 3.14).  The power check is the slow test
    lower, claim = _audit_declared_release(600, moments_first)
    assert lower <= claim


@pytest.mark.slow
def test_audit_declared_range_release_long() -> None:
    # power: the centres vector (x and the response, both declared) is one of the block's R releases of
    # mu / sqrt(R) each (R = release_count: the histograms of x and the response and the clipped moments),
    # L2 sensitivity sqrt(2) / n; the pair moves each coordinate by 1 / n, so the released centre of x alone is
    # (1 / sqrt R) / sqrt 2-GDP (R = 6: 0.29-GDP, epsilon 0.70 at delta 1e-3), and a sound audit of it sees part
    # of that; 20000 runs (seed 8) gave 0.334.  (With R = 2, before the response was always centred, the bound
    # was 0.4 gaussian_epsilon(0.5) and 20000 runs gave 0.76.)
    from dpstats.methods.common.private_centring import release_count

    releases = release_count(2, 0, [None, (0.0, 10.0)], (False, True), (0.0, 100.0))
    lower, claim = _audit_declared_release(20000)
    mu_x = 1.0 / math.sqrt(releases) / math.sqrt(2.0)
    assert lower <= claim and lower > 0.4 * gaussian_epsilon(mu_x, AUDIT_DELTA)


def _small_n_mu_design(n: int) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float]], tuple[float, float]]:
    """Three Gaussian columns (means 12, -3, 25; sds 4, 0.5, 2) with declared ranges mean +- 6 sd, and a response
    of mean ~51 and sd ~2.5 declared in [0, 80]."""
    rng = np.random.default_rng(0)
    means, sds = np.array([12.0, -3.0, 25.0]), np.array([4.0, 0.5, 2.0])
    X = rng.standard_normal((n, 3)) * sds + means
    y = 30.0 + X @ (np.array([1.0, -2.0, 0.5]) / sds) + rng.standard_normal(n)
    return X, y, [(m - 6 * s, m + 6 * s) for m, s in zip(means, sds, strict=True)], (0.0, 80.0)


@pytest.mark.parametrize(("method", "n", "epsilon", "falls_back"), [("robgd", 3000, 1.0, True),
                                                                     ("ambssgd", 1000, 3.0, False)])
def test_small_n_mu_fits_do_not_diverge(method: str, n: int, epsilon: float, falls_back: bool) -> None:
    """Issue 17: near the methods' minimum n (n mu ~ 650 to 700) the norm histogram's mode often does not clear,
    and an uncleared mode set Gamma to an arbitrary bin: on these seeds the in-sample R^2 was -4.6e13, -6.2e8,
    -1.9e13 and -9.6e6 (robgd, seeds 2, 4, 8, 9) and -3.9e14 (ambssgd, seed 6).  With the clearance check and
    the public fallback Gamma = d, over 200 seeds per method the lowest R^2 was -4.38 (robgd, 155 fits on the
    fallback; 7 below -1) and -4.37 (ambssgd, 29; 16 below -1), medians 0.07: the low fits are no longer
    divergent, and their size is bounded by how far a coarse private centre of the response (sd 2.5, declared
    range 80 wide) can sit from its mean.  None of 400 came near the bound -20 used here, so a fit below it is
    a regression, not chance (false-failure rate for fresh seeds estimated below 1e-3; the seeds are fixed).
    The robgd fits use the fallback (asserted); the ambssgd ones clear, some only with a window of bins."""
    X, y, xb, yb = _small_n_mu_design(n)
    fallbacks = 0
    for seed in range(10):
        res = dpstats.dp_ols_arrays(X, y, epsilon, 1e-6, method=method, intercept=True, x_bounds=xb, y_bounds=yb,
                                    random_state=seed)
        params = res.params.to_numpy()
        r2 = 1.0 - np.sum((y - params[0] - X @ params[1:]) ** 2) / np.sum((y - y.mean()) ** 2)
        assert r2 > -20.0, (seed, r2)
        fallbacks += not res.info.get("Gamma_released", True)
    assert fallbacks > 0 or not falls_back


def test_response_centre_without_a_range_clears_with_a_window() -> None:
    """Issue 17: without declared bounds at small n mu, the response's centre histogram (bins of a quarter of its
    scale) rarely cleared with a single bin, its centre fell back to 0, and a fit that could not move far from the
    start predicted 0 for a response of mean 51 (in-sample R^2 -100).  A variable without a range may now clear
    with a window of 2 or 4 bins.  At n = 1000 and the preconditioning's mu at epsilon = 3: released in 2 of 100
    seeds before, 568 of 1000 now, every released centre within 0.78 sd of the mean.  Criteria: at least 5 of 20
    released (fails falsely with probability binom.cdf(4, 20, 0.568) < 1e-3) and each within 1.5 sd."""
    from dpstats.methods.common.private_centring import release_standardisation
    from dpstats.rows.memory import InMemoryRows

    X, y, _, _ = _small_n_mu_design(1000)
    Xi = np.column_stack([np.ones(1000), X])
    mu_pre = gaussian_mu(3.0, 1e-6) * math.sqrt(PRECONDITION_SHARE)
    released = 0
    for seed in range(20):
        st, _ = release_standardisation(InMemoryRows(Xi, y).reduce, 1000, 4, intercept_index=0,
                                        column_ranges=[None] * 4, mu=mu_pre, rng=np.random.default_rng(seed),
                                        ledger=_ledger())
        if st.y_centre != 0.0:
            released += 1
            assert abs(st.y_centre - y.mean()) < 1.5 * y.std(), (seed, st.y_centre)
    assert released >= 5


# ----------------------------------------------------------------------------- the predicted privacy error


def _privacy_errors(method: str, seeds: range, **opts: object) -> tuple[np.ndarray, np.ndarray]:
    """Per coefficient (intercept first): the root mean square over ``seeds`` of the fit's predicted privacy error
    (``MethodFit.error_split``) and of its measured one, the released coefficients minus least squares on the same
    rows (n = 20000, d = 4 on the sphere shifted by 0.5, sigma = 1, epsilon = 0.5)."""
    sim = robust_regression_data(20000, 4, sigma=1.0, random_state=0)
    X, y = np.column_stack([np.ones(20000), sim.X + 0.5]), sim.y + 2.0
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    predicted, measured = [], []
    for seed in seeds:
        fit = get_method(method).fit_arrays(X, y, ledger=PrivacyLedger(0.5, 1e-6), rng=np.random.default_rng(seed),
                                            intercept_index=0, **opts)
        assert fit.error_split is not None
        predicted.append(np.diag(fit.error_split.privacy))
        measured.append((fit.params - ols) ** 2)
    return np.sqrt(np.mean(predicted, axis=0)), np.sqrt(np.mean(measured, axis=0))


@pytest.mark.parametrize(("method", "opts"), [("robgd", {}), ("robgd", {"rounds": 4, "step_size": 0.1}),
                                              ("ambssgd", {})])
def test_predicted_privacy_error_matches_the_measured_one(method: str, opts: dict[str, float]) -> None:
    """The error block's privacy error from released values is within a factor 2 of the measured root mean square
    of the coefficients minus least squares, per coefficient, over 30 seeds: where the steps converge (robgd's
    own schedule: the injected noise, measured sd about rms), where they stop early (4 rounds of step 0.1: the
    shrinkage bias, about 5 times the noise) and for the tail average of one-pass SGD (both).  Observed ratios
    0.86-1.33 (robgd), 0.90-1.11 (4 rounds), 0.86-1.39 (ambssgd); over 3 further sets of 30 seeds they stayed in
    [0.69, 1.31] (each ratio has a sampling sd of about 13%, so a false failure needs a 5-sd excursion)."""
    predicted, measured = _privacy_errors(method, range(30), **opts)
    ratio = predicted / measured
    assert np.all((ratio > 0.5) & (ratio < 2.0)), ratio


@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_predicted_privacy_error_is_post_processing(method: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The error split spends nothing, draws nothing and leaves the estimate alone: a fit without it (the split
    replaced by None) has the same coefficients, the same ledger steps and leaves the generator in the same state;
    and it is the noise's variance plus the early-stopping bias, propagated (a positive semi-definite matrix)."""
    from dpstats.methods.common import robust_descent

    sim = robust_regression_data(20000, 3, sigma=0.5, random_state=1)
    X = np.column_stack([np.ones(20000), sim.X])
    runs = []
    for split in (True, False):
        if not split:
            monkeypatch.setattr(robust_descent, "error_split", lambda *args: None)
        ledger, rng = PrivacyLedger(1.0, 1e-6), np.random.default_rng(4)
        fit = get_method(method).fit_arrays(X, sim.y, ledger=ledger, rng=rng, intercept_index=0)
        runs.append((fit, ledger.steps, rng.bit_generator.state))
    (with_split, steps, state), (without, steps_without, state_without) = runs
    assert np.array_equal(with_split.params, without.params)
    assert steps == steps_without and state == state_without
    assert without.error_split is None and with_split.error_split is not None
    cov = with_split.error_split.privacy
    assert np.allclose(cov, cov.T) and np.linalg.eigvalsh(cov).min() > -1e-12 * np.abs(cov).max()
    assert "early-stopping" in with_split.error_split.privacy_source


def test_descent_error_propagates_held_rounds_and_output_weights() -> None:
    """The linearisation by hand: two steps of eta with contraction c around a held round; the last iterate
    keeps c of the first draw and all of the second, the tail average of the last two iterates their mean; with
    every round held nothing moved and there is no split."""
    from dpstats.methods.common.robust_descent import DescentError, descent_error, error_split

    eta, h = 0.2, 1.5
    c = 1.0 - eta * h
    last = descent_error([1.0, math.nan, 2.0], np.array([0.0, 0.0, 0.0, 1.0]), eta, h)
    assert math.isclose(last.shrink, 1.0 - c**2)
    assert math.isclose(last.variance, eta**2 * (c**2 * 1.0 + 4.0))
    tail = descent_error([1.0, math.nan, 2.0], np.array([0.0, 0.0, 0.5, 0.5]), eta, h)
    assert math.isclose(tail.shrink, 0.5 * (1.0 - c) + 0.5 * (1.0 - c**2))
    assert math.isclose(tail.variance, eta**2 * ((0.5 + 0.5 * c) ** 2 + 0.25 * 4.0))
    held = descent_error([math.nan, math.nan], np.array([0.0, 0.0, 1.0]), eta, h)
    assert held == DescentError(0.0, 0.0)
    assert error_split(None, np.zeros(2), held, 1.0, "") is None  # nothing moved: no released value measures w*


def _descent_error_by_rounds(noise_sds: list[float], weights: np.ndarray, eta: float,
                             curvature: float) -> tuple[float, float]:
    """Reference: the recurrence of ``descent_error`` run round by round (each stepping round contracts every
    earlier draw's coefficient in the iterate by c and adds its own -eta; the output accumulates weighted
    iterates)."""
    c = min(max(1.0 - eta * curvature, 0.0), 1.0)
    sds = np.asarray(noise_sds, dtype=float)
    coef, out = np.zeros(sds.size), np.zeros(sds.size)
    remain = 1.0
    shrink = float(weights[0]) * (1.0 - remain)
    for t, sd in enumerate(sds):
        if math.isfinite(sd):
            coef *= c
            coef[t] = -eta
            remain *= c
        out += weights[t + 1] * coef
        shrink += float(weights[t + 1]) * (1.0 - remain)
    taken = np.isfinite(sds)
    return shrink, float(np.sum(out[taken] ** 2 * sds[taken] ** 2))


def _descent_error_cases() -> list[tuple[list[float], np.ndarray, float, float]]:
    """Public inputs: one round, held rounds first/last, the contraction at 0 (exactly, and clipped from below),
    near 1 and at 1 (no curvature), output weights on the start, a chosen iterate, a tail average, and a long
    run whose powers of c underflow."""
    rng = np.random.default_rng(20261203)
    long_sds = rng.uniform(0.1, 3.0, 3000)
    long_sds[rng.random(3000) < 0.2] = math.nan
    long_tail = np.zeros(3001)
    long_tail[1500:] = 1.0 / 1501
    last3, tail3 = np.array([0.0, 0.0, 0.0, 1.0]), np.array([0.0, 0.0, 0.5, 0.5])
    sds3 = [1.0, math.nan, 2.0]
    return [
        ([1.5], np.array([0.0, 1.0]), 0.3, 1.0),             # a single round
        ([math.nan], np.array([0.0, 1.0]), 0.3, 1.0),        # a single held round
        ([1.5], np.array([1.0, 0.0]), 0.3, 1.0),             # output the start
        (sds3, last3, 0.5, 2.0),                             # c = 0 exactly
        (sds3, tail3, 0.5, 5.0),                             # 1 - eta h < 0: c clipped to 0
        (sds3, tail3, 0.2, 1.5),                             # c = 0.7
        (sds3, tail3, 1e-9, 1.0),                            # c near 1
        (sds3, last3, 0.2, 0.0),                             # c = 1: no contraction
        ([math.nan, 0.5, 0.7, math.nan], np.array([0.0, 0.0, 1.0, 0.0, 0.0]), 0.4, 1.0),  # a chosen iterate
        ([math.nan, 2.0, 1.0, math.nan, 3.0], np.full(6, 1.0 / 6), 0.1, 1.0 - 1e-12),     # all iterates
        (list(long_sds), long_tail, 0.5, 1.0),               # c = 0.5: c^m underflows
        (list(long_sds), long_tail, 0.01, 0.1),              # c = 0.999
    ]


@pytest.mark.parametrize("case", range(len(_descent_error_cases())))
def test_descent_error_matches_the_recurrence_round_by_round(case: int) -> None:
    """The closed form (pooled weights, running powers of c, discounted tail sums) equals the recurrence to
    floating-point rounding."""
    from dpstats.methods.common.robust_descent import descent_error

    sds, weights, eta, h = _descent_error_cases()[case]
    got = descent_error(sds, weights, eta, h)
    want = _descent_error_by_rounds(sds, weights, eta, h)
    assert np.allclose([got.shrink, got.variance], want, rtol=1e-10, atol=0.0)
