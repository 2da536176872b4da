"""Accuracy of the private R^2 (dpstats.inference.private_rsquared) against the R^2 of the released coefficients.

Run:  python benchmarks/private_rsquared.py [--seeds 1 2 3] [--out benchmarks/results/private_rsquared.md]

For each setting (n in 1000, 5000, 20000, 100000; d = 3 or 8 features; their correlation 0 or 0.8; noise sd
0.05 or 0.3; epsilon 0.5, 1, 4) and seed it simulates x clipped to [-1, 1], y = 0.1 + x^T beta + e clipped
to [-1, 1] (public bounds [-1, 1] for every column, so the public rescaling is the identity), fits ssp,
adassp and noisy_ols through dp_ols, and compares the private estimate (computed with the thresholds off)
with the R^2 of the released coefficients on the data (noisy_ols: labels truncated at its T), which the
estimate targets.  It reports, by the released noise-to-signal ratio and by the first-order noise sd the
estimate states, the mean error, the largest absolute error and the largest |error| / sd; and the same for
the fits the thresholds report (ratio <= RELIABILITY_THRESHOLD, sd <= RSQUARED_MAX_SD).  These numbers
chose the thresholds of dpstats.inference.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats
import dpstats.inference as inference
from dpstats.errors import DPStatsError

METHODS = ("ssp", "adassp", "noisy_ols")
MAX_SD = inference.RSQUARED_MAX_SD


def unthresholded(sums: inference.ReleasedSums, n: int, d: int) -> tuple[float, float]:
    """The estimate and its stated noise sd, with the thresholds of private_rsquared switched off."""
    inference.RSQUARED_MAX_SD = float("inf")
    try:
        estimate, _, _, sd = inference.private_rsquared(dataclasses.replace(sums, noise_to_signal=0.0), n=n, d=d,
                                                        intercept_index=0)
    finally:
        inference.RSQUARED_MAX_SD = MAX_SD
    return estimate, sd


def simulate(seed: int) -> pd.DataFrame:
    """One pass over the settings with generator ``seed``; one row per fit."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in (1000, 5000, 20000, 100000):
        for d in (3, 8):
            for rho in (0.0, 0.8):
                for noise in (0.05, 0.3):
                    for eps in (0.5, 1.0, 4.0):
                        z = rng.normal(size=(n, d))
                        z = np.sqrt(1 - rho) * z + np.sqrt(rho) * rng.normal(size=(n, 1))
                        x = np.clip(z / 3, -1, 1)
                        y = np.clip(0.1 + x @ (rng.uniform(-1, 1, d) / np.sqrt(d)) + rng.normal(0, noise, n), -1, 1)
                        df = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)]).assign(y=y)
                        formula = "y ~ " + " + ".join(df.columns[:-1])
                        design = np.column_stack([np.ones(n), x])
                        for method in METHODS:
                            try:
                                res = dpstats.dp_ols(formula, df, eps, 1e-6, method=method,
                                                     bounds={c: (-1, 1) for c in df.columns},
                                                     random_state=int(rng.integers(2**31)))
                            except DPStatsError:  # noisy_ols refuses where it cannot certify lambda_min
                                continue
                            cap = res.info.get("truncation", 1.0)  # noisy_ols truncates the labels at T
                            v = np.clip(y, -cap, cap)
                            truth = 1 - ((v - design @ res.params.to_numpy()) ** 2).sum() / ((v - v.mean()) ** 2).sum()
                            estimate, sd = unthresholded(res.info["released_sums"], n, d + 1)
                            rows.append(dict(seed=seed, n=n, d=d, rho=rho, noise=noise, epsilon=eps, method=method,
                                             ratio=res.info.get("noise_to_signal", 0.0), sd=sd, estimate=estimate,
                                             truth=truth, reported=not np.isnan(res.rsquared)))
    return pd.DataFrame(rows)


def summarise(frame: pd.DataFrame) -> str:
    frame = frame.assign(error=frame.estimate - frame.truth)
    frame = frame.assign(z=frame.error / frame.sd)
    agg = dict(fits=("error", "size"), mean_error=("error", "mean"), max_abs_error=("error", lambda s: s.abs().max()),
               max_abs_z=("z", lambda s: s.abs().max()))
    ratio_bins = pd.cut(frame.ratio, [-1, 0.1, 0.3, 0.6, 1, 10, np.inf],
                        labels=["<= 0.1", "(0.1, 0.3]", "(0.3, 0.6]", "(0.6, 1]", "(1, 10]", "> 10"])
    sd_bins = pd.cut(frame.sd, [0, 0.001, 0.003, 0.01, 0.03, 0.1, np.inf],
                     labels=["<= 0.001", "(0.001, 0.003]", "(0.003, 0.01]", "(0.01, 0.03]", "(0.03, 0.1]", "> 0.1"])
    by_ratio = frame.assign(ratio_bin=ratio_bins).groupby(["method", "ratio_bin"], observed=True)
    by_sd = frame.assign(sd_bin=sd_bins)[frame.ratio <= inference.RELIABILITY_THRESHOLD].groupby(
        ["method", "sd_bin"], observed=True)
    shown = frame[frame.reported]
    lines = ["# Private R^2: error against the R^2 of the released coefficients", "",
             "`python benchmarks/private_rsquared.py` (module docstring: the simulation).", "",
             "## By the released noise-to-signal ratio (all fits)", "",
             by_ratio.agg(**agg).round(4).to_markdown(), "",
             f"## By the stated noise sd (fits with ratio <= {inference.RELIABILITY_THRESHOLD})", "",
             by_sd.agg(**agg).round(4).to_markdown(), "",
             f"## Reported fits (ratio <= {inference.RELIABILITY_THRESHOLD} and sd <= {inference.RSQUARED_MAX_SD})", "",
             f"{len(shown)} of {len(frame)} fits; largest |error| {shown.error.abs().max():.4f}, largest |error| / sd "
             f"{shown.z.abs().max():.2f}, mean error {shown.error.mean():.5f}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", type=Path, help="write the summary (Markdown) here")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    frame = pd.concat([simulate(s) for s in args.seeds], ignore_index=True)
    text = summarise(frame) + f"\n({time.perf_counter() - start:.0f} s, seeds {args.seeds})\n"
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
