"""Deprecated alias of :mod:`dpstats.methods.common.linalg`; import from there (kept for one release)."""

from __future__ import annotations

import warnings

from dpstats.methods.common.linalg import psd_projection, psd_sqrt, solve_noisy_normal_equations

__all__ = ["solve_noisy_normal_equations", "psd_projection", "psd_sqrt"]

warnings.warn("dpstats.methods.linalg is deprecated; import from dpstats.methods.common.linalg", DeprecationWarning,
              stacklevel=2)
