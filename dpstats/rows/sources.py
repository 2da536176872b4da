"""Data that do not fit in memory: CSV and Parquet files read in chunks, and Dask DataFrames.

:func:`dpstats.dp_ols` accepts, besides a pandas DataFrame or a dict of
arrays, a path or a list of paths to CSV or Parquet files (or a directory of
Parquet files), a ``dask.dataframe.DataFrame``, or one of the sources below
(to choose the chunk size or pass reader options)::

    dpstats.dp_ols("y ~ x1 + x2", "data/*.parquet", ...)                  # a glob pattern
    dpstats.dp_ols("y ~ x1 + x2", ["a.csv", "b.csv"], ...)
    dpstats.dp_ols("y ~ x1 + x2", dd.read_parquet("s3://bucket/table/"), ...)
    dpstats.dp_ols("y ~ x1 + x2", CSVSource("big.csv", chunksize=100_000, sep=";"), ...)

A source knows its **schema** (column names and dtypes, public) without
reading the data.  A CSV file stores no types, so they come from public facts
(:meth:`CSVSource.with_text_columns`): ``dtype=`` where it declares them,
text for a column the call declares text levels for, float64 otherwise.  It runs a
picklable *task* on every chunk (a pandas DataFrame of the used columns) and
combines the partial results with an associative function:

* local sources (:class:`CSVSource`, :class:`ParquetSource`,
  :class:`DataFrameSource`) read and process chunks in this process, in a
  small pool of threads with a bounded number of chunks in flight, so the
  memory is that of a few chunks plus the accumulators, whatever n;
* :class:`DaskSource` builds one task per partition and a tree of combine
  tasks and computes them on Dask's current scheduler (a
  ``distributed.Client``, if one is active): partitions are read and reduced
  where they live, and only the combined aggregate comes back to the caller.

The row order of a source (files in the order given, or sorted when a glob or
a directory is given; rows in file order; Dask partitions in order) defines
the global row index used by methods that assign rows to blocks.  Factor
levels are never read from the data: a categorical column counts as declared
only when its categories are part of the schema (a pandas or known Dask
Categorical dtype); Parquet dictionary columns and CSV strings need
``levels=`` or ``C(g, levels=[...])``.
"""

from __future__ import annotations

import contextlib
import copy
import csv
import glob
import itertools
import os
import warnings
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpstats.blas import single_threaded_blas
from dpstats.errors import DataTypeError, DPStatsError, MissingDataError
from dpstats.formula.frame import as_frame, check_unique_columns
from dpstats.rows.csv_fields import converted, is_number_type, read_type, schema_type
from dpstats.rows.csv_lines import TEXT_OPTIONS, open_lines
from dpstats.validation import shown

__all__ = ["DataSource", "DataFrameSource", "CSVSource", "ParquetSource", "DaskSource", "as_source",
           "is_chunked_data", "DEFAULT_CHUNK_ROWS"]

#: rows per chunk of the local sources (and slice of a large Dask partition): 1 MB per float column, so the
#: few copies a chunk goes through (reader, frame, design matrix) stay in the processor's caches for designs of
#: tens of columns; measured in benchmarks/scale.py (2^17 was fastest, 2^16-2^18 within 10%)
DEFAULT_CHUNK_ROWS = 1 << 17

_CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".tsv", ".tsv.gz", ".txt")
_PARQUET_SUFFIXES = (".parquet", ".pq", ".parq")

#: A chunk task: (frame, global offset of its first prepared row) -> (partial result, number of prepared rows)
Task = Callable[[pd.DataFrame, int], tuple[Any, int]]
Combine = Callable[[Any, Any], Any]


def _unknown_to_object(schema: pd.DataFrame) -> pd.DataFrame:
    """Categorical columns without public categories are treated as plain values (levels then must be declared);
    duplicate column names are refused (:func:`~dpstats.formula.frame.check_unique_columns`)."""
    check_unique_columns(schema.columns)
    out = {}
    for c in schema.columns:
        col = schema[c]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cats = list(col.cat.categories)
            if not cats or cats == ["__UNKNOWN_CATEGORIES__"]:
                col = col.astype(object)
        out[c] = col
    return pd.DataFrame(out, columns=schema.columns).iloc[:0]


