"""What DP-RobGD and DP-AMBSSGD share: options, preconditioning, step schedule, thresholds, accounting, minimum n.

Their common options (:class:`DescentOptions`), the private preconditioning
(:func:`precondition`), the step schedule, the threshold candidates, the
parallel block's accounting and report lines, and their public minimum
number of rows.

Both methods run private gradient descent on rows split into public parts
(:mod:`dpstats.methods.robgd`, :mod:`dpstats.methods.ambssgd`): a step size
eta = 1/lambda_up and T = ceil(kappa_hat ln(n) / 2) rounds from a released
spectrum (Liu, Jain, Kong, Oh & Suggala 2023, Thm 3: T = Theta~(kappa)),
residual or gradient thresholds read from a released histogram on a public
grid, and one ledger step for the parallel composition of their parts.
Proofs: docs/proofs/robgd.md and docs/proofs/ambssgd.md.  Only :func:`precondition` reads
data and draws noise (through :mod:`dpstats.methods.common.private_centring`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import lfilter

from dpstats.errors import InsufficientDataError, MethodOptionError
from dpstats.methods.common.private_centring import Standardisation, release_standardisation, standardised
from dpstats.methods.common.robust_estimators import DISTANCE_GRID, NormEstimate, SpectrumEstimate, clipped_gram
from dpstats.methods.common.row_passes import ClipTable
from dpstats.methods.spec import ErrorSplit, FitContext, MethodOptions
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.rows.base import Rows
from dpstats.validation import shown

__all__ = ["PRECONDITION_SHARE", "min_rows", "plan_refusal", "precondition_split", "check_fraction", "DescentOptions",
           "precondition", "GramPass", "TableGradient", "default_covariate_tail", "rounds_from_kappa", "step_schedule",
           "threshold_candidates", "parallel_block_step", "held_notes", "norm_notes", "part_notes", "DescentError",
           "descent_error", "signal_scale", "error_split"]

#: share of mu^2 for the private centres and scales on all rows (when standardising)
PRECONDITION_SHARE = 0.1
_ZETA = 0.05  # failure probability of the covariate-norm bound in the default tail
_TAIL_RANGE = (1e-6, 1e6)  # public range of covariate_tail (DescentOptions)
_MIN_ROWS, _MIN_ROWS_PER_COLUMN = 1000, 50


def plan_refusal(plan: Callable[[FitContext, Any], object]) -> Callable[[FitContext, Any], str]:
    """The method's ``public_refusal`` from its ``plan(ctx, options)``: why the fit refuses under the public facts of
    ``ctx`` before reading any row (the refusal its plan raises), or "" when it fits; the check
    :func:`dpstats.plan` shares with the fit."""
    def public_refusal(ctx: FitContext, options: Any) -> str:
        try:
            plan(ctx, options)
        except (InsufficientDataError, MethodOptionError) as err:
            return str(err)
        return ""
    return public_refusal


def min_rows(d: int) -> int:
    """The public minimum n of both methods for d columns: max(1000, 50 d).

    The one registered fact (``MethodSpec.min_rows`` and the ``n_min`` of the methods' upper rates, so that
    :func:`dpstats.plan` never proposes fewer rows than the method accepts).  Below it the private
    estimates (norm, spectrum, one residual histogram per round) leave too few rows per part for the rounds
    the budget allows; the fit also refuses, from public n and mu, when not even 2 rounds can clear their
    histogram's noise.
    """
    return max(_MIN_ROWS, _MIN_ROWS_PER_COLUMN * int(d))


def precondition_split(mu: float, standardize: bool) -> tuple[float, float]:
    """(mu of the method's block, mu of the preconditioning): mu^2 = sum of squares (GDP composition); the
    preconditioning gets ``PRECONDITION_SHARE`` of mu^2 when it runs, else nothing."""
    if not standardize:
        return mu, 0.0
    return mu * math.sqrt(1.0 - PRECONDITION_SHARE), mu * math.sqrt(PRECONDITION_SHARE)


def _real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))


def _whole(value: object) -> bool:
    """An integer, or a real number with an integral value (3.0)."""
    return _real(value) and float(value).is_integer()  # type: ignore[arg-type]


def check_fraction(name: str, value: object, *, low_open: bool = True, high: float = 1.0) -> float:
    """Validate an option that must lie in (0, high) (or [0, high) when ``low_open`` is False); returns it."""
    v = float(value) if _real(value) else math.nan  # type: ignore[arg-type]
    ok = (0.0 < v < high) if low_open else (0.0 <= v < high)
    if not ok:
        raise MethodOptionError(f"{name} must lie in {'(' if low_open else '['}0, {high}), got {shown(value)}")
    return v


@dataclass(frozen=True)
class DescentOptions(MethodOptions):
    """The options DP-RobGD and DP-AMBSSGD share, declared and checked once (public, before anything is read).

    The options classes of the two methods derive from it
    (:class:`~dpstats.methods.robgd.RobGDOptions`,
    :class:`~dpstats.methods.ambssgd.AMBSSGDOptions`) and call its
    ``__post_init__`` from theirs.

    Attributes
    ----------
    clip_level : float
        Fraction of clean residuals the residual threshold theta_t may clip (under Gaussian tails), in (0, 1).
    covariate_tail : float or None
        Theta / sqrt(Gamma), in [1e-6, 1e6]; None: 1 + sqrt(2 ln(n / 0.05)) (Gaussian covariates); 1 for
        covariates with ||x||^2 <= Tr(Sigma).
    rounds, step_size : int or None, float or None
        Public T and eta; by default set from the private spectrum estimate (in the units of the standardised
        covariates when ``standardize``).
    max_rounds : int
        Public cap on T (and so on the number of passes over the data), >= 2.
    """

    clip_level: float = 0.05
    covariate_tail: float | None = None
    rounds: int | None = None
    step_size: float | None = None
    max_rounds: int = 2000

    def __post_init__(self) -> None:
        check_fraction("clip_level", self.clip_level)
        tail = self.covariate_tail
        if tail is not None and not (_real(tail) and _TAIL_RANGE[0] <= float(tail) <= _TAIL_RANGE[1]):
            # outside this range Theta^2 over- or underflows for some released Gamma (a step size 1/0 or an
            # infinite sensitivity after part of the budget is spent); Theta / sqrt(Tr Sigma) is about 1 to 10
            raise MethodOptionError(f"covariate_tail must be a number in [{_TAIL_RANGE[0]:g}, {_TAIL_RANGE[1]:g}], got "
                                    f"{shown(tail)}")
        if self.rounds is not None and not (_whole(self.rounds) and self.rounds >= 1):
            raise MethodOptionError(f"rounds must be a positive integer, got {shown(self.rounds)}")
        if self.step_size is not None and not (_real(self.step_size) and self.step_size > 0):
            raise MethodOptionError(f"step_size must be a positive number, got {shown(self.step_size)}")
        if not (_whole(self.max_rounds) and self.max_rounds >= 2):
            raise MethodOptionError(f"max_rounds must be an integer >= 2, got {shown(self.max_rounds)}")


def precondition(rows: Rows, ctx: FitContext, mu_pre: float, notes: list[str],
                 diagnostics: dict[str, Any], moments_first: bool = False) -> Standardisation | None:
    """Step 0 of both methods: the private centres and scales on all rows, sequentially composed with the block.

    Parameters
    ----------
    rows : Rows
        The data.
    ctx : FitContext
        The fit's public facts, ledger and random source.
    mu_pre : float
        GDP parameter of the preconditioning (:func:`precondition_split`); 0 when it is off or releases nothing.
    notes : list of str
        The fit's report lines; the preconditioning's are appended.
    diagnostics : dict
        The fit's diagnostics; the released centres and scales are added.
    moments_first : bool
        Public (DP-RobGD: True): the declared variables' clipped Gaussian centres and scales are released for all
        of them and replace the histograms' readings where precise or at odds with them
        (:func:`~dpstats.methods.common.private_centring.release_standardisation`).

    Returns
    -------
    Standardisation or None
        The released standardisation, or None when ``mu_pre`` is 0 (nothing is read or spent).
    """
    if mu_pre == 0.0:
        return None
    st, lines = release_standardisation(rows.reduce, ctx.n, ctx.d, intercept_index=ctx.intercept_index,
                                        column_ranges=ctx.column_ranges or None, mu=mu_pre, rng=ctx.rng,
                                        ledger=ctx.ledger, declared=ctx.declared_ranges,
                                        response_range=ctx.response_range, moments_first=moments_first,
                                        label=ctx.variable_name)
    notes.extend(lines)
    diagnostics.update(centre=st.centre, scale=st.scale, y_centre=st.y_centre)
    return st


class GramPass:
    """fn(X, y, offset) -> the clipped Gram matrix of a chunk's estimation rows (the spectrum's pass of both methods).

    ``select`` evaluates only those rows: the attribute ``part`` of the
    layout's keys of the chunk (``a_rows``, S_a of DP-RobGD; ``s0_rows``, S_0
    of DP-AMBSSGD).  The pass holds public facts and released values only,
    so it can be sent to workers.

    Parameters
    ----------
    layout : object
        The method's public layout of rows (``keys(offset, count)``).
    part : str
        The attribute of the keys that holds the chunk's estimation rows.
    st : Standardisation or None
        The released preconditioning, if any.
    theta_x : float
        The covariate clipping norm.
    """

    def __init__(self, layout: Any, part: str, st: Standardisation | None, theta_x: float) -> None:
        self.layout, self.part, self.st, self.theta_x = layout, part, st, theta_x

    def select(self, offset: int, count: int) -> np.ndarray:
        """The local indices of the chunk's estimation rows."""
        rows: np.ndarray = getattr(self.layout.keys(offset, count), self.part)
        return rows

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        return clipped_gram(standardised(self.st, X, y)[0], self.theta_x)


