"""The grid of table cells and its four renderings (text, Markdown, HTML, LaTeX), and one fit's LaTeX tables.

:class:`Grid` is the layout that :func:`dpstats.tables.table` fills with several
fits, and :func:`coefficient_grid` and :func:`privacy_latex` give the tables of
one fit that ``DPRegressionResults.summary().as_latex()`` returns.  The module
sits below :mod:`dpstats.results` (it reads a fit only through its public
attributes), so that both :mod:`dpstats.results` and :mod:`dpstats.tables`
import it.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpstats.errors import InvalidArgumentError
from dpstats.text_wrap import wrap_note
from dpstats.validation import shown

if TYPE_CHECKING:
    from dpstats.privacy.ledger import PrivacyStep
    from dpstats.results import DPRegressionResults

__all__ = ["Cell", "Grid", "coefficient_grid", "privacy_latex", "format_number", "row_format", "DEFAULT_DIGITS",
           "MAX_DECIMALS", "STATISTIC_DECIMALS", "pvalue_floor",
           "html_number", "check_digits", "check_thousands", "coefficient_cells",
           "latex_text", "latex_cell", "latex_escape_text",
           "LATEX_PREAMBLE", "WITHHELD_CELL"]

#: the LaTeX packages the tables use (booktabs rules; graphicx to shrink a table wider than the text)
LATEX_PREAMBLE = "\\usepackage{booktabs}\n\\usepackage{graphicx}"

#: what the tables show in the inference columns of a fit that reports no inference
WITHHELD_CELL = "\u2014"


# -- numbers ------------------------------------------------------------------------------------------------------

def format_number(x: float, fmt: Any = 3, thousands: str = "") -> str:
    """A number for a table cell.

    Parameters
    ----------
    x : float
        The value (NaN gives the dash).
    fmt : int, str or callable
        Decimals (an int: fixed point, falling back to 3 significant digits
        for a non-zero value that would print as zero), a format spec such as
        ``".3g"`` (what :func:`row_format` gives: ``".2f"``, or ``".2e"`` for a
        row too small for fixed point), or a function of the value.
    thousands : str
        The separator of thousands in a fixed-point number ("" for none,
        ``","`` for 23,567.5).

    Examples
    --------
    >>> format_number(-83260.4491, ".0f"), format_number(-83260.4491, ".0f", thousands=",")
    ('-83260', '-83,260')
    >>> format_number(-0.0004, ".3f"), format_number(2.1e-05, ".2e")
    ('0.000', '2.10e-05')
    """
    if x is None or not math.isfinite(float(x)):
        return WITHHELD_CELL if x is None or math.isnan(float(x)) else ("\u221e" if x > 0 else "-\u221e")
    if callable(fmt):
        return str(fmt(x))
    grouped = bool(thousands)
    if isinstance(fmt, str):
        spec = "," + fmt if grouped and fmt.endswith("f") and "," not in fmt and "_" not in fmt else fmt
        text = format(float(x), spec)
    else:
        text = format(float(x), f"{',' if grouped else ''}.{int(fmt)}f")
        if float(text.replace(",", "")) == 0 and x != 0:
            text = f"{float(x):.3g}"
    if grouped and thousands != ",":
        text = text.replace(",", thousands)
    if text.startswith("-") and not re.search(r"[1-9]", text.split("e")[0]):  # -0.000: a zero has no sign
        text = text[1:]
    return text


#: Significant digits of a coefficient's standard error in the tables by default (``digits=``); the estimate and its
#: interval get the same decimals.
DEFAULT_DIGITS = 3
#: The most decimals a table writes in fixed point: a standard error between 1e-5 and 1e-4 gets these, with two
#: significant digits; a row whose standard error is smaller is written in powers of ten (2.10e-06 as text,
#: 2.10 x 10^-6 in LaTeX and HTML), as R and statsmodels do.
MAX_DECIMALS = 6
#: The most digits before the point a table writes in fixed point: a row with a larger estimate or standard error
#: (beyond a double's 15-17 significant digits) is written in powers of ten, to the decimals of its standard error.
MAX_FIXED_DIGITS = 15
#: Decimals of a z (t) statistic, a number of standard errors, in every table.
STATISTIC_DECIMALS = 2


def check_digits(digits: Any) -> int:
    """``digits`` of the tables: an int from 1 to 10 (significant digits of a standard error)."""
    if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) or not 1 <= int(digits) <= 10:
        raise InvalidArgumentError(f"digits must be a whole number of significant digits from 1 to 10, got "
                                   f"{shown(digits)}")
    return int(digits)


def check_thousands(thousands: Any) -> str:
    """``thousands`` of the tables: "" (none) or a short separator that is not a digit, a sign, a point or e, nor a
    control or line-breaking character (a newline or tab would break the table's rows)."""
    if (not isinstance(thousands, str) or len(thousands) > 3 or re.search(r"[\d.+\-eE]", thousands)
            or any(unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") for c in thousands)):
        raise InvalidArgumentError(f"thousands must be a separator such as ',' or ' ' (or '' for none), got "
                                   f"{thousands!r}")
    return thousands


def row_format(estimate: float, std_error: float, fmt: Any = None, digits: int = DEFAULT_DIGITS) -> Any:
    """The number format of one coefficient's cells (estimate, standard error, interval), so that they agree.

    ``fmt=None`` (the tables' default): the decimals that show the row's standard error to ``digits`` significant
    digits, none for a standard error of 100 or more at ``digits=3`` (23567 (5312)), three for one between 0.1 and 1,
    six at most, which still show a standard error of 1e-5 or more to two (without a finite standard error, the
    decimals that show the estimate to ``digits`` significant digits); the estimate and the interval's bounds get the
    same decimals, so that the estimate never shows more precision than its uncertainty, nor prints on one of its
    interval's bounds.  A row whose standard error is smaller is written in powers of ten with ``digits``
    significant digits.  A number
    of decimals, a format spec or a function given as ``fmt`` is used as given.

    Returns
    -------
    str, int or callable
        A format spec (``".1f"``, ``".2e"``) for :func:`format_number`, or ``fmt`` when one is given.

    Examples
    --------
    >>> row_format(-83260.449, 151322.008), row_format(7961.7, 80.13), row_format(0.52, 0.33)
    ('.0f', '.1f', '.3f')
    >>> row_format(2.1e-05, 3.0e-06), row_format(-0.0016, float("nan"))
    ('.2e', '.5f')
    """
    if fmt is not None:
        return fmt
    se = abs(float(std_error))
    scale = se if math.isfinite(se) and se > 0 else abs(float(estimate))
    if not (math.isfinite(scale) and scale > 0):
        return f".{digits}f"
    decimals = digits - 1 - math.floor(math.log10(scale))
    top = max(scale, abs(float(estimate))) if math.isfinite(float(estimate)) else scale
    if top >= 10.0**MAX_FIXED_DIGITS:  # beyond a double's digits: 1e300 was 301 digits, most of them noise
        return f".{min(max(decimals + math.floor(math.log10(top)), 0), 16)}e"
    if decimals > MAX_DECIMALS and 1 - math.floor(math.log10(scale)) <= MAX_DECIMALS:
        decimals = MAX_DECIMALS  # still two significant digits at the most decimals written
    elif decimals > MAX_DECIMALS:
        return f".{max(digits - 1, 0)}e"
    return f".{max(decimals, 0)}f"


def _pvalue(p: float, floor: float = 0.001) -> str:
    """A p-value for a table: three decimals, and "<0.001" below 0.001 (below ``floor``, "<floor": a bootstrap
    p-value of 0 from B replicates means below 2 / B)."""
    if not math.isfinite(p):
        return WITHHELD_CELL
    floor = max(floor, 0.001)
    return f"<{floor:.3g}" if p < floor else f"{p:.3f}"


def pvalue_floor(res: DPRegressionResults) -> float:
    """The smallest p-value a fit can tell apart from 0: 2 / B for a bootstrap of B replicates, else 0.001."""
    draws = getattr(res, "_draws", None)
    return max(0.001, 2.0 / draws.shape[0]) if draws is not None and draws.shape[0] else 0.001


def _budget(x: float) -> str:
    """epsilon or delta for a footer: 3 significant digits, exponents without padding (1e-6), inf as the sign."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if math.isinf(x):
        return "\u221e"
    return re.sub(r"e([+-])0*(\d)", lambda m: "e" + ("-" if m.group(1) == "-" else "") + m.group(2), f"{x:.3g}")


# -- the grid of cells and its four renderings ------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    """One cell: plain text (Unicode), significance marks, a column span, and optional raw LaTeX."""

    text: str = ""
    stars: str = ""
    span: int = 1
    numeric: bool = False
    latex: str | None = None


@dataclass
class Grid:
    """Header rows, body panels (separated by rules) and notes; rendered as text, Markdown, HTML and LaTeX."""

    header: list[list[Cell]]
    panels: list[list[list[Cell]]]
    notes: list[str] = field(default_factory=list)
    caption: str = ""

    @property
    def ncols(self) -> int:
        rows = self.header + [r for p in self.panels for r in p]
        return max(sum(c.span for c in r) for r in rows)

    # text ------------------------------------------------------------------------------------------------------
    def _widths(self) -> list[int]:
        widths = [0] * self.ncols
        rows = self.header + [r for p in self.panels for r in p]
        for row in rows:
            j = 0
            for c in row:
                if c.span == 1:
                    widths[j] = max(widths[j], len(c.text + c.stars))
                j += c.span
        for row in rows:  # a spanning cell wider than its columns widens the last of them
            j = 0
            for c in row:
                if c.span > 1:
                    have = sum(widths[j:j + c.span]) + 2 * (c.span - 1)
                    widths[j + c.span - 1] += max(0, len(c.text) - have)
                j += c.span
        return widths

    def _text_row(self, row: list[Cell], widths: list[int]) -> str:
        out, j = [], 0
        for c in row:
            w = sum(widths[j:j + c.span]) + 2 * (c.span - 1)
            text = c.text + c.stars
            out.append(text.ljust(w) if j == 0 else text.center(w))
            j += c.span
        return "  ".join(out).rstrip()

    def as_text(self) -> str:
        widths = self._widths()
        total = sum(widths) + 2 * (len(widths) - 1)
        lines = [self.caption.center(total).rstrip()] if self.caption else []
        lines.append("=" * total)
        lines += [self._text_row(r, widths) for r in self.header]
        for panel in self.panels:
            lines.append("-" * total)
            lines += [self._text_row(r, widths) for r in panel]
        lines.append("=" * total)
        for note in self.notes:
            lines += wrap_note(note, max(total, 60), indent="  ")
        return "\n".join(lines)

    # Markdown ------------------------------------------------------------------------------------------------
    def as_markdown(self) -> str:
        def cells(row: list[Cell]) -> list[str]:
            out = []
            for c in row:
                out += [_md_escape(c.text) + _md_escape(c.stars)] * c.span
            return out

        head, *lead = self.header[::-1]
        lines = [f"**{_md_escape(self.caption)}**", ""] if self.caption else []
        lines.append("| " + " | ".join(cells(head)) + " |")
        lines.append("|" + "|".join([":---"] + [":---:"] * (self.ncols - 1)) + "|")
        for row in [*lead[::-1], *(r for p in self.panels for r in p)]:
            lines.append("| " + " | ".join(cells(row)) + " |")
        if self.notes:
            lines += [""] + ["  \n".join(_md_escape(n) for n in self.notes)]
        return "\n".join(lines)

    # HTML ------------------------------------------------------------------------------------------------------
    def as_html(self) -> str:
        rule = "border-top: 1px solid"

        def cell(c: Cell, tag: str, first: bool, style: str = "") -> str:
            align = "left" if first else "center"
            span = f' colspan="{c.span}"' if c.span > 1 else ""
            under = "; border-bottom: 1px solid" if c.span > 1 and c.text else ""
            sup = f"<sup>{html.escape(c.stars)}</sup>" if c.stars else ""
            text = html_number(html.escape(c.text)) if c.numeric else html.escape(c.text)
            return (f'<{tag}{span} style="text-align: {align}{under}{"; " + style if style else ""}">'
                    f"{text}{sup}</{tag}>")

        def row(r: list[Cell], tag: str, style: str = "") -> str:
            return "<tr>" + "".join(cell(c, tag, i == 0, style) for i, c in enumerate(r)) + "</tr>"

        parts = ['<table class="dpstats-table" style="border-collapse: collapse">']
        if self.caption:
            parts.append(f"<caption>{html.escape(self.caption)}</caption>")
        parts.append("<thead>" + "".join(row(r, "th") for r in self.header) + "</thead>")
        for panel in self.panels:
            body = [row(r, "td", rule if i == 0 else "") for i, r in enumerate(panel)]
            parts.append("<tbody>" + "".join(body) + "</tbody>")
        if self.notes:
            notes = "<br/>".join(html_note(n) for n in self.notes)
            parts.append(f'<tfoot><tr><td colspan="{self.ncols}" style="text-align: left; {rule}">'
                         f"<small>{notes}</small></td></tr></tfoot>")
        parts.append("</table>")
        return "\n".join(parts)

    # LaTeX -----------------------------------------------------------------------------------------------------
    def _latex_row(self, row: list[Cell]) -> str:
        out = []
        for c in row:
            text = c.latex if c.latex is not None else latex_cell(c.text, numeric=c.numeric)
            if c.stars:
                text += "$^{" + c.stars + "}$"
            if c.span > 1:
                text = f"\\multicolumn{{{c.span}}}{{c}}{{{text}}}"
            out.append(text)
        line = " & ".join(out) + " \\\\"
        rules, j = [], 0
        for c in row:
            if c.span > 1 and c.text:
                rules.append(f"\\cmidrule(lr){{{j + 1}-{j + c.span}}}")
            j += c.span
        return line + ("\n" + " ".join(rules) if rules else "")

    def as_latex(self, label: str | None = None) -> str:
        """A ``table`` float (preamble: :data:`LATEX_PREAMBLE`); the tabular is shrunk, keeping its proportions,
        only when it is wider than the text or taller than 0.7 of the text height."""
        lines = ["\\begin{table}[htbp]", "\\centering"]
        caption = self.caption or (DEFAULT_LATEX_CAPTION if label else "")
        if caption:  # a \label refers to the float's number only after a \caption
            lines.append("\\caption{" + latex_text(caption) + "}")
        if label:
            lines.append("\\label{" + label + "}")
        lines.append((_SHRINK_HEIGHT + _SHRINK_WIDTH).rstrip("\n"))
        lines.append("\\begin{tabular}{@{}l" + "c" * (self.ncols - 1) + "@{}}")
        lines.append("\\toprule")
        lines += [self._latex_row(r) for r in self.header]
        for panel in self.panels:
            lines.append("\\midrule")
            lines += [self._latex_row(r) for r in panel]
        lines += ["\\bottomrule", "\\end{tabular}}}"]
        if self.notes:
            notes = " \\\\\n".join(latex_note(n) for n in self.notes)
            lines += ["\\par\\smallskip", "{\\footnotesize\\raggedright " + notes + "\\par}"]
        lines.append("\\end{table}")
        return "\n".join(lines) + "\n"


#: the caption of a labelled LaTeX table without a title (``\\ref`` needs a ``\\caption`` to give the table's number)
DEFAULT_LATEX_CAPTION = "Regression results"

#: scale the box down to the text width when it is wider (graphicx; \\width is the box's natural width)
_SHRINK_WIDTH = "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n"
#: and then to 0.7 of the text height when taller, leaving room for the caption and the notes
_SHRINK_HEIGHT = ("\\resizebox*{!}{\\ifdim\\totalheight>0.7\\textheight 0.7\\textheight\\else\\totalheight"
                  "\\fi}{%\n")
#: backslash-escaped in Markdown: its own specials, ``$`` (math in Jupyter, MyST and pandoc: "$25k-$50k" was set as
#: mathematics) and ``&`` (an entity: a level "&lt;5" was shown as "<5")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|$&])")
_SUPERSCRIPT = re.compile(r"\b([A-Za-z])\\textasciicircum\{\}([A-Za-z0-9])\b")
_LATEX_SYMBOLS = {"\u03b5": "$\\varepsilon$", "\u03b4": "$\\delta$", "\u00b2": "$^2$", "\u221e": "$\\infty$",
                  "\u2264": "$\\le$", "\u2265": "$\\ge$"}


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", text)


def latex_text(text: str, numeric: bool = False) -> str:
    """Plain text as LaTeX: specials escaped, the dash, epsilon, delta, squares and infinity as LaTeX; in a
    numeric cell a minus sign before a digit is set as math."""
    out = latex_escape_text(text)
    for sym, rep in _LATEX_SYMBOLS.items():
        out = out.replace(sym, rep)
    out = _SUPERSCRIPT.sub(r"$\1^{\2}$", out)  # X^T, R^2 as mathematics
    if numeric:
        out = re.sub(r"-(?=[\d$])", "$-$", out)
        out = _E_NOTATION.sub(_power_of_ten, out)
    return out


#: a number in e-notation in a note's running text, not inside a name (x12e5): a delta of 2e-6
_E_NOTE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-])0*(\d+)\b")


def latex_note(text: str) -> str:
    """A note as LaTeX: :func:`latex_text`, with numbers in e-notation (a delta of 2e-6) as powers of ten, as the
    footer's cells set them."""
    return _E_NOTE.sub(lambda m: _power_of_ten_plain(m.group(1), m.group(2), m.group(3)), latex_text(text))


def html_note(text: str) -> str:
    """A note as HTML: escaped, with numbers in e-notation as powers of ten (:func:`latex_note`'s rule)."""
    return _E_NOTE.sub(lambda m: f"{m.group(1)}&times;10<sup>{'&minus;' if m.group(2) == '-' else ''}"
                                 f"{m.group(3)}</sup>", html.escape(text))


def _power_of_ten_plain(mantissa: str, sign: str, exponent: str) -> str:
    """2e-6 as 2$\\times 10^{-6}$ and 1e-6 as $10^{-6}$."""
    power = f"10^{{{'-' if sign == '-' else ''}{exponent}}}"
    return f"${power}$" if mantissa == "1" else f"{mantissa}$\\times {power}$"


def latex_cell(text: str, numeric: bool = False) -> str:
    """A table cell as LaTeX: :func:`latex_text`, with the quotes and the backtick of a term name written as code
    (``C(cut, Treatment('Ideal'))``, ``Q("MPG.city")``) set straight, as typed; pdflatex's default font would set
    them as closing curly quotes.  Notes are running text, whose apostrophes stay typographic."""
    return "".join(_LATEX_QUOTES.get(ch, ch) for ch in latex_text(text, numeric))


#: straight quotes in the default (OT1) encoding: the kernel's \textquotesingle and \textasciigrave, and the
#: typewriter font's straight double quote (\textquotedbl needs the T1 encoding)
_LATEX_QUOTES = {"'": r"\textquotesingle{}", '"': r"\texttt{\char34}", "`": r"\textasciigrave{}"}


#: a number in e-notation once its minus signs are set as math: 2.1e$-$05, $-$1e+06, 3e7
_E_NOTATION = re.compile(r"(?<![A-Za-z_])(\$-\$)?(\d+(?:\.\d+)?)e(\$-\$|\+)?0*(\d+)\b")


def _power_of_ten(match: re.Match[str]) -> str:
    """2.1e$-$05 as 2.1$\\times 10^{-5}$ and $-$1e$-$6 as $-10^{-6}$ (a paper's notation; e-notation is a
    programmer's)."""
    minus, mantissa, sign, exponent = match.groups()
    power = f"10^{{{'-' if sign == '$-$' else ''}{exponent}}}"
    if mantissa == "1":
        return f"${'-' if minus else ''}{power}$"
    return f"{minus or ''}{mantissa}$\\times {power}$"


#: a number in e-notation in (escaped) plain text: 2.10e-05, -1e+06
_E_PLAIN = re.compile(r"(?<![A-Za-z_])(\d+(?:\.\d+)?)e([+-])0*(\d+)\b")


def html_number(text: str) -> str:
    """Numbers in e-notation of an HTML-escaped cell as powers of ten: 2.10e-05 as 2.10&times;10<sup>&minus;5</sup>
    (the LaTeX tables set them the same way, :func:`latex_text`)."""
    return _E_PLAIN.sub(lambda m: f"{m.group(1)}&times;10<sup>{'&minus;' if m.group(2) == '-' else ''}"
                                  f"{m.group(3)}</sup>", text)


def latex_escape_text(text: str) -> str:
    """Escape every LaTeX special character of running text (the notes under the table)."""
    return "".join(_LATEX.get(ch, ch) for ch in str(text))


_LATEX = {"{": r"\{", "}": r"\}", "^": r"\textasciicircum{}", "~": r"\textasciitilde{}", "&": r"\&",
          "%": r"\%", "#": r"\#", "$": r"\$", "_": r"\_", "|": r"\textbar{}", "<": r"\textless{}",
          ">": r"\textgreater{}", "\\": r"\textbackslash{}", WITHHELD_CELL: "---"}




# -- one fit: the compact coefficient table and its privacy report (DPRegressionResults.summary().as_latex) ------

def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith(".") else text + "."



def coefficient_grid(res: DPRegressionResults, alpha: float = 0.05, fmt: Any = None, digits: int = DEFAULT_DIGITS,
                     thousands: str = "") -> Grid:
    """One fit's coefficients with standard error, z (t), p and interval, and notes on the fit; no privacy steps.
    Numbers as :func:`row_format` (``digits`` significant digits of each standard error) and :func:`format_number`
    (``thousands``)."""
    stat, pvalue = res.statistic_labels()
    latex_stat = {"z*": "z^*"}.get(stat, stat)
    latex_p = {"P(boot)": r"P_{\mathrm{boot}}"}.get(pvalue, pvalue)
    level = f"{100 * (1 - alpha):g}% CI"
    header = [Cell(), Cell("Coef."), Cell("Std. err."), Cell(stat, latex=f"${latex_stat}$"),
              Cell(pvalue, latex=f"${latex_p}$"), Cell(level)]
    body = [[Cell(name), *(Cell(text, numeric=True) for text in cells[:4]),
             Cell(f"[{cells[4]}, {cells[5]}]" if cells[4] != WITHHELD_CELL else WITHHELD_CELL, numeric=True)]
            for name, cells in coefficient_cells(res, alpha, fmt, digits, thousands)]
    caption = res._title() + (f": {res.method}" if res.privacy.private else "")
    return Grid(header=[header], panels=[body], notes=_fit_notes(res), caption=caption)


def coefficient_cells(res: DPRegressionResults, alpha: float = 0.05, fmt: Any = None,
                      digits: int = DEFAULT_DIGITS, thousands: str = "") -> list[tuple[str, list[str]]]:
    """Each coefficient's name and cells (estimate, standard error, z (t), p, the interval's two ends) as every
    table of one fit shows them (the text and HTML summary, the LaTeX table): estimate, standard error and
    interval to the row's precision (:func:`row_format`), the statistic to :data:`STATISTIC_DECIMALS` decimals,
    the p-value to three (:func:`_pvalue`); a dash where the fit reports no inference."""
    floor = pvalue_floor(res)
    out = []
    for row in res.tidy(alpha).itertuples(index=False):
        est, se, z, p, lo, hi = row[1:]
        shown = row_format(est, se, fmt, digits)
        out.append((str(row[0]), [format_number(est, shown, thousands), format_number(se, shown, thousands),
                                  format_number(z, STATISTIC_DECIMALS), _pvalue(p, floor),
                                  format_number(lo, shown, thousands), format_number(hi, shown, thousands)]))
    return out


#: what N is for a fit whose incomplete rows entered as public null rows (n is public, the complete count private)
NULL_ROWS_NOTE = ("N counts every row, including any with a missing value (a public null row that adds nothing to "
                  "the fit); the number of complete rows is private.")


def counts_null_rows(res: DPRegressionResults) -> bool:
    """Whether the fit's N counts rows with a missing value as public null rows by the user's choice
    (``missing="drop"``, which its report names); decided from the report, never from the data.  (With the default
    screen a few such rows can enter too; the report's note on the screen says so.)"""
    return res.privacy.private and any(note.startswith("missing='drop'") for note in res.privacy.notes)


def _fit_notes(res: DPRegressionResults) -> list[str]:
    """The facts a reader of one fit's table needs, from public and released values."""
    pr = res.privacy
    notes = [f"Dependent variable: {res.response_name}. N = {res.nobs:,}."
             + (f" {NULL_ROWS_NOTE}" if counts_null_rows(res) else "")]
    if pr.private:
        notes.append(f"Method: {res.method}. Privacy: \u03b5 = {_budget(pr.epsilon_spent)}, "
                     f"\u03b4 = {_budget(pr.delta_spent)} spent; {res._guarantee_kind()} guarantee "
                     f"({res._relation_kind()} neighbours).")
    else:
        notes.append("NOT PRIVATE: ordinary least squares computed directly from the data (the non-private "
                     "reference).")
    r2, adj, why = res._rsquared()
    if why:
        notes.append(f"R\u00b2: not available: {_sentence(why)}")
    else:
        kind = " (private estimates from released statistics, no extra budget)" if pr.private else ""
        notes.append(f"R\u00b2 = {r2:.3f}, adjusted R\u00b2 = {adj:.3f}{kind}.")
    if not res.inference_available:
        kind = "Inference withheld" if res._withheld else "No standard errors"
        notes.append(f"{kind} ({WITHHELD_CELL}): {_sentence(res.inference_reason)}")
    else:
        notes.append(f"Standard errors and intervals: {_sentence(res.inference_method)}")
    notes += [n for n in pr.notes if n.startswith("WARNING")]
    if pr.private and any("clipped to the declared bounds" in n for n in pr.notes):
        notes.append("Estimates are for the data clipped to the declared public bounds.")
    if pr.private and pr.seeded:
        notes.append("Noise from a seeded generator (reproducible; for research and tests only).")
    return notes


def privacy_latex(res: DPRegressionResults, label: str | None = None) -> str:
    """The privacy report in LaTeX: its steps as a table as wide as the text (columns are fractions of
    ``\\linewidth`` and the text wraps inside them; preamble: booktabs), then the budget, guarantee and notes as a
    paragraph after the float, which breaks across pages (inside the float, pgd's notes ran past the page's foot).
    A report without steps (the non-private reference) keeps its few facts inside the float."""
    pr = res.privacy
    facts = " \\\\\n".join(_breakable(latex_text(line.strip())) for line in pr.lines() if not line.startswith("  step"))
    lines = ["\\begin{table}[htbp]", "\\centering",
             "\\caption{Privacy report: " + latex_text(res.method) + "}"]
    if label:
        lines.append("\\label{" + label + "}")
    lines += ["\\footnotesize", "\\setlength{\\tabcolsep}{3pt}"]
    if not pr.steps:
        return "\n".join([*lines, "{\\raggedright " + facts + "\\par}", "\\end{table}"]) + "\n"
    lines += [*_privacy_steps_tabular(pr.steps), "\\end{table}"]
    table = f"Table~\\ref{{{label}}}" if label else "the table"
    lines.append(f"{{\\footnotesize\\raggedright\\noindent Privacy report of {table} ({latex_text(res.method)}), "
                 f"continued: \\\\\n{facts}\\par}}")
    return "\n".join(lines) + "\n"


def _privacy_steps_tabular(steps: Sequence[PrivacyStep]) -> list[str]:
    """The privacy steps as a tabular of wrapping columns, fractions of the text width."""
    widths = (0.29, 0.16, 0.15, 0.12, 0.28)  # of the text width, \\tabcolsep included
    spec = "".join(f"p{{\\dimexpr {w}\\linewidth-2\\tabcolsep\\relax}}" for w in widths)

    def row(cells: Sequence[str]) -> str:
        return " & ".join("\\raggedright " + _breakable(latex_text(c)) for c in cells) + " \\tabularnewline"

    lines = ["\\begin{tabular}{" + spec + "}", "\\toprule",
             row(["Step", "Mechanism", "Sensitivity", "Noise scale", "Privacy"]), "\\midrule"]
    lines += [row(cells) for cells in _numbered_runs([_step_cells(s) for s in steps])]
    return [*lines, "\\bottomrule", "\\end{tabular}"]


def _step_cells(step: PrivacyStep) -> list[str]:
    """One privacy step's cells: name, mechanism, sensitivity, noise scale, privacy."""
    noise = step.noise_scale
    scale = "-" if isinstance(noise, float) and math.isnan(noise) else f"{noise:.4g}"
    mech = step.mechanism + (f" x{step.count}" if step.count > 1 else "")
    return [step.name, mech, f"{step.sensitivity:.4g} ({step.sensitivity_norm})", scale, step.describe_privacy()]


_NUMBERED = re.compile(r"^(.*\D)(\d+)$")


def _numbered_runs(rows: list[list[str]]) -> list[list[str]]:
    """Consecutive steps that differ only in a trailing number counting up by one (TukeyEM's private median of
    column 1, 2, ..., 18) as one row, "column 1-18 (each)": the same releases, in a table that fits on a page."""
    out: list[list[str]] = []
    run: tuple[str, int, int] | None = None  # out[-1]'s name as (prefix, first number, last number), if numbered
    for cells in rows:
        match = _NUMBERED.match(cells[0])
        number = int(match.group(2)) if match else 0
        if match and run and (match.group(1), number - 1) == (run[0], run[2]) and out[-1][1:] == cells[1:]:
            run = (run[0], run[1], number)
            out[-1][0] = f"{run[0]}{run[1]}-{number} (each)"
            continue
        out.append(list(cells))
        run = (match.group(1), number, number) if match else None
    return out


def _breakable(latex: str) -> str:
    """Allow line breaks after escaped underscores (long identifiers in narrow columns)."""
    return latex.replace("\\_", "\\_\\allowbreak{}")
