"""The per-fit privacy ledger.

A :class:`PrivacyLedger` holds the budget of one fit and one :class:`PrivacyStep`
per mechanism call.  Mechanisms call :meth:`PrivacyLedger.charge` *before* they
draw noise; the charge composes the new step with every earlier one and raises
:class:`~dpstats.errors.BudgetExceededError` if the composed total would exceed
the budget, so nothing is released past the budget.  The ledger's total is
therefore never above the budget.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpstats.errors import BudgetExceededError
from dpstats.privacy.composition import _epsilon_of, compose_epsilon, is_pure
from dpstats.validation import MAX_EPSILON, MIN_DELTA

__all__ = ["PrivacyStep", "PrivacyLedger", "Mechanism", "reference_delta", "REFERENCE_EPSILON_CAP"]

Mechanism = Literal["gaussian", "laplace", "exponential", "approximate-dp"]

# relative slack allowed when comparing a composed epsilon with the budget:
# calibrations are made on the safe side, this only absorbs float rounding
_REL_TOL = 1e-9


#: reference_delta assumes that the reference mechanism's epsilon is at most this
REFERENCE_EPSILON_CAP = 600.0


def reference_delta(delta: float, lam: float, tau: float) -> float:
    """delta_R with e^lam delta_R + (1 + e^(REFERENCE_EPSILON_CAP + lam)) tau <= delta, rounded down.

    If a sampled mechanism is (lam, tau)-close in both directions to a
    reference mechanism that is (eps_R, delta_R)-DP with eps_R <= the cap,
    the sampled one is (eps_R + 2 lam, delta)-DP (see
    :meth:`PrivacyLedger._total`).  The factor 1 - 2^-50 absorbs the
    floating-point rounding of this formula.  With lam = tau = 0 it returns
    ``delta`` unchanged.
    """
    if lam == 0.0 and tau == 0.0:
        return float(delta)
    slack = (1.0 + math.exp(REFERENCE_EPSILON_CAP + lam)) * tau
    return (float(delta) - slack) * math.exp(-lam) * (1.0 - 2.0**-50)


@dataclass(frozen=True)
class PrivacyStep:
    """One mechanism call recorded in a ledger.

    Attributes
    ----------
    name : str
        What was released, in words ("noisy X^T X").
    mechanism : {"gaussian", "laplace", "exponential", "approximate-dp"}
        ``"gaussian"``, ``"laplace"``, ``"exponential"`` or ``"approximate-dp"``
        (a generic (epsilon, delta) step such as a propose-test-release check).
    sensitivity : float
        Sensitivity of the released statistic under the fit's neighbouring
        relation, in the norm given by ``sensitivity_norm``.
    sensitivity_norm : str
        The norm of ``sensitivity`` (``"L2"``, ``"L1"``, ...).
    noise_scale : float
        Gaussian standard deviation, Laplace scale b, or ``nan`` where the
        mechanism has no additive noise (exponential mechanism).
    epsilon, delta : float or None
        The step's own privacy parameters.  ``None`` for Gaussian steps, whose
        exact privacy is the GDP parameter :attr:`mu` (composed exactly).
    count : int
        How many times the same mechanism was applied (T rounds of a loop).
    dimension : int
        Number of released coordinates (for the report only).
    note : str
        Free text for the report (how the noise was sampled, ...).
    closeness_epsilon, closeness_delta : float
        For Gaussian noise drawn exactly from the discrete Gaussian on a public
        grid (``dpstats.privacy.samplers``): the step's sampled outputs are
        (closeness_epsilon, closeness_delta)-close, in both directions, to
        those of the reference mechanism the other fields describe (the
        continuous Gaussian on the grid-rounded statistic, rounded to the
        grid).  0 for steps that are exactly what they describe.  The ledger
        adds 2 closeness_epsilon to the composed epsilon and takes the
        reference mechanisms' epsilon at a delta reduced by the closeness
        (``reference_delta``).
    discrete : bool
        True for a Laplace step sampled from the discrete Laplace on a public
        grid.  It is exactly epsilon-DP as sampled, but its privacy-loss
        distribution is not the continuous Laplace's, so PLD composition uses
        the randomized-response pair that dominates every epsilon-DP
        mechanism (Kairouz, Oh & Viswanath 2015) instead.

    Raises
    ------
    ValueError
        Inconsistent fields (a Gaussian step without noise, a Laplace step
        whose epsilon is below sensitivity / noise_scale, ...).

    Examples
    --------
    >>> from dpstats.privacy import PrivacyStep
    >>> step = PrivacyStep("noisy X^T y", "gaussian", sensitivity=2.0, sensitivity_norm="L2", noise_scale=4.0)
    >>> step.mu, step.describe_privacy()
    (0.5, 'mu=0.5 (GDP), rho=0.125 (zCDP)')
    """

    name: str
    mechanism: Mechanism
    sensitivity: float
    sensitivity_norm: str
    noise_scale: float
    epsilon: float | None = None
    delta: float | None = None
    count: int = 1
    dimension: int = 1
    note: str = ""
    closeness_epsilon: float = 0.0
    closeness_delta: float = 0.0
    discrete: bool = False

    @property
    def _kind(self) -> str:
        """"a Gaussian step", "an exponential step", ...: how a check's message names this step."""
        article = "an" if self.mechanism[0] in "aeiou" else "a"
        return f"{article} {self.mechanism} step"

    def __post_init__(self) -> None:
        # Every comparison below is written so that NaN fails it: a step whose privacy
        # parameters are NaN would otherwise compose to a NaN total, which no budget
        # check can refuse.
        if isinstance(self.count, bool) or not isinstance(self.count, (int, np.integer)) or self.count < 1:
            raise ValueError(f"count must be an integer >= 1, got {self.count!r}")
        if not (0 <= self.closeness_epsilon < 1e-3 and 0 <= self.closeness_delta < 1e-3):
            raise ValueError("closeness_epsilon and closeness_delta must lie in [0, 1e-3)")
        if (self.closeness_epsilon or self.closeness_delta) and self.mechanism != "gaussian":
            raise ValueError("only Gaussian steps carry a closeness allowance; other steps state the privacy of "
                             "what they sample")
        if self.discrete and self.mechanism != "laplace":
            raise ValueError("discrete=True marks a discrete Laplace step")
        if self.mechanism == "gaussian":
            if not (self.noise_scale > 0 and 0 <= self.sensitivity < math.inf):
                raise ValueError("a Gaussian step needs noise_scale > 0 and a finite sensitivity >= 0")
            return
        if self.epsilon is None or not (self.epsilon >= 0):
            raise ValueError(f"{self._kind} needs epsilon >= 0, got {self.epsilon!r}")
        if self.delta is not None and not (0 <= self.delta < 1):
            raise ValueError(f"{self._kind} needs 0 <= delta < 1, got {self.delta!r}")
        if self.mechanism == "laplace" and not self.delta:
            # composition reads a Laplace step's privacy from its noise multiplier (PLD) and
            # from its epsilon (basic composition): the two must agree, or the smaller of
            # the bounds would under-report the spend
            if not (0 <= self.sensitivity < math.inf and self.noise_scale >= 0):
                raise ValueError("a Laplace step needs a finite sensitivity >= 0 and noise_scale >= 0")
            if self.sensitivity > 0 and not (self.epsilon * self.noise_scale >= self.sensitivity * (1 - 1e-9)):
                raise ValueError(
                    f"Laplace step '{self.name}': epsilon={self.epsilon!r} is below sensitivity/noise_scale="
                    f"{self.sensitivity / self.noise_scale if self.noise_scale > 0 else math.inf!r}")

    @property
    def noise_multiplier(self) -> float:
        """noise_scale / sensitivity (dp-accounting's parametrisation)."""
        return self.noise_scale / self.sensitivity if self.sensitivity > 0 else math.inf

    @property
    def mu(self) -> float | None:
        """GDP parameter of all ``count`` repetitions of a Gaussian step, else None."""
        if self.mechanism != "gaussian":
            return None
        return math.sqrt(self.count) * self.sensitivity / self.noise_scale

    @property
    def rho(self) -> float | None:
        """zCDP parameter mu^2/2 of a Gaussian step (Bun & Steinke 2016), else None."""
        mu = self.mu
        return None if mu is None else 0.5 * mu * mu

    def describe_privacy(self) -> str:
        """The step's privacy parameter in words, for reports.

        Returns
        -------
        str
            ``mu`` and ``rho`` for a Gaussian step, else its total epsilon (and delta).
        """
        if self.mechanism == "gaussian":
            return f"mu={self.mu:.4g} (GDP), rho={self.rho:.4g} (zCDP)"
        total_eps = _epsilon_of(self) * self.count
        total_delta = (self.delta or 0.0) * self.count
        if total_delta:
            return f"eps={total_eps:.4g}, delta={total_delta:.3g}"
        return f"eps={total_eps:.4g}"


