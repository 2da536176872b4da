"""pgd: private gradient descent on privately standardised rows (dpstats.methods.pgd).

Options are refused before anything is read; the budget is spent exactly (GDP split of mu(epsilon, delta)); the
interval is withheld below n * mu = 15 with a specific reason; pgd without bounds refuses, before spending, where
its clipping domain would cost too much; the released map back to the user's coefficients is exact; a fit on data
read in chunks (CSV, Parquet, Dask) is the in-memory fit; a fixed-seed statistical check of accuracy and coverage.
Everything uses fixed seeds; the statistical test states its false-failure rate.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from functools import partial

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats import pipeline
from dpstats.errors import ClippedRowsWarning, InsufficientDataError, MethodOptionError, RoughResponseDomainWarning
from dpstats.methods import pgd, registry
from dpstats.methods.common import private_scaling
from dpstats.methods.common.geometric_histogram import (
    GeometricGrid,
    grid_counts,
    quantile_from_counts,
    release_quantiles,
)
from dpstats.methods.common.private_scaling import Domain, Standardisation
from dpstats.methods.registry import AutoFacts, available_methods, choose_auto, get_method
from dpstats.methods.spec import capped_spread, rare_outcome_withheld
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.missing_screen import fit_epsilon
from dpstats.rows import InMemoryRows
from dpstats.rows.sources import CSVSource, ParquetSource

FORMULA = "y ~ x1 + x2 + C(g, levels=['a', 'b'])"
BOUNDS = {"x1": (0.0, 10.0), "x2": (-4.0, 4.0), "y": (-25.0, 30.0)}
STEPS = {"steps": 8}  # few steps keep the passes (and the chunked tests) cheap


def _frame(n: int = 3000, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(0, 1, n), "g": rng.choice(["a", "b"], n)})
    df["y"] = 1 + 0.5 * df.x1 - 2 * df.x2 + (df.g == "b") + rng.normal(0, 1, n)
    return df


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return _frame()


# -- options and refusals ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{"chains": 1}, {"chains": 101}, {"chains": 2.5}, {"chains": True},
                                     {"steps": 1}, {"steps": 0.5}, {"inference": "yes"}, {"clip": 1.0}])
def test_bad_options_are_refused_before_anything_is_spent(df, options):
    acct = dpstats.PrivacyAccountant(1.0, 1e-5)
    with pytest.raises(MethodOptionError,
                       match="^(chains|steps|inference) must be|method 'pgd' does not accept clip; it accepts"):
        dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=BOUNDS, accountant=acct, **options)
    assert acct.spent == (0.0, 0.0)


@pytest.mark.parametrize("bounds,options", [(BOUNDS, {}), (BOUNDS, {"inference": False}), (None, {}),
                                            ({"x1": (0.0, 10.0)}, {})])
def test_the_budget_is_spent_exactly(df, bounds, options):
    res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=bounds, random_state=0, **STEPS, **options)
    assert res.privacy.epsilon_spent == pytest.approx(1.0, rel=1e-6)
    assert res.privacy.delta_spent == pytest.approx(1e-6, rel=1e-6)
    assert all(s.mechanism == "gaussian" for s in res.privacy.steps)
    mus = [s.mu for s in res.privacy.steps]  # each step's GDP parameter (all its repetitions)
    assert math.sqrt(sum(m * m for m in mus)) == pytest.approx(gaussian_mu(1.0, 1e-6), rel=1e-6)


def test_the_domain_is_released_only_for_variables_without_bounds(df):
    full = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0, **STEPS)
    assert not any("domain" in s.name for s in full.privacy.steps)
    partial = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds={"x1": (0.0, 10.0)}, random_state=0,
                             **STEPS)
    (step,) = [s for s in partial.privacy.steps if "domain" in s.name]
    assert step.count == 4  # x2 and y: a scale and a centre histogram each
    assert any("no public range" in note for note in partial.privacy.notes)


def test_the_clipping_check_is_released_only_with_a_released_domain(df):
    """A fit with every bound declared keeps its budget split (no check); one that releases a domain releases one
    count of sensitivity 1, and on well-behaved data it neither warns nor withholds the interval."""
    assert "clipping check" not in pgd.budget_split(3000, 1.0, 1e-6, intercept=True, inference=True)
    assert "clipping check" in pgd.budget_split(3000, 1.0, 1e-6, intercept=True, inference=True, private_variables=2)
    full = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0, **STEPS)
    assert not any("clipping check" in s.name for s in full.privacy.steps)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippedRowsWarning)
        free = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", random_state=0, **STEPS)
    (step,) = [s for s in free.privacy.steps if "clipping check" in s.name]
    assert step.sensitivity == pytest.approx(1.0, rel=1e-3)  # with the grid's rounding allowance
    count, sd = free.info["rows_beyond_domain"]
    assert count < pgd.CLIPPED_SHARE * len(df) and np.isfinite(free.conf_int().to_numpy()).all()


def test_a_calendar_year_without_bounds_gets_a_domain_around_its_values():
    """A variable far from 0 for its spread (a year, 2003-2009, sd 2: its group means are about 500 released scales
    out) is located on unit bins (``LOCATION_GRID``'s fine part reaches 2^12 scales); with fine bins only to 2^8
    its centre came from the grid's two bins per octave, hundreds of years off, every row was clipped to a constant
    and the year's coefficient sat 50-290 OLS standard errors from least squares (clipping check: every fit
    flagged).  Fixed seeds; now within a few standard errors, no warning and an interval.

    Deterministic under the fixed seeds (1.4 and 1.9 OLS standard errors).  Over 200 re-seeds (0-199) the error was
    -3.8 +- 3.7 OLS standard errors, with a heavier tail than normal (the noise's scale itself is released: the fit's
    standard error ranged 2.6-11.9 OLS ones); the former bound, 10, failed for 10 of the 200 re-seeds.  The bound 40
    still fails the fault (50-290); a normal scale mixture fitted to the 200 fits (each fit's error over its own
    standard error: -0.86 +- 0.79) gives it a false-failure rate of 1e-5 per fit (it gives 0.07 at 10 and 0.005 at
    20, where 0.05 and 0.005 were seen), so about 2e-5 for the test's two fits."""
    assert pgd_grid_value(501.4) == 501.0 and pgd_grid_value(-3000.2) == -3000.0
    rng = np.random.default_rng(5)
    year = rng.integers(2003, 2010, 1500).astype(float)
    x = rng.normal(40.0, 10.0, 1500)
    frame = pd.DataFrame({"year": year, "x": x, "y": 0.8 * (year - 2006) + 0.05 * x + rng.normal(0.0, 1.0, 1500)})
    X = np.column_stack([np.ones(1500), year, x])
    ols, *_ = np.linalg.lstsq(X, frame["y"].to_numpy(), rcond=None)
    se = math.sqrt(np.sum((frame["y"].to_numpy() - X @ ols) ** 2) / 1497 * np.linalg.inv(X.T @ X)[1, 1])
    for seed in range(2):
        with warnings.catch_warnings():
            warnings.simplefilter("error", ClippedRowsWarning)
            res = dpstats.dp_ols("y ~ year + x", frame, 1.0, 1e-6, method="pgd", random_state=seed)
        assert abs(res.params["year"] - ols[1]) < 40.0 * se
        assert np.isfinite(res.conf_int().loc["year"]).all()


def pgd_grid_value(u: float) -> float:
    """The location grid's representative of the bin of u (in released scales of 2 s)."""
    grid = private_scaling.LOCATION_GRID
    return grid.value(int(grid.index(np.array([u]))[0]))


def test_a_heavy_tailed_fit_without_bounds_warns_and_withholds_its_interval():
    """Log-normal x (sigma 3) without bounds: hundreds of rows lie beyond the released domain, the released count
    says so, and the fit warns (ClippedRowsWarning, also a note) and gives no interval, saying why."""
    rng = np.random.default_rng(3)
    x = np.exp(rng.normal(0.0, 3.0, 2000))
    frame = pd.DataFrame({"x": x, "y": 2.0 * x + rng.normal(0.0, 1.0, 2000)})
    with pytest.warns(ClippedRowsWarning, match=r"targets the fit of the clipped data .* not least squares"):
        res = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", random_state=0)
    count, sd = res.info["rows_beyond_domain"]
    assert count - pgd.CLIPPED_Z * sd > pgd.CLIPPED_SHARE * 2000
    assert np.isnan(res.bse).all() and "beyond the clipping domain" in res.inference_reason
    assert "declare bounds" in res.inference_reason
    # a table's note keeps a reason's first clause (up to " (" or "; "): it names the check and says what it found
    # (was "about 801 of 2000 rows")
    (note,) = [n for n in dpstats.table([res]).notes if "no standard errors" in n]
    assert re.search(r"pgd's clipping check: about \d+ of 2000 rows had a value beyond the clipping domain", note)
    over = pgd.ClippingCheck(3028.0, 28.1, 3000.0)  # a noisy count above n is said as at most n
    assert "about 3000 of 3000 rows, 100% (" in over.message("x") and "about 3000 of 3000 rows" in over.reason()
    # s48 new-user check: the threshold read "more than 10% even less 2.326 noise sds"; it now says what is compared
    for text in (over.message("x"), over.reason()):
        assert f"even {pgd.CLIPPED_Z:g} noise sds below it, more than 10% of the rows" in text
        assert "even less" not in text
    # s45 new-user check: with missing="drop" the count was read against the released count of complete rows and
    # said "about 578 of 3196" on data of 3,343 rows without a missing value; the messages now say what 3196 is
    complete = pgd.ClippingCheck(578.0, 27.7, 3196.0, rows_released=True)
    said = "of about 3196 rows without a missing value (a released count)"
    assert said in complete.message("x") and said in complete.reason()
    with pytest.warns(ClippedRowsWarning, match="rows without a missing value \\(a released count\\)"):
        dropped = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", missing="drop", random_state=0)
    assert "rows without a missing value (a released count) had a value beyond" in dropped.inference_reason
    assert any(note.startswith("WARNING: pgd clipped a material share") for note in res.privacy.notes)
    assert not any("inference" in s.name for s in res.privacy.steps)  # the 2-vector is not released
    with warnings.catch_warnings():  # declared bounds: no domain, no check, no warning
        warnings.simplefilter("error", ClippedRowsWarning)
        bounded = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", random_state=0,
                                 bounds={"x": (0.0, float(x.max())), "y": (-10.0, 2.0 * float(x.max()) + 10.0)})
    assert not any("clipping check" in s.name for s in bounded.privacy.steps)


@pytest.mark.parametrize("bounds,named", [(None, "x1, x2, y (response)"), ({"x1": (0.0, 10.0)}, "x2, y (response)")])
def test_without_bounds_too_few_rows_are_refused_before_spending(bounds, named):
    """The refusal names the variables without bounds, and says the n and the epsilon (at this n) that suffice and
    that declaring their bounds avoids the domain; each remedy indeed lifts it."""
    small = _frame(200)
    acct = dpstats.PrivacyAccountant(1.0, 1e-5)
    with pytest.raises(InsufficientDataError, match=r"declare bounds for them") as exc:
        dpstats.dp_ols(FORMULA, small, 1.0, 1e-6, method="pgd", bounds=bounds, accountant=acct)
    message = str(exc.value)
    assert acct.spent == (0.0, 0.0)
    k = named.count(",") + 1
    assert f"the {k} variable(s) without declared bounds ({named})" in message
    rows = int(re.search(r"takes n >= (\d+) rows \(n=200\)", message).group(1))
    epsilon = float(re.search(r"or at n=200 epsilon >= ([\d.]+);", message).group(1))
    assert "nothing was spent" in message
    private = list(range(k))
    rest = fit_epsilon(1.0, screened=True)  # the method's epsilon: the missing-value screen takes its share first
    assert pgd.domain_refusal(200, 4, rest, 1e-6, private)  # the message's own numbers lift the refusal
    assert not pgd.domain_refusal(rows, 4, rest, 1e-6, private) and pgd.domain_refusal(rows - 1, 4, rest, 1e-6, private)
    assert f"at epsilon=1, delta=1e-06 takes n >= {rows} rows" in message  # the epsilon asked for, not the rest
    assert not pgd.domain_refusal(200, 4, fit_epsilon(epsilon, screened=True), 1e-6, private)  # the epsilon to ask
    assert pgd.domain_refusal(200, 4, fit_epsilon(epsilon * 0.99, screened=True), 1e-6, private)
    # without the missing-value screen (missing="drop") the method gets the whole epsilon: the n the message names
    dropped = int(re.search(r"missing='drop' .* would need n >= (\d+) rows, more than n=200 too", message).group(1))
    assert not pgd.domain_refusal(dropped, 4, 1.0, 1e-6, private) and pgd.domain_refusal(dropped - 1, 4, 1.0, 1e-6,
                                                                                          private)
    big = _frame(dropped)
    assert dpstats.dp_ols(FORMULA, big, 1.0, 1e-6, method="pgd", bounds=bounds, missing="drop", random_state=0,
                          **STEPS).method == "pgd"


def test_the_refusal_offers_missing_drop_only_where_it_would_suffice():
    """s54 new-user check: condroz (428 soil samples, Ca ~ pH with the response unbounded, epsilon 1) was refused with
    "or pass missing='drop' ..., which needs n >= 507 rows", a remedy that does not lift the refusal at n = 428; the
    message now offers it only where its n is at most the data's, and says otherwise that it would not suffice."""
    rest = fit_epsilon(1.0, screened=True)
    drop = pgd._rows_needed(1, gaussian_mu(1.0, 1e-6))  # missing='drop': the method gets the whole epsilon
    screened = pgd._rows_needed(1, gaussian_mu(rest, 1e-6))
    assert drop < screened
    short = pgd.domain_refusal(drop - 1, 2, rest, 1e-6, [1], ["Ca (response)"], screened=True)
    assert "or pass missing='drop'" not in short
    assert f"would need n >= {drop} rows, more than n={drop - 1} too" in short
    enough = pgd.domain_refusal(drop, 2, rest, 1e-6, [1], ["Ca (response)"], screened=True)
    assert "or pass missing='drop' (rows with a missing value" in enough and f"which needs n >= {drop} rows" in enough
    assert not pgd.domain_refusal(drop, 2, 1.0, 1e-6, [1])  # and at that n it does lift the refusal


def test_interval_withheld_below_the_n_mu_threshold_with_a_specific_reason():
    small = _frame(50)  # n mu = 11.8 at epsilon = 1, below INTERVAL_MIN_N_MU = 15
    res = dpstats.dp_ols(FORMULA, small, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0, **STEPS)
    assert not res.inference_available
    reason = res.inference_reason
    need = math.ceil(pgd.INTERVAL_MIN_N_MU / gaussian_mu(fit_epsilon(1.0, screened=True), 1e-6))
    assert f"below {pgd.INTERVAL_MIN_N_MU:g}" in reason and f"n >= {need} rows" in reason
    assert not any("inference" in s.name for s in res.privacy.steps)  # nothing was spent on an interval
    assert res.info["chains"] == 1


