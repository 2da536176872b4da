"""Exact samplers for the discrete Laplace and discrete Gaussian distributions, and the public grid.

Floating-point noise is not safe: Mironov (2012, "On significance of the least
significant bits for differential privacy") showed that textbook
floating-point Laplace noise leaks the protected value through the low-order
bits of the output, because the set of floating-point numbers that
``value + noise`` can produce depends on ``value``.  dpstats therefore never
adds floating-point noise to a private value.  A release is

    output = g * (round(value / g) + Z),

where g is a public power of two (the *grid*), ``round`` is round-to-nearest
and Z is an integer drawn exactly from the discrete Laplace or discrete
Gaussian distribution.  Every output lies on the public grid, its law given
``round(value / g)`` is an exact shift of the noise law, and converting the
integer ``round(value / g) + Z`` to the nearest double is post-processing.

Samplers (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
differential privacy", NeurIPS; arXiv 2004.00010, Sec. 5): every random
choice is an exact uniform integer (``rng.integers``) compared with an
integer; no floating-point number enters the sampling.

* Bernoulli(exp(-gamma)) for rational gamma in [0, 1]: von Neumann's trick
  (CKS20, Sec. 5): draw A_k ~ Bernoulli(gamma / k) for k = 1, 2, ... until the
  first A_k = 0 and return 1 iff that k is odd.  Larger gamma are split into
  a product of such factors.
* Discrete Laplace, P(Y = y) proportional to exp(-|y| / t), integer t >= 1
  (CKS20, Sec. 5): U uniform on {0, ..., t-1} kept with probability
  exp(-U / t), V geometric with P(V >= v) = exp(-v) (a run of
  Bernoulli(exp(-1)) successes), X = U + t V is then geometric with ratio
  exp(-1/t); a uniform sign, rejecting (-, 0), gives Y.
* Discrete Gaussian, P(Y = y) proportional to exp(-y^2 / (2 s^2)), integer
  s >= 1 (CKS20, Sec. 5, with proposal parameter t = s): propose Y from the
  discrete Laplace with parameter s and keep it with probability
  exp(-(|Y| - s)^2 / (2 s^2)).  The kept law is proportional to
  exp(-|y|/s - (|y| - s)^2/(2 s^2)) = exp(-y^2/(2 s^2) - 1/2), the discrete
  Gaussian (the identity holds for any proposal parameter; t = s keeps every
  number an integer below 2^63).  With a = ||Y| - s| = q s + r, 0 <= r < s,
  exp(-a^2/(2 s^2)) = exp(-q^2/2) exp(-r/s)^q exp(-(r/s)(r/(2 s))), a
  product of Bernoulli(exp(-gamma)) factors with gamma in [0, 1] whose
  Bernoulli(gamma/k) draws need denominators of at most 2 s k.

All three are vectorised over numpy int64 arrays: many candidates are drawn
at once and the von Neumann loops run over all active lanes together.

Grid and the privacy of what is sampled (see :func:`gaussian_plan`,
:func:`laplace_plan`): rounding to the grid moves each coordinate by at most
g/2, so the rounded statistic's sensitivity is inflated by at most g per
coordinate (L1) or g * sqrt(d) (L2), and the calibration uses the inflated
value.  The grid is chosen from the public noise scale so that the
parameter (s or t, in grid units) is at least 2^40 (Gaussian) or 2^52
(Laplace): the discretisation then costs nothing measurable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache

import numpy as np

from dpstats.errors import NoiseScaleRangeError
from dpstats.privacy.secure_random import SecureGenerator

__all__ = [
    "bernoulli_exp", "discrete_laplace", "discrete_gaussian", "GridPlan", "gaussian_plan", "laplace_plan",
    "release_on_grid", "to_grid", "gaussian_closeness", "laplace_closeness", "GAUSSIAN_BITS", "LAPLACE_BITS",
]

#: the discrete Gaussian's parameter s (in grid units) is at least 2^GAUSSIAN_BITS
GAUSSIAN_BITS = 40
#: the discrete Laplace's parameter t (in grid units) is at least 2^LAPLACE_BITS
LAPLACE_BITS = 52

_I64 = np.int64
_SAFE = 1 << 62  # products and sums of int64 values are kept below this


def _below(rng: np.random.Generator, high: np.ndarray | int, size: int | None = None) -> np.ndarray:
    """Exact uniform integers on {0, ..., high - 1} (1 <= high <= 2^62), elementwise.

    Where an array ``high`` holds one value (a von Neumann round whose lanes share a denominator), numpy is asked
    with that value as a scalar: ``Generator.integers`` then fills the same draws in one call instead of one bounded
    draw per element (its per-element path), the same values from the same generator state (numpy's bounded fill
    keeps no state between elements but the bit generator's own; ``test_samplers`` checks it for numpy's bit
    generators)."""
    if type(rng) is SecureGenerator:
        return rng._below(high, size)
    if isinstance(high, np.ndarray) and size is None and high.size > 1:
        first = high.flat[0]
        if (high == first).all():
            return rng.integers(0, int(first), size=high.shape, dtype=_I64)
    return rng.integers(0, high, size=size, dtype=_I64)


# --- Bernoulli(exp(-gamma)) -----------------------------------------------------------------------------------


def _von_neumann(rng: np.random.Generator, num1: np.ndarray, den1: np.ndarray, num2: np.ndarray,
                 den2: np.ndarray) -> np.ndarray:
    """Bernoulli(exp(-gamma)) elementwise for gamma = (num1/den1) * (num2/den2) in [0, 1].

    Von Neumann (1951) as in CKS20, Sec. 5: at round k every still-active lane
    draws A ~ Bernoulli(gamma / k) = Bernoulli(num1/den1) * Bernoulli(num2/(den2 k));
    a lane stops at its first A = 0 and returns 1 iff it stopped at an odd k.
    The first k draws all succeed with probability gamma^k / k!, so
    P(return 1) = sum over odd k of (gamma^(k-1)/(k-1)! - gamma^k/k!) =
    sum_j (-gamma)^j / j! = exp(-gamma).  Every lane is at the same k in a
    given round, so one vectorised draw serves all of them.
    ``den1 = num1 = 1`` makes the first factor 1 without a draw.
    """
    n = num2.size
    out = np.zeros(n, dtype=bool)
    active = np.arange(n)
    two = not (np.all(den1 == 1))
    # a numerator or denominator every lane shares stays one scalar: not gathered every round, and drawn against as
    # one bound (the same values as the array of it: _below)
    shared_den = int(den2[0]) if n and (den2 == den2[0]).all() else None
    shared_num = int(num2[0]) if n and (num2 == num2[0]).all() else None
    k = 1
    while active.size:
        # (in round 1 every lane is active: the arrays themselves, not gathered copies of them)
        n2 = (num2 if k == 1 else num2[active]) if shared_num is None else shared_num
        d2 = (den2 if k == 1 else den2[active]) if shared_den is None else shared_den
        size = None if shared_den is None else active.size
        if int(np.max(d2)) <= _SAFE // k:
            dk = d2 * k
            if k == 1 and bool(np.all(n2 == dk)):  # Bernoulli(1) for every lane: no draw needed
                a = np.ones(active.size, dtype=bool)
            else:
                a = _below(rng, dk, size=size) < n2
        else:  # Bernoulli(n2/(d2 k)) = Bernoulli(n2/d2) * Bernoulli(1/k): no overflow for any k
            a = (_below(rng, d2, size=size) < n2) & (_below(rng, k, size=active.size) == 0)
        if two:
            a &= _below(rng, den1 if k == 1 else den1[active]) < (num1 if k == 1 else num1[active])
        if k == 1:  # lanes stopping in round 1 return 1: exactly the lanes whose draw failed
            np.logical_not(a, out=out)
            active = np.flatnonzero(a)
        else:
            if k % 2:
                out[active[~a]] = True
            active = active[a]
        k += 1
    return out


def _ones(n: int) -> np.ndarray:
    return np.ones(n, dtype=_I64)


def bernoulli_exp(gamma: Fraction | int, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent exact Bernoulli(exp(-gamma)) draws for a rational gamma >= 0 (CKS20, Sec. 5).

    gamma = floor(gamma) + frac: the product of floor(gamma) Bernoulli(exp(-1))
    draws and one Bernoulli(exp(-frac)) draw.  Numerator and denominator of
    ``gamma`` must be below 2^62.
    """
    g = Fraction(gamma)
    if g < 0:
        raise ValueError("gamma must be >= 0")
    whole, frac = divmod(g, 1)
    whole = int(whole)
    lanes = np.repeat(np.arange(size), whole + 1)
    m = lanes.size
    num2 = np.ones(m, dtype=_I64)
    den2 = np.ones(m, dtype=_I64)
    last = np.arange(size) * (whole + 1) + whole
    num2[last] = frac.numerator
    den2[last] = frac.denominator
    ok = _von_neumann(rng, _ones(m), _ones(m), num2, den2)
    return np.bincount(lanes[~ok], minlength=size) == 0


