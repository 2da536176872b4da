"""TukeyEM's two block estimators side by side at fixed options: ``blocks="moments"`` against ``blocks="ols"``.

For each setting and seed, both fits run on the same data; the error is the root mean square over the
coefficients of (b - b_OLS) / se_OLS (the private error in units of the sampling error), and R^2 is in-sample.
Designs: ``gaussian`` (x ~ N(0, R), R_jk = 0.5^|j-k|, clipped to +-8, homoscedastic noise), ``skewed`` (every
third column exp(x / 2), noise sd 1 + |x_1| / 2) with bounds +-8 on x and +-60 on y, and ``diamonds`` (the
bundled Diamonds data resampled with replacement to n rows, epsilon = ln 3 as in ``tukey_diamonds.py``, the
documented ranges as bounds).  Reported in benchmarks/results/scale.md (issue 16).

Usage::

    python benchmarks/tukey_blocks.py --designs gaussian,skewed --ns 50000,200000,1000000 --ds 5,10,20 --seeds 4
    python benchmarks/tukey_blocks.py --designs diamonds --ns 53940,200000,1000000 --seeds 4
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats
from dpstats.errors import DPStatsError

sys.path.insert(0, str(Path(__file__).resolve().parent))


def synthetic(design: str, n: int, d: int) -> tuple[pd.DataFrame, str, dict]:
    rng = np.random.default_rng(n + d)
    corr = 0.5 ** np.abs(np.subtract.outer(np.arange(d), np.arange(d)))
    X = rng.standard_normal((n, d)) @ np.linalg.cholesky(corr).T
    noise_sd = np.ones(n)
    if design == "skewed":
        X[:, ::3] = np.exp(X[:, ::3] / 2)
        noise_sd = 1 + 0.5 * np.abs(X[:, 0])
    X = np.clip(X, -8, 8)
    y = np.clip(0.5 + X @ rng.uniform(-1, 1, d) + rng.standard_normal(n) * noise_sd, -60, 60)
    cols = [f"x{j}" for j in range(d)]
    df = pd.DataFrame(X, columns=cols)
    df["y"] = y
    return df, "y ~ " + " + ".join(cols), {**{c: (-8.0, 8.0) for c in cols}, "y": (-60.0, 60.0)}


def diamonds(n: int) -> tuple[pd.DataFrame, str, dict]:
    from tukey_diamonds import diamonds as load  # noqa: PLC0415

    df, formula, bounds = load()
    if n != len(df):
        df = df.iloc[np.random.default_rng(n).integers(0, len(df), n)].reset_index(drop=True)
    return df, formula, bounds


def compare(df: pd.DataFrame, formula: str, bounds: dict, epsilon: float, delta: float, seeds: int) -> str:
    import statsmodels.formula.api as smf  # noqa: PLC0415

    ols = smf.ols(formula, df).fit()
    y = np.asarray(ols.model.endog)
    cells = []
    for blocks in ("moments", "ols"):
        errors, r2s, refused = [], [], 0
        for seed in range(seeds):
            try:
                res = dpstats.dp_ols(formula, df, epsilon, delta, method="tukey", bounds=bounds, random_state=seed,
                                     blocks=blocks)
            except DPStatsError:
                refused += 1
                continue
            b = np.asarray(res.params)
            errors.append(math.sqrt(np.mean(((b - ols.params.to_numpy()) / ols.bse.to_numpy()) ** 2)))
            fitted = np.asarray(ols.model.exog) @ b
            r2s.append(1 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2))
        cells.append(f"{np.median(errors):.2f} | {np.median(r2s):.4f} | {refused}" if errors else f"- | - | {refused}")
    return f"{ols.rsquared:.4f} | " + " | ".join(cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--designs", default="gaussian,skewed")
    parser.add_argument("--ns", default="50000,200000,1000000")
    parser.add_argument("--ds", default="5,10,20")
    parser.add_argument("--epsilons", default="1")
    parser.add_argument("--seeds", type=int, default=4)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    print("| design | n | d | epsilon | OLS R^2 | moments: error | moments: R^2 | moments: refused | ols: error | "
          "ols: R^2 | ols: refused |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for design in args.designs.split(","):
        for n in (int(float(v)) for v in args.ns.split(",")):
            if design == "diamonds":
                df, formula, bounds = diamonds(n)
                row = compare(df, formula, bounds, math.log(3), 1e-5, args.seeds)
                print(f"| diamonds | {n} | 10 | ln 3 | {row} |",
                      flush=True)
                continue
            for d in (int(v) for v in args.ds.split(",")):
                df, formula, bounds = synthetic(design, n, d)
                for epsilon in (float(v) for v in args.epsilons.split(",")):
                    print(f"| {design} | {n} | {d} | {epsilon:g} | "
                          f"{compare(df, formula, bounds, epsilon, 1e-6, args.seeds)} |", flush=True)


if __name__ == "__main__":
    main()
