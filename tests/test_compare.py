"""dpstats.compare: the documented tidy frame, the refusal on data not marked public, totals, plot."""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.compare import COLUMNS, Comparison
from dpstats.errors import (
    InvalidArgumentError,
    InvalidPrivacyParameterError,
    MissingDataError,
    PublicDataRequiredError,
    UnscaledFitWarning,
    UnsupportedPrivacyParameterError,
)

matplotlib.use("Agg")

BOUNDS = {"x": (0, 10), "y": (-30, 60)}
TRUTH = pd.Series({"Intercept": 2.0, "x": 3.0})


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 3000)
    return pd.DataFrame({"x": x, "y": 2.0 + 3.0 * x + rng.normal(0, 5, x.size)})


@pytest.fixture(scope="module")
def study(synthetic):
    return dpstats.compare("y ~ x", synthetic, methods=["ssp", "adassp", "dpsgd"], epsilons=[0.5, 2.0], trials=3,
                           data_are_public=True, bounds=BOUNDS, truth=TRUTH, random_state=0, progress=False,
                           verbose=False)


@pytest.mark.parametrize("flag", [False, "yes", 1, None])
def test_refuses_data_not_marked_public(synthetic, flag, capsys):
    with pytest.raises(PublicDataRequiredError, match="data_are_public=True"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], epsilons=[1.0], trials=2, data_are_public=flag,
                        bounds=BOUNDS)
    assert capsys.readouterr().out == ""  # refused before anything ran or was printed
    assert issubclass(PublicDataRequiredError, ValueError)


def test_frame_has_the_documented_columns(study):
    frame = study.frame
    assert isinstance(study, Comparison)
    assert list(frame.columns) == COLUMNS
    assert len(frame) == 3 * 2 * 3
    assert set(frame["method"]) == {"ssp", "adassp", "dpsgd"}
    assert sorted(frame["epsilon"].unique()) == [0.5, 2.0]
    assert sorted(frame["trial"].unique()) == [0, 1, 2]
    assert (frame["status"] == "ok").all()
    assert frame["r2"].between(0.0, 1.0).all()
    assert (frame["coef_error"] >= 0).all() and (frame["seconds"] > 0).all()
    # each fit spends (up to calibration slack) its own budget, and the totals are their sums (basic composition)
    assert (frame["epsilon_spent"] <= frame["epsilon"] * (1 + 1e-9)).all()
    # (at least the method's 98%: the missing-value screen's Laplace count and dpsgd's steps compose below the sum)
    assert (frame["epsilon_spent"] >= 0.98 * frame["epsilon"]).all()
    assert study.total_epsilon == pytest.approx(frame["epsilon_spent"].sum())
    assert study.total_epsilon == pytest.approx(3 * 3 * 2.5, rel=1e-2)
    assert study.total_delta == pytest.approx(18 * 1e-6)


def test_r2_is_the_in_sample_r2(study, synthetic):
    """r2 is 1 - RSS/TSS on the given data for the released coefficients (checked against OLS's own R^2)."""
    ols = dpstats.dp_ols("y ~ x", synthetic, float("inf"), method="ols")
    best = study.frame["r2"].max()
    assert best <= ols.info["rsquared"] + 1e-12
    assert best > ols.info["rsquared"] - 0.01


def test_reproducible_with_a_seed(synthetic, study):
    again = dpstats.compare("y ~ x", synthetic, methods=["ssp", "adassp", "dpsgd"], epsilons=[0.5, 2.0], trials=3,
                            data_are_public=True, bounds=BOUNDS, truth=TRUTH, random_state=0, progress=False,
                            verbose=False)
    pd.testing.assert_frame_equal(study.frame.drop(columns="seconds"), again.frame.drop(columns="seconds"))


