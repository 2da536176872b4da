"""dp_ols end to end: bad input spends nothing, formula features, predict, summary formats, accountant."""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import (
    BudgetExceededError,
    DataTypeError,
    ExtrapolationWarning,
    InsufficientDataError,
    InvalidPrivacyParameterError,
    LargeDeltaWarning,
    MethodOptionError,
    MissingBoundsError,
    MissingDataError,
    SingularDesignError,
    UndeclaredLevelsError,
    UnknownColumnError,
    UnknownMethodError,
    UnseenLevelError,
)
from dpstats.methods.registry import available_methods

LEVELS = ["a", "b", "c"]
BOUNDS = {"x1": (0, 10), "x2": (-3, 3), "y": (-60, 60)}


def make_data(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(LEVELS, n)
    x1 = rng.uniform(0, 10, n)
    x2 = rng.normal(0, 1, n).clip(-3, 3)
    eff = pd.Series(g).map({"a": 0.0, "b": 2.0, "c": -1.0}).to_numpy()
    y = 1.0 + 2.0 * x1 - 3.0 * x2 + eff + rng.normal(0, 1, n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": pd.Categorical(g, categories=LEVELS)})


FORMULA = "y ~ x1 + x2 + C(g)"


@pytest.fixture
def acct():
    return dpstats.PrivacyAccountant(epsilon=5.0, delta=1e-5)


def _unchanged(acct: dpstats.PrivacyAccountant) -> bool:
    return acct.spent == (0.0, 0.0) and acct.remaining == (5.0, 1e-5) and not acct.history


BAD_CALLS = [
    (dict(epsilon=0.0), InvalidPrivacyParameterError, r"epsilon must be > 0, got 0\.0"),
    (dict(epsilon=-1.0), InvalidPrivacyParameterError, r"epsilon must be > 0, got -1\.0"),
    (dict(epsilon=float("nan")), InvalidPrivacyParameterError, r"epsilon must be > 0, got nan"),
    (dict(epsilon="1"), InvalidPrivacyParameterError, r"epsilon must be a positive number, got the string '1'"),
    (dict(delta=0.0), InvalidPrivacyParameterError, r"delta must lie strictly between 0 and 1, got 0\.0"),
    (dict(delta=1.0), InvalidPrivacyParameterError, r"delta must lie strictly between 0 and 1, got 1\.0"),
    (dict(delta=-1e-6), InvalidPrivacyParameterError, r"delta must lie strictly between 0 and 1, got -1e-06"),
    (dict(method="nope"), UnknownMethodError, r"unknown method 'nope'; available: "),
    (dict(method="ssp", rho=0.1), MethodOptionError, r"method 'ssp' does not accept rho; it accepts "),
    # ols needs epsilon=inf
    (dict(method="ols"), InvalidPrivacyParameterError, r"method 'ols' is NOT PRIVATE; it runs only with epsilon=float"),
    (dict(method="ssp", epsilon=float("inf")), InvalidPrivacyParameterError,
     r"epsilon=inf means no privacy, and a privacy budget cannot pay for a fit that is not private"),
    (dict(method="ssp", bounds={"x1": (0, 10)}), MissingBoundsError, r"Declare bounds on the variables x2, y"),
    (dict(formula="y ~ x1 + missing_col"), UnknownColumnError, r"the formula uses 'missing_col', which is not a"),
    (dict(formula="y ~ x1 + C(h)"), UndeclaredLevelsError, r"the levels of 'C\(h\)' would be read from the private"),
    (dict(formula="h ~ x1"), DataTypeError, r"the response 'h' must be numeric"),
]


@pytest.mark.parametrize("kwargs,error,pattern", BAD_CALLS)
def test_bad_input_is_a_typed_error_and_spends_nothing(acct, kwargs, error, pattern):
    df = make_data(300)
    df["h"] = np.where(df.x1 > 5, "hi", "lo")
    call = dict(formula=FORMULA, data=df, epsilon=1.0, delta=1e-6, method="adassp", bounds=BOUNDS,
                accountant=acct, random_state=0)
    call.update(kwargs)
    with pytest.raises(error, match=pattern):
        dpstats.dp_ols(**call)
    assert _unchanged(acct)


def test_missing_values_are_screened_and_drop_spends_nothing_on_it(acct):
    df = make_data(300)
    df.loc[5, "x2"] = np.nan
    res = dpstats.dp_ols(FORMULA, df, 1.0, bounds=BOUNDS, accountant=acct, random_state=0)
    assert res.privacy.steps[0].name == "missing-value screen: rows with a missing value"
    assert any("noisy count of rows with a missing value" in n for n in res.privacy.notes)
    many = make_data(3000)
    many.loc[:1999, "x2"] = np.nan
    with pytest.raises(MissingDataError, match="noisy count") as info:
        dpstats.dp_ols(FORMULA, many, 1.0, bounds=BOUNDS, accountant=acct, random_state=0)
    assert 0 < info.value.privacy_spent[0] < 1.0
    res = dpstats.dp_ols(FORMULA, df, 1.0, bounds=BOUNDS, accountant=acct, missing="drop", random_state=0)
    assert not any(s.name.startswith("missing-value screen") for s in res.privacy.steps)
    assert res.nobs == 300  # missing='drop' keeps n public: the incomplete row is a public null row
    assert any("null row" in n for n in res.privacy.notes)


@pytest.mark.parametrize("method,formula", [("tukey", FORMULA), ("theilsen", "y ~ x1")])
def test_missing_drop_refusal_gives_the_methods_real_reason(acct, method, formula):
    # tukey fits blocks and theilsen pairs of rows: neither centres its rows, so the refusal must not say it does
    df = make_data(3000)
    df.loc[5, "x1"] = np.nan
    with pytest.raises(dpstats.errors.InvalidArgumentError, match="missing='drop'") as info:
        dpstats.dp_ols(formula, df, 1.0, method=method, bounds=BOUNDS, accountant=acct, missing="drop")
    msg = str(info.value)
    assert "not a sum over rows of terms that vanish at a zero row" in msg and "blocks or pairs of rows" in msg
    assert "adassp" in msg and "Nothing was read or spent" in msg
    assert _unchanged(acct)


def test_more_columns_than_rows_is_singular_by_construction(acct):
    df = make_data(4)
    with pytest.raises(SingularDesignError,
                       match=r"more columns \(d=6\) than rows \(n=4\), so it is singular by construction"):
        dpstats.dp_ols("y ~ x1 + x2 + C(g) + x1:x2", df, 1.0, method="ssp", bounds=BOUNDS, accountant=acct)
    assert _unchanged(acct)


def test_too_few_rows_for_the_method(acct):
    df = make_data(5)
    with pytest.raises(InsufficientDataError,
                       match="method 'adassp' needs at least 6 rows for d=5 columns; the data have n=5"):
        dpstats.dp_ols(FORMULA, df, 1.0, method="adassp", bounds=BOUNDS, accountant=acct)
    assert _unchanged(acct)


def test_data_dependent_singularity_is_not_an_error():
    # x2 is identically zero in the data: a rank check would leak that; the estimator handles it
    df = make_data(500).assign(x2=0.0)
    res = dpstats.dp_ols(FORMULA, df, 1.0, method="ssp", bounds=BOUNDS, random_state=1)
    assert np.all(np.isfinite(res.params))
    res = dpstats.dp_ols(FORMULA, df, 1.0, method="adassp", bounds=BOUNDS, random_state=1)
    assert np.all(np.isfinite(res.params))


def test_privacy_report_contents():
    res = dpstats.dp_ols(FORMULA, make_data(), 1.0, 1e-6, method="adassp", bounds=BOUNDS, random_state=3)
    pr = res.privacy
    assert pr.private and pr.guarantee.startswith("worst-case")
    assert pr.epsilon_spent <= pr.epsilon_requested + 1e-12 and pr.delta_spent <= pr.delta_requested
    assert pr.epsilon_spent == pytest.approx(1.0, rel=1e-6)
    assert [s.name for s in pr.steps] == ["missing-value screen: rows with a missing value",
                                          "noisy lambda_min(X^T X)", "noisy X^T X", "noisy X^T y",
                                          "noisy y^T y (for inference)"]
    assert all(s.mechanism == "gaussian" and s.noise_scale > 0 and s.sensitivity > 0 for s in pr.steps)
    assert "replace-one" in pr.relation and pr.n == 2000 and pr.seeded
    text = "\n".join(pr.lines())  # (str(pr) is the same text wrapped at 110 characters)
    assert "clipped" in text and "how many rows were clipped is private" in text
    assert max(len(line) for line in str(pr).splitlines()) <= 110
    assert " ".join(str(pr).split()) == " ".join(text.split())
    frame = pr.steps_frame()
    assert list(frame["step"]) == [s.name for s in pr.steps]
    assert pr.to_dict()["epsilon_spent"] == pr.epsilon_spent


def test_unseeded_fit_uses_os_entropy_and_says_so():
    df = make_data(500)
    a = dpstats.dp_ols(FORMULA, df, 1.0, method="ssp", bounds=BOUNDS)
    b = dpstats.dp_ols(FORMULA, df, 1.0, method="ssp", bounds=BOUNDS)
    assert not a.privacy.seeded and "operating-system CSPRNG" in str(a.privacy)
    # not flaky: the 5 coefficients' noise sds are 2.6-18 (30 seeded fits), so two independent fits agree to
    # allclose's tolerance (1e-5 relative) in every coefficient with probability below 1e-20
    assert not np.allclose(a.params, b.params)


def test_seed_reproduces_and_different_seeds_differ():
    df = make_data(500)
    a = dpstats.dp_ols(FORMULA, df, 1.0, method="ssp", bounds=BOUNDS, random_state=7)
    b = dpstats.dp_ols(FORMULA, df, 1.0, method="ssp", bounds=BOUNDS, random_state=7)
    c = dpstats.dp_ols(FORMULA, df, 1.0, method="ssp", bounds=BOUNDS, random_state=8)
    pd.testing.assert_series_equal(a.params, b.params)
    assert not np.allclose(a.params, c.params)


@pytest.mark.parametrize("method", ["ssp", "adassp"])
def test_utility_close_to_ols_at_large_n_and_epsilon(method):
    # n = 1e5, epsilon = 10: privacy noise is small next to sampling error
    df = make_data(100_000, seed=11)
    ols = dpstats.dp_ols(FORMULA, df, float("inf"), method="ols")
    res = dpstats.dp_ols(FORMULA, df, 10.0, 1e-6, method=method, bounds=BOUNDS, random_state=5)
    # tolerance: 5 OLS standard errors per coefficient plus 2% of the coefficient scale
    tol = 5 * ols.bse + 0.02 * np.abs(ols.params).max()
    assert np.all(np.abs(res.params - ols.params) <= tol), (res.params - ols.params) / ols.bse


def test_ols_is_labelled_not_private_everywhere():
    res = dpstats.dp_ols(FORMULA, make_data(500), float("inf"), method="ols")
    assert not res.privacy.private
    assert "NOT PRIVATE" in res.summary().as_text()
    assert "NOT PRIVATE" in res.summary().as_latex()
    assert "NOT PRIVATE" in res.summary().as_html()
    assert "NOT PRIVATE" in repr(res) and "NOT PRIVATE" in str(res.privacy)
    # classical inference is available for the non-private reference, and matches statsmodels
    import statsmodels.formula.api as smf
    sm = smf.ols(FORMULA, make_data(500)).fit()
    np.testing.assert_allclose(res.params, sm.params, rtol=1e-10)
    np.testing.assert_allclose(res.bse, sm.bse, rtol=1e-8)
    np.testing.assert_allclose(res.conf_int(), sm.conf_int(), rtol=1e-8)


def test_auto_with_epsilon_inf_is_refused_as_for_any_private_method():
    """A non-private fit is asked for by name: epsilon=inf with method='auto' (e.g. a budget computed as inf) is
    refused before anything is read, like epsilon=inf with a named private method."""
    with pytest.raises(InvalidPrivacyParameterError, match="method='ols'") as err:
        dpstats.dp_ols(FORMULA, make_data(300), float("inf"))
    assert err.value.privacy_spent == (0.0, 0.0)
    assert dpstats.dp_ols(FORMULA, make_data(300), float("inf"), method="ols").method == "ols"


def test_auto_with_bounds_chooses_from_public_facts():
    res = dpstats.dp_ols(FORMULA, make_data(), 1.0, bounds=BOUNDS, random_state=0)
    spec = available_methods()[res.method]
    assert spec.private and res.privacy.method_choice.startswith("auto chose")
    assert "n=2000" in res.privacy.method_choice


def test_auto_without_bounds():
    df = make_data(300)
    bound_free = [s for s in available_methods().values()
                  if s.private and s.auto_rank is not None and not s.needs_bounds
                  and 300 >= (s.auto_min_rows or s.min_rows)(5)]
    if bound_free:
        res = dpstats.dp_ols(FORMULA, df, 1.0, random_state=0)
        assert not available_methods()[res.method].needs_bounds
    else:
        with pytest.raises(MissingBoundsError,
                           match="no registered method .* Declare bounds for: x1, x2, y, or name a method") as exc:
            dpstats.dp_ols(FORMULA, df, 1.0)
        assert "x1" in str(exc.value)


def test_auto_without_bounds_says_what_n_or_epsilon_the_bound_free_path_needs():
    """Refused for too few rows without bounds, auto passes on what pgd's own refusal says (the n, or the epsilon
    at this n, from which it could fit without bounds), not only "declare bounds"."""
    with pytest.raises(MissingBoundsError,
                       match="no registered method .* Declare bounds for: x1, x2, y, or name a method") as exc:
        dpstats.dp_ols(FORMULA, make_data(300), 1.0)
    text = str(exc.value)
    assert "Declare bounds for" in text and re.search(r"Without bounds, pgd needs .* takes n >= \d+ rows", text)
    assert exc.value.privacy_spent == (0.0, 0.0)


def test_auto_refusal_with_some_bounds_does_not_say_without_data_bounds():
    """s45 new-user check: on Barro's growth data with 12 of 14 variables bounded, auto's refusal said it found no
    method "without data bounds"; it now says "without bounds on every variable and the response", and names the
    two left."""
    with pytest.raises(MissingBoundsError,
                       match="no registered method .* Declare bounds for: x1, or name a method") as exc:
        dpstats.dp_ols(FORMULA, make_data(300), 1.0, bounds={k: v for k, v in BOUNDS.items() if k != "x1"})
    text = str(exc.value)
    assert "without bounds on every variable and the response" in text and "data bounds" not in text
    assert "Declare bounds for: x1," in text


def test_interactions_and_transforms_through_the_api():
    df = make_data(3000)
    res = dpstats.dp_ols("y ~ x1 * C(g) + np.abs(x2)", df, 2.0, method="ssp", bounds=BOUNDS, random_state=0)
    assert "x1:C(g)[T.b]" in res.params.index and "np.abs(x2)" in res.params.index


def test_predict_through_stored_design():
    df = make_data(3000)
    res = dpstats.dp_ols(FORMULA, df, 2.0, method="adassp", bounds=BOUNDS, random_state=0)
    new = pd.DataFrame({"x1": [1.0, 5.0], "x2": [0.0, 1.0], "g": ["a", "c"]}, index=[10, 20])
    pred = res.predict(new)
    X = np.array([[1, 1.0, 0.0, 0, 0], [1, 5.0, 1.0, 0, 1]])
    # column order: Intercept, C(g)[T.b], C(g)[T.c], x1, x2
    order = ["Intercept", "C(g)[T.b]", "C(g)[T.c]", "x1", "x2"]
    manual = np.array([[1, 0, 0, 1.0, 0.0], [1, 0, 1, 5.0, 1.0]]) @ res.params[order].to_numpy()
    np.testing.assert_allclose(pred.to_numpy(), manual)
    assert list(pred.index) == [10, 20]
    with pytest.raises(UnseenLevelError,
                       match=r"newdata has a value of the variable 'g' \(the factor 'C\(g\)'\) that the fitted "
                             "model does not know"):
        res.predict(pd.DataFrame({"x1": [1.0], "x2": [0.0], "g": ["zzz"]}))
    with pytest.raises(dpstats.errors.InvalidArgumentError,
                       match="predict needs newdata: in-sample fitted values would reveal the private data"):
        res.predict()
    del X


def test_predict_warns_when_new_rows_lie_outside_the_declared_bounds():
    res = dpstats.dp_ols(FORMULA, make_data(3000), 2.0, method="ssp", bounds=BOUNDS, random_state=0)
    inside = pd.DataFrame({"x1": [0.0, 10.0], "x2": [-3.0, 3.0], "g": ["a", "b"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res.predict(inside)
    outside = pd.DataFrame({"x1": [50.0, 5.0, -1.0], "x2": [0.0, 7.25, 0.0], "g": ["a", "b", "c"]})
    with pytest.warns(ExtrapolationWarning) as record:
        pred = res.predict(outside)
    assert len(pred) == 3 and np.isfinite(pred).all()
    msg = str(record[0].message)
    assert record[0].filename == __file__  # points at the caller of predict
    assert msg.startswith("3 of 3 rows of newdata lie outside the bounds declared for the fit")
    assert "x1 (declared [0, 10]: 2 rows)" in msg and "x2 (declared [-3, 3]: 1 row)" in msg
    assert "y (" not in msg and "50" not in msg and "7.25" not in msg  # the response is not checked; no value shown
    with pytest.warns(ExtrapolationWarning, match="^1 of 1 row of newdata lies outside"):
        res.predict(outside.iloc[:1])


def test_predict_checks_declared_design_columns_and_arrays_but_not_fits_without_bounds():
    df = make_data(3000)
    bounds = {"x1": (0, 10), "np.exp(x2)": (0, 25), "y": (-60, 60)}
    res = dpstats.dp_ols("y ~ x1 + np.exp(x2)", df, 2.0, method="ssp", bounds=bounds, random_state=0)
    with pytest.warns(ExtrapolationWarning, match=r"1 of 2 rows .* in np\.exp\(x2\) \(declared \[0, 25\]: 1 row\)"):
        res.predict(pd.DataFrame({"x1": [1.0, 2.0], "x2": [0.0, 4.0]}))
    arrays = dpstats.dp_ols_arrays(df[["x1", "x2"]].to_numpy(), df["y"].to_numpy(), 2.0, intercept=False, method="ssp",
                                   x_bounds=[(0, 10), (-3, 3)], y_bounds=(-60, 60), column_names=["x1", "x2"],
                                   random_state=0)
    with pytest.warns(ExtrapolationWarning, match=r"x2 \(declared \[-3, 3\]: 1 row\)"):
        arrays.predict(pd.DataFrame({"x1": [1.0], "x2": [4.0]}))
    free = dpstats.dp_ols("y ~ x1", df, 2.0, method="pgd", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        free.predict(pd.DataFrame({"x1": [1e6]}))


def test_summary_renders_in_three_formats():
    res = dpstats.dp_ols(FORMULA, make_data(), 1.0, method="adassp", bounds=BOUNDS, random_state=0)
    smry = res.summary()
    text = smry.as_text()
    assert "Differentially Private Regression Results" in text and "x1" in text and "noisy X^T y" in text
    latex = smry.as_latex()
    assert latex.startswith("\\begin{table}") and latex.rstrip().endswith("\\end{table}")
    assert "\\toprule" in latex and "\\caption{" in latex
    assert "privacy report" not in latex.lower() and "noisy" not in latex  # the compact table: coefficients only
    both = smry.as_latex(privacy=True)
    assert both.startswith(latex) and "Privacy report" in both and "noisy $X^{T}$ y" in both
    html = smry.as_html()
    assert "<table" in html and "x1" in html
    assert "<table" in res._repr_html_()


def test_unavailable_inference_is_explicit():
    res = dpstats.dp_ols(FORMULA, make_data(), 1.0, method="adassp", bounds=BOUNDS, random_state=0,
                         inference=False)
    # behaviour change (issue 18): NaN with the reason, no exception, as for R^2
    assert res.bse.isna().all() and res.conf_int().isna().all().all() and "inference=False" in res.inference_reason
    assert np.isnan(res.rsquared) and "inference=False" in res.rsquared_reason  # NaN with the reason, no exception
    assert "No standard errors" in res.summary().as_text()


def test_error_bounds_are_attached():
    res = dpstats.dp_ols(FORMULA, make_data(), 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    eb = res.error_bounds
    assert eb.n == 2000 and eb.d == 5
    assert eb.statistical_term == pytest.approx(math.sqrt(5 / 2000))
    assert "Theory" in res.summary().as_text()


def test_accountant_across_fits_and_refusal_spends_nothing():
    df = make_data(500)
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    for _ in range(2):
        dpstats.dp_ols(FORMULA, df, 1.0, 4e-6, method="ssp", bounds=BOUNDS, accountant=acct, random_state=0)
    spent = acct.spent
    assert spent[0] == pytest.approx(2.0, rel=1e-6) and spent[1] == pytest.approx(8e-6)
    with pytest.raises(BudgetExceededError, match=r"but the accountant has \(epsilon=0, delta=2e-06\) left"):
        dpstats.dp_ols(FORMULA, df, 0.1, 1e-7, method="ssp", bounds=BOUNDS, accountant=acct, random_state=0)
    assert acct.spent == spent and len(acct.history) == 2


def test_dict_of_arrays_and_public_rescaling_off():
    df = make_data(2000)
    data = {c: df[c].to_numpy() for c in ["y", "x1", "x2"]}
    res = dpstats.dp_ols("y ~ x1 + x2", data, 5.0, method="ssp", bounds=BOUNDS, random_state=0, rescale=False)
    assert not any("centred and scaled" in n for n in res.privacy.notes)
    res2 = dpstats.dp_ols("y ~ x1 + x2", data, 5.0, method="ssp", bounds=BOUNDS, random_state=0)
    assert any("centred and scaled" in n for n in res2.privacy.notes)


def test_refusals_after_reservation_release_it():
    # errors decided after the budget was reserved (unknown column, missing bounds, shape) settle zero
    acct = dpstats.PrivacyAccountant(epsilon=1.0, delta=1e-6)
    df = make_data(300)
    for call in (dict(formula="y ~ nope"), dict(bounds={"x1": (0, 10)}), dict(data=make_data(3))):
        kwargs = dict(formula=FORMULA, data=df, epsilon=1.0, delta=1e-6, method="ssp", bounds=BOUNDS,
                      accountant=acct)
        kwargs.update(call)
        with pytest.raises(dpstats.errors.DPStatsError,
                           match="not a column of the data|bounds on the variables x2, y|singular by construction"):
            dpstats.dp_ols(**kwargs)
    assert acct.spent == (0.0, 0.0) and acct.remaining == (1.0, 1e-6)
    dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="ssp", bounds=BOUNDS, accountant=acct, random_state=0)
    assert acct.spent[0] == pytest.approx(1.0)


def test_arrays_interface_charges_the_accountant():
    df = make_data(2000)
    acct = dpstats.PrivacyAccountant(epsilon=1.0, delta=1e-6)
    dpstats.dp_ols_arrays(df[["x1", "x2"]].to_numpy(), df["y"].to_numpy(), 0.6, 5e-7, method="ssp",
                          x_bounds=[(0, 10), (-3, 3)], y_bounds=(-60, 60), intercept=True, accountant=acct,
                          random_state=0)
    assert acct.spent[0] == pytest.approx(0.6)
    with pytest.raises(BudgetExceededError, match=r"but the accountant has \(epsilon=0\.4, delta=5e-07\) left"):
        dpstats.dp_ols_arrays(df[["x1", "x2"]].to_numpy(), df["y"].to_numpy(), 0.6, 5e-7, intercept=False, method="ssp",
                              x_bounds=[(0, 10), (-3, 3)], y_bounds=(-60, 60), accountant=acct)
    assert acct.spent[0] == pytest.approx(0.6)


def test_auto_picks_a_bound_free_method_at_large_n_and_says_why():
    df = make_data(12_000)
    res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, random_state=0)
    spec = available_methods()[res.method]
    assert not spec.needs_bounds and spec.private
    assert "not every column, or not the response, has a public range" in res.privacy.method_choice


def test_latex_html_and_json_escape_names_and_levels_once() -> None:
    # Level names with LaTeX specials were escaped twice (ours, then statsmodels' table writer): "R\\&D" broke
    # the row and "100\\%" commented out the rest of the line.  HTML passed raw tags through; JSON wrote NaN.
    rng = np.random.default_rng(0)
    n = 2000
    df = pd.DataFrame({"dept": rng.choice(["R&D", "Sales", "100%"], n), "<b>x</b>": rng.uniform(0, 1, n)})
    df["y"] = df["<b>x</b>"] + rng.normal(0, 0.1, n)
    res = dpstats.dp_ols('y ~ Q("<b>x</b>") + C(dept, levels=["R&D", "Sales", "100%"])', df, 10, 1e-6,
                         bounds={"<b>x</b>": (0, 1), "y": (-2, 3)}, random_state=0)
    latex = res.summary().as_latex()
    assert r"[T.100\%]" in latex and r"R\&D" in latex
    assert r"\\&" not in latex and r"\\%" not in latex
    page = res.summary().as_html()
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page
    tukey = dpstats.dp_ols("y ~ Q('<b>x</b>')", df, 10, 1e-6, method="tukey", random_state=0)
    reference = dpstats.dp_ols("y ~ Q('<b>x</b>')", df, math.inf, method="ols")
    for fit in (res, tukey, reference):
        text = fit.to_json()
        json.loads(text, parse_constant=lambda token: pytest.fail(f"non-standard JSON token {token}"))


def test_a_delta_of_at_least_one_over_n_is_warned_about_from_public_facts():
    """delta >= 1/n: the fit runs and warns (delta and n only, no data value); delta well below 1/n: no warning."""
    df = make_data(200)
    with pytest.warns(LargeDeltaWarning, match=r"delta=0\.01 is at least 1/n = 1/200"):
        dpstats.dp_ols(FORMULA, df, 1.0, 0.01, bounds=BOUNDS, method="adassp", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDeltaWarning)
        dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, bounds=BOUNDS, method="adassp", random_state=0)


def test_a_dpstats_warning_made_an_error_by_a_filter_is_raised_as_itself_with_what_was_spent():
    """With warnings.simplefilter("error") (a test suite's filterwarnings = error), LargeDeltaWarning became
    InternalFitError: "reading the data failed with LargeDeltaWarning; its message is withheld because it may quote
    data values", though a dpstats warning's message is built from public facts (delta and n here)."""
    df = make_data(200)
    acct = dpstats.PrivacyAccountant(2.0, 0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDeltaWarning)
        with pytest.raises(LargeDeltaWarning, match=r"delta=0\.01 is at least 1/n = 1/200") as caught:
            dpstats.dp_ols(FORMULA, df, 1.0, 0.01, bounds=BOUNDS, method="adassp", accountant=acct)
    assert caught.value.privacy_spent == (0.0, 0.0) and acct.spent == (0.0, 0.0)
    assert caught.value.__cause__ is None and caught.value.__context__ is None
