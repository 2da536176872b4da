"""Formula + data -> public design (X, y, design_info) and per-column bounds.

This layer never draws noise.  It guarantees that the *shape* of the design is
a function of public facts only:

* factor levels come from the formula (``C(g, levels=[...])``), from the
  ``levels=`` argument, or from a declared schema (a pandas ``Categorical``
  dtype, or ``bool``), never from the values present in the data, unless the
  user opts in with ``allow_data_levels=True`` (reported as a leak);
* patsy's stateful transforms that compute statistics of the data
  (``center``, ``standardize``, ``scale``, spline bases without explicit
  knots and boundaries) are refused;
* errors are decided from the schema (column names, dtypes, the formula);
  the few that depend on values (missing values, values outside declared
  levels) are schema violations and never echo a value or a count.

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
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import patsy
from patsy.eval import ast_names

from dpstats.bounds import DataBounds, Interval, IntervalError, UnsupportedExpressionError, interval_of_code
from dpstats.errors import (
    DataTypeError, FormulaError, InvalidBoundsError, MissingBoundsError, MissingDataError,
    StatefulTransformError, UndeclaredLevelsError, UnknownColumnError, UnseenLevelError,
)
from dpstats.validation import check_bounds_pair

__all__ = ["Design", "FramePlan", "build_design", "public_design", "design_matrix_for_prediction"]

_DATA_STATISTIC_TRANSFORMS = {"center", "standardize", "scale"}
_SPLINES = {"bs", "cr", "cc"}
_SPLINE_PUBLIC_KEYWORDS = {"knots", "lower_bound", "upper_bound"}


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
        try:
            return pd.DataFrame({k: np.asarray(v) if not isinstance(v, pd.Series) else v for k, v in data.items()})
        except ValueError as exc:
            raise DataTypeError(f"data is a dict whose arrays cannot form a table: {exc}") from None
    raise DataTypeError(f"data must be a pandas DataFrame or a dict of equal-length arrays, got {type(data).__name__}")


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


def _check_stateful(code: str) -> None:
    for call in _factor_calls(code):
        name = _call_name(call)
        if name in _DATA_STATISTIC_TRANSFORMS:
            raise StatefulTransformError(
                f"'{code}' uses patsy's {name}(), which computes the mean/sd of the private data. Write the "
                "transform with public constants instead, e.g. I((x - 50) / 10), using centre and scale from "
                "domain knowledge.")
        if name == "te":
            raise StatefulTransformError(f"'{code}': te() tensor splines choose knots from the data; not supported.")
        if name in _SPLINES:
            given = {k.arg for k in call.keywords}
            missing = _SPLINE_PUBLIC_KEYWORDS - given
            if missing:
                raise StatefulTransformError(
                    f"'{code}': {name}() places knots and boundaries at quantiles of the private data unless "
                    f"they are given. Pass {', '.join(sorted(missing))}= with public values, e.g. "
                    f"{name}(x, knots=[2, 5, 8], lower_bound=0, upper_bound=10).")


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
      those categories (a value outside them is a schema violation);
    * raw variables that enter a transform are clipped to their declared
      range (``clip``);
    * missing values: ``"raise"`` (a schema violation) or ``"drop"``.
    """

    variables: tuple[str, ...]
    bool_responses: tuple[str, ...] = ()
    levels: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    clip: tuple[tuple[str, float, float], ...] = ()
    missing: str = "raise"

    def prepare(self, df: pd.DataFrame) -> tuple[pd.DataFrame, bool]:
        """The prepared frame and whether rows with missing values were dropped.

        Missing values (NaN, None, ``pd.NA``) are handled first, so that the
        columns with a pandas extension dtype (nullable ``boolean``, ``Int64``,
        ``Float64``, ``string``, Arrow-backed) can then be given the numpy
        dtype patsy understands (:func:`_numpy_columns`).
        """
        variables = list(self.variables)
        if variables and list(df.columns) != variables:  # (a column list copies a consolidated frame's block)
            df = df[variables]
        dropped = False
        bad = [str(v) for v in variables if df[v].hasnans]
        if bad:
            if self.missing == "raise":
                raise MissingDataError(
                    f"missing values in {', '.join(bad)}. Impute them with a public rule, or pass missing='drop' "
                    "(the number of remaining rows is then treated as public and the report says so).")
            df = df.dropna(subset=variables)
            dropped = True
        df = _numpy_columns(df, variables)
        if self.bool_responses or self.levels or self.clip:
            df = df.copy(deep=False)
        for v in self.bool_responses:  # a binary response is a linear probability model: False/True -> 0/1
            df[v] = df[v].astype(float)
        for var, lv in self.levels:
            col = df[var]
            if not bool(col.isin(list(lv)).all()):
                raise FormulaError(
                    f"variable '{var}' has values outside its declared levels (the declared schema is violated). "
                    "Fix the data or the declared levels; no budget was spent.")
            df[var] = pd.Categorical(col, categories=list(lv))
        for var, lo, hi in self.clip:
            df[var] = np.clip(df[var].to_numpy(dtype=float), lo, hi)
        return df, dropped


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
    response_code: str
    factor_codes: list[str]
    columns: set[str]
    plan: FramePlan
    schema: pd.DataFrame  # zero rows, the prepared dtypes