def test_without_truth_coef_error_is_nan_and_total_is_printed(synthetic, capsys):
    res = dpstats.compare("y ~ x", synthetic, methods="ssp", epsilons=[1.0], trials=2, data_are_public=True,
                          bounds=BOUNDS, random_state=1, progress=False)
    out = capsys.readouterr().out
    assert "2 fits" in out and "spent epsilon=2" in out
    assert res.frame["coef_error"].isna().all()
    with pytest.raises(InvalidArgumentError, match="truth"):
        res.summary("coef_error")


def test_failures_are_recorded_with_their_spend(synthetic):
    """A method that refuses before spending, and a PTR refusal that spends (TukeyEM at tiny n)."""
    methods = ["ssp"] + (["tukey"] if "tukey" in dpstats.available_methods() else [])
    res = dpstats.compare("y ~ x", synthetic.iloc[:300], methods=methods, epsilons=[0.2], trials=2,
                          data_are_public=True, random_state=2, progress=False, verbose=False)
    ssp = res.frame[res.frame["method"] == "ssp"]
    assert (ssp["status"] == "MissingBoundsError").all()  # no bounds given: refused, nothing spent
    assert (ssp["epsilon_spent"] == 0).all() and ssp["r2"].isna().all()
    if "tukey" in methods:
        tukey = res.frame[res.frame["method"] == "tukey"]
        assert set(tukey["status"]) <= {"ok", "ptr_failure", "InsufficientDataError"}
        failed = tukey[tukey["status"] == "ptr_failure"]
        assert (failed["epsilon_spent"] > 0).all()  # a PTR refusal is not free
    assert res.total_epsilon == pytest.approx(res.frame["epsilon_spent"].sum())
    assert res.summary().loc[("ssp", 0.2), "not_ok"] == "MissingBoundsError: 2"  # the summary says why


def test_missing_values_are_refused_or_dropped_as_in_dp_ols(synthetic):
    gappy = synthetic.iloc[:1000].copy()
    gappy.loc[[3, 10], "x"] = np.nan
    kwargs = dict(methods=["ssp", "tukey"], epsilons=[1.0], trials=1, data_are_public=True, bounds=BOUNDS,
                  random_state=0, progress=False, verbose=False)
    with pytest.raises(MissingDataError, match="missing='drop'"):
        dpstats.compare("y ~ x", gappy, **kwargs)
    res = dpstats.compare("y ~ x", gappy, missing="drop", **kwargs).frame.set_index("method")
    assert res.loc["ssp", "status"] == "ok" and 0.5 < res.loc["ssp", "r2"] <= 1  # R^2 on the complete rows
    assert res.loc["tukey", "status"] == "InvalidArgumentError"  # tukey cannot take missing='drop', as in dp_ols


def test_summary_says_which_metric_its_median_is(study):
    """The ``median``/``q25``/``q75`` columns are of the summarised metric, and the table says which (in-sample R^2
    by default without ``truth=``), in its printed text as well."""
    table = study.summary()
    assert table.columns.name == "metric: in-sample R^2 (r2)"
    assert "metric: in-sample R^2 (r2)" in table.to_string()
    assert study.summary("coef_error").columns.name == "metric: ||b - beta||_2 (coef_error)"


def test_summary_and_plot(study):
    table = study.summary()
    assert list(table.columns) == ["median", "q25", "q75", "ok", "not_ok", "median_seconds"]
    assert (table["not_ok"] == "").where(table["ok"] == 1.0, True).all()  # a reason wherever a trial failed
    assert (table["q25"] <= table["median"]).all() and (table["median"] <= table["q75"]).all()
    ax = study.plot()
    assert ax.get_xscale() == "log"
    assert {line.get_label() for line in ax.get_lines()} == {"ssp", "adassp", "dpsgd"}
    ax2 = study.plot("coef_error")
    assert "beta" in ax2.get_ylabel()
    matplotlib.pyplot.close("all")