class TableGradient:
    """The clipped-gradient sums of some chunks' gradient rows at every threshold a round can release
    (:class:`~dpstats.methods.common.row_passes.ClipTable`); adds up over chunks.

    Parameters
    ----------
    table : ClipTable
        The sums at every candidate threshold.
    """

    def __init__(self, table: ClipTable) -> None:
        self.table = table

    def mean(self, thresholds: np.ndarray, j: int, size: int) -> np.ndarray:
        """The clipped gradient at the released threshold ``thresholds[j]``: the sum over ``size`` rows, divided.

        Parameters
        ----------
        thresholds : numpy.ndarray
            The candidate thresholds.
        j : int
            The index of the released one.
        size : int
            The number of gradient rows of the round (public).

        Returns
        -------
        numpy.ndarray
            The mean clipped gradient.
        """
        return self.table.at(thresholds, j) / size


def default_covariate_tail(n: int, zeta: float = _ZETA) -> float:
    """1 + sqrt(2 ln(n/zeta)): Theta/sqrt(Tr Sigma) that clips no Gaussian covariate w.p. 1 - zeta.

    ||x||^2 <= Tr(Sigma) (1 + sqrt(2t))^2 with probability 1 - e^-t for Gaussian x (Laurent & Massart 2000,
    using ||Sigma||_F, ||Sigma|| <= Tr Sigma), union over the n rows.
    """
    return 1.0 + math.sqrt(2.0 * math.log(n / zeta))


