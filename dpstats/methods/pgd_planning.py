"""The privacy error a planned pgd fit can expect: pgd's own public rules run on the planner's assumed moments.

:func:`dpstats.plan` asks each method for the second moment of its privacy error at (n, epsilon, delta) under the
planner's assumptions (:class:`~dpstats.rates.PlanningFacts`: the second moment of a row rescaled to [-1, 1], the
coefficients, the residual variance).  pgd (:mod:`dpstats.methods.pgd`) has no rate for ||b - beta||_2 in the
minimax model, but every quantity its fit reads from a release has an expected value under these assumptions, so
its calibration can be run noise-free:

1. the budget split of the fit (:func:`~dpstats.methods.pgd.budget_split`);
2. the standardisation: centres at the assumed means, scales at the assumed standard deviations (the released
   scale is 1.25 times a mean absolute deviation, the standard deviation of a normal variable), each floored as the
   release floors it;
3. the gradient norms ||z|| |r| with z normal with the standardised second moment (its squared norm taken as a
   scaled chi-square with the same mean and variance) and r normal, independent of z: at theta = 0 r is the
   standardised response, at the fit the residual.  Their expected counts in the fit's histogram grid are read by
   the fit's own quantile rule, which gives the warm start's clip and the final clip (the clip rule's multiple of
   the 0.9-quantile, capped at its value at theta = 0; symmetric residuals, so the tail clip does not apply), and
   the share of rows each clip leaves unclipped;
4. the step count, each phase's ridge penalty and the Gram matrix's noise, by the fit's rules;
5. the two phases linearised in the eigenbasis of the expected Gram matrix n E[z z^T]
   (:func:`~dpstats.methods.pgd.phases_linearised`), with the curvature of the clipped loss taken as the unclipped
   share times n E[z z^T] (a clipped row's gradient does not depend on theta), not floored at the Gram matrix's
   noise as the fit's own error block floors the released one: the shrinkage of the penalties and of early
   stopping, the warm start's noise carried into the estimate and the final chains' noise.  The unclipped share
   is taken at the noisy iterates, not at the fit: their spread about it (:func:`iterate_variance`) widens the
   residuals the clip sees, which lowers the share, which widens the spread; ``WANDER_ROUNDS`` rounds reach the
   fixed point.

The privacy error (the released coefficient minus least squares on the same data) has the second moment of the
noise plus that of the shrinkage's part (s - 1) theta_LS, with theta_LS least squares' estimate: theta plus its
sampling error; mapped back to the method's units by the standardisation.  First order in the noise, and only as good as the
assumptions: the released Gram matrix's noise, which sets the preconditioner's eigenvalues in directions it swamps,
is replaced by its expected value; the path of the final chains from their start offsets (three units apart below
n * mu = 100) is not modelled, nor a skewed or heavy-tailed residual distribution, which the fit clips
differently.  Measured against fits on data drawn from the assumptions: benchmarks/plan_calibration.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2, norm

from dpstats.methods.common.geometric_histogram import quantile_from_counts
from dpstats.methods.common.private_scaling import Domain, Standardisation
from dpstats.methods.pgd import (
    GRAM_RADIUS2,
    NORM_GRID,
    WARM_CLIP,
    PGDOptions,
    budget_split,
    clip_rule,
    phase_penalty,
    phases_linearised,
    reports_intervals,
    steps_rule,
)
from dpstats.privacy.calibration import gaussian_mu
from dpstats.rates import ExpectedError, PlanningFacts

__all__ = ["expected_error", "NormLaw", "assumed_standardisation", "standardised_moments", "iterate_variance",
           "QUADRATURE_POINTS", "WANDER_ROUNDS"]

#: Rounds of the fixed point of the unclipped shares at the iterates' spread (:func:`expected_error`).
WANDER_ROUNDS = 6
#: Points of the quadrature over the squared row norm (its quantiles at (i - 1/2) / QUADRATURE_POINTS).
QUADRATURE_POINTS = 200


@dataclass(frozen=True)
class NormLaw:
    """The law of a gradient norm ||z|| |r| with ||z||^2 = ``constant`` + a scaled chi-square (``scale`` times a
    chi-square with ``df`` degrees of freedom) and r normal with sd ``residual_sd``, independent of z."""

    constant: float
    scale: float
    df: float
    residual_sd: float

    @classmethod
    def of(cls, second_moment: np.ndarray, fixed: float, residual_sd: float) -> NormLaw:
        """The law for z with the random part's second moment ``second_moment`` (its squared norm's mean and
        variance matched by the scaled chi-square, as for a normal z), plus ``fixed`` (the intercept's 1)."""
        eig = np.clip(np.linalg.eigvalsh(second_moment), 0.0, None) if second_moment.size else np.zeros(0)
        mean, square = float(eig.sum()), float(np.sum(eig**2))
        if mean <= 0.0:
            return cls(fixed, 0.0, 1.0, residual_sd)
        return cls(fixed, square / mean, mean * mean / square, residual_sd)

    def norms(self) -> np.ndarray:
        """||z|| at the quadrature points."""
        u = (np.arange(QUADRATURE_POINTS) + 0.5) / QUADRATURE_POINTS
        return np.sqrt(self.constant + self.scale * chi2.ppf(u, self.df))

    def cdf(self, values: np.ndarray) -> np.ndarray:
        """P(||z|| |r| <= v) at each of ``values``."""
        norms = np.maximum(self.norms(), 1e-300)
        ratio = np.asarray(values, dtype=float)[:, None] / (norms[None, :] * max(self.residual_sd, 1e-300))
        return np.mean(2.0 * norm.cdf(ratio) - 1.0, axis=1)

    def quantile(self, q: float, n: int) -> float:
        """The q-quantile the fit reads from the noise-free histogram of n rows (its grid and reading rule)."""
        cdf = self.cdf(NORM_GRID.edges[1:-1])
        counts = n * np.diff(np.concatenate([[0.0], cdf, [1.0]]))
        return quantile_from_counts(counts, q, n, NORM_GRID)


def assumed_standardisation(facts: PlanningFacts, mu_scale: float) -> Standardisation:
    """The standardisation a fit would release under the assumptions: centres at the means (none without an
    intercept), scales at the standard deviations about the centres (root mean squares without an intercept),
    floored as :func:`~dpstats.methods.common.private_scaling.release_moments` floors them."""
    d, k = facts.d, facts.intercept_index
    m = facts.second_moment
    beta = facts.coefficients
    means = m[k, :] if k is not None else np.zeros(d)
    y_mean = float(means @ beta) if k is not None else 0.0
    y_second = float(beta @ m @ beta) + facts.residual_var
    free = [j for j in range(d) if j != k]
    centre = np.zeros(d)
    if k is not None:
        centre[free] = means[free]
    spread = np.diag(m) - centre**2
    y_spread = y_second - y_mean**2
    sens = (2.0 if k is not None else 1.0) * math.sqrt(len(free) + 1)
    floor = max(2.0 * sens / (mu_scale * facts.n), 2.0**-10)
    scale = np.ones(d)
    scale[free] = np.maximum(np.sqrt(np.clip(spread[free], 0.0, None)), floor)
    lo, hi = -np.ones(d), np.ones(d)
    if k is not None:
        lo[k] = hi[k] = 1.0
    domain = Domain(lo, hi, -1.0, 1.0, k)
    return Standardisation(domain, centre, scale, y_mean, max(math.sqrt(max(y_spread, 0.0)), floor))


def standardised_moments(facts: PlanningFacts, st: Standardisation) -> tuple[np.ndarray, np.ndarray]:
    """(E[z z^T], theta): the second moment of a standardised row and the coefficients on the standardised rows
    (slopes beta_j s_j / s_y; the intercept's 0, the centres being the means) under the assumptions."""
    d, k, m = facts.d, facts.intercept_index, facts.second_moment
    shift = np.zeros(d)
    if k is not None:
        shift = np.where(np.arange(d) == k, 0.0, st.centre)
        m = m - np.outer(shift, m[k]) - np.outer(m[k], shift) + np.outer(shift, shift)
    z_moment = m / np.outer(st.scale, st.scale)
    theta = facts.coefficients * st.scale / st.y_scale
    if k is not None:
        theta[k] = 0.0
    return z_moment, theta


def iterate_variance(precond: np.ndarray, curvature: np.ndarray, step_variance: float, steps: int) -> np.ndarray:
    """The variance, per direction, of one chain's iterate about its fixed point in the recursion
    e_t = (1 - H / P) e_(t-1) - xi_t / P with Var xi_t = ``step_variance``: stationary where the contraction is
    below 1, at most that of ``steps`` undamped steps."""
    contraction = np.clip(1.0 - curvature / precond, 0.0, 1.0)
    return step_variance / precond**2 * np.minimum(1.0 / np.maximum(1.0 - contraction**2, 1e-300), steps)


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The second moment of a planned pgd fit's privacy error (module docstring), in the method's units."""
    n, d, k = facts.n, facts.d, facts.intercept_index
    inference = reports_intervals(n, facts.epsilon, facts.delta, facts.inference)
    mus = budget_split(n, facts.epsilon, facts.delta, intercept=k is not None, inference=inference)
    st = assumed_standardisation(facts, mus["scale"])
    z_moment, theta = standardised_moments(facts, st)
    free = np.arange(d) != k
    fixed = 1.0 if k is not None else 0.0
    y_sd = math.sqrt(max(float(facts.coefficients @ facts.second_moment @ facts.coefficients) + facts.residual_var
                         - st.y_centre**2, 0.0)) / st.y_scale
    residual_sd = math.sqrt(facts.residual_var) / st.y_scale
    random_part = z_moment[np.ix_(free, free)]
    at_zero = NormLaw.of(random_part, fixed, y_sd)
    q, multiple = clip_rule(n * gaussian_mu(facts.epsilon, facts.delta))
    clips = (WARM_CLIP[1] * at_zero.quantile(WARM_CLIP[0], n),
             multiple * min(NormLaw.of(random_part, fixed, residual_sd).quantile(q, n), at_zero.quantile(q, n)))
    phase_mus = (mus["warm start"], mus["chains"])
    penalties = [phase_penalty(c, m) for c, m in zip(clips, phase_mus, strict=True)]
    sigma_g = math.sqrt(2.0) * GRAM_RADIUS2 * d / mus["gram"]
    g, V = np.linalg.eigh(n * z_moment)
    g = np.maximum(g, 0.0)
    lifted = g + 2.0 * math.sqrt(d) * sigma_g
    steps, _ = steps_rule((V * g) @ V.T, (V / lifted) @ V.T, sigma_g, n, PGDOptions())
    preconds = [lifted + lam for lam in penalties]
    chains = (1, PGDOptions().chains if inference else 1)
    shares = [1.0, 1.0]
    for _ in range(WANDER_ROUNDS):  # the unclipped shares at the iterates' spread, to a fixed point
        for i in range(2):
            step_variance = chains[i] * (2.0 * clips[i]) ** 2 * steps / phase_mus[i] ** 2
            wander = iterate_variance(preconds[i], shares[i] * g + penalties[i], step_variance, steps)
            spread = math.sqrt(residual_sd**2 + float(np.sum(g / n * wander)))
            shares[i] = float(NormLaw.of(random_part, fixed, spread).cdf(np.array([clips[i]]))[0])
    curvatures = [share * g for share in shares]
    lin = phases_linearised(V, preconds, [h + lam for h, lam in zip(curvatures, penalties, strict=True)],
                            [h / np.maximum(h + lam, 1e-300) for h, lam in zip(curvatures, penalties, strict=True)],
                            clips, phase_mus, steps)
    # the shrinkage acts on least squares' own estimate, theta plus its sampling error (variance sigma_v^2 / g per
    # direction): the released coefficient minus least squares is (s - 1) times both, plus the noise
    shrunk = (lin.shrink - 1.0) ** 2 * residual_sd**2 / np.where(g > 0.0, g, np.inf)
    bias = V @ ((lin.shrink - 1.0) * (V.T @ theta))
    cov_z = (V * (lin.carried + lin.noise + shrunk)) @ V.T + np.outer(bias, bias)
    A, _ = st.affine_back()
    return ExpectedError(A @ cov_z @ A.T)