def _parse(formula: str, df: pd.DataFrame, *, eval_env: patsy.EvalEnvironment,
           bounds: Mapping[str, tuple[float, float]] | None, levels: Mapping[str, Sequence[Any]] | None,
           missing: str, clip_variables: bool) -> _Parsed:
    """Every check that needs only the formula, the declared levels and bounds, and the schema of ``df``."""
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    try:
        desc = patsy.ModelDesc.from_formula(formula)
    except patsy.PatsyError as exc:
        raise FormulaError(f"cannot parse formula {formula!r}: {exc}") from None
    if len(desc.lhs_termlist) != 1 or len(desc.lhs_termlist[0].factors) != 1:
        raise FormulaError("the formula needs exactly one response on the left of '~', e.g. 'y ~ x'")
    if not desc.rhs_termlist:
        raise FormulaError("the formula has no columns on the right of '~'; add terms or an intercept ('y ~ 1')")
    if missing not in {"raise", "drop"}:
        raise FormulaError("missing must be 'raise' (default) or 'drop'")
    columns = set(map(str, df.columns))
    namespace_known = _known_names(eval_env)

    response_code = desc.lhs_termlist[0].factors[0].code
    factor_codes = [f.code for t in desc.rhs_termlist for f in t.factors]
    variables: list[str] = []
    for code in [response_code, *factor_codes]:
        _check_stateful(code)
        for name in _quoted_names(code):
            if name not in columns:
                raise UnknownColumnError(
                    f"the formula quotes Q('{name}'), which is not a column of the data; columns are: "
                    f"{', '.join(map(str, df.columns))}")
        for name in [*ast_names(code), *_quoted_names(code)]:
            if name in columns:
                if name not in variables:
                    variables.append(name)
            elif name not in namespace_known:
                raise UnknownColumnError(
                    f"the formula uses '{name}', which is not a column of the data; columns are: "
                    f"{', '.join(map(str, df.columns))}")

    _check_column_names(desc, columns)
    _check_formula_levels(factor_codes)

    response_vars = [v for v in [*ast_names(response_code), *_quoted_names(response_code)] if v in columns]
    bool_responses = [v for v in response_vars if pd.api.types.is_bool_dtype(df[v].dtype)]
    for v in response_vars:
        if not (_is_numeric(df[v]) or v in bool_responses):
            raise DataTypeError(f"the response '{v}' must be numeric (its dtype is {df[v].dtype}); "
                                "code a categorical outcome as 0/1 with a public rule")

    declared: list[tuple[str, tuple[Any, ...]]] = []
    for var, lv in (levels or {}).items():
        if var not in variables:
            raise UnknownColumnError(f"levels= names '{var}', which is not a column of the data; "
                                     f"columns are: {', '.join(map(str, variables or df.columns))}")
        lv = list(lv)
        if len(lv) == 0 or len(set(lv)) != len(lv):
            raise FormulaError(f"levels for '{var}' must be a non-empty list of distinct values")
        declared.append((var, tuple(lv)))
    leveled = {v for v, _ in declared}

    clip: list[tuple[str, float, float]] = []
    if bounds:
        for key, val in bounds.items():
            _as_interval(key, val)
        transformed = {v for code in [response_code, *factor_codes]
                       for v in ast_names(code) if v in columns and code.strip() != v}
        for k, v in bounds.items():
            if k not in variables:
                continue
            numeric = (_is_numeric(df[k]) or k in bool_responses) and k not in leveled
            if not numeric:
                raise InvalidBoundsError(f"bounds were given for '{k}', which is not numeric; factors are bounded "
                                         "automatically")
            if clip_variables and k in transformed:
                iv = _as_interval(k, v)
                clip.append((k, iv.lo, iv.hi))

    plan = FramePlan(tuple(variables), tuple(bool_responses), tuple(declared), tuple(clip), missing)
    schema, _ = plan.prepare(df.iloc[:0])
    return _Parsed(desc, response_code, factor_codes, columns, plan, schema)


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
    public, so the message may name them).  Declarations that are not literals are left to patsy."""
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


def build_design(
    formula: str,
    data: Any,
    *,
    eval_env: patsy.EvalEnvironment,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    clip_variables: bool = False,
) -> Design:
    """Build the design matrix from public facts; see the module docstring.

    Parameters
    ----------
    clip_variables:
        Clip raw variables to their declared bounds before transforms are
        evaluated (so ``np.log(x)`` with x in [1, 10] is always finite).
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    df = _as_frame(data)
    parsed = _parse(formula, df, eval_env=eval_env, bounds=bounds, levels=levels, missing=missing,
                    clip_variables=clip_variables)
    df, dropped = parsed.plan.prepare(df)
    notes: list[str] = []
    if dropped:
        notes.append("rows with missing values were dropped (missing='drop'); the remaining n is treated as public")
    try:
        # missing values were checked above and non-finite results are checked below, so patsy's own
        # (slow) NA scan is switched off
        y_dm, X_dm = patsy.dmatrices(parsed.desc, df, eval_env=eval_env, return_type="matrix",
                                     NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
    except patsy.PatsyError as exc:
        raise _sanitised(exc, formula) from None
    except ValueError as exc:
        if "mismatch between column_names" in str(exc):
            raise _duplicate_columns_error(formula) from None
        raise

    design_info = X_dm.design_info
    notes += _check_levels(design_info, df, parsed.columns, allow_data_levels)
    X, y = _finite_arrays(X_dm, y_dm, design_info, parsed.response_code)
    return _assemble(parsed, X, y, design_info, y_dm.design_info, bounds, notes)


def _check_levels(design_info: Any, df: pd.DataFrame, columns: set[str], allow_data_levels: bool) -> list[str]:
    """Refuse categorical factors whose levels were read from the data (unless the leak is opted in)."""
    notes: list[str] = []
    for factor, info in design_info.factor_infos.items():
        if info.type != "categorical":
            continue
        if _declares_levels(factor.code):
            continue
        fvars = [v for v in [*ast_names(factor.code), *_quoted_names(factor.code)] if v in columns]
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


def _finite_arrays(X_dm: Any, y_dm: Any, design_info: Any, response_code: str) -> tuple[np.ndarray, np.ndarray]:
    """The design and response as float arrays; non-finite values are refused, naming the columns only."""
    X = np.asarray(X_dm, dtype=float)
    y = np.asarray(y_dm, dtype=float)
    if y.ndim != 2 or y.shape[1] != 1:
        raise DataTypeError("the response must be a single numeric column")
    y = y[:, 0]
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        bad = [n for n, ok in zip(design_info.column_names, np.isfinite(X).all(axis=0)) if not ok]
        if not np.isfinite(y).all():
            bad.append(response_code)
        raise MissingDataError(
            f"non-finite values (inf or NaN) in {', '.join(bad)}, e.g. a log of a non-positive number. "
            "Transform the variable so that it is finite, or declare bounds that keep it in its domain.")
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
                  response_info=response_info, bound_variables=variables, underivable_bounds=underivable)


