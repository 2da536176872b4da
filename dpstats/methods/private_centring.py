"""Deprecated alias of :mod:`dpstats.methods.common.private_centring`; import from there (kept for one release)."""

from __future__ import annotations

import warnings

from dpstats.methods.common.private_centring import *  # noqa: F403
from dpstats.methods.common.private_centring import __all__  # noqa: F401

warnings.warn("dpstats.methods.private_centring is deprecated; import from dpstats.methods.common.private_centring",
              DeprecationWarning, stacklevel=2)
