"""The only place where dpstats draws random noise.

Each mechanism takes the exact value to protect, its sensitivity, the privacy
parameter, an explicit :class:`numpy.random.Generator` and the fit's
:class:`~dpstats.privacy.ledger.PrivacyLedger`.  It charges the ledger first
(which refuses a release beyond the budget) and only then draws the noise.
Mechanisms are small and composable, in the manner of OpenDP: a method is a
sequence of mechanism calls plus post-processing.

Data-independent randomness (shuffling rows into blocks, tie-breaking jitter)
goes through :func:`public_uniform` and :func:`permutation`, which are not
charged because their output does not depend on the data.

Hardened noise.  Every additive noise draw (Laplace, Gaussian, the Gaussian
and Poisson-sampled Gaussian blocks of iterative methods, Peeling's Laplace
noise) is made by :mod:`dpstats.privacy.samplers`: the value is rounded to a
public power-of-two grid and an exact discrete Laplace or discrete Gaussian
integer (Canonne, Kamath & Steinke 2020) is added, so no floating-point noise
ever touches a private value (Mironov 2012).  The ledger step records the
sampled mechanism: its sensitivity includes the rounding allowance, its note
names the grid, and its ``closeness_epsilon`` / ``closeness_delta`` bound the
distance to the reference continuous mechanism the ledger composes (see
:meth:`~dpstats.privacy.ledger.PrivacyLedger._total`).  What stays
floating-point is listed in ``docs/architecture.md`` ("Floating-point
safety"): the exponential mechanism's Gumbel draws, TukeyEM's uniform draw
inside the chosen region, public uniforms and permutations, and the
arithmetic that computes the statistics themselves.

Random source.  With ``random_state=None`` :func:`make_rng` returns a
:class:`~dpstats.privacy.secure_random.SecureGenerator`, whose every draw is
computed from ``os.urandom`` (the operating system's CSPRNG); seeds give
numpy's PCG64 for reproducible research and tests, and the report says so.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from dp_accounting import pld

from dpstats.errors import MethodOptionError, NoiseScaleRangeError, UnsupportedPrivacyParameterError
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import REFERENCE_EPSILON_CAP, PrivacyLedger, PrivacyStep, reference_delta
from dpstats.privacy.samplers import (
    GAUSSIAN_BITS, LAPLACE_BITS, _ceil_sqrt, _exact_add, _float_up, _grid_exponent, _to_float, discrete_gaussian,
    discrete_laplace, gaussian_closeness, gaussian_plan, laplace_closeness, laplace_plan, release_on_grid, to_grid,
)
from dpstats.privacy.secure_random import SecureGenerator

__all__ = [
    "make_rng",
    "laplace_mechanism",
    "gaussian_mechanism",
    "gaussian_mechanism_mu",
    "symmetric_gaussian_mechanism",
    "exponential_mechanism",
    "restricted_exponential_mechanism",
    "permutation",
    "public_uniform",
    "GaussianBlock",
    "gaussian_block",
    "FixedGaussianBlock",
    "fixed_gaussian_block",
]

#: What dp_accounting raises when a privacy-loss distribution cannot be built in double precision (exp
#: overflow above about 709, an infinite number of discretisation buckets, an array too large to allocate).
_PLD_NUMERIC_FAILURES = (OverflowError, FloatingPointError, ValueError, MemoryError)

#: A generous figure for the tail mass dp_accounting's PLD accountant truncates per Poisson-sampled Gaussian
#: step (measured 6e-18 at q = 0.02, z = 4); only used to word a refusal.
_PLD_TAIL_PER_STEP = 1e-16


def make_rng(random_state: "int | np.random.Generator | None") -> tuple[np.random.Generator, bool]:
    """Return ``(generator, seeded)``.

    ``None`` gives a :class:`~dpstats.privacy.secure_random.SecureGenerator`:
    every draw is computed from ``os.urandom``, the operating system's
    cryptographically secure generator (not a PRNG seeded from it).  An int
    or a Generator gives reproducible noise (numpy's PCG64), which the
    privacy report flags as seeded.  A SecureGenerator passed in is not
    seeded.
    """
    if random_state is None:
        return SecureGenerator(), False
    if isinstance(random_state, SecureGenerator):
        return random_state, False
    if isinstance(random_state, np.random.Generator):
        return random_state, True
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise MethodOptionError(f"random_state must be a non-negative integer seed, got {random_state}")
        return np.random.default_rng(int(random_state)), True
    raise MethodOptionError("random_state must be None, a non-negative int seed or a numpy.random.Generator")


def _check_sensitivity(sensitivity: float) -> float:
    s = float(sensitivity)
    if s == math.inf:  # public options, bounds or released values beyond double precision (never the data)
        raise NoiseScaleRangeError("the sensitivity of a release is infinite in double precision: the options or "
                                   "declared bounds that set it are far outside the data's scale")
    if not (math.isfinite(s) and s >= 0):
        raise ValueError(f"sensitivity must be finite and >= 0, got {sensitivity!r}")
    return s


def laplace_mechanism(
    value: "float | np.ndarray",
    *,
    l1_sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> "float | np.ndarray":
    """Laplace mechanism, hardened: value + discrete Laplace noise of scale about l1_sensitivity / epsilon.

    epsilon-DP for a statistic of L1 sensitivity ``l1_sensitivity`` (Dwork,
    McSherry, Nissim & Smith 2006).  Sampled as g * (round(value / g) + Y)
    with Y exactly discrete-Laplace (Canonne, Kamath & Steinke 2020) on the
    public grid g of :func:`~dpstats.privacy.samplers.laplace_plan`: the
    release is exactly (Delta' / (g t) <= epsilon)-DP, Delta' being the
    sensitivity plus the rounding allowance g per coordinate.  The ledger
    step records Delta' and the scale b = g t (b / (sensitivity / epsilon) - 1
    is below 2^-52 (1 + d / epsilon)) and is marked ``discrete``: it composes by its
    exact epsilon (basic composition, and the randomized-response pair in
    PLD composition).
    """
    sens = _check_sensitivity(l1_sensitivity)
    if not epsilon > 0:
        raise ValueError("epsilon must be > 0")
    arr = np.asarray(value, dtype=float)
    dim = max(arr.size, 1)
    if sens == 0 or math.isinf(epsilon):  # no noise is needed (or none is possible): nothing to sample
        ledger.charge(PrivacyStep(name, "laplace", sens, "L1", sens / epsilon, epsilon=float(epsilon), delta=0.0,
                                  dimension=dim))
        noisy = arr.copy()
    else:
        plan = laplace_plan(sens, float(epsilon), dim)
        ledger.charge(PrivacyStep(name, "laplace", plan.sensitivity, "L1", plan.noise_scale, epsilon=float(epsilon),
                                  delta=0.0, dimension=dim, note=plan.describe() + "; exactly epsilon-DP as sampled",
                                  discrete=True))
        noisy = release_on_grid(arr, plan, rng)
    return float(noisy) if np.ndim(value) == 0 else noisy


def gaussian_mechanism_mu(
    value: "float | np.ndarray",
    *,
    l2_sensitivity: float,
    mu: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> "float | np.ndarray":
    """Gaussian mechanism with a GDP parameter, hardened: value + discrete Gaussian noise of sd about l2_sensitivity/mu.

    mu-GDP for a statistic of L2 sensitivity ``l2_sensitivity`` (Dong, Roth &
    Su 2022, Thm 2.7).  Methods that release several Gaussian statistics split
    a mu budget with :func:`~dpstats.privacy.calibration.split_mu`; the ledger
    composes them exactly.

    Sampled as g * (round(value / g) + Y), Y exactly N_Z(0, s^2)
    (Canonne, Kamath & Steinke 2020), on the public grid g of
    :func:`~dpstats.privacy.samplers.gaussian_plan`, with
    s = ceil(Delta' / (mu g)) and Delta' = l2_sensitivity + g ceil(sqrt(d))
    (the rounding allowance).  The ledger step records Delta' and
    sigma = g s, so its mu' = Delta' / (g s) <= mu; the reference mechanism
    (continuous Gaussian on the rounded value, rounded to the grid) is exactly
    mu'-GDP, and the sampled one is (d lambda, d tau)-close to it
    (:func:`~dpstats.privacy.samplers.gaussian_closeness`, lambda < 1e-22),
    which the ledger accounts for.  The discrete Gaussian is also exactly
    (mu'^2 / 2)-zCDP (CKS20, Sec. 2).
    """
    sens = _check_sensitivity(l2_sensitivity)
    if not mu > 0:
        raise ValueError("mu must be > 0")
    arr = np.asarray(value, dtype=float)
    if sens == 0:
        raise ValueError("a Gaussian release with zero sensitivity needs no noise; do not charge it")
    dim = max(arr.size, 1)
    plan = gaussian_plan(sens, float(mu), dim)
    ledger.charge(PrivacyStep(name, "gaussian", plan.sensitivity, "L2", plan.noise_scale, dimension=dim,
                              note=plan.describe(), closeness_epsilon=dim * plan.closeness_epsilon,
                              closeness_delta=dim * plan.closeness_delta))
    noisy = release_on_grid(arr, plan, rng)
    return float(noisy) if np.ndim(value) == 0 else noisy


def gaussian_mechanism(
    value: "float | np.ndarray",
    *,
    l2_sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> "float | np.ndarray":
    """Gaussian mechanism calibrated exactly to (epsilon, delta).

    Uses the analytic Gaussian mechanism (Balle & Wang 2018), not the classic
    sqrt(2 ln(1.25/delta))/epsilon constant, which wastes budget and is invalid
    for epsilon > 1.
    """
    return gaussian_mechanism_mu(value, l2_sensitivity=l2_sensitivity, mu=gaussian_mu(epsilon, delta),
                                 rng=rng, ledger=ledger, name=name)


def symmetric_gaussian_mechanism(
    matrix: np.ndarray,
    *,
    l2_sensitivity: float,
    mu: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> np.ndarray:
    """Release a symmetric matrix: Gaussian noise on the upper triangle, mirrored.

    ``l2_sensitivity`` bounds the L2 norm of the change of the upper triangle
    (diagonal included); the Frobenius norm of the change of the whole matrix
    is a valid bound.
    """
    a = np.asarray(matrix, dtype=float)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("matrix must be square")
    iu = np.triu_indices(a.shape[0])
    upper = gaussian_mechanism_mu(a[iu], l2_sensitivity=l2_sensitivity, mu=mu, rng=rng,
                                  ledger=ledger, name=name)
    out = np.empty_like(a)
    out[iu] = upper
    out.T[iu] = upper
    return out


def exponential_mechanism(
    log_base_measure: np.ndarray,
    scores: np.ndarray,
    *,
    sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
    monotone: bool = False,
) -> int:
    """Exponential mechanism over a finite set of candidates (McSherry & Talwar 2007).

    Samples index i with probability proportional to
    exp(log_base_measure[i] + epsilon * scores[i] / (2 * sensitivity)), or with
    ``epsilon * scores[i] / sensitivity`` when the score is monotone (adding a
    record never lowers any score), which is epsilon-DP as well.  The base
    measure lets a candidate stand for a region of volume exp(log_base_measure)
    (as in the TukeyEM depth sampler).  Sampling uses the Gumbel-max trick in log
    space.  Candidates with log_base_measure = -inf are never chosen.
    """
    sens = _check_sensitivity(sensitivity)
    if not (epsilon > 0 and sens > 0):
        raise ValueError("exponential mechanism needs epsilon > 0 and sensitivity > 0")
    base = np.asarray(log_base_measure, dtype=float)
    s = np.asarray(scores, dtype=float)
    if base.shape != s.shape or base.ndim != 1 or base.size == 0:
        raise ValueError("log_base_measure and scores must be 1-d arrays of equal, non-zero length")
    if not np.all(np.isfinite(s)):
        # silently dropping NaN/inf candidates would make the candidate set depend on the data
        raise ValueError("exponential mechanism scores must all be finite")
    factor = epsilon / sens if monotone else epsilon / (2.0 * sens)
    logits = base + factor * s
    if not np.any(np.isfinite(logits)):
        raise ValueError("every candidate has zero base measure")
    ledger.charge(PrivacyStep(name, "exponential", sens, "score", math.nan, epsilon=float(epsilon),
                              delta=0.0, dimension=1,
                              note="monotone scores" if monotone else ""))
    gumbel = rng.gumbel(size=logits.shape)
    return int(np.argmax(np.where(np.isfinite(logits), logits + gumbel, -np.inf)))


def permutation(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation of range(n): public randomness, not charged."""
    return rng.permutation(n)


def public_uniform(low: float, high: float, size: "int | tuple[int, ...]",
                   rng: np.random.Generator) -> np.ndarray:
    """Uniform draws whose distribution does not depend on the data: not charged."""
    return rng.uniform(low, high, size=size)


class GaussianBlock:
    """A fixed number of Gaussian releases, charged to the ledger once, before any is drawn.

    Iterative methods (noisy gradient descent, a private estimate per round)
    release ``rounds`` statistics whose L2 sensitivities are only known at
    release time (they depend on earlier private outputs), but whose GDP
    parameter ``mu_round`` is fixed in advance.  Release ``k`` adds
    N(0, (Delta_k / mu_round)^2 I) to a statistic of sensitivity Delta_k, so it
    is mu_round-GDP whatever Delta_k is (Dong, Roth & Su 2022, Thm 2.7).

    * ``disjoint=False``: the releases may all touch the same rows and are
      composed adaptively: the block is sqrt(rounds) * mu_round-GDP
      (Dong, Roth & Su, Cor. 3.3), recorded as one Gaussian step with
      ``count=rounds``.
    * ``disjoint=True``: the caller computes each release on a set of rows
      disjoint from every other release of the block (one mini-batch per
      round), so a replaced row enters at most one release and the block is
      mu_round-GDP by parallel composition (which holds for adaptively chosen
      mechanisms); recorded as one step with ``count=1``.

    The step is recorded with a normalised sensitivity of 1 and noise scale
    1/mu_round (the noise multiplier), which is exactly its privacy.  Because
    it is charged up front, the ledger refuses an over-budget block before any
    noise is drawn, and composition costs O(1) per block instead of O(T) per
    round.  More than ``rounds`` releases are refused.

    Hardened like :func:`gaussian_mechanism_mu`: each release is a discrete
    Gaussian on its own public grid (chosen from Delta_k / mu_round), with
    GDP parameter at most mu_round for the rounded statistic.  The step's
    closeness allowance is charged for ``rounds`` releases of up to
    max(dimension, 2^16) coordinates each; a larger release is refused.
    """

    #: every release may have this many coordinates at least (the closeness allowance is charged for it)
    MIN_COORDINATES = 1 << 16

    def __init__(self, *, rounds: int, mu_round: float, ledger: PrivacyLedger, name: str,
                 disjoint: bool = False, dimension: int = 1, note: str = "") -> None:
        if int(rounds) != rounds or rounds < 1:
            raise ValueError("rounds must be a positive integer")
        if not (mu_round > 0 and math.isfinite(mu_round)):
            raise ValueError("mu_round must be finite and > 0")
        self.rounds = int(rounds)
        self.mu_round = float(mu_round)
        self.disjoint = bool(disjoint)
        self.used = 0
        self.max_coordinates = max(int(dimension), self.MIN_COORDINATES)
        how = ("releases on pairwise disjoint row sets (parallel composition)" if disjoint
               else "adaptively composed releases")
        lam, tau = gaussian_closeness(1 << GAUSSIAN_BITS)  # every release has s >= 2^40: its closeness is smaller
        coords = self.rounds * self.max_coordinates
        ledger.charge(PrivacyStep(name, "gaussian", 1.0, "normalised (each release: noise sd = its L2 sensitivity "
                                  "/ mu_round)", 1.0 / self.mu_round, count=1 if disjoint else self.rounds,
                                  dimension=int(dimension),
                                  note=f"{self.rounds} {how}, mu_round={self.mu_round:.4g}; each release a discrete "
                                       f"Gaussian on its own public grid (s >= 2^{GAUSSIAN_BITS} grid steps, exact "
                                       "sampler, Canonne, Kamath & Steinke 2020)" + (f"; {note}" if note else ""),
                                  closeness_epsilon=coords * lam, closeness_delta=coords * tau))

    def release(self, value: "float | np.ndarray", *, l2_sensitivity: float,
                rng: np.random.Generator) -> "float | np.ndarray":
        """value + discrete Gaussian noise of sd about l2_sensitivity / mu_round; refused after ``rounds`` releases."""
        if self.used >= self.rounds:
            raise RuntimeError("this Gaussian block has already made all the releases it was charged for")
        sens = _check_sensitivity(l2_sensitivity)
        if sens == 0:
            raise ValueError("a Gaussian release needs a positive sensitivity")
        arr = np.asarray(value, dtype=float)
        if arr.size > self.max_coordinates:
            raise ValueError(f"this Gaussian block was charged for releases of at most {self.max_coordinates} "
                             f"coordinates, got {arr.size}")
        self.used += 1
        noisy = release_on_grid(arr, gaussian_plan(sens, self.mu_round, max(arr.size, 1)), rng)
        return float(noisy) if np.ndim(value) == 0 else noisy


def gaussian_block(*, rounds: int, mu_round: float, ledger: PrivacyLedger, name: str, disjoint: bool = False,
                   dimension: int = 1, note: str = "") -> GaussianBlock:
    """Charge ``rounds`` Gaussian releases of GDP parameter ``mu_round`` now; see :class:`GaussianBlock`."""
    return GaussianBlock(rounds=rounds, mu_round=mu_round, ledger=ledger, name=name, disjoint=disjoint,
                         dimension=dimension, note=note)



class FixedGaussianBlock(GaussianBlock):
    """A :class:`GaussianBlock` whose releases all have one public L2 sensitivity and one length, fixed when it
    is charged: noisy gradient descent with a clip set before the run (``pgd``).

    Privacy is that of :class:`GaussianBlock` (``rounds`` adaptively composed releases at ``mu_round``), and
    each release is the same hardened mechanism: g * (round(value / g) + Z), Z exactly discrete Gaussian with
    the parameter of :func:`~dpstats.privacy.samplers.gaussian_plan` for (``l2_sensitivity``, ``mu_round``,
    ``dimension``).  Because the grid and the law of Z are public and the same for every release, the integer
    noise is drawn in vectorised batches of ``BATCH`` releases ahead of use (Z is independent of the data, so
    when it is drawn does not change the law of any release); a release then costs one rounding and one exact
    integer addition instead of a call of the sampler.
    """

    #: releases whose noise is drawn at once
    BATCH = 256

    def __init__(self, *, rounds: int, mu_round: float, ledger: PrivacyLedger, name: str, l2_sensitivity: float,
                 dimension: int, note: str = "") -> None:
        sens = _check_sensitivity(l2_sensitivity)
        if sens == 0:
            raise ValueError("a Gaussian release needs a positive sensitivity")
        if int(dimension) != dimension or dimension < 1:
            raise ValueError("dimension must be a positive integer")
        super().__init__(rounds=rounds, mu_round=mu_round, ledger=ledger, name=name, dimension=int(dimension),
                         note=note)
        self.l2_sensitivity = sens
        self.dimension = int(dimension)
        self.plan = gaussian_plan(sens, self.mu_round, self.dimension)
        self._noise = np.zeros((0, self.dimension), dtype=np.int64)
        self._drawn = 0

    def _next_noise(self, rng: np.random.Generator) -> np.ndarray:
        """The integer noise of the next release, from the current batch (a new batch when it is used up)."""
        if self._noise.shape[0] == 0:
            m = min(self.BATCH, self.rounds - self._drawn)
            self._noise = discrete_gaussian(self.plan.param, (m, self.dimension), rng)
            self._drawn += m
        z, self._noise = self._noise[0], self._noise[1:]
        return z

    def release(self, value: "float | np.ndarray", *, l2_sensitivity: float | None = None,
                rng: np.random.Generator) -> "float | np.ndarray":
        """value + discrete Gaussian noise of sd about l2_sensitivity / mu_round (the block's sensitivity; a
        different one is refused); refused after ``rounds`` releases."""
        if self.used >= self.rounds:
            raise RuntimeError("this Gaussian block has already made all the releases it was charged for")
        if l2_sensitivity is not None and float(l2_sensitivity) != self.l2_sensitivity:
            raise ValueError("this Gaussian block was charged for one fixed sensitivity")
        arr = np.asarray(value, dtype=float)
        if arr.size != self.dimension:
            raise ValueError(f"this Gaussian block releases vectors of length {self.dimension}, got {arr.size}")
        self.used += 1
        k, finite = to_grid(arr.ravel(), self.plan.grid_exponent)
        out = _to_float(_exact_add(k, self._next_noise(rng)), self.plan.grid_exponent).reshape(arr.shape)
        if not finite.all():  # as release_on_grid: a non-finite input passes through (no noise can hide it)
            out = np.where(finite.reshape(arr.shape), out, arr)
        return float(out) if np.ndim(value) == 0 else out


def fixed_gaussian_block(*, rounds: int, mu_round: float, ledger: PrivacyLedger, name: str, l2_sensitivity: float,
                         dimension: int, note: str = "") -> FixedGaussianBlock:
    """Charge ``rounds`` Gaussian releases of one sensitivity and length now; see :class:`FixedGaussianBlock`."""
    return FixedGaussianBlock(rounds=rounds, mu_round=mu_round, ledger=ledger, name=name,
                              l2_sensitivity=l2_sensitivity, dimension=dimension, note=note)


# --- Peeling (Dwork, Su & Zhang 2021; Cai, Wang & Zhang 2021, Algorithm 4) ----------------------------------


@lru_cache(maxsize=256)
def peeling_noise_multiplier(sparsity: int, epsilon: float, delta: float) -> tuple[float, float]:
    """Laplace noise multiplier b/lambda of an (epsilon, delta)-DP Peeling, and the delta it actually uses.

    Peeling (see :class:`PeelingBlock`) is the adaptive composition of

    * ``s`` report-noisy-max selections with Lap(b) noise on scores |v_j| of
      l_inf-sensitivity lambda.  Each is pure (2 lambda / b)-DP: fixing the
      noise of every other coordinate, coordinate j wins iff its own noise
      exceeds a threshold that moves by at most 2 lambda between neighbours
      (lambda from |v_j|, lambda from the best competitor), and the Laplace
      density ratio over a shift 2 lambda is at most exp(2 lambda / b).  The
      scores need not be monotone (Dwork, Su & Zhang, Lemma 3.1 uses the same
      2 lambda / b);
    * the release of the ``s`` selected values plus fresh Lap(b) noise: every
      coordinate moves by at most lambda, so this is exactly the s-fold
      composition of a one-dimensional Laplace mechanism with noise
      multiplier b / lambda (a per-coordinate dominating pair).

    Each pure epsilon'-DP selection is dominated by randomized response with
    parameter epsilon' (Kairouz, Oh & Viswanath 2015), so the privacy loss
    distribution (PLD) of the whole run is dominated by RR(2 lambda/b)^s
    composed with Laplace(b/lambda)^s; ``dp_accounting`` composes these PLDs
    with pessimistic discretisation (an upper bound).  The multiplier returned
    is the smallest (to 1e-4 relative) at which that bound gives epsilon at
    ``delta``.  Basic composition gives the pure bound 3 s lambda / b; when it
    is at least as good, the multiplier 3 s / epsilon is returned with delta
    0: Peeling is then (epsilon, 0)-DP.

    The paper's constant b = lambda * 2 sqrt(3 s log(1/delta)) / epsilon
    (Dwork, Su & Zhang; Cai, Wang & Zhang, Algorithm 4) rests on advanced
    composition; the PLD bound is valid for every epsilon and needs less
    noise (about half for s = 5, epsilon = 1, delta = 1e-6).

    Returns
    -------
    (multiplier, delta_used):
        b = multiplier * lambda; delta_used is 0.0 when the pure bound is used.
    """
    s = int(sparsity)
    if s < 1:
        raise ValueError("sparsity must be >= 1")
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError("Peeling needs a finite epsilon > 0 and 0 < delta < 1")
    pure = 3.0 * s / epsilon

    def pld_epsilon(multiplier: float) -> float:
        try:
            select = pld.privacy_loss_distribution.from_privacy_parameters(
                pld.common.DifferentialPrivacyParameters(2.0 / multiplier, 0.0)).self_compose(s)
            values = pld.privacy_loss_distribution.from_laplace_mechanism(
                parameter=multiplier, sensitivity=1.0).self_compose(s)
            return float(select.compose(values).get_epsilon_for_delta(delta))
        except _PLD_NUMERIC_FAILURES:
            return math.inf  # no PLD bound at this multiplier (exp(2/multiplier) overflows): the pure bound stands

    lo, hi = pure / 8.0, pure
    if pld_epsilon(hi * (1.0 - 1e-3)) > epsilon:
        return pure, 0.0
    while pld_epsilon(lo) <= epsilon:
        lo /= 2.0
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        if pld_epsilon(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return hi, float(delta)


class PeelingBlock:
    """Private top-s selection and release (Peeling), charged to the ledger once for ``parts`` calls.

    Peeling(v, s, lambda, epsilon, delta) (Dwork, Su & Zhang 2021, Alg. 1;
    Cai, Wang & Zhang 2021, Algorithm 4, line 6) for a vector v whose
    l_inf-sensitivity is ``linf_sensitivity`` = lambda:

    1. S = {}.  Repeat s times: draw w ~ Lap(b)^d afresh and add
       argmax_{j not in S} (|v_j| + w_j) to S;
    2. draw fresh Lap(b) noise and release u_j = v_j + noise_j for j in S,
       u_j = 0 otherwise.

    The noise scale b = lambda * :func:`peeling_noise_multiplier` makes one
    call (epsilon, delta_used)-DP (proof there).

    Parallel composition: when the ``parts`` calls are computed from pairwise
    disjoint sets of rows (the data split of DP-LASSO, Algorithm 4, line 2)
    and a replaced row therefore enters at most one call, the whole block is
    (epsilon, delta_used)-DP, even though each call's input may depend on the
    outputs of the earlier calls (parallel composition holds for adaptively
    chosen mechanisms: conditionally on the earlier outputs, the calls on
    unchanged parts have identical output distributions on both neighbours).
    The block is recorded as ONE approximate-DP step with the per-part
    (epsilon, delta_used), charged before any noise is drawn; more than
    ``parts`` calls are refused.  With ``parts=1`` it is a single Peeling.

    Hardened: the scores |v_j| and the values v_j are rounded to the public
    grid g = 2^e (b / g in [2^52, 2^53)) and the Laplace noise is exact
    discrete Laplace with parameter t = ceil((lambda + g) * multiplier / g)
    (integer arithmetic throughout, ties broken by the lowest index).  The
    rounded scores and values have l_inf sensitivity lambda' = lambda + g, so
    the scale b' = g t satisfies b' / lambda' >= multiplier.  Each selection
    is then exactly pure (2 lambda' / b')-DP: with every other coordinate's
    noise fixed, coordinate j wins iff its integer noise is at least an
    integer threshold that moves by at most 2 lambda' / g, and the discrete
    Laplace satisfies P(Y >= k) <= e^(m/t) P(Y >= k + m) for all integers k and
    m >= 0 (its mass function does, pointwise).  The released values are a
    discrete Laplace mechanism: exactly pure, and (lambda_L, 0)-close per
    coordinate to the rounded continuous Laplace
    (:func:`~dpstats.privacy.samplers.laplace_closeness`, about 2^-54) that
    the PLD bound of :func:`peeling_noise_multiplier` describes.  When that
    bound is used (delta > 0), the multiplier is calibrated for the reference
    at (epsilon - 2 Lambda, delta_R) (:func:`~dpstats.privacy.ledger.reference_delta`,
    Lambda = parts * sparsity * lambda_L), so the sampled block is
    (epsilon, delta)-DP as recorded.  In the pure case the discrete block is
    exactly pure by basic composition.
    """

    def __init__(self, *, parts: int, sparsity: int, linf_sensitivity: float, epsilon: float, delta: float,
                 ledger: PrivacyLedger, name: str, dimension: int) -> None:
        if int(parts) != parts or parts < 1:
            raise ValueError("parts must be a positive integer")
        if int(sparsity) != sparsity or not 1 <= sparsity <= dimension:
            raise ValueError(f"sparsity must be an integer in [1, d={dimension}], got {sparsity!r}")
        lam = _check_sensitivity(linf_sensitivity)
        if lam == 0:
            raise ValueError("Peeling needs a positive l_inf sensitivity")
        multiplier, delta_used = peeling_noise_multiplier(int(sparsity), float(epsilon), float(delta))
        if delta_used:
            # the (epsilon, delta) bound is for the reference values (rounded continuous Laplace): calibrate the
            # reference at (epsilon - 2 Lambda, delta_R) so that the sampled values are (epsilon, delta)-DP
            lam_total = int(parts) * int(sparsity) * laplace_closeness(1 << LAPLACE_BITS)  # t >= 2^52
            multiplier, delta_used = peeling_noise_multiplier(int(sparsity), float(epsilon) - 2.0 * lam_total,
                                                              reference_delta(float(delta), lam_total, 0.0))
            delta_used = float(delta) if delta_used else 0.0
        self.parts = int(parts)
        self.sparsity = int(sparsity)
        self.dimension = int(dimension)
        self.grid_exponent = _grid_exponent(lam * multiplier, LAPLACE_BITS)
        g = Fraction(2) ** self.grid_exponent
        lam_rounded = Fraction(lam) + g
        self.t = math.ceil(lam_rounded * Fraction(multiplier) / g)
        self.scale = math.ldexp(float(self.t), self.grid_exponent)
        self.used = 0
        how = (f"parallel composition over {self.parts} disjoint parts" if self.parts > 1 else "one call")
        ledger.charge(PrivacyStep(
            name, "approximate-dp", _float_up(lam_rounded), "L-inf", self.scale, epsilon=float(epsilon),
            delta=delta_used, dimension=self.sparsity,
            note=(f"Peeling: {self.sparsity} report-noisy-max selections + {self.sparsity} Laplace values, "
                  f"Lap scale {self.scale:.4g}; "
                  + ("composed by PLD" if delta_used else "pure epsilon-DP by basic composition") + f"; {how}; "
                  f"discrete Laplace on the grid 2^{self.grid_exponent} (t={self.t} grid steps; exact integer "
                  "sampler, Canonne, Kamath & Steinke 2020); sensitivity includes the grid rounding")))

    def release(self, v: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
        """One Peeling call on ``v`` (length d); returns a vector with ``sparsity`` non-zero coordinates."""
        if self.used >= self.parts:
            raise RuntimeError("this Peeling block has already made all the calls it was charged for")
        vec = np.asarray(v, dtype=float)
        if vec.shape != (self.dimension,) or not np.all(np.isfinite(vec)):
            raise ValueError(f"Peeling needs a finite vector of length {self.dimension}")
        self.used += 1
        e = self.grid_exponent
        score, _ = to_grid(np.abs(vec), e)  # exact integers
        chosen = np.empty(self.sparsity, dtype=int)
        taken = np.zeros(self.dimension, dtype=bool)
        for k in range(self.sparsity):
            noisy = _exact_add(score, discrete_laplace(self.t, self.dimension, rng))
            if noisy.dtype != object:  # |noisy| < 2^63 - 1: the int64 minimum is below every candidate
                noisy[taken] = np.iinfo(np.int64).min
                best = int(np.argmax(noisy))  # the first maximum: ties go to the lowest index
            else:
                best = max((i for i in range(self.dimension) if not taken[i]), key=lambda i: (noisy[i], -i))
            chosen[k] = best
            taken[best] = True
        values, _ = to_grid(vec[chosen], e)
        out = np.zeros(self.dimension)
        out[chosen] = _to_float(_exact_add(values, discrete_laplace(self.t, self.sparsity, rng)), e)
        return out


def peeling_block(*, parts: int, sparsity: int, linf_sensitivity: float, epsilon: float, delta: float,
                  ledger: PrivacyLedger, name: str, dimension: int) -> PeelingBlock:
    """Charge ``parts`` Peeling calls on disjoint data now; see :class:`PeelingBlock`."""
    return PeelingBlock(parts=parts, sparsity=sparsity, linf_sensitivity=linf_sensitivity, epsilon=epsilon,
                        delta=delta, ledger=ledger, name=name, dimension=dimension)


def peeling(v: np.ndarray, *, sparsity: int, linf_sensitivity: float, epsilon: float, delta: float,
            rng: np.random.Generator, ledger: PrivacyLedger, name: str = "Peeling") -> np.ndarray:
    """Peeling (Dwork, Su & Zhang 2021; Cai, Wang & Zhang 2021, Algorithm 4): private top-s of ``v``.

    (epsilon, delta)-DP for a vector of l_inf-sensitivity ``linf_sensitivity``
    (see :func:`peeling_noise_multiplier` for the proof); charges the ledger
    once, then draws.  Returns the s-sparse noisy vector.
    """
    vec = np.asarray(v, dtype=float)
    block = peeling_block(parts=1, sparsity=sparsity, linf_sensitivity=linf_sensitivity, epsilon=epsilon,
                          delta=delta, ledger=ledger, name=name, dimension=vec.size)
    return block.release(vec, rng=rng)


__all__ += ["peeling_noise_multiplier", "PeelingBlock", "peeling_block", "peeling"]


__all__ += ["post_processing_normal"]


def post_processing_normal(size: "int | tuple[int, ...]", rng: np.random.Generator) -> np.ndarray:
    """Standard normal draws for simulations from released quantities (parametric bootstrap).

    Post-processing: the draws are independent of the data and are combined
    only with values already released through the ledger, so they are not
    charged.
    """
    return rng.standard_normal(size=size)


def restricted_exponential_mechanism(
    log_base_measure: np.ndarray,
    scores: np.ndarray,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
    note: str = "",
) -> int:
    """Exponential mechanism on a data-dependent candidate set admitted by a propose-test-release check.

    Samples index i with probability proportional to
    exp(log_base_measure[i] + epsilon * scores[i] / (2 * sensitivity)), the
    standard factor.  The candidates are restricted to a set that depends on
    the data (Brown et al. 2021, restricted exponential mechanism), so the
    draw is (epsilon, delta)-indistinguishable only on data sets that a
    preceding PTR test has certified as safe, and the test passes an unsafe
    data set with probability at most delta.  The step is therefore charged
    (epsilon, delta); together with the test's own epsilon the pair is
    (epsilon_test + epsilon, delta)-DP (Amin et al. 2023, Thm 1.1 and
    Lemma 3.7), which basic composition in the ledger reproduces exactly.

    There is no ``monotone`` option: the factor epsilon / sensitivity is valid
    for monotone scores under add/remove neighbours only.  Under replace-one
    (a removal followed by an addition) a score can rise by one on some
    outputs and fall by one on others, and the un-halved factor costs up to
    2 epsilon.
    """
    sens = _check_sensitivity(sensitivity)
    if not (epsilon > 0 and sens > 0 and 0 <= delta < 1):
        raise ValueError("restricted exponential mechanism needs epsilon > 0, sensitivity > 0, 0 <= delta < 1")
    base = np.asarray(log_base_measure, dtype=float)
    s = np.asarray(scores, dtype=float)
    if base.shape != s.shape or base.ndim != 1 or base.size == 0:
        raise ValueError("log_base_measure and scores must be 1-d arrays of equal, non-zero length")
    logits = base + epsilon / (2.0 * sens) * s
    if not np.any(np.isfinite(logits)):
        raise ValueError("every candidate has zero base measure")
    ledger.charge(PrivacyStep(name, "exponential", sens, "score", math.nan, epsilon=float(epsilon),
                              delta=float(delta), dimension=1, note=note))
    gumbel = rng.gumbel(size=logits.shape)
    return int(np.argmax(np.where(np.isfinite(logits), logits + gumbel, -np.inf)))


# --- Poisson subsampling and the Poisson-sampled Gaussian of DP-SGD (Abadi et al. 2016) -----------------------

__all__ += ["poisson_subsample", "poisson_gaussian_epsilon", "PoissonGaussianBlock", "poisson_gaussian_block",
            "ClippedGridSum", "add_grid_sums"]

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

    (pessimistic discretisation, so an upper bound).

    Why (P, Q) dominates every replace-one pair.  Let D, D' differ in row i,
    whose clipped vectors are g, g' (norms <= C; units of C below, noise sd z).
    The other rows are identical and sampled by the same independent coins,
    so, writing S for their noise-free sum, M(D) = E_S[A_S] and
    M(D') = E_S[B_S] with A_S = (1 - q) N(S) + q N(S + g),
    B_S = (1 - q) N(S) + q N(S + g').  The hockey-stick divergence
    H_a(U||V) = sup_E [U(E) - a V(E)] is jointly convex and shift invariant,
    so H_a(M(D)||M(D')) <= H_a(A_0||B_0).  For any event E let
    p0 = N(0)(E), p1 = N(g')(E).  Neyman-Pearson for Gaussian shifts (Dong,
    Roth & Su 2022, Gaussian trade-off G_mu) gives
    N(g)(E) <= Phi(Phi^-1(p0) + |g|/z) <= Phi(Phi^-1(p0) + 1/z),
    N(g)(E) <= Phi(Phi^-1(p1) + |g - g'|/z) <= Phi(Phi^-1(p1) + 2/z) and
    p1 >= Phi(Phi^-1(p0) - 1/z).  Hence, with t = z Phi^-1(p0),
    A_0(E) - a B_0(E) = (1 - q)(1 - a) p0 + q N(g)(E) - a q p1 is at most its
    value at the smallest allowed p1, where both bounds on N(g)(E) coincide:

        A_0(E) - a B_0(E) <= (1 - q)(1 - a) Phi(t/z) + q Phi((t + 1)/z) - a q Phi((t - 1)/z)
                           = P(x <= t) - a Q(x <= t) <= H_a(P||Q).

    So (P, Q) is a dominating pair for every ordered pair of neighbours and
    every a >= 0 (Zhu, Dong & Wang 2022, Def. 7), whatever the current
    iterate, and the adaptive T-fold composition is dominated by
    (P^T, Q^T) (ibid., Thm 10): the epsilon returned is valid for DP-SGD under
    replace-one (x -> -x swaps P and Q, so one direction covers both).
    Normalising by the expected batch size, and any optimiser update, are
    post-processing.  (Doubling the sensitivity to 2C in the add/remove
    analysis is not an equivalent shortcut: its profile bounds a single step,
    but its "add" half is not a dominating pair for the composition, and it
    needs several times more noise at small z.)
    """
    import dp_accounting  # noqa: PLC0415  (kept local: only DP-SGD needs the event classes)

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


class PoissonGaussianBlock:
    """DP-SGD's ``rounds`` Poisson-sampled Gaussian sums, charged to the ledger once, before any is drawn.

    Round t: :meth:`sample` draws the secret Poisson sample (rate q) of the
    rows; :meth:`release_clipped_sum` clips each of the caller's per-row
    vectors for that sample to L2 norm ``clip_norm`` = C (the mechanism
    enforces its own sensitivity), sums them and adds N(0, (z C)^2 I),
    z = ``noise_multiplier``.  The whole run is recorded as ONE
    ``approximate-dp`` step whose (epsilon, delta) is
    :func:`poisson_gaussian_epsilon` at the ledger's delta: dp_accounting's
    PLD value for the composed ``PoissonSampledDpEvent`` under replace-one
    (proof there).  The subsampling is part of the accounted mechanism.  More
    than ``rounds`` samples or releases are refused.

    Hardened: each clipped row is rounded to the public grid g = 2^e
    (z C / g in [2^40, 2^41)), the integer rows are summed exactly, and an
    exact discrete Gaussian N_Z(0, s^2) is added, s = ceil(z C' / g).  A
    rounded row has norm at most C' = C (1 + 2^-30) + g ceil(sqrt(d)) / 2 (the
    factor covers the floating-point error of the clipping for d < 2^20), so
    the reference mechanism (the continuous Gaussian of sd g s >= z C' on the
    sum of rounded rows, rounded to the grid) is the Poisson-sampled Gaussian
    with rows of norm <= C' and noise multiplier >= z, which the charged
    epsilon covers; the sampled one is (d lambda, d tau)-close to it per round
    (:func:`~dpstats.privacy.samplers.gaussian_closeness`), so the epsilon
    recorded is the reference's at delta_R = reference_delta(delta, Lambda, T)
    plus 2 Lambda (Lambda, T: the closeness of all T rounds), which makes the
    sampled run (epsilon, delta)-DP as recorded.
    """

    def __init__(self, *, noise_multiplier: float, sampling_rate: float, rounds: int, clip_norm: float, n: int,
                 ledger: PrivacyLedger, name: str, dimension: int) -> None:
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
        sd = math.ldexp(float(self.s), self.grid_exponent)
        lam, tau = gaussian_closeness(self.s)
        lam_total, tau_total = self.rounds * self.dimension * lam, self.rounds * self.dimension * tau
        # the reference run (continuous noise, rounded) at delta_R; the sampled run then at (eps_R + 2 Lambda, delta)
        delta_r = reference_delta(float(ledger.delta), lam_total, tau_total)
        # delta_r <= 0 (a ledger delta below the closeness slack): no finite bound, and the charge is refused
        eps = (poisson_gaussian_epsilon(self.noise_multiplier, self.sampling_rate, self.rounds, delta_r)
               if delta_r > 0 else math.inf)
        eps = eps + 2.0 * lam_total if eps <= REFERENCE_EPSILON_CAP else math.inf
        ledger.charge(PrivacyStep(
            name, "approximate-dp", _float_up(rounded_clip), "L2, per-row clip C (after grid rounding)", sd,
            epsilon=eps, delta=float(ledger.delta), dimension=self.dimension,
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
    def summer(self) -> "ClippedGridSum":
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
    return np.array([(int(a) << 31) + int(b) for a, b in zip(hs, ls)], dtype=object)


def poisson_gaussian_block(*, noise_multiplier: float, sampling_rate: float, rounds: int, clip_norm: float, n: int,
                           ledger: PrivacyLedger, name: str, dimension: int) -> PoissonGaussianBlock:
    """Charge a DP-SGD run of ``rounds`` Poisson-sampled Gaussian sums now; see :class:`PoissonGaussianBlock`."""
    return PoissonGaussianBlock(noise_multiplier=noise_multiplier, sampling_rate=sampling_rate, rounds=rounds,
                                clip_norm=clip_norm, n=n, ledger=ledger, name=name, dimension=dimension)
