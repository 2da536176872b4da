"""Typed errors raised by dpstats.

Every refusal decided before any noise is drawn spends no privacy budget.  The
classes subclass the matching built-in exception (``ValueError``, ``KeyError``,
...) so that generic handlers keep working, and all derive from
:class:`DPStatsError` so that callers can catch the package's errors at once.
"""

from __future__ import annotations


class DPStatsError(Exception):
    """Base class of every error raised by dpstats.

    Every dpstats error has ``privacy_spent``, the (epsilon, delta) charged
    before it was raised: (0.0, 0.0) for an error decided from the arguments
    and public facts before a fit touched the data (the class default); a fit
    that fails after touching the data sets it on the instance to what its
    ledger charged.
    """

    privacy_spent: tuple[float, float] = (0.0, 0.0)


class InvalidPrivacyParameterError(DPStatsError, ValueError):
    """epsilon or delta is outside its valid range (epsilon > 0, 0 < delta < 1)."""


class UnsupportedPrivacyParameterError(InvalidPrivacyParameterError):
    """epsilon or delta is a valid budget but outside the range one fit supports numerically.

    See :data:`dpstats.validation.MAX_EPSILON` and
    :data:`dpstats.validation.MIN_DELTA`; the message states the supported
    range.  Raised from public facts only, before anything is spent.
    """


class InvalidArgumentError(DPStatsError, ValueError):
    """A public argument other than epsilon or delta is outside its valid range (say, ``plan(target=0)``)."""


class FormulaError(DPStatsError, ValueError):
    """The formula cannot be turned into a public design (syntax, unknown column, ...)."""


class UnknownColumnError(FormulaError, KeyError):
    """The formula or the bounds name a variable that is not in the data.

    Parameters
    ----------
    message : str
        What is missing and what to declare or fix (public facts only).
    column : str or None
        The variable's name when the formula names it (None otherwise); kept as ``column``.
    """

    def __init__(self, message: str = "", column: str | None = None) -> None:
        super().__init__(message)
        self.column = column

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class UndeclaredLevelsError(FormulaError):
    """A categorical factor's levels would be read from the private data."""


class DisallowedExpressionError(FormulaError):
    """Factor code uses an operation outside the formula language dpstats evaluates.

    Formulas are checked against an allow-list of row-wise operations (column
    names, numeric literals, arithmetic and comparisons, ``I``, ``Q``,
    ``C(..., levels=<literal>)``, the elementwise functions the bounds layer
    knows, raw ``poly(x, k)`` and splines with literal knots and bounds)
    before any data are read.  The message names the call and says why it is
    refused (a cross-row function such as ``np.mean`` computes on every row at
    once, so one row could change every transformed value).
    """


class StatefulTransformError(DisallowedExpressionError):
    """A patsy stateful transform would compute statistics of the private data."""


class MissingDataError(DPStatsError, ValueError):
    """The variables used by the formula contain missing values."""


class NonFiniteValueError(MissingDataError):
    """A value that must be finite is not: in new data given to ``predict`` (public data, not the fit's), or in
    the X or y given to the scikit-learn wrapper.

    A fit never raises it for its own data: there a non-finite value of the
    design or the response (an infinite value, a transform undefined or
    overflowing on its row) is set to 0 on its row, since a refusal would
    answer for free whether any row makes the formula non-finite
    (docs/privacy.md, "The domain of each guarantee").
    """


class DataTypeError(DPStatsError, TypeError):
    """A variable has a type the model cannot use (say, a non-numeric response)."""


class DataValueError(DataTypeError, ValueError):
    """Data that cannot be read as numeric arrays of the required shape (say, a 1-D ``X`` or a string in ``X`` for
    :class:`dpstats.sklearn.DPLinearRegression`); a ``ValueError`` too, as scikit-learn expects.  Its message
    never quotes a value."""


