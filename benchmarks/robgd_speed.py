"""Speed of dp_ols(method="robgd") against statsmodels OLS at n = 1e6, d = 20, side by side in one run.

Run:  python benchmarks/robgd_speed.py [--n 1000000] [--d 20] [--repeats 3] [--out benchmarks/results/robgd_speed.md]

On one DataFrame from :func:`dpstats.simulate.robust_regression_data` (x on
the unit sphere, no intercept), best of --repeats wall-clock times of

  statsmodels        smf.ols(formula, df).fit()
  dp_ols robgd       the whole private call (validation, patsy design, split, estimates, T rounds, report)
  robgd fit only     the method's fit function on the numpy arrays (no formula layer)
  dp_ols ambssgd     the baseline, for reference

for kappa = 1 (T about 10 rounds) and kappa = 10 (T about 70 rounds): the
round count grows with the (privately estimated) condition number, the
per-round cost is one matrix-vector product pair over S_b plus one product
over S_a for the distance estimate.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import statsmodels
import statsmodels.formula.api as smf

import dpstats
from dpstats.methods.registry import get_method
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.simulate import robust_regression_data


def best_of(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default="benchmarks/results/robgd_speed.md")
    args = ap.parse_args()
    n, d = args.n, args.d
    delta = min(1e-6, n ** -2.0)
    lines = [f"Command: `python benchmarks/robgd_speed.py --n {n} --d {d} --repeats {args.repeats}`",
             f"Machine: {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
             f"numpy {np.__version__}, statsmodels {statsmodels.__version__}; best of {args.repeats}",
             "", "| kappa | statsmodels OLS (s) | dp_ols robgd (s) | ratio | robgd fit only (s) | T rounds "
             "| dp_ols ambssgd (s) | error robgd | error OLS |", "|---|---|---|---|---|---|---|---|---|"]
    for kappa in (1.0, 10.0):
        sim = robust_regression_data(n, d, kappa=kappa, sigma=0.1, random_state=0)
        df, formula = sim.frame, sim.formula
        t_sm, sm = best_of(lambda f=formula, df=df: smf.ols(f, df).fit(), args.repeats)
        t_rob, rob = best_of(lambda f=formula, df=df: dpstats.dp_ols(f, df, epsilon=1.0, delta=delta, method="robgd",
                                                                     covariate_tail=1.0, random_state=0),
                             args.repeats)
        X, y = sim.X, sim.y
        t_fit, _ = best_of(lambda X=X, y=y: get_method("robgd").fit_arrays(X, y, ledger=PrivacyLedger(1.0, delta),
                                                                           rng=np.random.default_rng(0),
                                                                           covariate_tail=1.0), args.repeats)
        t_amb, _ = best_of(lambda f=formula, df=df: dpstats.dp_ols(f, df, epsilon=1.0, delta=delta, method="ambssgd",
                                                                   covariate_tail=1.0, trace=1.0, random_state=0),
                           args.repeats)
        row = (f"| {kappa:g} | {t_sm:.2f} | {t_rob:.2f} | {t_rob / t_sm:.2f} | {t_fit:.2f} | {rob.info['rounds']} "
               f"| {t_amb:.2f} | {sim.error(rob.params):.2e} | {sim.error(sm.params.to_numpy()):.2e} |")
        print(row, flush=True)
        lines.append(row)
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
