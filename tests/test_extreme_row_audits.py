"""Black-box privacy audits of the bound-free methods on their worst case: one row at the 1e154 scale.

TukeyEM, DP-RobGD and DP-AMBSSGD take every finite double.  Before issue 15 (item 4) was fixed, one row with
entries near 3e154 (their squares overflow) made each of them behave deterministically differently on the
neighbour that has it: numpy overflow warnings (all three), an untyped exception (TukeyEM), a NaN released
without noise (robgd, ambssgd: the API then refused non-finite coefficients).  A black-box review measured
empirical epsilon lower bounds of 3.3 and 2.9 against a claim of 1.

Each audit here fits the method through the public API on D and on D' (one row replaced by the extreme row),
with fresh seeded noise per run (:func:`dpstats.privacy.audit.audit_mechanism`), and maps every run to one
number that shows all of what a user sees: the first coefficient when the fit returns without a warning, a
sentinel when it warns, another when it raises.  The (1 - alpha) Clopper-Pearson lower bound on epsilon must
stay at or below the claimed epsilon.  For a correct (epsilon, delta)-DP fit it exceeds the claim with
probability at most alpha = 1e-3 (the false-failure rate of each audit, over seeds; the seeds are fixed, so
every run is reproducible).  A deterministic difference (an outcome on every run of D' and no run of D) gives
a bound of log(p / (1 - p)), p = (alpha / 2)^(2 / runs): 1.24 with the fast 60 runs per data set, above the
claim of 1, so the fast audits catch the holes that were fixed
(``test_the_audit_catches_the_warnings_that_were_fixed`` shows it, by letting numpy's warnings through).
The slow audits use n = 20,000 (the review's size), an intercept (the private centring path) and 600 runs.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import dpstats
from dpstats.methods.common import extremes
from dpstats.privacy.audit import AuditResult, audit_mechanism

ALPHA = 1e-3  # false-failure rate of each validity audit
EPSILON, DELTA = 1.0, 1e-5
FAST_N, FAST_RUNS = 4000, 60
SLOW_N, SLOW_RUNS = 20_000, 600
WARNED, RAISED = 1e6, 2e6  # what a run that warns or raises maps to (the coefficients are of order 1)
EXTREME_ROW = {"x": (3e154, 0.5), "y": -3e154}  # squares overflow; x1 times a coefficient of 1 does not
METHODS = ["tukey", "robgd", "ambssgd"]

Pair = tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


def _pair(n: int) -> Pair:
    """D (Gaussian design, y = x1 - 0.5 x2 + noise) and D' with row 777 replaced by the extreme row."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = X @ np.array([1.0, -0.5]) + 0.3 * rng.normal(size=n)
    Xp, yp = X.copy(), y.copy()
    Xp[777], yp[777] = EXTREME_ROW["x"], EXTREME_ROW["y"]
    return (X, y), (Xp, yp)


def _run(method: str, intercept: bool) -> Callable[[tuple[np.ndarray, np.ndarray], np.random.Generator], float]:
    def run(data: tuple[np.ndarray, np.ndarray], rng: np.random.Generator) -> float:
        X, y = data
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                res = dpstats.dp_ols_arrays(X, y, epsilon=EPSILON, delta=DELTA, method=method, intercept=intercept,
                                            random_state=rng)
            except Exception:  # noqa: BLE001 - a refusal is an output too
                return RAISED
        return WARNED if caught else float(res.params.iloc[-2])  # the coefficient of x1
    return run


@contextlib.contextmanager
def _warnings_let_through() -> Iterator[None]:
    """numpy warns about overflows and invalid values where the methods silence them (extremes.QUIET)."""
    saved = dict(extremes.QUIET)
    extremes.QUIET.clear()
    extremes.QUIET.update(over="warn", invalid="warn", divide="ignore", under="ignore")
    try:
        yield
    finally:
        extremes.QUIET.clear()
        extremes.QUIET.update(saved)


def _audit(method: str, n: int, runs: int, seed: int, intercept: bool = False) -> AuditResult:
    d, dp = _pair(n)
    return audit_mechanism(_run(method, intercept), d, dp, runs=runs, delta=DELTA, alpha=ALPHA, seed=seed)


@pytest.mark.parametrize("method", METHODS)
def test_audit_one_extreme_row(method: str) -> None:
    """False-failure rate alpha = 1e-3.  No intercept, so the fit is cheap (no private centring)."""
    res = _audit(method, FAST_N, FAST_RUNS, seed=31)
    assert res.epsilon_lower_bound <= EPSILON


def test_the_audit_catches_the_warnings_that_were_fixed() -> None:
    """With numpy's overflow and invalid-value warnings let through where the methods silence them, the extreme
    row warns on every run of D' and on none of D: the fast audit flags it (bound 1.24 > 1; deterministic, so
    this check cannot fail by chance).  So the pair does reach the overflowing arithmetic and the audit has the
    power to see the leak that the fix removed."""
    with _warnings_let_through():
        res = _audit("tukey", FAST_N, FAST_RUNS, seed=32)
    assert res.epsilon_lower_bound > EPSILON


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_audit_one_extreme_row_slow(method: str) -> None:
    """False-failure rate alpha = 1e-3 per method; n = 20,000 with an intercept (private centring)."""
    res = _audit(method, SLOW_N, SLOW_RUNS, seed=41, intercept=True)
    assert res.epsilon_lower_bound <= EPSILON


@pytest.mark.slow
@pytest.mark.parametrize("method", ["robgd", "ambssgd"])
def test_the_audit_catches_the_warnings_that_were_fixed_slow(method: str) -> None:
    """As the fast check, for the two descent methods (deterministic: the bound is 1.24 on every seed)."""
    with _warnings_let_through():
        res = _audit(method, FAST_N, FAST_RUNS, seed=42)
    assert res.epsilon_lower_bound > EPSILON
