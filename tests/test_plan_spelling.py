"""The plan's text in its two spellings (dpstats.planning.SPELLINGS): as dpstats.plan's keyword arguments
(``method='auto'``, ``dtypes=``) and as the flags of ``dpstats plan`` and ``dpstats fit`` (``--method auto``,
``--dtypes``).  ``dpstats plan`` rewrote the Python text with regular expressions (``cli._FLAG_SPELLINGS``, removed
in session 54); the plan now writes each spelling itself, and these tests pin that both are byte for byte what they
were: the Python text as before, the command line's as those expressions made it (kept here as the reference).
Deterministic."""

from __future__ import annotations

import json
import re

import pytest

import dpstats
from dpstats.cli import main
from dpstats.errors import InvalidArgumentError
from dpstats.planning import FLOOR_NOTE, SPELLINGS, floor_note, option

#: the rewrite ``dpstats plan`` made of the Python text before session 54 (the reference of the command line's text)
_FORMER_REWRITE = (
    (re.compile(r"plan\(\.\.\., method='auto'\)"), "dpstats plan --method auto"),
    (re.compile(r"method='auto' \(dp_ols's default\)"), "--method auto (dpstats fit's default)"),
    (re.compile(r"\b(method|missing)='([A-Za-z_]+)'"), r"--\1 \2"),
    (re.compile(r"\b(dtypes|spread|correlation)="), r"--\1"),
)


def _former_cli_text(text: str) -> str:
    for pattern, flag in _FORMER_REWRITE:
        text = pattern.sub(flag, text)
    return text


_BOUNDS = {"y": (0.0, 1.0), "x": (0.0, 10.0), "z": (-1.0, 1.0)}

#: plans whose text names every option the rewrite touched: auto's line (fits, and refuses the design), auto's table
#: ("chosen by method='auto'"), the screen's missing='raise' and dtypes=, missing='drop', spread= and correlation= in
#: the assumptions and the centred columns' note, a two-valued response, a rate's lower bound, and the floor's note
_VARIANTS = [
    {"bounds": _BOUNDS, "n": 2000, "epsilon": 1.0},
    {"bounds": _BOUNDS, "formula": "y ~ x + z + I(x * z)", "n": 800, "epsilon": 0.5, "spread": {"x": 2.0},
     "correlation": 0.2},
    {"bounds": _BOUNDS, "formula": "y ~ x + z", "n": 800, "epsilon": 1.0, "method": "auto", "missing": "drop"},
    {"bounds": _BOUNDS, "formula": "y ~ x + z", "n": 300, "epsilon": 1.0, "method": ["auto", "ssp"],
     "dtypes": {"y": bool, "x": int}, "outcome_share": 0.2},
    {"bounds": {"x": (0, 1), "y": (0, 1)}, "formula": "y ~ bs(x, knots=[2], lower_bound=0, upper_bound=3)", "n": 500,
     "epsilon": 1.0},
    {"bounds": _BOUNDS, "formula": "y ~ x + z", "n": 60, "epsilon": 0.3, "method": ["tukey", "noisy_ols", "pgd"],
     "missing": "drop", "rescale": True},
    {"bounds": _BOUNDS, "formula": "y ~ x + z", "epsilon": 1.0, "method": "lasso", "sparsity": 1, "target": 0.1},
]


@pytest.fixture(scope="module")
def plans() -> list[dpstats.planning.Plan]:
    return [dpstats.plan(**kw) for kw in _VARIANTS]


def test_the_python_text_is_the_plans_str_and_the_cli_text_is_the_former_rewrite(plans):
    for plan in plans:
        assert "\n".join(plan.lines()) == "\n".join(plan.lines(spelling="python")) == str(plan)
        assert "\n".join(plan.lines(spelling="cli")) == _former_cli_text(str(plan))
    python = "\n".join(str(plan) for plan in plans)
    for pattern, _ in _FORMER_REWRITE:  # every phrase the rewrite changed is among these plans
        assert pattern.search(python), pattern.pattern
    for phrase in ("chosen by method='auto'", "missing='drop')", "missing='raise' takes", "which refuses this design",
                   "(at least)"):
        assert phrase in python


