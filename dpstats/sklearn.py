"""A scikit-learn estimator around :func:`dpstats.dp_ols`.

>>> from dpstats.sklearn import DPLinearRegression
>>> est = DPLinearRegression(method="adassp", epsilon=1.0, delta=1e-6,
...                          bounds=[(0, 10), (-5, 5)], y_bounds=(-50, 50), random_state=0)
>>> est.fit(X, y).predict(X_new)                              # doctest: +SKIP

It works in a :class:`sklearn.pipeline.Pipeline`, with ``clone``,
``get_params``/``set_params`` and grid searches.  Mind two facts that
scikit-learn's conventions hide:

* every ``fit`` spends its (epsilon, delta) on the training data, so a grid
  search or cross-validation on private data spends the budget once per fit
  (pass a shared :class:`dpstats.PrivacyAccountant` as ``accountant`` to cap
  the total);
* a transformer fitted earlier in a Pipeline (``StandardScaler`` and the
  like) learns from the data without privacy; only public, data-independent
  preprocessing keeps the pipeline private.

``score(X, y)`` is scikit-learn's R^2 on whatever data it is given, computed
without noise: use it on public data (the held-out folds of a cross-validation
on private data are private, and their scores are not private releases).
An integer ``random_state`` is copied by ``clone`` to every fold, which then
draws the same noise: leave it out on private data, or give an accountant
made with ``refuse_seeded=True``.

Needs scikit-learn (``pip install "dpstats[sklearn]"``), imported only when
this module is.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

try:
    from sklearn.base import BaseEstimator, RegressorMixin
    from sklearn.metrics import r2_score
    from sklearn.utils.validation import (
        check_array,
        check_consistent_length,
        check_is_fitted,
        column_or_1d,
        validate_data,
    )
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError('dpstats.sklearn needs scikit-learn >= 1.6: pip install "dpstats[sklearn]"') from exc

from dpstats.api import dp_ols
from dpstats.errors import (
    DataTypeError,
    DataValueError,
    DPStatsError,
    InvalidArgumentError,
    InvalidBoundsError,
    MissingBoundsError,
    MissingDataError,
    NonFiniteValueError,
)
from dpstats.formula.frame import check_unique_columns
from dpstats.formula.parse import term
from dpstats.formula.predict import finite_predictions, warn_outside_bounds
from dpstats.numbers import (
    cells_or_missing,
    in_memory,
    is_untyped_sequence,
    numbers_or_missing,
    numeric_columns,
    rows_or_missing,
)
from dpstats.pipeline import check_accountant_fit
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.validation import MAX_BOUND_MAGNITUDE, pairs_declared, shown

__all__ = ["DPLinearRegression"]


#: ``Intercept`` is quoted too: bare, it would share its design-column name with the intercept ``fit_intercept`` adds
_RESERVED = frozenset({"Intercept"})


#: first lines of scikit-learn's validation messages that hold only public facts (shapes, counts, dtype and type
#: names) and are kept; any other message (numpy's "could not convert string to float: '<value>'", the data printed
#: after "Expected 2D array, got 1D array instead:" or "Complex data not supported") is cut or withheld
_PUBLIC_VALIDATION = re.compile(
    r"Found array with \d+ (sample|feature)\(s\) \(shape=\([\d, ]*\)\) while a minimum of \d+ is required"
    r"( by \w+)?\.?"
    r"|Found input variables with inconsistent numbers of samples: \[[\d, ]*\]"
    r"|Input (X |y )?contains (NaN|infinity or a value too large for dtype\('\w+'\))\.?"
    r"|Complex data not supported"
    r"|(float\(\) )?argument must be a string or a (real )?number, not '\w+'"
    r"|Expected 2D array, got (1D|scalar) array instead"
    r"|y should be a 1d array, got an array of shape \([\d, ]*\) instead\.?"
    r"|dtype='numeric' is not compatible with arrays of bytes/strings\.[^']*"
    r"|Sparse data was passed for X, but dense data is required\. Use '\.toarray\(\)' to convert to a dense numpy "
    r"array\."
    r"|This \w+ estimator requires y to be passed, but the target y is None\.")


#: scikit-learn's refusals of ``predict`` input whose columns do not match the training data's: the counts and the
#: column names (the schema), kept whole
_PUBLIC_PREDICT_VALIDATION = re.compile(
    r"X has \d+ features, but \w+ is expecting \d+ features as input\.?"
    r"|The feature names should match those that were passed during fit\.(\n.*)*")


def _read_as_numbers(values: Any, what: str) -> Any:
    """``values`` with every element that its type does not make a number read by the public rule of
    :mod:`dpstats.numbers` (a non-number becomes NaN): a list, a tuple or another Python collection without a type of
    its own (a deque, a ``UserList``: :func:`~dpstats.numbers.is_untyped_sequence`, read as a list), an object or
    text array, and a DataFrame's or Series' columns by their dtypes (:func:`~dpstats.numbers.numeric_columns`:
    nullable and Arrow-backed numbers as floats, a missing value NaN; object, text, categorical, Arrow dictionary and
    binary columns element by element; dates refused).  Numeric arrays, and inputs of other types (sparse matrices,
    ...), are returned as they are, for scikit-learn's validation to accept or refuse by their type.  A Dask
    collection is computed first, a pyarrow table made a DataFrame and a pandas array (``pd.array``) a Series
    (:func:`~dpstats.numbers.in_memory`), then read as the result is."""
    values = in_memory(values)
    if isinstance(values, pd.DataFrame):
        return numeric_columns(values, what)
    if isinstance(values, pd.Series):
        return numeric_columns(values.to_frame(), what).iloc[:, 0]
    if is_untyped_sequence(values):  # a list, a tuple, a deque, a UserList, ...: no type of its own
        return numbers_or_missing(values if isinstance(values, (list, tuple)) else list(values))
    if isinstance(values, np.ndarray) and values.dtype.kind in "OUS":
        return numbers_or_missing(values)
    return values


def validation_error(exc: ValueError | TypeError | OverflowError, predict: bool = False) -> DPStatsError:
    """The typed error of a failed scikit-learn validation of the training data (or of ``predict``'s ``X``), built
    from public facts only.

    The first line of scikit-learn's message is kept when it is one of its public forms
    (:data:`_PUBLIC_VALIDATION`, cut before any listing of the data); otherwise the message is withheld.  For
    ``predict``, a mismatch with the training data's columns (:data:`_PUBLIC_PREDICT_VALIDATION`: their count and
    names) is kept whole.  The type follows the original: NaN is a :class:`~dpstats.errors.MissingDataError`,
    infinity a :class:`~dpstats.errors.NonFiniteValueError`, another ``TypeError`` a
    :class:`~dpstats.errors.DataTypeError`, another ``ValueError`` a :class:`~dpstats.errors.DataValueError`.

    Parameters
    ----------
    exc : ValueError, TypeError or OverflowError
        What ``validate_data`` raised (OverflowError: a Python int beyond the float range).
    predict : bool
        The validation was ``predict``'s, of ``X`` alone.

    Returns
    -------
    DPStatsError
        The error to raise in its place (with its chain cut by the caller).
    """
    if predict and _PUBLIC_PREDICT_VALIDATION.fullmatch(str(exc).rstrip("\n")):
        return DataValueError(f"{str(exc).rstrip()} (scikit-learn's validation of X for predict)")
    first = str(exc).split("\n", 1)[0].split(" instead:", 1)[0]
    first = first + " instead" if str(exc).startswith("Expected 2D array") else first
    kept = _PUBLIC_VALIDATION.fullmatch(first)
    missing_marker = kept is not None and first.endswith(("not 'NAType'", "not 'NaTType'"))  # pd.NA, pd.NaT
    if missing_marker:
        first = "Input X or y contains a missing value (pd.NA or pd.NaT)"
    elif kept and "argument must be a string or a" in first:  # the type named is an element's: data, not schema
        first = first.rsplit(", not '", 1)[0] + ", and an element of X or y is not"
    if kept and first.startswith("Expected 2D array"):  # scikit-learn's advice, without the array it prints
        first += (". Reshape your data either using array.reshape(-1, 1) if your data has a single feature or "
                  "array.reshape(1, -1) if it contains a single sample")
    what = "X for predict" if predict else "X and y"
    needs = ("X must be a 2-D numeric array with the training data's columns, finite" if predict else
             "X must be a 2-D numeric array with at least 2 rows and y a numeric array of the same length, both "
             "finite; nothing was spent")
    message = (f"{first} (scikit-learn's validation of {what}{'' if predict else '; nothing was spent'})" if kept
               else f"scikit-learn's validation of {what} failed with {type(exc).__name__}; its message is withheld "
               f"because it may quote data values. {needs}")
    if kept and ("contains NaN" in first or missing_marker):
        return MissingDataError(message)
    if kept and "contains infinity" in first:
        return NonFiniteValueError(message)
    return DataTypeError(message) if isinstance(exc, TypeError) else DataValueError(message)


def _typed_target(y: Any, read: np.ndarray) -> np.ndarray:
    """The target as the fit reads it: ``y`` itself where its dtype (public) is numpy's bool or integers, which
    hold no missing value and which the formula's fit reads as they are (a 0/1 integer or a boolean declared in
    [0, 1] is two-valued: the rules of a linear probability model, no ``FloatIndicatorWarning``); else ``read``,
    the float64 values :func:`fit` validated."""
    dtype = getattr(y, "dtype", None)
    if isinstance(dtype, np.dtype) and dtype.kind in "biu":
        values = np.asarray(y).reshape(-1)
        if values.shape == read.shape:
            return values
    return read


class DPLinearRegression(RegressorMixin, BaseEstimator):
    """Differentially private linear regression with the scikit-learn estimator API.

    Each ``fit`` calls :func:`dpstats.dp_ols` with the formula
    ``y ~ x0 + x1 + ...`` built from public column names only (a DataFrame's
    string column names, else ``x0 .. x{p-1}``; names that are not Python
    identifiers are quoted as ``Q('name')``), so the design, the public
    rescaling, the method and the privacy report are exactly those of the
    formula interface.

    Parameters
    ----------
    method : str
        A registered method name or ``"auto"`` (see
        :func:`dpstats.available_methods`).
    epsilon : float
        Budget of each fit (replace-one neighbours; n is public).
    delta : float
        Budget of each fit.
    bounds : dict, array_like of shape (p, 2), (float, float) or None
        Public ranges of the input columns, from domain knowledge (never from
        the data): a dict ``{column name: (lo, hi)}``, an array with one
        (lo, hi) row per column, or one pair (lo, hi) for every column.
        ``None`` declares none.
    y_bounds : (float, float) or None
        Public range (lo, hi) of the target, or ``None``.
    fit_intercept : bool
        Add an intercept column (as the formula interface does).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        ``None`` (the operating-system CSPRNG: the default for real
        releases), an int seed, a Generator or a SeedSequence.
    accountant : PrivacyAccountant, optional
        A budget that every fit draws from (it survives ``clone``).
    **options
        Method options (e.g. ``rho=`` for adassp, ``epochs=`` for dpsgd);
        they are estimator parameters too (``get_params``/``set_params``).

    Attributes
    ----------
    coef_ : numpy.ndarray
        Released coefficients of the inputs.
    intercept_ : float
        Released intercept (0.0 without an intercept).
    params_ : pandas.Series
        The coefficients named by the design columns.
    privacy_report_ : PrivacyReport
        The fit's privacy report (budget spent step by step).
    results_ : DPRegressionResults
        The fit as :func:`dpstats.dp_ols` returns it: ``summary()``, ``conf_int()``, ``tidy()``, the error
        bounds (post-processing of the released values), its design the inputs' names and the target's, ``y``.
    method_ : str
        The method that was fitted (what ``"auto"`` chose).
    n_features_in_ : int
        Number of input columns, as in scikit-learn.
    feature_names_in_ : numpy.ndarray
        Input column names, when X was a DataFrame with string column names.

    See Also
    --------
    dpstats.dp_ols : The formula interface each fit calls.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.sklearn import DPLinearRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, size=(3000, 2))
    >>> y = X @ np.array([1.5, -2.0]) + 3.0 + rng.normal(0, 1.0, size=3000)
    >>> est = DPLinearRegression(method="adassp", epsilon=1.0, delta=1e-6, bounds=(0, 10),
    ...                          y_bounds=(-30, 30), random_state=0).fit(X, y)
    >>> est.coef_.shape, est.method_
    ((2,), 'adassp')
    >>> est.predict(X[:2]).shape
    (2,)
    """

    def __init__(self, method: str = "auto", epsilon: float = 1.0, delta: float = 1e-6,
                 bounds: Mapping[str, tuple[float, float]] | Sequence[Any] | np.ndarray | None = None,
                 y_bounds: tuple[float, float] | None = None, fit_intercept: bool = True,
                 random_state: int | np.random.Generator | np.random.SeedSequence | None = None,
                 accountant: PrivacyAccountant | None = None, **options: Any) -> None:
        self.method = method
        self.epsilon = epsilon
        self.delta = delta
        self.bounds = bounds
        self.y_bounds = y_bounds
        self.fit_intercept = fit_intercept
        self.random_state = random_state
        self.accountant = accountant
        self._options = dict(options)  # private, so that init sets no attribute beyond the signature's

    # -- parameters: the signature's plus the method options given as keywords ---------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's parameters, including the method options given as keywords.

        Parameters
        ----------
        deep : bool
            As in scikit-learn (this estimator has no sub-estimators).

        Returns
        -------
        dict
            Parameter names mapped to their values.
        """
        params = super().get_params(deep=deep)
        params.update(self._options)
        return params

    def set_params(self, **params: Any) -> DPLinearRegression:
        """Set parameters; a name that is not in the signature is a method option.

        Parameters
        ----------
        **params
            Parameter values by name (method options are validated by the
            method at fit time).

        Returns
        -------
        DPLinearRegression
            The estimator itself.
        """
        known = set(self._get_param_names())
        for key, value in params.items():
            if key in known:
                setattr(self, key, value)
            else:  # a method option (validated by the method at fit time)
                self._options[key] = value
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        # a private fit on the tiny data sets of scikit-learn's checks is noisy by design
        tags.regressor_tags.poor_score = True
        return tags

    # -- fitting ------------------------------------------------------------------------------------------------
    def fit(self, X: Any, y: Any) -> DPLinearRegression:
        """Fit privately: spends (epsilon, delta) of the training data (and of ``accountant``, if given).

        Parameters
        ----------
        X : array_like of shape (n, p)
            Inputs (a DataFrame's string column names become the design's names).  A list of rows needs
            ``bounds`` with one pair per column, which declares its width; a row of another length is a row of
            missing values (``docs/privacy.md``, "Values that are not numbers").
        y : array_like of shape (n,)
            Target.

        Returns
        -------
        DPLinearRegression
            The fitted estimator.

        Raises
        ------
        FormulaError
            ``X`` has two columns with one name (as ``str(name)``): refused before scikit-learn's validation,
            spending nothing.
        DataTypeError
            ``X`` is a list of rows and ``bounds`` does not give one pair per column (nothing is spent).
        InvalidBoundsError
            ``bounds`` or ``y_bounds`` is malformed or names unknown columns.
        DPStatsError
            Every refusal of :func:`dpstats.dp_ols` (a method that needs
            bounds without them, an overspent accountant, ...).
        """
        check_accountant_fit(self.accountant, self.epsilon, self.delta, self.method)  # before the data are read
        _check_option_names(self._options)
        X = in_memory(X)  # (a pyarrow Table's .columns are its data, a DataFrame's are names)
        _check_column_names(X)
        failure: DPStatsError | None = None
        try:
            # NaN and inf pass, and an element that is not a number is read as missing (_read_as_numbers): a
            # private fit maps them by public rules and counts the incomplete rows with its charged missing-value
            # screen, where refusing them here would answer for free whether any is there
            if y is None:
                raise ValueError(f"This {type(self).__name__} estimator requires y to be passed, but the target y is "
                                 "None.")
            with np.errstate(all="ignore"):  # the casts to float64: a long double beyond its range is inf, no warning
                Xa = validate_data(self, self._rows(X) if is_untyped_sequence(X) else _read_as_numbers(X, "X"),
                                   ensure_min_samples=2, dtype=np.float64, ensure_all_finite=False)
                y_read = cells_or_missing(y) if is_untyped_sequence(y) else _read_as_numbers(y, "y")
                ya = column_or_1d(check_array(y_read, ensure_2d=False, dtype=np.float64,
                                              ensure_all_finite=False,
                                              ensure_min_samples=2, input_name="y"), warn=True)
            check_consistent_length(Xa, ya)
        except DPStatsError as exc:  # a refusal of _read_as_numbers, from the dtypes: its message is public
            failure = exc
        except (ValueError, TypeError, OverflowError) as exc:
            failure = validation_error(exc)
        if failure is not None:
            raise failure  # outside the handler: no __context__ carries scikit-learn's message
        names = self._input_names(Xa.shape[1])
        response = "y"
        while response in names:
            response += "_"
        frame = pd.DataFrame(Xa, columns=names)
        frame[response] = _typed_target(y, ya)
        rhs = " + ".join(term(n, _RESERVED) for n in names)
        formula = f"{term(response, _RESERVED)} ~ {rhs}" + ("" if self.fit_intercept else " - 1")
        try:
            res = dp_ols(formula, frame, epsilon=self.epsilon, delta=self.delta, method=self.method,
                         bounds=self._bounds_dict(names, response), accountant=self.accountant,
                         random_state=self.random_state, **self._options)
        except MissingBoundsError as exc:  # dp_ols names the bounds to declare as its formula spells them
            raise _with_estimator_names(exc, response, target_bounded=self.y_bounds is not None) from None
        params = res.params
        self.params_ = params
        self.intercept_ = float(params["Intercept"]) if self.fit_intercept else 0.0
        self.coef_ = params.drop("Intercept", errors="ignore").to_numpy(dtype=float)
        self.privacy_report_ = res.privacy
        self.results_ = res
        self.method_ = res.method
        return self

    def predict(self, X: Any) -> np.ndarray:
        """Predictions ``X @ coef_ + intercept_`` (post-processing of the released coefficients).

        Parameters
        ----------
        X : array_like of shape (m, p)
            Inputs with the training data's columns.

        Returns
        -------
        numpy.ndarray
            The m predictions.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            The estimator was not fitted.
        FormulaError
            ``X`` has two columns with one name.
        DataValueError, DataTypeError, MissingDataError, NonFiniteValueError
            ``X`` is not a finite numeric 2-D array with the training data's columns (scikit-learn's validation,
            its message kept only in its public forms, as for ``fit``).
        NonFiniteValueError
            A prediction overflows the float range (a finite row of ``X`` so large that its product with the
            released coefficients does not fit in a float).
        """
        check_is_fitted(self, "coef_")
        X = in_memory(X)
        _check_column_names(X)
        failure: DPStatsError | None = None
        try:
            Xa = validate_data(self, X, reset=False, dtype=np.float64)
        except (ValueError, TypeError, OverflowError) as exc:  # an int beyond the float range: OverflowError
            failure = validation_error(exc, predict=True)
        if failure is not None:
            raise failure  # outside the handler: no __context__ carries scikit-learn's message
        self._warn_outside_bounds(Xa)
        return finite_predictions(Xa, self.coef_, self.intercept_, what="X")

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """R^2 of :meth:`predict` on ``X`` against ``y`` (scikit-learn's ``r2_score``), with typed errors.

        Parameters
        ----------
        X : array_like of shape (m, p)
            Inputs with the training data's columns.
        y : array_like of shape (m,)
            Observed targets.
        sample_weight : array_like of shape (m,), optional
            Weights, as for scikit-learn's ``score``.

        Returns
        -------
        float
            The coefficient of determination.

        Raises
        ------
        NonFiniteValueError
            A prediction overflows the float range (a finite row of ``X`` so large that its product with the
            released coefficients does not fit), ``y`` holds infinity, or its sums of squares overflow.
        DataValueError, DataTypeError, MissingDataError
            ``X`` or ``y`` fails scikit-learn's validation (its message kept only in its public forms, as for
            ``fit``), or ``X`` has fewer than 2 rows (R^2 is not defined).
        """
        predictions = self.predict(X)  # finite, or NonFiniteValueError
        if len(predictions) < 2:  # r2_score would warn and return NaN
            raise DataValueError(f"score: R^2 needs at least 2 rows of X and y, got {len(predictions)}")
        failure: DPStatsError | None = None
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                value = float(r2_score(in_memory(y), predictions, sample_weight=sample_weight))
        except (ValueError, TypeError, OverflowError) as exc:
            failure = validation_error(exc)
        else:
            if math.isfinite(value):
                return value
            failure = NonFiniteValueError("score: the sums of squares of y overflow the float range (a value of y "
                                          "near the largest float), so R^2 cannot be computed; rescale y")
        raise failure  # outside the handler: no __context__ carries scikit-learn's message

    def _input_names(self, p: int) -> list[str]:
        """The design's names of the p inputs: a DataFrame's column names as strings, else ``x0 .. x{p-1}``."""
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{j}" for j in range(p)]

    def _warn_outside_bounds(self, Xa: np.ndarray) -> None:
        """An :class:`~dpstats.errors.ExtrapolationWarning` when rows of ``predict``'s X lie outside the bounds
        declared for an input, naming the inputs, their bounds and how many rows (no value), as
        :meth:`dpstats.DPRegressionResults.predict` warns."""
        names = self._input_names(Xa.shape[1])
        declared = self._bounds_dict(names, response="") or {}
        found = [(name, *declared[name], (Xa[:, j] < declared[name][0]) | (Xa[:, j] > declared[name][1]))
                 for j, name in enumerate(names) if name in declared]
        warn_outside_bounds([f for f in found if f[3].any()], len(Xa), what="X", stacklevel=4)

    def _rows(self, X: Any) -> np.ndarray:
        """X given as a list of rows, read row by row (:func:`dpstats.numbers.rows_or_missing`) at the width that
        ``bounds`` declares (one pair per column); refused from the call alone when it declares none, since
        numpy would read the width from the rows, which one row of another length changes."""
        width = pairs_declared(self.bounds)
        if width is None:
            raise DataTypeError("X is a list of rows, whose width would be read from the rows themselves (one row "
                                "of another length would change it): declare it with bounds= as one (lo, hi) pair "
                                "per column, or pass a 2-d numpy array or a DataFrame. Nothing was read or spent")
        return rows_or_missing(X, width)

    def _bounds_dict(self, names: list[str], response: str) -> dict[str, tuple[float, float]] | None:
        out: dict[str, tuple[float, float]] = {}
        if isinstance(self.bounds, Mapping):
            unknown = [str(k) for k in self.bounds if str(k) not in names]
            if unknown:
                raise InvalidBoundsError(f"bounds name columns that are not inputs: {', '.join(unknown)}; the "
                                         f"input columns are {', '.join(names)} (the response's range goes in "
                                         "y_bounds=)")
            out.update({str(k): _pair(v, f"bounds[{k!r}]") for k, v in self.bounds.items()})
        elif self.bounds is not None:
            arr = _floats(self.bounds, "bounds")
            if arr.shape == (2,):
                out.update({n: _pair(arr, "bounds") for n in names})
            elif arr.shape == (len(names), 2):
                out.update({n: _pair(row, f"bounds for column '{n}'") for n, row in zip(names, arr, strict=True)})
            else:
                raise InvalidBoundsError(f"bounds must be a dict, one pair (lo, hi) or an array of shape "
                                         f"({len(names)}, 2); got shape {arr.shape}")
        if self.y_bounds is not None:
            out[response] = _pair(self.y_bounds, "y_bounds")
        return out or None


