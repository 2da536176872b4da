"""Products and powers in a design whose intercept is implicit in a factor's full set of dummies.

``y ~ 0 + C(g) + x + I(x**2)`` has no Intercept column, but the dummies of g sum to the constant on every row, so
the default ``rescale="centred"`` centres the power (and a product) at the declared midpoints with the constant
term spread over the dummies (docs/choosing.md, "Products and powers"); ``rescale=True`` fits the same design
with the columns as written, which is what the default did before.  The same model written with its intercept,
``y ~ C(g) + x + I(x**2)``, centred, is the reference.

A quadratic, y = 1 + 0.5 [g = b] - 0.3 [g = c] + 0.2 x - 0.002 x^2 + e, and a product, y = 1 + 0.5 [g = b] -
0.3 [g = c] + 0.05 x + 0.1 z + 0.01 x z + e, and slopes by group, y = 1 + 0.5 [g = b] - 0.3 [g = c] + (0.2 +
0.05 [g = b]) x + e, written ``0 + C(g) + x + x:C(g)`` (the product's reduced coding beside the factor's full
dummies) (x ~ U[20, 60], z ~ U[10, 20], g uniform on three levels, e ~ N(0, 0.5^2) for the quadratic, N(0, 1)
otherwise), n = 4,000, bounds x in [16, 65], z in [0, 30], y declared wide; epsilon 1, delta = 1e-6, the
default method, noise seed s and data set s for s = 0..reps-1.  Per coefficient: how many fits' 95% intervals
cover least squares on the same data (statsmodels OLS), and the median relative error of x's coefficient.

Run from the repository root (one process)::

    python benchmarks/implicit_intercept.py --reps 20      # results/implicit_intercept.md
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from uncentred import coverage_of_least_squares  # the same measurement (run as a script from benchmarks/)

OUT = Path(__file__).resolve().parent / "results" / "implicit_intercept.md"
DELTA = 1e-6
LEVELS = ["a", "b", "c"]

#: the designs: the right-hand side after the factor, and the declared bounds
DESIGNS = {
    "quadratic": ("x + I(x**2)", {"x": (16.0, 65.0), "y": (-10.0, 10.0)}),
    "product": ("x * z", {"x": (16.0, 65.0), "z": (0.0, 30.0), "y": (-10.0, 60.0)}),
    "slopes by group": ("x + x:C(g)", {"x": (16.0, 65.0), "y": (-10.0, 60.0)}),
}
#: (how the intercept is written, rescale, label)
FITS = (("0 + C(g) + ", True, "implicit, as written (rescale=True; the default before)"),
        ("0 + C(g) + ", "centred", "implicit, centred (default)"),
        ("C(g) + ", "centred", "written, centred (default)"))


def _frame(name: str, n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(20, 60, n), "z": rng.uniform(10, 20, n),
                       "g": pd.Categorical(rng.choice(LEVELS, n), categories=LEVELS)})
    shift = 0.5 * (df.g == "b").to_numpy() - 0.3 * (df.g == "c").to_numpy()
    if name == "quadratic":
        df["y"] = 1 + shift + 0.2 * df.x - 0.002 * df.x**2 + rng.normal(0, 0.5, n)
    elif name == "slopes by group":
        df["y"] = 1 + shift + (0.2 + 0.05 * (df.g == "b").to_numpy()) * df.x + rng.normal(0, 1, n)
    else:
        df["y"] = 1 + shift + 0.05 * df.x + 0.1 * df.z + 0.01 * df.x * df.z + rng.normal(0, 1, n)
    return df


def rows(reps: int, n: int = 4000) -> list[str]:
    """One table row per design and way of writing it: coverage of least squares per coefficient, error of x."""
    out = []
    for name, (rest, bounds) in DESIGNS.items():
        for head, rescale, label in FITS:
            formula = "y ~ " + head + rest
            cells, error, method = coverage_of_least_squares(
                formula, lambda seed, name=name: _frame(name, n, seed), reps, bounds=bounds, rescale=rescale)
            out.append(f"| {name} | `{formula}` | {label} | {method} | {cells} (of {reps}) | {error:.3f} |")
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
        f"Command: `python benchmarks/implicit_intercept.py --reps {args.reps}` ({seconds:.0f} s, one process; "
        f"epsilon 1, delta = {DELTA:g}, n = 4,000, noise seeds 0..).", "",
        "Products and powers beside a factor's full set of dummies (no Intercept column): fits whose 95% interval "
        "covers least squares, per coefficient, and the median relative error of x.", "",
        "| design | formula | intercept, columns | method | intervals covering least squares | error of x |",
        "|---|---|---|---|---|---|", *table, ""])
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
