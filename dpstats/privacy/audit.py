"""Black-box statistical privacy audits.

An (epsilon, delta)-DP mechanism M satisfies, for every pair of neighbouring
data sets D, D' and every event S,

    P[M(D) in S] <= exp(epsilon) P[M(D') in S] + delta.

Run M many times on a worst-case neighbouring pair, pick an event S (a
threshold on a scalar statistic of the output), and turn Clopper-Pearson
bounds on p = P[M(D) in S] and q = P[M(D') in S] into a one-sided lower
confidence bound on epsilon (Jagielski, Ullman & Oprea 2020; Nasr et al. 2021):

    epsilon_lb = log((p_lo - delta) / q_hi).

The event is chosen on one half of the runs and evaluated on the other, so the
bound is valid despite the search: for a mechanism that truly is
(epsilon, delta)-DP, ``epsilon_lb > epsilon`` happens with probability at most
``alpha`` (the false-failure rate of a test that asserts
``epsilon_lb <= epsilon``).  A mechanism with too little noise is caught when
its real epsilon exceeds the claim by enough for the number of runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["AuditResult", "clopper_pearson", "epsilon_lower_bound", "audit_samples", "audit_mechanism"]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of an audit (:func:`audit_samples`, :func:`audit_mechanism`).

    Attributes
    ----------
    epsilon_lower_bound : float
        A (1 - alpha) lower confidence bound on the mechanism's epsilon.
    threshold : float
        The event used: statistic > threshold (direction +1) or < threshold
        (-1), with D and D' swapped when ``swapped``.
    direction : int
        +1 or -1.
    swapped : bool
        Whether the event was evaluated with D and D' swapped.
    p_hat, q_hat : float
        Empirical frequencies of the event on the evaluation half.
    runs : int
        Runs per data set.
    alpha, delta : float
        The error level and the delta assumed.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.privacy.audit import audit_samples
    >>> rng = np.random.default_rng(0)
    >>> result = audit_samples(rng.normal(0, 1, 2000), rng.normal(0, 1, 2000))
    >>> result.epsilon_lower_bound < 0.5
    True
    """

    epsilon_lower_bound: float
    threshold: float
    direction: int
    swapped: bool
    p_hat: float
    q_hat: float
    runs: int
    alpha: float
    delta: float


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Two one-sided (1 - alpha) Clopper-Pearson bounds on a binomial rate.

    Parameters
    ----------
    k : int
        Successes.
    n : int
        Trials.
    alpha : float
        Error level of each bound.

    Returns
    -------
    tuple of float
        (lower, upper): 0 when k = 0 and 1 when k = n.

    Examples
    --------
    >>> from dpstats.privacy.audit import clopper_pearson
    >>> lo, hi = clopper_pearson(50, 100, 0.025)
    >>> bool(0.39 < lo < 0.5 < hi < 0.61)
    True
    """
    lo = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def epsilon_lower_bound(k_p: int, k_q: int, n: int, delta: float, alpha: float) -> float:
    """Lower confidence bound on epsilon from the counts of an event on D and on D'.

    Each one-sided bound is taken at level alpha/2, so the result is a valid
    (1 - alpha) lower bound.

    Parameters
    ----------
    k_p : int
        Runs on D in which the event happened.
    k_q : int
        Runs on D' in which it happened.
    n : int
        Runs on each data set.
    delta : float
        The delta the mechanism claims.
    alpha : float
        Error level of the bound.

    Returns
    -------
    float
        ``log((p_lo - delta) / q_hi)``, or 0 when that is not positive.

    Examples
    --------
    >>> from dpstats.privacy.audit import epsilon_lower_bound
    >>> round(epsilon_lower_bound(900, 100, 1000, delta=0.0, alpha=0.05), 2)
    1.99
    """
    p_lo, _ = clopper_pearson(k_p, n, alpha / 2)
    _, q_hi = clopper_pearson(k_q, n, alpha / 2)
    if p_lo <= delta or q_hi <= 0:
        return 0.0
    return max(0.0, math.log((p_lo - delta) / q_hi))


def _best_event(a: np.ndarray, b: np.ndarray, delta: float, alpha: float, grid: int) -> tuple[float, int, bool]:
    pooled = np.concatenate([a, b])
    thresholds = np.unique(np.quantile(pooled, np.linspace(0.005, 0.995, grid)))
    best = (-1.0, float(thresholds[0]), 1, False)
    sa, sb = np.sort(a), np.sort(b)
    n = a.size
    for t in thresholds:
        above_a = n - np.searchsorted(sa, t, side="right")
        above_b = n - np.searchsorted(sb, t, side="right")
        below_a = np.searchsorted(sa, t, side="left")
        below_b = np.searchsorted(sb, t, side="left")
        for k_p, k_q, direction, swapped in ((above_a, above_b, 1, False), (below_a, below_b, -1, False),
                                              (above_b, above_a, 1, True), (below_b, below_a, -1, True)):
            e = epsilon_lower_bound(int(k_p), int(k_q), n, delta, alpha)
            if e > best[0]:
                best = (e, float(t), direction, swapped)
    return best[1], best[2], best[3]


def audit_samples(samples_d: np.ndarray, samples_dprime: np.ndarray, *, delta: float = 0.0,
                  alpha: float = 1e-3, grid: int = 60, rng: np.random.Generator | None = None) -> AuditResult:
    """Audit from scalar outputs of a mechanism run on D and on D' (equal numbers of runs).

    Half of the runs choose the event, the other half bound epsilon.

    Parameters
    ----------
    samples_d, samples_dprime : array_like
        The outputs on D and on D' (at least 20 runs each, finite).
    delta : float
        The delta the mechanism claims.
    alpha : float
        Error level: a truly (epsilon, delta)-DP mechanism gives a bound above
        epsilon with probability at most alpha.
    grid : int
        Number of candidate thresholds for the event.
    rng : numpy.random.Generator, optional
        Splits the runs into halves (default: seed 0).

    Returns
    -------
    AuditResult
        The bound and the event it used.

    Raises
    ------
    ValueError
        Different numbers of runs, fewer than 20, or non-finite outputs.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.privacy.audit import audit_samples
    >>> rng = np.random.default_rng(0)
    >>> result = audit_samples(rng.normal(0, 1, 2000), rng.normal(1, 1, 2000))
    >>> result.epsilon_lower_bound > 0
    True
    """
    a = np.asarray(samples_d, dtype=float).ravel()
    b = np.asarray(samples_dprime, dtype=float).ravel()
    if a.size != b.size or a.size < 20:
        raise ValueError("need the same number (>= 20) of runs on D and on D'")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("audited outputs must be finite")
    rng = rng if rng is not None else np.random.default_rng(0)
    a, b = rng.permutation(a), rng.permutation(b)
    half = a.size // 2
    t, direction, swapped = _best_event(a[:half], b[:half], delta, alpha, grid)
    ea, eb = a[half:], b[half:]
    if swapped:
        ea, eb = eb, ea
    in_a = (ea > t) if direction > 0 else (ea < t)
    in_b = (eb > t) if direction > 0 else (eb < t)
    k_p, k_q, n = int(in_a.sum()), int(in_b.sum()), ea.size
    return AuditResult(epsilon_lower_bound=epsilon_lower_bound(k_p, k_q, n, delta, alpha), threshold=t,
                       direction=direction, swapped=swapped, p_hat=k_p / n, q_hat=k_q / n, runs=a.size,
                       alpha=alpha, delta=delta)


def audit_mechanism(run: Callable[[Any, np.random.Generator], Any], data: Any, neighbour: Any, *, runs: int,
                    delta: float = 0.0, statistic: Callable[[Any], float] | None = None, alpha: float = 1e-3,
                    seed: int = 0) -> AuditResult:
    """Run a mechanism many times on each of a neighbouring pair and audit a scalar statistic.

    Parameters
    ----------
    run : callable
        ``run(dataset, rng) -> output``: one run of the mechanism.
    data, neighbour : object
        The neighbouring pair.
    runs : int
        Runs on each data set.
    delta : float
        The delta the mechanism claims.
    statistic : callable, optional
        Maps one output to a float (default: the output itself, or its first
        coordinate).
    alpha : float
        Error level of the bound.
    seed : int
        Seeds every run, so the audit is reproducible.

    Returns
    -------
    AuditResult
        The bound and the event it used.

    Examples
    --------
    >>> from dpstats.privacy import PrivacyLedger
    >>> from dpstats.privacy.audit import audit_mechanism
    >>> from dpstats.privacy.mechanisms import laplace_mechanism
    >>> def count(data, rng):  # a count (sensitivity 1) released with epsilon = 1
    ...     return laplace_mechanism(float(sum(data)), l1_sensitivity=1.0, epsilon=1.0, rng=rng,
    ...                              ledger=PrivacyLedger(1.0, 0.0), name="count")
    >>> result = audit_mechanism(count, [1, 0, 1], [1, 1, 1], runs=2000)
    >>> result.epsilon_lower_bound <= 1.0
    True
    """
    stat = statistic or (lambda out: float(np.ravel(out)[0]))
    root = np.random.SeedSequence(seed)
    s_d, s_dp = root.spawn(2)
    rng_d, rng_dp = np.random.default_rng(s_d), np.random.default_rng(s_dp)
    a = np.fromiter((stat(run(data, rng_d)) for _ in range(runs)), dtype=float, count=runs)
    b = np.fromiter((stat(run(neighbour, rng_dp)) for _ in range(runs)), dtype=float, count=runs)
    return audit_samples(a, b, delta=delta, alpha=alpha, rng=np.random.default_rng(seed + 1))
