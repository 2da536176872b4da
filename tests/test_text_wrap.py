"""The notes of the text outputs wrap at spaces, never inside "symbol = value" or "n * mu" (dpstats.text_wrap)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

import dpstats
from dpstats.summary_text import SUMMARY_WIDTH
from dpstats.summary_text import wrap_note as summary_wrap_note
from dpstats.text_wrap import wrap_note

#: the groups the wrapper keeps whole, as notes of the summary, the privacy report and the tables write them
GROUPS = ["epsilon = 0.5", "\u03b4 = 2e-6", "n * mu", "n * mu = 12.3", "n * mu >= 15", "0 < epsilon <= 10",
          "p < 0.05", "||x||_2 <= 3.2", "T = 100", "n \u00d7 mu \u2265 15"]
#: an operator with a space on each side: no line may end with one or start with one
_OPERATOR = r"(=|==|!=|<|>|<=|>=|\u2264|\u2265|\u2248|\*|\u00d7)"


def _unwrapped(lines: list[str], indent: str) -> str:
    """The note again: continuation lines without their indent, joined by spaces."""
    return " ".join([lines[0], *(line[len(indent):] for line in lines[1:])])


def _broken_groups(lines: list[str], groups: list[str]) -> list[str]:
    """The groups that no single line holds whole."""
    return [g for g in groups if not any(g in line for line in lines)]


def test_a_group_stays_on_one_line_wherever_the_break_falls() -> None:
    """Padding before each group moves the line's end across every character of it (and of the words around):
    each group is on one line, no line ends with an operator or starts with one, and the words are as given.
    Deterministic."""
    for group in GROUPS:
        for width in (20, 40):
            for pad in range(1, width):
                note = "x" * pad + f" the fit spent {group} together (basic composition) " + "word " * 5 + "end"
                lines = wrap_note(note, width, indent="  ")
                assert _unwrapped(lines, "  ") == note
                assert not _broken_groups(lines, [group])
                assert not any(re.search(f" {_OPERATOR}$", line) or re.match(f"^ *{_OPERATOR} ", line)
                               for line in lines)
                assert all(len(line) <= width for line in lines)


def test_a_group_longer_than_a_line_is_broken_at_its_spaces() -> None:
    """No line is wider than the width, the summary's promise: a group that alone is longer than a line (code rather
    than a symbol and its value) is taken apart at its spaces, and a plain word that long is broken, as textwrap
    breaks it."""
    lines = wrap_note("the spent budget epsilon = 0.123456789 of the fit", 16, indent="  ")
    assert lines == ["the spent budget", "  epsilon =", "  0.123456789 of", "  the fit"]
    code = "df['" + "x" * 40 + "'] = df['" + "x" * 40 + "'].astype(int);"
    lines = wrap_note("(" + code + " then refit)", 50, indent="    ")
    assert all(len(line) <= 50 for line in lines)
    assert "".join(lines).replace(" ", "") == f"({code} then refit)".replace(" ", "")
    assert wrap_note("x" * 25 + " a", 10) == ["x" * 10, "x" * 10, "x" * 5 + " a"]


def test_a_short_note_is_returned_as_it_is() -> None:
    assert wrap_note("", 10) == [""]
    assert wrap_note("  step 1: a = 2", 20) == ["  step 1: a = 2"]
    assert wrap_note("a note", 20, first_indent="    ") == ["    a note"]


_WORDS = st.sampled_from(["the", "fit", "spent", "a", "budget", "of", "rows", "(basic", "composition).", "x" * 12,
                          "withheld;", "intervals", *GROUPS])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(words=st.lists(_WORDS, min_size=1, max_size=40), width=st.integers(min_value=22, max_value=120))
def test_wrapping_keeps_the_words_and_every_group(words: list[str], width: int) -> None:
    """Property: the lines re-joined are the note; no line ends with an operator or with the symbol of a group (the
    operator would then start the next line); no line is wider than the width.  (The words and groups fit a line,
    indent included: a longer one is broken inside.)  Derandomized (a fixed set of examples): no false failures."""
    note = " ".join(words)
    lines = wrap_note(note, width, indent="    ")
    assert _unwrapped(lines, "    ") == note
    assert not _broken_groups(lines, [w for w in words if w in GROUPS])
    for line, following in zip(lines, lines[1:], strict=False):
        assert not re.search(f" {_OPERATOR}$", line)
        assert not re.match(f"^ *{_OPERATOR} ", following)
    assert all(len(line) <= width for line in lines)


def test_the_summary_notes_and_the_privacy_report_keep_their_groups() -> None:
    """The one-fit summary's notes and the privacy report's text wrap by the same rule at SUMMARY_WIDTH: their
    "epsilon = 0.5" and "n * mu" were broken across lines where the width fell inside them.  Deterministic."""
    for pad in range(1, 40):
        note = "x" * pad + " " + "word " * 15 + "intervals withheld where n * mu = 12.3 < 15 and epsilon = 0.5, " \
            + "word " * 10
        lines = summary_wrap_note(note.strip())
        assert not _broken_groups(lines, ["n * mu = 12.3 < 15", "epsilon = 0.5,"])
        assert all(len(line) <= SUMMARY_WIDTH for line in lines)
    res = dpstats.dp_ols("mpg ~ wt", dpstats.datasets.load("mtcars"), 1.0, 1e-6, method="ssp",
                         bounds={"wt": (1, 6), "mpg": (5, 40)}, random_state=0)
    note = "the budget of this study's other fits " + "word " * 12 + "totals epsilon = 0.5, delta = 1e-6 so far"
    for pad in range(1, 40):
        report = dataclass_replace(res.privacy, notes=("x" * pad + " " + note,))
        lines = str(report).split("\n")
        assert not _broken_groups(lines, ["epsilon = 0.5,", "delta = 1e-6"])


def dataclass_replace(report: dpstats.privacy.report.PrivacyReport, **changes: object) -> object:
    """The report with some fields replaced (it is a frozen dataclass)."""
    import dataclasses  # noqa: PLC0415

    return dataclasses.replace(report, **changes)  # type: ignore[arg-type]
