"""Exact calibration of the Gaussian mechanism.

The Gaussian mechanism that adds N(0, s^2 I) to a statistic of L2 sensitivity
Delta is mu-GDP with mu = Delta / s (Dong, Roth & Su 2022, Thm 2.7), and it is
(epsilon, delta)-DP exactly when (Balle & Wang 2018, Thm 8)

    delta >= Phi(-epsilon/mu + mu/2) - exp(epsilon) * Phi(-epsilon/mu - mu/2).

This curve is tight, so calibrating through it spends no budget on slack, unlike
the classic s = Delta * sqrt(2 ln(1.25/delta)) / epsilon.  Composition of
Gaussian mechanisms is exact in GDP: mu_total = sqrt(sum mu_i^2).

The search for mu uses :func:`dp_accounting.get_sigma_gaussian` (the analytic
Gaussian mechanism of Balle & Wang); the result is then verified against the
formula above and nudged to the safe side, so a calibrated release never
exceeds its (epsilon, delta) by floating-point slack.
"""

from __future__ import annotations

import math
from functools import lru_cache

import dp_accounting
import numpy as np
from scipy.special import log_ndtr

from dpstats.errors import UnsupportedPrivacyParameterError
from dpstats.validation import MAX_EPSILON, MIN_DELTA

__all__ = ["gaussian_delta", "gaussian_epsilon", "gaussian_mu", "gaussian_sigma", "split_mu"]

_SAFETY = 1.0 - 1e-9


