"""pyarrow-backed columns and tables, and odd public arguments (s34 neighbour audit, fuzz7: F1-F4, C1, C2).

Before: ``DPLinearRegression.fit`` passed a ``dictionary<string>[pyarrow]``, ``binary[pyarrow]`` or
``decimal128[pyarrow]`` column, and a pyarrow Table, to scikit-learn's conversion, which fitted when every cell
parsed and refused at no cost when one cell was missing or text (F1-F3); ``dp_ols`` read a decimal column as a
factor and refused it with ``UndeclaredLevelsError``, or with ``InternalFitError`` when one cell was missing (F4).
Now each such input is read by its dtype alone (``dpstats.numbers``), as the same records in a float or object
column are, so one changed cell changes neither the kind of outcome nor the spend.  Deterministic (seeded fits).
"""

from __future__ import annotations

import warnings
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import (
    DataTypeError,
    DataValueError,
    DPStatsError,
    InvalidArgumentError,
    InvalidBoundsError,
    InvalidPrivacyParameterError,
    NonFiniteValueError,
)

pa = pytest.importorskip("pyarrow")

N, ROW = 400, 7
#: neighbour values of one cell: a number, a missing value, text
VALUES = {"number": "5.5", "None": None, "text": "zqxtext"}


def _records(seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(0, 10, N).round(2), rng.uniform(0, 10, N).round(2)
    return a, b, 1 + 2 * a - b + rng.normal(0, 1, N)


def _outcome(call) -> tuple[str, tuple[float, float]]:
    """(what happened, budget spent) of one fit: its type of refusal, or "fit"."""
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(acct)
    except DPStatsError as exc:
        return type(exc).__name__, acct.spent
    return "fit", acct.spent


def _cells(values: np.ndarray, value: str | None) -> list[str | None]:
    cells: list[str | None] = [str(v) for v in values]
    cells[ROW] = value
    return cells


ARROW_KINDS = {
    "dictionary<string>": lambda cells: pd.array(pa.array(cells).dictionary_encode(),
                                                 dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string()))),
    "binary": lambda cells: pd.array([None if v is None else v.encode() for v in cells],
                                     dtype=pd.ArrowDtype(pa.binary())),
    "large_string": lambda cells: pd.array(cells, dtype=pd.ArrowDtype(pa.large_string())),
    "decimal128": lambda cells: pd.array([None if v is None else Decimal(v) for v in cells],
                                         dtype=pd.ArrowDtype(pa.decimal128(38, 10))),
}


def _estimator(acct: dpstats.PrivacyAccountant):
    from dpstats.sklearn import DPLinearRegression

    return DPLinearRegression(method="ssp", epsilon=1.0, delta=1e-6, bounds=[(0, 10), (0, 10)], y_bounds=(-20, 40),
                              random_state=3, accountant=acct)


@pytest.mark.parametrize("kind", list(ARROW_KINDS))
@pytest.mark.parametrize("side", ["X", "y"])
def test_estimator_reads_an_arrow_column_the_same_for_every_cell(kind, side):
    """F1, F2: one cell of an Arrow dictionary, binary, string or decimal column (a number, None, text) gives the
    outcome and the spend of the same records as an object column: a charged fit on every side (before: a free
    MissingDataError or DataValueError when the cell was missing or text)."""
    pytest.importorskip("sklearn")
    a, b, y = _records()
    outcomes = {}
    for label, value in VALUES.items():
        if kind == "decimal128" and label == "text":
            continue  # a decimal column cannot hold text
        if side == "X":
            cells = _cells(a, value)
            X, target = pd.DataFrame({"a": ARROW_KINDS[kind](cells), "b": b}), y
            X_object, target_object = pd.DataFrame({"a": pd.Series(cells, dtype=object), "b": b}), y
        else:
            cells = _cells(y.round(3), value)
            X, target = pd.DataFrame({"a": a, "b": b}), pd.Series(ARROW_KINDS[kind](cells))
            X_object, target_object = X, pd.Series(cells, dtype=object)
        got = _outcome(lambda acct, X=X, t=target: _estimator(acct).fit(X, t))
        reference = _outcome(lambda acct, X=X_object, t=target_object: _estimator(acct).fit(X, t))
        assert got == reference
        outcomes[label] = got
    assert len(set(outcomes.values())) == 1 and outcomes["number"][0] == "fit"


