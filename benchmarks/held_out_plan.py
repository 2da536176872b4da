"""``dpstats.plan`` before the held-out fits against what the fits gave: the headline's planned privacy error, its
epsilon and rows needed and whether an interval is reported, beside the stored records of ``held_out.py``.

Run:  python benchmarks/held_out.py --collection thirty-third --seeds 20 --epsilons 0.5,1,3 --jsonl FILE
      python benchmarks/held_out_plan.py --collection thirty-third --jsonl FILE     (a markdown table)

For each data set of the collection and each epsilon of the records: the plan at the data set's n with
``method="auto"``, its declared bounds and levels, the data's column types (``dtypes=``, public) and R^2 set to
least squares' (an assumption a user would state), and the fits' root mean square distance of the headline from
least squares (from the records' relative errors), their intervals reported, their coverage of least squares and
their median width over the classical interval's; "plan total" is sqrt(privacy^2 + sampling^2) over least squares'
standard error, comparable with the width. pgd's planned privacy error is that of its estimate with its shrinkage
divided out (docs/guide/planning.md), above the released coefficients' distance where n * mu is small; Theil-Sen's
and DP-SGD's is the minimax lower bound, labelled "(at least)" in the plan.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import held_out  # noqa: E402  (importable only after the sys.path line above)

import dpstats  # noqa: E402

HEADER = ("| data set | n | epsilon | plan: method | planned privacy error | planned sampling error | plan: interval | "
          "epsilon needed | rows needed | fits: method | measured RMS error | measured / planned | reported | "
          "covers least squares | median width / OLS | plan total / OLS se |")


def rows(name: str, records: list[dict]) -> list[str]:
    """The table's rows of one data set, one per epsilon with records."""
    _, formula, head, bounds = held_out.SPECS[name]
    df = held_out.frame(name)
    ols = held_out.least_squares(formula, df)
    b_ols, se = abs(float(ols.params[head])), float(ols.bse[head])
    out = []
    for eps in sorted({r["eps"] for r in records if r["set"] == name}):
        cell = [r for r in records if r["set"] == name and r["eps"] == eps and "rel_err" in r]
        if not cell:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = dpstats.plan(formula=formula, bounds=bounds, levels=held_out.LEVELS.get(name), n=len(df),
                                 epsilon=eps, delta=held_out.DELTA, method="auto",
                                 rsquared=float(max(ols.rsquared, 0.0)), dtypes=dict(df.dtypes)).to_frame()
        row = frame[frame["term"] == head].iloc[0]
        rms = b_ols * float(np.sqrt(np.mean([r["rel_err"] ** 2 for r in cell])))
        reported = [r for r in cell if r["reported"]]
        covers = f"{np.mean([r['covers'] for r in reported]):.0%}" if reported else "-"
        width = f"{np.median([r['width'] for r in reported]):.1f}" if reported else "-"
        total = float(np.hypot(row["privacy"], row["sampling"])) / se
        out.append(f"| {name} | {len(df)} | {eps:g} | {row['method']} | {row['privacy']:.3g} | {row['sampling']:.3g} | "
                   f"{row['intervals']} | {row['epsilon_needed']:.3g} | {row['n_needed']:,.0f} | {cell[0]['chose']} | "
                   f"{rms:.3g} | {rms / row['privacy']:.2f} | {len(reported)}/{len(cell)} | {covers} | {width} | "
                   f"{total:.1f} |")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collection", choices=tuple(held_out.COLLECTIONS), required=True)
    p.add_argument("--jsonl", required=True, help="the records of held_out.py for the collection")
    args = p.parse_args(argv)
    records = [json.loads(line) for line in Path(args.jsonl).read_text().splitlines()]
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    for name in held_out.collection(args.collection):
        print("\n".join(rows(name, records)))


if __name__ == "__main__":
    main()
