"""The one fit pipeline, for every kind of data: formula + DataFrame, formula + files or Dask, and arrays.

:func:`run` takes a :class:`FitRequest` (built by :mod:`dpstats.api` from the
public arguments) and goes through the same steps whatever the data:

1. check the privacy parameters; resolve the method and validate its
   options and ``missing=`` (public facts; a refusal spends nothing);
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
9. the results: coefficients (and inference) mapped back through the public
   rescaling, the privacy report, the theory summary; the accountant is
   settled with what the ledger spent.

The guard (:func:`conclude`): any exception once the budget is reserved
settles the reservation with what the ledger spent (zero before the method
ran) and carries ``privacy_spent``; one that is not a
:class:`~dpstats.errors.DPStatsError` becomes an
:class:`~dpstats.errors.InternalFitError` naming the stage and the original
type only, charged the fit's whole budget (no rule decided it, so it may
depend on the rows read); the exception chain is cut (it may hold data or released values).
If the accountant cannot settle, the reservation stays held in full and a
:class:`~dpstats.errors.SettlementError` is raised instead.  Coefficients that
are not finite are refused.

No module imports this one except :mod:`dpstats.api`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpstats.api_arrays import array_design, describe_arrays
from dpstats.bounds import DataBounds, column_values, declared_interval
from dpstats.errors import (
    DPStatsError,
    FloatIndicatorWarning,
    FormulaError,
    InsufficientDataError,
    InternalFitError,
    InvalidArgumentError,
    InvalidPrivacyParameterError,
    LargeDeltaWarning,
    MissingBoundsError,
    MissingValuesWarning,
    SettlementError,
    SingularDesignError,
    UncentredColumnsWarning,
    UnknownMethodError,
    UnscaledFitWarning,
)
from dpstats.formula import Design, build_design, public_design
from dpstats.formula.centring import intercept_model
from dpstats.inference import withholding_reason
from dpstats.methods.common.extremes import QUIET
from dpstats.methods.registry import (
    AutoFacts,
    ErrorSplit,
    FitContext,
    Inference,
    MethodFit,
    MethodOptions,
    MethodSpec,
    available_methods,
    choose_auto,
    get_method,
)
from dpstats.numbers import typed_columns
from dpstats.privacy.accountant import SEEDED_MARK, PrivacyAccountant
from dpstats.privacy.ledger import PrivacyLedger, PrivacyStep
from dpstats.privacy.mechanisms import make_rng
from dpstats.privacy.missing_screen import MissingValueScreen, ScreenOutcome, fit_epsilon, requested_epsilon
from dpstats.privacy.report import PrivacyReport
from dpstats.results import DPRegressionResults
from dpstats.rows.base import Rows
from dpstats.rows.chunked import ChunkedRows, ChunkEvaluator, formula_levels, text_level_columns, zero_null_rows
from dpstats.rows.memory import InMemoryRows
from dpstats.rows.sources import as_source
from dpstats.scaling import PublicScaling
from dpstats.theory import ErrorBounds, error_bounds, with_coefficients
from dpstats.validation import DEFAULT_RESCALE, check_privacy_parameters, check_rescale

__all__ = ["FitRequest", "FrameData", "SourceData", "ArrayData", "run", "resolve_method", "missing_mode",
           "conclude"]

_RELATIONS = {
    "replace-one": "replace-one neighbours: data sets differ in the values of one row",
    "add/remove": "add/remove neighbours: data sets differ by one row",
    "none": "no privacy",
}
_WORST_CASE = "worst-case (epsilon, delta)-DP: holds for every data set"
_GUARANTEES = {
    "worst-case": f"{_WORST_CASE}, given the declared bounds",
    "conditional": "CONDITIONAL: holds only with high probability under the method's distributional assumptions",
    "none": "none (NOT PRIVATE)",
}


# -- what the pipeline is asked to fit --------------------------------------------------------------------------

@dataclass(frozen=True)
class FrameData:
    """A formula on a pandas DataFrame (or a dict of arrays) in memory."""

    formula: str
    data: Any
    bounds: Mapping[str, tuple[float, float]] | None = None
    levels: Mapping[str, Sequence[Any]] | None = None
    missing: str = "raise"
    allow_data_levels: bool = False

    @property
    def label(self) -> str:
        return self.formula

    stage = "building the design from the data"

    def prepare(self, spec: MethodSpec | None, missing: str) -> _MemoryData:
        """The design; ``missing`` is the formula layer's mode (:func:`missing_mode`)."""
        design = build_design(self.formula, self.typed_data(), bounds=self.bounds, levels=self.levels,
                              missing=missing, allow_data_levels=self.allow_data_levels)
        return _MemoryData(design, self.formula)

    def typed_data(self) -> Any:
        """The data, with each list of a dict of columns typed from the declarations, not from its elements:
        text where text levels are declared for it, else numbers read element by element
        (:func:`dpstats.numbers.typed_columns`; with ``allow_data_levels``, a leak the report names, numpy's
        inference is kept).  Called once the budget is reserved: it reads the lists."""
        if not isinstance(self.data, Mapping) or self.allow_data_levels:
            return self.data
        names = pd.DataFrame(columns=list(self.data))
        return typed_columns(self.data, text_level_columns(names, self.formula, self.levels))


@dataclass(frozen=True)
class SourceData(FrameData):
    """A formula on data read chunk by chunk: files, a Dask DataFrame, a source, or a DataFrame in chunks."""

    chunksize: int | None = None

    stage = "reading the data"

    def prepare(self, spec: MethodSpec | None, missing: str) -> _ChunkedData:  # type: ignore[override]
        source = as_source(self.typed_data(), self.chunksize)
        source = source.with_text_columns(text_level_columns(source.schema(), self.formula, self.levels))
        schema = source.schema()
        design, plan, proto = public_design(self.formula, schema, bounds=self.bounds,
                                            levels=formula_levels(schema, self.formula, self.levels),
                                            missing=missing, allow_data_levels=self.allow_data_levels)
        evaluator = ChunkEvaluator(design.formula_expanded, plan, proto, design.column_names, design.response_name,
                                   infos=(design.response_info, design.design_info),
                                   shown=self.formula)
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
    intercept: bool = field(kw_only=True)  # no default: dp_ols_arrays requires it
    #: "raise": a private fit screens rows with missing values, the reference ols refuses them; "drop": they are
    #: public null rows (ols drops them), as in dp_ols
    missing: str = field(default="raise", kw_only=True)

    @property
    def label(self) -> str:
        return "arrays"

    stage = "reading the arrays"

    def prepare(self, spec: MethodSpec | None, missing: str) -> _MemoryData:
        design = array_design(self.X, self.y, spec, x_bounds=self.x_bounds, y_bounds=self.y_bounds,
                              column_names=self.column_names, response_name=self.response_name,
                              intercept=self.intercept, missing=missing)
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
    rescale: Any = DEFAULT_RESCALE


