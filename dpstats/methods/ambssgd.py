"""DP-AMBSSGD: one-pass private mini-batch SGD with adaptive clipping (a BASELINE for DP-RobGD).

Varshney, Thakurta & Jain, "(Nearly) optimal private linear regression via
adaptive clipping" (COLT 2022), the baseline of Liu et al. (2023).  It is not
robust to corrupted labels (it clips the whole per-example gradient) and
needs more samples than DP-RobGD when the covariates are ill-conditioned
(its batches are n/T rows).  Before the algorithm, unless the public
``trace`` describes the covariates as given, the package's private
preconditioning (:mod:`~dpstats.methods.common.private_centring`) releases a
centre and a scale of every column.

A public pseudo-random bijection of the row indices (:class:`AMBSSGDLayout`)
puts the first 10% of positions in S_0 and cuts the rest into T disjoint
mini-batches, each split into an estimation part (``est_fraction``) and a
gradient part.  On S_0: Gamma ~ Tr(Sigma) (the public ``trace``, or the
private norm histogram) gives the covariate scale Theta = ``covariate_tail``
sqrt(Gamma), and the private spectrum of the Theta-clipped Gram matrix gives
eta = 1/lambda_up and T = ceil(kappa_hat ln(n) / 2) (the lower bound on
lambda_min read no lower than one noise sd of its release; T capped so that
every batch's histogram can clear its noise).  Batch t releases a histogram of
squared residuals on its estimation part; from its reliable mode gamma_t the
clipping norm C_t = Theta sqrt(2 gamma_t ln(2/clip_level)), and
w_{t+1} = w_t - eta (g_t + N(0, s_t^2 I)) with g_t the mean of
clip_{C_t}(x (x^T w_t - y)) over the gradient part B_t' and
s_t = 2 C_t / (|B_t'| mu).  A batch whose (pooled) histogram does not clear
its noise holds the iterate.  The derived T (then eta) is lowered until the
noise feedback (:func:`noise_feedback`) is at most ``_MAX_FEEDBACK``, and a
released gamma_t far above the first ones stops the descent and warns
(:class:`~dpstats.errors.DivergedFitWarning`).  The output is the tail average of
w_{ceil(T/2)}, ..., w_T.

Privacy (replace-one, n public, worst case).  Every mechanism touches its own
rows: S_0 (norm histogram and spectrum, composed), each estimation part (one
histogram, sensitivity sqrt(2)), each gradient part (one clipped mean,
sensitivity 2 C_t / |B_t'|), all Gaussian at GDP parameter mu_block; the
parts are disjoint and public, so the block is mu_block-GDP by parallel
composition, composed with the preconditioning (mu_pre^2 = 0.1 mu^2) to
exactly (epsilon, delta)-DP.  Holding, pooling and averaging are
post-processing.

Every pass is a :meth:`~dpstats.rows.base.Rows.reduce`; in memory each round
reads only its batch's rows (their positions are memoised once), and a round
is one pass whatever the partition.

Proof: docs/proofs/ambssgd.md.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpstats.errors import DivergedFitWarning, InsufficientDataError, MethodOptionError
from dpstats.methods.common import planned_robust as planned
from dpstats.methods.common import private_centring as centring
from dpstats.methods.common import robust_descent as descent
from dpstats.methods.common.extremes import divide_by_norms, quiet, residuals, row_norms
from dpstats.methods.common.geometric_histogram import HISTOGRAM_SENSITIVITY
from dpstats.methods.common.permutations import RowPermutation
from dpstats.methods.common.robust_estimators import (
    DISTANCE_GRID,
    PooledHistogram,
    histogram_counts,
    max_disjoint_histograms,
    norm_fallback,
    norm_group_size,
    norm_group_sums,
    private_norm_from_means,
    release_histogram,
    release_spectrum,
)
from dpstats.methods.common.row_passes import ClipTable, KeyCache, add_arrays, add_clip_tables
from dpstats.methods.spec import ErrorSplit, FitContext, MethodFit, MethodSpec
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import GaussianBlock, gaussian_block
from dpstats.rates import ExpectedError, PlanningFacts, Rate, UpperRate, log_inv
from dpstats.rows.base import Rows
from dpstats.validation import shown

__all__ = ["AMBSSGDOptions", "fit", "AMBSSGDLayout", "batch_bounds", "theory_rate", "SPEC", "expected_error"]

_S0_FRACTION = 0.1

#: Largest noise feedback rho (:func:`noise_feedback`) the derived rounds and step size may reach: below 1 the
#: linearised steps keep the excess squared error from the noise under rho / (1 - rho) times the residual scale;
#: at rho >= 1 the bound allows it to grow without limit.
_MAX_FEEDBACK = 1.0

#: A released residual scale this many times the largest of the first ``_REFERENCE`` that stepped stops the descent.
_BLOWUP = 16.0
_REFERENCE = 3

#: The released lower bound on lambda_min is raised to this many noise sds of its release before kappa_hat is formed
#: (post-processing of released values and public facts; 0: no floor; docs/proofs/ambssgd.md).
_LAMBDA_MIN_FLOOR = 1.0

NO_INFERENCE = ("DP-AMBSSGD releases a tail average of noisy one-pass SGD; no private estimate of its sampling law is "
                "available, so none is reported")


@dataclass(frozen=True)
class AMBSSGDOptions(descent.DescentOptions):
    """Options of ``ambssgd``.

    Attributes
    ----------
    trace : float or None
        Public Tr(Sigma) = E||x||^2 of the covariates as given (the method's assumption); estimated privately on
        S_0 when None.
    est_fraction : float
        Fraction of each mini-batch used for the private error estimate, in (0, 1).
    clip_level, covariate_tail, rounds, step_size, max_rounds :
        As for :class:`~dpstats.methods.common.robust_descent.DescentOptions`.
    standardize : bool or None
        Private preconditioning; None (default): on unless ``trace`` is given (both together are refused).
    """

    trace: float | None = None
    est_fraction: float = 0.2
    standardize: bool | None = None

    def __post_init__(self) -> None:
        descent.check_fraction("est_fraction", self.est_fraction)
        if self.standardize is not None and not isinstance(self.standardize, bool):
            raise MethodOptionError(f"standardize must be True, False or None, got {shown(self.standardize)}")
        if self.standardize and self.trace is not None:
            raise MethodOptionError("trace states Tr(Sigma) of the raw covariates, which standardize=True would "
                                    "change: pass one of them")
        super().__post_init__()
        if self.trace is not None:
            try:
                ok = math.isfinite(self.trace) and self.trace > 0
            except TypeError:
                ok = False
            if not ok:
                raise MethodOptionError(f"trace must be a positive number, got {shown(self.trace)}")

    @property
    def standardising(self) -> bool:
        """Whether the private preconditioning runs (``standardize``, by default: no ``trace``)."""
        return self.trace is None if self.standardize is None else bool(self.standardize)


# ----------------------------------------------------------------------------- the public assignment of rows


@dataclass(frozen=True)
class _Keys:
    """The public keys of one chunk: its S_0 rows (local indices) with their positions, and its other rows
    sorted by their place in the rest (``places`` increasing)."""

    s0_rows: np.ndarray
    s0_positions: np.ndarray
    rest_rows: np.ndarray
    places: np.ndarray

    def batch(self, lo: int, hi: int) -> np.ndarray:
        """The chunk's rows (local indices, in place order) at places lo..hi-1."""
        i, j = np.searchsorted(self.places, [lo, hi])
        return self.rest_rows[i:j]


@dataclass(frozen=True)
class AMBSSGDLayout:
    """Row i is at position p = pi(i) of a public pseudo-random bijection of range(n)
    (:class:`~dpstats.methods.blocks.RowPermutation`): in S_0 when p < n_0, else at place p - n_0 of the rest,
    which is cut into T mini-batches, each into an estimation part and a gradient part (:func:`batch_bounds`).
    The keys of a chunk are memoised per (offset, count) (:meth:`keys`)."""

    perm: RowPermutation
    n0: int
    cache: KeyCache = field(default_factory=KeyCache, compare=False, repr=False)

    def positions(self, offset: int, count: int) -> np.ndarray:
        return self.perm.positions(np.arange(offset, offset + count, dtype=np.int64))

    def norm_groups(self, positions: np.ndarray, group_size: int) -> np.ndarray:
        """Norm group p // group_size of the S_0 rows (-1 for other rows and those after the last full group)."""
        k = self.n0 // group_size
        g = positions // group_size
        return np.where(g < k, g, -1)

    def keys(self, offset: int, count: int) -> _Keys:
        """The keys of rows offset..offset+count-1 (memoised: the one in-memory chunk computes them once)."""
        return self.cache.get((offset, count), lambda: self._keys(offset, count))

    def _keys(self, offset: int, count: int) -> _Keys:
        p = self.positions(offset, count)
        s0 = p < self.n0
        rest = np.flatnonzero(~s0)
        order = np.argsort(p[rest], kind="stable")
        return _Keys(np.flatnonzero(s0), p[s0], rest[order], p[rest][order] - self.n0)


def batch_bounds(rest: int, T: int, est: float, t: int) -> tuple[int, int, int]:
    """(lo, cut, hi): batch t is places lo..hi-1 of the rest; its estimation part lo..cut-1 (public)."""
    edges = np.linspace(0, rest, T + 1).astype(int)
    lo, hi = int(edges[t]), int(edges[t + 1])
    return lo, lo + max(1, int(round(est * (hi - lo)))), hi


def smallest_gradient_part(rest: int, T: int, est: float) -> int:
    """The fewest rows of a gradient part B_t' over the T mini-batches (:func:`batch_bounds`; public)."""
    return min(hi - cut for lo, cut, hi in (batch_bounds(rest, T, est, t) for t in range(T)))


def noise_feedback(eta: float, theta: float, d: int, part: int, mu: float, clip_level: float) -> float:
    """rho = 8 eta d Theta^2 ln(2/clip_level) / (|B'|^2 mu^2): the excess squared error one round's gradient
    noise adds, per unit of residual scale gamma_t, summed over its stay in the linearised descent.

    A step adds N(0, s_t^2 I) times eta with s_t = 2 C_t / (|B'| mu) and C_t^2 = 2 Theta^2 gamma_t
    ln(2/clip_level); in an eigendirection of curvature lambda (eta lambda <= 1) it adds eta^2 s_t^2 lambda to the
    excess error, which decays by (1 - eta lambda)^2 per step, so it totals eta s_t^2 / (2 - eta lambda) <=
    eta s_t^2, and d directions give at most rho gamma_t.  As gamma_t is the residual scale, excess included,
    rho >= 1 lets the noise feed on itself (docs/proofs/ambssgd.md).  Public options and released values only.
    """
    return 8.0 * eta * d * theta * theta * math.log(2.0 / clip_level) / (float(part) ** 2 * mu * mu)


def stable_schedule(eta: float, T: int, *, theta: float, d: int, rest: int, est: float, mu: float,
                    clip_level: float, fixed_rounds: bool, fixed_step: bool) -> tuple[float, int]:
    """(eta, T) with :func:`noise_feedback` at most ``_MAX_FEEDBACK``: fewer rounds (larger batches) unless
    ``fixed_rounds``, then a smaller step unless ``fixed_step`` (post-processing of released values and public
    facts)."""
    def rho(e: float, t: int) -> float:
        return noise_feedback(e, theta, d, smallest_gradient_part(rest, t, est), mu, clip_level)

    if not fixed_rounds:
        while T > 2 and rho(eta, T) > _MAX_FEEDBACK:
            T -= 1
    if not fixed_step:
        r = rho(eta, T)
        if r > _MAX_FEEDBACK:
            eta *= _MAX_FEEDBACK / r
    return eta, T


# ----------------------------------------------------------------------------- the passes


@quiet
def _error_counts(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``DISTANCE_GRID`` counts of the squared residuals of an estimation part (groups of one row): a residual
    is never NaN (:func:`~dpstats.methods.common.extremes.residuals`), and a square that overflows is inf, which lands
    in the last bin."""
    r = residuals(X, y, w)  # X w - y: its square is that of y - X w, bit for bit
    return histogram_counts(r * r, DISTANCE_GRID)


@quiet
def _clipped_coefficients(X: np.ndarray, r: np.ndarray, norms: np.ndarray, clip: float) -> np.ndarray:
    """v_i with v_i x_i = clip_C(r_i x_i), the per-example gradient clipped to norm C = ``clip``.

    v_i = r_i min(1, C / (|r_i| ||x_i||)) where that is finite (bit for bit the plain formula); where the
    product |r_i| ||x_i|| or r_i itself overflowed, the gradient's norm exceeds every double and its clipped
    value is C sign(r_i) x_i / ||x_i||, so v_i = sign(r_i) C / ||x_i||
    (:func:`~dpstats.methods.common.extremes.divide_by_norms`).  Each v_i depends on row i (and public C, released
    w) only, and ||v_i x_i|| <= C (up to rounding) whatever the row."""
    scale = np.abs(r) * norms
    v = r * np.minimum(1.0, clip / np.maximum(scale, np.finfo(float).tiny))
    bad = ~np.isfinite(scale) | ~np.isfinite(v)
    if bad.any():
        v[bad] = np.sign(r[bad]) * divide_by_norms(clip, X[bad], norms[bad])
    return v


class _NormPass:
    """fn(X, y, offset) -> per-group sums of ||x||^2 over the chunk's S_0 rows (standardised; picklable)."""

    def __init__(self, layout: AMBSSGDLayout, st: centring.Standardisation | None, group_size: int) -> None:
        self.layout, self.st, self.group_size = layout, st, group_size

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        keys = self.layout.keys(offset, X.shape[0])
        X0 = centring.standardised(self.st, X[keys.s0_rows], y[keys.s0_rows])[0]
        groups = self.layout.norm_groups(keys.s0_positions, self.group_size)
        return norm_group_sums(X0, groups, self.layout.n0 // self.group_size)


class _ExactGradient:
    """The clipped gradient of a batch's gradient part, from the one local chunk that holds every row, computed
    once the clipping norm is released (the in-memory fast path: no table).  Never combined with another chunk's."""

    def __init__(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> None:
        self.X, self.y, self.w = X, y, w

    @quiet
    def mean(self, clips: np.ndarray, j: int, size: int) -> np.ndarray:
        coef = _clipped_coefficients(self.X, residuals(self.X, self.y, self.w), row_norms(self.X), float(clips[j]))
        return self.X.T @ coef / size


@dataclass
class _RoundPartial:
    counts: np.ndarray
    gradient: _ExactGradient | descent.TableGradient


def _add_rounds(a: _RoundPartial, b: _RoundPartial) -> _RoundPartial:
    table = descent.TableGradient
    if not (isinstance(a.gradient, table) and isinstance(b.gradient, table)):  # pragma: no cover
        raise RuntimeError("internal error: a whole-batch gradient met another chunk")
    a.counts += b.counts
    a.gradient.table = add_clip_tables(a.gradient.table, b.gradient.table)
    return a


class _RoundPass:
    """fn(X, y, offset) for mini-batch t at w_t: the error-histogram counts of its estimation part and the
    clipped gradient of its gradient part at every clipping norm a round can release (``clips``); with
    ``exact`` (local rows), a chunk that holds every row returns the exact gradient instead."""

    def __init__(self, layout: AMBSSGDLayout, st: centring.Standardisation | None, bounds: tuple[int, int, int],
                 w: np.ndarray, clips: np.ndarray, exact: bool = False) -> None:
        self.layout, self.st, self.bounds, self.w, self.clips, self.exact = layout, st, bounds, w, clips, exact

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> _RoundPartial:
        keys = self.layout.keys(offset, X.shape[0])
        lo, cut, hi = self.bounds
        est, grad = keys.batch(lo, cut), keys.batch(cut, hi)
        Xe, ye = centring.standardised(self.st, X[est], y[est])
        Xg, yg = centring.standardised(self.st, X[grad], y[grad])
        counts = _error_counts(Xe, ye, self.w)
        if self.exact and offset == 0 and X.shape[0] == self.layout.perm.n:
            return _RoundPartial(counts, _ExactGradient(Xg, yg, self.w))
        r = residuals(Xg, yg, self.w)
        norms = row_norms(Xg)
        # a term r x whose size overflowed is clipped at every norm: its direction sign(r) x / ||x|| is the limit
        limit = np.sign(r) * divide_by_norms(1.0, Xg, norms)
        table = ClipTable.of(Xg, r, np.abs(r) * norms, self.clips, limit=limit)
        return _RoundPartial(counts, descent.TableGradient(table))


# ----------------------------------------------------------------------------- the fit


@dataclass(frozen=True)
class _Plan:
    """The public facts of a fit, fixed before anything is read or spent."""

    n: int
    n0: int
    tail: float
    need_spectrum: bool
    mu: float
    mu_pre: float
    round_cap: int

    @property
    def rest(self) -> int:
        return self.n - self.n0


def _plan(ctx: FitContext, options: AMBSSGDOptions) -> _Plan:
    """Sizes, budget split and round cap from public facts; refuses, spending nothing, when they cannot work."""
    n, d = ctx.n, ctx.d
    centring.check_public_options(d, ctx.intercept_index, ctx.column_ranges or None)
    n0 = int(round(_S0_FRACTION * n))
    if n0 < 10 or n - n0 < 4:
        raise MethodOptionError(f"too few rows (n={n}) for DP-AMBSSGD")
    tail = descent.default_covariate_tail(n) if options.covariate_tail is None else float(options.covariate_tail)
    mu = gaussian_mu(ctx.epsilon, ctx.delta)
    mu, mu_pre = descent.precondition_split(
        mu, options.standardising and centring.releases_anything(d, ctx.intercept_index, ctx.column_ranges or None,
                                                                 ctx.declared_ranges, ctx.response_range))
    round_cap = min((n - n0) // 4, max_disjoint_histograms(int(float(options.est_fraction) * (n - n0)), mu))
    if round_cap < 2:
        raise InsufficientDataError(
            f"ambssgd: with n={n} and this budget the per-batch error estimate cannot clear its noise even for 2 "
            "batches; use more rows or a larger epsilon (nothing was spent)")
    return _Plan(n, n0, tail, options.rounds is None or options.step_size is None, mu, mu_pre, round_cap)


#: Why :func:`fit` refuses under the public facts before reading any row: the sizes and the round cap of its plan.
public_refusal = descent.plan_refusal(_plan)


@dataclass
class _Run:
    """What the fit carries from step to step: its part ledgers, layout, map and released values."""

    plan: _Plan
    ledger_0: PrivacyLedger
    ledger_est: PrivacyLedger
    ledger_grad: PrivacyLedger
    layout: AMBSSGDLayout | None = None
    st: centring.Standardisation | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _charge(ctx: FitContext, plan: _Plan, options: AMBSSGDOptions) -> _Run:
    """Charge the parallel block (one step of GDP mu) before any draw; the part families get their own ledgers."""
    ctx.ledger.charge(descent.parallel_block_step(
        "DP-AMBSSGD (parallel block: S_0 || disjoint mini-batches)", plan.mu,
        f"S_0 ({plan.n0} rows): {'norm histogram, ' if options.trace is None else ''}"
        f"{'spectrum' if plan.need_spectrum else 'nothing'}; each mini-batch: one error histogram on its estimation "
        "part, one noisy clipped gradient on its gradient part"))
    return _Run(plan, PrivacyLedger(ctx.epsilon, ctx.delta), PrivacyLedger(ctx.epsilon, ctx.delta),
                PrivacyLedger(ctx.epsilon, ctx.delta))


def _setup(rows: Rows, ctx: FitContext, run: _Run, options: AMBSSGDOptions) -> tuple[float, float, int]:
    """On S_0: Gamma (``trace``, or the private norm histogram with its public fallback d), Theta, and (eta, T)
    from the private spectrum unless both are given; T capped publicly.  Returns (Theta, eta, T)."""
    plan, layout = run.plan, run.layout
    assert layout is not None
    mu_0 = plan.mu / math.sqrt(max(int(options.trace is None) + int(plan.need_spectrum), 1))
    if options.trace is None:
        b = norm_group_size(plan.n0, mu_0)
        block = gaussian_block(rounds=1, mu_round=mu_0, ledger=run.ledger_0, name="norm histogram (Gamma ~ Tr Sigma)",
                               note=f"groups of {b} rows, 4 bins per octave")
        sums = rows.reduce(_NormPass(layout, run.st, b), add_arrays)
        norm = private_norm_from_means(sums / b, block=block, rng=ctx.rng, fallback=norm_fallback(ctx.d))
        run.notes.extend(descent.norm_notes(norm, ctx.d, standardised=run.st is not None))
        run.diagnostics["Gamma_released"] = norm.released
        gamma_norm = norm.gamma
    else:
        gamma_norm = float(options.trace)
    theta_x = plan.tail * math.sqrt(gamma_norm)
    if plan.need_spectrum:
        gram = rows.reduce(descent.GramPass(layout, "s0_rows", run.st, theta_x), add_arrays)
        spec = release_spectrum(gram, plan.n0, theta_x, mu=mu_0, rng=ctx.rng, ledger=run.ledger_0)
        if _LAMBDA_MIN_FLOOR > 0:
            spec = dataclasses.replace(spec, lam_min_lower=max(spec.lam_min_lower, _LAMBDA_MIN_FLOOR * spec.noise_sd))
        eta, T, kappa_hat = descent.step_schedule(spec, plan.n, max_rounds=int(options.max_rounds),
                                                  step_size=options.step_size, rounds=options.rounds)
        run.diagnostics.update(lambda_max_upper=spec.lam_max_upper, lambda_min_lower=spec.lam_min_lower,
                               kappa_hat=kappa_hat)
    else:
        eta, T = float(options.step_size), int(options.rounds)  # type: ignore[arg-type]
    T = min(T, plan.round_cap)  # public: batches large enough for their error histogram, >= 2 rows per part
    eta_0, T_0 = eta, T
    eta, T = stable_schedule(eta, T, theta=theta_x, d=ctx.d, rest=plan.rest, est=float(options.est_fraction),
                             mu=plan.mu, clip_level=float(options.clip_level), fixed_rounds=options.rounds is not None,
                             fixed_step=options.step_size is not None)
    if (eta, T) != (eta_0, T_0):
        run.notes.append(f"rounds {T_0} -> {T}, step size {eta_0:.4g} -> {eta:.4g}: each step's gradient noise, which "
                         "grows with the residual scale through the clipping norm, kept below what the descent removes "
                         f"(noise feedback at most {_MAX_FEEDBACK:g}; docs/proofs/ambssgd.md)")
    run.diagnostics.update(noise_feedback=noise_feedback(
        eta, theta_x, ctx.d, smallest_gradient_part(plan.rest, T, float(options.est_fraction)), plan.mu,
        float(options.clip_level)))
    run.diagnostics.update(Gamma=gamma_norm, Theta=theta_x, step_size=eta, rounds=T, round_cap=plan.round_cap)
    return theta_x, eta, T


def _blocks(run: _Run, T: int, d: int) -> tuple[GaussianBlock, GaussianBlock]:
    """One error histogram and one gradient per mini-batch, each on its own rows (disjoint releases)."""
    est = gaussian_block(rounds=T, mu_round=run.plan.mu, ledger=run.ledger_est, name="error histograms (gamma_t)",
                         disjoint=True, note="one per mini-batch, on its estimation part")
    grad = gaussian_block(rounds=T, mu_round=run.plan.mu, ledger=run.ledger_grad, name="noisy clipped gradients",
                          disjoint=True, dimension=d,
                          note="one per mini-batch, sensitivity 2 C_t / |B_t'| on its gradient part")
    return est, grad


def _descend(rows: Rows, ctx: FitContext, run: _Run, options: AMBSSGDOptions, theta_x: float, eta: float,
             T: int) -> tuple[list[np.ndarray], list[float], list[float]]:
    """The T mini-batches, one pass each; returns the iterates w_0..w_T (a held batch repeats its iterate), the
    released gamma_t (inf for a held batch) and the noise sd of each batch's gradient (NaN for a held batch).

    A batch whose released gamma_t is ``_BLOWUP`` times the largest of the first ``_REFERENCE`` that stepped stops the
    descent: it and the batches after it hold (they are not read), ``run.diagnostics["diverged_at"]`` is t and
    ``"diverged_reference"`` the largest of those first scales (post-processing of released values)."""
    assert run.layout is not None
    est_block, grad_block = _blocks(run, T, ctx.d)
    clips = descent.threshold_candidates(theta_x * math.sqrt(2.0 * math.log(2.0 / float(options.clip_level))))
    w = np.zeros(ctx.d)
    iterates, gammas, noise_sds = [w], [], []
    pooled = PooledHistogram(est_block.mu_round, start=1)  # bin 0 (exact zeros) is never the scale
    for t in range(T):
        bounds = batch_bounds(run.plan.rest, T, float(options.est_fraction), t)
        part = rows.reduce(_RoundPass(run.layout, run.st, bounds, w, clips, exact=rows.local), _add_rounds)
        j = pooled.add(release_histogram(part.counts, DISTANCE_GRID, block=est_block, rng=ctx.rng))
        if j is None:  # no reliable error scale at w yet: hold w (this batch's gradient part is not used)
            iterates.append(w)
            gammas.append(math.inf)
            noise_sds.append(math.nan)
            continue
        pooled = PooledHistogram(est_block.mu_round, start=1)
        first = [g for g in gammas if math.isfinite(g)][:_REFERENCE]
        if len(first) == _REFERENCE and DISTANCE_GRID.upper_edge(j) >= _BLOWUP * max(first):
            run.diagnostics.update(diverged_at=t, diverged_reference=max(first))
            gammas.append(DISTANCE_GRID.upper_edge(j))
            noise_sds.append(math.nan)
            iterates.extend([w] * (T - t))
            gammas.extend([math.inf] * (T - t - 1))
            noise_sds.extend([math.nan] * (T - t - 1))
            break
        size = bounds[2] - bounds[1]
        sensitivity = 2.0 * clips[j] / size
        noisy = grad_block.release(part.gradient.mean(clips, j, size), l2_sensitivity=sensitivity, rng=ctx.rng)
        w = w - eta * noisy
        iterates.append(w)
        gammas.append(DISTANCE_GRID.upper_edge(j))
        noise_sds.append(sensitivity / grad_block.mu_round)
    return iterates, gammas, noise_sds


def _report(run: _Run, options: AMBSSGDOptions, T: int, eta: float, held: int) -> list[str]:
    """The fit's report lines (public facts and released values)."""
    plan = run.plan
    setup = [name for name, used in (("preconditioning", plan.mu_pre > 0), ("norm histogram", options.trace is None),
                                     ("spectrum", plan.need_spectrum)) if used]
    stop = run.diagnostics.get("diverged_at")
    read = T if stop is None else int(stop) + 1  # batches after a stop on divergence are not read
    passes = len(setup) - int(plan.mu_pre > 0) + (0 if run.st is None else run.st.passes) + read
    notes = ["BASELINE (Varshney et al. 2022): not robust to corrupted labels",
             f"rows split by a public pseudo-random order into S_0 ({plan.n0} rows) and {T} disjoint mini-batches; "
             "parallel composition",
             *run.notes, *descent.part_notes("S_0", run.ledger_0),
             *descent.part_notes("estimation parts", run.ledger_est),
             *descent.part_notes("gradient parts", run.ledger_grad),
             *descent.held_notes(held, T, "batch's error histogram"),
             f"T = {T} rounds, step size {eta:.4g}, tail average of the last {T + 1 - math.ceil(T / 2)} iterates"]
    if options.trace is not None:
        notes.append(f"Tr(Sigma) = {options.trace:g} was given as public knowledge (trace=)")
    batches = f"then one per mini-batch: {read} of T = {T}" if read < T else f"then one per mini-batch: T = {T}"
    notes.append(f"{passes} passes over the data (" + ", ".join([*setup, batches]) + ")")
    return notes


@quiet
def fit(rows: Rows, ctx: FitContext, options: AMBSSGDOptions) -> MethodFit:
    """DP-AMBSSGD (Varshney et al. 2022), a baseline (module docstring).

    Parameters
    ----------
    rows : Rows
        The rows, read only by passes (T + 1 to T + 3: preconditioning, norm histogram, spectrum, one per
        mini-batch).
    ctx : FitContext
        n, d, the ledger, the random source and the public facts (intercept position, column ranges).
    options : AMBSSGDOptions
        The method's options.

    Returns
    -------
    MethodFit
        The tail average of the iterates (mapped back from the standardised units); no inference.
    """
    plan = _plan(ctx, options)
    run = _charge(ctx, plan, options)
    run.st = descent.precondition(rows, ctx, run.plan.mu_pre, run.notes, run.diagnostics)
    run.layout = AMBSSGDLayout(RowPermutation.draw(ctx.n, ctx.rng), plan.n0)
    theta_x, eta, T = _setup(rows, ctx, run, options)
    iterates, gammas, noise_sds = _descend(rows, ctx, run, options, theta_x, eta, T)
    stop = run.diagnostics.get("diverged_at")
    held = int(np.isinf(gammas[:stop]).sum())
    warned: tuple[tuple[type[Warning], str], ...] = ()
    if stop is None:
        tail = np.mean(iterates[math.ceil(T / 2):], axis=0)
    else:
        best = int(np.argmin(gammas[:stop + 1]))  # gamma_s is the residual scale at w_s (released)
        tail = iterates[best]
        first = float(run.diagnostics["diverged_reference"])
        message = (f"ambssgd diverged: the released residual scale of mini-batch {stop + 1} of {T} is "
                   f"{gammas[stop]:.3g}, {gammas[stop] / first:.3g} times the largest of the first {_REFERENCE} "
                   f"steps' ({first:.3g}, in the standardised units): each step's noise grows with it through the "
                   "clipping norm and outran the descent. The fit stopped and returned the iterate w_"
                   f"{best}, the one with the smallest released residual scale ({gammas[best]:.3g}); its error can "
                   "be large. Use more rows, a larger epsilon, fewer rounds (rounds=) or another method")
        warned = ((DivergedFitWarning, message),)
        run.notes.append(message)
    split = _error_split(run.st, tail, gammas, noise_sds, eta, float(run.diagnostics["Gamma"]),
                         None if stop is None else best)
    params = tail if run.st is None else run.st.params_back(tail)
    run.diagnostics.update(n_0=plan.n0, gammas=np.asarray(gammas), held_rounds=held,
                           part_steps={"S_0": list(run.ledger_0.steps), "estimation parts": list(run.ledger_est.steps),
                                       "gradient parts": list(run.ledger_grad.steps)})
    return MethodFit(params=params, notes=tuple(_report(run, options, T, eta, held)),
                     assumptions=("utility (not privacy) assumes sub-Gaussian covariates and noise and no corrupted "
                                  "labels (Varshney et al. 2022)",),
                     no_inference_reason=NO_INFERENCE, diagnostics=run.diagnostics, error_split=split,
                     warnings=warned)


SPLIT_SOURCE = ("the released noise sd of each mini-batch's gradient propagated through the linearised steps to the "
                "tail average (released step size, rounds and held batches; curvature Gamma/d, the mean eigenvalue "
                "from the released or public Tr(Sigma), in every direction of the descent's coordinates), and the "
                "early-stopping shrinkage of the released estimate; not included: the gradient clipping's bias "
                "against least squares, the mini-batches' sampling noise, the columns' correlations and the noise "
                "of the released centres and scales")


def _error_split(st: centring.Standardisation | None, tail: np.ndarray, gammas: list[float], noise_sds: list[float],
                 eta: float, gamma_norm: float, chosen: int | None = None) -> ErrorSplit | None:
    """The privacy part of the error of the tail average (or of iterate ``chosen`` of a diverged fit), from
    released values (:func:`~dpstats.methods.common.robust_descent.error_split`; docs/proofs/ambssgd.md)."""
    T, d = len(noise_sds), tail.size
    weights = np.zeros(T + 1)
    if chosen is None:
        weights[math.ceil(T / 2):] = 1.0 / (T + 1 - math.ceil(T / 2))
    else:
        weights[chosen] = 1.0
    h = gamma_norm / d
    err = descent.descent_error(noise_sds, weights, eta, h)
    return descent.error_split(st, tail, err, descent.signal_scale(gammas, h, d), SPLIT_SOURCE)


def _burn_in(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    need = d * math.sqrt(log_inv(delta)) / epsilon
    return [] if n >= need else [f"n={n:g} < kappa^2 d sqrt(log(1/delta))/eps = {need:.3g} (burn-in, kappa=1)"]


def _gradient_parts(rest: int, T: int, est: float) -> np.ndarray:
    """The sizes of the T gradient parts of :func:`batch_bounds`, vectorised (the plan asks at many T)."""
    sizes = np.diff(np.linspace(0, rest, T + 1).astype(int))
    return sizes - np.maximum(1, np.round(est * sizes).astype(int))


def _planned_schedule(eta: float, T: int, *, theta: float, d: int, rest: int, est: float, mu: float,
                      clip_level: float) -> tuple[float, int]:
    """:func:`stable_schedule` with the derived rounds and step size, by bisection over T (the noise feedback grows
    with T: the gradient parts shrink)."""
    def rho(e: float, t: int) -> float:
        return noise_feedback(e, theta, d, int(_gradient_parts(rest, t, est).min()), mu, clip_level)

    if T > 2 and rho(eta, T) > _MAX_FEEDBACK:
        lo, hi = 2, T  # rho(hi) > max; find the largest t in [lo, hi) with rho(t) <= max, else 2
        if rho(eta, lo) > _MAX_FEEDBACK:
            T = lo
        else:
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (mid, hi) if rho(eta, mid) <= _MAX_FEEDBACK else (lo, mid)
            T = lo
    r = rho(eta, T)
    return (eta * _MAX_FEEDBACK / r if r > _MAX_FEEDBACK else eta), T


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The second moment of a planned ambssgd fit's privacy error, in the method's units (:func:`dpstats.plan`).

    Its error block's model (:func:`_error_split`) run on expected released values
    (:mod:`~dpstats.methods.common.planned_robust`): the public sizes, budget split and round cap of
    :func:`_plan` (default options, the preconditioning on); Gamma and Theta from Tr of the standardised second
    moment; (eta, T) averaged over the spectrum's noise (its lambda_min floored as the fit floors it), then lowered
    by the noise-feedback rule of :func:`stable_schedule`; each batch's clipping norm from the expected modal bin of
    its error histogram at the linearised iterate, with the stop on divergence applied to those scales; the tail
    average's noise and early-stopping bias in each eigendirection of the standardised design, with each
    mini-batch's own sampling noise (the fit reads each row once).  First order in the noise, and only as good as
    the assumptions (docs/guide/planning.md)."""
    options = AMBSSGDOptions()
    n, d = facts.n, facts.d
    mu = descent.precondition_split(gaussian_mu(facts.epsilon, facts.delta), True)[0]
    n0 = int(round(_S0_FRACTION * n))
    rest, est, clip_level = n - n0, float(options.est_fraction), float(options.clip_level)
    round_cap = min(rest // 4, max_disjoint_histograms(int(est * rest), mu))
    model = planned.standardised_model(facts)
    theta_x = descent.default_covariate_tail(n) * math.sqrt(planned.norm_reading(model.trace))
    spectrum_sd = math.sqrt(2.0) * theta_x**2 / (mu / math.sqrt(2.0)) / n0
    merged: dict[tuple[float, int], float] = {}
    for s in planned.spectrum_schedules(model, theta_x, spectrum_sd, n, int(options.max_rounds),
                                        floor=_LAMBDA_MIN_FLOOR):
        key = _planned_schedule(s.eta, min(s.rounds, round_cap), theta=theta_x, d=d, rest=rest, est=est, mu=mu,
                                clip_level=clip_level)
        merged[key] = merged.get(key, 0.0) + s.weight
    etas = np.array([eta for eta, _ in merged])
    rounds = np.array([T for _, T in merged])
    parts = np.array([float(_gradient_parts(rest, T, est).mean()) for T in rounds])
    scale = math.sqrt(2.0 * math.log(2.0 / clip_level))

    def tail(T: int) -> np.ndarray:
        weights = np.zeros(T + 1)
        weights[math.ceil(T / 2):] = 1.0 / (T + 1 - math.ceil(T / 2))
        return weights

    covs = planned.planned_descent(
        model, etas, rounds,
        tables=np.array([planned.modal_edge(1, max(1.0, round(est * rest / T)), HISTOGRAM_SENSITIVITY / mu)
                         for T in rounds]),
        sd_per_root_gamma=2.0 * theta_x * scale / (parts * mu),
        sampling=model.residual_var * model.lam[None, :] / parts[:, None], weights=tail, stop=(_BLOWUP, _REFERENCE))
    cov = sum(w * c for w, c in zip(merged.values(), covs, strict=True))
    cov_z = model.V @ cov @ model.V.T
    return ExpectedError(model.back @ cov_z @ model.back.T)


_RATE = Rate(
    "upper", "ambssgd upper bound", "Varshney, Thakurta & Jain (2022)",
    "sqrt(d/n) + kappa d sqrt(log(1/delta))/(n eps), kappa=1, logs hidden",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d * math.sqrt(log_inv(dl)) / (n * e),
    _burn_in, ("sub-Gaussian covariates with known Tr(Sigma); error in Sigma-norm",),
    n_min=lambda d, s: float(descent.min_rows(d)))


#: Why the units-of-sigma plan shows ambssgd's rate as no planning figure (``UpperRate.not_for_planning``; the plan
#: with bounds uses :func:`expected_error`).
NOT_FOR_PLANNING = ("the rate hides constants and logarithms, and the fit's privacy error follows from values it "
                    "releases (the covariate clip from its Tr(Sigma) estimate, the step size and batches from its "
                    "spectrum, the gradient clip of each batch and the batches it holds from its error histograms), "
                    "so a fit's error can be many times the figure shown")


def theory_rate(guarantee: str) -> UpperRate:
    """The upper rate of Varshney et al. (2022) (its ``n_min`` is the method's public minimum n), not for planning
    in units of sigma (``NOT_FOR_PLANNING``); the plan with bounds uses the calibration :func:`expected_error`."""
    return UpperRate(_RATE, expected_error=expected_error, planned_error=planned.PLANNED_ERROR,
                     not_for_planning=NOT_FOR_PLANNING)


SPEC = MethodSpec(
    name="ambssgd",
    gaussian_only=True,
    title="DP-AMBSSGD (one-pass private SGD with adaptive clipping; baseline)",
    citation="Varshney, Thakurta & Jain (COLT 2022)",
    fit=fit,
    options=AMBSSGDOptions,
    needs_bounds=False,
    unbounded_guarantee="the method clips each row's gradient to a privately released norm",
    regimes="baseline for DP-RobGD: no data bounds needed, large n, well-conditioned covariates, clean labels",
    min_rows=descent.min_rows,
    theory_rate=theory_rate,
    public_refusal=public_refusal,
)
