"""Privacy holes of the formula layer, the messages and the API guard (issue 15, items 1, 2, 3, 5, 6).

Each hole is tested on a neighbouring pair (replace one row; n is public):
the deterministic ones need no statistics, only that both neighbours give the
same refusal (type and message) or the same released structure, with nothing
spent where the refusal is public.  The old code failed each of them: it ran
cross-row factor code, refused on values inside the declared bounds, quoted
values in messages, let untyped exceptions escape and released the exact n
after ``missing="drop"``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.bounds import DataBounds
from dpstats.errors import (
    DataTypeError,
    DisallowedExpressionError,
    DPStatsError,
    InternalFitError,
    InvalidArgumentError,
    MissingBoundsError,
    SettlementError,
    StatefulTransformError,
    TransformDomainError,
    UnseenLevelError,
)
from dpstats.formula import build_design, design_matrix_for_prediction
from dpstats.methods import registry
from dpstats.methods.common.sufficient import SufficientStatistics
from dpstats.privacy.audit import audit_mechanism

N = 400
SECRET = "PATIENT-7731-XQZ"


def frame(n: int = N, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 9.5, n)
    return pd.DataFrame({"y": 1.0 + 0.5 * x + rng.normal(0, 1, n), "x": x,
                         "g": pd.Categorical(rng.choice(["a", "b"], n), categories=["a", "b"]),
                         "code": np.array([f"c{i % 7}" for i in range(n)], dtype=object)})


def neighbours(column: str, value_d: Any, value_dprime: Any, row: int = 0, n: int = N) -> tuple[pd.DataFrame, ...]:
    """A replace-one pair: the same rows except ``row`` of ``column``."""
    d, dp = frame(n), frame(n)
    d[column] = d[column].astype(object) if isinstance(value_d, str) else d[column]
    dp[column] = dp[column].astype(object) if isinstance(value_dprime, str) else dp[column]
    d.loc[row, column] = value_d
    dp.loc[row, column] = value_dprime
    return d, dp


def refusal(data: Any, formula: str, *, match: str, **kw: Any) -> tuple[type, str, dpstats.PrivacyAccountant]:
    """(type, message, accountant) of a dp_ols call that must be refused with a dpstats error whose message
    matches ``match``."""
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with pytest.raises(DPStatsError, match=match) as info:
        dpstats.dp_ols(formula, data, 1.0, 1e-6, accountant=acct, random_state=0, **kw)
    return type(info.value), str(info.value), acct


def chain_text(exc: BaseException) -> str:
    """str and repr of an exception and of everything chained to it."""
    seen, parts, todo = set(), [], [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        parts += [str(e), repr(e)]
        todo += [e.__cause__, e.__context__]
    return "\n".join(parts)


def same_public_refusal(d: Any, dp: Any, formula: str, expected: type, *, match: str, **kw: Any) -> str:
    """Both neighbours refused with the same type and message, nothing spent; returns the message."""
    t1, m1, a1 = refusal(d, formula, match=match, **kw)
    t2, m2, a2 = refusal(dp, formula, match=match, **kw)
    assert issubclass(t1, expected) and t1 is t2 and m1 == m2
    assert a1.spent == a2.spent == (0.0, 0.0) and a1.remaining == a2.remaining == (10.0, 1e-4)
    return m1


# -- 1. factor code that reads across rows ---------------------------------------------------------------------------

CROSS_ROW = [
    "y ~ I(x / np.max(np.abs(x)))",
    "y ~ I(x - np.mean(x))",
    "y ~ C(g, levels=list(np.unique(g)))",
    "y ~ I(x / (np.max(x) < 0.9))",
    "y ~ bs(x, knots=np.quantile(x, [0.3, 0.6]), lower_bound=0, upper_bound=10)",
    "y ~ I(x - x.mean())",
    "y ~ I(x[0] * x)",
    "y ~ I(np.sort(x))",
    "y ~ I((lambda v: v - v.mean())(x))",
    "y ~ I(sum(x) * x)",
    "y ~ center(x)",
]
# why each CROSS_ROW formula is refused: the message names the construct and says what makes it cross-row
CROSS_ROW_WHY = (r"computes on every row at once|levels must be written as a literal list|knots must be a literal"
                 r"|calling \.mean\(\) on a value is not evaluated|indexing reads values of other rows"
                 r"|only functions called by name are evaluated|computes the mean/sd of the private data"
                 r"|comprehensions are not evaluated")


@pytest.mark.parametrize("formula", CROSS_ROW)
@pytest.mark.parametrize("method", ["ssp", "tukey"])
def test_cross_row_factor_code_is_refused_before_the_data(formula, method):
    d, dp = neighbours("x", 1.0, 1000.0)
    msg = same_public_refusal(d, dp, formula, DisallowedExpressionError, method=method,
                              bounds={"x": (0, 10), "y": (-10, 20)}, match=CROSS_ROW_WHY)
    assert "1000" not in msg


@pytest.mark.parametrize("formula", [*CROSS_ROW, "y ~ I([v for v in x])"])
def test_cross_row_code_is_refused_for_chunked_data_too(formula):
    """Also lambdas and comprehensions, which patsy's name scan cannot read: before the fix, the chunked path's
    scan for Categorical columns raised PatsyError, reported as an InternalFitError (a bug) instead of the
    formula language's public refusal."""
    d, dp = neighbours("x", 1.0, 1000.0)
    m = [refusal(data, formula, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)}, chunksize=64,
                 match=CROSS_ROW_WHY)
         for data in (d, dp)]
    assert m[0][0] is m[1][0] and issubclass(m[0][0], DisallowedExpressionError) and m[0][1] == m[1][1]


