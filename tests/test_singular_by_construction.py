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
from dpstats.errors import InvalidBoundsError, SingularDesignError
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


SPLINE = "knots=[3, 6], lower_bound=0, upper_bound=10"


@pytest.mark.parametrize("formula,dependent", [
    # x is a cubic spline: with the intercept it lies in the span of the bs columns (bs drops one basis column)
    (f"y ~ x + bs(x, {SPLINE})", ["x"] + [f"bs(x, {SPLINE})[{k}]" for k in range(5)]),
    # the cr and cc bases sum to 1, the intercept
    (f"y ~ cr(x, {SPLINE})", ["Intercept"] + [f"cr(x, {SPLINE})[{k}]" for k in range(4)]),
    (f"y ~ cc(x, {SPLINE}) + z", ["Intercept"] + [f"cc(x, {SPLINE})[{k}]" for k in range(3)]),
    (f"y ~ bs(x, include_intercept=True, {SPLINE})", ["Intercept"] + [f"bs(x, include_intercept=True, {SPLINE})[{k}]"
                                                                       for k in range(6)]),
    # on x's declared [0, 10] the B-splines that start at the knots 12 and 15 are 0
    ("y ~ bs(x, knots=[12, 15], lower_bound=0, upper_bound=20)",
     [f"bs(x, knots=[12, 15], lower_bound=0, upper_bound=20)[{k}]" for k in (3, 4)]),
])
def test_dependent_spline_columns_are_refused_by_name_and_nothing_is_spent(data, formula, dependent):
    """A spline of a bounded variable is a polynomial between public breakpoints (its literal knots and
    boundaries, the variable's bounds): the probe sees every piece, so a dependency by construction is found."""
    assert build_design(formula, data, bounds=BOUNDS).dependent_columns() == dependent
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(SingularDesignError, match="singular by construction") as info:
        dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, accountant=acct, random_state=0)
    assert all(repr(name) in str(info.value) for name in dependent)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("formula", [
    f"y ~ bs(x, {SPLINE})",  # without include_intercept, bs drops one column: full rank beside the intercept
    f"y ~ cr(x, {SPLINE}) - 1",
    f"y ~ cc(x, {SPLINE}) - 1 + z",
    "y ~ bs(x, knots=[3, 3.001], lower_bound=0, upper_bound=10)",  # close knots: each piece is probed
    "y ~ bs(x, knots=[3, 3.000001], lower_bound=0, upper_bound=10) + z",
    "y ~ bs(x, knots=[9.998, 9.999], lower_bound=0, upper_bound=10)",  # close knots near a bound
    "y ~ x + bs(x, knots=[3, 6], lower_bound=2, upper_bound=8)",  # clipped at 2 and 8: x is no spline on [0, 10]
    "y ~ bs(x, knots=[3, 6], degree=1, lower_bound=0, upper_bound=10) + I(x > 9) + I(x >= 3)",
    f"y ~ bs(x, {SPLINE}):C(g) + z",
    "y ~ bs(z, knots=[2, 3], lower_bound=1, upper_bound=5) + cr(x, knots=[5], lower_bound=0, upper_bound=10) - 1",
])
def test_full_rank_spline_designs_are_not_refused(data, formula):
    assert build_design(formula, data, bounds=BOUNDS).dependent_columns() == []


def test_splines_of_expressions_are_left_out(data):
    """A spline of an expression is piecewise at points the probe does not know: its columns are left out (the
    check only ever errs towards fitting)."""
    formula = ("y ~ x + bs(np.log(z), knots=[0.5, 1], lower_bound=0, upper_bound=2) "
               "+ bs(z, knots=[2], lower_bound=1, upper_bound=5)")
    assert build_design(formula, data, bounds=BOUNDS).dependent_columns() == []


def test_unbounded_variables_are_probed_on_both_signs(data):
    """pgd needs no bounds; |x| and x are dependent only on one sign, so they are not refused."""
    design = build_design("y ~ np.abs(x) + x", data)
    assert design.dependent_columns() == []
    assert build_design("y ~ x + I(3 * x)", data).dependent_columns() == ["x", "I(3 * x)"]


def test_huge_declared_bounds_do_not_invent_a_dependency(data):
    """The largest declared range allowed (+-1e100, ``MAX_BOUND_MAGNITUDE``) beside a small one: the probe rows'
    products span 200 orders of magnitude and must not read as a linear dependency; beyond it, a typed refusal."""
    design = build_design("y ~ x + z", data, bounds={"x": (-1e100, 1e100), "z": (1, 5), "y": (-20, 30)})
    assert design.dependent_columns() == []
    with pytest.raises(InvalidBoundsError, match="reaches beyond"):
        build_design("y ~ x + z", data, bounds={"x": (-1e300, 1e300), "z": (1, 5), "y": (-20, 30)})


