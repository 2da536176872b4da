"""Values that are not numbers, where the input has no numeric type of its own (dpstats.numbers).

Before (s28 review): a Python list or an object array holding text, pd.NA, pd.NaT or a complex number, a CSV
field that did not read as a number in a column read as numbers, and a list in a dict of columns used as a number
(numpy inferred text or objects from one element), refused the fit at no cost: a release decided by
one row's element type, on one neighbour only.  Now each element is read by itself, a non-number is a missing
value, and the charged missing-value screen counts its row.
"""

from __future__ import annotations

import collections
import math
import warnings
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DataTypeError, DPStatsError
from dpstats.numbers import number_or_missing, numbers_or_missing, numeric_columns
from dpstats.rows.sources import CSVSource

BOUNDS = {"x": (0.0, 1.0), "z": (0.0, 1.0), "y": (-3.0, 5.0)}


@pytest.mark.parametrize("value, expected", [
    (True, 1.0), (np.bool_(False), 0.0), (3, 3.0), (np.int8(-4), -4.0), (np.float32(0.5), 0.5), (2.5, 2.5),
    (Fraction(1, 4), 0.25), (Decimal("1.5"), 1.5), (10**400, math.inf), (-(10**400), -math.inf),
    ("2.5", 2.5), (" 3 ", 3.0), ("-inf", -math.inf), (b"7", 7.0), ("1e400", math.inf),
])
def test_numbers_are_read_as_their_float(value, expected):
    assert number_or_missing(value) == expected


@pytest.mark.parametrize("value", [None, pd.NA, pd.NaT, np.nan, "abc", "", "1,5", 1 + 2j, np.complex128(1),
                                   pd.Timestamp("2020-01-01"), np.datetime64("2020-01-01"), [1], {"a": 1}, object()])
def test_everything_else_is_missing(value):
    assert math.isnan(number_or_missing(value))


def test_arrays_keep_their_shape_and_frames_their_numeric_columns():
    assert numbers_or_missing([[1, "2"], [None, "x"]]).tolist()[0] == [1.0, 2.0]
    assert numbers_or_missing(pd.Series(["4", pd.NA], dtype="string")).shape == (2,)
    frame = pd.DataFrame({"a": [1, 2], "b": ["3", "?"], "c": pd.Categorical(["5", "6"])})
    out = numeric_columns(frame)
    assert out["a"].dtype == np.int64 and out["b"].tolist()[0] == 3.0 and math.isnan(out["b"].iloc[1])
    assert out["c"].tolist() == [5.0, 6.0] and frame["b"].tolist() == ["3", "?"]  # the caller's frame is unchanged


def _xy(n: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    return X, 1 + 2 * X[:, 0] - X[:, 1] + rng.normal(0, 0.3, n)


def test_arrays_read_a_list_element_by_element():
    X, y = _xy()
    as_list, with_nan = X.tolist(), X.copy()
    as_list[3][1], with_nan[3, 1] = "SECRET", np.nan
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0,
               intercept=False, column_names=["x1", "x2"])
    a, b = dpstats.dp_ols_arrays(as_list, list(y), **fit), dpstats.dp_ols_arrays(with_nan, y, **fit)
    assert a.params.equals(b.params) and "SECRET" not in str(a.summary())
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(DataTypeError, match="dtype is object"):  # an object array: refused from its type, for free
        dpstats.dp_ols_arrays(X.astype(object), y, **{**fit, "random_state": None}, accountant=acct)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("dtype", ["Float64", "Int64", "boolean"])
def test_arrays_read_a_missing_value_of_a_pandas_nullable_type_as_missing(dtype):
    """A DataFrame or Series of pandas' nullable numbers or booleans holding pd.NA: the missing value is NaN, which
    the charged screen counts (before: refused at no cost, "X must be a numeric array", on one neighbour only)."""
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.integers(0, 2, 600), "b": rng.integers(0, 2, 600)}).astype(dtype)
    y = pd.Series(rng.integers(0, 2, 600) + X["a"].astype(float).to_numpy(), dtype="Float64")
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(0, 2), method="ssp", random_state=0,
               intercept=False)
    Xm, ym = X.copy(), y.copy()
    Xm.iloc[4, 0], ym.iloc[9] = pd.NA, pd.NA
    Xn = X.astype(float).copy()
    Xn.iloc[4, 0] = np.nan
    yn = y.astype(float).to_numpy().copy()
    yn[9] = np.nan
    a, b = dpstats.dp_ols_arrays(Xm, ym, **fit), dpstats.dp_ols_arrays(Xn, yn, **fit)
    assert a.params.equals(b.params) and a.privacy.steps[0].name.startswith("missing-value screen")