# -- the data once the public design is built -------------------------------------------------------------------

class _MemoryData:
    """A design whose arrays are in memory (the call's own): one chunk."""

    def __init__(self, design: Design, formula: str, n: int | None = None) -> None:
        self.design, self.formula = design, formula
        self._n = design.n if n is None else n  # n given: a public design of the frame's schema, no rows
        self._null_count: int | None = None

    def known_n(self, spec: MethodSpec) -> int | None:
        return self._n

    def count(self) -> int:
        return self._n

    def learn_n(self, spec: MethodSpec, bounds: DataBounds | None, scaling: PublicScaling | None,
                options: MethodOptions) -> int:
        return self._n

    def row_check(self, spec: MethodSpec) -> Callable[[], object] | None:
        """None: every row went through the public design (and its domain checks) when it was built."""
        return None

    def rows(self, scaling: PublicScaling | None, zero_nulls: bool) -> InMemoryRows:
        """The rows the method reads; ``zero_nulls``: set the public null rows to zero rows (for a method that
        gets no clip ranges; clipping zeroes them otherwise)."""
        X, y = self.design.X, self.design.y
        self._null_count = int(np.count_nonzero(np.isnan(y))) if self.design.null_rows else 0
        if scaling is not None:
            X, y = scaling.transform(X, y, inplace=True)  # the design arrays are this call's own
        if zero_nulls:
            zero_null_rows(X, y)
        return InMemoryRows(X, y)

    def null_count(self) -> int:
        """The number of public null rows (private; for the missing-value screen), counted by :meth:`rows`."""
        if self._null_count is None:
            raise RuntimeError("rows() first")
        return self._null_count

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
        """Read n: by the method's first pass when it has one (the data are then read once), else by the pass that
        checks every row (:meth:`~dpstats.rows.chunked.ChunkedRows.check_every_row`)."""
        if spec.first_pass is None:
            return self._rows.check_every_row()
        self._rows.scaling, self._rows.zero_null_rows = scaling, zeroes_null_rows(spec, self.design, bounds)
        return self._rows.prime(*spec.first_pass(bounds, options))

    def row_check(self, spec: MethodSpec) -> Callable[[], object] | None:
        """What the fit's ledger runs before its first charge (:class:`_RowCheckedLedger`): for a method without a
        first pass, one pass that evaluates every row and releases nothing, unless counting the rows ran it
        already; None for a one-pass method, whose first pass reads every row before its noise is drawn.

        So a row outside the guarantee's domain is refused before any release, as in memory, even where the
        method's own passes read only some rows (DP-SGD's samples) or some only after releasing something; and
        the method's public refusals (its options against n and d) still come before any row is read.
        """
        if spec.first_pass is not None or self._rows.checked:
            return None
        return self._rows.check_every_row

    def rows(self, scaling: PublicScaling | None, zero_nulls: bool) -> ChunkedRows:
        self._rows.scaling, self._rows.zero_null_rows = scaling, zero_nulls
        return self._rows

    def null_count(self) -> int:
        """The number of public null rows (private; for the missing-value screen): counted by the first pass over
        every row, or by a pass that checks every row when none has run yet."""
        if self._rows.null_count is None:
            self._rows.check_every_row()
        assert self._rows.null_count is not None  # a pass over every row counts them
        return self._rows.null_count

    def note(self, rows: Rows) -> str:
        passes = self._rows.passes
        return (f"data read in chunks ({passes} pass{'es' if passes != 1 else ''} over the data, counting and "
                "checking every row included)")


# -- the steps --------------------------------------------------------------------------------------------------

class _FitState:
    """What the handler of a failed fit must know: the stage reached, the fit's budget (epsilon, delta) and
    whether it is private, and once the method has started, its ledger (None before) and name."""

    def __init__(self, stage: str, budget: tuple[float, float], private: bool) -> None:
        self.stage = stage
        self.budget = budget
        self.ledger: PrivacyLedger | None = None
        self.method: str | None = None
        self.private = private


#: Keywords of one entry point passed to the other, and what to write instead (they would otherwise reach the
#: method as unknown options).
#: Names of the same argument elsewhere in the API (the CLI's --seed, compare's methods=, scikit-learn's
#: fit_intercept), refused by both entry points with the name to use.
_BOTH_KEYWORDS = {"seed": "random_state= (the CLI's --seed)",
                  "methods": "method= (one registered method or 'auto'; dpstats.compare takes methods=)"}
_ARRAY_KEYWORDS = {"bounds": "x_bounds= (the columns' ranges) and y_bounds= (the response's)",
                   "X_bounds": "x_bounds=", "levels": "a numeric design (dp_ols_arrays has no factors)",
                   "fit_intercept": "intercept= (True adds an intercept column)", **_BOTH_KEYWORDS}
_FRAME_KEYWORDS = {**dict.fromkeys(("x_bounds", "X_bounds", "y_bounds"),
                                   "bounds={'column': (lo, hi), ...}, the response's range included"),
                   **dict.fromkeys(("intercept", "fit_intercept"),
                                   "the intercept in the formula (it has one unless it says '- 1')"),
                   **_BOTH_KEYWORDS}


#: how a user whose response is a proportion (to which the hint does not apply) silences FloatIndicatorWarning
_SILENCE_HINT = ("A proportion's fits can silence this hint with warnings.filterwarnings('ignore', "
                 "category=dpstats.errors.FloatIndicatorWarning).")


def _check_entry_keywords(request: FitRequest) -> None:
    """Refuse, before anything is read, a keyword of the other entry point (``bounds=`` given to
    :func:`dpstats.dp_ols_arrays`, ``x_bounds=`` to :func:`dpstats.dp_ols`) with what to write instead."""
    arrays = isinstance(request.data, ArrayData)
    known = _ARRAY_KEYWORDS if arrays else _FRAME_KEYWORDS
    misplaced = [name for name in request.options if name in known]
    if misplaced:
        entry = "dp_ols_arrays" if arrays else "dp_ols"
        raise InvalidArgumentError(f"{entry} has no argument {misplaced[0]}=; write {known[misplaced[0]]}")


