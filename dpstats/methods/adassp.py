"""AdaSSP: sufficient statistics perturbation with a private, adaptive ridge.

Wang, "Revisiting differentially private linear regression: optimal and
adaptive prediction & estimation in unbounded domain", UAI 2018, Algorithm 2.
See ALGORITHMS.md section 2.

Three Gaussian releases, each with a third of the budget (mu/sqrt(3) each in
GDP, which composes exactly to the requested (epsilon, delta); the paper's
per-release constant sqrt(ln(6/delta))/(epsilon/3) undershoots delta and is
not used):

1. lambda_min(X^T X), L2 sensitivity B_X^2 under replace-one (Weyl: the
   eigenvalues of x x^T - x' x'^T lie in [-B_X^2, B_X^2]), shifted down by
   s_1 sqrt(ln(6/delta)) so that it is below the truth with high probability;
2. X^T X, symmetric noise, sensitivity sqrt(2) B_X^2;
3. X^T y, sensitivity 2 B_X B_Y.

With ``inference=True`` (default) a fourth release, y^T y (sensitivity B_Y^2),
takes a share INFERENCE_WEIGHT of mu^2 (the other three keep equal shares),
and a parametric bootstrap that re-runs steps 1-3 on simulated releases gives
standard errors and intervals (:mod:`dpstats.inference`).

The ridge is lambda = max(0, s_2 sqrt(d ln(2 d^2 / rho)) - lambda_min~),
Wang's step 2 written with the noise sd s_2 of release 2 (his formula is the
same with his s_2 = sqrt(ln(6/delta)) B_X^2 / (epsilon/3)); the estimate
(XX~ + lambda I)^{-1} Xy~ is post-processing.

Data read in chunks (files, Dask): every release is a function of X^T X,
X^T y and y^T y of the clipped rows (lambda_min is computed from the
accumulated X^T X), which are sums over rows accumulated chunk by chunk
(:mod:`dpstats.methods.sufficient`).  :func:`fit_statistics` is the one
release used by the in-memory and the chunked fits; the released quantities
are the same functions of the data whatever the partition (only the order of
the floating-point additions changes), so the privacy argument is unchanged.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import MethodOptionError
from dpstats.inference import (
    RELIABILITY_THRESHOLD, SufficientStatisticsRelease, noise_to_signal, parametric_bootstrap, unreliable_note,
)
from dpstats.methods.extremes import square
from dpstats.methods.linalg import psd_projection, solve_noisy_normal_equations
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.methods.sufficient import StatisticsPlan, SufficientStatistics, check_bounds_range
from dpstats.methods.ssp import (
    INFERENCE_WEIGHT, check_inference_options, release_gram, release_moment, release_yty,
)
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, post_processing_normal


def plan_statistics(bounds: DataBounds | None, *, rho: float = 0.05, inference: bool = True,
                    bootstrap: int = 1000, **options: Any) -> StatisticsPlan:
    """Validate the options before any data are read; AdaSSP accumulates X^T X, X^T y, y^T y of the clipped rows."""
    check_inference_options(inference, bootstrap)
    if not (0 < rho < 1):
        raise MethodOptionError("rho must lie in (0, 1)")
    return StatisticsPlan()


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, rho: float = 0.05, inference: bool = True, bootstrap: int = 1000,
        **options: Any) -> MethodFit:
    """AdaSSP (Wang 2018, Alg. 2) with exact Gaussian calibration.

    Parameters
    ----------
    rho:
        Failure probability of the eigenvalue bound that sets the ridge
        (Wang's rho, default 0.05).
    inference, bootstrap:
        As for :func:`dpstats.methods.ssp.fit`.
    """
    plan = plan_statistics(bounds, rho=rho, inference=inference, bootstrap=bootstrap)
    assert bounds is not None, "adassp needs bounds (checked by the API)"
    check_bounds_range(bounds, X.shape[0])  # public: before any row is read
    stats = SufficientStatistics.from_arrays(X, y, bounds, plan)
    return fit_statistics(stats, ledger=ledger, rng=rng, bounds=bounds, rho=rho, inference=inference,
                          bootstrap=bootstrap)


def fit_statistics(stats: SufficientStatistics, *, ledger: PrivacyLedger, rng: np.random.Generator,
                   bounds: DataBounds | None, rho: float = 0.05, inference: bool = True, bootstrap: int = 1000,
                   **options: Any) -> MethodFit:
    """The AdaSSP releases from accumulated statistics of the clipped rows (in-memory and chunked fits alike)."""
    plan_statistics(bounds, rho=rho, inference=inference, bootstrap=bootstrap)
    assert bounds is not None, "adassp needs bounds (checked by the API)"
    if not stats.clipped:
        raise ValueError("adassp needs statistics of rows clipped to the declared bounds")
    check_bounds_range(bounds, stats.n)  # before lambda_min is computed from the sums
    n, d = stats.n, stats.d
    delta = ledger.delta
    mu = gaussian_mu(ledger.epsilon, delta)
    mus = split_mu(mu, [1.0, 1.0, 1.0, INFERENCE_WEIGHT] if inference else [1.0, 1.0, 1.0])
    mu_lam, mu_xx, mu_xy = mus[:3]
    b2 = square(bounds.x_norm)

    gram = stats.xtx
    lam_min = float(np.linalg.eigvalsh(gram)[0])
    s_lam = b2 / mu_lam
    noisy_lam = gaussian_mechanism_mu(lam_min, l2_sensitivity=b2, mu=mu_lam, rng=rng, ledger=ledger,
                                      name="noisy lambda_min(X^T X)")
    shift = s_lam * math.sqrt(math.log(6.0 / delta))
    lam_min_tilde = max(0.0, noisy_lam - shift)

    sens_xx = math.sqrt(2.0) * b2
    sigma_xx = sens_xx / mu_xx
    ridge_level = sigma_xx * math.sqrt(d * math.log(2.0 * d * d / rho))
    ridge = max(0.0, ridge_level - lam_min_tilde)

    xx, _ = release_gram(gram, mu_xx, bounds.x_norm, rng=rng, ledger=ledger)
    xy, sigma_xy = release_moment(stats.xty, mu_xy, bounds.x_norm, bounds.y_abs, rng=rng, ledger=ledger)
    params = solve_noisy_normal_equations(xx, xy, ridge=ridge)
    info: dict[str, Any] = {"ridge": ridge, "lambda_min_tilde": lam_min_tilde, "gram_noise_sd": sigma_xx}
    if not inference:
        return MethodFit(params=params, info=info,
                         bse_unavailable_reason="inference=False gave the whole budget to the point estimate")
    yy, sigma_yy = release_yty(stats.yty, mus[3], bounds.y_abs, rng=rng, ledger=ledger)
    release = SufficientStatisticsRelease(xx, xy, yy, n, sigma_xx, sigma_xy, sigma_yy)
    lam_q = float(np.linalg.eigvalsh(psd_projection(xx))[0])

    def estimator(gram: np.ndarray, moment: np.ndarray, boot_rng: np.random.Generator) -> np.ndarray:
        lam = np.maximum(0.0, lam_q + s_lam * post_processing_normal(gram.shape[0], boot_rng) - shift)
        return solve_noisy_normal_equations(gram, moment, ridge=np.maximum(0.0, ridge_level - lam))

    draws, sigma2 = parametric_bootstrap(release, params, estimator, bootstrap, rng)
    info["sigma2_hat_scaled"] = sigma2
    ratio = noise_to_signal(release)
    info["noise_to_signal"] = ratio
    notes: tuple[str, ...] = (unreliable_note(ratio),) if ratio > RELIABILITY_THRESHOLD else ()
    if ridge > 0.1 * lam_min_tilde:
        notes += ("WARNING: the private ridge is not small next to the certified lambda_min(X^T X), so the "
                 "estimate is shrunk; the bootstrap corrects the bias only approximately and intervals may "
                 "under-cover (more rows, a larger epsilon or fewer columns help)",)
    return MethodFit(params=params, draws=draws, info=info, notes=notes)


SPEC = register(MethodSpec(
    name="adassp",
    title="AdaSSP (adaptive sufficient statistics perturbation)",
    citation="Wang (UAI 2018), Algorithm 2",
    fit=fit,
    needs_bounds=True,
    regimes="bounded data of any n; adapts its ridge to lambda_min(X^T X); the default when bounds are given",
    options=("rho", "inference", "bootstrap"),
    theory="adassp",
    auto_rank=10,
    fit_statistics=fit_statistics,
    plan_statistics=plan_statistics,
))
