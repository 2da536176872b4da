"""``dpstats.compare``: privacy-utility curves of several methods on one public data set.

A DP researcher chooses a method by running the candidates on the same data
at the same budgets, many times (the outputs are random), and looking at the
spread of the error against epsilon.  That study fits the same rows
``len(methods) * len(epsilons) * trials`` times: by composition its privacy
costs add up to many times any single budget, and its score, the in-sample
R^2, is computed from the data without noise.  It is therefore only
legitimate on public or synthetic data, and :func:`compare` refuses to run
unless the caller says so with ``data_are_public=True``; it prints the total
spend and returns it.
"""

from __future__ import annotations

import html
import math
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpstats.api import dp_ols
from dpstats.errors import DPStatsError, InvalidArgumentError, MethodOptionError, PTRFailure, PublicDataRequiredError
from dpstats.formula import build_design
from dpstats.methods.registry import available_methods, get_method
from dpstats.plotting import median_band, pyplot
from dpstats.privacy.mechanisms import spawn_generators
from dpstats.validation import DEFAULT_RESCALE, check_epsilon_grid, check_rescale, shown

__all__ = ["compare", "Comparison", "COLUMNS"]

#: Columns of the ``frame`` of a :class:`Comparison`, one row per fit.
COLUMNS = ["method", "epsilon", "trial", "r2", "coef_error", "status", "seconds", "epsilon_spent", "delta_spent",
           "message"]
_METRICS = ("r2", "coef_error")
#: what each metric is, in words (the summary's column label and the plot's axis)
_METRIC_LABELS = {"r2": "in-sample R^2", "coef_error": "||b - beta||_2"}
_METRIC_PLOT_LABELS = {"r2": "in-sample $R^2$", "coef_error": r"$\|b - \beta\|_2$"}  # matplotlib's mathtext
_DEFAULT_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0)


