"""Regression tables for papers: several fits side by side, as text, Markdown, HTML and LaTeX.

:func:`table` puts dpstats fits and statsmodels results in one table, the
layout of statsmodels' ``summary_col``, pyfixest's ``etable`` and R's
``modelsummary``/``stargazer``: one column per model, each coefficient over
its standard error (or interval, or statistic) in parentheses, optional
significance stars with their legend, terms chosen, ordered and renamed, and
footer rows for what a reader of a private analysis needs: N, the privacy
budget spent (epsilon, delta), the method and the kind of guarantee, and R^2
(for a private fit the private estimate of :attr:`DPRegressionResults.rsquared
<dpstats.results.DPRegressionResults.rsquared>`, computed from released
values only).  A value a fit does not provide is a dash, and a note under the
table gives the reason; a fit that is not private says so in the table.

The LaTeX output is a ``table`` float with booktabs rules.  Its preamble::

    \\usepackage{booktabs}   % \\toprule, \\midrule, \\cmidrule, \\bottomrule
    \\usepackage{graphicx}   % \\resizebox: shrinks a table wider than the text, and only then

(:data:`LATEX_PREAMBLE`).  The notes are a paragraph of the text width under
the table.  (statsmodels' own ``summary_col`` also accepts dpstats fits that
report standard errors, but it reads ``bse`` directly and so cannot show a fit
without them; this table can.)  ``docs/check_latex.py`` compiles such tables with pdflatex and
fails on errors and on overfull boxes.  Names are escaped for LaTeX; pdflatex
needs them in ASCII (or a Unicode engine such as lualatex).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpstats.errors import DataTypeError, InvalidArgumentError
from dpstats.results import DPRegressionResults
from dpstats.statsmodels_results import is_statsmodels, statsmodels_coefficients
from dpstats.table_grid import (
    DEFAULT_DIGITS,
    LATEX_PREAMBLE,
    STATISTIC_DECIMALS,
    WITHHELD_CELL,
    Cell,
    Grid,
    _budget,
    _pvalue,
    _sentence,
    check_digits,
    check_thousands,
    counts_null_rows,
    format_number,
    pvalue_floor,
    row_format,
)
from dpstats.validation import check_alpha, shown

__all__ = ["table", "RegressionTable", "LATEX_PREAMBLE", "DEFAULT_STATS", "STAT_LABELS"]

#: footer rows of :func:`table` by default: columns of :meth:`DPRegressionResults.glance`
DEFAULT_STATS = ("nobs", "r.squared", "adj.r.squared", "epsilon", "delta", "method", "guarantee")

#: the label of each footer row (a :meth:`~dpstats.results.DPRegressionResults.glance` column)
STAT_LABELS = {"nobs": "N", "r.squared": "R\u00b2", "adj.r.squared": "Adj. R\u00b2", "epsilon": "\u03b5",
               "delta": "\u03b4", "method": "Method", "guarantee": "Guarantee", "df.model": "Df model",
               "df.residual": "Df residuals"}

#: default significance marks with ``stars=True``: (mark, p below which it is given), the convention of
#: statsmodels' summary_col and stargazer
DEFAULT_STARS = {"*": 0.1, "**": 0.05, "***": 0.01}

_STATISTICS = {"se": "standard errors in parentheses", "t": "z (or t) statistics in parentheses",
               "p": "p-values in parentheses", "ci": "{level} confidence intervals in brackets"}

# -- numbers ------------------------------------------------------------------------------------------------------

def _check_fmt(fmt: Any) -> None:
    if fmt is None or callable(fmt):
        return
    if isinstance(fmt, bool) or not isinstance(fmt, (int, str)) or (isinstance(fmt, int) and not 0 <= fmt <= 15):
        raise InvalidArgumentError(
            "fmt must be None (adaptive decimals), a number of decimals (0-15), a format spec such as '.3g', or a "
            f"function, got {shown(fmt)}")
    if isinstance(fmt, str):
        try:
            format(1.5, fmt)
        except ValueError:
            raise InvalidArgumentError(f"fmt {fmt!r} is not a format spec for numbers (e.g. '.3f' or '.3g')") from None



# -- a uniform view of one fit (dpstats or statsmodels) ---------------------------------------------------------

@dataclass
class _Fit:
    """What a table needs from one fit: its tidy and glance frames and why something is missing."""

    name: str
    tidy: pd.DataFrame  # indexed by term
    glance: dict[str, Any]
    depvar: str
    private: bool
    inference_missing: str  # "" when standard errors etc. are given, else why not
    rsquared_missing: str  # "" when R^2 is given, else why not
    label: str  # how the notes name it: "(2) adassp"
    null_rows: bool = False  # N may count rows with a missing value (public null rows)
    bootstrap: bool = False  # its statistic is z* (the bias-corrected estimate over the standard error)
    p_floor: float = 0.001  # the smallest p-value the fit tells apart from 0 (2 / B for a bootstrap of B replicates)


def _from_dpstats(res: DPRegressionResults, name: str, alpha: float) -> _Fit:
    # (the note reads "no standard errors or p-values: <why>": the reason without inference_method's
    # "not available: ", which would say it twice; a withheld fit keeps "withheld: ")
    missing = "" if res.inference_available else res.inference_method.removeprefix("not available: ")
    return _Fit(name=name, tidy=res.tidy(alpha).set_index("term"), glance=res.glance().iloc[0].to_dict(),
                depvar=res.response_name, private=res.privacy.private, inference_missing=missing,
                rsquared_missing=res.rsquared_reason, label=name, null_rows=counts_null_rows(res),
                p_floor=pvalue_floor(res), bootstrap=res.statistic_labels()[0] == "z*")


def _from_statsmodels(res: Any, name: str, alpha: float) -> _Fit:
    params, ci = statsmodels_coefficients(res, alpha)
    tidy = pd.DataFrame({"estimate": params.to_numpy(), "std.error": np.asarray(res.bse, dtype=float),
                         "statistic": np.asarray(res.tvalues, dtype=float),
                         "p.value": np.asarray(res.pvalues, dtype=float), "conf.low": ci[:, 0],
                         "conf.high": ci[:, 1]}, index=pd.Index(params.index, name="term"))
    r2 = float(getattr(res, "rsquared", float("nan")))
    adj = float(getattr(res, "rsquared_adj", float("nan")))
    model = type(res.model).__name__
    glance = {"nobs": int(res.nobs), "epsilon": math.inf, "delta": float("nan"), "method": model,
              "guarantee": "not private", "r.squared": r2, "adj.r.squared": adj,
              "df.model": float(getattr(res, "df_model", float("nan"))),
              "df.residual": float(getattr(res, "df_resid", float("nan")))}
    return _Fit(name=name, tidy=tidy, glance=glance, depvar=str(getattr(res.model, "endog_names", "")),
                private=False, inference_missing="",
                rsquared_missing="" if math.isfinite(r2) else f"statsmodels' {model} results give no R\u00b2",
                label=name if "statsmodels" in name and model in name else f"{name}, a statsmodels {model} fit")


def _as_fit(res: Any, name: str, alpha: float) -> _Fit:
    if isinstance(res, DPRegressionResults):
        return _from_dpstats(res, name, alpha)
    if is_statsmodels(res):
        return _from_statsmodels(res, name, alpha)
    raise DataTypeError(f"table() takes dpstats results (dp_ols) and statsmodels results; got {type(res).__name__}")


# -- choosing, ordering and renaming the terms ------------------------------------------------------------------

def _matches(pattern: str, names: Sequence[str]) -> bool:
    """True when ``pattern`` is one of ``names`` or a regular expression found in one of them."""
    if pattern in names:
        return True
    try:
        rx = re.compile(pattern)
    except re.error:
        return False
    return any(rx.search(n) for n in names)


def _check_patterns(arg: str, patterns: Sequence[str], rows: Mapping[str, list[str]]) -> None:
    if isinstance(patterns, str):
        raise DataTypeError(f"{arg} must be a list of term names or regular expressions, e.g. {arg}=[{patterns!r}]")
    for p in patterns:
        if not any(_matches(p, [label, *names]) for label, names in rows.items()):
            raise InvalidArgumentError(f"{arg}: {p!r} matches no coefficient (neither a term name nor a regular "
                                       f"expression found in one); the terms are: {', '.join(rows)}")


def _select_rows(rows: dict[str, list[str]], keep: Sequence[str] | None, drop: Sequence[str] | None,
                 order: Sequence[str] | None) -> list[str]:
    """Row labels after keep (also orders), drop and order; each row is matched by its label and its names."""
    labels = list(rows)

    def first_match(label: str, patterns: Sequence[str]) -> int | None:
        hits = [i for i, p in enumerate(patterns) if _matches(p, [label, *rows[label]])]
        return hits[0] if hits else None

    if keep is not None:
        _check_patterns("keep", keep, rows)
        ranked = [(first_match(lab, keep), i, lab) for i, lab in enumerate(labels)]
        labels = [lab for r, _, lab in sorted(t for t in ranked if t[0] is not None)]
    if drop is not None:
        _check_patterns("drop", drop, rows)
        labels = [lab for lab in labels if first_match(lab, drop) is None]
    if order is not None:
        _check_patterns("order", order, rows)
        ranked = [(first_match(lab, order), i, lab) for i, lab in enumerate(labels)]
        labels = [lab for _, _, lab in sorted(ranked, key=lambda t: (t[0] is None, t[0] or 0, t[1]))]
    return labels


def _rows_by_label(fits: Sequence[_Fit], rename: Mapping[str, str]) -> dict[str, list[str]]:
    """Display label -> the term names it shows, in order of first appearance; one term per label and fit."""
    rows: dict[str, list[str]] = {}
    for fit in fits:
        seen: dict[str, str] = {}
        for term in fit.tidy.index:
            label = rename.get(term, term)
            if label in seen:
                raise InvalidArgumentError(f"rename maps {seen[label]!r} and {term!r} of {fit.name} to the same "
                                           f"label {label!r}; a model can show one coefficient per row")
            seen[label] = term
            names = rows.setdefault(label, [])
            if term not in names:
                names.append(term)
    return rows


def _normalise_stars(stars: bool | Mapping[str, float]) -> list[tuple[str, float]]:
    if stars is False or stars is None:
        return []
    marks = DEFAULT_STARS if stars is True else stars
    if not isinstance(marks, Mapping) or not marks:
        raise DataTypeError("stars must be True, False or a mapping of marks to p-value thresholds, "
                            "e.g. {'*': 0.1, '**': 0.05, '***': 0.01}")
    for mark, level in marks.items():
        if not isinstance(mark, str) or not mark or not (isinstance(level, (int, float)) and 0 < level < 1):
            raise InvalidArgumentError(
                f"stars: {mark!r}: {level!r} must map a non-empty mark to a p-value threshold in (0, 1)")
    return sorted(marks.items(), key=lambda kv: -kv[1])


def _mark(p: float, stars: list[tuple[str, float]]) -> str:
    mark = ""
    for m, level in stars:
        if math.isfinite(p) and p < level:
            mark = m
    return mark


# -- the table ----------------------------------------------------------------------------------------------------

class RegressionTable:
    """Several fits side by side, rendered as text, Markdown, HTML or LaTeX.

    Made by :func:`table`; prints as text and shows as HTML in Jupyter.

    Parameters
    ----------
    grid : Grid
        The cells and notes, laid out by :func:`table`.
    frame : pandas.DataFrame
        The same cells as strings (:meth:`to_frame`).

    See Also
    --------
    table : Builds the table from fitted models.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("mtcars")
    >>> bounds = {"wt": (1, 6), "mpg": (10, 35)}
    >>> ols = dpstats.dp_ols("mpg ~ wt", df, epsilon=float("inf"), method="ols")
    >>> tab = dpstats.table({"OLS": ols})
    >>> tab.to_frame().shape[1]
    1
    >>> print(tab.as_markdown().splitlines()[0])
    |  | OLS |
    """

    def __init__(self, grid: Grid, frame: pd.DataFrame) -> None:
        self._grid = grid
        self._frame = frame

    @property
    def notes(self) -> list[str]:
        """The notes under the table (statistic, stars legend, missing values and why, privacy)."""
        return list(self._grid.notes)

    def to_frame(self) -> pd.DataFrame:
        """The cells as strings.

        Returns
        -------
        pandas.DataFrame
            One column per model; the statistic on the row under each coefficient.
        """
        return self._frame.copy()

    def as_text(self) -> str:
        """The table as plain text (what ``print`` shows).

        Returns
        -------
        str
            Fixed-width text with the notes under the table.
        """
        return self._grid.as_text()

    def as_markdown(self) -> str:
        """The table as a Markdown (pipe) table.

        Returns
        -------
        str
            The table, then the notes as a paragraph.
        """
        return self._grid.as_markdown()

    def as_html(self) -> str:
        """The table as an HTML fragment (what Jupyter shows).

        Returns
        -------
        str
            A ``<table>`` with the notes under it.
        """
        return self._grid.as_html()

    def as_latex(self, label: str | None = None) -> str:
        """The table as a LaTeX ``table`` float with booktabs rules.

        Parameters
        ----------
        label : str, optional
            A ``\\label`` for the float; a labelled float needs a caption for ``\\ref`` to give its number, so
            a table without a ``title`` is captioned "Regression results" then.

        Returns
        -------
        str
            The float; its preamble is ``LATEX_PREAMBLE`` (booktabs, graphicx).
        """
        return self._grid.as_latex(label)

    def save(self, path: str | Path, label: str | None = None) -> Path:
        """Write the table in the format of the file's extension.

        Parameters
        ----------
        path : str or pathlib.Path
            The file; its extension chooses the format: ``.tex``, ``.md``,
            ``.html`` (or ``.htm``) or ``.txt``.
        label : str, optional
            A ``\\label`` for the LaTeX float.

        Returns
        -------
        pathlib.Path
            The file written.

        Raises
        ------
        ValueError
            The extension is none of these.
        """
        path = Path(path)
        writers: dict[str, Callable[[], str]] = {
            ".tex": lambda: self.as_latex(label), ".md": self.as_markdown, ".html": self.as_html,
            ".htm": self.as_html, ".txt": self.as_text}
        if path.suffix.lower() not in writers:
            raise InvalidArgumentError(f"cannot tell the format from {path.name!r}: use .tex, .md, .html or .txt")
        path.write_text(writers[path.suffix.lower()](), encoding="utf-8")
        return path

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return self.as_html()


def table(models: Sequence[Any] | Mapping[str, Any], *, model_names: Sequence[str] | None = None,
          statistic: str | None = "se", stars: bool | Mapping[str, float] = False,
          keep: Sequence[str] | None = None, drop: Sequence[str] | None = None, order: Sequence[str] | None = None,
          rename: Mapping[str, str] | None = None, stats: Sequence[str] = DEFAULT_STATS, fmt: Any = None,
          alpha: float = 0.05, depvar: bool = True, title: str = "",
          notes: Sequence[str] = (), digits: int = DEFAULT_DIGITS, thousands: str = "") -> RegressionTable:
    """Several regressions side by side, for papers (text, Markdown, HTML, LaTeX).

    Parameters
    ----------
    models : sequence or mapping
        dpstats results (:func:`dpstats.dp_ols`) and statsmodels results, in
        any mix; a mapping gives each its column name.
    model_names : sequence of str, optional
        Column names (default: the mapping's keys, else ``(1)``, ``(2)``, ...).
    statistic : {"se", "ci", "t", "p", None}
        What goes under each coefficient: the standard error (default), the
        ``1 - alpha`` confidence interval in brackets, the z (or t)
        statistic, the p-value, or nothing.  A fit that gives none shows a
        dash, and the notes say why.
    stars : bool or mapping
        Significance marks on the coefficients from their p-values: ``True``
        for ``*`` p < 0.1, ``**`` p < 0.05, ``***`` p < 0.01, or a mapping of
        marks to thresholds; the legend is added to the notes.
    keep, drop, order : sequence of str, optional
        Terms to show (in this order), to leave out, and to put first; each
        entry is a term name or a regular expression searched in the names
        (``"^C\\\\(cut"``: every dummy of ``cut``).  An entry that matches no term
        is an error.
    rename : mapping, optional
        Display labels for term names (``{"np.log(carat)": "log carat"}``);
        terms of different models renamed to the same label share a row.
    stats : sequence of str
        Footer rows, columns of :meth:`~dpstats.results.DPRegressionResults.glance`:
        by default N, R^2 and adjusted R^2 (private estimates for private
        fits, where the method's released statistics determine them), the
        epsilon and delta spent, the method and the kind of guarantee.
    fmt : None, int, str or callable
        Number format: None (default) gives each coefficient of each model the decimals that show its
        standard error to ``digits`` significant digits, in its estimate, standard error and interval alike
        (``dpstats.table_grid.row_format``: none for a standard error of 100 or more, six at most; a row of
        standard error below 1e-5 in powers of ten); or a fixed number of decimals, a format spec or a function.
        z (t) statistics have two decimals and p-values three ("<0.001" below).
    alpha : float
        Level of the intervals with ``statistic="ci"`` (0.05: 95% intervals).
    depvar : bool
        Show the dependent variable above the model names.
    title : str
        Caption.
    notes : sequence of str
        Your notes, added after dpstats' own.
    digits : int
        Significant digits of each standard error with ``fmt=None`` (default 3; 2 is the metrology convention).
    thousands : str
        The separator of thousands in the coefficients, standard errors and intervals: none by default, ``","``
        for 23,567 (N is grouped with it too, and with "," by default).

    Returns
    -------
    RegressionTable
        ``print()`` it, show it in Jupyter (HTML), or take ``as_latex()``,
        ``as_markdown()``, ``as_html()``, ``to_frame()``, ``save(path)``.

    Raises
    ------
    ValueError
        An unknown ``statistic`` or footer row, ``alpha`` outside (0, 1), a
        bad ``fmt``, or a ``keep``/``drop``/``order`` entry that matches no
        term.
    dpstats.errors.DataTypeError
        A model that is not a dpstats or statsmodels result, ``keep``/``drop``/
        ``order`` that are not lists, ``stars`` that is neither a bool nor a
        mapping, a ``rename`` that is not a mapping, a ``title`` that is not a
        string or ``notes`` that are not a list of strings (a ``TypeError``).

    Notes
    -----
    A private fit's numbers are its released values and what follows from
    them (post-processing): no cell is computed from the data.  R^2 of a
    private fit is the estimate of :attr:`~dpstats.results.DPRegressionResults.rsquared`;
    where the method releases nothing that determines it, the cell is a dash
    and the note gives the reason.  The LaTeX preamble is
    :data:`LATEX_PREAMBLE`.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("mtcars")
    >>> bounds = {"wt": (1, 6), "hp": (50, 350), "mpg": (10, 35)}
    >>> ols = dpstats.dp_ols("mpg ~ wt + hp", df, epsilon=float("inf"), method="ols")
    >>> ssp = dpstats.dp_ols("mpg ~ wt + hp", df, epsilon=1.0, delta=1e-6, method="ssp", bounds=bounds,
    ...                      random_state=0)
    >>> tab = dpstats.table({"OLS": ols, "SSP": ssp}, stars=True, drop=["Intercept"])
    >>> tab.to_frame().columns.tolist()
    ['OLS', 'SSP']
    >>> latex = tab.as_latex(label="tab:mtcars")
    >>> "begin{table}" in latex and "tab:mtcars" in latex
    True
    """
    if statistic not in _STATISTICS and statistic is not None:
        raise InvalidArgumentError(
            f"statistic must be one of {', '.join(map(repr, _STATISTICS))} or None, got {shown(statistic)}")
    check_alpha(alpha)
    _check_fmt(fmt)
    numbers = (check_digits(digits), check_thousands(thousands))
    _check_text_arguments(rename, title, notes)
    marks = _normalise_stars(stars)
    if isinstance(stats, str) or not isinstance(stats, Sequence):
        raise InvalidArgumentError(f"stats must be a list of {', '.join(STAT_LABELS)}; got {type(stats).__name__}")
    unknown = [s for s in stats if s not in STAT_LABELS]
    if unknown:
        raise InvalidArgumentError(f"stats must be a list of {', '.join(STAT_LABELS)}; not one of them: {unknown}")
    names, results = _names_and_results(models, model_names)
    fits = [_as_fit(r, n, alpha) for n, r in zip(names, results, strict=True)]
    rows = _rows_by_label(fits, dict(rename or {}))
    labels = _select_rows(rows, keep, drop, order)
    grid, frame = _assemble(fits, rows, labels, statistic, marks, stats, fmt, alpha, depvar, numbers)
    grid.caption = title
    grid.notes = _notes(fits, statistic, marks, stats, alpha) + _hidden_note(fits, rows, labels) + list(notes)
    return RegressionTable(grid, frame)


def _hidden_note(fits: Sequence[_Fit], rows: Mapping[str, list[str]], labels: Sequence[str]) -> list[str]:
    """The note naming the terms that ``keep``/``drop`` left out and the models that have them ("Not shown:
    Intercept in (1), (2); hp in (2)."), so that a short and a long regression do not look alike; term names are
    the formulas' (public).  Empty when every term is shown."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for label, names in rows.items():
        if label not in labels:
            having = tuple(f.label for f in fits if any(n in f.tidy.index for n in names))
            groups.setdefault(having, []).append(label)
    if not groups:
        return []
    return ["Not shown: " + "; ".join(f"{', '.join(terms)} in {', '.join(having)}"
                                      for having, terms in groups.items()) + "."]


def _check_text_arguments(rename: object, title: object, notes: object) -> None:
    """Refuse a ``rename`` that is not a mapping of strings, a ``title`` that is not a string and ``notes`` that are
    not a list of strings, by their types alone."""
    if rename is not None and not isinstance(rename, Mapping):
        raise DataTypeError(f"rename must be a mapping of term names to labels, e.g. rename={{'np.log(carat)': "
                            f"'log carat'}}; got {type(rename).__name__}")
    labels = [v for v in (rename or {}).values() if not isinstance(v, str)]
    if labels:
        raise DataTypeError(f"rename must map term names to labels that are strings, e.g. rename={{'np.log(carat)': "
                            f"'log carat'}}; got a label of type {type(labels[0]).__name__}")
    if not isinstance(title, str):
        raise DataTypeError(f"title must be a string, got {type(title).__name__}")
    if isinstance(notes, str) or not isinstance(notes, Sequence) or not all(isinstance(n, str) for n in notes):
        raise DataTypeError("notes must be a list of strings, e.g. notes=['Standard errors in parentheses.']; got "
                            f"{type(notes).__name__}" + ("" if isinstance(notes, str) or not isinstance(notes, Sequence)
                                                         else " holding other objects"))


def _names_and_results(models: Sequence[Any] | Mapping[str, Any], model_names: Sequence[str] | None
                       ) -> tuple[list[str], list[Any]]:
    if isinstance(models, Mapping):
        names, results = [str(k) for k in models], list(models.values())
    elif isinstance(models, (list, tuple)):
        results = list(models)
        names = [f"({i})" for i in range(1, len(results) + 1)]
    else:
        results, names = [models], ["(1)"]
    if not results:
        raise InvalidArgumentError("table() needs at least one fitted model")
    if model_names is not None:
        if isinstance(model_names, str) or not isinstance(model_names, Sequence) or len(model_names) != len(results):
            raise InvalidArgumentError(f"model_names must be a list of {len(results)} names, one per model, got "
                                       f"{shown(model_names)}")
        names = [str(n) for n in model_names]
    if len(set(names)) != len(names):
        raise InvalidArgumentError(f"model names must be distinct, got {names}")
    return names, results


def _coef_cells(fit: _Fit, term: str | None, statistic: str | None, marks: list[tuple[str, float]], fmt: Any,
                numbers: tuple[int, str] = (DEFAULT_DIGITS, "")) -> tuple[Cell, Cell]:
    if term is None:
        return Cell(), Cell()
    digits, thousands = numbers
    row = fit.tidy.loc[term]
    shown = row_format(float(row["estimate"]), np.nan if fit.inference_missing else float(row["std.error"]), fmt,
                       digits)
    coef = Cell(format_number(row["estimate"], shown, thousands), stars=_mark(float(row["p.value"]), marks),
                numeric=True)
    if statistic is None:
        return coef, Cell()
    if fit.inference_missing or not math.isfinite(float(row["std.error"])):
        return coef, Cell(WITHHELD_CELL)
    if statistic == "ci":
        lo, hi = (format_number(row[end], shown, thousands) for end in ("conf.low", "conf.high"))
        text = f"[{lo}, {hi}]"
    elif statistic == "p":
        text = f"({_pvalue(float(row['p.value']), fit.p_floor)})"
    elif statistic == "se":
        text = f"({format_number(row['std.error'], shown, thousands)})"
    else:  # a z (t) statistic is a number of standard errors: two decimals in every table, not the row's
        text = f"({format_number(row['statistic'], STATISTIC_DECIMALS if fmt is None else fmt)})"
    return coef, Cell(text, numeric=True)


def _stat_cell(fit: _Fit, key: str, fmt: Any, thousands: str = "") -> Cell:
    value = fit.glance[key]  # every glance (dpstats' and statsmodels') has each column of STAT_LABELS
    if key in ("r.squared", "adj.r.squared"):
        return Cell(format_number(float(value), 3 if not isinstance(fmt, int) else max(fmt, 3)), numeric=True)
    if key in ("epsilon", "delta"):
        return Cell(_budget(float(value)), numeric=True)
    if key in ("nobs", "df.model", "df.residual"):
        v = float(value)
        return Cell(f"{int(v):,}".replace(",", thousands or ",") if math.isfinite(v) else "", numeric=True)
    return Cell(str(value))


def _assemble(fits: list[_Fit], rows: dict[str, list[str]], labels: list[str], statistic: str | None,
              marks: list[tuple[str, float]], stats: Sequence[str], fmt: Any, alpha: float, depvar: bool,
              numbers: tuple[int, str] = (DEFAULT_DIGITS, "")) -> tuple[Grid, pd.DataFrame]:
    header: list[list[Cell]] = []
    if depvar:
        spans: list[Cell] = []
        for fit in fits:
            if spans and spans[-1].text == fit.depvar:
                spans[-1] = Cell(fit.depvar, span=spans[-1].span + 1)
            else:
                spans.append(Cell(fit.depvar))
        header.append([Cell(), *spans])
    header.append([Cell(), *(Cell(f.name) for f in fits)])
    body: list[list[Cell]] = []
    index: list[str] = []
    for label in labels:
        pairs = [_coef_cells(f, next((t for t in rows[label] if t in f.tidy.index), None), statistic, marks, fmt,
                             numbers) for f in fits]
        body.append([Cell(label), *(p[0] for p in pairs)])
        index.append(label)
        if statistic is not None:
            body.append([Cell(), *(p[1] for p in pairs)])
            index.append("")
    footer = [[Cell(STAT_LABELS[key]), *(_stat_cell(f, key, fmt, numbers[1]) for f in fits)] for key in stats]
    index += [STAT_LABELS[key] for key in stats]
    panels = [p for p in (body, footer) if p]
    frame = pd.DataFrame([[c.text + c.stars for c in r[1:]] for r in body + footer], index=index,
                         columns=[f.name for f in fits])
    return Grid(header=header, panels=panels), frame


def _group(reasons: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(models, reason) with the models that share a reason named together."""
    return [(", ".join(models), reason) for reason, models in reasons.items()]


def _notes(fits: list[_Fit], statistic: str | None, marks: list[tuple[str, float]], stats: Sequence[str],
           alpha: float) -> list[str]:
    notes = []
    if statistic is not None:
        what = _STATISTICS[statistic].format(level=f"{100 * (1 - alpha):g}%")
        notes.append(what[0].upper() + what[1:] + ".")
    zstar = [f.label for f in fits if f.bootstrap and not f.inference_missing]
    if statistic == "t" and zstar:
        notes.append(f"z* of {', '.join(zstar)} (a bootstrap): the bias-corrected estimate, 2 coef - median of the "
                     "replicates, over its standard error; where the estimated bias has the coefficient's sign and a "
                     "larger size, z* has the opposite sign to the coefficient.")
    if marks:
        notes.append(", ".join(f"{m} p < {level:g}" for m, level in marks) + ".")
        if zstar:
            notes.append(f"Marks of {', '.join(zstar)} from their bootstrap p-values, the tests their intervals "
                         "invert, which can differ from what the coefficient over its standard error suggests.")
    missing: dict[str, list[str]] = {}
    for fit in fits:
        if fit.inference_missing and (statistic is not None or marks):
            missing.setdefault(_first_clause(fit.inference_missing), []).append(fit.label)
    for who, why in _group(missing):
        notes.append(f"{WITHHELD_CELL} {who}: no standard errors or p-values: {_sentence(why)}")
    if "r.squared" in stats or "adj.r.squared" in stats:
        no_r2: dict[str, list[str]] = {}
        for fit in fits:
            if fit.rsquared_missing:
                no_r2.setdefault(_first_clause(fit.rsquared_missing), []).append(fit.label)
        for who, why in _group(no_r2):  # (a method's reason writes R^2; the table's label is R\u00b2)
            reason = _sentence(why).replace("R^2", "R\u00b2")
            notes.append(f"{WITHHELD_CELL} R\u00b2 of {who}: {reason}")
        if any(f.private and not f.rsquared_missing for f in fits):
            notes.append("R\u00b2 of a private fit: estimated from its released statistics only (no extra privacy "
                         "budget), for the data clipped to the declared bounds.")
    null_rows = [f.label for f in fits if f.null_rows]
    if null_rows and "nobs" in stats:
        notes.append(f"N of {', '.join(null_rows)}: every row, including any with a missing value (a public null row "
                     f"that adds nothing to the fit); the number of complete rows is private.")
    private = [f for f in fits if f.private]
    if private and ("epsilon" in stats or "delta" in stats):
        notes.append("\u03b5, \u03b4: the privacy budget each private fit spent.")
        if len(private) > 1:  # nested models of one paper: basic composition (Dwork & Roth 2014, Theorem 3.16)
            eps = sum(float(f.glance.get("epsilon", math.nan)) for f in private)
            delta = sum(float(f.glance.get("delta", math.nan)) for f in private)
            if not (math.isnan(eps) or math.isnan(delta)):
                notes.append(_together(private, eps, delta))
    public = [f.label for f in fits if not f.private]
    if public:
        notes.append(f"Not private, computed directly from the data: {', '.join(public)}.")
    return notes


def _together(private: list[_Fit], eps: float, delta: float) -> str:
    """What the private fits spent together by basic composition (Dwork & Roth 2014, Theorem 3.16).  Fits on one
    data set share its n (public); fits of different n are not on the same rows, so their sum binds only where their
    rows overlap (disjoint data sets compose in parallel: each spent only its own)."""
    labels = ", ".join(f.label for f in private)
    total = f"\u03b5 = {_budget(eps)}, \u03b4 = {_budget(delta)} (the sums: basic composition)"
    if len({f.glance.get("nobs") for f in private}) == 1:
        return f"Together, on the same data, {labels} spent at most {total}."
    return (f"{labels} were fitted on different numbers of rows: where their rows overlap they spent together at most "
            f"{total}; on disjoint data sets each spent only its own.")


def _first_clause(reason: str) -> str:
    """A reason up to its first parenthesis, semicolon or ", where": the table's notes stay short (the results
    give the whole text: ``inference_method``, ``rsquared_reason``)."""
    return re.split(r" \(|; |, where ", reason, maxsplit=1)[0]
