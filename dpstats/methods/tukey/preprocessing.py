"""TukeyEM's private preprocessing: centres (medians) and radii (spreads) of the columns and the response.

Each is a private quantile by the exponential mechanism on a public
geometric grid (McSherry & Talwar 2007; the cell score and its sensitivity are
in docs/proofs/tukey.md), computed on the rows at the first positions of the
public order.  The map z = (x - centre) / radius is then a change of basis of
the coefficient space fixed before the blocks are fitted, and every
coefficient map back is exact post-processing.

Public ranges (declared bounds, or factor dummies bounded by construction)
are *domains*, never the scale itself: values are clipped into the domain
before they are ranked, the candidates lie inside it, and a radius never
exceeds the largest distance from the centre to the domain's edge (a
released radius of 0, as for a rare 0/1 column, becomes that distance).  So
a wide declared range cannot shrink the rescaled columns, and a 0/1 column is
centred at the value most of its rows take.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import exponential_mechanism

__all__ = [
    "CENTRE_GRID",
    "RADIUS_K",
    "SCALE_GRID",
    "SCALE_QUANTILE",
    "Domains",
    "Preprocessing",
    "RanksOf",
    "handled_columns",
    "preprocess",
    "quantiles_from_ranks",
    "ranks_sorted",
    "sample_ranks",
    "sorted_deviations",
]

SCALE_QUANTILE = 0.75
RADIUS_K = 3.0  # clip radius in units of the private quantile of |x - centre|


def _geometric_grid(ratio: float) -> np.ndarray:
    """The positive public candidates ratio^k spanning [1e-8, 1e16]."""
    step = math.log(ratio)
    k = np.arange(math.floor(math.log(1e-8) / step), math.ceil(math.log(1e16) / step) + 1)
    return np.exp(k * step)


def _centre_grid() -> np.ndarray:
    """The public candidate centres: 0 and +-1.001^k spanning [1e-8, 1e16]."""
    pos = _geometric_grid(1.001)
    return np.concatenate([-pos[::-1], [0.0], pos])


#: the public candidate centres (about 1.1e5 values)
CENTRE_GRID = _centre_grid()
#: The candidate spreads: 0 and 1.01^k spanning [1e-8, 1e16] (5,557 values).  A radius needs no finer resolution
#: than 1%: the exponential mechanism's own error is several percent of the quantile level.  0 is a candidate
#: too: a column with more than 75% of its values at the centre has quantile 0, which is then released as such.
SCALE_GRID = np.concatenate([[0.0], _geometric_grid(1.01)])

#: ranks_of(grid, centres) -> (variables, grid size) counts #{v <= g} of the handled variables, clipped into their
#: domains (of |v - centres| once the centres are released)
RanksOf = Callable[[np.ndarray, "np.ndarray | None"], np.ndarray]


def handled_columns(d: int, intercept_index: int | None) -> np.ndarray:
    """The columns of X that get a centre and a radius: every column but the intercept."""
    return np.array([j for j in range(d) if j != intercept_index], dtype=int)


@dataclass(frozen=True)
class Domains:
    """Public ranges [lo, hi] of the handled variables (the non-intercept columns, then the response); -inf and
    +inf where none is known.

    Attributes
    ----------
    lo, hi : numpy.ndarray
        One entry per handled variable.
    """

    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def from_ranges(cls, column_ranges: Sequence[tuple[float, float] | None],
                    response_range: tuple[float, float] | None, d: int, intercept_index: int | None) -> Domains:
        """The domains from the fit's public ranges (``FitContext.column_ranges``, ``response_range``).

        Parameters
        ----------
        column_ranges : sequence of (float, float) or None
            Public range of each design column (empty: none known).
        response_range : (float, float) or None
            Public range of the response.
        d : int
            Number of design columns.
        intercept_index : int or None
            Position of the intercept.

        Returns
        -------
        Domains
            A range of zero width or with a non-finite end counts as unknown.
        """
        ranges = list(column_ranges) if len(column_ranges) else [None] * d
        known = [ranges[j] for j in handled_columns(d, intercept_index)] + [response_range]
        lo = np.full(len(known), -np.inf)
        hi = np.full(len(known), np.inf)
        for i, iv in enumerate(known):
            if iv is not None and math.isfinite(iv[0]) and math.isfinite(iv[1]) and iv[1] > iv[0]:
                lo[i], hi[i] = float(iv[0]), float(iv[1])
        return cls(lo, hi)

    @property
    def known(self) -> np.ndarray:
        """True for the variables with a public range."""
        return np.isfinite(self.lo)

    def clip(self, values: np.ndarray) -> np.ndarray:
        """``values`` (variables x rows) clipped into the domains (a new array)."""
        return np.clip(values, self.lo[:, None], self.hi[:, None])

    def radius_limit(self, centres: np.ndarray) -> np.ndarray:
        """The largest |v - centre| inside each domain (inf where none is known)."""
        return np.where(self.known, np.maximum(self.hi - centres, centres - self.lo), np.inf)

    def centre_candidates(self, grid: np.ndarray) -> np.ndarray:
        """(variables, grid size): the grid points inside each domain (every point where none lies inside)."""
        inside = (grid[None, :] >= self.lo[:, None]) & (grid[None, :] <= self.hi[:, None])
        inside[~inside.any(axis=1)] = True
        return inside

    def off_the_edge(self, centres: np.ndarray, candidates: np.ndarray, grid: np.ndarray) -> np.ndarray:
        """Released centres of the design columns, each moved to its domain's midpoint when it is the lowest or
        highest candidate of a public domain (post-processing of released values; the response keeps its own).

        A median at the edge of a public range means that at least half the rows sit on that edge, as for a
        rare 0/1 indicator: centred there, the column is identically 0 in most blocks, its per-block
        coefficient is then exactly 0 in those blocks (minimum-norm OLS), the depth regions collapse to zero
        width in that coordinate and PTR refuses at small epsilon.  Centred at the midpoint the column is a
        nonzero constant there, as with the fixed centring by public ranges that PTR passed.

        Parameters
        ----------
        centres : numpy.ndarray
            The released centres (handled variables, response last).
        candidates : numpy.ndarray
            (variables, grid size) boolean: the candidates of each variable (:meth:`centre_candidates`).
        grid : numpy.ndarray
            The candidate grid.

        Returns
        -------
        numpy.ndarray
            The centres to use (a new array).
        """
        low = np.where(candidates, grid[None, :], np.inf).min(axis=1)
        high = np.where(candidates, grid[None, :], -np.inf).max(axis=1)
        edge = self.known & ((centres <= low) | (centres >= high))
        edge[-1] = False
        midpoints = (np.where(self.known, self.lo, 0.0) + np.where(self.known, self.hi, 0.0)) / 2.0
        return np.where(edge, midpoints, centres)


@dataclass(frozen=True)
class Preprocessing:
    """The released affine map z = (x - centre) / radius (clipped to [-1, 1] when ``clip``), and the same for y.

    Attributes
    ----------
    centre, radius : numpy.ndarray
        Per design column (0 and 1 for the intercept).
    y_centre, y_radius : float
        Of the response.
    intercept_index : int or None
        Position of the intercept.
    clip : bool
        The pilot clips the rescaled rows (``blocks="moments"``).
    private_columns : tuple of int
        The columns of X whose released radius is below their domain's limit, so that clipping at it can bite
        (the radius check looks at these).
    """

    centre: np.ndarray
    radius: np.ndarray
    y_centre: float
    y_radius: float
    intercept_index: int | None
    clip: bool
    private_columns: tuple[int, ...] = ()

    @classmethod
    def identity(cls, d: int, intercept_index: int | None) -> Preprocessing:
        """No centring and no scaling (nothing released)."""
        return cls(np.zeros(d), np.ones(d), 0.0, 1.0, intercept_index, clip=False)

    def centres_only(self) -> Preprocessing:
        """The same centres, unit radii, no clipping: what per-block OLS needs (it is equivariant under a
        rescaling of a column, so it needs no radii)."""
        return Preprocessing(self.centre, np.ones_like(self.radius), self.y_centre, 1.0, self.intercept_index,
                             clip=False)

    def rescale(self, xs: np.ndarray) -> np.ndarray:
        """(x - centre) / radius without clipping (a new array)."""
        z = np.subtract(xs, self.centre)
        if np.any(self.radius != 1.0):  # dividing by 1 changes nothing (exactly), so it is skipped
            z /= self.radius
        return z

    def clip_rescaled(self, z: np.ndarray) -> np.ndarray:
        """Clip rescaled rows to [-1, 1] (a copy), the intercept set to 1 so that ||z||^2 <= d whatever the data."""
        out = np.clip(z, -1.0, 1.0)
        if self.intercept_index is not None:
            out[:, self.intercept_index] = 1.0
        return out

    def __call__(self, xs: np.ndarray) -> np.ndarray:
        z = self.rescale(xs)
        return self.clip_rescaled(z) if self.clip else z

    def response(self, ys: np.ndarray) -> np.ndarray:
        """clip((y - y_centre) / y_radius) to [-1, 1]: the pilot's response."""
        return np.clip((ys - self.y_centre) / self.y_radius, -1.0, 1.0)

    def pilot_sums(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Z^T Z, Z^T y~) of the rows, Z = clip_rescaled(rescale(xs)) and y~ = response(ys), computed with the
        same operations (so the same values) as those methods, in one scratch copy of ``xs``."""
        z = self.rescale(xs)
        np.clip(z, -1.0, 1.0, out=z)
        if self.intercept_index is not None:
            z[:, self.intercept_index] = 1.0
        return z.T @ z, self.response(ys) @ z

    def params_back(self, coef: np.ndarray) -> np.ndarray:
        """Coefficients on x from coefficients of y - y_centre on z (the exact inverse change of basis)."""
        beta = coef / self.radius
        if self.intercept_index is not None:
            beta[self.intercept_index] = coef[self.intercept_index] - float(beta @ self.centre) + self.y_centre
        return beta

    def zero_radius(self) -> list[int | str]:
        """The variables whose released radius is 0 (more than about 75% of the values at the released centre,
        and no public range to fall back on), as design-column indices and ``"response"``; empty when none.  A
        fact about released values."""
        if not self.clip:
            return []
        return [int(j) for j in np.flatnonzero(self.radius == 0.0)] + (["response"] if self.y_radius == 0.0 else [])


def ranks_sorted(ordered: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """#{v <= g} for every grid point g, given each variable's values sorted in a row of ``ordered``.

    Parameters
    ----------
    ordered : numpy.ndarray
        (variables, rows), each row sorted.
    grid : numpy.ndarray
        The sorted public grid.

    Returns
    -------
    numpy.ndarray
        (variables, grid size).
    """
    out = np.empty((ordered.shape[0], grid.size), dtype=np.intp)
    for i, col in enumerate(ordered):
        if col.size == 0:
            out[i] = 0
            continue
        # below the smallest value the count is 0, from the largest on it is N: search only the grid in between
        lo, hi = np.searchsorted(grid, [col[0], col[-1]], side="left")
        out[i, :lo] = 0
        out[i, lo:hi] = np.searchsorted(col, grid[lo:hi], side="right")
        out[i, hi:] = col.size
    return out


def sorted_deviations(ordered: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """|v - c| sorted, per row of ``ordered`` (sorted values) and its centre, without a full sort.

    The values below c give c - v in increasing order when read backwards,
    those above give v - c in increasing order, and a stable sort (a merge
    for two sorted runs) joins them.  c - v is exactly |v - c| in floating
    point (rounding is symmetric), so the counts are those of
    ``np.abs(v - c)``.

    Parameters
    ----------
    ordered : numpy.ndarray
        (variables, rows), each row sorted.
    centres : numpy.ndarray
        One centre per variable.

    Returns
    -------
    numpy.ndarray
        (variables, rows), each row sorted.
    """
    out = np.empty_like(ordered)
    for i, (col, c) in enumerate(zip(ordered, centres, strict=True)):
        j = int(np.searchsorted(col, c, side="left"))
        out[i] = np.sort(np.concatenate([c - col[:j][::-1], col[j:] - c]), kind="stable")
    return out


def quantiles_from_ranks(ranks: np.ndarray, n_rows: int, quantile: float, grid: np.ndarray, epsilon_each: float,
                         rng: np.random.Generator, ledger: PrivacyLedger, names: Sequence[str],
                         candidates: np.ndarray | None = None) -> np.ndarray:
    """Private ``quantile`` of each variable by the exponential mechanism on a public grid.

    Candidate g_k stands for the values in (g_{k-1}, g_k]; with R_k the
    count at or below g_k and L_k = R_{k-1} (L_0 = 0) its score is
    -max(0, L_k - quantile * N, quantile * N - R_k), N the (public) number of
    rows: 0 when the quantile falls in the candidate's cell, else the number
    of rows between the cell and the quantile.  Replacing one row moves each
    count by at most one, so the score has sensitivity 1 and each call is
    epsilon_each-DP (McSherry & Talwar 2007; docs/proofs/tukey.md).

    Parameters
    ----------
    ranks : numpy.ndarray
        (variables, grid size): R_k = #{i : v_i <= g_k} per variable.
    n_rows : int
        N.
    quantile : float
        The quantile level.
    grid : numpy.ndarray
        The public grid.
    epsilon_each : float
        Epsilon of each release.
    rng : numpy.random.Generator
        The fit's random source.
    ledger : PrivacyLedger
        The fit's ledger.
    names : sequence of str
        The ledger step of each variable.
    candidates : numpy.ndarray or None
        (variables, grid size) bool: the public candidates of each variable (default: every grid point).

    Returns
    -------
    numpy.ndarray
        The released quantile of each variable.
    """
    out = np.empty(ranks.shape[0])
    target = quantile * n_rows
    for i in range(ranks.shape[0]):  # one mechanism call per variable (d is small)
        below = np.concatenate([[0], ranks[i][:-1]])
        score = -np.maximum(0.0, np.maximum(below - target, target - ranks[i]))
        base = np.zeros(grid.size) if candidates is None else np.where(candidates[i], 0.0, -np.inf)
        pick = exponential_mechanism(base, score, sensitivity=1.0, epsilon=epsilon_each, rng=rng, ledger=ledger,
                                     name=names[i])
        out[i] = grid[pick]
    return out


def sample_ranks(X_sub: np.ndarray, y_sub: np.ndarray, cols: np.ndarray, domains: Domains) -> RanksOf:
    """``ranks_of`` over sample rows held in this process: the handled variables clipped into their domains and
    sorted once.

    Parameters
    ----------
    X_sub, y_sub : numpy.ndarray
        The sample rows and responses.
    cols : numpy.ndarray
        The handled columns of X.
    domains : Domains
        Their domains (and the response's, last).

    Returns
    -------
    RanksOf
    """
    values = np.empty((cols.size + 1, X_sub.shape[0]))  # one row per handled variable
    values[:cols.size] = X_sub[:, cols].T
    values[-1] = y_sub
    ordered = np.sort(domains.clip(values), axis=1)

    def ranks_of(grid: np.ndarray, centres: np.ndarray | None) -> np.ndarray:
        return ranks_sorted(ordered if centres is None else sorted_deviations(ordered, centres), grid)

    return ranks_of


def preprocess(ranks_of: RanksOf, n_rows: int, d: int, *, centre: bool, scale: bool, intercept_index: int | None,
               domains: Domains, epsilon: float, rng: np.random.Generator, ledger: PrivacyLedger) -> Preprocessing:
    """Private centres (medians; with ``centre``) and radii (RADIUS_K x private quantile 0.75 of |v - centre|;
    with ``scale``) of the handled variables, each an exponential mechanism with an equal share of ``epsilon``
    (basic composition).

    Parameters
    ----------
    ranks_of : RanksOf
        The counts of the ``n_rows`` sample rows (:func:`sample_ranks`, or histograms over a cluster).
    n_rows : int
        Rows in the sample (public).
    d : int
        Design columns.
    centre, scale : bool
        Release centres, radii.
    intercept_index : int or None
        Position of the intercept.
    domains : Domains
        Public ranges of the handled variables: values are clipped into them (by ``ranks_of``), candidates lie
        inside them and radii never exceed :meth:`Domains.radius_limit`.
    epsilon : float
        The preprocessing's budget.
    rng : numpy.random.Generator
        The fit's random source.
    ledger : PrivacyLedger
        The fit's ledger.

    Returns
    -------
    Preprocessing
    """
    cols = handled_columns(d, intercept_index)
    names = [f"column {j}" for j in cols] + ["the response"]
    eps_each = epsilon / (len(names) * (int(centre) + int(scale)))
    centres = np.zeros(len(names))
    if centre:
        candidates = domains.centre_candidates(CENTRE_GRID)
        centres = quantiles_from_ranks(ranks_of(CENTRE_GRID, None), n_rows, 0.5, CENTRE_GRID, eps_each, rng, ledger,
                                       [f"TukeyEM preprocessing: private median of {w}" for w in names], candidates)
        centres = domains.off_the_edge(centres, candidates, CENTRE_GRID)
    radii = np.ones(len(names))
    private = np.zeros(len(names), dtype=bool)
    if scale:
        limit = domains.radius_limit(centres)
        spread = quantiles_from_ranks(
            ranks_of(SCALE_GRID, centres), n_rows, SCALE_QUANTILE, SCALE_GRID, eps_each, rng, ledger,
            [f"TukeyEM preprocessing: private quantile {SCALE_QUANTILE} of |{w} - centre|" for w in names],
            SCALE_GRID[None, :] <= limit[:, None])
        radii = np.where(domains.known & (spread == 0.0), limit, np.minimum(RADIUS_K * spread, limit))
        private = radii < limit
    x_centre, x_radius = np.zeros(d), np.ones(d)
    x_centre[cols], x_radius[cols] = centres[:cols.size], radii[:cols.size]
    return Preprocessing(x_centre, x_radius, float(centres[-1]), float(radii[-1]), intercept_index, clip=scale,
                         private_columns=tuple(int(j) for j, p in zip(cols, private[:cols.size], strict=True) if p))
