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

Imports that run later count too: an import statement inside a function or
a class (a module-level ``__getattr__`` included), and a module loaded by
name (``importlib.import_module``, ``__import__``, ``sys.modules[...]``),
whose name is read from the call's string, f-string (``__package__`` and
``__name__`` are known; another value stands for any string constant of the
module) or, when the name is computed otherwise, from every string constant
of the module that names a dpstats module.  None of them may close a cycle:
there is no exception (the registry imports the built-in estimators
statically, and deprecated names are handed down by the module above them,
``dpstats.deprecation.MovedUp``).
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
from dpstats.formula import design, frame, predict, recipe
from dpstats.methods.registry import BUILTIN_METHODS, available_methods, get_method

PACKAGE = Path(dpstats.__file__).parent
ROOT = "dpstats"

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


def _named(module: str, tree: ast.Module) -> set[str]:
    """The dpstats modules that ``module`` loads by name: ``importlib.import_module(x)``, ``__import__(x)``,
    ``sys.modules[x]`` and ``sys.modules.get(x)``, anywhere in the module (at import time or later)."""
    constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    package = module if MODULES[module].name == "__init__.py" else module.rsplit(".", 1)[0]
    known = {"__package__": package, "__name__": module}

    assigned: dict[str, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)

    def names(arg: ast.expr, depth: int = 0) -> set[str]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return {arg.value}
        if isinstance(arg, ast.Name) and arg.id in assigned and depth < 3:  # name = f"..." earlier
            return {n for value in assigned[arg.id] for n in names(value, depth + 1)}
        if not isinstance(arg, ast.JoinedStr):
            return constants
        out = {""}
        for part in arg.values:
            if isinstance(part, ast.Constant):
                out = {o + str(part.value) for o in out}
            elif isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name) and part.value.id in known:
                out = {o + known[part.value.id] for o in out}
            else:
                out = {o + c for o in out for c in constants}
        return out

    found: set[str] = set()
    for node in ast.walk(tree):
        arg = None
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            on_modules = isinstance(func, ast.Attribute) and ast.unparse(func.value) == "sys.modules"
            if name in ("import_module", "__import__") or (on_modules and name == "get"):
                arg = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "sys.modules":
            arg = node.slice
        if arg is not None:
            found |= {n for n in names(arg) if n in MODULES and n != module}
    return found


def _named_targets(module: str, name: str) -> set[str]:
    """The modules whose code runs when ``module`` loads ``name`` by name (as for an import statement)."""
    return _targets(module, ast.Import(names=[ast.alias(name=name)]))


def _edges(module: str, tree: ast.Module) -> tuple[set[str], set[str], set[str]]:
    """The modules ``module`` (parsed as ``tree``) runs at import time, in deferred imports (import statements
    in function and class bodies) and by name."""
    return ({t for n in _import_time_imports(tree.body) for t in _targets(module, n)},
            {t for n in _deferred_imports(tree) for t in _targets(module, n)},
            {t for name in _named(module, tree) for t in _named_targets(module, name)})


@functools.cache
def _graphs() -> tuple[dict[str, set[str]], set[tuple[str, str]], set[tuple[str, str]]]:
    """The import-time graph, the (module, target) pairs of the deferred imports, and those of the modules
    loaded by name."""
    graph: dict[str, set[str]] = {}
    deferred: set[tuple[str, str]] = set()
    dynamic: set[tuple[str, str]] = set()
    for module, path in MODULES.items():
        graph[module], later, named = _edges(module, ast.parse(path.read_text(encoding="utf-8")))
        deferred |= {(module, t) for t in later}
        dynamic |= {(module, t) for t in named}
    return graph, deferred, dynamic


def _with(graph: dict[str, set[str]], edges: set[tuple[str, str]]) -> dict[str, set[str]]:
    """The graph with the later imports ``edges`` (module, target) added."""
    full = {module: set(targets) for module, targets in graph.items()}
    for module, target in edges:
        full[module].add(target)
    return full


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
    graph, deferred, dynamic = _graphs()
    assert {"dpstats.pipeline", "dpstats.results", "dpstats.rows.sources"} <= graph["dpstats.api"]
    assert "dpstats.formula.frame" in graph["dpstats.rows.sources"]
    assert {"dpstats.methods", "dpstats.methods.common", "dpstats.methods.common.linalg"} <= graph["dpstats.inference"]
    assert "dpstats.privacy.ledger" not in graph["dpstats.privacy.composition"]  # under TYPE_CHECKING only
    assert ("dpstats.results", "dpstats.plotting") in deferred  # coef_plot: matplotlib is optional
    assert {"dpstats.methods.ols", "dpstats.methods.tukey", "dpstats.inference"} <= graph["dpstats.methods.registry"]
    assert {("dpstats.methods.tukey", "dpstats.methods.tukey.em"),
            ("dpstats.methods.blocks", "dpstats.methods.tukey.block_sums")} <= dynamic
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles(_with({"a": {"b"}, "b": set(), "c": set()}, {("b", "a"), ("c", "a")})) == [["a", "b"]]


