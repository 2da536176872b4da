"""Public assignments of rows, evaluated row by row: a pseudo-random permutation and windowed blocks.

Several methods split the rows into public parts (blocks, samples, splits),
chosen without looking at the data.  In memory this could be a uniformly
random permutation of range(n); for data read in chunks (files, a Dask
cluster) storing a permutation of n rows would make the memory grow with n and
would have to be shipped to every worker.  Instead the position of row i is
pi(i), where pi is a public pseudo-random bijection of range(n) that can be
evaluated on any slice of row indices (:class:`RowPermutation`):

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
and these draws only, never on the data.  Methods use it to pick public
subsets of rows (TukeyEM's preprocessing sample, DP-LASSO's parts, the splits
of DP-RobGD and DP-AMBSSGD).

:class:`WindowedOrder` is a bijection of each window of ``window``
consecutive rows (DP-RobGD's stratified split and window-local groups).

:class:`WindowedBlocks` assigns rows to m blocks of equal size: every window
of m consecutive rows gives each block one row, through a bijection of the
window's lanes (a public random permutation after a cyclic shift, both picked
by a hash of the window index).  A row's block depends on its index and public
draws only, so under replace-one neighbours a replaced row (same index)
changes one block (TukeyEM, docs/proofs/tukey.md); and because each block
takes exactly one row per window, a chunk's rows are gathered by block with
``np.take`` into a dense (blocks, windows, p) array (TukeyEM's block sums,
:mod:`dpstats.methods.tukey.block_sums`), with no sort and no padding.  Nothing here draws noise.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dpstats.privacy.mechanisms import public_uniform

__all__ = ["RowPermutation", "WindowedBlocks", "WindowedOrder"]

ROUNDS = 4
_U64 = np.uint64
_GOLDEN = 0x9E3779B97F4A7C15  # odd: (j + 1) * _GOLDEN spreads consecutive window numbers over 64 bits


@dataclass(frozen=True)
class RowPermutation:
    """A public pseudo-random bijection pi of range(n), evaluated on any array of row indices."""

    n: int
    bits: int
    keys: tuple[int, ...]
    multipliers: tuple[int, ...]

    @classmethod
    def draw(cls, n: int, rng: np.random.Generator) -> RowPermutation:
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
        for key, mult in zip(self.keys, self.multipliers, strict=True):
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
        for key, mult in zip(reversed(self.keys), reversed(self.multipliers), strict=True):
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


_SPLITMIX = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
TABLE_ENTRIES = 1 << 20  # at most this many entries in WindowedBlocks' table of public permutations


def _splitmix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (a fixed bijection of 64-bit words that scatters nearby inputs) of a uint64 array."""
    z = z + _U64(_SPLITMIX[0])
    z = (z ^ (z >> _U64(30))) * _U64(_SPLITMIX[1])
    z = (z ^ (z >> _U64(27))) * _U64(_SPLITMIX[2])
    return z ^ (z >> _U64(31))


