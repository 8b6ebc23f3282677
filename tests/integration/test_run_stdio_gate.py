"""``stockade run --stdio --gate``: every tools/call an agent sends to a confined MCP server
goes through the gate as ``mcp.<server>.<tool>`` first; a denied call never reaches it.

The server is written with the official SDK and the agent is the SDK's client, on both
protocol eras; whether a tool ran is judged on the host (the file it creates)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

from stockade.permissions.ledger import Ledger
from stockade.permissions.rules import Namespace, RuleDecision, RuleStore
from tests.mcp_support import MODES, Elicitor, text

pytestmark = pytest.mark.integration

INNER_SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import (CallToolResult, ElicitRequest, ElicitRequestFormParams,
                           InputRequiredResult, TextContent)

    server = MCPServer("some-self-chosen-name")

    @server.tool()
    def touch(name: str) -> str:
        open(name, "w").close()
        return f"touched {name}"

    @server.tool()
    def hello() -> str:
        return "hello"

    @server.tool()
    async def confirm(ctx: Context) -> CallToolResult | InputRequiredResult:
        if "ok" not in (ctx.input_responses or {}):  # the server asks a question of its own
            form = ElicitRequestFormParams(message="sure?", requested_schema={
                "type": "object", "properties": {"decision": {"type": "string"}}})
            return InputRequiredResult(input_requests={"ok": ElicitRequest(params=form)})
        open("confirmed.txt", "w").close()
        return CallToolResult(content=[TextContent(type="text", text="confirmed")])

    server.run()
    """
)


def gated(project: Path, *extra: str) -> list[str]:
    flags = ["--stdio", "--gate", "--server-name", "inner", *extra, "--project", str(project)]
    return [sys.executable, "-m", "stockade", "run", *flags, "--", sys.executable, "server.py"]


def client(project: Path, mode: str, elicit: Elicitor | None = None, *extra: str) -> Client:
    (project / "server.py").write_text(INNER_SERVER)
    command = gated(project, *extra)
    params = StdioServerParameters(
        command=command[0], args=command[1:], env=dict(os.environ), cwd=str(project)
    )
    return Client(params, mode=mode, elicitation_callback=elicit)


def decisions(project: Path) -> list[tuple[str, str, int | None]]:
    return [
        (e.action.split()[0], e.decision, e.exit_code)
        for e in Ledger().entries(project=str(project))
    ]


@pytest.mark.parametrize("mode", MODES)
def test_without_elicitation_a_call_that_asks_is_denied_and_never_reaches_the_server(
    project: Path, mode: str
) -> None:
    async def main() -> None:
        async with client(project, mode) as c:
            listed = {tool.name for tool in (await c.list_tools()).tools}
            assert listed == {
                "touch",
                "hello",
                "confirm",
            }  # everything but tools/call passes through
            denied = await c.call_tool("touch", {"name": "made.txt"})
            assert denied.is_error
            body = text(denied)
            assert body.startswith("denied by stockade: needs a prompt and nobody can answer")
            assert "stockade permissions add allow --namespace mcp mcp.inner.touch" in body

    anyio.run(main)
    assert not (project / "made.txt").exists()
    assert decisions(project) == [("mcp.inner.touch", "denied", None)]