@dataclass
class Comparison:
    """A privacy-utility study of several methods on one public data set, as :func:`compare` returns it.

    Attributes
    ----------
    frame : pandas.DataFrame
        Tidy results, one row per fit, columns ``COLUMNS``: ``method``,
        ``epsilon`` (the budget of that fit), ``trial``, ``r2`` (in-sample R^2
        on the given data; NaN when the fit failed or its sums of squares
        overflow the float range), ``coef_error`` (L2
        distance to ``truth``; NaN without a truth), ``status`` (``"ok"``,
        ``"ptr_failure"`` or the error class name), ``seconds`` (wall time of
        the fit), the fit's own ``epsilon_spent`` / ``delta_spent`` (a
        failure after spending, such as a PTR refusal, still spends) and
        ``message``: why a fit that is not ``"ok"`` failed, the error's
        message (built from public facts only; ``""`` for a released fit).
    metric : str
        The default column of :meth:`summary` and :meth:`plot`: ``"r2"`` or ``"coef_error"``.
    total_epsilon, total_delta : float
        The whole study's spend on this data set by basic composition (sums
        over fits): what it would cost if the data were private.

    See Also
    --------
    compare : Runs the study.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("diamonds")
    >>> study = dpstats.compare("np.log(price) ~ np.log(carat)", df, methods=["ssp", "adassp"],
    ...                         epsilons=[0.5, 1.0], trials=2, data_are_public=True,
    ...                         bounds={"carat": (0.2, 5.01), "price": (326, 18823)}, random_state=0,
    ...                         progress=False, verbose=False)
    >>> study.frame.shape
    (8, 10)
    >>> study.summary().columns.tolist()
    ['median', 'q25', 'q75', 'ok', 'not_ok', 'median_seconds']
    """

    frame: pd.DataFrame
    metric: str
    total_epsilon: float
    total_delta: float

    def summary(self, metric: str | None = None) -> pd.DataFrame:
        """Median and quartiles of ``metric`` per method and epsilon, over the successful trials.

        Parameters
        ----------
        metric : {"r2", "coef_error"}, optional
            The column to summarise (default: the study's ``metric``).

        Returns
        -------
        pandas.DataFrame
            Indexed by (method, epsilon); columns ``median``, ``q25``,
            ``q75`` (of the metric, which the columns' name says, printed
            above the index: e.g. ``"metric: in-sample R^2 (r2)"``), ``ok``
            (fraction of trials that released an estimate), ``not_ok`` (why
            the others did not: each status of ``frame`` with its count, e.g.
            ``"ptr_failure: 3"``; empty when every trial released) and
            ``median_seconds``.

        Raises
        ------
        ValueError
            An unknown metric, or ``"coef_error"`` without a truth.
        """
        col = self._metric(metric)
        grouped = self.frame.groupby(["method", "epsilon"], sort=True)
        out = grouped[col].quantile([0.5, 0.25, 0.75]).unstack()
        out.columns = ["median", "q25", "q75"]
        out["ok"] = grouped["status"].apply(lambda s: float(np.mean(s == "ok")))
        out["not_ok"] = grouped["status"].apply(
            lambda s: ", ".join(f"{status}: {count}" for status, count in s[s != "ok"].value_counts().items()))
        out["median_seconds"] = grouped["seconds"].median()
        out.columns.name = f"metric: {_METRIC_LABELS[col]} ({col})"
        return out

    def plot(self, metric: str | None = None, ax: Any = None) -> Any:
        """Median (line) and interquartile band of ``metric`` against epsilon (log axis), one curve per method.

        Where every trial of a method failed at some epsilon nothing is drawn there, and the method's legend
        entry says so (``"theilsen (no fit succeeded)"``, ``"tukey (no fit at epsilon=0.5)"``).

        Parameters
        ----------
        metric : {"r2", "coef_error"}, optional
            The column to plot (default: the study's ``metric``).
        ax : matplotlib.axes.Axes, optional
            Axes to draw on (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.

        Raises
        ------
        ImportError
            matplotlib is not installed (``pip install "dpstats[plot]"``).
        ValueError
            An unknown metric, or ``"coef_error"`` without a truth.
        """
        col = self._metric(metric)
        if ax is None:
            _, ax = pyplot("Comparison.plot").subplots(figsize=(6, 4))
        table = self.summary(col)
        for method in table.index.get_level_values("method").unique():
            rows = table.loc[method]
            median_band(ax, rows.index.to_numpy(dtype=float), rows["median"], rows["q25"], rows["q75"], marker="o",
                        label=_plot_label(str(method), rows["median"]))
        ax.set_xscale("log")
        grid = np.unique(table.index.get_level_values("epsilon").to_numpy(dtype=float))
        ax.set_xticks(grid, [f"{e:g}" for e in grid])
        ax.minorticks_off()
        ax.set_xlabel("epsilon")
        ax.set_ylabel(_METRIC_PLOT_LABELS[col])
        ax.set_title("median and interquartile range over trials")
        ax.legend()
        return ax

    def _metric(self, metric: str | None) -> str:
        col = self.metric if metric is None else metric
        if col not in _METRICS:
            raise InvalidArgumentError(f"metric must be one of {', '.join(_METRICS)}, got {shown(col)}")
        if col == "coef_error" and self.frame["coef_error"].isna().all():
            raise InvalidArgumentError("coef_error needs compare(..., truth=...): no fit has a coefficient error")
        return col

    def __repr__(self) -> str:
        return (f"<Comparison of {self.frame['method'].nunique()} methods, {len(self.frame)} fits; total spend "
                f"epsilon={self.total_epsilon:.4g}, delta={self.total_delta:.3g} on public data>\n"
                f"{self.summary()}")

    def _repr_html_(self) -> str:
        """The same header and summary as :meth:`__repr__`, as HTML for Jupyter: every column of the summary shown
        (the text form is cut to the display width by pandas), names escaped."""
        head = (f"Comparison of {self.frame['method'].nunique()} methods, {len(self.frame)} fits; total spend "
                f"epsilon={self.total_epsilon:.4g}, delta={self.total_delta:.3g} on public data")
        table = self.summary()
        with pd.option_context("display.max_columns", None, "display.max_rows", None):
            body = table.to_html(escape=True)
        return f"<p>{html.escape(head)}; {html.escape(str(table.columns.name))}</p>{body}"


