"""A 0/1 response stored as floats without declared bounds: what pgd's released response domain and intervals do.

A 0/1 indicator stored as floats (as ``astype(float)`` and CSV readers leave it) is not two-valued by public facts,
so, without bounds, pgd releases a clipping domain for it from a noisy histogram of the variances of pairs of rows
(``release_domain``: pgd's groups hold 2 rows) and fits it without the clip and interval rules of a rare outcome
(docs/choosing.md, "A rare outcome").  Simulation: x1, x2 standard normal, y = 1 where 0.8 x1 - 0.4 x2 plus a
logistic error exceeds its (1 - share)-quantile, stored as floats; ``y ~ x1 + x2`` fitted by ``dp_ols`` (default
method, no bounds; with ``--as-int`` y is stored as integers with bounds (0, 1), two-valued by public facts), delta
1e-6.  Per fit: the released response domain's upper end and lead (``release_domain``), whether the fit warned
``RoughResponseDomainWarning``, the slope of x1 against least squares on the same data (in its standard errors) and
whether the interval for it was given and covers least squares.  Per share, n and epsilon: fits warned, intervals
given, intervals covering, median |error| in standard errors and median width in least-squares widths.

Run from the repository root (one process)::

    python benchmarks/float_indicator.py --reps 10 --jsonl after.jsonl
    python benchmarks/float_indicator.py --reps 10 --constant pgd.ONE_VALUE_LEAD=9.0 --jsonl before.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
from real_data import constant_values, set_constants  # noqa: E402

import dpstats  # noqa: E402
import dpstats.methods.pgd as pgd  # noqa: E402
from dpstats.errors import DPStatsError, RoughResponseDomainWarning  # noqa: E402

SHARES, NS, EPSILONS = (0.01, 0.03, 0.1, 0.15, 0.2, 0.3, 0.5), (500, 3000, 10000), (0.5, 1.0, 3.0)


def data(n: int, share: float, seed: int) -> pd.DataFrame:
    """The simulated rows (module docstring)."""
    rng = np.random.default_rng(seed)
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    latent = 0.8 * x1 - 0.4 * x2 + rng.logistic(size=n)
    y = (latent > np.quantile(latent, 1.0 - share)).astype(float)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2})


def one_fit(n: int, share: float, eps: float, seed: int, as_int: bool) -> dict:
    """One record (module docstring); data seed 1000 + seed, noise seed 2000 + seed."""
    df = data(n, share, 1000 + seed)
    bounds = None
    if as_int:
        df["y"], bounds = df["y"].astype(int), {"y": (0, 1)}
    ols = smf.ols("y ~ x1 + x2", df).fit()
    b_ols, se = float(ols.params["x1"]), float(ols.bse["x1"])
    seen: dict[str, float] = {}
    installed = pgd.release_domain

    def recording(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = installed(*args, **kwargs)
        seen["y_hi"], seen["lead"] = out[0].y_hi, out[2]
        return out

    pgd.release_domain = recording  # type: ignore[assignment]
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = dpstats.dp_ols("y ~ x1 + x2", df, eps, 1e-6, bounds=bounds, random_state=2000 + seed)
    except DPStatsError as exc:
        return dict(n=n, share=share, eps=eps, seed=seed, refused=type(exc).__name__)
    finally:
        pgd.release_domain = installed  # type: ignore[assignment]
    b = float(res.params["x1"])
    lo, hi = (float(v) for v in res.conf_int().loc["x1"])
    given = bool(np.isfinite(lo) and np.isfinite(hi))
    return dict(n=n, share=share, eps=eps, seed=seed, y_hi=seen.get("y_hi"), lead=seen.get("lead"),
                rough=any(issubclass(w.category, RoughResponseDomainWarning) for w in caught),
                err_se=(b - b_ols) / se, given=given, covers=bool(lo <= b_ols <= hi) if given else None,
                width=(hi - lo) / (2 * 1.959964 * se) if given else None, reason=res.inference_reason or "")


def table(records: Sequence[dict]) -> str:
    """Per share, n and epsilon (module docstring)."""
    lines = ["| share | n | epsilon | fits | warned | intervals | covering | median abs error (se) | median width |",
             "|---|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["share"], r["n"], r["eps"]) for r in records})
    for share, n, eps in keys:
        cell = [r for r in records if (r["share"], r["n"], r["eps"]) == (share, n, eps) and "refused" not in r]
        if not cell:
            lines.append(f"| {share:g} | {n} | {eps:g} | refused | | | | | |")
            continue
        given = [r for r in cell if r["given"]]
        width = f"{np.median([r['width'] for r in given]):.3g}" if given else "-"
        lines.append(f"| {share:g} | {n} | {eps:g} | {len(cell)} | {sum(r['rough'] for r in cell)} | {len(given)} | "
                     f"{sum(bool(r['covers']) for r in given)} | {np.median([abs(r['err_se']) for r in cell]):.3g} | "
                     f"{width} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--shares", default=",".join(f"{s:g}" for s in SHARES))
    p.add_argument("--ns", default=",".join(map(str, NS)))
    p.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    p.add_argument("--as-int", action="store_true", help="store y as integers with bounds (0, 1)")
    p.add_argument("--constant", action="append", default=[], metavar="MODULE.NAME=VALUE",
                   help="a module constant of dpstats.methods set for the run, as in real_data.py (repeatable)")
    p.add_argument("--jsonl", help="write the records to this file")
    args = p.parse_args(argv)
    set_constants(constant_values(args.constant))
    records = [one_fit(n, share, eps, seed, args.as_int) for share in map(float, args.shares.split(","))
               for n in map(int, args.ns.split(",")) for eps in map(float, args.epsilons.split(","))
               for seed in range(args.reps)]
    if args.jsonl:
        Path(args.jsonl).write_text("".join(json.dumps(r) + "\n" for r in records))
    print(table(records))


if __name__ == "__main__":
    main()