@dataclass(frozen=True, eq=False)
class WindowedBlocks:
    """A public assignment of rows to m blocks: every window of m consecutive rows gives each block one row.

    Row i lies in window w = floor(i / m) at lane j = i mod m.  The b = floor(n / m) full windows are used;
    in window w < b, lane j goes to block sigma_w(j) = P_{h(w)}[(j + s(w)) mod m], where P_0..P_{Q-1} are
    uniformly random permutations of range(m) drawn with public randomness, and h(w) in range(Q) and the
    shift s(w) in range(m) come from a hash (splitmix64) of w and a public salt.  The n - m b rows of the
    last, partial window are in no block.

    Properties the methods use:

    * each block holds exactly b rows, and a row's block depends only on its index i and the public draws,
      never on the data: a replaced row (same index) changes one block (TukeyEM's proof, Amin et al. Alg. 2);
    * each block takes one row from every window, so the blocks are spread evenly over the file (rows sorted
      by a variable give every block the same spread of that variable); the lane of a block moves by a
      pseudo-random shift from window to window, so periodic layouts (panels with a fixed number of rows per
      unit) do not line up with the blocks;
    * a chunk's rows in its full windows are gathered by block with one ``np.take`` into a dense (m, windows,
      p) array, with no sort and no padding (:meth:`arrange`); the at most two windows cut by the chunk's edges
      give at most one row per block each, added separately.
    """

    n: int
    m: int
    salt: int
    inverse: np.ndarray  # (Q, m) int32: P_q^{-1}[k], the lane of block k before the shift

    @classmethod
    def draw(cls, n: int, m: int, rng: np.random.Generator) -> WindowedBlocks:
        """Draw the Q = min(64, 2^20 // m) permutations and the salt with public randomness (needs 1 <= m <= n)."""
        if not 1 <= m <= n:
            raise ValueError("the number of blocks m must lie in [1, n]")
        q = max(1, min(64, TABLE_ENTRIES // m))
        inverse = np.argsort(public_uniform(0.0, 1.0, (q, m), rng), axis=1, kind="stable").astype(np.int32)
        salt = int(public_uniform(0.0, 1.0, 1, rng)[0] * 2.0**53) << 11
        return cls(int(n), int(m), salt, inverse)

    @cached_property
    def table(self) -> np.ndarray:
        """(Q, m): P_q[j], the block of lane j before the shift (the inverse of ``inverse``; computed on use)."""
        return np.argsort(self.inverse, axis=1, kind="stable")

    @property
    def block_rows(self) -> int:
        """b = floor(n / m): the rows of every block (the number of full windows)."""
        return self.n // self.m

    def _hash(self, windows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(h(w), s(w)) for an integer array of windows: the permutation index and the shift."""
        z = _splitmix(np.asarray(windows, dtype=_U64).reshape(-1) ^ _U64(self.salt)).reshape(np.shape(windows))
        q = self.inverse.shape[0]
        return (z % _U64(q)).astype(np.int64), ((z >> _U64(8)) % _U64(self.m)).astype(np.int64)

    def blocks_of(self, offset: int, count: int) -> np.ndarray:
        """The block (0..m-1) of rows offset..offset+count-1; -1 for rows of the partial last window."""
        out = np.full(count, -1, dtype=np.int64)
        first, last = self.full_windows(offset, offset + count)
        if last > first:
            out[self.lanes(first, last) - offset] = np.arange(self.m)[:, None]
        for lo, hi, blk in self.edges(offset, offset + count, first, last):
            out[lo - offset:hi - offset] = blk
        return out

    def _window_blocks(self, lo: int, hi: int) -> np.ndarray:
        """The blocks of rows lo..hi-1, all in one window w < b: P_h(w)[(j + s(w)) mod m] for their lanes j."""
        w = lo // self.m
        h, shift = self._hash(np.array([w]))
        return self.table[h[0], (np.arange(lo - w * self.m, hi - w * self.m) + shift[0]) % self.m]

    def lanes(self, first: int, last: int) -> np.ndarray:
        """(m, last - first): entry [k, w - first] is the row index of block k's row in window w."""
        windows = np.arange(first, last, dtype=np.int64)
        h, shift = self._hash(windows)
        local = self.inverse[h].T - shift  # lane j with P_h[(j + s) mod m] = k, before reduction mod m (int64)
        local += np.where(local < 0, self.m, 0)
        local += windows * self.m
        return local

    def order(self, windows_per_step: int = 1 << 10) -> np.ndarray:
        """All used rows, block by block: ``order[k*b:(k+1)*b]`` are block k's rows (for in-memory data)."""
        b = self.block_rows
        out = np.empty((self.m, b), dtype=np.int64)
        for first in range(0, b, windows_per_step):
            last = min(b, first + windows_per_step)
            out[:, first:last] = self.lanes(first, last)
        return out.reshape(-1)

    def edges(self, offset: int, stop: int, first: int, last: int) -> list[tuple[int, int, np.ndarray]]:
        """(lo, hi, blocks of rows lo..hi-1) for each window < b that the chunk rows offset..stop-1 cut
        (``first``, ``last``: its full windows, :meth:`full_windows`); at most one row per block each."""
        m, b = self.m, self.block_rows
        spans = [(offset, min(stop, first * m)), (max(offset, last * m), stop)] if last > first else [(offset, stop)]
        out = []
        for lo, hi in spans:
            while lo < hi and lo // m < b:  # split at window boundaries; windows >= b hold no block
                w = lo // m
                end = min(hi, (w + 1) * m)
                out.append((lo, end, self._window_blocks(lo, end)))
                lo = end
        return out

    def full_windows(self, offset: int, stop: int) -> tuple[int, int]:
        """(first, last): the full windows first..last-1 (below b) that lie inside the rows offset..stop-1."""
        first = min(-(-offset // self.m), self.block_rows)
        return first, max(first, min(stop // self.m, self.block_rows))


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
        u = public_uniform(0.0, 1.0, (ROUNDS, 3), rng)
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
                for key, tweak in zip(self.keys, self.tweaks, strict=True)]

    def _mix(self, x: np.ndarray, keys: list[np.ndarray]) -> np.ndarray:
        """tau on the k-bit domain (k <= 31, so uint32 products reduce correctly modulo 2^k); a new array."""
        mask = np.uint32((1 << self.bits) - 1)
        shift = np.uint32(max(1, (self.bits + 1) // 2))
        x = x.copy()
        for key, mult in zip(keys, self.multipliers, strict=True):
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
