"""A storm of refused connections cannot grow the host's ledger without bound (issue 16.7).

A real allowlist jail opens 2,000 CONNECTs that the proxy refuses - half to one host, half to
a thousand different hosts. Judged on the host: the ledger database grew by less than
``LEDGER_GROWTH_BOUND`` bytes, holds at most ``ROW_BOUND`` network rows for the session, and
those rows still account for every one of the 2,000 refusals (summary rows carry ``xN``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stockade.net.domains import DomainPolicy
from stockade.net.proxy import MAX_EVENTS_PER_PROXY
from stockade.permissions.ledger import Ledger, default_ledger_path
from stockade.session import Session

pytestmark = pytest.mark.integration

STORM = 2000
ROW_BOUND = MAX_EVENTS_PER_PROXY + 2  # the budget, the "budget spent" row and the final tally
LEDGER_GROWTH_BOUND = 512 * 1024  # bytes, database and write-ahead log together

CONNECTS = r"""
import socket, sys
count = int(sys.argv[1])
refused = 0
for index in range(count):
    host = "same.storm.test" if index % 2 else f"h{index}.storm.test"
    with socket.create_connection(("127.0.0.1", 3128), timeout=30) as conn:
        conn.sendall(f"CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n".encode())
        answer = b""
        while b"\r\n" not in answer:
            chunk = conn.recv(4096)
            if not chunk:
                break
            answer += chunk
        refused += answer.startswith(b"HTTP/1.1 403")
print("refused", refused)
"""


def ledger_bytes() -> int:
    path = default_ledger_path()
    return sum(
        candidate.stat().st_size
        for candidate in (path, path.with_name(path.name + "-wal"))
        if candidate.exists()
    )


def counted(action: str) -> int:
    """How many refusals one row stands for: ``... x40`` for a summary, else 1."""
    match = re.search(r" x(\d+)$", action)
    return int(match.group(1)) if match else 1


def test_a_refusal_storm_is_summarised_not_recorded_row_by_row(project: Path) -> None:
    (project / "storm.py").write_text(CONNECTS)
    policy = DomainPolicy.from_lists(test_mode=True)
    with Session(project, network="allowlist", domain_policy=policy, autonomy="auto-accept") as s:
        before = ledger_bytes()
        result = s.execute(f"python3 storm.py {STORM}")
        session_id = s.session_id
    assert f"refused {STORM}" in result.stdout, result.stdout + result.stderr
    grown = ledger_bytes() - before
    rows = [
        entry
        for entry in Ledger().entries(session=session_id, limit=100_000)
        if entry.kind == "domain"
    ]
    assert len(rows) <= ROW_BOUND, f"{len(rows)} network rows for {STORM} refusals"
    assert grown < LEDGER_GROWTH_BOUND, f"the ledger grew by {grown} bytes"
    assert sum(counted(row.action) for row in rows if row.decision == "denied") == STORM
    assert any(counted(row.action) > 1 for row in rows)  # the storm is visible as such
