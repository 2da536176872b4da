"""Private preconditioning for DP-RobGD and DP-AMBSSGD: a released centre and scale for each covariate.

Gradient descent needs T ~ kappa ln(n) rounds (Liu et al. 2023, Thm 3), and
the budget pays for few rounds at moderate n.  Real covariates are uncentred
and on different scales (age ~ 30 beside an intercept), which puts kappa of
E[x x^T] in the thousands: the rounds allowed then never leave 0.  This
module releases, from all n rows, a centre c_j and a scale s_j of each
non-intercept column (and a centre c_y of the response when there is an
intercept); the method then runs unchanged on z = (x - c) / s and y - c_y
(the intercept column untouched) and maps its coefficients back exactly:
beta_j = b_j / s_j, intercept b_0 - sum_j b_j c_j / s_j + c_y.  The map is a
released value, so the fit on z is the method's fit (its proof applies to
the rows z: a replaced row x is a replaced row z) composed with this step.

The releases, per variable without a public range (noisy histograms on
public grids with modal-bin readout: the idea of the Private Norm Estimator
of Liu et al., Alg. 3).  The rows are cut into k = n // b groups of b rows
by a public pseudo-random bijection of range(n), b from public n and the
budget only (:func:`group_size`); each group gives its mean and its sample
variance (from the group's sums of v and v^2, which add up over chunks):

1. scale: s = sqrt of the geometric middle of the modal bin of the group
   variances on ``SPREAD_GRID`` (bins of ratio 2 over [2^-64, 2^64)), the
   bottom bin (groups of equal values) never taken.  An almost constant or
   zero-inflated column (a 0/1 column with 2% ones) has many groups of
   equal values; skipping their bin gives the typical size of the others.
2. centre (only with an intercept, which absorbs it): the modal bin of the
   group means divided by s on ``CENTRE_GRID`` (bins of a quarter, centred
   on the multiples of 1/4, for |u| < 2^10; geometric, 8 per octave,
   beyond); c = s times the bin's representative: within about s/8 of the
   mode of the group means when |mean| < 2^10 s, within 4.4% of it beyond.

Group means and variances are sums of b >= 2 rows: as in the norm
estimator, data read in chunks add them in another order, which can change
the last bit of a group statistic (and so, with probability ~1e-16 per
group, its bin); the tests check that the chunked release equals the
in-memory one.  A variable whose mean exceeds its sd by a factor ~1e7 or
more loses its group variances to cancellation (they come out 0 or noisy):
its scale then falls back or is coarse.

A release is used only when its noisy modal count clears the largest of the
grid's noisy empty bins (2 sds above sqrt(2 ln B) sds, :func:`~dpstats.methods.common.robust_estimators.clearance`;
post-processing of the released counts), or failing a single bin when a
window of 2 or 4 adjacent bins clears at its own noise sd
(:func:`~dpstats.methods.common.robust_estimators.reliable_mode`; the
largest bin of the window is read): near the methods' minimum n the group
means spread over several quarter bins, none cleared alone, and the
response's centre fell back to 0 (in-sample R^2 near -100, issue 17), or,
declared, was read on bins a quarter of its half-range wide.  Otherwise
the variable keeps a public fallback, and the notes name it: scale 1 and
centre 0 without a range; with a declared range, the clipped Gaussian
estimates below.

Public ranges.  A range the design gives by construction (factor dummies,
spline bases: ``declared`` False) is a tight fact about the column: it is
used as the map and nothing is spent (centre (lo + hi) / 2, scale
(hi - lo) / 2; scale max(|lo|, |hi|) without an intercept; a zero width
gives scale 1).

Declared ranges.  A range from declared bounds (``declared`` True, and the
response's declared range) is the privacy domain, wide by design (a
documented cap, a plausible extreme), not a scale: scaling by it made kappa
of E[z z^T] huge, and falling back to its midpoint and half-width when a
histogram did not clear put the starting point far from the data (issue 17:
declaring bounds made robgd and ambssgd worse: bikeshare R^2 -17.7 against
-0.19 without).  Such a variable is released by the histograms like one
without a range (its range then only bounds the released values: a centre
inside it, a scale at most its half-width), and by estimates inside the
range that never fail (for DP-RobGD, ``moments_first``, always; for
DP-AMBSSGD only where a histogram does not clear): in units u = (clip(v, lo, hi) - lo) / (hi - lo)
in [0, 1] of each range, with p such variables,

3. centres (with an intercept; the response too): the vector of the means of
   u plus Gaussian noise, L2 sensitivity sqrt(p) / n (replacing a row moves
   each mean by at most 1 / n), clamped to [0, 1];
4. scales (columns only): the vector of the mean absolute deviations
   |u - c_u| about their centres (about the u of 0 without an intercept),
   L2 sensitivity sqrt(p) / n (each term lies in an interval of length at
   most 1); the scale is sqrt(pi / 2) (hi - lo) times the released deviation
   (the sd of a normal variable), at least the release's noise sd and at
   most the public map's scale (the half-width).

Where a histogram did not clear, these are the variable's centre and scale.
Where it cleared (DP-RobGD), they replace its reading when they are precise (a mean
whose noise sd is at most 1/8 of the histogram's scale; a deviation of at
least 4 noise sds) or differ from it by more than 2 noise sds; otherwise
the histogram's reading stays (issue 17 part 4: the modes read a discrete
variable badly.  Years of schooling, integers declared in [0, 18] and
rescaled to [-1, 1], at cps's n and epsilon 0.5 have groups of 2 or 3 rows
whose variances' mode is the column's step: a scale of a third of its sd,
which multiplies the noise of its coefficient by 3; the mode of the group
means of a variable with a few values, such as log coinsurance, sits far
from their mean).  The choices are post-processing of released values.
Their noise sd, (hi - lo) sqrt(p) / (n mu_round), is small against the
spread whenever n mu_round exceeds the ratio of the declared width to the
spread; where it does not (a range 100 sds wide at large n), the
histograms, whose error does not grow with the width, have usually cleared
and keep their readings.  One round for each vector is reserved in the
block whenever a variable has a declared range, and spent on all of them
with ``moments_first`` (else only on the variables that need them).
The bounds so only set the privacy domain and the sensitivity.

The response gets a private centre but no scale: the methods' residual grids
are geometric over [2^-64, 2^64), so they need no scale of y (descent with
released thresholds is equivariant to scaling y, up to the grid's
alignment); its centre makes the initial residuals y - c_y centred, so the
intercept, which centring the columns makes a well-conditioned direction,
starts near its value.  Its scale histogram only sets the centre's bins.

Privacy (replace-one, n public).  The grouping is public and each row is in
at most one group, so replacing a row changes one group's mean and
variance: in each variable's histogram one count falls by 1 and one rises
by 1, L2 sensitivity sqrt(2).  The histograms (2 per variable, 1 without an
intercept) and the one or two reserved vectors of the variables with
declared ranges (:func:`release_count`) are the releases of one Gaussian
block with mu_round = mu_pre / sqrt(releases), adaptively composed (a centre
histogram uses the released scale; which variables enter a vector, and the
centres the deviations are taken about, are released values): mu_pre-GDP in
all (Dong, Roth & Su 2022, Cor. 3.3), charged to the fit's ledger before the
first draw.  Argmaxes, clamps, fallbacks and the map are post-processing.

Extreme finite values: a group's sums of v and v^2 may overflow (entries
near 1.8e308).  Its variance is then inf or NaN and lands in the last bin
of the scale histogram, its mean +-inf (NaN when sums of both signs
overflowed) in an end bin of the centre histogram: fixed public rules, so
each group still adds one count to one bin and the sensitivity is sqrt(2).
The released map is clamped to +-the largest double, value by value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstats.errors import MethodOptionError
from dpstats.methods.common.extremes import QUIET, clamp_finite, quiet
from dpstats.methods.common.permutations import RowPermutation
from dpstats.methods.common.robust_estimators import (
    DISTANCE_GRID,
    HISTOGRAM_SENSITIVITY,
    histogram_counts,
    reliable_mode,
)
from dpstats.methods.common.row_passes import add_arrays
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import GaussianBlock, gaussian_block

__all__ = [
    "CENTRE_GRID",
    "SPREAD_GRID",
    "CentreGrid",
    "GroupSumsPass",
    "Standardisation",
    "Transformed",
    "standardised",
    "check_public_options",
    "group_size",
    "private_columns",
    "BoundedSumsPass",
    "release_count",
    "releases_anything",
    "release_standardisation",
    "releases_per_column",
]

#: Grid of the scale histogram: bins of ratio 2 over [2^-64, 2^64) (bin 0 also holds zero differences).
SPREAD_GRID = DISTANCE_GRID
#: Groups per noise sd of a count (sets the group size from public n and mu).
_GROUPS_PER_SD = 32.0


@dataclass(frozen=True)
class CentreGrid:
    """Bins of u: width 1/``fine`` centred on the multiples of 1/``fine`` for |u| < ``limit`` (powers of 2),
    then ``per_octave`` geometric bins per octave up to 2^``top`` on each side (values beyond go to the end
    bins)."""

    limit: int = 1 << 10
    fine: int = 4
    per_octave: int = 8
    top: int = 140

    @property
    def _geo(self) -> int:
        return (self.top - int(math.log2(self.limit))) * self.per_octave

    @property
    def _half(self) -> int:
        return self.limit * self.fine  # linear bins on each side of 0

    @property
    def size(self) -> int:
        return 2 * self._half + 1 + 2 * self._geo

    @quiet
    def index(self, u: np.ndarray) -> np.ndarray:
        """Bin of each value: linear bins are g .. g + 2L (u = -limit .. limit), geometric ones outside; +-inf go
        to the end bins and NaN (a group mean formed from sums that overflowed with both signs) to the last bin,
        a fixed public rule."""
        u = np.asarray(u, dtype=float)
        nan = np.isnan(u)
        u = np.where(nan, np.inf, u)
        L, g = self._half, self._geo
        out = np.rint(np.clip(u * self.fine, -L, L)).astype(np.intp) + L + g
        big = np.abs(u) * self.fine >= L + 0.5
        if big.any():
            k = np.floor((np.log2(np.abs(u[big])) - math.log2(self.limit)) * self.per_octave)
            k = np.clip(np.nan_to_num(k, posinf=g - 1), 0, g - 1).astype(np.intp)
            out[big] = np.where(u[big] > 0, 2 * L + 1 + g + k, g - 1 - k)
        return out

    def value(self, j: int) -> float:
        """Representative of bin j: its multiple of 1/fine, or the geometric middle of a geometric bin."""
        L, g = self._half, self._geo
        if g <= j <= g + 2 * L:
            return float(j - g - L) / self.fine
        k = j - (2 * L + 1 + g) if j > g + 2 * L else g - 1 - j
        mag = self.limit * 2.0 ** ((k + 0.5) / self.per_octave)
        return mag if j > g + 2 * L else -mag


CENTRE_GRID = CentreGrid()


class GroupSumsPass:
    """fn(X, y, offset) -> (2, columns, groups) sums of x_j and x_j^2 over the rows of each group (picklable).

    Row i is in group pi(i) // b of a public pseudo-random bijection pi of
    range(n) (:class:`~dpstats.methods.blocks.RowPermutation`, evaluated row
    by row), for the first ``groups`` groups; the sums add up over chunks.
    A public null row read marked (NaN, ``missing="drop"``) adds 0 to both sums.
    """

    def __init__(self, perm: RowPermutation, group_size: int, groups: int, columns: np.ndarray,
                 response: bool) -> None:
        self.perm, self.group_size, self.groups, self.columns = perm, group_size, groups, columns
        self.response = response

    @quiet  # a square or sum that overflows is inf (release_standardisation bins it publicly)
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        g = self.perm.positions(np.arange(offset, offset + X.shape[0], dtype=np.int64)) // self.group_size
        keep = g < self.groups
        gk, Xk = g[keep], X[keep][:, self.columns]
        if self.response:  # the response is the last variable
            Xk = np.column_stack([Xk, y[keep]])
        Xk = np.where(np.isnan(Xk), 0.0, Xk)  # (NaN marks only the null rows: other values were checked finite)
        p = Xk.shape[1]
        # one bincount per moment over all variables: bin (variable i, group g) = i * groups + g; each bin
        # still adds its rows in row order, as a bincount per variable would
        bins = (gk[:, None] + self.groups * np.arange(p)).ravel()
        size = p * self.groups
        return np.stack([np.bincount(bins, weights=Xk.ravel(), minlength=size),
                         np.bincount(bins, weights=(Xk * Xk).ravel(), minlength=size)]).reshape(2, p, self.groups)


@dataclass(frozen=True)
class Standardisation:
    """The released map z = (x - centre) / scale (the intercept column has centre 0, scale 1), and how many passes
    over the rows released it."""

    centre: np.ndarray
    scale: np.ndarray
    intercept_index: int | None
    y_centre: float = 0.0
    passes: int = 0  # passes over the rows that released it (public)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """(X - centre) / scale as a new array (elementwise, so the same doubles for any split of the rows).

        A value beyond the largest double (a finite x near it over a scale below 1) is clamped to +-the largest
        double (:func:`~dpstats.methods.common.extremes.clamp_finite`): an elementwise, monotone public map, so the
        methods see finite rows only and each row still depends on its own x only."""
        with np.errstate(**QUIET):
            return clamp_finite((X - self.centre) / self.scale)

    def response(self, y: np.ndarray) -> np.ndarray:
        """y - y_centre as a new array (clamped to +-the largest double, as :meth:`transform`)."""
        with np.errstate(**QUIET):
            return clamp_finite(y - self.y_centre)

    def params_back(self, coef: np.ndarray) -> np.ndarray:
        """Coefficients on x from those on z, A coef + b with (A, b) from :meth:`affine_back`: beta_j = b_j / s_j,
        intercept b_0 - sum_j b_j c_j / s_j + y_centre (clamped to finite doubles: a public, elementwise map)."""
        A, b = self.affine_back()
        with np.errstate(**QUIET):
            return clamp_finite(A @ np.asarray(coef, dtype=float) + b)

    def affine_back(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) with beta = A coef + b (:meth:`params_back`): A = diag(1 / scale) with, for an intercept k, row k
        equal to -centre_j / scale_j off the diagonal and 1 on it; b = y_centre e_k (zero without an intercept)."""
        d = self.scale.size
        with np.errstate(**QUIET):
            A = np.diag(1.0 / self.scale)
            b = np.zeros(d)
            k = self.intercept_index
            if k is not None:
                A[k, :] = -self.centre / self.scale
                A[k, k] = 1.0
                b[k] = self.y_centre
        return clamp_finite(A), b