def test_the_sparse_method_is_not_refused(data):
    res = dpstats.dp_ols("y ~ x + I(2 * x) + z", data, 1.0, 1e-6, method="lasso", bounds=BOUNDS, random_state=0,
                         sparsity=3)
    assert res.params.size == 4


@pytest.mark.parametrize("column,value,same", [("x", np.inf, 0.0), ("z", np.inf, 1.0), ("z", -np.inf, 1.0)])
def test_an_infinite_value_is_read_as_zero_whether_or_not_a_transform_clips_its_variable(data, column, value, same):
    """x is bare; z enters np.log, so it is clipped to its bounds before the transform: an infinite value sets its
    cell of the design to 0 in both (a public map of the row; a refusal would be a free query), so the fit equals
    that of the row with x = 0, or with z = 1 (np.log(1) = 0)."""
    bad, equal = data.copy(), data.copy()
    bad.loc[7, column], equal.loc[7, column] = value, same
    fits = [dpstats.dp_ols("y ~ x + np.log(z)", d, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
            for d in (bad, equal)]
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())




@pytest.mark.parametrize("formula", ["y ~ I(x == x)", "y ~ x + I(x != x)", "y ~ x + I(np.log(z) >= np.log(z))"])
def test_a_comparison_of_an_expression_with_itself_is_refused(data, formula):
    """``I(x == x)`` is the same for every row (a copy of the intercept; ``x != x`` a column of zeros): refused from
    the formula as singular by construction, before any data (before: a fit whose two coefficients were noise)."""
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(SingularDesignError, match="with itself") as info:
        dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, accountant=acct, random_state=0)
    assert "nothing was spent" in str(info.value) and acct.spent == (0.0, 0.0)


def _years(lo: int, hi: int, dtype: str = "int64", n: int = N) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"yr": rng.integers(lo, hi + 1, n).astype(dtype), "x": rng.uniform(0, 10, n)})
    df["y"] = rng.normal(0, 1, n)
    return df


def test_an_integer_variable_with_few_declared_values_is_probed_on_its_grid():
    """yr is an int64 column declared in [1990, 1992]: clipped to its bounds it takes 3 values on every allowed data
    set, so 1, yr, yr^2 and yr^3 are 4 columns of rank 3.  Refused by name and reason from the dtype and the
    bounds, before anything is spent, and the same way for two data sets that differ in one row (before: fitted,
    the probe drew yr as a real number)."""
    formula, bounds = "y ~ yr + I(yr ** 2) + I(yr ** 3)", {"yr": (1990, 1992), "y": (-5, 5)}
    df = _years(1990, 1992)
    other = df.copy()
    other.loc[3, "yr"] = 1990 if other.loc[3, "yr"] != 1990 else 1992
    for d in (df, other):
        acct = dpstats.PrivacyAccountant(5.0, 1e-5)
        with pytest.raises(SingularDesignError, match="singular by construction") as info:
            dpstats.dp_ols(formula, d, 1.0, 1e-6, method="ssp", bounds=bounds, accountant=acct, random_state=0)
        assert all(repr(c) in str(info.value) for c in ("Intercept", "yr", "I(yr ** 2)", "I(yr ** 3)"))
        assert "'yr' takes only 3 values by its integer dtype and declared bounds [1990, 1992]" in str(info.value)
        assert acct.spent == (0, 0)
    # without the intercept, yr (yr - 1) (yr - 2) = 0 on {0, 1, 2}: the three powers alone
    assert build_design(formula, _years(0, 2), bounds={"yr": (0, 2), "y": (-5, 5)}).dependent_columns() == [
        "yr", "I(yr ** 2)", "I(yr ** 3)"]


