"""pgd's clips at small n * mu: how far below the gradient norms they fall, and what that does to the estimate.

Run:  python benchmarks/pgd_small_clips.py --datasets prestige,doctor [--epsilons 0.5,1] [--seeds 20] --jsonl FILE
      python benchmarks/pgd_small_clips.py --simulated [--seeds 10] --jsonl FILE
      python benchmarks/pgd_small_clips.py --summarise FILE[.gz] [--against FILE[.gz]]

Each fit is ``dp_ols(method="auto")`` (held-out regressions of ``benchmarks/held_out.py``, with their declared bounds
and noise seeds, or simulated designs: n * mu = 15, 30, 60, 120, 250 at epsilon 1, d = 2, 5, 10 standard normal
columns clipped to [-4, 4], R^2 = 0.2, 0.5, 0.9, normal or t_3 errors, bounds declared as +-4 and a loose range of the
response; 10 noise seeds each).  A wrapper around ``pgd._clips`` records, for each of pgd's two gradient-norm
histograms, the clip it released (phase 1: the warm clip C_1; phase 2: the final clip C_2 and the tail clip) beside
the exact median of the gradient norms the histogram counted.  The exact median is read by the benchmark only, for
the comparison; it reaches no release.  Options change the clips below n * mu = ``pgd.CLIP_CEILING_N_MU`` for a
paired comparison on the same seeds: ``--geometric-mean`` takes the final clip as the geometric mean of the clip
rule's clips read at theta = 0 and at the warm start (two independent reads) instead of the smaller, ``--floor f``
raises every clip to at least f k sqrt(d) (a public number, as
the ceiling ``pgd.clip_ceiling`` is), ``--relative-grid E,B`` reads the clips from a histogram of B bins of ratio 4
from k sqrt(d) 2^E up.  The records hold the headline coefficient's relative error against least squares on the same
rows, its sign, the interval's coverage of least squares and its width over the classical one, and the clips.
``--summarise`` prints, by band of n * mu, the pooled figures and the share of clips below 1/8 and 1/32 of the
median norm; with ``--against`` the paired change from a first file.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import held_out  # noqa: E402

import dpstats  # noqa: E402
import dpstats.methods.pgd as pgd  # noqa: E402
from dpstats.methods.common.geometric_histogram import GeometricGrid  # noqa: E402

#: noise seeds of the simulated fits
SIM_SEED0 = 5000
#: the n * mu bands of the summary
BANDS = ((0.0, 15.0), (15.0, 25.0), (25.0, 50.0), (50.0, 100.0), (100.0, 250.0), (250.0, math.inf))

_LOG: list[dict[str, Any]] = []
_NORMS: list[np.ndarray] = []
_READS: list[tuple[float, ...]] = []
_VARIANT: dict[str, Any] = {"floor": 0.0, "grid": None, "mean": False}
_grid_counts, _clips, _release_quantiles = pgd.grid_counts, pgd._clips, pgd.release_quantiles


def _recording_release_quantiles(*args: Any, **kw: Any) -> tuple[float, ...]:
    """pgd's histogram release, keeping the quantiles read from it."""
    reads = _release_quantiles(*args, **kw)
    _READS.append(reads)
    return reads


def _recording_grid_counts(values: np.ndarray, grid: GeometricGrid) -> np.ndarray:
    """pgd's histogram counts, keeping the counted norms for the benchmark's comparison."""
    _NORMS.append(np.asarray(values, dtype=float).copy())
    return _grid_counts(values, grid)