def check_accountant_fit(accountant: PrivacyAccountant | None, epsilon: object, delta: object,
                         method: object) -> None:
    """Refuse, before the data are touched, a fit through an accountant that is not private: one with an infinite
    epsilon (``method="ols"``, the only method that runs with it).

    A budget cannot pay for such a fit, and an accountant that let it pass would record nothing while exact least
    squares of the data were released: an analyst handed a custodian's accountant could step around it by asking
    for the non-private reference.  Decided from the arguments alone, after the privacy parameters' own checks
    (:func:`~dpstats.validation.check_privacy_parameters`); nothing is spent and nothing is recorded.
    :func:`run` calls it; :class:`~dpstats.sklearn.DPLinearRegression` also calls it before it reads its arrays.

    Raises
    ------
    InvalidPrivacyParameterError
        The privacy parameters are invalid, or an accountant is given with an infinite epsilon.
    """
    if accountant is None:
        return
    eps, _ = check_privacy_parameters(epsilon, delta)
    if math.isfinite(eps):
        return
    try:
        private = method == "auto" or get_method(method).private  # type: ignore[arg-type]
    except UnknownMethodError:
        private = True
    what = f"method={method!r} is not private" if not private else "epsilon=inf means no privacy"
    raise InvalidPrivacyParameterError(
        f"{what}, and a privacy budget cannot pay for a fit that is not private (its epsilon is infinite): the "
        "accountant refuses it. Drop accountant= to run the non-private reference (method='ols', "
        "epsilon=float('inf')) outside the budget, on data that may be disclosed, or give a private method a "
        "finite epsilon; nothing was spent")


def run(request: FitRequest) -> DPRegressionResults:
    """Fit ``request`` (module docstring).  Every exit settles the accountant's reservation."""
    _check_entry_keywords(request)
    rescale = rescale_mode(request.rescale)
    check_accountant_fit(request.accountant, request.epsilon, request.delta, request.method)
    eps, dlt = check_privacy_parameters(request.epsilon, request.delta)
    spec = resolve_method(request.method, eps)
    options = spec.parse_options(request.options, delta=dlt) if spec is not None else None
    mode = missing_mode(request.data.missing, spec)
    accountant = request.accountant
    private = spec.private if spec is not None else True
    # the budget is reserved before the data are touched: an over-budget fit is refused on public facts only
    seeded = request.random_state is not None
    # a seeded fit's history entry says so: its noise is reproducible, which the composition does not cover
    label = f"{request.method}: {request.data.label}" + (SEEDED_MARK if seeded else "")
    token = (accountant.reserve(eps, dlt, label=label, seeded=seeded)
             if accountant is not None and private else None)
    state = _FitState(request.data.stage, (eps, dlt), private)
    try:
        # the caller's numpy error state (np.seterr(all="raise") or "warn") must not decide what a fit shows: a
        # subnormal value in one row would raise or warn where its neighbour does not (docs/architecture.md)
        with np.errstate(**QUIET):
            result = _run_reserved(request, spec, options, eps, dlt, mode, rescale, state)
        if token is not None and accountant is not None and state.ledger is not None:
            _settle(accountant, token, state.ledger.spent, "released", state.method)
    except BaseException as exc:  # noqa: BLE001 - concluded below: settled, typed, chain cut
        failure = conclude(exc, accountant, token, state=state)
    else:
        return result
    raise failure


def _run_reserved(request: FitRequest, spec: MethodSpec | None, options: MethodOptions | None, eps: float,
                  dlt: float, mode: str, rescale: str, state: _FitState) -> DPRegressionResults:
    data = request.data.prepare(spec, mode)
    state.stage = "reading the data"
    # with the missing-value screen, everything after it (auto's choice, the public refusals, the method) runs on
    # the rest of epsilon: one public rule of (epsilon, the schema)
    screened = bool(data.design.screened)
    rest = fit_epsilon(eps, screened)
    spec, options, choice, auto_reason = _method(data, spec, options, request, rest, dlt)
    bounds, scaling, n = _public_facts(data, spec, options, rescale)
    if data.design.storage_hint and spec.private:
        warnings.warn(data.design.storage_hint[0].upper() + data.design.storage_hint[1:] + ". " + _SILENCE_HINT,
                      FloatIndicatorWarning, stacklevel=4)
    if spec.private and dlt * n >= 1.0:
        warnings.warn(f"delta={dlt:g} is at least 1/n = 1/{n}: with delta >= 1/n an (epsilon, delta)-DP fit may "
                      "publish rows outright; choose delta well below 1/n (e.g. 1e-6 up to a few hundred thousand "
                      "rows)", LargeDeltaWarning, stacklevel=4)
    rows = data.rows(scaling, zeroes_null_rows(spec, data.design, bounds))
    rng, seeded = make_rng(request.random_state)
    screen = (MissingValueScreen.for_method(eps, dlt, gaussian=spec.gaussian_only, variables=data.design.screened,
                                          levels=data.design.screened_levels)
              if screened and spec.private else None)
    first = _FirstCharge(data, data.row_check(spec), screen, rng, n)
    ledger = _RowCheckedLedger(eps, dlt if spec.private else 0.0, before_first_charge=first)
    ctx = _context(data.design, n, ledger, rng, bounds, scaling, method_epsilon=rest if screen is not None else None,
                   rescale=rescale)
    first.ledger = ledger
    state.stage, state.ledger, state.method, state.private = "fitting", ctx.ledger, spec.name, spec.private
    fitted = spec.fit(rows, ctx, options)
    params = np.asarray(fitted.params, dtype=float)
    if params.shape != (ctx.d,) or not np.all(np.isfinite(params)):
        raise DPStatsError(f"method '{spec.name}' produced non-finite coefficients; nothing is returned "
                           "(this is a bug: please report it)")
    notes = [note for note in (first.outcome.note if first.outcome else "", data.note(rows)) if note]
    if first.outcome is not None and first.outcome.warning:
        warnings.warn(first.outcome.warning, MissingValuesWarning, stacklevel=4)
    for category, message in fitted.warnings:
        warnings.warn(message, category, stacklevel=4)
    fitted = dataclasses.replace(fitted, notes=(*fitted.notes, *notes), passes=int(getattr(rows, "passes", 1)))
    if auto_reason and fitted.inference is None:
        fitted = dataclasses.replace(fitted, no_inference_reason=auto_reason)
    return _results(spec, data.design, n, fitted, ctx.ledger, eps, dlt, choice=choice, seeded=seeded,
                    scaling=scaling, rescale=rescale, clipped=bounds is not None, formula=data.formula,
                    declared=_prediction_bounds(request.data, data.design), options=options,
                    method_epsilon=ctx.epsilon)


