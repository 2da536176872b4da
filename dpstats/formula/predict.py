"""The design of a fitted model evaluated on new data (``DPRegressionResults.predict``).

New data are not private to the fit (the results never see the fitted
rows), but the refusals are built from public facts all the same: the
factor's code and its declared levels, never a value of ``newdata``.  The
factor code of the stored design is checked against the allow-list again
(:mod:`dpstats.formula.language`: a design info built elsewhere could hold any
code) and evaluated in dpstats's own namespace, as when fitting.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import patsy

from dpstats.errors import (
    DataTypeError,
    DPStatsError,
    ExtrapolationWarning,
    FormulaError,
    MissingDataError,
    NonFiniteValueError,
    UnknownColumnError,
    UnseenLevelError,
)
from dpstats.formula.frame import as_frame, duration_advice, missing_cells, numpy_columns, real_numeric_dtype
from dpstats.formula.language import MAP_UNDECLARED_LEVELS, NAMESPACE, check_factor
from dpstats.formula.parse import code_names, factor_of, origin_code
from dpstats.formula.values import level_objects, raw_level_codes

__all__ = ["design_matrix_for_prediction", "finite_predictions", "variables_of", "warn_outside_bounds"]


def variables_of(codes: list[str]) -> list[str]:
    """The data columns the factor codes read (the formula language's functions, such as ``np`` and ``C``, left
    out), in order of first use.

    Parameters
    ----------
    codes : list of str
        Factor codes.

    Returns
    -------
    list of str
        The variable names.
    """
    names = (name for code in codes for name in code_names(code) if name not in NAMESPACE)
    return list(dict.fromkeys(names))


def _prediction_frame(design_info: Any, df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``newdata`` checked against the fitted design (the factor code allowed, every variable present, numeric
    variables numeric, no missing values), and the variables the model uses as numbers.

    Extension dtypes (``Int64``, ``boolean``, ``string``) get the numpy dtypes
    patsy reads, as in :meth:`dpstats.formula.frame.FramePlan.prepare`.
    """
    column_list = [str(c) for c in df.columns]
    numeric: list[str] = []
    used: list[str] = []
    for factor, info in design_info.factor_infos.items():
        try:
            facts = check_factor(factor.code, column_list)
        except UnknownColumnError:
            facts = None
        if facts is None:
            lacking = [v for v in variables_of([factor.code]) if v not in column_list]
            raise UnknownColumnError(f"newdata lacks a variable the model uses: {', '.join(lacking) or factor.code}")
        used += [v for v in facts.variables if v not in used]
        if info.type == "numerical":
            numeric += [v for v in facts.variables if v not in numeric]
    wrong = [v for v in numeric
             if not (real_numeric_dtype(df[v].dtype) or pd.api.types.is_bool_dtype(df[v].dtype))]
    if wrong:
        convert = (duration_advice(wrong[0], df[wrong[0]].dtype, "newdata")
                   or f" Convert first, e.g. newdata[{wrong[0]!r}] = pd.to_numeric(newdata[{wrong[0]!r}]).")
        raise DataTypeError(
            f"newdata gives {', '.join(f'{v!r} (dtype {df[v].dtype})' for v in wrong)} as non-numbers, but the "
            f"model uses {'it' if len(wrong) == 1 else 'them'} as numeric.{convert}")
    missing = [v for v in used if missing_cells(df[v]).any()]
    if missing:
        raise MissingDataError(
            f"newdata has missing values (NaN, None or pd.NA) in {', '.join(missing)}; a prediction needs every "
            "variable the model uses: drop those rows or fill them in before predict().")
    frame = _onto_fitted_levels(design_info, numpy_columns(df, used), numeric)
    as_numbers = [v for v in numeric if pd.api.types.is_bool_dtype(frame[v].dtype)]
    if as_numbers:  # a boolean given for a variable the model used as a number: True is 1, False is 0
        frame = frame.assign(**{v: frame[v].astype(float) for v in as_numbers})
    return frame, numeric


