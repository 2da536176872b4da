"""Sufficient statistics of clipped rows, accumulated over any split of the data into chunks.

The sufficient-statistics methods (``ssp``, ``adassp``, ``noisy_ols``, and the
y^T y release behind their inference) release noisy versions of

    X^T X = sum_i x_i x_i^T,   X^T v = sum_i x_i v_i,   v^T v = sum_i v_i^2,

where x_i is a design row clipped column-wise to the declared (public) ranges
and v_i the clipped response, truncated to [-T, T] when a method asks for it
(Cai et al.'s f_T in ``noisy_ols``).  Each is a sum of one term per row, so
it can be computed chunk by chunk, in any order and on any machine, and the
partial sums added: the statistic is the same function of the data whatever
the partition (only the order of the floating-point additions changes).  The
release step (:attr:`~dpstats.methods.registry.MethodSpec.fit_statistics`)
takes a :class:`SufficientStatistics` and is the one code path of both the
in-memory fit and the chunked or Dask fit, so the privacy argument (the
sensitivities of these sums under replace-one neighbours, given clipping) is
literally the same for both.

Numeric range: each clipped term is at most B_X^2, B_X B_Y or B_Y^2, so the
sums are finite whatever the rows once n times those is below 1e300;
:func:`check_bounds_range` refuses wider bounds (reachable only with bounds
near 1e150 and ``rescale=False``) from public facts, before any release,
because beyond that an overflowing sum would depend on the data.

Nothing here draws noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, TypeVar

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import NoiseScaleRangeError
from dpstats.methods.extremes import QUIET, square

__all__ = ["SufficientStatistics", "StatisticsPlan", "RowChunks", "ArrayChunks", "statistics_of_chunk",
           "add_statistics", "STATISTICS_LIMIT", "check_statistics_range", "check_bounds_range"]

#: The largest value a sum over the rows of clipped terms may reach: below it nothing computed from the sums
#: (X^T X, its eigenvalues, X^T y, y^T y, a gradient sum) can overflow, whatever the rows.
STATISTICS_LIMIT = 1e300


def check_statistics_range(n: int, term_bound: float) -> None:
    """Refuse, from public facts only, a fit whose sums over ``n`` rows of terms bounded by ``term_bound`` (from
    the declared bounds: B_X^2, B_X B_Y, B_Y^2, c_x R) could overflow.

    Without this check such a sum would be inf for some data and finite for others (and an eigenvalue routine
    would fail on it): a data-dependent outcome that no noise hides.  It is reachable only with declared
    bounds near 1e150 or beyond and ``rescale=False`` (the public rescaling maps every bound to [-1, 1]).
    """
    total = n * term_bound  # a Python float: inf, not an exception, on overflow
    if not total <= STATISTICS_LIMIT:
        raise NoiseScaleRangeError(
            f"the declared bounds are too wide for double precision: sums over n={n} rows of terms as large as "
            f"{term_bound:.3g} could overflow. Declare bounds on the data's scale, or keep rescale=True (the "
            "default), which fits on the design rescaled to [-1, 1]")


def check_bounds_range(bounds: DataBounds, n: int) -> None:
    """:func:`check_statistics_range` for X^T X, X^T y and y^T y of ``n`` rows clipped to ``bounds`` (terms at
    most B_X^2, B_X B_Y and B_Y^2)."""
    b_x, b_y = bounds.x_norm, bounds.y_abs
    check_statistics_range(n, max(square(b_x), square(b_y), b_x * b_y))


T = TypeVar("T")


@dataclass(frozen=True)
class StatisticsPlan:
    """What a method needs accumulated, decided from public facts (bounds and options) before any data are read.

    ``label_truncation``: T of f_T (the clipped response is further truncated
    to [-T, T]); None for no truncation.
    """

    label_truncation: float | None = None


@dataclass
class SufficientStatistics:
    """Sums over rows of clipped x x^T, x v and v^2, and the number of rows.

    ``clipped`` says whether rows were clipped to bounds (always, for the
    private methods); ``label_truncation`` the T applied to the response.
    """

    xtx: np.ndarray
    xty: np.ndarray
    yty: float
    n: int
    label_truncation: float | None = None
    clipped: bool = True

    @property
    def d(self) -> int:
        return int(self.xty.size)

    @classmethod
    def zeros(cls, d: int, *, label_truncation: float | None = None, clipped: bool = True) -> "SufficientStatistics":
        return cls(np.zeros((d, d)), np.zeros(d), 0.0, 0, label_truncation, clipped)

    @classmethod
    def from_arrays(cls, X: np.ndarray, y: np.ndarray, bounds: DataBounds | None,
                    plan: StatisticsPlan = StatisticsPlan(), inplace: bool = False) -> "SufficientStatistics":
        """The statistics of the rows (X, y): clipped to ``bounds`` (None: not clipped), labels truncated per
        ``plan``; ``inplace`` clips the caller's own float arrays in place (chunks)."""
        if bounds is not None:
            Xc, yc = bounds.clip(X, y, inplace=inplace)
        else:
            Xc, yc = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
        T = plan.label_truncation
        if T is not None:
            yc = np.clip(yc, -T, T)
        with np.errstate(**QUIET):  # finite for clipped rows once check_statistics_range passed
            return cls(Xc.T @ Xc, Xc.T @ yc, float(yc @ yc), int(Xc.shape[0]), T, bounds is not None)

    def __add__(self, other: "SufficientStatistics") -> "SufficientStatistics":
        if (self.label_truncation != other.label_truncation or self.clipped != other.clipped
                or self.xty.shape != other.xty.shape):
            raise ValueError("cannot add sufficient statistics accumulated under different plans")
        return SufficientStatistics(self.xtx + other.xtx, self.xty + other.xty, self.yty + other.yty,
                                    self.n + other.n, self.label_truncation, self.clipped)


