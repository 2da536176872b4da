"""DP-SGD for least squares (Abadi et al., "Deep learning with differential privacy", CCS 2016).

See ALGORITHMS.md section 7.  The loss is l(w; x, y) = (1/2)(w'x - y)^2 with
per-example gradient g_i = (w'x_i - y_i) x_i.  Each of T steps

1. draws a Poisson sample B_t of the rows, each row independently with rate
   q = batch_size / n (true Poisson sampling, not shuffled fixed batches, so
   the accounting matches the sampling actually done);
2. clips every g_i, i in B_t, to L2 norm C (``clip_norm``) and releases
   sum_i clip_C(g_i) + N(0, (z C)^2 I);
3. divides by the expected batch size q n (public) and takes an Adam or plain
   SGD step (post-processing of the released sums).

Privacy.  Steps 1-2 are one Poisson-sampled Gaussian mechanism per step,
released through :class:`~dpstats.privacy.mechanisms.PoissonGaussianBlock`.
The noise multiplier z is the smallest (to about 0.1%) for which dp_accounting's
privacy-loss-distribution (PLD) accountant certifies
``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), T)``
as (epsilon, delta)-DP under ``NeighboringRelation.REPLACE_ONE``, the
package's relation.  :func:`~dpstats.privacy.mechanisms.poisson_gaussian_epsilon`
proves that this accounting is valid for vector-valued clipped gradients:
its replace-one pair of mixtures (1-q)N(0) + qN(-C) against
(1-q)N(0) + qN(+C) dominates every pair of neighbours at every step, and the
composition of dominating pairs dominates the adaptive composition (Zhu,
Dong & Wang 2022, Thm 10).  (dp_accounting's default add/remove analysis
would under-state the cost under replace-one, by a factor of up to about 2
in epsilon at typical settings.)  The whole run is charged to the ledger as one
``approximate-dp`` step, before any data is touched, with the accountant's
epsilon for the calibrated z (at most the budget) and the fit's delta.

The guarantee is worst-case: clipping bounds every row's influence whatever
the data, so no data bounds are needed.  The clip norm, learning rate, batch
size and epochs are utility choices only.  The defaults (C = 0.1 sqrt(d),
Adam with learning rate 0.05, expected batch sqrt(n), 10 epochs, average of
the last half of the iterates) are fixed public rules, chosen on public and
synthetic data for a design on unit scale, which the API produces (public
rescaling to [-1, 1]) whenever every variable has declared bounds.  On that
scale sqrt(d) bounds every gradient near w = 0, but a clip well below it
does better: with symmetric errors independent of x, the clipped
estimating equation E[clip_C(r x)] = 0 still holds at the true coefficients
(a Huber-type reweighting), and the noise, z C per step, shrinks with C
while Adam's step is scale free.  Without bounds, give ``learning_rate``
(and perhaps ``clip_norm``) on the scale of your coefficients and of
|residual| * ||x||.

Extreme finite values (no bounds: every finite double is a valid entry).
A row whose residual or gradient overflows (entries near 1.8e308) has a
gradient far longer than C, whose clipped value is C sign(r) x / ||x||: it
is passed to the mechanism as such (computed on the row divided by its
largest entry), never as inf or NaN; the mechanism clips every row again,
so the sensitivity is its own whatever the data.  Rows whose plain gradient
has a finite squared norm are unchanged, bit for bit.

Hyperparameters must not be tuned on the private data (Amin et al. 2023 tuned
theirs non-privately, which this package does not reproduce); the defaults
are fixed public rules of n and d.

Data read in chunks (files, Dask; :func:`fit_chunks`): one pass over the
data per step.  Step t draws its Poisson sample exactly as in memory (the
same :meth:`~dpstats.privacy.mechanisms.PoissonGaussianBlock.sample` call on
the public n, with the fit's generator), then one pass evaluates, in each
chunk, only the sampled rows (their global indices, via ``select``) and
returns the exact integer sum of their clipped, grid-rounded gradients at
the current iterate (:class:`~dpstats.privacy.mechanisms.ClippedGridSum`);
the integer partial sums are added exactly and the noise is added once
(:meth:`~dpstats.privacy.mechanisms.PoissonGaussianBlock.release_grid_sum`).
Privacy is unchanged: the sample has the same (true Poisson) law, the sum of
the same clipped rows is the same integer vector whatever the split, and the
noise is the same draw, so every release is the same mechanism as in memory
and the same accounting applies; for the same seed the fit is identical.
Only integer d-vectors leave a chunk; the secret sample is sent to the
workers that hold the rows (which see the rows themselves) and is never
released.  The passes cannot be merged: step t's gradients are taken at the
iterate released after step t - 1, so T steps need T passes, each reading
every chunk (only about q n rows are evaluated per pass).  With the defaults
T is about 10 sqrt(n) (10,000 passes at n = 10^6); a larger ``batch_size``
(and fewer ``epochs``) cut the passes to epochs * n / batch_size, at the
usual DP-SGD trade-off (fewer, larger noisy steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np
from scipy import optimize

from dpstats.bounds import DataBounds
from dpstats.errors import ConvergenceError, MethodOptionError
from dpstats.methods.extremes import QUIET, residuals, unit_rows
from dpstats.methods.legacy import (  # TEMPORARY: the adapter, until this method is ported
    LegacyMethodFit as MethodFit, LegacyMethodSpec as MethodSpec, register_legacy as register,
)
from dpstats.methods.sufficient import RowChunks
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.validation import check_privacy_parameters
from dpstats.privacy.mechanisms import (
    ClippedGridSum, PoissonGaussianBlock, add_grid_sums, poisson_gaussian_block, poisson_gaussian_epsilon,
)

__all__ = ["fit", "fit_chunks", "calibrate_noise_multiplier", "default_batch_size"]

_OPTIMIZERS = ("adam", "sgd")
_DEFAULT_EPOCHS = 10
_DEFAULT_CLIP_PER_SQRT_D = 0.1
_DEFAULT_LR = {"adam": 0.05, "sgd": 0.5}
_ADAM_BETAS = (0.9, 0.999)
_ADAM_EPS = 1e-8


@lru_cache(maxsize=512)
def calibrate_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int) -> float:
    """Smallest noise multiplier z (to about 0.1%) whose T-step Poisson-sampled Gaussian is (epsilon, delta)-DP.

    Brent's method on log z for
    :func:`~dpstats.privacy.mechanisms.poisson_gaussian_epsilon` (dp_accounting
    PLD, replace-one), after bracketing the root by factors of 4; the result is
    then moved up until that same function certifies it, so the returned z
    never exceeds the budget.  Depends on public quantities only.
    """
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError("calibration needs a finite epsilon > 0 and 0 < delta < 1")
    check_privacy_parameters(epsilon, delta)  # the supported range (a search beyond it would not end in time)

    def excess(log_z: float) -> float:
        return poisson_gaussian_epsilon(math.exp(log_z), sampling_rate, steps, delta) - epsilon

    lo, hi = math.log(0.25), math.log(4.0)
    while excess(lo) <= 0:
        lo, hi = lo - math.log(4.0), lo
    while excess(hi) > 0:
        lo, hi = hi, hi + math.log(4.0)
    z = math.exp(optimize.brentq(excess, lo, hi, xtol=1e-4))
    while excess(math.log(z)) > 0:
        z *= 1.001
    return z


def default_batch_size(n: int) -> int:
    """Public default expected batch size: about sqrt(n), at least 32 and at most n (10 epochs: ~10 sqrt(n) steps)."""
    return int(min(n, max(32, round(math.sqrt(n)))))


@dataclass(frozen=True)
class _Plan:
    """The public settings of a run, decided from n, d and the options before anything is charged."""

    clip_norm: float
    learning_rate: float
    sampling_rate: float
    steps: int
    optimizer: str


def _plan(n: int, d: int, *, clip_norm: float | None, learning_rate: float | None, batch_size: int | None,
          epochs: float, optimizer: str) -> _Plan:
    """Validate the options (public; refusals spend nothing) and fix C, the learning rate, q and T."""
    C = float(_DEFAULT_CLIP_PER_SQRT_D * math.sqrt(d) if clip_norm is None else clip_norm)
    if not (C > 0 and math.isfinite(C)):
        raise MethodOptionError(f"clip_norm must be a finite number > 0, got {clip_norm!r}")
    if optimizer not in _OPTIMIZERS:
        raise MethodOptionError(f"optimizer must be one of {', '.join(_OPTIMIZERS)}, got {optimizer!r}")
    lr = float(_DEFAULT_LR[optimizer] if learning_rate is None else learning_rate)
    if not (lr > 0 and math.isfinite(lr)):
        raise MethodOptionError(f"learning_rate must be a finite number > 0, got {learning_rate!r}")
    L = default_batch_size(n) if batch_size is None else batch_size
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise MethodOptionError(f"batch_size must be a positive integer, got {batch_size!r}")
    if not (isinstance(epochs, (int, float, np.integer, np.floating)) and 0 < epochs <= 1e4):
        raise MethodOptionError(f"epochs must be a number in (0, 10000], got {epochs!r}")
    q = min(1.0, int(L) / n)
    return _Plan(C, lr, q, max(1, math.ceil(float(epochs) / q)), optimizer)


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, clip_norm: float | None = None, learning_rate: float | None = None,
        batch_size: int | None = None, epochs: float = _DEFAULT_EPOCHS, optimizer: str = "adam",
        **options: Any) -> MethodFit:
    """DP-SGD (Abadi et al. 2016) for least squares with Poisson sampling; see the module docstring.

    Parameters
    ----------
    clip_norm:
        Per-example gradient clip C (default 0.1 sqrt(d), for the API's
        rescaled [-1, 1] design).
    learning_rate:
        Step size (default 0.05 for Adam, 0.5 for SGD; both on the gradient
        of the mean loss).
    batch_size:
        Expected batch size L; the sampling rate is q = L / n (default
        :func:`default_batch_size`).
    epochs:
        Passes over the data in expectation; T = ceil(epochs / q) steps.
    optimizer:
        ``"adam"`` (as in Amin et al.'s baseline) or ``"sgd"``.

    The released coefficients are the average of the iterates over the last
    half of the steps (Polyak-Ruppert averaging, post-processing), which
    cancels much of the injected noise.
    """
    n, d = X.shape
    plan = _plan(n, d, clip_norm=clip_norm, learning_rate=learning_rate, batch_size=batch_size, epochs=epochs,
                 optimizer=optimizer)

    def clipped_sum(step: _StepSum) -> np.ndarray:
        return step(X[step.sample], y[step.sample], 0)

    return _run(plan, n, d, clipped_sum, ledger=ledger, rng=rng)


def fit_chunks(rows: RowChunks, *, ledger: PrivacyLedger, rng: np.random.Generator, bounds: DataBounds | None,
               clip_norm: float | None = None, learning_rate: float | None = None, batch_size: int | None = None,
               epochs: float = _DEFAULT_EPOCHS, optimizer: str = "adam", **options: Any) -> MethodFit:
    """DP-SGD on rows read chunk by chunk (files, Dask): the same fit as :func:`fit` for the same data and seed.

    One pass per step (module docstring, "Data read in chunks"): each pass
    evaluates only the rows of the step's Poisson sample and returns the
    exact integer sum of their clipped gradients, so the T releases are those
    of the in-memory fit and the privacy proof applies unchanged.  Cost: T
    passes over the data (T = ceil(epochs n / batch_size), about 10 sqrt(n)
    with the defaults), each reading every chunk; memory O(q n + d) on the
    driver besides one chunk.  The options are those of :func:`fit`.
    """
    n, d = rows.n, rows.d
    plan = _plan(n, d, clip_norm=clip_norm, learning_rate=learning_rate, batch_size=batch_size, epochs=epochs,
                 optimizer=optimizer)

    def clipped_sum(step: _StepSum) -> np.ndarray:
        total = rows.reduce(step, add_grid_sums)
        return np.zeros(d, dtype=np.int64) if total is None else total

    fitted = _run(plan, n, d, clipped_sum, ledger=ledger, rng=rng)
    fitted.notes = (*fitted.notes, f"data read in chunks: one pass over the data per step ({fitted.info['steps']} "
                    "passes, each evaluating only that step's Poisson sample; a step needs the previous iterate, "
                    "so the passes cannot be merged)")
    return fitted


class _StepSum:
    """fn(X, y, offset) of one step: the exact integer sum of the clipped, grid-rounded gradients
    (w'x_i - y_i) x_i of the sampled rows it is given (picklable, for Dask).

    ``select`` names the chunk's sampled rows from ``sample`` (the sorted
    global indices of the step's Poisson sample), so only those are
    evaluated.  The residuals are row-wise sums, so a row's gradient does not
    depend on which other rows share its chunk.
    """

    def __init__(self, sample: np.ndarray, w: np.ndarray, summer: ClippedGridSum) -> None:
        self.sample, self.w, self.summer = sample, w, summer

    def select(self, offset: int, count: int) -> np.ndarray:
        lo, hi = np.searchsorted(self.sample, [offset, offset + count])
        return self.sample[lo:hi] - offset

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        with np.errstate(**QUIET):
            return self.summer(_gradients(X, y, self.w, self.summer.clip_norm))


def _gradients(X: np.ndarray, y: np.ndarray, w: np.ndarray, clip_norm: float) -> np.ndarray:
    """The per-row gradients (w'x_i - y_i) x_i handed to the mechanism, which clips them to norm C.

    Computed plainly (bit for bit) where the gradient's squared norm is finite.  A row whose residual or
    gradient overflows (values near the largest double) has a gradient of norm far above C, whose clipped
    value is C sign(r_i) x_i / ||x_i||: that row is passed already clipped
    (:func:`~dpstats.methods.extremes.unit_rows`, :func:`~dpstats.methods.extremes.residuals`), instead of
    contributing nothing; a row whose residual is 0 contributes 0.  Each row's vector depends on that row and
    the released iterate only, and the mechanism clips it again, so the sensitivity is the mechanism's
    whatever the data.
    """
    resid = (X * w).sum(axis=1) - y
    grads = X * resid[:, None]
    bad = ~np.isfinite(np.einsum("ij,ij->i", grads, grads))
    if bad.any():
        r = residuals(X[bad], y[bad], w)
        grads[bad] = np.sign(r)[:, None] * clip_norm * unit_rows(X[bad])
    return grads


def _run(plan: _Plan, n: int, d: int, clipped_sum: Callable[[_StepSum], np.ndarray], *, ledger: PrivacyLedger,
         rng: np.random.Generator) -> MethodFit:
    """Calibrate, charge the whole run once, then take the T steps; ``clipped_sum`` evaluates one step's sum."""
    q, steps, C, lr = plan.sampling_rate, plan.steps, plan.clip_norm, plan.learning_rate
    z = calibrate_noise_multiplier(float(ledger.epsilon), float(ledger.delta), q, steps)
    block = poisson_gaussian_block(noise_multiplier=z, sampling_rate=q, rounds=steps, clip_norm=C, n=n,
                                   ledger=ledger, name="DP-SGD clipped gradient sums", dimension=d)

    with np.errstate(over="ignore", invalid="ignore"):  # divergence is detected below, after the loop
        params = _train(block, clipped_sum, rng, d=d, steps=steps, expected_batch=q * n, lr=lr,
                        optimizer=plan.optimizer)
    if not np.all(np.isfinite(params)):
        raise ConvergenceError(
            f"DP-SGD diverged (non-finite coefficients) with learning_rate={lr:g}; lower it. The privacy budget "
            "of this fit was spent")
    return MethodFit(
        params=params,
        notes=(f"DP-SGD: {steps} steps, sampling rate q={q:.4g} (expected batch {q * n:.4g}), clip norm "
               f"{C:.4g}, noise multiplier {z:.4g}, {plan.optimizer} with learning rate {lr:g}; coefficients are "
               "the average of the last half of the iterates",),
        info={"noise_multiplier": z, "steps": steps, "sampling_rate": q, "clip_norm": C, "learning_rate": lr,
              "optimizer": plan.optimizer},
    )


def _train(block: PoissonGaussianBlock, clipped_sum: Callable[[_StepSum], np.ndarray], rng: np.random.Generator,
           *, d: int, steps: int, expected_batch: float, lr: float, optimizer: str) -> np.ndarray:
    """The T noisy steps (Adam or SGD) from w = 0; returns the average of the last half of the iterates.

    A non-finite iterate stays non-finite (its gradients add nothing and
    the update keeps the non-finite entries), so the run stops there: the
    outcome, a :class:`~dpstats.errors.ConvergenceError`, is already decided
    by released values, and a chunked fit saves its remaining passes.
    """
    w, m, v, w_sum = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
    b1, b2 = _ADAM_BETAS
    tail_start = steps // 2
    summer = block.summer
    for t in range(1, steps + 1):
        sample = np.sort(block.sample(rng))
        grad = block.release_grid_sum(clipped_sum(_StepSum(sample, w, summer)), rng) / expected_batch
        if optimizer == "adam":
            m = b1 * m + (1 - b1) * grad
            v = b2 * v + (1 - b2) * grad * grad
            w = w - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + _ADAM_EPS)
        else:
            w = w - lr * grad
        if not np.all(np.isfinite(w)):
            return w
        if t > tail_start:
            w_sum += w
    return w_sum / (steps - tail_start)


SPEC = register(MethodSpec(
    name="dpsgd",
    title="DP-SGD (noisy clipped stochastic gradient descent)",
    citation="Abadi et al. (CCS 2016); Poisson-sampled Gaussian accounted with dp_accounting PLD",
    fit=fit,
    needs_bounds=False,
    null_rows=True,
    regimes="baseline that needs no data bounds (worst-case DP by gradient clipping); sensitive to the clip norm "
            "and learning rate, which must be chosen without looking at the data",
    options=("clip_norm", "learning_rate", "batch_size", "epochs", "optimizer"),
    auto_rank=None,
    fit_chunks=fit_chunks,
    raw_units_warning=(
        "DP-SGD ran on the data's own units (not every variable has declared bounds, so there was no public "
        "rescaling to [-1, 1]); its default clip norm and learning rate and its start at 0 assume coefficients and "
        "per-row gradients of order 1, and on other scales the coefficients can be off by orders of magnitude. "
        "Declare bounds for every variable, or pass clip_norm= and learning_rate= on your data's scale."),
))
