"""The persistent privacy budget: PrivacyAccountant(..., path=...) and ``dpstats budget show``.

Processes are real (subprocess / multiprocessing with the spawn method), kills
are SIGKILL, so these tests exercise what a crash does to the file.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpstats
from dpstats.cli import main
from dpstats.errors import BudgetExceededError, BudgetFileError, BudgetMismatchError, UnknownReservationError
from dpstats.privacy.accountant import PrivacyAccountant

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="uses SIGKILL and fork-free process checks")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _child(code: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(), cwd=str(REPO))


def _wait_for(proc: subprocess.Popen, word: str, timeout: float = 60.0) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if word in line:
            return line
        if not line and proc.poll() is not None:
            raise AssertionError(f"child exited early: {proc.stderr.read()}")  # type: ignore[union-attr]
    raise AssertionError(f"child did not print {word!r}")


# ---------------------------------------------------------------------------------------------
# basic behaviour, same as in memory
# ---------------------------------------------------------------------------------------------

def test_reserve_settle_and_reopen(tmp_path):
    path = tmp_path / "budget.sqlite"
    acct = PrivacyAccountant(1.0, 1e-6, path=path)
    assert acct.persistent and acct.path == str(path)
    tok = acct.reserve(0.4, 2e-7, "fit A")
    assert acct.is_open(tok) and acct.remaining == pytest.approx((0.6, 8e-7))
    spend = acct.settle(tok, 0.3, 2e-7)
    assert spend.label == "fit A" and spend.epsilon == 0.3 and not acct.is_open(tok)
    with pytest.raises(UnknownReservationError, match="unknown or already settled reservation: settle each token"):
        acct.settle(tok, 0.1, 0.0)
    again = PrivacyAccountant(1.0, 1e-6, path=path)  # another object (or process) sees the same budget
    assert again.spent == pytest.approx((0.3, 2e-7)) and again.remaining == pytest.approx((0.7, 8e-7))
    assert [h.label for h in again.history] == ["fit A"]
    opened = PrivacyAccountant.open(path)
    assert (opened.epsilon, opened.delta) == (1.0, 1e-6)
    with pytest.raises(BudgetExceededError,
                       match=r"asks for \(epsilon=0\.71, delta=0\) .* has \(epsilon=0\.7, delta=8e-07\) left"):
        opened.reserve(0.71, 0.0, "too much")
    assert opened.spent == pytest.approx((0.3, 2e-7))  # a refusal spends nothing


def test_settle_clamps_like_the_in_memory_accountant(tmp_path):
    acct = PrivacyAccountant(1.0, 1e-6, path=tmp_path / "b.sqlite")
    mem = PrivacyAccountant(1.0, 1e-6)
    for a in (acct, mem):
        for spent in (5.0, -1.0, float("nan")):
            tok = a.reserve(0.1, 1e-8, "x")
            a.settle(tok, spent, spent)
    assert acct.spent == pytest.approx(mem.spent)
    assert [(h.epsilon, h.delta) for h in acct.history] == [(h.epsilon, h.delta) for h in mem.history]


def test_dp_ols_with_a_budget_file_records_the_fit_and_refuses_overspending(tmp_path):
    path = tmp_path / "budget.sqlite"
    acct = PrivacyAccountant(1.5, 1e-5, path=path)
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 500)})
    df["y"] = 0.5 * df.x + rng.normal(0, 0.1, 500)
    bounds = {"x": (-1, 1), "y": (-2, 2)}
    dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=5e-6, method="ssp", bounds=bounds, accountant=acct,
                   random_state=1)
    with pytest.raises(BudgetExceededError,
                       match=r"asks for \(epsilon=1, delta=5e-06\) .* has \(epsilon=0\.5, delta=5e-06\) left"):
        dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=5e-6, method="ssp", bounds=bounds, accountant=acct)
    reopened = PrivacyAccountant.open(path)
    (fit,) = reopened.history
    assert fit.status == "released" and fit.label.startswith("ssp: y ~ x")
    assert fit.epsilon == pytest.approx(1.0, rel=1e-6) and fit.delta == pytest.approx(5e-6)


def test_auto_fits_are_recorded_under_the_chosen_method_and_residues_show_as_zero(tmp_path):
    import pickle  # noqa: PLC0415

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 500)})
    df["y"] = 0.5 * df.x + rng.normal(0, 0.1, 500)
    bounds = {"x": (-1, 1), "y": (-2, 2)}
    for acct in (PrivacyAccountant(1.0, 1e-5, path=tmp_path / "budget.sqlite"), PrivacyAccountant(1.0, 1e-5)):
        dpstats.dp_ols("y ~ x", df, epsilon=1.0, delta=5e-6, bounds=bounds, accountant=acct, random_state=1)
        (fit,) = acct.history
        assert fit.label == "pgd (auto): y ~ x [seeded]"  # n * mu(1, 5e-6) >= 100, n < 10^5: auto chooses pgd
        assert repr(acct).endswith("over 1 fit)") or "over 1 fit;" in repr(acct)
        left = acct.epsilon - acct.spent[0]
        assert 0 <= left < 1e-6  # a rounding residue of the ledger's composed spend, if any
        with pytest.raises(BudgetExceededError, match=r"\(epsilon=0, delta="):
            acct.reserve(0.01, 1e-7)
    # a persistent accountant pickles as its file: the copy draws from the same budget
    again = pickle.loads(pickle.dumps(acct := PrivacyAccountant.open(tmp_path / "budget.sqlite")))
    assert again.path == acct.path and again.spent == acct.spent


# ---------------------------------------------------------------------------------------------
# crashes: a reservation is on disk before the data are touched, and never lost
# ---------------------------------------------------------------------------------------------

def test_a_fit_killed_after_releasing_stays_spent(tmp_path):
    """A child runs dp_ols with a budget file; after the first noisy release it stops and is SIGKILLed.
    Reopening the file (in another process) finds the whole reservation counted as spent."""
    path = tmp_path / "budget.sqlite"
    PrivacyAccountant(2.0, 1e-5, path=path)
    proc = _child(f"""
        import time, numpy as np, pandas as pd, dpstats
        import dpstats.methods.ssp as ssp
        real = ssp.release_gram
        def release_then_hang(*args, **kwargs):
            out = real(*args, **kwargs)  # the noisy Gram matrix exists: budget is being spent
            print("RELEASED", flush=True)
            time.sleep(600)
            return out
        ssp.release_gram = release_then_hang
        acct = dpstats.PrivacyAccountant(2.0, 1e-5, path={str(path)!r})
        rng = np.random.default_rng(0)
        df = pd.DataFrame({{"x": rng.uniform(-1, 1, 300), "y": rng.uniform(-1, 1, 300)}})
        dpstats.dp_ols("y ~ x", df, epsilon=0.7, delta=2e-6, method="ssp", bounds={{"x": (-1, 1), "y": (-1, 1)}},
                       accountant=acct)
    """)
    try:
        _wait_for(proc, "RELEASED")
        # while the child is alive its reservation is held (counted against the budget, not yet spent)
        live = PrivacyAccountant.open(path)
        assert live.spent == (0.0, 0.0) and live.remaining == pytest.approx((1.3, 8e-6))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    after = PrivacyAccountant.open(path)
    assert after.spent == pytest.approx((0.7, 2e-6))
    assert after.remaining == pytest.approx((1.3, 8e-6))
    (row,) = after.history
    assert row.status == "abandoned" and row.label.startswith("ssp:")


def test_a_killed_reservation_is_spent_even_before_its_process_is_reaped(tmp_path):
    """A SIGKILLed child that its parent has not waited for yet is a zombie: it can never settle, so it is
    already counted as spent."""
    path = tmp_path / "budget.sqlite"
    PrivacyAccountant(1.0, 1e-6, path=path)
    proc = _child(f"""
        import time
        from dpstats.privacy.accountant import PrivacyAccountant
        acct = PrivacyAccountant(1.0, 1e-6, path={str(path)!r})
        acct.reserve(0.25, 1e-7, "zombie fit")
        print("RESERVED", flush=True)
        time.sleep(600)
    """)
    try:
        _wait_for(proc, "RESERVED")
        os.kill(proc.pid, signal.SIGKILL)
        for _ in range(200):  # wait for the kernel to turn it into a zombie, without reaping it
            with open(f"/proc/{proc.pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[-1].split()[0] == "Z":
                    break
            time.sleep(0.01)
        assert PrivacyAccountant.open(path).spent == pytest.approx((0.25, 1e-7))
    finally:
        proc.kill()
        proc.wait()


def test_the_reservation_is_committed_before_reserve_returns(tmp_path):
    """Write-ahead: right after reserve() another connection sees the row (status 'reserved')."""
    path = tmp_path / "budget.sqlite"
    acct = PrivacyAccountant(1.0, 1e-6, path=path)
    tok = acct.reserve(0.2, 1e-7, "wal")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT status, reserved_epsilon FROM reservations WHERE token = ?",
                            (tok,)).fetchone() == ("reserved", 0.2)
    acct.settle(tok, 0.2, 1e-7)


# ---------------------------------------------------------------------------------------------
# concurrency: processes sharing a file never overspend together
# ---------------------------------------------------------------------------------------------

def _spend_until_refused(path: str, start: multiprocessing.synchronize.Event, hold: float,
                         ready: multiprocessing.Queue, results: multiprocessing.Queue) -> None:
    acct = PrivacyAccountant(1.0, 1e-6, path=path)
    ready.put(os.getpid())
    start.wait()
    got = 0
    while True:
        try:
            tok = acct.reserve(0.1, 1e-8, f"race pid {os.getpid()}")
        except BudgetExceededError:
            results.put(got)
            return
        got += 1
        time.sleep(hold)  # the fit runs while the reservation is held
        acct.settle(tok, 0.1, 1e-8)


# hold: each reservation is held 0.2 s, so the ten take at least 2 s; the "really interleaved" check fails only if
# three processes woken by the same event are all left unscheduled for 2 s (seen with a 2 ms hold at load 30)
@pytest.mark.parametrize("hold", [0.2])
def test_racing_processes_never_overspend(tmp_path, hold):
    """Four processes start together and each reserves 0.1 of a 1.0 budget until refused: exactly ten
    reservations succeed in total and the file's spend is the budget, never more."""
    path = str(tmp_path / "budget.sqlite")
    PrivacyAccountant(1.0, 1e-6, path=path)
    ctx = multiprocessing.get_context("spawn")
    start, ready, results = ctx.Event(), ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=_spend_until_refused, args=(path, start, hold, ready, results)) for _ in range(4)]
    for p in procs:
        p.start()
    for _ in procs:  # every process has opened the file: release them together
        ready.get(timeout=120)
    start.set()
    counts = [results.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert sum(counts) == 10
    if hold:
        assert sum(c > 0 for c in counts) >= 2  # the processes really interleaved
    acct = PrivacyAccountant.open(path)
    assert acct.spent[0] == pytest.approx(1.0) and acct.spent[0] <= 1.0 * (1 + 1e-12)
    assert len(acct.history) == 10


def _create(path: str) -> float:
    return PrivacyAccountant(3.0, 1e-6, path=path).epsilon


def test_processes_creating_the_same_file_at_once_get_one_budget(tmp_path):
    path = str(tmp_path / "new.sqlite")
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        assert pool.map(_create, [path] * 8) == [3.0] * 8
    assert PrivacyAccountant.open(path).epsilon == 3.0
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]  # no temporary files left behind


