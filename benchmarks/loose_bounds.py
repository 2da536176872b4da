"""Declared bounds far wider than the data at a few hundred rows: pgd's shrinkage against its interval.

statsmodels' ``cancer`` data (301 US counties: cancer deaths on population; the population spans 445 to 88,456
and the residuals grow with it) fitted with pgd under two sets of declared bounds: loose ones (population in
[0, 10^6], deaths in [0, 1000], 11 and 3 times the largest values) and tight ones (population in [0, 10^5],
deaths in [0, 400]).  Under the loose bounds the population column's released spread sits at its floor, the
ridge penalty shrinks its coefficient towards 0, and the interval's correction (read from the released Gram
matrix, which cannot resolve that direction) undoes less of the shrinkage than there is.  Per cell: median of the
slope over least squares', share of 95% intervals covering the least-squares slope, median interval width over
the least-squares interval's; and the slope pgd converges to at a large epsilon (its clipped, Huber-type
target).  Not one of the benchmark's data sets: it stands for data the package has not seen.

Run from the repository root (one process)::

    python benchmarks/loose_bounds.py --seeds 20      # results/loose_bounds.md
"""

from __future__ import annotations

import argparse
import statistics
import warnings
from pathlib import Path

import statsmodels.api as sm

import dpstats

OUT = Path(__file__).resolve().parent / "results" / "loose_bounds.md"
FORMULA, HEADLINE, DELTA = "cancer ~ population", "population", 1e-6
BOUNDS = {"loose": {"cancer": (0.0, 1000.0), "population": (0.0, 1e6)},
          "tight": {"cancer": (0.0, 400.0), "population": (0.0, 1e5)}}
EPSILONS = (1.0, 3.0, 30.0)


def cell(frame, bounds: dict, epsilon: float, seeds: int, ols_slope: float, ols_se: float) -> str:
    """One row: median slope ratio, coverage of the least-squares slope and median width ratio over the seeds."""
    ratios, covers, widths = [], [], []
    for seed in range(seeds):
        res = dpstats.dp_ols(FORMULA, frame, epsilon, DELTA, method="pgd", bounds=bounds, random_state=seed)
        lo, hi = res.conf_int().loc[HEADLINE]
        ratios.append(res.params[HEADLINE] / ols_slope)
        covers.append(lo <= ols_slope <= hi)
        widths.append((hi - lo) / (2 * 1.96 * ols_se))
    return (f"{statistics.median(ratios):.2f} | {sum(covers)}/{seeds} | {statistics.median(widths):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    frame = sm.datasets.cancer.load_pandas().data
    ols = sm.OLS.from_formula(FORMULA, frame).fit()
    slope, se = float(ols.params[HEADLINE]), float(ols.bse[HEADLINE])
    lines = ["| bounds | epsilon | pgd slope / OLS slope (median) | intervals covering the OLS slope | "
             "median width / OLS width |", "|---|---:|---:|---:|---:|"]
    for name, bounds in BOUNDS.items():
        for epsilon in EPSILONS:
            lines.append(f"| {name} | {epsilon:g} | {cell(frame, bounds, epsilon, args.seeds, slope, se)} |")
    text = (f"pgd on statsmodels' cancer data (n = {len(frame)}, `{FORMULA}`, delta = {DELTA:g}, noise seeds "
            f"0-{args.seeds - 1}; least-squares slope {slope:.3g}, standard error {se:.2g}).\n\n"
            "    python benchmarks/loose_bounds.py --seeds " + str(args.seeds) + "\n\n" + "\n".join(lines) + "\n")
    previous = OUT.read_text() if OUT.exists() else ""
    reading = previous[previous.find("\nReading"):] if "\nReading" in previous else ""
    OUT.write_text(text + reading)  # the reading written by hand below the table is kept
    print(text)


if __name__ == "__main__":
    main()
