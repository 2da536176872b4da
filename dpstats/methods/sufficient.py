"""TEMPORARY alias of :mod:`dpstats.methods.common.sufficient` and :mod:`dpstats.rows`.

The methods not yet ported to the ``fit(rows, ctx, options)`` interface (tukey, robgd, ambssgd, dpsgd, lasso)
import ``RowChunks`` from here; it is :class:`dpstats.rows.base.Rows`.  Remove this module when they are
ported.  Other names warn with a DeprecationWarning: import them from :mod:`dpstats.methods.common.sufficient`
(statistics) or :mod:`dpstats.rows` (``InMemoryRows`` replaces ``ArrayChunks``).
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