def default_workers() -> int:
    """Threads that process the chunks of a local source: the number of cores, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


class DataSource:
    """Base class: a table read chunk by chunk.  Subclasses implement :meth:`schema` and :meth:`frames`.

    Local sources read the chunks in this thread and process them in a pool
    of ``workers`` threads (numpy, pandas and pyarrow release the GIL for the
    heavy work), with at most ``2 * workers`` chunks in flight; the partial
    results are combined in chunk order, so the result does not depend on
    the timing of the threads.
    """

    kind = "data"
    workers: int | None = None

    def schema(self) -> pd.DataFrame:
        """A frame with no rows and the table's columns and dtypes (public)."""
        raise NotImplementedError

    def with_text_columns(self, text: Mapping[str, Sequence[str]]) -> DataSource:
        """This source with the columns of ``text`` (each with its declared text levels) typed as text, for
        sources whose files store no types (:class:`CSVSource`); the others know their types and return
        themselves."""
        return self

    def known_rows(self) -> int | None:
        """The number of rows when the metadata give it without reading the data, else None."""
        return None

    def raw_rows(self) -> int | None:
        """The number of raw rows (before preparation) when it is cheap to get: from the metadata, or from a
        count of one column where that reads little; None when only a full counting pass would give it."""
        return self.known_rows()

    def frames(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        """The chunks, in row order, with only ``columns`` (local sources)."""
        raise NotImplementedError

    def describe(self) -> str:
        return self.kind

    def run(self, task: Task, combine: Combine, columns: Sequence[str], *, offsets: bool,
            counter: Callable[[pd.DataFrame], int] | None = None, raw_offsets: bool = False) -> tuple[Any, int]:
        """Apply ``task`` to every chunk and combine the partial results in chunk order; returns (combined,
        total prepared rows).

        ``offsets``: the task needs the global index of each chunk's first
        (prepared) row.  When preparation never drops rows (``raw_offsets``,
        i.e. ``missing="raise"``), it is the count of raw rows before the
        chunk and chunks run in parallel; otherwise they run one after the
        other, each offset being the prepared rows of the chunks before.  A
        distributed source may count rows with ``counter`` first.
        """
        workers = self.workers if self.workers is not None else default_workers()
        if offsets and not raw_offsets:
            workers = 1
        acc, total, raw = None, 0, 0
        if workers <= 1:
            for frame in self.frames(columns):
                part, rows = task(frame, total)
                total += rows
                acc = part if acc is None else combine(acc, part)
            return acc, total
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        pending: deque = deque()

        def collect() -> None:
            nonlocal acc, total
            part, rows = pending.popleft().result()
            total += rows
            acc = part if acc is None else combine(acc, part)

        with single_threaded_blas(), ThreadPoolExecutor(workers) as pool:
            for frame in self.frames(columns):
                pending.append(pool.submit(task, frame, raw if offsets else 0))
                raw += len(frame)
                while len(pending) > 2 * workers:
                    collect()
            while pending:
                collect()
        return acc, total

    def count(self, counter: Callable[[pd.DataFrame], int], columns: Sequence[str]) -> int:
        """The number of rows after preparation (``counter`` prepares one chunk and returns its length)."""
        return int(sum(counter(f) for f in self.frames(columns)))


@dataclass
class DataFrameSource(DataSource):
    """An in-memory DataFrame processed ``chunksize`` rows at a time (``dp_ols(..., chunksize=...)``)."""

    frame: pd.DataFrame
    chunksize: int = DEFAULT_CHUNK_ROWS
    workers: int | None = None
    kind: str = field(default="an in-memory DataFrame", init=False)

    def __post_init__(self) -> None:
        self.chunksize = _check_chunksize(self.chunksize)

    def schema(self) -> pd.DataFrame:
        check_unique_columns(self.frame.columns)
        return self.frame.iloc[:0]

    def known_rows(self) -> int | None:
        return int(len(self.frame))

    def frames(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        # the columns once per pass, as a frame of the original columns' Series (no copy of their data), then rows
        # by position: selecting columns costs about 1 ms a chunk, and a fit such as pgd's makes hundreds of passes
        selected = pd.DataFrame({c: self.frame[c] for c in columns}, copy=False)
        for start in range(0, len(self.frame), self.chunksize):
            yield selected.iloc[start:start + self.chunksize]


def _check_chunksize(chunksize: Any) -> int:
    if isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer)) or chunksize < 1:
        raise DataTypeError(f"chunksize must be a positive integer, got {shown(chunksize)}")
    return int(chunksize)


def _expand(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], suffixes: tuple[str, ...]
            ) -> list[str]:
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not items:
        raise DataTypeError("no files were given")
    out: list[str] = []
    for item in items:
        s = os.fspath(item)
        if os.path.isdir(s):
            found = sorted(str(p) for p in Path(s).iterdir() if str(p).lower().endswith(suffixes))
            if not found:
                raise DataTypeError(f"the directory {s} holds no {'/'.join(suffixes)} files")
            out += found
        elif any(ch in s for ch in "*?["):
            found = sorted(glob.glob(s))
            if not found:
                raise DataTypeError(f"no file matches {s}")
            out += found
        elif os.path.exists(s):
            out.append(s)
        else:
            raise DataTypeError(f"no such file: {s}")
    return out


