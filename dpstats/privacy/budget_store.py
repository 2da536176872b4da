"""The persistent budget file behind ``PrivacyAccountant(..., path=...)``.

A budget file is an SQLite database (``sqlite3`` from the standard library)
that holds the total budget and one row per reservation.  It is the single
source of truth for every process that opens it.

Write-ahead protocol
    :meth:`BudgetStore.reserve` checks the budget and inserts a row with
    status ``reserved`` in one ``BEGIN IMMEDIATE`` transaction and commits it
    (``synchronous=FULL``: on disk) before the fit touches the data.
    :meth:`BudgetStore.settle` replaces the reservation by what the fit spent,
    again in one transaction, before the fit's result is returned.  A crash or
    a kill between the two leaves the row ``reserved``: it keeps counting in
    full against the budget, and once its process is known to be gone (same
    host, boot and process-id namespace, process id no longer running with
    the same start time, or a zombie) any process that opens the file records
    it as ``abandoned``, spent in full.
    Nothing is ever under-recorded.

Concurrency
    Every read-check-write runs inside ``BEGIN IMMEDIATE``: SQLite lets one
    writer at a time through (others wait up to ``timeout`` seconds), so two
    processes cannot both take the last of the budget.  The file's own locks
    need a local file system (SQLite's locking is unreliable on some network
    file systems).

Integrity
    The file carries SQLite's ``application_id`` 0x64707374 ("dpst"),
    ``user_version`` 1 and a ``meta`` table; an existing file that is empty,
    is not SQLite, lacks these marks or fails ``PRAGMA quick_check`` raises
    :class:`~dpstats.errors.BudgetFileError` and is left untouched.  A new file
    is built under a temporary name and linked into place atomically, so no
    process ever sees a half-made budget file.
"""

from __future__ import annotations

import getpass
import math
import os
import socket
import sqlite3
import tempfile
import urllib.parse
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal

from dpstats.errors import BudgetExceededError, BudgetFileError, UnknownReservationError

__all__ = ["BudgetStore", "Reservation", "FORMAT", "read_budget_file", "budget_document"]

APPLICATION_ID = 0x64707374  # "dpst"
FORMAT = "dpstats privacy budget"
VERSION = 1
_TOL = 1e-12  # the relative slack of the in-memory accountant's budget check
#: what is left below this fraction of the budget is shown as 0 in messages: it is the rounding residue of
#: spends a little under their reservations (a ledger's composed total), which no useful fit can use
_RESIDUE = 1e-6


def display_left(total: float, used: float) -> float:
    """What is left of ``total`` after ``used``, for messages (a rounding residue is shown as 0)."""
    left = total - used
    return 0.0 if left <= total * _RESIDUE else left


def chosen_label(label: str, method: str | None) -> str:
    """The history label of a fit reserved as ``"auto: ..."`` once ``method`` was chosen: ``"adassp (auto): ..."``."""
    if method and label.startswith("auto: "):
        return f"{method} (auto): {label[len('auto: '):]}"
    return label

_SCHEMA = f"""
PRAGMA application_id = {APPLICATION_ID};
PRAGMA user_version = {VERSION};
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE reservations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    reserved_epsilon REAL NOT NULL,
    reserved_delta REAL NOT NULL,
    spent_epsilon REAL,
    spent_delta REAL,
    status TEXT NOT NULL,
    user TEXT NOT NULL,
    host TEXT NOT NULL,
    boot TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pid_start TEXT NOT NULL,
    reserved_at TEXT NOT NULL,
    settled_at TEXT
);
CREATE TABLE events (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL,
                     what TEXT NOT NULL);
"""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 (no login name in some containers)
        return f"uid {os.getuid()}" if hasattr(os, "getuid") else "unknown"


def _boot_id() -> str:
    """This machine's boot and process-id namespace: "<boot id>|<pid namespace>" ("" parts where unknown).

    Process ids are only comparable within one boot and one pid namespace
    (containers sharing a host see different pids), so a reservation is
    checked for liveness only by processes of the same boot and namespace.
    """
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as fh:
            boot = fh.read().strip()
    except OSError:
        boot = ""
    try:
        ns = str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        ns = ""
    return f"{boot}|{ns}"


