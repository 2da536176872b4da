"""pgd on a factor with rare levels: each coefficient group's error and coverage of the OLS estimate.

Run:  python benchmarks/rare_levels.py [--ns 1000,3000,10000] [--ds 5,20] [--epsilons 0.5,1,3] [--seeds 10]
                                       [--method pgd] [--jsonl FILE]
      python benchmarks/rare_levels.py --ns 10000 --ds 5 --epsilons 1 --seeds 100 --data-seed 1 --jsonl FILE
      python benchmarks/rare_levels.py --held-out SET,SET,... [--epsilons 0.5,1,3] [--seeds 5] --jsonl FILE
      python benchmarks/rare_levels.py --summarise BEFORE.jsonl,AFTER.jsonl

The regressions are ``auto_large_n.simulated(n, d, True, False, seed)``: y on d uniform predictors on [-1, 1] and a
factor of five public levels a-e with shares 0.90 / 0.08 / 0.015 / 0.004 / 0.001 (effects 0, 0.5, -0.5, 1, -1), the
declared bounds the true ranges; data seed and noise seed both ``seed`` (0 to seeds - 1), or the data of
``--data-seed`` for every noise seed.  For each fit and coefficient: the absolute error against statsmodels OLS on
the same rows, whether the 95% interval was reported and covers the OLS estimate.  The summary gives, per (n, d,
epsilon) and coefficient group -- the numeric slopes, the common level b (8%), the rare levels c, d, e (1.5%, 0.4%,
0.1%) -- the median absolute error, the share of intervals reported and the share of reported intervals that cover
OLS; with two files, side by side (the first file's figures, then the second's).

With ``--held-out`` the regressions are ``benchmarks/held_out.py``'s (its formulas, bounds, levels, missing-value
rules and noise seeds, ``method="auto"`` unless ``--method``), and every coefficient is recorded, grouped as a rare
two-valued column (a factor's dummy or a 0/1 column whose rarer value holds under ``RARE_SHARE`` of the rows; read
from the data by the benchmark, never by the fit), another two-valued column, or numeric; its error is in units of
its OLS standard error.  Results: benchmarks/results/rare_levels.md; docs/choosing.md, "Rare factor levels on
narrow designs".
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import auto_large_n  # noqa: E402

from dpstats.errors import DPStatsError  # noqa: E402

#: coefficient name -> group
GROUPS = {"C(g)[T.b]": "common level", "C(g)[T.c]": "rare level", "C(g)[T.d]": "rare level",
          "C(g)[T.e]": "rare level"}


#: a two-valued design column whose rarer value holds fewer than this share of the rows is a rare level (--held-out)
RARE_SHARE = 0.05


def group(name: str) -> str:
    """The coefficient's group: the intercept, a numeric slope, the common level or a rare level."""
    return "intercept" if name == "Intercept" else GROUPS.get(name, "numeric")


def fits(n: int, d: int, epsilons: Sequence[float], seeds: int, method: str,
         data_seed: int | None = None) -> Iterable[dict]:
    """One record per (epsilon, seed): each coefficient's error against OLS and its interval's coverage (the data
    drawn with ``data_seed`` for every noise seed where it is given, else with the noise seed)."""
    for seed in range(seeds):
        formula, df, _, bounds, levels = auto_large_n.simulated(n, d, True, False,
                                                                seed if data_seed is None else data_seed)
        ols = smf.ols(formula, df).fit()
        for eps in epsilons:
            try:
                res = auto_large_n.quiet_fit(formula, df, bounds, levels, method, eps, seed)
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


def column_groups(exog: np.ndarray, names: Sequence[str]) -> dict[str, str]:
    """Each design column's group (--held-out): "rare level", "two-valued" or "numeric" (the intercept apart)."""
    groups = {}
    for j, name in enumerate(names):
        values = np.unique(exog[:, j])
        share = float(np.mean(exog[:, j] == values.max())) if values.size == 2 else None
        groups[name] = ("intercept" if name == "Intercept" else "numeric" if share is None
                        else "rare level" if min(share, 1.0 - share) < RARE_SHARE else "two-valued")
    return groups


def declared_order(df: pd.DataFrame, levels: dict[str, tuple]) -> pd.DataFrame:
    """``df`` with each factor's categories in their declared order, so that OLS takes the reference level the
    private fit takes (the first declared) and their dummies compare like with like."""
    ordered = {var: pd.Categorical(df[var], categories=list(values)) for var, values in levels.items()
               if var in df.columns}
    return df.assign(**ordered)


