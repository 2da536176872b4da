"""The vignettes run top to bottom from a clean kernel, and their stored outputs are current.

Each notebook in ``vignettes/`` is executed afresh with nbclient (about 5 to 30
seconds each on 2 cores) and compared with the copy stored in the repository by
``vignettes/build.py``'s :func:`compare`: executed in order, no error, the same
kinds of output in every cell, and, in cells tagged ``compare``, the same text
with numbers within a relative tolerance of 1e-3.  When the package's output
changes on purpose, regenerate the notebooks with

    python vignettes/build.py

The documentation site renders the stored notebooks (never executing them):
``tests/test_docs_site.py`` checks that its gallery lists every one.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "regenerate with: python vignettes/build.py"

nbformat = pytest.importorskip("nbformat", reason="the vignette tests need the test extra (nbformat, nbclient)")
pytest.importorskip("nbclient", reason="the vignette tests need the test extra (nbclient)")
pytest.importorskip("ipykernel", reason="the vignette tests need the test extra (ipykernel)")


def _load_build():
    spec = importlib.util.spec_from_file_location("vignettes_build", ROOT / "vignettes" / "build.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


build = _load_build()
NOTEBOOKS = build.notebooks()
EXPECTED = ["01-getting-started", "02-choosing-a-method", "03-budget-for-many-analyses", "04-corrupted-labels",
            "05-sparse-high-dimensional", "06-reproducing-the-papers"]


def test_every_vignette_is_there():
    assert [p.stem for p in NOTEBOOKS] == EXPECTED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_vignette_runs_and_stored_outputs_are_current(path):
    stored = nbformat.read(path, as_version=4)
    fresh = build.execute(path)  # raises CellExecutionError, with the failing cell, if any cell fails
    problems = build.compare(stored, fresh)
    assert not problems, f"{path.name} is out of date ({REGENERATE}):\n" + "\n".join(problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_vignette_is_stored_with_outputs_and_figures(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code), f"{path.name}: not executed; {REGENERATE}"
    assert any(c.outputs for c in code)
    figures = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert figures, f"{path.name} should show at least one figure"
    assert any("compare" in c.metadata.get("tags", []) for c in code), "no cell is tagged for comparison"
    sources = "\n".join(c.source for c in code)
    assert "random_state" in sources, "vignettes fix their seeds"
    assert "import dpstats" in sources


def test_readme_links_every_vignette():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Vignettes", 1)[1].split("\n## ", 1)[0]
    for path in NOTEBOOKS:
        assert f"vignettes/{path.name}" in section, path.name
    assert "python vignettes/build.py" in section


def test_compare_accepts_rounding_and_rejects_real_changes():
    assert build.text_differences("R^2 = 0.8731 (3/3)", "R^2 = 0.8732 (3/3)") is None  # last printed digit
    assert build.text_differences("eps=1e-06", "eps=1.0000001e-06") is None
    assert build.text_differences("R^2 = 0.873", "R^2 = 0.912") is not None
    assert build.text_differences("auto chose 'adassp'", "auto chose 'tukey'") is not None
    assert build.text_differences("a\nb", "a\nb\nc") is not None
