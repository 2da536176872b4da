"""A privacy budget shared by many fits.

:class:`PrivacyAccountant` is what a data custodian hands to analysts: every
fit draws from it, and a fit that would overspend is refused before it touches
the data.  Fits compose across the accountant by basic composition (their
epsilons add, their deltas add), which is valid for any sequence of adaptively
chosen fits that draw fresh noise: a fixed ``random_state`` does not, and
``refuse_seeded=True`` refuses such fits.

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

import io
import json
import math
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any

from dpstats.errors import (
    AccountantPicklingError,
    BudgetExceededError,
    BudgetFileError,
    BudgetMismatchError,
    InvalidArgumentError,
    InvalidPrivacyParameterError,
    UnknownReservationError,
)
from dpstats.privacy.budget_store import (
    FORMAT,
    BudgetStore,
    budget_document,
    chosen_label,
    display_left,
    read_budget_file,
)
from dpstats.validation import check_budget_total

__all__ = ["PrivacyAccountant", "Spend"]

#: The end of the history label of a fit whose noise came from a fixed ``random_state`` (not for real releases).
SEEDED_MARK = " [seeded]"

@dataclass(frozen=True)
class Spend:
    """One settled fit in an accountant's history.

    Attributes
    ----------
    label : str
        The fit: its method and formula, and ``SEEDED_MARK`` (" [seeded]") at the end when its noise came from
        a fixed ``random_state``: reproducible noise, for research and tests only, which basic composition does
        not cover (a budget made with ``refuse_seeded=True`` refuses such fits).
    epsilon, delta : float
        What it spent.
    when : datetime.datetime
        When it was settled (UTC).
    status : str
        ``"released"``, ``"failed after spending"`` or ``"refused"``.

    Examples
    --------
    >>> import dpstats
    >>> acct = dpstats.PrivacyAccountant(epsilon=1.0, delta=1e-6)
    >>> token = acct.reserve(0.5, 1e-7, label="a fit")
    >>> spend = acct.settle(token, 0.5, 1e-7)
    >>> spend.label, spend.epsilon, spend.status
    ('a fit', 0.5, 'released')
    """

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


@dataclass(frozen=True)
class _MemoryRow:
    """One row of an in-memory accountant's JSON document (the attributes :func:`budget_document` reads from a
    budget file's rows; who ran it and what it reserved are not recorded in memory)."""

    id: int
    label: str
    reserved_epsilon: float | None
    reserved_delta: float | None
    spent_epsilon: float | None
    spent_delta: float | None
    status: str
    reserved_at: str | None
    settled_at: str | None
    user: None = None
    host: None = None
    pid: None = None
    who: None = None


#: the status of a reservation still held when a budget was exported, which :meth:`PrivacyAccountant.from_json`
#: counts as spent in full (its fit may have released)
HELD_WHEN_EXPORTED = "held when exported (counted as spent)"