def test_on_wide_designs_the_chains_start_offsets_keep_their_norm():
    """Where n * mu >= SMALL_N_MU, a design of d > START_SPREAD_D_REF columns gets the spread START_SPREAD
    sqrt(START_SPREAD_D_REF / d) per coordinate (an offset's expected squared norm stays START_SPREAD^2
    START_SPREAD_D_REF); narrower designs, and every design below SMALL_N_MU, keep theirs."""
    ref = pgd.START_SPREAD_D_REF
    assert pgd.start_spread(pgd.SMALL_N_MU, int(ref)) == pgd.START_SPREAD
    assert pgd.start_spread(pgd.SMALL_N_MU, 4 * int(ref)) == pytest.approx(0.5 * pgd.START_SPREAD)
    assert pgd.start_spread(1e6, 58) ** 2 * 58 == pytest.approx(pgd.START_SPREAD**2 * ref)
    assert pgd.start_spread(pgd.SMALL_N_MU - 1e-9, 58) == pgd.WIDE_START_SPREAD


def test_below_the_small_n_mu_the_chains_start_wider_apart_and_report_an_interval():
    assert pgd.start_spread(pgd.SMALL_N_MU) == pgd.START_SPREAD
    assert pgd.start_spread(pgd.SMALL_N_MU - 1e-9) == pgd.WIDE_START_SPREAD > pgd.START_SPREAD
    small = _frame(300)  # n mu = 71 at epsilon = 1: between the interval threshold and SMALL_N_MU
    res = dpstats.dp_ols(FORMULA, small, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0, **STEPS)
    assert res.inference_available and res.info["chains"] == 5
    assert any("inference" in s.name for s in res.privacy.steps)
    assert np.all(np.isfinite(res.bse)) and np.all(res.bse > 0)


def test_intervals_agree_with_standard_errors_and_p_values(df):
    res = dpstats.dp_ols(FORMULA, df, 2.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=3)
    assert res.inference_available and res.info["chains"] == 5
    ci = res.conf_int()
    assert np.all((ci[0] < res.params) & (res.params < ci[1]))
    excludes_zero = (ci[0] > 0) | (ci[1] < 0)
    np.testing.assert_array_equal(res.pvalues.to_numpy() < 0.05, excludes_zero.to_numpy())
    assert np.all(np.isfinite(res.bse)) and np.all(res.bse > 0)


# -- building blocks --------------------------------------------------------------------------------------------

def test_the_map_back_is_exact():
    rng = np.random.default_rng(0)
    dom = Domain(np.array([1.0, -3.0, 0.0]), np.array([1.0, 5.0, 2.0]), -10.0, 20.0, 0)
    st = Standardisation(dom, np.array([0.0, 0.1, -0.2]), np.array([1.0, 0.4, 0.7]), 0.05, 0.3)
    X = np.column_stack([np.ones(50), rng.uniform(-3, 5, 50), rng.uniform(0, 2, 50)])
    theta = rng.normal(size=3)
    v = st.design(X) @ theta  # an exact fit on the standardised rows ...
    y = (dom.y_lo + dom.y_hi) / 2 + (dom.y_hi - dom.y_lo) / 2 * (st.y_centre + st.y_scale * v)
    np.testing.assert_allclose(X @ st.params_back(theta), y, rtol=1e-12, atol=1e-9)  # ... is one on the rows


def test_the_histogram_quantile_reads_the_right_bin_without_noise():
    grid = GeometricGrid(lo=2.0**-10, ratio=4.0, bins=12)
    values = np.r_[np.full(300, 0.3), np.full(600, 2.0), np.full(100, 50.0)]
    counts = grid_counts(values, grid)
    assert counts.sum() == 1000
    median = quantile_from_counts(counts.astype(float), 0.5, 1000, grid)
    assert 1.0 <= median <= 4.0  # the bin [1, 4) holds the median 2
    assert grid.index(np.array([0.0, -1.0, np.inf, np.nan, 1e300])).tolist() == [0, 0, 11, 11, 11]


def test_several_quantiles_are_read_from_one_release():
    grid = GeometricGrid(lo=2.0**-10, ratio=4.0, bins=12)
    counts = grid_counts(np.r_[np.full(500, 0.3), np.full(500, 20.0)], grid)
    ledger = PrivacyLedger(3.0, 1e-6)
    low, high = release_quantiles(counts, (0.25, 0.75), 1000, grid, mu=0.5, rng=np.random.default_rng(0),
                                  ledger=ledger, name="two quantiles")
    assert len(ledger.steps) == 1  # one release, two post-processed reads
    assert 2.0**-2 <= low < 1.0 and 16.0 <= high < 64.0  # the bins of 0.3 and 20 (noise sd 2.8 counts of 500)


def _unit_rows(n: int = 200, seed: int = 3) -> tuple[InMemoryRows, Standardisation, np.ndarray, np.ndarray]:
    """Rows (1, x) and y with the identity standardisation: z = (1, x), v = y."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    y = np.clip(0.1 + 0.5 * x + rng.normal(0, 0.1, n), -1, 1)
    st = Standardisation(Domain(np.array([1.0, -1.0]), np.array([1.0, 1.0]), -1.0, 1.0, intercept_index=0),
                         np.zeros(2), np.ones(2), 0.0, 1.0)
    X = np.column_stack([np.ones(n), x])
    return InMemoryRows(X, y), st, X, y


def test_the_penalty_makes_the_phase_converge_to_the_ridge_solution():
    """With noise far below the signal (mu = 10, n = 2000) and a clip that never binds (gradient norms are at most
    sqrt 2 x 2 < 4), the phase's average is the ridge solution (Z'Z + lambda I)^-1 Z'v, not least squares (the
    two slopes differ by about 0.1)."""
    rows, st, X, y = _unit_rows(2000)
    lam, gram = 200.0, X.T @ X
    out = pgd._phase(rows, st, pgd.RowCache(), np.zeros((2, 1)), np.linalg.inv(gram + lam * np.eye(2)), 4.0, 100,
                     10.0, ledger=PrivacyLedger(100.0, 1e-6), rng=np.random.default_rng(1), name="ridge", penalty=lam)
    ridge = np.linalg.solve(gram + lam * np.eye(2), X.T @ y)
    # deterministic under the fixed seed; over 100 re-seeds (2-101) out - ridge had mean 1e-5 and sds 0.0004 and
    # 0.0011 per coordinate (largest 0.0026): 0.01 is 9 sds, so a re-seed fails with probability about 2 Phi(-9) = 2e-19
    np.testing.assert_allclose(out[:, 0], ridge, atol=0.01)
    assert abs(ridge[1] - np.linalg.lstsq(X, y, rcond=None)[0][1]) > 0.05
    assert pgd.phase_penalty(2.0, 0.5) == pytest.approx(pgd.PENALTY * 2 * math.sqrt(2) * 2.0 / 0.5)


def test_the_linearisation_gives_the_ridge_shrinkage_where_the_steps_converge():
    """A Gram matrix far above its noise and enough steps: each direction's expected estimate is the ridge factor
    h / (h + lambda_2) times theta, phase 1's noise is forgotten, and the interval's algebra undoes it exactly
    (deterministic)."""
    h = np.array([4000.0, 1000.0, 250.0])
    V = np.linalg.qr(np.random.default_rng(3).normal(size=(3, 3)))[0]
    gram = (V * h) @ V.T
    lin = pgd.linearise(gram, 1.0, (2.0, 3.0), (1.0, 1.0), 400, (10.0, 50.0))
    order = np.argsort(h)
    np.testing.assert_allclose(np.sort(lin.shrink), (h / (h + 50.0))[order], rtol=1e-6)
    assert np.all(lin.carried < 1e-12)
    theta = np.array([0.5, -0.5, 0.25])
    estimate = lin.basis @ (lin.shrink * (lin.basis.T @ theta))  # the expected estimate S theta
    np.testing.assert_allclose(estimate - lin.bias(estimate), theta, atol=1e-12)  # S^-1 b
    np.testing.assert_allclose(lin.undo(estimate[None, :])[0], theta, atol=1e-12)


def test_early_stopping_adds_to_the_shrinkage_and_the_floor_caps_its_undoing():
    """Two steps (one kept) from 0 in a direction whose curvature is below the preconditioner's: the expected
    estimate is r (1 - w^2) theta, r the ridge factor and w = a^2 the start's weight in each phase (a the
    contraction), phase 1's noise is carried, and the de-biasing stops at ``SHRINK_FLOOR`` (deterministic)."""
    sigma_g, lam = 2.0, 0.5
    lin = pgd.linearise(np.diag([1.0, 5000.0]), sigma_g, (1.0, 1.0), (1.0, 1.0), 2, (lam, lam))
    curvature = sigma_g + lam  # the eigenvalue 1 is floored at sigma_G
    w = (1.0 - curvature / (1.0 + 2.0 * math.sqrt(2.0) * sigma_g + lam)) ** 2
    ridge = sigma_g / curvature
    assert lin.shrink[0] == pytest.approx(ridge * (1.0 - w**2), rel=1e-9)
    assert lin.shrink[0] < ridge - 0.05 and lin.carried[0] > 0
    floored = dataclasses.replace(_flat_linearisation(2), shrink=np.array([0.2, 1.0]))
    b = np.array([1.0, 3.0])
    np.testing.assert_allclose(b - floored.bias(b), [1.0 / pgd.SHRINK_FLOOR, 3.0], atol=1e-12)
    np.testing.assert_allclose(floored.undo(b[None, :])[0], [1.0 / pgd.SHRINK_FLOOR, 3.0], atol=1e-12)


def test_the_chains_start_apart_with_offsets_that_sum_to_zero():
    offsets = pgd._start_offsets(6, 5, 1.0, np.random.default_rng(2))
    assert offsets.shape == (6, 5)
    np.testing.assert_allclose(offsets.sum(axis=1), 0.0, atol=1e-12)
    assert np.all(offsets.std(axis=1) > 0)
    wide = pgd._start_offsets(6, 5, 3.0, np.random.default_rng(2))
    np.testing.assert_allclose(wide, 3.0 * offsets)  # the spread scales the same public draws
    assert not np.any(pgd._start_offsets(6, 1, 1.0, np.random.default_rng(2)))  # one chain: the warm start itself


# -- the error split (the error block's privacy part) ---------------------------------------------------------------

def _flat_linearisation(d: int) -> pgd.Linearisation:
    """A linearisation with no shrinkage, no noise and starts that are forgotten (basis I)."""
    zeros = np.zeros(d)
    return pgd.Linearisation(basis=np.eye(d), shrink=np.ones(d), carried=zeros, noise=zeros)


def _identity_standardisation(d: int) -> Standardisation:
    """Standardised coefficients are the method's (A = I, no intercept)."""
    return Standardisation(Domain(-np.ones(d), np.ones(d), -1.0, 1.0, intercept_index=None), np.zeros(d),
                           np.ones(d), 0.0, 1.0)


