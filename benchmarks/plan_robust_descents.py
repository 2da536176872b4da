"""``dpstats.plan`` for robgd and ambssgd (and pgd's gap at a large slope) against their fits.

robgd and ambssgd plan from their calibrations (``dpstats.methods.robgd.expected_error``,
``dpstats.methods.ambssgd.expected_error``: their error blocks' model run on the values their fits would release
under the plan's assumptions).  This script measures the plan against the fits, beside the fits' own error blocks
(``res.error_bounds``, computed from the released noise scales):

* **robgd, ambssgd**, on data drawn from the plan's assumptions: ``y ~ x1 + ... + x_{d-1}``, columns uniform on
  [-1, 1] (independent, or a Gaussian copula with equicorrelation 0.5), equal standardised slopes explaining all of
  the response's declared uniform variance (3) but the residual's, normal residuals with sd 0.5, the response
  clipped to its declared [-3, 3]; n 2,000, 20,000 and 200,000, d 2 and 10, epsilon 1, 3 and 10, delta 1e-6; per
  cell the plan's privacy error, the root mean square of (released - least squares) over ``--reps`` fits and that
  of the error block's privacy column (each pooled over the coefficients), and the plan's rows and epsilon needed
  for the slopes (their largest);
* **pgd**: ``y ~ x1`` at n = 20,000, epsilon 3, residual sd 0.5, the slope 0, 0.66, 1.32 and 1.98 (and 1.32 at
  epsilon 30): the plan, the
  fits' root mean square, their sd across seeds and their mean (a gap the same on every seed), and the gap of the
  noise-free fit with the per-example gradients clipped at the fit's final clip rule (1.92 times their 0.9-quantile,
  at least squares) from least squares.

Run from the repository root (one process, about ten minutes)::

    python benchmarks/plan_robust_descents.py --reps 5       # prints one line per cell
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
import pandas as pd
from scipy.stats import norm

import dpstats
from dpstats.errors import DivergedFitWarning

RESIDUAL_SD = 0.5
Y_BOUND = 3.0


def _data(n: int, d: int, seed: int, rho: float) -> tuple[pd.DataFrame, dict[str, tuple[float, float]], str]:
    """One data set drawn from the plan's assumptions (module docstring)."""
    rng = np.random.default_rng(seed)
    p = d - 1
    z = rng.normal(size=(n, p))
    if rho and p > 1:
        z = math.sqrt(1 - rho) * z + math.sqrt(rho) * rng.normal(size=(n, 1))
    x = 2 * norm.cdf(z) - 1
    corr = np.full((p, p), rho) + (1 - rho) * np.eye(p)
    explained = Y_BOUND**2 / 3.0 - RESIDUAL_SD**2  # the uniform's variance less the residual's
    beta = np.full(p, math.sqrt(explained / float(np.ones(p) @ corr @ np.ones(p))) * math.sqrt(3.0))  # sd(x) 1/sqrt 3
    cols = [f"x{j + 1}" for j in range(p)]
    df = pd.DataFrame(x, columns=cols)
    df["y"] = np.clip(x @ beta + rng.normal(0, RESIDUAL_SD, n), -Y_BOUND, Y_BOUND)
    bounds = {c: (-1.0, 1.0) for c in cols} | {"y": (-Y_BOUND, Y_BOUND)}
    return df, bounds, "y ~ " + " + ".join(cols)


def _rms(a: np.ndarray) -> float:
    return float(np.sqrt(np.nanmean(np.asarray(a, float) ** 2)))


