"""Deprecated alias of :mod:`dpstats.methods.common.sufficient` and :mod:`dpstats.rows`; removed in the next release.

``RowChunks`` is :class:`dpstats.rows.base.Rows`.  Other names warn with a DeprecationWarning: import them from
:mod:`dpstats.methods.common.sufficient` (statistics) or :mod:`dpstats.rows` (``InMemoryRows`` replaces
``ArrayChunks``).
"""

from __future__ import annotations

import warnings
from typing import Any

from dpstats.rows.base import Rows as RowChunks

__all__ = ["RowChunks"]


def __getattr__(name: str) -> Any:
    from dpstats.methods.common import sufficient

    if hasattr(sufficient, name):
        warnings.warn(f"dpstats.methods.sufficient.{name} is deprecated; import it from "
                      "dpstats.methods.common.sufficient", DeprecationWarning, stacklevel=2)
        return getattr(sufficient, name)
    raise AttributeError(f"module 'dpstats.methods.sufficient' has no attribute {name!r}")
