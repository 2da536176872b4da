"""DP-LASSO with Peeling (Cai, Wang & Zhang 2021, Algorithm 4), worst-case DP by default.

Sparse, possibly high-dimensional (d > n) linear regression.  See
ALGORITHMS.md section 5.  With (epsilon, delta), data (X, y), step size eta,
sparsity s_hat, truncation T and N0 iterations, Algorithm 4 is:

1. split the rows at random into N0 disjoint parts (X_(t), y_(t)) of size about
   m = n / N0 (a public random permutation; sizes depend on n only): row i
   is at position pi(i) of the public pseudo-random bijection
   :class:`~dpstats.methods.blocks.RowPermutation`, and part t holds the
   positions of ``np.array_split(range(n), N0)[t]`` (privacy needs only that
   the parts are disjoint and chosen without the data; the mixing serves
   utility: parts must not follow the order of the rows);
2. beta^(0) = 0 (s_hat-sparse);
3. for t = 0..N0-1:
   beta^(t+0.5) = beta^(t) - eta (1/m_t) X_(t)^T (X_(t) beta^(t) - f_T(y_(t))),
   beta^(t+1) = Peeling(beta^(t+0.5), s_hat, lambda, epsilon, delta);
4. output beta^(N0).

Sensitivity, default ``guarantee="worst-case"`` [derived, ALGORITHMS.md 5]:
rows are clipped column-wise to the declared bounds, so |x_ij| <= c_x (the
largest |bound| of any column), labels are clipped to their range and truncated
at T, and each residual x_i^T beta^(t) - f_T(y_i) is clipped to [-R, R]
(default R = 2T).  Replacing one row of part t changes its per-sample
gradient x r by at most 2 c_x R in every coordinate, so beta^(t+0.5), an
average over m_t >= m_min = floor(n / N0) rows, has l_inf-sensitivity

    lambda = 2 eta c_x R / m_min,

for every data set and every (public) beta^(t): the update is a gradient step
on the Huber-type loss whose derivative is the clipped residual.  With R = 2T,
eta = 1 and c_x = 1 this is the paper's 4T / (n/N0), and under the paper's
assumptions (|x^T beta^(t)| <= T with high probability) no residual is clipped,
so the algorithm coincides with Algorithm 4 on that event and Thm 17's rate
carries over.

Privacy: each Peeling call is (epsilon, delta_p)-DP in lambda
(:func:`~dpstats.privacy.mechanisms.peeling_noise_multiplier`, exact PLD
calibration, delta_p = 0 when the pure bound suffices).  A replaced row lies in
exactly one part, and the parts' calls are adaptively chained only through
their public outputs, so by parallel composition the whole run is
(epsilon, delta_p)-DP under replace-one neighbours.  The ledger records the
N0 calls as one step with the per-part (epsilon, delta_p).

Opt-in ``guarantee="conditional"`` is Algorithm 4 as written: no residual
clipping, lambda = 2 eta c_x (2T) / m_min, which bounds the sensitivity only on
the event |x^T beta^(t)| <= T for all rows and iterates; privacy then holds only
with high probability under the paper's model (Thm 17).

Defaults: T = B_Y (the declared label bound; the paper asks T >= K sigma
sqrt(log n)) as in the paper.  s_hat has no default: the paper takes
s_hat ≍ s (the true sparsity), which only the user can know.  The step size
and the number of iterations are CHANGED from the paper's (next section).

Step size and iterations [derived; changed from the paper].  Cai et al. take
eta = 1 (= 1/c_x^2 under their scaling ||x||_inf <= 1) and N0 ≍ log n, which
contracts the error only when the design is well conditioned (their
lambda_max(Sigma_X) < Lambda with eta ≈ 2/(lambda_max + lambda_min), ALGORITHMS.md 5).
On real designs rescaled to [-1, 1] (dummies and columns far from centred
within their bounds) the restricted curvature is several times c_x^2 and the
iteration with eta = 1/c_x^2 oscillates and grows until the residual clip
binds (diamonds: in-sample R^2 -270).  The default step is instead

    eta = 1 / L_2s,   L_2s = sum of the min(d, 2 s_hat) largest c_j^2,

with c_j the largest |bound| of column j: a public bound on the smoothness of
every part's loss (the mean of the Huber-type loss whose derivative is the
clipped residual, curvature at most that of least squares) along any
2 s_hat-sparse direction, since ||x_S||^2 <= sum_{j in S} c_j^2.  The bound
over 2 s_hat coordinates (not d) suffices although the gradient is dense:
beta^(t+1) - beta^(t) is supported on supp beta^(t) ∪ supp beta^(t+1), at most
2 s_hat coordinates, so the descent lemma gives
f(beta^(t+1)) <= f(beta^(t)) + <g, Delta> + (L_2s / 2) ||Delta||^2, and when
beta^(t+1) is the exact top-s_hat truncation of beta^(t) - eta g (Peeling
without noise), <g, Delta> <= -||Delta||^2 / (2 eta), so with eta <= 1/L_2s
the part's loss does not increase (the majorisation argument for iterative
hard thresholding, Blumensath & Davies 2009, with the smoothness restricted
to 2 s_hat-sparse moves).  The bound is attained by
designs within the bounds (2 s_hat equal columns at +-c_x), so no larger
public step is safe.  The argument covers the noiseless recursion: Peeling's
noise perturbs both the selected support and the released values, each step
by about its noise scale b; it enters additively at every step and is not
bounded by the argument.

The default number of iterations keeps the paper's product eta c_x^2 N0 =
log n: N0 = ceil(log(n) / (eta c_x^2)) (capped at n), which is ceil(log n)
for the paper's eta = 1/c_x^2 and ceil((L_2s / c_x^2) log n) for the default
step.  Since lambda is proportional to eta N0 / n, the Peeling sensitivity is
then about the paper's 2 c_x R log(n) / n for every step size; the price of
the safe step is L_2s / c_x^2 times more iterations on parts that many times
smaller, so a weaker signal per step against the same noise (on the paper's design, d = 1000, n = 5000, s = 5, support
recovery needs epsilon ≈ 10 instead of 1 at the default step; pass
step_size = 1/c_x^2 when the design is publicly known to be near isotropic,
e.g. independent centred +-1 columns).  Privacy needs no change for any N0:
the parts stay disjoint, each call is calibrated to its own lambda, and the
ledger records one step (above).  Public-fact notes flag a step above
1/L_2s, and (post-processing of the released iterates) a run whose iterates
still move in the second half, which happens on ill-conditioned designs,
where this gradient method needs far more iterations than log n / eta.

The intercept, if the design has one, is one of the d coordinates and competes
for the s_hat slots; drop it ("- 1") when the response is centred by public
constants.

Units: with every bound declared, :func:`dpstats.dp_ols` and
:func:`dpstats.dp_ols_arrays` rescale the columns and the response to
[-1, 1] by the declared ranges before fitting (on by default), so then
c_x = 1, and ``truncation`` and ``residual_bound`` are fractions of
the response's declared half-range (e.g. residual_bound = 4 sigma / s_y); with
``rescale=False`` they are in the response's own units.  A residual bound of a
few sigma, rather than the default 2T, cuts the Peeling noise by the factor
2T / R at the price of a Huber-type bias early in the iterations.

Cost: O(n d + N0 s_hat d).

Numeric range: rows are clipped to the declared bounds, so every sum a part
forms is at most n c_x max(c_x, T, R); the fit refuses, from the bounds and
n alone (:func:`~dpstats.methods.common.sufficient.check_statistics_range`), bounds
so wide (near 1e150, with ``rescale=False``) that such a sum could overflow
for some data.  A residual x'beta - f_T(y) at a huge released iterate is
never NaN (:func:`~dpstats.methods.extremes.residuals`); in the conditional
fit, which does not clip residuals, it is clipped at 1e300 / (n c_x), a
public size no residual reaches on data that do not overflow.

Data read in chunks (files, Dask; :func:`fit_chunks`): one pass over the data
per iteration.  Pass t evaluates, in each chunk, only the rows whose position
pi(i) falls in part t (a row's part depends only on its index and the public
keys of pi, so it is the same part as in memory whatever the chunking) and
returns the sum over them of the clipped x_i times the clipped residual
(a d-vector); the driver divides by the public part size and runs the same
Peeling release.  Each Peeling input is therefore the same function of the
same rows as in memory (the sum is added in another order), the parts are
disjoint, and the proof above applies unchanged.  Cost: N0 passes (default
ceil((L_2s / c_x^2) log n), 185 at n = 10^8 and min(d, 2 s_hat) = 10), each
reading every chunk but evaluating only about n / N0 of the rows, so the design is evaluated about once in total;
memory O(d) on the driver besides one chunk.  The iterations cannot share a
pass: iteration t's gradient is taken at the iterate released by iteration
t - 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.blocks import RowPermutation
from dpstats.methods.legacy import (  # TEMPORARY: the adapter, until this method is ported
    LegacyMethodFit as MethodFit, LegacyMethodSpec as MethodSpec, register_legacy as register,
)
from dpstats.methods.extremes import quiet, residuals
from dpstats.methods.common.sufficient import STATISTICS_LIMIT, check_statistics_range
from dpstats.methods.sufficient import RowChunks
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import peeling_block

NO_STANDARD_ERRORS = (
    "DP-LASSO selects its support with Peeling; the law of coefficients after a private selection is not "
    "Gaussian and no valid private post-selection interval is known, so none is reported"
)

__all__ = ["fit", "fit_chunks"]

_GUARANTEES = ("worst-case", "conditional")


def _positive(name: str, value: Any) -> float:
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise MethodOptionError(f"{name} must be a finite number > 0, got {value!r}")
    return v


@dataclass(frozen=True)
class _Plan:
    """The public settings of a run (from n, d, the bounds and the options), fixed before anything is charged."""

    n: int
    sparsity: int
    parts: int
    truncation: float
    step_size: float
    residual_bound: float | None  # None: guarantee="conditional", residuals not clipped
    linf_sensitivity: float
    guarantee: str
    smoothness: float  # L_2s, the public restricted-smoothness bound

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


def _smoothness_bound(bounds: DataBounds, sparsity: int) -> float:
    """L_2s, a public bound on the restricted smoothness of every part's loss: the sum of the min(d, 2 s_hat)
    largest squared column bounds c_j^2 (see the module docstring, "Step size and iterations")."""
    c2 = np.sort(np.maximum(bounds.column_lo ** 2, bounds.column_hi ** 2))[::-1]
    return float(np.sum(c2[:min(c2.size, 2 * sparsity)]))


def _iterations(n: int, eta_c2: float, iterations: int | None) -> int:
    """N0: given, or ceil(log(n) / (eta c_x^2)) capped at n (module docstring, "Step size and iterations")."""
    if iterations is None:
        ratio = math.log(n) / eta_c2 if eta_c2 > 0 else math.inf  # a step too small for a double: n parts
        return int(min(n, max(1, math.ceil(ratio)))) if ratio < n else n
    if isinstance(iterations, bool) or int(iterations) != iterations or iterations < 1:
        raise MethodOptionError(f"iterations must be a positive integer, got {iterations!r}")
    return int(iterations)


def _plan(n: int, d: int, bounds: DataBounds, *, sparsity: int | None, truncation: float | None,
          iterations: int | None, step_size: float | None, residual_bound: float | None, guarantee: str) -> _Plan:
    """Validate the options (public facts only; refusals spend nothing) and fix T, eta, N0, R and lambda."""
    if guarantee not in _GUARANTEES:
        raise MethodOptionError(f"guarantee must be one of {', '.join(_GUARANTEES)}, got {guarantee!r}")
    if sparsity is None:
        raise MethodOptionError("lasso needs sparsity=s_hat, the number of non-zero coefficients to release "
                                "(Cai et al. take s_hat of the order of the true sparsity s)")
    if isinstance(sparsity, bool) or int(sparsity) != sparsity or not 1 <= sparsity <= d:
        raise MethodOptionError(f"sparsity must be an integer between 1 and d={d}, got {sparsity!r}")
    T = bounds.y_abs if truncation is None else min(_positive("truncation", truncation), bounds.y_abs)
    c_x = float(np.max(np.maximum(np.abs(bounds.column_lo), np.abs(bounds.column_hi))))
    if not c_x > 0:
        raise MethodOptionError("every design column is bounded to {0}; there is nothing to fit")
    check_statistics_range(n * d, c_x * max(c_x, T))  # public: the smoothness bound and the sums stay finite
    smooth = _smoothness_bound(bounds, int(sparsity))
    eta = 1.0 / smooth if step_size is None else _positive("step_size", step_size)
    n_parts = _iterations(n, eta * c_x * c_x, iterations)
    if n < n_parts:
        raise InsufficientDataError(f"lasso splits the rows into iterations={n_parts} parts; n={n} is too few")
    if guarantee == "conditional":
        if residual_bound is not None:
            raise MethodOptionError("residual_bound belongs to the worst-case fit; guarantee='conditional' runs "
                                    "Algorithm 4 without residual clipping")
        R = 2.0 * T
    else:
        R = 2.0 * T if residual_bound is None else _positive("residual_bound", residual_bound)
        check_statistics_range(n, c_x * R)  # a part's gradient sum, |x r| <= c_x R per row, stays finite
    lam = 2.0 * eta * c_x * R / (n // n_parts)
    return _Plan(n, int(sparsity), n_parts, T, eta, R if guarantee == "worst-case" else None, lam, guarantee,
                 smooth)


class _PartGradient:
    """fn(X, y, offset) of iteration t: sum_i clip(x_i) r_i over the rows of part t it is given, with r_i the
    residual clip(x_i)' beta - f_T(clip(y_i)), clipped to [-R, R] in the worst-case fit (picklable, for Dask).

    ``select`` names the chunk's rows of part t from their indices alone
    (positions under the public permutation), so only those are evaluated.
    """

    def __init__(self, perm: RowPermutation, plan: _Plan, part: int, beta: np.ndarray, bounds: DataBounds) -> None:
        self.perm, self.plan, self.part, self.beta, self.bounds = perm, plan, part, beta, bounds

    def select(self, offset: int, count: int) -> np.ndarray:
        positions = self.perm.positions(np.arange(offset, offset + count, dtype=np.int64))
        return np.flatnonzero(self.plan.part_of(positions) == self.part)

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Xc, yc = self.bounds.clip(X, y, inplace=True)  # the caller's own copies of the part's rows
        T, R = self.plan.truncation, self.plan.residual_bound
        resid = residuals(Xc, np.clip(yc, -T, T), self.beta)  # never NaN, even at a huge released iterate
        if R is None:  # conditional fit: no clipping, except at the public size beyond which the sum overflows
            c_x = float(np.max(np.maximum(np.abs(self.bounds.column_lo), np.abs(self.bounds.column_hi))))
            R = STATISTICS_LIMIT / (self.plan.n * c_x)
        np.clip(resid, -R, R, out=resid)
        return Xc.T @ resid


def _add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b in place on ``a`` (a reducer over chunks)."""
    a += b
    return a


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, sparsity: int | None = None, truncation: float | None = None,
        iterations: int | None = None, step_size: float | None = None, residual_bound: float | None = None,
        guarantee: str = "worst-case", **options: Any) -> MethodFit:
    """DP-LASSO with Peeling (Cai, Wang & Zhang 2021, Algorithm 4); see the module docstring.

    Parameters
    ----------
    sparsity:
        s_hat, the number of non-zero coefficients released (required).
    truncation:
        T of f_T; default and maximum B_Y, the declared bound on |y|.
    iterations:
        N0, the number of disjoint parts and gradient steps; default ceil(log(n) / (eta c_x^2)), capped at n.
    step_size:
        eta; default 1 / L_2s, the sum of the min(d, 2 s_hat) largest squared column bounds (Cai et al.'s
        choice is 1 / c_x^2, c_x the largest |column bound|; module docstring, "Step size and iterations").
    residual_bound:
        R, worst-case only: residuals are clipped to [-R, R]; default 2T.
    guarantee:
        ``"worst-case"`` (default) or ``"conditional"`` (Algorithm 4 as written,
        DP only with high probability under the paper's model).
    """
    assert bounds is not None, "lasso needs bounds (checked by the API)"
    n, d = X.shape
    plan = _plan(n, d, bounds, sparsity=sparsity, truncation=truncation, iterations=iterations,
                 step_size=step_size, residual_bound=residual_bound, guarantee=guarantee)
    perm = RowPermutation.draw(n, rng)
    order = perm.order()  # order[p]: the row at position p

    def gradient_sum(step: _PartGradient) -> np.ndarray:
        start, stop = plan.part_range(step.part)
        idx = np.sort(order[start:stop])
        return step(X[idx].astype(float, copy=False), y[idx].astype(float, copy=False), 0)  # fresh copies

    return _run(plan, d, perm, bounds, gradient_sum, ledger=ledger, rng=rng)


