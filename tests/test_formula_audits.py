"""A red-team of the formula language and of the messages a fit gives (session 51).

Each attack is run on a neighbouring pair (one row replaced; n is public) with the same seed: factor code that
would compute across rows must be refused from the formula, before any row is read (the same type and message on
both neighbours, nothing spent, and the same refusal from :func:`dpstats.plan`, which reads no data); a refusal
decided after the rows are read must not depend on them.  Deterministic (fixed data and seeds): the
false-failure rate is 0.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import (
    DisallowedExpressionError,
    DPStatsError,
    FormulaError,
    StatefulTransformError,
    UndeclaredLevelsError,
    UnseenLevelError,
)

N = 200
BOUNDS = {"x": (0.0, 10.0), "z": (0.0, 5.0), "y": (-10.0, 20.0)}


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 9.5, N)
    return pd.DataFrame({"y": 1 + 0.5 * x + rng.normal(0, 1, N), "x": x, "z": rng.uniform(0, 5, N),
                         "g": pd.Categorical(rng.choice(["a", "b"], N), categories=["a", "b"]),
                         "k": (np.arange(N) % 3).astype(np.int64)})


def _neighbours(**row0: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A replace-one pair: the same rows except row 0, which gets ``row0`` on the second."""
    d, dp = _frame(), _frame()
    for column, value in row0.items():
        dp.loc[0, column] = value
    return d, dp


def _outcome(formula: str, data: pd.DataFrame, **kw: Any) -> tuple[str, str, tuple[float, float], list[str]]:
    """(exception type, message, budget spent, warnings) of a fit that must be refused."""
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(DPStatsError, match=r"\w") as info:
            dpstats.dp_ols(formula, data, 1.0, 1e-6, accountant=acct, random_state=0, **kw)
    return (type(info.value).__name__, str(info.value), acct.spent,
            [f"{w.category.__name__}: {w.message}" for w in caught])


# -- 1. factor code that would compute across rows: refused from the formula ----------------------------------------

