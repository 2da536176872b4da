"""Each design column's range, derived from the declared bounds, and what to declare when one is missing.

Bounds given on raw variables are pushed through the factor code by interval
arithmetic (:func:`dpstats.bounds.interval.interval_of_code`) to a clip range
per design column: a categorical factor's columns lie in the range of its
contrast matrix, a B-spline basis in [0, 1], and an interaction multiplies the
intervals of its factors, in patsy's column order (left-most factor fastest).
A bound may also be keyed by a design column (``"np.log(x)"``) or by the
response as patsy writes it (``"I(a / (a + b))"``); a declared bound wins over
the derived one.

When a range is missing, :class:`BoundsAdvice` asks for the raw variables
whose bounds would derive it first, and names a design column (or the
response code) only when no variable bounds can derive its range, saying why
(the message of :class:`~dpstats.errors.MissingBoundsError`).  Everything here
is decided from public facts: the design's terms, the declared bounds and the
schema's dtypes.
"""

from __future__ import annotations

import ast
import difflib
import itertools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import patsy

from dpstats.bounds.interval import Interval, IntervalError, UnsupportedExpressionError, call_name, interval_of_code
from dpstats.errors import FormulaError, InvalidBoundsError, TransformDomainError
from dpstats.validation import check_bounds_pair, check_range_magnitude, check_range_width

__all__ = ["BoundsAdvice", "DesignRanges", "column_values", "declared_interval", "derive_ranges"]

Bounds = Mapping[str, tuple[float, float]]
#: how many of the data's column names a refused ``bounds=`` key lists (the closest matches come first anyway)
_LISTED_COLUMNS = 30
#: (design-column name piece, its range or None, the factor code to bound when the range is missing, else None)
_Piece = tuple[str, "Interval | None", "str | None"]


def declared_interval(key: str, value: Any) -> Interval:
    """A declared bound as an Interval (finite, lo < hi; see :func:`dpstats.validation.check_bounds_pair`).

    Parameters
    ----------
    key : str
        The ``bounds=`` key (named in the error).
    value : Any
        The declared ``(lo, hi)``.

    Returns
    -------
    Interval
        ``[lo, hi]``.
    """
    return Interval(*check_bounds_pair(key, value))


@dataclass(frozen=True)
class DesignRanges:
    """The ranges of a design's columns and response, and what to declare for those that have none.

    Attributes
    ----------
    column_intervals : list of Interval or None
        Each design column's range (None where none is declared or derived).
    response_interval : Interval or None
        The response's range.
    missing : list of str
        The design columns, then ``"<response> (response)"``, without a finite range.
    bound_variables : list of str
        The raw variables whose declared bounds would derive the missing ranges, in order of first use.
    underivable : list of tuple of (str, str)
        (design column or response code, why) for the ranges no variable bounds can derive.
    factor_intervals : dict of str to Interval
        The finite range of each one-column numerical factor of the design, by its code (declared, or derived from
        the variables' bounds): the range of a variable that enters the design only through products with a
        factor's dummies (``C(g):x``), which no column of its own gives.
    """

    column_intervals: list[Interval | None]
    response_interval: Interval | None
    missing: list[str]
    bound_variables: list[str]
    underivable: list[tuple[str, str]]
    factor_intervals: dict[str, Interval] = field(default_factory=dict)