class MissingBoundsError(DPStatsError, ValueError):
    """The method needs public data bounds that were not given or cannot be derived."""


class InvalidBoundsError(DPStatsError, ValueError):
    """A declared bound is malformed (lo > hi, not finite, unknown name)."""


class TransformDomainError(FormulaError, InvalidBoundsError):
    """A transform is undefined (or overflows) somewhere inside the declared bounds of its variables.

    Decided from the formula and the declared bounds alone, before any data
    are read (say, ``np.log(x)`` with x declared in [0, 10]), so the refusal
    spends nothing and does not depend on the data.
    """


class InsufficientDataError(DPStatsError, ValueError):
    """The public facts n and d make the fit impossible (too few rows for the method)."""


class SingularDesignError(DPStatsError, ValueError):
    """The design is singular by construction (decided from public facts only)."""


class UnknownMethodError(DPStatsError, ValueError):
    """``method=`` names no registered estimator."""


class MethodOptionError(DPStatsError, TypeError):
    """An option passed to a method is unknown or invalid."""


class AccountantPicklingError(DPStatsError, TypeError):
    """An in-memory :class:`~dpstats.PrivacyAccountant` (or an object that holds one, such as a fitted
    :class:`dpstats.sklearn.DPLinearRegression`) was pickled: a copy in another process would carry its own budget
    and bypass the cap.  A budget file (``PrivacyAccountant(..., path=...)``) pickles as its path; a ``TypeError``
    too, as pickle's refusals of objects are."""


class BudgetExceededError(DPStatsError, RuntimeError):
    """The fit would spend more privacy budget than is available; nothing was released."""


class UnseenLevelError(DPStatsError, ValueError):
    """``predict`` met a factor level that the fitted design does not know."""


class IllConditionedDesignError(DPStatsError, RuntimeError):
    """A private check certified too small a lambda_min(X^T X) to calibrate the release; nothing else was released.

    Raised by ``noisy_ols`` after it has spent part of the budget on the check
    (a noisy lower bound on the smallest eigenvalue of X^T X).  The refusal is
    post-processing of that release, so the spend is exactly the check's;
    ``privacy_spent`` holds it as (epsilon, delta) and the message states it.

    Parameters
    ----------
    message : str
        What was refused and why, from public facts and released values.
    privacy_spent : tuple of float
        The (epsilon, delta) the check spent.
    """

    def __init__(self, message: str, privacy_spent: tuple[float, float]) -> None:
        super().__init__(message)
        self.privacy_spent = privacy_spent


class PTRFailure(DPStatsError, RuntimeError):
    """A propose-test-release check refused to release an estimate.

    The test itself was a private release, so its budget is spent: the
    refusal is not free.  ``privacy_spent`` is the (epsilon, delta) the fit
    spent before refusing, ``hint`` says in words what makes the test pass
    more often, and ``noisy_statistic`` / ``threshold`` are the released noisy
    distance-to-unsafety bound and the value it had to exceed.

    Parameters
    ----------
    message : str
        What the test found, from released values.
    privacy_spent : tuple of float
        The (epsilon, delta) spent before refusing.
    hint : str
        What makes the test pass more often (appended to the message).
    noisy_statistic : float, optional
        The released noisy distance to an unsafe data set.
    threshold : float, optional
        The value it had to exceed.
    """

    def __init__(self, message: str, *, privacy_spent: tuple[float, float], hint: str,
                 noisy_statistic: float | None = None, threshold: float | None = None) -> None:
        super().__init__(f"{message} {hint}")
        self.privacy_spent = privacy_spent
        self.hint = hint
        self.noisy_statistic = noisy_statistic
        self.threshold = threshold


