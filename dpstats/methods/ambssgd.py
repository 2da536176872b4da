"""DP-AMBSSGD: one-pass private mini-batch SGD with adaptive clipping (a BASELINE).

Varshney, Thakurta & Jain, "(Nearly) optimal private linear regression via
adaptive clipping" (COLT 2022), the baseline of Liu et al. (2023).  See
ALGORITHMS.md section 6, "DP-AMBSSGD".  It is shipped for comparison with
DP-RobGD: it is not robust to corrupted labels (it clips the whole
per-example gradient, so corrupted labels on small-norm covariates pass) and
needs more samples when the covariates are ill-conditioned (its batches are
n/T rows, so each step's noise is T times larger than a full-batch step's).

Algorithm (as implemented)
--------------------------
0. Private preconditioning (``standardize``; on by default unless the
   public ``trace`` is given, which describes the raw covariates): as in
   DP-RobGD, from all n rows, released centres and scales of the columns
   (:mod:`~dpstats.methods.private_centring`); the steps below run on the
   standardised rows and the coefficients are mapped back exactly.
   mu_pre-GDP, composed with the parallel block below, which gets
   mu_block^2 = mu^2 - mu_pre^2 (read mu below as mu_block).

A public pseudo-random bijection of the row indices
(:class:`~dpstats.methods.blocks.RowPermutation`, evaluated row by row) puts
the rows in an order whose first 10% are S_0 and the rest T disjoint
mini-batches B_0..B_{T-1}; each batch is split into an estimation part
(``est_fraction``) and a gradient part.

1. On S_0: Gamma ~ Tr(Sigma) is the public ``trace`` when given (the
   method's own assumption: Tr(Sigma) known), else the private norm
   estimator of :mod:`dpstats.methods.robust_estimators`; the covariate
   scale is Theta = ``covariate_tail`` sqrt(Gamma).  Then the private
   spectrum of the Theta-clipped second-moment matrix gives eta = 1/lambda_up
   and T = ceil(kappa_hat ln(n) / 2), as in DP-RobGD, unless ``step_size``
   and ``rounds`` are given; T is capped (from public n and mu only) so that
   each batch's estimation part has enough rows for its histogram to clear
   its noise (:func:`~dpstats.methods.robust_estimators.max_disjoint_histograms`);
   the fit is refused, spending nothing, when not even 2 batches qualify.
2. Round t: gamma_t = private distance estimate (modal bin of a private
   histogram of squared residuals, groups of one row) of the excess error
   on the estimation part of B_t (its bottom bin, exact zeros, never taken:
   see DP-RobGD step 3); the per-example gradient clipping norm is
   C_t = Theta sqrt(2 gamma_t ln(2/clip_level)) (the paper's theory value is
   reduced by a constant, as Liu et al. did in their experiments);
   g_t = (1/|B_t'|) sum clip_{C_t}(x_i (x_i^T w_t - y_i)) over the gradient
   part B_t', one matrix-vector product pair; w_{t+1} = w_t - eta (g_t + N(0,
   s_t^2 I)), s_t = (2 C_t / |B_t'|) / mu.  As in DP-RobGD (step 3 there),
   the mode is used only when it stands out from the noise
   (:func:`~dpstats.methods.robust_estimators.reliable_mode`); otherwise
   batch t holds: w_{t+1} = w_t, its gradient part is not used, and the next
   batch's histogram, at the same w, is averaged with it
   (:class:`~dpstats.methods.robust_estimators.PooledHistogram`: the mean
   histogram of the batches, noise sd divided by sqrt(k)).  An uncleared
   mode can be an empty bin's noise and C_t arbitrarily large (on
   statsmodels' ``fair`` data at epsilon = 1: coefficients of 1e5 in 1 seed
   of 40 before, 0 of 200 after).
3. Output the tail average of w_{ceil(T/2)}, ..., w_T (held batches repeat
   their iterate).

Privacy (replace-one, n public, worst case)
-------------------------------------------
Every mechanism touches its own rows: S_0 (norm histogram then spectrum,
composed: mu_0^2 = mu^2/2 each, or the spectrum alone at mu), each
estimation part (one histogram, count-vector sensitivity sqrt(2), mu-GDP),
each gradient part (clipped mean, sensitivity 2 C_t / |B_t'|, mu-GDP; none
in a held batch).  Holding and pooling are post-processing.  The
row sets are pairwise disjoint and the split is public, so a replaced row
enters one part only and the other mechanisms, whose data-dependent inputs
are released values, cannot tell the neighbours apart: the fit is mu-GDP,
exactly (epsilon, delta)-DP, by parallel composition (valid for adaptive
mechanisms).  This is the point of the one-pass design.  The ledger holds
one Gaussian step for the parallel block, charged before any draw; each part
family has its own ledger (disjoint releases recorded with count 1) and is
itemised in the notes.

Extreme finite values are handled as in DP-RobGD (its module docstring):
statistics that overflow land in the last histogram bin, norms and
residuals are overflow-safe, and a per-example gradient r x whose size
|r| ||x|| overflows is clipped to C sign(r) x / ||x||, its exact clipped
value (the chunked table uses the same direction).  Each is a function of
one row and released values, with norm at most C, so the sensitivity
2 C_t / |B_t'| holds whatever the data.

Data read in chunks (:func:`fit_chunks`; files, Dask)
----------------------------------------------------
Cost: T + 2 passes over the data, plus one for the preconditioning (fewer
when ``trace``, or ``rounds`` and ``step_size``, are given), plus the count of the rows when the source does
not know it.  In memory the method reads each row once; a file is not in
the public order, so each mini-batch's rows are spread over the whole file
and every round reads all of it to use 1/T of it.  A round is one pass: its
clipping norm is one of 128 values (the error grid's upper edges times a
public constant), and the pass returns the histogram counts of the
estimation part and the gradient part's clipped sums at every one of them
(:class:`~dpstats.methods.row_passes.ClipTable`).  Only aggregates leave a
chunk.  The privacy argument is unchanged: the position of a row depends on
its index and the public keys only, so every release is the same function
of the same rows as in memory, with noise from the same draws.
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
from dpstats.methods.extremes import divide_by_norms, quiet, residuals, row_norms
from dpstats.methods.private_centring import (
    Standardisation, StandardisedPasses, check_public_options, releases_anything,
    release_standardisation,
)
from dpstats.methods.legacy import (  # TEMPORARY: the adapter, until this method is ported
    LegacyMethodFit as MethodFit, LegacyMethodSpec as MethodSpec, register_legacy as register,
)
from dpstats.methods.robgd import (
    check_descent_options, check_fraction, default_covariate_tail, held_notes, parallel_block_step, part_notes,
    precondition_split, step_schedule, threshold_candidates,
)
from dpstats.methods.robust_estimators import (
    DISTANCE_GRID, PooledHistogram, clipped_gram, histogram_counts, max_disjoint_histograms, norm_group_size,
    norm_group_sums, private_norm_from_means, release_histogram, release_spectrum,
)
from dpstats.methods.row_passes import ClipTable, add_arrays, add_clip_tables
from dpstats.methods.sufficient import RowChunks
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_block

__all__ = ["fit", "fit_chunks", "AMBSSGDLayout"]

_S0_FRACTION = 0.1


@dataclass(frozen=True)
class AMBSSGDLayout:
    """Row i is at position p = pi(i) of a public pseudo-random bijection of range(n)
    (:class:`~dpstats.methods.blocks.RowPermutation`): in S_0 when p < n_0, else at place p - n_0 of the rest,
    which is cut into T mini-batches, each into an estimation part and a gradient part (:func:`batch_bounds`)."""

    perm: RowPermutation
    n0: int

    def positions(self, offset: int, count: int) -> np.ndarray:
        return self.perm.positions(np.arange(offset, offset + count, dtype=np.int64))

    def norm_groups(self, positions: np.ndarray, group_size: int) -> np.ndarray:
        """Norm group p // group_size of the S_0 rows (-1 for other rows and those after the last full group)."""
        k = self.n0 // group_size
        g = positions // group_size
        return np.where(g < k, g, -1)


