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
arithmetic (:mod:`dpstats.bounds`) to a clip range per design column.
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

from dpstats.bounds import DataBounds, Interval, IntervalError, interval_of_code
from dpstats.errors import (
    DataTypeError, FormulaError, InvalidBoundsError, MissingBoundsError, MissingDataError,
    StatefulTransformError, UndeclaredLevelsError, UnknownColumnError,
)

__all__ = ["Design", "build_design", "design_matrix_for_prediction"]

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

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    @property
    def has_intercept(self) -> bool:
        return "Intercept" in self.column_names

    def data_bounds(self) -> DataBounds:
        """The clip ranges, or MissingBoundsError naming what is missing."""
        if self.missing_bounds:
            raise MissingBoundsError(_missing_bounds_message(self.missing_bounds, self.numeric_variables))
        return DataBounds(
            column_lo=np.array([iv.lo for iv in self.column_intervals], dtype=float),  # type: ignore[union-attr]
            column_hi=np.array([iv.hi for iv in self.column_intervals], dtype=float),  # type: ignore[union-attr]
            y_lo=self.response_interval.lo, y_hi=self.response_interval.hi,  # type: ignore[union-attr]
        )


def _missing_bounds_message(missing: list[str], variables: list[str]) -> str:
    example = ", ".join(f"'{v}': (lo, hi)" for v in variables[:3]) or "'x': (lo, hi)"
    return (
        "this method needs public bounds on every design column and on the response, but none can be "
        f"derived for: {', '.join(missing)}. Declare them from domain knowledge (never from the data), on raw "
        f"variables or on design columns, e.g. bounds={{{example}}}; or choose a method that needs no bounds."
    )


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


