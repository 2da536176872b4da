"""Black-box audit of the file and out-of-core paths: the file's contents are an adversary's input.

Neighbouring files differ in one row (or, for a damaged file, in where the damage is); each pair is fitted with the
same seed, and what the two fits show apart from their noise (``test_neighbour_extremes._masked``: the exception's
type and message, the warnings, the notes of the privacy report, ``privacy_spent`` and the accountant's record) must
be equal.  These checks are deterministic (one fit per file, no statistics), so their false-failure rate is 0.

Found by this audit (session 47) and fixed:

* a date or duration column with declared levels: pandas compares such a column with a level in the finer of their
  two units, converting the whole column, and one value beyond that unit's range (a date in the year 300,000 stored
  in seconds, beside a level in microseconds) made the conversion fail: an untyped ``InternalFitError`` at no cost,
  on that data set only (in memory, in chunks and from Parquet); so did writing a null row's fill, a first declared
  level with a fraction of a second, into such a column; so did an Arrow integer column (``int64[pyarrow]``)
  with one value beyond 2^53 beside a float level, which pyarrow casts to float64 exactly or not at all.  Now each
  cell of such a chunk is compared by itself, and that value is outside the declared levels (a null row, counted by
  the screen) as any other;
* a damaged compressed CSV file (gzip, bz2, xz, zip) and a damaged Parquet file reached the fit as an
  ``InternalFitError`` ("a bug") named after the decompressor's or pyarrow's exception, whose type (``EOFError``,
  ``BadGzipFile``, ``zlib.error``, ``OSError``, ``ArrowInvalid``) told where the damage was; now they are the typed
  domain checks, one message wherever the damage is;
* a CSV column declared as a narrower float (``float32``, ``float16``) warned "overflow encountered in cast" for a
  data set with one number beyond its range, and for no other; the number is now infinite (read as 0, as any
  non-finite value) without a warning;
* the command line (``dpstats fit --data file.csv.gz``) printed the decompressor's message for a damaged file,
  "CRC check failed 0x... != 0x...": a checksum of every row of the data; a file cut short gave EOFError's
  traceback;
* a Dask partition that could not be computed named the type of its failure, and ``dd.read_csv`` fails a partition
  with an ``OverflowError`` for a whole number beyond a declared integer type but a ``ValueError`` for text: the
  message told which kind of field one row held.  The type is now withheld too.

The rest of the audit found every case already handled (and is kept here as a regression check): a CSV field that
is not a number in any way (malformed, infinite, beyond the float range, with a separator, a space or a NUL byte, a
byte outside UTF-8), a line with too many or too few fields, a quoted line break, a very long line, a value outside
a declared integer, boolean or text type, at line 3 or line 3000 of the file.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import lzma
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from test_neighbour_extremes import _masked

import dpstats
from dpstats.errors import DataTypeError
from dpstats.formula.values import raw_level_codes
from dpstats.rows.sources import CSVSource, ParquetSource


@dataclasses.dataclass(frozen=True)
class Shown:
    """What a fit shows apart from its noise, numbers masked."""

    error: tuple[str, str] | None
    spent: tuple[float, float] | None
    warned: frozenset[tuple[str, str]]
    notes: tuple[str, ...]
    history: str


def _shown(formula: str, data: Any, **kwargs: Any) -> Shown:
    accountant = dpstats.PrivacyAccountant(100.0, 0.5)
    kwargs = {"epsilon": 1.0, "delta": 1e-6, "random_state": 5, **kwargs}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = dpstats.dp_ols(formula, data, accountant=accountant, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the point is to compare whatever escapes
            error, spent, notes = (type(exc).__name__, _masked(str(exc))), getattr(exc, "privacy_spent", None), ()
        else:
            error, spent = None, (res.privacy.epsilon_spent, res.privacy.delta_spent)
            notes = tuple(_masked(str(note)) for note in res.privacy.notes)
    warned = frozenset((w.category.__name__, _masked(str(w.message))) for w in caught)
    history = "; ".join(f"{spend.label}: {spend.status}" for spend in accountant.history)
    return Shown(error, spent, warned, notes, history)


# -- dates and durations with declared levels ----------------------------------------------------------------------

N_TIMES = 400
SECONDS = (1_600_000_000, 1_700_000_000)


def _times(kind: str) -> tuple[pd.DataFrame, pd.DataFrame, list[Any]]:
    """D (a date or duration column in seconds, with two levels declared in microseconds) and D' (one row beyond
    the microsecond range: the year 318,857, or 3.2 billion years)."""
    rng = np.random.default_rng(0)
    pick = np.where(rng.random(N_TIMES) < 0.5, *SECONDS)
    unit = "datetime64[s]" if kind == "date" else "timedelta64[s]"
    frame = pd.DataFrame({"x": rng.uniform(0, 10, N_TIMES), "y": rng.uniform(0, 10, N_TIMES),
                          "t": pick.astype(unit)})
    far = frame.copy()
    far.loc[3, "t"] = np.datetime64(10**13, "s") if kind == "date" else np.timedelta64(10**17, "s")
    scalar = pd.Timestamp if kind == "date" else pd.Timedelta
    return frame, far, [scalar(s, unit="s").as_unit("us") for s in SECONDS]


@pytest.mark.parametrize("kind", ["date", "duration"])
@pytest.mark.parametrize("read", ["memory", "chunks", "parquet"])
def test_a_time_beyond_the_levels_unit_is_a_value_outside_the_levels(tmp_path, kind, read):
    """Before: D' raised InternalFitError (OutOfBoundsDatetime / OutOfBoundsTimedelta) at no cost, D fitted."""
    frame, far, levels = _times(kind)

    def data(df: pd.DataFrame, name: str) -> Any:
        if read != "parquet":
            return df
        pytest.importorskip("pyarrow")
        path = tmp_path / f"{name}.parquet"
        df.to_parquet(path)
        return ParquetSource(path, batch_size=100)

    kwargs = {"method": "ssp", "bounds": {"x": (0, 10), "y": (0, 10)}, "levels": {"t": levels},
              "chunksize": 100 if read == "chunks" else None}
    shown = [_shown("y ~ x + t", data(df, name), **kwargs) for df, name in ((frame, "d"), (far, "d1"))]
    assert shown[0].error is None
    assert shown[1] == shown[0]