def test_argument_validation(synthetic):
    kwargs = dict(data_are_public=True, bounds=BOUNDS, progress=False, verbose=False)
    with pytest.raises(InvalidArgumentError, match="metric"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], metric="mse", **kwargs)
    with pytest.raises(InvalidArgumentError, match="truth"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], metric="coef_error", **kwargs)
    with pytest.raises(InvalidArgumentError, match="not private"):
        dpstats.compare("y ~ x", synthetic, methods=["ols"], **kwargs)
    with pytest.raises(InvalidPrivacyParameterError, match="epsilons"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], epsilons=[math.inf], **kwargs)
    with pytest.raises(InvalidArgumentError, match="design columns"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], truth={"x": 3.0}, **kwargs)
    with pytest.raises(InvalidArgumentError, match="method_options"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], method_options={"dpsgd": {"epochs": 1}}, **kwargs)


def test_method_options_reach_the_method(synthetic):
    res = dpstats.compare("y ~ x", synthetic, methods=["dpsgd"], epsilons=[1.0], trials=1, data_are_public=True,
                          bounds=BOUNDS, method_options={"dpsgd": {"optimizer": "bogus"}}, progress=False,
                          verbose=False)
    assert res.frame["status"].tolist() == ["MethodOptionError"]


def _public_log1p_shift(v):
    """A user-defined transform, defined in the caller's namespace (formulas no longer look it up)."""
    return np.log1p(v + 3.0)


def test_compare_and_dp_ols_refuse_functions_defined_by_the_caller():
    # formulas are evaluated in dpstats's own namespace: a caller's function is refused, naming it, and the same
    # transform written with the formula language works
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 2000)})
    df["y"] = 2 * df["x"] + rng.normal(0, 0.1, 2000)
    with pytest.raises(dpstats.errors.DisallowedExpressionError, match=r"_public_log1p_shift\(\)"):
        dpstats.dp_ols("y ~ _public_log1p_shift(x)", df, 1.0, method="ssp", bounds={"x": (-1, 1), "y": (-3, 3)})
    formula = "y ~ np.log1p(x + 3.0)"
    bounds = {"x": (-1, 1), "y": (-3, 3)}
    res = dpstats.dp_ols(formula, df, 1.0, method="ssp", bounds=bounds, random_state=0)
    assert "np.log1p(x + 3.0)" in res.params.index
    cmp = dpstats.compare(formula, df, methods=["ssp"], epsilons=[1.0], trials=2, data_are_public=True,
                          bounds=bounds, random_state=0)
    assert (cmp.frame["status"] == "ok").all()


def test_a_single_epsilon_is_a_grid_of_one(synthetic):
    kwargs = dict(methods=["ssp"], trials=2, data_are_public=True, bounds=BOUNDS, random_state=0, progress=False,
                  verbose=False)
    single = dpstats.compare("y ~ x", synthetic, epsilons=1.0, **kwargs)
    listed = dpstats.compare("y ~ x", synthetic, epsilons=[1.0], **kwargs)
    assert single.frame["epsilon"].tolist() == [1.0, 1.0]
    pd.testing.assert_frame_equal(single.frame.drop(columns="seconds"), listed.frame.drop(columns="seconds"))
    assert dpstats.compare("y ~ x", synthetic, epsilons=np.array([0.5, 2.0]), **kwargs).frame["epsilon"].nunique() == 2


