"""Public assignment of rows to blocks, evaluated row by row, and per-block sums over chunks.

TukeyEM (and any estimator that fits one model per disjoint block of rows)
needs each row in one block, chosen without looking at the data.  In memory
this could be a uniformly random permutation of range(n); for data read in
chunks (files, a Dask cluster) storing a permutation of n rows would make the
memory grow with n and would have to be shipped to every worker.  Instead the
position of row i is pi(i), where pi is a public pseudo-random bijection of
range(n) that can be evaluated on any slice of row indices:

* on the k-bit domain [0, 2^k), 2^k >= n, pi_k is a composition of
  ``ROUNDS`` bijections x -> ((x XOR key_r) * odd_r mod 2^k) XOR-shift; XOR
  with a constant, multiplication by an odd number modulo 2^k and
  x -> x XOR (x >> s) (restricted to k bits) are each invertible, so pi_k is a
  bijection;
* cycle walking: pi(i) = the first of pi_k(i), pi_k(pi_k(i)), ... that is
  below n, a bijection of range(n) (the standard restriction of a
  permutation to a subset: the walk from i stays in i's cycle of pi_k and
  never meets the walk from another starting point in range(n)).

The keys and odd multipliers are drawn with public randomness
(:func:`~dpstats.privacy.mechanisms.public_uniform`); pi depends on n (public)
and these draws only, never on the data.  Row i (its index in the source's
row order) is in block floor(pi(i) / b) when pi(i) < m b, and in no block
otherwise.  Under replace-one neighbours a replaced row keeps its index, so
it stays in the same block and changes at most one block's model: the
property TukeyEM's proof uses.  The mixing only matters for utility (blocks
should not follow the order of the file).

Per-block sums of a chunk are formed by sorting the chunk's rows by block
and one batched product over the blocks (padded to the largest block count in
the chunk); the partial sums of chunks are added, so the result is the same
whatever the partition, up to the order of floating-point additions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from dpstats.privacy.mechanisms import public_uniform

__all__ = ["RowPermutation", "block_of_rows", "padded_blocks", "BlockSums", "block_sums", "augmented_block_sums",
           "ShiftedBlockSums"]

ROUNDS = 4
_U64 = np.uint64


@dataclass(frozen=True)
class RowPermutation:
    """A public pseudo-random bijection pi of range(n), evaluated on any array of row indices."""

    n: int
    bits: int
    keys: tuple[int, ...]
    multipliers: tuple[int, ...]

    @classmethod
    def draw(cls, n: int, rng: np.random.Generator) -> "RowPermutation":
        """Draw the keys with public randomness (``ROUNDS`` keys and odd multipliers of ``bits`` bits)."""
        if n < 1:
            raise ValueError("n must be >= 1")
        bits = max(1, math.ceil(math.log2(n)))
        u = public_uniform(0.0, 1.0, (ROUNDS, 2), rng)
        top = float(2**bits)
        keys = tuple(min(int(v * top), 2**bits - 1) for v in u[:, 0])
        mults = tuple((min(int(v * top), 2**bits - 1) | 1) for v in u[:, 1])
        return cls(int(n), bits, keys, mults)

    @property
    def _dtype(self) -> type:
        return np.uint32 if self.bits <= 32 else _U64  # products wrap modulo 2^32 or 2^64; 2^k divides both

    def _mix(self, x: np.ndarray) -> np.ndarray:
        """pi_k on the k-bit domain (x an unsigned array of values below 2^k; a new array)."""
        t = self._dtype
        mask = t((1 << self.bits) - 1)
        shift = t(max(1, (self.bits + 1) // 2))
        x = x.copy()
        for key, mult in zip(self.keys, self.multipliers):
            x ^= t(key)
            x *= t(mult)
            x &= mask
            x ^= x >> shift
        return x

    def _unmix(self, x: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`_mix`: the rounds undone in reverse order (x -> x XOR (x >> s) is an involution
        on k bits because 2 s >= k; the inverse of an odd multiplier modulo 2^k exists)."""
        t = self._dtype
        mask = t((1 << self.bits) - 1)
        shift = t(max(1, (self.bits + 1) // 2))
        x = x.copy()
        for key, mult in zip(reversed(self.keys), reversed(self.multipliers)):
            x ^= x >> shift
            x *= t(pow(mult, -1, 1 << self.bits))
            x &= mask
            x ^= t(key)
        return x

    def _walk(self, x: np.ndarray, step: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """Cycle walking: apply ``step`` until every value is below n."""
        t = self._dtype
        out = step(x.astype(t))
        todo = np.flatnonzero(out >= t(self.n))
        while todo.size:  # the expected number of rounds is below 2^k / n < 2
            out[todo] = step(out[todo])
            todo = todo[out[todo] >= t(self.n)]
        return out.astype(np.int64)

    def positions(self, rows: np.ndarray) -> np.ndarray:
        """pi(rows): the positions (int64) of the given row indices (each in range(n))."""
        x = np.asarray(rows, dtype=np.int64)
        if x.size and (x.min() < 0 or x.max() >= self.n):
            raise ValueError("row indices must lie in range(n)")
        return self._walk(x, self._mix)

    def rows_at(self, positions: np.ndarray) -> np.ndarray:
        """pi^{-1}(positions): the row indices at the given positions (cycle walking with the inverse rounds)."""
        x = np.asarray(positions, dtype=np.int64)
        if x.size and (x.min() < 0 or x.max() >= self.n):
            raise ValueError("positions must lie in range(n)")
        return self._walk(x, self._unmix)

    def order(self) -> np.ndarray:
        """The inverse of pi: ``order[p]`` is the row at position p (O(n) memory; for in-memory data)."""
        return self.rows_at(np.arange(self.n))


def block_of_rows(perm: RowPermutation, offset: int, count: int, m: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions, blocks) of the rows offset..offset+count-1; block -1 for rows in no block (pi >= m b)."""
    pos = perm.positions(np.arange(offset, offset + count, dtype=np.int64))
    blocks = np.where(pos < m * b, pos // b, -1)
    return pos, blocks


def padded_blocks(blocks: np.ndarray, m: int, a: np.ndarray) -> np.ndarray:
    """Gather the rows of ``a`` into (m, c_max, ...) by block (zero padding); rows with block -1 are left out.

    Zero rows add nothing to a sum of outer products, so a batched product
    over the padded blocks gives the per-block sums.  The rows are sorted by
    block (a stable radix sort for m below 2^15, so each block keeps the
    chunk's row order), gathered once with ``np.take`` into the padded layout,
    and the padding slots are zeroed.
    """
    small = m < (1 << 15)
    order = np.argsort(blocks.astype(np.int16 if small else np.int64), kind="stable")
    sorted_blocks = blocks[order]
    first = int(np.searchsorted(sorted_blocks, 0))
    order, sorted_blocks = order[first:], sorted_blocks[first:]
    counts = np.bincount(sorted_blocks, minlength=m)
    width = int(counts.max()) if sorted_blocks.size else 0
    if width == 0:
        return np.zeros((m, 0) + a.shape[1:])
    starts = np.cumsum(counts) - counts
    slot = np.arange(width)
    valid = slot[None, :] < counts[:, None]
    src = np.minimum(starts[:, None] + slot[None, :], order.size - 1)
    out = np.take(a, order[src.ravel()], axis=0)
    out[~valid.ravel()] = 0.0
    return out.reshape((m, width) + a.shape[1:])


@dataclass
class BlockSums:
    """Per-block Z_k^T Z_k (m, d, d) and Z_k^T y_k (m, d), and (optionally) global clipped sums for a pilot."""

    zz: np.ndarray
    zy: np.ndarray
    gram: np.ndarray | None = None
    moment: np.ndarray | None = None

    def __add__(self, other: "BlockSums") -> "BlockSums":
        return BlockSums(self.zz + other.zz, self.zy + other.zy,
                         None if self.gram is None else self.gram + other.gram,  # type: ignore[operator]
                         None if self.moment is None else self.moment + other.moment)  # type: ignore[operator]


def add_block_sums(a: BlockSums, b: BlockSums) -> BlockSums:
    """a + b in place on ``a`` (a reducer)."""
    a.zz += b.zz
    a.zy += b.zy
    if a.gram is not None:
        a.gram += b.gram  # type: ignore[operator]
        a.moment += b.moment  # type: ignore[operator]
    return a


def block_sums(z: np.ndarray, y: np.ndarray, blocks: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-block sums Z_k^T Z_k and Z_k^T y_k of one chunk (rows with block -1 are left out)."""
    d = z.shape[1]
    aug = np.empty((z.shape[0], d + 1))
    aug[:, :d] = z
    aug[:, d] = y
    return augmented_block_sums(aug, blocks, m)


def augmented_block_sums(aug: np.ndarray, blocks: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_sums` of rows given as [z, y] in one array (one gather and one product for both sums)."""
    d = aug.shape[1] - 1
    pa = padded_blocks(blocks, m, aug)
    if pa.shape[1] == 0:
        return np.zeros((m, d, d)), np.zeros((m, d))
    full = np.matmul(pa.transpose(0, 2, 1), pa)
    return np.ascontiguousarray(full[:, :d, :d]), np.ascontiguousarray(full[:, :d, d])


@dataclass
class ShiftedBlockSums:
    """Per-block sums of rows v = [x, y] about a shift a: ``count`` (m,), ``first`` = sum (v - a) (m, p) and
    ``second`` = sum (v - a)(v - a)^T (m, p, p).

    Re-expressing the sums about another shift is exact algebra,

        sum (v - a')(v - a')^T = S2 + S1 t^T + t S1^T + k t t^T,   S1 + k t,   t = a - a',

    so sums of chunks taken about different shifts add up, and the sums about a centre released only after
    the pass (TukeyEM's private medians) follow without a second pass.  Each chunk is taken about its own
    mean, which keeps |t| of the order of the data's spread: re-centring raw sums (a = 0) would lose about
    2 log10(|mean| / spread) digits to cancellation.
    """

    shift: np.ndarray
    count: np.ndarray
    first: np.ndarray
    second: np.ndarray

    @classmethod
    def of_chunk(cls, X: np.ndarray, y: np.ndarray, blocks: np.ndarray, m: int) -> "ShiftedBlockSums":
        """The sums of one chunk's rows (block -1: in no block) about the chunk's column means."""
        d = X.shape[1]
        v = np.empty((X.shape[0], d + 1))
        v[:, :d] = X
        v[:, d] = y
        shift = v.mean(axis=0) if v.shape[0] else np.zeros(d + 1)
        v -= shift
        pv = padded_blocks(blocks, m, v)
        count = np.bincount(blocks[blocks >= 0], minlength=m).astype(float)
        if pv.shape[1] == 0:
            return cls(shift, count, np.zeros((m, d + 1)), np.zeros((m, d + 1, d + 1)))
        return cls(shift, count, pv.sum(axis=1), np.matmul(pv.transpose(0, 2, 1), pv))

    def about(self, shift: np.ndarray) -> "ShiftedBlockSums":
        """The same sums about ``shift`` (a new object)."""
        t = self.shift - np.asarray(shift, dtype=float)
        outer = self.first[:, :, None] * t[None, None, :]
        second = self.second + outer + outer.transpose(0, 2, 1) + self.count[:, None, None] * np.outer(t, t)
        return ShiftedBlockSums(np.array(shift, dtype=float), self.count, self.first + self.count[:, None] * t,
                                second)

    def __add__(self, other: "ShiftedBlockSums") -> "ShiftedBlockSums":
        o = other.about(self.shift)
        return ShiftedBlockSums(self.shift, self.count + o.count, self.first + o.first, self.second + o.second)

    def centred(self, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-block Z_k^T Z_k and Z_k^T y_k for z = x - centre (y not shifted)."""
        d = self.second.shape[-1] - 1
        s = self.about(np.append(np.asarray(centre, dtype=float), 0.0))
        return np.ascontiguousarray(s.second[:, :d, :d]), np.ascontiguousarray(s.second[:, :d, d])