def test_the_command_prints_the_cli_text(plans, capsys):
    """``dpstats plan`` prints the plan in the command line's spelling (its flags), the same text as before."""
    argv = ["plan", "y ~ x + z + I(x * z)", "--bounds", json.dumps(_BOUNDS), "--n", "800", "--epsilon", "0.5",
            "--spread", json.dumps({"x": 2.0}), "--correlation", "0.2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed == _former_cli_text(str(plans[1])) + "\n"
    assert "--method auto (dpstats fit's default) would fit" in printed and "dpstats plan --method auto" in printed
    assert "--spread and --correlation" in printed and "method='" not in printed and "spread=" not in printed


def test_option_and_floor_note_spell_each_option():
    assert [option("method", "auto", s) for s in SPELLINGS] == ["method='auto'", "--method auto"]
    assert [option("dtypes", spelling=s) for s in SPELLINGS] == ["dtypes=", "--dtypes"]
    assert floor_note() == FLOOR_NOTE and floor_note("cli") == _former_cli_text(FLOOR_NOTE) != FLOOR_NOTE
    with pytest.raises(InvalidArgumentError, match="spelling must be one of 'python', 'cli'"):
        option("method", "auto", "R")
    with pytest.raises(InvalidArgumentError, match="spelling must be one of 'python', 'cli'"):
        dpstats.plan(bounds=_BOUNDS, n=500, epsilon=1.0, method="ssp").lines(spelling="R")


#: a plan's assumptions in Python's spelling as the plan wrote them when it stored both spellings of each (session
#: 54's code, d4c4ed4): a product term (the centred columns' note), spread=, declared types and the screen
_CENTRED_PLAN = {"bounds": _BOUNDS, "formula": "y ~ x * z", "n": 800, "epsilon": 1.0, "method": "ssp",
                 "spread": {"x": 2.0}, "dtypes": {"y": float, "x": int, "z": int}}
_CENTRED_ASSUMPTIONS = (
    "design columns uniform on their declared ranges (sd as given in spread= where given), independent",
    "residual sd 0.2887 in the response's units (R^2 = 0 of a response uniform on its declared range)",
    "the fit's public rescaling: columns and response rescaled to [-1, 1] by the declared bounds, the method's default "
    "options; product and power columns with their variables centred at their declared midpoints (rescale='centred', "
    "the default; uniform on the centred ranges, spread= and correlation= naming those centred columns)",
    "the missing-value screen of missing='raise' takes 2% of epsilon first, because y can hold a missing value as "
    "planned (floats where dtypes= gives no type; a fit on integer or boolean columns runs no screen: declare their "
    "types with dtypes= for its figures)",
)


def test_each_assumption_is_stored_once_and_spelled_when_shown(plans):
    """The plan keeps each assumption once, its words and the options it names apart, and writes it in the spelling
    asked for: the two spellings cannot drift.  The texts are byte for byte those of the code that stored both
    (pinned here for a plan with every option an assumption names; ``benchmarks/text_outputs.py plans`` compared
    880 plans of varied settings before and after, benchmarks/results/text_outputs.md)."""
    centred = dpstats.plan(**_CENTRED_PLAN)
    assert centred.assumptions == _CENTRED_ASSUMPTIONS
    assert centred._assumptions("cli") == tuple(_former_cli_text(a) for a in _CENTRED_ASSUMPTIONS)
    for plan in [*plans, centred]:
        assert plan.assumptions == plan._assumptions("python")
        assert all(isinstance(part, str) or part.name in {"spread", "correlation", "missing", "dtypes"}
                   for assumption in plan.assumed for part in assumption.parts)
        assert plan._assumptions("cli") == tuple(_former_cli_text(a) for a in plan.assumptions)
    dropped = dpstats.plan(**_VARIANTS[5])
    assert "no missing-value screen (missing='drop')" in dropped.assumptions
    assert "no missing-value screen (--missing drop)" in dropped._assumptions("cli")
