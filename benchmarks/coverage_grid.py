"""Coverage of the default path's intervals where users are: a simulation grid at real sizes (issue 18, item 2).

Grid: n in {100, 300, 1000, 3000, 10^4, 10^5}; d in {2, 5, 10, 20} design columns (with the intercept);
designs ``corr`` (equicorrelated Gaussian columns, rho = 0.5, uncentred and on different scales) and ``skew``
(correlated log-normal columns and a 0/1 dummy); bounds ``tight`` (about +-4 sd, light clipping of the skewed
columns) and ``loose`` (asymmetric [m - 6 s, m + 20 s], like documented caps); epsilon in {0.3, 1, 3},
delta = 1e-6.  Population R^2 = 0.3, Gaussian errors, alternating standardised effects with the largest on
column 1 (the headline).  Truth: the true coefficients.  Each cell is fitted with ``method="auto"`` (and any
other method given with ``--methods``) with the declared bounds.

Reported per cell group: the share of fits that report an interval, coverage of the true coefficient by the
95% intervals (headline, and pooled over all slopes), the median width over the OLS interval's width
(2 x 1.96 x the OLS standard error on the same data), the median relative error of the headline, and which
method auto chose.

Run (about an hour at 10 seeds on a shared 2-core machine)::

    python benchmarks/coverage_grid.py --seeds 10 --out benchmarks/results/coverage_grid.md

``--quick`` runs a small corner of the grid in a few minutes.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dpstats  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402

NS = (100, 300, 1000, 3000, 10_000, 100_000)
DS = (2, 5, 10, 20)
DESIGNS = ("corr", "skew")
BOUNDS = ("tight", "loose")
EPSILONS = (0.3, 1.0, 3.0)
DELTA = 1e-6
R2 = 0.3


def simulate(design: str, n: int, d: int, bounds: str, rng: np.random.Generator
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[float, float]], tuple[float, float]]:
    """(X without the intercept, y, true coefficients with the intercept first, x bounds, y bounds)."""
    p = d - 1
    j = np.arange(p)
    rho = 0.5 if design == "corr" else 0.3
    corr = np.full((p, p), rho) + (1 - rho) * np.eye(p)
    g = rng.standard_normal((n, p)) @ np.linalg.cholesky(corr).T
    scale = 1.0 + 0.5 * j
    if design == "corr":
        mean, sd = 2.0 + j, scale
        Z = mean + sd * g
    else:  # log-normal exp(0.75 g) scaled, the last column a Bernoulli(0.3) dummy
        m_ln, s_ln = math.exp(0.75**2 / 2), math.sqrt((math.exp(0.75**2) - 1) * math.exp(0.75**2))
        mean, sd = scale * m_ln, scale * s_ln
        Z = scale * np.exp(0.75 * g)
        if p >= 2:
            Z[:, -1] = (g[:, -1] > 0.5244).astype(float)
            mean[-1], sd[-1] = 0.3, math.sqrt(0.21)
    w = np.where(j % 2 == 0, 1.0, -0.6) / math.sqrt(max(p, 1))  # standardised effects; the headline the largest
    signal = float(w @ corr @ w)
    sigma = math.sqrt(signal * (1 - R2) / R2)
    beta = np.concatenate(([1.0 - float(np.sum(w * mean / sd))], w / sd))
    y = beta[0] + Z @ beta[1:] + sigma * rng.standard_normal(n)
    sdy = math.sqrt(signal + sigma**2)
    if bounds == "tight":
        lo, hi = (mean - 4 * sd, mean + 4 * sd) if design == "corr" else (np.zeros(p), scale * math.exp(0.75 * 3))
        ylo, yhi = 1.0 - 4 * sdy, 1.0 + 4 * sdy
    else:
        lo, hi = (mean - 6 * sd, mean + 20 * sd) if design == "corr" else (np.zeros(p), mean + 20 * sd)
        ylo, yhi = 1.0 - 6 * sdy, 1.0 + 20 * sdy
    if design == "skew" and p >= 2:
        lo[-1], hi[-1] = 0.0, 1.0
    return Z, y, beta, list(zip(lo.tolist(), hi.tolist())), (ylo, yhi)


def ols(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and standard errors (X with the intercept)."""
    b, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ b
    s2 = float(r @ r) / (len(y) - X.shape[1])
    return b, np.sqrt(np.diag(s2 * np.linalg.inv(X.T @ X)))


