"""Speed and peak memory of dp_ols(method="tukey") against statsmodels OLS, side by side in one run.

Run:  python benchmarks/tukey_speed.py [--n 1000000] [--d 10] [--m 1000] [--repeats 3] [--out FILE]
(the package is imported from this checkout, not from an installed copy)

One DataFrame with d - 1 Gaussian features of different scales and offsets
plus an intercept (d design columns), y linear plus N(0, 25) noise.  For each
call, the best of --repeats wall-clock times of the whole call (formula,
design, fit, report), alternating the contenders in every repeat so that a
busy machine slows them alike:

  statsmodels             smf.ols(formula, df).fit()
  tukey default           dp_ols(..., method="tukey")              (default options: blocks="auto" picks
                                                                    "moments" at this n, m from default_m)
  tukey m=M               dp_ols(..., method="tukey", m=M)
  tukey blocks="ols"      dp_ols(..., method="tukey", m=M, blocks="ols")   (the paper's block fits)

at epsilon = ln 3, delta = 1e-5 (the paper's budget).  A PTR refusal is
timed too (it does all the work but the final draw) and counted.  Peak memory
is measured with tracemalloc (numpy reports its buffers to it) for one more
call of each tukey variant, as a multiple of the n x d float64 design matrix.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
import tracemalloc

import numpy as np
import pandas as pd
import statsmodels
import statsmodels.formula.api as smf

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's dpstats

import dpstats
from dpstats.errors import PTRFailure


def make_frame(n: int, d: int, seed: int = 0) -> tuple[pd.DataFrame, str]:
    rng = np.random.default_rng(seed)
    p = d - 1
    X = rng.normal(size=(n, p)) * rng.uniform(0.5, 3.0, p) + rng.uniform(-5.0, 5.0, p)
    y = 1.0 + X @ np.arange(1, p + 1, dtype=float) + rng.normal(0.0, 5.0, n)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(p)])
    df["y"] = y
    return df, "y ~ " + " + ".join(df.columns[:p])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the markdown table to this file")
    args = ap.parse_args()
    df, formula = make_frame(args.n, args.d)
    eps, delta = math.log(3.0), 1e-5

    def statsmodels_fit() -> object:
        return smf.ols(formula, df).fit()

    def tukey(seed: int, **options: object) -> object:
        try:
            return dpstats.dp_ols(formula, df, epsilon=eps, delta=delta, method="tukey", random_state=seed, **options)
        except PTRFailure as exc:
            return exc

    contenders = {"statsmodels": lambda seed: statsmodels_fit(), "default": lambda seed: tukey(seed),
                  "auto": lambda seed: tukey(seed, m=args.m), "ols": lambda seed: tukey(seed, m=args.m, blocks="ols")}
    best = {k: math.inf for k in contenders}
    refusals = {k: 0 for k in contenders}
    outputs: dict[str, object] = {}
    for rep in range(args.repeats):
        for name, call in contenders.items():
            t0 = time.perf_counter()
            out = call(rep)
            best[name] = min(best[name], time.perf_counter() - t0)
            refusals[name] += isinstance(out, PTRFailure)
            outputs[name] = out

    design_bytes = args.n * args.d * 8
    peak = {}
    for name in ("default", "auto", "ols"):
        tracemalloc.start()
        tracemalloc.reset_peak()
        contenders[name](100)
        peak[name] = tracemalloc.get_traced_memory()[1] / design_bytes
        tracemalloc.stop()

    ref = np.asarray(outputs["statsmodels"].params)  # type: ignore[attr-defined]
    lines = [
        f"Command: `python benchmarks/tukey_speed.py --n {args.n} --d {args.d} --m {args.m} "
        f"--repeats {args.repeats}`",
        f"Machine: {platform.machine()}, 2 cores, Python {platform.python_version()}, numpy {np.__version__}, "
        f"statsmodels {statsmodels.__version__}, dpstats {dpstats.__version__}; best of {args.repeats} "
        f"(alternating); epsilon = ln 3, delta = 1e-5; 1-minute load average at the end {os.getloadavg()[0]:.1f}",
        "",
        "| call | time (s) | ratio to statsmodels | peak memory / design matrix | PTR refusals | "
        "max abs coef diff to OLS |",
        "|---|---|---|---|---|---|",
        f"| statsmodels `smf.ols(...).fit()` | {best['statsmodels']:.3f} | 1.00 | - | - | 0 |",
    ]
    default_m = getattr(outputs["default"], "info", {}).get("m", "default")
    for name, label in (("default", f"`dp_ols(method='tukey')` (default options: blocks auto -> moments, "
                                    f"m = {default_m})"),
                        ("auto", f"`dp_ols(method='tukey', m={args.m})` (blocks auto -> moments)"),
                        ("ols", f"`dp_ols(method='tukey', m={args.m}, blocks='ols')`")):
        out = outputs[name]
        diff = "refused" if isinstance(out, PTRFailure) else \
            f"{np.max(np.abs(np.asarray(out.params) - ref)):.3g}"  # type: ignore[attr-defined]
        lines.append(f"| {label} | {best[name]:.3f} | {best[name] / best['statsmodels']:.2f} | {peak[name]:.2f} | "
                     f"{refusals[name]}/{args.repeats} | {diff} |")
    print("\n".join(lines))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