class _FirstCharge:
    """What the fit's ledger runs before its first charge: the data's check of every row (if any), then the
    missing-value screen (if any), whose step is charged first and whose refusal comes before any other release.
    ``ledger`` is set once the ledger exists; ``outcome`` holds the screen's outcome once it has run; ``n`` (public)
    bounds the count its messages show."""

    def __init__(self, data: _MemoryData | _ChunkedData, row_check: Callable[[], object] | None,
                 screen: MissingValueScreen | None, rng: np.random.Generator, n: int | None = None) -> None:
        self.data, self.row_check, self.screen, self.rng, self.n = data, row_check, screen, rng, n
        self.ledger: PrivacyLedger | None = None
        self.outcome: ScreenOutcome | None = None

    def __call__(self) -> None:
        if self.row_check is not None:
            self.row_check()
        if self.screen is not None:
            assert self.ledger is not None
            self.outcome = self.screen.run(self.data.null_count(), ledger=self.ledger, rng=self.rng, n=self.n)


@dataclass
class _RowCheckedLedger(PrivacyLedger):
    """The fit's ledger: runs ``before_first_charge`` (if any) once, before recording its first step, so that
    whatever it raises comes before anything is spent or released."""

    before_first_charge: Callable[[], object] | None = None

    def charge(self, step: PrivacyStep) -> None:
        """Run the pending check, then :meth:`PrivacyLedger.charge`."""
        check, self.before_first_charge = self.before_first_charge, None
        if check is not None:
            check()
        super().charge(step)


def _prediction_bounds(data: FrameData | ArrayData, design: Design) -> tuple[tuple[str, float, float], ...]:
    """The declared bounds ``predict`` checks new rows against: the formula's ``bounds=`` (validated), or for
    arrays each column's declared range (the intercept aside)."""
    if isinstance(data, ArrayData):
        return tuple((name, iv.lo, iv.hi) for name, iv in zip(design.column_names, design.column_intervals,
                                                              strict=True)
                     if iv is not None and name != "Intercept")
    return tuple((str(k), iv.lo, iv.hi) for k, iv in
                 ((k, declared_interval(str(k), v)) for k, v in (data.bounds or {}).items()))


def zeroes_null_rows(spec: MethodSpec, design: Design, bounds: DataBounds | None) -> bool:
    """Whether the public null rows reach the method as zero rows: for a method that gets no clip ranges (clipping
    zeroes them otherwise) and does not read them marked (:attr:`~dpstats.methods.registry.MethodSpec.null_marks`),
    and for a method without null-row support (:attr:`~dpstats.methods.registry.MethodSpec.null_rows`), which
    meets null rows only after the missing-value screen: for it a zero row is a public placeholder data point."""
    return design.null_rows and (not spec.null_rows or (bounds is None and not spec.null_marks))


def rescale_mode(rescale: Any) -> str:
    """``"columns"`` (True: every column and the response mapped to [-1, 1]), ``"centred"`` (that map after the
    public reparametrisation of product and power columns) or ``"off"`` (False) for the ``rescale=`` argument;
    any other value is refused before anything is read."""
    check_rescale(rescale)
    if isinstance(rescale, (bool, np.bool_)):
        return "columns" if rescale else "off"
    return "centred"


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
        return "raise" if spec is not None and not spec.private else "screen"
    if spec is not None and not spec.private:
        return "drop"
    if spec is not None and not spec.null_rows:
        able = sorted(n for n, s in available_methods().items() if s.private and s.null_rows)
        raise InvalidArgumentError(
            f"method '{spec.name}' cannot take missing='drop': what it releases is not a sum over rows of terms that "
            "vanish at a zero row (it centres or standardises rows, or fits blocks or pairs of rows), so the public "
            "null row that stands for an incomplete row would become a data point. Impute the missing values with "
            f"a public rule, or use one of {', '.join(able)}. Nothing was read or spent.")
    return "null"


def _method(data: _MemoryData | _ChunkedData, spec: MethodSpec | None, options: MethodOptions | None,
            request: FitRequest, eps: float, dlt: float) -> tuple[MethodSpec, MethodOptions, str, str]:
    """The method, its options, why it was chosen and (auto) the reason to give if it reports no interval:
    ``method="auto"`` decides here, from public facts."""
    if spec is None:
        spec, choice, reason = _choose_method(data.design, data.count(), eps, dlt, rescale_mode(request.rescale))
        return spec, spec.parse_options(request.options, delta=dlt), choice, reason
    choice = "epsilon=inf: the non-private reference 'ols' (NOT PRIVATE)" if request.method == "auto" else ""
    assert options is not None  # parsed with the named method
    return spec, options, choice, ""


def _public_facts(data: _MemoryData | _ChunkedData, spec: MethodSpec, options: MethodOptions, rescale: str
                  ) -> tuple[DataBounds | None, PublicScaling | None, int]:
    """The clip ranges, the public rescaling and n, with n checked against the method's public requirements
    before anything is released.  n is known (in memory, or from a source's metadata), or read by the method's
    first pass or a counting pass once the bounds are known (a refusal for missing bounds reads nothing)."""
    _check_columns(spec, data.design.d)
    n = data.known_n(spec)
    if n is not None:
        _check_shape(spec, n, data.design.d)
    bounds, scaling = _public_transform(spec, data.design, rescale)
    _check_identifiable(spec, data.design)
    if n is None:
        n = data.learn_n(spec, bounds, scaling, options)
        _check_shape(spec, n, data.design.d)
    return bounds, scaling, n


def _context(design: Design, n: int, ledger: PrivacyLedger, rng: np.random.Generator, bounds: DataBounds | None,
             scaling: PublicScaling | None, *, method_epsilon: float | None = None, rescale: str = "centred"
             ) -> FitContext:
    """The method's context, from public facts only (and the fit's ledger and random source); ``method_epsilon``:
    the method's epsilon where the ledger also holds the missing-value screen.  Where ``rescale`` centres but the
    declared bounds gave no public rescaling, the design's centrable columns go to the method, which may centre
    them at centres it releases."""
    intercept = design.column_names.index("Intercept") if design.has_intercept else None
    constant = design.constant_weights() if scaling is None and rescale != "off" else None
    centring = design.centrable_columns() if scaling is None and rescale == "centred" \
        and (design.has_intercept or constant is not None) else None
    return FitContext(n=n, d=design.d, ledger=ledger, rng=rng, method_epsilon=method_epsilon, centring=centring,
                      constant=None if constant is None else tuple(constant.tolist()),
                      intercept_index=scaling.intercept_index if scaling is not None else intercept,
                      bounds=bounds, rescaled=scaling is not None,
                      null_rows=design.null_rows and not design.screened,
                      column_names=tuple(design.column_names), response_name=design.response_name,
                      **_public_ranges(design, scaling))