def _apply_levels(df: pd.DataFrame, levels: Mapping[str, Sequence[Any]] | None) -> pd.DataFrame:
    if not levels:
        return df
    df = df.copy(deep=False)
    for var, lv in levels.items():
        if var not in df.columns:
            raise UnknownColumnError(f"levels= names '{var}', which is not a column of the data; "
                                     f"columns are: {', '.join(map(str, df.columns))}")
        lv = list(lv)
        if len(lv) == 0 or len(set(lv)) != len(lv):
            raise FormulaError(f"levels for '{var}' must be a non-empty list of distinct values")
        col = df[var]
        if not bool((col.isin(lv) | col.isna()).all()):
            raise FormulaError(
                f"variable '{var}' has values outside its declared levels (the declared schema is violated). "
                "Fix the data or the declared levels; no budget was spent.")
        df[var] = pd.Categorical(col, categories=lv)
    return df


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
    try:
        desc = patsy.ModelDesc.from_formula(formula)
    except patsy.PatsyError as exc:
        raise FormulaError(f"cannot parse formula {formula!r}: {exc}") from None
    if len(desc.lhs_termlist) != 1 or len(desc.lhs_termlist[0].factors) != 1:
        raise FormulaError("the formula needs exactly one response on the left of '~', e.g. 'y ~ x'")
    if not desc.rhs_termlist:
        raise FormulaError("the formula has no columns on the right of '~'; add terms or an intercept ('y ~ 1')")

    df = _as_frame(data)
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

    response_vars = [v for v in [*ast_names(response_code), *_quoted_names(response_code)] if v in columns]
    bool_responses = [v for v in response_vars if pd.api.types.is_bool_dtype(df[v].dtype)]
    for v in response_vars:
        if not (_is_numeric(df[v]) or v in bool_responses):
            raise DataTypeError(f"the response '{v}' must be numeric (its dtype is {df[v].dtype}); "
                                "code a categorical outcome as 0/1 with a public rule")

    notes: list[str] = []
    df = df[variables].copy(deep=False) if variables else df
    for v in bool_responses:  # a binary response is a linear probability model: False/True -> 0/1
        df[v] = df[v].astype(float)
    df = _apply_levels(df, levels)

    if bounds:
        transformed = {v for code in [response_code, *factor_codes]
                       for v in ast_names(code) if v in columns and code.strip() != v}
        df = _check_and_clip_raw(df, bounds, variables, clip_variables, only=transformed)

    na = df[variables].isna().any() if variables else pd.Series(dtype=bool)
    if bool(na.any()):
        bad = [str(v) for v in na.index[na.to_numpy()]]
        if missing == "raise":
            raise MissingDataError(
                f"missing values in {', '.join(bad)}. Impute them with a public rule, or pass missing='drop' "
                "(the number of remaining rows is then treated as public and the report says so).")
        df = df.dropna(subset=variables)
        notes.append("rows with missing values were dropped (missing='drop'); the remaining n is treated as public")

    try:
        # missing values were checked above and non-finite results are checked below, so patsy's own
        # (slow) NA scan is switched off
        y_dm, X_dm = patsy.dmatrices(desc, df, eval_env=eval_env, return_type="matrix",
                                     NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
    except patsy.PatsyError as exc:
        raise _sanitised(exc, formula) from None

    design_info = X_dm.design_info
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

    X = np.asarray(X_dm, dtype=float)
    y = np.asarray(y_dm, dtype=float)
    if y.shape[1] != 1:
        raise DataTypeError("the response must be a single numeric column")
    y = y[:, 0]
    if not (np.isfinite(X).all() and np.isfinite(y).all()):
        bad = [n for n, ok in zip(design_info.column_names, np.isfinite(X).all(axis=0)) if not ok]
        if not np.isfinite(y).all():
            bad.append(response_code)
        raise MissingDataError(
            f"non-finite values (inf or NaN) in {', '.join(bad)}, e.g. a log of a non-positive number. "
            "Transform the variable so that it is finite, or declare bounds that keep it in its domain.")

    intervals, missing_bounds = _column_intervals(design_info, bounds or {}, df, columns)
    response_interval = _bound_of(response_code, bounds or {}, df, columns)
    if response_interval is None:
        missing_bounds.append(f"{response_code} (response)")
    return Design(X=X, y=y, column_names=list(design_info.column_names), response_name=response_code,
                  design_info=design_info, column_intervals=intervals, response_interval=response_interval,
                  missing_bounds=missing_bounds, notes=notes,
                  numeric_variables=[v for v in variables if _is_numeric(df[v])])


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


def _check_and_clip_raw(df: pd.DataFrame, bounds: Mapping[str, tuple[float, float]],
                        variables: list[str], clip: bool, only: set[str]) -> pd.DataFrame:
    """Validate bounds on raw variables; clip those that enter a transform (``only``) when ``clip``.

    Variables used bare are clipped later, as design columns.
    """
    for key, val in bounds.items():
        _as_interval(key, val)
    raw = {k: _as_interval(k, v) for k, v in bounds.items() if k in variables}
    for k in raw:
        if not _is_numeric(df[k]):
            raise InvalidBoundsError(f"bounds were given for '{k}', which is not numeric; factors are bounded "
                                     "automatically")
    to_clip = {k: iv for k, iv in raw.items() if k in only}
    if not clip or not to_clip:
        return df
    df = df.copy(deep=False)
    for k, iv in to_clip.items():
        df[k] = np.clip(df[k].to_numpy(dtype=float), iv.lo, iv.hi)
    return df


def _as_interval(key: str, val: Any) -> Interval:
    try:
        lo, hi = (float(v) for v in val)
    except (TypeError, ValueError):
        raise InvalidBoundsError(f"bounds['{key}'] must be a pair (lo, hi) of numbers, got {val!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo > hi:
        raise InvalidBoundsError(f"bounds['{key}'] = ({lo}, {hi}) must be finite with lo <= hi")
    return Interval(lo, hi)


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
                      columns: set[str]) -> tuple[list[Interval | None], list[str]]:
    names = list(design_info.column_names)
    derived: dict[str, Interval | None] = {}
    for term in design_info.terms:
        for subterm in design_info.term_codings[term]:
            per_factor: list[list[tuple[str, Interval | None]]] = []
            for factor in subterm.factors:
                info = design_info.factor_infos[factor]
                if factor in subterm.contrast_matrices:
                    cm = subterm.contrast_matrices[factor]
                    mat = np.asarray(cm.matrix, dtype=float)
                    per_factor.append([(factor.name() + sfx, Interval(float(mat[:, k].min()), float(mat[:, k].max())))
                                       for k, sfx in enumerate(cm.column_suffixes)])
                elif info.num_columns == 1:
                    per_factor.append([(factor.name(), _bound_of(factor.code, bounds, df, columns))])
                else:
                    base = _spline_interval(factor.code)
                    per_factor.append([(f"{factor.name()}[{k}]", base) for k in range(info.num_columns)])
            for combo in _column_combinations([len(p) for p in per_factor]):
                pieces = [per_factor[i][k] for i, k in enumerate(combo)]
                name = ":".join(p[0] for p in pieces) or "Intercept"
                iv: Interval | None = Interval(1.0, 1.0)
                for _, piv in pieces:
                    iv = None if (iv is None or piv is None) else iv * piv
                derived[name] = iv
    intervals: list[Interval | None] = []
    missing: list[str] = []
    valid_keys = set(names) | columns
    for key in bounds:
        if key not in valid_keys:
            raise InvalidBoundsError(
                f"bounds names '{key}', which is neither a variable used by the formula nor a design column. "
                f"Design columns are: {', '.join(names)}")
    for name in names:
        if name in bounds:
            iv = _as_interval(name, bounds[name])
        else:
            if name not in derived:  # pragma: no cover - would be a patsy naming change
                raise FormulaError(f"internal error: cannot match design column '{name}'")
            iv = derived[name]
        if iv is None or not iv.finite:
            missing.append(name)
        intervals.append(iv)
    return intervals, missing


def _spline_interval(code: str) -> Interval | None:
    """B-spline basis functions lie in [0, 1]; other multi-column factors need explicit bounds."""
    calls = _factor_calls(code)
    if calls and _call_name(calls[0]) == "bs":
        return Interval(0.0, 1.0)
    return None


def design_matrix_for_prediction(design_info: Any, newdata: Any) -> np.ndarray:
    """Evaluate the stored design on new (non-private) data, refusing unseen levels."""
    from dpstats.errors import UnseenLevelError

    df = _as_frame(newdata)
    try:
        (X,) = patsy.build_design_matrices([design_info], df, NA_action="raise", return_type="matrix")
    except patsy.PatsyError as exc:
        msg = str(exc)
        if "does not match any of the expected levels" in msg or "expected levels" in msg:
            raise UnseenLevelError(f"newdata has a factor level the fitted model does not know: {msg.splitlines()[0]}") from None
        if "missing values" in msg:
            raise MissingDataError(f"newdata has missing values: {msg.splitlines()[0]}") from None
        if "is not defined" in msg or "NameError" in msg or "KeyError" in msg:
            raise UnknownColumnError(f"newdata lacks a variable the model uses: {msg.splitlines()[0]}") from None
        raise FormulaError(f"cannot evaluate the model's design on newdata: {msg.splitlines()[0]}") from None
    return np.asarray(X, dtype=float)
