"""A power beside slopes by group without the variable's main effect; a power beside an implicit intercept, no bounds.

``y ~ C(g) + C(g):x + I(x**2)`` (and ``y ~ C(g):x + I(x**2)``) has no column ``x``: x enters through its products
with the full set of g's dummies, which sum to x on every row.  With every bound declared, the default
``rescale="centred"`` centres the power at the midpoint of x's declared range, its linear term spread over those
columns (docs/choosing.md, "Products and powers"); ``rescale=True`` fits the columns as written, which is what the
default did before.  The same model with x's main effect, ``y ~ C(g) * x + I(x**2)``, and a quadratic without the
factor, ``y ~ x + I(x**2)``, both centred, are the references.

Without bounds, pgd fits ``y ~ 0 + C(g) + x + I(x**2)`` (the constant implicit in g's full dummies) through its
intercept model (the first dummy replaced by the constant) and centres the power at its released mean; with
``rescale=False`` it fits the columns as written, without the intercept model, which is what the default did
before.  ``y ~ C(g) + x + I(x**2)`` without bounds is the reference.

y = 1 + 0.5 [g = b] - 0.3 [g = c] + (0.2 + 0.05 [g = b]) x - 0.003 x^2 + e, x ~ U[20, 40], g uniform on three
levels, e ~ N(0, 0.5^2); bounds x in [0, 60], y in [-10, 20] (or none); delta = 1e-6, the default method, noise
seed s and data set s for s = 0..reps-1, at each epsilon and n.  Per coefficient: the median over the fits of
|coefficient - least squares| / least squares' standard error (statsmodels OLS on the same data and formula), and
how many fits' 95% intervals cover least squares; the table gives the largest median and the smallest count over
the coefficients (and whose).

Run from the repository root (one process)::

    python benchmarks/factored_power.py --reps 20      # results/factored_power.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import statsmodels.formula.api as smf

import dpstats

OUT = Path(__file__).resolve().parent / "results" / "factored_power.md"
DELTA = 1e-6
LEVELS = ["a", "b", "c"]
BOUNDS = {"x": (0.0, 60.0), "y": (-10.0, 20.0)}
EPSILONS = (1.0, 3.0)
SIZES = (1000, 5000)

#: (formula, rescale, bounds declared, label)
FITS = (("y ~ C(g) + C(g):x + I(x**2)", True, True, "as written (rescale=True; the default before)"),
        ("y ~ C(g) + C(g):x + I(x**2)", "centred", True, "centred (default)"),
        ("y ~ C(g):x + I(x**2)", True, True, "as written (rescale=True; the default before)"),
        ("y ~ C(g):x + I(x**2)", "centred", True, "centred (default)"),
        ("y ~ C(g) * x + I(x**2)", "centred", True, "reference: x's main effect written, centred"),
        ("y ~ x + I(x**2)", "centred", True, "reference: no factor, centred"),
        ("y ~ 0 + C(g) + x + I(x**2)", False, False, "as written, no intercept model (rescale=False; the default "
         "before)"),
        ("y ~ 0 + C(g) + x + I(x**2)", "centred", False, "intercept model, centred at the released mean (default)"),
        ("y ~ C(g) + x + I(x**2)", "centred", False, "reference: intercept written, centred at the released mean"))


def frame(n: int, seed: int) -> pd.DataFrame:
    """The simulated data set of seed ``seed`` (module docstring)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(20, 40, n), "g": pd.Categorical(rng.choice(LEVELS, n), categories=LEVELS)})
    b, c = (df.g == "b").to_numpy(), (df.g == "c").to_numpy()
    df["y"] = 1 + 0.5 * b - 0.3 * c + (0.2 + 0.05 * b) * df.x - 0.003 * df.x**2 + rng.normal(0, 0.5, n)
    return df


def measure(formula: str, rescale: bool | str, bounds: bool, epsilon: float, n: int, reps: int
            ) -> tuple[dict[str, float], dict[str, int], str]:
    """Per coefficient the median error in least squares' standard errors and the count of intervals covering
    least squares over seeds 0..reps-1, and the method used."""
    errors: dict[str, list[float]] = {}
    covered: dict[str, int] = {}
    method = ""
    for seed in range(reps):
        df = frame(n, seed)
        ols = smf.ols(formula, df).fit()
        res = dpstats.dp_ols(formula, df, epsilon, DELTA, bounds=BOUNDS if bounds else None, rescale=rescale,
                             random_state=seed)
        ci = res.conf_int()
        for term in ols.params.index:
            errors.setdefault(term, []).append(abs(res.params[term] - ols.params[term]) / ols.bse[term])
            covered[term] = covered.get(term, 0) + int(ci.loc[term, 0] <= ols.params[term] <= ci.loc[term, 1])
        method = res.method
    return {t: float(np.median(e)) for t, e in errors.items()}, covered, method


def rows(reps: int) -> list[str]:
    """One table row per formula, way of fitting, epsilon and n."""
    out = []
    for formula, rescale, bounds, label in FITS:
        for epsilon in EPSILONS:
            for n in SIZES:
                errors, covered, method = measure(formula, rescale, bounds, epsilon, n, reps)
                worst = max(errors, key=lambda t: errors[t])
                fewest = min(covered, key=lambda t: covered[t])
                out.append(f"| `{formula}` | {'declared' if bounds else 'none'} | {label} | {epsilon:g} | {n:,} | "
                           f"{method} | {errors[worst]:.2f} "
                           f"(`{worst}`) | {covered[fewest]} of {reps} (`{fewest}`) | "
                           + ", ".join(f"{errors[t]:.2f} / {covered[t]}" for t in errors) + " |")
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = rows(args.reps)
    seconds = time.perf_counter() - start
    text = "\n".join([
        f"Command: `python benchmarks/factored_power.py --reps {args.reps}` ({seconds:.0f} s, one process; "
        f"delta = {DELTA:g}, x's data in [20, 40] declared [0, 60] where bounds are declared, noise seeds and data "
        f"sets 0..{args.reps - 1}).",
        "", "A power beside the slopes by group without x's main effect (declared bounds), and beside a factor's full "
        "dummies without bounds: per coefficient, the median over the fits "
        "of |coefficient - least squares| in least squares' standard errors, and how many fits' 95% intervals "
        f"cover least squares (of {args.reps}); the largest median and the smallest count over the coefficients, "
        "then every coefficient's (median / count, in the formula's column order).", "",
        "| formula | bounds | columns | epsilon | n | method | largest median error (OLS se) | fewest covering | "
        "per coefficient |", "|---|---|---|---|---|---|---|---|---|", *table, ""])
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
