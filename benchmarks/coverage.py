"""Coverage of dpstats' private confidence intervals (issue: DP inference).

Run:  python benchmarks/coverage.py [--reps 500] [--quick] [--methods ssp adassp noisy_ols] [--n 2000]
                                    [--jsonl rows.jsonl] [--out benchmarks/results/coverage.md]
      python benchmarks/coverage.py --assemble a.jsonl b.jsonl --out benchmarks/results/coverage.md
      python benchmarks/coverage.py --split ssp        (the experiment behind ssp.INFERENCE_WEIGHT)
      python benchmarks/coverage.py --split noisy_ols  (the experiment behind noisy_ols.INFERENCE_SHARE)

For each setting (n, d, epsilon, noise) it simulates --reps data sets from
y = 0.5 + x^T beta + e, x ~ U[-1, 1]^(d-1), beta evenly spaced in [-1, 1],
e ~ N(0, 1) or t_3 / sqrt(3) (unit variance, heavy tails), with public bounds
x in [-1, 1] and y in [-8, 8], fits each method through dp_ols and records
the empirical coverage of nominal 95% intervals (all coefficients pooled, and
the worst coefficient), the width relative to the non-private OLS interval
on the same data (ratio of mean widths, and the median over fits of each
fit's ratio, which is not dominated by a few very wide fits), and the share
of fits whose summary carries a WARNING.  ``noisy_ols`` refuses (IllConditionedDesignError, decided from its
released lambda_min bound) where it cannot certify a sensitivity; the share of
refusals is recorded and coverage is over the fits that were released.  ``ssp`` and ``adassp`` withhold
their intervals where the released noise-to-signal ratio says they would not cover (``inference_withheld``);
the share of withheld fits is recorded and coverage is over the fits whose intervals were shown.
Each setting's seed depends only on (method, setting), so runs of a subset of
methods reproduce the rows of the full run; --jsonl appends each row as it
finishes (a long run can be assembled from what is done).
"""

from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np
import pandas as pd

import dpstats
from dpstats.errors import IllConditionedDesignError
from dpstats.methods import noisy_ols as noisy_ols_module
from dpstats.methods import ssp as ssp_module

METHODS = ("ssp", "adassp", "noisy_ols")
GRID_N, GRID_D, GRID_EPS, GRID_NOISE = (2000, 20000), (4, 11), (0.3, 1.0, 3.0), ("gaussian", "t3")
BAND = (0.93, 0.97)


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
    covered, widths, ols_widths, errors, warned, refused, withheld = [], [], [], [], [], 0, 0
    for r in range(reps):
        df, formula, bounds, truth = simulate(n, d, noise, rng)
        try:
            res = dpstats.dp_ols(formula, df, eps, 1e-6, method=method, bounds=bounds,
                                 random_state=seed * 100_000 + r)
        except IllConditionedDesignError:
            refused += 1
            continue
        if res.inference_withheld:  # the summary shows no interval (the diagnostic says it would not cover)
            withheld += 1
            continue
        ols = dpstats.dp_ols(formula, df, float("inf"), method="ols")
        ci, oci = res.conf_int().to_numpy(), ols.conf_int().to_numpy()
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        widths.append(ci[:, 1] - ci[:, 0])
        ols_widths.append(oci[:, 1] - oci[:, 0])
        errors.append(np.linalg.norm(res.params.to_numpy() - truth))
        warned.append(any(note.startswith("WARNING") for note in res.privacy.notes))
    row = dict(method=method, n=n, d=d, epsilon=eps, noise=noise, reps=reps, refused=refused / reps,
               withheld=withheld / reps)
    if not covered:
        return dict(row, coverage=float("nan"), worst_coef=float("nan"), width_vs_ols=float("nan"),
                    median_width_vs_ols=float("nan"), mean_error=float("nan"), warned=float("nan"),
                    ok="refused" if refused else "withheld")
    cov = np.array(covered)
    ratio = np.mean(widths, axis=1) / np.mean(ols_widths, axis=1)  # per fit: mean width over coefficients
    return dict(row, coverage=float(cov.mean()), worst_coef=float(cov.mean(axis=0).min()),
                width_vs_ols=float(np.mean(widths) / np.mean(ols_widths)), median_width_vs_ols=float(np.median(ratio)),
                mean_error=float(np.mean(errors)),
                warned=float(np.mean(warned)), ok=bool(BAND[0] <= cov.mean() <= BAND[1]))