class CSVSource(DataSource):
    """CSV files read with ``pandas.read_csv(chunksize=...)``, in the order given.

    A CSV file stores no types, and taking them from how pandas parses the
    first rows would make the design depend on the data (a rare text level,
    or a number too large for an integer, in one row would change a column's
    type and so the fit's outcome; see ``docs/privacy.md``).  The types are
    therefore public facts: ``dtype`` where it declares them (numbers,
    booleans or text; a declared integer or boolean column is read as pandas'
    nullable type, so that it can hold a missing value); text for a column
    the call declares text levels for (``levels=`` or ``C(g, levels=[...])``,
    :meth:`with_text_columns`); float64 for every other column.  Each line is
    read by rules that look at that line only (:mod:`dpstats.rows.csv_fields`):
    every line after the header is a row (a blank line, a line with more
    fields than the header, or a line whose quote characters do not pair up,
    :mod:`dpstats.rows.csv_lines`, is a row of missing values), and a field that
    does not fit its column's type is a missing value, as in memory
    (:mod:`dpstats.numbers`).  Other keyword arguments go to ``read_csv``
    (``sep``, ``compression``, ...); those that decide how lines become rows
    and fields become values are set here.  ``infer_rows`` is deprecated and
    ignored.
    """

    kind = "CSV"

    def __init__(self, paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
                 chunksize: int = DEFAULT_CHUNK_ROWS, dtype: dict[str, Any] | None = None,
                 infer_rows: int | None = None, workers: int | None = None, **read_csv_kwargs: Any) -> None:
        if infer_rows is not None:
            warnings.warn("CSVSource(infer_rows=...) is deprecated and ignored: CSV column types come from dtype=, "
                          "the declared text levels and float64, never from the data", DeprecationWarning,
                          stacklevel=2)
        self.paths = _expand(paths, _CSV_SUFFIXES)
        self.workers = workers
        self.chunksize = _check_chunksize(chunksize)
        self.kwargs = _checked_reader_options(read_csv_kwargs)
        # every line after the header is a row: a blank line is a row of missing values (pandas would skip it,
        # and n, which is public, would then tell whether a row of the file is blank)
        self.kwargs["skip_blank_lines"] = False
        self._dtype = {c: schema_type(c, t) for c, t in dtype.items()} if dtype else None
        self._text: dict[str, frozenset[str]] = {}
        self._schema: pd.DataFrame | None = None

    def describe(self) -> str:
        return f"CSV ({len(self.paths)} file{'s' if len(self.paths) > 1 else ''})"

    def with_text_columns(self, text: Mapping[str, Sequence[str]]) -> CSVSource:
        out = copy.copy(self)
        out._text, out._schema = {c: frozenset(levels) for c, levels in text.items()}, None
        return out

    def schema(self) -> pd.DataFrame:
        """The header's columns with their public types (the class docstring); no data row is read."""
        if self._schema is None:
            columns = [list(self._header(p).columns) for p in self.paths]
            for p, cols in zip(self.paths[1:], columns[1:], strict=True):
                if cols != columns[0]:
                    raise DataTypeError(f"the CSV files have different columns ({p} differs from {self.paths[0]})")
            check_unique_columns(columns[0])
            types = self._types(columns[0])
            frame = pd.DataFrame({c: pd.Series([], dtype=types[c]) for c in columns[0]}, columns=columns[0])
            self._schema = _unknown_to_object(frame)
        return self._schema

    def _header(self, path: str) -> pd.DataFrame:
        try:
            with open_lines(path, self.kwargs) as text:
                header = pd.read_csv(text, nrows=0, **self._parser_options())
        except _READ_FAILURES as exc:  # pandas' ParserError (a malformed line) is a ValueError
            raise _unreadable(exc) from None
        if any("\ufffd" in str(c) for c in header.columns):  # the header (public) is not text in this encoding
            raise DataTypeError(_UNREADABLE_CSV)
        return header

    def _types(self, columns: Sequence[str]) -> dict[str, Any]:
        declared = self._dtype or {}
        return {c: declared[c] if c in declared else ("str" if c in self._text else float) for c in columns}

    def frames(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        """The chunks of ``columns`` in their public types.  Every column of a line is parsed (the unused ones as
        text), so that a line with more fields than the header is seen, and made a row of missing values."""
        used = list(columns)
        types = self._types(list(self.schema().columns))
        read = {c: (read_type(t) if c in used else "str") for c, t in types.items()}
        numbers = [c for c in used if is_number_type(types[c])]
        for p in self.paths:
            yield from self._file_frames(p, used, read, numbers, {c: types[c] for c in used})

    def _file_frames(self, path: str, used: list[str], read: dict[str, Any], numbers: list[str],
                     types: dict[str, Any]) -> Iterator[pd.DataFrame]:
        """One file's chunks, every line one row (:mod:`dpstats.rows.csv_lines`) and every field one value
        (:mod:`dpstats.rows.csv_fields`).  pandas' number parser reads the file; at the first chunk with a field it
        cannot read as a number, the file is read again from that chunk on with the number columns as text, each
        field converted by :func:`~dpstats.rows.csv_fields.text_number` (the parser's value of every field it reads,
        NaN for the others)."""
        done = 0
        for mode in ("numbers", "text"):
            as_text = numbers if mode == "text" else []
            chunks = self._reader(path, read | {c: "str" for c in as_text})
            for index in itertools.count():
                try:
                    item = next(chunks, None)
                except _READ_FAILURES as exc:
                    if _ours(exc) or mode == "text":
                        raise _unreadable(exc) from None
                    chunks.close()
                    break  # read again from this chunk on, in the next mode
                if item is None:
                    return
                if index >= done:
                    yield converted(item[used], types, as_text)
                    done += 1

    def _reader(self, path: str, dtypes: dict[str, Any]) -> Generator[pd.DataFrame]:
        """The chunks of ``read_csv`` with the header's names (never an implicit index column: ``index_col=False``)."""
        with self._chunks(path, list(dtypes), dtype=dtypes, **self._missing_tokens(list(dtypes))) as reader:
            yield from reader

    @contextlib.contextmanager
    def _chunks(self, path: str, names: list[str], **options: Any) -> Iterator[Any]:
        """pandas' chunked reader of one file with the header's ``names`` (never an implicit index column:
        ``index_col=False``), the caller's keyword arguments and ``options``, reading each line as one row
        (:func:`~dpstats.rows.csv_lines.open_lines`: a quote never carries over a line break)."""
        with open_lines(path, self.kwargs) as text, pd.read_csv(
                text, chunksize=self.chunksize, names=names, header=0, index_col=False, engine="c", **options,
                **self._parser_options()) as reader:
            yield reader

    def _parser_options(self) -> dict[str, Any]:
        """The caller's ``read_csv`` arguments other than how to open and decode the file (applied on opening)."""
        return {k: v for k, v in self.kwargs.items() if k not in TEXT_OPTIONS}

    def _missing_tokens(self, columns: Sequence[str]) -> dict[str, Any]:
        """``read_csv``'s missing-value arguments: pandas' default tokens in every column, except that a declared
        text level (such as "None" or the country code "NA") is read as that level, not as missing (else the
        same row would fit in memory and be refused from the file)."""
        if not self._text:
            return {}
        return {"keep_default_na": False,
                "na_values": {c: sorted(PANDAS_MISSING_TOKENS - self._text.get(c, frozenset())) for c in columns}}


#: the ``read_csv`` options a :class:`CSVSource` passes on: how to open and decode the file and how a line splits
#: into fields (one ASCII character each).  Every other option could make how lines become rows, the file's header,
#: or how a field is read depend on other lines (a comment character, an escape character, a line terminator, a
#: dialect, skipped lines or footer, dates parsed from the fields; ``decimal``, ``thousands`` and ``na_values``,
#: which pandas' number parser applies but the text reading of a chunk with a field it cannot parse does not), and
#: is refused.
READER_OPTIONS = frozenset({"sep", "delimiter", "quotechar", "quoting", "skipinitialspace", "encoding",
                            "encoding_errors", "compression"})
#: the ``read_csv`` options that CSVSource sets itself
_SET_BY_SOURCE = frozenset({"chunksize", "iterator", "usecols", "nrows", "names", "header", "index_col", "engine",
                            "on_bad_lines", "converters", "dtype", "skip_blank_lines"})


def _checked_reader_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's ``read_csv`` options, refused (:class:`~dpstats.errors.DataTypeError`, from the options alone)
    where they are not in :data:`READER_OPTIONS` or would read a line by more than itself; ``encoding_errors``
    defaults to "replace" (a byte that is not valid in the encoding is U+FFFD in its field: a missing value in a
    number column, a value outside the declared levels in a text one; "strict" would refuse the file for one byte)."""
    for name in options:
        if name in _SET_BY_SOURCE:
            raise DataTypeError(f"CSVSource sets {name} itself")
        if name not in READER_OPTIONS:
            raise DataTypeError(
                f"CSVSource does not take read_csv's {name}=: every line after the header is one row, read by a rule "
                f"that looks at that line only, and {name}= could make a line's reading depend on other lines, or "
                f"the header on the data. Prepare the file instead (the first line the header, one row per line); "
                f"the options it takes are: {', '.join(sorted(READER_OPTIONS))}")
    out = dict(options)
    for name in ("sep", "delimiter", "quotechar"):
        value = out.get(name)
        if name in out and not (isinstance(value, str) and len(value) == 1 and value.isascii()
                                and value not in "\r\n"):
            raise DataTypeError(f"CSVSource({name}=...) takes one ASCII character, not a line break (a separator "
                                f"of several characters, a pattern or a character outside ASCII is read by pandas' "
                                f"Python parser, which refuses a long field wherever it is)")
    quote = out.get("quotechar", '"')  # read_csv's default quote character unless another is given
    if (out.get("quoting", csv.QUOTE_MINIMAL) != csv.QUOTE_NONE and quote is not None
            and quote == out.get("sep", out.get("delimiter", ","))):
        raise DataTypeError("CSVSource: the quote character (default '\"') and the separator must differ")
    if out.get("quoting", csv.QUOTE_MINIMAL) not in (csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONE):
        raise DataTypeError("CSVSource(quoting=...) takes csv.QUOTE_MINIMAL (the default), csv.QUOTE_ALL or "
                            "csv.QUOTE_NONE: QUOTE_NONNUMERIC would refuse the file for one unquoted text field")
    errors = out.setdefault("encoding_errors", "replace")
    if errors not in ("replace", "ignore", "backslashreplace"):
        raise DataTypeError("CSVSource(encoding_errors=...) takes 'replace' (the default), 'ignore' or "
                            "'backslashreplace': 'strict' or 'surrogateescape' would refuse the file for one byte")
    return out


#: pandas' default missing-value tokens of ``read_csv`` (its documentation's ``na_values``)
PANDAS_MISSING_TOKENS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                                   "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})

#: what pandas' C parser raises on a file it cannot read as asked (its ParserError and UnicodeDecodeError are
#: ValueErrors)
_READ_FAILURES = (ValueError, TypeError, OverflowError)


def _ours(exc: Exception) -> bool:
    """Whether a failure while reading is dpstats's own typed error, passed on as it is (decided by its type: a
    pandas message can quote a field)."""
    return isinstance(exc, (MissingDataError, DataTypeError))


def _unreadable(exc: Exception) -> Exception:
    """The error to raise for a failure while reading a CSV file: :func:`_ours` as it is, else the domain check
    (pandas' message, which may quote a value or a line, withheld)."""
    return exc if _ours(exc) else DataTypeError(_UNREADABLE_CSV)


#: the domain check of a CSV file that cannot be split into lines and fields (the values are not shown)
_UNREADABLE_CSV = ("the CSV header is not text, or the data cannot be split into lines and fields (for example, a "
                   "quote that is never closed; the line is not shown). Fix the file: every other line, field and "
                   "value is read as a row, as a value or as a missing value")


@dataclass(frozen=True)
class ColumnReadings:
    """How each column of a Parquet data set of several files is read (:func:`_column_readings`)."""

    #: columns read cell by cell as Python objects
    objects: frozenset[str] = frozenset()
    #: columns read as float64
    floats: frozenset[str] = frozenset()
    #: columns that some files store without any value (Arrow ``null``): the type the other files store, to which
    #: those files' column is cast (every cell missing)
    casts: tuple[tuple[str, Any], ...] = ()


def _column_readings(schemas: Sequence[Any]) -> ColumnReadings:
    """How the columns of the files of a Parquet data set with the same column names are read: a function of the
    files' schemas, chosen so that no row's value can decide whether, or how, the files are read together.

    A writer types a pandas ``object`` column from its values, file by file: a column with no value in a file is
    stored as ``null``, whole numbers as integers, one text cell as text.  A file that stores a column as ``null``
    holds no value in it, so says nothing of its type: it is read as if it stored the other files' type with every
    cell missing (a column that no file stores a value in is read as objects).  Among the other files, a column
    that pandas' metadata declares ``object`` (a declaration of the data frame) and any column stored as different
    types that are not all numbers is read as objects, whose cells the formula reads one by one as every object
    column (a number is a number, text a level or a missing value); a column stored as different numeric or
    boolean types is read as float64 (lossy for integers beyond 2^53, never refused), and so is a column that the
    files store as decimals (a database export's fixed-point numbers, which pandas would read as objects: 15 to 17
    significant digits kept; mixed with integers or floats in other files too).  Any other column keeps the type
    its files store."""
    import pyarrow as pa  # noqa: PLC0415

    objects: set[str] = set()
    floats: set[str] = set()
    casts: dict[str, Any] = {}
    declared = [{c.get("name"): c.get("numpy_type") for c in (sc.pandas_metadata or {}).get("columns", [])}
                for sc in schemas]
    for i, name in enumerate(schemas[0].names):
        stored = [(sc.field(i).type, d.get(name)) for sc, d in zip(schemas, declared, strict=True)]
        valued = [(t, kind) for t, kind in stored if t != pa.null()]
        types = {t for t, _ in valued}
        if not valued or any(kind == "object" for _, kind in valued):
            objects.add(name)
        elif any(pa.types.is_decimal(t) for t in types):
            numeric = all(pa.types.is_decimal(t) or pa.types.is_integer(t) or pa.types.is_floating(t) for t in types)
            (floats if numeric else objects).add(name)
        elif len(types) > 1:
            if all(pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) for t in types):
                floats.add(name)
            else:
                objects.add(name)
        elif len(valued) < len(stored):
            casts[name] = next(iter(types))
    return ColumnReadings(frozenset(objects), frozenset(floats), tuple(casts.items()))


