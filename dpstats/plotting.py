"""Plots of private fits: coefficients with intervals, privacy-utility curves, error against n.

matplotlib is the ``plot`` extra (``pip install "dpstats[plot]"``); it is
imported inside each function, so ``import dpstats`` never needs it.  Every
function draws on ``ax`` when one is given (else on a new figure) and returns
the Axes.

* :func:`coef_plot` (also ``DPRegressionResults.plot_coefficients``): the
  released coefficients of one or several fits, with the intervals the method
  provides privately (ssp and adassp: parametric bootstrap; the non-private
  reference: classical) and, optionally, reference values such as the truth of
  a simulation or OLS on public data.
* :func:`privacy_utility`: the curve of :meth:`dpstats.Comparison.plot`
  (median and interquartile band against epsilon), plus an optional
  horizontal reference line (say, the non-private R^2).
* :func:`error_vs_n`: measured errors against n beside the minimax lower bound
  and the method's upper bound, drawn by :func:`dpstats.theory.plot_plan`.

Nothing here touches data: the plots use released values (and whatever the
caller measured on public or synthetic data).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpstats.errors import DataTypeError, InvalidArgumentError
from dpstats.statsmodels_results import is_statsmodels, statsmodels_coefficients
from dpstats.validation import shown

__all__ = ["coef_plot", "privacy_utility", "error_vs_n", "short_name"]


def pyplot(what: str = "dpstats.plotting") -> Any:
    """``matplotlib.pyplot``, imported on use (the ``plot`` extra).

    Parameters
    ----------
    what : str
        What needs it, for the error message.

    Returns
    -------
    module
        ``matplotlib.pyplot``.

    Raises
    ------
    ImportError
        When matplotlib is not installed.
    """
    try:
        import matplotlib.pyplot as plt  # noqa: PLC0415  (optional dependency, imported when used)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f'{what} needs matplotlib: pip install "dpstats[plot]"') from exc
    return plt


def median_band(ax: Any, x: Any, median: Any, q25: Any = None, q75: Any = None, **line: Any) -> str:
    """Draw a median curve and, when quartiles are given, its interquartile band in the same colour.

    The block of :meth:`dpstats.Comparison.plot` (against epsilon) and of
    :func:`error_vs_n` (against n).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    x, median : array_like
        The curve.
    q25, q75 : array_like, optional
        The lower and upper quartiles at ``x`` (no band without them).
    **line
        Passed to ``ax.plot`` (label, marker, colour, line width).

    Returns
    -------
    str
        The colour of the curve and its band.
    """
    color = ax.plot(x, median, **line)[0].get_color()
    if q25 is not None and q75 is not None:
        ax.fill_between(x, q25, q75, color=color, alpha=0.2, linewidth=0)
    return str(color)


_FACTOR_COLUMN = re.compile(r"^C\((?P<var>[^,()]+)(?:,.*)?\)\[(?:T\.)?(?P<level>.*)\]$")


def short_name(column: str) -> str:
    """A readable label for a patsy design column.

    Parameters
    ----------
    column : str
        A design column name.

    Returns
    -------
    str
        ``var: level`` for a factor's dummy column, else the name unchanged.

    Examples
    --------
    >>> from dpstats.plotting import short_name
    >>> short_name("C(cut, Treatment('Ideal'))[T.Good]")
    'cut: Good'
    >>> short_name("np.log(carat)")
    'np.log(carat)'
    """
    m = _FACTOR_COLUMN.match(column)
    return f"{m.group('var').strip()}: {m.group('level')}" if m else column


def _fit_label(res: Any) -> str:
    if not _is_dpstats(res):
        return f"statsmodels {type(res.model).__name__} (NOT PRIVATE)"
    if not res.privacy.private:
        return f"{res.method} (NOT PRIVATE)"
    return f"{res.method}, epsilon={res.privacy.epsilon_spent:.3g}"


def _labelled_fits(results: Any) -> dict[str, Any]:
    """The fits of :func:`coef_plot` by legend label: a mapping's own labels, one fit's method and epsilon, or
    those of each fit of a list numbered ``(1)``, ``(2)``, ... as in :func:`dpstats.table`."""
    if isinstance(results, Mapping):
        fits = dict(results)
        for res in fits.values():
            _checked_fit(res)
        return fits
    if isinstance(results, (list, tuple)):
        return {f"({i}) {_fit_label(_checked_fit(res))}": res for i, res in enumerate(results, start=1)}
    return {_fit_label(_checked_fit(results)): results}


def _is_dpstats(res: Any) -> bool:
    """Whether ``res`` is a dpstats fit (its results class, recognised by name: the results module imports this
    one lazily, so importing it here would close a cycle)."""
    return any(cls.__name__ == "DPRegressionResults" and cls.__module__ == "dpstats.results"
               for cls in type(res).__mro__)


def _checked_fit(res: Any) -> Any:
    """``res`` when it is a dpstats fit or a statsmodels results object (as :func:`dpstats.table` takes them); a
    :class:`~dpstats.errors.DataTypeError` naming its type otherwise."""
    if not (_is_dpstats(res) or is_statsmodels(res)):
        raise DataTypeError(f"coef_plot takes dpstats results (dp_ols) and statsmodels results, one, a list or a "
                            f"dict of them; got {type(res).__name__}")
    return res


def _coefficients(res: Any, alpha: float) -> tuple[pd.Series, pd.DataFrame | None, str]:
    """A fit's coefficients, their intervals (None when it has none) and why it has none, for :func:`coef_plot`."""
    if not _is_dpstats(res):
        params, ci = statsmodels_coefficients(res, alpha)
        return params, pd.DataFrame(ci, index=params.index), ""
    if res.inference_available:
        return res.params, res.conf_int(alpha), ""
    return res.params, None, "inference withheld" if res._withheld else "no intervals"