def test_arrays_refuse_a_text_series_from_its_dtype():
    """A Series of text (pandas' string dtype) or a categorical is refused from its dtype, whatever its cells hold
    (before: cells that all read as numbers fitted, one that did not was refused, at no cost)."""
    X, y = _xy()
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0,
               intercept=False)
    for series in (pd.Series(y).astype(str).astype("string"), pd.Series(y).astype("category")):
        with pytest.raises(DataTypeError, match="must be numeric"):
            dpstats.dp_ols_arrays(X, series, **fit)


def test_a_text_response_is_refused_with_how_to_code_it_as_0_1():
    """A text response (R's ``biopsy``: class is "benign" or "malignant") is refused from its dtype with a recipe that
    works, in Python and on the command line (s44 new-user check); the advice names the column, never a value."""
    data = pd.DataFrame({"outcome": ["benign", "malignant"] * 100, "x": np.linspace(0, 1, 200)})
    with pytest.raises(DataTypeError, match="the response 'outcome' must be numeric") as info:
        dpstats.dp_ols("outcome ~ x", data, 1.0, 1e-6, bounds={"x": (0, 1)}, method="ssp")
    text = str(info.value)
    assert "df['outcome_01'] = df['outcome'] == 'LEVEL'" in text and "--dtypes" in text and "benign" not in text
    coded = data.assign(outcome_01=data["outcome"] == "malignant")
    res = dpstats.dp_ols("outcome_01 ~ x", coded, 1.0, 1e-6, bounds={"x": (0, 1)}, method="ssp", random_state=0)
    assert res.nobs == 200 and np.isfinite(res.params).all()


def test_a_two_valued_response_with_missing_values_is_refused_with_a_recipe_that_keeps_them_missing():
    """A column of True, False and missing values (what ``.map({...: True, ...: False})`` gives where a value is
    missing: dtype object) is refused from its dtype; the advice's first recipe (``== 'LEVEL'``) would code a missing
    value as False, so the message says so and gives pandas' nullable boolean, which keeps it missing for
    ``missing="drop"`` (s52 new-user check: HSAUR's schizophrenia2, 16 of 220 visits missing)."""
    rng = np.random.default_rng(5)
    x = np.linspace(0, 10, 220)
    flags = pd.Series(rng.random(220) < 0.3).astype(object)
    flags[::14] = np.nan
    data = pd.DataFrame({"present": flags, "month": x})
    with pytest.raises(DataTypeError, match="the response 'present' must be numeric") as info:
        dpstats.dp_ols("present ~ month", data, 1.0, 1e-6, bounds={"month": (0, 10)}, method="ssp", missing="drop")
    text = str(info.value)
    assert "a missing value becomes False" in text and "df['present'].astype('boolean')" in text
    assert ".map({'LEVEL': True, 'OTHER': False}).astype('boolean')" in text
    coded = data.assign(present=data["present"].astype("boolean"))
    res = dpstats.dp_ols("present ~ month", coded, 1.0, 1e-6, bounds={"month": (0, 10)}, method="ssp",
                         missing="drop", random_state=0)
    assert res.nobs == 220 and np.isfinite(res.params).all()
    assert "missing='drop'" in str(res.summary())


