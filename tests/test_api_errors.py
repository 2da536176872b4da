"""Keywords given to the wrong entry point, and defaults of the planning call: typed refusals that say what to
write, decided before any data are read."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DataTypeError, DPStatsError, InvalidArgumentError, InvalidBoundsError
from dpstats.sklearn import DPLinearRegression


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    return X, X @ np.array([1.0, -1.0]) + rng.normal(0, 0.1, 200)


def test_dp_ols_arrays_requires_the_intercept_choice() -> None:
    """``dp_ols_arrays`` defaulted to no intercept while ``dp_ols`` and ``DPLinearRegression`` fit one: the choice
    is now required (a missing one is Python's TypeError naming it, before anything is read or spent), and either
    value fits the model it names."""
    X, y = _data()
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    with pytest.raises(TypeError, match="required keyword-only argument: 'intercept'"):
        dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="ssp", x_bounds=(-1, 1), y_bounds=(-3, 3),  # type: ignore[call-arg]
                              accountant=acct)
    assert acct.spent == (0.0, 0.0)
    fits = {flag: dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="ssp", intercept=flag, x_bounds=(-1, 1),
                                        y_bounds=(-3, 3), random_state=0)
            for flag in (True, False)}
    assert list(fits[True].params.index) == ["Intercept", "x1", "x2"]
    assert list(fits[False].params.index) == ["x1", "x2"]


@pytest.mark.parametrize(("keyword", "hint"), [("bounds", "x_bounds="), ("X_bounds", "x_bounds="),
                                               ("levels", "numeric design")])
def test_dp_ols_arrays_names_its_own_keyword_for_a_misplaced_one(keyword: str, hint: str) -> None:
    X, y = _data()
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    with pytest.raises(InvalidArgumentError, match=hint):
        dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, intercept=False, accountant=acct, **{keyword: {"x1": (-1, 1)}})
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("keyword", ["x_bounds", "y_bounds", "X_bounds"])
def test_dp_ols_names_bounds_for_an_arrays_keyword(keyword: str) -> None:
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "y": y})
    with pytest.raises(InvalidArgumentError, match=r"bounds=\{'column'"):
        dpstats.dp_ols("y ~ a", frame, 1.0, 1e-6, **{keyword: (-1, 1)})


def test_sklearn_bounds_on_the_response_point_to_y_bounds() -> None:
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1]})
    with pytest.raises(InvalidBoundsError, match="y_bounds="):
        DPLinearRegression(epsilon=1.0, bounds={"a": (-1, 1), "b": (-1, 1), "y": (-3, 3)}).fit(frame, y)


def test_plan_by_rates_defaults_delta_as_the_planning_call_with_bounds_does() -> None:
    implicit = dpstats.plan(0.1, d=4, epsilon=1.0)
    explicit = dpstats.plan(0.1, d=4, epsilon=1.0, delta=1e-6)
    pd.testing.assert_frame_equal(implicit, explicit)


def _result() -> dpstats.DPRegressionResults:
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y})
    return dpstats.dp_ols("y ~ a + b", frame, 1.0, 1e-6, method="ssp", random_state=0,
                          bounds={"a": (-1, 1), "b": (-1, 1), "y": (-3, 3)})


@pytest.mark.parametrize("call", [lambda r: r.predict(), lambda r: r.conf_int(alpha=0),
                                  lambda r: r.conf_int(alpha="0.05"), lambda r: r.summary(alpha=1.5),
                                  lambda r: r.tidy(alpha=True), lambda r: dpstats.table([r], alpha=2.0),
                                  lambda r: dpstats.table([r], statistic="se2")])
def test_result_methods_refuse_bad_arguments_with_the_package_error(call) -> None:
    # a user who loops over fits catches dpstats.errors.DPStatsError; ValueError still works as before
    res = _result()
    with pytest.raises(InvalidArgumentError,
                       match=r"predict needs newdata|alpha must be a number in \(0, 1\)"
                             r"|statistic must be one of") as info:
        call(res)
    assert isinstance(info.value, ValueError)


def test_formula_all_reads_the_names_of_a_dict_as_dp_ols_reads_its_columns() -> None:
    data = {"y": [1.0, 2.0], "a": [0.0, 1.0], "b c": [1.0, 0.0]}
    assert dpstats.formula_all(data, "y") == "y ~ a + Q('b c')"
    with pytest.raises(DataTypeError, match="DataFrame or a dict"):
        dpstats.formula_all("y", pd.DataFrame(data))  # the arguments swapped


@pytest.mark.parametrize("call", [
    lambda: dpstats.simulate.robust_regression_data(100, 3, corruption=1.0),
    lambda: dpstats.simulate.robust_regression_data(100, 3, attack="flip"),
    lambda: dpstats.simulate.sparse_regression_data(100, 10, 20, 0.5),
], ids=["corruption", "attack", "sparsity"])
def test_simulators_refuse_bad_parameters_with_the_package_error(call) -> None:
    with pytest.raises(InvalidArgumentError, match="got"):
        call()


@pytest.mark.parametrize("arguments", [
    {"epsilon": 0.0}, {"delta": 1.5}, {"method": "no_such_method"}, {"formula": "y ~ not_a_column"},
])
def test_every_error_before_the_data_are_touched_says_it_spent_nothing(arguments: dict) -> None:
    """``privacy_spent`` is on every dpstats error, so code that reports a refusal's cost needs no getattr default;
    an error decided from the arguments spent (0, 0), and one raised after spending carries the ledger's charge."""
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "y": y})
    call = {"formula": "y ~ a", "epsilon": 1.0, "delta": 1e-6, "method": "ssp", **arguments}
    with pytest.raises(DPStatsError,
                       match="epsilon must be > 0|delta must lie strictly between 0 and 1"
                             "|unknown method 'no_such_method'|'not_a_column'") as caught:
        dpstats.dp_ols(call.pop("formula"), frame, bounds={"a": (-1, 1), "y": (-3, 3)}, **call)
    assert caught.value.privacy_spent == (0.0, 0.0)


