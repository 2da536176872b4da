"""A boolean response on a two-level factor at small n * mu: Theil-Sen against pgd and DP-SGD.

``auto`` fits private Theil-Sen for one predictor below n * mu = 100, except when the response is boolean (a
linear probability model; its 0/1 coding is public from the dtype).  This measures why: for a 0/1 response on a
two-level factor Theil-Sen's slope is the median of the pairwise differences between the groups (0 or +/-1), not
the difference in proportions least squares estimates.

Simulation: g ~ Bernoulli(0.5), y ~ Bernoulli(0.3 + 0.2 g) as a bool column, ``y ~ C(g, levels=[0, 1])`` (no
bounds needed: the dummy and the bool response are bounded by construction), delta = 1e-6, default options;
n in {60, 120, 250}, epsilon in {0.5, 1, 3}.  Each replicate draws new data; truth = least squares on the same
data (the difference in proportions), whose standard error is the unpooled two-proportion one.  Per cell and
method: median relative error of the slope, share of 95% intervals covering the least-squares slope, median
interval width over the least-squares interval's, share of fits reporting an interval.

Run from the repository root (one process)::

    python benchmarks/boolean_response.py --reps 20      # results/boolean_response.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats
from dpstats.methods.registry import AutoFacts

OUT = Path(__file__).resolve().parent / "results" / "boolean_response.md"
NS, EPSILONS, METHODS = (60, 120, 250), (0.5, 1.0, 3.0), ("theilsen", "pgd", "dpsgd")
FORMULA = "y ~ C(g, levels=[0, 1])"


def one_fit(method: str, n: int, eps: float, seed: int) -> tuple[float, float, float, float]:
    """Relative error, covers (NaN without an interval), width ratio (NaN without), reported (0/1)."""
    rng = np.random.default_rng(seed)
    g = (rng.uniform(size=n) < 0.5).astype(int)
    df = pd.DataFrame({"g": g, "y": rng.uniform(size=n) < 0.3 + 0.2 * g})
    p1, p0 = df.y[df.g == 1].mean(), df.y[df.g == 0].mean()
    b_ols = p1 - p0
    se = np.sqrt(p1 * (1 - p1) / max(1, int((df.g == 1).sum())) + p0 * (1 - p0) / max(1, int((df.g == 0).sum())))
    res = dpstats.dp_ols(FORMULA, df, eps, 1e-6, method=method, random_state=10_000 + seed)
    b, (lo, hi) = float(res.params.iloc[1]), res.conf_int().to_numpy()[1]
    rel = abs(b - b_ols) / abs(b_ols) if b_ols != 0 else float("nan")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return rel, float("nan"), float("nan"), 0.0
    return rel, float(lo <= b_ols <= hi), (hi - lo) / (2 * 1.96 * se) if se > 0 else float("nan"), 1.0


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    lines = ["| n | epsilon | n mu | method | median rel. error | covers least squares | median width / LS width "
             "| interval reported |", "|---|---|---|---|---|---|---|---|"]
    for n in NS:
        for eps in EPSILONS:
            n_mu = AutoFacts(n=n, d=2, epsilon=eps, delta=1e-6, bounds=True).n_mu
            for method in METHODS:
                a = np.array([one_fit(method, n, eps, s) for s in range(args.reps)])
                cover = f"{np.nanmean(a[:, 1]):.2f}" if np.isfinite(a[:, 1]).any() else "-"
                width = f"{np.nanmedian(a[:, 2]):.1f}" if np.isfinite(a[:, 2]).any() else "-"
                lines.append(f"| {n} | {eps:g} | {n_mu:.0f} | {method} | {np.nanmedian(a[:, 0]):.2f} | {cover} | "
                             f"{width} | {np.mean(a[:, 3]):.0%} |")
    seconds = time.perf_counter() - start
    text = (f"### A boolean response on a two-level factor: Theil-Sen against pgd and DP-SGD\n\n"
            f"Command: `python benchmarks/boolean_response.py --reps {args.reps}` ({seconds:.0f} s, one process). "
            f"{args.reps} data sets per cell; y ~ Bernoulli(0.3 + 0.2 g) as a bool column, g ~ Bernoulli(0.5); truth "
            "= least squares (the difference in proportions) on the same data.\n\n" + "\n".join(lines) + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
