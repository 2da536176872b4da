"""Non-private ordinary least squares: the reference every private method is measured against.

NOT PRIVATE.  Requires ``epsilon=float('inf')`` so that it can never be run by
mistake with a budget, and every output labels it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.methods.linalg import solve_noisy_normal_equations
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.methods.sufficient import StatisticsPlan, SufficientStatistics
from dpstats.privacy.ledger import PrivacyLedger


def _column_scales(X: np.ndarray) -> np.ndarray:
    """Euclidean norm of each column (1 for an all-zero column), for column equilibration."""
    norms = np.linalg.norm(X, axis=0)
    return np.where(norms > 0, norms, 1.0)


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, **options: Any) -> MethodFit:
    """Least squares by ``lstsq`` on the column-equilibrated design, with classical (non-private) standard errors.

    The columns are divided by their norms D before solving (X = Z D, beta = D^-1 argmin ||Z g - y||), so the
    rank decision of ``lstsq`` (singular values below max(n, d) * machine epsilon times the largest) is made on Z,
    whose columns have unit norm: a design whose columns differ in scale by many orders of magnitude (1e-9 and
    1e12) is not declared rank deficient for its units alone.  The covariance is D^-1 (Z'Z)^-1 D^-1 sigma^2.  On
    well-scaled designs the result equals that of ``lstsq`` on X up to rounding.
    """
    n, d = X.shape
    scale = _column_scales(X)
    Z = X / scale
    coef, _, rank, _ = np.linalg.lstsq(Z, y, rcond=None)
    params = coef / scale
    resid = y - Z @ coef
    df_resid = n - rank
    info: dict[str, Any] = {"rank": int(rank), "df_resid": int(df_resid)}
    bse = None
    if df_resid > 0 and rank == d:
        sigma2 = float(resid @ resid) / df_resid
        cov = sigma2 * np.linalg.inv(Z.T @ Z) / np.outer(scale, scale)
        bse = np.sqrt(np.diag(cov))
        info.update(cov_params=cov, scale=sigma2, tdist_df=df_resid,
                    rsquared=1.0 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum()))
    return MethodFit(params=params, bse=bse,
                     bse_unavailable_reason="" if bse is not None else "design is rank deficient",
                     notes=("NOT PRIVATE: computed directly from the data",), info=info)


def plan_statistics(bounds: DataBounds | None, **options: Any) -> StatisticsPlan:
    return StatisticsPlan()


def fit_statistics(stats: SufficientStatistics, *, ledger: PrivacyLedger, rng: np.random.Generator,
                   bounds: DataBounds | None, **options: Any) -> MethodFit:
    """Least squares from the normal equations of accumulated X^T X, X^T y, y^T y (data read in chunks).

    Used only for chunked sources: the in-memory :func:`fit` keeps ``lstsq``,
    which is more accurate on ill-conditioned designs; on well-conditioned
    ones the two agree to rounding.  The sums are of the raw rows (the API
    does not clip for this method).
    """
    n, d = stats.n, stats.d
    gram = stats.xtx
    params = solve_noisy_normal_equations(gram, stats.xty)
    w = np.linalg.eigvalsh(0.5 * (gram + gram.T))
    rank = int(np.sum(w > max(abs(float(w[-1])), 1.0) * d * np.finfo(float).eps)) if d else 0
    df_resid = n - rank
    info: dict[str, Any] = {"rank": rank, "df_resid": int(df_resid)}
    bse = None
    if df_resid > 0 and rank == d:
        rss = max(stats.yty - 2.0 * float(params @ stats.xty) + float(params @ gram @ params), 0.0)
        sigma2 = rss / df_resid
        cov = sigma2 * np.linalg.inv(gram)
        bse = np.sqrt(np.diag(cov))
        info.update(cov_params=cov, scale=sigma2, tdist_df=df_resid)
    return MethodFit(params=params, bse=bse,
                     bse_unavailable_reason="" if bse is not None else "design is rank deficient",
                     notes=("NOT PRIVATE: computed directly from the data (normal equations of sums over chunks)",),
                     info=info)


SPEC = register(MethodSpec(
    name="ols",
    title="Ordinary least squares (non-private reference)",
    citation="Gauss/Legendre; the non-private baseline of every paper",
    fit=fit,
    needs_bounds=False,
    private=False,
    relation="none",
    guarantee="none",
    regimes="reference only: requires epsilon=inf; NOT PRIVATE",
    min_rows=lambda d: d,
    theory=None,
    fit_statistics=fit_statistics,
    plan_statistics=plan_statistics,
))

