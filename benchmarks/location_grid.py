"""The released domain's location grid without bounds: unit bins to 2^8 released scales against 2^12.

Two measurements, each arm the same code with ``private_scaling.LOCATION_GRID`` set for the run (a public constant,
as ``real_data.py --constant`` sets others; docs/choosing.md, "Heavy tails without bounds"):

* **A calendar year.** y = 0.8 (year - 2006) + 0.05 x + e, year uniform on the integers 2003-2009, x ~ N(40, 10^2),
  e ~ N(0, 1), fitted with ``y ~ year + x`` and no bounds (the default, which picks pgd), n = 1,200 and 4,000,
  epsilon 1 and 3, noise seeds 0..reps-1 (one new data set per seed): the median distance of year's coefficient
  from least squares in OLS standard errors, how many intervals cover least squares, how many fits the clipping
  check flagged (``ClippedRowsWarning``).
* **The chance of a domain that misses the rows.** One variable's released domain from ``_released_domain`` at
  bikeshare's size (6,916 rows, four variables without bounds, so n mu_round = 60 per histogram, groups of 2 rows):
  the share of draws whose domain holds under 90% of the rows, for a normal variable at two locations and a
  log-normal one.

Run from the repository root (one process, about two minutes)::

    python benchmarks/location_grid.py --reps 8 --draws 400      # results/location_grid.md
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats
from dpstats.methods.common import private_scaling
from dpstats.methods.common.private_centring import CentreGrid, group_size
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_block

OUT = Path(__file__).resolve().parent / "results" / "location_grid.md"
DELTA = 1e-6
LIMITS = (1 << 8, 1 << 12)


@contextmanager
def location_grid(limit: int) -> Iterator[None]:
    """The location grid with unit bins to ``limit`` released scales (two per octave beyond) for the block."""
    kept = private_scaling.LOCATION_GRID
    private_scaling.LOCATION_GRID = CentreGrid(limit=limit, fine=1, per_octave=2)
    try:
        yield
    finally:
        private_scaling.LOCATION_GRID = kept


def _years(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    year = rng.integers(2003, 2010, n).astype(float)
    x = rng.normal(40.0, 10.0, n)
    return pd.DataFrame({"y": 0.8 * (year - 2006) + 0.05 * x + rng.normal(0.0, 1.0, n), "year": year, "x": x})


def year_rows(reps: int) -> list[str]:
    """One row per grid, n and epsilon: year's distance from least squares, coverage, fits flagged."""
    rows = []
    for limit in LIMITS:
        with location_grid(limit):
            for n in (1200, 4000):
                for eps in (1.0, 3.0):
                    distances, covered, flagged = [], 0, 0
                    for seed in range(reps):
                        df = _years(n, seed)
                        ols = dpstats.dp_ols("y ~ year + x", df, math.inf, method="ols")
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("always")
                            res = dpstats.dp_ols("y ~ year + x", df, eps, DELTA, random_state=seed)
                        distances.append(abs(res.params["year"] - ols.params["year"]) / ols.bse["year"])
                        lo, hi = res.conf_int().loc["year"]
                        covered += int(lo <= ols.params["year"] <= hi)
                        flagged += int(any(w.category is dpstats.errors.ClippedRowsWarning for w in caught))
                    rows.append(f"| 2^{int(math.log2(limit))} | {n:,} | {eps:g} | {np.median(distances):.2f} | "
                                f"{covered} of {reps} | {flagged} of {reps} |")
    return rows


def _missed(limit: int, draws: int, centre: float, sd: float, lognormal: bool) -> float:
    """Share of draws whose released domain holds under 90% of the rows (bikeshare's size, four variables)."""
    n, variables = 6916, 4
    mu_round = 60.0 / n
    b = group_size(n, mu_round)
    k = n // b
    missed = 0
    with location_grid(limit):
        for draw in range(draws):
            rng = np.random.default_rng(draw)
            x = rng.lognormal(0.0, 1.0, (k, b)) * sd + centre if lognormal else rng.normal(centre, sd, (k, b))
            block = gaussian_block(rounds=2 * variables, mu_round=mu_round, ledger=PrivacyLedger(100.0, 0.5),
                                   name="domain (benchmark)", note="")
            lo, hi, *_ = private_scaling._released_domain(x.mean(axis=1), x.var(axis=1, ddof=1), block, rng)
            missed += int(np.mean((x >= lo) & (x <= hi)) < 0.9)
    return missed / draws


def missed_rows(draws: int) -> list[str]:
    """One row per variable: the share of missed domains with each grid."""
    rows = []
    for label, centre, sd, lognormal in (("normal, mean 0, sd 1", 0.0, 1.0, False),
                                         ("normal, mean 40, sd 10", 40.0, 10.0, False),
                                         ("50 x log-normal(0, 1)", 0.0, 50.0, True)):
        shares = [_missed(limit, draws, centre, sd, lognormal) for limit in LIMITS]
        rows.append(f"| {label} | " + " | ".join(f"{s:.2%}" for s in shares) + " |")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=8)
    p.add_argument("--draws", type=int, default=400)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    start = time.perf_counter()
    first, second = year_rows(args.reps), missed_rows(args.draws)
    seconds = time.perf_counter() - start
    text = "\n".join([
        f"Command: `python benchmarks/location_grid.py --reps {args.reps} --draws {args.draws}` ({seconds:.0f} s, "
        f"one process; delta = {DELTA:g}).", "",
        "**A calendar year without bounds** (`y ~ year + x`, year 2003-2009): year's distance from least squares "
        "in OLS standard errors (median over the seeds), intervals covering least squares, fits flagged by the "
        "clipping check.", "",
        "| unit bins to | n | epsilon | distance / OLS se | covering | flagged |", "|---|---:|---:|---:|---:|---:|",
        *first, "",
        f"**Released domains holding under 90% of the rows**, {args.draws} draws per cell (6,916 rows, four "
        "variables without bounds).", "",
        "| variable | unit bins to 2^8 | unit bins to 2^12 |", "|---|---:|---:|", *second, ""])
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