@dataclass
class PrivacyLedger:
    """Budget and record of one fit: every release is charged here before its noise is drawn.

    Parameters
    ----------
    epsilon, delta : float
        The fit's budget.  ``epsilon = inf`` means a non-private fit (nothing
        may be charged at all: :meth:`charge` refuses every step).
    steps : list of PrivacyStep
        The steps charged so far (empty for a new ledger).

    Examples
    --------
    >>> from dpstats.errors import BudgetExceededError
    >>> from dpstats.privacy import PrivacyLedger, PrivacyStep
    >>> ledger = PrivacyLedger(epsilon=1.0, delta=1e-6)
    >>> ledger.charge(PrivacyStep("a count", "laplace", sensitivity=1.0, sensitivity_norm="L1",
    ...                           noise_scale=2.0, epsilon=0.5))
    >>> ledger.spent
    (0.5, 0.0)
    >>> try:
    ...     ledger.charge(PrivacyStep("another count", "laplace", sensitivity=1.0, sensitivity_norm="L1",
    ...                               noise_scale=1.0, epsilon=1.0))
    ... except BudgetExceededError:
    ...     print("refused: nothing released")
    refused: nothing released
    """

    epsilon: float
    delta: float
    steps: list[PrivacyStep] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def charge(self, step: PrivacyStep) -> None:
        """Record ``step`` if the composed total stays within budget, else raise.

        Parameters
        ----------
        step : PrivacyStep
            The release about to be made.

        Raises
        ------
        BudgetExceededError
            if composing ``step`` with the earlier steps would exceed the budget;
            the step is not recorded and the caller must not release anything.
        """
        with self._lock:
            if not math.isfinite(self.epsilon):
                raise BudgetExceededError(
                    f"step '{step.name}' was charged to a non-private ledger (epsilon={self.epsilon!r}); a "
                    "non-private fit may not draw privacy noise; nothing was released")
            candidate = [*self.steps, step]
            eps, delta = self._total(candidate)
            # written as 'not <=' so that a NaN total is refused (fail closed)
            if not math.isfinite(eps):
                raise BudgetExceededError(self._unaccountable_message(step))
            if not (eps <= self.epsilon * (1 + _REL_TOL) and delta <= self.delta * (1 + _REL_TOL)):
                raise BudgetExceededError(
                    f"step '{step.name}' would bring this fit's spend to "
                    f"(epsilon={eps:.6g}, delta={delta:.3g}), above its budget "
                    f"(epsilon={self.epsilon:.6g}, delta={self.delta:.3g}); nothing was released"
                )
            self.steps.append(step)

    def _unaccountable_message(self, step: PrivacyStep) -> str:
        """Why a step whose composed total is not finite (or NaN) is refused; the lock is held."""
        earlier = self._total(list(self.steps))[0] if self.steps else 0.0
        already = (f"; earlier steps of this fit were released and spent epsilon={earlier:.6g}" if self.steps
                   else ", nor anything else")
        over = [s for s in (*self.steps, step) if s.delta is not None and s.delta > self.delta]
        if self.delta == 0 and any(s.mechanism == "gaussian" for s in (*self.steps, step)):
            why = "a Gaussian release needs delta > 0, and this fit's delta is 0: give the fit a delta > 0"
        elif over:
            why = (f"step '{over[0].name}' alone spends delta={over[0].delta:.3g}, more than the fit's delta: give "
                   "the fit a larger delta")
        else:
            why = (f"no finite bound on the composed spend can be computed in floating point (one fit supports "
                   f"0 < epsilon <= {MAX_EPSILON:g} and {MIN_DELTA:g} <= delta < 1)")
        return (f"step '{step.name}' cannot be accounted for at this fit's budget (epsilon={self.epsilon:.6g}, "
                f"delta={self.delta:.3g}): {why}; this step was not released{already}")

    def _total(self, steps: list[PrivacyStep]) -> tuple[float, float]:
        """The composed (epsilon, delta) of ``steps`` at this ledger's delta (an upper bound).

        Pure ledgers: basic composition.  It is exact for what is sampled: a
        discrete Laplace step is exactly epsilon-DP (see
        :func:`dpstats.privacy.samplers.laplace_plan`).

        Other ledgers are composed (GDP, PLD, basic) for the reference
        mechanisms the steps describe; for a hardened Gaussian step that is the
        continuous Gaussian on the grid-rounded statistic, rounded to the grid
        (post-processing of the textbook mechanism).  The sampled system M
        differs from the reference system R by the steps' closeness
        (Lambda, T) = (sum closeness_epsilon, sum closeness_delta): for every
        event E, P_M(E) <= e^Lambda P_R(E) + T and P_R(E) <= e^Lambda P_M(E) + T
        on the same data (per-step closeness composes adaptively, as in basic
        composition).  Chaining M(D) -> R(D) -> R(D') -> M(D') gives

            P_M(D)(E) <= e^(eps_R + 2 Lambda) P_M(D')(E) + e^Lambda delta_R + (1 + e^(eps_R + Lambda)) T,

        so eps_R is taken at delta_R = :func:`reference_delta` (delta, Lambda, T)
        and the ledger reports eps_R + 2 Lambda.  Lambda is below 1e-22 per
        released coordinate and T below 1e-290, so this costs nothing
        measurable.
        """
        if not steps:
            return 0.0, 0.0
        if is_pure(steps):
            return sum(_epsilon_of(s) * s.count for s in steps), 0.0
        lam = math.fsum(s.closeness_epsilon for s in steps)
        tau = math.fsum(s.closeness_delta for s in steps)
        if lam == 0.0 and tau == 0.0:
            return compose_epsilon(steps, self.delta), self.delta
        delta_r = reference_delta(self.delta, lam, tau)
        if not delta_r > 0:
            return math.inf, self.delta
        eps_r = compose_epsilon(steps, delta_r)
        if not eps_r <= REFERENCE_EPSILON_CAP:  # delta_r assumed eps_R <= the cap
            return math.inf, self.delta
        return eps_r + 2.0 * lam, self.delta

    @property
    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) spent so far, composed as tightly as the steps allow.  A total above the budget by
        no more than the float rounding every charge was admitted with (a relative _REL_TOL: shares of epsilon
        that sum to one in exact arithmetic, such as theilsen's 3 * 0.61 + ... + 3 * 0.02) is the budget."""
        with self._lock:
            eps, delta = self._total(list(self.steps))
        return (self.epsilon if self.epsilon < eps <= self.epsilon * (1.0 + _REL_TOL) else eps), delta

    @property
    def remaining_epsilon(self) -> float:
        """The epsilon left: the budget minus the composed spend (never negative)."""
        return max(0.0, self.epsilon - self.spent[0])