@pytest.mark.parametrize(("grid", "delta", "error", "words"), [
    (["1"], 1e-6, InvalidPrivacyParameterError, ["epsilons[0]", "the string '1'", "pass a number, 1.0"]),
    ([1.0, 0.0], 1e-6, InvalidPrivacyParameterError, ["epsilons[1]", "finite number > 0"]),
    ([math.nan], 1e-6, InvalidPrivacyParameterError, ["epsilons[0]", "finite number > 0"]),
    ([True], 1e-6, InvalidPrivacyParameterError, ["epsilons[0]"]),
    ([200.0], 1e-6, UnsupportedPrivacyParameterError, ["epsilons[0]", "largest supported epsilon"]),
    ([1.0], "1e-6", InvalidPrivacyParameterError, ["delta", "the string '1e-6'"]),
    ([1.0], 0.0, InvalidPrivacyParameterError, ["delta", "between 0 and 1"]),
    ([1.0], 1e-20, UnsupportedPrivacyParameterError, ["smallest supported delta"]),
    ("1", 1e-6, InvalidArgumentError, ["epsilons must be a number or a list", "a string"]),
    (None, 1e-6, InvalidArgumentError, ["epsilons must be a number or a list", "NoneType"]),
    ([], 1e-6, InvalidArgumentError, ["non-empty"]),
])
def test_epsilons_and_delta_are_checked_as_dp_ols_checks_them_before_any_fit(synthetic, monkeypatch, grid, delta,
                                                                              error, words):
    monkeypatch.setattr(importlib.import_module("dpstats.compare"), "dp_ols", _no_fit)
    with pytest.raises(error, match=re.escape(words[0])) as info:
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], epsilons=grid, delta=delta, trials=1,
                        data_are_public=True, bounds=BOUNDS, progress=False, verbose=False)
    assert all(w in str(info.value) for w in words), str(info.value)


@pytest.mark.parametrize(("kwargs", "words"), [
    (dict(methods=3), ["methods must be a method name or a list", "int"]),
    (dict(method_options=[1]), ["method_options must be a mapping", "list"]),
    (dict(method_options={"ssp": 3}), ["mapping of options", "ssp"]),
    (dict(random_state="a"), ["random_state must be None, a non-negative int seed, a numpy.random.Generator or a "
                              "numpy.random.SeedSequence", "got str"]),
    (dict(random_state=-1), ["random_state must be a non-negative integer seed, got -1"]),
    (dict(random_state=1.5), ["random_state", "float"]),
    (dict(truth={"Intercept": "a", "x": 1.0}), ["truth must map each design column to a number"]),
])
def test_other_public_arguments_get_typed_refusals_before_any_fit(synthetic, monkeypatch, kwargs, words):
    monkeypatch.setattr(importlib.import_module("dpstats.compare"), "dp_ols", _no_fit)
    options = dict(methods=["ssp"], epsilons=[1.0], trials=1, data_are_public=True, bounds=BOUNDS, progress=False,
                   verbose=False)
    with pytest.raises(InvalidArgumentError, match="^(methods|method_options|random_state|truth) must") as info:
        dpstats.compare("y ~ x", synthetic, **{**options, **kwargs})
    assert all(w in str(info.value) for w in words), str(info.value)


def test_random_state_takes_what_dp_ols_takes(synthetic):
    """compare() refused a numpy Generator or SeedSequence (an int only), which dp_ols and DPLinearRegression take:
    either now seeds the study as the int it draws would, so two equal ones give the same study."""
    kwargs = dict(methods=["ssp"], epsilons=[1.0], trials=2, data_are_public=True, bounds=BOUNDS, progress=False,
                  verbose=False)
    a = dpstats.compare("y ~ x", synthetic, random_state=np.random.default_rng(5), **kwargs)
    b = dpstats.compare("y ~ x", synthetic, random_state=np.random.default_rng(5), **kwargs)
    pd.testing.assert_frame_equal(a.frame.drop(columns="seconds"), b.frame.drop(columns="seconds"))
    assert (a.frame["status"] == "ok").all()
    seq = np.random.SeedSequence(5)
    c = dpstats.compare("y ~ x", synthetic, random_state=seq, **kwargs)
    e = dpstats.compare("y ~ x", synthetic, random_state=seq, **kwargs)
    pd.testing.assert_frame_equal(c.frame.drop(columns="seconds"), e.frame.drop(columns="seconds"))


