"""Validation of public arguments (scikit-learn style ``check_*`` helpers).

These checks look only at public facts (the arguments themselves, the schema,
n and d) and run before any budget is spent.
"""

from __future__ import annotations

import math
import numbers

from dpstats.errors import InvalidPrivacyParameterError

__all__ = ["check_privacy_parameters"]


def check_privacy_parameters(epsilon: object, delta: object) -> tuple[float, float]:
    """Return (epsilon, delta) as floats, or raise InvalidPrivacyParameterError.

    epsilon must be > 0 (``inf`` means a non-private fit); delta must lie in
    the open interval (0, 1).
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise InvalidPrivacyParameterError(f"epsilon must be a positive number, got {epsilon!r}")
    eps = float(epsilon)
    if math.isnan(eps) or eps <= 0:
        raise InvalidPrivacyParameterError(
            f"epsilon must be > 0, got {epsilon!r}; typical values are 0.1 to 10 "
            "(use epsilon=float('inf') only with method='ols', which is not private)")
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise InvalidPrivacyParameterError(f"delta must be a number in (0, 1), got {delta!r}")
    dlt = float(delta)
    if not (0 < dlt < 1):
        raise InvalidPrivacyParameterError(
            f"delta must lie strictly between 0 and 1, got {delta!r}; choose delta well below 1/n, "
            "e.g. 1e-6 for n up to a few hundred thousand")
    return eps, dlt
