"""Deterministic building blocks of TukeyEM (Amin, Joseph, Ribero & Vassilvitskii, ICLR 2023).

Everything here is pure numpy and draws no randomness: the solution of the
block models from their normal equations, the approximate Tukey depth, the
volumes of its level sets, the two distance-to-unsafety statistics used by
the propose-test-release (PTR) check and the map from uniform draws to a
uniform point of a given depth.  The mechanism calls live in
:mod:`dpstats.methods.tukey.em`; the proofs are in docs/proofs/tukey.md.

Notation.  ``models`` is an (m, d) array of block models b_1..b_m.  For
coordinate j, S_{j,(1)} <= ... <= S_{j,(m)} are the sorted j-th coordinates,
held 0-based as ``s[j, i - 1]``.  Depths run over i = 1..q_max with
q_max = ceil(m/2); arrays indexed by depth carry the two sentinels i = 0
(V_0 = +inf: the whole space) and i = q_max + 1 (V = 0).
"""

from __future__ import annotations

import math

import numpy as np

from dpstats.methods.common.extremes import QUIET, finite_rows
from dpstats.methods.common.linalg import eigh

__all__ = [
    "FALLBACK_MODEL",
    "approximate_tukey_depth",
    "coordinate_shifts",
    "finite_models",
    "lemma_distance",
    "log_exact_volumes",
    "log_region_volumes",
    "log_side_lengths",
    "log_volumes",
    "mass_distance",
    "max_depth",
    "point_of_depth",
    "solve_block_models",
]

# relative eigenvalue cut-off of the equilibrated block Gram matrices; eigenvalues
# of exactly rank-deficient blocks come out of eigh at about d * machine epsilon
_RANK_TOL_FACTOR = 10.0


def solve_block_models(grams: np.ndarray, moments: np.ndarray) -> np.ndarray:
    """Least-squares models of m blocks from their stacked normal equations X_k^T X_k b = X_k^T y_k.

    The systems are equilibrated by their diagonal (Jacobi scaling) and
    solved through a batched symmetric eigendecomposition; eigenvalues below
    ``10 d eps`` times the largest are treated as zero, which gives the
    minimum-norm solution (in the equilibrated basis) of a rank-deficient
    block.  The map from a block's sums to its model is deterministic, which
    is all the privacy argument needs.  ``grams`` is (m, d, d) and
    ``moments`` (m, d); the sums may have been accumulated over chunks of
    rows in any order.

    A block whose equilibrated system is not finite (its sums overflowed:
    values near the largest double) gets the model 0, and so does a block
    whose solution overflows: :data:`FALLBACK_MODEL`, a fixed public point.
    The choice depends on that block's sums only, so a replaced row still
    changes at most one model, which is all TukeyEM's proof uses.
    """
    d = grams.shape[-1]
    with np.errstate(**QUIET):
        diag = np.sqrt(np.einsum("kii->ki", grams))
        diag = np.where(diag > 0, diag, 1.0)
        scaled = grams / (diag[:, :, None] * diag[:, None, :])
        rhs = moments / diag
        bad = ~(finite_rows(scaled) & finite_rows(rhs))
        if bad.any():  # no eigendecomposition of a non-finite matrix: an identity system with a zero right side
            scaled[bad], rhs[bad], diag[bad] = np.eye(d), 0.0, 1.0
        w, v = eigh(scaled)
        tol = _RANK_TOL_FACTOR * d * np.finfo(float).eps * np.maximum(w[:, -1:], np.finfo(float).tiny)
        keep = w > tol
        inv_w = np.where(keep, 1.0 / np.where(keep, w, 1.0), 0.0)
        proj = np.einsum("kji,kj->ki", v, rhs)
        return finite_models(np.einsum("kij,kj->ki", v, inv_w * proj) / diag)


#: The model given to a block whose estimate is not finite (its sums overflowed): a fixed public point.
FALLBACK_MODEL = 0.0


def finite_models(models: np.ndarray) -> np.ndarray:
    """``models`` (m, d) with every row that has a non-finite entry replaced by :data:`FALLBACK_MODEL` (in place).

    A per-model map: each model stays a function of its own block's rows, so neighbouring data sets still give
    model sets that differ in at most one model (TukeyEM's relation on models)."""
    models[~finite_rows(models)] = FALLBACK_MODEL
    return models