def test_the_error_split_leaves_out_the_share_of_the_start_offsets_the_chains_kept():
    """Chains that keep a share w = 0.6 of their public start offsets on top of their own noise: the share fitted in
    each direction is w up to the noise's projection on the offsets there, and the error split's privacy part is
    the same whatever the offsets' scale (1, 3 or 10 x), where the chains' raw covariance grows with it: the
    offsets, which sum to zero over the chains and so are not in their mean, do not leak into the predicted error.
    Deterministic."""
    d, k = 6, 5
    rng = np.random.default_rng(8)
    noise = rng.normal(0.0, 0.1, (d, k))
    noise -= noise.mean(axis=1, keepdims=True)  # the chains' mean (the estimate) is 0: no bias term
    st, lin = _identity_standardisation(d), _flat_linearisation(d)
    splits, raw = [], []
    for scale in (1.0, 3.0, 10.0):
        offsets = pgd._start_offsets(d, k, scale, np.random.default_rng(2))
        chains = noise + 0.6 * offsets
        expected = 0.6 + np.sum(noise * offsets, axis=1) / np.sum(offsets**2, axis=1)
        np.testing.assert_allclose(pgd.kept_share(chains, offsets), expected, rtol=1e-12)
        splits.append(pgd.error_split(st, lin, chains, offsets).privacy)
        raw.append(np.trace(np.cov(chains)))
    np.testing.assert_allclose(splits[1], splits[0], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(splits[2], splits[0], rtol=1e-9, atol=1e-15)
    assert raw[2] > 20 * raw[0]  # what the raw spread would have put in the error block
    assert not np.any(pgd.kept_share(noise, np.zeros((d, k))))
    assert np.all(pgd.kept_share(noise + 3.0 * offsets, offsets) == 1.0)  # more than all of it: clipped to [0, 1]


def test_a_direction_whose_chains_kept_almost_all_of_their_starts_keeps_its_whole_spread():
    """Chains that kept 95% of their offsets (share above ``KEPT_SHARE_LIMIT``) learned almost nothing in that
    direction: the error split keeps their whole covariance / K there (as before offsets were removed), instead of
    reporting almost no error for a direction the steps never resolved.  Deterministic."""
    d, k = 4, 5
    rng = np.random.default_rng(5)
    noise = rng.normal(0.0, 0.01, (d, k))
    noise -= noise.mean(axis=1, keepdims=True)
    offsets = pgd._start_offsets(d, k, 3.0, np.random.default_rng(6))
    chains = noise + 0.95 * offsets
    assert np.all(pgd.kept_share(chains, offsets) > pgd.KEPT_SHARE_LIMIT)
    split = pgd.error_split(_identity_standardisation(d), _flat_linearisation(d), chains, offsets)
    np.testing.assert_allclose(np.diag(split.privacy), np.diag(np.cov(chains)) / k, rtol=1e-9)


def test_two_chains_fit_no_share():
    """With K = 2 each direction has one degree of freedom, none to spare for a share: the chains' covariance / K
    is used as it is (deterministic)."""
    chains = np.array([[0.3, -0.3], [0.1, -0.1]])
    offsets = np.array([[1.0, -1.0], [0.5, -0.5]])
    split = pgd.error_split(_identity_standardisation(2), _flat_linearisation(2), chains, offsets)
    np.testing.assert_allclose(split.privacy, np.cov(chains) / 2, rtol=1e-12)


def test_the_error_splits_chain_covariance_is_unbiased_after_the_fitted_share():
    """Independent N(0, sigma^2 I) chain noise plus a kept share 0.5 of the offsets (sigma = 0.05: the share is
    significant in more than 99% of directions, :func:`pgd.significant_share`, all but those whose offsets happen to
    be short), 2000 fixed-seed replicates: the mean of the
    phase-2 part's trace times K / d is sigma^2 within 3%.  The share fitted in each direction takes one of its
    K - 1 = 4 degrees of freedom, which the divisor K - 2 gives back (without it the mean is 25% low).  Each
    replicate's trace has d (K - 2) = 18 degrees of freedom, relative sd sqrt(2 / 18) = 0.33, so the mean over
    2000 has 0.0075: the band is 4 sds on either side (false-failure rate below 1e-4)."""
    d, k, sigma, reps = 6, 5, 0.05, 2000
    rng = np.random.default_rng(11)
    st, lin = _identity_standardisation(d), _flat_linearisation(d)
    traces, kept = np.empty(reps), np.empty(reps)
    for r in range(reps):
        offsets = pgd._start_offsets(d, k, 1.0, rng)
        chains = sigma * rng.normal(size=(d, k)) + 0.5 * offsets
        chains -= chains.mean(axis=1, keepdims=True)  # estimate 0: no bias term, only the chains' part
        kept[r] = np.mean(pgd.significant_share(pgd.kept_share(chains, offsets), chains, offsets) > 0.0)
        traces[r] = np.trace(pgd.error_split(st, lin, chains, offsets).privacy)
    assert np.mean(kept) > 0.99
    assert np.mean(traces) * k / d == pytest.approx(sigma**2, rel=0.03)


def test_a_share_fitted_to_the_chains_noise_alone_is_dropped():
    """Chains that kept none of their offsets (pure N(0, sigma^2) noise), 2000 fixed-seed replicates of d = 6
    directions: the least-squares share is positive in about half of the directions, but the one-sided t test at
    ``SHARE_TEST_LEVEL`` = 0.95 keeps it in 5% of them (measured 4.5%; binomial sd over 12,000 directions 0.2%, so
    the band [3%, 7%] is 7 sds wide on either side).  With the share dropped the error split is the chains' whole
    covariance / K, whose mean trace times K / d is sigma^2: the test's rare kept shares remove a little noise, so
    the mean is within [0.93, 1.0] of sigma^2 (measured 0.968, sd of the mean 0.0065: 5 sds from either end)."""
    d, k, sigma, reps = 6, 5, 0.1, 2000
    rng = np.random.default_rng(11)
    st, lin = _identity_standardisation(d), _flat_linearisation(d)
    traces, kept, positive = np.empty(reps), np.empty(reps), np.empty(reps)
    for r in range(reps):
        offsets = pgd._start_offsets(d, k, 1.0, rng)
        chains = sigma * rng.normal(size=(d, k))
        chains -= chains.mean(axis=1, keepdims=True)
        share = pgd.kept_share(chains, offsets)
        positive[r] = np.mean(share > 0.0)
        kept[r] = np.mean(pgd.significant_share(share, chains, offsets) > 0.0)
        traces[r] = np.trace(pgd.error_split(st, lin, chains, offsets).privacy)
    assert 0.4 < np.mean(positive) < 0.6
    assert 0.03 < np.mean(kept) < 0.07
    assert 0.93 * sigma**2 < np.mean(traces) * k / d < sigma**2


def test_the_spread_without_the_offsets_never_exceeds_the_whole_spread_per_coefficient():
    """``capped_spread``: a coefficient whose variance without the kept offsets is above its whole spread's gets the
    whole spread's variance; the others keep theirs; correlations are kept and the result stays positive
    semi-definite.  Deterministic."""
    rng = np.random.default_rng(4)
    B = rng.normal(size=(4, 3))
    residual = B @ B.T
    whole = np.diag(np.diag(residual) * np.array([0.25, 1.0, 4.0, 0.5]))
    capped = capped_spread(residual, whole)
    np.testing.assert_allclose(np.diag(capped), np.minimum(np.diag(residual), np.diag(whole)), rtol=1e-12)
    corr = lambda m: m / np.sqrt(np.outer(np.diag(m), np.diag(m)))  # noqa: E731
    np.testing.assert_allclose(corr(capped), corr(residual), rtol=1e-12)
    assert np.min(np.linalg.eigvalsh(capped)) > -1e-12
    np.testing.assert_array_equal(capped_spread(residual, 2.0 * residual), residual)


def test_a_capped_split_is_capped_again_in_the_units_it_is_mapped_to():
    """``ErrorSplit.in_units``: the capped part is capped after the map, not mapped after its cap.  A map that mixes
    the intercept with the slopes (the pipeline's rescaling) sends the per-coefficient cap of the method's units to
    an intercept variance far above the whole spread's in the new units (here over 10x); mapped with ``in_units`` it is
    at most the whole spread's plus the uncapped rest, which is mapped as it is.  Deterministic."""
    v, u = np.array([3.0, 1.0, 0.5]), np.array([3.0, -1.0, 0.5])
    whole = np.outer(v, v) + 0.01 * np.eye(3)
    part = 4.0 * np.outer(u, u) + 0.01 * np.eye(3)  # capped on every coefficient; other correlations
    rest = np.diag([0.02, 0.03, 0.04])
    split = registry.ErrorSplit(privacy=rest + capped_spread(part, whole), capped=(part, whole))
    A = np.array([[1.0, -3.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 0.5]])  # the intercept row mixes in a slope
    mapped = split.in_units(A)
    expected = A @ rest @ A.T + capped_spread(A @ part @ A.T, A @ whole @ A.T)
    np.testing.assert_allclose(mapped.privacy, expected, rtol=1e-12)
    np.testing.assert_array_less(np.diag(mapped.privacy), np.diag(A @ (rest + whole) @ A.T) * (1 + 1e-12))
    naive = A @ split.privacy @ A.T
    assert naive[0, 0] > 10 * mapped.privacy[0, 0]
    assert mapped.capped is not None and mapped.sampling is None
    plain = registry.ErrorSplit(privacy=rest, sampling=2 * rest).in_units(A)
    np.testing.assert_allclose(plain.privacy, A @ rest @ A.T)
    np.testing.assert_allclose(plain.sampling, 2 * A @ rest @ A.T)


def test_a_fits_error_block_never_exceeds_the_chains_whole_spread_in_the_users_units():
    """A pgd fit on a skewed design with loose bounds (n = 1000, epsilon 1, below n mu = 250: the chains keep much
    of their offsets): in the user's units each coefficient's predicted privacy variance is at most its whole
    spread's plus the linearisation's carried variance and squared bias.  With the cap in the method's units the
    intercept's predicted variance was 148x that bound at this seed (the per-direction fits of the kept share summed
    their errors in the rescaling's mix of intercept and slopes).  Deterministic."""
    captured: dict[str, object] = {}
    split_inputs = pgd.error_split
    split_back = pipeline._split_back

    def capture(st, lin, chains, offsets, tail=None):
        captured.update(st=st, lin=lin, chains=chains.copy())
        return split_inputs(st, lin, chains, offsets, tail)

    def capture_scaling(split, scaling):
        captured["A"] = scaling.coefficient_map()[0]
        return split_back(split, scaling)

    rng = np.random.default_rng(12)
    z = rng.normal(size=(1000, 4))
    X = np.exp(0.75 * z) - 1.0
    y = 1.0 + X @ np.array([0.5, -0.5, 0.5, -0.5]) + rng.normal(size=1000)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pgd, "error_split", capture)
        mp.setattr(pipeline, "_split_back", capture_scaling)
        res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="pgd", x_bounds=[(-1.0, 56.0)] * 4,
                                    y_bounds=(-345.0, 345.0), intercept=True, random_state=2)
    st, lin, chains = captured["st"], captured["lin"], captured["chains"]
    A = captured["A"] @ st.affine_back()[0]
    k = chains.shape[1]
    dev = chains - chains.mean(axis=1, keepdims=True)
    bias = A @ lin.bias(chains.mean(axis=1))
    bound = (A @ (dev @ dev.T / (k * (k - 1.0))) @ A.T + (A @ lin.basis * lin.carried) @ (A @ lin.basis).T
             + np.outer(bias, bias))
    predicted = np.asarray(res.error_bounds.coefficients.privacy)
    np.testing.assert_array_less(predicted**2, np.diag(bound) * (1 + 1e-9))


def test_a_kept_share_leaves_the_bias_and_carried_terms_of_the_intervals_linearisation():
    """Chains that keep a significant share (0.6) of their offsets in every direction, around an estimate that is
    large in the weakest direction, with a linearisation that shrinks (ridge ratios 0.99, 0.95, 0.9) and carries
    phase 1's noise: the error split is the carried variance, the spread without the kept offsets and the bias
    (1 - 1/s) b of that same linearisation (the one the interval's draws use), squared.  The share does not raise
    the bias: read as both phases' start weight it made the squared bias of this estimate 43x larger in the
    weakest direction.  Deterministic."""
    d, k = 3, 5
    rng = np.random.default_rng(9)
    noise = rng.normal(0.0, 0.01, (d, k))
    noise -= noise.mean(axis=1, keepdims=True)
    offsets = pgd._start_offsets(d, k, 1.0, np.random.default_rng(4))
    estimate = np.array([0.1, 0.2, 5.0])
    chains = estimate[:, None] + noise + 0.6 * offsets
    dev = chains - estimate[:, None]
    share = pgd.significant_share(pgd.kept_share(dev, offsets), dev, offsets)
    assert np.all(share > 0.5)
    starts, ratios = np.array([[0.01, 0.02, 0.05], [0.01, 0.02, 0.05]]), np.array([[0.99, 0.95, 0.9]] * 2)
    lin = dataclasses.replace(_flat_linearisation(d), shrink=pgd._shrinkage(*starts, *ratios),
                              carried=np.array([1e-4, 2e-4, 3e-4]))
    split = pgd.error_split(_identity_standardisation(d), lin, chains, offsets).privacy
    residuals = (dev - share[:, None] * offsets) / np.sqrt(k - 2.0)
    spread = capped_spread(residuals @ residuals.T / k, dev @ dev.T / (k * (k - 1.0)))
    bias = lin.bias(estimate)
    np.testing.assert_allclose(split, np.diag(lin.carried) + spread + np.outer(bias, bias), rtol=1e-12)
    raised = pgd._shrinkage(*np.maximum(starts, share), *ratios)  # both phases' start weights raised to the share
    assert ((1.0 - 1.0 / raised[2]) * estimate[2]) ** 2 > 20 * bias[2] ** 2  # measured 43x


def test_the_error_split_is_computed_after_the_estimate_and_the_intervals():
    """The error split draws nothing and changes nothing: a fit whose split is replaced by a constant has the same
    coefficients and intervals, bit for bit (same data and seed, n * mu = 59, where the chains keep part of their
    offsets).  Deterministic."""
    df = _frame(250, 0)
    fit = lambda: dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=3)  # noqa: E731
    reference = fit()
    stub = registry.ErrorSplit(privacy=np.eye(4), privacy_source="stub")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pgd, "error_split", lambda *args: stub)
        other = fit()
    np.testing.assert_array_equal(other.params.to_numpy(), reference.params.to_numpy())
    np.testing.assert_array_equal(other.conf_int().to_numpy(), reference.conf_int().to_numpy())
    assert not np.array_equal(other.error_bounds.coefficients.privacy, reference.error_bounds.coefficients.privacy)


