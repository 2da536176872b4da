"""A private quantile of non-negative per-row values from one noisy histogram on a coarse public geometric grid.

Used by ``pgd`` to set its per-example gradient clip from a quantile of the gradient norms ||z_i|| |r_i|
(adaptive clipping in the spirit of Andrew, Thakkar, McMahan & Ramaswamy, NeurIPS 2021, with a histogram in
place of their online estimate).  Proof: docs/proofs/pgd.md.

* The grid is public: edges lo r^j, j = 0..B, with ratio r; a value below lo (zero included) counts in the
  first bin, one at or above the last edge, or not finite, in the last bin.  Each row adds one count to one
  bin, so the counts are a sum over rows (a pass over chunks adds them up).
* Replacing one row moves one count from one bin to another: the count vector has L2 sensitivity sqrt(2),
  and one Gaussian release of it is mu-GDP whatever the grid.
* The q-quantile is read from the noisy counts (post-processing, n public): the CDF at each edge is estimated
  from below (noisy counts of the bins under it) and from above (n minus the bins over it), the two combined
  with weights inversely proportional to the number of noisy counts each sums, made monotone, and inverted
  with geometric interpolation inside the bin.  A coarse grid (ratio 4) keeps the number of noisy counts
  small, so the release is usable at n mu of a few tens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstats.methods.common.extremes import QUIET
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu

__all__ = ["GeometricGrid", "HISTOGRAM_SENSITIVITY", "grid_counts", "quantile_from_counts", "release_quantile",
           "release_quantiles"]

#: L2 sensitivity of a vector of counts, one per row, under replace-one neighbours.
HISTOGRAM_SENSITIVITY = math.sqrt(2.0)


@dataclass(frozen=True)
class GeometricGrid:
    """Public bins [lo r^j, lo r^(j+1)), j = 0..bins-1, the first also holding values below lo, the last values
    at or above its upper edge and non-finite ones.

    Attributes
    ----------
    lo : float
        Lower edge of the second bin's range (values below it share the first bin).
    ratio : float
        Ratio of consecutive edges (> 1).
    bins : int
        Number of bins.
    """

    lo: float = 2.0**-10
    ratio: float = 4.0
    bins: int = 10

    @property
    def edges(self) -> np.ndarray:
        """The bins + 1 edges lo r^j."""
        return self.lo * self.ratio ** np.arange(self.bins + 1)

    def index(self, values: np.ndarray) -> np.ndarray:
        """Bin of each value (a fixed public rule for zero, negative, huge, inf and NaN values)."""
        v = np.asarray(values, dtype=float)
        with np.errstate(**QUIET):
            pos = np.floor(np.log(np.where(v > self.lo, v, self.lo) / self.lo) / math.log(self.ratio))
        pos = np.where(np.isnan(v) | ~np.isfinite(pos), self.bins - 1, pos)
        return np.clip(pos, 0, self.bins - 1).astype(np.intp)


def grid_counts(values: np.ndarray, grid: GeometricGrid) -> np.ndarray:
    """Counts (int64) of ``values`` in the bins of ``grid``: a sum over rows."""
    return np.bincount(grid.index(values), minlength=grid.bins).astype(np.int64)


def quantile_from_counts(noisy: np.ndarray, q: float, n: float, grid: GeometricGrid) -> float:
    """The q-quantile read from noisy counts (module docstring): post-processing of a release and public n."""
    m = grid.bins
    noisy = np.asarray(noisy, dtype=float)
    below = np.cumsum(noisy)  # CDF at the upper edge of bin j from the j + 1 counts under it
    above = n - np.append(np.cumsum(noisy[::-1])[::-1][1:], 0.0)  # ... from the m - j - 1 counts over it
    w_below = 1.0 / np.arange(1, m + 1)
    w_above = 1.0 / np.maximum(np.arange(m - 1, -1, -1), 1e-9)
    cdf = np.maximum.accumulate((w_below * below + w_above * above) / (w_below + w_above))
    target = q * n
    j = int(np.searchsorted(cdf, target))
    edges = grid.edges
    if j >= m:
        return float(edges[-1])
    prev = cdf[j - 1] if j > 0 else 0.0
    step = cdf[j] - prev
    frac = 0.5 if step <= 0 else float(np.clip((target - prev) / step, 0.0, 1.0))
    return float(edges[j] * grid.ratio**frac)


def release_quantile(counts: np.ndarray, q: float, n: int, grid: GeometricGrid, *, mu: float,
                     rng: np.random.Generator, ledger: PrivacyLedger, name: str) -> float:
    """Release ``counts`` (of :func:`grid_counts` over all n rows) with a mu-GDP Gaussian mechanism
    (sensitivity sqrt 2) and return the q-quantile read from them."""
    return release_quantiles(counts, (q,), n, grid, mu=mu, rng=rng, ledger=ledger, name=name)[0]


def release_quantiles(counts: np.ndarray, qs: tuple[float, ...], n: float, grid: GeometricGrid, *, mu: float,
                      rng: np.random.Generator, ledger: PrivacyLedger, name: str) -> tuple[float, ...]:
    """Release ``counts`` once, as :func:`release_quantile`, and read every q in ``qs`` from the same noisy
    counts (post-processing: one release, whatever the number of quantiles)."""
    if counts.shape != (grid.bins,):
        raise ValueError("the counts do not match the grid")
    noisy = gaussian_mechanism_mu(np.asarray(counts, dtype=float), l2_sensitivity=HISTOGRAM_SENSITIVITY, mu=mu,
                                  rng=rng, ledger=ledger, name=name)
    noisy = np.asarray(noisy, dtype=float)
    return tuple(quantile_from_counts(noisy, q, n, grid) for q in qs)
