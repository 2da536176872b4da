"""Public centring of product and power columns: a reparametrisation of the design that private fits see.

A column that multiplies numeric variables (``x:z``) or raises one to a power (``I(x ** 2)``) is, over the
declared ranges, nearly a linear function of its lower-order columns whenever the variables' ranges sit away from
0: ``x z`` moves with ``x`` and ``z``, ``x^2`` with ``x``.  The design is then badly conditioned, and a private
fit pays for it: its noise is largest in the direction that separates the column from its parents (a noisy Gram
matrix cannot resolve it, and gradient steps converge slowest there).  Centring each variable at the midpoint
``c`` of its declared range before multiplying,

    (x - c_x)(z - c_z) = x z - c_z x - c_x z + c_x c_z,      (x - c)^k = sum_j C(k, j) (-c)^(k-j) x^j,

changes neither the model nor the fitted values (the new column is the old one plus a combination of the
lower-order columns, all in the design), but takes most of that dependence out, and its range
``[-h_x h_z, h_x h_z]`` (``h`` the half-widths) is narrower than that of ``x z`` for ranges away from 0.

Everything here reads only public facts (the formula's terms, the declared and derived ranges, the public
supports), so a fit on ``X M`` followed by the coefficient map ``b = M b'`` is post-processing
(:class:`dpstats.scaling.PublicScaling`).  ``M`` is unit upper-triangular in an order by degree (each centred
column takes only columns of lower degree), hence invertible.

A column is centred when:

* **product**: its term multiplies two or more numerical factors of one column each, each with a bounded main
  effect in the design, and every proper sub-product (with the intercept for the empty one) is a column of the
  design;
* **product with a coded factor**: its term multiplies one or more such numerical factors and one coded factor (a
  categorical factor's dummies, or a numerical variable with public values, such as a 0/1 integer), which keeps
  its coding: only the numerical factors are centred, ``(x - c) d``, and every sub-product of the numerical
  factors times the coded factor (``d`` alone for the empty one) is a term of the design whose columns carry the
  product's coding: the same columns, or for a categorical factor columns whose contrast gives the product's level
  by level (the same contrast, or the full set of dummies of ``0 + C(g)`` beside the reduced coding of
  ``x:C(g)``);
* **power**: its term is one factor ``I(e ** k)`` or ``np.power(e, k)`` (an integer k >= 2) whose base ``e`` is
  a main effect of the design, with every lower power ``e ** j`` (2 <= j < k) and the intercept present.  A base
  (or lower power) that is not a main effect may instead enter the design through its product with a categorical
  factor coded by a full set of dummies, as in ``y ~ C(g) + C(g):x + I(x ** 2)`` (the slopes of x by group, no
  ``x``): those columns x d_l sum to x on every row (the contrast's rows sum to 1 with public weights v, C v = 1),
  so the expansion's linear term -k c^(k-1) x is spread over them with weights -k c^(k-1) v, and the centre c is
  the midpoint of the variable's own declared range (:attr:`dpstats.bounds.DesignRanges.factor_intervals`; no
  column's range gives it).  Such a power is centred only where declared bounds give that range (``factored``);

where "the intercept" is the ``Intercept`` column or, in a design without one whose columns sum to the constant by
public weights w (``y ~ 0 + C(g) + x + I(x ** 2)``, whose dummies of g sum to 1 on every row:
:meth:`dpstats.formula.design.Design.constant_weights`), the combination X w: the constant term of the expansion,
c^k (or c_x c_z), is then spread over those columns with weights c^k w, and the map is as exact as with an
``Intercept`` column.  Such a design is centred only where w puts no weight on a centred column or on a variable
centred (otherwise the constant's combination would itself move with the centring);

and its numerical variables' midpoints are not all 0 (then nothing would change), none of them has public values
(a two-valued integer variable keeps its own coding), and every range involved is known.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpstats.bounds.derive import column_values
from dpstats.bounds.interval import Interval

#: The largest residual, level by level, of a product's coded columns written as combinations of a sub-product's
#: (:func:`_coding_map`), and the size below which a weight is 0: contrast matrices hold small integers, so only
#: rounding.
CODING_TOL = 1e-9

__all__ = ["ColumnCentring", "CentrableDesign", "public_centring", "centrable_design", "product_columns",
           "intercept_model"]


@dataclass(frozen=True)
class ColumnCentring:
    """The public reparametrisation X -> X M of the design (module docstring).

    Attributes
    ----------
    matrix : numpy.ndarray
        M (d, d): column j of the fitted design is X M[:, j]; unit diagonal.
    intervals : tuple of (float, float)
        The range of every fitted column (the design's own for the columns left as they are).
    centred : tuple of str
        The names of the centred columns, in design order.
    powers : tuple of str
        Those of them that are powers (``I(x ** 2)``), not products.
    variables : tuple of int
        The design indices of the numerical main effects centred at their midpoints (a product's numerical
        factors, a power's base).
    factored : tuple of str
        The powers among ``centred`` whose base (or a lower power) is no main effect of the design but the sum of
        its products with a factor's full set of dummies (``I(x ** 2)`` beside ``C(g):x``): centred at the midpoint
        of the variable's declared range, which no column gives.
    """

    matrix: np.ndarray
    intervals: tuple[tuple[float, float], ...]
    centred: tuple[str, ...]
    powers: tuple[str, ...] = ()
    variables: tuple[int, ...] = ()
    factored: tuple[str, ...] = ()

    def _subject(self) -> str:
        many = len(self.centred) > 1
        return (", ".join(self.centred) + f" (product or power column{'s' if many else ''}) "
                + ("were" if many else "was"))

    def note(self) -> str:
        """The report's note (public facts only)."""
        return (self._subject() + " fitted with each variable centred at the midpoint of its declared range (public: "
                "(x - c)(z - c'), (x - c)^k), which changes neither the model nor the fitted values; the "
                "coefficients were mapped back to the formula's columns (post-processing)")

    def hint(self) -> str:
        """The report's note where the columns were fitted as written (``rescale=True``)."""
        return (self._subject() + " fitted as written (rescale=True); over the declared ranges such a column is "
                "nearly linear in its variables, so its coefficient, those of its variables' own columns and the "
                "intercept can sit several standard errors from least squares, outside their intervals (pgd's "
                "intervals for the square of age in wage equations covered least squares in 1 to 3 of 10 fits); the "
                "default rescale='centred' (variables centred at their declared midpoints) brings them and the fitted "
                "values much closer to least squares "
                "(docs/choosing.md, 'Products and powers')")


@dataclass(frozen=True)
class CentrableDesign:
    """Which product and power columns of a design can be centred, read from the formula and the public supports
    alone (no range is needed): the structure a method uses to centre them at centres it releases itself, where
    the declared bounds do not give every range (:meth:`at`).

    Attributes
    ----------
    columns : tuple of int
        The design indices of the centrable columns.
    variables : tuple of int
        The design indices of the numerical main effects whose centres those columns are centred at.
    centred, powers : tuple of str
        The centrable columns' names, and those of them that are powers.
    constant : numpy.ndarray or None
        In a design without an ``Intercept`` column, the public weights w with X w = 1 the constant term goes to
        (module docstring).
    """

    design_info: Any
    supports: dict[str, tuple[float, ...]] | None
    columns: tuple[int, ...]
    variables: tuple[int, ...]
    centred: tuple[str, ...]
    powers: tuple[str, ...]
    constant: np.ndarray | None = None

    def at(self, intervals: Sequence[Interval]) -> ColumnCentring:
        """The centring with each variable centred at the midpoint of its interval in ``intervals`` (a centre of
        0 included) and each centrable column's range derived from its variables' (its own interval is not read).

        Parameters
        ----------
        intervals : sequence of Interval
            A range for every design column: for ``variables``, symmetric about the centre wanted and holding
            every value the column can take after clipping; for the coded columns, their public range.

        Returns
        -------
        ColumnCentring
        """
        centring = public_centring(self.design_info, intervals, self.supports, zero_centres=True,
                                   constant=self.constant)
        assert centring is not None and tuple(centring.centred) == self.centred  # the structure reads no range
        return centring


def centrable_design(design_info: Any, supports: dict[str, tuple[float, ...]] | None = None,
                     constant: np.ndarray | None = None) -> CentrableDesign | None:
    """The product and power columns :func:`public_centring` centres once every range involved is known (the
    formula's structure alone), or None where there is none (or the design was given as arrays).

    Parameters
    ----------
    design_info : patsy.DesignInfo or None
        The right-hand side's design.
    supports : dict of str to tuple of float, optional
        The numeric variables whose values public facts fix (left as they are).
    constant : numpy.ndarray, optional
        In a design without an ``Intercept`` column, public weights w with X w = 1
        (:meth:`dpstats.formula.design.Design.constant_weights`): the constant the centring spreads over them.

    Returns
    -------
    CentrableDesign or None
        None also for a design with neither an ``Intercept`` column nor ``constant`` (nothing to centre around),
        or where w touches a centred column or variable; and for a power whose variable is no column of the design
        (:attr:`ColumnCentring.factored`): no released centre is the variable's.
    """
    structure = product_columns(design_info, supports, assume_constant=False, constant=constant)
    if structure is None or structure.factored:
        return None
    columns = tuple(design_info.column_names.index(name) for name in structure.centred)
    if set(columns) & set(structure.variables):
        return None  # a centred column that is itself centred in a product (I(x ** 2):z) needs its own range
    return CentrableDesign(design_info, supports, columns, structure.variables, structure.centred, structure.powers,
                           constant)


def product_columns(design_info: Any, supports: dict[str, tuple[float, ...]] | None = None, *,
                    assume_constant: bool = True, constant: np.ndarray | None = None) -> ColumnCentring | None:
    """The product and power columns :func:`public_centring` centres once every range involved is known, read from
    the formula and the public supports alone (its ``centred`` and ``powers``; its matrix and ranges are those of
    placeholder ranges), or None where there is none (or the design was given as arrays).  Unlike
    :func:`centrable_design` it includes designs where a centred column is itself centred in a product
    (``I(x ** 2):z``), which only declared bounds centre: what a report warns about where they are missing.

    Parameters
    ----------
    design_info : patsy.DesignInfo or None
        The right-hand side's design.
    supports : dict of str to tuple of float, optional
        The numeric variables whose values public facts fix (left as they are).
    assume_constant : bool, default True
        Read a design without an ``Intercept`` column as though it held the constant (its products and powers
        are then listed, whether or not they can be centred); False: only with an ``Intercept`` column or
        ``constant``.
    constant : numpy.ndarray, optional
        Public weights w with X w = 1 in a design without an ``Intercept`` column (:func:`public_centring`).

    Returns
    -------
    ColumnCentring or None
    """
    if design_info is None:
        return None
    d = len(design_info.column_names)
    placeholder = {factor.code: Interval(-1.0, 1.0) for factor in design_info.factor_infos}
    return public_centring(design_info, [Interval(-1.0, 1.0)] * d, supports, zero_centres=True,
                           assume_constant=assume_constant, factors=placeholder, constant=constant)


def public_centring(design_info: Any, intervals: Sequence[Interval | None],
                    supports: dict[str, tuple[float, ...]] | None = None, *,
                    zero_centres: bool = False, constant: np.ndarray | None = None,
                    assume_constant: bool = False, factors: Mapping[str, Interval] | None = None
                    ) -> ColumnCentring | None:
    """The centring of a design's product and power columns (module docstring), or None where no column qualifies.

    Parameters
    ----------
    design_info : patsy.DesignInfo or None
        The right-hand side's design (None: a design given as arrays, nothing to centre).
    intervals : sequence of Interval or None
        Each design column's declared or derived range.
    supports : dict of str to tuple of float, optional
        The numeric variables whose values public facts fix (left as they are).
    zero_centres : bool, default False
        Centre a column whose variables' midpoints are all 0 as well (it is then unchanged, but its range is the
        one derived from its variables'), so that which columns are centred depends on the formula alone.
    constant : numpy.ndarray, optional
        In a design without an ``Intercept`` column, public weights w (d,) with X w = 1 on every row the
        declarations allow (module docstring); None: no such weights.
    assume_constant : bool, default False
        Read the structure as though the design held the constant where it holds neither an ``Intercept`` column
        nor ``constant`` (the columns such a design would centre: what a report warns about; the matrix is then
        not a reparametrisation).
    factors : mapping of str to Interval, optional
        The declared range of each one-column numerical factor, by code: the range of a power's variable that is
        no column of the design (module docstring, **power**); without it such a power is not centred.

    Returns
    -------
    ColumnCentring or None
    """
    if design_info is None or any(iv is None for iv in intervals):
        return None
    unit = _unit(design_info, constant, assume_constant)
    ranges = [(float(iv.lo), float(iv.hi)) for iv in intervals if iv is not None]
    values = column_values(design_info, supports)
    mains = _numeric_mains(design_info, supports)
    d = len(ranges)
    matrix = np.eye(d)
    fitted = list(ranges)
    centred: list[str] = []
    powers: list[str] = []
    variables: set[int] = set()
    factored: list[str] = []
    spans = _linear_spans(design_info, mains, supports)
    for term, cols in design_info.term_slices.items():
        if any(values[j] is not None for j in range(cols.start, cols.stop)):
            continue
        found = _product(term, cols, design_info, mains, ranges, values, unit, zero_centres)
        if found is not None:
            variables.update(mains[f] for f in term.factors if f in mains)
        elif cols.stop - cols.start == 1:
            power = _power(term.factors, spans, ranges, design_info, unit, zero_centres, factors or {})
            if power is not None:
                found = [(power.weights, power.interval)]
                powers.append(design_info.column_names[cols.start])
                if power.base is None:
                    factored.append(design_info.column_names[cols.start])
                else:
                    variables.add(power.base)
        if found is None:
            continue
        for j, (weights, interval) in enumerate(found, start=cols.start):
            for k, w in weights.items():
                matrix[k, j] = w
            fitted[j] = interval
            centred.append(design_info.column_names[j])
    if not centred or not _apart(unit, centred, variables, design_info):
        return None
    centring = ColumnCentring(matrix=matrix, intervals=tuple(fitted), centred=tuple(centred), powers=tuple(powers),
                              variables=tuple(sorted(variables)), factored=tuple(factored))
    if np.all(np.isfinite(matrix)) and np.all(np.isfinite(np.array(fitted, dtype=float))):
        return centring
    # centres or ranges so large that a weight or a range overflows (a variable near 1e50 and a power of 7): with
    # declared bounds the columns are fitted as written; a method centring at its released centres, whose derived
    # ranges it needs, gets every entry clamped to finite doubles
    return _finite(centring) if zero_centres else None


def intercept_model(weights: np.ndarray) -> tuple[int, np.ndarray]:
    """The intercept model of a design without an ``Intercept`` column whose columns sum to the constant with
    public weights w (``0 + C(g)``'s dummies, a ``cr`` basis): (k, M), M the identity with its column k replaced by
    w, k the first column whose weight is at least half the largest, so that column k of X M is the constant 1 on
    every row.  The model and its fitted values are unchanged (b = M b'), and a private fit gets an intercept to
    centre around.  Public facts only."""
    size = np.abs(weights)
    k = int(np.flatnonzero(size >= 0.5 * size.max())[0])
    mix = np.eye(weights.size)
    mix[:, k] = weights
    return k, mix


def _unit(design_info: Any, constant: np.ndarray | None, assume: bool) -> dict[int, float] | None:
    """The constant as a combination of design columns, {column: weight}: the ``Intercept`` column, else the
    public weights ``constant`` (their non-zero entries), else nothing ({} where ``assume``: the structure alone),
    None where the design does not hold the constant."""
    intercept = _single_columns(design_info).get(frozenset())
    if intercept is not None:
        return {intercept: 1.0}
    if constant is not None:
        return {int(j): float(w) for j, w in enumerate(constant) if w != 0.0}
    return {} if assume else None


def _apart(unit: dict[int, float] | None, centred: Sequence[str], variables: set[int], design_info: Any) -> bool:
    """Whether the constant's combination leaves out every centred column and every variable centred, so that the
    centring does not move it (always so for an ``Intercept`` column)."""
    touched = {design_info.column_names.index(name) for name in centred} | variables
    return unit is None or not set(unit) & touched


def _single_columns(design_info: Any) -> dict[frozenset[Any], int]:
    """The design's one-column terms, keyed by their set of factors (the intercept by the empty set)."""
    return {frozenset(term.factors): cols.start for term, cols in design_info.term_slices.items()
            if cols.stop - cols.start == 1}


def _numeric_mains(design_info: Any, supports: dict[str, tuple[float, ...]] | None) -> dict[Any, int]:
    """The numerical main effects without public values, by factor: the variables products and powers centre."""
    values = column_values(design_info, supports)
    return {next(iter(key)): j for key, j in _single_columns(design_info).items()
            if len(key) == 1 and _numeric(next(iter(key)), design_info) and values[j] is None}


def _numeric(factor: Any, design_info: Any) -> bool:
    info = design_info.factor_infos[factor]
    return bool(info.type == "numerical" and info.num_columns == 1)


def _midpoint(lo: float, hi: float) -> tuple[float, float]:
    return (lo + hi) / 2.0, (hi - lo) / 2.0


def _product(term: Any, cols: slice, design_info: Any, mains: dict[Any, int],
             ranges: Sequence[tuple[float, float]], values: Sequence[tuple[float, ...] | None],
             unit: dict[int, float] | None, zero_centres: bool = False
             ) -> list[tuple[dict[int, float], tuple[float, float]]] | None:
    """For each column of a product term, the lower-order weights and the range of the column with its numerical
    factors centred, (x - c)(z - c') d; None where the term is not such a product (module docstring).

    The term multiplies two or more factors: numerical main effects without public values (``mains``) and at most
    one coded factor (a categorical factor's dummies, or a numerical variable with public values such as a 0/1
    integer), which keeps its coding.  Every sub-product of the numerical factors times the coded factor (the coded
    main effect ``d`` for the empty one) must be a term of the design whose columns carry the product's coding
    (:func:`_coding_map`).  Without a coded factor the empty sub-product is the constant, ``unit`` (:func:`_unit`;
    None: the term is not centred; :func:`_numeric_product`).  The range of column i is prod(h) max|d_i| over the
    values d_i takes (the coded column's public range, or its contrast's values)."""
    numerical = [f for f in term.factors if f in mains]
    coded = frozenset(term.factors) - frozenset(numerical)
    if len(term.factors) < 2 or not numerical or len(coded) > 1:
        return None
    terms = {frozenset(t.factors): (t, c) for t, c in design_info.term_slices.items()}
    if not coded:
        return _numeric_product(numerical, terms, mains, ranges, unit, zero_centres)
    alone = terms.get(coded)
    categorical = any(design_info.factor_infos[f].type == "categorical" for f in coded)
    if alone is None or (not categorical and any(values[j] is None for j in range(alone[1].start, alone[1].stop))):
        return None
    centre = {f: _midpoint(*ranges[mains[f]]) for f in numerical}
    if not zero_centres and all(c == 0.0 for c, _ in centre.values()):
        return None
    width = cols.stop - cols.start
    (factor_code,) = coded
    weights: list[dict[int, float]] = [{} for _ in range(width)]
    for size in range(len(numerical)):
        for subset in itertools.combinations(numerical, size):
            found = terms.get(frozenset(subset) | coded)
            coding = None if found is None else _coding_map(design_info, found, term, width, factor_code, categorical)
            if found is None or coding is None:
                return None
            factor = math.prod(-centre[f][0] for f in numerical if f not in subset)
            for i in range(width):
                for m in np.flatnonzero(coding[:, i]):
                    j = found[1].start + int(m)
                    weights[i][j] = weights[i].get(j, 0.0) + factor * float(coding[m, i])
    half = math.prod(h for _, h in centre.values())
    if categorical:
        coded_values = _contrast_matrix(design_info, term, factor_code)
        assert coded_values is not None  # _coding_map read it
        reach = np.abs(coded_values).max(axis=0).tolist()
    else:
        reach = [max(abs(lo), abs(hi)) for lo, hi in ranges[alone[1].start:alone[1].stop]]
    return [(w, (-half * m, half * m)) for w, m in zip(weights, reach, strict=True)]


def _coding_map(design_info: Any, found: tuple[Any, slice], term: Any, width: int, factor: Any, categorical: bool
                ) -> np.ndarray | None:
    """W (columns of ``found`` x ``width``): the product term's coded columns as combinations of those of its
    sub-product ``found``, level by level, d_term = d_found W; None where there is no such W.  A coded numerical
    variable (public values) is the same column in both (W = I).  A categorical factor's columns map through its
    contrast matrices (levels x columns), C_found W = C_term, solved exactly: the identity where the codings are the
    same, and e.g. a full set of dummies (``0 + C(g)``) carrying the reduced coding of ``x:C(g)``."""
    size = found[1].stop - found[1].start
    if not categorical:
        return np.eye(width) if size == width else None
    own, theirs = _contrast_matrix(design_info, found[0], factor), _contrast_matrix(design_info, term, factor)
    if own is None or theirs is None or own.shape[0] != theirs.shape[0]:
        return None
    if own.shape == theirs.shape and np.array_equal(own, theirs):
        return np.eye(width)
    coding = np.linalg.lstsq(own, theirs, rcond=None)[0]
    coding[np.abs(coding) < CODING_TOL] = 0.0
    return coding if np.abs(own @ coding - theirs).max() <= CODING_TOL else None


def _contrast_matrix(design_info: Any, term: Any, factor: Any) -> np.ndarray | None:
    """The contrast matrix (levels x columns) of a categorical factor in a term coded by one subterm (None
    otherwise)."""
    codings = design_info.term_codings[term]
    if len(codings) != 1 or factor not in codings[0].contrast_matrices:
        return None
    return np.asarray(codings[0].contrast_matrices[factor].matrix, dtype=float)


def _numeric_product(numerical: Sequence[Any], terms: dict[frozenset[Any], tuple[Any, slice]], mains: dict[Any, int],
                     ranges: Sequence[tuple[float, float]], unit: dict[int, float] | None, zero_centres: bool
                     ) -> list[tuple[dict[int, float], tuple[float, float]]] | None:
    """The lower-order weights and the range of a product of numerical main effects only, prod (x - c): each
    proper sub-product a one-column term of the design, the empty one the constant ``unit`` (:func:`_unit`);
    range [-prod h, prod h]."""
    centre = {f: _midpoint(*ranges[mains[f]]) for f in numerical}
    if unit is None or (not zero_centres and all(c == 0.0 for c, _ in centre.values())):
        return None
    weights: dict[int, float] = {}
    for size in range(len(numerical)):
        for subset in itertools.combinations(numerical, size):
            factor = math.prod(-centre[f][0] for f in numerical if f not in subset)
            if not subset:
                targets = unit
            else:
                found = terms.get(frozenset(subset))
                if found is None or found[1].stop - found[1].start != 1:
                    return None
                targets = {found[1].start: 1.0}
            for j, w in targets.items():
                weights[j] = weights.get(j, 0.0) + factor * w
    half = math.prod(h for _, h in centre.values())
    return [(weights, (-half, half))]


@dataclass(frozen=True)
class _Span:
    """A one-column numerical factor as a combination of design columns equal to it on every row: its main
    effect (``main`` its index), or its products with a categorical factor's full set of dummies (``main`` None)."""

    factor: Any
    weights: dict[int, float]
    main: int | None


@dataclass(frozen=True)
class _Power:
    """A centred power: the lower-order weights, the centred column's range and the design index of its base
    (None: the base is no main effect, :attr:`ColumnCentring.factored`)."""

    weights: dict[int, float]
    interval: tuple[float, float]
    base: int | None


def _linear_spans(design_info: Any, mains: dict[Any, int], supports: dict[str, tuple[float, ...]] | None
                  ) -> dict[str, _Span]:
    """The numerical factors a power's expansion can write its lower powers with, by their code's syntax tree:
    each main effect (``mains``), else, for a one-column numerical factor without public values, the first
    two-factor term that multiplies it by a categorical factor whose contrast matrix C spans the constant (C v = 1
    exactly, up to ``CODING_TOL``: a full set of dummies), as the columns of that term with weights v."""
    spans = {key: _Span(f, {j: 1.0}, j) for f, j in mains.items() if (key := _dump(f)) is not None}
    for term, cols in design_info.term_slices.items():
        if len(term.factors) != 2:
            continue
        for numerical, coded in (term.factors, term.factors[::-1]):
            key = _dump(numerical)
            if key is None or key in spans or not _numeric(numerical, design_info) \
                    or (supports or {}).get(numerical.name()) is not None \
                    or design_info.factor_infos[coded].type != "categorical":
                continue
            weights = _constant_weights(_contrast_matrix(design_info, term, coded))
            if weights is not None:
                spans[key] = _Span(numerical, {cols.start + m: w for m, w in enumerate(weights) if w != 0.0}, None)
    return spans


def _constant_weights(contrast: np.ndarray | None) -> list[float] | None:
    """v with C v = 1 for a contrast matrix C (levels x columns), or None where the constant is not in its span."""
    if contrast is None:
        return None
    ones = np.ones(contrast.shape[0])
    v = np.linalg.lstsq(contrast, ones, rcond=None)[0]
    v[np.abs(v) < CODING_TOL] = 0.0
    return v.tolist() if np.abs(contrast @ v - ones).max() <= CODING_TOL else None


def _power(factors: Sequence[Any], spans: dict[str, _Span], ranges: Sequence[tuple[float, float]], design_info: Any,
           unit: dict[int, float] | None, zero_centres: bool, declared: Mapping[str, Interval]) -> _Power | None:
    """The centred power ``e ** k`` (module docstring, **power**); None where the column is not such a power.
    Each lower power e ** j (1 <= j < k) is written with its span (:func:`_linear_spans`), and the constant term
    (-c)^k goes to the constant's combination ``unit`` (:func:`_unit`; None: not centred).  The centre is the
    midpoint of the base's column range where the base is a main effect, else of its declared range
    (``declared``, by code)."""
    if len(factors) != 1 or not _numeric(factors[0], design_info):
        return None
    parsed = _power_of(factors[0])
    if parsed is None:
        return None
    base, k = parsed
    main = spans.get(base)
    if main is None or unit is None:
        return None
    lower = {1: main}
    for span in spans.values():
        found = _power_of(span.factor)
        if found is not None and found[0] == base and 2 <= found[1] < k:
            lower[found[1]] = span
    if any(j not in lower for j in range(1, k)):
        return None
    if main.main is not None:
        c, h = _midpoint(*ranges[main.main])
    elif (interval := declared.get(main.factor.code)) is not None:
        c, h = _midpoint(float(interval.lo), float(interval.hi))
    else:
        return None
    if c == 0.0 and not zero_centres:
        return None
    weights: dict[int, float] = {}
    for j in range(1, k):
        for col, v in lower[j].weights.items():
            weights[col] = weights.get(col, 0.0) + math.comb(k, j) * _power_float(-c, k - j) * v
    for col, w in unit.items():
        weights[col] = weights.get(col, 0.0) + _power_float(-c, k) * w
    top = _power_float(h, k)
    factored = any(span.main is None for span in lower.values())
    return _Power(weights, (0.0, top) if k % 2 == 0 else (-top, top), None if factored else main.main)


def _power_float(x: float, k: int) -> float:
    """x ** k by repeated multiplication: +-inf where it overflows (Python's ``**`` raises OverflowError)."""
    return math.prod([x] * k)


def _finite(centring: ColumnCentring) -> ColumnCentring:
    """The centring with every weight and range end clamped to finite doubles (a weight that is not a number, from
    inf - inf, becomes 0; each range keeps lo <= hi): a public map of public or released values."""
    largest = float(np.finfo(float).max)
    matrix = np.clip(np.nan_to_num(centring.matrix, nan=0.0), -largest, largest)
    ends = np.clip(np.nan_to_num(np.array(centring.intervals, dtype=float), nan=0.0), -largest, largest)
    intervals = tuple((float(min(lo, hi)), float(max(lo, hi))) for lo, hi in ends)
    return dataclasses.replace(centring, matrix=matrix, intervals=intervals)


def _tree(factor: Any) -> ast.expr | None:
    """The factor's code as a syntax tree (None if it does not parse)."""
    try:
        return ast.parse(factor.code, mode="eval").body
    except (AttributeError, SyntaxError, ValueError):
        return None


def _dump(factor: Any) -> str | None:
    """The factor's code as a normalised syntax tree, for comparing codes (None if it does not parse)."""
    node = _tree(factor)
    return None if node is None else ast.dump(node)


def _power_of(factor: Any) -> tuple[str, int] | None:
    """(base's syntax tree, k) for a factor ``I(base ** k)`` or ``np.power(base, k)`` with an integer k >= 2."""
    node = _tree(factor)
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    name = ast.unparse(node.func)
    if name == "I" and len(node.args) == 1 and isinstance(node.args[0], ast.BinOp) \
            and isinstance(node.args[0].op, ast.Pow):
        base, exponent = node.args[0].left, node.args[0].right
    elif name in ("np.power", "numpy.power") and len(node.args) == 2:
        base, exponent = node.args
    else:
        return None
    if not (isinstance(exponent, ast.Constant) and type(exponent.value) is int and 2 <= exponent.value <= 10):
        return None
    return ast.dump(base), int(exponent.value)
