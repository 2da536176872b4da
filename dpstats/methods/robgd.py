"""DP-RobGD: private full-batch gradient descent that is robust to corrupted labels.

Liu, Jain, Kong, Oh & Suggala, "Label robust and differentially private
linear regression: computational and statistical efficiency" (NeurIPS 2023;
arXiv 2301.13273, first titled "Near optimal private and robust linear
regression"), Algorithm 1, with the Private Norm Estimator (Alg. 3) and the
Distance Estimator (Alg. 2).  See ALGORITHMS.md section 6.

Algorithm (as implemented)
--------------------------
0. Private preconditioning (``standardize=True``, the default; this
   package's addition, :mod:`~dpstats.methods.private_centring`): from all n
   rows, a released centre and scale of each non-intercept column without a
   public range (and a centre of y when there is an intercept); the steps
   below run unchanged on z = (x - centre) / scale and y - y_centre, and the
   coefficients are mapped back exactly.  Uncentred columns on different
   scales otherwise put kappa of E[x x^T] in the thousands, and the rounds
   the budget allows never leave 0 (measured on statsmodels' ``fair`` data).
   ``standardize=False`` is the paper's algorithm.  The public facts
   ``intercept_index`` and ``column_ranges`` come from the API (factor dummies and declared bounds use their public range and
   spend nothing).

A public pseudo-random layout (:class:`RobGDLayout`) splits the n rows into
S_a (a fraction ``gamma_fraction``, 20% as in the paper's experiments; the
analysis uses 50%) and S_b (the rest, m rows).  The split is stratified by
windows of ``WINDOW`` = 1024 consecutive rows: each window puts the same
number of rows, chosen by a keyed bijection of its slots, into S_a, and the
distance estimator's groups are drawn from the S_a rows of one window (the
norm estimator's groups are random groups of all of S_a).  The layout is a
function of public n, the options and public draws, evaluated row by row, so
data read in chunks get the same split (below).  mu = mu(epsilon, delta) is
the exact GDP parameter of the budget (Balle & Wang 2018).

On S_a:

1. Gamma = PrivateNormEstimator: the modal bin of a private geometric
   histogram of group means of ||x||^2 (estimates Tr(Sigma) = E||x||^2).
   Theta = ``covariate_tail`` * sqrt(Gamma): the covariate clipping norm
   (paper: Theta = K sqrt(2 Gamma) log^a(n/zeta), Alg. 1 line 1).  The default
   tail 1 + sqrt(2 ln(n/zeta)), zeta = 0.05, is derived for Gaussian
   covariates: ||x||^2 <= Tr(Sigma) (1 + sqrt(2t))^2 with probability
   1 - e^-t (Laurent & Massart 2000, using ||Sigma||_F, ||Sigma|| <= Tr Sigma),
   union over n rows.  Covariates of bounded norm ||x||^2 <= Tr(Sigma) (the
   paper's experiments: x on the unit sphere) take ``covariate_tail=1``.
2. Unless ``rounds`` and ``step_size`` are both given: the private extreme
   eigenvalues of the Theta-clipped second-moment matrix
   (:func:`~dpstats.methods.robust_estimators.release_spectrum`), giving an
   upper confidence bound lambda_up >= lambda_max(Sigma) and a condition
   number kappa_hat = lambda_up / lambda_low.  Step size eta = 1/lambda_up, so
   ||eta Sigma|| <= 1 as the analysis requires (Liu et al., Thm 3, and the
   1/(i+1) bound of their App. H), and T = ceil(kappa_hat ln(n) / 2) rounds
   (the paper's T = Theta~(kappa): the slowest direction contracts by
   (1 - 1/kappa) per round, so T rounds shrink the initial error by n^(-1/2)),
   capped at ``max_rounds`` and at the number of distance histograms the
   budget can pay for usefully (the modal count must clear the noise by 6
   sds: :func:`~dpstats.methods.robust_estimators.max_histogram_releases`,
   a function of public n, mu and max_corruption; when not even 2 rounds
   qualify the fit is refused before anything is spent).  The paper sets
   eta and T from the true Sigma; here they come from a private estimate, or
   from the user.
3. For each round t (and once more for the final iterate when
   ``best_iterate``): gamma_t = DistanceEstimator(S_a, w_t): the modal bin
   of a private histogram (bins of ratio 2) of group means of squared
   residuals (y - w_t^T x)^2 over groups of b = floor(0.1/max_corruption)
   rows, a robust estimate of ||w_t - w*||_Sigma^2 + sigma^2.  The bottom
   bin (group means below 2^-63.75: exact zeros) is never the mode: with a
   zero-inflated response most residuals are exactly 0 at w = 0, and a
   threshold from that bin would clip every gradient to nothing.
   The mode is used only when it stands out from the noise
   (:func:`~dpstats.methods.robust_estimators.reliable_mode`: its noisy
   count, or failing that the noisy sum of a window of 2 or 4 adjacent
   bins, clears the expected largest of the 128 empty bins' noises by 2
   sds).  Otherwise the round *holds*: no step (w_{t+1} = w_t, no gradient
   is released) and the next round's histogram, the same counts since w and
   the groups are unchanged, is averaged with it (noise sd divided by
   sqrt(k) after k releases; :class:`~dpstats.methods.robust_estimators.PooledHistogram`).
   An uncleared mode is often the largest of the empty bins' noises, an
   arbitrary bin: on statsmodels' ``fair`` data at epsilon = 1 (residuals at
   w = 0 are the skewed, zero-inflated response; its largest bin holds ~48
   of 635 groups against a count noise sd of ~22) it gave gamma up to 2^60,
   and the gradient noise, proportional to theta_t, threw the coefficients
   to 1e2..2e7 in 30% of seeds; holding until a pooled histogram clears
   fixed it (0 of 200 seeds).  A fit in which no round clears returns
   w = 0 and says so in its notes.

On S_b, for t = 0..T-1 (rounds that do not hold):

4. theta_t = sqrt(2 gamma_t ln(2/clip_level)): a residual with variance at most
   gamma_t and Gaussian tails exceeds it with probability at most
   ``clip_level`` (the paper's theta_t = 2 sqrt(2 gamma_t) sqrt(9 C2 K^2
   log^{2a}(1/(2 alpha))) with unspecified C2; here the constant is derived for
   sub-Gaussian residuals and clipping a few clean residuals only slows
   progress: clipped residuals are the Huber-loss gradient, whose population
   minimiser is w* for symmetric noise).
5. g_t = (1/m) sum_{i in S_b} clip_Theta(x_i) clip_theta_t(w_t^T x_i - y_i),
   computed as one pair of matrix-vector products X_b w, X_b^T v;
   w_{t+1} = w_t - eta (g_t + N(0, s_t^2 I)) with s_t = Delta_t / mu_g,
   Delta_t = 2 Theta theta_t / m.

Output: w_T, or with ``best_iterate=True`` (DP-RobGD*, the paper's
experimental variant) the iterate w_t with the smallest gamma_t (ties: the
latest; a held round's gamma_t counts as infinite), which is
post-processing of released values.

Privacy (replace-one neighbours, n public; worst case: no assumption on the data)
---------------------------------------------------------------------------------
Every statistic is released by a Gaussian mechanism whose noise sd is its
L2 sensitivity divided by a GDP parameter fixed before it is drawn.

The preconditioning (step 0) is mu_pre-GDP on all rows (group histograms of
sensitivity sqrt(2) each; the argument is in
:mod:`~dpstats.methods.private_centring`), mu_pre^2 = ``PRECONDITION_SHARE``
mu^2 when some column needs it (else 0).  Everything below is then the
algorithm on the rows z, whose map is a released value, with
mu_block^2 = mu^2 - mu_pre^2: a replaced row x is a replaced row z, so each
statement below holds for z with mu_block in place of mu, and the fit is
sqrt(mu_pre^2 + mu_block^2) = mu-GDP by adaptive composition (both steps
are on the fit's ledger, charged before the first draw).  In the block:

* norm histogram: a replaced row changes one group mean of ||x||^2, so one
  count -1 and one +1: L2 sensitivity sqrt(2), noise on all bins of a fixed
  public grid (Liu et al. Lemma B.2, Gaussian form): mu_n-GDP;
* spectrum: (lambda_max, lambda_min) of sum clip(x) clip(x)^T: L2
  sensitivity sqrt(2) Theta^2 (Hoffman-Wielandt): mu_s-GDP;
* distance histogram of round t: sensitivity sqrt(2) as above (w_t is a
  released value): mu_h-GDP each, adaptively composed over the
  T_h = T (+1) rounds;
* gradient of round t: ||clip_Theta(x) clip_theta(r)|| <= Theta theta_t, so
  the mean over the m rows of S_b moves by at most 2 Theta theta_t / m when
  one row is replaced (the seed's "Theta theta_t" is the add/remove value):
  mu_g-GDP each (a held round releases none: the block is charged for T
  releases and uses at most T).

Holding a round, pooling histograms and reading their modes are functions
of released values and public constants only (post-processing).

Extreme finite values (no bounds: every finite double is a valid entry).
Squares, products and sums of entries near 1.8e308 overflow, and a NaN or an
infinite statistic would pass a release unhidden.  So
(:mod:`~dpstats.methods.extremes`): a group statistic that overflows (inf,
or NaN from inf - inf) lands in the last bin of its histogram, a fixed
public rule, so each group still adds one count to one bin; a row whose
squared norm overflows is clipped by a norm computed on the row divided by
its largest entry (its direction at norm Theta); a residual that overflows
is recomputed the same way and is +-inf, never NaN (+inf when even that
form overflows), and +-inf clips to +-theta_t.  Each of these is a function
of one row, or of one group's rows, and of released values (w_t, Theta,
theta_t) only, and a clipped term keeps its norm bound Theta theta_t, so
every sensitivity above holds unchanged; rows whose plain computation is
finite get the same values, bit for bit.  The preconditioning map is
clamped to the largest double, value by value (public, monotone).  numpy's
floating-point warnings are silenced wherever the rows are touched, so
nothing printed depends on them.  ``covariate_tail`` is limited to
[1e-6, 1e6], where Theta^2 neither overflows nor underflows.

Budget.  mu_n^2 = mu_s^2 = mu^2/20 (mu_n^2 = mu^2/10 when no spectrum is
needed), T_h mu_h^2 = the rest of mu^2, and T mu_g^2 = mu^2: each part
composes adaptively to exactly mu-GDP (Dong, Roth & Su 2022, Cor. 3.3; T is
a function of earlier released values only, and the per-round parameters
are set so the total is mu whatever T is).

Composition across the split: S_a and S_b are disjoint and the split is
public (a function of n and public draws).  Given the split, the replaced
row lies in one of them; the mechanisms on the other part see identical
inputs (their data-dependent arguments are released values) and so do not
distinguish the neighbours.  The whole fit is therefore mu-GDP, i.e. exactly
(epsilon, delta)-DP, by parallel composition, which holds for adaptively
interleaved mechanisms.  The fit's ledger records this as ONE Gaussian step
of GDP parameter mu (the parallel block), charged before any draw; each part
has its own ledger with budget (epsilon, delta) that its mechanisms charge
before drawing (so each part is enforced), and the parts' steps are listed
in the report's notes and in ``info["part_steps"]``.  Recording the two parts
sequentially in one ledger would also be valid but would make each part pay
for the other (sqrt(mu_a^2 + mu_b^2) = mu): about 1.4x the gradient noise
for nothing.

Any public split and grouping serves the proof: it needs only that S_a and
S_b are disjoint, that each row is in at most one group of each estimator,
and that neither depends on the data.  The window-local distance groups are
for data read in chunks (below); for utility, rows are exchangeable within a
window when the file is in random order, and a file sorted by a variable
puts neighbours of that order into a group.

Utility (Liu et al., Thm 3 and 4; assumptions reported, not needed for
privacy): sub-Weibull covariates and noise, only labels corrupted, and
corrupted fraction below ``max_corruption``.

Data read in chunks (:func:`fit_chunks`; files, Dask)
----------------------------------------------------
Cost: T + 2 passes over the data (T + 1 with ``rounds`` and ``step_size``
given; one more with ``best_iterate``; one more for the preconditioning),
plus the count of the rows when the
source does not know it: every round needs the whole of S_a and S_b at the
current iterate, and w_{t+1} depends on round t's releases.  ``max_rounds``
caps T, hence the passes.  A round is one pass although its gradient is
clipped at its own released threshold: theta_t is one of 128 values (the
grid's upper edges), and the pass returns, with the histogram counts, the
clipped-gradient sums at all of them (a table of 129 x 2d numbers,
:class:`~dpstats.methods.row_passes.ClipTable`).  Each chunk evaluates the
layout for its own rows; only aggregates leave it (norm-group sums, the
clipped Gram matrix, histogram counts, the table), except that a distance
group cut by a chunk edge carries its rows' squared residuals to the
neighbouring chunk's partial result, where it is completed and binned: at
most one window's worth at each edge, and none in the result of a pass.
The privacy argument is unchanged because every released value is the same
function of the same rows as in memory (same layout, same groups; a group's
mean is summed slot by slot in both paths, so it is the same double; sums
over rows are added in another order) and the noise comes from the same
draws in the same order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.blocks import RowPermutation
from dpstats.methods.extremes import quiet, residuals
from dpstats.methods.private_centring import (
    Standardisation, StandardisedPasses, check_public_options, releases_anything,
    release_standardisation,
)
from dpstats.methods.legacy import (  # TEMPORARY: the adapter, until this method is ported
    LegacyMethodFit as MethodFit, LegacyMethodSpec as MethodSpec, register_legacy as register,
)
from dpstats.methods.robust_estimators import (
    DISTANCE_GRID, PooledHistogram, SpectrumEstimate, clip_factors, clipped_gram, distance_counts,
    distance_group_size, max_histogram_releases, norm_group_size, norm_group_sums, private_norm_from_means,
    release_histogram, release_spectrum, separately_clipped_gradient,
)
from dpstats.methods.row_passes import (
    ClipTable, GroupedCounts, WindowedOrder, add_arrays, add_clip_tables, add_grouped_counts,
)
from dpstats.methods.sufficient import RowChunks
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import gaussian_block

__all__ = ["fit", "fit_chunks", "RobGDLayout", "parallel_block_step", "part_notes", "default_covariate_tail",
           "rounds_from_kappa", "check_fraction", "check_descent_options", "step_schedule", "threshold_candidates",
           "held_notes"]

_NORM_SHARE = 0.05      # share of mu^2 on S_a for the norm histogram
_SPECTRUM_SHARE = 0.05  # share of mu^2 on S_a for the spectrum
PRECONDITION_SHARE = 0.1  # share of mu^2 for the private centres and scales on all rows (when standardising)
_ZETA = 0.05            # failure probability of the covariate-norm bound in the default tail
WINDOW = 1024           # rows per window of the stratified split (and the most rows a distance group spans)
_TAIL_RANGE = (1e-6, 1e6)  # public range of covariate_tail (check_descent_options)


def precondition_split(mu: float, standardize: bool) -> tuple[float, float]:
    """(mu of the method's block, mu of the preconditioning): mu^2 = sum of squares (GDP composition); the
    preconditioning gets ``PRECONDITION_SHARE`` of mu^2 when it runs, else nothing."""
    if not standardize:
        return mu, 0.0
    return mu * math.sqrt(1.0 - PRECONDITION_SHARE), mu * math.sqrt(PRECONDITION_SHARE)


def check_fraction(name: str, value: float, *, low_open: bool = True, high: float = 1.0) -> float:
    """Validate an option that must lie in (0, high) (or [0, high) when ``low_open`` is False)."""
    v = float(value)
    ok = (0.0 < v < high) if low_open else (0.0 <= v < high)
    if not (math.isfinite(v) and ok):
        raise MethodOptionError(f"{name} must lie in {'(' if low_open else '['}0, {high}), got {value!r}")
    return v


def check_descent_options(*, clip_level: float, covariate_tail: float | None, rounds: int | None,
                          step_size: float | None, max_rounds: int) -> float:
    """Validate the options DP-RobGD and DP-AMBSSGD share (public, before anything is read); returns clip_level."""
    level = check_fraction("clip_level", clip_level)
    if covariate_tail is not None and not (math.isfinite(covariate_tail) and _TAIL_RANGE[0] <= covariate_tail
                                           <= _TAIL_RANGE[1]):
        # outside this range Theta^2 over- or underflows for some released Gamma (a step size 1/0 or an
        # infinite sensitivity after part of the budget is spent); Theta / sqrt(Tr Sigma) is about 1 to 10
        raise MethodOptionError(f"covariate_tail must be a number in [{_TAIL_RANGE[0]:g}, {_TAIL_RANGE[1]:g}]")
    if rounds is not None and not (int(rounds) == rounds and rounds >= 1):
        raise MethodOptionError("rounds must be a positive integer")
    if step_size is not None and not (math.isfinite(step_size) and step_size > 0):
        raise MethodOptionError("step_size must be a positive number")
    if not (int(max_rounds) == max_rounds and max_rounds >= 2):
        raise MethodOptionError("max_rounds must be an integer >= 2")
    return level


def default_covariate_tail(n: int, zeta: float = _ZETA) -> float:
    """1 + sqrt(2 ln(n/zeta)): Theta/sqrt(Tr Sigma) that clips no Gaussian covariate w.p. 1 - zeta."""
    return 1.0 + math.sqrt(2.0 * math.log(n / zeta))


def rounds_from_kappa(kappa: float, n: int, max_rounds: int) -> int:
    """T = ceil(kappa ln(n) / 2), clamped to [2, max_rounds] (Liu et al.: T = Theta~(kappa))."""
    return int(min(max_rounds, max(2, math.ceil(kappa * math.log(n) / 2.0))))


def step_schedule(spec: SpectrumEstimate, n: int, *, max_rounds: int, step_size: float | None,
                  rounds: int | None) -> tuple[float, int, float]:
    """(eta, T, kappa_hat) from a released spectrum: eta = 1/lambda_up unless given, kappa_hat =
    lambda_up / lambda_low clamped to [1, 2 max_rounds / ln n], T = :func:`rounds_from_kappa` unless given
    (post-processing of released values and public options)."""
    kappa_cap = 2.0 * max_rounds / math.log(n)
    kappa_hat = spec.lam_max_upper / spec.lam_min_lower if spec.lam_min_lower > 0 else kappa_cap
    kappa_hat = min(max(kappa_hat, 1.0), kappa_cap)
    eta = 1.0 / spec.lam_max_upper if step_size is None else float(step_size)
    T = rounds_from_kappa(kappa_hat, n, int(max_rounds)) if rounds is None else int(rounds)
    return eta, T, kappa_hat


def threshold_candidates(scale: float) -> np.ndarray:
    """``scale`` sqrt(e_j) for the upper edges e_j of ``DISTANCE_GRID``: every threshold a round can release.

    A round's threshold is ``scale`` sqrt(gamma_t) with gamma_t the upper edge
    of the released modal bin, computed by the same expression, so the table
    of a pass (:class:`~dpstats.methods.row_passes.ClipTable`) has the exact
    threshold among its candidates.
    """
    return np.array([scale * math.sqrt(DISTANCE_GRID.upper_edge(j)) for j in range(DISTANCE_GRID.size)])


def parallel_block_step(name: str, mu: float, parts: str) -> PrivacyStep:
    """The single ledger step of a fit whose parts touch disjoint rows (parallel composition).

    Each part is mu-GDP on its own rows, enforced by its own ledger; a
    replaced row lies in one part only, so the fit is mu-GDP.  Recorded as a
    Gaussian step of normalised sensitivity 1 and noise multiplier 1/mu.
    """
    return PrivacyStep(name, "gaussian", 1.0, "normalised (GDP of the block)", 1.0 / mu,
                       note=f"parallel composition over disjoint row sets: {parts}; each part is mu={mu:.4g}-GDP "
                            "on its own ledger, so the block is mu-GDP")


def held_notes(held: int, T: int, what: str) -> list[str]:
    """Report lines for the rounds that held the iterate because no reliable scale was released
    (:class:`~dpstats.methods.robust_estimators.PooledHistogram`; public facts of the run)."""
    if held == 0:
        return []
    line = (f"{held} of {T} rounds held the iterate: their {what}, pooled with the earlier ones at the same iterate, "
            "did not clear its noise, so they took no step (an arbitrary threshold could throw the iterate far away)")
    if held < T:
        return [line]
    return [line, ("no round took a step: the fit is the starting point w = 0 (with an intercept and the private "
                   "preconditioning: slopes 0, intercept the released centre of y); use more rows or a larger epsilon")]


def part_notes(label: str, ledger: PrivacyLedger) -> list[str]:
    """One report line per step of a part's own ledger (the itemisation of a parallel block)."""
    return [f"{label}: {s.name}: {s.describe_privacy()}" + (f" [{s.note}]" if s.note else "") for s in ledger.steps]


# ----------------------------------------------------------------------------- the public assignment of rows


@dataclass(frozen=True)
class RobGDLayout:
    """Which rows are S_a (estimates) and S_b (gradients), and the groups of the two estimators on S_a.

    Window j holds rows jW .. jW + W_j - 1 (W = ``WINDOW``; the last window
    may be shorter).  Row i of window j is at local position q = tau_j(i - jW)
    (:class:`~dpstats.methods.row_passes.WindowedOrder`); it is in S_a when
    q < A_j = b round(fraction W_j / b), with S_a index a = j A + q (A = A_j
    of a full window).  Distance group a // b, slot a mod b (A_j is a
    multiple of b, so a group lies in one window); norm group
    pi_a(a) // b_norm for a public pseudo-random bijection pi_a of
    range(n_a) (:class:`~dpstats.methods.blocks.RowPermutation`), so the norm
    groups are random groups of the whole of S_a.  Everything is a function of
    public n, the options and public draws, evaluated row by row.
    """

    n: int
    fraction: float
    b: int
    order: WindowedOrder
    norm: RowPermutation

    @staticmethod
    def a_rows(size: np.ndarray | int, fraction: float, b: int) -> np.ndarray:
        """A_j for windows of ``size`` rows: b round(fraction size / b), at most ``size``."""
        val = b * np.floor(fraction * np.asarray(size) / b + 0.5).astype(np.int64)
        return b * (np.minimum(np.asarray(size), val) // b)

    @classmethod
    def split_sizes(cls, n: int, fraction: float, b: int) -> tuple[int, int]:
        """(A, n_a): S_a rows of a full window and in all (public, before any draw)."""
        full, tail = divmod(n, WINDOW)
        per = int(cls.a_rows(WINDOW, fraction, b))
        return per, full * per + int(cls.a_rows(tail, fraction, b))

    @classmethod
    def draw(cls, n: int, fraction: float, b: int, rng: np.random.Generator) -> RobGDLayout:
        order = WindowedOrder.draw(n, WINDOW, rng)
        return cls(n, fraction, b, order, RowPermutation.draw(cls.split_sizes(n, fraction, b)[1], rng))

    @property
    def n_a(self) -> int:
        return self.split_sizes(self.n, self.fraction, self.b)[1]

    def a_index(self, rows: np.ndarray) -> np.ndarray:
        """S_a index of each row (int64), -1 for rows of S_b."""
        j, q = self.order.local_positions(rows)
        per = self.split_sizes(self.n, self.fraction, self.b)[0]
        return np.where(q < self.a_rows(self.order.window_size(j), self.fraction, self.b), j * per + q, -1)

    def norm_groups(self, a: np.ndarray, group_size: int) -> np.ndarray:
        """Norm group of each S_a index (-1 for the rows left over after n_a // group_size full groups)."""
        g = self.norm.positions(a) // group_size
        return np.where(g < self.n_a // group_size, g, -1)


# ----------------------------------------------------------------------------- the rows, in memory or in chunks


class _MemoryRows:
    """The rows in memory: S_a gathered once in S_a-index order, S_b in row order (the fast path of ``fit``)."""

    def __init__(self, X: np.ndarray, y: np.ndarray) -> None:
        self.X, self.y = X, y

    def prepare(self, layout: RobGDLayout) -> None:
        self.layout = layout
        a = layout.a_index(np.arange(layout.n))
        in_a = a >= 0
        order_a = np.empty(layout.n_a, dtype=np.int64)
        order_a[a[in_a]] = np.flatnonzero(in_a)
        self.Xa, self.ya = self.X[order_a], self.y[order_a]
        self.Xb, self.yb = self.X[~in_a], self.y[~in_a]
        self._clip: tuple[float, np.ndarray] | None = None

    def raw_reduce(self, fn: Any, combine: Any) -> Any:
        """fn on all the (untransformed) rows at once: the in-memory case of a pass."""
        return fn(self.X, self.y, 0)

    def standardise(self, st: Standardisation) -> None:
        """Replace the rows by (x - centre) / scale (elementwise: the chunked values exactly); before ``prepare``."""
        self.X, self.y = st.transform(self.X), st.response(self.y)

    def norm_means(self, group_size: int) -> np.ndarray:
        k = self.layout.n_a // group_size
        groups = self.layout.norm_groups(np.arange(self.layout.n_a), group_size)
        return norm_group_sums(self.Xa, groups, k) / group_size

    def clipped_gram(self, theta_x: float) -> np.ndarray:
        return clipped_gram(self.Xa, theta_x)

    def round(self, w: np.ndarray, theta_x: float, thetas: np.ndarray | None
              ) -> tuple[np.ndarray, Callable[[int], np.ndarray]]:
        counts = distance_counts(self.Xa, self.ya, w, self.layout.b)
        if self._clip is None or self._clip[0] != theta_x:
            self._clip = (theta_x, clip_factors(self.Xb, theta_x))
        c = self._clip[1]
        return counts, lambda j: separately_clipped_gradient(self.Xb, self.yb, w, c, thetas[j])  # type: ignore[index]


class _NormPass:
    """fn(X, y, offset) -> per-norm-group sums of ||x||^2 of the chunk's S_a rows (picklable)."""

    def __init__(self, layout: RobGDLayout, group_size: int) -> None:
        self.layout, self.group_size = layout, group_size

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        a = self.layout.a_index(np.arange(offset, offset + X.shape[0]))
        keep = a >= 0
        groups = self.layout.norm_groups(a[keep], self.group_size)
        return norm_group_sums(X[keep], groups, self.layout.n_a // self.group_size)


class _GramPass:
    """fn(X, y, offset) -> clipped Gram matrix of the chunk's S_a rows; ``select`` evaluates only those."""

    def __init__(self, layout: RobGDLayout, theta_x: float) -> None:
        self.layout, self.theta_x = layout, theta_x

    def select(self, offset: int, count: int) -> np.ndarray:
        return np.flatnonzero(self.layout.a_index(np.arange(offset, offset + count)) >= 0)

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        return clipped_gram(X, self.theta_x)


@dataclass
class _RoundPartial:
    counts: GroupedCounts
    table: ClipTable | None


def _add_rounds(a: _RoundPartial, b: _RoundPartial) -> _RoundPartial:
    a.counts = add_grouped_counts(a.counts, b.counts)
    a.table = None if a.table is None else add_clip_tables(a.table, b.table)  # type: ignore[arg-type]
    return a


class _RoundPass:
    """fn(X, y, offset) for round t: distance-histogram counts of S_a at w_t, and the clipped-gradient table of
    S_b at w_t for every threshold a round can release (None for the final histogram of DP-RobGD*)."""

    def __init__(self, layout: RobGDLayout, w: np.ndarray, theta_x: float, thetas: np.ndarray | None) -> None:
        self.layout, self.w, self.theta_x, self.thetas = layout, w, theta_x, thetas

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> _RoundPartial:
        a = self.layout.a_index(np.arange(offset, offset + X.shape[0]))
        in_a = a >= 0
        r = residuals(X, y, self.w)  # X w - y, never NaN (an overflowing residual is +-inf)
        aa, b = a[in_a], self.layout.b
        counts = GroupedCounts.of(aa // b, aa % b, r[in_a] ** 2, b, DISTANCE_GRID)
        if self.thetas is None:
            return _RoundPartial(counts, None)
        c = clip_factors(X, self.theta_x)
        coef = c * r
        coef[in_a] = 0.0  # the gradient is over S_b: rows of S_a add zero terms
        # an infinite residual is clipped at every threshold: its term is theta c sign(r) x (the table's limit)
        limit = np.where(in_a, 0.0, c * np.sign(r))
        return _RoundPartial(counts, ClipTable.of(X, coef, np.abs(r), self.thetas, limit=limit))


class _ChunkRows(StandardisedPasses):
    """The rows of a :class:`~dpstats.methods.sufficient.RowChunks`: one ``reduce`` pass per statistic."""

    def prepare(self, layout: RobGDLayout) -> None:
        self.layout = layout
        self.m = layout.n - layout.n_a

    def norm_means(self, group_size: int) -> np.ndarray:
        return self._reduce(_NormPass(self.layout, group_size), add_arrays) / group_size

    def clipped_gram(self, theta_x: float) -> np.ndarray:
        return self._reduce(_GramPass(self.layout, theta_x), add_arrays)

    def round(self, w: np.ndarray, theta_x: float, thetas: np.ndarray | None
              ) -> tuple[np.ndarray, Callable[[int], np.ndarray]]:
        part = self._reduce(_RoundPass(self.layout, w, theta_x, thetas), _add_rounds)
        if part.counts.pending_ids.size:  # pragma: no cover - a source that skipped rows
            raise RuntimeError("internal error: a distance group was not completed in this pass")
        table = part.table
        return part.counts.counts, lambda j: table.at(thetas, j) / self.m  # type: ignore[union-attr,arg-type]


# ----------------------------------------------------------------------------- the fit (one release code path)


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, **options: Any) -> MethodFit:
    X = np.asarray(X, dtype=float)
    return _fit(_MemoryRows(X, np.asarray(y, dtype=float)), X.shape[0], X.shape[1], ledger=ledger, rng=rng,
                **options)


def fit_chunks(rows: RowChunks, *, ledger: PrivacyLedger, rng: np.random.Generator, bounds: DataBounds | None,
               **options: Any) -> MethodFit:
    """DP-RobGD on rows read chunk by chunk (files, Dask): the fit of :func:`fit` for the same data and seed.

    Passes over the data: one for the norm histogram, one for the spectrum
    (unless ``rounds`` and ``step_size`` are given), then one per round, T in
    all (and one more for the final histogram of DP-RobGD*).  Round t's pass
    returns the counts of the distance histogram at w_t on S_a and, on S_b, a
    table of clipped-gradient sums at w_t for each of the 128 thresholds the
    histogram can release (:class:`~dpstats.methods.row_passes.ClipTable`,
    129 x d x 2 numbers); after the histogram is released, the gradient at
    its threshold is read from the table.  So each round is one pass,
    although its gradient depends on its own histogram.  Only aggregates
    leave a chunk (counts, tables, the norm-group sums, a d x d matrix),
    except that the rows of a distance group cut by a chunk edge (at most
    one window of ``WINDOW`` rows) travel with the partial result until the
    neighbouring chunk completes the group; the combined result of a pass
    holds none.  Privacy: every released quantity is the same function of
    the same rows as in :func:`fit` (the layout is evaluated row by row from
    public draws; sums are added in another order), so the proof in the
    module docstring applies unchanged.
    """
    return _fit(_ChunkRows(rows), rows.n, rows.d, ledger=ledger, rng=rng, **options)


@quiet
def _fit(rows: _MemoryRows | _ChunkRows, n: int, d: int, *, ledger: PrivacyLedger, rng: np.random.Generator,
         best_iterate: bool = False, gamma_fraction: float = 0.2, max_corruption: float = 0.05,
         clip_level: float = 0.05, covariate_tail: float | None = None, rounds: int | None = None,
         step_size: float | None = None, max_rounds: int = 2000, standardize: bool = True,
         intercept_index: int | None = None, column_ranges: Any = None,
         **options: Any) -> MethodFit:
    frac = check_fraction("gamma_fraction", gamma_fraction)
    check_public_options(d, intercept_index, column_ranges)
    max_corr = check_fraction("max_corruption", max_corruption, low_open=False, high=0.5)
    level = check_descent_options(clip_level=clip_level, covariate_tail=covariate_tail, rounds=rounds,
                                  step_size=step_size, max_rounds=max_rounds)
    b_dist = distance_group_size(max_corr)
    n_a = RobGDLayout.split_sizes(n, frac, b_dist)[1]
    if n_a < 10 * b_dist or n - n_a < d:
        raise MethodOptionError(f"gamma_fraction={frac} leaves too few rows in one part (n={n}, d={d})")
    tail = default_covariate_tail(n) if covariate_tail is None else float(covariate_tail)
    need_spectrum = rounds is None or step_size is None

    mu = gaussian_mu(ledger.epsilon, ledger.delta)
    mu, mu_pre = precondition_split(mu, standardize and releases_anything(d, intercept_index, column_ranges))
    rest_share = 1.0 - _NORM_SHARE - _SPECTRUM_SHARE
    hist_cap = max_histogram_releases(n_a // b_dist, b_dist, mu * math.sqrt(rest_share), min(1.0, b_dist * max_corr))
    round_cap = hist_cap - int(best_iterate)
    if round_cap < 2:
        raise InsufficientDataError(
            f"robgd: with n={n} (S_a = {n_a} rows) and this budget the private distance estimate cannot clear its "
            f"noise even for 2 rounds; use more rows, a larger epsilon or gamma_fraction (nothing was spent)")
    ledger.charge(parallel_block_step(
        "DP-RobGD (parallel block: S_a estimates || S_b gradients)", mu,
        f"S_a ({n_a} rows): norm histogram, {'spectrum, ' if need_spectrum else ''}one distance histogram per "
        f"round; S_b ({n - n_a} rows): one noisy clipped gradient per round"))
    ledger_a = PrivacyLedger(ledger.epsilon, ledger.delta)
    ledger_b = PrivacyLedger(ledger.epsilon, ledger.delta)

    # 0. private preconditioning on all rows (sequentially composed with the block): the algorithm below runs
    #    on z = (x - centre) / scale; nothing is spent when every non-intercept column has a public range
    st: Standardisation | None = None
    st_notes: list[str] = []
    if standardize:
        st, st_notes = release_standardisation(rows.raw_reduce, n, d, intercept_index=intercept_index,
                                               column_ranges=column_ranges,
                                               mu=mu_pre, rng=rng, ledger=ledger)
        rows.standardise(st)

    layout = RobGDLayout.draw(n, frac, b_dist, rng)
    rows.prepare(layout)
    m = n - n_a

    # 1. covariate scale (Alg. 3) and clipping norm
    norm_share = _NORM_SHARE if need_spectrum else _NORM_SHARE + _SPECTRUM_SHARE
    mu_n = mu * math.sqrt(norm_share)
    b_norm = norm_group_size(n_a, mu_n)
    norm_block = gaussian_block(rounds=1, mu_round=mu_n, ledger=ledger_a, name="norm histogram (Gamma ~ Tr Sigma)",
                                dimension=1, note=f"groups of {b_norm} rows, 4 bins per octave")
    gamma_norm = private_norm_from_means(rows.norm_means(b_norm), block=norm_block, rng=rng)
    theta_x = tail * math.sqrt(gamma_norm)

    # 2. step size and rounds
    info: dict[str, Any] = {"Gamma": gamma_norm, "Theta": theta_x, "covariate_tail": tail, "n_a": n_a, "n_b": m,
                            "distance_group_size": b_dist, "norm_group_size": b_norm}
    if need_spectrum:
        spec = release_spectrum(rows.clipped_gram(theta_x), n_a, theta_x, mu=mu * math.sqrt(_SPECTRUM_SHARE),
                                rng=rng, ledger=ledger_a)
        eta, T, kappa_hat = step_schedule(spec, n, max_rounds=max_rounds, step_size=step_size, rounds=rounds)
        T = min(T, round_cap) if rounds is None else T
        info.update(lambda_max=spec.lam_max, lambda_min=spec.lam_min, lambda_max_upper=spec.lam_max_upper,
                    lambda_min_lower=spec.lam_min_lower, kappa_hat=kappa_hat)
    else:
        eta, T = float(step_size), int(rounds)  # type: ignore[arg-type]
    info.update(step_size=eta, rounds=T, round_cap=round_cap)

    # 3-5. rounds: a distance estimate on S_a, a noisy clipped gradient on S_b
    n_hist = T + 1 if best_iterate else T
    dist_block = gaussian_block(rounds=n_hist, mu_round=mu * math.sqrt(rest_share / n_hist), ledger=ledger_a,
                                name="distance histograms (gamma_t)", dimension=1,
                                note=f"groups of {b_dist} rows, bins of ratio 2")
    grad_block = gaussian_block(rounds=T, mu_round=mu / math.sqrt(T), ledger=ledger_b,
                                name="noisy clipped gradients", dimension=d,
                                note="sensitivity 2 Theta theta_t / m in round t")
    tail_factor = math.sqrt(2.0 * math.log(2.0 / level))
    thetas = threshold_candidates(tail_factor)
    w = np.zeros(d)
    iterates, gammas, chosen_thetas = [], [], []
    pooled = PooledHistogram(dist_block.mu_round, start=1)  # bin 0 (exact zeros) is never the scale
    for _ in range(T):
        counts, gradient = rows.round(w, theta_x, thetas)
        j = pooled.add(release_histogram(counts, DISTANCE_GRID, block=dist_block, rng=rng))
        iterates.append(w)
        if j is None:  # no reliable residual scale at w yet: hold w (no gradient is released this round)
            gammas.append(math.inf)
            chosen_thetas.append(math.nan)
            continue
        pooled = PooledHistogram(dist_block.mu_round, start=1)
        gamma_t, theta_t = DISTANCE_GRID.upper_edge(j), float(thetas[j])
        noisy = grad_block.release(gradient(j), l2_sensitivity=2.0 * theta_x * theta_t / m, rng=rng)
        gammas.append(gamma_t)
        chosen_thetas.append(theta_t)
        w = w - eta * noisy
    held = int(np.isinf(gammas).sum())
    if best_iterate:
        iterates.append(w)
        counts, _ = rows.round(w, theta_x, None)
        j = pooled.add(release_histogram(counts, DISTANCE_GRID, block=dist_block, rng=rng))
        gammas.append(math.inf if j is None else DISTANCE_GRID.upper_edge(j))
        g = np.asarray(gammas)
        chosen = int(np.flatnonzero(g == g.min())[-1])
        w = iterates[chosen]
        info["chosen_iterate"] = chosen
    if st is not None:
        w = st.params_back(w)
        info.update(centre=st.centre, scale=st.scale, y_centre=st.y_centre)
    info.update(gammas=np.asarray(gammas), thetas=np.asarray(chosen_thetas), held_rounds=held,
                part_steps={"S_a": list(ledger_a.steps), "S_b": list(ledger_b.steps)})
    notes = [f"rows split by a public pseudo-random order, stratified by windows of {WINDOW} rows: S_a = {n_a} rows "
             f"for private estimates, S_b = {m} rows for gradients; parallel composition (disjoint rows)",
             *st_notes, *part_notes("S_a", ledger_a), *part_notes("S_b", ledger_b),
             *([f"rounds={T} exceeds {round_cap}, the most rounds whose distance histograms clear their noise at "
                f"this n and budget: many rounds may hold the iterate"] if T > round_cap else []),
             *held_notes(held, T, "residual-scale histogram"),
             f"T = {T} rounds, step size {eta:.4g}, covariate clip Theta = {theta_x:.4g}"
             + (f", output the iterate {info['chosen_iterate']} with the smallest gamma_t (DP-RobGD*)"
                if best_iterate else "")]
    if isinstance(rows, _ChunkRows):
        notes.append(f"data read in chunks: {rows.passes} passes over the data ("
                     f"{'preconditioning, ' if mu_pre else ''}norm histogram"
                     f"{', spectrum' if need_spectrum else ''}, then one per round: T = {T}"
                     f"{' + 1 final histogram' if best_iterate else ''})")
    assumptions = ("utility (not privacy) assumes sub-Weibull covariates and noise (Liu et al. Assumption 1), "
                   "that only labels are corrupted, and a corrupted fraction below max_corruption="
                   f"{max_corr:g} (Assumption 2)",)
    return MethodFit(params=w, assumptions=assumptions, notes=tuple(notes), info=info,
                     bse_unavailable_reason=("DP-RobGD releases the last iterate of noisy, clipped gradient descent; no private "
                                             "estimate of its sampling law under label corruption is known, so none is reported"))


fit.__doc__ = """DP-RobGD (Liu et al. 2023, Alg. 1); DP-RobGD* with ``best_iterate=True``.  See the module docstring.

    In memory; :func:`fit_chunks` is the same fit on rows read in chunks
    (T + 2 passes over the data).

    Parameters
    ----------
    best_iterate:
        Output the iterate with the smallest private distance estimate
        gamma_t (DP-RobGD*) instead of the last one.
    gamma_fraction:
        Fraction of rows in S_a (private estimates); the rest compute gradients.
    max_corruption:
        Public upper bound on the fraction of corrupted labels; sets the group
        size of the distance estimator.
    clip_level:
        Fraction of clean residuals the residual threshold theta_t may clip
        (under Gaussian tails).
    covariate_tail:
        Theta / sqrt(Gamma); default 1 + sqrt(2 ln(n/0.05)) (Gaussian
        covariates); 1 for covariates with ||x||^2 <= Tr(Sigma).
    rounds, step_size:
        Public T and eta; by default set from the private spectrum estimate
        (in the units of the standardised covariates when ``standardize``).
    max_rounds:
        Public cap on T (and so on the number of passes over chunked data).
    standardize:
        Private preconditioning (step 0 of the module docstring); False runs
        the paper's algorithm on the raw covariates.
    intercept_index, column_ranges:
        Public facts passed by the API (the intercept column; per-column
        ranges, None where unknown): columns with a range are centred and
        scaled by it without spending.  The response is always centred
        privately (with an intercept): a declared response range is a clip
        bound, usually far wider than the response's spread.
    """


SPEC = register(MethodSpec(
    name="robgd",
    title="DP-RobGD (label-robust private gradient descent)",
    citation="Liu, Jain, Kong, Oh & Suggala (NeurIPS 2023; arXiv 2301.13273), Algorithm 1",
    fit=fit,
    needs_bounds=False,
    regimes="no data bounds needed; labels possibly corrupted (up to max_corruption); large n "
            "(tens of thousands of rows); well-conditioned covariates (T grows with the condition number)",
    min_rows=lambda d: max(1000, 50 * d),
    options=("best_iterate", "gamma_fraction", "max_corruption", "clip_level", "covariate_tail", "rounds",
             "step_size", "max_rounds", "standardize", "intercept_index", "column_ranges"),
    theory=None,
    auto_rank=None,
    fit_chunks=fit_chunks,
))