def derive_ranges(design_info: Any, response_code: str, bounds: Bounds | None, *, columns: Collection[str],
                  variables: Callable[[str], Sequence[str]], numeric: Collection[str]) -> DesignRanges:
    """The range of every column of ``design_info`` and of the response, from the declared ``bounds``.

    Parameters
    ----------
    design_info : patsy.DesignInfo
        The right-hand side's design (its terms, factors and contrasts are public).
    response_code : str
        The response as patsy writes it.
    bounds : mapping of str to (float, float) or None
        The declared bounds, keyed by variables of the data, design columns or the response code.
    columns : collection of str
        The data's column names (the schema).
    variables : callable
        ``variables(code)``: the names a factor's code (or the response code) reads, in the order they are named
        to the user (asked only for the codes whose range is missing).
    numeric : collection of str
        The columns whose (prepared) dtype is numeric and not boolean: the variables a bound can be declared on.

    Returns
    -------
    DesignRanges
        The ranges and, for the missing ones, what to declare.

    Raises
    ------
    InvalidBoundsError
        A key of ``bounds`` that is not a column of the data, a design column or the response code (bounds for a
        column the formula does not use are accepted and ignored).
    """
    bounds = bounds or {}
    columns = set(columns)
    intervals, missing, unbounded = _column_intervals(design_info, bounds, columns, response_code)
    response_interval = _bound_of(response_code, bounds, columns)
    _check_magnitudes(list(design_info.column_names), intervals, response_code, response_interval)
    response_missing = response_interval is None or not response_interval.finite
    if response_missing:
        missing.append(f"{response_code} (response)")
    need = _Needs(bounds, columns, variables, set(numeric))
    bound_variables, underivable = need.of(unbounded, (response_code, response_missing))
    return DesignRanges(intervals, response_interval, missing, bound_variables, underivable,
                        _factor_intervals(design_info, bounds, columns))


def _factor_intervals(design_info: Any, bounds: Bounds, columns: set[str]) -> dict[str, Interval]:
    """The finite range of each one-column numerical factor, by code (:attr:`DesignRanges.factor_intervals`)."""
    found = {}
    for factor, info in design_info.factor_infos.items():
        if info.type == "numerical" and info.num_columns == 1:
            iv = _bound_of(factor.code, bounds, columns)
            if iv is not None and iv.finite:
                found[factor.code] = iv
    return found


def _check_magnitudes(names: Sequence[str], intervals: Sequence[Interval | None], response_code: str,
                      response_interval: Interval | None) -> None:
    """Refuse a finite range, declared or derived (``I(x ** 3)``, ``x:z``), beyond the magnitude the methods' sums
    can hold (:func:`dpstats.validation.check_range_magnitude`), or narrower than the public rescaling can divide by
    (:func:`dpstats.validation.check_range_width`): public facts, before anything is spent."""
    named = [(f"the range of design column '{n}'", iv) for n, iv in zip(names, intervals, strict=True)]
    for what, iv in named + [(f"the range of the response '{response_code}'", response_interval)]:
        if iv is not None and iv.finite:
            check_range_magnitude(what, iv.lo, iv.hi)
            check_range_width(what, iv.lo, iv.hi)


def _raw_intervals(bounds: Bounds, columns: set[str]) -> dict[str, Interval]:
    return {k: declared_interval(k, v) for k, v in bounds.items() if k in columns}


def _bound_of(code: str, bounds: Bounds, columns: set[str]) -> Interval | None:
    """The declared range of ``code``, else the one interval arithmetic derives from the variables' bounds."""
    if code in bounds:
        return declared_interval(code, bounds[code])
    try:
        return interval_of_code(code, _raw_intervals(bounds, columns))
    except IntervalError:
        return None


def _check_keys(bounds: Bounds, names: Sequence[str], columns: Collection[str], response_code: str) -> None:
    """Refuse a ``bounds=`` key that is not a column of the data, a design column or the response code.

    A column of the data the formula does not use is a valid key (its bound
    is ignored), so the message says that and lists the data's columns, with
    the closest names first (all public: the schema and the formula).
    """
    valid_keys = set(names) | set(columns) | {response_code}
    for key in bounds:
        if key not in valid_keys:
            raise InvalidBoundsError(_unknown_key_message(key, names, sorted(columns), response_code))


