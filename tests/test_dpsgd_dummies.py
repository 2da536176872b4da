"""DP-SGD on the public rescaling with factor dummies back on their contrast's values (issue 17, part 4: declared
bounds should not make a fit worse).

Where every variable is bounded but the moments cannot resolve the scales (small n), the steps run on the public
rescaling to [-1, 1]; there each factor dummy is put back on 0 and 1 (``dpsgd.DummyUnits``, public facts only)
and the coefficients mapped back.  Checked here: the map back is exact; the map is chosen from public facts
only; nothing new is released (the ledger holds the one run of steps, within the budget); a step's sum on the
mapped rows moves by at most its sensitivity for any replaced row (exact); a statistical audit of the whole fit
on a worst-case pair; and the behaviour it is for (a many-level factor at small n).  Seeds are fixed.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pandas as pd
import pytest
from ledger_helpers import method_steps
from standardisation_helpers import assert_step_sums_within_sensitivity

import dpstats
from dpstats.methods import dpsgd
from dpstats.methods.registry import FitContext
from dpstats.privacy.audit import audit_mechanism
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.poisson_gaussian import ClippedGridSum, add_grid_sums
from dpstats.rows.memory import InMemoryRows

EPS, DELTA = 1.0, 1e-6
K = 12  # factor levels
LEVELS = {"g": tuple(f"g{i:02d}" for i in range(K))}
BOUNDS = {"x": (0.0, 10.0), "y": (-20.0, 30.0)}


def _frame(seed: int, n: int = 300) -> pd.DataFrame:
    """y = 5 + a_g + 0.5 x + N(0, 1), group effects a_g evenly in [-2, 2]."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, K, n)
    x = rng.uniform(0, 10, n)
    effects = np.linspace(-2, 2, K)
    return pd.DataFrame({"g": [f"g{i:02d}" for i in g], "x": x, "y": 5 + effects[g] + 0.5 * x + rng.normal(0, 1, n)})


def _fit(df: pd.DataFrame, seed: int):
    return dpstats.dp_ols("y ~ x + C(g)", df, epsilon=EPS, delta=DELTA, method="dpsgd", bounds=BOUNDS, levels=LEVELS,
                          random_state=seed)


def _ctx(**kw) -> FitContext:
    """Intercept, a declared column and a two-level factor's dummy, on the public rescaling."""
    base = FitContext(n=100, d=3, ledger=PrivacyLedger(EPS, DELTA), rng=np.random.default_rng(0), intercept_index=0,
                      column_ranges=((1.0, 1.0), (-1.0, 1.0), (-1.0, 1.0)), response_range=(-1.0, 1.0),
                      rescaled=True, column_values=((1.0,), None, (-1.0, 1.0)))
    return dataclasses.replace(base, **kw)


# -- the map ----------------------------------------------------------------------------------------------------

def test_the_map_is_chosen_from_public_facts_only():
    units = dpsgd.dummy_units(_ctx())
    assert units is not None
    assert units.columns.tolist() == [2] and units.lo.tolist() == [-1.0] and units.span.tolist() == [2.0]
    assert dpsgd.dummy_units(_ctx(rescaled=False)) is None  # the rows as they come
    assert dpsgd.dummy_units(_ctx(intercept_index=None)) is None  # no intercept to absorb the shift
    assert dpsgd.dummy_units(_ctx(column_values=((1.0,), None, None))) is None  # no dummy
    assert dpsgd.dummy_units(_ctx(column_values=())) is None  # nothing known


def test_the_map_back_is_exact():
    """Least squares on the mapped rows, mapped back, is least squares on the rows (any data: an affine
    reparametrisation of the same model)."""
    rng = np.random.default_rng(1)
    n = 50
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, n), rng.choice([-1.0, 1.0], n), rng.choice([-1.0, 1.0], n)])
    y = rng.normal(0, 1, n)
    units = dpsgd.DummyUnits(np.array([2, 3]), np.array([-1.0, -1.0]), np.array([2.0, 2.0]), 4, 0)
    Z = units.design(X)
    assert set(np.unique(Z[:, 2:])) == {0.0, 1.0} and np.array_equal(Z[:, :2], X[:, :2])
    theta = np.linalg.lstsq(Z, units.response(y), rcond=None)[0]
    np.testing.assert_allclose(units.params_back(theta), np.linalg.lstsq(X, y, rcond=None)[0], atol=1e-10)


# -- privacy ----------------------------------------------------------------------------------------------------

def test_nothing_new_is_released_and_the_total_is_within_budget():
    res = _fit(_frame(0), seed=0)
    assert res.info["dummies_on_own_values"] is True and res.info["standardised"] is False
    (run,) = method_steps(res.privacy.steps)  # the one run of steps (besides the missing-value screen): the map
    # releases nothing
    assert run.delta == DELTA and res.privacy.epsilon_spent <= EPS * (1 + 1e-9)
    expected = "factor dummy (and every integer column declared between consecutive integers) back on its own values"
    assert any(expected in note for note in res.privacy.notes)


BIG = np.finfo(float).max


