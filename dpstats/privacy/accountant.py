"""A privacy budget shared by many fits.

:class:`PrivacyAccountant` is what a data custodian hands to analysts: every
fit draws from it, and a fit that would overspend is refused before it touches
the data.  Fits compose across the accountant by basic composition (their
epsilons add, their deltas add), which is valid for any sequence of adaptively
chosen fits.

The protocol is reserve -> run -> settle: :meth:`reserve` sets aside the fit's
requested budget under a lock (so two threads cannot both take the last of the
budget), the fit runs, and :meth:`settle` records what its ledger actually
spent (never more than was reserved) and frees the rest.  A fit that fails
after spending (a PTR refusal) is settled with what it spent; a fit refused
before any release is settled with zero.

With ``path=`` the accountant is persistent: the budget and every
reservation live in an SQLite file (:mod:`dpstats.privacy.budget_store`)
shared by every process that opens it.  A reservation is committed to disk
before the fit touches the data and replaced by the actual spend before the
fit's result is returned; a fit that crashes or is killed in between keeps its
whole reservation counted as spent.  Concurrent processes serialise their
checks with SQLite's write lock, so together they never overspend.
``dpstats budget show PATH`` prints the file's history.

An accountant is a shared resource, not a value: ``copy.copy`` and
``copy.deepcopy`` return the accountant itself.  scikit-learn's ``clone`` (and
so ``GridSearchCV``, ``cross_val_score``) deep-copies estimator parameters;
a copy would carry its own, fresh budget, and every fit of a grid search
would then draw from a different one, bypassing the cap.  Returning the same
object makes every fit charge the one budget.  Pickling (another process)
cannot share an in-memory budget and is refused with an explanation; a
persistent accountant pickles as its file path and is re-opened from it,
which is sound because the budget lives in the file.
"""

from __future__ import annotations

import math
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

from dpstats.errors import BudgetExceededError, BudgetMismatchError, InvalidPrivacyParameterError
from dpstats.privacy.budget_store import BudgetStore, chosen_label, display_left
from dpstats.validation import check_budget_total

__all__ = ["PrivacyAccountant", "Spend"]

@dataclass(frozen=True)
class Spend:
    """One settled fit in an accountant's history."""

    label: str
    epsilon: float
    delta: float
    when: datetime
    status: str  # "released", "failed after spending", "refused"


@dataclass
class _Reservation:
    token: str
    label: str
    epsilon: float
    delta: float


def _clamp(spent: float, reserved: float) -> float:
    if math.isnan(spent):
        return reserved
    return min(max(spent, 0.0), reserved)