# ---------------------------------------------------------------------------------------------
# corrupt, foreign or different files are clear errors, never a reset
# ---------------------------------------------------------------------------------------------

def _unchanged(path: Path, before: bytes) -> bool:
    return path.read_bytes() == before


def test_a_corrupt_or_foreign_file_is_a_typed_error_and_left_untouched(tmp_path):
    cases = {}
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database " * 100)
    cases["not SQLite"] = junk
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    cases["empty"] = empty
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE customers (name TEXT)")
    cases["foreign"] = foreign
    good = tmp_path / "good.sqlite"
    acct = PrivacyAccountant(1.0, 1e-6, path=good)
    acct.settle(acct.reserve(0.1, 1e-8, "x"), 0.1, 1e-8)
    truncated = tmp_path / "truncated.sqlite"
    truncated.write_bytes(good.read_bytes()[:2048])
    cases["truncated"] = truncated
    marked = tmp_path / "marked.sqlite"
    with sqlite3.connect(marked) as conn:  # our application id but no budget inside
        conn.execute("PRAGMA application_id = 0x64707374")
        conn.execute("PRAGMA user_version = 1")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    cases["marks without a budget"] = marked
    for what, path in cases.items():
        before = path.read_bytes()
        with pytest.raises(BudgetFileError,
                           match="It was not modified; a budget file is never reset automatically") as err:
            PrivacyAccountant(1.0, 1e-6, path=path)
        assert str(path) in str(err.value) and "never reset" in str(err.value), what
        assert _unchanged(path, before), what
        assert main(["budget", "show", str(path)]) == 2, what
        assert _unchanged(path, before), what