def _dead(row_host: str, row_boot: str, pid: int, start: str, host: str, boot: str) -> bool:
    """Is the process that made a reservation certainly gone?  False whenever it cannot be known."""
    if row_host != host:
        return False  # another machine: its processes cannot be seen from here
    row_boot_id, _, row_ns = row_boot.partition("|")
    boot_id, _, ns = boot.partition("|")
    if row_boot_id and boot_id and row_boot_id != boot_id:
        return True  # made before this machine last booted
    if row_boot != boot or not boot_id:
        return False  # another pid namespace (a container), or an unknown boot: pids are not comparable
    if pid == os.getpid() and start == _start_time(pid):
        return False  # this process
    return not _alive(pid, start)


def _proc_stat(pid: int) -> tuple[str, str]:
    """(state, start time in clock ticks since boot) of a process from /proc, or ("", "") where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return "", ""
    fields = stat.rsplit(")", 1)[-1].split()  # the command name (in parentheses) may contain spaces
    return (fields[0], fields[19]) if len(fields) > 19 else ("", "")


def _start_time(pid: int) -> str:
    return _proc_stat(pid)[1]


def _alive(pid: int, start: str) -> bool:
    """Is process ``pid`` (started at ``start``) still running on this machine?  True when unsure."""
    if os.path.isdir("/proc"):
        state, now = _proc_stat(pid)
        if not now:
            return os.path.exists(f"/proc/{pid}")
        if state in ("Z", "X"):  # killed, waiting to be reaped by its parent: it will never settle
            return False
        return now == start or not start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _json_document(path: str) -> bool:
    """Whether the file's first byte other than white space is ``{``: a JSON document such as
    :meth:`PrivacyAccountant.to_json` writes, which SQLite reads as "not a database" (a public fact of the file's
    type, as the caller named it)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4096).lstrip().startswith(b"{")
    except OSError:
        return False


@dataclass(frozen=True)
class Reservation:
    """One row of a budget file."""

    id: int
    token: str
    label: str
    reserved_epsilon: float
    reserved_delta: float
    spent_epsilon: float | None
    spent_delta: float | None
    status: str
    user: str
    host: str
    pid: int
    reserved_at: str
    settled_at: str | None

    @property
    def who(self) -> str:
        return f"{self.user}@{self.host} pid {self.pid}"


def _clamp(spent: float, reserved: float) -> float:
    if math.isnan(spent):
        return reserved
    return min(max(spent, 0.0), reserved)


