"""The one fit pipeline, for every kind of data: formula + DataFrame, formula + files or Dask, and arrays.

:func:`run` takes a :class:`FitRequest` (built by :mod:`dpstats.api` from the
public arguments) and goes through the same steps whatever the data:

1. check the privacy parameters; resolve the method and validate its
   options (public facts; a refusal spends nothing);
2. reserve the budget in the accountant, before the data are touched;
3. build the public design: from the frame (:func:`~dpstats.formula.build_design`),
   from the schema of a source (:func:`~dpstats.formula.public_design`; no row
   is read), or from arrays (:func:`~dpstats.api_arrays.array_design`);
4. ``method="auto"`` chooses from public facts (n, d, declared bounds, the
   registry);
5. public shape checks (d > n, the method's minimum n);
6. public rescaling and clip ranges, from declared bounds only;
7. the rows: :class:`~dpstats.rows.memory.InMemoryRows` (the whole design is
   one chunk) or :class:`~dpstats.rows.chunked.ChunkedRows`; on a source, n
   comes from a one-pass method's first pass (read once), else from the
   source's metadata or a counting pass;
8. the :class:`~dpstats.methods.registry.FitContext` (public facts, the
   fit's ledger and random source) and ``spec.fit(rows, ctx, options)``;
9. the guard: any exception after the data were touched settles the
   accountant with what the ledger spent and carries ``privacy_spent``; one
   that is not a :class:`~dpstats.errors.DPStatsError` becomes a
   :class:`~dpstats.errors.MethodFailureError` whose message and type say
   nothing about the data; coefficients that are not finite are refused;
10. the results: coefficients (and inference) mapped back through the public
    rescaling, the privacy report, the theory summary.

No module imports this one except :mod:`dpstats.api`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import patsy

from dpstats.api_arrays import array_design, describe_arrays
from dpstats.bounds import DataBounds
from dpstats.errors import (
    DPStatsError,
    InsufficientDataError,
    InvalidPrivacyParameterError,
    MethodFailureError,
    MissingBoundsError,
    SingularDesignError,
)
from dpstats.formula import Design, build_design, public_design
from dpstats.inference import withholding_reason
from dpstats.methods import available_methods, get_method
from dpstats.methods.registry import FitContext, Inference, MethodFit, MethodOptions, MethodSpec
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import make_rng
from dpstats.privacy.report import PrivacyReport
from dpstats.results import DPRegressionResults
from dpstats.rows.base import Rows
from dpstats.rows.chunked import ChunkedRows, ChunkEvaluator, formula_levels, formula_namespace
from dpstats.rows.memory import InMemoryRows
from dpstats.rows.sources import as_source
from dpstats.scaling import PublicScaling
from dpstats.theory import error_bounds
from dpstats.validation import check_privacy_parameters

__all__ = ["FitRequest", "FrameData", "SourceData", "ArrayData", "run", "resolve_method"]

T = TypeVar("T")

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


# -- what the pipeline is asked to fit --------------------------------------------------------------------------

@dataclass(frozen=True)
class FrameData:
    """A formula on a pandas DataFrame (or a dict of arrays) in memory."""

    formula: str
    data: Any
    eval_env: patsy.EvalEnvironment
    bounds: Mapping[str, tuple[float, float]] | None = None
    levels: Mapping[str, Sequence[Any]] | None = None
    missing: str = "raise"
    allow_data_levels: bool = False

    @property
    def label(self) -> str:
        return self.formula

    def prepare(self, spec: MethodSpec | None) -> _MemoryData:
        clip = spec.needs_bounds if spec is not None else bool(self.bounds)
        design = build_design(self.formula, self.data, eval_env=self.eval_env, bounds=self.bounds,
                              levels=self.levels, missing=self.missing, allow_data_levels=self.allow_data_levels,
                              clip_variables=clip)
        return _MemoryData(design, self.formula)


@dataclass(frozen=True)
class SourceData(FrameData):
    """A formula on data read chunk by chunk: files, a Dask DataFrame, a source, or a DataFrame in chunks."""

    chunksize: int | None = None

    def prepare(self, spec: MethodSpec | None) -> _ChunkedData:  # type: ignore[override]
        source = as_source(self.data, self.chunksize)
        schema = source.schema()
        clip = spec.needs_bounds if spec is not None else bool(self.bounds)
        design, plan, proto = public_design(self.formula, schema, eval_env=self.eval_env, bounds=self.bounds,
                                            levels=formula_levels(schema, self.formula, self.levels),
                                            missing=self.missing, allow_data_levels=self.allow_data_levels,
                                            clip_variables=clip)
        columns = set(map(str, schema.columns))
        evaluator = ChunkEvaluator(self.formula, formula_namespace(design, self.eval_env, columns), plan, proto,
                                   design.column_names, design.response_name,
                                   infos=(design.response_info, design.design_info))
        design.notes.append(f"data read in chunks from {source.describe()}; every chunk was evaluated with the "
                            "public design built from the schema, and the method used aggregates of the chunks")
        return _ChunkedData(design, self.formula, ChunkedRows(source, evaluator, None))


@dataclass(frozen=True)
class ArrayData:
    """X (n x d) and y as arrays (:func:`dpstats.dp_ols_arrays`)."""

    X: Any
    y: Any
    x_bounds: Any = None
    y_bounds: tuple[float, float] | None = None
    column_names: Sequence[str] | None = None
    response_name: str = "y"
    intercept: bool = False

    @property
    def label(self) -> str:
        return "arrays"

    def prepare(self, spec: MethodSpec | None) -> _MemoryData:
        design = array_design(self.X, self.y, x_bounds=self.x_bounds, y_bounds=self.y_bounds,
                              column_names=self.column_names, response_name=self.response_name,
                              intercept=self.intercept, spec=spec)
        return _MemoryData(design, describe_arrays(self.response_name, design.column_names))


@dataclass(frozen=True)
class FitRequest:
    """One call of :func:`dpstats.dp_ols` or :func:`dpstats.dp_ols_arrays`, as given (validated by :func:`run`)."""

    data: FrameData | ArrayData
    epsilon: Any
    delta: Any
    method: str = "auto"
    options: Mapping[str, Any] = field(default_factory=dict)
    accountant: PrivacyAccountant | None = None
    random_state: Any = None
    rescale: bool = True


# -- the data once the public design is built -------------------------------------------------------------------

class _MemoryData:
    """A design whose arrays are in memory (the call's own): one chunk."""

    def __init__(self, design: Design, formula: str) -> None:
        self.design, self.formula = design, formula

    def known_n(self, spec: MethodSpec) -> int | None:
        return self.design.n

    def count(self) -> int:
        return self.design.n

    def learn_n(self, spec: MethodSpec, bounds: DataBounds | None, scaling: PublicScaling | None,
                options: MethodOptions) -> int:
        return self.design.n

    def rows(self, scaling: PublicScaling | None) -> InMemoryRows:
        X, y = self.design.X, self.design.y
        if scaling is not None:
            X, y = scaling.transform(X, y, inplace=True)  # the design arrays are this call's own
        return InMemoryRows(X, y)

    def note(self, rows: Rows) -> str:
        return ""


class _ChunkedData:
    """A design built from the schema; the rows stay in the source and are read by passes."""

    def __init__(self, design: Design, formula: str, rows: ChunkedRows) -> None:
        self.design, self.formula, self._rows = design, formula, rows

    def known_n(self, spec: MethodSpec) -> int | None:
        """n when it is fixed already or, for a method without a first pass, when the source's metadata give it
        without reading (a one-pass method's pass counts the rows anyway)."""
        if spec.first_pass is not None and not self._rows.counted:
            return None
        return self._rows.free_count()

    def count(self) -> int:
        return self._rows.count()

    def learn_n(self, spec: MethodSpec, bounds: DataBounds | None, scaling: PublicScaling | None,
                options: MethodOptions) -> int:
        """Read n: by the method's first pass when it has one (the data are then read once), else by counting."""
        if spec.first_pass is None:
            return self._rows.count()
        self._rows.scaling = scaling
        return self._rows.prime(*spec.first_pass(bounds, options))

    def rows(self, scaling: PublicScaling | None) -> ChunkedRows:
        self._rows.scaling = scaling
        return self._rows

    def note(self, rows: Rows) -> str:
        passes = self._rows.passes
        return f"data read in chunks ({passes} pass{'es' if passes != 1 else ''} over the data, counting included)"


# -- the steps --------------------------------------------------------------------------------------------------

def run(request: FitRequest) -> DPRegressionResults:
    """Fit ``request`` (module docstring).  Every exit settles the accountant's reservation."""
    eps, dlt = check_privacy_parameters(request.epsilon, request.delta)
    spec = resolve_method(request.method, eps)
    options = spec.parse_options(request.options, delta=dlt) if spec is not None else None
    accountant = request.accountant
    private = spec.private if spec is not None else True
    # the budget is reserved before the data are touched: an over-budget fit is refused on public facts only
    token = (accountant.reserve(eps, dlt, label=f"{request.method}: {request.data.label}")
             if accountant is not None and private else None)
    try:
        return _run_reserved(request, spec, options, eps, dlt, token)
    except BaseException:
        # refusals before the method ran (design, method choice, shape, bounds) leave the reservation open
        if token is not None and accountant is not None and accountant.is_open(token):
            accountant.settle(token, 0.0, 0.0, status="refused")
        raise


def _run_reserved(request: FitRequest, spec: MethodSpec | None, options: MethodOptions | None, eps: float,
                  dlt: float, token: str | None) -> DPRegressionResults:
    data = request.data.prepare(spec)
    spec, options, choice = _method(data, spec, options, request, dlt)
    bounds, scaling, n = _public_facts(data, spec, options, request.rescale)
    rows = data.rows(scaling)
    rng, seeded = make_rng(request.random_state)
    ctx = _context(data.design, n, PrivacyLedger(eps, dlt if spec.private else 0.0), rng, bounds, scaling)
    fitted = _guarded_fit(spec, rows, ctx, options, request.accountant, token)
    note = data.note(rows)
    fitted = dataclasses.replace(fitted, notes=(*fitted.notes, note) if note else fitted.notes,
                                 passes=int(getattr(rows, "passes", 1)))
    return _results(spec, data.design, n, fitted, ctx.ledger, eps, dlt, choice=choice, seeded=seeded,
                    scaling=scaling, clipped=bounds is not None, formula=data.formula)


def _method(data: _MemoryData | _ChunkedData, spec: MethodSpec | None, options: MethodOptions | None,
            request: FitRequest, dlt: float) -> tuple[MethodSpec, MethodOptions, str]:
    """The method, its options and why it was chosen: ``method="auto"`` decides here, from public facts."""
    if spec is None:
        n = _guarded_read("auto", data.count)
        spec, choice = _choose_method(data.design, n)
        return spec, spec.parse_options(request.options, delta=dlt), choice
    choice = "epsilon=inf: the non-private reference 'ols' (NOT PRIVATE)" if request.method == "auto" else ""
    assert options is not None  # parsed with the named method
    return spec, options, choice


def _public_facts(data: _MemoryData | _ChunkedData, spec: MethodSpec, options: MethodOptions, rescale: bool
                  ) -> tuple[DataBounds | None, PublicScaling | None, int]:
    """The clip ranges, the public rescaling and n, with n checked against the method's public requirements
    before anything is released.  n is known (in memory, or from a source's metadata), or read by the method's
    first pass or a counting pass once the bounds are known (a refusal for missing bounds reads nothing)."""
    n = data.known_n(spec)
    if n is not None:
        _check_shape(spec, n, data.design.d)
    bounds, scaling = _public_transform(spec, data.design, rescale)
    if n is None:
        n = _guarded_read(spec.name, lambda: data.learn_n(spec, bounds, scaling, options))
        _check_shape(spec, n, data.design.d)
    return bounds, scaling, n


def _context(design: Design, n: int, ledger: PrivacyLedger, rng: np.random.Generator, bounds: DataBounds | None,
             scaling: PublicScaling | None) -> FitContext:
    """The method's context, from public facts only (and the fit's ledger and random source)."""
    return FitContext(n=n, d=design.d, ledger=ledger, rng=rng,
                      intercept_index=design.column_names.index("Intercept") if design.has_intercept else None,
                      bounds=bounds, rescaled=scaling is not None, **_public_ranges(design, scaling))


def resolve_method(method: str, eps: float) -> MethodSpec | None:
    """The named method checked against epsilon (public facts only); None means auto.

    ``method="auto"`` with epsilon = inf resolves to the non-private reference ``ols``.
    """
    spec = None if method == "auto" else get_method(method)
    if spec is not None:
        _check_epsilon_for_method(spec, eps)
    elif math.isinf(eps):
        spec = get_method("ols")
    return spec


def _check_epsilon_for_method(spec: MethodSpec, eps: float) -> None:
    if not spec.private and math.isfinite(eps):
        raise InvalidPrivacyParameterError(
            f"method '{spec.name}' is NOT PRIVATE; it runs only with epsilon=float('inf') so that it is never "
            "mistaken for a private fit")
    if spec.private and math.isinf(eps):
        raise InvalidPrivacyParameterError(
            f"epsilon=inf means no privacy; use method='ols' for the non-private reference, or give '{spec.name}' "
            "a finite epsilon")


def _choose_method(design: Design, n: int) -> tuple[MethodSpec, str]:
    """Pick a private method from public facts only: n, d, the declared bounds and the registry."""
    d = design.d
    has_bounds = not design.missing_bounds
    candidates = []
    for spec in available_methods().values():
        if not spec.private or spec.auto_rank is None:
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


def _check_shape(spec: MethodSpec, n: int, d: int) -> None:
    if d > n and not spec.allows_wide:
        raise SingularDesignError(
            f"the design has more columns (d={d}) than rows (n={n}), so it is singular by construction; "
            "use fewer terms or a sparse method")
    need = spec.min_rows(d)
    if n < need:
        raise InsufficientDataError(f"method '{spec.name}' needs at least {need} rows for d={d} columns; "
                                    f"the data have n={n}")


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
                   for iv, c, s in zip(columns, scaling.centre, scaling.scale, strict=True)]
        if response is not None:
            response = ((response[0] - scaling.y_centre) / scaling.y_scale,
                        (response[1] - scaling.y_centre) / scaling.y_scale)
    return {"column_ranges": tuple(columns), "response_range": response}