def rounds_from_kappa(kappa: float, n: int, max_rounds: int) -> int:
    """T = ceil(kappa ln(n) / 2), clamped to [2, max_rounds] (Liu et al.: T = Theta~(kappa))."""
    return int(min(max_rounds, max(2, math.ceil(kappa * math.log(n) / 2.0))))


def step_schedule(spec: SpectrumEstimate, n: int, *, max_rounds: int, step_size: float | None,
                  rounds: int | None) -> tuple[float, int, float]:
    """(eta, T, kappa_hat) from a released spectrum: eta = 1/lambda_up unless given, kappa_hat =
    lambda_up / lambda_low clamped to [1, 2 max_rounds / ln n], T = :func:`rounds_from_kappa` unless given
    (post-processing of released values and public options)."""
    kappa_cap = 2.0 * max_rounds / math.log(n)
    kappa_hat = spec.lam_max_upper / spec.lam_min_lower if spec.lam_min_lower > 0 else kappa_cap
    kappa_hat = min(max(kappa_hat, 1.0), kappa_cap)
    eta = 1.0 / spec.lam_max_upper if step_size is None else float(step_size)
    T = rounds_from_kappa(kappa_hat, n, int(max_rounds)) if rounds is None else int(rounds)
    return eta, T, kappa_hat


