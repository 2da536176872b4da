"""The interval-terms benchmark's wrapper (benchmarks/pgd_interval_terms.py): it leaves pgd's fit and interval as they
are, its ``full`` variant rebuilds that interval from the same released values, and a variant without a term is
narrower.  Deterministic (fixed data and noise seeds), so no false-failure rate applies."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dpstats

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import coverage_grid  # noqa: E402  (importable only after the sys.path line above)
import pgd_interval_terms  # noqa: E402

SETTING = coverage_grid.Setting("pgd", 1000, 5, "correlated", "tight", 1.0)


def _fit(seed: int) -> tuple[dpstats.DPRegressionResults, np.ndarray]:
    X, y = coverage_grid.simulate(SETTING.n, SETTING.d, SETTING.design, np.random.default_rng(seed))
    x_bounds, y_bounds = coverage_grid.declared_bounds(SETTING.d, SETTING.design, SETTING.bounds)
    res = dpstats.dp_ols_arrays(X, y, SETTING.epsilon, coverage_grid.DELTA, method="pgd", x_bounds=x_bounds,
                                y_bounds=y_bounds, intercept=True, random_state=seed)
    return res, res.conf_int().to_numpy()


def test_the_wrapper_leaves_the_fit_and_its_interval_as_they_are(monkeypatch: pytest.MonkeyPatch) -> None:
    plain = [_fit(seed) for seed in (1, 2)]
    pgd_interval_terms.install(monkeypatch.setattr)
    for seed, (res, ci) in zip((1, 2), plain, strict=True):
        wrapped, wrapped_ci = _fit(seed)
        np.testing.assert_array_equal(wrapped.params.to_numpy(), res.params.to_numpy())
        np.testing.assert_array_equal(wrapped_ci, ci)
        assert set(pgd_interval_terms._state["variants_user"]) == set(pgd_interval_terms.VARIANTS)


def test_the_full_variant_rebuilds_the_interval_and_fewer_terms_narrow_it(monkeypatch: pytest.MonkeyPatch) -> None:
    pgd_interval_terms.install(monkeypatch.setattr)
    res, ci = _fit(3)
    b = res.params.to_numpy()
    widths = {}
    for name, draws in pgd_interval_terms._state["variants_user"].items():
        lower, upper = dpstats.inference.basic_bootstrap_interval(b, draws, 0.05)
        widths[name] = upper - lower
    # the same terms, 4,000 draws of their own: the widths agree to Monte Carlo error (a few percent)
    np.testing.assert_allclose(widths["full"], ci[:, 1] - ci[:, 0], rtol=0.1)
    assert np.all(widths["normal_spread"] < widths["full"])  # t with 4 df -> normal: 1.96 / 2.78 of the spread
    assert np.median(widths["no_sampling"] / widths["full"]) < 1.0