def test_estimator_reads_a_decimal_column_as_its_floats():
    """F2: a decimal column releases exactly what the same records as float64 (NaN for the missing cell) release."""
    pytest.importorskip("sklearn")
    a, b, y = _records()
    for value in ("5.5", None):
        cells = _cells(a, value)
        decimal = pd.DataFrame({"a": ARROW_KINDS["decimal128"](cells), "b": b})
        floats = pd.DataFrame({"a": [np.nan if v is None else float(v) for v in cells], "b": b})
        acct = dpstats.PrivacyAccountant(5.0, 1e-5)
        np.testing.assert_array_equal(_estimator(acct).fit(decimal, y).coef_, _estimator(acct).fit(floats, y).coef_)


def test_a_pyarrow_table_is_read_as_the_dataframe_of_its_arrow_types():
    """F3: a pyarrow Table with a text column: the estimator reads each cell (a charged fit on every side; before,
    text in one cell was a free DataValueError), and ``dp_ols_arrays`` refuses the text column from its type on
    every side, as it refuses the same column in a DataFrame."""
    pytest.importorskip("sklearn")
    a, b, y = _records()
    estimator, arrays = set(), set()
    for value in VALUES.values():
        table = pa.table({"a": pa.array(_cells(a, value)), "b": pa.array(b)})
        estimator.add(_outcome(lambda acct, t=table: _estimator(acct).fit(t, y)))
        arrays.add(_outcome(lambda acct, t=table: dpstats.dp_ols_arrays(
            t, y, 1.0, 1e-6, intercept=False, method="ssp", x_bounds=(0, 10), y_bounds=(-20, 40), random_state=3,
            accountant=acct)))
    assert len(estimator) == 1 and next(iter(estimator))[0] == "fit"
    assert arrays == {("DataTypeError", (0.0, 0.0))}
    numbers = pa.table({"a": pa.array(a), "b": pa.array(b)})  # a Table of doubles fits on both interfaces
    assert _outcome(lambda acct: _estimator(acct).fit(numbers, pa.chunked_array([y])))[0] == "fit"
    assert _outcome(lambda acct: dpstats.dp_ols_arrays(numbers, pa.chunked_array([y]), 1.0, 1e-6, method="ssp",
                                                       intercept=False, x_bounds=(0, 10), y_bounds=(-20, 40),
                                                       random_state=3, accountant=acct))[0] == "fit"


@pytest.mark.parametrize("dtype", ["datetime64[ns, UTC]", "period[D]", "date32[pyarrow]"])
@pytest.mark.parametrize("row", [None, 0, ROW])
def test_estimator_refuses_dates_from_the_dtype(dtype, row):
    """A column of dates (tz-aware, periods, Arrow dates) is refused from its dtype, whatever its cells: before,
    scikit-learn's conversion failed on the first cell, so a missing first cell gave a MissingDataError and a
    date there a DataTypeError (an exception type decided by one cell).  Nothing is spent."""
    pytest.importorskip("sklearn")
    a, b, y = _records()
    dates = pd.Series(pd.date_range("2000-01-01", periods=N))
    column = {"datetime64[ns, UTC]": dates.dt.tz_localize("UTC"), "period[D]": dates.dt.to_period("D"),
              "date32[pyarrow]": dates.dt.date.astype(pd.ArrowDtype(pa.date32()))}[dtype].copy()
    if row is not None:
        column.iloc[row] = None
    outcome = _outcome(lambda acct: _estimator(acct).fit(pd.DataFrame({"a": column, "b": b}), y))
    assert outcome == ("DataTypeError", (0.0, 0.0))


