"""Each CSV line is a row and each field a value or a missing value, by rules that look at one line only
(dpstats.rows.csv_fields).

Before (session 30): a line with more fields than the header, or a field that did not fit a type declared with
``CSVSource(dtype=...)`` (text or 3.5 in an integer column, an empty field in an integer column), refused the fit at
no cost, on one neighbour only (an oracle on one row, infinite epsilon); and a first data line with one field more
than the header made pandas take the file's first column as an index, so that every row of the file was read
shifted by one column.  Now such a line is a row of missing values and such a field a missing value, which the
charged missing-value screen counts; a declared type a row cannot always take (a date) is refused from the
declaration.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DataTypeError, DPStatsError
from dpstats.rows.csv_fields import booleans, schema_type, whole_numbers
from dpstats.rows.sources import CSVSource

BOUNDS = {"x": (0.0, 10.0), "z": (0.0, 1.0), "y": (-5.0, 30.0)}
FORMULA = "y ~ x + z"


def _lines(n: int = 400, seed: int = 0, booleans: bool = False) -> list[str]:
    """A header and n data lines of x (integers 0-9), z (0/1, or True/False with ``booleans``), y."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 10, n)
    z = rng.random(n) < 0.4
    y = 1 + 2 * x - 3 * z + rng.normal(0, 1, n)
    return ["x,z,y"] + [f"{a},{b if booleans else int(b)},{c:.4f}" for a, b, c in zip(x, z, y, strict=True)]


def _write(path: Path, lines: list[str], at: int, line: str | None) -> str:
    """The lines with data line ``at`` (0 = the first after the header) replaced by ``line`` (None: kept)."""
    out = list(lines)
    if line is not None:
        out[at + 1] = line
    path.write_text("\n".join(out) + "\n")
    return str(path)


def _bounds(dtype: dict | None) -> dict:
    """A boolean column takes no bounds (its design column is 0/1)."""
    return {k: v for k, v in BOUNDS.items() if (dtype or {}).get(k) != "bool"}


def _fit(path: str, dtype: dict | None = None, chunksize: int = 100) -> pd.Series:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpstats.dp_ols(FORMULA, CSVSource(path, dtype=dtype, chunksize=chunksize), 1.0, 1e-6, method="ssp",
                              bounds=_bounds(dtype), random_state=7).params


DTYPES = {"x": "int64", "z": "int8", "y": "float64"}
BOOLEANS = {"x": "int64", "z": "bool", "y": "float64"}


@pytest.mark.parametrize("dtype", [None, DTYPES], ids=["default types", "declared types"])
@pytest.mark.parametrize("at", [0, 150, 399], ids=["first line", "a later chunk", "last line"])
@pytest.mark.parametrize("line, reads_as", [
    ("3,1,7.0,99", ",,"), ("3,1,7.0,SECRET,99", ",,"), ("3,1,7.0,,,,,,,1", ",,"), ("3,1,7.0,7,", ",,"),
    ("3,1,7.0,,5", ",,"), ("3,1,7.0,,,", ",,"), ("3,1,7.0,,", ",,"), ("3,1,7.0,", "3,1,7.0")],
    ids=["one extra field", "two extra fields", "many extra fields", "an extra and an empty field",
         "an empty and an extra field", "three trailing empty fields", "two trailing empty fields",
         "one trailing empty field"])
def test_a_line_with_more_fields_than_the_header_is_a_row_of_missing_values(tmp_path, dtype, at, line, reads_as):
    """Wherever the line is (the first data line, where pandas used to take an index column, or a later chunk,
    where it refused the file), it releases exactly what a line of empty fields releases, on the same noise; one
    trailing empty field (a delimiter at the end of the line) is not a field, as pandas reads the first line."""
    lines = _lines()
    expected = _fit(_write(tmp_path / "m.csv", lines, at, reads_as), dtype)
    assert _fit(_write(tmp_path / "e.csv", lines, at, line), dtype).equals(expected)
    assert not expected.equals(_fit(_write(tmp_path / "k.csv", lines, at, "3,0,7.0"), dtype))


