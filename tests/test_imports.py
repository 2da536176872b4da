"""The import structure of dpstats: no import cycles, and the deprecated module paths of the formula layer.

The import graph is read from the source (``ast``), not by importing: an edge
M -> T for every import statement that runs when M is imported (the module's
body, including ``if``/``try``/``with`` blocks, but not ``if TYPE_CHECKING:``
and not function or class bodies).  Importing ``a.b.c`` runs the
``__init__`` of ``a.b`` as well, so an edge also goes to each package on the
way, except the root package ``dpstats`` (whose ``__init__`` is the public
facade and imports the API) and the importing module's own packages (they
are already being imported when it runs).  ``docs/architecture.md``
("Layers") states the rule these tests check.
"""

from __future__ import annotations

import ast
import functools
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import dpstats
from dpstats import formula
from dpstats.formula import design, frame, predict, recipe, schema
from dpstats.methods.registry import BUILTIN_METHODS

PACKAGE = Path(dpstats.__file__).parent
ROOT = "dpstats"

#: imports inside a function that would close an import cycle if they ran at import time, each with its reason
#: (docs/architecture.md, "Layers"); the test fails on any other, and on an entry that no longer applies
DEFERRED_IMPORTS = {
    ("dpstats.api_arrays", "dpstats.api"):
        "the deprecated alias dpstats.api_arrays.dp_ols_arrays forwards to its new home, dpstats.api, which is above "
        "api_arrays (api -> pipeline -> api_arrays); it goes with the alias",
    ("dpstats.results", "dpstats.tables"):
        "DPSummary.as_latex renders one fit with the table grid of dpstats.tables, which reads DPRegressionResults; "
        "it goes when the grid (Cell, Grid, coefficient_grid) moves to a module below results",
    ("dpstats.theory", "dpstats.planning"):
        "dpstats.plan (theory.plan) hands a plan with bounds or a formula to planning.coefficient_plan, and planning "
        "reads theory's rates and lower bounds; it goes when plan() moves to dpstats.planning",
}


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    return "TYPE_CHECKING" in ast.unparse(node.test)


def _import_time_imports(statements: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported."""
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            yield from _import_time_imports(node.orelse if _is_type_checking(node) else node.body + node.orelse)
        elif isinstance(node, ast.Try):
            blocks = node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
            yield from _import_time_imports(blocks)
        elif isinstance(node, ast.With):
            yield from _import_time_imports(node.body)


def _deferred_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements in function and class bodies (run on use, not at import time)."""
    at_import = {id(n) for n in _import_time_imports(tree.body)}
    type_checking = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block)
                     for n in ast.walk(block) if isinstance(n, (ast.Import, ast.ImportFrom))}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in at_import | type_checking:
            yield node


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The dpstats modules an import statement names (``from p import m`` names the submodule p.m if it is one)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]


def _targets(module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The dpstats modules whose code runs for ``node`` in ``module``: the named module and the packages on the
    way (not the root package, nor ``module`` itself or its own packages)."""
    out: set[str] = set()
    for name in _imported(module, node):
        if name.split(".")[0] != ROOT:
            continue
        while name not in MODULES:
            name = name.rsplit(".", 1)[0]
        if name == ROOT and module != ROOT:
            out.add(ROOT)  # an explicit import of the root package (import dpstats, from dpstats import dp_ols)
        parts = name.split(".")
        for i in range(2, len(parts) + 1):
            step = ".".join(parts[:i])
            if step != module and not module.startswith(step + "."):
                out.add(step)
    return out


@functools.cache
def _graphs() -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    """The import-time graph, and the (module, target) pairs of the deferred imports."""
    graph: dict[str, set[str]] = {}
    deferred: set[tuple[str, str]] = set()
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = {t for n in _import_time_imports(tree.body) for t in _targets(module, n)}
        deferred |= {(module, t) for n in _deferred_imports(tree) for t in _targets(module, n)}
    return graph, deferred


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _reaches(graph: dict[str, set[str]], source: str, target: str) -> bool:
    seen, todo = {source}, [source]
    while todo:
        node = todo.pop()
        if node == target:
            return True
        for child in graph.get(node, ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return False


def test_the_graph_reader_sees_the_imports_it_must():
    """The reader is not blind: the known edges are in the graph (a failing reader would find no cycle)."""
    graph, deferred = _graphs()
    assert {"dpstats.pipeline", "dpstats.results", "dpstats.rows.sources"} <= graph["dpstats.api"]
    assert "dpstats.formula.frame" in graph["dpstats.rows.sources"]
    assert {"dpstats.methods", "dpstats.methods.common", "dpstats.methods.common.linalg"} <= graph["dpstats.inference"]
    assert "dpstats.privacy.ledger" not in graph["dpstats.privacy.composition"]  # under TYPE_CHECKING only
    assert ("dpstats.results", "dpstats.tables") in deferred
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_a_module_that_imports_it_back():
    graph, _ = _graphs()
    assert _cycles(graph) == []


def test_deferred_imports_that_would_close_a_cycle_are_the_listed_ones():
    graph, deferred = _graphs()
    dodging = {(module, target) for module, target in deferred if _reaches(graph, target, module)}
    assert dodging == set(DEFERRED_IMPORTS)


def test_importing_dpstats_loads_no_estimator_until_the_registry_is_read():
    code = ("import json, sys, dpstats\n"
            "before = [m for m in sys.modules if m.startswith('dpstats.methods.')]\n"
            "print(json.dumps([before, sorted(dpstats.available_methods())]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout
    before, names = json.loads(out)
    assert "dpstats.methods.registry" in before
    assert not {f"dpstats.methods.{name}" for name in BUILTIN_METHODS} & set(before)
    assert set(BUILTIN_METHODS) <= set(names)


@pytest.mark.parametrize("old, new, names", [
    ("dpstats.formula_language", "dpstats.formula.language", ["NAMESPACE", "FORMULA_ENV", "check_factor"]),
    ("dpstats.formula_language", "dpstats.formula.parse", ["expand_formula", "model_desc", "term", "join_terms"]),
    ("dpstats.design_recipe", "dpstats.formula.recipe", ["DesignRecipe"]),
])
def test_old_formula_module_paths_still_work_with_a_deprecation_warning(old, new, names):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    for name in names:
        assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_the_formula_package_exports_what_the_formula_module_did():
    assert formula.Design is design.Design and formula.build_design is design.build_design
    assert formula.public_design is design.public_design and formula.public_prototype is design.public_prototype
    assert formula.FramePlan is frame.FramePlan and formula.non_finite_message is schema.non_finite_message
    assert formula.design_matrix_for_prediction is predict.design_matrix_for_prediction
    assert formula.DesignRecipe is recipe.DesignRecipe