@pytest.mark.parametrize("kind", ["date", "duration"])
@pytest.mark.parametrize("chunksize", [None, 100])
def test_a_null_row_beside_a_time_beyond_the_fills_unit_is_filled(kind, chunksize):
    """A null row (a missing value, in both data sets) takes the first declared level; where that level has a
    fraction of a second, pandas converted the whole column (in seconds) to the finer unit to write it, which failed
    on D' only (one value beyond that unit's range): InternalFitError at no cost."""
    frame, far, levels = _times(kind)
    scalar = pd.Timestamp("2020-01-01 00:00:00.5") if kind == "date" else pd.Timedelta(0.5, "s")
    for df in (frame, far):
        df.loc[7, "t"] = pd.NaT
    kwargs = {"method": "ssp", "bounds": {"x": (0, 10), "y": (0, 10)}, "levels": {"t": [scalar, *levels]},
              "chunksize": chunksize}
    shown = [_shown("y ~ x + t", df, **kwargs) for df in (frame, far)]
    assert shown[0].error is None
    assert shown[1] == shown[0]


@pytest.mark.parametrize("kind", ["date", "duration"])
def test_time_level_codes_read_each_cell_by_itself(kind):
    """The codes of a column pandas cannot convert to the level's unit are those of the object rule, cell by cell:
    the far cell is outside the levels (-1), every other cell the level it equals, as where no cell is far."""
    frame, far, levels = _times(kind)
    expected = raw_level_codes(frame["t"], levels)
    assert set(expected) == {0, 1}
    codes = raw_level_codes(far["t"], levels)
    assert codes[3] == -1
    np.testing.assert_array_equal(np.delete(codes, 3), np.delete(expected, 3))
    np.testing.assert_array_equal(raw_level_codes(frame["t"].astype(object), levels), expected)


