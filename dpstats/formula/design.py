"""Formula + data -> the public design (:class:`Design`): X, y, patsy's design and each column's range.

This layer never draws noise.  It guarantees that the *shape* of the design is
a function of public facts only:

* factor levels come from the formula (``C(g, levels=[...])``), from the
  ``levels=`` argument, or from a declared schema (a pandas ``Categorical``
  dtype, or ``bool``), never from the values present in the data, unless the
  user opts in with ``allow_data_levels=True`` (reported as a leak);
* factor code is row-wise: it is checked against the allow-list of
  :mod:`dpstats.formula.language` before any data are read and evaluated in
  dpstats's own namespace, never the caller's;
* errors are decided from the schema (column names, dtypes, the formula, the
  declared bounds: a transform undefined inside the declared bounds of its
  variables is refused before any data are read, :mod:`dpstats.formula.schema`);
  the few that depend on values (missing values, values outside declared
  levels, non-finite values where no bound settles the transform) are checks
  of the public domain and never echo a value or a count (``docs/privacy.md``);
* ``missing="drop"`` keeps n public in a private fit: incomplete rows become
  public null rows (see :func:`build_design`).

:func:`build_design` evaluates the design on a frame in memory;
:func:`public_design` builds it from a schema alone, for data read in chunks
(:mod:`dpstats.rows.chunked` then evaluates every chunk with it).  Each design
column's range is derived from the declared bounds by
:func:`dpstats.bounds.derive_ranges`; the design for new data (``predict``) is
:mod:`dpstats.formula.predict`.
"""

from __future__ import annotations

import ast
import threading
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import patsy

from dpstats.bounds import (
    ELEMENTWISE_FUNCTIONS,
    NUMPY_NAMES,
    BoundsAdvice,
    DataBounds,
    Interval,
    call_name,
    declared_interval,
    derive_ranges,
)
from dpstats.errors import (
    DataTypeError,
    DPStatsError,
    FormulaError,
    MissingBoundsError,
    UndeclaredLevelsError,
)
from dpstats.formula.centring import (
    CentrableDesign,
    ColumnCentring,
    centrable_design,
    product_columns,
    public_centring,
)
from dpstats.formula.frame import FramePlan, as_frame, date_advice, duration_advice, float64_values, is_numeric
from dpstats.formula.identifiable import RankProbe, few_values_reason
from dpstats.formula.language import CONTRASTS, FORMULA_ENV
from dpstats.formula.parse import (
    PARSED_FORMULAS,
    code_names,
    declares_levels,
    formula_first_levels,
    model_desc,
    origin_code,
    quoted_names,
    term,
)
from dpstats.formula.schema import ParsedFormula, dtype_key, parse_formula

__all__ = ["Design", "build_design", "public_design", "public_prototype", "finite_arrays", "sanitised_error",
           "DesignLayout", "design_layout", "evaluate_design",
           "rebuild_design_infos"]


