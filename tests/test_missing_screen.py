"""The missing-value screen (dpstats.privacy.missing_screen): with missing="raise" a private fit decides its refusal
of incomplete rows by a charged, noisy count, never by the values alone."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.errors import DPStatsError, MissingDataError, MissingValuesWarning
from dpstats.methods.registry import available_methods
from dpstats.privacy import PrivacyLedger
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.missing_screen import (
    CSV_TEXT_HINT,
    FALSE_REFUSAL,
    FALSE_WARNING,
    SCREEN_SHARE,
    MissingValueScreen,
    fit_epsilon,
)

BOUNDS = {"x": (0.0, 1.0), "z": (0.0, 1.0), "y": (-3.0, 5.0)}
ROOT = Path(__file__).resolve().parents[1]


def _frame(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "z": rng.uniform(0, 1, n)})
    df["y"] = 1 + 2 * df.x - df.z + rng.normal(0, 0.3, n)
    return df


def _screen_steps(res) -> list:
    return [s for s in res.privacy.steps if s.name.startswith("missing-value screen")]


def test_laplace_screen_levels_and_charge():
    screen = MissingValueScreen.for_method(2.0, 1e-6, gaussian=False, variables=("x",))
    assert screen.parameter == pytest.approx(SCREEN_SHARE * 2.0)
    assert fit_epsilon(2.0, screened=True) == pytest.approx(2.0 * (1 - SCREEN_SHARE))
    assert fit_epsilon(2.0, screened=False) == 2.0
    assert screen.refusal_level == pytest.approx(math.log(1 / (2 * FALSE_REFUSAL)) / screen.parameter)
    assert screen.warning_level == pytest.approx(math.log(1 / (2 * FALSE_WARNING)) / screen.parameter)
    ledger = PrivacyLedger(2.0, 1e-6)
    outcome = screen.run(3, ledger=ledger, rng=np.random.default_rng(0))
    assert ledger.spent == (pytest.approx(screen.parameter), 0.0)
    assert "noisy count" in outcome.note and outcome.warning == ""
    # s44 new-user check: "noisy count ... 36.4" on data without missing values read as 36 missing rows; the note
    # now gives a whole number and says it is the true count plus noise, which can be far from 0 when none is missing
    shown = outcome.note.split("a missing value is ")[1].split(" ")[0]
    assert re.fullmatch(r"-?\d+", shown) and "true count plus noise of standard deviation" in outcome.note
    assert "even where no row has a missing value" in outcome.note


@pytest.mark.parametrize("page", ["README.md", "docs/guide/bounds-and-levels.md"])
def test_docs_give_the_screens_thresholds_as_absolute_counts(page):
    """The README and the guide say the thresholds are counts of rows, not shares of n (a small data set with a
    large share missing passes), with the figures at epsilon 1 that the code's constants give, and name the
    Gaussian-only methods as the registry does."""
    text = " ".join((ROOT / page).read_text().split())
    assert "absolute counts of rows, not shares of n" in text.replace("**", "")
    assert 'missing="drop"' in text and "imput" in text and "your call" in text
    for gaussian in (True, False):
        screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=gaussian)
        assert f"about {screen.refusal_level:.0f}" in text and f"about {screen.warning_level:.0f}" in text
    gaussian_only = {name for name, spec in available_methods().items() if spec.private and spec.gaussian_only}
    assert ", ".join(f"`{m}`" for m in ("pgd", "ssp", "adassp", "robgd", "ambssgd")) in text
    assert gaussian_only == {"pgd", "ssp", "adassp", "robgd", "ambssgd"}


def test_gaussian_screen_composes_with_the_method_to_the_budget():
    """GDP composition: the screen's mu and the method's (from the rest of epsilon) add in quadrature to the fit's
    mu."""
    screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=True)
    mu = gaussian_mu(1.0, 1e-6)
    rest = gaussian_mu(fit_epsilon(1.0, screened=True), 1e-6)
    assert math.hypot(screen.parameter, rest) == pytest.approx(mu, rel=1e-12)
    assert 0.15 * mu < screen.parameter < 0.25 * mu  # about a fifth of mu: the method keeps about 98% of it
    assert screen.noise_sd == pytest.approx(1 / screen.parameter)
    ledger = PrivacyLedger(1.0, 1e-6)
    with pytest.raises(MissingDataError, match="x, z") as info:
        MissingValueScreen.for_method(1.0, 1e-6, gaussian=True, variables=("x", "z")).run(
            10_000, ledger=ledger, rng=np.random.default_rng(0))
    assert "nothing else was released" in str(info.value) and ledger.spent[0] > 0


def test_refusal_is_charged_and_names_no_value():
    screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=False, variables=("x", "z"))
    ledger = PrivacyLedger(1.0, 1e-6)
    with pytest.raises(MissingDataError, match="missing='drop'") as info:
        screen.run(100_000, ledger=ledger, rng=np.random.default_rng(0))
    assert ledger.spent == (pytest.approx(0.02), 0.0)
    assert "x, z" in str(info.value) and "about 100000 rows" not in str(info.value)  # the count is noisy


def test_warning_between_the_levels():
    """A count between the warning and the refusal levels (311 and 656 for the Laplace screen at epsilon 1) draws
    the warning.  The seed is fixed, so the test is deterministic; over seeds a count of 480 would leave the band
    3% of the time."""
    screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=False)
    outcome = screen.run(480, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(3))
    assert "null rows" in outcome.warning


def test_warning_says_how_often_clean_data_draw_it():
    """The warning quotes a noisy count, which can be far from 0 where no row is missing: it says so, with the level
    it crossed and how often a data set without missing values crosses it (public: epsilon, delta and the rule).
    Deterministic (fixed seed); a count of 480 leaves the band between the levels 3% of the time over seeds."""
    screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=False)
    outcome = screen.run(480, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(3))
    assert f"more than the {screen.warning_level:.0f} a data set without missing values reaches once in 1000 fits" \
        in outcome.warning
    assert "such rows, if any, entered the fit as public null rows" in outcome.warning


def test_gaussian_only_methods_release_only_gaussian_steps():
    """The flag that makes the screen Gaussian must be true of the method: otherwise the two would not compose to
    the budget.  Each flagged method's fit spends the budget and charges nothing but Gaussian steps."""
    flagged = sorted(name for name, spec in available_methods().items() if spec.gaussian_only)
    assert {"ssp", "adassp", "pgd", "robgd", "ambssgd"} <= set(flagged)
    df = _frame(20_000)
    for name in flagged:
        res = dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, method=name, random_state=1)
        assert {s.mechanism for s in res.privacy.steps} == {"gaussian"}, name
        assert res.privacy.epsilon_spent == pytest.approx(1.0, rel=1e-7), name


