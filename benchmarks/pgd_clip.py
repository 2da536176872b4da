"""pgd's clip rule on the real-data benchmark: the headline error and the interval under several rules.

Run:  python benchmarks/pgd_clip.py [--rules 0.875@0.3,0.875@0.2] [--epsilons 1,3] [--seeds 12]
                                    [--datasets a,b] [--jobs 2] [--jsonl FILE] [--summarise FILE[.gz]]

A rule ``k0@a`` is the clip rule's multiple k = k0 (n mu / 250)^a above n mu = 250 and k0 (n mu / 250)^0.3
below (``pgd.clip_rule``; the quantile stays the installed one).  For each data set of
``benchmarks/real_data_specs.py`` (its full model, declared bounds), each epsilon and each noise seed, it fits
``dp_ols(method="pgd")`` under each rule, the same seed for every rule (paired noise), and records the headline
coefficient's relative error against OLS on the same training rows, its sign, and whether the 95% interval covers
the OLS estimate and its width over the classical interval's.  The summary prints, per epsilon and rule, the
median relative error, the sign share, the coverage and the median width, pooled over data sets, and per data set
the median error.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import warnings
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import real_data as rd  # noqa: E402
from real_data_specs import SPECS  # noqa: E402

import dpstats  # noqa: E402
import dpstats.methods.pgd as pgd  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402

SEED0 = 3000


def parse_rule(text: str) -> tuple[float, float]:
    """``"k0@a"`` -> (k0, a); ``"k0"`` keeps the installed exponent above n mu = 250."""
    k0, _, a = text.partition("@")
    return float(k0), float(a) if a else pgd.CLIP_EXPONENTS[1]


def rule_label(record: dict) -> str:
    """The rule of a record, ``k0@a`` (records of the first sweep hold a factor of the multiple 0.875 at the
    exponent 0.3)."""
    if "multiple" in record:
        return f"{record['multiple']:g}@{record['exponent']:g}"
    return f"{0.875 * record['factor']:.3g}@0.3"


def fits(name: str, eps: float, rules: Sequence[tuple[float, float]], seeds: int) -> list[dict]:
    """One record per (rule, seed) of pgd on data set ``name`` at ``eps``."""
    spec, train, _ = rd.prepared(name)
    ref = rd.reference(name, "full")
    h = rd.headline_index(spec, ref)
    installed = pgd.clip_rule
    out = []
    try:
        for k0, a in rules:
            pgd.clip_rule = lambda n_mu, *rest, k0=k0, a=a: (installed(n_mu, *rest)[0], k0 * (n_mu / 250.0) ** (  # type: ignore
                a if n_mu >= 250.0 else pgd.CLIP_EXPONENTS[0]))
            for seed in range(SEED0, SEED0 + seeds):
                base = dict(set=name, eps=eps, multiple=k0, exponent=a, seed=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        res = dpstats.dp_ols(rd.model_formula(spec, "full"), train, eps, rd.DELTA, method="pgd",
                                             bounds=spec.bound_pairs(), random_state=seed)
                    except DPStatsError as exc:
                        out.append(dict(base, refused=type(exc).__name__))
                        continue
                b = float(res.params.reindex(ref.names).to_numpy()[h])
                lo, hi = (float(v) for v in res.conf_int().loc[ref.names[h]])
                ols, se = float(ref.params[h]), float(ref.bse[h])
                out.append(dict(base, n_mu=float(res.info["n_mu"]), rel_err=abs(b - ols) / abs(ols),
                                sign=bool(np.sign(b) == np.sign(ols)), covers=bool(lo <= ols <= hi),
                                width=(hi - lo) / (2 * 1.959964 * se)))
    finally:
        pgd.clip_rule = installed
    return out


def _fits_job(job: tuple[str, float, list[tuple[float, float]], int]) -> list[dict]:
    return fits(*job)


def summarise(records: list[dict]) -> str:
    """Markdown tables: pooled per (epsilon, factor), then the median error per data set."""
    ok = [dict(r, rule=rule_label(r)) for r in records if "rel_err" in r]
    rules = sorted({r["rule"] for r in ok}, key=lambda t: tuple(float(x) for x in t.split("@")))
    lines = ["| epsilon | rule k0@a | fits | median rel. error | sign right | covers OLS | median width / OLS |",
             "|---|---|---|---|---|---|---|"]
    for eps in sorted({r["eps"] for r in ok}):
        for rule in rules:
            rr = [r for r in ok if r["eps"] == eps and r["rule"] == rule]
            if not rr:
                continue
            lines.append(f"| {eps:g} | {rule} | {len(rr)} | {np.median([r['rel_err'] for r in rr]):.3f} | "
                         f"{np.mean([r['sign'] for r in rr]):.0%} | {np.mean([r['covers'] for r in rr]):.0%} | "
                         f"{np.median([r['width'] for r in rr]):.1f} |")
    cells: dict[tuple, list[float]] = defaultdict(list)
    for r in ok:
        cells[(r["set"], r["eps"], r["rule"])].append(r["rel_err"])
    lines += ["", "| data set | epsilon | n mu | " + " | ".join(rules) + " |",
              "|---|---|---|" + "---|" * len(rules)]
    n_mu = {(r["set"], r["eps"]): r["n_mu"] for r in ok}
    for key in sorted(n_mu, key=lambda k: (k[1], n_mu[k])):
        meds = [np.median(cells[(*key, rule)]) if cells[(*key, rule)] else float("nan") for rule in rules]
        lines.append(f"| {key[0]} | {key[1]:g} | {n_mu[key]:.0f} | " + " | ".join(f"{m:.3f}" for m in meds) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="0.875@0.3,0.875@0.2", help="comma-separated k0@a")
    p.add_argument("--epsilons", default="1,3")
    p.add_argument("--seeds", type=int, default=12)
    p.add_argument("--datasets", help="comma-separated names (default: all)")
    p.add_argument("--jobs", type=int, default=1, help="processes (one (data set, epsilon) per task)")
    p.add_argument("--jsonl", help="append the records to this file")
    p.add_argument("--summarise", help="only summarise the records of this file")
    args = p.parse_args(argv)
    if args.summarise:
        opener = gzip.open if args.summarise.endswith(".gz") else open
        with opener(args.summarise, "rt") as f:
            print(summarise([json.loads(line) for line in f]))
        return
    names = args.datasets.split(",") if args.datasets else [s.name for s in SPECS]
    rules = [parse_rule(r) for r in args.rules.split(",")]
    jobs = [(name, float(e), rules, args.seeds) for e in args.epsilons.split(",") for name in names]
    records: list[dict] = []
    out = open(args.jsonl, "a") if args.jsonl else None
    try:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for recs in pool.map(_fits_job, jobs):
                records += recs
                if out:
                    out.writelines(json.dumps(rec) + "\n" for rec in recs)
                    out.flush()
    finally:
        if out:
            out.close()
    print(summarise(records))


if __name__ == "__main__":
    main()