# --- discrete Laplace ---------------------------------------------------------------------------------------


def _geometric_e1(rng: np.random.Generator, n: int) -> np.ndarray:
    """V with P(V >= v) = exp(-v): the number of Bernoulli(exp(-1)) successes before the first failure."""
    v = np.zeros(n, dtype=_I64)
    active = np.arange(n)
    batch = 3
    while active.size:
        m = active.size * batch
        one = _ones(m)  # (_von_neumann reads its arguments only: one array serves as all four)
        ok = _von_neumann(rng, one, one, one, one).reshape(active.size, batch)
        run = np.where(ok.all(axis=1), batch, np.argmin(ok, axis=1))
        v[active] += run
        active = active[run == batch]  # all `batch` draws succeeded (probability e^-3): keep counting
    return v


def _laplace_candidates(t: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """Up to m exact discrete Laplace(t) draws (the accepted ones of m candidates); int64 or object."""
    u = _below(rng, t, size=m)
    one = _ones(m)
    keep_u = _von_neumann(rng, one, one, u, np.full(m, t, dtype=_I64))  # Bernoulli(exp(-U/t))
    u = u[keep_u]
    v = _geometric_e1(rng, u.size)
    if u.size and int(v.max()) >= _SAFE // t:  # X = U + t V would leave int64 (probability < e^-500)
        x = np.array([int(a) + t * int(b) for a, b in zip(u, v, strict=True)], dtype=object)
    else:
        x = u + t * v
    negative = _below(rng, 2, size=u.size) == 1
    keep = ~(negative & (x == 0))
    y = np.where(negative, -x, x)
    return y[keep]


def discrete_laplace(t: int, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Exact draws from the discrete Laplace distribution P(y) = tanh(1/(2t)) exp(-|y|/t), y integer.

    ``t`` is a positive integer below 2^62 (CKS20, Sec. 5).  Returns an int64
    array of shape ``size`` (an object array of Python ints in the event,
    of probability below e^-500 per draw, that a value leaves int64).
    """
    t = int(t)
    if not 1 <= t < _SAFE:
        raise ValueError("the discrete Laplace parameter must be an integer in [1, 2^62)")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    if n <= _SMALL:
        return _small(_laplace_scalar, t, n, rng).reshape(shape)
    parts, got = [], 0
    while got < n:
        need = n - got
        cand = _laplace_candidates(t, need + need // 2 + 8, rng)  # acceptance about 1 - 1/e
        parts.append(cand[:need])
        got += parts[-1].size
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=_I64)
    return out.reshape(shape)


# --- discrete Gaussian --------------------------------------------------------------------------------------


def _gaussian_accept(rng: np.random.Generator, y: np.ndarray, s: int) -> np.ndarray:
    """Bernoulli(exp(-(|y| - s)^2 / (2 s^2))) for each proposal y (exact; see the module docstring)."""
    n = y.size
    if y.dtype == object or (n and int(np.abs(y).max()) >= _SAFE // 4):
        return np.array([_gaussian_accept_scalar(rng, int(v), s) for v in y], dtype=bool)
    a = np.abs(np.abs(y) - s)
    q, r = np.divmod(a, s)
    if n and int(q.max()) > 64:  # |y| > 65 s: probability below e^-60 per draw; exact scalar path
        big = q > 64
        out = np.empty(n, dtype=bool)
        out[big] = [_gaussian_accept_scalar(rng, int(v), s) for v in y[big]]
        out[~big] = _gaussian_accept(rng, y[~big], s)
        return out
    q2 = q * q
    n_e1, n_half = q2 // 2, q2 % 2
    counts = n_e1 + n_half + q + 1
    end = np.cumsum(counts)
    m = int(end[-1]) if n else 0
    start = end - counts
    num1, den1 = _ones(m), _ones(m)
    num2, den2 = _ones(m), _ones(m)
    # factors of each lane, in order: e1 x exp(-1) (1/1, 1/1: the arrays' ones); half x exp(-1/2); q x exp(-r/s);
    # exp(-(r/s)(r/(2s))), the last.  Only lanes with q > 0 (a = |(|y| - s)| >= s) have factors before the last.
    last = end - 1
    num1[last], den1[last] = r, s
    num2[last], den2[last] = r, 2 * s
    longer = np.flatnonzero(q > 0)
    if longer.size:
        first_r = start[longer] + n_e1[longer] + n_half[longer]  # the first exp(-r/s) factor of each such lane
        den2[(first_r - 1)[n_half[longer] == 1]] = 2  # the exp(-1/2) factor just before it, where q^2 is odd
        qs = q[longer]
        idx = np.repeat(first_r, qs) + (np.arange(int(qs.sum())) - np.repeat(np.cumsum(qs) - qs, qs))
        num2[idx], den2[idx] = np.repeat(r[longer], qs), s
    ok = _von_neumann(rng, num1, den1, num2, den2)
    # a proposal is kept iff every one of its factors succeeded (each lane has at least one factor)
    return np.logical_and.reduceat(ok, start) if n else np.zeros(0, dtype=bool)


def _gaussian_accept_scalar(rng: np.random.Generator, y: int, s: int) -> bool:
    """Exact Bernoulli(exp(-(|y| - s)^2 / (2 s^2))) for one proposal, with early exit (Python integers)."""
    q, r = divmod(abs(abs(y) - s), s)
    q2 = q * q
    e1, half = q2 // 2, q2 % 2
    one = _ones(1)
    while e1 > 0:  # exp(-1)^e1 in chunks, stopping at the first failure
        k = min(e1, 256)
        if not _von_neumann(rng, _ones(k), _ones(k), _ones(k), _ones(k)).all():
            return False
        e1 -= k
    if half and not _von_neumann(rng, one, one, one, np.full(1, 2, dtype=_I64))[0]:
        return False
    reps = q
    while reps > 0:
        k = min(reps, 256)
        if not _von_neumann(rng, _ones(k), _ones(k), np.full(k, r, dtype=_I64), np.full(k, s, dtype=_I64)).all():
            return False
        reps -= k
    return bool(_von_neumann(rng, np.full(1, r, dtype=_I64), np.full(1, s, dtype=_I64), np.full(1, r, dtype=_I64),
                             np.full(1, 2 * s, dtype=_I64))[0])


def discrete_gaussian(s: int, size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Exact draws from the discrete Gaussian N_Z(0, s^2): P(y) proportional to exp(-y^2 / (2 s^2)), y integer.

    ``s`` is a positive integer below 2^41 (CKS20, Sec. 5, proposal parameter
    t = s).  Returns an int64 array of shape ``size`` (object only in events
    of probability below e^-500 per draw).
    """
    s = int(s)
    if not 1 <= s < (1 << 41):
        raise ValueError("the discrete Gaussian parameter must be an integer in [1, 2^41)")
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    n = int(np.prod(shape))
    if n <= _SMALL:
        return _small(_gaussian_scalar, s, n, rng).reshape(shape)
    parts, got = [], 0
    while got < n:
        need = n - got
        y = discrete_laplace(s, need + need // 3 + 8, rng)  # acceptance about 0.76
        keep = _gaussian_accept(rng, y.ravel(), s)
        parts.append(y.ravel()[keep][:need])
        got += parts[-1].size
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=_I64)
    if out.dtype == object and all(abs(int(v)) < _SAFE for v in out):
        out = out.astype(_I64)
    return out.reshape(shape)


# --- scalar path: the same algorithms in Python integers, for a few draws -------------------------------------
#
# The vectorised samplers cost a fixed ~0.2 ms of numpy calls whatever the number of draws.  For a handful of
# draws (a noisy count, a PTR distance, a scalar eigenvalue) the same algorithms run faster on Python integers,
# fed by uniform 62-bit words fetched from the generator in blocks.

_SMALL = 12  # at most this many draws: scalar path


class _Words:
    """Exact uniform integers below ``high`` from blocks of uniform 62-bit words drawn from ``rng``."""

    def __init__(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._buf: list[int] = []

    def below(self, high: int) -> int:
        span = 1 << 62
        if high > span:  # never needed by the samplers below (their bounds are at most 2^62)
            raise ValueError("bound too large")
        limit = span - span % high  # accept w < limit: w mod high is then exactly uniform
        while True:
            if not self._buf:
                self._buf = _below(self._rng, span, 32).tolist()
            w = self._buf.pop()
            if w < limit:
                return w % high


def _vn_scalar(words: _Words, n1: int, d1: int, n2: int, d2: int) -> bool:
    """Bernoulli(exp(-(n1/d1)(n2/d2))) by von Neumann's trick (the scalar twin of :func:`_von_neumann`)."""
    k = 1
    while True:
        dk = d2 * k
        if dk <= _SAFE:
            a = n2 >= dk or words.below(dk) < n2
        else:
            a = words.below(d2) < n2 and words.below(k) == 0
        if a and d1 != 1:
            a = words.below(d1) < n1
        if not a:
            return k % 2 == 1
        k += 1


def _laplace_scalar(words: _Words, t: int) -> int:
    while True:
        u = words.below(t)
        if not _vn_scalar(words, 1, 1, u, t):
            continue
        v = 0
        while _vn_scalar(words, 1, 1, 1, 1):
            v += 1
        x = u + t * v
        negative = words.below(2) == 1
        if negative and x == 0:
            continue
        return -x if negative else x


def _gaussian_scalar(words: _Words, s: int) -> int:
    while True:
        y = _laplace_scalar(words, s)
        q, r = divmod(abs(abs(y) - s), s)
        q2 = q * q
        ok = all(_vn_scalar(words, 1, 1, 1, 1) for _ in range(q2 // 2))
        ok = ok and (q2 % 2 == 0 or _vn_scalar(words, 1, 1, 1, 2))
        ok = ok and all(_vn_scalar(words, 1, 1, r, s) for _ in range(q))
        if ok and _vn_scalar(words, r, s, r, 2 * s):
            return y


def _small(draw: object, param: int, n: int, rng: np.random.Generator) -> np.ndarray:
    words = _Words(rng)
    vals = [draw(words, param) for _ in range(n)]  # type: ignore[operator]
    if all(abs(v) < _SAFE for v in vals):
        return np.array(vals, dtype=_I64)
    return np.array(vals, dtype=object)


# --- closeness of the discrete noise to rounded continuous noise --------------------------------------------

#: half-width, in units of s, of the central region used in :func:`gaussian_closeness`
_GAUSS_TAIL_C = 37.0


@cache
def gaussian_closeness(s: int) -> tuple[float, float]:
    """(lambda, tau) with DG(E) <= e^lambda RG(E) + tau and RG(E) <= e^lambda DG(E) + tau for every set E.

    DG is the discrete Gaussian N_Z(0, s^2); RG is the continuous N(0, s^2)
    rounded to the nearest integer.  Proof (c = 37, s >= 2^20):
    RG(k) / DG(k) = theta * J(k), where theta = Z_s / (s sqrt(2 pi)) =
    sum_j exp(-2 pi^2 s^2 j^2) lies in [1, 1 + 3 exp(-2 pi^2 s^2)]
    (Poisson summation) and J(k) = int_{-1/2}^{1/2} exp(-u^2/(2s^2))
    cosh(k u / s^2) du lies in [1 - 1/(24 s^2), 1 + z^2 cosh(z) / 6] with
    z = |k| / (2 s^2).  On |k| <= c s this bounds |log(RG/DG)| by lambda.
    Both tails beyond c s have mass at most exp(-(c - 1/s)^2 / 2) = tau
    (a decreasing summand is bounded by its integral, and Z_s >= s sqrt(2 pi)).
    """
    if s < (1 << 20):
        raise ValueError("the closeness bound is stated for s >= 2^20")
    return _gaussian_closeness_bound(s, _GAUSS_TAIL_C)


def _gaussian_closeness_bound(s: int, c: float) -> tuple[float, float]:
    """The (lambda, tau) of :func:`gaussian_closeness` for any s >= 1 and c > 1/s (tests check small s)."""
    s2 = float(s) * float(s)
    z = c / (2.0 * s)
    low = -math.log1p(-1.0 / (24.0 * s2))
    high = 1e-300 + math.log1p(c * c * math.cosh(z) / (24.0 * s2))
    lam = max(low, high) * (1.0 + 1e-6)
    tau = math.exp(-((c - 1.0 / s) ** 2) / 2.0) * (1.0 + 1e-6)
    return lam, tau


@cache
def laplace_closeness(t: int) -> float:
    """lambda with DL(E) <= e^lambda RL(E) and RL(E) <= e^lambda DL(E) for every set E.

    DL is the discrete Laplace with parameter t, RL = round(Lap(t)).  With
    z = 1/(2t): RL(k)/DL(k) = sinh(z)/tanh(z) = cosh(z) for k != 0 and
    (1 - e^-z)/tanh(z) = (1 + e^-2z)/(1 + e^-z) for k = 0, so lambda is the
    larger of log cosh z and log((1 + e^-z)/(1 + e^-2z)) (about 1/(4t)).
    """
    if t < 1:
        raise ValueError("t must be >= 1")
    z = 1.0 / (2.0 * t)
    at_zero = math.log1p(-math.expm1(-z) * math.exp(-z) / (1.0 + math.exp(-2.0 * z)))
    return max(math.log(math.cosh(z)), at_zero) * (1.0 + 1e-6)


# --- the grid and the release -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GridPlan:
    """How one additive-noise release is discretised (all public).

    Attributes
    ----------
    kind:
        ``"gaussian"`` or ``"laplace"``.
    grid_exponent:
        The grid is g = 2^grid_exponent.
    param:
        The noise parameter in grid units (s for the discrete Gaussian, t for
        the discrete Laplace).
    sensitivity:
        The sensitivity of the rounded statistic (original units, rounded up):
        the requested one plus the rounding allowance.
    noise_scale:
        g * param (Gaussian sd parameter, or Laplace scale b), exact.
    closeness_epsilon, closeness_delta:
        Per released coordinate: the sampled noise is (lambda, tau)-close to the
        rounded continuous noise (:func:`gaussian_closeness`,
        :func:`laplace_closeness`).
    """

    kind: str
    grid_exponent: int
    param: int
    sensitivity: float
    noise_scale: float
    closeness_epsilon: float
    closeness_delta: float

    @property
    def grid(self) -> float:
        return math.ldexp(1.0, self.grid_exponent)

    def describe(self) -> str:
        name = "discrete Gaussian" if self.kind == "gaussian" else "discrete Laplace"
        p = "s" if self.kind == "gaussian" else "t"
        return (f"{name} on the grid 2^{self.grid_exponent} ({p}={self.param} grid steps; exact integer sampler, "
                f"Canonne, Kamath & Steinke 2020); sensitivity includes the grid rounding")


def _grid_exponent(scale: float, bits: int) -> int:
    """e such that scale / 2^e lies in [2^bits, 2^(bits+1)); :class:`~dpstats.errors.NoiseScaleRangeError` (a
    ValueError) when no such grid exists in double precision (the scale is public or a released value)."""
    if not (scale > 0 and math.isfinite(scale)):
        raise NoiseScaleRangeError(f"the noise scale must be finite and > 0, got {scale:.4g}; the sensitivity or the "
                                   "options that set it are outside the supported range")
    e = math.frexp(scale)[1] - 1 - bits
    if not -1022 <= e <= 900:
        raise NoiseScaleRangeError(
            f"the noise scale {scale:.4g} is outside the range of a floating-point grid (about 1e-280 to 1e282); "
            "options such as clip_norm, step_size or covariate_tail, or declared bounds, set it: bring them nearer "
            "to the data's scale (with every bound declared the design is rescaled to [-1, 1])")
    return e


def _float_up(x: Fraction) -> float:
    f = float(x)
    return f if Fraction(f) >= x else math.nextafter(f, math.inf)


def _ceil_sqrt(d: int) -> int:
    r = math.isqrt(d)
    return r if r * r == d else r + 1


#: why a plan is refused where the grid's rounding allowance would dominate the noise (public: the step's privacy
#: parameter and dimension)
_ALLOWANCE = ("a release of {d} value(s) at {what} needs more grid steps of noise than the exact sampler supports "
              "(the budget of this step is too small for its dimension: a larger epsilon or delta, or fewer "
              "columns); nothing of this step was released")


@lru_cache(maxsize=4096)
def gaussian_plan(l2_sensitivity: float, mu: float, dimension: int) -> GridPlan:
    """Grid and discrete Gaussian parameter for a mu-GDP release of a ``dimension``-vector.

    g = 2^e with (l2_sensitivity / mu) / g in [2^40, 2^41).  Rounding each
    coordinate to the nearest multiple of g changes a neighbour's difference
    by less than g per coordinate, so the rounded statistic has L2
    sensitivity at most Delta' = l2_sensitivity + g ceil(sqrt(d)).  The
    parameter s = ceil(Delta' / (mu g)) (exact rational arithmetic) makes the
    reference mechanism "round(value) + N(0, (g s)^2), rounded to the grid"
    (mu' = Delta' / (g s) <= mu)-GDP: it is post-processing of the Gaussian
    mechanism on the rounded statistic (Dong, Roth & Su 2022, Thm 2.7).
    """
    sens, mu, d = float(l2_sensitivity), float(mu), int(dimension)
    if not (sens > 0 and math.isfinite(sens) and mu > 0 and math.isfinite(mu) and d >= 1):
        raise ValueError("gaussian_plan needs a finite sensitivity > 0, a finite mu > 0 and dimension >= 1")
    e = _grid_exponent(sens / mu, GAUSSIAN_BITS)
    g = Fraction(2) ** e
    inflated = Fraction(sens) + g * _ceil_sqrt(d)
    s = math.ceil(inflated / (Fraction(mu) * g))
    if s >= (1 << 41):  # the rounding allowance dominates (ceil(sqrt(d)) / mu >= about 2^40): refuse, not mis-sample
        raise NoiseScaleRangeError(_ALLOWANCE.format(what=f"mu={mu:.3g}", d=d))
    lam, tau = gaussian_closeness(s)
    return GridPlan("gaussian", e, s, _float_up(inflated), math.ldexp(float(s), e), lam, tau)


@lru_cache(maxsize=4096)
def laplace_plan(l1_sensitivity: float, epsilon: float, dimension: int, linf: bool = False) -> GridPlan:
    """Grid and discrete Laplace parameter for an epsilon-DP release of a ``dimension``-vector.

    g = 2^e with (l1_sensitivity / epsilon) / g in [2^52, 2^53).  The rounded
    statistic has L1 sensitivity at most Delta' = l1_sensitivity + g d (or
    l_inf sensitivity l_inf + g when ``linf``), and t = ceil(Delta' / (epsilon g)):
    the discrete Laplace release is then exactly (Delta' / (g t) <= epsilon)-DP,
    since its density ratio over an integer shift v is at most
    exp(||v||_1 / t) (Dwork, McSherry, Nissim & Smith 2006; CKS20 Sec. 2).
    """
    sens, eps, d = float(l1_sensitivity), float(epsilon), int(dimension)
    if not (sens > 0 and math.isfinite(sens) and eps > 0 and math.isfinite(eps) and d >= 1):
        raise ValueError("laplace_plan needs a finite sensitivity > 0, a finite epsilon > 0 and dimension >= 1")
    e = _grid_exponent(sens / eps, LAPLACE_BITS)
    g = Fraction(2) ** e
    inflated = Fraction(sens) + g * (1 if linf else d)
    t = math.ceil(inflated / (Fraction(eps) * g))
    if t >= _SAFE:
        raise NoiseScaleRangeError(_ALLOWANCE.format(what=f"epsilon={eps:.3g}", d=d))
    return GridPlan("laplace", e, t, _float_up(inflated), math.ldexp(float(t), e), laplace_closeness(t), 0.0)


def to_grid(values: np.ndarray, exponent: int) -> tuple[np.ndarray, np.ndarray]:
    """(integers, finite mask): round(values / 2^exponent) as exact integers (int64, or object when large).

    Non-finite entries get 0 and are flagged False in the mask.  Values beyond
    2^1000 grid steps are clamped there (a 1-Lipschitz map of the value, so
    sensitivities are unchanged).
    """
    x = np.asarray(values, dtype=float)
    finite = np.isfinite(x)
    if x.ndim:  # (the same values as the scalar line below, rounded in one new array: np.clip's own definition)
        q = np.ldexp(x if finite.all() else np.where(finite, x, 0.0), -exponent)
        np.rint(np.minimum(np.maximum(q, -2.0**1000, out=q), 2.0**1000, out=q), out=q)
    else:
        q = np.rint(np.clip(np.ldexp(np.where(finite, x, 0.0), -exponent), -2.0**1000, 2.0**1000))
    if q.size == 0 or max(float(q.max()), -float(q.min())) < _SAFE:
        return q.astype(_I64), finite
    return np.array([int(v) for v in q.ravel()], dtype=object).reshape(q.shape), finite


def _exact_add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b for integer arrays (int64 or object), exactly."""
    if a.dtype != object and b.dtype != object:
        if (a.size == 0 or max(int(a.max()), -int(a.min())) < _SAFE) and \
                (b.size == 0 or max(int(b.max()), -int(b.min())) < _SAFE):
            return a + b
    return np.array([int(x) + int(y) for x, y in zip(a.ravel(), b.ravel(), strict=True)], dtype=object).reshape(a.shape)


def _to_float(k: np.ndarray, exponent: int) -> np.ndarray:
    """The double nearest to the integer k, times 2^exponent (exact scaling; post-processing of k)."""
    if k.dtype == object:
        f = np.array([float(v) for v in k.ravel()], dtype=float).reshape(k.shape)  # correctly rounded
    else:
        f = k.astype(float)  # int64 -> float64 rounds to nearest
    return np.ldexp(f, exponent)


def release_on_grid(values: float | np.ndarray, plan: GridPlan, rng: np.random.Generator) -> np.ndarray:
    """g * (round(values / g) + Z), Z exact discrete noise of the plan; non-finite values pass through.

    The integer round(values / g) + Z is computed exactly; its conversion to
    the nearest double is post-processing.  Entries that are NaN or infinite
    stay NaN or infinite (no noise can hide them; they reveal only that the
    input was not finite, as the floating-point mechanism did).
    """
    x = np.asarray(values, dtype=float)
    k, finite = to_grid(x, plan.grid_exponent)
    n = x.size
    if plan.kind == "gaussian":
        z = discrete_gaussian(plan.param, n, rng)
    else:
        z = discrete_laplace(plan.param, n, rng)
    out = _to_float(_exact_add(k.ravel(), z.ravel()), plan.grid_exponent).reshape(x.shape)
    if not finite.all():
        out = np.where(finite, out, x)
    return out