def test_clean_float_data_pay_the_screen_and_the_total_stays_in_budget():
    res = dpstats.dp_ols("y ~ x + z", _frame(), 1.0, 1e-6, bounds=BOUNDS, random_state=1)
    assert len(_screen_steps(res)) == 1
    assert res.privacy.steps[0].name.startswith("missing-value screen")
    assert res.privacy.epsilon_spent <= 1.0 + 1e-12
    assert any("missing-value screen" in note for note in res.privacy.notes)


def test_no_screen_where_no_column_can_hold_a_missing_value():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.integers(0, 10, 800), "g": rng.integers(0, 2, 800).astype(bool)})
    df["y"] = (2 * df.x + rng.integers(-3, 4, 800)).astype(np.int64)
    res = dpstats.dp_ols("y ~ x + g", df, 1.0, 1e-6, bounds={"x": (0, 9), "y": (-3, 21)}, random_state=1)
    assert _screen_steps(res) == []


def test_refusal_names_only_variables_whose_dtype_can_hold_a_missing_value():
    """s45 new-user check: on the bfi personality data the refusal listed age and gender, integer columns that cannot
    hold a missing value, among the variables with missing values; it now names only the columns that can."""
    df = _frame(3000)
    df.loc[:1999, "z"] = np.nan
    df["k"] = np.arange(3000) % 5  # int64: cannot hold a missing value
    with pytest.raises(MissingDataError,
                       match="rows have a missing value in at least one of y, x, z .*Impute the missing values "
                             "with a public rule") as info:
        dpstats.dp_ols("y ~ x + z + k", df, 1.0, 1e-6, bounds={**BOUNDS, "k": (0, 4)}, random_state=1)
    named = str(info.value).split("have a missing value in at least one of ")[1].split(" (the variables")[0]
    assert named == "y, x, z"