class InternalFitError(DPStatsError, RuntimeError):
    """An operation on the data failed with an exception that is not one of dpstats's typed refusals.

    The original message is withheld (it may quote data values): the message
    names the stage and the original exception's type only (also in
    ``original_type``).  ``privacy_spent`` is what the fit's ledger charged
    before the failure, and the accountant was settled with it.

    Parameters
    ----------
    message : str
        The stage that failed and the original exception's type.
    privacy_spent : tuple of float
        The (epsilon, delta) charged before the failure.
    original_type : str
        The name of the original exception's type.
    """

    def __init__(self, message: str, *, privacy_spent: tuple[float, float], original_type: str) -> None:
        super().__init__(message)
        self.privacy_spent = privacy_spent
        self.original_type = original_type


class ConvergenceError(DPStatsError, RuntimeError):
    """An iterative private method diverged (say, too large a learning rate); its budget was spent."""


class PublicDataRequiredError(DPStatsError, ValueError):
    """A utility study would fit the same data many times without the data being declared public.

    :func:`dpstats.compare` runs every method at every epsilon ``trials``
    times on one data set: the privacy costs add up to many times any single
    budget, and its in-sample R^2 is computed from the data without noise.
    That is only legitimate for public or synthetic data, which the caller
    must acknowledge with ``data_are_public=True``.
    """


class ChunkedDataNotSupportedError(DPStatsError, ValueError):
    """The method cannot fit data read in chunks (files, a Dask DataFrame) yet; nothing was read or spent.

    The message says why (e.g. a method that needs random access to rows or
    one pass over the data per iteration) and which methods can.
    """