class PrivacyAccountant:
    """A total (epsilon, delta) budget that several fits draw from.

    Parameters
    ----------
    epsilon, delta:
        The total budget (epsilon > 0, 0 < delta < 1).
    path:
        ``None`` (default): the budget lives in this object only.  A file
        path: the budget lives in that SQLite file, shared by every process
        and every accountant that opens it, and survives crashes (see the
        module docstring).  A new file is created with this budget; an
        existing file must hold the same budget.
    allow_budget_change:
        Let an existing file's budget be replaced by (epsilon, delta); the
        change is logged in the file.  Without it a different budget is a
        :class:`~dpstats.errors.BudgetMismatchError`.
    timeout:
        Seconds to wait for another process's lock on the file.

    Raises
    ------
    BudgetFileError
        when ``path`` exists but is corrupt, empty or not a dpstats budget
        file (it is never reset).

    Examples
    --------
    >>> acct = PrivacyAccountant(epsilon=2.0, delta=1e-6)
    >>> # dpstats.dp_ols(..., epsilon=1.0, delta=5e-7, accountant=acct)  twice,
    >>> # then a third fit is refused with BudgetExceededError and spends nothing.
    >>> # shared = PrivacyAccountant(10.0, 1e-5, path="budget.sqlite")  # persistent, multi-process
    """

    def __init__(self, epsilon: float, delta: float, path: "str | os.PathLike[str] | None" = None, *,
                 allow_budget_change: bool = False, timeout: float = 60.0) -> None:
        check_budget_total(epsilon, delta)
        if epsilon == float("inf"):
            raise InvalidPrivacyParameterError("an accountant needs a finite epsilon budget")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self._lock = threading.Lock()
        self._history: list[Spend] = []
        self._reserved: dict[str, _Reservation] = {}
        self._store: BudgetStore | None = None
        self.path: str | None = None
        if path is not None:
            store = BudgetStore(os.fspath(path), timeout=timeout)
            if not store.create(self.epsilon, self.delta):
                stored = store.validate()
                if stored != (self.epsilon, self.delta):
                    if not allow_budget_change:
                        raise BudgetMismatchError(
                            f"budget file {store.path!r} holds the budget (epsilon={stored[0]!r}, "
                            f"delta={stored[1]!r}), not (epsilon={self.epsilon!r}, delta={self.delta!r}); open it "
                            "with its own budget (PrivacyAccountant.open(path)), or pass allow_budget_change=True "
                            "to change it on purpose", path=store.path, reason="different budget")
                    store.change_budget(self.epsilon, self.delta)
            else:
                store.validate()
            self._store = store
            self.path = store.path

    @classmethod
    def open(cls, path: "str | os.PathLike[str]", *, timeout: float = 60.0) -> "PrivacyAccountant":
        """Open an existing budget file with the budget stored in it."""
        eps, dlt = BudgetStore(os.fspath(path), timeout=timeout).validate()
        return cls(eps, dlt, path=path, timeout=timeout)

    @property
    def persistent(self) -> bool:
        """True when the budget lives in a file (``path=``)."""
        return self._store is not None

    # -- budget arithmetic (call with the lock held) ---------------------------------
    def _committed(self) -> tuple[float, float]:
        return (sum(s.epsilon for s in self._history), sum(s.delta for s in self._history))

    def _outstanding(self) -> tuple[float, float]:
        return (sum(r.epsilon for r in self._reserved.values()),
                sum(r.delta for r in self._reserved.values()))

    def _file_totals(self) -> tuple[float, float, float, float]:
        be, bd, ce, cd, re, rd = self._store.totals()  # type: ignore[union-attr]
        self.epsilon, self.delta = be, bd
        return ce, cd, re, rd

    @property
    def spent(self) -> tuple[float, float]:
        """(epsilon, delta) settled so far (for a file: including reservations abandoned by dead processes)."""
        with self._lock:
            if self._store is not None:
                ce, cd, _, _ = self._file_totals()
                return ce, cd
            return self._committed()

    @property
    def remaining(self) -> tuple[float, float]:
        """(epsilon, delta) still available (reservations of running fits excluded)."""
        with self._lock:
            if self._store is not None:
                ce, cd, re, rd = self._file_totals()
            else:
                ce, cd = self._committed()
                re, rd = self._outstanding()
            return max(0.0, self.epsilon - ce - re), max(0.0, self.delta - cd - rd)

    @property
    def history(self) -> list[Spend]:
        """The settled fits that spent something, oldest first."""
        with self._lock:
            if self._store is not None:
                return [Spend(r.label, r.spent_epsilon or 0.0, r.spent_delta or 0.0,
                              datetime.fromisoformat(r.settled_at or r.reserved_at), r.status)
                        for r in self._store.rows()
                        if r.status != "reserved" and ((r.spent_epsilon or 0.0) > 0 or (r.spent_delta or 0.0) > 0)]
            return list(self._history)

    def is_open(self, token: str) -> bool:
        """True while the reservation ``token`` has not been settled."""
        with self._lock:
            if self._store is not None:
                return self._store.is_open(token)
            return token in self._reserved

    def reserve(self, epsilon: float, delta: float, label: str = "fit") -> str:
        """Set aside (epsilon, delta) for a fit, or raise BudgetExceededError.

        Returns a token for :meth:`settle`.  Nothing is spent by a refusal.
        """
        epsilon, delta = float(epsilon), float(delta)
        # a negative or NaN reservation would enlarge (or disable) the budget check of every
        # other fit while it is outstanding
        if not (0 <= epsilon < math.inf and 0 <= delta < 1):
            raise InvalidPrivacyParameterError(
                f"a reservation needs a finite epsilon >= 0 and 0 <= delta < 1, got ({epsilon!r}, {delta!r})")
        with self._lock:
            if self._store is not None:
                token, (self.epsilon, self.delta) = self._store.reserve(epsilon, delta, label)
                return token
            ce, cd = self._committed()
            re, rd = self._outstanding()
            tol = 1e-12
            # written as 'not <=' so that anything NaN is refused (fail closed)
            if not (ce + re + epsilon <= self.epsilon * (1 + tol) and cd + rd + delta <= self.delta * (1 + tol)):
                raise BudgetExceededError(
                    f"this fit asks for (epsilon={epsilon:g}, delta={delta:g}) but the accountant has "
                    f"(epsilon={display_left(self.epsilon, ce + re):g}, delta={display_left(self.delta, cd + rd):g}) "
                    f"left of its (epsilon={self.epsilon:g}, delta={self.delta:g}); nothing was spent. "
                    "Ask for less, or ask the data custodian for a new budget."
                )
            token = uuid.uuid4().hex
            self._reserved[token] = _Reservation(token, label, float(epsilon), float(delta))
            return token

    def settle(self, token: str, epsilon: float, delta: float, status: str = "released",
               method: str | None = None) -> Spend:
        """Record what a reserved fit actually spent and release the rest.

        ``method``: the method that ran, when the reservation was made before it was chosen
        (``method="auto"``); the history then names it (see :func:`chosen_label`).
        """
        with self._lock:
            if self._store is not None:
                row, eps, dlt = self._store.settle(token, epsilon, delta, status, method=method)
                return Spend(row.label, eps, dlt, datetime.fromisoformat(row.settled_at or row.reserved_at), status)
            res = self._reserved.pop(token, None)
            if res is None:
                raise KeyError("unknown or already settled reservation")
            # a fit can never spend more than it reserved: its ledger is capped at its budget.
            # A negative spend would hand budget back and a NaN one would disable every later
            # check, so both are clamped: negative to 0, NaN to the whole reservation.
            eps = _clamp(float(epsilon), res.epsilon)
            dlt = _clamp(float(delta), res.delta)
            spend = Spend(chosen_label(res.label, method), eps, dlt, datetime.now(timezone.utc), status)
            if eps > 0 or dlt > 0:
                self._history.append(spend)
            return spend

    def __copy__(self) -> "PrivacyAccountant":
        """The accountant itself: a budget is a shared resource (see the module docstring)."""
        return self

    def __deepcopy__(self, memo: dict) -> "PrivacyAccountant":
        """The accountant itself: a copy would carry its own budget and bypass the cap."""
        return self

    def __reduce__(self) -> tuple:
        """Persistent accountants pickle as their file (re-opened on load); in-memory ones cannot be pickled."""
        if self.path is None:
            raise TypeError(
                "an in-memory PrivacyAccountant cannot be pickled: a copy in another process would carry its own "
                "budget and bypass the cap. Use PrivacyAccountant(epsilon, delta, path='budget.sqlite') to share "
                "a budget between processes (e.g. GridSearchCV(n_jobs>1)).")
        return (PrivacyAccountant.open, (self.path,))

    def __repr__(self) -> str:
        e, d = self.spent
        where = f"; file {self.path!r}" if self.path else ""
        fits = len(self.history)
        return (f"PrivacyAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}; "
                f"spent epsilon={e:.4g}, delta={d:.3g} over {fits} fit{'' if fits == 1 else 's'}{where})")
