"""Deprecated alias of :mod:`dpstats.rows.sources` (CSV, Parquet and Dask sources); import from there.

Kept for one release: importing this module warns with a DeprecationWarning.
"""

from __future__ import annotations

import warnings

from dpstats.rows.sources import (  # noqa: F401 - re-exported
    DEFAULT_CHUNK_ROWS,
    CSVSource,
    DaskSource,
    DataFrameSource,
    DataSource,
    ParquetSource,
    as_source,
    is_chunked_data,
    is_dask_frame,
    single_threaded_blas,
)

__all__ = ["DataSource", "DataFrameSource", "CSVSource", "ParquetSource", "DaskSource", "as_source",
           "is_chunked_data", "DEFAULT_CHUNK_ROWS"]

warnings.warn("dpstats.sources is deprecated; import the sources from dpstats.rows.sources", DeprecationWarning,
              stacklevel=2)