def test_arrays_of_integer_columns_pay_no_screen():
    """A DataFrame whose columns are all numpy integers cannot hold a missing value (its dtypes say so): no screen,
    so the method gets the whole budget.  One float column brings the screen back."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.integers(0, 5, 800), "b": rng.integers(0, 5, 800)})
    y = (X.a - X.b + rng.integers(-2, 3, 800)).to_numpy()
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 5), y_bounds=(-8, 8), method="ssp", random_state=0,
               intercept=False)
    steps = dpstats.dp_ols_arrays(X, y, **fit).privacy.steps
    assert not any(s.name.startswith("missing-value screen") for s in steps)
    steps = dpstats.dp_ols_arrays(X.astype({"b": float}), y, **fit).privacy.steps
    assert steps[0].name.startswith("missing-value screen")


def _write_csv(path: Path, X: np.ndarray, y: np.ndarray, first_x: str) -> str:
    lines = ["x,z,y"] + [f"{a!r},{b!r},{c!r}" for (a, b), c in zip(X.tolist(), y.tolist(), strict=True)]
    lines[1] = f"{first_x}," + lines[1].split(",", 1)[1]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _slope_or_refusal(fit):
    """A fit as a mechanism for the audit: its first slope, or 1e9 where it is refused."""
    def run(data, rng: np.random.Generator) -> float:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return float(fit(data, rng))
        except DPStatsError:
            return 1e9
    return run


def test_a_dict_of_lists_takes_its_types_from_the_declarations():
    """A list's type would be numpy's inference from its elements (one string makes it text, one None objects),
    so a list is text where the call declares text levels for it and numbers otherwise."""
    X, y = _xy(400)
    g = ["a" if v > 0.5 else "b" for v in X[:, 1]]
    formula = "y ~ x + C(g, levels=['a', 'b'])"

    def fit(x: list, groups: list) -> pd.Series:
        return dpstats.dp_ols(formula, {"x": x, "g": groups, "y": list(y)}, 1.0, 1e-6, method="ssp",
                              bounds={"x": BOUNDS["x"], "y": BOUNDS["y"]}, random_state=0).params

    reference = fit([*X[:3, 0], None, *X[4:, 0]], g)
    for value in ("SECRET", pd.NA, 1 + 2j, [1]):
        assert fit([*X[:3, 0], value, *X[4:, 0]], g).equals(reference)
    assert fit(list(X[:, 0]), [*g[:7], 7, *g[8:]]).notna().all()  # a number among text levels: read as level 'a'


COLLECTIONS = {"deque": collections.deque, "UserList": collections.UserList, "generator": lambda v: iter(list(v)),
               "tuple": tuple}


@pytest.mark.parametrize("kind", list(COLLECTIONS))
def test_a_dict_column_of_any_python_collection_is_read_as_a_list(kind):
    """A column given as a deque, a UserList, a generator (a Python collection without a type of its own) is read
    element by element, exactly as a list: neighbours with 0.5, text or None in one cell of x fit alike, spending
    the same, and equal to the list's fit on the same noise (before: numpy inferred the column's type from the
    elements, and one 'abc' was a free InvalidBoundsError naming the inferred dtype)."""
    X, y = _xy(200)
    wrap = COLLECTIONS[kind]

    def fit(cells: list, as_collection: bool = True) -> tuple[pd.Series, tuple[float, float]]:
        columns = {"x": wrap(cells), "y": wrap(list(y))} if as_collection else {"x": cells, "y": list(y)}
        acct = dpstats.PrivacyAccountant(2.0, 1e-5)
        res = dpstats.dp_ols("y ~ x", columns, 1.0, 1e-6, method="ssp", bounds={"x": BOUNDS["x"], "y": BOUNDS["y"]},
                             accountant=acct, random_state=0)
        return res.params, acct.spent

    for cell in (0.5, "abc", None, ["a", "b"]):
        cells = [cell, *X[1:, 0]]
        got, spent = fit(cells)
        want, want_spent = fit(cells, as_collection=False)
        assert got.equals(want) and spent == want_spent
        assert spent[0] == pytest.approx(1.0)
    assert fit([None, *X[1:, 0]])[0].equals(fit(["abc", *X[1:, 0]])[0])  # both missing: the same release


@pytest.mark.parametrize("kind", ["deque", "UserList"])
def test_the_estimator_reads_a_python_collection_as_a_list(kind):
    """``DPLinearRegression.fit`` reads y (and X's rows) given as a deque or a UserList element by element, as a
    list: a text or None element is missing, and the neighbours fit alike (before: scikit-learn's conversion
    refused the one with text, a free DataValueError)."""
    from dpstats.sklearn import DPLinearRegression

    X, y = _xy(200)
    wrap = COLLECTIONS[kind]
    fits = {}
    for cell in (0.5, "abc", None):
        ys = [cell, *y[1:]]
        est = DPLinearRegression(method="ssp", epsilon=1.0, delta=1e-6, bounds=[BOUNDS["x"]], y_bounds=BOUNDS["y"],
                                 random_state=0)
        as_list = DPLinearRegression(**est.get_params()).fit(X[:, :1].tolist(), ys)
        est.fit(wrap(X[:, :1].tolist()), wrap(ys))
        np.testing.assert_array_equal(est.coef_, as_list.coef_)
        assert est.privacy_report_.epsilon_spent == pytest.approx(1.0)
        fits[repr(cell)] = est.coef_
    np.testing.assert_array_equal(fits["'abc'"], fits["None"])


def test_a_dict_column_of_equal_length_lists_is_one_cell_per_row():
    """A list column whose cells are themselves equal-length lists is still one cell per row (each missing as a
    number), not a two-dimensional array that cannot form a table: a free refusal on one neighbour only."""
    X, y = _xy(100)
    cells = [[1.0, 2.0]] * 100
    res = dpstats.dp_ols("y ~ x", {"x": [0.5, *cells[1:]], "y": list(y)}, 1.0, 1e-6, method="ssp",
                         bounds={"x": BOUNDS["x"], "y": BOUNDS["y"]}, missing="drop", random_state=0)
    other = dpstats.dp_ols("y ~ x", {"x": cells, "y": list(y)}, 1.0, 1e-6, method="ssp",
                           bounds={"x": BOUNDS["x"], "y": BOUNDS["y"]}, missing="drop", random_state=0)
    assert res.nobs == other.nobs == 100
    assert res.privacy.epsilon_spent == pytest.approx(other.privacy.epsilon_spent)


@pytest.mark.parametrize("route", ["scikit-learn object array", "CSV file", "dict of lists"])
def test_black_box_audit_of_an_element_that_is_not_a_number(route, tmp_path):
    """Neighbours: row 0 holds the number 0.5, or the text 'n/a?' in x.  Before, one neighbour was always refused
    at no cost and the other fitted (an unbounded epsilon); now the text is a missing value the screen counts.
    The audit's bound must stay within the claimed epsilon = 1.  False-failure rate: alpha = 1e-3 per route."""
    from dpstats.privacy.audit import audit_mechanism

    X, y = _xy(150, seed=5)
    X[0, 0] = 0.5
    if route == "CSV file":
        data = _write_csv(tmp_path / "a.csv", X, y, "0.5")
        neighbour = _write_csv(tmp_path / "b.csv", X, y, "n/a?")

        def fit(path: str, rng: np.random.Generator) -> float:
            res = dpstats.dp_ols("y ~ x + z", CSVSource(path), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                                 random_state=rng)
            return float(res.params.iloc[1])
    elif route == "dict of lists":
        data = {"x": list(X[:, 0]), "z": list(X[:, 1]), "y": list(y)}
        neighbour = {**data, "x": ["n/a?", *data["x"][1:]]}

        def fit(columns: dict, rng: np.random.Generator) -> float:
            res = dpstats.dp_ols("y ~ x + z", columns, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=rng)
            return float(res.params.iloc[1])
    else:
        pytest.importorskip("sklearn")
        from dpstats.sklearn import DPLinearRegression

        data = (X.astype(object), y)
        bad = X.astype(object)
        bad[0, 0] = "n/a?"
        neighbour = (bad, y)

        def fit(xy: tuple[np.ndarray, np.ndarray], rng: np.random.Generator) -> float:
            est = DPLinearRegression(method="ssp", epsilon=1.0, bounds=[(0, 1), (0, 1)], y_bounds=(-3, 5),
                                     random_state=rng)
            return float(est.fit(*xy).coef_[0])

    result = audit_mechanism(_slope_or_refusal(fit), data, neighbour, runs=150, delta=1e-6, alpha=1e-3, seed=13)
    assert result.epsilon_lower_bound <= 1.0


# -- Dask collections given to the in-memory interfaces (s33 neighbour audit, H1-H4) --------------------------------

def _outcome(call) -> tuple[str, tuple[float, float]]:
    """(what happened, budget spent) of one fit: its type of refusal, or "fit"."""
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    try:
        call(acct)
    except DPStatsError as exc:
        return type(exc).__name__, acct.spent
    return "fit", acct.spent


@pytest.mark.parametrize("value", [5.0, None, np.nan, pd.NA, "zqx", 10**400],
                         ids=["number", "None", "nan", "NA", "text", "huge-int"])
def test_dask_collections_are_read_as_their_computed_result(value):
    """A Dask DataFrame or array given to ``dp_ols_arrays`` or ``DPLinearRegression`` is computed and read
    by the result's type, so one changed cell gives what it gives in memory (before: converted with
    ``np.array(values, dtype=float)``, which fitted when every cell parsed and refused at no cost when one did not,
    and a Python int beyond the float range escaped as an untyped OverflowError).  For each neighbour value the
    outcome and the spend equal those of the same records as pandas / numpy, for an object DataFrame (Dask
    turns it into text columns, refused from that dtype), a nullable Float64 DataFrame and an object array.
    Deterministic."""
    dd = pytest.importorskip("dask.dataframe")
    da = pytest.importorskip("dask.array")
    from dpstats.sklearn import DPLinearRegression

    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 400), "b": rng.uniform(0, 1, 400)})
    y = X["a"] - X["b"] + rng.normal(0, 0.1, 400)
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0,
               intercept=False)
    as_object = X.astype(object)
    as_object.iloc[7, 0] = value
    frames = [as_object]
    if not isinstance(value, (str, int)):  # a nullable float column holds a number or pd.NA
        as_float64 = X.astype("Float64")
        as_float64.iloc[7, 0] = 5.0 if isinstance(value, float) and value == 5.0 else pd.NA
        frames.append(as_float64)
    for frame in frames:
        lazy = dd.from_pandas(frame, npartitions=3)
        in_memory = dd.from_pandas(frame, npartitions=3).compute()  # the types Dask gives the same records
        assert _outcome(lambda a, X=lazy: dpstats.dp_ols_arrays(X, y, accountant=a, **fit)) == \
            _outcome(lambda a, X=in_memory: dpstats.dp_ols_arrays(X, y, accountant=a, **fit))
    array = as_object.to_numpy()
    est = dict(epsilon=1.0, delta=1e-6, bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0)
    lazy_array = da.from_array(array, chunks=(150, 2))
    lazy_outcome = _outcome(lambda a: DPLinearRegression(accountant=a, **est).fit(lazy_array, y.to_numpy()))
    assert lazy_outcome == _outcome(lambda a: DPLinearRegression(accountant=a, **est).fit(array, y.to_numpy()))
    assert lazy_outcome[0] == "fit" and lazy_outcome[1][0] == pytest.approx(1.0)  # every element read, charged


