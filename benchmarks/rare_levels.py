"""pgd on a factor with rare levels: each coefficient group's error and coverage of the OLS estimate.

Run:  python benchmarks/rare_levels.py [--ns 1000,3000,10000] [--ds 5,20] [--epsilons 0.5,1,3] [--seeds 10]
                                       [--method pgd] [--jsonl FILE]
      python benchmarks/rare_levels.py --summarise BEFORE.jsonl,AFTER.jsonl

The regressions are ``auto_large_n.simulated(n, d, True, False, seed)``: y on d uniform predictors on [-1, 1] and a
factor of five public levels a-e with shares 0.90 / 0.08 / 0.015 / 0.004 / 0.001 (effects 0, 0.5, -0.5, 1, -1), the
declared bounds the true ranges; data seed and noise seed both ``seed`` (0 to seeds - 1).  For each fit and
coefficient: the absolute error against statsmodels OLS on the same rows, whether the 95% interval was reported and
covers the OLS estimate.  The summary gives, per (n, d, epsilon) and coefficient group -- the numeric slopes, the
common level b (8%), the rare levels c, d, e (1.5%, 0.4%, 0.1%) -- the median absolute error, the share of
intervals reported and the share of reported intervals that cover OLS; with two files, side by side (the first
file's figures, then the second's).  Results: benchmarks/results/rare_levels.md; docs/choosing.md, "Rare factor
levels on narrow designs".
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent))
import auto_large_n  # noqa: E402

import dpstats  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402

DELTA = 1e-6
#: coefficient name -> group
GROUPS = {"C(g)[T.b]": "common level", "C(g)[T.c]": "rare level", "C(g)[T.d]": "rare level",
          "C(g)[T.e]": "rare level"}


def group(name: str) -> str:
    """The coefficient's group: the intercept, a numeric slope, the common level or a rare level."""
    return "intercept" if name == "Intercept" else GROUPS.get(name, "numeric")


def fits(n: int, d: int, epsilons: Sequence[float], seeds: int, method: str) -> Iterable[dict]:
    """One record per (epsilon, seed): each coefficient's error against OLS and its interval's coverage."""
    for seed in range(seeds):
        formula, df, _, bounds, levels = auto_large_n.simulated(n, d, True, False, seed)
        ols = smf.ols(formula, df).fit()
        for eps in epsilons:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res = dpstats.dp_ols(formula, df, eps, DELTA, method=method, bounds=bounds, levels=levels,
                                         random_state=seed)
                except DPStatsError as exc:
                    yield dict(n=n, d=d, eps=eps, seed=seed, refused=type(exc).__name__)
                    continue
            ci = res.conf_int().reindex(ols.params.index)
            b = res.params.reindex(ols.params.index)
            coefs = []
            for name in ols.params.index:
                lo, hi = (float(v) for v in ci.loc[name])
                reported = bool(np.isfinite(lo) and np.isfinite(hi))
                ref = float(ols.params[name])
                coefs.append(dict(name=name, group=group(name), err=abs(float(b[name]) - ref),
                                  se=float(ols.bse[name]), reported=reported,
                                  covers=bool(lo <= ref <= hi) if reported else None))
            yield dict(n=n, d=d, eps=eps, seed=seed, chose=res.method, coefs=coefs)


def cell_summary(records: list[dict], grp: str) -> str:
    """'median error / reported % / covers %' of one coefficient group over records."""
    coefs = [c for r in records if "coefs" in r for c in r["coefs"] if c["group"] == grp]
    if not coefs:
        return "-"
    reported = [c for c in coefs if c["reported"]]
    covers = f"{100 * np.mean([c['covers'] for c in reported]):.0f}" if reported else "-"
    return f"{np.median([c['err'] for c in coefs]):.3g} / {100 * len(reported) / len(coefs):.0f} / {covers}"


def summarise(files: Sequence[str]) -> str:
    """The table (module docstring) of one or more record files."""
    sets = [[json.loads(line) for line in Path(f).read_text().splitlines() if line.strip()] for f in files]
    keys = sorted({(r["n"], r["d"], r["eps"]) for s in sets for r in s})
    groups = ("numeric", "common level", "rare level")
    head = "| n | d | epsilon | fits | " + " | ".join(f"{g} ({', '.join(Path(f).stem for f in files)})"
                                                    for g in groups) + " |"
    lines = [head, "|" + "---|" * (4 + len(groups))]
    for n, d, eps in keys:
        cells = [[r for r in s if (r["n"], r["d"], r["eps"]) == (n, d, eps)] for s in sets]
        row = [" ; ".join(cell_summary(c, g) for c in cells) for g in groups]
        lines.append(f"| {n} | {d} | {eps:g} | {len(cells[0])} | " + " | ".join(row) + " |")
    lines.append("")
    lines.append("Each cell: median absolute error against OLS / % of intervals reported / % of reported intervals "
                 "covering OLS, one figure per file (" + ", ".join(files) + ").")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ns", default="1000,3000,10000")
    parser.add_argument("--ds", default="5,20")
    parser.add_argument("--epsilons", default="0.5,1,3")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--method", default="pgd")
    parser.add_argument("--jsonl", help="write the records to this file")
    parser.add_argument("--summarise", help="only summarise these record files (comma-separated)")
    args = parser.parse_args(argv)
    if args.summarise:
        print(summarise(args.summarise.split(",")))
        return
    epsilons = [float(e) for e in args.epsilons.split(",")]
    out = open(args.jsonl, "w") if args.jsonl else None
    records = []
    for n in (int(v) for v in args.ns.split(",")):
        for d in (int(v) for v in args.ds.split(",")):
            for rec in fits(n, d, epsilons, args.seeds, args.method):
                records.append(rec)
                if out is not None:
                    out.write(json.dumps(rec) + "\n")
                    out.flush()
    if out is not None:
        out.close()
        print(summarise([args.jsonl]))


if __name__ == "__main__":
    main()
