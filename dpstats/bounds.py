"""Public data bounds: declared intervals, interval arithmetic and clipping.

The formula layer turns the user's ``bounds={...}`` (on raw variables or on
design columns) into one interval per design column and one for the response,
using interval arithmetic over the factor code (``np.log(x)``, ``I(x**2)``,
``x1:x2``, ...).  Methods that need bounds receive a :class:`DataBounds` and
clip the data to it, so the declared bounds hold for every row whatever the
data are: that is what makes the sensitivities worst-case.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

__all__ = ["Interval", "DataBounds", "IntervalError", "UnsupportedExpressionError", "interval_of_code"]


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] of the real line."""

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if not (self.lo <= self.hi):
            raise ValueError(f"empty interval [{self.lo}, {self.hi}]")

    @property
    def abs_max(self) -> float:
        return max(abs(self.lo), abs(self.hi))

    @property
    def finite(self) -> bool:
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    def __add__(self, other: "Interval") -> "Interval":
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __neg__(self) -> "Interval":
        return Interval(-self.hi, -self.lo)

    def __sub__(self, other: "Interval") -> "Interval":
        return self + (-other)

    def __mul__(self, other: "Interval") -> "Interval":
        p = [self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi]
        return Interval(min(p), max(p))

    def reciprocal(self) -> "Interval":
        if self.lo <= 0 <= self.hi:
            raise IntervalError("division by an interval that contains 0")
        return Interval(1.0 / self.hi, 1.0 / self.lo)

    def power(self, k: float) -> "Interval":
        if float(k).is_integer():
            k = int(k)
            if k == 0:
                return Interval(1.0, 1.0)
            if k < 0:
                return self.reciprocal().power(-k)
            if k % 2 == 1:
                return Interval(self.lo**k, self.hi**k)
            lo = 0.0 if self.lo <= 0 <= self.hi else min(self.lo**k, self.hi**k)
            return Interval(lo, max(self.lo**k, self.hi**k))
        if self.lo < 0:
            raise IntervalError("a fractional power needs a lower bound >= 0")
        vals = [self.lo**k, self.hi**k] if self.lo > 0 or k > 0 else [math.inf]
        return Interval(min(vals), max(vals))

    def monotone(self, f, name: str, domain_lo: float = -math.inf, strict_lo: bool = False) -> "Interval":
        """Image under an increasing function f defined on [domain_lo, inf)."""
        if self.lo < domain_lo or (strict_lo and self.lo <= domain_lo):
            raise IntervalError(f"{name} needs a lower bound {'>' if strict_lo else '>='} {domain_lo}")
        return Interval(f(self.lo), f(self.hi))


class IntervalError(ValueError):
    """A bound cannot be derived for an expression."""


class UnsupportedExpressionError(IntervalError):
    """The expression uses an operation interval arithmetic does not cover, whatever the variables' bounds.

    Distinguishes a structural failure (an unknown function, a non-constant
    exponent) from one that better bounds on the variables would cure (a
    missing bound, a log of an interval reaching 0).
    """


_INCREASING = {
    "log": (math.log, 0.0, True), "log2": (math.log2, 0.0, True), "log10": (math.log10, 0.0, True),
    "log1p": (math.log1p, -1.0, True), "exp": (math.exp, -math.inf, False),
    "sqrt": (math.sqrt, 0.0, False), "expm1": (math.expm1, -math.inf, False),
    "arcsinh": (math.asinh, -math.inf, False), "tanh": (math.tanh, -math.inf, False),
}


def _call_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"np", "numpy"}:
        return func.attr
    return None


