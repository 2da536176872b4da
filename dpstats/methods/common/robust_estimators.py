"""Private scale estimators shared by DP-RobGD and DP-AMBSSGD.

Liu, Jain, Kong, Oh & Suggala (2023), "Label robust and differentially
private linear regression" (arXiv 2301.13273), build their thresholds from
*private histograms over statistics of a partitioned data set*: split the
rows into k groups, compute one statistic per group, and privately report the
most populated bin of a geometric histogram of the k statistics (their
Private Norm Estimator, Alg. 3, and Distance Estimator, Alg. 2; the histogram
is their Lemma B.2).  This module implements that idea with a Gaussian
histogram over a fixed, public, finite set of bins, which is exactly
mu-GDP and needs no delta for empty bins:

* bins are geometric, [2^(e0 + j/q), 2^(e0 + (j+1)/q)) for j = 0..B-1 with
  the public exponent range [e0, e1) = [-64, 64) and q bins per octave;
  statistics outside the range are clamped into the end bins, so each group
  lands in exactly one bin;
* under replace-one neighbours a replaced row changes the statistic of the
  one group that holds it, so one count falls by 1 and another rises by 1:
  the count vector has L2 sensitivity sqrt(2) (or 0);
* a statistic that overflowed (inf, or NaN from inf - inf: rows near the
  largest double) goes to the last bin, a fixed public rule, so a group
  still lands in exactly one bin whatever its rows;
* adding N(0, (sqrt(2)/mu)^2) to *every* bin count releases the noisy
  histogram under mu-GDP (Dong, Roth & Su 2022, Thm 2.7); the reported mode
  (argmax) and its bin edge are post-processing;
* so are the descent methods' readout (:func:`reliable_mode`: the mode is
  used only when it stands out from the noise of the empty bins; the norm
  estimate falls back to a public value when it does not) and the
  averaging of several releases of the same histogram while the iterate
  holds (:class:`PooledHistogram`).  A threshold read from an uncleared
  mode is arbitrary and, through the gradient noise it scales, can throw
  the iterate arbitrarily far.

Where the paper uses a stability-based histogram (Laplace noise on non-empty
bins, suppression below a threshold, (epsilon, delta)-DP), the fixed finite
grid lets the same step be a plain Gaussian mechanism that composes exactly
with the Gaussian gradient rounds in GDP.  The price is a max over B noisy
empty bins instead of a threshold, i.e. a sqrt(2 ln B) (about 3 to 3.7 noise
sds for B = 128 to 512) instead of a log(1/delta)/epsilon margin: the same
order.

The spectrum estimator (:func:`release_spectrum`) is this package's addition,
used to set the step size eta ~ 1/lambda_max(Sigma) and the number of rounds
T ~ kappa log n that the paper's analysis prescribes (Liu et al., Thm 3 and
the discussion of ||eta Sigma|| <= 1) from private quantities instead of the
unknown truth.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpstats.methods.common.extremes import QUIET, divide_by_norms, residuals, row_norms, square
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import GaussianBlock, gaussian_mechanism_mu

__all__ = [
    "EXPONENT_RANGE", "HISTOGRAM_SENSITIVITY", "LogHistogram", "NORM_GRID", "DISTANCE_GRID", "histogram_counts",
    "release_histogram", "release_log_mode", "RELIABLE_WIDTHS", "reliable_mode", "PooledHistogram", "clearance",
    "private_log_mode", "group_means", "slot_means", "NormEstimate", "norm_fallback", "private_norm_from_means",
    "private_norm_estimate",
    "distance_counts", "private_distance_estimate", "norm_group_size", "distance_group_size", "norm_group_sums",
    "SpectrumEstimate", "clipped_gram", "release_spectrum", "clip_factors", "modal_fraction", "max_histogram_releases",
    "max_disjoint_histograms", "separately_clipped_gradient",
]

#: Public exponent range of every histogram: statistics in [2^-64, 2^64) are resolved.
EXPONENT_RANGE: tuple[int, int] = (-64, 64)
#: L2 sensitivity of a vector of group counts under replace-one neighbours.
HISTOGRAM_SENSITIVITY: float = math.sqrt(2.0)
#: Noise sds by which the mode of the norm histogram must clear the noise (sets the number of groups).
_NORM_MARGIN: float = 40.0
#: Noise sds by which a distance histogram's modal count must exceed zero: the largest of B = 128 noisy
#: empty bins is about sqrt(2 ln B) = 3.1 sds, plus 3 sds for the noise on the mode itself.
_MODE_MARGIN: float = 6.0
#: Sds above the expected largest noisy empty bin by which a released mode must clear to be trusted
#: (:func:`clearance`, used by the private preconditioning and :func:`reliable_mode`).
_CLEAR_MARGIN: float = 2.0


@dataclass(frozen=True)
class LogHistogram:
    """A public grid of geometric bins: q bins per octave over ``EXPONENT_RANGE``."""

    bins_per_octave: int

    @property
    def size(self) -> int:
        lo, hi = EXPONENT_RANGE
        return (hi - lo) * self.bins_per_octave

    def index(self, values: np.ndarray) -> np.ndarray:
        """Bin of each value (values <= 0 or below the range go to bin 0, above it, inf and NaN to the last bin)."""
        lo, _ = EXPONENT_RANGE
        v = np.asarray(values, dtype=float)
        with np.errstate(**QUIET):
            pos = np.floor((np.log2(np.where(v > 0, v, 0.0)) - lo) * self.bins_per_octave)
        # log2(0) = -inf -> bin 0; a statistic that overflowed (inf, or NaN from inf - inf) -> the last bin, the
        # bin of every value at or above 2^64: a fixed public rule, so each group still lands in exactly one bin
        pos = np.where(np.isfinite(pos), pos, np.where((v > 0) | np.isnan(v), self.size - 1, 0))
        return np.clip(pos, 0, self.size - 1).astype(np.intp)

    def upper_edge(self, j: int) -> float:
        """Right end 2^(e0 + (j+1)/q) of bin j."""
        return float(2.0 ** (EXPONENT_RANGE[0] + (j + 1) / self.bins_per_octave))


#: The norm estimator's grid (4 bins per octave: its group means concentrate) and the distance estimator's (ratio 2).
NORM_GRID = LogHistogram(4)
DISTANCE_GRID = LogHistogram(1)


def histogram_counts(stats: np.ndarray, grid: LogHistogram) -> np.ndarray:
    """Counts (int64) of ``stats`` in the bins of ``grid``: a sum over groups, so it adds up over chunks."""
    return np.bincount(grid.index(stats), minlength=grid.size).astype(np.int64)


def release_histogram(counts: np.ndarray, grid: LogHistogram, *, block: GaussianBlock,
                      rng: np.random.Generator) -> np.ndarray:
    """The noisy ``counts`` (one release of ``block``).

    Privacy: each group contributes to one count, so the count vector has
    replace-one L2 sensitivity sqrt(2) whenever a replaced row changes one
    group's statistic; ``block`` adds Gaussian noise to all ``grid.size``
    counts (one release of the block, charged before this call); whatever is
    read from the noisy counts (an argmax, :class:`PooledHistogram`) is
    post-processing (Liu et al. 2023, Lemma B.2, in Gaussian form).
    """
    if counts.shape != (grid.size,):
        raise ValueError("the counts do not match the grid")
    noisy = block.release(np.asarray(counts, dtype=float), l2_sensitivity=HISTOGRAM_SENSITIVITY, rng=rng)
    return np.asarray(noisy, dtype=float)


def release_log_mode(counts: np.ndarray, grid: LogHistogram, *, block: GaussianBlock,
                     rng: np.random.Generator, skip_zero_bin: bool = False) -> int:
    """Index of the most populated bin of the noisy ``counts`` (:func:`release_histogram`).

    With ``skip_zero_bin`` the argmax is over bins 1.. (bin 0 holds the
    statistics below 2^-63.75, in practice exact zeros: a zero-inflated
    response makes most residuals exactly 0 at w = 0, and a threshold from
    that bin would clip every gradient to nothing, so descent never starts;
    post-processing of the same release).
    """
    noisy = release_histogram(counts, grid, block=block, rng=rng)
    return int(skip_zero_bin) + int(np.argmax(noisy[int(skip_zero_bin):]))


def clearance(bins: int, mu_round: float) -> float:
    """Count a noisy modal count must exceed to be trusted: (sqrt(2 ln B) + ``_CLEAR_MARGIN``) noise sds, the
    expected largest of B noisy empty bins plus a margin (a public function of the grid and mu)."""
    return (math.sqrt(2.0 * math.log(bins)) + _CLEAR_MARGIN) * HISTOGRAM_SENSITIVITY / mu_round


#: Widths (in bins) of the windows :func:`reliable_mode` tries, narrowest first: a window of w ratio-2 bins places
#: the residual scale within a factor 2^w.
RELIABLE_WIDTHS: tuple[int, ...] = (1, 2, 4)


def reliable_mode(noisy: np.ndarray, mu: float, start: int = 0,
                  widths: tuple[int, ...] = RELIABLE_WIDTHS) -> int | None:
    """The modal bin of noisy histogram counts when it stands out from the noise, else None.

    ``noisy`` are counts with independent N(0, (sqrt(2)/mu)^2) noise on
    every bin (a release of GDP parameter mu, or the mean of k releases of
    parameter mu / sqrt(k)); bins before ``start`` are ignored.  For each
    width w of ``widths`` in turn, the window of w consecutive bins with
    the largest noisy sum is accepted when that sum exceeds
    :func:`clearance` at noise sd sqrt(w) sqrt(2)/mu (the expected largest
    of at most B windows of empty bins, plus 2 sds); the answer is the bin
    with the largest noisy count in that window (for w = 1, the argmax).  A
    mode that clears no width may be the largest of the empty bins' noises,
    an arbitrary bin of the grid, and a scale read from it arbitrarily large
    or small (a residual threshold scales the gradient noise, which then
    throws the iterate far away; a covariate norm sets the step size).  A
    function of the noisy counts and public mu only (post-processing).
    ``widths=(1,)`` accepts a single bin only.
    """
    v = np.asarray(noisy, dtype=float)[start:]
    cum = np.concatenate([[0.0], np.cumsum(v)])
    for w in widths:
        if w > v.size:
            break
        sums = cum[w:] - cum[:-w]
        i = int(np.argmax(sums))
        if sums[i] > clearance(noisy.size, mu / math.sqrt(w)):
            return start + i + int(np.argmax(v[i:i + w]))
    return None


@dataclass
class PooledHistogram:
    """Noisy releases of histograms of one statistic, averaged until :func:`reliable_mode` accepts a bin.

    A caller whose iterate has not moved adds each new release at it.  In
    DP-RobGD the counts are then the same function of the same rows (same
    iterate, same groups), so the mean of k releases of GDP parameter
    ``mu_round`` is those counts with noise sd sqrt(2)/(mu_round sqrt(k)); in
    DP-AMBSSGD they come from disjoint batches, and the mean is the batches'
    mean histogram with that noise.  Either way the mean is post-processing
    of released values and spends nothing more; it lets a histogram whose
    mode cannot clear the noise of one release (a spread-out residual
    distribution, such as a skewed, zero-inflated response at w = 0) clear
    it after a few.
    """

    mu_round: float
    start: int = 0
    total: np.ndarray | None = None
    releases: int = 0

    def add(self, noisy: np.ndarray) -> int | None:
        """Pool one more release; the reliable mode of the mean so far (None when it has none yet)."""
        self.total = np.array(noisy, dtype=float) if self.total is None else self.total + noisy
        self.releases += 1
        return reliable_mode(self.total / self.releases, self.mu_round * math.sqrt(self.releases), self.start)


def private_log_mode(stats: np.ndarray, grid: LogHistogram, *, block: GaussianBlock,
                     rng: np.random.Generator) -> float:
    """Upper edge of the most populated bin of a noisy geometric histogram of per-group ``stats``
    (:func:`release_log_mode` of their counts)."""
    return grid.upper_edge(release_log_mode(histogram_counts(stats, grid), grid, block=block, rng=rng))


def group_means(values: np.ndarray, group_size: int) -> np.ndarray:
    """Means of consecutive groups of ``group_size`` values (the incomplete last group is dropped).

    The rows are in a public pseudo-random order, so consecutive groups are
    random groups; each row belongs to at most one group.
    """
    k = values.shape[0] // group_size
    if k < 1:
        raise ValueError("fewer rows than one group")
    return values[: k * group_size].reshape(k, group_size).mean(axis=1)


def slot_means(values: np.ndarray) -> np.ndarray:
    """Row means of a (groups, b) array, each summed slot by slot from the left.

    The order of the additions is fixed per group, so a group's mean is the
    same double whether it was formed in memory or from rows of several
    chunks (numpy's own reductions may change order with the array's shape).
    """
    total = values[:, 0].copy()
    for j in range(1, values.shape[1]):
        total += values[:, j]
    return total / values.shape[1]


def norm_group_size(rows: int, mu: float) -> int:
    """Group size of the norm estimator, from public n and mu only.

    The noisy counts have sd s = sqrt(2)/mu.  Group means of ||x||^2
    concentrate (covariates are never corrupted), so the groups fall into one
    or two fine bins; with k >= 40 s groups the mode clears the largest of
    B <= 512 noisy empty bins (about 3.7 s) with a wide margin.  Groups are
    made as large as that allows, which concentrates the statistic further.
    """
    s = HISTOGRAM_SENSITIVITY / mu
    k_target = max(1, math.ceil(_NORM_MARGIN * s))
    return max(1, rows // k_target)


def distance_group_size(max_corruption: float) -> int:
    """Group size b of the distance estimator from the public bound on the corrupted fraction.

    A group is corrupted if any of its b labels is; that happens for at most
    a fraction 1 - (1 - a)^b <= a b of groups.  With b = floor(0.1 / a) (at
    least 1, at most 10) the corrupted groups are at most 10% of all groups,
    fewer than the clean groups in the modal bin (more than 20% for
    sub-Gaussian residuals and bins of ratio 2), so an adversary who puts all
    corrupted groups into one bin cannot move the mode.  Without corruption
    b = 10 concentrates the group means.
    """
    if max_corruption <= 0:
        return 10
    return int(min(10, max(1, math.floor(0.1 / max_corruption))))


@dataclass(frozen=True)
class NormEstimate:
    """Gamma ~ Tr(Sigma) as the descent methods use it: the released estimate, or the public fallback.

    ``released`` is False when the norm histogram's mode did not clear its noise (:func:`reliable_mode`) and
    ``gamma`` is the caller's public fallback; a function of released values and public facts only.
    """

    gamma: float
    released: bool


def norm_fallback(columns: int) -> float:
    """Public Gamma used when the norm histogram does not clear: the number of design columns.

    After the private preconditioning every non-intercept column is z = (x - c) / s with a released centre and
    scale, so E z^2 is about 1, and the intercept column is 1: Tr(Sigma) = E||z||^2 is about d.  Without the
    preconditioning it is the same value, read as covariates on unit scale (the normalisation of Liu et al.'s
    analysis); the covariate tail then leaves a factor of about 30 of headroom in ||x||^2 before clipping.
    """
    return float(max(1, int(columns)))


def private_norm_from_means(means: np.ndarray, *, block: GaussianBlock, rng: np.random.Generator,
                            fallback: float) -> NormEstimate:
    """Private estimate Gamma of Tr(Sigma) = E||x||^2 from the group means of ||x_i||^2 (Liu et al. 2023,
    Private Norm Estimator, Alg. 3), with a clearance check.

    One release of ``block``: the noisy histogram of the means on ``NORM_GRID`` (4 bins per octave, finer
    than the paper's factor-2 bins, which is safe because the group means concentrate).  Gamma is the upper
    edge of its :func:`reliable_mode` (a bin, or failing that a window of 2 or 4 adjacent bins, whose noisy
    count clears the expected largest of the grid's noisy empty bins by 2 sds).  When nothing clears, Gamma
    is ``fallback`` (public): with few groups (groups of one row at small n mu) the modal count may be below
    the noise, and the argmax of the noisy counts is then the largest of the empty bins' noises, an arbitrary
    bin of [2^-64, 2^64); a Gamma of 1e-16 set a step size of 1e15 and threw the fit to R^2 = -1e30.
    mu-GDP with the block's mu_round when each row is in at most one group; the readout and the fallback are
    post-processing; no bound needed.
    """
    noisy = release_histogram(histogram_counts(means, NORM_GRID), NORM_GRID, block=block, rng=rng)
    j = reliable_mode(noisy, block.mu_round)
    if j is None:
        return NormEstimate(float(fallback), False)
    return NormEstimate(NORM_GRID.upper_edge(j), True)


def private_norm_estimate(X: np.ndarray, *, group_size: int, block: GaussianBlock,
                          rng: np.random.Generator) -> NormEstimate:
    """:func:`private_norm_from_means` of consecutive groups of ``group_size`` rows of ``X`` (fallback: the
    number of columns, :func:`norm_fallback`)."""
    with np.errstate(**QUIET):  # a square that overflows is inf: its group lands in the last bin
        squares = np.einsum("ij,ij->i", X, X)
    return private_norm_from_means(group_means(squares, group_size), block=block, rng=rng,
                                   fallback=norm_fallback(X.shape[1]))


def distance_counts(X: np.ndarray, y: np.ndarray, w: np.ndarray, group_size: int) -> np.ndarray:
    """``DISTANCE_GRID`` counts of the group means of (y - w^T x)^2 over consecutive groups of ``group_size``
    rows (the rows of an incomplete last group are left out), each mean formed by :func:`slot_means`.  The
    residuals come from :func:`~dpstats.methods.common.extremes.residuals` (never NaN); a square or a mean that
    overflows is inf, and its group lands in the last bin, where every mean at or above 2^64 goes."""
    r = residuals(X, y, w)  # X w - y: its square is that of y - X w, bit for bit
    k = r.shape[0] // group_size
    if k < 1:
        raise ValueError("fewer rows than one group")
    with np.errstate(**QUIET):
        return histogram_counts(slot_means((r[: k * group_size] ** 2).reshape(k, group_size)), DISTANCE_GRID)


def private_distance_estimate(X: np.ndarray, y: np.ndarray, w: np.ndarray, *, group_size: int,
                              block: GaussianBlock, rng: np.random.Generator) -> float:
    """Private, robust estimate gamma of E(y - w^T x)^2 = ||w - w*||_Sigma^2 + sigma^2.

    Liu et al. (2023), Distance Estimator (Alg. 2): group means of squared
    residuals over small groups, so that most groups hold no corrupted label
    (:func:`distance_counts`), and the upper edge of the modal bin of a
    private histogram with bins of ratio 2.  ``w`` is a released iterate
    (public), so the statistic is a function of the rows only; one release
    of ``block``.
    """
    counts = distance_counts(X, y, w, group_size)
    return DISTANCE_GRID.upper_edge(release_log_mode(counts, DISTANCE_GRID, block=block, rng=rng))


def norm_group_sums(X: np.ndarray, groups: np.ndarray, k: int) -> np.ndarray:
    """Sums of ||x_i||^2 per group 0..k-1 (rows of group -1 are left out): k numbers that add up over chunks.

    A square or a sum that overflows is inf (never NaN: every term is >= 0), and the group's mean then lands
    in the last bin of the norm histogram, where it belongs."""
    keep = groups >= 0
    Xk = X[keep]
    with np.errstate(**QUIET):
        return np.bincount(groups[keep], weights=np.einsum("ij,ij->i", Xk, Xk), minlength=k).astype(float)


def clip_factors(X: np.ndarray, bound: float) -> np.ndarray:
    """c_i = min(1, bound / ||x_i||), so that c_i x_i = clip_bound(x_i) (norm clipping).

    The norms and quotients are overflow-safe (:func:`~dpstats.methods.common.extremes.row_norms`,
    :func:`~dpstats.methods.common.extremes.divide_by_norms`): a row with entries near the largest double gets the
    factor that scales it to norm ``bound`` (finite, perhaps subnormal), not 0 or NaN; ordinary rows get
    bound / ||x_i|| bit for bit.  Each factor depends on its own row only, so ||c_i x_i|| <= bound holds row by
    row (up to rounding) whatever the data."""
    return np.minimum(1.0, divide_by_norms(bound, X, row_norms(X)))


@dataclass(frozen=True)
class SpectrumEstimate:
    """Private extreme eigenvalues of the clipped second-moment matrix, per row.

    ``lam_max_upper`` and ``lam_min_lower`` are the released values moved by
    ``z`` noise sds outwards (upper and lower confidence bounds); ``kappa`` is
    their ratio, capped by the caller.
    """

    lam_max: float
    lam_min: float
    noise_sd: float
    lam_max_upper: float
    lam_min_lower: float


def clipped_gram(X: np.ndarray, bound: float) -> np.ndarray:
    """sum_i clip(x_i) clip(x_i)^T over the rows of ``X`` (norm clipping to ``bound``): adds up over chunks."""
    with np.errstate(**QUIET):
        Xc = X * clip_factors(X, bound)[:, None]
        return Xc.T @ Xc


def release_spectrum(gram: np.ndarray, n_rows: int, bound: float, *, mu: float, rng: np.random.Generator,
                     ledger: PrivacyLedger, z: float = 3.0) -> SpectrumEstimate:
    """Release lambda_max and lambda_min of ``gram`` = :func:`clipped_gram` of ``n_rows`` rows (mu-GDP).

    Sensitivity: a replaced row changes the matrix by A = c x x^T - c' x' x'^T
    with ||c x||, ||c' x'|| <= ``bound``, so ||A||_F^2 <= 2 bound^4; by the
    Hoffman-Wielandt inequality the sorted eigenvalue vector moves by at most
    ||A||_F in L2, hence the pair (lambda_max, lambda_min) has L2 sensitivity
    sqrt(2) bound^2.  Dividing by the public row count is post-processing.
    The upper bound on lambda_max is also capped by bound^2 (every clipped
    row has norm <= bound), which is public.
    """
    eig = np.linalg.eigvalsh(gram)
    bound2 = square(bound)  # inf (not an OverflowError) for an absurd covariate_tail: refused when released
    sens = math.sqrt(2.0) * bound2
    noisy = np.asarray(gaussian_mechanism_mu(np.array([eig[-1], eig[0]]), l2_sensitivity=sens, mu=mu, rng=rng,
                                             ledger=ledger,
                                             name="lambda_max, lambda_min of the clipped second-moment matrix"))
    sd = sens / mu / n_rows
    lam_max, lam_min = float(noisy[0]) / n_rows, float(noisy[1]) / n_rows
    upper = lam_max + z * sd
    if not (0.0 < upper < bound2):
        upper = bound2
    lower = lam_min - z * sd
    return SpectrumEstimate(lam_max=lam_max, lam_min=lam_min, noise_sd=sd, lam_max_upper=upper,
                            lam_min_lower=lower)


@functools.lru_cache(maxsize=64)
def modal_fraction(group_size: int) -> float:
    """Smallest share of groups in the modal bin of ratio-2 bins, for Gaussian residuals.

    The group mean of b squared N(0, v) residuals is v Gamma(b/2, 2/b); the
    share of the most probable bin [2^(j+s), 2^(j+1+s)) is minimised over the
    alignment s of the grid (0.16 for b = 1, 0.24 for b = 2, 0.43 for b = 10).
    A public design constant: it depends on b only.
    """
    g = stats.gamma(group_size / 2.0, scale=2.0 / group_size)
    shares = [float(np.max(np.diff(g.cdf(2.0 ** (np.arange(-40.0, 12.0) + s))))) for s in np.linspace(0, 1, 20,
                                                                                                      endpoint=False)]
    return min(shares)


def max_histogram_releases(groups: int, group_size: int, mu_total: float, corrupted_share: float) -> int:
    """Largest number of distance histograms that ``mu_total`` (GDP, composed) can pay for usefully.

    With T histograms each gets mu_total/sqrt(T), i.e. count noise sd
    s = sqrt(2 T)/mu_total.  The modal bin holds at least
    groups * (1 - corrupted_share) * modal_fraction(b) clean groups; it must
    exceed ``_MODE_MARGIN`` sds, or the argmax of the noisy histogram is an
    arbitrary bin and the residual threshold is arbitrary.  Solving for T
    gives the cap; a function of public quantities only (n, the split, the
    budget, the declared corruption bound).
    """
    mode = groups * (1.0 - corrupted_share) * modal_fraction(group_size)
    return int(math.floor((mode * mu_total / (_MODE_MARGIN * HISTOGRAM_SENSITIVITY)) ** 2))


def max_disjoint_histograms(rows: int, mu: float) -> int:
    """Most histograms (groups of one row, each mu-GDP on its own rows) that ``rows`` rows can feed usefully.

    With T disjoint histograms each has rows/T groups, of which a share
    modal_fraction(1) falls in the modal bin; that must exceed
    ``_MODE_MARGIN`` noise sds sqrt(2)/mu.  Public: depends on rows and mu.
    """
    return int(math.floor(rows * modal_fraction(1) * mu / (_MODE_MARGIN * HISTOGRAM_SENSITIVITY)))


def separately_clipped_gradient(X: np.ndarray, y: np.ndarray, w: np.ndarray, c: np.ndarray,
                                theta: float) -> np.ndarray:
    """(1/m) sum_i clip_Theta(x_i) clip_theta(w^T x_i - y_i), with c = clip_factors(X, Theta).

    The covariate and the residual are clipped separately (Liu et al. 2023,
    Alg. 1 line 6, Sec. 3.1), so each term has norm <= Theta theta and the
    mean has replace-one L2 sensitivity 2 Theta theta / m.  One pair of
    matrix-vector products over the rows, no per-row Python.  The residuals
    come from :func:`~dpstats.methods.common.extremes.residuals` (never NaN; +-inf
    clips to +-theta), so every term is finite and its bound holds row by row
    whatever the data.
    """
    r = residuals(X, y, w)
    np.clip(r, -theta, theta, out=r)
    with np.errstate(**QUIET):
        r *= c
        grad = X.T @ r
    grad /= X.shape[0]
    return grad
