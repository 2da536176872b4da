"""Where the held-out intervals miss least squares: the privacy noise, or the fit's own target?

Run:  python benchmarks/held_out_targets.py --band 100,300 [--seeds 20] [--noise-free 2] --jsonl FILE
      python benchmarks/held_out_targets.py --datasets depredations,midwest --epsilons 1,3 --jsonl FILE
      python benchmarks/held_out_targets.py --summarise FILE[,FILE] [--against FILE[,FILE]]

Each fit is ``dp_ols(method="auto")`` on a regression of ``benchmarks/held_out.py``, with its declared bounds, levels,
missing-value rule and noise seeds (100, 101, ...), so the noisy fits reproduce that benchmark's records. ``--band
LO,HI`` fits every data set and epsilon (0.5, 1, 3) whose n * mu, as ``held_out.py --by-n-mu`` reads it, lies in [LO,
HI). Each record holds the headline's signed error against least squares on the same rows and its interval's ends,
both in least-squares standard errors (so the interval covers least squares where lo <= 0 <= hi), beside pgd's
diagnostics (n * mu, clips). ``--noise-free K`` adds K fits per cell with every Gaussian release's noise set to 0 (the
package's discrete Gaussian sampler patched to return zeros during those fits only, :func:`noise_free`; the budget
and every public rule are unchanged, the chains' public start offsets are still drawn): the estimate the procedure
aims at on these data, its clipping, ridge penalty and early stop included. This is a diagnostic only: nothing it
computes reaches a fit run without it. ``--constant pgd.NAME=VALUE`` sets a module constant for the run (as in
``real_data.py``); ``--tail-from N`` makes pgd's tail correction from n * mu = N instead of where ``pgd.tail_level``
gives a level, at the quantile level max(that level, 0.95).

``--summarise`` prints, over the noisy fits, the coverage of least squares and of the noise-free estimate (the
target), the cells whose noise-free estimate lies more than half the median interval half-width from least squares
(with the misses they carry and the noisy estimates' sd over the seeds), the median relative error of the
noise-free and the noisy estimates, and the coverage, relative error, sign and width by band of pgd's n * mu and by
epsilon; ``--against`` pairs a second run's fits with the first's by data set, epsilon and seed. The figures:
docs/choosing.md, "The band n * mu 100 to 300".
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import held_out  # noqa: E402
from real_data import constant_values, set_constants  # noqa: E402

import dpstats  # noqa: E402
import dpstats.methods.pgd as pgd  # noqa: E402
import dpstats.privacy.mechanisms as mechanisms  # noqa: E402
import dpstats.privacy.samplers as samplers  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402
from dpstats.privacy.calibration import gaussian_mu  # noqa: E402
from dpstats.privacy.missing_screen import fit_epsilon  # noqa: E402

#: the classical interval's width in standard errors
OLS_WIDTH = 2 * 1.959964
#: the bands of pgd's n * mu in the summary
BANDS = ((0.0, 100.0), (100.0, 160.0), (160.0, 250.0), (250.0, 320.0), (320.0, float("inf")))

@contextmanager
def noise_free() -> Iterator[None]:
    """Within it, every discrete Gaussian draw of the package's samplers is 0 (a release is its value on the
    mechanism's grid); the installed sampler is restored on exit.  The benchmark's diagnostic only."""
    installed = samplers.discrete_gaussian

    def zeros(s: int, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
        return np.zeros_like(installed(s, size, rng))

    samplers.discrete_gaussian = zeros  # type: ignore[assignment]
    mechanisms.discrete_gaussian = zeros  # type: ignore[attr-defined]
    try:
        yield
    finally:
        samplers.discrete_gaussian = installed  # type: ignore[assignment]
        mechanisms.discrete_gaussian = installed  # type: ignore[attr-defined]


def tail_from(start: float) -> None:
    """Make pgd's tail correction from n * mu = ``start`` (level max(the installed level, 0.95))."""
    installed = pgd.tail_level

    def level(n_mu: float) -> float | None:
        got = installed(n_mu)
        return got if got is not None else (0.95 if n_mu >= start else None)

    pgd.tail_level = level  # type: ignore[assignment]


def band_cells(lo: float, hi: float, epsilons: Sequence[float]) -> list[tuple[str, float]]:
    """The (data set, epsilon) cells of every held-out regression whose n * mu (``held_out.by_n_mu``'s) is in
    [lo, hi)."""
    cells = []
    for name, (_, formula, _, _) in held_out.SPECS.items():
        n = int(held_out.least_squares(formula, held_out.frame(name)).nobs)
        cells += [(name, eps) for eps in epsilons if lo <= n * gaussian_mu(fit_epsilon(eps, True), held_out.DELTA) < hi]
    return cells