@pytest.mark.parametrize(("keyword", "value", "error"), [
    ("bounds", "x", InvalidBoundsError), ("bounds", [("a", (0, 1))], InvalidBoundsError),
    ("levels", "g", InvalidArgumentError), ("levels", ["u", "v"], InvalidArgumentError),
])
def test_bounds_and_levels_that_are_not_mappings_are_refused_by_name(keyword, value, error) -> None:
    """Before, a bare name or a list failed inside the design build (an InternalFitError that said nothing)."""
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "g": ["u", "v"] * 100, "y": y})
    with pytest.raises(error, match=f"{keyword}= must be a dict"):
        dpstats.dp_ols("y ~ a + C(g)", frame, 1.0, 1e-6, **{keyword: value})


@pytest.mark.parametrize("dtype", [str, object])
def test_an_array_of_text_or_objects_is_refused_from_its_dtype(dtype) -> None:
    """Whether every string parses as a number is a fact of the rows; the array's dtype (public) decides, so a
    neighbour with one unparseable row is refused exactly as the other is."""
    X, y = _data()
    for rows in (X.astype(dtype), np.where(np.arange(200)[:, None] == 0, "oops", X.astype(str)).astype(dtype)):
        with pytest.raises(DataTypeError, match="must be a numeric array; its dtype is"):
            dpstats.dp_ols_arrays(rows, y, 1.0, 1e-6, intercept=False, method="ssp", x_bounds=(-1, 1), y_bounds=(-3, 3))


@pytest.mark.parametrize(("value", "python"), [("off", "rescale=False"), ("columns", "rescale=True")])
def test_rescale_in_the_command_lines_spelling_names_the_python_one(value: str, python: str) -> None:
    """``rescale="off"`` is the command line's ``--rescale off``: the refusal says how Python spells it, from the
    argument alone (nothing spent), for both entry points."""
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "y": y})
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    calls = [lambda: dpstats.dp_ols("y ~ a", frame, 1.0, 1e-6, bounds={"a": (-1, 1), "y": (-3, 3)},
                                    accountant=acct, rescale=value),
             lambda: dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, x_bounds=(-1, 1), y_bounds=(-3, 3), accountant=acct,
                                           intercept=False, rescale=value)]
    for call in calls:
        with pytest.raises(InvalidArgumentError, match="rescale must be") as info:
            call()
        message = str(info.value)
        assert f"the command line's spelling of {python}" in message
        assert "rescale=True, rescale='centred' and rescale=False in Python" in message
    assert acct.spent == (0.0, 0.0)