def _unknown_key_message(key: str, names: Sequence[str], columns: Sequence[str], response_code: str) -> str:
    """Why ``key`` is refused, with the close matches among the columns, design columns and response."""
    close = difflib.get_close_matches(str(key), list(dict.fromkeys([*columns, *names, response_code])), n=3)
    hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    shown = ", ".join(columns[:_LISTED_COLUMNS])
    more = f", ... ({len(columns) - _LISTED_COLUMNS} more)" if len(columns) > _LISTED_COLUMNS else ""
    return (f"bounds names '{key}', which is not a column of the data, a design column or the response.{hint} "
            f"Columns of the data: {shown}{more}. Design columns: {', '.join(names)}; the response is "
            f"'{response_code}' (spell a transformed one exactly so). Bounds for a column of the data that the "
            "formula does not use are accepted and ignored.")


def _column_combinations(columns_per_factor: list[int]) -> Iterator[tuple[int, ...]]:
    """Column index combinations of a subterm, left-most factor fastest (patsy's order)."""
    for reversed_combo in itertools.product(*[range(n) for n in reversed(columns_per_factor)]):
        yield reversed_combo[::-1]


def _factor_pieces(factor: Any, subterm: Any, info: Any, bounds: Bounds, columns: set[str]) -> list[_Piece]:
    """The design-column pieces one factor contributes to a subterm, with their ranges."""
    if factor in subterm.contrast_matrices:
        cm = subterm.contrast_matrices[factor]
        mat = np.asarray(cm.matrix, dtype=float)
        return [(factor.name() + sfx, Interval(float(mat[:, k].min()), float(mat[:, k].max())), None)
                for k, sfx in enumerate(cm.column_suffixes)]
    if info.num_columns == 1:
        return [(factor.name(), _bound_of(factor.code, bounds, columns), factor.code)]
    base = _spline_interval(factor.code)
    return [(f"{factor.name()}[{k}]", base, None) for k in range(info.num_columns)]


def _derived_ranges(design_info: Any, bounds: Bounds, columns: set[str]
                    ) -> dict[str, tuple[Interval | None, list[str | None]]]:
    """Each design column's derived range (None when a factor has none) and the codes of its unbounded factors."""
    derived: dict[str, tuple[Interval | None, list[str | None]]] = {}
    for term in design_info.terms:
        for subterm in design_info.term_codings[term]:
            per_factor = [_factor_pieces(f, subterm, design_info.factor_infos[f], bounds, columns)
                          for f in subterm.factors]
            for combo in _column_combinations([len(p) for p in per_factor]):
                pieces = [per_factor[i][k] for i, k in enumerate(combo)]
                name = ":".join(p[0] for p in pieces) or "Intercept"
                iv: Interval | None = Interval(1.0, 1.0)
                for _, piv, _ in pieces:
                    iv = None if (iv is None or piv is None) else _product(name, iv, piv)
                derived[name] = (iv, [code for _, piv, code in pieces if piv is None])
    return derived


def _product(name: str, a: Interval, b: Interval) -> Interval:
    """The range of a design column that multiplies factors with ranges ``a`` and ``b``; refused where it
    overflows a float (decided from the declared bounds alone)."""
    try:
        return a * b
    except IntervalError:
        raise TransformDomainError(
            f"the design column '{name}' multiplies factors whose product overflows a float for part of the declared "
            "bounds: declare narrower bounds, or rescale the factors (e.g. I(x / 1000)). Decided from the bounds "
            "alone; nothing was spent.") from None


