"""A plain module beside the tests, imported as ``standardisation_helpers`` (tests/ has no ``__init__.py``):
released maps for the sensitivity audits of the methods that run on privately standardised rows."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from dpstats.methods import dpsgd
from dpstats.methods.common.private_scaling import Domain, Standardisation
from dpstats.privacy.poisson_gaussian import ClippedGridSum


def small_scale_standardisation(rng: np.random.Generator, d: int) -> Standardisation:
    """A map of d columns (the first the intercept) with small scales, so the standardised rows are long and
    every clip binds."""
    lo = np.r_[1.0, rng.uniform(-5, 0, d - 1)]
    hi = np.r_[1.0, lo[1:] + rng.uniform(0.5, 10, d - 1)]
    domain = Domain(lo, hi, -3.0, 7.0, intercept_index=0)
    centre = np.r_[0.0, rng.uniform(-1, 1, d - 1)]
    scale = np.r_[1.0, rng.uniform(2.0**-10, 0.5, d - 1)]
    return Standardisation(domain, centre, scale, float(rng.uniform(-1, 1)), float(rng.uniform(2.0**-10, 0.5)))


def assert_step_sums_within_sensitivity(row_map: Any, X: np.ndarray, y: np.ndarray, rows: Iterable[int],
                                        replacements: Iterable[tuple[Any, float]], rng: np.random.Generator) -> None:
    """Exact check (no false failures) of a DP-SGD step on rows mapped by ``row_map`` (a released
    standardisation or a public map): the step's exact clipped grid sum over X, y is the same without its null
    rows (NaN), and replacing each of ``rows`` by each (row, response) of ``replacements`` moves it by at most
    2 C' (C' the clip after the grid's rounding)."""
    n, d = X.shape
    clip, exponent = 0.3, -40
    summer = ClippedGridSum(clip, exponent, d)
    w = rng.normal(0, 3, d)

    def grid_sum(Xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        return np.asarray(dpsgd.StepSum(np.arange(n), w, summer, row_map)(Xs, ys, 0), dtype=float) * 2.0**exponent

    base = grid_sum(X, y)
    live = ~np.isnan(y)
    assert np.array_equal(base, grid_sum(X[live], y[live]))  # null rows add exactly nothing
    bound = 2 * (clip * (1 + 2.0**-30) + 2.0**exponent * math.ceil(math.sqrt(d)) / 2)
    for i, (row, yi) in itertools.product(rows, list(replacements)):
        Xp, yp = X.copy(), y.copy()
        Xp[i], yp[i] = row, yi
        moved = float(np.linalg.norm(grid_sum(Xp, yp) - base))
        assert math.isfinite(moved) and moved <= bound
