"""What the minimax theorems say about the error at this n, d, epsilon, delta.

Every rate is in units of the noise standard deviation sigma and holds up to
absolute constants (the papers do not give them): it tells orders of magnitude
and which term dominates, not exact errors.  Each bound is split into a
statistical (sampling) term and a privacy term.  See ALGORITHMS.md section 8.

Lower bounds (over all (epsilon, delta)-DP estimators; Cai, Wang & Zhang,
"The cost of privacy", Ann. Statist. 2021, seed numbering):

* Thm 18 (classical): sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1), when
  eps = O(1), n^-1 exp(-3 eps n/2) <= delta <= n^-(1+tau) for some tau > 0,
  and sqrt(d log(1/delta))/(n eps) = O(1);
* Thm 16 (s-sparse): sqrt(s log d / n) + min(s log(d/s) sqrt(log(1/delta))/(n eps), 1),
  with the same delta range and sqrt(s log(1/delta)) log(d/s)/(n eps) = O(1).

Upper bounds (each method's own rate, where a paper gives one):

* ``noisy_ols``, conditional calibration: Thm 19,
  sqrt(d/n) + d sqrt(log(1/delta) log n)/(n eps);
* ``noisy_ols``, worst-case calibration (the default) [derived]: the noise of
  :mod:`dpstats.methods.noisy_ols` has sensitivity
  2 B_X T (1 + B_X sqrt(n/L))/L; in Thm 19's model (B_X <~ sqrt(d),
  L ≍ n/Lambda, T ≍ sigma sqrt(log n)) its norm is
  d^{3/2} sqrt(log(1/delta) log n)/(n eps), a factor sqrt(d) above Thm 19;
* both ``noisy_ols`` rates are evaluated at the budget its point estimate
  actually spends: with ``inference=True`` (its default) the fit gives
  ``INFERENCE_SHARE`` of mu^2 to releases for standard errors, so the rate
  uses the epsilon, at the fit's delta, of the remaining sqrt(1 - share) mu
  (:func:`point_estimate_epsilon`); ``inference=False`` uses the full budget;
* ``lasso``: Thm 17, sqrt(s log d log n / n) + s sqrt(log(1/delta)) log d log^{3/2} n/(n eps),
  with high probability (the worst-case variant coincides with Algorithm 4 on
  the theorem's event at the paper's step 1/c_x^2, see :mod:`dpstats.methods.lasso`;
  the default public step 1/L_2s is not covered by the theorem);
* ``robgd``: Liu et al. (2023): n = O~(d/alpha^2 + kappa^{1/2} d/(eps alpha)) gives
  error alpha in Sigma-norm, i.e. sqrt(d/n) + kappa^{1/2} d/(n eps) with
  log factors and log(1/delta) hidden (kappa is taken as 1 here);
* ``ambssgd``: Varshney et al. (2022): sqrt(d/n) + kappa d sqrt(log(1/delta))/(n eps)
  once n >~ kappa^2 d sqrt(log(1/delta))/eps (kappa taken as 1);
* ``tukey``: no rate for the implemented estimator (Amin et al.'s utility
  theorem covers only the exact-depth EM), shown as not applicable.

Conditions stated as "= O(1)" are checked with the constant 1; a failed
condition makes the bound "not applicable" and names the condition.
:func:`plan` inverts the bounds (the n needed for a target error) and
:func:`plot_plan` draws them (matplotlib, the ``plot`` extra).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
from statsmodels.iolib.table import SimpleTable

from dpstats.errors import InvalidArgumentError, InvalidPrivacyParameterError, UnknownMethodError
from dpstats.methods.noisy_ols import INFERENCE_SHARE
from dpstats.methods.registry import get_method
from dpstats.privacy.calibration import gaussian_epsilon, gaussian_mu

__all__ = ["RateBound", "ErrorBounds", "classical_lower_bound", "sparse_lower_bound", "error_bounds", "plan",
           "plot_plan", "point_estimate_epsilon", "CLASSICAL_LOWER", "SPARSE_LOWER", "UPPER_RATES"]

CAI = "Cai, Wang & Zhang (2021)"


@dataclass(frozen=True)
class RateBound:
    """One bound on E||b - beta||_2 / sigma, up to constants: statistical + privacy term.

    Attributes
    ----------
    kind:
        ``"lower"`` (no (epsilon, delta)-DP estimator does better in the
        worst case over the model) or ``"upper"`` (the method's own rate).
    label, source, formula:
        What the bound is, the theorem it comes from, and its formula.
    statistical, privacy:
        The two terms at (n, d, epsilon, delta), in units of sigma.
    failed:
        Conditions of the theorem that fail here; non-empty means the bound
        is not applicable.
    caveats:
        Assumptions of the theorem that cannot be checked from public facts.
    """

    kind: str
    label: str
    source: str
    formula: str
    statistical: float | None
    privacy: float | None
    failed: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()

    @property
    def applicable(self) -> bool:
        return not self.failed and self.statistical is not None and self.privacy is not None

    @property
    def total(self) -> float | None:
        if self.statistical is None or self.privacy is None:
            return None
        return self.statistical + self.privacy

    @property
    def dominant(self) -> str:
        """``"privacy"`` or ``"sampling"``: the larger of the two terms."""
        return "privacy" if (self.privacy or 0.0) > (self.statistical or 0.0) else "sampling"


@dataclass(frozen=True)
class _Rate:
    """A rate as functions of (n, d, epsilon, delta, s), for evaluation and inversion by :func:`plan`."""

    kind: str
    label: str
    source: str
    formula: str
    statistical: Callable[[float, int, int], float]  # (n, d, s)
    privacy: Callable[[float, int, float, float, int], float]  # (n, d, eps, delta, s)
    conditions: Callable[[float, int, float, float, int], list[str]]
    caveats: tuple[str, ...]
    n_min: Callable[[int, int], float] = lambda d, s: 5.0  # where both terms are non-increasing in n
    capped: bool = False  # the privacy term is min(., 1) (the lower bounds' "∧ 1")

    def privacy_term(self, n: float, d: int, epsilon: float, delta: float, s: int) -> float:
        p = self.privacy(n, d, epsilon, delta, s)
        return min(p, 1.0) if self.capped else p

    def at(self, n: float, d: int, epsilon: float, delta: float, s: int) -> RateBound:
        priv = 0.0 if math.isinf(epsilon) else self.privacy_term(n, d, epsilon, delta, s)
        failed = tuple(self.conditions(n, d, epsilon, delta, s))
        return RateBound(self.kind, self.label, self.source, self.formula, self.statistical(n, d, s), priv,
                         failed, self.caveats)


def _log_inv(delta: float) -> float:
    return math.log(1.0 / delta)


def _delta_range(n: float, epsilon: float, delta: float) -> list[str]:
    """Cai et al.'s delta range n^-1 exp(-3 eps n/2) <= delta <= n^-(1+tau), tau > 0 (Thms 16 and 18)."""
    if math.isinf(epsilon):
        return []
    out = []
    if not delta < 1.0 / n:
        out.append(f"delta={delta:.3g} is not below n^-(1+tau) for any tau > 0 (1/n={1.0 / n:.3g}): "
                   "delta too large for the theorem, and weak privacy")
    if delta < math.exp(-1.5 * epsilon * n - math.log(n)):
        out.append(f"delta={delta:.3g} is below n^-1 exp(-3 eps n/2)")
    return out


def _classical_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    out = _delta_range(n, epsilon, delta)
    if math.isfinite(epsilon):
        q = math.sqrt(d * _log_inv(delta)) / (n * epsilon)
        if q > 1.0:
            out.append(f"sqrt(d log(1/delta))/(n eps) = {q:.3g} > 1: n too small for Thm 18 (needs it O(1))")
    return out


def _sparse_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    if not 1 <= s < d:
        return [f"sparsity s={s} must satisfy 1 <= s < d={d}"]
    out = _delta_range(n, epsilon, delta)
    if math.isfinite(epsilon):
        q = math.sqrt(s * _log_inv(delta)) * math.log(d / s) / (n * epsilon)
        if q > 1.0:
            out.append(f"sqrt(s log(1/delta)) log(d/s)/(n eps) = {q:.3g} > 1: n too small for Thm 16 "
                       "(needs it O(1))")
    return out


def _classical_n(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    return [] if n > d else [f"n={n:g} <= d={d}: the classical (d < n) setting fails"]


def _noisy_ols_worst_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    out = _classical_n(n, d, epsilon, delta, s)
    need = d * math.sqrt(_log_inv(delta)) / epsilon
    if n < need:
        out.append(f"n={n:g} < d sqrt(log(1/delta))/eps = {need:.3g}: the private lambda_min check is likely "
                   "to refuse (up to constants)")
    return out


def _ambssgd_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    need = d * math.sqrt(_log_inv(delta)) / epsilon
    return [] if n >= need else [f"n={n:g} < kappa^2 d sqrt(log(1/delta))/eps = {need:.3g} (burn-in, kappa=1)"]


def _no_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    return []


def _needs_sparsity(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    return [] if 1 <= s < d else [f"sparsity s={s} must satisfy 1 <= s < d={d}"]


_MODEL = ("Cai et al.'s model P(sigma, d): ||x||_inf <~ 1, sigma-sub-Gaussian errors, ||beta||_2 <= C, "
          "eigenvalues of Sigma_X in (1/Lambda, Lambda)")
_SPARSE_MODEL = _MODEL.replace("P(sigma, d)", "P(sigma, d, s)").replace("||beta||_2 <= C", "||beta||_0 <= s, "
                                                                          "||beta||_2 <= C")

CLASSICAL_LOWER = _Rate(
    "lower", "minimax lower bound (classical)", f"{CAI} Thm 18",
    "sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1)",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d * math.sqrt(_log_inv(dl)) / (n * e),
    _classical_conditions, (_MODEL, "epsilon = O(1)"), n_min=lambda d, s: 1.0, capped=True)

SPARSE_LOWER = _Rate(
    "lower", "minimax lower bound (s-sparse)", f"{CAI} Thm 16",
    "sqrt(s log d / n) + min(s log(d/s) sqrt(log(1/delta))/(n eps), 1)",
    lambda n, d, s: math.sqrt(s * math.log(d) / n),
    lambda n, d, e, dl, s: s * math.log(d / s) * math.sqrt(_log_inv(dl)) / (n * e),
    _sparse_conditions, (_SPARSE_MODEL, "epsilon = O(1)"), n_min=lambda d, s: 1.0, capped=True)

NON_PRIVATE_LOWER = _Rate(
    "lower", "minimax lower bound (no privacy)", "classical minimax rate of linear regression",
    "sqrt(d/n)", lambda n, d, s: math.sqrt(d / n), lambda n, d, e, dl, s: 0.0, _no_conditions, (_MODEL,),
    n_min=lambda d, s: 1.0)

# the methods' rates by key ("noisy_ols/worst-case", "noisy_ols/conditional", "lasso", ...), as functions of n
UPPER_RATES: dict[str, _Rate] = {
    "noisy_ols/conditional": _Rate(
        "upper", "noisy_ols upper bound (conditional calibration)", f"{CAI} Thm 19",
        "sqrt(d/n) + d sqrt(log(1/delta) log n)/(n eps)",
        lambda n, d, s: math.sqrt(d / n),
        lambda n, d, e, dl, s: d * math.sqrt(_log_inv(dl) * math.log(n)) / (n * e),
        _classical_n, (_MODEL, "T >= K sigma sqrt(log n); DP only with high probability under the model"),
        n_min=lambda d, s: max(5.0, d + 1.0)),
    "noisy_ols/worst-case": _Rate(
        "upper", "noisy_ols upper bound (worst-case calibration)", f"{CAI} Thm 19 with dpstats' worst-case "
        "sensitivity [derived]",
        "sqrt(d/n) + d^(3/2) sqrt(log(1/delta) log n)/(n eps)",
        lambda n, d, s: math.sqrt(d / n),
        lambda n, d, e, dl, s: d ** 1.5 * math.sqrt(_log_inv(dl) * math.log(n)) / (n * e),
        _noisy_ols_worst_conditions, (_MODEL, "T ≍ sigma sqrt(log n)"), n_min=lambda d, s: max(5.0, d + 1.0)),
    "lasso": _Rate(
        "upper", "lasso upper bound", f"{CAI} Thm 17",
        "sqrt(s log d log n / n) + s sqrt(log(1/delta)) log d log^(3/2) n/(n eps)",
        lambda n, d, s: math.sqrt(s * math.log(d) * math.log(n) / n),
        lambda n, d, e, dl, s: s * math.sqrt(_log_inv(dl)) * math.log(d) * math.log(n) ** 1.5 / (n * e),
        _needs_sparsity, (_SPARSE_MODEL, "a high-probability bound, for s_hat ≍ s, T >= K sigma sqrt(log n), the "
                          "paper's step 1/c_x^2 (step_size=1.0 after rescaling) and N0 ≍ log n; dpstats' default "
                          "step 1/L_2s is safe on any design but is not covered by the theorem")),
    "robgd": _Rate(
        "upper", "robgd upper bound", "Liu, Jain, Kong, Oh & Suggala (2023)",
        "sqrt(d/n) + kappa^(1/2) d/(n eps), kappa=1, logs and log(1/delta) hidden (Sigma-norm)",
        lambda n, d, s: math.sqrt(d / n),
        lambda n, d, e, dl, s: d / (n * e),
        _no_conditions, ("sub-Weibull covariates and noise; at most an alpha fraction of labels corrupted, "
                         "alpha below the error; error in Sigma-norm",)),
    "ambssgd": _Rate(
        "upper", "ambssgd upper bound", "Varshney, Thakurta & Jain (2022)",
        "sqrt(d/n) + kappa d sqrt(log(1/delta))/(n eps), kappa=1, logs hidden",
        lambda n, d, s: math.sqrt(d / n),
        lambda n, d, e, dl, s: d * math.sqrt(_log_inv(dl)) / (n * e),
        _ambssgd_conditions, ("sub-Gaussian covariates with known Tr(Sigma); error in Sigma-norm",)),
    "ols": _Rate(
        "upper", "OLS rate (NOT PRIVATE)", "Gauss-Markov", "sqrt(d/n)",
        lambda n, d, s: math.sqrt(d / n), lambda n, d, e, dl, s: 0.0, _classical_n, ()),
}

_NOT_APPLICABLE = {
    "tukey": ("TukeyEM (Amin et al. 2023)", "Amin et al.'s utility theorem (Thm 3.1, via Brown et al. 2021) covers "
              "only the exact-depth Tukey EM; dpstats implements the approximate-depth EM, which has no utility "
              "theorem (in practice it needs n >~ 1000 d with m = 1000 models)"),
}

_NO_UPPER = {
    "ssp": "no rate in this model is proved for SSP (Wang 2018 bounds the excess empirical risk of bounded data)",
    "adassp": "Wang (2018) bounds the excess empirical risk for bounded data, not ||b - beta||_2 in this model",
    "dpsgd": "no rate for ||b - beta||_2 is proved for DP-SGD in this model",
}


def _upper_key(method: str, guarantee: str | None) -> str:
    if method == "noisy_ols":
        return f"noisy_ols/{'conditional' if guarantee == 'conditional' else 'worst-case'}"
    return method


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


def _lower_rate(epsilon: float, sparsity: int | None) -> _Rate:
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


def _rate_epsilon(key: str, epsilon: float, delta: float, inference: bool) -> tuple[float, str]:
    """The epsilon at which ``key``'s upper rate is evaluated, and a note when it is not the fit's."""
    if not (key.startswith("noisy_ols/") and inference and math.isfinite(epsilon)):
        return epsilon, ""
    eps_point = point_estimate_epsilon(epsilon, delta, INFERENCE_SHARE)
    return eps_point, (f"evaluated at the point estimate's budget, epsilon={eps_point:.4g} of {epsilon:.4g} "
                       f"(inference=True gives {INFERENCE_SHARE:g} of mu^2 to the releases for standard errors)")


def error_bounds(method: str, n: int, d: int, epsilon: float, delta: float, sparsity: int | None = None,
                 guarantee: str | None = None, inference: bool = True) -> ErrorBounds:
    """Theory summary for ``method`` at (n, d, epsilon, delta).

    ``sparsity`` switches the lower bound to the sparse Thm 16 (and is needed
    for the lasso's Thm 17); ``guarantee="conditional"`` selects the paper's
    own calibration for noisy_ols (Thm 19), otherwise its worst-case variant.
    ``inference`` is the fit's option of that name (noisy_ols's default,
    True): noisy_ols's upper bound is then evaluated at the budget left to its
    point estimate (:func:`point_estimate_epsilon`), with ``False`` at the
    full budget.  The lower bound always uses the full (epsilon, delta): it
    holds for every (epsilon, delta)-DP estimator.
    """
    s = int(sparsity) if sparsity is not None else 0
    lower = _lower_rate(epsilon, sparsity).at(n, d, epsilon, delta, s)
    key = _upper_key(method, guarantee)
    upper: RateBound | None = None
    note = ""
    if key in UPPER_RATES and (math.isfinite(epsilon) or key == "ols"):
        eps_rate, note = _rate_epsilon(key, epsilon, delta, inference)
        upper = UPPER_RATES[key].at(n, d, eps_rate, delta, s)
    elif method in _NOT_APPLICABLE:
        label, why = _NOT_APPLICABLE[method]
        upper = RateBound("upper", f"{method} upper bound", label, "none for the implemented estimator", None,
                          None, failed=(why,))
    else:
        note = _NO_UPPER.get(method, "no proved rate registered for this method")
    return ErrorBounds(method=method, n=n, d=d, epsilon=epsilon, delta=delta, sparsity=sparsity, lower=lower,
                       upper=upper, upper_note=note)


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


def _plan_rates(method: str | None, sparsity: int | None) -> list[tuple[str, _Rate | None, str]]:
    """(method name or '(any)', rate or None, note) rows for :func:`plan`."""
    rows: list[tuple[str, _Rate | None, str]] = [("(any DP method)", CLASSICAL_LOWER, "")]
    if sparsity is not None:
        rows.append(("(any DP method)", SPARSE_LOWER, ""))
    if method is None:
        keys = ["noisy_ols/worst-case", "noisy_ols/conditional", "robgd", "ambssgd"]
        keys += ["lasso"] if sparsity is not None else []
        rows += [(k.split("/")[0], UPPER_RATES[k], "") for k in keys]
        return rows
    if method == "noisy_ols":
        return rows + [("noisy_ols", UPPER_RATES["noisy_ols/worst-case"], ""),
                       ("noisy_ols", UPPER_RATES["noisy_ols/conditional"], "")]
    if method == "lasso" and sparsity is None:
        return rows + [("lasso", None, "Thm 17 needs sparsity=")]
    if method in UPPER_RATES and method != "ols":
        return rows + [(method, UPPER_RATES[method], "")]
    if method in _NOT_APPLICABLE:
        return rows + [(method, None, _NOT_APPLICABLE[method][1])]
    return rows + [(method, None, _NO_UPPER.get(method, "no proved rate registered for this method"))]


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

        def total(n: float, r: _Rate = rate) -> float:
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
    upper = UPPER_RATES.get(_upper_key(method, None)) if method is not None else None
    if method == "lasso" and sparsity is None:
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
