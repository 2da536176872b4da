"""Deprecated: chunked data now go through the one pipeline (:mod:`dpstats.pipeline`) and :mod:`dpstats.rows`.

Kept for one release: importing this module warns with a DeprecationWarning.
``ChunkEvaluator``, ``ChunkTask`` and ``ChunkedRows`` live in
:mod:`dpstats.rows.chunked`; every registered method reads chunked data, so
:func:`chunked_methods` lists them all.
"""

from __future__ import annotations

import warnings

from dpstats.methods.registry import available_methods
from dpstats.rows.chunked import ChunkedRows, ChunkEvaluator, ChunkTask

__all__ = ["ChunkEvaluator", "ChunkTask", "ChunkedRows", "chunked_methods"]

warnings.warn("dpstats.chunked is deprecated: see dpstats.rows.chunked (every method reads chunked data)",
              DeprecationWarning, stacklevel=2)


def chunked_methods() -> list[str]:
    """Names of the registered methods that can fit data read in chunks: all of them."""
    return sorted(available_methods())
