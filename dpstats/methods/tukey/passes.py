"""TukeyEM's passes over the rows: picklable ``pass_fn(X, y, offset)`` objects and their combines.

Every pass is a sum (or a concatenation in row order) over chunks, so it gives
the same result for in-memory rows (one chunk), files and a Dask cluster, up
to the order of floating-point additions.  A pass that needs only the
preprocessing sample names its rows with ``select`` (the rows at the first
positions of the public order, computed from row indices alone), so a source
evaluates only those rows.  Each pass runs under ``np.errstate(all="ignore")``
(:func:`~dpstats.methods.common.extremes.quiet`), in whatever thread or worker
evaluates it, so nothing printed depends on the data.  Nothing here draws
noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csc_matrix

from dpstats.methods.common.extremes import quiet
from dpstats.methods.common.permutations import WindowedBlocks
from dpstats.methods.tukey.block_sums import ShiftedBlockSums, block_products
from dpstats.methods.tukey.preprocessing import Domains, Preprocessing
from dpstats.methods.tukey.radius_check import clip_excess

__all__ = [
    "PASS_ROWS",
    "CentredBlockSums",
    "CombineWithBlockSums",
    "GridCounts",
    "PilotPass",
    "ResidualPass",
    "RowPieces",
    "SampleCheck",
    "SampleHistogram",
    "SampleRows",
    "WithBlockSums",
    "add_centred_sums",
    "add_pairs",
    "concat_rows",
    "dense_ranks",
    "merge_counts",
]

PASS_ROWS = 1 << 14  # rows per slice of the sequential passes (a slice of d + 1 columns stays in cache)
_DENSE_AFTER = 1 << 14  # a histogram with more occupied bins than this is kept dense


# -- combines -----------------------------------------------------------------------------------------------------

@dataclass
class RowPieces:
    """Rows gathered from chunks, in row order: the chunks' (X, y) pieces, joined once when read (:meth:`arrays`),
    so that adding a chunk copies no rows."""

    pieces: list[tuple[np.ndarray, np.ndarray]]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(X, y) of all the rows, in row order (the piece itself when there is one)."""
        if len(self.pieces) == 1:
            return self.pieces[0]
        return np.concatenate([p[0] for p in self.pieces]), np.concatenate([p[1] for p in self.pieces])


def concat_rows(a: RowPieces, b: RowPieces) -> RowPieces:
    """Rows gathered from two chunks, in row order."""
    return RowPieces(a.pieces + b.pieces)


