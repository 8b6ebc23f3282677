"""The ledger as a library: what an entry holds, filters, the completion report, file safety."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from stockade.permissions.ledger import (
    Ledger,
    LedgerEntry,
    default_ledger_path,
    new_session_id,
    record_operator_run,
)


def entry(**changes: object) -> LedgerEntry:
    values: dict[str, object] = {
        "session": "s1",
        "project": "/srv/app",
        "action": "npm test",
        "kind": "bash",
        "tier": "low",
        "effects": ("shell",),
        "source": "autonomy:balanced",
        "autonomy": "balanced",
        "posture": "bwrap (proven): ...",
        "decision": "allowed",
        "reason": "low is within balanced",
    }
    values.update(changes)
    return LedgerEntry(**values)  # type: ignore[arg-type]


def test_record_and_read_back_every_field(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    written = entry(answer="session", effects=("shell", "sandbox-escape"), time=12.5, pid=7)
    entry_id = ledger.record(written)
    [read] = ledger.entries()
    assert read.id == entry_id
    assert read.to_dict() == {**written.to_dict(), "id": entry_id}
    assert read.prompted


def test_time_and_pid_default_to_now_and_this_process(tmp_path: Path) -> None:
    import os

    ledger = Ledger(tmp_path / "ledger.db")
    before = time.time()
    ledger.record(entry())
    [read] = ledger.entries()
    assert read.pid == os.getpid()
    assert read.time is not None and before <= read.time <= time.time()


def test_finish_adds_exit_code_and_duration(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    entry_id = ledger.record(entry())
    ledger.finish(entry_id, exit_code=3, duration=1.5)
    [read] = ledger.entries()
    assert (read.exit_code, read.duration) == (3, 1.5)


def test_filters_by_session_time_project_and_limit(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    now = time.time()
    ledger.record(entry(session="a", time=now - 3600, action="old"))
    ledger.record(entry(session="a", time=now, action="new"))
    ledger.record(entry(session="b", time=now, project="/other", action="other"))
    assert [e.action for e in ledger.entries(session="a")] == ["old", "new"]
    assert [e.action for e in ledger.entries(since=now - 60)] == ["new", "other"]
    assert [e.action for e in ledger.entries(project="/other")] == ["other"]
    assert [e.action for e in ledger.entries(limit=2)] == ["new", "other"]  # most recent, in order


def test_completion_report_counts_by_decision_and_tier(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    for decision, tier, answer in [
        ("allowed", "low", None),
        ("allowed", "high", "once"),
        ("denied", "destructive", "deny"),
        ("denied", "high", "headless"),
        ("bypassed", None, None),
    ]:
        ledger.record(entry(decision=decision, tier=tier, answer=answer))
    ledger.record(entry(session="other"))
    report = ledger.report("s1")
    assert report.total == 5
    assert report.by_decision == {"allowed": 2, "denied": 2, "bypassed": 1}
    assert report.by_tier == {"low": 1, "high": 2, "destructive": 1, "unclassified": 1}
    assert report.prompted == 2  # headless is not a prompt
    assert "5 decisions" in report.summary() and "2 allowed" in report.summary()


def test_empty_or_missing_ledger_reads_as_empty(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "none.db")
    assert ledger.entries() == [] and ledger.count() == 0
    assert ledger.report("x").total == 0
    assert not (tmp_path / "none.db").exists()  # reading never creates it


def test_default_ledger_is_private_and_in_the_user_data_dir(isolated_user_dirs: Path) -> None:
    ledger = Ledger()
    ledger.record(entry())
    assert ledger.path == default_ledger_path()
    assert ledger.path.is_relative_to(isolated_user_dirs / "XDG_DATA_HOME")
    assert ledger.path.stat().st_mode & 0o777 == 0o600
    mode = sqlite3.connect(ledger.path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_threads_share_one_ledger(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.db")
    threads = [
        threading.Thread(target=lambda: [ledger.record(entry()) for _ in range(50)])
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ledger.count() == 200


def test_operator_runs_are_recorded_as_bypassed(tmp_path: Path) -> None:
    ledger, entry_id = record_operator_run(
        ["make", "deploy it"],
        project="/srv/app",
        posture="bwrap (proven)",
        ledger=Ledger(tmp_path / "l.db"),
    )
    [read] = ledger.entries()
    assert read.id == entry_id
    assert (read.decision, read.source, read.tier) == ("bypassed", "operator", None)
    assert read.action == "make 'deploy it'"


def test_session_ids_are_unique_and_sortable() -> None:
    ids = [new_session_id() for _ in range(100)]
    assert len(set(ids)) == 100
    assert all(len(i) == len(ids[0]) for i in ids)


def test_an_unwritable_ledger_is_a_clear_error(tmp_path: Path) -> None:
    from stockade.errors import StockadeError

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StockadeError) as caught:
        Ledger(blocker / "ledger.db").record(entry())
    assert "cannot open" in caught.value.message and caught.value.fix
