"""DP-LASSO's default step at Cai, Wang & Zhang's setting: support recovery over seeds (issue 17 part 5).

Run:  python benchmarks/lasso_default.py [--seeds 40] [--out benchmarks/results/lasso_default.md]

Rademacher design (independent +-1 columns), n = 5000, d = 1000, s = 5, coefficients +-1, noise sd 0.25,
y in [-7, 7], epsilon = 1, delta = 1e-6, through ``dp_ols_arrays(..., method="lasso", sparsity=5)`` with the
default step (a private curvature estimate) and iterations, for two residual bounds: the paper's public noise
level (``residual_bound = 4 * 0.25 / 7``) and the default 2T.  Each seed draws its own data set
(``sparse_regression_data(..., random_state=1000 + seed)``) and noise (``random_state=seed``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import dpstats
from dpstats.simulate import sparse_regression_data

N, D, S, SIGMA, Y_ABS = 5000, 1000, 5, 0.25, 7.0


def run(seeds: int, residual_bound: float | None) -> dict[str, float]:
    """Exact-support rate, mean hits, median l2 error and the median step over ``seeds`` fits."""
    exact, hits, errs, steps, iters = 0, [], [], [], []
    start = time.perf_counter()
    for seed in range(seeds):
        X, y, beta, support = sparse_regression_data(N, D, S, SIGMA, random_state=1000 + seed)
        kw = {} if residual_bound is None else {"residual_bound": residual_bound}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="lasso", x_bounds=(-1, 1), y_bounds=(-Y_ABS, Y_ABS),
                                        sparsity=S, random_state=seed, **kw)
        p = res.params.to_numpy()
        chosen = set(np.flatnonzero(p))
        exact += chosen == set(support)
        hits.append(len(chosen & set(support)))
        errs.append(float(np.linalg.norm(p - beta)))
        steps.append(res.info["step_size"])
        iters.append(res.info["iterations"])
    return {"exact": exact / seeds, "hits": float(np.mean(hits)), "err": float(np.median(errs)),
            "step": float(np.median(steps)), "iterations": float(np.median(iters)),
            "seconds": (time.perf_counter() - start) / seeds}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=40)
    p.add_argument("--out", help="also write the markdown table here")
    args = p.parse_args()
    lines = [f"Command: `python benchmarks/lasso_default.py --seeds {args.seeds}`", "",
             "| residual bound | exact support | mean hits (of 5) | median l2 error | median step | median N0 "
             "| s per fit |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, R in (("4 sigma (paper's public noise level)", 4 * SIGMA / Y_ABS), ("default 2T", None)):
        r = run(args.seeds, R)
        lines.append(f"| {label} | {r['exact']:.0%} | {r['hits']:.2f} | {r['err']:.3f} | {r['step']:.3f} | "
                     f"{r['iterations']:.0f} | {r['seconds']:.1f} |")
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