def column_values(design_info: Any, supports: Mapping[str, tuple[float, ...]] | None = None
                  ) -> tuple[tuple[float, ...] | None, ...]:
    """The values each design column can take when the design alone fixes them: for a column whose factors are
    all categorical, the products of one entry from each factor's contrast-matrix column (a contrast matrix holds
    one row per declared level), sorted and distinct; the intercept's is (1.0,); None for a column with a
    numerical factor.  Read from the public contrast matrices only, never from the data.

    Parameters
    ----------
    design_info : patsy.DesignInfo or None
        The right-hand side's design (None: no column has known values).

    Returns
    -------
    tuple of (tuple of float) or None
        One entry per column of ``design_info``, in its column order.
    """
    if design_info is None:
        return ()
    found: dict[str, tuple[float, ...] | None] = {}
    for term in design_info.terms:
        for subterm in design_info.term_codings[term]:
            per_factor = [_factor_values(f, subterm, design_info.factor_infos[f], supports or {})
                          for f in subterm.factors]
            for combo in _column_combinations([len(p) for p in per_factor]):
                pieces = [per_factor[i][k] for i, k in enumerate(combo)]
                name = ":".join(p[0] for p in pieces) or "Intercept"
                found[name] = _product_values([p[1] for p in pieces])
    return tuple(found.get(name) for name in design_info.column_names)


def _factor_values(factor: Any, subterm: Any, info: Any, supports: Mapping[str, tuple[float, ...]]
                   ) -> list[tuple[str, tuple[float, ...] | None]]:
    """The design-column pieces one factor contributes to a subterm (named as in :func:`_factor_pieces`), with
    the values each can take: the distinct entries of its contrast-matrix column; a bare variable's public
    support; None for any other numerical factor."""
    if factor in subterm.contrast_matrices:
        cm = subterm.contrast_matrices[factor]
        mat = np.asarray(cm.matrix, dtype=float)
        return [(factor.name() + sfx, tuple(float(v) for v in np.unique(mat[:, k])))
                for k, sfx in enumerate(cm.column_suffixes)]
    if info.num_columns == 1:
        return [(factor.name(), supports.get(factor.name()))]
    return [(f"{factor.name()}[{k}]", None) for k in range(info.num_columns)]


def _product_values(parts: Sequence[tuple[float, ...] | None]) -> tuple[float, ...] | None:
    """The distinct products of one value from each part (None if any part is None; (1.0,) for no part)."""
    values: set[float] = {1.0}
    for part in parts:
        if part is None:
            return None
        values = {v * w for v in values for w in part}
    return tuple(sorted(values))


def _column_intervals(design_info: Any, bounds: Bounds, columns: set[str], response_code: str
                      ) -> tuple[list[Interval | None], list[str], dict[str, list[str | None]]]:
    """Each design column's clip range, the columns without one, and why each of them has none.

    A bound declared on a design column wins over the derived one, except on
    the intercept, which is 1 on every row whatever is declared (a data column
    named "Intercept" takes its bounds as a variable, not the constant's).  For
    a column without a range, the third value lists the codes of its unbounded
    factors (None for a multi-column basis that cannot be bounded).
    """
    names = list(design_info.column_names)
    _check_keys(bounds, names, columns, response_code)
    derived = _derived_ranges(design_info, bounds, columns)
    constant = {design_info.column_names[i] for term, sl in design_info.term_slices.items() if not term.factors
                for i in range(sl.start, sl.stop)}
    intervals: list[Interval | None] = []
    missing: list[str] = []
    unbounded: dict[str, list[str | None]] = {}
    for name in names:
        iv: Interval | None
        factors: list[str | None]
        if name not in derived:  # pragma: no cover - would be a patsy naming change
            raise FormulaError(f"internal error: cannot match design column '{name}'")
        if name in bounds and name not in constant:
            iv, factors = declared_interval(name, bounds[name]), []
        else:
            iv, factors = derived[name]
        if iv is None or not iv.finite:
            missing.append(name)
            unbounded[name] = factors
        intervals.append(iv)
    return intervals, missing, unbounded


#: Points of the public grid on [lower_bound, upper_bound] on which a regression spline's basis is evaluated, and
#: the margin added on each side of its range there (a share of the range's width: the basis is a smooth cubic
#: between knots, so the grid's extremes are within a far smaller share of the true ones).
SPLINE_GRID, SPLINE_MARGIN = 4001, 0.01


