"""The README is part of the product: its commands, its tour and its method table must be true."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpstats.methods.registry import available_methods

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _bash_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def test_readme_has_exactly_two_quick_start_commands_and_ci_runs_the_test_command():
    quick = README.split("## Quick start", 1)[1].split("## ", 1)[0]
    commands = [b.strip() for b in re.findall(r"```bash\n(.*?)```", quick, flags=re.S)]
    assert len(commands) == 2
    install_and_example, test_command = commands
    assert "pip install ." in install_and_example and "dpstats example" in install_and_example
    ci = (ROOT / ".ci" / "run").read_text()
    assert test_command in ci.splitlines(), "CI must run the README's test command verbatim"


def test_method_table_matches_the_registry():
    table = README.split("## Methods", 1)[1].split("## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        m = re.match(r"\|\s*`(\w+)`\s*\|(.*)\|\s*(yes|no)\s*\|(.*)\|", line)
        if m:
            rows[m.group(1)] = (m.group(3), m.group(4).strip())
    registry = available_methods()
    assert set(rows) == set(registry), "README method table and registry differ"
    for name, spec in registry.items():
        needs, guarantee = rows[name]
        assert needs == ("yes" if spec.needs_bounds else "no"), name
        assert guarantee.lower().startswith(spec.guarantee.lower().split()[0]), (name, guarantee, spec.guarantee)


def test_tour_code_runs(capsys):
    tour = README.split("## A short tour", 1)[1].split("## Methods", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", tour, flags=re.S)
    assert blocks
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    out = capsys.readouterr().out
    assert "Differentially Private Regression Results" in out
    assert "nothing was spent" in out or "nothing was" in out
    assert "\\begin{table}" in out
    # each column of the tour's table is labelled by the method its fit used (`res` is auto's pgd at this n)
    frame = namespace["tab"].to_frame()
    for label in frame.columns:
        assert str(frame.loc["Method", label]).strip().lower() in str(label).lower(), label


@pytest.mark.parametrize("block", _bash_blocks())
def test_bash_blocks_name_real_commands(block):
    for line in block.splitlines():
        if line.startswith("dpstats "):
            assert line.split()[1] in {"fit", "example", "methods", "datasets"}


def test_readme_does_not_promise_each_estimate_inside_its_interval():
    """pgd's interval undoes its shrinkage, so an estimate can sit outside it: the README says so and points to the
    guide's explanation, whose heading it quotes."""
    text = " ".join(README.split())
    assert "coefficient inside its own interval" not in text
    assert "not always inside its own interval" in text
    heading = "An estimate outside its own interval"
    assert f'[docs/guide/intervals.md](docs/guide/intervals.md), "{heading}"' in text
    assert f"**{heading}.**" in (ROOT / "docs" / "guide" / "intervals.md").read_text()
