"""The formula language dpstats evaluates: row-wise operations only, checked before any data are read.

patsy evaluates factor code as Python on whole columns, so any code that
reads across rows (``np.mean(x)``, ``np.max(x)``, ``np.unique(g)``,
indexing, knots at quantiles of ``x``) would let one row change every
transformed value, outside every sensitivity the methods assume.  dpstats
therefore checks each factor's code against an allow-list on its syntax tree,
before any row is read (in memory, for files and Dask, and in ``predict``),
and evaluates the accepted code in a namespace it controls
(:data:`NAMESPACE`), never in the caller's, so that no name in the formula can
be shadowed by an object of the caller's.

Allowed:

* column names (bare, or quoted as ``Q("name")``) and finite numeric literals;
* ``+ - * / **`` (the exponent a constant) and one comparison
  ``< <= > >= == !=`` per expression, all row by row;
* ``I(...)``; ``C(var, contrast, levels=[...])`` with a literal list of levels
  and a literal contrast (``Treatment``, ``Treatment('a')``, ``Sum``,
  ``Sum(omit=...)``, ``Helmert``, ``Diff``, ``Poly``);
* the elementwise functions the bounds layer can bound
  (:data:`dpstats.bounds.ELEMENTWISE_FUNCTIONS`: log, log2, log10, log1p,
  exp, expm1, sqrt, abs, square, arcsinh, tanh), bare (as in R) or with an
  ``np.``/``numpy.`` prefix;
* ``poly(x, k)``, as a term of its own: the raw powers x, x^2, ..., x^k
  (R's ``poly(x, k, raw = TRUE)``), written out by
  :func:`dpstats.formula.parse.model_desc` as the terms
  ``x + I(x ** 2) + ... + I(x ** k)``, whose ranges interval arithmetic
  derives from the bounds on x;
* B-splines ``bs`` and the cubic regression splines ``cr``/``cc`` with literal
  ``knots``, ``lower_bound`` and ``upper_bound`` (and literal ``df``,
  ``degree`` up to 5, ``include_intercept``); their argument is clipped to
  [lower_bound, upper_bound] before the basis is evaluated, so no value can
  make the basis fail.

Everything else (cross-row functions, attribute calls such as
``.astype(float)``, indexing, lambdas, comprehensions, functions from the
caller's namespace) is refused with a
:class:`~dpstats.errors.DisallowedExpressionError` that names the call and
says why.  Unknown functions are named as functions, never as missing
columns.  The formula's text is turned into terms (``y ~ .``, long sums,
``poly``) by :mod:`dpstats.formula.parse`.
"""

from __future__ import annotations

import ast
import contextvars
import difflib
import keyword
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy
import patsy.builtins
from patsy.mgcv_cubic_splines import CC, CR
from patsy.splines import BS
from patsy.state import stateful_transform

from dpstats.bounds.interval import ELEMENTWISE_FUNCTIONS, NUMPY_NAMES, call_name
from dpstats.errors import (
    DataTypeError,
    DisallowedExpressionError,
    FormulaError,
    SingularDesignError,
    StatefulTransformError,
    UnknownColumnError,
)
from dpstats.formula.parse import ComputedFactor, finite_number, is_call, literal_value
from dpstats.formula.values import date_advice, duration_advice, onto_levels, raw_level_codes, real_numeric_dtype

__all__ = ["NAMESPACE", "FORMULA_ENV", "CONTRASTS", "FactorFacts", "check_factor", "check_contrast_names",
           "check_numeric_dtypes", "categorical", "computed_level_codes", "MAP_UNDECLARED_LEVELS"]


def did_you_mean(name: str, columns: Sequence[str]) -> str:
    """" Did you mean 'x'?" when a column of the data (the schema, public) looks like a misspelling of ``name``
    (the same letters in another case, or a close spelling), else ""."""
    folded = [c for c in columns if str(c).lower() == name.lower() and str(c) != name]
    close = folded or difflib.get_close_matches(name, [str(c) for c in columns], n=1, cutoff=0.75)
    return f". Did you mean '{close[0]}'?" if close else ""


#: patsy's contrasts, which factor code may name (bare, ``C(g, Sum)``, or called, ``C(g, Treatment('a'))``)
CONTRASTS = ("Treatment", "Sum", "Helmert", "Diff", "Poly")
#: The deepest syntax tree a factor's code may have: the checks, the interval arithmetic of the bounds and patsy
#: walk it recursively, and far deeper trees exhaust Python's recursion limit (a public refusal instead)
MAX_TERM_DEPTH = 200
#: The largest B-spline degree ``bs()`` takes: FITPACK's evaluator (under patsy's ``bs``) works in fixed-size
#: buffers, and far beyond this degree it fails (for some values of the argument only) instead of raising
MAX_SPLINE_DEGREE = 5
_SPLINE_KEYWORDS = {"bs": {"df", "knots", "degree", "include_intercept", "lower_bound", "upper_bound"},
                    "cr": {"df", "knots", "lower_bound", "upper_bound"},
                    "cc": {"df", "knots", "lower_bound", "upper_bound"}}