def _spread_fit(df: pd.DataFrame, seed: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(predicted privacy error, variance of the final chains' outputs) per coefficient of a pgd fit whose chains
    start ``scale`` standardised units apart (method units; the same noise draws at every scale)."""
    captured = []

    def capture(st, lin, chains, offsets, tail=None):
        A, _ = st.affine_back()
        captured.append(np.diag(A @ np.cov(chains) @ A.T))
        return split(st, lin, chains, offsets, tail)

    split = pgd.error_split
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pgd, "start_spread", lambda n_mu, d=1: scale)
        mp.setattr(pgd, "error_split", capture)
        res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=seed)
    return res.error_bounds.coefficients.privacy, captured[0]


def test_wider_start_offsets_grow_the_predicted_error_less_than_the_chains_spread():
    """Where the steps leave the chains' starts partly unforgotten (n * mu = 58; 16 data sets, fixed seeds), the same
    data and seed fitted with the chains started 3 standardised units apart instead of 0 (the noise draws are the
    same: the offsets are drawn either way) spread the chains (root mean square over coefficients and data sets of
    log(sd at 3 / sd at 0) above log 3), while the predicted privacy error grows less on the same log scale (a
    split from the chains' raw covariance grows as much as they do): 0.70 as much over these 16 data sets (0.49
    to 0.81 in groups of 4, so 4 data sets were too few for a bound of three quarters); the test asks for at most
    0.8.  The prediction is not invariant: the chains keep large offsets more than small ones (clipped steps move
    at a bounded speed) and some directions more than others, which one fitted share cannot remove.
    Deterministic (fixed seeds)."""
    grown, spread = [], []
    for seed in range(16):
        df = _frame(250, seed)
        (near, near_var), (wide, wide_var) = (_spread_fit(df, seed, scale) for scale in (0.0, 3.0))
        spread.append(0.5 * np.log(wide_var / near_var))
        grown.append(np.log(wide / near))
    spread_rms, grown_rms = (float(np.sqrt(np.mean(np.square(v)))) for v in (spread, grown))
    assert spread_rms > math.log(3.0)
    assert grown_rms < 0.8 * spread_rms, (grown_rms, spread_rms)


def test_the_warm_clip_is_below_the_cap_and_the_final_clip_never_above_it():
    rows, st, _, _ = _unit_rows()
    ledger, rng = PrivacyLedger(100.0, 1e-6), np.random.default_rng(4)
    mu = 5.0  # three releases within the ledger's budget; count noise sd 0.3 of 200 rows: exact reads
    warm, caps = pgd._clips(rows, st, pgd.RowCache(), np.zeros(2), 1, 5000.0, mu, (math.inf, math.inf),
                            ledger=ledger, rng=rng)
    cap = caps[0]
    assert 0 < warm < cap <= caps[1]  # the median at theta = 0 against k (>= 1.5) x the 0.9-quantile there
    far = np.array([50.0, -50.0])  # a start whose residuals are 100 times those at 0
    final, (same, tail) = pgd._clips(rows, st, pgd.RowCache(), far, 2, 5000.0, mu, caps, ledger=ledger, rng=rng)
    assert final == cap == same  # the rule's cap holds
    assert tail == max(pgd.TAIL_FLOOR * cap, caps[1])  # the tail clip: capped at the second cap, at least the floor
    near, (clip, tail) = pgd._clips(rows, st, pgd.RowCache(), np.array([0.1, 0.5]), 2, 5000.0, mu, caps,
                                    ledger=ledger, rng=rng)
    assert near == clip <= tail <= caps[1]
    assert near < cap  # at the solution the residuals are small: the rule's clip there is below the cap


def test_below_n_mu_250_every_clip_read_is_capped_at_a_public_ceiling():
    """Below n mu = CLIP_CEILING_N_MU (250) the histogram's reads are capped at SMALL_CLIP_CEILING k sqrt(d) (k the
    rule's multiple at that n mu; public). With exact reads (mu = 5, 200 rows) at a point whose residuals are about
    100 times those at the solution, every quantile is far above sqrt(d): at n mu = 50 the warm clip, both caps and
    the final clip are the ceiling; at n mu = CLIP_CEILING_N_MU nothing is capped and the same read gives a final
    clip above it. Deterministic."""
    rows, st, _, _ = _unit_rows()
    far = np.array([50.0, -50.0])
    finals = {}
    for n_mu in (50.0, pgd.CLIP_CEILING_N_MU):
        ledger, rng = PrivacyLedger(100.0, 1e-6), np.random.default_rng(4)
        _, k = pgd.clip_rule(n_mu, None, 2)
        ceiling = pgd.clip_ceiling(n_mu, k, 2)
        warm, caps = pgd._clips(rows, st, pgd.RowCache(), far, 1, n_mu, 5.0, (math.inf, math.inf), ledger=ledger,
                                rng=rng)
        final, _ = pgd._clips(rows, st, pgd.RowCache(), far, 2, n_mu, 5.0, caps, ledger=ledger, rng=rng)
        finals[n_mu] = (final, pgd.SMALL_CLIP_CEILING * k * math.sqrt(2.0))
        if n_mu < pgd.CLIP_CEILING_N_MU:
            assert ceiling == pytest.approx(pgd.SMALL_CLIP_CEILING * k * math.sqrt(2.0))
            assert warm == pytest.approx(pgd.WARM_CLIP[1] * ceiling) and caps == (ceiling, ceiling)
            assert final == ceiling
        else:
            assert ceiling == math.inf
    final, would_be_ceiling = finals[pgd.CLIP_CEILING_N_MU]
    assert final > 10 * would_be_ceiling


def test_the_tail_rule_is_a_public_rule_of_n_mu():
    """The tail clip's quantile level 1 - TAIL_ROWS / (n mu) exists only where it is above 0.9, and the tail
    correction gets a share of the budget exactly there (a public fact: n, epsilon, delta); it is released where the
    tail clip read is above the clip (here, a long-tailed response, on either side of the threshold)."""
    threshold = 10.0 * pgd.TAIL_ROWS  # the level 1 - TAIL_ROWS / (n mu) is 0.9 there
    assert pgd.tail_level(threshold) is None and pgd.tail_level(100.0) is None
    assert pgd.tail_level(1.01 * threshold) == pytest.approx(1.0 - pgd.TAIL_ROWS / (1.01 * threshold))
    assert pgd.tail_level(6400.0) == pytest.approx(1.0 - pgd.TAIL_ROWS / 6400.0)
    rng = np.random.default_rng(0)
    mu = gaussian_mu(1.0, 1e-6)
    for n, spent in ((int(0.9 * threshold / mu), False), (int(1.1 * threshold / mu) + 1, True)):
        x = rng.uniform(-1, 1, (n, 1))
        res = dpstats.dp_ols_arrays(x, x[:, 0] + rng.standard_t(2, n) * 0.1, 1.0, 1e-6, intercept=False, method="pgd",
                                    x_bounds=[(-1.0, 1.0)], y_bounds=(-2.0, 2.0), random_state=0)
        names = [step.name for step in res.privacy.steps]
        assert any("tail correction" in name for name in names) == spent
        assert res.privacy.epsilon_spent == pytest.approx(1.0)
        mus = pgd.budget_split(n, 1.0, 1e-6, intercept=True, inference=True)
        assert ("tail correction" in mus) == spent


def test_the_tail_correction_keeps_only_the_coordinates_that_stand_out_of_its_noise():
    """Post-processing, deterministic: the shift -M e is kept where it is more than TAIL_Z noise sds sd ||M_j||; the
    allowance beyond the tail clip is 1 / ((C' / C)^TAIL_DECAY - 1) times the correction taken (C' = 1.5 C: twice)."""
    M = np.array([[0.5, 0.0, 0.0], [0.0, 1.0, 0.5], [0.0, 0.5, 2.0]])
    sd = 0.1
    excess = np.array([-1.0, 0.05, -0.25])
    tail = pgd.tail_correction(excess, M, sd, (2.0, 3.0))
    np.testing.assert_allclose(tail.shift, -M @ excess)
    np.testing.assert_allclose(tail.noise, sd * M)
    assert tail.kept.tolist() == [True, False, True]  # limits 2 sd ||M_j|| = 0.1, 0.22, 0.41 against 0.5, 0.075, 0.475
    np.testing.assert_allclose(tail.applied, [0.5, 0.0, 0.475])
    np.testing.assert_allclose(tail.left, [0.0, 0.075, 0.0])
    np.testing.assert_allclose(tail.applied + tail.left, tail.shift)
    assert pgd.TAIL_DECAY == 1.0
    np.testing.assert_allclose(tail.allowance, [1.0, 0.0, 0.95])


def test_the_tail_correction_needs_the_excess_to_stand_out_of_its_noise_as_a_whole():
    """Post-processing, deterministic: with nine coordinates, one of them 2.2 noise sds out and the others at 0.5,
    the excess's ||e||^2 / sd^2 = 6.84 is a typical chi-square draw with 9 degrees of freedom (p = 0.65), so no
    coefficient takes its correction although one passes the per-coefficient test; the same coordinate at 6 sds
    (p < TAIL_TEST_LEVEL) takes it, and only that one."""
    sd, M = 0.1, np.eye(9)
    excess = sd * np.array([-2.2] + [0.5] * 8)
    tail = pgd.tail_correction(excess, M, sd, (2.0, 3.0))
    assert np.abs(tail.shift[0]) > pgd.TAIL_Z * tail.sd[0]
    assert not tail.kept.any() and not tail.applied.any()
    np.testing.assert_allclose(tail.left, tail.shift)
    excess[0] = -6.0 * sd
    assert pgd.tail_correction(excess, M, sd, (2.0, 3.0)).kept.tolist() == [True] + [False] * 8


def test_the_tail_gap_in_the_error_block_is_the_excess_beyond_its_noise():
    """Post-processing, deterministic: the error block's gap for a correction not taken is the correction left times
    the square root of the excess's signal share (1 - d sd^2 / ||e||^2)^+, so that the squared gaps add up to
    ||e||^2 - d sd^2, the unbiased estimate of the noise-free excess's squared norm: an excess no larger than its
    noise's expected norm adds no gap; one far out of it adds nearly all of what was left."""
    sd, M = 0.1, np.eye(4)
    flat = pgd.tail_correction(sd * np.ones(4), M, sd, (2.0, 3.0))
    assert flat.signal_share == 0.0 and not flat.kept.any()
    far = pgd.tail_correction(sd * np.array([10.0, 0.0, 0.0, 0.0]), M, sd, (2.0, 3.0))
    assert far.signal_share == pytest.approx(0.96)
    assert pgd.tail_correction(np.zeros(4), M, sd, (2.0, 3.0)).signal_share == 0.0
    st, lin, chains = _identity_standardisation(4), _flat_linearisation(4), np.zeros((4, 1))
    privacy = lambda tail: np.diag(pgd.error_split(st, lin, chains, chains, tail).privacy)  # noqa: E731
    np.testing.assert_allclose(privacy(flat), privacy(None))
    assert far.kept.tolist() == [True, False, False, False]
    untaken = dataclasses.replace(far, kept=np.zeros(4, dtype=bool))
    np.testing.assert_allclose(privacy(untaken) - privacy(None), 0.96 * untaken.left**2)


def test_the_step_scale_is_the_secant_where_the_step_passed_the_minimum():
    """Post-processing, deterministic: the whole step unless the released derivative at its end is more than
    TAIL_CHECK_Z noise sds above 0; then the secant's zero of the two derivatives (0 where the loss did not fall
    along the step at its start)."""
    sd = 0.1
    assert pgd.TAIL_CHECK_Z == 2.0
    assert pgd.step_scale(np.array([-3.0, -1.0]), sd) == 1.0  # not passed
    assert pgd.step_scale(np.array([-3.0, 0.2]), sd) == 1.0  # passed by no more than its noise shows
    assert pgd.step_scale(np.array([-3.0, 1.0]), sd) == pytest.approx(0.75)
    assert pgd.step_scale(np.array([-3.0, 9.0]), sd) == pytest.approx(0.25)
    assert pgd.step_scale(np.array([0.5, 1.0]), sd) == 0.0


def test_a_scaled_correction_keeps_its_tests_and_adds_what_it_left_out_to_the_allowance():
    """Post-processing, deterministic: scaling the correction scales each coordinate's shift and noise, keeps the
    coefficients that took it, and adds the part of the correction taken that the scale left out to the allowance,
    on the same side, which still counts the gap beyond the tail clip of the whole correction (the first test's
    correction: C' = 1.5 C, so that gap is twice the correction taken)."""
    M = np.array([[0.5, 0.0, 0.0], [0.0, 1.0, 0.5], [0.0, 0.5, 2.0]])
    tail = pgd.tail_correction(np.array([-1.0, 0.05, -0.25]), M, 0.1, (2.0, 3.0))
    share = np.where(tail.kept, 0.25, 1.0)  # as the fit scales it
    part = tail.scaled(share)
    assert part.kept.tolist() == tail.kept.tolist() == [True, False, True]
    np.testing.assert_allclose(part.applied, share * tail.applied)
    np.testing.assert_allclose(part.left, tail.left)
    np.testing.assert_allclose(part.noise, share[:, None] * tail.noise)
    np.testing.assert_allclose(part.allowance, 2.0 * tail.applied + (1.0 - share) * tail.applied)
    np.testing.assert_allclose(tail.scaled(np.ones(3)).allowance, tail.allowance)


def _skewed_frame(n: int, seed: int) -> pd.DataFrame:
    """A zero-inflated, right-skewed response whose large values grow with x (heteroscedastic): a long tail on one
    side, as with spending or counts."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 10.0, n)
    y = 0.5 * x + np.where(rng.uniform(size=n) < 0.7, 0.0, rng.exponential(1.0 + 0.5 * x))
    return pd.DataFrame({"x": x, "y": y})


def test_a_one_sided_tail_moves_the_fit_towards_least_squares(monkeypatch):
    """n = 20,000 at epsilon 1 (n mu = 4,700): the clip at a multiple of the 0.9-quantile leaves the long right tail
    clipped and the slope 9 OLS standard errors below least squares at the median of 5 seeds (TAIL_CAP = 1: the tail
    clip held at its floor, TAIL_FLOOR times the clip, so the correction reaches little of the tail); with the tail
    correction at the read tail quantile (kept for the slope in every fit) the gap shrinks by more than half
    (measured: median 0.061 -> 0.016, 2.4 standard errors, since session 56; 0.062 -> 0.024 before).  Deterministic
    (fixed seeds)."""
    df = _skewed_frame(20_000, 0)
    ols = float(np.polyfit(df["x"], df["y"], 1)[0])
    bounds = {"x": (0.0, 10.0), "y": (0.0, 60.0)}

    def gaps() -> tuple[float, list[bool]]:
        fits = [dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, method="pgd", random_state=seed)
                for seed in range(5)]
        return float(np.median([abs(r.params["x"] - ols) for r in fits])), [r.info["tail_corrected"] > 0 for r in fits]

    with_tail, raised = gaps()
    assert all(raised)
    monkeypatch.setattr(pgd, "TAIL_CAP", 1.0)  # the tail clip at its floor
    without, _ = gaps()
    assert with_tail < 0.5 * without


def _rainy_frame(n: int, seed: int) -> pd.DataFrame:
    """Delays on a rain predictor that is 0 in 96% of rows and exponential in the rest (its rare large values sit
    far beyond the Gram matrix's ball of standardised rows), with a right tail that grows with the rain: as
    flights_weather's departure delays on precipitation."""
    rng = np.random.default_rng(seed)
    rain = np.where(rng.uniform(size=n) < 0.04, rng.exponential(0.15, n), 0.0).clip(0.0, 4.0)
    x = rng.uniform(0.0, 10.0, n)
    y = -5.0 + 0.5 * x + 40.0 * rain + rng.exponential(15.0 * (1.0 + 10.0 * rain), n)
    return pd.DataFrame({"y": y.clip(-20.0, 600.0), "x": x, "rain": rain})


def test_the_checked_tail_correction_does_not_pass_least_squares(monkeypatch):
    """Regression (session 56; flights_weather's correction overshot least squares several times over): on the rainy
    delays above (n = 20,000, epsilon 3, seed 1) the one-step correction with the Gram's curvature moves the rain's
    coefficient past least squares (measured 227.9 against 188.7); its check finds that the step passed the tail
    clip's loss's minimum and takes 0.18 of it, which leaves the coefficient on the near side of least squares
    (151.8), with an interval that covers it ([117.6, 272.9]).  Deterministic (fixed seeds; of seeds 0-2 only seed 1
    takes a correction, so this is the one fit that shows the check)."""
    df = _rainy_frame(20_000, 0)
    ols = float(np.linalg.lstsq(np.column_stack([np.ones(len(df)), df["x"], df["rain"]]), df["y"], rcond=None)[0][2])
    bounds = {"y": (-20.0, 600.0), "x": (0.0, 10.0), "rain": (0.0, 4.0)}
    fit = lambda: dpstats.dp_ols("y ~ x + rain", df, 3.0, 1e-6, bounds=bounds, method="pgd",  # noqa: E731
                                 random_state=1)
    checked = fit()
    monkeypatch.setattr(pgd, "TAIL_CHECK_Z", 1e300)  # the whole step, as before session 56
    whole = fit()
    assert checked.info["tail_corrected"] > 0 and min(checked.info["tail_step"]) < 0.5
    assert whole.params["rain"] > ols > checked.params["rain"]
    lo, hi = checked.conf_int().loc["rain"]
    assert lo < ols < hi


def test_a_correction_not_taken_still_moves_the_interval_and_the_error_block(monkeypatch):
    """The interval targets the less clipped fit in every coefficient: on the one-sided tail above (n = 20,000,
    epsilon 1, seed 0), where the slope takes its correction, the same fit with the test forced to keep nothing
    has the uncorrected slope (0.072 lower: many half-widths) but an interval centred within a tenth of a
    half-width of the corrected fit's (measured 0.644 and 0.644), and an error block whose privacy part counts the
    correction it left, times the excess's signal share (0.0713 against the gap 0.0718; 0.0097 with the correction
    taken; figures since session 56's split of the correction's budget).
    Deterministic (fixed seed)."""
    df = _skewed_frame(20_000, 0)
    bounds = {"x": (0.0, 10.0), "y": (0.0, 60.0)}
    monkeypatch.setattr(pgd, "TAIL_DECAY", 60.0)  # no allowance beyond the tail clip (the next test has it)
    taken = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, method="pgd", random_state=0)
    original = pgd.tail_correction
    monkeypatch.setattr(pgd, "tail_correction",
                        lambda *args: dataclasses.replace(original(*args), kept=np.zeros(2, dtype=bool)))
    left = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, method="pgd", random_state=0)
    assert taken.info["tail_corrected"] > 0 and left.info["tail_corrected"] == 0
    (lo, hi), (lo2, hi2) = taken.conf_int().loc["x"], left.conf_int().loc["x"]
    half = (hi - lo) / 2
    gap = taken.params["x"] - left.params["x"]
    assert gap > 2 * half
    assert abs((lo + hi) / 2 - (lo2 + hi2) / 2) < 0.1 * half
    assert left.error_bounds.coefficients.privacy[1] > 0.9 * gap > taken.error_bounds.coefficients.privacy[1]


def test_a_taken_correction_extends_the_interval_beyond_the_tail_clip(monkeypatch):
    """The one-sided tail above (n = 20,000, epsilon 1, seed 2, the tail clip at the level 1 - 64 / (n mu), where it
    leaves a wider gap than the default's 32 rows): the slope takes its correction and least squares
    (0.654) still lies beyond the corrected fit's interval without the allowance for the gap beyond the tail clip
    ([0.609, 0.649]).  With it the interval reaches further on the correction's side only (upper end 0.667, the
    lower end bit for bit the same) and covers least squares; the error block adds the allowance's second moment
    (0.0081 -> 0.0167) and the estimate is unchanged.  Deterministic (fixed seed; seed 2 since session 56's check of
    the correction's step redrew the correction's noise: at seed 0 the interval without the allowance already
    covered least squares)."""
    df = _skewed_frame(20_000, 0)
    ols = float(np.polyfit(df["x"], df["y"], 1)[0])
    bounds = {"x": (0.0, 10.0), "y": (0.0, 60.0)}
    fit = lambda: dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, bounds=bounds, method="pgd", random_state=2)  # noqa: E731
    monkeypatch.setattr(pgd, "TAIL_ROWS", 64.0)
    extended = fit()
    monkeypatch.setattr(pgd, "TAIL_DECAY", 60.0)  # allowance 1 / (1.5^60 - 1): none
    plain = fit()
    assert extended.info["tail_corrected"] > 0
    assert extended.params["x"] == plain.params["x"]
    (lo, hi), (lo0, hi0) = extended.conf_int().loc["x"], plain.conf_int().loc["x"]
    assert lo == lo0 and hi > hi0 + 0.4 * (hi0 - lo0)
    assert hi0 < ols < hi
    assert (extended.error_bounds.coefficients.privacy[1]
            > 2 * plain.error_bounds.coefficients.privacy[1])


def test_stretch_beyond_moves_one_side_of_each_coordinate():
    """``stretch_beyond``: draws on the far side of each coordinate's median from its allowance move by -U a, the
    others stay; a zero allowance leaves a coordinate alone; the basic interval's end on the allowance's side moves
    by nearly |a| (U's 0.95-quantile and the draws' tail mix), the other end not at all.  Deterministic."""
    rng = np.random.default_rng(3)
    draws = rng.normal(size=(4000, 3))
    allowance = np.array([1.0, -2.0, 0.0])
    out = pgd.stretch_beyond(draws, allowance, np.random.default_rng(4))
    med = np.median(draws, axis=0)
    np.testing.assert_array_equal(out[:, 2], draws[:, 2])
    np.testing.assert_array_equal(out[draws[:, 0] > med[0], 0], draws[draws[:, 0] > med[0], 0])
    np.testing.assert_array_equal(out[draws[:, 1] < med[1], 1], draws[draws[:, 1] < med[1], 1])
    assert np.all(out[:, 0] <= draws[:, 0]) and np.all(out[:, 1] >= draws[:, 1])
    q = lambda x, p: np.quantile(x, p, axis=0)  # noqa: E731
    assert q(out, 0.975)[0] == q(draws, 0.975)[0] and q(out, 0.025)[1] == q(draws, 0.025)[1]
    assert 0.6 < q(draws, 0.025)[0] - q(out, 0.025)[0] < 1.0
    assert 1.2 < q(out, 0.975)[1] - q(draws, 0.975)[1] < 2.0


def test_a_symmetric_tail_keeps_the_rules_fit():
    """Normal errors with a rare factor level (5% of 20,000 rows: large leverage, so the largest gradient norms are
    its rows, on both sides): the gradients beyond the clip balance, and a coefficient's tail correction stands out
    of its noise only at about the noise test's level (TAIL_TEST_LEVEL 0.05): at most 2 of 10 fits take one, so the
    fit stays the rule's.  Since session 56 the level's dummy is scaled from its released centre on this narrow
    design too (|z| = 4, was 8): over noise seeds 0-39, 3 fits took a correction (seeds 1, 11, 33), none before; 1
    of 10 here.  At the measured rate 3 / 40 a re-seeded run fails with probability about 3%."""
    rng = np.random.default_rng(1)
    n = 20_000
    g = np.where(rng.uniform(size=n) < 0.05, "rare", "common")
    x = rng.uniform(0.0, 10.0, n)
    df = pd.DataFrame({"x": x, "g": pd.Categorical(g, categories=["common", "rare"]),
                       "y": 1.0 + 0.5 * x + (g == "rare") + rng.normal(0.0, 1.0, n)})
    corrected = [dpstats.dp_ols("y ~ x + C(g)", df, 1.0, 1e-6, bounds={"x": (0.0, 10.0), "y": (-10.0, 20.0)},
                                method="pgd", random_state=seed).info["tail_corrected"] for seed in range(10)]
    assert sum(c > 0 for c in corrected) <= 2


# -- data read in chunks --------------------------------------------------------------------------------------------

def _same(a, b) -> None:
    np.testing.assert_allclose(b.params.to_numpy(), a.params.to_numpy(), rtol=1e-9, atol=1e-12)
    assert [(s.name, s.count) for s in a.privacy.steps] == [(s.name, s.count) for s in b.privacy.steps]
    if a.inference_available:
        np.testing.assert_allclose(b.conf_int().to_numpy(), a.conf_int().to_numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("bounds", [BOUNDS, None], ids=["bounds", "no bounds"])
def test_chunked_fits_equal_the_in_memory_fit(df, tmp_path, bounds):
    pytest.importorskip("pyarrow")
    dd = pytest.importorskip("dask.dataframe")
    csv, parquet = tmp_path / "d.csv", tmp_path / "d.parquet"
    df.to_csv(csv, index=False)
    df.to_parquet(parquet, row_group_size=700)
    fit = lambda data: dpstats.dp_ols(FORMULA, data, 2.0, 1e-6, method="pgd", bounds=bounds, random_state=7,  # noqa: E731
                                      **STEPS)
    reference = fit(df)
    for data in (CSVSource([str(csv)], chunksize=777), ParquetSource(str(parquet), batch_size=1000),
                 dd.from_pandas(df, npartitions=4)):
        got = fit(data)
        _same(reference, got)
        assert any("read in chunks" in note for note in got.privacy.notes)


def test_in_memory_chunks_equal_one_chunk(df):
    X = np.column_stack([np.ones(len(df)), df.x1 / 5 - 1, df.x2 / 4])
    y = df.y.to_numpy() / 30
    ranges = [(1.0, 1.0), (-1.0, 1.0), (-1.0, 1.0)]

    def run(chunk_rows):
        return pgd.SPEC.fit_arrays(X, y, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(4),
                                   intercept_index=0, column_ranges=ranges, response_range=(-1.0, 1.0),
                                   chunk_rows=chunk_rows, steps=6)

    a, b = run(None), run(501)
    np.testing.assert_allclose(b.params, a.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.inference.draws, a.inference.draws, rtol=1e-8, atol=1e-12)


# -- accuracy and coverage ------------------------------------------------------------------------------------------

def test_accuracy_and_coverage_on_a_simulated_design():
    """40 data sets of n = 4000 (x1 ~ U[0, 10], x2 ~ N(0, 1), honest bounds), epsilon = 2: the headline slope's
    95% interval covers the truth in at least 31 of 40 fits and the median relative error is below 0.1.

    Measured at these seeds: coverage 39/40, median relative error 0.03.  With the nominal coverage of 0.95 the
    chance of 9 or more misses out of 40 is below 1e-3 (binomial), so the false-failure rate is below 1e-3; the
    accuracy bound is three times the measured median.
    """
    covered, errors = 0, []
    for seed in range(40):
        data = _frame(4000, seed=100 + seed)
        res = dpstats.dp_ols("y ~ x1 + x2", data, 2.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=seed)
        lo, hi = res.conf_int().loc["x1"]
        covered += int(lo <= 0.5 <= hi)
        errors.append(abs(res.params["x1"] - 0.5) / 0.5)
    assert covered >= 31
    assert np.median(errors) < 0.1


# -- the sampling part of the error block ------------------------------------------------------------------------

def _uniform_design(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, tuple[float, float]]]:
    """Four U[-1, 1] covariates, y = 0.5 + x'(0.3, 0.53, 0.77, 1) + N(0, 1) (R^2 about 0.4), declared bounds."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, 4))
    data = pd.DataFrame(X, columns=["x1", "x2", "x3", "x4"])
    data["y"] = 0.5 + X @ np.linspace(0.3, 1.0, 4) + rng.normal(0.0, 1.0, n)
    return data, {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "x3": (-1.0, 1.0), "x4": (-1.0, 1.0), "y": (-5.0, 5.0)}


def _sampling_over_ols_se(n: int, seed: int) -> np.ndarray:
    """The error block's sampling sd of the four slopes over their classical OLS standard errors (epsilon 1)."""
    data, bounds = _uniform_design(n, seed)
    res = dpstats.dp_ols("y ~ x1 + x2 + x3 + x4", data, 1.0, 1e-6, method="pgd", bounds=bounds, random_state=seed)
    X = np.column_stack([np.ones(n), data[["x1", "x2", "x3", "x4"]].to_numpy()])
    coef, rss = np.linalg.lstsq(X, data.y.to_numpy(), rcond=None)[:2]
    se = np.sqrt(rss[0] / (n - 5) * np.diag(np.linalg.inv(X.T @ X)))
    errors = res.error_bounds.coefficients
    assert errors.names == ("Intercept", "x1", "x2", "x3", "x4")
    return errors.sampling[1:] / se[1:]


def test_the_sampling_part_is_no_longer_far_too_small_at_small_n_mu():
    """n = 160, d = 5, epsilon 1 (n mu about 37; the inference 2-vector's n mu about 4, so its noise is as large
    as its coordinates): over 10 fixed seeds the median of each slope's sampling sd over its OLS standard error is
    within a factor 3 of 1, and no fit states it below a tenth.

    Before the conservative bounds (:func:`pgd.sandwich`) these ratios had medians 0.14-0.17 at these seeds and
    fell to 0 in some fits, so the error block overstated privacy against sampling by orders of magnitude.
    Measured with them: medians 1.3-1.8, smallest ratio 0.17 (a fit whose private clip came out tiny).  A single
    fit is not held to the factor 3: at this n mu the 2-vector cannot resolve its statistics, so the bounds
    overstate by up to about 15 in fits whose clip came out large (the direction the bounds are built to err in);
    the median over the seeds is the check on the rule, the floor of 0.1 the check that no fit is orders of
    magnitude too small.
    """
    ratios = np.array([_sampling_over_ols_se(160, seed) for seed in range(10)])
    assert np.all(np.abs(np.log(np.median(ratios, axis=0))) < math.log(3.0))
    assert ratios.min() > 0.1


def test_the_sampling_part_is_unchanged_where_n_mu_is_large():
    """n = 20000, epsilon 1 (the 2-vector's n mu about 500): each slope's sampling sd is within [0.85, 1.2] of the
    classical OLS standard error in 3 fixed-seed fits (measured 0.99-1.08; 0.97-1.06 before the bounds).  The
    bounds move the clipped sum of squares and the unclipped count by 1.645 sqrt(2) / mu, about 4% and 0.5% of
    them here (2% in the sd); the clip at this n mu leaves under 1% of the rows clipped, so the Huber-type
    sandwich is near least squares'; the tolerance adds the sampling noise of the two plug-in variance estimates
    and of the released Gram matrix."""
    for seed in range(3):
        ratio = _sampling_over_ols_se(20_000, seed)
        assert np.all((ratio > 0.85) & (ratio < 1.2)), ratio


def test_the_sandwich_bounds_vanish_with_little_noise_and_cap_at_the_public_maximum():
    """:func:`pgd.sandwich`: with the 2-vector's noise sd a small share of its coordinates the sandwich is the
    plug-in (E psi^2 / phi^2) G^-1 to within that share; with a clip above the public bound B on the gradient
    norms no row can be clipped (phi = 1) and E psi^2 is capped at rows B^2 / trace(G), whatever the clip."""
    gram = np.diag([12_000.0, 10_000.0, 6_000.0])  # rows = 10^4, trace below rows * d: not rescaled
    noisy, clip, rows, mu = np.array([2000.0, 9500.0]), 1.5, 10_000.0, 20.0
    plug_in = (noisy[0] * clip**2 / np.trace(gram)) / (noisy[1] / rows) ** 2 * np.linalg.inv(gram)
    got = pgd.sandwich(noisy, gram, clip, rows, mu, norm_bound=50.0)
    margin = pgd.SAMPLING_Z * math.sqrt(2.0) / mu
    assert np.all(got >= plug_in - 1e-15)
    np.testing.assert_allclose(got, plug_in, rtol=margin / noisy[0] + 3 * margin / noisy[1])
    capped = [pgd.sandwich(np.array([500.0, 1.0]), gram, c, rows, mu, norm_bound=0.1) for c in (1.0, 1e3)]
    np.testing.assert_allclose(capped[0], capped[1])
    np.testing.assert_allclose(capped[0], rows * 0.1**2 / np.trace(gram) * np.linalg.inv(gram))


def test_the_sandwich_never_states_a_zero_sampling_error():
    """A released clipped sum of squares far below 0 (its noise, at small n * mu) reads as the noise margin
    z sqrt(2) / mu, not as 0: the sampling part stays positive (it was exactly 0 before)."""
    gram, rows, mu = np.diag([40.0, 30.0]), 50.0, 0.1
    got = pgd.sandwich(np.array([-400.0, 30.0]), gram, 1.0, rows, mu, norm_bound=10.0)
    margin = pgd.SAMPLING_Z * math.sqrt(2.0) / mu
    phi = max(30.0 - margin, rows - margin) / rows
    np.testing.assert_allclose(got, margin / np.trace(gram) / phi**2 * np.linalg.inv(gram))
    assert np.all(np.diag(got) > 0)


def test_the_sandwich_scales_a_noise_floored_gram_matrix_down_to_the_standardised_trace():
    """A floored Gram matrix whose trace is above rows * d (its noise floor above the rows' curvature) is scaled
    down to that trace, shape kept: the sandwich is then the one of the scaled matrix."""
    floored, scaled = np.diag([900.0, 600.0]), np.diag([150.0, 100.0])  # rows 125, d 2: trace 1500 -> 250
    noisy = np.array([60.0, 100.0])
    np.testing.assert_allclose(pgd.sandwich(noisy, floored, 1.0, 125.0, 0.5, norm_bound=10.0),
                               pgd.sandwich(noisy, scaled, 1.0, 125.0, 0.5, norm_bound=10.0))


def test_the_sampling_part_is_resolved_only_where_the_released_share_clears_its_floor():
    """:func:`pgd.sampling_resolved`: the released lower bound on the unclipped share phi decides; where it falls
    below the sandwich's floor (a clip far under the gradient norms, as small n * mu makes it: prestige at
    epsilon 1 released an unclipped count of -14 of 102 rows, and the sandwich stated a sampling error 65 times
    below least squares') the floor, not the data, set phi; a clip above the gradient norms' bound always
    resolves it (phi = 1)."""
    rows, mu = 102.0, 0.237
    margin = pgd.SAMPLING_Z * math.sqrt(2.0) / mu
    assert not pgd.sampling_resolved(np.array([142.9, -14.4]), 0.005, rows, mu, norm_bound=7.2)
    assert pgd.sampling_resolved(np.array([5.0, rows]), 1.0, rows, mu, norm_bound=7.2) == (
        (rows - margin) / rows >= pgd.UNCLIPPED_SHARE_FLOOR)
    assert pgd.sampling_resolved(np.array([2000.0, 9500.0]), 1.5, 10_000.0, 20.0, norm_bound=50.0)
    assert pgd.sampling_resolved(np.array([142.9, -14.4]), 10.0, rows, mu, norm_bound=7.2)


def test_an_unresolved_sampling_part_is_an_assumption_in_the_error_block_and_leaves_the_intervals(monkeypatch):
    """Where the released 2-vector does not resolve the sandwich (:func:`pgd.sampling_resolved`), the error block
    shows the public assumption's sampling part, flagged as assumed (no statement of which part is larger), while
    the intervals, which keep the sandwich, are those of the same fit with it resolved."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 10, 200)
    df = pd.DataFrame({"x": x, "y": 2.0 + 0.5 * x + rng.normal(0, 1, 200)})
    fit = partial(dpstats.dp_ols, "y ~ x", df, 1.0, method="pgd", bounds={"x": (0, 10), "y": (-10, 20)},
                  random_state=5)
    monkeypatch.setattr(pgd, "sampling_resolved", lambda *args: True)
    resolved = fit()
    monkeypatch.setattr(pgd, "sampling_resolved", lambda *args: False)
    unresolved = fit()
    assert not resolved.error_bounds.coefficients.sampling_assumed
    assert unresolved.error_bounds.coefficients.sampling_assumed
    assert "not released but an assumption" in unresolved.error_bounds.coefficients.statement()
    pd.testing.assert_frame_equal(resolved.conf_int(), unresolved.conf_int())
    pd.testing.assert_series_equal(resolved.params, unresolved.params)


def test_the_gradient_norm_bound_holds_for_every_row():
    """:func:`pgd.gradient_norm_bound` bounds ||z|| |z' theta - v| over rows at the corners of the domain."""
    st = Standardisation(Domain(np.array([1.0, -2.0]), np.array([1.0, 2.0]), -3.0, 3.0, intercept_index=0),
                         centre=np.array([0.0, 0.3]), scale=np.array([1.0, 0.5]), y_centre=-0.2, y_scale=0.4)
    theta = np.array([0.7, -1.3])
    corners = np.array([[1.0, x, y] for x in (-2.0, 2.0) for y in (-3.0, 3.0)])
    Z, v = st.design(corners[:, :2]), st.response(corners[:, 2])
    norms = np.linalg.norm(Z, axis=1) * np.abs(Z @ theta - v)
    assert norms.max() <= pgd.gradient_norm_bound(st, theta) + 1e-12


def _alternating_design(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Four AR(0.6)-correlated normal covariates with alternating slopes +-0.5 (they load on the design's weakest
    directions), y = 1 + x'beta + N(0, 1): the coverage grid's correlated design at d = 5."""
    rng = np.random.default_rng(seed)
    idx = np.arange(4)
    X = rng.standard_normal((n, 4)) @ np.linalg.cholesky(0.6 ** np.abs(idx[:, None] - idx[None, :])).T
    beta = np.array([0.5, -0.5, 0.5, -0.5])
    return X, 1.0 + X @ beta + rng.standard_normal(n), beta


def test_the_interval_undoes_the_shrinkage_the_chains_share():
    """60 data sets of n = 10^4 from the alternating design with tight bounds, epsilon = 1: the noise-level ridge
    shrinks the estimate by about half a standard error towards 0 in every slope (a bias common to the chains,
    which their spread does not show: without the correction the intervals covered 0.90 here), and the
    interval's centre, S^-1 b, is back on the truth.

    Signed errors are sign(beta_j) (value - beta_j) / se_j, averaged over fits and slopes.  Measured at these
    seeds: estimate -0.55, interval centre +0.14, coverage 0.95 (over 200 data sets: -0.56, +0.08, 0.955; the
    60-fit mean has sd 0.09).  The bounds are 3.4 to 4.1 sds from the 200-fit means (false-failure rate below
    1e-3);
    the uncorrected interval (centre -0.56) fails the centre's bound.  Coverage of the 240 slopes >= 0.88 is
    3.5 sds below 0.955 (binomial, inflated 1.5x for the slopes' correlation within a fit).
    """
    covered, est_errors, centre_errors = [], [], []
    for seed in range(60):
        X, y, beta = _alternating_design(10_000, 700 + seed)
        res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="pgd", x_bounds=[(-2.33, 2.33)] * 4,
                                    y_bounds=(-2.0, 4.0), intercept=True, random_state=seed)
        ci, est, se = res.conf_int().to_numpy()[1:], res.params.to_numpy()[1:], res.bse.to_numpy()[1:]
        covered.append((ci[:, 0] <= beta) & (beta <= ci[:, 1]))
        est_errors.append(np.sign(beta) * (est - beta) / se)
        centre_errors.append(np.sign(beta) * (ci.mean(axis=1) - beta) / se)
    assert np.mean(est_errors) < -0.25  # the shrinkage is there
    assert -0.25 < np.mean(centre_errors) < 0.45
    assert np.mean(covered) >= 0.88


# -- method="auto" ------------------------------------------------------------------------------------------------

def _facts(n: int, d: int = 4, epsilon: float = 1.0, bounds: bool = True, **kw) -> AutoFacts:
    return AutoFacts(n=n, d=d, epsilon=epsilon, delta=1e-6, bounds=bounds, unbounded=0 if bounds else d, **kw)


@pytest.mark.parametrize("n,epsilon,expected", [
    (60, 1.0, "dpsgd"),      # n mu = 14.2: no method here gives an interval
    (64, 1.0, "pgd"),        # n mu = 15.1: pgd's (wide) interval
    (300, 1.0, "pgd"),       # n mu = 71
    (423, 1.0, "pgd"),       # n mu = 100.1
    (300, 3.0, "pgd"),       # n mu = 194
    (99_999, 1.0, "pgd"),
    (100_000, 1.0, "adassp"),
    (1_000, 0.5, "pgd"),     # n mu = 124
    (700, 0.5, "pgd"),       # n mu = 87
    (100, 0.5, "dpsgd"),     # n mu = 12.4
])
def test_auto_rule_with_bounds(n, epsilon, expected):
    spec, _ = choose_auto(_facts(n, epsilon=epsilon))
    assert spec.name == expected


def test_auto_without_bounds_uses_pgd_only_where_its_domain_is_affordable():
    assert choose_auto(_facts(5_000, bounds=False))[0].name == "pgd"
    small = choose_auto(_facts(300, bounds=False))  # the domain would take more than half the budget
    assert small is None or small[0].name != "pgd"
    assert choose_auto(_facts(300_000, bounds=False))[0].name == "tukey"  # pgd only below 10^5 rows


def test_auto_names_theilsen_only_when_it_is_registered(monkeypatch):
    facts = _facts(300, d=2)
    assert "theilsen" in available_methods() or choose_auto(facts)[0].name == "pgd"
    fake = dataclasses.replace(get_method("dpsgd"), name="theilsen")
    monkeypatch.setitem(registry._REGISTRY, "theilsen", fake)
    assert choose_auto(facts)[0].name == "theilsen"
    assert choose_auto(_facts(50, d=2))[0].name == "theilsen"  # below pgd's interval threshold too
    assert choose_auto(_facts(300, d=3))[0].name == "pgd"  # one predictor only
    assert choose_auto(_facts(300, d=2, intercept=False))[0].name == "pgd"
    assert choose_auto(_facts(50, d=3))[0].name == "dpsgd"


def test_auto_skips_theilsen_for_a_boolean_response():
    """A boolean response (0/1, public from its dtype) takes two values, where Theil-Sen's median line is not
    least squares' line: auto fits pgd (or DP-SGD below pgd's interval threshold) instead; a float response
    with the same values is not two-valued by any public fact and keeps Theil-Sen."""
    facts = _facts(300, d=2)
    assert choose_auto(facts)[0].name == "theilsen"
    assert choose_auto(dataclasses.replace(facts, two_valued_response=True))[0].name == "pgd"
    assert choose_auto(dataclasses.replace(_facts(50, d=2), two_valued_response=True))[0].name == "dpsgd"
    rng = np.random.default_rng(5)
    g = (rng.uniform(size=250) < 0.5).astype(int)
    df = pd.DataFrame({"g": g, "y": rng.uniform(size=250) < 0.3 + 0.2 * g})
    formula = "y ~ C(g, levels=[0, 1])"
    assert dpstats.dp_ols(formula, df, 1.0, 1e-6, random_state=0).method == "pgd"
    assert dpstats.dp_ols("I(1 - y) ~ C(g, levels=[0, 1])", df, 1.0, 1e-6, random_state=0,
                          bounds={"y": (0, 1)}).method == "pgd"
    as_float = df.assign(y=df["y"].astype(float))
    assert dpstats.dp_ols(formula, as_float, 1.0, 1e-6, bounds={"y": (0, 1)}, random_state=0).method == "theilsen"


def test_auto_below_the_threshold_says_why_there_is_no_interval():
    small = _frame(50)  # n mu = 11.6 at epsilon = 0.98 (after the missing-value screen): below the threshold
    res = dpstats.dp_ols(FORMULA, small, 1.0, 1e-6, bounds=BOUNDS, random_state=0)
    assert res.method == "dpsgd" and "n * mu = 11.6" in res.privacy.method_choice
    reason = res.inference_reason
    assert reason.startswith("method='auto' fitted DP-SGD's point estimate, which has no interval")
    assert "below 15" in reason and "pgd reports intervals from n >= 65 rows" in reason
    assert "its sign included" in reason and "barely move" not in reason  # DP-SGD's steps do move: it can be biased
    assert res.bse.isna().all()


def test_auto_between_the_thresholds_reports_pgds_wide_interval():
    res = dpstats.dp_ols(FORMULA, _frame(300), 1.0, 1e-6, bounds=BOUNDS, random_state=0)  # n mu = 69.7 at 0.98
    assert res.method == "pgd" and "n * mu = 69.7" in res.privacy.method_choice
    assert "never excluding 0 with the wrong sign" in res.privacy.method_choice
    assert np.isfinite(res.conf_int().to_numpy()).all() and not res.inference_reason


# -- a two-valued response: the clip's quantile from the rarer value's released share ---------------------------------

def test_clip_rule_lowers_the_multiple_on_a_wide_design_only():
    assert pgd.clip_rule(5000.0, d=pgd.CLIP_D_REF)[1] == pgd.clip_rule(5000.0)[1]
    assert pgd.clip_rule(5000.0, d=3)[1] == pgd.clip_rule(5000.0)[1]  # a narrow design keeps the rule
    wide = pgd.clip_rule(5000.0, d=40)[1]  # n mu' = 5000 / 16 = 312.5: above 250, exponent 0.2
    assert wide == pytest.approx(pgd.CLIP_MULTIPLE * (5000.0 / 16.0 / 250.0) ** pgd.CLIP_EXPONENTS[1])
    assert pgd.clip_rule(5000.0, d=80)[1] == pytest.approx(  # n mu' = 78.1: below 250, exponent 0.3
        pgd.CLIP_MULTIPLE * (5000.0 / 64.0 / 250.0) ** pgd.CLIP_EXPONENTS[0])
    assert pgd.clip_rule(5000.0, 0.08, 40)[0] == pgd.clip_rule(5000.0, 0.08)[0]  # the quantile does not change


def test_clip_rule_reads_a_higher_quantile_for_a_rare_two_valued_response():
    assert pgd.clip_rule(500.0)[0] == 0.9
    assert pgd.clip_rule(500.0, 0.5)[0] == 0.9
    assert pgd.clip_rule(500.0, 0.4)[0] == 0.9
    assert pgd.clip_rule(500.0, 0.3)[0] == pytest.approx(0.925)
    assert pgd.clip_rule(500.0, 0.08)[0] == pytest.approx(0.98)
    assert pgd.clip_rule(500.0, 0.0)[0] == pgd.TWO_VALUED_MAX_QUANTILE
    assert pgd.clip_rule(500.0, 0.08)[1] == pgd.clip_rule(500.0)[1]  # the multiple does not change


def test_a_rare_boolean_outcome_is_clipped_at_a_higher_quantile():
    """About 8% ones: a bool response (two-valued by its dtype) reads the clip at the (1 - m / 4)-quantile, m the
    rarer value's share read off the released centre; the same 0/1 values stored as floats (not two-valued by any
    public fact) keep the 0.9-quantile.  Same data and seed, so the releases before the clip are the same and the
    final clip is larger only because the quantile is (the rare rows' gradient norms are about ten times the
    common rows')."""
    rng = np.random.default_rng(7)
    n = 3000
    x = rng.uniform(0.0, 1.0, n)
    y = rng.uniform(size=n) < 0.02 + 0.12 * x
    clips, slopes = {}, {}
    for kind, response in (("bool", y), ("float", y.astype(float))):
        df = pd.DataFrame({"x": x, "y": response})
        bounds = {"x": (0.0, 1.0)} | ({"y": (0.0, 1.0)} if kind == "float" else {})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = dpstats.dp_ols("y ~ x", df, 3.0, 1e-6, method="pgd", bounds=bounds, random_state=0)
        clips[kind] = res.info["clips"][1]
        slopes[kind] = res.params["x"]
    assert clips["bool"] > 2.0 * clips["float"]
    b_ols = np.linalg.lstsq(np.column_stack([np.ones(n), x]), y.astype(float), rcond=None)[0][1]
    # the float fit's slope is near 0 (the clip's pull); deterministic under the fixed seed (relative error 0.29).
    # Over 100 re-seeds (1-100) the signed relative error was -0.035 +- 0.13 (sd), and the former bound 0.35 failed
    # for 1 of them (0.43): 0.6 is 4.3 sds below the mean (4.9 above), so a re-seed fails with probability about
    # Phi(-4.3) = 1e-5 (normal tail), and the slope stays above 0.054, apart from 0
    assert abs(slopes["bool"] - b_ols) < 0.6 * abs(b_ols)


def test_a_column_constant_in_the_data_is_named_in_a_note():
    """A column whose released spread sits at the release's floor (here constant in the data) is named in the
    summary's notes, with what that means; columns with a spread well above the noise (n * mu about 470) are not.
    The floor is twice the noise sd of the released mean deviation, so a spread of 0.5 of the column's declared
    half-range is at the floor with probability far below 1e-6 at this n * mu.  A constant column's deviations
    from the released centre are that centre's noise, which reaches the floor in about 2 fits of 3 (8 of seeds
    0-11, before and after the missing-value screen); the test asks for 6 of 12 (fixed seeds: deterministic)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(-1.0, 1.0, 2000), "c": np.full(2000, 3.0)})
    frame["y"] = 1.0 + 2.0 * frame["x"] + rng.normal(0.0, 0.5, 2000)
    bounds = {"x": (-1.0, 1.0), "c": (0.0, 10.0), "y": (-5.0, 7.0)}
    named = 0
    for seed in range(12):
        notes = dpstats.dp_ols("y ~ x + c", frame, 1.0, 1e-6, method="pgd", bounds=bounds,
                               random_state=seed).privacy.notes
        floored = [note for note in notes if "released spread of" in note]
        assert not floored or (len(floored) == 1 and "released spread of c is at" in floored[0]), floored
        named += bool(floored)
    assert named >= 6
    notes = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", bounds=bounds, random_state=0).privacy.notes
    assert not [note for note in notes if "released spread of" in note]


def test_the_floored_note_names_at_most_five_design_columns():
    names = {j: f"x{j}" for j in range(8)}
    note = pgd.floored_note([*range(8), "response"], names.__getitem__)
    assert "x0, x1, x2, x3, x4 and 3 more" in note
    assert pgd.floored_note(["response"], str) == ""


def test_the_floored_note_gives_a_dummy_no_advice_to_declare_bounds():
    """s45 new-user check: on Cars93 (93 rows) the note told the user to "declare bounds no wider than the values can
    be" for five factor dummies, whose range the design fixes; a dummy's part now says there is nothing to declare
    and what helps instead, in the same note as the declared columns' part."""
    names = {0: "x", 1: "C(g)[T.b]", 2: "C(g)[T.c]"}
    note = pgd.floored_note([0, 1, 2], names.__getitem__, lambda v: v in (1, 2))
    declared, fixed = note.split("; so is that of ")
    assert "released spread of x is at" in declared and "declare bounds no wider" in declared
    assert fixed.startswith("C(g)[T.b], C(g)[T.c], columns whose values the design fixes")
    assert "no narrower bounds to declare" in fixed and "declare bounds no wider" not in fixed
    only = pgd.floored_note([1, 2], names.__getitem__, lambda v: v in (1, 2))
    assert only.startswith("pgd: the released spread of C(g)[T.b], C(g)[T.c] is at") and "bounds no wider" not in only
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0.0, 1.0, 90), "g": pd.Categorical(rng.choice(list("abc"), 90))})
    frame["y"] = frame["x"] + rng.normal(0.0, 0.3, 90)
    notes = dpstats.dp_ols("y ~ x + g", frame, 1.0, 1e-6, method="pgd", random_state=0,
                           bounds={"x": (0.0, 1.0), "y": (-2.0, 3.0)}).privacy.notes
    (floored,) = [note for note in notes if "released spread of" in note]
    assert "g[T.b]" in floored and "no narrower bounds to declare" in floored