def test_predict_and_score_refuse_an_int_beyond_the_float_range_with_a_typed_error():
    """``predict`` and ``score`` on an object array holding a Python int beyond the float range: a typed
    ``DataValueError`` whose message quotes no value (before: an untyped OverflowError).  Deterministic."""
    from dpstats.errors import DataValueError
    from dpstats.sklearn import DPLinearRegression

    pytest.importorskip("sklearn")
    X, y = _xy()
    est = DPLinearRegression(epsilon=1.0, bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0).fit(X, y)
    huge = X[:5].astype(object)
    huge[2, 0] = 10**400
    for call in (lambda: est.predict(huge), lambda: est.score(huge, y[:5])):
        with pytest.raises(DataValueError,
                           match="validation of X for predict failed with OverflowError; its message is "
                                 "withheld") as info:
            call()
        assert "1000000" not in str(info.value)
    ys = y[:5].astype(object)
    ys[1] = 10**400
    with pytest.raises(DataValueError,
                       match="validation of X and y failed with OverflowError; its message is withheld"):
        est.score(X[:5], ys)


def test_arrays_refuse_a_sparse_matrix_from_its_type():
    """A scipy sparse matrix given to ``dp_ols_arrays`` is refused from its type, typed and free (numpy cannot make
    a dense float array of it; an untyped TypeError must not escape).  Deterministic."""
    sparse = pytest.importorskip("scipy.sparse")
    X, y = _xy()
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(DataTypeError, match="must be a dense array; a csr_matrix"):
        dpstats.dp_ols_arrays(sparse.csr_matrix(X), y, 1.0, x_bounds=(0, 1), y_bounds=(-3, 5), method="ssp",
                              intercept=False, accountant=acct)
    assert acct.spent == (0.0, 0.0)