def test_a_different_budget_is_refused_unless_allowed(tmp_path):
    path = tmp_path / "b.sqlite"
    PrivacyAccountant(1.0, 1e-6, path=path)
    with pytest.raises(BudgetMismatchError,
                       match=r"holds the budget \(epsilon=1\.0, delta=1e-06\), not .*; open it with its own") as err:
        PrivacyAccountant(2.0, 1e-6, path=path)
    assert isinstance(err.value, BudgetFileError) and "allow_budget_change" in str(err.value)
    changed = PrivacyAccountant(2.0, 1e-6, path=path, allow_budget_change=True)
    assert changed.remaining == pytest.approx((2.0, 1e-6))
    assert PrivacyAccountant.open(path).epsilon == 2.0


def test_a_directory_or_missing_file_is_an_error(tmp_path):
    with pytest.raises(BudgetFileError, match=r"missing\.sqlite': no such file"):
        PrivacyAccountant.open(tmp_path / "missing.sqlite")
    with pytest.raises(BudgetFileError, match=r"': is a directory\. It was not modified"):
        PrivacyAccountant(1.0, 1e-6, path=tmp_path)


def test_a_budget_file_in_a_missing_directory_is_a_typed_error(tmp_path):
    with pytest.raises(BudgetFileError,
                       match=r"budget\.sqlite': cannot create it: No such file or directory in the directory") as info:
        PrivacyAccountant(1.0, 1e-6, path=tmp_path / "no such dir" / "budget.sqlite")
    msg = str(info.value)
    assert "cannot create it" in msg and "no such dir" in msg and ".dpstats-budget-" not in msg
    assert not (tmp_path / "no such dir").exists()


