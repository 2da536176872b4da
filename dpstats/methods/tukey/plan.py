"""TukeyEM's public plan: the number of models, the block layout and the budget split, from public facts only.

Everything here depends on n, d, the budget, the options and the public
ranges, never on the data; the one exception is ``m="private"``, which
releases a private lower bound on n (Dick, Gillenwater & Joseph 2023) and
charges it to the ledger, after the public checks.
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
from dpstats.methods.tukey.depth import lemma_distance, mass_distance, max_depth
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
    "MIN_IDEAL_PASS_GIVEN_M",
    "MIN_ROWS_PER_COLUMN",
    "PREP_ROWS",
    "FitLog",
    "Layout",
    "Plan",
    "choose_blocks",
    "default_m",
    "ideal_distance",
    "ideal_log_volumes",
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
# refuse (nothing spent) when even idealised Gaussian block estimates would pass the PTR test with probability below
# this, with the default m or m="private" and either ptr: in the studies of docs/proofs/tukey.md ("Refusals before
# anything is spent") no refused whole fit passed in any seed
MIN_IDEAL_PASS = 0.01
# ... and below this with a user's m=, whose blocks can hold many rows: their estimates are then nearly Gaussian, so
# the idealised probability is about the real one (at 0.95 of the 1% boundary whole fits with blocks of 10 d rows
# passed 1 refused test of 480; at this threshold 2 of 960, both with ptr="mass", at 0.95 of the boundary)
MIN_IDEAL_PASS_GIVEN_M = 0.001
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


def ideal_log_volumes(m: int, d: int) -> np.ndarray:
    """log V_i, i = 0..q_max+1, of m idealised models: i.i.d. standard normal d-vectors at their expected order
    statistics (a public computation, no data).

    The sorted coordinates are the normal quantiles at Blom's plotting
    positions (i - 3/8) / (m + 1/4), the same in every coordinate, so
    log V_i = d log L(i) (Amin et al. 2023, Lemma 3.3), with the sentinels
    V_0 = +inf and V_{q_max+1} = 0 of
    :func:`~dpstats.methods.tukey.depth.log_volumes`.

    Parameters
    ----------
    m, d : int
        Models and coordinates.

    Returns
    -------
    numpy.ndarray
        (q_max + 2,).
    """
    q_max = max_depth(m)
    i = np.arange(1, q_max + 1)
    side = ndtri((m - i + 1 - 0.375) / (m + 0.25)) - ndtri((i - 0.375) / (m + 0.25))
    log_vol = np.empty(q_max + 2)
    log_vol[0], log_vol[-1] = np.inf, -np.inf
    with np.errstate(divide="ignore"):
        log_vol[1:-1] = d * np.log(np.maximum(side, 0.0))
    return log_vol


def _ideal_exact_volumes(log_vol: np.ndarray) -> np.ndarray:
    """log Vexact_q = log(V_q - V_{q+1}), q = 1..q_max, from :func:`ideal_log_volumes`: with every coordinate
    sorted alike, the regions C_{j,q} of :func:`~dpstats.methods.tukey.depth.log_region_volumes` add up to the
    difference of the two level sets (their sum telescopes)."""
    upper, lower = log_vol[1:-1], log_vol[2:]
    finite = np.isfinite(upper)
    with np.errstate(divide="ignore"):
        gap = np.log(-np.expm1(np.minimum(np.where(finite, lower - np.where(finite, upper, 0.0), -np.inf), 0.0)))
    return np.where(finite, upper + gap, -np.inf)


def ideal_distance(m: int, d: int, epsilon_em: float, delta: float, ptr: str = "lemma") -> int:
    """The PTR statistic for idealised models (:func:`ideal_log_volumes`): Lemma 3.6's M(D) of Amin et al.
    (``ptr="lemma"``) or the mass bound M'(D) of docs/proofs/tukey.md (``ptr="mass"``).

    A public computation (no data).

    Parameters
    ----------
    m, d : int
        Models and coordinates.
    epsilon_em, delta : float
        The exponential mechanism's budget.
    ptr : str
        ``"lemma"`` (:func:`~dpstats.methods.tukey.depth.lemma_distance`) or ``"mass"``
        (:func:`~dpstats.methods.tukey.depth.mass_distance`).

    Returns
    -------
    int
    """
    log_vol = ideal_log_volumes(m, d)
    t = (m // 2) // 2
    if ptr == "mass":
        return mass_distance(log_vol, _ideal_exact_volumes(log_vol), t, epsilon_em, delta)
    return lemma_distance(log_vol, t, epsilon_em, delta)


def ideal_pass_probability(m: int, d: int, *, epsilon_ptr: float, epsilon_em: float, delta: float,
                           ptr: str = "lemma") -> float:
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
    ptr : str
        The PTR statistic, ``"lemma"`` or ``"mass"``.

    Returns
    -------
    float
    """
    gap = ideal_distance(m, d, epsilon_em, delta, ptr) - ptr_threshold(epsilon_ptr, delta)
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


