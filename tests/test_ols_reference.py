"""The non-private ``ols`` reference: column equilibration before the rank decision (dpstats/methods/ols.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import statsmodels.api as sm

import dpstats
from dpstats.methods import ols
from dpstats.privacy.ledger import PrivacyLedger


def _fit(X: np.ndarray, y: np.ndarray):
    return ols.SPEC.fit_arrays(X, y, ledger=PrivacyLedger(float("inf"), 0.0), rng=np.random.default_rng(0), bounds=None)


def _scaled_design(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intercept, a column of order 1e-9 and one of order 1e12, y = 1 + 2e9 x1 + 3e-12 x2 + noise."""
    rng = np.random.default_rng(seed)
    u = rng.normal(size=(500, 2))
    X = np.column_stack([np.ones(500), 1e-9 * u[:, 0], 1e12 * u[:, 1]])
    beta = np.array([1.0, 2e9, 3e-12])
    return X, X @ beta + 0.1 * rng.normal(size=500), beta


def test_columns_of_very_different_scale_are_not_rank_deficient():
    """Without equilibration lstsq(rcond=None) cut the 1e-9 column (rank 2) and returned Intercept 9e-24 with the
    SEs withheld; the fit must equal, in relative terms, the fit of the design with unit-scale columns."""
    X, y, beta = _scaled_design()
    fit = _fit(X, y)
    assert fit.diagnostics["rank"] == 3 and fit.bse is not None
    unit = X / np.array([1.0, 1e-9, 1e12])
    ref = sm.OLS(y, unit).fit()
    np.testing.assert_allclose(fit.params * np.array([1.0, 1e-9, 1e12]), ref.params, rtol=1e-8)
    np.testing.assert_allclose(fit.bse * np.array([1.0, 1e-9, 1e12]), ref.bse, rtol=1e-8)
    assert abs(fit.params[0] - 1.0) < 0.05  # SE of the intercept is 0.1 / sqrt(500) = 0.0045


def test_through_the_formula_api_the_intercept_is_recovered():
    """The sweep's case: ``y ~ a + b`` with a of order 1e-9 and b of order 1e12 (intercept SE 0.0047)."""
    X, y, _ = _scaled_design(1)
    df = pd.DataFrame({"y": y, "a": X[:, 1], "b": X[:, 2]})
    res = dpstats.dp_ols("y ~ a + b", df, float("inf"), method="ols")
    # deterministic under the data's fixed seed; 0.05 is 10.6 intercept SEs, so data drawn with another seed fail
    # with probability about 2 Phi(-10.6) = 3e-26
    assert abs(res.params["Intercept"] - 1.0) < 0.05 and res.inference_available


def test_well_scaled_design_is_unchanged_up_to_rounding():
    rng = np.random.default_rng(2)
    X = np.column_stack([np.ones(300), rng.uniform(-1, 1, size=(300, 4))])
    y = X @ np.arange(1.0, 6.0) + rng.normal(size=300)
    fit, ref = _fit(X, y), sm.OLS(y, X).fit()
    np.testing.assert_allclose(fit.params, np.linalg.lstsq(X, y, rcond=None)[0], rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(fit.bse, ref.bse, rtol=1e-10)
    np.testing.assert_allclose(fit.inference.cov, ref.cov_params(), rtol=1e-10, atol=1e-14)


def test_a_truly_collinear_design_is_still_rank_deficient():
    """Equilibration must not hide exact collinearity: a column repeated at another scale stays rank deficient,
    and an all-zero column does not divide by zero."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    X = np.column_stack([np.ones(200), x, 1e6 * x, np.zeros(200)])
    fit = _fit(X, 1.0 + x)
    assert fit.diagnostics["rank"] == 2 and fit.bse is None and np.all(np.isfinite(fit.params))
