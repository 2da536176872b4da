"""A value outside the levels of ``C(expression, levels=[...])``, whose values patsy computes, makes its row a public
null row, as a value outside a column's declared levels does (tests/test_levels_outside.py): counted by the charged
missing-value screen with ``missing="raise"`` (refusing when many rows are affected, naming the term), dropped with
``missing="drop"``, in memory, in chunks, from CSV and Parquet files and from Dask alike; before, it was read as the
first declared level, silently.  The screen runs where such a term can leave its levels by public facts (the formula
and the declared levels): a comparison with both False and True declared cannot.

False-failure rates: the refusals below are of about 2/7 of 2000 rows (570) against the Gaussian screen's refusal
level of 105 rows with noise of standard deviation 22 (below 1e-12); the fits with 5 affected rows pass unless the
noisy count exceeds the refusal level, which a data set with none does with probability FALSE_REFUSAL = 1e-6.  Every
fit has a fixed seed, so each test is deterministic.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DisallowedExpressionError, MissingDataError, UnseenLevelError
from dpstats.formula.design import build_design
from dpstats.formula.frame import raw_level_codes
from dpstats.formula.language import FORMULA_ENV, computed_level_codes
from dpstats.formula.parse import ComputedFactor
from dpstats.privacy.missing_screen import MissingValueScreen
from dpstats.rows.sources import CSVSource, DataFrameSource, ParquetSource

ABS = "y ~ x + C(np.abs(k), levels=[0, 1, 2])"
BOUNDS = {"x": (0.0, 1.0), "y": (-1.0, 4.0), "k": (-3.0, 3.0)}


def _frame(n: int = 2000, seed: int = 0, off: int | None = None) -> pd.DataFrame:
    """k in -2..2 (|k| always a declared level); ``off`` rows (the first ones) get k = 3 (|k| = 3 is not one), or,
    with ``off=None``, k in -3..3 throughout (|k| = 3 in about 2/7 of the rows)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    k = rng.integers(-3, 4, n) if off is None else rng.integers(-2, 3, n)
    if off:
        k[:off] = 3
    y = np.clip(1 + x + 0.5 * np.abs(k) + rng.normal(0, 0.2, n), -1, 4)
    return pd.DataFrame({"y": y, "x": x, "k": k.astype(float)})


def test_many_computed_values_outside_the_levels_are_refused_by_the_charged_screen():
    """Before: every |k| = 3 row was read as |k| = 0 (the first level) and the fit ran; now those rows are null
    rows, the screen counts them and refuses, naming the term (never a value), with the screen's share spent."""
    df = _frame()
    with pytest.raises(MissingDataError, match="a missing value or a value outside the declared levels") as info:
        dpstats.dp_ols(ABS, df, 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=1)
    screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=True)
    assert 0 < info.value.privacy_spent[0] < 1.0  # the screen's release only
    message = str(info.value)
    assert "a value can fall outside: C(np.abs(k), levels=[0, 1, 2])" in message
    assert screen.refusal_level < 570


def test_few_computed_values_outside_the_levels_are_null_rows_as_missing_values_are():
    """5 rows with |k| = 3: the fit runs (charged screen); its design marks exactly those rows as null rows, the
    same design as with k missing on those rows; the non-private reference refuses them, or drops them."""
    df = _frame(off=5)
    screened = build_design(ABS, df, missing="screen", bounds=BOUNDS)
    assert screened.screened[-1] == "C(np.abs(k), levels=[0, 1, 2])"
    assert screened.screened_levels == ("C(np.abs(k), levels=[0, 1, 2])",)
    assert np.flatnonzero(np.isnan(screened.X).any(axis=1)).tolist() == [0, 1, 2, 3, 4]
    as_missing = df.assign(k=df["k"].where(df.index >= 5))
    np.testing.assert_array_equal(screened.X, build_design(ABS, as_missing, missing="screen", bounds=BOUNDS).X)
    res = dpstats.dp_ols(ABS, df, 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=0)
    assert res.privacy.steps[0].name.startswith("missing-value screen") and res.nobs == len(df)
    same = dpstats.dp_ols(ABS, as_missing, 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=0)
    np.testing.assert_array_equal(res.params, same.params)
    with pytest.raises(MissingDataError, match=r"values outside the declared levels in C\(np.abs\(k\)"):
        dpstats.dp_ols(ABS, df, float("inf"), 1e-6, method="ols", bounds=BOUNDS)
    ols = dpstats.dp_ols(ABS, df, float("inf"), 1e-6, method="ols", missing="drop", bounds=BOUNDS)
    want = dpstats.dp_ols(ABS, df.iloc[5:], float("inf"), 1e-6, method="ols", bounds=BOUNDS)
    assert ols.nobs == len(df) - 5
    np.testing.assert_allclose(ols.params, want.params, rtol=1e-12)