def test_the_default_study_leaves_out_lasso_unless_its_options_are_given(synthetic, monkeypatch):
    """Every lasso row of a default study was a MethodOptionError (lasso needs sparsity=): it is left out unless
    method_options names it."""
    fitted: list[str] = []

    def record(formula, data, *, method, **kwargs):
        fitted.append(method)
        raise InvalidArgumentError("not fitted in this test")

    monkeypatch.setattr(importlib.import_module("dpstats.compare"), "dp_ols", record)
    kwargs = dict(epsilons=[1.0], trials=1, data_are_public=True, bounds=BOUNDS, progress=False, verbose=False)
    default = set(dpstats.compare("y ~ x", synthetic, **kwargs).frame["method"])
    private = {name for name, spec in dpstats.available_methods().items() if spec.private}
    assert default == private - {"lasso"}
    with_lasso = dpstats.compare("y ~ x", synthetic, method_options={"lasso": {"sparsity": 2}}, **kwargs)
    assert set(with_lasso.frame["method"]) == private


def _no_fit(*args, **kwargs):
    raise AssertionError("compare fitted before checking its arguments")


def test_a_fit_that_failed_says_why_in_the_frame(synthetic):
    """``status`` gave only the error class ("MethodOptionError" for every lasso fit of a default study, which needs
    sparsity=); the frame's ``message`` now says why (the typed error's message, built from public facts)."""
    study = dpstats.compare("y ~ x", synthetic, methods=["lasso", "ssp"], epsilons=[1.0], trials=1,
                            data_are_public=True, bounds=BOUNDS, random_state=0, progress=False, verbose=False)
    frame = study.frame.set_index("method")
    assert frame.loc["lasso", "status"] == "MethodOptionError"
    assert "lasso needs sparsity=" in frame.loc["lasso", "message"]
    assert frame.loc["ssp", "status"] == "ok" and frame.loc["ssp", "message"] == ""


def test_rescale_reaches_every_fit_and_a_bad_one_is_refused_before_any(synthetic, capsys):
    """compare() had no rescale=, so a study could not run the methods on the raw design as dp_ols(rescale=False)
    does (``TypeError: unexpected keyword argument``)."""
    from dpstats.privacy.mechanisms import spawn_generators  # noqa: PLC0415

    kwargs = dict(methods=["ssp"], epsilons=[1.0], trials=1, data_are_public=True, bounds=BOUNDS, random_state=0,
                  progress=False, verbose=False)
    for rescale in (False, True):
        study = dpstats.compare("y ~ x", synthetic, rescale=rescale, **kwargs)
        direct = dpstats.dp_ols("y ~ x", synthetic, 1.0, method="ssp", bounds=BOUNDS, rescale=rescale,
                                random_state=spawn_generators(0, 1)[0])  # the study's one fit, the same noise
        resid = synthetic["y"] - direct.predict(synthetic)
        r2 = 1 - float(resid @ resid) / float(((synthetic["y"] - synthetic["y"].mean()) ** 2).sum())
        assert study.frame.loc[0, "r2"] == pytest.approx(r2, rel=1e-12)
    with pytest.raises(InvalidArgumentError, match="rescale"):
        dpstats.compare("y ~ x", synthetic, rescale="off", **kwargs)
    assert capsys.readouterr().out == ""


def test_a_non_private_method_is_refused_with_what_to_do(synthetic):
    """A researcher who lists 'ols' beside the private methods (as the non-private reference of the study) is told
    to drop it and where the reference is: least squares' in-sample R^2, the ceiling of the r2 metric (session 54's
    fourth new-user check: the refusal said only that compare studies private methods)."""
    kwargs = dict(data_are_public=True, bounds=BOUNDS, progress=False, verbose=False)
    with pytest.raises(InvalidArgumentError, match=r"drop it from methods=.*method='ols'\)\.rsquared"):
        dpstats.compare("y ~ x", synthetic, methods=["ssp", "ols"], **kwargs)
    # the reference it names exists and is the ceiling of the study's r2
    ols = dpstats.dp_ols("y ~ x", synthetic, float("inf"), method="ols")
    study = dpstats.compare("y ~ x", synthetic, methods=["ssp"], epsilons=[1.0], trials=2, random_state=0, **kwargs)
    assert study.frame["r2"].max() <= ols.rsquared + 1e-12


