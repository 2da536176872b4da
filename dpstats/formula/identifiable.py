"""Designs that are singular by construction, found from public facts alone.

A formula such as ``y ~ x + I(2 * x)`` gives two columns that are
proportional for every data set: their coefficients cannot be told apart, and
a private method would return an arbitrary split of the effect between them
(each carrying noise).  Whether this happens is a property of the formula and
the declared domain, not of the data, so it is decided without reading a row:
the design is evaluated on *probe rows*, a fixed set of values drawn from the
public domain of every variable the formula uses, and its rank is computed
there.

The columns built from analytic functions of the variables enter the check:
the intercept, factor dummies (exact indicators of declared levels),
arithmetic, powers and the elementwise functions such as ``np.log`` and
``np.exp``.  So do the regression splines ``bs``, ``cr`` and ``cc`` of a bare
variable with declared bounds: their knots and boundaries are literals of the
formula and their argument is clipped to the variable's bounds, so they are
polynomials between public breakpoints.  The probe gives every such piece the
same share of its rows (each variable's probe values are mapped piecewise
linearly so that every interval between consecutive breakpoints inside its
bounds, however narrow, receives as many rows as the widest), so knots close
together or near a bound are seen on each of their pieces.  Columns built
with a comparison (``I(x >= 12)``), an absolute value, a spline of an
expression or of a variable without bounds, or a factor of an expression
(``C(-k, levels=[0, 1, 2])``, indicators of values the probe rows need not
take) are piecewise at points the probe does not know (a threshold at a bound
or at an integer), so they are left out, except a comparison or an absolute
value whose every variable has a finite public domain (an integer grid, a
factor's levels, a boolean; below) of at most ``GRID_PIECEWISE_CELLS`` joint
values: it is a function of those values, and the probe rows take every one
of them (checked on the rows; a term whose values they miss is left out), so
``np.abs(yr)`` and ``I(yr ** 2)`` of a year in {-1, 0, 1} are seen to be one
column.  Leaving columns out can hide a dependency but never invent one: if a
subset of the columns is dependent, so is the design.

The domain of a variable is what the caller declared: a numeric variable's
bounds, a factor's declared levels, a boolean's two values, and an integer
variable's integer grid when its declared bounds are integers at most
``INTEGER_GRID_VALUES`` values apart (the fit clips it to them, and an integer
clipped to integer bounds is one of the integers between them: ``g`` and
``I(g ** 2)`` of a 0/1 integer column are the same column for every data set,
and a year declared in (1990, 1992) takes three values, so ``yr``,
``I(yr ** 2)`` and ``I(yr ** 3)`` beside the intercept are four columns of
rank three; the public null row of ``missing="null"`` holds the midpoint
rounded down, a point of the grid).  A numeric variable without bounds is probed on
``[-3, 3]``, both signs, so that piecewise transforms (``np.abs``,
``np.maximum``) are seen on both of their pieces; probe rows on which a
transform is undefined (``np.log`` of a negative value) are dropped.  The
columns of a design built from analytic transforms are linearly dependent on
the whole domain exactly when they are on almost every set of more rows than
columns drawn from it, so a rank deficiency on the probe rows is a dependency
by construction (a false refusal would need a transform that changes form
outside the probed range of an unbounded variable, which the caller avoids by
declaring its bounds).

The probe rows are not random: variable k takes the fractional parts of
``i * frac(sqrt(p_k))`` for rows i = 1, 2, ... (a Weyl sequence, with p_k
the k-th prime), mapped onto its domain (piecewise, for a spline variable).
These are equidistributed, and the sequences of different variables are not
affine functions of one another, so no dependency is invented between
variables.  The probe is a deterministic function of the formula, the schema
and the declarations, never of the data, so the refusal it leads to spends
nothing.
"""

from __future__ import annotations

import ast
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy

from dpstats.blas import single_threaded_blas
from dpstats.bounds import call_name, declared_interval
from dpstats.formula.frame import FramePlan, is_numeric_dtype
from dpstats.formula.parse import factor_calls
from dpstats.formula.schema import dtype_key

__all__ = ["RankProbe", "UNBOUNDED_PROBE_RANGE", "CONSTANT_WEIGHT_TOL", "PIECEWISE_CALLS", "SPLINE_CALLS",
           "ROWS_PER_PIECE", "PROBE_MEMO_BYTES", "INTEGER_GRID_VALUES", "GRID_PIECEWISE_CELLS", "analytic_columns",
           "few_values_reason"]