def test_the_floored_note_does_not_call_a_declared_zero_one_integer_a_factor_dummy():
    """s54 new-user check: on pntsprd (553 games, und25 an integer 0/1 column declared (0, 1)) the note called und25
    one of "columns whose values the design fixes (a factor's dummies: no bounds to declare)", though the user had
    declared its bounds and it is no factor; the note now names both kinds of two-valued column."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(0.0, 1.0, 300), "k": (rng.uniform(0.0, 1.0, 300) < 0.05).astype(int)})
    frame["y"] = frame["x"] + 0.5 * frame["k"] + rng.normal(0.0, 0.3, 300)
    notes = dpstats.dp_ols("y ~ x + k", frame, 1.0, 1e-6, method="pgd", random_state=0,
                           bounds={"x": (0.0, 1.0), "k": (0.0, 1.0), "y": (-2.0, 3.0)}).privacy.notes
    (floored,) = [note for note in notes if "released spread of" in note]
    assert "released spread of k is at" in floored
    assert "a factor's dummies: no bounds to declare" not in floored
    assert "an integer column declared between two consecutive integers" in floored


def test_intervals_are_withheld_for_an_outcome_too_rare_for_the_budget():
    """A boolean response with 2% ones at n = 2000, epsilon 1: n * mu * share^2 is about 0.19, far below
    RARE_MIN_N_MU_SHARE2 = 3 (the released share's noise sd is about 0.01 here), so the interval is withheld with the
    specific reason and the coefficients are still given; with 40% ones it is reported."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 1.0, 2000)
    for share, reported in ((0.02, False), (0.4, True)):
        frame = pd.DataFrame({"x": x, "y": rng.uniform(0.0, 1.0, 2000) < share * (0.5 + x)})
        res = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", bounds={"x": (0.0, 1.0)}, random_state=0)
        assert np.all(np.isfinite(res.params))
        assert bool(np.all(np.isfinite(res.bse))) is reported
        if not reported:
            assert "rarer value is rare for this budget" in res.inference_reason
            # s48 new-user check: uis (575 rows, 19% zeros) read "its released share is below 0.1 and n * mu times
            # that share is 0", with no word that the share is noisy; the reason now gives the released share and
            # its noise sd, half the sd of the response's released centre (the ledger's noise scale over n)
            found = re.search(r"its released share is ([\d.e-]+), below 0.1 \(a noisy share, read off the response's "
                              r"private centre: its noise sd is ([\d.e-]+) at this n and epsilon", res.inference_reason)
            assert found is not None
            (centres,) = [step for step in res.privacy.steps if step.name == "pgd: private centres (sums of the "
                          "clipped variables)"]
            assert float(found.group(2)) == pytest.approx(centres.noise_scale / (2 * 2000), rel=0.01)
            assert 0.0 <= float(found.group(1)) < pgd.RARE_SHARE
            withheld, share_said = res, found.group(1)
            # and the budget spent, below the request without a word before (uis: "epsilon spent: 0.994"), says why
            assert res.privacy.epsilon_spent < 1.0
            (unspent,) = [note for note in res.privacy.notes if "set aside for the intervals" in note]
            assert unspent.startswith("pgd: the release set aside for the intervals (mu=")
            assert "below the request" in unspent
        else:
            assert res.privacy.epsilon_spent == pytest.approx(1.0)
            assert not any("set aside for the intervals" in note for note in res.privacy.notes)
    assert pgd.rare_outcome_reason(100.0, 0.0, 0.07).startswith(
        "the response is two-valued and its rarer value is rare for this budget: its released share is 0, below 0.1 "
        "(a noisy share, read off the response's private centre: its noise sd is 0.07 at this n and epsilon")
    # a table's note keeps the first clause, up to " (": the share and the threshold, not a bare "share is 0"
    (note,) = [n for n in dpstats.table([withheld]).notes if "no standard errors" in n]
    assert " ".join(note.split()).rstrip(".").endswith(f"its released share is {share_said}, below 0.1")
    assert "noise sd" not in pgd.rare_outcome_reason(100.0, 0.0)
    assert pgd.rare_outcome_reason(1000.0, None) == "" and pgd.rare_outcome_reason(1000.0, 0.055) == ""
    assert pgd.rare_outcome_reason(1000.0, 0.054)  # n * mu * m^2 = 2.92 < 3
    assert pgd.rare_outcome_reason(60.0, 0.45) == ""  # a balanced outcome at small n keeps its interval


def test_the_rare_outcome_rule_reads_n_mu_times_the_square_of_the_share():
    """Session 55: the rule withholds where n * mu * m^2 < RARE_MIN_N_MU_SHARE2 = 3 (m the released share below 0.1,
    from n * mu = 100), i.e. where n * mu * m < 3 / m: 30 at m = 0.1, 100 at 0.03, 300 at 0.01.  The rule before read
    n * mu * m < 50, which let through the intervals of 1 and 2% outcomes that covered least squares in 0.52 to 0.90
    of fits at n * mu * m 50 to 130 on the simulated grid (docs/choosing.md, "A rare outcome"), and wage250 (2.6% ones,
    n * mu * m about 54 at epsilon 3: 7 of 11 reported covered).  The reason names n * mu * m^2 and n * mu * m."""
    withheld = pgd.rare_outcome_reason
    # wage250 at epsilon 3: n * mu 1,943, a released share near 0.026 -> withheld now (n * mu * m = 50.5 passed)
    assert withheld(1943.0, 0.026) and 1943.0 * 0.026 >= 50.0
    # a 2% outcome: withheld up to n * mu * m = 150, reported above
    assert withheld(7400.0, 0.02) and not withheld(7600.0, 0.02)
    # a 9% outcome: reported from n * mu * m = 33 (the old rule withheld it up to 50)
    assert not withheld(380.0, 0.09) and withheld(360.0, 0.09) and 380.0 * 0.09 < 50.0
    # the other thresholds are unchanged: nothing from a share of 0.1, nothing below n * mu = 100
    assert not withheld(150.0, 0.1) and not withheld(99.0, 0.0) and withheld(100.0, 0.0)
    reason = withheld(1943.0, 0.026, 0.004)
    assert "times the square of that share is 1.31, below 3 (n * mu times the share is 50.5" in " ".join(reason.split())
    assert rare_outcome_withheld(7400.0, 0.02, rare_share=pgd.RARE_SHARE, rare_from_n_mu=pgd.RARE_FROM_N_MU,
                                 rare_min_n_mu_share2=pgd.RARE_MIN_N_MU_SHARE2)
    assert get_method("pgd").inference_rule.rare_min_n_mu_share2 == pgd.RARE_MIN_N_MU_SHARE2 == 3.0


def test_the_error_block_of_a_rare_outcome_is_a_lower_bound():
    """Where the rare-outcome rule withholds the intervals, the error block's privacy part is a lower bound: the clip
    cuts the rare rows' residuals and the clipped fit's gap from least squares, which no released value measures,
    is not in the chains' spread.  A new-user check (session 53, azcabgptca: 1,959 patients, 1.8% deaths, epsilon 1,
    n * mu 455) read "privacy error of each coefficient up to 0.0178" and, for the headline, 0.0028 in the table,
    beside an estimate 0.033 from least squares.  The same data as the test above (2% ones, n * mu about 474, so not
    the small-n * mu lower bound); with 40% ones the interval is reported and the block is not a lower bound.
    Deterministic: fixed data and noise seeds."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 1.0, 2000)
    for share, withheld in ((0.02, True), (0.4, False)):
        frame = pd.DataFrame({"x": x, "y": rng.uniform(0.0, 1.0, 2000) < share * (0.5 + x)})
        res = dpstats.dp_ols("y ~ x", frame, 1.0, 1e-6, method="pgd", bounds={"x": (0.0, 1.0)}, random_state=0)
        assert bool(np.all(np.isnan(res.bse))) is withheld
        coefficients = res.error_bounds.coefficients
        assert coefficients.lower_bound is withheld
        assert ("clipped fit's gap from least squares" in coefficients.privacy_source) is withheld
        assert ("privacy: a lower bound" in res.summary().as_text()) is withheld


def test_a_common_outcome_whose_noisy_share_reads_rare_keeps_its_interval(monkeypatch):
    """Session 48: the rare-outcome rule fired on noise below n * mu = 100, where the released share's noise sd is
    0.1 and more (Greene, 30% ones: 4 of 20 fits withheld at epsilon 0.5; uis, 19%: 6 of 20), while the intervals
    there covered least squares for rare outcomes too (benchmarks/results/boolean_response_rare.md).  Here 28% ones
    at n = 300, epsilon 0.5 (n * mu 37, share sd 0.13): at this seed the released share is 0.089, below 0.1, and
    n * mu times it is 3; the rule now applies from n * mu = RARE_FROM_N_MU only, so the interval is reported (it was
    withheld before).  Deterministic: fixed data and noise seeds."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.0, 1.0, 300)
    frame = pd.DataFrame({"x": x, "y": rng.uniform(0.0, 1.0, 300) < 0.25 * (0.5 + x)})
    assert 0.25 < frame.y.mean() < 0.3
    seen: list[tuple[float, float | None]] = []
    rule = pgd.rare_outcome_reason

    def recorded(n_mu: float, minority: float | None, share_sd: float | None = None) -> str:
        seen.append((n_mu, minority))
        return rule(n_mu, minority, share_sd)

    monkeypatch.setattr(pgd, "rare_outcome_reason", recorded)
    res = dpstats.dp_ols("y ~ x", frame, 0.5, 1e-6, method="pgd", bounds={"x": (0.0, 1.0)}, random_state=36)
    ((n_mu, minority),) = seen
    assert n_mu < pgd.RARE_FROM_N_MU and minority is not None and minority < pgd.RARE_SHARE  # reads rare
    assert bool(np.all(np.isfinite(res.bse)))
    assert res.inference_reason is None or "rare" not in res.inference_reason
    # the rule itself: nothing below RARE_FROM_N_MU, a truly rare share above it is still withheld
    assert pgd.rare_outcome_reason(99.0, 0.0, 0.07) == ""
    assert pgd.rare_outcome_reason(100.0, 0.0, 0.07) and pgd.rare_outcome_reason(400.0, 0.05, 0.02)


def test_the_sandwich_takes_a_two_valued_responses_variance_as_its_floor():
    """:func:`pgd.sandwich` with ``variance_floor``: E psi^2 / phi^2 is taken at least that large (the clipped
    equation's factor where it is larger); :func:`pgd.two_valued_variance` is 4 m (1 - m) / s_y^2 with m the
    released share plus SAMPLING_Z noise sds, at most 1/2."""
    gram, noisy, rows, mu = np.diag([900.0, 800.0]), np.array([30.0, 1000.0]), 1000.0, 50.0  # trace < rows * d
    plain = pgd.sandwich(noisy, gram, 1.0, rows, mu, norm_bound=50.0)
    factor = plain[0, 0] * gram[0, 0]
    np.testing.assert_allclose(pgd.sandwich(noisy, gram, 1.0, rows, mu, 50.0, variance_floor=0.5 * factor), plain)
    np.testing.assert_allclose(pgd.sandwich(noisy, gram, 1.0, rows, mu, 50.0, variance_floor=4.0 * factor),
                               4.0 * factor * np.linalg.inv(gram))
    assert pgd.two_valued_variance(0.1, None, 0.5) == pytest.approx(4 * 0.1 * 0.9 / 0.25)
    m = 0.1 + pgd.SAMPLING_Z * 0.02
    assert pgd.two_valued_variance(0.1, 0.02, 0.5) == pytest.approx(4 * m * (1 - m) / 0.25)
    assert pgd.two_valued_variance(0.45, 0.1, 2.0) == pytest.approx(1.0 / 4.0)  # m capped at 1/2


def test_a_rare_outcome_below_the_tail_correction_gets_least_squares_sampling_variance():
    """A boolean response with about 12% ones, y ~ x at n = 634, epsilon 1 (n * mu 150: no tail correction, and the
    clip sits below every rare row's gradient norm): the clipped equation's sandwich missed the rare rows' residuals
    and stated a sampling sd of 0.23 to 0.83 times least squares' classical standard error in 5 of the 6 fits with
    an interval at these seeds (its interval for x covered least squares' slope in about 0.6 of fits).  With the
    two-valued response's variance as its floor (:func:`pgd.two_valued_variance`) every one states at least 0.9 of
    it (measured 1.03 to 1.5).  Deterministic: fixed data and noise seeds; the two fits whose released share reads
    below 0.1 have their intervals withheld by the rare-outcome rule."""
    ratios = []
    for seed in range(8):
        rng = np.random.default_rng(900 + seed)
        x = rng.uniform(0.0, 1.0, 634)
        y = (rng.uniform(0.0, 1.0, 634) < 0.12 * (0.6 + 0.8 * x)).astype(float)
        X = np.column_stack([np.ones(634), x])
        _, rss = np.linalg.lstsq(X, y, rcond=None)[:2]
        se = math.sqrt(rss[0] / 632 * np.linalg.inv(X.T @ X)[1, 1])
        res = dpstats.dp_ols("y ~ x", pd.DataFrame({"x": x, "y": y > 0}), 1.0, 1e-6, method="pgd",
                             bounds={"x": (0.0, 1.0)}, random_state=seed)
        if np.isfinite(res.bse["x"]):
            errors = res.error_bounds.coefficients
            assert "sandwich" in errors.sampling_source
            ratios.append(errors.sampling[1] / se)
    assert len(ratios) == 6 and min(ratios) > 0.9, ratios


def test_intervals_are_withheld_when_too_few_rows_are_complete():
    """With missing="drop", a variable missing in all but a few rows leaves the fit to null rows: the released count
    of complete rows times mu is below the size rule's 15, and the intervals are withheld with that reason (an audit
    found a variable with no observed value whose interval excluded 0 in 2 of 10 fits). Where most rows are
    complete the count does not matter."""
    rng = np.random.default_rng(8)
    n = 2000
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "z": rng.uniform(0, 1, n)})
    df["y"] = df.x + rng.normal(0, 0.5, n)
    sparse = df.assign(z=np.where(np.arange(n) < 10, df.z, np.nan))
    bounds = {"x": (0.0, 1.0), "z": (0.0, 1.0), "y": (-3.0, 4.0)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols("y ~ x + z", sparse, 1.0, 1e-6, bounds=bounds, method="pgd", missing="drop",
                             random_state=1)
        full = dpstats.dp_ols("y ~ x + z", df, 1.0, 1e-6, bounds=bounds, method="pgd", missing="drop",
                              random_state=1)
    assert res.bse.isna().all() and "released count of rows without a missing value" in res.inference_reason
    assert full.bse.notna().all()


def test_withheld_for_few_complete_rows_the_reason_names_the_count_noise_and_n():
    """At a small n and epsilon the released count of complete rows is noisy on the scale of n (sd 125 rows for 228
    rows, 213 of them complete, at epsilon 0.5: session 47's check on survival's lung, where the reason read "about
    1" and blamed a variable missing in most rows). The reason names n and the count's noise sd, so the user can
    tell the noise from the data. Seed 5 is one whose noisy count falls below the size rule (deterministic)."""
    rng = np.random.default_rng(3)
    n = 228
    df = pd.DataFrame({c: rng.uniform(0, 1, n) for c in "abcd"})
    df["y"] = df.a + rng.normal(0, 0.5, n)
    df.loc[:14, "d"] = np.nan
    bounds = {c: (0.0, 1.0) for c in "abcd"} | {"y": (-3.0, 4.0)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols("y ~ a + b + c + d", df, 0.5, 1e-6, bounds=bounds, method="pgd", missing="drop",
                             random_state=5)
    assert res.bse.isna().all()
    assert re.search(r"without a missing value is about \d+ of the 228 rows \(a noisy count: its noise sd is 125 "
                     r"rows", res.inference_reason)
    assert pgd.complete_rows_reason(1.0, 0.1) and "noise sd" not in pgd.complete_rows_reason(1.0, 0.1)


# -- BLAS threads (session 44: speed on wide designs) ----------------------------------------------------------------

def _wide_frame(n: int = 1500, levels: int = 40, seed: int = 11) -> tuple[pd.DataFrame, str, dict]:
    rng = np.random.default_rng(seed)
    names = [f"L{i:02d}" for i in range(levels)]
    g = rng.integers(0, levels, n)
    df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(0, 1, n).clip(-4, 4), "g": np.array(names)[g]})
    df["y"] = 1 + 0.5 * df.x1 - 2 * df.x2 + 0.1 * np.sin(g) + rng.normal(0, 1, n)
    return df, "y ~ x1 + x2 + C(g)", {"bounds": BOUNDS, "levels": {"g": names}}


