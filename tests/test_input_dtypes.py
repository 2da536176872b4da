"""The input side, as an adversary who controls the data's values and dtypes (session 52's dtype red-team).

The contract (``docs/privacy.md``, ``docs/architecture.md``): messages, warnings and exception types are built from
public facts only; once the data are touched no exception escapes untyped or uncharged; a refusal decided by
private values is charged; a type the caller declares is a public fact, and what it decides is decided from the
declaration, before anything is spent.  The red-team fitted neighbouring data sets (one row changed) through every
method, ``missing="raise"`` and ``"drop"``, in memory, in chunks, from Dask partitions whose dtypes differ from the
schema, through the command line and ``predict()``, over pandas' nullable, categorical, text, Arrow, sparse, date,
period, complex, extreme-integer and narrow-float dtypes and object columns mixing every kind of cell.  The tests
below pin what it found and fixed, and what session 53 found and fixed after it (``predict()`` of factors of dates
with a time zone, periods, intervals and Arrow timestamps; declared levels that no value of the column's dtype can
equal, refused before spending); every test is deterministic (fixed data and seeds), so its false-failure rate is 0.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.cli import main
from dpstats.errors import (
    DataTypeError,
    FormulaError,
    UndeclaredLevelsError,
    UnmatchableLevelsWarning,
    UnseenLevelError,
)
from dpstats.formula import schema as schema_module
from dpstats.formula.schema import parse_formula
from dpstats.rows.sources import CSVSource

BOUNDS = {"x": (0.0, 1.0), "y": (0.0, 5.0)}
LEVELS_FORMULA = "y ~ x + C(g, levels=['a', 'b', 'c'])"


@pytest.fixture()
def csv_path(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    n = 300
    x = rng.uniform(0, 1, n)
    g = np.array(["a", "b", "c"])[np.arange(n) % 3]
    df = pd.DataFrame({"x": x, "g": g, "y": 1 + 2 * x + 0.5 * (np.arange(n) % 3)})
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path


def test_a_csv_column_declared_category_without_categories_is_text(csv_path: Path) -> None:
    """``CSVSource(dtype={"g": "category"})`` (pandas' categorical type without categories; the module's docstring
    lists ``category`` among the text types) failed every chunk's conversion (its categories were None): with
    ``C(g, levels=[...])`` the fit reserved and charged its whole budget, then raised an ``InternalFitError`` ("a
    bug"), whatever the rows held.  It is now text, read against the levels the call declares, and fits as the
    column declared ``str`` does; without declared levels it is refused from the schema, nothing spent."""
    kw = {"epsilon": 2.0, "bounds": BOUNDS, "random_state": 1}
    res = dpstats.dp_ols(LEVELS_FORMULA, CSVSource(str(csv_path), dtype={"g": "category"}, chunksize=50), **kw)
    text = dpstats.dp_ols(LEVELS_FORMULA, CSVSource(str(csv_path), dtype={"g": "str"}, chunksize=50), **kw)
    pd.testing.assert_series_equal(res.params, text.params)
    with pytest.raises(UndeclaredLevelsError, match="would be read from the private data") as caught:
        dpstats.dp_ols("y ~ x + g", CSVSource(str(csv_path), dtype={"g": "category"}), **kw)
    assert caught.value.privacy_spent == (0.0, 0.0)


@pytest.mark.parametrize("declared", ["decimal128(10, 2)[pyarrow]", "int64[nonsense]"])
def test_a_declared_type_pandas_cannot_parse_is_a_typed_refusal(csv_path: Path, declared: str) -> None:
    """pandas refuses some type names with a ``NotImplementedError`` or a ``ValueError`` (not the ``TypeError``
    that was caught): ``CSVSource(dtype=...)`` let it escape untyped.  Decided from the declaration only."""
    with pytest.raises(DataTypeError, match="a type pandas does not know"):
        CSVSource(str(csv_path), dtype={"x": declared})


def _cli(capsys: pytest.CaptureFixture[str], csv_path: Path, dtypes: dict[str, str]) -> tuple[int, str]:
    code = main(["fit", LEVELS_FORMULA, "--data", str(csv_path), "--epsilon", "1", "--seed", "0",
                 "--bounds", json.dumps(BOUNDS), "--dtypes", json.dumps(dtypes)])
    return code, capsys.readouterr().err


def test_a_dtypes_name_numpy_cannot_parse_is_one_line(capsys: pytest.CaptureFixture[str], csv_path: Path) -> None:
    """``--dtypes '{"x": "decimal128(10, 2)[pyarrow]"}'``: numpy refuses the name with a ``ValueError``, which
    escaped the command line as a traceback (only a ``TypeError`` was caught)."""
    code, err = _cli(capsys, csv_path, {"x": "decimal128(10, 2)[pyarrow]"})
    assert code == 2 and err.startswith("error: --dtypes") and "numpy type name" in err and "Traceback" not in err


@pytest.mark.parametrize("declared", ["datetime64[ns]", "complex128", "timedelta64[s]"])
def test_a_dtypes_type_no_field_can_take_is_refused_as_the_declaration(capsys: pytest.CaptureFixture[str],
                                                                       csv_path: Path, declared: str) -> None:
    """``--dtypes`` with a date, complex or duration type was refused as "cannot read ... as CSV: its header is not
    text, or the file cannot be split into lines", blaming a file that was fine; the refusal is the declaration's
    (as ``CSVSource`` says), and now says so."""
    code, err = _cli(capsys, csv_path, {"x": declared})
    assert code == 2 and err.startswith("error: --dtypes: column 'x' is declared as ")
    assert "cannot always be read as" in err and "cannot read" not in err and "Traceback" not in err


@pytest.mark.parametrize("formula", ["y ~ x + s", "s ~ x", "y ~ x + I(s * 1)"])
@pytest.mark.parametrize("chunksize", [None, 25])
def test_a_sparse_boolean_column_is_read_as_the_boolean_column(formula: str, chunksize: int | None) -> None:
    """pandas' sparse booleans (``pd.arrays.SparseArray(mask)``, what ``pd.get_dummies(..., sparse=True)`` gives)
    were refused from the dtype ("patsy could not evaluate the design", or "the response 's' must be numeric (its
    dtype is object)"), while sparse numbers fitted as numbers.  A sparse boolean is now the boolean column: the
    same fit, released value for released value."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 200)
    mask = x + rng.normal(0, 0.3, 200) > 0.5
    dense = pd.DataFrame({"x": x, "s": mask, "y": 1 + 2 * x + mask})
    sparse = dense.assign(s=pd.arrays.SparseArray(mask, fill_value=False))
    bounds = {"x": (0.0, 1.0), "y": (0.0, 4.0), **({"I(s * 1)": (0.0, 1.0)} if "I(" in formula else {})}
    kw = {"epsilon": 2.0, "bounds": bounds, "random_state": 5, "chunksize": chunksize, "method": "ssp"}
    pd.testing.assert_series_equal(dpstats.dp_ols(formula, sparse, **kw).params,
                                   dpstats.dp_ols(formula, dense, **kw).params)


def _levels_frame(kind: str, row: object | None) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 240
    x = rng.uniform(0, 1, n)
    g = np.array(["a", "b", "c"])[np.arange(n) % 3]
    column = {"object": pd.Series(g, dtype=object), "category": pd.Categorical(g, categories=["a", "b", "c", "d"]),
              "string": pd.array(g, dtype="string")}[kind]
    df = pd.DataFrame({"x": x, "g": column, "y": 1 + 2 * x + (np.arange(n) % 3 == 1)})
    if row is not None:
        df.loc[7, "g"] = row
    return df


@pytest.mark.parametrize("kind", ["object", "category", "string"])
@pytest.mark.parametrize("missing", ["raise", "drop"])
def test_a_fit_leaves_the_callers_frame_as_it_was(kind: str, missing: str) -> None:
    """``C(g, levels=[...])`` on a DataFrame that holds only the formula's variables assigned the prepared column
    (the levels as objects) into the caller's own DataFrame where no other step had copied it, which happened only
    when no row was missing or outside the levels: after the fit an object column had become text and a
    categorical one text (its declared categories lost), or not, as one row decided.  A later fit on the same frame
    (``y ~ x + g``, the categories then undeclared) was refused at no cost on one neighbour and fitted on the other:
    a free one-bit answer about one row.  The fit now leaves the caller's frame as it was, on both neighbours."""
    formula = "y ~ x + C(g, levels=['a', 'b', 'c'])"
    kw = {"epsilon": 2.0, "bounds": {"x": (0.0, 1.0), "y": (0.0, 4.0)}, "random_state": 2, "missing": missing}
    for row in (None, np.nan):
        df = _levels_frame(kind, row)
        before = df.copy(deep=True)
        dpstats.dp_ols(formula, df, **kw)
        pd.testing.assert_frame_equal(df, before, check_exact=True)
    if kind == "category":  # the later fit: the same outcome on both neighbours (the categories are declared)
        for row in (None, np.nan):
            df = _levels_frame(kind, row)
            dpstats.dp_ols(formula, df, **kw)
            assert dpstats.dp_ols("y ~ x + g", df, **kw).params.index.tolist()[1:4] == ["g[T.b]", "g[T.c]", "g[T.d]"]


def _dated_frame(kind: str) -> tuple[pd.DataFrame, list[object]]:
    """240 rows whose factor ``t`` (three values) has the dtype ``kind``, and its three levels."""
    rng = np.random.default_rng(6)
    n = 240
    k = np.arange(n) % 3
    x = rng.uniform(0, 1, n)
    days = pd.to_datetime("2020-01-01") + pd.to_timedelta(k, unit="D")
    periods = pd.period_range("2020-01", periods=3, freq="M")
    intervals = pd.arrays.IntervalArray.from_breaks([0, 1, 2, 3])
    column, levels = {
        "tz": (days.tz_localize("UTC"), [pd.Timestamp(f"2020-01-0{i + 1}", tz="UTC") for i in range(3)]),
        "period": (periods[k], list(periods)),
        "interval": (intervals[k], list(intervals)),
        "arrow-timestamp": (pd.Series(days).astype("timestamp[ns][pyarrow]"),
                            [pd.Timestamp(f"2020-01-0{i + 1}") for i in range(3)]),
    }[kind]
    return pd.DataFrame({"x": x, "t": column, "y": 1 + 2 * x + 0.5 * k}), levels


@pytest.mark.parametrize("kind", ["tz", "period", "interval", "arrow-timestamp"])
def test_predict_reads_every_factor_with_levels_the_fit_read(kind: str) -> None:
    """A fit read a factor of dates with a time zone, of periods, of intervals or of Arrow timestamps against its
    declared levels (``levels={"t": [...]}``), and every ``predict()`` of that model then failed with a
    ``FormulaError`` ("cannot evaluate the model's design on newdata"), whatever the new rows held: patsy cannot read
    those dtypes.  New data are now matched to the fitted levels by the rule the fit used; a value outside them is
    an ``UnseenLevelError`` naming the variable and the levels."""
    df, levels = _dated_frame(kind)
    kw = {"epsilon": 4.0, "bounds": {"x": (0.0, 1.0), "y": (-1.0, 5.0)}, "random_state": 1, "method": "ssp"}
    res = dpstats.dp_ols("y ~ x + t", df, levels={"t": levels}, **kw)
    expected = res.params["Intercept"] + res.params["x"] * df["x"].head(6).to_numpy()
    expected[[1, 2, 4, 5]] += res.params.iloc[1:3].to_numpy()[[0, 1, 0, 1]]  # rows 1, 2, 4, 5 hold levels 2 and 3
    np.testing.assert_allclose(res.predict(df.head(6)).to_numpy(), expected)
    as_objects = df.head(6).assign(t=df["t"].head(6).astype(object))
    np.testing.assert_allclose(res.predict(as_objects).to_numpy(), expected)
    with pytest.raises(UnseenLevelError, match="a value of the variable 't' that the fitted model does not know"):
        res.predict(df.head(6).assign(t=pd.Series(["elsewhere"] * 6, dtype=object)))


def _levels_fit(column: object, levels: list[object]) -> dpstats.results.DPRegressionResults:
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 1, 90)
    df = pd.DataFrame({"x": x, "t": column, "y": 1 + 2 * x})
    return dpstats.dp_ols("y ~ x + t", df, epsilon=2.0, bounds={"x": (0.0, 1.0), "y": (0.0, 4.0)}, random_state=3,
                          method="ssp", levels={"t": levels})