@dataclass
class Design:
    """The public design of a fit and the (private) arrays it produced.

    Everything but ``X`` and ``y`` is public: the column names, the patsy
    designs of both sides, each column's range and the response's
    (:func:`dpstats.bounds.derive_ranges`), what to declare for the missing
    ranges, and the notes for the report.

    Attributes
    ----------
    X, y : numpy.ndarray
        The design and the response (no rows for a design built from a schema).
    column_names : list of str
        The design columns.
    response_name : str
        The response as patsy writes it.
    design_info : patsy.DesignInfo
        The right-hand side's design.
    column_intervals : list of Interval or None
        Each column's range (None where none is declared or derived).
    response_interval : Interval or None
        The response's range.
    missing_bounds : list of str
        The columns, then ``"<response> (response)"``, without a range.
    notes : list of str
        Notes for the report (missing values, levels read from the data).
    numeric_variables : list of str
        The numeric variables the formula uses.
    response_info : patsy.DesignInfo or None
        The left-hand side's design (used to evaluate chunks).
    bound_variables : list of str
        What to declare for the missing ranges: the raw variables whose bounds derive them.
    underivable_bounds : list of tuple of (str, str)
        (design column or response code, why) for the ranges no variable bounds can derive.
    null_rows : bool
        ``missing="drop"`` in a private fit: rows with a missing value are public null rows, NaN in X and y here
        (the mask itself is private: it is never stored, only the NaN marks, which ``DataBounds.clip`` turns into
        zeros).  Also true with ``screened``.
    screened : tuple of str
        With ``missing="raise"`` in a private fit where a variable's dtype can hold a missing value: those variables,
        which the fit's charged missing-value screen covers and its messages name
        (:mod:`dpstats.privacy.missing_screen`); their incomplete rows are public null rows, counted by the screen.
        Empty: no screen.  Since a value outside a variable's declared levels makes a public null row too, those
        variables are included where their public type does not keep them inside the levels, and so are the codes
        of the terms ``C(expression, levels=[...])`` that can compute a value outside their levels.
    screened_levels : tuple of str
        Among ``screened``, the variables (and computed terms) that can hold a value outside their declared levels
        (named by the screen's messages).
    two_valued_response : bool
        The response is a function of one two-valued variable (a boolean, coded 0/1, or one in
        ``variable_supports``), so it takes at most two values (public: the formula, the dtype and the bounds).
    variable_supports : dict of str to tuple of float
        The numeric variables whose values public facts fix: an integer dtype clipped to declared bounds that are
        consecutive integers (:func:`dpstats.formula.schema.integer_supports`), e.g. a 0/1 column declared (0, 1).
    formula_expanded : str
        The formula as patsy parses it ('.' expanded, long sums nested), for workers.
    rank_probe : RankProbe or None
        The public facts the rank check by construction evaluates (None for designs given as arrays).
    storage_hint : str
        Where the response is declared between two consecutive integers but stored as floats, what to change
        (the fit warns with it, ``FloatIndicatorWarning``); "" otherwise.
    factor_intervals : dict of str to Interval
        The range of each one-column numerical factor with finite bounds, by code
        (:attr:`dpstats.bounds.DesignRanges.factor_intervals`); empty for a design given as arrays.
    """

    X: np.ndarray
    y: np.ndarray
    column_names: list[str]
    response_name: str
    design_info: Any
    column_intervals: list[Interval | None]
    response_interval: Interval | None
    missing_bounds: list[str]
    notes: list[str] = field(default_factory=list)
    numeric_variables: list[str] = field(default_factory=list)
    response_info: Any = None
    bound_variables: list[str] = field(default_factory=list)
    underivable_bounds: list[tuple[str, str]] = field(default_factory=list)
    null_rows: bool = False
    screened: tuple[str, ...] = ()
    screened_levels: tuple[str, ...] = ()
    two_valued_response: bool = False
    variable_supports: dict[str, tuple[float, ...]] = field(default_factory=dict)
    formula_expanded: str = ""
    rank_probe: RankProbe | None = None
    storage_hint: str = ""
    factor_intervals: dict[str, Interval] = field(default_factory=dict)
    #: :meth:`public_centring`'s last result with the public facts it was computed from (a fit asks for it twice)
    _centring_memo: tuple[Any, ...] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n(self) -> int:
        """Rows of the design."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """Columns of the design."""
        return int(self.X.shape[1])

    @property
    def has_intercept(self) -> bool:
        """The design has a column named ``Intercept``."""
        return "Intercept" in self.column_names

    def dependent_columns(self) -> list[str]:
        """The columns that are linearly dependent for every data set the declarations allow (public facts only).

        Returns
        -------
        list of str
            The columns in a dependency on the public domain (:mod:`dpstats.formula.identifiable`); empty when
            none is found or the design was given as arrays.
        """
        return self.rank_probe.dependent_columns(self.design_info) if self.rank_probe is not None else []

    def dependence_reason(self, dependent: Sequence[str]) -> str:
        """Why ``dependent`` (from :meth:`dependent_columns`) are dependent where variables drawn on their integer
        grid make them so, for a refusal's message; "" otherwise (public facts only:
        :meth:`~dpstats.formula.identifiable.RankProbe.few_valued`).

        Parameters
        ----------
        dependent : sequence of str
            Design column names.

        Returns
        -------
        str
            A sentence (:func:`~dpstats.formula.identifiable.few_values_reason`), or "".
        """
        if not dependent or self.rank_probe is None:
            return ""
        return few_values_reason(self.rank_probe.few_valued(self.design_info, dependent))

    def constant_weights(self) -> np.ndarray | None:
        """Where a design without an ``Intercept`` column spans the constant (``y ~ 0 + x + C(g)``, whose dummies
        of g sum to 1; ``y ~ 0 + cr(x, ...)``), the weights that sum the columns to 1, which a public
        reparametrisation uses to fit the intercept model (public facts only:
        :meth:`~dpstats.formula.identifiable.RankProbe.constant_weights`).

        Returns
        -------
        numpy.ndarray or None
            w (d,) with X w = 1; None with an intercept, where the constant is not in the span, or where the design
            was given as arrays.
        """
        if self.has_intercept or self.rank_probe is None:
            return None
        return self.rank_probe.constant_weights(self.design_info)

    def centrable_columns(self) -> CentrableDesign | None:
        """The product and power columns :meth:`public_centring` centres once every range involved is known, read
        from the formula and the public supports alone (:func:`~dpstats.formula.centring.centrable_design`), or
        None where there is none.

        Returns
        -------
        CentrableDesign or None
            Its ``centred`` and ``powers`` name the columns; :meth:`CentrableDesign.at` centres them at given
            centres.
        """
        return centrable_design(self.design_info, self.variable_supports, self.constant_weights())

    def product_columns(self) -> ColumnCentring | None:
        """The product and power columns :meth:`public_centring` centres once every range involved is declared
        (:func:`~dpstats.formula.centring.product_columns`: the formula's structure alone), including those that
        :meth:`centrable_columns` leaves out (a centred column that is itself centred in a product, as in
        ``I(x ** 2):z``), or None where there is none.

        Returns
        -------
        ColumnCentring or None
            Its ``centred`` and ``powers`` name the columns.
        """
        return product_columns(self.design_info, self.variable_supports)

    def public_centring(self) -> ColumnCentring | None:
        """The public centring of the design's product and power columns (:mod:`dpstats.formula.centring`).

        Returns
        -------
        ColumnCentring or None
            The reparametrisation private fits see, or None where no column qualifies (or a range is missing).
        """
        facts = (self.design_info, self.rank_probe, tuple(self.column_names), tuple(self.column_intervals),
                 tuple(self.variable_supports.items()), tuple(self.factor_intervals.items()))
        memo = self._centring_memo
        if memo is not None and all(a is b for a, b in zip(memo[0][:2], facts[:2], strict=True)) \
                and memo[0][2:] == facts[2:]:
            return memo[1]  # (a ColumnCentring is frozen; the same public facts give the same centring)
        centring = public_centring(self.design_info, self.column_intervals, self.variable_supports,
                                   constant=self.constant_weights(), factors=self.factor_intervals)
        self._centring_memo = (facts, centring)
        return centring

    def bounds_advice(self) -> BoundsAdvice:
        """What to declare so that every column and the response have a range (:mod:`dpstats.bounds.derive`).

        Returns
        -------
        BoundsAdvice
            The keys to declare and the message of :class:`~dpstats.errors.MissingBoundsError`.
        """
        return BoundsAdvice(self.missing_bounds, self.bound_variables, self.underivable_bounds, self.response_name,
                            self.numeric_variables)

    def bounds_to_declare(self) -> list[str]:
        """The ``bounds=`` keys that would give every column and the response a range.

        Returns
        -------
        list of str
            Raw variables first, then the design columns (or the response code) whose range cannot be derived
            from variable bounds.
        """
        return self.bounds_advice().keys()

    def data_bounds(self) -> DataBounds:
        """The clip ranges of the design columns and the response.

        Returns
        -------
        DataBounds
            The declared or derived ranges, with the null-row mark.

        Raises
        ------
        MissingBoundsError
            A column or the response has no range (naming what to declare).
        """
        if self.missing_bounds:
            raise MissingBoundsError(self.bounds_advice().message())
        return DataBounds(
            column_lo=np.array([iv.lo for iv in self.column_intervals], dtype=float),  # type: ignore[union-attr]
            column_hi=np.array([iv.hi for iv in self.column_intervals], dtype=float),  # type: ignore[union-attr]
            y_lo=self.response_interval.lo, y_hi=self.response_interval.hi,  # type: ignore[union-attr]
            null_rows=self.null_rows,
        )


def _is_schema_categorical(series: pd.Series) -> bool:
    return isinstance(series.dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(series.dtype)


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
) -> Design:
    """Build the design matrix from public facts; see the module docstring.

    Parameters
    ----------
    formula : str
        A patsy formula in the formula language (:mod:`dpstats.formula.language`).
    data : pandas.DataFrame or mapping
        The data (a dict of equal-length arrays is made a table).
    eval_env : object
        Ignored, kept for compatibility: factor code is evaluated in dpstats's
        own namespace (:data:`dpstats.formula.language.NAMESPACE`).
    bounds : mapping of str to (float, float) or None
        Declared ranges of variables, design columns or the response code.
    levels : mapping of str to sequence or None
        Declared levels of factors.
    missing : str
        ``"raise"``, ``"null"`` (incomplete rows become public null rows:
        their design row and response are NaN here, and become zero rows
        where the method clips, see :class:`~dpstats.bounds.DataBounds`),
        ``"screen"`` (as ``"null"``, the rows counted by the fit's charged
        missing-value screen, :mod:`dpstats.privacy.missing_screen`) or
        ``"drop"`` (rows removed; only for the non-private reference).
    allow_data_levels : bool
        Accept factor levels read from the data (a leak, named in the notes).

    Returns
    -------
    Design
        The design, its arrays and each column's range.

    Raises
    ------
    DPStatsError
        A typed refusal decided from the formula, the schema and the declared
        bounds and levels, or a domain check (missing values, values outside
        declared levels, non-finite values), never echoing a value.
    """
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string of the form 'y ~ x1 + x2', with a response on the left")
    df = as_frame(data)
    parsed = parse_formula(formula, df, bounds=bounds, levels=levels, missing=missing)
    if not allow_data_levels:
        _refuse_undeclared_levels(parsed, bounds, formula)
    df, nulls = parsed.plan.prepare(df)
    notes = _missing_notes(missing)
    X_raw, y_raw, design_info, y_info = _dmatrices(parsed.desc, df, formula, parsed.plan.variables)
    notes += _check_levels(design_info, df, parsed, allow_data_levels)
    if not allow_data_levels:
        _check_terms_have_columns(design_info)
    X, y = finite_arrays(X_raw, y_raw, nulls)
    return _assemble(parsed, X, y, design_info, y_info, bounds, notes)


def _refuse_undeclared_levels(parsed: ParsedFormula, bounds: Mapping[str, tuple[float, float]] | None,
                              formula: str) -> None:
    """Refuse a factor whose levels are not declared from the formula, the declarations and the schema alone, before
    any row is evaluated, exactly as for data read in chunks (:func:`public_design`): the design is built on the
    zero-row schema (or the public prototype row) and its factors are checked by :func:`_check_levels`.

    Checked on the data's design instead, the refusal came after patsy had evaluated every row: its type then
    depended on the rows (one unhashable cell made patsy fail first, a ``FormulaError``, where its neighbour got
    :class:`~dpstats.errors.UndeclaredLevelsError`), and ``C(x)`` of a float column built an n x n dummy matrix
    first.  A formula whose design cannot be built on public values alone (a public fact too) is checked from its
    code and the schema instead (:func:`_undeclared_by_code`): patsy's evaluation on the data reads a factor's
    levels from the rows, so a contrast naming a level (``C(k, Treatment(7))``, ``Sum(omit=7)``) failed where no
    row has that value and reached this refusal where one has, a free answer to whether any row has it.

    Raises
    ------
    UndeclaredLevelsError
        A categorical factor of the schema's design whose levels are neither declared nor given by its dtype.
    """
    key = parsed.key  # the formula, the schema and the declarations the parse was made from: all this check reads
    if key is not None and _LEVELS_PASSED.seen(key):
        return
    try:
        y_dm, X_dm, proto = _schema_dmatrices(parsed, bounds, formula)
    except UndeclaredLevelsError:
        raise
    except Exception:  # noqa: BLE001 - decided from public facts: the factors' code and the schema's dtypes
        undeclared = _undeclared_by_code(parsed)
        if undeclared:
            raise UndeclaredLevelsError(_undeclared_levels_message(undeclared, parsed.schema)) from None
    else:
        _check_levels(X_dm.design_info, parsed.schema, parsed, allow_data_levels=False)
        # a formula patsy builds without reading a row: these designs are the rows' too (:class:`_KeptBuilders`)
        _KEPT_BUILDERS.keep(parsed.desc, proto, parsed.plan.variables, (y_dm.design_info, X_dm.design_info))
    if key is not None:
        _LEVELS_PASSED.add(key)


class _PassedChecks:
    """The keys of public facts whose check passed, the last ``size`` kept (a session refits a few formulas on one
    schema); a check that refuses is made again every time (its exception is not kept)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._keys: OrderedDict[tuple[object, ...], None] = OrderedDict()
        self._lock = threading.Lock()

    def seen(self, key: tuple[object, ...]) -> bool:
        with self._lock:
            if key not in self._keys:
                return False
            self._keys.move_to_end(key)
            return True

    def add(self, key: tuple[object, ...]) -> None:
        with self._lock:
            self._keys[key] = None
            while len(self._keys) > self._size:
                self._keys.popitem(last=False)


#: the public facts (:func:`~dpstats.formula.schema.public_key`, the parse's key) whose zero-row (or prototype)
#: design passed :func:`_refuse_undeclared_levels`: a refit of the same formula on the same schema and declarations
#: skips patsy's zero-row design, whose outcome they decide
_LEVELS_PASSED = _PassedChecks(PARSED_FORMULAS)


def _undeclared_by_code(parsed: ParsedFormula) -> list[tuple[str, str]]:
    """(factor code, its variable) of every factor that patsy could make categorical with levels read from the rows,
    decided from the code and the schema alone: a ``C()`` call, or a bare (or quoted) column whose dtype is not a
    real number, whose levels are not public by the rule of :func:`_check_levels` (written in the formula, a
    comparison's, or every variable's dtype a Categorical or bool, the declared ``levels=`` included)."""
    out: list[tuple[str, str]] = []
    for code in dict.fromkeys([parsed.response_code, *parsed.factor_codes]):
        facts = parsed.facts.get(code)
        if declares_levels(code) or (facts is not None and facts.boolean):
            continue
        fvars = [v for v in code_names(code) if v in parsed.columns and v in parsed.schema.columns]
        column = code.strip() if code.strip() in parsed.schema.columns else _quoted_column(code)
        categorical = code.strip().startswith("C(") or (column is not None and not is_numeric(parsed.schema[column]))
        if not categorical or (fvars and all(_is_schema_categorical(parsed.schema[v]) for v in fvars)):
            continue
        out.append((code, fvars[0] if fvars else code))
    return out


def _quoted_column(code: str) -> str | None:
    """The column a factor's code is when it is just ``Q('name')``, else None."""
    quoted = quoted_names(code)
    if len(quoted) == 1 and code.replace(" ", "") in {f'Q("{quoted[0]}")', f"Q('{quoted[0]}')"}:
        return quoted[0]
    return None


def _dmatrices(desc: Any, df: pd.DataFrame, formula: str, variables: Sequence[str]
               ) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    """(X, y, the right-hand side's DesignInfo, the response's) of the data in dpstats's namespace: patsy reads the
    factors' types and levels from the rows (as ``patsy.dmatrices`` does), then :func:`evaluate_design` builds the
    matrices, copying the formula's bare ``variables``; any failure becomes a typed error with a public message."""
    kept = _KEPT_BUILDERS.get(desc, df, variables)
    if kept is None:
        try:
            with np.errstate(all="ignore"):  # numpy's warnings would say which rows are out of a domain
                y_info, X_info = patsy.design_matrix_builders([desc.lhs_termlist, desc.rhs_termlist],
                                                              lambda: iter([df]), FORMULA_ENV, NA_action=_NO_NA_CHECK)
        except Exception as exc:  # noqa: BLE001 - every failure is reported from public facts only
            error = sanitised_error(exc, formula)
        else:
            kept = (y_info, X_info)
            _KEPT_BUILDERS.keep(desc, df, variables, kept)
        if kept is None:
            raise error  # outside the handler, so that the original (which may quote values) is not the context
    y_info, X_info = kept
    X, y = evaluate_design(design_layout(y_info, X_info, set(variables)), y_info, X_info, df, formula)
    return X, y, X_info, y_info


class _KeptBuilders:
    """patsy's designs (the response's, the right-hand side's) of the formulas whose designs patsy builds without
    reading a row (:func:`_row_free_kind`), the last ``size`` kept, with the dtypes of the formula's variables they
    were built on.

    ``design_matrix_builders`` evaluates each factor on the rows only to learn its type (numerical or
    categorical), its number of columns, a categorical factor's levels and a stateful transform's state.  For a
    factor that is a bare variable of a numpy number dtype, an arithmetic expression of such variables and small
    constants under ``I()`` and the elementwise functions (``np.log``, ...), a bare Categorical or boolean variable,
    or ``C()`` of such a variable (or of a number or object variable with literal ``levels=``), these are functions
    of the dtypes alone: numpy's result dtype is that of its operands, a one-dimensional column gives one column, a
    Categorical's levels are its categories (a boolean's False, True; ``levels=`` the literal ones), and no such
    factor has a state.  So the designs are a function of the formula's terms (its parsed description, held here
    and compared by identity) and of those dtypes, and are the same on every frame whose variables have the same
    dtypes (a Categorical's categories in order).  A formula with any other factor (a stateful transform such as
    ``center()`` or a spline (whose state patsy keeps), a comparison, text, ``C()`` of a column whose levels patsy
    reads from the rows) is
    built from the rows every time; so is a design whose factors patsy typed otherwise than expected or gave a
    state."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._held: OrderedDict[int, tuple[Any, tuple[object, ...], tuple[Any, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _signature(desc: Any, df: pd.DataFrame, variables: Sequence[str]) -> tuple[object, ...] | None:
        """The dtypes of ``variables`` on ``df`` as a key, or None where a factor of ``desc`` is not row-free on
        them (:func:`_row_free_kind`)."""
        columns = set(df.columns)
        dtypes = {v: df[v].dtype for v in variables if v in columns}
        for model_term in (*desc.lhs_termlist, *desc.rhs_termlist):
            for factor in model_term.factors:
                code = getattr(factor, "code", None)
                if not isinstance(code, str) or _row_free_kind(code, dtypes, columns) is None:
                    return None
        try:
            key = tuple((repr(v), dtype_key(dt)) for v, dt in dtypes.items())
            hash(key)
        except Exception:  # noqa: BLE001 - no key: built from the rows
            return None
        return key

    def get(self, desc: Any, df: pd.DataFrame, variables: Sequence[str]) -> tuple[Any, Any] | None:
        """The kept designs of ``desc``, or None (not kept, or kept for variables of other dtypes)."""
        with self._lock:
            held = self._held.get(id(desc))
            if held is None or held[0] is not desc:
                return None
        if self._signature(desc, df, variables) != held[1]:
            return None
        with self._lock:
            if id(desc) in self._held:
                self._held.move_to_end(id(desc))
        return held[2]

    def keep(self, desc: Any, df: pd.DataFrame, variables: Sequence[str], built: tuple[Any, Any]) -> None:
        """Keep ``built``, patsy's designs of ``desc`` on ``df``, where every factor is row-free and patsy typed it
        as expected, without a state."""
        signature = self._signature(desc, df, variables)
        if signature is None or not _typed_as_expected(built, df, variables):
            return
        with self._lock:
            self._held[id(desc)] = (desc, signature, built)
            while len(self._held) > self._size:
                self._held.popitem(last=False)


#: the arithmetic operators of a row-free numeric expression (:func:`_row_free_kind`)
_ROW_FREE_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow)
#: the largest integer constant of a row-free expression (a larger Python integer can make numpy's result an
#: object array, whose levels patsy reads from the rows)
_ROW_FREE_INTEGER = 2 ** 31


def _row_free_kind(code: str, dtypes: Mapping[str, Any], columns: set[Any]) -> str | None:
    """"numerical" or "categorical": the type patsy gives factor ``code`` from the dtypes alone, without reading a
    row (:class:`_KeptBuilders`); None for any factor whose design may depend on the rows, or that this allow-list
    does not cover.

    ``dtypes`` maps the formula's variables to their dtypes on the frame, ``columns`` holds every column of the
    frame (a column shadows a function of the namespace, so a call of a column's name is not covered)."""
    tree = _factor_tree(code)
    if tree is None:
        return None
    column = _row_free_column(tree, dtypes, columns)
    if column is not None:
        kind = _dtype_class(dtypes[column])
        return None if kind is None else "numerical" if kind == "number" else "categorical"
    if isinstance(tree, ast.Call) and call_name(tree, NUMPY_NAMES, columns) == "C":
        return "categorical" if _row_free_categorical(tree, dtypes, columns) else None
    return "numerical" if _row_free_number(tree, dtypes, columns) == (True, True) else None


@lru_cache(maxsize=4096)
def _factor_tree(code: str) -> ast.AST | None:
    """The syntax tree of a factor's code (read, never changed), None where it does not parse; kept, as a refit's
    kept designs are checked against its frame's dtypes on every call."""
    try:
        return ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dtype_class(dtype: Any) -> str | None:
    """"number" (a numpy integer or float dtype), "categorical" (a Categorical or boolean dtype) or None."""
    if isinstance(dtype, np.dtype) and dtype.kind in "fiu":
        return "number"
    if isinstance(dtype, pd.CategoricalDtype) or (isinstance(dtype, np.dtype) and dtype.kind == "b"):
        return "categorical"
    return None


def _row_free_column(node: ast.AST, dtypes: Mapping[str, Any], columns: set[Any]) -> str | None:
    """The variable ``node`` is (a bare name, or ``Q('name')``), else None."""
    if isinstance(node, ast.Name) and node.id in dtypes:
        return node.id
    if isinstance(node, ast.Call) and call_name(node, NUMPY_NAMES, columns) == "Q" and len(node.args) == 1 \
            and not node.keywords and isinstance(node.args[0], ast.Constant) and node.args[0].value in dtypes:
        return str(node.args[0].value)
    return None


def _row_free_constant(node: ast.AST) -> bool:
    """A finite float or a small integer literal (optionally negated)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool):
        return False
    value = node.value
    return (isinstance(value, int) and abs(value) <= _ROW_FREE_INTEGER) or (
        isinstance(value, float) and bool(np.isfinite(value)))


def _row_free_number(node: ast.AST, dtypes: Mapping[str, Any], columns: set[Any]) -> tuple[bool, bool]:
    """(whether ``node`` is a row-free numeric expression, whether it reads a variable): variables of number
    dtypes, small constants, + - * / and ``**`` with a literal exponent (not a negative integer, which numpy
    refuses for an integer base), ``I()`` and the elementwise functions; an operation of two constants is not
    covered (Python's integers are unbounded)."""
    column = _row_free_column(node, dtypes, columns)
    if column is not None:
        return _dtype_class(dtypes[column]) == "number", True
    if _row_free_constant(node):
        return True, False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _row_free_number(node.operand, dtypes, columns)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ROW_FREE_OPERATORS):
        left = _row_free_number(node.left, dtypes, columns)
        if isinstance(node.op, ast.Pow):
            exponent = node.right.operand if isinstance(node.right, ast.UnaryOp) else node.right
            negative = isinstance(node.right, ast.UnaryOp) and isinstance(node.right.op, ast.USub)
            integer = isinstance(exponent, ast.Constant) and isinstance(exponent.value, int)
            ok = left[0] and left[1] and _row_free_constant(node.right) and not (negative and integer)
            return ok, True
        right = _row_free_number(node.right, dtypes, columns)
        return left[0] and right[0] and (left[1] or right[1]), left[1] or right[1]
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        name = call_name(node, NUMPY_NAMES, columns)
        if name == "I" or name in ELEMENTWISE_FUNCTIONS:
            return _row_free_number(node.args[0], dtypes, columns)
    return False, False


def _row_free_categorical(node: ast.Call, dtypes: Mapping[str, Any], columns: set[Any]) -> bool:
    """Whether ``C(...)`` takes its levels from the dtype or the formula: ``C(var)`` of a Categorical or boolean
    variable, or ``C(var, levels=[...])`` of such a variable, a number or an object variable (its values mapped
    onto the literal levels, which patsy takes from the formula), with a contrast that is a bare
    name of patsy's contrasts or a call of one with literal arguments."""
    if not node.args or len(node.args) > 3:
        return False
    column = _row_free_column(node.args[0], dtypes, columns)
    if column is None:
        return False
    arguments = {kw.arg: kw.value for kw in node.keywords}
    if None in arguments or set(arguments) - {"contrast", "levels"}:
        return False
    for name, value in zip(("contrast", "levels"), node.args[1:], strict=False):
        if name in arguments:
            return False
        arguments[name] = value
    if "levels" in arguments and not _literal(arguments["levels"]):
        return False
    contrast = arguments.get("contrast")
    if contrast is not None and not _literal_contrast(contrast, columns):
        return False
    dtype = dtypes[column]
    if "levels" in arguments:  # mapped onto the literal levels (:func:`~dpstats.formula.language.categorical`)
        return _dtype_class(dtype) is not None or (isinstance(dtype, np.dtype) and dtype.kind == "O")
    return _dtype_class(dtype) == "categorical"


def _literal(node: ast.AST) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _literal_contrast(node: ast.AST, columns: set[Any]) -> bool:
    """A contrast named bare (``Sum``) or called with literal arguments (``Treatment('b')``)."""
    if isinstance(node, ast.Name):
        return node.id in CONTRASTS and node.id not in columns
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in CONTRASTS and node.func.id not in columns and all(
            _literal(a) for a in (*node.args, *(kw.value for kw in node.keywords))) and all(
            kw.arg is not None for kw in node.keywords)
    return False


def _typed_as_expected(built: tuple[Any, Any], df: pd.DataFrame, variables: Sequence[str]) -> bool:
    """Whether patsy gave every factor of the designs the type :func:`_row_free_kind` expects and no state of a
    stateful transform (a check of the allow-list on patsy's own account)."""
    columns = set(df.columns)
    dtypes = {v: df[v].dtype for v in variables if v in columns}
    for info in built:
        for factor, factor_info in info.factor_infos.items():
            code = getattr(factor, "code", None)
            state = getattr(factor_info, "state", None)
            if not isinstance(code, str) or not isinstance(state, dict) or state.get("transforms"):
                return False
            if _row_free_kind(code, dtypes, columns) != factor_info.type:
                return False
    return True


#: patsy's designs of the formulas patsy builds without reading a row (:class:`_KeptBuilders`)
_KEPT_BUILDERS = _KeptBuilders(PARSED_FORMULAS)


#: patsy's missing-value handling off: missing values are the formula layer's (null rows, the screen)
_NO_NA_CHECK = patsy.NAAction(on_NA="raise", NA_types=[])

#: rows of a design filled at a time from its columns (:func:`_fill_columns`)
FILL_ROWS = 1 << 12


@dataclass(frozen=True)
class DesignLayout:
    """Which design columns a frame gives directly and which patsy builds (:func:`design_layout`).

    Attributes
    ----------
    direct : tuple of (int, str or None)
        (column, variable) for each column copied from a bare numeric variable, (column, None) for the intercept.
    rest : patsy.DesignInfo or None
        The right-hand side's other terms (transforms, factors, interactions), built by patsy.
    response : str or None
        The response's variable when it is bare (copied), else None (patsy builds it).
    """

    direct: tuple[tuple[int, str | None], ...]
    rest: Any
    response: str | None


def design_layout(y_info: Any, X_info: Any, variables: set[str]) -> DesignLayout:
    """Which design columns are a bare numeric variable (copied directly), the intercept, or need patsy.

    patsy evaluates a bare numeric variable ``x`` (or ``Q("x")``) to the column's values converted to float, and
    the intercept to ones; copying them directly gives the same numbers without patsy's per-column assembly, which
    dominates the cost of building a design of many rows.  Every other term is built by patsy on the subset of the
    DesignInfo that holds those terms.

    Parameters
    ----------
    y_info, X_info : patsy.DesignInfo
        The response's and the right-hand side's designs.
    variables : set of str
        The frame's variables.

    Returns
    -------
    DesignLayout
    """
    direct: list[tuple[int, str | None]] = []
    rest = []
    for model_term, columns in X_info.term_slices.items():
        if not model_term.factors:
            direct.append((columns.start, None))
        elif (name := _bare_variable(model_term, X_info, variables)) is not None:
            direct.append((columns.start, name))
        else:
            rest.append(model_term)
    response = _bare_variable(y_info.terms[0], y_info, variables) if len(y_info.terms) == 1 else None
    return DesignLayout(tuple(direct), X_info.subset(rest) if rest else None, response)


def evaluate_design(layout: DesignLayout, y_info: Any, X_info: Any, df: pd.DataFrame, formula: str
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of prepared rows, y one column: the layout's direct columns copied, the rest built by patsy; a
    failure of patsy becomes a typed error with a public message (:func:`sanitised_error`).

    Parameters
    ----------
    layout : DesignLayout
        From :func:`design_layout`.
    y_info, X_info : patsy.DesignInfo
        The response's and the right-hand side's designs.
    df : pandas.DataFrame
        The prepared rows.
    formula : str
        The formula as the user wrote it, for messages.

    Returns
    -------
    tuple of numpy.ndarray
        X (n, d) and y (n, 1), as patsy would build them.
    """
    X = np.empty((len(df), len(X_info.column_names)))
    with np.errstate(all="ignore"):  # a cast's overflow warning would say that some value exceeds the float range
        _fill_columns(X, [(j, None if name is None else df[name].to_numpy(dtype=float)) for j, name in layout.direct])
    infos = ([] if layout.response is not None else [y_info]) + ([layout.rest] if layout.rest is not None else [])
    built = _build(infos, df, formula) if infos else []
    with np.errstate(all="ignore"):
        y = (np.array(df[layout.response], dtype=float)[:, None] if layout.response is not None
             else np.asarray(built.pop(0), dtype=float))
    if layout.rest is not None:
        part = np.asarray(built.pop(0), dtype=float)
        for model_term, columns in layout.rest.term_slices.items():
            X[:, X_info.term_slices[model_term]] = part[:, columns]
    return X, y


def _build(infos: list[Any], df: pd.DataFrame, formula: str) -> list[Any]:
    """patsy's matrices of the prepared rows; any failure becomes a typed error with a public message."""
    try:
        with np.errstate(all="ignore"):  # numpy's warnings would say which rows are out of a domain
            return patsy.build_design_matrices(infos, df, return_type="matrix", NA_action=_NO_NA_CHECK)
    except Exception as exc:  # noqa: BLE001 - every failure is reported from public facts only
        error = sanitised_error(exc, formula)
    raise error


def _fill_columns(X: np.ndarray, columns: list[tuple[int, np.ndarray | None]]) -> None:
    """``X[:, j] = values`` for every ``(j, values)`` (None: the intercept's ones), FILL_ROWS rows at a time, so
    that each slice of X is written while it is in cache (one strided pass over the whole of X per column is
    slower); the same values."""
    for start in range(0, X.shape[0], FILL_ROWS):
        part = X[start:start + FILL_ROWS]
        for j, values in columns:
            part[:, j] = 1.0 if values is None else values[start:start + FILL_ROWS]


def _bare_variable(model_term: Any, info: Any, variables: set[str]) -> str | None:
    """The variable name when ``model_term`` is a single numeric factor that is just a data column, else None."""
    if len(model_term.factors) != 1:
        return None
    factor = model_term.factors[0]
    finfo = info.factor_infos[factor]
    if finfo.type != "numerical" or finfo.num_columns != 1:
        return None
    code = factor.code.strip()
    if code in variables:
        return code
    quoted = quoted_names(code)
    if len(quoted) == 1 and quoted[0] in variables and code.replace(" ", "") in {f'Q("{quoted[0]}")',
                                                                                f"Q('{quoted[0]}')"}:
        return quoted[0]
    return None


def _check_levels(design_info: Any, df: pd.DataFrame, parsed: ParsedFormula, allow_data_levels: bool) -> list[str]:
    """Refuse categorical factors whose levels were read from the data (unless the leak is opted in).

    Levels are public when written in the formula, declared with ``levels=``
    or by the schema (Categorical or bool dtype), or when the factor is a
    comparison (levels False and True).
    """
    notes: list[str] = []
    undeclared: list[tuple[str, str]] = []  # (factor code, its variable) of each factor without public levels
    for factor, info in design_info.factor_infos.items():
        if info.type != "categorical" or declares_levels(factor.code):
            continue
        facts = parsed.facts.get(factor.code)
        if facts is not None and facts.boolean:
            continue
        fvars = [v for v in code_names(factor.code) if v in parsed.columns and v in df.columns]  # not a contrast
        if fvars and all(_is_schema_categorical(df[v]) for v in fvars):
            continue
        if allow_data_levels:
            notes.append(f"LEAK (opted in with allow_data_levels=True): the levels of '{factor.code}' were read "
                         "from the data, which reveals which values occur")
            continue
        undeclared.append((factor.code, fvars[0] if fvars else factor.code))
    if undeclared:
        raise UndeclaredLevelsError(_undeclared_levels_message(undeclared, df))
    return notes


def _undeclared_levels_message(undeclared: list[tuple[str, str]], df: pd.DataFrame) -> str:
    """The refusal of factors whose levels would be read from the data, naming every one of them at once (a formula
    with three text columns took three refusals, one at a time); decided from the formula and the schema."""
    codes = [code for code, _ in undeclared]
    names = list(dict.fromkeys(var for _, var in undeclared))
    which = codes[0] if len(codes) == 1 else "', '".join(codes[:-1]) + f"' and '{codes[-1]}"
    declared = ", ".join(f"{var!r}: [...]" for var in names)
    hinted = [(var, hint) for code, var in undeclared if var in df.columns
              and (hint := _dtype_hint(code, var, df[var].dtype))]
    hints = hinted[0][1] if hinted else ""
    if len(hinted) > 1:
        hints += f" The same holds for {', '.join(repr(var) for var, _ in hinted[1:])}."
    return (f"the levels of '{which}' would be read from the private data (which values occur is itself "
            f"private). Declare them: write C({term(names[0])}, levels=['level1', 'level2', ...]) in the "
            f"formula, pass levels={{{declared}}}, or give the column a pandas Categorical dtype with the public "
            "categories, listing every level the variable can take (a row with a value outside them becomes a "
            "public null row, as a row with a missing value does). allow_data_levels=True accepts the leak and "
            "names it in the report." + hints)


def _check_terms_have_columns(design_info: Any) -> None:
    """Refuse a formula term that adds no column to the design: a factor with a single declared level, whose only
    level is the reference (``levels={"sex": ["F"]}``), would otherwise leave the model without the term and
    without a word.  Decided from the declared levels and the formula (public); with data-read levels
    (``allow_data_levels=True``) the check is not made, as it would answer from the data."""
    empty = [term.name() for term, columns in design_info.term_slices.items() if columns.stop == columns.start]
    if empty:
        raise FormulaError(
            f"the term{'s' if len(empty) > 1 else ''} {', '.join(repr(t) for t in empty)} of the formula add"
            f"{'' if len(empty) > 1 else 's'} no column to the design: a factor with a single declared level has "
            "no contrast with its reference level (or the term repeats another). Declare every level the "
            "variable can take (at least two), or drop the term. Nothing was spent.")


def _dtype_hint(code: str, var: str, dtype: Any) -> str:
    """How to use column ``var`` as a number when the formula names it bare and patsy read it as a factor from its
    dtype: a date or duration column, or text or objects that may hold numbers; "" otherwise (``C(var)`` asks for
    a factor).
    Decided from the formula and the dtype (the schema) alone."""
    if advice := date_advice(var, dtype) or duration_advice(var, dtype):
        return advice
    if code.strip() in (var, f"Q({var!r})", f'Q("{var}")') and (pd.api.types.is_object_dtype(dtype)
                                               or pd.api.types.is_string_dtype(dtype)):
        return (f" If '{var}' holds numbers stored as text (dtype {dtype}), convert it before the fit to use it as a "
                f"number: df[{var!r}] = pd.to_numeric(df[{var!r}]).")
    return ""


def finite_arrays(X_dm: Any, y_dm: Any, nulls: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The design and response as float arrays, null rows marked NaN, and every other value that is not finite set
    to 0.

    A value that is not finite outside the null rows is an infinite value in the data or a transform undefined or
    overflowing on its row (``np.log(0)``, ``I(x * 1e300)``) of a variable without declared bounds (with bounds the
    variable is clipped first and the transform checked on the bounds).  Setting it to 0 is a public map of its row,
    so every guarantee holds for every finite data set.  Refusing instead would answer, at no cost, whether any row
    makes the transform non-finite, and the caller chooses the transform: ``I(x * 1e298)`` asks whether any x is
    above about 1.8e10 (:attr:`dpstats.formula.schema.ParsedFormula.non_finite_note` says so in the report).

    Parameters
    ----------
    X_dm, y_dm : array_like
        patsy's design and response matrices (the response one column).
    nulls : numpy.ndarray or None
        The mask of the public null rows.

    Returns
    -------
    tuple of numpy.ndarray
        ``(X, y)``, float.
    """
    X = float64_values(X_dm)  # patsy's own arrays: changed in place, as for the null rows
    y = float64_values(y_dm)
    if y.ndim != 2 or y.shape[1] != 1:
        raise DataTypeError("the response must be a single numeric column")
    y = y[:, 0]
    if not (_all_finite(X) and _all_finite(y)):
        X[~np.isfinite(X)] = 0.0
        y[~np.isfinite(y)] = 0.0
    if nulls is not None and nulls.any():
        X[nulls] = np.nan
        y[nulls] = np.nan
    return X, y


def _two_valued_response(parsed: ParsedFormula, supports: Mapping[str, tuple[float, ...]]) -> bool:
    """Whether the response is a function of a single two-valued variable: a boolean, or an integer variable
    clipped to consecutive integers (``supports``; public: the formula, the dtype and the declared bounds)."""
    variables = parsed.facts[parsed.response_code].variables
    return len(variables) == 1 and (variables[0] in parsed.plan.bool_responses or variables[0] in supports)


def _float_indicator_hint(parsed: ParsedFormula, bounds: Mapping[str, tuple[float, float]] | None) -> str:
    """A note where the response is a column declared between two consecutive integers that public facts do not
    make two-valued (e.g. a 0/1 indicator stored as floats): stored as bool or int it would be fitted as a
    two-valued response (public: the formula, the dtype and the declared bounds); "" otherwise."""
    variables = parsed.facts[parsed.response_code].variables
    if len(variables) != 1 or parsed.response_code.strip() != variables[0] or not bounds:
        return ""
    name = variables[0]
    declared = bounds.get(name)
    if declared is None or name in parsed.integer_supports or name in parsed.plan.bool_responses:
        return ""  # an integer or boolean column: two-valued already
    lo, hi = (float(v) for v in declared)
    if not (lo.is_integer() and hi == lo + 1.0):
        return ""
    return (f"the response '{name}' is declared in [{lo:g}, {hi:g}] and stored as floats: if it holds only those two "
            f"values (an indicator), store it as bool or int (df['{name}'] = df['{name}'].astype(int); for a CSV file "
            f"read by dp_ols, CSVSource(path, dtype={{'{name}': 'int64'}}) from dpstats.rows.sources; for the "
            "scikit-learn estimator's fit(X, y), y.astype(int)), so that the "
            "fit treats it as a two-valued response (the clip and interval rules of a linear probability model, "
            "docs/choosing.md 'A rare outcome'); a proportion or any other response with values in between needs no "
            "change, and this hint does not apply to it; decided from the dtype and the declared bounds")


def _all_finite(a: np.ndarray) -> bool:
    """Whether every value of ``a`` is finite: one summing pass, and an elementwise check only when the sum is not
    finite (a non-finite value, or finite values whose sum overflows)."""
    with np.errstate(over="ignore", invalid="ignore"):
        total = a.sum()
    return bool(np.isfinite(total)) or bool(np.isfinite(a).all())


def _assemble(parsed: ParsedFormula, X: np.ndarray, y: np.ndarray, design_info: Any, response_info: Any,
              bounds: Mapping[str, tuple[float, float]] | None, notes: list[str]) -> Design:
    """The :class:`Design`, with each column's range derived from the declared bounds; a boolean response
    variable, coded 0/1, is bounded by [0, 1] unless bounds were declared for it (public: its dtype)."""
    numeric = [v for v in parsed.plan.variables if is_numeric(parsed.schema[v])]
    declared = {**{v: (0.0, 1.0) for v in parsed.plan.bool_responses}, **(bounds or {})}
    ranges = derive_ranges(design_info, parsed.response_code, declared, columns=parsed.columns, numeric=numeric,
                           variables=code_names)
    supports = parsed.integer_supports
    hint = _float_indicator_hint(parsed, bounds)
    notes = [*notes, *([parsed.non_finite_note] if parsed.non_finite_note else []), *([hint] if hint else [])]
    return Design(X=X, y=y, column_names=list(design_info.column_names), response_name=parsed.response_code,
                  design_info=design_info, column_intervals=ranges.column_intervals,
                  response_interval=ranges.response_interval, missing_bounds=ranges.missing, notes=notes,
                  numeric_variables=numeric, response_info=response_info, bound_variables=ranges.bound_variables,
                  underivable_bounds=ranges.underivable, null_rows=parsed.plan.missing in {"null", "screen"},
                  screened=parsed.plan.screened, screened_levels=parsed.plan.off_levels,
                  two_valued_response=_two_valued_response(parsed, supports), variable_supports=supports,
                  formula_expanded=parsed.expanded,
                  rank_probe=RankProbe(parsed.plan, parsed.schema, dict(bounds or {}), dict(supports),
                                       parsed.integer_variables),
                  storage_hint=hint, factor_intervals=ranges.factor_intervals)


def public_prototype(schema: pd.DataFrame, bounds: Mapping[str, tuple[float, float]] | None,
                     codes: Sequence[str] = ()) -> pd.DataFrame:
    """A one-row frame of public values with the schema's (prepared) dtypes, on which patsy builds the design.

    Numeric variables take the midpoint of their declared range (1.0 when none
    is declared), categorical ones their first declared category (or the first
    literal level of a ``C(var, levels=[...])`` in ``codes``), booleans False,
    anything else an empty string (which the level check then refuses as
    undeclared).  No value comes from the data.

    Parameters
    ----------
    schema : pandas.DataFrame
        The prepared schema (zero rows).
    bounds : mapping of str to (float, float) or None
        The declared bounds.
    codes : sequence of str
        The formula's codes (for levels written in ``C(var, levels=[...])``).

    Returns
    -------
    pandas.DataFrame
        One row of public values.
    """
    first_levels = formula_first_levels(codes)
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
        elif is_numeric(col):
            iv = None
            if bounds and v in bounds:
                iv = declared_interval(v, bounds[v])
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
    """patsy's (y, X) of the public frame ``proto``, numpy's warnings off: on zero rows a contrast's arithmetic
    (``Poly``'s mean of its scores) warns "Mean of empty slice", which says nothing to a user."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return patsy.dmatrices(desc, proto, eval_env=FORMULA_ENV, return_type="matrix",
                               NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))


def _schema_dmatrices(parsed: ParsedFormula, bounds: Mapping[str, tuple[float, float]] | None,
                      formula: str) -> tuple[Any, Any, pd.DataFrame]:
    """patsy's (y, X) built on the zero-row schema when it can (most formulas), else on one row of public values
    (transforms that cannot evaluate an empty column), and the frame they were built on."""
    proto = parsed.schema
    failure: BaseException | None = None
    try:
        y_dm, X_dm = _prototype_dmatrices(parsed.desc, proto)
    except (patsy.PatsyError, ValueError, TypeError, IndexError):
        proto = public_prototype(parsed.schema, bounds, [parsed.response_code, *parsed.factor_codes])
        try:
            y_dm, X_dm = _prototype_dmatrices(parsed.desc, proto)
        except (patsy.PatsyError, ValueError, TypeError, IndexError) as exc:
            undeclared = _undeclared_by_code(parsed)
            failure = (UndeclaredLevelsError(_undeclared_levels_message(undeclared, parsed.schema)) if undeclared
                       else _duplicate_columns_error(formula) if "mismatch between column_names" in str(exc)
                       else _prototype_error(formula, exc))
    if failure is not None:
        raise failure
    return y_dm, X_dm, proto


def rebuild_design_infos(expanded: str, prototype: pd.DataFrame, column_names: Sequence[str],
                         shown: str | None = None) -> tuple[Any, Any]:
    """The DesignInfos of both sides, rebuilt from the expanded formula on the frame the design was built on.

    patsy's objects cannot be pickled, so a Dask worker (and a pickled
    result, :mod:`dpstats.formula.recipe`) rebuilds them from public facts:
    the formula as the driver parsed it (:attr:`Design.formula_expanded`)
    and the zero-row schema or one-row public prototype of
    :func:`public_design`, in dpstats's own formula namespace.

    Parameters
    ----------
    expanded : str
        The formula with '.' expanded and long sums nested.
    prototype : pandas.DataFrame
        The public frame the design is built on.
    column_names : sequence of str
        The design columns the rebuild must reproduce.
    shown : str or None
        The formula as the user wrote it, for messages.

    Returns
    -------
    tuple
        (the response's DesignInfo, the right-hand side's DesignInfo).

    Raises
    ------
    FormulaError
        The formula cannot be evaluated on the prototype, or the rebuilt columns differ from ``column_names``.
    """
    y_dm, X_dm = _prototype_dmatrices(model_desc(expanded, shown=shown), prototype)
    if list(X_dm.design_info.column_names) != list(column_names):  # pragma: no cover - a patsy change
        raise FormulaError("internal error: the design rebuilt on a worker differs from the driver's")
    return y_dm.design_info, X_dm.design_info


def public_design(
    formula: str,
    schema: pd.DataFrame,
    *,
    eval_env: Any = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
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
    was built on (which workers use to rebuild it).  ``eval_env`` is
    ignored, as in :func:`build_design`.

    Factor levels cannot be read from the data here (no chunk may change the
    design): with ``allow_data_levels=True`` an undeclared factor is still
    refused, with an explanation.

    Parameters
    ----------
    formula : str
        The formula.
    schema : pandas.DataFrame
        The data's column names and dtypes.
    eval_env : object
        Ignored, as in :func:`build_design`.
    bounds : mapping of str to (float, float) or None
        Declared ranges of variables, design columns or the response code.
    levels : mapping of str to sequence or None
        Declared levels of factors.
    missing : str
        ``"raise"``, ``"null"``, ``"screen"`` or ``"drop"``, as in :func:`build_design`.
    allow_data_levels : bool
        Only changes the explanation when a factor's levels are not declared (they cannot be read from chunks).

    Returns
    -------
    tuple of (Design, FramePlan, pandas.DataFrame)
        The design (no rows), the plan that prepares every chunk and the frame the design was built on.

    Raises
    ------
    DPStatsError
        The typed refusals of :func:`build_design` that are decided without data; an undeclared factor is an
        :class:`~dpstats.errors.UndeclaredLevelsError` even with ``allow_data_levels=True``.
    """
    parsed = parse_formula(formula, schema.iloc[:0], bounds=bounds, levels=levels, missing=missing)
    try:
        y_dm, X_dm, proto = _schema_dmatrices(parsed, bounds, formula)
        notes = _check_levels(X_dm.design_info, parsed.schema, parsed, allow_data_levels=False)
        _check_terms_have_columns(X_dm.design_info)
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


def sanitised_error(exc: BaseException, formula: str) -> DPStatsError:
    """A typed error for a failure of patsy (or numpy, pandas) while evaluating the design on data.

    The original message is never passed on (patsy quotes the offending
    value, e.g. "observation with value 'P-1234' does not match..."): the
    message is built from the formula, the factor's code (where patsy says
    which factor failed) and the exception's type.

    Parameters
    ----------
    exc : BaseException
        The failure.
    formula : str
        The formula as the user wrote it.

    Returns
    -------
    DPStatsError
        ``exc`` itself (its chain cut) if it is typed already, else a :class:`~dpstats.errors.FormulaError`.
    """
    if isinstance(exc, DPStatsError):
        exc.__cause__ = exc.__context__ = None
        return exc
    msg = str(exc)
    code = origin_code(exc)
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
