"""The planned privacy error of DP-RobGD and DP-AMBSSGD: their public rules run on the planner's assumed moments.

Both fits' error blocks (:func:`~dpstats.methods.common.robust_descent.descent_error`) propagate the released noise
sd of each round through the linearised steps.  Every value those sds are made of is either a public fact (n, d,
epsilon, delta, the options, the parts' sizes, the budget split, the round caps) or a released value whose law
under the planner's assumptions (:class:`~dpstats.rates.PlanningFacts`: the design's second moment, the residual
variance, the coefficients) is known:

* the preconditioning's centres and scales: the assumed means and sds, so the descent's coordinates z have second
  moment ``M_z`` (the correlation matrix, with the intercept's 1);
* Gamma ~ Tr(Sigma): the upper edge of the norm grid's bin that holds Tr(M_z) (group means of ||z||^2
  concentrate), and Theta = tail sqrt(Gamma);
* the spectrum: the extreme eigenvalues of M_z plus the release's Gaussian noise, whose sd is public; the step
  size and the rounds (eta = 1/lambda_up, T from kappa_hat, capped) are averaged over that noise by Gauss-Hermite
  quadrature, because a noisy low lambda_min sets T to its cap in some fits and not in others;
* the residual scale gamma_t of round t: the expected upper edge of the modal bin of the released histogram of
  group means of squared residuals, each N(0, r_t) with r_t = sigma^2 + the expected excess of the linearised
  iterate w_t (the early-stopping bias and the noise so far), the argmax taken over the counts' public noise.

The descent is linearised in the eigenbasis of M_z (curvature lambda_i in direction i, the residual and covariate
clips taken not to bind), starting from 0; the privacy error of the output (last iterate, or tail average) is its
noise plus its early-stopping bias (s_i - 1) w*_i with the assumed coefficients w*, plus the part of least squares
the method does not see (DP-RobGD's gradients use S_b only; DP-AMBSSGD's mini-batches add their sampling noise);
DP-AMBSSGD's stop on divergence is applied to the linearised residual scales.  Not modelled: rounds that hold
(their histograms are sized to clear), the clipping's bias, and a residual distribution other than normal.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy import special

from dpstats.methods.common.robust_descent import descent_error, rounds_from_kappa
from dpstats.methods.common.robust_estimators import NORM_GRID
from dpstats.rates import PlanningFacts

__all__ = ["PLANNED_ERROR", "StandardisedModel", "standardised_model", "norm_reading", "ModalEdge", "modal_edge",
           "edge_of", "Schedule", "spectrum_schedules", "planned_descent"]

#: What robgd's and ambssgd's plans give as their privacy error, printed with the plan's assumptions.
PLANNED_ERROR = ("robgd's and ambssgd's privacy errors are their error blocks' model run on the values their fits "
                 "would release under these assumptions (noise and early-stopping bias of the linearised descent); "
                 "not modelled: rounds that hold, the clips' bias")

#: Gauss-Hermite nodes for the noise of the released lambda_max (3: none in the far tail, where a step size near
#: 1/lambda_max lets the linearised noise feed on itself) and lambda_min, and for the histogram counts' noise
_MAX_NODES, _MIN_NODES = 3, 5
_COUNT_NODES = 12
#: alignments of the residual scale on the ratio-2 grid at which the modal edge is tabulated
_ALIGNMENTS = 16


@dataclass(frozen=True)
class StandardisedModel:
    """The assumed design in the descent's coordinates z (after the private preconditioning at its expected values).

    ``lam`` and ``V`` are the eigenvalues and eigenvectors of the second moment of z, ``w`` the least-squares
    coefficients in the eigenbasis (V^T w*), ``residual_var`` sigma^2, ``start_var`` the variance of the centred
    response (the residual at w = 0), and ``back`` the matrix that maps z-coefficients to the method's units
    (the standardisation's affine map's linear part)."""

    lam: np.ndarray
    V: np.ndarray
    w: np.ndarray
    residual_var: float
    back: np.ndarray

    @property
    def trace(self) -> float:
        return float(np.sum(self.lam))


def standardised_model(facts: PlanningFacts) -> StandardisedModel:
    """The descent's coordinates under the planner's assumptions: each column centred at its assumed mean (with an
    intercept) and scaled by its assumed sd (its root mean square without one), the response centred."""
    M = np.asarray(facts.second_moment, dtype=float)
    d, k = M.shape[0], facts.intercept_index
    mean = M[:, k].copy() if k is not None else np.zeros(d)
    spread = np.sqrt(np.maximum(np.diag(M) - mean**2, 0.0))
    scale = np.where(spread > 0, spread, 1.0)
    B = np.diag(1.0 / scale)  # z = B x
    if k is not None:
        B[k, k] = 1.0
        for j in range(d):
            if j != k:
                B[j, k] = -mean[j] / scale[j]
    Mz = B @ M @ B.T
    w = np.linalg.solve(B.T, np.asarray(facts.coefficients, dtype=float))  # x^T beta = z^T w
    if k is not None:
        w[k] = 0.0  # the response is centred at its (released) mean
    lam, V = np.linalg.eigh((Mz + Mz.T) / 2.0)
    return StandardisedModel(np.maximum(lam, 0.0), V, V.T @ w, float(facts.residual_var), B.T)


def norm_reading(trace: float) -> float:
    """Gamma: the upper edge of the norm grid's bin that holds Tr(M_z) (the group means of ||z||^2 concentrate)."""
    return NORM_GRID.upper_edge(int(NORM_GRID.index(np.array([trace]))[0]))


