"""Shared building blocks of the estimators (no estimator lives here; nothing here draws noise).

* :mod:`~dpstats.methods.common.sufficient`: sums over rows of clipped x x^T, x y, y^2 (one pass) and the
  released (noisy) statistics;
* :mod:`~dpstats.methods.common.linalg`: post-processing linear algebra on released quantities;
* :mod:`~dpstats.methods.common.least_squares`: least squares from chunks of rows (TSQR), for the non-private
  reference.
"""
