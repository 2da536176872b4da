"""Private Theil-Sen (``method="theilsen"``) at d = 2: simulations and the one-predictor real regressions.

Two parts, each against ``method="auto"`` (one predictor, with bounds) and, when installed, OpenDP's private
Theil-Sen (pure epsilon-DP; its noise scale calibrated to epsilon at symmetric distance 2, one replaced row,
as in ``benchmarks/real_data.py``):

* ``sim``: y = 1 + beta x + e with R^2 = 0.2 in the population, five designs (normal x and errors; lognormal x
  and right-skewed errors; binary x; integer x with t_3 errors; normal x with heteroscedastic errors), bounds
  from the population (x: documented support or mean +/- 5 sd; y: mean +/- 6 sd), n in {100, 300, 1000, 3000,
  10000}, epsilon in {0.5, 1, 3}, delta = 1e-6; truth = beta.  Each replicate draws new data.
* ``real``: the one-predictor versions (response on the headline variable alone, d = 2) of the data sets of
  ``benchmarks/real_data_specs.py``, on their fixed 80% training split, with their declared bounds; truth = OLS
  on the same rows.  Metrics as in ``benchmarks/real_data.py`` (its ``record``).

Metrics: median relative error |b - beta| / |beta| of the slope, sign right, share of fits reporting a finite
95% interval, its coverage of the truth (sim) or of the OLS estimate (real), and its median width over the
width of the classical OLS 95% interval on the same data (2 t se_OLS); in the simulations also the error
block's predicted privacy error of the slope against the measured one (b - b_OLS on the same data).

Run from the repository root (about 25 minutes for both on one loaded core)::

    python benchmarks/theilsen.py sim --reps 40
    python benchmarks/theilsen.py real --seeds 10
    python benchmarks/theilsen.py summary           # tables from the saved records: results/theilsen/summary.md
    python benchmarks/assemble_report.py            # BENCHMARKS.md

``--interval-threshold`` overrides ``dpstats.methods.theilsen.INTERVAL_MIN_N_EPSILON`` (0 reports every
interval: the calibration run of that threshold).
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]  # this checkout's dpstats, then the benchmark helpers
# these imports need the sys.path set up just above
import real_data as rd  # noqa: E402

import dpstats  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402
from dpstats.methods import theilsen  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "theilsen"
DELTA = 1e-6
EPSILONS = (0.5, 1.0, 3.0)
NS = (100, 300, 1000, 3000, 10000)
DESIGNS = ("normal", "lognormal-skew", "binary", "integer-t3", "heteroscedastic")
METHODS = ("theilsen", "auto", "opendp")
R2 = 0.2


# -- simulations ------------------------------------------------------------------------------------------------

def population(design: str) -> tuple[float, float, tuple[float, float]]:
    """Mean and sd of x and its public range for a design."""
    if design in ("normal", "heteroscedastic"):
        return 0.0, 1.0, (-5.0, 5.0)
    if design == "lognormal-skew":
        s2 = 0.36
        mean, var = math.exp(s2 / 2), (math.exp(s2) - 1) * math.exp(s2)
        return mean, math.sqrt(var), (0.0, 8.0)
    if design == "binary":
        return 0.3, math.sqrt(0.21), (0.0, 1.0)
    if design == "integer-t3":
        return 14.0, math.sqrt((13**2 - 1) / 12), (0.0, 25.0)
    raise ValueError(design)


def draw(design: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float, dict[str, Any]]:
    """x, y, the true slope and the public bounds of one replicate (error sd 1, population R^2 = R2)."""
    mx, sx, xr = population(design)
    if design in ("normal", "heteroscedastic"):
        x = rng.normal(size=n)
    elif design == "lognormal-skew":
        x = rng.lognormal(0.0, 0.6, size=n)
    elif design == "binary":
        x = (rng.uniform(size=n) < 0.3).astype(float)
    else:
        x = rng.integers(8, 21, size=n).astype(float)
    if design == "lognormal-skew":
        e = rng.exponential(size=n) - 1.0
    elif design == "integer-t3":
        e = rng.standard_t(3, size=n) / math.sqrt(3.0)
    elif design == "heteroscedastic":
        e = rng.normal(size=n) * np.exp(0.5 * (x - mx) / sx - 0.25)  # E[scale^2] = 1
    else:
        e = rng.normal(size=n)
    beta = math.sqrt(R2 / (1 - R2)) / sx
    y = 1.0 + beta * x + e
    my, sy = 1.0 + beta * mx, math.sqrt(beta**2 * sx**2 + 1.0)
    return x, y, beta, {"x": xr, "y": (my - 6 * sy, my + 6 * sy)}


def ols_slope(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Slope, its classical standard error and the t quantile for a 95% interval."""
    xc = x - x.mean()
    b = float(xc @ (y - y.mean()) / (xc @ xc))
    resid = y - y.mean() - b * xc
    se = math.sqrt(float(resid @ resid) / (len(x) - 2) / float(xc @ xc))
    return b, se, float(stats.t.ppf(0.975, len(x) - 2))


