"""AdaSSP: sufficient statistics perturbation with a private, adaptive ridge.

Wang, "Revisiting differentially private linear regression: optimal and
adaptive prediction & estimation in unbounded domain", UAI 2018, Algorithm 2.

Three Gaussian releases, each with a third of the budget (mu/sqrt(3) each in
GDP, which composes exactly to the requested (epsilon, delta); the paper's
per-release constant sqrt(ln(6/delta))/(epsilon/3) undershoots delta and is
not used):

1. lambda_min(X^T X), L2 sensitivity B_X^2 under replace-one (Weyl: the
   eigenvalues of x x^T - x' x'^T lie in [-B_X^2, B_X^2]), shifted down by
   s_1 sqrt(ln(6/delta)) so that it is below the truth with high probability;
2. X^T X, symmetric noise, sensitivity sqrt(2) B_X^2;
3. X^T y, sensitivity 2 B_X B_Y.

With ``inference=True`` (default) a fourth release, y^T y (sensitivity B_Y^2),
takes a share INFERENCE_WEIGHT of mu^2 (the other three keep equal shares),
and a parametric bootstrap that re-runs steps 1-3 on simulated releases gives
standard errors and intervals (:mod:`dpstats.inference`).

The ridge is lambda = max(0, s_2 sqrt(d ln(2 d^2 / rho)) - lambda_min~),
Wang's step 2 written with the noise sd s_2 of release 2 (his formula is the
same with his s_2 = sqrt(ln(6/delta)) B_X^2 / (epsilon/3)); the estimate
(XX~ + lambda I)^{-1} Xy~ is post-processing.

Every release is a function of X^T X, X^T y and y^T y of the clipped rows
(lambda_min is computed from the accumulated X^T X), accumulated in ssp's one
pass over the rows (:func:`dpstats.methods.ssp.statistics_pass`): the same
functions of the data whatever the partition into chunks, so the privacy
argument holds for in-memory rows, files and a Dask cluster alike.

Proof: docs/proofs/adassp.md
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpstats.errors import MethodOptionError
from dpstats.inference import (
    expected_noise_to_signal,
    floored_inverse,
    noise_propagation,
    noise_to_signal,
    parametric_bootstrap,
    plug_in_sums,
    sufficient_statistics_split,
    withholding_reason,
)
from dpstats.methods.common.extremes import square
from dpstats.methods.common.linalg import psd_projection, shared_eigh, solve_noisy_normal_equations
from dpstats.methods.common.sufficient import ReleasedStatistics, check_bounds_range
from dpstats.methods.spec import (
    AutoRule,
    FitContext,
    Inference,
    InferenceRule,
    MethodFit,
    MethodSpec,
    TheoryInputs,
)
from dpstats.methods.ssp import (
    BOOTSTRAP_DESCRIPTION,
    INFERENCE_WEIGHT,
    NO_YTY,
    SPLIT_PRIVACY,
    SPLIT_PRIVACY_NO_BOOTSTRAP,
    SPLIT_PRIVACY_WITHHELD,
    SPLIT_SAMPLING,
    SSPOptions,
    bootstrap_notes,
    release_gram,
    release_moment,
    release_yty,
    statistics_pass,
)
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, post_processing_normal
from dpstats.rates import ExpectedError, PlanningFacts, UpperRate
from dpstats.rows.base import Rows
from dpstats.validation import shown

__all__ = ["AdaSSPOptions", "fit", "WITHHOLD_ABOVE", "SPEC"]

#: noise-to-signal ratio above which adassp's bootstrap intervals are withheld: above 0.6 they covered less than
#: 0.90 in benchmarks/coverage.py (the ridge, refit in every replicate; see dpstats.inference)
WITHHOLD_ABOVE = 0.6


@dataclass(frozen=True)
class AdaSSPOptions(SSPOptions):
    """Options of ``adassp``.

    Attributes
    ----------
    rho : float
        Failure probability of the eigenvalue bound that sets the ridge (Wang's rho, in (0, 1); default 0.05).
    inference, bootstrap
        As for :class:`dpstats.methods.ssp.SSPOptions`.
    """

    rho: float = 0.05

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (isinstance(self.rho, (int, float)) and not isinstance(self.rho, bool) and 0 < self.rho < 1):
            raise MethodOptionError(f"rho must lie in (0, 1), got {shown(self.rho)}")


@shared_eigh()  # the released X^T X is decomposed once for the fit's projections, bootstrap and error split
def fit(rows: Rows, ctx: FitContext, options: AdaSSPOptions) -> MethodFit:
    """AdaSSP (Wang 2018, Alg. 2) with exact Gaussian calibration; see the module docstring."""
    bounds = ctx.require_bounds()
    check_bounds_range(bounds, ctx.n)  # public: before any row is read
    stats = rows.reduce(*statistics_pass(bounds, options))
    n, d = stats.n, stats.d
    delta = ctx.delta
    mu = gaussian_mu(ctx.epsilon, delta)
    mus = split_mu(mu, [1.0, 1.0, 1.0, INFERENCE_WEIGHT] if options.inference else [1.0, 1.0, 1.0])
    mu_lam, mu_xx, mu_xy = mus[:3]
    b2 = square(bounds.x_norm)
    rng, ledger = ctx.rng, ctx.ledger

    gram = stats.xtx
    lam_min = float(np.linalg.eigvalsh(gram)[0])
    s_lam = b2 / mu_lam
    noisy_lam = gaussian_mechanism_mu(lam_min, l2_sensitivity=b2, mu=mu_lam, rng=rng, ledger=ledger,
                                      name="noisy lambda_min(X^T X)")
    shift = s_lam * math.sqrt(math.log(6.0 / delta))
    lam_min_tilde = max(0.0, noisy_lam - shift)

    sens_xx = math.sqrt(2.0) * b2
    sigma_xx = sens_xx / mu_xx
    ridge_level = sigma_xx * math.sqrt(d * math.log(2.0 * d * d / options.rho))
    ridge = max(0.0, ridge_level - lam_min_tilde)

    xx, _ = release_gram(gram, mu_xx, bounds.x_norm, rng=rng, ledger=ledger)
    xy, sigma_xy = release_moment(stats.xty, mu_xy, bounds.x_norm, bounds.y_abs, rng=rng, ledger=ledger)
    params = solve_noisy_normal_equations(xx, xy, ridge=ridge)
    diagnostics = {"ridge": ridge, "lambda_min_tilde": lam_min_tilde, "gram_noise_sd": sigma_xx}
    if not options.inference:
        point_only = ReleasedStatistics(xx, xy, math.nan, n, sigma_xx, sigma_xy, math.nan)
        return MethodFit(params=params, diagnostics=diagnostics, rsquared_reason=NO_YTY,
                         no_inference_reason="inference=False gave the whole budget to the point estimate",
                         error_split=sufficient_statistics_split(point_only, params, sigma2=None, ridge=ridge,
                                                                 privacy_source=SPLIT_PRIVACY_NO_BOOTSTRAP))
    yy, sigma_yy = release_yty(stats.yty, mus[3], bounds.y_abs, rng=rng, ledger=ledger)
    released = ReleasedStatistics(xx, xy, yy, n, sigma_xx, sigma_xy, sigma_yy)
    lam_q = float(np.linalg.eigvalsh(psd_projection(xx))[0])

    def estimator(gram: np.ndarray, moment: np.ndarray, boot_rng: np.random.Generator) -> np.ndarray:
        lam = np.maximum(0.0, lam_q + s_lam * post_processing_normal(gram.shape[0], boot_rng) - shift)
        return solve_noisy_normal_equations(gram, moment, ridge=np.maximum(0.0, ridge_level - lam))

    ratio = noise_to_signal(released)
    # the pipeline withholds the inference on this released ratio alone: then the bootstrap is not run (every
    # release is made above, and nothing draws from the generator after it)
    withheld = bool(withholding_reason("adassp", ratio, WITHHOLD_ABOVE, None))
    draws, sigma2 = parametric_bootstrap(released, params, estimator, 0 if withheld else options.bootstrap, rng)
    notes = bootstrap_notes(ratio, {"adassp": WITHHOLD_ABOVE})
    if ridge > 0.1 * lam_min_tilde:
        notes += ("WARNING: the private ridge is not small next to the certified lambda_min(X^T X), so the "
                  "estimate is shrunk; the bootstrap corrects the bias only approximately and intervals may "
                  "under-cover (more rows, a larger epsilon or fewer columns help)",)
    return MethodFit(
        params=params,
        inference=Inference("bootstrap", draws=draws, description=BOOTSTRAP_DESCRIPTION, noise_to_signal=ratio),
        released=released, released_sums=plug_in_sums(params, released, ratio), notes=notes,
        theory_inputs=TheoryInputs(inference=True),
        error_split=sufficient_statistics_split(released, params, sigma2=sigma2, ridge=ridge,
                                                draws=None if withheld else draws,
                                                privacy_source=SPLIT_PRIVACY_WITHHELD if withheld else SPLIT_PRIVACY,
                                                sampling_source=SPLIT_SAMPLING),
        diagnostics={**diagnostics, "sigma2_hat_scaled": sigma2, "noise_to_signal": ratio})


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The privacy error of a planned adassp fit (default rho): its calibration (module docstring), the ridge it
    would choose for the assumed X^T X, the noise propagated to first order and the ridge's bias
    -ridge (X^T X + ridge I)^{-1} beta."""
    d = facts.d
    mus = split_mu(gaussian_mu(facts.epsilon, facts.delta), [1.0, 1.0, 1.0, INFERENCE_WEIGHT] if facts.inference
                   else [1.0, 1.0, 1.0])
    b2 = square(facts.x_norm)
    sigma_xx = math.sqrt(2.0) * b2 / mus[1]
    sigma_xy = 2.0 * facts.x_norm * facts.y_abs / mus[2]
    lam_tilde = max(0.0, float(np.linalg.eigvalsh(facts.gram)[0])
                    - b2 / mus[0] * math.sqrt(math.log(6.0 / facts.delta)))
    ridge = max(0.0, sigma_xx * math.sqrt(d * math.log(2.0 * d * d / AdaSSPOptions().rho)) - lam_tilde)
    solve = floored_inverse(facts.gram + ridge * np.eye(d))
    bias = -ridge * solve @ facts.coefficients
    privacy = noise_propagation(solve, facts.coefficients, sigma_xy, sigma_xx) + np.outer(bias, bias)
    return ExpectedError(privacy, noise_to_signal=expected_noise_to_signal(facts.gram, sigma_xx))


def theory_rate(guarantee: str) -> UpperRate:
    """adassp has no proved rate for ||b - beta||_2 in the minimax model; its expected error comes from its
    calibration."""
    return UpperRate(why_none="Wang (2018) bounds the excess empirical risk for bounded data, not ||b - beta||_2 in "
                              "this model", expected_error=expected_error)


SPEC = MethodSpec(
    name="adassp",
    title="AdaSSP (adaptive sufficient statistics perturbation)",
    citation="Wang (UAI 2018), Algorithm 2",
    fit=fit,
    options=AdaSSPOptions,
    needs_bounds=True,
    null_rows=True,
    gaussian_only=True,
    regimes="bounded data of any n; adapts its ridge to lambda_min(X^T X); the default when bounds are given",
    inference_rule=InferenceRule("bootstrap", withhold_above=WITHHOLD_ABOVE),
    theory_rate=theory_rate,
    auto_rules=(AutoRule(rank=15, bounds="all", why=(
        "with bounds declared, it is one pass over the data and its privacy error is below the sampling error at "
        "n >= 10^5")),),
    first_pass=statistics_pass,
)
