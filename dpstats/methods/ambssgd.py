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
A public random permutation splits the rows into S_0 (10%) and T disjoint
mini-batches B_0..B_{T-1} of the rest; each batch is split into an
estimation part (``est_fraction``) and a gradient part.

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
   on the estimation part of B_t; the per-example gradient clipping norm is
   C_t = Theta sqrt(2 gamma_t ln(2/clip_level)) (the paper's theory value is
   reduced by a constant, as Liu et al. did in their experiments);
   g_t = (1/|B_t'|) sum clip_{C_t}(x_i (x_i^T w_t - y_i)) over the gradient
   part B_t', one matrix-vector product pair; w_{t+1} = w_t - eta (g_t + N(0,
   s_t^2 I)), s_t = (2 C_t / |B_t'|) / mu.
3. Output the tail average of w_{ceil(T/2)}, ..., w_T.

Privacy (replace-one, n public, worst case)
-------------------------------------------
Every mechanism touches its own rows: S_0 (norm histogram then spectrum,
composed: mu_0^2 = mu^2/2 each, or the spectrum alone at mu), each
estimation part (one histogram, count-vector sensitivity sqrt(2), mu-GDP),
each gradient part (clipped mean, sensitivity 2 C_t / |B_t'|, mu-GDP).  The
row sets are pairwise disjoint and the split is public, so a replaced row
enters one part only and the other mechanisms, whose data-dependent inputs
are released values, cannot tell the neighbours apart: the fit is mu-GDP,
exactly (epsilon, delta)-DP, by parallel composition (valid for adaptive
mechanisms).  This is the point of the one-pass design.  The ledger holds
one Gaussian step for the parallel block, charged before any draw; each part
family has its own ledger (disjoint releases recorded with count 1) and is
itemised in the notes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.methods.robgd import (
    part_notes, check_fraction, default_covariate_tail, parallel_block_step, rounds_from_kappa,
)
from dpstats.methods.robust_estimators import (
    LogHistogram, max_disjoint_histograms, norm_group_size, private_log_mode, private_norm_estimate, private_spectrum,
)
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_block, permutation

__all__ = ["fit"]

_S0_FRACTION = 0.1


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, trace: float | None = None, est_fraction: float = 0.2,
        clip_level: float = 0.05, covariate_tail: float | None = None, rounds: int | None = None,
        step_size: float | None = None, max_rounds: int = 2000, **options: Any) -> MethodFit:
    """DP-AMBSSGD (Varshney et al. 2022), a baseline; see the module docstring.

    Parameters
    ----------
    trace:
        Public Tr(Sigma) = E||x||^2 (the method's assumption); estimated
        privately on S_0 when None.
    est_fraction:
        Fraction of each mini-batch used for the private error estimate.
    clip_level, covariate_tail, rounds, step_size, max_rounds:
        As for ``robgd``.
    """
    n, d = X.shape
    est = check_fraction("est_fraction", est_fraction)
    level = check_fraction("clip_level", clip_level)
    if trace is not None and not (math.isfinite(trace) and trace > 0):
        raise MethodOptionError("trace must be a positive number")
    if covariate_tail is not None and not (math.isfinite(covariate_tail) and covariate_tail > 0):
        raise MethodOptionError("covariate_tail must be a positive number")
    if rounds is not None and not (int(rounds) == rounds and rounds >= 1):
        raise MethodOptionError("rounds must be a positive integer")
    if step_size is not None and not (math.isfinite(step_size) and step_size > 0):
        raise MethodOptionError("step_size must be a positive number")
    if not (int(max_rounds) == max_rounds and max_rounds >= 2):
        raise MethodOptionError("max_rounds must be an integer >= 2")
    n0 = int(round(_S0_FRACTION * n))
    rest = n - n0
    tail = default_covariate_tail(n) if covariate_tail is None else float(covariate_tail)
    need_spectrum = rounds is None or step_size is None
    if n0 < 10 or rest < 4:
        raise MethodOptionError(f"too few rows (n={n}) for DP-AMBSSGD")

    mu = gaussian_mu(ledger.epsilon, ledger.delta)
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

    perm = permutation(n, rng)
    X0 = X[perm[:n0]]
    Xr, yr = X[perm[n0:]], y[perm[n0:]]
    steps_0 = int(trace is None) + int(need_spectrum)
    mu_0 = mu / math.sqrt(max(steps_0, 1))
    info: dict[str, Any] = {"n_0": n0}
    if trace is None:
        b = norm_group_size(n0, mu_0)
        block = gaussian_block(rounds=1, mu_round=mu_0, ledger=ledger_0, name="norm histogram (Gamma ~ Tr Sigma)",
                               note=f"groups of {b} rows, 4 bins per octave")
        gamma_norm = private_norm_estimate(X0, group_size=b, block=block, rng=rng)
    else:
        gamma_norm = float(trace)
    theta_x = tail * math.sqrt(gamma_norm)
    if need_spectrum:
        spec = private_spectrum(X0, theta_x, mu=mu_0, rng=rng, ledger=ledger_0)
        kappa_cap = 2.0 * max_rounds / math.log(n)
        kappa_hat = spec.lam_max_upper / spec.lam_min_lower if spec.lam_min_lower > 0 else kappa_cap
        kappa_hat = min(max(kappa_hat, 1.0), kappa_cap)
        eta = 1.0 / spec.lam_max_upper if step_size is None else float(step_size)
        T = rounds_from_kappa(kappa_hat, n, int(max_rounds)) if rounds is None else int(rounds)
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
    norms = np.sqrt(np.einsum("ij,ij->i", Xr, Xr))
    tail_factor = math.sqrt(2.0 * math.log(2.0 / level))
    grid = LogHistogram(1)
    edges = np.linspace(0, rest, T + 1).astype(int)
    w = np.zeros(d)
    iterates = [w]
    gammas = []
    for t in range(T):
        lo, hi = edges[t], edges[t + 1]
        cut = lo + max(1, int(round(est * (hi - lo))))
        r_est = yr[lo:cut] - Xr[lo:cut] @ w
        gamma_t = private_log_mode(r_est * r_est, grid, block=est_block, rng=rng)
        clip_t = theta_x * tail_factor * math.sqrt(gamma_t)
        r = Xr[cut:hi] @ w
        r -= yr[cut:hi]
        scale = np.abs(r) * norms[cut:hi]
        r *= np.minimum(1.0, clip_t / np.maximum(scale, np.finfo(float).tiny))
        mg = hi - cut
        grad = Xr[cut:hi].T @ r / mg
        noisy = grad_block.release(grad, l2_sensitivity=2.0 * clip_t / mg, rng=rng)
        w = w - eta * noisy
        iterates.append(w)
        gammas.append(gamma_t)
    params = np.mean(iterates[math.ceil(T / 2):], axis=0)
    info.update(gammas=np.asarray(gammas),
                part_steps={"S_0": list(ledger_0.steps), "estimation parts": list(ledger_est.steps),
                            "gradient parts": list(ledger_grad.steps)})
    notes = ["BASELINE (Varshney et al. 2022): not robust to corrupted labels",
             f"rows split by a public random permutation into S_0 ({n0} rows) and {T} disjoint mini-batches; "
             "parallel composition",
             *part_notes("S_0", ledger_0), *part_notes("estimation parts", ledger_est),
             *part_notes("gradient parts", ledger_grad),
             f"T = {T} rounds, step size {eta:.4g}, tail average of the last {T + 1 - math.ceil(T / 2)} iterates"]
    if trace is not None:
        notes.append(f"Tr(Sigma) = {trace:g} was given as public knowledge (trace=)")
    return MethodFit(params=params, notes=tuple(notes), info=info,
                     assumptions=("utility (not privacy) assumes sub-Gaussian covariates and noise and no corrupted "
                                  "labels (Varshney et al. 2022)",),
                     bse_unavailable_reason=("DP-AMBSSGD releases a tail average of noisy one-pass SGD; no private estimate of its "
                                             "sampling law is available, so none is reported"))


SPEC = register(MethodSpec(
    name="ambssgd",
    title="DP-AMBSSGD (one-pass private SGD with adaptive clipping; baseline)",
    citation="Varshney, Thakurta & Jain (COLT 2022)",
    fit=fit,
    needs_bounds=False,
    regimes="baseline for DP-RobGD: no data bounds needed, large n, well-conditioned covariates, clean labels",
    min_rows=lambda d: max(1000, 50 * d),
    options=("trace", "est_fraction", "clip_level", "covariate_tail", "rounds", "step_size", "max_rounds"),
    theory=None,
    auto_rank=None,
))