def threshold_candidates(scale: float) -> np.ndarray:
    """``scale`` sqrt(e_j) for the upper edges e_j of ``DISTANCE_GRID``: every threshold a round can release.

    A round's threshold is ``scale`` sqrt(gamma_t) with gamma_t the upper edge
    of the released modal bin, computed by the same expression, so the table
    of a pass (:class:`~dpstats.methods.common.row_passes.ClipTable`) has the
    exact threshold among its candidates.
    """
    return np.array([scale * math.sqrt(DISTANCE_GRID.upper_edge(j)) for j in range(DISTANCE_GRID.size)])


def parallel_block_step(name: str, mu: float, parts: str) -> PrivacyStep:
    """The single ledger step of a fit whose parts touch disjoint rows (parallel composition).

    Each part is mu-GDP on its own rows, enforced by its own ledger; a
    replaced row lies in one part only, so the fit is mu-GDP.  Recorded as a
    Gaussian step of normalised sensitivity 1 and noise multiplier 1/mu.
    """
    return PrivacyStep(name, "gaussian", 1.0, "normalised (GDP of the block)", 1.0 / mu,
                       note=f"parallel composition over disjoint row sets: {parts}; each part is mu={mu:.4g}-GDP "
                            "on its own ledger, so the block is mu-GDP")


def held_notes(held: int, T: int, what: str) -> list[str]:
    """Report lines for the rounds that held the iterate because no reliable scale was released
    (:class:`~dpstats.methods.common.robust_estimators.PooledHistogram`; public facts of the run)."""
    if held == 0:
        return []
    line = (f"{held} of {T} rounds held the iterate: their {what}, pooled with the earlier ones at the same iterate, "
            "did not clear its noise, so they took no step (an arbitrary threshold could throw the iterate far away)")
    if held < T:
        return [line]
    return [line, ("no round took a step: the fit is the starting point w = 0 (with an intercept and the private "
                   "preconditioning: slopes 0, intercept the released centre of y); use more rows or a larger epsilon")]


def norm_notes(norm: NormEstimate, d: int, *, standardised: bool) -> list[str]:
    """The report line for a norm histogram whose mode did not clear its noise (public facts and released values:
    whether it cleared, d, whether the preconditioning ran)."""
    if norm.released:
        return []
    units = "the standardised covariates" if standardised else "covariates taken to be on unit scale"
    return [f"the norm histogram did not clear its noise: Gamma ~ Tr(Sigma) is the public d = {d} ({units}), "
            "not a bin that may hold only noise"]


def part_notes(label: str, ledger: PrivacyLedger) -> list[str]:
    """One report line per step of a part's own ledger (the itemisation of a parallel block)."""
    return [f"{label}: {s.name}: {s.describe_privacy()}" + (f" [{s.note}]" if s.note else "") for s in ledger.steps]


# ----------------------------------------------------------------------------- the predicted privacy error


@dataclass(frozen=True)
class DescentError:
    """The released output of the descent, linearised with isotropic curvature h in the descent's coordinates:
    E[output] = ``shrink`` w* (w* least squares in those coordinates, start 0) and the injected noise adds
    ``variance`` to every coordinate, independently."""

    shrink: float
    variance: float