def approximate_tukey_depth(models: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Approximate Tukey depth (Amin et al., Def. 2.5) of each point w.r.t. the models.

    depth(p) = min_j min(#{l : b_lj <= p_j}, #{l : b_lj >= p_j}).
    """
    s = np.sort(np.asarray(models, dtype=float), axis=0)
    p = np.atleast_2d(np.asarray(points, dtype=float))
    m = s.shape[0]
    below = np.stack([np.searchsorted(s[:, j], p[:, j], side="right") for j in range(s.shape[1])], axis=1)
    above = np.stack([m - np.searchsorted(s[:, j], p[:, j], side="left") for j in range(s.shape[1])], axis=1)
    return np.minimum(below, above).min(axis=1)


def coordinate_shifts(sorted_models: np.ndarray) -> np.ndarray:
    """Per coordinate, the power of two k (0 or 2) by which its sorted models are divided before any volume is
    formed: 2 when a model's coordinate exceeds a quarter of the largest double in size, else 0.

    Every side length, piece length and sampled point is then a difference or a convex combination of two
    values below a quarter of the largest double, so none overflows.  The approximate depth and the volume
    ratios are invariant under rescaling a coordinate: each log volume (of a level set, of a region C_{j,q},
    of an exact-depth set) holds one factor per coordinate and moves by the same constant, which cancels in
    the PTR statistics (ratios of volumes) and in the exponential mechanism's normalisation.  Dividing by a
    power of two is exact (the jittered models are far above the subnormal range).  Ordinary models (|b| up
    to 4e307) are not rescaled, so their computation is unchanged bit for bit."""
    top = np.max(np.abs(sorted_models), axis=1) if sorted_models.size else np.zeros(sorted_models.shape[0])
    return np.where(top > np.finfo(float).max / 4.0, 2, 0).astype(int)


def max_depth(m: int) -> int:
    """q_max = ceil(m/2), the largest depth with a level set (of positive volume when m is even)."""
    return (m + 1) // 2


def log_side_lengths(sorted_models: np.ndarray) -> np.ndarray:
    """log L_j(i) for i = 0..q_max+1, shape (d, q_max + 2) (Lemma 3.3).

    L_j(i) = S_{j,(m-i+1)} - S_{j,(i)} is the side, in coordinate j, of the box
    {p : depth(p) >= i}; the sentinels are log L_j(0) = +inf and
    log L_j(q_max + 1) = -inf.  ``sorted_models`` is (d, m), sorted along axis 1.
    """
    d, m = sorted_models.shape
    q_max = max_depth(m)
    i = np.arange(1, q_max + 1)
    sides = sorted_models[:, m - i] - sorted_models[:, i - 1]
    out = np.empty((d, q_max + 2))
    out[:, 0] = np.inf
    out[:, -1] = -np.inf
    with np.errstate(divide="ignore"):
        out[:, 1:-1] = np.log(np.maximum(sides, 0.0))
    return out


def log_volumes(log_sides: np.ndarray) -> np.ndarray:
    """log V_i = sum_j log L_j(i), i = 0..q_max+1 (Lemma 3.3): volume of {p : depth(p) >= i}."""
    return log_sides.sum(axis=0)


def log_region_volumes(sorted_models: np.ndarray, log_sides: np.ndarray) -> np.ndarray:
    """log vol(C_{j,q}) for j = 1..d and q = 1..q_max, shape (d, q_max) (Amin et al., appendix).

    C_{j,q} holds the points whose coordinate depth is > q in coordinates
    1..j-1, exactly q in coordinate j and >= q in coordinates j+1..d.  These
    sets partition {p : depth(p) = q} and

        vol(C_{j,q}) = prod_{l<j} L_l(q+1) * W_j(q) * prod_{l>j} L_l(q),

    where W_j(q) = L_j(q) - L_j(q+1) is computed without cancellation as the
    total length of the two pieces [S_(q), S_(q+1)] and [S_(m-q), S_(m-q+1)]
    (one piece when 2q = m, none when 2q > m).
    """
    m = sorted_models.shape[1]
    q_max = max_depth(m)
    q = np.arange(1, q_max + 1)
    pieces = _piece_lengths(sorted_models, q)
    with np.errstate(divide="ignore"):
        log_w = np.log(pieces[0] + pieces[1])
    at_q = log_sides[:, 1:q_max + 1]
    at_next = log_sides[:, 2:q_max + 2]
    before = np.zeros_like(at_next)
    before[1:] = np.cumsum(at_next[:-1], axis=0)
    after = np.zeros_like(at_q)
    after[:-1] = np.cumsum(at_q[:0:-1], axis=0)[::-1]
    return before + log_w + after


def _piece_lengths(sorted_models: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lengths of the left and right pieces of {coordinate depth = q}, each (d, len(q))."""
    m = sorted_models.shape[1]
    hi = np.minimum(q, m - 1)
    left = sorted_models[:, hi] - sorted_models[:, q - 1]
    right = sorted_models[:, m - q] - sorted_models[:, np.maximum(m - q - 1, 0)]
    right = np.where(2 * q < m, right, 0.0)
    left = np.where(2 * q <= m, left, 0.0)
    return np.maximum(left, 0.0), np.maximum(right, 0.0)


def log_exact_volumes(log_region: np.ndarray) -> np.ndarray:
    """log Vexact_q = log vol{p : depth(p) = q} = logsumexp_j log vol(C_{j,q}), q = 1..q_max."""
    top = log_region.max(axis=0)
    finite = np.isfinite(top)
    safe_top = np.where(finite, top, 0.0)
    with np.errstate(divide="ignore"):
        out = safe_top + np.log(np.exp(log_region - safe_top).sum(axis=0))
    return np.where(finite, out, -np.inf)


def lemma_distance(log_vol: np.ndarray, t: int, epsilon_em: float, delta: float) -> int:
    """The distance-to-unsafety lower bound M(D) of Amin et al., Lemma 3.6.

    M(D) is the largest k in {0, ..., t-1} for which some integer g >= 1 gives

        V_{t-k-1} / V_{t+k+g+1} * exp(-epsilon_em * g / 2) <= delta / (8 e^{epsilon_em}),

    and -1 when there is none (V_0 = +inf, V_i = 0 beyond q_max, and a zero
    volume in the denominator never satisfies the condition).  Evaluated
    exactly for every k in O(m) with a suffix minimum over i = t+k+g+1 of
    h(i) = -log V_i - epsilon_em * i / 2.

    1-sensitivity: for neighbours D, D' (one model replaced) depths move by at
    most one, so V_{i+1}(D) <= V_i(D') <= V_{i-1}(D).  If (k, g) satisfies the
    condition on D with k >= 1 then (k-1, g) satisfies it on D', because
    V_{t-k}(D') <= V_{t-k-1}(D) and V_{t+k+g}(D') >= V_{t+k+g+1}(D); so
    M(D') >= M(D) - 1, and symmetrically.  That it lower-bounds the distance to
    an unsafe data set is proved in docs/proofs/tukey.md.

    ``log_vol`` holds log V_i for i = 0..q_max+1 (:func:`log_volumes`).
    """
    q_max = log_vol.size - 2
    if t < 1 or t > q_max:
        raise ValueError("the restriction depth t must lie in 1..q_max")
    h = -log_vol - epsilon_em * np.arange(log_vol.size) / 2.0  # +inf where V_i = 0
    h[0] = np.inf
    suffix_min = np.minimum.accumulate(h[::-1])[::-1]
    k = np.arange(t)
    first = t + k + 2  # smallest index t+k+g+1 (g = 1); beyond q_max every volume is 0
    best = suffix_min[np.minimum(first, q_max + 1)]
    numer = log_vol[t - k - 1]
    ok = np.isfinite(best) & np.isfinite(numer)
    lhs = np.where(ok, numer + np.where(ok, best, 0.0) + epsilon_em * (t + k + 1) / 2.0, np.inf)
    threshold = math.log(delta) - math.log(8.0) - epsilon_em
    hits = np.flatnonzero(lhs <= threshold)
    return int(hits[-1]) if hits.size else -1


def mass_distance(log_vol: np.ndarray, log_exact: np.ndarray, t: int, epsilon_em: float, delta: float) -> int:
    """A modified distance-to-unsafety lower bound M'(D) >= M(D) (proof in docs/proofs/tukey.md).

    With c = epsilon_em / 2 (the restricted EM samples with density
    proportional to exp(c * depth)), M'(D) is the largest k in {0, ..., t-1}
    such that

        exp(c (t+k)) V_{t-k-1} / sum_{q >= t+k} exp(c q) Vexact_q  <=  rho*,
        rho* = delta / (e^c (1 + e^c) + delta),

    and -1 when there is none.  The denominator is the unnormalised mass of
    depth >= t+k, computed as a suffix log-sum-exp.  ``log_exact`` holds
    log Vexact_q for q = 1..q_max.
    """
    q_max = log_vol.size - 2
    if t < 1 or t > q_max:
        raise ValueError("the restriction depth t must lie in 1..q_max")
    c = epsilon_em / 2.0
    q = np.arange(1, q_max + 1)
    mass = c * q + log_exact
    suffix = np.logaddexp.accumulate(mass[::-1])[::-1]  # suffix[q-1] = log sum_{q' >= q}
    k = np.arange(t)
    lo = t + k
    denom = np.where(lo <= q_max, suffix[np.minimum(lo, q_max) - 1], -np.inf)
    numer = log_vol[t - k - 1]
    ok = np.isfinite(denom) & np.isfinite(numer)
    lhs = np.where(ok, c * (t + k) + np.where(ok, numer - denom, 0.0), np.inf)
    log_rho = math.log(delta) - float(np.logaddexp.reduce([c, 2.0 * c, math.log(delta)]))  # no overflow at large c
    hits = np.flatnonzero(lhs <= log_rho)
    return int(hits[-1]) if hits.size else -1


def point_of_depth(sorted_models: np.ndarray, log_sides: np.ndarray, log_region: np.ndarray, q: int,
                   uniforms: np.ndarray) -> np.ndarray:
    """Map d + 2 independent U[0,1) draws to a uniform point of {p : depth(p) = q}.

    Through the partition of :func:`log_region_volumes` (Amin et al.,
    appendix): block j is chosen with probability vol(C_{j,q}) / Vexact_q
    (inverse CDF on ``uniforms[0]``); then coordinates l < j are uniform on
    [S_(q+1), S_(m-q)] (depth > q), coordinate j is uniform on the union of
    its two depth-q pieces, the left one with probability proportional to its
    length (``uniforms[1]``), and coordinates l > j are uniform on
    [S_(q), S_(m-q+1)] (depth >= q).  Each C_{j,q} is a product of intervals, so
    the point is uniform on C_{j,q}, hence uniform on the depth-q set.
    """
    d, m = sorted_models.shape
    logs = log_region[:, q - 1]
    if not np.any(np.isfinite(logs)):
        raise ValueError(f"the depth-{q} region has zero volume")
    prob = np.exp(logs - logs.max())
    cdf = np.cumsum(prob / prob.sum())
    j = int(min(np.searchsorted(cdf, uniforms[0], side="right"), d - 1))
    while not np.isfinite(logs[j]):  # guard against the last ulp of the cdf
        j -= 1
    lo = np.where(np.arange(d) < j, sorted_models[:, min(q, m - 1)], sorted_models[:, q - 1])
    hi = np.where(np.arange(d) < j, sorted_models[:, m - q - 1] if m - q - 1 >= 0 else sorted_models[:, 0],
                  sorted_models[:, m - q])
    left, right = (piece[:, 0] for piece in _piece_lengths(sorted_models, np.array([q])))
    if uniforms[1] * (left[j] + right[j]) < left[j]:
        lo_j, hi_j = sorted_models[j, q - 1], sorted_models[j, q]
    else:
        lo_j, hi_j = sorted_models[j, m - q - 1], sorted_models[j, m - q]
    lo[j], hi[j] = lo_j, hi_j
    u = uniforms[2:2 + d]
    return lo + u * (hi - lo)
