"""Reproduce Liu et al. (2023)'s synthetic experiment: error against n and kappa, clean and corrupted labels.

Run:  python benchmarks/robgd_paper.py [--reps 5] [--quick] [--out benchmarks/results/robgd_paper.md]

Setting (Liu et al., Sec. 7; :mod:`dpstats.simulate`): w* uniform on the unit
sphere, x ~ N(0, diag(kappa, 1, ..., 1)) projected onto the unit sphere,
z ~ U[-sigma, sigma]; epsilon = 1, delta = min(1e-6, n^-2); --reps
repetitions (the paper: 5), mean error ||w - w*||_Sigma (Sigma = E[x x^T] of
the projected covariates) and its standard error.

Methods: robgd, robgd* (best_iterate), ambssgd, ssp, adassp (private) and
ols (non-private).  Public knowledge used: every covariate lies in [-1, 1]
and ||x|| = 1 (so robgd/ambssgd take covariate_tail=1 and ambssgd trace=1,
the paper's "Tr(Sigma) known", and both run the paper's algorithm without the
package's private preconditioning: standardize=False, implied by trace=); ssp/adassp get per-column bounds (-1, 1) and
the label bound |y| <= label_bound of the simulation (1 + sigma on clean
data; 5 (1 + sigma) when 5% of the labels are corrupted to -5(1+sigma) sign(x^T w*)).
robgd estimates Tr(Sigma) privately (the paper's experiments gave it the truth).

Methods are called through their fit functions on numpy arrays (the formula
layer is irrelevant here and costs seconds at n = 1e6); the fits are the same
as through dp_ols.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.methods.registry import get_method
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.simulate import SimulatedData, robust_regression_data

METHODS = ("robgd", "robgd*", "ambssgd", "ssp", "adassp", "ols")


def run_method(name: str, sim: SimulatedData, epsilon: float, seed: int) -> float:
    X, y = sim.X, sim.y
    n, d = X.shape
    rng = np.random.default_rng(seed)
    delta = min(1e-6, n ** -2.0)
    if name == "ols":
        w = get_method("ols").fit_arrays(X, y, ledger=PrivacyLedger(math.inf, 0.0), rng=rng).params
        return sim.error(w)
    ledger = PrivacyLedger(epsilon, delta)
    if name in ("ssp", "adassp"):
        lb = sim.label_bound
        bounds = DataBounds(np.full(d, -1.0), np.full(d, 1.0), -lb, lb)
        w = get_method(name).fit_arrays(X, y, ledger=ledger, rng=rng, bounds=bounds).params
    elif name == "ambssgd":
        w = get_method(name).fit_arrays(X, y, ledger=ledger, rng=rng, trace=1.0, covariate_tail=1.0).params
    else:
        w = get_method("robgd").fit_arrays(X, y, ledger=ledger, rng=rng, covariate_tail=1.0,
                                           best_iterate=name == "robgd*", standardize=False).params
    assert ledger.spent[0] <= epsilon * (1 + 1e-9)
    return sim.error(w)


def grid(label: str, settings: list[dict], reps: int, epsilon: float) -> list[dict]:
    rows = []
    for s in settings:
        errs: dict[str, list[float]] = {m: [] for m in METHODS}
        t0 = time.perf_counter()
        for r in range(reps):
            sim = robust_regression_data(s["n"], s["d"], kappa=s["kappa"], sigma=s["sigma"],
                                         corruption=s["corruption"],
                                         corrupt_scale=None if s["corruption"] else 1.0 + s["sigma"],
                                         random_state=1000 * r + 7)
            for m in METHODS:
                errs[m].append(run_method(m, sim, epsilon, seed=r))
        row = dict(s, experiment=label, seconds=time.perf_counter() - t0)
        for m in METHODS:
            e = np.asarray(errs[m])
            row[m] = float(e.mean())
            row[m + "_se"] = float(e.std(ddof=1) / math.sqrt(len(e))) if len(e) > 1 else math.nan
        rows.append(row)
        print(label, {k: (round(v, 5) if isinstance(v, float) else v) for k, v in row.items()
                      if not k.endswith("_se")}, flush=True)
    return rows


def table(rows: list[dict], x: str) -> str:
    head = f"| {x} | " + " | ".join(METHODS) + " |"
    sep = "|" + "---|" * (len(METHODS) + 1)
    body = []
    for r in rows:
        cells = [f"{r[m]:.4g} ± {r[m + '_se']:.1g}" for m in METHODS]
        body.append(f"| {r[x]:g} | " + " | ".join(cells) + " |")
    return "\n".join([head, sep, *body])


def plot(rows: list[dict], x: str, path: str, title: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [r[x] for r in rows]
    for m in METHODS:
        ax.errorbar(xs, [r[m] for r in rows], yerr=[r[m + "_se"] for r in rows], marker="o", capsize=2, label=m,
                    linestyle="--" if m == "ols" else "-")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(r"$\|w - w^*\|_\Sigma$")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a small grid (n <= 1e5) for a smoke run")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--out", default="benchmarks/results/robgd_paper.md")
    ap.add_argument("--figdir", default="benchmarks/results")
    args = ap.parse_args()
    d, sigma, kappa0, n0 = 10, 0.1, 10.0, 100_000
    ns = [10_000, 30_000, 100_000] if args.quick else [10_000, 30_000, 100_000, 300_000, 1_000_000]
    kappas = [1.0, 10.0, 100.0] if args.quick else [1.0, 3.0, 10.0, 30.0, 100.0]
    base = dict(d=d, sigma=sigma, corruption=0.0)
    t0 = time.perf_counter()
    vs_n = grid("vs n", [dict(base, n=n, kappa=kappa0) for n in ns], args.reps, args.epsilon)
    vs_k = grid("vs kappa", [dict(base, n=n0, kappa=k) for k in kappas], args.reps, args.epsilon)
    bad = grid("corrupted, vs n", [dict(base, n=n, kappa=kappa0, corruption=0.05) for n in ns], args.reps,
               args.epsilon)
    total = time.perf_counter() - t0
    plot(vs_n, "n", f"{args.figdir}/robgd_vs_n.png",
         f"d={d}, kappa={kappa0:g}, sigma={sigma}, eps={args.epsilon}, delta=min(1e-6, n^-2)")
    plot(vs_k, "kappa", f"{args.figdir}/robgd_vs_kappa.png",
         f"d={d}, n={n0}, sigma={sigma}, eps={args.epsilon}, delta=min(1e-6, n^-2)")
    plot(bad, "n", f"{args.figdir}/robgd_corrupted.png",
         f"5% labels corrupted; d={d}, kappa={kappa0:g}, sigma={sigma}, eps={args.epsilon}")
    cmd = "python benchmarks/robgd_paper.py" + (" --quick" if args.quick else "") + f" --reps {args.reps}"
    with open(args.out, "w") as fh:
        fh.write(f"Command: `{cmd}` ({total:.0f} s on this machine)\n\n"
                 f"Mean ||w - w*||_Sigma ± standard error over {args.reps} repetitions; epsilon={args.epsilon}, "
                 "delta=min(1e-6, n^-2).\n\n")
        fh.write(f"### Against n (d={d}, kappa={kappa0:g}, sigma={sigma})\n\n{table(vs_n, 'n')}\n\n")
        fh.write(f"### Against kappa (d={d}, n={n0}, sigma={sigma})\n\n{table(vs_k, 'kappa')}\n\n")
        fh.write(f"### 5% corrupted labels, against n (d={d}, kappa={kappa0:g}, sigma={sigma})\n\n"
                 f"{table(bad, 'n')}\n")
    print(f"wrote {args.out} in {total:.0f} s")


if __name__ == "__main__":
    main()
