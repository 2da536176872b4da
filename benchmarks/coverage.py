"""Coverage of dpstats' private confidence intervals (issue: DP inference).

Run:  python benchmarks/coverage.py [--reps 500] [--quick] [--out benchmarks/results/coverage.md]
      python benchmarks/coverage.py --split   (the experiment behind ssp.INFERENCE_WEIGHT)

For each setting (n, d, epsilon, noise) it simulates --reps data sets from
y = 0.5 + x^T beta + e, x ~ U[-1, 1]^(d-1), beta evenly spaced in [-1, 1],
e ~ N(0, 1) or t_3 / sqrt(3) (unit variance, heavy tails), with public bounds
x in [-1, 1] and y in [-8, 8], fits each method through dp_ols and records
the empirical coverage of nominal 95% intervals (all coefficients pooled, and
the worst coefficient) and the mean width relative to the non-private OLS
interval on the same data.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import dpstats
from dpstats.methods import ssp as ssp_module


def simulate(n: int, d: int, noise: str, rng: np.random.Generator) -> tuple[pd.DataFrame, str, dict, np.ndarray]:
    p = d - 1
    beta = np.linspace(-1, 1, p)
    X = rng.uniform(-1, 1, (n, p))
    e = rng.normal(0, 1, n) if noise == "gaussian" else rng.standard_t(3, n) / np.sqrt(3)
    cols = [f"x{j}" for j in range(p)]
    df = pd.DataFrame(X, columns=cols)
    df["y"] = 0.5 + X @ beta + e
    bounds = {c: (-1.0, 1.0) for c in cols}
    bounds["y"] = (-8.0, 8.0)
    return df, "y ~ " + " + ".join(cols), bounds, np.r_[0.5, beta]


def coverage_setting(method: str, n: int, d: int, eps: float, noise: str, reps: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    covered, widths, ols_widths, errors, warned = [], [], [], [], []
    for r in range(reps):
        df, formula, bounds, truth = simulate(n, d, noise, rng)
        res = dpstats.dp_ols(formula, df, eps, 1e-6, method=method, bounds=bounds, random_state=seed * 100_000 + r)
        ols = dpstats.dp_ols(formula, df, float("inf"), method="ols")
        ci, oci = res.conf_int().to_numpy(), ols.conf_int().to_numpy()
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        widths.append(ci[:, 1] - ci[:, 0])
        ols_widths.append(oci[:, 1] - oci[:, 0])
        errors.append(np.linalg.norm(res.params.to_numpy() - truth))
        warned.append(any(note.startswith("WARNING") for note in res.privacy.notes))
    cov = np.array(covered)
    return dict(method=method, n=n, d=d, epsilon=eps, noise=noise, reps=reps, coverage=cov.mean(),
                worst_coef=cov.mean(axis=0).min(), width_vs_ols=float(np.mean(widths) / np.mean(ols_widths)),
                mean_error=float(np.mean(errors)), warned=float(np.mean(warned)),
                ok=bool(0.93 <= cov.mean() <= 0.97))


def split_experiment(reps: int) -> pd.DataFrame:
    rows = []
    original = ssp_module.INFERENCE_WEIGHT
    try:
        for w in (0.02, 0.1, 0.5):
            ssp_module.INFERENCE_WEIGHT = w
            for n in (2000, 20000):
                rows.append(dict(weight=w, **coverage_setting("ssp", n, 4, 1.0, "gaussian", reps, seed=7)))
    finally:
        ssp_module.INFERENCE_WEIGHT = original
    return pd.DataFrame(rows)


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub markdown table (pandas' to_markdown needs the optional tabulate package)."""
    def fmt(v: object) -> str:
        return f"{v:.3f}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--quick", action="store_true", help="one n, one d")
    ap.add_argument("--split", action="store_true", help="run the budget-split experiment instead")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.split:
        table = split_experiment(args.reps)
    else:
        rows = []
        grid_n = [2000] if args.quick else [2000, 20000]
        grid_d = [4] if args.quick else [4, 11]
        for method in ("ssp", "adassp"):
            for n in grid_n:
                for d in grid_d:
                    for eps in (0.3, 1.0, 3.0):
                        for noise in ("gaussian", "t3"):
                            t0 = time.perf_counter()
                            row = coverage_setting(method, n, d, eps, noise, args.reps, seed=len(rows) + 1)
                            row["seconds"] = time.perf_counter() - t0
                            rows.append(row)
                            print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()},
                                  flush=True)
        table = pd.DataFrame(rows)
    md = markdown_table(table)
    print(md)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(md + "\n")


if __name__ == "__main__":
    main()
