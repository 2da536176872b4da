"""The public entry points: ``dp_ols`` (formula + data) and ``dp_ols_arrays`` (X and y as arrays).

Each describes the call as a :class:`~dpstats.pipeline.FitRequest` (which
kind of data, the public arguments) and hands it to
:func:`dpstats.pipeline.run`, the one pipeline of every fit: the privacy
parameters and method options are checked there, the budget is reserved
before the data are touched, every refusal before the fit spends nothing, and
a method that fails after releasing something still has its spend settled in
the accountant.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpstats.api_arrays import MOVED_UP
from dpstats.errors import DPStatsError
from dpstats.pipeline import ArrayData, FitRequest, FrameData, SourceData, run
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.privacy.missing_screen import CSV_TEXT_HINT, source_hint
from dpstats.results import DPRegressionResults
from dpstats.rows.sources import CSVSource, as_source, is_chunked_data, is_dask_frame
from dpstats.validation import DEFAULT_RESCALE, check_declarations

__all__ = ["dp_ols", "dp_ols_arrays"]


def dp_ols(
    formula: str,
    data: Any,
    epsilon: float,
    delta: float = 1e-6,
    method: str = "auto",
    bounds: Mapping[str, tuple[float, float]] | None = None,
    accountant: PrivacyAccountant | None = None,
    random_state: int | np.random.Generator | np.random.SeedSequence | None = None,
    *,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    rescale: bool | str = DEFAULT_RESCALE,
    chunksize: int | None = None,
    eval_env: Any = None,
    **options: Any,
) -> DPRegressionResults:
    """Fit a linear regression with differential privacy from an R-style formula.

    The formula and the declared bounds and levels give the public design;
    the budget is reserved (in ``accountant``, if given) before any data are
    read; the method (``"auto"``: chosen from public facts) releases noisy
    statistics through the fit's ledger; and the result holds only released
    values and what follows from them.

    Parameters
    ----------
    formula : str
        patsy formula, e.g. ``"np.log(price) ~ np.log(carat) + C(cut, levels=['Fair', 'Good'])"``.
        Factor levels must be public (declared in the formula, in ``levels=``
        or by a pandas Categorical dtype).  Factor code is limited to row-wise
        operations (:mod:`dpstats.formula.language`: arithmetic, comparisons,
        log/exp/sqrt/abs and the other elementwise functions, ``poly(x, k)``
        as raw powers, splines with literal knots and bounds), checked before
        any data are read; ``y ~ .`` stands for every other column.
    data : pandas.DataFrame, dict, str, path, list of paths, dask.dataframe.DataFrame or source
        A DataFrame or dict of equal-length arrays (a list in the dict has no
        type of its own: it is read as text where text levels are declared for
        it, else as numbers, an element that is not one being missing, see
        :mod:`dpstats.numbers`); or, for data larger than
        memory, a path, glob or list of paths to CSV or Parquet files (or a
        directory of Parquet files), a Dask DataFrame, or a
        :mod:`dpstats.rows.sources` source.  Those are read chunk by chunk (on
        a Dask cluster: where the partitions live, with only aggregates sent
        back) with the same public design as in memory, by every method (see
        ``docs/scale.md``).
    epsilon : float
        Privacy budget of this fit, 0 < epsilon <= 100; ``float('inf')`` only
        with ``method='ols'`` (the non-private reference, labelled so).
    delta : float
        Privacy budget of this fit, 1e-12 <= delta < 1; choose it well below 1/n.
    method : str
        A registered method name (see :func:`dpstats.available_methods`) or
        ``"auto"``, which decides from public facts (n, d, which bounds were
        given) and records why in the report.
    bounds : dict of str to (float, float), optional
        Public ranges ``{name: (lo, hi)}`` of raw variables, design columns, or
        the response as patsy writes it (e.g. ``"I(a / (a + b))"``), from
        domain knowledge; each must be finite with lo < hi.  Methods that need
        them clip the data to them.
    accountant : PrivacyAccountant, optional
        The budget the fit draws from; a fit that would overspend it is
        refused before touching the data, and so is a fit that is not
        private (``method="ols"``, ``epsilon=float("inf")``), which no
        budget can pay for.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        ``None`` (the operating-system CSPRNG, the default for real releases),
        an int seed, a Generator or a SeedSequence (reproducible, for research
        and tests; the report says the noise was seeded).
    levels : dict of str to list, optional
        Public factor levels ``{variable: [level, ...]}``.  A row with a value
        outside them is handled as a row with a missing value (``missing``).
    missing : {"raise", "drop"}
        ``"raise"`` (default): a private fit screens for missing values (and
        values outside the declared levels) in the variables the formula
        uses.  Each such row becomes a public null
        row, and a noisy count of them (charged before anything else is
        released; the rest of the fit runs on 98% of ``epsilon``) decides
        whether the fit refuses (:class:`~dpstats.errors.MissingDataError`,
        above about 105 rows at epsilon 1 for the Gaussian methods, 656 for
        the others) or warns (:class:`~dpstats.errors.MissingValuesWarning`,
        above about 68 and 311); these are counts of rows whatever n, so a
        small data set with a large share missing can fit without a word:
        dropping or imputing those rows is the caller's call.  Where no
        variable can produce such a row (no dtype can hold a missing value,
        no column can hold a value outside its declared levels) there is no
        screen.  ``"drop"``: each
        incomplete row becomes a public null row (zero design row and
        response, after clipping) that adds nothing to what the method
        releases, so n stays public and the number of complete rows stays
        private, with no screen and nothing spent on it (see
        ``docs/privacy.md``).  Supported by the methods whose releases are
        sums over rows (``ssp``, ``adassp``, ``noisy_ols``, ``lasso``,
        ``dpsgd``, ``pgd``; ``method="auto"`` chooses among them); the
        non-private ``ols`` drops the rows (and with ``"raise"`` refuses a
        missing value).
    allow_data_levels : bool
        Accept factor levels read from the data; reported as a leak.
    rescale : "centred" (default), True or False
        When every column and the response have declared bounds, centre and
        scale them to [-1, 1] with those public numbers before fitting and map
        the coefficients back (post-processing; see :mod:`dpstats.scaling`).
        With ``"centred"`` (the default) product and power columns (``x:z``,
        ``I(x ** 2)``) are first re-expressed with their variables centred at
        the midpoints of their declared ranges, ``(x - c)(z - c')`` and
        ``(x - c) ** 2`` (a product with a factor's dummy or a 0/1 variable
        ``d``: ``(x - c) d``), a reparametrisation that changes neither the
        model nor the fitted values (:mod:`dpstats.formula.centring`;
        coefficients are reported for the formula's own columns) and brings
        the product's or power's coefficient, its interval and the fitted
        values much closer to least squares (``docs/choosing.md``, "Products
        and powers").  ``True`` maps the columns as written; ``False`` fits
        on the raw design.  A method that standardises privately inside its
        own domain is not changed by the map: ``pgd`` (what
        ``method="auto"`` fits on most designs) centres and scales every
        column and the response by private estimates whatever ``rescale``
        is, so only the centring of products and powers changes its fit
        (and, for a design without an intercept whose columns sum to the
        constant, ``0 + C(g) + x``, fitting through the intercept model,
        which both ``"centred"`` and ``True`` do).  The command line's
        ``--rescale centred``, ``columns`` and ``off`` are ``"centred"``,
        ``True`` and ``False`` here.
    chunksize : int, optional
        Rows per chunk for files (default 131072), or, with a DataFrame,
        process it in chunks of this many rows (same result as in one piece).
    eval_env : object, optional
        Deprecated and ignored (a ``DeprecationWarning`` says so): formulas
        are evaluated in dpstats's own namespace of row-wise functions
        (:mod:`dpstats.formula.language`), never in the caller's, so the
        formula cannot call code that reads across rows.
    **options
        Method-specific options (e.g. ``rho=`` for adassp; each method's page
        lists its options and their defaults).

    Returns
    -------
    DPRegressionResults
        The released coefficients (``params``), standard errors and intervals
        where the method gives them, ``summary()``, ``predict()``, the privacy
        report (``privacy``) and the theory (``error_bounds``).

    Raises
    ------
    InvalidPrivacyParameterError
        epsilon or delta out of range (``UnsupportedPrivacyParameterError``
        outside the supported range), a private method with an infinite
        epsilon, or ``ols`` with a finite one; an accountant with ``ols`` or
        an infinite epsilon.  Nothing is spent.
    UnknownMethodError, MethodOptionError
        An unknown method, or an option it does not accept or out of range.
        Nothing is spent.
    BudgetExceededError
        The accountant cannot cover (epsilon, delta).  Nothing is spent.
    FormulaError, UndeclaredLevelsError, DisallowedExpressionError, TransformDomainError
        The formula cannot be evaluated privately (a syntax error, levels
        that would be read from the data, code that reads across rows, a
        transform undefined inside the declared bounds).  Nothing is spent.
    MissingBoundsError, InsufficientDataError, SingularDesignError
        The method needs bounds that were not declared, or n is too small
        for it (``"auto"``: for every method it may choose).  Nothing is spent.
    MissingDataError
        The missing-value screen's noisy count of incomplete rows is above its
        refusal level (``missing="raise"``); its ``privacy_spent`` is the
        screen's share.  For the non-private ``ols``, any missing value.
    DPStatsError
        A refusal after a release (for example ``PTRFailure`` of ``tukey``)
        or an internal failure (``InternalFitError``); the exception's
        ``privacy_spent`` says what was spent.

    See Also
    --------
    dp_ols_arrays : The same fit from arrays.
    PrivacyAccountant : A budget shared by several fits.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("diamonds")
    >>> res = dpstats.dp_ols("np.log(price) ~ np.log(carat) + C(cut, Treatment('Ideal'))", df,
    ...                      epsilon=1.0, delta=1e-6, bounds={"carat": (0.2, 5.01), "price": (326, 18823)},
    ...                      random_state=0)
    >>> res.method
    'pgd'
    >>> res.params.index[-1]
    'np.log(carat)'
    >>> res.privacy.epsilon_spent <= 1.0
    True
    """
    if eval_env is not None:
        warnings.warn("dp_ols(eval_env=...) is deprecated and ignored: formulas are evaluated in dpstats's own "
                      "namespace of row-wise functions (see dpstats.formula.language), never in the caller's",
                      DeprecationWarning, stacklevel=2)
    check_declarations(bounds, levels)
    request: FrameData
    if chunksize is not None or is_chunked_data(data):
        request = SourceData(formula, data, bounds, levels, missing, allow_data_levels, chunksize=chunksize)
    else:
        request = FrameData(formula, data, bounds, levels, missing, allow_data_levels)
    with source_hint(CSV_TEXT_HINT) if _reads_csv(data, chunksize) else contextlib.nullcontext():
        return run(FitRequest(request, epsilon, delta, method=method, options=options, accountant=accountant,
                              random_state=random_state, rescale=rescale))


def _reads_csv(data: Any, chunksize: int | None) -> bool:
    """Whether ``data`` is read as CSV (a CSV path, a list of them or a :class:`~dpstats.rows.sources.CSVSource`):
    a public fact of the argument, for the missing-value screen's hint about text columns read as numbers."""
    if not is_chunked_data(data) or is_dask_frame(data):
        return False
    try:
        return isinstance(as_source(data, chunksize), CSVSource)
    except (DPStatsError, OSError):  # the fit refuses it with its own message
        return False


def dp_ols_arrays(
    X: Any,
    y: Any,
    epsilon: float,
    delta: float = 1e-6,
    method: str = "auto",
    *,
    x_bounds: Any = None,
    y_bounds: tuple[float, float] | None = None,
    column_names: Sequence[str] | None = None,
    response_name: str = "y",
    intercept: bool,
    missing: str = "raise",
    accountant: PrivacyAccountant | None = None,
    random_state: int | np.random.Generator | np.random.SeedSequence | None = None,
    rescale: bool | str = DEFAULT_RESCALE,
    **options: Any,
) -> DPRegressionResults:
    """Fit a private linear regression from arrays: :func:`dpstats.dp_ols` without a formula.

    The design is X itself (plus an intercept column when ``intercept=True``),
    so it suits wide designs, e.g. ``method="lasso"`` with d in the
    thousands.  Everything after the design (method choice, accountant,
    public rescaling, clipping, privacy report, error bounds) is the pipeline
    of :func:`dpstats.dp_ols`.

    Parameters
    ----------
    X : array_like
        n x d array of covariates (a DataFrame's column names are used when
        ``column_names`` is not given).  A list of rows needs its width
        declared (``column_names=`` or one ``x_bounds`` pair per column); a row
        of another length is a row of missing values (``docs/privacy.md``,
        "Values that are not numbers").  A Dask collection is computed and read
        as its result (this interface is in memory; for larger data use
        :func:`dpstats.dp_ols` with the Dask DataFrame).
    y : array_like
        Length-n response.
    epsilon : float
        Privacy budget of this fit, as in :func:`dpstats.dp_ols`.
    delta : float
        Privacy budget of this fit, as in :func:`dpstats.dp_ols`.
    method : str
        A registered method name or ``"auto"``.
    x_bounds : (float, float) or array_like of shape (d, 2), optional
        Public ranges of the columns: one pair ``(lo, hi)`` for every column,
        or one pair per column.  Never derive them from the data.
    y_bounds : (float, float), optional
        Public range ``(lo, hi)`` of the response.
    column_names : sequence of str, optional
        Names of the d columns (default: a DataFrame's columns, else
        ``x1 .. xd``, as statsmodels names array columns).
    response_name : str
        Name of the response in the report (default ``"y"``).
    intercept : bool
        Required, keyword only: ``True`` prepends an ``Intercept`` column of
        ones (as :func:`dpstats.dp_ols` does unless the formula says ``- 1``,
        and as :class:`dpstats.sklearn.DPLinearRegression` does by default);
        ``False`` fits X as given (statsmodels' ``OLS(y, X)``, for an X that
        already holds a constant column or a model through the origin).
        There is no default: the two conventions differ, and a guess would
        silently fit the wrong model (no intercept, or two constant columns).
    missing : {"raise", "drop"}
        As in :func:`dpstats.dp_ols`: ``"raise"`` (default) counts the rows
        with NaN by the charged missing-value screen, which refuses many;
        ``"drop"`` makes each such row a public null row without the screen
        (the non-private ``ols`` drops it).
    accountant : PrivacyAccountant, optional
        As in :func:`dpstats.dp_ols`.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        As in :func:`dpstats.dp_ols`.
    rescale : "centred" (default), True or False
        As in :func:`dpstats.dp_ols`.
    **options
        Method-specific options (e.g. ``sparsity=`` for the lasso).

    Returns
    -------
    DPRegressionResults
        As from :func:`dpstats.dp_ols`; ``predict`` takes a DataFrame with the
        column names (for arrays use ``X_new @ res.params``).

    Raises
    ------
    DataTypeError
        X is not an n x d numeric array or y does not have n values, or X is
        a list of rows whose width the call does not declare.  Nothing is
        spent.
    MissingDataError
        Many rows hold NaN (the missing-value screen of :func:`dpstats.dp_ols`:
        a row with NaN is a public null row, an infinite value is set to 0,
        and a charged noisy count of the null rows decides the refusal); for
        the non-private ``ols``, any NaN or infinite value.
    InvalidBoundsError
        ``x_bounds`` or ``y_bounds`` is malformed.  Nothing is spent.
    DPStatsError
        Every refusal of :func:`dpstats.dp_ols` after the design.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(2000, 3))
    >>> y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(0, 0.1, size=2000)
    >>> res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="ssp", intercept=False, x_bounds=(-1, 1),
    ...                             y_bounds=(-4, 4), random_state=0)
    >>> list(res.params.index)
    ['x1', 'x2', 'x3']
    """
    data = ArrayData(X, y, x_bounds=x_bounds, y_bounds=y_bounds, column_names=column_names,
                     response_name=response_name, intercept=intercept, missing=missing)
    return run(FitRequest(data, epsilon, delta, method=method, options=options, accountant=accountant,
                          random_state=random_state, rescale=rescale))


MOVED_UP.add("dp_ols_arrays", "dpstats.dp_ols_arrays", dp_ols_arrays)  # the deprecated api_arrays.dp_ols_arrays