def fit_sim(method: str, x: np.ndarray, y: np.ndarray, bounds: dict[str, Any], eps: float,
            seed: int) -> tuple[float, tuple[float, float] | None, str, float | None]:
    """One fit: the slope, its 95% interval (None if not reported), the method used and the error block's
    predicted privacy error of the slope (None if it has none)."""
    if method == "opendp":
        b = fit_opendp(x, y, bounds, eps, seed)
        return b, None, "opendp", None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols_arrays(x[:, None], y, eps, DELTA, method=method, x_bounds=[bounds["x"]],
                                    y_bounds=bounds["y"], intercept=True, random_state=seed)
        interval, _ = rd.headline_interval(res, res.params.index[1])
        predicted, _ = rd.predicted_privacy(res, res.params.index[1])
    return float(res.params.iloc[1]), interval, res.method, predicted


def fit_opendp(x: np.ndarray, y: np.ndarray, bounds: dict[str, Any], eps: float, seed: int) -> float:
    """OpenDP's Theil-Sen on clipped data (as in benchmarks/real_data.py)."""
    meas = rd.opendp_measurement(tuple(bounds["x"]), tuple(bounds["y"]), eps)
    np.random.seed(seed)
    data = np.column_stack([np.clip(x, *bounds["x"]), np.clip(y, *bounds["y"])])
    slope, _ = meas(data)
    return float(slope)


def run_sim(methods: Sequence[str], reps: int, ns: Sequence[int], epsilons: Sequence[float],
            designs: Sequence[str], log: Callable[[str], None]) -> list[dict]:
    """Every (design, n, epsilon, replicate, method); each replicate draws new data."""
    out = []
    started = time.perf_counter()
    for design in designs:
        for n in ns:
            for eps in epsilons:
                for r in range(reps):
                    rng = np.random.default_rng([DESIGNS.index(design), n, int(eps * 10), r])
                    x, y, beta, bounds = draw(design, n, rng)
                    b_ols, se, t = ols_slope(x, y)
                    for method in methods:
                        start = time.perf_counter()
                        try:
                            b, ci, used, predicted = fit_sim(method, x, y, bounds, eps, 1000 + r)
                        except DPStatsError as exc:
                            out.append({"part": "sim", "design": design, "n": n, "epsilon": eps, "rep": r,
                                        "method": method, "status": type(exc).__name__})
                            continue
                        rec = {"part": "sim", "design": design, "n": n, "epsilon": eps, "rep": r, "method": method,
                               "status": "ok", "method_used": used, "truth": beta, "b": b, "b_ols": b_ols,
                               "rel_err": abs(b - beta) / abs(beta), "sign_ok": bool(np.sign(b) == np.sign(beta)),
                               "interval": ci is not None, "pred_privacy": predicted,
                               "seconds": time.perf_counter() - start}
                        if ci is not None:
                            rec.update({"covers": bool(ci[0] <= beta <= ci[1]),
                                        "width_ratio": (ci[1] - ci[0]) / (2 * t * se)})
                        out.append(rec)
                log(f"  {design} n={n}: {time.perf_counter() - started:.0f} s")
    return out


# -- real data -----------------------------------------------------------------------------------------------------

def real_names() -> list[str]:
    """The data sets whose one-predictor model has one design column besides the intercept."""
    return [s.name for s in rd.SPECS if len(rd.reference(s.name, "one").names) == 2]