def _recording_clips(rows: Any, st: Any, cache: Any, theta: np.ndarray, phase: int, n_mu: float, mu: float,
                     caps: tuple[float, float], **kw: Any) -> tuple[float, tuple[float, float]]:
    """pgd's ``_clips`` with the variant of the options applied below n * mu = CLIP_CEILING_N_MU; records the clips
    beside the exact median norm."""
    _NORMS.clear()
    d = theta.shape[0]
    q, k = pgd.clip_rule(n_mu, kw.get("minority"), d)
    small = n_mu < pgd.CLIP_CEILING_N_MU
    installed = pgd.NORM_GRID
    if _VARIANT["grid"] is not None and small:
        exponent, bins = _VARIANT["grid"]
        pgd.NORM_GRID = GeometricGrid(lo=k * math.sqrt(d) * 2.0**exponent, ratio=4.0, bins=bins)
    try:
        clip, new_caps = _clips(rows, st, cache, theta, phase, n_mu, mu, caps, **kw)
    finally:
        pgd.NORM_GRID = installed
    if _VARIANT["mean"] and small and phase == 2:  # the geometric mean of the two phases' rule clips
        reads = _READS[-1]
        ceiling = pgd.clip_ceiling(n_mu, k, d)
        clip = math.sqrt(min(reads[0] * k, ceiling) * caps[0])
        tail = pgd.tail_level(n_mu)
        raised = max(clip, min(reads[-1], pgd.TAIL_CAP * clip)) if tail is not None else clip
        new_caps = (clip, max(pgd.TAIL_FLOOR * clip, min(raised, caps[1])))
    floor = _VARIANT["floor"] * k * math.sqrt(d) if small else 0.0
    if floor > 0:
        if phase == 1:
            clip, new_caps = max(clip, floor), (max(new_caps[0], floor), max(new_caps[1], floor))
        else:
            clip = max(clip, floor)
            new_caps = (clip, max(new_caps[1], pgd.TAIL_FLOOR * clip))
    norms = np.concatenate(_NORMS) if _NORMS else np.array([math.nan])
    _LOG.append({"phase": phase, "n_mu": n_mu, "d": d, "k": k, "clip": clip, "tail": new_caps[1],
                 "med": float(np.median(norms)), "ksd": k * math.sqrt(d)})
    return clip, new_caps


def held_out_fits(names: list[str], epsilons: list[float], seeds: int) -> Iterator[dict]:
    """``held_out.fits`` records, each with the clips of its fit."""
    for name in names:
        fits = held_out.fits(name, "auto", epsilons, seeds)
        while True:
            _LOG.clear()
            try:
                record = next(fits)
            except StopIteration:
                break
            yield {**record, "clips": list(_LOG)}


def simulated(n: int, d: int, r2: float, heavy: bool, seed: int) -> tuple[pd.DataFrame, dict]:
    """A simulated design and its declared bounds (module docstring)."""
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_normal((n, d)), -4, 4)
    beta = np.linspace(1.0, 0.3, d)
    signal = X @ beta
    sd = math.sqrt(np.var(signal) * (1 - r2) / r2)
    e = rng.standard_t(3, n) / math.sqrt(3) if heavy else rng.standard_normal(n)
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(d)]).assign(y=0.5 + signal + sd * e)
    half = 0.5 + 2 * beta.sum() + 6 * sd
    return df, {**{f"x{j}": (-4.0, 4.0) for j in range(d)}, "y": (0.5 - half, 0.5 + half)}


def simulated_fits(seeds: int, eps: float = 1.0) -> Iterator[dict]:
    """Records of the simulated designs (module docstring), headline x0."""
    mu = held_out.gaussian_mu(held_out.fit_epsilon(eps, True), held_out.DELTA)
    for n_mu in (15, 30, 60, 120, 250):
        n = int(round(n_mu / mu))
        for d in (2, 5, 10):
            for r2 in (0.2, 0.5, 0.9):
                for heavy in (False, True):
                    df, bounds = simulated(n, d, r2, heavy, 7 + d * 100 + int(r2 * 10) + n_mu * 1000 + heavy)
                    formula = "y ~ " + " + ".join(f"x{j}" for j in range(d))
                    ols = smf.ols(formula, df).fit()
                    b0, se = float(ols.params["x0"]), float(ols.bse["x0"])
                    for seed in range(seeds):
                        _LOG.clear()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = dpstats.dp_ols(formula, df, eps, held_out.DELTA, method="auto", bounds=bounds,
                                                 random_state=SIM_SEED0 + seed)
                        b = float(res.params["x0"])
                        lo, hi = (float(v) for v in res.conf_int().loc["x0"])
                        reported = bool(np.isfinite(lo) and np.isfinite(hi))
                        yield {"set": f"sim{n_mu}_{d}_{r2}_{int(heavy)}", "n": n, "eps": eps, "seed": seed,
                               "chose": res.method, "rel_err": abs(b - b0) / abs(b0),
                               "sign": bool(np.sign(b) == np.sign(b0)), "reported": reported,
                               "covers": bool(lo <= b0 <= hi) if reported else None,
                               "width": (hi - lo) / (2 * 1.959964 * se) if reported else None, "clips": list(_LOG)}


def _load(path: str) -> dict[tuple, dict]:
    text = gzip.decompress(Path(path).read_bytes()).decode() if path.endswith(".gz") else Path(path).read_text()
    records = (json.loads(line) for line in text.splitlines())
    return {(r["set"], r["eps"], r["seed"]): r for r in records if r.get("clips") and "rel_err" in r}


