"""Speed of ``dp_ols(method="pgd")`` against statsmodels OLS on the same DataFrame (the frames of speed.py).

Run:  python benchmarks/pgd_speed.py [--ns 10000,100000] [--d 10] [--repeats 3]

For each n it times, best of --repeats (contenders alternate within a repeat):
  statsmodels      smf.ols(formula, df).fit()
  pgd              dp_ols(..., method="pgd") with declared bounds at epsilon = 1, delta = 1e-6 (intervals on)
  pgd, no interval the same with inference=False (one final chain, no inference release)
and prints the ratios against statsmodels, with the steps pgd chose (one pass over the rows per step).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
from speed import make_frame  # noqa: E402

import dpstats  # noqa: E402


def best_of(fn, repeats: int) -> tuple[float, object]:
    """The shortest wall time of ``repeats`` calls, and the last result."""
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="10000,100000")
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    rows = []
    for n in (int(v) for v in args.ns.split(",")):
        df, formula, bounds = make_frame(n, args.d)
        t_sm = t_pgd = t_pgd0 = np.inf
        res = None
        for _ in range(args.repeats):  # alternate the contenders within each repeat
            t_sm = min(t_sm, best_of(lambda f=formula, df=df: smf.ols(f, df).fit(), 1)[0])
            t, res = best_of(lambda f=formula, df=df, b=bounds: dpstats.dp_ols(f, df, 1.0, 1e-6, method="pgd",
                                                                               bounds=b, random_state=0), 1)
            t_pgd = min(t_pgd, t)
            t_pgd0 = min(t_pgd0, best_of(lambda f=formula, df=df, b=bounds: dpstats.dp_ols(
                f, df, 1.0, 1e-6, method="pgd", bounds=b, random_state=0, inference=False), 1)[0])
        rows.append({"n": n, "d": args.d, "statsmodels (s)": t_sm, "pgd (s)": t_pgd, "pgd, no interval (s)": t_pgd0,
                     "pgd / sm": t_pgd / t_sm, "no interval / sm": t_pgd0 / t_sm,
                     "steps per phase": res.info["steps"], "chains": res.info["chains"]})
    table = pd.DataFrame(rows)
    print(table.to_markdown(index=False, floatfmt=".3g"))
    print(f"\nPython {platform.python_version()}, numpy {np.__version__}, dpstats {dpstats.__version__}; "
          f"best of {args.repeats}, epsilon = 1, delta = 1e-6")


if __name__ == "__main__":
    main()
