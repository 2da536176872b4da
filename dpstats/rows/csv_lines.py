"""A CSV file's text as pandas reads it, with every line after the header one row of at most the header's fields.

pandas' CSV parsers decide how lines become rows from more than the line: a
quoted field runs over line breaks up to the next quote character anywhere in
the file; a line with more fields than the header refuses the file, or on the
first data line shifts every row; their Python parser refuses a line that its
C parser reads.  The number of rows, which a fit releases, would then tell a
data set from its neighbour with one line changed, or the file would be
refused for free.  So each line is rewritten here by a rule that reads that
line only (:func:`one_row_lines`), before pandas sees it:

* the header (the first line) is passed on as it is, and its number of fields
  is the width of every row;
* a line without the quote character (or any line with ``quoting=QUOTE_NONE``)
  has one field more than its separators; it is passed on as it is when that is
  at most the width, with one trailing empty field dropped (``1,2,`` under the
  header ``a,b``, as pandas reads it), and is otherwise a blank line;
* a line whose quote characters do not pair up is a blank line (a quoted field
  that holds a line break is thus two rows of missing values, as the lines it
  spans);
* any other line with a quote is split by Python's ``csv`` module (lenient: a
  quote inside a field is a character) and written back in canonical form
  (fields quoted only where they hold the separator or the quote), which pandas'
  C parser splits into the same fields; more fields than the width (after the
  trailing empty one) make it a blank line, and so does a line the module
  refuses (a field longer than its limit, 131,072 characters).

A blank line is a row of missing values (:class:`~dpstats.rows.sources.CSVSource`
reads with ``skip_blank_lines=False``).  The reader options that would change
how lines become rows (a comment character, an escape character, a line
terminator, a dialect, skipped lines, ...) are refused by ``CSVSource``, so the
separator, the quote character, ``quoting`` and ``skipinitialspace`` are all
the rule needs (:class:`LineFormat`).
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import gzip
import io
import itertools
import lzma
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from dpstats.errors import DataTypeError

__all__ = ["DECOMPRESSION_FAILURES", "TEXT_OPTIONS", "UNDECOMPRESSABLE_CSV", "LineFormat", "one_row_lines",
           "open_lines"]

#: the ``read_csv`` options that say how to open and decode a file: they are applied when the file is opened here
#: and not passed on to ``read_csv``
TEXT_OPTIONS = ("encoding", "encoding_errors", "compression")

_OPENERS: dict[str, Callable[..., IO[str]]] = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}
_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}


@dataclass(frozen=True)
class LineFormat:
    """What the rule of :func:`one_row_lines` needs of the reader's options: the separator (one character), the
    quote character, ``quoting`` (csv.QUOTE_NONE: quotes are plain characters) and ``skipinitialspace``."""

    sep: str = ","
    quote: str = '"'
    quoting: int = csv.QUOTE_MINIMAL
    skip_initial_space: bool = False

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> LineFormat:
        """The format of ``read_csv`` options (already checked by ``CSVSource``)."""
        sep = options.get("sep", options.get("delimiter", ","))
        return cls(sep=str(sep), quote=str(options.get("quotechar", '"')),
                   quoting=int(options.get("quoting", csv.QUOTE_MINIMAL)),
                   skip_initial_space=bool(options.get("skipinitialspace", False)))

    def dialect(self) -> type[csv.Dialect]:
        """The csv module's dialect of this format (lenient: ``strict=False``; canonical output quotes minimally)."""
        fmt = self

        class _Format(csv.Dialect):
            delimiter = fmt.sep
            quotechar = fmt.quote
            doublequote = True
            skipinitialspace = fmt.skip_initial_space
            strict = False
            lineterminator = "\n"
            quoting = csv.QUOTE_NONE if fmt.quoting == csv.QUOTE_NONE else csv.QUOTE_MINIMAL
            escapechar = None

        return _Format

    def fields(self, body: str, dialect: type[csv.Dialect] | None = None) -> list[str] | None:
        """The fields of one line (without its line break) by Python's csv module, or None where it refuses it."""
        try:
            return next(csv.reader([body], dialect or self.dialect()), [])
        except csv.Error:
            return None

    def row_block(self, lines: Sequence[str], width: int, dialect: type[csv.Dialect]) -> str:
        """Data lines as pandas is given them (module docstring), each itself, canonical, or blank, as one text.
        The lines with a quote are split by one reader over the block, and each by its own reader where that one
        reader joined two lines (a quote left open at a line's end) or refused one: the same rule, line by line."""
        plain = self._plain_block(lines, width)
        if plain is not None:
            return plain
        bodies = [line.rstrip("\r\n") for line in lines]
        quotes = self.quoting != csv.QUOTE_NONE
        paired = [i for i, body in enumerate(bodies)
                  if quotes and self.quote in body and body.count(self.quote) % 2 == 0]
        split = dict(zip(paired, self._split([bodies[i] for i in paired], dialect), strict=True))
        out = io.StringIO()
        writer = csv.writer(out, dialect)
        for i, body in enumerate(bodies):
            if i in split:
                fields = split[i]
                if fields is not None and len(fields) == width + 1 and fields[-1] == "":
                    fields = fields[:-1]
                if fields is None or len(fields) > width:
                    out.write("\n")
                else:
                    writer.writerow(fields)
            elif quotes and self.quote in body:
                out.write("\n")  # quote characters that do not pair up
            else:
                out.write(self._unquoted(body, width))
        return out.getvalue()

    def _plain_block(self, lines: Sequence[str], width: int) -> str | None:
        """The block unchanged (each line ended by one line break) where the rule passes every line on as it is: no
        quote character (or ``QUOTE_NONE``), no carriage return, at most ``width`` fields on every line; else None.
        The same text as the line-by-line rule, in one pass of ``str.count`` per line instead of a rewrite of each
        (a 10,089-row file was read about twice as fast per pass, which pgd's chunked fit makes 208 of)."""
        if not lines:
            return ""
        text = "".join(lines)
        if (self.quoting != csv.QUOTE_NONE and self.quote in text) or "\r" in text:
            return None
        last_ended = lines[-1].endswith("\n")
        if text.count("\n") != len(lines) - (not last_ended) or not all(line.endswith("\n") for line in lines[:-1]):
            return None  # a line with a break inside it, or one but the last without its break
        if max(line.count(self.sep) for line in lines) >= width:
            return None
        return text if last_ended else text + "\n"

    def _unquoted(self, body: str, width: int) -> str:
        """A line without a quote: one field more than its separators."""
        count = body.count(self.sep) + 1
        if count <= width:
            return body + "\n"
        if count == width + 1 and body.endswith(self.sep):
            return body[:-1] + "\n"
        return "\n"

    def _split(self, bodies: list[str], dialect: type[csv.Dialect]) -> list[list[str] | None]:
        """The fields of each line: one reader over all of them where it reads each line as one row, else one
        reader per line (None where it refuses the line)."""
        reader = csv.reader(bodies, dialect)
        rows: list[list[str] | None] = []
        try:
            for fields in reader:
                if reader.line_num != len(rows) + 1:
                    break  # a quote left open at a line's end took the next line in
                rows.append(fields)
        except csv.Error:
            pass
        if len(rows) == len(bodies):
            return rows
        return [self.fields(body, dialect) for body in bodies]