def _formula_first_levels(codes: Sequence[str]) -> dict[str, Any]:
    """The first level of ``C(var, levels=[...])`` calls whose levels are literals, by variable."""
    out: dict[str, Any] = {}
    for code in codes:
        for call in _factor_calls(code):
            if _call_name(call) != "C" or not call.args:
                continue
            arg = call.args[0]
            var = arg.id if isinstance(arg, ast.Name) else (
                arg.args[0].value if isinstance(arg, ast.Call) and _call_name(arg) == "Q" and arg.args
                and isinstance(arg.args[0], ast.Constant) else None)
            for kw in call.keywords:
                if kw.arg == "levels" and var is not None:
                    try:
                        lv = list(ast.literal_eval(kw.value))
                    except (ValueError, TypeError, SyntaxError):
                        continue
                    if lv:
                        out.setdefault(var, lv[0])
    return out


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
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "does not match any of the expected levels" in first:
        first = "a level of a factor cannot be built from its declaration"
    return FormulaError(
        f"the design of {formula!r} cannot be built from the declared schema alone ({first}); for data read in "
        "chunks patsy evaluates the formula on the zero-row schema or on one row of public values (the midpoints "
        "of declared bounds, else 1.0, and the first declared level): declare bounds for the variables of "
        "transforms such as bs() so that this row is in their domain, and levels as literals")


