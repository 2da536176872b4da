"""TukeyEM's fit: the one flow for every kind of rows (in memory, files, a Dask cluster).

plan (public) -> layout (public draws) -> one read for the per-block sums and
the preprocessing sample -> private centres and radii (and the radius check)
-> for ``blocks="moments"`` the pilot read and release -> block estimates ->
PTR and the restricted exponential mechanism -> the exact map back to the
user's coefficients.  Proof: docs/proofs/tukey.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.linalg import solve_triangular

from dpstats.methods.common.extremes import quiet
from dpstats.methods.common.row_passes import add_arrays
from dpstats.methods.spec import FitContext, MethodFit
from dpstats.methods.tukey.depth import solve_block_models
from dpstats.methods.tukey.em import tukey_em
from dpstats.methods.tukey.options import TukeyOptions
from dpstats.methods.tukey.passes import (
    CentredBlockSums,
    CombineWithBlockSums,
    GridCounts,
    PilotPass,
    ResidualPass,
    RowPieces,
    SampleCheck,
    SampleHistogram,
    SampleRows,
    WithBlockSums,
    add_centred_sums,
    add_pairs,
    concat_rows,
    dense_ranks,
    merge_counts,
)
from dpstats.methods.tukey.pilot import private_pilot, whitened
from dpstats.methods.tukey.plan import FitLog, Layout, Plan, make_plan, refusal_hint
from dpstats.methods.tukey.preprocessing import (
    CENTRE_GRID,
    RADIUS_K,
    SCALE_QUANTILE,
    Preprocessing,
    RanksOf,
    handled_columns,
    preprocess,
    sample_ranks,
)
from dpstats.methods.tukey.radius_check import check_radii, clip_excess
from dpstats.privacy.calibration import gaussian_mu
from dpstats.rows.base import Rows

__all__ = ["NO_STANDARD_ERRORS", "SHORT_BLOCK_FACTOR", "fit"]

SHORT_BLOCK_FACTOR = 4  # per-block OLS on fewer than 4 d rows per block gets a public warning

NO_STANDARD_ERRORS = (
    "TukeyEM releases one point drawn by the exponential mechanism from the depth region of the block models; a "
    "sound interval would also need the spread of those models released privately and combined with the "
    "mechanism's sampling law, whose coverage is not established, so none is reported (use ssp or adassp for "
    "intervals)")


@quiet
def fit(rows: Rows, ctx: FitContext, options: TukeyOptions) -> MethodFit:
    """TukeyEM with PTR (Amin et al. 2023, Thm 1.1; docs/proofs/tukey.md) on any rows.

    Reads.  ``blocks="ols"``: one read for the per-block sums about each
    block's own rows (:class:`~dpstats.methods.tukey.block_sums.ShiftedBlockSums`,
    re-centred exactly at the released centres) and the preprocessing
    sample.  ``blocks="moments"``: a light read of the sample (only its rows
    are evaluated), then one read for the per-block sums and the pilot's
    clipped sums; when the rows are one chunk in memory, where reading them
    again costs no I/O, the pilot's sums and then the moments of the pilot's
    residuals row by row (:class:`~dpstats.methods.tukey.passes.ResidualPass`:
    no per-block Gram matrix) instead; the releases are the same.  On a
    cluster the sample's ranks come from histograms over the public grids
    (light passes that evaluate only the sample's rows); only counts and sums
    leave a chunk.

    Parameters
    ----------
    rows : Rows
        The rows (public n and d).
    ctx : FitContext
        Public facts (intercept position, public ranges), the ledger and the random source.
    options : TukeyOptions
        The validated options.

    Returns
    -------
    MethodFit
    """
    log = FitLog()
    plan = make_plan(ctx, options, log)
    layout = Layout.draw(plan, ctx.rng)
    if plan.moments:
        prep, plan = _prepare(rows, ctx, plan, layout, None, log)
        if plan.moments:
            estimates, coef_of = _moment_estimates(rows, ctx, plan, layout, prep, log)
            return _finish(ctx, plan, prep, estimates, coef_of, log)
        sums, _ = rows.reduce(WithBlockSums(layout.assignment), CombineWithBlockSums())  # fell back to "ols"
    else:
        sample, combine = _sample_pass(rows, plan, layout)
        sums, part = rows.reduce(WithBlockSums(layout.assignment, sample), CombineWithBlockSums(combine))
        prep, plan = _prepare(rows, ctx, plan, layout, part, log)
    estimates = solve_block_models(*sums.centred(prep.centre, prep.y_centre))
    return _finish(ctx, plan, prep, estimates, _same, log)


def _rereads_are_cheap(rows: Rows) -> bool:
    """True when the rows are one chunk held in memory (a public property of the rows): another read costs no
    I/O, so the moments path reads the residuals instead of gathering per-block Gram matrices."""
    return bool(getattr(rows, "one_chunk", False))


def _same(point: np.ndarray) -> np.ndarray:
    return point.copy()


# -- preprocessing ------------------------------------------------------------------------------------------------

def _sample_pass(rows: Rows, plan: Plan, layout: Layout) -> tuple[SampleRows | None, Callable[..., Any] | None]:
    """The sample part of the per-block read of ``blocks="ols"`` (and its combine): the sample's rows in this
    process, else their histograms over the centre grid (a cluster); none when nothing is released."""
    if not plan.preprocess:
        return None, None
    if rows.local:
        return SampleRows(layout.sample), concat_rows
    return SampleHistogram(layout.sample, handled_columns(plan.d, plan.intercept_index), CENTRE_GRID, None,
                           plan.domains), merge_counts


def _prepare(rows: Rows, ctx: FitContext, plan: Plan, layout: Layout, part: object,
             log: FitLog) -> tuple[Preprocessing, Plan]:
    """The released centres and radii (then the radius check, which may send a moments fit to per-block OLS)
    from the sample: ``part`` (from the first read) or a light read of the sample's rows."""
    if not plan.preprocess:
        return Preprocessing.identity(plan.d, plan.intercept_index), plan
    ranks_of, statistics = _sample_statistics(rows, plan, layout, part)
    epsilon = ctx.epsilon
    prep = preprocess(ranks_of, layout.sample.size, plan.d, centre=plan.centre, scale=plan.moments,
                      intercept_index=plan.intercept_index, domains=plan.domains, epsilon=plan.share_prep * epsilon,
                      rng=ctx.rng, ledger=ctx.ledger)
    _note_preprocessing(plan, prep, epsilon, log)
    if not plan.moments:
        return prep, plan
    zero = [ctx.variable_name(v) for v in prep.zero_radius()]
    if zero:
        return _fall_back(ctx, plan, prep, log, check_spent=False,
                          why=f"the private spread of {', '.join(zero)} is 0 (more than 75% of the values equal the "
                              "private median, as in a rare 0/1 indicator or a zero-inflated count)",
                          short=f"zero radius of {', '.join(zero)}")
    if not prep.private_columns:
        if plan.share_check > 0.0:
            log.notes.append("no released radius can clip a column (each reached its public range's limit): the "
                             "radius check was skipped and its budget went to the Tukey step")
        return prep, plan.without_check(epsilon)
    check = check_radii(prep, statistics(prep), epsilon=plan.share_check * epsilon, sample_rows=layout.sample.size,
                        ledger=ctx.ledger, rng=ctx.rng)
    log.diagnostics.update(radius_check=check.radius_check, mass_check=check.mass_check)
    if check.passed:
        return prep, plan
    return _fall_back(ctx, plan, prep, log, check_spent=True, short=check.short,
                      why=f"{check.why} (most of the values equal the median, as in a zero-inflated count or a rare "
                          "0/1 indicator, or the tails are extreme)")


def _sample_statistics(rows: Rows, plan: Plan, layout: Layout, part: object
                       ) -> tuple[RanksOf, Callable[[Preprocessing], np.ndarray]]:
    """(ranks_of, the radius check's statistics given the released map) from the sample: its rows gathered in
    this process, or on a cluster histograms and sums from light passes (the centres' histograms may come from
    the first read); the cumulative grid counts are exactly the ranks of the gathered rows."""
    cols = handled_columns(plan.d, plan.intercept_index)
    if rows.local:
        # in this process the first read's sample part, when there is one, is the rows gathered by concat_rows
        pieces = part if isinstance(part, RowPieces) else rows.reduce(SampleRows(layout.sample), concat_rows)
        X_sub, y_sub = pieces.arrays()
        return sample_ranks(X_sub, y_sub, cols, plan.domains), lambda prep: clip_excess(X_sub, prep)
    first = part if isinstance(part, GridCounts) else None

    def ranks_of(grid: np.ndarray, centres: np.ndarray | None) -> np.ndarray:
        if first is not None and centres is None:  # the centres' histograms, from the first read
            return dense_ranks(first, grid)
        counts = rows.reduce(SampleHistogram(layout.sample, cols, grid, centres, plan.domains), merge_counts)
        return dense_ranks(counts, grid)

    return ranks_of, lambda prep: rows.reduce(SampleCheck(layout.sample, prep), add_arrays)


def _note_preprocessing(plan: Plan, prep: Preprocessing, epsilon: float, log: FitLog) -> None:
    log.diagnostics.update(centres=prep.centre.copy(), radii=prep.radius.copy())
    text = (f"private preprocessing (epsilon={plan.share_prep * epsilon:.3g}): "
            + ("columns and response centred at private medians" if plan.centre else "no centring (no intercept)")
            + (f"; columns and response rescaled by {RADIUS_K:g} x a private quantile {SCALE_QUANTILE} of "
               "|v - centre| and clipped to [-1, 1] for the pilot" if plan.moments else ""))
    if plan.domains.known.any():
        text += ("; public ranges (declared bounds, factor dummies) bound these estimates (values clipped into "
                 "them, candidates inside them) but do not set them")
    log.notes.append(text + "; coefficients mapped back exactly")


def _fall_back(ctx: FitContext, plan: Plan, prep: Preprocessing, log: FitLog, *, check_spent: bool, why: str,
               short: str) -> tuple[Preprocessing, Plan]:
    """Switch a moments fit to blocks="ols" with the released centres only (post-processing of released
    values): OLS and the approximate depth are equivariant under rescaling a column, so no radii are needed."""
    log.notes.append(f"blocks='moments' fell back to 'ols': {why}, which the moments path cannot correct; per-block "
                     "OLS needs no spread. Declaring bounds for such columns avoids this")
    centres = prep.centres_only()
    log.diagnostics.update(blocks="ols", fallback=f"moments -> ols ({short})", radii=centres.radius.copy())
    return centres, plan.fallen_back(ctx.epsilon, ctx.delta, check_spent=check_spent)


# -- block estimates ----------------------------------------------------------------------------------------------

def _moment_estimates(rows: Rows, ctx: FitContext, plan: Plan, layout: Layout, prep: Preprocessing, log: FitLog
                      ) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """The pilot's read and release, then u_k = L^{-1} Z_k^T (y_k - c_y - Z_k b~) / b: from per-block sums taken
    in the same read as the pilot's, or, when the rows are re-read cheaply, from a read of the residuals."""
    sums: np.ndarray | None = None
    if _rereads_are_cheap(rows):
        gram, moment = rows.reduce(PilotPass(prep), add_pairs)
    else:
        sums, (gram, moment) = rows.reduce(CentredBlockSums(layout.assignment, prep), add_centred_sums)
    delta_pilot = ctx.delta - plan.delta_tukey
    mu = gaussian_mu(plan.share_pilot * ctx.epsilon, delta_pilot)
    gram_n, pilot = private_pilot(gram, moment, plan.n, prep, mu, ctx.rng, ctx.ledger)
    chol = np.linalg.cholesky(gram_n)
    log.notes.append(f"blocks='moments': a private pilot (noisy Z^T Z and Z^T y of the clipped data, "
                     f"epsilon={plan.share_pilot * ctx.epsilon:.3g}, delta={delta_pilot:.3g}) is refined by TukeyEM "
                     "on the block moments of its residuals, whitened by the pilot's Gram matrix")
    if sums is None:
        moments = rows.reduce(ResidualPass(layout.assignment, prep, pilot), add_arrays)
    else:
        d = plan.d
        zz, zy = sums[:, :d, :d], sums[:, :d, d]
        moments = zy / prep.radius - (zz / np.outer(prep.radius, prep.radius)) @ pilot

    def coef_of(point: np.ndarray) -> np.ndarray:
        return pilot + solve_triangular(chol.T, point, lower=False)

    return whitened(moments, chol, plan.block_rows), coef_of


# -- the release --------------------------------------------------------------------------------------------------

def _finish(ctx: FitContext, plan: Plan, prep: Preprocessing, estimates: np.ndarray,
            coef_of: Callable[[np.ndarray], np.ndarray], log: FitLog) -> MethodFit:
    """TukeyEM on the block estimates and the exact map back to the user's coefficients."""
    n, d, m, b = plan.n, plan.d, plan.n_models, plan.block_rows
    release = tukey_em(estimates, epsilon_ptr=plan.epsilon_tukey, epsilon_em=plan.epsilon_tukey,
                       delta=plan.delta_tukey, rng=ctx.rng, ledger=ctx.ledger, ptr=plan.ptr,
                       hint=refusal_hint(n, d, m))
    params = prep.params_back(coef_of(release.point))
    log.notes.append(f"TukeyEM: m={m} blocks of {b} rows ({n - m * b} rows unused); PTR passed (noisy distance "
                     f"{release.noisy_distance:.1f} > threshold {release.threshold:.1f}); restricted to depth "
                     f">= {release.t}")
    if not plan.moments and b < SHORT_BLOCK_FACTOR * d:
        log.notes.append(
            f"WARNING: each per-block OLS model is fitted on {b} rows for d={d} columns. A factor level or "
            f"indicator present in fewer than about 1 in {b} rows leaves most blocks rank-deficient, and their "
            "coefficients are then not identified (the minimum-norm block solutions shift the intercept into the "
            "dummies), which can spoil the whole fit. Use a common level as the reference "
            "(C(g, Treatment('most common level'))), fewer terms, more rows, or declared bounds with "
            "method='adassp'.")
    log.diagnostics.update(m=m, block_rows=b, t=release.t, noisy_distance=release.noisy_distance,
                           ptr_threshold=release.threshold)
    return MethodFit(params=params, notes=tuple(log.notes), diagnostics=log.diagnostics,
                     no_inference_reason=NO_STANDARD_ERRORS)
