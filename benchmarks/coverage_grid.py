"""Coverage of private confidence intervals where users are (issue 18, part 2): a grid of realistic settings.

Run:  python benchmarks/coverage_grid.py [--quick] [--reps 100] [--methods ssp adassp ...] [--jobs 2]
                                         [--designs correlated] [--jsonl rows.jsonl]
                                         [--out benchmarks/results/coverage_grid.md]
      python benchmarks/coverage_grid.py --assemble rows.jsonl [...] --out benchmarks/results/coverage_grid.md

The methods are read from the registry: every private method whose
``MethodSpec.inference_rule`` gives inference (a method registered later joins
the grid without a change here; ``--methods`` picks some).  The grid:

* n in {100, 1000, 10^4, 10^5}; d in {2, 5, 10, 20} coefficients (an
  intercept and d - 1 covariates);
* design ``correlated``: x ~ N(0, R) with R_jk = 0.6^|j - k|; ``skewed``:
  x_j = exp(0.75 z_j) - 1 with z ~ N(0, R) (log-normal, correlated);
* y = 1 + x'beta + e, beta_j = (-1)^j / sqrt(d - 1), e ~ N(0, 1);
* bounds ``loose``: the declared ranges are 3x wider than needed (x in
  +-6 sd of a column for the correlated design, [-1, 6 e^(2.25) - 1] for the skewed;
  y in +-3 times the largest |1 + x'beta| plus 6 sd of e, so nothing is
  clipped); ``tight``: about the 1st and 99th percentiles of each column and
  of y (about 2% of each column clipped: the fit estimates the clipped data's
  regression, so the truth is not what its intervals are for);
* epsilon in {0.3, 1, 3}, delta = 1e-6.

Each fit goes through ``dp_ols_arrays`` with the default options (so
``inference=True``).  Per setting (method, n, d, design, bounds, epsilon) and
over ``--reps`` simulated data sets it records:

* ``reported``: the share of fits that report intervals (not refused, not
  withheld);
* ``coverage``: of the true coefficients by the nominal 95% intervals, all
  coefficients pooled, over the fits that report; ``coverage_ls``: of the
  least-squares coefficients of the clipped data (the intervals' estimand);
  ``coverage_mc_sd``: the Monte Carlo sd of ``coverage``, with each fit's
  coefficients as one cluster (:func:`cluster_mc_sd`); the summary counts
  the settings more than two of these sds below or above 0.95 (rows from
  before this field use the binomial sd of independent coefficients);
* ``width``: the median over fits of the mean ratio of the interval's width
  to the OLS interval's on the same (unclipped) data, i.e. the ratio of
  standard errors;
* ``privacy_ratio``: measured over predicted privacy error, the root mean
  square of (released coefficient - least squares on the clipped data) over
  the root mean square of the error block's predicted privacy error
  (``res.error_bounds.coefficients.privacy``), over every released fit.

``auto`` (``--methods ... auto``; what users get by default) is not fitted
again: its choice is a public function of (n, d, epsilon, delta, bounds)
(:func:`dpstats.methods.registry.choose_auto`) and a fit with
``method="auto"`` is the chosen method's fit with its default options (the
same coefficients and intervals at the same seed), so each auto row is the
row of the method it chooses there, and "no interval" (reported 0) where it
chooses one that gives none (dpsgd below pgd's n * mu threshold).  A
method with ``max_columns`` (theilsen: d = 2) runs only where it fits, and
``--max-n pgd=10000`` skips a method's larger settings (pgd at n = 10^5,
where auto chooses adassp, costs about 10 s a fit); ``--designs correlated`` keeps one design.

The seed of a setting depends only on the method's name and the setting, so a
run of some methods reproduces the rows of the full run; ``--jsonl`` appends
each row as it finishes, and a rerun with the same ``--jsonl`` skips the
settings already in it (so an interrupted run resumes).  ``--quick`` runs n = 10^4, d in {2, 5}, epsilon = 1,
the correlated design with both bounds, 30 reps (about a minute).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats

import dpstats  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402
from dpstats.methods.registry import AutoFacts, available_methods, choose_auto, get_method  # noqa: E402

GRID_N = (100, 1000, 10_000, 100_000)
GRID_D = (2, 5, 10, 20)
GRID_DESIGN = ("correlated", "skewed")
GRID_BOUNDS = ("loose", "tight")
GRID_EPS = (0.3, 1.0, 3.0)
DELTA = 1e-6
BAND = (0.93, 0.97)
RHO = 0.6
SKEW = 0.75
OUT = Path("benchmarks/results/coverage_grid.md")


def interval_methods() -> list[str]:
    """Every private registered method that gives inference (read from the registry)."""
    return sorted(name for name, spec in available_methods().items()
                  if spec.private and spec.inference_rule.kind != "none")


@dataclass(frozen=True)
class Setting:
    method: str
    n: int
    d: int
    design: str
    bounds: str
    epsilon: float

    @property
    def seed(self) -> int:
        """Depends only on the method's name and the setting."""
        key = f"{self.method}|{self.n}|{self.d}|{self.design}|{self.bounds}|{self.epsilon}"
        return zlib.crc32(key.encode())