def compare(
    formula: str,
    data: Any,
    methods: Sequence[str] | None = None,
    epsilons: float | Sequence[float] = _DEFAULT_EPSILONS,
    delta: float = 1e-6,
    trials: int = 10,
    metric: str = "r2",
    *,
    data_are_public: bool = False,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    truth: pd.Series | Mapping[str, float] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    method_options: Mapping[str, Mapping[str, Any]] | None = None,
    random_state: int | np.random.Generator | np.random.SeedSequence | None = None,
    progress: bool = True,
    verbose: bool = True,
    missing: str = "raise",
    rescale: bool | str = DEFAULT_RESCALE,
) -> Comparison:
    """Run each method over a grid of epsilon with repeated trials on one public data set.

    Parameters
    ----------
    formula : str
        As for :func:`dpstats.dp_ols`; the same design is used by every fit.
    data : pandas.DataFrame
        The public data set (in memory).
    methods : sequence of str, optional
        Registered private method names (default: every private method in
        :func:`dpstats.available_methods` but ``lasso``, which cannot fit
        without ``sparsity=``: it joins the default when ``method_options``
        names it, e.g. ``method_options={"lasso": {"sparsity": 5}}``).  A
        method that cannot run (say, it needs bounds that were not given)
        shows its error class in ``status`` and why in ``message``.
    epsilons : float or sequence of float
        The budgets to try; each method is fitted ``trials`` times at each.
        A single number is a grid of one.  Each is checked as
        :func:`dpstats.dp_ols` checks its epsilon (a finite number > 0; a
        string is refused), before any fit.
    delta : float
        The delta of every fit, checked as :func:`dpstats.dp_ols` checks it.
    trials : int
        Fits per method and epsilon (the outputs are random).
    metric : {"r2", "coef_error"}
        The default of :meth:`Comparison.summary` and :meth:`Comparison.plot`.
    data_are_public : bool
        Must be ``True``: the study spends the budget many times over on the
        same rows and scores the fits with the non-private in-sample R^2,
        which is only legitimate for public or synthetic data.
    bounds : dict of str to (float, float), optional
        As for :func:`dpstats.dp_ols`.
    truth : pandas.Series or dict of str to float, optional
        True coefficients (synthetic data), indexed by the design column
        names; fills ``coef_error`` = ||b - truth||_2.
    levels : dict of str to list, optional
        As for :func:`dpstats.dp_ols`.
    method_options : dict of str to dict, optional
        Options per method, e.g. ``{"dpsgd": {"epochs": 5}}``.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        What :func:`dpstats.dp_ols` accepts: an int (or a Generator or
        SeedSequence, from which one seed is drawn) makes the whole study
        reproducible (one child seed per fit); ``None`` uses fresh OS entropy.
    progress : bool
        Show a tqdm progress bar when tqdm is installed.
    verbose : bool
        Print the number of fits and the total spend they represent.
    missing : {"raise", "drop"}
        As for :func:`dpstats.dp_ols`: refuse rows with a missing value, or
        let every fit take them as public null rows (a method that cannot
        shows ``InvalidArgumentError`` in ``status``); the in-sample R^2 is
        then that of the complete rows.
    rescale : "centred" (default), True or False
        As for :func:`dpstats.dp_ols`: the public rescaling of every fit
        (the coefficients are scored in the units of the formula's columns
        whatever it is); an invalid value is refused before any fit.

    Returns
    -------
    Comparison
        ``.frame`` (tidy, one row per fit), ``.summary()``, ``.plot()``,
        ``.total_epsilon`` and ``.total_delta``.

    Raises
    ------
    PublicDataRequiredError
        Unless ``data_are_public is True``; nothing is fitted.
    ValueError
        An unknown metric, an empty grid of epsilons, a bad number of
        trials, methods that are not a name or a list of names, a
        non-private method, options that are not a mapping per method or
        for a method not compared, a random_state that
        :func:`dpstats.dp_ols` would refuse, or a truth that is not numbers
        indexed by the design columns, or a ``rescale`` that
        :func:`dpstats.dp_ols` refuses.
    InvalidPrivacyParameterError
        An epsilon of the grid or the delta that :func:`dpstats.dp_ols` would
        refuse, or an infinite epsilon; nothing is fitted.
    UnknownMethodError
        A method that is not registered.
    MissingDataError
        A variable of the formula has a missing value and ``missing="raise"``.

    Warns
    -----
    Warning
        A warning of the fits (DP-SGD's ``UnscaledFitWarning`` without
        bounds, say) is told once for the study, of its own category, with
        the fits that gave it appended ("[compare: in 6 of dpsgd's 6 fits]");
        the caller's warning filters apply to the fits and to it.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("diamonds")
    >>> study = dpstats.compare("np.log(price) ~ np.log(carat)", df, methods=["ssp", "adassp"],
    ...                         epsilons=[0.5, 1.0], trials=2, data_are_public=True,
    ...                         bounds={"carat": (0.2, 5.01), "price": (326, 18823)}, random_state=0,
    ...                         progress=False)  # doctest: +ELLIPSIS
    dpstats.compare: 8 fits on the same data (data_are_public=True); by basic composition they spend up to ...
    dpstats.compare: spent epsilon=6, delta=8e-06 on this data set (sum over fits)
    >>> bool(study.frame["status"].eq("ok").all())
    True
    """
    if data_are_public is not True:
        raise PublicDataRequiredError(
            "compare() fits the same data len(methods) * len(epsilons) * trials times, so the privacy costs add "
            "up to many times any single budget, and it scores every fit with the in-sample R^2, computed from "
            "the data without noise. Run it only on public or synthetic data, and say so with "
            "data_are_public=True; for private data, fit once with dpstats.dp_ols.")
    if metric not in _METRICS:
        raise InvalidArgumentError(f"metric must be one of {', '.join(_METRICS)}, got {shown(metric)}")
    if metric == "coef_error" and truth is None:
        raise InvalidArgumentError("metric='coef_error' needs truth= (the true coefficients of synthetic data)")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise InvalidArgumentError(f"trials must be a positive integer, got {shown(trials)}")
    eps_grid, delta = check_epsilon_grid(epsilons, delta)
    check_rescale(rescale)  # refused here, not once per fit in ``status``
    opts = _method_options(method_options)
    names = _methods(methods, opts)
    n_fits = len(names) * len(eps_grid) * trials
    try:  # dp_ols's own seed check (make_rng), before anything is fitted
        generators = spawn_generators(random_state, n_fits)
    except MethodOptionError as exc:
        raise InvalidArgumentError(f"{exc} (one seed for the whole study)") from None
    unknown = sorted(set(opts) - set(names))
    if unknown:
        raise InvalidArgumentError(f"method_options names methods that are not compared: {', '.join(unknown)}")

    design = build_design(formula, data, bounds=bounds, levels=levels, missing=missing)
    X, y = design.X, design.y
    with np.errstate(all="ignore"):  # a value near the largest float overflows the sums: R^2 is then NaN, silently
        sst = float(np.sum((y - y.mean()) ** 2))
    truth_vec = _truth_vector(truth, design.column_names)

    if verbose:
        print(f"dpstats.compare: {n_fits} fits on the same data (data_are_public=True); by basic composition they "
              f"spend up to epsilon={trials * len(names) * sum(eps_grid):.4g}, "
              f"delta={n_fits * delta:.3g} in total")
    bar = _progress(n_fits, progress)
    rows = []
    k = 0
    # the warnings of the fits, each told once for the study with the fits that gave it (one per fit was the same
    # text a hundred times over a grid of five budgets and twenty trials)
    told: dict[tuple[type[Warning], str], dict[str, int]] = {}
    try:  # the bar is closed however the loop ends (an interrupted notebook cell left it open and unfinished)
        for name in names:
            for eps in eps_grid:
                for trial in range(trials):
                    rng = generators[k]
                    k += 1
                    with warnings.catch_warnings(record=True) as caught:  # the caller's filters still apply
                        rows.append(_one_fit(formula, data, name, eps, delta, bounds, levels,
                                             {"missing": missing, "rescale": rescale, **opts.get(name, {})}, rng, X,
                                             y, sst, truth_vec, trial))
                    for key in dict.fromkeys((w.category, str(w.message)) for w in caught):
                        per_method = told.setdefault(key, {})
                        per_method[name] = per_method.get(name, 0) + 1
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    for (category, text), per_method in told.items():
        fits = ", ".join(f"{count} of {name}'s {len(eps_grid) * trials} fits" for name, count in per_method.items())
        warnings.warn(f"{text} [compare: in {fits}]", category, stacklevel=2)
    frame = pd.DataFrame(rows, columns=COLUMNS)
    result = Comparison(frame=frame, metric=metric, total_epsilon=float(frame["epsilon_spent"].sum()),
                        total_delta=float(frame["delta_spent"].sum()))
    if verbose:
        print(f"dpstats.compare: spent epsilon={result.total_epsilon:.4g}, delta={result.total_delta:.3g} on this "
              "data set (sum over fits)")
    return result


