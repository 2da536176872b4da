"""How a data frame (the whole data, or one chunk of it) is prepared for the public design: :class:`FramePlan`.

The plan is decided from public facts (the formula, the declared levels and
bounds, the schema) by :mod:`dpstats.formula.schema`; here it is applied to
rows: missing values (refused, public null rows, or dropped for the
non-private reference), declared levels (a value outside them is a schema
violation, refused without naming the value), clipping of the raw variables
that enter a transform, and the numpy dtypes patsy reads for columns with
pandas extension dtypes (nullable ``boolean``, ``Int64``, ``Float64``,
``string``; ``pd.NA`` being a missing value).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from dpstats.errors import DataTypeError, FormulaError, MissingDataError
from dpstats.formula.language import computed_level_codes
from dpstats.formula.parse import ComputedFactor
from dpstats.formula.values import (
    date_advice,
    duration_advice,
    level_codes,
    level_objects,
    onto_levels,
    raw_level_codes,
    real_numeric_dtype,
)

__all__ = ["onto_levels", "raw_level_codes", "level_codes", "FramePlan", "as_frame", "check_unique_columns",
           "date_advice", "duration_advice", "is_numeric", "is_numeric_dtype", "real_numeric_dtype", "float64_values",
           "missing_cell", "missing_cells", "numpy_columns"]


def as_frame(data: Any, what: str = "data") -> pd.DataFrame:
    """The data as a DataFrame.

    Parameters
    ----------
    data : pandas.DataFrame or mapping
        A DataFrame (returned as it is) or a dict of equal-length arrays.
    what : str
        How the messages name the argument (``"newdata"`` for predictions).

    Returns
    -------
    pandas.DataFrame
        The table.

    Raises
    ------
    DataTypeError
        Anything else, or arrays that cannot form a table (pandas' message, which may quote values, is not passed
        on).
    """
    if isinstance(data, pd.DataFrame):
        return _named_by_text(data)
    if isinstance(data, Mapping):
        frame = _frame_from_mapping(data)
        if frame is None:
            raise DataTypeError(f"{what} is a dict whose arrays cannot form a table (their lengths or shapes "
                                "differ); pass equal-length 1-d arrays")
        return frame
    larger = (" (data larger than memory: a CSV or Parquet path, a list of paths, a Dask DataFrame or a "
              "dpstats.rows.sources DataSource; a pandas reader with chunksize= is not accepted, pass its path)"
              if what == "data" else "")
    raise DataTypeError(f"{what} must be a pandas DataFrame or a dict of equal-length arrays{larger}, got "
                        f"{type(data).__name__}")


def _named_by_text(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every column named by its name as text, as the formula reads it (``str(name)``: a frame built
    from a numpy array has the integer names 0, 1, ...): a shallow copy where a name is not text, after the check
    that no two names read the same (:func:`check_unique_columns`).  Public: the schema only."""
    if all(isinstance(c, str) for c in frame.columns):
        return frame
    check_unique_columns(list(frame.columns))
    out = frame.copy(deep=False)
    out.columns = [str(c) for c in frame.columns]
    return out


def check_unique_columns(columns: Sequence[Any]) -> None:
    """Refuse a table in which two columns have the same name (as the formula reads it, ``str(name)``).

    Column names are the public schema: a name must pick out one column, or
    neither the formula nor ``bounds=`` and ``levels=`` can say which is
    meant.  Decided from the names alone, before any row is read.

    Parameters
    ----------
    columns : sequence
        The table's column names.

    Raises
    ------
    FormulaError
        A name is used by more than one column (the message names every such name).
    """
    names = [str(c) for c in columns]
    counts = Counter(names)
    twice = [c for c in dict.fromkeys(names) if counts[c] > 1]
    if twice:
        listed = ", ".join(repr(c) for c in twice)
        raise FormulaError(
            f"the data have more than one column named {listed}: each column name must be unique (it is how the "
            "formula, bounds= and levels= name a column). Rename them (e.g. set df.columns to unique names) or drop "
            "the extra copies; no budget was spent.")


def _frame_from_mapping(data: Mapping[str, Any]) -> pd.DataFrame | None:
    """A DataFrame of the mapping's arrays, or None (pandas' message is not passed on: it may quote values).

    An array of objects (a list's cells: :func:`dpstats.numbers.typed_columns`) stays a column of objects: pandas,
    given it as an array, infers dates, durations, periods or intervals where every cell is one and keeps objects
    where one cell is not, a type one row would decide (and with it the free refusals read from the dtype)."""
    columns = {k: np.asarray(v) if not isinstance(v, pd.Series) else v for k, v in data.items()}
    try:
        frame = pd.DataFrame(columns)
        for k, v in columns.items():
            if isinstance(v, np.ndarray) and v.dtype == object and v.ndim == 1:  # its cells, on the frame's index
                frame[k] = pd.Series(v, index=frame.index, dtype=object)
    except (ValueError, TypeError):
        return None
    return frame


