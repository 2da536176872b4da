"""Rates of convergence as functions of (n, d, epsilon, delta, s): the bricks of :mod:`dpstats.theory`.

A :class:`Rate` is a bound on E||b - beta||_2 / sigma up to absolute
constants, split into a statistical (sampling) term and a privacy term, with
the conditions of its theorem; :meth:`Rate.at` evaluates it to a
:class:`RateBound`.  A method registers its own upper rate as
``MethodSpec.theory_rate(guarantee) -> UpperRate`` (in its module), and
:mod:`dpstats.theory` reads it from the registry; the minimax lower bounds
live in :mod:`dpstats.theory`.  The conditions and model descriptions below
are shared by the theorems of Cai, Wang & Zhang ("The cost of privacy", Ann.
Statist. 2021).

A method may also register the privacy error it expects from its own
calibration (``UpperRate.expected_error``): a function of public facts and
the planner's assumptions (:class:`PlanningFacts`) that gives the second
moment of the privacy part of its coefficients' error in the units the method
sees (:class:`ExpectedError`); :func:`dpstats.plan` converts it to the
coefficients' units.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["RateBound", "Rate", "UpperRate", "CAI", "MODEL", "SPARSE_MODEL", "log_inv", "delta_range",
           "classical_conditions", "sparse_conditions", "classical_n", "no_conditions", "needs_sparsity",
           "PlanningFacts", "ExpectedError"]

CAI = "Cai, Wang & Zhang (2021)"

@dataclass(frozen=True)
class RateBound:
    """One bound on E||b - beta||_2 / sigma, up to constants: statistical + privacy term.

    Attributes
    ----------
    kind : str
        ``"lower"`` (no (epsilon, delta)-DP estimator does better in the
        worst case over the model) or ``"upper"`` (the method's own rate).
    label, source, formula : str
        What the bound is, the theorem it comes from, and its formula.
    statistical, privacy : float or None
        The two terms at (n, d, epsilon, delta), in units of sigma.
    failed : tuple of str
        Conditions of the theorem that fail here; non-empty means the bound
        is not applicable.
    caveats : tuple of str
        Assumptions of the theorem that cannot be checked from public facts.

    Examples
    --------
    >>> from dpstats.rates import RateBound
    >>> bound = RateBound("upper", "example", "a theorem", "sqrt(d/n) + d/(n eps)", 0.1, 0.3)
    >>> bound.applicable, round(bound.total, 2), bound.dominant
    (True, 0.4, 'privacy')
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
        """True when no condition of the theorem fails and both terms are known."""
        return not self.failed and self.statistical is not None and self.privacy is not None

    @property
    def total(self) -> float | None:
        """The statistical plus the privacy term (None when either is unknown)."""
        if self.statistical is None or self.privacy is None:
            return None
        return self.statistical + self.privacy

    @property
    def dominant(self) -> str:
        """``"privacy"`` or ``"sampling"``: the larger of the two terms."""
        return "privacy" if (self.privacy or 0.0) > (self.statistical or 0.0) else "sampling"


@dataclass(frozen=True)
class Rate:
    """A rate as functions of (n, d, epsilon, delta, s), for evaluation and inversion by :func:`plan`.

    Attributes
    ----------
    kind : str
        ``"lower"`` or ``"upper"``.
    label, source, formula : str
        What the bound is, the theorem it comes from, and its formula.
    statistical : callable
        ``statistical(n, d, s)``: the statistical (sampling) term, in units of sigma.
    privacy : callable
        ``privacy(n, d, epsilon, delta, s)``: the privacy term, in units of sigma.
    conditions : callable
        ``conditions(n, d, epsilon, delta, s)``: the theorem's conditions that fail, in words.
    caveats : tuple of str
        Assumptions of the theorem that cannot be checked from public facts.
    n_min : callable
        ``n_min(d, s)``: the n from which both terms are non-increasing in n.
    capped : bool
        The privacy term is min(., 1) (the lower bounds' "min 1").
    needs_sparsity : bool
        The rate is stated for a sparsity s, which the caller must give.

    Examples
    --------
    >>> import math
    >>> from dpstats.rates import Rate, classical_conditions
    >>> rate = Rate("upper", "example", "a theorem", "sqrt(d/n) + d/(n eps)",
    ...             lambda n, d, s: math.sqrt(d / n), lambda n, d, eps, delta, s: d / (n * eps),
    ...             classical_conditions, ())
    >>> bound = rate.at(10_000, 4, 1.0, 1e-6, 0)
    >>> round(bound.statistical, 3), round(bound.privacy, 4), bound.applicable
    (0.02, 0.0004, True)
    """

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
    needs_sparsity: bool = False  # the rate is stated for a sparsity s, which the caller must give

    def privacy_term(self, n: float, d: int, epsilon: float, delta: float, s: int) -> float:
        """The privacy term at (n, d, epsilon, delta, s), capped at 1 when the rate is ``capped``.

        Parameters
        ----------
        n : float
            Rows.
        d : int
            Coefficients.
        epsilon, delta : float
            The privacy budget.
        s : int
            Sparsity (0 when the rate is not stated for one).

        Returns
        -------
        float
            The term, in units of sigma.
        """
        p = self.privacy(n, d, epsilon, delta, s)
        return min(p, 1.0) if self.capped else p

    def at(self, n: float, d: int, epsilon: float, delta: float, s: int) -> RateBound:
        """The rate evaluated at (n, d, epsilon, delta, s), with the conditions that fail there.

        Parameters
        ----------
        n : float
            Rows.
        d : int
            Coefficients.
        epsilon, delta : float
            The privacy budget (an infinite epsilon gives a privacy term of 0).
        s : int
            Sparsity (0 when the rate is not stated for one).

        Returns
        -------
        RateBound
            Both terms, the failed conditions and the caveats.
        """
        priv = 0.0 if math.isinf(epsilon) else self.privacy_term(n, d, epsilon, delta, s)
        failed = tuple(self.conditions(n, d, epsilon, delta, s))
        return RateBound(self.kind, self.label, self.source, self.formula, self.statistical(n, d, s), priv,
                         failed, self.caveats)



def log_inv(delta: float) -> float:
    """log(1/delta), the factor of delta in the rates.

    Parameters
    ----------
    delta : float
        The budget's delta, in (0, 1).

    Returns
    -------
    float
        log(1/delta).

    Examples
    --------
    >>> from dpstats.rates import log_inv
    >>> round(log_inv(1e-6), 2)
    13.82
    """
    return math.log(1.0 / delta)


def delta_range(n: float, epsilon: float, delta: float) -> list[str]:
    """Cai et al.'s delta range n^-1 exp(-3 eps n/2) <= delta <= n^-(1+tau), tau > 0 (Thms 16 and 18).

    Parameters
    ----------
    n : float
        Rows.
    epsilon, delta : float
        The privacy budget (an infinite epsilon has no condition).

    Returns
    -------
    list of str
        The ends of the range that ``delta`` misses, in words; empty when it lies in the range.

    Examples
    --------
    >>> from dpstats.rates import delta_range
    >>> delta_range(1000, 1.0, 1e-6)
    []
    >>> delta_range(1000, 1.0, 0.01)
    ['delta=0.01 is not below n^-(1+tau) for any tau > 0 (1/n=0.001): delta too large for the theorem,
      and weak privacy']
    """
    if math.isinf(epsilon):
        return []
    out = []
    if not delta < 1.0 / n:
        out.append(f"delta={delta:.3g} is not below n^-(1+tau) for any tau > 0 (1/n={1.0 / n:.3g}): "
                   "delta too large for the theorem, and weak privacy")
    if delta < math.exp(-1.5 * epsilon * n - math.log(n)):
        out.append(f"delta={delta:.3g} is below n^-1 exp(-3 eps n/2)")
    return out


def classical_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    """The conditions of Cai, Wang & Zhang's Thm 18: the delta range and sqrt(d log(1/delta)) / (n eps) <= 1.

    Parameters
    ----------
    n : float
        Rows.
    d : int
        Coefficients.
    epsilon, delta : float
        The privacy budget.
    s : int
        Sparsity (0 when the rate is not stated for one).

    Returns
    -------
    list of str
        The conditions that fail, in words; empty when all hold.

    Examples
    --------
    >>> from dpstats.rates import classical_conditions
    >>> classical_conditions(50, 4, 0.05, 0.001, 0)
    ['sqrt(d log(1/delta))/(n eps) = 2.1 > 1: n too small for Thm 18 (needs it O(1))']
    """
    out = delta_range(n, epsilon, delta)
    if math.isfinite(epsilon):
        q = math.sqrt(d * log_inv(delta)) / (n * epsilon)
        if q > 1.0:
            out.append(f"sqrt(d log(1/delta))/(n eps) = {q:.3g} > 1: n too small for Thm 18 (needs it O(1))")
    return out


def sparse_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    """The conditions of Cai, Wang & Zhang's Thm 16: 1 <= s < d, the delta range and
    sqrt(s log(1/delta)) log(d/s) / (n eps) <= 1.

    Parameters
    ----------
    n : float
        Rows.
    d : int
        Coefficients.
    epsilon, delta : float
        The privacy budget.
    s : int
        Sparsity (0 when the rate is not stated for one).

    Returns
    -------
    list of str
        The conditions that fail, in words; empty when all hold.

    Examples
    --------
    >>> from dpstats.rates import sparse_conditions
    >>> sparse_conditions(10_000, 100, 1.0, 1e-6, 5)
    []
    """
    if not 1 <= s < d:
        return [f"sparsity s={s} must satisfy 1 <= s < d={d}"]
    out = delta_range(n, epsilon, delta)
    if math.isfinite(epsilon):
        q = math.sqrt(s * log_inv(delta)) * math.log(d / s) / (n * epsilon)
        if q > 1.0:
            out.append(f"sqrt(s log(1/delta)) log(d/s)/(n eps) = {q:.3g} > 1: n too small for Thm 16 "
                       "(needs it O(1))")
    return out


def classical_n(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    """The classical setting's only condition: n > d.

    Parameters
    ----------
    n : float
        Rows.
    d : int
        Coefficients.
    epsilon, delta : float
        The privacy budget.
    s : int
        Sparsity (0 when the rate is not stated for one).

    Returns
    -------
    list of str
        The conditions that fail, in words; empty when all hold.

    Examples
    --------
    >>> from dpstats.rates import classical_n
    >>> classical_n(3, 5, 1.0, 1e-6, 0)
    ['n=3 <= d=5: the classical (d < n) setting fails']
    """
    return [] if n > d else [f"n={n:g} <= d={d}: the classical (d < n) setting fails"]




def no_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    """No condition: for rates that hold everywhere.

    Parameters
    ----------
    n : float
        Rows.
    d : int
        Coefficients.
    epsilon, delta : float
        The privacy budget.
    s : int
        Sparsity (0 when the rate is not stated for one).

    Returns
    -------
    list of str
        The conditions that fail, in words; empty when all hold.

    Examples
    --------
    >>> from dpstats.rates import no_conditions
    >>> no_conditions(10, 2, 1.0, 1e-6, 0)
    []
    """
    return []


def needs_sparsity(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    """The condition of a rate stated for a sparsity: 1 <= s < d.

    Parameters
    ----------
    n : float
        Rows.
    d : int
        Coefficients.
    epsilon, delta : float
        The privacy budget.
    s : int
        Sparsity (0 when the rate is not stated for one).

    Returns
    -------
    list of str
        The conditions that fail, in words; empty when all hold.

    Examples
    --------
    >>> from dpstats.rates import needs_sparsity
    >>> needs_sparsity(1000, 10, 1.0, 1e-6, 0)
    ['sparsity s=0 must satisfy 1 <= s < d=10']
    """
    return [] if 1 <= s < d else [f"sparsity s={s} must satisfy 1 <= s < d={d}"]


#: the model of Cai, Wang & Zhang's classical theorems, and of their sparse ones
MODEL = ("Cai et al.'s model P(sigma, d): ||x||_inf <~ 1, sigma-sub-Gaussian errors, ||beta||_2 <= C, "
         "eigenvalues of Sigma_X in (1/Lambda, Lambda)")
SPARSE_MODEL = MODEL.replace("P(sigma, d)", "P(sigma, d, s)").replace("||beta||_2 <= C",
                                                                      "||beta||_0 <= s, ||beta||_2 <= C")


@dataclass(frozen=True)
class PlanningFacts:
    """A planned fit, in the units the method sees (after the public rescaling to [-1, 1]): public facts and
    the planner's assumptions about the data (:func:`dpstats.plan`).

    Attributes
    ----------
    n, d : int
        Rows and design columns.
    epsilon, delta : float
        The fit's budget.
    second_moment : numpy.ndarray
        Assumed E[x x^T] of one (clipped) row, d x d; X^T X is taken as n times it.
    residual_var : float
        Assumed residual variance sigma^2 of the response.
    coefficients : numpy.ndarray
        Assumed coefficients beta (their size enters the noise of X^T X b).
    x_norm, y_abs : float
        B_X and B_Y of the clip ranges.
    intercept_index : int or None
        The intercept column.
    inference : bool
        The fit's ``inference`` option (its share of the budget for standard errors).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.rates import PlanningFacts
    >>> facts = PlanningFacts(n=1000, d=2, epsilon=1.0, delta=1e-6, second_moment=np.eye(2) / 3,
    ...                       residual_var=0.1, coefficients=np.array([0.2, 0.5]), x_norm=1.0, y_abs=1.0)
    >>> facts.gram.round(1)
    array([[333.3,   0. ],
           [  0. , 333.3]])
    """

    n: int
    d: int
    epsilon: float
    delta: float
    second_moment: np.ndarray
    residual_var: float
    coefficients: np.ndarray
    x_norm: float
    y_abs: float
    intercept_index: int | None = None
    inference: bool = True

    @property
    def gram(self) -> np.ndarray:
        """The assumed X^T X: n times the second moment."""
        return self.n * self.second_moment


@dataclass(frozen=True)
class ExpectedError:
    """What a method expects of a planned fit (:class:`PlanningFacts`), from its own calibration.

    Attributes
    ----------
    privacy : numpy.ndarray or None
        Second moment (d x d) of the privacy part of the coefficients' error (the released coefficients minus
        least squares on the same data, or what :attr:`UpperRate.planned_error` says), first order in the noise;
        None when the fit would refuse.
    refusal : str
        Why the fit would refuse (a public or private check), "" when it would not.
    noise_to_signal : float or None
        The expected value of the released diagnostic the method's withholding rule reads
        (``MethodSpec.inference_rule``), None when it has none.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.rates import ExpectedError
    >>> ExpectedError(privacy=np.eye(2) * 1e-4, noise_to_signal=0.05).refusal
    ''
    """

    privacy: np.ndarray | None
    refusal: str = ""
    noise_to_signal: float | None = None


@dataclass(frozen=True)
class UpperRate:
    """A method's upper rate for one kind of fit, as its ``MethodSpec.theory_rate(guarantee)`` returns it.

    Attributes
    ----------
    rate : Rate or None
        The rate, or None when no rate is proved for this fit (``why_none`` says why).
    why_none : str
        Shown instead of a bound when ``rate`` is None.
    uncovered_source : str
        When a theorem exists for a related estimator but does not cover the implemented one: its source; the
        bound is then shown as not applicable, with ``why_none`` as the failed condition.
    inference_share : float
        Share of the GDP budget mu^2 a fit with ``inference=True`` gives to releases for standard errors: the
        rate is then evaluated at the budget left to the point estimate
        (:func:`dpstats.theory.point_estimate_epsilon`).
    expected_error : callable or None
        ``expected_error(facts: PlanningFacts) -> ExpectedError``: the privacy error the method's own
        calibration gives a planned fit (read by :func:`dpstats.plan`); None to plan with the rate.
    planned_error : str
        What ``expected_error`` plans where it is not the released coefficients' distance from least squares, in
        words: the plan prints it with its assumptions ("" where it is that distance).
    not_for_planning : str
        Why the rate's figures, up to its unknown constants, are no planning figure for this method, in words:
        :func:`dpstats.plan` then shows them with kind ``"not for planning"`` and derives no epsilon or n needed
        from them ("" where it plans with the rate).

    Examples
    --------
    >>> from dpstats.methods.registry import get_method
    >>> spec = get_method("ssp")
    >>> upper = spec.theory_rate(spec.guarantee)  # an UpperRate
    >>> upper.rate is None, bool(upper.why_none)
    (True, True)
    """

    rate: Rate | None = None
    why_none: str = ""
    uncovered_source: str = ""
    inference_share: float = 0.0
    expected_error: Callable[[PlanningFacts], ExpectedError] | None = None
    planned_error: str = ""
    not_for_planning: str = ""
