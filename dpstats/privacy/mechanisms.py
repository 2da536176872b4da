"""The only place where dpstats draws random noise.

Each mechanism takes the exact value to protect, its sensitivity, the privacy
parameter, an explicit :class:`numpy.random.Generator` and the fit's
:class:`~dpstats.privacy.ledger.PrivacyLedger`.  It charges the ledger first
(which refuses a release beyond the budget) and only then draws the noise.
Mechanisms are small and composable, in the manner of OpenDP: a method is a
sequence of mechanism calls plus post-processing.

TukeyEM's restricted exponential mechanism, used by that method only, lives
beside it (:mod:`dpstats.methods.tukey.em`) and charges the ledger the same way.

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

import numpy as np

from dpstats.deprecation import MovedUp
from dpstats.errors import InvalidPrivacyParameterError, MethodOptionError, NoiseScaleRangeError
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.samplers import (
    GAUSSIAN_BITS,
    _exact_add,
    _to_float,
    discrete_gaussian,
    gaussian_closeness,
    gaussian_plan,
    laplace_plan,
    release_on_grid,
    to_grid,
)
from dpstats.privacy.secure_random import SecureGenerator

__all__ = [
    "make_rng",
    "laplace_mechanism",
    "gaussian_mechanism",
    "gaussian_mechanism_mu",
    "symmetric_gaussian_mechanism",
    "exponential_mechanism",
    "permutation",
    "public_uniform",
    "keyed_public_generator",
    "spawn_generators",
    "GaussianBlock",
    "gaussian_block",
    "FixedGaussianBlock",
    "fixed_gaussian_block",
]

#: What dp_accounting raises when a privacy-loss distribution cannot be built in double precision (exp
#: overflow above about 709, an infinite number of discretisation buckets, an array too large to allocate).
_PLD_NUMERIC_FAILURES = (OverflowError, FloatingPointError, ValueError, MemoryError)


def make_rng(random_state: int | np.random.Generator | np.random.SeedSequence | None
             ) -> tuple[np.random.Generator, bool]:
    """Return ``(generator, seeded)``.

    ``None`` gives a :class:`~dpstats.privacy.secure_random.SecureGenerator`:
    every draw is computed from ``os.urandom``, the operating system's
    cryptographically secure generator (not a PRNG seeded from it).  An int,
    a Generator or a SeedSequence gives reproducible noise (numpy's PCG64),
    which the privacy report flags as seeded.  A SecureGenerator passed in is
    not seeded.
    """
    if random_state is None:
        return SecureGenerator(), False
    if isinstance(random_state, SecureGenerator):
        return random_state, False
    if isinstance(random_state, np.random.Generator):
        return random_state, True
    if isinstance(random_state, np.random.SeedSequence):  # the same stream every time it is given
        return np.random.default_rng(random_state), True
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        if random_state < 0:
            raise MethodOptionError(f"random_state must be a non-negative integer seed, got {random_state}")
        return np.random.default_rng(int(random_state)), True
    raise MethodOptionError("random_state must be None, a non-negative int seed, a numpy.random.Generator or a "
                            f"numpy.random.SeedSequence, got {type(random_state).__name__}")


def _check_sensitivity(sensitivity: float) -> float:
    s = float(sensitivity)
    if s == math.inf:  # public options, bounds or released values beyond double precision (never the data)
        raise NoiseScaleRangeError("the sensitivity of a release is infinite in double precision: the options or "
                                   "declared bounds that set it are far outside the data's scale")
    if not (math.isfinite(s) and s >= 0):  # a negative or NaN scale: no noise distribution has it
        raise NoiseScaleRangeError(f"sensitivity must be finite and >= 0, got {s:.4g}")
    return s


def laplace_mechanism(
    value: float | np.ndarray,
    *,
    l1_sensitivity: float,
    epsilon: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> float | np.ndarray:
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
        raise InvalidPrivacyParameterError(f"epsilon must be > 0, got {epsilon:.4g}")
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
    value: float | np.ndarray,
    *,
    l2_sensitivity: float,
    mu: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> float | np.ndarray:
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
        raise InvalidPrivacyParameterError(f"mu must be > 0, got {mu:.4g}")
    arr = np.asarray(value, dtype=float)
    if sens == 0:
        raise NoiseScaleRangeError("a Gaussian release with zero sensitivity needs no noise; do not charge it")
    dim = max(arr.size, 1)
    plan = gaussian_plan(sens, float(mu), dim)
    ledger.charge(PrivacyStep(name, "gaussian", plan.sensitivity, "L2", plan.noise_scale, dimension=dim,
                              note=plan.describe(), closeness_epsilon=dim * plan.closeness_epsilon,
                              closeness_delta=dim * plan.closeness_delta))
    noisy = release_on_grid(arr, plan, rng)
    return float(noisy) if np.ndim(value) == 0 else noisy


def gaussian_mechanism(
    value: float | np.ndarray,
    *,
    l2_sensitivity: float,
    epsilon: float,
    delta: float,
    rng: np.random.Generator,
    ledger: PrivacyLedger,
    name: str,
) -> float | np.ndarray:
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
    delta: float = 0.0,
    note: str = "",
) -> int:
    """Exponential mechanism over a finite set of candidates (McSherry & Talwar 2007).

    Samples index i with probability proportional to
    exp(log_base_measure[i] + epsilon * scores[i] / (2 * sensitivity)), or with
    ``epsilon * scores[i] / sensitivity`` when the score is monotone (adding a
    record never lowers any score), which is epsilon-DP as well.  The base
    measure lets a candidate stand for a region of volume exp(log_base_measure)
    (as in the TukeyEM depth sampler).  Sampling uses the Gumbel-max trick in log
    space.  Candidates with log_base_measure = -inf are never chosen.  The step
    is charged (epsilon, ``delta``): ``delta`` > 0 for a candidate set that a
    propose-test-release check admitted (TukeyEM's restricted mechanism,
    :func:`dpstats.methods.tukey.em.restricted_exponential_mechanism`), 0
    otherwise.
    """
    sens = _check_sensitivity(sensitivity)
    if not (epsilon > 0 and 0 <= delta < 1):
        raise InvalidPrivacyParameterError(f"exponential mechanism needs epsilon > 0 and 0 <= delta < 1, got "
                                           f"epsilon={epsilon:.4g}, delta={delta:.4g}")
    if not sens > 0:
        raise NoiseScaleRangeError("exponential mechanism needs sensitivity > 0, got 0")
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
                              delta=float(delta), dimension=1,
                              note=note or ("monotone scores" if monotone else "")))
    gumbel = rng.gumbel(size=logits.shape)
    return int(np.argmax(np.where(np.isfinite(logits), logits + gumbel, -np.inf)))


def permutation(n: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random permutation of range(n): public randomness, not charged."""
    return rng.permutation(n)


def public_uniform(low: float, high: float, size: int | tuple[int, ...],
                   rng: np.random.Generator) -> np.ndarray:
    """Uniform draws whose distribution does not depend on the data: not charged."""
    return rng.uniform(low, high, size=size)


def keyed_public_generator(key: tuple[int, ...], index: int) -> np.random.Generator:
    """A generator of public randomness (not charged; nothing drawn from it may depend on the data) rebuilt from a
    public ``key`` (integers drawn from the fit's generator, e.g. with :func:`public_uniform`) and an ``index``:
    any worker that holds the key draws the same values for the same index (private Theil-Sen's pairings of the
    rows of one window)."""
    return np.random.default_rng([*(int(k) for k in key), int(index)])


def spawn_generators(random_state: int | np.random.Generator | np.random.SeedSequence | None,
                     count: int) -> list[np.random.Generator]:
    """``count`` independent random sources for separate fits: with ``random_state=None`` each a
    :class:`~dpstats.privacy.secure_random.SecureGenerator` (as :func:`make_rng` gives one fit), else seeded PCG64
    generators spawned from the seed (or from a seed drawn from a given Generator), reproducible."""
    if random_state is None or isinstance(random_state, SecureGenerator):
        return [SecureGenerator() for _ in range(count)]
    rng, _ = make_rng(random_state)  # validates the seed
    seed = int(random_state) if isinstance(random_state, (int, np.integer)) else int(rng.integers(0, 2**63 - 1))
    return [np.random.default_rng(child) for child in np.random.SeedSequence(seed).spawn(count)]


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

    def release(self, value: float | np.ndarray, *, l2_sensitivity: float,
                rng: np.random.Generator) -> float | np.ndarray:
        """value + discrete Gaussian noise of sd about l2_sensitivity / mu_round; refused after ``rounds`` releases."""
        if self.used >= self.rounds:
            raise RuntimeError("this Gaussian block has already made all the releases it was charged for")
        sens = _check_sensitivity(l2_sensitivity)
        if sens == 0:
            raise NoiseScaleRangeError("a Gaussian release needs a positive sensitivity, got 0")
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
            raise NoiseScaleRangeError("a Gaussian release needs a positive sensitivity, got 0")
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

    def release(self, value: float | np.ndarray, *, l2_sensitivity: float | None = None,
                rng: np.random.Generator) -> float | np.ndarray:
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



__all__ += ["post_processing_normal", "post_processing_uniform"]


def post_processing_normal(size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Standard normal draws for simulations from released quantities (parametric bootstrap).

    Post-processing: the draws are independent of the data and are combined
    only with values already released through the ledger, so they are not
    charged.
    """
    return rng.standard_normal(size=size)


def post_processing_uniform(size: int | tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Uniform draws on [0, 1) for simulations from released quantities; post-processing, as
    :func:`post_processing_normal`: independent of the data, not charged."""
    return rng.uniform(size=size)


# --- one-method mechanisms, moved to their own modules -------------------------------------------------------

#: the public names that lived here until 0.1.0 (deprecated, one release), added by their new modules, which
#: import this one: dpstats.privacy.peeling, dpstats.privacy.poisson_gaussian and dpstats.methods.tukey.em
MOVED_UP = MovedUp(__name__)


def __getattr__(name: str) -> object:
    """The moved names (:data:`MOVED_UP`), with a DeprecationWarning: import them from their new modules."""
    return MOVED_UP.get(name)
