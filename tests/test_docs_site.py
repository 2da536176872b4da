"""The documentation site stays true: its code runs, and its generated pages follow the package.

* the Python blocks of the tour and of every user-guide page run, in order, page by page;
* the shell commands the pages show are real ``dpstats`` commands;
* CI builds the site with the README's command, verbatim;
* the generators of ``docs/_ext/dpstats_site.py`` (run by every build) give every registered method a
  page with its paper, needs, guarantee, options and proof page, document a new method's options from
  its dataclass, state the rule of ``method="auto"`` that the pipeline follows, list every public name
  in the API reference once, and list every vignette in the gallery.

The build itself (``python -m sphinx -W ...``, which also checks references, links and docstrings) is a
CI step of its own, after the tests (``.ci/run``).
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from pathlib import Path

import pytest

import dpstats
from dpstats.methods.registry import MethodOptions, MethodSpec, available_methods

pytest.importorskip("numpydoc", reason="the site's generators read options docs with numpydoc (test extra)")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "_ext"))
import dpstats_site  # noqa: E402

ALL_PAGES = [*sorted(DOCS.glob("*.md")), *sorted((DOCS / "guide").glob("*.md")),
             *sorted((DOCS / "proofs").glob("*.md"))]


def _blocks(path: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", path.read_text(encoding="utf-8"), flags=re.S)


#: the tour and the user guide: every page with Python code
GUIDE_PAGES = [p for p in [DOCS / "tour.md", *sorted((DOCS / "guide").glob("*.md"))] if _blocks(p, "python")]


def test_the_tour_and_the_guide_show_code():
    assert {p.stem for p in GUIDE_PAGES} >= {"tour", "bounds-and-levels", "choosing-a-method", "privacy-report",
                                            "intervals", "budget", "tables", "sklearn"}


@pytest.mark.parametrize("page", GUIDE_PAGES, ids=[p.stem for p in GUIDE_PAGES])
def test_page_code_runs(page, tmp_path, monkeypatch, capsys):
    blocks = _blocks(page, "python")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(page), "exec"), namespace)  # noqa: S102 - our own documentation
    capsys.readouterr()


def _commands() -> set[str]:
    from dpstats.cli import build_parser  # noqa: PLC0415

    return {name.split()[0] for name, _ in dpstats_site._subcommands(build_parser())}


@pytest.mark.parametrize("page", ALL_PAGES, ids=[p.stem for p in ALL_PAGES])
def test_shell_commands_are_real(page):
    commands = _commands()
    for block in _blocks(page, "bash"):
        for line in block.splitlines():
            if line.startswith("dpstats "):
                assert line.split()[1] in commands | {"--help", "--version"}, (page.name, line)


def test_ci_builds_the_site_with_the_readme_command():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Documentation", 1)[1].split("\n## ", 1)[0]
    commands = [b.strip() for b in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]
    assert len(commands) == 1
    build = commands[0]
    assert build.startswith('python -m pip install ".[docs]" && python -m sphinx -W ')
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert build in ci, "CI must build the site with the README's command"
    tests = next(i for i, line in enumerate(ci) if "python -m pytest" in line)
    assert ci.index(build) > tests, "the site is built after the tests, in the same environment"


def test_every_registered_method_gets_a_page():
    specs = dict(available_methods())
    for name, spec in specs.items():
        page = dpstats_site.method_page(spec, specs, DOCS, ROOT)
        assert page.startswith(f"({name}-method)=\n# `{name}`: {spec.title}")
        assert spec.citation in page
        assert f"| Needs declared bounds | {'yes' if spec.needs_bounds else 'no'}" in page
        assert spec.proof in page
        for option in spec.option_names:
            assert f"`{option}`" in page, (name, option)
        assert "## When `method=\"auto\"` picks it" in page and "## How to cite" in page
        if not dpstats_site.auto_rules_of(spec) and spec.private:
            assert "Never" in page


@dataclasses.dataclass(frozen=True)
class _NewOptions(MethodOptions):
    """Options of a new method.

    Attributes
    ----------
    rounds : int
        Number of rounds.
    inference, bootstrap
        As for :class:`dpstats.methods.ssp.SSPOptions`.
    """

    rounds: int = 7
    inference: bool = True
    bootstrap: int = 1000
    width: float = dataclasses.field(default=2.5, metadata={"doc": "The width, from field metadata."})


def test_a_new_method_gets_a_page_from_its_spec_and_options():
    spec = MethodSpec(name="newmethod", title="A new estimator", citation="Someone (2031), Algorithm 1",
                      fit=lambda rows, ctx, options: None, options=_NewOptions, needs_bounds=False, auto_rank=99,
                      regimes="when it suits")
    specs = {**available_methods(), "newmethod": spec}
    page = dpstats_site.method_page(spec, specs, DOCS, ROOT)
    assert "Someone (2031), Algorithm 1" in page and "when it suits" in page
    assert "`rounds` (int; default: `7`)\n: Number of rounds." in page
    assert "`width` (default: `2.5`)\n: The width, from field metadata." in page
    assert "`bootstrap` (int; default: `1000`)\n: Number of parametric bootstrap replicates" in page  # "As for"
    assert "rank 99" in page and "not written yet (`docs/proofs/newmethod.md`)" in page
    assert "## Privacy argument" not in page  # no module of dpstats implements it
    assert "has no run of `newmethod` yet" in page


@dataclasses.dataclass(frozen=True)
class _Regime:
    """A regime of ``auto`` as a registry with ``AutoRule`` declares it (the fields the pages read)."""

    rank: int
    bounds: str = "any"
    min_n_mu: float = 0.0
    max_n_mu: float = float("inf")
    min_rows: object = None
    max_rows: float = float("inf")
    min_d: int = 1
    max_d: int = 1 << 30
    intervals: bool = False
    why: str = ""


@dataclasses.dataclass(frozen=True)
class _SpecWithRegimes(MethodSpec):
    """A spec whose ``auto`` regimes are declared as rules (``effective_auto_rules``), as other branches add."""

    effective_auto_rules: tuple = ()


def test_a_method_with_several_auto_regimes_gets_them_on_its_page():
    regimes = (_Regime(rank=5, bounds="missing", min_n_mu=40.0, max_rows=20_000, why="measured best there"),
               _Regime(rank=2, bounds="all", max_n_mu=300.0, min_rows=lambda d: 50 * d, intervals=True))
    spec = _SpecWithRegimes(name="regimes", title="Regimes", citation="Someone (2032)", needs_bounds=False,
                            fit=lambda rows, ctx, options: None, options=_NewOptions, effective_auto_rules=regimes)
    specs = {**available_methods(), "regimes": spec}
    page = dpstats_site.method_page(spec, specs, DOCS, ROOT)
    assert "- rank 2: bounds are declared for every variable; n >= 100 at d = 2" in page
    assert "n mu < 300, where mu is the Gaussian-DP parameter" in page and "(it reports intervals there)" in page
    assert "- rank 5: some variable has no declared bounds;" in page and "n < 20,000; n mu >= 40" in page
    assert "Evidence: measured best there" in page
    # without bounds only the rank-5 regime applies: from n * mu >= 40 at the pages' budget
    assert dpstats_site.auto_start_without_bounds(spec, 2) == math.ceil(40.0 / dpstats_site._example_mu())
    assert "| [`regimes`](regimes.md) | Regimes | no | worst-case | 2, 5 |" in dpstats_site.methods_index(specs, ROOT)


def _ported(spec: MethodSpec) -> bool:
    """False while the method still runs through the TEMPORARY adapter of the previous interface."""
    try:
        from dpstats.methods.legacy import LegacyFit  # noqa: PLC0415
    except ImportError:  # the adapter is gone: every method is ported
        return True
    return not isinstance(spec.fit, LegacyFit)


#: TEMPORARY: private methods ported before proofs moved to docs/proofs/, whose proof page is still to be
#: written (their proofs are in their module docstrings).  The list only shrinks: the test fails on an entry
#: whose page exists.
PROOFS_TO_WRITE: set[str] = set()


def test_every_ported_private_method_has_its_proof_page():
    """A missing proof page does not break the build (the method page says "not written yet"), but a method
    that is ported (no longer run by the adapter of the previous interface) must have one."""
    missing = []
    for name, spec in available_methods().items():
        has_page = (ROOT / spec.proof).exists()
        if name in PROOFS_TO_WRITE:
            assert not has_page, f"{spec.proof} exists now: remove {name!r} from PROOFS_TO_WRITE"
        elif spec.private and _ported(spec) and not has_page:
            missing.append(spec.proof)
    assert missing == [], f"ported methods without their proof page: {missing}"


def test_a_proof_page_is_linked_from_its_method_page():
    for name, spec in available_methods().items():
        page = dpstats_site.method_page(spec, dict(available_methods()), DOCS, ROOT)
        if (ROOT / spec.proof).exists():
            assert f"[{spec.proof}](../proofs/{name}.md)" in page
        else:
            assert f"not written yet (`{spec.proof}`)" in page
            if spec.private:  # until then, the argument as the module states it
                assert "## Privacy argument" in page and dpstats_site.method_module(spec).__doc__.strip()[:40] in page


def test_the_auto_rule_the_pages_state_is_the_pipelines():
    page, mismatches = dpstats_site.auto_page(dict(available_methods()))
    assert mismatches == []
    assert "MissingBoundsError" in page


def test_api_reference_lists_every_public_name_once(tmp_path):
    dpstats_site.api_pages(tmp_path)
    seen: dict[int, str] = {}
    for page in tmp_path.glob("*.rst"):
        if page.stem == "index":
            continue
        module = dpstats_site.importlib_module(page.stem)
        for name in re.findall(r"^   (\w+)$", page.read_text(), flags=re.M):
            obj = getattr(module, name)
            if dpstats_site.kind_of(obj) == "data":
                continue
            assert id(obj) not in seen, f"{page.stem}.{name} is also listed as {seen[id(obj)]}"
            seen[id(obj)] = f"{page.stem}.{name}"
    for name in dpstats.__all__:
        obj = getattr(dpstats, name)
        if not name.startswith("_") and dpstats_site.kind_of(obj) != "module":
            assert id(obj) in seen, f"dpstats.{name} is not in the API reference"
    assert (tmp_path / "cli.md").exists()


def test_gallery_lists_every_vignette(tmp_path):
    dpstats_site.vignettes(ROOT, tmp_path)
    index = (tmp_path / "index.md").read_text()
    for notebook in sorted((ROOT / "vignettes").glob("[0-9][0-9]-*.ipynb")):
        assert (tmp_path / notebook.name).read_bytes() == notebook.read_bytes()
        assert f"({notebook.name})" in index
        assert (tmp_path / "_thumbs" / f"{notebook.stem}.png").exists()


def test_choosing_a_method_lists_every_registered_method():
    specs = dict(available_methods())
    table = dpstats_site.needs_snippet(specs)
    for name in specs:
        assert f"| [`{name}`](../methods/{name}.md) |" in table
    page = (DOCS / "guide" / "choosing-a-method.md").read_text()
    assert "```{include} ../methods/_needs.md" in page and "```{include} ../methods/_example.md" in page


def test_the_newcomer_question_is_answered():
    """"Which method should I use for 800 rows without bounds, what will it cost, and how do I cite it":
    the worked example of guide/choosing-a-method.md says what auto does at that size with and without bounds
    and names each bound-free method that accepts it with its paper; the page says what it costs and how to
    cite; each method's page has its paper and a "How to cite" section (test_every_registered_method_gets_a_page).
    """
    specs = dict(available_methods())
    snippet = dpstats_site.example_snippet(specs, ROOT)
    assert dpstats_site.EXAMPLE_ROWS == 800
    assert "`method=\"auto\"` without bounds" in snippet and "With bounds declared" in snippet
    for name in dpstats_site.bound_free_at(specs, 800, dpstats_site.EXAMPLE_COVARIATES + 1):
        assert f"[`{name}`](../methods/{name}.md) ({specs[name].citation})" in snippet
    page = (DOCS / "guide" / "choosing-a-method.md").read_text()
    for question in ("**Which method.**", "**What it will cost.**", "**How to cite it.**"):
        assert question in page
