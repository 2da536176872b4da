"""What a column's values are, from public facts: which dtypes hold numbers, advice for dates and durations, and
the rule that matches values to declared levels (:func:`level_codes`).

Row-wise helpers without a dependency on the rest of the formula layer, shared by
:mod:`dpstats.formula.frame` (which prepares the rows) and :mod:`dpstats.formula.language` (which evaluates factor
code: ``C(..., levels=[...])`` maps values onto the levels by the same rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["date_advice", "duration_advice", "level_codes", "level_objects", "onto_levels", "raw_level_codes",
           "real_numeric_dtype"]


def duration_advice(name: str, dtype: Any, frame: str = "df", factor: bool = True) -> str:
    """How to use column ``name`` as a number when its dtype holds durations (``timedelta64``), else "".

    Decided from the dtype alone (the schema), never from a value.

    Parameters
    ----------
    name : str
        The column.
    dtype : dtype
        Its dtype.
    frame : str
        The table's name in the example: ``"df"`` for a fit (which then needs bounds in the new unit),
        ``"newdata"`` for predictions (in the unit the model was fitted in).
    factor : bool
        Whether the column could be a factor instead (not for the response).

    Returns
    -------
    str
        A sentence (with a leading space) naming a conversion to a public unit, or "" for other dtypes.
    """
    if not pd.api.types.is_timedelta64_dtype(dtype):
        return ""
    example = f"e.g. {frame}[{name!r}] = {frame}[{name!r}].dt.total_seconds() / 3600 for hours"
    how = (f"to a public unit, {example}, and declare bounds for it in that unit" if frame == "df"
           else f"to the unit the model was fitted in, {example}")
    use = ", which a formula can use only as a factor with declared levels; to use it as a number," if factor else ";"
    return f" '{name}' holds durations (dtype {dtype}){use} convert it first {how}."


def date_advice(name: str, dtype: Any) -> str:
    """How to use column ``name`` as a number when its dtype holds dates (``datetime64``), else "".

    Decided from the dtype alone (the schema), never from a value.

    Parameters
    ----------
    name : str
        The column.
    dtype : dtype
        Its dtype.

    Returns
    -------
    str
        A sentence (with a leading space) naming a conversion with a public origin and unit, or "" for other
        dtypes.
    """
    if not pd.api.types.is_datetime64_any_dtype(dtype):
        return ""
    return (f" '{name}' holds dates (dtype {dtype}), which a formula can use only as a factor; to use it as a "
            f"number, convert it before the fit with a public origin and unit, e.g. "
            f"(df[{name!r}] - pd.Timestamp('2000-01-01')).dt.days, and declare bounds for the new column.")



def real_numeric_dtype(dtype: Any) -> bool:
    """Whether a dtype holds real numbers or booleans (numeric, not complex, not a Categorical): what a formula
    may use as a number.  Complex numbers are refused: their imaginary parts would be dropped, or fail, inside the
    design (from the dtype alone).

    Parameters
    ----------
    dtype : numpy or pandas dtype
        A column's dtype.

    Returns
    -------
    bool
    """
    return (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
            and not isinstance(dtype, pd.CategoricalDtype))



def onto_levels(col: pd.Series, levels: Sequence[Any]) -> pd.Series:
    """``col`` with every value replaced by the declared level it equals, and every value outside the declared
    ``levels`` by the first of them (:func:`level_codes`): a public map of each row onto the declared schema, for
    ``C(..., levels=[...])`` as patsy evaluates it.  A row on which a value is outside the levels has been made a
    public null row before, by :class:`FramePlan` (for ``C(expression, levels=[...])``, whose values patsy
    computes, by evaluating the expression first: ``FramePlan.computed``), so the first level is read only on such
    rows, whose design rows are marked (and on public rows: the schema, the prototype).  Every value of the
    result is one of the declared level objects themselves (an object column), so patsy, whose own matching of
    values to levels is stricter about types than equality (an integer 0 is not the level False there), never
    meets a value it cannot place: a refusal would otherwise depend on which values the rows hold."""
    return pd.Series(level_objects(levels)[level_codes(col, levels)], index=col.index)


def level_objects(levels: Sequence[Any]) -> np.ndarray:
    """The declared level objects themselves, as an object array indexed by level code.

    Parameters
    ----------
    levels : sequence
        The declared levels.

    Returns
    -------
    numpy.ndarray
        An object array of the levels.
    """
    table = np.empty(len(levels), dtype=object)
    table[:] = list(levels)
    return table


def level_codes(col: pd.Series, levels: Sequence[Any]) -> np.ndarray:
    """(n,) the index in ``levels`` of the declared level each value equals (the first such level), 0 for a
    value equal to none of them (:class:`FramePlan` has made such a row a null row first): one rule for every row
    and every dtype, Python equality (``0 == False``, ``1 == 1.0``).  In an object column a value is a level only
    where it is hashable and equal to one (an array, a list or a dict in a cell is outside, where ``isin`` would
    take the one-element array ``array(['a'])`` for the level 'a')."""
    return np.maximum(raw_level_codes(col, levels), 0)


def raw_level_codes(col: pd.Series, levels: Sequence[Any]) -> np.ndarray:
    """(n,) as :func:`level_codes`, with -1 for a value (or a missing cell) equal to no declared level.

    Parameters
    ----------
    col : pandas.Series
        The values.
    levels : sequence
        The declared levels.

    Returns
    -------
    numpy.ndarray
        The index of each value's level, -1 where it has none (intp).
    """
    if isinstance(col.dtype, pd.CategoricalDtype):  # its categories by the object rule (pandas' isin is stricter)
        by_category = raw_level_codes(pd.Series(np.asarray(col.cat.categories, dtype=object)), levels)
        codes = col.cat.codes.to_numpy()
        return np.where(codes >= 0, by_category[np.maximum(codes, 0)] if len(by_category) else -1,
                        -1).astype(np.intp)
    if col.dtype == object:
        index: dict[Any, int] = {}
        for j, level in enumerate(levels):
            index.setdefault(level, j)
        return np.fromiter((_level_index(v, index) for v in col), dtype=np.intp, count=len(col))
    codes = np.full(len(col), -1, dtype=np.intp)
    left = np.ones(len(col), dtype=bool)
    for j, level in enumerate(levels):
        try:
            hit = left & col.isin([level]).to_numpy(dtype=bool)
        except Exception:  # noqa: BLE001 - any failure of the whole-column comparison: each cell by itself
            # pandas converts the whole column to compare it, which fails where one value does not convert: a time
            # beyond the range of the finer unit of the column and the level (a date in the year 300,000 stored in
            # seconds, a level in microseconds), an Arrow integer beyond 2^53 beside a float level (pyarrow casts
            # the column to float64 exactly or raises).  The object rule reads each cell by itself, with the same
            # equality on every value the conversion can hold, so one row cannot refuse the fit (before: an
            # untyped failure, at no cost)
            return raw_level_codes(col.astype(object), levels)
        codes[hit] = j
        left &= ~hit
    return codes


def _level_index(value: Any, index: dict[Any, int]) -> int:
    """One cell's level index: that of the declared level it is hashable and equal to, else -1."""
    try:
        return index.get(value, -1)
    except Exception:  # noqa: BLE001 - unhashable (an array, a list, a dict) or a hash or == that raises: outside
        return -1
