"""Helpers shared by the chunked-data tests (tests/test_chunked.py, tests/test_chunked_sgd.py).

A plain module beside the tests, imported as ``chunk_helpers``: tests/ has no ``__init__.py``, so pytest's
default ("prepend") import mode puts this folder on ``sys.path`` before it imports a test module in it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pandas as pd

from dpstats.rows.sources import DataSource

__all__ = ["UnreadableSource"]


class UnreadableSource(DataSource):
    """A source with a schema (and, optionally, a row count from metadata, as for Parquet) whose data must never
    be read: reading a chunk fails the test.  Used to show that refusals are decided from public facts."""

    kind = "unreadable"

    def __init__(self, schema: pd.DataFrame, known_rows: int | None = None) -> None:
        self._schema = schema
        self._known_rows = known_rows

    def schema(self) -> pd.DataFrame:
        return self._schema.iloc[:0]

    def known_rows(self) -> int | None:
        return self._known_rows

    def frames(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        raise AssertionError("the data were read")