#: rows that one neighbour's list of rows may hold in place of an ordinary row of two numbers: the wrong length, no
#: row at all, a number, text; each is read as a row of missing values, as [nan, nan] is
ODD_ROWS = {"three cells": [0.1, 0.2, 0.3], "one cell": [0.1], "empty": [], "None": None, "a number": 0.5,
            "text": "ab", "a nested cell": [0.1, [0.2]]}


@pytest.mark.parametrize("row", list(ODD_ROWS))
def test_a_list_of_rows_reads_each_row_by_itself(row):
    """X as a list of rows with a declared width (column_names=): a row of another length (or not a row) is a row
    of missing values, which the charged screen counts, and the fit is the one of the same data with that row
    missing.  Before, numpy made the ragged list a 1-d array of rows and the fit was refused for free ("X must be
    2-d"), on the neighbour with that row only.  Deterministic (fixed data and seed): no false failures."""
    X, y = _xy()
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0,
               intercept=False, column_names=["a", "b"])
    rows, missing = X.tolist(), X.copy()
    rows[3], missing[3] = ODD_ROWS[row], np.nan
    a, b = dpstats.dp_ols_arrays(rows, list(y), **fit), dpstats.dp_ols_arrays(missing, y, **fit)
    assert a.params.equals(b.params) and a.privacy.steps[0].name.startswith("missing-value screen")


