"""Utility of dp_ols(method="tukey") with the protocol of Amin et al. (2023), beside OLS and AdaSSP.

Run:  python benchmarks/tukey_diamonds.py [--trials 10] [--data diamonds synthetic]
(the package is imported from this checkout, not from an installed copy)

Protocol (Amin et al., sec. 4): epsilon = ln 3, delta = 1e-5, an intercept,
in-sample R^2, median and quartiles over --trials seeds, m in 250, 500, ...,
2000 plus the package default (m=None), PTR pass rate per cell.

* diamonds: the bundled data set, price on carat, cut, color, clarity (ordinal
  codes 1..5, 1..7, 1..8 in the documented level order), depth, table, x, y,
  z (d = 10 with the intercept, n = 53,940).
* synthetic: 22,000 x 10 Gaussian features, coefficients 100 U(0, 1), noise
  N(0, 10^2), plus the intercept (d = 11), as sklearn's make_regression with
  10 informative features (sklearn is not installed; same recipe in numpy).

Variants of tukey: "paper" = blocks="ols", centre=False (the paper's
algorithm, with the replace-one exponential-mechanism factor); "ols+centre" =
blocks="ols" (private centring); "auto" = the default (blocks="auto").
AdaSSP gets bounds from public knowledge only: for diamonds the documented
ranges of ggplot2's ?diamonds and the code ranges; for the synthetic data
+-5 on each feature and +-(5 * sum of 100 + 50) on y (what a user who knows
the generator would declare).  Prints markdown tables.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's dpstats

import dpstats
from dpstats.errors import InsufficientDataError, PTRFailure

EPS, DELTA = math.log(3.0), 1e-5
M_GRID = [250, 500, 750, 1000, 1250, 1500, 1750, 2000]


def diamonds() -> tuple[pd.DataFrame, str, dict]:
    df = dpstats.datasets.load("diamonds")
    for c in ("cut", "color", "clarity"):
        df[c + "_o"] = df[c].cat.codes.astype(float) + 1
    formula = "price ~ carat + cut_o + color_o + clarity_o + depth + table + x + y + z"
    bounds = dict(dpstats.datasets.describe("diamonds").documented_ranges)
    bounds.update(cut_o=(1, 5), color_o=(1, 7), clarity_o=(1, 8))
    return df, formula, bounds


def synthetic(seed: int = 0) -> tuple[pd.DataFrame, str, dict]:
    rng = np.random.default_rng(seed)
    n, p = 22_000, 10
    X = rng.normal(size=(n, p))
    coef = 100.0 * rng.uniform(size=p)
    y = X @ coef + rng.normal(0.0, 10.0, n)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(p)])
    df["y"] = y
    bounds = {f"x{i}": (-5.0, 5.0) for i in range(p)}
    bounds["y"] = (-5.0 * 100 * p - 50.0, 5.0 * 100 * p + 50.0)
    return df, "y ~ " + " + ".join(df.columns[:p]), bounds


def r_squared(res: dpstats.DPRegressionResults, df: pd.DataFrame, yname: str) -> float:
    y = df[yname].to_numpy(float)
    resid = y - np.asarray(res.predict(df))
    return float(1.0 - resid @ resid / ((y - y.mean()) @ (y - y.mean())))


def cell(values: list[float], runs: int) -> str:
    if not values:
        return f"- (0/{runs} passed)"
    q1, med, q3 = np.percentile(values, [25, 50, 75])
    return f"{med:.3f} [{q1:.3f}, {q3:.3f}] ({len(values)}/{runs})"


def run_tukey(df: pd.DataFrame, formula: str, yname: str, trials: int, **options) -> list[float]:
    out = []
    for seed in range(trials):
        try:
            res = dpstats.dp_ols(formula, df, epsilon=EPS, delta=DELTA, method="tukey", random_state=seed, **options)
            out.append(r_squared(res, df, yname))
        except (PTRFailure, InsufficientDataError):  # failed its test, or refused before spending (too few models)
            pass
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--data", nargs="+", default=["diamonds", "synthetic"])
    args = ap.parse_args()
    print(f"Command: `python benchmarks/tukey_diamonds.py --trials {args.trials} --data {' '.join(args.data)}`; "
          f"epsilon = ln 3, delta = 1e-5; cells: median R^2 [quartiles] (PTR passes / trials)\n")
    for name in args.data:
        t0 = time.perf_counter()
        df, formula, bounds = diamonds() if name == "diamonds" else synthetic()
        yname = formula.split("~")[0].strip()
        ols = dpstats.dp_ols(formula, df, epsilon=math.inf, method="ols")
        ada = []
        for seed in range(args.trials):
            res = dpstats.dp_ols(formula, df, epsilon=EPS, delta=DELTA, method="adassp", bounds=bounds,
                                 random_state=seed)
            ada.append(r_squared(res, df, yname))
        print(f"### {name} (n = {len(df)}, d = {len(ols.params)})\n")
        print(f"Non-private OLS R^2 = {r_squared(ols, df, yname):.3f}; AdaSSP with public bounds: "
              f"{cell(ada, args.trials)}\n")
        variants = {"paper (blocks='ols', centre=False)": dict(blocks="ols", centre=False),
                    "ols + private centring (blocks='ols')": dict(blocks="ols"),
                    "default (blocks='auto')": {}}
        print("| m | " + " | ".join(variants) + " |")
        print("|---|" + "---|" * len(variants))
        for m in [*M_GRID, None]:
            row = [cell(run_tukey(df, formula, yname, args.trials, m=m, **opts), args.trials)
                   for opts in variants.values()]
            print(f"| {m if m is not None else 'default'} | " + " | ".join(row) + " |", flush=True)
        print(f"\n({time.perf_counter() - t0:.0f} s)\n", flush=True)


if __name__ == "__main__":
    main()