class BudgetStore:
    """One budget file (see the module docstring).  Every method opens its own short connection."""

    def __init__(self, path: str, *, timeout: float = 60.0) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.timeout = float(timeout)
        self._host, self._boot = socket.gethostname(), _boot_id()

    # -- opening ---------------------------------------------------------------------------------------------
    def _error(self, reason: str, detail: str = "", *, untouched: bool = True) -> BudgetFileError:
        advice = (" It was not modified; a budget file is never reset automatically (move it aside to start a "
                  "new budget, or restore it from a backup)." if untouched else "")
        return BudgetFileError(f"budget file {self.path!r}: {reason}{': ' + detail if detail else ''}.{advice}",
                               path=self.path, reason=reason)

    def _connect(self, readonly: bool = False) -> sqlite3.Connection:
        # URI mode ro / rw: SQLite never creates a missing file here (only create() makes budget files)
        uri = "file:" + urllib.parse.quote(self.path) + ("?mode=ro" if readonly else "?mode=rw")
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
        except sqlite3.OperationalError as exc:
            raise self._error("cannot open the budget file", str(exc)) from None
        try:
            conn.execute("PRAGMA synchronous = FULL")
            app, ver = conn.execute("PRAGMA application_id").fetchone()[0], \
                conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _json_document(self.path):
                raise self._error("a JSON document (PrivacyAccountant.to_json, dpstats budget show --format json), not "
                                  "a budget file", "read it with PrivacyAccountant.from_json(path), a record of the "
                                  "budget, not a share of it", untouched=False) from None
            raise self._error("not a readable SQLite database (corrupt, or not a budget file)", str(exc)) from None
        if app != APPLICATION_ID:
            conn.close()
            raise self._error("not a dpstats budget file (foreign SQLite database)",
                              f"application_id is {app:#x}, expected {APPLICATION_ID:#x}")
        if ver != VERSION:
            conn.close()
            raise self._error("a dpstats budget file of an unknown format version", f"version {ver}")
        return conn

    def _check(self, conn: sqlite3.Connection) -> dict[str, str]:
        try:
            ok = conn.execute("PRAGMA quick_check").fetchone()[0]
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            conn.execute("SELECT count(*) FROM reservations").fetchone()
        except sqlite3.DatabaseError as exc:
            raise self._error("corrupt budget file", str(exc)) from None
        if ok != "ok":
            raise self._error("corrupt budget file", f"SQLite quick_check says {ok!r}")
        if meta.get("format") != FORMAT or "epsilon" not in meta or "delta" not in meta:
            raise self._error("not a dpstats budget file (its meta table lacks the format marks)")
        try:
            eps, dlt = float(meta["epsilon"]), float(meta["delta"])
        except ValueError:
            raise self._error("corrupt budget file", "the stored budget is not a number") from None
        if not (0 < eps < math.inf and 0 < dlt < 1):
            raise self._error("corrupt budget file", f"the stored budget ({eps!r}, {dlt!r}) is invalid")
        return meta

    def refuses_seeded(self) -> bool:
        """True when the file was created to refuse fits with a fixed ``random_state`` (a file written before
        this setting existed allows them)."""
        conn = self._connect(readonly=True)
        try:
            return self._check(conn).get("seeded_fits") == "refuse"
        finally:
            conn.close()

    def exists(self) -> bool:
        return os.path.exists(self.path)

    def validate(self, readonly: bool = False) -> tuple[float, float]:
        """Check the file (marks, integrity, budget) and return its (epsilon, delta)."""
        if not os.path.exists(self.path):
            raise self._error("no such file", untouched=False)
        if os.path.isdir(self.path):
            raise self._error("is a directory")
        if os.path.getsize(self.path) == 0:
            raise self._error("the file is empty (a truncated budget file?)")
        conn = self._connect(readonly=readonly)
        try:
            meta = self._check(conn)
        finally:
            conn.close()
        return float(meta["epsilon"]), float(meta["delta"])

    def create(self, epsilon: float, delta: float, refuse_seeded: bool = False) -> bool:
        """Create the file with this budget unless it exists; True if this call created it.  ``refuse_seeded``:
        every accountant on the file refuses fits with a fixed ``random_state`` (:meth:`refuses_seeded`)."""
        if os.path.exists(self.path):
            return False
        directory = os.path.dirname(self.path) or "."
        try:
            fd, tmp = tempfile.mkstemp(prefix=".dpstats-budget-", suffix=".tmp", dir=directory)
        except OSError as exc:  # a missing or unwritable directory: the temporary file's name is no help
            raise self._error("cannot create it", f"{exc.strerror or type(exc).__name__} in the directory "
                              f"{directory!r}", untouched=False) from None
        os.close(fd)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes it private; a shared budget follows the umask
        try:
            conn = sqlite3.connect(tmp, isolation_level=None)
            try:
                conn.execute("PRAGMA synchronous = FULL")
                conn.executescript(_SCHEMA)
                who = self._who()
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", [
                    ("format", FORMAT), ("format_version", str(VERSION)), ("epsilon", repr(float(epsilon))),
                    ("delta", repr(float(delta))), ("created_at", _now()), ("created_by", who),
                    ("seeded_fits", "refuse" if refuse_seeded else "allow")])
                conn.execute("INSERT INTO events (at, who, what) VALUES (?, ?, ?)",
                             (_now(), who, f"budget created: epsilon={float(epsilon)!r}, delta={float(delta)!r}"))
                conn.execute("COMMIT")
            finally:
                conn.close()
            try:
                os.link(tmp, self.path)  # atomic, and never replaces an existing file
            except FileExistsError:
                return False
            except OSError:  # no hard links here: exclusive creation, then the finished content
                try:
                    with open(self.path, "xb") as out, open(tmp, "rb") as src:
                        out.write(src.read())
                        out.flush()
                        os.fsync(out.fileno())
                except FileExistsError:
                    return False
            return True
        finally:
            try:
                os.unlink(tmp)
            except OSError:
                pass

    # -- identity --------------------------------------------------------------------------------------------
    def _who(self) -> str:
        return f"{_user()}@{self._host} pid {os.getpid()}"

    # -- transactions ----------------------------------------------------------------------------------------
    def _transaction(self) -> _Txn:
        return _Txn(self)

    def _reap(self, conn: sqlite3.Connection) -> None:
        """Mark as abandoned (spent in full) the reservations whose process is certainly gone (see :func:`_dead`)."""
        rows = conn.execute("SELECT id, host, boot, pid, pid_start FROM reservations WHERE status = 'reserved' "
                            "AND host = ?", (self._host,)).fetchall()
        now = _now()
        for rid, host, boot, pid, start in rows:
            if _dead(host, boot, int(pid), str(start), self._host, self._boot):
                conn.execute("UPDATE reservations SET status = 'abandoned', spent_epsilon = reserved_epsilon, "
                             "spent_delta = reserved_delta, settled_at = ? WHERE id = ?", (now, rid))

    @staticmethod
    def _budget(conn: sqlite3.Connection) -> tuple[float, float]:
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key IN ('epsilon', 'delta')").fetchall())
        return float(meta["epsilon"]), float(meta["delta"])

    @staticmethod
    def _totals(conn: sqlite3.Connection) -> tuple[float, float, float, float]:
        rows = conn.execute("SELECT status, reserved_epsilon, reserved_delta, spent_epsilon, spent_delta "
                            "FROM reservations").fetchall()
        spent = [(r[3] or 0.0, r[4] or 0.0) for r in rows if r[0] != "reserved"]
        held = [(r[1], r[2]) for r in rows if r[0] == "reserved"]
        return (math.fsum(e for e, _ in spent), math.fsum(d for _, d in spent),
                math.fsum(e for e, _ in held), math.fsum(d for _, d in held))

    def change_budget(self, epsilon: float, delta: float) -> None:
        with self._transaction() as conn:
            old = self._budget(conn)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'epsilon'", (repr(float(epsilon)),))
            conn.execute("UPDATE meta SET value = ? WHERE key = 'delta'", (repr(float(delta)),))
            conn.execute("INSERT INTO events (at, who, what) VALUES (?, ?, ?)", (
                _now(), self._who(), f"budget changed from epsilon={old[0]!r}, delta={old[1]!r} to "
                                     f"epsilon={float(epsilon)!r}, delta={float(delta)!r}"))

    def reserve(self, epsilon: float, delta: float, label: str) -> tuple[str, tuple[float, float]]:
        """Insert a reservation (committed before returning) or raise BudgetExceededError; returns (token, budget)."""
        token = uuid.uuid4().hex
        with self._transaction() as conn:
            self._reap(conn)
            total_e, total_d = self._budget(conn)
            ce, cd, re_, rd = self._totals(conn)
            if not (ce + re_ + epsilon <= total_e * (1 + _TOL) and cd + rd + delta <= total_d * (1 + _TOL)):
                raise BudgetExceededError(
                    f"this fit asks for (epsilon={epsilon:g}, delta={delta:g}) but the budget file {self.path!r} "
                    f"has (epsilon={display_left(total_e, ce + re_):g}, delta={display_left(total_d, cd + rd):g}) left "
                    f"of its (epsilon={total_e:g}, delta={total_d:g}); nothing was spent. Ask for less, or ask "
                    "the data custodian for a new budget.")
            conn.execute(
                "INSERT INTO reservations (token, label, reserved_epsilon, reserved_delta, status, user, host, "
                "boot, pid, pid_start, reserved_at) VALUES (?, ?, ?, ?, 'reserved', ?, ?, ?, ?, ?, ?)",
                (token, str(label), float(epsilon), float(delta), _user(), self._host, self._boot, os.getpid(),
                 _start_time(os.getpid()), _now()))
        return token, (total_e, total_d)

    def settle(self, token: str, epsilon: float, delta: float, status: str,
               method: str | None = None) -> tuple[Reservation, float, float]:
        """Record what a reservation spent (clamped to it); ``UnknownReservationError`` (a ``KeyError``)
        when it is unknown or already settled.
        ``method`` names the method an ``auto`` reservation ran (:func:`chosen_label`)."""
        with self._transaction() as conn:
            row = conn.execute("SELECT reserved_epsilon, reserved_delta, status, label FROM reservations "
                               "WHERE token = ?", (token,)).fetchone()
            if row is None or row[2] != "reserved":
                raise UnknownReservationError(
                    "unknown or already settled reservation: settle each token that reserve() returned exactly once")
            eps, dlt = _clamp(float(epsilon), row[0]), _clamp(float(delta), row[1])
            conn.execute("UPDATE reservations SET spent_epsilon = ?, spent_delta = ?, status = ?, settled_at = ?, "
                         "label = ? WHERE token = ?",
                         (eps, dlt, str(status), _now(), chosen_label(row[3], method), token))
            res = self._row(conn, token)
        return res, eps, dlt

    # -- reading ---------------------------------------------------------------------------------------------
    _COLUMNS = ("id, token, label, reserved_epsilon, reserved_delta, spent_epsilon, spent_delta, status, user, "
                "host, pid, reserved_at, settled_at")

    def _row(self, conn: sqlite3.Connection, token: str) -> Reservation:
        r = conn.execute(f"SELECT {self._COLUMNS} FROM reservations WHERE token = ?", (token,)).fetchone()
        return Reservation(*r)

    def is_open(self, token: str) -> bool:
        with self._reader() as conn:
            row = conn.execute("SELECT status FROM reservations WHERE token = ?", (token,)).fetchone()
        return row is not None and row[0] == "reserved"

    def totals(self) -> tuple[float, float, float, float, float, float]:
        """(budget epsilon, budget delta, spent epsilon, spent delta, held epsilon, held delta)."""
        with self._transaction() as conn:  # a writer: stale reservations are reaped first
            self._reap(conn)
            be, bd = self._budget(conn)
            ce, cd, re_, rd = self._totals(conn)
        return be, bd, ce, cd, re_, rd

    def rows(self) -> list[Reservation]:
        with self._transaction() as conn:  # stale reservations are reaped first
            self._reap(conn)
            return [Reservation(*r) for r in conn.execute(
                f"SELECT {self._COLUMNS} FROM reservations ORDER BY id").fetchall()]

    def _reader(self) -> _Reader:
        return _Reader(self)


