"""``stockade mcp`` end to end: a real server subprocess, the SDK's client over stdio, on both
protocol eras (2026-07-28 input-required rounds and the legacy mid-call elicitation)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from stockade.permissions.ledger import Ledger
from stockade.session import tool_schema
from tests.mcp_support import MODES, Elicitor, connect, text

pytestmark = pytest.mark.integration

TOOLS = {
    "bash",
    "bash_output",
    "bash_kill",
    "read_file",
    "write_file",
    "edit_file",
    "list_dir",
    "fetch",
}


def test_tools_are_listed_with_strict_schemas(project: Path) -> None:
    async def main() -> None:
        async with connect(project) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        assert listed["bash"].input_schema == tool_schema()["input_schema"]
        for tool in listed.values():
            assert tool.input_schema["additionalProperties"] is False
        assert listed["read_file"].annotations is not None
        assert listed["read_file"].annotations.read_only_hint

    anyio.run(main)


@pytest.mark.parametrize("mode", MODES)
def test_bash_runs_confined_and_reports_exit_code_output_posture(
    project: Path, visible_dir: Path, mode: str
) -> None:
    outside = visible_dir / "mcp-outside"

    async def main() -> None:
        async with connect(project, mode=mode) as client:
            result = await client.call_tool("bash", {"command": f"echo hi; touch {outside}"})
            flood = text(await client.call_tool("bash", {"command": "seq 1 300000"}))
        assert "output truncated" in flood and len(flood) < 2 * 128 * 1024 + 1000
        assert flood.rstrip().endswith("300000")
        assert not result.is_error
        body = text(result)
        assert body.startswith("exit code: 1")
        assert "posture: bwrap (proven)" in body and "stdout:\nhi" in body
        assert "Read-only file system" in body

    anyio.run(main)
    assert not outside.exists()


@pytest.mark.parametrize("mode", MODES)
def test_asks_go_to_elicitation_and_the_answer_decides(project: Path, mode: str) -> None:
    elicitor = Elicitor("deny")

    async def main() -> None:
        async with connect(project, mode=mode, elicit=elicitor) as client:
            denied = await client.call_tool(
                "bash",
                {"command": "rm -f marker && touch marker", "description": "reset the marker"},
            )
            assert denied.is_error and "denied" in text(denied)
            assert not (project / "marker").exists()
            elicitor.decision = "allow_session"
            for _ in range(2):
                ran = await client.call_tool("bash", {"command": "rm -f marker && touch marker"})
                assert not ran.is_error, text(ran)
        assert len(elicitor.asked) == 2  # the session answer covered the third call
        question = elicitor.asked[0]
        assert "rm -f marker" in question.message
        assert "purpose (as the agent describes it): reset the marker" in question.message
        decisions = question.requested_schema["properties"]["decision"]["enum"]
        # rm's arguments are what it deletes: no generalised rule, so no exact variants
        assert decisions == ["allow_once", "allow_session", "allow_project", "deny", "deny_project"]

    anyio.run(main)
    assert (project / "marker").exists()


@pytest.mark.parametrize("mode", MODES)
def test_elicitation_offers_what_the_terminal_offers_and_names_the_rules(
    project: Path, mode: str
) -> None:
    from stockade.permissions.rules import RuleStore

    elicitor = Elicitor("allow_project")
    args = ["--autonomy", "conservative"]  # touch is low: it asks

    async def main() -> None:
        async with connect(project, mode=mode, elicit=elicitor, args=args) as client:
            assert not (await client.call_tool("bash", {"command": "touch made.txt"})).is_error
            again = await client.call_tool("bash", {"command": "touch other.txt"})
            assert not again.is_error  # the stored `touch *` answered: not asked again
            elicitor.decision = "deny_project_exact"
            denied = await client.call_tool("bash", {"command": "rm -f made.txt"})
            assert denied.is_error

    anyio.run(main)
    assert len(elicitor.asked) == 2
    field = elicitor.asked[0].requested_schema["properties"]["decision"]
    assert field["enum"] == [
        "allow_once",
        "allow_session",
        "allow_project",
        "allow_project_exact",
        "deny",
        "deny_project",
        "deny_project_exact",
    ]
    titles = {option["const"]: option["title"] for option in field["oneOf"]}
    assert titles["allow_project"] == "Always allow in this project: `touch *`"
    assert (
        titles["allow_project_exact"]
        == "Always allow exactly this in this project: `touch made.txt`"
    )
    assert "allow_project: Always allow in this project: `touch *`" in elicitor.asked[0].message
    stored = {(r.pattern, r.decision.value) for r in RuleStore().rules(project)}
    assert stored == {
        ("touch *", "allow")
    }  # deny_project_exact was not offered for rm: denied once
    assert (project / "other.txt").exists() and (project / "made.txt").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_client_without_elicitation_gets_the_headless_denial(project: Path, mode: str) -> None:
    async def main() -> None:
        async with connect(project, mode=mode) as client:
            result = await client.call_tool("bash", {"command": "rm -f x && touch marker"})
        assert result.is_error
        assert "headless" in text(result) and "STOCKADE_AUTONOMY" in text(result)

    anyio.run(main)
    assert not (project / "marker").exists()


def test_declined_or_cancelled_elicitations_deny(project: Path) -> None:
    async def main() -> None:
        for action in ("decline", "cancel"):
            async with connect(project, elicit=Elicitor(action=action)) as client:
                result = await client.call_tool("bash", {"command": "rm -f x && touch marker"})
                assert result.is_error and "denied" in text(result)

    anyio.run(main)
    assert not (project / "marker").exists()


BAD_CALLS = [
    ("bash", {"command": "echo", "writable": ["/"]}, "unknown argument(s) for bash: writable"),
    ("bash", {"command": "echo", "network": "allow"}, "unknown argument"),
    ("bash", {"command": "echo", "timeout": "5"}, "must be"),
    ("bash", {"command": "echo", "escape_sandbox": "yes"}, "must be"),
    ("bash", {"command": "echo", "cwd": "/etc"}, "outside every writable root"),
    ("read_file", {"path": "x", "mode": "rb"}, "unknown argument"),
    ("list_dir", {"path": 3}, "must be"),
]


def test_bad_arguments_are_rejected_not_ignored(project: Path) -> None:
    async def main() -> None:
        async with connect(project, args=["--autonomy", "yolo"]) as client:
            for tool, arguments, message in BAD_CALLS:
                result = await client.call_tool(tool, arguments)
                assert result.is_error and message in text(result), (tool, arguments)

    anyio.run(main)
    assert Ledger().entries() == []  # refused before the gate: nothing ran, nothing to record


def test_settings_and_headless_flag_reach_the_server(project: Path, visible_dir: Path) -> None:
    config = visible_dir / "config.toml"
    config.write_text('[permissions]\ndeny = ["bash:echo forbidden*"]\nallow = ["bash:rm -f x"]\n')
    elicitor = Elicitor("allow_once")

    async def main() -> None:
        args = ["--config", str(config), "--headless"]
        async with connect(project, elicit=elicitor, args=args) as client:
            denied = await client.call_tool("bash", {"command": "echo forbidden words"})
            assert denied.is_error and "deny rule" in text(denied)
            allowed = await client.call_tool("bash", {"command": "rm -f x"})  # high, allowed
            assert not allowed.is_error, text(allowed)
            asked = await client.call_tool("bash", {"command": "rm -f y"})
            assert asked.is_error and "headless" in text(asked)
        assert elicitor.asked == []  # --headless: the client is never asked

    anyio.run(main)