def test_missing_drop_makes_computed_values_outside_the_levels_null_rows_without_a_screen():
    df = _frame(off=40)
    res = dpstats.dp_ols(ABS, df, 1.0, 1e-6, bounds=BOUNDS, method="ssp", missing="drop", random_state=0)
    assert not any(s.name.startswith("missing-value screen") for s in res.privacy.steps)
    same = dpstats.dp_ols(ABS, df.assign(k=df["k"].where(df.index >= 40)), 1.0, 1e-6, bounds=BOUNDS, method="ssp",
                          missing="drop", random_state=0)
    np.testing.assert_array_equal(res.params, same.params)


def test_a_non_finite_computed_value_is_outside_the_levels():
    """np.sqrt(x) of x < 0 (x without bounds) is NaN: no level, so a null row, as a missing x is."""
    df = _frame(off=0)
    df.loc[:2, "x"] = [0.0, -1.0, -2.0]
    formula = "y ~ C(np.sqrt(x) * 0 + k, levels=[-2, -1, 0, 1, 2])"  # k itself, NaN where x < 0
    design = build_design(formula, df, missing="screen", bounds={"y": (-1, 4), "k": (-3, 3)})
    assert np.flatnonzero(np.isnan(design.X).any(axis=1)).tolist() == [1, 2]


def test_memory_chunks_files_and_dask_map_computed_values_outside_the_levels_alike(tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df = _frame(off=0)
    df.loc[[3, 700, 1500], "k"] = -3.0
    kw = {"bounds": BOUNDS, "method": "ssp", "random_state": 5}
    memory = dpstats.dp_ols(ABS, df, 1.0, 1e-6, **kw)
    csv, parquet = tmp_path / "d.csv", tmp_path / "d.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet, row_group_size=600)
    for data in (DataFrameSource(df, 450), CSVSource(str(csv), chunksize=777), ParquetSource(str(parquet)),
                 dd.from_pandas(df, npartitions=3)):
        chunked = dpstats.dp_ols(ABS, data, 1.0, 1e-6, **kw)
        np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-9)
        assert [s.name for s in chunked.privacy.steps] == [s.name for s in memory.privacy.steps]
    as_missing = df.assign(k=df["k"].where(df["k"] != -3.0))
    np.testing.assert_allclose(dpstats.dp_ols(ABS, as_missing, 1.0, 1e-6, **kw).params, memory.params, rtol=1e-12)


def _ints(n: int = 3000, seed: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"y": rng.integers(0, 10, n), "x": rng.integers(0, 10, n)})


@pytest.mark.parametrize("term", ["C(x > 3, levels=[False, True])", "C(I(x > 3), levels=[True, False])",
                                  "C(x > 3, levels=[0, 1])"])
def test_a_comparison_with_both_values_declared_spends_no_screen(term):
    """Integer columns hold no missing value, and a comparison is False or True: with both declared (0 and 1 are
    False and True) the term cannot leave its levels, so no screen runs, in the fit as in its plan."""
    formula = f"y ~ x + {term}"
    bounds = {"x": (0, 9), "y": (0, 9)}
    assert build_design(formula, _ints().iloc[:0], missing="screen", bounds=bounds).screened == ()
    res = dpstats.dp_ols(formula, _ints(), 1.0, 1e-6, bounds=bounds, method="ssp", random_state=0)
    assert not any(s.name.startswith("missing-value screen") for s in res.privacy.steps)


def test_a_comparison_with_one_value_undeclared_is_screened_and_plan_agrees():
    """``C(x > 3, levels=[True, 2])``: False is no declared level, so the term can produce a null row; the fit runs
    the screen and its plan sets the screen's share aside (the same privacy error as the unscreened plan at 98% of
    epsilon)."""
    bounds = {"x": (0, 9), "y": (0, 9)}
    dtypes = {"x": "int64", "y": "int64"}
    formula = "y ~ x + C(x > 3, levels=[True, 2])"
    design = build_design(formula, _ints().iloc[:0], missing="screen", bounds=bounds)
    assert design.screened == ("C(x > 3, levels=[True, 2])",) == design.screened_levels
    df = _ints().assign(x=lambda d: np.where(d.index < 3, d["x"], np.maximum(d["x"], 4)))  # 3 rows can be False
    res = dpstats.dp_ols(formula, df, 1.0, 1e-6, bounds=bounds, method="ssp", random_state=0)
    assert res.privacy.steps[0].name.startswith("missing-value screen")
    planned = dpstats.plan(formula=formula, bounds=bounds, dtypes=dtypes, n=5000, epsilon=1.0, method="ssp")
    free = dpstats.plan(formula="y ~ x + C(x > 3, levels=[True, False])", bounds=bounds, dtypes=dtypes, n=5000,
                        epsilon=0.98, method="ssp")
    assert planned.to_frame()["privacy"].iloc[-1] == pytest.approx(free.to_frame()["privacy"].iloc[-1], rel=1e-12)