def public_design(
    formula: str,
    schema: pd.DataFrame,
    *,
    eval_env: patsy.EvalEnvironment,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    clip_variables: bool = False,
) -> tuple[Design, FramePlan, pd.DataFrame]:
    """The public design of a formula on data known only by its schema (data read in chunks).

    ``schema`` is a frame with the data's column names and dtypes (its rows,
    if any, are not used).  Every check of :func:`build_design` that does not
    need the data runs here, before any row is read; patsy builds the design
    on the zero-row schema, or, when a transform cannot evaluate an empty
    column (``bs()``), on :func:`public_prototype`, one row of public values.
    So the columns, levels and clip ranges come from public facts only, and
    every chunk is later evaluated with this same design.  Returns the design
    (with no rows), the per-chunk :class:`FramePlan` and the frame the design
    was built on (which workers use to rebuild it).

    Factor levels cannot be read from the data here (no chunk may change the
    design): with ``allow_data_levels=True`` an undeclared factor is still
    refused, with an explanation.
    """
    parsed = _parse(formula, schema.iloc[:0], eval_env=eval_env, bounds=bounds, levels=levels, missing=missing,
                    clip_variables=clip_variables)
    # patsy builds the design on the zero-row schema when it can (most formulas), else on one row of public
    # values (transforms such as bs() cannot evaluate an empty column)
    proto = parsed.schema
    try:
        with np.errstate(all="ignore"):
            y_dm, X_dm = patsy.dmatrices(parsed.desc, proto, eval_env=eval_env, return_type="matrix",
                                         NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
    except (patsy.PatsyError, ValueError, TypeError, IndexError):
        proto = public_prototype(parsed.schema, bounds, [parsed.response_code, *parsed.factor_codes])
        try:
            with np.errstate(all="ignore"):
                y_dm, X_dm = patsy.dmatrices(parsed.desc, proto, eval_env=eval_env, return_type="matrix",
                                             NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
        except (patsy.PatsyError, ValueError, TypeError, IndexError) as exc:
            if "mismatch between column_names" in str(exc):
                raise _duplicate_columns_error(formula) from None
            raise _prototype_error(formula, exc) from None
    try:
        notes = _check_levels(X_dm.design_info, parsed.schema, parsed.columns, allow_data_levels=False)
    except UndeclaredLevelsError as exc:
        if allow_data_levels:
            raise UndeclaredLevelsError(
                f"{exc} For data read in chunks (files, Dask) allow_data_levels=True is not supported: the levels "
                "must be known before the first chunk is read, so that no chunk can change the design.") from None
        raise
    if missing == "drop":
        notes.append("rows with missing values are dropped (missing='drop'); the remaining n is treated as public")
    empty = np.empty((0, len(X_dm.design_info.column_names)))
    design = _assemble(parsed, empty, np.empty(0), X_dm.design_info, y_dm.design_info, bounds, notes)
    return design, parsed.plan, proto


def _known_names(eval_env: patsy.EvalEnvironment) -> set[str]:
    known: set[str] = set()
    for ns in eval_env._namespaces:  # patsy keeps a list of mappings; nothing public offers this
        known.update(ns.keys())
    import builtins
    known.update(dir(builtins))
    known.update({"C", "I", "Q", "Treatment", "Sum", "Poly", "Helmert", "Diff", "bs", "cr", "cc", "te",
                  "center", "standardize", "scale", "np", "numpy"})
    return known


def _sanitised(exc: patsy.PatsyError, formula: str) -> Exception:
    msg = str(exc)
    if "does not match any of the expected levels" in msg:
        return FormulaError("a factor has values outside the levels declared in the formula (the declared schema "
                            "is violated). Fix the data or the declared levels; no budget was spent.")
    if "missing values" in msg or "NaN" in msg:
        return MissingDataError("a transform in the formula produced missing values; make it defined on the "
                                "whole declared range of its variables")
    first = msg.splitlines()[0] if msg else type(exc).__name__
    return FormulaError(f"patsy could not build the design for {formula!r}: {first}")


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
    """``newdata`` checked against the fitted design: numeric variables numeric, no missing values.

    The variables are those of the design's factors found among the columns
    (a variable the data lack is left to patsy's NameError, reported below).
    Extension dtypes (``Int64``, ``boolean``, ``string``) get the numpy dtypes
    patsy reads, as in :meth:`FramePlan.prepare`.
    """
    columns = set(map(str, df.columns))
    numeric: list[str] = []
    used: list[str] = []
    for factor, info in design_info.factor_infos.items():
        names = [v for v in [*ast_names(factor.code), *_quoted_names(factor.code)] if v in columns]
        used += [v for v in names if v not in used]
        if info.type == "numerical":
            numeric += [v for v in names if v not in numeric]
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
    """Evaluate the stored design on new (non-private) data, refusing unseen levels, wrong types and gaps."""
    df = _prediction_frame(design_info, _as_frame(newdata))
    try:
        (X,) = patsy.build_design_matrices([design_info], df, NA_action="raise", return_type="matrix")
    except patsy.PatsyError as exc:
        msg = str(exc)
        if "does not match any of the expected levels" in msg or "expected levels" in msg:
            raise UnseenLevelError(f"newdata has a factor level the fitted model does not know: {msg.splitlines()[0]}") from None
        if "missing values" in msg:
            raise MissingDataError(f"a transform in the model produced missing values on newdata: "
                                   f"{msg.splitlines()[0]}") from None
        if "is not defined" in msg or "NameError" in msg or "KeyError" in msg:
            raise UnknownColumnError(f"newdata lacks a variable the model uses: {msg.splitlines()[0]}") from None
        raise FormulaError(f"cannot evaluate the model's design on newdata: {msg.splitlines()[0]}") from None
    return np.asarray(X, dtype=float)