def _with_casts(table: Any, readings: ColumnReadings) -> Any:
    """An Arrow table or record batch whose ``null`` columns that ``readings`` gives a type are cast to it (every
    cell missing, as the other files' type would hold them)."""
    import pyarrow as pa  # noqa: PLC0415

    casts = dict(readings.casts)
    fields = [f.with_type(casts[f.name]) if f.name in casts and f.type == pa.null() else f for f in table.schema]
    if all(f.type == g.type for f, g in zip(fields, table.schema, strict=True)):
        return table
    if isinstance(table, pa.RecordBatch):  # RecordBatch.cast needs pyarrow 16; Table.cast is older
        table = pa.Table.from_batches([table])
    return table.cast(pa.schema(fields, metadata=table.schema.metadata))


def _as_read(frame: pd.DataFrame, readings: ColumnReadings) -> pd.DataFrame:
    """A frame of a Parquet file with the data set's readings (:func:`_column_readings`) applied, per column."""
    for c in readings.objects.intersection(frame.columns):
        if frame[c].dtype != object:
            frame[c] = frame[c].astype(object)
    for c in readings.floats.intersection(frame.columns):
        if frame[c].dtype != np.float64:
            frame[c] = pd.to_numeric(frame[c].astype(object), errors="coerce").astype(np.float64)
    return frame


