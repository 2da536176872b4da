"""Deprecated alias of :mod:`dpstats.methods.common.row_passes` (and of
:class:`~dpstats.methods.common.permutations.WindowedOrder`); import from there (kept for one release)."""

from __future__ import annotations

import warnings

from dpstats.methods.common.permutations import WindowedOrder
from dpstats.methods.common.row_passes import *  # noqa: F403
from dpstats.methods.common.row_passes import __all__ as _common

__all__ = [*_common, "WindowedOrder"]

warnings.warn("dpstats.methods.row_passes is deprecated; import from dpstats.methods.common.row_passes "
              "(WindowedOrder: dpstats.methods.common.permutations)", DeprecationWarning, stacklevel=2)
