"""The ``Examples`` sections of the package's docstrings run, and print what they say.

Every module of dpstats is collected (the public ones and the internal ones: an example anywhere must
work) and the docstrings of each module that has examples are run with :mod:`doctest`, one test per
module (a module whose examples are all skipped is not collected).  Examples fix their own seeds
(``random_state=0``); the global numpy seed is fixed too, for any example that would draw from it.
``# doctest: +SKIP`` is kept for the few examples that need files or a cluster.  Figures are drawn with
matplotlib's non-interactive backend and closed after each module.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats

#: modules whose import needs an optional dependency: (module, the dependency)
OPTIONAL = {"dpstats.sklearn": "sklearn"}

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _module(name: str):
    with warnings.catch_warnings():  # the deprecated aliases (dpstats.sources, ...) warn on import
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module(name)
    return sys.modules[name]  # not getattr: dpstats.compare is also the name of a function


def _examples(name: str) -> list[doctest.DocTest]:
    return [t for t in doctest.DocTestFinder(exclude_empty=True).find(_module(name), name) if t.examples]


def _runs_an_example(name: str) -> bool:
    """True when some example of the module is not skipped (``# doctest: +SKIP``)."""
    return any(not ex.options.get(doctest.SKIP, False) for t in _examples(name) for ex in t.examples)


def _modules() -> list[str]:
    names = ["dpstats"] + [m.name for m in pkgutil.walk_packages(dpstats.__path__, "dpstats.")]
    return [n for n in names if not n.endswith("__main__")]


def _available(name: str) -> bool:
    return name not in OPTIONAL or importlib.util.find_spec(OPTIONAL[name]) is not None


MODULES = _modules()
WITH_EXAMPLES = [n for n in MODULES if _available(n) and _runs_an_example(n)]


def test_collects_the_public_modules_and_their_examples():
    for name in ("dpstats", "dpstats.api", "dpstats.tables", "dpstats.compare", "dpstats.datasets",
                 "dpstats.simulate", "dpstats.plotting", "dpstats.privacy.accountant", "dpstats.privacy.report",
                 "dpstats.privacy.ledger", "dpstats.privacy.audit"):
        assert name in WITH_EXAMPLES, f"{name} has no docstring examples"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    for test in _examples(name):
        np.random.seed(0)
        test.globs.update({"np": np, "pd": pd, "dpstats": dpstats})
        runner.run(test, out=report.append)
    import matplotlib.pyplot as plt  # noqa: PLC0415

    plt.close("all")
    result = runner.summarize(verbose=False)
    assert result.attempted > 0
    assert result.failed == 0, "".join(report)