def fit(method: str, Z: np.ndarray, y: np.ndarray, xb: list, yb: tuple, eps: float, seed: int) -> dict:
    """One fit: the coefficients, the 95% interval (NaN where none is reported) and the method used."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols_arrays(Z, y, eps, DELTA, method=method, x_bounds=xb, y_bounds=yb, intercept=True,
                                        random_state=seed)
            try:
                ci = res.conf_int().to_numpy()
            except DPStatsError:
                ci = np.full((Z.shape[1] + 1, 2), np.nan)
        return {"params": res.params.to_numpy(), "ci": ci, "used": res.method}
    except DPStatsError as exc:
        return {"params": None, "ci": None, "used": type(exc).__name__}


def run(methods: Sequence[str], ns: Sequence[int], ds: Sequence[int], epsilons: Sequence[float], seeds: int
        ) -> pd.DataFrame:
    rows = []
    for design in DESIGNS:
        for bounds in BOUNDS:
            for d in ds:
                for n in ns:
                    for k in range(seeds):
                        Z, y, beta, xb, yb = simulate(design, n, d, bounds, np.random.default_rng([n, d, k, 18]))
                        b_ols, se_ols = ols(np.column_stack([np.ones(n), Z]), y)
                        for eps in epsilons:
                            for method in methods:
                                out = fit(method, Z, y, xb, yb, eps, 1000 + k)
                                for j in range(1, d):
                                    est = np.nan if out["params"] is None else out["params"][j]
                                    lo, hi = (np.nan, np.nan) if out["ci"] is None else out["ci"][j]
                                    rows.append((method, out["used"], design, bounds, n, d, eps, k, j, est, beta[j],
                                                 b_ols[j], se_ols[j], lo, hi))
                print(f"  {design} {bounds} d={d} done", file=sys.stderr, flush=True)
    return pd.DataFrame(rows, columns=["method", "used", "design", "bounds", "n", "d", "epsilon", "seed", "coef",
                                       "est", "truth", "ols", "ols_se", "lo", "hi"])


def summarise(df: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Per group: fits, share reporting, coverage of the truth (headline; all slopes), median width / OLS width,
    median relative error of the headline, methods chosen."""
    df = df.copy()
    df["reported"] = np.isfinite(df.lo) & np.isfinite(df.hi)
    df["covers"] = (df.lo <= df.truth) & (df.truth <= df.hi)
    df["width"] = (df.hi - df.lo) / (2 * 1.96 * df.ols_se)
    df["rel_err"] = (df.est - df.truth).abs() / df.truth.abs()
    out = []
    for key, g in df.groupby(list(by)):
        head = g[g.coef == 1]
        rep, rep_all = head[head.reported], g[g.reported]
        out.append({**dict(zip(by, key if isinstance(key, tuple) else (key,))),
                    "fits": len(head), "reported": head.reported.mean(),
                    "coverage (headline)": rep.covers.mean() if len(rep) else np.nan,
                    "coverage (all slopes)": rep_all.covers.mean() if len(rep_all) else np.nan,
                    "width / OLS": rep_all.width.median() if len(rep_all) else np.nan,
                    "rel. error (headline)": head.rel_err.median(),
                    "chose": ", ".join(sorted(set(head.used)))})
    return pd.DataFrame(out)


def markdown(frame: pd.DataFrame) -> str:
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return "-" if math.isnan(v) else f"{v:.3g}" if abs(v) < 100 else f"{v:.0f}"
        return str(v)
    head = "| " + " | ".join(frame.columns) + " |"
    rule = "|" + "---|" * len(frame.columns)
    body = ["| " + " | ".join(fmt(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def report(df: pd.DataFrame, command: str, seconds: float) -> str:
    cells = summarise(df, ["method", "epsilon", "n", "d"])
    rep = cells[cells.reported > 0]
    band = ((rep["coverage (all slopes)"] >= 0.93) & (rep["coverage (all slopes)"] <= 0.97)).mean()
    return f"""# Coverage of the default path's intervals (simulation grid)

Command: `{command}` ({seconds:.0f} s).  Designs corr/skew, bounds tight/loose, Gaussian errors, population
R^2 = {R2}; delta = {DELTA:g}; truth = the true coefficients (`benchmarks/coverage_grid.py`).  "reported":
share of fits with a finite 95% interval for the headline; coverage of the truth by the reported intervals
(headline; all slopes pooled); width over the OLS interval's (2 x 1.96 x OLS se), median over slopes;
relative error of the headline (median).

Cells (method, epsilon, n, d) with intervals reported: {len(rep)} of {len(cells)}; pooled slope coverage in
[0.93, 0.97] in {100 * band:.0f}% of them.

## By method, epsilon and n (pooled over d, designs and bounds)

{markdown(summarise(df, ["method", "epsilon", "n"]))}

## By method, epsilon, n and d

{markdown(cells)}

## By design and bounds (pooled over n, d and epsilon, where intervals are reported)

{markdown(summarise(df[np.isfinite(df.lo)], ["method", "design", "bounds"]))}
"""


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--methods", default="auto", help="comma-separated (default auto)")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--quick", action="store_true", help="n in {300, 3000}, d in {2, 5}, epsilon 1, 3 seeds")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "coverage_grid.md"))
    p.add_argument("--raw", help="also write the per-coefficient records (CSV)")
    args = p.parse_args(argv)
    ns, ds, eps = (300, 3000), (2, 5), (1.0,)
    seeds = 3 if args.quick else args.seeds
    if not args.quick:
        ns, ds, eps = NS, DS, EPSILONS
    started = time.perf_counter()
    df = run(args.methods.split(","), ns, ds, eps, seeds)
    command = "python benchmarks/coverage_grid.py " + " ".join(argv if argv is not None else sys.argv[1:])
    Path(args.out).write_text(report(df, command.strip(), time.perf_counter() - started))
    if args.raw:
        df.to_csv(args.raw, index=False)
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
