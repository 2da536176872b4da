"""The missing-value screen: a charged, noisy count decides whether a fit refuses rows with missing values.

Whether any row has a missing value is a fact about the data.  A refusal
decided by it exactly would release that fact without noise, and the caller
chooses which variables the formula reads, so one refusal per set of
variables would answer "is this person's value of z missing?" at no cost.
With ``missing="raise"`` (the default) a private fit therefore decides the
refusal by a release:

1. every row with a missing value in a variable the formula uses becomes a
   public null row (the same public map of the row as ``missing="drop"``);
2. before the method releases anything, the number of null rows is released
   (sensitivity 1 under replace-one and add/remove neighbours: one row
   changes the count by at most one), charged first in the fit's ledger.
   Everything after it (``method="auto"``'s choice, the public refusals, the
   method) runs on the epsilon :func:`fit_epsilon`, the budget less
   :data:`SCREEN_SHARE`.  The screen gets what composes with that to the
   budget exactly: for a method whose every release is a Gaussian mechanism
   (:attr:`~dpstats.methods.spec.MethodSpec.gaussian_only`), a Gaussian count
   of GDP parameter sqrt(mu(epsilon)^2 - mu(rest)^2) (GDP composition, Dong,
   Roth & Su 2022, Cor. 3.3); for the others, a Laplace count at
   ``SCREEN_SHARE * epsilon`` (basic composition);
3. the fit refuses (:class:`~dpstats.errors.MissingDataError`, the screen's
   epsilon spent) when the noisy count exceeds the level a data set without
   missing values passes with probability ``1 - FALSE_REFUSAL``, warns
   (:class:`~dpstats.errors.MissingValuesWarning`) when it exceeds the level
   such a data set passes with probability ``1 - FALSE_WARNING``, and fits
   otherwise; the method gets the rest of the budget.

The decision and the message are post-processing of the noisy count, so the
fit's total stays within its budget (the proof is in
docs/proofs/missing-value-screen.md).  A screen cannot see a few missing
rows: at epsilon 1 the noise's standard deviation is about 22 rows
(Gaussian) or 71 rows (Laplace).  What it
refuses is a data set where many rows are incomplete, the usual sign of a
mistake (a merge that left a column empty, a code for "not asked" read as
missing).

A row with a value outside a factor's declared levels is mapped and counted
in the same way (each row adds 0 or 1 to the count, so its sensitivity stays 1).
The screen runs only where a variable the formula uses can produce a null row
(public facts of the schema and the declarations,
:func:`dpstats.formula.schema.can_produce_null_row`: numpy integers and
booleans cannot hold a missing value, and only a categorical whose categories
are all declared, or a boolean with both values declared, cannot hold a value
outside its declared levels), or where a factor of an expression,
``C(expression, levels=[...])``, can compute a value outside its levels
(:func:`dpstats.formula.schema.computed_may_leave_levels`); ``missing="drop"`` declares that incomplete rows are
expected, and spends nothing on a screen.

Where the data came from a CSV source (a fact of the caller's argument),
the entry point runs the fit inside :func:`source_hint` with
:data:`CSV_TEXT_HINT`: a CSV column's type is public, numbers unless its
levels or ``dtype=`` are declared, so a text column used bare reads as
missing values in every row, and the refusal and the warning say so.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtri

from dpstats.errors import MissingDataError
from dpstats.privacy.calibration import gaussian_mu
from dpstats.privacy.ledger import PrivacyLedger
from dpstats.privacy.mechanisms import gaussian_mechanism_mu, laplace_mechanism

__all__ = ["SCREEN_SHARE", "FALSE_REFUSAL", "FALSE_WARNING", "CSV_TEXT_HINT", "MissingValueScreen", "ScreenOutcome",
           "fit_epsilon", "requested_epsilon", "source_hint"]

#: The share of the fit's epsilon spent on the screen (everything after it runs on the rest).
SCREEN_SHARE = 0.02
#: The probability that a data set without a missing value is refused.
FALSE_REFUSAL = 1e-6
#: The probability that a data set without a missing value draws the warning.
FALSE_WARNING = 1e-3
#: What the refusal and the warning add where the data came from a CSV source (public: the source's format and
#: its rule for column types, never the data).
CSV_TEXT_HINT = ("The data were read from CSV, where a column without declared levels or dtype= is read as numbers, "
                 "so a text column reads as a missing value in every row: declare its levels (levels= or "
                 "C(g, levels=[...])) or its type (CSVSource(path, dtype={'g': str})).")

_SOURCE_HINT: ContextVar[str] = ContextVar("dpstats_missing_screen_source_hint", default="")


@contextmanager
def source_hint(hint: str) -> Iterator[None]:
    """Add ``hint`` to the refusal and the warning of the screens run inside the block.

    The entry point that knows where the data came from (a public fact of its arguments, such as a CSV path) sets
    it around the fit; the screen is built deeper, from the design alone.

    Parameters
    ----------
    hint : str
        A sentence built from public facts only (e.g. :data:`CSV_TEXT_HINT`).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.privacy import PrivacyLedger
    >>> screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=False)
    >>> with source_hint(CSV_TEXT_HINT):
    ...     outcome = screen.run(480, ledger=PrivacyLedger(1.0, 1e-6), rng=np.random.default_rng(3))
    >>> outcome.warning.endswith(CSV_TEXT_HINT)
    True
    """
    token = _SOURCE_HINT.set(hint)
    try:
        yield
    finally:
        _SOURCE_HINT.reset(token)


def fit_epsilon(epsilon: float, screened: bool) -> float:
    """The epsilon the rest of a fit runs on: ``epsilon`` less the screen's share where the screen runs."""
    return float(epsilon) * (1.0 - SCREEN_SHARE) if screened else float(epsilon)


