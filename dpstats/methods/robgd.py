"""DP-RobGD: private full-batch gradient descent that is robust to corrupted labels.

Liu, Jain, Kong, Oh & Suggala, "Label robust and differentially private
linear regression: computational and statistical efficiency" (NeurIPS 2023;
arXiv 2301.13273, first titled "Near optimal private and robust linear
regression"), Algorithm 1, with the Private Norm Estimator (Alg. 3) and the
Distance Estimator (Alg. 2).  See ALGORITHMS.md section 6.

Algorithm (as implemented)
--------------------------
A public random permutation splits the n rows into S_a (a fraction
``gamma_fraction``, 20% as in the paper's experiments; the analysis uses 50%)
and S_b (the rest, m rows).  mu = mu(epsilon, delta) is the exact GDP
parameter of the budget (Balle & Wang 2018).

On S_a:

1. Gamma = PrivateNormEstimator: the modal bin of a private geometric
   histogram of group means of ||x||^2 (estimates Tr(Sigma) = E||x||^2).
   Theta = ``covariate_tail`` * sqrt(Gamma): the covariate clipping norm
   (paper: Theta = K sqrt(2 Gamma) log^a(n/zeta), Alg. 1 line 1).  The default
   tail 1 + sqrt(2 ln(n/zeta)), zeta = 0.05, is derived for Gaussian
   covariates: ||x||^2 <= Tr(Sigma) (1 + sqrt(2t))^2 with probability
   1 - e^-t (Laurent & Massart 2000, using ||Sigma||_F, ||Sigma|| <= Tr Sigma),
   union over n rows.  Covariates of bounded norm ||x||^2 <= Tr(Sigma) (the
   paper's experiments: x on the unit sphere) take ``covariate_tail=1``.
2. Unless ``rounds`` and ``step_size`` are both given: the private extreme
   eigenvalues of the Theta-clipped second-moment matrix
   (:func:`~dpstats.methods.robust_estimators.private_spectrum`), giving an
   upper confidence bound lambda_up >= lambda_max(Sigma) and a condition
   number kappa_hat = lambda_up / lambda_low.  Step size eta = 1/lambda_up, so
   ||eta Sigma|| <= 1 as the analysis requires (Liu et al., Thm 3, and the
   1/(i+1) bound of their App. H), and T = ceil(kappa_hat ln(n) / 2) rounds
   (the paper's T = Theta~(kappa): the slowest direction contracts by
   (1 - 1/kappa) per round, so T rounds shrink the initial error by n^(-1/2)),
   capped at ``max_rounds`` and at the number of distance histograms the
   budget can pay for usefully (the modal count must clear the noise by 6
   sds: :func:`~dpstats.methods.robust_estimators.max_histogram_releases`,
   a function of public n, mu and max_corruption; when not even 2 rounds
   qualify the fit is refused before anything is spent).  The paper sets
   eta and T from the true Sigma; here they come from a private estimate, or
   from the user.
3. For each round t (and once more for the final iterate when
   ``best_iterate``): gamma_t = DistanceEstimator(S_a, w_t): the modal bin
   of a private histogram (bins of ratio 2) of group means of squared
   residuals (y - w_t^T x)^2 over groups of b = floor(0.1/max_corruption)
   rows, a robust estimate of ||w_t - w*||_Sigma^2 + sigma^2.

On S_b, for t = 0..T-1:

4. theta_t = sqrt(2 gamma_t ln(2/clip_level)): a residual with variance at most
   gamma_t and Gaussian tails exceeds it with probability at most
   ``clip_level`` (the paper's theta_t = 2 sqrt(2 gamma_t) sqrt(9 C2 K^2
   log^{2a}(1/(2 alpha))) with unspecified C2; here the constant is derived for
   sub-Gaussian residuals and clipping a few clean residuals only slows
   progress: clipped residuals are the Huber-loss gradient, whose population
   minimiser is w* for symmetric noise).
5. g_t = (1/m) sum_{i in S_b} clip_Theta(x_i) clip_theta_t(w_t^T x_i - y_i),
   computed as one pair of matrix-vector products X_b w, X_b^T v;
   w_{t+1} = w_t - eta (g_t + N(0, s_t^2 I)) with s_t = Delta_t / mu_g,
   Delta_t = 2 Theta theta_t / m.

Output: w_T, or with ``best_iterate=True`` (DP-RobGD*, the paper's
experimental variant) the iterate w_t with the smallest gamma_t (ties: the
latest), which is post-processing of released values.

Privacy (replace-one neighbours, n public; worst case: no assumption on the data)
---------------------------------------------------------------------------------
Every statistic is released by a Gaussian mechanism whose noise sd is its
L2 sensitivity divided by a GDP parameter fixed before it is drawn:

* norm histogram: a replaced row changes one group mean of ||x||^2, so one
  count -1 and one +1: L2 sensitivity sqrt(2), noise on all bins of a fixed
  public grid (Liu et al. Lemma B.2, Gaussian form): mu_n-GDP;
* spectrum: (lambda_max, lambda_min) of sum clip(x) clip(x)^T: L2
  sensitivity sqrt(2) Theta^2 (Hoffman-Wielandt): mu_s-GDP;
* distance histogram of round t: sensitivity sqrt(2) as above (w_t is a
  released value): mu_h-GDP each, adaptively composed over the
  T_h = T (+1) rounds;
* gradient of round t: ||clip_Theta(x) clip_theta(r)|| <= Theta theta_t, so
  the mean over the m rows of S_b moves by at most 2 Theta theta_t / m when
  one row is replaced (the seed's "Theta theta_t" is the add/remove value):
  mu_g-GDP each.

Budget.  mu_n^2 = mu_s^2 = mu^2/20 (mu_n^2 = mu^2/10 when no spectrum is
needed), T_h mu_h^2 = the rest of mu^2, and T mu_g^2 = mu^2: each part
composes adaptively to exactly mu-GDP (Dong, Roth & Su 2022, Cor. 3.3; T is
a function of earlier released values only, and the per-round parameters
are set so the total is mu whatever T is).

Composition across the split: S_a and S_b are disjoint and the split is a
public permutation.  Given the permutation, the replaced row lies in one of
them; the mechanisms on the other part see identical inputs (their
data-dependent arguments are released values) and so do not distinguish
the neighbours.  The whole fit is therefore mu-GDP, i.e. exactly
(epsilon, delta)-DP, by parallel composition, which holds for adaptively
interleaved mechanisms.  The fit's ledger records this as ONE Gaussian step
of GDP parameter mu (the parallel block), charged before any draw; each part
has its own ledger with budget (epsilon, delta) that its mechanisms charge
before drawing (so each part is enforced), and the parts' steps are listed
in the report's notes and in ``info["part_steps"]``.  Recording the two parts
sequentially in one ledger would also be valid but would make each part pay
for the other (sqrt(mu_a^2 + mu_b^2) = mu): about 1.4x the gradient noise
for nothing.

Utility (Liu et al., Thm 3 and 4; assumptions reported, not needed for
privacy): sub-Weibull covariates and noise, only labels corrupted, and
corrupted fraction below ``max_corruption``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.registry import MethodFit, MethodSpec, register
from dpstats.methods.robust_estimators import (
    clip_factors, distance_group_size, max_histogram_releases, norm_group_size, private_distance_estimate,
    private_norm_estimate, private_spectrum, separately_clipped_gradient,
)
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import gaussian_block, permutation

__all__ = ["fit", "parallel_block_step", "part_notes", "default_covariate_tail", "rounds_from_kappa", "check_fraction"]

_NORM_SHARE = 0.05      # share of mu^2 on S_a for the norm histogram
_SPECTRUM_SHARE = 0.05  # share of mu^2 on S_a for the spectrum
_ZETA = 0.05            # failure probability of the covariate-norm bound in the default tail


def check_fraction(name: str, value: float, *, low_open: bool = True, high: float = 1.0) -> float:
    """Validate an option that must lie in (0, high) (or [0, high) when ``low_open`` is False)."""
    v = float(value)
    ok = (0.0 < v < high) if low_open else (0.0 <= v < high)
    if not (math.isfinite(v) and ok):
        raise MethodOptionError(f"{name} must lie in {'(' if low_open else '['}0, {high}), got {value!r}")
    return v


def default_covariate_tail(n: int, zeta: float = _ZETA) -> float:
    """1 + sqrt(2 ln(n/zeta)): Theta/sqrt(Tr Sigma) that clips no Gaussian covariate w.p. 1 - zeta."""
    return 1.0 + math.sqrt(2.0 * math.log(n / zeta))


def rounds_from_kappa(kappa: float, n: int, max_rounds: int) -> int:
    """T = ceil(kappa ln(n) / 2), clamped to [2, max_rounds] (Liu et al.: T = Theta~(kappa))."""
    return int(min(max_rounds, max(2, math.ceil(kappa * math.log(n) / 2.0))))


def parallel_block_step(name: str, mu: float, parts: str) -> PrivacyStep:
    """The single ledger step of a fit whose parts touch disjoint rows (parallel composition).

    Each part is mu-GDP on its own rows, enforced by its own ledger; a
    replaced row lies in one part only, so the fit is mu-GDP.  Recorded as a
    Gaussian step of normalised sensitivity 1 and noise multiplier 1/mu.
    """
    return PrivacyStep(name, "gaussian", 1.0, "normalised (GDP of the block)", 1.0 / mu,
                       note=f"parallel composition over disjoint row sets: {parts}; each part is mu={mu:.4g}-GDP "
                            "on its own ledger, so the block is mu-GDP")


def part_notes(label: str, ledger: PrivacyLedger) -> list[str]:
    """One report line per step of a part's own ledger (the itemisation of a parallel block)."""
    return [f"{label}: {s.name}: {s.describe_privacy()}" + (f" [{s.note}]" if s.note else "") for s in ledger.steps]


