"""In-memory rows: the whole array is one chunk.

A pass over in-memory data is one call of the pass on the whole arrays, so
there is no second code path for data in memory: every method reads
:class:`InMemoryRows` exactly as it reads a file or a Dask cluster
(:mod:`dpstats.rows.chunked`).  The arrays handed to a pass are read-only
views (later passes read them again); a pass that needs to modify them copies
them first (see :mod:`dpstats.rows.base`).

``chunk_rows`` cuts the arrays into chunks of that many rows instead, each
handed to the pass as a writeable copy, as a source would: tests use it to
check that a method gives the same answer whatever the partition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from dpstats.rows.base import Combine

__all__ = ["InMemoryRows"]

T = TypeVar("T")


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


class InMemoryRows:
    """:class:`~dpstats.rows.base.Rows` over arrays ``X`` (n x d) and ``y`` (n) held in this process.

    Parameters
    ----------
    X : numpy.ndarray
        The design (after the public rescaling, if any).  Not copied.
    y : numpy.ndarray
        The response.
    chunk_rows : int or None
        None (default): one chunk, passed as read-only views.  An int: chunks
        of that many rows, passed as copies (tests of partition invariance).

    Raises
    ------
    ValueError
        When ``X`` is not two-dimensional or ``y`` not a vector of its length.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.rows import InMemoryRows
    >>> rows = InMemoryRows(np.ones((4, 2)), np.arange(4.0))
    >>> rows.reduce(lambda X, y, offset: float(y.sum()), lambda a, b: a + b)
    6.0
    """

    local = True

    def __init__(self, X: np.ndarray, y: np.ndarray, chunk_rows: int | None = None) -> None:
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        if self.X.ndim != 2 or self.y.ndim != 1 or self.X.shape[0] != self.y.shape[0]:
            raise ValueError("X must be n x d and y of length n")
        self.chunk_rows = None if chunk_rows is None else max(1, int(chunk_rows))
        self.passes = 0

    @property
    def n(self) -> int:
        """The number of rows."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """The number of design columns."""
        return int(self.X.shape[1])

    @property
    def one_chunk(self) -> bool:
        """True when a pass sees the whole arrays at once (the default)."""
        return self.chunk_rows is None

    def reduce(self, pass_fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Combine[T]) -> T:
        """``pass_fn`` on every chunk, combined in row order (see :mod:`dpstats.rows.base`).

        Parameters
        ----------
        pass_fn : callable
            ``pass_fn(X, y, offset) -> T`` on one chunk.
        combine : callable
            ``combine(a, b) -> T``, associative.

        Returns
        -------
        T
            The combined result over all rows.
        """
        self.passes += 1
        if self.chunk_rows is None:
            return self._chunk(pass_fn, _read_only(self.X), _read_only(self.y), 0)
        acc = None
        for start in range(0, max(self.n, 1), self.chunk_rows):
            stop = start + self.chunk_rows
            part = self._chunk(pass_fn, self.X[start:stop].copy(), self.y[start:stop].copy(), start)
            acc = part if acc is None else combine(acc, part)
        return acc  # type: ignore[return-value]

    @staticmethod
    def _chunk(pass_fn: Callable[[np.ndarray, np.ndarray, int], T], X: np.ndarray, y: np.ndarray,
               offset: int) -> T:
        select = getattr(pass_fn, "select", None)
        if select is not None:
            idx = np.asarray(select(offset, X.shape[0]), dtype=np.int64)
            X, y = X[idx], y[idx]
        return pass_fn(X, y, offset)
