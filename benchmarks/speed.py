"""Speed of dp_ols (the default ``auto``, ssp, adassp) against statsmodels OLS on the same DataFrame, side by side.

Run:  python benchmarks/speed.py [--quick] [--repeats 3] [--out benchmarks/results/speed.md]

For each (n, d) it times, best of --repeats, on one DataFrame:
  statsmodels   smf.ols(formula, df).fit()
  floor         patsy design + one pass for X^T X and X^T y (what any formula-based SSP must do)
  dp_ols auto   the default call, ``method="auto"`` (pgd below 10^5 rows, adassp from there, with intervals)
  dp_ols ssp / adassp  the whole private call (validation, design, clipping, rescaling, noise, report)
and prints ratios against statsmodels (epsilon = 1, delta = 1e-8).  d counts the intercept.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import pandas as pd
import patsy
import statsmodels
import statsmodels.formula.api as smf

import dpstats

#: below 1/n at every n timed (dp_ols warns from delta >= 1/n); epsilon is 1
DELTA = 1e-8


def make_frame(n: int, d: int, seed: int = 0) -> tuple[pd.DataFrame, str, dict]:
    rng = np.random.default_rng(seed)
    p = d - 1
    X = rng.uniform(-1, 1, size=(n, p))
    beta = rng.normal(size=p)
    y = X @ beta + rng.normal(0, 0.5, n)
    cols = [f"x{j}" for j in range(p)]
    df = pd.DataFrame(X, columns=cols)
    df["y"] = y
    bounds = {c: (-1.0, 1.0) for c in cols}
    bounds["y"] = (-float(np.abs(beta).sum()) - 3, float(np.abs(beta).sum()) + 3)  # public: from the simulation
    return df, "y ~ " + " + ".join(cols), bounds


def best_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def floor(formula: str, df: pd.DataFrame) -> None:
    y, X = patsy.dmatrices(formula, df, return_type="matrix")
    X = np.asarray(X)
    X.T @ X
    X.T @ np.asarray(y)[:, 0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n up to 1e5 only")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the markdown table here")
    args = ap.parse_args()
    ns = [1_000, 10_000, 100_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    rows = []
    for d in (10, 50):
        for n in ns:
            df, formula, bounds = make_frame(n, d)
            t_sm = best_time(lambda f=formula, df=df: smf.ols(f, df).fit(), args.repeats)
            t_floor = best_time(lambda f=formula, df=df: floor(f, df), args.repeats)
            t = {m: best_time(lambda m=m, f=formula, df=df, b=bounds: dpstats.dp_ols(f, df, 1.0, DELTA, method=m,
                                                                                     bounds=b, random_state=0),
                              args.repeats)
                 for m in ("auto", "ssp", "adassp")}
            chosen = dpstats.dp_ols(formula, df, 1.0, DELTA, bounds=bounds, random_state=0).method
            row = dict(n=n, d=d, statsmodels_s=t_sm, floor_s=t_floor, auto_s=t["auto"], auto_method=chosen,
                       ssp_s=t["ssp"], adassp_s=t["adassp"], floor_ratio=t_floor / t_sm, auto_ratio=t["auto"] / t_sm,
                       ssp_ratio=t["ssp"] / t_sm, adassp_ratio=t["adassp"] / t_sm)
            rows.append(row)
            print(f"n={n:>9,} d={d:>3}  statsmodels {t_sm:7.3f}s  floor {t_floor:7.3f}s ({row['floor_ratio']:.2f})"
                  f"  auto ({chosen}) {t['auto']:7.3f}s ({row['auto_ratio']:.2f})  ssp {t['ssp']:7.3f}s "
                  f"({row['ssp_ratio']:.2f})  adassp {t['adassp']:7.3f}s ({row['adassp_ratio']:.2f})", flush=True)
    md = ["| n | d | statsmodels (s) | floor (s) | auto (s) | auto fits | ssp (s) | adassp (s) | floor / sm "
          "| auto / sm | ssp / sm | adassp / sm |",
          "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {r['n']:,} | {r['d']} | {r['statsmodels_s']:.3f} | {r['floor_s']:.3f} | {r['auto_s']:.3f} | "
                  f"{r['auto_method']} | {r['ssp_s']:.3f} | {r['adassp_s']:.3f} | {r['floor_ratio']:.2f} | "
                  f"{r['auto_ratio']:.2f} | {r['ssp_ratio']:.2f} | {r['adassp_ratio']:.2f} |")
    env = (f"Python {platform.python_version()}, numpy {np.__version__}, pandas {pd.__version__}, "
           f"patsy {patsy.__version__}, statsmodels {statsmodels.__version__}, dpstats {dpstats.__version__}; "
           f"best of {args.repeats}")
    text = "\n".join(md) + "\n\n" + env + "\n"
    print("\n" + text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
