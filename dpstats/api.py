"""``dp_ols``: formula + data + budget -> a privately fitted regression.

The call is a fixed pipeline: validate the public arguments -> build the public
design -> choose the method from public facts -> reserve the budget -> fit ->
wrap the results.  Every refusal before the fit spends nothing; a method that
fails after releasing something (a PTR refusal) still has its spend settled in
the accountant.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from dpstats.errors import (
    DPStatsError, FormulaError, InsufficientDataError, InternalFitError, InvalidArgumentError,
    InvalidPrivacyParameterError, MethodOptionError, MissingBoundsError, SettlementError, SingularDesignError,
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
    eval_env: Any = None,
    **options: Any,
) -> DPRegressionResults:
    """Fit a linear regression with differential privacy from an R-style formula.

    Parameters
    ----------
    formula:
        patsy formula, e.g. ``"np.log(price) ~ log(carat) + C(cut, levels=['Fair', 'Good'])"``.
        Factor levels must be public (declared in the formula, in ``levels=``
        or by a pandas Categorical dtype).  Factor code is limited to row-wise
        operations (:mod:`dpstats.formula_language`: arithmetic, comparisons,
        log/exp/sqrt/abs and the other elementwise functions, ``poly(x, k)``
        as raw powers, splines with literal knots and bounds), checked before
        any data are read; ``y ~ .`` stands for every other column.
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
        ``"raise"`` (default: a missing value in a variable the formula uses
        is refused) or ``"drop"``: each incomplete row becomes a public null
        row (zero design row and response, after clipping) that adds nothing
        to what the method releases, so n stays public and the number of
        complete rows stays private (see ``docs/privacy.md``).  Supported by
        the methods whose releases are sums over rows (``ssp``, ``adassp``,
        ``noisy_ols``, ``lasso``, ``dpsgd``; ``method="auto"`` chooses among
        them); the non-private ``ols`` drops the rows.
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
        Deprecated and ignored (a ``DeprecationWarning`` says so): formulas
        are evaluated in dpstats's own namespace of row-wise functions
        (:mod:`dpstats.formula_language`), never in the caller's, so the
        formula cannot call code that reads across rows.
    **options:
        Method-specific options (e.g. ``rho=`` for adassp).

    Returns
    -------
    DPRegressionResults
    """
    eps, dlt = check_privacy_parameters(epsilon, delta)
    spec = resolve_method(method, eps, options)
    if eval_env is not None:
        warnings.warn("dp_ols(eval_env=...) is deprecated and ignored: formulas are evaluated in dpstats's own "
                      "namespace of row-wise functions (see dpstats.formula_language), never in the caller's",
                      DeprecationWarning, stacklevel=2)
    mode = missing_mode(missing, spec)
    # the budget is reserved before the data are touched: an over-budget fit is refused on public facts only
    private = spec.private if spec is not None else True
    token = reserve(accountant, eps, dlt, f"{method}: {formula}") if private else None
    if chunksize is not None or is_chunked_data(data):
        from dpstats.chunked import fit_chunked  # noqa: PLC0415

        try:
            return fit_chunked(formula, data, eps, dlt, spec=spec, method=method, bounds=bounds, levels=levels,
                               missing=mode, allow_data_levels=allow_data_levels, rescale=rescale,
                               accountant=accountant, token=token, random_state=random_state, options=options,
                               chunksize=chunksize)
        except BaseException as exc:  # noqa: BLE001 - concluded below: settled, typed, chain cut
            failure = conclude(exc, accountant, token)
        raise failure
    try:
        design = build_design(formula, data, bounds=bounds, levels=levels, missing=mode,
                              allow_data_levels=allow_data_levels)
    except BaseException as exc:  # noqa: BLE001 - concluded below: settled, typed, chain cut
        failure = conclude(exc, accountant, token, stage="building the design from the data")
    else:
        return _fit_design(design, spec, method, eps, dlt, formula=formula, accountant=accountant, token=token,
                           random_state=random_state, rescale=rescale, options=options)
    raise failure


def missing_mode(missing: str, spec: MethodSpec | None) -> str:
    """How the formula layer treats rows with missing values, decided from public facts (the option, the method).

    ``missing="drop"`` keeps n public: each incomplete row becomes a public
    null row (``"null"``) that adds nothing to what the method releases,
    for the methods whose releases are sums of terms that vanish at a zero
    row (:attr:`~dpstats.methods.registry.MethodSpec.null_rows`); the
    non-private reference ``ols`` drops the rows (``"drop"``).  Other methods
    refuse ``missing="drop"`` before any data are read.
    """
    if missing not in {"raise", "drop"}:
        raise FormulaError("missing must be 'raise' (default) or 'drop'")
    if missing == "raise":
        return "raise"
    if spec is not None and not spec.private:
        return "drop"
    if spec is not None and not spec.null_rows:
        able = sorted(n for n, s in available_methods().items() if s.private and s.null_rows)
        raise InvalidArgumentError(
            f"method '{spec.name}' cannot take missing='drop': it centres or standardises rows itself, so the public "
            "null row that stands for an incomplete row would become a data point. Impute the missing values with "
            f"a public rule, or use one of {', '.join(able)}. Nothing was read or spent.")
    return "null"


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


class _FitState:
    """What the handler of a failed fit must know: the ledger once the method has started (None before), and
    the method's name."""

    def __init__(self) -> None:
        self.ledger: PrivacyLedger | None = None
        self.method: str | None = None
        self.private = True