def fit_chunks(rows: RowChunks, *, ledger: PrivacyLedger, rng: np.random.Generator, bounds: DataBounds | None,
               sparsity: int | None = None, truncation: float | None = None, iterations: int | None = None,
               step_size: float | None = None, residual_bound: float | None = None, guarantee: str = "worst-case",
               **options: Any) -> MethodFit:
    """DP-LASSO with Peeling on rows read chunk by chunk (files, Dask): the same fit as :func:`fit` for the same
    data and seed (module docstring, "Data read in chunks").  N0 passes, one per iteration; the options are
    those of :func:`fit`."""
    assert bounds is not None, "lasso needs bounds (checked by the API)"
    n, d = rows.n, rows.d
    plan = _plan(n, d, bounds, sparsity=sparsity, truncation=truncation, iterations=iterations,
                 step_size=step_size, residual_bound=residual_bound, guarantee=guarantee)
    perm = RowPermutation.draw(n, rng)

    def gradient_sum(step: _PartGradient) -> np.ndarray:
        total = rows.reduce(step, _add)
        return np.zeros(d) if total is None else total

    fitted = _run(plan, d, perm, bounds, gradient_sum, ledger=ledger, rng=rng)
    fitted.notes = (*fitted.notes, f"data read in chunks: one pass over the data per iteration ({plan.parts} "
                    "passes, each evaluating only that iteration's part)")
    return fitted