def test_dp_ols_reads_a_decimal_column_as_a_number():
    """F4: ``dp_ols`` with a decimal column used as a number: the same fit and spend with every cell a number and
    with one missing (before: a free UndeclaredLevelsError, or InternalFitError when one cell was missing), and the
    release of the same records as float64."""
    a, b, y = _records()
    bounds = {"a": (0, 10), "b": (0, 10), "y": (-20, 40)}
    for value in ("5.5", None):
        cells = _cells(a, value)
        decimal = pd.DataFrame({"a": ARROW_KINDS["decimal128"](cells), "b": b, "y": y})
        floats = decimal.assign(a=[np.nan if v is None else float(v) for v in cells])
        fits = [dpstats.dp_ols("y ~ a + b", frame, 1.0, 1e-6, method="ssp", bounds=bounds, random_state=3)
                for frame in (decimal, floats)]
        assert fits[0].params.equals(fits[1].params)
        assert fits[0].privacy.epsilon_spent == fits[1].privacy.epsilon_spent
    as_factor = pd.DataFrame({"a": ARROW_KINDS["decimal128"](_cells(np.floor(a / 4), None)), "b": b, "y": y})
    res = dpstats.dp_ols("y ~ C(a, levels=[0, 1, 2]) + b", as_factor, 1.0, 1e-6, method="ssp",
                         bounds={"b": (0, 10), "y": (-20, 40)}, random_state=3)
    assert len(res.params) == 4  # a declared factor still: intercept, two dummies, b


# -- C1: odd public arguments give typed errors that name the argument ----------------------------------------------

def _frame() -> pd.DataFrame:
    a, b, y = _records()
    return pd.DataFrame({"a": a, "b": b, "y": y})


HUGE = 10**400
PUBLIC_CALLS = {
    "plan bounds as a list": (lambda: dpstats.plan(formula="y ~ x", epsilon=1.0, n=1000, bounds=[(0, 1)]),
                              InvalidBoundsError),
    "plan bounds keyed by an int": (lambda: dpstats.plan(0.1, formula="y ~ a", epsilon=1.0,
                                                         bounds={1: (0, 1), "y": (0, 1)}), InvalidBoundsError),
    "plan bound beyond floats": (lambda: dpstats.plan(0.1, formula="y ~ a", epsilon=1.0,
                                                      bounds={"a": (0, HUGE), "y": (0, 1)}), InvalidBoundsError),
    "plan levels as a list": (lambda: dpstats.plan(0.1, formula="y ~ C(g)", epsilon=1.0, bounds={"y": (0, 1)},
                                                   levels=[["a"]]), InvalidArgumentError),
    "plan unknown dtype": (lambda: dpstats.plan(0.1, formula="y ~ a", epsilon=1.0, bounds={"a": (0, 1), "y": (0, 1)},
                                                dtypes={"a": "nope"}), InvalidArgumentError),
    "plan huge n": (lambda: dpstats.plan(formula="y ~ a", epsilon=1.0, n=HUGE, bounds={"a": (0, 1), "y": (0, 1)}),
                    InvalidArgumentError),
    "plan huge d": (lambda: dpstats.plan(0.1, d=HUGE, epsilon=1.0), InvalidArgumentError),
    "plan huge epsilon": (lambda: dpstats.plan(0.1, d=3, epsilon=HUGE), InvalidPrivacyParameterError),
    "plan huge residual_sd": (lambda: dpstats.plan(formula="y ~ a", epsilon=1.0, n=1000, residual_sd=HUGE,
                                                   bounds={"a": (0, 1), "y": (0, 1)}), InvalidArgumentError),
    "dp_ols huge epsilon": (lambda: dpstats.dp_ols("y ~ a", _frame(), HUGE, 1e-6, method="ssp",
                                                   bounds={"a": (0, 10), "y": (-20, 40)}),
                            InvalidPrivacyParameterError),
    "dp_ols huge delta": (lambda: dpstats.dp_ols("y ~ a", _frame(), 1.0, HUGE, method="ssp",
                                                 bounds={"a": (0, 10), "y": (-20, 40)}),
                          InvalidPrivacyParameterError),
    "dp_ols bound beyond floats": (lambda: dpstats.dp_ols("y ~ a", _frame(), 1.0, 1e-6, method="ssp",
                                                          bounds={"a": (0, HUGE), "y": (-20, 40)}),
                                   InvalidBoundsError),
    "dp_ols_arrays y_bounds beyond floats": (lambda: dpstats.dp_ols_arrays(
        _frame()[["a"]], _frame()["y"], 1.0, 1e-6, intercept=False, method="ssp", x_bounds=[(0, 10)],
        y_bounds=(0, HUGE)),
        InvalidBoundsError),
}