def test_a_response_given_as_a_list_of_one_cell_rows_reads_each_cell_by_itself():
    """y as a list of one-element rows (``y.reshape(-1, 1).tolist()``): each is its number, and a row of two cells
    is a missing value; before, that row made the whole response a list of rows, each read as missing.  Deterministic:
    no false failures."""
    X, y = _xy()
    fit = dict(epsilon=1.0, delta=1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), method="ssp", random_state=0,
               intercept=False)
    cells, missing = [[v] for v in y], y.copy()
    cells[5], missing[5] = [1.0, 2.0], np.nan
    a, b = dpstats.dp_ols_arrays(X, cells, **fit), dpstats.dp_ols_arrays(X, missing, **fit)
    assert a.params.equals(b.params)
    whole = dpstats.dp_ols_arrays(X, [[v] for v in y], **fit)
    assert whole.params.equals(dpstats.dp_ols_arrays(X, y, **fit).params)


@pytest.mark.parametrize("row", [None, "three cells"])
def test_a_list_of_rows_without_a_declared_width_is_refused_from_the_call(row):
    """The width of a list of rows is read from its rows (one row of another length would change it), so without
    column_names= or one x_bounds pair per column it is refused, from the call alone: the same message for the
    ordinary data and its neighbour with an odd row, and nothing spent."""
    X, y = _xy()
    rows = X.tolist()
    if row is not None:
        rows[3] = ODD_ROWS[row]
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(DataTypeError, match="X is a list of rows") as info:
        dpstats.dp_ols_arrays(rows, y, 1.0, 1e-6, method="ssp", x_bounds=(0, 1), y_bounds=(-3, 5),
                              intercept=False, accountant=acct)
    assert "column_names" in str(info.value) and acct.spent == (0.0, 0.0)
    per_column = dpstats.dp_ols_arrays(rows, y, 1.0, 1e-6, method="ssp", x_bounds=[(0, 1), (0, 1)],
                                       y_bounds=(-3, 5), intercept=False, random_state=0)
    assert list(per_column.params.index) == ["x1", "x2"]


@pytest.mark.parametrize("row", ["three cells", "None", "text"])
def test_the_estimator_reads_a_list_of_rows_row_by_row(row):
    """``DPLinearRegression.fit`` on X as a list of rows with one bounds pair per column: an odd row is a row of
    missing values, and the fit is the one with that row missing (before: scikit-learn's validation refused the
    ragged list, "Expected 2D array", for free, on that neighbour only); without a declared width the list is
    refused from the call, for the ordinary data and its neighbour alike.  Deterministic: no false failures."""
    from dpstats.sklearn import DPLinearRegression

    X, y = _xy(300)
    rows, missing = X.tolist(), X.copy()
    rows[3], missing[3] = ODD_ROWS[row], np.nan
    params = dict(method="ssp", epsilon=1.0, delta=1e-6, bounds=[(0, 1), (0, 1)], y_bounds=BOUNDS["y"],
                  random_state=0)
    a = DPLinearRegression(**params).fit(rows, list(y))
    b = DPLinearRegression(**params).fit(missing, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    for data in (X.tolist(), rows):
        with pytest.raises(DataTypeError, match="X is a list of rows"):
            DPLinearRegression(**{**params, "bounds": (0, 1)}).fit(data, list(y))
