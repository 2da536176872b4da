"""The small-n * mu clip benchmark's wrapper (benchmarks/pgd_small_clips.py): recording pgd's clips leaves the fit as
it is, and its floor variant raises every clip below n * mu = CLIP_CEILING_N_MU to the floor and no other.
Deterministic (fixed data and noise seeds)."""

from __future__ import annotations

import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import dpstats
import dpstats.methods.pgd as pgd

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

pytest.importorskip("statsmodels", reason="the benchmark's least-squares reference")
import pgd_small_clips  # noqa: E402  (importable only after the sys.path line above)

EPSILON, DELTA = 1.0, 1e-6


def _fit(n: int, seed: int) -> dpstats.DPRegressionResults:
    df, bounds = pgd_small_clips.simulated(n, 3, 0.5, False, 11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpstats.dp_ols("y ~ x0 + x1 + x2", df, EPSILON, DELTA, method="pgd", bounds=bounds,
                              random_state=seed)


@pytest.fixture
def recording(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    monkeypatch.setattr(pgd, "grid_counts", pgd_small_clips._recording_grid_counts)
    monkeypatch.setattr(pgd, "_clips", pgd_small_clips._recording_clips)
    monkeypatch.setattr(pgd, "release_quantiles", pgd_small_clips._recording_release_quantiles)
    pgd_small_clips._LOG.clear()
    return pgd_small_clips._LOG


def test_recording_leaves_the_fit_as_it_is(recording: list[dict]) -> None:
    seeds = range(3)
    recorded = [_fit(100, seed).params.to_numpy() for seed in seeds]
    assert [entry["phase"] for entry in recording] == [1, 2] * len(seeds)
    assert all(entry["med"] > 0 and entry["clip"] > 0 for entry in recording)
    for seed, params in zip(seeds, recorded, strict=True):
        pgd_small_clips._LOG.clear()
        with pytest.MonkeyPatch.context() as undo:  # the installed pgd again
            undo.setattr(pgd, "_clips", pgd_small_clips._clips)
            undo.setattr(pgd, "grid_counts", pgd_small_clips._grid_counts)
            undo.setattr(pgd, "release_quantiles", pgd_small_clips._release_quantiles)
            np.testing.assert_array_equal(_fit(100, seed).params.to_numpy(), params)


@pytest.mark.parametrize("n", [100, 2000])
def test_floor_raises_the_clips_below_the_ceilings_n_mu_only(recording: list[dict],
                                                             monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    monkeypatch.setitem(pgd_small_clips._VARIANT, "floor", 0.5)
    for seed in range(5):
        _fit(n, seed)
    small = [entry for entry in recording if entry["n_mu"] < pgd.CLIP_CEILING_N_MU]
    assert len(small) == (len(recording) if n == 100 else 0)
    floors = [0.5 * entry["k"] * math.sqrt(entry["d"]) for entry in small]
    assert all(entry["clip"] >= floor - 1e-12 for entry, floor in zip(small, floors, strict=True))
    assert n > 100 or any(math.isclose(entry["clip"], floor) for entry, floor in zip(small, floors, strict=True))