@pytest.mark.parametrize("source, found", [
    ("import importlib\ndef f():\n    return importlib.import_module('dpstats.api')", {"dpstats.api"}),
    ("from importlib import import_module\nimport_module(f'{__package__}.api')", {"dpstats.api"}),
    ("_MOVED = {'x': 'dpstats.api'}\ndef __getattr__(name):\n    return __import__(_MOVED[name])", {"dpstats.api"}),
    ("import sys\ndef __getattr__(name):\n    return sys.modules['dpstats.api'].dp_ols", {"dpstats.api"}),
    ("import sys\nNAMES = ('api', 'results')\nsys.modules.get(f'dpstats.{NAMES[0]}')",
     {"dpstats.api", "dpstats.results"}),
    ("import importlib\ndef f(x):\n    m = f'dpstats.{x}'\n    return importlib.import_module(m)\nX = 'api'",
     {"dpstats.api"}),
    ("import importlib\nimportlib.import_module('numpy')", set()),
])
def test_modules_loaded_by_name_are_read(source, found):
    """A module-level ``__getattr__`` (or any function) that loads a module by name is an edge of the graph."""
    assert _named("dpstats.theory", ast.parse(source)) == found


def test_no_module_imports_a_module_that_imports_it_back():
    graph, _, _ = _graphs()
    assert _cycles(graph) == []


def test_no_deferred_import_closes_a_cycle():
    """An import inside a function (a module-level ``__getattr__`` included) may load an optional extra or a
    module below, never one that imports this module back: that is a cycle too, only hidden."""
    graph, deferred, _ = _graphs()
    assert _cycles(_with(graph, deferred)) == []


def test_no_module_loaded_by_name_closes_a_cycle():
    """Import time, deferred imports and loads by name together: no cycle, and no listed exception."""
    graph, deferred, dynamic = _graphs()
    assert _cycles(_with(graph, deferred | dynamic)) == []


#: ways of loading the registry later from a module below it: each would close a cycle (the registry imports
#: the estimators, which import dpstats.inference)
LAZY_LOADS = {
    "import in a function": "def f():\n    from dpstats.methods.registry import get_method\n    return get_method",
    "importlib by name": "import importlib\ndef f():\n    return importlib.import_module('dpstats.methods.registry')",
    "module __getattr__": ("import sys\ndef __getattr__(name):\n"
                           "    return getattr(sys.modules['dpstats.methods.registry'], name)"),
}


@pytest.mark.parametrize("how", sorted(LAZY_LOADS))
def test_a_lazy_cycle_is_found(how):
    """The tests above would fail on a lazy cycle: the registry loaded later by dpstats.inference (which the
    estimators import) closes one through the estimators, however it is loaded."""
    graph, deferred, dynamic = _graphs()
    _, later, named = _edges("dpstats.inference", ast.parse(LAZY_LOADS[how]))
    assert "dpstats.methods.registry" in later | named
    found = _cycles(_with(graph, deferred | dynamic | {("dpstats.inference", t) for t in later | named}))
    assert any({"dpstats.inference", "dpstats.methods.registry", "dpstats.methods.ssp"} <= set(c) for c in found)


#: the layers below the estimators: they import the method types (dpstats.methods.spec) and the shared blocks,
#: and take a method's facts as arguments, never from the registry
BELOW_THE_ESTIMATORS = ("dpstats.methods", "dpstats.methods.spec", "dpstats.methods.common", "dpstats.inference",
                        "dpstats.rates", "dpstats.rows", "dpstats.privacy.mechanisms")


def test_the_registry_imports_the_estimators_and_the_layers_below_reach_none():
    graph, deferred, dynamic = _graphs()
    estimators = {f"dpstats.methods.{name}" for name in BUILTIN_METHODS}
    assert estimators <= graph["dpstats.methods.registry"]
    full = _with(graph, deferred | dynamic)
    assert [(low, est) for low in BELOW_THE_ESTIMATORS for est in sorted(estimators) if _reaches(full, low, est)] == []


def test_each_builtin_estimator_exports_the_spec_the_registry_holds():
    """An estimator's module is named after its method and exports its ``SPEC``; the registry registers it (the
    module registers nothing itself), and every built-in method is registered once dpstats is imported."""
    assert set(BUILTIN_METHODS) <= set(available_methods())
    for name in BUILTIN_METHODS:
        assert importlib.import_module(f"dpstats.methods.{name}").SPEC is get_method(name)