def _fit_design(design: Design, spec: MethodSpec | None, method: str, eps: float, dlt: float, *, formula: str,
                accountant: PrivacyAccountant | None, random_state: "int | np.random.Generator | None",
                rescale: bool, options: Mapping[str, Any], token: str | None = None,
                runner: Callable[..., MethodFit] | None = None) -> DPRegressionResults:
    """The pipeline once the public design is built, shared by :func:`dp_ols` and
    :func:`dpstats.api_arrays.dp_ols_arrays`: choose the method (``spec=None``
    means auto), fit, map back, wrap the results.  ``token`` is the caller's
    reservation in ``accountant`` (the caller reserves before touching the
    data); every exit settles it with what the ledger spent (:func:`conclude`
    on failure).  ``runner`` fits the chosen method on data that are not in
    ``design`` (chunked sources, :mod:`dpstats.chunked`)."""
    state = _FitState()
    try:
        result = _fit_reserved(design, spec, method, eps, dlt, formula=formula, accountant=accountant,
                               random_state=random_state, rescale=rescale, options=options, runner=runner,
                               state=state)
        if token is not None and accountant is not None and state.ledger is not None:
            if state.private:
                _settle(accountant, token, state.ledger.spent, "released", state.method)
            else:  # auto chose the non-private reference: nothing is spent
                _settle(accountant, token, (0.0, 0.0), "refused", state.method)
    except BaseException as exc:  # noqa: BLE001 - concluded below: settled, typed, chain cut
        failure = conclude(exc, accountant, token, state=state)
    else:
        return result
    raise failure


def _settle(accountant: PrivacyAccountant, token: str, spent: tuple[float, float], status: str,
            method: str | None) -> None:
    """Settle ``token``; if the accountant fails, leave the reservation held in full (conservative) and raise
    :class:`~dpstats.errors.SettlementError` (or the interrupt), carrying no released value."""
    try:
        accountant.settle(token, spent[0], spent[1], status=status, method=method)
        return
    except BaseException as exc:  # noqa: BLE001 - any failure keeps the reservation held
        failure = _settlement_failure(exc, spent)
    raise failure


def _settlement_failure(exc: BaseException, spent: tuple[float, float]) -> BaseException:
    """What a failed settle raises: an interrupt as itself, anything else as a SettlementError; chain cut."""
    _cut_chain(exc)
    if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: the caller's own interruption
        exc._dpstats_concluded = True  # type: ignore[attr-defined]
        return exc
    why = f"{type(exc).__name__}: {exc}" if isinstance(exc, DPStatsError) else type(exc).__name__
    err = SettlementError(
        f"the accountant could not record this fit's spend ({why}); its reservation stays held in full, which "
        "counts the whole reserved budget as spent until a custodian settles it. The fit's result is withheld.",
        privacy_spent=spent)
    err._dpstats_concluded = True  # type: ignore[attr-defined]
    return err


def _cut_chain(exc: BaseException) -> None:
    """Drop an exception's cause and context: they may carry data values or released values."""
    exc.__cause__ = None
    exc.__context__ = None
    exc.__suppress_context__ = True


