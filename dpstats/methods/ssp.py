"""Sufficient statistics perturbation (SSP).

Foulds, Geumlek, Welling & Chaudhuri (UAI 2016); the Gaussian variant used as
a baseline by Wang (UAI 2018) and by Liu et al. (2023, "DP-SSP").  See
ALGORITHMS.md section 3.

Privacy (replace-one neighbours, n public, worst case given the declared
bounds, which are enforced by clipping rows of X column-wise and y):

* X^T X: releasing its upper triangle, a replaced row changes it by at most
  ||x x^T - x' x'^T||_F <= sqrt(2) B_X^2 in L2 (with ||x||, ||x'|| <= B_X);
* X^T y: ||x y - x' y'||_2 <= 2 B_X B_Y.

Both are Gaussian releases.  The (epsilon, delta) budget is converted to a
GDP parameter mu exactly (Balle & Wang 2018) and split as
mu_XX = mu_Xy = mu / sqrt(2); GDP composition of Gaussians is exact, so the
pair is exactly (epsilon, delta)-DP.  The estimate
(XX~)^{-1} Xy~ is post-processing; an indefinite XX~ has its eigenvalues
floored at the noise scale of the X^T X release (public).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.methods.linalg import solve_noisy_normal_equations
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, symmetric_gaussian_mechanism


def release_gram(X: np.ndarray, mu: float, x_norm: float, *, rng: np.random.Generator,
                 ledger: PrivacyLedger) -> tuple[np.ndarray, float]:
    """Noisy X^T X (symmetric noise) with replace-one sensitivity sqrt(2) B_X^2; returns (XX~, sigma)."""
    sens = math.sqrt(2.0) * x_norm**2
    noisy = symmetric_gaussian_mechanism(X.T @ X, l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                         name="noisy X^T X")
    return noisy, sens / mu


def release_moment(X: np.ndarray, y: np.ndarray, mu: float, x_norm: float, y_abs: float, *,
                   rng: np.random.Generator, ledger: PrivacyLedger) -> np.ndarray:
    """Noisy X^T y with replace-one sensitivity 2 B_X B_Y."""
    return gaussian_mechanism_mu(X.T @ y, l2_sensitivity=2.0 * x_norm * y_abs, mu=mu, rng=rng, ledger=ledger,
                                 name="noisy X^T y")


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, **options: Any) -> MethodFit:
    """Gaussian SSP with exact calibration; see the module docstring."""
    assert bounds is not None, "ssp needs bounds (checked by the API)"
    Xc, yc = bounds.clip(X, y)
    mu = gaussian_mu(ledger.epsilon, ledger.delta)
    mu_xx, mu_xy = split_mu(mu, [1.0, 1.0])
    xx, sigma_xx = release_gram(Xc, mu_xx, bounds.x_norm, rng=rng, ledger=ledger)
    xy = release_moment(Xc, yc, mu_xy, bounds.x_norm, bounds.y_abs, rng=rng, ledger=ledger)
    params = solve_noisy_normal_equations(xx, xy, eigen_floor=sigma_xx)
    return MethodFit(params=params, info={"gram_noise_sd": sigma_xx})


SPEC = register(MethodSpec(
    name="ssp",
    title="Sufficient statistics perturbation",
    citation="Foulds et al. (UAI 2016); Wang (UAI 2018)",
    fit=fit,
    needs_bounds=True,
    regimes="bounded data, n large relative to d*B_X^2/epsilon; simple baseline",
    theory="ssp",
))
