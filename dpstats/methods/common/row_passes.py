"""One pass over the rows per round: the pieces DP-RobGD and DP-AMBSSGD share.

An iterative method whose round t needs a statistic of the rows at the
current (released) iterate w_t reads its rows once per round
(:meth:`~dpstats.rows.base.Rows.reduce`).  The partial result of a chunk
must add up over chunks, whatever the partition, so that every partition
gives the same fit; and only aggregates should come back.

* :class:`ClipTable`: per-bucket sums from which the clipped gradient sum at
  every candidate threshold follows.  A round releases a private threshold
  (an edge of a public histogram grid) and a gradient clipped at it; both
  come from one pass because the table covers every edge of the grid.
* :class:`GroupedCounts`: histogram counts of group means, with the groups
  cut by a chunk edge carried (row values with their slots) until the
  adjacent chunk completes them; a whole pass returns counts only.

* :class:`KeyCache` and :class:`ChunkMemo`: the fast in-memory path behind
  the interface.  In-memory rows are one chunk, handed to every pass; a
  pass's public keys for a chunk (which rows are in which part) are
  memoised per (offset, count), and values computed from a read-only
  in-memory chunk (its rows standardised and gathered by part) are kept for
  the fit's later passes, so the single in-memory chunk computes them once.

Nothing here draws noise.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from dpstats.methods.common.extremes import quiet
from dpstats.methods.common.robust_estimators import LogHistogram, histogram_counts, slot_means

__all__ = ["ClipTable", "geometric_buckets", "add_clip_tables", "GroupedCounts", "add_grouped_counts",
           "add_arrays", "KeyCache", "ChunkMemo"]

T = TypeVar("T")


class KeyCache:
    """A small memo of public per-chunk values (row positions, parts, groups), keyed by (offset, count).

    At most ``size`` entries (the oldest is dropped), so a source read in
    many chunks keeps a few and the one chunk of in-memory rows computes its
    keys once for all the passes of a fit.  The values must be functions of
    the key and public draws only.  Safe when the threads of a local source
    share it (a lock guards each look-up and insertion; ``make`` runs outside
    it).  Pickles empty (a Dask worker starts afresh).
    """

    def __init__(self, size: int = 4) -> None:
        self.size = int(size)
        self._items: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], T]) -> T:
        """The value for ``key``, computed by ``make()`` on a miss."""
        with self._lock:
            if key in self._items:
                return self._items[key]
        value = make()
        with self._lock:
            if key not in self._items and len(self._items) >= self.size:
                del self._items[next(iter(self._items))]
            self._items[key] = value
        return value

    def __getstate__(self) -> dict[str, int]:
        return {"size": self.size}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(state["size"])  # type: ignore[misc]


def _owner(a: np.ndarray) -> Any:
    """The array that owns the memory of the view ``a``."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a.base if a.base is not None else a


class ChunkMemo:
    """Values computed from a chunk that later passes of the same fit reuse, kept for in-memory chunks only.

    In-memory rows (:class:`~dpstats.rows.memory.InMemoryRows`) hand every
    pass read-only views of the same arrays, so a function of such a chunk
    (its rows standardised and gathered by part) is the same in every pass
    and is computed once.  A chunk is recognised by the arrays that own its
    memory (held by weak references: while alive, the same buffer), the
    address, shape and strides of the views and the offset.  Writeable
    chunks (evaluated from a source, or cut by ``chunk_rows``: new arrays in
    every pass) are computed afresh and never kept.  At most ``size`` chunks
    are kept; the memo pickles empty and is dropped with the fit's passes.
    """

    def __init__(self, size: int = 2) -> None:
        self.size = int(size)
        self._items: list[tuple[tuple[Any, ...], tuple[weakref.ref[Any], weakref.ref[Any]], Any]] = []

    @staticmethod
    def _key(X: np.ndarray, y: np.ndarray, offset: int) -> tuple[Any, ...] | None:
        if X.flags.writeable or y.flags.writeable or X.base is None or y.base is None:
            return None
        return (offset, X.shape, X.strides, X.__array_interface__["data"][0], y.shape, y.strides,
                y.__array_interface__["data"][0])

    def get(self, X: np.ndarray, y: np.ndarray, offset: int, make: Callable[[np.ndarray, np.ndarray, int], T]) -> T:
        """``make(X, y, offset)``, computed once per read-only chunk."""
        key = self._key(X, y, offset)
        if key is None:
            return make(X, y, offset)
        owners = (_owner(X), _owner(y))
        for k, refs, value in self._items:
            if k == key and refs[0]() is owners[0] and refs[1]() is owners[1]:
                return value
        value = make(X, y, offset)
        try:
            refs = (weakref.ref(owners[0]), weakref.ref(owners[1]))
        except TypeError:  # an owner that takes no weak reference (a foreign buffer): not kept
            return value
        self._items = [*self._items[-(self.size - 1):], (key, refs, value)] if self.size > 1 else [(key, refs, value)]
        return value

    def __getstate__(self) -> dict[str, int]:
        return {"size": self.size}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.__init__(state["size"])  # type: ignore[misc]

