"""A 0/1 indicator stored as integers against the same indicator stored as floats, both declared (0, 1).

An integer column whose declared bounds are two consecutive integers is two-valued by public facts (its dtype
and its bounds), as a two-level factor is; a float column holding 0 and 1 is not (its bounds say only that its
values lie in [0, 1]).  This measures what that changes for ``method="auto"`` on the smallest regression papers
run, one indicator and a response:

* **indicator predictor**: g ~ Bernoulli(0.4), y = 2 + 0.8 g + e, e standard normal, ``y ~ g`` with bounds
  g in (0, 1) and y in (-2, 7); auto fits private Theil-Sen below n * mu = 100 (for the integer column with the
  two-valued slope grid and error block);
* **indicator response**: y ~ Bernoulli(0.3 + 0.2 g), ``y ~ g`` with y declared (0, 1); auto fits pgd for the
  integer response (a linear probability model), Theil-Sen for the float one.

delta = 1e-6, default options; n in {100, 150, 300, 1000}, epsilon in {0.5, 1, 3}.  Each replicate draws new
data and fits both storages with the same noise seed; truth = least squares on the same data.  Per cell: the
method auto chose, median relative error of the slope, share of 95% intervals covering the least-squares slope,
median interval width over the least-squares interval's.

Run from the repository root (one process)::

    python benchmarks/integer_indicator.py --reps 30      # results/integer_indicator.md
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

OUT = Path(__file__).resolve().parent / "results" / "integer_indicator.md"
NS, EPSILONS, KINDS = (100, 150, 300, 1000), (0.5, 1.0, 3.0), ("float", "int")
DESIGNS = {"indicator predictor": {"g": (0, 1), "y": (-2, 7)}, "indicator response": {"g": (0, 1), "y": (0, 1)}}


def data(design: str, n: int, seed: int) -> pd.DataFrame:
    """One replicate's data, the indicator(s) as integers."""
    rng = np.random.default_rng(seed)
    g = (rng.uniform(size=n) < 0.4).astype(int)
    if design == "indicator predictor":
        return pd.DataFrame({"g": g, "y": 2.0 + 0.8 * g + rng.normal(0.0, 1.0, n)})
    return pd.DataFrame({"g": g, "y": (rng.uniform(size=n) < 0.3 + 0.2 * g).astype(int)})


def least_squares(df: pd.DataFrame) -> tuple[float, float]:
    """The least-squares slope on the indicator (the difference of group means) and its classical standard error."""
    X = np.column_stack([np.ones(len(df)), df.g.to_numpy(float)])
    y = df.y.to_numpy(float)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    cov = resid @ resid / (len(y) - 2) * np.linalg.inv(X.T @ X)
    return float(coef[1]), float(np.sqrt(cov[1, 1]))


def one_fit(df: pd.DataFrame, kind: str, bounds: dict, eps: float, seed: int) -> tuple[str, float, float, float]:
    """(method, relative error, covers (NaN without an interval), width ratio (NaN without))."""
    b_ls, se = least_squares(df)
    frame = df.astype(float) if kind == "float" else df
    res = dpstats.dp_ols("y ~ g", frame, eps, 1e-6, bounds=bounds, random_state=10_000 + seed)
    b, (lo, hi) = float(res.params.iloc[1]), res.conf_int().to_numpy()[1]
    rel = abs(b - b_ls) / abs(b_ls) if b_ls != 0 else float("nan")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return res.method, rel, float("nan"), float("nan")
    return res.method, rel, float(lo <= b_ls <= hi), (hi - lo) / (2 * 1.96 * se) if se > 0 else float("nan")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    head = ("| design | n | epsilon | stored as | auto chose | median rel. error | covers least squares "
            "| median width / LS width |")
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for design, bounds in DESIGNS.items():
        for n in NS:
            for eps in EPSILONS:
                frames = [data(design, n, s) for s in range(args.reps)]
                for kind in KINDS:
                    out = [one_fit(df, kind, bounds, eps, s) for s, df in enumerate(frames)]
                    methods = ", ".join(sorted({o[0] for o in out}))
                    a = np.array([o[1:] for o in out], dtype=float)
                    cover = f"{np.nanmean(a[:, 1]):.2f}" if np.isfinite(a[:, 1]).any() else "-"
                    width = f"{np.nanmedian(a[:, 2]):.1f}" if np.isfinite(a[:, 2]).any() else "-"
                    lines.append(f"| {design} | {n} | {eps:g} | {kind} | {methods} | {np.nanmedian(a[:, 0]):.3f} | "
                                 f"{cover} | {width} |")
    seconds = time.perf_counter() - start
    text = ("### A 0/1 indicator stored as integers or as floats\n\n"
            f"Command: `python benchmarks/integer_indicator.py --reps {args.reps}` ({seconds:.0f} s, one process). "
            f"{args.reps} data sets per cell, both storages fitted on the same data with the same noise seed by "
            "`method=\"auto\"`; g ~ Bernoulli(0.4); predictor design y = 2 + 0.8 g + N(0, 1), response design "
            "y ~ Bernoulli(0.3 + 0.2 g); truth = least squares on the same data.\n\n" + "\n".join(lines) + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
