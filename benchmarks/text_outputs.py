"""The text outputs of many fits and plans, written to a file, and two such files compared: a refactoring's check.

Two sets of outputs, each written as JSON lines by the code on ``PYTHONPATH``:

* ``fits``: ``summary().as_text()``, ``str(res.privacy)`` and ``str(dpstats.table([res]))`` of 108 fits (twelve
  methods, auto and ols included, at epsilon 0.3, 1 and 5 on mtcars, penguins and the first 6,000 diamonds; a
  refused fit gives its error's message);
* ``plans``: ``Plan.lines()`` in both spellings, ``str``, the HTML and ``Plan.assumptions`` of 880 plans (one to
  six variables, three formulas (a product term, a factor), spread, three correlations, four residual settings,
  missing "raise" or "drop", declared integer types, both rescalings, seven methods or lists of them, n and
  epsilon given or not, and 16 plans of a two-valued response with and without outcome_share).

Write each set with the code before and after a change, then compare: the compare step prints every changed
output as a diff, and for the fits whether any changed output differs in more than where its lines break.

Run from the repository root (session 55: the code of d4c4ed4 unpacked with ``git archive`` in ``BASE``)::

    PYTHONPATH=BASE python benchmarks/text_outputs.py plans before.jsonl     # about 20 minutes
    python benchmarks/text_outputs.py plans after.jsonl
    python benchmarks/text_outputs.py compare before.jsonl after.jsonl      # results/text_outputs.md
"""

from __future__ import annotations

import argparse
import difflib
import itertools
import json
import warnings
from collections.abc import Iterator
from typing import Any

import dpstats

_BOUNDS = [
    {"x": (0, 10), "y": (-5, 5)},
    {"x": (0, 10), "z": (-1, 3), "y": (0, 100)},
    {"x": (0, 10), "z": (-1, 3), "w": (1, 2), "v": (0, 1), "u": (5, 9), "y": (0, 1)},
]
_FORMULAS = [None, "y ~ x * z", "y ~ x + I(x ** 2) + C(g)"]
_METHODS: list[Any] = ["ssp", "adassp", "noisy_ols"] * 3 + ["pgd", "auto", ["ssp", "pgd"]]


