"""The text summary kept within :data:`SUMMARY_WIDTH` characters: wrapped cells, footnoted explanations, notes.

``DPRegressionResults.summary().as_text()`` stacks statsmodels
``SimpleTable`` s and note lines.  A table whose natural width exceeds the
limit has its widest wrappable columns wrapped (each logical row becomes as
many printed rows as its tallest cell needs); a sensitivity's parenthetical
explanation moves to a numbered footnote under the table; a note line longer
than the limit continues on indented lines.  Only the text is reshaped: the
HTML and LaTeX tables keep their cells whole.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from typing import Any

from statsmodels.iolib.table import SimpleTable

__all__ = ["SUMMARY_WIDTH", "FootnotedTable", "wrap_note", "fit_rows", "split_explanation"]

#: the widest line of the text summary, in characters
SUMMARY_WIDTH = 110

_COLSEP = 2  # the text tables' column separator, "  "
_NOTE_INDENT = "    "


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
    """``line`` in lines of at most ``width`` characters (continuations indented), broken only at spaces."""
    if len(line) <= width:
        return [line]
    return textwrap.wrap(line, width, subsequent_indent=_NOTE_INDENT, break_long_words=False,
                         break_on_hyphens=False)


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