@pytest.mark.parametrize("chunksize", [None, 100])
def test_an_arrow_integer_beyond_two_to_the_53_beside_a_float_level_is_a_value_outside_the_levels(chunksize):
    """pyarrow compares an integer column with a float level by casting the column to float64 exactly, and raises
    where one value is beyond 2^53.  Before: InternalFitError (ArrowInvalid) at no cost, on D' only."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0, 10, N_TIMES), "y": rng.uniform(0, 10, N_TIMES),
                          "g": pd.array(rng.integers(0, 2, N_TIMES), dtype="int64[pyarrow]")})
    far = frame.copy()
    far.loc[3, "g"] = 2**63 - 1
    kwargs = {"method": "ssp", "bounds": {"x": (0, 10), "y": (0, 10)}, "levels": {"g": [0, 1.0, 2.5]},
              "chunksize": chunksize}
    shown = [_shown("y ~ x + g", df, **kwargs) for df in (frame, far)]
    assert shown[0].error is None
    assert shown[1] == shown[0]


@pytest.mark.parametrize("dtype, field", [("float32", "1e39"), ("float16", "70000"), ("Float32", "-1e39")])
def test_a_number_beyond_a_declared_narrow_float_is_infinite_without_a_warning(tmp_path, dtype, field):
    """CSVSource(dtype={"x": "float32"}) casts the parsed float64 to float32; numpy warned "overflow encountered in
    cast" for a data set with one number beyond float32's range, and for no other (a warning one row decided)."""
    lines = ["x,y"] + [f"{v % 10},{v % 7}" for v in range(600)]
    shown = []
    for at, value in ((1, "5"), (1, field), (550, field)):
        out = list(lines)
        out[at] = f"{value},6"
        path = tmp_path / f"data{len(shown)}.csv"
        path.write_text("\n".join(out) + "\n")
        shown.append(_shown("y ~ x", CSVSource(path, chunksize=100, dtype={"x": dtype}), method="ssp",
                            bounds={"x": (0, 10), "y": (0, 7)}))
    assert shown[0].error is None and not shown[0].warned
    assert shown[1] == shown[0] and shown[2] == shown[0]


# -- damaged files -------------------------------------------------------------------------------------------------

def _csv_bytes(n: int = 20_000) -> bytes:
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 10, n).round(3)
    y = (1 + x + rng.normal(0, 1, n)).round(3)
    return ("x,y\n" + "\n".join(f"{a},{b}" for a, b in zip(x, y, strict=True)) + "\n").encode()


def _zipped(body: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data.csv", body)
    return out.getvalue()


COMPRESSORS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress, ".zip": _zipped}
CSV_KW = {"method": "ssp", "bounds": {"x": (0, 10), "y": (-5, 20)}}


