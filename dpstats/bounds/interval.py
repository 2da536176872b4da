"""Interval arithmetic over factor code: the range of ``np.log(x)``, ``I(x ** 2)``, ``x1 * x2``, ... from
declared ranges of the variables, and the public domain of each transform.

Everything here reads the code's syntax tree and the declared intervals only
(no data): :func:`interval_of_code` bounds a numeric factor,
:func:`domain_violation` says why a transform is undefined somewhere on the
declared ranges, :func:`domain_requirements` states each transform's domain in
words for messages that must not depend on the data.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Collection, Container, Mapping
from dataclasses import dataclass
from typing import Any

from dpstats.errors import DPStatsError, InvalidBoundsError

__all__ = ["Interval", "IntervalError", "UnsupportedExpressionError", "DomainError", "interval_of_code",
           "domain_violation", "domain_requirements", "ELEMENTWISE_FUNCTIONS", "call_name", "NUMPY_NAMES"]


@dataclass(frozen=True)
class Interval:
    """A closed interval [lo, hi] of the real line, with the interval arithmetic of its operators.

    Attributes
    ----------
    lo, hi : float
        The ends, lo <= hi (an empty interval is an :class:`~dpstats.errors.InvalidBoundsError`, a
        ``ValueError``).
    """

    lo: float
    hi: float

    def __post_init__(self) -> None:
        if not (self.lo <= self.hi):
            raise InvalidBoundsError(f"empty interval [{self.lo}, {self.hi}]: lo must not exceed hi")

    @property
    def abs_max(self) -> float:
        """The largest absolute value on the interval, max(|lo|, |hi|)."""
        return max(abs(self.lo), abs(self.hi))

    @property
    def finite(self) -> bool:
        """Both ends are finite."""
        return math.isfinite(self.lo) and math.isfinite(self.hi)

    def __add__(self, other: Interval) -> Interval:
        return _finite(self.lo + other.lo, self.hi + other.hi)

    def __neg__(self) -> Interval:
        return Interval(-self.hi, -self.lo)

    def __sub__(self, other: Interval) -> Interval:
        return self + (-other)

    def __mul__(self, other: Interval) -> Interval:
        p = [self.lo * other.lo, self.lo * other.hi, self.hi * other.lo, self.hi * other.hi]
        return _finite(min(p), max(p))

    def reciprocal(self) -> Interval:
        """The image of the interval under x -> 1/x.

        Returns
        -------
        Interval
            [1/hi, 1/lo].

        Raises
        ------
        DomainError
            The interval contains 0, or an end of the image is not finite.
        """
        if self.lo <= 0 <= self.hi:
            raise DomainError("division by an interval that contains 0")
        return _finite(1.0 / self.hi, 1.0 / self.lo)

    def power(self, k: float) -> Interval:
        """The image of the interval under x -> x ** k.

        Parameters
        ----------
        k : float
            The exponent; an integer one allows any interval (a negative one through :meth:`reciprocal`), a
            fractional one needs lo >= 0 (lo > 0 when k < 0).

        Returns
        -------
        Interval
            The smallest interval holding x ** k for every x in [lo, hi] (for even k, 0 when the interval
            contains 0).

        Raises
        ------
        DomainError
            The power is undefined somewhere on the interval, or overflows a float.
        """
        if float(k).is_integer():
            k = int(k)
            if k == 0:
                return Interval(1.0, 1.0)
            if k < 0:
                return self.reciprocal().power(-k)
            ends = [_pow(self.lo, k), _pow(self.hi, k)]
            if k % 2 == 1:
                return _finite(*ends)
            lo = 0.0 if self.lo <= 0 <= self.hi else min(ends)
            return _finite(lo, max(ends))
        if self.lo < 0:
            raise DomainError("a fractional power needs a lower bound >= 0")
        if k < 0 and self.lo <= 0:
            raise DomainError("a negative power needs a lower bound > 0")
        ends = [_pow(self.lo, k), _pow(self.hi, k)]
        return _finite(min(ends), max(ends))

    def monotone(self, f: Callable[[float], float], name: str, domain_lo: float = -math.inf,
                 strict_lo: bool = False) -> Interval:
        """The image of the interval under an increasing function.

        Parameters
        ----------
        f : callable
            An increasing function of a float, defined on [domain_lo, inf) (or (domain_lo, inf)).
        name : str
            The function's name, for the message.
        domain_lo : float
            The lower end of f's domain.
        strict_lo : bool
            The domain is open at ``domain_lo`` (as for log).

        Returns
        -------
        Interval
            [f(lo), f(hi)].

        Raises
        ------
        DomainError
            The interval reaches outside f's domain, or f overflows a float on it.
        """
        if self.lo < domain_lo or (strict_lo and self.lo <= domain_lo):
            raise DomainError(f"{name} needs a lower bound {'>' if strict_lo else '>='} {domain_lo}")
        try:
            return _finite(f(self.lo), f(self.hi))
        except OverflowError:
            raise DomainError(f"{name} overflows a float on this range") from None


def _pow(base: float, k: float) -> float:
    try:
        return float(base) ** k
    except OverflowError:
        raise DomainError("a power overflows a float on this range") from None


def _finite(lo: float, hi: float) -> Interval:
    """[lo, hi], or DomainError when an end is not finite (the expression overflows a float on the range)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise DomainError("the expression overflows a float on this range")
    return Interval(lo, hi)


