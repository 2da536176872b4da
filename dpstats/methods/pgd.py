"""Private full-batch gradient descent on privately standardised rows, with independent chains for inference.

Implements full-batch DP gradient descent for least squares with iterate averaging and instance-specific
intervals from independent runs (Brown, Dvijotham, Evans, Liu, Smith & Thakurta, "Private gradient descent for
linear regression: tighter error bounds and instance-specific uncertainty estimation", ICML 2024, Secs. 3-4),
with four additions that make it accurate at n = 100 to 10^5:

* private centring and scaling of every column and of the response inside a clipping domain (declared bounds,
  or a released domain when bounds are missing: :mod:`dpstats.methods.common.private_scaling`);
* a preconditioner from one noisy Gram matrix of the standardised rows, reused by every step (the Hessian reuse
  of Boosted AdaSSP, Tang et al. 2023, and of Iterative Hessian Mixing, Lev et al. 2026): the iteration's fixed
  point does not depend on it;
* per-example gradient clipping at a private quantile of the gradient norms, released by a noisy histogram at
  the start of each phase (adaptive clipping, Andrew, Thakkar, McMahan & Ramaswamy, NeurIPS 2021): a hard clip
  for the warm start, the clip rule's for the final chains, capped at a public ceiling where n mu is small and the
  histogram's noise can make a read clip far too large (:func:`clip_ceiling`); where n mu is large, one more
  release, the part of the per-example gradients between the rule's clip and a high quantile of their norms,
  moves each coefficient by the one-step correction it implies where that correction stands out of its noise (a
  long one-sided tail of residuals, whose clipping moves the estimand away from least squares:
  :func:`tail_correction`);
* a ridge penalty at the privacy-noise level of each phase (the noise-level ridge of AdaSSP, Wang, UAI 2018, on
  the gradient), which shrinks the directions of the design that the noise swamps.

The fit: domain -> moments (z = standardised rows) -> noisy Gram G~, preconditioner P = psd(G~) + 2 sqrt(d)
sigma_G I, steps T from the released spectrum -> phase 1: one chain of T steps theta <- theta - (P + lambda
I)^{-1} (sum_i clip_C(z_i (z_i' theta - v_i)) + N(0, sigma^2 I) + lambda theta) from 0 -> phase 2: K chains of
T steps from phase 1's average plus centred public offsets (K = ``chains`` when an interval is computed, else
1) -> [n mu large: the tail correction] -> estimate = mean of the chains' averages of their last 3T/4 iterates
(plus the correction), mapped back.  The interval: the
spread of the K chains (privacy error on this data set, K - 1 degrees of freedom) plus a sandwich sampling
variance of the clipped estimating equation from one released 2-vector (conservative where its noise is large:
:func:`sandwich`), with the shrinkage of the penalties and of early stopping, linearised through the released
Gram matrix, undone (bias-corrected: :func:`linearise`); predictive draws, basic intervals
(:attr:`~dpstats.methods.registry.Inference.draws`).

Privacy (replace-one, n public; worst case over all finite data, given the domain): every release is a
Gaussian mechanism with the replace-one sensitivity its clipping enforces; everything data-dependent that a
later release uses (domain, centres, scales, P, T, each clip, each phase's start) is a function of earlier
releases; GDP composes adaptively, and the weights below split mu(epsilon, delta) exactly, so the fit is
(epsilon, delta)-DP.  Proof: docs/proofs/pgd.md.

Every release is a sum over rows (a pass over :class:`~dpstats.rows.base.Rows`): in-memory arrays, files and
Dask take the same path; a step needs the previous iterate, so the fit makes one pass per step.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2 as chi2_distribution
from scipy.stats import t as t_distribution

from dpstats.blas import single_threaded_blas
from dpstats.errors import ClippedRowsWarning, InsufficientDataError, MethodOptionError, RoughResponseDomainWarning
from dpstats.formula.centring import intercept_model
from dpstats.methods.common.extremes import QUIET, quiet
from dpstats.methods.common.geometric_histogram import GeometricGrid, grid_counts, release_quantiles
from dpstats.methods.common.linalg import psd_projection
from dpstats.methods.common.planned_descent import NormLaw, iterate_variance
from dpstats.methods.common.private_scaling import (
    Standardisation,
    assumed_standardisation,
    domain_variables,
    null_marks,
    release_domain,
    release_moments,
    standardised_moments,
)
from dpstats.methods.common.product_centring import centred_note, placeholder_ranges, release_centred_moments
from dpstats.methods.common.row_passes import add_arrays
from dpstats.methods.spec import (
    AutoFacts,
    AutoRule,
    ErrorSplit,
    FitContext,
    Inference,
    InferenceRule,
    MethodFit,
    MethodOptions,
    MethodSpec,
    TheoryInputs,
    capped_spread,
    check_bool,
    rare_outcome_withheld,
)
from dpstats.privacy.calibration import gaussian_epsilon, gaussian_mu, split_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import (
    fixed_gaussian_block,
    gaussian_mechanism_mu,
    post_processing_normal,
    post_processing_uniform,
    symmetric_gaussian_mechanism,
)
from dpstats.privacy.missing_screen import SCREEN_SHARE, requested_epsilon
from dpstats.rates import ExpectedError, PlanningFacts, UpperRate
from dpstats.rows.base import Rows
from dpstats.validation import MAX_EPSILON, shown

__all__ = ["PGDOptions", "fit", "budget_split", "reports_intervals", "linearise", "phases_linearised", "steps_rule",
           "INTERVAL_MIN_N_MU", "SMALL_N_MU", "SMALL_CLIP_CEILING", "CLIP_CEILING_N_MU", "clip_ceiling", "start_spread",
           "START_SPREAD_D_REF",
           "WEIGHTS", "SPEC", "clip_rule", "interval_reason", "GramPass", "NormHistogramPass", "GradientPass",
           "InferencePass", "sandwich", "sampling_resolved", "UNCLIPPED_SHARE_FLOOR",
           "gradient_norm_bound", "SAMPLING_Z", "floored_note", "CLIP_D_REF", "CLIP_D_POWER",
           "RARE_SHARE", "RARE_MIN_N_MU_SHARE2", "RARE_FROM_N_MU", "rare_outcome_reason", "complete_rows_reason",
           "ONE_VALUE_LEAD", "one_value_reason",
           "two_valued_variance",
           "unspent_inference_note",
           "TAIL_ROWS", "TAIL_CAP", "TWO_VALUED_TAIL_CAP", "tail_cap",
           "TAIL_FLOOR", "TAIL_Z",
           "TAIL_TEST_LEVEL", "TAIL_DECAY", "TAIL_CHECK_Z", "TailCheckPass", "step_scale", "stretch_beyond",
           "tail_level", "tail_correction", "TailCorrection", "TailExcessPass", "expected_error", "WANDER_ROUNDS",
           "gram_sensitivity",
           "preconditioner_lift", "step_noise_variance", "OutsideDomainPass", "clipping_check", "ClippingCheck",
           "CLIPPED_SHARE", "CLIPPED_Z"]

#: ``method="auto"`` picks pgd below this many rows (above, adassp: one pass, and its privacy error is already
#: below the sampling error; docs/choosing.md).
AUTO_MAX_ROWS = 100_000

#: Intervals are computed only where n * mu(epsilon, delta) reaches this: below it the fit is nearly all shrinkage
#: (the estimate stays near 0 in every direction) and intervals were not measured (docs/choosing.md).
INTERVAL_MIN_N_MU = 15.0
#: Below this n * mu the steps leave the weak directions of the design short of convergence, and the chains start
#: ``WIDE_START_SPREAD`` apart instead of ``START_SPREAD`` (:func:`start_spread`); ``method="auto"`` prefers private
#: Theil-Sen for one predictor below it (docs/choosing.md).
SMALL_N_MU = 100.0

#: Shares of the GDP budget left after the domain (mu^2 - mu_domain^2) of the releases (the centres only with an
#: intercept, the inference 2-vector only with an interval).  Chosen on simulations (BENCHMARKS.md, "pgd").
#: "clipping check" (the count of rows beyond a released domain: :func:`clipping_check`) only in fits that release a
#: domain, so a fit with every bound declared keeps the split it had.
WEIGHTS = {"centre": 0.15, "scale": 0.15, "gram": 0.1, "histogram": 0.03, "warm start": 0.25, "chains": 1.0,
           "inference": 0.02, "tail correction": 0.2, "tail check": 0.05, "clipping check": 0.05}
#: The released clipping domain gives each of its histograms n mu_round = DOMAIN_N_MU (its modal bins then clear
#: the noise of the empty bins); pgd refuses, before spending, where that takes more than MAX_DOMAIN_SHARE of
#: mu^2.  Variables with declared bounds keep them (a released domain inside them too was measured to lower the
#: intervals' coverage: BENCHMARKS.md, "pgd"; one used only for their moments cost real data with coded values
#: dearly: docs/choosing.md, "Moments inside loose bounds").
DOMAIN_N_MU, MAX_DOMAIN_SHARE = 60.0, 0.5
#: Where a domain is released, one count, the rows with a value beyond it in a variable without bounds, is released
#: (sensitivity 1, weight ``WEIGHTS["clipping check"]``: :class:`OutsideDomainPass`); where that count less
#: CLIPPED_Z of its noise sds is above CLIPPED_SHARE of the rows, those rows, clipped, can set the fit far from least
#: squares (heavy-tailed variables: Forbes2000's largest firms, 22-33% of its rows beyond the domain, intervals that
#: covered least squares in 25-70% of fits), so the fit warns (:class:`~dpstats.errors.ClippedRowsWarning`) and
#: withholds its intervals (:func:`clipping_check`; docs/choosing.md, "Heavy tails without bounds").  A tenth: the
#: held-out regressions without bounds whose intervals covered put at most 6% of their rows there (Chile 0-6% over
#: noise seeds, EmplUK 0-3%); a count does not say how far out the rows lie, so it catches the gross cases only.
CLIPPED_SHARE, CLIPPED_Z = 0.1, 2.326

#: Radius of the ball, in units of sqrt(d), to which standardised rows are clipped for the Gram matrix (a
#: preconditioner only): squared radius GRAM_RADIUS2 * d.
GRAM_RADIUS2 = 4.0
#: Steps: T = clip(ceil(MIX / rate), MIN_STEPS, clip(WORK / n, 300, 20000)) with rate the slowest contraction
#: of the preconditioned step on the released Gram (eigenvalues floored at RATE_FLOOR sigma_G).
MIX, MIN_STEPS, WORK, RATE_FLOOR = 4.0, 100, 3e6, 0.25
#: The grid of the gradient-norm histogram.
NORM_GRID = GeometricGrid(lo=2.0**-10, ratio=4.0, bins=12)
#: The clip rule's multiple k = CLIP_MULTIPLE (n mu' / 250)^a with a = CLIP_EXPONENTS[0] below n mu' = 250 and
#: CLIP_EXPONENTS[1] above (n mu' = n mu, lowered on designs of more than CLIP_D_REF columns: below;
#: :func:`clip_rule`), chosen on paired sweeps over the real-data benchmark and held-out regressions
#: (docs/choosing.md, "The clip's multiple").
CLIP_MULTIPLE, CLIP_EXPONENTS = 0.875, (0.3, 0.2)
#: With more than CLIP_D_REF columns the clip rule reads n mu as n mu (CLIP_D_REF / d)^CLIP_D_POWER (:func:`clip_rule`):
#: the privacy noise of a clip C in the estimate, over the sampling error, grows like C sqrt(d / g) / mu (g the
#: curvature of a direction, about n / (levels) for a factor's dummies), so on a wide design (many factor levels)
#: the noise dominates the clipping bias at an n mu where a narrow one's does not, and the smaller multiple lowers
#: it (docs/choosing.md, "The clip on wide designs", for the measurements).
#: On every design (from session 56; before, only where d > CLIP_D_REF) a column with two public values (a factor's
#: dummy) is scaled from its released centre (:func:`~dpstats.methods.common.private_scaling.two_valued_scale`)
#: instead of 1.25 times its mean absolute deviation, which puts a rare level at |z| = 1 / (2.5 p): on a wide design
#: that sets every row's gradient norm, hence the clip and the noise of all coefficients (docs/choosing.md, "Factor
#: dummies on wide designs"); on any design it puts the level's rows far outside the Gram release's ball, whose Gram
#: then understates the level's curvature tens to hundreds of times, and the tail correction's one-step move divided
#: by it put the level's coefficient tens of response units off (docs/choosing.md, "Rare factor levels on narrow
#: designs").
CLIP_D_REF, CLIP_D_POWER = 10.0, 2.0
#: Where n mu gives the level 1 - TAIL_ROWS / (n mu) above the clip rule's 0.9 (:func:`tail_level`), the tail clip C2
#: is the private quantile of the gradient norms at that level, at most TAIL_CAP times the rule's clip C
#: (:func:`_clips`), and one release, the sum over rows of the part of each per-example gradient between C and C2 at
#: the final chains' mean (:class:`TailExcessPass`), gives the one-step correction from the estimating equation
#: clipped at C to the one clipped at C2 (:func:`tail_correction`): where n mu is large a long tail of large residuals
#: on one side (a skewed or zero-inflated response) left beyond the rule's clip pulled the clipped estimand away from
#: least squares by several standard errors, more than the interval showed (docs/choosing.md, "A long tail of
#: residuals"; 32 rows rather than 64 from session 36: the correction from n mu = 320, and more of the tail measured).
TAIL_ROWS, TAIL_CAP = 32.0, 4.0
#: With a response that public facts make two-valued the tail clip is at most TWO_VALUED_TAIL_CAP times the clip
#: (:func:`tail_cap`; then at its floor, TAIL_FLOOR times the clip): such a response's residuals have no long tail on
#: one side beyond what its own clip rule reads (:func:`clip_rule`), and the rows beyond the clip are rows of large
#: leverage, a rare cell, on which a one-step correction towards a clip up to TAIL_CAP times higher overshot least
#: squares by several times (blackpol; docs/choosing.md, "A rare outcome").
TWO_VALUED_TAIL_CAP = 1.0
#: The tail clip is at least TAIL_FLOOR times the clip, so that the correction's release, budgeted from public facts,
#: is always made (its sensitivity 2 (C2 - C) is then positive); where the residuals have no long tail the
#: correction it gives stays within its noise and is not taken.
TAIL_FLOOR = 1.5
#: ... and a coefficient takes its correction only where the correction is more than TAIL_Z of its noise sds: a tail
#: on both sides (symmetric residuals, or rows of large leverage) moves the clipped estimand little, and there the
#: correction would only add its noise (running the final chains at C2 instead cost accuracy on the imprecise
#: coefficients of skewed responses: docs/choosing.md).
TAIL_Z = 2.0
#: ... and only where the released excess as a whole stands out of its noise: its squared norm over the noise variance
#: is a chi-square with d degrees of freedom where the residuals have no tail beyond the clip, and the test at level
#: TAIL_TEST_LEVEL (:func:`tail_correction`) gates the per-coefficient tests, which alone took a spurious correction
#: in about a third of the fits on a design of eight columns without a tail (2 of 9 coordinates' noise beyond 2 sds
#: is common), each one several times the fit's own error (docs/choosing.md, "A long tail of residuals").
TAIL_TEST_LEVEL = 0.05
#: The gap left beyond the tail clip C2 by a coefficient that took its correction (the correction measured the gap
#: between C and C2) is taken as at most 1 / ((C2 / C)^TAIL_DECAY - 1) times that correction: the gap of a clipped
#: estimating equation at clip c is a tail integral of the residuals beyond c, which falls like c^-(a - 1) for
#: residuals with a tail of index a, and a >= 2 for residuals of finite variance, so TAIL_DECAY = 1 is the slow end;
#: the intervals extend that far beyond the estimate, on the side of the correction (:func:`_interval_draws`;
#: docs/choosing.md, "A long tail of residuals").
TAIL_DECAY = 1.0
#: The tail correction's step is checked by one more release (weight ``WEIGHTS["tail check"]``, taken from the
#: correction's 0.25 so that every other release keeps its noise): the derivative, along the correction taken, of the
#: loss whose per-example gradients are clipped at the tail clip, at the chains' mean and at the corrected point
#: (:class:`TailCheckPass`).  Where the second is more than TAIL_CHECK_Z noise sds above 0, the step passed that loss's
#: minimum along its direction (the released Gram, of rows clipped to a ball, is not the curvature of the tail clip's
#: loss where rows beyond the ball fall inside the tail clip; nor is the chains' mean always the clipped fit), and the
#: coefficients that took a correction take the secant's share of it (:func:`step_scale`): flights_weather's
#: precipitation, 0 in most hours and up to 126 scale units in the rest, took a step three to five times too long,
#: and the visibility's move, coupled to it through the Gram, passed least squares (session 56; docs/choosing.md, "A
#: long tail of residuals").  A huge TAIL_CHECK_Z takes every step whole (the rule before).
TAIL_CHECK_Z = 2.0
#: For a two-valued response the clip rule reads the (1 - MINORITY_SHARE * minority)-quantile of the gradient norms
#: when that is above 0.9, at most TWO_VALUED_MAX_QUANTILE (:func:`clip_rule`; minority: the rarer value's share)
MINORITY_SHARE, TWO_VALUED_MAX_QUANTILE = 0.25, 0.99
#: With a two-valued response whose released rarer share m is below RARE_SHARE, intervals are withheld where n * mu
#: times m^2 is below RARE_MIN_N_MU_SHARE2 (n * mu * m below RARE_MIN_N_MU_SHARE2 / m: 30 at m = 0.1, 100 at 0.03,
#: 300 at 0.01): the clip then still cuts part of the rare rows' residuals and the fit's target sits away from least
#: squares by more than the chains' spread shows, and the rarer the outcome the more of its rows' n * mu that gap
#: takes to close (session 55: a fixed n * mu * m of 50, the rule before, let through 1 and 2% outcomes' intervals
#: covering in 0.52 to 0.90 of fits at n * mu * m 50 to 130; docs/choosing.md, "A rare outcome").
#: The rule applies from n * mu = RARE_FROM_N_MU: below it the released share's noise sd (about 6 / (n mu) and more)
#: is as large as the share it would have to tell apart, and the intervals there are wide enough to cover least
#: squares for a rare outcome too, so the rule withheld common outcomes' intervals on noise alone.
RARE_SHARE, RARE_MIN_N_MU_SHARE2, RARE_FROM_N_MU = 0.1, 3.0, 100.0
#: A response without declared bounds whose released domain histogram's groups of equal values (pairs of rows)
#: outcount its modal spread by more than this share of the groups gets no interval (:func:`one_value_reason`): a
#: response taking two values, a share p of the rows at one, leads by (1 - 2 p)^2, which is 9 / 16 at p = 1 / 8; such
#: a response, stored as floats, is not two-valued by public facts, so the clip and interval rules of a rare outcome
#: do not apply, and below p = 1 / 8 its intervals can miss least squares by far (docs/choosing.md, "A rare outcome").
ONE_VALUE_LEAD = 0.5625
#: The warm start (phase 1) clips at WARM_CLIP[1] times the private WARM_CLIP[0]-quantile of the gradient norms at
#: theta = 0: a robust start with little noise (its estimand need not be least squares; phase 2's clip is the
#: clip rule's, read at the warm start and never above the rule's clip at theta = 0, from the same histogram).
WARM_CLIP = (0.5, 1.0)
#: Below n * mu = CLIP_CEILING_N_MU (the clip rule's own break point) each gradient-norm histogram gets so little of mu
#: that a quantile read from it can be off by orders of magnitude (mpg at epsilon 1: warm-start clips from 0.09 to
#: 1,600 between noise seeds, on the same data); there every clip read from it is capped at SMALL_CLIP_CEILING times
#: the clip the rule gives at a quantile of sqrt(d), the norm of a standardised row whose residual is one scale unit
#: (:func:`_clips`; post-processing of the released histogram).  Only a cap: a floor also raised the low reads that
#: heavy-tailed residuals need (docs/choosing.md, "Clips at small n mu"), and a floor far below k sqrt(d), which only
#: lifts the reads the noise put far below the gradient norms, did not bring the estimate closer to least squares
#: either (docs/choosing.md, "Clips far below the gradient norms").
SMALL_CLIP_CEILING, CLIP_CEILING_N_MU = 2.0, 250.0
#: Each phase's steps add a ridge penalty PENALTY * 2 sqrt(2) C / mu_phase (the noise floor of the phase's
#: averaged gradient sum, per coordinate): directions of the design whose curvature is below the privacy noise are
#: shrunk instead of filled with noise (the noise-level ridge of AdaSSP, Wang 2018, on the gradient).
PENALTY = 1.0
#: The final chains start at the warm start plus public normal offsets of sd START_SPREAD per standardised
#: coordinate, centred over the chains (over-dispersed starts, as in Gelman & Rubin 1992): in directions the steps
#: leave short of convergence the chains keep part of their offsets, so their spread, hence the interval, shows
#: that direction's remaining uncertainty; the offsets sum to zero, so the chains' mean is unchanged where the
#: clip does not bind.  Where n * mu < ``SMALL_N_MU`` the spread is ``WIDE_START_SPREAD``: the unresolved
#: directions there are most of the design, and with one unit the intervals under-covered the OLS estimate on the
#: real-data benchmark, while three units made them conservative and the estimates less accurate
#: (docs/choosing.md).
START_SPREAD, WIDE_START_SPREAD = 1.0, 1.5
#: Where n * mu >= ``SMALL_N_MU``, on a design of d > START_SPREAD_D_REF columns the spread per coordinate is
#: START_SPREAD sqrt(START_SPREAD_D_REF / d), so that an offset's norm, which moves every row's residual by about
#: that much, stays at most START_SPREAD sqrt(START_SPREAD_D_REF) (:func:`start_spread`): with sd 1 per coordinate
#: on a wide design an offset chain starts with nearly every row's gradient clipped, its path is not the linear one
#: whose offsets cancel in the chains' mean, and in the directions the steps converge slowly (a factor's dummies
#: against the intercept) that mean carried the difference: txhousing's headline (58 columns, epsilon 3) sat 0.14
#: of least squares away with every release's noise removed, 0.04 with no offsets (docs/choosing.md, "The chains'
#: start offsets on wide designs").
START_SPREAD_D_REF = 10.0
#: Each chain's output is the average of its last KEEP_SHARE * T iterates.
KEEP_SHARE = 0.75
#: Predictive draws of an interval.
DRAWS = 4000
#: The interval undoes the linearised shrinkage s of each direction (:func:`linearise`) only down to s =
#: SHRINK_FLOOR: the de-biasing multiplies that direction's noise by 1 / s, at most 1 / SHRINK_FLOOR (a guard for a
#: direction the steps barely moved, where the chains' start offsets show the distance instead; measured s was
#: >= 0.7 on the simulation grid).
SHRINK_FLOOR = 0.5
#: The plan (:func:`expected_error`) divides the noise by the planned shrinkage s down to this floor only, a guard
#: against a division by 0 where no step moves a direction (there the planned error is about 10^12 times the noise).
PLANNED_SHRINK_FLOOR = 1e-12
#: The error block removes from the chains' spread the share of their start offsets they kept in a direction only
#: where that share is at most KEPT_SHARE_LIMIT: a direction where the chains kept more of their starts learned
#: almost nothing from the data, its privacy error is not known from these chains, and the block keeps their whole
#: spread there (conservative; with the share removed the block reported almost no error for such a direction,
#: grunfeld at epsilon 0.5 on the real-data benchmark).
KEPT_SHARE_LIMIT = 0.9
#: ... and only a share that the chains' own noise would reach with probability below 1 - SHARE_TEST_LEVEL
#: (:func:`significant_share`): a share fitted to the chains' noise would remove that noise from the spread.
SHARE_TEST_LEVEL = 0.95
#: How the error block's sampling part is computed where the interval's 2-vector was released.
SAMPLING_SOURCE = ("the sandwich variance (E psi^2 / phi^2) G^-1 of the clipped estimating equation, E psi^2 and phi "
                   "from one released 2-vector (bounds that do not understate it, one-sided 95%, capped at their "
                   "public maxima), G the released Gram matrix (floored at its noise sd, scaled down to the "
                   "standardised rows' trace)")
#: The sandwich sampling variance takes an upper bound on E psi^2 and a lower bound on phi from the released
#: 2-vector at this normal quantile (one-sided 95%: :func:`sandwich`).
SAMPLING_Z = 1.645
#: The sandwich takes the unclipped share phi at least this large (:func:`sandwich`); where the released bound on
#: phi is below it, the sampling part is not stated as released (:func:`sampling_resolved`).
UNCLIPPED_SHARE_FLOOR = 0.25
#: Rounds of the fixed point of the unclipped shares at the noisy iterates' spread in a planned fit
#: (:func:`expected_error`).
WANDER_ROUNDS = 6
#: Iterates are kept inside +-THETA_LIMIT (post-processing), so residuals never overflow.
THETA_LIMIT = 1e100


@dataclass(frozen=True)
class PGDOptions(MethodOptions):
    """Options of ``pgd``.

    Attributes
    ----------
    inference : bool
        Run ``chains`` independent final chains and release the 2-vector of the sampling variance, for
        standard errors and intervals (default).  Only where n * mu(epsilon, delta) >= ``INTERVAL_MIN_N_MU``;
        below, and with ``False``, one chain takes the whole final budget and no interval is given.
    chains : int
        Number of independent final chains (2 to 100; default 5).
    steps : int or None
        Steps per phase; None (default) sets them from the released Gram matrix (a public rule).
    """

    inference: bool = True
    chains: int = 5
    steps: int | None = None

    def __post_init__(self) -> None:
        check_bool(self.inference, "inference")
        if isinstance(self.chains, bool) or not isinstance(self.chains, (int, np.integer)) \
                or not 2 <= self.chains <= 100:
            raise MethodOptionError(f"chains must be an integer from 2 to 100 (independent final chains), got "
                                    f"{shown(self.chains)}")
        if self.steps is not None and (isinstance(self.steps, bool) or not isinstance(self.steps, (int, np.integer))
                                       or not 2 <= self.steps <= 1_000_000):
            raise MethodOptionError("steps must be None (the public rule) or an integer from 2 to 1,000,000, got "
                                    f"{shown(self.steps)}")


def clip_rule(n_mu: float, minority: float | None = None, d: int | None = None) -> tuple[float, float]:
    """(q, k): the final phase clips the per-example gradients at k times the private q-quantile of their norms.

    A function of n mu and, for a two-valued response (public: ``FitContext.two_valued_response``), of the released
    share of its rarer value (``minority``, read off the response's private centre: post-processing), chosen on
    simulations and the real-data benchmark: the 0.9-quantile, so that a skewed or two-valued residual distribution
    (a linear probability model) keeps its large residuals unclipped; for a two-valued response the
    (1 - ``MINORITY_SHARE`` minority)-quantile when that is higher (at most ``TWO_VALUED_MAX_QUANTILE``): where the
    rarer value is below 10% of the rows the 0.9-quantile falls among the common value's small residuals, and the
    clip cut the rare ones (docs/choosing.md, "A rare outcome");
    and k = ``CLIP_MULTIPLE`` (n mu' / 250)^a, with n mu' = n mu min(1, ``CLIP_D_REF`` / d)^``CLIP_D_POWER`` for a
    design of d columns (public; d = None: d <= CLIP_D_REF), a clip that grows where privacy noise is cheap, so that the
    clipped (Huber-type) estimand stays close to least squares; a = ``CLIP_EXPONENTS`` (0.3 below n mu = 250,
    0.2 above, where the noise of a larger clip cost more than its smaller clipping bias saved).  The multiple
    trades the noise, proportional to the clip, against the clipped estimand's distance from least squares
    (docs/choosing.md).
    """
    ratio = n_mu / 250.0
    if d is not None:
        ratio *= min(1.0, CLIP_D_REF / d) ** CLIP_D_POWER
    multiple = CLIP_MULTIPLE * ratio ** CLIP_EXPONENTS[0 if ratio < 1.0 else 1]
    q = 0.9 if minority is None else float(np.clip(1.0 - MINORITY_SHARE * minority, 0.9, TWO_VALUED_MAX_QUANTILE))
    return q, multiple


def tail_level(n_mu: float) -> float | None:
    """The quantile level 1 - ``TAIL_ROWS`` / (n mu) of the tail clip (:func:`_clips`), or None where it is not
    above the clip rule's 0.9 (a public rule of n mu: the tail it leaves holds TAIL_ROWS / mu rows, which the noisy
    histogram resolves)."""
    level = 1.0 - TAIL_ROWS / max(n_mu, 1e-300)
    return level if level > 0.9 else None


def response_minority(st: Standardisation) -> float:
    """The share of a two-valued response's rarer value, read off its released centre (post-processing): the
    domain maps the response's two values to -1 and +1, so the centre c is 2 p - 1 for a share p of the upper
    value; min(p, 1 - p) with p = (c + 1) / 2 clipped to [0, 1].  Without an intercept no centre is released
    (c = 0) and the share reads 1/2, which leaves the clip rule at its 0.9-quantile."""
    p = float(np.clip(0.5 * (st.y_centre + 1.0), 0.0, 1.0))
    return min(p, 1.0 - p)


def complete_rows_reason(rows: float | None, mu: float, sd: float | None = None, n: int | None = None) -> str:
    """Why intervals are withheld when the released count of rows without a missing value (``missing="drop"``:
    the other rows are public null rows, which add nothing) times mu is below ``INTERVAL_MIN_N_MU``, the size rule
    applied to the rows that inform the fit ("" otherwise, and without null rows): post-processing of that count.
    ``sd`` (the count's noise sd) and ``n`` (public), where given, are named beside it: at a small n and epsilon
    that noise can be as large as n, and a count far below the complete rows is then the noise, not the data."""
    if rows is None or rows * mu >= INTERVAL_MIN_N_MU:
        return ""
    of_n = f" of the {n} rows" if n is not None else ""
    noise = (f" (a noisy count: its noise sd is {sd:.3g} rows at this n and epsilon, so where that is a large share "
             "of n it can be far below the number of complete rows)" if sd is not None else "")
    return (f"the released count of rows without a missing value is about {rows:.0f}{of_n}{noise}, and that count "
            f"times mu(epsilon, delta) = {mu:.4g} is {rows * mu:.3g}, below {INTERVAL_MIN_N_MU:g}: the other rows are "
            f"null rows (missing='drop'), which inform nothing, so too few rows inform the fit for an interval (a "
            f"variable missing in most rows, such as a text column read as numbers, leaves a fit of noise)")


def one_value_reason(lead: float | None) -> str:
    """Why intervals are withheld for a response without declared bounds whose rows mostly hold one value ("" when
    they are not): the released lead ``lead`` of the domain histogram's groups of equal values over its modal spread,
    a share of the groups (:func:`~dpstats.methods.common.private_scaling.release_domain`; post-processing of its
    released counts and the public number of groups; None where no domain of the response was released), above
    ``ONE_VALUE_LEAD``.

    Parameters
    ----------
    lead : float or None
        The released lead, or None.

    Returns
    -------
    str
        The reason, or "" where the intervals are given.
    """
    if lead is None or lead <= ONE_VALUE_LEAD:
        return ""
    return (f"most pairs of rows hold a single value of the response, which has no declared bounds: the released "
            f"count of such pairs leads that of the modal spread by {lead:.2g} of the pairs, above {ONE_VALUE_LEAD:g} "
            "(a response of two values with fewer than 1 in 8 rows at the rarer one, such as a rare 0/1 outcome "
            "stored as floats, or a response of mostly one value); the fit does not know the response is two-valued, "
            "so the clip and interval rules of a rare outcome do not apply and its intervals can miss least squares "
            "by far, so none is given: declare the response's bounds (a 0/1 indicator: bounds (0, 1), stored as bool "
            "or int; docs/choosing.md, 'A rare outcome')")


def rare_outcome_reason(n_mu: float, minority: float | None, share_sd: float | None = None) -> str:
    """Why intervals are withheld for a two-valued response whose rarer value is too rare for this budget ("" when
    they are not): from n * mu = ``RARE_FROM_N_MU`` (public), a released share ``minority`` below ``RARE_SHARE`` whose
    square times n * mu is below ``RARE_MIN_N_MU_SHARE2`` (post-processing of the released centre and public n,
    epsilon, delta).  Below ``RARE_FROM_N_MU`` the share's noise is as large as the share and the intervals are wide
    enough for a rare outcome (docs/choosing.md, "A rare outcome"), so the rule does not apply.  ``share_sd``, where
    given, is the noise sd of that share (public: half the noise sd of the response's released centre, whose two
    values the domain maps to -1 and +1), named beside it, so that a user whose outcome is common can tell that the
    released share is noisy.  The first clause (up to " ("), which a table's note keeps, names the share and the
    threshold.

    Parameters
    ----------
    n_mu : float
        n * mu(epsilon, delta) of the fit (public).
    minority : float or None
        The released share of the response's rarer value (None: the response is not two-valued).
    share_sd : float or None
        That share's noise sd (public), or None.

    Returns
    -------
    str
        The reason, or "" where the intervals are given.
    """
    if minority is None or not rare_outcome_withheld(n_mu, minority, rare_share=RARE_SHARE,
                                                     rare_min_n_mu_share2=RARE_MIN_N_MU_SHARE2,
                                                     rare_from_n_mu=RARE_FROM_N_MU):
        return ""
    noise = (f" (a noisy share, read off the response's private centre: its noise sd is {share_sd:.2g} at this n and "
             f"epsilon, so it can fall below {RARE_SHARE:g} where the share in the data is above it)"
             if share_sd is not None else "")
    return (f"the response is two-valued and its rarer value is rare for this budget: its released share is "
            f"{minority:.2g}, below {RARE_SHARE:g}{noise}, and n * mu(epsilon, delta) times the square of that share "
            f"is {n_mu * minority ** 2:.3g}, below {RARE_MIN_N_MU_SHARE2:g} (n * mu times the share is "
            f"{n_mu * minority:.3g}: the rarer the outcome, the more of its rows' n * mu an interval needs); there the "
            "clipped fit's target can sit away from least squares by more than an interval would show, so none is "
            "given (a larger epsilon, or more rows, gives one; docs/choosing.md, 'A rare outcome')")


def unspent_inference_note(mu: float) -> str:
    """The report's note where pgd withheld its intervals after its budget was split (a rare outcome, too few complete
    rows, the clipping check: post-processing of released values): the release set aside for them is not made, so
    the budget spent is below the request (docs/proofs/pgd.md, step 7, skipped with its share ``WEIGHTS["inference"]``).

    Parameters
    ----------
    mu : float
        The GDP mu of the release that was not made (public: the budget's split).

    Returns
    -------
    str
        The note.
    """
    return (f"pgd: the release set aside for the intervals (mu={mu:.4g}, the clipped residual variance and unclipped "
            "count) was not made, since no interval is given (inference_reason says why), so the budget spent is "
            "below the request by its share")


def start_spread(n_mu: float, d: int = 1) -> float:
    """The sd of the chains' start offsets per standardised coordinate: ``START_SPREAD``, times
    sqrt(``START_SPREAD_D_REF`` / d) on a design of d > START_SPREAD_D_REF columns, or ``WIDE_START_SPREAD`` below
    n * mu = ``SMALL_N_MU`` (a public rule of n * mu and d)."""
    if n_mu < SMALL_N_MU:
        return WIDE_START_SPREAD
    return START_SPREAD * math.sqrt(min(1.0, START_SPREAD_D_REF / d))


def interval_reason(n: int, epsilon: float, delta: float, screened: bool = False) -> str:
    """Why pgd gives no interval at this n * mu, with the rows (or the epsilon) that would give one (public).
    ``screened``: ``epsilon`` is the rest after the missing-value screen's share, and the epsilons named are the
    ones to request (:func:`~dpstats.privacy.missing_screen.requested_epsilon`)."""
    below, needed = _interval_threshold(n, epsilon, delta, screened)
    return (f"{below}: at this sample size pgd's noisy steps barely move the estimate from its start in any "
            f"direction, and intervals were not measured here; {needed}")


def _interval_threshold(n: int, epsilon: float, delta: float, screened: bool) -> tuple[str, str]:
    """("n * mu(epsilon, delta) = ... is below 15", "pgd reports intervals from n >= ... rows at ...")."""
    mu = gaussian_mu(epsilon, delta)
    need_n = math.ceil(INTERVAL_MIN_N_MU / mu)
    need_mu = INTERVAL_MIN_N_MU / n
    need_eps = requested_epsilon(gaussian_epsilon(need_mu, delta), screened)
    eps_text = f"epsilon >= {need_eps:.3g}" if math.isfinite(need_eps) else "a larger epsilon"
    return (f"n * mu(epsilon, delta) = {n} * {mu:.4g} = {n * mu:.3g} is below {INTERVAL_MIN_N_MU:g}",
            f"pgd reports intervals from n >= {need_n} rows at epsilon={requested_epsilon(epsilon, screened):g}, "
            f"delta={delta:g} (or {eps_text} at n={n})")


# -- passes over the rows (picklable; each returns a sum over rows) ---------------------------------------------

class RowCache:
    """The standardised rows of the last chunk a pass saw, keyed by the chunk's (offset, count), shared by the
    passes of one fit: in-memory rows are one chunk, so they are standardised once instead of once per step.
    Rows at a given offset are always the same rows, so the key identifies them.  One entry (memory stays one
    chunk's); dropped when pickled (a Dask worker recomputes)."""

    def __init__(self) -> None:
        self.key: tuple[int, int] | None = None
        self.value: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None] | None = None
        #: the per-row residual bounds (-t, t), t = C / ||z_i||, by clip C, with the row norms they were computed
        #: from (:func:`_residual_bounds`): a phase's steps share one clip, so they are computed once per phase
        self.bounds: dict[float, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        #: the step operands of :meth:`step_operands` repeated over the chains, by (clip, chains)
        self.full: dict[tuple[float, int], tuple[np.ndarray, ...]] = {}

    def __getstate__(self) -> dict[str, object]:
        return {"key": None, "value": None, "bounds": {}, "full": {}}

    def residual_bounds(self, norms: np.ndarray, clip: float) -> tuple[np.ndarray, np.ndarray]:
        """(-t, t), t = C / ||z_i|| as an (n, 1) column (:func:`_residual_bounds`) for the row norms ``norms``,
        reused while they are the same array (the cached chunk's) and the clip is the same (at most two clips
        kept)."""
        found = self.bounds.get(clip)
        if found is None or found[0] is not norms:
            if len(self.bounds) >= 2:
                self.bounds.clear()
            found = self.bounds[clip] = (norms, *_residual_bounds(norms, clip))
        return found[1], found[2]

    def step_operands(self, v: np.ndarray, norms: np.ndarray, clip: float, chains: int
                      ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """(v, (-t, t)) of a step of ``chains`` chains: as (n, 1) columns (:meth:`residual_bounds`), or, for
        several chains on a chunk of at most ``FULL_OPERANDS`` entries, each repeated into a contiguous (n, K)
        array, kept while the arrays and the clip are the same.  The values are the same either way (a column
        broadcast over the K chains is the repeated array), so psi is the same bit for bit; the repeated arrays let
        numpy run the subtraction and the clip in one loop over n K entries instead of n loops over K."""
        low, high = self.residual_bounds(norms, clip)
        if chains == 1 or v.shape[0] * chains > FULL_OPERANDS:
            return v[:, None], (low, high)
        key = (clip, chains)
        found = self.full.get(key)
        if found is None or found[0] is not v or found[1] is not high:
            shape = (v.shape[0], chains)
            self.full.clear()  # one phase's at a time (its chains and clip)
            found = self.full[key] = (v, high, np.repeat(v[:, None], chains, axis=1),
                                      np.broadcast_to(low, shape).copy(), np.broadcast_to(high, shape).copy())
        return found[2], (found[3], found[4])


class _StandardisedPass:
    """Shared by the passes: the standardised rows z, responses v and row norms ||z|| of a chunk, and which rows
    are live (None: all).  A public null row (``missing="drop"``, read marked: :attr:`MethodSpec.null_marks`) has
    z = 0 and v = 0, so it adds nothing to a Gram matrix or a gradient sum, and the passes that count rows leave
    it out."""

    uses_offset = True

    def __init__(self, st: Standardisation, cache: RowCache | None = None) -> None:
        self.st = st
        self.cache = cache if cache is not None else RowCache()

    def rows(self, X: np.ndarray, y: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.live_rows(X, y, offset)[:3]

    def live_rows(self, X: np.ndarray, y: np.ndarray, offset: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        key = (int(offset), int(X.shape[0]))
        if self.cache.key != key or self.cache.value is None:
            Z, v = self.st.design(X), self.st.response(y)
            marked = null_marks(y)
            if marked is not None:
                Z[marked], v[marked] = 0.0, 0.0
            live = None if marked is None else ~marked
            self.cache.key, self.cache.value = key, (Z, v, np.sqrt(np.einsum("ij,ij->i", Z, Z)), live)
        return self.cache.value


class GramPass(_StandardisedPass):
    """sum_i z_i z_i^T of the standardised rows clipped to the ball of squared radius ``radius2``."""

    def __init__(self, st: Standardisation, radius2: float, cache: RowCache | None = None) -> None:
        super().__init__(st, cache)
        self.radius2 = radius2

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Z, _, norms = self.rows(X, y, offset)
        Zc = Z * np.minimum(1.0, math.sqrt(self.radius2) / np.maximum(norms, 1e-300))[:, None]
        return Zc.T @ Zc


#: :meth:`RowCache.step_operands` repeats a step's operands over the chains for chunks of at most this many entries
#: (n K): three more arrays of that size (6 MB at most)
FULL_OPERANDS = 1 << 18


def _residual_bounds(norms: np.ndarray, clip: float) -> tuple[np.ndarray, np.ndarray]:
    """(-t, t): t = C / ||z_i|| as an (n, 1) column, the bound on row i's residual that keeps ||z_i psi_i|| <= C."""
    t = (clip / np.maximum(norms, np.finfo(float).tiny))[:, None]
    return -t, t


def _clipped_residuals(Z: np.ndarray, v: np.ndarray, norms: np.ndarray, theta: np.ndarray,
                       clip: float) -> tuple[np.ndarray, np.ndarray]:
    """(r, psi): residuals Z theta - v and psi = r clipped to +-C / ||z|| (so ||z psi|| <= C); theta (d, K)."""
    R = Z @ theta - v[:, None]
    low, high = _residual_bounds(norms, clip)
    return R, np.clip(R, low, high)


def _clipped_residuals_inplace(Z: np.ndarray, v: np.ndarray, theta: np.ndarray,
                               bounds: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """psi of :func:`_clipped_residuals` from precomputed ``bounds`` (:func:`_residual_bounds`), computed in one
    buffer: min(max(r, -t), t) is ``np.clip``'s own definition (NaN propagates through both), so psi is the same
    array bit for bit.  ``v`` is (n,), or already (n, 1) or (n, K) (:meth:`RowCache.step_operands`)."""
    psi = Z @ theta
    psi -= v if v.ndim == 2 else v[:, None]
    np.maximum(psi, bounds[0], out=psi)
    return np.minimum(psi, bounds[1], out=psi)


class NormHistogramPass(_StandardisedPass):
    """Counts of the gradient norms ||z_i|| |r_i| at ``theta`` in the bins of ``grid``."""

    def __init__(self, st: Standardisation, theta: np.ndarray, grid: GeometricGrid,
                 cache: RowCache | None = None) -> None:
        super().__init__(st, cache)
        self.theta, self.grid = theta, grid

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Z, v, norms, live = self.live_rows(X, y, offset)
        values = norms * np.abs(Z @ self.theta - v)
        return grid_counts(values if live is None else values[live], self.grid)


class _ClipPass(_StandardisedPass):
    """A pass at the coefficients ``theta`` with the per-example gradient clip ``clip`` (both released or public)."""

    def __init__(self, st: Standardisation, theta: np.ndarray, clip: float, cache: RowCache | None = None) -> None:
        super().__init__(st, cache)
        self.theta, self.clip = theta, clip


class TailExcessPass(_ClipPass):
    """sum_i z_i (psi'_i - psi_i) at ``theta`` (d,): the part of each per-example gradient z_i r_i between the clip C
    (``clip``) and the tail clip C' > C (``tail``), psi and psi' the residual clipped at each; a row's term points
    along its gradient with norm min(g_i, C') - min(g_i, C) <= C' - C."""

    def __init__(self, st: Standardisation, theta: np.ndarray, clip: float, tail: float,
                 cache: RowCache | None = None) -> None:
        super().__init__(st, theta, clip, cache)
        self.tail = tail

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Z, v, norms = self.rows(X, y, offset)
        theta = self.theta[:, None]
        _, low = _clipped_residuals(Z, v, norms, theta, self.clip)
        _, high = _clipped_residuals(Z, v, norms, theta, self.tail)
        return Z.T @ (high - low)[:, 0]


class TailCheckPass(_ClipPass):
    """[sum_i (u' z_i) psi'_i(theta), sum_i (u' z_i) psi'_i(theta + step)] (2,): the derivative along the unit vector
    ``direction`` u of the loss whose per-example gradients are clipped at the tail clip C' (``clip``), at ``theta``
    and at ``theta + step``; each row adds at most C' in absolute value to each coordinate (|u' z_i psi'_i| <=
    ||z_i psi'_i|| <= C')."""

    def __init__(self, st: Standardisation, theta: np.ndarray, clip: float, direction: np.ndarray, step: np.ndarray,
                 cache: RowCache | None = None) -> None:
        super().__init__(st, theta, clip, cache)
        self.direction, self.step = direction, step

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Z, v, norms = self.rows(X, y, offset)
        _, psi = _clipped_residuals(Z, v, norms, np.stack([self.theta, self.theta + self.step], axis=1), self.clip)
        return (Z @ self.direction) @ psi


class GradientPass(_ClipPass):
    """sum_i z_i psi_i for each of the K iterates (columns of ``theta``): the per-example gradients z_i r_i
    clipped to norm ``clip``; a (d, K) array."""

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Z, v, norms = self.rows(X, y, offset)
        v_step, bounds = self.cache.step_operands(v, norms, self.clip, self.theta.shape[1])
        psi = _clipped_residuals_inplace(Z, v_step, self.theta, bounds)
        # (psi^T Z)^T is the BLAS product of Z^T psi with its two outer dimensions swapped, which OpenBLAS's kernels
        # run faster on these skinny shapes; each entry sums the same terms, but the order of the sum is the
        # kernel's: the same bits at the default chains wherever checked (tests/test_pgd.py), not with 8 or more
        # chains on some shapes, where the threaded kernels split the two orders differently (the last bits differ)
        return (psi.T @ Z).T


class InferencePass(_ClipPass):
    """[sum_i min(r_i^2 ||z_i||^2, C^2) / C^2, #{i : ||z_i|| |r_i| < C}] at ``theta``: each row adds at most 1
    to each coordinate."""

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        Z, v, norms, live = self.live_rows(X, y, offset)
        g = norms * np.abs(Z @ self.theta - v)
        unclipped = g < self.clip if live is None else (g < self.clip) & live
        return np.array([np.sum(np.minimum(g, self.clip) ** 2) / self.clip**2, np.sum(unclipped)])


class OutsideDomainPass(_StandardisedPass):
    """#{i : row i has a value beyond the domain of one of the variables ``columns`` (design columns of X, or of X M
    where the domain has a mix) or, with ``response``, a response beyond its domain}: the rows the domain clips in
    the variables whose domain was released.  Public null rows are not counted; each row adds 0 or 1."""

    def __init__(self, st: Standardisation, columns: Sequence[int], response: bool,
                 cache: RowCache | None = None) -> None:
        super().__init__(st, cache)
        self.columns, self.response = np.asarray(columns, dtype=np.intp), bool(response)

    @quiet
    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        dom = self.st.domain
        X = dom.columns(X)
        cols = self.columns
        outside = np.any((X[:, cols] < dom.lo[cols]) | (X[:, cols] > dom.hi[cols]), axis=1)
        if self.response:
            yv = np.asarray(y, dtype=float)
            outside |= (yv < dom.y_lo) | (yv > dom.y_hi)
        marked = null_marks(y)
        if marked is not None:
            outside &= ~marked
        return np.array([float(np.count_nonzero(outside))])


@dataclass(frozen=True)
class ClippingCheck:
    """The released count of rows beyond the released domain (:func:`clipping_check`).

    Attributes
    ----------
    count : float
        The released (noisy) count.
    sd : float
        Its noise sd.
    rows : float
        The rows it is read against (n, or the released count of rows that are not null rows).
    rows_released : bool
        ``rows`` is that released count (the data had public null rows), which the messages say, since it differs
        from the n the caller knows.
    """

    count: float
    sd: float
    rows: float
    rows_released: bool = False

    @property
    def lower(self) -> float:
        """The count less ``CLIPPED_Z`` noise sds (a one-sided 99% lower bound)."""
        return self.count - CLIPPED_Z * self.sd

    @property
    def material(self) -> bool:
        """Whether that lower bound is above ``CLIPPED_SHARE`` of the rows."""
        return self.lower > CLIPPED_SHARE * self.rows

    @property
    def shown(self) -> float:
        """The count as the messages say it: within [0, rows] (the noisy count can pass n: '3028 of 3000')."""
        return min(max(self.count, 0.0), self.rows)

    @property
    def rows_said(self) -> str:
        """The rows the count is read against, as the messages say them: n, or the released count of the rows
        without a missing value, named as such."""
        if self.rows_released:
            return f"about {self.rows:.0f} rows without a missing value (a released count)"
        return f"{self.rows:.0f} rows"

    def message(self, names: str) -> str:
        """The warning's message (released values and public names only)."""
        return (f"pgd clipped a material share of the rows to the domain it released for the variables without "
                f"declared bounds ({names}): its released count of rows with a value beyond that domain is about "
                f"{self.shown:.0f} of {self.rows_said}, {self.shown / self.rows:.0%} (noise sd {self.sd:.3g}): "
                f"even {CLIPPED_Z:g} noise sds below it, more than {CLIPPED_SHARE:.0%} of the rows. Those rows enter "
                "the fit clipped, so the estimate targets the fit of the clipped data (a robust fit), not least "
                "squares: with heavy-tailed variables, whose extreme rows set the least-squares slope, or a variable "
                "whose released domain missed most of its values (one far from 0 for its spread, such as a year), the "
                "two can differ by many standard errors, so no interval is given. Declare bounds that hold every "
                "value of these variables (pgd then clips to them and releases no domain), or transform them (logs "
                "for a long tail, years since a public origin)")

    def reason(self) -> str:
        """The results' ``inference_reason`` when the check withheld the intervals."""
        return (f"pgd's clipping check: about {self.shown:.0f} of {self.rows_said} had a value beyond "
                f"the clipping domain released for the variables without declared bounds (released count, noise sd "
                f"{self.sd:.3g}; even {CLIPPED_Z:g} noise sds below it, more than {CLIPPED_SHARE:.0%} of the rows): "
                "the fit targets the clipped data, a robust fit that heavy-tailed variables (or a variable whose "
                "domain missed its values) can set far from least squares, by more than an interval would show; "
                "declare bounds that hold every value, or transform the variables (docs/choosing.md, 'Heavy tails "
                "without bounds')")


def clipping_check(rows: Rows, st: Standardisation, cache: RowCache, columns: Sequence[int], response: bool,
                   mu: float, *, ledger: PrivacyLedger, rng: np.random.Generator) -> ClippingCheck:
    """The count of :class:`OutsideDomainPass` (rows beyond the released domain of a variable without bounds),
    released once by the Gaussian mechanism at ``mu`` with the replace-one sensitivity 1 (each row adds 0 or 1),
    and read against the rows (``st.rows``, or n): post-processing decides :attr:`ClippingCheck.material`."""
    count = gaussian_mechanism_mu(rows.reduce(OutsideDomainPass(st, columns, response, cache), add_arrays),
                                  l2_sensitivity=1.0, mu=mu, rng=rng, ledger=ledger,
                                  name="pgd: clipping check (rows beyond the released ranges)")
    return ClippingCheck(float(np.asarray(count, dtype=float)[0]), 1.0 / mu, float(st.rows or rows.n),
                         rows_released=st.rows is not None)


# -- the fit -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Plan:
    """Public facts of one fit, decided before anything is released."""

    n: int
    d: int
    n_mu: float
    chains: int
    inference: bool
    mus: dict[str, float]


def domain_mu(n: int, variables: int) -> float:
    """GDP parameter the released clipping domain of ``variables`` variables needs at n rows: each of its
    2 x variables histograms gets n mu_round = ``DOMAIN_N_MU`` (public)."""
    return DOMAIN_N_MU * math.sqrt(2.0 * variables) / n if variables else 0.0


def domain_refusal(n: int, d: int, epsilon: float, delta: float, private: Sequence[int | str],
                   names: Sequence[str] = (), screened: bool = False) -> str:
    """Why pgd cannot release a clipping domain for the variables ``private`` (no public range) at this n and
    epsilon ("" when it can): their histograms would need more than ``MAX_DOMAIN_SHARE`` of mu^2.  The message
    names them (``names``, when given), and says the n, or the epsilon at this n, that would suffice and that
    declaring their bounds avoids the domain (public facts only).  ``screened``: ``epsilon`` is the rest after the
    missing-value screen's share, and the epsilons named are the ones to request."""
    if not private:
        return ""
    mu = gaussian_mu(epsilon, delta)
    need = domain_mu(n, len(private))
    if need <= math.sqrt(MAX_DOMAIN_SHARE) * mu:
        return ""
    rows = _rows_needed(len(private), mu)
    listed = f" ({', '.join(names)})" if names else ""
    return (f"pgd needs a clipping domain for the {len(private)} variable(s) without declared bounds{listed}, which "
            f"at epsilon={requested_epsilon(epsilon, screened):g}, delta={delta:g} takes n >= {rows} rows (n={n})"
            f"{_epsilon_needed(need, n, delta, screened)}"
            "; declare bounds for them (or for the variables they are built from) to avoid it: pgd then clips to the "
            "bounds and releases no domain" + (_dropped_rows(n, len(private), epsilon, delta) if screened else ""))


def _dropped_rows(n: int, variables: int, epsilon: float, delta: float) -> str:
    """The refusal's part on missing='drop' (the missing-value screen's share of ``epsilon``, the rest after it, then
    goes to the fit): offered as a remedy where the n it needs is at most ``n``, else said not to suffice (public)."""
    rows = _rows_needed(variables, gaussian_mu(requested_epsilon(epsilon, True), delta))
    how = (f"missing='drop' (rows with a missing value then enter as public null rows, and the missing-value "
           f"screen's {SCREEN_SHARE:.0%} of epsilon goes to the fit)")
    if rows <= n:
        return f"; or pass {how}, which needs n >= {rows} rows"
    return f"; {how} would need n >= {rows} rows, more than n={n} too"


def _rows_needed(variables: int, mu: float) -> int:
    """The smallest n at which the clipping domain of ``variables`` variables fits in ``MAX_DOMAIN_SHARE`` of
    mu^2 (public)."""
    return math.ceil(DOMAIN_N_MU * math.sqrt(2.0 * variables) / (math.sqrt(MAX_DOMAIN_SHARE) * mu))


def _epsilon_needed(need: float, n: int, delta: float, screened: bool) -> str:
    """", or at n=... epsilon >= e": the epsilon at ``delta`` whose mu gives the domain's GDP parameter ``need`` at
    most ``MAX_DOMAIN_SHARE`` of mu^2, as requested (``screened``), rounded up to 3 significant digits ("" above
    ``MAX_EPSILON``)."""
    eps = requested_epsilon(gaussian_epsilon(need / math.sqrt(MAX_DOMAIN_SHARE), delta), screened)
    if not math.isfinite(eps) or eps > MAX_EPSILON:
        return ""
    digits = 2 - math.floor(math.log10(eps)) if eps > 0 else 0
    return f", or at n={n} epsilon >= {math.ceil(eps * 10.0**digits) / 10.0**digits:g}"


def budget_split(n: int, epsilon: float, delta: float, *, intercept: bool, inference: bool,
                 private_variables: int = 0) -> dict[str, float]:
    """The GDP parameter of each release of a fit (public): the domain's (:func:`domain_mu`, for
    ``private_variables`` variables without declared bounds), then mu^2 - mu_domain^2 split by ``WEIGHTS`` over
    the releases this fit makes (the centres only with an intercept, the tail correction and its check only where
    :func:`tail_level` gives a level, the inference 2-vector only with ``inference``, the clipping check only with a
    released domain)."""
    mu = gaussian_mu(epsilon, delta)
    mu_domain = domain_mu(n, private_variables)
    names = [*(["centre"] if intercept else []), "scale", "gram", "histogram 1", "histogram 2",
             *(["tail correction", "tail check"] if tail_level(n * mu) is not None else []), "warm start", "chains",
             *(["inference"] if inference else []), *(["clipping check"] if private_variables else [])]
    weights = [WEIGHTS["histogram"] if k.startswith("histogram") else WEIGHTS[k] for k in names]
    mus = dict(zip(names, split_mu(math.sqrt(mu * mu - mu_domain * mu_domain), weights), strict=True))
    if mu_domain:
        mus["domain"] = mu_domain
    return mus


def reports_intervals(n: int, epsilon: float, delta: float, inference: bool) -> bool:
    """Whether a fit with the option ``inference`` computes intervals: n * mu(epsilon, delta) reaches
    ``INTERVAL_MIN_N_MU`` (public)."""
    return inference and n * gaussian_mu(epsilon, delta) >= INTERVAL_MIN_N_MU


def _plan(ctx: FitContext, options: PGDOptions, ranges: tuple[tuple[float, float] | None, ...],
          intercept: int | None) -> _Plan:
    inference = reports_intervals(ctx.n, ctx.epsilon, ctx.delta, options.inference)
    private, _ = domain_variables(ctx.d, intercept, ranges, ctx.response_range)
    reason = domain_refusal(ctx.n, ctx.d, ctx.epsilon, ctx.delta, private, [ctx.variable_name(v) for v in private],
                            screened=ctx.method_epsilon is not None)
    if reason:
        raise InsufficientDataError(reason + "; nothing was spent")
    mus = budget_split(ctx.n, ctx.epsilon, ctx.delta, intercept=intercept is not None,
                       inference=inference, private_variables=len(private))
    return _Plan(ctx.n, ctx.d, ctx.n * gaussian_mu(ctx.epsilon, ctx.delta), options.chains if inference else 1,
                 inference, mus)


def steps_rule(gram: np.ndarray, precond_inv: np.ndarray, sigma_g: float, n: int,
               options: PGDOptions) -> tuple[int, float]:
    """(T, rate): the public step rule on the released Gram matrix (post-processing)."""
    floored = psd_projection(gram, RATE_FLOOR * sigma_g)
    rate = float(np.min(np.linalg.eigvals(precond_inv @ floored).real))
    return steps_at_rate(rate, n, options), rate


def steps_at_rate(rate: float, n: int, options: PGDOptions) -> int:
    """T: the user's ``steps``, else MIX / rate steps, between ``MIN_STEPS`` and a cap of ``WORK`` / n (300 to
    20,000), for the slowest direction's contraction ``rate`` per step (public)."""
    if options.steps is not None:
        return int(options.steps)
    cap = int(np.clip(WORK / n, 300, 20000))
    return int(np.clip(math.ceil(MIX / max(rate, 1e-12)), MIN_STEPS, cap))


def gram_sensitivity(d: int) -> float:
    """The replace-one L2 sensitivity of the Gram matrix of standardised rows clipped to squared radius
    ``GRAM_RADIUS2`` d: sqrt(2) times that squared radius (public)."""
    return math.sqrt(2.0) * GRAM_RADIUS2 * d


def preconditioner_lift(d: int, sigma_g: float) -> float:
    """What the preconditioner adds to the eigenvalues of the (projected) released Gram matrix, 2 sqrt(d) sigma_G:
    above the largest eigenvalue of its noise, so that no direction steps further than its curvature allows."""
    return 2.0 * math.sqrt(d) * sigma_g


def step_noise_variance(clip: float, mu: float, steps: int) -> float:
    """The variance per coordinate of one phase's noise on a step's gradient sum, per chain and divided by the
    number of chains K (so that the variance of the K chains' mean does not depend on K): (2 C)^2 T / mu^2."""
    return (2.0 * clip) ** 2 * steps / mu**2


def phase_penalty(clip: float, mu: float) -> float:
    """The ridge penalty of a phase at clip C and GDP parameter mu: ``PENALTY`` times 2 sqrt(2) C / mu, the sd per
    coordinate of the phase's privacy noise on the gradient sum once averaged over the kept iterates (public: a
    function of the released clip and the public budget)."""
    return PENALTY * 2.0 * math.sqrt(2.0) * clip / mu


def _phase(rows: Rows, st: Standardisation, cache: RowCache, start: np.ndarray, precond_inv: np.ndarray, clip: float,
           steps: int, mu: float, *, ledger: PrivacyLedger, rng: np.random.Generator, name: str,
           penalty: float = 0.0) -> np.ndarray:
    """``steps`` noisy preconditioned steps of K chains from ``start`` (d, K) at ``clip``, on the clipped least-squares
    loss plus ``penalty`` / 2 ||theta||^2; returns the (d, K) averages of the last ``KEEP_SHARE`` of the iterates.
    One Gaussian release per step of the K clipped gradient sums (sensitivity 2 C sqrt(K)) at mu / sqrt(steps):
    mu-GDP for the phase (the penalty's gradient is a function of the released iterate: post-processing)."""
    d, K = start.shape
    block = fixed_gaussian_block(rounds=steps, mu_round=mu / math.sqrt(steps), ledger=ledger, name=name,
                                 l2_sensitivity=2.0 * clip * math.sqrt(K), dimension=d * K,
                                 note=f"{K} chain{'s' if K > 1 else ''} of {steps} steps, per-example clip {clip:.4g}")
    theta = start.copy()
    total = np.zeros_like(theta)
    keep = max(1, int(KEEP_SHARE * steps))
    for t in range(steps):
        grad = rows.reduce(GradientPass(st, theta, clip, cache), add_arrays)
        noisy = np.asarray(block.release(grad.T.ravel(), rng=rng), dtype=float).reshape(K, d).T
        with np.errstate(**QUIET):
            theta = np.clip(theta - precond_inv @ (noisy + penalty * theta), -THETA_LIMIT, THETA_LIMIT)
        if t >= steps - keep:
            total += theta
    return total / keep


def _start_offsets(d: int, chains: int, spread: float, rng: np.random.Generator) -> np.ndarray:
    """(d, K) public offsets of the chains' starts: ``spread`` (:func:`start_spread`) times standard normals,
    centred over the K chains (zeros for one chain).  Post-processing: drawn independently of the data."""
    if chains < 2:
        return np.zeros((d, chains))
    offsets = spread * post_processing_normal((d, chains), rng)
    return offsets - offsets.mean(axis=1, keepdims=True)


def _clips(rows: Rows, st: Standardisation, cache: RowCache, theta: np.ndarray, phase: int, n_mu: float, mu: float,
           caps: tuple[float, float], *, minority: float | None = None, ledger: PrivacyLedger,
           rng: np.random.Generator) -> tuple[float, tuple[float, float]]:
    """(clip of this phase, caps of the final clips) from one released gradient-norm histogram at ``theta`` (d,).

    Phase 1 (theta = 0): the warm clip ``WARM_CLIP`` and, read from the same noisy counts, the caps of phase 2's
    clips: the clip rule's clip at theta = 0 and its tail clip (below).  Phase 2: the clip rule's clip k x
    (q-quantile) at the warm start, capped at the first cap, and, where n mu is large enough for a tail quantile
    (:func:`tail_level`, a public rule), the tail clip: the tail quantile of the gradient norms when that is larger,
    at most :func:`tail_cap` times the rule's clip (``TAIL_CAP``; ``TWO_VALUED_TAIL_CAP`` with a two-valued response,
    ``minority`` given), capped at the second cap and at least ``TAIL_FLOOR`` times the clip
    (the second cap returned).  The quantiles of a
    phase are read from the same noisy counts (post-processing); below n mu = ``CLIP_CEILING_N_MU`` every clip is
    capped at ``SMALL_CLIP_CEILING`` times k sqrt(d) (public)."""
    q, k = clip_rule(n_mu, minority, theta.shape[0])
    tail = tail_level(n_mu)
    ceiling = clip_ceiling(n_mu, k, theta.shape[0])
    counts = rows.reduce(NormHistogramPass(st, theta, NORM_GRID, cache), add_arrays)
    qs = ((WARM_CLIP[0],) if phase == 1 else ()) + (q,) + ((tail,) if tail is not None else ())
    read = release_quantiles(counts, qs, st.rows or rows.n, NORM_GRID, mu=mu, rng=rng, ledger=ledger,
                             name=f"pgd: gradient-norm histogram (phase {phase})")
    rule = min(read[1 if phase == 1 else 0] * k, ceiling)
    raised = max(rule, min(read[-1], tail_cap(minority is not None) * rule)) if tail is not None else rule
    if phase == 1:
        return WARM_CLIP[1] * min(read[0], ceiling), (rule, min(raised, ceiling))
    clip = min(rule, caps[0])
    return clip, (clip, max(TAIL_FLOOR * clip, min(raised, caps[1])))


def tail_cap(two_valued: bool) -> float:
    """The most the tail clip may exceed the clip by, as a multiple: ``TWO_VALUED_TAIL_CAP`` for a response that
    public facts make two-valued, else ``TAIL_CAP`` (public facts only).

    Parameters
    ----------
    two_valued : bool
        Whether public facts make the response two-valued.

    Returns
    -------
    float
        The cap, a multiple of the clip.
    """
    return TWO_VALUED_TAIL_CAP if two_valued else TAIL_CAP


def clip_ceiling(n_mu: float, multiple: float, d: int) -> float:
    """The cap on every clip read from a gradient-norm histogram (``SMALL_CLIP_CEILING`` times the clip rule's
    ``multiple`` times sqrt(d) below n mu = ``CLIP_CEILING_N_MU``, else none): public facts only."""
    return SMALL_CLIP_CEILING * multiple * math.sqrt(d) if n_mu < CLIP_CEILING_N_MU else math.inf


def _tail_excess(rows: Rows, st: Standardisation, cache: RowCache, theta: np.ndarray, clip: float, tail: float,
                 mu: float, *, ledger: PrivacyLedger, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """(released sum, its noise sd per coordinate): the sum of :class:`TailExcessPass` at ``theta`` (d,) between the
    clips C = ``clip`` < C' = ``tail``, released once by the Gaussian mechanism at ``mu`` with the replace-one
    sensitivity 2 (C' - C) (each row's term has norm at most C' - C)."""
    sensitivity = 2.0 * (tail - clip)
    excess = gaussian_mechanism_mu(
        rows.reduce(TailExcessPass(st, theta, clip, tail, cache), add_arrays), l2_sensitivity=sensitivity, mu=mu,
        rng=rng, ledger=ledger, name="pgd: per-example gradients between the clip and the tail clip (tail correction)")
    return np.asarray(excess, dtype=float), sensitivity / mu


def _tail_check(rows: Rows, st: Standardisation, cache: RowCache, theta: np.ndarray, tail: float, step: np.ndarray,
                mu: float, *, ledger: PrivacyLedger, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """(released pair, its noise sd per coordinate): the sum of :class:`TailCheckPass` at ``theta`` (d,) along the
    unit vector of ``step`` (a public function of released values; the first coordinate where ``step`` is 0),
    released once by the Gaussian mechanism at ``mu`` with the replace-one sensitivity 2 sqrt(2) C' (each row's
    pair has norm at most sqrt(2) C')."""
    size = float(np.linalg.norm(step))
    direction = step / size if size > 0.0 else np.eye(step.size)[0]
    sensitivity = 2.0 * math.sqrt(2.0) * tail
    pair = gaussian_mechanism_mu(
        rows.reduce(TailCheckPass(st, theta, tail, direction, step, cache), add_arrays), l2_sensitivity=sensitivity,
        mu=mu, rng=rng, ledger=ledger, name="pgd: derivative of the tail clip's loss along the tail correction's step")
    return np.asarray(pair, dtype=float), sensitivity / mu


def step_scale(pair: np.ndarray, sd: float) -> float:
    """The share of the tail correction's step to take, from the released derivatives (a_0, a_1) of the tail clip's
    loss along the step at its start and its end (:class:`TailCheckPass`, noise sd ``sd`` each): 1 unless a_1 is
    more than ``TAIL_CHECK_Z`` sds above 0 (the step passed the loss's minimum along its direction), else the
    secant's zero a_0^- / (a_0^- + a_1), a_0^- = max(-a_0, 0) (exact for a loss quadratic along the step; 0 where
    the loss does not fall along the step at its start).  Post-processing.

    Parameters
    ----------
    pair : numpy.ndarray
        (2,): the released derivatives at the start and at the end of the step.
    sd : float
        Their noise sd.

    Returns
    -------
    float
        The share, in [0, 1].

    Examples
    --------
    >>> step_scale(np.array([-3.0, 1.0]), 0.1)
    0.75
    >>> step_scale(np.array([-3.0, 0.1]), 0.1)
    1.0
    """
    start, end = float(pair[0]), float(pair[1])
    if not end > TAIL_CHECK_Z * sd:
        return 1.0
    falls = max(-start, 0.0)
    return falls / (falls + end)


@dataclass(frozen=True)
class TailCorrection:
    """The tail correction of a fit (:func:`tail_correction`; standardised coordinates).

    Attributes
    ----------
    shift : numpy.ndarray
        (d,): the one-step correction -M e of every coordinate.
    kept : numpy.ndarray
        (d,) bool: the coordinates whose estimate takes it (the excess stands out of its noise at level
        ``TAIL_TEST_LEVEL`` and the coordinate's shift is more than ``TAIL_Z`` of its noise sds).
    noise : numpy.ndarray
        (d, d): sd M, the map of a standard normal vector to the correction's noise.
    beyond : float
        The multiple of a taken correction that the gap left beyond the tail clip is taken to be at most,
        1 / ((C2 / C)^``TAIL_DECAY`` - 1) (:attr:`allowance`).
    signal_share : float
        (1 - d sd^2 / ||e||^2)^+: the share of the released excess's squared norm that is not its noise's expected
        one (||e||^2 - d sd^2 estimates the squared norm of the excess without noise without bias; 1: all signal).
    passed : numpy.ndarray or None
        (d,): the part of the correction taken that its check left out (:meth:`scaled`; None: the whole step).
    """

    shift: np.ndarray
    kept: np.ndarray
    noise: np.ndarray
    beyond: float = 0.0
    signal_share: float = 1.0
    passed: np.ndarray | None = None

    @property
    def sd(self) -> np.ndarray:
        """(d,): the noise sd of each coordinate's correction."""
        return np.sqrt(np.sum(self.noise**2, axis=1))

    @property
    def applied(self) -> np.ndarray:
        """The part of the shift the estimate takes (0 outside ``kept``)."""
        return np.where(self.kept, self.shift, 0.0)

    @property
    def left(self) -> np.ndarray:
        """The part it does not take: the estimate minus the less clipped fit, up to the correction's noise."""
        return np.where(self.kept, 0.0, self.shift)

    def scaled(self, share: np.ndarray) -> TailCorrection:
        """The correction with each coordinate's step, and so its noise, scaled by its ``share`` (d,: the share of
        :func:`step_scale` where a correction was taken, 1 elsewhere), the part of the correction taken that it
        leaves out kept as :attr:`passed`; the tests that chose :attr:`kept` do not depend on the scale."""
        return dataclasses.replace(self, shift=share * self.shift, noise=share[:, None] * self.noise,
                                   passed=(1.0 - share) * self.applied)

    @property
    def allowance(self) -> np.ndarray:
        """(d,): how far least squares can lie beyond the estimate, on the side of the correction taken, by the
        tail's decay (``beyond`` times the correction before its check; 0 where no correction was taken), and by the
        part of the correction taken that its check left out (:attr:`passed`: the secant's share is exact only along
        the whole step, so in a coordinate the fit clipped at the tail clip can lie as far as the whole step, and
        least squares beyond it)."""
        passed = 0.0 if self.passed is None else self.passed
        return self.beyond * (self.applied + passed) + passed


def tail_correction(excess: np.ndarray, curvature_inv: np.ndarray, sd: float,
                    clips: tuple[float, float]) -> TailCorrection:
    """The one-step correction -M e from the estimating equation clipped at C to the one clipped at the tail clip C',
    e the released excess (:class:`TailExcessPass`, Gaussian noise of sd ``sd`` per coordinate) and M =
    ``curvature_inv`` the inverse curvature of the final phase's penalised loss (the released Gram matrix, its
    eigenvalues floored at their noise sd, plus the penalty: without the preconditioner's lift, which only slows
    the steps and would shorten the correction); a coordinate's estimate takes it where the released excess stands
    out of its noise as a whole (||e||^2 / sd^2 beyond the (1 - ``TAIL_TEST_LEVEL``)-quantile of the chi-square
    with d degrees of freedom, its law where the residuals have no tail beyond C) and the coordinate's correction
    is more than ``TAIL_Z`` times its noise sd sd ||M_j||.  Post-processing.

    The interval targets the less clipped fit in every coordinate: where the estimate did not take the correction,
    its draws are moved by what was left (:attr:`TailCorrection.left`), so an interval stays honest when a gap
    below the test's threshold is real; everywhere they add the correction's noise.  Where it took the correction,
    the tail was long enough to show, and least squares can lie further on, beyond the tail clip: the interval
    extends by :attr:`TailCorrection.allowance` on that side, ``clips`` = (C, C') giving its multiple
    1 / ((C' / C)^``TAIL_DECAY`` - 1)."""
    excess = np.asarray(excess, dtype=float)
    shift = -curvature_inv @ excess
    clip, tail = clips
    statistic = float(np.sum((excess / sd) ** 2))
    untested = TailCorrection(shift, np.zeros(shift.shape, dtype=bool), sd * curvature_inv,
                              beyond=1.0 / ((tail / clip) ** TAIL_DECAY - 1.0),
                              signal_share=max(0.0, 1.0 - excess.size / statistic) if statistic > 0.0 else 0.0)
    shows = float(chi2_distribution.sf(statistic, excess.size)) < TAIL_TEST_LEVEL
    return dataclasses.replace(untested, kept=shows & (np.abs(shift) > TAIL_Z * untested.sd))


def _intercept(ctx: FitContext) -> tuple[int | None, np.ndarray | None]:
    """The intercept column pgd centres around, and the public matrix M of the intercept model where the design's
    constant is implicit in columns that sum to it (``ctx.constant``: ``y ~ 0 + C(g) + ...``; column k of X M is
    the constant, :func:`~dpstats.formula.centring.intercept_model`), else None.  Public facts only."""
    if ctx.intercept_index is not None or ctx.constant is None:
        return ctx.intercept_index, None
    return intercept_model(np.asarray(ctx.constant, dtype=float))


def rough_response_message(name: str) -> str:
    """The warning of a fit whose released response domain is rough
    (:class:`~dpstats.errors.RoughResponseDomainWarning`; public: the response's name)."""
    return (f"pgd's released clipping domain of the response{' ' + name if name else ''} is rough: most of the "
            "groups of rows it was released from hold a single value of the response (the released count of such "
            "groups exceeds that of the modal spread), as with a rare two-valued response stored as floats, so its "
            "scale comes from the few other groups, and the estimate, which is that of the response clipped to it, "
            "and its interval can be far from least squares. "
            f"Declare bounds for {name or 'the response'} (a 0/1 indicator: bounds (0, 1), stored as bool or int)")


def implicit_note(name: str) -> str:
    """The report's note where pgd fitted the intercept model of a design whose constant is implicit (public)."""
    return (f"the design has no Intercept column, but its columns sum to the constant 1 for every data set the "
            f"declarations allow, so pgd fitted the same model with '{name}' replaced by that constant (public), "
            "centring the other columns around it; the coefficients were mapped back (post-processing)")


@single_threaded_blas()
def fit(rows: Rows, ctx: FitContext, options: PGDOptions) -> MethodFit:
    """pgd (module docstring); the proof is docs/proofs/pgd.md.

    Runs on one BLAS thread (:func:`~dpstats.blas.single_threaded_blas`): every step is a pair of skinny products
    (n x d by d x K) and the fit makes hundreds, plus a few d x d decompositions, and threaded OpenBLAS paid its
    threads' start and synchronisation on each: a 3,250-row fit with a 125-level factor (d = 129) took 8.9 s on
    two shared cores, 2.0 s on one thread (BENCHMARKS.md, "pgd on wide designs")."""
    n, d = ctx.n, ctx.d
    intercept, implicit = _intercept(ctx)
    centring = ctx.centring if intercept is not None else None
    ranges = placeholder_ranges(tuple(ctx.column_ranges) if ctx.column_ranges else (None,) * d, centring)
    plan = _plan(ctx, options, ranges, intercept)
    mus, rng, ledger = plan.mus, ctx.rng, ctx.ledger
    domain, notes, response_lead = release_domain(rows.reduce, n, d, intercept_index=intercept, column_ranges=ranges,
                                                   response_range=ctx.response_range, mu=mus.get("domain", 1.0),
                                                   rng=rng, ledger=ledger, label=ctx.variable_name)
    if implicit is not None and intercept is not None:  # the intercept model X M: its column `intercept` is 1
        domain = dataclasses.replace(domain, mix=implicit)
        notes.append(implicit_note(ctx.variable_name(intercept)))
    mu_centre, values = mus.get("centre", 1.0), ctx.column_values  # two-valued columns: scaled from their centres
    if centring is not None:
        st, _ = release_centred_moments(rows.reduce, n, domain, centring, mu_centre=mu_centre, mu_scale=mus["scale"],
                                        rng=rng, ledger=ledger, null_rows=ctx.null_rows, column_values=values)
        notes.append(centred_note(centring))
    else:
        st = release_moments(rows.reduce, n, domain, mu_centre=mu_centre, mu_scale=mus["scale"], rng=rng,
                             ledger=ledger, null_rows=ctx.null_rows, column_values=values)
    sens_g = gram_sensitivity(d)
    cache = RowCache()
    check: ClippingCheck | None = None
    warned: tuple[tuple[type[Warning], str], ...] = ()
    if response_lead is not None and response_lead > 0.0:
        message = rough_response_message(f"'{ctx.response_name}'" if ctx.response_name else "")
        notes.append("WARNING: " + message)
        warned = ((RoughResponseDomainWarning, message),)
    if "clipping check" in mus:
        private, _ = domain_variables(d, intercept, ranges, ctx.response_range)
        check = clipping_check(rows, st, cache, [int(j) for j in private if j != "response"], "response" in private,
                               mus["clipping check"], ledger=ledger, rng=rng)
        if check.material:
            message = check.message(", ".join(ctx.variable_name(v) for v in private))
            notes.append("WARNING: " + message)
            warned = (*warned, (ClippedRowsWarning, message))
    gram = symmetric_gaussian_mechanism(rows.reduce(GramPass(st, GRAM_RADIUS2 * d, cache), add_arrays),
                                        l2_sensitivity=sens_g, mu=mus["gram"], rng=rng, ledger=ledger,
                                        name="pgd: noisy Gram matrix of the standardised rows (preconditioner)")
    sigma_g = sens_g / mus["gram"]
    precond = psd_projection(gram) + preconditioner_lift(d, sigma_g) * np.eye(d)
    steps, rate = steps_rule(gram, np.linalg.inv(precond), sigma_g, n, options)
    minority = response_minority(st) if ctx.two_valued_response else None
    q, k = clip_rule(plan.n_mu, minority, d)
    theta = np.zeros((d, 1))
    clips, penalties = [], []
    caps = (math.inf, math.inf)
    for phase, chains in ((1, 1), (2, plan.chains)):
        clip, caps = _clips(rows, st, cache, theta.mean(axis=1), phase, plan.n_mu, mus[f"histogram {phase}"], caps,
                            minority=minority, ledger=ledger, rng=rng)
        mu_phase = mus["warm start" if phase == 1 else "chains"]
        clips.append(clip)
        penalties.append(phase_penalty(clip, mu_phase))
        offsets = _start_offsets(d, chains, start_spread(plan.n_mu, d), rng)  # phase 2's: kept for error_split
        start = np.repeat(theta.mean(axis=1, keepdims=True), chains, axis=1) + offsets
        precond_inv = np.linalg.inv(precond + penalties[-1] * np.eye(d))  # the penalised loss's curvature
        theta = _phase(rows, st, cache, start, precond_inv, clip, steps, mu_phase, ledger=ledger, rng=rng,
                       name=f"pgd: noisy gradient steps (phase {phase})", penalty=penalties[-1])
    tail_clip, tail, corrected, share = caps[1], None, 0, np.ones(d)
    if "tail correction" in mus:
        excess, sd = _tail_excess(rows, st, cache, theta.mean(axis=1), clips[-1], tail_clip, mus["tail correction"],
                                  ledger=ledger, rng=rng)
        curvature = psd_projection(gram, sigma_g) + penalties[-1] * np.eye(d)  # the Gram without the lift
        tail = tail_correction(excess, np.linalg.inv(curvature), sd, (clips[-1], tail_clip))
        pair, check_sd = _tail_check(rows, st, cache, theta.mean(axis=1), tail_clip, tail.applied, mus["tail check"],
                                     ledger=ledger, rng=rng)
        share = np.where(tail.kept, step_scale(pair, check_sd), 1.0)
        tail = tail.scaled(share)
        theta, corrected = theta + tail.applied[:, None], int(np.count_nonzero(tail.kept))
    estimate = theta.mean(axis=1)
    params = st.params_back(estimate)
    notes += [(f"pgd: {steps} preconditioned full-batch steps per phase (2 phases; {plan.chains} independent final "
               f"chain{'s' if plan.chains > 1 else ''}); the warm start clips the per-example gradients at "
               f"{WARM_CLIP[1]:g} x their private {WARM_CLIP[0]:g}-quantile, the final phase at {k:g} x the private "
               f"{q:g}-quantile at the warm start"
               + ("; one more release, the part of the per-example gradients between that clip and their private "
                  f"{tail_level(plan.n_mu):.4g}-quantile (at most {tail_cap(minority is not None):g} x the clip, "
                  f"at least {TAIL_FLOOR:g} x), gave a one-step "
                  f"correction towards the less clipped fit, kept for {corrected} of the {d} coefficients (where the "
                  f"released part stood out of its noise at level {TAIL_TEST_LEVEL:g} and a coefficient's correction "
                  f"was more than {TAIL_Z:g} of its noise sds: a long tail of residuals on one side, which clipping "
                  "turns into a gap from least squares), and one more, the derivative of the tail clip's loss along "
                  f"that correction at its start and end, took {float(np.min(share)):.2g} of it (less than all of it "
                  "where it passed that loss's minimum)" if tail is not None else "")
               + "; each step adds a ridge penalty at the privacy-noise level; "
               f"coefficients are the average of the last {KEEP_SHARE:.0%} of the iterates (clipping makes this a "
               "Huber-type estimate, which differs from least squares when residuals are skewed and n * mu is small; "
               "the penalty shrinks directions of the design that the noise swamps)")]
    if floored := floored_note(st.floored, ctx.variable_name, _fixed_by_design(ctx)):
        notes.append(floored)
    diagnostics = {"steps": steps, "rate": rate, "clips": tuple(clips), "tail_corrected": corrected,
                   "tail_step": tuple(float(v) for v in share), "penalties": tuple(penalties), "chains": plan.chains,
                   "n_mu": plan.n_mu}
    if check is not None:
        diagnostics["rows_beyond_domain"] = (check.count, check.sd)
    lin = linearise(gram, sigma_g, clips, (mus["warm start"], mus["chains"]), steps, penalties)
    split = error_split(st, lin, theta, offsets, tail)
    if plan.n_mu < SMALL_N_MU:
        split = dataclasses.replace(split, privacy_lower_bound=True, privacy_source=split.privacy_source + (
            f"; below n * mu = {SMALL_N_MU:g} a lower bound: the released Gram matrix's noise hides the shrinkage of "
            "the weak directions, which the chains share and the table's standard errors include"))
    share_sd = None if st.y_centre_sd is None else 0.5 * st.y_centre_sd  # the two values sit at -1 and +1
    rare_outcome = rare_outcome_reason(plan.n_mu, minority, share_sd)
    if rare_outcome and not split.privacy_lower_bound:
        # the clip cuts the rare rows' residuals, so the clipped fit's target sits away from least squares by a gap
        # no released value measures (docs/choosing.md, "A rare outcome"): the chains' spread leaves it out
        split = dataclasses.replace(split, privacy_lower_bound=True, privacy_source=split.privacy_source + (
            "; with a two-valued response whose rarer value is rare for this budget a lower bound: the clip cuts "
            "the rare rows' residuals, and the clipped fit's gap from least squares, which no released value "
            "measures, is left out"))
    rare = (rare_outcome
            or complete_rows_reason(st.rows, plan.n_mu / n, st.rows_sd, n)
            or (check.reason() if check is not None and check.material else "")
            or one_value_reason(response_lead))
    if not plan.inference or rare:
        reason = ("inference=False gave the whole budget to the point estimate" if not options.inference
                  else rare or interval_reason(n, ctx.epsilon, ctx.delta, ctx.method_epsilon is not None))
        if plan.inference:  # withheld after the budget was split: the intervals' share stays unspent
            notes.append(unspent_inference_note(mus["inference"]))
        return MethodFit(params=params, no_inference_reason=reason, notes=tuple(notes), diagnostics=diagnostics,
                         rsquared_reason="pgd releases no sums from which R^2 follows", error_split=split,
                         centred=centring.centred if centring is not None else (), warnings=warned)
    floor = two_valued_variance(minority, share_sd, st.y_scale) if minority is not None else 0.0
    draws, sampling, resolved = _interval_draws(rows, st, cache, theta, gram, sigma_g,
                                                tail_clip if corrected else clips[-1], mus["inference"], n, lin,
                                                tail, rng=rng, ledger=ledger, variance_floor=floor)
    if resolved:  # else the error block's sampling part is the public assumption's (theory.coefficient_errors)
        split = dataclasses.replace(split, sampling=sampling, sampling_source=SAMPLING_SOURCE)
    inference = Inference("bootstrap", draws=draws, description=(
        f"spread of {plan.chains} independent chains (privacy error on these data, t with {plan.chains - 1} df; "
        "Brown et al. 2024) plus a sandwich sampling variance from released values, with the penalty's and early "
        "stopping's shrinkage undone through the released Gram matrix; predictive draws"), target=(
        "the fit whose per-example gradients are clipped" + (" at the tail clip" if tail is not None else "")
        + " (least squares where none is clipped; where large residuals fall mostly on one side, as with a response "
        "of many zeros and a long tail, a Huber-type fit that can differ from least squares by more than the "
        "interval's width" + ("; where a coefficient took the tail correction its interval reaches further towards "
                              "least squares, by the gap a tail decaying as slowly as a finite variance allows would "
                              "leave beyond that clip" if tail is not None else "") + ")"))
    return MethodFit(params=params, inference=inference, notes=tuple(notes), diagnostics=diagnostics,
                     theory_inputs=TheoryInputs(inference=True),
                     rsquared_reason="pgd releases no sums from which R^2 follows", error_split=split,
                     centred=centring.centred if centring is not None else (), warnings=warned)


@dataclass(frozen=True)
class Linearisation:
    """The two phases linearised in the eigenbasis of the released Gram matrix (:func:`linearise`; standardised
    coordinates).

    Attributes
    ----------
    basis : numpy.ndarray
        V (d, d), the eigenvectors of the released Gram matrix G~ (columns).
    shrink : numpy.ndarray
        s (d,): in direction k the expected estimate is s_k times the penalty-free solution (the penalties' ridge
        shrinkage and the early-stopping share of the starts at 0).
    carried : numpy.ndarray
        (d,): the variance of phase 1's noise left in the final estimate in each direction (common to the chains).
    noise : numpy.ndarray
        (d,): the variance of one chain's phase-2 output in each direction from its own noise.
    """

    basis: np.ndarray
    shrink: np.ndarray
    carried: np.ndarray
    noise: np.ndarray

    def bias(self, estimate: np.ndarray) -> np.ndarray:
        """The estimate's bias (s - 1) theta, with theta = estimate / s (the shrinkage undone, s floored at
        ``SHRINK_FLOOR``): V ((1 - 1 / s) V' estimate)."""
        V = self.basis
        return V @ ((1.0 - 1.0 / self.floored) * (V.T @ estimate))

    def undo(self, draws: np.ndarray) -> np.ndarray:
        """Rows of ``draws`` (B, d) mapped by S^-1 = V diag(1 / s) V' (s floored at ``SHRINK_FLOOR``)."""
        V = self.basis
        return ((draws @ V) / self.floored) @ V.T

    @property
    def floored(self) -> np.ndarray:
        return np.maximum(self.shrink, SHRINK_FLOOR)


def _shrinkage(w1: np.ndarray, w2: np.ndarray, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    """s = w_2 (r_1 (1 - w_1) - r_2) + r_2: the expected output over the penalty-free solution, phase 1 from 0 and
    phase 2 from phase 1's output, with start weights w_i and ridge shrinkage r_i (:func:`linearise`)."""
    return w2 * (r1 * (1.0 - w1) - r2) + r2


def linearise(gram: np.ndarray, sigma_g: float, clips: Sequence[float], mus: Sequence[float], steps: int,
              penalties: Sequence[float]) -> Linearisation:
    """The two phases linearised through the released Gram matrix (released values only: post-processing).

    In each eigendirection of the released Gram matrix G~ (eigenvalue g), phase i's preconditioner is
    P_i = max(g, 0) + 2 sqrt(d) sigma_G + lambda_i (lambda_i its ridge penalty) and the curvature of its penalised
    least-squares sum is taken as H_i = max(g, sigma_G) + lambda_i (G~ floored at its noise sd), so a chain's error
    about the phase's ridge solution r_i theta (r_i = h / (h + lambda_i)) follows the AR(1) recursion
    e_t = (1 - H_i / P_i) e_(t-1) - xi_t / P_i, with xi_t the step's noise: sd 2 C sqrt(K T) / mu per coordinate
    for each of K chains (:func:`_phase`).  Each chain's output averages its last ``KEEP_SHARE`` of the iterates,
    whose start weight is w_i (the mean of (1 - H_i / P_i)^t over the window); phase 2's chains start from phase
    1's average and phase 1 starts from 0, so the expected output is s theta with
    s = w_2 (r_1 (1 - w_1) - r_2) + r_2 (the early-stopping share and the penalties' shrinkage), phase 1's noise
    is carried with weight w_2 and phase 2's adds its window-mean variance.
    """
    d = gram.shape[0]
    g, V = np.linalg.eigh(0.5 * (gram + gram.T))
    floored = np.maximum(g, sigma_g)
    preconds = [np.maximum(g, 0.0) + preconditioner_lift(d, sigma_g) + penalty for penalty in penalties]
    return phases_linearised(V, preconds, [floored + penalty for penalty in penalties],
                             [floored / (floored + penalty) for penalty in penalties], clips, mus, steps)


def phases_linearised(basis: np.ndarray, preconds: Sequence[np.ndarray], curvatures: Sequence[np.ndarray],
                      ratios: Sequence[np.ndarray], clips: Sequence[float], mus: Sequence[float],
                      steps: int) -> Linearisation:
    """The two phases' AR(1) recursions e_t = (1 - H_i / P_i) e_(t-1) - xi_t / P_i in each direction of ``basis``
    (:func:`linearise`), given each phase's preconditioner P_i and penalised curvature H_i per direction, its ridge
    shrinkage r_i, its clip C_i and GDP parameter mu_i (xi_t: sd 2 C_i sqrt(K T) / mu_i per coordinate for each of
    K chains, so that the variance of the K chains' mean does not depend on K)."""
    d = basis.shape[0]
    keep = max(1, int(KEEP_SHARE * steps))
    t = np.arange(1, steps + 1)
    window = t > steps - keep
    first = np.maximum(t, steps - keep + 1)
    start_weights, noise_sums = [], []
    for precond, curvature in zip(preconds, curvatures, strict=True):
        contraction = np.clip(1.0 - curvature / precond, 0.0, 1.0)
        # powers a^t (steps x d), the start's weight (mean of a^t over the window) and each noise draw's weight
        powers = contraction[None, :] ** t[:, None]
        start_weights.append(powers[window].mean(axis=0))
        partial = np.cumsum(np.vstack([np.ones((1, d)), powers[:keep - 1]]), axis=0)  # row L - 1: sum_{j<L} a^j
        # draw k (1-based) enters the window's sum with weight sum_{t = f}^{T} a^(t - k), f = max(k, T - m + 1)
        weights = (contraction[None, :] ** (first - t)[:, None]) * partial[steps - first]
        noise_sums.append(np.sum(weights**2, axis=0) / keep**2 / precond**2)  # variance of the window mean
    sd2 = [step_noise_variance(c, m, steps) for c, m in zip(clips, mus, strict=True)]
    (w1, w2), (r1, r2) = start_weights, ratios
    return Linearisation(basis=basis, shrink=_shrinkage(w1, w2, r1, r2), carried=w2**2 * noise_sums[0] * sd2[0],
                         noise=noise_sums[1] * sd2[1])


def kept_share(deviations: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The share of their start offsets the final chains kept in each direction (row): the least-squares coefficient
    of the chains' deviations from their mean (d, K) on their public start offsets (d, K), both in the same
    coordinates (the eigenbasis of the released Gram matrix in :func:`error_split`), in [0, 1] (0 where the offsets
    are 0).  Post-processing: the chains' outputs are released, the offsets public."""
    scale = np.sum(offsets**2, axis=1)
    return np.clip(np.sum(deviations * offsets, axis=1) / np.where(scale > 0, scale, 1.0), 0.0, 1.0)


def significant_share(share: np.ndarray, deviations: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """``share`` (:func:`kept_share`) where the chains' own noise would exceed it with probability below
    1 - ``SHARE_TEST_LEVEL`` (one-sided t test of the least-squares slope, K - 2 degrees of freedom), else 0.

    With no share kept, the fitted slope is the chains' noise projected on their offsets; taken as a kept share,
    that noise would be removed from the spread.  Needs K >= 3 chains (deviations d x K).
    Post-processing."""
    k = deviations.shape[1]
    scale = np.sum(offsets**2, axis=1)
    residual = np.sum((deviations - share[:, None] * offsets) ** 2, axis=1) / (k - 2.0)
    se = np.sqrt(residual / np.where(scale > 0, scale, 1.0))
    return np.where(share > t_distribution.ppf(SHARE_TEST_LEVEL, k - 2) * se, share, 0.0)


def error_split(st: Standardisation, lin: Linearisation, chains: np.ndarray, offsets: np.ndarray,
                tail: TailCorrection | None = None) -> ErrorSplit:
    """The privacy part of the error of the released coefficients (method units), from released values.

    The two phases linearised (:func:`linearise`): the second moment of the estimate's privacy error is the bias
    (s - 1) theta squared, theta plugged in from the released estimate with the shrinkage undone
    (:meth:`Linearisation.bias`), plus the variance of phase 1's noise carried into the output and of phase 2's
    (divided by K).  With K >= 2 final chains (``chains``: their averages, d x K), phase 2's part is their
    covariance divided by K instead (the spread of independent chains, Brown et al. 2024: it sees the actual
    geometry and clipping, which the linearisation does not), taken after removing from each chain the share w_k
    of its public start offset (``offsets``, d x K) that the chains kept in each eigendirection k of the released
    Gram matrix (:func:`kept_share`, where significant: :func:`significant_share`): the offsets sum to zero over
    the chains, so they are in the chains' spread but not in their mean, the estimate (the intervals keep them, to
    show the directions the steps leave unconverged).
    Where the share is above ``KEPT_SHARE_LIMIT`` the steps learned almost nothing in that direction and its whole
    spread is kept.  In each direction the residuals' sum of squares is divided by K - 2 where the share is fitted
    inside (0, 1) (it takes one degree of freedom), else by K - 1; with K = 2 no share is fitted.  With the tail
    correction (``tail``: :func:`tail_correction`), the noise of the corrections the estimate took, and for each
    coordinate that did not take its correction the square of the gap to the less clipped fit, f l^2, with l the
    correction left and f = :attr:`TailCorrection.signal_share`, the share of the released excess's squared norm
    beyond its noise's (the squared gaps then add up, in the excess's coordinates, to ||e||^2 - d sd^2, the unbiased
    estimate of the noise-free excess's squared norm; a per-coordinate l^2 - sd^2 floored at 0 counted about half a
    noise variance of gap per coordinate where there was none; the interval's draws, which must not understate the
    gap, use l itself and the noise), and for a taken correction the gap left beyond the tail clip as uniform up to its
    allowance (:attr:`TailCorrection.allowance`; second moment a a^T / 3).  Each coefficient's variance from the
    chains is capped at that of their whole spread (:func:`~dpstats.methods.spec.capped_spread`: the offsets are
    independent of the privacy noise, so the whole spread's expected covariance is the noise's plus the kept
    offsets', per coefficient an upper bound on the noise's) in the units the user reads: the split carries the
    uncapped part and its cap (``ErrorSplit.capped``), and the pipeline's public rescaling, which mixes the
    intercept with the slopes, caps again after its map (:meth:`~dpstats.methods.spec.ErrorSplit.in_units`).  The
    bias and the carried variance are those of ``lin``, the linearisation the interval's draws use
    (:func:`_interval_draws`): the kept share is phase 2's start weight, and phase 2 starts from phase 1's output,
    close to the solution, so it is not read as a shrinkage of the estimate (``docs/proofs/pgd.md``).  Per-example
    clipping is taken as inactive (the clipped equation's Huber-type bias against least squares is not included).
    """
    estimate = chains.mean(axis=1)
    V = lin.basis
    A, _ = st.affine_back()
    AV = A @ V  # eigenbasis coordinates -> method units
    d, k = chains.shape
    capped = None
    if k < 2:
        phase2 = (AV * lin.noise) @ AV.T
    else:
        dev = V.T @ (chains - estimate[:, None])  # the chains' deviations and their offsets in the eigenbasis
        off = V.T @ offsets
        share = significant_share(kept_share(dev, off), dev, off) if k > 2 else np.zeros(d)
        share = np.where(share <= KEPT_SHARE_LIMIT, share, 0.0)  # unlearned directions keep their whole spread
        dof = np.where((share > 0.0) & (share < 1.0), k - 2.0, k - 1.0)  # a fitted share takes one
        residuals = (dev - share[:, None] * off) / np.sqrt(dof)[:, None]
        fitted, whole = AV @ residuals, AV @ dev
        capped = (fitted @ fitted.T / k, whole @ whole.T / (k * (k - 1.0)))
        phase2 = capped_spread(*capped)
    bias = A @ lin.bias(estimate)
    cov = (AV * lin.carried) @ AV.T + phase2 + np.outer(bias, bias)
    if tail is not None:
        gap = A @ (math.sqrt(tail.signal_share) * tail.left)
        kept_noise = A @ (tail.noise * tail.kept[:, None])
        beyond = A @ tail.allowance  # the gap beyond the tail clip, taken as uniform up to its allowance
        cov = cov + kept_noise @ kept_noise.T + np.outer(gap, gap) + np.outer(beyond, beyond) / 3.0
    source = ("the spread of the final chains without the share of their start offsets they kept, with the warm "
              "start's noise, the early-stopping share and the penalties' shrinkage of the released estimate "
              "propagated through the released Gram matrix"
              if k >= 2 else
              "the released per-step noise of both phases, the early-stopping share and the penalties' shrinkage "
              "of the released estimate, propagated through the released Gram matrix (linearised)")
    source += "; clipping bias not included" if tail is None else (
        "; the tail correction's noise and, where a coefficient took it, the gap beyond the tail clip as the tail's "
        "slowest decay for a finite variance allows")
    return ErrorSplit(privacy=cov, privacy_source=source, capped=capped)


def _interval_draws(rows: Rows, st: Standardisation, cache: RowCache, chains: np.ndarray, gram: np.ndarray,
                    sigma_g: float, clip: float, mu: float, n: int, lin: Linearisation,
                    tail: TailCorrection | None = None, *, variance_floor: float = 0.0,
                    rng: np.random.Generator, ledger: PrivacyLedger) -> tuple[np.ndarray, np.ndarray, bool]:
    """Predictive draws of the coefficients (method units) whose basic intervals undo the estimate's shrinkage,
    the sandwich sampling covariance (method units) they use, and whether the released values resolve it
    (:func:`sampling_resolved`).

    Linearised, the estimate is b = S (theta + u) + e in the standardised coordinates (:func:`linearise`:
    S = V diag(s) V', the penalties' ridge shrinkage and early stopping; u the sampling error of the clipped
    estimating equation; e the privacy error), so b - theta = (I - S^-1) b + S^-1 e + u.  The draws are
    b + (I - S^-1) b + S^-1 (t + c) + z: t multivariate t_(K-1) with the chains' covariance / K (Brown et al.
    2024), c normal with the variance of phase 1's noise carried into the output (common to the chains, so not in
    their spread), z normal with the sandwich covariance (E psi^2 / phi^2) G^-1 of the clipped estimating
    equation, E psi^2 and phi (the unclipped share) from one released 2-vector (sensitivity sqrt 2), taken on the
    side that does not understate it (:func:`sandwich`; at the tail clip where a coefficient took the tail
    correction: its estimating equation has the larger sampling variance; E psi^2 / phi^2 at least
    ``variance_floor``, :func:`two_valued_variance` for a two-valued response), and, with the tail correction
    (``tail``), normal draws of its noise, moved by minus the part of it the estimate did not take (the draws are
    of the estimate's error against the less clipped fit: :func:`tail_correction`), and stretched beyond the
    corrections taken by their allowance for the gap left beyond the tail clip and the part its check left out
    (:func:`stretch_beyond`).
    The basic interval of these draws, 2 b - quantiles, is then centred at S^-1 b, the estimate with its shrinkage
    undone, and its privacy part is widened by S^-1 (bias-corrected; the point estimate itself is unchanged).
    The sampling covariance is also the error block's sampling part (``SAMPLING_SOURCE``).
    """
    estimate = chains.mean(axis=1)
    stats = rows.reduce(InferencePass(st, estimate, clip, cache), add_arrays)
    noisy = np.asarray(gaussian_mechanism_mu(np.asarray(stats, dtype=float), l2_sensitivity=math.sqrt(2.0), mu=mu,
                                             rng=rng, ledger=ledger,
                                             name="pgd: clipped residual variance and unclipped count (inference)"),
                       dtype=float)
    A, _ = st.affine_back()
    norm_bound = gradient_norm_bound(st, estimate)
    v_sampling = A @ sandwich(noisy, psd_projection(gram, sigma_g), clip, st.rows or n, mu, norm_bound,
                              variance_floor) @ A.T
    resolved = sampling_resolved(noisy, clip, st.rows or n, mu, norm_bound)
    d, K = chains.shape
    dev = (chains - estimate[:, None]).T  # (K, d) chain outputs about their mean, standardised coordinates
    g = post_processing_normal((DRAWS, K), rng)
    chi2 = np.sum(post_processing_normal((DRAWS, K - 1), rng) ** 2, axis=1)  # chi-square with K - 1 df
    spread = (g @ dev) / math.sqrt(K * (K - 1)) * np.sqrt((K - 1) / chi2)[:, None]
    carried = (post_processing_normal((DRAWS, d), rng) * np.sqrt(lin.carried)) @ lin.basis.T
    privacy = lin.undo(spread + carried) + lin.bias(estimate)[None, :]
    if tail is not None:
        privacy = privacy + post_processing_normal((DRAWS, d), rng) @ tail.noise.T - tail.left[None, :]
    w, V = np.linalg.eigh(0.5 * (v_sampling + v_sampling.T))
    sampling = (post_processing_normal((DRAWS, w.size), rng) * np.sqrt(np.maximum(w, 0.0))) @ V.T
    draws = st.params_back(estimate)[None, :] + privacy @ A.T + sampling
    if tail is not None and tail.kept.any():
        draws = stretch_beyond(draws, A @ tail.allowance, rng)
    return draws, v_sampling, resolved


def stretch_beyond(draws: np.ndarray, allowance: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The draws (B, d) with, in each coordinate j, those on the side of its median away from ``allowance`` a_j
    moved by -U a_j (U uniform on [0, 1], one per draw, common to the coordinates): the basic interval
    2 b - quantiles then reaches up to |a_j| further on the side of a_j and no less far on the other, so it covers a
    target anywhere up to a_j beyond the one the draws were for (:func:`tail_correction`).  Post-processing of the
    draws and a released allowance."""
    u = post_processing_uniform((draws.shape[0], 1), rng)
    away = (draws - np.median(draws, axis=0)) * allowance[None, :] < 0.0
    return draws - np.where(away, u * allowance[None, :], 0.0)


def gradient_norm_bound(st: Standardisation, theta: np.ndarray) -> float:
    """A public bound on every row's gradient norm ||z_i|| |z_i' theta - v_i| at ``theta`` (standardised
    coordinates): the domain maps each variable into [-1, 1], so whatever the released centres,
    |z_j| <= (1 + |c_j|) / s_j (1 for the intercept) and |v| <= (1 + |c_y|) / s_y.  Released values only."""
    zmax = (1.0 + np.abs(st.centre)) / st.scale
    if st.domain.intercept_index is not None:
        zmax[st.domain.intercept_index] = 1.0
    vmax = (1.0 + abs(st.y_centre)) / st.y_scale
    return float(np.linalg.norm(zmax) * (zmax @ np.abs(theta) + vmax))


def sandwich(noisy: np.ndarray, gram_floor: np.ndarray, clip: float, rows: float, mu: float,
             norm_bound: float, variance_floor: float = 0.0) -> np.ndarray:
    """The sandwich sampling covariance (E psi^2 / phi^2) G^-1 of the clipped estimating equation (standardised
    coordinates) from the released 2-vector ``noisy`` = (s_1, s_2) (:class:`InferencePass`, Gaussian noise of sd
    sqrt(2) / mu per coordinate), the released Gram matrix with its eigenvalues floored at their noise sd
    (``gram_floor``), the clip C, the number of rows the moments count (``rows``) and the public bound on the
    gradient norms (``norm_bound``, :func:`gradient_norm_bound`).  Post-processing.

    Where n * mu is small the 2-vector's noise is as large as its coordinates, so each ingredient takes the side
    that does not understate the sampling error, at the level z = ``SAMPLING_Z`` (the one-sided 95% normal
    quantile: each bound falls on the wrong side of its statistic with probability at most 5%, which keeps the
    sampling part honest where it matters, at moderate n * mu, while a bound moves its statistic by only
    z sqrt(2) / mu, a share of order z sqrt(2) / (mu n) that vanishes where n * mu is large):

    * E psi^2 from the upper bound s_1 + z sqrt(2) / mu of the clipped sum of squares, at least the margin
      z sqrt(2) / mu itself (a released s_1 far below 0 is noise, not a sum of squares near 0, and would state no
      sampling error at all), capped at its public maximum rows * min(1, B^2 / C^2) (each row adds
      min(g_i^2, C^2) / C^2 with g_i <= B = ``norm_bound``);
    * phi, the unclipped share, from the larger of two lower bounds on the unclipped count, s_2 - z sqrt(2) / mu
      and rows minus the bound on s_1 (a clipped row adds exactly 1 to s_1, so at most s_1 rows are clipped),
      over rows, clipped to [0.25, 1] (phi = 1 where C > B: no row can be clipped);
    * G: where the noise floor of the released Gram matrix is above the curvature of the standardised rows (small
      n * mu), its trace, which E psi^2 is per unit of, and its inverse would both state the sampling error
      several times too small, so the floored matrix is scaled down to the trace rows * d at which the private
      standardisation aims (unit-scale columns), when its own trace is larger (its shape is kept; where the noise
      is small the trace is below rows * d and nothing changes);
    * ``variance_floor`` (standardised response units; 0: none): E psi^2 / phi^2 is taken at least this large.  With
      a two-valued response it is :func:`two_valued_variance`, a bound on least squares' residual variance: where
      the clip cuts the rarer value's residuals, the clipped equation's E psi^2 misses them, and its sandwich stated
      a sampling error well below least squares'.
    """
    d = gram_floor.shape[0]
    gram = gram_floor * min(1.0, rows * d / max(float(np.trace(gram_floor)), 1e-300))
    clipped_sum = _clipped_sum_bound(noisy, clip, rows, mu, norm_bound)
    e_psi2 = clipped_sum * clip**2 / max(float(np.trace(gram)), 1e-300)
    phi = float(np.clip(_unclipped_share_bound(noisy, clip, rows, mu, norm_bound), UNCLIPPED_SHARE_FLOOR, 1.0))
    return max(e_psi2 / phi**2, variance_floor) * np.linalg.inv(gram)


def two_valued_variance(minority: float, share_sd: float | None, y_scale: float) -> float:
    """A one-sided upper bound on the variance of a two-valued response, in standardised units: 4 m (1 - m) / s_y^2,
    m the released share of its rarer value ``minority`` plus ``SAMPLING_Z`` times its noise sd ``share_sd`` (at most
    1/2; 0 where None), s_y the released scale of the response (``y_scale``).  The domain maps the two values to -1
    and +1, where a share m of the rarer value has variance 4 m (1 - m); least squares' residuals (with an intercept)
    have a mean square at most that variance, so it bounds the homoscedastic sampling variance factor of least
    squares (White 1980: the sandwich's middle term), which the clipped equation's E psi^2 misses where the clip cuts
    the rarer value's residuals (docs/choosing.md, "A rare outcome").  Post-processing of released values.

    Parameters
    ----------
    minority : float
        The released share of the rarer value (:func:`response_minority`).
    share_sd : float or None
        Its noise sd (public), or None.
    y_scale : float
        The released scale of the response (``Standardisation.y_scale``).

    Returns
    -------
    float
        The bound, the floor :func:`sandwich` takes for E psi^2 / phi^2.
    """
    m = min(0.5, minority + SAMPLING_Z * (share_sd or 0.0))
    return 4.0 * m * (1.0 - m) / max(y_scale, 1e-300) ** 2


def _clipped_sum_bound(noisy: np.ndarray, clip: float, rows: float, mu: float, norm_bound: float) -> float:
    """The upper bound on the clipped sum of squares that :func:`sandwich` takes (post-processing)."""
    margin = SAMPLING_Z * math.sqrt(2.0) / mu
    return min(max(float(noisy[0]) + margin, margin), rows * min(1.0, (norm_bound / clip) ** 2))


def _unclipped_share_bound(noisy: np.ndarray, clip: float, rows: float, mu: float, norm_bound: float) -> float:
    """The lower bound on the unclipped share phi that :func:`sandwich` takes, before its floor (post-processing)."""
    if norm_bound < clip:
        return 1.0
    margin = SAMPLING_Z * math.sqrt(2.0) / mu
    return max(float(noisy[1]) - margin, rows - _clipped_sum_bound(noisy, clip, rows, mu, norm_bound)) / rows


def sampling_resolved(noisy: np.ndarray, clip: float, rows: float, mu: float, norm_bound: float) -> bool:
    """Whether the released 2-vector ``noisy`` bounds the unclipped share phi from below at or above
    ``UNCLIPPED_SHARE_FLOOR`` (post-processing of released values and public facts).

    Where it does not, the floor decides phi in :func:`sandwich`, and the true share can be far below it (a clip
    well under the typical gradient norm leaves few rows unclipped; the clipped estimating equation's variance
    then grows like 1 / phi^2), so the sandwich is not a bound on the sampling error: the intervals keep it (the
    privacy part dominates there), but the error block does not state it as released.

    Parameters
    ----------
    noisy : numpy.ndarray
        The released 2-vector (clipped sum of squares, unclipped count) of :class:`InferencePass`.
    clip : float
        The clip C of the estimating equation.
    rows : float
        The number of rows the moments count.
    mu : float
        The 2-vector's GDP parameter (noise sd sqrt(2) / mu per coordinate).
    norm_bound : float
        The public bound on the gradient norms (:func:`gradient_norm_bound`).

    Returns
    -------
    bool
        True when the released bound on phi is at least the floor.
    """
    return _unclipped_share_bound(noisy, clip, rows, mu, norm_bound) >= UNCLIPPED_SHARE_FLOOR


def floored_note(variables: Sequence[int | str], name: Callable[[int | str], str],
                 by_design: Callable[[int | str], bool] = lambda v: False, shown: int = 5) -> str:
    """The note naming the design columns whose released scale sat at its floor (:attr:`Standardisation.floored`;
    the response is left out), at most ``shown`` of them by name: public names of released facts ("" when none).
    ``by_design``: whether a column's values are fixed by the design (a factor's dummy, or an integer column declared
    between consecutive integers), which no declared bound can narrow, so the note's advice for it is another."""
    columns = [v for v in variables if v != "response"]
    if not columns:
        return ""
    declared = [v for v in columns if not by_design(v)]
    fixed = [v for v in columns if by_design(v)]
    parts = [_floored_declared(declared, name, shown)] if declared else []
    parts += [_floored_by_design(fixed, name, shown, also=bool(declared))] if fixed else []
    return "; ".join(parts)


def _fixed_by_design(ctx: FitContext) -> Callable[[int | str], bool]:
    """Whether a design column's values are fixed by the design (:attr:`FitContext.column_values`: a factor's
    dummies, an integer column declared between consecutive integers; public)."""
    values = ctx.column_values or ()
    return lambda v: isinstance(v, int) and v < len(values) and values[v] is not None


def _listed(columns: Sequence[int | str], name: Callable[[int | str], str], shown: int) -> str:
    """At most ``shown`` column names, then how many more."""
    return ", ".join(name(v) for v in columns[:shown]) + (
        f" and {len(columns) - shown} more" if len(columns) > shown else "")


def _floored_declared(columns: Sequence[int | str], name: Callable[[int | str], str], shown: int) -> str:
    """The floored note's part for columns whose range comes from declared bounds or a released domain."""
    return (f"pgd: the released spread of {_listed(columns, name, shown)} is at the smallest its release resolves at "
            "this n and epsilon (a column nearly constant in these data, one whose spread the noise swamps, or one "
            "whose declared bounds are far wider than its values); pgd scales such a column by that floor, so its "
            "coefficient rests on little information and the ridge penalty can shrink it towards 0 by more than its "
            "interval corrects for: declare bounds no wider than the values can be (where they already are, the "
            "noise swamps the spread at this n and epsilon, and more rows or a larger epsilon resolve it), and drop "
            "a column that is constant by design")


def _floored_by_design(columns: Sequence[int | str], name: Callable[[int | str], str], shown: int,
                       also: bool) -> str:
    """The floored note's part for columns whose values the design fixes (a factor's dummies, an integer column
    declared between consecutive integers: :attr:`FitContext.column_values`): no narrower bound to declare."""
    lead = (f"so is that of {_listed(columns, name, shown)}" if also else
            f"pgd: the released spread of {_listed(columns, name, shown)} is at the smallest its release resolves at "
            "this n and epsilon")
    return (f"{lead}, columns whose values the design fixes (a factor's dummies, or an integer column declared "
            "between two consecutive integers such as 0 and 1: no narrower bounds to declare), so a level or value "
            "rare in these data or a spread the noise swamps; their coefficients rest on little information and "
            "the ridge penalty can shrink them towards 0 by more than their intervals correct for: more rows or a "
            "larger epsilon resolve it, and a rare level can be recoded into a similar one before the fit")


def expected_error(facts: PlanningFacts) -> ExpectedError:
    """The second moment of a planned pgd fit's privacy error, in the method's units (:func:`dpstats.plan`).

    pgd has no rate for ||b - beta||_2 in the minimax model, but every value its fit reads from a release has an
    expected value under the planner's assumptions (:class:`~dpstats.rates.PlanningFacts`), so its public rules
    can be run noise-free: the budget split (:func:`budget_split`); the standardisation at the assumed means and
    spreads (:func:`~dpstats.methods.common.private_scaling.assumed_standardisation`); the clips, read by the fit's
    quantile rule from the expected histogram of the gradient norms ||z|| |r| (z normal with the standardised
    second moment, r normal and independent of z: the standardised response at theta = 0 for the warm start and the
    cap, the residual at the fit for the clip rule; symmetric residuals, so the tail clip does not apply:
    :class:`~dpstats.methods.common.planned_descent.NormLaw`); the steps, penalties and Gram noise by the fit's
    rules.  The two phases are then linearised in the eigenbasis of the expected Gram matrix n E[z z^T]
    (:func:`phases_linearised`), with the clipped loss's curvature the unclipped share times n E[z z^T] (a clipped
    row's gradient does not depend on theta), not floored at the Gram noise as the fit's own error block floors the
    released matrix.  The unclipped share is taken at the noisy iterates: their spread about the fit
    (:func:`~dpstats.methods.common.planned_descent.iterate_variance`) widens the residuals the clip sees, which
    lowers the share, which widens the spread; ``WANDER_ROUNDS`` rounds reach the fixed point.

    The planned privacy error is that of the estimate with its linearised shrinkage s divided out in each direction
    (as the fit's intervals divide it out, :meth:`Linearisation.undo`): s^-1 (s theta_LS + noise) minus least
    squares' theta_LS, the noise over s, mapped back by the standardisation.  It does not depend on the assumed
    coefficients.  The released coefficient's own distance from least squares, (s - 1) theta_LS + noise, is smaller
    for a coefficient near 0 and larger for one far from 0 where s < 1: with the coefficients assumed 0 (R^2 = 0)
    it counted the shrinkage towards 0 as free, and rose with epsilon where s does (docs/guide/planning.md).  First
    order in the noise, and
    only as good as the assumptions: the Gram matrix's noise in the preconditioner is replaced by its expected
    value, and neither the final chains' path from their wider start offsets below n * mu = 100 nor a
    skewed or heavy-tailed residual distribution is modelled.  Measured against fits on data drawn from the
    assumptions by benchmarks/plan_calibration.py (docs/guide/planning.md).
    """
    n, d, k = facts.n, facts.d, facts.intercept_index
    inference = reports_intervals(n, facts.epsilon, facts.delta, facts.inference)
    mus = budget_split(n, facts.epsilon, facts.delta, intercept=k is not None, inference=inference)
    st = assumed_standardisation(facts, mus["scale"])
    z_moment, _, v_sd = standardised_moments(facts, st)
    free = np.arange(d) != k
    residual_sd = math.sqrt(facts.residual_var) / st.y_scale
    at_fit = NormLaw.of(z_moment[np.ix_(free, free)], 1.0 if k is not None else 0.0, residual_sd)
    at_zero = dataclasses.replace(at_fit, residual_sd=v_sd)  # at theta = 0 the residual is the response
    n_mu = n * gaussian_mu(facts.epsilon, facts.delta)
    q, multiple = clip_rule(n_mu, d=d)
    ceiling = clip_ceiling(n_mu, multiple, d)
    clips = (WARM_CLIP[1] * min(at_zero.quantile(WARM_CLIP[0], n, NORM_GRID), ceiling),
             min(multiple * min(at_fit.quantile(q, n, NORM_GRID), at_zero.quantile(q, n, NORM_GRID)), ceiling))
    phase_mus = (mus["warm start"], mus["chains"])
    penalties = [phase_penalty(c, m) for c, m in zip(clips, phase_mus, strict=True)]
    sigma_g = gram_sensitivity(d) / mus["gram"]
    g, V = np.linalg.eigh(n * z_moment)
    g = np.maximum(g, 0.0)
    lifted = g + preconditioner_lift(d, sigma_g)
    defaults = PGDOptions()
    # steps_rule on the expected Gram matrix V g V^T and preconditioner V (g + lift) V^T, in their common eigenbasis:
    # the projection floors the eigenvalues g, so the contraction rates are max(g, floor) / (g + lift)
    steps = steps_at_rate(float(np.min(np.maximum(g, RATE_FLOOR * sigma_g) / lifted)), n, defaults)
    preconds = [lifted + lam for lam in penalties]
    chains = (1, defaults.chains if inference else 1)
    shares = [1.0, 1.0]
    for _ in range(WANDER_ROUNDS):  # the unclipped shares at the iterates' spread, to a fixed point
        for i in range(2):
            step_variance = chains[i] * step_noise_variance(clips[i], phase_mus[i], steps)
            wander = iterate_variance(preconds[i], shares[i] * g + penalties[i], step_variance, steps)
            spread = math.sqrt(residual_sd**2 + float(np.sum(g / n * wander)))
            shares[i] = float(dataclasses.replace(at_fit, residual_sd=spread).cdf(np.array([clips[i]]))[0])
    curvatures = [share * g for share in shares]
    lin = phases_linearised(V, preconds, [h + lam for h, lam in zip(curvatures, penalties, strict=True)],
                            [h / np.maximum(h + lam, 1e-300) for h, lam in zip(curvatures, penalties, strict=True)],
                            clips, phase_mus, steps)
    # the estimate with its shrinkage divided out, s^-1 (s theta_LS + noise) = theta_LS + noise / s: its privacy
    # error is the noise over s in each direction, whatever the coefficients
    unshrunk = (lin.carried + lin.noise) / np.maximum(lin.shrink, PLANNED_SHRINK_FLOOR) ** 2
    cov_z = (V * unshrunk) @ V.T
    A, _ = st.affine_back()
    return ExpectedError(A @ cov_z @ A.T)


def auto_refusal(facts: AutoFacts) -> str:
    """Why ``method="auto"`` cannot fit pgd under these public facts ("" when it can): the clipping domain of the
    variables without bounds would cost too much (:func:`domain_refusal`)."""
    return domain_refusal(facts.n, facts.d, facts.epsilon, facts.delta, ["?"] * facts.unbounded,
                          screened=facts.screened)


def auto_no_interval_reason(facts: AutoFacts) -> str:
    """The results' reason when ``method="auto"`` fitted DP-SGD's point estimate: below n * mu =
    ``INTERVAL_MIN_N_MU``, where no method here gives an interval (public facts only)."""
    below, needed = _interval_threshold(facts.n, facts.epsilon, facts.delta, facts.screened)
    return (f"method='auto' fitted DP-SGD's point estimate, which has no interval: {below}, where the privacy "
            f"noise is as large as most coefficients' signal; {needed}. At this n * mu no private estimate here is "
            "reliable: DP-SGD's clipped, early-stopped steps can leave a coefficient far from least squares, its "
            "sign included (on a 111-row regression at epsilon 0.5, a coefficient with t = -5 came out with the "
            "wrong sign in 9 of 10 fits), so treat the coefficients as indicative only")


#: What pgd's plan gives as its privacy error (:func:`expected_error`), printed with the plan's assumptions.
PLANNED_ERROR = ("pgd's privacy error is that of its estimate with its planned shrinkage divided out (the noise over "
                 "the shrinkage, whatever the coefficients; the released coefficient's own distance from least "
                 "squares is smaller for a coefficient near 0, larger for one far from 0, where the fit shrinks)")


def theory_rate(guarantee: str) -> UpperRate:
    """pgd has no registered rate for ||b - beta||_2 in the minimax model; its expected error comes from its public
    rules run on the planner's assumptions (:func:`expected_error`)."""
    return UpperRate(why_none="Brown et al. (2024) bound DP-GD's error given the data (instance-specific, unclipped "
                              "regime), not ||b - beta||_2 in this model", expected_error=expected_error,
                     planned_error=PLANNED_ERROR)


#: ``method="auto"``'s rules for other methods, measured in pgd's study (docs/choosing.md), so pgd's spec declares
#: them (``auto_rules_for``); they apply only to registered methods.  With every bound declared: private Theil-Sen
#: for one predictor with an intercept below n * mu = ``SMALL_N_MU`` (ahead of pgd: its point estimate was far
#: closer to least squares there), unless the response is a boolean (its median line is not least squares' line:
#: for a 0/1 response on a two-level factor Theil-Sen's slope is the median difference, 0 or +/-1, and its
#: intervals missed the difference in proportions where pgd's covered it), and DP-SGD's averaged, early-stopped
#: iterates below n * mu = ``INTERVAL_MIN_N_MU``, where pgd gives no interval either (pgd ranks ahead wherever it
#: can).
AUTO_RULES_FOR_OTHERS = (
    ("theilsen", AutoRule(
        rank=9, bounds="all", max_n_mu=SMALL_N_MU, min_d=2, max_d=2, needs_intercept=True,
        needs_many_response_values=True,
        why="at n * mu(epsilon, delta) < 100 with one predictor, the private median of pairwise slopes was "
            "closer to least squares than pgd on the benchmark's regressions (docs/choosing.md); it estimates the "
            "median line, which differs from least squares' where the errors are skewed")),
    ("dpsgd", AutoRule(
        rank=12, bounds="all", max_n_mu=INTERVAL_MIN_N_MU, no_interval_reason=auto_no_interval_reason,
        why="below n * mu(epsilon, delta) = 15 its averaged, early-stopped iterates were the most accurate point "
            "estimate on the rescaled design (docs/choosing.md)")),
)


SPEC = MethodSpec(
    name="pgd",
    title="Private gradient descent (standardised, preconditioned, with chains for intervals)",
    citation="Brown, Dvijotham, Evans, Liu, Smith & Thakurta (ICML 2024); adaptive clipping after Andrew et al. "
             "(NeurIPS 2021); Hessian reuse after Tang et al. (2023) and Lev et al. (2026)",
    fit=fit,
    options=PGDOptions,
    needs_bounds=False,
    null_rows=True,
    gaussian_only=True,
    null_marks=True,
    unbounded_guarantee="the method clips to privately released ranges",
    regimes="n = 100 to 10^5 rows: standardises privately inside the declared bounds (or a released domain without "
            "them) and reports intervals where n * mu(epsilon, delta) >= 15 (wide below 100)",
    inference_rule=InferenceRule("bootstrap", min_n_mu=INTERVAL_MIN_N_MU, rare_share=RARE_SHARE,
                                  rare_min_n_mu_share2=RARE_MIN_N_MU_SHARE2, rare_from_n_mu=RARE_FROM_N_MU),
    theory_rate=theory_rate,
    auto_rules=(AutoRule(rank=10, min_n_mu=SMALL_N_MU, max_rows=AUTO_MAX_ROWS, intervals=True, why=(
        "at 100 <= n * mu(epsilon, delta) and n < 10^5 it was the most accurate method that reports intervals, "
        "with or without declared bounds (docs/choosing.md)")),
        AutoRule(rank=10, min_n_mu=INTERVAL_MIN_N_MU, max_n_mu=SMALL_N_MU, max_rows=AUTO_MAX_ROWS, intervals=True, why=(
            "at 15 <= n * mu(epsilon, delta) < 100 no private estimate here is close to least squares (median "
            "relative error 0.6-0.9, sign right in about two thirds of fits), and it is the one whose interval, "
            "wide and never excluding 0 with the wrong sign on the real-data benchmark, shows that "
            "(docs/choosing.md)"))),
    auto_rules_for=AUTO_RULES_FOR_OTHERS,
    auto_refusal=auto_refusal,
)