class BudgetFileError(DPStatsError, RuntimeError):
    """A persistent budget file cannot be used: corrupt, not a dpstats budget file, unreadable or locked.

    Raised by ``PrivacyAccountant(..., path=...)`` and ``dpstats budget show``.
    The file is never reset or overwritten: a custodian must look at it.
    ``path`` is the file and ``reason`` says what is wrong in a few words.

    Parameters
    ----------
    message : str
        What is wrong and what to do.
    path : str
        The budget file.
    reason : str
        What is wrong, in a few words.
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class SettlementError(DPStatsError, RuntimeError):
    """The accountant could not record what a fit spent (a lock timeout, a broken budget file, ...).

    The fit's reservation is then left held in full, which is conservative:
    the accountant counts the whole reserved budget as spent until a
    custodian settles it.  ``privacy_spent`` is what the fit's ledger charged;
    no released value travels with this error or its chain.

    Parameters
    ----------
    message : str
        What failed while settling.
    privacy_spent : tuple of float
        The (epsilon, delta) the fit's ledger charged.
    """

    def __init__(self, message: str, *, privacy_spent: tuple[float, float]) -> None:
        super().__init__(message)
        self.privacy_spent = privacy_spent


class UnknownReservationError(DPStatsError, KeyError):
    """A reservation token that the accountant does not hold: never reserved by it, or already settled.

    Settle each token :meth:`~dpstats.privacy.accountant.PrivacyAccountant.reserve` returned exactly once.
    """

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class BudgetMismatchError(BudgetFileError):
    """A budget file was opened with a budget other than the one stored in it.

    Pass the stored budget (or use ``PrivacyAccountant.open(path)``), or
    ``allow_budget_change=True`` to change it on purpose (the change is logged
    in the file).

    Parameters
    ----------
    message : str
        The stored and the requested budgets, and what to do.
    path : str
        The budget file.
    reason : str
        What is wrong, in a few words.
    """


class NoiseScaleRangeError(DPStatsError, ValueError):
    """A noise scale (a sensitivity over its privacy parameter) lies outside what the samplers support.

    The exact samplers put every release on a power-of-two grid below the
    noise scale; scales beyond about 1e282 (or below about 1e-280), and
    negative, NaN or infinite sensitivities (or a zero one for a Gaussian
    release, which needs no noise), cannot be sampled.  The scale follows from
    public options and bounds (an absurd ``clip_norm``, ``step_size`` or
    declared range) or from values released earlier in the fit, never from
    the data directly, so the refusal leaks nothing more; ``privacy_spent``
    (set by the API) holds what was charged before it.
    """


class InferenceUnavailableError(DPStatsError, AttributeError):
    """Deprecated: no longer raised.

    Reading ``bse``, ``tvalues``, ``pvalues``, ``conf_int()`` or ``cov_params()``
    of a fit without inference returns NaN, and
    ``DPRegressionResults.inference_reason`` says why.  The class stays so that
    ``except InferenceUnavailableError`` clauses keep working; it will be
    removed in a later release.
    """


class InferenceWithheldWarning(UserWarning):
    """Deprecated: no longer emitted.

    A fit whose inference is withheld returns NaN for its standard errors, z,
    p and intervals without a warning; ``DPRegressionResults.inference_reason``
    says why.  The class stays so that warning filters naming it keep working;
    it will be removed in a later release.
    """


class LargeDeltaWarning(UserWarning):
    """delta is at least 1/n: an (epsilon, delta)-DP fit may then publish a whole row with probability delta for
    each row, so the guarantee protects no one in particular; choose delta well below 1/n (for example 1e-6 up to a
    few hundred thousand rows).  Decided from public facts (delta and n); the fit runs."""


class UnscaledFitWarning(UserWarning):
    """A method whose defaults assume unit scale (``dpsgd``'s clip norm, learning rate and start at 0) ran on the
    data's own units: not every variable has declared bounds, so there was no public rescaling, and its scale
    options were left at their defaults.  On data far from unit scale its coefficients can be off by orders of
    magnitude.  Declare bounds for every variable, or pass the method's scale options (``clip_norm=`` and
    ``learning_rate=``).  Decided from public facts (which bounds were declared, the options); the fit runs."""


class UncentredColumnsWarning(UserWarning):
    """A private fit has product or power columns (``x:z``, ``I(x ** 2)``) that were fitted as written: with
    ``rescale=False``; with ``rescale=True`` and a bound missing; with the default ``rescale="centred"``, a
    bound missing, and a method that does not centre them at centres it releases (pgd does, around an Intercept
    column: not for ``y ~ 0 + C(g) + ...``); or in a design without the constant (``y ~ 0 + x + I(x ** 2)``),
    which no centring leaves the same model.  Fitted as written,
    the intervals of such a column, its variables and the intercept are not reliable (the other coefficients' are
    unaffected).  Declare bounds for every variable and the response, or keep the default rescaling with pgd.
    Decided from public facts (the formula, which bounds were declared, the options); the fit runs and its report
    says the same."""


class FloatIndicatorWarning(UserWarning):
    """The response is declared between two consecutive integers (such as (0, 1)) but stored as floats, so public
    facts do not make it two-valued: a 0/1 indicator stored this way (as ``astype(float)`` and many CSV readers
    leave it) is fitted as a number in [0, 1], without the clip and interval rules of a linear probability model,
    and with a rare outcome its coefficients can be far too small with intervals that miss least squares.  Store
    an indicator as bool or int; a proportion or another response that takes values between needs nothing.
    Decided from the dtype and the declared bounds; the fit runs."""


class UndeclaredCategoriesWarning(UserWarning):
    """A factor column of pandas' categorical dtype has categories that equal none of the levels declared for it
    (``levels=`` or ``C(var, levels=[...])``): its rows in those categories are outside the declared levels, so they
    become public null rows, counted by the missing-value screen as every row outside the declared levels is.
    Declare every category the variable can take, spelled as the dtype spells it (case and type matter).  Decided
    from the dtype's categories (the schema) and the declared levels; the message counts the categories and quotes
    none; the fit runs."""


class UnmatchableLevelsWarning(UserWarning):
    """Some of the levels declared for a factor (``levels=`` or ``C(var, levels=[...])``), not all, can never equal
    a value of its column's dtype: 300 or 0.5 for an ``int8`` column, -1 for an unsigned one, 2 for a boolean one, a
    timestamp without a time zone for a column of dates with one.  No row can hold such a level, so the data cannot
    inform its coefficient (with treatment contrasts its design column is zero in every row; as the reference level
    it leaves the other levels' columns adding up to the intercept).  Declare only levels of the column's type, or
    convert the column.  Decided from the declared levels and the dtype (the schema) before any row is read or
    anything is spent; the message names those declared levels (public) and no value of the data; the fit runs.
    Where no declared level can match, the fit is refused instead (every row would be outside the levels).  A
    categorical column's categories are checked by their own rule
    (:class:`~dpstats.errors.UndeclaredCategoriesWarning`)."""


class MissingValuesWarning(UserWarning):
    """The missing-value screen of a fit with ``missing="raise"`` counted, with noise, more rows with a missing
    value than a data set without any would show once in a thousand fits, but not enough to refuse: those rows
    entered the fit as public null rows.  Decided from the released noisy count (the message gives it); the fit
    ran.  Impute the missing values with a public rule, or pass ``missing="drop"`` to say they are expected."""


class ClippedRowsWarning(UserWarning):
    """A fit without declared bounds clipped a material share of its rows: pgd's released count of the rows with a
    value beyond the clipping domain it released for the variables without bounds (centre +- 8 released scales),
    less its noise, is above a tenth of the rows.  Those rows enter the fit clipped, so the estimate, and any
    interval, targets the fit of the clipped data, a robust fit, not least squares: with heavy-tailed variables (the
    largest firms, incomes, counts with a long tail), whose extreme rows set the least-squares slope, or a variable
    whose released domain missed most of its values (one far from 0 for its spread, such as a year), the two can be
    far apart.  pgd then withholds its intervals (``inference_reason`` says why).  Declare bounds that hold every
    value (a public range: pgd clips to them and releases no domain), or transform the variables (logs) so that no
    value lies far out.  Decided from one released noisy count (the message gives it); the fit runs."""


class RoughResponseDomainWarning(UserWarning):
    """pgd fitted a response without declared bounds, and the clipping domain it released for the response is rough:
    in the noisy histogram of the response's group variances, the groups of equal values outcount the modal spread,
    so most groups of rows hold a single value of the response (a rare two-valued response stored as floats, a
    response of mostly zeros) and the released scale comes from the few others.  The domain (centre +- 8 released
    scales) can then be far from the response's values, and the estimate, that of the response clipped to it, and its
    interval can be far from least squares (a 0/1 response with 3% ones came out with slopes near 0 and intervals of
    width near 0, or orders of magnitude off).  Where those groups lead the modal spread by more than 9/16 of the
    groups (a 0/1 response with fewer than 1 in 8 ones), pgd also gives no interval (``inference_reason`` says why).
    Declare bounds for the response (a 0/1 indicator: bounds (0, 1), stored as bool or int).  Decided from released
    values only (the histogram's noisy counts); the message names the response, never a value; the fit runs."""


class DivergedFitWarning(UserWarning):
    """A noisy iterative fit diverged: ``ambssgd``'s released residual scale of a mini-batch rose far above that of
    its first step (the noise of each step, which grows with the residual scale through the clipping norm, outran the
    descent).  The fit stopped stepping and returned the iterate with the smallest released residual scale; its
    error can still be large.  Use more rows, a larger epsilon, fewer rounds (``rounds=``) or another method.
    Decided from released values only (the residual scales of the mini-batches; the message gives them); the fit
    runs."""


class ExtrapolationWarning(UserWarning):
    """``predict`` was given new rows with a covariate outside the bounds declared for the fit.

    The fit took the declared bounds as the range of its data (it clipped or rescaled by them), so the released
    coefficients describe the relation inside them; predictions beyond them extrapolate.  The message names the
    columns, their declared bounds and how many new rows lie outside (never a value); fits without declared
    bounds are not checked.  The prediction is made.
    """