def _damaged(data: bytes, where: str) -> bytes:
    """``data`` cut in half, or with 64 bytes zeroed at a tenth, a half or four fifths of it."""
    if where == "cut short":
        return data[: len(data) // 2]
    at = int(len(data) * {"early": 0.1, "middle": 0.5, "late": 0.8}[where])
    return data[:at] + bytes(64) + data[at + 64:]


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_a_damaged_compressed_csv_file_is_one_typed_domain_check_wherever_the_damage_is(tmp_path, suffix):
    """Before: InternalFitError named EOFError, BadGzipFile, zlib.error, OSError or BadZipFile by where the damage
    was.  Now every damaged file gives the same DataTypeError (the intact file fits)."""
    packed = COMPRESSORS[suffix](_csv_bytes())
    intact = tmp_path / f"intact.csv{suffix}"
    intact.write_bytes(packed)
    assert _shown("y ~ x", CSVSource(intact, chunksize=5000), **CSV_KW).error is None
    shown = []
    for where in ("cut short", "early", "middle", "late"):
        path = tmp_path / f"{where.replace(' ', '_')}.csv{suffix}"
        path.write_bytes(_damaged(packed, where))
        shown.append(_shown("y ~ x", CSVSource(path, chunksize=5000), **CSV_KW))
    assert all(s == shown[0] for s in shown), shown
    assert shown[0].error == ("DataTypeError", _masked(
        "the compressed CSV file cannot be decompressed: its compressed data are damaged or cut short (where is not "
        "shown; it is not a file of rows). Compress the file again, or give the compression= it was written with"))
    assert shown[0].spent == (0.0, 0.0)


def test_a_file_that_is_not_compressed_as_its_suffix_says_is_the_same_domain_check(tmp_path):
    path = tmp_path / "plain.csv.gz"
    path.write_bytes(_csv_bytes(200))
    with pytest.raises(DataTypeError, match="the compressed CSV file cannot be decompressed") as info:
        dpstats.dp_ols("y ~ x", CSVSource(path), 1.0, 1e-6, random_state=0, **CSV_KW)
    assert info.value.__cause__ is None and info.value.__context__ is None


@pytest.mark.parametrize("allow_data_levels", [False, True], ids=["CSVSource", "pandas' own reading"])
def test_the_command_line_names_no_checksum_of_a_damaged_gzip_file(tmp_path, capsys, allow_data_levels):
    """``dpstats fit --data file.csv.gz`` printed the decompressor's message for a damaged file: "CRC check failed
    0x51e5994f != 0x3aed5686", a checksum of every row of the data, and for a file cut short the EOFError's
    traceback.  Now every damaged file gives the same one-line error."""
    from dpstats.cli import main  # noqa: PLC0415

    packed = gzip.compress(_csv_bytes(3000))
    errors = set()
    for where in ("cut short", "middle", "checksum"):
        damaged = (bytearray(packed) if where == "checksum" else bytearray(_damaged(packed, where)))
        if where == "checksum":
            damaged[-8] ^= 0xFF  # the stored CRC-32 of the data
        path = tmp_path / f"{where.replace(' ', '_')}.csv.gz"
        path.write_bytes(bytes(damaged))
        code = main(["fit", "y ~ x", "--data", str(path), "--epsilon", "1", "--method", "ssp", "--bounds",
                     '{"x": [0, 10], "y": [-5, 20]}', *(["--allow-data-levels"] if allow_data_levels else [])])
        assert code == 2
        errors.add(capsys.readouterr().err.replace(str(path), "PATH"))
    assert len(errors) == 1
    error = errors.pop()
    assert "the compressed CSV file cannot be decompressed" in error and "CRC" not in error and "0x" not in error


def test_a_damaged_parquet_file_is_one_typed_domain_check_wherever_the_damage_is(tmp_path):
    """Before: InternalFitError named OSError (a page that does not decompress) or ArrowInvalid (a footer cut
    short).  Now every damaged file gives the same DataTypeError; damage that still decodes is data, as in any
    file."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 20_000)
    intact = tmp_path / "intact.parquet"
    pq.write_table(pa.table({"x": x, "y": 1 + x + rng.normal(0, 1, x.size)}), intact, row_group_size=5000,
                   compression="gzip")
    data = intact.read_bytes()
    assert _shown("y ~ x", ParquetSource(intact), **CSV_KW).error is None
    shown = []
    for where in ("cut short", "early", "middle", "late"):
        path = tmp_path / f"{where.replace(' ', '_')}.parquet"
        path.write_bytes(_damaged(data, where))
        shown.append(_shown("y ~ x", ParquetSource(path), **CSV_KW))
    assert all(s == shown[0] for s in shown), shown
    assert shown[0].error is not None and shown[0].error[0] == "DataTypeError"
    assert shown[0].error[1].startswith("a Parquet file cannot be decoded")
    assert shown[0].spent == (0.0, 0.0)


# -- Dask ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows", [1500, 2998], ids=["a middle partition", "the last partition"])
def test_a_dask_partition_failure_does_not_tell_which_kind_of_field_failed_it(tmp_path, rows):
    """dd.read_csv with a declared integer column fails the partition of a text field with a ValueError and that of
    a whole number beyond int64 with an OverflowError; the message named that type.  Now both neighbours (and
    either partition) show the same message.  (A field in dd.read_csv's sample, its first rows, fails the user's own
    dd.read_csv call, before dpstats is called.)"""
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 10, 3000)
    lines = ["x,y"] + [f"{a},{a + 1}" for a in x]
    shown = []
    for field in ("abc", "99999999999999999999999"):
        lines[rows] = f"{field},1"
        path = tmp_path / "data.csv"
        path.write_text("\n".join(lines) + "\n")
        frame = dd.read_csv(path, blocksize=10_000, dtype={"x": "int64"})
        shown.append(_shown("y ~ x", frame, method="ssp", bounds={"x": (0, 10), "y": (0, 11)}))
    assert shown[0] == shown[1]
    assert shown[0].error is not None and shown[0].error[0] == "DataTypeError"
    assert "Error" not in shown[0].error[1]


# -- the CSV battery: one line, at line 3 or line 3000 -------------------------------------------------------------

N_LINES = 3200
GOOD = "5.0,0.5,a,7,True,6.0"
BAD_LINES = {
    "1.2.3": "1.2.3,0.5,a,7,True,6.0", "text": "abc,0.5,a,7,True,6.0", "1e999": "1e999,0.5,a,7,True,6.0",
    "-inf": "-inf,0.5,a,7,True,6.0", "nan": "nan,0.5,a,7,True,6.0", "NA": "NA,0.5,a,7,True,6.0",
    "empty": ",0.5,a,7,True,6.0", "thousands separator": '"1,234.5",0.5,a,7,True,6.0',
    "trailing space": "5.0 ,0.5,a,7,True,6.0", "hex": "0x10,0.5,a,7,True,6.0", "underscore": "1_000,0.5,a,7,True,6.0",
    "too many fields": "5.0,0.5,a,7,True,6.0,9", "too few fields": "5.0,0.5", "blank": "",
    "quoted line break": '5.0,0.5,"a\nb",7,True,6.0', "quoted separator": '5.0,0.5,"a,b",7,True,6.0',
    "unclosed quote": '5.0,0.5,"a,7,True,6.0', "NUL byte": "5\x00.0,0.5,a,7,True,6.0",
    "BOM": "\ufeff5.0,0.5,a,7,True,6.0", "long line": "5.0,0.5," + "a" * 300_000 + ",7,True,6.0",
    "response beyond floats": "5.0,0.5,a,7,True,-1e400",
    "int beyond int64": "5.0,0.5,a,99999999999999999999999,True,6.0",
    "fraction in an int": "5.0,0.5,a,3.5,True,6.0", "bool maybe": "5.0,0.5,a,7,maybe,6.0",
    "level outside": "5.0,0.5,zzz,7,True,6.0",
}


def _csv_lines() -> list[str]:
    rng = np.random.default_rng(0)
    x1, x2 = rng.uniform(0, 10, N_LINES).round(3), rng.uniform(-1, 1, N_LINES).round(3)
    g, k, b = rng.choice(["a", "b", "c"], N_LINES), rng.integers(0, 100, N_LINES), rng.random(N_LINES) < 0.5
    y = (1 + x1 - x2 + (g == "b") + 0.01 * k + rng.normal(0, 1, N_LINES)).round(3)
    return [f"{a},{c},{d},{e},{f},{h}" for a, c, d, e, f, h in zip(x1, x2, g, k, b, y, strict=True)]


def _write_csv(path: Path, lines: list[str], at: int, line: str) -> CSVSource:
    out = list(lines)
    out[at] = line
    path.write_bytes(("x1,x2,g,k,b,y\n" + "\n".join(out) + "\n").encode())
    return CSVSource(path, chunksize=500, dtype={"k": "int64", "b": "bool"})


@pytest.mark.parametrize("at", [1, 2998], ids=["line 3", "line 3000"])
def test_one_malformed_csv_line_shows_nothing_its_neighbour_does_not(tmp_path, at):
    """Every bad line of :data:`BAD_LINES` (numbers, declared integers and booleans, text levels) against the good
    line at the same place: the fits show the same (and so do line 3 and line 3000).  Already held before."""
    lines = _csv_lines()
    formula = "y ~ x1 + x2 + k + b + C(g, levels=['a', 'b', 'c'])"
    kwargs = {"method": "ssp", "bounds": {"x1": (0, 10), "x2": (-1, 1), "y": (-10, 30), "k": (0, 100)}}
    base = _shown(formula, _write_csv(tmp_path / "good.csv", lines, at, GOOD), **kwargs)
    assert base.error is None
    differ = {name: shown for name, line in BAD_LINES.items()
              if (shown := _shown(formula, _write_csv(tmp_path / "bad.csv", lines, at, line), **kwargs)) != base}
    assert not differ, differ


def test_a_byte_outside_utf8_at_line_3_or_3000_shows_the_same(tmp_path):
    lines = _csv_lines()
    kwargs = {"method": "ssp", "bounds": {"x1": (0, 10), "x2": (-1, 1), "y": (-10, 30)}}
    shown = []
    for at in (1, 2998):
        out = list(lines)
        out[at] = "5.0,0.5,a,7,True,6.0"
        raw = ("x1,x2,g,k,b,y\n" + "\n".join(out) + "\n").encode().replace(b"5.0,0.5,a,7,", b"5.0,0.5,\xff,7,")
        path = tmp_path / f"bad{at}.csv"
        path.write_bytes(raw)
        shown.append(_shown("y ~ x1 + x2", CSVSource(path, chunksize=500), **kwargs))
    assert shown[0] == shown[1] and shown[0].error is None