def _run(plan: _Plan, d: int, perm: RowPermutation, bounds: DataBounds,
         gradient_sum: Callable[[_PartGradient], np.ndarray], *, ledger: PrivacyLedger,
         rng: np.random.Generator) -> MethodFit:
    """Charge the N0 Peeling calls once (parallel composition), then iterate; ``gradient_sum`` evaluates one
    part's clipped gradient sum at the current iterate."""
    block = peeling_block(parts=plan.parts, sparsity=plan.sparsity, linf_sensitivity=plan.linf_sensitivity,
                          epsilon=ledger.epsilon, delta=ledger.delta, ledger=ledger, name="DP-LASSO Peeling steps",
                          dimension=d)
    beta, half = np.zeros(d), np.zeros(d)
    for t in range(plan.parts):
        start, stop = plan.part_range(t)
        step = _PartGradient(perm, plan, t, beta, bounds)
        beta = block.release(beta - plan.step_size * gradient_sum(step) / (stop - start), rng=rng)
        if t == (plan.parts - 1) // 2:
            half = beta

    T, R, s_hat, n_parts, lam = plan.truncation, plan.residual_bound, plan.sparsity, plan.parts, plan.linf_sensitivity
    info = {"sparsity": s_hat, "iterations": n_parts, "step_size": plan.step_size, "truncation": T,
            "linf_sensitivity": lam, "peeling_noise_scale": block.scale, "smoothness_bound": plan.smoothness}
    notes = [f"DP-LASSO: {n_parts} gradient steps of size {plan.step_size:.3g} on disjoint parts of >= "
             f"{plan.n // n_parts} rows, each followed by Peeling of the top {s_hat} coordinates; labels truncated "
             f"to [-{T:.4g}, {T:.4g}]", *_warnings(plan, beta, half, block.scale)]
    if R is not None:
        info["residual_bound"] = R
        notes.append(f"residuals clipped to [-{R:.4g}, {R:.4g}] so that the Peeling sensitivity holds for every "
                     "data set")
        return MethodFit(params=beta, notes=tuple(notes), info=info, guarantee="worst-case",
                         bse_unavailable_reason=NO_STANDARD_ERRORS)
    assumptions = (
        "CONDITIONAL PRIVACY: the (epsilon, delta) guarantee holds only with high probability over data drawn "
        "from Cai, Wang & Zhang's sparse model (Thm 17), not for every data set.",
        f"It assumes |x^T beta^(t)| <= T = {T:.4g} for every row x and every iterate beta^(t), so that each "
        f"residual is at most 2T and the Peeling sensitivity {lam:.4g} holds; this is likely when the errors are "
        "sigma-sub-Gaussian, ||beta||_2 is bounded and T >= K sigma sqrt(log n).",
        "If the assumption fails for the actual data, the released coefficients may reveal more than epsilon "
        "allows.",
    )
    return MethodFit(params=beta, assumptions=assumptions, notes=tuple(notes), info=info, guarantee="conditional",
                     bse_unavailable_reason=NO_STANDARD_ERRORS)