#: private methods that cannot fit without an option of their own, left out of the default study unless
#: ``method_options`` names them
_NEED_OPTIONS = frozenset({"lasso"})  # sparsity=


def _methods(methods: Sequence[str] | None, options: Mapping[str, Any]) -> list[str]:
    if methods is None:
        return sorted(name for name, spec in available_methods().items()
                      if spec.private and (name not in _NEED_OPTIONS or name in options))
    if isinstance(methods, str):
        methods = [methods]
    if not isinstance(methods, Sequence):
        raise InvalidArgumentError(f"methods must be a method name or a list of names, e.g. methods=['ssp', "
                                   f"'adassp'], got {type(methods).__name__}")
    names = list(dict.fromkeys(methods))
    for name in names:
        if not get_method(name).private:
            raise InvalidArgumentError(
                f"method '{name}' is not private; compare() studies private methods only: drop it from methods=. "
                f"The non-private reference of the r2 metric (its ceiling: least squares' in-sample R^2) is "
                f"dpstats.dp_ols(formula, data, float('inf'), method='{name}').rsquared")
    if not names:
        raise InvalidArgumentError("methods must name at least one method")
    return names


def _method_options(method_options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, dict[str, Any]]:
    """The options per method as dicts, or a typed refusal naming the type that is not a mapping."""
    if method_options is None:
        return {}
    example = "e.g. method_options={'dpsgd': {'epochs': 5}}"
    if not isinstance(method_options, Mapping):
        raise InvalidArgumentError(f"method_options must be a mapping of method names to options, {example}; got "
                                   f"{type(method_options).__name__}")
    bad = [str(k) for k, v in method_options.items() if not isinstance(v, Mapping)]
    if bad:
        raise InvalidArgumentError(f"method_options must map each method to a mapping of options, {example}; not a "
                                   f"mapping for: {', '.join(bad)}")
    return {k: dict(v) for k, v in method_options.items()}


