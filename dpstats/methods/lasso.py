"""DP-LASSO with Peeling (Cai, Wang & Zhang 2021, Algorithm 4), worst-case DP by default.

Sparse, possibly high-dimensional (d > n) linear regression.  See
ALGORITHMS.md section 5.  With (epsilon, delta), data (X, y), step size eta,
sparsity s_hat, truncation T and N0 iterations, Algorithm 4 is:

1. split the rows at random into N0 disjoint parts (X_(t), y_(t)) of size about
   m = n / N0 (a public random permutation; sizes depend on n only);
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

Defaults follow the paper: N0 = ceil(log n) (N0 ≍ log n), T = B_Y (the
declared label bound; the paper asks T >= K sigma sqrt(log n)), eta = 1/c_x^2
(eta = 1 after scaling the covariates to ||x||_inf <= 1, the scaling under
which the paper's lambda = 4T/(n/N0) holds).  s_hat has no default: the paper
takes s_hat ≍ s (the true sparsity), which only the user can know.

The intercept, if the design has one, is one of the d coordinates and competes
for the s_hat slots; drop it ("- 1") when the response is centred by public
constants.

Units: with every bound declared, :func:`dpstats.dp_ols` and
:func:`dpstats.dp_ols_arrays` rescale the columns and the response to
[-1, 1] by the declared ranges before fitting (on by default), so then
c_x = 1, eta = 1, and ``truncation`` and ``residual_bound`` are fractions of
the response's declared half-range (e.g. residual_bound = 4 sigma / s_y); with
``rescale=False`` they are in the response's own units.  A residual bound of a
few sigma, rather than the default 2T, cuts the Peeling noise by the factor
2T / R at the price of a Huber-type bias early in the iterations.

Cost: O(n d + N0 s_hat d).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import peeling_block, permutation

NO_STANDARD_ERRORS = (
    "DP-LASSO selects its support with Peeling; the law of coefficients after a private selection is not "
    "Gaussian and no valid private post-selection interval is known, so none is reported"
)

__all__ = ["fit"]

_GUARANTEES = ("worst-case", "conditional")


def _positive(name: str, value: Any) -> float:
    v = float(value)
    if not (v > 0 and math.isfinite(v)):
        raise MethodOptionError(f"{name} must be a finite number > 0, got {value!r}")
    return v


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
        N0, the number of disjoint parts and gradient steps; default ceil(log n).
    step_size:
        eta; default 1 / c_x^2 with c_x the largest |column bound|.
    residual_bound:
        R, worst-case only: residuals are clipped to [-R, R]; default 2T.
    guarantee:
        ``"worst-case"`` (default) or ``"conditional"`` (Algorithm 4 as written,
        DP only with high probability under the paper's model).
    """
    assert bounds is not None, "lasso needs bounds (checked by the API)"
    n, d = X.shape
    if guarantee not in _GUARANTEES:
        raise MethodOptionError(f"guarantee must be one of {', '.join(_GUARANTEES)}, got {guarantee!r}")
    if sparsity is None:
        raise MethodOptionError("lasso needs sparsity=s_hat, the number of non-zero coefficients to release "
                                "(Cai et al. take s_hat of the order of the true sparsity s)")
    if isinstance(sparsity, bool) or int(sparsity) != sparsity or not 1 <= sparsity <= d:
        raise MethodOptionError(f"sparsity must be an integer between 1 and d={d}, got {sparsity!r}")
    s_hat = int(sparsity)
    T = bounds.y_abs if truncation is None else min(_positive("truncation", truncation), bounds.y_abs)
    n_parts = max(1, math.ceil(math.log(n))) if iterations is None else iterations
    if isinstance(n_parts, bool) or int(n_parts) != n_parts or n_parts < 1:
        raise MethodOptionError(f"iterations must be a positive integer, got {iterations!r}")
    n_parts = int(n_parts)
    if n < n_parts:
        raise InsufficientDataError(f"lasso splits the rows into iterations={n_parts} parts; n={n} is too few")
    c_x = float(np.max(np.maximum(np.abs(bounds.column_lo), np.abs(bounds.column_hi))))
    if not c_x > 0:
        raise MethodOptionError("every design column is bounded to {0}; there is nothing to fit")
    eta = 1.0 / (c_x * c_x) if step_size is None else _positive("step_size", step_size)
    if guarantee == "conditional":
        if residual_bound is not None:
            raise MethodOptionError("residual_bound belongs to the worst-case fit; guarantee='conditional' runs "
                                    "Algorithm 4 without residual clipping")
        R = 2.0 * T
    else:
        R = 2.0 * T if residual_bound is None else _positive("residual_bound", residual_bound)

    Xc, yc = bounds.clip(X, y)
    yt = np.clip(yc, -T, T)
    parts = np.array_split(permutation(n, rng), n_parts)
    lam = 2.0 * eta * c_x * R / (n // n_parts)
    block = peeling_block(parts=n_parts, sparsity=s_hat, linf_sensitivity=lam, epsilon=ledger.epsilon,
                          delta=ledger.delta, ledger=ledger, name="DP-LASSO Peeling steps", dimension=d)
    beta = np.zeros(d)
    for idx in parts:
        Xt = Xc[idx]
        resid = Xt @ beta - yt[idx]
        if guarantee == "worst-case":
            resid = np.clip(resid, -R, R)
        beta = block.release(beta - eta * (Xt.T @ resid) / idx.size, rng=rng)

    info = {"sparsity": s_hat, "iterations": n_parts, "step_size": eta, "truncation": T, "linf_sensitivity": lam,
            "peeling_noise_scale": block.scale}
    notes = [f"DP-LASSO: {n_parts} gradient steps on disjoint parts of >= {n // n_parts} rows, each followed by "
             f"Peeling of the top {s_hat} coordinates; labels truncated to [-{T:.4g}, {T:.4g}]"]
    if guarantee == "worst-case":
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


SPEC = register(MethodSpec(
    name="lasso",
    title="DP-LASSO with Peeling",
    citation="Cai, Wang & Zhang (Ann. Statist. 2021), Algorithm 4; Peeling from Dwork, Su & Zhang (2021)",
    fit=fit,
    needs_bounds=True,
    regimes="sparse coefficients (s_hat given), d large, including d > n; bounded data",
    min_rows=lambda d: 2,
    options=("sparsity", "truncation", "iterations", "step_size", "residual_bound", "guarantee"),
    allows_wide=True,
    theory="lasso",
))