def conclude(exc: BaseException, accountant: PrivacyAccountant | None, token: str | None, *,
             state: _FitState | None = None, stage: str = "fitting") -> BaseException:
    """The exception a failed fit raises, after settling its reservation; call it in the handler, raise its
    result outside the handler (so that the original is not the new one's context).

    * The reservation is settled with what the ledger charged (zero before
      the method ran), as "failed after spending" or "refused".  If the
      settle itself fails, the reservation stays held in full and that
      failure is raised instead (:class:`~dpstats.errors.SettlementError`).
    * A dpstats error keeps its (public) message and gains ``privacy_spent``;
      any other exception becomes :class:`~dpstats.errors.InternalFitError`,
      whose message names the stage and the original type only (the original
      message may quote data values).  Interrupts (``KeyboardInterrupt``) are
      re-raised as they are.
    * The chain (``__cause__``, ``__context__``) is cut in every case.

    An exception that was already concluded (by an inner call) is returned
    unchanged.
    """
    if getattr(exc, "_dpstats_concluded", False):
        return exc
    ledger = state.ledger if state is not None else None
    spent = ledger.spent if ledger is not None else (0.0, 0.0)
    if token is not None and accountant is not None and accountant.is_open(token):
        status = "failed after spending" if ledger is not None and ledger.steps else "refused"
        try:
            _settle(accountant, token, spent, status, state.method if state is not None else None)
        except BaseException as settle_failure:  # noqa: BLE001 - raised instead of the fit's own failure
            _cut_chain(settle_failure)  # raised while the fit's failure was handled: that is its context
            return settle_failure
    _cut_chain(exc)
    if isinstance(exc, DPStatsError):
        if not hasattr(exc, "privacy_spent"):
            exc.privacy_spent = spent  # type: ignore[attr-defined]
        out: BaseException = exc
    elif isinstance(exc, Exception):
        out = InternalFitError(
            f"{stage} failed with {type(exc).__name__}; its message is withheld because it may quote data values. "
            f"The fit spent epsilon={spent[0]:g}, delta={spent[1]:g} (privacy_spent; an accountant, if given, was "
            "settled with it).",
            privacy_spent=spent, original_type=type(exc).__name__)
    else:
        out = exc
    out._dpstats_concluded = True  # type: ignore[attr-defined]
    return out


def _fit_reserved(design: Design, spec: MethodSpec | None, method: str, eps: float, dlt: float, *, formula: str,
                  accountant: PrivacyAccountant | None, random_state: "int | np.random.Generator | None",
                  rescale: bool, options: Mapping[str, Any], state: _FitState,
                  runner: Callable[..., MethodFit] | None = None) -> DPRegressionResults:
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
    state.ledger, state.method, state.private = ledger, spec.name, spec.private
    if runner is None:
        X, y = design.X, design.y
        if scaling is not None:
            X, y = scaling.transform(X, y, inplace=True)  # the design arrays are this call's own
        if design.null_rows and data_bounds is None:
            from dpstats.chunked import zero_null_rows  # noqa: PLC0415

            zero_null_rows(X, y)  # a method without clip ranges gets the null rows as zero rows
        fitted = spec.fit(X, y, ledger=ledger, rng=rng, bounds=data_bounds, **options)
    else:
        fitted = runner(spec, ledger=ledger, rng=rng, bounds=data_bounds, scaling=scaling, options=options)
    params = np.asarray(fitted.params, dtype=float)
    if params.shape != (design.d,) or not np.all(np.isfinite(params)):
        raise DPStatsError(f"method '{spec.name}' produced non-finite coefficients; nothing is returned "
                           "(this is a bug: please report it)")

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
            data_bounds = replace(scaling.transform_bounds(data_bounds), null_rows=data_bounds.null_rows)
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
        if design.null_rows and not spec.null_rows:
            continue
        if spec.needs_bounds and not has_bounds:
            continue
        if (d > n and not spec.allows_wide) or n < (spec.auto_min_rows or spec.min_rows)(d):
            continue
        candidates.append(spec)
    if not candidates:
        if not has_bounds:
            drop = (" (with missing='drop', only methods that keep a null row inert qualify; among those without "
                    "bounds, name one, e.g. method='dpsgd')") if design.null_rows else ""
            raise MissingBoundsError(
                f"method='auto' found no registered method that fits n={n}, d={d} without data bounds{drop}. Declare "
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
