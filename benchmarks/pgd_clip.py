"""pgd's clip multiple on the real-data benchmark: the headline error and the interval at several multiples.

Run:  python benchmarks/pgd_clip.py [--factors 0.5,0.7,1,1.4,2] [--epsilons 1,3] [--seeds 12]
                                    [--datasets a,b] [--jsonl FILE] [--summarise FILE[.gz]]

For each data set of ``benchmarks/real_data_specs.py`` (its full model, declared bounds), each epsilon and each
noise seed, it fits ``dp_ols(method="pgd")`` with the clip rule's multiple k (``pgd.clip_rule``) scaled by each
factor, the same seed for every factor (paired noise), and records the headline coefficient's relative error
against OLS on the same training rows, its sign, and whether the 95% interval covers the OLS estimate and its
width over the classical interval's.  The factors are relative to the multiple installed (``pgd.CLIP_MULTIPLE``),
so factor 1 is the package as it is.  The summary prints, per epsilon and factor, the median relative error, the
sign share, the coverage and the median width, pooled over data sets, and per data set the median error.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
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


def fits(name: str, eps: float, factors: Sequence[float], seeds: int) -> Iterable[dict]:
    """One record per (factor, seed) of pgd on data set ``name`` at ``eps``."""
    spec, train, _ = rd.prepared(name)
    ref = rd.reference(name, "full")
    h = rd.headline_index(spec, ref)
    installed = pgd.clip_rule
    try:
        for factor in factors:
            pgd.clip_rule = lambda n_mu, f=factor: (installed(n_mu)[0], f * installed(n_mu)[1])  # type: ignore
            for seed in range(SEED0, SEED0 + seeds):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        res = dpstats.dp_ols(rd.model_formula(spec, "full"), train, eps, rd.DELTA, method="pgd",
                                             bounds=spec.bound_pairs(), random_state=seed)
                    except DPStatsError as exc:
                        yield dict(set=name, eps=eps, factor=factor, seed=seed, refused=type(exc).__name__)
                        continue
                b = float(res.params.reindex(ref.names).to_numpy()[h])
                lo, hi = (float(v) for v in res.conf_int().loc[ref.names[h]])
                ols, se = float(ref.params[h]), float(ref.bse[h])
                yield dict(set=name, eps=eps, factor=factor, seed=seed, n_mu=float(res.info["n_mu"]),
                           rel_err=abs(b - ols) / abs(ols), sign=bool(np.sign(b) == np.sign(ols)),
                           covers=bool(lo <= ols <= hi), width=(hi - lo) / (2 * 1.959964 * se))
    finally:
        pgd.clip_rule = installed


def summarise(records: list[dict]) -> str:
    """Markdown tables: pooled per (epsilon, factor), then the median error per data set."""
    ok = [r for r in records if "rel_err" in r]
    factors = sorted({r["factor"] for r in ok})
    lines = ["| epsilon | factor | fits | median rel. error | sign right | covers OLS | median width / OLS |",
             "|---|---|---|---|---|---|---|"]
    for eps in sorted({r["eps"] for r in ok}):
        for f in factors:
            rr = [r for r in ok if r["eps"] == eps and r["factor"] == f]
            lines.append(f"| {eps:g} | {f:g} | {len(rr)} | {np.median([r['rel_err'] for r in rr]):.3f} | "
                         f"{np.mean([r['sign'] for r in rr]):.0%} | {np.mean([r['covers'] for r in rr]):.0%} | "
                         f"{np.median([r['width'] for r in rr]):.1f} |")
    cells: dict[tuple, list[float]] = defaultdict(list)
    for r in ok:
        cells[(r["set"], r["eps"], r["factor"])].append(r["rel_err"])
    lines += ["", "| data set | epsilon | n mu | " + " | ".join(f"factor {f:g}" for f in factors) + " |",
              "|---|---|---|" + "---|" * len(factors)]
    n_mu = {(r["set"], r["eps"]): r["n_mu"] for r in ok}
    for key in sorted(n_mu, key=lambda k: (k[1], n_mu[k])):
        meds = [np.median(cells[(*key, f)]) if cells[(*key, f)] else float("nan") for f in factors]
        lines.append(f"| {key[0]} | {key[1]:g} | {n_mu[key]:.0f} | " + " | ".join(f"{m:.3f}" for m in meds) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--factors", default="0.5,0.7,1,1.4,2")
    p.add_argument("--epsilons", default="1,3")
    p.add_argument("--seeds", type=int, default=12)
    p.add_argument("--datasets", help="comma-separated names (default: all)")
    p.add_argument("--jsonl", help="append the records to this file")
    p.add_argument("--summarise", help="only summarise the records of this file")
    args = p.parse_args(argv)
    if args.summarise:
        opener = gzip.open if args.summarise.endswith(".gz") else open
        with opener(args.summarise, "rt") as f:
            print(summarise([json.loads(line) for line in f]))
        return
    names = args.datasets.split(",") if args.datasets else [s.name for s in SPECS]
    factors = [float(f) for f in args.factors.split(",")]
    records = []
    out = open(args.jsonl, "a") if args.jsonl else None
    try:
        for eps in (float(e) for e in args.epsilons.split(",")):
            for name in names:
                for rec in fits(name, eps, factors, args.seeds):
                    records.append(rec)
                    if out:
                        out.write(json.dumps(rec) + "\n")
                        out.flush()
    finally:
        if out:
            out.close()
    print(summarise(records))


if __name__ == "__main__":
    main()