#: data lines rewritten together (one csv reader and writer per block)
BLOCK_LINES = 4096


def one_row_lines(lines: Iterator[str] | IO[str], fmt: LineFormat) -> Iterator[str]:
    """The header as it is, then the data lines by :meth:`LineFormat.row_block` (a rule that reads each line by
    itself), one text per block of :data:`BLOCK_LINES` lines."""
    it = iter(lines)
    header = next(it, None)
    if header is None:
        return
    if fmt.quoting != csv.QUOTE_NONE and header.count(fmt.quote) % 2:
        raise DataTypeError("the CSV header's quote characters do not pair up, so pandas would read it on into the "
                            "data lines: fix the header (the first line), which is the file's public schema")
    yield header
    dialect = fmt.dialect()
    width = max(len(fmt.fields(header.rstrip("\r\n"), dialect) or [""]), 1)
    while block := list(itertools.islice(it, BLOCK_LINES)):
        yield fmt.row_block(block, width, dialect)


@contextlib.contextmanager
def open_lines(path: str, options: Mapping[str, Any]) -> Iterator[_Lines]:
    """The text of the CSV file at ``path``, every data line rewritten by :func:`one_row_lines`, decoded and
    decompressed as ``read_csv``'s ``encoding``, ``encoding_errors`` and ``compression`` in ``options`` say
    (compression from the suffix by default: .gz, .bz2, .xz, .zip); closed on exit."""
    with _decoded(path, options) as (text, compressed):
        yield _Lines(one_row_lines(_intact(text) if compressed else text, LineFormat.from_options(options)))