#: (formula, what the refusal says); each would make one row's value change other rows' design entries
ESCAPES = [
    # patsy's stateful transforms and splines whose knots come from the data
    ("y ~ standardize(x)", "computes the mean/sd of the private data"),
    ("y ~ scale(x)", "computes the mean/sd of the private data"),
    ("y ~ cr(x, df=4)", "places knots and boundaries at quantiles"),
    ("y ~ cc(x, df=4)", "places knots and boundaries at quantiles"),
    ("y ~ te(cr(x, df=3), cr(z, df=3))", "choose knots from the data"),
    ("y ~ bs(x, knots=[2, 5], lower_bound=0, upper_bound=np.max(x))", "upper_bound must be a literal"),
    ("y ~ bs(x, knots=[2, 5], lower_bound=0, upper_bound=10, degree=k)", "degree must be a literal"),
    # contrasts and levels computed from the data
    ("y ~ C(k, Treatment(reference=np.max(k)))", "the contrast must be Treatment"),
    ("y ~ C(g, Sum(omit=g[0]), levels=['a', 'b'])", "the contrast must be Treatment"),
    ("y ~ C(g, levels=['a', 'b'], contrast=Poly(scores=list(x)))", "the contrast must be Treatment"),
    ("y ~ C(g, levels=sorted(set(g)))", "levels must be written as a literal list"),
    ("y ~ C(g, levels=['a', 'b'] + list(g))", "levels must be written as a literal list"),
    ("y ~ C(x > np.mean(x))", r"np\.mean\(\) computes on every row at once"),
    ("y ~ C(g, eval_env=1, levels=['a', 'b'])", r"C\(\) takes only a contrast and levels"),
    # numpy's cross-row functions, bare, prefixed, nested, inside I() or a transform, on either side of '~'
    ("y ~ I(x - numpy.mean(x))", r"numpy\.mean\(\) computes on every row at once"),
    ("y ~ I(np.roll(x, 1))", r"np\.roll\(\) computes on every row at once"),
    ("y ~ I(np.diff(x))", r"np\.diff\(\) computes on every row at once"),
    ("y ~ I(np.cumsum(x))", r"np\.cumsum\(\) computes on every row at once"),
    ("y ~ I(np.argsort(x))", r"np\.argsort\(\) computes on every row at once"),
    ("y ~ I(np.unique(x))", r"np\.unique\(\) computes on every row at once"),
    ("y ~ I(np.percentile(x, 50) + 0 * x)", r"np\.percentile\(\) computes on every row at once"),
    ("y ~ I(np.where(x > 5, 1, 0))", r"np\.where\(\) is not one of the row-wise functions"),
    ("y ~ I(np.clip(x, 0, 10))", r"np\.clip\(\) is not one of the row-wise functions"),
    ("y ~ I(np.maximum(x, z))", r"np\.maximum\(\) is not one of the row-wise functions"),
    ("y ~ I(np.tanh(x - np.mean(x)))", r"np\.mean\(\) computes on every row at once"),
    ("y ~ np.log(x + np.max(x))", r"np\.max\(\) computes on every row at once"),
    ("y ~ abs(x - np.mean(x))", r"np\.mean\(\) computes on every row at once"),
    ("np.sort(y) ~ x", r"np\.sort\(\) computes on every row at once"),
    ("I(y - np.mean(y)) ~ x", r"np\.mean\(\) computes on every row at once"),
    ("y ~ poly(np.mean(x) - x, 2)", r"np\.mean\(\) computes on every row at once"),
    ("y ~ poly(x, degree=np.max(k))", r"poly\(x, k\) takes a variable"),
    # numpy functions reached through attributes, keyword arguments that reach other rows
    ("y ~ np.log(x, where=x > np.mean(x))", r"np\.log\(\) takes exactly one argument"),
    ("y ~ np.log(x, out=x)", r"np\.log\(\) takes exactly one argument"),
    ("y ~ np.add.accumulate(x)", r"calling \.accumulate\(\) on a value is not evaluated"),
    ("y ~ np.minimum.reduce(x)", r"calling \.reduce\(\) on a value is not evaluated"),
    ("y ~ np.lib.stride_tricks.sliding_window_view(x, 2)", r"calling \.sliding_window_view\(\) on a value"),
    ("y ~ np.abs.__call__(x)", r"calling \.__call__\(\) on a value is not evaluated"),
    ("y ~ getattr(np, 'mean')(x)", r"only functions called by name are evaluated"),
    ("y ~ pd.Series.rank(x)", r"calling \.rank\(\) on a value is not evaluated"),
    # pandas methods, attributes, dunders
    ("y ~ x.rank(pct=True)", r"calling \.rank\(\) on a value is not evaluated"),
    ("y ~ I(x.shift(1))", r"calling \.shift\(\) on a value is not evaluated"),
    ("y ~ I(x.fillna(x.mean()))", r"calling \.fillna\(\) on a value is not evaluated"),
    ("y ~ I(x.shape[0] + 0 * x)", "indexing reads values of other rows"),
    ("y ~ I(x.T)", "attribute access"),
    ("y ~ I(x.size)", "attribute access"),
    ("y ~ I(x.__class__)", "attribute access"),
    ("y ~ I(x.iloc[0])", "indexing reads values of other rows"),
    # subscripts, broadcasting, matmul, lambdas, comprehensions, walrus, evaluated strings, builtins
    ("y ~ I(x - x[0])", "indexing reads values of other rows"),
    ("y ~ I(x[::-1])", "indexing reads values of other rows"),
    ("y ~ np.sqrt(x)[0]", "indexing reads values of other rows"),
    ("y ~ I(x @ x)", r"only \+ - \* / \*\* are evaluated"),
    ("y ~ I((lambda v: v)(x))", "only functions called by name are evaluated"),
    ("y ~ I({v for v in x})", "comprehensions are not evaluated"),
    ("y ~ I((v for v in x))", "comprehensions are not evaluated"),
    ("y ~ I((w := x) + w)", "assignments are not evaluated"),
    ("y ~ I(eval('x.mean()'))", r"calls the function eval\(\), which dpstats does not evaluate"),
    ("y ~ I(__import__('os'))", r"calls the function __import__\(\), which dpstats does not evaluate"),
    ("y ~ I(len(x) + 0 * x)", r"len\(\) computes on every row at once"),
    ("y ~ I(round(x))", r"calls the function round\(\), which dpstats does not evaluate"),
    ("y ~ log(*[x])", r"\*args or \*\*kwargs"),
    # operators: a column exponent, bitwise, modulo, boolean and conditional expressions, chained comparisons
    ("y ~ I(x ** z)", "the exponent must be a number"),
    ("y ~ I(2 ** x)", "the exponent must be a number"),
    ("y ~ I(x % 2)", r"only \+ - \* / \*\* are evaluated"),
    ("y ~ I(~(x > 1))", r"only unary - and \+ are evaluated"),
    ("y ~ I(x > 1 and z > 1)", "'and'/'or' are not row-wise on columns"),
    ("y ~ I(1 if x else 0)", "conditional expressions are not row-wise"),
    ("y ~ I(x < z < 5)", "chained comparisons are not row-wise"),
    ("y ~ I(x in [1, 2])", "write one comparison"),
    # string formatting, non-numeric literals
    ("y ~ I(f'{x}')", "f-strings are not evaluated"),
    ("y ~ I('%s' % x)", r"only \+ - \* / \*\* are evaluated"),
    ("y ~ I('{0}'.format(x))", r"calling \.format\(\) on a value is not evaluated"),
    ("y ~ I(x * np.inf)", "attribute access"),
    ("y ~ I(x * 1j)", "only finite numbers may appear"),
]