class IntervalError(DPStatsError, ValueError):
    """A bound cannot be derived for an expression (a :class:`~dpstats.errors.DPStatsError` and, as before, a
    ``ValueError``)."""


class UnsupportedExpressionError(IntervalError):
    """The expression uses an operation interval arithmetic does not cover, whatever the variables' bounds.

    Distinguishes a structural failure (an unknown function, a non-constant
    exponent) from one that better bounds on the variables would cure (a
    missing bound, a log of an interval reaching 0).
    """


class DomainError(IntervalError):
    """The expression is undefined, or overflows a float, somewhere on the given ranges of its variables.

    For instance a log of a range reaching 0, a division by a range that
    contains 0, a fractional power of a range reaching below 0, or exp of a
    range reaching 710.  Narrower (or shifted) bounds on the variables cure it.
    """


#: increasing elementwise functions: name -> (function, lower end of its domain, domain open at that end)
_INCREASING = {
    "log": (math.log, 0.0, True), "log2": (math.log2, 0.0, True), "log10": (math.log10, 0.0, True),
    "log1p": (math.log1p, -1.0, True), "exp": (math.exp, -math.inf, False),
    "sqrt": (math.sqrt, 0.0, False), "expm1": (math.expm1, -math.inf, False),
    "arcsinh": (math.asinh, -math.inf, False), "tanh": (math.tanh, -math.inf, False),
}
_ABS = {"abs", "absolute", "fabs"}

#: the elementwise (row-wise) functions interval arithmetic bounds; the formula language allows exactly these
ELEMENTWISE_FUNCTIONS: frozenset[str] = frozenset({*_INCREASING, *_ABS, "square"})

_COMPARISONS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq)


#: the names of numpy in factor code (``np.log(x)``, ``numpy.log(x)``)
NUMPY_NAMES: frozenset[str] = frozenset({"np", "numpy"})


def call_name(call: ast.Call, modules: Collection[str] | None = None, shadowed: Container[Any] = ()) -> str | None:
    """The name of the function a call of factor code calls.

    Parameters
    ----------
    call : ast.Call
        A call of a factor's syntax tree.
    modules : collection of str, optional
        The modules whose functions count (:data:`NUMPY_NAMES`: ``np.f(...)``, not ``x.f(...)``); None: ``m.f(...)``
        of any callee ``m``.
    shadowed : container, default ()
        Names that do not name a function here (a frame's columns shadow the evaluation namespace): a call of one,
        or (with ``modules``) of a function of a module one shadows, calls none.

    Returns
    -------
    str or None
        ``f`` for ``f(...)`` and ``m.f(...)``; None for any other callee.
    """
    func = call.func
    if isinstance(func, ast.Name):
        return None if func.id in shadowed else func.id
    if isinstance(func, ast.Attribute) and (modules is None or (
            isinstance(func.value, ast.Name) and func.value.id in modules and func.value.id not in shadowed)):
        return func.attr
    return None


