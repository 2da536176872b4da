"""Designs without an intercept column: the coefficients map back in the user's model, and a design whose columns
sum to the constant (a factor's full set of dummies, a ``cr`` basis) is fitted as the equivalent model with an
intercept (a public reparametrisation)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DPStatsError
from dpstats.formula import build_design

BOUNDS = {"y": (0.0, 120.0), "x": (0.0, 10.0)}
LEVELS = {"g": ["a", "b", "c"]}


def _data(n: int = 4000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b", "c"], n)
    x = rng.uniform(0.0, 10.0, n)
    return pd.DataFrame({"y": 50.0 + 2.0 * x + 5.0 * (g == "b") + rng.normal(0.0, 3.0, n), "x": x, "g": g})


def _ols(formula: str, df: pd.DataFrame) -> pd.Series:
    return dpstats.dp_ols(formula, df, float("inf"), method="ols").params


@pytest.mark.parametrize("method, bounds", [("pgd", BOUNDS), ("pgd", None), ("dpsgd", BOUNDS)],
                         ids=["pgd-bounds", "pgd-no-bounds", "dpsgd-bounds"])
def test_a_fit_without_an_intercept_maps_back_to_the_users_model(method, bounds):
    """``y ~ 0 + x`` with a response far from 0: the private rows are a linear map of x and y (no shift, which no
    coefficient could absorb), so the slope is least squares' within a few of its noise sds. Before, the response
    was shifted by its domain's midpoint and never shifted back (slope 2.0 where least squares gives 9.9).
    (dpsgd without bounds runs in the data's units with its unit-scale defaults, no domain map to test.)"""
    df = _data()
    want = _ols("y ~ 0 + x", df)["x"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dpstats.dp_ols("y ~ 0 + x", df, 3.0, 1e-6, bounds=bounds, method=method, random_state=1).params["x"]
    # deterministic under the fixed seed; over 50 re-seeds (2-51) the relative error was 0.0012 +- 0.0012 (pgd with
    # bounds), 0.0013 +- 0.0010 (pgd without) and 0.037 +- 0.003 (dpsgd: mostly a bias, its mean 12 sds from 0,
    # not noise): 0.05 is over 40 sds away for pgd, 4.6 for dpsgd, so a re-seed fails with
    # probability below 1e-300 for pgd and about Phi(-4.6) = 2e-6 for dpsgd (normal tail)
    assert got == pytest.approx(want, rel=0.05)


@pytest.mark.parametrize("method", ["pgd", "adassp", "ssp", "noisy_ols", "robgd", "tukey", "ambssgd"])
def test_full_dummies_without_an_intercept_are_the_intercept_model_seed_for_seed(method):
    """``y ~ 0 + C(g) + x`` spans the constant (the dummies of g sum to 1): the private fit sees the design of
    ``y ~ C(g) + x`` (its first dummy replaced by the constant, the same columns in the same order), so with one
    seed it releases the same values and its coefficients are that model's, reparametrised: a = Intercept,
    b = Intercept + C(g)[T.b], c = Intercept + C(g)[T.c]."""
    df = _data(20000 if method in {"robgd", "tukey", "ambssgd"} else 4000)
    kw = dict(bounds=BOUNDS, levels=LEVELS, method=method, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cells = dpstats.dp_ols("y ~ 0 + C(g) + x", df, 3.0, 1e-6, **kw)
        treatment = dpstats.dp_ols("y ~ C(g) + x", df, 3.0, 1e-6, **kw)
    t = treatment.params
    expected = [t["Intercept"], t["Intercept"] + t["C(g)[T.b]"], t["Intercept"] + t["C(g)[T.c]"], t["x"]]
    np.testing.assert_allclose(cells.params.to_numpy(), expected, rtol=1e-9, atol=1e-9)
    assert [s.name for s in cells.privacy.steps] == [s.name for s in treatment.privacy.steps]
    assert any("sum to the constant 1" in note for note in cells.privacy.notes)


def test_which_designs_span_the_constant_is_decided_from_public_facts():
    """The probe of the public domain finds the constant in the span of a factor's full dummies and of a cr basis
    (weights that sum the columns to 1), and not in ``0 + x`` or in a
    design that has an intercept."""
    df = _data(50)
    knots = "knots=[3, 5, 7], lower_bound=0, upper_bound=10"
    cases = {"y ~ 0 + C(g) + x": [1.0, 1.0, 1.0, 0.0], f"y ~ 0 + cr(x, {knots})": [1.0] * 5,
             "y ~ 0 + x": None, "y ~ C(g) + x": None}
    for formula, want in cases.items():
        got = build_design(formula, df, bounds=BOUNDS, levels=LEVELS).constant_weights()
        if want is None:
            assert got is None, formula
        else:
            assert got is not None, formula
            np.testing.assert_allclose(got, want, atol=1e-9)


def test_a_cr_basis_without_an_intercept_is_fitted_as_accurately_as_with_one():
    """``0 + cr(x, ...)`` (the documented way to fit a cr basis, which sums to 1): its fitted values are those of
    least squares within a fraction of the response's noise (before the reparametrisation they were tens of units
    off, the design being far from centred)."""
    df = _data(4000, seed=2)
    formula = "y ~ 0 + cr(x, knots=[3, 5, 7], lower_bound=0, upper_bound=10)"
    new = pd.DataFrame({"x": [1.0, 4.0, 6.0, 9.0]})
    want = dpstats.dp_ols(formula, df, float("inf"), method="ols").predict(new).to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dpstats.dp_ols(formula, df, 3.0, 1e-6, bounds=BOUNDS, random_state=4).predict(new).to_numpy()
    assert np.abs(got - want).max() < 1.5  # residual sd 3 (+ 5 between groups), least squares' own error ~0.3


@pytest.mark.parametrize("formula, method", [("y ~ 0 + C(g) + x + I(x ** 2)", "pgd"),
                                             ("y ~ 0 + C(g) + x", "theilsen")])
def test_a_refusal_of_the_intercept_model_from_public_facts_spends_nothing_on_either_neighbour(formula, method):
    """pgd's refusal of too few rows for the domain it releases (x and y without bounds, n = 100 at epsilon 1) and a
    design wider than theilsen fits are decided from n, d, epsilon and the formula before the missing-value screen:
    a data set and its neighbour with one row missing get the same message and spend nothing."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"g": rng.choice(["a", "b"], 100), "x": rng.normal(size=100)})
    df["y"] = df.x + rng.normal(size=100)
    other = df.copy()
    other.loc[7, "x"] = np.nan
    found = []
    for data in (df, other):
        with pytest.raises(DPStatsError,
                           match=r"pgd needs a clipping domain for the 2 variable\(s\) without declared bounds"
                                 r"|'theilsen' fits at most 2") as caught:
            dpstats.dp_ols(formula, data, 1.0, 1e-6, method=method, levels={"g": ["a", "b"]})
        found.append((type(caught.value), str(caught.value), caught.value.privacy_spent))
    assert found[0] == found[1]
    assert found[0][2] == (0.0, 0.0)
    assert "nothing was spent" in found[0][1].lower()