def batch_bounds(rest: int, T: int, est: float, t: int) -> tuple[int, int, int]:
    """(lo, cut, hi): batch t is places lo..hi-1 of the rest; its estimation part lo..cut-1 (public)."""
    edges = np.linspace(0, rest, T + 1).astype(int)
    lo, hi = int(edges[t]), int(edges[t + 1])
    return lo, lo + max(1, int(round(est * (hi - lo)))), hi


class _MemoryRows:
    """The rows in memory, gathered once in the public order (the fast path of ``fit``)."""

    def __init__(self, X: np.ndarray, y: np.ndarray) -> None:
        self.X, self.y = X, y

    def raw_reduce(self, fn: Any, combine: Any) -> Any:
        """fn on all the (untransformed) rows at once: the in-memory case of a pass."""
        return fn(self.X, self.y, 0)

    def standardise(self, st: Standardisation) -> None:
        """Replace the rows by (x - centre) / scale and y - y_centre (elementwise); before ``prepare``."""
        self.X, self.y = st.transform(self.X), st.response(self.y)

    def prepare(self, layout: AMBSSGDLayout) -> None:
        order = layout.perm.order()
        self.X0 = self.X[order[:layout.n0]]
        self.Xr, self.yr = self.X[order[layout.n0:]], self.y[order[layout.n0:]]
        self.norms = row_norms(self.Xr)

    def norm_means(self, layout: AMBSSGDLayout, group_size: int) -> np.ndarray:
        groups = layout.norm_groups(np.arange(layout.n0), group_size)
        return norm_group_sums(self.X0, groups, layout.n0 // group_size) / group_size

    def clipped_gram(self, layout: AMBSSGDLayout, theta_x: float) -> np.ndarray:
        return clipped_gram(self.X0, theta_x)

    def round(self, layout: AMBSSGDLayout, bounds: tuple[int, int, int], w: np.ndarray, clips: np.ndarray
              ) -> tuple[np.ndarray, Callable[[int], np.ndarray]]:
        lo, cut, hi = bounds
        counts = _error_counts(self.Xr[lo:cut], self.yr[lo:cut], w)

        @quiet
        def gradient(j: int) -> np.ndarray:
            Xg = self.Xr[cut:hi]
            return Xg.T @ _clipped_coefficients(Xg, residuals(Xg, self.yr[cut:hi], w), self.norms[cut:hi],
                                                clips[j]) / (hi - cut)

        return counts, gradient


@quiet
def _error_counts(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``DISTANCE_GRID`` counts of the squared residuals of an estimation part (groups of one row): a residual
    is never NaN (:func:`~dpstats.methods.extremes.residuals`), and a square that overflows is inf, which lands
    in the last bin."""
    r = residuals(X, y, w)  # X w - y: its square is that of y - X w, bit for bit
    return histogram_counts(r * r, DISTANCE_GRID)


@quiet
def _clipped_coefficients(X: np.ndarray, r: np.ndarray, norms: np.ndarray, clip: float) -> np.ndarray:
    """v_i with v_i x_i = clip_C(r_i x_i), the per-example gradient clipped to norm C = ``clip``.

    v_i = r_i min(1, C / (|r_i| ||x_i||)) where that is finite (bit for bit the plain formula); where the
    product |r_i| ||x_i|| or r_i itself overflowed, the gradient's norm exceeds every double and its clipped
    value is C sign(r_i) x_i / ||x_i||, so v_i = sign(r_i) C / ||x_i||
    (:func:`~dpstats.methods.extremes.divide_by_norms`).  Each v_i depends on row i (and public C, released
    w) only, and ||v_i x_i|| <= C (up to rounding) whatever the row."""
    scale = np.abs(r) * norms
    v = r * np.minimum(1.0, clip / np.maximum(scale, np.finfo(float).tiny))
    bad = ~np.isfinite(scale) | ~np.isfinite(v)
    if bad.any():
        v[bad] = np.sign(r[bad]) * divide_by_norms(clip, X[bad], norms[bad])
    return v


class _NormPass:
    """fn(X, y, offset) -> per-group sums of ||x||^2 over the chunk's S_0 rows (picklable)."""

    def __init__(self, layout: AMBSSGDLayout, group_size: int) -> None:
        self.layout, self.group_size = layout, group_size

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        groups = self.layout.norm_groups(self.layout.positions(offset, X.shape[0]), self.group_size)
        return norm_group_sums(X, groups, self.layout.n0 // self.group_size)


class _GramPass:
    """fn(X, y, offset) -> clipped Gram matrix of the chunk's S_0 rows; ``select`` evaluates only those."""

    def __init__(self, layout: AMBSSGDLayout, theta_x: float) -> None:
        self.layout, self.theta_x = layout, theta_x

    def select(self, offset: int, count: int) -> np.ndarray:
        return np.flatnonzero(self.layout.positions(offset, count) < self.layout.n0)

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        return clipped_gram(X, self.theta_x)


@dataclass
class _RoundPartial:
    counts: np.ndarray
    table: ClipTable


def _add_rounds(a: _RoundPartial, b: _RoundPartial) -> _RoundPartial:
    a.counts += b.counts
    a.table = add_clip_tables(a.table, b.table)
    return a


class _RoundPass:
    """fn(X, y, offset) for mini-batch t at w_t: the error-histogram counts of its estimation part and the
    clipped-gradient table of its gradient part for every clipping norm a round can release."""

    def __init__(self, layout: AMBSSGDLayout, bounds: tuple[int, int, int], w: np.ndarray,
                 clips: np.ndarray) -> None:
        self.layout, self.bounds, self.w, self.clips = layout, bounds, w, clips

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> _RoundPartial:
        place = self.layout.positions(offset, X.shape[0]) - self.layout.n0
        lo, cut, hi = self.bounds
        est = (place >= lo) & (place < cut)
        grad = (place >= cut) & (place < hi)
        Xg = X[grad]
        r = residuals(Xg, y[grad], self.w)
        norms = row_norms(Xg)
        # a term r x whose size overflowed is clipped at every norm: its direction sign(r) x / ||x|| is the limit
        limit = np.sign(r) * divide_by_norms(1.0, Xg, norms)
        return _RoundPartial(_error_counts(X[est], y[est], self.w),
                             ClipTable.of(Xg, r, np.abs(r) * norms, self.clips, limit=limit))


class _ChunkRows(StandardisedPasses):
    """The rows of a :class:`~dpstats.methods.sufficient.RowChunks`: one ``reduce`` pass per statistic."""

    def prepare(self, layout: AMBSSGDLayout) -> None:
        """Nothing to gather: each pass evaluates the positions of its chunk's rows."""

    def norm_means(self, layout: AMBSSGDLayout, group_size: int) -> np.ndarray:
        return self._reduce(_NormPass(layout, group_size), add_arrays) / group_size

    def clipped_gram(self, layout: AMBSSGDLayout, theta_x: float) -> np.ndarray:
        return self._reduce(_GramPass(layout, theta_x), add_arrays)

    def round(self, layout: AMBSSGDLayout, bounds: tuple[int, int, int], w: np.ndarray, clips: np.ndarray
              ) -> tuple[np.ndarray, Callable[[int], np.ndarray]]:
        part = self._reduce(_RoundPass(layout, bounds, w, clips), _add_rounds)
        mg = bounds[2] - bounds[1]
        return part.counts, lambda j: part.table.at(clips, j) / mg


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, **options: Any) -> MethodFit:
    X = np.asarray(X, dtype=float)
    return _fit(_MemoryRows(X, np.asarray(y, dtype=float)), X.shape[0], X.shape[1], ledger=ledger, rng=rng,
                **options)


def fit_chunks(rows: RowChunks, *, ledger: PrivacyLedger, rng: np.random.Generator, bounds: DataBounds | None,
               **options: Any) -> MethodFit:
    """DP-AMBSSGD on rows read chunk by chunk (files, Dask): the fit of :func:`fit` for the same data and seed.

    Passes over the data: one for the norm histogram on S_0 (unless
    ``trace`` is given), one for the spectrum (unless ``rounds`` and
    ``step_size`` are given), then one per mini-batch, T in all: the rows are
    in the file's order, not the public order, so every pass reads them all
    and uses the batch's rows.  Batch t's pass returns the counts of its
    error histogram at w_t and a table of clipped-gradient sums at w_t for
    each of the 128 clipping norms the histogram can release
    (:class:`~dpstats.methods.row_passes.ClipTable`); the gradient at the
    released norm is read from the table, so a round is one pass.  Only
    aggregates leave a chunk.  Privacy: every released quantity is the same
    function of the same rows as in :func:`fit` (positions are evaluated row
    by row from the public keys; sums are added in another order), so the
    proof in the module docstring applies unchanged.
    """
    return _fit(_ChunkRows(rows), rows.n, rows.d, ledger=ledger, rng=rng, **options)


@quiet
def _fit(rows: _MemoryRows | _ChunkRows, n: int, d: int, *, ledger: PrivacyLedger, rng: np.random.Generator,
         trace: float | None = None, est_fraction: float = 0.2, clip_level: float = 0.05,
         covariate_tail: float | None = None, rounds: int | None = None, step_size: float | None = None,
         max_rounds: int = 2000, standardize: bool | None = None, intercept_index: int | None = None,
         column_ranges: Any = None, **options: Any) -> MethodFit:
    est = check_fraction("est_fraction", est_fraction)
    check_public_options(d, intercept_index, column_ranges)
    if standardize and trace is not None:
        raise MethodOptionError("trace states Tr(Sigma) of the raw covariates, which standardize=True would "
                                "change: pass one of them")
    standardize = trace is None if standardize is None else bool(standardize)
    level = check_descent_options(clip_level=clip_level, covariate_tail=covariate_tail, rounds=rounds,
                                  step_size=step_size, max_rounds=max_rounds)
    if trace is not None and not (math.isfinite(trace) and trace > 0):
        raise MethodOptionError("trace must be a positive number")
    n0 = int(round(_S0_FRACTION * n))
    rest = n - n0
    tail = default_covariate_tail(n) if covariate_tail is None else float(covariate_tail)
    need_spectrum = rounds is None or step_size is None
    if n0 < 10 or rest < 4:
        raise MethodOptionError(f"too few rows (n={n}) for DP-AMBSSGD")

    mu = gaussian_mu(ledger.epsilon, ledger.delta)
    mu, mu_pre = precondition_split(mu, standardize and releases_anything(d, intercept_index, column_ranges))
    round_cap = min(rest // 4, max_disjoint_histograms(int(est * rest), mu))
    if round_cap < 2:
        raise InsufficientDataError(
            f"ambssgd: with n={n} and this budget the per-batch error estimate cannot clear its noise even for 2 "
            "batches; use more rows or a larger epsilon (nothing was spent)")
    ledger.charge(parallel_block_step(
        "DP-AMBSSGD (parallel block: S_0 || disjoint mini-batches)", mu,
        f"S_0 ({n0} rows): {'norm histogram, ' if trace is None else ''}"
        f"{'spectrum' if need_spectrum else 'nothing'}; each mini-batch: one error histogram on its estimation "
        "part, one noisy clipped gradient on its gradient part"))
    ledger_0 = PrivacyLedger(ledger.epsilon, ledger.delta)
    ledger_est = PrivacyLedger(ledger.epsilon, ledger.delta)
    ledger_grad = PrivacyLedger(ledger.epsilon, ledger.delta)

    st: Standardisation | None = None
    st_notes: list[str] = []
    if standardize:  # private preconditioning on all rows, composed with the block (robgd's step 0)
        st, st_notes = release_standardisation(rows.raw_reduce, n, d, intercept_index=intercept_index,
                                               column_ranges=column_ranges,
                                               mu=mu_pre, rng=rng, ledger=ledger)
        rows.standardise(st)
    layout = AMBSSGDLayout(RowPermutation.draw(n, rng), n0)
    rows.prepare(layout)
    steps_0 = int(trace is None) + int(need_spectrum)
    mu_0 = mu / math.sqrt(max(steps_0, 1))
    info: dict[str, Any] = {"n_0": n0}
    if trace is None:
        b = norm_group_size(n0, mu_0)
        block = gaussian_block(rounds=1, mu_round=mu_0, ledger=ledger_0, name="norm histogram (Gamma ~ Tr Sigma)",
                               note=f"groups of {b} rows, 4 bins per octave")
        gamma_norm = private_norm_from_means(rows.norm_means(layout, b), block=block, rng=rng)
    else:
        gamma_norm = float(trace)
    theta_x = tail * math.sqrt(gamma_norm)
    if need_spectrum:
        spec = release_spectrum(rows.clipped_gram(layout, theta_x), n0, theta_x, mu=mu_0, rng=rng, ledger=ledger_0)
        eta, T, kappa_hat = step_schedule(spec, n, max_rounds=max_rounds, step_size=step_size, rounds=rounds)
        info.update(lambda_max_upper=spec.lam_max_upper, lambda_min_lower=spec.lam_min_lower, kappa_hat=kappa_hat)
    else:
        eta, T = float(step_size), int(rounds)  # type: ignore[arg-type]
    T = min(T, round_cap)  # public: batches large enough for their error histogram, >= 2 rows per part
    info.update(Gamma=gamma_norm, Theta=theta_x, step_size=eta, rounds=T, round_cap=round_cap)

    est_block = gaussian_block(rounds=T, mu_round=mu, ledger=ledger_est, name="error histograms (gamma_t)",
                               disjoint=True, note="one per mini-batch, on its estimation part")
    grad_block = gaussian_block(rounds=T, mu_round=mu, ledger=ledger_grad, name="noisy clipped gradients",
                                disjoint=True, dimension=d,
                                note="one per mini-batch, sensitivity 2 C_t / |B_t'| on its gradient part")
    clips = threshold_candidates(theta_x * math.sqrt(2.0 * math.log(2.0 / level)))
    w = np.zeros(d)
    iterates = [w]
    gammas = []
    pooled = PooledHistogram(est_block.mu_round, start=1)  # bin 0 (exact zeros) is never the scale
    for t in range(T):
        bounds = batch_bounds(rest, T, est, t)
        counts, gradient = rows.round(layout, bounds, w, clips)
        j = pooled.add(release_histogram(counts, DISTANCE_GRID, block=est_block, rng=rng))
        if j is None:  # no reliable error scale at w yet: hold w (this batch's gradient part is not used)
            iterates.append(w)
            gammas.append(math.inf)
            continue
        pooled = PooledHistogram(est_block.mu_round, start=1)
        noisy = grad_block.release(gradient(j), l2_sensitivity=2.0 * clips[j] / (bounds[2] - bounds[1]), rng=rng)
        w = w - eta * noisy
        iterates.append(w)
        gammas.append(DISTANCE_GRID.upper_edge(j))
    held = int(np.isinf(gammas).sum())
    params = np.mean(iterates[math.ceil(T / 2):], axis=0)
    if st is not None:
        params = st.params_back(params)
        info.update(centre=st.centre, scale=st.scale, y_centre=st.y_centre)
    info.update(gammas=np.asarray(gammas), held_rounds=held,
                part_steps={"S_0": list(ledger_0.steps), "estimation parts": list(ledger_est.steps),
                            "gradient parts": list(ledger_grad.steps)})
    notes = ["BASELINE (Varshney et al. 2022): not robust to corrupted labels",
             f"rows split by a public pseudo-random order into S_0 ({n0} rows) and {T} disjoint mini-batches; "
             "parallel composition",
             *st_notes, *part_notes("S_0", ledger_0), *part_notes("estimation parts", ledger_est),
             *part_notes("gradient parts", ledger_grad), *held_notes(held, T, "batch's error histogram"),
             f"T = {T} rounds, step size {eta:.4g}, tail average of the last {T + 1 - math.ceil(T / 2)} iterates"]
    if trace is not None:
        notes.append(f"Tr(Sigma) = {trace:g} was given as public knowledge (trace=)")
    if isinstance(rows, _ChunkRows):
        setup = [name for name, used in (("preconditioning", mu_pre > 0), ("norm histogram", trace is None),
                                         ("spectrum", need_spectrum)) if used]
        notes.append(f"data read in chunks: {rows.passes} passes over the data ("
                     + ", ".join([*setup, f"then one per mini-batch: T = {T}"]) + ")")
    return MethodFit(params=params, notes=tuple(notes), info=info,
                     assumptions=("utility (not privacy) assumes sub-Gaussian covariates and noise and no corrupted "
                                  "labels (Varshney et al. 2022)",),
                     bse_unavailable_reason=("DP-AMBSSGD releases a tail average of noisy one-pass SGD; no private estimate of its "
                                             "sampling law is available, so none is reported"))


fit.__doc__ = """DP-AMBSSGD (Varshney et al. 2022), a baseline; see the module docstring.

    In memory; :func:`fit_chunks` is the same fit on rows read in chunks
    (T + 2 passes over the data, T + 1 with ``trace``).

    Parameters
    ----------
    trace:
        Public Tr(Sigma) = E||x||^2 (the method's assumption); estimated
        privately on S_0 when None.
    est_fraction:
        Fraction of each mini-batch used for the private error estimate.
    clip_level, covariate_tail, rounds, step_size, max_rounds, intercept_index, column_ranges:
        As for ``robgd``.
    standardize:
        Private preconditioning as for ``robgd``; default on unless ``trace``
        is given (both together are refused).
    """


SPEC = register(MethodSpec(
    name="ambssgd",
    title="DP-AMBSSGD (one-pass private SGD with adaptive clipping; baseline)",
    citation="Varshney, Thakurta & Jain (COLT 2022)",
    fit=fit,
    needs_bounds=False,
    regimes="baseline for DP-RobGD: no data bounds needed, large n, well-conditioned covariates, clean labels",
    min_rows=lambda d: max(1000, 50 * d),
    options=("trace", "est_fraction", "clip_level", "covariate_tail", "rounds", "step_size", "max_rounds",
             "standardize", "intercept_index", "column_ranges"),
    theory=None,
    auto_rank=None,
    fit_chunks=fit_chunks,
))