# -- the guard --------------------------------------------------------------------------------------------------

def _failure(method: str, spent: tuple[float, float]) -> MethodFailureError:
    return MethodFailureError(
        f"method '{method}' failed after the data were read, for a reason that is not reported because it may "
        f"depend on the data values. The fit spent epsilon={spent[0]:.4g}, delta={spent[1]:.3g} of its budget "
        "(charged to the accountant, if any); nothing else was released. This is a bug in dpstats: please "
        "report it with the public facts of the call (method, options, n, d).", privacy_spent=spent)


def _guarded_read(method: str, read: Callable[[], T]) -> T:
    """A pass that reads the data before anything is spent (counting the rows): an untyped error becomes a
    :class:`~dpstats.errors.MethodFailureError` (nothing spent)."""
    try:
        return read()
    except DPStatsError:
        raise
    except Exception:
        pass
    # raised outside the handler, so that the original error is not attached as its context
    raise _failure(method, (0.0, 0.0))


def _guarded_fit(spec: MethodSpec, rows: Rows, ctx: FitContext, options: MethodOptions,
                 accountant: PrivacyAccountant | None, token: str | None) -> MethodFit:
    """``spec.fit`` with the guard (module docstring, step 9); settles the reservation on every exit."""
    ledger = ctx.ledger
    failed = False
    try:
        fitted = spec.fit(rows, ctx, options)
        params = np.asarray(fitted.params, dtype=float)
        if params.shape != (ctx.d,) or not np.all(np.isfinite(params)):
            raise MethodFailureError(f"method '{spec.name}' produced non-finite coefficients; nothing is returned "
                                     "(this is a bug: please report it)", privacy_spent=ledger.spent)
    except BaseException as exc:
        spent = ledger.spent
        if token is not None:
            accountant.settle(token, spent[0], spent[1],  # type: ignore[union-attr]
                              status="failed after spending" if ledger.steps else "refused", method=spec.name)
        if isinstance(exc, DPStatsError):
            if not hasattr(exc, "privacy_spent"):
                exc.privacy_spent = spent  # type: ignore[attr-defined]
            raise
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: settled above, then re-raised
            raise
        failed = True
    if failed:  # raised outside the handler, so that the original error is not attached as its context
        raise _failure(spec.name, ledger.spent)
    spent = ledger.spent
    if token is not None:
        accountant.settle(token, spent[0], spent[1], method=spec.name)  # type: ignore[union-attr]
    return fitted


