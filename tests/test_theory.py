"""dpstats.theory: minimax lower bounds, method upper bounds, applicability, the summary table and plan().

All checks are deterministic (no randomness).  Hand-computed values use
log(1/delta) = ln(1e6) = 13.815511, ln(1000) = 6.907755, ln(5000) = 8.517193,
ln(10000) = 9.210340, ln(200) = 5.298317.
"""

from __future__ import annotations

import json
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.methods.noisy_ols import INFERENCE_SHARE
from dpstats.planning import plan
from dpstats.privacy.calibration import gaussian_delta, gaussian_epsilon, gaussian_mu
from dpstats.privacy.missing_screen import SCREEN_SHARE
from dpstats.theory import (
    classical_lower_bound,
    error_bounds,
    plot_plan,
    point_estimate_epsilon,
    sparse_lower_bound,
)

matplotlib.use("Agg")

L6 = math.log(1e6)


def test_thm18_and_thm19_by_hand():
    eb = error_bounds("noisy_ols", 10000, 10, 1.0, 1e-6, guarantee="conditional", inference=False)
    assert eb.lower.statistical == pytest.approx(math.sqrt(10 / 10000))             # 0.0316228
    assert eb.lower.privacy == pytest.approx(10 * math.sqrt(L6) / 10000)             # 0.0037169
    assert eb.upper.privacy == pytest.approx(10 * math.sqrt(L6 * math.log(10000)) / 10000)  # 0.0112803
    assert eb.upper.privacy == pytest.approx(0.0112803, rel=1e-5)
    assert "Thm 18" in eb.lower.source and "Thm 19" in eb.upper.source
    worst = error_bounds("noisy_ols", 10000, 10, 1.0, 1e-6, inference=False)  # the default calibration is worst-case
    assert worst.upper.privacy == pytest.approx(10**1.5 * math.sqrt(L6 * math.log(10000)) / 10000)  # 0.0356718
    assert "worst-case" in worst.upper.label and "[derived]" in worst.upper.source
    assert classical_lower_bound(10000, 10, 1.0, 1e-6) == (eb.lower.statistical, eb.lower.privacy)


@pytest.mark.parametrize("guarantee", ["worst-case", "conditional"])
def test_noisy_ols_bound_uses_the_point_estimates_budget(guarantee):
    """inference=True leaves (1 - INFERENCE_SHARE) mu^2 to the point estimate; its upper bound is the rate at that
    budget's epsilon (at the fit's delta), inference=False the rate at the full budget.  Deterministic."""
    n, d, eps, delta = 10000, 10, 1.0, 1e-6
    full = error_bounds("noisy_ols", n, d, eps, delta, guarantee=guarantee, inference=False)
    spent = error_bounds("noisy_ols", n, d, eps, delta, guarantee=guarantee)  # inference=True is the default
    eps_point = point_estimate_epsilon(eps, delta, INFERENCE_SHARE)
    # the point estimate's sqrt(1 - share) mu-GDP is exactly (eps_point, delta)-DP (Balle & Wang 2018, Thm 8)
    mu_point = math.sqrt(1 - INFERENCE_SHARE) * gaussian_mu(eps, delta)
    assert gaussian_delta(mu_point, eps_point) == pytest.approx(delta, rel=1e-6)
    assert eps_point == pytest.approx(0.972741, rel=1e-5)  # 5% of mu^2 costs about 2.7% of epsilon here
    # the rates are proportional to 1/eps: the privacy term grows by eps / eps_point, the sampling term not at all
    assert spent.upper.privacy == pytest.approx(full.upper.privacy * eps / eps_point, rel=1e-12)
    assert spent.upper.statistical == full.upper.statistical
    assert spent.lower == full.lower  # the lower bound holds for every (eps, delta)-DP estimator: full budget
    assert full.upper_note == "" and not any("point estimate" in line for line in full.notes())
    assert any(f"epsilon={eps_point:.4g} of 1" in line and "inference=True" in line for line in spent.notes())
    assert spent.upper.source == full.upper.source  # the table's theorem column is unchanged


