"""Private Theil-Sen estimator for one predictor (``y ~ x``: d = 2 with the intercept).

The DPTheilSen estimator of Alabi, McMillan, Sarathy, Smith & Vadhan ("Differentially private simple linear
regression", PoPETs 2022, Algorithm "DPTheilSenkMatch" with the exponential-mechanism median), analysed by
Sarathy & Vadhan ("Analyzing the differentially private Theil-Sen estimator for simple linear regression",
2022), with these choices of ours:

* **pairs**: k public random perfect matchings (default 16) of the rows inside public windows of consecutive
  row indices (:class:`WindowedPairing`), so that a row is in at most k pairs and a pass over chunked data
  needs only the rows of the windows cut by a chunk edge from its neighbour;
* **slope** b: the exponential-mechanism median of the pair slopes (dy / dx) over the cells of a public
  symmetric log grid scaled by the declared ranges (slopes from 1e-4 to 1e3 times the box diagonal
  (y range) / (x range), 1% apart, plus a zero cell), with a base measure that is flat near zero, log-uniform
  up to a few box diagonals and falling beyond (:func:`slope_grid`); pairs with dx = 0 count half below and
  half above every cell;
* **intercept** a: the exponential-mechanism median of the residuals y - b x (Sen's intercept) over a public
  linear grid of the residual's range, in a second pass;
* **intervals** (``inference=True``, when n * epsilon >= :data:`INTERVAL_MIN_N_EPSILON`): a parametric
  bootstrap from released values only, in two regimes of the public n * epsilon.  From
  :data:`SIMULATE_BELOW_N_EPSILON` on, the linearised error of each median: the sampling spread of the median's
  rank (an incomplete U-statistic for the k-matching, a binomial for the residuals), the Laplace rank noise of
  the exponential mechanism, and the slope of the inverse distribution function at the median, read off a
  private quarter-radius (the radius around the released median holding a quarter of the pairs).  Below it,
  where that model under-covers (the radius and the median's rank error are too heavy-tailed), the bootstrap
  runs both exponential mechanisms exactly on Cauchy profiles with ties, whose scale and tie share are drawn
  from their posterior given a noisy histogram (Laplace) of the values' distances from the released median in
  one-decade bins, the ties one more bin, under a weakly informative prior on the slopes' scale
  (:class:`ProfileRelease`, :class:`ProfilePrior`).  The intercept's
  draws carry the slope's error through a private mean of x;
* **error block** (each coefficient's predicted privacy error): the second moments of the bootstrap's privacy
  parts; for a two-valued predictor (a two-level factor, or an integer column declared between consecutive
  integers, whose values are public: ``FitContext.column_values``)
  from n * epsilon = 250 on, the slope's exponential mechanism run on the pair-slope profile the released values
  imply (:class:`TwoValueProfile`: ties for pairs with equal x, normal slopes for the others), post-processing.

Privacy (replace-one neighbours, n public): a replaced row changes at most k pair slopes and one residual, so
every count the exponential mechanisms score moves by at most k (slopes) or 1 (residuals), a distance histogram
by at most 2k (2) in L1 norm, and the clipped sum of x by at most the width of x's range.  Each release is pure
epsilon_i-DP and the epsilon_i add up to epsilon: the fit is epsilon-DP (delta = 0 spent).  Everything else
(grids, pairing, bootstrap draws) is public randomness or post-processing.  The two passes compute the same
counts whatever the partition of the rows into chunks, so the argument holds for in-memory rows, files and Dask
alike.

Proof: docs/proofs/theilsen.md
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, stats

from dpstats.errors import InvalidArgumentError, MethodOptionError
from dpstats.methods.spec import (
    ErrorSplit,
    FitContext,
    Inference,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
    check_bool,
)
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import (
    exponential_mechanism,
    keyed_public_generator,
    laplace_mechanism,
    permutation,
    post_processing_normal,
    public_uniform,
)
from dpstats.privacy.missing_screen import requested_epsilon
from dpstats.rates import UpperRate
from dpstats.rows.base import Rows
from dpstats.validation import at_least, shown

__all__ = [
    "INTERVAL_MIN_N_EPSILON",
    "SPEC",
    "CellGrid",
    "MedianRelease",
    "ProfileRelease",
    "ReleasedMedian",
    "ReleasedMoments",
    "ResidualPass",
    "SlopePass",
    "TheilSenOptions",
    "TwoValueProfile",
    "WindowedPairing",
    "cell_scores",
    "distance_counts",
    "distance_edges",
    "fit",
    "interval_reported",
    "linear_grid",
    "privacy_moment",
    "privacy_split",
    "quantile_moment",
    "radius_grid",
    "slope_grid",
    "slope_grid_ratio",
    "spread_release",
    "two_values",
]

#: the slope grid spans |slope| in S * 10^[-4, 3], S = (y range) / (x range) the box diagonal
SLOPE_DECADES = (-4.0, 3.0)
#: consecutive edges of the log grids differ by this factor (1% resolution)
GRID_RATIO = 1.01
#: from n * epsilon = SIMULATE_BELOW_N_EPSILON on, the slope grid's edges are 1 + FINE_GRID / sqrt(n) apart instead
#: (never more than GRID_RATIO, never less than 1 + FINE_GRID_FLOOR): the slope's sampling error shrinks as
#: 1 / sqrt(n), and at large n a 1% cell is several standard errors wide (:func:`slope_grid_ratio`; BENCHMARKS.md).
#: Finer only above 10^4 rows: at a few hundred rows a finer grid resolves point masses of rounded data (many pair
#: slopes equal), whose quarter-radius can then fall inside the median's cell and collapse the linearised interval
FINE_GRID, FINE_GRID_FLOOR = 1.0, 1e-4
#: the base measure of a slope cell is (cell width) / ((|slope| + PRIOR_SCALE * S) (1 + |slope| / (PRIOR_TAIL * S))):
#: flat below PRIOR_SCALE * S, log-uniform up to PRIOR_TAIL * S, its log-density falling as 1 / |slope| beyond
PRIOR_SCALE = 0.2
PRIOR_TAIL = 3.0
#: cells of the residual grid (linear over the residual's public range): a power of two near 64 sqrt(n), clipped
#: to [2^10, 2^16], so that a cell stays well below the intercept's sampling error (public: depends on n only)
RESIDUAL_CELLS = (1 << 10, 1 << 16)
#: radius grid of the residual spread: R * 10^[-5, 0], R the width of the residual range
RESIDUAL_RADIUS_DECADES = (-5.0, 0.0)
#: the spread is the radius around the released median that holds this share of the pairs (or residuals)
SPREAD_SHARE = 0.25
#: Var(E[1{slope_ij < beta} | row i]) for continuous x and errors independent of x (derived in the proof page)
ZETA1 = 1.0 / 36.0
#: the linearised bootstrap keeps the radius's relative error above -1 + this floor (a draw stays positive)
SPREAD_FLOOR = 0.2
#: n * epsilon below which intervals are not reported (the lowest n * epsilon where their coverage was measured,
#: in benchmarks/theilsen.py; see BENCHMARKS.md)
INTERVAL_MIN_N_EPSILON = 50.0
#: What the intervals are for (the summary says it).
INTERVAL_TARGET = ("the Theil-Sen line of the clipped data (the median of the pairwise slopes, and the median "
                   "intercept given it), which is least squares' line when the errors are symmetric")
#: shares of epsilon: slope median, slope spread, intercept median, intercept spread, mean of x
INFERENCE_SHARES = (0.55, 0.15, 0.16, 0.10, 0.04)
#: the same below SIMULATE_BELOW_N_EPSILON, where the spreads are noisy distance histograms (ProfileRelease): the
#: slope's histogram gets what makes the intervals informative from n * epsilon = 150 at a small cost in the
#: slope's accuracy (benchmarks/results/theilsen/reading.md)
SMALL_INFERENCE_SHARES = (0.61, 0.15, 0.16, 0.06, 0.02)
#: shares of epsilon without inference: slope median, intercept median
POINT_SHARES = (0.75, 0.25)

BOOTSTRAP_DESCRIPTION = ("parametric bootstrap of the error of the private medians (sampling, exponential-"
                         "mechanism rank noise, private spreads; below n * epsilon = 250 the mechanisms simulated "
                         "on the profiles the released distance histograms make plausible), from released values "
                         "only; standard errors from the replicates' central 95% (its width over 2 x 1.96), which "
                         "the rare replicates far out, from the exponential mechanism's unlikely picks, do not "
                         "set")
REFLECTED_DESCRIPTION = ("; for a two-valued predictor the slope grid ends at the largest possible slope and the "
                         "errors enter the replicates with the opposite sign, so the basic intervals below are the "
                         "errors' percentile intervals")
TWO_VALUE_NOTE = ("for a two-valued predictor (a two-level factor, or an integer column declared between "
                  "consecutive integers) Theil-Sen's slope is the median of the differences between the two groups' "
                  "responses (the Hodges-Lehmann shift), which equals least squares' difference of the group means "
                  "for a continuous response with symmetric errors; for a discrete response such as 0/1 it can be "
                  "far from it (e.g. 1 where the proportions differ by 0.5): fit method='pgd' for the difference "
                  "of means")
NO_RSQUARED = "Theil-Sen releases medians of slopes and residuals, not the sums of squares R^2 needs"


@dataclass(frozen=True)
class TheilSenOptions(MethodOptions):
    """Options of ``theilsen``.

    Attributes
    ----------
    inference : bool
        Spend a share of the budget on the releases that give standard errors and intervals (default), when
        n * epsilon >= :data:`INTERVAL_MIN_N_EPSILON`; below, or with ``False``, the whole budget goes to the
        two medians.
    matchings : int
        k, the number of public random matchings of the rows in each window (1 to 64; default 16): each row
        is in at most k pairs.  More matchings use more pairs (smaller sampling error) at the same privacy
        noise in rank fraction; 1 is the single matching of OpenDP's Theil-Sen.
    window_rows : int
        Rows per pairing window (at least 16; default 32,768): rows are paired only with rows of their
        window.  Data sorted by x and much longer than a window lose efficiency (never privacy).
    bootstrap : int
        Parametric bootstrap replicates (>= 100).
    """

    inference: bool = True
    matchings: int = 16
    window_rows: int = 32768
    bootstrap: int = 2000

    def __post_init__(self) -> None:
        check_bool(self.inference, "inference")
        _check_int(self.matchings, "matchings", 1, 64, "the number of matchings per window")
        _check_int(self.window_rows, "window_rows", 16, 1 << 24, "rows per pairing window")
        _check_int(self.bootstrap, "bootstrap", 100, 1 << 20, "parametric bootstrap replicates")


def _check_int(value: object, name: str, lo: int, hi: int, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not lo <= value <= hi:
        raise MethodOptionError(f"{name} must be an integer in [{lo}, {hi}] ({what}), got {shown(value)}")


# -- public grids -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CellGrid:
    """A public partition of the real line into cells, for the exponential mechanism.

    Cell 0 is (-inf, e_0), cell c is [e_(c-1), e_c) and the last cell is [e_last, inf), with ``edges`` e
    sorted and finite.  ``values`` is the number that stands for each cell when it is released, and
    ``log_prior`` the log base measure of each cell (the mechanism samples a cell with probability
    proportional to exp(log_prior + epsilon * score / (2 sensitivity))).  ``locator`` describes how the edges
    were built (``("log", g_1, log ratio, m)`` for edges -g_m..-g_1, g_1..g_m; ``("radius", r_1, log ratio)``;
    ``("linear", lo, width)``), so that :meth:`index` can guess a value's cell arithmetically before the exact
    comparison with the edges.
    """

    edges: np.ndarray
    values: np.ndarray
    log_prior: np.ndarray
    locator: tuple[str, float, float, int] = ("none", 0.0, 0.0, 0)

    @property
    def cells(self) -> int:
        """The number of cells (edges + 1)."""
        return int(self.edges.size) + 1

    def index(self, v: np.ndarray) -> np.ndarray:
        """The cell of each value: the number of edges at or below it (``searchsorted(edges, v, "right")``)."""
        v = np.asarray(v, dtype=float)
        guess = self._guess(v)
        if guess is None:
            return np.searchsorted(self.edges, v, side="right")
        # the guess is off by at most a step or two (rounding of the logarithm): fix it by exact comparisons
        top = self.edges.size
        for _ in range(64):
            up = (guess < top) & (self.edges[np.minimum(guess, top - 1)] <= v)
            down = (guess > 0) & (self.edges[np.maximum(guess - 1, 0)] > v)
            if not (up.any() or down.any()):
                return guess
            guess = guess + up - down
        return np.searchsorted(self.edges, v, side="right")

    def _guess(self, v: np.ndarray) -> np.ndarray | None:
        kind, first, step, m = self.locator
        top = self.edges.size
        with np.errstate(all="ignore"):
            if kind == "linear":
                raw = np.floor((v - first) / step) + 1.0
            elif kind in ("log", "radius"):
                a = np.abs(v)
                k = np.where(a >= first, np.floor(np.log(np.maximum(a, first) / first) / step) + 1.0, 0.0)
                raw = k if kind == "radius" else np.where(v >= 0, m + k, m - k)
            else:
                return None
        raw = np.where(np.isnan(v), float(top), raw)  # NaN sorts after every edge, as in searchsorted
        return np.clip(np.nan_to_num(raw, nan=float(top), posinf=float(top), neginf=0.0), 0, top).astype(np.int64)

    def width(self, cell: int) -> float:
        """The width of ``cell``; an unbounded end cell takes its bounded neighbour's (the value released for it
        is the neighbour's edge)."""
        top = self.edges.size
        if top < 2:
            return 0.0
        inner = int(np.clip(cell, 1, top - 1))
        return float(self.edges[inner] - self.edges[inner - 1])

    def counts(self, v: np.ndarray) -> np.ndarray:
        """How many values fall in each cell (int64, length ``cells``)."""
        return np.bincount(self.index(v), minlength=self.cells).astype(np.int64)