def fits(name: str, eps: float, seeds: int, free: int) -> Iterable[dict[str, Any]]:
    """The noisy fits (``seeds`` of them, seeds 100 on) and ``free`` noise-free ones of one cell."""
    _, formula, head, declared = held_out.SPECS[name]
    df = held_out.frame(name)
    ols = held_out.least_squares(formula, df)
    b_ols, se = float(ols.params[head]), float(ols.bse[head])
    rule = {"missing": held_out.MISSING[name]} if name in held_out.MISSING else {}
    for scale, count in ((1.0, seeds), (0.0, free)):
        for seed in range(held_out.SEED0, held_out.SEED0 + count):
            with warnings.catch_warnings(), noise_free() if scale == 0.0 else nullcontext():
                warnings.simplefilter("ignore")
                try:
                    res = dpstats.dp_ols(formula, df, eps, held_out.DELTA, method="auto", bounds=declared,
                                         levels=held_out.LEVELS.get(name), random_state=seed, **rule)
                except DPStatsError as exc:
                    yield dict(set=name, eps=eps, seed=seed, noise=scale, refused=type(exc).__name__)
                    continue
            lo, hi = (float(v) for v in res.conf_int().loc[head])
            info = res.info
            yield dict(set=name, eps=eps, seed=seed, noise=scale, n=int(ols.nobs), d=len(res.params),
                       t_ols=b_ols / se, z=(float(res.params[head]) - b_ols) / se, lo=(lo - b_ols) / se,
                       hi=(hi - b_ols) / se, n_mu=info.get("n_mu"), clips=list(info.get("clips", ())),
                       tail_corrected=info.get("tail_corrected", 0))


def load(paths: str) -> list[dict[str, Any]]:
    """The fitted records of the comma-separated files, plain or gzipped (a later record of the same fit replaces an
    earlier one)."""
    def lines(path: str) -> list[str]:
        return (gzip.decompress(Path(path).read_bytes()).decode() if path.endswith(".gz")
                else Path(path).read_text()).splitlines()

    latest = {(r["set"], r["eps"], r["seed"], r["noise"]): r
              for path in paths.split(",") for r in map(json.loads, lines(path))}
    return [r for r in latest.values() if "z" in r]


def _reported(r: dict[str, Any]) -> bool:
    return bool(np.isfinite(r["lo"]) and np.isfinite(r["hi"]))


def pooled(records: list[dict[str, Any]]) -> str:
    """Coverage of least squares, median relative error, sign right and median width (OLS widths) of noisy fits."""
    rep = [r for r in records if _reported(r)]
    cover = np.mean([r["lo"] <= 0.0 <= r["hi"] for r in rep]) if rep else float("nan")
    err = np.median([abs(r["z"] / r["t_ols"]) for r in records])
    sign = np.mean([np.sign(r["z"] + r["t_ols"]) == np.sign(r["t_ols"]) for r in records])
    width = np.median([(r["hi"] - r["lo"]) / OLS_WIDTH for r in rep]) if rep else float("nan")
    return (f"{len(records)} fits: covers OLS {cover:.3f}, median rel. error {err:.3f}, sign right {sign:.3f}, "
            f"width {width:.2f}")


def summarise(records: list[dict[str, Any]]) -> str:
    """The decomposition of the misses (module docstring)."""
    cells: dict[tuple[str, float], list[dict[str, Any]]] = {}
    for r in records:
        cells.setdefault((r["set"], r["eps"]), []).append(r)
    noisy = [r for r in records if r["noise"] == 1.0]
    if not noisy:  # noise-free fits only (--seeds 0): their estimates
        return "\n".join(f"{name} at epsilon {eps:g}: noise-free estimate "
                         f"{np.median([r['z'] for r in cell]):+.2f} least-squares standard errors from least squares"
                         for (name, eps), cell in cells.items())
    rep = [r for r in noisy if _reported(r)]
    lines = [f"all: {pooled(noisy)}"]
    covers_target, err0, gapped = 0, [], []
    for (name, eps), cell in cells.items():
        free = [r["z"] for r in cell if r["noise"] == 0.0]
        fits_ = [r for r in cell if r["noise"] == 1.0 and _reported(r)]
        if not free or not fits_:
            continue
        z0 = float(np.median(free))
        covers_target += sum(r["lo"] <= z0 <= r["hi"] for r in fits_)
        err0 += [abs(z0 / cell[0]["t_ols"])] * sum(r["noise"] == 1.0 for r in cell)
        half = float(np.median([(r["hi"] - r["lo"]) / 2 for r in fits_]))
        if abs(z0) > 0.5 * half:
            spread = float(np.std([r["z"] for r in cell if r["noise"] == 1.0], ddof=1)) if len(fits_) > 1 else math.nan
            gapped.append((sum(not r["lo"] <= 0.0 <= r["hi"] for r in fits_), len(fits_), name, eps, z0, half, spread))
    if err0:
        misses = sum(not r["lo"] <= 0.0 <= r["hi"] for r in rep)
        in_gapped = sum(g[0] for g in gapped)
        fits_gapped = sum(g[1] for g in gapped)
        lines += [f"intervals covering the noise-free estimate: {covers_target / len(rep):.3f}",
                  f"median relative error: noise-free {np.median(err0):.3f}, noisy "
                  f"{np.median([abs(r['z'] / r['t_ols']) for r in noisy]):.3f}",
                  f"cells whose noise-free estimate is more than half the median half-width from least squares: "
                  f"{len(gapped)} ({fits_gapped} fits), {in_gapped} of the {misses} misses; the other "
                  f"{len(rep) - fits_gapped} fits cover in "
                  f"{1 - (misses - in_gapped) / max(len(rep) - fits_gapped, 1):.3f}"]
        lines += [f"  {name} at epsilon {eps:g}: {m} of {k} miss, noise-free estimate {z0:+.2f} standard errors, "
                  f"median half-width {half:.2f}, the noisy estimates' sd {spread:.2f}"
                  for m, k, name, eps, z0, half, spread in sorted(gapped, reverse=True)]
    for lo, hi in BANDS:
        band = [r for r in noisy if r["n_mu"] is not None and lo <= r["n_mu"] < hi]
        if band:
            lines.append(f"pgd's n * mu {lo:g} to {hi:g}: {pooled(band)}")
    for eps in sorted({r["eps"] for r in noisy}):
        lines.append(f"epsilon {eps:g}: {pooled([r for r in noisy if r['eps'] == eps])}")
    return "\n".join(lines)


