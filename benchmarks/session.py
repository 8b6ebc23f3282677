"""What the agent path adds on top of the sandbox: ``Session.execute`` against
``Sandbox.run`` on the same prepared sandbox, measured in one process.

Rows (each: ``--runs`` calls, median and p90 wall time, ratio against ``Sandbox.run``):

* ``Sandbox.run(["bash", "-c", "true"])`` - the baseline: the operator path, no gate
* the gate alone: ``classify`` + ``Gate.check`` of ``true`` (pure, nothing recorded)
* the ledger alone: one decision recorded and finished (SQLite, WAL)
* ``Session.execute("true")``: classify, gate, ledger entry, run, ledger completion
* ``Session.handle_tool_call({"command": "true"})``: the same, plus the argument check and
  the per-call shell lookup
* ``Session.execute(..., run_in_background=True)`` + wait: a background command end to end
* ``read_file`` / ``write_file`` of a small file (gate + ledger + guarded I/O, no sandbox)
* the MCP ``bash`` tool: one ``tools/call`` from the SDK client to a ``stockade mcp``
  subprocess over stdio (2026-07-28 protocol)

    python benchmarks/session.py [--runs 50]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from stockade.permissions.ledger import Ledger, LedgerEntry
from stockade.sandbox.limits import Limits
from stockade.session import Session
from timing import print_table, ratios, scratch_dir, summary


def measure_round_robin(
    actions: list[tuple[str, Callable[[], object]]], runs: int
) -> list[tuple[str, float, float]]:
    """(name, median ms, p90 ms) per action. The actions take turns (one call each per round,
    after one warm-up round), so machine noise hits every row alike."""
    samples: dict[str, list[float]] = {name: [] for name, _ in actions}
    for round_number in range(runs + 1):
        for name, action in actions:
            start = time.perf_counter()
            action()
            if round_number:
                samples[name].append((time.perf_counter() - start) * 1000)
    return [(name, *summary(samples[name])) for name, _ in actions]


def mcp_row(project: Path, runs: int) -> tuple[float, float]:
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stockade", "mcp", "--autonomy", "yolo", "--project", str(project)],
        env=dict(os.environ),
    )
    samples: list[float] = []

    async def main() -> None:
        async with Client(params) as client:
            await client.call_tool("bash", {"command": "true"})
            for _ in range(runs):
                start = time.perf_counter()
                await client.call_tool("bash", {"command": "true"})
                samples.append((time.perf_counter() - start) * 1000)

    anyio.run(main)
    return summary(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    runs = args.runs
    work = scratch_dir(private_state=True)
    project = work / "project"
    project.mkdir()
    os.chdir(project)
    (project / "small.txt").write_text("hello\n" * 20)
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)
    ledger = Ledger(work / "bench-ledger.db")

    def record() -> None:
        entry_id = ledger.record(LedgerEntry(
            session="bench", project=str(project), action="true", kind="bash",
            tier="read-only", effects=("shell",), source="autonomy:yolo", autonomy="yolo",
            posture="bench", decision="allowed", reason="bench"))  # fmt: skip
        ledger.finish(entry_id, exit_code=0, duration=0.0)

    with Session(project, autonomy="yolo", backend="bwrap", limits=limits) as session:
        argv = [session.shell.path, "-c", "true"]

        def background() -> None:
            handle = session.execute("true", run_in_background=True).background_id
            assert handle is not None
            while session.output(handle).running:
                time.sleep(0.0005)

        rows = measure_round_robin(
            [
                ("Sandbox.run(bash -c true) (baseline)", lambda: session.sandbox.run(argv)),
                ("gate alone: classify + check", lambda: session.gate.check("true")),
                ("ledger alone: record + finish", record),
                ("Session.execute('true')", lambda: session.execute("true")),
                (
                    "handle_tool_call({'command': 'true'})",
                    lambda: session.handle_tool_call({"command": "true"}),
                ),
                ("execute(run_in_background) until done", background),
                ("read_file (20 lines)", lambda: session.read_file("small.txt")),
                ("write_file (new content)", lambda: session.write_file("o.txt", f"{time.time()}")),
            ],
            runs,
        )
    rows.append(("MCP tools/call bash 'true' (stdio round trip)", *mcp_row(project, runs)))

    baseline = rows[0][1]
    print(f"uid {os.geteuid()}, {runs} runs per row, {os.uname().release}")
    print_table(ratios(rows, baseline), width=48, ratio="vs Sandbox.run")


if __name__ == "__main__":
    main()
