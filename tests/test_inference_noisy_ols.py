"""Private inference for noisy_ols: covariance from released values only, budget steps, coverage."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from ledger_helpers import method_steps

import dpstats
from dpstats.bounds import DataBounds
from dpstats.errors import IllConditionedDesignError, MethodOptionError
from dpstats.methods import noisy_ols
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.missing_screen import SCREEN_SHARE

INFERENCE_STEPS = ["noisy X^T X (for inference)", "noisy y^T y (for inference)"]
BOUNDS_2 = DataBounds(np.array([1.0, -1.0]), np.array([1.0, 1.0]), -1.0, 1.0)  # intercept and one column


class _RecordingLedger(PrivacyLedger):
    """Records steps without composing them (a PLD per charge); composition is tested on the real ledger."""

    def charge(self, step: PrivacyStep) -> None:
        self.steps.append(step)


def _simulate(n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, dict]:
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["y"] = 1.0 + df.x1 - df.x2 + 0.5 * rng.normal(size=n)
    return df, {"x1": (-1, 1), "x2": (-1, 1), "y": (-3, 5)}


def test_coverage_near_nominal_with_both_sampling_and_privacy_noise():
    # n = 2000, d = 2, epsilon = 16: the released noise makes up about 40-70% of each coefficient's variance,
    # so an interval that ignored either part would cover about 0.84 (measured). 400 data sets x 2
    # coefficients: the pooled coverage has sd at most sqrt(0.95 * 0.05 / 400) = 0.011 (perfectly
    # correlated coefficients), so the band [0.915, 0.985] is more than 3 sd on each side: false-failure
    # rate below 0.3%.
    rng = np.random.default_rng(11)
    covered, shares = [], []
    for _ in range(400):
        x = rng.uniform(-1, 1, 2000)
        y = 0.2 + 0.3 * x + 0.2 * rng.normal(size=2000)
        fit = noisy_ols.SPEC.fit_arrays(np.c_[np.ones(2000), x], y, ledger=_RecordingLedger(16.0, 1e-6), rng=rng,
                            bounds=BOUNDS_2)
        covered.append(np.abs(fit.params - [0.2, 0.3]) <= 1.959964 * fit.bse)
        shares.append(fit.diagnostics["noise_sd"] ** 2 / fit.bse**2)
    assert 0.3 < np.mean(shares) < 0.8  # both parts of the variance matter in this setting
    assert 0.915 <= np.mean(covered) <= 0.985, np.mean(covered)


def test_ledger_shows_the_inference_steps_and_spends_exactly_the_budget():
    df, bounds = _simulate(20000, np.random.default_rng(1))
    res = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=3)
    names = [s.name for s in method_steps(res.privacy.steps)]
    assert names == ["noisy lambda_min(X^T X)", *INFERENCE_STEPS,
                     "failure probability of the lambda_min lower bound", "noisy OLS coefficients"]
    gaussian = {s.name: s.mu for s in res.privacy.steps if s.mechanism == "gaussian"}
    mu_total_sq = sum(m**2 for m in gaussian.values())
    inference_sq = sum(gaussian[n] ** 2 for n in INFERENCE_STEPS)
    assert inference_sq / mu_total_sq == pytest.approx(noisy_ols.INFERENCE_SHARE, rel=1e-3)
    # the missing-value screen (Laplace, 2%) and the method add to the budget by basic composition; PLD composes
    # them more tightly, which the ledger reports
    assert 1 - SCREEN_SHARE < res.privacy.epsilon_spent <= 1.0 + 1e-9 and res.privacy.delta_spent == 1e-6
    assert res.inference_available
    for attr in ("bse", "tvalues", "pvalues"):
        s = getattr(res, attr)
        assert list(s.index) == list(res.params.index) and np.all(np.isfinite(s))
    assert res.cov_params().shape == (3, 3)
    ci = res.conf_int(0.1).to_numpy()
    assert np.all(ci[:, 0] < res.params.to_numpy()) and np.all(res.params.to_numpy() < ci[:, 1])
    text = res.summary().as_text()
    assert "noisy_estimate_covariance" in text and "n/a" not in text.split("privacy step")[0]


def test_inference_false_spends_nothing_on_it():
    df, bounds = _simulate(20000, np.random.default_rng(1))
    on = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=3)
    off = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=3,
                         inference=False)
    assert [s.name for s in method_steps(off.privacy.steps)] == ["noisy lambda_min(X^T X)",
                                                    "failure probability of the lambda_min lower bound",
                                                    "noisy OLS coefficients"]
    assert not off.inference_available  # behaviour change (issue 18): NaN and the reason, no exception
    assert off.bse.isna().all() and "inference=False" in off.inference_reason
    mu = {r: {s.name: s.mu for s in res.privacy.steps} for r, res in (("on", on), ("off", off))}
    ratio = mu["off"]["noisy OLS coefficients"] / mu["on"]["noisy OLS coefficients"]
    assert ratio == pytest.approx((1 - noisy_ols.INFERENCE_SHARE) ** -0.5, rel=1e-6)
    assert 1 - SCREEN_SHARE < off.privacy.epsilon_spent <= 1.0 + 1e-9


def test_intervals_use_released_values_only(monkeypatch):
    # Record every release of a fit on data set A, then fit a different data set B (same public n and bounds)
    # with each mechanism replaced by a replay of A's released values: if the covariance used anything of the
    # data beyond the releases, B's intervals would differ from A's.
    (df_a, bounds), (df_b, _) = _simulate(5000, np.random.default_rng(1)), _simulate(5000, np.random.default_rng(2))
    df_b["y"] = -df_b["y"] + 2.0  # a different regression as well
    released: list = []

    def recording(real):
        def mechanism(*args, **kwargs):
            out = real(*args, **kwargs)
            released.append(out)
            return out
        return mechanism

    def replaying(*args, **kwargs):
        return released.pop(0)

    for name in ("gaussian_mechanism_mu", "symmetric_gaussian_mechanism", "release_yty"):
        monkeypatch.setattr(noisy_ols, name, recording(getattr(noisy_ols, name)))
    a = dpstats.dp_ols("y ~ x1 + x2", df_a, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=3)
    assert len(released) == 4  # lambda_min, X^T X, y^T y, coefficients
    for name in ("gaussian_mechanism_mu", "symmetric_gaussian_mechanism", "release_yty"):
        monkeypatch.setattr(noisy_ols, name, replaying)
    b = dpstats.dp_ols("y ~ x1 + x2", df_b, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=4)
    assert not released
    np.testing.assert_array_equal(a.params.to_numpy(), b.params.to_numpy())
    np.testing.assert_array_equal(a.conf_int().to_numpy(), b.conf_int().to_numpy())
    np.testing.assert_array_equal(a.bse.to_numpy(), b.bse.to_numpy())
    assert not hasattr(a, "X") and not hasattr(a, "data")


def test_chunked_fit_gives_the_same_intervals():
    df, bounds = _simulate(6000, np.random.default_rng(5))
    mem = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=9)
    chunked = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=9,
                             chunksize=1000)
    assert [s.name for s in chunked.privacy.steps] == [s.name for s in mem.privacy.steps]
    np.testing.assert_allclose(chunked.conf_int().to_numpy(), mem.conf_int().to_numpy(), rtol=1e-9)


def test_conditional_mode_has_intervals_too():
    df, bounds = _simulate(20000, np.random.default_rng(1))
    res = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=3,
                         guarantee="conditional", min_eigenvalue=0.3)
    assert [s.name for s in method_steps(res.privacy.steps)] == [*INFERENCE_STEPS,
                                                    "noisy OLS coefficients (conditional calibration)"]
    assert res.inference_available and np.all(np.isfinite(res.bse))
    assert 1 - SCREEN_SHARE < res.privacy.epsilon_spent <= 1.0 + 1e-9
    off = dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, random_state=3,
                         guarantee="conditional", min_eigenvalue=0.3, inference=False)
    assert [s.name for s in method_steps(off.privacy.steps)] == ["noisy OLS coefficients (conditional calibration)"]


def test_refusal_spends_nothing_on_inference():
    x = np.linspace(-1, 1, 60)
    ledger = PrivacyLedger(1.0, 1e-6)
    with pytest.raises(IllConditionedDesignError,
                       match=r"lower bound on lambda_min\(X\^T X\) is .* no finite sensitivity can be certified"):
        noisy_ols.SPEC.fit_arrays(np.c_[np.ones(60), x], x, ledger=ledger, rng=np.random.default_rng(0),
                                  bounds=BOUNDS_2)
    assert [s.name for s in ledger.steps] == ["noisy lambda_min(X^T X)"]


def test_bad_inference_option_spends_nothing():
    df, bounds = _simulate(500, np.random.default_rng(2))
    acct = dpstats.PrivacyAccountant(1.0, 1e-6)
    with pytest.raises(MethodOptionError, match="inference must be True or False"):
        dpstats.dp_ols("y ~ x1 + x2", df, 1.0, 1e-6, method="noisy_ols", bounds=bounds, accountant=acct,
                       inference="yes")
    assert acct.spent == (0.0, 0.0)