def test_fit_runs_on_one_blas_thread_and_restores_the_limit(monkeypatch):
    # every step is a pair of skinny products, on which threaded OpenBLAS paid its threads' start and synchronisation
    # each time (a 125-level factor: 23 s against 2.4 s on one thread); the limit is lifted after the fit
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads() -> list[int]:
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    seen: list[list[int]] = []
    original = pgd.GradientPass.__call__

    def spy(self, X, y, offset):
        if not seen:
            seen.append(blas_threads())
        return original(self, X, y, offset)

    monkeypatch.setattr(pgd.GradientPass, "__call__", spy)
    before = blas_threads()
    df, formula, decl = _wide_frame(n=600, levels=8)
    dpstats.dp_ols(formula, df, 1.0, 1e-6, method="pgd", random_state=0, **decl, **STEPS)
    assert seen and seen[0] and all(t == 1 for t in seen[0])
    assert blas_threads() == before


def test_fit_is_the_same_whatever_the_callers_blas_threads():
    # one BLAS thread inside the fit: its released values do not depend on the threads the caller allows (with
    # threaded products they differed in the last bits, and the intervals' draws, through eigenvectors of nearly
    # repeated eigenvalues, by Monte Carlo error)
    # (the earlier code, on this design: coefficients 1.6e-14 apart and standard errors 0.004 apart)
    threadpoolctl = pytest.importorskip("threadpoolctl")
    df, formula, decl = _wide_frame(n=1500, levels=120)
    fits = []
    for threads in (1, 2):
        with threadpoolctl.threadpool_limits(limits=threads, user_api="blas"):
            fits.append(dpstats.dp_ols(formula, df, 1.0, 1e-6, method="pgd", random_state=3, **decl))
    np.testing.assert_array_equal(np.asarray(fits[0].params), np.asarray(fits[1].params))
    np.testing.assert_array_equal(np.asarray(fits[0].bse), np.asarray(fits[1].bse))
    assert fits[0].info == fits[1].info


