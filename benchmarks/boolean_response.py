"""A boolean response on a two-level factor at small n * mu: Theil-Sen against pgd and DP-SGD.

``auto`` fits private Theil-Sen for one predictor below n * mu = 100, except when the response is boolean (a
linear probability model; its 0/1 coding is public from the dtype).  This measures why: for a 0/1 response on a
two-level factor Theil-Sen's slope is the median of the pairwise differences between the groups (0 or +/-1), not
the difference in proportions least squares estimates.

Simulation: g ~ Bernoulli(0.5), y ~ Bernoulli(0.3 + 0.2 g) as a bool column, ``y ~ C(g, levels=[0, 1])`` (no
bounds needed: the dummy and the bool response are bounded by construction), delta = 1e-6, default options;
n in {60, 120, 250}, epsilon in {0.5, 1, 3}.  Each replicate draws new data; truth = least squares on the same
data (the difference in proportions), whose standard error is the unpooled two-proportion one.  Per cell and
method: median relative error of the slope, share of 95% intervals covering the least-squares slope, median
interval width over the least-squares interval's, share of fits reporting an interval.

``--rare`` measures pgd's rule for a rare outcome instead (docs/choosing.md, "A rare outcome"): x ~ U(0, 1) with
bounds [0, 1], g ~ Bernoulli(0.5), y ~ Bernoulli(p (0.6 + 0.8 x)(0.8 + 0.4 g)) as a bool column, so that the share of
ones is p in {0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.4}, ``y ~ x + C(g, levels=[0, 1])`` fitted by pgd with the rule
switched off and the arguments it would have read (n * mu, the released share of the rarer value and its noise sd)
recorded, so that the rule as installed and the session-21 rule (withheld where the released share is below 0.1
and n * mu times it below 50) apply to the same fits (post-processing: a withheld interval is the same fit without
it); n in {100, 150, 250, 350, 400, 500, 1000, 2000, 3000}, epsilon in {0.5, 1, 3}.  Per share and band of n * mu:
the share of fits reporting an interval for x and the share of those covering least squares' slope on the same
data, with no rule, the session-21 rule and the rule as installed, and with no rule the median width of the interval
in least-squares widths (2 x 1.96 x the classical standard error on the same data).

``--rare-grid`` measures the rule's threshold on n * mu * m (m the share of the rarer value) instead: data sets of
three designs (``GRID_DESIGNS``: ``y ~ x + C(g, levels=[0, 1])`` as above; ``y ~ age + I(age**2)``, an uncentred
quadratic in an age in [18, 80] as in ISLP's Wage, the outcome most likely at 50; ``y ~ x1 + x2 + x3``, three
predictors correlated 0.5 in [-4, 4], the outcome log-linear in them), each outcome rescaled to the cell's share of
ones, at the shares ``GRID_SHARES`` and n chosen so that n * mu * share is each of ``GRID_LEVELS`` (n from the
rule's n * mu = 100 up to ``GRID_MAX_N``), epsilon 0.5, 1 and 3, fitted by pgd with the rule switched off
and its arguments recorded (as ``--rare``); per fit the headline's interval (x, age, x1) against least squares on the
same data, its width in least-squares widths and the estimate's distance from least squares in least-squares standard
errors.  The table gives, per share and level of n * mu * share, the coverage of least squares with no rule and the
share reported and coverage under the rule before session 55 (withheld where n * mu * share < 50) and the rule as
installed (n * mu * share^2 < ``RARE_MIN_N_MU_SHARE2``, or other values of it: ``--thresholds``), all applied to the
same fits (post-processing).  ``--summarise FILE[,FILE]`` re-tabulates stored records (``.gz`` read as gzip).

Run from the repository root (one process)::

    python benchmarks/boolean_response.py --reps 20      # results/boolean_response.md
    python benchmarks/boolean_response.py --rare --reps 40      # results/boolean_response_rare.md
    python benchmarks/boolean_response.py --rare-grid --reps 20 --jsonl FILE      # results/boolean_response_grid.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

import dpstats
import dpstats.methods.pgd as pgd
from dpstats.methods import spec
from dpstats.methods.registry import AutoFacts

OUT = Path(__file__).resolve().parent / "results" / "boolean_response.md"
RARE_OUT = Path(__file__).resolve().parent / "results" / "boolean_response_rare.md"
GRID_OUT = Path(__file__).resolve().parent / "results" / "boolean_response_grid.md"
RARE_SHARES, RARE_NS = (0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.4), (100, 150, 250, 350, 400, 500, 1000, 2000, 3000)
#: the bands of n * mu in which the rare-outcome table pools its fits
RARE_BANDS = (15.0, 50.0, 80.0, 100.0, 150.0, 250.0, 500.0, 1000.0)
NS, EPSILONS, METHODS = (60, 120, 250), (0.5, 1.0, 3.0), ("theilsen", "pgd", "dpsgd")
FORMULA = "y ~ C(g, levels=[0, 1])"


def one_fit(method: str, n: int, eps: float, seed: int) -> tuple[float, float, float, float]:
    """Relative error, covers (NaN without an interval), width ratio (NaN without), reported (0/1)."""
    rng = np.random.default_rng(seed)
    g = (rng.uniform(size=n) < 0.5).astype(int)
    df = pd.DataFrame({"g": g, "y": rng.uniform(size=n) < 0.3 + 0.2 * g})
    p1, p0 = df.y[df.g == 1].mean(), df.y[df.g == 0].mean()
    b_ols = p1 - p0
    se = np.sqrt(p1 * (1 - p1) / max(1, int((df.g == 1).sum())) + p0 * (1 - p0) / max(1, int((df.g == 0).sum())))
    res = dpstats.dp_ols(FORMULA, df, eps, 1e-6, method=method, random_state=10_000 + seed)
    b, (lo, hi) = float(res.params.iloc[1]), res.conf_int().to_numpy()[1]
    rel = abs(b - b_ols) / abs(b_ols) if b_ols != 0 else float("nan")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return rel, float("nan"), float("nan"), 0.0
    return rel, float(lo <= b_ols <= hi), (hi - lo) / (2 * 1.96 * se) if se > 0 else float("nan"), 1.0


def old_rare_rule(n_mu: float, minority: float | None, share_sd: float | None) -> bool:
    """The session-21 rule: withheld where the released share is below 0.1 and n * mu times it below 50."""
    return minority is not None and minority < 0.1 and n_mu * minority < 50.0


def new_rare_rule(n_mu: float, minority: float | None, share_sd: float | None) -> bool:
    """The rule as installed (``pgd.rare_outcome_reason``, kept before the benchmark switches it off)."""
    return bool(INSTALLED_RARE_REASON(n_mu, minority, share_sd))


INSTALLED_RARE_REASON = pgd.rare_outcome_reason


def rare_fit(share: float, n: int, eps: float, seed: int) -> dict[str, float]:
    """One pgd fit with the rare-outcome rule off: n * mu, the released share and its sd as the rule reads them, and
    whether the interval for x (NaN bounds: none, for a reason other than the rule) covers least squares."""
    rng = np.random.default_rng(seed)
    x, g = rng.uniform(size=n), (rng.uniform(size=n) < 0.5).astype(int)
    df = pd.DataFrame({"x": x, "g": g, "y": rng.uniform(size=n) < share * (0.6 + 0.8 * x) * (0.8 + 0.4 * g)})
    design = np.column_stack([np.ones(n), x, g])
    ols = np.linalg.lstsq(design, df.y.to_numpy(float), rcond=None)[0]
    b_ols, resid = float(ols[1]), df.y.to_numpy(float) - design @ ols
    se_ols = float(np.sqrt(resid @ resid / (n - 3) * np.linalg.inv(design.T @ design)[1, 1]))
    res, seen = fit_rule_off("y ~ x + C(g, levels=[0, 1])", df, eps, {"x": (0.0, 1.0)}, 20_000 + seed)
    lo, hi = res.conf_int().loc["x"]
    reported = bool(np.isfinite(lo) and np.isfinite(hi))
    return dict(seen, share=share, n=n, eps=eps, seed=seed, true_share=float(df.y.mean()), reported=reported,
                covers=float(lo <= b_ols <= hi) if reported else np.nan,
                width=float((hi - lo) / (2 * 1.96 * se_ols)) if reported and se_ols > 0 else np.nan)


#: ``--rare-grid``: the shares of the rarer value, the levels of n * mu * share and the largest n
GRID_SHARES = (0.01, 0.02, 0.03, 0.05, 0.07, 0.09, 0.12)
GRID_LEVELS = (20.0, 35.0, 50.0, 65.0, 80.0, 100.0, 130.0, 200.0)
GRID_MAX_N = 30_000
#: the grid's designs: formula, declared bounds and headline coefficient
GRID_DESIGNS: dict[str, tuple[str, dict[str, tuple[float, float]], str]] = {
    "x+g": ("y ~ x + C(g, levels=[0, 1])", {"x": (0.0, 1.0)}, "x"),
    "quadratic": ("y ~ age + I(age**2)", {"age": (18.0, 80.0)}, "age"),
    "correlated": ("y ~ x1 + x2 + x3", {"x1": (-4.0, 4.0), "x2": (-4.0, 4.0), "x3": (-4.0, 4.0)}, "x1"),
}


def grid_data(design: str, share: float, n: int, rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    """One data set of ``design`` (``GRID_DESIGNS``) with ones in about ``share`` of the rows, and its design matrix
    (intercept first, then the formula's columns in order) for least squares."""
    if design == "x+g":
        x, g = rng.uniform(size=n), (rng.uniform(size=n) < 0.5).astype(int)
        df, weight = pd.DataFrame({"x": x, "g": g}), (0.6 + 0.8 * x) * (0.8 + 0.4 * g)
        columns = [x, g]
    elif design == "quadratic":
        age = np.clip(rng.normal(42.0, 11.5, size=n), 18.0, 80.0)
        df, weight = pd.DataFrame({"age": age}), 0.3 + np.exp(-((age - 50.0) / 15.0) ** 2)
        columns = [age, age ** 2]
    else:
        z = rng.multivariate_normal(np.zeros(3), 0.5 + 0.5 * np.eye(3), size=n).clip(-4.0, 4.0)
        df, weight = pd.DataFrame(z, columns=["x1", "x2", "x3"]), np.exp(z @ np.array([0.5, 0.3, -0.3]))
        columns = list(z.T)
    df["y"] = rng.uniform(size=n) < np.minimum(1.0, share * weight / weight.mean())
    return df, np.column_stack([np.ones(n), *columns])


def fit_rule_off(formula: str, df: pd.DataFrame, eps: float, bounds: dict[str, tuple[float, float]],
                 seed: int) -> tuple[dpstats.DPRegressionResults, dict[str, float]]:
    """A pgd fit with the rare-outcome rule switched off, and the arguments the rule read (n * mu, the released share
    of the rarer value and its noise sd; NaN where not read)."""
    seen: dict[str, float] = {"n_mu": np.nan, "minority": np.nan, "share_sd": np.nan}

    def record(n_mu: float, minority: float | None, share_sd: float | None = None) -> str:
        seen.update(n_mu=n_mu, minority=np.nan if minority is None else minority,
                    share_sd=np.nan if share_sd is None else share_sd)
        return ""

    pgd.rare_outcome_reason = record
    try:
        res = dpstats.dp_ols(formula, df, eps, 1e-6, method="pgd", bounds=bounds, random_state=seed)
    finally:
        pgd.rare_outcome_reason = INSTALLED_RARE_REASON
    return res, seen


def grid_fit(design: str, share: float, level: float, eps: float, seed: int) -> dict[str, float | str]:
    """One fit of the ``--rare-grid`` measurement (module docstring)."""
    n = int(round(level / (share * AutoFacts(n=1, d=2, epsilon=eps, delta=1e-6, bounds=True).n_mu)))
    formula, bounds, head = GRID_DESIGNS[design]
    df, design_matrix = grid_data(design, share, n, np.random.default_rng(seed))
    y = df.y.to_numpy(float)
    ols = np.linalg.lstsq(design_matrix, y, rcond=None)[0]
    resid, k = y - design_matrix @ ols, design_matrix.shape[1]
    se_ols = float(np.sqrt(resid @ resid / (n - k) * np.linalg.inv(design_matrix.T @ design_matrix)[1, 1]))
    res, seen = fit_rule_off(formula, df, eps, bounds, 40_000 + seed)
    b, (lo, hi) = float(res.params[head]), res.conf_int().loc[head]
    reported = bool(np.isfinite(lo) and np.isfinite(hi))
    return dict(seen, design=design, share=share, level=level, n=n, eps=eps, seed=seed, true_share=float(y.mean()),
                err_se=abs(b - ols[1]) / se_ols, reported=reported, covers=float(lo <= ols[1] <= hi) if reported
                else np.nan, width=float((hi - lo) / (2 * 1.96 * se_ols)) if reported else np.nan)


def grid_cells(designs: Sequence[str]) -> list[tuple[str, float, float, float]]:
    """The grid's (design, share, level, epsilon) cells where the rule can apply: n * mu >= ``RARE_FROM_N_MU`` and
    n <= ``GRID_MAX_N``."""
    cells = []
    for design in designs:
        for share in GRID_SHARES:
            for level in GRID_LEVELS:
                for eps in EPSILONS:
                    n_mu = level / share
                    mu = AutoFacts(n=1, d=2, epsilon=eps, delta=1e-6, bounds=True).n_mu
                    if n_mu >= pgd.RARE_FROM_N_MU and n_mu / mu <= GRID_MAX_N:
                        cells.append((design, share, level, eps))
    return cells


def before_withheld(r: dict) -> bool:
    """The rule before session 55 (sessions 48 to 54), read off the fit's recorded n * mu and released share: withheld
    where the share is below 0.1 and n * mu times it below 50, from n * mu = 100 (post-processing)."""
    return bool(r["minority"] == r["minority"] and r["minority"] < 0.1 and r["n_mu"] >= 100.0
                and r["n_mu"] * r["minority"] < 50.0)


def squared_withheld(r: dict, min_n_mu_share2: float) -> bool:
    """Whether the rule as installed with ``RARE_MIN_N_MU_SHARE2`` = ``min_n_mu_share2`` withholds the fit's interval,
    read off its recorded n * mu and released share (post-processing)."""
    return bool(r["minority"] == r["minority"] and spec.rare_outcome_withheld(
        r["n_mu"], r["minority"], rare_share=pgd.RARE_SHARE, rare_min_n_mu_share2=min_n_mu_share2,
        rare_from_n_mu=pgd.RARE_FROM_N_MU))


def grid_table(records: list[dict], thresholds: Sequence[float]) -> str:
    """Per share and level of n * mu * share, pooled over designs and epsilons: fits, coverage and median width with
    no rule, the median error in least-squares standard errors, and under the rule before session 55 and the rule
    with each ``RARE_MIN_N_MU_SHARE2`` of ``thresholds`` the share of fits reporting and the coverage of those."""
    rules = [("n mu m < 50", before_withheld)] + [
        (f"n mu m^2 < {t:g}", lambda r, t=t: squared_withheld(r, t)) for t in thresholds]
    head = " | ".join(f"{label}: reported | covers" for label, _ in rules)
    lines = [f"| share | n * mu * share | fits | no rule: covers | median width | median error (se) | {head} |",
             "|---|---|---|---|---|---|" + "---|---|" * len(rules)]
    for share in GRID_SHARES:
        for level in GRID_LEVELS:
            cell = [r for r in records if r["share"] == share and r["level"] == level and r["reported"]]
            if not cell:
                continue
            parts = []
            for _, withheld in rules:
                kept = [r for r in cell if not withheld(r)]
                parts.append(f"{len(kept) / len(cell):.0%} | "
                             + (f"{np.mean([r['covers'] for r in kept]):.2f}" if kept else "-"))
            lines.append(f"| {share:g} | {level:g} | {len(cell)} | {np.mean([r['covers'] for r in cell]):.2f} | "
                         f"{np.median([r['width'] for r in cell]):.2f} | "
                         f"{np.median([r['err_se'] for r in cell]):.2f} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def rare_table(records: list[dict[str, float]]) -> str:
    """Per true share and band of n * mu: fits, the share reporting an interval under each rule and the coverage of
    least squares among those reported, with no rule and under each rule, and the median width with no rule."""
    lines = ["| share of ones | n * mu | fits | no rule: covers | median width | session-21 rule: reported | covers | "
             "rule as installed: reported | covers |", "|---|---|---|---|---|---|---|---|---|"]
    edges = (*RARE_BANDS, np.inf)

    def covers(rs: list[dict[str, float]]) -> str:
        return f"{np.mean([r['covers'] for r in rs]):.2f}" if rs else "-"

    for share in RARE_SHARES:
        for lo, hi in zip(edges[:-1], edges[1:], strict=True):
            band = [r for r in records if r["share"] == share and lo <= r["n_mu"] < hi and r["reported"]]
            if not band:
                continue
            old = [r for r in band if not old_rare_rule(r["n_mu"], r["minority"], r["share_sd"])]
            new = [r for r in band if not new_rare_rule(r["n_mu"], r["minority"], r["share_sd"])]
            label = f"{lo:g}+" if np.isinf(hi) else f"{lo:g}-{hi:g}"
            width = np.nanmedian([r["width"] for r in band])
            lines.append(f"| {share:g} | {label} | {len(band)} | {covers(band)} | {width:.2f} | "
                         f"{len(old) / len(band):.0%} | {covers(old)} | {len(new) / len(band):.0%} | {covers(new)} |")
    return "\n".join(lines)


def rare_main(reps: int, out: str, jsonl: str | None) -> None:
    """The rare-outcome measurement (module docstring, ``--rare``), written to ``out``."""
    start = time.perf_counter()
    records = [rare_fit(share, n, eps, 1000 * i + s) for i, (share, n, eps) in
               enumerate((share, n, eps) for share in RARE_SHARES for n in RARE_NS for eps in EPSILONS)
               for s in range(reps)]
    if jsonl:
        Path(jsonl).write_text("".join(json.dumps(r) + "\n" for r in records))
    seconds = time.perf_counter() - start
    text = (f"### pgd's rule for a rare two-valued outcome: no rule, the session-21 rule and the rule as installed\n\n"
            f"Command: `python benchmarks/boolean_response.py --rare --reps {reps}` ({seconds:.0f} s, one process). "
            f"{reps} data sets per (share, n, epsilon), n in {RARE_NS}, epsilon in {EPSILONS}, pooled by band of "
            "n * mu; only the fits whose interval pgd gives with the rule off (n * mu >= 15); the interval for x "
            "covering least squares' slope on the same data; its median width in least-squares widths.\n\n"
            + rare_table(records) + "\n")
    Path(out).write_text(text)
    print(text)


def grid_main(reps: int, designs: Sequence[str], thresholds: Sequence[float], out: str, jsonl: str | None,
              stored: Sequence[str]) -> None:
    """The ``--rare-grid`` measurement (module docstring), or its table of the stored records ``stored``."""
    start = time.perf_counter()
    if stored:
        records = [json.loads(line) for path in stored for line in
                   (gzip.open(path, "rt").read() if path.endswith(".gz") else Path(path).read_text()).splitlines()]
        command = (f"python benchmarks/boolean_response.py --rare-grid --summarise {','.join(stored)} --thresholds "
                   + ",".join(f"{t:g}" for t in thresholds))
    else:
        records = []
        if jsonl:
            Path(jsonl).write_text("")
        for s in range(reps):  # each data set of every cell before the next: a stopped run leaves a balanced grid
            for design, share, level, eps in grid_cells(designs):
                seed = 100_000 + 1000 * GRID_SHARES.index(share) + 100 * GRID_LEVELS.index(level) + 10 * s
                records.append(grid_fit(design, share, level, eps, seed + EPSILONS.index(eps)))
                if jsonl:
                    with Path(jsonl).open("a") as f:
                        f.write(json.dumps(records[-1]) + "\n")
        command = f"python benchmarks/boolean_response.py --rare-grid --reps {reps} --designs {','.join(designs)}"
    seconds = time.perf_counter() - start
    text = (f"### pgd's rare-outcome rule against n * mu * share\n\nCommand: `{command}` ({seconds:.0f} s, one "
            f"process). Designs {', '.join(sorted({r['design'] for r in records}))}; epsilon 0.5, 1 and 3 pooled; "
            "only the fits whose interval pgd gives with the rule off; the headline's interval covering least squares "
            "on the same data, its median width in least-squares widths, the estimate's median distance from least "
            "squares in least-squares standard errors; then, for the rule before session 55 and for each "
            "RARE_MIN_N_MU_SHARE2, the share of those fits the "
            "rule reports (post-processing of the recorded released share) and their coverage.\n\n"
            + grid_table(records, thresholds) + "\n")
    Path(out).write_text(text)
    print(text)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--out", help="the results file (default: results/boolean_response.md, with --rare "
                   "results/boolean_response_rare.md)")
    p.add_argument("--rare", action="store_true", help="measure pgd's rule for a rare outcome (module docstring)")
    p.add_argument("--jsonl", help="with --rare or --rare-grid: write the records to this file")
    p.add_argument("--rare-grid", action="store_true", help="measure the rule's threshold on n * mu * share "
                   "(module docstring)")
    p.add_argument("--designs", default=",".join(GRID_DESIGNS), help="with --rare-grid: the designs to fit")
    p.add_argument("--thresholds", default=f"{pgd.RARE_MIN_N_MU_SHARE2:g}",
                   help="with --rare-grid: the RARE_MIN_N_MU_SHARE2 values to tabulate")
    p.add_argument("--summarise", default="", help="with --rare-grid: tabulate these stored records instead")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.rare_grid:
        thresholds = list(dict.fromkeys(float(t) for t in args.thresholds.split(",")))
        grid_main(args.reps, args.designs.split(","), thresholds, args.out or str(GRID_OUT), args.jsonl,
                  [f for f in args.summarise.split(",") if f])
        return
    if args.rare:
        rare_main(args.reps, args.out or str(RARE_OUT), args.jsonl)
        return
    start = time.perf_counter()
    lines = ["| n | epsilon | n mu | method | median rel. error | covers least squares | median width / LS width "
             "| interval reported |", "|---|---|---|---|---|---|---|---|"]
    for n in NS:
        for eps in EPSILONS:
            n_mu = AutoFacts(n=n, d=2, epsilon=eps, delta=1e-6, bounds=True).n_mu
            for method in METHODS:
                a = np.array([one_fit(method, n, eps, s) for s in range(args.reps)])
                cover = f"{np.nanmean(a[:, 1]):.2f}" if np.isfinite(a[:, 1]).any() else "-"
                width = f"{np.nanmedian(a[:, 2]):.1f}" if np.isfinite(a[:, 2]).any() else "-"
                lines.append(f"| {n} | {eps:g} | {n_mu:.0f} | {method} | {np.nanmedian(a[:, 0]):.2f} | {cover} | "
                             f"{width} | {np.mean(a[:, 3]):.0%} |")
    seconds = time.perf_counter() - start
    text = (f"### A boolean response on a two-level factor: Theil-Sen against pgd and DP-SGD\n\n"
            f"Command: `python benchmarks/boolean_response.py --reps {args.reps}` ({seconds:.0f} s, one process). "
            f"{args.reps} data sets per cell; y ~ Bernoulli(0.3 + 0.2 g) as a bool column, g ~ Bernoulli(0.5); truth "
            "= least squares (the difference in proportions) on the same data.\n\n" + "\n".join(lines) + "\n")
    Path(args.out or OUT).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