def run_real(methods: Sequence[str], seeds: int, epsilons: Sequence[float], names: Sequence[str],
             log: Callable[[str], None]) -> list[dict]:
    """Every (data set, method, epsilon, seed) on the one-predictor model; records as benchmarks/real_data.py."""
    out = []
    started = time.perf_counter()
    for name in names:
        spec, train, _ = rd.prepared(name)
        ref = rd.reference(name, "one")
        for method in methods:
            cfg = (rd.Config("Theil-Sen", "opendp", model="one") if method == "opendp"
                   else rd.Config(method, model="one"))
            for eps in epsilons:
                for s in range(seeds):
                    seed = rd.SEED_BASE + s
                    if method == "opendp":
                        outcome = rd.fit_peer(cfg, spec, train, ref, eps, seed)
                    else:
                        outcome = rd.fit_dpstats(cfg, spec, train, ref, eps, seed)
                    rec = rd.record(cfg, spec, ref, len(train), eps, seed, outcome)
                    rec.update({"part": "real", "method": method})
                    out.append(rec)
        log(f"  {name}: {time.perf_counter() - started:.0f} s")
    return out


# -- summary -------------------------------------------------------------------------------------------------------

def _med(values: Sequence[float], digits: int = 3) -> str:
    vals = [v for v in values if v is not None and math.isfinite(v)]
    return f"{np.median(vals):.{digits}f}" if vals else "-"


def _share(flags: Sequence[bool]) -> str:
    return f"{100 * np.mean(flags):.0f}%" if len(flags) else "-"


def _cell(recs: list[dict], cover_key: str) -> list[str]:
    ok = [r for r in recs if r["status"] == "ok"]
    ci = [r for r in ok if r.get("interval")]
    return [str(len(recs)), _med([r["rel_err"] for r in ok]), _share([r["sign_ok"] for r in ok]),
            _share([bool(r.get("interval")) for r in recs]), _share([r[cover_key] for r in ci]),
            _med([r["width_ratio"] for r in ci], 1)]


