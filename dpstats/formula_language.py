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
  (R's ``poly(x, k, raw = TRUE)``), written out by :func:`model_desc` as the
  terms ``x + I(x ** 2) + ... + I(x ** k)``, whose ranges interval arithmetic
  derives from the bounds on x;
* B-splines ``bs`` and the cubic regression splines ``cr``/``cc`` with literal
  ``knots``, ``lower_bound`` and ``upper_bound`` (and literal ``df``,
  ``degree``, ``include_intercept``); their argument is clipped to
  [lower_bound, upper_bound] before the basis is evaluated, so no value can
  make the basis fail.

Everything else (cross-row functions, attribute calls such as
``.astype(float)``, indexing, lambdas, comprehensions, functions from the
caller's namespace) is refused with a
:class:`~dpstats.errors.DisallowedExpressionError` that names the call and
says why.  Unknown functions are named as functions, never as missing
columns.

Formulas are also written the way R users write them: ``y ~ .`` is every
column but those of the response (public: the schema's names), and sums of
many terms are nested in parentheses (the same design) so that patsy's
recursive evaluation of a flat ``a + b + ...`` never runs out of stack.
"""

from __future__ import annotations

import ast
import io
import keyword
import math
import tokenize
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
import patsy
import patsy.builtins
from patsy.desc import ModelDesc, Term
from patsy.eval import EvalFactor
from patsy.mgcv_cubic_splines import CC, CR
from patsy.splines import BS
from patsy.state import stateful_transform

from dpstats.bounds import ELEMENTWISE_FUNCTIONS
from dpstats.errors import (
    DataTypeError, DisallowedExpressionError, FormulaError, StatefulTransformError, UnknownColumnError,
)

__all__ = ["NAMESPACE", "FORMULA_ENV", "FactorFacts", "check_factor", "check_numeric_dtypes", "expand_formula",
           "model_desc", "term", "join_terms"]

_GROUP = 64  # terms per parenthesised group: patsy's recursion depth stays O(64 * log_64 d)
_CONTRASTS = ("Treatment", "Sum", "Helmert", "Diff", "Poly")
_SPLINE_KEYWORDS = {"bs": {"df", "knots", "degree", "include_intercept", "lower_bound", "upper_bound"},
                    "cr": {"df", "knots", "lower_bound", "upper_bound"},
                    "cc": {"df", "knots", "lower_bound", "upper_bound"}}
_SPLINE_PUBLIC_KEYWORDS = ("knots", "lower_bound", "upper_bound")
_DATA_STATISTIC_TRANSFORMS = {"center", "standardize", "scale"}
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


#: every name factor code can use besides the data's columns; the formula layer evaluates in this namespace only
NAMESPACE: dict[str, Any] = {
    "np": np, "numpy": np,
    "I": patsy.builtins.I, "Q": patsy.builtins.Q, "C": patsy.builtins.C,
    **{name: getattr(patsy.builtins, name) for name in _CONTRASTS},
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
    """

    code: str
    variables: list[str] = field(default_factory=list)
    numeric: list[str] = field(default_factory=list)
    boolean: bool = False
    calls: set[str] = field(default_factory=set)


def check_factor(code: str, columns: Iterable[str]) -> FactorFacts:
    """Check one factor's code against the allow-list (module docstring); decided from the code and column names.

    Raises
    ------
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
        raise FormulaError(f"'{code}' is not a valid expression") from None
    checker = _Checker(code, [str(c) for c in columns])
    top = tree.body
    checker.expr(top, numeric=False)
    wrapped = (_is_call(top, "I") or _is_call(top, "C")) and top.args  # type: ignore[attr-defined]
    inner = top.args[0] if wrapped else top  # type: ignore[attr-defined]
    checker.facts.boolean = isinstance(inner, ast.Compare)
    shadowed = sorted(checker.facts.calls & checker.columns)
    if shadowed:
        raise FormulaError(
            f"the data have a column named {shadowed[0]!r}, which is also the name of a function the formula "
            f"calls in '{code}'; rename the column (e.g. df.rename(columns={{{shadowed[0]!r}: "
            f"'{shadowed[0]}_value'}})). No budget was spent.")
    return checker.facts


def check_numeric_dtypes(facts: Iterable[FactorFacts], schema: pd.DataFrame) -> None:
    """Refuse a non-numeric column used as a number (``I(code * 2)`` on text), from the dtypes alone.

    ``schema`` is the prepared frame (declared levels make a column
    categorical), whose dtypes are public facts; no value is read.
    """
    for f in facts:
        for v in f.numeric:
            dt = schema[v].dtype
            if pd.api.types.is_bool_dtype(dt) or (pd.api.types.is_numeric_dtype(dt)
                                                   and not isinstance(dt, pd.CategoricalDtype)):
                continue
            raise DataTypeError(
                f"'{f.code}' uses the column '{v}' as a number, but its type is {_dtype_words(dt)}. Convert it "
                f"with a public rule before fitting (e.g. df['{v}'] = pd.to_numeric(df['{v}'])), or use it as a "
                f"factor: C({v}, levels=[...]). Decided from the column's type; no value was read and no budget "
                "was spent.")


def _dtype_words(dt: Any) -> str:
    """A dtype in words, without a string dtype's width (the width of a fixed-width text dtype is its longest value)."""
    if isinstance(dt, pd.CategoricalDtype):
        return "categorical (declared levels)"
    if pd.api.types.is_string_dtype(dt) or getattr(dt, "kind", "") in "OSU":
        return "text or objects"
    return str(dt)


def _is_call(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name


def _literal(node: ast.AST) -> Any:
    """The value of a Python literal, or raise ValueError."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not a literal") from None


def _finite_number(node: ast.AST) -> float | None:
    """The value of a (signed) finite numeric literal, else None."""
    try:
        v = _literal(node)
    except ValueError:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        return None
    return float(v)


def _constant_expression(node: ast.AST) -> bool:
    """Numeric literals combined with + - * / ** only (an exponent)."""
    if isinstance(node, ast.Constant):
        return _finite_number(node) is not None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _constant_expression(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        return _constant_expression(node.left) and _constant_expression(node.right)
    return False


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

    # -- refusals -------------------------------------------------------------------------------------------------
    def refuse(self, what: str, why: str) -> DisallowedExpressionError:
        return DisallowedExpressionError(
            f"'{self.code}' uses {what}: {why}. dpstats evaluates formulas with row-wise operations only "
            f"({_ALLOWED_SUMMARY}), checked before any data are read; nothing was spent.")

    def unknown_name(self, name: str) -> UnknownColumnError:
        return UnknownColumnError(
            f"the formula uses '{name}', which is not a column of the data; columns are: "
            f"{', '.join(self.column_list)}")

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
            if _finite_number(node) is None:
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
            self.expr(node.left)
            self.expr(node.comparators[0])
        elif isinstance(node, ast.Call):
            self.call(node, numeric)
        else:
            why = next((w for t, w in _REFUSED_NODES.items() if isinstance(node, t)),
                       "this kind of Python expression is not evaluated")
            raise self.refuse(repr(ast.unparse(node)), why)

    # -- calls ----------------------------------------------------------------------------------------------------
    def call(self, node: ast.Call, numeric: bool) -> None:
        name, shown = self.function_name(node)
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise self.refuse(f"*args or **kwargs in {shown}()", "arguments must be written out")
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
                    f"{', '.join(self.column_list)}")
            self.variable(arg.value, numeric)
        elif bare and name == "C":
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
        func = node.func
        if isinstance(func, ast.Name):
            return func.id, func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"np", "numpy"}:
            return func.attr, f"{func.value.id}.{func.attr}"
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
            return StatefulTransformError(
                f"'{self.code}' uses patsy's {name}(), which computes the mean/sd of the private data. Write the "
                "transform with public constants instead, e.g. I((x - 50) / 10), using centre and scale from "
                "domain knowledge.")
        if bare and name == "te":
            return StatefulTransformError(f"'{self.code}': te() tensor splines choose knots from the data; not "
                                          "supported.")
        if bare and name == "poly":
            return self.refuse(f"{ast.unparse(node)}", "poly(x, k) must be a term of its own (y ~ poly(x, 2), or "
                               "poly(x, 2):z); inside an expression write the powers, e.g. I(x ** 2)")
        if bare and name in _CONTRASTS:
            return self.refuse(f"{shown}()", "a contrast belongs inside C(), e.g. C(g, Treatment('a'), "
                               "levels=['a', 'b'])")
        if name in _CROSS_ROW:
            return self.refuse(f"{shown}()", f"{shown}() computes on every row at once, so each row's value would "
                               "depend on the other rows (one person's data could change every transformed value, "
                               f"which no bound covers); {_CENTRE_HINT}")
        if not bare:
            return self.refuse(f"{shown}()", f"{shown}() is not one of the row-wise functions dpstats evaluates")
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
        if isinstance(target, ast.Name) and target.id in self.columns:
            self.variable(target.id, numeric=False)
        elif _is_call(target, "Q"):
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
            value = _literal(node)
        except ValueError:
            value = None
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
        if isinstance(node, ast.Name) and node.id in _CONTRASTS:
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CONTRASTS:
            try:
                for arg in [*node.args, *(k.value for k in node.keywords)]:
                    _literal(arg)
            except ValueError:
                raise self.refuse(f"the contrast {ast.unparse(node)}", why) from None
            if all(k.arg is not None for k in node.keywords):
                return
        raise self.refuse(f"the contrast {ast.unparse(node)}", why)

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
            values[kw.arg] = self.spline_argument(name, kw.arg, kw.value)  # type: ignore[arg-type]
        if not values["lower_bound"] < values["upper_bound"]:
            raise self.refuse(ast.unparse(node), "lower_bound must be below upper_bound")
        if any(not values["lower_bound"] <= k <= values["upper_bound"] for k in values["knots"]):
            raise self.refuse(ast.unparse(node), "every knot must lie in [lower_bound, upper_bound]")
        self.expr(node.args[0], numeric=True)

    def spline_argument(self, name: str, arg: str, node: ast.AST) -> Any:
        """A spline keyword's literal value, checked (knots: finite numbers; bounds: a finite number; ...)."""
        try:
            value = _literal(node)
        except ValueError:
            value = None
        if arg == "knots":
            ok = isinstance(value, (list, tuple)) and all(_is_finite_number(v) for v in value)
        elif arg in {"lower_bound", "upper_bound"}:
            ok = _is_finite_number(value)
        elif arg == "include_intercept":
            ok = isinstance(value, bool)
        else:  # df, degree
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        if not ok:
            raise self.refuse(f"{name}(..., {arg}={ast.unparse(node)})",
                              f"{arg} must be a literal ({'a list of numbers' if arg == 'knots' else 'a number'}"
                              "), written in the formula from domain knowledge, never computed from the data")
        return value


def _is_finite_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


# -- formulas: y ~ ., long sums, poly -------------------------------------------------------------------------------

def term(name: str) -> str:
    """A column name as a patsy factor: bare when it is a plain identifier, else Q('...')."""
    if name.isidentifier() and not keyword.iskeyword(name) and name not in {"C", "I", "Q"}:
        return name
    return f"Q({name!r})"


def join_terms(terms: Sequence[str]) -> str:
    """Join terms with '+', nesting groups of at most 64 in parentheses (the same design as the flat sum)."""
    terms = list(terms)
    while len(terms) > _GROUP:
        terms = ["(" + " + ".join(terms[i:i + _GROUP]) + ")" for i in range(0, len(terms), _GROUP)]
    return " + ".join(terms)


@dataclass
class _Token:
    kind: int
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    """Python tokens of ``text`` with absolute offsets (a formula is tokenised as Python, as patsy does)."""
    text = text.replace("\r", " ").replace("\n", " ")  # one logical line (same offsets)
    out: list[_Token] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type in (tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.COMMENT):
                continue
            out.append(_Token(tok.type, tok.string, tok.start[1], tok.end[1]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        raise FormulaError(f"cannot parse formula {text!r}: unbalanced brackets or quotes") from None
    return out


def _response_columns(lhs: str, columns: Sequence[str]) -> set[str]:
    """The columns named on the left of '~' (bare names or Q('...'))."""
    names: set[str] = set()
    toks = _tokens(lhs)
    for i, t in enumerate(toks):
        if t.kind == tokenize.NAME and t.text in columns:
            names.add(t.text)
        if t.kind == tokenize.STRING and i >= 2 and toks[i - 2].text == "Q":
            try:
                names.add(str(ast.literal_eval(t.text)))
            except (ValueError, SyntaxError):
                pass
    return names


_OPERATOR_BEFORE = {"~", "+", "-", "*", "/", ":", "(", "**", "^", "%", ","}


def _expand_dot(rhs: str, dot_terms: Sequence[str]) -> str:
    """``rhs`` with every standalone '.' replaced by the parenthesised sum of ``dot_terms``."""
    toks = _tokens(rhs)
    pieces, last = [], 0
    for i, t in enumerate(toks):
        if t.kind != tokenize.OP or t.text != ".":
            continue
        before = toks[i - 1] if i > 0 else None
        after = toks[i + 1] if i + 1 < len(toks) else None
        standalone = (before is None or (before.kind == tokenize.OP and before.text in _OPERATOR_BEFORE)) and (
            after is None or (after.kind == tokenize.OP and after.text not in {"(", "."}))
        if standalone:
            if not dot_terms:
                raise FormulaError("'.' stands for every column but the response, and there are none left")
            pieces += [rhs[last:t.start], "(" + join_terms(dot_terms) + ")"]
            last = t.end
    return "".join(pieces) + rhs[last:] if pieces else rhs


def _split_top_level(text: str, separators: set[str]) -> list[tuple[str, str]]:
    """``text`` cut at top-level binary operators in ``separators``: [(operator before, piece), ...]."""
    out: list[tuple[str, str]] = []
    depth, op, start, prev = 0, "", 0, None
    for t in _tokens(text):
        if t.kind == tokenize.OP and t.text in "([{":
            depth += 1
        elif t.kind == tokenize.OP and t.text in ")]}":
            depth -= 1
        elif depth == 0 and t.kind == tokenize.OP and t.text in separators and prev is not None and not (
                prev.kind == tokenize.OP and prev.text in _OPERATOR_BEFORE):
            out.append((op, text[start:t.start].strip()))
            op, start = t.text, t.end
        prev = t
    out.append((op, text[start:].strip()))
    return out


def _nest_sums(rhs: str) -> str:
    """``rhs`` with long runs of '+'-joined terms nested in parentheses (the same terms, in the same order).

    patsy evaluates ``a + b + c`` recursively, one level per term.  A run of
    terms joined by '+' is an ordered union, so grouping it is exact; the
    intercept literals (0, 1, -1) and the operands of '-' stay outside the
    groups, where patsy's rules for them apply unchanged.
    """
    parts = _split_top_level(rhs, {"+", "-"})
    if len(parts) <= _GROUP:
        return rhs
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(("+ " if out else "") + "(" + join_terms(run) + ")")
            run.clear()

    for op, piece in parts:
        if op in {"", "+"} and piece not in {"0", "1", "-1", "+1", "-0", "+0"} and piece:
            run.append(piece)
        else:
            flush()
            out.append(f"{op} {piece}".strip() if out or op else piece)
    flush()
    return " ".join(out)


def expand_formula(formula: str, columns: Sequence[str]) -> str:
    """The formula with R's '.' expanded to every column but the response's, and long sums nested.

    Decided from the formula and the column names only (public).  The result
    is what patsy parses (:func:`model_desc`); for data read in chunks the
    workers parse this same string.
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    tilde = _split_top_level(formula, {"~"})
    if len(tilde) != 2:
        raise FormulaError("the formula needs exactly one '~', with a response on its left, e.g. 'y ~ x'")
    lhs, rhs = tilde[0][1], tilde[1][1]
    response = _response_columns(lhs, columns)
    rhs = _expand_dot(rhs, [term(c) for c in columns if c not in response])
    return f"{lhs} ~ {_nest_sums(rhs)}"


def model_desc(expanded: str, shown: str | None = None) -> ModelDesc:
    """patsy's model description of an expanded formula (:func:`expand_formula`), with ``poly(x, k)`` written out.

    ``shown`` is the formula as the user wrote it, for messages.
    """
    shown = expanded if shown is None else shown
    try:
        desc = ModelDesc.from_formula(expanded)
    except patsy.PatsyError as exc:
        raise FormulaError(f"cannot parse formula {shown!r}: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise FormulaError(f"cannot parse formula {shown[:200]!r}: it nests too deeply") from None
    for t in desc.lhs_termlist:
        for f in t.factors:
            if _poly_call(f.code) is not None:
                raise FormulaError("poly() cannot be the response; the response is a single column")
    return ModelDesc(desc.lhs_termlist, _expand_poly(desc.rhs_termlist))


def _poly_call(code: str) -> ast.Call | None:
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    return node if _is_call(node, "poly") else None  # type: ignore[return-value]


def _poly_powers(code: str, call: ast.Call) -> list[str]:
    """The factor codes of ``poly(x, k)``: x, I(x ** 2), ..., I(x ** k) (raw powers, as R's raw = TRUE)."""
    why = ("poly(x, k) takes a variable or expression and a literal degree k >= 1 (raw powers x, x^2, ..., x^k, "
           "as R's poly(x, k, raw = TRUE))")
    degree = call.args[1] if len(call.args) == 2 else None
    for kw in call.keywords:
        if kw.arg == "degree" and degree is None:
            degree = kw.value
        elif kw.arg == "raw":
            raw = kw.value.value if isinstance(kw.value, ast.Constant) else None
            if raw is False:
                raise DisallowedExpressionError(
                    f"'{code}': orthogonal polynomials (raw=False, R's default) are computed from the data (every "
                    "row's value depends on all rows); dpstats evaluates raw powers: poly(x, k) or poly(x, k, "
                    "raw=True). Nothing was spent.")
            if raw is not True:
                raise DisallowedExpressionError(f"'{code}': raw= must be the literal True (or be left out)")
        else:
            raise DisallowedExpressionError(f"'{code}': {why}")
    k = _finite_number(degree) if degree is not None else None
    if len(call.args) not in (1, 2) or k is None or not float(k).is_integer() or k < 1:
        raise DisallowedExpressionError(f"'{code}': {why}")
    arg = call.args[0]
    base = ast.unparse(arg)
    compound = isinstance(arg, (ast.BinOp, ast.UnaryOp, ast.Compare))
    first = f"I({base})" if compound else base
    base = f"({base})" if compound else base
    return [first] + [f"I({base} ** {j})" for j in range(2, int(k) + 1)]


def _expand_poly(terms: Sequence[Term]) -> list[Term]:
    """The terms with every ``poly(x, k)`` factor written out as its powers (one term per power), deduplicated."""
    out: dict[Term, None] = {}
    for t in terms:
        calls = [_poly_call(f.code) if "poly" in f.code else None for f in t.factors]
        if all(c is None for c in calls):
            out.setdefault(t)
            continue
        alternatives = [[f] if c is None else [EvalFactor(p) for p in _poly_powers(f.code, c)]
                        for f, c in zip(t.factors, calls)]
        for combo in _products(alternatives):
            out.setdefault(Term(list(dict.fromkeys(combo))))
    return list(out)


def _products(alternatives: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    """Cartesian product with the first factor varying slowest (the order R writes poly(x, 2):z in)."""
    combos: list[tuple[Any, ...]] = [()]
    for options in alternatives:
        combos = [c + (o,) for c in combos for o in options]
    return combos

