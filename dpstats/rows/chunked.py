"""Rows read chunk by chunk from a source (CSV/Parquet files, a DataFrame in chunks, a Dask DataFrame).

:class:`ChunkedRows` is the :class:`~dpstats.rows.base.Rows` of a
:class:`~dpstats.rows.sources.DataSource`.  Each pass runs a
:class:`ChunkTask` on every chunk, where the source's chunks live (on a Dask
cluster: on the workers), and only the combined result comes back:

1. the chunk is prepared by the public :class:`~dpstats.formula.frame.FramePlan`
   (declared levels, clipping of raw variables, missing values) and
   evaluated with the public patsy design built from the schema
   (:class:`ChunkEvaluator`), so no chunk can change the design;
2. the public rescaling is applied;
3. the method's pass runs on the numpy arrays.

Privacy: every released quantity is the same function of the data as for
in-memory rows (sums over rows are the same sums, added in another order;
blocks, parts and samples are the same rows, drawn from public n and the
fit's generator), so each method's proof applies unchanged.  Schema
violations (missing values, undeclared levels, non-finite transforms) are
found while the data are read, in the first pass that reads the offending
row, and never echo a value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import pandas as pd
import patsy

from dpstats.errors import DataTypeError, DPStatsError
from dpstats.formula.design import DesignLayout, design_layout, evaluate_design, finite_arrays, rebuild_design_infos
from dpstats.formula.frame import FramePlan, real_numeric_dtype
from dpstats.formula.parse import code_names, expand_formula, formula_literal_levels, model_desc
from dpstats.numbers import numbers_or_missing
from dpstats.rows.base import Combine
from dpstats.rows.sources import DEFAULT_CHUNK_ROWS, DaskSource, DataSource
from dpstats.scaling import PublicScaling

__all__ = ["ApplyKept", "ChunkEvaluator", "ChunkTask", "ChunkedRows", "KeepSelected", "concat_pieces",
           "formula_columns", "formula_levels", "text_level_columns", "zero_null_rows"]

T = TypeVar("T")

class ChunkEvaluator:
    """Evaluates the public design on one chunk: prepare (declared levels, clipping, missing values), then
    ``patsy.build_design_matrices`` with the public DesignInfo.  Picklable, for Dask workers: patsy objects
    cannot be pickled, so a worker rebuilds the DesignInfo from the expanded formula (``formula``: '.' expanded
    and long sums nested, as the driver parsed it) and the one-row public prototype, in dpstats's own formula
    namespace, exactly as the driver built it."""

    def __init__(self, formula: str, plan: FramePlan, prototype: pd.DataFrame, column_names: Sequence[str],
                 response_code: str, infos: tuple[Any, Any] | None = None, *,
                 shown: str | None = None) -> None:
        self.formula = formula
        self.shown = formula if shown is None else shown
        self.plan = plan
        self.prototype = prototype
        self.column_names = list(column_names)
        self.response_code = response_code
        self._infos = infos
        self._layout_cache: DesignLayout | None = None

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
        """(the response's DesignInfo, the right-hand side's), rebuilt once from public facts
        (:func:`dpstats.formula.design.rebuild_design_infos`)."""
        if self._infos is None:
            self._infos = rebuild_design_infos(self.formula, self.prototype, self.column_names, self.shown)
        return self._infos

    def count(self, frame: pd.DataFrame) -> int:
        """Rows of the chunk after preparation (missing values refused, made null rows or dropped)."""
        df, _ = self.plan.prepare(self.as_schema(frame))
        return int(len(df))

    def as_schema(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The chunk with every variable whose public type (the prototype's, from the schema) is a number, but whose
        chunk holds another type, read element by element as numbers (:func:`dpstats.numbers.numbers_or_missing`:
        an element that is not a number is missing, for the missing-value screen; for a boolean variable, an
        element that is not 0 or 1 is missing).  A chunk's type can differ from
        the schema's where the source infers it from the chunk's own rows (a Dask partition whose computed dtype is
        not its ``_meta``'s: one text cell makes it ``object``); converting such a chunk to floats as a whole failed
        on its first element that was not a number, a refusal decided by one row and spending nothing."""
        changed = {}
        for v in self.plan.variables:
            if v not in frame.columns or v not in self.prototype.columns:
                continue
            public, own = self.prototype[v].dtype, frame[v].dtype
            if pd.api.types.is_bool_dtype(public):
                if not pd.api.types.is_bool_dtype(own):  # 0 or 1 (False, True, 1.0, "1") is its bool, else missing
                    values = numbers_or_missing(frame[v])
                    changed[v] = pd.Series(pd.array(values == 1.0, dtype="boolean"), index=frame.index).mask(
                        (values != 0.0) & (values != 1.0))
            elif real_numeric_dtype(public) and not real_numeric_dtype(own):
                changed[v] = pd.Series(numbers_or_missing(frame[v]), index=frame.index)
        return frame.assign(**changed) if changed else frame

    def _layout(self) -> DesignLayout:
        """Which design columns are copied from the chunk and which patsy builds (:func:`design_layout`), once."""
        if self._layout_cache is None:
            self._layout_cache = design_layout(*self.infos(), set(self.plan.variables))
        return self._layout_cache

    def evaluate(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """(X, y) of one chunk, with the public design (null rows NaN); schema violations raise without echoing
        values."""
        df, nulls = self.plan.prepare(self.as_schema(frame))
        return self.evaluate_prepared(df, nulls)

    def evaluate_prepared(self, df: pd.DataFrame, nulls: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(X, y) of rows already prepared by the plan; ``nulls`` marks the null rows among them."""
        if len(df) == 0:
            return np.empty((0, self.d)), np.empty(0)
        y_info, X_info = self.infos()
        X, y = evaluate_design(self._layout(), y_info, X_info, df, self.shown)
        return finite_arrays(X, y, nulls)


class ChunkTask:
    """One chunk: evaluate, rescale publicly, apply ``pass_fn(X, y, offset)``; returns (partial, rows).  Picklable.

    A chunk longer than ``max_rows`` (a large Dask partition) is processed in
    slices of ``max_rows`` rows whose partial results are combined, so the
    working memory of a task is bounded by ``max_rows`` whatever the
    partitioning.  ``zero_null_rows``: the public null rows (``missing="drop"``) are set to zero rows after
    the rescaling, for a method that gets no clip ranges (clipping zeroes them otherwise).  ``count_nulls``: the
    partial result is (the pass's partial, the number of null rows), combined by :class:`WithNullCount` (for the
    missing-value screen; a pass over every row only).
    """

    def __init__(self, evaluator: ChunkEvaluator, scaling: PublicScaling | None,
                 pass_fn: Callable[[np.ndarray, np.ndarray, int], Any], combine: Callable[[Any, Any], Any],
                 max_rows: int = DEFAULT_CHUNK_ROWS, *, zero_null_rows: bool = False, count_nulls: bool = False
                 ) -> None:
        self.evaluator, self.scaling, self.pass_fn = evaluator, scaling, pass_fn
        self.combine = WithNullCount(combine) if count_nulls else combine
        self.max_rows = int(max_rows)
        self.zero_null_rows, self.count_nulls = zero_null_rows, count_nulls

    def _one(self, frame: pd.DataFrame, offset: int) -> tuple[Any, int]:
        select = getattr(self.pass_fn, "select", None)
        df, nulls = self.evaluator.plan.prepare(self.evaluator.as_schema(frame))
        rows = int(len(df))
        if select is not None:  # the method needs only some rows of the chunk: evaluate only those
            idx = np.asarray(select(offset, rows), dtype=np.int64)
            df, nulls = df.iloc[idx], (None if nulls is None else nulls[idx])
        X, y = self.evaluator.evaluate_prepared(df, nulls)
        null_count = int(np.count_nonzero(np.isnan(y))) if self.count_nulls else 0
        if self.scaling is not None:
            X, y = self.scaling.transform(X, y, inplace=True)
        if self.zero_null_rows:
            zero_null_rows(X, y)
        part = self.pass_fn(X, y, offset)
        return ((part, null_count) if self.count_nulls else part), rows

    def __call__(self, frame: pd.DataFrame, offset: int) -> tuple[Any, int]:
        if len(frame) <= self.max_rows:
            return self._one(frame, offset)
        acc, rows = None, 0
        for start in range(0, len(frame), self.max_rows):
            part, k = self._one(frame.iloc[start:start + self.max_rows], offset + rows)
            acc = part if acc is None else self.combine(acc, part)
            rows += k
        return acc, rows


class WithNullCount:
    """The combine of a pass that also counts the public null rows: (partial, count) pairs, the partials combined by
    the pass's own ``combine`` and the counts added (picklable)."""

    def __init__(self, combine: Callable[[Any, Any], Any]) -> None:
        self.combine = combine

    def __call__(self, a: tuple[Any, int], b: tuple[Any, int]) -> tuple[Any, int]:
        return self.combine(a[0], b[0]), a[1] + b[1]


class KeepSelected:
    """A pass that keeps the rows another pass selects: [(X, y, offset)] of each chunk's selected rows (picklable;
    combined by :func:`concat_pieces`).

    Parameters
    ----------
    select : callable
        The other pass's ``select(offset, count)``.
    """

    def __init__(self, select: Callable[[int, int], np.ndarray]) -> None:
        self.select = select

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
        return [(X, y, offset)]


class DomainCheck:
    """A pass that releases nothing and returns 0: run by :meth:`ChunkedRows.check_every_row`, it makes every row
    go through the public design, whose evaluation refuses a row outside the guarantee's domain (picklable)."""

    uses_offset = False

    def __call__(self, X: np.ndarray, y: np.ndarray, offset: int) -> int:
        return 0


def add_zeros(a: int, b: int) -> int:
    """combine of :class:`DomainCheck`."""
    return a + b


def concat_pieces(a: list[Any], b: list[Any]) -> list[Any]:
    """combine of :class:`KeepSelected`: the pieces in row order."""
    return a + b


class ApplyKept:
    """fn((pieces, rows)) -> (``pass_fn`` on each kept piece, combined in row order, rows): a pass with a
    ``selection`` run on the rows :class:`KeepSelected` kept, as it would run on the chunks (picklable).  Each
    piece is handed as read-only views (it is read again by later passes)."""

    def __init__(self, pass_fn: Callable[[np.ndarray, np.ndarray, int], Any], combine: Callable[[Any, Any], Any]
                 ) -> None:
        self.pass_fn, self.combine = pass_fn, combine

    def __call__(self, kept: tuple[list[tuple[np.ndarray, np.ndarray, int]], int]) -> tuple[Any, int]:
        pieces, rows = kept
        acc = None
        for X, y, offset in pieces:
            part = self.pass_fn(_read_only(X), _read_only(y), offset)
            acc = part if acc is None else self.combine(acc, part)
        return acc, rows


def _read_only(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


def zero_null_rows(X: np.ndarray, y: np.ndarray) -> None:
    """Set the public null rows (NaN response, ``missing="drop"``) to zero rows, in place: for a method that gets
    no clip ranges (those that do get them zeroed after clipping, in :meth:`~dpstats.bounds.DataBounds.clip`)."""
    null = np.isnan(y)
    if null.any():
        X[null] = 0.0
        y[null] = 0.0


class ChunkedRows:
    """:class:`~dpstats.rows.base.Rows` over a source: what a method sees (numpy chunks only).

    ``n`` is fixed before the method runs: from the source's metadata, a
    counting pass, or :meth:`prime`.  Every pass checks that the source still
    gives n rows.  ``passes`` counts the passes over the data (a pass served
    by :meth:`prime`'s result is not read again).  ``zero_null_rows``: the
    method gets no clip ranges, so the public null rows are set to zero in
    each chunk (:class:`ChunkTask`).  ``null_count``: with the plan's
    ``missing="screen"``, the number of public null rows, counted by the
    first pass over every row (None before; private, read only by the
    fit's charged missing-value screen).
    """

    def __init__(self, source: DataSource, evaluator: ChunkEvaluator, scaling: PublicScaling | None,
                 n: int | None = None, *, zero_null_rows: bool = False) -> None:
        self.source, self.evaluator, self.scaling = source, evaluator, scaling
        self.zero_null_rows = zero_null_rows
        self._n = None if n is None else int(n)
        self._counter = evaluator.count  # one object, so a Dask source reuses its per-partition counts
        self._primed: tuple[Any, Any] | None = None
        self._kept: tuple[Any, Any, bool, list[Any]] | None = None  # (selection, scaling, zero_null_rows, kept)
        self._checked = False
        self.passes = 0
        self.null_count: int | None = None

    @property
    def n(self) -> int:
        if self._n is None:
            raise RuntimeError("the number of rows is not known yet: count() or prime() first")
        return self._n

    @property
    def counted(self) -> bool:
        """True once n is fixed."""
        return self._n is not None

    @property
    def d(self) -> int:
        return self.evaluator.d

    @property
    def local(self) -> bool:
        """True when the chunks are read in this process (not on a cluster): rows may then be gathered here."""
        return not isinstance(self.source, DaskSource)

    def _run(self, pass_fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Combine[T]) -> tuple[T, int]:
        selection = getattr(pass_fn, "selection", None)
        if selection is not None and hasattr(self.source, "keep"):
            return self._run_selected(selection, pass_fn, combine)
        self._kept = None  # a pass over every row: the kept rows of earlier passes are released
        offsets = bool(getattr(pass_fn, "uses_offset", True))
        count = (self.evaluator.plan.missing == "screen" and self.null_count is None
                 and getattr(pass_fn, "select", None) is None)
        task = ChunkTask(self.evaluator, self.scaling, pass_fn, combine, zero_null_rows=self.zero_null_rows,
                         count_nulls=count)
        result, total = self.source.run(task, task.combine, self.evaluator.columns, offsets=offsets,
                                        counter=self._counter, raw_offsets=self._keeps_rows)
        self.passes += 1
        if count:
            result, self.null_count = result if result is not None else (None, 0)
        return result, total

    def _run_selected(self, selection: Any, pass_fn: Callable[[np.ndarray, np.ndarray, int], T],
                      combine: Combine[T]) -> tuple[T, int]:
        """A pass with a ``selection`` on a source that keeps rows (a cluster): the first such pass reads the
        data and keeps the selected rows where they were read (:class:`KeepSelected`); it and later passes with
        the same selection (the same object) run on the kept rows, so the data are read once for them all.  The
        kept rows are released by the next pass over every row."""
        kept = self._kept
        if kept is None or kept[0] is not selection or kept[1] is not self.scaling or kept[2] != self.zero_null_rows:
            task = ChunkTask(self.evaluator, self.scaling, KeepSelected(pass_fn.select),  # type: ignore[attr-defined]
                             concat_pieces, zero_null_rows=self.zero_null_rows)
            parts = self.source.keep(task, self.evaluator.columns, offsets=True,  # type: ignore[attr-defined]
                                     counter=self._counter, raw_offsets=self._keeps_rows)
            kept = self._kept = (selection, self.scaling, self.zero_null_rows, parts)
            self.passes += 1
        result, total = self.source.run_kept(kept[3], ApplyKept(pass_fn, combine), combine)  # type: ignore[attr-defined]
        return result, total

    def reduce(self, pass_fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Combine[T]) -> T:
        """``pass_fn`` on every chunk, combined in row order (see :mod:`dpstats.rows.base`)."""
        if self._primed is not None and self._primed[0] == pass_fn:
            result = self._primed[1]
            self._primed = None
            return result
        result, total = self._run(pass_fn, combine)
        if total != self.n:
            raise DataTypeError(f"the source gave {total} rows in this pass and {self.n} before: the data changed "
                                "while being read (nothing was released from this pass)")
        return result

    def prime(self, pass_fn: Callable[[np.ndarray, np.ndarray, int], T], combine: Combine[T]) -> int:
        """Run a method's first pass while the number of rows is not known yet, and keep its result for the
        method's own first :meth:`reduce` of an equal pass; returns n.

        Used for one-pass methods on sources that know their row count only
        after reading (CSV files, Dask): the pass that computes the method's
        statistics also counts the rows, so the data are read once.  Such a
        pass should not use the chunks' offsets (``uses_offset = False``):
        where rows may be dropped, offsets would need a count first.
        """
        result, total = self._run(pass_fn, combine)
        self._n = int(total)
        self._primed = (pass_fn, result)
        return self._n

    @property
    def _keeps_rows(self) -> bool:
        """Preparation keeps every raw row (missing values are refused, or made public null rows)."""
        return self.evaluator.plan.missing != "drop"

    def free_count(self) -> int | None:
        """n if it is fixed already, or from the source's metadata without reading (when preparation drops no
        row); None when only a pass over the data can tell."""
        if self._n is None and self._keeps_rows:
            known = self.source.known_rows()
            self._n = None if known is None else int(known)
        return self._n

    @property
    def checked(self) -> bool:
        """True once :meth:`check_every_row` has run."""
        return self._checked

    def check_every_row(self) -> int:
        """One pass that evaluates every row through the public design and releases nothing (:class:`DomainCheck`);
        fixes n if it is not fixed yet, and returns it.

        Run before a method that reads some rows only in later passes (a sample, a part) releases anything: a
        row outside the guarantee's domain (a missing value with ``missing="raise"``, a value outside the declared
        levels, a non-finite variable or transform) is then refused before any release, as in memory, whichever
        rows the method's passes read.
        """
        result, total = self._run(DomainCheck(), add_zeros)
        if self._n is not None and total != self._n:
            raise DataTypeError(f"the source gave {total} rows in this pass and {self._n} before: the data changed "
                                "while being read (nothing was released from this pass)")
        self._n, self._checked = int(total), True
        return self._n

    def count(self) -> int:
        """Fix n by a counting pass over the prepared rows (or the source's cheap raw count when preparation
        drops no row); returns n."""
        n = self.free_count()
        if n is not None:
            return n
        if self._keeps_rows:
            n = self.source.raw_rows()  # e.g. Dask: a light count of one column
            self.passes += int(n is not None)
        if n is None:
            n = self.source.count(self._counter, self.evaluator.columns)
            self.passes += 1
        self._n = int(n)
        return self._n


def _formula_codes(schema: pd.DataFrame, formula: str) -> tuple[list[str], set[str]] | None:
    """The factor codes of the formula on the schema's columns and the names they read, or None when it does not
    parse (the formula layer then reports the parse error or the disallowed code properly)."""
    try:
        desc = model_desc(expand_formula(formula, [str(c) for c in schema.columns]), shown=formula)
        codes = [f.code for t in [*desc.lhs_termlist, *desc.rhs_termlist] for f in t.factors]
        return codes, {n for c in codes for n in code_names(c)}
    except (DPStatsError, patsy.PatsyError, SyntaxError):  # a code patsy accepts but Python does not (x %in% g)
        return None


def formula_columns(schema: pd.DataFrame, formula: str) -> list[str]:
    """The schema's columns that the formula reads (every column when it does not parse), in schema order."""
    parsed = _formula_codes(schema, formula)
    return [str(c) for c in schema.columns if parsed is None or c in parsed[1]]


def text_level_columns(schema: pd.DataFrame, formula: str, levels: Mapping[str, Sequence[Any]] | None
                       ) -> dict[str, tuple[str, ...]]:
    """The columns whose declared levels (``levels=`` or a literal ``C(g, levels=[...])`` of the formula) include
    text, each with its declared text levels: a source that stores no types reads them as text, and never reads
    a declared level as missing (:meth:`DataSource.with_text_columns`).

    Decided from the formula and the declarations alone, so a column's type never depends on the data.
    """
    parsed = _formula_codes(schema, formula)
    declared: dict[str, Sequence[Any]] = dict(formula_literal_levels(parsed[0] if parsed else []))
    declared.update(levels or {})
    # a declaration that is not a list of levels (a number, a set, a generator) is refused by the formula layer
    # with what to fix (schema.declared_level_values); here it names no text column (iterating it raised TypeError)
    return {c: tuple(v for v in lv if isinstance(v, str)) for c, lv in declared.items()
            if _level_collection(lv) and any(isinstance(v, str) for v in lv)}


def _level_collection(value: Any) -> bool:
    """Whether a declaration of levels is an ordered collection that the formula layer reads as levels (as
    ``schema._level_list``: a sequence but not text, a pandas Index, Series or Categorical, a 1-d array)."""
    if isinstance(value, (str, bytes)):
        return False
    return isinstance(value, (Sequence, pd.Index, pd.Series, pd.Categorical)) or (
        isinstance(value, np.ndarray) and value.ndim == 1)


def formula_levels(schema: pd.DataFrame, formula: str, levels: Mapping[str, Sequence[Any]] | None
                    ) -> dict[str, Sequence[Any]] | None:
    """Declared levels plus the public categories of schema Categoricals that the formula uses.

    Every chunk is recast to these categories, so a partition whose
    Categorical has other (or fewer) categories cannot change the design.
    """
    out: dict[str, Sequence[Any]] = {}
    parsed = _formula_codes(schema, formula)
    if parsed is None:
        return dict(levels) if levels else None
    used = parsed[1]
    for c in schema.columns:
        if c in used and isinstance(schema[c].dtype, pd.CategoricalDtype):
            out[str(c)] = list(schema[c].cat.categories)
    out.update(levels or {})
    return out or None
