"""Deprecated: the old home of the row permutations and block assignments (:mod:`dpstats.methods.common.permutations`)
and of TukeyEM's per-block sums (:mod:`dpstats.methods.tukey.block_sums`); every name warns with a DeprecationWarning
and is removed in the next release."""

from __future__ import annotations

import warnings
from typing import Any

__all__: list[str] = []

_MOVED = {"RowPermutation": "dpstats.methods.common.permutations",
          "WindowedBlocks": "dpstats.methods.common.permutations",
          "ShiftedBlockSums": "dpstats.methods.tukey.block_sums", "block_sums": "dpstats.methods.tukey.block_sums"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        import importlib

        warnings.warn(f"dpstats.methods.blocks.{name} is deprecated; import it from {_MOVED[name]}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'dpstats.methods.blocks' has no attribute {name!r}")