@pytest.mark.parametrize("case", list(PUBLIC_CALLS))
def test_odd_public_arguments_give_typed_errors(case):
    """C1: before, AttributeError, TypeError or OverflowError (or an InternalFitError that blamed the data)."""
    call, expected = PUBLIC_CALLS[case]
    with pytest.raises(expected,
                       match=r"^(bounds|levels|dtypes|n|d|plan needs a finite epsilon|residual_sd|epsilon|delta"
                             r"|y_bounds)\b") as info:
        call()
    message = str(info.value)
    assert "failed with" not in message and "from the data" not in message and len(message) < 600


@pytest.mark.parametrize("params, error, words", [
    (dict(epsilon=HUGE), InvalidPrivacyParameterError, "epsilon must be a positive number"),
    (dict(bounds=[(0, HUGE)]), InvalidBoundsError, "bounds has an end beyond the float range"),
    (dict(y_bounds=(-10, HUGE)), InvalidBoundsError, "y_bounds has an end beyond the float range"),
    (dict(bounds=[("lo", "hi")]), InvalidBoundsError, "bounds must be numbers"),
], ids=["epsilon", "bounds", "y_bounds", "text"])
def test_estimator_refuses_odd_public_arguments_typed(params, error, words):
    pytest.importorskip("sklearn")
    from dpstats.sklearn import DPLinearRegression

    frame = _frame()
    settings = {"method": "ssp", "bounds": [(0, 10)], "y_bounds": (-20, 40), "random_state": 3, **params}
    with pytest.raises(error, match=words):
        DPLinearRegression(**settings).fit(frame[["a"]], frame["y"])


def test_table_and_plot_plan_refuse_odd_arguments_typed():
    res = dpstats.dp_ols("y ~ a", _frame(), 1.0, 1e-6, method="ssp", bounds={"a": (0, 10), "y": (-20, 40)},
                         random_state=3)
    with pytest.raises(DataTypeError, match="labels that are strings"):
        dpstats.table([res], rename={"a": 5})
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    with pytest.raises(InvalidPrivacyParameterError, match="plan needs a finite epsilon > 0, got 'x'"):
        dpstats.plot_plan(3, ["x"], 1e-6)
    with pytest.raises(InvalidArgumentError, match="epsilons must be"):
        dpstats.plot_plan(3, 1.0, 1e-6)


# -- C2: predictions that overflow ---------------------------------------------------------------------------------

def test_predict_refuses_a_prediction_that_overflows():
    """C2: a finite new row whose prediction overflows the float range is a NonFiniteValueError naming how many
    rows, never a value (before: inf, with numpy's RuntimeWarning only)."""
    frame = _frame()
    res = dpstats.dp_ols("y ~ a + b", frame, 1.0, 1e-6, method="ssp",
                         bounds={"a": (0, 10), "b": (0, 10), "y": (-20, 40)}, random_state=3)
    new = pd.DataFrame({"a": [1.5e308, 1.0], "b": [1.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numpy overflow warning either
        warnings.simplefilter("ignore", dpstats.errors.ExtrapolationWarning)
        with pytest.raises(NonFiniteValueError, match="1 of 2 rows of newdata gives") as info:
            res.predict(new)
        assert "e+308" not in str(info.value) and "1.5" not in str(info.value)
        assert np.isfinite(res.predict(new.iloc[[1]])).all()


def test_estimator_predict_and_score_refuse_overflow_and_one_row():
    pytest.importorskip("sklearn")
    from dpstats.sklearn import DPLinearRegression

    frame = _frame()
    est = DPLinearRegression(method="ssp", bounds=[(0, 10), (0, 10)], y_bounds=(-20, 40), random_state=3)
    est.fit(frame[["a", "b"]], frame["y"])
    huge = frame[["a", "b"]].iloc[:3].copy()
    huge.iloc[1, 0] = 1.5e308
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpstats.errors.ExtrapolationWarning)
        with pytest.raises(NonFiniteValueError, match="rows of X") as info:
            est.predict(huge)
        assert "e+308" not in str(info.value)
        with pytest.raises(NonFiniteValueError,
                           match="rows of X gives a prediction that overflows the float range .*rescale"):
            est.score(huge, frame["y"].iloc[:3])
    with pytest.raises(DataValueError, match="at least 2 rows"):  # before: "the sums of squares of y overflow"
        est.score(frame[["a", "b"]].iloc[:1], frame["y"].iloc[:1])