def test_pgd_gives_the_same_fit_with_rescale_false_as_documented() -> None:
    """pgd standardises by private estimates inside its own domain whatever ``rescale`` is: without products or
    powers to centre, ``"centred"``, ``True`` and ``False`` give the same fit on a design with an intercept, as the
    dp_ols docstring says."""
    X, y = _data()
    frame = pd.DataFrame({"a": 5 + 4 * X[:, 0], "b": X[:, 1], "y": y})
    fits = [dpstats.dp_ols("y ~ a + b", frame, 1.0, 1e-6, method="pgd", random_state=0, rescale=rescale,
                           bounds={"a": (0, 10), "b": (-1, 1), "y": (-3, 3)}).params
            for rescale in ("centred", True, False)]
    pd.testing.assert_series_equal(fits[0], fits[1])
    pd.testing.assert_series_equal(fits[0], fits[2])
    doc = " ".join((dpstats.dp_ols.__doc__ or "").split())
    assert "so only the centring of products and powers changes its fit" in doc


@pytest.mark.parametrize("levels", [[[1], [2]], [{"a": 1}], [np.array([1, 2])], [set()], ["a", ["b"]]])
def test_declared_levels_that_cannot_be_levels_are_a_formula_error(levels) -> None:
    """A list, dict, array or set among the declared levels raised a bare TypeError inside the design, reported as
    an InternalFitError ("a bug"); it is refused from the declaration, as a level listed twice is."""
    df = pd.DataFrame({"y": np.arange(40.0) % 5, "g": np.array(["a", "b"])[np.arange(40) % 2]})
    with pytest.raises(dpstats.errors.FormulaError, match="levels for 'g' must be values") as info:
        dpstats.dp_ols("y ~ g", df, 1.0, method="ssp", bounds={"y": (0, 4)}, levels={"g": levels})
    assert info.value.privacy_spent == (0.0, 0.0)
    with pytest.raises(dpstats.errors.FormulaError, match="levels for 'g' must be values"):
        dpstats.plan(formula="y ~ g", bounds={"y": (0, 4)}, levels={"g": levels}, n=100, epsilon=1.0)


@pytest.mark.parametrize("method, options", [
    ("robgd", {"clip_level": 10**400}), ("ambssgd", {"max_rounds": 10**400}), ("ambssgd", {"trace": 10**400}),
    ("dpsgd", {"clip_norm": 10**400}), ("lasso", {"sparsity": 1, "step_size": 10**400}),
    ("noisy_ols", {"truncation": -(10**400)}), ("noisy_ols", {"eigen_share": 10**5000}),
    ("noisy_ols", {"eigen_share": "auto"}), ("noisy_ols", {"eigen_failure": "x"}),
    ("ssp", {"bootstrap": 2**31}), ("adassp", {"bootstrap": 2**31}),
])
def test_option_values_out_of_range_are_method_option_errors(method, options) -> None:
    """An int beyond the float range raised a bare OverflowError (or ValueError, for a repr beyond 4300 digits) from
    the options' checks; a string eigen_share a bare ValueError; bootstrap=2**31 a MemoryError after the whole
    budget was spent. Each is a MethodOptionError before anything is read or spent."""
    df = pd.DataFrame({"x": np.linspace(0, 10, 200), "y": np.linspace(-5, 5, 200) % 3})
    acct = dpstats.PrivacyAccountant(10.0, 1e-4)
    with pytest.raises(dpstats.errors.MethodOptionError,
                       match=r"is an? (negative )?integer of about \d+ digits, beyond the float range"
                             r"|must be a number, got a str|bootstrap must be an integer in") as info:
        dpstats.dp_ols("y ~ x", df, 1.0, method=method, bounds={"x": (0, 10), "y": (0, 3)}, accountant=acct,
                       **options)
    assert info.value.privacy_spent == (0.0, 0.0) and acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("route", ["frame", "chunks", "dict"])