def descent_error(noise_sds: Sequence[float], weights: np.ndarray, eta: float, curvature: float) -> DescentError:
    """Propagate the released gradient noise of each round through the linearised steps (post-processing).

    Round t (0-based) either holds (``noise_sds[t]`` NaN: no gradient released) or steps
    w_(t+1) = w_t - eta (h (w_t - w*) + xi_t) with xi_t ~ N(0, ``noise_sds[t]``^2 I), h = ``curvature``; the
    contraction c = 1 - eta h is clipped to [0, 1].  The output is sum_k ``weights[k]`` w_k over the iterates
    w_0 = 0, ..., w_T (the last, a chosen one, or a tail average; ``weights`` has T + 1 entries).  Then
    E[output] = sum_k weights[k] (1 - c^K_k) w* (K_k the steps before w_k) and draw t enters with coefficient
    -eta sum_(k > t) weights[k] c^(K_k - K_(t+1)).

    Closed form of that recurrence: c^m is the running product of the contraction factors; pooling the weights
    by step count, W_m = sum_(K_k = m) weights[k], the draw of the m-th step (m >= 1) has coefficient
    -eta B_m with B_m = sum_(m' >= m) W_m' c^(m' - m), the discounted tail sum B_m = W_m + c B_(m+1), computed
    by a first-order linear filter over the reversed pools (no division by powers of c, which may be 0).
    """
    c = min(max(1.0 - eta * curvature, 0.0), 1.0)
    sds = np.asarray(noise_sds, dtype=float)
    w = np.asarray(weights, dtype=float)
    taken = np.isfinite(sds)
    steps = np.concatenate(([0], np.cumsum(taken)))                            # K_k for k = 0, ..., T
    powers = np.concatenate(([1.0], np.cumprod(np.full(int(steps[-1]), c))))  # c^m for m = 0, ..., steps
    shrink = float(np.sum(w * (1.0 - powers[steps])))
    pooled = np.bincount(steps, weights=w, minlength=powers.size)              # W_m
    tail = lfilter([1.0], [1.0, -c], pooled[::-1])[::-1]                       # B_m
    return DescentError(shrink, float(eta**2 * np.sum(tail[1:] ** 2 * sds[taken] ** 2)))


def signal_scale(gammas: Sequence[float], curvature: float, d: int) -> float:
    """The mean square of the coordinates of w* that a released residual scale allows: the first finite gamma_t
    (the squared-residual scale at an early iterate, about Var(y) when the steps have covered little; inf for a
    held round) over h d, as if the design explained all of it (R^2 = 1 with isotropic curvature h:
    h ||w*||^2 = Var(y) - sigma^2); 0 when every round held."""
    finite = [g for g in gammas if math.isfinite(g)]
    return finite[0] / (curvature * d) if finite and curvature > 0 else 0.0


def error_split(st: Standardisation | None, estimate: np.ndarray, err: DescentError, signal: float,
                source: str) -> ErrorSplit | None:
    """The privacy part of the error of the released coefficients (method units) from the linearised descent.

    In the descent's coordinates: the noise's variance v = ``err.variance`` in every coordinate plus the square of
    the early-stopping bias (s - 1) w*, s = ``err.shrink``.  The released estimate is b = s w* + e, e ~ N(0, v I);
    with the coordinates of w* taken as draws from N(0, ``signal``) (:func:`signal_scale`), the posterior mean
    of (s w*_j)^2 is (k b_j)^2 + k v, k = s^2 signal / (s^2 signal + v): about b_j^2 where b_j stands out of the
    noise, s^2 signal where it does not (the steps covered too little for the estimate to show w*).  The bias is
    (1/s - 1) sign(b_j) sqrt(that); everything is mapped to the method's units by the linear part of the
    standardisation's affine map (the identity without one).  None when no step was taken (s = 0).
    """
    if not err.shrink > 0.0:
        return None
    b = np.asarray(estimate, dtype=float)
    v, prior = err.variance, err.shrink**2 * signal
    k = prior / (prior + v) if prior + v > 0.0 else 0.0
    bias = (1.0 / err.shrink - 1.0) * np.where(b < 0, -1.0, 1.0) * np.sqrt((k * b) ** 2 + k * v)
    cov = v * np.eye(b.size) + np.outer(bias, bias)
    if st is not None:
        A = st.affine_back()[0]
        cov = A @ cov @ A.T
    return ErrorSplit(privacy=cov, privacy_source=source)