# -- the results ------------------------------------------------------------------------------------------------

def _inference_back(inference: Inference, scaling: PublicScaling) -> Inference:
    """The inference of coefficients fitted on the rescaled design, in the user's units (post-processing)."""
    if inference.draws is not None:
        return dataclasses.replace(inference, draws=scaling.draws_back(inference.draws))
    return dataclasses.replace(inference, cov=scaling.cov_back(np.asarray(inference.cov, dtype=float)))


def _results(spec: MethodSpec, design: Design, n: int, fitted: MethodFit, ledger: PrivacyLedger, eps: float,
             dlt: float, *, choice: str, seeded: bool, scaling: PublicScaling | None, clipped: bool,
             formula: str) -> DPRegressionResults:
    params = np.asarray(fitted.params, dtype=float)
    notes = list(fitted.notes)
    inference = fitted.inference
    if scaling is not None:
        params = scaling.params_back(params)
        notes.append("the design and response were centred and scaled to [-1, 1] by the declared bounds (public) "
                     "before fitting; the coefficients were mapped back (post-processing)")
        if inference is not None:
            inference = _inference_back(inference, scaling)
    elif spec.raw_units_warning:
        notes.append("WARNING: " + spec.raw_units_warning)
    withheld = "" if inference is None else withholding_reason(
        spec.name, inference.noise_to_signal, spec.inference_rule.withhold_above, inference.draws, inference.bse)
    guarantee = fitted.guarantee or spec.guarantee
    report = _report(spec, design, n, ledger, eps, dlt, choice, seeded, fitted.assumptions, notes, clipped,
                     guarantee=guarantee)
    theory = fitted.theory_inputs
    return DPRegressionResults(
        params=pd.Series(params, index=design.column_names, name="coef"),
        privacy=report,
        error_bounds=error_bounds(spec, n, design.d, eps, dlt, sparsity=theory.sparsity, guarantee=guarantee,
                                  inference=theory.inference),
        nobs=n, df_model=design.d - int(design.has_intercept), df_resid=n - design.d,
        method=spec.name, formula=formula, response_name=design.response_name, design_info=design.design_info,
        info=dict(fitted.diagnostics), _inference=inference, _bse_reason=fitted.no_inference_reason,
        _withheld=withheld, _rsquared=fitted.rsquared,
    )