def test_refusals_name_the_call_and_say_why():
    _, msg, _ = refusal(frame(), "y ~ I(x - np.mean(x))", method="tukey", match=r"uses np\.mean\(\)")
    assert "np.mean()" in msg and "every row at once" in msg and "I((x - 40) / 10)" in msg
    _, msg, _ = refusal(frame(), "y ~ myfun(x)", method="tukey", match=r"calls the function myfun\(\)")
    assert "myfun()" in msg and "not a column" not in msg
    _, msg, _ = refusal(frame(), "y ~ I(code.astype(float))", method="tukey", match=r"the method call 'code\.astype")
    assert ".astype()" in msg


def test_an_offset_is_refused_with_the_formula_that_fits_it():
    """R's offset() (Zuur, Hilbe & Ieno's fishing model, a count on depth with the log swept area as offset: session
    50's new-user check) got the message for a caller's own function ("functions defined by the caller are not
    looked up"); it now says how a linear model fits an offset, and that formula fits."""
    _, msg, _ = refusal(frame(), "y ~ x + offset(np.log(x))", method="tukey",
                        match=r"an offset is a term whose coefficient is fixed at 1")
    assert "np.log(y / e) ~ x" in msg and "I(y - z) ~ x" in msg and "defined by the caller" not in msg
    res = dpstats.dp_ols("I(y - x) ~ x", frame(), float("inf"), method="ols")
    assert list(res.params.index) == ["Intercept", "x"]


def test_the_callers_namespace_is_never_used():
    log = np.exp  # noqa: F841 - a caller's name that would shadow log() if formulas used the caller's namespace
    df = frame()
    res = dpstats.dp_ols("y ~ log(x)", df, float("inf"), method="ols")
    ref = dpstats.dp_ols("y ~ np.log(x)", df, float("inf"), method="ols")
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy())


def test_predict_checks_the_design_code_too():
    import patsy

    info = patsy.dmatrix("I(x - np.mean(x))", frame()).design_info  # a design info built outside dpstats
    with pytest.raises(DisallowedExpressionError,
                       match=r"'I\(x - np\.mean\(x\)\)' uses np\.mean\(\): np\.mean\(\) computes on every row at once"):
        design_matrix_for_prediction(info, frame())


# -- 2. refusals decided from public facts ------------------------------------------------------------------------

def test_spline_arguments_are_clipped_to_their_declared_range():
    formula = "y ~ bs(x, knots=[3, 7], lower_bound=0, upper_bound=10)"
    d, dp = neighbours("x", 5.0, 10.5)
    fits = [dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds={"x": (0, 12), "y": (-10, 20)},
                           random_state=3) for data in (d, dp)]
    assert list(fits[0].params.index) == list(fits[1].params.index)
    assert fits[0].privacy.epsilon_spent == fits[1].privacy.epsilon_spent
    # without declared bounds on x (a bound-free method): a value beyond upper_bound is evaluated at upper_bound
    top = dp.copy()
    top.loc[0, "x"] = 10.0
    np.testing.assert_array_equal(build_design(formula, dp).X, build_design(formula, top).X)


def test_spline_degree_is_capped_and_every_allowed_degree_takes_every_value():
    """bs()'s degree is at most 5, refused from the formula alone (nothing read, nothing spent): far above it
    patsy's evaluator (FITPACK, fixed-size buffers) crashed the interpreter for some values of one row and refused
    for others, an outcome that told neighbours apart.  For every allowed degree the fit's outcome is the same
    whatever the values (at the ends, at a knot, beyond the range, near the largest double)."""
    rows = {"low": np.zeros(60), "high": np.full(60, 10.0), "knot": np.full(60, 5.0),
            "spread": np.linspace(0.0, 10.0, 60), "extreme": np.r_[np.full(30, -1e308), np.full(30, 1e308)]}
    for degree in (21, 6):
        with pytest.raises(DisallowedExpressionError, match="degree must be at most 5") as info:
            dpstats.dp_ols(f"y ~ bs(x, knots=[5], lower_bound=0, upper_bound=10, degree={degree})",
                           pd.DataFrame({"x": rows["knot"], "y": np.linspace(-1, 1, 60)}), 1.0, 1e-6, method="ssp",
                           bounds={"y": (-5, 5)})
        assert info.value.privacy_spent == (0.0, 0.0)
    for degree in range(1, 6):
        formula = f"y ~ bs(x, knots=[5], lower_bound=0, upper_bound=10, degree={degree})"
        names = {tuple(dpstats.dp_ols(formula, pd.DataFrame({"x": x, "y": np.linspace(-1, 1, 60)}), 1.0, 1e-6,
                                      method="ssp", bounds={"y": (-5, 5)}, random_state=0).params.index)
                 for x in rows.values()}
        assert len(names) == 1