def _onto_fitted_levels(design_info: Any, df: pd.DataFrame, numeric: list[str]) -> pd.DataFrame:
    """``df`` with each variable that only factors of its own read (``g``, ``C(g, ...)``) matched to those factors'
    levels by the rule the fit matched its rows with (:func:`~dpstats.formula.values.raw_level_codes`) and given as a
    categorical of those levels, which patsy reads whatever the column's dtype.

    patsy matches a value to a level by its own rule, and cannot read some dtypes the fit reads (the fit maps a
    column with declared levels onto them first): a column of dates with a time zone, of periods or of intervals, or
    an Arrow timestamp, failed every prediction of a model fitted on it (a ``FormulaError`` whatever the rows).  A
    value equal to none of the levels is refused with :class:`~dpstats.errors.UnseenLevelError`, naming the variable
    and the levels (public: the fitted model), never the value.  A variable that other factors read too (``I(g ==
    'a')``), or that factors with different levels read, is left to patsy as before.
    """
    levels: dict[str, list[tuple[Any, ...]]] = {}
    readers: dict[str, int] = {}
    for factor, info in design_info.factor_infos.items():
        code = factor.code.strip()
        for v in variables_of([code]):
            readers[v] = readers.get(v, 0) + 1
        var = code if code in df.columns else factor_of(code)
        if (var is not None and info.type == "categorical" and info.categories is not None and var in df.columns
                and var not in numeric):
            levels.setdefault(var, []).append(tuple(info.categories))
    converted: dict[str, Any] = {}
    for var, found in levels.items():
        if len(found) != readers.get(var, 0) or any(f != found[0] for f in found[1:]):
            continue
        fitted = list(found[0])
        codes = raw_level_codes(df[var], fitted)
        if (codes < 0).any():
            factor = next(f for f in design_info.factor_infos if f.code.strip() == var or factor_of(f.code) == var)
            code = origin_code(factor) or factor.code  # as the formula spells it, as patsy's own errors are quoted
            raise UnseenLevelError(f"newdata has {_unseen_subject(code, [var])} that the fitted model does not know "
                                   f"(its levels are: {', '.join(map(str, fitted))}{_level_kind(fitted, [df[var]])})")
        converted[var] = pd.Categorical.from_codes(codes, categories=pd.Index(level_objects(fitted), dtype=object))
    return df.assign(**converted) if converted else df


def design_matrix_for_prediction(design_info: Any, newdata: Any,
                                 declared: Mapping[str, tuple[float, float]] | None = None,
                                 stacklevel: int = 4) -> np.ndarray:
    """Evaluate the stored design on new data, refusing unseen levels, wrong types and gaps, and warn when a
    covariate lies outside the bounds declared for the fit.

    The factor code is checked against the formula language again (a design
    info built elsewhere could hold any code), and failures are reported from
    public facts only: the factor's code and its declared levels, never a
    value of ``newdata``.  The warning names the columns, their declared
    bounds and how many rows lie outside, never a value.

    Parameters
    ----------
    design_info : patsy.DesignInfo
        The fitted right-hand side.
    newdata : pandas.DataFrame or mapping
        The new rows, with every variable the model uses.
    declared : mapping of str to (float, float), optional
        The fit's declared bounds: of the raw variables the model uses as numbers, and of design columns
        declared by name; other keys (the response) are not checked.
    stacklevel : int
        The warning's stack level (the default points at the caller of the results method that called this).

    Returns
    -------
    numpy.ndarray
        The design matrix of ``newdata`` (float).

    Raises
    ------
    UnknownColumnError, DataTypeError, MissingDataError
        A variable lacking, given as non-numbers, or with missing values.
    NonFiniteValueError
        A transform undefined on some rows (NaN: ``np.log`` of a negative value).
    UnseenLevelError
        A value of a factor outside its levels.
    FormulaError
        Any other failure of patsy (its message withheld).
    DisallowedExpressionError
        Factor code outside the formula language.

    Warns
    -----
    ExtrapolationWarning
        A variable or design column with declared bounds lies outside them on some rows of ``newdata``.
    """
    df, numeric = _prediction_frame(design_info, as_frame(newdata, "newdata"))
    strict = MAP_UNDECLARED_LEVELS.set(False)  # an unseen level of new data is the caller's error to hear of
    try:
        with np.errstate(all="ignore"):
            (X,) = patsy.build_design_matrices([design_info], df, NA_action="raise", return_type="matrix")
    except Exception as exc:  # noqa: BLE001 - every failure is reported from public facts only
        error = _prediction_error(exc, design_info, df)
    else:
        X = np.asarray(X, dtype=float)
        warn_outside_bounds(_outside_declared(df, numeric, X, list(design_info.column_names), declared or {}), len(X),
                            stacklevel=stacklevel)
        return X
    finally:
        MAP_UNDECLARED_LEVELS.reset(strict)
    raise error


