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
"""

from __future__ import annotations

import math

import numpy as np

from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep

__all__ = [
    "make_rng",
    "laplace_mechanism",
    "gaussian_mechanism",
    "gaussian_mechanism_mu",
    "symmetric_gaussian_mechanism",
    "exponential_mechanism",
    "permutation",
    "public_uniform",
]


def make_rng(random_state: "int | np.random.Generator | None") -> tuple[np.random.Generator, bool]:
    """Return ``(generator, seeded)``.

    ``None`` draws fresh entropy from the operating system (numpy's
    ``SeedSequence`` reads ``os.urandom``); an int or a Generator gives
    reproducible noise, which the privacy report flags as seeded.
    """
    if random_state is None:
        return np.random.default_rng(), False
    if isinstance(random_state, np.random.Generator):
        return random_state, True
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return np.random.default_rng(int(random_state)), True
    raise TypeError("random_state must be None, an int seed or a numpy.random.Generator")


def _check_sensitivity(sensitivity: float) -> float:
    s = float(sensitivity)
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
    """Laplace mechanism: value + Lap(l1_sensitivity / epsilon) per coordinate.

    epsilon-DP for a statistic of L1 sensitivity ``l1_sensitivity`` (Dwork,
    McSherry, Nissim & Smith 2006).
    """
    sens = _check_sensitivity(l1_sensitivity)
    if not epsilon > 0:
        raise ValueError("epsilon must be > 0")
    arr = np.asarray(value, dtype=float)
    scale = sens / epsilon
    ledger.charge(PrivacyStep(name, "laplace", sens, "L1", scale, epsilon=float(epsilon), delta=0.0,
                              dimension=max(arr.size, 1)))
    noisy = arr + rng.laplace(0.0, scale, size=arr.shape) if scale > 0 else arr.copy()
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
    """Gaussian mechanism with a GDP parameter: value + N(0, (l2_sensitivity/mu)^2 I).

    mu-GDP for a statistic of L2 sensitivity ``l2_sensitivity`` (Dong, Roth &
    Su 2022, Thm 2.7).  Methods that release several Gaussian statistics split
    a mu budget with :func:`~dpstats.privacy.calibration.split_mu`; the ledger
    composes them exactly.
    """
    sens = _check_sensitivity(l2_sensitivity)
    if not mu > 0:
        raise ValueError("mu must be > 0")
    arr = np.asarray(value, dtype=float)
    if sens == 0:
        raise ValueError("a Gaussian release with zero sensitivity needs no noise; do not charge it")
    sigma = sens / mu
    ledger.charge(PrivacyStep(name, "gaussian", sens, "L2", sigma, dimension=max(arr.size, 1)))
    noisy = arr + rng.normal(0.0, sigma, size=arr.shape)
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
