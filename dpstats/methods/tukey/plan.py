"""TukeyEM's public plan: the number of models, the block layout and the budget split, from public facts only.

Everything here depends on n, d, the budget, the options and the public
ranges, never on the data; the one exception is ``m="private"``, which
releases a private lower bound on n (Dick, Gillenwater & Joseph 2023) and
charges it to the ledger.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri

from dpstats.errors import InsufficientDataError
from dpstats.methods.common.permutations import RowPermutation, WindowedBlocks
from dpstats.methods.spec import FitContext
from dpstats.methods.tukey.depth import lemma_distance, max_depth
from dpstats.methods.tukey.em import ptr_threshold
from dpstats.methods.tukey.options import MIN_M, TukeyOptions
from dpstats.methods.tukey.pilot import gram_floor
from dpstats.methods.tukey.preprocessing import RADIUS_K, Domains, handled_columns
from dpstats.methods.tukey.radius_check import CHECK_SHARE
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import laplace_mechanism

__all__ = [
    "AUTO_ROWS_PER_COLUMN",
    "DEFAULT_M",
    "MIN_IDEAL_PASS",
    "MIN_ROWS_PER_COLUMN",
    "PREP_ROWS",
    "FitLog",
    "Layout",
    "Plan",
    "choose_blocks",
    "default_m",
    "ideal_distance",
    "ideal_pass_probability",
    "make_plan",
    "public_refusal",
    "refusal_hint",
]

DEFAULT_M = 1000
MIN_ROWS_PER_COLUMN = 100  # below 100 models of d rows the test cannot pass at any everyday epsilon (t - 2 < tau)
# twice the paper's rule of thumb (m = 1000 blocks of at least d rows): at n of about 1000 d the PTR test failed
# 2 of 6 Gaussian-design fits at epsilon = 1 (d = 11), and every fit on statsmodels' randhie data (n = 1683 d),
# each refusal spending half the budget; at n of about 1800 d all 6 Gaussian fits passed
AUTO_ROWS_PER_COLUMN = 2000
M_PASS_PROBABILITY = 0.99  # pass probability the default m aims at for ideal (Gaussian) block estimates
M_SAFETY = 1.25  # real block estimates have heavier tails than Gaussian ones
# with the default m, refuse (nothing spent) when even idealised Gaussian block estimates would pass the PTR test
# with probability below this: every such cell of the study in docs/proofs/tukey.md ("Refusals before anything is
# spent") failed 20 seeds of 20
MIN_IDEAL_PASS = 0.01
IDEAL_CHECK_MAX_M = 100_000  # the check evaluates the idealised depth profile of at most this many models
PRIVATE_M_SHARE = 0.02
PRIVATE_M_ETA = 1e-3
PREP_ROWS = 1 << 17  # rows at the first positions of the public order used for the private centres and radii
MOMENTS_MAX_NOISE = 0.6  # blocks="auto" uses moments when the Gram floor is at most this fraction of TYPICAL_Z2
TYPICAL_Z2 = 1.0 / (1.15 * RADIUS_K) ** 2  # E z^2 of a Gaussian column rescaled by RADIUS_K x its q75 of |x - median|


@dataclass
class FitLog:
    """The notes and display-only diagnostics a fit accumulates (``MethodFit.notes`` and ``diagnostics``)."""

    notes: list[str] = field(default_factory=list)
    diagnostics: dict[str, Any] = field(default_factory=dict)


def ideal_distance(m: int, d: int, epsilon_em: float, delta: float) -> int:
    """Lemma 3.6's M(D) for idealised models: m i.i.d. standard normal d-vectors at their expected order statistics.

    A public computation (no data): the sorted coordinates are the normal
    quantiles at Blom's plotting positions (i - 3/8) / (m + 1/4), the same in
    every coordinate, so log V_i = d log L(i).

    Parameters
    ----------
    m, d : int
        Models and coordinates.
    epsilon_em, delta : float
        The exponential mechanism's budget.

    Returns
    -------
    int
    """
    q_max = max_depth(m)
    i = np.arange(1, q_max + 1)
    side = ndtri((m - i + 1 - 0.375) / (m + 0.25)) - ndtri((i - 0.375) / (m + 0.25))
    log_vol = np.empty(q_max + 2)
    log_vol[0], log_vol[-1] = np.inf, -np.inf
    with np.errstate(divide="ignore"):
        log_vol[1:-1] = d * np.log(np.maximum(side, 0.0))
    return lemma_distance(log_vol, (m // 2) // 2, epsilon_em, delta)


def ideal_pass_probability(m: int, d: int, *, epsilon_ptr: float, epsilon_em: float, delta: float) -> float:
    """Probability that idealised block estimates (:func:`ideal_distance`) pass the PTR test.

    The test passes when M(D) + Lap(1/epsilon_PTR) > tau (Amin et al. 2023,
    Algorithm 1; tau = :func:`~dpstats.methods.tukey.em.ptr_threshold`), so
    with g = M(D) - tau the probability is 1 - exp(-epsilon_PTR g) / 2 for
    g >= 0 and exp(epsilon_PTR g) / 2 otherwise.  A public computation.

    Parameters
    ----------
    m, d : int
        Models and coordinates.
    epsilon_ptr, epsilon_em, delta : float
        The Tukey step's budget.

    Returns
    -------
    float
    """
    gap = ideal_distance(m, d, epsilon_em, delta) - ptr_threshold(epsilon_ptr, delta)
    if gap >= 0:
        return 1.0 - 0.5 * math.exp(-epsilon_ptr * gap)
    return 0.5 * math.exp(epsilon_ptr * gap)


def default_m(n: int, d: int, *, epsilon_ptr: float, epsilon_em: float, delta: float) -> int:
    """Number of models from public facts only (n, d, the budget).

    Start from the paper's m = 1000 (Amin et al., sec. 4.3).  Find the
    smallest m* for which idealised Gaussian block estimates
    (:func:`ideal_distance`) pass the PTR test with probability at least
    0.99, and use max(1000, 1.25 m*): more models when the budget is too small
    for 1000 to pass.  Capped at floor(n/d), so that every block keeps at
    least d rows.

    Parameters
    ----------
    n, d : int
        Rows and columns.
    epsilon_ptr, epsilon_em, delta : float
        The Tukey step's budget.

    Returns
    -------
    int
    """
    cap = max(n // d, MIN_M)
    target = ptr_threshold(epsilon_ptr, delta) + math.log(0.5 / (1.0 - M_PASS_PROBABILITY)) / epsilon_ptr

    def passes(m: int) -> bool:
        return ideal_distance(m, d, epsilon_em, delta) >= target

    if not passes(cap):
        return int(min(cap, n))
    lo, hi = MIN_M, cap  # passes(hi) holds
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if passes(mid):
            hi = mid
        else:
            lo = mid
    return int(min(max(DEFAULT_M, math.ceil(M_SAFETY * hi)), cap, n))


def choose_blocks(n: int, d: int, mu_pilot: float) -> str:
    """``blocks="auto"``: "moments" when the pilot's Gram noise is small, else "ols" (public facts only).

    The noise floor of the released Gram matrix
    (:func:`~dpstats.methods.tukey.pilot.gram_floor`) is compared with the
    second moment a Gaussian column has after the rescaling by its private
    radius (TYPICAL_Z2); above 0.6 of it the Gram matrix is mostly noise, the
    one-step correction of the pilot under-corrects, and per-block OLS is
    better (measurements: BENCHMARKS.md).

    Parameters
    ----------
    n, d : int
        Rows and columns.
    mu_pilot : float
        GDP parameter of the pilot release.

    Returns
    -------
    str
    """
    return "moments" if gram_floor(n, d, mu_pilot) <= MOMENTS_MAX_NOISE * TYPICAL_Z2 else "ols"


def refusal_hint(n: int, d: int, m: int) -> str:
    """What makes the PTR test pass more often, in words (public facts only)."""
    b = n // m
    if b < 3 * d:
        more = (f"Each of the m={m} blocks has only {b} rows for d={d} columns, so the block estimates are noisy: "
                f"use more rows or fewer columns.")
    else:
        more = (f"The test passes more often with more models (now m={m}, {b} rows per block, d={d}) as long as "
                f"each block keeps well over d rows: more rows, or a larger m=, help.")
    return (f"{more} A larger epsilon also helps, and so does ptr='mass'. With declared data bounds, "
            f"method='adassp' needs no such test. (TukeyEM typically needs n of about 1000*d; Amin et al. 2023, "
            f"sec. 4.3.)")


@dataclass(frozen=True)
class Plan:
    """The public plan of one TukeyEM fit (options checked, budget split, number of models).

    Attributes
    ----------
    n, d : int
        Rows and columns.
    blocks : str
        ``"moments"`` or ``"ols"`` (``"auto"`` resolved).
    centre : bool
        Centre the handled variables (an intercept is present and ``centre=True``).
    share_prep, share_pilot, share_check : float
        Fractions of epsilon for the preprocessing, the pilot and the radius check.
    epsilon_tukey : float
        Epsilon of each of the PTR test and the exponential mechanism (half of the Tukey step's share).
    delta_tukey : float
        The Tukey step's delta (the pilot has the rest).
    n_models : int
        m.
    ptr : str
        The PTR statistic.
    intercept_index : int or None
        Position of the intercept.
    domains : Domains
        Public ranges of the handled variables.
    """

    n: int
    d: int
    blocks: str
    centre: bool
    share_prep: float
    share_pilot: float
    share_check: float
    epsilon_tukey: float
    delta_tukey: float
    n_models: int
    ptr: str
    intercept_index: int | None
    domains: Domains

    @property
    def moments(self) -> bool:
        return self.blocks == "moments"

    @property
    def preprocess(self) -> bool:
        """Centres or radii are released (so the sample is read)."""
        return self.share_prep > 0.0

    @property
    def block_rows(self) -> int:
        """b = floor(n / m)."""
        return self.n // self.n_models

    def fallen_back(self, epsilon: float, delta: float, *, check_spent: bool) -> Plan:
        """The plan after a moments fit falls back to per-block OLS: the unspent pilot budget (and the check's,
        unless spent) goes to the Tukey step, which gets all of delta; m is kept.  Post-processing of released
        values."""
        unspent = self.share_pilot + (0.0 if check_spent else self.share_check)
        return dataclasses.replace(self, blocks="ols", share_pilot=0.0, share_check=0.0, delta_tukey=delta,
                                   epsilon_tukey=self.epsilon_tukey + unspent * epsilon / 2.0)

    def without_check(self, epsilon: float) -> Plan:
        """The plan when no released radius can clip (every one reached its column's domain limit): the check's
        budget goes to the Tukey step.  Post-processing of released values."""
        return dataclasses.replace(self, share_check=0.0,
                                   epsilon_tukey=self.epsilon_tukey + self.share_check * epsilon / 2.0)


def _number_of_models(options: TukeyOptions, n: int, d: int, epsilon: float, epsilon_half: float, delta: float,
                      rng: np.random.Generator, ledger: PrivacyLedger, log: FitLog) -> int:
    m = options.m
    if m is None:
        return default_m(n, d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half, delta=delta)
    if isinstance(m, str):  # "private" (the options allow no other string)
        eps_n = PRIVATE_M_SHARE * epsilon
        noisy_n = laplace_mechanism(float(n), l1_sensitivity=1.0, epsilon=eps_n, rng=rng, ledger=ledger,
                                    name="TukeyEM: private lower bound on n (choice of m)")
        n_low = max(noisy_n - math.log(1.0 / (2.0 * PRIVATE_M_ETA)) / eps_n, 0.0)
        log.diagnostics["n_lower_bound"] = n_low
        log.notes.append(f"m chosen from a private lower bound on n ({n_low:.0f}; epsilon={eps_n:.3g})")
        chosen = default_m(int(n_low), d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half, delta=delta)
        return min(max(chosen, MIN_M), n)
    if m > n:
        raise InsufficientDataError(f"m={m} models need at least m rows; the data have n={n}")
    return int(m)


def _budget(ctx: FitContext, options: TukeyOptions) -> tuple[str, bool, float, float, float, float, float]:
    """(blocks, centre, the shares of the preprocessing, the pilot and the radius check, delta and epsilon_half of
    the Tukey step) from public facts and the options."""
    return _budget_at(ctx.n, ctx.d, ctx.epsilon, ctx.delta, ctx.intercept_index, options)


def _budget_at(n: int, d: int, epsilon: float, delta: float, intercept_index: int | None, options: TukeyOptions
               ) -> tuple[str, bool, float, float, float, float, float]:
    """:func:`_budget` at given public facts."""
    blocks = options.blocks
    if blocks == "auto":
        blocks = choose_blocks(n, d, gaussian_mu(options.pilot_share * epsilon, delta / 2.0))
    moments = blocks == "moments"
    centre = options.centre and intercept_index is not None
    share_m = PRIVATE_M_SHARE if options.m == "private" else 0.0
    share_prep = options.prep_share if moments or centre else 0.0
    share_pilot = options.pilot_share if moments else 0.0
    share_check = CHECK_SHARE if moments and handled_columns(d, intercept_index).size else 0.0
    delta_tukey = delta / 2.0 if moments else delta
    epsilon_half = epsilon * (1.0 - share_m - share_prep - share_pilot - share_check) / 2.0
    return blocks, centre, share_prep, share_pilot, share_check, delta_tukey, epsilon_half


def public_refusal(ctx: FitContext, options: TukeyOptions) -> str:
    """Why the fit refuses before reading any row, or "": :func:`make_plan`'s check that m models can pass the
    propose-test-release test of Amin et al. (2023, Algorithm 1) at this budget, from n, d, epsilon and delta alone
    (the check :func:`dpstats.plan` shares with the fit).

    The test needs t - 2 >= tau, t = floor(floor(m/2)/2), tau = :func:`ptr_threshold`.  :func:`default_m` chooses
    m between min(DEFAULT_M, L) and L = min(n, max(n // d, MIN_M)); where L passes, so does its choice whenever
    epsilon_PTR <= ln 50: it either is L, or has M(D) >= tau + ln(50)/epsilon_PTR for idealised models, and
    M(D) <= t - 1 (:func:`~dpstats.methods.tukey.depth.lemma_distance`).  With the default m and
    ``ptr="lemma"``, :func:`make_plan` also refuses where even idealised Gaussian block estimates
    (:func:`ideal_pass_probability` at the m it chooses) would pass with probability below MIN_IDEAL_PASS; that
    probability grows with m, so the fast path checks it at the fewest models default_m can choose.  Only the other
    cases run :func:`make_plan`, so that a plan at 10^12 rows never evaluates the depth profile of n/d models.

    Parameters
    ----------
    ctx : FitContext
        The public facts of the fit (n, d, the budget, the declared ranges).
    options : TukeyOptions
        The validated options; with ``m="private"`` m comes from a private count, and no refusal is public.

    Returns
    -------
    str
        The refusal's message, or "" when the fit goes ahead.
    """
    if options.m == "private":
        return ""
    if options.m is None:
        *_, delta_tukey, epsilon_half = _budget(ctx, options)
        largest = min(ctx.n, max(ctx.n // ctx.d, MIN_M))
        tau = ptr_threshold(epsilon_half, delta_tukey)
        first = min(largest, DEFAULT_M)  # default_m never chooses fewer
        hopeful = (not _checks_ideal(options, largest)
                   or ideal_pass_probability(first, ctx.d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half,
                                             delta=delta_tukey) >= MIN_IDEAL_PASS)
        if hopeful and (first // 2) // 2 - 2 >= tau:
            return ""
        if hopeful and (largest // 2) // 2 - 2 >= tau and \
                epsilon_half <= math.log(1.0 / (1.0 - M_PASS_PROBABILITY) / 2.0):
            return ""
    try:
        make_plan(ctx, options, FitLog())
    except InsufficientDataError as err:
        return str(err)
    return ""


def _checks_ideal(options: TukeyOptions, largest: int) -> bool:
    """Whether :func:`make_plan` runs the idealised-models check: the default m, the Lemma 3.6 test, at most
    IDEAL_CHECK_MAX_M models (``largest``: the most default_m can choose)."""
    return options.m is None and options.ptr == "lemma" and largest <= IDEAL_CHECK_MAX_M


def _hopeful(ctx: FitContext, options: TukeyOptions, n: int, m: int, epsilon: float) -> bool:
    """Whether m models at (n, epsilon) pass both public checks: t - 2 >= tau, and idealised Gaussian block
    estimates pass the test with probability at least MIN_IDEAL_PASS.  Public facts only."""
    *_, delta_tukey, epsilon_half = _budget_at(n, ctx.d, epsilon, ctx.delta, ctx.intercept_index, options)
    if (m // 2) // 2 - 2 < ptr_threshold(epsilon_half, delta_tukey):
        return False
    return ideal_pass_probability(m, ctx.d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half,
                                  delta=delta_tukey) >= MIN_IDEAL_PASS


def _round_up(x: float) -> float:
    """x rounded up to two significant digits."""
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / scale - 1e-9) * scale


def _hopeless_message(ctx: FitContext, options: TukeyOptions, m: int) -> str:
    """The refusal of a default-m fit that idealised block estimates would almost never pass, with the rows (at
    this epsilon) and the epsilon (at this n) that would do.  Public facts only (n, d, epsilon, delta)."""
    n, d, epsilon, delta = ctx.n, ctx.d, ctx.epsilon, ctx.delta
    total = ctx.ledger.epsilon  # the fit's epsilon (the method's, plus the missing-value screen's share, if any)
    *_, delta_tukey, epsilon_half = _budget(ctx, options)
    p = ideal_pass_probability(m, d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half, delta=delta_tukey)
    lo, hi = m, IDEAL_CHECK_MAX_M  # the smallest number of models (of d rows: n = m d) that passes both checks
    if _hopeful(ctx, options, hi * d, hi, epsilon):
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if _hopeful(ctx, options, mid * d, mid, epsilon) else (mid, hi)
        rows = f"n >= {hi * d} rows for d={d} at this epsilon"
    else:
        rows = f"more than {IDEAL_CHECK_MAX_M * d} rows for d={d} at this epsilon"
    e_lo, e_hi = epsilon, max(epsilon, 1.0) * 1000.0
    if _hopeful(ctx, options, n, m, e_hi):
        while e_hi / e_lo > 1.001:
            e_mid = math.sqrt(e_lo * e_hi)
            e_lo, e_hi = (e_lo, e_mid) if _hopeful(ctx, options, n, m, e_mid) else (e_mid, e_hi)
        eps = f"epsilon >= {_round_up(e_hi * total / epsilon):.2g} at n={n}"
    else:
        eps = f"no epsilon up to {e_hi * total / epsilon:.3g} at n={n}"
    return (f"TukeyEM with the default m={m} models (about {n // m} rows each) would almost surely fail its privacy "
            f"test at epsilon={total:.4g}, delta={delta:.3g}, and a failed test spends budget: even idealised "
            f"Gaussian block estimates would pass it with probability {p:.1g}, below {MIN_IDEAL_PASS:.0%} (where "
            f"this is so, favourable Gaussian designs failed it in every seed). It needs {rows}, or {eps}. "
            "Nothing was spent.")


def make_plan(ctx: FitContext, options: TukeyOptions, log: FitLog) -> Plan:
    """Plan the fit from public facts (n, d, the budget, the options, the public ranges); with ``m="private"``
    this is where the private count of n is released.

    Parameters
    ----------
    ctx : FitContext
        The fit's public facts, ledger and random source.
    options : TukeyOptions
        The validated options.
    log : FitLog
        Receives notes and diagnostics.

    Returns
    -------
    Plan

    Raises
    ------
    InsufficientDataError
        When even perfectly concentrated models could not pass the test at this budget (nothing spent).
    """
    n, d, epsilon, delta = ctx.n, ctx.d, ctx.epsilon, ctx.delta
    blocks, centre, share_prep, share_pilot, share_check, delta_tukey, epsilon_half = _budget(ctx, options)
    log.diagnostics.update(blocks=blocks, ptr=options.ptr)
    n_models = _number_of_models(options, n, d, epsilon, epsilon_half, delta_tukey, ctx.rng, ctx.ledger, log)
    threshold = ptr_threshold(epsilon_half, delta_tukey)
    t = (n_models // 2) // 2
    if _checks_ideal(options, min(n, max(n // d, MIN_M))) and not _hopeful(ctx, options, n, n_models, epsilon):
        raise InsufficientDataError(_hopeless_message(ctx, options, n_models))
    if options.m != "private" and t - 2 < threshold:
        need = 4 * (math.ceil(threshold) + 2)
        raise InsufficientDataError(
            f"TukeyEM with m={n_models} models cannot pass its privacy test at epsilon={epsilon:.4g}, "
            f"delta={delta:.3g}: even perfectly concentrated models would pass with probability below 1/2 "
            f"(the distance bound is at most t-2={t - 2}, the threshold is {threshold:.1f}). It needs m >= {need} "
            f"models, i.e. n >= {need * d} rows for d={d}, or a larger epsilon. Nothing was spent.")
    domains = Domains.from_ranges(ctx.column_ranges, ctx.response_range, d, ctx.intercept_index)
    return Plan(n, d, blocks, centre, share_prep, share_pilot, share_check, epsilon_half, delta_tukey, n_models,
                options.ptr, ctx.intercept_index, domains)


@dataclass(frozen=True, eq=False)
class Layout:
    """The public layout of the rows: the blocks and the preprocessing sample, drawn with public randomness.

    Attributes
    ----------
    assignment : WindowedBlocks
        Row i's block depends on i and the public draws only.
    sample : numpy.ndarray
        The sorted indices of the rows at the first PREP_ROWS positions of a public order
        (:class:`~dpstats.methods.common.permutations.RowPermutation`).
    """

    assignment: WindowedBlocks
    sample: np.ndarray

    @classmethod
    def draw(cls, plan: Plan, rng: np.random.Generator) -> Layout:
        """Draw the public order, then the blocks (in this order: the fit's draws are reproducible)."""
        perm = RowPermutation.draw(plan.n, rng)
        assignment = WindowedBlocks.draw(plan.n, plan.n_models, rng)
        return cls(assignment, np.sort(perm.rows_at(np.arange(min(plan.n, PREP_ROWS)))))
