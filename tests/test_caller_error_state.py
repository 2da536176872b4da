"""A caller's numpy floating-point error state does not change what a fit shows on neighbouring data sets.

numpy's error handling is state the caller owns: ``np.seterr(all="raise")`` (or ``"warn"``, ``"call"``) is a
common setting in test suites and notebooks, and it holds in every function that does not enter its own
``np.errstate``.  Underflow is ignored by numpy's default, so code written and audited under the default never
meets it; under ``all="raise"`` a subnormal entry of one row (5e-324, or a product near 1e-320) made the public
rescaling's division raise ``FloatingPointError`` (an ``InternalFitError`` charged in full) where the neighbour with
an ordinary row fitted, and under ``all="warn"`` it printed a ``RuntimeWarning`` for that neighbour alone: a
difference of outcome no noise hides.  A fit now runs under ``np.errstate(all="ignore")`` whatever the caller set,
as the architecture's floating-point rule asks (``docs/architecture.md``, "Extreme finite values").

The checks reuse ``tests/test_neighbour_extremes.py``: one fixed base data set and its neighbours with one extreme
row, fitted with the same seed, compared on everything that is not noise (the exception's type and masked text,
the warnings, the budget spent, the masked summary and its other renderings).  Deterministic (fixed data, seeds
and error state), so the false-failure rate is 0.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_neighbour_extremes import FAST_PATTERNS, SLOW_PATTERNS, _cases, _check

#: the fast version's methods: the rescaling every bounded method shares (ssp), auto's method (pgd), the
#: bound-free methods that read rows in their own ways (tukey's blocks, dpsgd's Poisson samples)
FAST_METHODS = {"ssp": {"bootstrap": 100}, "pgd": {}, "tukey": {}, "dpsgd": {"epochs": 1, "batch_size": 500}}


@pytest.mark.parametrize("state", ["raise", "warn"])
@pytest.mark.parametrize("method, chunked", [(m, c) for m in FAST_METHODS for c in (False, True)])
def test_the_callers_numpy_error_state_changes_nothing_but_noise(state: str, method: str, chunked: bool) -> None:
    with np.errstate(all=state):  # type: ignore[call-overload]
        _check(method, True, chunked, FAST_METHODS[method], n=2000, patterns=["x1=5e-324", "x1=1e300"], positions=1)


def test_a_subnormal_row_under_all_raise_fits_like_its_neighbour() -> None:
    """The case that failed: with bounds, a subnormal x1 under ``np.errstate(all="raise")``."""
    with np.errstate(all="raise"):
        _check("ssp", True, False, {"bootstrap": 100}, n=300, patterns=["x1=5e-324"], positions=1)


@pytest.mark.slow
@pytest.mark.parametrize("state", ["raise", "warn"])
@pytest.mark.parametrize("method, bounded, chunked, options", _cases(slow=True))
def test_the_callers_numpy_error_state_changes_nothing_but_noise_slow(state: str, method: str, bounded: bool,
                                                                      chunked: bool, options: dict[str, Any]) -> None:
    with np.errstate(all=state):  # type: ignore[call-overload]
        _check(method, bounded, chunked, options, n=2000, patterns=SLOW_PATTERNS, positions=1)


def test_the_fast_patterns_include_a_subnormal_row() -> None:
    assert "x1=5e-324" in FAST_PATTERNS and "x1=5e-324" in SLOW_PATTERNS