@pytest.mark.parametrize("formula, bounds", [
    ("y ~ np.log(x)", {"x": (0, 10)}),
    ("y ~ log(x)", {"x": (0, 10)}),
    ("y ~ np.sqrt(x - 1)", {"x": (0, 10)}),
    ("y ~ I(1 / (x - 5))", {"x": (0, 10)}),
    ("y ~ I(x / (x < 0.9))", {"x": (0, 10)}),
    ("y ~ I((x - 1) ** 0.5)", {"x": (0, 10)}),
    ("y ~ np.exp(x)", {"x": (0, 1000)}),
    ("np.log(y) ~ x", {"y": (-1, 20)}),
    ("y ~ bs(np.log(x), knots=[1], lower_bound=0, upper_bound=3)", {"x": (0, 10)}),
])
@pytest.mark.parametrize("method", ["ssp", "tukey"])
def test_transforms_undefined_inside_the_declared_bounds_are_refused_from_the_bounds(formula, bounds, method):
    d, dp = neighbours("x", 0.0, 1.0)
    d.loc[0, "y"], dp.loc[0, "y"] = 0.0, 1.0
    full = {"x": (0, 10), "y": (-10, 20), **bounds}
    msg = same_public_refusal(d, dp, formula, TransformDomainError, method=method, bounds=full,
                              match=r"is undefined \(or overflows\) for part of the declared bounds")
    assert "nothing was spent" in msg


def test_no_bounds_a_non_finite_transform_is_set_to_zero_on_its_row():
    """Without bounds, a transform that is undefined or overflows on a row (x = 0 gives -inf, x = -1 NaN) is set to
    0 there: a public map of the row, so the neighbours x = 0, -1, -1e300 and x = 1 (np.log(1) = 0) give the same
    releases, with no warning (numpy's "divide by zero" would say which) and the same notes.  A refusal there was
    a free query whose threshold the caller chose (I(x * 1e298) asked whether any x was above 1.8e10)."""
    fits = []
    for value in (0.0, -1.0, -1e300, 1.0):
        d, _ = neighbours("x", value, 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            fits.append(dpstats.dp_ols("y ~ np.log(x)", d, 1.0, 1e-6, method="dpsgd", random_state=0))
    for fit in fits[1:]:
        np.testing.assert_array_equal(fit.params.to_numpy(), fits[0].params.to_numpy())
        assert fit.privacy.notes == fits[0].privacy.notes
    assert any("set to 0 on its row" in note and "x > 0 in np.log(x)" in note for note in fits[0].privacy.notes)


def test_the_non_finite_note_says_undefined_only_where_a_transform_has_a_restricted_domain():
    """s45 new-user check: the bound-free fit of `demVote ~ I(year - 1972) * south` was told that I(year - 1972)
    "can be undefined or overflow on a row"; a difference is defined everywhere, so the note now says only that it
    can overflow, and keeps "undefined" and the domain for a transform such as np.log(x)."""
    d, _ = neighbours("x", 1.0, 1.0)
    shifted = dpstats.dp_ols("y ~ I(x - 40)", d, 1.0, 1e-6, method="dpsgd", random_state=0).privacy.notes
    (note,) = [n for n in shifted if "set to 0 on its row" in n]
    assert "can overflow on a row" in note and "undefined" not in note and "np.log" not in note
    logged = dpstats.dp_ols("y ~ np.log(x)", d, 1.0, 1e-6, method="dpsgd", random_state=0).privacy.notes
    (note,) = [n for n in logged if "set to 0 on its row" in n]
    assert "can be undefined or overflow on a row (x > 0 in np.log(x))" in note


def test_an_overflowing_transform_answers_no_threshold_question():
    """The audit's free oracle: with I(x * 1e298) and no bounds, a row at x = 1e11 overflowed and was refused at no
    cost while its neighbour fitted, so a binary search found max(x).  Now both fit, with the same releases as a
    row whose product is 0 (x = 0)."""
    fits = []
    for value in (1e11, 0.0):
        d, _ = neighbours("x", value, 1.0)
        fits.append(dpstats.dp_ols("y ~ I(x * 1e298)", d, 1.0, 1e-6, method="dpsgd", random_state=0))
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())


def test_transformed_variables_are_clipped_for_bound_free_methods_too():
    d = frame()
    d.loc[0, "x"] = -3.0  # outside the declared range: log would be NaN without clipping
    res = dpstats.dp_ols("y ~ np.log(x)", d, 1.0, 1e-6, method="dpsgd", bounds={"x": (0.5, 10)}, random_state=0)
    # clipped to its declared lower bound before the log: the same release as the data with that row at 0.5
    at_bound = d.copy()
    at_bound.loc[0, "x"] = 0.5
    expected = dpstats.dp_ols("y ~ np.log(x)", at_bound, 1.0, 1e-6, method="dpsgd", bounds={"x": (0.5, 10)},
                              random_state=0)
    assert np.isfinite(res.params).all()
    np.testing.assert_array_equal(res.params.to_numpy(), expected.params.to_numpy())