@pytest.mark.parametrize("formula, why", ESCAPES, ids=[f for f, _ in ESCAPES])
def test_cross_row_code_is_refused_from_the_formula_on_both_neighbours_and_by_plan(formula: str, why: str) -> None:
    """Each escape is refused with the formula language's typed error, which names the construct and why, the same on
    both neighbours, with nothing spent and no warning; plan, which has no data, refuses it alike."""
    d, dp = _neighbours(x=9.4, z=4.9, y=19.0, k=2)
    one, other = (_outcome(formula, data, method="ssp", bounds=BOUNDS) for data in (d, dp))
    assert one == other
    kind, message, spent, caught = one
    assert kind in {DisallowedExpressionError.__name__, StatefulTransformError.__name__}
    assert spent == (0.0, 0.0) and caught == []
    assert re.search(why, message), message
    with pytest.raises(DisallowedExpressionError, match=why):  # plan reads no data: the refusal is the formula's
        dpstats.plan(epsilon=1.0, n=1000, bounds={**BOUNDS, "k": (0, 2)}, levels={"g": ["a", "b"]}, formula=formula)


# -- 2. refusals decided after the rows are read ---------------------------------------------------------------------

@pytest.mark.parametrize("formula", ["y ~ C(k, Treatment(7))", "y ~ C(k, Sum(omit=7))", "y ~ x + C(k, Treatment(7))",
                                     "y ~ C(k, Treatment(reference=7)) + C(k, Sum)"])
@pytest.mark.parametrize("method", ["ssp", "tukey"])
def test_a_contrast_naming_a_level_is_refused_alike_whether_or_not_a_row_has_it(formula: str, method: str) -> None:
    """A factor without declared levels whose contrast names a level: patsy read the levels from the rows, so on
    data without a 7 the design failed (a FormulaError) and on its neighbour with one row k = 7 it reached the
    undeclared-levels refusal: a free answer to whether any row has the value.  Both are now refused for the
    undeclared levels, decided from the formula and the schema."""
    d, dp = _neighbours(k=7)
    one, other = (_outcome(formula, data, method=method, bounds=BOUNDS) for data in (d, dp))
    assert one == other
    assert one[0] == UndeclaredLevelsError.__name__ and one[2] == (0.0, 0.0)
    assert "the levels of 'C(k, " in one[1] and "would be read from the private data" in one[1]


def test_a_poly_contrast_of_undeclared_levels_is_refused_without_numpys_warning() -> None:
    """The refusal is decided on the zero-row schema, where Poly's mean of no scores made numpy warn "Mean of empty
    slice" beside it."""
    d, dp = _neighbours(k=2)
    one, other = (_outcome("y ~ x + C(k, Poly)", data, method="ssp", bounds=BOUNDS) for data in (d, dp))
    assert one == other and one[0] == UndeclaredLevelsError.__name__ and one[3] == []


def test_a_contrast_naming_a_declared_level_still_fits_and_an_undeclared_one_is_still_named() -> None:
    d, _ = _neighbours()
    res = dpstats.dp_ols("y ~ x + C(k, Treatment(2), levels=[0, 1, 2])", d, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                         random_state=0)
    assert "C(k, Treatment(2), levels=[0, 1, 2])[T.0]" in res.params.index
    with pytest.raises(FormulaError, match=r"takes 7 as its reference level, which is not a level of 'k'"):
        dpstats.dp_ols("y ~ x + C(k, Treatment(7))", d, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                       levels={"k": [0, 1, 2]})