_ON_DAYS = pd.Series(pd.to_datetime("2020-01-01") + pd.to_timedelta(np.arange(90) % 2, unit="D"))


@pytest.mark.parametrize(("column", "levels", "advice"), [
    (np.resize(np.array([0.1, 0.2], dtype=np.float32), 90), [0.1, 0.2], r"float\(np\.float32\(0\.1\)\)"),
    (pd.array(np.resize(np.array([0.1, 0.2], dtype=np.float32), 90), dtype="Float32"), [0.1, 0.2], "float32 numbers"),
    (_ON_DAYS.dt.tz_localize("UTC"), [pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-02")],
     r"pd\.Timestamp\('2020-01-01', tz='UTC'\)"),
    (_ON_DAYS, ["2020-01-01", "2020-01-02"], "timestamps without a time zone"),
    (pd.Series(pd.period_range("2020-01", periods=2, freq="M")[np.arange(90) % 2]), ["2020-01", "2020-02"],
     r"pd\.Period\('2020-01', freq='M'\)"),
    (np.resize(np.array([0.1, 0.5], dtype=np.float32), 90), [0.5, 0.1], r"0\.1 is held as 0\.10000000149011612"),
    (pd.arrays.SparseArray(np.resize(np.array([0.1, 0.5], dtype=np.float32), 90)), [0.5, 0.1],
     r"0\.1 is held as 0\.10000000149011612"),
    (np.resize(np.array([0, 1], dtype=np.int8), 90), [-300, 300], "integers of dtype int8 only"),
    (np.arange(90) % 2 == 1, ["False", "True"], "only False and True"),
])
def test_levels_no_value_of_the_dtype_can_equal_are_refused_before_spending(column: object, levels: list[object],
                                                                             advice: str) -> None:
    """Declared levels that no value of the column's dtype can equal (timestamps without a time zone, or text, for
    dates with one; text for dates or periods; 300 for int8; "True" for booleans), or, for a float32 column, a
    number it rounds (0.1, whose nearest float32 is 0.10000000149011612) put every row outside the levels (every row
    holding the column's 0.1): the fit spent its budget on the missing-value screen and then refused (a charged
    ``MissingDataError``), or dropped those rows.  Decided from the declaration and the dtype (the schema), it is now
    refused before anything is spent, saying what to declare.  (A level no row can hold beside others that rows
    can, 0.5 among an integer column's levels, is a declared level without rows, and still fits, with
    ``UnmatchableLevelsWarning``.)  A sparse float32 column is refused as a dense one is: it went the charged path
    (session 54)."""
    with pytest.raises(FormulaError, match="which no value of the column's dtype") as caught:
        _levels_fit(column, levels)
    assert caught.value.privacy_spent == (0.0, 0.0)
    assert "Nothing was read or spent" in str(caught.value) and re.search(advice, str(caught.value))


def test_levels_spelled_as_the_narrow_dtype_holds_them_fit_and_predict() -> None:
    """The advice of the refusal above works: float32 levels declared as float32 values fit and predict."""
    column = np.resize(np.array([0.1, 0.2], dtype=np.float32), 90)
    res = _levels_fit(column, [float(np.float32(0.1)), float(np.float32(0.2))])
    assert np.isfinite(res.predict(pd.DataFrame({"x": [0.5, 0.5], "t": column[:2]})).to_numpy()).all()


def test_a_csv_column_declared_float32_refuses_levels_it_rounds(tmp_path: Path) -> None:
    """The same from a CSV file's declared types (public): ``CSVSource(dtype={"t": "float32"})`` with
    ``C(t, levels=[0.1, 0.2])`` read every field 0.1 as 0.10000000149011612, outside the levels, and refused after
    spending (``missing="raise"``) or dropped every row; it is refused from the declaration.  Declared float64 (the
    default), the same file fits."""
    x = np.linspace(0, 1, 90)
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": x, "t": np.resize([0.1, 0.2], 90), "y": 1 + x}).to_csv(path, index=False)
    kw = {"epsilon": 1.0, "bounds": {"x": (0.0, 1.0), "y": (0.0, 2.0)}, "random_state": 0, "method": "ssp"}
    for missing in ("raise", "drop"):
        with pytest.raises(FormulaError, match="no value of the column's dtype float32 can equal") as caught:
            dpstats.dp_ols("y ~ x + C(t, levels=[0.1, 0.2])", CSVSource(str(path), dtype={"t": "float32"}),
                           missing=missing, **kw)
        assert caught.value.privacy_spent == (0.0, 0.0)
    res = dpstats.dp_ols("y ~ x + C(t, levels=[0.1, 0.2])", CSVSource(str(path), dtype={"t": "float64"}), **kw)
    assert np.isfinite(res.params.to_numpy()).all()


def test_a_level_a_float32_column_rounds_onto_another_declared_level_still_fits() -> None:
    """The refusal of a level a float32 column rounds (above) is for the rows holding its nearest value, which would
    be outside the levels; where that nearest value is itself a declared level, those rows are inside, and the
    rounded level is a level no row holds (as 0.5 among an integer column's levels): 16777217, whose nearest float32
    is 16777216, beside 16777216 was refused although the fit read every row.  Deterministic."""
    column = np.resize(np.array([16777216.0, 1.0], dtype=np.float32), 90)
    with pytest.warns(UnmatchableLevelsWarning, match="include 16777217, which no value of the column's dtype"):
        res = _levels_fit(column, [16777217, 16777216, 1])
    assert np.isfinite(res.params.to_numpy()).all()
    with pytest.raises(FormulaError, match="include 16777217, which no value of the column's dtype float32"):
        _levels_fit(column, [16777217, 1])


@pytest.mark.parametrize(("cells", "levels"), [
    ([pd.Timestamp("2020-01-01").to_pydatetime(), pd.Timestamp("2020-01-02").to_pydatetime()],
     ["2020-01-01", "2020-01-02"]),
    ([pd.Period("2020-01", freq="M"), pd.Period("2020-02", freq="M")], ["2020-01", "2020-02"]),
    ([pd.Timedelta(0).to_pytimedelta(), pd.Timedelta(hours=1).to_pytimedelta()], ["0", "1h"]),
])
@pytest.mark.parametrize("as_array", [False, True])
def test_a_dict_column_of_dates_is_objects_whatever_one_cell_holds(cells: list[object], levels: list[str],
                                                                   as_array: bool) -> None:
    """A list (or an object array) in a dict of columns is an object column whatever its cells hold: pandas, building
    the frame, inferred dates, periods or durations from cells that all were such, and objects where one cell was
    text, so that the refusal of text levels for a column of dates, made from the dtype at no cost, came on one
    neighbour only (a one-bit oracle on one row); the neighbours now meet the same rule (rows outside the declared
    levels, counted by the charged screen).  Deterministic."""
    n = 40
    x = list(np.linspace(0.0, 1.0, n))
    outcomes = []
    for other in (cells[1], "elsewhere"):
        column = [cells[i % 2] for i in range(n)]
        column[0] = other
        data = {"x": x, "t": np.array(column, dtype=object) if as_array else column, "y": [1.0 + v for v in x]}
        try:
            dpstats.dp_ols("y ~ x + t", data, levels={"t": levels}, epsilon=1.0, bounds={"x": (0, 1), "y": (0, 2)},
                           random_state=0, method="ssp")
            outcomes.append(("fit", None))
        except dpstats.errors.DPStatsError as exc:
            outcomes.append((type(exc).__name__, exc.privacy_spent))
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][1] != (0.0, 0.0)


