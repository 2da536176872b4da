"""What the minimax theorems say about the error at this n, d, epsilon, delta.

All rates are in units of the noise standard deviation sigma and hold up to
absolute constants (the papers do not give them), so they describe orders of
magnitude and which term dominates, not exact errors.

* Cai, Wang & Zhang (2021), Thm 18 (classical lower bound, seed numbering):
  inf_M sup_P E||M(D) - beta||_2 >~ sigma (sqrt(d/n) + min(d sqrt(log(1/delta))/(n eps), 1)).
* Cai, Wang & Zhang, Thm 19 (noisy OLS upper bound):
  sigma (sqrt(d/n) + d sqrt(log(1/delta) log n)/(n eps)).
* Cai, Wang & Zhang, Thm 16/17 (sparse lower/upper bounds, s-sparse beta).

Methods without a proved rate in this model (SSP, AdaSSP's excess-risk bound
is stated for the empirical risk with bounded data) report the lower bound
only and say why.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["ErrorBounds", "classical_lower_bound", "error_bounds", "plan"]


@dataclass(frozen=True)
class ErrorBounds:
    """Theory summary of one fit, in units of sigma, up to constants.

    Attributes
    ----------
    statistical_term, privacy_term:
        The two terms of the minimax lower bound: sampling error sqrt(d/n)
        and the cost of privacy d sqrt(log(1/delta))/(n eps) (capped at 1).
    lower_bound:
        Their sum: no (epsilon, delta)-DP estimator can do better in the worst
        case over the model class (up to a constant).
    upper_bound:
        The method's own proved rate in the same units, or None.
    dominant:
        "privacy" or "sampling": which term of the lower bound is larger.
    """

    n: int
    d: int
    epsilon: float
    delta: float
    statistical_term: float
    privacy_term: float
    lower_bound: float
    upper_bound: float | None
    upper_bound_source: str
    lower_bound_source: str
    dominant: str
    conditions: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        out = [
            f"Minimax lower bound ({self.lower_bound_source}): ~ {self.lower_bound:.3g} sigma "
            f"= sampling {self.statistical_term:.3g} + privacy {self.privacy_term:.3g}; {self.dominant} dominates",
        ]
        if self.upper_bound is not None:
            out.append(f"Method upper bound ({self.upper_bound_source}): ~ {self.upper_bound:.3g} sigma")
        else:
            out.append(f"Method upper bound: {self.upper_bound_source}")
        out.append("Rates hold up to absolute constants; they tell orders of magnitude, not exact errors.")
        out += [f"Condition: {c}" for c in self.conditions]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def classical_lower_bound(n: int, d: int, epsilon: float, delta: float) -> tuple[float, float]:
    """(statistical, privacy) terms of Cai, Wang & Zhang Thm 18, in units of sigma."""
    stat = math.sqrt(d / n)
    if math.isinf(epsilon):
        return stat, 0.0
    priv = min(d * math.sqrt(math.log(1.0 / delta)) / (n * epsilon), 1.0)
    return stat, priv


def _noisy_ols_upper(n: int, d: int, epsilon: float, delta: float) -> float:
    """Cai, Wang & Zhang Thm 19: sqrt(d/n) + d sqrt(log(1/delta) log n)/(n eps)."""
    return math.sqrt(d / n) + d * math.sqrt(math.log(1.0 / delta) * math.log(n)) / (n * epsilon)


_UPPER = {
    "noisy_ols": (_noisy_ols_upper, "Cai, Wang & Zhang Thm 19"),
}

_NO_UPPER = {
    "ols": "non-private OLS attains sqrt(d/n) (no privacy term)",
    "ssp": "no rate in this model is proved for SSP (Wang 2018 bounds the excess empirical risk of bounded data)",
    "adassp": "Wang (2018) bounds the excess empirical risk for bounded data, not ||b - beta||_2 in this model",
}


def error_bounds(method: str, n: int, d: int, epsilon: float, delta: float) -> ErrorBounds:
    """Theory summary for ``method`` at (n, d, epsilon, delta)."""
    stat, priv = classical_lower_bound(n, d, epsilon, delta)
    upper: float | None = None
    if method in _UPPER and math.isfinite(epsilon):
        fn, src = _UPPER[method]
        upper = fn(n, d, epsilon, delta)
    elif method == "ols":
        upper, src = stat, "OLS rate sqrt(d/n)"
    else:
        src = _NO_UPPER.get(method, "no proved rate registered for this method")
    conditions = ("Cai et al.'s model P(sigma, d): ||x||_inf <~ 1, sub-Gaussian errors, ||beta||_2 <= C, "
                  "well-conditioned covariance; delta <= n^-(1+tau)",)
    if math.isfinite(epsilon) and delta > n ** -1.0:
        conditions += (f"delta={delta:g} exceeds 1/n={1.0 / n:.3g}: outside the theorem's range and weak privacy",)
    return ErrorBounds(n=n, d=d, epsilon=epsilon, delta=delta, statistical_term=stat, privacy_term=priv,
                       lower_bound=stat + priv, upper_bound=upper, upper_bound_source=src,
                       lower_bound_source="Cai, Wang & Zhang Thm 18",
                       dominant="privacy" if priv > stat else "sampling", conditions=conditions)


def plan(target_error: float, d: int, epsilon: float, delta: float) -> int:
    """Smallest n at which the classical minimax lower bound falls to ``target_error`` (units of sigma).

    Solves sqrt(d/n) + d sqrt(log(1/delta))/(n eps) = target for n: with
    u = 1/sqrt(n), c u^2 + sqrt(d) u - target = 0.  Up to constants, this is
    the n any (epsilon, delta)-DP estimator needs (Cai, Wang & Zhang Thm 18).
    """
    if not (target_error > 0 and d >= 1 and epsilon > 0 and 0 < delta < 1):
        raise ValueError("plan needs target_error > 0, d >= 1, epsilon > 0 and 0 < delta < 1")
    c = d * math.sqrt(math.log(1.0 / delta)) / epsilon
    b = math.sqrt(d)
    u = (-b + math.sqrt(b * b + 4.0 * c * target_error)) / (2.0 * c)
    return int(math.ceil(1.0 / (u * u)))
