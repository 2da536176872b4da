"""DP-LASSO's default step at Cai, Wang & Zhang's setting: support recovery over seeds (issue 17 part 5).

Run:  python benchmarks/lasso_default.py [--seeds 40] [--first-seed 0] [--rows default,paper,public] [--out FILE]

Rademacher design (independent +-1 columns), n = 5000, d = 1000, s = 5, coefficients +-1, noise sd 0.25,
y in [-7, 7], epsilon = 1, delta = 1e-6, through ``dp_ols_arrays(..., method="lasso", sparsity=5)`` with the
default step (a private curvature estimate) and iterations, for three residual bounds: the truly default
options (a private residual scale, 10% of epsilon), the paper's public noise level
(``residual_bound = 4 * 0.25 / 7``) and the old public default 2T (``residual_share=0``).  Each seed draws its
own data set (``sparse_regression_data(..., random_state=1000 + seed)``) and noise (``random_state=seed``), for
the seeds ``first-seed`` to ``first-seed + seeds - 1``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import dpstats  # noqa: E402
from dpstats.simulate import sparse_regression_data  # noqa: E402

N, D, S, SIGMA, Y_ABS = 5000, 1000, 5, 0.25, 7.0


ROWS = {
    "default": ("default options (private residual scale)", {}),
    "paper": ("4 sigma (paper's public noise level)", {"residual_bound": 4 * SIGMA / Y_ABS}),
    "public": ("public 2T (`residual_share=0`, the old default)", {"residual_share": 0.0}),
}


def run(seeds: range, options: dict[str, float]) -> dict[str, float]:
    """Exact-support rate, mean hits, median l2 error, the median step, N0 and residual bound over the fits of
    ``seeds``."""
    exact, hits, errs, steps, iters, bounds = 0, [], [], [], [], []
    start = time.perf_counter()
    for seed in seeds:
        X, y, beta, support = sparse_regression_data(N, D, S, SIGMA, random_state=1000 + seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="lasso", intercept=False, x_bounds=(-1, 1),
                                        y_bounds=(-Y_ABS, Y_ABS), sparsity=S, random_state=seed, **options)
        p = res.params.to_numpy()
        chosen = set(np.flatnonzero(p))
        exact += chosen == set(support)
        hits.append(len(chosen & set(support)))
        errs.append(float(np.linalg.norm(p - beta)))
        steps.append(res.info["step_size"])
        iters.append(res.info["iterations"])
        bounds.append(res.info["residual_bound"])
    return {"exact": exact, "hits": float(np.mean(hits)), "err": float(np.median(errs)),
            "step": float(np.median(steps)), "iterations": float(np.median(iters)),
            "residual_bound": float(np.median(bounds)),
            "seconds": (time.perf_counter() - start) / len(seeds)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=40)
    p.add_argument("--first-seed", type=int, default=0)
    p.add_argument("--rows", default="default,paper,public", help=f"comma-separated, of {', '.join(ROWS)}")
    p.add_argument("--out", help="also write the markdown table here")
    args = p.parse_args()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    lines = [f"Command: `python benchmarks/lasso_default.py --seeds {args.seeds} --first-seed {args.first_seed} "
             f"--rows {args.rows}`", "",
             "| residual bound | exact support | mean hits (of 5) | median l2 error | median R (fitting units) "
             "| median step | median N0 | s per fit |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key in args.rows.split(","):
        label, options = ROWS[key]
        r = run(seeds, options)
        lines.append(f"| {label} | {r['exact'] / args.seeds:.0%} ({r['exact']}/{args.seeds}) | {r['hits']:.2f} | "
                     f"{r['err']:.3f} | {r['residual_bound']:.3f} | {r['step']:.3f} | {r['iterations']:.0f} | "
                     f"{r['seconds']:.1f} |")
        print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
