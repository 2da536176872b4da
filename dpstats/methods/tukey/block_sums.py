"""Per-block sums of TukeyEM's blocks over chunks of rows.

The blocks are :class:`~dpstats.methods.common.permutations.WindowedBlocks`.

A row's block depends on its index and public draws only, and every sum here
keeps each block's arithmetic, rounding included, a function of that block's
own rows: a replaced row changes one block's sums, which is all TukeyEM's
proof needs (docs/proofs/tukey.md).  Partial sums of chunks are added, so the
result is the same whatever the partition, up to the order of floating-point
additions.  Nothing here draws noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpstats.methods.common.extremes import quiet
from dpstats.methods.common.permutations import WindowedBlocks

__all__ = ["COPY_ROWS", "GROUP_ROWS", "ShiftedBlockSums", "block_products", "block_sums", "gather_rows"]

#: rows gathered by block at a time (bounded working memory whatever the chunk's size)
GROUP_ROWS = 1 << 12
#: a chunk of at most this many rows is copied as [x, y, 1] before it is gathered (faster); a larger one (rows
#: held in memory) is gathered without a copy
COPY_ROWS = 1 << 18


def gather_rows(X: np.ndarray, y: np.ndarray, idx: np.ndarray, *, ones: bool = False) -> np.ndarray:
    """The rows [x, y] (and a column of ones when ``ones``) at the local indices ``idx`` (any shape), gathered
    straight from ``X`` and ``y`` into one new array of shape idx.shape + (d + 1 [+ 1],) (no copy of the chunk).

    Parameters
    ----------
    X, y : numpy.ndarray
        A chunk's design rows (rows x d) and responses.
    idx : numpy.ndarray
        Row indices into the chunk (all in range).
    ones : bool
        Append a column of ones.

    Returns
    -------
    numpy.ndarray
    """
    d = X.shape[1]
    out = np.empty((*idx.shape, d + 1 + int(ones)))
    np.take(X, idx, axis=0, out=out[..., :d], mode="clip")  # indices are in range
    np.take(y, idx, out=out[..., d], mode="clip")
    if ones:
        out[..., d + 1] = 1.0
    return out


def block_products(X: np.ndarray, y: np.ndarray, blocks: WindowedBlocks, offset: int,
                   shift: np.ndarray | None = None) -> np.ndarray:
    """Per-block sums of outer products v v^T of the rows v = [x, y] - shift of one chunk (rows offset..; rows in
    no block are left out).

    The chunk's full windows are gathered by groups of blocks straight from ``X`` and ``y`` (at most about
    :data:`GROUP_ROWS` rows at a time, so the gathered rows stay in cache) and shifted there, each group with one
    batched product; the rows of the at most two windows cut by the chunk's edges (at most one row per block
    each) are added separately.  No copy of the chunk is made, and each entry of v is the same subtraction as
    in a shifted copy of the chunk, so the sums are those of that copy, bit for bit.  Each block's sum is
    computed from that block's rows alone.

    Parameters
    ----------
    X : numpy.ndarray
        The chunk's design rows (rows x d).
    y : numpy.ndarray
        The chunk's responses.
    blocks : WindowedBlocks
        The public assignment of rows to blocks.
    offset : int
        Global index of the chunk's first row.
    shift : numpy.ndarray or None
        (d + 1,) subtracted from every row [x, y] (TukeyEM's released centres); None: no shift.

    Returns
    -------
    numpy.ndarray
        (m, d + 1, d + 1).
    """
    m, d = blocks.m, X.shape[1]
    p = d + 1
    out = np.zeros((m, p, p))
    stop = offset + X.shape[0]
    first, last = blocks.full_windows(offset, stop)
    if last > first:
        lanes = blocks.lanes(first, last) - offset
        w = lanes.shape[1]
        per = max(1, GROUP_ROWS // w)
        for start in range(0, m, per):
            v = gather_rows(X, y, lanes[start:start + per])
            if shift is not None:
                v -= shift
            np.matmul(v.transpose(0, 2, 1), v, out=out[start:start + per])
    for lo, hi, blk in blocks.edges(offset, stop, first, last):
        rows = np.column_stack([X[lo - offset:hi - offset], y[lo - offset:hi - offset]])
        if shift is not None:
            rows -= shift
        out[blk] += rows[:, :, None] * rows[:, None, :]
    return out


def block_sums(z: np.ndarray, y: np.ndarray, blocks: WindowedBlocks, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-block sums Z_k^T Z_k and Z_k^T y_k of one chunk of rows offset.. (rows in no block are left out).

    Parameters
    ----------
    z : numpy.ndarray
        The chunk's rows (rows x d).
    y : numpy.ndarray
        The chunk's responses.
    blocks : WindowedBlocks
        The public assignment of rows to blocks.
    offset : int
        Global index of the chunk's first row.

    Returns
    -------
    tuple of numpy.ndarray
        (m, d, d) and (m, d).
    """
    d = z.shape[1]
    full = block_products(z, y, blocks, offset)
    return np.ascontiguousarray(full[:, :d, :d]), np.ascontiguousarray(full[:, :d, d])


@dataclass
class ShiftedBlockSums:
    """Per-block sums of rows v = [x, y] about a per-block shift a_k: ``shift`` (m, p), ``count`` (m,),
    ``first`` = sum (v - a_k) (m, p) and ``second`` = sum (v - a_k)(v - a_k)^T (m, p, p).

    Re-expressing block k's sums about another shift is exact algebra,

        sum (v - a')(v - a')^T = S2 + S1 t^T + t S1^T + k t t^T,   S1 + k t,   t = a_k - a',

    so sums of chunks taken about different shifts add up, and the sums about a centre released only after
    the pass (TukeyEM's private medians) follow without a second pass.  Each chunk's block k is taken about
    one of block k's own rows in that chunk, which keeps |t| of the order of the data's spread (re-centring
    raw sums, a = 0, would lose about 2 log10(|mean| / spread) digits to cancellation), keeps a column that
    is constant at the centre within a block exactly 0 after re-centring (so the rank decision of the block's
    fit sees an exact zero column), and makes block k's sums, rounding included, a function of block k's rows
    alone: other blocks' rows never enter its arithmetic.
    """

    shift: np.ndarray
    count: np.ndarray
    first: np.ndarray
    second: np.ndarray

    @classmethod
    @quiet
    def of_chunk(cls, X: np.ndarray, y: np.ndarray, blocks: WindowedBlocks, offset: int) -> ShiftedBlockSums:
        """The sums of one chunk's rows offset.. (rows in no block left out), block k about one of its rows.

        The chunk's full windows are gathered by groups of blocks (at most about :data:`GROUP_ROWS` rows at a
        time), each block about its row in the first full window, with one batched product per group; the
        rows of the at most two windows cut by the chunk's edges (at most one row per block each) are added
        separately, about the same row (or, for a block with no full window in the chunk, its first edge row).

        Parameters
        ----------
        X : numpy.ndarray
            The chunk's design rows (rows x d).
        y : numpy.ndarray
            The chunk's responses.
        blocks : WindowedBlocks
            The public assignment of rows to blocks.
        offset : int
            Global index of the chunk's first row.

        Returns
        -------
        ShiftedBlockSums
        """
        m, d = blocks.m, X.shape[1]
        p = d + 1
        stop = offset + X.shape[0]
        out = cls(np.zeros((m, p)), np.zeros(m), np.zeros((m, p)), np.zeros((m, p, p)))
        have = np.zeros(m, dtype=bool)
        first, last = blocks.full_windows(offset, stop)
        if last > first:
            out._add_windows(X, y, blocks.lanes(first, last) - offset)
            have[:] = True
        for lo, hi, blk in blocks.edges(offset, stop, first, last):
            out._add_edge(X[lo - offset:hi - offset], y[lo - offset:hi - offset], blk, have)
        return out

    def _add_windows(self, X: np.ndarray, y: np.ndarray, lanes: np.ndarray) -> None:
        """Sums of the full windows (``lanes``: (m, w) local row indices, block k's row of each window), each
        block about its first row: the rows [x, y, 1] gathered by groups of blocks, one batched product per
        group.  A chunk of at most :data:`COPY_ROWS` rows is first copied as [x, y, 1] (one gather per group
        then); a larger one (rows held in memory) is gathered straight from ``X`` and ``y``, without a copy of
        the chunk.  The gathered values are the same either way."""
        m, w = lanes.shape
        d = X.shape[1]
        p = d + 1
        whole = None
        if X.shape[0] <= COPY_ROWS:
            whole = np.empty((X.shape[0], p + 1))
            whole[:, :d] = X
            whole[:, d] = y
            whole[:, p] = 1.0
        per = max(1, GROUP_ROWS // w)
        for start in range(0, m, per):
            stop = min(m, start + per)
            idx = lanes[start:stop]
            if whole is not None:
                g = np.take(whole, idx, axis=0, mode="clip")  # indices are in range
            else:
                g = gather_rows(X, y, idx, ones=True)
            shift = g[:, 0].copy()
            shift[:, p] = 0.0  # the column of ones stays 1
            g -= shift[:, None, :]
            full = np.matmul(g.transpose(0, 2, 1), g)
            self.shift[start:stop] = shift[:, :p]
            self.second[start:stop] = full[:, :p, :p]
            self.first[start:stop] = full[:, :p, p]
            self.count[start:stop] = full[:, p, p]

    def _add_edge(self, X: np.ndarray, y: np.ndarray, blk: np.ndarray, have: np.ndarray) -> None:
        """Add the rows of one cut window (distinct blocks ``blk``), a block without a shift yet taking its row."""
        v = np.column_stack([X, y])
        new = ~have[blk]
        self.shift[blk[new]] = v[new]
        have[blk[new]] = True
        v -= self.shift[blk]
        self.count[blk] += 1.0
        self.first[blk] += v
        self.second[blk] += v[:, :, None] * v[:, None, :]

    @quiet
    def about(self, shift: np.ndarray) -> ShiftedBlockSums:
        """The same sums about ``shift`` ((p,) for every block, or (m, p)) (a new object)."""
        new = np.broadcast_to(np.asarray(shift, dtype=float), self.shift.shape)
        t = self.shift - new
        outer = self.first[:, :, None] * t[:, None, :]
        second = self.second + outer  # S2 + S1 t^T + t S1^T + k t t^T, added in that order, in place
        second += outer.transpose(0, 2, 1)
        outer = t[:, :, None] * t[:, None, :]
        outer *= self.count[:, None, None]
        second += outer
        return ShiftedBlockSums(np.array(new), self.count, self.first + self.count[:, None] * t, second)

    @quiet
    def __add__(self, other: ShiftedBlockSums) -> ShiftedBlockSums:
        o = other.about(self.shift)  # its first and second are new arrays: added into in place
        o.first += self.first
        o.second += self.second
        return ShiftedBlockSums(self.shift, self.count + o.count, o.first, o.second)

    def centred(self, centre: np.ndarray, y_centre: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Per-block Z_k^T Z_k and Z_k^T (y_k - y_centre) for z = x - centre.

        Parameters
        ----------
        centre : numpy.ndarray
            The centre of the columns (d).
        y_centre : float
            The centre of the response.

        Returns
        -------
        tuple of numpy.ndarray
            (m, d, d) and (m, d).
        """
        d = self.second.shape[-1] - 1
        s = self.about(np.append(np.asarray(centre, dtype=float), y_centre))
        return np.ascontiguousarray(s.second[:, :d, :d]), np.ascontiguousarray(s.second[:, :d, d])