def modal_edge(group_size: int, groups: float, noise_sd: float) -> np.ndarray:
    """:attr:`ModalEdge.factor`, memoised (the plan's searches ask again at the same sizes; the groups and the
    noise sd are rounded to 3 significant digits for that)."""
    return _modal_edge(group_size, float(f"{groups:.3g}"), float(f"{noise_sd:.3g}"))


@functools.lru_cache(maxsize=1024)
def _modal_edge(group_size: int, groups: float, noise_sd: float) -> np.ndarray:
    return ModalEdge(group_size, groups, noise_sd).factor


class ModalEdge:
    """E[upper edge of the released modal bin] of a histogram of ``groups`` group means of ``group_size`` squared
    N(0, v) residuals on the ratio-2 grid, with count noise sd ``noise_sd``: v times a factor that depends on where
    v falls between two edges (tabulated at ``_ALIGNMENTS`` alignments).  The argmax is averaged over the counts'
    Gaussian noise (P(bin k is the largest) = E_z prod_l Phi((m_k - m_l)/s + z))."""

    def __init__(self, group_size: int, groups: float, noise_sd: float) -> None:
        shift = np.arange(_ALIGNMENTS) / _ALIGNMENTS          # v = 2^shift
        k = np.arange(-24, 6)                                  # bins [2^k, 2^(k+1)) around v
        upper = 2.0 ** (k[None, :] + 1 - shift[:, None])       # in units of v
        a = group_size / 2.0                                   # the group mean is v Gamma(b/2, scale 2/b)
        p = special.gammainc(a, upper * a) - special.gammainc(a, upper * a / 2.0)
        keep = np.max(p, axis=0) >= 1e-3 * np.max(p)           # bins that can hold the mode
        p, upper = p[:, keep], upper[:, keep]
        m = groups * p / max(noise_sd, 1e-300)                 # expected counts in noise sds
        z, wz = hermegauss(_COUNT_NODES)
        wz = wz / math.sqrt(2.0 * math.pi)
        gap = m[:, :, None] - m[:, None, :]                    # (align, k, l)
        cdf = special.ndtr(gap[..., None] + z)                 # (align, k, l, node)
        idx = np.arange(p.shape[1])
        cdf[:, idx, idx, :] = 1.0
        prob = np.prod(cdf, axis=2) @ wz
        prob = prob / np.sum(prob, axis=1, keepdims=True)
        self.factor = np.sum(prob * upper, axis=1)             # E[edge] / v at each alignment



def edge_of(tables: np.ndarray, v: np.ndarray) -> np.ndarray:
    """E[released modal edge] at residual variances ``v`` (one per row of ``tables``, the rows'
    :attr:`ModalEdge.factor`), interpolated between the tabulated alignments."""
    v = np.maximum(np.asarray(v, dtype=float), 1e-300)
    shift = np.mod(np.log2(v), 1.0) * _ALIGNMENTS
    lo = np.floor(shift).astype(int) % _ALIGNMENTS
    frac = shift - np.floor(shift)
    rows = np.arange(tables.shape[0])
    return v * ((1.0 - frac) * tables[rows, lo] + frac * tables[rows, (lo + 1) % _ALIGNMENTS])


@dataclass(frozen=True)
class Schedule:
    """One node of the quadrature over the spectrum's noise: its weight, step size and rounds."""

    weight: float
    eta: float
    rounds: int


