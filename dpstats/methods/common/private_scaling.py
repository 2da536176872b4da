"""Private centring and scaling of every column and of the response inside a clipping domain.

The gradient methods need the design on a unit scale: a column whose declared range is 20 times its spread
leaves a gradient method's weak directions unresolved within any affordable number of steps, and a clip or a
step size set from the declared range is too coarse by the same factor.  This module gives the pieces that put
the rows on the scale of the data, privately:

1. a **domain** for each variable (design column or response): its public range where one is known (declared
   bounds, factor dummies, the intercept), else a released one, [c - R s, c + R s] from noisy histograms of
   group means and variances (:func:`release_domain`; the modal-bin estimators of
   :mod:`dpstats.methods.private_centring`);
2. the rows clipped to their domain and mapped to u = (x - mid) / half in [-1, 1] (:class:`Domain`);
3. **moments** of u released by two Gaussian mechanisms (:func:`release_moments`): centres c'_j (noisy means)
   and scales s'_j (1.25 times the noisy mean absolute deviation about the released centre, about one
   standard deviation for a normal column), so that z_j = (u_j - c'_j) / s'_j (:class:`Standardisation`).

The map x -> z is a released affine map composed with a public clip: a fit on the rows z maps back to the
user's coefficients exactly (:meth:`Standardisation.params_back`), and a method's privacy argument on the rows
z applies to the rows x (a replaced row x is a replaced row z).  Proof of the releases: docs/proofs/pgd.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstats.methods.common.extremes import LARGEST, QUIET, clamp_finite, quiet
from dpstats.methods.common.geometric_histogram import GeometricGrid, grid_counts
from dpstats.methods.common.permutations import RowPermutation
from dpstats.methods.common.private_centring import CentreGrid, GroupSumsPass, group_size
from dpstats.methods.common.robust_estimators import HISTOGRAM_SENSITIVITY, clearance
from dpstats.methods.common.row_passes import add_arrays
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_block, gaussian_mechanism_mu
from dpstats.rates import PlanningFacts

__all__ = ["Domain", "Standardisation", "DOMAIN_HALF_WIDTH", "VARIANCE_GRID", "LOCATION_GRID", "release_domain",
           "domain_variables", "release_moments", "UnitSumsPass", "DeviationSumsPass", "free_variables",
           "null_marks", "scale_floor", "assumed_standardisation", "standardised_moments", "two_valued_columns",
           "two_valued_scale", "TWO_VALUED_FLOOR_Z"]

#: A two-valued column's released share p is kept at least TWO_VALUED_FLOOR_Z noise sds from 0 and 1
#: (:func:`two_valued_scale`): a share inside the noise would make the scale, hence the row's weight, arbitrary.
TWO_VALUED_FLOOR_Z = 2.0
#: ... and its rarer value's standardised entry |z| is at most TWO_VALUED_MAX_Z.
TWO_VALUED_MAX_Z = 4.0
#: Half-width, in released scales, of a released domain: [c - R s, c + R s].
DOMAIN_HALF_WIDTH = 8.0
#: Grid of the group variances: ratio 4 over [2^-64, 2^64) (bin 0 also holds groups of equal values).  Coarse
#: bins hold more groups, so the mode clears the noise at smaller n mu; the domain needs the scale only within
#: a factor 2.
VARIANCE_GRID = GeometricGrid(lo=2.0**-64, ratio=4.0, bins=64)
#: Grid of the group means over twice the released scale: unit bins for |u| < 2^12, 2 per octave beyond (the
#: domain needs the centre only within about one scale).  The unit bins reach 2^12 so that a variable far from 0 for
#: its spread, a calendar year (2003-2009: about 500 scales out), is located to a scale: with unit bins to 2^8 only,
#: its centre came from a bin an octave wide, hundreds of years off, and every row was clipped (docs/choosing.md,
#: "Heavy tails without bounds").  The grid is public; more bins raise the noisy argmax's floor by
#: sqrt(2 ln 8705) - sqrt(2 ln 1041), about half a noise sd.
LOCATION_GRID = CentreGrid(limit=1 << 12, fine=1, per_octave=2)


@dataclass(frozen=True)
class Domain:
    """Clipping domain of each design column ([lo_j, hi_j]; the intercept's is [1, 1]) and of the response, and
    the public map of a clipped value to u = (x - mid) / half in [-1, 1] (u = 0 where the domain is a point).
    Without an intercept the map is linear, mid = 0 and half = max(|lo|, |hi|): a shift of a column or of the
    response would change the model (nothing absorbs it), so the coefficients on u would not map back.

    With ``mix`` (a public or released matrix M) the columns clipped are those of X M, a reparametrisation of the
    design (products and powers with their variables centred: :mod:`dpstats.methods.common.product_centring`).

    Attributes
    ----------
    lo, hi : numpy.ndarray
        Per design column, finite, lo <= hi.
    y_lo, y_hi : float
        The response's domain.
    intercept_index : int or None
        The intercept column (always 1; its u is 1).
    mix : numpy.ndarray or None
        M (d, d), unit diagonal: the domain is that of X M's columns, and coefficients b' on X M are b = M b'.
    """

    lo: np.ndarray
    hi: np.ndarray
    y_lo: float
    y_hi: float
    intercept_index: int | None
    mix: np.ndarray | None = None

    @property
    def mid(self) -> np.ndarray:
        return self._mid(self.lo, self.hi)

    @property
    def half(self) -> np.ndarray:
        return self._half(self.lo, self.hi)

    @property
    def y_mid(self) -> float:
        return float(self._mid(self.y_lo, self.y_hi))

    @property
    def y_half(self) -> float:
        return float(self._half(self.y_lo, self.y_hi))

    def _mid(self, lo: Any, hi: Any) -> np.ndarray:
        """The centre of the map: the domain's midpoint with an intercept; 0 without one, where no coefficient
        could absorb a shift (the map is then linear, u = x / max(|lo|, |hi|))."""
        if self.intercept_index is None:
            return np.zeros(np.shape(lo))
        return np.asarray(lo / 2.0 + hi / 2.0)

    def _half(self, lo: Any, hi: Any) -> np.ndarray:
        """The half-width of the map: half the domain's width with an intercept, max(|lo|, |hi|) without."""
        if self.intercept_index is None:
            return np.maximum(np.abs(lo), np.abs(hi))
        return np.asarray(hi / 2.0 - lo / 2.0)

    def _unit(self, v: np.ndarray, lo: Any, hi: Any) -> np.ndarray:
        mid, half = self._mid(lo, hi), self._half(lo, hi)
        with np.errstate(**QUIET):  # |x - mid| <= half for x in [lo, hi]: finite; NaN cannot occur (clip)
            u = (np.clip(v, lo, hi) - mid) / np.where(half > 0, half, 1.0)
        return np.clip(np.where(half > 0, u, 0.0), -1.0, 1.0)

    def columns(self, X: np.ndarray) -> np.ndarray:
        """The columns the domain bounds: X, or X M where the domain has a mix (entries clipped first so that X M
        stays finite; a public map of each row)."""
        X = np.asarray(X, dtype=float)
        if self.mix is None:
            return X
        limit = LARGEST / (4.0 * float(np.abs(self.mix).sum(axis=0).max()))
        with np.errstate(**QUIET):
            return np.clip(X, -limit, limit) @ self.mix

    def design(self, X: np.ndarray) -> np.ndarray:
        """u of every design column (a new array; the intercept column stays 1)."""
        U = self._unit(self.columns(X), self.lo, self.hi)
        if self.intercept_index is not None:
            U[:, self.intercept_index] = 1.0
        return U

    def response(self, y: np.ndarray) -> np.ndarray:
        """u of the response (a new array)."""
        return self._unit(np.asarray(y, dtype=float), self.y_lo, self.y_hi)

    def design_values(self, j: int, values: np.ndarray) -> np.ndarray:
        """u of values of design column j (public values, e.g. a dummy's two)."""
        return self._unit(np.asarray(values, dtype=float), self.lo[j], self.hi[j])


def free_variables(domain: Domain) -> tuple[np.ndarray, bool]:
    """(design columns with a non-degenerate domain, other than the intercept; whether the response's is): the
    variables whose moments are released (public facts)."""
    d = domain.lo.size
    cols = np.array([j for j in range(d) if j != domain.intercept_index and domain.hi[j] > domain.lo[j]],
                    dtype=np.intp)
    return cols, bool(domain.y_hi > domain.y_lo)


@dataclass(frozen=True)
class Standardisation:
    """The released map of a row: z_j = (u_j - c_j) / s_j, v = (u_y - c_y) / s_y, with u the :class:`Domain`'s
    map to [-1, 1] (the intercept column stays 1; a column with a degenerate domain is 0).

    Attributes
    ----------
    domain : Domain
        The clipping domain.
    centre, scale : numpy.ndarray
        c_j and s_j > 0 per design column (0 and 1 for the intercept and degenerate columns).
    y_centre, y_scale : float
        c_y and s_y > 0.
    rows : float or None
        The released number of rows that are not public null rows (``missing="drop"``), which the moments are
        averaged over; None when the fit has no null rows (all n rows count).
    rows_sd : float or None
        The standard deviation of the noise of that released count (rows; public: its release's sensitivity over
        its mu), None with ``rows``.
    floored : tuple
        The variables (design column indices, and ``"response"``) whose released scale sits at the floor of
        :func:`release_moments`: their spread is below what the release resolves (nearly constant in these data,
        or swamped by the noise at this n and budget).  Post-processing of released values.
    y_centre_sd : float or None
        The standard deviation of the noise of ``y_centre`` (on the domain's [-1, 1] scale; public: its release's
        sensitivity over its mu, divided by the count the mean divides by), None where no centre of the response
        was released.
    """

    domain: Domain
    centre: np.ndarray
    scale: np.ndarray
    y_centre: float
    y_scale: float
    rows: float | None = None
    floored: tuple[int | str, ...] = ()
    rows_sd: float | None = None
    y_centre_sd: float | None = None

    def design(self, X: np.ndarray) -> np.ndarray:
        """The rows z (a new array)."""
        Z = (self.domain.design(X) - self.centre) / self.scale
        if self.domain.intercept_index is not None:
            Z[:, self.domain.intercept_index] = 1.0
        return Z

    def response(self, y: np.ndarray) -> np.ndarray:
        """The responses v (a new array)."""
        return (self.domain.response(y) - self.y_centre) / self.y_scale

    def affine_back(self) -> tuple[np.ndarray, np.ndarray]:
        """(A, b) with beta = A theta + b: coefficients theta fitted on (z, v) as coefficients on (x, y).

        With a_j = mid_j + half_j c_j and b_j = half_j s_j (x_j = a_j + b_j z_j; similarly y = a_y + b_y v),
        beta_j = b_y theta_j / b_j and, with an intercept, beta_0 = a_y + b_y theta_0 - sum_j beta_j a_j.
        """
        dom = self.domain
        a_x, b_x = dom.mid + dom.half * self.centre, dom.half * self.scale
        a_y = dom.y_mid + dom.y_half * self.y_centre
        b_y = dom.y_half * self.y_scale
        d = a_x.size
        with np.errstate(**QUIET):
            ratio = np.where(b_x > 0, b_y / np.where(b_x > 0, b_x, 1.0), 0.0)
            A = np.diag(ratio)
            b = np.zeros(d)
            k = dom.intercept_index
            if k is not None:
                slopes = np.arange(d) != k
                A[k, :] = np.where(slopes, -ratio * a_x, b_y)
                b[k] = a_y
            if dom.mix is not None:  # coefficients on X M -> on X
                A, b = dom.mix @ clamp_finite(A), dom.mix @ clamp_finite(b)
        return clamp_finite(A), clamp_finite(b)

    def params_back(self, theta: np.ndarray) -> np.ndarray:
        """The coefficients on the method's units (clamped to finite doubles: a public, elementwise map)."""
        A, b = self.affine_back()
        with np.errstate(**QUIET):
            return clamp_finite(A @ np.asarray(theta, dtype=float) + b)


def null_marks(y: np.ndarray) -> np.ndarray | None:
    """The public null rows of ``missing="drop"`` as a method reading them marked sees them (NaN response; the
    mask is private and only used to leave those rows out of sums), or None when the chunk has none."""
    marked = np.isnan(y)
    return marked if marked.any() else None


class UnitSumsPass:
    """The pass (X, y, offset) -> sums over rows of u of the free variables (columns, then the response); a
    public null row (NaN-marked) adds nothing.  With ``count``, a last coordinate counts the rows that are not
    null rows."""

    uses_offset = False

    def __init__(self, domain: Domain, columns: np.ndarray, response: bool, count: bool = False) -> None:
        self.domain, self.columns, self.response, self.count = domain, columns, response, count

    def values(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        parts = [self.domain.design(X)[:, self.columns]]
        if self.response:
            parts.append(self.domain.response(y)[:, None])
        return np.hstack(parts)

    def row_terms(self, values: np.ndarray) -> np.ndarray:
        """Each row's term of the sums from its values u (here u itself)."""
        return values

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> np.ndarray:
        terms = self.row_terms(self.values(X, y))
        marked = null_marks(y)
        if marked is not None:
            terms[marked] = 0.0
        sums = terms.sum(axis=0)
        if not self.count:
            return sums
        return np.append(sums, float(y.shape[0] - (0 if marked is None else int(marked.sum()))))


class DeviationSumsPass(UnitSumsPass):
    """The pass (X, y, offset) -> sums over rows of |u - c| of the free variables (c released)."""

    def __init__(self, domain: Domain, columns: np.ndarray, response: bool, centre: np.ndarray,
                 count: bool = False) -> None:
        super().__init__(domain, columns, response, count)
        self.centre = centre

    def row_terms(self, values: np.ndarray) -> np.ndarray:
        """|u - c| of each row."""
        return np.abs(values - self.centre)


def release_moments(reduce: Callable[[Any, Any], Any], n: int, domain: Domain, *, mu_centre: float, mu_scale: float,
                    rng: np.random.Generator, ledger: PrivacyLedger, null_rows: bool = False,
                    column_values: Sequence[tuple[float, ...] | None] = (), label: str = "pgd",
                    only: Sequence[int] | None = None, rows: float | None = None,
                    rows_sd: float | None = None) -> Standardisation:
    """Release the centres and scales of the free variables (module docstring, step 3): two passes.

    With an intercept: the k-vector of sums of u (each term in [-1, 1]: replace-one L2 sensitivity 2 sqrt(k))
    under ``mu_centre``, c = clip(noisy sums / n, -1, 1); then the sums of |u - c| (each term in [0, 2]:
    sensitivity 2 sqrt(k)) under ``mu_scale``.  Without an intercept nothing can absorb a centre: c = 0 and
    only the sums of |u| are released (terms in [0, 1]: sensitivity sqrt(k)), under ``mu_scale``.  A scale is
    1.25 times the noisy mean absolute deviation, floored at twice the noise sd of that mean (and at 2^-10):
    never below what the release resolves.  With ``null_rows`` (``missing="drop"``: the public null rows add
    nothing to the sums), the first of the two vectors also counts the rows that are not null rows (a term in
    {0, 1}: its sensitivity becomes sqrt(Delta^2 + 1)), and the means divide by that released count, clipped to
    [1, n], instead of n.  ``label`` (the method's name) starts the ledger steps' names.

    A column that public facts fix at two values (``column_values``: a factor's dummy, an integer declared
    between consecutive integers) gets its scale from its released centre alone (:func:`two_valued_scale`), so
    it is left out of the second release, whose sensitivity then counts only the other variables.

    With ``only`` the releases cover only those design columns (not the response; the others get centre 0 and
    scale 1), and with ``rows`` (a count of the rows that are not null rows released earlier) the means divide by
    it and no count is released again (``rows_sd``: that count's noise sd, carried to the result).
    """
    cols, resp = free_variables(domain)
    if only is not None:
        cols, resp = np.intersect1d(cols, np.asarray(only, dtype=np.intp)), False
    k = cols.size + int(resp)
    d = domain.lo.size
    centre, scale = np.zeros(d), np.ones(d)
    if k == 0:
        return Standardisation(domain, centre, scale, 0.0, 1.0, rows=rows, rows_sd=rows_sd)
    c = np.zeros(k)
    centring = domain.intercept_index is not None
    null_rows = null_rows and rows is None
    centre_sens = math.sqrt(4.0 * k + null_rows)
    if centring:
        sums = reduce(UnitSumsPass(domain, cols, resp, count=null_rows), add_arrays)
        noisy = np.asarray(gaussian_mechanism_mu(sums, l2_sensitivity=centre_sens,
                                                 mu=mu_centre, rng=rng, ledger=ledger,
                                                 name=f"{label}: private centres (sums of the clipped variables)"),
                           dtype=float)
        noisy, released = _split_count(noisy, n, null_rows)
        rows = rows if released is None else released
        rows_sd = rows_sd if released is None else centre_sens / mu_centre
        c = np.clip(noisy / (rows or n), -1.0, 1.0)
    two = two_valued_columns(domain, cols, column_values) if centring else {}
    measured = np.array([j not in two for j in cols] + ([True] if resp else []), dtype=bool)
    k_scaled = int(measured.sum())
    sens = 2.0 * math.sqrt(k_scaled) if centring else math.sqrt(k_scaled)
    counted = null_rows and not centring  # without a centre release, the scales' vector carries the count
    s = np.ones(k)
    floored_at = np.zeros(k, dtype=bool)
    counted_rows: float | None = None
    if k_scaled:
        dev = reduce(DeviationSumsPass(domain, cols[measured[:cols.size]], resp, c[measured], count=counted),
                     add_arrays)
        noisy = np.asarray(gaussian_mechanism_mu(dev, l2_sensitivity=math.sqrt(sens**2 + counted), mu=mu_scale,
                                                 rng=rng, ledger=ledger,
                                                 name=f"{label}: private scales (sums of absolute deviations)"),
                           dtype=float)
        noisy, counted_rows = _split_count(noisy, n, counted)
        if counted_rows is not None:
            rows_sd = math.sqrt(sens**2 + counted) / mu_scale
        mean_rows = rows or counted_rows or n
        floor = scale_floor(sens, mu_scale, mean_rows)
        s[measured] = np.maximum(1.25 * noisy / mean_rows, floor)
        floored_at[measured] = s[measured] <= floor
    if two:
        centre_sd = centre_sens / (mu_centre * (rows or n))
        position = {int(j): i for i, j in enumerate(cols)}
        for j, values in two.items():
            s[position[j]], floored_at[position[j]] = two_valued_scale(c[position[j]], values, centre_sd)
    centre[cols], scale[cols] = c[:cols.size], s[:cols.size]
    y_centre, y_scale = (float(c[-1]), float(s[-1])) if resp else (0.0, 1.0)
    variables: list[int | str] = [int(j) for j in cols] + (["response"] if resp else [])
    floored = tuple(v for v, at_floor in zip(variables, floored_at, strict=True) if at_floor)
    y_centre_sd = centre_sens / (mu_centre * (rows or n)) if centring and resp else None
    return Standardisation(domain, centre, scale, y_centre, y_scale, rows=rows or counted_rows, floored=floored,
                           rows_sd=rows_sd, y_centre_sd=y_centre_sd)


def two_valued_columns(domain: Domain, cols: np.ndarray, column_values: Sequence[tuple[float, ...] | None]
                       ) -> dict[int, tuple[float, float]]:
    """{column: (a, b)} for the free design columns that public facts fix at two values (``column_values``), a
    and b their two values on the domain's [-1, 1] scale (public)."""
    two: dict[int, tuple[float, float]] = {}
    for j in cols:
        values = column_values[j] if j < len(column_values) else None
        if values is None or len(set(values)) != 2:
            continue
        lo, hi = min(values), max(values)
        a, b = (float(v) for v in domain.design_values(int(j), np.array([lo, hi])))
        if b > a:
            two[int(j)] = (a, b)
    return two


def two_valued_scale(centre: float, values: tuple[float, float], centre_sd: float) -> tuple[float, bool]:
    """(scale, whether it sits at its floor) of a column that takes two public values a < b (on the [-1, 1]
    scale), from its released centre c alone (post-processing of that release and public facts).

    The share of rows at b is p = (c - a) / (b - a), kept in [p_0, 1 - p_0] with p_0 = min(1/2,
    ``TWO_VALUED_FLOOR_Z`` sd(p)), sd(p) = ``centre_sd`` / (b - a) the noise sd of the released share.  The scale
    is (b - a) max(sqrt(p (1 - p)), 2.5 p (1 - p), max(p, 1 - p) / ``TWO_VALUED_MAX_Z``): 2.5 p (1 - p) (b - a) is
    what 1.25 times the column's mean absolute deviation, the scale of every other variable, would be, and it
    is kept where it is the larger (shares between 0.2 and 0.8); below 0.2 that scale falls faster than the
    standard deviation sqrt(p (1 - p)) (b - a) and would put a rare level's dummy at |z| = 1 / (2.5 p) (20 for a
    level of 2% of the rows), whose square would dominate the norm of every row in that level and so set the
    gradient clip, hence the privacy noise, of every coefficient; the standard deviation keeps the column's mean
    share of a row's squared norm at 1, and the last term keeps the rarer value's |z| at most TWO_VALUED_MAX_Z
    (docs/choosing.md, "Factor dummies on wide designs").
    """
    a, b = values
    width = b - a
    p_floor = min(0.5, TWO_VALUED_FLOOR_Z * centre_sd / width)
    share = (centre - a) / width
    p = min(max(share, p_floor), 1.0 - p_floor)
    scale = max(math.sqrt(p * (1.0 - p)), 2.5 * p * (1.0 - p), max(p, 1.0 - p) / TWO_VALUED_MAX_Z)
    return width * scale, bool(share <= p_floor or share >= 1.0 - p_floor)


def scale_floor(sensitivity: float, mu_scale: float, rows: float) -> float:
    """The smallest scale :func:`release_moments` releases: twice the noise sd of a mean of ``rows`` terms whose
    vector of sums has L2 sensitivity ``sensitivity`` under ``mu_scale``, and at least 2^-10 (public)."""
    return max(2.0 * sensitivity / (mu_scale * rows), 2.0**-10)


def assumed_standardisation(facts: PlanningFacts, mu_scale: float) -> Standardisation:
    """The standardisation :func:`release_moments` would release, noise-free, under a plan's assumptions (every
    variable bounded, rescaled to [-1, 1]): centres at the means (none without an intercept), scales at the
    standard deviations about the centres (root mean squares without an intercept; the released 1.25 times a mean
    absolute deviation is the standard deviation of a normal variable), floored as the release floors them
    (:func:`scale_floor`)."""
    d, k = facts.d, facts.intercept_index
    m = facts.second_moment
    free = [j for j in range(d) if j != k]
    centre = np.zeros(d)
    if k is not None:
        centre[free] = m[k, free]
    spread = np.diag(m) - centre**2
    y_centre, y_spread = _assumed_response(facts)
    floor = scale_floor((2.0 if k is not None else 1.0) * math.sqrt(len(free) + 1), mu_scale, facts.n)
    scale = np.ones(d)
    scale[free] = np.maximum(np.sqrt(np.clip(spread[free], 0.0, None)), floor)
    lo, hi = -np.ones(d), np.ones(d)
    if k is not None:
        lo[k] = hi[k] = 1.0
    domain = Domain(lo, hi, -1.0, 1.0, k)
    return Standardisation(domain, centre, scale, y_centre, max(math.sqrt(y_spread), floor))


def _assumed_response(facts: PlanningFacts) -> tuple[float, float]:
    """(c_y, E[(y - c_y)^2]) under a plan's assumptions: the response's centre as :func:`release_moments` would
    release it (its mean with an intercept, 0 without) and its second moment about that centre."""
    beta, m, k = facts.coefficients, facts.second_moment, facts.intercept_index
    centre = float(m[k] @ beta) if k is not None else 0.0
    return centre, max(float(beta @ m @ beta) + facts.residual_var - centre**2, 0.0)


def standardised_moments(facts: PlanningFacts, st: Standardisation) -> tuple[np.ndarray, np.ndarray, float]:
    """(E[z z^T], theta, sd of v): the second moment of a standardised row, the coefficients on the standardised
    rows (slopes beta_j s_j / s_y; the intercept's 0, the centres being the means) and the root mean square of the
    standardised response v (1 unless its scale sits at the release's floor) under the assumptions."""
    d, k, m = facts.d, facts.intercept_index, facts.second_moment
    shift = np.zeros(d)
    if k is not None:
        shift = np.where(np.arange(d) == k, 0.0, st.centre)
        m = m - np.outer(shift, m[k]) - np.outer(m[k], shift) + np.outer(shift, shift)
    z_moment = m / np.outer(st.scale, st.scale)
    theta = facts.coefficients * st.scale / st.y_scale
    if k is not None:
        theta[k] = 0.0
    return z_moment, theta, math.sqrt(_assumed_response(facts)[1]) / st.y_scale


def _split_count(noisy: np.ndarray, n: int, counted: bool) -> tuple[np.ndarray, float | None]:
    """(the noisy sums, the released count of rows that are not null rows clipped to [1, n]) when ``counted``
    (its last coordinate), else (``noisy``, None): post-processing of a release and the public n."""
    if not counted:
        return noisy, None
    return noisy[:-1], float(np.clip(noisy[-1], 1.0, n))


@quiet
def _domain_of(centre: float, scale: float) -> tuple[float, float]:
    """[c - R s, c + R s], clamped to finite doubles (a public map of released values)."""
    lo = float(np.clip(centre - DOMAIN_HALF_WIDTH * scale, -LARGEST, LARGEST))
    hi = float(np.clip(centre + DOMAIN_HALF_WIDTH * scale, -LARGEST, LARGEST))
    return lo, hi


def domain_variables(d: int, intercept_index: int | None, column_ranges: Sequence[tuple[float, float] | None],
                     response_range: tuple[float, float] | None) -> tuple[list[int | str], list[int | str]]:
    """(variables without a public range, variables with a non-degenerate one): design column indices and
    "response" (public facts)."""
    private: list[int | str] = []
    declared: list[int | str] = []
    for j in range(d):
        if j == intercept_index:
            continue
        r = column_ranges[j] if j < len(column_ranges) else None
        if r is None:
            private.append(j)
        elif r[1] > r[0]:
            declared.append(j)
    if response_range is None:
        private.append("response")
    elif response_range[1] > response_range[0]:
        declared.append("response")
    return private, declared


def _variables(names: Sequence[int | str], label: Callable[[int | str], str]) -> str:
    """"variable a" or "variables a, b": the public names of the released domain's variables, in a note."""
    return ("variable " if len(names) == 1 else "variables ") + ", ".join(map(label, names))


def release_domain(reduce: Callable[[Any, Any], Any], n: int, d: int, *, intercept_index: int | None,
                   column_ranges: Sequence[tuple[float, float] | None], response_range: tuple[float, float] | None,
                   mu: float, rng: np.random.Generator, ledger: PrivacyLedger,
                   label: Callable[[int | str], str] = str) -> tuple[Domain, list[str], float | None]:
    """The clipping domain (module docstring, step 1): public ranges where known, released ones elsewhere.

    For the k variables released, one pass sums x and x^2 over the groups of a public random partition of the
    rows (:class:`~dpstats.methods.private_centring.GroupSumsPass`); per variable a noisy histogram of the
    group variances (``VARIANCE_GRID``) gives a scale s (the modal bin's geometric middle, square-rooted), and
    a noisy histogram of the group means over 2 s (``LOCATION_GRID``) a centre c.  Replacing a row changes one
    group, so each histogram has L2 sensitivity sqrt(2); the 2k histograms are one Gaussian block of 2k
    releases at mu / sqrt(2k), adaptively composed: mu-GDP in all.  The released domain is [c - R s, c + R s]
    with R = ``DOMAIN_HALF_WIDTH`` (public).  A histogram whose mode does not clear the noise of its empty
    bins still gives its mode (a released value, only less accurate); the notes say so, naming each variable
    by ``label`` (a design column's index or ``"response"`` -> its public name).  Returns the domain, the notes and,
    where the response's domain was released, the lead of its variance histogram's bin 0 (groups of equal values)
    over its mode, as a share of the k groups (released counts and public k; None where no response domain was
    released): above 0, most groups hold a single value of the response, as with a rare two-valued or
    zero-inflated response, and the scale comes from the few others; for groups of 2 rows a response taking two
    values, a share p of the rows at one, leads by (1 - 2 p)^2 less the noise.
    """
    lo, hi = np.ones(d), np.ones(d)
    for j in range(d):
        r = column_ranges[j] if j < len(column_ranges) else None
        if j != intercept_index and r is not None:
            lo[j], hi[j] = float(r[0]), float(r[1])
    y_lo, y_hi = (0.0, 0.0) if response_range is None else (float(response_range[0]), float(response_range[1]))
    names, _ = domain_variables(d, intercept_index, column_ranges, response_range)
    notes: list[str] = []
    if not names:
        return Domain(lo, hi, y_lo, y_hi, intercept_index), notes, None
    releases = 2 * len(names)
    mu_round = mu / math.sqrt(releases)
    b = group_size(n, mu_round)
    k = n // b
    block = gaussian_block(rounds=releases, mu_round=mu_round, ledger=ledger,
                           name="private clipping domain (centre and scale of each variable)",
                           note=f"{len(names)} variables, {k} groups of {b} rows; per variable a histogram of the "
                                "group variances and one of the group means / scale, sensitivity sqrt 2 each")
    columns = np.array([j for j in names if j != "response"], dtype=np.intp)
    sums = reduce(GroupSumsPass(RowPermutation.draw(n, rng), b, k, columns, "response" in names), add_arrays)
    with np.errstate(**QUIET):  # overflowed sums give inf / NaN statistics, binned by public rules
        means = sums[0] / b
        variances = np.maximum(sums[1] - sums[0] * means, 0.0) / (b - 1)
    order = [*[j for j in names if j != "response"], *(["response"] if "response" in names else [])]
    uncleared, saturated = [], []
    lead: float | None = None
    for i, name in enumerate(order):
        low, high, cleared, beyond, one_value = _released_domain(means[i], variances[i], block, rng)
        if not cleared:
            uncleared.append(name)
        if beyond:
            saturated.append(name)
        if name == "response":
            y_lo, y_hi = low, high
            lead = one_value
        else:
            lo[int(name)], hi[int(name)] = low, high
    notes.append(f"{_variables(names, label)} {'has' if len(names) == 1 else 'have'} no public range (no bounds "
                 f"declared): {'it' if len(names) == 1 else 'each'} was clipped to a released domain, centre +- "
                 f"{DOMAIN_HALF_WIDTH:g} released scales (the centre and scale released from the means and "
                 f"variances of {k} groups of {b} rows)")
    if uncleared:
        notes.append(f"{_variables(uncleared, label)}: a domain histogram's mode did not clear the noise of its "
                     "empty bins (too few rows for this budget): the domain is rough")
    if saturated:
        top = math.sqrt(VARIANCE_GRID.edges[-2])
        notes.append(f"WARNING: {_variables(saturated, label)}: the released spread is in the top bin "
                     f"of the scale grid (standard deviation {top:.3g} or more), so the released domain can be much "
                     "narrower than the values and clips them hard (their coefficients shrink towards 0); express "
                     + ("it" if len(saturated) == 1 else "them") + " in larger units (e.g. thousands) or declare "
                     "bounds for " + ("it" if len(saturated) == 1 else "them"))
    return Domain(lo, hi, y_lo, y_hi, intercept_index), notes, lead


def _released_domain(means: np.ndarray, variances: np.ndarray, block: Any,
                     rng: np.random.Generator) -> tuple[float, float, bool, bool, float]:
    """(lo, hi, cleared, beyond, lead) of one variable from its group means and variances: two releases of
    ``block``; ``beyond`` says the released variance bin is the grid's last (the spread may exceed the grid),
    ``lead`` is the released count of bin 0 (groups of equal values) less the mode's, over the number of groups
    (public)."""
    noisy = np.asarray(block.release(grid_counts(variances, VARIANCE_GRID).astype(float),
                                     l2_sensitivity=HISTOGRAM_SENSITIVITY, rng=rng))
    m = 1 + int(np.argmax(noisy[1:]))  # bin 0: groups of equal values
    scale = math.sqrt(VARIANCE_GRID.edges[m] * math.sqrt(VARIANCE_GRID.ratio))  # the bin's geometric middle
    with np.errstate(**QUIET):
        located = means / (2.0 * scale)
    counts = np.bincount(LOCATION_GRID.index(located), minlength=LOCATION_GRID.size).astype(float)
    noisy_c = np.asarray(block.release(counts, l2_sensitivity=HISTOGRAM_SENSITIVITY, rng=rng))
    mc = int(np.argmax(noisy_c))
    cleared = bool(noisy[m] > clearance(VARIANCE_GRID.bins, block.mu_round)
                   and noisy_c[mc] > clearance(LOCATION_GRID.size, block.mu_round))
    low, high = _domain_of(2.0 * scale * LOCATION_GRID.value(mc), scale)
    return low, high, cleared, m == VARIANCE_GRID.bins - 1, float(noisy[0] - noisy[m]) / max(variances.size, 1)
