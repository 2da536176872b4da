"""Input handling found by a real-data sweep: every bad input gets a typed dpstats error that says what to fix,
decided from public facts (schema, declared bounds and levels), and a refused fit spends no budget.

All fits use fixed seeds; the assertions are on error types, messages, shapes and exact equalities of
deterministic fits, so the false-failure rate is 0.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import patsy
import pytest

import dpstats
from dpstats.bounds import Interval
from dpstats.errors import (
    DataTypeError,
    DPStatsError,
    ExtrapolationWarning,
    FormulaError,
    InvalidArgumentError,
    InvalidBoundsError,
    InvalidPrivacyParameterError,
    MissingBoundsError,
    MissingDataError,
    NonFiniteValueError,
    SingularDesignError,
    TransformDomainError,
    UnknownColumnError,
    UnknownMethodError,
)
from dpstats.formula import build_design
from dpstats.planning import plan
from dpstats.rows.sources import CSVSource

ENV = patsy.EvalEnvironment.capture()
N = 400


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"age": rng.integers(18, 90, N), "income": rng.uniform(1, 100, N),
                       "smoker": rng.random(N) < 0.3, "g": rng.choice([1, 2, 3], N)})
    df["y"] = 0.05 * df.age + 0.5 * df.smoker + rng.normal(size=N)
    return df


def accountant() -> dpstats.PrivacyAccountant:
    return dpstats.PrivacyAccountant(epsilon=10.0, delta=1e-4)


def refused(exc_type: type[Exception], *args, match: str, **kwargs) -> tuple[Exception, dpstats.PrivacyAccountant]:
    """Run dp_ols with a fresh accountant, expect ``exc_type`` with a message matching ``match``, and check that
    nothing was spent."""
    acct = accountant()
    with pytest.raises(exc_type, match=match) as info:
        dpstats.dp_ols(*args, accountant=acct, **kwargs)
    assert isinstance(info.value, DPStatsError)
    assert acct.spent == (0.0, 0.0) and not acct.history
    return info.value, acct


BOUNDS = {"age": (0, 120), "y": (-20, 30)}


# -- a. pandas extension dtypes in the prepare step ----------------------------------------------------------------

def test_nullable_boolean_is_a_declared_two_level_factor_like_bool(people):
    ext = people.assign(smoker=pd.array(people.smoker, dtype="boolean"))
    fits = [dpstats.dp_ols("y ~ smoker + age", d, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=3)
            for d in (people, ext)]
    assert list(fits[1].params.index) == ["Intercept", "smoker[T.True]", "age"]
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())


def test_extension_dtypes_give_the_numpy_design(people):
    rng = np.random.default_rng(1)
    base = people.assign(name=rng.choice(["a", "b"], N), w=people.income.round(2))
    ext = base.assign(age=base.age.astype("Int64"), w=base.w.astype("Float64"), name=base.name.astype("string"),
                      smoker=base.smoker.astype("boolean"), y=base.y.astype("Float64"))
    formula = "y ~ age + w + smoker + C(name, levels=['a', 'b'])"
    d_np, d_ext = (build_design(formula, d, eval_env=ENV, bounds={"age": (0, 120)}) for d in (base, ext))
    assert d_ext.column_names == d_np.column_names
    np.testing.assert_array_equal(d_ext.X, d_np.X)
    np.testing.assert_array_equal(d_ext.y, d_np.y)
    assert d_ext.column_intervals[d_ext.column_names.index("age")] == Interval(0, 120)


def test_pd_na_is_missing_honouring_missing_raise_and_drop(people):
    smoker = pd.array(people.smoker, dtype="boolean")
    smoker[[3, 7]] = pd.NA
    age = people.age.astype("Int64")
    age[11] = pd.NA
    data = people.assign(smoker=smoker, age=age)
    # not private: refused (and run without an accountant, which
    with pytest.raises(MissingDataError,
                       match=r"missing values in smoker, age\. Impute missing values with a public rule") as info:
        dpstats.dp_ols("y ~ smoker + age", data, np.inf, method="ols")  # refuses a fit that is not private)
    err = info.value
    assert "smoker" in str(err) and "age" in str(err) and "missing='drop'" in str(err)
    screened = dpstats.dp_ols("y ~ smoker + age", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    assert screened.privacy.steps[0].name.startswith("missing-value screen")  # private: a charged, noisy count
    d = build_design("y ~ smoker + age", data, eval_env=ENV, bounds=BOUNDS, missing="drop")
    assert d.n == N - 3
    res = dpstats.dp_ols("y ~ smoker + age", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, missing="drop",
                         random_state=0)
    assert res.nobs == N  # a private fit keeps n public: the incomplete rows are public null rows


def test_boolean_with_na_read_in_chunks_matches_in_memory(people):
    data = people.assign(smoker=pd.array(people.smoker, dtype="boolean"))
    data.loc[5, "smoker"] = pd.NA
    kw = dict(method="ssp", bounds=BOUNDS, missing="drop", random_state=4)
    whole = dpstats.dp_ols("y ~ smoker + age", data, 1.0, 1e-6, **kw)
    chunked = dpstats.dp_ols("y ~ smoker + age", data, 1.0, 1e-6, chunksize=150, **kw)
    assert whole.nobs == chunked.nobs == N
    np.testing.assert_allclose(chunked.params.to_numpy(), whole.params.to_numpy(), rtol=1e-9, atol=1e-9)


# -- b, c. predict on new data ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def age_fit(people):
    return dpstats.dp_ols("y ~ age", people, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)


def test_predict_accepts_nullable_integers(age_fit):
    plain = age_fit.predict(pd.DataFrame({"age": [30, 40]}))
    nullable = age_fit.predict(pd.DataFrame({"age": pd.array([30, 40], dtype="Int64")}))
    np.testing.assert_array_equal(plain.to_numpy(), nullable.to_numpy())


@pytest.mark.parametrize("newdata", [pd.DataFrame({"age": pd.array([30, pd.NA], dtype="Int64")}),
                                     pd.DataFrame({"age": [30.0, np.nan]})], ids=["Int64 NA", "float NaN"])
def test_predict_missing_values_name_the_variable(age_fit, newdata):
    with pytest.raises(MissingDataError,
                       match=r"missing values \(NaN, None or pd\.NA\) in age; .*fill them in") as info:
        age_fit.predict(newdata)
    msg = str(info.value)
    assert "age" in msg and "factor" not in msg and "drop those rows" in msg


@pytest.mark.parametrize("age", [np.inf, -np.inf])
def test_predict_infinite_values_are_refused_not_predicted(age_fit, age):
    # the fit refuses non-finite values; a prediction of +-inf is no prediction either
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)  # inf also lies outside the declared bounds
        with pytest.raises(NonFiniteValueError,
                           match="design column age an infinite value on some rows; .*replace them") as info:
            age_fit.predict(pd.DataFrame({"age": [30.0, age]}))
    msg = str(info.value)
    assert "age" in msg and "inf" not in msg.replace("infinite", "") and "before predict()" in msg


def test_predict_a_transform_that_is_infinite_on_new_rows_is_refused(people):
    res = dpstats.dp_ols("y ~ np.log(age)", people.assign(age=people.age + 1), 1.0, 1e-6, method="ssp",
                         bounds={**BOUNDS, "age": (1, 121)}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)  # age 0 lies below the declared 1
        with pytest.raises(NonFiniteValueError, match=r"np\.log\(age\)"):
            res.predict(pd.DataFrame({"age": [30.0, 0.0]}))


def test_predict_a_transform_undefined_on_new_rows_is_refused_as_the_infinite_one_is(people):
    # np.log of a negative new value is NaN, which patsy reported as "missing values" and dpstats as a
    # MissingDataError "a transform in the model produced missing values", where np.log(0) gives the
    # NonFiniteValueError of an infinite value: one refusal for both, naming the term and why (session 54)
    res = dpstats.dp_ols("y ~ np.log(age)", people.assign(age=people.age + 1), 1.0, 1e-6, method="ssp",
                         bounds={**BOUNDS, "age": (1, 121)}, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExtrapolationWarning)  # age -5 lies below the declared 1
        with pytest.raises(NonFiniteValueError, match=r"the term 'np\.log\(age\)' an undefined value \(NaN\)"
                           ) as info:
            res.predict(pd.DataFrame({"age": [30.0, -5.0]}))
    assert "-5" not in str(info.value) and "before predict()" in str(info.value)


def test_predict_refuses_repeated_column_names_as_the_fit_does(age_fit):
    newdata = pd.DataFrame([[30.0, 40.0]], columns=["age", "age"])
    with pytest.raises(FormulaError, match="more than one column named 'age'"):
        age_fit.predict(newdata)


def test_predict_numbers_given_as_strings_is_a_type_error(age_fit):
    with pytest.raises(DataTypeError,
                       match=r"newdata gives 'age' \(dtype str\) as non-numbers, .*Convert first") as info:
        age_fit.predict(pd.DataFrame({"age": ["30"]}))
    assert "'age'" in str(info.value) and "pd.to_numeric" in str(info.value)


# -- d, e. design-column name clashes ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def clash() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    df = pd.DataFrame({"Intercept": rng.uniform(0, 1, N), "g": rng.choice([1, 2, 3], N)})
    df["y"] = df.Intercept + rng.normal(size=N)
    return df


def test_data_column_named_intercept_is_refused_with_advice(clash):
    err, _ = refused(FormulaError, "y ~ Intercept", clash, 1.0, 1e-6, method="ssp",
                     bounds={"Intercept": (0, 1), "y": (-5, 6)}, match=r"Q\('Intercept'\)")
    assert "'Intercept'" in str(err) and "Rename" in str(err) and "Q('Intercept')" in str(err)


def test_intercept_column_works_quoted_or_without_intercept(clash):
    kw = dict(method="ssp", bounds={"Intercept": (0, 1), "y": (-5, 6)}, random_state=0)
    quoted = dpstats.dp_ols("y ~ Q('Intercept')", clash, 1.0, 1e-6, **kw)
    assert list(quoted.params.index) == ["Intercept", "Q('Intercept')"]
    bare = dpstats.dp_ols("y ~ Intercept - 1", clash, 1.0, 1e-6, **kw)
    assert list(bare.params.index) == ["Intercept"]


def test_sklearn_wrapper_fits_a_dataframe_with_an_intercept_column(clash):
    pytest.importorskip("sklearn")
    from dpstats.sklearn import DPLinearRegression

    est = DPLinearRegression(method="ssp", bounds={"Intercept": (0, 1), "g": (1, 3)}, y_bounds=(-5, 6),
                             random_state=0).fit(clash[["Intercept", "g"]], clash.y)
    assert est.coef_.shape == (2,) and list(est.params_.index) == ["Intercept", "Q('Intercept')", "g"]
    assert est.intercept_ == est.params_["Intercept"] and est.coef_[0] == est.params_["Q('Intercept')"]


def test_clashes_are_refused_before_reading_chunks(clash):
    for formula in ("y ~ Intercept", "y ~ C(g, levels=[1, 2, 2])"):
        refused(FormulaError, formula, clash, 1.0, 1e-6, method="ssp", chunksize=100,
                bounds={"Intercept": (0, 1), "y": (-5, 6)}, match=r"Q\('Intercept'\)|more than once")


def test_duplicate_declared_levels_are_refused_naming_the_level(clash):
    err, _ = refused(FormulaError, "y ~ C(g, levels=[1, 2, 3, 3])", clash, 1.0, 1e-6, method="tukey",
                     match="list each level once")
    assert "3" in str(err) and "more than once" in str(err) and "list each level once" in str(err)


def test_duplicate_levels_not_written_as_literal_are_still_typed(clash):
    # levels read from the caller's namespace are no longer evaluated: the formula language wants a literal list
    lv = [1, 2, 3, 3]  # noqa: F841 - would be read by the formula through the eval environment
    with pytest.warns(DeprecationWarning, match="eval_env"):
        err, _ = refused(FormulaError, "y ~ C(g, levels=lv)", clash, 1.0, 1e-6, method="tukey",
                         eval_env=patsy.EvalEnvironment.capture(), match="literal list")
    assert isinstance(err, dpstats.errors.DisallowedExpressionError) and "literal list" in str(err)
    err, _ = refused(FormulaError, "y ~ C(g)", clash, 1.0, 1e-6, method="tukey", levels={"g": [1, 2, 3, 3]},
                     match="distinct")
    assert "distinct" in str(err)


# -- f, g. bounds on a transformed response; what MissingBoundsError asks for ---------------------------------------

@pytest.fixture(scope="module")
def schools() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"NABOVE": rng.integers(4, 9000, N), "NBELOW": rng.integers(14, 9000, N),
                       "LOWINC": rng.uniform(0, 95, N)})
    return df


RESPONSE = "I(NABOVE / (NABOVE + NBELOW))"


def test_bounds_keyed_by_the_response_code_are_accepted(schools):
    formula = f"{RESPONSE} ~ LOWINC"
    bounds = {RESPONSE: (0, 1), "LOWINC": (0, 100)}
    d = build_design(formula, schools, eval_env=ENV, bounds=bounds)
    assert d.response_interval == Interval(0, 1) and d.missing_bounds == []
    acct = accountant()
    res = dpstats.dp_ols(formula, schools, 1.0, 1e-6, method="ssp", bounds=bounds, accountant=acct, random_state=0)
    assert res.nobs == N and acct.spent[0] > 0


def test_missing_response_bound_advises_its_code(schools):
    # NABOVE + NBELOW reaches 0 inside these bounds: the response is undefined there, refused from the bounds alone
    bounds = {"NABOVE": (0, 10000), "NBELOW": (0, 10000), "LOWINC": (0, 100)}
    err, _ = refused(TransformDomainError, f"{RESPONSE} ~ LOWINC", schools, 1.0, 1e-6, method="ssp", bounds=bounds,
                     match="contains 0")
    assert RESPONSE in str(err) and "contains 0" in str(err)
    bounds = {"NABOVE": (0, 10000), "NBELOW": (1, 10000), "LOWINC": (0, 100)}
    d = build_design(f"{RESPONSE} ~ LOWINC", schools, bounds=bounds)
    assert d.response_interval == Interval(0, 10000) and d.missing_bounds == []  # interval arithmetic: conservative
    unbounded, _ = refused(MissingBoundsError, f"{RESPONSE} ~ LOWINC", schools, 1.0, 1e-6, method="ssp",
                           bounds={"LOWINC": (0, 100)}, match="variables NABOVE, NBELOW")
    assert "variables NABOVE, NBELOW" in str(unbounded) and f"'{RESPONSE}': (lo, hi)" in str(unbounded)


def test_misspelt_response_key_lists_the_response(schools):
    err, _ = refused(InvalidBoundsError, f"{RESPONSE} ~ LOWINC", schools, 1.0, 1e-6, method="ssp",
                     bounds={"I(NABOVE/NBELOW)": (0, 1), "LOWINC": (0, 100)},
                     match=re.escape(f"the response is '{RESPONSE}'"))
    assert f"the response is '{RESPONSE}'" in str(err)


def test_comparison_response_is_refused_with_its_numeric_rewrite(people):
    # patsy codes a True/False response as two indicator columns; the refusal is decided from the formula
    err, _ = refused(DataTypeError, "I(age > 50) ~ income", people, 1.0, 1e-6, method="ssp",
                     bounds={"age": (0, 120), "income": (0, 100)}, match=r"'I\(age > 50\)' is a comparison")
    assert "'I(age > 50)' is a comparison" in str(err) and "I(1.0 * (age > 50))" in str(err)
    res = dpstats.dp_ols("I(1.0 * (age > 50)) ~ income", people, 1.0, 1e-6, method="ssp",
                         bounds={"age": (0, 120), "income": (0, 100)}, random_state=0)
    assert list(res.params.index) == ["Intercept", "income"] and np.isfinite(res.params).all()


def test_missing_bounds_ask_for_raw_variables_first(people):
    formula = "y ~ age + I(age ** 2) + np.log(income)"
    d = build_design(formula, people, eval_env=ENV, bounds={"y": (-20, 30)})
    assert d.missing_bounds == ["age", "I(age ** 2)", "np.log(income)"]
    assert d.bounds_to_declare() == ["age", "income"]
    err, _ = refused(MissingBoundsError, formula, people, 1.0, 1e-6, method="ssp", bounds={"y": (-20, 30)},
                     match=r"Declare bounds on the variables age, income \(the ranges of I\(age \*\* 2\)")
    msg = str(err)
    assert "Declare bounds on the variables age, income (the ranges of I(age ** 2), np.log(income)" in msg
    assert "No range can be derived" not in msg


def test_underivable_design_columns_are_listed_after_the_variables(people):
    formula = "y ~ I(smoker * age) + I(smoker * income) + np.log(income)"
    d = build_design(formula, people, eval_env=ENV, bounds={"y": (-20, 30)})
    assert d.bound_variables == ["income"]
    assert [k for k, _ in d.underivable_bounds] == ["I(smoker * age)", "I(smoker * income)"]
    assert d.bounds_to_declare() == ["income", "I(smoker * age)", "I(smoker * income)"]
    with pytest.raises(MissingBoundsError,
                       match=r"Declare bounds on the variables income \(the ranges of np\.log\(income\)") as info:
        d.data_bounds()
    msg = str(info.value)
    assert msg.index("variables income") < msg.index("I(smoker * age) (smoker is boolean, a factor")
    assert "which carries no declared range" in msg
    declared = {"y": (-20, 30), "income": (1, 100), "I(smoker * age)": (0, 120), "I(smoker * income)": (0, 100)}
    assert build_design(formula, people, eval_env=ENV, bounds=declared).missing_bounds == []


def test_declared_bounds_that_break_a_transform_are_refused_before_the_data(people):
    # log is undefined at 0, inside the declared range: refused from the bounds alone (it used to depend on the data)
    with pytest.raises(TransformDomainError, match=r"log needs a lower bound > 0.0"):
        build_design("y ~ np.log(income)", people, eval_env=ENV, bounds={"y": (-20, 30), "income": (0, 100)})


def test_overflowing_derived_range_is_refused_not_a_crash(people):
    with pytest.raises(TransformDomainError, match="overflows"):
        build_design("y ~ np.exp(income)", people, eval_env=ENV, bounds={"y": (-20, 30), "income": (0, 1000)})


def test_an_interaction_whose_product_overflows_is_refused_from_the_bounds(people):
    """Each factor is finite on the bounds but their product is not: refused with a typed error that spends
    nothing (it escaped as an internal error before, from the interval arithmetic)."""
    err, _ = refused(TransformDomainError, "y ~ I(age * 1e200):I(income * 1e200)", people, 1.0, 1e-6, method="pgd",
                     bounds={"y": (-20, 30), "age": (18, 90), "income": (0, 100)}, match="overflows a float")
    assert "overflows a float" in str(err)


# -- h. degenerate bounds ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pair,word", [((50, 50), "single point"), ((5, 1), "empty"), ((0, np.inf), "finite"),
                                       ("12", "pair"), ((0, 5e-324), "narrower"), ((1e-200, 2e-200), "narrower")])
def test_degenerate_bounds_are_refused(people, pair, word):
    err, _ = refused(InvalidBoundsError, "y ~ age", people, 1.0, 1e-6, method="ssp",
                     bounds={"age": pair, "y": (-20, 30)}, match=r"bounds\['age'\]")
    assert "bounds['age']" in str(err) and word in str(err)


def test_degenerate_bound_on_a_design_column_or_response_is_refused(people):
    refused(InvalidBoundsError, "y ~ np.log(income)", people, 1.0, 1e-6, method="ssp",
            bounds={"np.log(income)": (2, 2), "y": (-20, 30)},
            match=r"bounds\['np\.log\(income\)'\] = \(2, 2\) is a single point: lo must be strictly below hi")
    refused(InvalidBoundsError, "y ~ age", people, 1.0, 1e-6, method="ssp", bounds={"age": (0, 120), "y": (1, 1)},
            match=r"bounds\['y'\] = \(1, 1\) is a single point: lo must be strictly below hi")


@pytest.mark.parametrize("method", ["auto", "pgd", "adassp", "ssp", "dpsgd"])
@pytest.mark.parametrize("formula,bounds,named", [
    ("y ~ age", {"age": (12, 50), "y": (-1e308, 1e308)}, "bounds['y']"),
    ("y ~ age", {"age": (-1e300, 1e300), "y": (-20, 30)}, "bounds['age']"),
    ("y ~ I(age ** 3)", {"age": (0, 1e40), "y": (-20, 30)}, "design column 'I(age ** 3)'"),
    ("y ~ age:income", {"age": (0, 1e60), "income": (0, 1e60), "y": (-20, 30)}, "design column 'age:income'")])
def test_bounds_beyond_double_precision_are_refused_before_spending(people, method, formula, bounds, named):
    # they used to overflow part-way (InternalFitError after spending, e.g. pgd all of epsilon=1)
    err, _ = refused(InvalidBoundsError, formula, people, 1.0, 1e-6, method=method, bounds=bounds,
                     match=re.escape(named))
    assert named in str(err) and "1e+100" in str(err) and "public constant" in str(err)


def test_bounds_of_large_but_representable_magnitude_still_fit(people):
    res = dpstats.dp_ols("y ~ age", people, 1.0, 1e-6, method="pgd", bounds={"age": (0, 1e100), "y": (-20, 30)},
                         random_state=0)
    assert np.isfinite(res.params).all()


def test_array_bounds_beyond_double_precision_are_refused():
    X, y = np.ones((100, 1)), np.zeros(100)
    with pytest.raises(InvalidBoundsError, match=r"x_bounds = \(0, 1e\+200\) reaches beyond"):
        dpstats.dp_ols_arrays(X, y, 1.0, intercept=False, x_bounds=(0, 1e200), y_bounds=(0, 1))


@pytest.mark.parametrize(("x_bounds", "y_bounds", "message"), [
    ((0, 1), "09", r"y_bounds must be a pair \(lo, hi\) of numbers"),  # a string is not two digits
    ((0, 1), (2, 2), r"y_bounds = \(2, 2\) is a single point"),
    ((1, 0), (0, 1), r"x_bounds = \(1, 0\) is empty"),
])
def test_array_bounds_follow_the_formula_api_rules(x_bounds, y_bounds, message):
    X, y = np.ones((100, 1)), np.zeros(100)
    with pytest.raises(InvalidBoundsError, match=message):
        dpstats.dp_ols_arrays(X, y, 1.0, intercept=False, x_bounds=x_bounds, y_bounds=y_bounds)


@pytest.mark.parametrize("dtype", [object, "string"])
def test_bounds_on_numbers_stored_as_text_say_how_to_convert(people, dtype):
    text = people.assign(ages=people.age.astype(str).astype(dtype))
    err, _ = refused(InvalidBoundsError, "y ~ ages", text, 1.0, 1e-6, method="ssp",
                     bounds={"ages": (0, 120), "y": (-20, 30)},
                     match="bounds were given for 'ages', which is not numeric")
    msg = str(err)
    assert "bounds were given for 'ages', which is not numeric" in msg
    assert "df['ages'] = pd.to_numeric(df['ages'])" in msg
    assert "drop its bounds and declare its levels" in msg
    assert "no value was read" in msg


def test_bounds_on_an_integer_column_used_as_a_factor_are_refused_as_such(people):
    bounds = {**BOUNDS, "g": (1, 3)}
    for formula in ("y ~ age + C(g)", "y ~ age + g"):
        err, _ = refused(InvalidBoundsError, formula, people, 1.0, 1e-6, method="ssp", bounds=bounds,
                         levels={"g": [1, 2, 3]},
                         match=r"a numeric column \(dtype int64\) that levels= makes a factor in the formula")
        msg = str(err)
        assert "not numeric" not in msg
        assert "a numeric column (dtype int64) that levels= makes a factor in the formula" in msg
        assert "bounds for it are refused" in msg and "drop levels['g'] to use it as a number" in msg
    cat = people.assign(g=people.g.astype("category"))
    err, _ = refused(InvalidBoundsError, "y ~ age + g", cat, 1.0, 1e-6, method="ssp", bounds=bounds,
                     match=r"which is a factor \(categorical or with levels=\)")
    assert "not numeric" not in str(err) and "which is a factor (categorical or with levels=)" in str(err)


@pytest.mark.parametrize("formula", ["y ~ age + C(g, levels=[1, 2, 3])",
                                     "y ~ age + C(g, Treatment(3), levels=[1, 2, 3]) + C(g, levels=[1, 2, 3]):age",
                                     "y ~ age + C(Q('g'), levels=[1, 2, 3])"])
def test_bounds_on_a_variable_used_only_as_a_factor_in_the_formula_are_refused(people, formula):
    """C(g, levels=[...]) makes g a factor whose columns are 0/1 indicators: bounds on g could only clip its values
    onto other levels, so they are refused (as with levels=), naming the factor, before anything is spent."""
    err, _ = refused(InvalidBoundsError, formula, people, 1.0, 1e-6, method="ssp", bounds={**BOUNDS, "g": (1, 3)},
                     match=r"bounds were given for 'g', which the formula uses only as a factor \(C\(")
    msg = str(err)
    assert "bounds were given for 'g', which the formula uses only as a factor (C(" in msg
    assert "have no effect and are refused" in msg and "Drop bounds['g'] to use it as a factor" in msg
    assert "no value was read and no budget was spent" in msg
    res = dpstats.dp_ols(formula, people, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    assert any("[T.2]" in c for c in res.params.index)  # without the bounds it fits


def test_bounds_on_a_variable_used_as_a_factor_and_as_a_number_are_used_without_a_warning(people):
    """Where g also enters as a number its bounds matter (they bound age:g): no refusal, no warning. g beside its
    own full set of dummies is dependent by construction (g takes only its declared levels): refused by name."""
    bounds = {**BOUNDS, "g": (1, 3)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = dpstats.dp_ols("y ~ C(g, levels=[1, 2, 3]) + age:g", people, 1.0, 1e-6, method="ssp", bounds=bounds,
                             random_state=0)
    assert "age:g" in res.params.index
    err, _ = refused(SingularDesignError, "y ~ age + C(g, levels=[1, 2, 3]) + g", people, 1.0, 1e-6, method="ssp",
                     bounds=bounds, match=r"'C\(g, levels=\[1, 2, 3\]\)\[T\.2\]'")
    assert "'C(g, levels=[1, 2, 3])[T.2]'" in str(err) and "'g'" in str(err)


def test_an_integer_column_made_a_factor_by_levels_and_used_as_a_number_says_to_drop_its_levels(people):
    err, _ = refused(DataTypeError, "y ~ I(age * g)", people, 1.0, 1e-6, method="ssp",
                     bounds={**BOUNDS, "I(age * g)": (0, 400)}, levels={"g": [1, 2, 3]},
                     match="uses the column 'g' as a number, but it is a factor")
    msg = str(err)
    assert "uses the column 'g' as a number, but it is a factor" in msg and "drop levels['g']" in msg
    assert "not numeric" not in msg and "no value was read" in msg


@pytest.mark.parametrize("name,suggestion", [("OLS", "'ols'"), ("theilsne", "'theilsen'"), ("Auto", "'auto'"),
                                             ("nope", None)])
def test_an_unknown_method_name_suggests_the_close_one(people, name, suggestion):
    with pytest.raises(UnknownMethodError, match=r"unknown method '\w+'; (did you mean '\w+'; )?available: ") as info:
        dpstats.dp_ols("y ~ age", people, 1.0, 1e-6, method=name, bounds=BOUNDS)
    msg = str(info.value)
    assert "available: " in msg
    assert (f"did you mean {suggestion}" in msg) if suggestion else ("did you mean" not in msg)


# -- i. plan's arguments ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method, pattern", [
    ("nope", r"unknown method 'nope'; available: adassp, "),
    ("auto", r"plan needs a named method: 'auto' is chosen at fit time; pass method=None to see every method"),
])
def test_plan_refuses_unknown_methods(method, pattern):
    with pytest.raises(UnknownMethodError, match=pattern):
        plan(0.1, 10, 1.0, 1e-6, method=method)


@pytest.mark.parametrize("kwargs,error,word", [
    (dict(target=0), InvalidArgumentError, "target"), (dict(target=float("nan")), InvalidArgumentError, "target"),
    (dict(d=0), InvalidArgumentError, "d must"), (dict(d=2.5), InvalidArgumentError, "d must"),
    (dict(sparsity=10), InvalidArgumentError, "sparsity"), (dict(epsilon=float("inf")), InvalidPrivacyParameterError,
                                                            "epsilon"),
    (dict(delta=1.0), InvalidPrivacyParameterError, "delta")])
def test_plan_argument_errors_are_typed_value_errors(kwargs, error, word):
    args = dict(target=0.1, d=10, epsilon=1.0, delta=1e-6) | kwargs
    with pytest.raises(error, match=word) as info:
        plan(**args)
    assert isinstance(info.value, ValueError) and isinstance(info.value, DPStatsError)


def test_plan_still_accepts_numpy_scalars_and_registered_methods():
    t = plan(np.float64(0.1), np.int64(10), np.float64(1.0), 1e-6, method="ssp")
    assert t["method"].iloc[-1] == "ssp"


# -- j. duplicate column names (public schema) ----------------------------------------------------------------------

def _duplicated(people: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([people, people[["age", "income"]]], axis=1)


def test_duplicate_column_names_are_refused_naming_them(people):
    err, _ = refused(FormulaError, "y ~ age", _duplicated(people), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     match="more than one column named 'age', 'income'")
    msg = str(err)
    assert "more than one column named 'age', 'income'" in msg and "Rename" in msg and "no budget" in msg
    assert not isinstance(err, dpstats.errors.InternalFitError)


def test_duplicate_column_names_are_refused_even_when_unused(people):
    # the formula could not say which column it means ('y ~ .' would use both), so any duplicate is refused
    data = pd.concat([people, people[["g"]]], axis=1)
    for missing in ("raise", "drop"):
        err, _ = refused(FormulaError, "y ~ age", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, missing=missing,
                         match="more than one column named 'g'")
        assert "more than one column named 'g'" in str(err)


def test_duplicate_column_names_are_refused_before_reading_chunks(people, tmp_path):
    data = _duplicated(people)
    err, _ = refused(FormulaError, "y ~ age", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, chunksize=100,
                     match="more than one column named 'age', 'income'")
    assert "more than one column named 'age', 'income'" in str(err)
    dd = pytest.importorskip("dask.dataframe")
    err, _ = refused(FormulaError, "y ~ age", dd.from_pandas(data, npartitions=2), 1.0, 1e-6, method="ssp",
                     bounds=BOUNDS, match="more than one column named 'age', 'income'")
    assert "more than one column named 'age', 'income'" in str(err)
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(data.iloc[:, j]) for j in range(data.shape[1])],
                                        names=[str(c) for c in data.columns]), path)
    err, _ = refused(FormulaError, "y ~ age", str(path), 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     match="more than one column named 'age', 'income'")
    assert "more than one column named 'age', 'income'" in str(err)


# -- k. bounds= keys: the rule the message states -------------------------------------------------------------------

def test_misspelt_bounds_key_states_the_rule_and_suggests_the_column(people):
    err, _ = refused(InvalidBoundsError, "y ~ age", people, 1.0, 1e-6, method="ssp",
                     bounds={**BOUNDS, "incom": (1, 100)},
                     match="'incom', which is not a column of the data, a design column or the response")
    msg = str(err)
    assert "'incom', which is not a column of the data, a design column or the response" in msg
    assert "Did you mean 'income'?" in msg
    assert "Columns of the data: age, g, income, smoker, y." in msg
    assert "Bounds for a column of the data that the formula does not use are accepted and ignored" in msg
    assert "neither" not in msg


def test_bounds_for_a_column_the_formula_does_not_use_are_ignored(people):
    kw = dict(method="ssp", random_state=0)
    plain = dpstats.dp_ols("y ~ age", people, 1.0, 1e-6, bounds=BOUNDS, **kw)
    extra = dpstats.dp_ols("y ~ age", people, 1.0, 1e-6, bounds={**BOUNDS, "income": (1, 100)}, **kw)
    np.testing.assert_array_equal(plain.params.to_numpy(), extra.params.to_numpy())


# -- l. levels= must be a list --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,got", [("123", "a string"), (b"12", "a string"), ({1, 2, 3}, "a set"),
                                       (3, "a value of type int"), (np.array([[1, 2, 3]]), "a 2-dimensional array")])
def test_levels_that_are_not_a_list_are_refused_up_front(people, value, got):
    err, _ = refused(FormulaError, "y ~ C(g)", people, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     levels={"g": value}, match=r"levels for 'g' must be a list of the levels, e\.g\. \[0, 1\]")
    assert str(err).startswith(f"levels for 'g' must be a list of the levels, e.g. [0, 1]; got {got}")
    assert "outside" not in str(err)  # it used to blame the data


@pytest.mark.parametrize("value", [(1, 2, 3), np.array([1, 2, 3]), pd.Index([1, 2, 3]), range(1, 4)])
def test_levels_as_any_ordered_sequence_fit_like_a_list(people, value):
    kw = dict(method="ssp", bounds=BOUNDS, random_state=0)
    as_list = dpstats.dp_ols("y ~ C(g)", people, 1.0, 1e-6, levels={"g": [1, 2, 3]}, **kw)
    other = dpstats.dp_ols("y ~ C(g)", people, 1.0, 1e-6, levels={"g": value}, **kw)
    np.testing.assert_array_equal(as_list.params.to_numpy(), other.params.to_numpy())


def test_levels_written_as_a_string_in_the_formula_are_refused(people):
    err, _ = refused(dpstats.errors.DisallowedExpressionError, "y ~ C(g, levels='123')", people, 1.0, 1e-6,
                     method="ssp", bounds=BOUNDS,
                     match=r"levels must be a list of the levels, e\.g\. levels=\['a', 'b'\]; got a string")
    assert "levels must be a list of the levels, e.g. levels=['a', 'b']; got a string" in str(err)


@pytest.mark.parametrize("missing", ["raise", "drop"])
@pytest.mark.parametrize("term, levels", [("C(g)", {"g": ["1", "2", "3"]}), ("C(g, levels=['1', '2', '3'])", None)])
def test_text_levels_for_a_numeric_column_are_refused_before_reading(people, missing, term, levels):
    # text levels for an int column, by levels= or in the formula: with missing='drop' the fill of the public null
    # row met the int column and the fit failed with an InternalFitError that said nothing about the cause
    data = people.assign(income=people.income.where(people.index != 5))
    err, _ = refused(FormulaError, f"y ~ income + {term}", data, 1.0, 1e-6, method="ssp", missing=missing,
                     bounds={**BOUNDS, "income": (1, 100)}, levels=levels, match="declare them as numbers")
    assert str(err).startswith("levels for 'g' are text ('1', '2', '3') but the column's dtype is int64")
    assert "declare them as numbers" in str(err) and "Nothing was read or spent" in str(err)


@pytest.mark.parametrize("missing_level", [None, np.nan, pd.NA])
def test_declared_levels_with_a_missing_value_are_refused_before_reading(people, missing_level):
    # levels={"g": [1, 2, 3, None]} reached patsy, whose ValueError became an InternalFitError that said nothing
    # about the cause
    err, _ = refused(FormulaError, "y ~ age + C(g)", people, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     levels={"g": [1, 2, 3, missing_level]}, match="missing='drop'")
    assert str(err).startswith("levels for 'g' include a missing value (None, NaN, pd.NA or NaT), which is not a level")
    assert "missing='drop'" in str(err) and "Nothing was read or spent" in str(err)


@pytest.mark.parametrize("term, levels, ref", [
    ("C(g, Treatment(4))", {"g": [1, 2, 3]}, "4"),
    ("C(s, Treatment('Yes'))", {"s": ["no", "yes"]}, "'Yes'"),
    ("C(s, levels=['no', 'yes'], contrast=Treatment(reference='YES'))", None, "'YES'"),
])
def test_a_treatment_reference_that_is_not_a_level_is_named_before_reading(people, term, levels, ref):
    # patsy's error was withheld (it may quote data values) behind "Check that every variable has the type the
    # formula uses it as", which said nothing about the misspelt reference
    data = people.assign(s=np.where(people.smoker, "yes", "no"))
    err, _ = refused(FormulaError, f"y ~ age + {term}", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, levels=levels,
                     match="as its reference level, which is not a level of")
    assert f"takes {ref} as its reference level, which is not a level of" in str(err)
    assert "Nothing was read or spent" in str(err)


def test_a_treatment_reference_by_level_or_position_still_fits(people):
    fits = [dpstats.dp_ols(f"y ~ age + C(g, Treatment({ref}))", people, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                           levels={"g": [1, 2, 3]}, random_state=0) for ref in ("3", "-1", "2")]
    np.testing.assert_array_equal(fits[0].params.to_numpy(), fits[1].params.to_numpy())  # level 3 = position -1
    assert [c for c in fits[2].params.index if "T." in c] == ["C(g, Treatment(2))[T.1]", "C(g, Treatment(2))[T.3]"]
    cats = people.assign(s=pd.Categorical(np.where(people.smoker, "yes", "no"), categories=["no", "yes"]))
    err, _ = refused(FormulaError, "y ~ age + C(s, Treatment('Yes'))", cats, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     match=r"\(its declared levels: 'no', 'yes'\)")
    assert "(its declared levels: 'no', 'yes')" in str(err)


def test_undeclared_levels_suggest_a_formula_that_runs_for_a_name_with_a_space(people):
    data = people.rename(columns={"g": "the group"}).assign(**{"the group": lambda d: d["the group"].astype(str)})
    err, _ = refused(dpstats.errors.UndeclaredLevelsError, 'y ~ age + C(Q("the group"))', data, 1.0, 1e-6,
                     method="ssp", bounds=BOUNDS,
                     match=r"write C\(Q\('the group'\), levels=\['level1', 'level2', \.\.\.\]\) in the formula")
    assert "write C(Q('the group'), levels=['level1', 'level2', ...]) in the formula" in str(err)
    assert "pass levels={'the group': [...]}" in str(err)
    suggested = "y ~ age + C(Q('the group'), levels=['1', '2', '3'])"
    res = dpstats.dp_ols(suggested, data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    assert len(res.params) == 4


def test_undeclared_levels_of_a_date_column_say_how_to_use_it_as_a_number(people):
    data = people.assign(day=pd.Timestamp("2020-01-01") + pd.to_timedelta(people.index % 30, unit="D"))
    err, _ = refused(dpstats.errors.UndeclaredLevelsError, "y ~ age + day", data, 1.0, 1e-6, method="ssp",
                     bounds=BOUNDS, match=r"'day' holds dates \(dtype datetime64")
    assert "'day' holds dates (dtype datetime64" in str(err)
    assert "(df['day'] - pd.Timestamp('2000-01-01')).dt.days, and declare bounds for the new column" in str(err)
    err, _ = refused(dpstats.errors.UndeclaredLevelsError, "y ~ age + C(g)", people, 1.0, 1e-6, method="ssp",
                     bounds=BOUNDS, match="would be read from the private data")
    assert "holds dates" not in str(err)


@pytest.mark.parametrize("formula,extra,exc", [("y ~ age + I(day)", {}, DataTypeError),
                                               ("y ~ age + I(day - 1)", {}, DataTypeError),
                                               ("y ~ age + day", {"day": (0, 1)}, InvalidBoundsError)])
def test_a_date_column_used_as_a_number_or_bounded_says_how_to_convert(people, formula, extra, exc):
    # these used to advise pd.to_numeric (nanoseconds since 1970) or converting "numbers stored as text"
    data = people.assign(day=pd.Timestamp("2020-01-01") + pd.to_timedelta(people.index % 30, unit="D"))
    err, _ = refused(exc, formula, data, 1.0, 1e-6, method="ssp", bounds={**BOUNDS, **extra},
                     match=r"'day' holds dates \(dtype datetime64")
    assert "'day' holds dates (dtype datetime64" in str(err)
    assert "(df['day'] - pd.Timestamp('2000-01-01')).dt.days" in str(err)
    assert "to_numeric" not in str(err) and "stored as text" not in str(err)


@pytest.mark.parametrize("dtype", [object, str])
def test_undeclared_levels_of_numbers_stored_as_text_say_how_to_convert(people, dtype):
    data = people.assign(**{"the age": people.age.astype(dtype)})
    err, _ = refused(dpstats.errors.UndeclaredLevelsError, 'y ~ Q("the age")', data, 1.0, 1e-6, method="ssp",
                     bounds=BOUNDS, match="If 'the age' holds numbers stored as text")
    assert "If 'the age' holds numbers stored as text" in str(err)
    assert "df['the age'] = pd.to_numeric(df['the age'])" in str(err)
    err, _ = refused(dpstats.errors.UndeclaredLevelsError, 'y ~ C(Q("the age"))', data, 1.0, 1e-6, method="ssp",
                     bounds=BOUNDS, match="would be read from the private data")
    assert "pd.to_numeric" not in str(err)  # C() asks for a factor


@pytest.mark.parametrize("eps, delta, says", [
    ("1", 1e-6, "epsilon must be a positive number, got the string '1'; pass a number, e.g. epsilon=1.0"),
    ("one", 1e-6, "epsilon must be a positive number, got the string 'one'; pass a number"),
    (1.0, "1e-6", "delta must be a number in (0, 1), got the string '1e-6'; pass a number, e.g. delta=1e-06"),
    (1.0, None, "delta must be a number in (0, 1), got None; omit delta for the default 1e-6 (well below 1/n for n "
                "up to a few hundred thousand)"),
])
def test_a_budget_given_as_a_string_says_to_pass_a_number(people, eps, delta, says):
    err, _ = refused(InvalidPrivacyParameterError, "y ~ age", people, eps, delta, method="ssp", bounds=BOUNDS,
                     match=f"^{re.escape(says)}$")
    assert str(err) == says


@pytest.mark.parametrize("n", [0, 3, 4])
def test_auto_without_a_method_for_as_many_columns_as_rows_says_why(people, n):
    # auto's refusal said only "found no registered method for n=3, d=4", where a named method says that the design
    # has more columns than rows
    err, _ = refused(dpstats.errors.InsufficientDataError, "y ~ age + income + C(g, levels=[1, 2, 3])",
                     people.head(n), 1.0, 1e-6, bounds={**BOUNDS, "income": (1, 100)},
                     match="use fewer terms or more rows")
    assert str(err).startswith(f"method='auto' found no registered method for n={n}, d=5: the data have no more "
                               "rows than the design has columns")
    assert "use fewer terms or more rows" in str(err)


def test_null_row_fill_that_the_column_dtype_cannot_hold_is_not_an_internal_error(people):
    # the public null row takes a factor's first declared level; 0.5 or True in an int column made pandas refuse the
    # fill, so whether the data had a missing value decided between an InternalFitError and a fit (or a domain error)
    bounds = {**BOUNDS, "income": (1, 100)}
    complete = people
    incomplete = people.assign(income=people.income.where(people.index != 5))
    fits = [dpstats.dp_ols("y ~ income + C(g, levels=[0.5, 1, 2, 3])", d, 1.0, 1e-6, method="ssp", missing="drop",
                           bounds=bounds, random_state=0) for d in (complete, incomplete)]
    for res in fits:
        assert list(res.params.index)[1:4] == [f"C(g, levels=[0.5, 1, 2, 3])[T.{lv}]" for lv in (1, 2, 3)]
        assert np.isfinite(res.params.to_numpy()).all()
    # g's values 2 and 3 are outside [True, False] (1 == True): public null rows, in both data sets
    fits = [dpstats.dp_ols("y ~ income + C(g, levels=[True, False])", d, 1.0, 1e-6, method="ssp", missing="drop",
                           bounds=bounds, random_state=0) for d in (complete, incomplete)]
    for res in fits:
        assert np.isfinite(res.params.to_numpy()).all()
    assert fits[0].privacy.epsilon_spent == fits[1].privacy.epsilon_spent


def test_number_levels_for_a_text_column_are_refused_and_matching_kinds_fit(people):
    data = people.assign(g=people.g.map({1: "a", 2: "b", 3: "c"}).astype("string"))
    err, _ = refused(FormulaError, "y ~ C(g)", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, levels={"g": [1, 2, 3]},
                     match=r"are numbers \(1, 2, 3\)")
    assert "are numbers (1, 2, 3)" in str(err) and "declare them as text" in str(err)
    err, _ = refused(FormulaError, "y ~ C(g, levels=[1, 2, 3])", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     match=r"are numbers \(1, 2, 3\)")
    assert "are numbers (1, 2, 3)" in str(err) and "declare them as text" in str(err)
    res = dpstats.dp_ols("y ~ C(g)", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS, levels={"g": ["a", "b", "c"]},
                         random_state=0)
    assert list(res.params.index) == ["Intercept", "C(g)[T.b]", "C(g)[T.c]"]



@pytest.mark.parametrize("term, levels", [("g", {"g": [1, "a", "b"]}), ("C(g, levels=[1, 'a', 'b'])", None)])
def test_levels_mixing_numbers_and_text_are_refused_alike_on_neighbouring_csv_files(people, tmp_path, term, levels):
    # regression (s23 red team): a CSV column is read as text when its declared levels include text, so the level 1
    # of [1, 'a', 'b'] never matched a row written 1: the file with row 0 at 'a' fitted and its neighbour with row 0
    # at 1 (a declared level) was refused at no cost, a one-bit oracle. Now both are refused from the declaration
    data = people.assign(g=np.where(people.index % 2 == 0, "a", "b"))
    messages = []
    for row0 in ("a", "1"):
        path = tmp_path / f"row0_{row0}.csv"
        data.assign(g=[row0, *data.g[1:]]).to_csv(path, index=False)
        for source in (str(path), CSVSource(path, chunksize=7)):
            err, _ = refused(FormulaError, f"y ~ age + {term}", source, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                             levels=levels, match=r"levels for 'g' include numbers \(1\) but the column's dtype is str")
            messages.append(str(err))
    assert len(set(messages)) == 1
    assert messages[0].startswith("levels for 'g' include numbers (1) but the column's dtype is str")


def test_levels_mixing_kinds_are_refused_when_the_dtype_cannot_hold_one_and_fit_on_an_object_column(people, tmp_path):
    text = people.assign(g=people.g.map({1: "a", 2: "b", 3: "1"}).astype("string"))
    err, _ = refused(FormulaError, "y ~ C(g)", text, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     levels={"g": [1, "a", "b"]}, match=r"include numbers \(1\)")
    assert "include numbers (1)" in str(err) and "declare them as text" in str(err)
    err, _ = refused(FormulaError, "y ~ C(g)", text, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     levels={"g": [True, "a", "b"]}, match=r"include values that are not text \(True\)")
    assert "include values that are not text (True)" in str(err)
    err, _ = refused(FormulaError, "y ~ C(g)", people, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     levels={"g": [1, 2, 3, "a"]}, match=r"include text \('a'\)")
    assert "include text ('a')" in str(err) and "declare them as numbers" in str(err)
    people.to_csv(tmp_path / "people.csv", index=False)
    err, _ = refused(FormulaError, "y ~ C(g)", CSVSource(tmp_path / "people.csv", dtype={"g": float}), 1.0, 1e-6,
                     method="ssp", bounds=BOUNDS, levels={"g": [1, 2, 3, "a"]}, match=r"include text \('a'\)")
    assert "include text ('a')" in str(err)
    mixed = people.assign(g=people.g.map({1: 1, 2: "a", 3: "b"}).astype(object))
    res = dpstats.dp_ols("y ~ C(g)", mixed, 1.0, 1e-6, method="ssp", bounds=BOUNDS, levels={"g": [1, "a", "b"]},
                         random_state=0)
    assert list(res.params.index) == ["Intercept", "C(g)[T.a]", "C(g)[T.b]"]


# -- m. the privacy report without bounds ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wages() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 4000
    df = pd.DataFrame({"school": rng.integers(6, 18, n), "exper": rng.uniform(0, 25, n),
                       "sex": rng.choice(["female", "male"], n)})
    df["wage"] = np.exp(0.5 + 0.08 * df.school + 0.03 * df.exper + rng.normal(0, 0.4, n))
    return df


WAGE_FORMULA = "np.log(wage) ~ school + exper + C(sex, levels=['female', 'male'])"


def test_report_names_the_variables_without_bounds(wages):
    res = dpstats.dp_ols(WAGE_FORMULA, wages, 1.0, 1e-6, method="pgd", random_state=0)
    note = next(n for n in res.privacy.notes if "have no public range" in n)
    assert note.startswith("variables school, exper, np.log(wage) (response) have no public range")
    assert "[" not in note.split("have no public range")[0]


def test_report_of_one_unbounded_variable_beside_a_declared_power(wages):
    # regression (s51 new-user check, MASS's GAGurine: log GAG on age and its square, age declared and the GAG
    # concentration, whose units are lost, left unbounded): the note read "variables np.log(wage) (response) have
    # no public range" and the square's note "bounds were not declared for every variable, so the declared midpoints
    # could not be used", while the square's own variable had its bounds declared
    res = dpstats.dp_ols("np.log(wage) ~ exper + I(exper ** 2)", wages, 3.0, 1e-6, method="pgd",
                         bounds={"exper": (0, 25)}, random_state=0)
    domain = [n for n in res.privacy.notes if "no public range" in n]
    assert len(domain) == 1
    assert domain[0].startswith("variable np.log(wage) (response) has no public range (no bounds declared): it was "
                                "clipped to a released domain")
    assert "the centre and scale released from the means and variances of" in domain[0]
    power = next(n for n in res.privacy.notes if n.startswith("I(exper ** 2) (product or power column) was fitted"))
    assert "also of a variable whose bounds were declared" in power and "could not be used" not in power


def test_guarantee_line_says_what_it_holds_given(wages):
    kw = dict(method="pgd", random_state=0)
    none = dpstats.dp_ols(WAGE_FORMULA, wages, 1.0, 1e-6, **kw).privacy.guarantee
    assert none == ("worst-case (epsilon, delta)-DP: holds for every data set; no bounds were declared and none are "
                    "needed: the method clips to privately released ranges")
    some = dpstats.dp_ols(WAGE_FORMULA, wages, 1.0, 1e-6, bounds={"school": (0, 20)}, **kw).privacy.guarantee
    assert some == ("worst-case (epsilon, delta)-DP: holds for every data set, given the declared bounds; the "
                    "variables without declared bounds need none: the method clips to privately released ranges")
    every = {"school": (0, 20), "exper": (0, 30), "wage": (0.5, 200)}
    full = dpstats.dp_ols(WAGE_FORMULA, wages, 1.0, 1e-6, bounds=every, **kw).privacy.guarantee
    assert full == "worst-case (epsilon, delta)-DP: holds for every data set, given the declared bounds"
    dpsgd = dpstats.dp_ols(WAGE_FORMULA, wages, 1.0, 1e-6, method="dpsgd", random_state=0).privacy.guarantee
    assert dpsgd.endswith("no bounds were declared and none are needed: the method clips each row's gradient to a "
                          "public norm")


def test_every_bound_free_method_says_why_it_needs_no_bounds():
    built_in = {name: spec for name, spec in dpstats.available_methods().items()
                if spec.fit.__module__.startswith("dpstats.")}
    assert {"pgd", "dpsgd", "robgd", "ambssgd", "tukey", "ssp"} <= set(built_in)
    for name, spec in built_in.items():
        assert bool(spec.unbounded_guarantee) == (spec.private and not spec.needs_bounds), name


def test_fit_context_names_columns_and_the_response():
    from dpstats.methods.registry import FitContext
    from dpstats.privacy.ledger import PrivacyLedger

    ctx = FitContext(n=10, d=2, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(0),
                     column_names=("Intercept", "x"), response_name="np.log(y)")
    assert [ctx.variable_name(v) for v in (1, "response")] == ["x", "np.log(y) (response)"]
    bare = FitContext(n=10, d=2, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(0))
    assert [bare.variable_name(v) for v in (1, "response")] == ["column 1", "the response"]


def test_a_boolean_response_is_bounded_by_its_dtype():
    """A bool response is coded 0/1, so its range [0, 1] is public from the dtype: methods that need bounds fit
    with bounds declared for the predictors only (the same fit as with y's bounds declared, same seed), a
    declared response bound still wins, and without any bounds the refusal names only the predictors."""
    rng = np.random.default_rng(7)
    x = rng.uniform(0.0, 1.0, 400)
    df = pd.DataFrame({"x": x, "y": rng.uniform(size=400) < 0.2 + 0.5 * x})
    implied = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="ssp", bounds={"x": (0, 1)}, random_state=3)
    explicit = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="ssp", bounds={"x": (0, 1), "y": (0, 1)},
                              random_state=3)
    np.testing.assert_array_equal(implied.params.to_numpy(), explicit.params.to_numpy())
    design = build_design("y ~ x", df, bounds={"x": (0, 1), "y": (0, 0.5)})
    assert (design.response_interval.lo, design.response_interval.hi) == (0.0, 0.5)
    with pytest.raises(MissingBoundsError, match=r"Declare bounds on the variables x\. ") as err:
        dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="ssp", random_state=3)
    assert "'x'" in str(err.value) and "'y'" not in str(err.value)


def _predict_model():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"carat": rng.uniform(0.3, 3.0, 400), "g": rng.integers(0, 2, 400),
                       "cut": pd.Categorical(rng.choice(["a", "b"], 400))})
    df["y"] = np.log(df["carat"]) + 0.5 * df["g"] + rng.normal(0.0, 0.3, 400)
    res = dpstats.dp_ols("y ~ np.log(carat) + g + C(cut)", df, 1.0, 1e-6,
                         bounds={"carat": (0.2, 5.0), "g": (0, 1), "y": (-5, 5)}, random_state=0)
    return res, df


@pytest.mark.parametrize("drop", ["carat", "cut"])
def test_predict_names_only_the_lacking_variable_not_the_functions(drop):
    res, df = _predict_model()
    with pytest.raises(UnknownColumnError, match="newdata lacks a variable the model uses: (carat|cut)$") as info:
        res.predict(df.drop(columns=[drop]).head(3))
    assert str(info.value).endswith(f"lacks a variable the model uses: {drop}")


def test_predict_reads_a_boolean_given_for_a_numeric_variable_as_0_1():
    res, df = _predict_model()
    np.testing.assert_array_equal(res.predict(df.assign(g=df["g"].astype(bool)).head(5)).to_numpy(),
                                  res.predict(df.head(5)).to_numpy())


def test_predict_takes_an_array_for_a_fit_from_arrays_in_the_fit_s_column_order():
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 1.0, (400, 2))
    y = X @ np.array([1.0, 2.0]) + rng.normal(0.0, 1.0, 400)
    res = dpstats.dp_ols_arrays(pd.DataFrame(X, columns=["my x", "b"]), y, intercept=False, epsilon=1.0, delta=1e-6,
                                x_bounds=[(-4, 4), (-4, 4)], y_bounds=(-15, 15), random_state=0)
    np.testing.assert_array_equal(res.predict(X[:3]).to_numpy(),
                                  res.predict(pd.DataFrame(X[:3], columns=["my x", "b"])).to_numpy())
    with pytest.raises(DataTypeError, match="2-D with 2 columns"):
        res.predict(X[0])
    formula = dpstats.dp_ols("y ~ np.log1p(x ** 2) + x", pd.DataFrame({"x": X[:, 0], "y": y}), 1.0, 1e-6,
                             bounds={"x": (-4, 4), "y": (-15, 15)}, random_state=0)
    with pytest.raises(DataTypeError, match="DataFrame with the columns x$"):
        formula.predict(X[:3, :1])  # a transform's column is not the array's column


@pytest.mark.parametrize("chunksize", [None, 97])
def test_a_data_column_named_like_a_contrast_is_not_read_as_a_variable(people, chunksize):
    # regression (s27 audit): a column named 'Treatment' beside C(g, Treatment(2)) made the level check read it as a
    # factor variable of the prepared frame, which does not hold it: an InternalFitError (KeyError) before any spend
    data = people.assign(Treatment=0.0)
    res = dpstats.dp_ols("y ~ age + C(g, Treatment(2))", data, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                         levels={"g": [1, 2, 3]}, random_state=0, chunksize=chunksize)
    assert list(res.params.index) == ["Intercept", "C(g, Treatment(2))[T.1]", "C(g, Treatment(2))[T.3]", "age"]


@pytest.mark.parametrize("chunksize", [None, 97])
def test_a_code_patsy_reads_and_python_does_not_is_the_same_formula_error_in_chunks(people, chunksize):
    # regression (s27 audit): 'x %in% g' was a FormulaError in memory and an InternalFitError in chunks
    err, _ = refused(FormulaError, "y ~ age %in% g", people, 1.0, 1e-6, method="ssp", bounds=BOUNDS,
                     levels={"g": [1, 2, 3]}, chunksize=chunksize, match="is not a valid expression")
    assert "is not a valid expression" in str(err)


@pytest.mark.parametrize("method", ["auto", "ssp", "theilsen"])
def test_a_missing_value_never_comes_before_a_public_refusal(method):
    """s27 audit: in memory the design was built (and a missing value refused) before the public checks, so a formula
    singular on purpose answered "is a value of z missing?" for free both ways.  Now the public refusals come first
    in memory as in chunks: the same outcome with and without the missing value, and the same in both paths."""
    rng = np.random.default_rng(0)
    clean = pd.DataFrame({"x": rng.uniform(0, 10, 500), "z": rng.uniform(0, 10, 500)})
    clean["y"] = clean.x + rng.normal(size=500)
    holed = clean.copy()
    holed.loc[3, "z"] = np.nan
    bounds = None if method == "theilsen" else {"x": (0, 10), "z": (0, 10), "y": (-5, 20)}
    outcomes = set()
    for data in (clean, holed):
        for chunksize in (None, 100):
            with pytest.raises(dpstats.errors.DPStatsError,
                               match="linearly dependent for every|'theilsen' fits at most 2 design columns") as info:
                dpstats.dp_ols("y ~ x + I(2 * x) + z", data, 1.0, 1e-6, method=method, bounds=bounds,
                               chunksize=chunksize, random_state=0)
            assert tuple(info.value.privacy_spent) == (0.0, 0.0)
            outcomes.add((type(info.value), str(info.value)))
    assert len(outcomes) == 1