@pytest.mark.parametrize("formula", ["y ~ x:z", "y ~ x * z", "y ~ x:z:C(g)"])
@pytest.mark.parametrize("chunked", [False, True])
def test_bounded_variables_of_an_interaction_are_clipped_before_the_product(formula: str, chunked: bool) -> None:
    """A finite value outside its bounds (inside the guarantee's domain) in a bare factor of an interaction: the
    product of the raw values overflowed for one neighbour (refused, nothing spent) and not the other."""
    d = frame()
    d["z"] = np.linspace(0.0, 5.0, N)
    bounds = {"x": (0.0, 10.0), "z": (0.0, 5.0), "y": (-20.0, 40.0)}
    outcomes = []
    for value in (1e300, 1e308):
        data = d.copy()
        data.loc[7, ["x", "z"]] = [value, 4.0]
        res = dpstats.dp_ols(formula, data, 1.0, 1e-6, method="ssp", bounds=bounds, random_state=0,
                             **({"chunksize": 100} if chunked else {}))
        outcomes.append(res)
    assert all(np.isfinite(r.params).all() for r in outcomes)
    assert all(r.privacy.epsilon_spent == pytest.approx(1.0) for r in outcomes)
    np.testing.assert_array_equal(outcomes[0].params, outcomes[1].params)  # both rows clip to x = 10


def test_a_clipped_interaction_is_the_product_of_the_clipped_values() -> None:
    d = frame(n=5)
    d["z"] = [1.0, 2.0, 3.0, 4.0, 5.0]
    d.loc[0, "x"] = 50.0  # outside (0, 10): the column x:z at row 0 is 10 * 1, not 50 clipped to the product range
    design = build_design("y ~ x:z - 1", d, bounds={"x": (0.0, 10.0), "z": (0.0, 5.0), "y": (-20.0, 40.0)})
    assert design.X[0, 0] == 10.0


# -- 3. no data value in any message --------------------------------------------------------------------------------

def secret_frame() -> pd.DataFrame:
    df = frame()
    df["code"] = df["code"].astype(object)
    df.loc[17, "code"] = SECRET
    df["k"] = np.arange(N) % 3
    df.loc[5, "k"] = 7731
    return df


SECRET_FORMULAS = [
    ("y ~ I(code.astype(float))", DisallowedExpressionError),
    ("y ~ I(code * 2)", DataTypeError),
    ("y ~ np.log(code)", DataTypeError),
    ("y ~ bs(code, knots=[1], lower_bound=0, upper_bound=2)", DataTypeError),
    ("y ~ C(code, levels=['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6'])", None),  # a null row: fits
    ("y ~ C(np.abs(k), levels=[0, 1, 2])", None),
    ("code ~ x", DataTypeError),
]


# what the in-memory refusals of SECRET_FORMULAS say (the column's type, what to convert), and the CSV ones (whose
# text column is typed by its declared levels only: arithmetic on it needs bounds)
_CODE_REFUSAL = (r"uses the column 'code' as a number, but its type is text or objects\. Convert it"
                 r"|the method call 'code\.astype\(float\)'|the response 'code' must be numeric")
_CODE_FILE_REFUSAL = (r"the method call 'code\.astype\(float\)'|Declare bounds on the variables code"
                      r"|rows have a missing value in at least one of y, code")


def _assert_no_secret(exc: BaseException, caught: list[warnings.WarningMessage]) -> None:
    text = chain_text(exc) + "\n".join(str(w.message) for w in caught)
    assert SECRET not in text and "7731" not in text


@pytest.mark.parametrize("formula, expected", SECRET_FORMULAS)
@pytest.mark.parametrize("chunked", [False, True])
def test_messages_never_quote_a_value(formula, expected, chunked):
    kw = dict(chunksize=50) if chunked else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if expected is None:  # a value outside declared levels makes a null row (screened): the fit's outputs
            res = dpstats.dp_ols(formula, secret_frame(), 1.0, 1e-6, method="dpsgd", **kw)
            text = res.summary().as_text() + repr(res) + "\n".join(str(w.message) for w in caught)
            assert SECRET not in text and "7731" not in text
            return
        with pytest.raises(expected, match=_CODE_REFUSAL) as info:
            dpstats.dp_ols(formula, secret_frame(), 1.0, 1e-6, method="dpsgd", **kw)
    _assert_no_secret(info.value, caught)


@pytest.mark.parametrize("malformed, line", [(',"7731', 5), (',"7731', 1200)],
                         ids=["open quote", "open quote later"])
