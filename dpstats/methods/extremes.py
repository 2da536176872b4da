"""Deprecated alias of :mod:`dpstats.methods.common.extremes`; import from there (kept for one release)."""

from __future__ import annotations

import warnings

from dpstats.methods.common.extremes import *  # noqa: F403
from dpstats.methods.common.extremes import __all__  # noqa: F401

warnings.warn("dpstats.methods.extremes is deprecated; import from dpstats.methods.common.extremes",
              DeprecationWarning, stacklevel=2)
