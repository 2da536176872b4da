"""DP-RobGD: private full-batch gradient descent that is robust to corrupted labels.

Liu, Jain, Kong, Oh & Suggala, "Label robust and differentially private
linear regression: computational and statistical efficiency" (NeurIPS 2023;
arXiv 2301.13273), Algorithm 1, with the Private Norm Estimator (Alg. 3) and
the Distance Estimator (Alg. 2); DP-RobGD* (the iterate with the smallest
distance estimate) with ``best_iterate=True``.  Before the algorithm, the
package's private preconditioning (``standardize``,
:mod:`~dpstats.methods.common.private_centring`) releases a centre and a
scale of every column, and the descent runs on the standardised rows.

A public pseudo-random layout (:class:`RobGDLayout`) splits the rows into
S_a (``gamma_fraction`` of them: private estimates of Tr(Sigma), of the
spectrum that sets the step size eta = 1/lambda_up and T = ceil(kappa_hat
ln(n) / 2) rounds, and of the residual scale gamma_t of each round) and S_b
(the rest, m rows: the gradients).  Round t releases a histogram of group
means of squared residuals on S_a, reads gamma_t from its reliable mode
(or holds the iterate when none clears the noise), and steps with
w_{t+1} = w_t - eta (g_t + N(0, s_t^2 I)), where g_t is the mean over S_b of
clip_Theta(x) clip_theta_t(w_t^T x - y), theta_t = sqrt(2 gamma_t
ln(2/clip_level)), and s_t = 2 Theta theta_t / (m mu_g).

Privacy (replace-one neighbours, n public, worst case: no assumption on the
data).  Every release is Gaussian with noise sd = L2 sensitivity / GDP
parameter: count histograms (sensitivity sqrt(2)), the spectrum of the
clipped Gram matrix (sqrt(2) Theta^2) and the clipped gradients
(2 Theta theta_t / m).  The preconditioning (mu_pre^2 = 0.1 mu^2, all rows)
composes with the descent (mu_block^2 = 0.9 mu^2); within the descent S_a
and S_b are disjoint public parts, each mu_block-GDP on its own ledger, so
the block is mu_block-GDP by parallel composition and the fit is exactly
(epsilon, delta)-DP.  Holding rounds, pooling histograms and reading modes
are post-processing.

Every pass is a :meth:`~dpstats.rows.base.Rows.reduce`: in-memory rows are
one chunk, files and Dask clusters many, and each round is one pass (the
pass returns the clipped-gradient sums at every threshold a round can
release, :class:`~dpstats.methods.common.row_passes.ClipTable`, or, for the
one local chunk that holds all the rows, the exact clipped gradient once the
threshold is released).

Proof: docs/proofs/robgd.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.common import planned_robust as planned
from dpstats.methods.common import private_centring as centring
from dpstats.methods.common import robust_descent as descent
from dpstats.methods.common.extremes import quiet, residuals
from dpstats.methods.common.geometric_histogram import HISTOGRAM_SENSITIVITY
from dpstats.methods.common.permutations import RowPermutation, WindowedOrder
from dpstats.methods.common.robust_descent import PRECONDITION_SHARE, threshold_candidates  # re-exported
from dpstats.methods.common.robust_estimators import (
    DISTANCE_GRID,
    PooledHistogram,
    clip_factors,
    distance_group_size,
    max_histogram_releases,
    norm_fallback,
    norm_group_size,
    norm_group_sums,
    private_norm_from_means,
    release_histogram,
    release_spectrum,
    separately_clipped_gradient,
)
from dpstats.methods.common.row_passes import (
    ChunkMemo,
    ClipTable,
    GroupedCounts,
    KeyCache,
    add_arrays,
    add_clip_tables,
    add_grouped_counts,
)
from dpstats.methods.spec import ErrorSplit, FitContext, MethodFit, MethodSpec, check_bool
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import GaussianBlock, gaussian_block
from dpstats.rates import ExpectedError, PlanningFacts, Rate, UpperRate, no_conditions
from dpstats.rows.base import Rows

__all__ = ["RobGDOptions", "fit", "RobGDLayout", "theory_rate", "SPEC", "WINDOW", "PRECONDITION_SHARE",
           "threshold_candidates", "expected_error"]

_NORM_SHARE = 0.05      # share of mu^2 on S_a for the norm histogram
_SPECTRUM_SHARE = 0.05  # share of mu^2 on S_a for the spectrum
WINDOW = 1024           # rows per window of the stratified split (and the most rows a distance group spans)

NO_INFERENCE = ("DP-RobGD releases the last iterate of noisy, clipped gradient descent; no private estimate of its "
                "sampling law under label corruption is known, so none is reported")


@dataclass(frozen=True)
class RobGDOptions(descent.DescentOptions):
    """Options of ``robgd``.

    Attributes
    ----------
    best_iterate : bool
        Output the iterate with the smallest released distance estimate gamma_t (DP-RobGD*) instead of the last.
    gamma_fraction : float
        Fraction of rows in S_a (private estimates), in (0, 1); the rest compute gradients.
    max_corruption : float
        Public upper bound on the fraction of corrupted labels, in [0, 0.5); sets the distance estimator's group
        size.
    clip_level, covariate_tail, rounds, step_size, max_rounds :
        As for :class:`~dpstats.methods.common.robust_descent.DescentOptions`.
    standardize : bool
        Private preconditioning; False runs the paper's algorithm on the covariates as given.
    """

    best_iterate: bool = False
    gamma_fraction: float = 0.2
    max_corruption: float = 0.05
    standardize: bool = True

    def __post_init__(self) -> None:
        check_bool(self.best_iterate, "best_iterate")
        check_bool(self.standardize, "standardize")
        descent.check_fraction("gamma_fraction", self.gamma_fraction)
        descent.check_fraction("max_corruption", self.max_corruption, low_open=False, high=0.5)
        super().__post_init__()


# ----------------------------------------------------------------------------- the public assignment of rows


@dataclass(frozen=True)
class _Keys:
    """The public keys of one chunk: its S_a rows (local indices) with their S_a indices, and its S_b rows."""

    a_rows: np.ndarray
    a: np.ndarray
    b_rows: np.ndarray


@dataclass(frozen=True)
class RobGDLayout:
    """Which rows are S_a (estimates) and S_b (gradients), and the groups of the two estimators on S_a.

    Window j holds rows jW .. jW + W_j - 1 (W = ``WINDOW``; the last window
    may be shorter).  Row i of window j is at local position q = tau_j(i - jW)
    (:class:`~dpstats.methods.common.permutations.WindowedOrder`); it is in
    S_a when q < A_j = b round(fraction W_j / b), with S_a index a = j A + q
    (A = A_j of a full window).  Distance group a // b, slot a mod b (A_j is a
    multiple of b, so a group lies in one window); norm group
    pi_a(a) // b_norm for a public pseudo-random bijection pi_a of
    range(n_a) (:class:`~dpstats.methods.blocks.RowPermutation`), so the norm
    groups are random groups of the whole of S_a.  Everything is a function of
    public n, the options and public draws, evaluated row by row; the keys of
    a chunk are memoised per (offset, count) (:meth:`keys`).
    """

    n: int
    fraction: float
    b: int
    order: WindowedOrder
    norm: RowPermutation
    cache: KeyCache = field(default_factory=KeyCache, compare=False, repr=False)

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

    def keys(self, offset: int, count: int) -> _Keys:
        """The keys of rows offset..offset+count-1 (memoised: the one in-memory chunk computes them once)."""
        return self.cache.get((offset, count), lambda: self._keys(offset, count))

    def _keys(self, offset: int, count: int) -> _Keys:
        a = self.a_index(np.arange(offset, offset + count, dtype=np.int64))
        in_a = a >= 0
        return _Keys(np.flatnonzero(in_a), a[in_a], np.flatnonzero(~in_a))


# ----------------------------------------------------------------------------- the passes


@dataclass
class _Parts:
    """A chunk's rows as the descent reads them: standardised, split into its S_a rows (with their S_a indices)
    and its S_b rows; the clip factors of the S_b rows at the covariate clip, computed once."""

    a: np.ndarray
    Xa: np.ndarray
    ya: np.ndarray
    Xb: np.ndarray
    yb: np.ndarray
    _clip: tuple[float, np.ndarray] | None = None

    def clip_factors(self, theta_x: float) -> np.ndarray:
        """min(1, Theta / ||x||) of the S_b rows."""
        if self._clip is None or self._clip[0] != theta_x:
            self._clip = (theta_x, clip_factors(self.Xb, theta_x))
        return self._clip[1]


class _Preparer:
    """Standardises a chunk and splits it by the layout (:class:`_Parts`); kept for the fit's later passes when
    the chunk is in memory (:class:`~dpstats.methods.common.row_passes.ChunkMemo`).  Picklable."""

    def __init__(self, layout: RobGDLayout, st: centring.Standardisation | None) -> None:
        self.layout, self.st = layout, st
        self.memo = ChunkMemo()

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> _Parts:
        return self.memo.get(X, y, offset, self._parts)

    def _parts(self, X: np.ndarray, y: np.ndarray, offset: int) -> _Parts:
        keys = self.layout.keys(offset, X.shape[0])
        Xa, ya = centring.standardised(self.st, X[keys.a_rows], y[keys.a_rows])
        Xb, yb = centring.standardised(self.st, X[keys.b_rows], y[keys.b_rows])
        return _Parts(keys.a, Xa, ya, Xb, yb)


class _NormPass:
    """fn(X, y, offset) -> per-norm-group sums of ||x||^2 of the chunk's S_a rows (picklable)."""

    def __init__(self, prepare: _Preparer, group_size: int) -> None:
        self.prepare, self.group_size = prepare, group_size

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        parts = self.prepare(X, y, offset)
        layout = self.prepare.layout
        groups = layout.norm_groups(parts.a, self.group_size)
        return norm_group_sums(parts.Xa, groups, layout.n_a // self.group_size)


class _ExactGradient:
    """The clipped gradient of the one local chunk that holds every row, computed once the threshold is
    released (the in-memory fast path: no table of all thresholds).  Never combined with another chunk."""

    def __init__(self, parts: _Parts, w: np.ndarray, theta_x: float) -> None:
        self.parts, self.w, self.theta_x = parts, w, theta_x

    def mean(self, thresholds: np.ndarray, j: int, m: int) -> np.ndarray:
        p = self.parts
        return separately_clipped_gradient(p.Xb, p.yb, self.w, p.clip_factors(self.theta_x), float(thresholds[j]))


@dataclass
class _RoundPartial:
    counts: GroupedCounts
    gradient: _ExactGradient | descent.TableGradient | None


def _add_rounds(a: _RoundPartial, b: _RoundPartial) -> _RoundPartial:
    a.counts = add_grouped_counts(a.counts, b.counts)
    if isinstance(a.gradient, descent.TableGradient) and isinstance(b.gradient, descent.TableGradient):
        a.gradient.table = add_clip_tables(a.gradient.table, b.gradient.table)
    elif a.gradient is not None or b.gradient is not None:  # pragma: no cover - an exact gradient holds all rows
        raise RuntimeError("internal error: a whole-data gradient met another chunk")
    return a


class _RoundPass:
    """fn(X, y, offset) for round t: the distance-histogram counts of S_a at w_t, and the clipped gradient of S_b
    at w_t for every threshold a round can release (``thresholds``; None for the final histogram of DP-RobGD*).
    ``exact``: the rows are local, so a chunk that holds all of them returns the exact gradient instead of the
    table (:class:`_ExactGradient`)."""

    def __init__(self, prepare: _Preparer, w: np.ndarray, theta_x: float, thresholds: np.ndarray | None,
                 exact: bool = False) -> None:
        self.prepare, self.w, self.theta_x, self.thresholds, self.exact = prepare, w, theta_x, thresholds, exact

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> _RoundPartial:
        parts = self.prepare(X, y, offset)
        b = self.prepare.layout.b
        r = residuals(parts.Xa, parts.ya, self.w)  # X w - y, never NaN (an overflowing residual is +-inf)
        counts = GroupedCounts.of(parts.a // b, parts.a % b, r ** 2, b, DISTANCE_GRID)
        if self.thresholds is None:
            return _RoundPartial(counts, None)
        if self.exact and offset == 0 and X.shape[0] == self.prepare.layout.n:
            return _RoundPartial(counts, _ExactGradient(parts, self.w, self.theta_x))
        rb = residuals(parts.Xb, parts.yb, self.w)
        c = parts.clip_factors(self.theta_x)
        # an infinite residual is clipped at every threshold: its term is theta c sign(r) x (the table's limit)
        table = ClipTable.of(parts.Xb, c * rb, np.abs(rb), self.thresholds, limit=c * np.sign(rb))
        return _RoundPartial(counts, descent.TableGradient(table))


# ----------------------------------------------------------------------------- the fit


@dataclass(frozen=True)
class _Plan:
    """The public facts of a fit, fixed before anything is read or spent."""

    n: int
    d: int
    b_dist: int
    n_a: int
    tail: float
    need_spectrum: bool
    mu: float       # the block's GDP parameter
    mu_pre: float   # the preconditioning's (0 when it releases nothing)
    round_cap: int

    @property
    def m(self) -> int:
        return self.n - self.n_a

    @property
    def rest_share(self) -> float:
        return 1.0 - _NORM_SHARE - _SPECTRUM_SHARE


def _plan(ctx: FitContext, options: RobGDOptions) -> _Plan:
    """Sizes, budget split and round cap from public facts; refuses, spending nothing, when they cannot work."""
    n, d = ctx.n, ctx.d
    centring.check_public_options(d, ctx.intercept_index, ctx.column_ranges or None)
    frac = float(options.gamma_fraction)
    b_dist = distance_group_size(float(options.max_corruption))
    n_a = RobGDLayout.split_sizes(n, frac, b_dist)[1]
    if n_a < 10 * b_dist or n - n_a < d:
        raise MethodOptionError(f"gamma_fraction={frac} leaves too few rows in one part (n={n}, d={d})")
    tail = descent.default_covariate_tail(n) if options.covariate_tail is None else float(options.covariate_tail)
    mu = gaussian_mu(ctx.epsilon, ctx.delta)
    mu, mu_pre = descent.precondition_split(
        mu, options.standardize and centring.releases_anything(d, ctx.intercept_index, ctx.column_ranges or None,
                                                               ctx.declared_ranges, ctx.response_range))
    rest = 1.0 - _NORM_SHARE - _SPECTRUM_SHARE
    hist_cap = max_histogram_releases(n_a // b_dist, b_dist, mu * math.sqrt(rest),
                                      min(1.0, b_dist * float(options.max_corruption)))
    round_cap = hist_cap - int(options.best_iterate)
    if round_cap < 2:
        raise InsufficientDataError(
            f"robgd: with n={n} (S_a = {n_a} rows) and this budget the private distance estimate cannot clear its "
            f"noise even for 2 rounds; use more rows, a larger epsilon or gamma_fraction (nothing was spent)")
    return _Plan(n, d, b_dist, n_a, tail, options.rounds is None or options.step_size is None, mu, mu_pre, round_cap)


#: Why :func:`fit` refuses under the public facts before reading any row: the sizes and the round cap of its plan.
public_refusal = descent.plan_refusal(_plan)


@dataclass
class _Run:
    """What the fit carries from step to step: its part ledgers, layout and released values."""

    plan: _Plan
    ledger_a: PrivacyLedger
    ledger_b: PrivacyLedger
    prepare: _Preparer | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _charge(ctx: FitContext, plan: _Plan) -> _Run:
    """Charge the parallel block (one step of GDP mu) before any draw; the parts get their own ledgers."""
    ctx.ledger.charge(descent.parallel_block_step(
        "DP-RobGD (parallel block: S_a estimates || S_b gradients)", plan.mu,
        f"S_a ({plan.n_a} rows): norm histogram, {'spectrum, ' if plan.need_spectrum else ''}one distance histogram "
        f"per round; S_b ({plan.m} rows): one noisy clipped gradient per round"))
    return _Run(plan, PrivacyLedger(ctx.epsilon, ctx.delta), PrivacyLedger(ctx.epsilon, ctx.delta))


def _covariate_clip(rows: Rows, ctx: FitContext, run: _Run) -> float:
    """Step 1: Gamma ~ Tr(Sigma) from the norm histogram on S_a (Alg. 3), or the public fallback d when its mode
    does not clear the noise; returns Theta = tail sqrt(Gamma)."""
    plan, prepare = run.plan, run.prepare
    assert prepare is not None
    mu_n = plan.mu * math.sqrt(_NORM_SHARE if plan.need_spectrum else _NORM_SHARE + _SPECTRUM_SHARE)
    b_norm = norm_group_size(plan.n_a, mu_n)
    block = gaussian_block(rounds=1, mu_round=mu_n, ledger=run.ledger_a, name="norm histogram (Gamma ~ Tr Sigma)",
                           dimension=1, note=f"groups of {b_norm} rows, 4 bins per octave")
    norm = private_norm_from_means(rows.reduce(_NormPass(prepare, b_norm), add_arrays) / b_norm, block=block,
                                   rng=ctx.rng, fallback=norm_fallback(plan.d))
    run.notes.extend(descent.norm_notes(norm, plan.d, standardised=prepare.st is not None))
    theta_x = plan.tail * math.sqrt(norm.gamma)
    run.diagnostics.update(Gamma=norm.gamma, Gamma_released=norm.released, Theta=theta_x, covariate_tail=plan.tail,
                           n_a=plan.n_a, n_b=plan.m, distance_group_size=plan.b_dist, norm_group_size=b_norm)
    return theta_x


def _schedule(rows: Rows, ctx: FitContext, run: _Run, options: RobGDOptions, theta_x: float) -> tuple[float, int]:
    """Step 2: (eta, T) from the private spectrum of the Theta-clipped Gram matrix on S_a, unless both given."""
    plan, prepare = run.plan, run.prepare
    assert prepare is not None
    if not plan.need_spectrum:
        eta, T = float(options.step_size), int(options.rounds)  # type: ignore[arg-type]
    else:
        gram = rows.reduce(descent.GramPass(prepare.layout, "a_rows", prepare.st, theta_x), add_arrays)
        spec = release_spectrum(gram, plan.n_a, theta_x, mu=plan.mu * math.sqrt(_SPECTRUM_SHARE), rng=ctx.rng,
                                ledger=run.ledger_a)
        eta, T, kappa_hat = descent.step_schedule(spec, plan.n, max_rounds=int(options.max_rounds),
                                                  step_size=options.step_size, rounds=options.rounds)
        T = min(T, plan.round_cap) if options.rounds is None else T
        run.diagnostics.update(lambda_max=spec.lam_max, lambda_min=spec.lam_min, lambda_max_upper=spec.lam_max_upper,
                               lambda_min_lower=spec.lam_min_lower, kappa_hat=kappa_hat)
    run.diagnostics.update(step_size=eta, rounds=T, round_cap=plan.round_cap)
    return eta, T


@dataclass
class _Descent:
    """The rounds' state: the iterates, the released gamma_t (inf for a held round), the thresholds used."""

    w: np.ndarray
    pooled: PooledHistogram
    iterates: list[np.ndarray] = field(default_factory=list)
    gammas: list[float] = field(default_factory=list)
    thetas: list[float] = field(default_factory=list)
    noise_sds: list[float] = field(default_factory=list)


def _blocks(run: _Run, T: int, best_iterate: bool, d: int) -> tuple[GaussianBlock, GaussianBlock]:
    """The distance-histogram block on S_a (T or T + 1 releases) and the gradient block on S_b (T releases)."""
    plan = run.plan
    n_hist = T + 1 if best_iterate else T
    dist = gaussian_block(rounds=n_hist, mu_round=plan.mu * math.sqrt(plan.rest_share / n_hist), ledger=run.ledger_a,
                          name="distance histograms (gamma_t)", dimension=1,
                          note=f"groups of {plan.b_dist} rows, bins of ratio 2")
    grad = gaussian_block(rounds=T, mu_round=plan.mu / math.sqrt(T), ledger=run.ledger_b,
                          name="noisy clipped gradients", dimension=d,
                          note="sensitivity 2 Theta theta_t / m in round t")
    return dist, grad


def _descend(rows: Rows, ctx: FitContext, run: _Run, options: RobGDOptions, theta_x: float, eta: float,
             T: int) -> _Descent:
    """Steps 3-5: T rounds, each one pass: a distance histogram on S_a at w_t and, when its pooled mode is
    reliable, a noisy clipped gradient step on S_b; otherwise the round holds w_t."""
    prepare = run.prepare
    assert prepare is not None
    dist, grad = _blocks(run, T, options.best_iterate, ctx.d)
    thresholds = descent.threshold_candidates(math.sqrt(2.0 * math.log(2.0 / float(options.clip_level))))
    state = _Descent(np.zeros(ctx.d), PooledHistogram(dist.mu_round, start=1))  # bin 0 (exact zeros) never
    for _ in range(T):
        part = rows.reduce(_RoundPass(prepare, state.w, theta_x, thresholds, exact=rows.local), _add_rounds)
        j = state.pooled.add(release_histogram(part.counts.counts, DISTANCE_GRID, block=dist, rng=ctx.rng))
        state.iterates.append(state.w)
        if j is None:  # no reliable residual scale at w yet: hold w (no gradient is released this round)
            state.gammas.append(math.inf)
            state.thetas.append(math.nan)
            state.noise_sds.append(math.nan)
            continue
        state.pooled = PooledHistogram(dist.mu_round, start=1)
        theta_t = float(thresholds[j])
        assert part.gradient is not None
        sensitivity = 2.0 * theta_x * theta_t / run.plan.m
        noisy = grad.release(part.gradient.mean(thresholds, j, run.plan.m), l2_sensitivity=sensitivity, rng=ctx.rng)
        state.gammas.append(DISTANCE_GRID.upper_edge(j))
        state.thetas.append(theta_t)
        state.noise_sds.append(sensitivity / grad.mu_round)
        state.w = state.w - eta * noisy
    if options.best_iterate:
        _choose_best(rows, ctx, run, state, dist, theta_x)
    return state


def _choose_best(rows: Rows, ctx: FitContext, run: _Run, state: _Descent, dist: GaussianBlock,
                 theta_x: float) -> None:
    """DP-RobGD*: one more distance histogram, at the last iterate; then w = the iterate with the smallest gamma_t
    (ties: the latest; a held round counts as infinite), post-processing of released values."""
    assert run.prepare is not None
    state.iterates.append(state.w)
    part = rows.reduce(_RoundPass(run.prepare, state.w, theta_x, None), _add_rounds)
    j = state.pooled.add(release_histogram(part.counts.counts, DISTANCE_GRID, block=dist, rng=ctx.rng))
    state.gammas.append(math.inf if j is None else DISTANCE_GRID.upper_edge(j))
    g = np.asarray(state.gammas)
    chosen = int(np.flatnonzero(g == g.min())[-1])
    state.w = state.iterates[chosen]
    run.diagnostics["chosen_iterate"] = chosen


def _report(run: _Run, options: RobGDOptions, T: int, eta: float, theta_x: float, held: int) -> list[str]:
    """The fit's report lines (public facts and released values)."""
    plan = run.plan
    pre_passes = 0 if run.prepare is None or run.prepare.st is None else run.prepare.st.passes
    passes = pre_passes + 1 + int(plan.need_spectrum) + T + int(options.best_iterate)
    setup = [name for name, used in (("preconditioning", plan.mu_pre > 0), ("norm histogram", True),
                                     ("spectrum", plan.need_spectrum)) if used]
    chosen = run.diagnostics.get("chosen_iterate")
    return [f"rows split by a public pseudo-random order, stratified by windows of {WINDOW} rows: S_a = {plan.n_a} "
            f"rows for private estimates, S_b = {plan.m} rows for gradients; parallel composition (disjoint rows)",
            *run.notes, *descent.part_notes("S_a", run.ledger_a), *descent.part_notes("S_b", run.ledger_b),
            *([f"rounds={T} exceeds {plan.round_cap}, the most rounds whose distance histograms clear their noise at "
               "this n and budget: many rounds may hold the iterate"] if plan.round_cap < T else []),
            *descent.held_notes(held, T, "residual-scale histogram"),
            f"T = {T} rounds, step size {eta:.4g}, covariate clip Theta = {theta_x:.4g}"
            + (f", output the iterate {chosen} with the smallest gamma_t (DP-RobGD*)" if options.best_iterate else ""),
            f"{passes} passes over the data ({', '.join(setup)}, then one per round: T = {T}"
            + (" + 1 final histogram" if options.best_iterate else "") + ")"]


@quiet
def fit(rows: Rows, ctx: FitContext, options: RobGDOptions) -> MethodFit:
    """DP-RobGD (Liu et al. 2023, Alg. 1); DP-RobGD* with ``best_iterate`` (module docstring).

    Parameters
    ----------
    rows : Rows
        The rows, read only by passes (T + 2 to T + 4 of them: preconditioning, norm histogram, spectrum, one
        per round, and one final histogram for DP-RobGD*).
    ctx : FitContext
        n, d, the ledger, the random source and the public facts (intercept position, column ranges).
    options : RobGDOptions
        The method's options.

    Returns
    -------
    MethodFit
        The released coefficients (mapped back from the standardised units); no inference.
    """
    plan = _plan(ctx, options)
    run = _charge(ctx, plan)
    st = descent.precondition(rows, ctx, run.plan.mu_pre, run.notes, run.diagnostics, moments_first=True)
    run.prepare = _Preparer(RobGDLayout.draw(ctx.n, float(options.gamma_fraction), plan.b_dist, ctx.rng), st)
    theta_x = _covariate_clip(rows, ctx, run)
    eta, T = _schedule(rows, ctx, run, options, theta_x)
    state = _descend(rows, ctx, run, options, theta_x, eta, T)
    held = int(np.isinf(state.gammas[:T]).sum())
    w = state.w if st is None else st.params_back(state.w)
    run.diagnostics.update(gammas=np.asarray(state.gammas), thetas=np.asarray(state.thetas), held_rounds=held,
                           part_steps={"S_a": list(run.ledger_a.steps), "S_b": list(run.ledger_b.steps)})
    split = _error_split(st, state, run.diagnostics, eta)
    assumptions = ("utility (not privacy) assumes sub-Weibull covariates and noise (Liu et al. Assumption 1), "
                   "that only labels are corrupted, and a corrupted fraction below max_corruption="
                   f"{float(options.max_corruption):g} (Assumption 2)",)
    return MethodFit(params=w, assumptions=assumptions, notes=tuple(_report(run, options, T, eta, theta_x, held)),
                     no_inference_reason=NO_INFERENCE, diagnostics=run.diagnostics, error_split=split)


SPLIT_SOURCE = ("the released noise sd of each round's gradient propagated through the linearised steps (released "
                "step size, rounds and held rounds; curvature Gamma/d, the mean eigenvalue from the released "
                "Tr(Sigma) estimate, in every direction of the standardised coordinates), and the early-stopping "
                "shrinkage of the released estimate; not included: the residual and covariate clipping's bias "
                "against least squares, the columns' correlations and the noise of the released centres and scales")


def _error_split(st: centring.Standardisation | None, state: _Descent, diagnostics: dict[str, Any],
                 eta: float) -> ErrorSplit | None:
    """The privacy part of the error of the output iterate (last, or DP-RobGD*'s choice), from released values
    (:func:`~dpstats.methods.common.robust_descent.error_split`; docs/proofs/robgd.md)."""
    T = len(state.noise_sds)
    weights = np.zeros(T + 1)
    weights[int(diagnostics.get("chosen_iterate", T))] = 1.0
    h = float(diagnostics["Gamma"]) / state.w.size
    err = descent.descent_error(state.noise_sds, weights, eta, h)
    return descent.error_split(st, state.w, err, descent.signal_scale(state.gammas, h, state.w.size), SPLIT_SOURCE)


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The second moment of a planned robgd fit's privacy error, in the method's units (:func:`dpstats.plan`).

    Its error block's model (:func:`_error_split`) run on expected released values
    (:mod:`~dpstats.methods.common.planned_robust`): the public sizes, budget split and round cap of
    :func:`_plan` (default options, the preconditioning on); Gamma and Theta from Tr of the standardised second
    moment; (eta, T) averaged over the spectrum's noise; each round's residual threshold from the expected modal
    bin of its distance histogram at the linearised iterate; the last iterate's noise and early-stopping bias in
    each eigendirection of the standardised design, plus the distance of S_b's least squares from all rows'.
    First order in the noise, and only as good as the assumptions (docs/guide/planning.md)."""
    options = RobGDOptions()
    n, d = facts.n, facts.d
    mu = descent.precondition_split(gaussian_mu(facts.epsilon, facts.delta), True)[0]
    b = distance_group_size(float(options.max_corruption))
    n_a = RobGDLayout.split_sizes(n, float(options.gamma_fraction), b)[1]
    m = n - n_a
    rest = 1.0 - _NORM_SHARE - _SPECTRUM_SHARE
    round_cap = max_histogram_releases(n_a // b, b, mu * math.sqrt(rest), min(1.0, b * float(options.max_corruption)))
    model = planned.standardised_model(facts)
    theta_x = descent.default_covariate_tail(n) * math.sqrt(planned.norm_reading(model.trace))
    spectrum_sd = math.sqrt(2.0) * theta_x**2 / (mu * math.sqrt(_SPECTRUM_SHARE)) / n_a
    schedules = planned.spectrum_schedules(model, theta_x, spectrum_sd, n, int(options.max_rounds))
    rounds = np.array([min(s.rounds, round_cap) for s in schedules])
    edges = {T: planned.modal_edge(b, n_a // b, HISTOGRAM_SENSITIVITY / (mu * math.sqrt(rest / T)))
             for T in set(rounds.tolist())}
    scale = math.sqrt(2.0 * math.log(2.0 / float(options.clip_level)))

    def last(T: int) -> np.ndarray:
        weights = np.zeros(T + 1)
        weights[T] = 1.0
        return weights

    covs = planned.planned_descent(model, np.array([s.eta for s in schedules]), rounds,
                                   tables=np.array([edges[T] for T in rounds]),
                                   sd_per_root_gamma=2.0 * theta_x * scale * np.sqrt(rounds) / (m * mu),
                                   sampling=np.zeros((len(schedules), d)), weights=last)
    cov = sum(s.weight * c for s, c in zip(schedules, covs, strict=True))
    lam = model.lam
    cov = cov + np.diag(np.where(lam > 0, model.residual_var * (1.0 / m - 1.0 / n) / np.maximum(lam, 1e-300), 0.0))
    cov_z = model.V @ cov @ model.V.T
    return ExpectedError(model.back @ cov_z @ model.back.T)


#: Why the units-of-sigma plan shows robgd's rate as no planning figure (``UpperRate.not_for_planning``; the plan with
#: bounds uses :func:`expected_error`).
NOT_FOR_PLANNING = ("the rate hides constants and logarithms, and the fit's privacy error follows from values it "
                    "releases (the covariate clip from its Tr(Sigma) estimate, the step size and rounds from its "
                    "spectrum, the residual clip of each round and the rounds it holds from its distance histograms), "
                    "so a fit's error can be many times the figure shown")


_RATE = Rate(
    "upper", "robgd upper bound", "Liu, Jain, Kong, Oh & Suggala (2023)",
    "sqrt(d/n) + kappa^(1/2) d/(n eps), kappa=1, logs and log(1/delta) hidden (Sigma-norm)",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d / (n * e),
    no_conditions, ("sub-Weibull covariates and noise; at most an alpha fraction of labels corrupted, "
                    "alpha below the error; error in Sigma-norm",),
    n_min=lambda d, s: float(descent.min_rows(d)))


def theory_rate(guarantee: str) -> UpperRate:
    """The upper rate of Liu et al. (2023), Thm 3 and 4 (its ``n_min`` is the method's public minimum n), not for
    planning in units of sigma (``NOT_FOR_PLANNING``); the plan with bounds uses the calibration
    :func:`expected_error`."""
    return UpperRate(_RATE, expected_error=expected_error, planned_error=planned.PLANNED_ERROR,
                     not_for_planning=NOT_FOR_PLANNING)


SPEC = MethodSpec(
    name="robgd",
    gaussian_only=True,
    title="DP-RobGD (label-robust private gradient descent)",
    citation="Liu, Jain, Kong, Oh & Suggala (NeurIPS 2023; arXiv 2301.13273), Algorithm 1",
    fit=fit,
    options=RobGDOptions,
    needs_bounds=False,
    unbounded_guarantee="the method clips each row's covariates and residual to privately released thresholds",
    regimes="no data bounds needed; labels possibly corrupted (up to max_corruption); large n "
            "(tens of thousands of rows); well-conditioned covariates (T grows with the condition number)",
    min_rows=descent.min_rows,
    theory_rate=theory_rate,
    public_refusal=public_refusal,
)
