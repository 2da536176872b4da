"""Peeling: private top-s selection and release of a vector (Dwork, Su & Zhang 2021, Algorithm 1).

Given a vector v whose every coordinate moves by at most lambda between
neighbouring data sets (l_inf sensitivity), Peeling selects s coordinates by
s report-noisy-max rounds on |v_j| and releases their values with fresh
Laplace noise; every other coordinate is released as 0.  It is the private
hard-thresholding step of DP-LASSO (Cai, Wang & Zhang 2021, Algorithm 4,
:mod:`dpstats.methods.lasso`) and of any private iterative hard thresholding.

Peeling lives in its own module, not beside the lasso, because it is a
mechanism in its own right (a private top-s of any l_inf-bounded vector: sparse
means, sparse gradients), audited on its own (tests/test_cai.py).

Privacy (proof: docs/proofs/lasso.md, "Peeling"): each selection is a pure
report-noisy-max and the values are a Laplace mechanism; their privacy-loss
distributions are composed with ``dp_accounting`` (:func:`peeling_noise_multiplier`).
The noise is an exact discrete Laplace on a public grid (:mod:`dpstats.privacy.samplers`).
When s equals the dimension the selection is every coordinate whatever the
data, so only the values are released and charged.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from functools import lru_cache

import numpy as np
from dp_accounting import pld

from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep, reference_delta
from dpstats.privacy.mechanisms import _PLD_NUMERIC_FAILURES, MOVED_UP, _check_sensitivity
from dpstats.privacy.samplers import (
    LAPLACE_BITS,
    _exact_add,
    _float_up,
    _grid_exponent,
    _to_float,
    discrete_laplace,
    laplace_closeness,
    to_grid,
)

__all__ = ["PeelingBlock", "check_peeling_scale", "peeling", "peeling_block", "peeling_noise_multiplier"]


#: exp(x) overflows double precision above this x
_LARGEST_EXP = math.log(sys.float_info.max)


@lru_cache(maxsize=256)
def peeling_noise_multiplier(sparsity: int, epsilon: float, delta: float, *,
                             select: bool = True) -> tuple[float, float]:
    """Laplace noise multiplier b / lambda of an (epsilon, delta)-DP Peeling, and the delta it actually uses.

    Peeling with ``select=True`` is the adaptive composition of ``s`` report-noisy-max
    selections, each pure (2 lambda / b)-DP, and of ``s`` Laplace values, each a
    one-dimensional Laplace mechanism with multiplier b / lambda; with ``select=False`` (s = d: every
    coordinate is released, no selection) only the values.  The privacy-loss distribution of the
    run is dominated by randomized response RR(2 lambda / b)^s (Kairouz, Oh & Viswanath 2015) composed
    with Laplace(b / lambda)^s, which ``dp_accounting`` composes with pessimistic discretisation.  The
    multiplier returned is the smallest (to 1e-4 relative) at which that bound gives ``epsilon`` at
    ``delta``; when basic composition (3 s / epsilon, or s / epsilon without selection) is at least as
    good, it is returned with delta 0 (pure epsilon-DP).  Proof: docs/proofs/lasso.md, "Peeling".

    Parameters
    ----------
    sparsity : int
        s, the number of coordinates selected and released (>= 1).
    epsilon : float
        Finite epsilon > 0 of one Peeling call.
    delta : float
        delta in (0, 1) that the PLD bound may use.
    select : bool
        False when s equals the dimension: the (trivial) selection is not charged.

    Returns
    -------
    tuple of (float, float)
        (multiplier, delta_used): b = multiplier * lambda; delta_used is 0.0 when the pure bound is used.
    """
    s = int(sparsity)
    if s < 1:
        raise ValueError("sparsity must be >= 1")
    if not (epsilon > 0 and math.isfinite(epsilon) and 0 < delta < 1):
        raise ValueError("Peeling needs a finite epsilon > 0 and 0 < delta < 1")
    pure = (3.0 if select else 1.0) * s / epsilon

    def pld_epsilon(multiplier: float) -> float:
        if select and 2.0 / multiplier > _LARGEST_EXP:
            return math.inf  # building RR(2 / multiplier) overflows exp, as below: skip the costly Laplace part first
        try:
            values = pld.privacy_loss_distribution.from_laplace_mechanism(
                parameter=multiplier, sensitivity=1.0).self_compose(s)
            if select:
                values = pld.privacy_loss_distribution.from_privacy_parameters(
                    pld.common.DifferentialPrivacyParameters(2.0 / multiplier, 0.0)).self_compose(s).compose(values)
            return float(values.get_epsilon_for_delta(delta))
        except _PLD_NUMERIC_FAILURES:
            return math.inf  # no PLD bound at this multiplier (exp(2/multiplier) overflows): the pure bound stands

    lo, hi = pure / 8.0, pure
    if pld_epsilon(hi * (1.0 - 1e-3)) > epsilon:
        return pure, 0.0
    while pld_epsilon(lo) <= epsilon:
        lo /= 2.0
    while hi - lo > 1e-4 * hi:
        mid = 0.5 * (lo + hi)
        if pld_epsilon(mid) > epsilon:
            lo = mid
        else:
            hi = mid
    return hi, float(delta)


def check_peeling_scale(*, linf_sensitivity: float, sparsity: int, epsilon: float, delta: float,
                        select: bool) -> None:
    """Refuse, from public numbers alone and before anything is released, a Peeling whose noise scale
    lambda * multiplier would lie below the floating-point grid (:class:`~dpstats.errors.NoiseScaleRangeError`).

    A method whose lambda is only known after other releases passes the smallest lambda those releases can give,
    so that the refusal comes before any budget is spent.

    Parameters
    ----------
    linf_sensitivity : float
        The smallest lambda the calls can have.
    sparsity : int
        s.
    epsilon, delta : float
        The budget of one call.
    select : bool
        False when s equals the dimension.
    """
    multiplier, _ = peeling_noise_multiplier(sparsity, epsilon, delta, select=select)
    _grid_exponent(float(linf_sensitivity) * multiplier, LAPLACE_BITS)


class PeelingBlock:
    """Private top-s selection and release (Peeling), charged to the ledger once for ``parts`` calls.

    Peeling(v, s, lambda, epsilon, delta) (Dwork, Su & Zhang 2021, Alg. 1;
    Cai, Wang & Zhang 2021, Algorithm 4, line 6) for a vector v of
    l_inf-sensitivity ``linf_sensitivity`` = lambda:

    1. S = {}.  Repeat s times: draw w ~ Lap(b)^d afresh and add
       argmax_{j not in S} (|v_j| + w_j) to S (skipped when s = d: S is every coordinate);
    2. draw fresh Lap(b) noise and release u_j = v_j + noise_j for j in S,
       u_j = 0 otherwise.

    b = lambda * :func:`peeling_noise_multiplier` makes one call
    (epsilon, delta_used)-DP.  When the ``parts`` calls are computed from
    pairwise disjoint sets of rows (DP-LASSO's data split) a replaced row
    enters at most one call, so the whole block is (epsilon, delta_used)-DP by
    parallel composition, which holds for adaptively chosen calls.  The block
    is recorded as ONE approximate-DP step with the per-part
    (epsilon, delta_used), charged before any noise is drawn; more than
    ``parts`` calls are refused.  With ``parts=1`` it is a single Peeling.

    Hardened: scores and values are rounded to the public grid g = 2^e
    (b / g in [2^52, 2^53)) and the noise is an exact discrete Laplace with
    parameter t = ceil((lambda + g) * multiplier / g), in integer arithmetic
    (ties go to the lowest index).  Proof of both claims: docs/proofs/lasso.md, "Peeling".

    Parameters
    ----------
    parts : int
        Number of calls, each on its own disjoint set of rows.
    sparsity : int
        s, in [1, dimension].
    linf_sensitivity : float
        lambda, the l_inf sensitivity of every vector passed to :meth:`release`.
    epsilon, delta : float
        Budget of one call (and of the block, by parallel composition).
    ledger : PrivacyLedger
        The fit's ledger, charged now.
    name : str
        The ledger step's name.
    dimension : int
        d, the length of every vector.
    """

    def __init__(self, *, parts: int, sparsity: int, linf_sensitivity: float, epsilon: float, delta: float,
                 ledger: PrivacyLedger, name: str, dimension: int) -> None:
        if int(parts) != parts or parts < 1:
            raise ValueError("parts must be a positive integer")
        if int(sparsity) != sparsity or not 1 <= sparsity <= dimension:
            raise ValueError(f"sparsity must be an integer in [1, d={dimension}], got {sparsity!r}")
        lam = _check_sensitivity(linf_sensitivity)
        if lam == 0:
            raise ValueError("Peeling needs a positive l_inf sensitivity")
        self.parts = int(parts)
        self.sparsity = int(sparsity)
        self.dimension = int(dimension)
        self.selects = self.sparsity < self.dimension
        multiplier, delta_used = self._calibrate(float(epsilon), float(delta))
        self.grid_exponent = _grid_exponent(lam * multiplier, LAPLACE_BITS)
        g = Fraction(2) ** self.grid_exponent
        lam_rounded = Fraction(lam) + g
        self.t = math.ceil(lam_rounded * Fraction(multiplier) / g)
        self.scale = math.ldexp(float(self.t), self.grid_exponent)
        self.used = 0
        how = (f"parallel composition over {self.parts} disjoint parts" if self.parts > 1 else "one call")
        what = (f"{self.sparsity} report-noisy-max selections + {self.sparsity} Laplace values" if self.selects
                else f"every one of the {self.sparsity} coordinates selected (s = d, no selection charged); "
                     f"{self.sparsity} Laplace values")
        ledger.charge(PrivacyStep(
            name, "approximate-dp", _float_up(lam_rounded), "L-inf", self.scale, epsilon=float(epsilon),
            delta=delta_used, dimension=self.sparsity,
            note=(f"Peeling: {what}, Lap scale {self.scale:.4g}; "
                  + ("composed by PLD" if delta_used else "pure epsilon-DP by basic composition") + f"; {how}; "
                  f"discrete Laplace on the grid 2^{self.grid_exponent} (t={self.t} grid steps; exact integer "
                  "sampler, Canonne, Kamath & Steinke 2020); sensitivity includes the grid rounding")))

    def _calibrate(self, epsilon: float, delta: float) -> tuple[float, float]:
        """The noise multiplier of one call and the delta it uses (docs/proofs/lasso.md, "Peeling").

        With delta > 0 the PLD bound holds for the reference values (rounded continuous Laplace), so the
        reference is calibrated at (epsilon - 2 Lambda, delta_R) for the sampled values to be (epsilon, delta)-DP.
        """
        multiplier, delta_used = peeling_noise_multiplier(self.sparsity, epsilon, delta, select=self.selects)
        if not delta_used:
            return multiplier, 0.0
        lam_total = self.parts * self.sparsity * laplace_closeness(1 << LAPLACE_BITS)  # t >= 2^52
        multiplier, delta_used = peeling_noise_multiplier(self.sparsity, epsilon - 2.0 * lam_total,
                                                          reference_delta(delta, lam_total, 0.0),
                                                          select=self.selects)
        return multiplier, delta if delta_used else 0.0

    def release(self, v: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
        """One Peeling call on ``v`` (length d); returns a vector with ``sparsity`` non-zero coordinates.

        Parameters
        ----------
        v : numpy.ndarray
            The finite vector to threshold, of l_inf sensitivity at most the block's lambda.
        rng : numpy.random.Generator
            The fit's random source.

        Returns
        -------
        numpy.ndarray
            The released vector: noisy values on the selected coordinates, 0 elsewhere.
        """
        if self.used >= self.parts:
            raise RuntimeError("this Peeling block has already made all the calls it was charged for")
        vec = np.asarray(v, dtype=float)
        if vec.shape != (self.dimension,) or not np.all(np.isfinite(vec)):
            raise ValueError(f"Peeling needs a finite vector of length {self.dimension}")
        self.used += 1
        chosen = self._select(vec, rng) if self.selects else np.arange(self.dimension)
        values, _ = to_grid(vec[chosen], self.grid_exponent)
        out = np.zeros(self.dimension)
        out[chosen] = _to_float(_exact_add(values, discrete_laplace(self.t, self.sparsity, rng)), self.grid_exponent)
        return out

    def _select(self, vec: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The s report-noisy-max rounds on |v_j| (exact integers on the grid; ties go to the lowest index)."""
        score, _ = to_grid(np.abs(vec), self.grid_exponent)
        chosen = np.empty(self.sparsity, dtype=int)
        taken = np.zeros(self.dimension, dtype=bool)
        for k in range(self.sparsity):
            noisy = _exact_add(score, discrete_laplace(self.t, self.dimension, rng))
            if noisy.dtype != object:  # |noisy| < 2^63 - 1: the int64 minimum is below every candidate
                noisy[taken] = np.iinfo(np.int64).min
                best = int(np.argmax(noisy))  # the first maximum: ties go to the lowest index
            else:
                best = max((i for i in range(self.dimension) if not taken[i]), key=lambda i: (noisy[i], -i))
            chosen[k] = best
            taken[best] = True
        return chosen


def peeling_block(*, parts: int, sparsity: int, linf_sensitivity: float, epsilon: float, delta: float,
                  ledger: PrivacyLedger, name: str, dimension: int) -> PeelingBlock:
    """Charge ``parts`` Peeling calls on disjoint data now; see :class:`PeelingBlock`.

    Returns
    -------
    PeelingBlock
        The charged block; call :meth:`PeelingBlock.release` once per part.
    """
    return PeelingBlock(parts=parts, sparsity=sparsity, linf_sensitivity=linf_sensitivity, epsilon=epsilon,
                        delta=delta, ledger=ledger, name=name, dimension=dimension)


def peeling(v: np.ndarray, *, sparsity: int, linf_sensitivity: float, epsilon: float, delta: float,
            rng: np.random.Generator, ledger: PrivacyLedger, name: str = "Peeling") -> np.ndarray:
    """Peeling (Dwork, Su & Zhang 2021; Cai, Wang & Zhang 2021, Algorithm 4): private top-s of ``v``.

    (epsilon, delta)-DP for a vector of l_inf-sensitivity ``linf_sensitivity``
    (proof: docs/proofs/lasso.md, "Peeling"); charges the ledger once, then draws.

    Returns
    -------
    numpy.ndarray
        The s-sparse noisy vector.
    """
    vec = np.asarray(v, dtype=float)
    block = peeling_block(parts=1, sparsity=sparsity, linf_sensitivity=linf_sensitivity, epsilon=epsilon,
                          delta=delta, ledger=ledger, name=name, dimension=vec.size)
    return block.release(vec, rng=rng)


# the deprecated dpstats.privacy.mechanisms.<name> of the names that moved here (one release)
for _name in ("peeling_noise_multiplier", "PeelingBlock", "peeling_block", "peeling"):
    MOVED_UP.add(_name, f"{__name__}.{_name}", globals()[_name])