@pytest.mark.parametrize("seed", range(3))
def test_a_step_sum_on_mapped_rows_moves_at_most_by_its_sensitivity(seed):
    """Exact check (no false failures): each row of a random data set (with public null rows) replaced by each
    adversarial row (dummy values, out-of-range and extreme values, zero) moves a step's exact clipped grid sum by
    at most 2 C' (C' the rounded clip), and a null row adds nothing."""
    rng = np.random.default_rng(seed)
    d, n = 4, 24
    units = dpsgd.DummyUnits(np.array([2, 3]), np.array([-1.0, -1.0]), np.array([2.0, 2.0]), d, 0)
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, n), rng.choice([-1.0, 1.0], (n, 2))])
    y = rng.uniform(-1, 1, n)
    X[::5], y[::5] = np.nan, np.nan
    values = (-1.0, 1.0, 0.0, -BIG, BIG, 1e6)
    replacements = [((1.0, a, b, c), yi) for a, b, c, yi in itertools.product(values, values, values, values)]
    assert_step_sums_within_sensitivity(units, X, y, range(0, n, 3), replacements, rng)


def test_step_sums_on_mapped_rows_add_exactly_over_chunks():
    rng = np.random.default_rng(4)
    units = dpsgd.DummyUnits(np.array([2]), np.array([-1.0]), np.array([2.0]), 3, 0)
    X = np.column_stack([np.ones(40), rng.uniform(-1, 1, 40), rng.choice([-1.0, 1.0], 40)])
    y = rng.uniform(-1, 1, 40)
    step = dpsgd.StepSum(np.sort(rng.choice(40, 15, replace=False)), rng.normal(0, 1, 3),
                         ClippedGridSum(0.3, -40, 3), units)
    assert np.array_equal(InMemoryRows(X, y).reduce(step, add_grid_sums),
                          InMemoryRows(X, y, 7).reduce(step, add_grid_sums))


AUDIT_EPS, AUDIT_DELTA, AUDIT_ALPHA, AUDIT_N, AUDIT_RUNS = 2.0, 1e-3, 1e-3, 100, 4_000


class _RecordingLedger(PrivacyLedger):
    """Records the steps without composing them (the audit runs the fit thousands of times)."""

    def charge(self, step: PrivacyStep) -> None:
        self.steps.append(step)


def _audit_pair() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Rows with a two-level dummy and response 0 (no gradient at the start w = 0, so the other rows add little
    spread to the output); the last row at the dummy's 1 with response +1 in D and -1 in D' (its gradient,
    clipped, points the other way in every step that samples it: the pair moves a step's sum by 2 C)."""
    u = np.where(np.arange(AUDIT_N) % 2 == 0, 1.0, -1.0)
    X = np.column_stack([np.ones(AUDIT_N), u])
    y = np.zeros(AUDIT_N)
    X[-1, 1], y[-1] = 1.0, 1.0
    y_prime = y.copy()
    y_prime[-1] = -1.0
    return (X, y), (X, y_prime)


def _audit_run(data, rng):
    """One whole fit (two steps, sampling rate 0.5); the statistic is the fitted value at the replaced row's
    covariates, intercept + dummy coefficient: on the mapped rows that row is z = (1, 1), the direction in which
    the pair moves the steps."""
    X, y = data
    ctx = FitContext(n=AUDIT_N, d=2, ledger=_RecordingLedger(AUDIT_EPS, AUDIT_DELTA), rng=rng, intercept_index=0,
                     column_ranges=((1.0, 1.0), (-1.0, 1.0)), response_range=(-1.0, 1.0), rescaled=True,
                     column_values=((1.0,), (-1.0, 1.0)))
    fitted = dpsgd.fit(InMemoryRows(X, y), ctx, dpsgd.DPSGDOptions(batch_size=50, epochs=1.0, clip_norm=1.0,
                                                                     optimizer="sgd", learning_rate=0.5))
    assert fitted.diagnostics["dummies_on_own_values"] and not fitted.diagnostics["standardised"]
    return float(fitted.params[0] + fitted.params[1])


def test_audit_fit_with_dummies_on_own_values():
    """The whole fit on the mapped rows on a worst-case pair.  Validity (bound <= claim): false-failure rate
    alpha = 1e-3.  Power (bound > 0: the audit sees the replaced row through the whole fit): fails for about
    0.2% of seeds (2 of 1,000 audits of 4,000 runs resampled from 24,000 runs per data set)."""
    # The power check needs the pair to move the audited statistic by a visible share of its spread: with the
    # other rows on a line, sampling rate 0.2 and the dummy's coefficient alone as the statistic, the pair moved
    # it by 0.24 sd and the bound was 0 at this seed; here the other rows add little spread, each step samples
    # the row with probability 0.5, and the statistic is the fitted value at the row.
    d_pair, dp_pair = _audit_pair()
    res = audit_mechanism(_audit_run, d_pair, dp_pair, runs=AUDIT_RUNS, delta=AUDIT_DELTA, alpha=AUDIT_ALPHA,
                          seed=21)
    assert 0.0 < res.epsilon_lower_bound <= AUDIT_EPS


# -- behaviour --------------------------------------------------------------------------------------------------

def test_a_many_level_factor_at_small_n_fits_better_with_dummies_on_their_values(monkeypatch):
    """n = 300, a 12-level factor, epsilon 1: the slope's median absolute error over seeds 0-29 is 0.19 with the
    map and 0.63 without it (dummies at -1 and +1); the assertion asks for under half (deterministic: fixed
    seeds; over 10 seeds the median with the map ranged from 0.17 to 0.34 as the noise was redrawn)."""
    def slope_errors() -> list[float]:
        return [abs(float(_fit(_frame(s), seed=s).params["x"]) - 0.5) for s in range(30)]

    with_map = float(np.median(slope_errors()))
    monkeypatch.setattr(dpsgd, "dummy_units", lambda ctx: None)
    without = float(np.median(slope_errors()))
    assert with_map < 0.5 * without and with_map < 0.3
