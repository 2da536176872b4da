"""Compile dpstats' LaTeX tables with pdflatex and fail on errors and on boxes wider than the text.

Writes one document (article class, the preamble the tables state:
``\\usepackage{booktabs}`` and ``\\usepackage{graphicx}``) with

* three-model tables (OLS | AdaSSP | TukeyEM on the bundled diamonds data), with standard errors and stars,
  with intervals, and a six-model table to exercise the shrinking to the text width;
* each single-model table: ``summary().as_latex()`` and ``as_latex(privacy=True)`` for adassp, tukey and
  the non-private reference;
* a table whose names and factor levels carry LaTeX specials (``& _ % # $ ^ ~``) and stars;

then runs ``pdflatex`` when it is on the PATH and reads its log: any error, overfull box or float too large
for the page is a failure (exit status 1).  Without pdflatex the document is written and the check is
skipped (exit status 0, or 1 with ``--require``).  Not a pytest test: CI has no TeX.

    python docs/check_latex.py [--out DIR] [--require]
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import dpstats  # noqa: E402
from dpstats.tables import LATEX_PREAMBLE  # noqa: E402

FORMULA = ("np.log(price) ~ np.log(carat) + C(cut, Treatment('Ideal')) + C(color, Treatment('G')) "
           "+ C(clarity, Treatment('SI1'))")
BOUNDS = {"carat": (0.2, 5.01), "price": (326, 18823)}  # ggplot2's documentation of the data set (?diamonds)
PROBLEMS = re.compile(r"^(!.*|Overfull \\[hv]box.*|.*Float too large.*)$", re.MULTILINE)


def fits() -> dict[str, dpstats.DPRegressionResults]:
    """The fits of the document, seeded so that the document is reproducible."""
    df = dpstats.datasets.load("diamonds")
    out = {"OLS": dpstats.dp_ols(FORMULA, df, math.inf, method="ols"),
           "AdaSSP": dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="adassp", bounds=BOUNDS, random_state=1),
           "TukeyEM": dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="tukey", random_state=1),
           "SSP": dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=1),
           "AdaSSP eps=4": dpstats.dp_ols(FORMULA, df, 4.0, 1e-6, method="adassp", bounds=BOUNDS, random_state=2)}
    return out


def special_names_fit() -> dpstats.DPRegressionResults:
    """A fit whose variable and level names carry LaTeX specials."""
    rng = np.random.default_rng(0)
    n = 4000
    levels = ["R&D", "a_b", "100%", "#1", "$x^2~"]
    df = pd.DataFrame({"dept": pd.Categorical(rng.choice(levels, n), categories=levels),
                       "x_1": rng.uniform(0, 1, n)})
    df["y"] = 2 * df["x_1"] + (df["dept"] == "R&D") + rng.normal(0, 0.3, n)
    return dpstats.dp_ols("y ~ x_1 + C(dept, Treatment('R&D'))", df, 8.0, 1e-6, method="ssp",
                          bounds={"x_1": (0, 1), "y": (-2, 5)}, random_state=0)


def magnitudes_fits() -> dict[str, dpstats.DPRegressionResults]:
    """Coefficients of every magnitude: the price in dollars (numbers known to thousands, grouped with
    thousands=",") and the same model in millions of dollars per carat (values of order 1e-4 and below, in powers of
    ten)."""
    df = dpstats.datasets.load("diamonds").assign(price_m=lambda t: t["price"] / 1e6)
    bounds = {"carat": (0.2, 5.01), "depth": (43, 79), "price": (326, 18823), "price_m": (326e-6, 18823e-6)}
    return {"price": dpstats.dp_ols("price ~ carat + depth", df, 1.0, 1e-6, method="ssp", bounds=bounds,
                                    random_state=3),
            "price (millions)": dpstats.dp_ols("price_m ~ carat + depth", df, math.inf, method="ols")}


def document() -> str:
    """The LaTeX document with every table."""
    f = fits()
    three = {k: f[k] for k in ("OLS", "AdaSSP", "TukeyEM")}
    rename = {"np.log(carat)": "log(carat)"}
    parts = [
        dpstats.table(three, stars=True, rename=rename, title="Three fits, standard errors").as_latex("tab:se"),
        dpstats.table(three, statistic="ci", rename=rename, title="Three fits, 95% intervals").as_latex("tab:ci"),
        dpstats.table(f, stars=True, title="Five fits side by side").as_latex("tab:five"),
        dpstats.table([*f.values(), special_names_fit()], stars=True, drop=["Intercept"],
                      title="Six fits, without the intercept").as_latex("tab:six"),
        dpstats.table([special_names_fit()], stars=True, statistic="t",
                      title="Names with & _ % # $ ^ ~").as_latex("tab:special"),
    ]
    sizes = magnitudes_fits()
    parts.append(dpstats.table(sizes, statistic="ci", thousands=",", title="Dollars and millions").as_latex("tab:mag"))
    parts.append(sizes["price (millions)"].summary().as_latex(label="tab:millions"))
    parts.append(sizes["price"].summary(thousands=",").as_latex(label="tab:dollars"))
    for name in ("AdaSSP", "TukeyEM", "OLS"):
        label = "tab:" + name.lower()
        parts.append(f[name].summary().as_latex(label=label))
        parts.append(f[name].summary().as_latex(label=label + "-p", privacy=True))
        parts.append("\\clearpage")
    parts.append(special_names_fit().summary().as_latex(label="tab:special-single", privacy=True))
    return ("\\documentclass{article}\n" + LATEX_PREAMBLE + "\n\\begin{document}\n"
            + "\n".join(parts) + "\n\\end{document}\n")


def compile_document(tex: Path) -> list[str]:
    """Run pdflatex on ``tex``; the problems its log reports (errors, overfull boxes, floats too large)."""
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", tex.name], cwd=tex.parent,
                         capture_output=True, text=True, check=False)
    log = tex.with_suffix(".log").read_text(encoding="latin-1")
    problems = PROBLEMS.findall(log)
    if run.returncode != 0 and not problems:
        problems = [f"pdflatex exited with status {run.returncode}"]
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="directory for tables.tex and its PDF (default: a temporary one)")
    parser.add_argument("--require", action="store_true", help="fail when pdflatex is not installed")
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="dpstats-latex-"))
    out.mkdir(parents=True, exist_ok=True)
    tex = out / "tables.tex"
    tex.write_text(document(), encoding="utf-8")
    if shutil.which("pdflatex") is None:
        print(f"wrote {tex}; pdflatex not found, so it was not compiled")
        return 1 if args.require else 0
    problems = compile_document(tex)
    for p in problems:
        print("problem:", p)
    written = re.search(r"Output written on .*?\((\d+) pages?", tex.with_suffix(".log").read_text(encoding="latin-1"))
    pages = written.group(1) if written else "?"
    print(f"{tex}: {'FAILED' if problems else f'compiled, {pages} pages, no errors or overfull boxes'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