def slope_grid_ratio(n: int, simulate: bool) -> float:
    """The ratio of consecutive slope-grid edges at n rows (public): ``GRID_RATIO`` where the bootstrap simulates
    the mechanisms on the grid (``simulate``: its cost grows with the cells, and the privacy error dwarfs a 1%
    cell there), else 1 + FINE_GRID / sqrt(n), between 1 + ``FINE_GRID_FLOOR`` and ``GRID_RATIO``."""
    if simulate:
        return GRID_RATIO
    return 1.0 + float(np.clip(FINE_GRID / math.sqrt(n), FINE_GRID_FLOOR, GRID_RATIO - 1.0))


def _log_magnitudes(scale: float, decades: tuple[float, float], ratio: float = GRID_RATIO
                    ) -> tuple[np.ndarray, float]:
    """scale * 10^u for u from decades[0] to decades[1], consecutive values ``ratio`` apart (at most); and the
    log of their ratio."""
    m = math.ceil((decades[1] - decades[0]) * math.log(10.0) / math.log(ratio)) + 1
    return scale * 10.0 ** np.linspace(decades[0], decades[1], m), (decades[1] - decades[0]) * math.log(10.0) / (m - 1)


def _with_ends(inner: np.ndarray) -> np.ndarray:
    """Cell quantities for the two unbounded end cells copied from their neighbours."""
    return np.concatenate([inner[:1], inner, inner[-1:]])


def slope_grid(scale: float, decades: tuple[float, float] = SLOPE_DECADES, ratio: float = GRID_RATIO) -> CellGrid:
    """The public grid of pair slopes: edges -g_m .. -g_1, g_1 .. g_m with g = ``scale`` * 10^``decades`` (default
    [-4, 3]; ``ratio`` apart, 1% by default: :func:`slope_grid_ratio`), a zero cell [-g_1, g_1), base measure
    width / ((|mid| + PRIOR_SCALE * scale) (1 + |mid| / (PRIOR_TAIL * scale))) (flat near zero, log-uniform up to
    a few box diagonals, a falling log-density beyond, so that where the scores are nearly flat, at small
    n * epsilon or with many ties, the mechanism does not release slopes hundreds of box diagonals out); the
    unbounded end cells stand for -g_m and g_m."""
    g, step = _log_magnitudes(scale, decades, ratio)
    edges = np.concatenate([-g[::-1], g])
    mid = 0.5 * (edges[:-1] + edges[1:])
    log_prior = (np.log(np.diff(edges)) - np.log(np.abs(mid) + PRIOR_SCALE * scale)
                 - np.log1p(np.abs(mid) / (PRIOR_TAIL * scale)))
    return CellGrid(edges, _with_ends(mid), _with_ends(log_prior), ("log", float(g[0]), step, g.size))


