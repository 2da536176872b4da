"""How a method sees data: :class:`~dpstats.rows.base.Rows` and the runners behind it.

* :mod:`dpstats.rows.base`: the ``Rows`` protocol and the conventions of a pass;
* :mod:`dpstats.rows.memory`: :class:`InMemoryRows` (the whole array is one chunk);
* :mod:`dpstats.rows.chunked`: :class:`~dpstats.rows.chunked.ChunkedRows` over a source, evaluated chunk by chunk;
* :mod:`dpstats.rows.sources`: CSV, Parquet, DataFrame-in-chunks and Dask sources.

``dpstats.rows.chunked`` and ``dpstats.rows.sources`` are imported on use (they need the formula layer and,
for Parquet and Dask, the optional extras).
"""

from dpstats.rows.base import Combine, Pass, Rows, writable
from dpstats.rows.memory import InMemoryRows

__all__ = ["Rows", "Pass", "Combine", "InMemoryRows", "writable"]