def _with_estimator_names(exc: MissingBoundsError, response: str, target_bounded: bool) -> MissingBoundsError:
    """dp_ols's refusal for bounds that were not declared, with this estimator's parameters for them: the inputs'
    ranges go in ``bounds=`` and the target's, which the refusal calls ``response`` (the name of the formula this
    estimator fits), in ``y_bounds=``.  The same type and ``privacy_spent``; public facts only."""
    target = "" if target_bounded else f", and the target's range, named '{response}' above, in y_bounds=(lo, hi)"
    out = type(exc)(f"{exc} In DPLinearRegression the inputs' ranges go in bounds= (a dict by column name, one pair "
                    f"per column or one pair for every column){target}.")
    out.privacy_spent = exc.privacy_spent
    return out


#: Names of this estimator's parameters elsewhere in the API (dp_ols_arrays' x_bounds= and intercept=, the CLI's
#: --seed): given here they would reach the method as unknown options, or dp_ols's hint for its own names.
_OTHER_NAMES = {"x_bounds": "bounds= (the inputs' ranges) and y_bounds= (the target's)", "X_bounds": "bounds=",
                "intercept": "fit_intercept=", "seed": "random_state=", "methods": "method="}


def _check_option_names(options: Mapping[str, Any]) -> None:
    """Refuse, before anything is read, a keyword that names one of this estimator's parameters as another entry
    point of the API spells it, with the estimator's name for it."""
    misplaced = [name for name in options if name in _OTHER_NAMES]
    if misplaced:
        raise InvalidArgumentError(f"DPLinearRegression has no parameter {misplaced[0]}=; write "
                                   f"{_OTHER_NAMES[misplaced[0]]}")