def test_refusal_does_not_say_a_listed_variable_holds_a_missing_value():
    """s55 new-user check: on MEPS (linearmodels' meps) the refusal said the rows "have a missing value in blhisp,
    linc", and blhisp has none; it is listed because its type (float) can hold one. The message now says "at least
    one of" them and that the count does not say which; a single screened variable is named alone."""
    df = _frame(3000)
    df.loc[:1999, "z"] = np.nan
    with pytest.raises(MissingDataError, match=r"at least one of y, x, z \(the variables whose type can hold one; "
                                               r"the count does not say which\)"):
        dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, random_state=1)
    only_z = df.assign(x=np.arange(3000) % 5, y=(np.arange(3000) % 7).astype(np.int64))
    with pytest.raises(MissingDataError, match=r"rows have a missing value in z \(a noisy count"):
        dpstats.dp_ols("y ~ x + z", only_z, 1.0, 1e-6, bounds={"x": (0, 4), "y": (0, 6), "z": BOUNDS["z"]},
                       random_state=1)


def test_missing_drop_spends_nothing_on_a_screen():
    df = _frame()
    df.loc[:4, "z"] = np.nan
    res = dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, missing="drop", random_state=1)
    assert _screen_steps(res) == []


@pytest.mark.parametrize("method", ["auto", "ssp", "adassp", "noisy_ols", "dpsgd", "pgd", "tukey"])
def test_a_few_missing_rows_are_null_rows_for_every_method(method):
    """Methods without null-row support (tukey) meet them as zero rows (public placeholders) after the screen."""
    df = _frame(3000)
    df.loc[:9, "z"] = np.nan
    df.loc[10:12, "y"] = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols("y ~ x + z", df, 2.0, 1e-6, bounds=BOUNDS, method=method, random_state=2)
    assert np.isfinite(res.params).all()
    assert len(_screen_steps(res)) == 1
    assert res.privacy.epsilon_spent <= 2.0 * (1 + 1e-9)


def test_many_missing_rows_are_refused_after_the_screen_is_charged():
    df = _frame(3000)
    df.loc[:1999, "z"] = np.nan
    accountant = dpstats.PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(MissingDataError, match="noisy count") as info:
        dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, random_state=1, accountant=accountant)
    assert 0 < info.value.privacy_spent[0] < 1.0  # the Gaussian screen's own (epsilon, delta)
    assert accountant.spent[0] == pytest.approx(info.value.privacy_spent[0])


def test_chunked_and_in_memory_screens_agree():
    df = _frame(2000)
    df.loc[5:30, "x"] = np.nan
    kw = dict(bounds=BOUNDS, method="ssp", random_state=4)
    memory = dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, **kw)
    chunked = dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, chunksize=300, **kw)
    np.testing.assert_allclose(chunked.params, memory.params, rtol=1e-9)
    assert [s.name for s in chunked.privacy.steps] == [s.name for s in memory.privacy.steps]


def test_chunked_refusal_for_a_method_without_a_first_pass():
    df = _frame(3000)
    df.loc[:2499, "z"] = np.nan
    with pytest.raises(MissingDataError, match="noisy count") as info:
        dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, method="dpsgd", chunksize=500, random_state=1)
    assert info.value.privacy_spent == (pytest.approx(0.02), 0.0)  # dpsgd: the Laplace screen


def test_arrays_map_infinite_values_and_screen_missing_ones():
    df = _frame(2000)
    X, y = df[["x", "z"]].to_numpy(copy=True), df["y"].to_numpy(copy=True)
    X[3, 0], X[4, 1], y[5] = np.nan, np.inf, -np.inf
    res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), intercept=True, method="ssp",
                                random_state=0)
    assert np.isfinite(res.params).all() and len(_screen_steps(res)) == 1
    X[:1500, 0] = np.nan
    with pytest.raises(MissingDataError, match="noisy count"):
        dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), intercept=True, method="ssp",
                              random_state=0)