def planned_context(spec: MethodSpec, design: Design, n: int, epsilon: float, delta: float,
                    rescale: str | None = None, method_epsilon: float | None = None) -> FitContext:
    """The context a fit of ``spec`` with n rows and this budget gets on ``design``, from public facts only (the
    declared bounds and the public rescaling of mode ``rescale``, :func:`rescale_mode`, the default's when None; a
    fresh ledger; a generator nothing draws from): what :func:`dpstats.plan` hands a method's ``public_refusal``.
    ``method_epsilon``: the method's epsilon where the missing-value screen takes a share (as in the fit)."""
    mode = rescale_mode(DEFAULT_RESCALE) if rescale is None else rescale
    bounds, scaling = _public_transform(spec, design, rescale=mode)
    return _context(design, n, PrivacyLedger(epsilon, delta), np.random.default_rng(0), bounds, scaling,
                    method_epsilon=method_epsilon, rescale=mode)


def resolve_method(method: str, eps: float) -> MethodSpec | None:
    """The named method checked against epsilon (public facts only); None means auto.

    ``method="auto"`` chooses among private methods, so epsilon = inf is refused there as for any private method
    (a fit that is not private is asked for by name, ``method="ols"``, and never happens by a budget that came out
    infinite).
    """
    if method == "auto":
        if math.isinf(eps):
            raise InvalidPrivacyParameterError(
                "epsilon=inf means no privacy, and method='auto' chooses among private methods; use method='ols' for "
                "the non-private reference, or give a finite epsilon")
        return None
    spec = get_method(method)
    _check_epsilon_for_method(spec, eps)
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


def auto_facts(design: Design, n: int, eps: float, dlt: float, rescale: str = "centred") -> AutoFacts:
    """The public facts ``method="auto"`` chooses from (:class:`~dpstats.methods.registry.AutoFacts`).  The
    variables without a range leave out the product and power columns a centring fit derives its domain for
    (``rescale="centred"`` with a bound missing: :func:`_context`)."""
    intercept = design.column_names.index("Intercept") if design.has_intercept else None
    structure = design.centrable_columns() if rescale == "centred" \
        and (design.has_intercept or design.constant_weights() is not None) else None
    derived = set(structure.columns) if structure is not None and design.missing_bounds else set()
    unbounded = sum(1 for j, iv in enumerate(design.column_intervals)
                    if iv is None and j != intercept and j not in derived)
    unbounded += int(design.response_interval is None)
    return AutoFacts(n=n, d=design.d, epsilon=eps, delta=dlt, bounds=not design.missing_bounds, unbounded=unbounded,
                     null_rows=design.null_rows and not design.screened, intercept=design.has_intercept,
                     two_valued_response=design.two_valued_response, screened=bool(design.screened))


def _choose_method(design: Design, n: int, eps: float, dlt: float, rescale: str = "centred"
                   ) -> tuple[MethodSpec, str, str]:
    """Pick a private method from public facts only (n, d, epsilon, delta, the declared bounds), by the
    registry's rule (:func:`~dpstats.methods.registry.choose_auto`): (method, why it was chosen (the regime),
    the reason to give if it reports no interval ("": the method's own))."""
    facts = auto_facts(design, n, eps, dlt, rescale)
    d = design.d
    chosen = choose_auto(facts)
    if chosen is None:
        if not facts.bounds:
            drop = (" (with missing='drop', only methods that keep a null row inert qualify; among those without "
                    "bounds, name one, e.g. method='dpsgd')") if facts.null_rows else ""
            refusals = [f"Without bounds, {text}." for spec in available_methods().values()
                        if spec.private and spec.auto_refusal is not None and (text := spec.auto_refusal(facts))]
            raise MissingBoundsError(
                f"method='auto' found no registered method that fits n={n}, d={d} at {_epsilon_text(facts)} without "
                f"bounds on every variable and the response{drop}. Declare bounds for: "
                f"{', '.join(design.bounds_to_declare())}, or name a method."
                + "".join(f" {r}" for r in refusals))
        raise InsufficientDataError(_no_auto_method(n, d))
    spec, rule = chosen
    why = ("every column and the response have a public range (declared bounds, or fixed by the design)"
           if facts.bounds else "not every column, or not the response, has a public range")
    if rule.intervals:
        intervals = "it reports intervals in this regime"
    elif spec.inference_rule.reports_at(n, eps, dlt):
        intervals = ("it reports intervals at this n and epsilon unless its released values show them unreliable "
                     "(the reason is then given under the table)")
    else:
        intervals = "it reports no interval in this regime (see its reason under the table)"
    reason = rule.no_interval_reason(facts) if rule.no_interval_reason is not None else ""
    return spec, (f"auto chose '{spec.name}' from public facts: n={n}, d={d}, {_epsilon_text(facts)}, delta={dlt:g} "
                  f"(n * mu = {facts.n_mu:.3g}), {why}; {rule.why or spec.regimes}; {intervals}"
                  f"{_left_out_by_drop(facts, spec)}"), reason


def _left_out_by_drop(facts: AutoFacts, chosen: MethodSpec) -> str:
    """"; with missing='drop' ..." where the rule, on the same facts without null rows, picks a method that does
    not take them (theilsen: docs/choosing.md, "With missing="drop""); "" otherwise."""
    if not facts.null_rows:
        return ""
    without = choose_auto(dataclasses.replace(facts, null_rows=False))
    if without is None or without[0].name == chosen.name:
        return ""
    return (f"; missing='drop' left out '{without[0].name}', the rule's choice for these facts, which does not take "
            "the null rows that missing='drop' makes of incomplete rows (docs/choosing.md)")


def _epsilon_text(facts: AutoFacts) -> str:
    """"epsilon=..." for auto's messages: the requested epsilon, and the rest where the missing-value screen took its
    share first (the rule reads the rest)."""
    if not facts.screened:
        return f"epsilon={facts.epsilon:g}"
    return (f"epsilon={requested_epsilon(facts.epsilon, True):g} ({facts.epsilon:g} after the missing-value "
            "screen's share)")


def _no_auto_method(n: int, d: int) -> str:
    """Why ``method="auto"`` found no method with every bound declared, and what to change (public facts only)."""
    head = f"method='auto' found no registered method for n={n}, d={d}"
    if n <= d:
        return (f"{head}: the data have no more rows than the design has columns, and every method auto chooses "
                "among needs more rows than columns; use fewer terms or more rows (or, for a sparse model, name "
                "method='lasso' with sparsity=). Nothing was spent.")
    return (f"{head}: no method's rule for auto matches these public facts; name a method "
            "(dpstats.available_methods() lists each one with what it needs). Nothing was spent.")


