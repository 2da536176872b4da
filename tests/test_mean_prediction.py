"""``res.get_prediction(new)``: the mean response at new rows, from the fit's released inference only.

The contract: the mean is ``predict``'s; for the non-private reference the standard errors and intervals are
statsmodels'; for a bootstrap fit the interval of a row that picks one coefficient is that coefficient's own
``conf_int``; without inference the standard errors and intervals are NaN; the intervals cover the true mean at
about the nominal rate (a seeded simulation); no interval for a new observation (it would need the private rows'
residual variance).  Deterministic (seeded) tests.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import dpstats

BOUNDS = {"x": (0.0, 10.0), "z": (0.0, 10.0), "y": (-20.0, 60.0)}
NEW = pd.DataFrame({"x": [1.0, 5.0, 9.0], "z": [2.0, 5.0, 8.0]}, index=["a", "b", "c"])


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "z": rng.uniform(0, 10, n)})
    df["y"] = 1 + 2 * df.x + 0.5 * df.z + rng.normal(0, 3, n)
    return df


def test_the_non_private_reference_gives_statsmodels_mean_and_interval():
    df = _frame(300, 0)
    got = dpstats.dp_ols("y ~ x + z", df, math.inf, method="ols").get_prediction(NEW).summary_frame(alpha=0.1)
    want = smf.ols("y ~ x + z", df).fit().get_prediction(NEW).summary_frame(alpha=0.1)
    assert list(got.columns) == ["mean", "mean_se", "mean_ci_lower", "mean_ci_upper"]
    assert list(got.index) == ["a", "b", "c"]
    np.testing.assert_allclose(got.to_numpy(), want[list(got.columns)].to_numpy(), rtol=1e-9)


def test_a_row_that_picks_one_coefficient_gets_that_coefficients_interval():
    """x = z = 0 picks the intercept: its mean, standard error and basic bootstrap interval are the intercept's."""
    res = dpstats.dp_ols("y ~ x + z", _frame(5000, 1), 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=3)
    pred = res.get_prediction(pd.DataFrame({"x": [0.0], "z": [0.0]}))
    assert pred.predicted_mean.iloc[0] == pytest.approx(res.params["Intercept"], rel=1e-12)
    assert pred.se_mean.iloc[0] == pytest.approx(math.sqrt(res.cov_params().loc["Intercept", "Intercept"]), rel=1e-9)
    np.testing.assert_allclose(pred.conf_int(0.05)[0], res.conf_int(0.05).loc["Intercept"].to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(pred.predicted_mean.to_numpy(), res.predict(pd.DataFrame({"x": [0.0], "z": [0.0]})))


def test_without_inference_the_mean_is_predict_and_the_rest_nan():
    res = dpstats.dp_ols("y ~ x + z", _frame(2000, 2), 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0,
                         inference=False)
    frame = res.get_prediction(NEW).summary_frame()
    np.testing.assert_array_equal(frame["mean"].to_numpy(), res.predict(NEW).to_numpy())
    assert frame[["mean_se", "mean_ci_lower", "mean_ci_upper"]].isna().all().all()
    assert res.inference_reason
    with pytest.raises(dpstats.errors.InvalidArgumentError, match="get_prediction needs newdata"):
        res.get_prediction()


def test_the_default_fits_intervals_cover_the_true_mean():
    """The default fit (pgd at n = 2000, epsilon 1), 60 data sets: each of three new rows' 95% interval covers the
    true mean in at least 51 of 60 fits (measured 58-59; with a true coverage of 0.95 fewer than 52 has probability
    below 1e-3)."""
    truth = (1 + 2 * NEW.x + 0.5 * NEW.z).to_numpy()
    covered = np.zeros(3)
    for seed in range(60):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols("y ~ x + z", _frame(2000, seed), 1.0, 1e-6, bounds=BOUNDS, random_state=seed)
        frame = res.get_prediction(NEW).summary_frame()
        covered += (frame["mean_ci_lower"].to_numpy() <= truth) & (truth <= frame["mean_ci_upper"].to_numpy())
    assert res.method == "pgd"
    assert (covered >= 51).all(), covered
