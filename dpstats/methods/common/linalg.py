"""Post-processing linear algebra shared by the sufficient-statistics methods.

Everything here acts on released (noisy) quantities only, so it is free
post-processing.  Solves never return NaN: an indefinite or singular noisy
Gram matrix is repaired deterministically.  All functions accept stacks of
problems (leading batch dimensions) so that a parametric bootstrap can re-run
an estimator on thousands of simulated releases in one call.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import numpy as np

from dpstats.blas import single_threaded_blas

__all__ = ["solve_noisy_normal_equations", "psd_projection", "psd_sqrt", "eigh", "shared_eigh"]

#: the eigen-decompositions of the matrices met within :func:`shared_eigh`, by their exact bytes (None outside)
_EIGH_MEMO: contextvars.ContextVar[dict[tuple[object, ...], tuple[np.ndarray, np.ndarray]] | None] = \
    contextvars.ContextVar("dpstats_eigh_memo", default=None)


@contextlib.contextmanager
def shared_eigh() -> Iterator[None]:
    """Within the block, :func:`eigh` of a single matrix whose exact values (shape, dtype and bytes) it met before
    returns that decomposition again (read-only) instead of repeating it: a sufficient-statistics fit decomposes
    its released X^T X in its projection, its bootstrap, its floored inverses and its error split.  The same
    arrays a new computation gives; the memo ends with the block (a fit's released values are not kept)."""
    token = _EIGH_MEMO.set({})
    try:
        yield
    finally:
        _EIGH_MEMO.reset(token)


def solve_noisy_normal_equations(gram: np.ndarray, moment: np.ndarray, ridge: float | np.ndarray = 0.0,
                                 eigen_floor: float = 0.0) -> np.ndarray:
    """Solve (gram + ridge I) b = moment for symmetric, possibly indefinite gram (batched).

    The eigenvalues of ``gram + ridge I`` are floored at ``eigen_floor`` (a
    projection onto {A : A >= eigen_floor I}); with a zero floor the minimum-
    norm solution is returned on the null space.  Always finite.

    Shapes: gram (..., d, d), moment (..., d), ridge scalar or (...,).
    """
    g = np.asarray(gram, dtype=float)
    d = g.shape[-1]
    a = 0.5 * (g + np.swapaxes(g, -1, -2)) + np.asarray(ridge, dtype=float)[..., None, None] * np.eye(d)
    m = np.asarray(moment, dtype=float)
    if a.ndim > 2:
        # batched: eigenvalues alone are much cheaper than eigenvectors; where the floor does not bind the
        # system is well posed and an LU solve gives the same answer, so only the rest need eigh
        lam = np.linalg.eigvalsh(a)
        scale = np.maximum(np.max(np.abs(lam), axis=-1), 1.0)
        easy = lam[..., 0] > np.maximum(eigen_floor, 1e3 * d * np.finfo(float).eps * scale)
        out = np.empty(np.broadcast_shapes(a.shape[:-1], m.shape))
        mb = np.broadcast_to(m, out.shape)
        if easy.any():
            out[easy] = np.linalg.solve(a[easy], mb[easy][..., None])[..., 0]
        if (~easy).any():
            out[~easy] = _solve_floored(a[~easy], mb[~easy], eigen_floor)
        return out
    return _solve_floored(a, m, eigen_floor)


def _solve_floored(a: np.ndarray, moment: np.ndarray, eigen_floor: float) -> np.ndarray:
    """Eigen-decomposition solve with eigenvalues floored at ``eigen_floor`` (minimum norm on a null space)."""
    d = a.shape[-1]
    w, v = eigh(a)
    w = np.maximum(w, eigen_floor)
    tol = np.maximum(np.max(np.abs(w), axis=-1, keepdims=True), 1.0) * d * np.finfo(float).eps
    inv = np.where(w > tol, 1.0 / np.where(w > tol, w, 1.0), 0.0)
    coords = np.einsum("...ji,...j->...i", v, moment)
    return np.einsum("...ij,...j->...i", v, inv * coords)


def psd_projection(gram: np.ndarray, floor: float = 0.0) -> np.ndarray:
    """Nearest (Frobenius) symmetric matrix with eigenvalues >= floor."""
    g = 0.5 * (gram + np.swapaxes(gram, -1, -2))
    w, v = eigh(g)
    return (v * np.maximum(w, floor)[..., None, :]) @ np.swapaxes(v, -1, -2)


def eigh(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.linalg.eigh``, on one BLAS thread for a batch (..., d, d) of matrices (:mod:`dpstats.blas`: a
    threaded LAPACK call per small matrix can cost 20x the single-threaded one on a busy machine); a single matrix
    met before within :func:`shared_eigh` gives its first decomposition."""
    if a.ndim <= 2:
        memo = _EIGH_MEMO.get()
        if memo is None:
            return np.linalg.eigh(a)
        key = (a.shape, a.dtype.str, a.tobytes())
        held = memo.get(key)
        if held is None:
            w, v = np.linalg.eigh(a)
            w.flags.writeable = v.flags.writeable = False
            held = memo[key] = (w, v)
        return held
    with single_threaded_blas():
        return np.linalg.eigh(a)


def psd_sqrt(gram: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (negative eigenvalues clipped to 0)."""
    w, v = eigh(0.5 * (gram + gram.T))
    return (v * np.sqrt(np.maximum(w, 0.0))) @ v.T
