"""A plain module beside the tests, imported as ``standardisation_helpers`` (tests/ has no ``__init__.py``):
released maps for the sensitivity audits of the methods that run on privately standardised rows."""

from __future__ import annotations

import numpy as np

from dpstats.methods.common.private_scaling import Domain, Standardisation


def small_scale_standardisation(rng: np.random.Generator, d: int) -> Standardisation:
    """A map of d columns (the first the intercept) with small scales, so the standardised rows are long and
    every clip binds."""
    lo = np.r_[1.0, rng.uniform(-5, 0, d - 1)]
    hi = np.r_[1.0, lo[1:] + rng.uniform(0.5, 10, d - 1)]
    domain = Domain(lo, hi, -3.0, 7.0, intercept_index=0)
    centre = np.r_[0.0, rng.uniform(-1, 1, d - 1)]
    scale = np.r_[1.0, rng.uniform(2.0**-10, 0.5, d - 1)]
    return Standardisation(domain, centre, scale, float(rng.uniform(-1, 1)), float(rng.uniform(2.0**-10, 0.5)))