@pytest.mark.parametrize("old, new, names", [
    ("dpstats.formula_language", "dpstats.formula.language", ["NAMESPACE", "FORMULA_ENV", "check_factor"]),
    ("dpstats.formula_language", "dpstats.formula.parse", ["expand_formula", "model_desc", "term", "join_terms"]),
    ("dpstats.design_recipe", "dpstats.formula.recipe", ["DesignRecipe"]),
    ("dpstats.methods.extremes", "dpstats.methods.common.extremes", ["QUIET", "quiet", "row_norms", "residuals"]),
    ("dpstats.methods.linalg", "dpstats.methods.common.linalg", ["solve_noisy_normal_equations", "psd_sqrt"]),
    ("dpstats.methods.row_passes", "dpstats.methods.common.row_passes", ["add_arrays"]),
])
def test_old_module_paths_still_work_with_a_deprecation_warning(old, new, names):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=new.replace(".", r"\.")):
        module = importlib.import_module(old)
    for name in names:
        assert getattr(module, name) is getattr(importlib.import_module(new), name)


def test_the_formula_package_exports_what_the_formula_module_did():
    assert formula.Design is design.Design and formula.build_design is design.build_design
    assert formula.public_design is design.public_design and formula.public_prototype is design.public_prototype
    assert formula.FramePlan is frame.FramePlan
    assert formula.design_matrix_for_prediction is predict.design_matrix_for_prediction
    assert formula.DesignRecipe is recipe.DesignRecipe


@pytest.mark.parametrize("old, new, name", [
    ("dpstats.theory", "dpstats.planning", "plan"),
    ("dpstats.api_arrays", "dpstats.api", "dp_ols_arrays"),
])
def test_names_moved_to_an_upper_layer_still_work_with_a_deprecation_warning(old, new, name):
    """The old module does not import the new one (no cycle): the new home hands the name down (MovedUp)."""
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated"):
        obj = getattr(module, name)
    assert obj is getattr(importlib.import_module(new), name) is getattr(dpstats, name)
    with pytest.warns(DeprecationWarning):
        exec(f"from {old} import {name} as imported", namespace := {})
    assert namespace["imported"] is obj
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018



#: deprecated names served by their old module and handed down by their new home (MovedUp): (old, new, name)
HANDED_DOWN = [
    *(("dpstats.methods", "dpstats.methods.registry", name)
      for name in ("get_method", "register", "available_methods")),
    *(("dpstats.privacy.mechanisms", "dpstats.privacy.peeling", name)
      for name in ("peeling_noise_multiplier", "PeelingBlock", "peeling_block", "peeling")),
    *(("dpstats.privacy.mechanisms", "dpstats.privacy.poisson_gaussian", name)
      for name in ("poisson_subsample", "poisson_gaussian_epsilon", "PoissonGaussianBlock", "poisson_gaussian_block",
                   "ClippedGridSum", "add_grid_sums")),
    ("dpstats.privacy.mechanisms", "dpstats.methods.tukey.em", "restricted_exponential_mechanism"),
    ("dpstats.inference", "dpstats.methods.registry", "withheld_reason"),
    ("dpstats.inference", "dpstats.methods.registry", "WITHHOLD_THRESHOLD"),
]


@pytest.mark.parametrize("old, new, name", [h for h in HANDED_DOWN if h[0] != "dpstats.inference"])
def test_names_handed_down_from_a_module_above_still_work_with_a_deprecation_warning(old, new, name):
    """The old module does not import the new one (it is above: the new one imports the old one, directly or
    through the packages on the way); the new home hands the name down (MovedUp) when dpstats is imported."""
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} is deprecated"):
        obj = getattr(module, name)
    assert obj is getattr(importlib.import_module(new), name)
    with pytest.warns(DeprecationWarning):
        exec(f"from {old} import {name} as imported", namespace := {})
    assert namespace["imported"] is obj


def test_a_fresh_interpreter_finds_every_handed_down_name_at_its_old_home():
    """Importing only the old module (Python runs dpstats/__init__.py first, which imports every new home)."""
    code = ("import importlib, json, warnings\n"
            "warnings.simplefilter('ignore', DeprecationWarning)\n"
            f"found = [hasattr(importlib.import_module(old), name) for old, _, name in {HANDED_DOWN!r}]\n"
            "print(json.dumps(found))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PACKAGE.parent).stdout
    assert json.loads(out) == [True] * len(HANDED_DOWN)


def test_methods_holds_estimators_and_the_registry_only():
    """Every module directly in dpstats/methods/ is an estimator, the registry, the method types (spec) or a
    deprecated alias (a module whose body warns); the shared blocks live in dpstats/methods/common/."""
    helpers = []
    for module, path in MODULES.items():
        if module.count(".") != 2 or not module.startswith("dpstats.methods.") or path.name == "__init__.py":
            continue
        name = module.rsplit(".", 1)[1]
        source = path.read_text(encoding="utf-8")
        if name not in BUILTIN_METHODS and name not in ("registry", "spec") and "DeprecationWarning" not in source:
            helpers.append(module)
    assert helpers == []
