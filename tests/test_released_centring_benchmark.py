"""The released-means benchmark (benchmarks/released_centring.py): its variant is what it says.

* With every bound declared, a pgd fit under the variant centres its square at released means (two releases of
  centred moments, the note), spends the budget the default spends, and fits the same model.
* Another method, or pgd with a bound missing, is fitted exactly as the package fits it.
* An unknown benchmark is refused before anything runs.

Deterministic: fixed seeds.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats import pipeline
from dpstats.results import DPRegressionResults

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
# the benchmark helpers are importable only after the sys.path line above
import released_centring  # noqa: E402

BOUNDS = {"x": (0.0, 100.0), "y": (-10.0, 10.0)}
FORMULA = "y ~ x + I(x ** 2)"


def _quadratic(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.uniform(20, 60, n)
    return pd.DataFrame({"x": x, "y": 1 + 0.2 * x - 0.002 * x**2 + rng.normal(0, 0.5, n)})


def _fit(df: pd.DataFrame, **kwargs: object) -> DPRegressionResults:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, random_state=5, **kwargs)  # type: ignore[arg-type]


def test_the_variant_centres_pgd_at_released_means_with_bounds_declared(monkeypatch):
    df = _quadratic()
    default = _fit(df, bounds=BOUNDS)
    monkeypatch.setattr(pipeline, "_public_transform", released_centring._released_transform)
    res = _fit(df, bounds=BOUNDS)
    assert res.method == default.method == "pgd"
    assert not any("released mean" in n for n in default.privacy.notes)
    assert any("centred at its released mean" in n for n in res.privacy.notes)
    assert sum("centred products and powers" in s.name for s in res.privacy.steps) == 2
    assert res.privacy.epsilon_spent == pytest.approx(default.privacy.epsilon_spent, rel=1e-9)
    assert list(res.params.index) == list(default.params.index) == ["Intercept", "x", "I(x ** 2)"]
    # the same model: both fits are close to least squares (x's coefficient 0.2 at n = 2,000, epsilon 1)
    assert res.params["x"] == pytest.approx(0.2, abs=0.1) and default.params["x"] == pytest.approx(0.2, abs=0.1)


def test_the_variant_leaves_other_fits_as_they_are(monkeypatch):
    df = _quadratic()
    ssp, unbounded = _fit(df, bounds=BOUNDS, method="ssp"), _fit(df, bounds={"x": (0.0, 100.0)})
    monkeypatch.setattr(pipeline, "_public_transform", released_centring._released_transform)
    pd.testing.assert_series_equal(_fit(df, bounds=BOUNDS, method="ssp").params, ssp.params)
    pd.testing.assert_series_equal(_fit(df, bounds={"x": (0.0, 100.0)}).params, unbounded.params)


def test_an_unknown_benchmark_is_refused():
    with pytest.raises(SystemExit, match="usage: released_centring.py"):
        released_centring.main(["speed"])
    with pytest.raises(SystemExit, match="one job"):
        released_centring.main(["real_data", "--jobs", "2"])