def settings(quick: bool) -> list[tuple[int, int, float, str]]:
    grid = itertools.product(GRID_N[:1] if quick else GRID_N, GRID_D[:1] if quick else GRID_D, GRID_EPS, GRID_NOISE)
    return list(grid)


def setting_seed(method: str, index: int) -> int:
    return 1 + 100 * METHODS.index(method) + index


def split_experiment(method: str, reps: int) -> pd.DataFrame:
    """Coverage and width for several inference shares of the budget (module constants patched)."""
    rows = []
    module, attr, values, grid = {
        "ssp": (ssp_module, "INFERENCE_WEIGHT", (0.02, 0.1, 0.5), [(2000, 4, 1.0), (20000, 4, 1.0)]),
        "noisy_ols": (noisy_ols_module, "INFERENCE_SHARE", (0.01, 0.05, 0.2),
                      [(20000, 4, 3.0), (20000, 11, 3.0)]),
    }[method]
    original = getattr(module, attr)
    try:
        for value in values:
            setattr(module, attr, value)
            for n, d, eps in grid:
                rows.append({attr: value, **coverage_setting(method, n, d, eps, "gaussian", reps, seed=7)})
                print(rows[-1], flush=True)
    finally:
        setattr(module, attr, original)
    return pd.DataFrame(rows)


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub markdown table (pandas' to_markdown needs the optional tabulate package)."""
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return "-" if np.isnan(v) else f"{v:.3f}"
        return str(v)
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def tally(table: pd.DataFrame) -> str:
    """Per method: settings within the band, settings outside it and whether each of those warned."""
    lines = []
    for method, part in table.groupby("method", sort=False):
        fitted = part[~part["ok"].isin(["refused", "withheld"])]
        inside = int((fitted["ok"] == True).sum())  # noqa: E712 - column mixes bools and "refused"
        outside = fitted[fitted["ok"] == False]  # noqa: E712
        unwarned = outside[outside["warned"] < 0.5]
        lines.append(f"- {method}: {inside} of {len(fitted)} released settings within [{BAND[0]}, {BAND[1]}]"
                     + (f" ({len(part) - len(fitted)} always refused or withheld)" if len(part) > len(fitted)
                        else "")
                     + f"; {len(outside)} outside, of which {len(outside) - len(unwarned)} warned in most fits"
                     + (f"; NOT warned: {unwarned[['n', 'd', 'epsilon', 'noise']].to_dict('records')}"
                        if len(unwarned) else ""))
    return "\n".join(lines)


def assemble(paths: list[str]) -> pd.DataFrame:
    rows = [json.loads(line) for path in paths for line in open(path) if line.strip()]
    table = pd.DataFrame(rows)
    order = {m: i for i, m in enumerate(METHODS)}
    table["_m"] = table["method"].map(order)
    return table.sort_values(["_m", "n", "d", "epsilon", "noise"]).drop(columns="_m").reset_index(drop=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--quick", action="store_true", help="one n, one d")
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--n", nargs="+", type=int, default=None, help="only these n (to split a run over processes)")
    ap.add_argument("--split", choices=("ssp", "noisy_ols"), help="run a budget-split experiment instead")
    ap.add_argument("--jsonl", default=None, help="append each finished row to this file")
    ap.add_argument("--assemble", nargs="+", default=None, help="build the table from --jsonl files only")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.assemble:
        table = assemble(args.assemble)
    elif args.split:
        table = split_experiment(args.split, args.reps)
    else:
        rows = []
        for method in args.methods:
            for index, (n, d, eps, noise) in enumerate(settings(args.quick)):
                if args.n and n not in args.n:
                    continue
                t0 = time.perf_counter()
                row = coverage_setting(method, n, d, eps, noise, args.reps, seed=setting_seed(method, index))
                row["seconds"] = time.perf_counter() - t0
                rows.append(row)
                print({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()}, flush=True)
                if args.jsonl:
                    with open(args.jsonl, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
        table = pd.DataFrame(rows)
    md = markdown_table(table)
    if not args.split:
        md += "\n\n" + tally(table)
    print(md)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(md + "\n")


if __name__ == "__main__":
    main()