CONTRAST_MISUSE = [
    ("y ~ C(g, Sum(omit='zz'))", FormulaError, "takes 'zz' as its omitted level, which is not a level of 'g'"),
    ("y ~ C(k, Sum(omit=7), levels=[0, 1, 2])", FormulaError, "takes 7 as its omitted level, which is not a level"),
    ("y ~ C(k, Poly(scores=[1, 2]), levels=[0, 1, 2])", FormulaError,
     "gives 2 Poly scores, but 'k' has 3 declared levels"),
    ("y ~ C(k, Poly(scores=[0, 1, 1e308]), levels=[0, 1, 2])", DisallowedExpressionError,
     "Poly's scores must be a literal list of finite numbers"),
    ("y ~ C(k, Helmert(1), levels=[0, 1, 2])", DisallowedExpressionError, "Helmert takes no arguments"),
    ("y ~ C(k, Sum(reference=1), levels=[0, 1, 2])", DisallowedExpressionError, "Sum takes one argument, omit="),
    ("y ~ C(I(x > 5), Treatment(7))", FormulaError,
     "takes 7 as its reference level, which is not a level of 'I(x > 5)' (its public levels: False, True)"),
    ("y ~ C(x > 5, Sum(omit='a'))", FormulaError, "takes 'a' as its omitted level, which is not a level of 'x > 5'"),
    ("y ~ C(I(x > 5), Poly([1, 2, 3]))", FormulaError, "gives 3 Poly scores, but 'I(x > 5)' has 2 public levels"),
]


@pytest.mark.parametrize("formula, error, says", CONTRAST_MISUSE, ids=[f for f, _, _ in CONTRAST_MISUSE])
def test_a_contrast_that_cannot_code_the_levels_is_refused_from_the_formula(formula: str, error: type,
                                                                             says: str) -> None:
    """A contrast whose literal arguments contradict the public levels failed in patsy while the rows were read,
    reported as "patsy could not evaluate the design ... on the data" with its message withheld (or, for scores
    whose powers overflow, as an "empty interval [nan, nan]"): the refusal is the formula's, and says what to
    change."""
    d, dp = _neighbours(k=2)
    one, other = (_outcome(formula, data, method="ssp", bounds=BOUNDS) for data in (d, dp))
    assert one == other and one[0] == error.__name__ and one[2] == (0.0, 0.0), one
    assert says in one[1]
    with pytest.raises(error, match=re.escape(says)):
        dpstats.plan(epsilon=1.0, n=1000, bounds=BOUNDS, levels={"g": ["a", "b"]}, formula=formula)


def test_a_comparison_inside_i_is_a_factor_of_public_levels_and_a_boolean_columns_levels_are_checked() -> None:
    """``C(I(x > 5))`` has the public levels False and True, as ``C(x > 5)`` has (it was refused for undeclared
    levels, with the advice to declare levels of x); a contrast naming a level of a boolean column that is neither
    False nor True is refused from the formula (it was patsy's failure on the data, its message withheld)."""
    d, _ = _neighbours()
    d["b"] = d["x"] > 5
    res = dpstats.dp_ols("y ~ x + C(I(z > 2))", d, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    assert "C(I(z > 2))[T.True]" in res.params.index
    with pytest.raises(FormulaError, match=r"takes 7 as its reference level, which is not a level of 'b' \(its "
                                           r"declared levels: False, True\)"):
        dpstats.dp_ols("y ~ x + C(b, Treatment(7))", d, 1.0, 1e-6, method="ssp", bounds=BOUNDS)


# -- 3. an unseen level in predict names the variable to fix --------------------------------------------------------

@pytest.mark.parametrize("formula, newdata, says", [
    ("y ~ x + C(g)", {"x": [1.0], "g": ["zz"]}, r"a value of the variable 'g' \(the factor 'C\(g\)'\) "),
    ("y ~ x + g", {"x": [1.0], "g": ["zz"]}, r"a value of the variable 'g' "),
    ("y ~ x + C(g, Treatment('b'))", {"x": [1.0], "g": ["zz"]},
     r"the variable 'g' \(the factor 'C\(g, Treatment\('b'\)\)'\)"),
    ("y ~ x + C(Q('g'), levels=['a', 'b'])", {"x": [1.0], "g": ["zz"]}, r"the variable 'g' \(the factor 'C\(Q"),
    ("y ~ x + C(np.abs(k), levels=[0, 1, 2])", {"x": [1.0], "k": [3]},
     r"values of the variable 'k' on which the factor 'C\(np\.abs\(k\), levels=\[0, 1, 2\]\)' computes a level"),
])
def test_an_unseen_level_names_the_variable(formula: str, newdata: dict[str, Any], says: str) -> None:
    """``UnseenLevelError`` named patsy's term (``C(race)``); a user fixes the variable (``race``)."""
    d, _ = _neighbours()
    res = dpstats.dp_ols(formula, d, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    with pytest.raises(UnseenLevelError, match=says + r".*the fitted model does not know \(its levels are: "):
        res.predict(pd.DataFrame(newdata))