def test_a_csv_line_with_an_open_quote_is_a_row_of_missing_values(tmp_path, line, malformed):
    """A line with a quote it never closes, near the top (line 5) or later (line 1200), is a row of missing values,
    as a blank line there would be: the same n and the same fit, the value never shown.  Before session 40 it was
    the CSV domain check (a refusal at no cost, on this neighbour only), and before that pandas' ParserError,
    reported as an InternalFitError (a bug)."""
    p = tmp_path / "base.csv"
    frame(1500).to_csv(p, index=False)
    lines = p.read_text().splitlines()
    blank = list(lines)
    blank[line] = ""
    lines[line] += malformed
    bad, empty = tmp_path / "bad.csv", tmp_path / "blank.csv"
    bad.write_text("\n".join(lines) + "\n")
    empty.write_text("\n".join(blank) + "\n")
    for method, bounds in (("ssp", {"x": (0, 10), "y": (-10, 20)}), ("pgd", None)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fits = [dpstats.dp_ols("y ~ x", str(path), 1.0, 1e-6, method=method, bounds=bounds, random_state=0)
                    for path in (bad, empty)]
        assert fits[0].nobs == fits[1].nobs == 1500
        pd.testing.assert_series_equal(fits[0].params, fits[1].params)
        assert "7731" not in fits[0].summary().as_text() + "".join(str(w.message) for w in caught)


@pytest.mark.parametrize("line", [1, 5, 1200])
def test_an_extra_trailing_csv_field_makes_a_row_of_missing_values_wherever_the_line_is(tmp_path, line):
    """A line with more fields than the header is a row of missing values on any line, the same release as a line
    of empty fields.  Earlier the schema was inferred from the first 1000 rows (the line was refused at line 5 and
    read at line 1200, its extra field dropped silently); then it was refused at no cost on any line, an oracle on
    one row; and on the first data line pandas took the first column as an index, reading every row shifted."""
    p = tmp_path / "base.csv"
    frame(1500).to_csv(p, index=False)
    lines = p.read_text().splitlines()
    fits = []
    for name, edit in (("bad.csv", lines[line] + ",7731"), ("empty.csv", ",".join([""] * len(lines[0].split(","))))):
        out = list(lines)
        out[line] = edit
        (tmp_path / name).write_text("\n".join(out) + "\n")
        fits.append(dpstats.dp_ols("y ~ x", str(tmp_path / name), 1.0, 1e-6, method="ssp",
                                   bounds={"x": (0, 10), "y": (-10, 20)}, random_state=0))
    assert fits[0].params.equals(fits[1].params) and "7731" not in fits[0].summary().as_text()


def test_messages_never_quote_a_value_from_files(tmp_path):
    """A CSV column is text only when its text levels are declared (its type is public, never read from the rows),
    so a formula doing arithmetic on the text column 'code' is refused for its missing bounds before any row is
    read, where in memory the column's text dtype refuses it: only the absence of the value is checked here."""
    p = tmp_path / "secret.csv"
    secret_frame().to_csv(p, index=False)
    for formula, expected in SECRET_FORMULAS:
        if expected is None:
            continue  # fits (test_messages_never_quote_a_value)
        with pytest.raises(DPStatsError, match=_CODE_FILE_REFUSAL) as info:
            dpstats.dp_ols(formula, str(p), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)},
                           levels={"code": [f"c{i}" for i in range(7)]} if "C(code" in formula else None)
        _assert_no_secret(info.value, [])


def test_arrays_never_quote_a_value():
    X = np.array([[1.0, 2.0], [3.0, SECRET]], dtype=object)
    with pytest.raises(DataTypeError, match="X must be a numeric array; its dtype is object") as info:
        dpstats.dp_ols_arrays(X, np.zeros(2), 1.0, intercept=False, method="tukey")
    _assert_no_secret(info.value, [])
    with pytest.raises(DataTypeError, match="X must be numeric; its columns b are not") as info:
        dpstats.dp_ols_arrays(pd.DataFrame({"a": [1.0, 2.0], "b": ["x", SECRET]}), np.zeros(2), 1.0, intercept=False,
                              method="tukey")
    _assert_no_secret(info.value, [])
    assert "b" in str(info.value)


def test_predict_never_quotes_a_value():
    res = dpstats.dp_ols("y ~ x + C(g)", frame(), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)},
                         random_state=0)
    new = pd.DataFrame({"x": [1.0, 2.0], "g": ["a", SECRET]})
    with pytest.raises(UnseenLevelError,
                       match=r"the variable 'g' \(the factor 'C\(g\)'\) that the fitted model does not know "
                             r"\(its levels are: a, b\)") as info:
        res.predict(new)
    _assert_no_secret(info.value, [])
    assert "a, b" in str(info.value)


# -- 4. the API guard: typed errors, what was charged, no chain -----------------------------------------------------

@pytest.fixture
def patched_ssp(monkeypatch) -> Callable[[Callable[..., Any]], None]:
    """Replace ssp's fit by ``fit`` (which may call the real one) for one test."""

    def patch(fit: Callable[..., Any]) -> None:
        spec = registry.get_method("ssp")
        monkeypatch.setitem(registry._REGISTRY, "ssp", dataclasses.replace(spec, fit=fit))

    return patch


def _release_then(exc: BaseException) -> Callable[..., Any]:
    real = registry.get_method("ssp").fit

    def fit(*args, **kw):
        released = real(*args, **kw)  # spends the budget and releases coefficients
        exc.args = (f"{exc.args[0] if exc.args else ''} {SECRET} {released.params}",)
        raise exc

    return fit


def test_an_untyped_failure_after_spending_becomes_a_typed_charged_error(patched_ssp):
    patched_ssp(_release_then(ValueError("boom")))
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(InternalFitError, match="fitting failed with ValueError; its message is withheld") as info:
        dpstats.dp_ols("y ~ x", frame(), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)},
                       accountant=acct, random_state=0)
    err = info.value
    assert err.original_type == "ValueError" and err.privacy_spent[0] > 0
    assert acct.spent == pytest.approx(err.privacy_spent)
    assert err.__cause__ is None and err.__context__ is None
    _assert_no_secret(err, [])