@pytest.mark.parametrize("lo,hi,dtype,formula", [
    (1990, 1992, "int64", "y ~ yr + I(yr ** 2)"),  # 3 columns on 3 values: full rank
    (1990, 2020, "int64", "y ~ yr + I(yr ** 2)"),  # a large offset: no dependency within double precision
    (1990, 2020, "int64", "y ~ yr + I(yr ** 2) + I(yr ** 3)"),
    (0, 3, "int64", "y ~ yr + I(yr ** 2) + I(yr ** 3) + x"),
    (0, 2, "int64", "y ~ C(g) * (yr + I(yr ** 2))"),  # 9 columns on 9 cells (yr by g): each cell is probed
    (0, 5, "int64", "y ~ (yr + I(yr ** 2)) * (x + I(x ** 2))"),
    (1990, 1992, "float64", "y ~ yr + I(yr ** 2) + I(yr ** 3)"),  # a float column is no integer: any real
])
def test_designs_full_rank_on_the_integer_grid_are_not_refused(lo, hi, dtype, formula):
    df = _years(lo, hi, dtype).assign(g=lambda d: pd.Categorical(np.resize(["a", "b", "c"], len(d))))
    bounds = {"yr": (lo, hi), "x": (0, 10), "y": (-5, 5)}
    assert build_design(formula, df, bounds=bounds).dependent_columns() == []
    assert dpstats.dp_ols(formula, df, 1.0, 1e-6, method="ssp", bounds=bounds, random_state=0).params.size


def test_the_integer_grid_needs_integer_bounds_and_few_values():
    """Bounds that are no integers clip an integer to a non-integer; more than INTEGER_GRID_VALUES values are probed
    as reals; two consecutive integers are the 0/1 supports as before."""
    from dpstats.formula.identifiable import INTEGER_GRID_VALUES
    formula = "y ~ yr + I(yr ** 2) + I(yr ** 3)"
    clipped = build_design(formula, _years(1990, 1992), bounds={"yr": (1989.5, 1992.5), "y": (-5, 5)})
    assert clipped.rank_probe.integer_grid("yr") is None and clipped.dependent_columns() == []
    top = INTEGER_GRID_VALUES - 1
    assert len(build_design(formula, _years(0, top), bounds={"yr": (0, top), "y": (-5, 5)})
               .rank_probe.integer_grid("yr")) == INTEGER_GRID_VALUES
    assert build_design(formula, _years(0, top + 1), bounds={"yr": (0, top + 1), "y": (-5, 5)}
                        ).rank_probe.integer_grid("yr") is None
    assert build_design("y ~ yr + I(yr ** 2)", _years(0, 1), bounds={"yr": (0, 1), "y": (-5, 5)}
                        ).dependent_columns() == ["yr", "I(yr ** 2)"]


def test_the_probe_memo_keys_on_the_integer_variables():
    """The same design, plan, schema and bounds with and without yr's integer dtype: two verdicts (the memo of
    probes, keyed by the public facts the probe reads, must not hand one the other's)."""
    from dpstats.formula import identifiable
    design = build_design("y ~ yr + I(yr ** 2) + I(yr ** 3)", _years(1990, 1992),
                          bounds={"yr": (1990, 1992), "y": (-5, 5)})
    probe = design.rank_probe
    assert probe.dependent_columns(design.design_info) == ["Intercept", "yr", "I(yr ** 2)", "I(yr ** 3)"]
    as_real = identifiable.RankProbe(probe.plan, probe.schema, probe.bounds, probe.supports, frozenset())
    assert as_real.dependent_columns(design.design_info) == []
    assert probe.dependent_columns(design.design_info) == ["Intercept", "yr", "I(yr ** 2)", "I(yr ** 3)"]


def test_the_plan_refuses_a_design_singular_on_the_integer_grid_as_the_fit_does():
    formula, bounds = "y ~ yr + I(yr ** 2) + I(yr ** 3)", {"yr": (1990, 1992), "y": (-5, 5)}
    text = str(dpstats.plan(formula=formula, bounds=bounds, method="ssp", n=1000, epsilon=1.0, delta=1e-6,
                            dtypes={"yr": "int64"}))
    assert "singular by construction" in text and "'yr' takes only 3 values" in text
    assert "singular" not in str(dpstats.plan(formula=formula, bounds=bounds, method="ssp", n=1000, epsilon=1.0,
                                              delta=1e-6))  # floats where dtypes= gives no type: any real