def _report(spec: MethodSpec, design: Design, n: int, ledger: PrivacyLedger, eps: float, dlt: float, choice: str,
            seeded: bool, assumptions: Sequence[str], notes: Sequence[str], clipped: bool,
            guarantee: str) -> PrivacyReport:
    spent_eps, spent_delta = ledger.spent
    all_notes = list(design.notes)
    if clipped:
        all_notes.append("design columns and the response were clipped to the declared bounds inside the fit "
                         "(how many rows were clipped is private and not reported)")
    all_notes += list(notes)
    composition = ("exact GDP composition of Gaussian releases" if all(s.mechanism == "gaussian" for s in ledger.steps)
                   else "tightest of basic, GDP and PLD composition")
    return PrivacyReport(
        method=spec.name, private=spec.private,
        epsilon_requested=eps if spec.private else math.inf, delta_requested=dlt if spec.private else 0.0,
        epsilon_spent=spent_eps if spec.private else math.inf, delta_spent=spent_delta if spec.private else 1.0,
        steps=tuple(ledger.steps), relation=_RELATIONS.get(spec.relation, spec.relation),
        guarantee=_GUARANTEES.get(guarantee, guarantee), composition=composition, n=n,
        assumptions=tuple(assumptions), notes=tuple(all_notes), method_choice=choice, seeded=seeded,
    )