def _check_identifiable(spec: MethodSpec, design: Design) -> None:
    """Refuse a design whose columns are dependent for every data set the declarations allow (public facts
    only, so nothing is spent); sparse methods, which allow wide designs, select among such columns."""
    if spec.allows_wide:
        return
    dependent = design.dependent_columns()
    if dependent:
        why = design.dependence_reason(dependent)
        raise SingularDesignError(
            f"the columns {', '.join(repr(c) for c in dependent)} are linearly dependent for every data set that "
            "the declared bounds and levels allow (one is a multiple or a combination of the others, as x and "
            "I(2 * x), or a factor's dummies and a column that sums them"
            f"{'; here ' + why if why else ''}), so the design is singular by "
            "construction and their coefficients cannot be told apart; remove one of them from the formula (or, "
            "where they are powers of a variable far from 0, such as poly(year, 5), dependent within double "
            "precision: centre and scale the variable first, e.g. poly(I((year - 1980) / 10), 5)). "
            "This was decided from the formula and the declarations alone: nothing was spent.")


def _check_columns(spec: MethodSpec, d: int) -> None:
    """Refuse a design wider than the method fits (its public ``max_columns``) before anything else is asked of
    the user: a method for one predictor should not first ask for bounds on several."""
    if refusal := spec.columns_refusal(d):
        raise InvalidArgumentError(f"{refusal} (intercept included). Use another method (method='auto' chooses one) "
                                   "or fewer terms. Nothing was spent")


def _check_shape(spec: MethodSpec, n: int, d: int) -> None:
    if d > n and not spec.allows_wide:
        raise SingularDesignError(
            f"the design has more columns (d={d}) than rows (n={n}), so it is singular by construction; "
            "use fewer terms or a sparse method")
    need = spec.min_rows(d)
    if n < need:
        raise InsufficientDataError(f"method '{spec.name}' needs at least {need} rows for d={d} columns; "
                                    f"the data have n={n}")


def _public_transform(spec: MethodSpec, design: Design, rescale: str
                      ) -> tuple[DataBounds | None, PublicScaling | None]:
    """The clip ranges the method gets (None if it needs none) and the public rescaling (None if off), both
    from declared bounds only; the clip ranges are those of the rescaled design.  ``rescale`` is a mode of
    :func:`rescale_mode`."""
    data_bounds = design.data_bounds() if spec.needs_bounds else None
    transform = public_scaling(design, rescale) if spec.private else None
    if transform is None:
        return data_bounds, None
    scaling, fitted = transform
    if data_bounds is not None:
        data_bounds = dataclasses.replace(scaling.transform_bounds(fitted), null_rows=data_bounds.null_rows)
    return data_bounds, scaling


def public_scaling(design: Design, rescale: str) -> tuple[PublicScaling, DataBounds] | None:
    """The public rescaling a private fit sees and the ranges of the fitted design's columns before it, from the
    declared bounds and the formula only; None when ``rescale`` is ``"off"`` or a range is not declared.

    ``"columns"`` maps every column and the response to [-1, 1]; ``"centred"`` first re-expresses the product and
    power columns with their variables centred at their declared midpoints (:mod:`dpstats.formula.centring`, which
    centres designs that hold the constant: an intercept, or columns that sum to it).  Either way a design without
    an intercept whose columns sum to the constant is then fitted through the intercept model
    (:func:`_implicit_intercept`): the fitted design is X M_c M_i, the centring's M_c and the intercept model's
    M_i, whose constant column X M_c w = X w = 1 because the centring leaves the columns of w as they are."""
    if rescale == "off" or design.missing_bounds:
        return None
    intercept_index = design.column_names.index("Intercept") if design.has_intercept else None
    fitted = design.data_bounds()
    mix = None
    centring = design.public_centring() if rescale == "centred" else None
    if centring is not None:  # product and power columns with their variables centred (public)
        fitted = dataclasses.replace(fitted, column_lo=np.array([lo for lo, _ in centring.intervals]),
                                     column_hi=np.array([hi for _, hi in centring.intervals]))
        mix = centring.matrix
    if (weights := design.constant_weights()) is not None:
        intercept_index, implicit, fitted = _implicit_intercept(weights, fitted)
        mix = implicit if mix is None else mix @ implicit
    return PublicScaling.from_bounds(fitted, intercept_index, mix=mix), fitted


def _implicit_intercept(weights: np.ndarray, fitted: DataBounds) -> tuple[int, np.ndarray, DataBounds]:
    """A design without an intercept whose columns sum to the constant with public weights w (``0 + C(g)``'s
    dummies, a ``cr`` basis), fitted through its intercept model X M
    (:func:`~dpstats.formula.centring.intercept_model`), whose column k, the constant, has the range [1, 1]: fitted
    as written, such a design's columns are far from centred, which costs a private fit much of its accuracy."""
    k, mix = intercept_model(weights)
    lo, hi = fitted.column_lo.copy(), fitted.column_hi.copy()
    lo[k] = hi[k] = 1.0
    return k, mix, dataclasses.replace(fitted, column_lo=lo, column_hi=hi)


def _public_ranges(design: Design, scaling: PublicScaling | None) -> dict[str, Any]:
    """The public range of every design column (None where unknown) and of the response, in the units the
    method sees (after the public rescaling, when it was applied), and whether the response is two-valued.  Factor
    dummies and the intercept are bounded by construction; other columns only when the user declared bounds."""
    columns: list[tuple[float, float] | None]
    response: tuple[float, float] | None
    if scaling is not None:  # every range known: those of the fitted (possibly centred) columns, mapped
        lo, hi, y_lo, y_hi = scaling.limits
        columns, response = list(zip(lo.tolist(), hi.tolist(), strict=True)), (y_lo, y_hi)
    else:
        columns = [None if iv is None else (iv.lo, iv.hi) for iv in design.column_intervals]
        response = None if design.response_interval is None else (design.response_interval.lo,
                                                                   design.response_interval.hi)
    return {"column_ranges": tuple(columns), "response_range": response, "declared_ranges": _declared_ranges(design),
            "column_values": _column_values(design, scaling), "two_valued_response": design.two_valued_response}


def _column_values(design: Design, scaling: PublicScaling | None) -> tuple[tuple[float, ...] | None, ...]:
    """The values each design column can take when public facts fix them (the contrast matrices, or a two-valued
    integer variable's declared bounds; None for any other numerical column), in the units the method sees."""
    values = column_values(design.design_info, design.variable_supports)
    if scaling is None:
        return values
    return tuple(None if v is None else tuple(float((u - c) / s) for u in v)
                 for v, c, s in zip(values, scaling.centre, scaling.scale, strict=True))