def held_out_fits(name: str, epsilons: Sequence[float], seeds: int, method: str) -> Iterable[dict]:
    """One record per (epsilon, seed) of a held-out regression: every coefficient's error in OLS standard errors,
    its group, and its interval's coverage of OLS."""
    import held_out
    _, formula, _, bounds = held_out.SPECS[name]
    df = held_out.frame(name)
    ols = held_out.least_squares(formula, declared_order(df, held_out.LEVELS.get(name, {})))
    groups = column_groups(np.asarray(ols.model.exog), ols.model.exog_names)
    rule = {"missing": held_out.MISSING[name]} if name in held_out.MISSING else {}
    for eps in epsilons:
        for seed in range(held_out.SEED0, held_out.SEED0 + seeds):
            try:
                res = auto_large_n.quiet_fit(formula, df, bounds, held_out.LEVELS.get(name), method, eps, seed, **rule)
            except DPStatsError as exc:
                yield dict(set=name, eps=eps, seed=seed, refused=type(exc).__name__)
                continue
            ci = res.conf_int()
            coefs = []
            for coef in ols.params.index:
                lo, hi = (float(v) for v in ci.loc[coef])
                reported = bool(np.isfinite(lo) and np.isfinite(hi))
                ref, se = float(ols.params[coef]), float(ols.bse[coef])
                coefs.append(dict(name=coef, group=groups[coef], err=abs(float(res.params[coef]) - ref) / se,
                                  reported=reported, covers=bool(lo <= ref <= hi) if reported else None))
            yield dict(set=name, n=int(ols.nobs), d=len(groups), eps=eps, seed=seed, chose=res.method, coefs=coefs)


def held_out_summary(files: Sequence[str]) -> str:
    """Per epsilon and group, pooled over the held-out sets (and the rare levels per set): median error in OLS
    standard errors / % reported / % covering, one figure per file."""
    sets = [records(f) for f in files]
    epsilons = sorted({r["eps"] for s in sets for r in s})
    groups = ("numeric", "two-valued", "rare level")
    lines = ["| epsilon | " + " | ".join(groups) + " |", "|" + "---|" * (1 + len(groups))]
    for eps in epsilons:
        cells = [[r for r in s if r["eps"] == eps] for s in sets]
        lines.append(f"| {eps:g} | " + " | ".join(" ; ".join(cell_summary(c, g) for c in cells) for g in groups)
                     + " |")
    lines += ["", "| data set | epsilon | rare levels |", "|---|---|---|"]
    for name in sorted({r["set"] for s in sets for r in s}):
        for eps in epsilons:
            cells = [[r for r in s if r["set"] == name and r["eps"] == eps] for s in sets]
            if any(c["group"] == "rare level" for r in cells[0] if "coefs" in r for c in r["coefs"]):
                lines.append(f"| {name} | {eps:g} | " + " ; ".join(cell_summary(c, "rare level") for c in cells)
                             + " |")
    lines.append("")
    lines.append("Each cell: median absolute error in OLS standard errors / % of intervals reported / % of reported "
                 "intervals covering OLS, one figure per file (" + ", ".join(files) + ").")
    return "\n".join(lines)


def cell_summary(records: list[dict], grp: str) -> str:
    """'median error / reported % / covers %' of one coefficient group over records."""
    coefs = [c for r in records if "coefs" in r for c in r["coefs"] if c["group"] == grp]
    if not coefs:
        return "-"
    reported = [c for c in coefs if c["reported"]]
    covers = f"{100 * np.mean([c['covers'] for c in reported]):.0f}" if reported else "-"
    return f"{np.median([c['err'] for c in coefs]):.3g} / {100 * len(reported) / len(coefs):.0f} / {covers}"


def records(path: str) -> list[dict]:
    """The records of a file written by ``--jsonl`` (gzip-compressed where its name ends in .gz)."""
    text = gzip.decompress(Path(path).read_bytes()).decode() if path.endswith(".gz") else Path(path).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def summarise(files: Sequence[str]) -> str:
    """The table (module docstring) of one or more record files."""
    sets = [records(f) for f in files]
    keys = sorted({(r["n"], r["d"], r["eps"]) for s in sets for r in s})
    groups = ("numeric", "common level", "rare level")
    head = "| n | d | epsilon | fits | " + " | ".join(groups) + " |"
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
    parser.add_argument("--data-seed", type=int, help="one data set (this seed) for every noise seed")
    parser.add_argument("--held-out", help="held_out.py's regressions (comma-separated) instead of simulations")
    parser.add_argument("--summarise", help="only summarise these record files (comma-separated)")
    args = parser.parse_args(argv)
    report = held_out_summary if args.held_out else summarise
    if args.summarise:
        print(report(args.summarise.split(",")))
        return
    epsilons = [float(e) for e in args.epsilons.split(",")]
    if args.held_out:
        runs = [held_out_fits(name, epsilons, args.seeds, args.method) for name in args.held_out.split(",")]
    else:
        runs = [fits(int(n), int(d), epsilons, args.seeds, args.method, args.data_seed)
                for n in args.ns.split(",") for d in args.ds.split(",")]
    out = open(args.jsonl, "w") if args.jsonl else None
    for run in runs:
        for rec in run:
            if out is not None:
                out.write(json.dumps(rec) + "\n")
                out.flush()
    if out is not None:
        out.close()
        print(report([args.jsonl]))


if __name__ == "__main__":
    main()
