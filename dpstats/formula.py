"""Formula + data -> public design (X, y, design_info) and per-column bounds.

This layer never draws noise.  It guarantees that the *shape* of the design is
a function of public facts only:

* factor levels come from the formula (``C(g, levels=[...])``), from the
  ``levels=`` argument, or from a declared schema (a pandas ``Categorical``
  dtype, or ``bool``), never from the values present in the data, unless the
  user opts in with ``allow_data_levels=True`` (reported as a leak);
* factor code is row-wise: it is checked against the allow-list of
  :mod:`dpstats.formula_language` before any data are read and evaluated in
  dpstats's own namespace, never the caller's;
* errors are decided from the schema (column names, dtypes, the formula, the
  declared bounds: a transform undefined inside the declared bounds of its
  variables is refused before any data are read); the few that depend on
  values (missing values, values outside declared levels, non-finite values
  where no bound settles the transform) are checks of the public domain and
  never echo a value or a count (``docs/privacy.md``);
* ``missing="drop"`` keeps n public in a private fit: incomplete rows become
  public null rows (see :func:`build_design`).

Bounds given on raw variables are pushed through the factor code by interval
arithmetic (:mod:`dpstats.bounds`) to a clip range per design column.  A bound
may also be keyed by a design column (``"np.log(x)"``) or by the response as
patsy writes it (``"I(a / (a + b))"``); a declared bound wins over the derived
one.  When a range is missing, :class:`MissingBoundsError` asks for the raw
variables whose bounds would derive it first, and names a design column (or
the response code) only when no variable bounds can derive its range.

Columns with pandas extension dtypes (nullable ``boolean``, ``Int64``,
``Float64``, ``string``) are read like their numpy counterparts, ``pd.NA``
being a missing value.
"""

from __future__ import annotations

import ast
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import patsy
from patsy.eval import ast_names

from dpstats.bounds import (
    DataBounds, Interval, IntervalError, UnsupportedExpressionError, domain_requirements, domain_violation,
    interval_of_code,
)
from dpstats.errors import (
    DataTypeError, DPStatsError, FormulaError, InvalidBoundsError, MissingBoundsError, MissingDataError,
    NonFiniteValueError, TransformDomainError, UndeclaredLevelsError, UnknownColumnError, UnseenLevelError,
)
from dpstats.formula_language import (
    FORMULA_ENV, FactorFacts, check_factor, check_numeric_dtypes, expand_formula, model_desc,
)
from dpstats.validation import check_bounds_pair

__all__ = ["Design", "FramePlan", "build_design", "public_design", "design_matrix_for_prediction"]


@dataclass
class Design:
    """The public design of a fit and the (private) arrays it produced."""

    X: np.ndarray
    y: np.ndarray
    column_names: list[str]
    response_name: str
    design_info: Any  # patsy.DesignInfo of the right-hand side
    column_intervals: list[Interval | None]
    response_interval: Interval | None
    missing_bounds: list[str]
    notes: list[str] = field(default_factory=list)
    numeric_variables: list[str] = field(default_factory=list)
    response_info: Any = None  # patsy.DesignInfo of the left-hand side (used to evaluate chunks)
    # what to declare for the missing ranges: raw variables whose bounds derive them, then the
    # (design column or response code, reason) pairs whose range cannot be derived from variable bounds
    bound_variables: list[str] = field(default_factory=list)
    underivable_bounds: list[tuple[str, str]] = field(default_factory=list)
    # missing="drop" for a private fit: rows with a missing value are public null rows, NaN in X and y here (the
    # mask itself is private: it is never stored, only the NaN marks, which DataBounds.clip turns into zeros)
    null_rows: bool = False
    formula_expanded: str = ""  # the formula as patsy parses it ('.' expanded, long sums nested); for workers
    non_finite_message: str = ""  # the public refusal for a non-finite value (the same for every value and row)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def has_intercept(self) -> bool:
        return "Intercept" in self.column_names

    def bounds_to_declare(self) -> list[str]:
        """The ``bounds=`` keys that would give every column and the response a range: raw variables first,
        then the design columns (or the response code) whose range cannot be derived from variable bounds."""
        keys = [*self.bound_variables, *(k for k, _ in self.underivable_bounds)]
        return keys or list(self.missing_bounds)

    def data_bounds(self) -> DataBounds:
        """The clip ranges, or MissingBoundsError naming what to declare."""
        if self.missing_bounds:
            raise MissingBoundsError(_missing_bounds_message(self))
        return DataBounds(
            column_lo=np.array([iv.lo for iv in self.column_intervals], dtype=float),  # type: ignore[union-attr]
            column_hi=np.array([iv.hi for iv in self.column_intervals], dtype=float),  # type: ignore[union-attr]
            y_lo=self.response_interval.lo, y_hi=self.response_interval.hi,  # type: ignore[union-attr]
            null_rows=self.null_rows,
        )


def _missing_bounds_message(design: Design) -> str:
    """What to declare, raw variables first (a derived column's range follows from its variables' bounds)."""
    head = ("this method needs public bounds on every design column and on the response, declared from domain "
            "knowledge (never from the data).")
    if not (design.bound_variables or design.underivable_bounds):  # a design given as arrays
        example = ", ".join(f"'{v}': (lo, hi)" for v in design.numeric_variables[:3]) or "'x': (lo, hi)"
        return (f"{head} None can be derived for: {', '.join(design.missing_bounds)}. Declare them on raw "
                f"variables or on design columns, e.g. bounds={{{example}}}; or choose a method that needs no bounds.")
    response = f"{design.response_name} (response)"
    hard = [k for k, _ in design.underivable_bounds]
    transformed_response = response in design.missing_bounds and design.response_name not in design.numeric_variables
    parts = [head]
    if design.bound_variables:
        derived = [m for m in design.missing_bounds
                   if m not in hard and m not in design.bound_variables and m != response]
        if transformed_response and design.response_name not in hard:
            derived.append(f"the response {design.response_name}")
        then = f" (the ranges of {', '.join(derived)} are then derived from them)" if derived else ""
        parts.append(f"Declare bounds on the variables {', '.join(design.bound_variables)}{then}.")
    if hard:
        why = "; ".join(f"{k} ({reason})" for k, reason in design.underivable_bounds)
        parts.append(f"No range can be derived from variable bounds for {why}: declare "
                     f"{'it' if len(hard) == 1 else 'them'} by name as written here.")
    if transformed_response and design.response_name not in hard:
        parts.append(f"A transformed response can also be bounded by its code: "
                     f"bounds={{'{design.response_name}': (lo, hi)}}.")
    example = ", ".join(f"'{k}': (lo, hi)" for k in design.bounds_to_declare()[:4])
    parts.append(f"E.g. bounds={{{example}}}; or choose a method that needs no bounds.")
    return " ".join(parts)