def _spline_interval(code: str) -> Interval | None:
    """B-spline basis functions lie in [0, 1]; the natural and cyclic cubic regression splines (``cr``, ``cc``)
    take the range of their basis on a public grid of their literal [lower_bound, upper_bound], widened by
    ``SPLINE_MARGIN`` (their argument is clipped to that interval, so this is the basis's whole range); other
    multi-column factors need explicit bounds."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return None
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    call = calls[0] if calls else None
    name = call_name(call) if call is not None else None
    if name == "bs":
        return Interval(0.0, 1.0)
    if name in ("cr", "cc") and call is not None:
        return _regression_spline_interval(name, call)
    return None


def _regression_spline_interval(name: str, call: ast.Call) -> Interval | None:
    """The range of a ``cr``/``cc`` basis over its literal [lower_bound, upper_bound] (None when its options are not
    literals, which the formula language refuses anyway)."""
    try:
        args = [ast.literal_eval(a) for a in call.args[1:]]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords if k.arg is not None}
        grid = np.linspace(float(kwargs["lower_bound"]), float(kwargs["upper_bound"]), SPLINE_GRID)
        with np.errstate(all="ignore"):
            # patsy's own transform (the grid is inside the bounds, so the formula layer's clipping is moot)
            basis = np.asarray(getattr(patsy.builtins, name)(grid, *args, **kwargs), dtype=float)
    except (ValueError, TypeError, KeyError, SyntaxError, patsy.PatsyError):
        return None
    if basis.size == 0 or not np.all(np.isfinite(basis)):
        return None
    lo, hi = float(basis.min()), float(basis.max())
    margin = SPLINE_MARGIN * max(hi - lo, 1e-12)
    return Interval(lo - margin, hi + margin)


@dataclass(frozen=True)
class _Needs:
    """What to declare for a range that is missing, from the declared bounds and the schema."""

    bounds: Bounds
    columns: set[str]
    variables: Callable[[str], Sequence[str]]
    numeric: set[str]

    def of(self, unbounded: Mapping[str, list[str | None]], response: tuple[str, bool]
           ) -> tuple[list[str], list[tuple[str, str]]]:
        """The raw variables to bound (in order of first use) and the (bounds key, reason) pairs for the ranges
        that cannot be derived from variable bounds, for the columns in ``unbounded`` and the response (if
        ``response[1]``)."""
        variables: list[str] = []
        underivable: dict[str, str] = {}
        items = list(unbounded.items()) + ([(response[0], [response[0]])] if response[1] else [])
        for name, codes in items:
            if not codes:  # a range was derived, but it is not finite
                underivable[name] = "the derived range is not finite"
            for code in codes:
                need: list[str]
                if code is None:
                    need, why = [], "a multi-column basis other than bs(), cr() and cc() has no derived range"
                else:
                    need, why = self.derivation(code)
                variables += [v for v in need if v not in variables]
                if not need:
                    underivable.setdefault(name, why or "its range cannot be derived")
        return variables, list(underivable.items())

    def derivation(self, code: str) -> tuple[list[str], str]:
        """The raw variables whose declared bounds would bound ``code``, or ([], why no bound can be derived).

        Interval arithmetic is tried with a stand-in range for each variable
        without a declared one: an unsupported operation is structural (no
        variable bounds can help), a domain failure (a log reaching 0) is
        cured by suitable variable bounds.  Variables that cannot be bounded
        (factors, booleans) make it structural.
        """
        names = list(dict.fromkeys(v for v in self.variables(code) if v in self.columns))
        declared = _raw_intervals(self.bounds, self.columns)
        undeclared = [v for v in names if v not in declared]
        not_numeric = [v for v in undeclared if v not in self.numeric]
        if not_numeric:
            one = len(not_numeric) == 1
            return [], (f"{', '.join(not_numeric)} {'is' if one else 'are'} boolean, a factor (declared levels or "
                        "categorical) or text, which carries no declared range")
        try:
            iv = interval_of_code(code, {**declared, **{v: Interval(1.0, 2.0) for v in undeclared}})
        except UnsupportedExpressionError as exc:
            return [], str(exc)
        except IntervalError as exc:
            return (undeclared, "") if undeclared else ([], f"{exc}, with the declared bounds")
        if undeclared:
            return undeclared, ""
        return [], "" if iv.finite else "the derived range is not finite"


@dataclass(frozen=True)
class BoundsAdvice:
    """What a user must declare so that every design column and the response have a range.

    Attributes
    ----------
    missing : sequence of str
        The design columns (and ``"<response> (response)"``) without a range.
    bound_variables : sequence of str
        The raw variables whose bounds would derive them.
    underivable : sequence of tuple of (str, str)
        (design column or response code, why) for the ranges no variable bounds can derive.
    response_name : str
        The response as patsy writes it.
    numeric_variables : sequence of str
        The numeric variables of the design (for the example of a design given as arrays).
    """

    missing: Sequence[str]
    bound_variables: Sequence[str]
    underivable: Sequence[tuple[str, str]]
    response_name: str
    numeric_variables: Sequence[str]

    def keys(self) -> list[str]:
        """The ``bounds=`` keys to declare.

        Returns
        -------
        list of str
            Raw variables first, then the design columns (or the response code) whose range cannot be derived
            from variable bounds; the columns without a range when there is neither (a design given as arrays).
        """
        keys = [*self.bound_variables, *(k for k, _ in self.underivable)]
        return keys or list(self.missing)

    def message(self) -> str:
        """The message of :class:`~dpstats.errors.MissingBoundsError`.

        Returns
        -------
        str
            What to declare, raw variables first (a derived column's range follows from its variables'
            bounds), built from public facts only (names and reasons).
        """
        head = ("this method needs public bounds on every design column and on the response, declared from domain "
                "knowledge (never from the data).")
        if not (self.bound_variables or self.underivable):  # a design given as arrays
            example = ", ".join(f"'{v}': (lo, hi)" for v in self.numeric_variables[:3]) or "'x': (lo, hi)"
            return (f"{head} None can be derived for: {', '.join(self.missing)}. Declare them on raw variables or "
                    f"on design columns, e.g. bounds={{{example}}}; or choose a method that needs no bounds.")
        hard = [k for k, _ in self.underivable]
        response = f"{self.response_name} (response)"
        transformed = response in self.missing and self.response_name not in self.numeric_variables
        response_advice = transformed and self.response_name not in hard
        parts = [head, *self._variables_part(hard, response, response_advice)]
        if hard:
            why = "; ".join(f"{k} ({reason})" for k, reason in self.underivable)
            parts.append(f"No range can be derived from variable bounds for {why}: declare "
                         f"{'it' if len(hard) == 1 else 'them'} by name as written here.")
        if response_advice:
            parts.append(f"A transformed response can also be bounded by its code: "
                         f"bounds={{'{self.response_name}': (lo, hi)}}.")
        example = ", ".join(f"'{k}': (lo, hi)" for k in self.keys()[:4])
        parts.append(f"E.g. bounds={{{example}}}; or choose a method that needs no bounds.")
        return " ".join(parts)

    def _variables_part(self, hard: Sequence[str], response: str, response_advice: bool) -> list[str]:
        """The sentence asking for variable bounds, naming the ranges they derive (none without such variables)."""
        if not self.bound_variables:
            return []
        derived = [m for m in self.missing if m not in hard and m not in self.bound_variables and m != response]
        if response_advice:
            derived.append(f"the response {self.response_name}")
        then = f" (the ranges of {', '.join(derived)} are then derived from them)" if derived else ""
        return [f"Declare bounds on the variables {', '.join(self.bound_variables)}{then}."]
