"""Planning a private fit before any budget is spent: each coefficient's privacy error next to its sampling error.

:func:`coefficient_plan` (``dpstats.plan`` with ``bounds=`` or ``formula=``)
answers, in the units of the coefficients and from public facts only:

* at n rows and epsilon: the expected privacy error of each coefficient (the
  released coefficient minus least squares on the same clipped data, as a
  root mean square) and its sampling error (the standard error of that least
  squares fit), whether the method would refuse, and whether its intervals
  would be reported;
* ``epsilon_needed``: at n rows, the smallest epsilon from which the privacy
  error of the coefficient is at most its sampling error;
* ``n_needed``: at epsilon, the smallest n from which it is, never below the
  method's own minimum (``MethodSpec.min_rows``) and never where its checks
  would refuse (its ``max_columns``, and its ``public_refusal``: the check its
  fit runs on public facts before reading a row);
* ``n_for_target``: at epsilon, the smallest such n at which the total error
  sqrt(privacy^2 + sampling^2) is at most ``target`` (coefficient units);
* ``interval_n`` and ``interval_epsilon``: from which n (at epsilon) and from
  which epsilon (at n) the fit reports intervals, by the method's own rules
  (``MethodSpec.inference_rule``: its public size rule, e.g. pgd's
  n * mu(epsilon, delta) >= 15, and its withholding rule), and for
  ``method="auto"`` by the method auto chooses there (below n * mu = 15 it
  fits a point estimate without an interval).  A rule that the fit decides
  from a released value is planned from an assumption: pgd also withholds
  its intervals for a two-valued response whose rarer value is below 10% of
  the rows and too rare for the budget (docs/choosing.md, "A rare
  outcome"); with ``outcome_share=`` (the assumed share of the rarer value)
  the plan applies that rule, without it the inference column says the
  condition.

The planned fit is the default pipeline's: the public rescaling of every
column and the response to [-1, 1] by the declared bounds, and the method's
default options.  What is not public is assumed, and the plan lists its
assumptions: by default each design column is uniform on its declared range
(independent; ``spread`` and ``correlation`` change this), the response is
uniform on its declared range (a two-valued one takes its two values, equally
common or as ``outcome_share`` says), and the model explains ``rsquared`` of
it (default 0; or give ``residual_sd`` in the response's units), with equal
standardised slopes.  The sampling error is sigma^2 (n E[x x^T])^{-1}.  The
privacy error comes from the method's own calibration where it registers
one (``UpperRate.expected_error``: ``ssp``, ``adassp``, ``noisy_ols``, and
``pgd``, whose public rules run on the assumed moments:
:func:`dpstats.methods.pgd.expected_error`; ``robgd`` and ``ambssgd``, whose
error blocks' model runs on the values their fits would release under the
assumed moments: :mod:`dpstats.methods.common.planned_robust`; first order in the noise; pgd's
is the error of its estimate with its planned shrinkage divided out, which no
assumed coefficient makes free, ``UpperRate.planned_error``, printed with the
assumptions), otherwise from a rate, up to its unknown constants:
the sampling error times the privacy-to-sampling ratio of the method's
upper rate, or of the minimax lower bound (Cai, Wang & Zhang 2021, Thm 18;
Thm 16 with ``sparsity``) when the method has none; the ``model`` column
says which.  A rate the method marks as no planning figure
(``UpperRate.not_for_planning``), where the plan has nothing better, is shown
with kind ``"not for planning"``, and no epsilon or n needed is derived from it
(``robgd``'s and ``ambssgd``'s rates are so marked, but the plan with bounds
uses their calibrations).  Searches use a grid of 8 points per decade refined by
log-linear interpolation of the error ratio (within about 1%), and a
bisection for the boundary of a refusal.
"""

from __future__ import annotations

import dataclasses
import difflib
import html
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from dpstats.blas import single_threaded_blas
from dpstats.bounds import DataBounds
from dpstats.errors import (
    DPStatsError,
    InvalidArgumentError,
    InvalidBoundsError,
    InvalidPrivacyParameterError,
    MissingBoundsError,
    UnknownColumnError,
    UnknownMethodError,
)
from dpstats.formula import Design, public_design
from dpstats.formula.language import NAMESPACE
from dpstats.formula.parse import code_names, expand_formula, formula_literal_levels, model_desc, term
from dpstats.formula.schema import declared_level_values
from dpstats.inference import RELIABILITY_THRESHOLD, format_ratio
from dpstats.methods.registry import MethodSpec, available_methods, choose_auto, get_method
from dpstats.pipeline import auto_facts, planned_context, public_scaling, rescale_mode
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.missing_screen import SCREEN_SHARE, fit_epsilon
from dpstats.rates import PlanningFacts, Rate, UpperRate
from dpstats.scaling import PublicScaling
from dpstats.theory import (
    CLASSICAL_LOWER,
    MOVED_UP,
    SPARSE_LOWER,
    _rate_epsilon,
    assumed_residual_sd,
    design_moments,
    rate_plan,
    sampling_covariance,
)
from dpstats.validation import DEFAULT_RESCALE, MAX_EPSILON, at_least, check_declarations, finite_real, shown

__all__ = ["Plan", "plan", "coefficient_plan", "IntervalStatus", "DEFAULT_DELTA", "SPELLINGS", "option"]

#: how a plan's text names the options it mentions (:meth:`Plan.lines`): ``"python"``, as :func:`dpstats.plan`'s
#: keyword arguments (``method='auto'``, ``dtypes=``), or ``"cli"``, as the flags of ``dpstats plan`` and
#: ``dpstats fit`` (``--method auto``, ``--dtypes``)
SPELLINGS = ("python", "cli")


def option(name: str, value: str | None = None, spelling: str = "python") -> str:
    """An option as a plan's text names it: ``method='auto'`` or ``dtypes=`` in Python's spelling, ``--method auto``
    or ``--dtypes`` on the command line.

    Parameters
    ----------
    name : str
        The option's name (a keyword argument of :func:`dpstats.plan`, a flag of ``dpstats plan``).
    value : str or None
        Its value, or None to name the option alone.
    spelling : {"python", "cli"}
        One of :data:`SPELLINGS`.

    Returns
    -------
    str
        The option as written in that spelling.
    """
    if spelling not in SPELLINGS:
        raise InvalidArgumentError(f"spelling must be one of {', '.join(map(repr, SPELLINGS))}; got {shown(spelling)}")
    if spelling == "cli":
        return f"--{name}" if value is None else f"--{name} {value}"
    return f"{name}=" if value is None else f"{name}={value!r}"


class _Option(NamedTuple):
    """An option a text of the plan names, spelled when the text is shown (:func:`option`)."""

    name: str
    value: str | None = None


class _Spelled(NamedTuple):
    """A text of the plan, stored once: its words, and the options it names kept apart and written in the spelling
    of :data:`SPELLINGS` it is shown in."""

    parts: tuple[str | _Option, ...]

    @classmethod
    def of(cls, *parts: str | _Option) -> _Spelled:
        """The text of these words and options, in order."""
        return cls(parts)

    @classmethod
    def plain(cls, text: str) -> _Spelled:
        """A text that names no option."""
        return cls((text,))

    def spelled(self, spelling: str) -> str:
        """The text in ``spelling``."""
        return "".join(part if isinstance(part, str) else option(part.name, part.value, spelling)
                       for part in self.parts)


#: delta of a planned fit when none is given
DEFAULT_DELTA = 1e-6

#: the range searched for epsilon_needed, and the largest n searched
EPSILON_SEARCH = (1e-3, MAX_EPSILON)
N_SEARCH_MAX = 1e12

#: grid points per decade of the searches
_PER_DECADE = 8

#: the assumed correlation of the design columns: one common value, or {(column, other column): r} for named pairs
Correlation = float | Mapping[tuple[str, str], float]

_COLUMNS = ["method", "term", "n", "epsilon", "privacy", "sampling", "ratio", "epsilon_needed", "n_needed",
            "n_for_target", "min_rows", "refusal", "intervals", "inference", "interval_n", "interval_epsilon", "auto",
            "noise_to_signal", "model", "kind"]


# -- the planned design: public facts and assumptions ------------------------------------------------------------

@dataclass(frozen=True)
class _Setting:
    """The planned design in the units the method sees (rescaled), and how to map back."""

    names: list[str]
    scaling: PublicScaling
    bounds: DataBounds  # the rescaled clip ranges
    second_moment: np.ndarray
    residual_var: float
    coefficients: np.ndarray
    intercept_index: int | None
    assumptions: list[_Spelled]
    design: Design  # the public design (no rows), for the methods' public refusals
    rescale: str  # the fit's rescale mode (pipeline.rescale_mode): "centred" or "columns"
    outcome_share: float | None = None  # assumed share of a two-valued response's rarer value (None: not given)

    @property
    def d(self) -> int:
        return len(self.names)