@quiet
def add_pairs(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Sum of two pairs of partial sums."""
    return a[0] + b[0], a[1] + b[1]


# -- the preprocessing sample -------------------------------------------------------------------------------------

class SampleRows:
    """The rows of a chunk at the sample's positions, themselves (sources in this process only; picklable).

    The passes over the sample (this class and its subclasses) name their selection with ``selection`` (the
    array of sample rows itself), so a cluster keeps the sample's rows where it read them and runs the later
    passes over the sample without reading the data again (:mod:`dpstats.rows.base`).

    Parameters
    ----------
    rows : numpy.ndarray
        The sorted global indices of the sample rows.
    """

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows

    @property
    def selection(self) -> np.ndarray:
        """The selected rows (passes with the same array select the same rows)."""
        return self.rows

    def select(self, offset: int, count: int) -> np.ndarray:
        """The chunk's sample rows (local indices)."""
        lo, hi = np.searchsorted(self.rows, [offset, offset + count])
        return self.rows[lo:hi] - offset

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> RowPieces:
        return RowPieces([(np.array(X, dtype=float), np.array(y, dtype=float))])


@dataclass
class GridCounts:
    """Histogram counts over a public grid of ``size`` bins, per variable: sparse (bins, counts), or dense counts
    with bins None.  Merged by summing (:func:`merge_counts`)."""

    bins: list[np.ndarray | None]
    counts: list[np.ndarray]
    size: int


def merge_counts(a: GridCounts, b: GridCounts) -> GridCounts:
    """Sum two histograms; sparse (bins, counts) while small, a dense count per bin (bins=None) once large."""
    bins: list[np.ndarray | None] = []
    counts = []
    for ba, ca, bb, cb in zip(a.bins, a.counts, b.bins, b.counts, strict=True):
        if ba is None or bb is None or ca.size + cb.size > _DENSE_AFTER:
            dense = np.zeros(a.size, dtype=np.int64)
            for bins_, counts_ in ((ba, ca), (bb, cb)):
                if bins_ is None:
                    dense += counts_
                else:
                    dense += np.bincount(bins_, weights=counts_, minlength=a.size).round().astype(np.int64)
            bins.append(None)
            counts.append(dense)
        else:
            u, inv = np.unique(np.concatenate([ba, bb]), return_inverse=True)
            bins.append(u)
            counts.append(np.bincount(inv, weights=np.concatenate([ca, cb]), minlength=u.size).astype(np.int64))
    return GridCounts(bins, counts, a.size)


def dense_ranks(counts: GridCounts, grid: np.ndarray) -> np.ndarray:
    """The cumulative counts #{v <= g} at every grid point, per variable, from sparse or dense grid counts."""
    dense = np.stack([(c if b is None else np.bincount(b, weights=c, minlength=counts.size).round()
                       .astype(np.int64))[:grid.size] for b, c in zip(counts.bins, counts.counts, strict=True)])
    return np.cumsum(dense, axis=1)


class SampleHistogram(SampleRows):
    """Histograms over a public grid of the handled variables of the sample rows, clipped into their domains (of
    ``|v - centres|`` once the centres are released).

    Only counts per public grid bin leave a chunk, never a row.  Value v falls
    in bin searchsorted(grid, v, side="left"), so the cumulative counts are
    exactly #{v <= g} at every grid point g, the ranks of the sample held in
    one process.

    Parameters
    ----------
    rows : numpy.ndarray
        The sorted global indices of the sample rows.
    cols : numpy.ndarray
        The handled columns of X (the response is the last variable).
    grid : numpy.ndarray
        The public grid.
    centres : numpy.ndarray or None
        The released centres (None: histogram the values themselves).
    domains : Domains
        The public ranges of the handled variables.
    """

    def __init__(self, rows: np.ndarray, cols: np.ndarray, grid: np.ndarray, centres: np.ndarray | None,
                 domains: Domains) -> None:
        super().__init__(rows)
        self.cols, self.grid, self.centres, self.domains = cols, grid, centres, domains

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> GridCounts:  # type: ignore[override]
        values = self.domains.clip(np.vstack([X[:, self.cols].T, y[None, :]]))
        if self.centres is not None:
            values = np.abs(values - self.centres[:, None])
        bins: list[np.ndarray | None] = []
        counts = []
        for row in values:
            u, c = np.unique(np.searchsorted(self.grid, row, side="left"), return_counts=True)
            bins.append(u)
            counts.append(c.astype(np.int64))
        return GridCounts(bins, counts, self.grid.size + 1)


class SampleCheck(SampleRows):
    """:func:`~dpstats.methods.tukey.radius_check.clip_excess` of the sample rows of one chunk."""

    def __init__(self, rows: np.ndarray, prep: Preprocessing) -> None:
        super().__init__(rows)
        self.prep = prep

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:  # type: ignore[override]
        return clip_excess(X, self.prep)


# -- the blocks ---------------------------------------------------------------------------------------------------

class WithBlockSums:
    """fn(X, y, offset) -> (:class:`ShiftedBlockSums` of the chunk, ``companion`` on the chunk): one read for the
    per-block sums (re-centred exactly once the centres are released) and another pass's result.

    The companion is the preprocessing sample (:class:`SampleRows`, or on a cluster :class:`SampleHistogram`:
    only counts leave a chunk), the pilot's sums (:class:`PilotPass`), or None; a companion with ``select`` is
    evaluated on its selected rows only.

    Parameters
    ----------
    assignment : WindowedBlocks
        The public blocks.
    companion : callable or None
        A pass over the same chunk.
    """

    def __init__(self, assignment: WindowedBlocks, companion: Any = None) -> None:
        self.assignment, self.companion = assignment, companion

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> tuple[ShiftedBlockSums, Any]:
        sums = ShiftedBlockSums.of_chunk(X, y, self.assignment, offset)
        if self.companion is None:
            return sums, None
        select = getattr(self.companion, "select", None)
        if select is not None:
            idx = select(offset, X.shape[0])
            X, y = X[idx], y[idx]
        return sums, self.companion(X, y, offset)


class CombineWithBlockSums:
    """combine of :class:`WithBlockSums`: the block sums added, the companions combined by ``combine``.

    Parameters
    ----------
    combine : callable or None
        The companion's combine (None without a companion).
    """

    def __init__(self, combine: Any = None) -> None:
        self.combine = combine

    def __call__(self, a: tuple[ShiftedBlockSums, Any], b: tuple[ShiftedBlockSums, Any]
                 ) -> tuple[ShiftedBlockSums, Any]:
        return a[0] + b[0], (None if self.combine is None else self.combine(a[1], b[1]))


class PilotPass:
    """fn(X, y, offset) -> (Z^T Z, Z^T y~) of every row of the chunk, clipped for the pilot
    (:meth:`~dpstats.methods.tukey.preprocessing.Preprocessing.pilot_sums`), in slices of PASS_ROWS rows (no copy
    of the chunk; rows in no block enter too).

    Parameters
    ----------
    prep : Preprocessing
        The released centres and radii.
    """

    uses_offset = False

    def __init__(self, prep: Preprocessing) -> None:
        self.prep = prep

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
        d = X.shape[1]
        gram, moment = np.zeros((d, d)), np.zeros(d)
        for start in range(0, X.shape[0], PASS_ROWS):
            g, v = self.prep.pilot_sums(X[start:start + PASS_ROWS], y[start:start + PASS_ROWS])
            gram += g
            moment += v
        return gram, moment


class CentredBlockSums:
    """fn(X, y, offset) -> (the per-block sums of v v^T for v = [x - c, y - c_y] about the released centres (m,
    d + 1, d + 1), the pilot's sums of the chunk (:class:`PilotPass`)): the read of ``blocks="moments"`` on rows
    that are not re-read cheaply.

    The centres are released before this read, so each block's sums are taken about them directly (the rows
    gathered by block and centred in cache, no copy of the chunk:
    :func:`~dpstats.methods.tukey.block_sums.block_products`); per-chunk partial sums add up.  A column equal
    to its centre in a block is exactly 0 there.

    Parameters
    ----------
    assignment : WindowedBlocks
        The public blocks.
    prep : Preprocessing
        The released centres and radii.
    """

    def __init__(self, assignment: WindowedBlocks, prep: Preprocessing) -> None:
        self.assignment, self.prep = assignment, prep

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int
                 ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        shift = np.append(self.prep.centre, self.prep.y_centre)
        return block_products(X, y, self.assignment, offset, shift), PilotPass(self.prep)(X, y, offset)


@quiet
def add_centred_sums(a: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]],
                     b: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]
                     ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """combine of :class:`CentredBlockSums`."""
    return a[0] + b[0], add_pairs(a[1], b[1])