@quiet
def add_arrays(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b, in place on ``a`` where its dtype holds the sum (a reducer for sums over chunks; an overflow gives inf,
    or NaN from inf - inf, and warns about neither: the callers map such sums to public values).  A chunk without
    rows can give integer zeros where the others give floats (``np.bincount`` with weights does): the sum is then a
    new array of the wider type, so that an empty chunk's place among the chunks changes nothing."""
    if not np.can_cast(b.dtype, a.dtype, casting="same_kind"):
        return a + b
    a += b
    return a


@dataclass
class ClipTable:
    """Sums over rows, by bucket, that give sum_i u_i min(1, C_j / s_i) for every candidate C_j in one pass.

    Row i (a term u_i that is clipped when s_i > C) falls in bucket
    k_i = #{j : C_j < s_i} (candidates increasing), so it is unclipped at
    every C_j with j >= k_i.  With F_k = sum of u_i and G_k = sum of u_i / s_i
    over bucket k,

        sum_i u_i min(1, C_j / s_i) = sum_{k <= j} F_k + C_j sum_{k > j} G_k,

    which is the clipped sum at C_j up to the order of floating-point
    additions.  The table is (K + 1) x d, whatever the number of rows.
    F_K (the rows clipped at every candidate) is never read and is kept 0, so
    a row with a huge or infinite term never enters a sum that is used.
    """

    full: np.ndarray
    scaled: np.ndarray

    @classmethod
    @quiet
    def of(cls, X: np.ndarray, coef: np.ndarray, s: np.ndarray, candidates: np.ndarray,
           limit: np.ndarray | None = None) -> ClipTable:
        """The table of the terms u_i = coef_i x_i with clipping statistics ``s`` (rows whose coef is zero may
        have any s); ``candidates`` increasing, in geometric progression (:func:`geometric_buckets`).

        ``limit`` (optional, per row) is coef_i / s_i for the rows where s_i is infinite or the quotient is not
        finite (a term whose size overflowed): the coefficient of x_i in the term clipped at C, divided by C,
        i.e. the term's direction.  Such rows contribute 0 there when no limit is given.  Either way each row's
        entries depend on that row only."""
        K, d = candidates.size, X.shape[1]
        full, scaled = np.zeros((K + 1, d)), np.zeros((K + 1, d))
        if X.shape[0] == 0:
            return cls(full, scaled)
        bucket = geometric_buckets(s, candidates)
        order = np.argsort(bucket.astype(np.int16), kind="stable")
        sb = bucket[order]
        starts = np.flatnonzero(np.concatenate([[True], sb[1:] != sb[:-1]]))
        ends = np.append(starts[1:], sb.size)
        Xs, cs, ss = np.take(X, order, axis=0), np.take(coef, order), np.take(s, order)
        c2 = np.empty((cs.size, 2))
        c2[:, 0] = np.where(sb < K, cs, 0.0)  # F_K is never used (module docstring)
        ratio = np.where(sb > 0, cs / ss, 0.0)  # bucket 0 is never clipped: its G is not used
        bad = ~np.isfinite(ratio) | (np.isinf(ss) & (sb > 0))  # an infinite s makes a finite quotient 0, not its limit
        if bad.any():
            fix = 0.0 if limit is None else np.take(limit, order)[bad]
            ratio[bad] = np.where(np.isfinite(fix), fix, 0.0)
        c2[:, 1] = ratio
        for lo, hi in zip(starts, ends, strict=True):
            both = Xs[lo:hi].T @ c2[lo:hi]
            full[sb[lo]], scaled[sb[lo]] = both[:, 0], both[:, 1]
        return cls(full, scaled)

    def at(self, candidates: np.ndarray, j: int) -> np.ndarray:
        """The clipped sum at candidate ``j``."""
        return self.full[: j + 1].sum(axis=0) + candidates[j] * self.scaled[j + 1:].sum(axis=0)


def geometric_buckets(s: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """#{j : candidates[j] < s_i} for each i (as ``np.searchsorted(candidates, s)``), for candidates in geometric
    progression: a guess from log2, then exact corrections by comparison (one or two steps at most)."""
    K = candidates.size
    ratio = math.log2(candidates[1] / candidates[0]) if K > 1 else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.ceil((np.log2(s) - math.log2(candidates[0])) / ratio)
    k = np.clip(np.nan_to_num(guess, nan=K, posinf=K, neginf=0), 0, K).astype(np.intp)
    upper = np.append(candidates, np.inf)
    while True:
        up = upper[k] < s
        down = (k > 0) & (upper[np.maximum(k - 1, 0)] >= s)
        if not (up.any() or down.any()):
            return k
        k += up
        k -= down


def add_clip_tables(a: ClipTable, b: ClipTable) -> ClipTable:
    """a + b in place on ``a``."""
    a.full += b.full
    a.scaled += b.scaled
    return a


@dataclass
class GroupedCounts:
    """Histogram counts of complete groups' means, and the groups still missing rows.

    ``pending_ids`` (unique), ``pending_values`` (groups x b, by slot) and
    ``pending_have`` (which slots are filled) hold the groups of which only
    some rows have been seen; when merging partial results fills a group, its
    mean (:func:`~dpstats.methods.robust_estimators.slot_means`, the same
    double as in memory) is binned and its rows are dropped.
    """

    counts: np.ndarray
    pending_ids: np.ndarray
    pending_values: np.ndarray
    pending_have: np.ndarray
    grid: LogHistogram

    @classmethod
    def of(cls, groups: np.ndarray, slots: np.ndarray, values: np.ndarray, b: int,
           grid: LogHistogram) -> GroupedCounts:
        """From the rows of one chunk: ``values[i]`` is slot ``slots[i]`` of group ``groups[i]`` (groups of one
        chunk lie in a short range of ids: a dense table over that range, no sort)."""
        counts = np.zeros(grid.size, dtype=np.int64)
        if groups.size == 0:
            return cls(counts, groups[:0], np.zeros((0, b)), np.zeros((0, b), dtype=bool), grid)
        low = int(groups.min())
        span = int(groups.max()) - low + 1
        vals = np.zeros((span, b))
        have = np.zeros((span, b), dtype=bool)
        vals[groups - low, slots] = values
        have[groups - low, slots] = True
        seen = have.any(axis=1)
        ids = np.arange(low, low + span, dtype=np.int64)
        return cls(counts, ids[:0], vals[:0], have[:0], grid)._settle(ids[seen], vals[seen], have[seen])

    @quiet
    def _settle(self, ids: np.ndarray, vals: np.ndarray, have: np.ndarray) -> GroupedCounts:
        done = have.all(axis=1)
        if done.any():  # a mean that overflows is inf: the last bin (LogHistogram.index)
            self.counts += histogram_counts(slot_means(vals[done]), self.grid)
        self.pending_ids, self.pending_values, self.pending_have = ids[~done], vals[~done], have[~done]
        return self

    def merge(self, other: GroupedCounts) -> GroupedCounts:
        """Add ``other`` into this one (associative and commutative: groups are matched by id)."""
        self.counts += other.counts
        ids = np.concatenate([self.pending_ids, other.pending_ids])
        vals = np.concatenate([self.pending_values, other.pending_values])
        have = np.concatenate([self.pending_have, other.pending_have])
        uniq, first, inv = np.unique(ids, return_index=True, return_inverse=True)
        mv, mh = vals[first], have[first]
        second = np.flatnonzero(first[inv] != np.arange(ids.size))  # each id is pending on both sides at most
        tgt = inv[second]
        mv[tgt] = np.where(have[second], vals[second], mv[tgt])
        mh[tgt] |= have[second]
        return self._settle(uniq, mv, mh)


def add_grouped_counts(a: GroupedCounts, b: GroupedCounts) -> GroupedCounts:
    return a.merge(b)