def _truth_vector(truth: pd.Series | Mapping[str, float] | None, columns: list[str]) -> np.ndarray | None:
    if truth is None:
        return None
    try:
        series = pd.Series(truth, dtype=float)
    except (TypeError, ValueError):
        raise InvalidArgumentError("truth must map each design column to a number (a pandas Series or a dict of "
                                   "floats)") from None
    missing = [c for c in columns if c not in series.index]
    extra = [c for c in series.index if c not in columns]
    if missing or extra:
        raise InvalidArgumentError(
            f"truth must be indexed by the design columns {columns}; missing {missing}, unknown {extra}")
    return series.loc[columns].to_numpy()


def _plot_label(method: str, median: pd.Series) -> str:
    """The legend entry of a method's curve, saying at which epsilon no trial gave a value (nothing is drawn there).

    Parameters
    ----------
    method : str
        The method's name.
    median : pandas.Series
        Its median metric, indexed by epsilon (NaN where every trial failed).

    Returns
    -------
    str
        ``method``, with ``(no fit succeeded)`` when no point is drawn, or ``(no fit at epsilon=...)`` naming the
        values of epsilon at which none is.
    """
    missing = median.index[median.isna().to_numpy()]
    if len(missing) == len(median):
        return f"{method} (no fit succeeded)"
    if len(missing):
        return f"{method} (no fit at epsilon={', '.join(f'{float(e):g}' for e in missing)})"
    return method


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415  (optional dependency)
    except ImportError:
        return None
    return tqdm(total=total, desc="dpstats.compare", unit="fit")


def _one_fit(formula: str, data: Any, method: str, eps: float, delta: float,
             bounds: Mapping[str, tuple[float, float]] | None, levels: Mapping[str, Sequence[Any]] | None,
             options: dict[str, Any], rng: np.random.Generator, X: np.ndarray, y: np.ndarray, sst: float,
             truth: np.ndarray | None, trial: int) -> list[Any]:
    start = time.perf_counter()
    try:
        res = dp_ols(formula, data, epsilon=eps, delta=delta, method=method, bounds=bounds, levels=levels,
                     random_state=rng, **options)
    except DPStatsError as exc:
        seconds = time.perf_counter() - start
        spent = exc.privacy_spent
        status = "ptr_failure" if isinstance(exc, PTRFailure) else type(exc).__name__
        return [method, eps, trial, math.nan, math.nan, status, seconds, float(spent[0]), float(spent[1]), str(exc)]
    seconds = time.perf_counter() - start
    b = res.params.to_numpy()
    with np.errstate(all="ignore"):  # overflow (a value near the largest float) gives NaN below, not a numpy warning
        resid = y - X @ b
        r2 = 1.0 - float(resid @ resid) / sst if 0 < sst < math.inf else math.nan
    r2 = r2 if math.isfinite(r2) else math.nan
    err = float(np.linalg.norm(b - truth)) if truth is not None else math.nan
    return [method, eps, trial, r2, err, "ok", seconds, res.privacy.epsilon_spent, res.privacy.delta_spent, ""]