_SPLINE_PUBLIC_KEYWORDS = ("knots", "lower_bound", "upper_bound")
_DATA_STATISTIC_TRANSFORMS = {"center", "standardize", "scale"}
#: the keyword of the one argument a contrast takes (Treatment's reference, Sum's omitted level, Poly's scores)
_CONTRAST_ARGUMENT = {"Treatment": "reference", "Sum": "omit", "Poly": "scores"}
#: functions whose value for one row depends on other rows (named in the refusal's explanation)
_CROSS_ROW = {
    "mean", "average", "median", "std", "var", "sum", "prod", "min", "max", "amin", "amax", "ptp", "quantile",
    "percentile", "nanmean", "nanmedian", "nanstd", "nanvar", "nansum", "nanmin", "nanmax", "nanquantile",
    "nanpercentile", "unique", "sort", "argsort", "argmin", "argmax", "cumsum", "cumprod", "diff", "ediff1d",
    "gradient", "rank", "histogram", "digitize", "bincount", "cov", "corrcoef", "convolve", "correlate", "roll",
    "shuffle", "permutation", "searchsorted", "len", "sorted", "any", "all", "count_nonzero", "center",
    "standardize", "scale", "zscore", "demean",
}
_ALLOWED_SUMMARY = ("+ - * / ** and comparisons, I(), Q('name'), C(var, levels=[...]), "
                    f"{', '.join(sorted(ELEMENTWISE_FUNCTIONS))} (bare or as np.f), poly(x, k), "
                    "and bs/cr/cc with literal knots, lower_bound and upper_bound")
_CENTRE_HINT = "centre and scale with public constants instead, e.g. I((x - 40) / 10)"


# -- the namespace formulas are evaluated in ------------------------------------------------------------------------

def _clip_spline_argument(x: Any, lower_bound: float, upper_bound: float) -> Any:
    """The spline's argument clipped to its declared [lower_bound, upper_bound] (a Series stays a Series)."""
    return np.clip(x, lower_bound, upper_bound)