def plan_settings() -> Iterator[dict[str, Any]]:
    """The keyword arguments of the plans: half of a product of settings, then a two-valued response's."""
    product = itertools.product(range(3), _FORMULAS, [None, "x"], [0.0, 0.3, "pair"], ["r0", "r2", "sd", "big"],
                                ["raise", "drop"], [None, "int"], ["centred", True])
    for k, (b, formula, spread, corr, resid, missing, dtypes, rescale) in enumerate(product, 1):
        if bin(k - 1).count("1") % 2:  # half of the product, each two-valued setting in both of its values
            continue
        bounds = dict(_BOUNDS[b])
        if formula is not None:
            bounds.setdefault("z", (-1, 3))
        kw: dict[str, Any] = {"bounds": bounds, "formula": formula, "missing": missing, "rescale": rescale}
        if formula is not None and "C(g)" in formula:
            kw["levels"] = {"g": ["a", "b", "c"]}
        if spread:
            kw["spread"] = {"x": 2.0}
        kw["correlation"] = ({("x", "z"): 0.4} if "z" in bounds else 0.2) if corr == "pair" else corr
        kw.update({"r0": {}, "r2": {"rsquared": 0.3}, "sd": {"residual_sd": 1.0}, "big": {"residual_sd": 1e6}}[resid])
        if dtypes:
            kw["dtypes"] = {"x": "int64"}
        kw["n"], kw["epsilon"] = [None, 500, 20000][k % 3], [1.0, None, 0.5, 4.0][k % 4]
        if kw["n"] is None and kw["epsilon"] is None:
            kw["epsilon"] = 1.0
        kw["method"] = _METHODS[(k // 2) % len(_METHODS)]
        if kw["method"] == "auto":
            kw["n"], kw["epsilon"] = kw["n"] or 2000, kw["epsilon"] or 1.0
        yield kw
    for share, n, eps in itertools.product([None, 0.1, 0.3, 0.5], [300, 5000], [0.5, 2.0]):
        yield {"bounds": {"x": (0, 1), "y": (0, 1)}, "dtypes": {"y": "bool"}, "outcome_share": share, "n": n,
               "epsilon": eps, "method": ["pgd", "auto", None, ["ssp", "adassp"]][int((share or 0) * 10) % 4]}


def plan_records() -> Iterator[dict[str, Any]]:
    for kw in plan_settings():
        try:
            plan = dpstats.plan(**kw)
        except dpstats.errors.DPStatsError as exc:  # a refused setting: its message
            yield {"key": repr(kw), "error": f"{type(exc).__name__}: {exc}"}
            continue
        yield {"key": repr(kw), "python": "\n".join(plan.lines()), "cli": "\n".join(plan.lines(spelling="cli")),
               "str": str(plan), "html": plan._repr_html_(), "assumptions": list(plan.assumptions)}


def fit_records() -> Iterator[dict[str, Any]]:
    data = {"mtcars": dpstats.datasets.load("mtcars"), "penguins": dpstats.datasets.load("penguins").dropna(),
            "diamonds": dpstats.datasets.load("diamonds").iloc[:6000]}
    models = {"mtcars": ("mpg ~ wt + hp + qsec", {"wt": (1, 6), "mpg": (5, 40), "hp": (50, 350), "qsec": (14, 23)}),
              "penguins": ("body_mass_g ~ bill_length_mm + flipper_length_mm + C(species)",
                           {"bill_length_mm": (30, 60), "body_mass_g": (2500, 6500), "flipper_length_mm": (170, 235)}),
              "diamonds": ("price ~ carat + depth", {"carat": (0.2, 3), "depth": (50, 75), "price": (300, 19000)})}
    methods = ["ssp", "adassp", "noisy_ols", "pgd", "tukey", "theilsen", "robgd", "ambssgd", "lasso", "dpsgd", "auto",
               "ols"]
    for method, eps, name in itertools.product(methods, [0.3, 1.0, 5.0], models):
        formula, bounds = models[name]
        kw: dict[str, Any] = {"method": method, "random_state": 0}
        if method != "auto" or eps > 1:
            kw["bounds"] = bounds
        key = f"{name} {method} {eps}"
        try:
            res = dpstats.dp_ols(formula, data[name], float("inf") if method == "ols" else eps, 1e-6, **kw)
        except dpstats.errors.DPStatsError as exc:
            yield {"key": key, "error": f"{type(exc).__name__}: {exc}"}
            continue
        yield {"key": key, "summary": res.summary().as_text(), "privacy": str(res.privacy),
               "table": str(dpstats.table([res]))}


def compare(before_path: str, after_path: str) -> None:
    """Print every output that differs, as a diff, and the counts."""
    with open(before_path) as fh:
        before = {r["key"]: r for r in map(json.loads, fh)}
    with open(after_path) as fh:
        after = {r["key"]: r for r in map(json.loads, fh)}
    same = changed = reflowed = 0
    for key, old in before.items():
        new = after[key]
        for part, text in old.items():
            if part == "key":
                continue
            if new.get(part) == text:
                same += 1
                continue
            changed += 1
            old_text, new_text = map(str, (text, new.get(part)))
            reflowed += old_text.split() == new_text.split()
            print(f"== {key} [{part}]")
            for line in difflib.unified_diff(old_text.splitlines(), new_text.splitlines(), lineterm="", n=0):
                if not line.startswith(("---", "+++")):
                    print(line)
    print(f"{len(before)} records; outputs identical: {same}; changed: {changed}, of which only where lines break: "
          f"{reflowed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=["fits", "plans", "compare"])
    parser.add_argument("paths", nargs="+", help="the file to write, or the two files to compare")
    args = parser.parse_args()
    if args.what == "compare":
        compare(*args.paths)
        return
    warnings.simplefilter("ignore")
    with open(args.paths[0], "w") as out:
        for record in plan_records() if args.what == "plans" else fit_records():
            out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