def _warnings(plan: _Plan, beta: np.ndarray, half: np.ndarray, noise_scale: float) -> list[str]:
    """Notes on a likely poor fit, from public facts and the released iterates only (post-processing).

    * eta > 1/L_2s: the gradient step is not guaranteed stable (module docstring).
    * Not converged: the released iterates moved, over the second half of the run, by more than a tenth of
      the final coefficients' norm and more than the Peeling noise explains (a few noise scales per released
      coordinate); the error contracts geometrically on well-conditioned designs, so a drift this late
      points to an ill-conditioned design (strongly correlated or uncentred columns) or too few iterations.
    * Noise only: every released coefficient is within 3 Peeling noise scales of 0 (Laplace: |noise| > 3b with
      probability e^-3 = 5 %), so the selection is not distinguishable from noise; typical when the
      per-step signal, about eta times the gradient, is small against the noise scale.
    """
    notes = []
    if plan.step_size * plan.smoothness > 1.0 + 1e-12:
        notes.append(f"step_size {plan.step_size:.3g} exceeds 1/L_2s = {1.0 / plan.smoothness:.3g}, the largest "
                     "step that is stable for every design within the bounds; the iterates may oscillate or "
                     "grow on correlated designs")
    drift = float(np.linalg.norm(beta - half))
    noise = 4.0 * noise_scale * math.sqrt(2.0 * 2 * plan.sparsity)
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


SPEC = register(MethodSpec(
    name="lasso",
    title="DP-LASSO with Peeling",
    citation="Cai, Wang & Zhang (Ann. Statist. 2021), Algorithm 4; Peeling from Dwork, Su & Zhang (2021)",
    fit=fit,
    needs_bounds=True,
    null_rows=True,
    regimes="sparse coefficients (s_hat given), d large, including d > n; bounded data",
    min_rows=lambda d: 2,
    options=("sparsity", "truncation", "iterations", "step_size", "residual_bound", "guarantee"),
    allows_wide=True,
    theory="lasso",
    fit_chunks=fit_chunks,
))