def against(first: list[dict[str, Any]], second: list[dict[str, Any]]) -> str:
    """The noisy fits of both runs paired by data set, epsilon and seed: pooled figures before -> after."""
    a = {(r["set"], r["eps"], r["seed"]): r for r in first if r["noise"] == 1.0}
    b = {(r["set"], r["eps"], r["seed"]): r for r in second if r["noise"] == 1.0}
    keys = sorted(set(a) & set(b))
    lines = [f"all: {pooled([a[k] for k in keys])}\n  -> {pooled([b[k] for k in keys])}"]
    for lo, hi in BANDS:
        ks = [k for k in keys if a[k]["n_mu"] is not None and lo <= a[k]["n_mu"] < hi]
        if ks:
            lines.append(f"pgd's n * mu {lo:g} to {hi:g}: {pooled([a[k] for k in ks])}\n"
                         f"  -> {pooled([b[k] for k in ks])}")
    logs = [np.log(abs(b[k]["z"]) / abs(a[k]["z"])) for k in keys if a[k]["z"] != 0.0 and b[k]["z"] != 0.0]
    widths = [(b[k]["hi"] - b[k]["lo"]) / (a[k]["hi"] - a[k]["lo"])
              for k in keys if _reported(a[k]) and _reported(b[k])]
    if logs:
        se = np.std(logs) / np.sqrt(len(logs))
        lines.append(f"mean log ratio of the headline's error {np.mean(logs):+.3f} (se {se:.3f}); "
                     f"paired median width ratio {np.median(widths):.3f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--band", help="LO,HI: every held-out data set and epsilon with n * mu in [LO, HI)")
    p.add_argument("--datasets", help="comma-separated names (with --epsilons)")
    p.add_argument("--epsilons", default="0.5,1,3")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--noise-free", type=int, default=2, help="noise-free fits per cell")
    p.add_argument("--constant", action="append", default=[], metavar="MODULE.NAME=VALUE")
    p.add_argument("--tail-from", type=float, help="pgd's tail correction from this n * mu")
    p.add_argument("--jsonl", help="write the records to this file")
    p.add_argument("--summarise", help="only summarise the records of these files (comma-separated)")
    p.add_argument("--against", help="with --summarise: pair with the records of these files")
    args = p.parse_args(argv)
    if args.summarise:
        first = load(args.summarise)
        print(against(first, load(args.against)) if args.against else summarise(first))
        return
    set_constants(constant_values(args.constant))
    if args.tail_from is not None:
        tail_from(args.tail_from)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    if args.band:
        lo, hi = (float(v) for v in args.band.split(","))
        cells = band_cells(lo, hi, epsilons)
    elif args.datasets:
        cells = [(name, eps) for name in args.datasets.split(",") for eps in epsilons]
    else:
        raise SystemExit("give --band LO,HI or --datasets")
    out = open(args.jsonl, "w") if args.jsonl else None  # noqa: SIM115
    records = []
    for name, eps in cells:
        for r in fits(name, eps, args.seeds, args.noise_free):
            records.append(r)
            if out:
                out.write(json.dumps(r) + "\n")
                out.flush()
    if out:
        out.close()
    print(summarise([r for r in records if "z" in r]))  # refused fits are not pooled


if __name__ == "__main__":
    main()
