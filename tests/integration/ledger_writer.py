"""A ledger writer process for the concurrency and SIGKILL tests (benchmarks/ledger.py has its
own, which times every write and buffers what it reports).

Usage: ledger_writer.py DB SECONDS PAYLOAD_BYTES [START_AT]
Writes entries until SECONDS have passed (starting at the wall-clock time START_AT, so many
writers overlap fully) and prints each committed id on its own line, flushed at once.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from stockade.permissions.ledger import Ledger, LedgerEntry


def main() -> None:
    path, seconds, payload = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    start_at = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
    while time.time() < start_at:
        time.sleep(0.001)
    ledger = Ledger(path)
    reason = "x" * payload
    deadline = time.monotonic() + seconds
    number = 0
    while True:
        number += 1
        entry_id = ledger.record(
            LedgerEntry(
                session=f"writer-{number % 3}",
                project="/bench",
                action=f"echo {number}",
                kind="bash",
                tier="read-only",
                effects=("shell",),
                source="autonomy:balanced",
                autonomy="balanced",
                posture="bench",
                decision="allowed",
                reason=reason,
            )
        )
        sys.stdout.write(f"{entry_id}\n")
        sys.stdout.flush()
        if time.monotonic() >= deadline:
            break


if __name__ == "__main__":
    main()