def interval_of_code(code: str, variables: Mapping[str, Interval]) -> Interval:
    """Bound the value of a numeric patsy factor ``code`` given bounds on its variables.

    Supports names, numeric constants, + - * / **, comparisons (0/1), ``I()``,
    ``Q("name")`` and the increasing functions log, log2, log10, log1p, exp,
    expm1, sqrt, arcsinh, tanh (bare or as ``np.``), plus
    ``abs``/``np.abs`` and ``np.square``.

    Parameters
    ----------
    code : str
        The factor's code.
    variables : mapping of str to Interval
        The declared range of each variable.

    Returns
    -------
    Interval
        A range that holds the code's value for every value of the variables in their ranges.

    Raises
    ------
    IntervalError
        Naming what is missing (a variable's range); :class:`UnsupportedExpressionError` for an operation
        interval arithmetic does not cover; :class:`DomainError` when the expression is undefined or
        overflows somewhere on the ranges.
    """
    iv = _eval(_parse(code), variables, partial=False)
    assert iv is not None  # not partial: every variable has a range or IntervalError was raised
    return iv


def domain_violation(code: str, variables: Mapping[str, Interval]) -> str | None:
    """Why ``code`` is undefined somewhere on the declared ranges of its variables, or None.

    Variables without a range are unknown: operations on them are not
    checked, but every sub-expression whose variables all have declared
    ranges is (so ``np.log(x) * z`` with x declared in [0, 10] is found even
    when z has no bound).  Structural problems (an operation interval
    arithmetic does not cover) are not domain violations and give None.

    Parameters
    ----------
    code : str
        The factor's code.
    variables : mapping of str to Interval
        The declared ranges (variables not in it are unknown).

    Returns
    -------
    str or None
        Why the code is undefined somewhere on the ranges, or None.
    """
    return _violation(_parse(code), variables)


def decided_comparison(code: str, variables: Mapping[str, Interval]) -> bool | None:
    """The value of factor code that is one comparison (bare, in ``I()``, or the first argument of ``C()``) where the
    declared ranges of its variables decide it for every row, else None.

    The variables are clipped to their declared bounds before the formula is evaluated, so ``I(x > 12)`` with x
    declared in [0, 10] is False on every row of every data set the declarations allow: one constant, no term of a
    model.  Decided from the code and the ranges alone (:func:`_compare`), on ranges that hold the float values
    numpy computes (:func:`_rounded_range`: a threshold at an end that rounding can cross is left open).

    Parameters
    ----------
    code : str
        The factor's code.
    variables : mapping of str to Interval
        The declared ranges (variables not in it are unknown, and a comparison that reads one is not decided).

    Returns
    -------
    bool or None
        True or False where the ranges decide the comparison, None otherwise (not a comparison, an operand
        without a range, or an expression interval arithmetic does not cover).
    """
    try:
        node = _parse(code)
    except IntervalError:
        return None
    while isinstance(node, ast.Call) and call_name(node, NUMPY_NAMES) in {"I", "C"} and node.args:
        node = node.args[0]
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS)):
        return None
    try:
        left = _rounded_range(node.left, variables)
        right = _rounded_range(node.comparators[0], variables)
    except IntervalError:
        return None
    if left is None or right is None:
        return None
    iv = _compare(node.ops[0], left, right)
    return None if iv.lo != iv.hi else bool(iv.lo)


#: the relative width by which :func:`_rounded_range` widens the range of an operation whose float value on a row
#: may differ from the one computed at the range's ends (2 ** -40: some thousand units in the last place)
_ROUNDING_MARGIN = 2.0 ** -40
#: the functions whose float value is the correctly rounded one in numpy and in :mod:`math` alike
_EXACT_FUNCTIONS = _ABS | {"sqrt"}