def _pooled(records: list[dict]) -> tuple[float, float, float, float]:
    rep = [r for r in records if r["reported"]]
    return (float(np.median([r["rel_err"] for r in records])), float(np.mean([r["sign"] for r in records])),
            float(np.mean([r["covers"] for r in rep])) if rep else math.nan,
            float(np.median([r["width"] for r in rep])) if rep else math.nan)


def _below(record: dict, phase: int, key: str, share: float) -> bool:
    clip = next(c for c in record["clips"] if c["phase"] == phase)
    return bool(clip[key] < share * max(clip["med"], 1e-12))


def summarise(path: str, against: str | None = None) -> str:
    """The summary of ``--summarise`` (module docstring)."""
    after = _load(path)
    before = _load(against) if against else None
    keys = sorted(set(after) & set(before)) if before is not None else sorted(after)
    lines = []
    for lo, hi in BANDS:
        band = [k for k in keys if lo <= after[k]["clips"][0]["n_mu"] < hi]
        if not band:
            continue
        rs = [after[k] for k in band]
        err, sign, cov, width = _pooled(rs)
        text = f"n * mu {lo:g} to {hi:g}: {len(band)} fits ({len({k[0] for k in band})} sets)"
        if before is None:
            shares = ", ".join(f"{name} < med/8 {np.mean([_below(r, ph, key, 1 / 8) for r in rs]):.0%} "
                               f"(< med/32 {np.mean([_below(r, ph, key, 1 / 32) for r in rs]):.0%})"
                               for name, ph, key in (("C1", 1, "clip"), ("C2", 2, "clip"), ("tail", 2, "tail")))
            low = [r for r in rs if _below(r, 2, "clip", 1 / 8)]
            rest = [r for r in rs if not _below(r, 2, "clip", 1 / 8)]
            lines.append(f"{text}: error {err:.3f}, sign {sign:.0%}, covers {cov:.0%}, width {width:.1f}; {shares}")
            if low and rest:
                lines.append(f"    C2 < med/8: {len(low)} fits, error {_pooled(low)[0]:.2f}, sign "
                             f"{_pooled(low)[1]:.0%}; the others: error {_pooled(rest)[0]:.2f}, sign "
                             f"{_pooled(rest)[1]:.0%}")
        else:
            was = _pooled([before[k] for k in band])
            ratios = [math.log(after[k]["rel_err"] / before[k]["rel_err"]) for k in band
                      if after[k]["rel_err"] > 0 and before[k]["rel_err"] > 0]
            lines.append(f"{text}: error {was[0]:.3f} -> {err:.3f}, sign {was[1]:.0%} -> {sign:.0%}, covers "
                         f"{was[2]:.0%} -> {cov:.0%}, width {was[3]:.1f} -> {width:.1f}; mean log ratio of the errors "
                         f"{np.mean(ratios):+.3f} (se {np.std(ratios) / math.sqrt(len(ratios)):.3f})")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--datasets", help="held-out data sets (comma-separated)")
    p.add_argument("--simulated", action="store_true", help="the simulated designs instead")
    p.add_argument("--epsilons", default="0.5,1")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--floor", type=float, default=0.0, help="every clip at least this times k sqrt(d)")
    p.add_argument("--geometric-mean", action="store_true",
                   help="the final clip the geometric mean of the rule's clips at 0 and at the warm start, not the "
                        "smaller")
    p.add_argument("--relative-grid", help="E,B: B bins of ratio 4 from k sqrt(d) 2^E")
    p.add_argument("--jsonl", help="write the records to this file")
    p.add_argument("--summarise", help="summarise this file's records")
    p.add_argument("--against", help="with --summarise: the paired change from this file's records")
    args = p.parse_args()
    if args.summarise:
        print(summarise(args.summarise, args.against))
        return
    _VARIANT["floor"], _VARIANT["mean"] = args.floor, args.geometric_mean
    if args.relative_grid:
        exponent, bins = args.relative_grid.split(",")
        _VARIANT["grid"] = (float(exponent), int(bins))
    pgd.grid_counts, pgd._clips = _recording_grid_counts, _recording_clips  # type: ignore[assignment]
    pgd.release_quantiles = _recording_release_quantiles  # type: ignore[assignment]
    records = (simulated_fits(args.seeds) if args.simulated
               else held_out_fits(args.datasets.split(","), [float(e) for e in args.epsilons.split(",")], args.seeds))
    with open(args.jsonl or "/dev/null", "w") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")
    if args.jsonl:
        print(summarise(args.jsonl))


if __name__ == "__main__":
    main()
