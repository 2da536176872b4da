"""TEMPORARY alias of :mod:`dpstats.methods.common.permutations` (and of TukeyEM's per-block sums).

robgd, ambssgd, lasso and private_centring, not yet ported to the ``fit(rows, ctx, options)`` interface,
import :class:`~dpstats.methods.common.permutations.RowPermutation` from here; remove this module when they
import it from :mod:`dpstats.methods.common.permutations`.  Other names warn with a DeprecationWarning.
"""

from __future__ import annotations

import warnings
from typing import Any

from dpstats.methods.common.permutations import RowPermutation

__all__ = ["RowPermutation"]

_MOVED = {"WindowedBlocks": "dpstats.methods.common.permutations", "BlockedRows": "dpstats.methods.common.permutations",
          "ShiftedBlockSums": "dpstats.methods.tukey.block_sums", "block_sums": "dpstats.methods.tukey.block_sums"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib

        warnings.warn(f"dpstats.methods.blocks.{name} is deprecated; import it from {_MOVED[name]}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'dpstats.methods.blocks' has no attribute {name!r}")
