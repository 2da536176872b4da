"""TukeyEM's private pilot (``blocks="moments"``): one Gaussian release of the clipped Gram matrix and moment.

The pilot is the SSP estimate (Foulds et al. 2016) of the coefficients of the
rescaled, clipped response on the rescaled, clipped design; the blocks then
estimate the correction u_k = L^{-1} Z_k^T (y_k - Z_k b~) / b from the
unclipped rows, whitened by the released Gram matrix G~ = L L^T, and TukeyEM
aggregates them (sensitivity and post-processing in docs/proofs/tukey.md).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import solve_triangular

from dpstats.methods.common.extremes import finite_rows
from dpstats.methods.tukey.preprocessing import Preprocessing
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu

__all__ = ["GRAM_FLOOR", "gram_floor", "pilot_sensitivity", "private_pilot", "whitened"]

GRAM_FLOOR = 2.0  # eigenvalue floor of the released Gram, in units of sqrt(d) * its noise sd


def pilot_sensitivity(d: int) -> float:
    """L2 sensitivity of the released (upper triangle of Z^T Z, Z^T y~) under replace-one: sqrt(2 d^2 + 4 d)."""
    return math.sqrt(2.0 * d * d + 4.0 * d)


def gram_floor(n: int, d: int, mu: float) -> float:
    """The eigenvalue floor of the pilot's normalised Gram matrix (public: n, d and the budget).

    Parameters
    ----------
    n, d : int
        Rows and design columns.
    mu : float
        GDP parameter of the pilot release.

    Returns
    -------
    float
    """
    return GRAM_FLOOR * math.sqrt(d) * pilot_sensitivity(d) / (mu * n)


def private_pilot(gram: np.ndarray, moment: np.ndarray, n: int, prep: Preprocessing, mu: float,
                  rng: np.random.Generator, ledger: PrivacyLedger) -> tuple[np.ndarray, np.ndarray]:
    """One Gaussian release of (Z^T Z, Z^T y~) of the clipped data.

    Rows z lie in [-1, 1]^d (the intercept is the constant 1) and
    y~ = clip((y - c_y) / r_y) in [-1, 1], so the joint vector has L2
    sensitivity sqrt(2 d^2 + 4 d) (:func:`pilot_sensitivity`), released with
    GDP parameter mu.  Post-processing: G~ is symmetrised with eigenvalues
    floored at :func:`gram_floor`, and the pilot r_y G~^{-1} (Z^T y~)~ is the
    SSP estimate of the coefficients of y - c_y on z.

    Parameters
    ----------
    gram : numpy.ndarray
        Z^T Z of all rows (d x d).
    moment : numpy.ndarray
        Z^T y~ of all rows.
    n : int
        Rows (public).
    prep : Preprocessing
        The released centres and radii.
    mu : float
        GDP parameter of the release.
    rng : numpy.random.Generator
        The fit's random source.
    ledger : PrivacyLedger
        The fit's ledger.

    Returns
    -------
    tuple of numpy.ndarray
        (G~ / n floored, pilot coefficients on z).
    """
    d = gram.shape[0]
    iu = np.triu_indices(d)
    noisy = np.asarray(gaussian_mechanism_mu(np.concatenate([gram[iu], moment]), l2_sensitivity=pilot_sensitivity(d),
                                             mu=mu, rng=rng, ledger=ledger,
                                             name="TukeyEM pilot: noisy (Z^T Z, Z^T y) of the clipped, rescaled data"))
    g = np.empty((d, d))
    g[iu] = noisy[:iu[0].size]
    g.T[iu] = noisy[:iu[0].size]
    w, v = np.linalg.eigh(g / n)
    w = np.maximum(w, gram_floor(n, d, mu))
    gram_n = (v * w) @ v.T
    pilot = prep.y_radius * (v @ ((v.T @ (noisy[iu[0].size:] / n)) / w))
    return gram_n, pilot


def whitened(residual_moments: np.ndarray, chol: np.ndarray, block_rows: int) -> np.ndarray:
    """The block estimates u_k = L^{-1} Z_k^T (y_k - Z_k b~) / b (G~ = L L^T).

    A block whose residual moments are not finite (its sums overflowed: values near the largest double) gets
    u_k = 0, the public fallback point (here: the pilot itself); a per-block map, so a replaced row still
    changes one estimate at most.  An estimate that overflows in the whitening is mapped the same way by
    :func:`~dpstats.methods.tukey.em.tukey_em`.

    Parameters
    ----------
    residual_moments : numpy.ndarray
        (m, d): Z_k^T (y_k - Z_k b~).
    chol : numpy.ndarray
        L, lower triangular.
    block_rows : int
        b.

    Returns
    -------
    numpy.ndarray
        (m, d).
    """
    moments = residual_moments / block_rows
    moments[~finite_rows(moments)] = 0.0
    return solve_triangular(chol, moments.T, lower=True).T