@pytest.mark.parametrize("declared", [5, None, (v for v in "ab")])
def test_levels_that_are_not_a_list_are_a_formula_error_on_every_route(route, declared) -> None:
    # levels={'g': 5} was an InternalFitError (TypeError iterating it) for chunks and a dict of lists
    df = pd.DataFrame({"y": np.arange(40.0) % 5, "g": np.array(["a", "b"])[np.arange(40) % 2]})
    data = {c: list(df[c]) for c in df.columns} if route == "dict" else df
    with pytest.raises(dpstats.errors.FormulaError, match="levels for 'g' must be a list"):
        dpstats.dp_ols("y ~ g", data, 1.0, method="ssp", bounds={"y": (0, 4)}, levels={"g": declared},
                       chunksize=7 if route == "chunks" else None)


@pytest.mark.parametrize("given", [{"n": 5000}, {"rsquared": 0.5}, {"residual_sd": 2.0}, {"inference": False},
                                   {"levels": {"g": ["a", "b"]}}, {"correlation": 0.5}, {"missing": "drop"},
                                   {"rescale": True}, {"spread": {"x": 1.0}}, {"dtypes": {"y": "int64"}},
                                   {"response": "y"}])
def test_plan_by_rates_refuses_an_argument_it_would_ignore(given: dict) -> None:
    """Without bounds, plan() inverts the rates in units of sigma; an argument of the plan with bounds was ignored
    without a word (plan(0.1, 3, 1.0, n=5000) planned as if n had not been given)."""
    name = next(iter(given))
    with pytest.raises(InvalidArgumentError, match=rf"^{name}= only applies to a plan in the coefficients' units"):
        dpstats.plan(0.1, d=3, epsilon=1.0, **given)


def test_plan_by_rates_accepts_the_defaults_written_out() -> None:
    written = dpstats.plan(0.1, d=3, epsilon=1.0, correlation=0, inference=True, missing="raise", rescale="centred")
    pd.testing.assert_frame_equal(written, dpstats.plan(0.1, d=3, epsilon=1.0))


@pytest.mark.parametrize(("keyword", "hint"), [("seed", "random_state="), ("methods", "method="),
                                               ("fit_intercept", "intercept=")])
def test_dp_ols_arrays_names_the_api_s_spelling_of_another_entry_point_s_keyword(keyword: str, hint: str) -> None:
    """The CLI's --seed, compare's methods= and scikit-learn's fit_intercept= reached the method as unknown options
    ("method 'pgd' does not accept seed"), without the name dp_ols_arrays uses."""
    X, y = _data()
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    with pytest.raises(InvalidArgumentError, match=f"^dp_ols_arrays has no argument {keyword}=; write {hint}"):
        dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="ssp", intercept=False, accountant=acct, **{keyword: 0})
    assert acct.spent == (0.0, 0.0) and acct.history == []


@pytest.mark.parametrize(("keyword", "hint"), [("seed", "random_state="), ("methods", "method="),
                                               ("intercept", "the intercept in the formula"),
                                               ("fit_intercept", "the intercept in the formula")])
def test_dp_ols_names_the_api_s_spelling_of_another_entry_point_s_keyword(keyword: str, hint: str) -> None:
    X, y = _data()
    frame = pd.DataFrame({"a": X[:, 0], "y": y})
    with pytest.raises(InvalidArgumentError, match=f"^dp_ols has no argument {keyword}=; write {hint}"):
        dpstats.dp_ols("y ~ a", frame, 1.0, 1e-6, method="ssp", **{keyword: 0})


@pytest.mark.parametrize(("keyword", "hint"), [("x_bounds", r"bounds= \(the inputs' ranges\) and y_bounds="),
                                               ("X_bounds", "bounds="), ("intercept", "fit_intercept="),
                                               ("seed", "random_state="), ("methods", "method=")])