def test_arrays_take_missing_drop_as_dp_ols_does():
    """dp_ols_arrays(missing="drop") is dp_ols's: the same null rows, no screen, the same coefficients on the same
    seed (the non-private ols drops the rows); before it refused missing= as an option of the method, while the
    screen's refusal and pgd's without bounds told it to pass missing='drop'."""
    df = _frame(2000)
    df.loc[:1499, "z"] = np.nan  # many: the screen would refuse
    X, y = df[["x", "z"]], df["y"]
    kw = dict(missing="drop", random_state=3)
    frame = dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, **kw)
    arrays = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, x_bounds=[BOUNDS["x"], BOUNDS["z"]], y_bounds=BOUNDS["y"],
                                   intercept=True, **kw)
    np.testing.assert_allclose(arrays.params.to_numpy(), frame.params.to_numpy(), rtol=1e-12)
    assert _screen_steps(arrays) == [] and arrays.method == frame.method
    assert any(note.startswith("missing='drop'") for note in arrays.privacy.notes)
    ols = dpstats.dp_ols_arrays(X, y, float("inf"), method="ols", intercept=True, missing="drop")
    assert ols.nobs == 500
    with pytest.raises(MissingDataError, match="or pass missing='drop'"):
        dpstats.dp_ols_arrays(X, y, float("inf"), method="ols", intercept=True)
    with pytest.raises(DPStatsError, match="cannot take missing='drop'"):
        dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, x_bounds=(0, 1), y_bounds=(-3, 5), intercept=True, method="tukey",
                              missing="drop")


def test_sklearn_passes_missing_values_to_the_screen():
    pytest.importorskip("sklearn")
    from dpstats.sklearn import DPLinearRegression

    df = _frame(1500)
    X, y = df[["x", "z"]].to_numpy(copy=True), df["y"].to_numpy(copy=True)
    X[3, 1], y[7] = np.nan, np.nan
    model = DPLinearRegression(epsilon=1.0, bounds=[(0, 1), (0, 1)], y_bounds=(-3, 5), random_state=0).fit(X, y)
    assert np.isfinite(model.coef_).all()
    assert any(s.name.startswith("missing-value screen") for s in model.privacy_report_.steps)


def test_warning_reaches_the_caller():
    df = _frame(3000)
    df.loc[:79, "z"] = np.nan  # 80 rows: between the Gaussian screen's levels at epsilon 1 (65, 100); fixed seed
    with pytest.warns(MissingValuesWarning, match="noisy count"):
        dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=7)


def test_csv_source_adds_the_text_column_hint(tmp_path):
    """From a CSV path a text column without declared levels is read as numbers, every field of it missing: the
    screen's refusal (charged, as before) names that likely cause; the same missing values from a DataFrame do not
    draw the hint (the source's format is the only fact it uses)."""
    df = _frame(3000)
    df["g"] = np.where(df.x > 0.5, "a", "b")
    path = tmp_path / "text.csv"
    df.to_csv(path, index=False)
    accountant = dpstats.PrivacyAccountant(5.0, 1e-5)
    for data, kw in ((path, {}), (str(path), {"chunksize": 500})):
        with pytest.raises(MissingDataError, match="noisy count") as info:
            dpstats.dp_ols("y ~ x + g", data, 1.0, 1e-6, bounds=BOUNDS, random_state=1, accountant=accountant, **kw)
        assert CSV_TEXT_HINT in str(info.value)
        assert "text column" in str(info.value) and "levels=" in str(info.value) and "dtype=" in str(info.value)
    assert accountant.spent[0] > 0  # the screen was charged: the hint changes the message only
    frame = df.assign(g=np.nan)
    with pytest.raises(MissingDataError, match="noisy count") as info:
        dpstats.dp_ols("y ~ x + g", frame, 1.0, 1e-6, bounds=BOUNDS, random_state=1)
    assert "text column" not in str(info.value)


def test_csv_source_warning_carries_the_hint(tmp_path):
    df = _frame(3000)
    df.loc[:79, "z"] = np.nan  # as test_warning_reaches_the_caller, from a CSV file
    path = tmp_path / "gaps.csv"
    df.to_csv(path, index=False)
    with pytest.warns(MissingValuesWarning, match="noisy count") as record:
        dpstats.dp_ols("y ~ x + z", str(path), 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=7)
    assert any(str(w.message).endswith(CSV_TEXT_HINT) for w in record if w.category is MissingValuesWarning)
    with pytest.warns(MissingValuesWarning) as record:
        dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=BOUNDS, method="ssp", random_state=7)
    assert not any("text column" in str(w.message) for w in record)