def table(records: list[dict], keys: Sequence[str], cover_key: str) -> str:
    """One row per combination of ``keys`` (in order of appearance)."""
    head = [*keys, "fits", "median rel. error", "sign right", "interval reported", "covers", "median width / OLS"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    order = [keys.index("method")] if "method" in keys else []
    for key in sorted(groups, key=lambda k: tuple(METHODS.index(v) if i in order else v for i, v in enumerate(k))):
        lines.append("| " + " | ".join([*(f"{v:g}" if isinstance(v, float) else str(v) for v in key),
                                         *_cell(groups[key], cover_key)]) + " |")
    return "\n".join(lines)


def coverage_by_n_eps(records: list[dict]) -> str:
    """theilsen's interval coverage of the truth by n * epsilon (simulations, all designs)."""
    recs = [r for r in records if r["method"] == "theilsen" and r["status"] == "ok" and r.get("interval")]
    cells = sorted({r["n"] * r["epsilon"] for r in recs})
    lines = ["| n * epsilon | fits with an interval | covers truth | median width / OLS |", "|---|---|---|---|"]
    for c in cells:
        group = [r for r in recs if r["n"] * r["epsilon"] == c]
        lines.append(f"| {c:g} | {len(group)} | {_share([r['covers'] for r in group])} | "
                     f"{_med([r['width_ratio'] for r in group], 1)} |")
    return "\n".join(lines)


def privacy_by_n_eps(records: list[dict]) -> str:
    """theilsen's predicted privacy error of the slope (the error block's) against the measured one (root mean
    square of b - b_OLS), per (design, n, epsilon) cell, summarised by n * epsilon: the share of cells whose
    ratio of root mean squares lies in [1/3, 3] and the median ratio (issue 18's band)."""
    cells: dict[tuple, list[dict]] = {}
    for r in records:
        if r["method"] == "theilsen" and r["status"] == "ok" and r.get("pred_privacy") is not None:
            cells.setdefault((r["design"], r["n"], r["epsilon"]), []).append(r)
    if not cells:
        return ""
    ratios: dict[float, list[float]] = {}
    for (_, n, eps), recs in cells.items():
        predicted = math.sqrt(np.mean([r["pred_privacy"] ** 2 for r in recs]))
        measured = math.sqrt(np.mean([(r["b"] - r["b_ols"]) ** 2 for r in recs]))
        ratios.setdefault(n * eps, []).append(predicted / measured if measured > 0 else math.inf)
    lines = ["| n * epsilon | cells | predicted / measured within [1/3, 3] | median predicted / measured |",
             "|---|---|---|---|"]
    for c in sorted(ratios):
        v = np.array(ratios[c])
        lines.append(f"| {c:g} | {v.size} | {_share(list((v >= 1 / 3) & (v <= 3)))} | {np.median(v):.2g} |")
    return "\n".join(lines)


def summary(out: Path) -> str:
    parts = []
    for part, cover in (("sim", "covers"), ("real", "covers_ols")):
        path = out / f"{part}.jsonl.gz"
        if not path.exists():
            continue
        with gzip.open(path, "rt") as fh:
            records = [json.loads(line) for line in fh]
        meta = json.loads((out / f"{part}.meta.json").read_text())
        parts.append(f"### {'Simulations' if part == 'sim' else 'One-predictor real regressions'}\n\n"
                     f"Command: `{meta['command']}` ({meta['seconds']:.0f} s).\n")
        parts.append(table(records, ["method", "epsilon"], cover))
        if part == "sim":
            parts.append("\nBy n (pooled over designs and epsilons):\n\n" + table(records, ["method", "n"], cover))
            parts.append("\nBy design (pooled over n and epsilons):\n\n" + table(records, ["method", "design"], cover))
            parts.append("\ntheilsen's intervals by n * epsilon:\n\n" + coverage_by_n_eps(records))
            privacy = privacy_by_n_eps(records)
            if privacy:
                parts.append("\ntheilsen's predicted privacy error of the slope against the measured one (root mean "
                             "square of b - b_OLS), per design, n and epsilon:\n\n" + privacy)
        else:
            parts.append("\nBy data set, epsilon = 1:\n\n" + table([r for r in records if r["epsilon"] == 1.0],
                                                                  ["dataset", "n_train", "method"], cover))
    return "\n\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("part", choices=("sim", "real", "summary"))
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--reps", type=int, default=40, help="replicates per simulation cell")
    p.add_argument("--seeds", type=int, default=10, help="noise seeds per real data set and epsilon")
    p.add_argument("--ns", default=",".join(str(n) for n in NS))
    p.add_argument("--designs", default=",".join(DESIGNS))
    p.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    p.add_argument("--datasets", help="comma-separated (default: every one-predictor data set with d = 2)")
    p.add_argument("--interval-threshold", type=float, help="override theilsen.INTERVAL_MIN_N_EPSILON")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.part == "summary":
        text = summary(out)
        (out / "summary.md").write_text(text)
        print(text)
        return
    if args.interval_threshold is not None:
        theilsen.INTERVAL_MIN_N_EPSILON = args.interval_threshold
    methods = [m for m in args.methods.split(",") if m != "opendp" or rd.peer_available("opendp")]
    epsilons = [float(e) for e in args.epsilons.split(",")]

    def log(m: str) -> None:
        print(m, file=sys.stderr, flush=True)

    started = time.perf_counter()
    if args.part == "sim":
        records = run_sim(methods, args.reps, [int(n) for n in args.ns.split(",")], epsilons,
                          args.designs.split(","), log)
    else:
        records = run_real(methods, args.seeds, epsilons, args.datasets.split(",") if args.datasets else real_names(),
                           log)
    command = "python benchmarks/theilsen.py " + " ".join(argv if argv is not None else sys.argv[1:])
    meta = {"command": command, "seconds": time.perf_counter() - started, "versions": rd.versions()}
    with gzip.GzipFile(out / f"{args.part}.jsonl.gz", "wb", mtime=0) as fh:
        fh.write("".join(json.dumps(r, sort_keys=True, default=float) + "\n" for r in records).encode())
    (out / f"{args.part}.meta.json").write_text(json.dumps(meta, indent=1))
    text = summary(out)
    (out / "summary.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