def add_statistics(a: SufficientStatistics, b: SufficientStatistics) -> SufficientStatistics:
    """a + b, in place on ``a`` (a reducer for chunked sums; ``a`` is the caller's own accumulator)."""
    a.xtx += b.xtx
    a.xty += b.xty
    a.yty += b.yty
    a.n += b.n
    return a


class statistics_of_chunk:  # noqa: N801 - a picklable function object (Dask ships it to workers)
    """fn(X, y, offset) -> :class:`SufficientStatistics` of one chunk (clipped per the public bounds)."""

    def __init__(self, bounds: DataBounds | None, plan: StatisticsPlan) -> None:
        self.bounds = bounds
        self.plan = plan

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> SufficientStatistics:
        # the chunk's arrays are this call's own (fresh from the evaluator), so they are clipped in place
        return SufficientStatistics.from_arrays(X, y, self.bounds, self.plan, inplace=True)


class RowChunks(Protocol):
    """The rows of a data set as a sequence of chunks, seen by a method as numpy arrays only.

    ``n`` (public) and ``d`` are known before any chunk is read; ``local``
    (optional, default False) says that the chunks are read in this process,
    so that a method may gather a few rows here instead of aggregates.
    ``reduce(fn, combine)`` evaluates ``fn(X, y, offset)`` on every chunk,
    where ``offset`` is the global index of the chunk's first row in the
    source's row order (rows of earlier chunks come first), and combines the
    partial results with the associative ``combine``; only the combined
    result comes back to the caller (on a cluster: only aggregates reach the
    driver).  ``fn`` and ``combine`` must be picklable (module-level
    functions or small callable objects) for distributed execution.  When
    ``fn`` has a method ``select(offset, count)`` returning the indices of the
    chunk's rows it needs, only those rows are evaluated and passed to ``fn``
    (``offset`` still refers to the chunk's first row).
    """

    @property
    def n(self) -> int: ...

    @property
    def d(self) -> int: ...

    def reduce(self, fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Callable[[T, T], T]) -> T: ...


class ArrayChunks:
    """:class:`RowChunks` over in-memory arrays, cut into chunks of ``chunk_rows`` rows (tests, big designs)."""

    def __init__(self, X: np.ndarray, y: np.ndarray, chunk_rows: int = 1 << 16) -> None:
        self.X = np.asarray(X, dtype=float)
        self.y = np.asarray(y, dtype=float)
        if self.X.ndim != 2 or self.X.shape[0] != self.y.shape[0]:
            raise ValueError("X must be n x d and y of length n")
        self.chunk_rows = max(1, int(chunk_rows))

    local = True  # the rows are in this process

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    def reduce(self, fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Callable[[T, T], T]) -> T:
        acc = None
        select = getattr(fn, "select", None)
        for start in range(0, max(self.n, 1), self.chunk_rows):
            X, y = self.X[start:start + self.chunk_rows], self.y[start:start + self.chunk_rows]
            if select is not None:
                idx = np.asarray(select(start, X.shape[0]), dtype=np.int64)
                X, y = X[idx], y[idx]
            part = fn(X.copy(), y.copy(), start)
            acc = part if acc is None else combine(acc, part)
        return acc  # type: ignore[return-value]
