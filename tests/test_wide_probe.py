"""The rank probe of wide designs (:mod:`dpstats.formula.identifiable`): a bare numeric variable that no other term
uses takes part in no dependency, so the probe leaves its column out, and a design's probe is built once however
often the fit asks for its dependent columns and constant weights.  Deterministic (no noise): false-failure rate 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import patsy
import pytest

from dpstats.formula.design import public_design

D = 300
PLAIN = [f"x{j}" for j in range(D)]


def _design(formula: str, bounds: dict, levels: dict | None = None):
    names = [name for name in bounds if name != "y"]
    columns = {name: pd.Series(dtype=float) for name in [*names, "y"]}
    for name, values in (levels or {}).items():
        columns[name] = pd.Series(pd.Categorical([], categories=values))
    design, _, _ = public_design(formula, pd.DataFrame(columns), bounds=bounds, levels=levels)
    return design


def _bounds(extra: dict | None = None) -> dict:
    return {**{name: (-1.0, 1.0) for name in PLAIN}, "y": (-5.0, 5.0), **(extra or {})}


@pytest.fixture
def builds(monkeypatch):
    """The number of columns of every design patsy builds on the probe rows."""
    seen: list[int] = []
    original = patsy.build_design_matrices

    def counting(infos, *args, **kwargs):
        seen.append(len(infos[0].column_names))
        return original(infos, *args, **kwargs)

    monkeypatch.setattr("dpstats.formula.identifiable.patsy.build_design_matrices", counting)
    return seen


def test_separable_columns_are_bare_varying_variables_no_other_term_uses():
    formula = "y ~ " + " + ".join(PLAIN) + " + I(2 * x1) + Q('x2') + x3:x4"
    design = _design(formula, _bounds())
    mask = design.rank_probe.separable_columns(design.design_info)
    separable = {name for name, flag in zip(design.column_names, mask, strict=True) if flag}
    assert separable == set(PLAIN) - {"x1", "x2", "x3", "x4"}
    assert sorted(design.dependent_columns()) == sorted(["x1", "I(2 * x1)", "x2", "Q('x2')"])


def test_a_wide_design_of_plain_columns_needs_no_probe(builds):
    design = _design("y ~ " + " + ".join(PLAIN) + " - 1", _bounds())
    assert design.dependent_columns() == []
    assert design.constant_weights() is None
    assert builds == []


def test_the_probe_holds_only_the_columns_that_can_be_dependent(builds):
    design = _design("y ~ 0 + C(g) + " + " + ".join(PLAIN), _bounds(), {"g": ["a", "b", "c"]})
    weights = design.constant_weights()
    assert builds == [3]
    assert weights is not None
    np.testing.assert_allclose(weights[:3], 1.0, rtol=1e-12)
    assert not weights[3:].any()
    assert design.dependent_columns() == []


def test_the_probe_is_built_once_per_design(builds):
    design = _design("y ~ x0 + I(x0 ** 2) + x1:x2 + " + " + ".join(PLAIN[3:20]), _bounds())
    for _ in range(3):
        assert design.dependent_columns() == []
        assert design.constant_weights() is None
        design.public_centring()
    assert len(builds) == 1