def test_the_first_line_with_an_extra_field_does_not_shift_the_file(tmp_path):
    """pandas reads a file whose first data line has one field more than the header with the first column as the
    index, every later row shifted by one column; the rows are read as they are."""
    lines = _lines()
    path = _write(tmp_path / "s.csv", lines, 0, "3,1,7.0,99")
    frames = list(CSVSource(path, chunksize=1000).frames(["x", "z", "y"]))
    read = pd.concat(frames)
    assert read.iloc[0].isna().all() and read.shape == (400, 3)
    assert read["x"].iloc[1:].tolist() == [float(v.split(",")[0]) for v in lines[2:]]


@pytest.mark.parametrize("dtype, column, field", [
    (DTYPES, "x", "3.5"), (DTYPES, "x", "SECRET"), (DTYPES, "x", ""), (DTYPES, "x", "1e30"), (DTYPES, "x", "inf"),
    (DTYPES, "z", "300"), (DTYPES, "y", "SECRET"), (DTYPES, "y", ""), (BOOLEANS, "z", "yes"), (BOOLEANS, "z", "2"),
    (BOOLEANS, "z", "0.5"), (BOOLEANS, "z", "")])
def test_a_field_that_does_not_fit_its_declared_type_is_a_missing_value(tmp_path, dtype, column, field):
    """In a column declared int64, int8, bool or float64 a field that does not fit (a fraction, text, an empty
    field, a number outside the dtype's range, a token that is not a boolean) releases what an empty line
    releases."""
    lines = _lines(booleans=dtype is BOOLEANS)
    values = dict(zip(["x", "z", "y"], lines[101].split(","), strict=True))
    values[column] = field
    bad = _fit(_write(tmp_path / "b.csv", lines, 100, ",".join(values.values())), dtype)
    assert bad.equals(_fit(_write(tmp_path / "m.csv", lines, 100, ",,"), dtype))


def test_fields_that_fit_are_read_as_in_memory(tmp_path):
    """A file that fits its declared types fits as the same frame does in memory, in pandas' nullable types."""
    path = _write(tmp_path / "a.csv", _lines(booleans=True), 0, None)
    frame = pd.read_csv(path).astype({"x": "Int64", "z": "boolean"})
    read = pd.concat(list(CSVSource(path, dtype=BOOLEANS, chunksize=64).frames(["x", "z", "y"])))
    assert dict(read.dtypes) == {"x": pd.Int64Dtype(), "z": pd.BooleanDtype(), "y": np.dtype(float)}
    pd.testing.assert_frame_equal(read.reset_index(drop=True), frame)
    in_memory = dpstats.dp_ols(FORMULA, frame, 1.0, 1e-6, method="ssp", bounds=_bounds(BOOLEANS),
                               random_state=7).params
    assert _fit(path, BOOLEANS).equals(in_memory)


def test_a_zero_one_column_declared_bool_is_read_as_booleans(tmp_path):
    """A 0/1 column declared ``bool`` (as ``--dtypes '{"z": "bool"}'`` declares one, which the CLI's help offers for a
    0/1 response) reads as pandas' parser reads it, 1 True and 0 False, and fits as the True/False file does; it was
    missing in every row, and the missing-value screen refused the fit."""
    zero_one = _write(tmp_path / "z.csv", _lines(), 0, None)
    true_false = _write(tmp_path / "t.csv", _lines(booleans=True), 0, None)
    read = pd.concat(list(CSVSource(zero_one, dtype=BOOLEANS, chunksize=64).frames(["x", "z", "y"])))
    assert read["z"].dtype == pd.BooleanDtype() and not read["z"].isna().any()
    assert _fit(zero_one, BOOLEANS).equals(_fit(true_false, BOOLEANS))


def test_the_rules_read_one_value_at_a_time():
    x = whole_numbers(pd.Series([1.0, 2.5, np.nan, 300.0, -1.0, 255.0]), pd.UInt8Dtype())
    assert x.tolist() == [1, pd.NA, pd.NA, pd.NA, pd.NA, 255]
    big = whole_numbers(pd.Series([2.0**63, -(2.0**63), 1e300]), pd.Int64Dtype())
    assert big.tolist() == [pd.NA, -(2**63), pd.NA]
    assert booleans(pd.Series(["True", "false", "2", None, "FALSE"])).tolist() == [True, False, pd.NA, pd.NA, False]
    # a 0/1 column declared bool, as pandas' parser reads one: 1 and 0 (also written 1.0, -0), nothing else
    assert booleans(pd.Series(["1", "0", "1.0", "-0", "0.5", "yes"])).tolist() == [True, False, True, False, pd.NA,
                                                                                    pd.NA]
    assert schema_type("a", "int32") == pd.Int32Dtype() and schema_type("a", np.uint16) == pd.UInt16Dtype()
    assert schema_type("a", bool) == pd.BooleanDtype() and schema_type("a", "float32") == np.dtype("float32")
    assert isinstance(schema_type("a", pd.CategoricalDtype(["u", "v"])), pd.CategoricalDtype)
    assert pd.api.types.is_string_dtype(schema_type("a", "category"))  # no categories: text (tests/test_input_dtypes)
    assert pd.api.types.is_string_dtype(schema_type("a", str))


