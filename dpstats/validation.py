"""Validation of public arguments (scikit-learn style ``check_*`` helpers).

These checks look only at public facts (the arguments themselves, the schema,
n and d) and run before any budget is spent.

The budget of one fit must also lie in the range the package's calibration and
composition routines handle in double precision (:data:`MAX_EPSILON`,
:data:`MIN_DELTA`).  Outside it a fit could only fail part-way (an overflow in
a privacy-loss distribution, a Gaussian privacy profile that rounds to 0 or 1)
or spend budget on a refusal, so it is refused up front and spends nothing.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping

import numpy as np

from dpstats.errors import (
    InvalidArgumentError,
    InvalidBoundsError,
    InvalidPrivacyParameterError,
    UnsupportedPrivacyParameterError,
)

__all__ = ["MAX_BOUND_MAGNITUDE", "MAX_EPSILON", "MIN_DELTA", "MIN_EPSILON", "check_alpha", "check_bounds_pair",
           "check_budget_total", "check_declarations", "check_epsilon_grid", "check_privacy_parameters",
           "check_range_magnitude", "check_range_width", "check_rescale", "RESCALE_CHOICES", "finite_real",
           "pairs_declared", "real_value", "shown"]

#: Largest finite epsilon of one fit.  exp(epsilon) is formed by the privacy-loss-distribution code
#: (dp_accounting) and overflows above about 709; the hardened Gaussian steps are certified for a composed
#: epsilon of at most :data:`dpstats.privacy.ledger.REFERENCE_EPSILON_CAP`; PLD composition cost grows
#: linearly with epsilon.  An epsilon of 100 already allows each released value to change the probability of
#: any output by a factor e^100 ~ 3e43, i.e. no privacy at all.
MAX_EPSILON = 100.0

#: Smallest delta of one fit.  dp_accounting's PLD accounting (DP-SGD, Peeling, PTR and mixed ledgers)
#: truncates tails of mass about 6e-18 per composed step and counts them as an infinite privacy loss, so it
#: cannot certify a delta below the sum over the steps: DP-SGD's default 250-550 steps already need
#: delta > 1.5e-15, and 1e-12 covers up to about 1e5 steps (more is refused by
#: :func:`dpstats.privacy.mechanisms.poisson_gaussian_epsilon`, before anything is spent).  The hardened
#: Gaussian steps need delta well above their closeness slack (about 2e-37 per released coordinate).
#: 1e-12 is far below 1/n for any data set that fits on a machine.
MIN_DELTA = 1e-12

#: Smallest epsilon of one fit.  Below about 1e-15 the noise of the missing-value screen's share (2%) and of the
#: methods' steps leaves every floating-point grid (gaussian_mu underflows to 0, a noise scale beyond 1e282): the fit
#: failed with an InternalFitError ("a bug") before any release.  1e-12 leaves a margin of a thousand, and no fit at
#: such a budget releases anything of use.  With delta at its smallest too, a Gaussian step's mu (about 4e-13) can
#: still be too small for the exact sampler's grid: a typed NoiseScaleRangeError, before that step releases anything.
MIN_EPSILON = 1e-12

#: Largest magnitude of a declared or derived range.  The methods release sums of squares and products of
#: bounded values (X^T X, sensitivities B^2 d) and standardise by widths hi - lo; from ranges of about 1e154 these
#: overflow double precision part-way through a fit, after budget is spent.  1e100 leaves room for n * d * B^2
#: at any n and d that fit on a machine, and is beyond any quantity measured in a sensible unit.
MAX_BOUND_MAGNITUDE = 1e100
#: The narrowest declared range (hi - lo): the public rescaling and the methods' standardisation divide by widths,
#: and a subnormal width (5e-324) made that quotient infinite; mirrors :data:`MAX_BOUND_MAGNITUDE`.
MIN_BOUND_WIDTH = 1e-100


def _as_real(value: object, name: str, expected: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        given = shown(value)
        if isinstance(value, str):
            number = _number(value)
            example = f"e.g. {name}={number!r}" if name.isidentifier() else f"{number!r}, not {value!r}"
            given = f"the string {value!r}; pass a number" + (f", {example}" if number is not None else "")
        raise InvalidPrivacyParameterError(f"{name} must be {expected}, got {given}")
    number = real_value(value)
    if not isinstance(value, float) and math.isinf(number):  # a Python int (or Fraction) beyond the float range
        raise InvalidPrivacyParameterError(f"{name} must be {expected}, got {shown(value)}, which is beyond the "
                                           "float range; pass a float")
    return number


def real_value(value: numbers.Real) -> float:
    """``float(value)``, infinite with its sign where a Python int or Fraction is beyond the float range (where
    ``float`` raises OverflowError).

    Parameters
    ----------
    value : numbers.Real
        A real number.

    Returns
    -------
    float
        Its float.

    Examples
    --------
    >>> from dpstats.validation import real_value
    >>> real_value(3), real_value(-(10**400))
    (3.0, -inf)
    """
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf  # type: ignore[operator]


def finite_real(value: object) -> bool:
    """Whether ``value`` is a real number (not a bool) whose float is finite: a Python int beyond the float range
    is not.

    Parameters
    ----------
    value : object
        A public argument.

    Returns
    -------
    bool

    Examples
    --------
    >>> from dpstats.validation import finite_real
    >>> finite_real(2), finite_real(10**400), finite_real(float("nan")), finite_real(True)
    (True, False, False, False)
    """
    return (isinstance(value, numbers.Real) and not isinstance(value, bool)
            and math.isfinite(real_value(value)))


def at_least(value: float, digits: int = 3) -> str:
    """``value`` with ``digits`` significant digits, rounded up: a threshold a message says to reach ("epsilon >=
    0.451") must not print as a value that misses it (0.4505 as "0.45").

    Parameters
    ----------
    value : float
        A positive finite threshold (public: computed from n, epsilon and a rule's constant).
    digits : int
        Significant digits.

    Returns
    -------
    str

    Examples
    --------
    >>> from dpstats.validation import at_least
    >>> at_least(0.45045), at_least(0.559), at_least(2.0)
    ('0.451', '0.559', '2')
    """
    if not (math.isfinite(value) and value > 0):
        return f"{value:.{digits}g}"
    step = 10.0 ** (math.floor(math.log10(value)) - digits + 1)
    up = math.ceil(value / step - 1e-9) * step
    text = f"{up:.{digits}g}"
    return text if float(text) >= value else repr(value)


def shown(value: object) -> str:
    """``repr(value)`` for a message about a public argument, but an integer beyond the float range is described
    by its size (its repr runs to hundreds of digits, and beyond 4300 digits Python refuses to make it), and an
    array, a table or a long sequence by its type and shape: such a value in an argument's place is most likely
    the data themselves (``plan(df, ...)``, a column passed as ``epsilon``), whose values a message must never
    quote (docs/privacy.md, "Threat model"); their shape (n, the columns) is public.

    Parameters
    ----------
    value : object
        A public argument.

    Returns
    -------
    str

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.validation import shown
    >>> shown(2.5), shown(10**400), shown((0, 1))
    ('2.5', 'an integer of about 400 digits', '(0, 1)')
    >>> shown(np.array([0.25, 7.5, 3.0])), shown(list(range(100)))
    ('a numpy array of shape (3,)', 'a list of 100 elements')
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 1024:
        digits = round(value.bit_length() * math.log10(2))
        return f"{'a negative' if value < 0 else 'an'} integer of about {digits} digits"
    kind = "numpy array" if isinstance(value, np.ndarray) else type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and len(shape) > 0:  # numpy, pandas, Dask, Arrow: not a scalar
        return f"{article} {kind} of shape {shape}"
    if isinstance(value, (list, tuple, set, frozenset, dict)) and len(value) > _SHOWN_ELEMENTS:
        return f"{article} {kind} of {len(value)} elements"
    return repr(value)


#: the most elements of a list, tuple, set or dict that :func:`shown` quotes (a public argument is short: a pair of
#: bounds, a few levels or method names)
_SHOWN_ELEMENTS = 16


def _number(text: str) -> float | None:
    """``text`` read as a float, or None when it is not one."""
    try:
        return float(text)
    except ValueError:
        return None


def check_alpha(alpha: object) -> float:
    """Return ``alpha`` as a float if it is a real number in (0, 1) (1 - alpha is an interval's coverage), else
    raise :class:`~dpstats.errors.InvalidArgumentError`."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 < real_value(alpha) < 1:
        raise InvalidArgumentError(f"alpha must be a number in (0, 1), e.g. 0.05 for 95% intervals; got {shown(alpha)}")
    return float(alpha)


def check_budget_total(epsilon: object, delta: object) -> tuple[float, float]:
    """Return (epsilon, delta) as floats if they are a valid privacy budget, else raise InvalidPrivacyParameterError.

    epsilon must be > 0 (``inf`` means a non-private fit); delta must lie in
    the open interval (0, 1).  No supported-range limits: this is the check
    for a total shared by many fits (a :class:`~dpstats.PrivacyAccountant`),
    which composes its fits by adding their spends.
    """
    eps = _as_real(epsilon, "epsilon", "a positive number")
    if math.isnan(eps) or eps <= 0:
        raise InvalidPrivacyParameterError(
            f"epsilon must be > 0, got {epsilon!r}; typical values are 0.1 to 10 "
            "(use epsilon=float('inf') only with method='ols', which is not private)")
    if delta is None:
        raise InvalidPrivacyParameterError(
            "delta must be a number in (0, 1), got None; omit delta for the default 1e-6 (well below 1/n for n up "
            "to a few hundred thousand)")
    dlt = _as_real(delta, "delta", "a number in (0, 1)")
    if not (0 < dlt < 1):
        raise InvalidPrivacyParameterError(
            f"delta must lie strictly between 0 and 1, got {delta!r}; choose delta well below 1/n, "
            "e.g. 1e-6 for n up to a few hundred thousand")
    return eps, dlt


def check_privacy_parameters(epsilon: object, delta: object, *, min_epsilon: float = MIN_EPSILON
                             ) -> tuple[float, float]:
    """Return the budget (epsilon, delta) of one fit as floats, or raise.

    Raises InvalidPrivacyParameterError for values that are not a privacy
    budget (see :func:`check_budget_total`), and its subclass
    UnsupportedPrivacyParameterError for a finite epsilon above
    :data:`MAX_EPSILON` or a delta below :data:`MIN_DELTA`: the calibration
    routines are not numerically reliable there.  ``epsilon = inf`` passes
    (it selects the non-private ``ols``).  ``min_epsilon`` (default :data:`MIN_EPSILON`) is the smallest epsilon
    accepted: a calibration inside a fit, for a share of the fit's epsilon, passes its own.
    """
    eps, dlt = check_budget_total(epsilon, delta)
    if math.isfinite(eps) and eps > MAX_EPSILON:
        raise UnsupportedPrivacyParameterError(
            f"epsilon={epsilon!r} is above the largest supported epsilon of one fit, {MAX_EPSILON:g} (the "
            f"supported range is {MIN_EPSILON:g} <= epsilon <= {MAX_EPSILON:g}, or epsilon=float('inf') with "
            "method='ols'); such a budget gives no meaningful privacy and the calibration is not reliable there in "
            "floating point; nothing was spent")
    if eps < min_epsilon:
        raise UnsupportedPrivacyParameterError(
            f"epsilon={epsilon!r} is below the smallest supported epsilon of one fit, {MIN_EPSILON:g} (the "
            f"supported range is {MIN_EPSILON:g} <= epsilon <= {MAX_EPSILON:g}): the noise of such a fit is beyond "
            "any floating-point grid, and it could release nothing of use; nothing was spent")
    if dlt < MIN_DELTA:
        raise UnsupportedPrivacyParameterError(
            f"delta={delta!r} is below the smallest supported delta of one fit, {MIN_DELTA:g} (the supported "
            f"range is {MIN_DELTA:g} <= delta < 1); privacy accounting cannot certify a smaller delta in floating "
            "point; nothing was spent")
    return eps, dlt


def check_epsilon_grid(epsilons: object, delta: object) -> tuple[list[float], float]:
    """Return a grid of private budgets (``dpstats.compare``'s ``epsilons``) as floats, with their delta.

    A single number is a grid of one.  Each epsilon is checked as
    :func:`check_privacy_parameters` checks one fit's (a string is refused,
    not read as a number), and must also be finite: a grid compares private
    fits.

    Parameters
    ----------
    epsilons : float or iterable of float
        The budgets.
    delta : float
        The delta of every fit.

    Returns
    -------
    tuple of (list of float, float)
        The grid and delta.

    Raises
    ------
    InvalidArgumentError
        ``epsilons`` is neither a number nor an iterable of numbers, or it is empty.
    InvalidPrivacyParameterError
        An epsilon that is not a finite number > 0, or a delta outside (0, 1); its subclass
        UnsupportedPrivacyParameterError outside the supported range of one fit.
    """
    if isinstance(epsilons, (str, bytes)) or not isinstance(epsilons, (numbers.Real, Iterable)):
        kind = "a string" if isinstance(epsilons, (str, bytes)) else type(epsilons).__name__
        raise InvalidArgumentError(f"epsilons must be a number or a list of numbers, e.g. epsilons=[0.5, 1.0, 2.0]; "
                                   f"got {kind}")
    given = [epsilons] if isinstance(epsilons, numbers.Real) else list(epsilons)
    if not given:
        raise InvalidArgumentError("epsilons must be a non-empty list of finite numbers > 0")
    grid, dlt = [], 0.0
    for i, value in enumerate(given):
        eps = _as_real(value, f"epsilons[{i}]", "a finite number > 0")
        if not 0 < eps < math.inf:
            raise InvalidPrivacyParameterError(
                f"epsilons[{i}] must be a finite number > 0, got {value!r}: the grid compares private fits "
                "(typical values 0.1 to 10)")
        if eps > MAX_EPSILON:
            raise UnsupportedPrivacyParameterError(
                f"epsilons[{i}] = {value!r} is above the largest supported epsilon of one fit, {MAX_EPSILON:g}: "
                "the grid compares private fits (typical values 0.1 to 10)")
        eps, dlt = check_privacy_parameters(eps, delta)
        grid.append(eps)
    return grid, dlt


def check_declarations(bounds: object, levels: object) -> None:
    """Refuse ``bounds=`` or ``levels=`` that is neither None nor a mapping of names (a bare name, a list of
    pairs, a number), before the design is built: InvalidBoundsError or InvalidArgumentError, from the arguments
    alone, so nothing is spent."""
    examples = {"bounds": "{'x1': (0, 10), 'y': (-5, 5)}", "levels": "{'group': ['a', 'b', 'c']}"}
    for name, value in (("bounds", bounds), ("levels", levels)):
        if value is not None and not isinstance(value, Mapping):
            error = InvalidBoundsError if name == "bounds" else InvalidArgumentError
            raise error(f"{name}= must be a dict from names to their declarations, e.g. {name}={examples[name]}; "
                        f"got a {type(value).__name__}")


#: the command line's ``--rescale`` choices and the ``rescale=`` value each stands for in Python
RESCALE_CHOICES: dict[str, bool | str] = {"columns": True, "centred": "centred", "off": False}
#: the ``rescale=`` of every entry point when none is given (docs/choosing.md, "Products and powers")
DEFAULT_RESCALE = "centred"
_RESCALE_CLI = "--rescale columns, centred and off are rescale=True, rescale='centred' and rescale=False in Python"


def check_rescale(rescale: object) -> None:
    """Refuse a ``rescale=`` other than True, False or "centred" (InvalidArgumentError, from the argument alone, so
    nothing is spent), naming the Python spellings of the command line's ``--rescale`` choices.

    Examples
    --------
    >>> from dpstats.validation import check_rescale
    >>> check_rescale(False)
    >>> try:
    ...     check_rescale("off")
    ... except InvalidArgumentError as err:
    ...     print(str(err).split("; ")[-1])
    got 'off', the command line's spelling of rescale=False (--rescale columns, centred and off are rescale=True, \
rescale='centred' and rescale=False in Python).
    """
    if isinstance(rescale, (bool, np.bool_)) or (isinstance(rescale, str) and rescale == "centred"):
        return
    if isinstance(rescale, str) and rescale in RESCALE_CHOICES:
        got = f"{shown(rescale)}, the command line's spelling of rescale={RESCALE_CHOICES[rescale]!r}"
    elif isinstance(rescale, (str, numbers.Number)) or rescale is None:
        got = shown(rescale)
    else:
        got = f"a {type(rescale).__name__}"
    raise InvalidArgumentError(
        "rescale must be 'centred' (the default: product and power columns re-expressed with their variables "
        "centred at the midpoints of their declared ranges, then every column and the response mapped to [-1, 1] "
        "by their declared bounds), True (that map without the centring) or False (the raw design); got "
        f"{got} ({_RESCALE_CLI}).")


def check_bounds_pair(key: str, value: object, what: str | None = None) -> tuple[float, float]:
    """Return a declared bound ``bounds[key] = (lo, hi)`` as floats, or raise InvalidBoundsError.

    Both ends must be finite and lo < hi strictly: a single point (lo == hi)
    declares a constant, which a model cannot estimate a coefficient for and
    which the public rescaling (centre and half-width of [lo, hi]) cannot map
    to [-1, 1].  Decided from the argument alone, so a refusal spends nothing.  ``what`` names the argument in
    messages (default ``bounds['key']``; the array API passes ``x_bounds`` and ``y_bounds``).
    """
    what = what or f"bounds['{key}']"
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError
        lo, hi = (float(v) for v in value)  # type: ignore[attr-defined]
    except OverflowError:  # a Python int beyond the float range
        raise InvalidBoundsError(f"{what} has an end beyond the float range: declare the range the variable can "
                                 "take from domain knowledge, in a unit in which it stays below "
                                 f"{MAX_BOUND_MAGNITUDE:g} (divide the variable by a public constant before the "
                                 "fit)") from None
    except (TypeError, ValueError):
        raise InvalidBoundsError(f"{what} must be a pair (lo, hi) of numbers, got {shown(value)}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise InvalidBoundsError(f"{what} = ({lo:g}, {hi:g}) must be finite; declare the range the "
                                 "variable can take from domain knowledge")
    if lo >= hi:
        shape = "a single point" if lo == hi else "empty (lo > hi)"
        raise InvalidBoundsError(
            f"{what} = ({lo:g}, {hi:g}) is {shape}: lo must be strictly below hi. Declare the range the "
            "variable can take from domain knowledge; a variable that is constant by design has no coefficient "
            "to estimate and belongs out of the formula.")
    if hi - lo < MIN_BOUND_WIDTH:
        raise InvalidBoundsError(
            f"{what} = ({lo:g}, {hi:g}) is narrower than {MIN_BOUND_WIDTH:g}: the public rescaling divides by the "
            "width, which would overflow double precision. Declare the range in a unit in which it is wider "
            "(multiply the variable by a public constant before the fit).")
    check_range_magnitude(what, lo, hi)
    return lo, hi


def pairs_declared(bounds: object) -> int | None:
    """The number of columns that ``bounds`` declares when it is one ``(lo, hi)`` pair per column (a sequence of
    pairs, as ``x_bounds=`` or the estimator's ``bounds=`` can be); None for no bounds, one pair for every column or
    a mapping.  A public fact of the call: it fixes the width of a list of rows, which is never read from the rows."""
    if bounds is None or isinstance(bounds, Mapping):
        return None
    shape = np.asarray(bounds, dtype=object).shape
    return shape[0] if len(shape) == 2 and shape[1] == 2 and shape[0] > 0 else None


def check_range_width(what: str, lo: float, hi: float) -> None:
    """Refuse a public range derived from declared bounds (``I(1e-320 * x)``, ``np.tanh(x * 1e-320)``, a product of
    two narrow ranges) whose width is positive but below :data:`MIN_BOUND_WIDTH`, with InvalidBoundsError before
    anything is spent, as a declared one is (:func:`check_bounds_pair`).  The public rescaling divides by the width,
    and mapping a fit back multiplied its coefficient by about 1e319: dp_ols returned an infinite coefficient with
    NaN standard errors.  A width of 0 (a column constant by its bounds) is left to the rank check.

    ``what`` names the range in the message; the message quotes the range's ends, which are public.
    """
    if 0.0 < hi - lo < MIN_BOUND_WIDTH:
        raise InvalidBoundsError(
            f"{what} = ({lo:g}, {hi:g}) is narrower than {MIN_BOUND_WIDTH:g}: the public rescaling divides by the "
            "width, which would overflow double precision. Write the transform in a unit in which its range is "
            "wider (e.g. I(x * 1e-50) rather than I(x * 1e-320)), or drop the column. Decided from the bounds "
            "alone; nothing was spent.")


def check_range_magnitude(what: str, lo: float, hi: float) -> None:
    """Refuse a public range (declared, or derived from declared bounds) reaching beyond
    :data:`MAX_BOUND_MAGNITUDE` with InvalidBoundsError, before anything is spent.

    ``what`` names the range in the message (e.g. ``"bounds['x']"`` or ``"the range of design column 'x:z'"``);
    the message quotes the range's ends, which are public.
    """
    if max(abs(lo), abs(hi)) > MAX_BOUND_MAGNITUDE:
        raise InvalidBoundsError(
            f"{what} = ({lo:g}, {hi:g}) reaches beyond +-{MAX_BOUND_MAGNITUDE:g}: the sums of squares and "
            "products of bounded values that the methods release would overflow double precision. Declare the "
            "range the variable can take from domain knowledge, in a unit in which it stays below "
            f"{MAX_BOUND_MAGNITUDE:g} (divide the variable by a public constant before the fit).")
