"""Designs singular by construction are refused from public facts (the formula, the schema, the declared bounds
and levels), before anything is spent; designs that are full rank on the declared domain are never refused.

Also: an infinite value is refused the same way whether its variable is bare or enters a transform.
The checks are deterministic (no noise is drawn before them), so the false-failure rate is 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import NonFiniteValueError, SingularDesignError
from dpstats.formula import build_design

N = 300


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.uniform(0, 10, N), "z": rng.uniform(1, 5, N), "k": rng.integers(0, 2, N),
                       "g": pd.Categorical(rng.choice(["a", "b", "c"], N), categories=["a", "b", "c"]),
                       "flag": rng.random(N) < 0.5})
    df["y"] = 1 + df.x - df.z + rng.normal(0, 1, N)
    return df


BOUNDS = {"x": (0, 10), "z": (1, 5), "k": (0, 1), "y": (-20, 30)}


@pytest.mark.parametrize("formula,dependent", [
    ("y ~ x + I(2 * x)", ["x", "I(2 * x)"]),
    ("y ~ x + z + I(x + z)", ["x", "z", "I(x + z)"]),
    ("y ~ x + I(x - x)", ["I(x - x)"]),
    ("y ~ flag + I(1 - flag)", None),  # the intercept is their sum
    ("y ~ C(g) - 1 + I(x - x + 1)", None),  # the dummies of g sum to the constant column
])
def test_dependent_columns_are_refused_by_name_and_nothing_is_spent(data, formula, dependent):
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    bounds = {**BOUNDS, **({"I(1 - flag)": (0, 1)} if "flag" in formula else {})}
    with pytest.raises(SingularDesignError, match="singular by construction") as info:
        dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds=bounds, accountant=acct, random_state=0)
    for name in dependent or []:
        assert repr(name) in str(info.value)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("formula", [
    "y ~ x + I(x ** 2) + I(x ** 3)",
    "y ~ x * C(g) + z",
    "y ~ np.log(z) + z + np.sqrt(x)",
    "y ~ C(g) - 1 + x",
    "y ~ np.abs(x - 5) + x",
    "y ~ bs(x, knots=[3, 6], lower_bound=0, upper_bound=10) + z",
    "y ~ k + x:k + flag",
    # piecewise columns are left out of the check: thresholds at a bound or an integer, close knots
    "y ~ x + I(k == 1) + I(x > 0) + I(x >= 10)",
    "y ~ bs(x, knots=[0.2, 0.4, 1], lower_bound=0, upper_bound=10) + np.log(z)",
    "y ~ x + np.abs(x - 5)",
])
def test_full_rank_designs_are_never_refused(data, formula):
    assert dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0).params.size


def test_piecewise_columns_on_unbounded_variables_are_not_refused(data):
    """Without bounds a variable is probed on [-3, 3]: a threshold at 12 or a spline on [0, 25] never varies there,
    so such columns are left out of the check rather than called dependent."""
    for formula in ("y ~ I(x >= 12) + z", "y ~ bs(x, knots=[5, 10], lower_bound=0, upper_bound=25) + z"):
        assert build_design(formula, data).dependent_columns() == []


def test_a_truly_dependent_spline_is_not_claimed(data):
    """x beside a cubic spline of x with an intercept is dependent, but splines are left out of the check (their
    pieces can fall between probe rows): the check only ever errs towards fitting."""
    assert build_design("y ~ x + bs(x, knots=[3, 6], lower_bound=0, upper_bound=10)", data,
                        bounds=BOUNDS).dependent_columns() == []


def test_unbounded_variables_are_probed_on_both_signs(data):
    """pgd needs no bounds; |x| and x are dependent only on one sign, so they are not refused."""
    design = build_design("y ~ np.abs(x) + x", data)
    assert design.dependent_columns() == []
    assert build_design("y ~ x + I(3 * x)", data).dependent_columns() == ["x", "I(3 * x)"]


def test_huge_declared_bounds_do_not_invent_a_dependency(data):
    design = build_design("y ~ x + z", data, bounds={"x": (-1e300, 1e300), "z": (1, 5), "y": (-20, 30)})
    assert design.dependent_columns() == []


def test_the_sparse_method_is_not_refused(data):
    res = dpstats.dp_ols("y ~ x + I(2 * x) + z", data, 1.0, 1e-6, method="lasso", bounds=BOUNDS, random_state=0,
                         sparsity=3)
    assert res.params.size == 4


@pytest.mark.parametrize("column,value", [("x", np.inf), ("z", np.inf), ("z", -np.inf)])
def test_an_infinite_value_is_refused_whether_or_not_a_transform_clips_its_variable(data, column, value):
    """x is bare; z enters np.log, so it is clipped to its bounds before the transform: inf is refused in both."""
    bad = data.copy()
    bad.loc[7, column] = value
    with pytest.raises(NonFiniteValueError, match="same whatever variable, value or row"):
        dpstats.dp_ols("y ~ x + np.log(z)", bad, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
