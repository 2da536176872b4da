"""What the minimax theorems say about the error at this n, d, epsilon, delta.

Every rate is in units of the noise standard deviation sigma and holds up to
absolute constants (the papers do not give them): it tells orders of magnitude
and which term dominates, not exact errors.  Each bound is split into a
statistical (sampling) term and a privacy term (:mod:`dpstats.rates`).

Lower bounds (over all (epsilon, delta)-DP estimators; Cai, Wang & Zhang,
"The cost of privacy", Ann. Statist. 2021, seed numbering):

* Thm 18 (classical): sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1), when
  eps = O(1), n^-1 exp(-3 eps n/2) <= delta <= n^-(1+tau) for some tau > 0,
  and sqrt(d log(1/delta))/(n eps) = O(1);
* Thm 16 (s-sparse): sqrt(s log d / n) + min(s log(d/s) sqrt(log(1/delta))/(n eps), 1),
  with the same delta range and sqrt(s log(1/delta)) log(d/s)/(n eps) = O(1).

Upper bounds: each method registers its own rate with the method
(``MethodSpec.theory_rate``, defined in the method's module), or says why
there is none; this module reads the registry.  A rate that a fit's
inference releases make smaller is evaluated at the budget its point
estimate actually spends (:func:`point_estimate_epsilon`).

Conditions stated as "= O(1)" are checked with the constant 1; a failed
condition makes the bound "not applicable" and names the condition.
:func:`plan` inverts the bounds (the n needed for a target error) and
:func:`plot_plan` draws them (matplotlib, the ``plot`` extra).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from statsmodels.iolib.table import SimpleTable

from dpstats.errors import InvalidArgumentError, InvalidPrivacyParameterError, UnknownMethodError
from dpstats.methods.registry import MethodSpec, available_methods, get_method
from dpstats.privacy.calibration import gaussian_epsilon, gaussian_mu
from dpstats.rates import (
    CAI, MODEL, SPARSE_MODEL, Rate, RateBound, UpperRate, classical_conditions, log_inv, no_conditions,
    sparse_conditions,
)

__all__ = ["RateBound", "ErrorBounds", "classical_lower_bound", "sparse_lower_bound", "error_bounds", "plan",
           "plot_plan", "point_estimate_epsilon", "CLASSICAL_LOWER", "SPARSE_LOWER"]

_GUARANTEES = ("worst-case", "conditional")

CLASSICAL_LOWER = Rate(
    "lower", "minimax lower bound (classical)", f"{CAI} Thm 18",
    "sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1)",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d * math.sqrt(log_inv(dl)) / (n * e),
    classical_conditions, (MODEL, "epsilon = O(1)"), n_min=lambda d, s: 1.0, capped=True)

SPARSE_LOWER = Rate(
    "lower", "minimax lower bound (s-sparse)", f"{CAI} Thm 16",
    "sqrt(s log d / n) + min(s log(d/s) sqrt(log(1/delta))/(n eps), 1)",
    lambda n, d, s: math.sqrt(s * math.log(d) / n),
    lambda n, d, e, dl, s: s * math.log(d / s) * math.sqrt(log_inv(dl)) / (n * e),
    sparse_conditions, (SPARSE_MODEL, "epsilon = O(1)"), n_min=lambda d, s: 1.0, capped=True, needs_sparsity=True)

NON_PRIVATE_LOWER = Rate(
    "lower", "minimax lower bound (no privacy)", "classical minimax rate of linear regression",
    "sqrt(d/n)", lambda n, d, s: math.sqrt(d / n), lambda n, d, e, dl, s: 0.0, no_conditions, (MODEL,),
    n_min=lambda d, s: 1.0)


def upper_rates(spec: MethodSpec) -> list[tuple[str, UpperRate]]:
    """The distinct upper rates a method registers, one per guarantee that selects a different one, with that
    guarantee (its own guarantee first)."""
    if spec.theory_rate is None:
        return []
    out: list[tuple[str, UpperRate]] = []
    for guarantee in dict.fromkeys([spec.guarantee, *_GUARANTEES]):
        upper = spec.theory_rate(guarantee)
        if not any(upper.rate is u.rate and upper.why_none == u.why_none for _, u in out):
            out.append((guarantee, upper))
    return out


def _upper_rates_view() -> dict[str, Rate]:
    """The registered rates by "method" or "method/guarantee" (the keys of the deprecated ``UPPER_RATES``)."""
    out: dict[str, Rate] = {}
    for name, spec in sorted(available_methods().items()):
        rates = [(g, u.rate) for g, u in upper_rates(spec) if u.rate is not None]
        for guarantee, rate in rates:
            out[name if len(rates) == 1 else f"{name}/{guarantee}"] = rate
    return out


def __getattr__(name: str) -> Any:
    if name == "UPPER_RATES":
        warnings.warn("dpstats.theory.UPPER_RATES is deprecated: each method registers its rate as "
                      "MethodSpec.theory_rate (see dpstats.theory.upper_rates)", DeprecationWarning, stacklevel=2)
        return _upper_rates_view()
    raise AttributeError(f"module 'dpstats.theory' has no attribute {name!r}")



def classical_lower_bound(n: int, d: int, epsilon: float, delta: float) -> tuple[float, float]:
    """(statistical, privacy) terms of Cai, Wang & Zhang Thm 18, in units of sigma."""
    rate = NON_PRIVATE_LOWER if math.isinf(epsilon) else CLASSICAL_LOWER
    b = rate.at(n, d, epsilon, delta, 0)
    return b.statistical, b.privacy  # type: ignore[return-value]


def sparse_lower_bound(n: int, d: int, s: int, epsilon: float, delta: float) -> tuple[float, float]:
    """(statistical, privacy) terms of Cai, Wang & Zhang Thm 16, in units of sigma."""
    b = SPARSE_LOWER.at(n, d, epsilon, delta, s)
    return b.statistical, b.privacy  # type: ignore[return-value]


_FMT = dict(
    data_fmts=["%s"], empty_cell="", colwidths=None, colsep="  ", row_pre="", row_post="",
    table_dec_above="=", table_dec_below="=", header_dec_below="-", header_fmt="%s",
    stub_fmt="%s", title_align="c", header_align="r", data_aligns="r", stubs_align="l", fmt="txt",
)


def _cell(x: float | None, ok: bool) -> str:
    return f"{x:.3g}" if (ok and x is not None) else "n/a"


@dataclass(frozen=True)
class ErrorBounds:
    """Theory summary of one fit, in units of sigma, up to constants.

    Attributes
    ----------
    method, n, d, epsilon, delta, sparsity:
        The fit (sparsity: the s used for the sparse bounds, or None).
    lower:
        The minimax lower bound (Thm 16 when ``sparsity`` is given, else
        Thm 18; the non-private rate when epsilon is infinite).
    upper:
        The method's own rate, or None (``upper_note`` says why).
    upper_note:
        Why there is no upper bound, or at which budget it was evaluated
        when that is not the fit's (noisy_ols with inference).
    """

    method: str
    n: int
    d: int
    epsilon: float
    delta: float
    sparsity: int | None
    lower: RateBound
    upper: RateBound | None
    upper_note: str = ""

    # -- the lower bound's terms, under the names earlier versions used --------------
    @property
    def statistical_term(self) -> float:
        return float(self.lower.statistical)  # type: ignore[arg-type]

    @property
    def privacy_term(self) -> float:
        return float(self.lower.privacy)  # type: ignore[arg-type]

    @property
    def lower_bound(self) -> float | None:
        """Total of the lower bound, or None when its conditions fail."""
        return self.lower.total if self.lower.applicable else None

    @property
    def upper_bound(self) -> float | None:
        """Total of the method's upper bound, or None (none known, or its conditions fail)."""
        return self.upper.total if (self.upper is not None and self.upper.applicable) else None

    @property
    def lower_bound_source(self) -> str:
        return self.lower.source

    @property
    def upper_bound_source(self) -> str:
        return self.upper.source if self.upper is not None else self.upper_note

    @property
    def dominant(self) -> str:
        """Which term of the lower bound is larger: ``"privacy"`` or ``"sampling"``."""
        return self.lower.dominant

    @property
    def conditions(self) -> tuple[str, ...]:
        """Every failed condition ("Not applicable ...") and assumption ("Assumes ..."), in words."""
        out = [f"Not applicable ({b.source}): {f}" for b in self.bounds() for f in b.failed]
        sources: dict[str, list[str]] = {}
        for b in self.bounds():
            for c in b.caveats:
                sources.setdefault(c, []).append(b.source)
        out += [f"Assumes ({'; '.join(src)}): {c}" for c, src in sources.items()]
        return tuple(out)

    def bounds(self) -> list[RateBound]:
        return [self.lower] + ([self.upper] if self.upper is not None else [])

    def dominance_line(self) -> str:
        """One line: does privacy or sampling dominate at this n, d, epsilon, delta?"""
        where = f"n={self.n}, d={self.d}, epsilon={self.epsilon:.4g}, delta={self.delta:.3g}"
        parts = [f"{b.dominant} dominates the {b.label} (privacy {b.privacy:.3g} vs sampling {b.statistical:.3g})"
                 for b in self.bounds() if b.applicable]
        if not parts:
            return f"At {where} no bound applies (see the failed conditions)."
        return f"At {where}: " + "; ".join(parts) + "."

    def notes(self) -> list[str]:
        """Everything the table does not show: dominance, constants, failed conditions, caveats, missing rate."""
        out = [self.dominance_line(),
               "Rates hold up to absolute constants (units of sigma); they tell orders of magnitude, not exact errors."]
        if self.upper_note:
            out.append(f"Method upper bound: {self.upper_note}")
        out += list(self.conditions)
        if math.isfinite(self.epsilon) and self.epsilon > 1:
            out.append(f"Note: epsilon={self.epsilon:.4g} > 1 is treated as O(1); the constants grow with epsilon")
        return out

    def lines(self) -> list[str]:
        """The whole summary as plain-text lines."""
        out = []
        for b in self.bounds():
            if b.applicable:
                out.append(f"{b.label} ({b.source}): ~ {b.total:.3g} sigma = sampling {b.statistical:.3g} + "
                           f"privacy {b.privacy:.3g}; {b.formula}")
            else:
                out.append(f"{b.label} ({b.source}): not applicable; {b.formula}")
        return out + self.notes()

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def to_frame(self) -> pd.DataFrame:
        """One row per bound: terms (NaN when not applicable), source, formula, failed conditions."""
        rows = [{"bound": b.label, "kind": b.kind, "sampling": b.statistical if b.applicable else np.nan,
                 "privacy": b.privacy if b.applicable else np.nan, "total": b.total if b.applicable else np.nan,
                 "source": b.source, "formula": b.formula, "applicable": b.applicable,
                 "failed": "; ".join(b.failed)} for b in self.bounds()]
        return pd.DataFrame(rows).set_index("bound")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dictionary."""
        return {"method": self.method, "n": self.n, "d": self.d, "epsilon": self.epsilon, "delta": self.delta,
                "sparsity": self.sparsity, "units": "sigma, up to absolute constants",
                "bounds": self.to_frame().reset_index().replace({np.nan: None}).to_dict(orient="records"),
                "upper_note": self.upper_note, "dominance": self.dominance_line()}

    def table(self, esc: Callable[[str], str] = str) -> SimpleTable:
        """The bounds as a statsmodels SimpleTable (for ``DPRegressionResults.summary()``).

        ``esc`` escapes each cell (e.g. for LaTeX).  Columns: sampling and
        privacy terms, total, theorem; "n/a" where a condition fails.
        """
        rows = [[esc(_cell(b.statistical, b.applicable)), esc(_cell(b.privacy, b.applicable)),
                 esc(_cell(b.total, b.applicable)), esc(b.source)] for b in self.bounds()]
        stubs = [esc(("minimax lower bound" if b.kind == "lower" else f"{self.method} upper bound")
                     + ("" if b.applicable else " (n/a)")) for b in self.bounds()]
        return SimpleTable(rows, headers=["sampling", "privacy", "total", "source"], stubs=stubs,
                           title=esc("Error bounds (units of sigma, up to constants)"), txt_fmt=_FMT)


def _lower_rate(epsilon: float, sparsity: int | None) -> Rate:
    if math.isinf(epsilon):
        return NON_PRIVATE_LOWER
    return SPARSE_LOWER if sparsity is not None else CLASSICAL_LOWER


def point_estimate_epsilon(epsilon: float, delta: float, inference_share: float) -> float:
    """The epsilon, at the fit's ``delta``, of a fit's point estimate alone when ``inference_share`` of its
    GDP budget mu^2 went to releases for inference.

    Gaussian releases compose as mu^2 = sum mu_i^2 (Dong, Roth & Su 2022, Cor. 3.3); with
    mu = gaussian_mu(epsilon, delta) the point estimate gets sqrt(1 - share) mu, converted back to epsilon at
    delta (Balle & Wang 2018, Thm 8).  noisy_ols's worst-case fit first sets aside gamma (delta / 10 by
    default) of delta; converting at delta - gamma instead moves the result by about 2e-5 relative at
    delta = 1e-6, far below the rates' unknown constants.
    """
    if not 0.0 <= inference_share < 1.0:
        raise ValueError(f"inference_share must lie in [0, 1), got {inference_share!r}")
    if inference_share == 0.0 or math.isinf(epsilon):
        return epsilon
    return gaussian_epsilon(math.sqrt(1.0 - inference_share) * gaussian_mu(epsilon, delta), delta)



def _spec(method: str | MethodSpec) -> MethodSpec | None:
    if isinstance(method, MethodSpec):
        return method
    try:
        return get_method(method)
    except UnknownMethodError:
        return None


def error_bounds(method: str | MethodSpec, n: int, d: int, epsilon: float, delta: float,
                 sparsity: int | None = None, guarantee: str | None = None, inference: bool = True) -> ErrorBounds:
    """Theory summary for ``method`` (a registered name or spec) at (n, d, epsilon, delta).

    ``sparsity`` switches the lower bound to the sparse Thm 16 (and is needed
    for rates stated for a sparsity, such as the lasso's Thm 17);
    ``guarantee`` selects the method's rate for fits with that guarantee
    (default: the method's own, e.g. noisy_ols's worst-case calibration;
    ``"conditional"`` its paper's).  ``inference`` is the fit's option of that
    name: a rate whose method gives a share of its budget to inference
    releases is then evaluated at the budget left to the point estimate
    (:func:`point_estimate_epsilon`), with ``False`` at the full budget.  The
    lower bound always uses the full (epsilon, delta): it holds for every
    (epsilon, delta)-DP estimator.
    """
    s = int(sparsity) if sparsity is not None else 0
    lower = _lower_rate(epsilon, sparsity).at(n, d, epsilon, delta, s)
    spec = _spec(method)
    name = spec.name if spec is not None else str(method)
    upper: RateBound | None = None
    note = "no proved rate registered for this method"
    registered = spec.theory_rate(guarantee or spec.guarantee) if spec is not None and spec.theory_rate else None
    if registered is not None and registered.rate is not None:
        note = ""
        if math.isfinite(epsilon) or not spec.private:  # type: ignore[union-attr]
            eps_rate, note = _rate_epsilon(registered, epsilon, delta, inference)
            upper = registered.rate.at(n, d, eps_rate, delta, s)
        else:
            note = "no privacy (epsilon = inf): the method's private rate does not apply"
    elif registered is not None and registered.uncovered_source:
        upper = RateBound("upper", f"{name} upper bound", registered.uncovered_source,
                          "none for the implemented estimator", None, None, failed=(registered.why_none,))
        note = ""
    elif registered is not None and registered.why_none:
        note = registered.why_none
    return ErrorBounds(method=name, n=n, d=d, epsilon=epsilon, delta=delta, sparsity=sparsity, lower=lower,
                       upper=upper, upper_note=note)


def _rate_epsilon(upper: UpperRate, epsilon: float, delta: float, inference: bool) -> tuple[float, str]:
    """The epsilon at which a rate is evaluated, and a note when it is not the fit's."""
    share = upper.inference_share
    if not (share > 0 and inference and math.isfinite(epsilon)):
        return epsilon, ""
    eps_point = point_estimate_epsilon(epsilon, delta, share)
    return eps_point, (f"evaluated at the point estimate's budget, epsilon={eps_point:.4g} of {epsilon:.4g} "
                       f"(inference=True gives {share:g} of mu^2 to the releases for standard errors)")

# -- planning: invert the bounds ------------------------------------------------------------------------------

_N_MAX = 1e18


def _smallest_n(pred: Callable[[float], bool], n_min: float) -> float:
    """Smallest integer n >= n_min with pred(n), for a predicate that stays true once true; inf if none <= 1e18."""
    lo = max(1.0, math.ceil(n_min))
    if pred(lo):
        return lo
    hi = lo * 2.0
    while not pred(hi):
        if hi > _N_MAX:
            return math.inf
        lo, hi = hi, hi * 2.0
    while hi - lo > 1:
        mid = math.floor((lo + hi) / 2.0)
        if pred(mid):
            hi = mid
        else:
            lo = mid
    return hi



def _plan_rates(method: str | None, sparsity: int | None) -> list[tuple[str, Rate | None, str]]:
    """(method name or '(any)', rate or None, note) rows for :func:`plan`."""
    rows: list[tuple[str, Rate | None, str]] = [("(any DP method)", CLASSICAL_LOWER, "")]
    if sparsity is not None:
        rows.append(("(any DP method)", SPARSE_LOWER, ""))
    if method is None:  # every private method with a rate, by name
        for name, spec in sorted(available_methods().items()):
            if spec.private:
                rows += [(name, u.rate, "") for _, u in upper_rates(spec)
                         if u.rate is not None and (sparsity is not None or not u.rate.needs_sparsity)]
        return rows
    spec = get_method(method)
    found = [u for _, u in upper_rates(spec) if spec.private]
    with_rate = [u for u in found if u.rate is not None]
    if not with_rate:
        why = next((u.why_none for u in found if u.why_none), "no proved rate registered for this method")
        return rows + [(method, None, why)]
    for u in with_rate:
        rate = u.rate
        if rate.needs_sparsity and sparsity is None:  # type: ignore[union-attr]
            rows.append((method, None, f"{rate.source} needs sparsity="))  # type: ignore[union-attr]
        else:
            rows.append((method, rate, ""))
    return rows



def _check_plan_arguments(target: float, d: int, epsilon: float, delta: float, sparsity: int | None,
                          method: str | None) -> None:
    """Refuse :func:`plan`'s arguments with typed errors (all ``ValueError`` subclasses) saying what to fix."""
    def real(x: object) -> bool:
        return isinstance(x, numbers.Real) and not isinstance(x, bool)

    def whole(x: object) -> bool:
        return isinstance(x, numbers.Integral) and not isinstance(x, bool)

    if not (real(target) and 0 < target < math.inf):
        raise InvalidArgumentError(f"target must be a finite error > 0 (in units of sigma), got {target!r}")
    if not (whole(d) and d >= 1):
        raise InvalidArgumentError(f"d must be a whole number of coefficients >= 1, got {d!r}")
    if not (real(epsilon) and 0 < epsilon < math.inf):
        raise InvalidPrivacyParameterError(f"plan needs a finite epsilon > 0, got {epsilon!r}")
    if not (real(delta) and 0 < delta < 1):
        raise InvalidPrivacyParameterError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    if sparsity is not None and not (whole(sparsity) and 1 <= sparsity < d):
        raise InvalidArgumentError(f"sparsity must be a whole number with 1 <= sparsity < d={d}, got {sparsity!r}")
    if method == "auto":
        raise UnknownMethodError("plan needs a named method: 'auto' is chosen at fit time; pass method=None to "
                                 "see every method with a known rate")
    if method is not None:
        get_method(method)  # UnknownMethodError listing the registered methods


def plan(target: float, d: int, epsilon: float, delta: float, *, sparsity: int | None = None,
         method: str | None = None) -> pd.DataFrame:
    """How many rows are needed: the bounds of this module inverted for n.

    For each bound (the minimax lower bounds, and the upper bound of
    ``method``, or of every method with a known rate when ``method`` is None)
    the table gives, up to the bounds' unknown constants:

    * ``n_for_target``: the smallest n at which the bound's total error falls
      to ``target`` (in units of sigma);
    * ``n_privacy_for_target``: the smallest n at which the privacy term alone
      falls to ``target``;
    * ``n_privacy_below_sampling``: the smallest n from which the privacy term
      is at most the statistical term (privacy is then no longer the
      bottleneck);
    * ``sampling``, ``privacy``: the two terms at ``n_for_target``;
    * ``conditions``: the theorem's conditions that fail at ``n_for_target``
      (for instance delta >= 1/n when the n needed exceeds 1/delta).

    For a lower bound, ``n_for_target`` is the n below which no
    (epsilon, delta)-DP estimator can reach the target (up to constants).

    Parameters
    ----------
    target:
        Target error E||b - beta||_2 / sigma (> 0).
    d, epsilon, delta:
        Number of coefficients and the privacy budget.
    sparsity:
        s for the sparse bounds (Thm 16 and the lasso's Thm 17).
    method:
        Restrict the upper bounds to one method.

    Returns
    -------
    pandas.DataFrame, one row per bound.
    """
    _check_plan_arguments(target, d, epsilon, delta, sparsity, method)
    s = int(sparsity) if sparsity is not None else 0
    records = []
    for name, rate, note in _plan_rates(method, sparsity):
        if rate is None:
            records.append({"method": name, "bound": "(no rate)", "source": "", "n_for_target": np.nan,
                            "n_privacy_for_target": np.nan, "n_privacy_below_sampling": np.nan,
                            "sampling": np.nan, "privacy": np.nan, "conditions": note})
            continue
        n0 = rate.n_min(d, s)

        def total(n: float, r: Rate = rate) -> float:
            return r.statistical(n, d, s) + r.privacy_term(n, d, epsilon, delta, s)

        # the crossing uses the uncapped privacy term: with the cap, privacy <= sampling also holds at tiny n
        n_t = _smallest_n(lambda n, f=total: f(n) <= target, n0)
        n_p = _smallest_n(lambda n, r=rate: r.privacy_term(n, d, epsilon, delta, s) <= target, n0)
        n_x = _smallest_n(lambda n, r=rate: r.privacy(n, d, epsilon, delta, s) <= r.statistical(n, d, s), n0)
        at = rate.at(n_t, d, epsilon, delta, s) if math.isfinite(n_t) else None
        records.append({
            "method": name, "bound": rate.label, "source": rate.source,
            "n_for_target": n_t, "n_privacy_for_target": n_p, "n_privacy_below_sampling": n_x,
            "sampling": at.statistical if at else np.nan, "privacy": at.privacy if at else np.nan,
            "conditions": "; ".join(at.failed) if at else "target not reached below n=1e18",
        })
    frame = pd.DataFrame.from_records(records)
    for col in ("n_for_target", "n_privacy_for_target", "n_privacy_below_sampling"):
        frame[col] = frame[col].astype(float)
    frame.attrs.update(target=target, d=d, epsilon=epsilon, delta=delta, sparsity=sparsity,
                       units="sigma, up to absolute constants")
    return frame


def plot_plan(d: int, epsilons: Sequence[float], delta: float, *, sparsity: int | None = None,
              method: str | None = None, n_range: tuple[float, float] = (1e2, 1e7), target: float | None = None,
              ax: Any = None) -> Any:
    """Plot error against n for several epsilon: the minimax lower bound and the method's upper bound.

    Needs matplotlib (``pip install dpstats[plot]``), imported only here.
    Solid lines: the lower bound (Thm 16 with ``sparsity``, else Thm 18);
    dashed: the upper bound of ``method`` when it has a rate.  Log-log axes,
    units of sigma, up to constants.  Returns the matplotlib Axes.
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("plot_plan needs matplotlib: pip install 'dpstats[plot]'") from exc
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.4))
    s = int(sparsity) if sparsity is not None else 0
    ns = np.geomspace(max(n_range[0], 5.0), n_range[1], 200)
    lower = _lower_rate(1.0, sparsity)
    upper = None
    if method is not None:
        spec = get_method(method)
        registered = spec.theory_rate(spec.guarantee) if spec.theory_rate is not None else None
        upper = registered.rate if registered is not None else None
        if upper is not None and upper.needs_sparsity and sparsity is None:
            upper = None
    for k, eps in enumerate(epsilons):
        color = f"C{k}"
        ax.plot(ns, [lower.statistical(n, d, s) + lower.privacy_term(n, d, eps, delta, s) for n in ns], color=color,
                label=f"lower bound, eps={eps:g}")
        if upper is not None:
            ax.plot(ns, [upper.statistical(n, d, s) + upper.privacy(n, d, eps, delta, s) for n in ns], color=color,
                    linestyle="--", label=f"{method} upper bound, eps={eps:g}")
    ax.plot(ns, [lower.statistical(n, d, s) for n in ns], color="grey", linestyle=":", label="sampling term")
    if target is not None:
        ax.axhline(target, color="black", linewidth=0.8, label=f"target {target:g}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("error / sigma (up to constants)")
    ax.set_title(f"{lower.source}: d={d}" + (f", s={sparsity}" if sparsity is not None else "")
                 + f", delta={delta:g}", fontsize="medium")
    ax.legend(fontsize="small")
    return ax