class Transformed:
    """fn(X, y, offset) evaluated on the standardised rows: wraps a pass (picklable; keeps ``select``)."""

    def __init__(self, fn: Any, st: Standardisation) -> None:
        self.fn, self.st = fn, st
        if hasattr(fn, "select"):
            self.select = fn.select

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> Any:
        return self.fn(self.st.transform(X), self.st.response(y), offset)


def standardised(st: Standardisation | None, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows (x - centre) / scale and y - y_centre (new arrays), or the rows themselves when ``st`` is None."""
    return (X, y) if st is None else (st.transform(X), st.response(y))


def check_public_options(d: int, intercept_index: int | None,
                         column_ranges: Sequence[tuple[float, float] | None] | None) -> None:
    """Validate the public facts of the fit context (intercept position, per-column ranges); nothing is read."""
    if intercept_index is not None and (isinstance(intercept_index, bool) or not (
            isinstance(intercept_index, (int, np.integer)) and 0 <= intercept_index < d)):
        raise MethodOptionError(f"intercept_index must be None or a column index in 0..{d - 1}")
    if column_ranges is not None:
        if len(column_ranges) != d:
            raise MethodOptionError(f"column_ranges must have one entry per column ({d})")
        for iv in column_ranges:
            if iv is not None and not (len(iv) == 2 and all(math.isfinite(v) for v in iv) and iv[0] <= iv[1]):
                raise MethodOptionError("each column range must be None or a finite (lo, hi) with lo <= hi")


Ranges = Sequence[tuple[float, float] | None] | None


def _range(column_ranges: Ranges, j: int) -> tuple[float, float] | None:
    """The public range of column j, or None."""
    if column_ranges is None or column_ranges[j] is None:
        return None
    lo, hi = column_ranges[j]  # type: ignore[misc]
    return float(lo), float(hi)


def _is_declared(declared: Sequence[bool], j: int) -> bool:
    return bool(declared[j]) if j < len(declared) else False


def _free(j: int, intercept_index: int | None, column_ranges: Ranges, declared: Sequence[bool]) -> bool:
    """Column j needs no release: the intercept, a range given by the design, or a constant (zero-width) range."""
    if j == intercept_index:
        return True
    iv = _range(column_ranges, j)
    return iv is not None and (not _is_declared(declared, j) or iv[0] == iv[1])


def private_columns(d: int, intercept_index: int | None, column_ranges: Ranges,
                    declared: Sequence[bool] = ()) -> list[int]:
    """The columns whose centre and scale are released: not the intercept, and no public range from the design
    (a declared range is not a scale, module docstring) unless it has zero width (public facts)."""
    return [j for j in range(d) if not _free(j, intercept_index, column_ranges, declared)]


def releases_anything(d: int, intercept_index: int | None, column_ranges: Ranges,
                      declared: Sequence[bool] = (), response_range: tuple[float, float] | None = None) -> bool:
    """Whether :func:`release_standardisation` spends budget: a column to release, or an intercept with a response
    whose centre is released (the response is centred privately whatever its declared range, unless the range
    has zero width)."""
    return release_count(d, intercept_index, column_ranges, declared, response_range) > 0


def releases_per_column(intercept_index: int | None) -> int:
    """Histograms released per private column: scale, and centre when an intercept absorbs it."""
    return 2 if intercept_index is not None else 1


def group_size(n: int, mu_round: float) -> int:
    """Rows per group, from public n and the per-histogram GDP parameter only: as many groups as
    ``_GROUPS_PER_SD`` noise sds (so a modal bin holding a third of them clears the noise on the grid's
    largest empty bin), as large as that allows (larger groups concentrate their means), at least 2."""
    k_target = math.ceil(_GROUPS_PER_SD * HISTOGRAM_SENSITIVITY / mu_round)
    return max(2, n // max(k_target, 1))


def _public_map(iv: tuple[float, float] | None, centring: bool) -> tuple[float, float]:
    """(centre, scale) of a column from its public range alone: the map of a column bounded by the design (or of
    a constant column: a zero width gives scale 1), the cap of a declared column's released scale, and (no
    range: centre 0, scale 1) the fallback of a histogram that does not clear."""
    if iv is None:
        return 0.0, 1.0
    lo, hi = iv
    half = (hi - lo) / 2.0 if centring else max(abs(lo), abs(hi))
    return ((lo + hi) / 2.0 if centring else 0.0), (half if half > 0 else 1.0)


@dataclass(frozen=True)
class _Releases:
    """The block and the group sums of one preconditioning: the released variables' statistics per group."""

    block: GaussianBlock
    means: np.ndarray
    variances: np.ndarray


