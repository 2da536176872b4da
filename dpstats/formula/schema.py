"""A formula checked against a schema, before any row is read: :class:`ParsedFormula` and its :class:`FramePlan`.

Every check that needs only the formula, the declared levels and bounds and
the schema (column names and dtypes) runs here, for data in memory and for
data read in chunks alike: the formula's text is expanded and parsed
(:mod:`dpstats.formula.parse`), each factor's code is checked against the
allow-list (:mod:`dpstats.formula.language`), a non-numeric response or a
non-numeric column used as a number is refused from its dtype, declared
levels and bounds are validated, and a transform undefined somewhere inside
the declared bounds of its variables is refused
(:func:`dpstats.bounds.domain_violation`).  The result says how every frame
is prepared (:class:`~dpstats.formula.frame.FramePlan`), including the public
null row that stands in for an incomplete row with ``missing="drop"``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpstats.bounds import decided_comparison, declared_interval, domain_requirements, domain_violation
from dpstats.errors import (
    DataTypeError,
    FormulaError,
    InvalidBoundsError,
    TransformDomainError,
    UndeclaredCategoriesWarning,
    UnknownColumnError,
    UnmatchableLevelsWarning,
)
from dpstats.formula.frame import (
    FramePlan,
    check_unique_columns,
    date_advice,
    duration_advice,
    is_numeric,
    missing_cell,
    raw_level_codes,
)
from dpstats.formula.language import (
    FactorFacts,
    check_contrast_names,
    check_factor,
    check_numeric_dtypes,
    did_you_mean,
)
from dpstats.formula.parse import (
    PARSED_FORMULAS,
    ComputedFactor,
    check_formula_levels,
    expand_formula,
    factor_of,
    formula_computed_levels,
    formula_first_levels,
    formula_literal_levels,
    is_comparison_code,
    model_desc,
    poly_scores,
    treatment_references,
)

__all__ = ["ParsedFormula", "declared_level_values", "dtype_key", "integer_supports", "parse_formula", "public_key"]


@dataclass
class ParsedFormula:
    """The public facts of a formula checked against a schema (column names and dtypes).

    Attributes
    ----------
    desc : patsy.desc.ModelDesc
        The formula's terms (``poly`` written out).
    expanded : str
        The formula with '.' expanded and long sums nested: what patsy parses (workers parse it too).
    response_code : str
        The response as patsy writes it.
    factor_codes : list of str
        The right-hand side's factor codes, in order of first use.
    columns : set of str
        The data's column names.
    plan : FramePlan
        How every frame is prepared.
    schema : pandas.DataFrame
        Zero rows of the prepared frame (its dtypes are public).
    facts : dict of str to FactorFacts
        What the allow-list learned about each code (the response's included).
    integer_supports : dict of str to tuple of float
        The numeric variables that take two values by public facts (:func:`integer_supports`).
    integer_variables : frozenset of str
        The formula's variables of an integer dtype in the data's schema (the prepared ``schema`` holds a clipped
        variable as float); the rank probe draws those with integer bounds on their integer grid.
    key : tuple or None
        The public facts the parse was made from (:func:`public_key`), the key of every memo of a check decided by
        them and the parse; None where they cannot be made a key (such a check is made every time).
    """

    desc: Any
    expanded: str
    response_code: str
    factor_codes: list[str]
    columns: set[str]
    plan: FramePlan
    schema: pd.DataFrame
    facts: dict[str, FactorFacts]
    integer_supports: dict[str, tuple[float, ...]] = field(default_factory=dict)
    integer_variables: frozenset[str] = frozenset()
    key: tuple[object, ...] | None = field(default=None, compare=False, repr=False)

    @property
    def non_finite_note(self) -> str:
        """The report's note where a transform of a variable without declared bounds can be non-finite on a row
        (public: the formula and the declared bounds), "" otherwise: such a value is set to 0 on its row
        (:func:`dpstats.formula.design.finite_arrays`)."""
        bounded = {var for var, _, _ in self.plan.clip}
        codes = [self.response_code, *self.factor_codes]
        free = [c for c in codes if not self.facts[c].boolean
                and any(v not in bounded and c.strip() != v for v in self.facts[c].numeric)]
        if not free:
            return ""
        shown = ", ".join(free[:3]) + (" and more" if len(free) > 3 else "")
        needs = list(dict.fromkeys(r for code in free for r in domain_requirements(code)))
        if needs:  # a transform with a restricted domain: log, sqrt, a division, ...
            what = f"can be undefined or overflow on a row ({'; '.join(needs)})"
            remedy = "declare bounds inside the transform's domain (e.g. x in [1, 100] for np.log(x))"
        else:  # arithmetic defined everywhere (I(year - 1972), I(x ** 2)): only a value beyond a double's range
            what = "can overflow on a row (a value beyond about 1.8e308, a double's largest)"
            remedy = "declare bounds"
        return (f"a transform of a variable without declared bounds ({shown}) {what}: such a value is set to 0 on "
                "its row, and how many there are is not released (refusing would tell whether any row is there); "
                f"{remedy} and every row is inside it")


def parse_formula(formula: str, df: pd.DataFrame, *, bounds: Mapping[str, tuple[float, float]] | None,
                  levels: Mapping[str, Sequence[Any]] | None, missing: str) -> ParsedFormula:
    """Every check that needs only the formula, the declared levels and bounds, and the schema of ``df``.

    Parameters
    ----------
    formula : str
        The formula as the user wrote it.
    df : pandas.DataFrame
        The data or its schema: only the column names and dtypes are read.
    bounds : mapping of str to (float, float) or None
        The declared bounds.
    levels : mapping of str to sequence or None
        The declared levels (``levels=``).
    missing : str
        ``"raise"``, ``"null"`` (public null rows), ``"screen"`` (public null rows counted by the missing-value
        screen of :mod:`dpstats.privacy.missing_screen`; ``"raise"`` where no variable can produce a null row,
        :func:`can_produce_null_row`) or ``"drop"``.

    Returns
    -------
    ParsedFormula
        The formula's public facts and the plan that prepares every frame.
    """
    key = public_key(formula, df, bounds, levels, missing)
    if key is not None:
        with _PARSES_LOCK:
            held = _PARSES.get(key)
            if held is not None:
                _PARSES.move_to_end(key)
        if held is not None:
            return _fresh(held)
    parsed = _parse_formula(formula, df, bounds=bounds, levels=levels, missing=missing, key=key)
    if key is not None and not _may_have_warned(parsed, df):
        with _PARSES_LOCK:
            _PARSES[key] = parsed
            while len(_PARSES) > PARSED_FORMULAS:
                _PARSES.popitem(last=False)
        return _fresh(parsed)
    return parsed


def _parse_formula(formula: str, df: pd.DataFrame, *, bounds: Mapping[str, tuple[float, float]] | None,
                   levels: Mapping[str, Sequence[Any]] | None, missing: str,
                   key: tuple[object, ...] | None = None) -> ParsedFormula:
    """:func:`parse_formula`, computed (``key``: its :func:`public_key`)."""
    check_unique_columns(df.columns)
    column_list = [str(c) for c in df.columns]
    expanded, desc = _model(formula, column_list, missing)
    response_code = desc.lhs_termlist[0].factors[0].code
    factor_codes = list(dict.fromkeys(f.code for t in desc.rhs_termlist for f in t.factors))
    facts = {code: check_factor(code, column_list) for code in dict.fromkeys([response_code, *factor_codes])}
    check_contrast_names(facts.values())
    _check_constant_codes(facts.values())
    _check_column_names(desc, set(column_list))
    check_formula_levels(factor_codes)
    bool_responses = _check_response(facts[response_code], df)
    multiplied = {v for t in desc.rhs_termlist if len(t.factors) > 1
                  for f in t.factors for v in facts[f.code].variables}
    plan = _frame_plan(df, bounds or {}, levels, facts, factor_codes, bool_responses, missing, multiplied)
    schema, _ = plan.prepare(df.iloc[:0])
    check_numeric_dtypes(facts.values(), schema)
    _check_durations(facts.values(), schema)
    _check_transform_domains(facts.values(), bounds or {}, schema)
    _check_decided_comparisons([facts[code] for code in factor_codes], bounds or {}, schema)
    return ParsedFormula(desc, expanded, response_code, factor_codes, set(column_list), plan, schema, facts,
                         integer_supports(df, bounds or {}, plan),
                         frozenset(v for v in plan.variables if pd.api.types.is_integer_dtype(df[v].dtype)), key)


#: the parses that passed, by their public facts (:func:`public_key`), the last ``PARSED_FORMULAS`` kept: a session
#: refits a few formulas on one schema and one set of declarations, and the checks read nothing else
_PARSES: OrderedDict[tuple[object, ...], ParsedFormula] = OrderedDict()
_PARSES_LOCK = threading.Lock()


class _NoKey(Exception):
    """A fact that cannot be made a memo key (:func:`public_key`): the parse is made every time."""


#: the types of a scalar that a key holds by its type and repr (a repr that says the whole value)
_KEY_SCALARS = (str, int, float, bool, type(None), np.integer, np.floating, np.bool_, np.str_)


def _atom(value: Any) -> tuple[str, str]:
    """A scalar as (type, repr): 1, 1.0 and True stay apart; anything else has no key."""
    if type(value) in (str, int, float, bool, type(None)) or isinstance(value, _KEY_SCALARS[5:]):
        return (type(value).__qualname__, repr(value))
    raise _NoKey


def _sequence_key(value: Any) -> tuple[object, ...]:
    """A list or tuple of scalars as a key (a declared range or a list of levels); anything else has no key."""
    if type(value) not in (list, tuple):
        raise _NoKey
    return (type(value).__qualname__, tuple(_atom(v) for v in value))


def _mapping_key(value: Mapping[str, Any] | None) -> tuple[object, ...] | None:
    """A plain dict of declarations (bounds= or levels=) as a key, in its order (which decides which declaration
    is refused first); None for None."""
    if value is None:
        return None
    if type(value) is not dict:
        raise _NoKey
    return tuple((_atom(k), _sequence_key(v)) for k, v in value.items())


def dtype_key(dtype: Any) -> tuple[object, ...]:
    """A dtype as a key that tells apart everything a formula's checks and patsy's design can read from it: the type
    and repr, and for a Categorical its categories in order with their types (an unordered CategoricalDtype
    compares equal to one with its categories reordered, whose design columns come in another order; 1 and 1.0
    compare equal but name different columns).

    Parameters
    ----------
    dtype : numpy or pandas dtype
        A column's dtype.

    Returns
    -------
    tuple
        The key.
    """
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        return ("category", bool(dtype.ordered), repr(cats.dtype), tuple((type(c).__qualname__, repr(c)) for c in cats))
    return (type(dtype).__module__, type(dtype).__qualname__, repr(dtype))


def public_key(formula: str, df: pd.DataFrame, bounds: Mapping[str, tuple[float, float]] | None,
               levels: Mapping[str, Sequence[Any]] | None, missing: str) -> tuple[object, ...] | None:
    """The public facts a formula's parse (:func:`parse_formula`) and the checks made from the parse alone read, as
    one memo key: the formula, ``missing``, the declared bounds and levels (plain dicts of lists or tuples of
    scalars, in order, each scalar by its type and repr), the columns' names and dtypes (:func:`dtype_key`) in
    order, and the index's type and dtype.  Nothing is read from the rows.

    Both memos of a refit use it: the parses (:func:`parse_formula`) and the passed checks of undeclared levels
    (:func:`dpstats.formula.design.build_design`, through :attr:`ParsedFormula.key`), so a bounds dict or a levels
    list mutated in place, a changed dtype or a reordered column misses both.

    Parameters
    ----------
    formula : str
        The formula as the user wrote it.
    df : pandas.DataFrame
        The data or its schema (only the column names, the dtypes and the index's type are read).
    bounds : mapping of str to (float, float) or None
        The declared bounds.
    levels : mapping of str to sequence or None
        The declared levels.
    missing : str
        The missing-value mode.

    Returns
    -------
    tuple or None
        The key; None where a part cannot be made one (another kind of declaration, a column label that is not a
        scalar, a dtype of a third-party package): what it would key is then computed every time.
    """
    if type(formula) is not str or type(missing) is not str or not isinstance(df, pd.DataFrame):
        return None
    try:
        dtypes = []
        for dtype in df.dtypes:
            if not (isinstance(dtype, np.dtype) or type(dtype).__module__.split(".")[0] == "pandas"):
                raise _NoKey
            dtypes.append(dtype_key(dtype))
        key = (formula, missing, _mapping_key(bounds), _mapping_key(levels),
               tuple(_atom(c) for c in df.columns), tuple(dtypes),
               type(df.columns).__qualname__, type(df.index).__qualname__, repr(df.index.dtype))
        hash(key)
    except Exception:  # noqa: BLE001 - no key (_NoKey, or a repr or hash that fails): computed as before
        return None
    return key


def _may_have_warned(parsed: ParsedFormula, df: pd.DataFrame) -> bool:
    """Whether the parse can have warned (:class:`~dpstats.errors.UndeclaredCategoriesWarning` or
    :class:`~dpstats.errors.UnmatchableLevelsWarning`: levels declared for a categorical column, in ``levels=`` or
    in the formula, or declared levels that no value of their column's dtype can equal); such a parse is not kept,
    so that each call warns."""
    leveled = [(v, lv) for v, lv in (*parsed.plan.levels, *parsed.plan.allowed) if v in df.columns]
    return any(isinstance(df[v].dtype, pd.CategoricalDtype) or _unmatchable_levels(lv, df[v].dtype)
               for v, lv in leveled)


def _fresh(parsed: ParsedFormula) -> ParsedFormula:
    """A kept parse with its own lists, sets and dicts (the plan, the schema and the facts are shared, read only)."""
    return dataclasses.replace(parsed, factor_codes=list(parsed.factor_codes), columns=set(parsed.columns),
                               facts=dict(parsed.facts), integer_supports=dict(parsed.integer_supports))


def integer_supports(df: pd.DataFrame, bounds: Mapping[str, tuple[float, float]], plan: FramePlan
                     ) -> dict[str, tuple[float, ...]]:
    """The numeric variables that take only two values by public facts: an integer dtype in the schema and
    declared bounds that are two consecutive integers, e.g. (0, 1) for a 0/1 indicator stored as int.

    Every design column and response built from such a variable is clipped to its bounds before a method reads
    it (a transform's input by the frame plan, a bare column by the method), and an integer clipped to [k, k + 1]
    is k or k + 1; the public null row's value (``missing="null"``) is the midpoint rounded down, k.  A wrong
    dtype (a chunk holding non-integers) could only cost accuracy, never privacy: the methods that use these
    values take them as public facts about the clipped rows, not as sensitivity bounds.

    Parameters
    ----------
    df : pandas.DataFrame
        The data or their schema (only dtypes are read).
    bounds : mapping of str to (float, float)
        The declared bounds.
    plan : FramePlan
        The frame plan (its variables; variables with declared levels are factors, never listed).

    Returns
    -------
    dict of str to tuple of float
        Variable name to its two values (k, k + 1).
    """
    leveled = {v for v, _ in plan.levels}
    out: dict[str, tuple[float, ...]] = {}
    for v, val in bounds.items():
        if v not in plan.variables or v in leveled or not pd.api.types.is_integer_dtype(df[v].dtype):
            continue
        iv = declared_interval(v, val)
        if float(iv.lo).is_integer() and iv.hi - iv.lo == 1.0:
            out[v] = (float(iv.lo), float(iv.hi))
    return out


def _model(formula: str, columns: Sequence[str], missing: str) -> tuple[str, Any]:
    """The expanded formula and patsy's model description, with one response and at least one term."""
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    expanded = expand_formula(formula, columns)
    desc = model_desc(expanded, shown=formula)
    if len(desc.lhs_termlist) != 1 or len(desc.lhs_termlist[0].factors) != 1:
        raise FormulaError("the formula needs exactly one response on the left of '~', e.g. 'y ~ x'")
    if not desc.rhs_termlist:
        raise FormulaError("the formula has no columns on the right of '~'; add terms or an intercept ('y ~ 1')")
    if missing not in {"raise", "drop", "null", "screen"}:
        raise FormulaError("missing must be 'raise' (default) or 'drop'")
    return expanded, desc


def _check_constant_codes(facts: Iterable[FactorFacts]) -> None:
    """Refuse a factor (or the response) whose code reads no column (``I(1)``, ``np.log(2)``, ``I(1 > 0)``,
    ``C(1, levels=[1])``): patsy evaluates it to one value, which fits no data set of more than one row (or chunk of
    more than one row), so it failed on the data with the message of a failure of patsy (or fitted a constant
    column with chunks of one row).  Decided from the formula."""
    for f in facts:
        if not f.variables:
            raise FormulaError(
                f"'{f.code}' reads no column of the data: it is one constant for every row, which is no term of a "
                "model (the intercept is '1', and '0 +' or '- 1' drops it) and no response. Remove it. Decided from "
                "the formula alone; nothing was spent.")


def _check_response(response: FactorFacts, df: pd.DataFrame) -> list[str]:
    """Refuse a comparison as the response (from the formula) and a non-numeric response (from its dtype); the
    boolean response variables (coded 0/1)."""
    if response.boolean:
        code = response.code.strip()
        inner = code[2:-1] if code.startswith("I(") and code.endswith(")") else code
        raise DataTypeError(f"the response '{code}' is a comparison, whose True/False values patsy codes as two "
                            f"indicator columns; write it as a number, I(1.0 * ({inner})), or make it a boolean "
                            "column of the data with a public rule")
    bool_responses = [v for v in response.variables if pd.api.types.is_bool_dtype(df[v].dtype)]
    for v in response.variables:
        if not (is_numeric(df[v]) or v in bool_responses):
            advice = duration_advice(v, df[v].dtype, factor=False)
            raise DataTypeError(f"the response '{v}' must be numeric;{advice}" if advice else
                                f"the response '{v}' must be numeric (its dtype is {df[v].dtype}); "
                                f"{_categorical_response_advice(v)}")
    return bool_responses


def _categorical_response_advice(name: str) -> str:
    """How to code a categorical response as 0/1 before the fit, in Python and on the command line (a formula cannot
    compare with a text literal; a missing value kept missing by pandas' nullable boolean); built from the column's
    name alone."""
    return (f"code a categorical outcome as 0/1 with a public rule before the fit: in Python a boolean column, e.g. "
            f"df['{name}_01'] = df['{name}'] == 'LEVEL' (its range [0, 1] needs no bounds; a missing value becomes "
            f"False that way: to keep it missing, for missing='drop', use pandas' nullable boolean, "
            f"df['{name}_01'] = df['{name}'].map({{'LEVEL': True, 'OTHER': False}}).astype('boolean'), or, for a "
            f"column that already holds True, False and missing values, df['{name}'].astype('boolean')); on the "
            f"command line a column of 0 and 1 in the CSV, declared with "
            f"--dtypes '{{\"{name}_01\": \"int64\"}}' and --bounds '{{\"{name}_01\": [0, 1]}}'")


def _check_durations(facts: Iterable[FactorFacts], schema: pd.DataFrame) -> None:
    """Refuse a column of durations (``timedelta64``) that a term uses other than as a ``C()`` factor (bare, or in
    an interaction), which patsy cannot evaluate, with how to convert it; decided from the prepared dtypes alone
    (declared levels make a column a factor)."""
    for f in facts:
        if factor_of(f.code) is not None:
            continue
        for v in f.variables:
            advice = duration_advice(v, schema[v].dtype)
            if advice:
                raise DataTypeError(f"the term '{f.code}' cannot be evaluated:{advice} Decided from the column's "
                                    "dtype; no value was read and no budget was spent.")


def _frame_plan(df: pd.DataFrame, bounds: Mapping[str, tuple[float, float]],
                levels: Mapping[str, Sequence[Any]] | None, facts: Mapping[str, FactorFacts],
                factor_codes: Sequence[str], bool_responses: Sequence[str], missing: str,
                multiplied: set[str]) -> FramePlan:
    """How every frame is prepared: declared levels, clip ranges, levels written in the formula, null row.
    ``multiplied``: the variables of the terms with two or more factors (interactions)."""
    variables = list(dict.fromkeys(v for f in facts.values() for v in f.variables))
    columns = {str(c) for c in df.columns}
    declared = _declared_levels(levels, variables, df)
    leveled = {v for v, _ in declared}
    clip = _clip_ranges(bounds, facts.values(), variables, df, bool_responses, leveled, multiplied)
    allowed = [(v, lv) for v, lv in formula_literal_levels(factor_codes).items() if v in columns and v not in leveled]
    for v, lv in allowed:
        _check_no_missing_level(v, lv)
        _check_level_types(v, lv, df[v])
    _check_references(factor_codes, {**dict(allowed), **dict(declared)}, df)
    held = {**dict(allowed), **dict(declared)}
    computed = tuple(c for c in formula_computed_levels(factor_codes) if computed_may_leave_levels(c, df))
    off_levels = (*(v for v in variables if v in held and may_leave_levels(df[v].dtype, held[v])),
                  *(c.code for c in computed))
    screened = (*(v for v in variables if v in columns and can_produce_null_row(df[v].dtype, held.get(v))),
                *(c.code for c in computed))
    if missing == "screen" and not screened:
        missing = "raise"  # no variable can produce a null row: nothing to screen
    fill = _null_fill(df, bounds, declared, factor_codes) if missing in {"null", "screen"} else ()
    on_screen = missing == "screen"
    return FramePlan(tuple(variables), tuple(bool_responses), tuple(declared), tuple(clip), missing,
                     tuple(allowed), tuple(fill), screened if on_screen else (), off_levels if on_screen else (),
                     computed)


def may_hold_missing(dtype: Any) -> bool:
    """Whether a column of this dtype can hold a missing value (public: the schema).  numpy integers and booleans
    cannot; floats (NaN), objects (None), categoricals, datetimes and pandas' nullable dtypes can."""
    return not (isinstance(dtype, np.dtype) and dtype.kind in "iub")


def may_leave_levels(dtype: Any, levels: Sequence[Any] | None) -> bool:
    """Whether a column of this dtype, read against these declared levels, can hold a value outside them (public:
    the schema and the declaration).  Only a pandas categorical whose categories are all declared levels, or a
    numpy boolean column with both False and True declared, cannot; a variable without declared levels cannot.

    Parameters
    ----------
    dtype : numpy or pandas dtype
        The column's dtype.
    levels : sequence or None
        Its declared levels (``levels=`` or ``C(g, levels=[...])``), None when none are declared.

    Returns
    -------
    bool
    """
    if levels is None:
        return False
    declared = set(levels)
    if isinstance(dtype, pd.CategoricalDtype):
        return any(category not in declared for category in dtype.categories)
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return not (False in declared and True in declared)
    return True


def computed_may_leave_levels(factor: ComputedFactor, df: pd.DataFrame) -> bool:
    """Whether ``C(expression, levels=[...])`` can compute a value outside its declared levels on some row (public:
    the formula, the declared levels and the schema).  A comparison is False or True on every row, so it cannot
    where both are declared (0 and 1 are False and True, by the rule of
    :func:`~dpstats.formula.values.level_codes`); a column inside ``I()`` can as the column itself can
    (:func:`may_leave_levels`); any other expression can (its values are real numbers, NaN and infinities included).

    Parameters
    ----------
    factor : ComputedFactor
        The factor (:func:`dpstats.formula.parse.formula_computed_levels`).
    df : pandas.DataFrame
        The data or their schema (only dtypes are read).

    Returns
    -------
    bool
    """
    if factor.comparison:
        return may_leave_levels(np.dtype(bool), factor.levels)
    if factor.column is not None and factor.column in df.columns:
        return may_leave_levels(df[factor.column].dtype, factor.levels)
    return True


def can_produce_null_row(dtype: Any, levels: Sequence[Any] | None) -> bool:
    """Whether a variable can make a row a public null row: its dtype can hold a missing value
    (:func:`may_hold_missing`) or it can hold a value outside its declared levels (:func:`may_leave_levels`).
    Decided from public facts only; the missing-value screen runs (and is charged) where some variable of the
    formula can.

    Parameters
    ----------
    dtype : numpy or pandas dtype
        The column's dtype.
    levels : sequence or None
        Its declared levels, None when none are declared.

    Returns
    -------
    bool
    """
    return may_hold_missing(dtype) or may_leave_levels(dtype, levels)


def _declared_levels(levels: Mapping[str, Sequence[Any]] | None, variables: Sequence[str],
                     df: pd.DataFrame) -> list[tuple[str, tuple[Any, ...]]]:
    declared: list[tuple[str, tuple[Any, ...]]] = []
    columns = {str(c) for c in df.columns}
    for var, lv in (levels or {}).items():
        if var not in variables:
            if var in columns:  # a column the formula does not use: ignored, as bounds= for one are
                continue
            raise UnknownColumnError(f"levels= names '{var}', which is not a column of the data; "
                                     f"columns are: {', '.join(map(str, df.columns))}"
                                     f"{did_you_mean(str(var), [str(c) for c in df.columns])}")
        lv = declared_level_values(var, lv)
        _check_level_types(var, lv, df[var])
        declared.append((var, tuple(lv)))
    return declared


def declared_level_values(var: str, value: Any) -> list[Any]:
    """The levels declared for ``var`` (``levels=``) as a list, refused unless they are a non-empty ordered
    collection of distinct values that are not missing and can be compared as levels are (hashable: text, numbers,
    booleans, ...).  Decided from the declaration alone, before any row is read.

    Parameters
    ----------
    var : str
        The variable.
    value : Any
        What ``levels=`` declares for it.

    Returns
    -------
    list
        The levels.

    Raises
    ------
    FormulaError
        Levels that are not such a collection (naming what was given; the declaration is public).
    """
    lv = _level_list(var, value)
    _check_no_missing_level(var, lv)  # first: a decimal sNaN level cannot be hashed
    unhashable = [level for level in lv if not _hashable(level)]
    if unhashable:
        raise FormulaError(
            f"levels for '{var}' must be values such as text, numbers or booleans; got a level of type "
            f"{type(unhashable[0]).__name__}, which cannot be compared with a value as a level is (a list, an array, "
            "a dict or a set). Nothing was read or spent.")
    if len(lv) == 0 or len(set(lv)) != len(lv):
        raise FormulaError(f"levels for '{var}' must be a non-empty list of distinct values")
    return lv


def _hashable(value: Any) -> bool:
    """Whether ``value`` can be hashed (a level is looked up by its hash and compared by equality)."""
    try:
        hash(value)
    except Exception:  # noqa: BLE001 - any failure of hash(): not a level
        return False
    return True


def _check_references(factor_codes: Sequence[str], levels: Mapping[str, Sequence[Any]], df: pd.DataFrame) -> None:
    """Refuse ``C(var, Treatment(ref))`` (or ``Sum(omit=ref)``) whose reference is neither one of var's public
    levels (declared, written in the formula, or the schema's categories) nor a position among them, as patsy reads
    it, and ``C(var, Poly(scores))`` with other than one score per public level; patsy's own error would be withheld
    (it is raised while the data are read).  Decided from the formula and the declarations."""
    for code, var, ref, role in treatment_references(factor_codes):
        public = _public_levels(var, levels, df)
        if public is None or ref in public:
            continue
        if isinstance(ref, int) and not isinstance(ref, bool) and -len(public) <= ref < len(public):
            continue
        shown = ", ".join(map(repr, list(public)[:8])) + (", ..." if len(public) > 8 else "")
        kind = "declared" if var in df.columns or var in levels else "public"
        raise FormulaError(
            f"'{code}' takes {ref!r} as its {role}, which is not a level of '{var}' (its {kind} levels: "
            f"{shown}); spell it as one of them (levels are case-sensitive). Nothing was read or spent.")
    for code, var, scores in poly_scores(factor_codes):
        public = _public_levels(var, levels, df)
        if public is not None and len(scores) != len(public):
            kind = "declared" if var in df.columns or var in levels else "public"
            raise FormulaError(
                f"'{code}' gives {len(scores)} Poly scores, but '{var}' has {len(public)} {kind} levels; give one "
                "score per level, in the order of the levels. Nothing was read or spent.")


def _public_levels(var: str, levels: Mapping[str, Sequence[Any]], df: pd.DataFrame) -> list[Any] | None:
    """The public levels of ``var``: declared (``levels=`` or in the formula), its schema's categories, a boolean
    column's False and True or a comparison's (``C(I(x > 5))``), else None."""
    if var not in df.columns and var not in levels and is_comparison_code(var):
        return [False, True]
    public = levels.get(var)
    if public is None and var in df.columns and isinstance(df[var].dtype, pd.CategoricalDtype):
        public = list(df[var].dtype.categories)
    if public is None and var in df.columns and pd.api.types.is_bool_dtype(df[var].dtype):
        public = [False, True]  # patsy's levels of a boolean column
    return None if public is None else list(public)


def _check_no_missing_level(var: str, levels: Sequence[Any]) -> None:
    """Refuse declared levels that include a missing value (None, NaN, pd.NA, NaT): a missing value is not a
    category, and patsy cannot build a factor with one.  Decided from the declared levels alone."""
    if any(missing_cell(lv) for lv in levels):  # (Decimal('sNaN') too, on which pandas' isna raises)
        raise FormulaError(
            f"levels for '{var}' include a missing value (None, NaN, pd.NA or NaT), which is not a level: declare "
            "only the categories, and pass missing='drop' to turn rows with a missing value into public null rows "
            "(or impute them with a public rule). Nothing was read or spent.")


def _check_level_types(var: str, levels: Sequence[Any], column: pd.Series) -> None:
    """Refuse declared levels of another kind than the column (text levels for a numeric column, levels that are
    not text for a text column), which no value could match: decided from the declared levels and the dtype (the
    schema).

    One such level is enough: with ``[1, "a"]`` for a text column (a CSV column is read as text when its levels
    include text) a row written ``1`` is the declared level 1 but never matches it, so a data set with one such row
    would be refused at no cost while its neighbour fits (docs/privacy.md, "CSV column types are public").
    """
    wrong: list[Any]
    if isinstance(column.dtype, pd.CategoricalDtype):
        _check_categories_declared(var, levels, column.dtype)
        return
    if is_numeric(column):
        wrong = [lv for lv in levels if isinstance(lv, str)]
        kind, fix = "text", "declare them as numbers (e.g. [1, 2] rather than ['1', '2'])"
    elif pd.api.types.is_string_dtype(column.dtype) and not pd.api.types.is_object_dtype(column.dtype):
        wrong = [lv for lv in levels if not isinstance(lv, str)]
        numbers = all(isinstance(lv, (int, float, np.number)) and not isinstance(lv, (bool, np.bool_)) for lv in wrong)
        kind = "numbers" if numbers else "values that are not text"
        fix = "declare them as text (e.g. ['1', '2'] rather than [1, 2])"
    else:
        wrong = []
    if not wrong:
        _check_levels_representable(var, levels, column.dtype)
        return
    verb = "are" if len(wrong) == len(levels) else "include"
    raise FormulaError(
        f"levels for '{var}' {verb} {kind} ({', '.join(map(repr, wrong[:6]))}{', ...' if len(wrong) > 6 else ''}) "
        f"but the column's dtype is {column.dtype}, so no value could match them: {fix}, or convert the column. "
        "Nothing was read or spent.")


def _check_levels_representable(var: str, levels: Sequence[Any], dtype: Any) -> None:
    """Refuse declared levels that no value of a column of this dtype can equal by the rule rows are matched with
    (:func:`~dpstats.formula.values.raw_level_codes`), where every row would then be outside the declared levels:
    all of them (timestamps without a time zone, or text, for a column of dates with one; text for a column of
    dates or periods; "True" for booleans), or, for a column of floats narrower than 64 bits (dense or sparse), any
    number it rounds (0.1 for a ``float32`` column, whose nearest value is 0.10000000149011612: the rows holding the
    column's 0.1 would be outside the levels; not where that nearest value is itself a declared level, as 16777216
    beside 16777217).  The fit would spend its budget and then refuse (``missing="raise"``) or drop
    those rows.  A level of another column type that some other level's rows can stand beside (300 or 0.5 among
    the levels of an ``int8`` column, 16777217 beside 16777216 for a ``float32`` one) is a level no row holds: not
    refused (a declared level may be one no row holds), but warned about
    (:class:`~dpstats.errors.UnmatchableLevelsWarning`, naming those declared levels), since the data can then
    never inform its coefficient.

    Decided from the declaration and the dtype (the schema): each level is converted to the dtype (a one-value
    column built from the level alone) and matched against itself; where the conversion fails, or the converted
    value does not equal the level, no value of the dtype does.  Object, text and categorical columns are checked
    elsewhere (any level can be an object cell)."""
    never = _unmatchable_levels(levels, dtype)
    if not never:
        return
    numpy_dtype = _numpy_dtype(dtype)
    narrow = numpy_dtype is not None and numpy_dtype.kind == "f" and numpy_dtype.itemsize < 8
    # a number the column rounds onto another declared level is a level no row holds (its rows hold that level)
    rounded = [(level, stored) for level, stored in never
               if isinstance(level, numbers.Real) and not isinstance(level, (bool, np.bool_))
               and (stored is _UNSTORABLE or raw_level_codes(stored, list(levels))[0] < 0)]
    if len(never) < len(levels) and not (narrow and rounded):
        _warn_unmatchable(var, [level for level, _ in never], dtype, _representable_advice(var, dtype, never[0]))
        return
    if len(never) < len(levels):
        never = rounded
    shown = ", ".join(repr(level) for level, _ in never[:6]) + (", ..." if len(never) > 6 else "")
    verb = "are" if len(never) == len(levels) else "include"
    one = len(never) == 1
    holding = ("every row" if len(never) == len(levels)
               else f"the rows holding {'its' if one else 'their'} nearest {dtype} value{'' if one else 's'}")
    raise FormulaError(
        f"levels for '{var}' {verb} {shown}, which no value of the column's dtype {dtype} can equal, so {holding} "
        f"would be outside the declared levels: {_representable_advice(var, dtype, never[0])}. Nothing was read or "
        "spent.")


def _unmatchable_levels(levels: Sequence[Any], dtype: Any) -> list[tuple[Any, Any]]:
    """(level, its one-value column of ``dtype`` or ``_UNSTORABLE``) of each declared level that no value of a
    column of ``dtype`` can equal (:func:`_check_levels_representable`); none for an object, text or categorical
    dtype (checked elsewhere).  From the declaration and the dtype only."""
    if pd.api.types.is_object_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype) or (
            pd.api.types.is_string_dtype(dtype)):
        return []
    return [(level, stored) for level in levels for stored in [_stored_as(level, dtype)]
            if stored is _UNSTORABLE or raw_level_codes(stored, [level])[0] != 0]


def _warn_unmatchable(var: str, never: Sequence[Any], dtype: Any, advice: str) -> None:
    """:class:`~dpstats.errors.UnmatchableLevelsWarning` for the declared levels ``never`` of ``var`` (some, not
    all, of its levels) that no value of ``dtype`` can equal; built from the declaration and the dtype only."""
    one = len(never) == 1
    shown = ", ".join(repr(level) for level in never[:6]) + (", ..." if len(never) > 6 else "")
    warnings.warn(
        f"levels for '{var}' include {shown}, which no value of the column's dtype {dtype} can equal: no row can "
        f"hold {'it' if one else 'them'}, so the data cannot inform {'its' if one else 'their'} "
        f"coefficient{'' if one else 's'} (and a reference level that no row holds leaves the other levels' columns "
        f"adding up to the intercept). {advice[0].upper() + advice[1:]}. Nothing was read; the fit runs.",
        UnmatchableLevelsWarning, stacklevel=2)


def _numpy_dtype(dtype: Any) -> np.dtype | None:
    """The numpy dtype a column of ``dtype`` holds its values in: the dtype itself, a sparse column's subtype, a
    nullable column's ``numpy_dtype`` (``Int8``, ``Float32``); None for any other."""
    if isinstance(dtype, pd.SparseDtype):
        dtype = dtype.subtype
    held = dtype if isinstance(dtype, np.dtype) else getattr(dtype, "numpy_dtype", None)
    return held if isinstance(held, np.dtype) else None


def _representable_advice(var: str, dtype: Any, first: tuple[Any, Any]) -> str:
    """What to declare instead of a level no value of ``dtype`` can equal (:func:`_type_advice`), or a general
    sentence where the dtype does not have the attributes that advice reads."""
    try:
        return _type_advice(var, dtype, first)
    except Exception:  # noqa: BLE001 - an extension dtype without them: the general advice, never a failure here
        return "declare levels of the column's type, or convert the column"


_UNSTORABLE: Any = object()


def _stored_as(level: Any, dtype: Any) -> Any:
    """A one-value column of ``dtype`` holding ``level`` converted to it, or ``_UNSTORABLE`` where pandas cannot
    convert it (from the declaration and the dtype only)."""
    for build in (lambda: pd.Series([level]).astype(dtype), lambda: pd.Series([level], dtype=dtype)):
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                stored = build()
        except Exception:  # noqa: BLE001 - pandas, numpy or pyarrow refuses the conversion: try the next, or none
            continue
        if len(stored) == 1:
            return stored
    return _UNSTORABLE


def _type_advice(var: str, dtype: Any, first: tuple[Any, Any]) -> str:
    """What to declare instead of a level no value of ``dtype`` can equal (``first``: the level and its one-value
    column of the dtype, or ``_UNSTORABLE``), from the dtype and the declared level only."""
    level, stored = first
    tz = getattr(dtype, "tz", None) or getattr(getattr(dtype, "pyarrow_dtype", None), "tz", None)
    if pd.api.types.is_datetime64_any_dtype(dtype):
        if tz is not None:
            return (f"the column holds timestamps in the time zone {tz}, which neither text nor a timestamp without "
                    f"a time zone equals: declare timestamps with one, e.g. pd.Timestamp('2020-01-01', tz='{tz}'), "
                    f"or convert the column, e.g. df[{var!r}] = df[{var!r}].dt.tz_localize(None)")
        return ("the column holds timestamps without a time zone, which neither text nor a timestamp with a time zone "
                "equals: declare timestamps, e.g. pd.Timestamp('2020-01-01'), or convert the column")
    if isinstance(dtype, pd.PeriodDtype):
        freq = str(dtype).removeprefix("period[").removesuffix("]")  # "M" (freq.freqstr is the offset's "ME")
        return (f"the column holds periods of frequency {freq}, which neither text nor a timestamp equals: declare "
                f"periods of that frequency, e.g. pd.Period('2020-01', freq='{freq}'), or convert the column")
    if pd.api.types.is_timedelta64_dtype(dtype):
        return ("the column holds durations, which neither text nor a number equals: declare durations, e.g. "
                "pd.Timedelta(hours=1), or convert the column")
    if pd.api.types.is_bool_dtype(dtype):
        return "the column holds only False and True: declare those, or convert the column"
    numpy_dtype = _numpy_dtype(dtype)
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind == "f" and numpy_dtype.itemsize < 8:
        held = "" if stored is _UNSTORABLE else f" ({level!r} is held as {float(stored.iloc[0])!r})"
        return (f"the column holds {numpy_dtype.name} numbers{held}: declare each level as such a number, e.g. "
                f"float(np.{numpy_dtype.name}({level!r})), or convert the column first, e.g. "
                f"df[{var!r}] = df[{var!r}].astype('float64').round(6), and declare the rounded levels")
    if isinstance(numpy_dtype, np.dtype) and numpy_dtype.kind in "iu":
        return (f"the column holds integers of dtype {dtype} only (from {np.iinfo(numpy_dtype).min} to "
                f"{np.iinfo(numpy_dtype).max}): declare such integers, or convert the column")
    return "declare levels of the column's type, or convert the column"


def _check_categories_declared(var: str, levels: Sequence[Any], dtype: pd.CategoricalDtype) -> None:
    """Refuse declared levels that equal none of a categorical column's categories (every row would be outside the
    declared levels: ``["No", "Yes"]`` for the categories "no" and "yes"), and warn
    (:class:`~dpstats.errors.UndeclaredCategoriesWarning`) when some categories equal no declared level.  Decided
    from the dtype (the schema) and the declared levels, by the rule of :func:`~dpstats.formula.values.level_codes`
    (Python equality); the messages count the categories and quote none."""
    declared = set(levels)
    outside = sum(1 for category in dtype.categories if category not in declared)
    if outside == 0:
        return
    total = len(dtype.categories)
    if outside == total:
        raise FormulaError(
            f"levels for '{var}' ({', '.join(map(repr, list(levels)[:6]))}{', ...' if len(levels) > 6 else ''}) "
            f"equal none of the {total} categories of the column's categorical dtype, so every row would be outside "
            f"the declared levels: spell the levels as the dtype's categories (case and type "
            f"matter), or convert the column. Nothing was read or spent.")
    warnings.warn(
        f"{outside} of the {total} categories of '{var}' (its categorical dtype) equal no declared level: its rows in "
        "them are outside the declared levels, handled as rows with a missing value (public null rows). Declare "
        "every category the variable can take, "
        "spelled as the dtype spells it.", UndeclaredCategoriesWarning, stacklevel=2)


def _level_list(var: str, value: Any) -> list[Any]:
    """The declared levels of ``var`` as a list; anything but an ordered one-dimensional collection is refused
    (a string would otherwise be read as its characters, a set has no order to take the reference level from)."""
    ordered = isinstance(value, (Sequence, pd.Index, pd.Series, pd.Categorical)) or (
        isinstance(value, np.ndarray) and value.ndim == 1)
    if ordered and not isinstance(value, (str, bytes)):
        return list(value)
    if isinstance(value, (str, bytes)):
        got = "a string"
    elif isinstance(value, (set, frozenset)):
        got = "a set, which has no order (the first level is the reference)"
    elif isinstance(value, np.ndarray):
        got = f"a {value.ndim}-dimensional array"
    else:
        got = f"a value of type {type(value).__name__}"
    raise FormulaError(f"levels for '{var}' must be a list of the levels, e.g. [0, 1]; got {got}. No budget was "
                       "spent.")


def _clip_ranges(bounds: Mapping[str, tuple[float, float]], facts: Iterable[FactorFacts], variables: Sequence[str],
                 df: pd.DataFrame, bool_responses: Sequence[str], leveled: set[str],
                 multiplied: set[str]) -> list[tuple[str, float, float]]:
    """The declared ranges of the raw variables that enter a transform or an interaction (``multiplied``: they are
    clipped before it is evaluated, so that a value outside its bounds, however large, gives a finite product of
    the declared ranges, as the guarantee's domain says, instead of an overflow that would refuse one data set and
    fit its neighbour).

    Every declared bound is validated here.  Variables that enter only as bare
    main effects are not clipped here: the public rescaling and the methods
    that need bounds clip the design columns themselves.  Bounds for a
    variable that enters only as a factor are refused: they could have no
    effect but to clip its values onto other levels.
    """
    for key, val in bounds.items():
        declared_interval(key, val)
    facts = list(facts)
    transformed = {v for f in facts for v in f.variables if f.code.strip() != v}
    clip: list[tuple[str, float, float]] = []
    for k, v in bounds.items():
        if k not in variables:
            continue
        if k in leveled or not (is_numeric(df[k]) or k in bool_responses):
            raise InvalidBoundsError(_factor_bounds_message(k, df[k].dtype, k in leveled))
        if k in bool_responses:
            interval = declared_interval(k, v)
            if interval.lo < 0.0 or interval.hi > 1.0:
                raise InvalidBoundsError(_boolean_response_bounds_message(k, interval.lo, interval.hi))
        factors = [f.code for f in facts if k in f.variables]
        if all(factor_of(code) == k for code in factors):
            raise InvalidBoundsError(_factor_only_bounds_message(k, factors))
        if k in transformed or k in multiplied:
            iv = declared_interval(k, v)
            clip.append((k, iv.lo, iv.hi))
    return clip


def _factor_bounds_message(name: str, dtype: Any, leveled: bool) -> str:
    """Why bounds for a variable the formula uses as a factor are refused, and what to fix, from its dtype and
    whether levels were declared for it (never from its values)."""
    lead = f"bounds were given for '{name}', "
    if leveled and pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype):
        return (lead + f"a numeric column (dtype {dtype}) that levels= makes a factor in the formula, so bounds for "
                "it are refused (a factor's columns are 0/1, bounded automatically). Drop its bounds to use it as a "
                f"factor, or drop levels['{name}'] to use it as a number.")
    if not leveled and (advice := duration_advice(name, dtype) or date_advice(name, dtype)):
        return (lead + f"which is not a number:{advice} Decided from the column's dtype; no value was read and no "
                "budget was spent.")
    if isinstance(dtype, pd.CategoricalDtype) or leveled or pd.api.types.is_bool_dtype(dtype):
        kind = "a boolean column" if pd.api.types.is_bool_dtype(dtype) else "a factor (categorical or with levels=)"
        return (lead + f"which is {kind}, so bounds for it are refused (its columns are 0/1, bounded "
                "automatically): drop its bounds.")
    if pd.api.types.is_complex_dtype(dtype):
        return (lead + f"whose dtype is {dtype}: complex numbers are not supported. Keep the real part with a public "
                f"rule before fitting (df['{name}'] = np.real(df['{name}'])) if that is the variable you mean. "
                "Decided from the column's dtype; no value was read and no budget was spent.")
    return (lead + f"which is not numeric (its dtype is {dtype}); factors are bounded automatically. If the column "
            f"holds numbers stored as text, convert it before the fit (e.g. df['{name}'] = "
            f"pd.to_numeric(df['{name}'])); if it is a factor, drop its bounds and declare its levels "
            f"(levels={{'{name}': [...]}} or C({name}, levels=[...]) in the formula). Decided from the column's "
            "dtype; no value was read and no budget was spent.")


def _boolean_response_bounds_message(name: str, lo: float, hi: float) -> str:
    """Why bounds reaching outside [0, 1] for a boolean response are refused (public: the dtype and the declared
    bounds): the rules of a two-valued response (the share of its rarer value read off its released centre, the
    variance floor of pgd's interval) take its two values to be the declared ends, which they are when the declared
    range lies within [0, 1] (0 and 1 clipped to it) and are not when it reaches beyond, where that share would be
    misread."""
    return (f"bounds['{name}'] = ({lo:g}, {hi:g}) were given for a boolean response: it is 0 or 1, its range [0, 1] "
            "fixed by its dtype, and the clip and interval rules of a linear probability model read the share of its "
            "rarer value off the declared range as if its ends were the two values (docs/choosing.md, 'A rare "
            f"outcome'), which a range beyond [0, 1] would misread. Drop bounds['{name}'] or declare (0, 1). Decided "
            "from the column's dtype and the bounds; no value was read and no budget was spent.")


def _factor_only_bounds_message(name: str, factors: Sequence[str]) -> str:
    """Why bounds for a numeric variable that the formula uses only as a factor (``factors``, its ``C()`` codes)
    are refused, and what to do instead (public: the formula and the name)."""
    listed = ", ".join(dict.fromkeys(factors))
    return (f"bounds were given for '{name}', which the formula uses only as a factor ({listed}): a factor's columns "
            "are 0/1 indicators of its declared levels, bounded automatically, so bounds for it have no effect and are "
            f"refused. Drop bounds['{name}'] to use it as a factor; its bounds matter only where it enters as a number "
            f"({name} itself in place of the factor, or a product such as z:{name} with another variable z). Decided "
            "from the formula; no value was read and no budget was spent.")


def _check_transform_domains(facts: Iterable[FactorFacts], bounds: Mapping[str, tuple[float, float]],
                             schema: pd.DataFrame) -> None:
    """Refuse a transform that is undefined (or overflows) somewhere inside the declared bounds of its variables.

    Decided from the formula and the bounds alone, before any row is read: the
    variables are clipped to those bounds before the transform, so inside
    them is where the transform must be defined (``np.log(x)`` with x in
    [0, 10] is refused; with x in [1, 10] it is always finite).
    """
    declared = {k: declared_interval(k, v) for k, v in bounds.items()
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


def _check_decided_comparisons(facts: Iterable[FactorFacts], bounds: Mapping[str, tuple[float, float]],
                               schema: pd.DataFrame) -> None:
    """Refuse a comparison term (``I(x > 12)``, ``C(x > 12, levels=[False, True])``) that the declared bounds decide
    for every row: the variables are clipped to their bounds before the formula is evaluated, so with x declared in
    [0, 10] ``I(x > 12)`` is False on every row, whatever the data hold, and its column is one constant, no term of
    a model (as ``I(1 > 0)`` is, :func:`_check_constant_codes`).  Decided from the formula and the bounds alone,
    before any row is read (:func:`dpstats.bounds.decided_comparison`)."""
    declared = {k: declared_interval(k, v) for k, v in bounds.items()
                if k in schema.columns and pd.api.types.is_numeric_dtype(schema[k].dtype)
                and not isinstance(schema[k].dtype, pd.CategoricalDtype)}
    for f in facts:
        value = decided_comparison(f.code, declared)
        if value is None:
            continue
        ranges = ", ".join(f"{v} in [{declared[v].lo:g}, {declared[v].hi:g}]" for v in f.variables if v in declared)
        raise FormulaError(
            f"'{f.code}' is {value} for every value the declared bounds allow ({ranges}): the fit clips each "
            "variable to its bounds before evaluating the formula, so the comparison is one constant on every row, "
            "which is no term of a model. Declare the variable's documented range (one that reaches past the "
            "threshold), or change the threshold. Decided from the formula and the bounds alone; nothing was read "
            "or spent.")


def _null_fill(df: pd.DataFrame, bounds: Mapping[str, tuple[float, float]],
               declared: Sequence[tuple[str, tuple[Any, ...]]], codes: Sequence[str]) -> list[tuple[str, Any]]:
    """The public null row: for each variable a value from public facts only (a declared level, the midpoint of
    its declared bounds or 1.0, False); None for text without declared levels (only with allow_data_levels)."""
    first_levels = {**formula_first_levels(codes), **{v: lv[0] for v, lv in declared}}
    fill: list[tuple[str, Any]] = []
    for v in df.columns:
        col = df[v]
        if v in first_levels:
            value: Any = first_levels[v]
        elif isinstance(col.dtype, pd.CategoricalDtype):
            value = col.cat.categories[0] if len(col.cat.categories) else None
        elif pd.api.types.is_bool_dtype(col.dtype):
            value = False
        elif is_numeric(col):
            iv = declared_interval(v, bounds[v]) if v in bounds else None
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