def fit(X: np.ndarray, y: np.ndarray, *, ledger: PrivacyLedger, rng: np.random.Generator,
        bounds: DataBounds | None, best_iterate: bool = False, gamma_fraction: float = 0.2,
        max_corruption: float = 0.05, clip_level: float = 0.05, covariate_tail: float | None = None,
        rounds: int | None = None, step_size: float | None = None, max_rounds: int = 2000,
        **options: Any) -> MethodFit:
    """DP-RobGD (Liu et al. 2023, Alg. 1); DP-RobGD* with ``best_iterate=True``.  See the module docstring.

    Parameters
    ----------
    best_iterate:
        Output the iterate with the smallest private distance estimate
        gamma_t (DP-RobGD*) instead of the last one.
    gamma_fraction:
        Fraction of rows in S_a (private estimates); the rest compute gradients.
    max_corruption:
        Public upper bound on the fraction of corrupted labels; sets the group
        size of the distance estimator.
    clip_level:
        Fraction of clean residuals the residual threshold theta_t may clip
        (under Gaussian tails).
    covariate_tail:
        Theta / sqrt(Gamma); default 1 + sqrt(2 ln(n/0.05)) (Gaussian
        covariates); 1 for covariates with ||x||^2 <= Tr(Sigma).
    rounds, step_size:
        Public T and eta; by default set from the private spectrum estimate.
    max_rounds:
        Public cap on T.
    """
    n, d = X.shape
    frac = check_fraction("gamma_fraction", gamma_fraction)
    max_corr = check_fraction("max_corruption", max_corruption, low_open=False, high=0.5)
    level = check_fraction("clip_level", clip_level)
    if covariate_tail is not None and not (math.isfinite(covariate_tail) and covariate_tail > 0):
        raise MethodOptionError("covariate_tail must be a positive number")
    if rounds is not None and not (int(rounds) == rounds and rounds >= 1):
        raise MethodOptionError("rounds must be a positive integer")
    if step_size is not None and not (math.isfinite(step_size) and step_size > 0):
        raise MethodOptionError("step_size must be a positive number")
    if not (int(max_rounds) == max_rounds and max_rounds >= 2):
        raise MethodOptionError("max_rounds must be an integer >= 2")
    n_a = int(round(frac * n))
    b_dist = distance_group_size(max_corr)
    if n_a < 10 * b_dist or n - n_a < d:
        raise MethodOptionError(f"gamma_fraction={frac} leaves too few rows in one part (n={n}, d={d})")
    tail = default_covariate_tail(n) if covariate_tail is None else float(covariate_tail)
    need_spectrum = rounds is None or step_size is None

    mu = gaussian_mu(ledger.epsilon, ledger.delta)
    rest_share = 1.0 - _NORM_SHARE - _SPECTRUM_SHARE
    hist_cap = max_histogram_releases(n_a // b_dist, b_dist, mu * math.sqrt(rest_share), min(1.0, b_dist * max_corr))
    round_cap = hist_cap - int(best_iterate)
    if round_cap < 2:
        raise InsufficientDataError(
            f"robgd: with n={n} (S_a = {n_a} rows) and this budget the private distance estimate cannot clear its "
            f"noise even for 2 rounds; use more rows, a larger epsilon or gamma_fraction (nothing was spent)")
    ledger.charge(parallel_block_step(
        "DP-RobGD (parallel block: S_a estimates || S_b gradients)", mu,
        f"S_a ({n_a} rows): norm histogram, {'spectrum, ' if need_spectrum else ''}one distance histogram per "
        f"round; S_b ({n - n_a} rows): one noisy clipped gradient per round"))
    ledger_a = PrivacyLedger(ledger.epsilon, ledger.delta)
    ledger_b = PrivacyLedger(ledger.epsilon, ledger.delta)

    perm = permutation(n, rng)
    Xa, ya = X[perm[:n_a]], y[perm[:n_a]]
    Xb, yb = X[perm[n_a:]], y[perm[n_a:]]
    m = Xb.shape[0]

    # 1. covariate scale (Alg. 3) and clipping norm
    norm_share = _NORM_SHARE if need_spectrum else _NORM_SHARE + _SPECTRUM_SHARE
    mu_n = mu * math.sqrt(norm_share)
    b_norm = norm_group_size(n_a, mu_n)
    norm_block = gaussian_block(rounds=1, mu_round=mu_n, ledger=ledger_a, name="norm histogram (Gamma ~ Tr Sigma)",
                                dimension=1, note=f"groups of {b_norm} rows, 4 bins per octave")
    gamma_norm = private_norm_estimate(Xa, group_size=b_norm, block=norm_block, rng=rng)
    theta_x = tail * math.sqrt(gamma_norm)

    # 2. step size and rounds
    info: dict[str, Any] = {"Gamma": gamma_norm, "Theta": theta_x, "covariate_tail": tail, "n_a": n_a, "n_b": m,
                            "distance_group_size": b_dist, "norm_group_size": b_norm}
    if need_spectrum:
        spec = private_spectrum(Xa, theta_x, mu=mu * math.sqrt(_SPECTRUM_SHARE), rng=rng, ledger=ledger_a)
        kappa_cap = 2.0 * max_rounds / math.log(n)
        kappa_hat = (spec.lam_max_upper / spec.lam_min_lower if spec.lam_min_lower > 0 else kappa_cap)
        kappa_hat = min(max(kappa_hat, 1.0), kappa_cap)
        info.update(lambda_max=spec.lam_max, lambda_min=spec.lam_min, lambda_max_upper=spec.lam_max_upper,
                    lambda_min_lower=spec.lam_min_lower, kappa_hat=kappa_hat)
        eta = 1.0 / spec.lam_max_upper if step_size is None else float(step_size)
        T = min(rounds_from_kappa(kappa_hat, n, int(max_rounds)), round_cap) if rounds is None else int(rounds)
    else:
        eta, T = float(step_size), int(rounds)  # type: ignore[arg-type]
    info.update(step_size=eta, rounds=T, round_cap=round_cap)

    # 3-5. rounds: a distance estimate on S_a, a noisy clipped gradient on S_b
    n_hist = T + 1 if best_iterate else T
    dist_block = gaussian_block(rounds=n_hist, mu_round=mu * math.sqrt(rest_share / n_hist), ledger=ledger_a,
                                name="distance histograms (gamma_t)", dimension=1,
                                note=f"groups of {b_dist} rows, bins of ratio 2")
    grad_block = gaussian_block(rounds=T, mu_round=mu / math.sqrt(T), ledger=ledger_b,
                                name="noisy clipped gradients", dimension=d,
                                note="sensitivity 2 Theta theta_t / m in round t")
    c = clip_factors(Xb, theta_x)
    tail_factor = math.sqrt(2.0 * math.log(2.0 / level))
    w = np.zeros(d)
    iterates, gammas, thetas = [], [], []
    for _ in range(T):
        gamma_t = private_distance_estimate(Xa, ya, w, group_size=b_dist, block=dist_block, rng=rng)
        theta_t = tail_factor * math.sqrt(gamma_t)
        grad = separately_clipped_gradient(Xb, yb, w, c, theta_t)
        noisy = grad_block.release(grad, l2_sensitivity=2.0 * theta_x * theta_t / m, rng=rng)
        iterates.append(w)
        gammas.append(gamma_t)
        thetas.append(theta_t)
        w = w - eta * noisy
    if best_iterate:
        iterates.append(w)
        gammas.append(private_distance_estimate(Xa, ya, w, group_size=b_dist, block=dist_block, rng=rng))
        g = np.asarray(gammas)
        chosen = int(np.flatnonzero(g == g.min())[-1])
        w = iterates[chosen]
        info["chosen_iterate"] = chosen
    info.update(gammas=np.asarray(gammas), thetas=np.asarray(thetas),
                part_steps={"S_a": list(ledger_a.steps), "S_b": list(ledger_b.steps)})
    notes = [f"rows split by a public random permutation: S_a = {n_a} rows for private estimates, "
             f"S_b = {m} rows for gradients; parallel composition (disjoint rows)",
             *part_notes("S_a", ledger_a), *part_notes("S_b", ledger_b),
             *([f"rounds={T} exceeds {round_cap}, the most rounds whose distance histograms clear their noise at "
                f"this n and budget: thresholds may be erratic"] if T > round_cap else []),
             f"T = {T} rounds, step size {eta:.4g}, covariate clip Theta = {theta_x:.4g}"
             + (f", output the iterate {info['chosen_iterate']} with the smallest gamma_t (DP-RobGD*)"
                if best_iterate else "")]
    assumptions = ("utility (not privacy) assumes sub-Weibull covariates and noise (Liu et al. Assumption 1), "
                   "that only labels are corrupted, and a corrupted fraction below max_corruption="
                   f"{max_corr:g} (Assumption 2)",)
    return MethodFit(params=w, assumptions=assumptions, notes=tuple(notes), info=info,
                     bse_unavailable_reason=("DP-RobGD releases the last iterate of noisy, clipped gradient descent; no private "
                                             "estimate of its sampling law under label corruption is known, so none is reported"))


SPEC = register(MethodSpec(
    name="robgd",
    title="DP-RobGD (label-robust private gradient descent)",
    citation="Liu, Jain, Kong, Oh & Suggala (NeurIPS 2023; arXiv 2301.13273), Algorithm 1",
    fit=fit,
    needs_bounds=False,
    regimes="no data bounds needed; labels possibly corrupted (up to max_corruption); large n "
            "(tens of thousands of rows); well-conditioned covariates (T grows with the condition number)",
    min_rows=lambda d: max(1000, 50 * d),
    options=("best_iterate", "gamma_fraction", "max_corruption", "clip_level", "covariate_tail", "rounds",
             "step_size", "max_rounds"),
    theory=None,
    auto_rank=None,
))
