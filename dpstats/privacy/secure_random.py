"""A numpy Generator whose draws come from the operating system's CSPRNG.

``numpy.random.default_rng(None)`` seeds a fast statistical PRNG (PCG64) with
128 bits of OS entropy.  That seed is secret, but PCG64 is not a
cryptographic generator: its state can in principle be recovered from enough
of its outputs (Bouillaguet, Martinez & Sauvage 2020), and an adversary who
learns the state learns every noise value drawn after it.  For unseeded
(production) fits dpstats therefore uses :class:`SecureGenerator`: a
subclass of :class:`numpy.random.Generator`, so every method and type check
in the package accepts it, whose draws are computed from bytes read in bulk
from ``os.urandom`` (the kernel's CSPRNG, ``getrandom(2)`` on Linux).

* ``integers`` (all the exact samplers of :mod:`dpstats.privacy.samplers`
  need), ``random``, ``uniform``, ``bytes``, ``permutation``, ``shuffle``,
  ``choice`` (uniform cases), ``standard_normal``, ``normal``,
  ``exponential``, ``standard_exponential``, ``gumbel`` and ``laplace`` are
  computed here directly from OS random bytes: uniform integers by exact
  rejection, uniform doubles from 53 random bits, the continuous
  distributions by inversion.
* Every other distribution method (``binomial``, used by DP-SGD's Poisson
  subsampling, ``poisson``, ``beta``, ...) runs numpy's own algorithm on a
  Philox bit generator whose key and counter are replaced with fresh
  ``os.urandom`` bytes before each call, so no state carries over between
  calls.

Bytes are read in blocks of 64 KiB and consumed once.  The buffer is dropped
when the process id changes, so a forked child never replays its parent's
bytes, and copying or pickling a SecureGenerator gives a fresh one that
shares nothing with the original.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
from scipy.special import ndtri

__all__ = ["SecureGenerator", "is_secure"]

_BLOCK = 1 << 16  # bytes read from os.urandom at a time for small requests
_TWO53 = float(2**53)
_MAXU = np.uint64(0xFFFFFFFFFFFFFFFF)


class SecureGenerator(np.random.Generator):
    """A :class:`numpy.random.Generator` drawing every value from ``os.urandom`` (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__(np.random.Philox())
        self._buffer = b""
        self._pos = 0
        self._pid = os.getpid()

    # -- the byte source -------------------------------------------------------------------------------------
    def _read(self, nbytes: int) -> bytes:
        if self._pid != os.getpid():  # forked: never reuse the parent's bytes
            self._buffer, self._pos, self._pid = b"", 0, os.getpid()
        if nbytes > _BLOCK // 2:
            return os.urandom(nbytes)
        if self._pos + nbytes > len(self._buffer):
            self._buffer, self._pos = os.urandom(_BLOCK), 0
        out = self._buffer[self._pos:self._pos + nbytes]
        self._pos += nbytes
        return out

    def _words(self, n: int) -> np.ndarray:
        """n uniform 64-bit words (uint64)."""
        return np.frombuffer(self._read(8 * n), dtype="<u8").astype(np.uint64, copy=False)

    def _rekey(self) -> None:
        w = self._words(6)
        self.bit_generator.state = {
            "bit_generator": "Philox", "state": {"counter": w[:4].copy(), "key": w[4:].copy()},
            "buffer": np.zeros(4, dtype=np.uint64), "buffer_pos": 4, "has_uint32": 0, "uinteger": 0,
        }

    # -- no shared state through copies ----------------------------------------------------------------------
    def __reduce__(self) -> tuple[Any, ...]:
        return (SecureGenerator, ())

    def __copy__(self) -> SecureGenerator:
        return SecureGenerator()

    def __deepcopy__(self, memo: dict) -> SecureGenerator:
        return SecureGenerator()

    def __repr__(self) -> str:
        return "SecureGenerator(os.urandom)"

    __str__ = __repr__

    def spawn(self, n_children: int) -> list[SecureGenerator]:  # type: ignore[override]
        return [SecureGenerator() for _ in range(int(n_children))]

    # -- uniform integers and doubles ------------------------------------------------------------------------
    def _bounded(self, span: np.ndarray) -> np.ndarray:
        """Uniform integers on [0, span) elementwise (span uint64 >= 1), by exact rejection.

        A 64-bit word w is accepted when the block [w - w mod span, ... + span)
        of 2^64 holding it is complete, i.e. w - (w mod span) <= 2^64 - span;
        then w mod span is exactly uniform.  Rejections have probability below
        span / 2^64.
        """
        span = np.asarray(span, dtype=np.uint64)
        flat = span.ravel()
        if flat.size and int(flat.max()) < (1 << 24):  # small spans: 32-bit words (rejection below 2^-8)
            return self._bounded32(flat).reshape(span.shape)
        w = self._words(flat.size)
        out = w % flat
        last_start = _MAXU - flat + np.uint64(1)  # 2^64 - span
        bad = (w - out) > last_start
        while bad.any():
            idx = np.flatnonzero(bad)
            w2 = self._words(idx.size)
            o2 = w2 % flat[idx]
            out[idx] = o2
            bad[idx] = (w2 - o2) > last_start[idx]
        return out.reshape(span.shape)

    def _bounded32(self, flat: np.ndarray) -> np.ndarray:
        """As :meth:`_bounded` with 32-bit words, for spans below 2^24."""
        span = flat.astype(np.uint32)
        w = np.frombuffer(self._read(4 * span.size), dtype="<u4").astype(np.uint32, copy=False)
        out = w % span
        last_start = np.uint32(0xFFFFFFFF) - span + np.uint32(1)
        bad = (w - out) > last_start
        while bad.any():
            idx = np.flatnonzero(bad)
            w2 = np.frombuffer(self._read(4 * idx.size), dtype="<u4").astype(np.uint32, copy=False)
            o2 = w2 % span[idx]
            out[idx] = o2
            bad[idx] = (w2 - o2) > last_start[idx]
        return out.astype(np.uint64)

    def _below(self, high: Any, size: Any = None) -> np.ndarray:
        """Fast path for the samplers: int64 uniform integers on [0, high), 1 <= high <= 2^62."""
        span = np.asarray(high, dtype=np.uint64)
        if size is not None:
            span = np.broadcast_to(span, (int(size),))
        return self._bounded(span).view(np.int64)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        if high is None:
            low, high = 0, low
        try:
            lo, hi = np.asarray(low, dtype=np.int64), np.asarray(high, dtype=np.int64)
        except (OverflowError, TypeError, ValueError):
            return self._integers_big(low, high, size, dtype, endpoint)
        if np.any(hi < lo) or (not endpoint and np.any(hi == lo)):
            raise ValueError("low > high" if endpoint else "high <= low")
        shape = np.broadcast_shapes(lo.shape, hi.shape) if size is None else _shape(size)
        lo_b = np.broadcast_to(lo, shape).astype(np.uint64)
        # the span hi - lo (+1) in two's complement: exact modulo 2^64; 0 means the full range 2^64
        with np.errstate(over="ignore"):
            span = np.broadcast_to(hi, shape).astype(np.uint64) - lo_b + np.uint64(1 if endpoint else 0)
        full = span == 0
        draw = self._bounded(np.where(full, np.uint64(1), span))
        if np.any(full):
            draw = np.where(full, self._words(draw.size).reshape(shape), draw)
        with np.errstate(over="ignore"):
            out = (lo_b + draw).view(np.int64)  # lo + draw, wrapping exactly like int64 arithmetic
        out = out.astype(dtype, copy=False)
        return out[()] if size is None and out.ndim == 0 else out

    def _integers_big(self, low: Any, high: Any, size: Any, dtype: Any, endpoint: bool) -> Any:
        """Python-integer bounds beyond int64 (rare): spans up to 2^64."""
        lo = np.asarray(low, dtype=object)
        span = np.asarray(np.asarray(high, dtype=object) - lo + (1 if endpoint else 0), dtype=object)
        if np.any(span <= 0) or np.any(span > 2**64):
            raise ValueError("the range of integers is empty or wider than 2^64")
        shape = np.broadcast_shapes(lo.shape, span.shape) if size is None else _shape(size)
        span_b = np.broadcast_to(span, shape)
        full = span_b == 2**64
        draw = self._bounded(np.where(full, 1, span_b).astype(np.uint64)).astype(object)
        if np.any(full):
            draw = np.where(full, self._words(int(np.prod(shape))).reshape(shape).astype(object), draw)
        info = np.iinfo(dtype)
        if np.any(lo < info.min) or np.any(lo + span - 1 > info.max):
            raise ValueError(f"the range of integers does not fit {np.dtype(dtype).name}")
        out = np.asarray(np.broadcast_to(lo, shape) + draw, dtype=object).astype(dtype)
        return out[()] if size is None and out.ndim == 0 else out

    def random(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        shape = _shape(size)
        n = int(np.prod(shape)) if shape else 1
        u = (self._words(n) >> np.uint64(11)).astype(np.float64) / _TWO53
        u = u.astype(dtype).reshape(shape)
        if out is not None:
            out[...] = u
            return out
        return float(u) if size is None else u

    def _open_unit(self, shape: tuple[int, ...]) -> np.ndarray:
        """Uniform doubles in the open interval (0, 1): (k + 1/2) / 2^53."""
        n = int(np.prod(shape)) if shape else 1
        k = (self._words(n) >> np.uint64(11)).astype(np.float64)
        return ((k + 0.5) / _TWO53).reshape(shape)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Any = None) -> Any:
        lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        shape = np.broadcast_shapes(lo.shape, hi.shape) if size is None else _shape(size)
        u = self.random(shape if shape else None)
        res = lo + (hi - lo) * np.asarray(u)
        return float(res) if size is None and np.ndim(res) == 0 else res

    def bytes(self, length: int) -> bytes:
        return os.urandom(int(length))

    # -- permutations ----------------------------------------------------------------------------------------
    def _perm(self, n: int) -> np.ndarray:
        """A uniform permutation of range(n): sort by distinct random 64-bit keys (ties are redrawn)."""
        while True:
            keys = self._words(n)
            order = np.argsort(keys, kind="stable")
            k = keys[order]
            if n < 2 or not np.any(k[1:] == k[:-1]):
                return order

    def _distinct(self, n: int, k: int) -> np.ndarray:
        """k distinct uniform draws from range(n) in random order (k <= n/2): uniform draws, repeats rejected.

        Drawing uniformly and skipping values already taken gives each ordered
        k-tuple of distinct values the same probability; O(k) instead of the
        O(n log n) of a full permutation.
        """
        taken = np.empty(0, dtype=np.int64)
        while taken.size < k:
            need = k - taken.size
            cand = self._bounded(np.full(need + need // 2 + 8, n, dtype=np.uint64)).astype(np.int64)
            both = np.concatenate([taken, cand])
            _, first = np.unique(both, return_index=True)
            keep = np.zeros(both.size, dtype=bool)
            keep[first] = True  # the first occurrence of each value, in draw order
            taken = both[keep][:k]
        return taken

    def permutation(self, x: Any, axis: int = 0) -> Any:
        if isinstance(x, (int, np.integer)):
            return self._perm(int(x))
        arr = np.asarray(x)
        if arr.ndim == 0:
            raise TypeError("x must be an integer or at least 1-dimensional")
        return np.take(arr, self._perm(arr.shape[axis]), axis=axis)

    def shuffle(self, x: Any, axis: int = 0) -> None:
        if isinstance(x, np.ndarray):
            x[...] = np.take(x, self._perm(x.shape[axis]), axis=axis)
            return
        items = list(x)
        for i, j in enumerate(self._perm(len(items))):
            x[i] = items[j]

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> Any:
        pool = np.arange(int(a)) if isinstance(a, (int, np.integer)) else np.asarray(a)
        n = pool.shape[axis] if pool.ndim else 0
        if p is not None or pool.ndim != 1:
            self._rekey()
            return super().choice(a, size=size, replace=replace, p=p, axis=axis, shuffle=shuffle)
        shape = _shape(size)
        k = int(np.prod(shape)) if shape else 1
        if n == 0 and k > 0:
            raise ValueError("a cannot be empty unless no samples are taken")
        if replace:
            idx = self._bounded(np.full(k, n, dtype=np.uint64)).astype(np.int64)
        else:
            if k > n:
                raise ValueError("cannot take a larger sample than population when replace=False")
            idx = self._perm(n)[:k] if 2 * k > n else self._distinct(n, k)
        out = pool[idx]
        return out[0] if size is None else out.reshape(shape)

    # -- continuous distributions by inversion ---------------------------------------------------------------
    def standard_normal(self, size: Any = None, dtype: Any = np.float64, out: Any = None) -> Any:
        shape = _shape(size)
        z = ndtri(self._open_unit(shape)).astype(dtype)
        if out is not None:
            out[...] = z
            return out
        return float(z) if size is None else z

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return _affine(self, loc, scale, size, lambda shp: ndtri(self._open_unit(shp)))

    def standard_exponential(self, size: Any = None, dtype: Any = np.float64, method: str = "zig",
                             out: Any = None) -> Any:
        e = -np.log(self._open_unit(_shape(size))).astype(dtype)
        if out is not None:
            out[...] = e
            return out
        return float(e) if size is None else e

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        return _affine(self, 0.0, scale, size, lambda shp: -np.log(self._open_unit(shp)))

    def gumbel(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        return _affine(self, loc, scale, size, lambda shp: -np.log(-np.log(self._open_unit(shp))))

    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        def draw(shp: tuple[int, ...]) -> np.ndarray:
            u = self._open_unit(shp) - 0.5
            return -np.sign(u) * np.log1p(-2.0 * np.abs(u))
        return _affine(self, loc, scale, size, draw)


def _shape(size: Any) -> tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(int(s) for s in size)


def _affine(gen: SecureGenerator, loc: Any, scale: Any, size: Any, draw: Any) -> Any:
    lc, sc = np.asarray(loc, dtype=float), np.asarray(scale, dtype=float)
    if np.any(sc < 0):
        raise ValueError("scale < 0")
    shape = np.broadcast_shapes(lc.shape, sc.shape) if size is None else _shape(size)
    res = lc + sc * draw(shape)
    return float(res) if size is None and np.ndim(res) == 0 else res


_REKEYED = [
    "binomial", "poisson", "beta", "gamma", "standard_gamma", "chisquare", "dirichlet", "f", "geometric",
    "hypergeometric", "logistic", "lognormal", "logseries", "multinomial", "multivariate_hypergeometric",
    "multivariate_normal", "negative_binomial", "noncentral_chisquare", "noncentral_f", "pareto", "power",
    "rayleigh", "standard_cauchy", "standard_t", "triangular", "vonmises", "wald", "weibull", "zipf", "permuted",
]


def _rekeyed(name: str) -> Any:
    base = getattr(np.random.Generator, name)

    def method(self: SecureGenerator, *args: Any, **kwargs: Any) -> Any:
        self._rekey()
        return base(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"numpy's ``{name}`` on a Philox stream keyed afresh from os.urandom for this call."
    return method


for _name in _REKEYED:
    setattr(SecureGenerator, _name, _rekeyed(_name))


def is_secure(rng: Any) -> bool:
    """True when ``rng`` draws from the operating system's CSPRNG."""
    return isinstance(rng, SecureGenerator)
