"""DP-SGD for least squares (Abadi et al., "Deep learning with differential privacy", CCS 2016).

The loss is l(w; x, y) = (1/2)(w'x - y)^2 with per-example gradient
g_i = (w'x_i - y_i) x_i.  Each of T steps draws a Poisson sample of the rows
(rate q = batch_size / n), releases the sum of the sampled gradients clipped
to L2 norm C plus N(0, (z C)^2 I), divides it by the expected batch size q n
and takes an Adam or plain SGD step; the coefficients are the average of the
last half of the iterates.  Every step is one pass over the rows
(:class:`StepSum`, run by ``rows.reduce``) that evaluates only that step's
sample and returns the exact integer sum of its clipped, grid-rounded
gradients, so in-memory and chunked data (one chunk or many, files, Dask)
give the same releases bit for bit for the same seed.

With every variable bounded, the declared bounds are the privacy domain only:
before the steps, the fit releases private centres and scales of every column
and of the response inside that domain (two Gaussian releases of sums over
rows, :func:`~dpstats.methods.common.private_scaling.release_moments`, as in
pgd), runs the steps on the standardised rows and maps the coefficients back
by the released affine map (post-processing); this where those releases
resolve scales well inside the declared ranges (:func:`standardises`, a
public rule of n, d, epsilon and delta).  Otherwise the steps run on the rows
as they come (the public rescaling by the bounds, when every variable has
them; there, with an intercept, every factor dummy (and every integer column
declared between consecutive integers) is put back on its
contrast's own values, 0 and 1, by a public map whose inverse maps the
coefficients back: :class:`DummyUnits`).

Privacy: each step is one Poisson-sampled Gaussian mechanism
(:class:`~dpstats.privacy.poisson_gaussian.PoissonGaussianBlock`); the noise
multiplier z is the smallest for which ``dp_accounting``'s PLD accountant
certifies the T composed steps as (epsilon_S, delta_S)-DP under replace-one
neighbours, and the whole run is charged once, before any row is read.  With
the standardisation, (epsilon_S, delta_S) = ((1 - a) epsilon, (1 - b) delta)
and the two moment releases are mu(a epsilon, b delta)-GDP (a =
``MOMENT_EPSILON_SHARE``, b = ``MOMENT_DELTA_SHARE``): by basic composition
the fit is (epsilon, delta)-DP; without it the steps take the whole budget.
Clipping bounds every row's influence whatever the data, so the guarantee is
worst-case; the clip norm, learning rate, batch size and epochs are public
utility choices, fixed rules of n and d by default.  Proof: docs/proofs/dpsgd.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import ConvergenceError, MethodOptionError
from dpstats.inference import window_mean_covariance
from dpstats.methods.common.extremes import QUIET, clamp_finite, residuals, unit_rows
from dpstats.methods.common.private_scaling import (
    Domain,
    Standardisation,
    free_variables,
    null_marks,
    release_moments,
)
from dpstats.methods.spec import (
    ErrorSplit,
    FitContext,
    MethodFit,
    MethodOptions,
    MethodSpec,
)
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.poisson_gaussian import (
    ClippedGridSum,
    PoissonGaussianBlock,
    add_grid_sums,
    calibrate_noise_multiplier,
    poisson_gaussian_block,
)
from dpstats.rates import UpperRate
from dpstats.rows.base import Rows
from dpstats.validation import MIN_DELTA, shown

__all__ = ["SPEC", "DPSGDOptions", "StepSum", "calibrate_noise_multiplier", "default_batch_size", "fit",
           "MOMENT_EPSILON_SHARE", "MOMENT_DELTA_SHARE", "MAX_SCALE_FLOOR", "scale_floor", "standardises",
           "DummyUnits", "dummy_units", "declared_ranges"]

_OPTIMIZERS = ("adam", "sgd")
_DEFAULT_CLIP_PER_SQRT_D = 0.1
#: The default clip per sqrt(d) on privately standardised rows (every variable bounded), where a row's gradient
#: at w = 0 has norm about sqrt(d) (chosen on the real-data benchmark against 0.1 and 1: BENCHMARKS.md).
_STANDARDISED_CLIP_PER_SQRT_D = 0.3
#: With every variable bounded, the private centres and scales get this share of epsilon, and
#: ``MOMENT_DELTA_SHARE`` of delta; the DP-SGD steps get the rest (basic composition: docs/proofs/dpsgd.md).
#: Chosen on the real-data benchmark against 0.1 and 0.35 (BENCHMARKS.md).
MOMENT_EPSILON_SHARE = 0.2
MOMENT_DELTA_SHARE = 0.5
#: The rows are standardised only where the moments resolve scales down to this share of a variable's declared
#: half-range (:func:`scale_floor`); where they cannot, standardising costs the steps budget and gains nothing
#: (chosen on the real-data benchmark against 0.1, 0.2, 0.5, 0.75, 1 and none: BENCHMARKS.md).
MAX_SCALE_FLOOR = 0.3
_DEFAULT_LR = {"adam": 0.05, "sgd": 0.5}
_ADAM_BETAS = (0.9, 0.999)
_ADAM_EPS = 1e-8


def default_batch_size(n: int) -> int:
    """Public default expected batch size: about sqrt(n), at least 32 and at most n (10 epochs: ~10 sqrt(n) steps).

    Parameters
    ----------
    n : int
        The public number of rows.

    Returns
    -------
    int
        The expected batch size L.
    """
    return int(min(n, max(32, round(math.sqrt(n)))))


def _positive_or_none(value: object, name: str) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not (
            value > 0 and math.isfinite(value)):
        raise MethodOptionError(f"{name} must be a finite number > 0, got {shown(value)}")


@dataclass(frozen=True)
class DPSGDOptions(MethodOptions):
    """Options of ``dpsgd``: public utility choices (none changes the privacy guarantee).

    Attributes
    ----------
    clip_norm : float or None
        Per-example gradient clip C, in the units the steps run on: the privately standardised rows when every
        variable is bounded (default 0.3 sqrt(d)), else the rows as they come (default 0.1 sqrt(d)).
    learning_rate : float or None
        Step size on the gradient of the mean loss, in the same units (default 0.05 for Adam, 0.5 for SGD).
    batch_size : int or None
        Expected batch size L; the sampling rate is q = L / n (default :func:`default_batch_size`).
    epochs : float
        Passes over the data in expectation, in (0, 10000]; T = ceil(epochs / q) steps (default 10).
    optimizer : str
        ``"adam"`` (as in Amin et al.'s baseline, default) or ``"sgd"``.
    """

    clip_norm: float | None = None
    learning_rate: float | None = None
    batch_size: int | None = None
    epochs: float = 10
    optimizer: str = "adam"

    def __post_init__(self) -> None:
        _positive_or_none(self.clip_norm, "clip_norm")
        if self.optimizer not in _OPTIMIZERS:
            raise MethodOptionError(f"optimizer must be one of {', '.join(_OPTIMIZERS)}, got {shown(self.optimizer)}")
        _positive_or_none(self.learning_rate, "learning_rate")
        L = self.batch_size
        if L is not None and (isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1):
            raise MethodOptionError(f"batch_size must be a positive integer, got {shown(L)}")
        e = self.epochs
        if isinstance(e, bool) or not (isinstance(e, (int, float, np.integer, np.floating)) and 0 < e <= 1e4):
            raise MethodOptionError(f"epochs must be a number in (0, 10000], got {shown(e)}")

    def scale_chosen(self) -> bool:
        """Both scale-dependent options (``clip_norm`` and ``learning_rate``) were given."""
        return self.clip_norm is not None and self.learning_rate is not None


@dataclass(frozen=True)
class _Plan:
    """The public settings of a run, fixed from n, d, the budget, the declared bounds and the options before
    anything is charged."""

    clip_norm: float
    learning_rate: float
    sampling_rate: float
    steps: int
    optimizer: str
    standardise: bool
    epsilon: float
    delta: float
    moment_mu: float


def _budget(epsilon: float, delta: float, standardise: bool) -> tuple[float, float, float]:
    """(epsilon, delta) of the DP-SGD steps and the GDP parameter of the private moments (0 without them).

    With ``standardise``, the moments get epsilon_m = ``MOMENT_EPSILON_SHARE`` epsilon at delta_m =
    ``MOMENT_DELTA_SHARE`` delta, as mu_m = mu(epsilon_m, delta_m); the steps get (epsilon - epsilon_m,
    delta - delta_m).  Basic composition of the two parts is (epsilon, delta)-DP, and it is one of the bounds the
    ledger computes for a Gaussian block composed with an (epsilon, delta) step (docs/proofs/dpsgd.md)."""
    if not standardise:
        return epsilon, delta, 0.0
    eps_m, delta_m = MOMENT_EPSILON_SHARE * epsilon, MOMENT_DELTA_SHARE * delta
    return epsilon - eps_m, delta - delta_m, gaussian_mu(eps_m, delta_m)


def _plan(ctx: FitContext, options: DPSGDOptions) -> _Plan:
    """C, the learning rate, q, T and the budget's split from public facts and the (validated) options.

    The rows are standardised privately where every variable is bounded and the moments resolve the scales
    (:func:`standardises`); the default clip is then the standardised rows'."""
    n, d = ctx.n, ctx.d
    standardise = standardises(ctx)
    per_sqrt_d = _STANDARDISED_CLIP_PER_SQRT_D if standardise else _DEFAULT_CLIP_PER_SQRT_D
    C = float(per_sqrt_d * math.sqrt(d) if options.clip_norm is None else options.clip_norm)
    lr = float(_DEFAULT_LR[options.optimizer] if options.learning_rate is None else options.learning_rate)
    L = default_batch_size(n) if options.batch_size is None else int(options.batch_size)
    q = min(1.0, L / n)
    eps, delta, mu_m = _budget(float(ctx.epsilon), float(ctx.delta), standardise)
    return _Plan(C, lr, q, max(1, math.ceil(float(options.epochs) / q)), options.optimizer, standardise, eps, delta,
                 mu_m)


def standardises(ctx: FitContext) -> bool:
    """Whether the fit standardises its rows privately (public facts only): when every variable has a public
    range, i.e. the pipeline rescaled the rows by the declared bounds, the steps' share of delta is within the
    supported range (at least ``MIN_DELTA``) and the moments resolve scales down to ``MAX_SCALE_FLOOR`` of the
    declared half-ranges (:func:`scale_floor`); else the steps run on the rows as they come, with the whole
    budget."""
    return (bool(ctx.rescaled) and (1.0 - MOMENT_DELTA_SHARE) * float(ctx.delta) >= MIN_DELTA
            and scale_floor(ctx) <= MAX_SCALE_FLOOR)


def scale_floor(ctx: FitContext) -> float:
    """The smallest scale, as a share of a variable's declared half-range, that the private moments release at
    this n and budget: :func:`~dpstats.methods.common.private_scaling.release_moments`' floor 2 Delta / (mu_s n),
    with mu_s the scales' GDP parameter and Delta their sensitivity, 2 sqrt(k) with an intercept and sqrt(k)
    without, for k variables with a non-degenerate range (public facts: n, epsilon, delta, the design)."""
    cols, resp = free_variables(_declared_domain(ctx))
    k = cols.size + int(resp)
    if k == 0:
        return 0.0
    centring = ctx.intercept_index is not None
    _, _, mu_m = _budget(float(ctx.epsilon), float(ctx.delta), True)
    return 2.0 * (2.0 if centring else 1.0) * math.sqrt(k) / (_moment_part_mu(ctx, mu_m) * ctx.n)


def _moment_part_mu(ctx: FitContext, moment_mu: float) -> float:
    """The GDP parameter of each moment release: ``moment_mu`` split equally between the centres and the scales
    with an intercept; the scales take it all without one."""
    return moment_mu / math.sqrt(2.0) if ctx.intercept_index is not None else moment_mu


def _declared_domain(ctx: FitContext) -> Domain:
    """The clipping domain of the standardised path: every variable's public range (declared bounds after the
    public rescaling, factor dummies and the intercept by construction)."""
    ranges = [r if r is not None else (1.0, 1.0) for r in ctx.column_ranges]
    lo = np.array([r[0] for r in ranges], dtype=float)
    hi = np.array([r[1] for r in ranges], dtype=float)
    if ctx.intercept_index is not None:
        lo[ctx.intercept_index] = hi[ctx.intercept_index] = 1.0
    y_lo, y_hi = ctx.response_range if ctx.response_range is not None else (0.0, 0.0)
    return Domain(lo, hi, float(y_lo), float(y_hi), ctx.intercept_index)


@dataclass(frozen=True)
class DummyUnits:
    """A public map of the rescaled rows: each column with two or more public values (a factor dummy, an integer
    column declared between consecutive integers) back on those values,
    z_j = (u_j - lo_j) / (hi_j - lo_j) (lo_j, hi_j the smallest and largest of its public values, so a treatment
    dummy is 0 or 1 again), every other column and the response unchanged (:func:`dummy_units`).

    The public rescaling maps a dummy's 0 and 1 to -1 and +1, so every row of a k-level factor has k - 1 entries
    -1 or +1 and the intercept must offset their sum: the steps then start far from the least-squares
    coefficients in an ill-conditioned direction.  The map uses public facts only (the design's contrast values),
    so it is post-processing of nothing private; the coefficients are mapped back exactly (:meth:`affine_back`).

    Attributes
    ----------
    columns : numpy.ndarray
        Indices of the dummy columns.
    lo, span : numpy.ndarray
        lo_j and hi_j - lo_j > 0 of those columns.
    d : int
        Number of design columns.
    intercept_index : int
        The intercept column (the map needs one: it absorbs the shifts).
    """

    columns: np.ndarray
    lo: np.ndarray
    span: np.ndarray
    d: int
    intercept_index: int

    def design(self, X: np.ndarray) -> np.ndarray:
        """The rows z (a new array)."""
        Z = np.array(X, dtype=float)
        Z[:, self.columns] = (Z[:, self.columns] - self.lo) / self.span
        return Z

    def response(self, y: np.ndarray) -> np.ndarray:
        """The responses (unchanged; a new array)."""
        return np.array(y, dtype=float)

    def affine_back(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) with beta = A theta + b: beta_j = theta_j / span_j for a dummy, beta_0 = theta_0 - sum over
        the dummies of theta_j lo_j / span_j for the intercept, every other coefficient unchanged (b = 0)."""
        A = np.eye(self.d)
        A[self.columns, self.columns] = 1.0 / self.span
        A[self.intercept_index, self.columns] = -self.lo / self.span
        return A, np.zeros(self.d)

    def params_back(self, theta: np.ndarray) -> np.ndarray:
        """The coefficients on the method's units (clamped to finite doubles)."""
        A, b = self.affine_back()
        with np.errstate(**QUIET):
            return clamp_finite(A @ np.asarray(theta, dtype=float) + b)


def dummy_units(ctx: FitContext) -> DummyUnits | None:
    """The public :class:`DummyUnits` map of the rows where the steps run on the public rescaling (every variable
    bounded, not standardised privately) and the design has an intercept and factor dummy columns
    (``ctx.column_values``: a column other than the intercept whose values the design fixes); else None."""
    k = ctx.intercept_index
    if not ctx.rescaled or k is None or not ctx.column_values:
        return None
    spans = [(j, min(v), max(v) - min(v)) for j, v in enumerate(ctx.column_values)
             if v is not None and j != k and len(v) > 1 and max(v) > min(v)]
    if not spans:
        return None
    cols, lo, span = (np.array(a) for a in zip(*spans, strict=True))
    return DummyUnits(cols.astype(int), lo.astype(float), span.astype(float), ctx.d, k)


#: Why DP-SGD reports no standard errors or intervals.
NO_INFERENCE_REASON = (
    "DP-SGD releases an average of noisy clipped minibatch steps; its distance from least squares is mostly the "
    "clipped gradient's bias and the distance the steps did not cover, which no released value measures, so no "
    "sound interval is known (its error block shows the noise part only); method='pgd' (full-batch noisy gradient "
    "descent with independent chains) reports intervals")


def declared_ranges(ctx: FitContext) -> DataBounds | None:
    """The public ranges of the design columns and the response in ``ctx`` as clip ranges (infinite where none is
    known; None when no column and not the response has one), to which the steps clip the rows as they come:
    declared bounds are enforced by clipping, as in every method, so a value outside them counts as the nearest
    bound (the guarantee itself rests on the gradient clip).  Public null rows keep their NaN marks."""
    if ctx.response_range is None and all(r is None for r in ctx.column_ranges):
        return None
    ranges = list(ctx.column_ranges) or [None] * ctx.d
    y_lo, y_hi = ctx.response_range if ctx.response_range is not None else (-np.inf, np.inf)
    return DataBounds(column_lo=np.array([-np.inf if r is None else r[0] for r in ranges], dtype=float),
                      column_hi=np.array([np.inf if r is None else r[1] for r in ranges], dtype=float),
                      y_lo=float(y_lo), y_hi=float(y_hi))


class StepSum:
    """The pass of one step: the exact integer sum of the clipped, grid-rounded gradients (w'x_i - y_i) x_i of
    the step's sampled rows, at the released iterate ``w`` (picklable, for Dask).

    ``select`` names the chunk's sampled rows from ``sample`` (the sorted
    global indices of the step's secret Poisson sample), so only those are
    evaluated; a row's gradient depends on that row and ``w`` only, so the
    integer sum is the same whatever the chunking.  With ``standardisation``
    the gradient is taken on the row's standardised values (z_i, v_i)
    (:class:`~dpstats.methods.common.private_scaling.Standardisation`).  A
    public null row (NaN-marked, ``missing="drop"``) adds nothing.

    Parameters
    ----------
    sample : numpy.ndarray
        Sorted global row indices of the step's Poisson sample (never released).
    w : numpy.ndarray
        The current (released) iterate.
    summer : ClippedGridSum
        The mechanism's clipping and grid rounding.
    standardisation : Standardisation or DummyUnits or None
        The released map of the rows, the public map of the dummies, or None (the rows as they come).
    ranges : DataBounds or None
        The declared ranges the rows are clipped to first, where there is no standardisation (which clips to its
        domain itself); None: no range is known.
    """

    def __init__(self, sample: np.ndarray, w: np.ndarray, summer: ClippedGridSum,
                 standardisation: Standardisation | DummyUnits | None = None,
                 ranges: DataBounds | None = None) -> None:
        self.sample, self.w, self.summer, self.standardisation = sample, w, summer, standardisation
        self.ranges = ranges

    def select(self, offset: int, count: int) -> np.ndarray:
        """Local indices of the sampled rows among the chunk's ``count`` rows starting at ``offset``."""
        lo, hi = np.searchsorted(self.sample, [offset, offset + count])
        return self.sample[lo:hi] - offset

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        X, y = self.rows(X, y)
        with np.errstate(**QUIET):
            return self.summer(_gradients(X, y, self.w, self.summer.clip_norm))

    def rows(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows the gradients are taken on: standardised when there is a standardisation, public null rows
        set to zero (their gradient is 0)."""
        st = self.standardisation
        marked = null_marks(y)
        if self.ranges is not None and not isinstance(st, Standardisation):
            X, y = self.ranges.clip(X, y)
        if st is not None:
            X, y = st.design(X), st.response(y)
        elif marked is not None:
            X, y = X.copy(), y.copy()
        if marked is not None:
            X[marked], y[marked] = 0.0, 0.0
        return X, y


def _gradients(X: np.ndarray, y: np.ndarray, w: np.ndarray, clip_norm: float) -> np.ndarray:
    """The per-row gradients (w'x_i - y_i) x_i handed to the mechanism, which clips them to norm C.

    Computed plainly (bit for bit) where the gradient's squared norm is finite.  A row whose residual or
    gradient overflows (values near the largest double) has a gradient of norm far above C, whose clipped
    value is C sign(r_i) x_i / ||x_i||: that row is passed already clipped
    (:func:`~dpstats.methods.common.extremes.unit_rows`, :func:`~dpstats.methods.common.extremes.residuals`), instead of
    contributing nothing; a row whose residual is 0 contributes 0.  Each row's vector depends on that row and
    the released iterate only, and the mechanism clips it again, so the sensitivity is the mechanism's
    whatever the data (docs/proofs/dpsgd.md, "Extreme values").
    """
    resid = (X * w).sum(axis=1) - y
    grads = X * resid[:, None]
    bad = ~np.isfinite(np.einsum("ij,ij->i", grads, grads))
    if bad.any():
        r = residuals(X[bad], y[bad], w)
        grads[bad] = np.sign(r)[:, None] * clip_norm * unit_rows(X[bad])
    return grads


def fit(rows: Rows, ctx: FitContext, options: DPSGDOptions) -> MethodFit:
    """DP-SGD (Abadi et al. 2016) for least squares with Poisson sampling; see the module docstring.

    Calibrates z and charges the whole run of steps once; with every variable bounded, then releases the private
    centres and scales of the rows (two Gaussian releases, :func:`~dpstats.methods.common.private_scaling.
    release_moments`); then takes the T steps, one pass over the rows each (:class:`StepSum`).  The released
    coefficients are the average of the iterates over the last half of the steps (Polyak-Ruppert averaging,
    post-processing), mapped back from the standardised rows where they were standardised.

    Parameters
    ----------
    rows : Rows
        The rows (in memory or in chunks); only each step's sampled rows are evaluated.
    ctx : FitContext
        Public facts, the ledger and the random source.
    options : DPSGDOptions
        The validated options.

    Returns
    -------
    MethodFit
        The coefficients, with the run's settings as diagnostics.

    Raises
    ------
    ConvergenceError
        When the iterates became non-finite (after spending: the message says so).
    """
    n, d = ctx.n, ctx.d
    plan = _plan(ctx, options)
    q, steps, C, lr = plan.sampling_rate, plan.steps, plan.clip_norm, plan.learning_rate
    z = calibrate_noise_multiplier(plan.epsilon, plan.delta, q, steps)
    block = poisson_gaussian_block(noise_multiplier=z, sampling_rate=q, rounds=steps, clip_norm=C, n=n,
                                   ledger=ctx.ledger, name="DP-SGD clipped gradient sums", dimension=d,
                                   delta=plan.delta)
    st: Standardisation | DummyUnits | None = _standardisation(rows, ctx, plan) if plan.standardise else (
        dummy_units(ctx))
    with np.errstate(over="ignore", invalid="ignore"):  # divergence is detected below, after the loop
        window = _train(block, rows, ctx.rng, d=d, steps=steps, expected_batch=q * n, lr=lr,
                        optimizer=plan.optimizer, standardisation=st, ranges=declared_ranges(ctx))
        params = window.mean(axis=0)
    if not np.all(np.isfinite(params)):
        raise ConvergenceError(
            f"DP-SGD diverged (non-finite coefficients) with learning_rate={lr:g}; lower it. The privacy budget "
            "of this fit was spent")
    privacy = window_mean_covariance(window)
    if st is not None:
        A, _ = st.affine_back()
        params, privacy = st.params_back(params), A @ privacy @ A.T
    return MethodFit(
        params=params,
        notes=_notes(plan, z, n, isinstance(st, DummyUnits)),
        diagnostics={"noise_multiplier": z, "steps": steps, "sampling_rate": q, "clip_norm": C, "learning_rate": lr,
                     "optimizer": plan.optimizer, "standardised": plan.standardise,
                     "dummies_on_own_values": isinstance(st, DummyUnits)},
        passes=steps,
        no_inference_reason=NO_INFERENCE_REASON,
        error_split=ErrorSplit(privacy=privacy, privacy_source=(
            "batch means of the averaged iterates (their noise around the run's limit; the clipped gradient's "
            "bias against least squares, the distance the steps did not cover and the noise of the released "
            "centres and scales are not included)"),
            privacy_lower_bound=True),
    )


def _standardisation(rows: Rows, ctx: FitContext, plan: _Plan) -> Standardisation:
    """The private centres and scales of every variable inside its declared domain, at GDP parameter
    ``plan.moment_mu`` (split equally between the centres and the scales when there is an intercept; the
    scales take it all without one)."""
    mu_part = _moment_part_mu(ctx, plan.moment_mu)
    return release_moments(rows.reduce, ctx.n, _declared_domain(ctx), mu_centre=mu_part, mu_scale=mu_part,
                           rng=ctx.rng, ledger=ctx.ledger, null_rows=ctx.null_rows, label="DP-SGD")


def _notes(plan: _Plan, z: float, n: int, dummies: bool) -> tuple[str, ...]:
    """What the run released and how (public settings only)."""
    q, steps = plan.sampling_rate, plan.steps
    notes = [f"DP-SGD: {steps} steps, sampling rate q={q:.4g} (expected batch {q * n:.4g}), clip norm "
             f"{plan.clip_norm:.4g}, noise multiplier {z:.4g}, {plan.optimizer} with learning rate "
             f"{plan.learning_rate:g}; coefficients are the average of the last half of the iterates"]
    if plan.standardise:
        notes.append(
            f"the declared bounds were used as the clipping domain only: the steps ran on rows standardised by "
            f"private centres and scales of every variable (Gaussian releases at mu={plan.moment_mu:.4g}, "
            f"{MOMENT_EPSILON_SHARE:.0%} of epsilon and {MOMENT_DELTA_SHARE:.0%} of delta; the steps took the rest), "
            "and the coefficients were mapped back (post-processing); the moments take two more passes over the "
            "data (one without an intercept)")
    if dummies:
        notes.append("the steps ran on the public rescaling by the declared bounds with every factor dummy (and every "
                     "integer column declared between consecutive integers) back on its own values (0 and 1 for a "
                     "treatment dummy), and the coefficients were mapped back (public facts only)")
    notes.append(f"one pass over the data per step ({steps} passes, each evaluating only that step's Poisson sample; "
                 "a step needs the previous iterate, so the passes cannot be merged)")
    return tuple(notes)


def _clipped_sum(rows: Rows, step: StepSum, d: int) -> np.ndarray:
    """One pass: the exact integer sum of ``step`` over the rows (zeros when there are no chunks)."""
    total = rows.reduce(step, add_grid_sums)
    return np.zeros(d, dtype=np.int64) if total is None else total


def _train(block: PoissonGaussianBlock, rows: Rows, rng: np.random.Generator, *, d: int, steps: int,
           expected_batch: float, lr: float, optimizer: str,
           standardisation: Standardisation | DummyUnits | None = None,
           ranges: DataBounds | None = None) -> np.ndarray:
    """The T noisy steps (Adam or SGD) from w = 0; returns the last half of the iterates (T - T // 2, d), or the
    first non-finite iterate (1, d).

    A non-finite iterate stays non-finite (its gradients add nothing and the update keeps the non-finite
    entries), so the run stops there: the outcome, a :class:`~dpstats.errors.ConvergenceError`, is already
    decided by released values, and the remaining passes are saved.
    """
    w, m, v = np.zeros(d), np.zeros(d), np.zeros(d)
    b1, b2 = _ADAM_BETAS
    tail_start = steps // 2
    window = np.empty((steps - tail_start, d))
    summer = block.summer
    for t in range(1, steps + 1):
        sample = np.sort(block.sample(rng))
        step = StepSum(sample, w, summer, standardisation, ranges)
        grad = block.release_grid_sum(_clipped_sum(rows, step, d), rng) / expected_batch
        if optimizer == "adam":
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            w = w - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + _ADAM_EPS)
        else:
            w = w - lr * grad
        if not np.all(np.isfinite(w)):
            return w[None, :]
        if t > tail_start:
            window[t - tail_start - 1] = w
    return window


def theory_rate(guarantee: str) -> UpperRate:
    """dpsgd has no proved rate for ||b - beta||_2 in the minimax model.

    Parameters
    ----------
    guarantee : str
        The fit's guarantee (unused: one answer).

    Returns
    -------
    UpperRate
        An entry that says why there is no rate.
    """
    return UpperRate(why_none="no rate for ||b - beta||_2 is proved for DP-SGD in this model")


SPEC = MethodSpec(
    name="dpsgd",
    title="DP-SGD (noisy clipped stochastic gradient descent)",
    citation="Abadi et al. (CCS 2016); Poisson-sampled Gaussian accounted with dp_accounting PLD",
    fit=fit,
    options=DPSGDOptions,
    needs_bounds=False,
    unbounded_guarantee="the method clips each row's gradient to a public norm",
    null_rows=True,
    null_marks=True,
    regimes="baseline that needs no data bounds (worst-case DP by gradient clipping); sensitive to the clip norm "
            "and learning rate, which must be chosen without looking at the data",
    theory_rate=theory_rate,
    raw_units_warning=(
        "DP-SGD ran on the data's own units (not every variable has declared bounds, so there was no public "
        "rescaling to [-1, 1]); its default clip norm and learning rate and its start at 0 assume coefficients and "
        "per-row gradients of order 1, and on other scales the coefficients can be off by orders of magnitude. "
        "Declare bounds for every variable, or pass clip_norm= and learning_rate= on your data's scale."),
)