def _private_number_of_models(n: int, d: int, epsilon: float, epsilon_half: float, delta: float,
                              rng: np.random.Generator, ledger: PrivacyLedger, log: FitLog) -> int:
    """``m="private"``: :func:`default_m` at a private lower bound on n (Dick, Gillenwater & Joseph 2023), charged."""
    eps_n = PRIVATE_M_SHARE * epsilon
    noisy_n = laplace_mechanism(float(n), l1_sensitivity=1.0, epsilon=eps_n, rng=rng, ledger=ledger,
                                name="TukeyEM: private lower bound on n (choice of m)")
    n_low = max(noisy_n - math.log(1.0 / (2.0 * PRIVATE_M_ETA)) / eps_n, 0.0)
    log.diagnostics["n_lower_bound"] = n_low
    log.notes.append(f"m chosen from a private lower bound on n ({n_low:.0f}; epsilon={eps_n:.3g})")
    chosen = default_m(int(n_low), d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half, delta=delta)
    return min(max(chosen, MIN_M), n)


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
    """Why the fit refuses before reading any row, or "": :func:`make_plan`'s public checks that its models can
    pass the propose-test-release test of Amin et al. (2023, Algorithm 1) at this budget, from n, d, epsilon, delta
    and the options alone (the check :func:`dpstats.plan` shares with the fit).

    The checks (:func:`_check_public`) apply to the m the options give: the user's ``m=``, the default's
    (:func:`default_m`), or with ``m="private"`` the most models a private lower bound on n can give. They refuse
    when t - 2 < tau, t = floor(floor(m/2)/2), tau = :func:`ptr_threshold` (even identical models would pass with
    probability below 1/2), or when idealised Gaussian block estimates would pass with probability below
    MIN_IDEAL_PASS, or MIN_IDEAL_PASS_GIVEN_M for a user's m (:func:`_ideal_pass`, with the fit's ``ptr``).  With
    the default m a fast path decides most cases without :func:`default_m`, so that a plan at 10^12 rows never
    evaluates the depth profile of n/d models: default_m chooses m between min(DEFAULT_M, L) and
    L = min(n, max(n // d, MIN_M)); the checked probability (:func:`_ideal_pass`) grows with m, and where L passes
    t - 2 >= tau so does its choice whenever epsilon_PTR <= ln 50: it either is L, or has
    M(D) >= tau + ln(50)/epsilon_PTR for idealised models, and M(D) <= t - 1
    (:func:`~dpstats.methods.tukey.depth.lemma_distance`).

    Parameters
    ----------
    ctx : FitContext
        The public facts of the fit (n, d, the budget, the declared ranges).
    options : TukeyOptions
        The validated options.

    Returns
    -------
    str
        The refusal's message, or "" when the fit goes ahead.
    """
    if options.m is None:
        *_, delta_tukey, epsilon_half = _budget(ctx, options)
        largest = _largest_models(ctx.n, ctx.d)
        tau = ptr_threshold(epsilon_half, delta_tukey)
        first = min(largest, DEFAULT_M)  # default_m never chooses fewer
        hopeful = (largest > IDEAL_CHECK_MAX_M
                   or _ideal_pass(options, first, ctx.d, epsilon_half, delta_tukey) >= MIN_IDEAL_PASS)
        if hopeful and (first // 2) // 2 - 2 >= tau:
            return ""
        if hopeful and (largest // 2) // 2 - 2 >= tau and \
                epsilon_half <= math.log(1.0 / (1.0 - M_PASS_PROBABILITY) / 2.0):
            return ""
    try:
        _check_public(ctx, options)
    except InsufficientDataError as err:
        return str(err)
    return ""


def _largest_models(n: int, d: int) -> int:
    """L = min(n, max(n // d, MIN_M)): the most models :func:`default_m` chooses at n rows, or at any fewer rows."""
    return min(n, max(n // d, MIN_M))


def _checked_models(options: TukeyOptions, n: int, d: int, epsilon_half: float, delta_tukey: float) -> int:
    """The m the public checks apply to: the user's ``m=``, :func:`default_m`'s, or with ``m="private"`` the most
    models a private lower bound n_low <= n gives (:func:`_largest_models`).  Public facts only."""
    if options.m is None:
        return default_m(n, d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half, delta=delta_tukey)
    if isinstance(options.m, str):  # "private"
        return _largest_models(n, d)
    return int(options.m)


def _ideal_pass(options: TukeyOptions, m: int, d: int, epsilon_half: float, delta_tukey: float) -> float:
    """The idealised pass probability the check compares with MIN_IDEAL_PASS: the largest of
    :func:`ideal_pass_probability` (with the fit's ``ptr``) over m - 3..m.

    The probability grows with m except for a dip at the one m past the first that reaches 1% (t = floor(m/4) and
    q_max = ceil(m/2) step at different m); its largest over a period of four grows with m (checked for epsilon_PTR
    from 0.1 to 4, d from 1 to 30 and m up to 3,000, docs/proofs/tukey.md), so the refused m are those below one
    boundary, and with ``m="private"`` (m = L, :func:`_checked_models`) it bounds the probability of every m <= L."""
    return max(ideal_pass_probability(k, d, epsilon_ptr=epsilon_half, epsilon_em=epsilon_half, delta=delta_tukey,
                                      ptr=options.ptr) for k in range(max(m - 3, MIN_M), m + 1))


def _given_m(options: TukeyOptions) -> bool:
    """Whether the user gave the number of models (``m=`` an integer), rather than the default rule or
    ``m="private"``, whose m follows n (blocks of about d rows where the checks refuse)."""
    return options.m is not None and not isinstance(options.m, str)


def _least_pass(options: TukeyOptions) -> float:
    """The idealised pass probability below which the check refuses: MIN_IDEAL_PASS_GIVEN_M for a user's m,
    MIN_IDEAL_PASS for the default m and ``m="private"`` (whose refused fits have blocks of about d rows)."""
    return MIN_IDEAL_PASS_GIVEN_M if _given_m(options) else MIN_IDEAL_PASS


def _hopeful(ctx: FitContext, options: TukeyOptions, n: int, m: int, epsilon: float) -> bool:
    """Whether m models at (n, epsilon) pass both public checks: t - 2 >= tau, and idealised Gaussian block
    estimates pass the test with probability at least :func:`_least_pass`'s (not evaluated beyond
    IDEAL_CHECK_MAX_M models).  Public facts only."""
    *_, delta_tukey, epsilon_half = _budget_at(n, ctx.d, epsilon, ctx.delta, ctx.intercept_index, options)
    if (m // 2) // 2 - 2 < ptr_threshold(epsilon_half, delta_tukey):
        return False
    return m > IDEAL_CHECK_MAX_M or _ideal_pass(options, m, ctx.d, epsilon_half, delta_tukey) >= _least_pass(options)


def _round_up(x: float) -> float:
    """x rounded up to two significant digits."""
    scale = 10.0 ** (math.floor(math.log10(x)) - 1)
    return math.ceil(x / scale - 1e-9) * scale


def _fewest_models(ctx: FitContext, options: TukeyOptions, m: int, epsilon: float) -> int | None:
    """The fewest models from m up that pass both public checks at this epsilon, or None beyond
    IDEAL_CHECK_MAX_M: of d rows each (n = m d) for the default m and ``m="private"``, at this n for a user's m."""
    d = ctx.d

    def rows(k: int) -> int:
        return ctx.n if _given_m(options) else k * d

    lo, hi = m, IDEAL_CHECK_MAX_M
    if not _hopeful(ctx, options, rows(hi), hi, epsilon):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _hopeful(ctx, options, rows(mid), mid, epsilon) else (mid, hi)
    return hi


def _epsilon_needed(ctx: FitContext, options: TukeyOptions, m: int) -> str:
    """The epsilon from which m models at this n pass both public checks, in words (the fit's epsilon: with the
    missing-value screen's share)."""
    n, epsilon = ctx.n, ctx.epsilon
    scale = ctx.ledger.epsilon / epsilon  # the fit's epsilon over the method's
    e_lo, e_hi = epsilon, max(epsilon, 1.0) * 1000.0
    if not _hopeful(ctx, options, n, m, e_hi):
        return f"no epsilon up to {e_hi * scale:.3g} at n={n}"
    while e_hi / e_lo > 1.001:
        e_mid = math.sqrt(e_lo * e_hi)
        e_lo, e_hi = (e_lo, e_mid) if _hopeful(ctx, options, n, m, e_mid) else (e_mid, e_hi)
    fixed = f" with m={m}" if _given_m(options) else ""
    return f"epsilon >= {_round_up(e_hi * scale):.2g}{fixed} at n={n}"


def _hopeless_message(ctx: FitContext, options: TukeyOptions, m: int) -> str:
    """The refusal of a fit that idealised block estimates would almost never pass, with what would do: the rows
    (or models) at this epsilon and the epsilon at this n.  Public facts only (n, d, epsilon, delta, the
    options)."""
    n, d, delta = ctx.n, ctx.d, ctx.delta
    *_, delta_tukey, epsilon_half = _budget(ctx, options)
    p = _ideal_pass(options, m, d, epsilon_half, delta_tukey)
    fewest = _fewest_models(ctx, options, m, ctx.epsilon)
    if not _given_m(options):
        what = (f"the default m={m} models (about {n // m} rows each)" if options.m is None else
                f"m='private' (at most {m} models at n={n}, one per d={d} rows)")
        rows = (f"n >= {fewest * d} rows for d={d} at this epsilon" if fewest is not None else
                f"more than {IDEAL_CHECK_MAX_M * d} rows for d={d} at this epsilon")
    else:
        what = f"m={m} models (about {n // m} rows each)"
        rows = (f"m >= {fewest} models at this epsilon (each block keeps at least d={d} rows while m <= n/d = "
                f"{n // d})" if fewest is not None else f"more than {IDEAL_CHECK_MAX_M} models at this epsilon")
    test = "its privacy test" + (" (ptr='mass')" if options.ptr == "mass" else "")
    return (f"TukeyEM with {what} would almost surely fail {test} at epsilon={ctx.ledger.epsilon:.4g}, "
            f"delta={delta:.3g}, and a failed test spends budget: even idealised Gaussian block estimates would pass "
            f"it with probability {p:.1g}, below {_least_pass(options) * 100:g}% (on favourable Gaussian data such "
            f"tests almost never passed: docs/proofs/tukey.md). It needs {rows}, or "
            f"{_epsilon_needed(ctx, options, m)}. Nothing was spent.")


def _too_few_message(ctx: FitContext, options: TukeyOptions, m: int, threshold: float) -> str:
    """The refusal of m models that could not pass the test even if identical (t - 2 < tau).  Public facts only."""
    t = (m // 2) // 2
    need = 4 * (math.ceil(threshold) + 2)
    what = f"m='private' (at most {m} models at n={ctx.n})" if options.m == "private" else f"m={m} models"
    return (f"TukeyEM with {what} cannot pass its privacy test at epsilon={ctx.epsilon:.4g}, delta={ctx.delta:.3g}: "
            f"even perfectly concentrated models would pass with probability below 1/2 (the distance bound is at "
            f"most t-2={t - 2}, the threshold is {threshold:.1f}). It needs m >= {need} models, i.e. n >= "
            f"{need * ctx.d} rows for d={ctx.d}, or a larger epsilon. Nothing was spent.")


def _check_public(ctx: FitContext, options: TukeyOptions) -> int:
    """Refuse, before anything is spent, a fit whose test cannot be expected to pass (:func:`public_refusal`), and
    return the m checked (:func:`_checked_models`).

    Returns
    -------
    int

    Raises
    ------
    InsufficientDataError
        When m > n, when even identical models could not pass (t - 2 < tau), or when idealised Gaussian block
        estimates would pass with probability below MIN_IDEAL_PASS (MIN_IDEAL_PASS_GIVEN_M for a user's m).
    """
    n, d = ctx.n, ctx.d
    if options.m is not None and not isinstance(options.m, str) and options.m > n:
        raise InsufficientDataError(f"m={options.m} models need at least m rows; the data have n={n}")
    *_, delta_tukey, epsilon_half = _budget(ctx, options)
    m = _checked_models(options, n, d, epsilon_half, delta_tukey)
    if m <= IDEAL_CHECK_MAX_M and _ideal_pass(options, m, d, epsilon_half, delta_tukey) < _least_pass(options):
        raise InsufficientDataError(_hopeless_message(ctx, options, m))
    threshold = ptr_threshold(epsilon_half, delta_tukey)
    if (m // 2) // 2 - 2 < threshold:
        raise InsufficientDataError(_too_few_message(ctx, options, m, threshold))
    return m


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
        When the test cannot be expected to pass at this budget (:func:`public_refusal`; nothing spent).
    """
    n, d, epsilon = ctx.n, ctx.d, ctx.epsilon
    n_models = _check_public(ctx, options)  # before the private count of m="private"
    blocks, centre, share_prep, share_pilot, share_check, delta_tukey, epsilon_half = _budget(ctx, options)
    log.diagnostics.update(blocks=blocks, ptr=options.ptr)
    if options.m == "private":
        n_models = _private_number_of_models(n, d, epsilon, epsilon_half, delta_tukey, ctx.rng, ctx.ledger, log)
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
