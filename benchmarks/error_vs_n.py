"""Error against n for noisy_ols, adassp and lasso beside the minimax lower bounds (Cai, Wang & Zhang 2021).

Run:  python benchmarks/error_vs_n.py [--reps 10] [--support-runs 100] [--out benchmarks/results]

Part 1 (error vs n).  y = x^T beta + N(0, sigma^2), x uniform on [-1, 1]^d with d = 20,
beta with s = 4 entries +-1 (the rest 0), sigma = 0.5, public bounds x in [-1, 1],
y in [-6, 6]; epsilon = 1, delta = 1e-6; every fit goes through
``dpstats.dp_ols_arrays`` (no intercept; public rescaling on, the default).  For each n it
reports the median over --reps fits of ||b - beta||_2 / sigma, for

  ols            non-private reference (NOT PRIVATE)
  adassp         Wang (2018)
  noisy_ols      worst-case calibration (default); refusals of the private lambda_min check counted
  lasso          Algorithm 4 with the package defaults (T = B_Y, R = 2T, the stable step eta = 1/L_2s and
                 N0 = ceil(log(n) / eta), see dpstats/methods/lasso.py), sparsity=4
  lasso (R=4sd)  the same with residual_bound = 4 sigma (public noise level), in rescaled units

beside the Thm 18 (classical, d) and Thm 16 (sparse, s) lower bounds and the noisy_ols and
lasso upper bounds (units of sigma, constants set to 1).  Writes error_vs_n.png and cai.md.

Part 2 (support recovery).  d = 1000, n = 5000, s = 5, epsilon = 1, delta = 1e-6, Rademacher
design, coefficients +-1 on a random support, sigma = 0.25, residual_bound = 4 sigma, the paper's
step (step_size=1.0, N0 = ceil(log n); the design is isotropic): how often the released support
equals the true one over --support-runs seeds, and the time per fit.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

import dpstats
from dpstats.errors import IllConditionedDesignError
from dpstats.simulate import sparse_regression_data
from dpstats.theory import CLASSICAL_LOWER, SPARSE_LOWER, UPPER_RATES

D, S, SIGMA, Y_ABS = 20, 4, 0.5, 6.0
EPS, DELTA = 1.0, 1e-6
NS = [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000]
METHODS = ["ols", "adassp", "noisy_ols", "lasso", "lasso (R=4sd)"]


def simulate(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = rng.uniform(-1, 1, size=(n, D))
    beta = np.zeros(D)
    beta[rng.choice(D, S, replace=False)] = rng.choice([-1.0, 1.0], S)
    y = X @ beta + SIGMA * rng.normal(size=n)
    return X, y, beta


def fit(method: str, X: np.ndarray, y: np.ndarray, seed: int) -> np.ndarray | None:
    """Coefficients, or None when noisy_ols refuses."""
    common = dict(x_bounds=(-1, 1), y_bounds=(-Y_ABS, Y_ABS), random_state=seed, intercept=False)
    if method == "ols":
        return dpstats.dp_ols_arrays(X, y, float("inf"), intercept=False, method="ols").params.to_numpy()
    if method == "lasso (R=4sd)":
        res = dpstats.dp_ols_arrays(X, y, EPS, DELTA, method="lasso", sparsity=S, residual_bound=4 * SIGMA / Y_ABS,
                                    **common)
        return res.params.to_numpy()
    extra = {"sparsity": S} if method == "lasso" else {}
    try:
        return dpstats.dp_ols_arrays(X, y, EPS, DELTA, method=method, **common, **extra).params.to_numpy()
    except IllConditionedDesignError:
        return None


def error_vs_n(reps: int) -> tuple[dict[str, list[float]], dict[str, list[int]], float]:
    med: dict[str, list[float]] = {m: [] for m in METHODS}
    refused: dict[str, list[int]] = {m: [] for m in METHODS}
    t0 = time.perf_counter()
    for n in NS:
        errs: dict[str, list[float]] = {m: [] for m in METHODS}
        nref = {m: 0 for m in METHODS}
        for r in range(reps):
            rng = np.random.default_rng(10_000 * r + n)
            X, y, beta = simulate(n, rng)
            for m in METHODS:
                b = fit(m, X, y, seed=r)
                if b is None:
                    nref[m] += 1
                else:
                    errs[m].append(float(np.linalg.norm(b - beta)) / SIGMA)
        for m in METHODS:
            med[m].append(float(np.median(errs[m])) if errs[m] else float("nan"))
            refused[m].append(nref[m])
        print(f"n={n}: " + ", ".join(f"{m} {med[m][-1]:.3g}" for m in METHODS), file=sys.stderr)
    return med, refused, time.perf_counter() - t0


def support_recovery(runs: int) -> tuple[int, float, float]:
    n, d, s, sigma = 5000, 1000, 5, 0.25
    ok, secs, errs = 0, 0.0, []
    for seed in range(runs):
        X, y, beta, support = sparse_regression_data(n, d, s, sigma, random_state=1000 + seed)
        t = time.perf_counter()
        res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, intercept=False, method="lasso", x_bounds=(-1, 1),
                                    y_bounds=(-7, 7), sparsity=s, residual_bound=4 * sigma / 7, random_state=seed,
                                    step_size=1.0)
        secs += time.perf_counter() - t
        ok += set(np.flatnonzero(res.params.to_numpy())) == set(support)
        errs.append(float(np.linalg.norm(res.params.to_numpy() - beta)))
    return ok, secs / runs, float(np.median(errs))


def bound_curves() -> dict[str, list[float]]:
    def total(rate, s: int) -> list[float]:
        return [rate.statistical(n, D, s) + rate.privacy_term(n, D, EPS, DELTA, s) for n in NS]

    return {"Thm 18 lower (d=20)": total(CLASSICAL_LOWER, 0), "Thm 16 lower (s=4)": total(SPARSE_LOWER, S),
            "noisy_ols upper [derived]": total(UPPER_RATES["noisy_ols/worst-case"], S),
            "Thm 17 lasso upper": total(UPPER_RATES["lasso"], S)}


def plot(med: dict[str, list[float]], bounds: dict[str, list[float]], path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 5))
    markers = dict(zip(METHODS, "os^Dv", strict=True))
    for m in METHODS:
        ax.plot(NS, med[m], marker=markers[m], label=m + (" (NOT PRIVATE)" if m == "ols" else ""))
    styles = {"Thm 18 lower (d=20)": ("black", "-"), "Thm 16 lower (s=4)": ("black", ":"),
              "noisy_ols upper [derived]": ("C2", "--"), "Thm 17 lasso upper": ("C3", "--")}
    for label, vals in bounds.items():
        color, ls = styles[label]
        ax.plot(NS, vals, color=color, linestyle=ls, linewidth=1, label=label + " (constants = 1)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n")
    ax.set_ylabel("median ||b - beta||_2 / sigma")
    ax.set_title(f"d={D}, s={S}, sigma={SIGMA}, epsilon={EPS:g}, delta={DELTA:g}")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def fmt(x: float) -> str:
    return "refused" if np.isnan(x) else f"{x:.3g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=10, help="fits per n and method (median reported)")
    ap.add_argument("--support-runs", type=int, default=100, help="seeds of the d=1000 support-recovery run")
    ap.add_argument("--out", default=os.path.join("benchmarks", "results"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    med, refused, secs = error_vs_n(args.reps)
    bounds = bound_curves()
    png = os.path.join(args.out, "error_vs_n.png")
    plot(med, bounds, png)
    ok, per_fit, med_err = support_recovery(args.support_runs)

    cmd = "python benchmarks/error_vs_n.py" + (f" --reps {args.reps}" if args.reps != 10 else "") + (
        f" --support-runs {args.support_runs}" if args.support_runs != 100 else "")
    lines = [
        "# Cai, Wang & Zhang: error against n, and sparse support recovery",
        "",
        f"Command: `{cmd}` (dpstats {dpstats.__version__}, Python {platform.python_version()}, "
        f"numpy {np.__version__}, {platform.machine()}, {os.cpu_count()} cores; part 1 took {secs:.0f} s).",
        "",
        f"## Error against n (median of {args.reps} fits, ||b - beta||_2 / sigma)",
        "",
        f"x uniform on [-1, 1]^{D}, beta with {S} entries +-1, sigma = {SIGMA}, bounds x in [-1, 1], "
        f"y in [-{Y_ABS:g}, {Y_ABS:g}]; epsilon = {EPS:g}, delta = {DELTA:g}; `dp_ols_arrays`, no intercept. "
        "Bounds are in units of sigma with every unknown constant set to 1, so compare slopes and orders "
        "of magnitude, not levels.",
        "",
        "| n | " + " | ".join(METHODS) + " | " + " | ".join(bounds) + " |",
        "|---" * (1 + len(METHODS) + len(bounds)) + "|",
    ]
    for i, n in enumerate(NS):
        cells = []
        for m in METHODS:
            cell = fmt(med[m][i])
            if refused[m][i]:
                cell += f" ({refused[m][i]}/{args.reps} refused)"
            cells.append(cell)
        lines.append(f"| {n} | " + " | ".join(cells) + " | " + " | ".join(f"{bounds[b][i]:.3g}" for b in bounds)
                     + " |")
    lines += [
        "",
        "![error against n](error_vs_n.png)",
        "",
        "## Support recovery at d = 1000, n = 5000, s = 5, epsilon = 1",
        "",
        "Rademacher design, coefficients +-1 on a random support, sigma = 0.25, y in [-7, 7], "
        "`dp_ols_arrays(..., method='lasso', sparsity=5, residual_bound=4 * 0.25 / 7)` (worst-case DP).",
        "",
        f"- exact support recovered in {ok} of {args.support_runs} seeded runs",
        f"- median ||b - beta||_2 = {med_err:.3g}",
        f"- {per_fit:.2f} s per fit (the whole dp_ols_arrays call)",
        "",
    ]
    md = os.path.join(args.out, "cai.md")
    with open(md, "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
