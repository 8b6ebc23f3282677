"""``stockade run --stdio``: a third-party stdio program (an MCP server written with the SDK)
runs confined while its client talks to it through stockade's stdin/stdout."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import run_cli
from tests.mcp_support import text

pytestmark = pytest.mark.integration

INNER_SERVER = textwrap.dedent(
    """
    import os
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("inner")

    @server.tool()
    def whoami() -> str:
        return f"pid={os.getpid()} cwd={os.getcwd()}"

    @server.tool()
    def write(path: str) -> str:
        try:
            with open(path, "w") as handle:
                handle.write("x")
            return "wrote"
        except OSError as error:
            return f"failed: {error.strerror}"

    server.run()
    """
)


def stockade_stdio(project: Path, *command: str) -> list[str]:
    return [sys.executable, "-m", "stockade", "run", "--stdio", "--project", str(project), "--",
            *command]  # fmt: skip


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_an_sdk_mcp_server_runs_confined_behind_run_stdio(
    project: Path, visible_dir: Path, mode: str
) -> None:
    (project / "server.py").write_text(INNER_SERVER)
    outside = visible_dir / "inner-outside.txt"
    command = stockade_stdio(project, sys.executable, "server.py")
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=str(project)
    )

    async def main() -> None:
        async with Client(params, mode=mode) as client:
            assert text(await client.call_tool("whoami", {})) == f"pid=2 cwd={project}"
            denied = await client.call_tool("write", {"path": str(outside)})
            assert text(denied) == "failed: Read-only file system"
            assert text(await client.call_tool("write", {"path": "inside.txt"})) == "wrote"

    anyio.run(main)
    assert (project / "inside.txt").exists() and not outside.exists()


def read_line(stream: object, timeout: float = 20.0) -> bytes:
    fd = stream.fileno()  # type: ignore[attr-defined]
    ready, _, _ = select.select([fd], [], [], timeout)
    assert ready, "no output in time"
    return stream.readline()  # type: ignore[attr-defined, no-any-return]


def test_bytes_flow_both_ways_without_waiting_for_eof(project: Path) -> None:
    relay = subprocess.Popen(
        stockade_stdio(project, "cat"), stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert relay.stdin is not None and relay.stdout is not None
    for word in (b"ping\n", b"pong\n"):
        relay.stdin.write(word)
        relay.stdin.flush()
        assert read_line(relay.stdout) == word  # answered while stdin is still open
    relay.stdin.close()
    assert relay.wait(timeout=20) == 0


def test_signals_are_forwarded_to_the_program(project: Path) -> None:
    script = 'trap "echo got-term; exit 7" TERM; echo ready; while :; do sleep 0.05; done'
    program = subprocess.Popen(stockade_stdio(project, "sh", "-c", script), stdout=subprocess.PIPE)
    assert program.stdout is not None
    assert read_line(program.stdout) == b"ready\n"
    program.send_signal(signal.SIGTERM)
    assert read_line(program.stdout) == b"got-term\n"
    assert program.wait(timeout=20) == 7


def test_stockade_writes_nothing_of_its_own_to_stdout(project: Path) -> None:
    result = run_cli("run", "--stdio", "--unsafe", "--", "echo", "only this", cwd=project)
    assert (result.returncode, result.stdout) == (0, "only this\n")
    assert "UNCONFINED" in result.stderr


def test_stdio_has_no_wall_clock_limit_to_set(project: Path) -> None:
    result = run_cli("run", "--stdio", "--timeout", "5", "--", "true", cwd=project)
    assert result.returncode == 2 and "drop --timeout" in result.stderr