def test_sklearn_names_its_own_parameter_for_another_entry_point_s_keyword(keyword: str, hint: str) -> None:
    """DPLinearRegression(x_bounds=...) was told dp_ols's hint, "write bounds={'column': (lo, hi), ...}, the
    response's range included", which is wrong for the estimator (its target's range is y_bounds=)."""
    X, y = _data()
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    est = DPLinearRegression(method="ssp", epsilon=1.0, bounds=(-1, 1), y_bounds=(-3, 3), accountant=acct,
                             **{keyword: (-1, 1)})
    with pytest.raises(InvalidArgumentError, match=f"^DPLinearRegression has no parameter {keyword}=; write {hint}"):
        est.fit(X, y)
    assert acct.spent == (0.0, 0.0) and acct.history == []


@pytest.mark.parametrize(("method", "options", "message"), [
    ("adassp", {"rho": 2}, "rho must lie in (0, 1), got 2"),
    ("ambssgd", {"standardize": "yes"}, "standardize must be True, False or None, got 'yes'"),
    ("ambssgd", {"trace": -1.0}, "trace must be a positive number, got -1.0"),
    ("robgd", {"covariate_tail": 1e9}, "got 1000000000.0"),
    ("robgd", {"rounds": 0}, "rounds must be a positive integer, got 0"),
    ("robgd", {"step_size": -0.5}, "step_size must be a positive number, got -0.5"),
    ("robgd", {"max_rounds": 1}, "max_rounds must be an integer >= 2, got 1"),
    ("pgd", {"chains": 1}, "(independent final chains), got 1"),
    ("pgd", {"steps": 1}, "or an integer from 2 to 1,000,000, got 1"),
    ("ssp", {"inference": "no"}, "inference must be True or False, got 'no'"),
    ("ssp", {"bootstrap": 5}, "(number of bootstrap replicates), got 5"),
    ("theilsen", {"matchings": 0}, "(the number of matchings per window), got 0"),
    ("tukey", {"prep_share": 2.0}, "prep_share must lie in (0, "),
])
def test_an_option_refusal_states_the_value_given(method: str, options: dict, message: str) -> None:
    """Option refusals said what an option must be but not what was given (a public argument, so the message may
    quote it); nothing is read or spent."""
    X, y = _data()
    frame = pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y})
    acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-5)
    with pytest.raises(dpstats.errors.MethodOptionError, match=re.escape(message)) as info:
        dpstats.dp_ols("y ~ x1 + x2", frame, 1.0, 1e-6, method=method, accountant=acct,
                       bounds={"x1": (-1, 1), "x2": (-1, 1), "y": (-3, 3)}, **options)
    assert "got" in str(info.value) and acct.spent == (0.0, 0.0)


def test_other_public_argument_refusals_state_the_value_given() -> None:
    """The accountant's budget, the table's number format and error_vs_n's sigma: the refusal quotes the value."""
    with pytest.raises(dpstats.errors.InvalidPrivacyParameterError, match="finite epsilon budget, got inf$"):
        dpstats.PrivacyAccountant(float("inf"), 1e-6)
    X, y = _data()
    res = dpstats.dp_ols_arrays(X, y, float("inf"), method="ols", intercept=True)
    with pytest.raises(InvalidArgumentError, match="or a function, got -1$"):
        dpstats.table(res, fmt=-1)
    with pytest.raises(InvalidArgumentError, match=r"one per model, got \['a', 'b'\]$"):
        dpstats.table(res, model_names=["a", "b"])
    pytest.importorskip("matplotlib")
    with pytest.raises(InvalidArgumentError, match="sigma must be positive, got 0.0$"):
        dpstats.plotting.error_vs_n([100, 1000], {"ssp": [0.5, 0.1]}, sigma=0.0)


def test_dp_ols_takes_a_seed_sequence_and_flags_the_fit_seeded() -> None:
    """A numpy SeedSequence was refused ("random_state must be None, a non-negative int seed or a Generator"); it
    now seeds the fit as an int does: the same sequence gives the same coefficients, and the report says seeded."""
    X, y = _data()
    seq = np.random.SeedSequence(3)
    a, b = (dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="ssp", intercept=True, x_bounds=(-1, 1), y_bounds=(-3, 3),
                                  random_state=seq) for _ in range(2))
    pd.testing.assert_series_equal(a.params, b.params)
    assert a.privacy.seeded