def test_without_a_path_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    acct = PrivacyAccountant(1.0, 1e-6)
    acct.settle(acct.reserve(0.5, 1e-7, "mem"), 0.5, 1e-7)
    assert not acct.persistent and acct.path is None and os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------------
# dpstats budget show
# ---------------------------------------------------------------------------------------------

def test_the_history_marks_a_seeded_fit_in_memory_in_the_file_and_in_budget_show(tmp_path, capsys):
    """A custodian's ledger said nothing of a fit with a fixed random_state (reproducible noise, which basic
    composition does not cover): only the fit's own report did.  Its label now ends with " [seeded]"."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 300)})
    df["y"] = 0.5 * df.x + rng.normal(0, 0.1, 300)
    bounds = {"x": (-1, 1), "y": (-2, 2)}
    path = tmp_path / "budget.sqlite"
    for acct in (PrivacyAccountant(2.0, 1e-5), PrivacyAccountant(2.0, 1e-5, path=path)):
        dpstats.dp_ols("y ~ x", df, epsilon=0.5, delta=1e-6, method="ssp", bounds=bounds, accountant=acct,
                       random_state=1)
        dpstats.dp_ols("y ~ x", df, epsilon=0.5, delta=1e-6, method="ssp", bounds=bounds, accountant=acct,
                       random_state=np.random.default_rng(2))
        dpstats.dp_ols("y ~ x", df, epsilon=0.5, delta=1e-6, method="ssp", bounds=bounds, accountant=acct)
        assert [h.label for h in acct.history] == ["ssp: y ~ x [seeded]", "ssp: y ~ x [seeded]", "ssp: y ~ x"]
    capsys.readouterr()
    assert main(["budget", "show", str(path)]) == 0
    assert capsys.readouterr().out.count("ssp: y ~ x [seeded]") == 2


def test_budget_show_prints_the_history(tmp_path, capsys):
    path = tmp_path / "budget.sqlite"
    acct = PrivacyAccountant(2.0, 1e-5, path=path)
    acct.settle(acct.reserve(0.5, 1e-6, "ssp: y ~ x"), 0.5, 1e-6)
    acct.settle(acct.reserve(0.3, 1e-6, "tukey: y ~ x"), 0.0, 0.0, status="refused")
    open_tok = acct.reserve(0.2, 0.0, "still running")
    capsys.readouterr()
    before = path.read_bytes()
    assert main(["budget", "show", str(path)]) == 0
    out = capsys.readouterr().out
    assert "budget:    epsilon=2" in out and "spent:     epsilon=0.5" in out and "held:      epsilon=0.2" in out
    assert "left:      epsilon=1.3" in out
    for text in ("ssp: y ~ x", "tukey: y ~ x", "still running", "released", "refused", "reserved",
                 f"pid {os.getpid()}", "budget created"):
        assert text in out
    assert path.read_bytes() == before  # show only reads
    assert main(["budget", "show", str(path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["epsilon"] == 2.0 and [r["status"] for r in data["reservations"]] == ["released", "refused",
                                                                                        "reserved"]
    assert data["reservations"][0]["who"].endswith(f"pid {os.getpid()}")
    acct.settle(open_tok, 0.2, 0.0)


def test_a_budget_file_s_to_json_is_budget_show_s_document_and_reads_back(tmp_path, capsys):
    """PrivacyAccountant.to_json on a budget file gives the document of ``dpstats budget show --format json``;
    from_json reads it into an in-memory accountant in which every fit stays spent (a held reservation in full)."""
    path = tmp_path / "budget.sqlite"
    acct = PrivacyAccountant(2.0, 1e-5, path=path, refuse_seeded=True)
    acct.settle(acct.reserve(0.5, 1e-6, "ssp: y ~ x"), 0.5, 1e-6)
    acct.settle(acct.reserve(0.3, 1e-6, "tukey: y ~ x"), 0.0, 0.0, status="refused")
    open_tok = acct.reserve(0.2, 0.0, "still running")
    capsys.readouterr()
    assert main(["budget", "show", str(path), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    exported = json.loads(acct.to_json(tmp_path / "budget.json"))
    assert exported == shown and json.loads((tmp_path / "budget.json").read_text()) == shown
    assert shown["format"] == "dpstats privacy budget" and shown["seeded_fits"] == "refuse"
    copy = PrivacyAccountant.from_json(tmp_path / "budget.json")
    assert copy.path is None and copy.refuses_seeded and (copy.epsilon, copy.delta) == (2.0, 1e-5)
    assert [(s.label, s.epsilon, s.status) for s in copy.history] == [
        ("ssp: y ~ x", 0.5, "released"), ("still running", 0.2, "held when exported (counted as spent)")]
    assert copy.remaining == pytest.approx((1.3, 9e-6))
    acct.settle(open_tok, 0.2, 0.0)


def test_budget_show_reports_a_dead_reservation_as_spent_without_writing(tmp_path, capsys):
    path = tmp_path / "budget.sqlite"
    PrivacyAccountant(1.0, 1e-6, path=path)
    proc = _child(f"""
        from dpstats.privacy.accountant import PrivacyAccountant
        PrivacyAccountant(1.0, 1e-6, path={str(path)!r}).reserve(0.4, 0.0, "crashed fit")
        print("RESERVED", flush=True)
        import os, signal
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    _wait_for(proc, "RESERVED")
    proc.wait(timeout=30)
    copy = tmp_path / "copy.sqlite"
    shutil.copy(path, copy)
    before = copy.read_bytes()
    assert main(["budget", "show", str(copy)]) == 0
    out = capsys.readouterr().out
    assert "abandoned" in out and "spent:     epsilon=0.4" in out
    assert copy.read_bytes() == before


def test_a_json_export_is_named_as_such_not_as_a_corrupt_database(tmp_path, capsys):
    """s53's third new-user check: ``dpstats budget show ledger.json`` on the document ``to_json`` wrote said "not a
    readable SQLite database (corrupt, or not a budget file)"; it now says the file is a JSON export and how to read
    it (PrivacyAccountant.from_json), and the file is left as it was."""
    acct = PrivacyAccountant(1.0, 1e-6)
    acct.settle(acct.reserve(0.25, 1e-7, "ssp: y ~ x"), 0.25, 1e-7)
    path = tmp_path / "ledger.json"
    text = acct.to_json(path)
    assert main(["budget", "show", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a JSON document (PrivacyAccountant.to_json" in err and "PrivacyAccountant.from_json(path)" in err
    assert "corrupt" not in err and json.loads(path.read_text(encoding="utf-8")) == json.loads(text)
    with pytest.raises(BudgetFileError, match="a JSON document .*not a budget file"):
        PrivacyAccountant.open(path)
