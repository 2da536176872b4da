"""What clipped, noisy gradient descent does on assumed data: the pieces of a method's planned error.

A method that clips per-example gradients at a private quantile of their norms and takes noisy steps has no
closed-form error, but under assumed moments (:class:`~dpstats.rates.PlanningFacts`, :func:`dpstats.plan`) each
quantity its fit reads from a release has an expected value.  This module gives two of them, for a method's
``UpperRate.expected_error``:

* :class:`NormLaw`: the law of the gradient norms ||z|| |r| of standardised rows z (normal with a given second
  moment, its squared norm taken as a scaled chi-square with the same mean and variance) and normal residuals r
  independent of z, with the quantile a fit reads from their noise-free histogram and the share of rows a clip
  leaves unclipped;
* :func:`iterate_variance`: how far one noisy chain's iterates wander about their fixed point, which widens the
  residuals the clip sees.

Public facts and assumptions only: nothing here reads data or draws noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, norm

from dpstats.methods.common.geometric_histogram import GeometricGrid, quantile_from_counts

__all__ = ["NormLaw", "iterate_variance", "QUADRATURE_POINTS"]

#: Points of the quadrature over the squared row norm (its quantiles at (i - 1/2) / QUADRATURE_POINTS).
QUADRATURE_POINTS = 200


@dataclass(frozen=True)
class NormLaw:
    """The law of a gradient norm ||z|| |r| with ||z||^2 = ``constant`` + a scaled chi-square (``scale`` times a
    chi-square with ``df`` degrees of freedom) and r normal with sd ``residual_sd``, independent of z."""

    constant: float
    scale: float
    df: float
    residual_sd: float

    @classmethod
    def of(cls, second_moment: np.ndarray, fixed: float, residual_sd: float) -> NormLaw:
        """The law for z with the random part's second moment ``second_moment`` (its squared norm's mean and
        variance matched by the scaled chi-square, as for a normal z), plus ``fixed`` (the intercept's 1)."""
        eig = np.clip(np.linalg.eigvalsh(second_moment), 0.0, None) if second_moment.size else np.zeros(0)
        mean, square = float(eig.sum()), float(np.sum(eig**2))
        if mean <= 0.0:
            return cls(fixed, 0.0, 1.0, residual_sd)
        return cls(fixed, square / mean, mean * mean / square, residual_sd)

    def norms(self) -> np.ndarray:
        """||z|| at the quadrature points."""
        u = (np.arange(QUADRATURE_POINTS) + 0.5) / QUADRATURE_POINTS
        return np.sqrt(self.constant + self.scale * chi2.ppf(u, self.df))

    def cdf(self, values: np.ndarray) -> np.ndarray:
        """P(||z|| |r| <= v) at each of ``values``."""
        norms = np.maximum(self.norms(), 1e-300)
        ratio = np.asarray(values, dtype=float)[:, None] / (norms[None, :] * max(self.residual_sd, 1e-300))
        return np.mean(2.0 * norm.cdf(ratio) - 1.0, axis=1)

    def quantile(self, q: float, n: int, grid: GeometricGrid) -> float:
        """The q-quantile a fit reads from the noise-free histogram of n rows in ``grid``, by its reading rule
        (:func:`~dpstats.methods.common.geometric_histogram.quantile_from_counts`)."""
        cdf = self.cdf(grid.edges[1:-1])
        counts = n * np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        return quantile_from_counts(counts, q, n, grid)


def iterate_variance(precond: np.ndarray, curvature: np.ndarray, step_variance: float, steps: int) -> np.ndarray:
    """The variance, per direction, of one chain's iterate about its fixed point in the recursion
    e_t = (1 - H / P) e_(t-1) - xi_t / P with Var xi_t = ``step_variance``: stationary where the contraction is
    below 1, at most that of ``steps`` undamped steps."""
    contraction = np.clip(1.0 - curvature / precond, 0.0, 1.0)
    return step_variance / precond**2 * np.minimum(1.0 / np.maximum(1.0 - contraction**2, 1e-300), steps)
