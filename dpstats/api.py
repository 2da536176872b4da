"""``dp_ols``: formula + data + budget -> a privately fitted regression.

The call is a fixed pipeline: validate the public arguments -> build the public
design -> choose the method from public facts -> reserve the budget -> fit ->
wrap the results.  Every refusal before the fit spends nothing; a method that
fails after releasing something (a PTR refusal) still has its spend settled in
the accountant.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import patsy

from dpstats.errors import (
    DPStatsError, InsufficientDataError, InvalidPrivacyParameterError, MethodOptionError, MissingBoundsError,
    SingularDesignError,
)
from dpstats.formula import Design, build_design
from dpstats.inference import withheld_reason
from dpstats.methods import available_methods, get_method
from dpstats.bounds import DataBounds
from dpstats.methods.registry import MethodFit, MethodSpec
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import make_rng
from dpstats.privacy.report import PrivacyReport
from dpstats.results import DPRegressionResults
from dpstats.scaling import PublicScaling
from dpstats.sources import is_chunked_data
from dpstats.theory import error_bounds
from dpstats.validation import check_privacy_parameters

__all__ = ["dp_ols"]

_RELATIONS = {
    "replace-one": "replace-one neighbours: data sets differ in the values of one row",
    "add/remove": "add/remove neighbours: data sets differ by one row",
    "none": "no privacy",
}
_GUARANTEES = {
    "worst-case": "worst-case (epsilon, delta)-DP: holds for every data set, given the declared bounds",
    "conditional": "CONDITIONAL: holds only with high probability under the method's distributional assumptions",
    "none": "none (NOT PRIVATE)",
}


def dp_ols(
    formula: str,
    data: Any,
    epsilon: float,
    delta: float = 1e-6,
    method: str = "auto",
    bounds: Mapping[str, tuple[float, float]] | None = None,
    accountant: PrivacyAccountant | None = None,
    random_state: "int | np.random.Generator | None" = None,
    *,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    rescale: bool = True,
    chunksize: int | None = None,
    eval_env: "patsy.EvalEnvironment | None" = None,
    **options: Any,
) -> DPRegressionResults:
    """Fit a linear regression with differential privacy from an R-style formula.

    Parameters
    ----------
    formula:
        patsy formula, e.g. ``"price ~ carat + C(cut, levels=['Fair', 'Good'])"``.
        Factor levels must be public (declared in the formula, in ``levels=``
        or by a pandas Categorical dtype).
    data:
        pandas DataFrame or dict of equal-length arrays; or, for data larger
        than memory, a path, glob or list of paths to CSV or Parquet files (or
        a directory of Parquet files), a ``dask.dataframe.DataFrame``, or a
        :mod:`dpstats.sources` source.  Those are read chunk by chunk (on a
        Dask cluster: where the partitions live, with only aggregates sent
        back) with the same public design as in memory; ``ssp``, ``adassp``,
        ``noisy_ols``, ``tukey`` and ``ols`` support them (see
        ``docs/scale.md``).
    epsilon, delta:
        Privacy budget of this fit (epsilon > 0, 0 < delta < 1; choose delta
        well below 1/n).  ``epsilon=float('inf')`` only with ``method='ols'``.
    method:
        A registered method name (see :func:`dpstats.methods.available_methods`)
        or ``"auto"``, which decides from public facts (n, d, which bounds were
        given) and records why in the report.
    bounds:
        Public ranges ``{name: (lo, hi)}`` of raw variables, design columns, or
        the response as patsy writes it (e.g. ``"I(a / (a + b))"``), from
        domain knowledge; each must be finite with lo < hi.  Methods that need
        them clip the data to them.
    accountant:
        A :class:`~dpstats.privacy.accountant.PrivacyAccountant` the fit draws
        from; a fit that would overspend it is refused before touching the data.
    random_state:
        ``None`` (the operating-system CSPRNG, the default for real releases), an int seed
        or a Generator (reproducible; the report says the noise was seeded).
    levels:
        Public factor levels ``{variable: [level, ...]}``.
    missing:
        ``"raise"`` (default) or ``"drop"`` (the post-drop n is then treated as
        public, and the report says so).
    allow_data_levels:
        Accept factor levels read from the data; reported as a leak.
    rescale:
        When every column and the response have declared bounds, centre and
        scale them to [-1, 1] with those public numbers before fitting and map
        the coefficients back (post-processing; see :mod:`dpstats.scaling`).
        This usually improves private fits a lot; ``False`` fits on the raw
        design.
    chunksize:
        Rows per chunk for files (default 131072), or, with a DataFrame,
        process it in chunks of this many rows (same result as in one piece).
    eval_env:
        The namespace in which functions used by the formula are looked up
        (default: the caller's, as in patsy); wrappers such as
        :func:`dpstats.compare` pass their own caller's.
    **options:
        Method-specific options (e.g. ``rho=`` for adassp).

    Returns
    -------
    DPRegressionResults
    """
    eps, dlt = check_privacy_parameters(epsilon, delta)
    spec = resolve_method(method, eps, options)

    clip = spec.needs_bounds if spec is not None else bool(bounds)
    # the budget is reserved before the data are touched: an over-budget fit is refused on public facts only
    private = spec.private if spec is not None else True
    token = reserve(accountant, eps, dlt, f"{method}: {formula}") if private else None
    env = eval_env if eval_env is not None else patsy.EvalEnvironment.capture(1)  # the caller's namespace
    if chunksize is not None or is_chunked_data(data):
        from dpstats.chunked import fit_chunked  # noqa: PLC0415

        try:
            return fit_chunked(formula, data, eps, dlt, spec=spec, method=method, bounds=bounds, levels=levels,
                               missing=missing, allow_data_levels=allow_data_levels, rescale=rescale,
                               accountant=accountant, token=token, random_state=random_state, options=options,
                               eval_env=env, chunksize=chunksize)
        except BaseException:
            if token is not None and accountant.is_open(token):  # type: ignore[union-attr]
                accountant.settle(token, 0.0, 0.0, status="refused")  # type: ignore[union-attr]
            raise
    try:
        design = build_design(formula, data, eval_env=env, bounds=bounds,
                              levels=levels, missing=missing, allow_data_levels=allow_data_levels,
                              clip_variables=clip)
    except BaseException:
        if token is not None:
            accountant.settle(token, 0.0, 0.0, status="refused")  # type: ignore[union-attr]
        raise
    return _fit_design(design, spec, method, eps, dlt, formula=formula, accountant=accountant, token=token,
                       random_state=random_state, rescale=rescale, options=options)


def resolve_method(method: str, eps: float, options: Mapping[str, Any]) -> MethodSpec | None:
    """The named method checked against epsilon and its options (public facts only); None means auto.

    ``method="auto"`` with epsilon = inf resolves to the non-private reference ``ols``.
    """
    spec = None if method == "auto" else get_method(method)
    if spec is not None:
        _check_epsilon_for_method(spec, eps)
    elif math.isinf(eps):
        spec = get_method("ols")
    if spec is not None:
        _check_options(spec, options)
    return spec


def reserve(accountant: PrivacyAccountant | None, eps: float, dlt: float, label: str) -> str | None:
    """Reserve a private fit's budget in ``accountant`` (None when there is no accountant)."""
    return accountant.reserve(eps, dlt, label=label) if accountant is not None else None


def _fit_design(design: Design, spec: MethodSpec | None, method: str, eps: float, dlt: float, *, formula: str,
                accountant: PrivacyAccountant | None, random_state: "int | np.random.Generator | None",
                rescale: bool, options: Mapping[str, Any], token: str | None = None,
                runner: Callable[..., MethodFit] | None = None) -> DPRegressionResults:
    """The pipeline once the public design is built, shared by :func:`dp_ols` and
    :func:`dpstats.api_arrays.dp_ols_arrays`: choose the method (``spec=None``
    means auto), fit, map back, wrap the results.  ``token`` is the caller's
    reservation in ``accountant`` (the caller reserves before touching the
    data); every exit settles it with what the ledger spent.  ``runner`` fits the chosen method on data that are
    not in ``design`` (chunked sources, :mod:`dpstats.chunked`)."""
    try:
        return _fit_reserved(design, spec, method, eps, dlt, formula=formula, accountant=accountant, token=token,
                             random_state=random_state, rescale=rescale, options=options, runner=runner)
    except BaseException:
        # refusals before the method ran (method choice, shape, bounds) leave the reservation open: settle zero
        if token is not None and accountant is not None and accountant.is_open(token):
            accountant.settle(token, 0.0, 0.0, status="refused")
        raise


def _fit_reserved(design: Design, spec: MethodSpec | None, method: str, eps: float, dlt: float, *, formula: str,
                  accountant: PrivacyAccountant | None, token: str | None,
                  random_state: "int | np.random.Generator | None", rescale: bool,
                  options: Mapping[str, Any], runner: Callable[..., MethodFit] | None = None) -> DPRegressionResults:
    choice = ""
    if spec is None:
        spec, choice = _choose_method(design, chunked=runner is not None)
        _check_options(spec, options)
    elif method == "auto":
        choice = "epsilon=inf: the non-private reference 'ols' (NOT PRIVATE)"
    if runner is not None and not spec.supports_chunks:
        from dpstats.chunked import unsupported  # noqa: PLC0415

        raise unsupported(spec)
    _check_shape(spec, design)
    data_bounds, scaling = _public_transform(spec, design, rescale)
    intercept_index = design.column_names.index("Intercept") if design.has_intercept else None
    if "intercept_index" in spec.options:
        options = {**options, "intercept_index": intercept_index}
    options = {**options, **{k: v for k, v in _public_ranges(design, scaling).items() if k in spec.options}}

    rng, seeded = make_rng(random_state)
    ledger = PrivacyLedger(eps, dlt if spec.private else 0.0)
    if not spec.private and token is not None:  # auto chose the non-private reference: nothing is spent
        accountant.settle(token, 0.0, 0.0, status="refused")  # type: ignore[union-attr]
        token = None
    try:
        if runner is None:
            X, y = design.X, design.y
            if scaling is not None:
                X, y = scaling.transform(X, y, inplace=True)  # the design arrays are this call's own
            fitted = spec.fit(X, y, ledger=ledger, rng=rng, bounds=data_bounds, **options)
        else:
            fitted = runner(spec, ledger=ledger, rng=rng, bounds=data_bounds, scaling=scaling, options=options)
        params = np.asarray(fitted.params, dtype=float)
        if params.shape != (design.d,) or not np.all(np.isfinite(params)):
            raise DPStatsError(f"method '{spec.name}' produced non-finite coefficients; nothing is returned "
                               "(this is a bug: please report it)")
    except BaseException as exc:
        spent_eps, spent_delta = ledger.spent
        if token is not None:
            accountant.settle(token, spent_eps, spent_delta,  # type: ignore[union-attr]
                              status="failed after spending" if ledger.steps else "refused", method=spec.name)
        if isinstance(exc, DPStatsError) and not hasattr(exc, "privacy_spent"):
            exc.privacy_spent = (spent_eps, spent_delta)  # type: ignore[attr-defined]
        raise
    spent_eps, spent_delta = ledger.spent
    if token is not None:
        accountant.settle(token, spent_eps, spent_delta, method=spec.name)  # type: ignore[union-attr]

    notes = list(fitted.notes)
    cov = fitted.info.get("cov_params")
    bse = None if fitted.bse is None else np.asarray(fitted.bse, dtype=float)
    bse_reason = fitted.bse_unavailable_reason
    draws = None if fitted.draws is None else np.asarray(fitted.draws, dtype=float)
    if scaling is not None:
        params = scaling.params_back(params)
        notes.append("the design and response were centred and scaled to [-1, 1] by the declared bounds (public) "
                     "before fitting; the coefficients were mapped back (post-processing)")
        if draws is not None:
            draws = scaling.draws_back(draws)
        if cov is not None:
            cov = scaling.cov_back(np.asarray(cov, dtype=float))
            bse = np.sqrt(np.diag(cov))
        elif bse is not None and draws is None:
            bse, bse_reason = None, "the method gave standard errors without a covariance matrix to rescale"
    elif spec.raw_units_warning:
        notes.append("WARNING: " + spec.raw_units_warning)
    if draws is not None:
        cov = np.atleast_2d(np.cov(draws, rowvar=False))
        bse = np.sqrt(np.diag(cov))
    withheld = withheld_reason(spec.name, fitted.info, draws, bse) if bse is not None else ""
    report = _report(spec, design, ledger, eps, dlt, choice, seeded, fitted.assumptions, notes,
                     data_bounds is not None, guarantee=fitted.guarantee)
    return DPRegressionResults(
        params=pd.Series(params, index=design.column_names, name="coef"),
        privacy=report,
        error_bounds=error_bounds(spec.name, design.n, design.d, eps, dlt, sparsity=fitted.info.get("sparsity"),
                                  guarantee=fitted.guarantee or spec.guarantee,
                                  inference=bool(options.get("inference", True))),
        nobs=design.n, df_model=design.d - int(design.has_intercept), df_resid=design.n - design.d,
        method=spec.name, formula=formula, response_name=design.response_name, design_info=design.design_info,
        info={k: v for k, v in fitted.info.items() if k != "cov_params"},
        _bse=bse, _bse_reason=bse_reason, _cov=cov, _draws=draws, _withheld=withheld,
        _tdist_df=fitted.info.get("tdist_df"),
    )


def _public_transform(spec: MethodSpec, design: Design, rescale: bool
                      ) -> tuple[DataBounds | None, PublicScaling | None]:
    """The clip ranges the method gets (None if it needs none) and the public rescaling (None if off), both
    from declared bounds only; the clip ranges are those of the rescaled design."""
    data_bounds = design.data_bounds() if spec.needs_bounds else None
    scaling = None
    if rescale and spec.private and not design.missing_bounds:
        intercept_index = design.column_names.index("Intercept") if design.has_intercept else None
        scaling = PublicScaling.from_bounds(design.data_bounds(), intercept_index)
        if data_bounds is not None:
            data_bounds = scaling.transform_bounds(data_bounds)
    return data_bounds, scaling


def _public_ranges(design: Design, scaling: PublicScaling | None) -> dict[str, Any]:
    """The public range of every design column (None where unknown) and of the response, in the units the
    method sees (after the public rescaling, when it was applied).  Factor dummies and the intercept are
    bounded by construction; other columns only when the user declared bounds."""
    columns = [None if iv is None else (iv.lo, iv.hi) for iv in design.column_intervals]
    response = None if design.response_interval is None else (design.response_interval.lo,
                                                               design.response_interval.hi)
    if scaling is not None:
        columns = [None if iv is None else ((iv[0] - c) / s, (iv[1] - c) / s)
                   for iv, c, s in zip(columns, scaling.centre, scaling.scale)]
        if response is not None:
            response = ((response[0] - scaling.y_centre) / scaling.y_scale,
                        (response[1] - scaling.y_centre) / scaling.y_scale)
    return {"column_ranges": columns, "response_range": response}


def _check_epsilon_for_method(spec: MethodSpec, eps: float) -> None:
    if not spec.private and math.isfinite(eps):
        raise InvalidPrivacyParameterError(
            f"method '{spec.name}' is NOT PRIVATE; it runs only with epsilon=float('inf') so that it is never "
            "mistaken for a private fit")
    if spec.private and math.isinf(eps):
        raise InvalidPrivacyParameterError(
            f"epsilon=inf means no privacy; use method='ols' for the non-private reference, or give '{spec.name}' "
            "a finite epsilon")


def _check_options(spec: MethodSpec, options: Mapping[str, Any]) -> None:
    unknown = sorted(set(options) - set(spec.options))
    if unknown:
        accepted = ", ".join(spec.options) or "no options"
        raise MethodOptionError(f"method '{spec.name}' does not accept {', '.join(unknown)}; it accepts {accepted}")


def _check_shape(spec: MethodSpec, design: Design) -> None:
    n, d = design.n, design.d
    if d > n and not spec.allows_wide:
        raise SingularDesignError(
            f"the design has more columns (d={d}) than rows (n={n}), so it is singular by construction; "
            "use fewer terms or a sparse method")
    need = spec.min_rows(d)
    if n < need:
        raise InsufficientDataError(f"method '{spec.name}' needs at least {need} rows for d={d} columns; "
                                    f"the data have n={n}")


def _choose_method(design: Design, chunked: bool = False) -> tuple[MethodSpec, str]:
    """Pick a private method from public facts only: n, d, the declared bounds and the registry (for data read
    in chunks, among the methods that support them)."""
    n, d = design.n, design.d
    has_bounds = not design.missing_bounds
    candidates = []
    for spec in available_methods().values():
        if not spec.private or spec.auto_rank is None or (chunked and not spec.supports_chunks):
            continue
        if spec.needs_bounds and not has_bounds:
            continue
        if (d > n and not spec.allows_wide) or n < (spec.auto_min_rows or spec.min_rows)(d):
            continue
        candidates.append(spec)
    if not candidates:
        if not has_bounds:
            raise MissingBoundsError(
                f"method='auto' found no registered method that fits n={n}, d={d} without data bounds. Declare "
                f"bounds for: {', '.join(design.bounds_to_declare())}, or name a method.")
        raise InsufficientDataError(f"method='auto' found no registered method for n={n}, d={d}")
    spec = min(candidates, key=lambda s: s.auto_rank)  # type: ignore[arg-type,return-value]
    why = ("bounds were declared for every column" if has_bounds and spec.needs_bounds
           else "not every column has declared bounds" if not has_bounds else "bounds were declared")
    return spec, (f"auto chose '{spec.name}' from public facts: n={n}, d={d}, {why}; {spec.regimes}")


def _report(spec: MethodSpec, design: Design, ledger: PrivacyLedger, eps: float, dlt: float, choice: str,
            seeded: bool, assumptions: Sequence[str], notes: Sequence[str], clipped: bool,
            guarantee: str | None = None) -> PrivacyReport:
    spent_eps, spent_delta = ledger.spent
    all_notes = list(design.notes)
    if clipped:
        all_notes.append("design columns and the response were clipped to the declared bounds inside the fit "
                         "(how many rows were clipped is private and not reported)")
    all_notes += list(notes)
    composition = ("exact GDP composition of Gaussian releases" if all(s.mechanism == "gaussian" for s in ledger.steps)
                   else "tightest of basic, GDP and PLD composition")
    kind = guarantee or spec.guarantee  # a fit may override its method's guarantee (an opt-in 'conditional')
    return PrivacyReport(
        method=spec.name, private=spec.private,
        epsilon_requested=eps if spec.private else math.inf, delta_requested=dlt if spec.private else 0.0,
        epsilon_spent=spent_eps if spec.private else math.inf, delta_spent=spent_delta if spec.private else 1.0,
        steps=tuple(ledger.steps), relation=_RELATIONS.get(spec.relation, spec.relation),
        guarantee=_GUARANTEES.get(kind, kind), composition=composition, n=design.n,
        assumptions=tuple(assumptions), notes=tuple(all_notes), method_choice=choice, seeded=seeded,
    )