def _as_frame(data: Any) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Mapping):
        frame = _frame_from_mapping(data)
        if frame is None:
            raise DataTypeError("data is a dict whose arrays cannot form a table (their lengths or shapes differ); "
                                "pass equal-length 1-d arrays")
        return frame
    raise DataTypeError(f"data must be a pandas DataFrame or a dict of equal-length arrays, got {type(data).__name__}")


def _frame_from_mapping(data: Mapping[str, Any]) -> pd.DataFrame | None:
    """A DataFrame of the mapping's arrays, or None (pandas' message is not passed on: it may quote values)."""
    try:
        return pd.DataFrame({k: np.asarray(v) if not isinstance(v, pd.Series) else v for k, v in data.items()})
    except (ValueError, TypeError):
        return None


def _factor_calls(code: str) -> list[ast.Call]:
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return []
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _quoted_names(code: str) -> list[str]:
    """Column names quoted with patsy's Q("name") (for names that are not Python identifiers)."""
    return [c.args[0].value for c in _factor_calls(code)
            if _call_name(c) == "Q" and len(c.args) == 1 and isinstance(c.args[0], ast.Constant)
            and isinstance(c.args[0].value, str)]


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute):
        return f.attr
    return None


def _declares_levels(code: str) -> bool:
    return any(_call_name(c) == "C" and any(k.arg == "levels" for k in c.keywords) for c in _factor_calls(code))


def _is_schema_categorical(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(series.dtype)


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)


