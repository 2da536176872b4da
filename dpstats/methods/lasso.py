"""DP-LASSO with Peeling (Cai, Wang & Zhang 2021, Algorithm 4), worst-case DP by default.

Sparse, possibly high-dimensional (d > n) linear regression.  The rows are
split at random into N0 disjoint parts (a public pseudo-random permutation,
:class:`~dpstats.methods.blocks.RowPermutation`); from beta^(0) = 0, iteration
t takes a gradient step of size eta on part t's least-squares loss, with rows
clipped to the declared bounds, labels truncated at T and residuals clipped to
[-R, R] (the derivative of a Huber-type loss), and then releases the top
s_hat coordinates of the result with Peeling
(:class:`~dpstats.privacy.peeling.PeelingBlock`); the last release is the fit.

Residual bound (changed from the paper's public noise level, which a user cannot know): by default R is
a private scale of the response, RESIDUAL_FACTOR times the RESIDUAL_QUANTILE-quantile of the differences
|f_T(y_a) - f_T(y_b)| over floor(n / 2) disjoint pairs of rows (a public pairing), read from one Laplace
histogram on a public geometric grid with the share ``residual_share`` (default 10%) of epsilon and kept
within the grid's range [2T 2^-RESIDUAL_OCTAVES, 2T]; about 0.8 standard deviations of y for a normal
response.  The Peeling noise is proportional to R, and the old public default 2T is the whole declared range
of y, tens of times the spread of real responses.

Step size (changed from the paper's 1/c_x^2, which diverges on ill-conditioned
designs): by default eta = 1/B~, where B~ is a private upper estimate of the
restricted curvature of the design, a restricted Gershgorin bound on the
largest eigenvalue of X^T X / n over 2 s_hat-sparse directions (the largest
sum of the 2 s_hat largest |entries| in a row of X^T X / n), released by the
Laplace mechanism with the share ``curvature_share`` (default 5%) of epsilon,
shifted up by its noise and kept within [c_x^2, L_2s] (L_2s: its public worst
case).  On isotropic designs this is close to the paper's step; on correlated
or uncentred ones it is the step that keeps the iterates from diverging.

Iterations (changed from the paper's N0 of order log n, Algorithm 4's input): by default N0 minimises
A min(1, 1/(rho N)) + c N^(3/2), the error left after N steps at the O(1/N) rate of gradient descent on a
convex loss (A = T/c_x, rho = -log(1 - eta c_x^2) capped at 1) plus the Peeling noise of one step, which grows
with the number of parts (c N: its scale times sqrt(s_hat)), accumulated over N steps along weakly curved
directions (sqrt(N)).  Real designs after the public rescaling (rare-level dummies and positive variables
nearly collinear with the intercept) have no restricted strong convexity: the iterates move slowly there and
the noise of every step adds up instead of contracting.  The rule gives the paper's 9 at its setting (d = 1000,
n = 5000, s = 5), one step on a small panel with 61 fixed effects (n = 440), 76 to 154 on 16000 rows and 10
columns at epsilon 0.5 to 3 (docs/proofs/lasso.md, "Iterations").

Dense fits (``sparsity=d``, at most PRECONDITION_COLUMNS columns, default step): when a public rule says a
released Gram matrix would be precise (its ridge r, about the spectral norm of the release's noise, at most
PRECONDITION_RIDGE L_2s) and the released R is at least PRECONDITION_RESIDUAL T, the share ``gram_share``
(default 20%) of epsilon releases X^T X / n by the Laplace mechanism instead of the curvature estimate, and the
steps are -P grad with P = H^-1, H the released matrix with its eigenvalues raised by r and capped at L_2s (a
Newton-type step: on ill-conditioned designs the scalar step contracts the error along weak directions by
their curvature over B~ only); lambda = 2 R max_j (|P| c)_j / floor(n / N0), N0 balances the start error's decay
along the released eigenvectors against the noise added per step, and the fit is the mean of the last half of
the released iterates (docs/proofs/lasso.md, "Dense fits").

Privacy (replace-one, worst case given the declared bounds): the residual-scale
release is epsilon_r-DP (a replaced row moves one pair's difference, so one
count: L1 sensitivity 2) and the curvature release epsilon_c-DP (its sensitivity
follows from the bounds); with residuals clipped to the released R every part's
gradient step has l_inf sensitivity lambda = 2 eta c_x R / floor(n / N0), so
each Peeling call is (epsilon - epsilon_r - epsilon_c, delta_p)-DP, and the N0
calls on disjoint parts compose in parallel; the fit is (epsilon, delta)-DP.  Opt-in
``guarantee="conditional"`` drops the residual clipping (Algorithm 4 as
written), DP only with high probability under the paper's model.
Proof: docs/proofs/lasso.md.

Passes over the rows: one for the residual scale, one for the curvature estimate (its columns in blocks
when d is large), then one per iteration that evaluates only that
iteration's part (:class:`PartGradient`); in-memory data are one chunk, and
chunked data give the same fit up to the order of floating-point additions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.common.extremes import quiet, residuals
from dpstats.methods.common.geometric_histogram import GeometricGrid, grid_counts, quantile_from_counts
from dpstats.methods.common.permutations import RowPermutation
from dpstats.methods.common.row_passes import add_arrays
from dpstats.methods.common.sufficient import STATISTICS_LIMIT, check_statistics_range
from dpstats.methods.spec import (
    FitContext,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
    TheoryInputs,
)
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import laplace_mechanism
from dpstats.privacy.peeling import check_peeling_scale, peeling_block, peeling_noise_multiplier
from dpstats.rates import CAI, SPARSE_MODEL, Rate, UpperRate, log_inv, needs_sparsity
from dpstats.rows.base import Rows, writable
from dpstats.validation import shown

__all__ = ["NO_STANDARD_ERRORS", "SPEC", "GramColumns", "LassoOptions", "PartGradient", "fit"]

NO_STANDARD_ERRORS = (
    "DP-LASSO selects its support with Peeling; the law of coefficients after a private selection is not "
    "Gaussian and no valid private post-selection interval is known, so none is reported"
)

_GUARANTEES = ("worst-case", "conditional")

#: one-sided failure probability of the curvature bound: B~ = noisy B + b log(1 / (2 CURVATURE_FAILURE)) is below
#: the true B with this probability (Laplace noise of scale b)
CURVATURE_FAILURE = 0.05

#: the residual scale is RESIDUAL_FACTOR times the RESIDUAL_QUANTILE-quantile of the pair differences |y_a - y_b|:
#: for a normal response 0.5 * 1.63 sd, about 0.8 sd (a quantile above 1/2, so that a response with many ties,
#: a 0/1 or a count, does not give a scale of 0)
RESIDUAL_QUANTILE = 0.75
RESIDUAL_FACTOR = 0.5
#: the residual-scale grid: ratio 2 over [2T 2^-RESIDUAL_OCTAVES, 2T] (smaller differences share the first bin)
RESIDUAL_OCTAVES = 16
#: the default N0 is searched over 1..min(n, ITERATION_SEARCH)
ITERATION_SEARCH = 100_000
#: the largest total share of epsilon the curvature and residual-scale releases may take
MAX_SCALE_SHARE = 0.9

#: entries of X^T X held at once by the curvature pass (8 bytes each: 128 MB); wider designs take several passes
GRAM_ENTRIES = 1 << 24

#: a dense fit (s_hat = d) with at most PRECONDITION_COLUMNS columns is preconditioned by a released Gram matrix
#: when its ridge r (GRAM_RIDGE sqrt(2 d) times the Laplace scale of the entries, about the noise's spectral norm) is
#: at most PRECONDITION_RIDGE L_2s and the released residual bound is at least PRECONDITION_RESIDUAL T
PRECONDITION_COLUMNS = 256
GRAM_RIDGE = 2.0
PRECONDITION_RIDGE = 0.06
PRECONDITION_RESIDUAL = 0.1

#: rows clipped and multiplied at once inside the curvature pass (bounds its working memory)
_GRAM_ROW_BLOCK = 4096


def _positive(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
            value > 0 and math.isfinite(value)):
        raise MethodOptionError(f"{name} must be a finite number > 0, got {shown(value)}")


def _whole(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise MethodOptionError(f"{name} must be a positive integer, got {shown(value)}")


def _share(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
            0 <= value <= 0.5):
        raise MethodOptionError(f"{name} must be a number in [0, 0.5], got {shown(value)}")


@dataclass(frozen=True)
class LassoOptions(MethodOptions):
    """Options of ``lasso``.

    Attributes
    ----------
    sparsity : int
        s_hat, the number of non-zero coefficients released (required, 1 to d; Cai et al. take s_hat of the
        order of the true sparsity; ``sparsity=d`` fits every coefficient).
    truncation : float or None
        T of f_T (labels truncated to [-T, T]); default and maximum B_Y, the declared bound on |y|.
    iterations : int or None
        N0, the number of disjoint parts and gradient steps; default: with the estimated step, the N0 that balances
        convergence at the O(1/N) rate against the Peeling noise accumulated over the steps (module docstring),
        from 1 to n; with a public step, ceil(log(n) / (eta c_x^2)) (the paper's ceil(log n) at its step 1/c_x^2),
        capped at n.  ``iterations=math.ceil(math.log(n))`` is the paper's choice, which its Thm 17 covers.
    step_size : float or None
        eta, a public step; default None: 1/B~ from the private curvature estimate (module docstring).
    curvature_share : float
        Share of epsilon spent on the curvature estimate when ``step_size`` is None, in [0, 0.5] (default 0.05);
        0 uses the public worst-case step 1/L_2s and spends nothing on it.
    residual_bound : float or None
        R, worst-case fit only: residuals are clipped to [-R, R]; default None: a private scale of the response
        (module docstring), or 2T when ``residual_share`` is 0.
    gram_share : float
        Share of epsilon spent on the Gram matrix of a dense fit, in [0, 0.5] (default 0.2): with ``sparsity=d``
        (at most PRECONDITION_COLUMNS columns) and ``step_size`` None, when the release would be precise (a public
        rule on n, d, the bounds and epsilon) and the released residual bound is at least T / 10, the steps are
        preconditioned by the released matrix (module docstring) and ``curvature_share`` is not spent; 0 never
        preconditions.  With ``residual_share`` at most 0.9 in all.
    residual_share : float
        Share of epsilon spent on the residual scale when ``residual_bound`` is None (worst-case fit), in
        [0, 0.5] (default 0.1); 0 uses the public bound 2T and spends nothing on it.  With ``curvature_share``
        at most 0.9 in all.
    guarantee : str
        ``"worst-case"`` (default) or ``"conditional"`` (Algorithm 4 as written, DP only with high probability
        under the paper's model).
    """

    sparsity: int | None = None
    truncation: float | None = None
    iterations: int | None = None
    step_size: float | None = None
    curvature_share: float = 0.05
    gram_share: float = 0.2
    residual_bound: float | None = None
    residual_share: float = 0.1
    guarantee: str = "worst-case"

    def __post_init__(self) -> None:
        if self.guarantee not in _GUARANTEES:
            raise MethodOptionError(f"guarantee must be one of {', '.join(_GUARANTEES)}, got {shown(self.guarantee)}")
        if self.sparsity is None:
            raise MethodOptionError(
                "lasso needs sparsity=s_hat, the number of non-zero coefficients to release, e.g. sparsity=5 for a "
                "model with at most 5 non-zero coefficients (Cai et al. take s_hat of the order of the true "
                "sparsity); sparsity=d (the number of design columns) fits every coefficient")
        s = self.sparsity
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 1:
            raise MethodOptionError(f"sparsity must be an integer between 1 and d, got {shown(s)}")
        _positive("truncation", self.truncation)
        _whole("iterations", self.iterations)
        _positive("step_size", self.step_size)
        _share("curvature_share", self.curvature_share)
        _share("gram_share", self.gram_share)
        _share("residual_share", self.residual_share)
        for name, share in (("curvature_share", self.curvature_share), ("gram_share", self.gram_share)):
            if share + self.residual_share > MAX_SCALE_SHARE:
                raise MethodOptionError(f"{name} + residual_share must be at most {MAX_SCALE_SHARE:g} (the rest of "
                                        f"epsilon is for the Peeling steps), got {shown(share)} + "
                                        f"{shown(self.residual_share)}")
        _positive("residual_bound", self.residual_bound)
        if self.guarantee == "conditional" and self.residual_bound is not None:
            raise MethodOptionError("residual_bound belongs to the worst-case fit; guarantee='conditional' runs "
                                    "Algorithm 4 without residual clipping")


@dataclass(frozen=True)
class _Public:
    """The public facts of a run, from n, d, the bounds and the options, fixed before anything is read."""

    n: int
    d: int
    sparsity: int
    truncation: float
    residual_bound: float | None  # None: guarantee="conditional", residuals not clipped; 2T until released
    release_residual_scale: bool  # the default worst-case fit: R is released (within [2T 2^-16, 2T])
    c_x: float  # the largest |column bound|
    smoothness: float  # L_2s, the public worst-case restricted smoothness
    pairs: int  # k = min(d, 2 s_hat): the size of the sparse moves
    column_bounds: np.ndarray  # c_j


@dataclass(frozen=True)
class _Plan:
    """The settings of the iterations: public, or post-processing of the released curvature estimate."""

    public: _Public
    step_size: float
    parts: int
    linf_sensitivity: float
    preconditioner: np.ndarray | None = None  # P of a dense fit: the step is -eta P grad (post-processing)

    @property
    def n(self) -> int:
        return self.public.n

    def part_range(self, t: int) -> tuple[int, int]:
        """Positions [start, stop) of part t: ``np.array_split(range(n), parts)[t]``."""
        k, r = divmod(self.n, self.parts)
        start = t * k + min(t, r)
        return start, start + k + (t < r)

    def part_of(self, positions: np.ndarray) -> np.ndarray:
        """The part of each position (the inverse of :meth:`part_range`)."""
        k, r = divmod(self.n, self.parts)
        head = r * (k + 1)
        return np.where(positions < head, positions // (k + 1), r + (positions - head) // k)


def _column_bounds(bounds: DataBounds) -> np.ndarray:
    """c_j, the largest |bound| of each design column."""
    return np.maximum(np.abs(bounds.column_lo), np.abs(bounds.column_hi))


def _public(n: int, d: int, bounds: DataBounds, options: LassoOptions) -> _Public:
    """Check the options against the public facts (refusals spend nothing) and fix T, R, c_x and L_2s."""
    s_hat = int(options.sparsity)  # type: ignore[arg-type]  # never None after validation
    if not 1 <= s_hat <= d:
        raise MethodOptionError(f"sparsity must be an integer between 1 and d={d}, got {shown(options.sparsity)}")
    T = bounds.y_abs if options.truncation is None else min(float(options.truncation), bounds.y_abs)
    c = _column_bounds(bounds)
    c_x = float(np.max(c))
    if not c_x > 0:
        raise MethodOptionError("every design column is bounded to {0}; there is nothing to fit")
    check_statistics_range(n * d, c_x * max(c_x, T))  # public: the smoothness bound and the sums stay finite
    pairs = min(d, 2 * s_hat)
    smooth = float(np.sum(np.sort(c * c)[::-1][:pairs]))
    release = options.guarantee == "worst-case" and options.residual_bound is None and options.residual_share > 0
    if options.guarantee == "conditional":
        R = None
    else:  # a released R is at most 2T
        R = 2.0 * T if options.residual_bound is None else float(options.residual_bound)
        check_statistics_range(n, c_x * R)  # a part's gradient sum, |x r| <= c_x R per row, stays finite
    if options.iterations is not None and n < options.iterations:  # the default N0 is capped at n
        raise InsufficientDataError(f"lasso splits the rows into iterations={options.iterations} parts; n={n} is "
                                    "too few")
    return _Public(n, d, s_hat, T, R, release, c_x, smooth, pairs, c)


def _estimated_iterations(public: _Public, step_size: float, epsilon: float, delta: float) -> int:
    """Default N0 with the estimated step eta = 1/B~: the N in 1..min(n, ITERATION_SEARCH) minimising
    A min(1, 1/(rho N)) + c N^(3/2) (docs/proofs/lasso.md, "Iterations"); public facts and the released step
    and residual bound only.

    A = T / c_x is the public scale of the coefficients (|x' beta| <= T) and A min(1, 1/(rho N)) the error left
    after N gradient steps at the O(1/N) rate of gradient descent on a smooth convex loss (Nesterov 2004,
    Sec. 2.1.5), which holds without the restricted strong convexity that real designs (uncentred or collinear
    columns) lack; rho = -log(1 - eta c_x^2), at most 1, is the progress of one step.  c N^(3/2) is the Peeling
    noise accumulated over N steps along weakly curved directions, where it is not contracted: the noise scale
    of one step times sqrt(s_hat), c N = 2 eta c_x R multiplier sqrt(s_hat) N / n, times sqrt(N).
    """
    n, c_x, s = public.n, public.c_x, public.sparsity
    eta_c2 = step_size * c_x * c_x
    rho = min(1.0, -math.log1p(-eta_c2)) if eta_c2 < 1 else 1.0
    R = _residual_bound(public)
    multiplier, _ = peeling_noise_multiplier(s, epsilon, delta, select=s < public.d)
    c = 2.0 * step_size * c_x * R * multiplier * math.sqrt(s) / n
    N = np.arange(1, min(n, ITERATION_SEARCH) + 1, dtype=float)
    error = (public.truncation / c_x) * np.minimum(1.0, 1.0 / (rho * N)) + c * N ** 1.5
    return int(N[np.argmin(error)])


def _iterations(n: int, eta_c2: float, iterations: int | None) -> int:
    """N0: given, or ceil(log(n) / (eta c_x^2)) capped at n, which keeps the paper's product eta c_x^2 N0 = log n
    (the paper's ceil(log n) at eta = 1/c_x^2); a function of public facts (a public step)."""
    if iterations is not None:
        return int(iterations)
    ratio = math.log(n) / eta_c2 if eta_c2 > 0 else math.inf  # a step too small for a double: n parts
    return int(min(n, max(1, math.ceil(ratio)))) if ratio < n else n


def _plan(public: _Public, step_size: float, iterations: int | None) -> _Plan:
    """N0 and the Peeling sensitivity lambda = 2 eta c_x R / floor(n / N0) (R = 2T in the conditional fit)."""
    n_parts = _iterations(public.n, step_size * public.c_x ** 2, iterations)
    R = _residual_bound(public)
    lam = 2.0 * step_size * public.c_x * R / (public.n // n_parts)
    return _Plan(public, step_size, n_parts, lam)


# -- the residual scale -------------------------------------------------------------------------------------------

class PairDifferences:
    """The pass of the residual scale: for pair i of the public pairing (positions 2i and 2i + 1 under a public
    permutation, i < floor(n / 2)), f_T(clip(y_a)) - f_T(clip(y_b)) (picklable, for Dask).

    Each row adds its own signed term to its pair's entry (+ at the even position, - at the odd one), so chunks
    add up to the same doubles in any order (one addition per entry: a + (-b) = (-b) + a exactly).

    Parameters
    ----------
    perm : RowPermutation
        The public permutation of the rows.
    bounds : DataBounds
        The clip range of the response.
    truncation : float
        T.
    """

    def __init__(self, perm: RowPermutation, bounds: DataBounds, truncation: float) -> None:
        self.perm, self.bounds, self.truncation = perm, bounds, float(truncation)

    @property
    def pairs(self) -> int:
        return self.perm.n // 2

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        positions = self.perm.positions(np.arange(offset, offset + y.shape[0], dtype=np.int64))
        keep = positions < 2 * self.pairs
        yc = np.clip(y[keep], self.bounds.y_lo, self.bounds.y_hi)
        if self.bounds.null_rows:  # a public null row (NaN response) counts as 0, as in the gradient passes
            yc = np.where(np.isnan(yc), 0.0, yc)
        signed = np.clip(yc, -self.truncation, self.truncation) * np.where(positions[keep] % 2 == 0, 1.0, -1.0)
        return np.bincount(positions[keep] // 2, weights=signed, minlength=self.pairs)


def residual_grid(truncation: float) -> GeometricGrid:
    """The public grid of the pair differences: ratio 2 over [2T 2^-RESIDUAL_OCTAVES, 2T]."""
    return GeometricGrid(lo=2.0 * truncation * 2.0 ** -RESIDUAL_OCTAVES, ratio=2.0, bins=RESIDUAL_OCTAVES)


@dataclass(frozen=True)
class _ResidualScale:
    """The released residual scale (post-processing of one noisy histogram)."""

    quantile: float  # the RESIDUAL_QUANTILE-quantile of |y_a - y_b| read from the noisy counts
    bound: float  # R = RESIDUAL_FACTOR * quantile, within the grid's range
    epsilon: float
    pairs: int


def _release_residual_scale(rows: Rows, public: _Public, bounds: DataBounds, epsilon: float, *,
                            ledger: PrivacyLedger, rng: np.random.Generator) -> _ResidualScale:
    """The counts of |y_a - y_b| on :func:`residual_grid`, released by the Laplace mechanism (L1 sensitivity 2: a
    replaced row moves one pair's difference, so one count from one bin to another), and R read from them."""
    T = public.truncation
    grid = residual_grid(T)
    perm = RowPermutation.draw(public.n, rng)
    diffs = rows.reduce(PairDifferences(perm, bounds, T), add_arrays)
    counts = np.zeros(grid.bins) if diffs is None else grid_counts(np.abs(diffs), grid).astype(float)
    noisy = laplace_mechanism(counts, l1_sensitivity=2.0, epsilon=epsilon, rng=rng, ledger=ledger,
                              name="DP-LASSO residual scale (histogram of response differences in pairs)")
    pairs = public.n // 2
    q = quantile_from_counts(np.asarray(noisy, dtype=float), RESIDUAL_QUANTILE, pairs, grid)
    bound = float(min(max(RESIDUAL_FACTOR * q, grid.lo), 2.0 * T))
    return _ResidualScale(q, bound, epsilon, pairs)


# -- the curvature estimate --------------------------------------------------------------------------------------

class GramColumns:
    """The pass of the curvature estimate: X^T X[:, cols] of the rows clipped to the bounds (picklable, for Dask).

    Rows are clipped and multiplied in blocks of a few thousand, so the working memory is that of the result
    (d x |cols|) plus one block; the sum is the same function of the rows whatever the chunking.

    Parameters
    ----------
    bounds : DataBounds
        The clip ranges.
    start, stop : int
        The columns [start, stop) of X^T X computed.
    """

    uses_offset = False

    def __init__(self, bounds: DataBounds, start: int, stop: int) -> None:
        self.bounds, self.start, self.stop = bounds, int(start), int(stop)

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        out = np.zeros((X.shape[1], self.stop - self.start))
        for lo in range(0, X.shape[0], _GRAM_ROW_BLOCK):
            Xc, _ = self.bounds.clip(X[lo:lo + _GRAM_ROW_BLOCK], y[lo:lo + _GRAM_ROW_BLOCK])  # copies
            out += Xc.T @ Xc[:, self.start:self.stop]
        return out


def restricted_gershgorin(gram_columns: np.ndarray, k: int) -> np.ndarray:
    """For each column j of X^T X given, the sum of its k largest |entries|.

    The largest of these over all columns, divided by n, bounds the largest eigenvalue of X^T X / n restricted to
    any k columns (Gershgorin's theorem on the k x k submatrix), hence the restricted smoothness of the
    least-squares loss over k-sparse moves (docs/proofs/lasso.md, "The curvature estimate").

    Parameters
    ----------
    gram_columns : numpy.ndarray
        Columns of X^T X (d x m).
    k : int
        The sparsity of the moves, 1 to d.

    Returns
    -------
    numpy.ndarray
        The m sums.
    """
    a = np.abs(gram_columns)
    if k >= a.shape[0]:
        return a.sum(axis=0)
    return -np.partition(-a, k - 1, axis=0)[:k].sum(axis=0)


def _gram_width(d: int) -> int:
    """Columns of X^T X computed per pass (public: at most GRAM_ENTRIES entries held at once)."""
    return max(1, min(d, GRAM_ENTRIES // d))


def _gram_passes(d: int) -> int:
    """Passes over the rows the curvature estimate takes."""
    return -(-d // _gram_width(d))


def _gram_bound(rows: Rows, bounds: DataBounds, k: int) -> float:
    """max_j (sum of the k largest |(X^T X)_jk|) over the clipped rows: one pass per block of columns."""
    d = rows.d
    width = _gram_width(d)
    best = 0.0
    for start in range(0, d, width):
        stop = min(d, start + width)
        cols = rows.reduce(GramColumns(bounds, start, stop), add_arrays)
        if cols is not None:
            best = max(best, float(np.max(restricted_gershgorin(cols, k))))
    return best


@dataclass(frozen=True)
class _Curvature:
    """The released curvature estimate and the step it sets (post-processing)."""

    noisy: float  # B + Laplace noise
    scale: float  # the Laplace scale b
    bound: float  # B~ = noisy + b log(1/(2 CURVATURE_FAILURE)), kept within [c_x^2, L_2s]
    epsilon: float
    passes: int  # passes over the rows it took (one per block of columns of X^T X)


def _curvature_sensitivity(public: _Public, bounds: DataBounds) -> float:
    """2 max_j (c_j * sum of the k largest c_l) / n: a replaced row moves every (X^T X)_jl by at most 2 c_j c_l."""
    c = _column_bounds(bounds)
    top = float(np.sum(np.sort(c)[::-1][:public.pairs]))
    return 2.0 * public.c_x * top / public.n


def _release_curvature(rows: Rows, public: _Public, bounds: DataBounds, epsilon: float, *, ledger: PrivacyLedger,
                       rng: np.random.Generator) -> _Curvature:
    """B = _gram_bound / n released with Laplace noise (epsilon-DP), then shifted up and kept in [c_x^2, L_2s]."""
    sens = _curvature_sensitivity(public, bounds)
    scale = sens / epsilon
    value = _gram_bound(rows, bounds, public.pairs) / public.n
    noisy = float(laplace_mechanism(value, l1_sensitivity=sens, epsilon=epsilon, rng=rng, ledger=ledger,
                                    name="DP-LASSO curvature estimate (restricted Gershgorin bound)"))
    shifted = noisy + scale * math.log(1.0 / (2.0 * CURVATURE_FAILURE))
    bound = min(max(shifted, public.c_x ** 2), public.smoothness)
    return _Curvature(noisy, scale, bound, epsilon, _gram_passes(public.d))


# -- the preconditioner of a dense fit ---------------------------------------------------------------------------

def _may_precondition(public: _Public, bounds: DataBounds, options: LassoOptions, epsilon: float) -> bool:
    """The public part of the rule: a dense fit (s_hat = d <= PRECONDITION_COLUMNS) with the default step, whose
    released Gram matrix would be precise (ridge at most PRECONDITION_RIDGE L_2s)."""
    if not (public.sparsity == public.d <= PRECONDITION_COLUMNS and options.step_size is None
            and options.gram_share > 0):
        return False
    return _gram_ridge(public, bounds, options.gram_share * epsilon) <= PRECONDITION_RIDGE * public.smoothness


def _preconditioned(public: _Public, bounds: DataBounds, options: LassoOptions, epsilon: float) -> bool:
    """The whole rule: the public part and R >= PRECONDITION_RESIDUAL T (R released, or public); a function of
    public facts and released values only.  A small R against T is a response whose bulk fills a small part of
    its declared range: the fit that clipping at R converges to (Huber-type) can then be far from least squares,
    and the fast preconditioned steps reach it (docs/proofs/lasso.md, "Dense fits")."""
    R = _residual_bound(public)
    return _may_precondition(public, bounds, options, epsilon) and R >= PRECONDITION_RESIDUAL * public.truncation


def _gram_ridge(public: _Public, bounds: DataBounds, epsilon: float) -> float:
    """r = GRAM_RIDGE sqrt(2 d) b, b the Laplace scale of the released Gram matrix at epsilon (public)."""
    return GRAM_RIDGE * math.sqrt(2.0 * public.d) * _gram_sensitivity(public, bounds) / epsilon


@dataclass(frozen=True)
class _Gram:
    """The released Gram matrix of a dense fit and the preconditioner it sets (post-processing)."""

    ridge: float  # r
    spectrum: np.ndarray  # w, the eigenvalues of the released G~ = V diag(w) V'
    heights: np.ndarray  # h = min(max(w, 0) + r, L_2s), the eigenvalues of H = V diag(h) V'
    preconditioner: np.ndarray  # P = H^-1
    epsilon: float
    passes: int


def _gram_sensitivity(public: _Public, bounds: DataBounds) -> float:
    """L1 sensitivity of the upper triangle of X^T X / n: a replaced row moves entry (j, l) by at most 2 c_j c_l."""
    c = _column_bounds(bounds)
    outer = np.outer(c, c)
    return 2.0 * float(np.sum(outer[np.triu_indices(public.d)])) / public.n


def _release_gram(rows: Rows, public: _Public, bounds: DataBounds, epsilon: float, *, ledger: PrivacyLedger,
                  rng: np.random.Generator) -> _Gram:
    """X^T X / n of the clipped rows, its upper triangle released by the Laplace mechanism (epsilon-DP), then the
    preconditioner H^-1 from its eigendecomposition (docs/proofs/lasso.md, "Dense fits")."""
    d = public.d
    sens = _gram_sensitivity(public, bounds)
    gram = np.zeros((d, d))
    width = _gram_width(d)
    for start in range(0, d, width):
        cols = rows.reduce(GramColumns(bounds, start, min(d, start + width)), add_arrays)
        if cols is not None:
            gram[:, start:start + cols.shape[1]] = cols
    upper = np.triu_indices(d)
    noisy = np.asarray(laplace_mechanism(gram[upper] / public.n, l1_sensitivity=sens, epsilon=epsilon, rng=rng,
                                         ledger=ledger, name="DP-LASSO Gram matrix (preconditioner of a dense fit)"),
                       dtype=float).reshape(-1)
    released = np.zeros((d, d))
    released[upper] = noisy
    released = released + np.triu(released, 1).T
    return _preconditioner(public, released, GRAM_RIDGE * math.sqrt(2.0 * d) * sens / epsilon, epsilon)


def _preconditioner(public: _Public, released: np.ndarray, ridge: float, epsilon: float) -> _Gram:
    """P = H^-1, H = V diag(min(max(w, 0) + r, L_2s)) V' from the released G~ = V diag(w) V' (post-processing): H is
    above X^T X / n when the noise's spectral norm is at most r, so a unit step along -P grad does not overshoot."""
    w, V = np.linalg.eigh(released)
    L = public.smoothness
    h = np.clip(np.maximum(w, 0.0) + ridge, L * 2.0**-40, L)  # the floor only matters for a noiseless release
    return _Gram(ridge, w, h, (V / h) @ V.T, epsilon, _gram_passes(public.d))


def _preconditioned_iterations(public: _Public, gram: _Gram, reach: float, epsilon: float, delta: float) -> int:
    """Default N0 of a dense fit: the N in 1..min(n, ITERATION_SEARCH) minimising the model error of the
    preconditioned iteration (docs/proofs/lasso.md, "Dense fits"), a function of public facts and released values.

    Along each eigenvector k of the released G~ one step contracts the error by m_k = 1 - max(w_k - r, 0) / h_k (a
    lower estimate of the curvature over H's eigenvalue); the start error A = T / c_x decays as A m_k^N, and the
    noise added at each step, the Peeling noise (variance 2 b^2, b = multiplier lambda) plus the sampling noise of a
    part's gradient (at most (R reach)^2 N / n), adds up as sum_{i < N} m_k^(2i).
    """
    n, R = public.n, _residual_bound(public)
    multiplier, _ = peeling_noise_multiplier(public.sparsity, epsilon, delta, select=False)
    N = np.arange(1, min(n, ITERATION_SEARCH) + 1, dtype=float)[:, None]
    m = 1.0 - np.maximum(gram.spectrum - gram.ridge, 0.0) / gram.heights
    decay = m ** (2.0 * N)
    with np.errstate(divide="ignore", invalid="ignore"):
        added = np.where(m < 1.0, (1.0 - decay) / (1.0 - m * m), N)
    b = multiplier * 2.0 * R * reach * N / n
    step_noise = 2.0 * b * b + (R * reach) ** 2 * N / n
    A = public.truncation / public.c_x
    error = np.sum(A * A * decay + step_noise * added, axis=1)
    return int(N[np.argmin(error), 0])


def _preconditioned_plan(public: _Public, gram: _Gram, iterations: int | None, epsilon: float,
                         delta: float) -> _Plan:
    """A dense fit's plan: unit steps along -P grad, N0 given or _preconditioned_iterations, and
    lambda = 2 R max_j (|P| c)_j / floor(n / N0) (a replaced row moves (P x r)_j by at most 2 R (|P| c)_j)."""
    reach = float(np.max(np.abs(gram.preconditioner) @ public.column_bounds))
    if iterations is None:
        iterations = _preconditioned_iterations(public, gram, reach, epsilon, delta)
    lam = 2.0 * _residual_bound(public) * reach / (public.n // iterations)
    return _Plan(public, 1.0, iterations, lam, gram.preconditioner)


def _residual_bound(public: _Public) -> float:
    """R, or 2T in the conditional fit (residuals not clipped)."""
    return 2.0 * public.truncation if public.residual_bound is None else public.residual_bound


# -- the iterations ----------------------------------------------------------------------------------------------

class PartIndex:
    """Which rows of a chunk fall in each part: public (row indices and the permutation's keys), computed once per
    chunk and kept in a small cache, so the single in-memory chunk sorts its rows by part once for all N0 passes.

    Parameters
    ----------
    perm : RowPermutation
        The public permutation of the rows.
    plan : _Plan
        The parts.
    """

    CACHED_CHUNKS = 4

    def __init__(self, perm: RowPermutation, plan: _Plan) -> None:
        self.perm, self.plan = perm, plan
        self._cache: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_cache"] = {}  # a worker recomputes what it needs; nothing data-sized is shipped
        return state

    def rows_of(self, part: int, offset: int, count: int) -> np.ndarray:
        """Local indices (ascending) of the chunk's rows in ``part``."""
        key = (int(offset), int(count))
        if key not in self._cache:
            positions = self.perm.positions(np.arange(offset, offset + count, dtype=np.int64))
            parts = self.plan.part_of(positions)
            order = np.argsort(parts, kind="stable")  # rows grouped by part, ascending within a part
            edges = np.searchsorted(parts[order], np.arange(self.plan.parts + 1))
            if len(self._cache) >= self.CACHED_CHUNKS:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = (order, edges)
        order, edges = self._cache[key]
        return order[edges[part]:edges[part + 1]]


class PartGradient:
    """The pass of iteration t: sum_i clip(x_i) r_i over the rows of part t, with r_i the residual
    clip(x_i)' beta - f_T(clip(y_i)), clipped to [-R, R] in the worst-case fit (picklable, for Dask).

    ``select`` names the chunk's rows of part t from their indices alone (positions under the public
    permutation, :class:`PartIndex`), so only those are evaluated.

    Parameters
    ----------
    index : PartIndex
        The public parts.
    part : int
        t.
    beta : numpy.ndarray
        The released iterate beta^(t).
    bounds : DataBounds
        The clip ranges.
    """

    def __init__(self, index: PartIndex, part: int, beta: np.ndarray, bounds: DataBounds) -> None:
        self.index, self.part, self.beta, self.bounds = index, int(part), beta, bounds

    def select(self, offset: int, count: int) -> np.ndarray:
        """Local indices of the chunk's rows in this part."""
        return self.index.rows_of(self.part, offset, count)

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Xc, yc = self.bounds.clip(X, y, inplace=writable(X, y))  # the selected rows are the pass's own copies
        public = self.index.plan.public
        T, R = public.truncation, public.residual_bound
        resid = residuals(Xc, np.clip(yc, -T, T), self.beta)  # never NaN, even at a huge released iterate
        if R is None:  # conditional fit: no clipping, except at the public size beyond which the sum overflows
            R = STATISTICS_LIMIT / (public.n * public.c_x)
        np.clip(resid, -R, R, out=resid)
        return Xc.T @ resid


def _iterate(rows: Rows, plan: _Plan, bounds: DataBounds, *, epsilon: float, ledger: PrivacyLedger,
             rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Charge the N0 Peeling calls once (parallel composition), then iterate; returns (beta, the iterate at
    half time, the Peeling noise scale)."""
    public = plan.public
    block = peeling_block(parts=plan.parts, sparsity=public.sparsity, linf_sensitivity=plan.linf_sensitivity,
                          epsilon=epsilon, delta=ledger.delta, ledger=ledger, name="DP-LASSO Peeling steps",
                          dimension=public.d)
    index = PartIndex(RowPermutation.draw(public.n, rng), plan)
    beta, half = np.zeros(public.d), np.zeros(public.d)
    tail = np.zeros(public.d)
    for t in range(plan.parts):
        start, stop = plan.part_range(t)
        total = rows.reduce(PartGradient(index, t, beta, bounds), add_arrays)
        grad = (np.zeros(public.d) if total is None else total) / (stop - start)
        if plan.preconditioner is not None:
            grad = plan.preconditioner @ grad
        beta = block.release(beta - plan.step_size * grad, rng=rng)
        if t == (plan.parts - 1) // 2:
            half = beta
        if t >= plan.parts // 2:
            tail += beta
    if plan.preconditioner is not None:  # a dense fit releases the mean of its last ceil(N0 / 2) iterates
        return tail / (plan.parts - plan.parts // 2), half, block.scale
    return beta, half, block.scale


def fit(rows: Rows, ctx: FitContext, options: LassoOptions) -> MethodFit:
    """DP-LASSO with Peeling (Cai, Wang & Zhang 2021, Algorithm 4); see the module docstring.

    Parameters
    ----------
    rows : Rows
        The rows (in memory or in chunks).
    ctx : FitContext
        Public facts (the clip ranges are required), the ledger and the random source.
    options : LassoOptions
        The validated options.

    Returns
    -------
    MethodFit
        The s_hat-sparse coefficients; no inference (``NO_STANDARD_ERRORS``).
    """
    bounds = ctx.require_bounds()
    public = _public(ctx.n, ctx.d, bounds, options)
    epsilon = float(ctx.epsilon)
    _check_noise_range(public, bounds, options, epsilon, float(ctx.delta))
    peel_epsilon = epsilon
    residual = None
    if public.release_residual_scale:
        residual = _release_residual_scale(rows, public, bounds, options.residual_share * epsilon,
                                           ledger=ctx.ledger, rng=ctx.rng)
        peel_epsilon -= residual.epsilon
        public = replace(public, residual_bound=residual.bound)
    curvature = None
    if _preconditioned(public, bounds, options, epsilon):
        gram = _release_gram(rows, public, bounds, options.gram_share * epsilon, ledger=ctx.ledger, rng=ctx.rng)
        peel_epsilon -= gram.epsilon
        plan = _preconditioned_plan(public, gram, options.iterations, peel_epsilon, float(ctx.delta))
        beta, half, scale = _iterate(rows, plan, bounds, epsilon=peel_epsilon, ledger=ctx.ledger, rng=ctx.rng)
        return _result(plan, gram, residual, beta, half, scale)
    if options.step_size is not None:
        eta = float(options.step_size)
    elif options.curvature_share > 0:
        curvature = _release_curvature(rows, public, bounds, options.curvature_share * epsilon,
                                       ledger=ctx.ledger, rng=ctx.rng)
        peel_epsilon -= curvature.epsilon
        eta = 1.0 / curvature.bound
    else:
        eta = 1.0 / public.smoothness
    iterations = options.iterations
    if iterations is None and curvature is not None:
        iterations = _estimated_iterations(public, eta, peel_epsilon, float(ctx.delta))
    plan = _plan(public, eta, iterations)
    beta, half, scale = _iterate(rows, plan, bounds, epsilon=peel_epsilon, ledger=ctx.ledger, rng=ctx.rng)
    return _result(plan, curvature, residual, beta, half, scale)


def _check_noise_range(public: _Public, bounds: DataBounds, options: LassoOptions, epsilon: float,
                       delta: float) -> None:
    """Refuse before any release a fit whose Peeling noise would be too small to sample (a public step or bound far
    below the data's scale): the smallest lambda any release can lead to is 2 eta_min c_x R_min / n, with eta_min
    the public step or 1/L_2s (the estimated step is at least that) and R_min the public bound or the released
    one's floor 2T 2^-RESIDUAL_OCTAVES (the conditional fit: 2T); for a fit that may be preconditioned (which
    depends on the released R), also 2 c_x R_min / (L_2s sqrt(d) n) with R_min = PRECONDITION_RESIDUAL T or the
    public bound (max_j (|P| c)_j >= |P c|_2 / sqrt(d) >= c_x / (L_2s sqrt(d)): P's eigenvalues are >= 1/L_2s)."""
    if _may_precondition(public, bounds, options, epsilon):
        R_dense = PRECONDITION_RESIDUAL * public.truncation if public.release_residual_scale else _residual_bound(
            public)
        dense_epsilon = epsilon - options.gram_share * epsilon  # computed as fit() does
        if public.release_residual_scale:
            dense_epsilon = epsilon - options.residual_share * epsilon - options.gram_share * epsilon
        lam = 2.0 * public.c_x * R_dense / (public.smoothness * math.sqrt(public.d) * public.n)
        check_peeling_scale(linf_sensitivity=lam, sparsity=public.sparsity, epsilon=dense_epsilon, delta=delta,
                            select=False)
    eta = float(options.step_size) if options.step_size is not None else 1.0 / public.smoothness
    if public.release_residual_scale:
        R = residual_grid(public.truncation).lo
    else:
        R = _residual_bound(public)
    peel_epsilon = epsilon  # the Peeling budget, computed as fit() does (the same double: one cached calibration)
    if public.release_residual_scale:
        peel_epsilon -= options.residual_share * epsilon
    if options.step_size is None and options.curvature_share > 0:
        peel_epsilon -= options.curvature_share * epsilon
    check_peeling_scale(linf_sensitivity=2.0 * eta * public.c_x * R / public.n, sparsity=public.sparsity,
                        epsilon=peel_epsilon, delta=delta, select=public.sparsity < public.d)


def _result(plan: _Plan, curvature: _Curvature | _Gram | None, residual: _ResidualScale | None, beta: np.ndarray,
            half: np.ndarray, scale: float) -> MethodFit:
    """The fit, its diagnostics and notes (public facts and released values only)."""
    public = plan.public
    T, R, s_hat = public.truncation, public.residual_bound, public.sparsity
    diagnostics: dict[str, Any] = {
        "sparsity": s_hat, "iterations": plan.parts, "step_size": plan.step_size, "truncation": T,
        "linf_sensitivity": plan.linf_sensitivity, "peeling_noise_scale": scale, "smoothness_bound": public.smoothness}
    extra = (0 if curvature is None else curvature.passes) + (0 if residual is None else 1)
    passes = plan.parts + extra
    notes = [f"DP-LASSO: {plan.parts} gradient steps of size {plan.step_size:.3g} on disjoint parts of >= "
             f"{public.n // plan.parts} rows, each followed by Peeling of the top {s_hat} coordinates; labels "
             f"truncated to [-{T:.4g}, {T:.4g}]",
             "one pass over the data per iteration" + (f", plus {extra} for the scale estimates" if extra else "")
             + f" ({passes} passes; an iteration's pass evaluates only that iteration's part)"]
    if isinstance(curvature, _Gram):
        diagnostics.update(gram_epsilon=curvature.epsilon, gram_ridge=curvature.ridge)
        notes.append(f"steps preconditioned by a private Gram matrix of the design (epsilon={curvature.epsilon:.3g}, "
                     f"ridge {curvature.ridge:.3g})")
    elif curvature is not None:
        diagnostics.update(curvature_noisy=curvature.noisy, curvature_bound=curvature.bound,
                           curvature_epsilon=curvature.epsilon)
        notes.append(f"step 1/{curvature.bound:.4g} from a private estimate of the design's restricted curvature "
                     f"(epsilon={curvature.epsilon:.3g})")
    if residual is not None:
        diagnostics.update(residual_quantile=residual.quantile, residual_epsilon=residual.epsilon)
        notes.append(f"residual bound {residual.bound:.4g} = {RESIDUAL_FACTOR:g} x a private "
                     f"{RESIDUAL_QUANTILE:g}-quantile of |y_a - y_b| over {residual.pairs} pairs of rows "
                     f"(epsilon={residual.epsilon:.3g})")
    notes += _warnings(plan, beta, half, scale)
    theory = TheoryInputs(sparsity=s_hat)
    if R is not None:
        diagnostics["residual_bound"] = R
        notes.append(f"residuals clipped to [-{R:.4g}, {R:.4g}] so that the Peeling sensitivity holds for every "
                     "data set")
        return MethodFit(params=beta, notes=tuple(notes), diagnostics=diagnostics, guarantee="worst-case",
                         passes=passes, no_inference_reason=NO_STANDARD_ERRORS, theory_inputs=theory)
    assumptions = (
        "CONDITIONAL PRIVACY: the (epsilon, delta) guarantee holds only with high probability over data drawn "
        "from Cai, Wang & Zhang's sparse model (Thm 17), not for every data set.",
        f"It assumes |x^T beta^(t)| <= T = {T:.4g} for every row x and every iterate beta^(t), so that each "
        f"residual is at most 2T and the Peeling sensitivity {plan.linf_sensitivity:.4g} holds; this is likely when "
        "the errors are sigma-sub-Gaussian, ||beta||_2 is bounded and T >= K sigma sqrt(log n).",
        "If the assumption fails for the actual data, the released coefficients may reveal more than epsilon "
        "allows.",
    )
    return MethodFit(params=beta, assumptions=assumptions, notes=tuple(notes), diagnostics=diagnostics, passes=passes,
                     guarantee="conditional", no_inference_reason=NO_STANDARD_ERRORS, theory_inputs=theory)


def _warnings(plan: _Plan, beta: np.ndarray, half: np.ndarray, noise_scale: float) -> list[str]:
    """Notes on a likely poor fit, from public facts and the released iterates only (post-processing).

    * eta > 1/L_2s: the gradient step is not guaranteed stable for every design within the bounds.
    * Not converged: the released iterates moved, over the second half of the run, by more than a tenth of
      the final coefficients' norm and more than the Peeling noise explains (a few noise scales per released
      coordinate); the error contracts geometrically on well-conditioned designs, so a drift this late
      points to an ill-conditioned design (strongly correlated or uncentred columns) or too few iterations.
    * Noise only: every released coefficient is within 3 Peeling noise scales of 0 (Laplace: |noise| > 3b with
      probability e^-3 = 5 %), so the selection is not distinguishable from noise.
    """
    public = plan.public
    notes = []
    if plan.preconditioner is None and plan.step_size * public.smoothness > 1.0 + 1e-12:
        notes.append(f"step_size {plan.step_size:.3g} exceeds 1/L_2s = {1.0 / public.smoothness:.3g}, the largest "
                     "step that is stable for every design within the bounds; the iterates may oscillate or "
                     "grow on correlated designs")
    drift = float(np.linalg.norm(beta - half))
    noise = 4.0 * noise_scale * math.sqrt(2.0 * 2 * public.sparsity)
    if drift > max(0.1 * float(np.linalg.norm(beta)), noise):
        notes.append(f"the released iterates had not settled: they moved by {drift:.3g} (l2, fitting units) over the "
                     f"second half of the {plan.parts} iterations, against a final norm of "
                     f"{float(np.linalg.norm(beta)):.3g}; the fit is probably far from the least-squares one, "
                     "which happens on ill-conditioned designs (correlated or uncentred columns, dummies of rare "
                     "levels); more iterations, bounds centred on the data's typical values, or another method "
                     "may help")
    if float(np.max(np.abs(beta))) < 3.0 * noise_scale:
        notes.append(f"every released coefficient is within 3 Peeling noise scales ({noise_scale:.3g}, fitting "
                     "units) of zero: the selected support is not distinguishable from noise; a larger epsilon or n, "
                     "or fewer iterations, may help")
    return notes


_RATE = Rate(
    "upper", "lasso upper bound", f"{CAI} Thm 17",
    "sqrt(s log d log n / n) + s sqrt(log(1/delta)) log d log^(3/2) n/(n eps)",
    lambda n, d, s: math.sqrt(s * math.log(d) * math.log(n) / n),
    lambda n, d, e, dl, s: s * math.sqrt(log_inv(dl)) * math.log(d) * math.log(n) ** 1.5 / (n * e),
    needs_sparsity, (SPARSE_MODEL, "a high-probability bound, for s_hat ≍ s, T >= K sigma sqrt(log n), the "
                     "paper's step 1/c_x^2 (step_size=1.0 after rescaling) and N0 ≍ log n; dpstats' default "
                     "step from a private curvature estimate is at most the paper's and is not covered by the "
                     "theorem"), needs_sparsity=True)


def theory_rate(guarantee: str) -> UpperRate:
    """Cai, Wang & Zhang's Thm 17 (the same rate for either guarantee).

    Parameters
    ----------
    guarantee : str
        The fit's guarantee (unused: one rate).

    Returns
    -------
    UpperRate
        The rate, which needs the fit's sparsity.
    """
    return UpperRate(_RATE)


SPEC = MethodSpec(
    name="lasso",
    title="DP-LASSO with Peeling",
    citation="Cai, Wang & Zhang (Ann. Statist. 2021), Algorithm 4; Peeling from Dwork, Su & Zhang (2021)",
    fit=fit,
    options=LassoOptions,
    needs_bounds=True,
    null_rows=True,
    regimes="sparse coefficients (s_hat given), d large, including d > n; bounded data",
    min_rows=lambda d: 2,
    allows_wide=True,
    inference_rule=InferenceRule(),
    theory_rate=theory_rate,
)