#: The range on which a numeric variable without declared bounds is probed (both signs).
UNBOUNDED_PROBE_RANGE = (-3.0, 3.0)
#: Probe rows added for each piece of a spline variable's domain (between consecutive breakpoints).
ROWS_PER_PIECE = 24
#: The most values an integer variable's declared bounds may hold for the probe to draw it on its integer grid (an
#: integer dtype declared between integers lo and hi, hi - lo < INTEGER_GRID_VALUES); wider ones are probed as reals.
INTEGER_GRID_VALUES = 32
#: The most joint values of the variables of a comparison or absolute value for its term to enter the rank check
#: when they all have a finite public domain (:meth:`RankProbe._grid_piecewise_terms`; the probe takes every one).
GRID_PIECEWISE_CELLS = 256
#: The most bytes of probe matrices kept across fits (:class:`_ProbeMemo`; a 1,620 x 400 probe is 5 MB).
PROBE_MEMO_BYTES = 64 * 2**20
#: The largest residual of X w = 1 on the probe rows for which the constant is in the design's span, and the
#: relative size below which a weight is 0 (rounding: a factor's dummies and a spline basis sum to 1 exactly).
CONSTANT_WEIGHT_TOL = 1e-9


@dataclass(frozen=True)
class RankProbe:
    """What the rank check needs: the frame plan, the prepared zero-row schema and the declared bounds.

    Attributes
    ----------
    plan : FramePlan
        The variables the formula uses and their declared levels.
    schema : pandas.DataFrame
        The prepared schema (zero rows): dtypes and the categories of declared factors.
    bounds : mapping of str to (float, float)
        The declared bounds (only entries naming a raw variable are used).
    supports : mapping of str to tuple of float
        The numeric variables whose values public facts fix (an integer dtype declared between consecutive
        integers: :func:`dpstats.formula.schema.integer_supports`), probed on those values.  The probe also draws
        every other integer variable with integer bounds at most ``INTEGER_GRID_VALUES`` values wide on its
        integer grid (:meth:`integer_grid`).
    integers : frozenset of str
        The variables of an integer dtype in the data's schema (the prepared ``schema`` holds a variable clipped
        to its bounds as float).
    """

    plan: FramePlan
    schema: pd.DataFrame
    bounds: Mapping[str, tuple[float, float]]
    supports: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    integers: frozenset[str] = frozenset()
    _dtypes: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _grids: dict[str, tuple[float, ...] | None] = field(default_factory=dict, init=False, repr=False, compare=False)
    _key: list[tuple[object, ...] | None] = field(default_factory=list, init=False, repr=False, compare=False)

    def _dtype(self, var: str) -> Any:
        """The schema's dtype of ``var``, read once for all its columns (a column of the schema is a pandas Series
        made on each read)."""
        if not self._dtypes:
            self._dtypes.update(self.schema.dtypes.items())
        return self._dtypes[var]

    def integer_grid(self, var: str) -> tuple[float, ...] | None:
        """The values a numeric variable takes on every data set the declarations allow, when public facts make
        them few: its two-valued support, or the integers lo, lo + 1, ..., hi of an integer dtype declared between
        integers lo and hi with at most ``INTEGER_GRID_VALUES`` of them (the fit clips the variable to its bounds,
        and an integer clipped to integer bounds is one of those integers); None otherwise.

        Parameters
        ----------
        var : str
            A variable of the formula.

        Returns
        -------
        tuple of float or None
            The values in increasing order, or None when the variable is probed on its declared range (or is no
            bounded integer variable).
        """
        if var not in self._grids:
            self._grids[var] = self._integer_grid(var)
        return self._grids[var]

    def _integer_grid(self, var: str) -> tuple[float, ...] | None:
        """:meth:`integer_grid`, computed."""
        if var in self.supports:
            return tuple(float(v) for v in self.supports[var])
        if var not in self.plan.variables or var not in self.bounds or var in dict(self.plan.allowed) \
                or var in dict(self.plan.levels):
            return None
        if var not in self.integers or not is_numeric_dtype(self._dtype(var)):
            return None
        iv = declared_interval(var, self.bounds[var])
        lo, hi = float(iv.lo), float(iv.hi)
        if not (lo.is_integer() and hi.is_integer()) or hi - lo >= INTEGER_GRID_VALUES:
            return None
        return tuple(float(v) for v in np.arange(lo, hi + 1.0))

    def few_valued(self, design_info: Any, columns: Sequence[str]) -> dict[str, tuple[float, ...]]:
        """The variables drawn on their integer grid (:meth:`integer_grid`) that the terms of ``columns`` use, with
        their values: a refusal's reason (public: the dtype and the declared bounds).

        Parameters
        ----------
        design_info : patsy.DesignInfo
            The right-hand side's design.
        columns : sequence of str
            Design column names (those :meth:`dependent_columns` returned).

        Returns
        -------
        dict of str to tuple of float
            Variable name to its values, in the order the variables appear in the formula's variables.
        """
        wanted = set(columns)
        used: set[str] = set()
        for term, cols in design_info.term_slices.items():
            if wanted.isdisjoint(design_info.column_names[cols]):
                continue
            for factor in term.factors:
                used |= _names(getattr(factor, "code", "")) or set()
        found: dict[str, tuple[float, ...]] = {}
        for var in self.plan.variables:
            grid = self.integer_grid(var) if var in used else None
            if grid is not None:
                found[var] = grid
        return found

    def dependent_columns(self, design_info: Any) -> list[str]:
        """The design columns that take part in a linear dependency on the public domain (empty: none found).

        Parameters
        ----------
        design_info : patsy.DesignInfo
            The right-hand side's design.

        Returns
        -------
        list of str
            The names of the columns with weight in a null vector of the design on the probe rows, in design
            order; empty when the design has full column rank there, or when some variable's domain is not
            public (text without declared levels), so that no verdict can be reached without the data.
        """
        probed = self._probe(design_info)
        if probed is None:
            return []
        _, checked, involved = probed
        names = [name for name, keep in zip(design_info.column_names, checked, strict=True) if keep]
        return [name for name, flag in zip(names, involved, strict=True) if flag]

    def constant_weights(self, design_info: Any) -> np.ndarray | None:
        """Public weights w with X w = 1 for every data set the declarations allow, when the constant lies in the
        span of the design's columns (a factor's full set of dummies in a model without an intercept, the basis of
        ``cr`` or ``cc``); None when it does not, or when the probe cannot tell.

        Parameters
        ----------
        design_info : patsy.DesignInfo
            The right-hand side's design.

        Returns
        -------
        numpy.ndarray or None
            (d,) the weights (0 on the columns the probe leaves out), the least-squares solution on the probe
            rows with coefficients below ``CONSTANT_WEIGHT_TOL`` set to 0.
        """
        weights = self._remember(design_info, "weights", lambda: self._constant_weights(design_info))
        return None if weights is None else weights.copy()

    def _constant_weights(self, design_info: Any) -> np.ndarray | None:
        """:meth:`constant_weights`, computed (once per design: :meth:`_remember`)."""
        probed = self._probe(design_info)
        if probed is None:
            return None
        X, checked, involved = probed
        if involved.any():
            return None  # a dependent design is refused on its own; its weights would not be unique
        ones = np.ones(X.shape[0])
        with single_threaded_blas():  # threaded LAPACK took 2 s for a 1,620 x 400 probe on two busy cores
            w, *_ = np.linalg.lstsq(X, ones, rcond=None)
        w = np.where(np.abs(w) > CONSTANT_WEIGHT_TOL * np.abs(w).max(initial=0.0), w, 0.0)
        if not w.any() or np.abs(X @ w - ones).max() > CONSTANT_WEIGHT_TOL:
            return None
        weights = np.zeros(checked.size)
        weights[checked] = w
        return weights

    def _remember(self, design_info: Any, kind: str, compute: Any) -> Any:
        """``compute()``, once per design, kind and public facts the probe reads (:meth:`_public_key`), across fits:
        the probe is a function of the formula and the declarations, which a fit and a plan query several times
        (the centring, the scaling, the method's checks) and a refit of the same formula on the same schema and
        declarations queries again (patsy's designs are then the kept ones, :mod:`dpstats.formula.design`)."""
        if not self._key:
            self._key.append(self._public_key())
        facts = self._key[0]
        if facts is None:
            return compute()
        return _PROBES.get(design_info, (kind, facts), compute)

    def _public_key(self) -> tuple[object, ...] | None:
        """Everything the probe reads besides the design, as a key: the variables, their declared levels, their
        schema dtypes (a Categorical's categories in order), their declared bounds (exact float reprs), their
        public supports, the integer variables and the integer grids the probe draws them on
        (:meth:`integer_grid`); these also decide which comparisons and absolute values enter the check
        (:meth:`discrete_values`: a categorical dtype's categories, declared levels, a boolean dtype, a grid).  None
        where a part cannot be made a key (the probe is then computed every time)."""
        try:
            bounds = []
            for var in self.plan.variables:
                if var in self.bounds:
                    iv = declared_interval(var, self.bounds[var])
                    bounds.append((var, repr(float(iv.lo)), repr(float(iv.hi))))
            key = (self.plan.variables, self.plan.allowed,
                   tuple((var, dtype_key(self._dtype(var))) for var in self.plan.variables),
                   tuple(bounds),
                   tuple(sorted((var, tuple(repr(float(v)) for v in values))
                                for var, values in self.supports.items())),
                   tuple(sorted(self.integers)),
                   tuple((var, grid) for var in self.plan.variables if (grid := self.integer_grid(var)) is not None))
            hash(key)
        except Exception:  # noqa: BLE001 - no key: the probe is computed as before
            return None
        return key

    def _probe(self, design_info: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(the probe matrix, the mask of the design columns it holds, which of its columns take part in a null
        vector), or None where no verdict can be reached without the data (:meth:`_probe_matrix`); computed once
        per design."""
        def compute() -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
            probed = self._probe_matrix(design_info)
            if probed is None:
                return None
            X, checked = probed
            involved = np.zeros(X.shape[1], dtype=bool)
            involved[[int(j) for j in _dependent(X, [str(j) for j in range(X.shape[1])])]] = True
            for array in (X, checked, involved):  # kept across fits (:class:`_ProbeMemo`): read only
                array.flags.writeable = False
            return X, checked, involved
        return self._remember(design_info, "probe", compute)

    def _probe_matrix(self, design_info: Any) -> tuple[np.ndarray, np.ndarray] | None:
        """(the analytic columns of the design on the probe rows, the mask of those columns), or None where no
        verdict can be reached without the data (no analytic column, a domain that is not public, a design that
        patsy cannot build on the probe, too few finite probe rows).

        The columns of :meth:`separable_columns` are left out of the matrix: a bare numeric variable that no
        other term uses varies on its own, so no null vector and no weights of the constant involve it, and
        leaving it out changes neither (a subset of independent columns).  The probe rows stay those of all the
        analytic columns, so the other columns' values and the verdict's row count are as with them."""
        breaks = self._spline_breaks(design_info)
        analytic = analytic_columns(design_info, frozenset(breaks))
        cells = self._grid_piecewise_terms(design_info, analytic)
        for term in cells:
            analytic[design_info.term_slices[term]] = True
        if not analytic.any():
            return None
        checked = analytic & ~self.separable_columns(design_info)
        if not checked.any():
            return None  # every analytic column varies on its own: no dependency, no weights of the constant
        rows = 4 * int(analytic.sum()) + 20 + ROWS_PER_PIECE * sum(len(b) - 1 for b in breaks.values())
        rows = max([rows] + [4 * count for _, count in cells.values()])
        frame = self._probe_frame(rows, breaks)
        if frame is None:
            return None
        for term, (variables, count) in cells.items():
            if variables and len(frame[list(variables)].drop_duplicates()) < count:  # a value the rows miss: out
                analytic[design_info.term_slices[term]] = False
                checked[design_info.term_slices[term]] = False
        if not checked.any():
            return None
        terms = [term for term, cols in design_info.term_slices.items() if checked[cols].any()]
        built = design_info if checked.all() else design_info.subset(terms)
        within = np.concatenate([checked[design_info.term_slices[term]] for term in terms]) if terms else checked
        with np.errstate(all="ignore"):
            try:
                (X,) = patsy.build_design_matrices([built], frame, return_type="matrix",
                                                   NA_action=patsy.NAAction(on_NA="raise", NA_types=[]))
            except (patsy.PatsyError, ValueError, TypeError, IndexError):
                return None
        X = np.asarray(X, dtype=float)[:, within if built is not design_info else checked]
        X = X[np.all(np.isfinite(X), axis=1)]
        if X.shape[0] < 2 * int(analytic.sum()):
            return None
        return X, checked

    def _grid_piecewise_terms(self, design_info: Any, analytic: np.ndarray) -> dict[Any, tuple[tuple[str, ...], int]]:
        """The terms left out of :func:`analytic_columns` whose piecewise factors are comparisons and absolute values
        (no spline, no ``C()`` of an expression) of variables the probe draws from a finite public domain (a
        factor's categories or declared levels, a boolean, an integer grid: :meth:`discrete_values`), with the
        variables of the term so drawn and the number of their joint values (at most ``GRID_PIECEWISE_CELLS``).
        On such a domain a piecewise function is a function of finitely many values, all of which the probe rows
        take (:meth:`_probe_matrix` checks that they do and leaves the term out where they do not)."""
        found: dict[Any, tuple[tuple[str, ...], int]] = {}
        variables = set(self.plan.variables)
        for term, cols in design_info.term_slices.items():
            if analytic[cols].all():
                continue
            read: set[str] = set()
            ok = True
            for factor in term.factors:
                code = getattr(factor, "code", "")
                names = _names(code)
                if names is None:
                    ok = False
                    break
                used = names & variables
                if _piecewise(code) and (not _grid_piecewise(code)
                                         or any(self.discrete_values(v) is None for v in used)):
                    ok = False
                    break
                read |= {v for v in used if self.discrete_values(v) is not None}
            if not ok:
                continue
            ordered = tuple(v for v in self.plan.variables if v in read)
            count = int(np.prod([self.discrete_values(v) or 1 for v in ordered], dtype=float))
            if count <= GRID_PIECEWISE_CELLS:
                found[term] = (ordered, count)
        return found

    def discrete_values(self, var: str) -> int | None:
        """How many values the probe draws a variable from when its public domain is finite (the branches of
        :meth:`_probe_frame`: a factor's categories, declared levels, a boolean's two values, an integer grid).

        Parameters
        ----------
        var : str
            A variable of the formula.

        Returns
        -------
        int or None
            The number of values, or None for a variable drawn from an interval (or no variable of the formula).
        """
        if var not in self.plan.variables:
            return None
        dtype = self._dtype(var)
        allowed = dict(self.plan.allowed)
        if isinstance(dtype, pd.CategoricalDtype):
            return len(dtype.categories) or None
        if var in allowed:
            return len(allowed[var]) or None
        if pd.api.types.is_bool_dtype(dtype):
            return 2
        grid = self.integer_grid(var)
        return None if grid is None else len(grid)

    def separable_columns(self, design_info: Any) -> np.ndarray:
        """A mask of the design columns that no linear dependency can involve, read from the formula and the
        declarations alone: a term that is a bare numeric variable, which no other term uses, whose public domain
        holds more than one value (declared bounds lo < hi, a two-valued support, or no bounds).  Such a column
        varies with its variable while every other column is a function of the other variables, so a combination
        of the columns that vanishes on the whole domain gives it weight 0; so does any combination equal to the
        constant.  A wide design of many such columns then needs no probe of them at all.

        Parameters
        ----------
        design_info : patsy.DesignInfo
            The right-hand side's design.

        Returns
        -------
        numpy.ndarray
            Boolean, one entry per design column.
        """
        mask = np.zeros(len(design_info.column_names), dtype=bool)
        uses: dict[str, int] = {}
        for term in design_info.terms:
            named: set[str] = set()
            for factor in term.factors:
                names = _names(getattr(factor, "code", ""))
                if names is None:
                    return mask  # code that does not parse: nothing is known to be separable
                named |= names
            for name in named:
                uses[name] = uses.get(name, 0) + 1
        for term, cols in design_info.term_slices.items():
            if len(term.factors) != 1:
                continue
            factor = term.factors[0]
            var = _bare_name(getattr(factor, "code", ""))
            if var is not None and uses.get(var) == 1 and design_info.factor_infos[factor].type == "numerical" \
                    and self._varies(var):
                mask[cols] = True
        return mask

    def _varies(self, var: str) -> bool:
        """Whether the probe gives a numeric variable more than one value (the branches of :meth:`_probe_frame`
        for a number without declared levels)."""
        if var not in self.plan.variables or var in dict(self.plan.allowed):
            return False
        dtype = self._dtype(var)
        if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype) or not is_numeric_dtype(dtype):
            return False
        grid = self.integer_grid(var)
        if grid is not None:
            return len(set(grid)) > 1
        if var in self.bounds:
            iv = declared_interval(var, self.bounds[var])
            return bool(iv.lo < iv.hi)
        return True

    def _spline_breaks(self, design_info: Any) -> dict[str, np.ndarray]:
        """The breakpoints of each variable that is the bare argument of a spline and has declared bounds: its
        bounds and the spline's literal knots and boundaries inside them, sorted."""
        found: dict[str, set[float]] = {}
        unknown: set[str] = set()  # a spline whose breakpoints cannot be read leaves its variable's splines out
        for term in design_info.terms:
            for factor in term.factors:
                for var, points in _spline_points(getattr(factor, "code", "")):
                    if points is None or var not in self.bounds or var not in self.plan.variables \
                            or not is_numeric_dtype(self._dtype(var)):
                        unknown.add(var)
                        continue
                    iv = declared_interval(var, self.bounds[var])
                    found.setdefault(var, {iv.lo, iv.hi}).update(p for p in points if iv.lo < p < iv.hi)
        return {var: np.array(sorted(points)) for var, points in found.items() if var not in unknown}

    def _probe_frame(self, rows: int, breaks: Mapping[str, np.ndarray]) -> pd.DataFrame | None:
        """``rows`` probe rows drawn from each variable's public domain, or None when a domain is not public; a
        variable with spline ``breaks`` gets the same number of rows between each pair of consecutive ones."""
        allowed = dict(self.plan.allowed)
        columns: dict[str, Any] = {}
        for var, u in zip(self.plan.variables, _weyl(rows, len(self.plan.variables)), strict=True):
            dtype = self._dtype(var)
            if isinstance(dtype, pd.CategoricalDtype):
                cats = list(dtype.categories)
                if not cats:
                    return None
                columns[var] = pd.Categorical.from_codes(_indices(u, len(cats)), categories=cats)
            elif var in allowed:  # (numeric levels stay numeric: the variable may also enter as a number)
                levels = np.array(list(allowed[var]), dtype=None if is_numeric_dtype(dtype) else object)
                columns[var] = levels[_indices(u, levels.size)]
            elif pd.api.types.is_bool_dtype(dtype):
                columns[var] = u >= 0.5
            elif (grid := self.integer_grid(var)) is not None:  # every row of every allowed data set takes one
                values = np.array(grid, dtype=float)
                columns[var] = values[_indices(u, values.size)]
            elif var in breaks:
                columns[var] = _piecewise_uniform(u, breaks[var])
            elif is_numeric_dtype(dtype):
                columns[var] = self._numeric(var, u)
            else:
                return None
        return pd.DataFrame(columns, columns=list(self.plan.variables))

    def _numeric(self, var: str, u: np.ndarray) -> np.ndarray:
        """Probe values of a numeric variable on its declared range (or ``UNBOUNDED_PROBE_RANGE``) from ``u``."""
        lo, hi = UNBOUNDED_PROBE_RANGE
        if var in self.bounds:
            iv = declared_interval(var, self.bounds[var])
            lo, hi = iv.lo, iv.hi
        # (float for an integer column too when its bounds are not integers or hold more than INTEGER_GRID_VALUES
        # integers (``integer_grid`` draws the others on their grid); the weighted form does not overflow for the
        # widest finite bounds)
        return lo * (1.0 - u) + hi * u


class _ProbeMemo:
    """The probe's results (:meth:`RankProbe._probe`, the weights of the constant) per design and public facts, the
    last ``size`` designs kept and at most ``max_bytes`` of probe matrices (the newest always).  A design is held by
    identity (its object is kept with the results, so its id is not reused while held): patsy's designs of a refit
    are the same object only where they are a function of public facts (:mod:`dpstats.formula.design` keeps
    them), and any other design is a new object whose probe is computed afresh."""

    def __init__(self, size: int, max_bytes: int = PROBE_MEMO_BYTES) -> None:
        self._size = size
        self._max_bytes = max_bytes
        self._held: OrderedDict[tuple[int, object], tuple[Any, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, design_info: Any, key: tuple[str, tuple[object, ...]], compute: Any) -> Any:
        """The result of ``key[0]`` for ``design_info`` and the public facts ``key[1]``, computed by ``compute()``
        where not held."""
        kind, facts = key
        slot = (id(design_info), facts)
        with self._lock:
            held = self._held.get(slot)
            if held is not None and held[0] is design_info and kind in held[1]:
                self._held.move_to_end(slot)
                return held[1][kind]
        value = compute()
        with self._lock:
            held = self._held.get(slot)
            if held is None or held[0] is not design_info:
                held = (design_info, {})
            held[1][kind] = value
            self._held[slot] = held
            self._held.move_to_end(slot)
            while len(self._held) > 1 and (len(self._held) > self._size or self._bytes() > self._max_bytes):
                self._held.popitem(last=False)
        return value

    def _bytes(self) -> int:
        return sum(_nbytes(value) for _, results in self._held.values() for value in results.values())


def _nbytes(value: Any) -> int:
    """The bytes of the arrays in a probe result (an array, a tuple of arrays or None)."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return 0


#: the probes of the last designs (:class:`_ProbeMemo`)
_PROBES = _ProbeMemo(64)


#: Calls whose value is piecewise in their argument (their columns are left out of the check, except a spline of a
#: bare variable with declared bounds).
PIECEWISE_CALLS = frozenset({"abs", "absolute", "fabs", "bs", "cr", "cc"})
#: The regression splines, whose knots and boundaries are literals of the formula.
SPLINE_CALLS = frozenset({"bs", "cr", "cc"})


def few_values_reason(grids: Mapping[str, Sequence[float]]) -> str:
    """Why variables drawn on their integer grid make columns dependent, for a refusal's message (public facts only:
    the dtype and the declared bounds, :meth:`RankProbe.few_valued`); "" for none.

    Parameters
    ----------
    grids : mapping of str to sequence of float
        Variable name to the values it takes.

    Returns
    -------
    str
        A sentence, or "".
    """
    parts = [f"{var!r} takes only {len(values)} values by its integer dtype and declared bounds "
             f"[{int(min(values))}, {int(max(values))}], so at most {len(values)} columns that are functions of it "
             "alone (the intercept included) can be independent" for var, values in grids.items()]
    return "; ".join(parts)


def analytic_columns(design_info: Any, spline_variables: frozenset[str] = frozenset()) -> np.ndarray:
    """A mask of the design columns whose term is built from analytic functions only (no comparison, absolute
    value, ``C()`` of an expression or spline in any of its factors' code, except splines of the bare
    ``spline_variables``).

    Parameters
    ----------
    design_info : patsy.DesignInfo
        The right-hand side's design.
    spline_variables : frozenset of str
        The variables whose splines the probe sees on every piece (bare arguments with declared bounds).

    Returns
    -------
    numpy.ndarray
        Boolean, one entry per design column.
    """
    mask = np.ones(len(design_info.column_names), dtype=bool)
    for term, columns in design_info.term_slices.items():
        if any(_piecewise(getattr(factor, "code", ""), spline_variables) for factor in term.factors):
            mask[columns] = False
    return mask


def _piecewise(code: str, spline_variables: frozenset[str] = frozenset()) -> bool:
    """Whether factor code uses a comparison, ``C()`` of an expression, or a piecewise call other than a spline of one
    of the bare ``spline_variables`` (unparsable code counts as piecewise)."""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name == "C" and node.args and _column_argument(node.args[0]) is None:
                return True  # indicators of the values of an expression, which the probe's values need not take
            if name in SPLINE_CALLS and _bare_argument(node) in spline_variables:
                continue
            if name in PIECEWISE_CALLS:
                return True
    return False


def _grid_piecewise(code: str) -> bool:
    """Whether factor code's piecewise parts are comparisons and absolute values only (no spline, whose knots may be
    read from the data, and no ``C()`` of an expression, whose levels the probe rows need not take)."""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = call_name(node)
            if name == "C" and node.args and _column_argument(node.args[0]) is None:
                return False
            if name in SPLINE_CALLS:
                return False
    return True


def _names(code: str) -> set[str] | None:
    """Every name and string literal in factor code (``Q('x')`` names x), or None when it does not parse."""
    try:
        tree = ast.parse(code, mode="eval")
    except SyntaxError:
        return None
    return {node.id if isinstance(node, ast.Name) else str(node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Name) or (isinstance(node, ast.Constant) and isinstance(node.value, str))}


def _bare_name(code: str) -> str | None:
    """The variable factor code names when it is a bare name (``x``), else None."""
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return None
    return tree.body.id if isinstance(tree.body, ast.Name) else None


def _column_argument(node: ast.AST) -> str | None:
    """The column a ``C()`` argument names (bare or ``Q('name')``), else None (an expression)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and call_name(node) == "Q" and node.args and isinstance(node.args[0], ast.Constant):
        return str(node.args[0].value)
    return None


def _bare_argument(node: ast.Call) -> str | None:
    """The name of a call's only positional argument when it is a bare variable, else None."""
    return node.args[0].id if len(node.args) == 1 and isinstance(node.args[0], ast.Name) else None


def _spline_points(code: str) -> list[tuple[str, list[float] | None]]:
    """(variable, literal knots and boundaries) of each spline of a bare variable in factor code; None for a
    spline whose knots or boundaries are not finite literals."""
    return [(var, _literal_points(node)) for node in factor_calls(code)
            if call_name(node) in SPLINE_CALLS and (var := _bare_argument(node))]


def _literal_points(node: ast.Call) -> list[float] | None:
    """A spline call's knots, lower_bound and upper_bound as floats, or None unless all are finite literals."""
    points: list[float] = []
    for kw in node.keywords:
        if kw.arg in {"knots", "lower_bound", "upper_bound"}:
            try:
                value = ast.literal_eval(kw.value)
                points += [float(v) for v in (value if isinstance(value, (list, tuple)) else [value])]
            except (ValueError, TypeError, SyntaxError):
                return None
    given = {kw.arg for kw in node.keywords}
    complete = {"knots", "lower_bound", "upper_bound"} <= given
    return points if complete and all(np.isfinite(points)) else None


def _piecewise_uniform(u: np.ndarray, breaks: np.ndarray) -> np.ndarray:
    """Values in [breaks[0], breaks[-1]] from ``u`` in [0, 1): an equal share of ``u`` maps linearly onto each
    interval between consecutive breakpoints."""
    pieces = breaks.size - 1
    scaled = u * pieces
    index = np.minimum(scaled.astype(int), pieces - 1)
    t = scaled - index
    return breaks[index] * (1.0 - t) + breaks[index + 1] * t


def _weyl(rows: int, k: int) -> np.ndarray:
    """A k x rows array: row j is frac(i * frac(sqrt(p_j))) for i = 1..rows, p_j the j-th prime."""
    alphas = np.sqrt(np.array(_primes(k), dtype=float)) % 1.0
    return np.outer(alphas, np.arange(1, rows + 1, dtype=float)) % 1.0


def _primes(k: int) -> list[int]:
    """The first k primes."""
    found: list[int] = []
    candidate = 2
    while len(found) < k:
        if all(candidate % p for p in found if p * p <= candidate):
            found.append(candidate)
        candidate += 1
    return found


def _indices(u: np.ndarray, levels: int) -> np.ndarray:
    """Level indices 0..levels-1 from values in [0, 1)."""
    return np.minimum((u * levels).astype(int), levels - 1)


def _dependent(X: np.ndarray, names: Sequence[str]) -> list[str]:
    """The columns of ``X`` with weight in a null vector (column scale removed; numpy's default rank tolerance)."""
    X = X / np.maximum(np.abs(X).max(axis=0), np.finfo(float).tiny)  # (norms of huge values would overflow)
    norms = np.linalg.norm(X, axis=0)
    zero = norms == 0.0
    scaled = X[:, ~zero] / norms[~zero]
    with single_threaded_blas():  # threaded LAPACK took 4.8 s for SumHes's 536 x 129 probe on two busy cores
        _, s, vt = np.linalg.svd(scaled, full_matrices=False)
    tol = s.max(initial=0.0) * max(scaled.shape) * np.finfo(float).eps
    null = vt[s <= tol]
    involved = np.zeros(X.shape[1], dtype=bool)
    involved[zero] = True
    if null.size:
        involved[np.flatnonzero(~zero)] = np.any(np.abs(null) > 1e-8, axis=0)
    return [name for name, flag in zip(names, involved, strict=True) if flag]
