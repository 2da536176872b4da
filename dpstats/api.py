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

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from dpstats.pipeline import ArrayData, FitRequest, FrameData, SourceData, run
from dpstats.privacy.accountant import PrivacyAccountant
from dpstats.results import DPRegressionResults
from dpstats.rows.sources import is_chunked_data

__all__ = ["dp_ols", "dp_ols_arrays"]


def dp_ols(
    formula: str,
    data: Any,
    epsilon: float,
    delta: float = 1e-6,
    method: str = "auto",
    bounds: Mapping[str, tuple[float, float]] | None = None,
    accountant: PrivacyAccountant | None = None,
    random_state: int | np.random.Generator | None = None,
    *,
    levels: Mapping[str, Sequence[Any]] | None = None,
    missing: str = "raise",
    allow_data_levels: bool = False,
    rescale: bool = True,
    chunksize: int | None = None,
    eval_env: Any = None,
    **options: Any,
) -> DPRegressionResults:
    """Fit a linear regression with differential privacy from an R-style formula.

    Parameters
    ----------
    formula:
        patsy formula, e.g. ``"np.log(price) ~ log(carat) + C(cut, levels=['Fair', 'Good'])"``.
        Factor levels must be public (declared in the formula, in ``levels=``
        or by a pandas Categorical dtype).  Factor code is limited to row-wise
        operations (:mod:`dpstats.formula.language`: arithmetic, comparisons,
        log/exp/sqrt/abs and the other elementwise functions, ``poly(x, k)``
        as raw powers, splines with literal knots and bounds), checked before
        any data are read; ``y ~ .`` stands for every other column.
    data:
        pandas DataFrame or dict of equal-length arrays; or, for data larger
        than memory, a path, glob or list of paths to CSV or Parquet files (or
        a directory of Parquet files), a ``dask.dataframe.DataFrame``, or a
        :mod:`dpstats.rows.sources` source.  Those are read chunk by chunk (on
        a Dask cluster: where the partitions live, with only aggregates sent
        back) with the same public design as in memory, by every method (see
        ``docs/scale.md``).
    epsilon, delta:
        Privacy budget of this fit (epsilon > 0, 0 < delta < 1; choose delta
        well below 1/n).  ``epsilon=float('inf')`` only with ``method='ols'``.
    method:
        A registered method name (see :func:`dpstats.methods.available_methods`)
        or ``"auto"``, which decides from public facts (n, d, which bounds were
        given) and records why in the report.
    bounds:
        Public ranges ``{name: (lo, hi)}`` of raw variables, design columns, or
        the response as patsy writes it (e.g. ``"I(a / (a + b))"``), from
        domain knowledge; each must be finite with lo < hi.  Methods that need
        them clip the data to them.
    accountant:
        A :class:`~dpstats.privacy.accountant.PrivacyAccountant` the fit draws
        from; a fit that would overspend it is refused before touching the data.
    random_state:
        ``None`` (the operating-system CSPRNG, the default for real releases), an int seed
        or a Generator (reproducible; the report says the noise was seeded).
    levels:
        Public factor levels ``{variable: [level, ...]}``.
    missing:
        ``"raise"`` (default: a missing value in a variable the formula uses
        is refused) or ``"drop"``: each incomplete row becomes a public null
        row (zero design row and response, after clipping) that adds nothing
        to what the method releases, so n stays public and the number of
        complete rows stays private (see ``docs/privacy.md``).  Supported by
        the methods whose releases are sums over rows (``ssp``, ``adassp``,
        ``noisy_ols``, ``lasso``, ``dpsgd``; ``method="auto"`` chooses among
        them); the non-private ``ols`` drops the rows.
    allow_data_levels:
        Accept factor levels read from the data; reported as a leak.
    rescale:
        When every column and the response have declared bounds, centre and
        scale them to [-1, 1] with those public numbers before fitting and map
        the coefficients back (post-processing; see :mod:`dpstats.scaling`).
        This usually improves private fits a lot; ``False`` fits on the raw
        design.
    chunksize:
        Rows per chunk for files (default 131072), or, with a DataFrame,
        process it in chunks of this many rows (same result as in one piece).
    eval_env:
        Deprecated and ignored (a ``DeprecationWarning`` says so): formulas
        are evaluated in dpstats's own namespace of row-wise functions
        (:mod:`dpstats.formula.language`), never in the caller's, so the
        formula cannot call code that reads across rows.
    **options:
        Method-specific options (e.g. ``rho=`` for adassp).

    Returns
    -------
    DPRegressionResults
    """
    if eval_env is not None:
        warnings.warn("dp_ols(eval_env=...) is deprecated and ignored: formulas are evaluated in dpstats's own "
                      "namespace of row-wise functions (see dpstats.formula.language), never in the caller's",
                      DeprecationWarning, stacklevel=2)
    request: FrameData
    if chunksize is not None or is_chunked_data(data):
        request = SourceData(formula, data, bounds, levels, missing, allow_data_levels, chunksize=chunksize)
    else:
        request = FrameData(formula, data, bounds, levels, missing, allow_data_levels)
    return run(FitRequest(request, epsilon, delta, method=method, options=options, accountant=accountant,
                          random_state=random_state, rescale=rescale))


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
    intercept: bool = False,
    accountant: PrivacyAccountant | None = None,
    random_state: int | np.random.Generator | None = None,
    rescale: bool = True,
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
    X:
        n x d array of covariates (any array-like; a DataFrame's column names
        are used when ``column_names`` is not given).
    y:
        Length-n response.
    epsilon, delta, method, accountant, random_state, rescale, **options:
        As in :func:`dpstats.dp_ols`.
    x_bounds:
        Public ranges of the columns: one pair ``(lo, hi)`` for every column,
        or d pairs (one per column, an array of shape (d, 2)).  Never derive
        them from the data.
    y_bounds:
        Public range ``(lo, hi)`` of the response.
    column_names:
        Names of the d columns (default: a DataFrame's columns, else
        ``x1 .. xd``, as statsmodels names array columns).
    response_name:
        Name of the response in the report (default ``"y"``).
    intercept:
        Prepend an ``Intercept`` column of ones (default False, as statsmodels'
        array interface; the formula interface adds one as R does).

    Returns
    -------
    DPRegressionResults
        ``predict`` takes a DataFrame with the column names; for arrays use
        ``X_new @ res.params``.

    Examples
    --------
    >>> res = dpstats.dp_ols_arrays(X, y, 1.0, 1e-6, method="lasso", x_bounds=(-1, 1), y_bounds=(-10, 10),
    ...                             sparsity=5)  # doctest: +SKIP
    """
    data = ArrayData(X, y, x_bounds=x_bounds, y_bounds=y_bounds, column_names=column_names,
                     response_name=response_name, intercept=intercept)
    return run(FitRequest(data, epsilon, delta, method=method, options=options, accountant=accountant,
                          random_state=random_state, rescale=rescale))