class ResidualPass:
    """fn(X, y, offset) -> Z_k^T (y_k - c_y - Z_k b~) for every block k (m, d), z = (x - c)/r unclipped: the
    pilot's residuals formed row by row and added into their blocks, in slices of PASS_ROWS rows.

    Mathematically Z_k^T (y_k - c_y) - (Z_k^T Z_k) b~, but no per-block Gram matrix and no gather of the rows by
    block is needed: on the rows of x as they are, r = y - x (b~/r) + c (b~/r) - c_y, and the rows of a slice
    are added into their blocks by one sparse product (one entry per row, its residual, at its block); then
    Z_k^T r_k = (X_k^T r_k - c 1^T r_k) / r.  (Rounding relative to the result is about 1e-16 sqrt(b) |c| /
    spread: negligible next to the sampling noise of a block estimate unless the columns sit 10^8 spreads away
    from zero.)

    Parameters
    ----------
    assignment : WindowedBlocks
        The public blocks.
    prep : Preprocessing
        The released centres and radii.
    pilot : numpy.ndarray
        The pilot b~ on z.
    """

    def __init__(self, assignment: WindowedBlocks, prep: Preprocessing, pilot: np.ndarray) -> None:
        self.assignment, self.prep, self.pilot = assignment, prep, pilot

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        n, d = X.shape
        m, prep = self.assignment.m, self.prep
        beta = self.pilot / prep.radius  # the pilot on the raw columns, without the constant c . beta
        shift = float(prep.centre @ beta) - prep.y_centre
        sums = np.zeros((m + 1, d))  # the last row collects the rows in no block
        totals = np.zeros(m + 1)
        need_totals = prep.intercept_index is None and bool(np.any(prep.centre))
        for start in range(0, n, PASS_ROWS):
            stop = min(n, start + PASS_ROWS)
            xs = X[start:stop]
            r = y[start:stop] - xs @ beta
            r += shift
            blocks = self.assignment.blocks_of(offset + start, stop - start)
            labels = np.where(blocks < 0, m, blocks)
            scatter = csc_matrix((r, labels, np.arange(stop - start + 1)), shape=(m + 1, stop - start))
            sums += scatter @ xs
            if need_totals:
                totals += np.asarray(scatter.sum(axis=1)).ravel()
        if prep.intercept_index is not None:
            totals = sums[:, prep.intercept_index]  # the intercept column is the constant 1
        return ((sums - np.outer(totals, prep.centre)) / prep.radius)[:m]