def _outside_declared(df: pd.DataFrame, numeric: list[str], X: np.ndarray, column_names: list[str],
                      declared: Mapping[str, tuple[float, float]]) -> list[tuple[str, float, float, np.ndarray]]:
    """(name, lo, hi, rows outside) for each declared variable the model uses as a number and each design column
    declared by name, where some row of the new data lies outside [lo, hi]."""
    found = []
    for name, (lo, hi) in declared.items():
        if name in numeric:
            values = np.asarray(df[name], dtype=float)
        elif name in column_names:
            values = X[:, column_names.index(name)]
        else:
            continue
        outside = (values < lo) | (values > hi)
        if outside.any():
            found.append((name, lo, hi, outside))
    return found


def warn_outside_bounds(found: list[tuple[str, float, float, np.ndarray]], rows: int, what: str = "newdata",
                        stacklevel: int = 4) -> None:
    """An :class:`~dpstats.errors.ExtrapolationWarning` naming the columns outside their declared bounds, with
    how many rows of the new data (``what``) lie outside (no value); nothing when ``found`` is empty.

    Parameters
    ----------
    found : list of (str, float, float, numpy.ndarray)
        (name, lo, hi, rows outside) of each column with some row outside [lo, hi].
    rows : int
        Rows of the new data.
    what : str
        How the message names the new data.
    stacklevel : int
        Passed to :func:`warnings.warn` (the user's call).
    """
    if not found:
        return
    outside = np.logical_or.reduce([f[3] for f in found])
    where = "; ".join(f"{name} (declared [{lo:g}, {hi:g}]: {int(mask.sum())} row{'s' if mask.sum() != 1 else ''})"
                      for name, lo, hi, mask in found)
    count = int(outside.sum())
    of_rows = f"{count} of {rows} row{'s' if rows != 1 else ''} of {what}"
    warnings.warn(f"{of_rows} {'lies' if count == 1 else 'lie'} outside the bounds declared "
                  f"for the fit, in {where}. The fit took those bounds as the range of its data, so these "
                  "predictions extrapolate the model beyond it.", ExtrapolationWarning, stacklevel=stacklevel)


def finite_predictions(X: np.ndarray, coef: np.ndarray, intercept: float = 0.0, what: str = "newdata"
                       ) -> np.ndarray:
    """``X @ coef + intercept`` (post-processing of released coefficients), refused with
    :class:`~dpstats.errors.NonFiniteValueError` where a prediction is not finite: a finite row so large that its
    product with the coefficients overflows the float range would otherwise be predicted as plus or minus infinity
    (or NaN), with only numpy's warning.  The message names how many rows, never a value.

    Parameters
    ----------
    X : numpy.ndarray
        The finite design of the new rows (m x d).
    coef : numpy.ndarray
        The released coefficients (d).
    intercept : float
        Added to every prediction (the scikit-learn estimator's ``intercept_``).
    what : str
        How the message names the new data.

    Returns
    -------
    numpy.ndarray
        The m finite predictions.

    Raises
    ------
    NonFiniteValueError
        A prediction overflows the float range.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.formula.predict import finite_predictions
    >>> finite_predictions(np.array([[1.0, 2.0]]), np.array([0.5, 1.0]))
    array([2.5])
    """
    with np.errstate(over="ignore", invalid="ignore"):
        predictions = X @ coef + intercept
    bad = ~np.isfinite(predictions)
    if bad.any():
        count = int(bad.sum())
        raise NonFiniteValueError(
            f"{count} of {len(predictions)} rows of {what} {'gives' if count == 1 else 'give'} a prediction that "
            "overflows the float range (a row "
            "so large that its product with the released coefficients does not fit in a float); rescale those "
            "variables or drop such rows before predicting.")
    return predictions


