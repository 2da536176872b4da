"""Private Theil-Sen for a two-level factor (``y ~ C(g)``) at small n * epsilon: the slope grid's end.

A two-level factor's dummy takes two public values, so a pair slope with dx != 0 is at most (y range) / |x1 - x0|
in absolute value; since the change measured here the slope grid of such a predictor ends there
(:func:`dpstats.methods.theilsen.slope_decades`; "after") instead of at 1000 box diagonals ("before": the same
fit with ``slope_decades`` returning the general decades), and its intervals take the percentile orientation.
pgd (``method="pgd"``), the other method ``auto`` uses, is run beside them.

Simulation: g ~ Bernoulli(0.5), y = 2 + 0.8 g + e clipped to the public bounds [-3, 8], e standard normal
("normal") or exponential minus 1 ("skewed"), ``y ~ C(g)`` with declared levels, delta = 1e-6, default options;
n in {60, 120, 250, 500, 1000}, epsilon in {0.5, 1, 3}, the cells with 60 <= n * epsilon <= 1000.  Each replicate
draws new data; truth = OLS on the same data.  Per cell: median relative error of the slope, share of fits
covering the OLS slope with their 95% interval, median interval width over the OLS interval's.

Run from the repository root (one process)::

    python benchmarks/theilsen_two_level.py --reps 100      # results/theilsen_two_level.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

import dpstats
from dpstats.methods import theilsen

OUT = Path(__file__).resolve().parent / "results" / "theilsen_two_level.md"
NS, EPSILONS, DESIGNS = (60, 120, 250, 500, 1000), (0.5, 1.0, 3.0), ("normal", "skewed")
BOUNDS, LEVELS, FORMULA = {"y": (-3.0, 8.0)}, {"g": ("c", "t")}, "y ~ C(g)"
_SLOPE_DECADES = theilsen.slope_decades


def draw(design: str, n: int, rng: np.random.Generator) -> pd.DataFrame:
    g = rng.integers(0, 2, n)
    e = rng.normal(size=n) if design == "normal" else rng.exponential(size=n) - 1.0
    return pd.DataFrame({"y": np.clip(2.0 + 0.8 * g + e, *BOUNDS["y"]), "g": np.where(g == 1, "t", "c")})


def fit(df: pd.DataFrame, method: str, eps: float, seed: int) -> tuple[float, float, float]:
    """Slope and its 95% interval; ``method`` "theilsen (before)" runs Theil-Sen on the general grid."""
    if method == "theilsen (before)":
        theilsen.slope_decades = lambda *args: theilsen.SLOPE_DECADES
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols(FORMULA, df, eps, 1e-6, method=method.split()[0], bounds=BOUNDS, levels=LEVELS,
                                 random_state=seed)
    finally:
        theilsen.slope_decades = _SLOPE_DECADES
    lo, hi = res.conf_int().iloc[1]
    return float(res.params.iloc[1]), float(lo), float(hi)


def run(reps: int) -> str:
    methods = ("theilsen (before)", "theilsen", "pgd")
    lines = ["| design | n | epsilon | n epsilon | " + " | ".join(
        f"{m}: rel. error | covers | width" for m in methods) + " |", "|---" * (4 + 3 * len(methods)) + "|"]
    for design in DESIGNS:
        for n in NS:
            for eps in EPSILONS:
                if not 60 <= n * eps <= 1000:
                    continue
                cells: dict[str, tuple[list[float], list[bool], list[float]]] = {m: ([], [], []) for m in methods}
                for rep in range(reps):
                    df = draw(design, n, np.random.default_rng(1000 + rep))
                    ols = smf.ols(FORMULA, df).fit()
                    b_ols, se = float(ols.params.iloc[1]), float(ols.bse.iloc[1])
                    for m in methods:
                        b, lo, hi = fit(df, m, eps, rep)
                        err, cov, wid = cells[m]
                        err.append(abs(b - b_ols) / abs(b_ols))
                        if np.isfinite(lo) and np.isfinite(hi):
                            cov.append(lo <= b_ols <= hi)
                            wid.append((hi - lo) / (2 * 1.959964 * se))
                row = [design, str(n), f"{eps:g}", f"{n * eps:g}"]
                for m in methods:
                    err, cov, wid = cells[m]
                    row += [f"{np.median(err):.3g}", f"{np.mean(cov):.2f}" if cov else "-",
                            f"{np.median(wid):.3g}" if wid else "-"]
                lines.append("| " + " | ".join(row) + " |")
                print(lines[-1], flush=True)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    start = time.time()
    table = run(args.reps)
    head = (f"### Private Theil-Sen for a two-level factor: the slope grid's end\n\nCommand: `python "
            f"benchmarks/theilsen_two_level.py --reps {args.reps}` ({time.time() - start:.0f} s, one process). "
            f"{args.reps} data sets per cell; columns per method: median relative error of the slope against OLS, "
            "share of 95% intervals covering the OLS slope, median width over the OLS interval's (pgd reports none "
            "below n mu(epsilon, delta) = 15).\n\n")
    Path(args.out).write_text(head + table + "\n")


if __name__ == "__main__":
    main()
