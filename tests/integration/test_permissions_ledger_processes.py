"""The ledger under real processes: eight concurrent writers lose nothing, and a writer killed
with SIGKILL mid-write leaves a readable database holding every commit it reported.

The full-minute version of the concurrency run is ``benchmarks/ledger.py --seconds 60``.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from stockade.permissions.ledger import Ledger

pytestmark = pytest.mark.integration

WRITER = Path(__file__).with_name("ledger_writer.py")


def start_writer(
    path: Path, *, seconds: float, payload: int = 200, start_at: float = 0.0
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(path), str(seconds), str(payload), str(start_at)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return str(db.execute("PRAGMA integrity_check").fetchone()[0])


def test_eight_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    start_at = time.time() + 1.5  # after every interpreter has started: full overlap
    writers = [start_writer(path, seconds=4, start_at=start_at) for _ in range(8)]
    reported: dict[int, list[int]] = {}
    for process in writers:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        reported[process.pid] = [int(line) for line in out.split()]
    ledger = Ledger(path)
    entries = ledger.entries()
    assert integrity(path) == "ok"
    by_pid = Counter(e.pid for e in entries)
    for pid, ids in reported.items():
        assert len(ids) > 0
        assert by_pid[pid] == len(ids), f"writer {pid} reported {len(ids)} commits"
    assert sorted(e.id for e in entries) == sorted(i for ids in reported.values() for i in ids)
    assert len(entries) == sum(len(ids) for ids in reported.values())


def test_sigkill_mid_write_leaves_a_readable_ledger_with_every_commit(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    committed: list[int] = []
    rng = random.Random(5)
    for _ in range(6):
        writer = start_writer(path, seconds=60, payload=256 * 1024)  # big rows: long writes
        assert writer.stdout is not None
        first = writer.stdout.readline()  # it has committed at least once
        assert first.strip(), writer.stderr.read() if writer.stderr else ""
        time.sleep(rng.uniform(0.0, 0.3))
        os.kill(writer.pid, signal.SIGKILL)
        out, _ = writer.communicate(timeout=30)
        assert writer.returncode == -signal.SIGKILL
        committed += [int(first), *(int(line) for line in out.split())]
        assert integrity(path) == "ok"
        present = {e.id for e in Ledger(path).entries()}
        assert set(committed) <= present  # every reported commit survived the kill
    # and it is still writable afterwards
    follow_up = start_writer(path, seconds=0.2)
    out, err = follow_up.communicate(timeout=60)
    assert follow_up.returncode == 0, err
    assert integrity(path) == "ok"