def _schema(bounds: Mapping[str, tuple[float, float]], levels: Mapping[str, Sequence[Any]] | None,
            written: Mapping[str, Sequence[Any]], dtypes: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """A zero-row frame with a column per bounded variable (of its type in ``dtypes``, float when not given) and a
    categorical per factor (public): the factors of ``levels=`` and those whose levels the formula writes
    (``written``) and that neither declaration names; a boolean of ``dtypes`` that neither names is a boolean."""
    types = dict(dtypes or {})
    columns: dict[str, Any] = {name: pd.Series(dtype=types.get(name, float)) for name in bounds}
    for name in _expression_variables(bounds, levels, written):  # read inside a bounded design column
        columns[name] = pd.Series(dtype=types.get(name, float))
    for name, dtype in types.items():
        if name not in columns and name not in (levels or {}) and pd.api.types.is_bool_dtype(dtype):
            columns[name] = pd.Series(dtype=bool)
    for name, values in written.items():
        if name not in columns and name not in (levels or {}):
            columns[name] = pd.Categorical([], categories=list(values))
    for name, values in (levels or {}).items():
        columns[name] = pd.Categorical([], categories=list(values))
    return pd.DataFrame(columns)


def _expression_variables(bounds: Mapping[str, tuple[float, float]], levels: Mapping[str, Sequence[Any]] | None,
                          written: Mapping[str, Sequence[Any]]) -> list[str]:
    """The variables read by a bounded expression (a bound declared on a design column or a response expression,
    such as ``np.log(s30 / s)``, as ``dp_ols`` takes it) that no declaration names: numeric variables of the plan's
    schema, as they are in the data ``dp_ols`` fits (their range is the expression's bound, not theirs)."""
    declared = {*bounds, *(levels or {}), *written}
    found: list[str] = []
    for key in bounds:
        if key.isidentifier():
            continue
        try:
            names = code_names(key)
        except SyntaxError:  # a design column's name that is not an expression (e.g. a dummy's "g[T.b]")
            continue
        found += [name for name in names if name not in NAMESPACE and name not in declared and name not in found]
    return found


def _written_levels(text: str, names: Sequence[str]) -> dict[str, tuple[Any, ...]]:
    """The levels the formula declares as literals, ``C(g, levels=[...])``, by variable; none when the formula does
    not parse (:func:`public_design` then reports why)."""
    try:
        desc = model_desc(expand_formula(text, names), shown=text)
    except DPStatsError:
        return {}
    return formula_literal_levels([f.code for term in desc.rhs_termlist for f in term.factors])


def _formula(bounds: Mapping[str, tuple[float, float]], levels: Mapping[str, Sequence[Any]] | None,
             response: str | None) -> str:
    """``response ~ every other variable`` when no formula is given."""
    if response is None:
        if "y" not in bounds:
            raise InvalidArgumentError("plan needs formula= (or response= naming the response among the bounds)")
        response = "y"
    if response not in bounds:
        raise MissingBoundsError(f"plan needs declared bounds for the response {response!r}")
    terms = [term(name) for name in bounds if name != response]
    terms += [f"C({term(name)})" for name in (levels or {})]
    if not terms:
        raise InvalidArgumentError("plan needs at least one design variable besides the response")
    return f"{term(response)} ~ " + " + ".join(terms)


#: what a user without bounds can plan, and what the fit does without them
_WITHOUT_BOUNDS = (" Without bounds, dpstats.plan(target, d, epsilon, delta) gives the rates in units of the residual "
                   "sd for d design columns (in Python); a fit without bounds (method='auto': pgd, which releases "
                   "its own clipping domain) refuses before spending anything where n is too small for that domain, "
                   "and says from which n or epsilon it would fit.")


def _check_outcome_share(share: float | None) -> None:
    """Refuse an assumed share of a two-valued response's rarer value that is not in (0, 0.5]."""
    if share is None:
        return
    if isinstance(share, (bool, np.bool_)) or not isinstance(share, (int, float)) or not 0 < share <= 0.5:
        raise InvalidArgumentError(f"outcome_share is the assumed share of the response's rarer value, in (0, 0.5]; "
                                   f"got {shown(share)}")


def _with_outcome_share(setting: _Setting, share: float) -> _Setting:
    """The setting with the assumed share of a two-valued response's rarer value (refused, with what to fix, when
    the share is not in (0, 0.5] or the response is not two-valued)."""
    _check_outcome_share(share)
    if not setting.design.two_valued_response:
        raise InvalidArgumentError("outcome_share= is for a two-valued response: a boolean response, or an integer "
                                   "one declared between consecutive integers (give its type in dtypes=, e.g. "
                                   "dtypes={'y': bool})")
    return dataclasses.replace(setting, outcome_share=float(share),
                               assumptions=[*setting.assumptions, _Spelled.plain(
                                   f"the response's rarer value is {share:g} of the rows (outcome_share)")])


def _closest_declared(name: str, declared: Sequence[str]) -> str:
    """" Did you mean ...?" when a declared key looks like a misspelling of ``name``, else ""."""
    close = difflib.get_close_matches(name, [str(k) for k in declared if k != name], n=1, cutoff=0.75)
    return f" (bounds= or levels= names {close[0]!r}: a misspelling of {name!r}?)" if close else ""


def _setting(formula: str | None, bounds: Mapping[str, tuple[float, float]],
             levels: Mapping[str, Sequence[Any]] | None, response: str | None, residual_sd: float | None,
             rsquared: float | None, spread: Mapping[str, float] | None, correlation: Correlation,
             dtypes: Mapping[str, Any] | None = None, missing: str = "raise", *, rescale: str,
             outcome_share: float | None = None,
             level_shares: Mapping[str, Mapping[Any, float]] | None = None) -> _Setting:
    """The public design of the planned fit and the assumed moments, in the method's units (``rescale``: the fit's
    mode, "centred" or "columns").  The response's variance: a two-valued response's (dtypes= makes it so) takes
    its two values with the rarer one ``outcome_share`` of the rows (equally common if not given), share (1 -
    share) times its range squared; any other response is uniform on its declared range.  A factor's levels are
    equally common, or take the shares of ``level_shares`` (``_level_weights``).  A given residual sd
    is used as given up to half the response's range (the largest sd a response in that range can have), and
    the total variance is then at least the residual's."""
    text = formula if formula is not None else _formula(bounds, levels, response)
    try:
        written = _written_levels(text, [*bounds, *(levels or {})])
        design, _, _ = public_design(text, _schema(bounds, levels, written, dtypes), bounds=bounds, levels=levels,
                                     missing="screen" if missing == "raise" else "null")
    except UnknownColumnError as err:
        if err.column is None:
            raise
        raise UnknownColumnError(
            f"plan() has no data: it knows each variable of the formula from bounds= (a numeric variable's public "
            f"range) or levels= (a factor's public levels), and '{err.column}' has neither. Declare "
            f"bounds={{{err.column!r}: (lo, hi)}} or levels={{{err.column!r}: [...]}}, or, for a two-valued (0/1) "
            f"variable, dtypes={{{err.column!r}: 'bool'}}."
            + _closest_declared(err.column, [*bounds, *(levels or {})]) + _WITHOUT_BOUNDS, column=err.column) from None
    if design.missing_bounds:
        raise MissingBoundsError(f"plan needs declared bounds for: {', '.join(design.bounds_to_declare())} (it plans "
                                 f"in the coefficients' units from the public ranges of every variable)."
                                 + _WITHOUT_BOUNDS)
    names = list(design.column_names)
    transform = public_scaling(design, rescale)
    assert transform is not None  # every range is declared here, and plan() refuses rescale=False
    scaling, fitted = transform
    intercept = scaling.intercept_index
    rescaled = scaling.transform_bounds(fitted)
    intervals = list(zip(rescaled.column_lo, rescaled.column_hi, strict=True))
    unknown = sorted(set(spread or {}) - set(names))
    if unknown:
        raise InvalidArgumentError(f"spread names columns that are not in the design: {', '.join(unknown)}; the "
                                   f"design's columns are {', '.join(names)}")
    given = dict(spread or {})
    sd = [float(given[name]) / s if name in given else (hi - lo) / math.sqrt(12.0)
          for name, s, (lo, hi) in zip(names, scaling.scale, intervals, strict=True)]
    mean = [(lo + hi) / 2.0 for lo, hi in intervals]
    assumed = np.array(np.broadcast_to(_correlation_matrix(correlation, names, intercept), (len(names),) * 2))
    corr = assumed.copy()
    coded = _coded_blocks(design, scaling)
    weights = _level_weights(level_shares, coded)
    blocks = [(block.columns, block.values, weights.get(block.variable)) for block in coded
              if not any(names[j] in given for j in block.columns)]
    for idx, values, weight in blocks:  # the moments of the levels' values, equally common or as given
        w = np.full(values.shape[0], 1.0 / values.shape[0]) if weight is None else weight
        level_mean = w @ values
        centred = values - level_mean
        cov = centred.T @ (centred * w[:, None])
        scale = np.sqrt(np.diag(cov))
        for k, j in enumerate(idx):
            mean[j], sd[j] = float(level_mean[k]), float(scale[k])
        corr[np.ix_(idx, idx)] = cov / np.outer(scale, scale)
    varying = [j for j in range(len(names)) if j != intercept]
    with single_threaded_blas():  # (threaded LAPACK took seconds for d = 400 on two busy cores)
        smallest = np.linalg.eigvalsh(corr[np.ix_(varying, varying)])[0]
    if smallest < -1e-9:
        corr = assumed  # the levels' own correlations do not fit the assumed ones: the assumed ones stand
    moments = design_moments(intervals, intercept, spread=sd, correlation=corr, mean=mean)
    assert moments is not None  # every column has a declared range here
    y_range = (rescaled.y_lo, rescaled.y_hi)
    width = y_range[1] - y_range[0]
    if design.two_valued_response:  # its two values, the rarer one outcome_share of the rows (default: half)
        share = 0.5 if outcome_share is None else float(outcome_share)
        total_var = share * (1.0 - share) * width**2
        response_words = ("a two-valued response, its values equally common" if outcome_share is None else
                          f"a two-valued response, its rarer value {share:g} of the rows")
    else:
        total_var = assumed_residual_sd(y_range) ** 2  # a response uniform on its range
        response_words = "a response uniform on its declared range"
    capped = ""
    if residual_sd is not None:
        given_sd = float(residual_sd) / scaling.y_scale
        residual_var = min(given_sd, width / 2.0) ** 2  # no response in the declared range has a larger sd (and no
        if given_sd > width / 2.0:                      # overflow for a huge given sd)
            capped = (f"; {float(residual_sd):.4g} was given, more than half the response's declared range, the "
                      f"largest sd a response in it can have")
        total_var = max(total_var, residual_var)
        explained = total_var - residual_var
    else:
        residual_var = total_var * (1.0 - (rsquared or 0.0))
        explained = total_var * (rsquared or 0.0)
    coefficients = _coefficients(moments, intercept, explained)
    centred = rescale == "centred" and design.public_centring() is not None
    words = [_Spelled.of("design columns uniform on their declared ranges"
                         + (", a factor's levels (and a two-valued variable's values) equally common" if blocks
                            else "")
                         + (f" (the shares of {', '.join(sorted(weights))} as given in level_shares=)" if weights
                            else ""),
                         *((" (sd as given in ", _Option("spread"), " where given)") if spread else ()),
                         _correlation_words(correlation)),
             _Spelled.plain(f"residual sd {math.sqrt(residual_var) * scaling.y_scale:.4g} in the response's units ("
                            + ("as given" + capped if residual_sd is not None else f"R^2 = {rsquared or 0.0:g} of "
                               + response_words) + ")"),
             _Spelled.of("the fit's public rescaling: columns and response rescaled to [-1, 1] by the declared "
                         "bounds, the method's default options",
                         *(("; product and power columns with their variables centred at their declared midpoints "
                            "(rescale='centred', the default; uniform on the centred ranges, ", _Option("spread"),
                            " and ", _Option("correlation"), " naming those centred columns)") if centred else ())),
             _screen_words(design.screened, missing)]
    return _Setting(names, scaling, rescaled, moments, residual_var, coefficients, intercept, words, design,
                    rescale=rescale)


def _screen_words(screened: Sequence[str], missing: str) -> _Spelled:
    """The plan's assumption about the missing-value screen (``missing="raise"``), which a fit runs only where a
    variable's type can hold a missing value: the planned types (``dtypes=``, floats where not given) decide whether
    the method plans on all of epsilon or on what the screen leaves, so a plan and a fit on integer or boolean
    columns agree only when ``dtypes=`` declares them."""
    if missing != "raise":
        return _Spelled.of("no missing-value screen (", _Option("missing", missing), ")")
    if not screened:
        return _Spelled.plain("no missing-value screen (no variable's type, as planned, can hold a missing value)")
    names = ", ".join(screened[:4]) + (f" and {len(screened) - 4} more" if len(screened) > 4 else "")
    dtypes = _Option("dtypes")
    return _Spelled.of("the missing-value screen of ", _Option("missing", "raise"),
                       f" takes {SCREEN_SHARE:.0%} of epsilon first, because {names} can hold a missing value as "
                       "planned (floats where ", dtypes, " gives no type; a fit on integer or boolean columns runs no "
                       "screen: declare their types with ", dtypes, " for its figures)")


class _CodedBlock(NamedTuple):
    """The design columns of one term of a single factor (``_coded_blocks``)."""

    columns: list[int]  # their indices in the design
    values: np.ndarray  # the values each level gives them (levels x columns), in the units the method sees
    variable: str  # the variable the factor reads (``income`` of ``C(income, Treatment('a'))``), else its code
    levels: tuple  # the levels, in the order of the rows of ``values``


def _coded_blocks(design: Design, scaling: PublicScaling) -> list[_CodedBlock]:
    """The design columns whose values public facts fix, one block per term of a single factor: a categorical
    factor's contrast columns, or a two-valued variable's column (its public support), each with the values every
    level gives them (levels x columns) in the units the method sees.  The plan takes the levels as equally common
    (a dummy of a two-level factor is then 0 or 1 with sd 0.5, where the uniform on [0, 1] has sd 0.29).  A block
    that the public reparametrisation mixes with other columns is left to the uniform; one it mixes within itself
    (``0 + C(g)``, whose dummies sum to the intercept the fit runs) is taken in the fitted columns, the intercept
    left out."""
    info = design.design_info
    if info is None:
        return []
    mix = np.eye(design.d) if scaling.mix is None else scaling.mix
    blocks = []
    for model_term, cols in info.term_slices.items():
        codings = info.term_codings[model_term]
        if len(model_term.factors) != 1 or len(codings) != 1 or cols.stop == cols.start:
            continue
        factor = model_term.factors[0]
        if factor in codings[0].contrast_matrices:
            levels = np.asarray(codings[0].contrast_matrices[factor].matrix, dtype=float)
            labels = tuple(info.factor_infos[factor].categories)
        elif len(support := design.variable_supports.get(factor.code.strip(), ())) == 2:
            levels = np.asarray(support, dtype=float)[:, None]
            labels = tuple(support)
        else:
            continue
        idx = list(range(cols.start, cols.stop))
        outside = [j for j in range(design.d) if j not in idx]
        if np.any(mix[np.ix_(outside, idx)] != 0.0):
            continue
        fitted = levels @ mix[np.ix_(idx, idx)]
        keep = [k for k, j in enumerate(idx) if j != scaling.intercept_index]
        kept = [idx[k] for k in keep]
        if kept:
            read = [name for name in code_names(factor.code) if name not in NAMESPACE and name not in _CODING_NAMES]
            blocks.append(_CodedBlock(kept, (fitted[:, keep] - scaling.centre[kept]) / scaling.scale[kept],
                                      read[0] if len(read) == 1 else factor.code.strip(), labels))
    return blocks


#: the names of a factor's code that are not the variable it reads: patsy's C() and its contrasts
_CODING_NAMES = frozenset({"C", "Treatment", "Sum", "Helmert", "Diff", "Poly", "levels"})


def _level_weights(level_shares: Mapping[str, Mapping[Any, float]] | None,
                   blocks: Sequence[_CodedBlock]) -> dict[str, np.ndarray]:
    """The assumed share of each level of the factors ``level_shares`` names, in the order of each block's levels:
    the shares given (a level named by its text, as ``"2000"`` for the level 2000, is that level), the levels not
    named sharing the rest equally.  Refused (``InvalidArgumentError``, from the
    arguments and the formula alone) for a variable that is no factor of the design, a level it does not declare,
    or shares that do not leave each level a positive share summing to 1."""
    if not level_shares:
        return {}
    known = {block.variable: block.levels for block in blocks}
    weights = {}
    for variable, shares in level_shares.items():
        if variable not in known:
            raise InvalidArgumentError(
                f"level_shares names {variable!r}, which is no factor of the formula (its factors: "
                f"{', '.join(map(str, known)) or 'none'}); name a factor by the variable it reads")
        levels = known[variable]
        spelled = {str(level): level for level in levels}  # a level named as text (JSON keys of the command line)
        shares = {level if level in levels else spelled.get(str(level), level): v for level, v in shares.items()}
        unknown = [str(level) for level in shares if level not in levels]
        if unknown:
            raise InvalidArgumentError(f"level_shares[{variable!r}] names levels that {variable!r} does not declare: "
                                       f"{', '.join(unknown)} (its levels: {', '.join(map(str, levels))})")
        if not all(finite_real(v) and 0.0 < float(v) < 1.0 for v in shares.values()):
            raise InvalidArgumentError(f"level_shares[{variable!r}] must give each level a share in (0, 1)")
        rest, unnamed = 1.0 - sum(float(v) for v in shares.values()), len(levels) - len(shares)
        if (unnamed and rest <= 0.0) or (not unnamed and abs(rest) > 1e-6):
            raise InvalidArgumentError(
                f"level_shares[{variable!r}] must sum to 1 over its levels, or below 1 with levels left out (they "
                f"share the rest equally); its shares sum to {1.0 - rest:.6g} with {unnamed} levels left out")
        weights[variable] = np.array([float(shares[level]) if level in shares else rest / unnamed
                                      for level in levels])
    return weights


def _correlation_matrix(correlation: Correlation, names: Sequence[str], intercept: int | None
                        ) -> float | np.ndarray:
    """The assumed correlations of the design columns: a common value, or the matrix of the named pairs (the
    others 0), refused unless it is a correlation matrix."""
    if not isinstance(correlation, Mapping):
        return float(correlation)
    index = {name: j for j, name in enumerate(names)}
    unknown = sorted({name for pair in correlation for name in pair} - set(index))
    if unknown:
        raise InvalidArgumentError(f"correlation names columns that are not in the design: {', '.join(unknown)}; "
                                   f"the design's columns are {', '.join(names)}")
    if intercept is not None and any(names[intercept] in pair for pair in correlation):
        raise InvalidArgumentError(f"correlation names the intercept column {names[intercept]!r}, a constant: "
                                   f"name pairs of the other design columns")
    matrix = np.eye(len(names))
    for (first, second), value in correlation.items():
        matrix[index[first], index[second]] = matrix[index[second], index[first]] = float(value)
    varying = [j for j in range(len(names)) if j != intercept]
    if np.linalg.eigvalsh(matrix[np.ix_(varying, varying)])[0] <= 1e-9:
        raise InvalidArgumentError("the correlation pairs given do not form a correlation matrix (some combination "
                                   "of the columns would have a variance <= 0): lower the correlations, or name "
                                   "the pairs that make them consistent")
    return matrix


def _correlation_words(correlation: Correlation) -> str:
    """How the plan's assumptions state the design columns' correlation."""
    if isinstance(correlation, Mapping):
        pairs = ", ".join(f"{value:g} between {first} and {second}" for (first, second), value in correlation.items())
        return f", with correlation {pairs} (other pairs independent)"
    return f", with correlation {correlation:g} between columns" if correlation else ", independent"


def _coefficients(moments: np.ndarray, intercept: int | None, explained: float) -> np.ndarray:
    """Equal standardised slopes that explain ``explained`` of the response's variance (0 at the intercept)."""
    d = moments.shape[0]
    slopes = np.ones(d)
    if intercept is not None:
        slopes[intercept] = 0.0
    mean = moments[:, intercept] if intercept is not None else np.zeros(d)
    cov = moments - np.outer(mean, mean)
    var = float(slopes @ cov @ slopes)
    return slopes * math.sqrt(explained / var) if var > 0 and explained > 0 else np.zeros(d)


# -- one method's expected error ---------------------------------------------------------------------------------

class IntervalStatus(NamedTuple):
    """Whether a planned fit's intervals would be reported: ``kind`` from a fixed vocabulary for code, ``text``
    the reason in words (the plan's ``intervals`` and ``inference`` columns; "not asked" where the plan is not
    at one n and epsilon)."""

    kind: Literal["reported", "withheld", "none", "refused", "not asked"]
    text: str


@dataclass(frozen=True)
class _Point:
    """One method at (n, epsilon), in the user's units."""

    privacy: np.ndarray
    sampling: np.ndarray
    refusal: str = ""
    noise_to_signal: float | None = None

    @property
    def ratio(self) -> np.ndarray:
        return self.privacy / self.sampling


class _Model:
    """What one method gives a planned fit: its calibration's expected error, or a rate."""

    def __init__(self, spec: MethodSpec, setting: _Setting, delta: float, inference: bool,
                 sparsity: int | None, options: Mapping[str, Any] | None = None) -> None:
        self.spec, self.setting, self.delta, self.inference, self.sparsity = spec, setting, delta, inference, sparsity
        self.upper: UpperRate | None = spec.theory_rate(spec.guarantee) if spec.theory_rate is not None else None
        self.rate = self._rate()
        if options and self.upper is not None and self.upper.expected_error is not None:
            raise InvalidArgumentError(
                f"method_options for '{spec.name}': its planned errors come from its calibration, which is that of "
                "its default options; leave its options out of the plan")
        # the options (validated as the fit validates them) enter the method's public refusal, as in the fit
        self.options = (spec.parse_options(dict(options or {}), delta=delta)
                        if spec.public_refusal is not None or options else None)
        self._refusals: dict[tuple[int, float], str] = {}  # the searches ask at the same (n, epsilon) again
        self._design_refusal: str | None = None  # design_refusal, computed once
        self._points: dict[tuple[float, float], _Point] = {}  # at(), by (n, epsilon): the searches ask again
        self._unit_sampling: np.ndarray | None = None  # the sampling sd of each coefficient at one row

    def _rate(self) -> Rate:
        rate = self.upper.rate if self.upper is not None else None
        if rate is not None and (self.sparsity is not None or not rate.needs_sparsity):
            return rate
        return SPARSE_LOWER if self.sparsity is not None else CLASSICAL_LOWER

    @property
    def not_for_planning(self) -> str:
        """Why the method's rate is shown but plans nothing (``UpperRate.not_for_planning``), where the plan uses
        that rate; "" otherwise."""
        if self.upper is not None and self.upper.expected_error is None and self.rate is self.upper.rate:
            return self.upper.not_for_planning
        return ""

    @property
    def kind(self) -> str:
        """``"calibration"`` (the method's own expected error), ``"upper rate"``, ``"not for planning"`` (an upper
        rate whose figures plan nothing: no epsilon or n needed is derived from them) or ``"lower bound"`` (the
        minimax lower bound: the privacy error is then at least this, and the n and epsilon needed at least
        these, up to constants)."""
        if self.upper is not None and self.upper.expected_error is not None:
            return "calibration"
        if self.not_for_planning:
            return "not for planning"
        return "upper rate" if self.rate.kind == "upper" else "lower bound"

    @property
    def label(self) -> str:
        """Which model gives the privacy error, in words."""
        if self.upper is not None and self.upper.expected_error is not None:
            return "the method's calibration (first order in the noise)"
        if self.not_for_planning:
            return (f"{self.rate.label} ({self.rate.source}), up to constants: NOT USABLE FOR PLANNING ("
                    f"{self.not_for_planning}; no epsilon or rows needed are derived from it; after a fit, its error "
                    "block gives the privacy error from the released values)")
        if self.rate.kind == "upper":
            return f"{self.rate.label} ({self.rate.source}), up to constants"
        return f"no rate for this method: the {self.rate.label} ({self.rate.source}), up to constants"

    def rest(self, epsilon: float) -> float:
        """The epsilon a fit asked for ``epsilon`` runs its method on: less the missing-value screen's share where
        a variable's type can hold a missing value (:func:`~dpstats.privacy.missing_screen.fit_epsilon`)."""
        return fit_epsilon(epsilon, bool(self.setting.design.screened))

    def sampling(self, n: float) -> np.ndarray:
        """The sampling sd of each coefficient at n rows: sigma (n E[x x^T])^{-1/2} in the coefficients' units, that
        of one row over sqrt(n) (the pseudo-inverse keeps the same directions at every n)."""
        if self._unit_sampling is None:
            s = self.setting
            self._unit_sampling = _sd(s.scaling.cov_back(sampling_covariance(1.0, s.second_moment,
                                                                             math.sqrt(s.residual_var))))
        return self._unit_sampling / math.sqrt(n)

    def at(self, n: float, epsilon: float) -> _Point:
        """The expected errors at (n, epsilon) (the requested epsilon), computed once per (n, epsilon)."""
        key = (float(n), float(epsilon))
        if key not in self._points:
            self._points[key] = self._at(n, epsilon)
        return self._points[key]

    def _at(self, n: float, epsilon: float) -> _Point:
        s = self.setting
        sampling = self.sampling(n)
        refusal = self.public_refusal(n, epsilon)
        epsilon = self.rest(epsilon)
        if refusal:
            return _Point(np.full(s.d, np.nan), sampling, refusal)
        if self.upper is not None and self.upper.expected_error is not None:
            facts = PlanningFacts(n=int(n), d=s.d, epsilon=epsilon, delta=self.delta, second_moment=s.second_moment,
                                  residual_var=s.residual_var, coefficients=s.coefficients,
                                  x_norm=s.bounds.x_norm, y_abs=s.bounds.y_abs, intercept_index=s.intercept_index,
                                  inference=self.inference)
            expected = self.upper.expected_error(facts)
            if expected.privacy is None:
                return _Point(np.full(s.d, np.nan), sampling, expected.refusal or "refuses")
            return _Point(_sd(s.scaling.cov_back(expected.privacy)), sampling, expected.refusal,
                          expected.noise_to_signal)
        eps = epsilon
        if self.upper is not None and self.rate is self.upper.rate:
            eps, _ = _rate_epsilon(self.upper, epsilon, self.delta, self.inference)
        k = int(self.sparsity or 0)
        ratio = self.rate.privacy_term(n, s.d, eps, self.delta, k) / self.rate.statistical(n, s.d, k)
        return _Point(ratio * sampling, sampling)

    def public_refusal(self, n: float, epsilon: float) -> str:
        """The method's own refusal at (n, epsilon) from public facts, with its options (the default ones unless
        ``method_options`` names them; "" when it fits): the check its fit runs before reading any row
        (``MethodSpec.public_refusal``)."""
        if self.spec.public_refusal is None:
            return ""
        key = (int(n), self.rest(epsilon))
        if key not in self._refusals:
            screened = key[1] != float(epsilon)
            ctx = planned_context(self.spec, self.setting.design, key[0], float(epsilon) if screened else key[1],
                                  self.delta, rescale=self.setting.rescale,
                                  method_epsilon=key[1] if screened else None)
            self._refusals[key] = self.spec.public_refusal(ctx, self.options)
        return self._refusals[key]

    def min_rows(self) -> int:
        return int(self.spec.min_rows(self.setting.d))

    def design_refusal(self) -> str:
        """Why the method refuses this design whatever n and epsilon (more columns than its ``max_columns``, or
        columns dependent for every data set the declarations allow, as the fit's public rank check finds them),
        or ""."""
        if self._design_refusal is None:
            design = self.setting.design
            dependent = [] if self.spec.allows_wide else design.dependent_columns()
            why = design.dependence_reason(dependent)
            singular = (f"the columns {', '.join(repr(c) for c in dependent)} are linearly dependent for every data "
                        f"set the declared bounds and levels allow{' (' + why + ')' if why else ''}: the fit "
                        "refuses the design as singular by construction" if dependent else "")
            self._design_refusal = self.spec.columns_refusal(self.setting.d) or singular
        return self._design_refusal

    def runs(self, n: float) -> bool:
        """The public shape checks of the pipeline (d <= n unless the method allows wide designs, min_rows, at most
        the method's ``max_columns``)."""
        d = self.setting.d
        return n >= self.min_rows() and (n >= d or self.spec.allows_wide) and not self.design_refusal()

    def inference_status(self, point: _Point, n: float, epsilon: float) -> IntervalStatus:
        """Whether the fit's intervals would be reported, by the method's own rules (``MethodSpec.inference_rule``:
        its public size rule, then its withholding rule)."""
        rule = self.spec.inference_rule
        if rule.kind == "none" or not self.inference:
            return IntervalStatus("none", "none")
        if point.refusal:
            return IntervalStatus("refused", "-")
        epsilon = self.rest(epsilon)
        if not rule.reports_at(n, epsilon, self.delta):
            return IntervalStatus("none", "none at this n and epsilon (" + _size_rule(
                rule.min_n_mu, rule.min_n_epsilon, n, epsilon, self.delta) + ")")
        ratio = point.noise_to_signal
        if ratio is not None and rule.withhold_above is not None and not ratio <= rule.withhold_above:
            return IntervalStatus("withheld", f"withheld (expected noise-to-signal {_ratio_text(ratio)}, above "
                                              f"{rule.withhold_above:g})")
        rare = self._rare_outcome(n, epsilon)
        if rare.kind == "withheld":
            return rare
        if ratio is not None and ratio > RELIABILITY_THRESHOLD:
            return IntervalStatus("reported", f"reported, with a warning (expected noise-to-signal "
                                              f"{_ratio_text(ratio)})"
                                              f"{rare.text}")
        return IntervalStatus("reported", "reported" + rare.text)

    def _rare_outcome(self, n: float, epsilon: float) -> IntervalStatus:
        """The method's rare-outcome rule for a two-valued response (``InferenceRule.rare_share``): withheld where
        the assumed ``outcome_share`` triggers it; otherwise "reported" with a note on the condition where no share
        was assumed and the rule applies at this n * mu (``InferenceRule.rare_from_n_mu``; else an empty text)."""
        rule, share = self.spec.inference_rule, self.setting.outcome_share
        if not (rule.rare_share and self.setting.design.two_valued_response):
            return IntervalStatus("reported", "")
        if n * gaussian_mu(epsilon, self.delta) < rule.rare_from_n_mu:
            return IntervalStatus("reported", "")  # the rule applies from rare_from_n_mu only
        if share is None:
            return IntervalStatus("reported", f" (unless the response's rarer value is below {rule.rare_share:g} of "
                                              f"the rows and n * mu(epsilon, delta) times the square of its share "
                                              f"below {rule.rare_min_n_mu_share2:g}: give outcome_share= to check)")
        if rule.withholds_for_outcome(n, epsilon, self.delta, share=share):
            n_mu = n * gaussian_mu(epsilon, self.delta)
            return IntervalStatus("withheld", f"withheld (rare outcome: an assumed share {share:g} of the rarer "
                                              f"value, below {rule.rare_share:g}, and n * mu * share^2 = "
                                              f"{n_mu * share ** 2:.3g} < {rule.rare_min_n_mu_share2:g})")
        return IntervalStatus("reported", "")

    def reports(self, n: float, epsilon: float) -> bool:
        """Whether a fit at (n, epsilon) runs and reports intervals."""
        if self.spec.inference_rule.kind == "none" or not self.inference:
            return False  # (what inference_status says first, without working out the point)
        return self.runs(n) and self.inference_status(self.at(n, epsilon), n, epsilon).kind == "reported"


def _size_rule(min_n_mu: float, min_n_epsilon: float, n: float, epsilon: float, delta: float) -> str:
    """The public size rule a fit at (n, epsilon) misses, in words."""
    if n * epsilon < min_n_epsilon:
        return f"n * epsilon = {_below(n * epsilon, min_n_epsilon)} < {min_n_epsilon:g}"
    return f"n * mu(epsilon, delta) = {_below(n * gaussian_mu(epsilon, delta), min_n_mu)} < {min_n_mu:g}"


def _below(value: float, threshold: float) -> str:
    """``value`` (below ``threshold``) with three significant digits, or with as many more as keep it from printing
    as the threshold ("49.98 < 50", not "50 < 50")."""
    for digits in range(3, 16):
        text = f"{value:.{digits}g}"
        if float(text) < threshold:
            return text
    return repr(value)


def _sd(cov: np.ndarray) -> np.ndarray:
    return np.sqrt(np.maximum(np.diag(cov), 0.0))


# -- searches ----------------------------------------------------------------------------------------------------

def _grid(lo: float, hi: float) -> np.ndarray:
    count = max(2, int(math.ceil(math.log10(hi / lo) * _PER_DECADE)) + 1)
    return np.geomspace(lo, hi, count)


def _bisect(ok: Any, lo: float, hi: float, *, integer: bool, steps: int = 40) -> float:
    """The smallest value in (lo, hi] with ok(value) (ok(lo) false, ok(hi) true), geometrically, or as an integer."""
    for _ in range(steps):
        if integer and hi - lo <= 1:
            return hi
        mid = math.floor((lo + hi) / 2) if integer else math.sqrt(lo * hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if not integer and hi / lo < 1.001:
            break
    return hi


def _smallest(model: _Model, values: np.ndarray, point_at: Any, runs: Any, needed: Any, *, integer: bool
              ) -> np.ndarray:
    """Per coefficient, the smallest value on the grid ``values`` (refined) from which the fit runs and
    ``needed(point) <= 1`` holds up to the end of the grid; inf where it does not hold at the grid's end.  ``needed``
    is log-linear between grid points.  "From which" matters where ``needed`` is not monotone: adassp's privacy
    error is bounded by its shrinkage, so at a handful of rows it can be below a sampling error that is larger
    still, and rise above it before it falls again."""
    d = model.setting.d
    points = [point_at(v) if runs(v) else None for v in values]
    usable = np.array([p is not None and not p.refusal for p in points])
    out = np.full(d, math.inf)
    if not usable.any():
        return out
    first = int(np.argmax(usable))
    start = values[first]
    if first > 0:  # refine the boundary of the refusal (or of the public checks)
        start = _bisect(lambda v: runs(v) and not point_at(v).refusal, values[first - 1], values[first],
                        integer=integer)
    grid = np.concatenate([[start], values[first + 1:]])
    ratios = np.array([needed(point_at(start))] + [needed(p) for p in points[first + 1:]])  # (k, d)
    for j in range(d):
        above = np.flatnonzero(~(ratios[:, j] <= 1.0))  # NaN (no error to compare) counts as not met
        k = int(above[-1]) + 1 if above.size else 0
        if k == len(grid):
            continue
        if k == 0:
            out[j] = grid[0]
            continue
        if not np.isfinite(ratios[k - 1, j]):  # nothing to interpolate from: the grid point itself
            out[j] = grid[k]
            continue
        a, b = math.log(ratios[k - 1, j]), math.log(ratios[k, j])
        t = a / (a - b) if a != b else 1.0
        value = math.exp(math.log(grid[k - 1]) + t * (math.log(grid[k]) - math.log(grid[k - 1])))
        out[j] = min(max(math.ceil(value) if integer else value, grid[k - 1]), grid[k])
    return out


#: chosen(n, epsilon): the model of the method a fit at (n, epsilon) would run (None: auto chooses none there)
Chooser = Callable[[float, float], "_Model | None"]


def _fixed(model: _Model) -> Chooser:
    """The planned method at every (n, epsilon)."""
    return lambda n, epsilon: model


def _auto_chooser(model: _Model) -> Chooser:
    """The model of the method ``method="auto"`` chooses at (n, epsilon), as the fit chooses it (its choice changes
    with n and epsilon; ``model`` is its choice at the planned point)."""
    s = model.setting
    models: dict[str, _Model] = {model.spec.name: model}

    def chosen(n: float, epsilon: float) -> _Model | None:
        choice = choose_auto(auto_facts(s.design, int(n), model.rest(epsilon), model.delta))
        if choice is None:
            return None
        spec = choice[0]
        if spec.name not in models:
            models[spec.name] = _Model(spec, s, model.delta, model.inference, model.sparsity)
        return models[spec.name]

    return chosen


def _point(model: _Model, chosen: Chooser, n: float, epsilon: float) -> _Point:
    """The expected errors at (n, epsilon) of the method ``chosen`` runs there; no privacy error (never "needed")
    where none is chosen or its rate plans nothing (the sampling error is the design's, whatever the method)."""
    run = chosen(n, epsilon)
    if run is None or run.not_for_planning:
        return _Point(np.full(model.setting.d, math.nan), model.sampling(n), "no method planned at this n and epsilon")
    return run.at(n, epsilon)


def _epsilon_needed(model: _Model, n: int, chosen: Chooser | None = None) -> np.ndarray:
    """At n rows: the smallest epsilon with privacy <= sampling, per coefficient (inf: not below MAX_EPSILON), for
    the method ``chosen`` runs at each epsilon (default: ``model`` at every epsilon; for ``method="auto"``, its
    choice there, so that the epsilon needed is that of the method a fit at that epsilon would run)."""
    if not model.runs(n):
        return np.full(model.setting.d, math.nan)  # refused at n whatever epsilon (the refusal column says why)
    chosen = chosen or _fixed(model)
    return _smallest(model, _grid(*EPSILON_SEARCH), lambda e: _point(model, chosen, n, e), lambda e: True,
                     lambda p: p.ratio, integer=False)


def _n_needed(model: _Model, epsilon: float, target: np.ndarray | None = None, chosen: Chooser | None = None
              ) -> np.ndarray:
    """At epsilon: the smallest n (from min_rows, where the fit runs) with privacy <= sampling, or with a total
    error at most ``target``, per coefficient, for the method ``chosen`` runs at each n (as in
    :func:`_epsilon_needed`)."""
    d = model.setting.d
    lo = float(max(model.min_rows(), 2 if model.spec.allows_wide else d + 1))
    grid = np.unique(np.ceil(_grid(lo, N_SEARCH_MAX)))
    chosen = chosen or _fixed(model)

    def needed(p: _Point) -> np.ndarray:
        if target is None:
            return p.ratio
        return np.hypot(p.privacy, p.sampling) / target

    def runs(n: float) -> bool:
        run = chosen(n, epsilon)
        return run is not None and run.runs(n)

    return _smallest(model, grid, lambda n: _point(model, chosen, n, epsilon), runs, needed, integer=True)


#: reports(n, epsilon): whether a fit at (n, epsilon) runs and reports intervals
Reports = Callable[[float, float], bool]


def _first(reports: Callable[[float], bool], values: np.ndarray, *, integer: bool) -> float:
    """The smallest value of the grid ``values``, refined by bisection, from which ``reports`` holds at every
    larger grid value; inf where it fails at the last.  (A rare-outcome rule that applies only from some n * mu can
    give intervals at a small n, withhold them above, and give them again at a larger n: the plan names where they
    are given for good.)"""
    held = [bool(reports(float(value))) for value in values]
    if not held[-1]:
        return math.inf
    k = len(held) - 1
    while k > 0 and held[k - 1]:
        k -= 1
    return float(values[k]) if k == 0 else _bisect(reports, float(values[k - 1]), float(values[k]), integer=integer)


def _interval_n(model: _Model, reports: Reports, epsilon: float) -> float:
    """At epsilon: the smallest n from which the fit reports intervals (inf: none up to ``N_SEARCH_MAX``)."""
    d = model.setting.d
    lo = float(max(2 if model.spec.allows_wide else d + 1, 2))
    return _first(lambda n: reports(n, epsilon), np.unique(np.ceil(_grid(lo, N_SEARCH_MAX))), integer=True)


def _interval_epsilon(reports: Reports, n: int) -> float:
    """At n rows: the smallest epsilon from which the fit reports intervals (inf: none up to the largest)."""
    return _first(lambda e: reports(n, e), _grid(*EPSILON_SEARCH), integer=False)


def _reporter(model: _Model, chosen: Chooser | None = None) -> Reports:
    """``reports(n, epsilon)`` of the planned method, or, with ``chosen`` (``method="auto"``), of the method auto
    chooses at (n, epsilon) (its choice changes with them)."""
    if chosen is None:
        return model.reports

    def reports(n: float, epsilon: float) -> bool:
        run = chosen(n, epsilon)
        return run is not None and run.reports(n, epsilon)

    return reports


# -- the plan ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """The answer of :func:`dpstats.plan` in the coefficients' units: a table (``str(plan)``, HTML in Jupyter) and
    a DataFrame (:meth:`to_frame`), one row per method and coefficient.

    Columns: ``privacy`` and ``sampling`` (expected errors at ``n`` and
    ``epsilon``, in the coefficient's units), ``ratio`` (privacy / sampling),
    ``epsilon_needed`` (at ``n``: the smallest epsilon with privacy <=
    sampling), ``n_needed`` (at ``epsilon``: the smallest n with privacy <=
    sampling, at least ``min_rows`` and where the method's checks pass),
    ``n_for_target`` (at ``epsilon``: the smallest n with a total error at most
    the target), ``min_rows`` (the method's public minimum), ``refusal`` (why
    the fit would refuse at ``n``), ``intervals`` (whether its intervals would
    be reported, by the method's own rules: ``"reported"``, ``"withheld"``,
    ``"none"``, ``"refused"``, or ``"not asked"`` without both ``n`` and
    ``epsilon``), ``inference`` (the same in words, with the reason), ``noise_to_signal`` (the released
    diagnostic of X^T X it is expected to show; above 0.3 the first-order
    privacy error is optimistic), ``model`` (where the privacy error
    comes from, in words) and ``kind`` (``"calibration"``, ``"upper rate"``,
    ``"not for planning"``: a rate whose figures plan nothing, with no epsilon
    or n needed, or ``"lower bound"``: then the privacy error, the epsilon and
    the n needed are at least the values shown).  NaN where a question was not asked; inf
    where no n up to 1e12 (no epsilon up to the largest supported) suffices.
    """

    frame: pd.DataFrame
    assumed: tuple[_Spelled, ...]  # each assumption once; :meth:`lines` spells the options it names
    facts: Mapping[str, Any]

    @property
    def assumptions(self) -> tuple[str, ...]:
        """The plan's assumptions in words, the options they name as :func:`dpstats.plan`'s keyword arguments."""
        return self._assumptions("python")

    def to_frame(self) -> pd.DataFrame:
        """The plan as a DataFrame (a copy)."""
        return self.frame.copy()

    def _blocks(self) -> list[tuple[str, pd.DataFrame]]:
        """One table per planned method; auto's choice is its own table ("auto: pgd"), also beside the same method
        asked for by name (whose searches stay that method's own)."""
        return [(f"auto: {method}" if by_auto else str(method), rows)
                for (method, by_auto), rows in self.frame.groupby(["method", "auto"], sort=False)]

    def _header(self) -> str:
        f = self.facts
        where = ", ".join(f"{k}={_fmt(v)}" for k, v in (("n", f.get("n")), ("epsilon", f.get("epsilon")),
                                                           ("delta", f.get("delta"))) if v is not None)
        return f"Plan ({where}; errors in the units of each coefficient)"

    def _auto_line(self, spelling: str = "python") -> str:
        """Which method dp_ols's default would fit, for a plan of every method; "" otherwise."""
        chosen = self.facts.get("auto_choice")
        if not chosen:
            return ""
        rows = self.frame[self.frame["method"] == chosen]
        refused = not rows.empty and bool(rows.iloc[0]["refusal"])
        auto = option("method", "auto", spelling)
        default, alone = (("dpstats fit's default", f"dpstats plan {auto}") if spelling == "cli"
                          else ("dp_ols's default", f"plan(..., {auto})"))
        return (f"{auto} ({default}) would fit '{chosen}' at this n and epsilon"
                + (", which refuses this design (its table says why)" if refused else "")
                + f"; {alone} gives its table alone")

    def _assumptions(self, spelling: str) -> tuple[str, ...]:
        """The assumptions with the options they name in ``spelling``."""
        return tuple(a.spelled(spelling) for a in self.assumed)

    def lines(self, spelling: str = "python") -> list[str]:
        """The plan as plain-text lines.

        Parameters
        ----------
        spelling : {"python", "cli"}
            How the text names the options it mentions (:data:`SPELLINGS`): as :func:`dpstats.plan`'s keyword
            arguments (``method='auto'``, ``dtypes=``), or as the flags of ``dpstats plan`` and ``dpstats fit``
            (``--method auto``, ``--dtypes``).  The texts the plan takes from the methods (a refusal, the
            intervals' reason, the privacy error's model) are shown as the methods write them.

        Returns
        -------
        list of str
            The lines.
        """
        option("method", spelling=spelling)  # refuses an unknown spelling
        auto_line = self._auto_line(spelling)
        out = [self._header(), *([auto_line] if auto_line else []), ""]
        for method, rows in self._blocks():
            first = rows.iloc[0]
            status = _status(first, spelling)
            out.append(f"{method}: {status}; at least {int(first['min_rows'])} rows; privacy error from "
                       f"{first['model']}" + (_LOWER_BOUND_CAVEAT if first["kind"] == "lower bound" else "")
                       + _optimistic(first["noise_to_signal"]))
            out += _text_table(_shown(rows, first)).splitlines()
            out.append("")
        out += ["Assumptions: " + "; ".join(self._assumptions(spelling)) + ".", floor_note(spelling)]
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    __repr__ = __str__

    def _repr_html_(self) -> str:
        parts = [f"<p><b>{html.escape(self._header())}</b></p>"]
        if self._auto_line():
            parts.append(f"<p>{html.escape(self._auto_line())}</p>")
        for method, rows in self._blocks():
            first = rows.iloc[0]
            status = _status(first)
            parts.append(f"<p>{html.escape(method)}: {html.escape(status)}; privacy error from "
                         f"{html.escape(str(first['model']) + _optimistic(first['noise_to_signal']))}</p>")
            parts.append(_shown(rows, first).to_html(float_format=_fmt))
        parts.append("<p><small>Assumptions: " + html.escape("; ".join(self.assumptions)) + ". "
                     + html.escape(FLOOR_NOTE) + "</small></p>")
        return "\n".join(parts)


#: what every printed plan says under its assumptions (measured in session 41's new-user check: 29 pgd cells of ten
#: real regressions, planned with the default assumptions, against 10 fits each; session 43's: 31 cells of eleven
#: more, with the data's dtypes and an R^2 from the literature, root mean square of (released - least squares) over
#: 10 fits: median 1.9, 4.7 and 5.0 on the zero-inflated counts Somerville and grouseticks at epsilon 3; both
#: before pgd's plan divided out its shrinkage, which raised its figures where n * mu is small: on birthwt, 189
#: births, benchmarks/plan_calibration.py measured smoke's plan at 2.4 to 4.4 times the fits' error below
#: n * mu = 30; pgd with missing="drop" withheld its intervals, from its count of complete rows, in 5 of 20 fits on
#: survival's lung (228 rows, 213 complete) at epsilon 0.5, where the plan says reported: session 47's check; pgd
#: with a two-valued response withheld them by its rule for a rare outcome, from a released share of the rarer value
#: that its noise took below 0.1, in 6 and 3 of 20 fits on uis (575 rows, 19% zeros) at epsilon 0.5 and 1, where the
#: plan with outcome_share=0.19 says reported, and in 4 of 20 on Greene (384 rows, 30%) at epsilon 0.5: session 48's;
#: since that rule applies from n * mu = 100 only, uis's 3 of 20 at epsilon 1, n * mu 134, remain)
def floor_note(spelling: str = "python") -> str:
    """:data:`FLOOR_NOTE` with the options it names in ``spelling`` (:data:`SPELLINGS`)."""
    return ("Real data rarely match these assumptions: columns that fill less of their declared ranges, "
            "correlated columns and skewed residuals make the errors larger (on 21 real regressions, pgd's "
            "measured error was a median about 2 times this plan's, up to 5 times on skewed counts), and a "
            "method that decides a refusal or withholds its intervals from released values (noisy_ols, ssp, "
            f"adassp, tukey; pgd with {option('missing', 'drop', spelling)}, where its released count of complete "
            "rows times mu is below 15, a count whose noise at a small n and epsilon can be a large share of n; pgd "
            "with a two-valued response, whose released share of the rarer value, noisy at a small n and epsilon, "
            "can fall below 0.1 where the share in the data is well above it) can do so where the plan says "
            "reported. Read the figures as a floor (except pgd's where n * mu(epsilon, delta) is small: there they "
            "are those of its estimate with its shrinkage divided out, above its released coefficients' distance "
            f"from least squares); {option('spread', spelling=spelling)} and "
            f"{option('correlation', spelling=spelling)} bring them closer.")


FLOOR_NOTE = floor_note()


def _status(first: pd.Series, spelling: str = "python") -> str:
    """The refusal, or whether intervals are reported and from which n (at epsilon) or epsilon (at n) they
    would be, in words (``method='auto'`` in ``spelling``)."""
    prefix = f"chosen by {option('method', 'auto', spelling)}; " if first["auto"] else ""
    if first["refusal"]:  # its own sentence ends the fit's message; here a clause of the line, before "; at least"
        return f"{prefix}refuses: {str(first['refusal']).rstrip('.')}"
    status = f"{prefix}intervals: {first['inference']}" if first["inference"] else f"{prefix}intervals"
    if first["intervals"] == "reported":
        return status
    where = []
    if math.isfinite(first["interval_n"]):
        where.append(f"from n >= {int(first['interval_n']):,} at this epsilon")
    if math.isfinite(first["interval_epsilon"]):
        where.append(f"from epsilon >= {at_least(first['interval_epsilon'])} at this n")
    if not where:
        return f"{prefix}intervals: none" + ("" if first["inference"] in ("", "none") else f" ({first['inference']})")
    return status + (": reported " if not first["inference"] else "; reported ") + " or ".join(where)


def _optimistic(ratio: float) -> str:
    """The caveat of a first-order privacy error where the noise of X^T X is not small (the expected released
    noise-to-signal ratio above the reliability threshold of :mod:`dpstats.inference`)."""
    if not ratio > RELIABILITY_THRESHOLD:
        return ""
    return (f"; the noise of X^T X is not small at this n and epsilon (expected noise-to-signal "
            f"{_ratio_text(ratio)}), so the first-order privacy error is optimistic")


def _ratio_text(ratio: float) -> str:
    """An expected noise-to-signal ratio in words, as a fit shows a released one (:func:`format_ratio`), with what
    an unbounded one means (:func:`dpstats.inference.expected_noise_to_signal` is inf when the expected noise of
    X^T X is above its smallest eigenvalue)."""
    if math.isfinite(ratio):
        return format_ratio(ratio)
    return format_ratio(ratio) + ": the expected noise of X^T X swamps its smallest eigenvalue"


#: What a plan from the minimax lower bound can and cannot say.
_LOWER_BOUND_CAVEAT = (" (so at least the values shown: the method's own privacy error can be many times larger, and "
                       "the epsilon and rows needed are necessary, not sufficient; after a fit, its error block gives "
                       "the privacy error from the released values)")

_SHOWN = ["term", "privacy", "sampling", "ratio", "epsilon_needed", "n_needed", "n_for_target"]
_LABELS = {"privacy": "privacy", "sampling": "sampling", "ratio": "priv/samp", "epsilon_needed": "eps needed",
           "n_needed": "rows needed", "n_for_target": "rows for target"}


def _labels(first: pd.Series) -> dict[str, str]:
    """The table's column labels; from a lower bound the epsilon and rows needed are only necessary, never
    sufficient, and the labels say so (the method's actual privacy error can be many times larger)."""
    if first["kind"] != "lower bound":
        return _LABELS
    return {**_LABELS, "epsilon_needed": "eps needed (at least)", "n_needed": "rows needed (at least)",
            "n_for_target": "rows for target (at least)"}


def _shown(rows: pd.DataFrame, first: pd.Series) -> pd.DataFrame:
    """One method's rows as its table shows them: the shown columns under their labels, by term, the epsilon needed
    rounded up (printed to nearest, an epsilon that still misses could show as the one needed)."""
    shown_rows = rows[_SHOWN].copy()
    shown_rows["epsilon_needed"] = [at_least(float(v)) if math.isfinite(v) and v > 0 else v
                                    for v in shown_rows["epsilon_needed"].astype(float)]
    return shown_rows.rename(columns=_labels(first)).set_index("term")


def _fmt(value: Any) -> str:
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "never"
        return f"{int(value):,}" if float(value).is_integer() and abs(float(value)) >= 100 else f"{value:.3g}"
    return str(value)


def _text_table(frame: pd.DataFrame) -> str:
    frame = frame.dropna(axis=1, how="all")
    cells = [[str(frame.index.name or "")] + list(frame.columns)]
    cells += [[str(i)] + [_fmt(v) for v in row]
              for i, row in zip(frame.index, frame.itertuples(index=False), strict=True)]
    widths = [max(len(r[j]) for r in cells) for j in range(len(cells[0]))]
    lines = ["  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths, strict=True)))
             for r in cells]
    return "\n".join(["  " + lines[0], "  " + "-" * len(lines[0]), *("  " + x for x in lines[1:])])


def _methods(method: str | Sequence[str] | None, n: int | None, setting: _Setting, epsilon: float | None,
             delta: float) -> list[tuple[MethodSpec, bool]]:
    """The planned methods, each with True when it is the one ``auto`` would choose at n: one, several, or every
    private one (None)."""
    if method is None:
        return [(spec, False) for _, spec in sorted(available_methods().items()) if spec.private]
    names = [method] if isinstance(method, str) else list(method)
    specs = []
    for name in names:
        if name == "auto":
            rest = None if epsilon is None else fit_epsilon(epsilon, bool(setting.design.screened))
            specs.append((_auto(n, setting.design, rest, delta), True))
            continue
        spec = get_method(name)
        if not spec.private:
            raise UnknownMethodError(f"method '{name}' is not private: there is nothing to plan")
        specs.append((spec, False))
    return specs


def _auto_choice(method: str | Sequence[str] | None, n: int | None, setting: _Setting, epsilon: float | None,
                 delta: float) -> str | None:
    """For a plan of every private method (``method`` None) at a given n and epsilon, the name of the one
    ``method="auto"`` (dp_ols's default) would fit; None otherwise, or where auto finds none."""
    if method is not None or n is None or epsilon is None:
        return None
    try:
        return _auto(n, setting.design, fit_epsilon(epsilon, bool(setting.design.screened)), delta).name
    except InvalidArgumentError:
        return None


def _auto(n: int | None, design: Any, epsilon: float | None, delta: float) -> MethodSpec:
    """The method ``method="auto"`` chooses for the planned design, from public facts
    (:func:`~dpstats.pipeline.auto_facts`, as the fit: n, d, epsilon, delta, the intercept, whether the response
    takes two values, ``missing="drop"``'s null rows; the registry: :func:`~dpstats.methods.registry.choose_auto`)."""
    if n is None or epsilon is None:
        raise InvalidArgumentError("plan(method='auto') needs n and epsilon: auto chooses from n, d, epsilon and "
                                   "delta")
    chosen = choose_auto(auto_facts(design, int(n), epsilon, delta))
    if chosen is None:
        raise InvalidArgumentError(f"method='auto' finds no method for n={n}, d={design.d}, epsilon={epsilon:g}")
    return chosen[0]


def _check(n: int | None, epsilon: float | None, delta: float, residual_sd: float | None, rsquared: float | None,
           correlation: Correlation) -> None:
    """Refuse the plan's public arguments with typed errors that say what to fix."""
    if n is None and epsilon is None:
        raise InvalidArgumentError("plan needs n (to find the epsilon needed), epsilon (to find the rows "
                                   "needed), or both")
    if n is not None and (isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, float, np.number))
                          or not finite_real(n) or not float(n).is_integer() or not 1 <= n <= MAX_PLANNED_ROWS):
        raise InvalidArgumentError(f"n must be a whole number of rows >= 1 and at most 2**53 (where floats stop "
                                   f"counting every whole number), got {shown(n)}")
    if epsilon is not None and not (isinstance(epsilon, (int, float)) and 0 < epsilon <= MAX_EPSILON):
        raise InvalidPrivacyParameterError(f"epsilon must lie in (0, {MAX_EPSILON:g}], got {shown(epsilon)}")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise InvalidPrivacyParameterError(f"delta must lie strictly between 0 and 1, got {shown(delta)}")
    if residual_sd is not None and rsquared is not None:
        raise InvalidArgumentError("give residual_sd or rsquared, not both")
    if residual_sd is not None and not (isinstance(residual_sd, (int, float)) and finite_real(residual_sd)
                                        and residual_sd > 0):
        raise InvalidArgumentError(f"residual_sd must be a finite number > 0 (in the response's units), got "
                                   f"{shown(residual_sd)}")
    if rsquared is not None and not (isinstance(rsquared, (int, float)) and 0 <= rsquared < 1):
        raise InvalidArgumentError(f"rsquared must lie in [0, 1), got {shown(rsquared)}")
    if isinstance(correlation, Mapping):
        _check_correlation_pairs(correlation)
    elif not (finite_real(correlation) and -0.5 < correlation < 1):
        raise InvalidArgumentError(f"correlation must be a number in (-0.5, 1) or a dict of column pairs, got "
                                   f"{shown(correlation)}")


#: the most rows a plan takes: beyond 2**53 a float no longer counts every whole number, and the rates' arithmetic
#: (squares of counts, histogram caps) leaves the float range
MAX_PLANNED_ROWS = 2**53


def _check_more(sparsity: object, method: object, target: object, spread: object) -> None:
    """Refuse ``sparsity=``, ``method=``, ``target=`` and ``spread=`` of the wrong type or range with typed errors
    that say what to fix (public arguments; before, a list or an infinite value reached the arithmetic)."""
    if sparsity is not None and not (isinstance(sparsity, (int, np.integer)) and not isinstance(sparsity, bool)
                                     and 1 <= sparsity <= MAX_PLANNED_ROWS):
        raise InvalidArgumentError(f"sparsity must be a whole number >= 1 (the non-zero coefficients the lasso "
                                   f"releases), got {shown(sparsity)}")
    if method is not None and not isinstance(method, str) and not (
            isinstance(method, Sequence) and len(method) > 0 and all(isinstance(m, str) for m in method)):
        raise InvalidArgumentError(f"method must be a method's name, a non-empty list of names, or None (every "
                                   f"private method), got {shown(method)}")

    def positive(value: object) -> bool:
        return finite_real(value) and value > 0  # type: ignore[operator]

    if target is not None:
        values = list(target.values()) if isinstance(target, Mapping) else [target]
        if isinstance(target, Mapping) and not all(isinstance(k, str) for k in target):
            raise InvalidArgumentError("target= as a mapping names design columns by strings, e.g. {'x': 0.1}")
        if not all(positive(v) for v in values):
            raise InvalidArgumentError(f"target must be a finite error > 0 in the coefficients' units (or a dict of "
                                       f"such errors by design column), got {shown(target)}")
    if spread is not None:
        if not isinstance(spread, Mapping) or not all(isinstance(k, str) for k in spread):
            raise InvalidArgumentError(f"spread= must be a dict from design column names to sds, e.g. "
                                       f"spread={{'x': 2.0}}; got {shown(spread)}")
        bad = [k for k, v in spread.items() if not positive(v)]
        if bad:
            raise InvalidArgumentError(f"spread[{bad[0]!r}] must be a finite sd > 0 (in the column's units), got "
                                       f"{shown(spread[bad[0]])}")


def _check_correlation_pairs(correlation: Mapping[Any, Any]) -> None:
    """Refuse a ``correlation=`` mapping that is not ``{(column, other column): r}`` with r in (-1, 1)."""
    for pair, value in correlation.items():
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(name, str) for name in pair)
                and pair[0] != pair[1]):
            raise InvalidArgumentError(f"correlation= keys are pairs of two design column names, e.g. "
                                       f"{{('x1', 'x2'): 0.8}}; got the key {shown(pair)}")
        if isinstance(value, bool) or not (finite_real(value) and -1 < value < 1):
            raise InvalidArgumentError(f"the correlation of {pair[0]} and {pair[1]} must be a number in (-1, 1), "
                                       f"got {shown(value)}")


def _check_declarations(bounds: object, levels: object, dtypes: object) -> None:
    """Refuse ``bounds=``, ``levels=`` or ``dtypes=`` that is not a mapping from the variables' names (strings, as
    the formula writes them), and a type in ``dtypes`` that pandas does not understand, with typed errors that say
    what to fix (as :func:`dpstats.dp_ols` refuses them)."""
    check_declarations(bounds, levels)
    if dtypes is not None and not isinstance(dtypes, Mapping):
        raise InvalidArgumentError(f"dtypes= must be a dict from names to types, e.g. dtypes={{'y': bool}}; got a "
                                   f"{type(dtypes).__name__}")
    for name, declared, error in (("bounds", bounds, InvalidBoundsError), ("levels", levels, InvalidArgumentError),
                                  ("dtypes", dtypes, InvalidArgumentError)):
        keys = [k for k in declared or {} if not isinstance(k, str)]  # type: ignore[attr-defined]
        if keys:
            raise error(f"{name}= must name each variable by a string, as the formula writes it (e.g. "
                        f"{name}={{'x': ...}}); got a key of type {type(keys[0]).__name__}")
    for name, values in (levels or {}).items():  # type: ignore[attr-defined]
        declared_level_values(name, values)  # as dp_ols refuses them (before, pandas' own error escaped)
    for name, dtype in (dtypes or {}).items():
        try:
            pd.api.types.pandas_dtype(dtype)
        except (TypeError, ValueError):
            raise InvalidArgumentError(f"dtypes[{name!r}] is not a type pandas understands; give a numpy or pandas "
                                       "type, e.g. float, int, bool or 'Int64'") from None


def _targets(target: float | Mapping[str, float] | None, names: list[str]) -> np.ndarray | None:
    if target is None:
        return None
    if isinstance(target, Mapping):
        unknown = sorted(set(target) - set(names))
        if unknown:
            raise InvalidArgumentError(f"target names terms that are not in the design: {', '.join(unknown)}")
        values = np.array([float(target.get(name, math.inf)) for name in names])
    else:
        values = np.full(len(names), float(target))
    if not np.all(values > 0):
        raise InvalidArgumentError(f"target must be a positive error in the coefficients' units, got {shown(target)}")
    return values


def coefficient_plan(*, bounds: Mapping[str, tuple[float, float]], formula: str | None = None,
                     levels: Mapping[str, Sequence[Any]] | None = None, response: str | None = None,
                     n: int | None = None, epsilon: float | None = None, delta: float = DEFAULT_DELTA,
                     method: str | Sequence[str] | None = None, target: float | Mapping[str, float] | None = None,
                     residual_sd: float | None = None, rsquared: float | None = None,
                     spread: Mapping[str, float] | None = None, correlation: Correlation = 0.0,
                     inference: bool = True, sparsity: int | None = None, dtypes: Mapping[str, Any] | None = None,
                     outcome_share: float | None = None, missing: str = "raise",
                     rescale: bool | str = DEFAULT_RESCALE,
                     method_options: Mapping[str, Mapping[str, Any]] | None = None,
                     level_shares: Mapping[str, Mapping[Any, float]] | None = None) -> Plan:
    """Plan a fit in the coefficients' units (module docstring); called by :func:`dpstats.plan`.

    Parameters
    ----------
    bounds : mapping
        Declared (public) ranges of the variables, response included, as for :func:`dpstats.dp_ols`.
    formula : str, optional
        The model (default: ``response ~`` every other bounded variable and every factor of ``levels``).
    levels : mapping, optional
        Declared levels of the factors.
    response : str, optional
        The response among the bounds when no formula is given (default ``"y"``).
    n : int, optional
        Rows: the plan then gives the epsilon each coefficient needs.
    epsilon : float, optional
        Budget: the plan then gives the rows each coefficient needs.
    delta : float
        The fit's delta (default 1e-6).
    method : str, sequence of str or None
        The method(s) to plan (``"auto"``: the one auto would choose at ``n``); None: every private method.
    target : float or mapping, optional
        A total error (coefficient units; per term with a mapping) for ``n_for_target``.
    residual_sd, rsquared : float, optional
        The assumed residual sd (response units) or R^2 (default R^2 = 0 of a response uniform on its range).
    spread : mapping, optional
        Assumed sd of design columns (by design column name; default: uniform on the declared range, a factor's
        levels equally common); for a product or power column that ``rescale="centred"`` centres (``x:z``,
        ``I(x ** 2)``), the sd of its centred form.
    correlation : float or mapping
        Assumed common correlation between design columns (default 0), or the correlations of named pairs of
        design columns, ``{("x1", "x2"): 0.8}``, the other pairs independent.
    inference : bool
        The fit's ``inference`` option (its share of the budget for standard errors).
    sparsity : int, optional
        s for the sparse rates (lasso, the sparse lower bound).
    dtypes : mapping, optional
        The data's column types (public), e.g. ``dict(df.dtypes)``: read as the fit reads them, so that a boolean
        response, or an integer one declared between consecutive integers, is two-valued for ``method="auto"``
        (default: every bounded variable a float).
    outcome_share : float, optional
        For a two-valued response: the assumed share of its rarer value, in (0, 0.5] (an assumption, not read from
        data), so that ``inference``, ``interval_n`` and ``interval_epsilon`` follow a method's rare-outcome rule
        (pgd withholds its intervals where that share is below 0.1 and n * mu(epsilon, delta) times its square
        below 3; the fit reads the share off a released value).  Without it the plan notes the condition.
    missing : {"raise", "drop"}
        The fit's ``missing=`` (default "raise": the missing-value screen where a type can hold a missing value).
    rescale : "centred" (default) or True
        The fit's ``rescale=``: ``"centred"`` plans the fit whose product and power columns have their variables
        centred at the midpoints of their declared ranges (``spread`` and ``correlation`` then describe those
        centred columns), mapped back to the formula's columns as the fit does; True plans the columns as written.
        False (the raw design) is not planned.
    method_options : mapping of str to mapping, optional
        Options of planned methods, as the fit takes them, e.g. ``{"tukey": {"m": 2000, "ptr": "mass"}}``: validated
        as the fit validates them, and used by the method's refusal checks on public facts (``refusal``, and the
        ``n_needed`` and ``epsilon_needed`` that start where it stops refusing). Not for a method whose planned
        error comes from its calibration (that of its default options): refused.
    level_shares : mapping of str to mapping, optional
        The assumed share of levels of factors, by the variable a factor reads, e.g. ``{"income": {"lt $1000":
        0.012}}`` (from a codebook's published frequencies, never from the private data): the levels not named share
        the rest equally (default: every level equally common).  A rare level's dummy then has the small spread it
        will have in the data, and its planned error the size the fit's will have.

    Returns
    -------
    Plan
    """
    _check(n, epsilon, delta, residual_sd, rsquared, correlation)
    _check_more(sparsity, method, target, spread)
    _check_declarations(bounds, levels, dtypes)
    if not (isinstance(missing, str) and missing in ("raise", "drop")):
        raise InvalidArgumentError(f"missing must be 'raise' (default) or 'drop', as in dp_ols; got {shown(missing)}")
    mode = rescale_mode(rescale)
    if mode == "off":
        raise InvalidArgumentError("plan() plans a fit with the public rescaling (rescale='centred', the default, "
                                   "or True); a fit on the raw design (rescale=False) is not planned")
    _check_outcome_share(outcome_share)
    setting = _setting(formula, bounds, levels, response, residual_sd, rsquared, spread, correlation, dtypes,
                       missing, rescale=mode, outcome_share=outcome_share, level_shares=level_shares)
    if outcome_share is not None:
        setting = _with_outcome_share(setting, outcome_share)
    targets = _targets(target, setting.names)
    methods = _methods(method, n, setting, epsilon, delta)
    options = _planned_options(method_options, [spec.name for spec, auto in methods if not auto])
    records, models = [], []
    for spec, auto in methods:
        models.append(_Model(spec, setting, delta, inference, sparsity, None if auto else options.get(spec.name)))
        records += _method_rows(models[-1], n, epsilon, targets, auto)
    frame = pd.DataFrame.from_records(records, columns=_COLUMNS)
    facts = {"n": n, "epsilon": epsilon, "delta": delta, "names": setting.names,
             "auto_choice": _auto_choice(method, n, setting, epsilon, delta)}
    planned = [_Spelled.plain(text) for text in _planned_errors(models)]  # the methods' own words
    planned += [_Spelled.plain(_options_words(name, given)) for name, given in options.items() if given]
    return Plan(frame, (*setting.assumptions, *planned), facts)


def _planned_errors(models: Sequence[_Model]) -> list[str]:
    """What the planned methods' calibrations give as the privacy error where it is not the released coefficients'
    distance from least squares (``UpperRate.planned_error``), each once."""
    notes = [m.upper.planned_error for m in models if m.upper is not None and m.upper.planned_error]
    return list(dict.fromkeys(notes))


def _method_rows(model: _Model, n: int | None, epsilon: float | None, targets: np.ndarray | None,
                 auto: bool = False) -> list[dict[str, Any]]:
    d = model.setting.d
    nan = np.full(d, np.nan)
    privacy, sampling, refusal, status, ratio = nan, nan, "", IntervalStatus("not asked", ""), math.nan
    if model.design_refusal():
        refusal, status = model.design_refusal(), IntervalStatus("refused", "")
    elif n is not None and not model.runs(n):
        refusal = f"n={n} is below the method's minimum of {model.min_rows()} rows for d={d}"
        status = IntervalStatus("refused", "")
    elif n is not None and epsilon is not None:
        point = model.at(n, epsilon)
        privacy, sampling, refusal = point.privacy, point.sampling, point.refusal
        status = model.inference_status(point, n, epsilon)
        ratio = math.nan if point.noise_to_signal is None else point.noise_to_signal
    elif n is not None:
        sampling = model.at(n, 1.0).sampling
    chosen = _auto_chooser(model) if auto else None  # auto's choice changes with n and epsilon, as the fit's
    reports = _reporter(model, chosen)
    interval_n = _interval_n(model, reports, epsilon) if epsilon is not None else math.nan
    interval_epsilon = _interval_epsilon(reports, int(n)) if n is not None else math.nan
    plans = not model.not_for_planning  # a rate not for planning gives no epsilon or n needed
    eps_needed = _epsilon_needed(model, int(n), chosen) if n is not None and plans else nan
    n_needed = _n_needed(model, epsilon, chosen=chosen) if epsilon is not None and plans else nan
    n_target = nan
    if epsilon is not None and targets is not None and plans:
        n_target = np.where(np.isfinite(targets), _n_needed(model, epsilon, targets, chosen), np.nan)  # NaN: no target
    return [{"method": model.spec.name, "term": term, "n": n, "epsilon": epsilon, "privacy": privacy[j],
             "sampling": sampling[j], "ratio": privacy[j] / sampling[j], "epsilon_needed": eps_needed[j],
             "n_needed": n_needed[j], "n_for_target": n_target[j], "min_rows": model.min_rows(),
             "refusal": refusal, "intervals": status.kind, "inference": status.text, "interval_n": interval_n,
             "interval_epsilon": interval_epsilon,
             "auto": auto, "noise_to_signal": ratio, "model": model.label,
             "kind": model.kind}
            for j, term in enumerate(model.setting.names)]


#: the arguments of :func:`plan` that only a plan in the coefficients' units (with bounds) reads, and their defaults
_COEFFICIENT_ONLY = {"n": None, "residual_sd": None, "rsquared": None, "spread": None, "correlation": 0.0,
                     "inference": True, "dtypes": None, "levels": None, "response": None, "missing": "raise",
                     "rescale": DEFAULT_RESCALE, "method_options": None, "level_shares": None}


#: what plan() says to a call written as dp_ols's, ``plan(formula, data, epsilon, delta)``
_PLAN_TAKES_NO_DATA = ("plan reads no data (unlike dp_ols, whose first two arguments are the formula and the data): it "
                       "plans from public facts, so pass the model as formula=, its variables' ranges as bounds= (and "
                       "a factor's levels as levels=) and the number of rows as n=")


def _planned_options(method_options: Mapping[str, Mapping[str, Any]] | None,
                     planned: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``method_options`` as a dict of dicts, refused (typed, from the arguments alone) when it is not a mapping of
    mappings or names a method that is not planned by name (``method="auto"``'s choice takes no options)."""
    if method_options is None:
        return {}
    example = "e.g. method_options={'tukey': {'m': 2000}}"
    if not isinstance(method_options, Mapping) or not all(isinstance(v, Mapping) for v in method_options.values()):
        raise InvalidArgumentError(f"method_options must map method names to mappings of their options, {example}")
    unknown = sorted(str(k) for k in method_options if k not in planned)
    if unknown:
        raise InvalidArgumentError(f"method_options names methods that are not planned by name: {', '.join(unknown)}"
                                   f" (planned: {', '.join(planned) or 'none'}; give them as method=)")
    return {str(k): dict(v) for k, v in method_options.items()}


def _options_words(name: str, given: Mapping[str, Any]) -> str:
    """The assumption a plan with ``method_options`` (``--option`` on the command line) states: the options it plans
    for ``name``, written as both spellings take them ("m=200")."""
    shown_options = ", ".join(f"{k}={v!r}" for k, v in given.items())
    return (f"{name}'s options as given ({shown_options}); its refusal checks use them, its other figures are those "
            "of its default options")


def _check_not_fit_arguments(target: Any, d: Any) -> None:
    """Refuse, with what plan() takes instead, a call of :func:`plan` written as a call of
    :func:`dpstats.dp_ols`: a formula as ``target`` or a data set as ``d`` (their types are public facts of the
    arguments; no value of the data is read)."""
    if isinstance(target, str):
        raise InvalidArgumentError("plan's first argument is a target error, not a formula: " + _PLAN_TAKES_NO_DATA)
    if isinstance(d, (pd.DataFrame, pd.Series, np.ndarray, Mapping)) or hasattr(d, "__dataframe__"):
        raise InvalidArgumentError(f"plan's d is a number of coefficients, not a data set (got a "
                                   f"{type(d).__name__}): " + _PLAN_TAKES_NO_DATA)


def _check_no_coefficient_arguments(**given: Any) -> None:
    """Refuse, in the plan by rates (no bounds, no formula), an argument that only the plan with bounds reads:
    the rate plan would otherwise ignore it without a word (``plan(0.1, 3, 1.0, n=5000)`` planned as if n
    had not been given)."""
    def unchanged(value: Any, default: Any) -> bool:
        return value is default or (isinstance(value, (str, int, float)) and not isinstance(value, bool)
                                    and type(default) is not bool and value == default)

    ignored = [name for name, default in _COEFFICIENT_ONLY.items() if not unchanged(given[name], default)]
    if ignored:
        names = ", ".join(f"{name}=" for name in ignored)
        raise InvalidArgumentError(
            f"{names} only appl{'ies' if len(ignored) == 1 else 'y'} to a plan in the coefficients' units, which "
            "needs bounds= (and optionally formula=); without bounds, plan(target, d, epsilon, delta) inverts the "
            f"rates in units of sigma and would ignore {'it' if len(ignored) == 1 else 'them'}. Declare bounds=, "
            f"or leave out {names}")


def plan(target: Any = None, d: int | None = None, epsilon: float | None = None, delta: float | None = None, *,
         sparsity: int | None = None, method: str | Sequence[str] | None = None,
         bounds: Mapping[str, tuple[float, float]] | None = None, formula: str | None = None,
         levels: Mapping[str, Sequence[Any]] | None = None, response: str | None = None, n: int | None = None,
         residual_sd: float | None = None, rsquared: float | None = None, spread: Mapping[str, float] | None = None,
         correlation: Correlation = 0.0, inference: bool = True, dtypes: Mapping[str, Any] | None = None,
         outcome_share: float | None = None, missing: str = "raise", rescale: bool | str = DEFAULT_RESCALE,
         method_options: Mapping[str, Mapping[str, Any]] | None = None,
         level_shares: Mapping[str, Mapping[Any, float]] | None = None) -> Any:
    """Plan a fit before spending budget.

    With declared ``bounds`` (and optionally ``formula``, ``levels``), in
    the units of the coefficients: at ``n`` rows, which epsilon gives each
    coefficient a privacy error below its sampling error; at ``epsilon``, how
    many rows it needs (and, with ``target``, how many for a total error at
    most ``target``); at both, the expected errors, whether the method would
    refuse and whether its intervals would be reported.  It agrees with each
    method's minimum n (``MethodSpec.min_rows``) and refusal rules.  Returns a
    :class:`~dpstats.planning.Plan` (print it, or ``to_frame()``); see
    :func:`dpstats.planning.coefficient_plan` for every argument and the
    assumptions.

    Without bounds, ``plan(target, d, epsilon, delta)`` inverts the rates for
    a target error in units of sigma, up to their unknown constants
    (:func:`rate_plan`, a DataFrame).

    Parameters
    ----------
    target : float or mapping, optional
        A total error: in units of sigma without bounds; with bounds in the coefficients' units (per term with a
        mapping).
    d : int, optional
        Coefficients (without bounds only; with bounds the design gives d).
    epsilon : float, optional
        The budget's epsilon.
    delta : float, optional
        The budget's delta (default 1e-6).
    sparsity : int, optional
        s for the sparse rates (lasso, the sparse lower bound).
    method : str, sequence of str or None
        The method(s) to plan; None: every private method.
    bounds : mapping, optional
        Declared (public) ranges of the variables, response included, as for :func:`dpstats.dp_ols`.
    formula : str, optional
        The model (default: ``response ~`` every other bounded variable and every factor of ``levels``).
    levels : mapping, optional
        Declared levels of the factors.
    response : str, optional
        The response among the bounds when no formula is given (default ``"y"``).
    n : int, optional
        Rows: the plan then gives the epsilon each coefficient needs.
    residual_sd, rsquared : float, optional
        The assumed residual sd (response units) or R^2.
    spread : mapping, optional
        Assumed sd of design columns (default: uniform on the declared range, a factor's levels equally common;
        for a product or power column that ``rescale="centred"`` centres, the sd of its centred form).
    correlation : float or mapping, default 0.0
        Assumed common correlation between design columns, or the correlations of named pairs of design columns,
        ``{("x1", "x2"): 0.8}`` (the other pairs independent).
    inference : bool, default True
        The fit's ``inference`` option (its share of the budget for standard errors).
    dtypes : mapping, optional
        The data's column types (public), e.g. ``dict(df.dtypes)``: read as the fit reads them (a boolean
        response, or an integer one declared between consecutive integers, is two-valued for ``method="auto"``).
    outcome_share : float, optional
        For a two-valued response, the assumed share of its rarer value, in (0, 0.5]: the plan's intervals then
        follow the methods' rare-outcome rules (:func:`dpstats.planning.coefficient_plan`).
    missing : {"raise", "drop"}, default "raise"
        The fit's ``missing=``: with "drop" there is no missing-value screen, and ``method="auto"`` leaves out
        the methods that do not take null rows (``theilsen``), as the fit does.
    rescale : "centred" (default) or True
        The fit's ``rescale=``: the default plans the fit with product and power columns centred at the declared
        midpoints, True the columns as written (:func:`dpstats.planning.coefficient_plan`); False is refused.
    method_options : mapping of str to mapping, optional
        Options of methods planned by name, as the fit takes them, e.g. ``{"tukey": {"m": 2000}}``: the method's
        refusal checks use them (:func:`dpstats.planning.coefficient_plan`).
    level_shares : mapping of str to mapping, optional
        The assumed shares of a factor's levels, by the variable it reads, ``{"income": {"lt $1000": 0.012}}`` (from
        a codebook, never from the private data; the levels not named share the rest equally; default: equally
        common).

    Returns
    -------
    dpstats.planning.Plan or pandas.DataFrame
        With bounds or a formula, a :class:`~dpstats.planning.Plan`; otherwise the table of :func:`rate_plan`.

    Raises
    ------
    dpstats.errors.InvalidArgumentError
        When ``d`` is given together with bounds or a formula, when an argument of the plan with bounds
        (``n``, ``rsquared``, ``levels``, ...) is given to the plan by rates, which would ignore it, when it is
        called as :func:`dpstats.dp_ols` is (a formula as ``target`` or a data set as ``d``: plan reads no data),
        or when an argument is invalid.
    dpstats.errors.MissingBoundsError
        When a formula is given without ``bounds``.

    Examples
    --------
    >>> import dpstats
    >>> table = dpstats.plan(0.1, 5, 1.0, 1e-6, method="ssp")  # rates only: units of sigma
    >>> table.loc[0, "bound"], int(table.loc[0, "n_for_target"])
    ('minimax lower bound (classical)', 831)
    >>> dpstats.plan(bounds={"x": (0, 10), "y": (-50, 50)}, n=5000, epsilon=1.0, method="adassp")  # doctest: +SKIP
    >>> dpstats.plan(formula="y ~ x + C(g)", bounds={"x": (0, 10), "y": (-50, 50)},
    ...              levels={"g": ["a", "b"]}, epsilon=1.0, rsquared=0.5)  # doctest: +SKIP
    """
    _check_not_fit_arguments(target, d)
    if bounds is None and outcome_share is not None:
        raise InvalidArgumentError("outcome_share= needs bounds= (a plan in the coefficients' units)")
    if bounds is None and formula is None:
        _check_no_coefficient_arguments(n=n, residual_sd=residual_sd, rsquared=rsquared, spread=spread,
                                        correlation=correlation, inference=inference, dtypes=dtypes, levels=levels,
                                        response=response, missing=missing, rescale=rescale,
                                        method_options=method_options, level_shares=level_shares)
        return rate_plan(target, d, epsilon, DEFAULT_DELTA if delta is None else delta,  # type: ignore[arg-type]
                         sparsity=sparsity, method=method)  # type: ignore[arg-type]
    if d is not None:
        raise InvalidArgumentError("with bounds or a formula, d comes from the design: leave d out")
    if bounds is None:
        raise MissingBoundsError("plan with a formula needs the declared bounds of its variables (bounds=): it "
                                 "plans in the coefficients' units from their public ranges." + _WITHOUT_BOUNDS)
    return coefficient_plan(bounds=bounds, formula=formula, levels=levels, response=response, n=n, epsilon=epsilon,
                            delta=DEFAULT_DELTA if delta is None else delta, method=method, target=target,
                            residual_sd=residual_sd, rsquared=rsquared, spread=spread, correlation=correlation,
                            inference=inference, sparsity=sparsity, dtypes=dtypes, outcome_share=outcome_share,
                            missing=missing, rescale=rescale, method_options=method_options,
                            level_shares=level_shares)


MOVED_UP.add("plan", "dpstats.planning.plan", plan)  # the deprecated dpstats.theory.plan (one release)