def _declared_ranges(design: Design) -> tuple[bool, ...]:
    """True for each column whose range needs the user's bounds (a term with a single-column numeric factor),
    False for those the design bounds by construction (the intercept, factor dummies and their interactions,
    spline bases) and for columns without a range (public facts of the design)."""
    info = design.design_info
    out = [False] * design.d
    for term, cols in info.term_slices.items():
        numeric = any(info.factor_infos[f].type == "numerical" and info.factor_infos[f].num_columns == 1
                      for f in term.factors)
        for j in range(cols.start, cols.stop):
            out[j] = numeric and design.column_intervals[j] is not None
    return tuple(out)


# -- the guard --------------------------------------------------------------------------------------------------

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
             state: _FitState) -> BaseException:
    """The exception a failed fit raises, after settling its reservation; call it in the handler, raise its
    result outside the handler (so that the original is not the new one's context).

    * The reservation is settled with what the ledger charged (zero before
      the method ran), as "failed after spending" or "refused"; an
      exception of no dpstats type (a bug) in a private fit is charged the
      whole budget instead, since no rule decided it and it may depend on
      the rows read.  If the
      settle itself fails, the reservation stays held in full and that
      failure is raised instead (:class:`~dpstats.errors.SettlementError`).
    * A dpstats error keeps its (public) message and gains ``privacy_spent``,
      as does a dpstats warning that a warnings filter made an error; any
      other exception becomes :class:`~dpstats.errors.InternalFitError`,
      whose message names the stage and the original type only (the original
      message may quote data values).  Interrupts (``KeyboardInterrupt``) are
      re-raised as they are.
    * The chain (``__cause__``, ``__context__``) is cut in every case.

    An exception that was already concluded (by an inner call) is returned
    unchanged.
    """
    if getattr(exc, "_dpstats_concluded", False):
        return exc
    ledger = state.ledger
    spent = ledger.spent if ledger is not None else (0.0, 0.0)
    own_warning = isinstance(exc, Warning) and type(exc).__module__.startswith("dpstats.")
    internal = isinstance(exc, Exception) and not isinstance(exc, DPStatsError) and not own_warning
    charged_whole = internal and state.private  # a failure no rule decided may depend on the rows read
    if charged_whole:
        spent = state.budget
    if token is not None and accountant is not None and accountant.is_open(token):
        status = "failed after spending" if charged_whole or (ledger is not None and ledger.steps) else "refused"
        try:
            _settle(accountant, token, spent, status, state.method)
        except BaseException as settle_failure:  # noqa: BLE001 - raised instead of the fit's own failure
            _cut_chain(settle_failure)  # raised while the fit's failure was handled: that is its context
            return settle_failure
    _cut_chain(exc)
    if isinstance(exc, DPStatsError):
        if "privacy_spent" not in vars(exc):  # the class default (0, 0) is for errors raised before a fit
            exc.privacy_spent = spent
        out: BaseException = exc
    elif own_warning:
        # one of dpstats' own warnings turned into an error by a warnings filter ("error"): its message is built
        # from public facts like an error's, so it is raised as itself, with what the fit spent
        exc.privacy_spent = spent  # type: ignore[attr-defined]
        out = exc
    elif internal:
        charged = ("the whole budget is charged, since a failure no rule decided may depend on the rows read"
                   if state.private else "the fit is not private")
        out = InternalFitError(
            f"{state.stage} failed with {type(exc).__name__}; its message is withheld because it may quote data "
            f"values. The fit spent epsilon={spent[0]:g}, delta={spent[1]:g} ({charged}; privacy_spent; an "
            "accountant, if given, was settled with it).",
            privacy_spent=spent, original_type=type(exc).__name__)
    else:
        out = exc
    out._dpstats_concluded = True  # type: ignore[attr-defined]
    return out


# -- the results ------------------------------------------------------------------------------------------------

def _inference_back(inference: Inference, scaling: PublicScaling) -> Inference:
    """The inference of coefficients fitted on the rescaled design, in the user's units (post-processing)."""
    if inference.draws is not None:
        return dataclasses.replace(inference, draws=scaling.draws_back(inference.draws))
    return dataclasses.replace(inference, cov=scaling.cov_back(np.asarray(inference.cov, dtype=float)))


def _split_back(split: ErrorSplit, scaling: PublicScaling) -> ErrorSplit:
    """The error split of coefficients fitted on the rescaled design, in the user's units (post-processing)."""
    return split.in_units(scaling.coefficient_map()[0])


def _error_bounds(spec: MethodSpec, design: Design, n: int, fitted: MethodFit, eps: float, dlt: float,
                  guarantee: str, scaling: PublicScaling | None) -> ErrorBounds:
    """The fit's error block (:mod:`dpstats.theory`): the rates, and each coefficient's error in the user's units
    from the released split (mapped back) or from public facts."""
    split = fitted.error_split
    if split is not None and scaling is not None:
        split = _split_back(split, scaling)
    theory = fitted.theory_inputs
    bounds = error_bounds(spec, n, design.d, eps, dlt, sparsity=theory.sparsity, guarantee=guarantee,
                          inference=theory.inference)
    intervals = [None if iv is None else (iv.lo, iv.hi) for iv in design.column_intervals]
    response = None if design.response_interval is None else (design.response_interval.lo,
                                                               design.response_interval.hi)
    return with_coefficients(bounds, design.column_names, split=split, intervals=intervals,
                             response_interval=response,
                             intercept_index=design.column_names.index("Intercept") if design.has_intercept else None)