def _group_statistics(reduce: Callable[[Any, Any], Any], n: int, private: list[int], private_y: bool, b: int,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Group means and sample variances of the released variables (one pass over the rows; public groups)."""
    k = n // b
    perm = RowPermutation.draw(n, rng)
    sums = reduce(GroupSumsPass(perm, b, k, np.array(private, dtype=np.intp), private_y), add_arrays)
    with np.errstate(**QUIET):  # sums that overflowed give inf or NaN statistics: the histograms bin them publicly
        means = sums[0] / b
        variances = np.maximum(sums[1] - sums[0] * means, 0.0) / (b - 1)
    return means, variances


def _release_scales(rel: _Releases, rng: np.random.Generator) -> np.ndarray:
    """Per released variable, the released scale, or NaN where its histogram did not clear its noise
    (:func:`~dpstats.methods.common.robust_estimators.reliable_mode`: a bin or a window of 2 or 4 bins)."""
    out = np.full(rel.variances.shape[0], np.nan)
    for i, variances in enumerate(rel.variances):
        noisy = np.asarray(rel.block.release(histogram_counts(variances, SPREAD_GRID).astype(float),
                                             l2_sensitivity=HISTOGRAM_SENSITIVITY, rng=rng))
        # bin 0 (groups of equal values, variances below 2^-63) is never the scale
        m = reliable_mode(noisy, rel.block.mu_round, start=1)
        if m is not None:
            out[i] = math.sqrt(SPREAD_GRID.upper_edge(m) / math.sqrt(2.0))
    return out


def _release_centres(rel: _Releases, scales: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per released variable, the released centre (the group means over the scale used, binned on
    ``CENTRE_GRID``), or NaN where its histogram did not clear its noise (as in :func:`_release_scales`)."""
    out = np.full(rel.means.shape[0], np.nan)
    for i, means in enumerate(rel.means):
        with np.errstate(**QUIET):
            centred = means / scales[i]
        counts = np.bincount(CENTRE_GRID.index(centred), minlength=CENTRE_GRID.size)
        noisy = np.asarray(rel.block.release(counts.astype(float), l2_sensitivity=HISTOGRAM_SENSITIVITY, rng=rng))
        m = reliable_mode(noisy, rel.block.mu_round)
        if m is not None:
            out[i] = scales[i] * CENTRE_GRID.value(m)
    return out


def _bounded(iv: tuple[float, float] | None) -> bool:
    """Whether a variable has a public range of positive width (its values are clipped to it by the Gaussian
    releases, :class:`BoundedSumsPass`)."""
    return iv is not None and iv[1] > iv[0]


class BoundedSumsPass:
    """fn(X, y, offset) -> per variable, the sum over all rows of u = (clip(v, lo, hi) - lo) / (hi - lo) in [0, 1],
    or with ``centre`` the sum of |u - centre_u| (in an interval of length at most 1); picklable.

    The variables are the design columns ``columns`` and, with ``response``, the response last; ``lo`` and
    ``width`` are their public ranges.  Each row adds one term in [0, 1] per variable, so replacing a row moves
    each coordinate of the mean (sum / n) by at most 1 / n: L2 sensitivity sqrt(p) / n for p variables.
    """

    def __init__(self, columns: np.ndarray, response: bool, lo: np.ndarray, width: np.ndarray,
                 centre: np.ndarray | None = None) -> None:
        self.columns, self.response, self.lo, self.width, self.centre = columns, response, lo, width, centre

    @quiet  # a value beyond the largest double over a small width is +-inf: clipped like any other
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        V = X[:, self.columns]
        if self.response:
            V = np.column_stack([V, y])
        u = np.clip((V - self.lo) / self.width, 0.0, 1.0)
        if self.centre is not None:
            u = np.abs(u - self.centre)
        return np.asarray(u.sum(axis=0), dtype=float)


def _plan_variables(d: int, intercept_index: int | None, column_ranges: Ranges, declared: Sequence[bool],
                    response_range: tuple[float, float] | None) -> tuple[list[int], list[int], bool, bool]:
    """(columns without a range, columns with a declared range of positive width, whether the response is
    released (with an intercept, unless its declared range has zero width), whether it has a declared range of
    positive width): public facts only."""
    private = private_columns(d, intercept_index, column_ranges, declared)
    bounded = [j for j in private if _bounded(_range(column_ranges, j))]
    free = [j for j in private if j not in bounded]
    centring = intercept_index is not None
    y_bounded = centring and response_range is not None and _bounded(response_range)
    y_released = centring and (response_range is None or y_bounded)
    return free, bounded, y_released, y_bounded


def _gaussian_rounds(centring: bool, bounded: list[int], y_bounded: bool) -> tuple[int, int]:
    """(rounds for the clipped means, rounds for the clipped deviations) of the variables with declared ranges: one
    vector each, when such variables exist (public facts)."""
    return int(centring and bool(bounded or y_bounded)), int(bool(bounded))


def release_count(d: int, intercept_index: int | None, column_ranges: Ranges, declared: Sequence[bool] = (),
                  response_range: tuple[float, float] | None = None) -> int:
    """Releases of one preconditioning (public facts): per released variable a histogram of its group variances
    and, with an intercept, one of its group means; with declared ranges, one vector of clipped means (with an
    intercept) and one of clipped mean absolute deviations (when a column has one), over all those variables."""
    free, bounded, y_released, y_bounded = _plan_variables(d, intercept_index, column_ranges, declared,
                                                           response_range)
    centring = intercept_index is not None
    return ((len(free) + len(bounded) + int(y_released)) * releases_per_column(intercept_index)
            + sum(_gaussian_rounds(centring, bounded, y_bounded)))


def release_standardisation(reduce: Callable[[Any, Any], Any], n: int, d: int, *, intercept_index: int | None,
                            column_ranges: Ranges, mu: float, rng: np.random.Generator, ledger: PrivacyLedger,
                            declared: Sequence[bool] = (), response_range: tuple[float, float] | None = None,
                            moments_first: bool = False,
                            label: Callable[[int | str], str] = str) -> tuple[Standardisation, list[str]]:
    """Release the centres and scales (module docstring) from the ``n`` rows under mu-GDP, charged to ``ledger``.

    ``reduce(fn, combine)`` evaluates a pass on all the rows (:meth:`~dpstats.rows.base.Rows.reduce`): one
    pass for the histograms, and for the variables with declared ranges one for their clipped means (with an
    intercept) and one for their clipped deviations (when a column has one) (``Standardisation.passes``).
    ``declared[j]`` is True when column j's range comes from declared bounds (not a scale);
    ``response_range`` is the response's declared range (None: none).  ``moments_first`` (public; DP-RobGD):
    the clipped Gaussian releases of the declared variables are made for all of them and replace a cleared
    histogram's reading where they are precise or at odds with it (module docstring); False (DP-AMBSSGD, whose
    benchmark fits this did not help): they are made only where a histogram did not clear.  Returns the map and
    report notes, which name each variable by ``label`` (a design column's index or ``"response"`` -> its public
    name).
    """
    centring = intercept_index is not None
    centre, scale = np.zeros(d), np.ones(d)
    private = private_columns(d, intercept_index, column_ranges, declared)
    public = [j for j in range(d) if j != intercept_index and j not in private]
    for j in public:
        centre[j], scale[j] = _public_map(_range(column_ranges, j), centring)
    notes = [f"columns {_named(label, public)}: centred and scaled by their public ranges (nothing spent)"
             ] if public else []
    free, bounded, y_released, y_bounded = _plan_variables(d, intercept_index, column_ranges, declared,
                                                           response_range)
    # The response is always centred (with an intercept), even when its range is declared: a declared response
    # range is a clip bound for the bounded methods, typically far wider than its spread (statsmodels' fair: hours
    # 0-60, sd 2.2), and its midpoint as a centre left the robust methods' residual-scale search far from the
    # residuals (R^2 -7).  A zero-width range is the response's value.
    y_centre = response_range[0] if centring and response_range is not None and not y_released else 0.0
    releases = release_count(d, intercept_index, column_ranges, declared, response_range)
    if releases == 0:
        return Standardisation(centre, scale, intercept_index, float(y_centre)), notes
    mu_round = mu / math.sqrt(releases)
    b = group_size(n, mu_round)
    columns = free + bounded
    block = gaussian_block(rounds=releases, mu_round=mu_round, ledger=ledger,
                           name="private centres and scales of the covariates (preconditioning)",
                           note=_block_note(columns, y_released, bounded, y_bounded, centring, b, n))
    hist_c, hist_s = _release_histograms(reduce, n, columns, y_released, centring, block, b, rng)
    ranges = [_range(column_ranges, j) for j in columns] + ([response_range] if y_released else [])
    c_all, s_all = _within_ranges(hist_c, hist_s, ranges)
    names: list[int | str] = [*columns, *(["response"] if y_released else [])]
    fallback = [i for i, iv in enumerate(ranges) if iv is None or not _bounded(iv)]
    notes += _notes(names, centring, n // b, b, mu_round,
                    [names[i] for i in fallback if math.isnan(s_all[i]) and names[i] != "response"],
                    [names[i] for i in fallback if math.isnan(c_all[i])], label)
    passes = 1
    if bounded or y_bounded:
        gauss = [i for i, iv in enumerate(ranges) if iv is not None and _bounded(iv)]
        passes += _release_bounded(reduce, n, gauss, ranges, names, centring, block, c_all, s_all, rng, notes,
                                   moments_first, label)
    for i, j in enumerate(columns):  # no range and no release: the public fallback centre 0, scale 1
        centre[j] = 0.0 if math.isnan(c_all[i]) else c_all[i]
        scale[j] = 1.0 if math.isnan(s_all[i]) else s_all[i]
    if y_released:
        y_centre = 0.0 if math.isnan(c_all[-1]) else float(c_all[-1])
    return Standardisation(centre, scale, intercept_index, float(y_centre), passes), notes


def _within_ranges(centres: np.ndarray, scales: np.ndarray,
                   ranges: list[tuple[float, float] | None]) -> tuple[np.ndarray, np.ndarray]:
    """Released centres moved into their declared ranges and scales capped at the half-widths (values in [lo, hi]
    have spread at most (hi - lo) / 2): post-processing with public numbers; NaN (not cleared) stays NaN."""
    c, s = centres.copy(), scales.copy()
    for i, iv in enumerate(ranges):
        if iv is not None and _bounded(iv):
            lo, hi = iv
            c[i] = c[i] if math.isnan(c[i]) else min(max(c[i], lo), hi)
            s[i] = s[i] if math.isnan(s[i]) else min(s[i], (hi - lo) / 2.0)
    return c, s


def _block_note(columns: list[int], y_released: bool, bounded: list[int], y_bounded: bool, centring: bool, b: int,
                n: int) -> str:
    """The ledger note of the preconditioning's block (public facts)."""
    note = (f"{len(columns) + int(y_released)} variables, {n // b} groups of {b} rows: per variable a histogram of "
            "the group variances" + (" and one of the group means / scale" if centring else "")
            + ", sensitivity sqrt 2 each")
    rounds_c, rounds_s = _gaussian_rounds(centring, bounded, y_bounded)
    if rounds_c or rounds_s:
        note += ("; for the variables with declared ranges: "
                 + ", ".join([*(["a vector of clipped means"] if rounds_c else []),
                              *(["a vector of clipped mean absolute deviations"] if rounds_s else [])])
                 + " (sensitivity sqrt(p) / n in units of each range, p such variables)")
    return note


def _release_histograms(reduce: Callable[[Any, Any], Any], n: int, columns: list[int], response: bool,
                        centring: bool, block: GaussianBlock, b: int,
                        rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The histogram releases (module docstring, steps 1 and 2) of ``columns`` and (last) the response: per
    variable the released centre (0 without an intercept) and scale, NaN where the histogram did not clear."""
    means, variances = _group_statistics(reduce, n, columns, response, b, rng)
    rel = _Releases(block, means, variances)
    released_scale = _release_scales(rel, rng)
    used_scale = np.where(np.isnan(released_scale), 1.0, released_scale)
    released_centre = _release_centres(rel, used_scale, rng) if centring else np.zeros(len(columns) + int(response))
    return released_centre, released_scale


#: sd / mean absolute deviation of a normal variable: E|X - mean| = sd sqrt(2 / pi)
_MAD_TO_SD = math.sqrt(math.pi / 2.0)
#: A declared column's released mean absolute deviation replaces its cleared histogram's scale when it is at least
#: ``_MAD_PRECISION`` of its noise sds (relative noise sd at most 1/4; the histogram's mode reads a scale within a
#: factor 2 at best) or differs from the histogram's reading by more than ``_MAD_AGREEMENT`` noise sds (the mode
#: of the group variances of an integer-valued column reads its step, not its spread: issue 17).
_MAD_PRECISION, _MAD_AGREEMENT = 4.0, 2.0
#: A declared variable's released clipped mean replaces its cleared histogram's centre when its noise sd is at most
#: 1 / ``_CENTRE_PRECISION`` of the histogram's scale (the histogram reads the mode of the group means within about
#: a scale / 8) or it differs from the histogram's centre by more than ``_MAD_AGREEMENT`` noise sds.
_CENTRE_PRECISION = 8.0


def _release_bounded(reduce: Callable[[Any, Any], Any], n: int, gauss: list[int],
                     ranges: list[tuple[float, float] | None], names: list[int | str], centring: bool,
                     block: GaussianBlock, centres: np.ndarray, scales: np.ndarray, rng: np.random.Generator,
                     notes: list[str], moments_first: bool, label: Callable[[int | str], str] = str) -> int:
    """The clipped Gaussian releases of the variables with declared ranges (positions ``gauss`` among the released
    variables; module docstring, "Declared ranges"): sets their ``centres`` and ``scales`` in place where the
    histograms did not clear (NaN) or where a release is precise or at odds with the histogram's reading, adds
    notes, and returns the passes made.

    In units u = (clip(v) - lo) / (hi - lo) of each range: the vector of means of u over all these variables
    (with an intercept), then the vector of mean absolute deviations |u - c_u| about their centres so chosen
    (about the u of 0 without an intercept) over all these columns, each one Gaussian release of L2 sensitivity
    sqrt(p) / n.  A mean replaces a cleared centre when its noise sd is at most 1 / ``_CENTRE_PRECISION`` of the
    histogram's scale or it differs from that centre by more than ``_MAD_AGREEMENT`` noise sds; a deviation
    replaces a cleared scale when it is at least ``_MAD_PRECISION`` noise sds or differs from the histogram's
    reading (in its units) by more than ``_MAD_AGREEMENT`` noise sds.  The scale is sqrt(pi / 2) (hi - lo) times
    the released deviation (the sd of a normal variable), at least that release's noise sd and at most the
    half-width (max(|lo|, |hi|) without an intercept).  The choices read released values only (post-processing).
    """
    lo = np.array([ranges[i][0] if ranges[i] is not None else 0.0 for i in range(len(ranges))])  # type: ignore[index]
    width = np.array([ranges[i][1] - ranges[i][0] if ranges[i] is not None else 1.0  # type: ignore[index]
                      for i in range(len(ranges))])
    cols = np.array([j for j in names if j != "response"], dtype=np.intp)
    passes = 0
    # every declared variable's clipped mean is released (the round is reserved and charged whenever one exists):
    # it replaces a cleared histogram's centre (the mode of the group means, not their mean: a discrete or skewed
    # variable's mode can sit a scale away) when it is precise or at odds with it, and is the centre where the
    # histograms did not clear
    need_c = [i for i in gauss if centring and (moments_first or math.isnan(centres[i]))]
    fallback_c = [i for i in need_c if math.isnan(centres[i])]
    replaced_c: list[int | str] = []
    if need_c:
        sums = reduce(BoundedSumsPass(cols, names[-1] == "response", lo, width), add_arrays)
        sens = math.sqrt(len(need_c)) / n
        noisy = np.asarray(block.release(sums[need_c] / n, l2_sensitivity=sens, rng=rng), dtype=float)
        sd_c = sens / block.mu_round  # the release's noise sd (units of each range)
        at = np.asarray(need_c, dtype=np.intp)
        cleared = ~(np.isnan(centres[at]) | np.isnan(scales[at]))
        h = (centres[at] - lo[at]) / width[at]  # the histogram's centre, in the same units
        precise = _CENTRE_PRECISION * sd_c * width[at] <= scales[at]
        # an imprecise mean that agrees with the histogram keeps the histogram's centre
        use = ~(cleared & ~precise & (np.abs(noisy - h) <= _MAD_AGREEMENT * sd_c))
        replaced_c = [names[i] for i in at[cleared & use]]
        centres[at[use]] = lo[at[use]] + width[at[use]] * np.clip(noisy[use], 0.0, 1.0)  # inside the range
        passes += 1
    # every declared column's deviation is released (the round is reserved and charged whenever one exists): it
    # replaces a cleared histogram's scale when it is precise (below), and is the scale where none cleared
    need_s = [i for i in gauss if names[i] != "response" and (moments_first or math.isnan(scales[i]))]
    fallback_s = [i for i in need_s if math.isnan(scales[i])]
    replaced: list[int | str] = []
    if need_s:
        about = (centres - lo) / width if centring else -lo / width  # the u of the centre (of 0 without one)
        q = len(cols)
        sums = reduce(BoundedSumsPass(cols, False, lo[:q], width[:q], centre=np.clip(about[:q], 0.0, 1.0)
                                      if centring else about[:q]), add_arrays)
        sens = math.sqrt(len(need_s)) / n
        mad = np.asarray(block.release(sums[need_s] / n, l2_sensitivity=sens, rng=rng), dtype=float)
        floor = sens / block.mu_round  # the release's noise sd: a deviation below it is noise
        at = np.asarray(need_s, dtype=np.intp)
        caps = np.array([_public_map(ranges[i], centring)[1] for i in need_s])
        cleared = ~np.isnan(scales[at])
        h = scales[at] / (_MAD_TO_SD * width[at])  # the histogram's reading, in units of the deviation
        # an imprecise deviation that agrees with the histogram keeps the histogram's scale
        use = ~(cleared & (mad < _MAD_PRECISION * floor) & (np.abs(mad - h) <= _MAD_AGREEMENT * floor))
        replaced = [names[i] for i in at[cleared & use]]
        scales[at[use]] = np.minimum(_MAD_TO_SD * width[at[use]] * np.maximum(mad[use], floor), caps[use])
        passes += 1
    if fallback_c or fallback_s:
        what = " and ".join([*([f"centres of {_named(label, [names[i] for i in fallback_c])}"] if fallback_c else []),
                             *([f"scales of {_named(label, [names[i] for i in fallback_s])}"] if fallback_s else [])])
        notes.append(f"declared ranges (the privacy domain, not a scale): the histograms did not clear for the "
                     f"{what}; released instead as clipped Gaussian means (scales: mean absolute deviations) of the "
                     f"values clipped to their ranges (mu={block.mu_round:.4g}-GDP per release)")
    if replaced_c:
        notes.append(f"declared ranges: the centres of {_named(label, replaced_c)} are their released clipped means "
                     f"(noise sd at most 1/{_CENTRE_PRECISION:g} of the scale, or more than {_MAD_AGREEMENT:g} noise "
                     "sds from the histogram's reading), not the modes of their group-mean histograms")
    if replaced:
        notes.append(f"declared ranges: the scales of {_named(label, replaced)} are their released clipped mean "
                     f"absolute deviations (at least {_MAD_PRECISION:g} noise sds, or more than {_MAD_AGREEMENT:g} "
                     "from the histogram's reading), not the modes of their group-variance histograms")
    return passes


def _named(label: Callable[[int | str], str], variables: Sequence[int | str]) -> str:
    """The variables' public names, comma-separated (``label`` maps a design column's index or ``"response"``)."""
    return ", ".join(label(v) for v in variables)


def _notes(names: list[int | str], centring: bool, k: int, b: int, mu_round: float,
           fallback_scale: list[int | str], fallback_centre: list[int | str],
           label: Callable[[int | str], str] = str) -> list[str]:
    """The report lines of the histogram releases of the variables ``names`` (public facts and which variables
    without a range fell back), naming each by ``label``."""
    notes = [f"variables {_named(label, names)}: private {'centres and ' if centring else ''}scales released from "
             f"{k} groups of {b} rows (histograms, mu={mu_round:.4g}-GDP each, composed with the rest of the fit); the "
             "fit ran on (x - centre) / scale and its coefficients were mapped back"]
    if fallback_scale:
        notes.append(f"columns {_named(label, fallback_scale)}: the scale histogram did not clear its noise (too few "
                     "rows for this budget, or an almost constant column): the public fallback, scale 1")
    if fallback_centre:
        notes.append(f"variables {_named(label, fallback_centre)}: the centre histogram did not clear its noise: the "
                     "public fallback, centre 0")
    return notes
