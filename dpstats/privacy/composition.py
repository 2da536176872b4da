"""Composition of the steps of a fit.

Three valid upper bounds are computed and the smallest is used:

* exact GDP composition when every step is Gaussian
  (mu_total = sqrt(sum mu_i^2); Dong, Roth & Su 2022, Cor. 3.3),
* privacy-loss-distribution (PLD) composition through ``dp_accounting`` for
  any mix of Gaussian, Laplace and generic (epsilon, delta) steps
  (pessimistic discretisation, so an upper bound); a discrete Laplace step
  (``discrete=True``) enters as the randomized-response pair of its epsilon,
  which dominates every epsilon-DP mechanism,
* basic composition (epsilon and delta add) when no step is Gaussian.

All bounds are stated for the ledger's target delta.

Robustness: a bound that cannot be computed in floating point (a PLD whose
construction overflows, say an epsilon near 700 where exp(epsilon) exceeds the
double range) is dropped, never raised; if no bound remains the total is
``inf``, which every budget check refuses before anything is released.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from dp_accounting import pld

from dpstats.errors import InvalidPrivacyParameterError
from dpstats.privacy.calibration import gaussian_epsilon

if TYPE_CHECKING:  # pragma: no cover
    from dpstats.privacy.ledger import PrivacyStep

__all__ = ["compose_epsilon", "is_pure"]


def is_pure(steps: Sequence[PrivacyStep]) -> bool:
    """True when every step is pure epsilon-DP (no Gaussian, no delta)."""
    return all(s.mechanism != "gaussian" and not s.delta for s in steps)


def _epsilon_of(step: PrivacyStep) -> float:
    """The epsilon of a non-Gaussian step (``PrivacyStep.__post_init__`` refuses such a step without one)."""
    if step.epsilon is None:
        raise InvalidPrivacyParameterError(f"the {step.mechanism} step '{step.name}' has no epsilon")
    return step.epsilon


def _mu_of(step: PrivacyStep) -> float:
    """The GDP parameter of a Gaussian step (None only for the other mechanisms)."""
    mu = step.mu
    if mu is None:
        raise InvalidPrivacyParameterError(f"the {step.mechanism} step '{step.name}' has no GDP parameter mu")
    return mu


def _gaussian_mu_total(steps: Sequence[PrivacyStep]) -> float:
    return math.sqrt(sum(_mu_of(s)**2 for s in steps if s.mechanism == "gaussian"))


def compose_epsilon(steps: Sequence[PrivacyStep], delta: float) -> float:
    """Epsilon spent by ``steps`` at the target ``delta`` (an upper bound)."""
    if not steps:
        return 0.0
    gaussian = [s for s in steps if s.mechanism == "gaussian"]
    other = [s for s in steps if s.mechanism != "gaussian"]
    mu = _gaussian_mu_total(gaussian)
    if not other:
        return gaussian_epsilon(mu, delta)

    candidates: list[float] = []
    other_delta = sum((s.delta or 0.0) * s.count for s in other)
    other_eps = sum(_epsilon_of(s) * s.count for s in other)
    if not gaussian and other_delta <= delta:
        candidates.append(other_eps)  # basic composition
    if gaussian and other_delta < delta:
        # basic composition of the Gaussian block (exact, at the remaining delta) with the rest
        candidates.append(other_eps + gaussian_epsilon(mu, delta - other_delta))
    pld_eps = _pld_epsilon(mu, other, delta)
    if pld_eps is not None:
        candidates.append(pld_eps)
    if not candidates:
        return math.inf
    return min(candidates)


# --- PLD composition with cached per-step distributions ---------------------------------------------------
#
# Building a privacy-loss distribution (PLD) is the expensive part of PLD accounting (about 0.05-0.1 s for a
# Gaussian or Laplace mechanism); composing two is a few milliseconds.  A ledger re-composes its steps on every
# charge, so the PLD of each step is cached (a step's PLD depends only on its privacy parameters; steps are
# frozen dataclasses), and so is the left fold of the composition: a candidate ledger that extends a ledger
# composed before costs one composition.  The operations and their order are exactly those of the uncached
# left fold [Gaussian block, step 1, step 2, ...], so the numbers are identical.

_FOLD_CACHE_SIZE = 32
_fold_cache: OrderedDict[tuple, Any] = OrderedDict()
_fold_lock = threading.Lock()


def _pld_key(s: PrivacyStep) -> tuple | None:
    """What the PLD of a non-Gaussian step depends on; None for a step with no privacy loss."""
    if s.mechanism == "laplace" and not s.delta and not s.discrete:
        if s.sensitivity == 0 or s.epsilon == 0:
            return None  # no privacy loss (dp_accounting would return NaN for an infinite multiplier)
        return ("laplace", float(s.noise_multiplier), int(s.count))
    # generic (epsilon, delta) steps, and discrete Laplace steps (exactly epsilon-DP; their PLD is not the
    # continuous Laplace's): the randomized-response pair, which dominates every (epsilon, delta)-DP mechanism
    if s.epsilon == 0 and not s.delta:
        return None
    return ("dp", float(_epsilon_of(s)), float(s.delta or 0.0), int(s.count))


@lru_cache(maxsize=64)
def _step_pld(key: tuple) -> Any:
    if key[0] == "laplace":
        base = pld.privacy_loss_distribution.from_laplace_mechanism(parameter=key[1], sensitivity=1.0)
    else:
        base = pld.privacy_loss_distribution.from_privacy_parameters(
            pld.common.DifferentialPrivacyParameters(key[1], key[2]))
    count = key[-1]
    return base if count == 1 else base.self_compose(count)


@lru_cache(maxsize=64)
def _gaussian_pld(mu: float) -> Any:
    return pld.privacy_loss_distribution.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0)


def _fold(mu: float, keys: tuple) -> Any:
    """The left fold gaussian(mu) o step_1 o step_2 o ... (None when there is nothing to compose)."""
    with _fold_lock:
        start, total = len(keys), None
        while start > 0:
            total = _fold_cache.get((mu, keys[:start]))
            if total is not None:
                _fold_cache.move_to_end((mu, keys[:start]))
                break
            start -= 1
    if total is None:
        total = _gaussian_pld(mu) if mu > 0 else None
    for key in keys[start:]:
        step = _step_pld(key)
        total = step if total is None else total.compose(step)
    if keys and start < len(keys):
        with _fold_lock:
            _fold_cache[(mu, keys)] = total
            while len(_fold_cache) > _FOLD_CACHE_SIZE:
                _fold_cache.popitem(last=False)
    return total


#: what dp_accounting raises when a PLD cannot be built in double precision (exp overflow, an infinite
#: number of discretisation buckets, an array too large to allocate)
_NUMERIC_FAILURES = (OverflowError, FloatingPointError, ValueError, MemoryError)


def _pld_epsilon(mu: float, other: Sequence[PrivacyStep], delta: float) -> float | None:
    """PLD composition of a mu-GDP block with the non-Gaussian steps (None when it cannot be computed)."""
    keys = tuple(k for k in (_pld_key(s) for s in other) if k is not None)
    try:
        total = _fold(float(mu), keys)
        if total is None:
            return 0.0
        eps = float(total.get_epsilon_for_delta(delta))
    except _NUMERIC_FAILURES:
        return None  # no PLD bound; the other bounds (or inf, which is refused) stand
    return eps if math.isfinite(eps) else None
