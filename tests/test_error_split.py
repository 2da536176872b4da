"""The error block in the coefficients' units (issue 18, part 4): each coefficient's privacy error next to its
sampling error, from released values where the method released them, from the rates (labelled) otherwise."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import statsmodels.api as sm
from conftest import LINEAR_BOUNDS as BOUNDS
from conftest import LINEAR_FORMULA as FORMULA
from conftest import linear_frame as data

import dpstats
from dpstats.bounds import DataBounds
from dpstats.inference import floored_inverse, noise_propagation
from dpstats.methods.registry import get_method
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.scaling import PublicScaling
from dpstats.theory import assumed_residual_sd, coefficient_errors, design_moments, sampling_covariance


def scaling() -> PublicScaling:
    lo, hi = np.array([1.0, -1.0, 0.0]), np.array([1.0, 1.0, 5.0])
    return PublicScaling.from_bounds(DataBounds(column_lo=lo, column_hi=hi, y_lo=-10.0, y_hi=10.0), 0)


def test_noisy_ols_privacy_part_is_its_released_noise():
    """noisy_ols releases b + N(0, s^2 I) on the rescaled design: the privacy part is A s^2 A^T mapped back by the
    public rescaling (exactly), and privacy^2 + sampling^2 = bse^2 (its covariance is their sum).  Deterministic."""
    res = dpstats.dp_ols(FORMULA, data(20000, 1), 1.0, 1e-6, method="noisy_ols", bounds=BOUNDS, random_state=3)
    split = res.error_bounds.coefficients
    noise_sd = res.info["noise_sd"]
    a, _ = scaling().coefficient_map()
    np.testing.assert_allclose(split.privacy, noise_sd * np.sqrt(np.diag(a @ a.T)), rtol=1e-12)
    np.testing.assert_allclose(split.privacy**2 + split.sampling**2, res.bse.to_numpy() ** 2, rtol=1e-9)
    assert split.released and "released noise sd" in split.privacy_source


def test_sufficient_statistics_split_from_released_values():
    """ssp on arrays (no rescaling): the sampling part is sigma^2_hat times the released X^T X's inverse with its
    eigenvalues floored at its noise sd, and, where the noise is small (noise-to-signal 0.02 here), the privacy part
    is the first-order propagation H C H of the released noise sds, computed here by hand.  Deterministic (seeded);
    the bootstrap's rescaling and bias change it by Monte Carlo amounts only (tolerance 20%, about 6 Monte Carlo
    sds of a variance from 1000 replicates)."""
    rng = np.random.default_rng(0)
    n = 20000
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, n)])
    y = np.clip(0.2 + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n), -1, 1)
    bounds = DataBounds(column_lo=np.array([1.0, -1.0]), column_hi=np.array([1.0, 1.0]), y_lo=-1.0, y_hi=1.0)
    fit = get_method("ssp").fit_arrays(X, y, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(1),
                                       bounds=bounds, intercept_index=0)
    rel, b = fit.released, fit.params
    sigma2 = fit.diagnostics["sigma2_hat_scaled"]
    np.testing.assert_allclose(fit.error_split.sampling, sigma2 * floored_inverse(rel.gram, rel.gram_noise_sd),
                               rtol=1e-12)
    w, v = np.linalg.eigh(rel.gram)
    h = (v / np.maximum(w, rel.gram_noise_sd)) @ v.T
    s_xx, s_xy = rel.gram_noise_sd, rel.moment_noise_sd
    c = np.array([[s_xy**2 + s_xx**2 * (b @ b + b[0] ** 2 - b[0] ** 2), s_xx**2 * b[0] * b[1]],
                  [s_xx**2 * b[0] * b[1], s_xy**2 + s_xx**2 * (b @ b + b[1] ** 2 - b[1] ** 2)]])
    by_hand = h @ c @ h
    np.testing.assert_allclose(noise_propagation(h, b, s_xy, s_xx), by_hand, rtol=1e-12)
    np.testing.assert_allclose(np.diag(fit.error_split.privacy), np.diag(by_hand), rtol=0.2)
    assert fit.inference.noise_to_signal < 0.05


@pytest.mark.parametrize("method", ["ssp", "adassp", "noisy_ols"])
def test_predicted_privacy_error_matches_the_measured_one(method):
    """30 simulated data sets (n = 20000, epsilon = 1, noise-to-signal below 0.1): the root mean square over fits
    and coefficients of (released - least squares on the same clipped data) is within [0.7, 1.4] of that of the
    block's predicted privacy error.  Fixed seeds.  With 90 pooled, partly correlated squared errors the ratio of
    root mean squares has a relative sd of about 10%; the band is 3 sds wide below and 4 above (false-failure rate
    below 0.3%).  Measured at these seeds: 0.93-1.01 (benchmarks/coverage_grid.py measures the grid)."""
    measured, predicted = [], []
    options = {"bootstrap": 400} if method != "noisy_ols" else {}
    for seed in range(30):
        df = data(20000, seed)
        res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method=method, bounds=BOUNDS, random_state=seed, **options)
        clipped = df.assign(**{c: df[c].clip(*BOUNDS[c]) for c in BOUNDS})
        ols = dpstats.dp_ols(FORMULA, clipped, math.inf, method="ols")
        measured.append(res.params.to_numpy() - ols.params.to_numpy())
        predicted.append(res.error_bounds.coefficients.privacy)
    ratio = math.sqrt(np.mean(np.square(measured)) / np.mean(np.square(predicted)))
    assert 0.7 <= ratio <= 1.4, ratio


@pytest.mark.parametrize("method", ["pgd", "dpsgd"])
def test_descent_methods_predict_their_privacy_error_from_released_values(method):
    """pgd (its final chains' spread, and its warm start's noise through the released Gram matrix) and dpsgd
    (batch means of its averaged iterates): 20 simulated data sets at n = 2000, epsilon = 1 (n * mu = 470, where
    both converge): the root mean square over fits and coefficients of (released - least squares on the same
    clipped data) is within [0.6, 1.6] of that of the block's prediction, which comes from released values.
    Fixed seeds; with 60 pooled, partly correlated squared errors and a prediction that varies between fits the
    ratio has a relative sd of about 12%, so the band is about 4 sds wide on either side (false-failure rate
    below 1e-4).  Measured at these seeds: 1.02 (pgd), 1.04 (dpsgd)."""
    measured, predicted = [], []
    for seed in range(20):
        df = data(2000, seed)
        res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method=method, bounds=BOUNDS, random_state=seed)
        clipped = df.assign(**{c: df[c].clip(*BOUNDS[c]) for c in BOUNDS})
        ols = dpstats.dp_ols(FORMULA, clipped, math.inf, method="ols")
        measured.append(res.params.to_numpy() - ols.params.to_numpy())
        predicted.append(res.error_bounds.coefficients.privacy)
        assert res.error_bounds.coefficients.released
    ratio = math.sqrt(np.mean(np.square(measured)) / np.mean(np.square(predicted)))
    assert 0.6 <= ratio <= 1.6, ratio


def _pgd_ratio(n: int, seeds: int) -> float:
    """The median over ``seeds`` simulated data sets of n rows (epsilon = 1) of each pgd fit's measured / predicted
    privacy error: the root mean square over its coefficients of (released - least squares on the same clipped data)
    over that of its predicted privacy error.  The median, not the root mean square pooled over fits, which one or
    two fits with extreme clips decide (at n = 211, 80 fits: pooled 0.46, blocks of 20 from 0.29 to 1.15)."""
    ratios = []
    for seed in range(seeds):
        df = data(n, seed)
        res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=seed)
        clipped = df.assign(**{c: df[c].clip(*BOUNDS[c]) for c in BOUNDS})
        ols = dpstats.dp_ols(FORMULA, clipped, math.inf, method="ols")
        measured = res.params.to_numpy() - ols.params.to_numpy()
        predicted = res.error_bounds.coefficients.privacy
        ratios.append(math.sqrt(np.mean(np.square(measured)) / np.mean(np.square(predicted))))
    return float(np.median(ratios))


@pytest.mark.slow
def test_pgd_predicts_its_privacy_error_where_the_chains_keep_their_starts():
    """pgd at n = 211, epsilon = 1 (n * mu = 50: the chains start 3 standardised units apart and keep part of it):
    over 80 simulated data sets the median measured / predicted ratio is within [0.5, 2], so the start offsets, which
    are in the chains' spread but not in their mean, are not counted as error (the chains' raw covariance
    over-predicted about 2.5x here).  Fixed seeds; measured 0.90, and the log of the median has a bootstrap sd of
    0.063 over 80 fits, so the band's ends are 9 sds away (false-failure rate below 1e-15)."""
    assert 0.5 <= _pgd_ratio(211, 80) <= 2.0