def _title(fits: Mapping[str, Any]) -> str:
    """The formula of the first dpstats fit (else of the first statsmodels fit made from a formula)."""
    for res in fits.values():
        if _is_dpstats(res):
            return str(res.formula)
    for res in fits.values():
        formula = getattr(res.model, "formula", None)
        if isinstance(formula, str):
            return formula
    return ""


def coef_plot(results: Any, *, alpha: float = 0.05, reference: pd.Series | Mapping[str, float] | None = None,
              reference_label: str = "reference", terms: Sequence[str] | Callable[[str], bool] | None = None,
              drop_intercept: bool = False, short_names: bool = True, ax: Any = None,
              title: str | None = None) -> Any:
    """Dot-and-whisker plot of released coefficients, one row per coefficient.

    Parameters
    ----------
    results : DPRegressionResults or statsmodels results, a list or a dict of str to them
        One fit, or several to compare (drawn side by side in each row): a
        list, labelled ``(1)``, ``(2)``, ... with each fit's method and
        epsilon, or a mapping ``{label: results}``.  A statsmodels results
        object (say ``smf.ols(formula, public_df).fit()``, the non-private
        fit a DP fit is compared with) is drawn with its own
        ``conf_int(alpha)`` and labelled as not private; its coefficients
        are matched to the others' by name.
    alpha : float
        Intervals are ``conf_int(alpha)`` where the method provides them;
        a fit without private intervals is drawn as points only and its legend
        entry says so.
    reference : pandas.Series or dict of str to float, optional
        Coefficients to mark beside the estimates (the truth of a simulation,
        or OLS on public data), indexed by coefficient name; names not in it
        are skipped.
    reference_label : str
        Legend label of ``reference``.
    terms : sequence of str or callable, optional
        The coefficients to show: a list of names (in that order) or a
        predicate on the name.  Default: all, in the design's order.
    drop_intercept : bool
        Leave out ``Intercept`` (its scale often dwarfs the others).
    short_names : bool
        Label factor columns as ``cut: Good`` instead of patsy's
        ``C(cut, Treatment('Ideal'))[T.Good]``.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    title : str, optional
        Axes title (default: the formula of the first dpstats fit).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed (``pip install "dpstats[plot]"``).
    dpstats.errors.InvalidArgumentError
        No fit, terms that are not coefficients, or no coefficient left (a ``ValueError``).
    dpstats.errors.DataTypeError
        Something other than dpstats fits and statsmodels results (a ``TypeError``).

    Examples
    --------
    >>> import dpstats
    >>> from dpstats.plotting import coef_plot
    >>> df = dpstats.datasets.load("diamonds")
    >>> res = dpstats.dp_ols("np.log(price) ~ np.log(carat) + C(cut, Treatment('Ideal'))", df, epsilon=1.0,
    ...                      delta=1e-6, bounds={"carat": (0.2, 5.01), "price": (326, 18823)}, random_state=0)
    >>> ax = coef_plot(res, drop_intercept=True)
    >>> len(ax.get_yticklabels())
    5
    """
    plt = pyplot()
    fits = _labelled_fits(results)
    if not fits:
        raise InvalidArgumentError("coef_plot needs at least one fit")
    coefficients = {label: _coefficients(res, alpha) for label, res in fits.items()}
    names: list[str] = []
    for params, _, _ in coefficients.values():
        names += [c for c in params.index if c not in names]
    if terms is None:
        chosen = names
    elif callable(terms):
        chosen = [c for c in names if terms(c)]
    else:
        unknown = [t for t in terms if t not in names]
        if unknown:
            raise InvalidArgumentError(f"terms not among the coefficients: {', '.join(map(str, unknown))}")
        chosen = list(terms)
    if drop_intercept:
        chosen = [c for c in chosen if c != "Intercept"]
    if not chosen:
        raise InvalidArgumentError("no coefficient left to plot")

    if ax is None:
        # the tight layout engine re-fits the axes at every draw, so long coefficient labels stay inside the
        # saved figure (and a later fig.tight_layout() call does not switch engines)
        _, ax = plt.subplots(figsize=(7.0, 0.9 + 0.32 * len(chosen) * max(1, 0.6 * len(fits))),
                             layout="tight")
    rows = np.arange(len(chosen))[::-1].astype(float)  # first coefficient at the top
    k = len(fits)
    offsets = (np.arange(k) - (k - 1) / 2) * (0.6 / max(k, 1)) if k > 1 else np.zeros(1)
    for j, (label, (params, intervals, why)) in enumerate(coefficients.items()):
        present = [c for c in chosen if c in params.index]
        pos = rows[[chosen.index(c) for c in present]] - offsets[j]
        est = params.loc[present].to_numpy(dtype=float)
        color = f"C{j}"
        if intervals is not None:
            ci = intervals.loc[present]
            lo, hi = ci[0].to_numpy(dtype=float), ci[1].to_numpy(dtype=float)
            # an interval need not contain its estimate (basic bootstrap intervals correct for bias):
            # draw the interval as a segment and the estimate as a point, not as +- error bars
            ax.hlines(pos, lo, hi, color=color, linewidth=1.6, alpha=0.8)
            ax.plot(est, pos, "o", color=color, label=f"{label}: {100 * (1 - alpha):g}% interval")
        else:
            ax.plot(est, pos, "o", color=color, label=f"{label} ({why})")
    if reference is not None:
        ref = pd.Series(reference, dtype=float)
        present = [c for c in chosen if c in ref.index]
        ax.plot(ref.loc[present].to_numpy(), rows[[chosen.index(c) for c in present]], "x", color="black",
                markersize=7, label=reference_label)
    ax.axvline(0.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_yticks(rows, [short_name(str(c)) if short_names else str(c) for c in chosen])
    ax.set_ylim(rows.min() - 0.7, rows.max() + 0.7)
    ax.set_xlabel("coefficient")
    ax.set_title(textwrap.fill(_title(fits), 70) if title is None else title, fontsize="medium")
    ax.legend(fontsize="small", loc="best")
    return ax


def privacy_utility(comparison: Any, metric: str | None = None, *, reference: float | None = None,
                    reference_label: str = "non-private reference", ax: Any = None) -> Any:
    """The privacy-utility curve of a :func:`dpstats.compare` study.

    Draws :meth:`dpstats.Comparison.plot` (median and interquartile band of
    ``metric`` against epsilon, one curve per method) and, if given, a
    horizontal line at ``reference`` (for instance the non-private R^2 of OLS
    on the same public data).

    Parameters
    ----------
    comparison : Comparison
        The study.
    metric : {"r2", "coef_error"}, optional
        The column to plot (default: the study's metric).
    reference : float, optional
        A horizontal reference line.
    reference_label : str
        Its legend label.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed.
    ValueError
        An unknown metric.

    Examples
    --------
    >>> import dpstats
    >>> from dpstats.plotting import privacy_utility
    >>> df = dpstats.datasets.load("diamonds")
    >>> study = dpstats.compare("np.log(price) ~ np.log(carat)", df, methods=["ssp"], epsilons=[0.5, 1.0],
    ...                         trials=2, data_are_public=True, bounds={"carat": (0.2, 5.01), "price": (326, 18823)},
    ...                         random_state=0, progress=False, verbose=False)
    >>> ax = privacy_utility(study, reference=0.93)
    >>> ax.get_xlabel()
    'epsilon'
    """
    ax = comparison.plot(metric=metric, ax=ax)
    if reference is not None:
        ax.axhline(float(reference), color="black", linestyle="--", linewidth=1.0, label=reference_label)
        ax.legend(fontsize="small")
    return ax


def error_vs_n(ns: Sequence[float], errors: Mapping[str, Any], *, sigma: float = 1.0, d: int | None = None,
               epsilon: float | None = None, delta: float | None = None, sparsity: int | None = None,
               method: str | None = None, ax: Any = None, ylabel: str | None = None) -> Any:
    """Measured errors against n (log-log), optionally beside the theory's bounds.

    Parameters
    ----------
    ns : sequence of float
        The sample sizes measured.
    errors : dict of str to array_like
        ``{label: values}``, where values has one entry per n, or one row per
        n with one column per repetition (then the median is drawn with an
        interquartile band).  NaN entries (say, refused fits) are ignored; a
        label with none finite stays in the legend, marked "(no finite value:
        nothing drawn)".
    sigma : float
        The noise standard deviation; errors are divided by it, so that they
        are in the units of the bounds.
    d : int, optional
        Design columns; with ``epsilon`` and ``delta``, the minimax lower
        bound (Thm 18, or Thm 16 with ``sparsity``) and the upper bound of
        ``method`` (where one is known) are drawn first by
        :func:`dpstats.plot_plan`.  The bounds hold up to unknown constants
        (set to 1): compare slopes and orders of magnitude, not levels.
    epsilon, delta : float, optional
        The budget of the bounds.
    sparsity : int, optional
        The sparsity of the sparse bounds.
    method : str, optional
        The method whose upper bound is drawn.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (default: a new figure).
    ylabel : str, optional
        Label of the y axis.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ImportError
        matplotlib is not installed.
    dpstats.errors.InvalidArgumentError
        No positive sample sizes, a non-positive sigma, or errors of the wrong shape (a ``ValueError``).

    Examples
    --------
    >>> from dpstats.plotting import error_vs_n
    >>> ax = error_vs_n([1000, 10000], {"ssp": [0.5, 0.1]}, d=4, epsilon=1.0, delta=1e-6)
    >>> ax.get_xscale()
    'log'
    """
    plt = pyplot()
    n_arr = np.asarray(ns, dtype=float)
    if n_arr.ndim != 1 or n_arr.size == 0 or not np.all(n_arr > 0):
        raise InvalidArgumentError(f"ns must be a non-empty sequence of positive sample sizes, got {shown(ns)}")
    if not sigma > 0:
        raise InvalidArgumentError(f"sigma must be positive, got {shown(sigma)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.8, 4.6), layout="tight")
    theory = d is not None and epsilon is not None and delta is not None
    if theory:
        from dpstats.theory import plot_plan  # noqa: PLC0415

        plot_plan(int(d), [float(epsilon)], float(delta), sparsity=sparsity, method=method,  # type: ignore[arg-type]
                  n_range=(float(n_arr.min()) / 1.5, float(n_arr.max()) * 1.5), ax=ax)
    markers = "osD^v<>ph"
    for j, (label, values) in enumerate(errors.items()):
        vals = np.asarray(values, dtype=float) / sigma
        if vals.ndim == 1:
            vals = vals[:, None]
        if vals.shape[0] != n_arr.size:
            raise InvalidArgumentError(f"errors[{label!r}] has {vals.shape[0]} rows; expected one per n ({n_arr.size})")
        with np.errstate(all="ignore"):
            finite = np.where(np.isfinite(vals), vals, np.nan)
            ok = ~np.all(np.isnan(finite), axis=1)
            med = np.full(n_arr.size, np.nan)
            med[ok] = np.nanmedian(finite[ok], axis=1)
        q1 = q3 = None
        if finite.shape[1] > 1 and ok.any():
            q1, q3 = np.nanquantile(finite[ok], [0.25, 0.75], axis=1)
        median_band(ax, n_arr[ok], med[ok], q1, q3, marker=markers[j % len(markers)],
                    color=f"C{(j + 3) % 10}" if theory else f"C{j % 10}", linewidth=1.4,
                    label=f"{label} (measured)" if ok.any() else f"{label} (no finite value: nothing drawn)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel(ylabel or ("error / sigma" + (" (bounds up to constants)" if theory else "")))
    ax.legend(fontsize="small")
    return ax