# -- data ---------------------------------------------------------------------------------------------------------

def correlation(p: int) -> np.ndarray:
    idx = np.arange(p)
    return RHO ** np.abs(idx[:, None] - idx[None, :])


def coefficients(d: int) -> np.ndarray:
    """Intercept 1 and slopes (-1)^j / sqrt(d - 1)."""
    p = d - 1
    return np.r_[1.0, (-1.0) ** np.arange(p) / math.sqrt(p)]


def simulate(n: int, d: int, design: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    p = d - 1
    z = rng.standard_normal((n, p)) @ np.linalg.cholesky(correlation(p)).T
    X = z if design == "correlated" else np.exp(SKEW * z) - 1.0
    y = X @ coefficients(d)[1:] + coefficients(d)[0] + rng.standard_normal(n)
    return X, y


def declared_bounds(d: int, design: str, bounds: str) -> tuple[list[tuple[float, float]], tuple[float, float]]:
    """Public ranges of the covariates and of y (from the design's known law, never from a sample)."""
    p = d - 1
    beta = coefficients(d)
    if design == "correlated":
        lo, hi = (-6.0, 6.0) if bounds == "loose" else (-2.33, 2.33)  # N(0,1): 1st and 99th percentiles
    else:
        lo, hi = ((-1.0, 6.0 * math.exp(3 * SKEW) - 1.0) if bounds == "loose"
                  else (math.exp(-2.33 * SKEW) - 1.0, math.exp(2.33 * SKEW) - 1.0))
    if bounds == "loose":
        reach = abs(beta[0]) + np.sum(np.abs(beta[1:])) * max(abs(lo), abs(hi))
        y = (-3.0 * reach - 6.0, 3.0 * reach + 6.0)
    else:
        sd = _linear_sd(d, design)
        y = (beta[0] + _linear_mean(d, design) - 2.33 * sd, beta[0] + _linear_mean(d, design) + 2.33 * sd)
    return [(lo, hi)] * p, y


def _linear_mean(d: int, design: str) -> float:
    """E[x'beta] (the log-normal columns have mean e^(s^2/2) - 1)."""
    mean = 0.0 if design == "correlated" else math.exp(SKEW**2 / 2) - 1.0
    return float(np.sum(coefficients(d)[1:]) * mean)


def _linear_sd(d: int, design: str) -> float:
    """sd of x'beta + e, from the design's law."""
    p = d - 1
    r = correlation(p)
    if design == "correlated":
        cov = r
    else:
        s2 = SKEW**2
        cov = math.exp(s2) * (np.exp(s2 * r) - 1.0)  # covariance of correlated log-normals
    b = coefficients(d)[1:]
    return math.sqrt(float(b @ cov @ b) + 1.0)


# -- one setting ----------------------------------------------------------------------------------------------------

def _least_squares(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and standard errors with an intercept (NOT PRIVATE: the benchmark's reference)."""
    A = np.column_stack([np.ones(len(y)), X])
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    sigma2 = float(resid @ resid) / max(len(y) - A.shape[1], 1)
    se = np.sqrt(np.diag(sigma2 * np.linalg.pinv(A.T @ A)))
    return coef, se


def no_interval_row(setting: Setting, why: str) -> dict:
    """The row of a setting where the method's public size rule gives no interval (``InferenceRule.reports_at``:
    pgd below n * mu = 15, theilsen below n * epsilon = 250): nothing is fitted (the rule is public and the
    plan's tests check that fits follow it)."""
    nan = float("nan")
    return asdict(setting) | {"reps": 0, "refused": nan, "withheld": 1.0, "reported": 0.0, "coverage": nan,
                              "coverage_mc_sd": nan, "worst_coef": nan, "coverage_ls": nan, "width": nan,
                              "privacy_ratio": nan, "note": why}


def cluster_mc_sd(covered: np.ndarray) -> float:
    """Monte Carlo sd of the pooled coverage of ``covered`` (fits x coefficients, booleans), with the fits as
    clusters (a fit's coefficients share its noise, so they do not cover independently): the sd over fits of each
    fit's covered share over sqrt(fits), never below the binomial sd of a pooled coverage of 0.95 over every
    coefficient (a setting that covers everything has no spread of its own to show)."""
    fits, d = covered.shape
    shares = covered.mean(axis=1)
    cluster = float(np.std(shares, ddof=1) / math.sqrt(fits)) if fits > 1 else math.inf
    return max(cluster, math.sqrt(0.95 * 0.05 / (fits * d)))


def run_setting(setting: Setting, reps: int) -> dict:
    rule = get_method(setting.method).inference_rule
    if not rule.reports_at(setting.n, setting.epsilon, DELTA):
        return no_interval_row(setting, "no interval by the method's public size rule")
    rng = np.random.default_rng(setting.seed)
    truth = coefficients(setting.d)
    x_bounds, y_bounds = declared_bounds(setting.d, setting.design, setting.bounds)
    lo, hi = np.array([b[0] for b in x_bounds]), np.array([b[1] for b in x_bounds])
    covered, covered_ls, widths, errors, predicted = [], [], [], [], []
    refused = withheld = 0
    for r in range(reps):
        X, y = simulate(setting.n, setting.d, setting.design, rng)
        try:
            res = dpstats.dp_ols_arrays(X, y, setting.epsilon, DELTA, method=setting.method, x_bounds=x_bounds,
                                        y_bounds=y_bounds, intercept=True, random_state=setting.seed + r)
        except DPStatsError:
            refused += 1
            continue
        target, _ = _least_squares(np.clip(X, lo, hi), np.clip(y, *y_bounds))
        split = res.error_bounds.coefficients
        if split is not None and split.released:
            errors.append(res.params.to_numpy() - target)
            predicted.append(split.privacy)
        if not res.inference_available:
            withheld += 1
            continue
        _, ols_se = _least_squares(X, y)
        ci = res.conf_int().to_numpy()
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        covered_ls.append((ci[:, 0] <= target) & (target <= ci[:, 1]))
        widths.append(float(np.mean((ci[:, 1] - ci[:, 0]) / (2 * 1.959964 * ols_se))))
    row = asdict(setting) | {"reps": reps, "refused": refused / reps, "withheld": withheld / reps,
                             "reported": len(covered) / reps}
    nan = float("nan")
    row["coverage"] = float(np.mean(covered)) if covered else nan
    row["coverage_mc_sd"] = cluster_mc_sd(np.asarray(covered)) if covered else nan
    row["worst_coef"] = float(np.min(np.mean(covered, axis=0))) if covered else nan
    row["coverage_ls"] = float(np.mean(covered_ls)) if covered_ls else nan
    row["width"] = float(np.median(widths)) if widths else nan
    row["privacy_ratio"] = (float(np.sqrt(np.mean(np.square(errors))) / np.sqrt(np.mean(np.square(predicted))))
                            if errors else nan)
    return row


def cells(quick: bool, designs: tuple[str, ...] = GRID_DESIGN) -> list[tuple[int, int, str, str, float]]:
    """(n, d, design, bounds, epsilon) of the grid (n > d), for the designs in ``designs``."""
    if quick:
        grid = itertools.product((10_000,), (2, 5), ("correlated",), GRID_BOUNDS, (1.0,))
    else:
        grid = itertools.product(GRID_N, GRID_D, GRID_DESIGN, GRID_BOUNDS, GRID_EPS)
    return [cell for cell in grid if cell[0] > cell[1] and cell[2] in designs]


def settings(methods: list[str], quick: bool, max_n: dict[str, int] | None = None,
             designs: tuple[str, ...] = GRID_DESIGN) -> list[Setting]:
    """The settings to fit: every grid cell of each method (not ``auto``: its rows are derived) that the method
    can fit (``max_columns``), of the designs in ``designs``, that ``max_n`` keeps."""
    out = []
    for m in methods:
        if m == "auto":
            continue
        wide = get_method(m).max_columns
        out += [Setting(m, n, d, design, bounds, eps) for n, d, design, bounds, eps in cells(quick, designs)
                if (wide is None or d <= wide) and n <= (max_n or {}).get(m, n)]
    return out


def auto_rows(rows: list[dict], quick: bool, designs: tuple[str, ...] = GRID_DESIGN) -> list[dict]:
    """auto's row in each grid cell: the row of the method it chooses there (module docstring), or a row without
    intervals where that method gives none; cells whose chosen method was not run are left out."""
    by_setting = {(r["method"], r["n"], r["d"], r["design"], r["bounds"], r["epsilon"]): r for r in rows}
    out = []
    for n, d, design, bounds, eps in cells(quick, designs):
        chosen = choose_auto(AutoFacts(n=n, d=d, epsilon=eps, delta=DELTA, bounds=True, intercept=True))
        if chosen is None:
            continue
        spec, rule = chosen
        base = {"method": "auto", "n": n, "d": d, "design": design, "bounds": bounds, "epsilon": eps,
                "chosen": spec.name}
        if spec.inference_rule.kind == "none":
            out.append(no_interval_row(Setting("auto", n, d, design, bounds, eps), f"auto chooses {spec.name}")
                       | {"chosen": spec.name})
        elif (spec.name, n, d, design, bounds, eps) in by_setting:
            out.append(by_setting[(spec.name, n, d, design, bounds, eps)] | base)
    return out


# -- report ---------------------------------------------------------------------------------------------------------

def _fmt(x: object) -> str:
    if isinstance(x, float):
        return "" if math.isnan(x) else f"{x:.3g}"
    return str(x)


def _cell_name(r: pd.Series) -> str:
    return f"{r['design'][:4]}/{r['bounds']} n={r['n']:g} d={r['d']} eps={r['epsilon']:g}"


def summary_table(frame: pd.DataFrame) -> str:
    """Per method: settings, how many report, coverage inside / below / above the band, the share of fits that
    report, the median width, and the settings that miss the band (coverage shown)."""
    head = ["method", "settings", "settings that report", f"coverage in {list(BAND)}", "below", "above",
            "below by > 2 MC sd", "above by > 2 MC sd", "loose bounds: in band / below / above",
            "coverage of clipped LS >= 0.93", "fits that report", "median width / OLS", "median privacy_ratio"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    misses = []
    for method, part in frame.groupby("method", sort=False):
        rep = part[part["reported"] > 0]
        cov = rep["coverage"]
        below, above = rep[cov < BAND[0]], rep[cov > BAND[1]]
        mc_sd = np.sqrt(0.95 * 0.05 / (rep["reported"] * rep["reps"] * rep["d"]))  # binomial, coefficients pooled
        if "coverage_mc_sd" in rep:  # rows run since session 38 carry the sd with the fits as clusters
            mc_sd = rep["coverage_mc_sd"].fillna(mc_sd)
        loose = rep[rep["bounds"] == "loose"]["coverage"]
        lines.append(f"| {method} | {len(part)} | {len(rep)} | {int(cov.between(*BAND).sum())} | {len(below)} | "
                     f"{len(above)} | {int((cov < 0.95 - 2 * mc_sd).sum())} | {int((cov > 0.95 + 2 * mc_sd).sum())} | "
                     f"{int(loose.between(*BAND).sum())} / {int((loose < BAND[0]).sum())} / "
                     f"{int((loose > BAND[1]).sum())} | {int((rep['coverage_ls'] >= BAND[0]).sum())} | "
                     f"{np.mean(part['reported']):.0%} | {np.nanmedian(rep['width']):.3g} | "
                     f"{np.nanmedian(part['privacy_ratio']):.2f} |")
        for what, miss in (("below", below), ("above", above)):
            if len(miss):
                shown = "; ".join(f"{_cell_name(r)}: {r['coverage']:.3f}" for _, r in
                                  miss.sort_values("coverage").iterrows())
                misses.append(f"* {method}, {what} {BAND[0] if what == 'below' else BAND[1]}: {shown}")
    return "\n".join(lines + [""] + misses)


def report(rows: list[dict], command: str) -> str:
    frame = pd.DataFrame(rows).sort_values(["method", "design", "bounds", "n", "d", "epsilon"])
    lines = ["### Coverage on the realistic grid (issue 18)", "", f"Command: `{command}`.", "",
             "#### Summary", "", summary_table(frame), "",
             "Columns: `reported` = share of fits that report intervals (not refused, not withheld); `coverage` = "
             "share of true coefficients inside the nominal 95% intervals (pooled, over reported fits); "
             "`coverage_mc_sd` = its Monte Carlo sd, each fit's coefficients one cluster (blank in rows run before "
             "session 38, where the summary uses the binomial sd of independent coefficients); "
             "`worst` = the least-covered coefficient; `coverage_ls` = coverage of the least-squares "
             "coefficients of the clipped data; `width` = median over fits of the interval width over the OLS "
             "interval's (ratio of standard errors); `privacy_ratio` = measured / predicted privacy error "
             "(root mean squares of released minus clipped least squares, and of the error block's prediction).",
             ""]
    for method, part in frame.groupby("method"):
        rep = part[part["reported"] > 0]
        inside = rep["coverage"].between(*BAND)
        lines += [f"#### {method}", "",
                  f"Reported in {np.mean(part['reported']):.0%} of all fits; coverage of the truth in "
                  f"{BAND} in {int(inside.sum())} of {len(rep)} settings that report (loose bounds: "
                  f"{int(inside[rep['bounds'] == 'loose'].sum())} of {int((rep['bounds'] == 'loose').sum())}); "
                  f"median width {np.nanmedian(rep['width']):.3g}x OLS; privacy_ratio median "
                  f"{np.nanmedian(part['privacy_ratio']):.2f}, range {np.nanmin(part['privacy_ratio']):.2f}-"
                  f"{np.nanmax(part['privacy_ratio']):.2f}.", ""]
        cols = ["design", "bounds", "n", "d", "epsilon", "reported", "coverage", "coverage_mc_sd", "worst_coef",
                "coverage_ls", "width", "privacy_ratio"] + (["chosen"] if method == "auto" else [])
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "|".join("---" for _ in cols) + "|")
        for _, r in part.iterrows():
            lines.append("| " + " | ".join(_fmt(r[c]) for c in cols) + " |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--methods", nargs="*", default=None)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--jsonl", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--assemble", nargs="*", type=Path, default=None)
    parser.add_argument("--max-n", nargs="*", default=[], help="METHOD=N: skip the method's settings with n > N")
    parser.add_argument("--designs", nargs="*", choices=GRID_DESIGN, default=list(GRID_DESIGN),
                        help="run only these designs (default: all)")
    args = parser.parse_args()
    designs = tuple(args.designs)
    max_n = {k: int(v) for k, v in (item.split("=") for item in args.max_n)}
    command = "python benchmarks/coverage_grid.py " + " ".join(
        a for a in ["--quick" if args.quick else "", f"--reps {args.reps}" if args.reps else "",
                    ("--methods " + " ".join(args.methods)) if args.methods else "",
                    ("--max-n " + " ".join(args.max_n)) if args.max_n else "",
                    ("--designs " + " ".join(designs)) if designs != GRID_DESIGN else ""] if a)
    methods = args.methods or interval_methods()
    if args.assemble:
        rows = [json.loads(line) for path in args.assemble for line in path.read_text().splitlines() if line]
        rows = [r for r in rows if r["method"] != "auto"]
        args.out.write_text(report(rows + (auto_rows(rows, args.quick, designs) if "auto" in methods else []), command)
                            + "\n")
        return
    reps = args.reps or (30 if args.quick else 100)
    done = []
    if args.jsonl and args.jsonl.exists():
        done = [json.loads(line) for line in args.jsonl.read_text().splitlines() if line]
    keys = {(r["method"], r["n"], r["d"], r["design"], r["bounds"], r["epsilon"], r["reps"]) for r in done}
    keys |= {k[:-1] + (reps,) for k in keys if k[-1] == 0}  # rows of the public size rule hold for any reps
    todo = [s for s in settings(methods, args.quick, max_n, designs)
            if (s.method, s.n, s.d, s.design, s.bounds, s.epsilon, reps) not in keys]
    rows, start = [r for r in done if r["reps"] in (reps, 0)], time.time()
    with ProcessPoolExecutor(args.jobs) if args.jobs > 1 else _Serial() as pool:
        for row in pool.map(run_setting, todo, [reps] * len(todo)):
            rows.append(row)
            if args.jsonl:
                with args.jsonl.open("a") as fh:
                    fh.write(json.dumps(row) + "\n")
            print(f"[{time.time() - start:7.0f}s] {json.dumps(row)}", flush=True)
    text = report(rows + (auto_rows(rows, args.quick, designs) if "auto" in methods else []), command)
    args.out.write_text(text + "\n")
    print(text)


class _Serial:
    """map() in this process (``--jobs 1``)."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def map(self, fn, *iterables):  # noqa: ANN001, ANN201 - mirrors Executor.map
        return map(fn, *iterables)


if __name__ == "__main__":
    main()