#: what Python's decompressors raise on compressed data that are damaged or cut short (gzip: EOFError, zlib.error,
#: BadGzipFile, an OSError; bz2: OSError; xz: LZMAError; zip: BadZipFile, zlib.error)
DECOMPRESSION_FAILURES = (EOFError, OSError, zlib.error, lzma.LZMAError, zipfile.BadZipFile)

#: the domain check of a compressed CSV file whose data cannot be decompressed (where is not shown)
UNDECOMPRESSABLE_CSV = ("the compressed CSV file cannot be decompressed: its compressed data are damaged or cut short "
                        "(where is not shown; it is not a file of rows). Compress the file again, or give the "
                        "compression= it was written with")


def _intact(text: IO[str]) -> Iterator[str]:
    """The lines of a decompressed text stream; a failure to decompress, wherever it happens in the file, is the
    domain check :data:`UNDECOMPRESSABLE_CSV` (before: the decompressor's own exception, whose type told where it
    failed, reached the fit as an untyped error)."""
    try:
        yield from text
    except DECOMPRESSION_FAILURES:
        raise DataTypeError(UNDECOMPRESSABLE_CSV) from None


@contextlib.contextmanager
def _decoded(path: str, options: Mapping[str, Any]) -> Iterator[tuple[IO[str], bool]]:
    """The file opened as text (universal newlines: a line ends at \\n, \\r\\n or \\r, as in pandas' parser), and
    whether it is decompressed on the way."""
    encoding = options.get("encoding") or "utf-8"
    errors = options.get("encoding_errors", "strict")
    compression = options.get("compression", "infer")
    if compression == "infer":
        compression = next((kind for suffix, kind in _SUFFIXES.items() if path.lower().endswith(suffix)), None)
    if isinstance(compression, Mapping):
        compression = compression.get("method")
    if compression is None:
        with open(path, encoding=encoding, errors=errors, newline=None) as handle:
            yield handle, False
    elif compression == "zip":
        with _zip_member(path) as raw, io.TextIOWrapper(raw, encoding=encoding, errors=errors,
                                                         newline=None) as handle:
            yield handle, True
    elif compression in _OPENERS:
        with _OPENERS[compression](path, "rt", encoding=encoding, errors=errors, newline=None) as handle:
            yield handle, True
    else:
        raise DataTypeError("CSVSource(compression=...) takes 'infer', None, 'gzip', 'bz2', 'xz' or 'zip'")


@contextlib.contextmanager
def _zip_member(path: str) -> Iterator[IO[bytes]]:
    """The one file of a zip archive, opened for reading; an archive whose directory cannot be read is the domain
    check :data:`UNDECOMPRESSABLE_CSV`."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise DataTypeError(UNDECOMPRESSABLE_CSV) from None
    with archive:
        members = [m for m in archive.namelist() if not m.endswith("/")]
        if len(members) != 1:
            raise DataTypeError("a zipped CSV file must hold exactly one file")
        try:
            raw = archive.open(members[0])
        except DECOMPRESSION_FAILURES:
            raise DataTypeError(UNDECOMPRESSABLE_CSV) from None
        with raw:
            yield raw


class _Lines:
    """A read-only text stream over an iterator of lines: what pandas' parsers read from (``read``, ``readline``,
    iteration)."""

    def __init__(self, lines: Iterator[str]) -> None:
        self._lines = lines
        self._pending = ""

    def readable(self) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(self.readline, "")

    def read(self, size: int | None = -1, /) -> str:
        pieces, have = [self._pending], len(self._pending)
        while size is None or size < 0 or have < size:
            line = next(self._lines, None)
            if line is None:
                break
            pieces.append(line)
            have += len(line)
        text = "".join(pieces)
        if size is None or size < 0:
            self._pending = ""
            return text
        self._pending = text[size:]
        return text[:size]

    def readline(self, size: int | None = -1, /) -> str:
        while "\n" not in self._pending:
            line = next(self._lines, None)
            if line is None:
                break
            self._pending += line
        cut = self._pending.find("\n") + 1 or len(self._pending)
        line, self._pending = self._pending[:cut], self._pending[cut:]
        return line
