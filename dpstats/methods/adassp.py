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

The ridge is lambda = max(0, s_2 sqrt(d ln(2 d^2 / rho)) - lambda_min~),
Wang's step 2 written with the noise sd s_2 of release 2 (his formula is the
same with his s_2 = sqrt(ln(6/delta)) B_X^2 / (epsilon/3)); the estimate
(XX~ + lambda I)^{-1} Xy~ is post-processing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import MethodOptionError
from dpstats.methods.linalg import solve_noisy_normal_equations
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.methods.ssp import release_gram, release_moment
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, rho: float = 0.05, **options: Any) -> MethodFit:
    """AdaSSP (Wang 2018, Alg. 2) with exact Gaussian calibration.

    Parameters
    ----------
    rho:
        Failure probability of the eigenvalue bound that sets the ridge
        (Wang's rho, default 0.05).
    """
    if not (0 < rho < 1):
        raise MethodOptionError("rho must lie in (0, 1)")
    assert bounds is not None, "adassp needs bounds (checked by the API)"
    Xc, yc = bounds.clip(X, y)
    n, d = Xc.shape
    delta = ledger.delta
    mu = gaussian_mu(ledger.epsilon, delta)
    mu_lam, mu_xx, mu_xy = split_mu(mu, [1.0, 1.0, 1.0])
    b2 = bounds.x_norm**2

    gram = Xc.T @ Xc
    lam_min = float(np.linalg.eigvalsh(gram)[0])
    s_lam = b2 / mu_lam
    noisy_lam = gaussian_mechanism_mu(lam_min, l2_sensitivity=b2, mu=mu_lam, rng=rng, ledger=ledger,
                                      name="noisy lambda_min(X^T X)")
    lam_min_tilde = max(0.0, noisy_lam - s_lam * math.sqrt(math.log(6.0 / delta)))

    sens_xx = math.sqrt(2.0) * b2
    sigma_xx = sens_xx / mu_xx
    ridge = max(0.0, sigma_xx * math.sqrt(d * math.log(2.0 * d * d / rho)) - lam_min_tilde)

    xx, _ = release_gram(Xc, mu_xx, bounds.x_norm, rng=rng, ledger=ledger)
    xy = release_moment(Xc, yc, mu_xy, bounds.x_norm, bounds.y_abs, rng=rng, ledger=ledger)
    params = solve_noisy_normal_equations(xx, xy, ridge=ridge)
    return MethodFit(params=params, info={"ridge": ridge, "lambda_min_tilde": lam_min_tilde,
                                          "gram_noise_sd": sigma_xx})


SPEC = register(MethodSpec(
    name="adassp",
    title="AdaSSP (adaptive sufficient statistics perturbation)",
    citation="Wang (UAI 2018), Algorithm 2",
    fit=fit,
    needs_bounds=True,
    regimes="bounded data of any n; adapts its ridge to lambda_min(X^T X); the default when bounds are given",
    options=("rho",),
    theory="adassp",
    auto_rank=10,
))
