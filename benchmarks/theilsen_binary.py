"""Private Theil-Sen's error block for a two-valued predictor (``y ~ C(g)``): predicted against measured privacy error.

For a two-level factor the pair slopes take few distinct values; from n * epsilon = 250 on, the error block
predicts the slope's privacy error from the exponential mechanism's selection distribution on the profile the
released values imply (:class:`dpstats.methods.theilsen.TwoValueProfile`; "after") instead of the linearised rank
error times the slope's released quarter-radius ("before": the same fit with
``TwoValueProfile.from_released`` returning None).

Simulation: g ~ Bernoulli(share), y = 1 + 0.5 g + e, e standard normal, ``y ~ C(g, levels=[0, 1])`` with y's
bounds the population mean +/- 6 sd, delta = 1e-6, default options (16 matchings, intervals on); n in {100, 300,
1000, 3000, 10000}, epsilon in {0.5, 1, 3}, share in {0.5, 0.2, 0.05}, cells with n * epsilon >= 250 (``--all``:
every cell).  Each replicate draws new data and fits twice with the same seed (before and after), checking that
the estimates and intervals are bit-identical.

Measured privacy error of a fit: the released slope minus the median of the same k-matching's pair slopes
(pairs with equal x count half below and half above, so the median of the others), and the released intercept
minus the median of y - b x at that non-private slope (both on the clipped data): the mechanisms' error alone,
without the matching's sampling error.  Per cell: the root mean square over replicates of the predicted error
(``res.error_bounds.coefficients.privacy``) over the root mean square of the measured one; the target (issue
18) is a ratio in [1/3, 3].

Run from the repository root (one process)::

    python benchmarks/theilsen_binary.py --reps 30      # results/theilsen_binary/{records.json.gz,summary.md}
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]  # this checkout's dpstats
import dpstats  # noqa: E402
from dpstats.methods import theilsen  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "theilsen_binary"
NS = (100, 300, 1000, 3000, 10000)
EPSILONS = (0.5, 1.0, 3.0)
SHARES = (0.5, 0.2, 0.05)
DELTA = 1e-6
BETA = 0.5
FORMULA = "y ~ C(g, levels=[0, 1])"

#: the pairs of the last fit's slope pass, as global row indices (filled by the wrapper of SlopePass._count_window)
PAIRS: list[tuple[np.ndarray, np.ndarray]] = []
_COUNT_WINDOW = theilsen.SlopePass._count_window
_FROM_RELEASED = vars(theilsen.TwoValueProfile)["from_released"]  # the classmethod itself


def _recording_count_window(self: theilsen.SlopePass, acc: Any, j: int, xs: np.ndarray, ys: np.ndarray) -> None:
    first, second = self.pairing.local_pairs(j)
    start = self.pairing.start(j)
    PAIRS.append((start + first, start + second))
    _COUNT_WINDOW(self, acc, j, xs, ys)


def draw(n: int, share: float, rng: np.random.Generator) -> tuple[pd.DataFrame, tuple[float, float]]:
    """One data set and y's public bounds."""
    g = (rng.uniform(size=n) < share).astype(int)
    y = 1.0 + BETA * g + rng.normal(size=n)
    mean, sd = 1.0 + BETA * share, math.sqrt(BETA**2 * share * (1 - share) + 1.0)
    return pd.DataFrame({"g": g, "y": y}), (mean - 6 * sd, mean + 6 * sd)


def fit(df: pd.DataFrame, bounds: tuple[float, float], eps: float, seed: int, after: bool) -> Any:
    """One fit; ``after=False`` turns the two-valued error path off (the error block of before the change)."""
    if not after:
        theilsen.TwoValueProfile.from_released = staticmethod(lambda *args: None)  # type: ignore[method-assign]
    PAIRS.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dpstats.dp_ols(FORMULA, df, eps, DELTA, method="theilsen", bounds={"y": bounds},
                                  random_state=seed)
    finally:
        theilsen.TwoValueProfile.from_released = _FROM_RELEASED  # type: ignore[method-assign]


def nonprivate(df: pd.DataFrame, bounds: tuple[float, float]) -> tuple[float, float]:
    """The median of the last fit's pair slopes (ties left out: they count half on each side) and the median
    residual at it, on the clipped data."""
    x = df["g"].to_numpy(float)
    y = np.clip(df["y"].to_numpy(float), *bounds)
    first = np.concatenate([p[0] for p in PAIRS])
    second = np.concatenate([p[1] for p in PAIRS])
    dx = x[second] - x[first]
    keep = dx != 0
    b = float(np.median((y[second] - y[first])[keep] / dx[keep]))
    return float(np.median(y - b * x)), b