def is_numeric(series: pd.Series) -> bool:
    """Whether a column can carry a declared range, from its dtype alone.

    Parameters
    ----------
    series : pandas.Series
        A column (or a zero-row column of the schema).

    Returns
    -------
    bool
        Its dtype is real numeric: numeric, not boolean, not complex.
    """
    return is_numeric_dtype(series.dtype)


def is_numeric_dtype(dtype: Any) -> bool:
    """:func:`is_numeric` of a column of this dtype.

    Parameters
    ----------
    dtype : numpy or pandas dtype
        A column's dtype.

    Returns
    -------
    bool
        The dtype is real numeric: numeric, not boolean, not complex.
    """
    return real_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


@dataclass(frozen=True)
class FramePlan:
    """How a data frame (the whole data, or one chunk of it) is prepared for the public design.

    Decided from the formula, the declared levels and bounds and the schema
    only, and picklable (it holds no patsy objects), so every chunk and every
    worker of a cluster prepares its rows identically:

    * keep the variables the formula uses; a boolean response becomes 0/1;
    * variables with declared levels become pandas Categoricals with exactly
      those categories, and variables whose levels are written in the formula
      (``C(g, levels=[...])``) are held to them: a row with a value outside the
      declared levels (:func:`level_codes`) is handled as a row with a
      missing value (below: a public map of each row; a refusal decided by a
      value would answer, for free, whether any row has a value outside a
      level set the caller chose); so is a row on which a factor of an
      expression, ``C(expression, levels=[...])``, computes a value outside
      its levels (``computed``);
    * raw variables that enter a transform are clipped to their declared
      range (``clip``), so the transform is evaluated inside the range on
      which its domain was checked;
    * missing values and values outside the declared levels: ``"raise"`` (a
      schema violation), ``"null"`` or ``"screen"`` (such a row becomes the public null row
      ``fill``, evaluated like any row and then marked, see
      :func:`dpstats.formula.design.build_design`; with ``"screen"`` the
      marked rows are counted by the fit's charged missing-value screen) or
      ``"drop"`` (the rows
      are removed: only for the non-private reference ``ols``, whose n need
      not be protected).

    Attributes
    ----------
    variables : tuple of str
        The variables the formula uses, in order of first use.
    bool_responses : tuple of str
        Boolean response variables, read as 0/1.
    levels : tuple of (str, tuple)
        Declared levels (``levels=``): the column becomes a Categorical with exactly these categories.
    clip : tuple of (str, float, float)
        The declared range of each raw variable that enters a transform.
    missing : str
        ``"raise"``, ``"null"``, ``"screen"`` or ``"drop"``.
    allowed : tuple of (str, tuple)
        Levels written in the formula (``C(g, levels=[...])``), checked before patsy sees the column.
    fill : tuple of (str, Any)
        The public null row (``missing="null"``), from public facts only.
    screened : tuple of str
        With ``missing="screen"``: the variables that can produce a null row (public: the schema and the declared
        levels; :func:`dpstats.formula.schema.can_produce_null_row`), which the missing-value screen covers and its
        messages name.
    off_levels : tuple of str
        Among ``screened``, the variables whose public type does not keep their values inside their declared
        levels (named by the screen's messages as the ones that can have a value outside them), and the codes of
        the ``computed`` factors.
    computed : tuple of ComputedFactor
        The factors ``C(expression, levels=[...])`` that can compute a value outside their levels (public: the
        formula, the levels and the schema; :func:`dpstats.formula.schema.computed_may_leave_levels`): a row on
        which one does is handled as a row with a value outside a column's declared levels.  Their codes are
        among ``screened`` and ``off_levels`` (with ``missing="screen"``), as the names the messages give.
    """

    variables: tuple[str, ...]
    bool_responses: tuple[str, ...] = ()
    levels: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    clip: tuple[tuple[str, float, float], ...] = ()
    missing: str = "raise"
    allowed: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    fill: tuple[tuple[str, Any], ...] = ()
    screened: tuple[str, ...] = ()
    off_levels: tuple[str, ...] = ()
    computed: tuple[ComputedFactor, ...] = ()

    def prepare(self, df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The prepared frame and, with ``missing="null"`` or ``"screen"``, the mask of its null rows (None when it
        has none).

        Missing values (NaN, None, ``pd.NA``) and values outside the declared levels are handled first, so that the
        columns with a pandas extension dtype (nullable ``boolean``, ``Int64``,
        ``Float64``, ``string``, Arrow-backed) can then be given the numpy
        dtype patsy understands (:func:`numpy_columns`).  Then each factor of ``computed`` is evaluated on the
        prepared rows, as patsy evaluates it (:func:`dpstats.formula.language.computed_level_codes`), and a row on
        which its value is outside its levels is handled in the same way: refused with ``missing="raise"``,
        dropped with ``"drop"``, else the rows are prepared again with it among the null rows.

        Parameters
        ----------
        df : pandas.DataFrame
            The rows (the whole data, a chunk, or the zero-row schema).

        Returns
        -------
        tuple of (pandas.DataFrame, numpy.ndarray or None)
            The prepared frame and the mask of its null rows.

        Raises
        ------
        MissingDataError
            A missing value or a value outside the declared levels with ``missing="raise"`` (naming the variables,
            never a row, a value or a count).
        """
        variables = list(self.variables)
        if variables and (len(df.columns) != len(variables) or set(df.columns) != set(variables)):
            df = df[variables]  # (a column list copies a consolidated frame's block: not done for a mere reorder)
        prepared, nulls = self._prepare(df)
        if not self.computed or len(prepared) == 0:
            return prepared, nulls
        off = self._computed_outside(prepared)
        if off is None:
            return prepared, nulls
        if self.missing == "drop":  # (the rows dropped for a missing value are gone already)
            return prepared[~off], None
        # every row made a null row before is one still: its values are the public fill, computed again below
        return self._prepare(df, off if nulls is None else off | nulls)

    def _computed_outside(self, prepared: pd.DataFrame) -> np.ndarray | None:
        """The mask of the prepared rows on which a factor of ``computed`` is outside its levels (None: no row is);
        refused with ``missing="raise"``, naming the factors (never a row, a value or a count)."""
        masks = {c.code: computed_level_codes(c, prepared) < 0 for c in self.computed}
        outside = [code for code, mask in masks.items() if mask.any()]
        if not outside:
            return None
        if self.missing == "raise":
            raise MissingDataError(_refusal([], outside))
        return np.logical_or.reduce([masks[code] for code in outside])

    def _prepare(self, df: pd.DataFrame, extra: np.ndarray | None = None) -> tuple[pd.DataFrame, np.ndarray | None]:
        """:meth:`prepare` of the columns (``df`` holds exactly ``variables``), with the rows of ``extra`` made null
        rows too (rows on which a computed factor is outside its levels)."""
        variables = list(self.variables)
        nulls = None
        masks = {v: missing_cells(df[v]) for v in variables}
        # each factor's level codes, read once: -1 marks a cell outside the declared levels (or missing)
        codes = {v: raw_level_codes(df[v], lv) for v, lv in (*self.levels, *self.allowed)}
        off = {v: (c < 0) & ~masks[v] for v, c in codes.items()}
        absent = [str(v) for v in variables if masks[v].any()]
        outside = [str(v) for v, mask in off.items() if mask.any()]
        for v, mask in off.items():
            masks[v] = masks[v] | mask
        bad = [str(v) for v in variables if masks[v].any()]
        if bad or extra is not None:
            if self.missing == "raise":
                raise MissingDataError(_refusal(absent, outside))
            incomplete = np.logical_or.reduce([masks[v] for v in bad] + ([] if extra is None else [extra]))
            if self.missing == "drop":
                df = df[~incomplete]
                codes = {v: c[~incomplete] for v, c in codes.items()}
            else:
                df, nulls = self._null_rows(df, incomplete)
                # a null row holds the factor's first declared level (the public fill), whose code is 0
                codes = {v: np.where(incomplete, 0, c) for v, c in codes.items()}
        df = numpy_columns(df, variables)
        if self.bool_responses or self.levels or self.allowed or self.clip:
            # a shallow copy, so that the columns assigned below never replace the caller's (before, the columns of
            # C(g, levels=[...]) did where no other step had copied the frame: the caller's DataFrame then changed
            # type, or not, as one row of it was missing or outside the levels, which a later fit refused on)
            df = df.copy(deep=False)
        for v in self.bool_responses:  # a binary response is a linear probability model: False/True -> 0/1
            df[v] = df[v].astype(float)
        for var, lv in self.levels:
            df[var] = pd.Categorical.from_codes(np.maximum(codes[var], 0), categories=list(lv))
        for var, lv in self.allowed:
            df[var] = pd.Series(level_objects(lv)[np.maximum(codes[var], 0)], index=df.index)
        for var, lo, hi in self.clip:  # (inf becomes NaN, which the design sets to 0: as an unclipped inf)
            values = float64_values(df[var])
            df[var] = np.where(np.isinf(values), np.nan, np.clip(values, lo, hi))
        return df, nulls

    def _null_rows(self, df: pd.DataFrame, nulls: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
        """``df`` with every row that has a missing value or a value outside the declared levels (``nulls``, from
        :func:`missing_cells` and :func:`level_codes`) replaced by the public null row, and their mask."""
        fill = dict(self.fill)
        out = df.copy()
        for v in self.variables:
            value = fill.get(v)
            if value is None:  # text without declared levels (allow_data_levels=True): a value the column has
                present = out.loc[~nulls, v]
                value = present.iloc[0] if len(present) else ""
            if isinstance(out[v].dtype, pd.CategoricalDtype) and value not in out[v].cat.categories:
                out[v] = out[v].cat.add_categories([value])  # a declared level the schema's categories lack
            elif _extension_numbers(out[v].dtype):  # float64 now, as numpy_columns makes it: a decimal column
                out[v] = out[v].to_numpy(dtype=np.float64, na_value=np.nan)  # cannot take a float null value
            # where() widens a dtype that cannot hold the value (1.5 or True in an int column), which .loc refuses
            try:
                out[v] = out[v].where(~nulls, value)
            except Exception:  # noqa: BLE001 - the widening failed on a value of the column: cell by cell instead
                # a date column in seconds and a first declared level with a fraction of a second: pandas converts
                # the column to the finer unit, which fails where one date is beyond that unit's range (the year
                # 300,000).  As objects, each cell keeps its value; a variable with declared levels is then rebuilt
                # from its level codes in prepare(), so the result is the same as where the widening succeeds
                out[v] = out[v].astype(object).where(~nulls, value)
        return out, nulls


def _refusal(absent: Sequence[str], outside: Sequence[str]) -> str:
    """The message of :class:`FramePlan`'s refusal with ``missing="raise"``: the variables with a missing value and
    those (or the computed factors) with a value outside the declared levels, by name only."""
    found = " and ".join([*([f"missing values in {', '.join(absent)}"] if absent else []),
                          *([f"values outside the declared levels in {', '.join(outside)}"] if outside else [])])
    return (f"{found}. Impute missing values with a public rule and declare every level a factor takes, "
            "or pass missing='drop' (each such row then becomes a public null row that adds nothing to the "
            "fit; n stays public and the number of complete rows private).")


def missing_cells(col: pd.Series) -> np.ndarray:
    """(n,) bool: which cells of ``col`` are missing (NaN, None, ``pd.NA``, ``NaT``, a decimal NaN), by a rule that
    looks at each cell alone and never raises.

    pandas' own check (``isna``) decides each cell by itself too, but in an object column it compares a decimal with
    itself, which raises ``decimal.InvalidOperation`` for a signalling NaN (``Decimal('sNaN')``): one such cell would
    then refuse the whole data at no cost.  Where pandas' check raises, each cell is read by
    :func:`missing_cell`, which gives the same answer as pandas for every cell pandas can read, reads a decimal
    NaN of either kind as missing (as :func:`dpstats.numbers.number_or_missing` does), and reads any other cell
    pandas cannot check as present (a value: in a factor with declared levels, one outside them,
    a null row: :class:`FramePlan`).

    Parameters
    ----------
    col : pandas.Series
        A column.

    Returns
    -------
    numpy.ndarray
        The mask of its missing cells.
    """
    dtype = col.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":  # pandas' answer for these dtypes, without its Series
        return np.zeros(len(col), dtype=bool)
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return np.isnan(col.to_numpy())
    try:
        return np.asarray(col.isna(), dtype=bool)
    except Exception:  # a cell pandas' check fails on (Decimal('sNaN')): each cell by itself
        return np.fromiter((missing_cell(v) for v in col), dtype=bool, count=len(col))


def missing_cell(value: Any) -> bool:
    """Whether one cell (of an object column, or a declared level) is missing: where pandas reads it so (a scalar
    only: a list, an array or a dict in a cell is a value) or it is a decimal NaN; a cell pandas' check raises on is
    a value.  Never raises.

    Parameters
    ----------
    value : Any
        The cell.

    Returns
    -------
    bool
    """
    if isinstance(value, Decimal):
        return value.is_nan()  # quiet or signalling ('sNaN', whose comparison raises)
    try:
        missing = pd.isna(value)
    except Exception:  # a cell whose own comparison fails: a value, like an array in a cell
        return False
    return bool(missing) if isinstance(missing, (bool, np.bool_)) else False


def _extension_numbers(dtype: Any) -> bool:
    """Whether a dtype is a pandas extension type of real numbers (``Int64``, ``Float64``, ``double[pyarrow]``,
    ``decimal128[pyarrow]``, ...), not booleans: read as float64 (from the dtype alone)."""
    return (isinstance(dtype, pd.api.extensions.ExtensionDtype) and real_numeric_dtype(dtype)
            and not pd.api.types.is_bool_dtype(dtype))


def float64_values(values: Any) -> np.ndarray:
    """``values`` (a Series, or anything ``np.asarray`` reads) as float64, with numpy's warnings switched off: a
    finite value beyond the float range (a ``np.longdouble`` of 1e4000) becomes infinite, and is then mapped as any
    non-finite value is, where numpy would warn "overflow encountered in cast" for that data set only.

    Parameters
    ----------
    values : pandas.Series or array_like
        The values.

    Returns
    -------
    numpy.ndarray
        float64.
    """
    with np.errstate(all="ignore"):
        if isinstance(values, pd.Series):
            return values.to_numpy(dtype=np.float64)
        return np.asarray(values, dtype=np.float64)


def numpy_columns(df: pd.DataFrame, variables: Sequence[str]) -> pd.DataFrame:
    """``df`` with its pandas extension-dtype columns among ``variables`` given numpy dtypes patsy can read.

    Nullable ``boolean`` becomes ``bool`` (so it is a declared two-level
    factor, as ``bool`` is), nullable integers and floats (``Int64``,
    ``Float64``, Arrow-backed numbers, decimals included) ``float64``, ``string``
    becomes ``object``, a sparse boolean ``bool`` (sparse numbers are ``float64``, as other
    extension numbers); integers of any width (``int64``, ``uint8``, ``Int64``)
    and floats narrower or wider than 64 bits (``float16``, ``float32``, ``Float32``, ``longdouble``) become
    ``float64`` (a long double beyond the float range infinite, without a warning), so
    that a transform of a finite value is computed in double precision and
    never in integer arithmetic, which wraps around without an error.  A
    decision on the dtype alone (schema); the columns must hold no missing
    values (they are checked before).  Categoricals and
    numpy columns are left alone, and ``df`` is returned as it is when no
    column needs converting.

    Parameters
    ----------
    df : pandas.DataFrame
        The rows, without missing values in ``variables``.
    variables : sequence of str
        The columns the formula uses.

    Returns
    -------
    pandas.DataFrame
        ``df`` with those columns converted (a shallow copy), or ``df`` itself.
    """
    converted: dict[str, Any] = {}
    for v in variables:
        dt = df[v].dtype
        if isinstance(dt, np.dtype) and (dt.kind in "iu" or (dt.kind == "f" and dt.itemsize != 8)):
            # transforms in double precision: I(x * x) at 3e38; and no integer arithmetic, which wraps around
            # silently (I(x ** 40) of an int64 11 is a finite, wrong number); a long double beyond the float range
            # is inf here, without numpy's warning for that data set (float64_values)
            converted[v] = float64_values(df[v])
            continue
        if not isinstance(dt, pd.api.extensions.ExtensionDtype) or isinstance(dt, pd.CategoricalDtype):
            continue
        numpy_dtype = getattr(dt, "numpy_dtype", None)
        if isinstance(dt, pd.SparseDtype) and pd.api.types.is_bool_dtype(dt.subtype):
            # a sparse boolean is a boolean (a declared two-level factor, 0/1 as a number or the response); patsy
            # could not read it, and the messages called its dtype object
            converted[v] = df[v].to_numpy(dtype=bool)
        elif _extension_numbers(dt):  # Arrow decimals too, whose numpy_dtype is object (patsy would see a factor)
            converted[v] = df[v].to_numpy(dtype=np.float64)
        elif numpy_dtype is not None and pd.api.types.is_bool_dtype(dt):
            converted[v] = df[v].to_numpy(dtype=numpy_dtype)
        elif pd.api.types.is_string_dtype(dt):
            converted[v] = df[v].to_numpy(dtype=object)
    if not converted:
        return df
    out = df.copy(deep=False)
    for v, values in converted.items():
        out[v] = values
    return out
