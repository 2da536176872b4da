"""The text summary kept within :data:`SUMMARY_WIDTH` characters: wrapped cells, footnoted explanations, notes.

``DPRegressionResults.summary().as_text()`` stacks statsmodels
``SimpleTable`` s and note lines.  A table whose natural width exceeds the
limit has its widest wrappable columns wrapped (each logical row becomes as
many printed rows as its tallest cell needs); a sensitivity's parenthetical
explanation moves to a numbered footnote under the table; a term name too
long for the coefficient table's stub column is shortened with a lettered
mark whose footnote gives the whole term; a note line longer than the limit
continues on indented lines.  Only the text is reshaped: the HTML and LaTeX
tables keep their cells whole.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any

from statsmodels.iolib.table import SimpleTable

from dpstats import text_wrap

__all__ = ["SUMMARY_WIDTH", "FootnotedTable", "wrap_note", "fit_rows", "split_explanation", "stub_room",
           "shorten_stubs"]

#: the widest line of the text summary, in characters
SUMMARY_WIDTH = 110

_COLSEP = 2  # the text tables' column separator, "  "
_NOTE_INDENT = "    "
_NARROWEST_STUB = 24  # a shortened stub keeps at least this many characters
_COLUMN_SUFFIX = re.compile(r"(\[[^\[\]]*\])$")  # patsy's column suffix of a term: [0], [T.b]


class FootnotedTable(SimpleTable):
    """A statsmodels ``SimpleTable`` whose text ends with footnote lines under its bottom rule.

    ``statsmodels.iolib.summary.summary_return`` drops the last line of every
    table but the last (the next table's top rule replaces it); the text ends
    with a newline, so the line it drops is empty and the rule and footnotes
    stay.
    """

    footnotes: list[str]

    def as_text(self, **fmt_dict: Any) -> str:
        """The table's text, then its footnotes, each wrapped to :data:`SUMMARY_WIDTH`."""
        text = super().as_text(**fmt_dict)
        notes = [line for note in getattr(self, "footnotes", []) for line in wrap_note(note)]
        return text + "".join("\n" + line for line in notes) + "\n" if notes else text


def wrap_note(line: str, width: int = SUMMARY_WIDTH) -> list[str]:
    """``line`` in lines of at most ``width`` characters (continuations indented), broken at spaces but never
    inside "symbol = value" or "n * mu" (:func:`dpstats.text_wrap.wrap_note`), and within a word only when the
    word alone is longer than a line."""
    return text_wrap.wrap_note(line, width, indent=_NOTE_INDENT)


def split_explanation(norm: str) -> tuple[str, str]:
    """A norm's name and its parenthetical explanation: ``"normalised (GDP of the block)"`` gives
    ``("normalised", "GDP of the block")``; a norm without one gives ``(norm, "")``."""
    match = re.fullmatch(r"(.+?) \((.+)\)", norm)
    return (match.group(1), match.group(2)) if match else (norm, "")


def fit_rows(rows: Sequence[Sequence[str]], headers: Sequence[str], wrappable: Sequence[tuple[int, int, bool]],
             width: int = SUMMARY_WIDTH) -> list[list[str]]:
    """The printed rows of a text table no wider than ``width`` where wrapping allows it.

    Parameters
    ----------
    rows : sequence of sequence of str
        The logical rows (the first column may be the stub).
    headers : sequence of str
        The column headers, one per column of ``rows``.
    wrappable : sequence of (int, int, bool)
        (column, narrowest width, break only after a comma), tried in order: each column is wrapped just
        enough to bring the table within ``width``, but not below its narrowest width.
    width : int
        The widest line allowed.

    Returns
    -------
    list of list of str
        One printed row per line of each logical row's tallest cell; the other cells continue empty.
    """
    cells = [[[c] for c in row] for row in rows]
    for col, narrowest, at_commas in wrappable:
        widths = [max([len(h)] + [len(line) for row in cells for line in row[i]]) for i, h in enumerate(headers)]
        excess = sum(widths) + _COLSEP * (len(widths) - 1) - width
        if excess <= 0:
            break
        target = max(widths[col] - excess, narrowest)
        for row in cells:
            row[col] = _wrap_cell(" ".join(row[col]), target, at_commas)
    printed: list[list[str]] = []
    for row in cells:
        height = max(len(c) for c in row)
        printed += [[c[k] if k < len(c) else "" for c in row] for k in range(height)]
    return printed


def _wrap_cell(text: str, width: int, at_commas: bool) -> list[str]:
    """A cell in lines of at most ``width`` characters where its words allow (after commas only, if asked)."""
    if len(text) <= width:
        return [text]
    glued = re.sub(r"(?<!,) ", "\x00", text) if at_commas else text
    lines = textwrap.wrap(glued, width, break_long_words=False, break_on_hyphens=False) or [""]
    return [line.replace("\x00", " ") for line in lines]


def stub_room(rows: Sequence[Sequence[str]], headers: Sequence[str], width: int = SUMMARY_WIDTH) -> int:
    """The widest stub (term name) that keeps a text table with these data cells within ``width``."""
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(headers)]
    return max(width - sum(widths) - _COLSEP * len(widths), _NARROWEST_STUB)


def shorten_stubs(names: Sequence[str], room: int, first_mark: int = 0) -> tuple[list[str], list[str]]:
    """The names as stubs of at most ``room`` characters, and the footnotes that give the shortened terms whole.

    A longer name keeps its column suffix (``[0]``, ``[T.b]``) and as much of its term as fits, then ``...``,
    the suffix and a lettered mark (``[a]``); columns of one term share the mark, whose footnote gives the term.

    Parameters
    ----------
    names : sequence of str
        The design's column names (public: the formula and the declared levels).
    room : int
        The widest stub allowed.
    first_mark : int, default 0
        The index of the first mark's letter (marks already used elsewhere in the summary come before it).

    Returns
    -------
    (list of str, list of str)
        The stubs, one per name, and the footnote lines (``[a] <term>``), one per shortened term.
    """
    marks: dict[str, str] = {}
    stubs = []
    for name in names:
        if len(name) <= room:
            stubs.append(name)
            continue
        match = _COLUMN_SUFFIX.search(name)
        suffix = match.group(1) if match and len(match.group(1)) <= room // 2 else ""
        term = name[: len(name) - len(suffix)]
        mark = marks.setdefault(term, f"[{_letters(first_mark + len(marks))}]")
        keep = max(room - len(suffix) - len(mark) - 4, 1)
        stubs.append(f"{term[:keep].rstrip()}...{suffix} {mark}")
    return stubs, [f"{mark} {term}" for term, mark in marks.items()]


def _letters(index: int) -> str:
    """The ``index``-th footnote letter mark: a..z, then aa, ab, ..."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("a") + rest) + letters
    return letters