def test_the_steps_clip_in_one_buffer_with_the_same_bits_as_np_clip():
    # the gradient pass clips each step's residuals in place with bounds computed once per phase; the result must
    # be np.clip's, bit for bit, including rows of norm 0 (bound inf), residuals of +-inf and NaN
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(300, 4))
    Z[0] = 0.0
    v = rng.normal(size=300) * 3.0
    v[1], v[2], v[3] = np.inf, -np.inf, np.nan
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    theta = rng.normal(size=(4, 3))
    cache = pgd.RowCache()
    for clip in (0.05, 1.0, 1e300):
        _, expected = pgd._clipped_residuals(Z, v, norms, theta, clip)
        with np.errstate(all="ignore"):
            got = pgd._clipped_residuals_inplace(Z, v, theta, cache.residual_bounds(norms, clip))
        np.testing.assert_array_equal(got, expected)
        assert np.signbit(got).tolist() == np.signbit(expected).tolist()
    # the bounds are kept for the same norms array and clip, recomputed for new norms
    assert cache.residual_bounds(norms, 1.0)[1] is cache.residual_bounds(norms, 1.0)[1]
    assert cache.residual_bounds(norms.copy(), 1.0)[1] is not cache.residual_bounds(norms, 1.0)[1]


@pytest.mark.parametrize("chains", [1, 2, 5, 9])
def test_the_steps_gradient_has_the_bits_of_the_plain_products(chains):
    # a step repeats v and the residual bounds over the chains (one loop over n K entries for the subtraction and
    # the clip; columns beyond FULL_OPERANDS entries) and forms sum_i z_i psi_i as (psi^T Z)^T: the released sums
    # must be those of Z^T clip(Z theta - v, -t, t), bit for bit, on either side of the size limit
    rng = np.random.default_rng(11)
    for n, d in ((1, 3), (7, 2), (300, 5), (2500, 17), (pgd.FULL_OPERANDS // 2 + 3, 4)):
        X = rng.normal(size=(n, d)) * rng.uniform(0.1, 3.0, size=d)
        y = rng.standard_t(3, size=n) * 2.0
        st = Standardisation(Domain(-np.full(d, 4.0), np.full(d, 4.0), -9.0, 9.0, intercept_index=None),
                             rng.normal(size=d) * 0.1, rng.uniform(0.5, 2.0, size=d), 0.2, 1.5)
        cache = pgd.RowCache()
        theta = rng.normal(size=(d, chains)) * 0.5
        for clip in (0.05, 1.0):
            grad_pass = pgd.GradientPass(st, theta, clip, cache)
            Z, v, norms = grad_pass.rows(X, y, 0)
            t = (clip / np.maximum(norms, np.finfo(float).tiny))[:, None]
            expected = Z.T @ np.clip(Z @ theta - v[:, None], -t, t)
            for _ in range(2):  # the second step reuses the repeated operands
                np.testing.assert_array_equal(grad_pass(X, y, 0), expected)
        full = n * chains <= pgd.FULL_OPERANDS and chains > 1
        operands = cache.step_operands(v, norms, 1.0, chains)
        assert operands[0].shape == ((n, chains) if full else (n, 1))
        assert operands[1][1].shape == ((n, chains) if full else (n, 1))



def test_a_rough_released_response_domain_warns_and_names_the_fix() -> None:
    """A rare 0/1 response stored as floats, without bounds: most groups of rows hold a single value, and the
    released domain comes from the few others (on ISLP's Default data the slopes came out 0 with intervals of width
    0, or -32,783), without a word but a note in the full summary.  pgd now warns from the released counts
    (``RoughResponseDomainWarning``), naming the response and the fix; a continuous response of the same size does
    not warn.  Fixed seeds: deterministic."""
    rng = np.random.default_rng(4)
    n = 10_000
    df = pd.DataFrame({"x": rng.normal(size=n)})
    df["y"] = (rng.uniform(size=n) < 0.03 * (1 + 0.5 * np.tanh(df["x"]))).astype(float)
    with pytest.warns(RoughResponseDomainWarning, match=r"clipping domain of the response 'y' is rough: most of the "
                                                        r"groups.*Declare bounds for 'y' \(a 0/1 indicator: bounds "
                                                        r"\(0, 1\)"):
        res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="pgd", random_state=0)
    assert any(note.startswith("WARNING: pgd's released clipping domain of the response 'y' is rough")
               for note in res.privacy.notes)
    df["y"] = 1.0 + 2.0 * df["x"] + rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoughResponseDomainWarning)
        dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="pgd", random_state=0)