class _Txn:
    """``with`` block: a connection inside BEGIN IMMEDIATE, committed on success, rolled back on error."""

    def __init__(self, store: BudgetStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.conn = self.store._connect()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            self.conn.close()
            raise self.store._error("could not lock the budget file", str(exc)) from None
        return self.conn

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        try:
            if exc_type is None:
                try:
                    self.conn.execute("COMMIT")
                except sqlite3.DatabaseError as err:
                    self.conn.execute("ROLLBACK")
                    raise self.store._error("could not write the budget file", str(err)) from None
            else:
                self.conn.execute("ROLLBACK")
                if isinstance(exc, sqlite3.DatabaseError):
                    raise self.store._error("corrupt or unusable budget file", str(exc)) from None
        finally:
            self.conn.close()
        return False


class _Reader:
    def __init__(self, store: BudgetStore) -> None:
        self.store = store

    def __enter__(self) -> sqlite3.Connection:
        self.conn = self.store._connect()
        return self.conn

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        self.conn.close()
        if isinstance(exc, sqlite3.DatabaseError):
            raise self.store._error("corrupt or unusable budget file", str(exc)) from None
        return False


def read_budget_file(path: str) -> dict[str, Any]:
    """Everything ``dpstats budget show`` prints, read without writing to the file.

    Reservations whose process is gone are reported as ``abandoned`` (spent
    in full) even if no process has recorded that yet.
    """
    store = BudgetStore(path)
    eps, dlt = store.validate(readonly=True)
    conn = store._connect(readonly=True)
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        raw = conn.execute("SELECT id, token, label, reserved_epsilon, reserved_delta, spent_epsilon, spent_delta, "
                           "status, user, host, pid, reserved_at, settled_at, boot, pid_start FROM reservations "
                           "ORDER BY id").fetchall()
        events = conn.execute("SELECT at, who, what FROM events ORDER BY id").fetchall()
    except sqlite3.DatabaseError as exc:
        raise store._error("corrupt budget file", str(exc)) from None
    finally:
        conn.close()
    rows = []
    host, boot = socket.gethostname(), _boot_id()
    for r in raw:
        res = Reservation(*r[:13])
        if res.status == "reserved" and _dead(res.host, r[13], res.pid, r[14], host, boot):
            res = Reservation(res.id, res.token, res.label, res.reserved_epsilon, res.reserved_delta,
                              res.reserved_epsilon, res.reserved_delta, "abandoned (process gone; counted as spent)",
                              res.user, res.host, res.pid, res.reserved_at, None)
        rows.append(res)
    spent = [r for r in rows if r.status != "reserved"]
    held = [r for r in rows if r.status == "reserved"]
    return {
        "path": store.path, "epsilon": eps, "delta": dlt, "meta": meta, "rows": rows, "events": events,
        "spent_epsilon": math.fsum(r.spent_epsilon or 0.0 for r in spent),
        "spent_delta": math.fsum(r.spent_delta or 0.0 for r in spent),
        "held_epsilon": math.fsum(r.reserved_epsilon for r in held),
        "held_delta": math.fsum(r.reserved_delta for r in held),
    }


def budget_document(info: dict[str, Any]) -> dict[str, Any]:
    """The JSON document of a budget (``dpstats budget show --format json``, ``PrivacyAccountant.to_json``).

    Parameters
    ----------
    info : dict
        What :func:`read_budget_file` returns (an in-memory accountant builds the same keys: ``path`` None,
        ``meta`` and ``events`` empty, its history as ``rows``).

    Returns
    -------
    dict
        ``format`` and ``version`` (this module's ``FORMAT`` and ``VERSION``), ``path``, ``epsilon``,
        ``delta``, ``spent`` and ``held`` as ``[epsilon, delta]``, ``created``, ``created_by``,
        ``seeded_fits`` (``"allow"`` or ``"refuse"``), ``reservations`` (one dict per row: ``id``, ``label``,
        ``who``, ``user``, ``host``, ``pid``, ``reserved_at``, ``settled_at``, ``reserved`` and ``spent`` as
        ``[epsilon, delta]`` or None where not recorded, ``status``) and ``events``.
    """
    return {
        "format": FORMAT, "version": VERSION,
        "path": info["path"], "epsilon": info["epsilon"], "delta": info["delta"],
        "spent": [info["spent_epsilon"], info["spent_delta"]],
        "held": [info["held_epsilon"], info["held_delta"]],
        "created": info["meta"].get("created_at"), "created_by": info["meta"].get("created_by"),
        "seeded_fits": info["meta"].get("seeded_fits", "allow"),
        "reservations": [{
            "id": r.id, "label": r.label, "who": r.who, "user": r.user, "host": r.host, "pid": r.pid,
            "reserved_at": r.reserved_at, "settled_at": r.settled_at,
            "reserved": None if r.reserved_epsilon is None else [r.reserved_epsilon, r.reserved_delta],
            "spent": None if r.spent_epsilon is None else [r.spent_epsilon, r.spent_delta],
            "status": r.status} for r in info["rows"]],
        "events": [{"at": at, "who": who, "what": what} for at, who, what in info["events"]],
    }
