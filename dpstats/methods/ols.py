"""Non-private ordinary least squares: the reference every private method is measured against.

NOT PRIVATE.  Requires ``epsilon=float('inf')`` so that it can never be run by
mistake with a budget, and every output labels it.

One pass over the rows computes the R factor of the augmented rows [X | y]
(:mod:`dpstats.methods.common.least_squares`, combined over chunks by TSQR),
so the fit is Householder least squares on the whole design whether the rows
are in memory (one chunk), in files or on a Dask cluster.  The columns are
equilibrated before the rank decision (see :func:`solve`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

from dpstats.bounds import DataBounds
from dpstats.methods.common.least_squares import LeastSquaresFactor, LeastSquaresPass, combine_factors
from dpstats.methods.spec import (
    ErrorSplit,
    FitContext,
    Inference,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
)
from dpstats.rates import Rate, UpperRate, classical_n
from dpstats.rows.base import Combine, Rows

__all__ = ["OLSOptions", "fit", "solve", "SPEC"]


@dataclass(frozen=True)
class OLSOptions(MethodOptions):
    """``ols`` has no options."""


def least_squares_pass(bounds: DataBounds | None, options: object
                       ) -> tuple[LeastSquaresPass, Combine[LeastSquaresFactor]]:
    """The one pass of ols: the R factor of [X | y] of the raw rows (the pipeline does not clip for ols)."""
    return LeastSquaresPass(), combine_factors


def solve(factor: LeastSquaresFactor) -> MethodFit:
    """Least squares from the R factor of [X | y], with classical (non-private) standard errors.

    With R = [[R_X, r_y], [0, rho]], the columns of R_X are divided by their
    norms D (the norms of X's columns) before solving (beta = D^-1 argmin
    ||Z g - r_y|| with Z = R_X D^-1), so the rank decision of ``lstsq``
    (singular values below max(n, d) * machine epsilon times the largest, as
    for ``lstsq`` on the whole design) is made on columns of unit norm: a
    design whose columns differ in scale by many orders of magnitude (1e-9 and
    1e12) is not declared rank deficient for its units alone.  The covariance
    is sigma^2 D^-1 Z^-1 Z^-T D^-1.
    """
    n, d = factor.n, factor.d
    r = factor.triangle()
    r_x, r_y, rho = r[:d, :d], r[:d, d], r[d, d]
    norms = np.linalg.norm(r_x, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    z = r_x / scale
    coef, _, rank, _ = np.linalg.lstsq(z, r_y, rcond=max(n, d) * np.finfo(float).eps)
    params = coef / scale
    resid = z @ coef - r_y
    rss = float(resid @ resid) + float(rho) ** 2
    df_resid = n - int(rank)
    diagnostics: dict[str, object] = {"rank": int(rank), "df_resid": int(df_resid)}
    if not (df_resid > 0 and rank == d):
        return MethodFit(params=params, no_inference_reason="design is rank deficient",
                         notes=("NOT PRIVATE: computed directly from the data",), diagnostics=diagnostics)
    sigma2 = rss / df_resid
    z_inv = solve_triangular(z, np.eye(d))
    cov = sigma2 * (z_inv @ z_inv.T) / np.outer(scale, scale)
    rsquared = 1.0 - rss / factor.y_m2 if factor.y_m2 > 0 else math.nan
    diagnostics.update(scale=sigma2, rsquared=rsquared)
    return MethodFit(params=params, inference=Inference("classical", cov=cov, df=int(df_resid)), rsquared=rsquared,
                     notes=("NOT PRIVATE: computed directly from the data",), diagnostics=diagnostics,
                     error_split=ErrorSplit(np.zeros((d, d)), cov, "none (NOT PRIVATE)",
                                            "the classical covariance (NOT PRIVATE)"))


def fit(rows: Rows, ctx: FitContext, options: OLSOptions) -> MethodFit:
    """OLS on the rows (one pass; see the module docstring)."""
    return solve(rows.reduce(*least_squares_pass(ctx.bounds, options)))


#: the classical rate of least squares
RATE = Rate("upper", "OLS rate (NOT PRIVATE)", "Gauss-Markov", "sqrt(d/n)",
            lambda n, d, s: math.sqrt(d / n), lambda n, d, e, dl, s: 0.0, classical_n, ())


def theory_rate(guarantee: str) -> UpperRate:
    return UpperRate(RATE)


SPEC = MethodSpec(
    name="ols",
    title="Ordinary least squares (non-private reference)",
    citation="Gauss/Legendre; the non-private baseline of every paper",
    fit=fit,
    options=OLSOptions,
    needs_bounds=False,
    private=False,
    relation="none",
    guarantee="none",
    regimes="reference only: requires epsilon=inf; NOT PRIVATE",
    min_rows=lambda d: d,
    inference_rule=InferenceRule("classical"),
    theory_rate=theory_rate,
    first_pass=least_squares_pass,
)
