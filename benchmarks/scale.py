"""Scale benchmark: private fits of a Parquet table larger than memory, beside the same reduction in plain Dask.

Usage (the data go to /tmp, never into the repository; delete them afterwards)::

    python benchmarks/scale.py generate --rows 100000000 --dir /tmp/dpstats_scale
    python benchmarks/scale.py run --dir /tmp/dpstats_scale --out benchmarks/results/scale.md
    rm -rf /tmp/dpstats_scale

``generate`` writes ``--files`` Parquet files of 10 covariates x1..x10 and a
response y (float64, row groups of 1e6 rows, no compression): x ~ N(0, 1)
clipped to [-5, 5], y = 1 + x beta + N(0, 1), beta_j = j / 10.

``run`` times each case in a fresh subprocess, so that each peak memory (the
child's maximum resident set size, ``resource.getrusage``) is its own:

* ``floor``: X^T X and X^T y (with an intercept column) over the Parquet files,
  written directly in Dask (``dd.read_parquet`` -> one delayed partial per
  partition -> tree sum), on Dask's default threaded scheduler;
* ``ssp``, ``adassp``, ``tukey``: ``dpstats.dp_ols("y ~ x1 + ... + x10", <files>,
  ...)`` with declared bounds, read by the local Parquet source (chunks of
  ``--chunk`` rows), and the same through ``dd.read_parquet`` (engine dask);
  ``tukey`` also without bounds (option ``"no_bounds": true``, how TukeyEM is
  usually run: the private centres and radii then need the data).

Peak memory is reported above the interpreter's resident size after imports
(``baseline``), so it is the memory the fit itself needed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

D = 10
BETA = np.arange(1, D + 1) / 10.0
XCOLS = [f"x{j}" for j in range(1, D + 1)]
FORMULA = "y ~ " + " + ".join(XCOLS)
BOUNDS = {**{c: (-5.0, 5.0) for c in XCOLS}, "y": (-40.0, 40.0)}
ROOT = Path(__file__).resolve().parent.parent


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux: kilobytes


def generate(rows: int, directory: str, files: int, row_group: int, seed: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    per_file = -(-rows // files)
    written = 0
    t0 = time.time()
    for f in range(files):
        k = min(per_file, rows - written)
        if k <= 0:
            break
        path = os.path.join(directory, f"part-{f:04d}.parquet")
        with pq.ParquetWriter(path, pa.schema([(c, pa.float64()) for c in [*XCOLS, "y"]]),
                              compression="none") as w:
            done = 0
            while done < k:
                m = min(row_group, k - done)
                X = np.clip(rng.standard_normal((m, D)), -5, 5)
                y = 1.0 + X @ BETA + rng.standard_normal(m)
                w.write_table(pa.table({**{c: X[:, j] for j, c in enumerate(XCOLS)}, "y": y}), row_group_size=m)
                done += m
        written += k
        print(f"wrote {path} ({k} rows, {time.time() - t0:.0f}s)", flush=True)


def _files(directory: str) -> list[str]:
    return sorted(str(p) for p in Path(directory).glob("*.parquet"))


def _read(directory: str, split: bool):
    import dask.dataframe as dd

    kw = {"split_row_groups": True} if split else {}
    return dd.read_parquet(_files(directory), columns=[*XCOLS, "y"], **kw)


def case_floor(directory: str, chunk: int, split: bool) -> dict:
    import dask

    base = _rss_mb()
    t0 = time.time()
    ddf = _read(directory, split)

    def partial(df):
        X = np.empty((len(df), D + 1))
        X[:, 0] = 1.0
        X[:, 1:] = df[XCOLS].to_numpy()
        y = df["y"].to_numpy()
        return X.T @ X, X.T @ y, len(df)

    def add(*parts):
        return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))

    level = [dask.delayed(partial)(p) for p in ddf.to_delayed()]
    while len(level) > 1:
        level = [dask.delayed(add)(*level[i:i + 8]) for i in range(0, len(level), 8)]
    (xtx, xty, n), = dask.compute(level[0])
    wall = time.time() - t0
    return {"wall": wall, "n": int(n), "peak_mb": _rss_mb() - base, "baseline_mb": base}


def case_fit(directory: str, method: str, engine: str, chunk: int, options: dict) -> dict:
    import dpstats
    from dpstats.rows.sources import ParquetSource

    base = _rss_mb()
    t0 = time.time()
    if engine in ("dask", "dask-rg"):
        data = _read(directory, engine == "dask-rg")
    else:
        data = ParquetSource(_files(directory), batch_size=chunk)
    options = dict(options)
    bounds = None if options.pop("no_bounds", False) else BOUNDS  # TukeyEM's usual setting: nothing declared
    res = dpstats.dp_ols(FORMULA, data, epsilon=1.0, delta=1e-9, method=method, bounds=bounds, random_state=1,
                         **options)
    wall = time.time() - t0
    err = float(np.max(np.abs(res.params.to_numpy()[1:] - BETA)))
    return {"wall": wall, "n": int(res.nobs), "peak_mb": _rss_mb() - base, "baseline_mb": base,
            "max_abs_coef_error": err, "notes": [s for s in res.privacy.notes if "pass" in s]}


def run_case(args: argparse.Namespace) -> None:
    if args.case == "floor":
        out = case_floor(args.dir, args.chunk, args.engine == "dask-rg")
    else:
        out = case_fit(args.dir, args.case, args.engine, args.chunk, json.loads(args.options))
    print("RESULT " + json.dumps(out))


def run_all(args: argparse.Namespace) -> None:
    cases = [("floor", "dask", "{}"), ("floor", "dask-rg", "{}"),
             ("ssp", "local", "{}"), ("adassp", "local", "{}"), ("tukey", "local", "{}"),
             ("tukey", "local", '{"blocks": "ols"}'), ("tukey", "local", '{"no_bounds": true}'),
             ("tukey", "local", '{"no_bounds": true, "blocks": "ols"}'),
             ("ssp", "dask", "{}"), ("adassp", "dask", "{}"), ("tukey", "dask", "{}"),
             ("ssp", "dask-rg", "{}"), ("adassp", "dask-rg", "{}"), ("tukey", "dask-rg", "{}")]
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = [c for c in cases if f"{c[0]}:{c[1]}" in wanted or c[0] in wanted
                 or f"{c[0]}:{c[1]}:{c[2]}" in wanted]
    runs: dict[tuple[str, str, str], list[dict]] = {c: [] for c in cases}
    for rep in range(args.repeat):  # interleaved, so that a burst of load on the machine hits every case alike
        for case, engine, options in cases:
            cmd = [sys.executable, __file__, "case", case, "--dir", args.dir, "--engine", engine, "--chunk",
                   str(args.chunk), "--options", options]
            load = os.getloadavg()[0]
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if proc.returncode != 0 or not line:
                print(proc.stdout, proc.stderr, file=sys.stderr)
                raise SystemExit(f"case {case} ({engine}) failed")
            res = json.loads(line[0][7:])
            res.update(case=case, engine=engine, options=options, load=load)
            runs[(case, engine, options)].append(res)
            print(f"[{rep + 1}/{args.repeat}] {case:7s} {engine:7s} {options:18s} wall {res['wall']:7.1f}s  "
                  f"peak +{res['peak_mb']:6.0f} MB  {res['n'] / res['wall'] / 1e6:6.2f} M rows/s  "
                  f"(load {load:.1f})", flush=True)
    rows = []
    for rs in runs.values():
        best = min(rs, key=lambda r: r["wall"])
        best = {**best, "walls": [r["wall"] for r in rs], "peak_mb": max(r["peak_mb"] for r in rs),
                "loads": [r["load"] for r in rs]}
        rows.append(best)
    floors = [r["wall"] for r in rows if r["case"] == "floor"]
    floor = min(floors) if floors else None  # the faster of the two Dask partitionings
    if args.out:
        _write(args, rows, floor)


def _write(args: argparse.Namespace, rows: list[dict], floor: float | None) -> None:
    n = rows[0]["n"]
    size = sum(os.path.getsize(f) for f in _files(args.dir)) / 1e9
    lines = [f"### n = {n:,} rows x {D} covariates (+ intercept), {size:.1f} GB of Parquet "
             f"({len(_files(args.dir))} files, row groups of 1e6 rows)", "",
             f"Command: `python benchmarks/scale.py run --dir {args.dir} --chunk {args.chunk} --repeat {args.repeat}"
             + (f" --cases {args.cases}" if args.cases else "") + "`; machine: "
             f"{os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB, "
             "shared with other jobs (the 1-minute load average before each run is listed); "
             f"epsilon=1, delta=1e-9; local chunks of {args.chunk:,} rows. Wall: the fastest of the repeats "
             "(all repeats listed); peak: the largest.", "",
             "| case | engine | options | wall (s) | vs floor | repeats (s) | load | peak memory above baseline (MB) "
             "| M rows/s | max abs coef error |", "|---|---|---|---:|---:|---|---|---:|---:|---:|"]
    for r in rows:
        ratio = f"{r['wall'] / floor:.2f}x" if floor else "-"
        err = f"{r['max_abs_coef_error']:.2g}" if "max_abs_coef_error" in r else "-"
        reps = ", ".join(f"{w:.1f}" for w in r["walls"])
        loads = ", ".join(f"{x:.1f}" for x in r["loads"])
        lines.append(f"| {r['case']} | {r['engine']} | `{r['options']}` | {r['wall']:.1f} | {ratio} | {reps} | "
                     f"{loads} | {r['peak_mb']:.0f} | {r['n'] / r['wall'] / 1e6:.2f} | {err} |")
    lines.append("")
    with open(args.out, "a") as fh:
        fh.write("\n".join(lines) + "\n")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--rows", type=int, default=10**8)
    g.add_argument("--dir", default="/tmp/dpstats_scale")
    g.add_argument("--files", type=int, default=20)
    g.add_argument("--row-group", type=int, default=10**6)
    g.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("run")
    r.add_argument("--dir", default="/tmp/dpstats_scale")
    r.add_argument("--chunk", type=int, default=1 << 17)
    r.add_argument("--cases", default="", help="comma-separated subset, e.g. floor,ssp:local,tukey")
    r.add_argument("--out", default="")
    r.add_argument("--repeat", type=int, default=3)
    c = sub.add_parser("case")
    c.add_argument("case")
    c.add_argument("--dir", required=True)
    c.add_argument("--engine", default="local")
    c.add_argument("--chunk", type=int, default=1 << 17)
    c.add_argument("--options", default="{}")
    args = p.parse_args()
    if args.cmd == "generate":
        generate(args.rows, args.dir, args.files, args.row_group, args.seed)
    elif args.cmd == "run":
        run_all(args)
    else:
        run_case(args)


if __name__ == "__main__":
    main()
