"""Products and powers centred at released centres, where the declared bounds do not give every range.

With every variable's range declared, the pipeline centres a product or power column at the declared midpoints
before a private fit sees the design (:mod:`dpstats.formula.centring`).  Without them, a method that releases
its own clipping domain and the centres of the columns (:mod:`dpstats.methods.common.private_scaling`) can centre
them itself, at the released centres (noisy means) of their variables:

1. the domain is released for every column except the centrable ones (:attr:`CentrableDesign.columns`), whose
   domains follow from their variables' (fewer variables share the domain's budget);
2. the centres and scales of those other columns and of the response are released as usual, with the share
   k_1 / k of the moments' budget (k_1 of the k variables);
3. each variable x of a product or power is centred at its released centre m (clipped into its domain [lo, hi]),
   with h = max(m - lo, hi - m): (x - m)(z - m') and (x - m)^k are the columns of X M for a matrix M that
   depends only on released values, and their ranges, [-h h', h h'] and [0, h^2] (or [-h^k, h^k]), hold every
   row once its variables are clipped (:meth:`CentrableDesign.at`);
4. the centres and scales of the centred columns are released with the rest of the budget, k_2 / k (k_2 = k -
   k_1), on the rows clipped to that domain.

Every map here is post-processing of earlier releases and public facts, so the releases compose adaptively; a
Gaussian mechanism whose share of mu^2 is proportional to its number of variables adds the same noise per
variable as one release of all k would, so the split costs nothing in accuracy (proof: docs/proofs/pgd.md,
"Products and powers centred at released centres").  The model and its fitted values do not change (b = M b',
:meth:`Standardisation.affine_back`), but the centred columns are close to uncorrelated with their variables,
which a private fit resolves far better.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dpstats.bounds.interval import Interval
from dpstats.formula.centring import CentrableDesign, ColumnCentring
from dpstats.methods.common.private_scaling import Domain, Standardisation, free_variables, release_moments
from dpstats.privacy.ledger import PrivacyLedger

__all__ = ["placeholder_ranges", "release_centred_moments", "centred_note", "PLACEHOLDER"]

#: The placeholder range of a centrable column before its domain is derived: degenerate, so that neither the
#: domain nor the first moments release covers it.
PLACEHOLDER = (0.0, 0.0)


def placeholder_ranges(ranges: Sequence[tuple[float, float] | None], centring: CentrableDesign | None
                       ) -> tuple[tuple[float, float] | None, ...]:
    """The column ranges with each centrable column's replaced by ``PLACEHOLDER`` (public facts): its domain is
    derived from its variables' after they are released, so it releases none."""
    if centring is None:
        return tuple(ranges)
    return tuple(PLACEHOLDER if j in centring.columns else r for j, r in enumerate(ranges))


def _centring_intervals(domain: Domain, centres: np.ndarray, centring: CentrableDesign) -> list[Interval]:
    """The interval of each design column that :meth:`CentrableDesign.at` reads: for a variable centred, one
    symmetric about its centre m (clipped into the domain) that holds the whole domain; else the domain."""
    intervals = []
    for j, (lo, hi) in enumerate(zip(domain.lo.tolist(), domain.hi.tolist(), strict=True)):
        if j in centring.variables:
            m = min(max(float(centres[j]), lo), hi)
            h = max(m - lo, hi - m)
            intervals.append(Interval(m - h, m + h))
        else:
            intervals.append(Interval(lo, hi))
    return intervals


def release_centred_moments(reduce: Callable[[Any, Any], Any], n: int, domain: Domain, centring: CentrableDesign, *,
                            mu_centre: float, mu_scale: float, rng: np.random.Generator, ledger: PrivacyLedger,
                            null_rows: bool = False, column_values: Sequence[tuple[float, ...] | None] = (),
                            label: str = "pgd") -> tuple[Standardisation, ColumnCentring]:
    """The standardisation of the design with its products and powers centred at released centres (module
    docstring, steps 2-4), and the centring used.

    ``domain`` is the released domain of every other column (the centrable ones at ``PLACEHOLDER``), with an
    intercept: the design's, or the constant of its intercept model where the domain has that model's matrix M_i as
    its mix (the rows are then those of X M_c M_i; docs/proofs/pgd.md, step 0); ``mu_centre`` and ``mu_scale`` are
    the moments' whole budget, which the two releases share in proportion to their numbers of variables.
    """
    cols, resp = free_variables(domain)
    derived = np.asarray(centring.columns, dtype=np.intp)
    k_first = cols.size + int(resp)
    share = k_first / (k_first + derived.size)
    first = release_moments(reduce, n, domain, mu_centre=mu_centre * math.sqrt(share),
                            mu_scale=mu_scale * math.sqrt(share), rng=rng, ledger=ledger, null_rows=null_rows,
                            column_values=column_values, label=label)
    centres = domain.mid + domain.half * first.centre  # released means, in the columns' units
    centred = centring.at(_centring_intervals(domain, centres, centring))
    lo, hi = domain.lo.copy(), domain.hi.copy()
    for j in centring.columns:
        lo[j], hi[j] = centred.intervals[j]
    # X M_c, after the intercept model's M_i where the domain has one (X M_c M_i: M_c leaves the columns of the
    # constant's weights as they are, so column k stays X w = 1)
    mix = centred.matrix if domain.mix is None else centred.matrix @ domain.mix
    mixed = dataclasses.replace(domain, lo=lo, hi=hi, mix=mix)
    second = release_moments(reduce, n, mixed, mu_centre=mu_centre * math.sqrt(1.0 - share),
                             mu_scale=mu_scale * math.sqrt(1.0 - share), rng=rng, ledger=ledger, null_rows=null_rows,
                             column_values=column_values, label=f"{label} (centred products and powers)",
                             only=centring.columns, rows=first.rows, rows_sd=first.rows_sd)
    centre, scale = first.centre.copy(), first.scale.copy()
    centre[derived], scale[derived] = second.centre[derived], second.scale[derived]
    st = Standardisation(mixed, centre, scale, first.y_centre, first.y_scale, rows=first.rows,
                         floored=first.floored + second.floored, rows_sd=first.rows_sd, y_centre_sd=first.y_centre_sd)
    return st, centred


def centred_note(centring: CentrableDesign) -> str:
    """The report's note for the columns centred at released centres (public names only)."""
    many = len(centring.centred) > 1
    return (f"{', '.join(centring.centred)} (product or power column{'s' if many else ''}) "
            f"{'were' if many else 'was'} fitted with each variable centred at its released mean ((x - m)(z - m'), "
            "(x - m)^k; bounds were not declared for every variable and the response, so the fit released its own "
            "centres, also of a variable whose bounds were declared, in place of the declared midpoints): "
            f"{'their' if many else 'its'} clipping domain follows from the variables' released domains, and the "
            "coefficients were mapped back to the formula's columns (post-processing)")
