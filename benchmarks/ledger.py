"""Ledger write latency and throughput, alone and with many concurrent writer processes.

Prints three tables:

1. one process: median and p99 per ``Ledger.record`` against a baseline measured in the same
   process (a bare autocommit ``INSERT`` on an identical schema: what the retries, ``BEGIN
   IMMEDIATE`` and the entry object cost), plus ``finish`` and the operator-path record;
2. W writer processes (default 8) for S seconds (default 60, the issue's requirement): rows
   committed and reported, rows lost (must be 0), throughput, per-write p50/p99, integrity;
3. the same with a SIGKILL of one writer every second (integrity and lost rows after each).

    python benchmarks/ledger.py [--seconds 60] [--writers 8] [--records 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stockade.permissions.ledger import Ledger, LedgerEntry, record_operator_run
from timing import percentile


def entry(number: int, payload: str = "") -> LedgerEntry:
    return LedgerEntry(
        session=f"bench-{number % 7}",
        project="/srv/bench",
        action=f"pytest -q tests/test_{number}.py",
        kind="bash",
        tier="low",
        effects=("shell",),
        source="autonomy:balanced",
        autonomy="balanced",
        posture="bwrap (proven): writes confined to 2 roots, network denied",
        decision="allowed",
        reason=payload or "low is within what balanced runs without asking (up to medium)",
    )


def single_process(records: int, directory: Path) -> None:
    ledger = Ledger(directory / "single.db")
    ledger.record(entry(0))  # open + schema outside the timing
    samples = []
    for number in range(records):
        start = time.perf_counter()
        ledger.record(entry(number))
        samples.append(time.perf_counter() - start)
    finish_samples = []
    for entry_id in range(1, min(records, 500)):
        start = time.perf_counter()
        ledger.finish(entry_id, exit_code=0, duration=0.1)
        finish_samples.append(time.perf_counter() - start)

    # baseline: the same row through a bare sqlite3 autocommit INSERT (WAL, synchronous=NORMAL)
    base = sqlite3.connect(directory / "baseline.db", isolation_level=None)
    base.execute("PRAGMA journal_mode=WAL")
    base.execute("PRAGMA synchronous=NORMAL")
    schema = ledger._db().execute("SELECT sql FROM sqlite_master WHERE name='decisions'")
    base.execute(schema.fetchone()[0])
    row = entry(1)
    values = (
        time.time(), row.session, row.project, row.action, row.kind, row.tier,
        json.dumps(list(row.effects)), row.source, row.autonomy, row.posture, row.decision,
        row.answer, row.reason, os.getpid(), None, None,
    )  # fmt: skip
    insert = (
        "INSERT INTO decisions (time, session, project, action, kind, tier, effects, source, "
        "autonomy, posture, decision, answer, reason, pid, exit_code, duration) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    baseline = []
    for _ in range(records):
        start = time.perf_counter()
        base.execute(insert, values)
        baseline.append(time.perf_counter() - start)

    def operator_record(db: Path) -> float:
        start = time.perf_counter()
        opened, entry_id = record_operator_run(
            ["make", "test"], project="/srv", posture="p", ledger=Ledger(db)
        )
        opened.finish(entry_id, exit_code=0, duration=0.1)
        elapsed = time.perf_counter() - start
        opened.close()
        return elapsed

    # what one `stockade run` pays: a new connection to an existing ledger, record, finish
    existing = [operator_record(directory / "single.db") for _ in range(50)]
    created = [operator_record(directory / f"new-{n}.db") for n in range(20)]

    base_median = statistics.median(baseline)
    print(f"\n1. one process, {records} records (ms)")
    print(f"{'operation':<44}{'median':>9}{'p99':>9}{'x base':>8}")
    rows = [
        ("baseline: bare sqlite3 INSERT (autocommit)", baseline),
        ("Ledger.record", samples),
        ("Ledger.finish", finish_samples),
        ("stockade run: connect + record + finish", existing),
        ("  same, first run (creates the ledger)", created),
    ]
    for name, values_ in rows:
        median = statistics.median(values_)
        print(
            f"{name:<44}{median * 1000:>9.3f}{percentile(values_, 0.99) * 1000:>9.3f}"
            f"{median / base_median:>8.1f}"
        )
    print(f"single-process throughput: {1 / statistics.median(samples):,.0f} records/s")


def writer_main(path: Path, seconds: float, start_at: float, out: Path) -> None:
    """--writer mode: record until the deadline; write committed ids and latencies as JSON."""
    while time.time() < start_at:
        time.sleep(0.001)
    ledger = Ledger(path)
    ids: list[int] = []
    latencies: list[float] = []
    deadline = time.monotonic() + seconds
    number = 0
    with open(out, "w") as progress:
        while time.monotonic() < deadline:
            number += 1
            start = time.perf_counter()
            ids.append(ledger.record(entry(number)))
            latencies.append(time.perf_counter() - start)
            progress.write(f"{ids[-1]}\n")
            if number % 64 == 0:
                progress.flush()
        progress.flush()
    with open(f"{out}.json", "w") as handle:
        json.dump({"latencies": latencies}, handle)


def spawn_writer(path: Path, seconds: float, start_at: float, out: Path) -> subprocess.Popen[bytes]:
    argv = [sys.executable, __file__, "--writer", str(path), str(seconds), str(start_at), str(out)]
    return subprocess.Popen(argv)


def read_ids(out: Path) -> list[int]:
    text = out.read_text() if out.exists() else ""
    lines = text.split("\n")
    return [int(x) for x in lines[:-1] if x]  # the last line may be partial after a kill


def concurrent(writers: int, seconds: float, directory: Path, *, kill_every: float = 0) -> None:
    """W writers for S seconds; with ``kill_every``, SIGKILL one writer that often (round
    robin), check integrity, and start a replacement writer on the same database."""
    path = directory / ("killed.db" if kill_every else "concurrent.db")
    start_at = time.time() + 2.0
    outputs = [directory / f"{path.stem}-writer-{n}.ids" for n in range(writers)]
    running = [spawn_writer(path, seconds, start_at, out) for out in outputs]
    finished: list[subprocess.Popen[bytes]] = []
    kills = 0
    checks: list[str] = []
    if kill_every:
        time.sleep(max(0.0, start_at - time.time()))
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline - kill_every:
            time.sleep(kill_every)
            slot = kills % writers
            victim = running[slot]
            if victim.poll() is None:
                os.kill(victim.pid, signal.SIGKILL)
            victim.wait()
            finished.append(victim)
            kills += 1
            with sqlite3.connect(path) as db:
                checks.append(db.execute("PRAGMA integrity_check").fetchone()[0])
            out = directory / f"{path.stem}-replacement-{kills}.ids"
            outputs.append(out)
            running[slot] = spawn_writer(path, max(0.5, deadline - time.monotonic()), 0, out)
    for process in running + finished:
        process.wait()
    reported: list[int] = []
    latencies: list[float] = []
    for out in outputs:
        reported += read_ids(out)
        data = Path(f"{out}.json")
        if data.exists():
            latencies += json.loads(data.read_text())["latencies"]
    stored = {e.id for e in Ledger(path).entries()}
    with sqlite3.connect(path) as db:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    lost = len(set(reported) - stored)
    title = f"{writers} writers x {seconds:g}s"
    if kill_every:
        title += f", SIGKILL of one writer every {kill_every:g}s"
    print(f"\n{'3' if kill_every else '2'}. {title}")
    print(f"{'reported commits':<28}{len(reported):>12,}")
    print(f"{'rows in the ledger':<28}{len(stored):>12,}")
    print(f"{'reported but lost':<28}{lost:>12}")
    print(f"{'throughput (rows/s)':<28}{len(stored) / seconds:>12,.0f}")
    if latencies:
        print(f"{'per write p50 (ms)':<28}{statistics.median(latencies) * 1000:>12.3f}")
        print(f"{'per write p99 (ms)':<28}{percentile(latencies, 0.99) * 1000:>12.3f}")
        print(f"{'per write max (ms)':<28}{max(latencies) * 1000:>12.3f}")
    if kill_every:
        all_ok = "ok" if set(checks) <= {"ok"} else ",".join(checks)
        print(f"{'writers killed':<28}{kills:>12}")
        print(f"{'integrity after each kill':<28}{all_ok:>12}")
    print(f"{'integrity at the end':<28}{integrity:>12}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        writer_main(Path(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), Path(sys.argv[5]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--no-kill", action="store_true", help="skip the SIGKILL run")
    args = parser.parse_args()
    if args.seconds <= 0 or args.writers < 1:
        parser.error("--seconds must be positive and --writers at least 1")
    with tempfile.TemporaryDirectory(prefix="stockade-ledger-bench-") as tmp:
        directory = Path(tmp)
        print(f"sqlite {sqlite3.sqlite_version}, {os.cpu_count()} cores, {directory}")
        single_process(args.records, directory)
        concurrent(args.writers, args.seconds, directory)
        if not args.no_kill:
            concurrent(args.writers, min(args.seconds, 20.0), directory, kill_every=1.0)


if __name__ == "__main__":
    main()
