"""The Poisson-sampled Gaussian mechanism of DP-SGD (Abadi et al., CCS 2016), hardened.

Each of T rounds draws a secret Poisson sample of the rows (every row
independently with probability q, :func:`poisson_subsample`), sums a per-row
vector clipped to L2 norm C over the sampled rows, and adds Gaussian noise of
sd z C.  :class:`PoissonGaussianBlock` charges all T rounds to the ledger at
once, as one step whose epsilon is ``dp_accounting``'s PLD bound for the
composed rounds under replace-one neighbours (:func:`poisson_gaussian_epsilon`);
:func:`calibrate_noise_multiplier` finds the smallest z within a budget.
:class:`ClippedGridSum` is the data-dependent half of a round: the exact
integer sum of the clipped rows on the mechanism's public grid, computed
where the rows are (chunks, Dask workers) and added exactly
(:func:`add_grid_sums`), so a split of the rows changes nothing.

Used by one method only, DP-SGD (:mod:`dpstats.methods.dpsgd`), but kept
here, with the other mechanisms, because its accounting and its hardened
sampler are privacy code that the audits test on their own.

Privacy proof (the dominating pair under replace-one, and the hardened
sampler): docs/proofs/dpsgd.md.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import dp_accounting
import numpy as np
from dp_accounting import pld
from scipy import optimize

from dpstats.errors import NoiseScaleRangeError, UnsupportedPrivacyParameterError
from dpstats.privacy.ledger import (
    REFERENCE_EPSILON_CAP,
    PrivacyLedger,
    PrivacyStep,
    reference_delta,
)
from dpstats.privacy.mechanisms import _PLD_NUMERIC_FAILURES, MOVED_UP, _check_sensitivity
from dpstats.privacy.samplers import (
    GAUSSIAN_BITS,
    _ceil_sqrt,
    _exact_add,
    _float_up,
    _grid_exponent,
    _to_float,
    discrete_gaussian,
    gaussian_closeness,
    to_grid,
)
from dpstats.validation import check_privacy_parameters

__all__ = [
    "ClippedGridSum",
    "PoissonGaussianBlock",
    "add_grid_sums",
    "calibrate_noise_multiplier",
    "poisson_gaussian_block",
    "poisson_gaussian_epsilon",
    "poisson_subsample",
]

#: A generous figure for the tail mass dp_accounting's PLD accountant truncates per Poisson-sampled Gaussian
#: step (measured 6e-18 at q = 0.02, z = 4); only used to word a refusal.
_PLD_TAIL_PER_STEP = 1e-16

# Discretisation of the privacy-loss distribution.  dp_accounting rounds pessimistically, so any interval gives
# an upper bound on epsilon; 1e-3 costs about 0.1% in noise against 1e-4 and is ten times faster.
_PLD_INTERVAL = 1e-3


def poisson_subsample(n: int, q: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of a Poisson sample of range(n): every index independently with probability ``q``.

    Drawn as K ~ Binomial(n, q) followed by K distinct indices uniformly at
    random.  Given its size a Poisson sample is a uniform subset of that size,
    so this has exactly the Poisson law P[S] = q^|S| (1 - q)^(n - |S|), at
    O(K) instead of O(n) cost.

    The law depends only on the public n and q, so the draw charges nothing by
    itself; it is part of the Poisson-sampled Gaussian mechanism, whose
    accounting (:func:`poisson_gaussian_epsilon`) covers it.  The
    amplification by subsampling holds only while the sample stays secret:
    use it inside a charged :class:`PoissonGaussianBlock` and never release it.
    """
    if not (0.0 < q <= 1.0):
        raise ValueError(f"the sampling rate must lie in (0, 1], got {q!r}")
    k = int(rng.binomial(int(n), q))
    return rng.choice(int(n), size=k, replace=False)


