"""Sufficient statistics perturbation (SSP).

Foulds, Geumlek, Welling & Chaudhuri (UAI 2016); the Gaussian variant used as
a baseline by Wang (UAI 2018) and by Liu et al. (2023, "DP-SSP").  See
ALGORITHMS.md section 3.

Privacy (replace-one neighbours, n public, worst case given the declared
bounds, which are enforced by clipping rows of X column-wise and y):

* X^T X: releasing its upper triangle, a replaced row changes it by at most
  ||x x^T - x' x'^T||_F <= sqrt(2) B_X^2 in L2 (with ||x||, ||x'|| <= B_X);
* X^T y: ||x y - x' y'||_2 <= 2 B_X B_Y;
* y^T y (only with ``inference=True``): |y^2 - y'^2| <= B_Y^2.

All are Gaussian releases.  The (epsilon, delta) budget is converted to a GDP
parameter mu exactly (Balle & Wang 2018) and split as mu_i = mu sqrt(w_i / sum
w) with weights 1 : 1 (: INFERENCE_WEIGHT); GDP composition of Gaussians is
exact, so the releases together are exactly (epsilon, delta)-DP.  The estimate
(XX~)^{-1} Xy~ is post-processing; an indefinite XX~ has its eigenvalues
floored at the noise scale of the X^T X release (public).  Standard errors and
intervals come from a parametric bootstrap on the released values
(:mod:`dpstats.inference`).

Data read in chunks (files, Dask): X^T X, X^T y and y^T y of the clipped rows
are sums of one term per row, accumulated chunk by chunk
(:mod:`dpstats.methods.sufficient`); :func:`fit_statistics` releases them and
is also what the in-memory :func:`fit` calls.  The released quantities are the
same functions of the data whatever the partition (only the order of the
floating-point additions changes), so the privacy argument above is unchanged.
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
from dpstats.methods.linalg import solve_noisy_normal_equations
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.methods.sufficient import StatisticsPlan, SufficientStatistics, check_bounds_range
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, symmetric_gaussian_mechanism

#: share of the GDP budget (mu^2) given to y^T y when inference is on, relative to 1 for X^T X and 1 for
#: X^T y; chosen by experiment (benchmarks/coverage.py --split): sigma^2 needs little precision at any n
#: where the point estimate is useful, and 0.1 costs the point estimate about 2% more noise.
INFERENCE_WEIGHT = 0.1


def release_gram(gram: np.ndarray, mu: float, x_norm: float, *, rng: np.random.Generator,
                 ledger: PrivacyLedger) -> tuple[np.ndarray, float]:
    """Noisy X^T X (``gram``, symmetric noise), replace-one sensitivity sqrt(2) B_X^2; returns (XX~, sigma)."""
    sens = math.sqrt(2.0) * square(x_norm)
    noisy = symmetric_gaussian_mechanism(gram, l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                         name="noisy X^T X")
    return noisy, sens / mu


def release_moment(xty: np.ndarray, mu: float, x_norm: float, y_abs: float, *,
                   rng: np.random.Generator, ledger: PrivacyLedger) -> tuple[np.ndarray, float]:
    """Noisy X^T y (``xty``, of the clipped rows) with replace-one sensitivity 2 B_X B_Y; returns (Xy~, sigma)."""
    sens = 2.0 * x_norm * y_abs
    noisy = gaussian_mechanism_mu(np.asarray(xty, dtype=float), l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                  name="noisy X^T y")
    return noisy, sens / mu


def release_yty(yty: float, mu: float, y_abs: float, *, rng: np.random.Generator,
                ledger: PrivacyLedger) -> tuple[float, float]:
    """Noisy y^T y (``yty``, of the clipped responses; for the residual variance) with replace-one sensitivity
    B_Y^2; returns (yy~, sigma)."""
    sens = square(y_abs)
    noisy = gaussian_mechanism_mu(float(yty), l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                  name="noisy y^T y (for inference)")
    return float(noisy), sens / mu


def check_inference_options(inference: bool, bootstrap: int) -> None:
    if not isinstance(inference, bool):
        raise MethodOptionError("inference must be True or False")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer)) or bootstrap < 100:
        raise MethodOptionError("bootstrap must be an integer >= 100 (number of bootstrap replicates)")


def plan_statistics(bounds: DataBounds | None, *, inference: bool = True, bootstrap: int = 1000,
                    **options: Any) -> StatisticsPlan:
    """Validate the options before any data are read; SSP accumulates X^T X, X^T y, y^T y of the clipped rows."""
    check_inference_options(inference, bootstrap)
    return StatisticsPlan()


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, inference: bool = True, bootstrap: int = 1000, **options: Any) -> MethodFit:
    """Gaussian SSP with exact calibration; see the module docstring.

    Parameters
    ----------
    inference:
        Spend a share of the budget on y^T y and return bootstrap standard
        errors and intervals (default).  ``False`` gives the whole budget to
        the point estimate.
    bootstrap:
        Number of parametric bootstrap replicates.
    """
    plan = plan_statistics(bounds, inference=inference, bootstrap=bootstrap)
    assert bounds is not None, "ssp needs bounds (checked by the API)"
    check_bounds_range(bounds, X.shape[0])  # public: before any row is read
    stats = SufficientStatistics.from_arrays(X, y, bounds, plan)
    return fit_statistics(stats, ledger=ledger, rng=rng, bounds=bounds, inference=inference, bootstrap=bootstrap)


def fit_statistics(stats: SufficientStatistics, *, ledger: PrivacyLedger, rng: np.random.Generator,
                   bounds: DataBounds | None, inference: bool = True, bootstrap: int = 1000,
                   **options: Any) -> MethodFit:
    """The SSP release from accumulated statistics of the clipped rows (in-memory and chunked fits alike)."""
    check_inference_options(inference, bootstrap)
    assert bounds is not None, "ssp needs bounds (checked by the API)"
    if not stats.clipped:
        raise ValueError("ssp needs statistics of rows clipped to the declared bounds")
    check_bounds_range(bounds, stats.n)
    n = stats.n
    mu = gaussian_mu(ledger.epsilon, ledger.delta)
    mus = split_mu(mu, [1.0, 1.0, INFERENCE_WEIGHT] if inference else [1.0, 1.0])
    xx, sigma_xx = release_gram(stats.xtx, mus[0], bounds.x_norm, rng=rng, ledger=ledger)
    xy, sigma_xy = release_moment(stats.xty, mus[1], bounds.x_norm, bounds.y_abs, rng=rng, ledger=ledger)
    params = solve_noisy_normal_equations(xx, xy, eigen_floor=sigma_xx)
    info: dict[str, Any] = {"gram_noise_sd": sigma_xx}
    if not inference:
        return MethodFit(params=params, info=info,
                         bse_unavailable_reason="inference=False gave the whole budget to the point estimate")
    yy, sigma_yy = release_yty(stats.yty, mus[2], bounds.y_abs, rng=rng, ledger=ledger)
    release = SufficientStatisticsRelease(xx, xy, yy, n, sigma_xx, sigma_xy, sigma_yy)
    draws, sigma2 = parametric_bootstrap(
        release, params, lambda g, m, _: solve_noisy_normal_equations(g, m, eigen_floor=sigma_xx), bootstrap, rng)
    info["sigma2_hat_scaled"] = sigma2
    ratio = noise_to_signal(release)
    info["noise_to_signal"] = ratio
    notes = (unreliable_note(ratio),) if ratio > RELIABILITY_THRESHOLD else ()
    return MethodFit(params=params, draws=draws, info=info, notes=notes)


SPEC = register(MethodSpec(
    name="ssp",
    title="Sufficient statistics perturbation",
    citation="Foulds et al. (UAI 2016); Wang (UAI 2018)",
    fit=fit,
    needs_bounds=True,
    regimes="bounded data, n large relative to d*B_X^2/epsilon; simple baseline",
    options=("inference", "bootstrap"),
    theory="ssp",
    fit_statistics=fit_statistics,
    plan_statistics=plan_statistics,
))