@pytest.mark.parametrize("mode", MODES)
def test_rules_decide_without_asking(project: Path, mode: str) -> None:
    store = RuleStore()
    store.add(project, Namespace.MCP, "mcp.inner.touch", RuleDecision.ALLOW)
    store.add(project, Namespace.MCP, "mcp.inner.hello", RuleDecision.DENY)
    elicitor = Elicitor("deny")

    async def main() -> None:
        async with client(project, mode, elicitor) as c:
            ran = await c.call_tool("touch", {"name": "made.txt"})
            assert not ran.is_error and text(ran) == "touched made.txt"
            refused = await c.call_tool("hello", {})
            assert refused.is_error and "deny rule `mcp.inner.hello`" in text(refused)

    anyio.run(main)
    assert (project / "made.txt").exists() and elicitor.asked == []
    assert decisions(project) == [
        ("mcp.inner.touch", "allowed", 0),
        ("mcp.inner.hello", "denied", None),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_questions_go_to_the_clients_elicitation(project: Path, mode: str) -> None:
    elicitor = Elicitor("deny")

    async def main() -> None:
        async with client(project, mode, elicitor) as c:
            denied = await c.call_tool("touch", {"name": "no.txt"})
            assert denied.is_error and "denied once when asked" in text(denied)
            elicitor.decision = "allow_once"
            assert text(await c.call_tool("touch", {"name": "once.txt"})) == "touched once.txt"
            elicitor.decision = "allow_session"
            for name in ("a.txt", "b.txt"):
                assert not (await c.call_tool("touch", {"name": name})).is_error

    anyio.run(main)
    assert len(elicitor.asked) == 3  # the session answer covered the fourth call
    question = elicitor.asked[0]
    assert "mcp.inner.touch" in question.message and '"name": "no.txt"' in question.message
    offered = question.requested_schema["properties"]["decision"]["enum"]
    assert offered == ["allow_once", "allow_session", "allow_project", "deny", "deny_project"]
    assert not (project / "no.txt").exists()
    assert all((project / name).exists() for name in ("once.txt", "a.txt", "b.txt"))


@pytest.mark.parametrize("mode", MODES)
def test_a_project_answer_is_a_stored_mcp_rule(project: Path, mode: str) -> None:
    async def main(elicitor: Elicitor | None) -> bool:
        async with client(project, mode, elicitor) as c:
            return not (await c.call_tool("touch", {"name": "made.txt"})).is_error

    assert anyio.run(main, Elicitor("allow_project"))
    [rule] = RuleStore().rules(project)
    assert (rule.namespace, rule.pattern, rule.decision) == (
        Namespace.MCP,
        "mcp.inner.touch",
        RuleDecision.ALLOW,
    )
    (project / "made.txt").unlink()
    assert anyio.run(main, None)  # headless now: the stored rule answers
    assert (project / "made.txt").exists()


def test_an_allowed_call_may_ask_its_own_questions_without_being_judged_again(
    project: Path,
) -> None:
    elicitor = Elicitor("allow_once")

    async def main() -> None:
        async with client(project, "auto", elicitor) as c:
            done = await c.call_tool("confirm", {})
            assert text(done) == "confirmed", text(done)

    anyio.run(main)
    assert [q.message.split("\n")[0] for q in elicitor.asked] == [
        "Allow stockade to run this?",
        "sure?",
    ]
    assert (project / "confirmed.txt").exists()
    assert decisions(project) == [("mcp.inner.confirm", "allowed", 0)]


def test_headless_flag_denies_even_when_the_client_could_answer(project: Path) -> None:
    elicitor = Elicitor("allow_once")

    async def main() -> None:
        async with client(project, "legacy", elicitor, "--headless") as c:
            assert (await c.call_tool("touch", {"name": "made.txt"})).is_error

    anyio.run(main)
    assert elicitor.asked == [] and not (project / "made.txt").exists()


def raw_session(project: Path, *lines: str, last_id: int) -> tuple[list[dict], str]:  # type: ignore[type-arg]
    """Send raw lines (after a legacy handshake), collect the answers until the one to
    ``last_id`` (the stream stays open until then), then hang up."""
    (project / "server.py").write_text(INNER_SERVER)
    hello = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]  # fmt: skip
    relay = subprocess.Popen(
        gated(project),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
    )
    assert relay.stdin is not None and relay.stdout is not None and relay.stderr is not None
    relay.stdin.write(("\n".join([*hello, *lines]) + "\n").encode())
    relay.stdin.flush()
    answers = []
    while not answers or answers[-1].get("id") != last_id:
        line = relay.stdout.readline()
        assert line, "the relay ended early"
        answers.append(json.loads(line))
    relay.stdin.close()
    assert relay.wait(timeout=60) == 0
    return [a for a in answers if a.get("id") != 0], relay.stderr.read().decode()


def test_what_the_gate_cannot_judge_is_refused_and_never_forwarded(project: Path) -> None:
    call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "touch"}}
    sneaky = json.dumps({**call, "id": 1, "params": {"name": "hello", "arguments": {}}})
    sneaky = sneaky[:-1] + ', "params": {"name": "touch", "arguments": {"name": "dup.txt"}}}'
    answers, stderr = raw_session(
        project,
        sneaky,  # duplicate keys: which params would the server see?
        "{not json",
        json.dumps({**call, "id": 2, "method": "Tools/Call"}),
        json.dumps({**call, "params": {"name": "touch", "arguments": {"name": "note.txt"}}}),
        json.dumps({**call, "id": 3, "params": {"name": "touch", "arguments": {"name": "a.txt"}}}),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}),
        last_id=4,
    )
    by_id = {a.get("id"): a for a in answers}
    assert [a["error"]["code"] for a in answers if a.get("id") is None] == [-32700, -32700]
    assert by_id[2]["error"]["code"] == -32600
    refused = by_id[3]["result"]
    assert refused["isError"] and "denied by stockade" in refused["content"][0]["text"]
    assert {t["name"] for t in by_id[4]["result"]["tools"]} == {"touch", "hello", "confirm"}
    assert not any((project / n).exists() for n in ("dup.txt", "note.txt", "a.txt"))
    assert "gating MCP server 'inner': its tool calls are mcp.inner.<tool>" in stderr


def test_server_names_come_from_the_command_never_from_the_server() -> None:
    from stockade.errors import UsageError
    from stockade.mcp_gate import server_name

    assert server_name(["npx", "-y", "@modelcontextprotocol/server-github"]) == "github"
    assert server_name(["uvx", "mcp-server-fetch"]) == "fetch"
    assert server_name(["python3", "-m", "my_server"]) == "my_server"
    assert (
        server_name(["docker", "run", "-i", "--rm", "ghcr.io/github/github-mcp-server"]) == "github"
    )
    assert server_name(["node", "/opt/servers/notes.js"]) == "notes"
    assert server_name(["python", "server.py"]) == "server"
    assert server_name(["x"], "gh") == "gh"
    with pytest.raises(UsageError, match="plain name"):
        server_name(["x"], "git.hub")


def test_gate_flags_need_stdio(project: Path) -> None:
    from tests.conftest import run_cli

    alone = run_cli("run", "--gate", "--", "true", cwd=project)
    assert alone.returncode == 2 and "add --stdio" in alone.stderr
    named = run_cli("run", "--stdio", "--server-name", "x", "--", "true", cwd=project)
    assert named.returncode == 2 and "only apply with --stdio --gate" in named.stderr
