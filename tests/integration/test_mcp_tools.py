"""``stockade mcp`` tools beyond bash: file tools, background commands, escapes, fetch, and
what the server leaves behind when the client goes away."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from stockade.permissions.ledger import Ledger
from tests.mcp_support import MODES, Elicitor, connect, text
from tests.process_support import processes_with, wait_until

pytestmark = pytest.mark.integration


def test_file_tools_round_trip(project: Path) -> None:
    (project / "app.py").write_text("x = 1\n")

    async def main() -> None:
        async with connect(project) as client:
            edit = {"path": "app.py", "old_string": "1", "new_string": "2"}
            refused = await client.call_tool("edit_file", edit)
            assert refused.is_error and "read_file it first" in text(refused)
            read = await client.call_tool("read_file", {"path": "app.py"})
            assert text(read) == "app.py: lines 1-1 of 1\nx = 1\n"
            edited = await client.call_tool(
                "edit_file", {"path": "app.py", "old_string": "x = 1", "new_string": "x = 2"}
            )
            assert text(edited) == "edited app.py: 1 replacement(s)"
            created = await client.call_tool("write_file", {"path": "pkg/new.py", "content": "y\n"})
            assert text(created) == "created pkg/new.py (2 bytes)"
            listing = await client.call_tool("list_dir", {})
            assert text(listing).splitlines() == [".: 2 entries", "app.py (6 bytes)", "pkg/"]
            hook_file = {"path": ".git/hooks/post-checkout", "content": "evil"}
            hook = await client.call_tool("write_file", hook_file)
            assert hook.is_error and "hard deny" in text(hook)

    anyio.run(main)
    assert (project / "app.py").read_text() == "x = 2\n"
    assert not (project / ".git").exists()


def test_background_commands_through_mcp(project: Path) -> None:
    async def main() -> None:
        async with connect(project) as client:
            started = await client.call_tool(
                "bash", {"command": "echo ready; sleep 4242.31", "run_in_background": True}
            )
            assert "started in the background as bg-1" in text(started)
            # wait for the output itself, not for the process: "ready" may still be in the
            # pipe when sleep is already running
            seen = ""
            for _ in range(200):
                output = text(await client.call_tool("bash_output", {"id": "bg-1"}))
                assert "bg-1 is still running" in output
                seen += output
                if "ready" in seen:
                    break
                await anyio.sleep(0.05)
            assert "ready" in seen
            assert wait_until(lambda: bool(processes_with("sleep 4242.31")))
            killed = await client.call_tool("bash_kill", {"id": "bg-1"})
            assert "exited with code 137" in text(killed)
            missing = await client.call_tool("bash_output", {"id": "bg-7"})
            assert missing.is_error and "no background command 'bg-7'" in text(missing)

    anyio.run(main)
    assert wait_until(lambda: not processes_with("sleep 4242.31"))


@pytest.mark.parametrize("mode", MODES)
def test_escapes_are_asked_every_time_and_never_offer_project_scope(
    project: Path, visible_dir: Path, mode: str
) -> None:
    outside = visible_dir / "mcp-escape"
    elicitor = Elicitor("allow_once")

    async def main() -> None:
        async with connect(project, mode=mode, elicit=elicitor, args=["--autonomy", "yolo"]) as c:
            for _ in range(2):
                result = await c.call_tool(
                    "bash", {"command": f"touch {outside}", "escape_sandbox": True}
                )
                assert not result.is_error and "UNCONFINED" in text(result)
            background = await c.call_tool(
                "bash", {"command": "true", "escape_sandbox": True, "run_in_background": True}
            )
            assert background.is_error and "background" in text(background)
        assert len(elicitor.asked) == 2
        assert "OUTSIDE the sandbox" in elicitor.asked[0].message

    anyio.run(main)
    assert outside.exists()
    escapes = [e for e in Ledger().entries() if "sandbox-escape" in e.effects]
    assert len(escapes) == 2


def test_fetch_follows_the_network_policy(project: Path) -> None:
    async def main() -> None:
        async with connect(project, args=["--autonomy", "yolo"]) as client:
            result = await client.call_tool("fetch", {"url": "http://127.0.0.1:9/"})
        assert result.is_error and "network access is denied" in text(result)

    anyio.run(main)


SERVER = [sys.executable, "-m", "stockade", "mcp", "--autonomy", "yolo", "--project"]
START_BACKGROUND = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"t","version":"0"}}}\n'
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":'
    b'{"command":"sleep 4242.32","run_in_background":true}}}\n'
)


@pytest.mark.parametrize("how", ["eof", "sigterm", "sigkill", "sigint"])
def test_nothing_is_left_when_the_client_goes_away(project: Path, how: str) -> None:
    """Raw JSON-RPC on purpose: the client may vanish in ways the SDK would not."""
    server = subprocess.Popen(
        [*SERVER, str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(START_BACKGROUND)
    server.stdin.flush()
    replies = [server.stdout.readline(), server.stdout.readline()]
    assert b"started in the background" in replies[1]
    assert wait_until(lambda: bool(processes_with("sleep 4242.32")))
    if how == "eof":
        server.stdin.close()
    else:
        kinds = {"sigterm": signal.SIGTERM, "sigkill": signal.SIGKILL, "sigint": signal.SIGINT}
        os.kill(server.pid, kinds[how])
    code = server.wait(timeout=30)
    assert wait_until(lambda: not processes_with("sleep 4242.32"))
    assert server.stderr is not None
    lines = server.stderr.read().decode().splitlines()
    assert lines[0].startswith("stockade: serving MCP tools bash, bash_output, bash_kill")
    assert "(autonomy yolo;" in lines[0] and "bwrap (proven)" in lines[0]
    if how == "sigint":  # Ctrl-C: closed, said so, exit 130 - no traceback, no hang
        assert code == 130 and lines[1].startswith("stockade: interrupted; session ")
        assert len(lines) == 2
