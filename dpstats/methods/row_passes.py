"""One pass over the rows per round: the pieces DP-RobGD and DP-AMBSSGD share for data read in chunks.

An iterative method whose round t needs a statistic of the rows at the
current (released) iterate w_t reads rows chunk by chunk
(:meth:`~dpstats.methods.sufficient.RowChunks.reduce`) once per round.  The
partial result of a chunk must add up over chunks, whatever the partition,
so that the fit is the in-memory fit; and only aggregates should come back.

* :class:`WindowedOrder`: a public keyed bijection of each window of
  ``window`` consecutive rows, evaluated row by row.  It gives a stratified
  split (a fixed number of rows of each window in one part) and groups made
  of rows of one window, so a chunk completes every group that lies inside
  it and carries at most one window's worth of partial groups at each edge.
* :class:`ClipTable`: per-bucket sums from which the clipped gradient sum at
  every candidate threshold follows.  A round releases a private threshold
  (an edge of a public histogram grid) and a gradient clipped at it; both
  come from one pass because the table covers every edge of the grid.
* :class:`GroupedCounts`: histogram counts of group means, with the groups
  cut by a chunk edge carried (row values with their slots) until the
  adjacent chunk completes them; a whole pass returns counts only.

Nothing here draws noise; the random keys are public draws
(:func:`~dpstats.privacy.mechanisms.public_uniform`), independent of the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstats.methods.extremes import quiet
from dpstats.methods.robust_estimators import LogHistogram, histogram_counts, slot_means
from dpstats.privacy.mechanisms import public_uniform

__all__ = ["WindowedOrder", "ClipTable", "geometric_buckets", "add_clip_tables", "GroupedCounts", "add_grouped_counts",
           "add_arrays"]

_ROUNDS = 4
_GOLDEN = 0x9E3779B97F4A7C15  # odd: (j + 1) * _GOLDEN spreads consecutive window numbers over 64 bits


@dataclass(frozen=True)
class WindowedOrder:
    """Row i = j W + s (window j, slot s) is at local position tau_j(s), a bijection of the window's slots.

    tau_j is a keyed mix on the k-bit domain (2^k >= W): per round, XOR with
    a key tweaked by the window number, multiplication by an odd number
    modulo 2^k, and x -> x XOR (x >> s); each step is invertible for a fixed
    j, so the mix is a bijection of [0, 2^k), and cycle walking restricts it
    to a bijection of range(W_j) (W_j = W, or the size of the last, partial
    window).  The keys are public draws; tau_j depends on n, W, j and them.
    """

    n: int
    window: int
    bits: int
    keys: tuple[int, ...]
    multipliers: tuple[int, ...]
    tweaks: tuple[int, ...]

    @classmethod
    def draw(cls, n: int, window: int, rng: np.random.Generator) -> WindowedOrder:
        if n < 1 or not 1 <= window <= 2**31:
            raise ValueError("n must be >= 1 and window in [1, 2^31]")
        bits = max(1, math.ceil(math.log2(window)))
        u = public_uniform(0.0, 1.0, (_ROUNDS, 3), rng)
        top = 2**bits
        keys = tuple(min(int(v * top), top - 1) for v in u[:, 0])
        mults = tuple(min(int(v * top), top - 1) | 1 for v in u[:, 1])
        tweaks = tuple(int(v * 2.0**53) | 1 for v in u[:, 2])
        return cls(int(n), int(window), bits, keys, mults, tweaks)

    def window_size(self, j: np.ndarray) -> np.ndarray:
        """Rows in window j (W, or fewer for the last window)."""
        return np.minimum(self.window, self.n - j * self.window)

    def _tweaks(self, windows: np.ndarray) -> list[np.ndarray]:
        """Per round, the key of each window: key_r XOR the top k bits of (j + 1) * tweak_r * golden mod 2^64."""
        jj = windows.astype(np.uint64) + np.uint64(1)
        top = np.uint64(64 - self.bits)
        return [(np.uint64(key) ^ ((jj * np.uint64(tweak * _GOLDEN % 2**64)) >> top)).astype(np.uint32)
                for key, tweak in zip(self.keys, self.tweaks)]

    def _mix(self, x: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
        """tau on the k-bit domain (k <= 31, so uint32 products reduce correctly modulo 2^k); a new array."""
        mask = np.uint32((1 << self.bits) - 1)
        shift = np.uint32(max(1, (self.bits + 1) // 2))
        x = x.copy()
        for key, mult in zip(keys, self.multipliers):
            x ^= key
            x *= np.uint32(mult)
            x &= mask
            x ^= x >> shift
        return x

    def local_positions(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(window, local position) of each row index (int64 arrays)."""
        rows = np.asarray(rows, dtype=np.int64)
        j = rows // self.window
        if j.size == 0:
            return j, j.copy()
        first = int(j.min())
        span = np.arange(first, int(j.max()) + 1)
        local = j - first  # per-window quantities are computed once per window, then gathered
        keys = [k[local] for k in self._tweaks(span)]
        limit = self.window_size(span).astype(np.uint32)[local]
        out = self._mix((rows - j * self.window).astype(np.uint32), keys)
        todo = np.flatnonzero(out >= limit)
        while todo.size:  # cycle walking: each walk stays in its start's cycle of the window's bijection
            out[todo] = self._mix(out[todo], [k[todo] for k in keys])
            todo = todo[out[todo] >= limit[todo]]
        return j, out.astype(np.int64)


@quiet
def add_arrays(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b in place on ``a`` (a reducer for sums over chunks; an overflow gives inf, or NaN from inf - inf, and
    warns about neither: the callers map such sums to public values)."""
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
        for lo, hi in zip(starts, ends):
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
