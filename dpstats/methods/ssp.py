"""Sufficient statistics perturbation (SSP).

Foulds, Geumlek, Welling & Chaudhuri (UAI 2016); the Gaussian variant used as
a baseline by Wang (UAI 2018) and by Liu et al. (2023, "DP-SSP").

This module is the reference example of an estimator (see
``docs/architecture.md``, "Adding an estimator"): an options dataclass, one
``fit(rows, ctx, options)`` that reads the data in one pass and releases
through the ledger, and its ``SPEC = MethodSpec(...)``, which
:mod:`dpstats.methods.registry` imports and registers.

Privacy (replace-one neighbours, n public, worst case given the declared
bounds, which are enforced by clipping rows of X column-wise and y):

* X^T X: releasing its upper triangle, a replaced row changes it by at most
  ||x x^T - x' x'^T||_F <= sqrt(2) B_X^2 in L2 (with ||x||, ||x'|| <= B_X);
* X^T y: ||x y - x' y'||_2 <= 2 B_X B_Y;
* y^T y (only with ``inference=True``): |y^2 - y'^2| <= B_Y^2.

All are Gaussian releases.  The (epsilon, delta) budget is converted to a GDP
parameter mu exactly (Balle & Wang 2018) and split as mu_i = mu sqrt(w_i / sum
w) with weights 1 : 1 (: INFERENCE_WEIGHT); GDP composition of Gaussians is
exact, so the releases together are exactly (epsilon, delta)-DP.  The estimate
(XX~)^{-1} Xy~ is post-processing; an indefinite XX~ has its eigenvalues
floored at the noise scale of the X^T X release (public).  Standard errors and
intervals come from a parametric bootstrap on the released values
(:mod:`dpstats.inference`).

The three sums are accumulated in one pass over the rows
(:class:`~dpstats.methods.common.sufficient.StatisticsPass`): the same
functions of the data whatever the partition into chunks (only the order of
the floating-point additions changes), so the argument above holds for
in-memory rows, files and a Dask cluster alike.

Proof: docs/proofs/ssp.md
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dpstats.bounds import DataBounds
from dpstats.errors import MethodOptionError
from dpstats.inference import (
    RELIABILITY_THRESHOLD,
    expected_noise_to_signal,
    floored_inverse,
    noise_propagation,
    noise_to_signal,
    parametric_bootstrap,
    plug_in_sums,
    sufficient_statistics_split,
    unreliable_note,
    withholding_reason,
)
from dpstats.methods.common.extremes import square
from dpstats.methods.common.linalg import shared_eigh, solve_noisy_normal_equations
from dpstats.methods.common.sufficient import (
    ReleasedStatistics,
    StatisticsPass,
    SufficientStatistics,
    add_statistics,
    check_bounds_range,
)
from dpstats.methods.spec import (
    FitContext,
    Inference,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
    TheoryInputs,
    check_bool,
)
from dpstats.privacy.calibration import gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, symmetric_gaussian_mechanism
from dpstats.rates import ExpectedError, PlanningFacts, UpperRate
from dpstats.rows.base import Combine, Rows
from dpstats.validation import shown

__all__ = ["SSPOptions", "fit", "statistics_pass", "release_gram", "release_moment", "release_yty",
           "INFERENCE_WEIGHT", "WITHHOLD_ABOVE", "NO_YTY", "SPEC"]

#: share of the GDP budget (mu^2) given to y^T y when inference is on, relative to 1 for X^T X and 1 for
#: X^T y; chosen by experiment (benchmarks/coverage.py --split): sigma^2 needs little precision at any n
#: where the point estimate is useful, and 0.1 costs the point estimate about 2% more noise.
INFERENCE_WEIGHT = 0.1

#: noise-to-signal ratio above which ssp's bootstrap intervals are withheld: up to 10 they covered at least
#: 0.89 in benchmarks/coverage.py (see "When inference is withheld" in dpstats.inference)
WITHHOLD_ABOVE = 10.0

BOOTSTRAP_DESCRIPTION = "parametric bootstrap on released values"

#: how the error split of the sufficient-statistics methods is computed (the summary's error block)
SPLIT_PRIVACY = ("the released noise sds of X^T X and X^T y propagated through the released X^T X, plus the bias "
                 "and non-linearity the bootstrap shows")
SPLIT_PRIVACY_NO_BOOTSTRAP = "the released noise sds of X^T X and X^T y propagated through the released X^T X"
#: the privacy part of a fit whose inference its released noise-to-signal ratio withholds: the bootstrap is not run
SPLIT_PRIVACY_WITHHELD = (f"{SPLIT_PRIVACY_NO_BOOTSTRAP} (no bootstrap: the noise-to-signal ratio withholds the "
                          "inference)")
SPLIT_SAMPLING = "sigma^2 (X^T X)^-1 from the released X^T X and y^T y"

#: why a fit with inference=False has no private R^2
NO_YTY = "inference=False: y^T y, which R^2 needs, was not released"


#: the most bootstrap replicates (as Theil-Sen's): 2**31 of them ran out of memory after the budget was spent
MAX_BOOTSTRAP = 1 << 20


def check_bootstrap(bootstrap: object) -> None:
    """Refuse a number of bootstrap replicates that is not an integer in [100, MAX_BOOTSTRAP], before anything is
    spent (beyond the cap the replicates' arrays exhaust memory after the release)."""
    if (isinstance(bootstrap, bool) or not isinstance(bootstrap, (int, np.integer))
            or not 100 <= bootstrap <= MAX_BOOTSTRAP):
        raise MethodOptionError(f"bootstrap must be an integer in [100, {MAX_BOOTSTRAP}] (number of bootstrap "
                                f"replicates), got {shown(bootstrap)}")


@dataclass(frozen=True)
class SSPOptions(MethodOptions):
    """Options of ``ssp``.

    Attributes
    ----------
    inference : bool
        Spend a share of the budget on y^T y and return bootstrap standard
        errors and intervals (default).  ``False`` gives the whole budget to
        the point estimate.
    bootstrap : int
        Number of parametric bootstrap replicates (>= 100).
    """

    inference: bool = True
    bootstrap: int = 1000

    def __post_init__(self) -> None:
        check_bool(self.inference, "inference")
        check_bootstrap(self.bootstrap)


def statistics_pass(bounds: DataBounds | None, options: object) -> tuple[StatisticsPass, Combine[SufficientStatistics]]:
    """The one pass of ssp: X^T X, X^T y, y^T y of the rows clipped to ``bounds`` (needs no n)."""
    return StatisticsPass(bounds), add_statistics


def release_gram(gram: np.ndarray, mu: float, x_norm: float, *, rng: np.random.Generator,
                 ledger: PrivacyLedger) -> tuple[np.ndarray, float]:
    """Noisy X^T X (``gram``, symmetric noise), replace-one sensitivity sqrt(2) B_X^2; returns (XX~, sigma)."""
    sens = math.sqrt(2.0) * square(x_norm)
    noisy = symmetric_gaussian_mechanism(gram, l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                         name="noisy X^T X")
    return noisy, sens / mu


def release_moment(xty: np.ndarray, mu: float, x_norm: float, y_abs: float, *,
                   rng: np.random.Generator, ledger: PrivacyLedger) -> tuple[np.ndarray, float]:
    """Noisy X^T y (``xty``, of the clipped rows) with replace-one sensitivity 2 B_X B_Y; returns (Xy~, sigma)."""
    sens = 2.0 * x_norm * y_abs
    noisy = gaussian_mechanism_mu(np.asarray(xty, dtype=float), l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                  name="noisy X^T y")
    return np.asarray(noisy, dtype=float), sens / mu


def release_yty(yty: float, mu: float, y_abs: float, *, rng: np.random.Generator,
                ledger: PrivacyLedger) -> tuple[float, float]:
    """Noisy y^T y (``yty``, of the clipped responses; for the residual variance) with replace-one sensitivity
    B_Y^2; returns (yy~, sigma)."""
    sens = square(y_abs)
    noisy = gaussian_mechanism_mu(float(yty), l2_sensitivity=sens, mu=mu, rng=rng, ledger=ledger,
                                  name="noisy y^T y (for inference)")
    return float(noisy), sens / mu


def bootstrap_notes(ratio: float, limits: Mapping[str, float]) -> tuple[str, ...]:
    """The warning shown when the released noise-to-signal ratio makes the bootstrap intervals unreliable, naming
    the method's withholding threshold ``limits`` ({method name: threshold})."""
    return (unreliable_note(ratio, limits),) if ratio > RELIABILITY_THRESHOLD else ()


@shared_eigh()  # the released X^T X is decomposed once for the fit's projections, bootstrap and error split
def fit(rows: Rows, ctx: FitContext, options: SSPOptions) -> MethodFit:
    """Gaussian SSP with exact calibration (module docstring): one pass for the statistics, then the releases."""
    bounds = ctx.require_bounds()
    check_bounds_range(bounds, ctx.n)  # public: before any row is read
    stats = rows.reduce(*statistics_pass(bounds, options))
    mu = gaussian_mu(ctx.epsilon, ctx.delta)
    mus = split_mu(mu, [1.0, 1.0, INFERENCE_WEIGHT] if options.inference else [1.0, 1.0])
    xx, sigma_xx = release_gram(stats.xtx, mus[0], bounds.x_norm, rng=ctx.rng, ledger=ctx.ledger)
    xy, sigma_xy = release_moment(stats.xty, mus[1], bounds.x_norm, bounds.y_abs, rng=ctx.rng, ledger=ctx.ledger)
    params = solve_noisy_normal_equations(xx, xy, eigen_floor=sigma_xx)
    if not options.inference:
        point_only = ReleasedStatistics(xx, xy, math.nan, stats.n, sigma_xx, sigma_xy, math.nan)
        return MethodFit(params=params, diagnostics={"gram_noise_sd": sigma_xx}, rsquared_reason=NO_YTY,
                         no_inference_reason="inference=False gave the whole budget to the point estimate",
                         error_split=sufficient_statistics_split(point_only, params, sigma2=None,
                                                                 eigen_floor=sigma_xx,
                                                                 privacy_source=SPLIT_PRIVACY_NO_BOOTSTRAP))
    yy, sigma_yy = release_yty(stats.yty, mus[2], bounds.y_abs, rng=ctx.rng, ledger=ctx.ledger)
    released = ReleasedStatistics(xx, xy, yy, stats.n, sigma_xx, sigma_xy, sigma_yy)
    ratio = noise_to_signal(released)
    # the pipeline withholds the inference on this released ratio alone: then the bootstrap is not run (every
    # release is made above, and nothing draws from the generator after it)
    withheld = bool(withholding_reason("ssp", ratio, WITHHOLD_ABOVE, None))
    draws, sigma2 = parametric_bootstrap(
        released, params, lambda g, m, _: solve_noisy_normal_equations(g, m, eigen_floor=sigma_xx),
        0 if withheld else options.bootstrap, ctx.rng)
    return MethodFit(
        params=params,
        inference=Inference("bootstrap", draws=draws, description=BOOTSTRAP_DESCRIPTION, noise_to_signal=ratio),
        released=released, released_sums=plug_in_sums(params, released, ratio),
        notes=bootstrap_notes(ratio, {"ssp": WITHHOLD_ABOVE}),
        theory_inputs=TheoryInputs(inference=True),
        error_split=sufficient_statistics_split(released, params, sigma2=sigma2, eigen_floor=sigma_xx,
                                                draws=None if withheld else draws,
                                                privacy_source=SPLIT_PRIVACY_WITHHELD if withheld else SPLIT_PRIVACY,
                                                sampling_source=SPLIT_SAMPLING),
        diagnostics={"gram_noise_sd": sigma_xx, "sigma2_hat_scaled": sigma2, "noise_to_signal": ratio})


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The privacy error of a planned ssp fit: its calibration (module docstring) with the noise propagated to
    first order through X^T X (:func:`dpstats.inference.noise_propagation`)."""
    mus = split_mu(gaussian_mu(facts.epsilon, facts.delta), [1.0, 1.0, INFERENCE_WEIGHT] if facts.inference
                   else [1.0, 1.0])
    sigma_xx = math.sqrt(2.0) * square(facts.x_norm) / mus[0]
    sigma_xy = 2.0 * facts.x_norm * facts.y_abs / mus[1]
    solve = floored_inverse(facts.gram, sigma_xx)
    return ExpectedError(noise_propagation(solve, facts.coefficients, sigma_xy, sigma_xx),
                         noise_to_signal=expected_noise_to_signal(facts.gram, sigma_xx))


def theory_rate(guarantee: str) -> UpperRate:
    """ssp has no proved rate for ||b - beta||_2 in the minimax model; its expected error comes from its
    calibration."""
    return UpperRate(why_none="no rate in this model is proved for SSP (Wang 2018 bounds the excess empirical risk "
                              "of bounded data)", expected_error=expected_error)


SPEC = MethodSpec(
    name="ssp",
    title="Sufficient statistics perturbation",
    citation="Foulds et al. (UAI 2016); Wang (UAI 2018)",
    fit=fit,
    options=SSPOptions,
    needs_bounds=True,
    null_rows=True,
    gaussian_only=True,
    regimes="bounded data, n large relative to d*B_X^2/epsilon; simple baseline",
    inference_rule=InferenceRule("bootstrap", withhold_above=WITHHOLD_ABOVE),
    theory_rate=theory_rate,
    first_pass=statistics_pass,
)