def test_point_estimate_epsilon_edge_cases():
    assert point_estimate_epsilon(1.0, 1e-6, 0.0) == 1.0
    assert point_estimate_epsilon(math.inf, 1e-6, INFERENCE_SHARE) == math.inf
    # the share of mu^2 is what matters: a quarter of mu^2 is half of mu
    assert point_estimate_epsilon(2.0, 1e-8, 0.75) == pytest.approx(gaussian_epsilon(gaussian_mu(2.0, 1e-8) / 2, 1e-8))
    for bad in (-0.1, 1.0):  # a typed refusal (it raised a bare ValueError)
        with pytest.raises(dpstats.errors.InvalidArgumentError, match=r"inference_share must lie in \[0, 1\)"):
            point_estimate_epsilon(1.0, 1e-6, bad)
    # methods without the option are unaffected by it
    assert error_bounds("robgd", 10000, 10, 1.0, 1e-6) == error_bounds("robgd", 10000, 10, 1.0, 1e-6, inference=False)


def test_noisy_ols_fit_spends_the_share_the_bound_assumes():
    """The ledger of a default noisy_ols fit gives its point estimate (lambda_min check and coefficients) the share
    of mu^2 the theory table assumes, and the table shows the bound at that budget.  Seeded; the fit cannot refuse
    at this n (lambda_min(X^T X) is about 40x its noise margin), so the false-failure rate is 0."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, 20000), "x2": rng.uniform(-1, 1, 20000)})
    df["y"] = 1.0 + df.x1 - df.x2 + 0.3 * rng.normal(size=20000)
    res = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", random_state=1,
                         bounds={"x1": (-1, 1), "x2": (-1, 1), "y": (-3, 5)})
    mu2 = {s.name: (s.sensitivity / s.noise_scale) ** 2 for s in res.privacy.steps if s.mechanism == "gaussian"}
    point = mu2["noisy lambda_min(X^T X)"] + mu2["noisy OLS coefficients"]
    assert point / sum(mu2.values()) == pytest.approx(1 - INFERENCE_SHARE, rel=1e-9)
    # the fit's exact point-estimate epsilon (its Gaussian part at delta - gamma, gamma = delta / 10) is the one the
    # table uses (converted at delta) up to 1e-4 relative
    eps_fit = gaussian_epsilon(math.sqrt(point), 0.9e-6)
    eps_point = point_estimate_epsilon(1.0 - SCREEN_SHARE, 1e-6, INFERENCE_SHARE)  # the missing-value screen's
    # Laplace share is set aside first
    assert eps_fit == pytest.approx(eps_point, rel=1e-4)
    expected = error_bounds("noisy_ols", 20000, 3, eps_point, 1e-6, inference=False).upper
    assert res.error_bounds.upper.privacy == pytest.approx(expected.privacy, rel=1e-12)
    assert "point estimate's budget" in res.summary().as_text()


def test_thm16_and_thm17_by_hand():
    eb = error_bounds("lasso", 5000, 1000, 1.0, 1e-6, sparsity=5)
    assert eb.lower.statistical == pytest.approx(math.sqrt(5 * math.log(1000) / 5000))  # 0.0831129
    assert eb.lower.privacy == pytest.approx(5 * math.log(200) * math.sqrt(L6) / 5000)   # 0.0196934
    assert eb.lower.privacy == pytest.approx(0.0196934, rel=1e-5)
    assert eb.upper.statistical == pytest.approx(math.sqrt(5 * math.log(1000) * math.log(5000) / 5000))  # 0.242559
    assert eb.upper.privacy == pytest.approx(5 * math.sqrt(L6) * math.log(1000) * math.log(5000) ** 1.5 / 5000)
    assert eb.upper.privacy == pytest.approx(0.638212, rel=1e-5)
    assert "Thm 16" in eb.lower.source and "Thm 17" in eb.upper.source
    assert sparse_lower_bound(5000, 1000, 5, 1.0, 1e-6) == (eb.lower.statistical, eb.lower.privacy)


def test_other_methods_bounds():
    rob = error_bounds("robgd", 10000, 10, 1.0, 1e-6)
    assert rob.upper.privacy == pytest.approx(10 / 10000) and "Liu" in rob.upper.source
    amb = error_bounds("ambssgd", 10000, 10, 1.0, 1e-6)
    assert amb.upper.privacy == pytest.approx(10 * math.sqrt(L6) / 10000) and amb.upper.applicable
    assert not error_bounds("ambssgd", 30, 10, 1.0, 1e-6).upper.applicable  # burn-in n >= d sqrt(log(1/delta))/eps
    tukey = error_bounds("tukey", 100000, 10, 1.0, 1e-6)
    assert tukey.upper is not None and not tukey.upper.applicable and "exact-depth" in tukey.upper.failed[0]
    ssp = error_bounds("ssp", 10000, 10, 1.0, 1e-6)
    assert ssp.upper is None and "SSP" in ssp.upper_note and ssp.upper_bound is None
    ols = error_bounds("ols", 500, 10, math.inf, 1e-6)
    assert ols.lower.privacy == 0.0 and ols.upper.total == pytest.approx(math.sqrt(10 / 500))


def test_backward_compatible_fields():
    eb = error_bounds("adassp", 2000, 5, 1.0, 1e-6)
    assert eb.n == 2000 and eb.d == 5
    assert eb.statistical_term == pytest.approx(math.sqrt(5 / 2000))
    assert eb.privacy_term == pytest.approx(5 * math.sqrt(L6) / 2000)
    assert eb.lower_bound == pytest.approx(eb.statistical_term + eb.privacy_term)
    assert eb.dominant == "sampling" and "Thm 18" in eb.lower_bound_source


@pytest.mark.parametrize("n, delta, needle", [
    (500, 1e-2, "delta=0.01 is not below n^-(1+tau)"),          # delta too large for the theorem
    (8, 1e-6, "n too small for Thm 18"),                       # sqrt(d log(1/delta))/(n eps) > 1
])
def test_failed_conditions_make_the_bound_not_applicable(n, delta, needle):
    eb = error_bounds("adassp", n, 10, 1.0, delta)
    assert not eb.lower.applicable and eb.lower_bound is None
    assert any(needle in f for f in eb.lower.failed)
    assert any(c.startswith("Not applicable") and needle in c for c in eb.conditions)
    text = eb.table().as_text()
    assert "n/a" in text and "minimax lower bound (n/a)" in text
    assert "no bound applies" in eb.dominance_line()


def test_sparse_and_classical_specific_conditions():
    assert any("1 <= s < d" in f for f in error_bounds("lasso", 5000, 10, 1.0, 1e-6, sparsity=10).lower.failed)
    assert error_bounds("noisy_ols", 200, 10, 1.0, 1e-6).upper.applicable  # n > d sqrt(log(1/delta))/eps = 37
    assert any("lambda_min check" in f for f in error_bounds("noisy_ols", 30, 10, 1.0, 1e-6).upper.failed)
    assert any("n=5 <= d=10" in f for f in error_bounds("noisy_ols", 5, 10, 1.0, 1e-6).upper.failed)
    big_eps = error_bounds("adassp", 10000, 10, 5.0, 1e-6)
    assert any("epsilon=5 > 1" in line for line in big_eps.notes())


def test_table_notes_and_dict():
    eb = error_bounds("lasso", 5000, 1000, 1.0, 1e-6, sparsity=5)
    tab = eb.table()
    text = tab.as_text()
    assert "Error bounds (units of sigma, up to constants)" in text
    assert "minimax lower bound" in text and "lasso upper bound" in text and "0.0831" in text and "0.638" in text
    tab.as_latex_tabular()
    tab.as_html()
    notes = eb.notes()
    assert notes[0].startswith("At n=5000, d=1000, epsilon=1, delta=1e-06:")
    assert "sampling dominates the minimax lower bound" in notes[0]
    assert "privacy dominates the lasso upper bound" in notes[0]
    assert any("up to absolute constants" in line for line in notes)
    json.dumps(eb.to_dict())
    frame = eb.to_frame()
    assert list(frame.columns[:3]) == ["kind", "sampling", "privacy"] and len(frame) == 2
    assert "lasso upper bound" in str(eb)


def test_plan_by_hand():
    """Thm 18 inverted: sqrt(d/n) + c/n = target with c = d sqrt(log(1/delta))/eps, u = n^(-1/2) solves
    c u^2 + sqrt(d) u - target = 0; privacy <= sampling from n >= d log(1/delta)/eps^2."""
    d, eps, delta, target = 10, 1.0, 1e-6, 0.1
    c = d * math.sqrt(L6) / eps
    u = (-math.sqrt(d) + math.sqrt(d + 4 * c * target)) / (2 * c)
    table = plan(target=target, d=d, epsilon=eps, delta=delta)
    lower = table.iloc[0]
    assert lower["method"] == "(any DP method)" and "Thm 18" in lower["source"]
    assert lower["n_for_target"] == math.ceil(1 / u**2) == 1661
    assert lower["n_privacy_for_target"] == math.ceil(c / target) == 372
    assert lower["n_privacy_below_sampling"] == math.ceil(d * L6 / eps**2) == 139
    assert set(table["method"]) == {"(any DP method)", "noisy_ols", "robgd", "ambssgd"}


@pytest.mark.parametrize("kwargs", [
    dict(target=0.05, d=20, epsilon=0.5, delta=1e-7),
    dict(target=0.1, d=1000, epsilon=1.0, delta=1e-6, sparsity=5),
    dict(target=0.02, d=5, epsilon=2.0, delta=1e-8, method="noisy_ols"),
])
def test_plan_returns_the_smallest_n(kwargs):
    table = plan(**kwargs)
    s = kwargs.get("sparsity") or 0
    rates = {**{r.label: r for r in dpstats.theory.UPPER_RATES.values()},
             **{r.label: r for r in (dpstats.theory.CLASSICAL_LOWER, dpstats.theory.SPARSE_LOWER)}}
    for _, row in table.iterrows():
        r = rates[row["bound"]]

        def total(n: float, r=r) -> float:  # r bound per row
            return r.statistical(n, kwargs["d"], s) + r.privacy_term(n, kwargs["d"], kwargs["epsilon"],
                                                                      kwargs["delta"], s)
        n = row["n_for_target"]
        assert total(n) <= kwargs["target"] < total(n - 1)
        assert row["sampling"] + row["privacy"] == pytest.approx(total(n))


def test_plan_rows_and_conditions():
    t = plan(0.1, 1000, 1.0, 1e-6, sparsity=5, method="lasso")
    assert list(t["bound"]) == ["minimax lower bound (classical)", "minimax lower bound (s-sparse)",
                                "lasso upper bound"]
    assert t["n_for_target"].iloc[1] < t["n_for_target"].iloc[0]  # sparsity needs far fewer rows
    no_rate = plan(0.1, 10, 1.0, 1e-6, method="adassp")
    assert math.isnan(no_rate["n_for_target"].iloc[-1]) and "excess empirical risk" in no_rate["conditions"].iloc[-1]
    assert "needs sparsity" in plan(0.1, 10, 1.0, 1e-6, method="lasso")["conditions"].iloc[-1]
    loose = plan(0.01, 10, 1.0, 1e-3)  # the n needed exceeds 1/delta: Thm 18's delta condition fails there
    assert "not below n^-(1+tau)" in loose["conditions"].iloc[0]
    assert t.attrs["units"] == "sigma, up to absolute constants"
    errors = dpstats.errors
    for bad, error, words in (
            (dict(target=0, d=10, epsilon=1, delta=1e-6), errors.InvalidArgumentError, "target must be a finite"),
            (dict(target=0.1, d=10, epsilon=math.inf, delta=1e-6), errors.InvalidPrivacyParameterError,
             "plan needs a finite epsilon"),
            (dict(target=0.1, d=10, epsilon=1, delta=1.5), errors.InvalidPrivacyParameterError, "delta must lie"),
            (dict(target=0.1, d=10, epsilon=1, delta=1e-6, sparsity=10), errors.InvalidArgumentError,
             "sparsity must be a whole number")):
        with pytest.raises(error, match=words):
            plan(**bad)


def test_plot_plan():
    ax = plot_plan(50, [0.5, 1.0, 4.0], 1e-6, sparsity=5, method="lasso", target=0.1)
    labels = [line.get_label() for line in ax.get_lines()]
    assert sum(lab.startswith("lower bound") for lab in labels) == 3
    assert sum(lab.startswith("lasso upper bound") for lab in labels) == 3
    assert ax.get_xscale() == "log" and "Thm 16" in ax.get_title()
    ax2 = dpstats.plot_plan(10, [1.0], 1e-6)
    assert len(ax2.get_lines()) == 2  # lower bound and the sampling term
    import matplotlib.pyplot as plt
    plt.close("all")


def test_plan_frame_is_a_dataframe():
    assert isinstance(dpstats.plan(target=0.1, d=10, epsilon=1.0, delta=1e-6), pd.DataFrame)
    assert np.issubdtype(dpstats.plan(0.1, 10, 1.0, 1e-6)["n_for_target"].dtype, np.floating)


_IAE, _IPPE = dpstats.errors.InvalidArgumentError, dpstats.errors.InvalidPrivacyParameterError


@pytest.mark.parametrize("call, error, words", [
    (lambda: dpstats.theory.classical_lower_bound(-5, 3, 1.0, 1e-6), _IAE, "need n >= 1 rows"),
    (lambda: dpstats.theory.classical_lower_bound(1000, 0, 1.0, 1e-6), _IAE, "d >= 1 coefficients"),
    (lambda: dpstats.theory.classical_lower_bound(1000, 3, 0.0, 1e-6), _IPPE, "epsilon must be > 0"),
    (lambda: dpstats.theory.classical_lower_bound(1000, 3, 1.0, 0.0), _IPPE, "delta must lie strictly between"),
    (lambda: dpstats.theory.sparse_lower_bound(1000, 3, 5, 1.0, 1e-6), _IAE, "sparsity s must lie in 1..d"),
    (lambda: dpstats.theory.error_bounds("ssp", 0, 3, 1.0, 1e-6), _IAE, "need n >= 1 rows"),
    (lambda: dpstats.theory.error_bounds("ssp", 1000, 3, 1.0, 0.0), _IPPE, "delta must lie strictly between"),
], ids=["n<1", "d<1", "epsilon 0", "delta 0", "s>d", "error_bounds n 0", "error_bounds delta 0"])
def test_the_public_rates_refuse_arguments_outside_their_domain(call, error, words):
    # they answered with ZeroDivisionError, a math domain error, or a negative rate (s > d: a negative privacy term)
    with pytest.raises(error, match=words):
        call()


def test_the_non_private_rate_takes_an_infinite_epsilon():
    sampling, privacy = dpstats.theory.classical_lower_bound(1000, 3, math.inf, 0.0)
    assert privacy == 0.0 and sampling == pytest.approx(math.sqrt(3 / 1000))


def test_a_lower_bound_alone_claims_nothing_about_the_fit():
    """Without an applicable upper bound (and without the coefficients' errors) the lower bound is the least error
    of any private method: the line names its larger part but does not say which part of the fit's error is."""
    line = error_bounds("ssp", 10_000, 5, 1.0, 1e-6).dominance_line()
    assert "dominates" not in line
    assert "the least error of any private method, is mostly sampling" in line
    assert "the rates do not tell which part of this fit's error is larger" in line
    with_upper = error_bounds("noisy_ols", 10_000, 5, 1.0, 1e-6).dominance_line()
    assert "dominates the noisy_ols upper bound" in with_upper and "do not tell" not in with_upper