def test_a_typed_failure_keeps_its_message_and_loses_its_chain(patched_ssp):
    def fit(*args, **kw):
        try:
            raise ValueError(SECRET)
        except ValueError as inner:
            raise dpstats.errors.ConvergenceError("diverged") from inner

    patched_ssp(fit)
    with pytest.raises(dpstats.errors.ConvergenceError, match="diverged") as info:
        dpstats.dp_ols("y ~ x", frame(), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)})
    assert info.value.privacy_spent == (0.0, 0.0)
    _assert_no_secret(info.value, [])


def test_untyped_failures_while_building_the_design_are_typed(monkeypatch):
    import dpstats.formula as formula_module

    def broken(*a, **kw):
        raise KeyError(SECRET)

    monkeypatch.setattr(formula_module.FramePlan, "prepare", broken)
    acct = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(InternalFitError,
                       match="building the design from the data failed with KeyError; its message is withheld") as info:
        dpstats.dp_ols("y ~ x", frame(), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)},
                       accountant=acct)
    # the rows were read: a failure no rule decided may depend on them, so the whole budget is charged
    assert info.value.privacy_spent == (1.0, 1e-6) and acct.spent == pytest.approx((1.0, 1e-6))
    assert [entry.status for entry in acct.history] == ["failed after spending"]
    _assert_no_secret(info.value, [])


class _FailingSettle:
    """An accountant whose settle fails like a lock timeout (or an interrupt)."""

    def __init__(self, exc: BaseException) -> None:
        self.inner = dpstats.PrivacyAccountant(5.0, 1e-5)
        self.exc = exc
        self.tokens: list[str] = []

    def reserve(self, *a, **kw):
        token = self.inner.reserve(*a, **kw)
        self.tokens.append(token)
        return token

    def is_open(self, token):
        return self.inner.is_open(token)

    def settle(self, *a, **kw):
        raise self.exc


@pytest.mark.parametrize("failure", [dpstats.errors.BudgetFileError("budget file is locked (timeout)"),
                                     KeyboardInterrupt()], ids=["lock timeout", "interrupt"])
@pytest.mark.parametrize("outcome", ["method error", "success"])
def test_a_failed_settle_leaves_the_reservation_held_and_carries_no_released_value(patched_ssp, failure, outcome):
    if outcome == "method error":
        patched_ssp(_release_then(dpstats.errors.ConvergenceError("diverged")))
    acct = _FailingSettle(failure)
    expected = KeyboardInterrupt if isinstance(failure, KeyboardInterrupt) else SettlementError
    pattern = "^$" if expected is KeyboardInterrupt else r"the accountant could not record this fit's spend"
    with pytest.raises(expected, match=pattern) as info:
        dpstats.dp_ols("y ~ x", frame(), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)},
                       accountant=acct, random_state=0)
    (token,) = acct.tokens
    assert acct.inner.is_open(token)  # held in full: never settled at 0 as "refused"
    assert acct.inner.remaining == pytest.approx((4.0, 1e-5 - 1e-6))
    assert info.value.__cause__ is None and info.value.__context__ is None
    assert "diverged" not in chain_text(info.value) and SECRET not in chain_text(info.value)
    if expected is SettlementError:
        assert info.value.privacy_spent[0] > 0 and "held in full" in str(info.value)


def test_a_failed_settle_of_a_persistent_budget_leaves_it_held(patched_ssp, tmp_path, monkeypatch):
    patched_ssp(_release_then(ValueError("boom")))
    acct = dpstats.PrivacyAccountant(5.0, 1e-5, path=tmp_path / "budget.sqlite")

    def locked(*a, **kw):
        raise dpstats.errors.BudgetFileError("database is locked", path=str(tmp_path), reason="locked")

    monkeypatch.setattr(type(acct._store), "settle", locked)
    with pytest.raises(SettlementError,
                       match=r"could not record this fit's spend \(BudgetFileError: database is locked\)"):
        dpstats.dp_ols("y ~ x", frame(), 1.0, 1e-6, method="ssp", bounds={"x": (0, 10), "y": (-10, 20)},
                       accountant=acct, random_state=0)
    monkeypatch.undo()
    assert acct.remaining[0] == pytest.approx(4.0)  # the reservation is still held


# -- 6. missing="drop": n stays public, incomplete rows become inert null rows --------------------------------------

