"""What ``stockade run --stdio --gate`` adds to each MCP tool call: the same SDK server behind
``run --stdio`` (no gate, the baseline) and behind ``--gate`` (every tools/call parsed, judged,
recorded in the ledger and completed when the answer passes back), called in turns by the
SDK's client over stdio, in one process.

Rows (each: ``--runs`` calls, median and p90 wall time, ratio against the baseline):

* ``run --stdio``: tools/call ``hello`` straight through (baseline)
* ``run --stdio --gate``, allowed by an ``mcp`` rule: gate + ledger entry + completion
* ``run --stdio --gate``, denied by an ``mcp`` rule: answered by stockade, never forwarded
* ``run --stdio --gate``, tools/list: passes through unjudged (the relay's own cost)

    python benchmarks/mcp_gate.py [--runs 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import time
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from timing import print_table, ratios, scratch_dir, summary

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool()
    def hello() -> str:
        return "hello"

    @server.tool()
    def refused() -> str:
        return "never"

    server.run()
    """
)


def client(project: Path, *flags: str) -> Client:
    args = ["-m", "stockade", "run", "--stdio", *flags, "--project", str(project), "--",
            sys.executable, "server.py"]  # fmt: skip
    params = StdioServerParameters(
        command=sys.executable, args=args, env=dict(os.environ), cwd=str(project)
    )
    return Client(params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    runs = parser.parse_args().runs
    work = scratch_dir(private_state=True)
    project = work / "project"
    project.mkdir()
    (project / "server.py").write_text(SERVER)
    from stockade.permissions.rules import Namespace, RuleDecision, RuleStore

    store = RuleStore()
    store.add(project, Namespace.MCP, "mcp.bench.hello", RuleDecision.ALLOW)
    store.add(project, Namespace.MCP, "mcp.bench.refused", RuleDecision.DENY)
    rows: dict[str, list[float]] = {}

    async def measure() -> None:
        async with AsyncExitStack() as stack:
            direct = await stack.enter_async_context(client(project))
            gated = await stack.enter_async_context(
                client(project, "--gate", "--server-name", "bench")
            )
            calls = [
                ("run --stdio: tools/call (baseline)", lambda: direct.call_tool("hello", {})),
                ("--gate: tools/call allowed by a rule", lambda: gated.call_tool("hello", {})),
                ("--gate: tools/call denied by a rule", lambda: gated.call_tool("refused", {})),
                ("--gate: tools/list (passed through)", gated.list_tools),
            ]
            for round_number in range(runs + 1):
                for name, call in calls:
                    start = time.perf_counter()
                    await call()
                    if round_number:  # round 0 warms up
                        rows.setdefault(name, []).append((time.perf_counter() - start) * 1000)

    anyio.run(measure)
    results = [(name, *summary(samples)) for name, samples in rows.items()]
    baseline = results[0][1]
    print(f"uid {os.geteuid()}, {runs} calls per row (interleaved), {os.uname().release}")
    print_table(ratios(results, baseline), width=40, ratio="vs baseline")


if __name__ == "__main__":
    main()
