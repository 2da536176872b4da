"""Composition of the steps of a fit.

Three valid upper bounds are computed and the smallest is used:

* exact GDP composition when every step is Gaussian
  (mu_total = sqrt(sum mu_i^2); Dong, Roth & Su 2022, Cor. 3.3),
* privacy-loss-distribution (PLD) composition through ``dp_accounting`` for
  any mix of Gaussian, Laplace and generic (epsilon, delta) steps
  (pessimistic discretisation, so an upper bound),
* basic composition (epsilon and delta add) when no step is Gaussian.

All bounds are stated for the ledger's target delta.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

from dp_accounting import pld

from dpstats.privacy.calibration import gaussian_epsilon

if TYPE_CHECKING:  # pragma: no cover
    from dpstats.privacy.ledger import PrivacyStep

__all__ = ["compose_epsilon", "is_pure"]


def is_pure(steps: Sequence["PrivacyStep"]) -> bool:
    """True when every step is pure epsilon-DP (no Gaussian, no delta)."""
    return all(s.mechanism != "gaussian" and not s.delta for s in steps)


def _gaussian_mu_total(steps: Sequence["PrivacyStep"]) -> float:
    return math.sqrt(sum(s.mu**2 for s in steps if s.mechanism == "gaussian"))


def compose_epsilon(steps: Sequence["PrivacyStep"], delta: float) -> float:
    """Epsilon spent by ``steps`` at the target ``delta`` (an upper bound)."""
    if not steps:
        return 0.0
    gaussian = [s for s in steps if s.mechanism == "gaussian"]
    other = [s for s in steps if s.mechanism != "gaussian"]
    mu = _gaussian_mu_total(gaussian)
    if not other:
        return gaussian_epsilon(mu, delta)

    candidates = []
    other_delta = sum((s.delta or 0.0) * s.count for s in other)
    other_eps = sum(s.epsilon * s.count for s in other)  # type: ignore[operator]
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


def _pld_epsilon(mu: float, other: Sequence["PrivacyStep"], delta: float) -> float | None:
    """PLD composition of a mu-GDP block with the non-Gaussian steps."""
    dists = []
    if mu > 0:
        dists.append(pld.privacy_loss_distribution.from_gaussian_mechanism(
            standard_deviation=1.0 / mu, sensitivity=1.0))
    for s in other:
        if s.mechanism == "laplace" and not s.delta:
            if s.sensitivity == 0 or s.epsilon == 0:
                continue  # no privacy loss (dp_accounting would return NaN for an infinite multiplier)
            base = pld.privacy_loss_distribution.from_laplace_mechanism(
                parameter=s.noise_multiplier, sensitivity=1.0)
        else:
            if s.epsilon == 0 and not s.delta:
                continue
            base = pld.privacy_loss_distribution.from_privacy_parameters(
                pld.common.DifferentialPrivacyParameters(s.epsilon, s.delta or 0.0))
        dists.append(base if s.count == 1 else base.self_compose(s.count))
    if not dists:
        return 0.0
    total = dists[0]
    for d in dists[1:]:
        total = total.compose(d)
    eps = total.get_epsilon_for_delta(delta)
    return float(eps) if math.isfinite(eps) else None