def spectrum_schedules(model: StandardisedModel, theta_x: float, noise_sd: float, n: int, max_rounds: int,
                       z: float = 3.0, floor: float = 0.0) -> list[Schedule]:
    """(eta, T) of :func:`~dpstats.methods.common.robust_descent.step_schedule` at the released spectrum
    lambda + N(0, noise_sd^2) of each quadrature node (the release's rules of
    :func:`~dpstats.methods.common.robust_estimators.release_spectrum`: z sds outwards, the upper bound capped at
    Theta^2), the lower bound raised to ``floor`` noise sds where the method floors it."""
    top, top_w = hermegauss(_MAX_NODES)
    low, low_w = hermegauss(_MIN_NODES)
    top_w, low_w = top_w / math.sqrt(2.0 * math.pi), low_w / math.sqrt(2.0 * math.pi)
    bound2 = theta_x * theta_x
    cap = 2.0 * max_rounds / math.log(n)
    merged: dict[tuple[float, int], float] = {}
    for a, wa in zip(top, top_w, strict=True):
        upper = float(model.lam[-1] + (a + z) * noise_sd)
        if not 0.0 < upper < bound2:
            upper = bound2
        for b, wb in zip(low, low_w, strict=True):
            lower = float(model.lam[0] + (b - z) * noise_sd)
            if floor > 0:
                lower = max(lower, floor * noise_sd)
            kappa = min(max(upper / lower if lower > 0 else cap, 1.0), cap)
            key = (1.0 / upper, rounds_from_kappa(kappa, n, max_rounds))
            merged[key] = merged.get(key, 0.0) + float(wa * wb)
    return [Schedule(weight, eta, T) for (eta, T), weight in merged.items()]


def planned_descent(model: StandardisedModel, etas: np.ndarray, rounds: np.ndarray, *, tables: np.ndarray,
                    sd_per_root_gamma: np.ndarray, sampling: np.ndarray, weights: Callable[[int], np.ndarray],
                    stop: tuple[float, int] | None = None) -> list[np.ndarray]:
    """The second moment of the output's privacy error in the eigenbasis (d x d) for each schedule q
    (``etas[q]``, ``rounds[q]``).

    Round t: r_t = sigma^2 + sum_i lambda_i (bias_i^2 + var_i) at the linearised iterate; gamma_t the expected
    released modal edge (:func:`edge_of` with ``tables[q]``); the gradient noise sd ``sd_per_root_gamma[q]``
    sqrt(gamma_t); each step w -= eta (lambda (w - w*) + noise), with ``sampling[q, i]`` the variance the rows' own
    sampling adds to a step's gradient in direction i (0 for full-batch gradients).  The output is
    sum_k ``weights(T)``[k] w_k, propagated by :func:`~dpstats.methods.common.robust_descent.descent_error` in each
    direction; its privacy error is that noise plus the early-stopping bias (s_i - 1) w*_i.  With ``stop`` =
    (factor, first): a round whose gamma_t is at least factor times the largest of the first ``first`` stops the
    descent, and the output is the iterate with the smallest gamma_s so far (DP-AMBSSGD's stop on divergence)."""
    lam, w = model.lam, model.w
    Q, d = len(etas), lam.size
    etas = np.asarray(etas, dtype=float)
    rounds = np.asarray(rounds, dtype=int).copy()
    c = np.clip(1.0 - etas[:, None] * lam[None, :], 0.0, 1.0)
    bias, var = np.tile(-w, (Q, 1)), np.zeros((Q, d))
    sds = np.full((Q, int(rounds.max(initial=0))), np.nan)
    gammas = np.full_like(sds, np.inf)
    chosen = np.full(Q, -1)
    previous = np.full(Q, np.nan)
    for t in range(sds.shape[1]):
        active = (t < rounds) & (chosen < 0)
        r = model.residual_var + np.sum(lam * (bias**2 + var), axis=1)
        g = edge_of(tables, r)
        if stop is not None and t >= stop[1]:
            halt = active & (g >= stop[0] * np.max(gammas[:, :stop[1]], axis=1))
            for h in np.flatnonzero(halt):
                chosen[h] = np.argmin(gammas[h, :t])
                rounds[h] = t
            active &= ~halt
        gammas[:, t] = g
        sd = sd_per_root_gamma * np.sqrt(g)
        sds[:, t] = sd
        if stop is None and np.all(np.abs(sd - previous) <= 1e-9 * sd):  # a fixed point: later rounds are the same
            sds[:, t:] = sd[:, None]
            break
        previous = sd
        step = active[:, None]
        bias = np.where(step, c * bias, bias)
        var = np.where(step, c * c * var + etas[:, None] ** 2 * (sd[:, None] ** 2 + sampling), var)
    out = []
    for q in range(Q):
        T = int(rounds[q])
        if chosen[q] >= 0:
            weight = np.zeros(T + 1)
            weight[chosen[q]] = 1.0
        else:
            weight = weights(T)
        shrink, noise = np.empty(d), np.empty(d)
        for i in range(d):
            err = descent_error(np.sqrt(sds[q, :T] ** 2 + sampling[q, i]), weight, float(etas[q]), float(lam[i]))
            shrink[i], noise[i] = err.shrink, err.variance
        b = (shrink - 1.0) * w
        out.append(np.diag(noise) + np.outer(b, b))
    return out