@lru_cache(maxsize=1024)
def poisson_gaussian_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float) -> float:
    """Epsilon at ``delta`` of ``steps`` adaptively composed Poisson-sampled Gaussian sums, under replace-one.

    The mechanism of one step: sample each row independently with
    probability q (:func:`poisson_subsample`), sum a per-row vector whose L2
    norm is at most C over the sampled rows, add N(0, (z C)^2 I), with
    z = ``noise_multiplier``.  Accounted with ``dp_accounting``'s PLD
    accountant for the event
    ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), steps)``
    under ``NeighboringRelation.REPLACE_ONE``, whose privacy-loss distribution
    is that of the pair (in units of C)

        P = (1 - q) N(0, z^2) + q N(-1, z^2),   Q = (1 - q) N(0, z^2) + q N(+1, z^2)

    (pessimistic discretisation, so an upper bound).  (P, Q) dominates every
    replace-one pair of neighbours at every step, whatever the current iterate,
    so the adaptive composition is dominated by (P^T, Q^T) (Zhu, Dong & Wang
    2022, Thm 10).  Proof: docs/proofs/dpsgd.md, "The dominating pair".

    Parameters
    ----------
    noise_multiplier : float
        z > 0.
    sampling_rate : float
        q in (0, 1].
    steps : int
        T >= 1.
    delta : float
        delta in (0, 1).

    Returns
    -------
    float
        The epsilon (>= 0) certified at ``delta``.

    Raises
    ------
    UnsupportedPrivacyParameterError
        When the accounting cannot certify ``delta`` in floating point (nothing is spent).
    """
    if not (noise_multiplier > 0 and 0 < sampling_rate <= 1 and steps >= 1 and 0 < delta < 1):
        raise ValueError("need noise_multiplier > 0, 0 < sampling_rate <= 1, steps >= 1 and 0 < delta < 1")
    step = dp_accounting.PoissonSampledDpEvent(float(sampling_rate),
                                               dp_accounting.GaussianDpEvent(float(noise_multiplier)))
    event = dp_accounting.SelfComposedDpEvent(step, int(steps))
    accountant = pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE,
                                   value_discretization_interval=_PLD_INTERVAL)
    try:
        accountant.compose(event)
        eps = float(accountant.get_epsilon(float(delta)))
    except _PLD_NUMERIC_FAILURES:
        eps = math.nan
    if not math.isfinite(eps):
        # Gaussian privacy losses are finite: an infinite (or failed) epsilon means that dp_accounting's
        # truncated tails (mass up to about 1e-17 per step, counted as infinite loss) exceed delta, or that
        # the PLD overflowed (a noise multiplier far below 1, i.e. an epsilon in the hundreds)
        raise UnsupportedPrivacyParameterError(
            f"DP-SGD's privacy accounting (dp_accounting PLD, {int(steps)} Poisson-sampled steps at rate "
            f"{float(sampling_rate):.4g}, noise multiplier {float(noise_multiplier):.4g}) cannot certify "
            f"delta={float(delta):.3g} in floating point; use a larger delta (at least about "
            f"{_PLD_TAIL_PER_STEP * int(steps):.0e} for this many steps), fewer steps or a smaller epsilon; "
            "nothing was spent")
    return eps if eps >= 0 else 0.0


#: The smallest noise multiplier :func:`calibrate_noise_multiplier` returns (the largest epsilon of the supported
#: range, 100, needs about 0.19 at 30 steps of rate 1/30 and delta 1e-6)
MIN_NOISE_MULTIPLIER = 0.125


