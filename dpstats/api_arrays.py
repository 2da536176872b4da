"""Wide designs: the design of ``dp_ols_arrays`` (X and y as arrays) and ``formula_all`` ("y ~ ." in patsy).

A formula with hundreds of columns is impractical to type (patsy alone parses
a flat ``y ~ x1 + x2 + ... + x1000`` recursively and fails near 500 terms;
:func:`dpstats.dp_ols` nests long sums itself and reads R's ``y ~ .``).  Two
more ways around it:

* :func:`formula_all` writes the formula "response ~ every other column" (R's
  ``y ~ .``, which :func:`dpstats.dp_ols` also understands), grouping the
  terms in nested parentheses of at most 64 so that patsy's parser never
  recurses deeply; ``+`` is associative on term lists, so the design
  (columns and their order) is the flat formula's;
* :func:`dpstats.dp_ols_arrays` skips formulas: X (n x d) and y go straight
  into the same pipeline as :func:`dpstats.dp_ols` (method choice from public
  facts, accountant, public rescaling, privacy report, error bounds), with
  bounds given per column or once for all columns; :func:`array_design`
  builds its public design.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import patsy

from dpstats.bounds import Interval
from dpstats.deprecation import MovedUp
from dpstats.errors import (
    DataTypeError,
    InvalidBoundsError,
    MissingBoundsError,
    MissingDataError,
    UnknownColumnError,
)
from dpstats.formula import Design
from dpstats.formula.design import finite_arrays
from dpstats.formula.language import FORMULA_ENV
from dpstats.formula.parse import join_terms, term
from dpstats.formula.schema import may_hold_missing
from dpstats.methods.spec import MethodSpec
from dpstats.numbers import cells_or_missing, in_memory, is_untyped_sequence, numbers_or_missing, rows_or_missing
from dpstats.validation import check_bounds_pair, pairs_declared

__all__ = ["formula_all", "array_design", "describe_arrays"]

def formula_all(data: Any, response: str, *, exclude: Sequence[str] = (), intercept: bool = True) -> str:
    """The formula "response ~ every other column" (R's ``y ~ .``) for :func:`dpstats.dp_ols`.

    Names that are not Python identifiers are quoted as ``Q('name')``.
    Categorical columns still need public levels (a Categorical dtype or
    ``levels=``).  Beyond 64 columns the terms are grouped in parentheses,
    which patsy reads as the same flat sum, so formulas with thousands of
    columns parse.

    Parameters
    ----------
    data : pandas.DataFrame or mapping
        A pandas DataFrame (or anything with ``.columns``) or a dict of
        arrays; only its column names are read.
    response : str
        The response column.
    exclude : sequence of str, optional
        Columns to leave out (identifiers, weights, ...).
    intercept : bool, default True
        Keep patsy's intercept (default, as in R) or drop it with ``- 1``.

    Returns
    -------
    str
        The formula, ``"response ~ a + b + ..."`` (with ``- 1`` when
        ``intercept=False``).

    Raises
    ------
    dpstats.errors.UnknownColumnError
        When the response or a name in ``exclude`` is not a column, or no
        column is left for the right-hand side.
    dpstats.errors.DataTypeError
        When ``data`` is neither a table nor a dict.

    Examples
    --------
    >>> import pandas as pd
    >>> from dpstats import formula_all
    >>> formula_all(pd.DataFrame(columns=["y", "age", "income"]), "y")
    'y ~ age + income'
    """
    columns = _column_names(data)
    if response not in columns:
        raise UnknownColumnError(f"the response '{response}' is not a column of the data; columns are: "
                                 f"{', '.join(columns)}")
    unknown = [c for c in exclude if c not in columns]
    if unknown:
        raise UnknownColumnError(f"exclude names {', '.join(map(str, unknown))}, which are not columns of the data")
    terms = [term(c) for c in columns if c != response and c not in set(exclude)]
    if not terms:
        raise UnknownColumnError("no columns are left for the right-hand side of the formula")
    return f"{term(response)} ~ {join_terms(terms)}" + ("" if intercept else " - 1")


def _column_names(data: Any) -> list[str]:
    """The column names of a table (anything with ``columns``) or the keys of a dict of arrays, as strings."""
    if hasattr(data, "columns"):
        return [str(c) for c in data.columns]
    if isinstance(data, Mapping):
        return [str(c) for c in data]
    raise DataTypeError("data must be a pandas DataFrame or a dict of equal-length arrays (only its column names "
                        f"are read), got {type(data).__name__}")


def _pair(value: Any, what: str) -> Interval:
    return Interval(*check_bounds_pair(what, value, what))


def _column_intervals(x_bounds: Any, names: list[str]) -> list[Interval | None]:
    d = len(names)
    if x_bounds is None:
        return [None] * d
    arr = np.asarray(x_bounds, dtype=object)
    if arr.shape == (2,):
        iv = _pair(x_bounds, "x_bounds")
        return [iv] * d
    if arr.shape != (d, 2):
        raise InvalidBoundsError(f"x_bounds must be one pair (lo, hi) for every column or {d} pairs, one per "
                                 f"column; got shape {arr.shape}")
    return [_pair(row, f"x_bounds for column '{name}'") for row, name in zip(x_bounds, names, strict=True)]


def describe_arrays(response_name: str, names: list[str]) -> str:
    """The formula-like label of an array fit (its report and results).

    Parameters
    ----------
    response_name : str
        The response's name.
    names : list of str
        The design columns' names (beyond eight, only the first and the last are shown).

    Returns
    -------
    str
        ``"y ~ x1 + x2 [arrays]"``.

    Examples
    --------
    >>> from dpstats.api_arrays import describe_arrays
    >>> describe_arrays("y", ["x1", "x2"])
    'y ~ x1 + x2 [arrays]'
    """
    rhs = " + ".join(names) if len(names) <= 8 else f"{names[0]} + ... + {names[-1]} ({len(names)} columns)"
    return f"{response_name} ~ {rhs} [arrays]"


def _float_array(a: Any, what: str) -> np.ndarray:
    """``a`` as a new float array; a non-numeric input is refused from its type (numpy's message would quote a
    value, so it is not passed on).  An input with no dtype of its own is read element by element, as a list is:
    whether ``np.array(a, dtype=float)`` succeeds is a fact of the values.  (A Dask collection, a pyarrow table and
    a pandas extension array are made pandas or numpy first by the caller: :func:`~dpstats.numbers.in_memory`.)"""
    if isinstance(a, (pd.DataFrame, pd.Series)):
        # pandas' own types decide, column by column (public); a missing value of a nullable type is NaN
        dtypes = list(a.dtypes.items()) if isinstance(a, pd.DataFrame) else [(a.name, a.dtype)]
        bad = [str(c) for c, dt in dtypes
               if not (pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_bool_dtype(dt))
               or isinstance(dt, pd.CategoricalDtype)]
        if bad:
            named = f"; its columns {', '.join(bad[:5])} are not" if isinstance(a, pd.DataFrame) else \
                f"; its dtype is {a.dtype}, not a number type"
            raise DataTypeError(f"{what} must be numeric{named} (convert it with a public rule first)")
        # a copy (the pipeline may rescale it in place); a value beyond the float range is inf, without a warning
        with np.errstate(all="ignore"):
            return a.to_numpy(dtype=float, na_value=np.nan, copy=True)
    dtype = getattr(a, "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind not in "biuf":
        # text or objects: whether every value parses as a number is a fact of the data, so the array's own type
        # decides
        raise DataTypeError(f"{what} must be a numeric array; its dtype is {dtype}, not a number type (convert it "
                            "with a public rule first)")
    if isinstance(dtype, np.dtype):
        try:  # numbers by their dtype: a failure comes from the container's type (a sparse matrix, ...)
            with np.errstate(all="ignore"):  # a long double beyond the float range is inf, without a warning
                return np.array(a, dtype=float)  # a copy: the pipeline may rescale it in place
        except (TypeError, ValueError):
            pass
        raise DataTypeError(f"{what} must be a dense array; a {type(a).__name__} cannot be read as one (convert "
                            "it with a public rule first)")
    return numbers_or_missing(a)  # no type of its own: each element is read by itself (docs/privacy.md)


def _rows(X: Any, column_names: Sequence[str] | None, x_bounds: Any) -> np.ndarray:
    """X given as a list of rows (a Python collection without a type of its own), read row by row at the width
    the call declares (:func:`dpstats.numbers.rows_or_missing`); refused, from the call alone, when it declares
    none: numpy would read the width from the rows, which one row of another length changes."""
    width = len(column_names) if column_names is not None else pairs_declared(x_bounds)
    if not width:
        raise DataTypeError("X is a list of rows, whose width would be read from the rows themselves (one row of "
                            "another length would change it): declare it with column_names= (one name per column) "
                            "or x_bounds= (one pair per column), or pass a 2-d numpy array or a DataFrame. Nothing "
                            "was read or spent")
    return rows_or_missing(X, width)


def _may_hold_missing(a: Any) -> bool:
    """Whether ``a``'s type lets it hold a missing value (public): a DataFrame's, column by column; a list's, yes
    (:func:`dpstats.numbers.numbers_or_missing` reads a non-number as missing)."""
    if isinstance(a, pd.DataFrame):
        return any(may_hold_missing(dt) for dt in a.dtypes)
    return may_hold_missing(getattr(a, "dtype", None))


def array_design(X: Any, y: Any, spec: MethodSpec | None, *, x_bounds: Any, y_bounds: Any,
                 column_names: Sequence[str] | None, response_name: str, intercept: bool,
                 screen: bool = False, missing: str | None = None) -> Design:
    """The public design of :func:`dpstats.dp_ols_arrays`: X itself (plus an intercept column when ``intercept``)
    and y as float arrays of the call's own, the declared ranges per column, and a DesignInfo for ``predict``
    built from the names only.  Bad input is a typed error; a method that needs bounds (``spec``) is refused,
    naming what is missing, when some are not declared.

    Parameters
    ----------
    X : array_like or pandas.DataFrame
        The design, n x d (numeric; a DataFrame's columns name the columns).
    y : array_like
        The response, n.
    spec : MethodSpec or None
        The method to fit (its ``needs_bounds``), or None.
    x_bounds : (float, float), sequence of (float, float) or None
        The declared range of every column (one pair), or one pair (or None) per column.
    y_bounds : (float, float) or None
        The declared range of the response.
    column_names : sequence of str or None
        The columns' names (default: a DataFrame's columns, else ``x1, ..., xd``).
    response_name : str
        The response's name.
    intercept : bool
        Add an intercept column (named ``Intercept``) in front.
    screen : bool
        A private fit's missing-value screen (:mod:`dpstats.privacy.missing_screen`) will count the rows with a
        missing value: where X's or y's type can hold one, each such row becomes a public null row (NaN marks) and
        every infinite value is set to 0 (a public map of its row, as in
        :func:`dpstats.formula.design.finite_arrays`) instead of a refusal decided by the values.
    missing : {"raise", "screen", "null", "drop"} or None
        How rows with a missing value are treated, the modes of :func:`dpstats.pipeline.missing_mode` (None: from
        ``screen``).  ``"null"`` (``missing="drop"`` in a private fit): each such row becomes a public null row, as
        with ``"screen"``, without the screen; ``"drop"`` (the non-private reference ``ols``): such rows are dropped;
        ``"raise"``: a missing or infinite value is refused.

    Returns
    -------
    Design
        The arrays, names, declared ranges (the intercept's is (1, 1)), missing bounds and the DesignInfo.

    Raises
    ------
    dpstats.errors.DataTypeError
        When X or y is not numeric, their shapes do not match, or the column names are not d distinct names
        (or include ``Intercept``).
    dpstats.errors.MissingDataError
        When X or y has a missing or infinite value and there is no screen (the non-private reference ``ols``).
    dpstats.errors.MissingBoundsError
        When ``spec`` needs bounds and some column or the response has none.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.api_arrays import array_design
    >>> design = array_design(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]]), [1.0, 2.0, 3.0], None,
    ...                       x_bounds=(0, 10), y_bounds=(0, 5), column_names=None, response_name="y",
    ...                       intercept=True)
    >>> design.column_names, design.X.shape
    (['Intercept', 'x1', 'x2'], (3, 3))
    """
    X, y = in_memory(X), in_memory(y)  # a Dask collection is read as its computed result, by type
    if column_names is None and isinstance(X, pd.DataFrame):
        column_names = [str(c) for c in X.columns]
    Xa = _rows(X, column_names, x_bounds) if is_untyped_sequence(X) else _float_array(X, "X")
    ya = cells_or_missing(y) if is_untyped_sequence(y) else _float_array(y, "y").ravel()
    if Xa.ndim != 2 or Xa.shape[0] != ya.size or Xa.shape[1] == 0:
        raise DataTypeError(f"X must be 2-d (n x d) and y of length n; got X {Xa.shape} and y of length {ya.size}")
    mode = missing if missing is not None else ("screen" if screen else "raise")
    nulls = None
    notes = ["design given as arrays (dp_ols_arrays)"]
    if mode == "drop":  # the non-private reference: the rows with a missing value go, as patsy drops them
        kept = ~(np.isnan(Xa).any(axis=1) | np.isnan(ya))
        Xa, ya = Xa[kept], ya[kept]
        notes.append("rows with missing values were dropped (missing='drop'); the remaining n is treated as public")
    screened = mode == "screen" and (_may_hold_missing(X) or _may_hold_missing(y))
    if screened or mode == "null":
        nulls = np.isnan(Xa).any(axis=1) | np.isnan(ya)
    elif not (np.isfinite(Xa).all() and np.isfinite(ya).all()):
        raise MissingDataError("X or y contains missing or infinite values; impute them with a public rule first"
                               + (" or pass missing='drop'" if mode == "raise" else ""))
    if mode == "null":
        notes.append("missing='drop': each row with a missing value in X or y became a public null row (design row "
                     "and response zero after clipping), which adds nothing to the released sums; n counts every "
                     "row and is public, the number of complete rows is private and not reported")
    n, d = Xa.shape
    names = [f"x{j + 1}" for j in range(d)] if column_names is None else [str(c) for c in column_names]
    if len(names) != d or len(set(names)) != d:
        raise DataTypeError(f"column_names must be {d} distinct names, one per column of X")
    if "Intercept" in names:
        raise DataTypeError("'Intercept' is reserved for the column added by intercept=True")

    intervals = _column_intervals(x_bounds, names)
    y_interval = None if y_bounds is None else _pair(y_bounds, "y_bounds")
    if intercept:
        Xa = np.column_stack([np.ones(n), Xa])
        names = ["Intercept", *names]
        intervals = [Interval(1.0, 1.0), *intervals]
    if nulls is not None:
        Xa, ya = finite_arrays(Xa, ya[:, None], nulls)
    unbounded = [nm for nm, iv in zip(names, intervals, strict=True) if iv is None]
    if y_interval is None:
        unbounded.append(f"{response_name} (response)")
    if spec is not None and spec.needs_bounds and unbounded:
        raise MissingBoundsError(
            f"method '{spec.name}' needs public bounds on every column and on the response; missing for: "
            f"{', '.join(unbounded[:5])}{' ...' if len(unbounded) > 5 else ''}. Pass x_bounds=(lo, hi) (all columns) "
            "or one pair per column, and y_bounds=(lo, hi), from domain knowledge (never from the data).")
    # the DesignInfo that predict() evaluates on new data, built from the names only (no formula parsing)
    features = [nm for nm in names if nm != "Intercept"]
    terms = ([patsy.INTERCEPT] if intercept else []) + [patsy.Term([patsy.EvalFactor(term(nm))]) for nm in features]
    public_row = {nm: np.zeros(1) for nm in features}
    design_info = patsy.design_matrix_builders([terms], lambda: iter([public_row]), FORMULA_ENV)[0]
    return Design(X=Xa, y=ya, column_names=names, response_name=response_name, design_info=design_info,
                  column_intervals=intervals, response_interval=y_interval, missing_bounds=unbounded,
                  notes=notes, numeric_variables=list(names),
                  null_rows=screened or mode == "null", screened=(*features, response_name) if screened else ())


#: deprecated names that moved to a module above this one (``dp_ols_arrays``: :mod:`dpstats.api`, which adds it)
MOVED_UP = MovedUp("dpstats.api_arrays")


def __getattr__(name: str) -> Any:
    return MOVED_UP.get(name)