@pytest.mark.parametrize("lo,hi,formula,dependent", [
    (-1, 1, "y ~ np.abs(yr) + I(yr ** 2)", ["np.abs(yr)", "I(yr ** 2)"]),  # |yr| = yr^2 on {-1, 0, 1}
    (-1, 2, "y ~ I(yr > 0) + I(yr <= 0)", ["Intercept", "I(yr > 0)[T.True]", "I(yr <= 0)[T.True]"]),
    (0, 1, "y ~ I(yr > 0) + yr", ["I(yr > 0)[T.True]", "yr"]),  # the same column on {0, 1}
    (0, 2, "y ~ C(g) + C(g):I(yr > 0) + C(g):I(yr ** 2 > 0)",
     ["C(g)[a]:I(yr > 0)[T.True]", "C(g)[b]:I(yr > 0)[T.True]", "C(g)[c]:I(yr > 0)[T.True]",
      "C(g)[a]:I(yr ** 2 > 0)[T.True]", "C(g)[b]:I(yr ** 2 > 0)[T.True]", "C(g)[c]:I(yr ** 2 > 0)[T.True]"]),
])
def test_comparisons_and_absolute_values_of_grid_variables_are_checked(lo, hi, formula, dependent):
    """A comparison or an absolute value of variables with a finite public domain (an integer grid, a factor) is a
    function of values the probe takes every one of, so its columns enter the rank check (before: left out, and
    these fitted).  Refused by name, free, from public facts alone (the same for two data sets)."""
    df = _years(lo, hi).assign(g=lambda d: pd.Categorical(np.resize(["a", "b", "c"], len(d))))
    bounds = {"yr": (lo, hi), "y": (-5, 5)}
    assert build_design(formula, df, bounds=bounds).dependent_columns() == dependent
    other = df.copy()
    other["yr"] = other["yr"].iloc[::-1].to_numpy()
    for d in (df, other):
        acct = dpstats.PrivacyAccountant(5.0, 1e-5)
        with pytest.raises(SingularDesignError, match="singular by construction") as info:
            dpstats.dp_ols(formula, d, 1.0, 1e-6, method="ssp", bounds=bounds, accountant=acct, random_state=0)
        assert all(repr(c) in str(info.value) for c in dependent) and acct.spent == (0, 0)


@pytest.mark.parametrize("lo,hi,dtype,formula", [
    (0, 2, "int64", "y ~ I(yr > 0) + yr"),  # 1, [yr > 0], yr on {0, 1, 2}: full rank
    (-2, 2, "int64", "y ~ np.abs(yr) + yr"),
    (-1, 2, "int64", "y ~ np.abs(yr) + I(yr ** 2)"),  # |2| != 2^2
    (-1, 1, "float64", "y ~ np.abs(yr) + I(yr ** 2)"),  # a float column takes any real: left out as before
    (0, 2, "int64", "y ~ C(g) * I(yr > 0) + x:I(yr > 1) + x"),
    (0, 2, "int64", "y ~ I(x > 3) + I(yr > 0) + x"),  # x is no grid: its comparison is left out as before
])
def test_full_rank_comparisons_of_grid_variables_are_not_refused(lo, hi, dtype, formula):
    df = _years(lo, hi, dtype).assign(g=lambda d: pd.Categorical(np.resize(["a", "b", "c"], len(d))))
    bounds = {"yr": (lo, hi), "x": (0, 10), "y": (-5, 5)}
    assert build_design(formula, df, bounds=bounds).dependent_columns() == []
    assert dpstats.dp_ols(formula, df, 1.0, 1e-6, method="ssp", bounds=bounds, random_state=0).params.size


def test_the_probe_memo_keys_on_the_grid_of_a_compared_variable():
    """The same design probed with and without yr's integer grid: |yr| and yr^2 are one column on {-1, 0, 1} and
    two on [-1, 1]; the memo must not hand one verdict to the other."""
    from dpstats.formula import identifiable
    design = build_design("y ~ np.abs(yr) + I(yr ** 2)", _years(-1, 1), bounds={"yr": (-1, 1), "y": (-5, 5)})
    probe = design.rank_probe
    as_real = identifiable.RankProbe(probe.plan, probe.schema, probe.bounds, probe.supports, frozenset())
    for _ in range(2):
        assert probe.dependent_columns(design.design_info) == ["np.abs(yr)", "I(yr ** 2)"]
        assert as_real.dependent_columns(design.design_info) == []


def test_the_plan_refuses_an_absolute_value_dependent_on_the_integer_grid_as_the_fit_does():
    formula, bounds = "y ~ np.abs(yr) + I(yr ** 2)", {"yr": (-1, 1), "y": (-5, 5)}
    text = str(dpstats.plan(formula=formula, bounds=bounds, method="ssp", n=1000, epsilon=1.0, delta=1e-6,
                            dtypes={"yr": "int64"}))
    assert "singular by construction" in text and "'np.abs(yr)', 'I(yr ** 2)'" in text
    assert "singular" not in str(dpstats.plan(formula=formula, bounds=bounds, method="ssp", n=1000, epsilon=1.0,
                                              delta=1e-6))  # a float yr is any real in [-1, 1]: |yr| != yr^2
