"""Reading values as numbers by a public rule, one element at a time.

An input without a numeric type of its own (a Python list, an object or text array, an object, text or categorical
column of a DataFrame) can hold anything in any row.  Whether every element is a number is then a fact of the
data: refusing the input because one element is not (the conversion ``np.array(values, dtype=float)`` fails) would
release that fact about a single row without noise, a free refusal on one neighbour only.  Here each element is read
by itself, by a rule that looks at no other element (``docs/privacy.md``, "Values that are not numbers"):

* a bool is 0 or 1; a real number (Python's or numpy's ints and floats, ``Fraction``, ``Decimal``) is its float,
  and one too large for a float (a Python int, a ``np.longdouble``) is infinite with its sign, without a warning;
* text (``str`` or ``bytes``) that Python's ``float()`` reads is that number (``"2.5"``, ``" 3 "``, ``"inf"``);
* anything else (``None``, ``pd.NA``, ``pd.NaT``, other text, complex numbers, dates, containers) is missing (NaN).

A missing value then makes its row incomplete, and a private fit's missing-value screen counts such rows with
noise (:mod:`dpstats.privacy.missing_screen`), where the conversion failure would have refused for free.

A pandas column is read by its dtype alone (:func:`numeric_columns`): numpy numbers and booleans as they are, pandas'
nullable and Arrow-backed numbers and booleans (``Int64``, ``double[pyarrow]``, ``decimal128[pyarrow]``, ...) as
floats with NaN for a missing value, dates and durations refused, and every other dtype (object, text, categorical,
Arrow dictionary, binary, ...) element by element.  A pyarrow Table or array is first made the DataFrame or Series of
the same Arrow dtypes (:func:`in_memory`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Iterable, Mapping, Set
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from dpstats.errors import DataTypeError

__all__ = ["in_memory", "is_untyped_sequence", "number_or_missing", "numbers_or_missing", "cells_or_missing",
           "rows_or_missing", "numeric_columns",
           "typed_columns"]


def number_or_missing(value: object) -> float:
    """One element read as a float by the module's rule (NaN where it is not a number).

    Parameters
    ----------
    value : object
        Any element.

    Returns
    -------
    float
        Its number, or NaN.

    Examples
    --------
    >>> from dpstats.numbers import number_or_missing
    >>> number_or_missing(True), number_or_missing("2.5"), number_or_missing(10**400), number_or_missing(None)
    (1.0, 2.5, inf, nan)
    """
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (numbers.Real, Decimal)):
        try:
            return _real_to_float(value)
        except Exception:  # a number type whose conversion fails in its own way: not a number we can read
            return math.nan
    if isinstance(value, (str, bytes)):
        try:
            return float(value)
        except ValueError:
            return math.nan
    return math.nan


def _real_to_float(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:  # an int or Fraction beyond the float range
        return math.inf if value > 0 else -math.inf


_READ_EACH = np.frompyfunc(number_or_missing, 1, 1)


def in_memory(values: Any) -> Any:
    """A Dask collection computed to its pandas or numpy result, a pyarrow Table, RecordBatch or array made the
    pandas DataFrame or Series of the same Arrow dtypes, and a pandas array of an extension type made a Series, which
    is then read by its type as in memory; any other value unchanged.

    Converting a Dask collection or a pyarrow table straight to floats (``np.array(values, dtype=float)``, as
    scikit-learn's validation does) succeeds or fails by its values (a text column whose cells all parse, a nullable
    column without a missing cell), so the in-memory interfaces convert it first and decide from the result's type,
    as for the same records in a DataFrame.

    Parameters
    ----------
    values : Any
        An input of ``dp_ols_arrays`` or ``DPLinearRegression``.

    Returns
    -------
    Any
        ``values.compute()`` for a Dask DataFrame, Series or array; ``values.to_pandas(types_mapper=pd.ArrowDtype)``
        for a pyarrow Table, RecordBatch, Array or ChunkedArray; a Series for a pandas extension array; else
        ``values`` itself.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.numbers import in_memory
    >>> in_memory(np.array([1.0, 2.0]))
    array([1., 2.])
    """
    package = type(values).__module__.partition(".")[0]  # dask_expr: dask 2024's DataFrames, a package of their own
    if package in ("dask", "dask_expr") and callable(getattr(values, "compute", None)):
        return values.compute()
    if package == "pyarrow" and callable(getattr(values, "to_pandas", None)):  # each column keeps its Arrow type
        return values.to_pandas(types_mapper=pd.ArrowDtype)
    if isinstance(getattr(values, "dtype", None), pd.api.extensions.ExtensionDtype) and not isinstance(
            values, (pd.DataFrame, pd.Series)):  # a pandas array (pd.array): read by its dtype, as a Series is
        return pd.Series(values, copy=False)
    return values


def numbers_or_missing(values: Any) -> np.ndarray:
    """``values`` as a new float array of the same shape, each element read by :func:`number_or_missing`.

    Parameters
    ----------
    values : array_like
        A list (nested for 2-D), an array of any dtype, or a pandas Series.

    Returns
    -------
    numpy.ndarray
        float64, one number or NaN per element.

    Examples
    --------
    >>> from dpstats.numbers import numbers_or_missing
    >>> numbers_or_missing([[1, "2"], [None, "a"]])
    array([[ 1.,  2.],
           [nan, nan]])
    """
    if isinstance(values, (pd.Series, pd.Index)):
        values = values.to_numpy(dtype=object)
    array = np.asarray(values, dtype=object)
    with np.errstate(all="ignore"):  # a long double beyond the float range is inf, without a warning for its row
        return np.asarray(_READ_EACH(array), dtype=float).reshape(array.shape)


def _cells_of_row(row: Any) -> list[Any] | None:
    """The cells of one row given as a Python collection or a 1-d array (None for anything else: a number, text,
    ``None``, a mapping, an array of another shape), decided from that row alone."""
    if isinstance(row, np.ndarray):
        return list(row) if row.ndim == 1 else None
    if isinstance(row, pd.Series) or is_untyped_sequence(row):
        return list(row)
    return None


def rows_or_missing(rows: Iterable[Any], width: int) -> np.ndarray:
    """A list of rows (or another Python collection of them) as an n x ``width`` float array, each row read by
    itself: a row of exactly ``width`` cells has each cell read by :func:`number_or_missing`; any other row (another
    length, a number, text, ``None``) is a row of missing values, except that with ``width`` 1 a row that is not a
    collection is its one cell.

    numpy reads a nested list's shape from its rows: one row of another length makes the whole input a 1-d array
    of rows, which was refused for free on the neighbour that has it.  ``width`` must be public (declared by the
    caller), never read from the rows.

    Parameters
    ----------
    rows : iterable
        The rows.
    width : int
        The declared number of cells per row.

    Returns
    -------
    numpy.ndarray
        float64, of shape (n, width), NaN where a cell is not a number or the row is not a row of ``width`` cells.

    Examples
    --------
    >>> from dpstats.numbers import rows_or_missing
    >>> rows_or_missing([[1, "2"], [3, 4, 5], None], 2)
    array([[ 1.,  2.],
           [nan, nan],
           [nan, nan]])
    """
    out = []
    for row in rows:
        cells = _cells_of_row(row)
        if cells is None and width == 1:
            cells = [row]
        out.append([number_or_missing(c) for c in cells] if cells is not None and len(cells) == width
                   else [math.nan] * width)
    return np.array(out, dtype=float).reshape(len(out), width)


def cells_or_missing(cells: Iterable[Any]) -> np.ndarray:
    """A list of cells (or another Python collection of them) as a 1-d float array, each cell read by itself: a row
    of one cell (``[2.5]``, as ``y.reshape(-1, 1).tolist()`` gives) is that cell, and any other cell by
    :func:`number_or_missing` (so a row of two cells is missing).  numpy would read the list's shape from its cells,
    making a list of one-cell rows with one longer row a list of rows, each missing.

    Parameters
    ----------
    cells : iterable
        The cells.

    Returns
    -------
    numpy.ndarray
        float64, one number or NaN per cell.

    Examples
    --------
    >>> from dpstats.numbers import cells_or_missing
    >>> cells_or_missing([[1.5], 2, [3, 4], "x"])
    array([1.5, 2. , nan, nan])
    """
    out = []
    for cell in cells:
        inner = _cells_of_row(cell)
        out.append(number_or_missing(inner[0] if inner is not None and len(inner) == 1 else cell))
    return np.array(out, dtype=float)


def numeric_columns(frame: pd.DataFrame, what: str = "the data") -> pd.DataFrame:
    """``frame`` with every column read as numbers by a rule decided from its dtype alone: numpy numbers and booleans
    unchanged; pandas' nullable and Arrow-backed numbers and booleans (``Int64``, ``boolean``, ``double[pyarrow]``,
    ``decimal128[pyarrow]``, ...) as floats, a missing value NaN; every other dtype whose values can be anything
    (object, text, categorical, Arrow dictionary, binary, ...) element by element (:func:`numbers_or_missing`).
    Dates and durations are refused.  The column names are unchanged.

    Converting such a column with ``np.asarray(column, dtype=float)`` instead succeeds or fails by its values (a
    dictionary column whose cells all parse, a decimal column without a null), which would make the outcome of a
    fit depend on one cell.

    Parameters
    ----------
    frame : pandas.DataFrame
        Any DataFrame.
    what : str
        How a refusal names the input (``"X"``, ``"y"``).

    Returns
    -------
    pandas.DataFrame
        A new frame where a column was read (the caller's is not changed), else ``frame`` itself.

    Raises
    ------
    DataTypeError
        A column holds dates or durations (numpy's or pandas' datetime, timedelta or period dtypes, Arrow dates,
        times and timestamps), decided from the dtype alone.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats.numbers import numeric_columns
    >>> numeric_columns(pd.DataFrame({"a": [1, 2], "b": ["3", "n/a"]}))["b"].tolist()
    [3.0, nan]
    """
    times = [str(name) for name, dtype in frame.dtypes.items() if _holds_times(dtype)]
    if times:
        raise DataTypeError(f"{what} must be numeric; its columns {', '.join(times[:5])} hold dates, times or "
                            "durations, not numbers: convert them first with a public origin and unit (e.g. days "
                            "since 2000-01-01). Decided from the dtypes; nothing was spent")
    read: dict[int, np.ndarray] = {}
    for position, dtype in enumerate(frame.dtypes):
        if isinstance(dtype, np.dtype):
            if dtype.kind in "OUS":  # objects or text: anything in any row
                read[position] = numbers_or_missing(frame.iloc[:, position])
        elif (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)) and not (
                pd.api.types.is_complex_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype)):
            with np.errstate(all="ignore"):  # a value beyond the float range is inf, without a warning
                read[position] = frame.iloc[:, position].to_numpy(dtype=float, na_value=np.nan)
        else:  # an extension type that is not numbers (text, categorical, Arrow dictionary, binary, ...)
            read[position] = numbers_or_missing(frame.iloc[:, position])
    if not read:
        return frame
    out = frame.copy()
    for position, values in read.items():
        out.isetitem(position, values)
    return out


def _holds_times(dtype: Any) -> bool:
    """Whether a dtype holds dates, times or durations (numpy's or pandas' datetime, timedelta or period, Arrow's
    date, time, timestamp or duration): a decision on the dtype alone."""
    if isinstance(dtype, pd.PeriodDtype) or getattr(dtype, "kind", None) in ("M", "m"):
        return True
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa  # an ArrowDtype exists only with pyarrow installed

        return bool(pa.types.is_temporal(dtype.pyarrow_dtype))
    return False


def is_untyped_sequence(values: Any) -> bool:
    """Whether ``values`` is a Python collection of elements without a type of its own: a list, a tuple, a
    ``collections.deque``, a ``UserList``, a ``range``, a generator or any other iterable that is not text, bytes, a
    mapping or a set, and has no dtype and no array interface of its own (numpy arrays, pandas objects, pyarrow,
    Dask and other array types are typed).  numpy infers the type of such a collection from its elements (one
    string makes it text), so it is read element by element instead, as a list is.  A decision on the container's
    type alone.

    Parameters
    ----------
    values : Any
        A column or an input.

    Returns
    -------
    bool

    Examples
    --------
    >>> from collections import deque
    >>> import numpy as np
    >>> from dpstats.numbers import is_untyped_sequence
    >>> is_untyped_sequence(deque([1, "a"])), is_untyped_sequence(np.array([1.0])), is_untyped_sequence("ab")
    (True, False, False)
    """
    if isinstance(values, (list, tuple)):
        return True
    if isinstance(values, (str, bytes, bytearray, memoryview, Mapping, Set)):
        return False
    if getattr(values, "dtype", None) is not None or hasattr(values, "__array__") or hasattr(
            values, "__array_interface__"):
        return False
    return isinstance(values, Iterable)


def typed_columns(data: Mapping[Any, Any], text: Collection[Any]) -> dict[Any, Any]:
    """The columns of a dict of arrays, each with a type decided from public facts: a list, a tuple or any other
    Python collection without a type of its own (a deque, a ``UserList``, a generator: :func:`is_untyped_sequence`),
    whose type numpy would infer from its elements (one string or ``None`` would make it text or objects), is text
    (a one-dimensional object array of its elements) where ``text`` names it, the columns for which the call
    declares text levels, and otherwise numbers, read element by element (:func:`numbers_or_missing`), as a CSV
    column is.  Any other column (a numpy array, a pandas Series or array, an array-like) keeps the type it gives
    itself.

    Parameters
    ----------
    data : mapping
        Column name to values.
    text : collection
        The names of the columns with declared text levels.

    Returns
    -------
    dict
        The same names, in the same order.

    Examples
    --------
    >>> from dpstats.numbers import typed_columns
    >>> cols = typed_columns({"x": [1, "2", None], "g": ["a", "b", None]}, text={"g"})
    >>> cols["x"], cols["g"].dtype
    (array([ 1.,  2., nan]), dtype('O'))
    """
    out: dict[Any, Any] = {}
    for name, values in data.items():
        if not is_untyped_sequence(values):
            out[name] = values
            continue
        cells = np.fromiter(values, dtype=object)  # one cell per element, whatever it holds (a list stays a cell)
        out[name] = cells if name in text else numbers_or_missing(cells)
    return out