def test_pgd_predicts_its_privacy_error_where_the_chains_keep_their_starts_fast():
    """The fast version of the slow test above: 20 data sets, and the issue's band [1/3, 3] for the ratio.  Fixed
    seeds; measured 1.08, the log of the median has a bootstrap sd of 0.15 over 20 fits, so the band's ends are
    6.8 and 7.8 sds away (false-failure rate below 1e-10)."""
    assert 1 / 3 <= _pgd_ratio(211, 20) <= 3.0


def test_block_never_says_sampling_dominates_when_the_released_noise_says_otherwise():
    """The issue's case: noisy_ols at a moderate n, whose estimate is many OLS standard errors off.  The block says
    privacy is the larger error for every coefficient, and the rates are labelled a reference, not a statement
    about the fit.  Seeded; at these sizes the released noise sd is 10x the sampling error for every seed (its
    calibration, not the draw, sets it), so the false-failure rate is 0."""
    res = dpstats.dp_ols(FORMULA, data(3000, 2), 1.0, 1e-6, method="noisy_ols", bounds=BOUNDS, random_state=1)
    split = res.error_bounds.coefficients
    assert np.all(split.privacy > 5 * split.sampling)
    text = " ".join(res.summary().as_text().split())  # the notes wrap at the summary's width
    assert "sampling dominates" not in text
    assert "the privacy error is larger than the sampling error for 3 of 3 coefficients" in text
    assert "Error of each coefficient (its units)" in text and "describe the model class, not this fit" in text
    notes = res.error_bounds.notes()
    assert notes[0].startswith("From the released values: the privacy error is larger")


