"""Post-processing linear algebra shared by the sufficient-statistics methods.

Everything here acts on released (noisy) quantities only, so it is free
post-processing.  Solves never return NaN: an indefinite or singular noisy
Gram matrix is repaired deterministically.
"""

from __future__ import annotations

import numpy as np

__all__ = ["solve_noisy_normal_equations"]


def solve_noisy_normal_equations(gram: np.ndarray, moment: np.ndarray, ridge: float = 0.0,
                                 eigen_floor: float = 0.0) -> np.ndarray:
    """Solve (gram + ridge I) b = moment for a symmetric, possibly indefinite gram.

    The eigenvalues of ``gram + ridge I`` are floored at ``eigen_floor`` (a
    projection onto {A : A >= eigen_floor I}); with a zero floor the minimum-
    norm solution is returned on the null space.  Always finite.
    """
    d = gram.shape[0]
    a = 0.5 * (gram + gram.T) + ridge * np.eye(d)
    w, v = np.linalg.eigh(a)
    w = np.maximum(w, eigen_floor)
    tol = max(float(np.max(np.abs(w))), 1.0) * d * np.finfo(float).eps
    inv = np.where(w > tol, 1.0 / np.where(w > tol, w, 1.0), 0.0)
    return v @ (inv * (v.T @ moment))
