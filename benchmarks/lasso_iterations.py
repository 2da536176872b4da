"""DP-LASSO's number of iterations N0 on the real designs: fixed N0 against the default rule (issue 17 part 5).

Run:  python benchmarks/lasso_iterations.py [--datasets engel,castle] [--iterations 1,2,4,...] [--seeds 5]
      [--out FILE]

For each data set of benchmarks/real_data.py (full model, declared bounds, the training rows) and epsilon in
0.5 / 1 / 3, the median over the noise seeds 1000, 1001, ... of the relative error |b - b_OLS| / |b_OLS| of
the headline coefficient, for ``method="lasso"`` with ``sparsity=d`` and the default N0 and with each fixed
``iterations`` (at most n).  Each data set's row also gives, as a non-private diagnostic of the design the
lasso sees (after the public rescaling and clipping), the smallest and largest eigenvalue of X'X / n and
n lambda_min / sum_j c_j^2: the smallest eigenvalue in units of the sensitivity of any release of it, which
moves by up to sum_j c_j^2 / n when one row is replaced (Weyl's inequality; c_j the largest |bound| of
column j after the rescaling).  The N0 with the smallest median error is marked; ``ok`` lists the N0 whose
median is within 1.5 times adassp's (the criterion of issue 17).

Three columns give N0 from the median released step eta and residual bound R of the default fits, with the
default rule's terms (docs/proofs/lasso.md, "Iterations": A = T / c_x, rho, c): "rule" minimises the default
rule's A min(1, 1/(rho N)) + c N^(3/2); two rules use the exact lambda_min (no noise): "weakest + rule"
minimises A min(1, 1/(rho N), exp(-eta lambda_min N)) + c N sqrt(min(N, 1/(2 eta lambda_min))), "weakest
only" A exp(-eta lambda_min N) + the same noise term.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import patsy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # this checkout's dpstats, not an installed one
import real_data as rd  # noqa: E402
from real_data_specs import SPECS  # noqa: E402

import dpstats  # noqa: E402
from dpstats.formula import build_design  # noqa: E402
from dpstats.privacy.peeling import peeling_noise_multiplier  # noqa: E402
from dpstats.scaling import PublicScaling  # noqa: E402

ITERATIONS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def spectrum(name: str) -> tuple[float, float, float]:
    """(lambda_min, lambda_max, n lambda_min / sum_j c_j^2) of X'X / n for the rescaled, clipped training
    design the lasso sees (a diagnostic: computed from the data without noise, never released)."""
    spec, train, _ = rd.prepared(name)
    design = build_design(spec.formula, train, eval_env=patsy.EvalEnvironment.capture(0),
                          bounds=spec.bound_pairs())
    intercept = design.column_names.index("Intercept") if design.has_intercept else None
    scaling = PublicScaling.from_bounds(design.data_bounds(), intercept)
    bounds = scaling.transform_bounds(design.data_bounds())
    X, y = scaling.transform(design.X, design.y)
    X, _ = bounds.clip(X, y)
    n = X.shape[0]
    eig = np.linalg.eigvalsh(X.T @ X / n)
    c2 = float(np.sum(np.maximum(np.abs(bounds.column_lo), np.abs(bounds.column_hi)) ** 2))
    return float(eig[0]), float(eig[-1]), float(n * eig[0] / c2)


def median_error(name: str, eps: float, seeds: int, method: str, **options: Any) -> tuple[float, dict[str, float]]:
    """The median relative error of the headline over the seeds, and the medians of the lasso's N0, step and
    residual bound (NaN for adassp)."""
    spec, train, _ = rd.prepared(name)
    ref = rd.reference(name, "full")
    j = rd.headline_index(spec, ref)
    errs, info = [], []
    for seed in range(rd.SEED_BASE, rd.SEED_BASE + seeds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols(spec.formula, train, eps, rd.DELTA, method=method, bounds=spec.bound_pairs(),
                                 random_state=seed, **options)
        b = res.params.reindex(ref.names).to_numpy()
        errs.append(abs(b[j] - ref.params[j]) / abs(ref.params[j]))
        info.append([res.info.get(k, np.nan) for k in ("iterations", "step_size", "residual_bound")])
    return float(np.median(errs)), dict(zip(("iterations", "step_size", "residual_bound"),
                                            np.median(np.asarray(info, dtype=float), axis=0).tolist(), strict=True))


def model_iterations(n: int, d: int, eps: float, lam_min: float, fit: dict[str, float]) -> tuple[int, int, int]:
    """N0 of the default rule and of the two exact-curvature rules (module docstring) for the full-model fit
    (s_hat = d, T = c_x = 1 after the public rescaling, 85% of epsilon for Peeling), at the median released step
    and residual bound."""
    eta, R = fit["step_size"], fit["residual_bound"]
    multiplier, _ = peeling_noise_multiplier(d, 0.85 * eps, rd.DELTA, select=False)
    rho = min(1.0, -np.log1p(-eta)) if eta < 1 else 1.0
    c = 2.0 * eta * R * multiplier * np.sqrt(d) / n
    N = np.arange(1, n + 1, dtype=float)
    noise = c * N * np.sqrt(np.minimum(N, 1.0 / (2.0 * eta * lam_min)))
    weakest = np.exp(-eta * lam_min * N)
    both = np.minimum(np.minimum(1.0, 1.0 / (rho * N)), weakest)
    rule = np.minimum(1.0, 1.0 / (rho * N)) + c * N ** 1.5
    return int(N[np.argmin(rule)]), int(N[np.argmin(both + noise)]), int(N[np.argmin(weakest + noise)])


def rows(names: list[str], iterations: tuple[int, ...], seeds: int) -> list[str]:
    """One markdown row per (data set, epsilon)."""
    out = []
    for name in names:
        _, train, _ = rd.prepared(name)
        n, d = len(train), len(rd.reference(name, "full").names)
        lo, hi, z = spectrum(name)
        for eps in rd.EPSILONS:
            adassp, _ = median_error(name, eps, seeds, "adassp")
            default, fit = median_error(name, eps, seeds, "lasso", sparsity=d)
            rule, both, weakest = model_iterations(n, d, eps, lo, fit)
            fixed = {k: median_error(name, eps, seeds, "lasso", sparsity=d, iterations=k)[0]
                     for k in iterations if k <= n}
            best = min(fixed, key=fixed.__getitem__)
            ok = [k for k, v in fixed.items() if v <= 1.5 * adassp]
            cells = " ".join(f"**{k}: {v:.2f}**" if k == best else f"{k}: {v:.2f}" for k, v in fixed.items())
            out.append(f"| {name} | {n} | {d} | {lo:.1e} | {hi:.2f} | {z:.3f} | {eps:g} | {adassp:.2f} | "
                       f"{fit['iterations']:.0f}: {default:.2f} | {rule} | {both} | {weakest} | {cells} | "
                       f"{', '.join(map(str, ok)) or 'none'} |")
            print(out[-1], flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="", help="comma-separated names (default: all)")
    parser.add_argument("--iterations", default=",".join(map(str, ITERATIONS)))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", help="also write the markdown table here")
    args = parser.parse_args(argv)
    names = args.datasets.split(",") if args.datasets else [s.name for s in SPECS]
    iterations = tuple(int(k) for k in args.iterations.split(","))
    header = ["| data set | n | d | lambda_min | lambda_max | n lambda_min / sum c_j^2 | epsilon | adassp | "
              "default N0: lasso | N0 rule | N0 weakest + rule | N0 weakest only | fixed N0: lasso (best bold) | "
              "N0 within 1.5x adassp |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    print("\n".join(header), flush=True)
    table = header + rows(names, iterations, args.seeds)
    if args.out:
        Path(args.out).write_text("\n".join(table) + "\n")


if __name__ == "__main__":
    main()