def test_block_says_sampling_is_larger_where_it_is():
    """ssp at n = 10^5, epsilon = 3 with a noisy response: the sampling error is larger for every coefficient (the
    predicted privacy error is below half of it for every seed at these sizes; seeded).

    Deterministic under the fixed seed (largest ratio 0.17).  Over 350 re-seeds (1-350) the largest ratio of
    privacy to sampling error fell in two clusters, 0.15-0.18 (347 seeds) and 0.41-0.42 (3 seeds), none above
    0.5: a re-seed fails with probability below about 1/350 (none did; the tail is not normal, so no sd rule)."""
    res = dpstats.dp_ols(FORMULA, data(100_000, 3, noise=3.0), 3.0, 1e-6, method="ssp", bounds=BOUNDS,
                         random_state=0)
    split = res.error_bounds.coefficients
    assert np.all(split.privacy < 0.5 * split.sampling)
    assert "the sampling error is larger than the privacy error for every coefficient" in res.error_bounds.notes()[0]


def test_dpsgd_states_its_privacy_part_as_a_lower_bound():
    """dpsgd's released split leaves out its bias against least squares (clipping, the distance its steps did not
    cover), which on the real-data benchmark was most of its error: the block never concludes that sampling
    dominates, and says the part shown is a lower bound.  A small data set where the sampling part is the larger of
    the two shown (deterministic given the seed); and the wording when a coefficient's shown part is larger."""
    res = dpstats.dp_ols(FORMULA, data(3000, 4), 3.0, 1e-6, method="dpsgd", bounds=BOUNDS, random_state=0)
    errors = res.error_bounds.coefficients
    assert errors.lower_bound and errors.to_dict()["lower_bound"] is True
    assert np.all(errors.privacy < errors.sampling)  # without the flag the block would say sampling is larger
    statement = errors.statement()
    assert "sampling error is larger" not in statement and "lower bound" in statement
    assert errors.sampling_assumed and "not known from released values" in statement
    bigger = dataclasses.replace(errors, privacy=errors.sampling * np.array([2.0, 0.5, 0.5]), sampling_assumed=False)
    assert "larger than the sampling error for at least 1 of 3 coefficients" in bigger.statement()
    assert "a lower bound" in bigger.statement()