#: the domain check of a Parquet file whose metadata or pages cannot be decoded (where is not shown)
_DAMAGED_PARQUET = ("a Parquet file cannot be decoded: its metadata or its pages are damaged or cut short (the "
                    "reader's message is withheld, and where is not shown; it is not a file of rows). Write the file "
                    "again")


@contextlib.contextmanager
def _damaged_parquet() -> Iterator[None]:
    """Reading a Parquet file's metadata or decoding its pages: pyarrow's failure on damaged bytes (``ArrowInvalid``,
    or an ``OSError`` from a decompressor), whose type and message depend on where the damage is and what it hit, is
    the domain check :data:`_DAMAGED_PARQUET`; before, it reached the fit as an untyped error (``InternalFitError``,
    "a bug").  A file that is absent or cannot be opened is not its bytes, and passes as it is."""
    import pyarrow as pa  # noqa: PLC0415

    try:
        yield
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (OSError, pa.ArrowInvalid):
        raise DataTypeError(_DAMAGED_PARQUET) from None


class ParquetSource(DataSource):
    """Parquet files read with ``pyarrow.parquet.ParquetFile.iter_batches`` (the ``io`` extra), in the order given.

    ``batch_size`` rows per chunk (never more than a row group; row groups
    smaller than it give smaller chunks).  The row count comes from the file
    metadata.  Dictionary (categorical) columns need declared levels.
    ``workers`` threads process the chunks (default: the number of cores, at
    most 4).
    """

    kind = "Parquet"

    def __init__(self, paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *,
                 batch_size: int = DEFAULT_CHUNK_ROWS, workers: int | None = None) -> None:
        try:
            import pyarrow.parquet  # noqa: F401, PLC0415
        except ImportError:  # pragma: no cover - depends on the environment
            raise DataTypeError("reading Parquet files needs pyarrow: pip install 'dpstats[io]'") from None
        self.paths = _expand(paths, _PARQUET_SUFFIXES)
        self.batch_size = _check_chunksize(batch_size)
        self.workers = workers
        self._schema: pd.DataFrame | None = None
        self._readings = ColumnReadings()

    def describe(self) -> str:
        return f"Parquet ({len(self.paths)} file{'s' if len(self.paths) > 1 else ''})"

    def schema(self) -> pd.DataFrame:
        import pyarrow.parquet as pq  # noqa: PLC0415

        if self._schema is None:
            with _damaged_parquet():  # the footer (the file's public metadata) cannot be read
                schemas = [pq.read_schema(p) for p in self.paths]
            for p, other in zip(self.paths[1:], schemas[1:], strict=True):
                if other.names != schemas[0].names:
                    raise DataTypeError(f"the Parquet files have different columns ({p} differs from "
                                        f"{self.paths[0]})")
            self._readings = _column_readings(schemas)
            empty = _with_casts(schemas[0].empty_table(), self._readings).to_pandas()
            self._schema = _unknown_to_object(_as_read(empty, self._readings))
        return self._schema

    def known_rows(self) -> int | None:
        import pyarrow.parquet as pq  # noqa: PLC0415

        with _damaged_parquet():
            return int(sum(pq.ParquetFile(p).metadata.num_rows for p in self.paths))

    def frames(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        for p in self.paths:
            yield from self._row_group_frames(p, None, columns)

    def _row_group_frames(self, path: str, row_group: int | None, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        import pyarrow.parquet as pq  # noqa: PLC0415

        self.schema()  # the readings each file's batches take
        # streamed column reads (no pre-buffering of whole row groups): several times less memory, and faster
        with _damaged_parquet():
            f = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)
        with f:
            groups = None if row_group is None else [row_group]
            batches = f.iter_batches(batch_size=self.batch_size, columns=list(columns), row_groups=groups)
            while True:
                with _damaged_parquet():  # decoding the pages (not the conversion to pandas, below)
                    batch = next(batches, None)
                if batch is None:
                    return
                yield _as_read(_with_casts(batch, self._readings).to_pandas(split_blocks=True),  # one block per column
                               self._readings)

    def _units(self) -> list[tuple[str, int, int]]:
        """(path, row group, global index of its first raw row) for every row group, in row order."""
        import pyarrow.parquet as pq  # noqa: PLC0415

        units, start = [], 0
        for p in self.paths:
            with _damaged_parquet():
                meta = pq.ParquetFile(p).metadata
            for g in range(meta.num_row_groups):
                units.append((p, g, start))
                start += meta.row_group(g).num_rows
        return units

    def run(self, task: Task, combine: Combine, columns: Sequence[str], *, offsets: bool,
            counter: Callable[[pd.DataFrame], int] | None = None, raw_offsets: bool = False) -> tuple[Any, int]:
        """As :meth:`DataSource.run`, but each worker thread reads its own row groups (batch by batch), so that
        reading is parallel too; partial results are combined in row order (one per row group)."""
        workers = self.workers if self.workers is not None else default_workers()
        if workers <= 1 or (offsets and not raw_offsets):
            return super().run(task, combine, columns, offsets=offsets, counter=counter, raw_offsets=raw_offsets)
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

        def unit(path: str, group: int, start: int) -> tuple[Any, int]:
            acc, rows, raw = None, 0, start
            for frame in self._row_group_frames(path, group, columns):
                part, k = task(frame, raw if offsets else 0)
                raw += len(frame)
                rows += k
                acc = part if acc is None else combine(acc, part)
            return acc, rows

        acc, total = None, 0
        pending: deque = deque()

        def collect() -> None:
            nonlocal acc, total
            part, rows = pending.popleft().result()
            total += rows
            if part is not None:
                acc = part if acc is None else combine(acc, part)

        with single_threaded_blas(), ThreadPoolExecutor(workers) as pool:
            for path, group, start in self._units():
                pending.append(pool.submit(unit, path, group, start))
                while len(pending) > workers:
                    collect()
            while pending:
                collect()
        return acc, total


class DaskSource(DataSource):
    """A ``dask.dataframe.DataFrame``: one task per partition, combined in a tree, computed by Dask.

    With a ``distributed.Client`` active, partitions are read and reduced on
    the workers and only the combined aggregates (d x d matrices, or m x d x d
    for TukeyEM's blocks) reach the caller.  ``split_every`` is the fan-in of
    the combine tree.  Methods that need global row indices (TukeyEM, the
    iterative methods) first count the rows of every partition: on one column
    with ``missing="raise"`` (a light pass; the values are checked when the
    rows are read), on the prepared rows otherwise (a full pass); only counts
    return.  Passes over a few selected rows (a method's sample) that name
    their selection keep those rows where they were read (:meth:`keep`), so
    that later passes over the same selection read nothing again.
    """

    kind = "Dask"

    def __init__(self, frame: Any, *, split_every: int = 8) -> None:
        self.frame = frame
        self.split_every = max(2, int(split_every))
        self._lengths: dict[Any, list[int]] = {}  # per-partition raw row counts ("raw")
        self._counted: dict[tuple[int, tuple[str, ...]], tuple[Any, list[int]]] = {}  # by evaluator and columns

    def describe(self) -> str:
        return f"Dask DataFrame ({self.frame.npartitions} partitions)"

    def schema(self) -> pd.DataFrame:
        return _unknown_to_object(self.frame._meta.iloc[:0])

    def _parts(self, columns: Sequence[str]) -> list[Any]:
        """One delayed partition per task, with the ``columns`` (in the frame's order: reordering would copy
        every partition; the rows are read by column name).  Each is taken from its partition by
        :func:`_schema_columns`, outside dpstats's marked tasks, so that a partition without them is the domain
        check of :func:`_partition_failures`."""
        import dask  # noqa: PLC0415

        wanted = set(columns)
        names = [c for c in self.frame.columns if c in wanted]
        frame = self.frame if len(names) == len(self.frame.columns) else self.frame[names]
        take = dask.delayed(_schema_columns)
        return [take(part, names) for part in frame.to_delayed()]

    def _lengths_of(self, counter: Callable[[pd.DataFrame], int], columns: Sequence[str]) -> list[int]:
        import dask  # noqa: PLC0415

        owner = getattr(counter, "__self__", counter)
        key = (id(owner), tuple(columns))  # one count per evaluator
        held = self._counted.get(key)
        if held is None or held[0] is not owner:  # (the evaluator is held, so its id is not reused while kept)
            with _partition_failures():
                counted = dask.compute(*[dask.delayed(_Marked(counter))(p) for p in self._parts(columns)])
            held = (owner, [int(c) for c in counted])
            self._counted[key] = held
        return held[1]

    def count(self, counter: Callable[[pd.DataFrame], int], columns: Sequence[str]) -> int:
        return int(sum(self._lengths_of(counter, columns)))

    def _raw_lengths(self) -> list[int]:
        """Raw rows of every partition, counted on the first column only (a columnar reader such as Parquet
        then reads about 1/(d + 1) of the data; only the counts come back)."""
        import dask  # noqa: PLC0415

        if "raw" not in self._lengths:
            parts = self._parts([str(self.frame.columns[0])])
            with _partition_failures():
                self._lengths["raw"] = [int(c) for c in dask.compute(*[dask.delayed(len)(p) for p in parts])]
        return self._lengths["raw"]

    def raw_rows(self) -> int | None:
        return int(sum(self._raw_lengths()))

    def _starts(self, parts: list[Any], columns: Sequence[str], *, offsets: bool,
                counter: Callable[[pd.DataFrame], int] | None, raw_offsets: bool) -> list[int]:
        """The global index of each partition's first row (0 for every partition when ``offsets`` is off)."""
        if not offsets:
            return [0] * len(parts)
        if counter is None:
            raise ValueError("a task that needs row offsets needs a counter")
        # with missing="raise" preparation drops no row: the raw counts are the offsets, and the values are
        # checked when each partition is prepared in this pass
        lengths = self._raw_lengths() if raw_offsets else self._lengths_of(counter, columns)
        return [int(s) for s in np.concatenate([[0], np.cumsum(lengths)[:-1]])]

    def run(self, task: Task, combine: Combine, columns: Sequence[str], *, offsets: bool,
            counter: Callable[[pd.DataFrame], int] | None = None, raw_offsets: bool = False) -> tuple[Any, int]:
        import dask  # noqa: PLC0415

        parts = self._parts(columns)
        starts = self._starts(parts, columns, offsets=offsets, counter=counter, raw_offsets=raw_offsets)
        level = [dask.delayed(_Marked(task))(p, int(s)) for p, s in zip(parts, starts, strict=True)]
        return self._compute_tree(level, combine)

    def _compute_tree(self, level: list[Any], combine: Combine) -> tuple[Any, int]:
        """Combine delayed (partial, rows) pairs in a tree of fan-in ``split_every`` and compute the root."""
        import dask  # noqa: PLC0415

        pair = dask.delayed(_Marked(_combine_pairs))
        while len(level) > 1:
            level = [pair(combine, *level[i:i + self.split_every]) for i in range(0, len(level), self.split_every)]
        with single_threaded_blas(), _partition_failures():  # (threaded scheduler: distributed sets its own BLAS)
            (result,) = dask.compute(level[0])
        return result

    def keep(self, task: Task, columns: Sequence[str], *, offsets: bool,
             counter: Callable[[pd.DataFrame], int] | None = None, raw_offsets: bool = False) -> list[Any]:
        """Run ``task`` on every partition and keep its results where they were computed (``dask.persist``: on
        the workers of a distributed cluster, in this process otherwise); nothing is brought back.

        Used for the few rows a pass selects (``select``): later passes over the same selection then run on
        the kept rows (:meth:`run_kept`) instead of reading every partition again.

        Returns
        -------
        list
            One persisted delayed (partial, rows) per partition, in row order.
        """
        import dask  # noqa: PLC0415

        parts = self._parts(columns)
        starts = self._starts(parts, columns, offsets=offsets, counter=counter, raw_offsets=raw_offsets)
        level = [dask.delayed(_Marked(task))(p, int(s)) for p, s in zip(parts, starts, strict=True)]
        with single_threaded_blas(), _partition_failures():
            return list(dask.persist(*level))

    def run_kept(self, kept: list[Any], fn: Callable[[Any], tuple[Any, int]], combine: Combine) -> tuple[Any, int]:
        """``fn`` on every kept (partial, rows) pair of :meth:`keep`, combined in row order; returns (combined,
        total rows)."""
        import dask  # noqa: PLC0415

        return self._compute_tree([dask.delayed(_Marked(fn))(k) for k in kept], combine)


#: the domain check of a Dask DataFrame whose partitions cannot be computed (neither the values nor the type of the
#: failure are shown: dd.read_csv fails a partition with an OverflowError for a whole number beyond its declared
#: integer type and with a ValueError for text, so the type alone told which kind of field a row held)
_UNCOMPUTABLE_DASK = (
    "a partition of the Dask DataFrame could not be computed (the error is withheld: its message may quote a value, "
    "and its type can depend on one): it does not fit the DataFrame's schema (its dtypes or its columns). "
    "dd.read_csv, for one, parses every partition with the dtypes it took from the first rows (or those given as "
    "dtype=), and one field that does not parse fails its partition. Give dpstats the CSV path instead (a field that "
    "does not fit its column's type is then a missing value, counted by the missing-value screen), or convert the "
    "columns row by row in Dask first (dd.to_numeric(..., errors='coerce')). Nothing was spent")


class _Marked:
    """A callable run in a Dask task whose own failures are marked (``_dpstats_task``), so that
    :func:`_partition_failures` can tell them (dpstats's code: passed on as they are) from a failure to compute the
    partition the task reads (the data: the domain check).  Picklable, for distributed workers."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> Any:
        try:
            return self.fn(*args)
        except Exception as exc:
            exc._dpstats_task = True  # type: ignore[attr-defined]  # (an exception's __dict__ is pickled)
            raise


@contextlib.contextmanager
def _partition_failures() -> Iterator[None]:
    """Computing Dask partitions: a failure outside dpstats's own tasks (a partition that cannot be computed, such
    as dd.read_csv meeting a field its inferred dtype cannot parse) is the domain check :data:`_UNCOMPUTABLE_DASK`;
    before, it reached the fit as an untyped error (``InternalFitError``, "a bug").  dpstats's own errors and the
    failures of its tasks pass as they are."""
    try:
        yield
    except DPStatsError:
        raise
    except Exception as exc:
        if getattr(exc, "_dpstats_task", False):
            raise
        raise DataTypeError(_UNCOMPUTABLE_DASK) from None


def _schema_columns(part: Any, names: list[Any]) -> pd.DataFrame:
    """The schema's columns ``names`` of one computed Dask partition (run in a Dask task, not marked as
    dpstats's: a partition that is not a DataFrame, lacks a column of the schema or holds one twice, such as one
    built with ``dd.from_delayed(..., verify_meta=False)``, fails here as the data, not as a bug)."""
    if not isinstance(part, pd.DataFrame):
        raise TypeError("a partition is not a DataFrame")
    taken = part[names]
    if taken.columns.has_duplicates:
        raise ValueError("a partition holds a column of the schema twice")
    return taken


def _combine_pairs(combine: Combine, *parts: tuple[Any, int]) -> tuple[Any, int]:
    """Combine (partial, rows) pairs of several tasks (runs on a worker)."""
    acc, rows = parts[0]
    for part, k in parts[1:]:
        acc = combine(acc, part)
        rows += k
    return acc, rows


def is_dask_frame(data: Any) -> bool:
    mod = type(data).__module__.split(".")[0]
    return mod in {"dask", "dask_expr"} and hasattr(data, "to_delayed") and hasattr(data, "_meta")


def is_chunked_data(data: Any) -> bool:
    """True for the inputs :func:`as_source` turns into a chunked source (paths, Dask frames, sources)."""
    if isinstance(data, (DataSource, str, os.PathLike)) or is_dask_frame(data):
        return True
    if isinstance(data, (list, tuple)) and data and all(isinstance(p, (str, os.PathLike)) for p in data):
        return True
    return False


def as_source(data: Any, chunksize: int | None = None) -> DataSource:
    """The chunked source for ``data``: a DataSource as is, paths by suffix, a Dask DataFrame, or a DataFrame
    with ``chunksize``."""
    if isinstance(data, DataSource):
        if chunksize is not None:
            raise DataTypeError("give chunksize= to the source itself, not to dp_ols, when passing a DataSource")
        return data
    if is_dask_frame(data):
        if chunksize is not None:
            raise DataTypeError("a Dask DataFrame is read by partitions; repartition it instead of passing chunksize")
        return DaskSource(data)
    if isinstance(data, pd.DataFrame):
        return DataFrameSource(data, chunksize or DEFAULT_CHUNK_ROWS)
    if isinstance(data, Mapping):
        return DataFrameSource(as_frame(data), chunksize or DEFAULT_CHUNK_ROWS)
    if isinstance(data, (str, os.PathLike)) or (isinstance(data, (list, tuple)) and data):
        items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
        names = [os.fspath(p).lower().rstrip("/") for p in items]
        dirs = [os.path.isdir(os.fspath(p)) for p in items]
        kw: dict[str, Any] = {} if chunksize is None else {"chunksize": chunksize}
        if all(n.endswith(_PARQUET_SUFFIXES) or isdir for n, isdir in zip(names, dirs, strict=True)):
            return ParquetSource(data, **({} if chunksize is None else {"batch_size": chunksize}))
        if all(n.endswith(_CSV_SUFFIXES) for n in names):
            return CSVSource(data, **kw)
        raise DataTypeError("files must all be CSV (.csv, .csv.gz, .tsv, ...) or all Parquet (.parquet, .pq) or a "
                            "directory of Parquet files; for other formats build a CSVSource/ParquetSource or a "
                            "Dask DataFrame")
    raise DataTypeError("data must be a pandas DataFrame, a dict of equal-length arrays, a path or list of paths to "
                        f"CSV or Parquet files, or a Dask DataFrame; got {type(data).__name__}")