@lru_cache(maxsize=512)
def calibrate_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int) -> float:
    """Smallest noise multiplier z (to about 0.1%) whose T-step Poisson-sampled Gaussian is (epsilon, delta)-DP.

    Brent's method on log z for :func:`poisson_gaussian_epsilon` (dp_accounting
    PLD, replace-one), after bracketing the root by factors of 4; the result is
    then moved up until that same function certifies it, so the returned z
    never exceeds the budget.  The search stops at ``MIN_NOISE_MULTIPLIER``:
    where even that z is certified (a delta near 1 certifies any z), it is
    returned (more noise than the budget needs; the PLD of a smaller z takes
    time and memory that grow like 1 / z^2, and a delta near 1 sent the search
    towards 0 without end).  Depends on public quantities only.

    Parameters
    ----------
    epsilon : float
        Finite epsilon > 0 of the whole run.
    delta : float
        delta in (0, 1).
    sampling_rate : float
        q in (0, 1].
    steps : int
        T >= 1.

    Returns
    -------
    float
        z, certified by :func:`poisson_gaussian_epsilon` to spend at most ``epsilon``.
    """
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError("calibration needs a finite epsilon > 0 and 0 < delta < 1")
    # the supported range (a search beyond it would not end in time); the fit's own epsilon was checked against
    # MIN_EPSILON, and this one may be a share of it
    check_privacy_parameters(epsilon, delta, min_epsilon=0.0)

    def excess(log_z: float) -> float:
        return poisson_gaussian_epsilon(math.exp(log_z), sampling_rate, steps, delta) - epsilon

    floor = math.log(MIN_NOISE_MULTIPLIER)
    lo, hi = math.log(0.25), math.log(4.0)
    while excess(lo) <= 0:
        if lo <= floor:  # certified at the floor: more noise than the budget needs, never less
            return MIN_NOISE_MULTIPLIER
        lo, hi = max(lo - math.log(4.0), floor), lo
    while excess(hi) > 0:
        lo, hi = hi, hi + math.log(4.0)
    z = math.exp(optimize.brentq(excess, lo, hi, xtol=1e-4))
    while excess(math.log(z)) > 0:
        z *= 1.001
    return z