def test_a_response_of_mostly_one_value_without_bounds_gets_no_interval() -> None:
    """A 0/1 response with 5% ones stored as floats, without bounds: it is not two-valued by public facts, so the
    clip and interval rules of a rare outcome do not apply, and such fits' intervals covered least squares in about
    half the fits or were orders of magnitude wide (docs/choosing.md, "A rare outcome").  The released counts of the
    domain's pairs of rows show most pairs hold one value (a lead of about (1 - 2 p)^2 = 0.81 over the modal spread,
    above ONE_VALUE_LEAD), so pgd gives the estimate without an interval and says why; a 0/1 response with 40% ones
    (lead 0.04) and a continuous one keep theirs.  Fixed seeds: deterministic."""
    rng = np.random.default_rng(7)
    n = 3_000
    df = pd.DataFrame({"x": rng.normal(size=n)})
    df["y"] = (rng.uniform(size=n) < 0.05 * (1 + 0.5 * np.tanh(df["x"]))).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RoughResponseDomainWarning)
        res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="pgd", random_state=0)
    assert np.isfinite(res.params["x"])
    assert np.isnan(res.bse["x"])
    assert res.inference_reason.startswith("most pairs of rows hold a single value of the response, which has no "
                                           "declared bounds")
    assert "declare the response's bounds (a 0/1 indicator: bounds (0, 1), stored as bool or int" in (
        res.inference_reason)
    for y in ((rng.uniform(size=n) < 0.4).astype(float), 1.0 + 2.0 * df["x"] + rng.normal(size=n)):
        df["y"] = y
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RoughResponseDomainWarning)
            res = dpstats.dp_ols("y ~ x", df, 1.0, 1e-6, method="pgd", random_state=0)
        assert np.isfinite(res.bse["x"]) and not res.inference_reason


def test_one_value_reason_fires_above_its_lead_only() -> None:
    """The rule reads the released lead alone: none without a released response domain, none at or below
    ONE_VALUE_LEAD; above it the reason names the lead and the threshold."""
    assert pgd.one_value_reason(None) == ""
    assert pgd.one_value_reason(pgd.ONE_VALUE_LEAD) == ""
    assert pgd.one_value_reason(-0.3) == ""
    assert "leads that of the modal spread by 0.81 of the pairs, above 0.5625" in pgd.one_value_reason(0.81)


def test_a_two_valued_response_holds_the_tail_clip_at_its_floor() -> None:
    """With a response that public facts make two-valued (a bool) the tail correction's clip is at most
    TWO_VALUED_TAIL_CAP (1) times the clip, so at its floor (1.5 times): the one-step correction towards a clip up to
    4 times higher overshot least squares on a rare cell (blackpol, docs/choosing.md "A rare outcome").  A response
    of the same values stored as floats with bounds (0, 1) is not two-valued by public facts and keeps TAIL_CAP.
    Fixed seeds: deterministic."""
    assert pgd.tail_cap(True) == pgd.TWO_VALUED_TAIL_CAP == 1.0
    assert pgd.tail_cap(False) == pgd.TAIL_CAP == 4.0
    rng = np.random.default_rng(11)
    n = 3_000
    df = pd.DataFrame({"x": rng.uniform(size=n)})
    df["y"] = rng.uniform(size=n) < 0.2 + 0.3 * df["x"]
    res = dpstats.dp_ols("y ~ x", df, 3.0, 1e-6, method="pgd", bounds={"x": (0, 1)}, random_state=0)
    assert any("-quantile (at most 1 x the clip, at least 1.5 x)" in note for note in res.privacy.notes)
    df["y"] = df["y"].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = dpstats.dp_ols("y ~ x", df, 3.0, 1e-6, method="pgd", bounds={"x": (0, 1), "y": (0, 1)}, random_state=0)
    assert any("-quantile (at most 4 x the clip, at least 1.5 x)" in note for note in res.privacy.notes)
