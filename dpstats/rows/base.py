"""How a method sees data: the :class:`Rows` protocol and the conventions of a pass.

A method never sees a DataFrame, a file or a cluster.  It sees :class:`Rows`:
the public shape (``n``, ``d``), whether the rows are in this process
(``local``), and :meth:`Rows.reduce`, which evaluates a *pass* on every chunk
of rows and combines the partial results::

    result = rows.reduce(pass_fn, combine)

* ``pass_fn(X, y, offset) -> T`` gets one chunk: ``X`` (rows x d) and ``y``
  (rows), already through the public design and the public rescaling, and
  ``offset``, the global index of the chunk's first row in the rows' fixed
  order (rows of earlier chunks come first).
* ``combine(a, b) -> T`` is associative and may update ``a`` in place (``a``
  is the runner's own accumulator); chunks are combined in row order.
* A pass may define ``select(offset, count) -> indices``: only those rows of
  the chunk (local indices into its ``count`` rows) are evaluated and handed
  to ``pass_fn`` (``offset`` still refers to the chunk's first row).
* A pass with ``select`` may name its selection with ``selection`` (any
  object; passes whose ``selection`` is the same object select the same
  rows).  A cluster source then keeps the selected rows where it read them,
  and later passes with that selection run on the kept rows without reading
  the data again (the results are the same).
* A pass that ignores ``offset`` may say so with ``uses_offset = False``:
  a source whose offsets need the row counts of earlier chunks (rows with
  missing values dropped) can then process its chunks in parallel, passing
  offset 0.
* ``X`` and ``y`` may be read-only views of the data (in-memory rows: the
  whole array is one chunk, and it is read again by later passes).  A pass
  that wants to modify them in place checks ``X.flags.writeable`` first
  (:func:`writable`); chunks evaluated from a source are the pass's own.
* Passes and combines are picklable (module-level functions or small callable
  objects): a Dask cluster ships them to its workers, and only the combined
  result comes back to the caller.

Every runner (in memory, local files, Dask) gives the same result for the
same rows, whatever the partition, up to the order of floating-point
additions.  Nothing here draws noise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np

__all__ = ["Rows", "Pass", "Combine", "writable"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: combine(a, b) -> a combined with b (associative; may update ``a`` in place)
Combine = Callable[[T, T], T]


class Pass(Protocol[T_co]):
    """``pass_fn(X, y, offset) -> T`` on one chunk; optionally ``select(offset, count) -> indices``.

    Any callable of that signature is a pass; see the module docstring for ``select`` and
    ``uses_offset``.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.rows import InMemoryRows
    >>> def row_count(X, y, offset):
    ...     return X.shape[0]
    >>> InMemoryRows(np.ones((6, 2)), np.zeros(6), chunk_rows=4).reduce(row_count, lambda a, b: a + b)
    6
    """

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> T_co:
        """The pass's partial result on one chunk.

        Parameters
        ----------
        X : numpy.ndarray
            The chunk's design rows (rows x d).
        y : numpy.ndarray
            The chunk's responses.
        offset : int
            The global index of the chunk's first row.

        Returns
        -------
        T
            The partial result, combined with the other chunks' by the runner.
        """
        ...


@runtime_checkable
class Rows(Protocol):
    """The rows of a fit as a method sees them (module docstring).

    ``n`` (public: fixed before the method runs) and ``d`` are known before
    any pass; ``local`` is True when the chunks are read in this process, so
    that a method may gather a few rows here instead of aggregates.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.rows import InMemoryRows, Rows
    >>> rows = InMemoryRows(np.ones((5, 2)), np.arange(5.0))
    >>> isinstance(rows, Rows), rows.n, rows.d
    (True, 5, 2)
    """

    @property
    def n(self) -> int:
        """The number of rows (public)."""
        ...

    @property
    def d(self) -> int:
        """The number of design columns."""
        ...

    @property
    def local(self) -> bool:
        """True when the chunks are read in this process."""
        ...

    def reduce(self, pass_fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Combine[T]) -> T:
        """Evaluate a pass on every chunk and combine the partial results in row order.

        Parameters
        ----------
        pass_fn : callable
            ``pass_fn(X, y, offset) -> T`` (:class:`Pass`).
        combine : callable
            ``combine(a, b) -> T``, associative; may update ``a`` in place.

        Returns
        -------
        T
            The combined result over all rows.
        """
        ...


def writable(X: np.ndarray, y: np.ndarray) -> bool:
    """True when a pass may modify the chunk ``(X, y)`` in place (both arrays are its own and writeable).

    Parameters
    ----------
    X : numpy.ndarray
        The chunk's design rows.
    y : numpy.ndarray
        The chunk's responses.

    Returns
    -------
    bool
        Whether both arrays are writeable.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.rows import writable
    >>> X, y = np.ones((2, 2)), np.zeros(2)
    >>> writable(X, y)
    True
    >>> X.flags.writeable = False
    >>> writable(X, y)
    False
    """
    return bool(X.flags.writeable and y.flags.writeable)