def interval_of_code(code: str, variables: Mapping[str, Interval]) -> Interval:
    """Bound the value of a numeric patsy factor ``code`` given bounds on its variables.

    Supports names, numeric constants, + - * / **, ``I()``, ``Q("name")`` and
    the increasing functions log, log2, log10, log1p, exp, expm1, sqrt,
    arcsinh, tanh (bare or as ``np.``), plus ``abs``/``np.abs`` and
    ``np.square``.  Raises :class:`IntervalError` naming what is missing.
    """
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except SyntaxError as exc:  # pragma: no cover - patsy has parsed it already
        raise UnsupportedExpressionError(f"cannot parse {code!r}") from exc
    try:
        return _eval(tree, variables)
    except OverflowError:  # exp or a power of a wide range: no finite clip range follows from these bounds
        raise IntervalError(f"the range of {code!r} overflows a float") from None


def _eval(node: ast.AST, variables: Mapping[str, Interval]) -> Interval:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return Interval(float(node.value), float(node.value))
    if isinstance(node, ast.Name):
        if node.id not in variables:
            raise IntervalError(f"no bound declared for variable '{node.id}'")
        return variables[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _eval(node.operand, variables)
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BinOp):
        left = _eval(node.left, variables)
        if isinstance(node.op, ast.Pow):
            if not (isinstance(node.right, ast.Constant) and isinstance(node.right.value, (int, float))):
                raise UnsupportedExpressionError("only constant exponents are supported")
            return left.power(float(node.right.value))
        right = _eval(node.right, variables)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if isinstance(node.op, ast.Div):
            return left * right.reciprocal()
        raise UnsupportedExpressionError(f"operator {type(node.op).__name__} is not supported")
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = _call_name(node.func)
        if name == "Q" and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            var = node.args[0].value
            if var not in variables:
                raise IntervalError(f"no bound declared for variable '{var}'")
            return variables[var]
        inner = _eval(node.args[0], variables)
        if name == "I":
            return inner
        if name in {"abs", "absolute", "fabs"}:
            lo = 0.0 if inner.lo <= 0 <= inner.hi else min(abs(inner.lo), abs(inner.hi))
            return Interval(lo, inner.abs_max)
        if name == "square":
            return inner.power(2)
        if name in _INCREASING:
            f, dom, strict = _INCREASING[name]
            return inner.monotone(f, name, dom, strict)
        raise UnsupportedExpressionError(f"cannot bound the function {name or ast.unparse(node.func)}()")
    raise UnsupportedExpressionError(f"cannot bound the expression {ast.unparse(node)!r}")


@dataclass(frozen=True)
class DataBounds:
    """Per-design-column clip ranges and the response range, all public.

    Attributes
    ----------
    column_lo, column_hi:
        Clip range of each design column (length d).
    y_lo, y_hi:
        Clip range of the response.
    """

    column_lo: np.ndarray
    column_hi: np.ndarray
    y_lo: float
    y_hi: float

    @property
    def x_norm(self) -> float:
        """B_X: bound on the Euclidean norm of a clipped design row."""
        return float(np.sqrt(np.sum(np.maximum(self.column_lo**2, self.column_hi**2))))

    @property
    def y_abs(self) -> float:
        """B_Y: bound on |y| of a clipped response."""
        return float(max(abs(self.y_lo), abs(self.y_hi)))

    def clip(self, X: np.ndarray, y: np.ndarray, inplace: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Clip X column-wise and y to the declared ranges (new arrays, inputs untouched; with ``inplace`` the
        float arrays X and y are overwritten, for chunks that are the caller's own)."""
        # one scalar clip to the envelope of all ranges (fast), then the columns with narrower ranges
        Xc = np.clip(X, self.column_lo.min(), self.column_hi.max(), out=X if inplace else None)
        narrower = np.flatnonzero((self.column_lo > self.column_lo.min()) | (self.column_hi < self.column_hi.max()))
        for j in narrower:
            np.clip(Xc[:, j], self.column_lo[j], self.column_hi[j], out=Xc[:, j])
        yc = np.clip(y, self.y_lo, self.y_hi, out=y if inplace else None)
        return Xc, yc

    def describe(self, names: list[str] | None = None) -> str:
        return (f"design rows clipped to declared per-column ranges (||x||_2 <= {self.x_norm:.4g}); "
                f"response clipped to [{self.y_lo:.4g}, {self.y_hi:.4g}]")
