"""How a CSV line becomes a row and a field becomes a value: rules that look at one line only.

A CSV file stores no types and no guarantee that every line has the header's number of fields.  Whatever a line
holds, it must become one row of the data set, read by a rule that looks at that line alone: otherwise one
person's line could change how other lines are read (pandas takes the first column as an index when the first
data line has one field more than the header, shifting every row of the file), or refuse the file for free (a
field that does not fit a declared type, a line with extra fields), an oracle on one row (``docs/privacy.md``,
"CSV column types are public").  The rules:

* a declared type is one of the kinds a row can always take: a number (a numpy integer or float dtype, or
  pandas' nullable integers and floats), a boolean, or text (``str``, ``object``, ``string``, ``category``);
  anything else is refused when the source is made, from the declaration (:func:`schema_type`);
* a column declared as integers can hold a missing value (pandas' nullable integer of the same width); a field
  is kept where it reads as a whole number inside the dtype's range (:func:`whole_numbers`), else it is missing;
* a column declared boolean reads ``True``/``true``/``TRUE`` and ``False``/``false``/``FALSE`` (pandas' default
  tokens) and a number that is 1 or 0 (``1``, ``0``, ``1.0``: a 0/1 column, as pandas' parser reads a column
  declared ``bool``), everything else is missing (:func:`booleans`);
* a number is read by pandas' parser, and from a chunk on where it cannot read a field, by :func:`text_number`,
  which gives every field the parser reads the parser's value (``CSVSource``; the boolean tokens are 1 and 0),
  NaN for the rest; in a column declared as a narrower float (``float32``, ``float16``) a number beyond its range
  is infinite, without numpy's overflow warning, which only the data sets holding such a number would show;
* a line with more fields than the header is a row of missing values, by the rule of
  :mod:`dpstats.rows.csv_lines`, which rewrites every line before pandas reads it (one trailing empty field, a
  delimiter at the end of the line: ``1,2,`` under the header ``a,b``, is not a field).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpstats.errors import DataTypeError

#: pandas' default boolean tokens of ``read_csv``
TRUE_TOKENS, FALSE_TOKENS = frozenset({"True", "true", "TRUE"}), frozenset({"False", "false", "FALSE"})


def schema_type(column: str, declared: Any) -> Any:
    """The public type of a column whose type the caller declared: numpy integers become pandas' nullable integer
    of the same width and a boolean pandas' nullable boolean (so that a field that does not fit is a missing
    value, counted by the missing-value screen, instead of a free refusal); other numbers and text stay as
    declared.  Any other declaration (a date, a complex number, ...) is refused, from the declaration only."""
    try:
        dtype = pd.api.types.pandas_dtype(declared)
    except (TypeError, ValueError, NotImplementedError):  # pandas refuses "decimal128(10, 2)[pyarrow]" with the last
        raise DataTypeError(f"CSVSource(dtype=...) gives column '{column}' a type pandas does not know") from None
    if isinstance(dtype, pd.CategoricalDtype) and dtype.categories is None:
        # "category" without categories: text, whose levels the call declares (pandas would take the categories
        # from the rows; before, every chunk failed to convert, after the budget was reserved)
        return "str"
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return pd.api.types.pandas_dtype(dtype.name.capitalize() if dtype.kind == "i" else "U" + dtype.name[1:]
                                         .capitalize())
    if pd.api.types.is_bool_dtype(dtype):
        return pd.BooleanDtype()
    if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_float_dtype(dtype) \
            or isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_string_dtype(dtype):
        return dtype
    raise DataTypeError(f"CSVSource(dtype=...) declares column '{column}' as {dtype}: a CSV column can be declared "
                        "as numbers (an integer or float dtype), booleans or text (str, object, string, category); "
                        "read other types as text or numbers and convert them with a formula")


def is_number_type(dtype: Any) -> bool:
    """Whether a column of this public type is read as numbers (float by pandas' parser, then converted)."""
    return not pd.api.types.is_bool_dtype(dtype) and (pd.api.types.is_integer_dtype(dtype)
                                                      or pd.api.types.is_float_dtype(dtype))


def read_type(dtype: Any) -> Any:
    """What pandas' reader is given for a column of this public type: float64 for numbers (converted afterwards
    by :func:`converted`), text for booleans and categories (converted afterwards), the type itself for text."""
    if is_number_type(dtype):
        return float
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return "str"
    return dtype


def whole_numbers(values: pd.Series, dtype: Any) -> pd.Series:
    """``values`` (floats) as the nullable integer ``dtype``: a value that is not a whole number inside the dtype's
    range is missing (each value by itself)."""
    info = np.iinfo(dtype.numpy_dtype)
    x = values.to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        keep = np.isfinite(x) & (np.floor(x) == x) & (x >= float(info.min)) & (x < float(info.max) + 1.0)
    out = pd.array(np.where(keep, x, 0.0).astype(dtype.numpy_dtype), dtype=dtype)
    out[~keep] = pd.NA
    return pd.Series(out, index=values.index, name=values.name)


def booleans(values: pd.Series) -> pd.Series:
    """Text read as pandas' nullable boolean, one field at a time, as pandas' parser reads a column declared ``bool``:
    the default true and false tokens, and a field that :func:`text_number` reads as 1 or 0 (a 0/1 column: ``1``,
    ``0``, ``1.0``), missing otherwise.

    Parameters
    ----------
    values : pandas.Series
        The column's fields as text (a missing field as NaN or None).

    Returns
    -------
    pandas.Series
        pandas' nullable boolean, a field that is none of these missing.
    """
    numbers = text_numbers(values).to_numpy()  # the tokens read as 1 and 0
    true, false = numbers == 1.0, numbers == 0.0
    out = pd.array(true, dtype=pd.BooleanDtype())
    out[~(true | false)] = pd.NA
    return pd.Series(out, index=values.index, name=values.name)


def text_number(field: str) -> float:
    """One CSV field of a number column read as pandas' C parser reads it where that parser reads the field's whole
    chunk as numbers: the same float, bit for bit, for every field the parser takes.

    ``CSVSource`` reads a file with the parser while every field of a chunk's number columns is a number, and from
    the first chunk with a field it cannot read on with those columns as text, each field converted here.  Which
    chunks the parser reads depends on one row (a field such as ``abc`` anywhere in the chunk), so this rule must
    give every field the parser's value: the parser reads a chunk of a column holding only the boolean tokens
    ``True``/``False`` (in their three spellings) as 1 and 0, keeps the sign of ``-0`` and rounds correctly, where
    ``pd.to_numeric``, used before, made such a chunk missing, read ``-0`` as 0 when the rest of its chunk were whole
    numbers and rounded some numbers with a leading ``+`` to the neighbouring float: one text field changed how every
    later row of the file was read.  Python's ``float()`` rounds correctly; text that is not ASCII or holds an
    underscore, which it reads and the parser does not, is missing, as any field that is not a number
    (``docs/scale.md``).

    Parameters
    ----------
    field : str
        The field's text.

    Returns
    -------
    float
        Its number, or NaN.
    """
    if field in TRUE_TOKENS:
        return 1.0
    if field in FALSE_TOKENS:
        return 0.0
    if not field.isascii() or "_" in field:
        return math.nan
    try:
        return float(field)
    except ValueError:
        return math.nan


def text_numbers(values: pd.Series) -> pd.Series:
    """A column of text fields (NaN where the reader found a missing-value token) read as floats, each field by
    :func:`text_number`.

    Parameters
    ----------
    values : pandas.Series
        The fields, as read with the column's type given as text.

    Returns
    -------
    pandas.Series
        float64, NaN where a field is missing or not a number.
    """
    out = np.full(len(values), np.nan)
    present = values.notna().to_numpy()
    out[present] = [text_number(str(field)) for field in values.to_numpy()[present]]
    return pd.Series(out, index=values.index, name=values.name)


def converted(chunk: pd.DataFrame, types: dict[str, Any], as_text: Sequence[str]) -> pd.DataFrame:
    """A chunk with each declared column in its public type: numbers read as text (``as_text``) by
    :func:`text_numbers`, then integers by :func:`whole_numbers`, other numbers cast, booleans by :func:`booleans`."""
    for c, dtype in types.items():
        if c not in chunk.columns:
            continue
        if is_number_type(dtype):
            values = text_numbers(chunk[c]) if c in as_text else chunk[c]
            if pd.api.types.is_integer_dtype(dtype):
                chunk[c] = whole_numbers(values, dtype)
            elif values.dtype != dtype or c in as_text:
                with np.errstate(all="ignore"):  # a number beyond a narrower float (1e39 as float32) is inf, quietly
                    chunk[c] = values.astype(dtype)
        elif pd.api.types.is_bool_dtype(dtype):
            chunk[c] = booleans(chunk[c])
        elif isinstance(dtype, pd.CategoricalDtype):
            chunk[c] = categories(chunk[c], dtype)
    return chunk


def categories(values: pd.Series, dtype: pd.CategoricalDtype) -> pd.Series:
    """Text read as the declared categorical ``dtype``: a field equal to a category's text is that category,
    anything else missing, each field by itself (pandas' own conversion warns where a field is outside the
    categories, a warning one row would decide)."""
    text = pd.Index([str(c) for c in dtype.categories])
    codes = text.get_indexer(values.astype(object).where(values.notna(), None))
    return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype), index=values.index, name=values.name)
