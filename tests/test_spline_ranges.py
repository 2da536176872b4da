"""The regression splines cr() and cc() get their columns' ranges from their literal bounds (public facts), as
bs() does: a fit with bounds on the variables needs nothing more, and every basis value lies inside the range.
Deterministic (no noise before the checks): false-failure rate 0."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.formula import build_design

KNOTS = "knots=[700, 900, 1100, 1300], lower_bound=400, upper_bound=1600"
BOUNDS = {"sat": (400, 1600), "y": (0, 4)}


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    sat = np.r_[rng.uniform(400, 1600, 500), [400.0, 1600.0, 700.0, 1300.0]]  # the ends and knots included
    return pd.DataFrame({"sat": sat, "y": rng.uniform(0, 4, sat.size)})


@pytest.mark.parametrize("spline", ["cr", "cc", "bs"])
def test_every_basis_value_lies_in_the_derived_range(data, spline):
    design = build_design(f"y ~ 0 + {spline}(sat, {KNOTS})", data, bounds=BOUNDS)
    assert not design.missing_bounds
    lo = np.array([iv.lo for iv in design.column_intervals])
    hi = np.array([iv.hi for iv in design.column_intervals])
    assert np.all(design.X >= lo) and np.all(design.X <= hi)
    if spline == "bs":
        assert lo.min() == 0.0 and hi.max() == 1.0


def test_a_cr_fit_needs_only_the_variables_bounds(data):
    res = dpstats.dp_ols(f"y ~ 0 + cr(sat, {KNOTS})", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    assert np.isfinite(res.params).all()
