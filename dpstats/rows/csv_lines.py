"""A CSV file's text as pandas reads it, with every line one row.

pandas' CSV parsers let a quoted field run over line breaks: a line that
opens a quote it does not close takes the following lines into that field,
up to the next quote character anywhere in the file.  The number of rows then
depends on the contents of other lines, and n, which a fit releases, would
tell a data set from its neighbour with one line changed (a line ``"1.0,2.0,a``
before a line ending in a stray quote merged five rows into one).  So each
line is read by a rule that looks at that line only: a line whose quote
characters do not pair up is read as a blank line, which
:class:`~dpstats.rows.sources.CSVSource` makes a row of missing values, and
every other line is passed on as it is.  A quoted field that holds a line
break is thus two rows of missing values, as the lines it spans.
"""

from __future__ import annotations

import bz2
import contextlib
import csv
import gzip
import io
import lzma
import zipfile
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from dpstats.errors import DataTypeError

__all__ = ["TEXT_OPTIONS", "balanced_lines", "open_lines"]

#: the ``read_csv`` options that say how to open and decode a file: they are applied when the file is opened here
#: and not passed on to ``read_csv``
TEXT_OPTIONS = ("encoding", "encoding_errors", "compression")

_OPENERS: dict[str, Callable[..., IO[str]]] = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}
_SUFFIXES = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}


@contextlib.contextmanager
def open_lines(path: str, options: Mapping[str, Any]) -> Iterator[IO[str] | _Lines]:
    """The text of the CSV file at ``path`` with every line whose quote characters do not pair up blanked
    (:func:`balanced_lines`), decoded and decompressed as ``read_csv``'s ``encoding``, ``encoding_errors`` and
    ``compression`` in ``options`` say (compression from the suffix by default: .gz, .bz2, .xz, .zip); closed on
    exit."""
    with _decoded(path, options) as text:
        if options.get("quoting", csv.QUOTE_MINIMAL) == csv.QUOTE_NONE:
            yield text
        else:
            yield _Lines(balanced_lines(text, str(options.get("quotechar", '"')), options.get("escapechar")))


@contextlib.contextmanager
def _decoded(path: str, options: Mapping[str, Any]) -> Iterator[IO[str]]:
    """The file opened as text (universal newlines: a line ends at \\n, \\r\\n or \\r, as in pandas' parser)."""
    encoding = options.get("encoding") or "utf-8"
    errors = options.get("encoding_errors", "strict")
    compression = options.get("compression", "infer")
    if compression == "infer":
        compression = next((kind for suffix, kind in _SUFFIXES.items() if path.lower().endswith(suffix)), None)
    if isinstance(compression, Mapping):
        compression = compression.get("method")
    if compression is None:
        with open(path, encoding=encoding, errors=errors, newline=None) as handle:
            yield handle
    elif compression == "zip":
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.namelist() if not m.endswith("/")]
            if len(members) != 1:
                raise DataTypeError("a zipped CSV file must hold exactly one file")
            with archive.open(members[0]) as raw, io.TextIOWrapper(raw, encoding=encoding, errors=errors,
                                                                   newline=None) as handle:
                yield handle
    elif compression in _OPENERS:
        with _OPENERS[compression](path, "rt", encoding=encoding, errors=errors, newline=None) as handle:
            yield handle
    else:
        raise DataTypeError("CSVSource(compression=...) takes 'infer', None, 'gzip', 'bz2', 'xz' or 'zip'")


def balanced_lines(lines: Iterator[str] | IO[str], quote: str, escape: str | None = None) -> Iterator[str]:
    """Each line of ``lines`` as it is where its quote characters pair up (an escaped one, ``escape`` before it,
    not counted), else a blank line ("\\n"): a rule that reads one line only."""
    for line in lines:
        counted = line.replace(escape + quote, "") if escape else line
        yield line if counted.count(quote) % 2 == 0 else "\n"


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