def test_assumed_sampling_part_never_decides_which_part_is_larger():
    """A fit that releases its privacy part but no sampling variance (dpsgd) shows the public assumption's sampling
    part (a response uniform on its declared range, usually far above the data's): the statement says so and draws
    no conclusion either way.  pgd with an interval releases its sandwich sampling variance, and the block uses it:
    on normal errors it is within 25% of the OLS standard errors (deterministic given the seed)."""
    df = data(3000, 4)
    errors = dpstats.dp_ols(FORMULA, df, 3.0, 1e-6, method="dpsgd", bounds=BOUNDS,
                            random_state=0).error_bounds.coefficients
    assert errors.sampling_assumed and errors.to_dict()["sampling_assumed"] is True
    statement = errors.statement()
    assert "not known from released values" in statement and "an assumption" in statement
    assert "sampling error is larger" not in statement and "privacy error is larger" not in statement
    res = dpstats.dp_ols(FORMULA, df, 3.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0)
    errors = res.error_bounds.coefficients
    assert not errors.sampling_assumed and "sandwich" in errors.sampling_source
    ols = sm.OLS(df["y"], sm.add_constant(df[["x1", "x2"]])).fit()
    np.testing.assert_allclose(errors.sampling, ols.bse.to_numpy(), rtol=0.25)


def test_without_released_values_the_rates_are_converted_and_labelled():
    """tukey releases no noise scale: with declared bounds the block converts the rate with the public facts (a
    design uniform on the declared ranges, a response uniform on its range) and says so; without bounds it has no
    units and only the rates are shown.  Deterministic given the fit (the numbers are public functions)."""
    df = data(3000, 4)
    res = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="tukey", bounds=BOUNDS, random_state=0)
    eb = res.error_bounds
    split = eb.coefficients
    assert not split.released and eb.notes()[0].startswith("By the rates (up to constants")
    intervals = [(1.0, 1.0), (-1.0, 1.0), (0.0, 5.0)]
    sigma = assumed_residual_sd((-10.0, 10.0))
    assert sigma == pytest.approx(20 / math.sqrt(12))
    sampling = np.sqrt(np.diag(sampling_covariance(3000, design_moments(intervals, 0), sigma)))
    np.testing.assert_allclose(split.sampling, sampling, rtol=1e-12)
    np.testing.assert_allclose(split.sampling[1], sigma / math.sqrt(3000 / 3), rtol=1e-9)  # var of U[-1, 1] is 1/3
    rate = eb.lower  # tukey's own theorem does not cover the implemented estimator
    np.testing.assert_allclose(split.privacy, sampling * rate.privacy / rate.statistical, rtol=1e-12)
    assert "uniform on the declared ranges" in split.sampling_source and "assumption" in split.sampling_source
    bare = dpstats.dp_ols(FORMULA, df, 1.0, 1e-6, method="tukey", random_state=0)
    assert bare.error_bounds.coefficients is None
    assert any("No declared bounds" in line for line in bare.error_bounds.notes())


def test_inference_false_keeps_the_released_privacy_part():
    res = dpstats.dp_ols(FORMULA, data(20000, 5), 1.0, 1e-6, method="noisy_ols", bounds=BOUNDS, random_state=0,
                         inference=False)
    split = res.error_bounds.coefficients
    a, _ = scaling().coefficient_map()
    np.testing.assert_allclose(split.privacy, res.info["noise_sd"] * np.sqrt(np.diag(a @ a.T)), rtol=1e-12)
    assert split.released and "assumption" in split.sampling_source  # sampling from public facts


