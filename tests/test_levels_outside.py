"""A factor value outside the declared levels makes its row a public null row, as a missing value does: counted by
the charged missing-value screen with ``missing="raise"`` (refusing when many rows are affected), dropped with
``missing="drop"``; the same row map in memory and in chunks (docs/privacy.md, "Why a non-finite value, or a value
outside the declared levels, is mapped and not refused").

False-failure rates: the refusals below are of n/2 = 1000 affected rows against a refusal level of at most 656 with
noise of standard deviation at most 71 rows (below 1e-6); the fits with 5 affected rows pass unless the noisy count
exceeds the refusal level, which a data set with none does with probability FALSE_REFUSAL = 1e-6.  Every fit has a
fixed seed, so each test is deterministic.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import MissingDataError
from dpstats.formula.design import build_design
from dpstats.formula.schema import can_produce_null_row, may_leave_levels
from dpstats.privacy.missing_screen import MissingValueScreen
from dpstats.rows.sources import DataFrameSource

BOUNDS = {"x": (0.0, 1.0), "y": (-1.0, 3.0)}


def _frame(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    g = rng.choice(["ns", "s"], n)
    y = np.clip(1 + x + 0.5 * (g == "s") + rng.normal(0, 0.2, n), -1, 3)
    return pd.DataFrame({"y": y, "x": x, "g": g})


def test_a_misspelled_level_in_half_the_rows_is_refused_by_the_charged_screen():
    """levels ['NS', 's'] for data spelled 'ns': before, every 'ns' row was silently read as 'NS' (the first level)
    and the fit ran; now those rows are null rows, the screen counts them and refuses, naming the factor."""
    df = _frame()
    accountant = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(MissingDataError, match="a missing value or a value outside the declared levels") as info:
        dpstats.dp_ols("y ~ x + g", df, 1.0, 1e-6, bounds=BOUNDS, levels={"g": ["NS", "s"]}, method="dpsgd",
                       random_state=1, accountant=accountant)
    screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=False)  # dpsgd: the Laplace screen
    assert info.value.privacy_spent == (pytest.approx(screen.parameter), 0.0)
    assert accountant.spent[0] == pytest.approx(screen.parameter)
    message = str(info.value)
    assert "declared levels a value can fall outside: g" in message and "'ns'" not in message


def test_declaring_fewer_levels_is_refused_with_how_to_merge_them():
    """A survey user who declares the common levels only, expecting the rare ones to be merged into them (session
    56's new-user check), is told that declaring fewer levels does not merge them, and how to merge: a public mapping
    before the fit.  The message names no value."""
    rng = np.random.default_rng(2)
    df = _frame().assign(g=rng.choice(["a", "b", "rare1", "rare2"], 2000, p=[0.5, 0.3, 0.1, 0.1]))
    with pytest.raises(MissingDataError, match="declaring fewer levels does not merge the others into them") as info:
        dpstats.dp_ols("y ~ x + C(g)", df, 1.0, 1e-6, bounds=BOUNDS, levels={"g": ["a", "b"]}, random_state=1)
    message = str(info.value)
    assert "map them to a merged level with a public rule before the fit" in message and "rare1" not in message


def test_an_int_column_with_undeclared_years_is_screened_and_refused():
    """Every column an integer (no dtype can hold a missing value): before, no screen ran and two of the four years
    were read as the first declared year; now ``C(year, levels=[...])`` can produce a null row, so the screen
    runs, counts the rows of the undeclared years and refuses."""
    rng = np.random.default_rng(2)
    n = 2000
    df = pd.DataFrame({"y": rng.integers(0, 10, n), "x": rng.integers(0, 10, n),
                       "year": np.repeat([2000, 2001, 2002, 2003], n // 4)})
    formula = "y ~ x + C(year, levels=[2000, 2001])"
    bounds = {"x": (0, 9), "y": (0, 9)}
    design = build_design(formula, df.iloc[:0], missing="screen", bounds=bounds)
    assert design.screened == ("year",)
    assert design.screened_levels == ("year",)
    with pytest.raises(MissingDataError, match="outside the declared levels") as info:
        dpstats.dp_ols(formula, df, 1.0, 1e-6, bounds=bounds, method="ssp", random_state=3)
    assert 0 < info.value.privacy_spent[0] < 1.0 and "year" in str(info.value)


def test_few_rows_outside_the_levels_are_the_null_rows_of_missing_drop():
    """5 rows outside the declared levels: the fit runs (charged screen) and its design marks exactly those rows as
    null rows, as missing='drop' does; the non-private reference drops them."""
    df = _frame()
    off = df.index[:5]
    df.loc[off, "g"] = "NS"
    kw = {"bounds": BOUNDS, "levels": {"g": ["ns", "s"]}}
    screened = build_design("y ~ x + g", df, missing="screen", **kw)
    dropped = build_design("y ~ x + g", df, missing="null", **kw)
    np.testing.assert_array_equal(screened.X, dropped.X)
    assert np.flatnonzero(np.isnan(screened.X).any(axis=1)).tolist() == off.tolist()
    res = dpstats.dp_ols("y ~ x + g", df, 1.0, 1e-6, method="ssp", random_state=0, **kw)
    assert res.privacy.steps[0].name.startswith("missing-value screen") and res.nobs == len(df)
    ols = dpstats.dp_ols("y ~ x + g", df, float("inf"), 1e-6, method="ols", missing="drop", **kw)
    want = dpstats.dp_ols("y ~ x + g", df.drop(off), float("inf"), 1e-6, method="ols", **kw)
    assert ols.nobs == len(df) - 5
    np.testing.assert_allclose(ols.params, want.params, rtol=1e-12)


def test_missing_drop_spends_no_screen_on_rows_outside_the_levels():
    """missing='drop' in a private fit: such rows are public null rows and no screen runs (nothing spent on one)."""
    df = _frame()
    df.loc[:999, "g"] = "NS"
    res = dpstats.dp_ols("y ~ x + g", df, 1.0, 1e-6, bounds=BOUNDS, levels={"g": ["ns", "s"]}, method="ssp",
                         missing="drop", random_state=0)
    assert not any(s.name.startswith("missing-value screen") for s in res.privacy.steps)
    missing = df.assign(g=df["g"].where(df["g"] != "NS", None))
    same = dpstats.dp_ols("y ~ x + g", missing, 1.0, 1e-6, bounds=BOUNDS, levels={"g": ["ns", "s"]}, method="ssp",
                          missing="drop", random_state=0)
    np.testing.assert_array_equal(res.params, same.params)  # the rows outside the levels are its null rows


def test_a_categorical_with_every_category_declared_cannot_leave_its_levels():
    """Public facts decide: a categorical whose categories are all declared (or a bool with both values declared)
    cannot hold a value outside its levels; a text or int column with declared levels, a categorical with an
    undeclared category, can."""
    assert not may_leave_levels(pd.CategoricalDtype(["a", "b"]), ["b", "a", "c"])
    assert may_leave_levels(pd.CategoricalDtype(["a", "b", "z"]), ["a", "b"])
    assert not may_leave_levels(np.dtype(bool), [False, True]) and may_leave_levels(np.dtype(bool), [True])
    assert may_leave_levels(np.dtype(object), ["a"]) and may_leave_levels(np.dtype("int64"), [1, 2])
    assert not may_leave_levels(np.dtype(object), None)
    assert not can_produce_null_row(np.dtype(bool), [False, True]) and can_produce_null_row(np.dtype("int64"), [1])
    rng = np.random.default_rng(4)
    n = 300
    df = pd.DataFrame({"y": rng.integers(0, 3, n), "g": pd.Categorical(rng.choice(["a", "b"], n))})
    design = build_design("y ~ g", df.iloc[:0], missing="screen", bounds={"y": (0, 2)}, levels={"g": ["a", "b"]})
    assert design.screened == ("g",) and design.screened_levels == ()  # screened for its NaN code only


def test_memory_and_chunks_map_rows_outside_the_levels_alike():
    df = _frame()
    df.loc[[3, 700, 1500], "g"] = "S"
    kw = {"bounds": BOUNDS, "levels": {"g": ["ns", "s"]}, "method": "ssp", "random_state": 5}
    memory = dpstats.dp_ols("y ~ x + g", df, 1.0, 1e-6, **kw)
    chunked = dpstats.dp_ols("y ~ x + g", DataFrameSource(df, 450), 1.0, 1e-6, **kw)
    np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-9)
    assert [s.name for s in chunked.privacy.steps] == [s.name for s in memory.privacy.steps]
    as_missing = df.assign(g=df["g"].where(df["g"] != "S", None))
    np.testing.assert_allclose(dpstats.dp_ols("y ~ x + g", as_missing, 1.0, 1e-6, **kw).params, memory.params,
                               rtol=1e-12)  # the rows outside the levels are null rows, in memory and in chunks


def test_fit_sets_the_screen_share_aside_as_plan_does_for_an_int_factor():
    """plan() reads every factor with declared levels as a categorical, which can hold a missing value, so it sets
    the screen's share aside; the fit of integer columns with ``C(year)`` over declared levels now does too (before:
    it spent the full epsilon on the method, unlike its plan), even where every year is declared."""
    rng = np.random.default_rng(6)
    n = 3000
    df = pd.DataFrame({"y": rng.integers(0, 10, n), "x": rng.integers(0, 10, n), "year": rng.integers(1, 3, n)})
    kw = {"bounds": {"x": (0, 9), "y": (0, 9)}, "levels": {"year": [1, 2]}, "method": "ssp"}
    res = dpstats.dp_ols("y ~ x + C(year)", df, 1.0, 1e-6, random_state=0, **kw)
    assert res.privacy.steps[0].name.startswith("missing-value screen")
