"""Least squares from chunks of rows: the R factor of [X | y] combined over chunks (TSQR).

For the non-private reference ``ols``.  One pass computes, per chunk, the
upper-triangular R of the QR decomposition of the augmented rows [X | y] and
the count, mean and centred sum of squares of y; two chunks combine by the
QR of their stacked R factors (Demmel, Grigori, Hoemmen & Langou, "Communication-
optimal parallel and sequential QR and LU factorizations", SIAM J. Sci.
Comput. 2012) and by Chan, Golub & LeVeque's pairwise update of the mean and
sum of squares.  With R = [[R_X, r_y], [0, rho]]:

* ||X b - y||^2 = ||R_X b - r_y||^2 + rho^2 for every b (Q has orthonormal
  columns), so least squares on (R_X, r_y) is least squares on (X, y), with
  the same minimum-norm solution when X is rank deficient;
* the columns of R_X have the norms of the columns of X, and the singular
  values of R_X are those of X.

So the fit is the backward-stable Householder least squares of the whole
design, computed from d x d aggregates whatever the partition (in memory the
whole array is one chunk).  NOT PRIVATE: nothing here is noisy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import qr

__all__ = ["LeastSquaresFactor", "LeastSquaresPass", "combine_factors"]


@dataclass
class LeastSquaresFactor:
    """R of [X | y] (at most d + 1 rows), and the count, mean and centred sum of squares of y."""

    r: np.ndarray
    n: int
    y_mean: float
    y_m2: float

    @property
    def d(self) -> int:
        return int(self.r.shape[1]) - 1

    def triangle(self) -> np.ndarray:
        """R as a (d + 1) x (d + 1) upper-triangular matrix (zero rows appended when n < d + 1)."""
        out = np.zeros((self.d + 1, self.d + 1))
        out[:self.r.shape[0]] = self.r
        return out


def _r_factor(a: np.ndarray) -> np.ndarray:
    """R of the (Householder) QR decomposition of ``a``, which is overwritten: min(rows, columns) x columns, upper
    triangular.  ``a`` should be in Fortran order (LAPACK's), so that no copy is made."""
    (factored, _), _ = qr(a, mode="raw", overwrite_a=True, check_finite=False)
    return np.triu(factored[:min(a.shape)])


def _augmented(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """[X | y] as a new Fortran-ordered array (one copy of the chunk)."""
    out = np.empty((X.shape[0], X.shape[1] + 1), order="F")
    out[:, :-1] = X
    out[:, -1] = y
    return out


class LeastSquaresPass:
    """The pass (X, y, offset) -> :class:`LeastSquaresFactor` of one chunk (picklable; ignores the offset)."""

    uses_offset = False

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> LeastSquaresFactor:
        n = int(X.shape[0])
        r = _r_factor(_augmented(X, y)) if n else np.zeros((0, X.shape[1] + 1))
        mean = float(y.mean()) if n else 0.0
        return LeastSquaresFactor(r, n, mean, float(((y - mean) ** 2).sum()) if n else 0.0)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LeastSquaresPass)

    __hash__ = None  # type: ignore[assignment]


def combine_factors(a: LeastSquaresFactor, b: LeastSquaresFactor) -> LeastSquaresFactor:
    """The factor of the rows of ``a`` and ``b``: QR of the stacked R factors; pairwise mean and sum of squares."""
    n = a.n + b.n
    if n == 0:
        return a
    r = _r_factor(np.asfortranarray(np.vstack([a.r, b.r])))
    delta = b.y_mean - a.y_mean
    mean = a.y_mean + delta * b.n / n
    m2 = a.y_m2 + b.y_m2 + delta * delta * a.n * b.n / n
    return LeastSquaresFactor(r, n, mean, m2)