_SOME_UNMATCHABLE = [
    (np.resize(np.array([1, 2], dtype=np.int8), 90), [1, 2, 300], "300", "integers of dtype int8 only"),
    (np.resize(np.array([1, 2], dtype=np.int64), 90), [1, 2, 0.5, 2.5], "0.5, 2.5", "integers of dtype int64"),
    (np.resize(np.array([1, 2], dtype=np.uint8), 90), [-1, 1, 2], "-1", "integers of dtype uint8 only"),
    (np.arange(90) % 2 == 1, [False, True, 2], "2", "only False and True"),
    (pd.array(np.resize([1, 2], 90), dtype="Int8"), [1, 2, 300], "300", "integers of dtype Int8"),
    (pd.arrays.SparseArray(np.resize(np.array([1, 2], dtype=np.int8), 90)), [1, 2, 300], "300", "int8"),
]


@pytest.mark.parametrize(("column", "levels", "named", "advice"), _SOME_UNMATCHABLE)
def test_declared_levels_some_of_which_no_value_of_the_dtype_can_equal_warn(column: object, levels: list[object],
                                                                           named: str, advice: str) -> None:
    """Declared levels of which some, not all, can never equal a value of the column's dtype (300 or 0.5 for an
    integer column of int8, -1 for an unsigned one, 2 for booleans) fitted without a word: no row can hold such a
    level, so the data can never inform its coefficient (a reference level that no row holds leaves the other
    levels' columns adding up to the intercept).  They now draw ``UnmatchableLevelsWarning``, naming those declared
    levels (public), decided from the declaration and the dtype on the zero-row schema, and the fit runs.
    Deterministic."""
    with pytest.warns(UnmatchableLevelsWarning, match=rf"levels for 't' include {re.escape(named)}, which no value "
                                                      "of the column's dtype") as caught:
        res = _levels_fit(column, levels)
    assert np.isfinite(res.params.to_numpy()).all()
    message = str(next(w.message for w in caught if w.category is UnmatchableLevelsWarning))
    assert advice in message and "the fit runs" in message
    schema = pd.DataFrame({"x": np.zeros(90), "t": column, "y": np.zeros(90)}).iloc[:0]  # the schema alone
    for _ in range(2):  # every parse warns (a parse that can warn is not kept by the refit memo)
        with pytest.warns(UnmatchableLevelsWarning, match="which no value of the column's dtype") as again:
            parse_formula("y ~ x + t", schema, bounds=None, levels={"t": levels}, missing="raise")
        assert [str(w.message) for w in again if w.category is UnmatchableLevelsWarning] == [message]


def test_levels_every_value_of_the_dtype_can_equal_do_not_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    """Levels a column can hold draw no warning (1.0 for an integer column: the rows' 1 equals it), and such a
    parse is kept by the refit memo.  Deterministic."""
    monkeypatch.setattr(schema_module, "_PARSES", type(schema_module._PARSES)())
    schema = pd.DataFrame({"x": np.zeros(0), "t": np.zeros(0, dtype=np.int8), "y": np.zeros(0)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for levels in ([1, 2, 3], [1.0, 2.0, -128, 127], [True, 2]):
            parse_formula("y ~ x + t", schema, bounds=None, levels={"t": levels}, missing="raise")
    assert len(schema_module._PARSES) == 3