@pytest.mark.parametrize("declared", ["datetime64[ns]", "complex128", "timedelta64[s]"])
def test_a_type_a_row_cannot_always_take_is_refused_from_the_declaration(tmp_path, declared):
    with pytest.raises(DataTypeError, match="can be declared as numbers"):
        CSVSource(_write(tmp_path / "a.csv", _lines(), 0, None), dtype={"x": declared})


@pytest.mark.parametrize("option", [{"names": ["a", "b", "c"]}, {"header": None}, {"index_col": 0},
                                    {"engine": "python"}, {"on_bad_lines": "skip"}, {"skiprows": [3]},
                                    {"skiprows": 1}, {"skip_blank_lines": True}, {"comment": "#"},
                                    {"escapechar": "\\"}, {"lineterminator": ";"}, {"dialect": "excel"},
                                    {"parse_dates": ["x"]}, {"skipfooter": 1}, {"doublequote": False},
                                    {"quoting": 2}, {"encoding_errors": "strict"}, {"sep": ";;"}, {"sep": None},
                                    {"quotechar": "\n"}, {"sep": ",", "quotechar": ","}, {"sep": "\u00a7"},
                                    {"sep": '"'}, {"quotechar": "\u00ab"}, {"encoding_errors": "surrogateescape"},
                                    {"decimal": ","}, {"thousands": "_"}, {"na_values": [0.5]},
                                    {"keep_default_na": False}, {"true_values": ["yes"]}],
                         ids=lambda option: "-".join(f"{k}={v!r}" for k, v in option.items()))
def test_options_that_decide_how_lines_become_rows_are_refused(tmp_path, option):
    """Options that would let other lines, or the file's first lines, decide how a line is read are refused from the
    options alone (an audit found: one blank line or one line starting with '#' changed n with skip_blank_lines=True
    or comment='#'; an escape character at a line's end joined two lines; parse_dates made a column's type depend on
    every field; skiprows=1 on a file without a title line made the first data line the header, whose values the
    unknown-column message then listed; quoting=QUOTE_NONNUMERIC and encoding_errors='strict' refused the file for
    one field or one byte)."""
    with pytest.raises(DataTypeError,
                       match=r"CSVSource (sets \w+ itself|does not take read_csv's \w+=)|CSVSource\(\w+=\.\.\.\) takes "
                             r"|separator must differ"):
        CSVSource(_write(tmp_path / "a.csv", _lines(), 0, None), **option)


@pytest.mark.parametrize("option", [{"sep": ";"}, {"quotechar": "'"}, {"quoting": 3}, {"skipinitialspace": True},
                                    {"encoding": "latin-1"}, {"encoding_errors": "ignore"}])