class PoissonGaussianBlock:
    """``rounds`` Poisson-sampled Gaussian sums (DP-SGD's releases), charged to the ledger once, before any is drawn.

    Round t: :meth:`sample` draws the secret Poisson sample (rate q) of the
    rows; :meth:`release_clipped_sum` clips each of the caller's per-row
    vectors for that sample to L2 norm ``clip_norm`` = C (the mechanism
    enforces its own sensitivity), sums them and adds N(0, (z C)^2 I),
    z = ``noise_multiplier``.  The whole run is recorded as ONE
    ``approximate-dp`` step whose (epsilon, delta) is
    :func:`poisson_gaussian_epsilon` at the ledger's delta: dp_accounting's
    PLD value for the composed ``PoissonSampledDpEvent`` under replace-one.
    The subsampling is part of the accounted mechanism.  More
    than ``rounds`` samples or releases are refused.

    Hardened: each clipped row is rounded to the public grid g = 2^e
    (z C / g in [2^40, 2^41)), the integer rows are summed exactly, and an
    exact discrete Gaussian N_Z(0, s^2) is added, s = ceil(z C' / g), where
    C' = C (1 + 2^-30) + g ceil(sqrt(d)) / 2 bounds the norm of a rounded row.
    The epsilon recorded covers the sampled noise, not only the continuous
    reference (docs/proofs/dpsgd.md, "Hardened sampling").

    Parameters
    ----------
    noise_multiplier : float
        z > 0 (:func:`calibrate_noise_multiplier`).
    sampling_rate : float
        q in (0, 1].
    rounds : int
        T, the number of samples and releases charged.
    clip_norm : float
        C > 0, the per-row L2 clip.
    n : int
        The public number of rows sampled from.
    ledger : PrivacyLedger
        The fit's ledger, charged now (refused beyond its budget).
    name : str
        The ledger step's name.
    dimension : int
        d, the length of every per-row vector (1 to 2^20).
    delta : float or None
        The delta the run is charged at (its epsilon is certified there); None: the ledger's delta.  A smaller
        delta leaves the rest of the ledger's delta to other releases of the fit (basic composition of the
        deltas in the ledger's total).
    """

    def __init__(self, *, noise_multiplier: float, sampling_rate: float, rounds: int, clip_norm: float, n: int,
                 ledger: PrivacyLedger, name: str, dimension: int, delta: float | None = None) -> None:
        if int(rounds) != rounds or rounds < 1:
            raise ValueError("rounds must be a positive integer")
        clip = _check_sensitivity(clip_norm)
        if clip == 0:
            raise ValueError("clip_norm must be > 0")
        self.noise_multiplier = float(noise_multiplier)
        self.sampling_rate = float(sampling_rate)
        self.rounds = int(rounds)
        self.clip_norm = clip
        self.n = int(n)
        self.sampled = 0
        self.released = 0
        self.dimension = int(dimension)
        if not 1 <= self.dimension <= (1 << 20):
            raise ValueError("the hardened Poisson-sampled Gaussian supports 1 <= dimension <= 2^20")
        if not (self.noise_multiplier > 0 and math.isfinite(self.noise_multiplier)):
            raise ValueError("noise_multiplier must be finite and > 0")
        self.grid_exponent = _grid_exponent(self.noise_multiplier * clip, GAUSSIAN_BITS)
        g = Fraction(2) ** self.grid_exponent
        rounded_clip = Fraction(clip) * (1 + Fraction(1, 1 << 30)) + g * _ceil_sqrt(self.dimension) / 2
        self.s = math.ceil(Fraction(self.noise_multiplier) * rounded_clip / g)
        if self.s >= (1 << 41):  # the exact sampler's range (discrete_gaussian): refused before anything is charged
            raise NoiseScaleRangeError(
                f"the Poisson-sampled Gaussian's noise multiplier {self.noise_multiplier:.3g} (from epsilon, delta, "
                "the sampling rate and the steps) needs more grid steps of noise than the exact sampler supports: a "
                "larger epsilon or delta, or fewer steps; nothing was released")
        sd = math.ldexp(float(self.s), self.grid_exponent)
        lam, tau = gaussian_closeness(self.s)
        lam_total, tau_total = self.rounds * self.dimension * lam, self.rounds * self.dimension * tau
        # the reference run (continuous noise, rounded) at delta_R; the sampled run then at (eps_R + 2 Lambda, delta)
        run_delta = float(ledger.delta if delta is None else delta)
        delta_r = reference_delta(run_delta, lam_total, tau_total)
        # delta_r <= 0 (a ledger delta below the closeness slack): no finite bound, and the charge is refused
        eps = (poisson_gaussian_epsilon(self.noise_multiplier, self.sampling_rate, self.rounds, delta_r)
               if delta_r > 0 else math.inf)
        eps = eps + 2.0 * lam_total if eps <= REFERENCE_EPSILON_CAP else math.inf
        ledger.charge(PrivacyStep(
            name, "approximate-dp", _float_up(rounded_clip), "L2, per-row clip C (after grid rounding)", sd,
            epsilon=eps, delta=run_delta, dimension=self.dimension,
            note=(f"Poisson-sampled Gaussian, T={self.rounds} steps, q={self.sampling_rate:.4g}, noise multiplier "
                  f"z={self.noise_multiplier:.4g} (noise sd z*C on each batch sum of rows clipped to norm C; a "
                  "replaced row moves it by <= 2C); accounted with dp_accounting PLD, replace-one; rows rounded to "
                  f"the grid 2^{self.grid_exponent}, discrete Gaussian noise (s={self.s} grid steps; exact integer "
                  "sampler, Canonne, Kamath & Steinke 2020)")))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """The secret Poisson sample of this round (row indices); never release it."""
        if self.sampled >= self.rounds:
            raise RuntimeError("this block has already drawn all the samples it was charged for")
        self.sampled += 1
        return poisson_subsample(self.n, self.sampling_rate, rng)

    @property
    def summer(self) -> ClippedGridSum:
        """The data-dependent half of a release, for rows read in chunks (picklable, for workers)."""
        return ClippedGridSum(self.clip_norm, self.grid_exponent, self.dimension)

    def release_clipped_sum(self, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """sum_i clip_C(rows[i]) + discrete Gaussian noise of sd about z C, for the rows of the current sample."""
        self._check_fresh_sample()
        return self.release_grid_sum(self.summer(rows), rng)

    def _check_fresh_sample(self) -> None:
        if self.released >= self.sampled:
            raise RuntimeError("release_clipped_sum needs a fresh sample() first (one release per sample)")

    def release_grid_sum(self, total: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The release of :meth:`release_clipped_sum` from ``total``, the exact integer sum of :attr:`summer`
        over the rows of the current sample, accumulated over any split of them (chunks, workers) with
        :func:`add_grid_sums`.  Integer sums are exact, so the split changes nothing; the caller must not pass
        anything else (the clipping of :class:`ClippedGridSum` is what bounds the sensitivity)."""
        self._check_fresh_sample()
        total = np.asarray(total)
        if total.shape != (self.dimension,) or total.dtype.kind not in "iO":
            raise ValueError(f"the grid sum must be an integer vector of length {self.dimension}")
        self.released += 1
        noise = discrete_gaussian(self.s, self.dimension, rng)
        return _to_float(_exact_add(total, noise), self.grid_exponent)


class ClippedGridSum:
    """rows -> sum_i round_g(clip_C(rows[i])) as exact integers (int64, or Python ints when large).

    Each row (a vector of length ``dimension``) is scaled to L2 norm at most
    C; rows with a non-finite norm contribute nothing (norm 0 <= C).  The
    clipped entries are rounded to the grid g = 2^``grid_exponent`` of a
    :class:`PoissonGaussianBlock` and summed exactly.  A small picklable
    object, so that workers holding chunks of the rows can form partial sums.
    """

    def __init__(self, clip_norm: float, grid_exponent: int, dimension: int) -> None:
        self.clip_norm, self.grid_exponent, self.dimension = float(clip_norm), int(grid_exponent), int(dimension)

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        r = np.asarray(rows, dtype=float)
        if r.ndim != 2 or r.shape[1] != self.dimension:
            raise ValueError(f"rows must be a 2-d array with {self.dimension} columns (one vector per sampled row)")
        norms = np.sqrt(np.einsum("ij,ij->i", r, r))
        # min(1, C/||r_i||); rows with a non-finite norm contribute nothing (a contribution of norm 0 <= C)
        finite = np.isfinite(norms)
        scale = np.where(finite, self.clip_norm / np.maximum(np.where(finite, norms, 0.0), self.clip_norm), 0.0)
        clipped = np.where(finite[:, None], r, 0.0) * scale[:, None]
        ints, _ = to_grid(clipped, self.grid_exponent)  # |entries| <= C' / g < 2^62
        return _exact_column_sums(ints)


def add_grid_sums(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b for the exact integer sums of :class:`ClippedGridSum` (a reducer over chunks; exact)."""
    return _exact_add(np.asarray(a), np.asarray(b))


def _exact_column_sums(ints: np.ndarray) -> np.ndarray:
    """Exact column sums of an integer matrix (int64 entries below 2^62 in absolute value)."""
    if ints.dtype == object:
        return np.array([sum(int(v) for v in col) for col in ints.T], dtype=object)
    if ints.shape[0] == 0:
        return np.zeros(ints.shape[1], dtype=np.int64)
    if ints.shape[0] * int(np.max(np.abs(ints))) < (1 << 62):
        return ints.sum(axis=0)
    hi, lo = ints >> 31, ints & ((1 << 31) - 1)  # ints = hi 2^31 + lo, 0 <= lo < 2^31, |hi| < 2^31
    hs, ls = hi.sum(axis=0), lo.sum(axis=0)   # each below 2^31 * rows < 2^62 for fewer than 2^31 rows
    return np.array([(int(a) << 31) + int(b) for a, b in zip(hs, ls, strict=True)], dtype=object)


def poisson_gaussian_block(*, noise_multiplier: float, sampling_rate: float, rounds: int, clip_norm: float, n: int,
                           ledger: PrivacyLedger, name: str, dimension: int,
                           delta: float | None = None) -> PoissonGaussianBlock:
    """Charge a DP-SGD run of ``rounds`` Poisson-sampled Gaussian sums now; see :class:`PoissonGaussianBlock`."""
    return PoissonGaussianBlock(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, rounds=rounds,
                                clip_norm=clip_norm, n=n, ledger=ledger, name=name, dimension=dimension, delta=delta)


# the deprecated dpstats.privacy.mechanisms.<name> of the names that moved here (one release)
for _name in ("poisson_subsample", "poisson_gaussian_epsilon", "PoissonGaussianBlock", "poisson_gaussian_block",
              "ClippedGridSum", "add_grid_sums"):
    MOVED_UP.add(_name, f"{__name__}.{_name}", globals()[_name])