def test_non_private_reference_has_no_privacy_error():
    res = dpstats.dp_ols(FORMULA, data(3000, 6), math.inf, method="ols")
    split = res.error_bounds.coefficients
    assert np.all(split.privacy == 0) and np.allclose(split.sampling, res.bse.to_numpy())


def test_block_is_in_the_json_and_the_frame():
    res = dpstats.dp_ols(FORMULA, data(5000, 7), 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    out = json.loads(res.to_json())
    coefficients = out["error_bounds"]["coefficients"]
    assert coefficients["terms"] == list(res.params.index) and coefficients["released"] is True
    np.testing.assert_allclose(coefficients["privacy"], res.error_bounds.coefficients.privacy)
    frame = res.error_bounds.coefficients.to_frame()
    assert list(frame.columns) == ["privacy", "sampling", "ratio"] and list(frame.index) == list(res.params.index)
    assert any(line.startswith("x1: privacy") for line in res.error_bounds.lines())


def test_coefficient_errors_needs_bounds_or_a_split():
    assert coefficient_errors(["a", "b"], 100, intervals=[(1.0, 1.0), None], response_interval=(0.0, 1.0),
                              intercept_index=0) is None


def test_a_non_private_fit_has_no_privacy_error_table():
    """The ols reference (epsilon = inf) draws no noise: its summary has no privacy/sampling split (the sampling
    errors are the coefficient table's standard errors), while a private fit's has one."""
    frame = data(500, 1)
    reference = dpstats.dp_ols(FORMULA, frame, math.inf, method="ols").summary().as_text()
    private = dpstats.dp_ols(FORMULA, frame, 1.0, 1e-6, method="ssp", bounds=BOUNDS, random_state=0)
    assert "Error of each coefficient (its units" not in reference
    assert "Error of each coefficient (its units" in private.summary().as_text()


@pytest.mark.parametrize("n, lower", [(300, True), (3000, False)])
def test_pgd_error_block_is_a_lower_bound_below_n_mu_100(n, lower):
    """Below n * mu = 100 (public) pgd's error block is a lower bound: the released Gram matrix's noise hides the
    shrinkage of the weak directions, so the block does not say that sampling is the larger part (a new-user check
    found "the sampling error is larger ... for every coefficient" beside an estimate 3.4 sampling errors off, at
    n * mu = 49)."""
    res = dpstats.dp_ols(FORMULA, data(n, 0), 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0)
    coefficients = res.error_bounds.coefficients
    assert coefficients.lower_bound is lower
    statement = res.error_bounds.dominance_line()
    if lower:
        assert "sampling error is larger" not in statement
        assert "lower bound" in statement or "at least" in statement
        assert "hides the shrinkage" in coefficients.privacy_source


@pytest.mark.parametrize("n, lower", [(300, True), (3000, False)])
def test_error_table_title_says_when_privacy_is_a_lower_bound(n, lower):
    """The error table's title carries the block's caveats, so a reader of the table alone (the part a paper copies)
    does not take a small privacy/sampling ratio at face value: a new-user check found pgd's table at n * mu = 92
    showing an intercept's privacy error 20 times below its standard error in the coefficient table, and DP-SGD's
    table at n * mu = 12 a ratio of 0.04 for a coefficient 9 OLS standard errors off, with the caveat only in the
    notes below.  Deterministic given the seed."""
    res = dpstats.dp_ols(FORMULA, data(n, 0), 1.0, 1e-6, method="pgd", bounds=BOUNDS, random_state=0)
    coefficients = res.error_bounds.coefficients
    text = res.summary().as_text()
    assert coefficients.title() in text
    assert ("privacy: a lower bound" in coefficients.title()) is lower
    assert coefficients.title() in res.summary().as_html()
    dpsgd = dpstats.dp_ols(FORMULA, data(3000, 4), 3.0, 1e-6, method="dpsgd", bounds=BOUNDS, random_state=0)
    title = dpsgd.error_bounds.coefficients.title()
    assert title == "Error of each coefficient (its units; privacy: a lower bound; sampling: assumed)"
    assert title in dpsgd.summary().as_text()