def requested_epsilon(epsilon: float, screened: bool) -> float:
    """The inverse of :func:`fit_epsilon`: the epsilon to ask for so that the rest of the fit runs on ``epsilon``
    (for messages that name a threshold in the user's terms)."""
    return float(epsilon) / (1.0 - SCREEN_SHARE) if screened else float(epsilon)


def _which_variables(variables: tuple[str, ...], explain: bool = True) -> str:
    """The screened variables as the messages name them: one by its name; several as "at least one of" them, since
    the count is of rows and says nothing of which variable a row misses (a column listed there need not hold a
    missing value: it is listed because its type can hold one, a public fact, which ``explain`` adds)."""
    if not variables:
        return "the formula's variables"
    if len(variables) == 1:
        return variables[0]
    why = " (the variables whose type can hold one; the count does not say which)" if explain else ""
    return f"at least one of {', '.join(variables)}{why}"


@dataclass(frozen=True)
class ScreenOutcome:
    """What a passed screen tells the user (post-processing of its noisy count).

    Attributes
    ----------
    note : str
        The line for the report: the noisy count and what it means.
    warning : str
        The message of a :class:`~dpstats.errors.MissingValuesWarning` to emit with the result, or "".
    """

    note: str
    warning: str = ""


@dataclass(frozen=True)
class MissingValueScreen:
    """The screen of one fit (module docstring).

    Parameters
    ----------
    mechanism : {"gaussian", "laplace"}
        How the count is released.
    parameter : float
        The release's GDP mu (Gaussian) or epsilon (Laplace).
    variables : tuple of str
        The variables the formula reads (public: named in the messages).
    levels : tuple of str
        Among them, the variables (and the terms ``C(expression, levels=[...])``) that can hold a value outside
        their declared levels (public: the formula, the schema and the declarations), whose rows with such a value
        are counted too (named in the messages).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.privacy import PrivacyLedger
    >>> screen = MissingValueScreen.for_method(1.0, 1e-6, gaussian=False, variables=("x", "y"))
    >>> screen.parameter, round(screen.refusal_level), round(screen.warning_level)
    (0.02, 656, 311)
    >>> ledger = PrivacyLedger(1.0, 1e-6)
    >>> outcome = screen.run(0, ledger=ledger, rng=np.random.default_rng(1))
    >>> ledger.spent, outcome.warning
    ((0.02, 0.0), '')
    >>> round(MissingValueScreen.for_method(1.0, 1e-6, gaussian=True).refusal_level)
    105
    """

    mechanism: Literal["gaussian", "laplace"]
    parameter: float
    variables: tuple[str, ...] = ()
    levels: tuple[str, ...] = ()

    @classmethod
    def for_method(cls, epsilon: float, delta: float, *, gaussian: bool, variables: tuple[str, ...] = (),
                   levels: tuple[str, ...] = ()) -> MissingValueScreen:
        """The screen of a fit with budget (``epsilon``, ``delta``) whose method runs on :func:`fit_epsilon`, and
        whose releases are all Gaussian (``gaussian``) or not; ``levels``: the variables that can hold a value
        outside their declared levels."""
        rest = fit_epsilon(epsilon, True)
        if gaussian:
            mu, mu_rest = gaussian_mu(epsilon, delta), gaussian_mu(rest, delta)
            return cls("gaussian", math.sqrt(max(mu * mu - mu_rest * mu_rest, 0.0)), tuple(variables), tuple(levels))
        return cls("laplace", SCREEN_SHARE * float(epsilon), tuple(variables), tuple(levels))

    @property
    def noise_sd(self) -> float:
        """The standard deviation of the noisy count (rows)."""
        return 1.0 / self.parameter if self.mechanism == "gaussian" else math.sqrt(2.0) / self.parameter

    def _level(self, probability: float) -> float:
        """The noisy count a data set without missing values exceeds with ``probability``."""
        if self.mechanism == "gaussian":
            return float(ndtri(1.0 - probability)) / self.parameter
        return math.log(1.0 / (2.0 * probability)) / self.parameter

    @property
    def refusal_level(self) -> float:
        """The noisy count above which the fit refuses (exceeded with probability FALSE_REFUSAL at count 0)."""
        return self._level(FALSE_REFUSAL)

    @property
    def warning_level(self) -> float:
        """The noisy count above which the fit warns (exceeded with probability FALSE_WARNING at count 0)."""
        return self._level(FALSE_WARNING)

    def run(self, null_rows: int, *, ledger: PrivacyLedger, rng: np.random.Generator,
            n: int | None = None) -> ScreenOutcome:
        """Release the noisy count of the rows with a missing value, charged in ``ledger``, and decide.

        Parameters
        ----------
        null_rows : int
            The number of rows with a missing value or a value outside the declared levels (private).
        ledger, rng : PrivacyLedger, numpy.random.Generator
            The fit's ledger and random source.
        n : int, optional
            The fit's number of rows (public): the messages then show the noisy count clipped to [0, n], as "about
            k of the n rows" (post-processing; the noise can carry it above n).

        Returns
        -------
        ScreenOutcome
            The note for the report and, above :attr:`warning_level`, the warning to emit.

        Raises
        ------
        MissingDataError
            When the noisy count is above :attr:`refusal_level` (the screen's release is spent).
        """
        name = "missing-value screen: rows with a missing value"  # (and outside the declared levels, if any)
        outside = " or a value outside the declared levels" if self.levels else ""
        if self.mechanism == "gaussian":
            noisy = float(gaussian_mechanism_mu(float(null_rows), l2_sensitivity=1.0, mu=self.parameter, rng=rng,
                                                ledger=ledger, name=name))
        else:
            noisy = float(laplace_mechanism(float(null_rows), l1_sensitivity=1.0, epsilon=self.parameter, rng=rng,
                                            ledger=ledger, name=name))
        shown = max(0, round(noisy)) if n is None else min(max(0, round(noisy)), n)
        of_n = " rows" if n is None else f" of the {n} rows"
        used = _which_variables(self.variables, explain=not self.levels)
        where = (f"a missing value or a value outside the declared levels in {used} (the factors with declared "
                 f"levels a value can fall outside: {', '.join(self.levels)})" if self.levels
                 else f"a missing value in {used}")
        count = (f"about {shown}{of_n} have {where} (a noisy count; the noise's standard deviation is "
                 f"{self.noise_sd:.3g} rows)")
        fix = ("Impute the missing values with a public rule" + (
            f", declare every level {', '.join(self.levels)} can take (spelled as the data spell it; declaring fewer "
            "levels does not merge the others into them: to merge rare levels, map them to a merged level with a "
            "public rule before the fit and declare the merged levels)"
            if self.levels else ""))
        hint = _SOURCE_HINT.get()
        if noisy > self.refusal_level:
            spent = ledger.spent
            raise MissingDataError(
                f"{count}, more than the {self.refusal_level:.0f} a data set without missing values reaches once in "
                f"{1 / FALSE_REFUSAL:.0f} fits. {fix}, or pass "
                "missing='drop' (each incomplete row then becomes a public null row that adds nothing to the fit). "
                f"The screen spent epsilon={spent[0]:.4g}, delta={spent[1]:.3g}; nothing else was released."
                + (f" {hint}" if hint else ""))
        warning = (f"{count}, more than the {self.warning_level:.0f} a data set without missing values reaches once "
                   f"in {1 / FALSE_WARNING:.0f} fits; such rows, if any, entered the fit as public null rows. {fix}, "
                   "or pass "
                   "missing='drop' to say that incomplete rows are expected" + (f". {hint}" if hint else "")
                   if noisy > self.warning_level else "")
        return ScreenOutcome(f"missing-value screen ({self.mechanism}, {SCREEN_SHARE:.0%} of the budget; the rest of "
                             f"the fit ran on the other {1 - SCREEN_SHARE:.0%}): its released noisy count of rows with "
                             f"a missing value{outside} is {round(noisy):d} (the true count plus noise of standard "
                             f"deviation {self.noise_sd:.2g} rows, so it can be far from 0, above or below, even "
                             f"where no row has a missing value{outside}); such rows, if any, entered as public null "
                             "rows", warning)