@dataclass(frozen=True)
class FramePlan:
    """How a data frame (the whole data, or one chunk of it) is prepared for the public design.

    Decided from the formula, the declared levels and bounds and the schema
    only, and picklable (it holds no patsy objects), so every chunk and every
    worker of a cluster prepares its rows identically:

    * keep the variables the formula uses; a boolean response becomes 0/1;
    * variables with declared levels become pandas Categoricals with exactly
      those categories, and variables whose levels are written in the formula
      (``C(g, levels=[...])``) are checked against them (a value outside them
      is a schema violation, refused without naming the value);
    * raw variables that enter a transform are clipped to their declared
      range (``clip``), so the transform is evaluated inside the range on
      which its domain was checked;
    * missing values: ``"raise"`` (a schema violation), ``"null"`` (a row
      with a missing value becomes the public null row ``fill``, evaluated
      like any row and then marked, see :func:`build_design`) or ``"drop"``
      (the rows are removed: only for the non-private reference ``ols``,
      whose n need not be protected).
    """

    variables: tuple[str, ...]
    bool_responses: tuple[str, ...] = ()
    levels: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    clip: tuple[tuple[str, float, float], ...] = ()
    missing: str = "raise"
    allowed: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    fill: tuple[tuple[str, Any], ...] = ()

    def prepare(self, df: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray | None]:
        """The prepared frame and, with ``missing="null"``, the mask of its null rows (None when it has none).

        Missing values (NaN, None, ``pd.NA``) are handled first, so that the
        columns with a pandas extension dtype (nullable ``boolean``, ``Int64``,
        ``Float64``, ``string``, Arrow-backed) can then be given the numpy
        dtype patsy understands (:func:`_numpy_columns`).
        """
        variables = list(self.variables)
        if variables and list(df.columns) != variables:  # (a column list copies a consolidated frame's block)
            df = df[variables]
        nulls = None
        bad = [str(v) for v in variables if df[v].hasnans]
        if bad:
            if self.missing == "raise":
                raise MissingDataError(
                    f"missing values in {', '.join(bad)}. Impute them with a public rule, or pass missing='drop' "
                    "(each incomplete row then becomes a public null row that adds nothing to the fit; n stays "
                    "public and the number of complete rows private).")
            if self.missing == "drop":
                df = df.dropna(subset=variables)
            else:
                df, nulls = self._null_rows(df, bad)
        df = _numpy_columns(df, variables)
        if self.bool_responses or self.levels or self.clip:
            df = df.copy(deep=False)
        for v in self.bool_responses:  # a binary response is a linear probability model: False/True -> 0/1
            df[v] = df[v].astype(float)
        for var, lv in self.levels:
            _check_in_levels(df[var], var, lv)
            df[var] = pd.Categorical(df[var], categories=list(lv))
        for var, lv in self.allowed:
            _check_in_levels(df[var], var, lv)
        for var, lo, hi in self.clip:
            df[var] = np.clip(df[var].to_numpy(dtype=float), lo, hi)
        return df, nulls

    def _null_rows(self, df: pd.DataFrame, bad: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
        """``df`` with every row that has a missing value replaced by the public null row, and their mask."""
        nulls = df[list(bad)].isna().any(axis=1).to_numpy()
        fill = dict(self.fill)
        out = df.copy()
        for v in self.variables:
            value = fill.get(v)
            if value is None:  # text without declared levels (allow_data_levels=True): a value the column has
                present = out.loc[~nulls, v]
                value = present.iloc[0] if len(present) else ""
            if isinstance(out[v].dtype, pd.CategoricalDtype) and value not in out[v].cat.categories:
                out[v] = out[v].cat.add_categories([value])  # a declared level the schema's categories lack
            out.loc[nulls, v] = value
        return out, nulls


def _check_in_levels(col: pd.Series, var: str, levels: Sequence[Any]) -> None:
    if not bool(col.isin(list(levels)).all()):
        raise FormulaError(
            f"variable '{var}' has values outside its declared levels (the declared schema is violated). "
            "Fix the data or the declared levels.")


def _numpy_columns(df: pd.DataFrame, variables: Sequence[str]) -> pd.DataFrame:
    """``df`` with its pandas extension-dtype columns among ``variables`` given numpy dtypes patsy can read.

    Nullable ``boolean`` becomes ``bool`` (so it is a declared two-level
    factor, as ``bool`` is), nullable integers and floats (``Int64``,
    ``Float64``, Arrow-backed numbers) their numpy counterparts, ``string``
    becomes ``object``.  A decision on the dtype alone (schema); the columns
    must hold no missing values (they are checked before).  Categoricals and
    numpy columns are left alone, and ``df`` is returned as it is when no
    column needs converting.
    """
    converted: dict[str, Any] = {}
    for v in variables:
        dt = df[v].dtype
        if not isinstance(dt, pd.api.extensions.ExtensionDtype) or isinstance(dt, pd.CategoricalDtype):
            continue
        numpy_dtype = getattr(dt, "numpy_dtype", None)
        if numpy_dtype is not None and (pd.api.types.is_bool_dtype(dt) or pd.api.types.is_numeric_dtype(dt)):
            converted[v] = df[v].to_numpy(dtype=numpy_dtype)
        elif pd.api.types.is_string_dtype(dt):
            converted[v] = df[v].to_numpy(dtype=object)
    if not converted:
        return df
    out = df.copy(deep=False)
    for v, values in converted.items():
        out[v] = values
    return out


@dataclass
class _Parsed:
    """The public facts of a formula checked against a schema (column names and dtypes)."""

    desc: Any
    expanded: str  # the formula with '.' expanded and long sums nested (what patsy parses; workers parse it too)
    response_code: str
    factor_codes: list[str]
    columns: set[str]
    plan: FramePlan
    schema: pd.DataFrame  # zero rows, the prepared dtypes
    facts: dict[str, FactorFacts]

    @property
    def non_finite_message(self) -> str:
        """The refusal for a non-finite value: the same whatever value or row caused it (public: the formula)."""
        return non_finite_message([self.response_code, *self.factor_codes])


def non_finite_message(codes: Sequence[str]) -> str:
    """The message of :class:`~dpstats.errors.NonFiniteValueError`, built from the formula's codes alone."""
    reqs = list(dict.fromkeys(r for code in codes for r in domain_requirements(code)))
    domain = f"; its transforms need {'; '.join(reqs)}" if reqs else ""
    return ("a variable or a transform of the formula is not finite (inf or NaN) on some row. The guarantee covers "
            f"data sets on which every variable the formula uses is finite{domain}. Declare bounds on these "
            "variables (values are then clipped into them, and each transform is checked on the bounds before any "
            "data are read), or transform the data with a public rule first. This message is the same whatever "
            "value or row caused it.")


def _parse(formula: str, df: pd.DataFrame, *, bounds: Mapping[str, tuple[float, float]] | None,
           levels: Mapping[str, Sequence[Any]] | None, missing: str) -> _Parsed:
    """Every check that needs only the formula, the declared levels and bounds, and the schema of ``df``."""
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    column_list = [str(c) for c in df.columns]
    columns = set(column_list)
    expanded = expand_formula(formula, column_list)
    desc = model_desc(expanded, shown=formula)
    if len(desc.lhs_termlist) != 1 or len(desc.lhs_termlist[0].factors) != 1:
        raise FormulaError("the formula needs exactly one response on the left of '~', e.g. 'y ~ x'")
    if not desc.rhs_termlist:
        raise FormulaError("the formula has no columns on the right of '~'; add terms or an intercept ('y ~ 1')")
    if missing not in {"raise", "drop", "null"}:
        raise FormulaError("missing must be 'raise' (default) or 'drop'")

    response_code = desc.lhs_termlist[0].factors[0].code
    factor_codes = list(dict.fromkeys(f.code for t in desc.rhs_termlist for f in t.factors))
    facts = {code: check_factor(code, column_list) for code in dict.fromkeys([response_code, *factor_codes])}
    variables = list(dict.fromkeys(v for f in facts.values() for v in f.variables))
    _check_column_names(desc, columns)
    _check_formula_levels(factor_codes)

    response_vars = facts[response_code].variables
    bool_responses = [v for v in response_vars if pd.api.types.is_bool_dtype(df[v].dtype)]
    for v in response_vars:
        if not (_is_numeric(df[v]) or v in bool_responses):
            raise DataTypeError(f"the response '{v}' must be numeric (its dtype is {df[v].dtype}); "
                                "code a categorical outcome as 0/1 with a public rule")
    declared = _declared_levels(levels, variables, df)
    leveled = {v for v, _ in declared}
    clip = _clip_ranges(bounds or {}, facts.values(), variables, df, bool_responses, leveled)
    allowed = [(v, lv) for v, lv in _formula_literal_levels(factor_codes).items() if v in columns and v not in leveled]
    fill = _null_fill(df, bounds or {}, declared, factor_codes) if missing == "null" else ()
    plan = FramePlan(tuple(variables), tuple(bool_responses), tuple(declared), tuple(clip), missing,
                     tuple(allowed), tuple(fill))
    schema, _ = plan.prepare(df.iloc[:0])
    check_numeric_dtypes(facts.values(), schema)
    _check_transform_domains(facts.values(), bounds or {}, schema)
    return _Parsed(desc, expanded, response_code, factor_codes, columns, plan, schema, facts)


def _declared_levels(levels: Mapping[str, Sequence[Any]] | None, variables: Sequence[str],
                     df: pd.DataFrame) -> list[tuple[str, tuple[Any, ...]]]:
    declared: list[tuple[str, tuple[Any, ...]]] = []
    for var, lv in (levels or {}).items():
        if var not in variables:
            raise UnknownColumnError(f"levels= names '{var}', which is not a column of the data; "
                                     f"columns are: {', '.join(map(str, variables or df.columns))}")
        lv = list(lv)
        if len(lv) == 0 or len(set(lv)) != len(lv):
            raise FormulaError(f"levels for '{var}' must be a non-empty list of distinct values")
        declared.append((var, tuple(lv)))
    return declared


def _clip_ranges(bounds: Mapping[str, tuple[float, float]], facts: Iterable[FactorFacts], variables: Sequence[str],
                 df: pd.DataFrame, bool_responses: Sequence[str], leveled: set[str]) -> list[tuple[str, float, float]]:
    """The declared ranges of the raw variables that enter a transform (they are clipped before it is evaluated).

    Every declared bound is validated here.  Bare variables are not clipped
    here: methods that need bounds clip the design columns themselves.
    """
    for key, val in bounds.items():
        _as_interval(key, val)
    facts = list(facts)
    transformed = {v for f in facts for v in f.variables if f.code.strip() != v}
    clip: list[tuple[str, float, float]] = []
    for k, v in bounds.items():
        if k not in variables:
            continue
        numeric = (_is_numeric(df[k]) or k in bool_responses) and k not in leveled
        if not numeric:
            raise InvalidBoundsError(f"bounds were given for '{k}', which is not numeric; factors are bounded "
                                     "automatically")
        if k in transformed:
            iv = _as_interval(k, v)
            clip.append((k, iv.lo, iv.hi))
    return clip


def _check_transform_domains(facts: Iterable[FactorFacts], bounds: Mapping[str, tuple[float, float]],
                             schema: pd.DataFrame) -> None:
    """Refuse a transform that is undefined (or overflows) somewhere inside the declared bounds of its variables.

    Decided from the formula and the bounds alone, before any row is read: the
    variables are clipped to those bounds before the transform, so inside
    them is where the transform must be defined (``np.log(x)`` with x in
    [0, 10] is refused; with x in [1, 10] it is always finite).
    """
    declared = {k: _as_interval(k, v) for k, v in bounds.items()
                if k in schema.columns and pd.api.types.is_numeric_dtype(schema[k].dtype)
                and not isinstance(schema[k].dtype, pd.CategoricalDtype)}
    for f in facts:
        if f.code.strip() in f.variables:
            continue
        why = domain_violation(f.code, declared)
        if why:
            ranges = ", ".join(f"{v} in [{declared[v].lo:g}, {declared[v].hi:g}]" for v in f.variables
                               if v in declared)
            raise TransformDomainError(
                f"'{f.code}' is undefined (or overflows) for part of the declared bounds ({ranges}): {why}. Declare "
                "bounds inside the transform's domain (e.g. x in [1, 100] for np.log(x)), or change the transform "
                "(np.log1p(x) for counts that can be 0). Decided from the bounds alone, before any data were read; "
                "nothing was spent.")


def _formula_literal_levels(codes: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """Levels written as literals in ``C(var, levels=[...])`` where ``var`` is a bare (or quoted) name."""
    out: dict[str, tuple[Any, ...]] = {}
    for code in codes:
        for call in _factor_calls(code):
            if _call_name(call) != "C" or not call.args:
                continue
            var = _c_variable(call.args[0])
            for kw in call.keywords:
                if kw.arg == "levels" and var is not None:
                    try:
                        out.setdefault(var, tuple(ast.literal_eval(kw.value)))  # type: ignore[arg-type]
                    except (ValueError, TypeError, SyntaxError):
                        continue
    return out


def _c_variable(arg: ast.AST) -> str | None:
    """The column named by C()'s first argument (bare or Q('...')), else None."""
    if isinstance(arg, ast.Name):
        return arg.id
    if (isinstance(arg, ast.Call) and _call_name(arg) == "Q" and arg.args and isinstance(arg.args[0], ast.Constant)
            and isinstance(arg.args[0].value, str)):
        return arg.args[0].value
    return None


def _null_fill(df: pd.DataFrame, bounds: Mapping[str, tuple[float, float]],
               declared: Sequence[tuple[str, tuple[Any, ...]]], codes: Sequence[str]) -> list[tuple[str, Any]]:
    """The public null row: for each variable a value from public facts only (a declared level, the midpoint of
    its declared bounds or 1.0, False); None for text without declared levels (only with allow_data_levels)."""
    first_levels = {**_formula_first_levels(codes), **{v: lv[0] for v, lv in declared}}
    fill: list[tuple[str, Any]] = []
    for v in df.columns:
        col = df[v]
        if v in first_levels:
            value: Any = first_levels[v]
        elif isinstance(col.dtype, pd.CategoricalDtype):
            value = col.cat.categories[0] if len(col.cat.categories) else None
        elif pd.api.types.is_bool_dtype(col.dtype):
            value = False
        elif _is_numeric(col):
            iv = _as_interval(v, bounds[v]) if v in bounds else None
            mid = 1.0 if iv is None else (iv.lo + iv.hi) / 2.0
            value = int(math.floor(mid)) if pd.api.types.is_integer_dtype(col.dtype) else float(mid)
        else:
            value = None
        fill.append((str(v), value))
    return fill


def _check_column_names(desc: Any, columns: set[str]) -> None:
    """Refuse a data column named ``Intercept`` entering as a bare term next to the intercept.

    patsy names the intercept column ``Intercept``, so the two design columns
    would share a name (patsy fails with an unrelated message).  Decided from
    the formula and the column names.
    """
    has_intercept = any(not term.factors for term in desc.rhs_termlist)
    clash = any(len(term.factors) == 1 and term.factors[0].code.strip() == "Intercept"
                for term in desc.rhs_termlist)
    if has_intercept and clash and "Intercept" in columns:
        raise FormulaError(
            "the data column 'Intercept' would get the same design-column name as the model's intercept. Rename "
            "the column (e.g. df.rename(columns={'Intercept': 'intercept_var'})), write it as Q('Intercept') in "
            "the formula, or drop the intercept with '- 1'; no budget was spent.")


def _check_formula_levels(codes: Sequence[str]) -> None:
    """Refuse ``C(var, levels=[...])`` declarations that list a level twice (levels written in the formula are
    public, so the message may name them)."""
    for code in codes:
        for call in _factor_calls(code):
            if _call_name(call) != "C":
                continue
            for kw in call.keywords:
                if kw.arg != "levels":
                    continue
                try:
                    lv = list(ast.literal_eval(kw.value))
                except (ValueError, TypeError, SyntaxError):
                    continue
                twice = [v for i, v in enumerate(lv) if v in lv[:i]]
                if twice:
                    raise FormulaError(
                        f"'{code}' declares the level{'s' if len(twice) > 1 else ''} "
                        f"{', '.join(map(repr, twice))} more than once; list each level once. No budget was spent.")


def _duplicate_columns_error(formula: str) -> FormulaError:
    """patsy's raw ValueError when two design columns get one name (a declaration not written as a literal)."""
    return FormulaError(
        f"two design columns of {formula!r} would get the same name: a factor's declared levels list a level "
        "twice, or a data column is named like a design column (e.g. 'Intercept'). List each level once and "
        "rename the column; no budget was spent.")


def _missing_notes(missing: str) -> list[str]:
    if missing == "null":
        return ["missing='drop': each row with a missing value in a variable the formula uses became a public null "
                "row (design row and response zero after clipping), which adds nothing to the released sums; n "
                "counts every row and is public, the number of complete rows is private and not reported"]
    if missing == "drop":
        return ["rows with missing values were dropped (missing='drop'); the remaining n is treated as public"]
    return []


def build_design(
    formula: str,
    data: Any,
    *,
    eval_env: Any = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    clip_variables: bool = True,
) -> Design:
    """Build the design matrix from public facts; see the module docstring.

    Parameters
    ----------
    eval_env : ignored
        Kept for compatibility: factor code is evaluated in dpstats's own
        namespace (:data:`dpstats.formula_language.NAMESPACE`).
    missing : str
        ``"raise"``, ``"null"`` (incomplete rows become public null rows:
        their design row and response are NaN here, and become zero rows
        where the method clips, see :class:`~dpstats.bounds.DataBounds`) or
        ``"drop"`` (rows removed; only for the non-private reference).
    clip_variables : bool
        Kept for compatibility; raw variables that enter a transform are
        always clipped to their declared bounds (so ``np.log(x)`` with x in
        [1, 10] is always finite).
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    df = _as_frame(data)
    parsed = _parse(formula, df, bounds=bounds, levels=levels, missing=missing)
    df, nulls = parsed.plan.prepare(df)
    notes = _missing_notes(missing)
    y_dm, X_dm = _dmatrices(parsed.desc, df, formula)
    design_info = X_dm.design_info
    notes += _check_levels(design_info, df, parsed, allow_data_levels)
    X, y = _finite_arrays(X_dm, y_dm, parsed.non_finite_message, nulls)
    return _assemble(parsed, X, y, design_info, y_dm.design_info, bounds, notes)


def _dmatrices(desc: Any, df: pd.DataFrame, formula: str) -> tuple[Any, Any]:
    """patsy's (y, X) of the data in dpstats's namespace; any failure becomes a typed error with a public message."""
    try:
        with np.errstate(all="ignore"):  # numpy's warnings would say which rows are out of a domain
            return patsy.dmatrices(desc, df, eval_env=FORMULA_ENV, return_type="matrix",
                                   NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
    except Exception as exc:  # noqa: BLE001 - every failure is reported from public facts only
        error = _sanitised(exc, formula)
    raise error  # outside the handler, so that the original (which may quote values) is not the context


def _check_levels(design_info: Any, df: pd.DataFrame, parsed: _Parsed, allow_data_levels: bool) -> list[str]:
    """Refuse categorical factors whose levels were read from the data (unless the leak is opted in).

    Levels are public when written in the formula, declared with ``levels=``
    or by the schema (Categorical or bool dtype), or when the factor is a
    comparison (levels False and True).
    """
    notes: list[str] = []
    for factor, info in design_info.factor_infos.items():
        if info.type != "categorical" or _declares_levels(factor.code):
            continue
        facts = parsed.facts.get(factor.code)
        if facts is not None and facts.boolean:
            continue
        fvars = [v for v in [*ast_names(factor.code), *_quoted_names(factor.code)] if v in parsed.columns]
        if fvars and all(_is_schema_categorical(df[v]) for v in fvars):
            continue
        if allow_data_levels:
            notes.append(f"LEAK (opted in with allow_data_levels=True): the levels of '{factor.code}' were read "
                         "from the data, which reveals which values occur")
            continue
        var = fvars[0] if fvars else factor.code
        raise UndeclaredLevelsError(
            f"the levels of '{factor.code}' would be read from the private data (which values occur is itself "
            f"private). Declare them: write C({var}, levels=['level1', 'level2', ...]) in the formula, pass "
            f"levels={{'{var}': [...]}}, or give the column a pandas Categorical dtype with the public "
            "categories. allow_data_levels=True accepts the leak and names it in the report.")
    return notes


def _finite_arrays(X_dm: Any, y_dm: Any, message: str, nulls: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The design and response as float arrays, null rows marked NaN; a non-finite value elsewhere is refused.

    ``message`` is the public refusal (:func:`non_finite_message`), the same
    whatever value or row is not finite.
    """
    X = np.asarray(X_dm, dtype=float)
    y = np.asarray(y_dm, dtype=float)
    if y.ndim != 2 or y.shape[1] != 1:
        raise DataTypeError("the response must be a single numeric column")
    y = y[:, 0]
    finite = np.isfinite(y) & np.isfinite(X).all(axis=1)
    if nulls is not None:
        finite |= nulls
    if not finite.all():
        raise NonFiniteValueError(message)
    if nulls is not None and nulls.any():
        X[nulls] = np.nan
        y[nulls] = np.nan
    return X, y


def _assemble(parsed: _Parsed, X: np.ndarray, y: np.ndarray, design_info: Any, response_info: Any,
              bounds: Mapping[str, tuple[float, float]] | None, notes: list[str]) -> Design:
    bounds = bounds or {}
    intervals, missing_bounds, unbounded = _column_intervals(design_info, bounds, parsed.schema, parsed.columns,
                                                             parsed.response_code)
    response_interval = _bound_of(parsed.response_code, bounds, parsed.schema, parsed.columns)
    response_missing = response_interval is None or not response_interval.finite
    if response_missing:
        missing_bounds.append(f"{parsed.response_code} (response)")
    variables, underivable = _bounds_needs(unbounded, (parsed.response_code, response_missing), bounds,
                                           parsed.schema, parsed.columns)
    return Design(X=X, y=y, column_names=list(design_info.column_names), response_name=parsed.response_code,
                  design_info=design_info, column_intervals=intervals, response_interval=response_interval,
                  missing_bounds=missing_bounds, notes=notes,
                  numeric_variables=[v for v in parsed.plan.variables if _is_numeric(parsed.schema[v])],
                  response_info=response_info, bound_variables=variables, underivable_bounds=underivable,
                  null_rows=parsed.plan.missing == "null", formula_expanded=parsed.expanded,
                  non_finite_message=parsed.non_finite_message)


def _formula_first_levels(codes: Sequence[str]) -> dict[str, Any]:
    """The first level of ``C(var, levels=[...])`` calls whose levels are literals, by variable."""
    return {v: lv[0] for v, lv in _formula_literal_levels(codes).items() if lv}


def public_prototype(schema: pd.DataFrame, bounds: Mapping[str, tuple[float, float]] | None,
                     codes: Sequence[str] = ()) -> pd.DataFrame:
    """A one-row frame of public values with the schema's (prepared) dtypes, on which patsy builds the design.

    Numeric variables take the midpoint of their declared range (1.0 when none
    is declared), categorical ones their first declared category (or the first
    literal level of a ``C(var, levels=[...])`` in ``codes``), booleans False,
    anything else an empty string (which the level check then refuses as
    undeclared).  No value comes from the data.
    """
    first_levels = _formula_first_levels(codes)
    row: dict[str, Any] = {}
    for v in schema.columns:
        col = schema[v]
        if v in first_levels and not isinstance(col.dtype, pd.CategoricalDtype):
            row[v] = np.array([first_levels[v]], dtype=object)
        elif isinstance(col.dtype, pd.CategoricalDtype):
            cats = list(col.cat.categories)
            row[v] = pd.Categorical(cats[:1], categories=cats) if cats else pd.Categorical([""])
        elif pd.api.types.is_bool_dtype(col.dtype):
            row[v] = np.array([False])
        elif _is_numeric(col):
            iv = None
            if bounds and v in bounds:
                iv = _as_interval(v, bounds[v])
            row[v] = np.array([1.0 if iv is None else (iv.lo + iv.hi) / 2.0], dtype=col.dtype)
        else:
            row[v] = np.array([""], dtype=object)
    return pd.DataFrame(row, columns=list(schema.columns))


def _prototype_error(formula: str, exc: BaseException) -> FormulaError:
    """Why patsy cannot build the design on the public prototype (its message quotes public values only)."""
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "does not match any of the expected levels" in first:
        first = "a level of a factor cannot be built from its declaration"
    return FormulaError(
        f"the design of {formula!r} cannot be built from the declared schema alone ({first}); for data read in "
        "chunks patsy evaluates the formula on the zero-row schema or on one row of public values (the midpoints "
        "of declared bounds, else 1.0, and the first declared level): declare bounds for the variables of "
        "transforms such as bs() so that this row is in their domain, and levels as literals")


def _prototype_dmatrices(desc: Any, proto: pd.DataFrame) -> tuple[Any, Any]:
    with np.errstate(all="ignore"):
        return patsy.dmatrices(desc, proto, eval_env=FORMULA_ENV, return_type="matrix",
                               NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))


def public_design(
    formula: str,
    schema: pd.DataFrame,
    *,
    eval_env: Any = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    clip_variables: bool = True,
) -> tuple[Design, FramePlan, pd.DataFrame]:
    """The public design of a formula on data known only by its schema (data read in chunks).

    ``schema`` is a frame with the data's column names and dtypes (its rows,
    if any, are not used).  Every check of :func:`build_design` that does not
    need the data runs here, before any row is read; patsy builds the design
    on the zero-row schema, or, when a transform cannot evaluate an empty
    column, on :func:`public_prototype`, one row of public values.
    So the columns, levels and clip ranges come from public facts only, and
    every chunk is later evaluated with this same design.  Returns the design
    (with no rows), the per-chunk :class:`FramePlan` and the frame the design
    was built on (which workers use to rebuild it).  ``eval_env`` and
    ``clip_variables`` are ignored, as in :func:`build_design`.

    Factor levels cannot be read from the data here (no chunk may change the
    design): with ``allow_data_levels=True`` an undeclared factor is still
    refused, with an explanation.
    """
    parsed = _parse(formula, schema.iloc[:0], bounds=bounds, levels=levels, missing=missing)
    # patsy builds the design on the zero-row schema when it can (most formulas), else on one row of public
    # values (transforms that cannot evaluate an empty column)
    proto = parsed.schema
    failure: BaseException | None = None
    try:
        y_dm, X_dm = _prototype_dmatrices(parsed.desc, proto)
    except (patsy.PatsyError, ValueError, TypeError, IndexError):
        proto = public_prototype(parsed.schema, bounds, [parsed.response_code, *parsed.factor_codes])
        try:
            y_dm, X_dm = _prototype_dmatrices(parsed.desc, proto)
        except (patsy.PatsyError, ValueError, TypeError, IndexError) as exc:
            failure = (_duplicate_columns_error(formula) if "mismatch between column_names" in str(exc)
                       else _prototype_error(formula, exc))
    if failure is not None:
        raise failure
    try:
        notes = _check_levels(X_dm.design_info, parsed.schema, parsed, allow_data_levels=False)
    except UndeclaredLevelsError as exc:
        if allow_data_levels:
            raise UndeclaredLevelsError(
                f"{exc} For data read in chunks (files, Dask) allow_data_levels=True is not supported: the levels "
                "must be known before the first chunk is read, so that no chunk can change the design.") from None
        raise
    notes = _missing_notes(missing) + notes
    empty = np.empty((0, len(X_dm.design_info.column_names)))
    design = _assemble(parsed, empty, np.empty(0), X_dm.design_info, y_dm.design_info, bounds, notes)
    return design, parsed.plan, proto


def _sanitised(exc: BaseException, formula: str) -> DPStatsError:
    """A typed error for a failure of patsy (or numpy, pandas) while evaluating the design on data.

    The original message is never passed on (patsy quotes the offending
    value, e.g. "observation with value 'P-1234' does not match..."): the
    message is built from the formula, the factor's code (where patsy says
    which factor failed) and the exception's type.
    """
    if isinstance(exc, DPStatsError):
        exc.__cause__ = exc.__context__ = None
        return exc
    msg = str(exc)
    code = _origin_code(exc)
    where = f" '{code}'" if code else ""
    if "does not match any of the expected levels" in msg or "mismatching levels" in msg:
        return FormulaError(f"a factor{where} has values outside the levels declared for it (the declared schema "
                            "is violated). Fix the data or the declared levels.")
    if "mismatch between column_names" in msg:
        return _duplicate_columns_error(formula)
    return FormulaError(
        f"patsy could not evaluate{(' the factor' + where) if code else ' the design'} of {formula!r} on the data "
        f"({type(exc).__name__}; the original message is withheld because it may quote data values). Check that "
        "every variable has the type the formula uses it as.")


def _origin_code(exc: BaseException) -> str:
    """The part of the formula a PatsyError points at (public: formula text), or ""."""
    origin = getattr(exc, "origin", None)
    try:
        return str(origin.code[origin.start:origin.end]) if origin is not None else ""
    except (AttributeError, TypeError):
        return ""


def _as_interval(key: str, val: Any) -> Interval:
    """A declared bound as an Interval (finite, lo < hi; see :func:`dpstats.validation.check_bounds_pair`)."""
    return Interval(*check_bounds_pair(key, val))


def _bound_of(code: str, bounds: Mapping[str, tuple[float, float]], df: pd.DataFrame,
              columns: set[str]) -> Interval | None:
    if code in bounds:
        return _as_interval(code, bounds[code])
    raw = {k: _as_interval(k, v) for k, v in bounds.items() if k in columns}
    try:
        return interval_of_code(code, raw)
    except IntervalError:
        return None


def _column_combinations(columns_per_factor: list[int]):
    """Column index combinations of a subterm, left-most factor fastest (patsy's order)."""
    for reversed_combo in itertools.product(*[range(n) for n in reversed(columns_per_factor)]):
        yield reversed_combo[::-1]


def _column_intervals(design_info: Any, bounds: Mapping[str, tuple[float, float]], df: pd.DataFrame,
                      columns: set[str], response_code: str
                      ) -> tuple[list[Interval | None], list[str], dict[str, list[str | None]]]:
    """Each design column's clip range, the columns without one, and why each of them has none.

    A bound declared on a design column wins over the derived one.  Keys of
    ``bounds`` may be variables used by the formula, design columns or the
    response as written (its patsy code, e.g. ``I(a / (a + b))``).  For a
    column without a range, the third value lists the codes of its unbounded
    factors (None for a multi-column basis that cannot be bounded).
    """
    names = list(design_info.column_names)
    valid_keys = set(names) | columns | {response_code}
    for key in bounds:
        if key not in valid_keys:
            raise InvalidBoundsError(
                f"bounds names '{key}', which is neither a variable used by the formula, a design column nor the "
                f"response. Design columns are: {', '.join(names)}; the response is '{response_code}' (spell "
                "a transformed one exactly so)")
    derived: dict[str, tuple[Interval | None, list[str | None]]] = {}
    for term in design_info.terms:
        for subterm in design_info.term_codings[term]:
            per_factor: list[list[tuple[str, Interval | None, str | None]]] = []
            for factor in subterm.factors:
                info = design_info.factor_infos[factor]
                if factor in subterm.contrast_matrices:
                    cm = subterm.contrast_matrices[factor]
                    mat = np.asarray(cm.matrix, dtype=float)
                    per_factor.append([(factor.name() + sfx, Interval(float(mat[:, k].min()),
                                                                      float(mat[:, k].max())), None)
                                       for k, sfx in enumerate(cm.column_suffixes)])
                elif info.num_columns == 1:
                    per_factor.append([(factor.name(), _bound_of(factor.code, bounds, df, columns), factor.code)])
                else:
                    base = _spline_interval(factor.code)
                    per_factor.append([(f"{factor.name()}[{k}]", base, None) for k in range(info.num_columns)])
            for combo in _column_combinations([len(p) for p in per_factor]):
                pieces = [per_factor[i][k] for i, k in enumerate(combo)]
                name = ":".join(p[0] for p in pieces) or "Intercept"
                iv: Interval | None = Interval(1.0, 1.0)
                for _, piv, _ in pieces:
                    iv = None if (iv is None or piv is None) else iv * piv
                derived[name] = (iv, [code for _, piv, code in pieces if piv is None])
    intervals: list[Interval | None] = []
    missing: list[str] = []
    unbounded: dict[str, list[str | None]] = {}
    for name in names:
        if name not in derived:  # pragma: no cover - would be a patsy naming change
            raise FormulaError(f"internal error: cannot match design column '{name}'")
        if name in bounds:
            iv, factors = _as_interval(name, bounds[name]), []
        else:
            iv, factors = derived[name]
        if iv is None or not iv.finite:
            missing.append(name)
            unbounded[name] = factors
        intervals.append(iv)
    return intervals, missing, unbounded


def _derivation_need(code: str, bounds: Mapping[str, tuple[float, float]], df: pd.DataFrame,
                     columns: set[str]) -> tuple[list[str], str]:
    """The raw variables whose declared bounds would bound ``code``, or ([], why no bound can be derived).

    Interval arithmetic (:func:`dpstats.bounds.interval_of_code`) is tried
    with a stand-in range for each variable without a declared one: an
    unsupported operation is structural (no variable bounds can help), a
    domain failure (a log reaching 0) is cured by suitable variable bounds.
    Variables that cannot be bounded (factors, booleans) make it structural.
    """
    names = list(dict.fromkeys(v for v in [*ast_names(code), *_quoted_names(code)] if v in columns))
    declared = {k: _as_interval(k, v) for k, v in bounds.items() if k in columns}
    undeclared = [v for v in names if v not in declared]
    not_numeric = [v for v in undeclared if not _is_numeric(df[v])]
    if not_numeric:
        return [], f"{', '.join(not_numeric)} {'is' if len(not_numeric) == 1 else 'are'} not numeric"
    try:
        iv = interval_of_code(code, {**declared, **{v: Interval(1.0, 2.0) for v in undeclared}})
    except UnsupportedExpressionError as exc:
        return [], str(exc)
    except IntervalError as exc:
        return (undeclared, "") if undeclared else ([], f"{exc}, with the declared bounds")
    if undeclared:
        return undeclared, ""
    return [], "" if iv.finite else "the derived range is not finite"


def _bounds_needs(unbounded: Mapping[str, list[str | None]], response: tuple[str, bool],
                  bounds: Mapping[str, tuple[float, float]], df: pd.DataFrame,
                  columns: set[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """What to declare for the columns (and the response, if ``response[1]``) that have no range.

    Returns the raw variables to bound (in order of first use) and the
    (bounds key, reason) pairs for the ranges that cannot be derived from
    variable bounds, which must be declared on the design column (or the
    response code) itself.
    """
    variables: list[str] = []
    underivable: dict[str, str] = {}
    items = list(unbounded.items()) + ([(response[0], [response[0]])] if response[1] else [])
    for name, codes in items:
        if not codes:  # a range was derived, but it is not finite
            underivable[name] = "the derived range is not finite"
        for code in codes:
            if code is None:
                need, why = [], "a multi-column basis other than bs() has no derived range"
            else:
                need, why = _derivation_need(code, bounds, df, columns)
            variables += [v for v in need if v not in variables]
            if not need:
                underivable.setdefault(name, why or "its range cannot be derived")
    return variables, list(underivable.items())


def _spline_interval(code: str) -> Interval | None:
    """B-spline basis functions lie in [0, 1]; other multi-column factors need explicit bounds."""
    calls = _factor_calls(code)
    if calls and _call_name(calls[0]) == "bs":
        return Interval(0.0, 1.0)
    return None


def _prediction_frame(design_info: Any, df: pd.DataFrame) -> pd.DataFrame:
    """``newdata`` checked against the fitted design: the factor code allowed, every variable present, numeric
    variables numeric, no missing values.

    Extension dtypes (``Int64``, ``boolean``, ``string``) get the numpy dtypes
    patsy reads, as in :meth:`FramePlan.prepare`.
    """
    column_list = [str(c) for c in df.columns]
    numeric: list[str] = []
    used: list[str] = []
    for factor, info in design_info.factor_infos.items():
        try:
            facts = check_factor(factor.code, column_list)
        except UnknownColumnError:
            facts = None
        if facts is None:
            lacking = [v for v in [*ast_names(factor.code), *_quoted_names(factor.code)] if v not in column_list]
            raise UnknownColumnError(f"newdata lacks a variable the model uses: {', '.join(lacking) or factor.code}")
        used += [v for v in facts.variables if v not in used]
        if info.type == "numerical":
            numeric += [v for v in facts.variables if v not in numeric]
    wrong = [v for v in numeric
             if not (pd.api.types.is_numeric_dtype(df[v].dtype) or pd.api.types.is_bool_dtype(df[v].dtype))]
    if wrong:
        raise DataTypeError(
            f"newdata gives {', '.join(f'{v!r} (dtype {df[v].dtype})' for v in wrong)} as non-numbers, but the "
            f"model uses {'it' if len(wrong) == 1 else 'them'} as numeric. Convert first, e.g. "
            f"newdata[{wrong[0]!r}] = pd.to_numeric(newdata[{wrong[0]!r}]).")
    missing = [v for v in used if df[v].hasnans]
    if missing:
        raise MissingDataError(
            f"newdata has missing values (NaN, None or pd.NA) in {', '.join(missing)}; a prediction needs every "
            "variable the model uses: drop those rows or fill them in before predict().")
    return _numpy_columns(df, used)


def design_matrix_for_prediction(design_info: Any, newdata: Any) -> np.ndarray:
    """Evaluate the stored design on new data, refusing unseen levels, wrong types and gaps.

    The factor code is checked against the formula language again (a design
    info built elsewhere could hold any code), and failures are reported from
    public facts only: the factor's code and its declared levels, never a
    value of ``newdata``.
    """
    df = _prediction_frame(design_info, _as_frame(newdata))
    try:
        with np.errstate(all="ignore"):
            (X,) = patsy.build_design_matrices([design_info], df, NA_action="raise", return_type="matrix")
    except Exception as exc:  # noqa: BLE001 - every failure is reported from public facts only
        error = _prediction_error(exc, design_info)
    else:
        return np.asarray(X, dtype=float)
    raise error


def _prediction_error(exc: BaseException, design_info: Any) -> DPStatsError:
    """A typed error for a failure of patsy on ``newdata``, from the factor's code and declared levels only."""
    msg = str(exc)
    code = _origin_code(exc)
    if "expected levels" in msg or "mismatching levels" in msg:
        levels = next((info.categories for f, info in design_info.factor_infos.items()
                       if f.code == code and info.categories is not None), None)
        known = f" (its levels are: {', '.join(map(str, levels))})" if levels is not None else ""
        return UnseenLevelError(f"newdata has a value of the factor '{code or 'a factor'}' that the fitted model does "
                                f"not know{known}")
    if "missing values" in msg:
        where = f" in {code!r}" if code else ""
        return MissingDataError(f"a transform in the model produced missing values on newdata{where}")
    return FormulaError(f"cannot evaluate the model's design on newdata{f' (factor {code!r})' if code else ''}: "
                        f"{type(exc).__name__}; the original message is withheld because it may quote data values")