def test_a_fit_warning_is_told_once_for_the_study(synthetic):
    """DP-SGD without bounds warns on every fit that it ran on the data's own units; a study of two budgets and three
    trials told the same text six times (a researcher's grid of five budgets and twenty trials, a hundred times). It
    is told once, with the fits that gave it (session 54's fourth new-user check)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dpstats.compare("y ~ x", synthetic, methods=["dpsgd"], epsilons=[1.0, 3.0], trials=3, data_are_public=True,
                        random_state=0, progress=False, verbose=False)
    unscaled = [w for w in caught if issubclass(w.category, UnscaledFitWarning)]
    assert len(unscaled) == 1
    assert "Declare bounds for every variable" in str(unscaled[0].message)
    assert "[compare: in 6 of dpsgd's 6 fits]" in str(unscaled[0].message)
    assert unscaled[0].filename == __file__  # told at the caller's line, not inside the package
    # a filter that ignores it still silences it
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.simplefilter("ignore", UnscaledFitWarning)
        dpstats.compare("y ~ x", synthetic, methods=["dpsgd"], epsilons=[1.0], trials=2, data_are_public=True,
                        random_state=0, progress=False, verbose=False)
    assert not [w for w in caught if issubclass(w.category, UnscaledFitWarning)]


def test_plot_legend_says_where_no_fit_succeeded(synthetic):
    """A method that failed on every trial (theilsen with two predictors) drew nothing but stood in the legend as if
    it had a curve; a method that failed at some epsilon only left a gap. The legend now says so, and the y label is
    mathtext (R^2 was printed with a literal caret)."""
    df = synthetic.assign(z=synthetic["x"] ** 0.5)
    study = dpstats.compare("y ~ x + z", df, methods=["ssp", "theilsen"], epsilons=[0.5, 2.0], trials=2,
                            data_are_public=True, bounds={**BOUNDS, "z": (0, 4)}, random_state=0, progress=False,
                            verbose=False)
    ax = study.plot()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["ssp", "theilsen (no fit succeeded)"]
    assert ax.get_ylabel() == "in-sample $R^2$"
    frame = study.frame.copy()
    frame.loc[(frame["method"] == "ssp") & (frame["epsilon"] == 0.5), ["status", "r2"]] = ["ptr_failure", np.nan]
    legend = [t.get_text() for t in dataclasses.replace(study, frame=frame).plot().get_legend().get_texts()]
    assert legend == ["ssp (no fit at epsilon=0.5)", "theilsen (no fit succeeded)"]
    matplotlib.pyplot.close("all")


def test_progress_bar_is_closed_when_the_study_is_interrupted(synthetic, monkeypatch):
    """A notebook user who interrupts a long study (KeyboardInterrupt inside a fit) left the tqdm bar open."""
    compare_module = importlib.import_module("dpstats.compare")  # dpstats.compare is also the function

    class Bar:
        closed = False

        def update(self, _: int) -> None:
            pass

        def close(self) -> None:
            Bar.closed = True

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(compare_module, "_progress", lambda total, enabled: Bar())
    monkeypatch.setattr(compare_module, "_one_fit", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dpstats.compare("y ~ x", synthetic, methods=["ssp"], epsilons=[1.0], trials=1, data_are_public=True,
                        bounds=BOUNDS, random_state=0, verbose=False)
    assert Bar.closed


def test_html_display_shows_every_summary_column(study):
    """A notebook showed the text repr, whose summary pandas cuts to the display width ("median ... median_seconds");
    the HTML display has the header and every column."""
    page = study._repr_html_()
    assert page.startswith("<p>Comparison of 3 methods") and "metric: in-sample R^2 (r2)" in page
    for column in ["median", "q25", "q75", "ok", "not_ok", "median_seconds"]:
        assert f"<th>{column}</th>" in page
    assert "..." not in page