def record(res: Any, truth: tuple[float, float]) -> dict[str, Any]:
    privacy = res.error_bounds.coefficients.privacy
    return {"pred_a": float(privacy[0]), "pred_b": float(privacy[1]),
            "err_a": float(res.params.iloc[0]) - truth[0], "err_b": float(res.params.iloc[1]) - truth[1]}


def identical(before: Any, after: Any) -> bool:
    """Estimates, standard errors and intervals bit-identical."""
    same = np.array_equal(before.params.to_numpy(), after.params.to_numpy())
    same &= np.array_equal(before.bse.to_numpy(), after.bse.to_numpy(), equal_nan=True)
    return bool(same and np.array_equal(before.conf_int().to_numpy(), after.conf_int().to_numpy(), equal_nan=True))


def run(reps: int, ns: Sequence[int], epsilons: Sequence[float], shares: Sequence[float], every: bool) -> list[dict]:
    theilsen.SlopePass._count_window = _recording_count_window  # type: ignore[method-assign]
    out = []
    started = time.perf_counter()
    for n in ns:
        for eps in epsilons:
            if n * eps < theilsen.SIMULATE_BELOW_N_EPSILON and not every:
                continue
            for share in shares:
                for r in range(reps):
                    rng = np.random.default_rng([n, int(eps * 10), int(share * 100), r])
                    df, bounds = draw(n, share, rng)
                    before = fit(df, bounds, eps, 1000 + r, after=False)
                    after = fit(df, bounds, eps, 1000 + r, after=True)
                    truth = nonprivate(df, bounds)
                    out.append({"n": n, "epsilon": eps, "share": share, "rep": r, "identical": identical(before, after),
                                "before": record(before, truth), "after": record(after, truth)})
            print(f"n={n} eps={eps}: {time.perf_counter() - started:.0f} s", flush=True)
    return out


def _rms(values: Sequence[float]) -> float:
    return math.sqrt(float(np.mean(np.square(values))))


def cells(records: list[dict]) -> list[dict]:
    """Per (n, epsilon, share): the ratios of predicted to measured rms, before and after."""
    keyed: dict[tuple, list[dict]] = {}
    for r in records:
        keyed.setdefault((r["n"], r["epsilon"], r["share"]), []).append(r)
    out = []
    for (n, eps, share), recs in sorted(keyed.items()):
        row: dict[str, Any] = {"n": n, "epsilon": eps, "share": share, "reps": len(recs),
                               "identical": all(r["identical"] for r in recs)}
        for when in ("before", "after"):
            for c in ("a", "b"):
                measured = _rms([r[when][f"err_{c}"] for r in recs])
                row[f"{when}_{c}"] = _rms([r[when][f"pred_{c}"] for r in recs]) / measured if measured > 0 else math.nan
        out.append(row)
    return out


def _within(x: float) -> bool:
    return 1 / 3 <= x <= 3


def summary(records: list[dict]) -> str:
    rows = cells(records)
    lines = ["| n | epsilon | share | reps | slope before | slope after | intercept before | intercept after | "
             "bit-identical |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']} | {r['epsilon']:g} | {r['share']:g} | {r['reps']} | {r['before_b']:.2f} | "
                     f"{r['after_b']:.2f} | {r['before_a']:.2f} | {r['after_a']:.2f} | "
                     f"{'yes' if r['identical'] else 'NO'} |")
    big = [r for r in rows if r["n"] * r["epsilon"] >= theilsen.SIMULATE_BELOW_N_EPSILON]
    counts = {k: sum(_within(r[k]) for r in big) for k in ("before_b", "after_b", "before_a", "after_a")}
    fits = sum(r["reps"] for r in rows)
    head = (f"Predicted / measured privacy error (root mean squares over replicates), {len(big)} cells with "
            f"n * epsilon >= 250: slope within [1/3, 3] in {counts['before_b']} before, {counts['after_b']} after; "
            f"intercept {counts['before_a']} before, {counts['after_a']} after.  Estimates, standard errors and "
            f"intervals bit-identical in {sum(r['identical'] for r in records)} of {fits} fit pairs.\n\n")
    return head + "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--ns", default=",".join(map(str, NS)))
    ap.add_argument("--epsilons", default=",".join(map(str, EPSILONS)))
    ap.add_argument("--shares", default=",".join(map(str, SHARES)))
    ap.add_argument("--all", action="store_true", help="also the cells with n * epsilon < 250")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    started = time.perf_counter()
    records = run(args.reps, [int(v) for v in args.ns.split(",")], [float(v) for v in args.epsilons.split(",")],
                  [float(v) for v in args.shares.split(",")], args.all)
    args.out.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out / "records.json.gz", "wt") as f:
        json.dump(records, f)
    text = (f"Command: `python benchmarks/theilsen_binary.py {' '.join(sys.argv[1:] if argv is None else argv)}` "
            f"({time.perf_counter() - started:.0f} s, one process).\n\n" + summary(records))
    (args.out / "summary.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