class _ClippedBS(BS):
    """patsy's B-spline basis with its argument clipped to the declared [lower_bound, upper_bound].

    The knots and boundaries are literals (checked by :func:`check_factor`),
    so nothing is memorised from the data: the basis is a fixed row-wise map.
    """

    def memorize_chunk(self, x: Any, *args: Any, **kwargs: Any) -> None:
        super().memorize_chunk(np.zeros(0), *args, **kwargs)

    def transform(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return super().transform(_clip_spline_argument(x, kwargs["lower_bound"], kwargs["upper_bound"]),
                                 *args, **kwargs)


class _ClippedCR(CR):
    """patsy's natural cubic regression spline (mgcv's ``cr``), argument clipped as in :class:`_ClippedBS`."""

    def memorize_chunk(self, x: Any, *args: Any, **kwargs: Any) -> None:
        super().memorize_chunk(np.zeros(0), *args, **kwargs)

    def transform(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return super().transform(_clip_spline_argument(x, kwargs["lower_bound"], kwargs["upper_bound"]),
                                 *args, **kwargs)


class _ClippedCC(CC):
    """patsy's cyclic cubic regression spline (mgcv's ``cc``), argument clipped as in :class:`_ClippedBS`."""

    def memorize_chunk(self, x: Any, *args: Any, **kwargs: Any) -> None:
        super().memorize_chunk(np.zeros(0), *args, **kwargs)

    def transform(self, x: Any, *args: Any, **kwargs: Any) -> Any:
        return super().transform(_clip_spline_argument(x, kwargs["lower_bound"], kwargs["upper_bound"]),
                                 *args, **kwargs)


#: False while :func:`dpstats.formula.predict.design_matrix_for_prediction` evaluates new data: there a value
#: outside the levels is an error to report (the new data are the caller's, not the fit's), not a row to map.
MAP_UNDECLARED_LEVELS: contextvars.ContextVar[bool] = contextvars.ContextVar("map_undeclared_levels", default=True)


def categorical(data: Any, contrast: Any = None, levels: Any = None) -> Any:
    """patsy's ``C``, with every value mapped onto the ``levels`` written in the formula by Python equality
    (:func:`~dpstats.formula.values.onto_levels`), so that patsy receives the declared level objects themselves,
    except on new data for a prediction (``MAP_UNDECLARED_LEVELS``), where a value outside them is refused.

    Where ``C`` wraps an expression (``C(np.abs(k), levels=[0, 1, 2])``), a row on which its value is outside the
    levels has been made a public null row before patsy evaluates the design
    (:meth:`~dpstats.formula.frame.FramePlan.prepare`, by :func:`computed_level_codes`), so the first level that
    ``onto_levels`` gives such a value is only ever read on a null row, whose design row is then marked; on the
    public probe rows of the rank check such columns are left out
    (:func:`dpstats.formula.identifiable.analytic_columns`)."""
    if levels is not None and MAP_UNDECLARED_LEVELS.get():
        index = data.index if isinstance(data, pd.Series) else None
        data = onto_levels(pd.Series(np.asarray(data, dtype=object), index=index), list(levels))
    return patsy.builtins.C(data, contrast, levels)


def computed_level_codes(factor: ComputedFactor, df: pd.DataFrame) -> np.ndarray:
    """(n,) the index in the factor's levels of the value its expression computes on each row of the prepared
    frame ``df``, -1 for a value equal to none of them (NaN and infinities included), by the rule
    :func:`categorical` maps values with (:func:`~dpstats.formula.values.level_codes`, Python equality): a map of
    each row.  The expression is evaluated as patsy evaluates it, in dpstats's namespace with numpy's warnings off.
    Where it cannot be evaluated, or gives no value per row, every code is 0: patsy's own evaluation of the
    design then fails in the same way, and is reported from public facts (the refusal does not depend on a row).

    Parameters
    ----------
    factor : ComputedFactor
        The factor (:func:`dpstats.formula.parse.formula_computed_levels`).
    df : pandas.DataFrame
        Rows prepared by :class:`~dpstats.formula.frame.FramePlan` (missing values already made null rows).

    Returns
    -------
    numpy.ndarray
        The level codes (intp).
    """
    try:
        with np.errstate(all="ignore"):
            values = np.asarray(FORMULA_ENV.eval(factor.expression, inner_namespace=df))
    except Exception:  # noqa: BLE001 - patsy's evaluation fails the same way, reported from public facts
        return np.zeros(len(df), dtype=np.intp)
    if values.shape != (len(df),):
        return np.zeros(len(df), dtype=np.intp)
    levels = list(factor.levels)
    exact = all(isinstance(lv, (bool, int, float, str)) and (isinstance(lv, str) or float(lv) == lv) for lv in levels)
    if values.dtype.kind in "fb" and exact:  # floats or booleans: Python's equality of numbers, without a loop
        numbers = values.astype(np.float64)
        codes = np.full(len(df), -1, dtype=np.intp)
        for j in reversed(range(len(levels))):  # the first level a value equals wins; text equals no number
            if not isinstance(levels[j], str):
                codes[numbers == float(levels[j])] = j
        return codes
    return raw_level_codes(pd.Series(values.astype(object)), levels)


#: every name factor code can use besides the data's columns; the formula layer evaluates in this namespace only
NAMESPACE: dict[str, Any] = {
    "np": np, "numpy": np,
    "I": patsy.builtins.I, "Q": patsy.builtins.Q, "C": categorical,
    **{name: getattr(patsy.builtins, name) for name in CONTRASTS},
    **{name: (np.abs if name == "abs" else getattr(np, name)) for name in ELEMENTWISE_FUNCTIONS},
    "bs": stateful_transform(_ClippedBS), "cr": stateful_transform(_ClippedCR), "cc": stateful_transform(_ClippedCC),
}
#: the patsy evaluation environment of every design dpstats builds
FORMULA_ENV = patsy.EvalEnvironment([NAMESPACE])


# -- checking one factor's code -------------------------------------------------------------------------------------

@dataclass
class FactorFacts:
    """What the allow-list learned about one factor's code (all public: read from the formula and the names).

    Attributes
    ----------
    code : str
        The factor's code as patsy writes it.
    variables : list of str
        The data columns it reads, in order of first use.
    numeric : list of str
        The columns it uses as numbers (in arithmetic, a function, a spline
        or a comparison); their dtypes must be numeric or boolean.
    boolean : bool
        The factor's value is a comparison, whose levels (False, True) are public.
    calls : set of str
        The namespace names it uses as functions or modules (``np``, ``log``, ``bs``, ...).
    contrasts : set of str
        The contrasts it names (``Treatment``, ``Sum``, ...): names of the namespace too, which a column of that name
        among the formula's variables would replace (:func:`check_contrast_names`).
    """

    code: str
    variables: list[str] = field(default_factory=list)
    numeric: list[str] = field(default_factory=list)
    boolean: bool = False
    calls: set[str] = field(default_factory=set)
    contrasts: set[str] = field(default_factory=set)


def check_factor(code: str, columns: Iterable[str]) -> FactorFacts:
    """Check one factor's code against the allow-list (module docstring); decided from the code and column names.

    Parameters
    ----------
    code : str
        The factor's code as patsy writes it.
    columns : iterable of str
        The data's column names.

    Returns
    -------
    FactorFacts
        The columns it reads, those it uses as numbers, whether it is a comparison, the functions it calls.

    Raises
    ------
    FormulaError
        Code that is not a Python expression, or a column named like a function the code calls.
    DisallowedExpressionError
        An operation outside the allow-list (naming it and saying why); its
        subclass :class:`~dpstats.errors.StatefulTransformError` for patsy's
        transforms that compute statistics of the data.
    UnknownColumnError
        A name that is neither a column nor a function of the language.
    """
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        raise FormulaError(f"'{code}' is not a valid expression{_quote_advice(code, columns)}") from None
    except (RecursionError, MemoryError):  # far deeper than MAX_TERM_DEPTH
        tree = None
    if tree is None or _depth(tree) > MAX_TERM_DEPTH:
        raise FormulaError(f"a term of {len(code):,} characters is nested more than {MAX_TERM_DEPTH} operations "
                           "deep, beyond what the formula layer evaluates: split it into several terms or compute it "
                           "as a column of the data with a public rule. Decided from the formula alone; no budget was "
                           "spent.")
    checker = _Checker(code, [str(c) for c in columns])
    top = checker.top = tree.body
    checker.expr(top, numeric=False)
    wrapped = (is_call(top, "I") or is_call(top, "C")) and top.args  # type: ignore[attr-defined]
    inner = top.args[0] if wrapped else top  # type: ignore[attr-defined]
    while isinstance(inner, ast.Call) and is_call(inner, "I") and len(inner.args) == 1:
        inner = inner.args[0]  # I() returns its argument: C(I(x > 5)) is boolean
    checker.facts.boolean = isinstance(inner, ast.Compare)
    shadowed = sorted(checker.facts.calls & checker.columns)
    if shadowed:
        raise FormulaError(
            f"the data have a column named {shadowed[0]!r}, which is also the name of a function the formula "
            f"calls in '{code}'; rename the column (e.g. df.rename(columns={{{shadowed[0]!r}: "
            f"'{shadowed[0]}_value'}})). No budget was spent.")
    return checker.facts


def _quote_advice(code: str, columns: Iterable[str]) -> str:
    """What to write instead of code that does not parse: ``Q()`` for a column that a bare name in a formula cannot
    be, a Python keyword (R's ``class``) or a name with a space; otherwise what a term may be.  Decided from the code
    and the column names (the schema)."""
    names = {str(c) for c in columns}
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    clash = [code.strip()] if code.strip() in names else sorted(w for w in words if keyword.iskeyword(w) and w in names)
    if not clash:
        return (": each term must be a Python expression of the columns (a name, Q(\"name\") for a column whose "
                "name is not a Python name, numbers, + - * / ** and the allowed functions). Decided from the formula; "
                "nothing was spent")
    kind = "a Python keyword" if keyword.iskeyword(clash[0]) else "not a Python name"
    return (f": {clash[0]!r} is a column of the data, but {kind}, which a formula cannot use as a bare name; quote "
            f"it as Q(\"{clash[0]}\") wherever the formula names it. Decided from the formula and the column names; "
            "nothing was spent")


def check_contrast_names(facts: Iterable[FactorFacts]) -> None:
    """Refuse a contrast named like a variable the formula uses (``Q('Treatment') + C(g, Treatment, ...)``): patsy
    looks names up in the prepared frame before dpstats's namespace, so it read that column's values as the
    contrast and failed on the data, with the generic message of a failure of patsy.  A column of that name that the
    formula does not use is not in the prepared frame, and does not matter.  Decided from the formula and the column
    names.

    Raises
    ------
    FormulaError
        Naming the column and the factor.
    """
    facts = list(facts)
    used = {v for f in facts for v in f.variables}
    for f in facts:
        clash = sorted(f.contrasts & used)
        if clash:
            raise FormulaError(
                f"the data have a column named {clash[0]!r}, which the formula uses and which is also the name of the "
                f"contrast in '{f.code}'; rename the column (e.g. df.rename(columns={{{clash[0]!r}: "
                f"'{clash[0]}_value'}})). No budget was spent.")


def check_numeric_dtypes(facts: Iterable[FactorFacts], schema: pd.DataFrame) -> None:
    """Refuse a non-numeric column used as a number (``I(code * 2)`` on text), from the dtypes alone.

    Parameters
    ----------
    facts : iterable of FactorFacts
        The checked factors (:func:`check_factor`).
    schema : pandas.DataFrame
        The prepared frame (declared levels make a column categorical),
        whose dtypes are public facts; no value is read.

    Raises
    ------
    DataTypeError
        A column used as a number whose dtype is neither numeric nor boolean.
    """
    for f in facts:
        for v in f.variables:
            if pd.api.types.is_complex_dtype(schema[v].dtype):
                raise DataTypeError(f"'{f.code}' uses the column '{v}', but {_numeric_fix(v, schema[v].dtype)} "
                                    "Decided from the column's type; no value was read and no budget was spent.")
        for v in f.numeric:
            dt = schema[v].dtype
            if pd.api.types.is_bool_dtype(dt) or real_numeric_dtype(dt):
                continue
            raise DataTypeError(f"'{f.code}' uses the column '{v}' as a number, but {_numeric_fix(v, dt)} Decided "
                                "from the column's type; no value was read and no budget was spent.")


def _depth(tree: ast.AST) -> int:
    """The depth of a syntax tree, counted without recursion (so that any depth can be measured)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _numeric_fix(name: str, dt: Any) -> str:
    """Why a column cannot be used as a number, from its (prepared) dtype, and what to do."""
    if advice := duration_advice(name, dt) or date_advice(name, dt):
        return f"it is not numeric:{advice}"
    if isinstance(dt, pd.CategoricalDtype):
        return (f"it is a factor (its levels were declared with levels=, or it is a pandas Categorical). To use it "
                f"as a number, drop levels['{name}'] (a numeric column is then a number) or convert the "
                f"Categorical with a public rule (e.g. df['{name}'] = pd.to_numeric(df['{name}'].astype(str))); "
                f"to use it as a factor, write C({name}) rather than arithmetic on it.")
    if pd.api.types.is_complex_dtype(dt):
        return (f"its type is {dt}: complex numbers are not supported. Keep the real part with a public rule "
                f"before fitting (df['{name}'] = np.real(df['{name}'])) if that is the variable you mean.")
    return (f"its type is {_dtype_words(dt)}. Convert it with a public rule before fitting (e.g. df['{name}'] = "
            f"pd.to_numeric(df['{name}'])), or use it as a factor: C({name}, levels=[...]).")


def _dtype_words(dt: Any) -> str:
    """A dtype in words, without a string dtype's width (the width of a fixed-width text dtype is its longest value)."""
    if pd.api.types.is_string_dtype(dt) or getattr(dt, "kind", "") in "OSU":
        return "text or objects"
    return str(dt)


def _text_operand(node: ast.Compare) -> str:
    """The text literal a comparison compares with ("" when neither side is one)."""
    for side in (node.left, node.comparators[0]):
        if isinstance(side, ast.Constant) and isinstance(side.value, str):
            return side.value
    return ""


def _constant_expression(node: ast.AST) -> bool:
    """Numeric literals combined with + - * / ** only (an exponent)."""
    if isinstance(node, ast.Constant):
        return finite_number(node) is not None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _constant_expression(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        return _constant_expression(node.left) and _constant_expression(node.right)
    return False


#: numpy's and math's named numbers, refused with their value (a formula's numbers are literals)
_NAMED_CONSTANTS = {f"{module}.{name}": getattr(math, name) for module in ("np", "numpy", "math")
                    for name in ("pi", "e", "tau")}
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)
_REFUSED_NODES = {
    ast.Subscript: "indexing reads values of other rows (or picks rows); it is not row-wise",
    ast.Attribute: "attribute access (such as x.values or x.astype) is not evaluated; convert the column before "
                   "fitting",
    ast.Lambda: "lambdas are not evaluated",
    ast.ListComp: "comprehensions are not evaluated", ast.SetComp: "comprehensions are not evaluated",
    ast.DictComp: "comprehensions are not evaluated", ast.GeneratorExp: "comprehensions are not evaluated",
    ast.BoolOp: "'and'/'or' are not row-wise on columns; write the condition as a comparison",
    ast.IfExp: "conditional expressions are not row-wise on columns",
    ast.NamedExpr: "assignments are not evaluated",
    ast.JoinedStr: "f-strings are not evaluated",
}


class _Checker:
    """Walks one factor's syntax tree, refusing anything outside the allow-list and collecting public facts."""

    def __init__(self, code: str, columns: Sequence[str]) -> None:
        self.code = code
        self.column_list = list(columns)
        self.columns = set(columns)
        self.facts = FactorFacts(code)
        self.top: ast.AST | None = None  # the factor's whole expression (set by check_factor)

    # -- refusals -------------------------------------------------------------------------------------------------
    def refuse(self, what: str, why: str) -> DisallowedExpressionError:
        return DisallowedExpressionError(
            f"'{self.code}' uses {what}: {why}. dpstats evaluates formulas with row-wise operations only "
            f"({_ALLOWED_SUMMARY}), checked before any data are read; nothing was spent.")

    def dotted_column(self, name: str) -> DisallowedExpressionError:
        """The refusal of a column named with a dot (R's ``Solar.R``) written bare, which Python reads as attribute
        access: quoting it with ``Q()`` works (the column names are the schema, a public fact)."""
        return self.refuse(repr(name), f"'{name}' is a column of the data, but a bare name with a dot reads as "
                           f"attribute access; quote it as Q(\"{name}\") wherever the formula names it")

    def text_comparison(self, node: ast.Compare, text: str) -> DisallowedExpressionError:
        """The refusal of a comparison with text (``vote == 'Bush'``), saying how to write what it means: a 0/1
        column made before the fit (a response, or a predictor), or the column as a factor."""
        return self.refuse(f"the comparison {ast.unparse(node)!r}", f"a formula compares numbers only, not text "
                           f"such as {text!r}; make the 0/1 column before the fit (in Python a boolean column, "
                           "df['is_x'] = df['g'] == 'x', range [0, 1] by construction; in a CSV file a column of 0 "
                           "and 1, declared on the command line with --dtypes '{\"is_x\": \"int64\"}' --bounds "
                           "'{\"is_x\": [0, 1]}'), or, for a predictor, use the column as a factor, "
                           "C(g, levels=[...])")

    def unknown_name(self, name: str) -> UnknownColumnError:
        return UnknownColumnError(
            f"the formula uses '{name}', which is not a column of the data; columns are: "
            f"{', '.join(self.column_list)}{did_you_mean(name, self.column_list)}", column=name)

    # -- expressions ----------------------------------------------------------------------------------------------
    def variable(self, name: str, numeric: bool) -> None:
        if name not in self.columns:
            raise self.unknown_name(name)
        if name not in self.facts.variables:
            self.facts.variables.append(name)
        if numeric and name not in self.facts.numeric:
            self.facts.numeric.append(name)

    def expr(self, node: ast.AST, numeric: bool = True) -> None:
        if isinstance(node, ast.Constant):
            if finite_number(node) is None:
                raise self.refuse(f"the literal {ast.unparse(node)}", "only finite numbers may appear in "
                                  "expressions (text appears only as a level in C(..., levels=[...]), a contrast's "
                                  "reference, or a column name in Q('name'))")
        elif isinstance(node, ast.Name):
            if node.id in NAMESPACE and node.id not in self.columns:
                raise self.refuse(f"'{node.id}' as a value", f"{node.id} is a function or module of the "
                                  f"formula language; call it on a column, e.g. {node.id}(x)")
            self.variable(node.id, numeric)
        elif isinstance(node, ast.BinOp):
            if not isinstance(node.op, _OPERATORS):
                raise self.refuse(f"the operator in {ast.unparse(node)!r}", "only + - * / ** are evaluated")
            self.expr(node.left)
            if isinstance(node.op, ast.Pow) and not _constant_expression(node.right):
                raise self.refuse(f"the power {ast.unparse(node)!r}", "the exponent must be a number (a literal "
                                  "such as 2 or 0.5), so that the range of the power follows from the bounds")
            self.expr(node.right)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.USub, ast.UAdd)):
                raise self.refuse(f"the operator in {ast.unparse(node)!r}", "only unary - and + are evaluated")
            self.expr(node.operand)
        elif isinstance(node, ast.Compare):
            if len(node.ops) != 1 or not isinstance(node.ops[0], _COMPARISONS):
                raise self.refuse(f"the comparison {ast.unparse(node)!r}", "write one comparison (< <= > >= == "
                                  "!=) between two numeric expressions; chained comparisons are not row-wise")
            if ast.dump(node.left) == ast.dump(node.comparators[0]):
                raise SingularDesignError(
                    f"'{self.code}' compares {ast.unparse(node.left)!r} with itself: its column is the same for "
                    "every row, so the design is singular by construction (with an intercept) or holds a column of "
                    "zeros; remove the comparison. Decided from the formula alone: nothing was spent.")
            if text := _text_operand(node):
                raise self.text_comparison(node, text)
            self.expr(node.left)
            self.expr(node.comparators[0])
        elif isinstance(node, ast.Call):
            self.call(node, numeric)
        elif isinstance(node, ast.Attribute) and ast.unparse(node) in self.columns:
            raise self.dotted_column(ast.unparse(node))
        elif isinstance(node, ast.Attribute) and ast.unparse(node) in _NAMED_CONSTANTS:
            value = _NAMED_CONSTANTS[ast.unparse(node)]
            raise self.refuse(repr(ast.unparse(node)), f"a named constant is not evaluated; write its value as a "
                              f"number, {value!r}")
        else:
            why = next((w for t, w in _REFUSED_NODES.items() if isinstance(node, t)),
                       "this kind of Python expression is not evaluated")
            raise self.refuse(repr(ast.unparse(node)), why)

    # -- calls ----------------------------------------------------------------------------------------------------
    def call(self, node: ast.Call, numeric: bool) -> None:
        name, shown = self.function_name(node)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.refuse(f"*args or **kwargs in {shown}()", "arguments must be written out")
        names = [k.arg for k in node.keywords]
        if len(set(names)) != len(names):  # Python's compiler refuses it, on the data, after the parser accepted it
            raise FormulaError(f"'{self.code}' gives a keyword argument of {shown}() more than once; give each once. "
                               "No budget was spent.")
        bare = isinstance(node.func, ast.Name)
        self.facts.calls.add(name if bare else node.func.value.id)  # type: ignore[attr-defined]
        if bare and name == "I":
            self.single_argument(node, shown)
            self.expr(node.args[0], numeric=True)
        elif bare and name == "Q":
            arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
            if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
                raise self.refuse(f"{ast.unparse(node)}", "Q() takes one quoted column name, e.g. Q('my column')")
            if arg.value not in self.columns:
                raise UnknownColumnError(
                    f"the formula quotes Q('{arg.value}'), which is not a column of the data; columns are: "
                    f"{', '.join(self.column_list)}{did_you_mean(arg.value, self.column_list)}", column=arg.value)
            self.variable(arg.value, numeric)
        elif bare and name == "C":
            if node is not self.top:  # patsy's C() returns a box, which no arithmetic or function takes (on any data)
                raise self.refuse(ast.unparse(node), "C() makes the whole term a factor; it cannot be an operand or "
                                  "an argument (write C(...) as a term of its own, or interact it with ':')")
            self.categorical(node)
        elif name in ELEMENTWISE_FUNCTIONS:
            self.single_argument(node, shown)
            self.expr(node.args[0], numeric=True)
        elif bare and name in _SPLINE_KEYWORDS:
            self.spline(node, name)
        else:
            raise self.refused_function(node, name, shown, bare)

    def function_name(self, node: ast.Call) -> tuple[str, str]:
        """(the function's name, how it is written), or a refusal for a call that is not of a plain name."""
        name = call_name(node, NUMPY_NAMES)
        if name is not None:
            return name, ast.unparse(node.func)
        func = node.func
        if isinstance(func, ast.Attribute):
            raise self.refuse(f"the method call {ast.unparse(node)!r}",
                              f"calling .{func.attr}() on a value is not evaluated (it could compute across rows, "
                              "or read values the formula does not declare); convert or transform the column with "
                              "a public rule before fitting, or use the row-wise functions listed next")
        raise self.refuse(f"the call {ast.unparse(node)!r}", "only functions called by name are evaluated")

    def single_argument(self, node: ast.Call, shown: str) -> None:
        if len(node.args) != 1 or node.keywords:
            raise self.refuse(f"{ast.unparse(node)}", f"{shown}() takes exactly one argument here")

    def refused_function(self, node: ast.Call, name: str, shown: str, bare: bool) -> DisallowedExpressionError:
        if bare and name in _DATA_STATISTIC_TRANSFORMS:
            arg = ast.unparse(node.args[0]) if node.args else "x"
            wrapped = arg if isinstance(node.args[0] if node.args else None, (ast.Name, ast.Call)) else f"({arg})"
            public = f"I({wrapped} - c)" if name == "center" else f"I(({wrapped} - c) / s)"
            scale = "" if name == "center" else " and a scale s (say a quarter of its width)"
            return StatefulTransformError(
                f"'{self.code}' uses patsy's {name}(), which computes the mean/sd of the private data. Write the "
                f"transform with public constants instead, {public}, with a centre c (say the midpoint of the "
                f"variable's documented range){scale} from domain knowledge, never from the data.")
        if bare and name == "te":
            return StatefulTransformError(f"'{self.code}': te() tensor splines choose knots from the data; not "
                                          "supported.")
        if bare and name == "poly":
            return self.refuse(f"{ast.unparse(node)}", "poly(x, k) must be a term of its own (y ~ poly(x, 2), or "
                               "poly(x, 2):z); inside an expression write the powers, e.g. I(x ** 2)")
        if bare and name in CONTRASTS:
            return self.refuse(f"{shown}()", "a contrast belongs inside C(), e.g. C(g, Treatment('a'), "
                               "levels=['a', 'b'])")
        if name in _CROSS_ROW:
            return self.refuse(f"{shown}()", f"{shown}() computes on every row at once, so each row's value would "
                               "depend on the other rows (one person's data could change every transformed value, "
                               f"which no bound covers); {_CENTRE_HINT}")
        if not bare:
            return self.refuse(f"{shown}()", f"{shown}() is not one of the row-wise functions dpstats evaluates")
        if name == "offset":  # R's offset term (a count model's log exposure): patsy and dpstats have none
            return self.refuse(f"{ast.unparse(node)}", "an offset is a term whose coefficient is fixed at 1, and "
                               "a linear model fits it by moving it to the response: np.log(y / e) ~ x for "
                               "np.log(y) ~ x + offset(np.log(e)), and I(y - z) ~ x for y ~ x + offset(z)")
        return DisallowedExpressionError(
            f"'{self.code}' calls the function {name}(), which dpstats does not evaluate: formulas are evaluated in "
            f"dpstats's own namespace with row-wise operations only ({_ALLOWED_SUMMARY}); functions defined by the "
            "caller are not looked up, because dpstats cannot check that they compute row by row. Write the "
            "transform with these operations, or transform the column with a public rule before fitting. "
            "Nothing was spent.")

    def categorical(self, node: ast.Call) -> None:
        if not node.args or len(node.args) > 2:
            raise self.refuse(ast.unparse(node), "C() takes a variable, an optional contrast and levels=[...]")
        target = node.args[0]
        splines = [n.func.id for n in ast.walk(target)
                   if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _SPLINE_KEYWORDS]
        if splines:  # (patsy failed on every data set, after the rows were read)
            raise self.refuse(ast.unparse(node), f"a spline's basis ({splines[0]}()) is several columns of "
                              "numbers, not the values of a factor; write the spline as a term of its own, or make "
                              "a factor of a comparison, C(x > 5)")
        if isinstance(target, ast.Name) and target.id in self.columns:
            self.variable(target.id, numeric=False)
        elif is_call(target, "Q"):
            self.call(target, numeric=False)  # type: ignore[arg-type]
        else:
            self.expr(target, numeric=True)
        contrasts = list(node.args[1:])
        for kw in node.keywords:
            if kw.arg == "levels":
                self.levels(kw.value)
            elif kw.arg == "contrast":
                contrasts.append(kw.value)
            else:
                raise self.refuse(f"C(..., {kw.arg}=...)", "C() takes only a contrast and levels=[...]")
        if len(contrasts) > 1:
            raise self.refuse(ast.unparse(node), "C() takes one contrast")
        for c in contrasts:
            self.contrast(c)

    def levels(self, node: ast.AST) -> None:
        try:
            value = literal_value(node)
        except ValueError:
            value = None
        if isinstance(value, (str, bytes)):
            raise self.refuse(f"levels={ast.unparse(node)}",
                              "levels must be a list of the levels, e.g. levels=['a', 'b']; got a string")
        ok = isinstance(value, (list, tuple)) and len(value) > 0 and all(
            isinstance(v, (str, int, float, bool)) for v in value)
        if not ok:
            raise self.refuse(
                f"levels={ast.unparse(node)}",
                "levels must be written as a literal list, e.g. levels=['a', 'b', 'c']: levels computed by code "
                "(np.unique(g), a variable of your session) would be read from the data or from outside the "
                "formula. Pass a list from your session with levels={'g': [...]} instead")

    def contrast(self, node: ast.AST) -> None:
        why = ("the contrast must be Treatment, Treatment('level'), Treatment(reference='level'), Sum, "
               "Sum(omit='level'), Helmert, Diff or Poly, with literal arguments")
        if isinstance(node, ast.Name) and node.id in CONTRASTS:
            self.facts.contrasts.add(node.id)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in CONTRASTS:
            self.facts.contrasts.add(node.func.id)
            try:
                values = [literal_value(arg) for arg in [*node.args, *(k.value for k in node.keywords)]]
            except ValueError:
                raise self.refuse(f"the contrast {ast.unparse(node)}", why) from None
            keyword = _CONTRAST_ARGUMENT.get(node.func.id)
            if len(values) > (keyword is not None) or any(k.arg != keyword for k in node.keywords):
                takes = f"one argument, {keyword}=" if keyword else "no arguments"
                raise self.refuse(f"the contrast {ast.unparse(node)}", f"{node.func.id} takes {takes}")
            if node.func.id == "Poly" and values:
                self.poly_scores(node, values[0])
            return
        raise self.refuse(f"the contrast {ast.unparse(node)}", why)

    def poly_scores(self, node: ast.Call, scores: Any) -> None:
        """Refuse ``Poly(scores)`` whose scores are not finite numbers, or whose orthogonal polynomials are not
        finite (scores so far apart that their powers overflow); decided from the literal scores alone."""
        ok = isinstance(scores, (list, tuple)) and len(scores) >= 2 and all(_isfinite_number(v) for v in scores)
        if ok:
            with np.errstate(all="ignore"):
                coding = patsy.builtins.Poly(list(scores)).code_without_intercept(list(range(len(scores)))).matrix
            ok = bool(np.isfinite(coding).all())
        if not ok:
            raise self.refuse(f"the contrast {ast.unparse(node)}", "Poly's scores must be a literal list of finite "
                              "numbers, one per level, whose powers stay finite (e.g. scores=[1, 2, 4])")

    def spline(self, node: ast.Call, name: str) -> None:
        given = {k.arg for k in node.keywords}
        missing = [k for k in _SPLINE_PUBLIC_KEYWORDS if k not in given]
        if missing:
            raise StatefulTransformError(
                f"'{self.code}': {name}() places knots and boundaries at quantiles of the private data unless "
                f"they are given. Pass {', '.join(missing)}= with public values, e.g. "
                f"{name}(x, knots=[2, 5, 8], lower_bound=0, upper_bound=10).")
        if len(node.args) != 1:
            raise self.refuse(ast.unparse(node), f"{name}() takes its variable as the only positional argument "
                              "and the rest by keyword (knots=, lower_bound=, upper_bound=, df=)")
        values: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg not in _SPLINE_KEYWORDS[name]:
                raise self.refuse(f"{name}(..., {kw.arg}=...)",
                                  f"{name}() takes only {', '.join(sorted(_SPLINE_KEYWORDS[name]))} (constraints "
                                  "such as 'center' are computed from the data)")
            values[kw.arg] = self.spline_argument(name, kw.arg, kw.value)
        if not values["lower_bound"] < values["upper_bound"]:
            raise self.refuse(ast.unparse(node), "lower_bound must be below upper_bound")
        if any(not values["lower_bound"] <= k <= values["upper_bound"] for k in values["knots"]):
            raise self.refuse(ast.unparse(node), "every knot must lie in [lower_bound, upper_bound]")
        if reason := _spline_arguments_conflict(name, values):
            raise self.refuse(ast.unparse(node), reason)
        self.expr(node.args[0], numeric=True)

    def spline_argument(self, name: str, arg: str, node: ast.AST) -> Any:
        """A spline keyword's literal value, checked (knots: finite numbers; bounds: a finite number; ...)."""
        try:
            value = literal_value(node)
        except ValueError:
            value = None
        if arg == "knots":
            ok = isinstance(value, (list, tuple)) and all(_isfinite_number(v) for v in value)
        elif arg in {"lower_bound", "upper_bound"}:
            ok = _isfinite_number(value)
        elif arg == "include_intercept":
            ok = isinstance(value, bool)
        else:  # df, degree
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            if ok and arg == "degree" and value > MAX_SPLINE_DEGREE:
                raise self.refuse(f"{name}(..., degree={value})",
                                  f"degree must be at most {MAX_SPLINE_DEGREE} (the B-spline evaluator's limit; "
                                  "cubic, degree=3, is the usual choice)")
        if not ok:
            raise self.refuse(f"{name}(..., {arg}={ast.unparse(node)})",
                              f"{arg} must be a literal ({'a list of numbers' if arg == 'knots' else 'a number'}"
                              "), written in the formula from domain knowledge, never computed from the data")
        return value


def _spline_arguments_conflict(name: str, values: Mapping[str, Any]) -> str:
    """Why patsy refuses a spline's literal arguments whatever the data (a ``df`` that contradicts the ``knots``
    and ``degree``), found by evaluating it at its two public bounds; "" where it does not.  The arguments are the
    formula's literals, so patsy's message quotes no data."""
    spline = {"bs": patsy.bs, "cr": patsy.cr, "cc": patsy.cc}[name]
    try:
        spline(np.array([values["lower_bound"], values["upper_bound"]], dtype=float), **values)
    except ValueError as exc:
        return f"its arguments contradict each other ({exc}); give the knots and leave out df"
    return ""


def _isfinite_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