def _rounded_range(node: ast.AST, variables: Mapping[str, Interval]) -> Interval | None:
    """A range that holds the float value numpy computes for ``node`` on every row whose variables lie in their
    ranges (None where a variable has none), for :func:`decided_comparison`.

    A sum, difference or product computed at the ends of its operands' ranges bounds the rows' values exactly
    (rounding to nearest is monotone), as do a variable, a constant, ``abs`` and ``sqrt``.  A division is computed
    by :meth:`Interval.reciprocal` and a product (two roundings: 49 * (1 / 49) is 0.9999999999999999 where
    49 / 49 is 1.0), a power by Python's ``**`` and the other functions by :mod:`math`, whose values can differ from
    numpy's by a few units in the last place; their ranges are widened by ``_ROUNDING_MARGIN``, so that a
    threshold at such an end is left open, never decided the wrong way.
    """
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _rounded_range(node.operand, variables)
        return inner if inner is None or isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)):
        left = _rounded_range(node.left, variables)
        if isinstance(node.op, ast.Pow):
            right_node: ast.expr = node.right  # a constant exponent (:func:`_constant`)
            operands = {"_a": left}
        else:
            right_node = ast.Name("_b", ast.Load())
            operands = {"_a": left, "_b": _rounded_range(node.right, variables)}
        if any(v is None for v in operands.values()):
            return None
        iv = _eval(ast.BinOp(ast.Name("_a", ast.Load()), node.op, right_node),
                   {k: v for k, v in operands.items() if v is not None}, False)
        return _widened(iv) if isinstance(node.op, (ast.Div, ast.Pow)) else iv
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords \
            and call_name(node, NUMPY_NAMES) not in {"Q", None}:
        inner = _rounded_range(node.args[0], variables)
        if inner is None:
            return None
        iv = _eval(ast.Call(node.func, [ast.Name("_a", ast.Load())], []), {"_a": inner}, False)
        return iv if call_name(node, NUMPY_NAMES) in {"I", *_EXACT_FUNCTIONS} else _widened(iv)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS):
        left = _rounded_range(node.left, variables)
        right = _rounded_range(node.comparators[0], variables)
        return Interval(0.0, 1.0) if left is None or right is None else _compare(node.ops[0], left, right)
    return _eval(node, variables, True)  # a variable (bare or Q()), a constant, or UnsupportedExpressionError


def _widened(iv: Interval | None) -> Interval | None:
    """``iv`` widened at each end by ``_ROUNDING_MARGIN`` of that end's size."""
    if iv is None:
        return None
    return _finite(iv.lo - abs(iv.lo) * _ROUNDING_MARGIN, iv.hi + abs(iv.hi) * _ROUNDING_MARGIN)


def _violation(node: ast.AST, variables: Mapping[str, Interval]) -> str | None:
    """Domain violation of ``node``, or of the sub-expressions of an operation interval arithmetic cannot bound
    (say, the argument of a spline)."""
    try:
        _eval(node, variables, partial=True)
    except DomainError as exc:
        return str(exc)
    except IntervalError:
        for child in ast.iter_child_nodes(node):
            why = _violation(child, variables) if isinstance(child, (ast.expr, ast.keyword)) else None
            if why:
                return why
    return None


def _parse(code: str) -> ast.AST:
    try:
        return ast.parse(code.strip(), mode="eval").body
    except SyntaxError as exc:  # pragma: no cover - patsy has parsed it already
        raise UnsupportedExpressionError(f"cannot parse {code!r}") from exc


def _constant(node: ast.AST) -> float:
    """The value of an expression of numeric literals only (an exponent), or UnsupportedExpressionError."""
    try:
        iv = _eval(node, {}, partial=False)
    except IntervalError:
        iv = None
    if iv is None or iv.lo != iv.hi:
        raise UnsupportedExpressionError("only constant exponents are supported")
    return iv.lo


