"""Fitting data read in chunks: CSV/Parquet files and Dask DataFrames (see :mod:`dpstats.sources`).

The pipeline is :func:`dpstats.dp_ols`'s, with the data kept out of memory:

1. the budget is reserved (in :func:`dpstats.dp_ols`) before anything is read;
2. the public design is built from the schema alone
   (:func:`dpstats.formula.public_design`): formula, declared levels and
   bounds, column dtypes; patsy's DesignInfo is built on one row of public
   values, so no chunk can change the columns;
3. every chunk is prepared by the same :class:`~dpstats.formula.FramePlan`
   (declared levels, clipping of raw variables, missing values) and evaluated
   with ``patsy.build_design_matrices`` on that DesignInfo
   (:class:`ChunkEvaluator`), then publicly rescaled like the in-memory
   design;
4. the method sees only numpy chunks: sufficient-statistics methods
   (``ssp``, ``adassp``, ``noisy_ols``, the non-private ``ols``) get the sums
   X^T X, X^T y, y^T y of the clipped, rescaled rows accumulated over chunks
   and run their one release step
   (:attr:`~dpstats.methods.registry.MethodSpec.fit_statistics`); the other
   methods read :class:`ChunkedRows` through their ``fit_chunks``: ``tukey``
   in one or two passes of block sums, the iterative ``robgd``, ``ambssgd``,
   ``dpsgd`` and ``lasso`` in one pass per round (step, iteration), each pass
   returning only the aggregates that round releases.  A method registered
   without either is refused with
   :class:`~dpstats.errors.ChunkedDataNotSupportedError` before any data are
   read.

Privacy: every released quantity is the same function of the data as in the
in-memory fit (sums over rows are the same sums, added in another order;
TukeyEM's blocks and the iterative methods' parts and samples are the same
rows, drawn from public n and the fit's generator), so each method's proof
applies unchanged; n is public as in memory.  Only aggregates leave a chunk (on a
Dask cluster: only they reach the driver).  Schema violations (missing
values, undeclared levels, non-finite transforms) are found while the data
are read, in the first pass that reads the offending row: before any release
for the one-pass sufficient-statistics methods, possibly after earlier
releases for the methods that read the data several times (``tukey``'s
centring sample, the iterative methods' later rounds).  Such a refusal is
settled with what the ledger spent, like any refusal after spending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import patsy
from patsy.eval import ast_names

from dpstats.errors import ChunkedDataNotSupportedError, DataTypeError, DPStatsError, FormulaError
from dpstats.formula import Design, FramePlan, _finite_arrays, _quoted_names, _sanitised, public_design
from dpstats.formula import non_finite_message as non_finite_message_of
from dpstats.formula_language import FORMULA_ENV, expand_formula, model_desc
from dpstats.methods import available_methods
from dpstats.methods.registry import MethodFit, MethodSpec
from dpstats.methods.sufficient import (
    StatisticsPlan, SufficientStatistics, add_statistics, statistics_of_chunk,
)
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.scaling import PublicScaling
from dpstats.sources import DEFAULT_CHUNK_ROWS, DaskSource, DataSource, as_source

__all__ = ["ChunkEvaluator", "ChunkedRows", "ChunkedDesign", "fit_chunked", "chunked_methods"]


def chunked_methods() -> list[str]:
    """Names of the registered methods that can fit data read in chunks."""
    return sorted(name for name, spec in available_methods().items() if spec.supports_chunks)


@dataclass
class ChunkedDesign(Design):
    """A :class:`~dpstats.formula.Design` whose rows stay in the source; ``n_rows`` is set once known."""

    n_rows: int | None = None

    @property
    def n(self) -> int:  # type: ignore[override]
        if self.n_rows is None:
            raise RuntimeError("the number of rows is not known yet")
        return int(self.n_rows)


class ChunkEvaluator:
    """Evaluates the public design on one chunk: prepare (declared levels, clipping, missing values), then
    ``patsy.build_design_matrices`` with the public DesignInfo.  Picklable, for Dask workers: patsy objects
    cannot be pickled, so a worker rebuilds the DesignInfo from the expanded formula (``formula``: '.' expanded
    and long sums nested, as the driver parsed it) and the one-row public prototype, in dpstats's own formula
    namespace, exactly as the driver built it.  ``non_finite_message`` is the public refusal for a non-finite
    value (the same for every value, row and chunk)."""

    def __init__(self, formula: str, plan: FramePlan, prototype: pd.DataFrame, column_names: Sequence[str],
                 response_code: str, infos: tuple[Any, Any] | None = None, *, non_finite_message: str = "",
                 shown: str | None = None) -> None:
        self.formula = formula
        self.shown = formula if shown is None else shown
        self.plan = plan
        self.prototype = prototype
        self.column_names = list(column_names)
        self.response_code = response_code
        self.non_finite_message = non_finite_message or non_finite_message_of([response_code])
        self._infos = infos

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_infos"] = None
        state["_layout_cache"] = None
        return state

    @property
    def columns(self) -> list[str]:
        return list(self.plan.variables)

    @property
    def d(self) -> int:
        return len(self.column_names)

    def infos(self) -> tuple[Any, Any]:
        if self._infos is None:
            with np.errstate(all="ignore"):
                y_dm, X_dm = patsy.dmatrices(model_desc(self.formula, shown=self.shown), self.prototype,
                                             eval_env=FORMULA_ENV, return_type="matrix",
                                             NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
            if list(X_dm.design_info.column_names) != self.column_names:  # pragma: no cover - a patsy change
                raise FormulaError("internal error: the design rebuilt on a worker differs from the driver's")
            self._infos = (y_dm.design_info, X_dm.design_info)
        return self._infos

    def count(self, frame: pd.DataFrame) -> int:
        """Rows of the chunk after preparation (missing values refused, made null rows or dropped)."""
        df, _ = self.plan.prepare(frame)
        return int(len(df))

    def _layout(self) -> tuple[list[tuple[slice, str | None]], Any, str | None]:
        """Which design columns are a bare numeric variable (copied directly), the intercept, or need patsy.

        patsy evaluates a bare numeric variable ``x`` (or ``Q("x")``) to the
        column's values converted to float, and the intercept to ones; copying
        them directly gives the same numbers without patsy's per-column
        assembly, which dominates the cost of wide chunks.  Every other term
        (transforms, factors, interactions) is built by patsy on the subset of
        the DesignInfo that holds those terms.
        """
        if getattr(self, "_layout_cache", None) is None:
            y_info, X_info = self.infos()
            cols = set(self.plan.variables)
            direct: list[tuple[slice, str | None]] = []
            rest = []
            for term, sl in X_info.term_slices.items():
                if not term.factors:
                    direct.append((sl, None))
                    continue
                name = _bare_variable(term, X_info, cols)
                if name is not None:
                    direct.append((sl, name))
                else:
                    rest.append(term)
            sub = X_info.subset(rest) if rest else None
            response = _bare_variable(y_info.terms[0], y_info, cols) if len(y_info.terms) == 1 else None
            self._layout_cache = (direct, sub, response)
        return self._layout_cache  # type: ignore[return-value]

    def evaluate(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(X, y) of one chunk, with the public design (null rows NaN); schema violations raise without echoing
        values."""
        df, nulls = self.plan.prepare(frame)
        return self.evaluate_prepared(df, nulls)

    def evaluate_prepared(self, df: pd.DataFrame, nulls: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(X, y) of rows already prepared by the plan; ``nulls`` marks the null rows among them."""
        if len(df) == 0:
            return np.empty((0, self.d)), np.empty(0)
        y_info, X_info = self.infos()
        direct, sub, response = self._layout()
        X = np.empty((len(df), self.d))
        for sl, name in direct:
            X[:, sl.start] = 1.0 if name is None else df[name].to_numpy(dtype=float)
        infos = ([] if response is not None else [y_info]) + ([sub] if sub is not None else [])
        built = self._build(infos, df) if infos else []
        y_dm = np.array(df[response], dtype=float)[:, None] if response is not None else built.pop(0)
        if sub is not None:
            part = np.asarray(built.pop(0), dtype=float)
            for term, sl in sub.term_slices.items():
                X[:, X_info.term_slices[term]] = part[:, sl]
        return _finite_arrays(X, y_dm, self.non_finite_message, nulls)

    def _build(self, infos: list[Any], df: pd.DataFrame) -> list[Any]:
        """patsy's matrices of the prepared rows; any failure becomes a typed error with a public message."""
        try:
            with np.errstate(all="ignore"):  # numpy's warnings would say which rows are out of a domain
                return patsy.build_design_matrices(infos, df, return_type="matrix",
                                                   NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
        except Exception as exc:  # noqa: BLE001 - every failure is reported from public facts only
            error = _sanitised(exc, self.shown)
        raise error


def _bare_variable(term: Any, info: Any, variables: set[str]) -> str | None:
    """The variable name when ``term`` is a single numeric factor that is just a data column, else None."""
    if len(term.factors) != 1:
        return None
    factor = term.factors[0]
    finfo = info.factor_infos[factor]
    if finfo.type != "numerical" or finfo.num_columns != 1:
        return None
    code = factor.code.strip()
    if code in variables:
        return code
    quoted = _quoted_names(code)
    if len(quoted) == 1 and quoted[0] in variables and code.replace(" ", "") in {f'Q("{quoted[0]}")',
                                                                                f"Q('{quoted[0]}')"}:
        return quoted[0]
    return None


class ChunkTask:
    """One chunk: evaluate, rescale publicly, apply ``fn(X, y, offset)``; returns (partial, rows).  Picklable.

    A chunk longer than ``max_rows`` (a large Dask partition) is processed in
    slices of ``max_rows`` rows whose partial results are combined, so the
    working memory of a task is bounded by ``max_rows`` whatever the
    partitioning.
    """

    def __init__(self, evaluator: ChunkEvaluator, scaling: PublicScaling | None,
                 fn: Callable[[np.ndarray, np.ndarray, int], Any], combine: Callable[[Any, Any], Any],
                 max_rows: int = DEFAULT_CHUNK_ROWS, *, zero_null_rows: bool = False) -> None:
        self.evaluator, self.scaling, self.fn, self.combine = evaluator, scaling, fn, combine
        self.max_rows = int(max_rows)
        self.zero_null_rows = zero_null_rows

    def _one(self, frame: pd.DataFrame, offset: int) -> tuple[Any, int]:
        select = getattr(self.fn, "select", None)
        df, nulls = self.evaluator.plan.prepare(frame)
        rows = int(len(df))
        if select is not None:  # the method needs only some rows of the chunk: evaluate only those
            idx = np.asarray(select(offset, rows), dtype=np.int64)
            df, nulls = df.iloc[idx], (None if nulls is None else nulls[idx])
        X, y = self.evaluator.evaluate_prepared(df, nulls)
        if self.scaling is not None:
            X, y = self.scaling.transform(X, y, inplace=True)
        if self.zero_null_rows:
            zero_null_rows(X, y)
        return self.fn(X, y, offset), rows

    def __call__(self, frame: pd.DataFrame, offset: int) -> tuple[Any, int]:
        if len(frame) <= self.max_rows:
            return self._one(frame, offset)
        acc, rows = None, 0
        for start in range(0, len(frame), self.max_rows):
            part, k = self._one(frame.iloc[start:start + self.max_rows], offset + rows)
            acc = part if acc is None else self.combine(acc, part)
            rows += k
        return acc, rows


def zero_null_rows(X: np.ndarray, y: np.ndarray) -> None:
    """Set the public null rows (NaN response, ``missing="drop"``) to zero rows, in place: for a method that gets
    no clip ranges (those that do get them zeroed after clipping, in :meth:`~dpstats.bounds.DataBounds.clip`)."""
    null = np.isnan(y)
    if null.any():
        X[null] = 0.0
        y[null] = 0.0


class ChunkedRows:
    """:class:`~dpstats.methods.sufficient.RowChunks` over a source: what a method sees (numpy chunks only).

    ``zero_null_rows``: the method gets no clip ranges, so the public null
    rows are set to zero here, after the public rescaling (in the units the
    method sees)."""

    def __init__(self, source: DataSource, evaluator: ChunkEvaluator, scaling: PublicScaling | None, n: int,
                 *, zero_null_rows: bool = False) -> None:
        self.source, self.evaluator, self.scaling = source, evaluator, scaling
        self.zero_null_rows = zero_null_rows
        self._n = int(n)
        self._counter = evaluator.count  # one object, so a Dask source reuses its per-partition counts
        self.passes = 0

    @property
    def n(self) -> int:
        return self._n

    @property
    def d(self) -> int:
        return self.evaluator.d

    @property
    def local(self) -> bool:
        """True when the chunks are read in this process (not on a cluster): rows may then be gathered here."""
        return not isinstance(self.source, DaskSource)

    def reduce(self, fn: Callable[[np.ndarray, np.ndarray, int], Any], combine: Callable[[Any, Any], Any],
               *, offsets: bool = True) -> Any:
        task = ChunkTask(self.evaluator, self.scaling, fn, combine, zero_null_rows=self.zero_null_rows)
        result, total = self.source.run(task, combine, self.evaluator.columns, offsets=offsets,
                                        counter=self._counter, raw_offsets=self.evaluator.plan.missing != "drop")
        self.passes += 1
        if total != self._n:
            raise DataTypeError(f"the source gave {total} rows in this pass and {self._n} before: the data changed "
                                "while being read (nothing was released from this pass)")
        return result

    def count(self) -> int:
        return self.source.count(self._counter, self.evaluator.columns)


def _formula_levels(schema: pd.DataFrame, formula: str, levels: Mapping[str, Sequence[Any]] | None
                    ) -> dict[str, Sequence[Any]] | None:
    """Declared levels plus the public categories of schema Categoricals that the formula uses.

    Every chunk is recast to these categories, so a partition whose
    Categorical has other (or fewer) categories cannot change the design.
    """
    out: dict[str, Sequence[Any]] = {}
    try:
        desc = model_desc(expand_formula(formula, [str(c) for c in schema.columns]), shown=formula)
        codes = [f.code for t in [*desc.lhs_termlist, *desc.rhs_termlist] for f in t.factors]
    except DPStatsError:  # the formula layer reports parse errors properly
        return dict(levels) if levels else None
    used = {n for c in codes for n in [*ast_names(c), *_quoted_names(c)]}
    for c in schema.columns:
        if c in used and isinstance(schema[c].dtype, pd.CategoricalDtype):
            out[str(c)] = list(schema[c].cat.categories)
    out.update(levels or {})
    return out or None


class _Runner:
    """Runs the chosen method on the chunked rows (called by the API's pipeline once the method is chosen)."""

    def __init__(self, source: DataSource, evaluator: ChunkEvaluator, design: ChunkedDesign, dlt: float) -> None:
        self.source, self.evaluator, self.design, self.dlt = source, evaluator, design, dlt
        self.stats: SufficientStatistics | None = None
        self.passes = 0

    def statistics(self, spec: MethodSpec, bounds: Any, scaling: PublicScaling | None,
                   options: Mapping[str, Any]) -> SufficientStatistics:
        plan = (spec.plan_statistics(bounds, delta=self.dlt, **options) if spec.plan_statistics is not None
                else StatisticsPlan())
        if self.stats is None:
            task = ChunkTask(self.evaluator, scaling, statistics_of_chunk(bounds, plan), add_statistics,
                             zero_null_rows=self.design.null_rows and bounds is None)
            stats, total = self.source.run(task, add_statistics, self.evaluator.columns, offsets=False)
            self.passes += 1
            if stats is None:
                stats = SufficientStatistics.zeros(self.design.d, label_truncation=plan.label_truncation,
                                                   clipped=bounds is not None)
            if stats.n != total:  # pragma: no cover - a source bug
                raise DataTypeError("internal error: row counts disagree")
            self.stats = stats
        return self.stats

    def __call__(self, spec: MethodSpec, *, ledger: PrivacyLedger, rng: np.random.Generator, bounds: Any,
                 scaling: PublicScaling | None, options: Mapping[str, Any]) -> MethodFit:
        if spec.fit_statistics is not None:
            stats = self.statistics(spec, bounds, scaling, options)
            if stats.n != self.design.n:
                raise DataTypeError(f"the source gave {stats.n} rows in this pass and {self.design.n} before: the "
                                    "data changed while being read (nothing was released)")
            fitted = spec.fit_statistics(stats, ledger=ledger, rng=rng, bounds=bounds, **options)
        elif spec.fit_chunks is not None:
            rows = ChunkedRows(self.source, self.evaluator, scaling, self.design.n,
                               zero_null_rows=self.design.null_rows and bounds is None)
            fitted = spec.fit_chunks(rows, ledger=ledger, rng=rng, bounds=bounds, **options)
            self.passes += rows.passes
        else:  # pragma: no cover - refused before
            raise unsupported(spec)
        fitted.notes = (*fitted.notes, f"data read in chunks ({self.passes + self.count_passes} pass"
                        f"{'es' if self.passes + self.count_passes != 1 else ''} over the data, counting included)")
        return fitted

    count_passes = 0


def unsupported(spec: MethodSpec) -> ChunkedDataNotSupportedError:
    why = spec.chunks_note or (
        "it needs more than sums over rows or a pass per round, and no chunked version has been written for it")
    return ChunkedDataNotSupportedError(
        f"method '{spec.name}' cannot fit data read in chunks (files, Dask) yet: {why}. Methods that can: "
        f"{', '.join(chunked_methods())}. Nothing was read and nothing was spent.")


def fit_chunked(formula: str, data: Any, eps: float, dlt: float, *, spec: MethodSpec | None, method: str,
                bounds: Mapping[str, tuple[float, float]] | None, levels: Mapping[str, Sequence[Any]] | None,
                missing: str, allow_data_levels: bool, rescale: bool, accountant: PrivacyAccountant | None,
                token: str | None, random_state: Any, options: Mapping[str, Any],
                chunksize: int | None) -> Any:
    """The chunked pipeline (module docstring); called by :func:`dpstats.dp_ols` after it reserved the budget.

    Errors raised here are refusals before anything is released (the caller
    settles the reservation at zero); from the method on, the API pipeline
    settles what the ledger spent.
    """
    from dpstats.api import _fit_design, _public_transform  # noqa: PLC0415 - the API imports this module lazily

    if spec is not None and not spec.supports_chunks:
        raise unsupported(spec)
    source = as_source(data, chunksize)
    schema = source.schema()
    design, plan, proto = public_design(formula, schema, bounds=bounds, levels=_formula_levels(schema, formula, levels),
                                        missing=missing, allow_data_levels=allow_data_levels)
    evaluator = ChunkEvaluator(design.formula_expanded, plan, proto, design.column_names, design.response_name,
                               infos=(design.response_info, design.design_info),
                               non_finite_message=design.non_finite_message, shown=formula)
    cdesign = ChunkedDesign(**{k: getattr(design, k) for k in design.__dataclass_fields__})
    cdesign.notes.append(f"data read in chunks from {source.describe()}; every chunk was evaluated with the public "
                         "design built from the schema, and the method used aggregates of the chunks")
    runner = _Runner(source, evaluator, cdesign, dlt)

    n: int | None = None
    if spec is None or spec.fit_statistics is None:
        if spec is not None:
            _public_transform(spec, cdesign, rescale)  # missing bounds are refused before the counting pass
        n = source.known_rows() if plan.missing != "drop" else None
        if n is None and plan.missing != "drop":
            n = source.raw_rows()  # e.g. Dask: a light count of one column
            runner.count_passes = int(n is not None)
        if n is None:
            n = source.count(evaluator.count, evaluator.columns)
            runner.count_passes = 1
    else:
        # a sufficient-statistics method: its one pass over the data also counts the rows; the shape checks
        # then run on that (public) n before anything is released
        data_bounds, scaling = _public_transform(spec, cdesign, rescale)
        opts = dict(options)
        if "intercept_index" in spec.options:
            opts["intercept_index"] = cdesign.column_names.index("Intercept") if cdesign.has_intercept else None
        n = runner.statistics(spec, data_bounds, scaling, opts).n
    cdesign.n_rows = n
    return _fit_design(cdesign, spec, method, eps, dlt, formula=formula, accountant=accountant, token=token,
                       random_state=random_state, rescale=rescale, options=options, runner=runner)