def radius_grid(scale: float, decades: tuple[float, float], prior_scale: float) -> CellGrid:
    """A public grid of radii r >= 0: edges ``scale`` * 10^decades (1% apart), cells [0, r_1), [r_1, r_2), ...,
    [r_m, inf) (the last stands for r_m), base measure width / (mid + prior_scale)."""
    r, step = _log_magnitudes(scale, decades)
    bounded = np.concatenate([[0.0], r])
    mid = 0.5 * (bounded[:-1] + bounded[1:])
    log_prior = np.log(np.diff(bounded)) - np.log(mid + prior_scale)
    return CellGrid(r, np.append(mid, r[-1]), np.append(log_prior, log_prior[-1]), ("radius", float(r[0]), step, 0))


def linear_grid(lo: float, hi: float, cells: int) -> CellGrid:
    """``cells`` equal cells over [lo, hi] (values outside fall in the end cells), uniform base measure."""
    edges = np.linspace(lo, hi, cells + 1)
    values = 0.5 * (edges[:-1] + edges[1:])
    return CellGrid(edges[1:-1], values, np.zeros(cells), ("linear", float(lo), (hi - lo) / cells, 0))


# -- the public pairing -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WindowedPairing:
    """k public random matchings of the rows inside public windows of consecutive row indices.

    The n rows are cut into w = ceil(n / ``window_rows``) windows, window j holding the rows
    [floor(j n / w), floor((j + 1) n / w)).  In each window of m rows, matching r pairs the rows at positions
    (2t, 2t + 1) of a uniformly random permutation of the window (t < floor(m / 2)); the permutations come from
    a generator seeded with the public ``key`` and j, so any worker can rebuild a window's pairs.  A row is in
    at most one pair per matching, so in at most k = ``matchings`` pairs.
    """

    n: int
    window_rows: int
    matchings: int
    key: tuple[int, int]

    @classmethod
    def draw(cls, n: int, window_rows: int, matchings: int, rng: np.random.Generator) -> WindowedPairing:
        """Draw the public key (two 32-bit integers) with public randomness."""
        u = public_uniform(0.0, 1.0, 2, rng)
        key = (min(int(u[0] * 2.0**32), 2**32 - 1), min(int(u[1] * 2.0**32), 2**32 - 1))
        return cls(int(n), int(window_rows), int(matchings), key)

    @property
    def windows(self) -> int:
        """w = ceil(n / window_rows) (at least 1)."""
        return max(1, -(-self.n // self.window_rows))

    def start(self, j: int) -> int:
        """The first row of window j (``start(w)`` is n)."""
        return j * self.n // self.windows

    def window_of(self, i: int) -> int:
        """The window that holds row i."""
        return ((i + 1) * self.windows + self.n - 1) // self.n - 1

    @property
    def pairs(self) -> int:
        """N, the number of pairs (public): k * sum_j floor(m_j / 2)."""
        starts = np.arange(self.windows + 1, dtype=np.int64) * self.n // self.windows
        return int(self.matchings * np.sum(np.diff(starts) // 2))

    def local_pairs(self, j: int) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of window j as two arrays of positions inside the window."""
        m = self.start(j + 1) - self.start(j)
        half = m // 2
        gen = keyed_public_generator(self.key, j)
        perms = [permutation(m, gen) for _ in range(self.matchings)]
        first = np.concatenate([p[0:2 * half:2] for p in perms])
        second = np.concatenate([p[1:2 * half:2] for p in perms])
        return first, second


# -- pass 1: the pair slopes --------------------------------------------------------------------------------------

@dataclass
class SlopeCounts:
    """A pass's partial result: slope counts per grid cell, pairs with dx = 0 (``ties``), and the rows of the
    windows not complete in this part (``pending``: window -> (positions in the window, x, y))."""

    counts: np.ndarray
    ties: int = 0
    pending: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)


class SlopePass:
    """One pass over the rows: the counts of the k-matching's pair slopes in each cell of the slope grid.

    Rows are clipped to the declared ranges of x and y.  A window that lies inside the chunk is counted at
    once; the rows of a window cut by a chunk edge travel in the partial result (``pending``) until
    :meth:`combine` joins the window's parts (chunks are combined in row order), so the counts are the same
    whatever the partition.  Only counts leave the pass once every window is complete.
    """

    def __init__(self, pairing: WindowedPairing, grid: CellGrid, x_col: int, x_range: tuple[float, float],
                 y_range: tuple[float, float]) -> None:
        self.pairing = pairing
        self.grid = grid
        self.x_col = x_col
        self.x_range = x_range
        self.y_range = y_range

    def empty(self) -> SlopeCounts:
        return SlopeCounts(np.zeros(self.grid.cells, dtype=np.int64))

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> SlopeCounts:
        x = np.clip(X[:, self.x_col], *self.x_range)
        yc = np.clip(y, *self.y_range)
        out = self.empty()
        count = yc.shape[0]
        if count == 0:
            return out
        p = self.pairing
        for j in range(p.window_of(offset), p.window_of(offset + count - 1) + 1):
            start, stop = p.start(j), p.start(j + 1)
            lo, hi = max(start, offset), min(stop, offset + count)
            xs, ys = x[lo - offset:hi - offset], yc[lo - offset:hi - offset]
            if lo == start and hi == stop:
                self._count_window(out, j, xs, ys)
            else:
                out.pending[j] = (np.arange(lo - start, hi - start), xs.copy(), ys.copy())
        return out

    def combine(self, a: SlopeCounts, b: SlopeCounts) -> SlopeCounts:
        """``a`` then ``b`` (row order): counts added, the parts of a window joined and counted when complete."""
        a.counts += b.counts
        a.ties += b.ties
        for j, (pos, xs, ys) in b.pending.items():
            if j in a.pending:
                pa, xa, ya = a.pending[j]
                pos, xs, ys = np.concatenate([pa, pos]), np.concatenate([xa, xs]), np.concatenate([ya, ys])
            size = self.pairing.start(j + 1) - self.pairing.start(j)
            if pos.size == size:
                order = np.argsort(pos, kind="stable")
                a.pending.pop(j, None)
                self._count_window(a, j, xs[order], ys[order])
            else:
                a.pending[j] = (pos, xs, ys)
        return a

    def _count_window(self, acc: SlopeCounts, j: int, xs: np.ndarray, ys: np.ndarray) -> None:
        first, second = self.pairing.local_pairs(j)
        dx = xs[second] - xs[first]
        dy = ys[second] - ys[first]
        tie = dx == 0
        with np.errstate(all="ignore"):  # a tiny dx gives an infinite slope: it falls in an end cell
            slopes = dy[~tie] / dx[~tie]
        acc.counts += self.grid.counts(slopes)
        acc.ties += int(np.count_nonzero(tie))


# -- pass 2: the residuals ----------------------------------------------------------------------------------------

@dataclass
class ResidualCounts:
    """Residual counts per cell of the residual grid and the sum of the clipped x."""

    counts: np.ndarray
    x_sum: float


def add_residual_counts(a: ResidualCounts, b: ResidualCounts) -> ResidualCounts:
    """Combine two parts of the residual pass (in place in ``a``)."""
    a.counts += b.counts
    a.x_sum += b.x_sum
    return a


class ResidualPass:
    """One pass over the rows: counts of the residuals y - b x of the clipped rows in the residual grid's cells,
    and the sum of the clipped x (row by row: no offset needed)."""

    uses_offset = False

    def __init__(self, slope: float, grid: CellGrid, x_col: int, x_range: tuple[float, float],
                 y_range: tuple[float, float]) -> None:
        self.slope = slope
        self.grid = grid
        self.x_col = x_col
        self.x_range = x_range
        self.y_range = y_range

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> ResidualCounts:
        x = np.clip(X[:, self.x_col], *self.x_range)
        residuals = np.clip(y, *self.y_range) - self.slope * x
        return ResidualCounts(self.grid.counts(residuals), float(np.sum(x)))


# -- private medians and spreads ------------------------------------------------------------------------------------

def cell_scores(counts: np.ndarray, target: float, below: float = 0.0) -> np.ndarray:
    """The score of each cell for the quantile at rank ``target``: minus the distance from ``target`` to
    [C_left, C_right], the counts below the cell's left and right edges (plus ``below``, a count that lies
    below every cell); 0 for the cells that hold the target rank.  A count that changes by at most s changes
    every score by at most s."""
    right = np.cumsum(counts, dtype=np.float64) + below
    left = right - counts
    return -np.maximum(0.0, np.maximum(left - target, target - right))


def private_cell(grid: CellGrid, counts: np.ndarray, target: float, *, below: float, sensitivity: float,
                 epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger, name: str) -> int:
    """The exponential mechanism over the cells of ``grid`` for the quantile at rank ``target`` (epsilon-DP when
    every count moves by at most ``sensitivity``); returns the released cell."""
    return exponential_mechanism(grid.log_prior, cell_scores(counts, target, below), sensitivity=sensitivity,
                                 epsilon=epsilon, rng=rng, ledger=ledger, name=name)


def radius_counts(grid: CellGrid, counts: np.ndarray, centre: float, radii: CellGrid) -> np.ndarray:
    """Counts per radius cell of |value - centre|, each cell of ``grid`` standing at its value (a public map of
    cells to radius cells, so a count that moves by s moves these by at most s)."""
    cell = radii.index(np.abs(grid.values - centre))
    return np.bincount(cell, weights=counts, minlength=radii.cells).astype(np.int64)


# -- inference: the linearised model (n * epsilon >= SIMULATE_BELOW_N_EPSILON) ----------------------------------------

#: n * epsilon below which the bootstrap simulates the exponential mechanisms on profiles (the linearised model
#: under-covers there); from it on, the linearised model, calibrated there (measured in benchmarks/theilsen.py)
SIMULATE_BELOW_N_EPSILON = 250.0


@dataclass(frozen=True)
class ReleasedMedian:
    """What every spread release keeps of its private median: ``grid`` the median's public grid, ``count`` the
    number of values (N pairs or n residuals), ``sensitivity`` how far one row moves any count, ``epsilon`` and
    ``epsilon_spread`` the budgets of the median and of the spread release, ``rank_variance`` the sampling
    variance of the share of values below the population median, ``median`` the released median."""

    grid: CellGrid
    count: float
    sensitivity: float
    epsilon: float
    epsilon_spread: float
    rank_variance: float
    median: float


@dataclass(frozen=True)
class MedianRelease(ReleasedMedian):
    """One private median (:class:`ReleasedMedian`) and its private quarter-radius, as released (the linearised
    model, n * epsilon >= SIMULATE_BELOW_N_EPSILON): ``radii`` the radius's public grid, ``radius_cell`` the
    released cell."""

    radii: CellGrid
    radius_cell: int
    cell_width: float = 0.0

    @property
    def radius(self) -> float:
        """The released quarter-radius."""
        return float(self.radii.values[self.radius_cell])

    @property
    def rank_noise(self) -> float:
        """Scale of the median's rank error in shares of the count (Laplace tails of the mechanism)."""
        return 2.0 * self.sensitivity / (self.epsilon * self.count)

    @property
    def inverse_density(self) -> float:
        """1 / f, the slope of the inverse distribution function at the median read off the radius: a share
        SPREAD_SHARE of the values within the radius, so f ~ SPREAD_SHARE / (2 radius)."""
        return 2.0 * self.radius / SPREAD_SHARE

    def draws(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """``size`` draws of the linearised error inverse_density * (sqrt(rank_variance) Z + L) + W, Z standard
        normal, L Laplace with scale ``rank_noise`` (the exponential mechanism's rank error in shares of the
        count), the radius uncertain by a relative Laplace error of scale (the radius release's rank noise) /
        SPREAD_SHARE (each draw divides by 1 + that error, floored at SPREAD_FLOOR), W uniform over +-``cell_width``
        / 2 (the released value is its cell's middle, the median anywhere in the cell); and the privacy part's
        second moment, 2 (inverse_density rank_noise)^2 + cell_width^2 / 12 (the radius's own noise left out)."""
        spread_noise = 2.0 * self.sensitivity / (self.epsilon_spread * self.count) / SPREAD_SHARE
        relative = np.maximum(1.0 + _laplace_draws(spread_noise, size, rng), SPREAD_FLOOR)
        rank = math.sqrt(self.rank_variance) * post_processing_normal(size, rng) + _laplace_draws(
            self.rank_noise, size, rng)
        cell = self.cell_width * public_uniform(-0.5, 0.5, size, rng)
        return (self.inverse_density / relative * rank + cell,
                2.0 * (self.inverse_density * self.rank_noise) ** 2 + self.cell_width**2 / 12.0)


# -- inference: the mechanisms simulated on profiles (n * epsilon < SIMULATE_BELOW_N_EPSILON) -------------------------

#: the simulated profiles of the values are Cauchy around the median (a pair slope beta + de / dx is a ratio of
#: two differences: exactly Cauchy for normal x and errors), their scales on a log grid this far apart (10%)
SCALE_STEP = 0.1
#: tie shares of the simulated pair-slope profiles (pairs with equal x count half below and half above every cell)
TIE_SHARES = (0.0, 0.1, 0.25, 0.4, 0.5, 0.6, 0.7, 0.8)
#: the released histogram of distances from the private median has bins this many decades wide
DISTANCE_BIN_DECADES = 1.0
#: the slope's profiles (its intervals and its error block's privacy moment) are weighed by a weakly informative
#: prior on their scale g: log10(g / (PROFILE_SCALE_CENTRE * S)) normal with sd PROFILE_SCALE_DECADES (S the slope
#: grid's scale, (y range) / (x range); the pair slopes' scale is about sd(e) / sd(x), near 0.3 S when the
#: declared ranges are about as loose for x as for y: 0.05 S to 0.9 S in the data sets and designs of
#: benchmarks/theilsen.py and benchmarks/real_data.py); their tie shares are weighted equally (a two-valued
#: predictor, whose pairs are ties with probability s^2 + (1 - s)^2 >= 1/2, s the share at one value, takes
#: the tie shares from 1/2 on)
PROFILE_SCALE_CENTRE = 0.3
PROFILE_SCALE_DECADES = 0.75
#: profiles whose weight in the moment's mixture is below this share of the largest are left out (at most 1304
#: profiles, so under 1.5% of the mixture)
PROFILE_WEIGHT_FLOOR = 1e-5


def distance_edges(scale: float, decades: tuple[float, float]) -> np.ndarray:
    """Public edges of the distance histogram: ``scale`` * 10^u for u from decades[0] to decades[1] in steps of
    DISTANCE_BIN_DECADES; the bins are [0, e_0), [e_0, e_1), ..., [e_last, inf)."""
    m = round((decades[1] - decades[0]) / DISTANCE_BIN_DECADES) + 1
    return scale * 10.0 ** np.linspace(decades[0], decades[1], m)


def distance_counts(grid: CellGrid, counts: np.ndarray, centre: float, edges: np.ndarray, ties: float) -> np.ndarray:
    """Counts per distance bin of |value - centre|, each cell of ``grid`` standing at its value (a public map of
    cells to bins), then the ties as a last bin: a value that moves between cells or to or from the ties moves
    one unit between two bins (L1 change 2)."""
    bins = np.searchsorted(edges, np.abs(grid.values - centre), side="right")
    return np.append(np.bincount(bins, weights=counts, minlength=edges.size + 1), ties)


@dataclass(frozen=True)
class ProfilePrior:
    """The public prior over the profiles a :class:`ProfileRelease` simulates: the tie shares a profile may
    have (``tie_shares``, equally weighted) and the centre of the normal prior of log10 of their scale
    (``scale_centre``, sd PROFILE_SCALE_DECADES; None: flat)."""

    tie_shares: tuple[float, ...] = (0.0,)
    scale_centre: float | None = None


def slope_profile_prior(values: tuple[float, float] | None, scale: float) -> ProfilePrior:
    """The prior over the pair slopes' profiles (public: the slope grid's ``scale`` S and whether the predictor
    takes two known values, :func:`two_values`): scales centred at PROFILE_SCALE_CENTRE * S; tie shares
    TIE_SHARES, for a two-valued predictor those from 1/2 on (a share s of rows at one value makes
    s^2 + (1 - s)^2 >= 1/2 of the pairs ties)."""
    shares = TIE_SHARES if values is None else tuple(t for t in TIE_SHARES if t >= 0.5)
    return ProfilePrior(shares, PROFILE_SCALE_CENTRE * scale)


@dataclass(frozen=True)
class ProfileRelease(ReleasedMedian):
    """One private median (:class:`ReleasedMedian`) and a noisy histogram of the values' distances from it, as
    released (the simulated model, n * epsilon < SIMULATE_BELOW_N_EPSILON): ``edges`` the distance bins' public
    edges, ``histogram`` the released noisy counts per bin, the ties' bin last (Laplace of scale
    ``2 sensitivity / epsilon_spread``; Dwork, McSherry, Nissim & Smith 2006), ``median_cell`` the median's
    released cell, ``prior`` the public prior over the profiles (:meth:`log_posterior`; without a scale prior
    the error block's moment is that of the draws' privacy parts).
    """

    edges: np.ndarray
    histogram: np.ndarray
    median_cell: int
    prior: ProfilePrior = ProfilePrior()

    def draws(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """``size`` draws of the median's error simulated on the profiles the released histogram makes
        plausible, and the second moment of their privacy part.

        A profile is a share t of values that count half below and half above every cell (ties: pairs with
        equal x) and a share 1 - t from a Cauchy of scale g centred at the released median; each replicate draws
        (g, t) from their posterior given the histogram (:meth:`profile_draws`).  The median's exponential
        mechanism is run exactly on the shares the profile puts below each cell edge (same grid, base measure,
        sensitivity and epsilon): its release minus the centre is the privacy part.  Two errors the fixed centre
        leaves out are added: the sampling error (normal rank error of variance ``rank_variance`` times the
        inverse density pi g / (1 - t)) and the grid's rounding (uniform over the released cell).
        The second moment is :meth:`typical_moment` when ``prior`` has a scale centre, else :func:`privacy_moment` of
        the draws' privacy parts.  Post-processing: public randomness and released values.
        """
        scales, ties, pick = self.profile_draws(size, rng)
        b_cell = _sample_rows(self._release_cumulative(scales, ties), pick, rng)
        privacy = self.grid.values[b_cell] - self.median
        lo, hi = _cell_span(self.grid, self.median_cell)
        inverse_density = math.pi * scales / (1.0 - ties)
        errors = (privacy + inverse_density[pick] * math.sqrt(self.rank_variance) * post_processing_normal(size, rng)
                  - (hi - lo) * public_uniform(-0.5, 0.5, size, rng))
        return errors, (privacy_moment(privacy) if self.prior.scale_centre is None else self.typical_moment())

    def _release_cumulative(self, scales: np.ndarray, ties: np.ndarray) -> np.ndarray:
        """Cumulative weights of the median's exponential mechanism over the cells, one row per profile."""
        below = 0.5 * ties[:, None] + (1.0 - ties[:, None]) * _cauchy_cdf(
            (self.grid.edges[None, :] - self.median) / scales[:, None])
        factor = self.epsilon * self.count / (2.0 * self.sensitivity)
        return _release_weights(self.grid.log_prior, below, 0.5, factor)

    def typical_moment(self) -> float:
        """The error block's second moment of the privacy error: :func:`privacy_moment` of the exact mixture,
        over the profiles (g, t), of the exponential mechanism's release minus the centre, each profile
        weighted by its posterior (:meth:`log_posterior`).  No random draw (the bootstrap's draws are
        untouched)."""
        scales, ties, logw = self.log_posterior()
        keep = logw >= logw.max() + math.log(PROFILE_WEIGHT_FLOOR)
        weights = np.exp(logw[keep] - logw.max())
        cumulative = self._release_cumulative(scales[keep], ties[keep])
        mixture = (weights / weights.sum()) @ (cumulative / cumulative[:, -1:])
        return quantile_moment(mixture, self.grid.values - self.median)

    def log_posterior(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The public grid of profiles (scales g, tie shares t) and their unnormalised log-posterior: the
        histogram's log-likelihood (:meth:`log_likelihood`) plus the weakly informative ``prior``: log10(g /
        scale_centre) normal with sd PROFILE_SCALE_DECADES (flat when the centre is None).

        At n * epsilon below about 150 the noisy histogram hardly constrains the profile: under a flat prior
        the posterior spans decades of scale, and both the intervals and the error block's moment overstate the
        error the fit shows (docs/proofs/theilsen.md, "The simulated model").  The prior only matters where the
        histogram says little."""
        scales, ties, logw = self.log_likelihood()
        if self.prior.scale_centre is not None:
            logw = logw - 0.5 * (np.log10(scales / self.prior.scale_centre) / PROFILE_SCALE_DECADES) ** 2
        return scales, ties, logw

    def log_likelihood(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The public grid of profiles (scales g, tie shares t) and the log-likelihood of the released histogram
        under each: the bins' expected counts (1 - t) count (F(e_j) - F(e_(j-1))), F the distribution function
        of |Cauchy(0, g)|, and t count in the ties' bin; each bin's error is Laplace, its variance the release's
        noise variance 2 (2 sensitivity / epsilon_spread)^2 plus the count's sampling variance, taken as
        sensitivity count p (1 - p) (p the bin's share; a row is in ``sensitivity`` pairs, which inflates the
        multinomial variance of pair counts up to about that factor)."""
        g = np.exp(np.arange(math.log(self.edges[0]), math.log(self.edges[-1]) + SCALE_STEP, SCALE_STEP))
        scales = np.tile(g, len(self.prior.tie_shares))
        ties = np.repeat(np.asarray(self.prior.tie_shares, dtype=float), g.size)
        cdf = 2.0 / math.pi * np.arctan(self.edges[None, :] / scales[:, None])
        shares = np.diff(np.concatenate([np.zeros((scales.size, 1)), cdf, np.ones((scales.size, 1))], axis=1), axis=1)
        expected = self.count * np.concatenate([(1.0 - ties[:, None]) * shares, ties[:, None]], axis=1)
        noise = np.sqrt((2.0 * self.sensitivity / self.epsilon_spread) ** 2
                        + 0.5 * self.sensitivity * expected * (1.0 - expected / self.count))
        return scales, ties, -(np.abs(self.histogram[None, :] - expected) / noise + np.log(noise)).sum(axis=1)

    def profile_draws(self, size: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Draws of the profile (scale g, tie share t) from their posterior given the released histogram
        (:meth:`log_posterior`): the distinct profiles drawn and each replicate's index."""
        scales, ties, logw = self.log_posterior()
        posterior = np.cumsum(np.exp(logw - logw.max()))
        at = np.searchsorted(posterior, public_uniform(0.0, 1.0, size, rng) * posterior[-1], side="right")
        used, pick = np.unique(np.minimum(at, scales.size - 1), return_inverse=True)
        return scales[used], ties[used], pick.ravel()


#: the error block's moment of simulated privacy errors is half the spread between these quantiles, squared
MOMENT_QUANTILES = (0.15865, 0.84135)


def privacy_moment(privacy: np.ndarray) -> float:
    """The second moment the error block reports for simulated privacy errors: the square of half the spread of
    their central 68% (a normal's sd).  Their mean square is dominated by rare far releases and overstates the
    typical privacy error by orders of magnitude at n * epsilon < SIMULATE_BELOW_N_EPSILON
    (benchmarks/theilsen.py); the intervals keep the tails.  The slope's moment mixes the profiles under a
    weakly informative prior on their scale (:meth:`ProfileRelease.typical_moment`): under a flat prior the
    profiles of large (and tiny) scale that the noisy histogram cannot exclude make this spread overstate the
    measured privacy error (issue 18)."""
    lo, hi = np.quantile(privacy, MOMENT_QUANTILES)
    return float(((hi - lo) / 2.0) ** 2)


def quantile_moment(cdf: np.ndarray, values: np.ndarray) -> float:
    """:func:`privacy_moment` of a discrete distribution: ``values`` (sorted) with distribution function ``cdf``
    (the lower quantile at p is the first value whose cdf reaches p)."""
    at = np.minimum(np.searchsorted(cdf, MOMENT_QUANTILES), values.size - 1)
    return float(((values[at[1]] - values[at[0]]) / 2.0) ** 2)


def _cauchy_cdf(z: np.ndarray) -> np.ndarray:
    return 0.5 + np.arctan(z) / math.pi


def _cell_span(grid: CellGrid, cell: int) -> tuple[float, float]:
    """The bounds of a cell; an unbounded end cell stands for its edge (a point)."""
    edges = grid.edges
    lo = float(edges[cell - 1]) if cell > 0 else float(edges[0])
    hi = float(edges[cell]) if cell < edges.size else float(edges[-1])
    return lo, hi


def _release_weights(log_prior: np.ndarray, below: np.ndarray, share: float, factor: float) -> np.ndarray:
    """Cumulative (unnormalised) probabilities of the exponential mechanism's cells for the quantile at
    ``share``, one row per profile: ``below`` holds the shares of the count below each edge, and the score of a
    cell is :func:`cell_scores` in shares of the count (``factor`` = epsilon * count / (2 sensitivity))."""
    ones = np.ones((below.shape[0], 1))
    right = np.concatenate([below, ones], axis=1)
    left = np.concatenate([np.zeros_like(ones), below], axis=1)
    logits = log_prior[None, :] - factor * np.maximum(0.0, np.maximum(left - share, share - right))
    return np.cumsum(np.exp(logits - logits.max(axis=1, keepdims=True)), axis=1)


def _sample_rows(cumulative: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A cell for each entry of ``rows`` from that row's cumulative weights, by inverting at public uniforms
    (one search in the rows' normalised distribution functions laid end to end, row r shifted by r)."""
    cells = cumulative.shape[1]
    shifted = cumulative / cumulative[:, -1:] + np.arange(cumulative.shape[0])[:, None]
    at = np.searchsorted(shifted.ravel(), public_uniform(0.0, 1.0, rows.size, rng) + rows, side="right")
    return np.clip(at - rows * cells, 0, cells - 1)


def _laplace_draws(scale: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Laplace(0, scale) draws by the inverse distribution function of public uniforms."""
    u = np.clip(public_uniform(-0.5, 0.5, size, rng), -0.5 + 2.0**-53, 0.5 - 2.0**-53)
    return -scale * np.sign(u) * np.log1p(-2.0 * np.abs(u))


def slope_rank_variance(pairs: int, matchings: int) -> float:
    """Var of the share of pair slopes below the true slope, for a k-matching with N pairs: (1/4 + 2 (k - 1)
    ZETA1) / N (an incomplete U-statistic whose rows are each in k pairs; proof page)."""
    return (0.25 + 2.0 * (matchings - 1) * ZETA1) / pairs


def residual_cells(n: int) -> int:
    """Cells of the residual grid for n rows (see RESIDUAL_CELLS)."""
    return int(np.clip(1 << max(0, math.ceil(math.log2(64.0 * math.sqrt(n)))), *RESIDUAL_CELLS))


def interval_reported(n: int, epsilon: float) -> bool:
    """Whether a fit with these public facts reports intervals (n * epsilon >= INTERVAL_MIN_N_EPSILON)."""
    return n * epsilon >= INTERVAL_MIN_N_EPSILON


# -- the fit ----------------------------------------------------------------------------------------------------

def _predictor_column(ctx: FitContext) -> int:
    """The column of the one predictor (public checks, before any row is read)."""
    if ctx.d != 2 or ctx.intercept_index is None:
        what = "has no intercept" if ctx.intercept_index is None else f"has d={ctx.d} columns"
        raise InvalidArgumentError(
            f"method 'theilsen' fits one predictor with an intercept (a formula like 'y ~ x', d=2); this design "
            f"{what}. Use another method for several predictors. Nothing was spent")
    return 1 - ctx.intercept_index


@dataclass(frozen=True)
class _Shares:
    """Epsilon of each release."""

    slope: float
    intercept: float
    slope_spread: float = 0.0
    intercept_spread: float = 0.0
    x_mean: float = 0.0


def _shares(epsilon: float, inference: bool, simulate: bool) -> _Shares:
    if inference:
        s, ss, a, sa, xm = (epsilon * w for w in (SMALL_INFERENCE_SHARES if simulate else INFERENCE_SHARES))
        return _Shares(s, a, ss, sa, xm)
    s, a = (epsilon * w for w in POINT_SHARES)
    return _Shares(s, a)


def fit(rows: Rows, ctx: FitContext, options: TheilSenOptions) -> MethodFit:
    """Private Theil-Sen (module docstring): two passes, two to five pure epsilon-DP releases."""
    x_col = _predictor_column(ctx)
    bounds = ctx.require_bounds()
    x_range = (float(bounds.column_lo[x_col]), float(bounds.column_hi[x_col]))
    y_range = (float(bounds.y_lo), float(bounds.y_hi))
    scale = (y_range[1] - y_range[0]) / (x_range[1] - x_range[0])
    inference = options.inference and interval_reported(ctx.n, ctx.epsilon)
    simulate = ctx.n * ctx.epsilon < SIMULATE_BELOW_N_EPSILON
    shares = _shares(ctx.epsilon, inference, simulate)
    k = options.matchings

    pairing = WindowedPairing.draw(ctx.n, options.window_rows, k, ctx.rng)
    values = two_values(ctx, x_col, x_range)
    decades = slope_decades(values, x_range)
    grid = slope_grid(scale, decades, slope_grid_ratio(ctx.n, simulate))
    slope_pass = SlopePass(pairing, grid, x_col, x_range, y_range)
    slopes = rows.reduce(slope_pass, slope_pass.combine)
    pairs = pairing.pairs
    tie_half = 0.5 * slopes.ties
    b_cell = private_cell(grid, slopes.counts, 0.5 * pairs, below=tie_half, sensitivity=k, epsilon=shares.slope,
                          rng=ctx.rng, ledger=ctx.ledger, name="private median of the pair slopes")
    b = float(grid.values[b_cell])
    slope_release: MedianRelease | ProfileRelease | None = None
    if inference:
        slope_release = spread_release(
            grid, slopes.counts, b, b_cell, count=pairs, sensitivity=k, epsilon=shares.slope,
            epsilon_spread=shares.slope_spread, rank_variance=slope_rank_variance(pairs, k), simulate=simulate,
            radii=(scale, decades, PRIOR_SCALE * scale), ties=slopes.ties, rng=ctx.rng, ledger=ctx.ledger,
            what="pair slopes", profile_prior=slope_profile_prior(values, scale))

    r_lo = y_range[0] - max(b * x_range[0], b * x_range[1])
    r_hi = y_range[1] - min(b * x_range[0], b * x_range[1])
    rgrid = linear_grid(r_lo, r_hi, residual_cells(ctx.n))
    residuals = rows.reduce(ResidualPass(b, rgrid, x_col, x_range, y_range), add_residual_counts)
    a_cell = private_cell(rgrid, residuals.counts, 0.5 * ctx.n, below=0.0, sensitivity=1.0, epsilon=shares.intercept,
                          rng=ctx.rng, ledger=ctx.ledger, name="private median of the residuals y - b x")
    a = float(rgrid.values[a_cell])
    params = np.empty(2)
    params[ctx.intercept_index] = a
    params[x_col] = b
    diagnostics: dict[str, Any] = {"pairs": pairs, "matchings": k, "windows": pairing.windows, "slope_cell": b_cell,
                   "intercept_cell": a_cell}
    releases = len([s for s in vars(shares).values() if s])
    notes: tuple[str, ...] = (f"pure epsilon-DP: {releases} exponential-mechanism and Laplace releases whose "
                              "epsilons add up to the budget; delta spent is 0",)
    if values is not None:
        notes += (TWO_VALUE_NOTE,)
    if not inference:
        return MethodFit(params=params, no_inference_reason=_no_inference_reason(ctx, options), notes=notes,
                         rsquared_reason=NO_RSQUARED, diagnostics=diagnostics)

    assert slope_release is not None
    intercept_release = spread_release(
        rgrid, residuals.counts, a, a_cell, count=ctx.n, sensitivity=1.0, epsilon=shares.intercept,
        epsilon_spread=shares.intercept_spread, rank_variance=0.25 / ctx.n, simulate=simulate,
        radii=(r_hi - r_lo, RESIDUAL_RADIUS_DECADES, PRIOR_SCALE * 0.5 * (y_range[1] - y_range[0])), ties=0.0,
        rng=ctx.rng, ledger=ctx.ledger, what="residuals", profile_prior=ProfilePrior())
    x_width = x_range[1] - x_range[0]
    x_sum = laplace_mechanism(residuals.x_sum, l1_sensitivity=x_width, epsilon=shares.x_mean, rng=ctx.rng,
                              ledger=ctx.ledger, name="noisy sum of x (for the intercept's interval)")
    x_mean = float(np.clip(float(x_sum) / ctx.n, *x_range))

    x_draws = np.clip(x_mean + _laplace_draws(x_width / (shares.x_mean * ctx.n), options.bootstrap, ctx.rng),
                      *x_range)
    eb, privacy_b = slope_release.draws(options.bootstrap, ctx.rng)
    ea, privacy_a = intercept_release.draws(options.bootstrap, ctx.rng)
    # the intervals are basic (reflected) bootstrap intervals of the draws; where the slope grid ends at the
    # largest possible slope (a two-valued predictor), a release near the end would reflect its truncated errors
    # away from the truth, so there the errors enter with the opposite sign (percentile intervals; the same where
    # the errors are symmetric)
    orientation = -1.0 if decades[1] < SLOPE_DECADES[1] else 1.0
    draws = np.empty((options.bootstrap, 2))
    draws[:, ctx.intercept_index] = a + orientation * (ea - x_draws * eb)
    draws[:, x_col] = b + orientation * eb
    diagnostics["x_mean"] = x_mean
    released = Inference("bootstrap", draws=draws, target=INTERVAL_TARGET, robust_spread=True,
                         description=BOOTSTRAP_DESCRIPTION + (REFLECTED_DESCRIPTION if orientation < 0 else ""))
    moments = ReleasedMoments(privacy_b, privacy_a, -x_mean, SIMULATED_MOMENTS if simulate else LINEARISED_MOMENTS)
    profile = None if simulate else TwoValueProfile.from_released(
        values, x_mean, x_width / (shares.x_mean * ctx.n), b, scale, intercept_release)
    if profile is not None:
        moments = profile.moments(slope_release, privacy_a)
    return MethodFit(params=params, inference=released,
                     notes=notes, rsquared_reason=NO_RSQUARED, diagnostics=diagnostics,
                     error_split=privacy_split(moments, x_col, 1 - x_col))


def spread_release(grid: CellGrid, counts: np.ndarray, median: float, median_cell: int, *, count: float,
                   sensitivity: float, epsilon: float, epsilon_spread: float, rank_variance: float, simulate: bool,
                   radii: tuple[float, tuple[float, float], float], ties: float, rng: np.random.Generator,
                   ledger: PrivacyLedger, what: str, profile_prior: ProfilePrior) -> MedianRelease | ProfileRelease:
    """The release that describes the values' spread around their private median, charged to the ledger.

    ``simulate`` (n * epsilon < SIMULATE_BELOW_N_EPSILON): a noisy histogram of the distances |value - median|
    in public bins (:func:`distance_edges` over the decades ``radii[1]`` of the scale ``radii[0]``), Laplace
    with L1 sensitivity 2 ``sensitivity`` (a moved value leaves one bin for another).  Otherwise the private
    quarter-radius on the public radius grid of ``radii`` (scale, decades, prior scale), an exponential
    mechanism with ``sensitivity``.  ``profile_prior``: see :class:`ProfileRelease` (public)."""
    scale, decades, prior = radii
    if simulate:
        edges = distance_edges(scale, decades)
        noisy = laplace_mechanism(distance_counts(grid, counts, median, edges, ties), l1_sensitivity=2.0 * sensitivity,
                                  epsilon=epsilon_spread, rng=rng, ledger=ledger,
                                  name=f"noisy histogram of the {what}' distances from their private median")
        return ProfileRelease(grid, float(count), float(sensitivity), epsilon, epsilon_spread, rank_variance, median,
                              edges=edges, histogram=np.asarray(noisy, dtype=float), median_cell=median_cell,
                              prior=profile_prior)
    rgrid = radius_grid(scale, decades, prior)
    r_cell = private_cell(rgrid, radius_counts(grid, counts, median, rgrid), SPREAD_SHARE * count, below=0.0,
                          sensitivity=sensitivity, epsilon=epsilon_spread, rng=rng, ledger=ledger,
                          name=f"private quarter-radius of the {what}")
    return MedianRelease(grid, float(count), float(sensitivity), epsilon, epsilon_spread, rank_variance, median,
                         radii=rgrid, radius_cell=r_cell, cell_width=grid.width(median_cell))


SIMULATED_MOMENTS = "the exponential mechanisms run on the value profiles the released histograms make plausible"
LINEARISED_MOMENTS = "the exponential mechanism's rank error of each private median times its released spread"
TWO_VALUE_MOMENTS = ("for a two-valued predictor, the slope's exponential mechanism run on the pair-slope profiles "
                     "its released mean and the residuals' released spread make plausible, the intercept's rank "
                     "error times its released spread plus its response to the slope's error on that profile")


@dataclass(frozen=True)
class ReleasedMoments:
    """The error block's inputs from released values: the second moments of the privacy error of the slope's
    median (``slope``) and of the residuals' median at a fixed slope (``intercept``), the intercept's change per
    unit of slope error (``slope_effect``: a = median(y - b x) moves by about -mean(x) times b's error), and how
    they were computed (``how``, for the summary)."""

    slope: float
    intercept: float
    slope_effect: float
    how: str


def privacy_split(moments: ReleasedMoments, x_col: int, intercept_index: int) -> ErrorSplit:
    """The privacy part of the error from released values: the slope's second moment, the intercept's own plus
    ``slope_effect``^2 times the slope's (the residuals' median carries the slope's error), and their covariance
    ``slope_effect`` times the slope's moment (docs/proofs/theilsen.md, "The privacy part of the error")."""
    var_b, effect = moments.slope, moments.slope_effect
    cov = np.empty((2, 2))
    cov[x_col, x_col], cov[intercept_index, intercept_index] = var_b, moments.intercept + effect**2 * var_b
    cov[x_col, intercept_index] = cov[intercept_index, x_col] = effect * var_b
    return ErrorSplit(privacy=cov, privacy_source=(
        f"{moments.how} (the private medians' difference from least squares on the same data is not included)"))


# -- the error block of a two-valued predictor (n * epsilon >= SIMULATE_BELOW_N_EPSILON) ------------------------------

def two_values(ctx: FitContext, x_col: int, x_range: tuple[float, float]) -> tuple[float, float] | None:
    """The two values of a predictor that can take only two (a two-level factor's dummy, or an integer column
    declared between consecutive integers: the public ``FitContext.column_values``, clipped to x's range), else
    None."""
    known = ctx.column_values[x_col] if len(ctx.column_values) > x_col else None
    if known is None:
        return None
    values = np.unique(np.clip(np.asarray(known, dtype=float), *x_range))
    return (float(values[0]), float(values[1])) if values.size == 2 else None


def slope_decades(values: tuple[float, float] | None, x_range: tuple[float, float]) -> tuple[float, float]:
    """The decades of the slope grid, in units of the box diagonal S = (y range) / (x range): SLOPE_DECADES; for a
    two-valued predictor (public ``values`` x0 < x1, from :func:`two_values`) every pair with dx != 0 has
    |dx| = x1 - x0 and |dy| <= y range, so no pair slope exceeds S (x range) / (x1 - x0) and the grid stops there
    (public: the declared ranges and the factor's levels)."""
    if values is None:
        return SLOPE_DECADES
    top = math.log10((x_range[1] - x_range[0]) / (values[1] - values[0]))
    return (SLOPE_DECADES[0], min(SLOPE_DECADES[1], top))


#: the share of rows at a two-valued predictor's upper value is weighed over this many points ...
SHARE_POINTS = 81
#: ... spread over +/- this many scales of the released mean's Laplace noise around the released share
SHARE_SPAN = 10.0


@dataclass(frozen=True)
class TwoValueProfile:
    """The profile of the data a two-valued predictor implies, from released values only.

    x takes the values ``low`` and ``high``, a share s of the rows at ``high``: ``share`` is the share the
    released mean of x gives (a Laplace release whose noise, in shares, has scale ``share_noise``); the errors around
    the line are normal with sd ``sigma`` (the residuals' released quarter-radius r: a share SPREAD_SHARE of
    normal errors lies within sigma z of their median, z the normal quantile at (1 + SPREAD_SHARE) / 2).  A pair
    with equal x is a tie, which a random matching makes with probability s^2 + (1 - s)^2; the other pairs'
    slopes are the line's slope plus the difference of two errors over (high - low): normal with sd
    sqrt(2) sigma / (high - low).
    """

    low: float
    high: float
    share: float
    share_noise: float
    sigma: float

    @classmethod
    def from_released(cls, values: tuple[float, float] | None, x_mean: float, x_mean_noise: float,
                      slope: float, slope_scale: float,
                      residuals: MedianRelease | ProfileRelease) -> TwoValueProfile | None:
        """The profile from the two public values, the released mean of x (``x_mean_noise``: the scale of its
        Laplace noise, public), the released slope and the residuals' released quarter-radius; None for a
        predictor with other than two values, and when the radius is in the radius grid's first cell although
        |slope| <= ``slope_scale`` (the box diagonal (y range) / (x range)): a quarter of the residuals then sit on
        one value, as for a 0/1 response, and no normal profile fits.  (A slope beyond the diagonal is a far
        release, whose wide residual grid puts even continuous residuals in the first cell: the cell's value
        stands for the radius.)"""
        if values is None or not isinstance(residuals, MedianRelease):
            return None
        if residuals.radius_cell == 0 and abs(slope) <= slope_scale:
            return None
        low, high = values
        share = float(np.clip((x_mean - low) / (high - low), 0.0, 1.0))
        z = float(stats.norm.ppf(0.5 + 0.5 * SPREAD_SHARE))
        return cls(low, high, share, x_mean_noise / (high - low), residuals.radius / z)

    @property
    def slope_sd(self) -> float:
        """The sd of the slopes of the pairs with unequal x."""
        return math.sqrt(2.0) * self.sigma / (self.high - self.low)

    def selection(self, release: ReleasedMedian) -> tuple[np.ndarray, float]:
        """The exponential mechanism's selection distribution over the slope grid (same grid, base measure,
        count, sensitivity and epsilon as the released median) on the profile centred at the released slope,
        mixed over the shares s: each weighted by the Laplace likelihood of the released share and by the
        probability that the mechanism releases the cell it released.  Returns the mixture's distribution
        function over the cells and the mean share under those weights.  No random draw."""
        shares = np.unique(np.clip(self.share + self.share_noise * np.linspace(-SHARE_SPAN, SHARE_SPAN, SHARE_POINTS),
                                   0.0, 1.0))
        ties = shares**2 + (1.0 - shares) ** 2
        grid = release.grid
        below = 0.5 * ties[:, None] + (1.0 - ties[:, None]) * stats.norm.cdf(
            (grid.edges[None, :] - release.median) / self.slope_sd)
        cumulative = _release_weights(grid.log_prior, below, 0.5, release.epsilon * release.count /
                                      (2.0 * release.sensitivity))
        cdf = cumulative / cumulative[:, -1:]
        cell = int(grid.index(np.array([release.median]))[0])
        released = cdf[:, cell] - (cdf[:, cell - 1] if cell > 0 else 0.0)
        logw = -np.abs(shares - self.share) / self.share_noise + np.log(np.maximum(released, 1e-300))
        weights = np.exp(logw - logw.max())
        weights /= weights.sum()
        return weights @ cdf, float(weights @ shares)

    def residual_median(self, slope_error: float, share: float) -> float:
        """Where the residuals' median moves when the slope is off by ``slope_error``, a share ``share`` of the
        rows at ``high``: the m with (1 - share) F(m + e low) + share F(m + e high) = 1/2, F the errors' normal
        distribution function."""
        def excess(m: float) -> float:
            return float((1.0 - share) * stats.norm.cdf((m + slope_error * self.low) / self.sigma)
                         + share * stats.norm.cdf((m + slope_error * self.high) / self.sigma) - 0.5)

        reach = abs(slope_error) * max(abs(self.low), abs(self.high)) + 10.0 * self.sigma
        return float(optimize.brentq(excess, -reach, reach))

    def moments(self, slope: MedianRelease | ProfileRelease, intercept_moment: float) -> ReleasedMoments:
        """The error block's moments: the slope's :func:`quantile_moment` of the :meth:`selection` mixture; the
        intercept's slope effect the residuals' median's change between the slope off by minus and plus that
        predicted error, over twice the error, at the mixture's mean share (the linear -mean(x) when the error is
        small against sigma; 0 when the error is 0)."""
        cdf, share = self.selection(slope)
        var_b = quantile_moment(cdf, slope.grid.values - slope.median)
        error = math.sqrt(var_b)
        effect = ((self.residual_median(error, share) - self.residual_median(-error, share)) / (2.0 * error)
                  if error > 0 else 0.0)
        return ReleasedMoments(var_b, intercept_moment, effect, TWO_VALUE_MOMENTS)


def _no_inference_reason(ctx: FitContext, options: TheilSenOptions) -> str:
    if not options.inference:
        return "inference=False gave the whole budget to the two medians"
    need_n = math.ceil(INTERVAL_MIN_N_EPSILON / ctx.epsilon)
    screened = ctx.method_epsilon is not None
    rest = " (epsilon after the missing-value screen's share)" if screened else ""
    return (f"n * epsilon = {ctx.n * ctx.epsilon:.4g}{rest} is below {INTERVAL_MIN_N_EPSILON:g}: there the private "
            "medians carry too little information for an interval whose coverage was measured, so the whole budget "
            f"went to the two medians (intervals need n >= {need_n} at this epsilon, or epsilon >= "
            f"{at_least(requested_epsilon(INTERVAL_MIN_N_EPSILON / ctx.n, screened))} at this n)")


def theory_rate(guarantee: str) -> UpperRate:
    """No rate in the minimax model of :mod:`dpstats.theory` covers this estimator."""
    return UpperRate(
        why_none="the proved error bound (Sarathy & Vadhan 2022) is for the exponential-mechanism median of a single "
                 "matching's slopes over a uniform grid, stated through the slope distribution, not ||b - beta||_2 "
                 "in the minimax model",
        uncovered_source="Sarathy & Vadhan (2022)")


def _min_rows(d: int) -> int:
    return 16


SPEC = MethodSpec(
    name="theilsen",
    title="Private Theil-Sen (one predictor)",
    citation="Alabi, McMillan, Sarathy, Smith & Vadhan (PoPETs 2022); Sarathy & Vadhan (2022)",
    fit=fit,
    options=TheilSenOptions,
    needs_bounds=True,
    regimes="one predictor with an intercept (y ~ x); robust medians, accurate at small n * epsilon; pure epsilon-DP",
    min_rows=_min_rows,
    max_columns=2,
    inference_rule=InferenceRule("bootstrap", min_n_epsilon=INTERVAL_MIN_N_EPSILON),
    theory_rate=theory_rate,
)