def _check_column_names(X: Any) -> None:
    """Refuse a table input (anything with ``columns``: pandas, polars) whose column names repeat, with the formula
    interface's :class:`~dpstats.errors.FormulaError` (scikit-learn's own validation fails on it less clearly);
    decided from the names alone.  Arrays have no names and pass."""
    columns = getattr(X, "columns", None)
    if columns is not None:
        check_unique_columns(list(columns))


def _floats(value: Any, what: str) -> np.ndarray:
    """A declared range (or array of ranges) as floats; a Python int beyond the float range, text or ragged pairs
    are refused with :class:`~dpstats.errors.InvalidBoundsError`, from the argument alone."""
    try:
        return np.asarray(value, dtype=float)
    except OverflowError:
        raise InvalidBoundsError(f"{what} has an end beyond the float range: declare the range from domain "
                                 f"knowledge, in a unit in which it stays below {MAX_BOUND_MAGNITUDE:g}") from None
    except (TypeError, ValueError):  # text, ragged pairs, ...
        raise InvalidBoundsError(f"{what} must be numbers: one pair (lo, hi) or one pair per column, got a "
                                 f"{type(value).__name__} that numpy cannot read as such") from None


def _pair(value: Any, what: str) -> tuple[float, float]:
    arr = _floats(value, what)
    if arr.shape != (2,):
        raise InvalidBoundsError(f"{what} must be a pair (lo, hi), got {shown(value)}")
    return float(arr[0]), float(arr[1])