def _level_kind(levels: Sequence[Any], columns: list[Any]) -> str:
    """Where the declared ``levels`` and the newdata ``columns`` the factor reads differ in kind (numbers against
    text: printed, ``1`` and ``"1"`` look alike, and they do not match), what to convert; from the dtypes only."""
    text = [c for c in columns if not pd.api.types.is_numeric_dtype(c.dtype) and not isinstance(c.dtype,
                                                                                               pd.CategoricalDtype)]
    numeric = [c for c in columns if pd.api.types.is_numeric_dtype(c.dtype) and not pd.api.types.is_bool_dtype(c.dtype)]
    if text and all(isinstance(v, numbers.Number) and not isinstance(v, bool) for v in levels):
        if all(pd.api.types.is_string_dtype(c.dtype) and c.dtype != object for c in text):
            return ("; they are numbers and newdata's column holds text, as a CSV file read without dtypes gives: "
                    "convert it to numbers")
        return ("; they are numbers and newdata's column is not of a number dtype (dtype object: a number stored "
                "there as text, as a CSV file read without dtypes gives, does not match): convert it to numbers")
    if numeric and all(isinstance(v, str) for v in levels):
        return "; they are text and newdata's column holds numbers: convert it to text"
    return ""


def _prediction_error(exc: BaseException, design_info: Any, df: pd.DataFrame) -> DPStatsError:
    """A typed error for a failure of patsy on ``newdata`` (``df``), from the factor's code, its declared levels and
    the dtypes of the columns it reads only."""
    msg = str(exc)
    code = origin_code(exc)
    if "expected levels" in msg or "mismatching levels" in msg:
        levels = next((info.categories for f, info in design_info.factor_infos.items()
                       if f.code == code and info.categories is not None), None)
        names = list(dict.fromkeys(name for name in code_names(code or "") if name in df.columns))
        columns = [df[name] for name in names]
        known = (f" (its levels are: {', '.join(map(str, levels))}{_level_kind(levels, columns)})"
                 if levels is not None else "")
        return UnseenLevelError(f"newdata has {_unseen_subject(code, names)} that the fitted model does not know"
                                f"{known}")
    if "missing values" in msg:  # (a variable's own missing values were refused before patsy ran)
        where = f"the term {code!r}" if code else "a term of the model"
        return NonFiniteValueError(
            f"newdata gives {where} an undefined value (NaN) on some rows: a transform outside its domain, as np.log "
            "or np.sqrt of a negative number is; a prediction needs finite values: drop those rows or replace them "
            "before predict().")
    return FormulaError(f"cannot evaluate the model's design on newdata{f' (factor {code!r})' if code else ''}: "
                        f"{type(exc).__name__}; the original message is withheld because it may quote data values")


def _unseen_subject(code: str, names: Sequence[str]) -> str:
    """What holds an unseen level, named by the variable(s) of newdata a user can fix: "a value of the variable
    'race' (the factor 'C(race)')"; from the factor's code and newdata's column names only."""
    if not names:
        return f"a value of the factor '{code or 'a factor'}'"
    which = (f"the variable {names[0]!r}" if len(names) == 1
             else f"the variables {', '.join(repr(n) for n in names)}")
    if code.strip() in names or factor_of(code) is not None:
        return f"a value of {which}" + ("" if code.strip() in names else f" (the factor '{code}')")
    return f"values of {which} on which the factor '{code}' computes a level"