def test_options_that_read_one_line_by_itself_are_taken(tmp_path, option):
    lines = _lines()
    sep = option.get("sep", ",")
    path = _write(tmp_path / "a.csv", [line.replace(",", sep) for line in lines], 0, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dpstats.dp_ols(FORMULA, CSVSource(path, chunksize=100, **option), 1.0, 1e-6, method="ssp",
                             bounds=BOUNDS, random_state=7).params
    assert got.equals(_fit(_write(tmp_path / "b.csv", lines, 0, None)))


@pytest.mark.parametrize("line", ['0.5,1,"a" ', '1,2,"x"y', '1,"2",3,4', '"1","0","2.5","extra"', '1,0,"2,5",9'])
def test_a_quoted_line_with_extra_fields_is_a_row_of_missing_values(tmp_path, line):
    """A line with more fields than the header is a row of missing values however its quotes sit (an audit found
    '0.5,1,"a" ' and '1,2,"x"y' refused the whole file at no cost, through the Python parser that read such lines,
    while '0.5,1,"a"' was a row of missing values)."""
    lines = _lines()
    assert _fit(_write(tmp_path / "a.csv", lines, 37, line)).equals(_fit(_write(tmp_path / "b.csv", lines, 37, "")))


def test_a_header_whose_quotes_do_not_pair_up_is_refused_from_the_header(tmp_path):
    """The header is the schema (public): one whose quote characters do not pair up is refused before a data line
    is read, whatever the data lines hold (an audit found pandas reading such a header on into the data, so that a
    quoted data field became part of the column names)."""
    lines = _lines()
    for at, line in ((3, None), (3, '99,"SECRET,42",1')):
        out = ['x,z,"y'] + lines[1:]
        with pytest.raises(DataTypeError, match="header's quote characters do not pair up"):
            _fit(_write(tmp_path / f"h{at}{line is None}.csv", out, at, line))


def test_a_declared_category_type_reads_each_field_by_itself(tmp_path):
    """A column declared with a CategoricalDtype is read as text and mapped onto the categories field by field: a
    field outside them is missing, without pandas' warning (which one row decided)."""
    lines = ["x,z,y,g"] + [line + (",a" if i % 2 else ",b") for i, line in enumerate(_lines()[1:])]
    dtype = {"g": pd.CategoricalDtype(["a", "b"])}
    plain = _write(tmp_path / "a.csv", lines, 5, None)
    odd = _write(tmp_path / "b.csv", lines, 5, lines[6][: lines[6].rindex(",")] + ",SECRETLEVEL")
    frames = []
    for path in (plain, odd):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frames.append(pd.concat(CSVSource(path, dtype=dtype).frames(["g"]))["g"])
    assert frames[0].iloc[5] in ("a", "b") and pd.isna(frames[1].iloc[5])
    assert frames[1].drop(index=5).equals(frames[0].drop(index=5))


def test_a_quoted_field_is_read_as_its_value(tmp_path):
    """A quoted field, with the separator or a doubled quote inside, is read as pandas reads it: '"3","1","7.5"' is
    the row 3, 1, 7.5."""
    lines = _lines()
    plain = _fit(_write(tmp_path / "a.csv", lines, 5, "3,1,7.5"))
    assert _fit(_write(tmp_path / "b.csv", lines, 5, '"3","1","7.5"')).equals(plain)
    assert _fit(_write(tmp_path / "c.csv", lines, 5, '3,1,"7.5",')).equals(plain)


def test_a_byte_outside_the_encoding_is_read_in_its_field(tmp_path):
    """A byte that is not UTF-8 makes its field hold U+FFFD: a missing value in a number column (the same release as
    an empty line), nothing at all in a column the formula does not use (before: the file was refused at no cost)."""
    lines = [line + ",note" for line in _lines()]
    lines[0] = "x,z,y,comment"
    empty = _fit(_write(tmp_path / "m.csv", lines, 10, ",,,note"))
    (tmp_path / "b.csv").write_bytes(("\n".join(lines[:11]) + "\n").encode() + b"3\xff,1,7.0,note\n"
                                     + ("\n".join(lines[12:]) + "\n").encode())
    assert _fit(str(tmp_path / "b.csv")).equals(empty)
    clean = _fit(_write(tmp_path / "c.csv", lines, 10, None))
    (tmp_path / "u.csv").write_bytes(("\n".join(lines[:11]) + "\n").encode() + lines[11].encode()[:-4] + b"n\xffte\n"
                                     + ("\n".join(lines[12:]) + "\n").encode())
    assert _fit(str(tmp_path / "u.csv")).equals(clean)


@pytest.mark.parametrize("extra_at", [None, 100], ids=["alone", "after a line with extra fields"])
def test_an_unclosed_quote_is_a_row_of_missing_values(tmp_path, extra_at):
    """A quote that is never closed would make the rest of the file one field: fewer rows than lines (n, which is
    public, would depend on it).  The line is read as a blank line, a row of missing values, whether or not a line
    with extra fields made the reader fall back to pandas' Python parser (before session 40 the file was refused,
    at no cost and on this neighbour only)."""
    lines = _lines()
    if extra_at is not None:
        lines[extra_at + 1] = "3,1,7.0,5,5"
    quoted = _fit(_write(tmp_path / "q.csv", lines, 200, '3,1,"SECRET'))
    assert quoted.equals(_fit(_write(tmp_path / "blank.csv", lines, 200, "")))


@pytest.mark.parametrize("chunksize", [100, 1000])
def test_a_quote_never_carries_over_a_line_break(tmp_path, chunksize):
    """A line that opens a quote took the following lines into one field, up to the next quote anywhere in the file:
    one line changed n (a data set with a stray quote closing a field at line 9 and its neighbour with a line 5
    that opens one read 300 and 295 rows: an infinite epsilon on n, which every fit releases).  Now each line whose
    quote characters do not pair up is a row of missing values, so both neighbours have n rows, and a quoted field
    holding a line break is two such rows."""
    lines = _lines(300)
    lines[10] = '3,1,7.5"'
    base = _write(tmp_path / "base.csv", lines, 4, None)
    neighbour = _write(tmp_path / "neighbour.csv", lines, 4, '"3,1,7.0')
    split = _write(tmp_path / "split.csv", lines, 20, '3,1,"7.0\n"')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the missing-value screen may warn
        rows = [dpstats.dp_ols(FORMULA, CSVSource(p, chunksize=chunksize), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                               random_state=3).nobs for p in (base, neighbour, split)]
    assert rows == [300, 300, 301]


def _slope_or_refusal(path: str, rng: np.random.Generator, dtype: dict | None) -> float:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols(FORMULA, CSVSource(path, dtype=dtype), 1.0, 1e-6, method="ssp",
                                 bounds=_bounds(dtype), random_state=rng)
        return float(res.params.iloc[1])
    except DPStatsError:
        return 1e9


@pytest.mark.parametrize("neighbour_line, dtype", [("3,1,7.0,99", None), ("3.5,1,7.0", DTYPES)],
                         ids=["an extra field", "a fraction in an integer column"])
def test_black_box_audit_of_a_malformed_line(tmp_path, neighbour_line, dtype):
    """Neighbours: one line holds 3,1,7.0, or a line with an extra field / a fraction where integers are
    declared (before: one neighbour always refused at no cost, an unbounded epsilon).  The audit's bound must stay
    within the claimed epsilon = 1.  False-failure rate: alpha = 1e-3 per case."""
    from dpstats.privacy.audit import audit_mechanism

    lines = _lines(150, seed=3)
    data = _write(tmp_path / "a.csv", lines, 0, "3,1,7.0")
    neighbour = _write(tmp_path / "b.csv", lines, 0, neighbour_line)
    result = audit_mechanism(lambda path, rng: _slope_or_refusal(path, rng, dtype), data, neighbour, runs=150,
                             delta=1e-6, alpha=1e-3, seed=17)
    assert result.epsilon_lower_bound <= 1.0


def test_a_field_that_quotes_a_pandas_message_is_a_missing_value(tmp_path):
    """A number field whose text pandas' parse error would quote ("Usecols ...") is a missing value like any other
    field that is not a number (the source once recognised one of pandas' refusals by its message text, so this
    field refused the fit at no cost)."""
    lines = _lines()
    assert _fit(_write(tmp_path / "a.csv", lines, 9, "3,1,Usecols-SECRET-4711")).equals(
        _fit(_write(tmp_path / "b.csv", lines, 9, "3,1,")))


def test_a_block_of_plain_lines_is_passed_on_as_the_line_by_line_rule_writes_it(monkeypatch):
    # the shortcut for a block without quotes (LineFormat._plain_block, session 55) must give the text the rule gives
    # line by line, on blocks of fields, separators, quotes, line breaks and carriage returns drawn at random
    # (deterministic: a fixed seed)
    from dpstats.rows.csv_lines import LineFormat

    fmt = LineFormat()
    dialect = fmt.dialect()
    rng = np.random.default_rng(55)
    pieces = ["1", "2.5", ",", "\n", "\r", '"', "", "x", "-", " ", "\r\n"]
    blocks = [([("".join(rng.choice(pieces, size=rng.integers(0, 7))) + rng.choice(["\n", "\n", "\n", ""]))
                for _ in range(rng.integers(1, 7))], int(rng.integers(1, 5))) for _ in range(3000)]
    fast = [fmt.row_block(lines, width, dialect) for lines, width in blocks]
    shortcut = sum(fmt._plain_block(lines, width) is not None for lines, width in blocks)
    monkeypatch.setattr(LineFormat, "_plain_block", lambda self, lines, width: None)
    assert fast == [fmt.row_block(lines, width, dialect) for lines, width in blocks]
    assert shortcut > 100  # the shortcut was taken on many blocks, and the rule's own path on the others