def test_predict_refuses_a_computed_value_outside_the_levels_as_it_does_a_columns():
    """New data are the caller's, not the fit's: a value outside the levels is an error to hear of, for a column
    (UnseenLevelError) and for a computed value alike; a missing value is a MissingDataError in both."""
    df = _frame(off=0).assign(g=lambda d: d["k"].abs())
    res = dpstats.dp_ols(ABS, df, 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=0)
    col = dpstats.dp_ols("y ~ x + C(g, levels=[0, 1, 2])", df, 1.0, 1e-6, bounds={"x": (0, 1), "y": (-1, 4)},
                         method="ssp", random_state=0)
    assert np.isfinite(res.predict(pd.DataFrame({"x": [0.5], "k": [-2.0]}))).all()
    with pytest.raises(UnseenLevelError, match=r"the factor 'C\(np.abs\(k\), levels=\[0, 1, 2\]\)'"):
        res.predict(pd.DataFrame({"x": [0.5, 0.5], "k": [1.0, 3.0]}))
    with pytest.raises(UnseenLevelError, match=r"the factor 'C\(g, levels=\[0, 1, 2\]\)'"):
        col.predict(pd.DataFrame({"x": [0.5, 0.5], "g": [1.0, 3.0]}))
    with pytest.raises(MissingDataError, match="missing values"):
        res.predict(pd.DataFrame({"x": [0.5, 0.5], "k": [1.0, np.nan]}))
    with pytest.raises(MissingDataError, match="missing values"):
        col.predict(pd.DataFrame({"x": [0.5, 0.5], "g": [1.0, np.nan]}))


def test_a_computed_factor_of_integers_is_not_refused_as_singular_by_the_probe():
    """The rank probe draws real values for k, none of which -k maps onto a declared level: every dummy was 0 on
    the probe and the fit was refused as singular by construction.  A computed factor's dummies are indicators of
    values the probe does not know, so they are left out of the check, as comparisons are."""
    df = _frame(off=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols("y ~ x + C(-k, levels=[0, 1, 2, -1, -2])", df, 1.0, 1e-6, bounds=BOUNDS,
                             method="ssp", random_state=0)
    assert len(res.params) == 6


def test_a_spline_inside_c_is_refused_from_the_formula():
    """A spline's basis is a matrix, not a factor's values: refused before any row is read."""
    df = _frame(off=0)
    with pytest.raises(DisallowedExpressionError, match="spline"):
        dpstats.dp_ols("y ~ C(bs(x, knots=[0.5], lower_bound=0, upper_bound=1), levels=[0, 1])", df, 1.0, 1e-6,
                       bounds=BOUNDS, method="ssp", random_state=0)


@pytest.mark.parametrize("expression, levels", [
    ("np.abs(k)", (0, 1, 2)), ("k", (True, 2, 0.0, "a", -3)), ("x > 3", (1, False)), ("x > 3", (True,)),
    ("k * 1", ("a", 1.5, -1)), ("k", (2 ** 53 + 1, 1)),
])
def test_computed_level_codes_follow_the_rule_patsy_is_given_the_values_by(expression, levels):
    """The codes of the computed values (the vectorised path for floats and booleans) are those of the per-value
    rule :func:`~dpstats.formula.language.categorical` maps them by (Python equality; NaN and infinities equal no
    level; a level a float cannot hold exactly goes by the per-value rule)."""
    rng = np.random.default_rng(0)
    k = np.r_[rng.integers(-3, 4, 200).astype(float), np.nan, np.inf, -np.inf, 0.5, 2.0 ** 53]
    df = pd.DataFrame({"k": k, "x": rng.uniform(0, 10, k.size)})
    got = computed_level_codes(ComputedFactor("C(...)", expression, levels), df)
    values = np.asarray(FORMULA_ENV.eval(expression, inner_namespace=df), dtype=object)
    np.testing.assert_array_equal(got, raw_level_codes(pd.Series(values), list(levels)))