def gaussian_delta(mu: float, epsilon: float) -> float:
    """delta(epsilon) of a mu-GDP mechanism (Balle & Wang 2018, Thm 8).

    Computed in log space so that tiny deltas (1e-12 and below) stay accurate.

    Parameters
    ----------
    mu : float
        The GDP parameter (0: no release; inf: no noise).
    epsilon : float
        The epsilon at which to read the privacy curve (>= 0).

    Returns
    -------
    float
        The smallest delta such that the mechanism is (epsilon, delta)-DP.

    Examples
    --------
    >>> from dpstats.privacy import gaussian_delta
    >>> round(gaussian_delta(0.5, 1.0), 6)
    0.00683
    """
    if mu <= 0:
        return 0.0
    if not math.isfinite(mu):
        return 1.0
    if epsilon == math.inf:
        return 0.0
    a = log_ndtr(-epsilon / mu + mu / 2.0)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2.0)
    if b >= a:
        # The true delta is positive for every finite epsilon; b >= a only happens when
        # 1 - exp(b - a) cancels to nothing in floating point.  Return the upper bound
        # Phi(-epsilon/mu + mu/2) instead of 0, so that rounding can never certify a
        # Gaussian mechanism as (epsilon, 0)-DP.
        return float(math.exp(a))
    return float(math.exp(a) * -math.expm1(b - a))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon >= 0 at which a mu-GDP mechanism is (epsilon, delta)-DP.

    Cached: a ledger re-composes its steps on every charge and report, and the
    same (mu, delta) recur across fits.

    Parameters
    ----------
    mu : float
        The GDP parameter.
    delta : float
        The delta at which to read the privacy curve.

    Returns
    -------
    float
        The epsilon (bisection to machine precision, rounded up); inf when
        delta = 0 or mu = inf.

    Examples
    --------
    >>> from dpstats.privacy import gaussian_epsilon, gaussian_mu
    >>> round(gaussian_epsilon(gaussian_mu(1.0, 1e-6), 1e-6), 6)
    1.0
    """
    return _gaussian_epsilon(float(mu), float(delta))


@lru_cache(maxsize=65536)
def _gaussian_epsilon(mu: float, delta: float) -> float:
    if mu <= 0:
        return 0.0
    if not (math.isfinite(mu) and delta > 0):
        return math.inf  # a Gaussian mechanism is never (epsilon, 0)-DP; mu = inf is no noise
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gaussian_delta(mu, hi) > delta:
        hi *= 2.0
        if not math.isfinite(hi):
            return math.inf
    lo = 0.0
    for _ in range(200):  # bisection to machine precision; returns the upper end (safe)
        mid = 0.5 * (lo + hi)
        if gaussian_delta(mu, mid) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-13 * hi:
            break
    return hi


@lru_cache(maxsize=4096)
def gaussian_mu(epsilon: float, delta: float) -> float:
    """Largest mu (up to 1e-9 relative slack) such that mu-GDP implies (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float
        The budget's epsilon (> 0; inf gives mu = inf, no noise).
    delta : float
        The budget's delta, in (0, 1).

    Returns
    -------
    float
        mu, verified against the exact curve of :func:`gaussian_delta`.

    Raises
    ------
    ValueError
        When epsilon <= 0 or delta is not in (0, 1).
    UnsupportedPrivacyParameterError
        When (epsilon, delta) cannot be calibrated in floating point.

    Examples
    --------
    >>> from dpstats.privacy import gaussian_mu
    >>> round(gaussian_mu(1.0, 1e-6), 4)
    0.2367
    """
    if not (epsilon > 0 and 0 < delta < 1):
        raise ValueError("gaussian_mu needs epsilon > 0 and 0 < delta < 1")
    if math.isinf(epsilon):
        return math.inf
    try:
        with np.errstate(all="ignore"):  # the result is checked below
            sigma = float(dp_accounting.get_sigma_gaussian(epsilon, delta))
    except (ValueError, OverflowError, FloatingPointError, ZeroDivisionError):
        sigma = math.nan  # the root finder met NaN or overflow: (epsilon, delta) is beyond double precision
    if not (0 < sigma < math.inf):
        raise UnsupportedPrivacyParameterError(
            f"the Gaussian mechanism cannot be calibrated in floating point at (epsilon={epsilon!r}, "
            f"delta={delta!r}); one fit supports 0 < epsilon <= {MAX_EPSILON:g} and {MIN_DELTA:g} <= delta < 1; "
            "nothing was spent")
    mu = _SAFETY / sigma
    while gaussian_delta(mu, epsilon) > delta:  # guard against the root finder's last ulp
        mu *= _SAFETY
    return mu


def gaussian_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """Noise standard deviation of an exactly calibrated (epsilon, delta) Gaussian mechanism.

    Parameters
    ----------
    l2_sensitivity : float
        The L2 sensitivity of the released statistic.
    epsilon, delta : float
        The budget of the release.

    Returns
    -------
    float
        ``l2_sensitivity / gaussian_mu(epsilon, delta)``.

    Raises
    ------
    ValueError, UnsupportedPrivacyParameterError
        As for :func:`gaussian_mu`.

    Examples
    --------
    >>> from dpstats.privacy import gaussian_sigma
    >>> round(gaussian_sigma(2.0, 1.0, 1e-6), 4)
    8.4494
    """
    return float(l2_sensitivity) / gaussian_mu(float(epsilon), float(delta))


def split_mu(mu: float, weights: np.ndarray | list[float]) -> np.ndarray:
    """Split a GDP budget mu over releases in proportion to ``weights`` (mu^2 adds up).

    Parameters
    ----------
    mu : float
        The GDP budget to split.
    weights : array_like of float
        One positive weight per release.

    Returns
    -------
    numpy.ndarray
        mu_i = mu * sqrt(w_i / sum(w)), so that sqrt(sum mu_i^2) = mu.

    Raises
    ------
    ValueError
        When a weight is not positive.

    Examples
    --------
    >>> from dpstats.privacy import split_mu
    >>> split_mu(1.0, [1, 3]).round(4)
    array([0.5  , 0.866])
    """
    w = np.asarray(weights, dtype=float)
    if np.any(w <= 0):
        raise ValueError("budget weights must be positive")
    return mu * np.sqrt(w / w.sum())