def _uncentred_note(design: Design, scaling: PublicScaling | None, centred: tuple[str, ...], rescale: str,
                    method: str) -> str:
    """The report's note for product and power columns fitted as written for want of the public rescaling (a bound
    not declared, or ``rescale=False``), so that they could not be centred (docs/choosing.md, "Products and
    powers"), unless the method centred them itself at released centres (``centred``); "" otherwise.  Public facts
    only: the formula, which bounds are declared, the rescale mode and the method.  With every bound declared, the
    note is for a design without an intercept whose constant the centring cannot use (:func:`_no_constant`)."""
    structure = design.product_columns() if scaling is None or _no_constant(design, rescale) else None
    if structure is None or set(structure.centred) <= set(centred):
        return ""
    many = len(structure.centred) > 1
    evidence = ("a power's intervals, its variable's and the intercept's covered least squares in 1 of 20 fits of "
                "a simulated quadratic, 20 of 20 centred" if structure.powers else
                "a product's intervals and its variables' covered least squares in 16-18 of 20 fits of a simulated "
                "product of two variables away from 0, 20 of 20 centred")
    if scaling is not None:
        why, advice = ("the design has no Intercept column and its columns do not sum to the constant by public "
                       "weights that leave these columns and their variables out, so centring them would change "
                       "the model", "add the intercept where the model has one")
    elif rescale == "off":
        why, advice = "rescale=False", "leave rescale at its default, 'centred'"
    elif rescale == "columns":
        why, advice = ("rescale=True, and not every variable and the response have declared bounds",
                       "leave rescale at its default, 'centred'")
    elif structure.factored:  # a power of a variable that is no column: no released mean is the variable's
        why, advice = ("not every variable and the response have declared bounds, and the variable of "
                       f"{', '.join(structure.factored)} is no column of the design (it enters through its products "
                       "with a factor's dummies, as in C(g):x without x), so it has no released mean to centre "
                       "at", "write the variable's main effect (y ~ C(g) * x + I(x ** 2) is the same model as "
                       "y ~ C(g) + C(g):x + I(x ** 2))")
    elif not design.has_intercept and design.constant_weights() is None:
        why, advice = ("not every variable and the response have declared bounds, and the design has no Intercept "
                       "column and its columns do not sum to the constant, so centring them would change the model",
                       "add the intercept where the model has one")
    elif design.centrable_columns() is None:  # a centred column that is itself centred in a product
        why, advice = ("not every variable and the response have declared bounds, and a product of a power or "
                       "product column (such as I(x ** 2):z) is not centred at released means, so none of them is",
                       "leave out the products of power or product columns")
    else:
        why, advice = (f"not every variable and the response have declared bounds, and method '{method}' does not "
                       "centre them at released means", "use method='pgd' (or 'auto'), which does")
    return (f"{', '.join(structure.centred)} (product or power column{'s' if many else ''}) fitted as written "
            f"({why}): {'they' if many else 'it'} could not be centred, and the intervals of "
            f"{'such columns' if many else 'such a column'}, {'their' if many else 'its'} variables and the "
            f"intercept are not reliable ({evidence}); the other coefficients' are unaffected. Declare bounds for "
            f"every variable and the response, or {advice}")


def _no_constant(design: Design, rescale: str) -> bool:
    """Whether the declared midpoints cannot centre a design's products and powers for want of the constant: no
    Intercept column, and no public weights summing its columns to 1 that the centring leaves as they are
    (:mod:`dpstats.formula.centring`; public facts only)."""
    return rescale == "centred" and not design.has_intercept and design.public_centring() is None


def _results(spec: MethodSpec, design: Design, n: int, fitted: MethodFit, ledger: PrivacyLedger, eps: float,
             dlt: float, *, choice: str, seeded: bool, scaling: PublicScaling | None, rescale: str, clipped: bool,
             formula: str, declared: tuple[tuple[str, float, float], ...] = (),
             options: MethodOptions | None = None, method_epsilon: float | None = None) -> DPRegressionResults:
    """The results object; ``method_epsilon``: the epsilon the method calibrated to (below ``eps`` by the
    missing-value screen's share), which the error block's rates use."""
    params = np.asarray(fitted.params, dtype=float)
    notes = list(fitted.notes)
    inference = fitted.inference
    if scaling is not None:
        params = scaling.params_back(params)
        centring = design.public_centring()
        if centring is not None:
            notes.append(centring.note() if rescale == "centred" else centring.hint())
        if not design.has_intercept and scaling.intercept_index is not None:
            notes.append(f"the design has no Intercept column, but its columns sum to the constant 1 for every data "
                         f"set the declarations allow, so the fit saw the same model with "
                         f"'{design.column_names[scaling.intercept_index]}' replaced by that constant (public); the "
                         f"coefficients were mapped back (post-processing)")
        notes.append("the design and response were centred and scaled to [-1, 1] by the declared bounds (public) "
                     "before fitting; the coefficients were mapped back (post-processing)")
        if inference is not None:
            inference = _inference_back(inference, scaling)
    elif spec.raw_units_warning and not (options is not None and options.scale_chosen()):
        notes.append("WARNING: " + spec.raw_units_warning)
        warnings.warn(spec.raw_units_warning, UnscaledFitWarning, stacklevel=5)
    if spec.private and inference is not None and (
            note := _uncentred_note(design, scaling, fitted.centred, rescale, spec.name)):
        notes.append("WARNING: " + note)
        warnings.warn(note, UncentredColumnsWarning, stacklevel=5)
    withheld = "" if inference is None else withholding_reason(
        spec.name, inference.noise_to_signal, spec.inference_rule.withhold_above, inference.draws, inference.bse)
    guarantee = fitted.guarantee or spec.guarantee
    report = _report(spec, design, n, ledger, eps, dlt, choice, seeded, fitted.assumptions, notes, clipped,
                     guarantee=guarantee)
    return DPRegressionResults(
        params=pd.Series(params, index=design.column_names, name="coef"),
        privacy=report,
        error_bounds=_error_bounds(spec, design, n, fitted, eps if method_epsilon is None else method_epsilon, dlt,
                                   guarantee, scaling),
        nobs=n, df_model=design.d - int(design.has_intercept), df_resid=n - design.d,
        method=spec.name, formula=formula, response_name=design.response_name, design_info=design.design_info,
        info=_info(fitted), _inference=inference, _bse_reason=fitted.no_inference_reason, _withheld=withheld,
        _rsquared_value=fitted.rsquared, _released_sums=fitted.released_sums, _rsquared_reason=fitted.rsquared_reason,
        _declared_bounds=declared,
    )


def _info(fitted: MethodFit) -> dict[str, Any]:
    """What ``DPRegressionResults.info`` shows: the method's diagnostics and its released sums for R^2."""
    info = dict(fitted.diagnostics)
    if fitted.released_sums is not None:
        info["released_sums"] = fitted.released_sums
    return info


def _guarantee_line(spec: MethodSpec, design: Design, guarantee: str) -> str:
    """The report's guarantee, saying what a worst-case guarantee is given: the declared bounds, and for the
    variables without any (a method that needs none ran) why it holds without them (public facts)."""
    text = _GUARANTEES.get(guarantee, guarantee)
    if guarantee != "worst-case" or not design.missing_bounds:
        return text
    why = spec.unbounded_guarantee or "the method needs none"
    if any(_declared_ranges(design)) or design.response_interval is not None:
        return f"{text}; the variables without declared bounds need none: {why}"
    return f"{_WORST_CASE}; no bounds were declared and none are needed: {why}"


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
        guarantee=_guarantee_line(spec, design, guarantee), composition=composition, n=n,
        assumptions=tuple(assumptions), notes=tuple(all_notes), method_choice=choice, seeded=seeded,
    )