class PrivacyAccountant:
    """A total (epsilon, delta) budget that several fits draw from.

    Parameters
    ----------
    epsilon, delta : float
        The total budget (epsilon > 0 and finite, 0 < delta < 1).
    path : str or os.PathLike, optional
        ``None`` (default): the budget lives in this object only.  A file
        path: the budget lives in that SQLite file, shared by every process
        and every accountant that opens it, and survives crashes (see the
        module docstring).  A new file is created with this budget; an
        existing file must hold the same budget.
    allow_budget_change : bool
        Let an existing file's budget be replaced by (epsilon, delta); the
        change is logged in the file.  Without it a different budget is a
        :class:`~dpstats.errors.BudgetMismatchError`.
    timeout : float
        Seconds to wait for another process's lock on the file.
    refuse_seeded : bool
        Refuse every fit with a fixed ``random_state`` (``InvalidArgumentError``, nothing spent).  A seed the
        analyst chooses makes the noise reproducible: two fits with one seed differ by exactly the difference of
        their statistics, and a known seed gives the noise itself, so the budget would not bound what is
        released.  The default allows seeded fits (reproducible research, tests); a custodian who hands the
        budget to analysts sets this.  A budget file created with it refuses them for every accountant that
        opens it.

    Attributes
    ----------
    epsilon, delta : float
        The total budget.
    path : str or None
        The budget file, or None for an in-memory budget.
    refuses_seeded : bool
        Whether fits with a fixed ``random_state`` are refused (``refuse_seeded``, or the budget file's setting).

    Raises
    ------
    InvalidPrivacyParameterError
        An invalid or infinite budget.
    BudgetFileError
        ``path`` exists but is corrupt, empty or not a dpstats budget file
        (it is never reset).
    BudgetMismatchError
        ``path`` holds another budget and ``allow_budget_change`` is False.

    See Also
    --------
    dpstats.dp_ols : Its ``accountant=`` draws from the budget.

    Examples
    --------
    >>> import dpstats
    >>> df = dpstats.datasets.load("mtcars")
    >>> bounds = {"wt": (1, 6), "mpg": (5, 40)}
    >>> acct = dpstats.PrivacyAccountant(epsilon=2.0, delta=1e-6)
    >>> res = dpstats.dp_ols("mpg ~ wt", df, 1.5, 5e-7, method="ssp", bounds=bounds, accountant=acct,
    ...                      random_state=0)
    >>> try:
    ...     dpstats.dp_ols("mpg ~ wt", df, 1.0, 5e-7, method="ssp", bounds=bounds, accountant=acct)
    ... except dpstats.errors.BudgetExceededError:
    ...     print("refused, nothing spent")
    refused, nothing spent
    >>> round(acct.remaining[0], 6)
    0.5
    """

    def __init__(self, epsilon: float, delta: float, path: str | os.PathLike[str] | None = None, *,
                 allow_budget_change: bool = False, timeout: float = 60.0, refuse_seeded: bool = False) -> None:
        check_budget_total(epsilon, delta)
        if epsilon == float("inf"):
            raise InvalidPrivacyParameterError(f"an accountant needs a finite epsilon budget, got {epsilon!r}")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self._lock = threading.Lock()
        self._history: list[Spend] = []
        self._reserved: dict[str, _Reservation] = {}
        self._store: BudgetStore | None = None
        self.path: str | None = None
        self.refuses_seeded = bool(refuse_seeded)
        if path is not None:
            store = BudgetStore(os.fspath(path), timeout=timeout)
            if not store.create(self.epsilon, self.delta, refuse_seeded=self.refuses_seeded):
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
            self.refuses_seeded = self.refuses_seeded or store.refuses_seeded()

    @classmethod
    def open(cls, path: str | os.PathLike[str], *, timeout: float = 60.0) -> PrivacyAccountant:
        """Open an existing budget file with the budget stored in it.

        Parameters
        ----------
        path : str or os.PathLike
            The budget file.
        timeout : float
            Seconds to wait for another process's lock on the file.

        Returns
        -------
        PrivacyAccountant
            A persistent accountant on that file.

        Raises
        ------
        BudgetFileError
            The file is missing, corrupt or not a dpstats budget file.
        """
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
        """Whether a reservation is still held.

        Parameters
        ----------
        token : str
            A token from :meth:`reserve`.

        Returns
        -------
        bool
            True while the reservation has not been settled.
        """
        with self._lock:
            if self._store is not None:
                return self._store.is_open(token)
            return token in self._reserved

    def reserve(self, epsilon: float, delta: float, label: str = "fit", *, seeded: bool = False) -> str:
        """Set aside (epsilon, delta) for a fit before it touches the data.

        Parameters
        ----------
        epsilon, delta : float
            The fit's request (finite, >= 0; delta < 1).
        label : str
            What the history calls the fit.
        seeded : bool
            The fit's noise comes from a fixed ``random_state`` (refused where ``refuses_seeded``).

        Returns
        -------
        str
            A token for :meth:`settle`.

        Raises
        ------
        BudgetExceededError
            The budget left cannot cover the request; nothing is spent.
        InvalidPrivacyParameterError
            A negative, NaN or infinite request.
        InvalidArgumentError
            A seeded fit on an accountant that refuses them; nothing is spent.
        """
        if seeded and self.refuses_seeded:
            raise InvalidArgumentError(
                "this budget refuses fits with a fixed random_state: a seed the analyst chooses makes the noise "
                "reproducible (two fits with one seed differ by exactly their statistics' difference), so the cap "
                "would not bound what is released. Leave random_state out (the operating system's generator). "
                "Nothing was read or spent.")
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

        Parameters
        ----------
        token : str
            The reservation's token from :meth:`reserve`.
        epsilon, delta : float
            What the fit's ledger spent; clamped to [0, reserved] (NaN counts
            as the whole reservation).
        status : str
            ``"released"``, ``"failed after spending"`` or ``"refused"``.
        method : str, optional
            The method that ran, when the reservation was made before it was
            chosen (``method="auto"``); the history then names it.

        Returns
        -------
        Spend
            The history's record of the fit.

        Raises
        ------
        UnknownReservationError
            An unknown or already settled token (a ``KeyError``).
        """
        with self._lock:
            if self._store is not None:
                row, eps, dlt = self._store.settle(token, epsilon, delta, status, method=method)
                return Spend(row.label, eps, dlt, datetime.fromisoformat(row.settled_at or row.reserved_at), status)
            res = self._reserved.pop(token, None)
            if res is None:
                raise UnknownReservationError(
                    "unknown or already settled reservation: settle each token that reserve() returned exactly once")
            # a fit can never spend more than it reserved: its ledger is capped at its budget.
            # A negative spend would hand budget back and a NaN one would disable every later
            # check, so both are clamped: negative to 0, NaN to the whole reservation.
            eps = _clamp(float(epsilon), res.epsilon)
            dlt = _clamp(float(delta), res.delta)
            spend = Spend(chosen_label(res.label, method), eps, dlt, datetime.now(timezone.utc), status)
            if eps > 0 or dlt > 0:
                self._history.append(spend)
            return spend

    def to_json(self, path: str | os.PathLike[str] | None = None) -> str:
        """The budget and its history as JSON, in the format of ``dpstats budget show --format json``.

        Parameters
        ----------
        path : str or os.PathLike, optional
            Also write the document to this file (UTF-8, replaced if it exists).

        Returns
        -------
        str
            The JSON document: ``format`` ("dpstats privacy budget"), ``version``, ``path`` (None in memory),
            ``epsilon`` and ``delta`` (the budget), ``spent`` and ``held`` as ``[epsilon, delta]``,
            ``seeded_fits`` (``"allow"`` or ``"refuse"``) and ``reservations``: one per fit, oldest first, with
            its ``label``, ``spent``, ``status`` and ``settled_at`` (ISO 8601, UTC).  A budget file's document is
            :func:`dpstats.privacy.budget_store.budget_document` of the file (every reservation, who made it and
            what it reserved, and the file's events); an in-memory accountant's lists its :attr:`history` and the
            reservations still held (``status`` "reserved"), without who or what was reserved (``None``).

        See Also
        --------
        from_json : Reads the document back.

        Examples
        --------
        >>> import io, json
        >>> import dpstats
        >>> acct = dpstats.PrivacyAccountant(epsilon=1.0, delta=1e-6)
        >>> spend = acct.settle(acct.reserve(0.5, 1e-7, label="a fit"), 0.5, 1e-7)
        >>> json.loads(acct.to_json())["spent"]
        [0.5, 1e-07]
        >>> dpstats.PrivacyAccountant.from_json(io.StringIO(acct.to_json())).remaining
        (0.5, 9e-07)
        """
        if self._store is not None:
            document = budget_document(read_budget_file(self._store.path))
        else:
            with self._lock:
                rows = [_MemoryRow(i, s.label, None, None, s.epsilon, s.delta, s.status, None, s.when.isoformat())
                        for i, s in enumerate(self._history, start=1)]
                rows += [_MemoryRow(len(rows) + i, r.label, r.epsilon, r.delta, None, None, "reserved", None, None)
                         for i, r in enumerate(self._reserved.values(), start=1)]
                (ce, cd), (re, rd) = self._committed(), self._outstanding()
            meta = {"seeded_fits": "refuse" if self.refuses_seeded else "allow"}
            document = budget_document({"path": None, "epsilon": self.epsilon, "delta": self.delta, "meta": meta,
                                        "rows": rows, "events": [], "spent_epsilon": ce, "spent_delta": cd,
                                        "held_epsilon": re, "held_delta": rd})
        text = json.dumps(document, indent=2)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    @classmethod
    def from_json(cls, source: str | os.PathLike[str] | IO[str]) -> PrivacyAccountant:
        """An in-memory accountant with the budget and history of a JSON document.

        The document is one :meth:`to_json` wrote, or the output of ``dpstats budget show --format json``.
        Every fit in it stays spent: a settled fit with what it spent, and a reservation still held when it was
        exported (a fit running, or a process gone) with its whole reservation (status
        ``"held when exported (counted as spent)"``).  The budget's ``seeded_fits`` setting is kept.  A budget
        file itself is reopened with :meth:`open`, which keeps sharing it; this copy does not.

        Parameters
        ----------
        source : str, os.PathLike or text file object
            The document's file (a path), an open text file, or the document's text itself as :meth:`to_json`
            returns it (a string whose first character other than white space is ``{``; a path never starts so).

        Returns
        -------
        PrivacyAccountant
            In memory (``path`` None).

        Raises
        ------
        BudgetFileError
            The document is not JSON, or not a dpstats budget document (its ``format`` or a field is missing
            or malformed).
        InvalidPrivacyParameterError
            Its budget is not a valid one.
        """
        if isinstance(source, str) and source.lstrip().startswith("{"):  # to_json's return value, not a path
            source = io.StringIO(source)
        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else getattr(source, "name", None)
        where = str(name) if name is not None else "the JSON document"
        try:
            if isinstance(source, (str, os.PathLike)):
                with open(os.fspath(source), encoding="utf-8") as fh:
                    document = json.load(fh)
            else:
                document = json.load(source)
        except json.JSONDecodeError as exc:
            raise BudgetFileError(f"{where} is not JSON ({exc.msg}, line {exc.lineno})", path=str(name or ""),
                                  reason="not JSON") from None
        return cls._from_document(document, where, str(name or ""))

    @classmethod
    def _from_document(cls, document: Any, where: str, path: str) -> PrivacyAccountant:
        def bad(what: str) -> BudgetFileError:
            return BudgetFileError(f"{where} is not a dpstats budget document: {what} (write one with "
                                   "PrivacyAccountant.to_json or dpstats budget show PATH --format json)",
                                   path=path, reason="not a budget document")

        if not isinstance(document, dict) or document.get("format", FORMAT) != FORMAT:
            raise bad(f"its format is not {FORMAT!r}")
        try:
            acct = cls(float(document["epsilon"]), float(document["delta"]),
                       refuse_seeded=document.get("seeded_fits", "allow") == "refuse")
            for row in document["reservations"]:
                when = row.get("settled_at") or row.get("reserved_at")
                stamp = datetime.fromisoformat(when) if when else datetime.now(timezone.utc)
                if row["status"] == "reserved":  # held: its fit may have released, so it counts in full
                    eps, dlt = (float(v) for v in row["reserved"])
                    status = HELD_WHEN_EXPORTED
                else:
                    eps, dlt = (float(v) for v in (row["spent"] or (0.0, 0.0)))
                    status = str(row["status"])
                if not (0 <= eps < math.inf and 0 <= dlt < 1):
                    raise bad(f"the fit {str(row['label'])!r} has the spend ({eps!r}, {dlt!r})")
                if eps > 0 or dlt > 0:
                    acct._history.append(Spend(str(row["label"]), eps, dlt, stamp, status))
        except InvalidPrivacyParameterError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise bad(f"a field is missing or malformed ({type(exc).__name__}: {exc})") from None
        return acct

    def __copy__(self) -> PrivacyAccountant:
        """The accountant itself: a budget is a shared resource (see the module docstring)."""
        return self

    def __deepcopy__(self, memo: dict) -> PrivacyAccountant:
        """The accountant itself: a copy would carry its own budget and bypass the cap."""
        return self

    def __reduce__(self) -> tuple:
        """Persistent accountants pickle as their file (re-opened on load); in-memory ones cannot be pickled."""
        if self.path is None:
            raise AccountantPicklingError(
                "an in-memory PrivacyAccountant cannot be pickled: a copy in another process would carry its own "
                "budget and bypass the cap. Use PrivacyAccountant(epsilon, delta, path='budget.sqlite') to share "
                "a budget between processes (e.g. GridSearchCV(n_jobs>1)); to save a fitted DPLinearRegression "
                "that used one, drop it first: est.set_params(accountant=None).")
        return (PrivacyAccountant.open, (self.path,))

    def __repr__(self) -> str:
        e, d = self.spent
        where = f"; file {self.path!r}" if self.path else ""
        fits = len(self.history)
        return (f"PrivacyAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}; "
                f"spent epsilon={e:.4g}, delta={d:.3g} over {fits} fit{'' if fits == 1 else 's'}{where})")