def robust_descents(reps: int, methods: tuple[str, ...], sizes: tuple[int, ...]) -> None:
    for method in methods:
        for n in sizes:
            for d in (2, 10):
                for eps in (1.0, 3.0, 10.0):
                    for rho in ((0.0,) if d == 2 else (0.0, 0.5)):
                        df, bounds, formula = _data(n, d, 7 + n + d, rho)
                        plan = dpstats.plan(formula=formula, bounds=bounds, n=n, epsilon=eps, delta=1e-6,
                                            method=method, residual_sd=RESIDUAL_SD, correlation=rho).to_frame()
                        if plan["refusal"].iloc[0]:
                            print(f"{method} n={n} d={d} eps={eps:g} rho={rho:g}: refused (plan and fit)", flush=True)
                            continue
                        x = np.column_stack([np.ones(n), df.drop(columns="y").to_numpy()])
                        ols = np.linalg.lstsq(x, df["y"].to_numpy(), rcond=None)[0]
                        errors, blocks, diverged = [], [], 0
                        for r in range(reps):
                            with warnings.catch_warnings(record=True) as caught:
                                warnings.simplefilter("always")
                                res = dpstats.dp_ols(formula, df, epsilon=eps, delta=1e-6, bounds=bounds,
                                                     method=method, random_state=r)
                            diverged += any(issubclass(w.category, DivergedFitWarning) for w in caught)
                            errors.append(np.asarray(res.params, float) - ols)
                            blocks.append(np.asarray(res.error_bounds.coefficients.privacy, float))
                        planned, measured, block = _rms(plan["privacy"]), _rms(np.array(errors)), _rms(np.array(blocks))
                        slopes = plan["term"] != "Intercept"
                        kind = plan["kind"].iloc[0]
                        print(f"{method} n={n} d={d} eps={eps:g} rho={rho:g}: plan {planned:.3g} ({kind}), "
                              f"measured {measured:.3g}, error block {block:.3g}; measured/plan "
                              f"{measured / planned:.2f}, measured/block {measured / block:.2f}; diverged "
                              f"{diverged}/{reps}; rows needed {plan.loc[slopes, 'n_needed'].max():.3g}, epsilon "
                              f"needed {plan.loc[slopes, 'epsilon_needed'].max():.3g}", flush=True)


def pgd_gap(reps: int) -> None:
    n = 20000
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, n)
    e = rng.normal(0, 0.5, n)
    design = np.column_stack([np.ones(n), x])
    bounds = {"x1": (-1.0, 1.0), "y": (-3.0, 3.0)}
    for slope, eps in ((0.0, 3.0), (0.6622, 3.0), (1.3243, 3.0), (1.9865, 3.0), (1.3243, 30.0)):
        planned = dpstats.plan(formula="y ~ x1", bounds=bounds, n=n, epsilon=eps, delta=1e-6, method="pgd",
                               residual_sd=0.5).to_frame()["privacy"].to_numpy(float)
        y = np.clip(slope * x + e, -3, 3)
        ols = np.linalg.lstsq(design, y, rcond=None)[0]
        df = pd.DataFrame({"x1": x, "y": y})
        err = np.array([np.asarray(dpstats.dp_ols("y ~ x1", df, epsilon=eps, delta=1e-6, bounds=bounds, method="pgd",
                                                  random_state=100 + r).params) - ols for r in range(reps)])
        # the noise-free fit with per-example gradients clipped at 1.92 x their 0.9-quantile at least squares
        row_norms = np.linalg.norm(design, axis=1)
        clip = 1.92 * np.quantile(row_norms * np.abs(y - design @ ols), 0.9)
        w = ols.copy()
        for _ in range(500):
            r = y - design @ w
            w = w + np.linalg.solve(design.T @ design,
                                    design.T @ (np.minimum(1.0, clip / np.maximum(row_norms * np.abs(r), 1e-300)) * r))
        sd = err.std(0, ddof=1)
        print(f"pgd n={n} eps={eps:g} slope {ols[1]:.2f}: plan {planned[1]:.3g}, measured rms {_rms(err[:, 1]):.3g} "
              f"({_rms(err[:, 1]) / planned[1]:.2f} x plan), sd across seeds {sd[1]:.3g} ({sd[1] / planned[1]:.2f} x), "
              f"mean {err[:, 1].mean():.2g} +- {sd[1] / math.sqrt(reps):.1g}; clipped fit - least squares "
              f"{w[1] - ols[1]:.1g}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="fits per cell (pgd: twice as many)")
    parser.add_argument("--methods", default="robgd,ambssgd,pgd", help="comma-separated, of robgd, ambssgd, pgd")
    parser.add_argument("--sizes", default="2000,20000,200000", help="comma-separated n of the robust descents")
    args = parser.parse_args()
    methods = tuple(args.methods.split(","))
    robust_descents(args.reps, tuple(m for m in methods if m != "pgd"), tuple(int(n) for n in args.sizes.split(",")))
    if "pgd" in methods:
        pgd_gap(2 * args.reps + 2)


if __name__ == "__main__":
    main()
