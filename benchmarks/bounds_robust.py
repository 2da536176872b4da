"""Declared bounds against no bounds for ``robgd`` and ``ambssgd`` on the real regressions (issue 17, part 4).

Reads two sets of records written by ``benchmarks/real_data.py`` (which fits every bound-free method with the
declared bounds and without them, the "(no bounds)" rows), one from before a change and one after, and writes
the per-cell table: per method, data set and epsilon, the median over the noise seeds of the headline
coefficient's relative error against OLS and of the test R^2, with bounds (before and after) and without
bounds (after), and counts of the cells where bounds make the fit worse.

Run (from the repository root)::

    python benchmarks/real_data.py --methods robgd,ambssgd --seeds 5 --no-peers --out DIR_AFTER
    python benchmarks/bounds_robust.py DIR_BEFORE/records.jsonl.gz DIR_AFTER/records.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
from collections import defaultdict
from typing import Any

METHODS = ("robgd", "ambssgd")
#: a cell is materially worse with bounds when its median error is higher by this much or more ...
ERROR_MARGIN = 0.05
#: ... or its median test R^2 lower by this much or more
R2_MARGIN = 0.02

Cells = dict[tuple[str, str, float, bool], list[dict[str, Any]]]


def cells(path: str, seeds: int | None = None) -> Cells:
    """The released full-model fits of ``METHODS``, by (method, data set, epsilon, bounds); with ``seeds``, only
    the first that many noise seeds (1000, 1001, ...)."""
    out: Cells = defaultdict(list)
    with gzip.open(path, "rt") as fh:
        for line in fh:
            r = json.loads(line)
            if seeds is not None and r["seed"] >= 1000 + seeds:
                continue
            if r["method"] in METHODS and r.get("status") == "ok" and r.get("model") == "full":
                out[(r["method"], r["dataset"], r["epsilon"], r["bounds"])].append(r)
    return out


def median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in rows))


def verdict(err: float, r2: float, err_none: float, r2_none: float) -> str:
    """How the fit with bounds compares with the fit without (medians)."""
    parts = []
    if err > err_none:
        parts.append(f"error {err - err_none:+.3f}")
    if r2 < r2_none - R2_MARGIN:
        parts.append(f"R^2 {r2 - r2_none:+.3f}")
    return ", ".join(parts) if parts else "better or equal"


def table(before: Cells, after: Cells) -> list[str]:
    """The per-cell table and the counts, as Markdown lines."""
    lines = ["| method | data set | epsilon | error, bounds (before) | error, bounds (after) | error, no bounds | "
             "test R^2, bounds (before) | test R^2, bounds (after) | test R^2, no bounds | with bounds (after) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    worse: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for key in sorted(k for k in after if k[3] and (k[0], k[1], k[2], False) in after and k in before):
        m, ds, eps, _ = key
        none = after[(m, ds, eps, False)]
        en, rn = median(none, "rel_err"), median(none, "r2_test")
        vals = {when: (median(c[key], "rel_err"), median(c[key], "r2_test")) for when, c in
                (("before", before), ("after", after))}
        for when, (e, r) in vals.items():
            worse[m]["cells"] += when == "after"
            worse[m][f"{when} error"] += e > en
            worse[m][f"{when} R^2"] += r < rn - R2_MARGIN
            worse[m][f"{when} material"] += e >= en + ERROR_MARGIN or r < rn - R2_MARGIN
        (eb, rb), (ea, ra) = vals["before"], vals["after"]
        lines.append(f"| {m} | {ds} | {eps:g} | {eb:.3f} | {ea:.3f} | {en:.3f} | {rb:.3f} | {ra:.3f} | {rn:.3f} | "
                     f"{verdict(ea, ra, en, rn)} |")
    lines.append("")
    for m, w in worse.items():
        lines.append(f"* {m}, {w['cells']} cells: headline error higher with bounds in {w['before error']} before, "
                     f"{w['after error']} after; test R^2 lower by more than {R2_MARGIN} in {w['before R^2']} before, "
                     f"{w['after R^2']} after; either by a material margin (error +{ERROR_MARGIN} or R^2 "
                     f"-{R2_MARGIN}) in {w['before material']} before, {w['after material']} after.")
    for m in METHODS:
        for when, c in (("before", before), ("after", after)):
            for b in (True, False):
                rows = [r for k, v in c.items() if k[0] == m and k[3] == b for r in v]
                if rows and (b or when == "after"):
                    lines.append(f"* {m} {'with' if b else 'without'} bounds ({when}): median error "
                                 f"{median(rows, 'rel_err'):.3f}, median test R^2 {median(rows, 'r2_test'):.3f} "
                                 f"over {len(rows)} fits.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", help="records.jsonl.gz of the run before the change")
    parser.add_argument("after", help="records.jsonl.gz of the run after the change")
    parser.add_argument("--seeds", type=int, default=None, help="use only the first SEEDS noise seeds")
    args = parser.parse_args()
    print("\n".join(table(cells(args.before, args.seeds), cells(args.after, args.seeds))))


if __name__ == "__main__":
    main()
