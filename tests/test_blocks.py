"""The public row-to-block assignment of TukeyEM (dpstats.methods.common.permutations.WindowedBlocks) and
per-block sums (dpstats.methods.tukey.block_sums).

Privacy rests on two facts checked here exactly: every block gets b = floor(n/m) rows and a row's block is a
function of its index and the public draws only (evaluating any slice of rows gives the same blocks).  Utility
rests on the blocks not following the file's layout: checked on rows sorted by a variable and on periodic
layouts.  All tests are deterministic given their seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpstats.methods.common.permutations import WindowedBlocks
from dpstats.methods.tukey.block_sums import ShiftedBlockSums, block_sums


@pytest.mark.parametrize("n,m", [(1, 1), (10, 1), (10, 3), (9, 2), (7, 7), (1000, 1000), (5003, 40), (100_000, 1000),
                                 (40_000, 999)])
def test_every_block_gets_one_row_of_every_full_window(n: int, m: int) -> None:
    assignment = WindowedBlocks.draw(n, m, np.random.default_rng(n + m))
    b = assignment.block_rows
    blocks = assignment.blocks_of(0, n)
    assert b == n // m
    assert np.all(np.bincount(blocks[blocks >= 0], minlength=m) == b)
    assert np.all(blocks[m * b:] == -1) and np.all(blocks[:m * b] >= 0)
    windows = blocks[:m * b].reshape(b, m)
    assert np.array_equal(np.sort(windows, axis=1), np.tile(np.arange(m), (b, 1)))
    order = assignment.order()
    assert np.array_equal(blocks[order], np.repeat(np.arange(m), b))
    assert np.array_equal(np.sort(order), np.arange(m * b))


def test_blocks_of_any_slice_agree_with_the_whole() -> None:
    n, m = 10_007, 100
    assignment = WindowedBlocks.draw(n, m, np.random.default_rng(3))
    whole = assignment.blocks_of(0, n)
    for start, count in [(0, 1), (99, 2), (150, 1000), (9_990, 17), (10_000, 7)]:
        np.testing.assert_array_equal(assignment.blocks_of(start, count), whole[start:start + count])
    for first, last in [(0, 1), (5, 37), (99, 100)]:
        lanes = assignment.lanes(first, last)
        assert np.array_equal(whole[lanes], np.repeat(np.arange(m)[:, None], last - first, axis=1))


def test_draw_refuses_more_blocks_than_rows() -> None:
    with pytest.raises(ValueError, match="m must lie"):
        WindowedBlocks.draw(5, 6, np.random.default_rng(0))


def test_blocks_are_spread_evenly_over_a_sorted_file() -> None:
    # Each block takes one row of every window of m rows, so the mean row index of every block is within m/2 of
    # the overall mean: a variable the file is sorted by has (almost) the same mean in every block.
    n, m = 200_000, 500
    assignment = WindowedBlocks.draw(n, m, np.random.default_rng(9))
    order = assignment.order().reshape(m, -1)
    means = order.mean(axis=1)
    assert np.all(np.abs(means - (m * assignment.block_rows - 1) / 2) <= m / 2)


@pytest.mark.parametrize("period", [2, 7, 10, 250, 1000])
def test_periodic_layouts_do_not_line_up_with_the_blocks(period: int) -> None:
    # A panel sorted by unit with `period` rows per unit (waves): if a block took the same lane in every window
    # it would hold a single wave.  Under a uniformly random choice of lane per window the count of block k's
    # rows in wave 0 is Binomial(b, 1/period) when period divides m (close to it otherwise), so sum over blocks
    # of (count - mean)^2 / variance is about chi-square with m degrees of freedom; the bounds m/2 and 2m are
    # crossed with probability below 1e-9 for m = 1000.  Deterministic given the seed.
    n, m = 400_000, 1000
    assignment = WindowedBlocks.draw(n, m, np.random.default_rng(period))
    b = assignment.block_rows
    wave0 = (assignment.order().reshape(m, b) % period) == 0
    counts = wave0.sum(axis=1)
    p = np.mean(wave0)
    statistic = np.sum((counts - b * p) ** 2) / (b * p * (1 - p))
    assert m / 2 < statistic < 2 * m


def test_consecutive_windows_use_unrelated_bijections() -> None:
    # The lane of block k changes between neighbouring windows as for independent uniform permutations: the
    # fraction of (window, block) pairs whose lane repeats in the next window is 1/m on average; with m = 256
    # and 255 * 256 pairs it exceeds 5/m with probability below 1e-9.
    m = 256
    assignment = WindowedBlocks.draw(m * 256, m, np.random.default_rng(1))
    lanes = assignment.lanes(0, 256) % m
    assert np.mean(lanes[:, 1:] == lanes[:, :-1]) < 5 / m


@pytest.mark.parametrize("chunk", [1, 3, 40, 41, 613, 5003])
def test_block_sums_over_chunks_equal_the_sums_over_the_whole(chunk: int) -> None:
    rng = np.random.default_rng(2)
    n, d, m = 5003, 3, 40
    z, y = rng.normal(size=(n, d)), rng.normal(size=n)
    assignment = WindowedBlocks.draw(n, m, rng)
    blocks = assignment.blocks_of(0, n)
    zz, zy = block_sums(z, y, assignment, 0)
    for k in (0, 17, 39):
        rows = blocks == k
        np.testing.assert_allclose(zz[k], z[rows].T @ z[rows], rtol=1e-12)
        np.testing.assert_allclose(zy[k], z[rows].T @ y[rows], rtol=1e-12)
    zz2, zy2 = np.zeros_like(zz), np.zeros_like(zy)
    shifted = None
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        a, c = block_sums(z[start:stop], y[start:stop], assignment, start)
        zz2 += a
        zy2 += c
        part = ShiftedBlockSums.of_chunk(z[start:stop], y[start:stop], assignment, start)
        shifted = part if shifted is None else shifted + part
    np.testing.assert_allclose(zz2, zz, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(zy2, zy, rtol=1e-12, atol=1e-12)
    assert np.all(shifted.count == assignment.block_rows)
    zz3, zy3 = shifted.centred(np.zeros(d))
    np.testing.assert_allclose(zz3, zz, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(zy3, zy, rtol=1e-10, atol=1e-10)


def test_a_blocks_chunked_sums_depend_on_its_own_rows_only() -> None:
    # TukeyEM's proof needs a replaced row to change one block model: the other blocks' sums, rounding
    # included, must not depend on it.  Replace every row outside block 3 and compare block 3's re-centred
    # sums bit for bit, for several chunkings.  Deterministic.
    rng = np.random.default_rng(4)
    n, d, m = 4001, 3, 20
    z, y = rng.normal(5.0, 2.0, size=(n, d)), rng.normal(size=n)
    assignment = WindowedBlocks.draw(n, m, rng)
    others = assignment.blocks_of(0, n) != 3
    z2, y2 = z.copy(), y.copy()
    z2[others] = rng.normal(-7.0, 9.0, size=(int(others.sum()), d))
    y2[others] = rng.normal(size=int(others.sum()))
    centre = np.array([5.1, 4.9, 5.0])
    for chunk in (1, 77, 1000, n):
        sums = []
        for zz_, yy_ in ((z, y), (z2, y2)):
            acc = None
            for start in range(0, n, chunk):
                part = ShiftedBlockSums.of_chunk(zz_[start:start + chunk], yy_[start:start + chunk], assignment, start)
                acc = part if acc is None else acc + part
            sums.append(acc.centred(centre))
        np.testing.assert_array_equal(sums[0][0][3], sums[1][0][3])
        np.testing.assert_array_equal(sums[0][1][3], sums[1][1][3])
