"""Deprecated alias of :mod:`dpstats.methods.common.robust_estimators`; import from there (kept for one release)."""

from __future__ import annotations

import warnings

from dpstats.methods.common.robust_estimators import *  # noqa: F403
from dpstats.methods.common.robust_estimators import __all__  # noqa: F401

warnings.warn("dpstats.methods.robust_estimators is deprecated; import from dpstats.methods.common.robust_estimators",
              DeprecationWarning, stacklevel=2)
