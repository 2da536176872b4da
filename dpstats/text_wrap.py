"""Notes of the text outputs wrapped at spaces, never inside "symbol = value" or "n * mu".

The one-fit summary (:mod:`dpstats.summary_text`), the privacy report (:mod:`dpstats.privacy.report`), the tables
of several fits (:mod:`dpstats.table_grid`) and the command line's example wrap their notes here.  A relation or
product written with a space on each side between two words ("epsilon = 0.5", "δ = 2e-6", "n * mu >= 15",
"0 < epsilon <= 10") is one group: a line never ends with its symbol or its operator, and its value never starts
the next line (unless the group alone is longer than a line).  Imports nothing from dpstats, so every layer can use it.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["wrap_note"]

#: an operator between two words, a space on each side, that binds them into one group: a relation ("ε = 2",
#: "n >= 300", "0 < epsilon <= 10") or a product ("n * mu", "n × mu")
_GROUPED = re.compile(r"(?<=\S) (=|==|!=|<|>|<=|>=|\u2264|\u2265|\u2248|\*|\u00d7) (?=\S)")
#: what stands for a space inside such a group while the note wraps (a private-use character: no break there)
_GLUE = "\ue000"


class _GroupWrapper(textwrap.TextWrapper):
    """textwrap's wrapper, except that a group longer than a whole line is taken apart at its spaces (no line then
    holds it whole; a word still longer than a line is broken as textwrap breaks it)."""

    def _handle_long_word(self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int) -> None:
        group = reversed_chunks[-1]
        if _GLUE not in group:
            super()._handle_long_word(reversed_chunks, cur_line, cur_len, width)
            return
        reversed_chunks.pop()
        reversed_chunks += reversed([" " if piece == _GLUE else piece for piece in re.split(f"({_GLUE})", group)])
        while reversed_chunks and cur_len + len(reversed_chunks[-1]) <= width:
            cur_len += len(reversed_chunks[-1])
            cur_line.append(reversed_chunks.pop())
        if not cur_line:  # its first word alone is longer than a line
            super()._handle_long_word(reversed_chunks, cur_line, cur_len, width)


def wrap_note(note: str, width: int, indent: str = "", first_indent: str = "") -> list[str]:
    """A note as lines of at most ``width`` characters, broken at spaces but never inside a group ("ε = 2",
    "n * mu = 40").

    No line is wider than ``width``: a group longer than a whole line (code such as "df['x'] = df['x'].astype(int)"
    rather than a symbol and its value) is broken at its spaces, and a word longer than a line where the line ends.

    Parameters
    ----------
    note : str
        The note: one line of text (a note shorter than the line, an empty one included, is returned as it is).
    width : int
        The widest line, its indent included.
    indent : str, default ""
        What starts every line after the first.
    first_indent : str, default ""
        What starts the first line.

    Returns
    -------
    list of str
        The lines.

    Examples
    --------
    >>> wrap_note("the fits spent epsilon = 0.5 together", 25, indent="  ")
    ['the fits spent', '  epsilon = 0.5 together']
    """
    if len(first_indent) + len(note) <= width:
        return [first_indent + note]
    glued = note if _GLUE in note else _GROUPED.sub(lambda m: f"{_GLUE}{m.group(1)}{_GLUE}", note)
    wrapper = _GroupWrapper(width, initial_indent=first_indent, subsequent_indent=indent, break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in wrapper.wrap(glued)]
