"""The held-out targets benchmark's helpers (benchmarks/held_out_targets.py): its noise-free diagnostic removes every
Gaussian release's noise only inside its context and restores the installed sampler after, its tail variant changes
pgd's tail level only below the installed start, and its summary splits the misses between the cells whose noise-free
estimate sits away from least squares and the others. Deterministic (fixed records and noise seeds)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import dpstats.methods.pgd as pgd
import dpstats.privacy.mechanisms as mechanisms
import dpstats.privacy.samplers as samplers
from dpstats.privacy.ledger import PrivacyLedger

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

pytest.importorskip("statsmodels", reason="the benchmark's least-squares reference")
import held_out_targets  # noqa: E402  (importable only after the sys.path line above)


def _release(seed: int) -> np.ndarray:
    value = np.array([1.25, -3.5, 40.0])
    rng, ledger = np.random.default_rng(seed), PrivacyLedger(10.0, 1e-6)
    return np.asarray(mechanisms.gaussian_mechanism_mu(value, l2_sensitivity=1.0, mu=0.5, rng=rng, ledger=ledger,
                                                       name="test"))


def test_noise_free_releases_the_values_inside_its_context_only() -> None:
    installed = samplers.discrete_gaussian
    noisy = _release(1)
    with held_out_targets.noise_free():
        np.testing.assert_allclose(_release(1), [1.25, -3.5, 40.0], atol=1e-3)  # the value on the mechanism's grid
        block = mechanisms.fixed_gaussian_block(rounds=2, mu_round=0.5, ledger=PrivacyLedger(10.0, 1e-6), name="test",
                                                l2_sensitivity=1.0, dimension=2)
        np.testing.assert_allclose(block.release(np.array([0.5, 2.0]), rng=np.random.default_rng(2)), [0.5, 2.0],
                                   atol=1e-3)
    assert samplers.discrete_gaussian is installed and mechanisms.discrete_gaussian is installed
    np.testing.assert_array_equal(_release(1), noisy)
    assert np.max(np.abs(noisy - [1.25, -3.5, 40.0])) > 0.1  # sd 2 per coordinate: not the value


def test_tail_from_starts_the_tail_correction_lower_and_leaves_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = pgd.tail_level
    monkeypatch.setattr(pgd, "tail_level", installed)  # undone after the test
    held_out_targets.tail_from(100.0)
    assert pgd.tail_level(99.0) is None and pgd.tail_level(150.0) == 0.95
    for n_mu in (320.0 * 1.01, 1000.0, 5000.0):
        assert pgd.tail_level(n_mu) == installed(n_mu)


def _record(name: str, seed: int, noise: float, z: float, half: float, n_mu: float = 150.0) -> dict:
    return dict(set=name, eps=1.0, seed=seed, noise=noise, n=200, d=3, t_ols=10.0, z=z, lo=z - half, hi=z + half,
                n_mu=n_mu, clips=[1.0, 1.0], tail_corrected=0)


def test_summary_splits_the_misses_by_the_noise_free_estimate() -> None:
    # "far": the noise-free estimate 4 ses off, intervals of half-width 1 around it (all miss least squares, all
    # cover the target); "near": target at least squares, one interval of four misses
    records = [_record("far", s, 1.0, 4.0, 1.0) for s in range(4)] + [_record("far", 100, 0.0, 4.0, 1.0)]
    records += [_record("near", s, 1.0, z, 1.0) for s, z in enumerate((0.5, -0.5, 0.2, 3.0))]
    records += [_record("near", 100, 0.0, 0.0, 1.0)]
    text = held_out_targets.summarise(records)
    assert "all: 8 fits: covers OLS 0.375" in text
    assert "intervals covering the noise-free estimate: 0.875" in text
    assert "1 (4 fits), 4 of the 5 misses; the other 4 fits cover in 0.750" in text
    assert "far at epsilon 1: 4 of 4 miss" in text and "near at epsilon 1" not in text
    free = held_out_targets.summarise([r for r in records if r["noise"] == 0.0])
    tail = " least-squares standard errors from least squares"
    assert free.splitlines() == [f"far at epsilon 1: noise-free estimate +4.00{tail}",
                                 f"near at epsilon 1: noise-free estimate +0.00{tail}"]
    paired = held_out_targets.against(records, [dict(r, lo=r["lo"] - 4.0) for r in records])
    assert "-> 8 fits: covers OLS 1.000" in paired and "paired median width ratio 3.000" in paired
