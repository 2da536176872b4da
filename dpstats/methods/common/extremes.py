"""Overflow-safe row-wise arithmetic for the methods whose domain is every finite double.

TukeyEM, DP-RobGD, DP-AMBSSGD and DP-SGD need no data bounds, so every
finite double is in their domain, up to about 1.8e308.  A square, a product,
a dot product or a sum over rows of such values overflows (to inf, or to NaN
through inf - inf).  A statistic that becomes inf or NaN on a data set and
stays finite on its neighbour leaks three ways: the NaN passes a noise
release unchanged (no noise hides it), numpy prints a warning that only the
neighbour with the extreme row triggers, and later code raises.  The helpers
here compute the per-row quantities these methods need so that

* a row whose plain computation stays finite gets exactly that value, bit
  for bit (ordinary data fit as before);
* a row whose plain computation overflows is recomputed on the row divided
  by its largest absolute entry (a scale-free form), which gives the
  mathematically right value whenever that value is itself a finite double,
  and a documented public value otherwise (never NaN);
* the value for a row depends on that row and on public or released
  quantities only (its position, a released iterate), so every sensitivity
  argument that bounds "what one row contributes" still holds: replacing one
  row changes one such value, whatever the data;
* numpy's floating-point warnings are silenced (:data:`QUIET`), so nothing
  the fit prints depends on the data.

Every function draws no randomness and touches no ledger.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, Literal, TypedDict, TypeVar

import numpy as np

__all__ = ["QUIET", "quiet", "LARGEST", "row_norms", "divide_by_norms", "residuals", "unit_rows", "clamp_finite",
           "finite_rows", "square"]

#: The largest finite double.
LARGEST = float(np.finfo(float).max)

#: Floating-point error handling for code that touches the data: nothing printed, nothing raised (the results
#: are checked explicitly instead).  ``np.errstate`` is local to the thread, so every pass function that runs on
#: a worker enters it itself.
class _ErrState(TypedDict):
    """The keyword arguments of ``np.errstate`` that :data:`QUIET` sets (typed so the call checks)."""

    all: Literal["ignore"]


QUIET: _ErrState = {"all": "ignore"}

F = TypeVar("F", bound=Callable[..., Any])


def quiet(fn: F) -> F:
    """Decorator: run ``fn`` under ``np.errstate(all="ignore")`` (in the calling thread)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(**QUIET):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _scale_parts(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, nu) per row with ||x|| = a nu: a = max |x_j| and nu = ||x / a|| in [1, sqrt(d)] (nu = 0 for a zero
    row).  A row with a non-finite entry gets a = inf."""
    a = np.max(np.abs(rows), axis=1) if rows.shape[1] else np.zeros(rows.shape[0])
    with np.errstate(**QUIET):
        u = rows / np.where((a > 0) & np.isfinite(a), a, 1.0)[:, None]
        nu = np.sqrt(np.einsum("ij,ij->i", u, u))
    return a, np.where(np.isfinite(a), nu, 1.0)


def row_norms(X: np.ndarray) -> np.ndarray:
    """Euclidean norm of every row: sqrt(sum x_j^2) where that sum is finite (bit for bit), else a nu from the
    scaled row (:func:`_scale_parts`), which is inf only when the norm itself exceeds the largest double."""
    with np.errstate(**QUIET):
        squares = np.einsum("ij,ij->i", X, X)
        out = np.sqrt(squares)
        bad = ~np.isfinite(squares)
        if bad.any():
            a, nu = _scale_parts(X[bad])
            out[bad] = a * nu
    return out


def divide_by_norms(numerator: float | np.ndarray, X: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """numerator / ||x|| per row, given ``norms`` from :func:`row_norms`; a zero norm counts as the smallest
    normal double (so the quotient is large, not inf).  Where the norm is inf (beyond the largest double) the
    quotient is formed as (numerator / a) / nu, a finite (possibly subnormal) number."""
    tiny = np.finfo(float).tiny
    num = np.broadcast_to(np.asarray(numerator, dtype=float), norms.shape)
    with np.errstate(**QUIET):
        out = num / np.maximum(norms, tiny)
        big = np.isinf(norms)
        if big.any():
            a, nu = _scale_parts(X[big])
            out[big] = (num[big] / a) / nu
    return out


def unit_rows(X: np.ndarray) -> np.ndarray:
    """x / ||x|| per row (a new array; zero rows stay zero), formed on the scaled row x / max |x_j| so that it
    never overflows."""
    a, nu = _scale_parts(X)
    with np.errstate(**QUIET):
        out = X / np.where(a > 0, a, 1.0)[:, None] / np.where(nu > 0, nu, 1.0)[:, None]
    return out


def residuals(X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """r = X w - y per row, never NaN.

    Computed as ``X @ w - y`` (bit for bit where that is finite).  A row where
    it is not finite is recomputed as s ((x / s) w - y / s) with s the largest
    of |x_j| and |y|: the exact residual up to rounding, or +-inf when the
    residual itself exceeds the largest double.  If even that is NaN (an
    iterate w with entries near the largest double) the residual is +inf, a
    fixed public value.  Each r_i depends on row i and w only.
    """
    with np.errstate(**QUIET):
        r = X @ w
        r -= y
        bad = ~np.isfinite(r)
        if bad.any():
            rows, ys = X[bad], y[bad]
            s = np.maximum(np.max(np.abs(rows), axis=1), np.abs(ys))
            s = np.where(s > 0, s, 1.0)
            fixed = ((rows / s[:, None]) @ w - ys / s) * s
            r[bad] = np.where(np.isnan(fixed), np.inf, fixed)
    return r


def clamp_finite(a: np.ndarray) -> np.ndarray:
    """Clamp every entry of the float array ``a`` into [-LARGEST, LARGEST] in place (+-inf becomes +-LARGEST);
    returns ``a``.  An elementwise, monotone map that leaves finite values alone.  It is applied to affine
    maps of finite values (x - c) / s with s > 0, which overflow to +-inf but are never NaN."""
    np.clip(a, -LARGEST, LARGEST, out=a)
    return a


def square(x: float) -> float:
    """x ** 2 for a public float, or inf where Python's ``**`` would raise OverflowError (|x| above about
    1.3e154); a noise release then refuses the infinite sensitivity with a typed error."""
    return x ** 2 if abs(x) < 1e154 else math.inf


def finite_rows(a: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows (first axis) of ``a`` whose entries are all finite."""
    return np.isfinite(a).reshape(a.shape[0], -1).all(axis=1)
