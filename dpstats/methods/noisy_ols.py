"""Noisy OLS: least squares on truncated labels plus Gaussian noise (Cai, Wang & Zhang 2021, Thm 19).

The estimator of Cai, Wang & Zhang ("The cost of privacy", Ann. Statist. 2021,
section 5.4.3) is

    beta_T = beta_hat(X, f_T(y)) + W,    beta_hat(X, v) = (X^T X)^{-1} X^T v,

with f_T the truncation of each label to [-T, T] and W ~ N(0, s_W^2 I_d).  The
paper calibrates s_W for data that are well behaved with high probability
(Thm 19: "with high probability, beta_T is (epsilon, delta)-DP"), which is not
a worst-case guarantee.

Default, ``guarantee="worst-case"``: (epsilon, delta)-DP for every data set
---------------------------------------------------------------------------
Rows of X are clipped column-wise to the declared bounds (so ||x||_2 <= B_X =
``bounds.x_norm``) and labels to the declared range, then truncated at
T <= B_Y = ``bounds.y_abs``; n is public; neighbours replace one row.

*Sensitivity of OLS given a lower bound on lambda_min* [derived].  Let D' replace
the row (x, y) of D by (x', y'), write v = f_T(y), G = X^T X, r = X^T v and
G' = G - x x^T + x' x'^T, r' = r - x v + x' v'.  If lambda_min(G) >= L and
lambda_min(G') >= L for some L > 0, then b = G^{-1} r and b' = G'^{-1} r' satisfy

    G'(b - b') = G b - x x^T b + x' x'^T b - r' = x (v - x^T b) - x' (v' - x'^T b),

so ||b - b'||_2 <= (B_X / L) (2T + |x^T b| + |x'^T b|).  With H = X G^{-1} X^T
the hat matrix (an orthogonal projection),
||b||_2 = ||G^{-1/2} G^{-1/2} X^T v||_2 <= L^{-1/2} (v^T H v)^{1/2} <= L^{-1/2} ||v||_2
<= T sqrt(n / L), hence |u^T b| <= B_X T sqrt(n/L) for ||u||_2 <= B_X and

    Delta(L) = 2 B_X T (1 + B_X sqrt(n / L)) / L                        (*)

bounds the L2 change of the OLS solution.  (The paper's sqrt(d) T / n order
holds on its good event |x^T b| <~ T; without it the worst case has the extra
factor B_X sqrt(n/L), attained by data with small rows and large labels.)

*Private lower bound on lambda_min (AdaSSP-style, Wang 2018).*  Under
replace-one, G' - G = x' x'^T - x x^T has eigenvalues in [-B_X^2, B_X^2], so by
Weyl's inequality lambda_min(G) has sensitivity B_X^2.  Release
lambda~ = lambda_min(G) + N(0, s_1^2) with s_1 = B_X^2 / mu_1 and set

    L = lambda~ - s_1 z_{1-gamma} - B_X^2,       z_{1-gamma} = Phi^{-1}(1 - gamma).

With probability >= 1 - gamma (over the noise, for the data set D at hand)
lambda~ - s_1 z_{1-gamma} <= lambda_min(G), and then L <= lambda_min(G) - B_X^2
<= lambda_min(G - x x^T) <= lambda_min(G') for every neighbour D' (Weyl again),
so (*) holds for every pair (D, D').  If L <= 0 the fit refuses with
:class:`~dpstats.errors.IllConditionedDesignError`: the refusal is
post-processing of lambda~, so it costs exactly the check.  So does a
positive L so small that Delta(L) cannot be sampled in double precision.

*Privacy proof.*  Otherwise the fit releases b + N(0, s_2^2 I) with
s_2 = Delta(L) / mu_2.  Fix neighbours (D, D') and let P be the joint law of
(lambda~, released b) on D, Q that on D'.  Let P_bar equal P except that on the
event "lambda~ - s_1 z > lambda_min(G)" (probability gamma under D) the second
release is centred at b' instead of b.  Then P(S) <= P_bar(S) + gamma for every
event S.  Under P_bar versus Q the first coordinate is a Gaussian shift of at
most B_X^2 = mu_1 s_1, and given lambda~ the second is a Gaussian shift of
at most Delta(L) = mu_2 s_2 (on the good event by (*), elsewhere zero), so by
adaptive composition of Gaussian differential privacy (Dong, Roth & Su 2022,
Thm 3.2) P_bar and Q are mu-GDP with mu^2 = mu_1^2 + mu_2^2, i.e.
(epsilon, delta_mu(epsilon))-indistinguishable (Balle & Wang 2018, Thm 8).
Hence P(S) <= e^epsilon Q(S) + delta_mu(epsilon) + gamma, and symmetrically.
The budget is therefore split as mu = gaussian_mu(epsilon, delta - gamma),
mu_1^2 = share * mu^2, mu_2^2 = (1 - share) mu^2, and the ledger records two
Gaussian steps plus one (0, gamma) approximate-DP step for the failure
probability of the bound; its composition gives exactly (epsilon, delta).

*Inference* (``inference=True``, the default).  Two more Gaussian releases
of worst-case bounded sensitivity give standard errors and intervals: the
clipped X^T X (symmetric noise on the upper triangle, replace-one L2
sensitivity ||x x^T - x' x'^T||_F <= sqrt(2) B_X^2) and v^T v of the
truncated labels (sensitivity T^2).  They take INFERENCE_SHARE of mu^2, half
each; the lambda_min check and the coefficients share the rest as above
(mu_1^2 = share (1 - INFERENCE_SHARE) mu^2, mu_2^2 = (1 - share)(1 -
INFERENCE_SHARE) mu^2).  In the proof they are two more Gaussian coordinates,
unaffected by the P_bar construction (their sensitivity holds for every pair),
so the GDP composition and the (0, gamma) step are unchanged.  They are drawn
after the refusal check (a refusal spends nothing on them) and before the
coefficients (the order is immaterial to privacy; this one lets the ledger
compose the three Gaussian steps exactly before its one PLD step).  The
covariance sigma^2_hat (XX~)^{-1} + s_2^2 I (:func:`dpstats.inference.
noisy_estimate_covariance`) uses only released values: the noisy X^T X with
its eigenvalues floored at the released lower bound lam~ - s_1 z_{1-gamma} on
lambda_min(X^T X), the noisy v^T v, the released coefficients and their
released noise sd s_2; the module docstring of :mod:`dpstats.inference`
explains why this is the exact limit of the parametric bootstrap of the
whole release conditionally on the released s_2.  ``inference=False`` gives
the whole budget to the lambda_min check and the coefficients.

Opt-in, ``guarantee="conditional"``: the paper's calibration
---------------------------------------------------------------
The whole budget goes to W with sensitivity 4 B_X T / (n lambda_0), which is (*)
evaluated on the paper's good event: lambda_min(X^T X) >= n lambda_0 for D and
its neighbours, and |x^T b| <= T for the replaced and the replacing rows
(Thm 19's assumptions: bounded covariates with 1/Lambda < lambda_min(Sigma_X),
sigma-sub-Gaussian errors and T >= K sigma sqrt(log n)).  Privacy then holds
only with high probability over data drawn from that model; the fit says so
in its report.  lambda_0 (the paper's 1/Lambda) must be given as
``min_eigenvalue``.  With ``inference=True`` the same two inference releases
(worst-case DP on their own) take INFERENCE_SHARE of mu^2, and the covariance
is computed in the same way with the eigenvalues of XX~ floored at its noise
sd (the assumed lambda_0 is not used for inference).  Calibration is exact
(analytic Gaussian), not the paper's sqrt(2 log(1.25/delta))/epsilon
constant.

Units: the method sees the design the API hands it.  With every bound
declared, :func:`dpstats.dp_ols` and :func:`dpstats.dp_ols_arrays` first
rescale the columns and the response to [-1, 1] with the declared ranges
(public rescaling, on by default), so ``truncation`` is then a fraction of
the response's declared half-range and ``min_eigenvalue`` refers to the
rescaled columns; with ``rescale=False`` both are in the data's own units.

Cost: O(n d^2 + d^3).

The fit uses the data only through X^T X (its lambda_min and the normal
equations), X^T f_T(y) and f_T(y)^T f_T(y) of the clipped rows, accumulated
in one pass over the rows (:class:`~dpstats.methods.common.sufficient.StatisticsPass`);
the OLS solution is computed from the normal equations (G b = X^T f_T(y),
minimum-norm on a null space), which is the least-squares solution used in
the proof.  The released quantities are the same functions of the data
whatever the partition into chunks (only the order of the floating-point
additions changes), so the privacy argument holds for in-memory rows, files
and a Dask cluster alike.

Proof: docs/proofs/noisy_ols.md
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from dpstats.bounds import DataBounds
from dpstats.errors import IllConditionedDesignError, MethodOptionError, NoiseScaleRangeError
from dpstats.inference import noisy_estimate_covariance, output_perturbation_sums
from dpstats.methods.common.extremes import square
from dpstats.methods.common.linalg import solve_noisy_normal_equations
from dpstats.methods.common.sufficient import (
    StatisticsPass,
    StatisticsPlan,
    SufficientStatistics,
    add_statistics,
    check_bounds_range,
)
from dpstats.methods.spec import (
    ErrorSplit,
    FitContext,
    Inference,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
    TheoryInputs,
    check_bool,
)
from dpstats.methods.ssp import NO_YTY, release_yty
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, symmetric_gaussian_mechanism
from dpstats.privacy.samplers import gaussian_plan
from dpstats.rates import CAI, MODEL, ExpectedError, PlanningFacts, Rate, UpperRate, classical_n, log_inv
from dpstats.rows.base import Combine, Rows
from dpstats.validation import shown

#: share of the GDP budget mu^2 spent on the inference releases (noisy X^T X and v^T v, half each) when
#: inference=True; chosen by experiment (benchmarks/coverage.py --split noisy_ols, results in
#: benchmarks/results/coverage_split_noisy_ols.md): at n = 20000, epsilon = 3 (where sampling error weighs most)
#: shares 0.01, 0.05 and 0.2 all cover 0.949-0.954, and the width grows with the share as the coefficients'
#: noise does (about 1 / sqrt(1 - share): +2% at 0.05, +11% at 0.2 against 0.01).  0.05 keeps a margin for
#: noisier X^T X at small n for 2% of width, and is the share the full coverage study validated.
INFERENCE_SHARE = 0.05

NO_INFERENCE = "inference=False gave the whole budget to the point estimate"

INFERENCE_METHOD = ("Gaussian: released noise sd of the coefficients plus the sampling covariance "
                    "sigma^2 (X^T X)^-1 from a noisy X^T X and y^T y (dpstats.inference.noisy_estimate_covariance)")

#: how noisy_ols's error split is computed (the summary's error block)
SPLIT_PRIVACY = "the released noise sd of the coefficients"
SPLIT_SAMPLING = "sigma^2 (X^T X)^-1 from the noisy X^T X and y^T y released for inference"

__all__ = ["NoisyOLSOptions", "ols_sensitivity", "fit", "statistics_pass", "INFERENCE_SHARE", "SPEC"]

_GUARANTEES = ("worst-case", "conditional")


def _positive(value: object, name: str) -> float:
    """``value`` as a finite float > 0, or a MethodOptionError naming the option."""
    try:
        v = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        v = math.nan
    if not (v > 0 and math.isfinite(v)):
        raise MethodOptionError(f"{name} must be a finite number > 0, got {shown(value)}")
    return v


@dataclass(frozen=True)
class NoisyOLSOptions(MethodOptions):
    """Options of ``noisy_ols``.

    Attributes
    ----------
    truncation : float or None
        T of f_T (labels truncated to [-T, T]); default and maximum: B_Y, the declared bound on |y|.
    guarantee : str
        ``"worst-case"`` (default) or ``"conditional"`` (the paper's calibration; DP only with high probability
        under its assumptions).
    min_eigenvalue : float or None
        Conditional only, and required there: lambda_0, the assumed lower bound on lambda_min(X^T X) / n (the
        paper's 1/Lambda).
    eigen_share : float or None
        Worst-case only: share of the GDP budget mu^2 spent on the private lower bound on lambda_min(X^T X)
        (default 0.2).
    eigen_failure : float or None
        Worst-case only: probability gamma that the lower bound fails, paid as delta (default delta / 10; must
        lie in (0, delta)).
    inference : bool
        Spend INFERENCE_SHARE of the budget on a noisy X^T X and y^T y and return standard errors and
        intervals (default).  ``False`` gives the whole budget to the point estimate.
    """

    truncation: float | None = None
    guarantee: str = "worst-case"
    min_eigenvalue: float | None = None
    eigen_share: float | None = None
    eigen_failure: float | None = None
    inference: bool = True

    def __post_init__(self) -> None:
        check_bool(self.inference, "inference")
        if self.guarantee not in _GUARANTEES:
            raise MethodOptionError(f"guarantee must be one of {', '.join(_GUARANTEES)}, got {shown(self.guarantee)}")
        if self.truncation is not None:
            _positive(self.truncation, "truncation")
        if self.guarantee == "conditional":
            if self.eigen_share is not None or self.eigen_failure is not None:
                raise MethodOptionError("eigen_share and eigen_failure belong to the worst-case fit; "
                                        "guarantee='conditional' does not check lambda_min")
            if self.min_eigenvalue is None:
                raise MethodOptionError(
                    "guarantee='conditional' needs min_eigenvalue=lambda_0, the assumed lower bound on "
                    "lambda_min(X^T X)/n for the data and every neighbour (Cai et al.'s 1/Lambda)")
            _positive(self.min_eigenvalue, "min_eigenvalue")
            return
        if self.min_eigenvalue is not None:
            raise MethodOptionError("min_eigenvalue is an assumption of guarantee='conditional' only; the worst-case "
                                    "fit bounds lambda_min privately")
        for name in ("eigen_share", "eigen_failure"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise MethodOptionError(f"{name} must be a number, got a {type(value).__name__}")
        if not 0 < self.share < 1:
            raise MethodOptionError(f"eigen_share must lie in (0, 1), got {shown(self.eigen_share)}")

    def validate_for(self, *, delta: float) -> None:
        if self.guarantee == "worst-case":
            gamma = self.failure_probability(delta)
            if not 0 < gamma < delta:
                raise MethodOptionError(f"eigen_failure must lie in (0, delta={delta:g}), got "
                                        f"{shown(self.eigen_failure)}")

    @property
    def share(self) -> float:
        """The worst-case fit's share of mu^2 for the lambda_min check."""
        return 0.2 if self.eigen_share is None else float(self.eigen_share)

    def failure_probability(self, delta: float) -> float:
        """gamma, the probability that the worst-case fit's lambda_min bound fails (paid as delta)."""
        return delta / 10.0 if self.eigen_failure is None else float(self.eigen_failure)

    def label_bound(self, y_abs: float) -> float:
        """T: the truncation, at most the declared bound B_Y on |y|."""
        return y_abs if self.truncation is None else min(float(self.truncation), y_abs)


def statistics_pass(bounds: DataBounds | None, options: NoisyOLSOptions
                    ) -> tuple[StatisticsPass, Combine[SufficientStatistics]]:
    """The one pass of noisy OLS: X^T X, X^T f_T(y), f_T(y)^T f_T(y) of the clipped rows (needs no n)."""
    if bounds is None:
        raise ValueError("noisy_ols needs the public clip ranges")
    return StatisticsPass(bounds, StatisticsPlan(label_truncation=options.label_bound(bounds.y_abs))), add_statistics


def ols_sensitivity(x_norm: float, label_bound: float, n: int, lambda_lower: float) -> float:
    """Replace-one L2 sensitivity (*) of OLS on labels in [-T, T] and rows of norm <= B_X.

    Valid for every neighbouring pair whose Gram matrices both have
    lambda_min >= ``lambda_lower`` (derivation in the module docstring).
    """
    if not lambda_lower > 0:
        raise ValueError("lambda_lower must be > 0")
    return 2.0 * x_norm * label_bound * (1.0 + x_norm * math.sqrt(n / lambda_lower)) / lambda_lower


def fit(rows: Rows, ctx: FitContext, options: NoisyOLSOptions) -> MethodFit:
    """Noisy OLS (Cai, Wang & Zhang 2021, Thm 19); worst-case DP unless ``guarantee="conditional"``."""
    bounds = ctx.require_bounds()
    options.validate_for(delta=ctx.delta)
    check_bounds_range(bounds, ctx.n)  # public: before any row is read
    stats = rows.reduce(*statistics_pass(bounds, options))
    T = options.label_bound(bounds.y_abs)
    inference_share = INFERENCE_SHARE if options.inference else 0.0
    if options.guarantee == "conditional":
        lam0 = _positive(options.min_eigenvalue, "min_eigenvalue")
        return _fit_conditional(stats, T, bounds, lam0, inference_share, epsilon=ctx.epsilon, ledger=ctx.ledger,
                                rng=ctx.rng)
    return _fit_worst_case(stats, T, bounds, options.share, options.failure_probability(ctx.delta), inference_share,
                           epsilon=ctx.epsilon, ledger=ctx.ledger, rng=ctx.rng)


def _least_squares(stats: SufficientStatistics) -> np.ndarray:
    """The (minimum-norm) least-squares solution from the normal equations X^T X b = X^T f_T(y)."""
    return solve_noisy_normal_equations(stats.xtx, stats.xty)


def _fit_worst_case(stats: SufficientStatistics, T: float, bounds: DataBounds, share: float, gamma: float,
                    inference_share: float, *, epsilon: float, ledger: PrivacyLedger,
                    rng: np.random.Generator) -> MethodFit:
    """The worst-case calibration (module docstring): a private lambda_min bound certifies the sensitivity."""
    n = stats.n
    b_x = bounds.x_norm
    delta = ledger.delta

    mu = gaussian_mu(epsilon, delta - gamma)
    mu_1, mu_2, *mus_inference = _split(mu, [share, 1.0 - share], inference_share)
    b2 = b_x * b_x
    lam_min = float(np.linalg.eigvalsh(stats.xtx)[0])
    noisy_lam = gaussian_mechanism_mu(lam_min, l2_sensitivity=b2, mu=mu_1, rng=rng, ledger=ledger,
                                      name="noisy lambda_min(X^T X)")
    s_1 = b2 / mu_1
    lam_certified = noisy_lam - s_1 * float(-ndtri(gamma))  # <= lambda_min(X^T X) with probability 1 - gamma
    lam_lower = lam_certified - b2
    if not lam_lower > 0:
        spent = ledger.spent
        raise IllConditionedDesignError(
            f"noisy_ols refused: the private lower bound on lambda_min(X^T X) is {lam_lower:.4g} <= 0 after "
            f"subtracting its noise margin ({s_1 * float(-ndtri(gamma)):.4g}) and one row's B_X^2={b2:.4g}, so no "
            "finite sensitivity can be certified. The check spent "
            f"epsilon={spent[0]:.4g}, delta={spent[1]:.3g} of this fit's budget; nothing else was released. "
            "More rows, tighter bounds on the columns, a larger epsilon, or method='adassp' (which adds a "
            "private ridge instead of refusing) can help.", privacy_spent=spent)
    sens = ols_sensitivity(b_x, T, n, lam_lower)
    if not _samplable(sens, mu_2, stats.d):  # post-processing of the released bound: refused before more releases
        spent = ledger.spent
        raise IllConditionedDesignError(
            f"noisy_ols refused: the private lower bound on lambda_min(X^T X) is {lam_lower:.4g}, so small that "
            f"the certified sensitivity of the coefficients ({sens:.4g}) cannot be sampled in double precision. "
            f"The check spent epsilon={spent[0]:.4g}, delta={spent[1]:.3g} of this fit's budget; nothing else was "
            "released. More rows, tighter bounds on the columns or a larger epsilon help, or method='adassp'.",
            privacy_spent=spent)
    # the inference releases come before the (0, gamma) step: the ledger then composes three Gaussian steps
    # exactly (GDP) and needs one PLD composition fewer per fit; the order does not matter for privacy
    released = _inference_releases(stats, bounds, T, mus_inference, ledger=ledger, rng=rng) if mus_inference else None
    ledger.charge(PrivacyStep(
        "failure probability of the lambda_min lower bound", "approximate-dp", 0.0, "-", math.nan, epsilon=0.0,
        delta=gamma, note="the OLS sensitivity holds unless the noisy lambda_min exceeds the truth by more "
                          "than its margin (probability gamma)"))
    # on the event the bound certifies, ||beta_hat|| <= T sqrt(n / L) is finite; outside it (probability gamma,
    # paid as delta) an overflowing solution is released as 0, a public value, rather than as inf
    beta_hat = np.nan_to_num(_least_squares(stats), nan=0.0, posinf=0.0, neginf=0.0)
    params = np.asarray(gaussian_mechanism_mu(beta_hat, l2_sensitivity=sens, mu=mu_2, rng=rng, ledger=ledger,
                                              name="noisy OLS coefficients"))
    return _with_inference(
        params, sens / mu_2, released, n=n, label_bound=T, eigen_floor=lam_certified,
        diagnostics={"truncation": T, "lambda_min_lower": lam_lower, "sensitivity": sens}, guarantee="worst-case",
        notes=(f"labels truncated to [-{T:.4g}, {T:.4g}] (Cai et al.'s f_T); the OLS sensitivity "
               f"{sens:.4g} is certified by a private lower bound {lam_lower:.4g} on lambda_min(X^T X)",))


def _samplable(sensitivity: float, mu: float, dimension: int) -> bool:
    """Whether a Gaussian release of this sensitivity (public, or set by released values) has a grid in double
    precision (:func:`~dpstats.privacy.samplers.gaussian_plan`)."""
    if not math.isfinite(sensitivity):
        return False
    try:
        gaussian_plan(sensitivity, mu, dimension)
    except NoiseScaleRangeError:
        return False
    return True


def _split(mu: float, weights: list[float], inference_share: float) -> np.ndarray:
    """mu_i for the point-estimate releases (``weights``, scaled to 1 - inference_share of mu^2) followed by
    the two inference releases (inference_share / 2 each), when inference_share > 0."""
    total = sum(weights)
    w = [(1.0 - inference_share) * x / total for x in weights]
    if inference_share > 0:
        w += [inference_share / 2.0, inference_share / 2.0]
    return split_mu(mu, w)


@dataclass(frozen=True)
class _InferenceRelease:
    """The noisy X^T X and f_T(y)^T f_T(y) released for inference, and their public noise sds."""

    gram: np.ndarray
    gram_noise_sd: float
    yty: float
    yty_noise_sd: float


def _inference_releases(stats: SufficientStatistics, bounds: DataBounds, T: float, mus: list[float], *,
                        ledger: PrivacyLedger, rng: np.random.Generator) -> _InferenceRelease:
    """Release noisy X^T X (replace-one L2 sensitivity sqrt(2) B_X^2) and f_T(y)^T f_T(y) (sensitivity T^2)."""
    mu_xx, mu_yy = mus
    sens_xx = math.sqrt(2.0) * square(bounds.x_norm)
    xx = symmetric_gaussian_mechanism(stats.xtx, l2_sensitivity=sens_xx, mu=mu_xx, rng=rng, ledger=ledger,
                                      name="noisy X^T X (for inference)")
    yy, sigma_yy = release_yty(stats.yty, mu_yy, T, rng=rng, ledger=ledger)
    return _InferenceRelease(xx, sens_xx / mu_xx, yy, sigma_yy)


def _with_inference(params: np.ndarray, noise_sd: float, released: _InferenceRelease | None, *, n: int,
                    label_bound: float, eigen_floor: float, diagnostics: dict[str, object], **fields: object
                    ) -> MethodFit:
    """The fit, with the covariance of the released coefficients from released values only when the inference
    releases were made (module docstring, "Inference")."""
    inference, sums = None, None
    diagnostics = {**diagnostics, "noise_sd": noise_sd}
    privacy = noise_sd**2 * np.eye(params.size)  # the released noise of the coefficients: exactly the privacy part
    split = ErrorSplit(privacy, None, SPLIT_PRIVACY)
    if released is not None:
        cov, sigma2 = noisy_estimate_covariance(params, noise_sd, released.gram, released.yty, n=n,
                                                yty_noise_sd=released.yty_noise_sd, label_bound=label_bound,
                                                eigen_floor=max(eigen_floor, released.gram_noise_sd))
        inference = Inference("normal", cov=cov, description=INFERENCE_METHOD)
        split = ErrorSplit(privacy, cov - privacy, SPLIT_PRIVACY, SPLIT_SAMPLING)
        sums = output_perturbation_sums(params, noise_sd, released.gram, released.gram_noise_sd, released.yty,
                                        released.yty_noise_sd)
        diagnostics.update(sigma2_hat_scaled=sigma2, inference_method=INFERENCE_METHOD)
    return MethodFit(params=params, inference=inference, no_inference_reason=NO_INFERENCE, released_sums=sums,
                     rsquared_reason="" if sums is not None else NO_YTY,
                     theory_inputs=TheoryInputs(inference=released is not None), diagnostics=diagnostics,
                     error_split=split, **fields)  # type: ignore[arg-type]


def _fit_conditional(stats: SufficientStatistics, T: float, bounds: DataBounds, lam0: float, inference_share: float,
                     *, epsilon: float, ledger: PrivacyLedger, rng: np.random.Generator) -> MethodFit:
    """The paper's calibration on its good event (module docstring); DP only with high probability."""
    n = stats.n
    sens = 4.0 * bounds.x_norm * T / (n * lam0)
    mu = gaussian_mu(epsilon, ledger.delta)
    mu_coef, *mus_inference = _split(mu, [1.0], inference_share)
    released = _inference_releases(stats, bounds, T, mus_inference, ledger=ledger, rng=rng) if mus_inference else None
    beta_hat = _least_squares(stats)
    params = np.asarray(gaussian_mechanism_mu(beta_hat, l2_sensitivity=sens, mu=mu_coef, rng=rng, ledger=ledger,
                                              name="noisy OLS coefficients (conditional calibration)"))
    assumptions = (
        "CONDITIONAL PRIVACY: the (epsilon, delta) guarantee holds only with high probability over data drawn "
        "from Cai, Wang & Zhang's model (Thm 19), not for every data set.",
        f"It assumes lambda_min(X^T X) >= n * {lam0:.4g} for the data and for every data set that differs in one "
        "row (the declared min_eigenvalue), i.e. a well-conditioned covariate covariance.",
        f"It assumes |x^T b| <= T = {T:.4g} for the OLS fit b and every row x, which holds with high probability "
        "when the errors are sigma-sub-Gaussian, ||beta||_2 is bounded and T >= K sigma sqrt(log n).",
        "If these assumptions fail for the actual data, the released coefficients may reveal more than "
        "epsilon allows.",
    )
    return _with_inference(params, sens / mu_coef, released, n=n, label_bound=T, eigen_floor=0.0,
                           diagnostics={"truncation": T, "sensitivity": sens}, assumptions=assumptions,
                           guarantee="conditional",
                           notes=(f"labels truncated to [-{T:.4g}, {T:.4g}] (Cai et al.'s f_T)",))


def _worst_case_conditions(n: float, d: int, epsilon: float, delta: float, s: int) -> list[str]:
    out = classical_n(n, d, epsilon, delta, s)
    need = d * math.sqrt(log_inv(delta)) / epsilon
    if n < need:
        out.append(f"n={n:g} < d sqrt(log(1/delta))/eps = {need:.3g}: the private lambda_min check is likely "
                   "to refuse (up to constants)")
    return out


#: Thm 19's rate for the paper's (conditional) calibration
CONDITIONAL_RATE = Rate(
    "upper", "noisy_ols upper bound (conditional calibration)", f"{CAI} Thm 19",
    "sqrt(d/n) + d sqrt(log(1/delta) log n)/(n eps)",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d * math.sqrt(log_inv(dl) * math.log(n)) / (n * e),
    classical_n, (MODEL, "T >= K sigma sqrt(log n); DP only with high probability under the model"),
    n_min=lambda d, s: max(5.0, d + 1.0))

#: [derived] the worst-case sensitivity 2 B_X T (1 + B_X sqrt(n/L))/L in Thm 19's model (B_X <~ sqrt(d),
#: L ≍ n/Lambda, T ≍ sigma sqrt(log n)) gives noise of norm d^{3/2} sqrt(log(1/delta) log n)/(n eps), a factor
#: sqrt(d) above Thm 19
WORST_CASE_RATE = Rate(
    "upper", "noisy_ols upper bound (worst-case calibration)", f"{CAI} Thm 19 with dpstats' worst-case "
    "sensitivity [derived]",
    "sqrt(d/n) + d^(3/2) sqrt(log(1/delta) log n)/(n eps)",
    lambda n, d, s: math.sqrt(d / n),
    lambda n, d, e, dl, s: d ** 1.5 * math.sqrt(log_inv(dl) * math.log(n)) / (n * e),
    _worst_case_conditions, (MODEL, "T ≍ sigma sqrt(log n)"), n_min=lambda d, s: max(5.0, d + 1.0))


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The privacy error of a planned worst-case fit with the default options: the noisy lambda_min check at its
    expected value (a refusal when the certified bound is not positive), the sensitivity (*) it certifies, and
    the released noise s^2 I of the coefficients."""
    options = NoisyOLSOptions(inference=facts.inference)
    gamma = options.failure_probability(facts.delta)
    mu = gaussian_mu(facts.epsilon, facts.delta - gamma)
    mu_1, mu_2, *_ = _split(mu, [options.share, 1.0 - options.share], INFERENCE_SHARE if facts.inference else 0.0)
    b2 = square(facts.x_norm)
    margin = b2 / mu_1 * float(-ndtri(gamma))
    lam_lower = float(np.linalg.eigvalsh(facts.gram)[0]) - margin - b2
    if not lam_lower > 0:
        return ExpectedError(None, refusal=(f"the private lambda_min check would refuse: lambda_min(X^T X) is about "
                                            f"{lam_lower + margin + b2:.3g}, not above its noise margin {margin:.3g} "
                                            f"plus one row's B_X^2 = {b2:.3g}"))
    noise_sd = ols_sensitivity(facts.x_norm, facts.y_abs, facts.n, lam_lower) / mu_2
    return ExpectedError(noise_sd**2 * np.eye(facts.d))


def theory_rate(guarantee: str) -> UpperRate:
    """Thm 19 for the conditional calibration, its worst-case version otherwise; with inference the rate is
    evaluated at the point estimate's budget (INFERENCE_SHARE of mu^2 goes to the inference releases).  The
    worst-case fit's expected error comes from its calibration (the conditional one depends on an assumed
    lambda_0: planned with the rate)."""
    if guarantee == "conditional":
        return UpperRate(CONDITIONAL_RATE, inference_share=INFERENCE_SHARE)
    return UpperRate(WORST_CASE_RATE, inference_share=INFERENCE_SHARE, expected_error=expected_error)


SPEC = MethodSpec(
    name="noisy_ols",
    title="Noisy OLS on truncated labels",
    citation="Cai, Wang & Zhang (Ann. Statist. 2021), Thm 19",
    fit=fit,
    options=NoisyOLSOptions,
    needs_bounds=True,
    null_rows=True,
    regimes=("bounded data with n much larger than d (n >~ 200 d at epsilon=1); refuses when a private check "
             "cannot certify lambda_min(X^T X)"),
    inference_rule=InferenceRule("normal"),
    theory_rate=theory_rate,
    first_pass=statistics_pass,
)
