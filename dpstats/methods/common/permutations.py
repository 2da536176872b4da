"""Public orders of the rows, evaluated row by row: which part, group or slot a row index falls in.

A method that splits its rows into public parts (estimation and gradient
rows, groups of a histogram) must choose them without looking at the data,
and data read in chunks (files, a Dask cluster) need the part of each row
from its index alone, without a table of n entries.  The orders here are
keyed bijections evaluated on any slice of row indices; the keys are public
draws (:func:`~dpstats.privacy.mechanisms.public_uniform`), so the parts
depend on n, the options and those draws only, never on the data.

* :class:`WindowedOrder`: a bijection of each window of ``window``
  consecutive rows (DP-RobGD's stratified split and window-local groups).

:class:`~dpstats.methods.blocks.RowPermutation` (a bijection of range(n)) and
:class:`~dpstats.methods.blocks.WindowedBlocks` (TukeyEM's blocks) are the
other public orders of the package.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstats.privacy.mechanisms import public_uniform

__all__ = ["WindowedOrder"]

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


