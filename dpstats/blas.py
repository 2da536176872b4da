"""How many threads the BLAS/LAPACK library under numpy may use, for work made of many small problems.

OpenBLAS runs an eigendecomposition or product of a few dozen columns on
several threads, and a batch of such problems (a bootstrap's replicates, the
blocks of a chunk) pays the threads' start and synchronisation once per
problem: measured on 2 cores, ``numpy.linalg.eigh`` of 1,000 symmetric 51 x 51
matrices took 11.6 s with the default threads on a busy machine and 0.6 s on
one thread (0.03 s either way at 11 x 11).  :func:`single_threaded_blas` limits
the library to one thread for the duration of such a batch, through
threadpoolctl (a dependency; it is also what scikit-learn uses for this).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from threadpoolctl import ThreadpoolController

__all__ = ["single_threaded_blas"]


@cache
def _controller() -> ThreadpoolController:
    """The process's thread-pool libraries, found once (a search of the loaded libraries costs about 2 ms, and pgd's
    chunked fits enter :func:`single_threaded_blas` once per pass)."""
    return ThreadpoolController()


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """One BLAS thread while the block runs (process-wide: the limit applies to every thread of the process).

    Used around batches of small linear-algebra problems, while several chunk tasks of a data source run at
    once (their products are small, and BLAS threads nested in a pool's threads oversubscribe the cores: measured
    about 2x slower on 2 cores), and as a decorator around pgd's fit (hundreds of skinny n x d by d x K products,
    one per step: a 125-level factor's fit took 8.9 s on two shared cores with the default threads, 2.0 s on one).

    Yields
    ------
    None
        Inside the block, the BLAS library runs on one thread; the previous limit is restored on exit.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.blas import single_threaded_blas
    >>> with single_threaded_blas():
    ...     w = np.linalg.eigvalsh(np.eye(3))
    >>> w.tolist()
    [1.0, 1.0, 1.0]
    """
    with _controller().limit(limits=1, user_api="blas"):
        yield