def _eval(node: ast.AST, variables: Mapping[str, Interval], partial: bool) -> Interval | None:
    """The range of ``node``; with ``partial``, None for an expression that involves a variable without a range
    (its known sub-expressions are still checked)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return _finite(float(node.value), float(node.value))
    if isinstance(node, ast.Name):
        return _variable(node.id, variables, partial)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _eval(node.operand, variables, partial)
        return inner if inner is None or isinstance(node.op, ast.UAdd) else -inner
    if isinstance(node, ast.BinOp):
        return _binop(node, variables, partial)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], _COMPARISONS):
        # 0 or 1 whatever its operands: their ranges, where known, can only narrow it to a point
        left = _eval(node.left, variables, True)
        right = _eval(node.comparators[0], variables, True)
        return Interval(0.0, 1.0) if left is None or right is None else _compare(node.ops[0], left, right)
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _call(node, variables, partial)
    raise UnsupportedExpressionError(f"cannot bound the expression {ast.unparse(node)!r}")


def _variable(name: str, variables: Mapping[str, Interval], partial: bool) -> Interval | None:
    if name in variables:
        return variables[name]
    if partial:
        return None
    raise IntervalError(f"no bound declared for variable '{name}'")


def _binop(node: ast.BinOp, variables: Mapping[str, Interval], partial: bool) -> Interval | None:
    left = _eval(node.left, variables, partial)
    if isinstance(node.op, ast.Pow):
        k = _constant(node.right)
        return None if left is None else left.power(k)
    right = _eval(node.right, variables, partial)
    if isinstance(node.op, ast.Div) and right is not None:
        right = right.reciprocal()  # a division by a range containing 0 is a domain error even if left is unknown
    if left is None or right is None:
        return None
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, (ast.Mult, ast.Div)):
        return left * right
    raise UnsupportedExpressionError(f"operator {type(node.op).__name__} is not supported")


def _compare(op: ast.cmpop, left: Interval, right: Interval) -> Interval:
    """The range of a comparison as 0/1: a point when the ranges decide it, else [0, 1]."""
    if isinstance(op, (ast.Lt, ast.Gt)):
        lo_side, hi_side = (left, right) if isinstance(op, ast.Lt) else (right, left)
        always, never = lo_side.hi < hi_side.lo, lo_side.lo >= hi_side.hi
    elif isinstance(op, (ast.LtE, ast.GtE)):
        lo_side, hi_side = (left, right) if isinstance(op, ast.LtE) else (right, left)
        always, never = lo_side.hi <= hi_side.lo, lo_side.lo > hi_side.hi
    else:
        disjoint = left.hi < right.lo or right.hi < left.lo
        same_point = left.lo == left.hi == right.lo == right.hi
        equal_always, equal_never = same_point, disjoint
        always, never = (equal_always, equal_never) if isinstance(op, ast.Eq) else (equal_never, equal_always)
    return Interval(1.0, 1.0) if always else Interval(0.0, 0.0) if never else Interval(0.0, 1.0)


def _call(node: ast.Call, variables: Mapping[str, Interval], partial: bool) -> Interval | None:
    name = call_name(node, NUMPY_NAMES)
    arg = node.args[0]
    if name == "Q" and isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return _variable(arg.value, variables, partial)
    if name != "I" and name not in ELEMENTWISE_FUNCTIONS:
        raise UnsupportedExpressionError(f"cannot bound the function {name or ast.unparse(node.func)}()")
    inner = _eval(arg, variables, partial)
    if inner is None or name == "I":
        return inner
    if name in _ABS:
        lo = 0.0 if inner.lo <= 0 <= inner.hi else min(abs(inner.lo), abs(inner.hi))
        return Interval(lo, inner.abs_max)
    if name == "square":
        return inner.power(2)
    f, dom, strict = _INCREASING[name]
    return inner.monotone(f, name, dom, strict)


_DOMAINS = {"log": "> 0", "log2": "> 0", "log10": "> 0", "log1p": "> -1", "sqrt": ">= 0",
            "exp": "< 709 (exp overflows above)", "expm1": "< 709 (expm1 overflows above)"}


def domain_requirements(code: str) -> list[str]:
    """The public domain of the transforms in ``code``, in words (``"x > 0 in np.log(x)"``), in order.

    Read from the formula text alone: used in messages that must not depend
    on which value or row broke a transform.

    Parameters
    ----------
    code : str
        The factor's code.

    Returns
    -------
    list of str
        Each transform's domain in words, without repeats.
    """
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) == 1 \
                and (name := call_name(node, NUMPY_NAMES)) in _DOMAINS:
            out.append(f"{ast.unparse(node.args[0])} {_DOMAINS[str(name)]} in {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            out.append(f"{ast.unparse(node.right)} != 0 in {ast.unparse(node)}")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            need = _power_domain(node.right)
            if need:
                out.append(f"{ast.unparse(node.left)} {need} in {ast.unparse(node)}")
    return list(dict.fromkeys(out))


def _power_domain(exponent: ast.AST) -> str:
    """What a power with this exponent needs of its base ("" for a positive integer exponent)."""
    try:
        k = _constant(exponent)
    except IntervalError:
        return ">= 0"
    if float(k).is_integer():
        return "!= 0" if k < 0 else ""
    return "> 0" if k < 0 else ">= 0"