def test_missing_drop_neighbours_release_the_same_structure():
    d, dp = neighbours("x", np.nan, 9.0)  # D has row 0 incomplete; D' has it complete
    kw = dict(method="ssp", bounds={"x": (0, 10), "y": (-10, 20)}, missing="drop", random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning may tell the neighbours apart
        a, b = (dpstats.dp_ols("y ~ x + C(g)", data, 1.0, 1e-6, **kw) for data in (d, dp))
    assert a.nobs == b.nobs == N and a.df_resid == b.df_resid
    assert list(a.params.index) == list(b.params.index)
    assert a.privacy.notes == b.privacy.notes and a.privacy.epsilon_spent == b.privacy.epsilon_spent
    assert [s.name for s in a.privacy.steps] == [s.name for s in b.privacy.steps]


@pytest.mark.parametrize("formula", ["y ~ x + C(g)", "y ~ 0 + x"])
@pytest.mark.parametrize("bounds", [{"x": (0, 10), "y": (-10, 20)}, None])
def test_pgd_null_rows_are_inert_whatever_their_other_values(bounds, formula):
    """pgd reads each null row marked and leaves it out of every sum: the values an incomplete row still has
    cannot change the fit (same seed, bit-identical coefficients, intervals and privacy report)."""
    d = frame(2000)
    gone = [3, 50, 700, 1999]
    d.loc[gone, "x"] = np.nan
    other = d.copy()
    other.loc[gone, "y"] = [1e6, -1e6, 0.0, 42.0]  # the rest of each incomplete row, changed
    fits = [dpstats.dp_ols(formula, data, 1.0, 1e-6, method="pgd", bounds=bounds, missing="drop",
                           random_state=3) for data in (d, other)]
    np.testing.assert_array_equal(fits[0].params, fits[1].params)
    np.testing.assert_array_equal(fits[0].conf_int(), fits[1].conf_int())
    assert [s.name for s in fits[0].privacy.steps] == [s.name for s in fits[1].privacy.steps]
    assert fits[0].nobs == 2000


def test_null_rows_add_nothing_to_the_sums():
    d = frame()
    d.loc[[0, 7, 30], "x"] = np.nan
    d.loc[40, "y"] = np.nan
    bounds = {"x": (0, 10), "y": (-10, 20)}
    design = build_design("y ~ x + C(g)", d, bounds=bounds, missing="null")
    assert design.n == N and design.null_rows and np.isnan(design.y).sum() == 4
    stats = SufficientStatistics.from_arrays(design.X, design.y, design.data_bounds())
    complete = build_design("y ~ x + C(g)", d.dropna(subset=["x", "y"]), bounds=bounds)
    ref = SufficientStatistics.from_arrays(complete.X, complete.y, complete.data_bounds())
    np.testing.assert_allclose(stats.xtx, ref.xtx, rtol=1e-12)
    np.testing.assert_allclose(stats.xty, ref.xty, rtol=1e-12)
    assert stats.yty == pytest.approx(ref.yty, rel=1e-12) and stats.n == N


def test_clipping_would_move_a_null_row_so_it_is_zeroed_after_clipping():
    b = DataBounds(np.array([1.0, -1.0]), np.array([1.0, 1.0]), -1.0, 1.0, null_rows=True)
    X, y = np.array([[np.nan, np.nan], [1.0, 0.5]]), np.array([np.nan, 0.2])
    Xc, yc = b.clip(X, y)
    np.testing.assert_array_equal(Xc, [[0.0, 0.0], [1.0, 0.5]])
    np.testing.assert_array_equal(yc, [0.0, 0.2])


def test_missing_drop_is_refused_for_methods_that_standardise_rows_and_auto_avoids_them():
    d, _ = neighbours("x", np.nan, 9.0)
    for method in ("tukey", "robgd", "ambssgd"):
        t, m, acct = refusal(d, "y ~ x", method=method, missing="drop",
                             match=f"method '{method}' cannot take missing='drop'")
        assert t is InvalidArgumentError and "null row" in m and acct.spent == (0.0, 0.0)
    res = dpstats.dp_ols("y ~ x", d, 1.0, 1e-6, bounds={"x": (0, 10), "y": (-10, 20)}, missing="drop",
                         random_state=0)
    assert res.method == "pgd" and res.nobs == N  # pgd reads the null rows marked and leaves them out of its sums
    assert np.isfinite(res.conf_int().to_numpy()).all() and not res.inference_reason
    t, _, _ = refusal(d, "y ~ x", missing="drop", match=r"method='auto' found no registered method that fits")
    assert t is MissingBoundsError
    res = dpstats.dp_ols("y ~ x", d, 1.0, 1e-6, method="dpsgd", missing="drop", random_state=0)
    assert res.nobs == N and np.isfinite(res.params).all()


def test_the_non_private_reference_still_drops_rows():
    d, _ = neighbours("x", np.nan, 9.0)
    res = dpstats.dp_ols("y ~ x", d, float("inf"), method="ols", missing="drop")
    assert res.nobs == N - 1


@pytest.mark.parametrize("method", ["ssp", "pgd"])
def test_missing_drop_audit_of_a_neighbouring_pair(method):
    """Audit of the slope (ssp; pgd, which reads the null row marked) on D (row 0 incomplete) and D' (row 0
    complete at the worst corner).

    False-failure rate: the audit's (1 - alpha) lower confidence bound exceeds
    the claimed epsilon = 1 with probability at most alpha = 1e-3 when the fit
    is (1, 1e-6)-DP.  Under the old code the pair differed in n, which the
    deterministic test above catches.
    """
    n = 40
    d, dp = (frame(n, seed=2) for _ in range(2))
    d.loc[0, "x"] = np.nan
    dp.loc[0, ["x", "y"]] = [10.0, -10.0]

    def run(data: pd.DataFrame, rng: np.random.Generator) -> float:
        res = dpstats.dp_ols("y ~ x", data, 1.0, 1e-6, method=method, bounds={"x": (0, 10), "y": (-10, 20)},
                             missing="drop", random_state=rng, inference=False)
        return float(res.params["x"])

    result = audit_mechanism(run, d, dp, runs=300, delta=1e-6, seed=11)
    assert result.epsilon_lower_bound <= 1.0


def test_stateful_transforms_are_still_refused_with_their_own_type():
    t, m, _ = refusal(frame(), "y ~ standardize(x)", method="tukey", match=r"uses patsy's standardize\(\)")
    assert issubclass(t, StatefulTransformError) and "I((x - c) / s)" in m


def test_finite_arrays_sets_every_non_finite_value_to_zero_and_keeps_finite_values_whose_sum_overflows():
    from dpstats.formula.design import finite_arrays

    big = np.full((4, 2), 1e308)  # finite, but the sum overflows to inf
    X, y = finite_arrays(big, np.ones((4, 1)))
    assert (X == 1e308).all() and y.shape == (4,)
    for bad in (np.inf, -np.inf, np.nan):
        for where in ("X", "y"):
            Xb, yb = big.copy(), np.ones((4, 1))
            (Xb if where == "X" else yb)[3, 0] = bad
            X, y = finite_arrays(Xb, yb)
            assert (X[3, 0] if where == "X" else y[3]) == 0.0
            assert np.isfinite(X).all() and np.isfinite(y).all()
    nulls = np.array([False, False, False, True])
    Xn, yn = big.copy(), np.ones((4, 1))
    Xn[3, 0] = np.nan
    X, y = finite_arrays(Xn, yn, nulls)
    assert np.isnan(X[3]).all() and np.isnan(y[3]) and np.isfinite(X[:3]).all()




def _refusal_aware_run(formula: str, method: str, **kw: Any):
    """One fit through the whole API as a mechanism for :func:`audit_mechanism`: its first slope, or 1e9 where the
    fit is refused (a refusal is an output too: the audits this replaces found one neighbour always refused)."""
    def run(data: pd.DataFrame, rng: np.random.Generator) -> float:
        try:
            res = dpstats.dp_ols(formula, data, 1.0, 1e-6, method=method, random_state=rng, **kw)
        except DPStatsError:
            return 1e9
        return float(res.params.iloc[1])
    return run


@pytest.mark.parametrize("case", ["undeclared level", "overflowing transform"])
def test_black_box_audit_of_the_domain_maps(case):
    """The hostile audit's oracles, audited as mechanisms: a row outside the declared levels of
    C(age, levels=[...]) (every bound declared, ssp), and a row whose I(x * 1e298) overflows (no bounds, dpsgd),
    against the neighbour whose row is inside.  Before, one neighbour always fitted and the other was always
    refused: with 150 runs a side that gives a bound of 2.2 against a claim of 1.  False-failure rate: alpha = 1e-3."""
    from dpstats.privacy.audit import audit_mechanism

    rng = np.random.default_rng(5)
    n = 120
    base = pd.DataFrame({"x": rng.uniform(1, 9, n), "age": rng.choice([20, 30, 40], n)})
    base["y"] = 0.5 * base.x + rng.normal(0, 1, n)
    inside, outside = base.copy(), base.copy()
    if case == "undeclared level":
        inside.loc[0, "age"], outside.loc[0, "age"] = 40, 99
        run = _refusal_aware_run("y ~ x + C(age, levels=[20, 30, 40])", "ssp",
                                 bounds={"x": (0, 10), "y": (-5, 10)})
    else:
        inside.loc[0, "x"], outside.loc[0, "x"] = 1.0, 1e11
        run = _refusal_aware_run("y ~ I(x * 1e298)", "dpsgd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = audit_mechanism(run, inside, outside, runs=150, delta=1e-6, alpha=1e-3, seed=11)
    assert result.epsilon_lower_bound <= 1.0


@pytest.mark.parametrize("declared", [{"levels": {"g": [False, True]}}, {"levels": {"g": [0.0, 1.0]}}],
                         ids=["boolean levels", "float levels"])
def test_declared_levels_of_another_type_give_no_free_answer(declared):
    """An integer 0/1 column with boolean (or float) levels declared: the data set whose rows all hold 0 or 1 and
    its neighbour with one 2 there both fit and both spend the budget (before: the first was refused at no cost
    and the second fitted, a free answer to "is every row 0 or 1?" for any level set the caller picks)."""
    rng = np.random.default_rng(0)
    n = 2000
    base = pd.DataFrame({"y": rng.uniform(0, 10, n), "x": rng.uniform(0, 10, n), "g": rng.integers(0, 2, n)})
    neighbour = base.copy()
    neighbour.at[0, "g"] = 2
    spent = [dpstats.dp_ols("y ~ x + C(g)", t, 1.0, 1e-6, bounds={"y": (0, 10), "x": (0, 10)}, random_state=1,
                            **declared).privacy.epsilon_spent for t in (base, neighbour)]
    assert spent == [pytest.approx(1.0), pytest.approx(1.0)]