def _outcome_run(formula: str, method: str, epsilon: float, **kw):
    """A fit as a mechanism for the audit: its first slope, or 1e9 where it is refused."""
    def run(data: pd.DataFrame, rng: np.random.Generator) -> float:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = dpstats.dp_ols(formula, data, epsilon, 1e-6, method=method, random_state=rng, **kw)
        except DPStatsError:
            return 1e9
        return float(res.params.iloc[1])
    return run


def test_black_box_audit_of_a_missing_value():
    """Neighbours: row 0 complete, or row 0 with z missing.  Before the screen one was always refused and the other
    always fitted (a bound of about 2.2 with 150 runs a side against a claim of 1).  Now the refusal is decided by a
    noisy count and the missing row is a public null row.  False-failure rate: alpha = 1e-3."""
    from dpstats.privacy.audit import audit_mechanism

    base = _frame(150, seed=5)
    complete, incomplete = base.copy(), base.copy()
    incomplete.loc[0, "z"] = np.nan
    run = _outcome_run("y ~ x + z", "ssp", 1.0, bounds=BOUNDS)
    result = audit_mechanism(run, complete, incomplete, runs=150, delta=1e-6, alpha=1e-3, seed=11)
    assert result.epsilon_lower_bound <= 1.0


@pytest.mark.parametrize("gaussian", [False, True])
def test_black_box_audit_at_the_refusal_level(gaussian):
    """The screen's own decision at its worst case: counts that straddle the refusal level, at a budget whose screen
    is strong enough for the decision to be random on both.  The output is the released noisy count or, on a
    refusal, a marker.  The audit's bound must stay within the screen's own epsilon at delta = 1e-6 (Laplace: its
    epsilon; Gaussian: that of its mu).  False-failure rate: alpha = 1e-3."""
    from dpstats.privacy.audit import audit_mechanism
    from dpstats.privacy.calibration import gaussian_epsilon

    screen = MissingValueScreen.for_method(50.0 if not gaussian else 8.0, 1e-6, gaussian=gaussian)
    claim = screen.parameter if not gaussian else gaussian_epsilon(screen.parameter, 1e-6)
    k = int(round(screen.refusal_level))

    def run(count: int, rng: np.random.Generator) -> float:
        try:
            outcome = screen.run(count, ledger=PrivacyLedger(50.0, 1e-6), rng=rng)
        except MissingDataError:
            return 1e9
        return float(outcome.note.split("a missing value is ")[1].split(" ")[0])  # the released count, rounded

    result = audit_mechanism(run, k, k + 1, runs=3000, delta=1e-6, alpha=1e-3, seed=12)
    assert result.epsilon_lower_bound <= claim
    refused = [run(k + 1, np.random.default_rng(s)) == 1e9 for s in range(40)]
    assert 0 < sum(refused) < 40  # the decision is random, not a function of the count


def test_refusal_shows_the_noisy_count_within_the_rows():
    """Every row's factor value outside the declared levels (levels spelled "No", "Yes" where the data spell "no",
    "yes": session 47's check on Ecdat's Unemployment) makes a noisy count about n, and above it half the time; the
    refusal read "about 488 rows" of 452. It now shows the count clipped to [0, n], as "about k of the n rows"
    (post-processing with the public n). Seed 0 draws noise above n (deterministic)."""
    rng = np.random.default_rng(0)
    n = 452
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "g": rng.choice(["no", "yes"], n)})
    df["y"] = df.x + rng.normal(0, 1, n)
    with pytest.raises(MissingDataError, match=r"^about 452 of the 452 rows have a missing value or a value outside "
                       r"the declared levels in at least one of y, x, g"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpstats.dp_ols("y ~ x + C(g)", df, 1.0, 1e-6, bounds={"x": (0, 1), "y": (-5, 6)},
                       levels={"g": ("No", "Yes")}, random_state=0)
