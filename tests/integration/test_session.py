"""Session.execute: classify -> gate -> prompt/headless -> sandbox -> ledger, for real."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.permissions.ledger import Ledger
from stockade.permissions.prompt import Choice
from stockade.permissions.verdict import Outcome
from stockade.sandbox.limits import Limits
from stockade.session import TOOL_PROPERTIES, Session, tool_schema
from tests.session_support import Answers, session

pytestmark = pytest.mark.integration


def entries(s: Session) -> list:  # type: ignore[type-arg]
    return Ledger().entries(session=s.session_id)


def test_execute_runs_confined_and_reports_everything(project: Path, visible_dir: Path) -> None:
    outside = visible_dir / "outside.txt"
    with session(project, autonomy="yolo") as s:
        result = s.execute(f"echo out; echo err >&2; touch inside; touch {outside}")
        assert result.allowed and result.exit_code == 1
        assert (result.stdout, result.stderr.count("Read-only file system")) == ("out\n", 1)
        assert result.posture is not None and result.posture.confined and result.posture.proven
        assert result.verdict.outcome is Outcome.ALLOW
        assert result.duration > 0 and not result.truncated
        assert (project / "inside").exists() and not outside.exists()
        assert "exit code: 1" in result.to_text() and "posture: bwrap" in result.to_text()
        [entry] = entries(s)
        assert (entry.decision, entry.exit_code) == ("allowed", 1)


def test_cwd_is_relative_to_the_project_and_must_be_writable(
    project: Path, visible_dir: Path
) -> None:
    (project / "sub").mkdir()
    with session(project, autonomy="yolo") as s:
        assert s.execute("pwd", cwd="sub").stdout == f"{project}/sub\n"
        for bad in (str(visible_dir), "..", "/etc"):
            with pytest.raises(UsageError, match="outside every writable root"):
                s.execute("pwd", cwd=bad)
        assert len(entries(s)) == 1  # refused before the gate: nothing to record


def test_timeout_and_bounded_output(project: Path) -> None:
    with session(project, autonomy="yolo", limits=Limits(output_bytes_per_stream=1024)) as s:
        slow = s.execute("sleep 5", timeout=0.3)
        assert (slow.exit_code, slow.timed_out) == (124, True)
        assert "wall-clock" in slow.to_text()
        flood = s.execute("seq 1 100000")
        assert flood.truncated and len(flood.stdout) < 1400
        assert flood.stdout_path is not None and flood.stdout_path.stat().st_size > 500_000


def test_headless_denies_what_would_ask_and_runs_nothing(project: Path) -> None:
    with session(project) as s:  # no prompt: headless, default autonomy ask
        assert s.autonomy.value == "ask"
        result = s.execute("touch marker")
        assert not result.allowed and result.exit_code == 126 and result.posture is None
        assert not (project / "marker").exists()
        assert result.decision.headless
        assert "--autonomy" in result.stderr and "STOCKADE_AUTONOMY" in result.stderr
        assert result.to_text().startswith("not run - denied:")
        assert entries(s)[0].answer == "headless"


def test_environment_variable_sets_the_level(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STOCKADE_AUTONOMY", "balanced")
    with session(project) as s:
        assert s.autonomy.value == "balanced"
        assert s.execute("touch marker").ok


def test_the_prompt_decides_asks_and_session_answers_are_remembered(project: Path) -> None:
    answers = Answers(Choice.DENY_ONCE)
    with session(project, autonomy="balanced", prompt=answers) as s:
        denied = s.execute("rm -f nothing")  # high: asks at balanced
        assert not denied.allowed and len(answers.requests) == 1
        assert answers.requests[0].action == "rm -f nothing"
        answers.answer = Choice.ALLOW_SESSION
        assert s.execute("rm -f nothing").ok
        assert s.execute("rm -f nothing").ok
        assert len(answers.requests) == 2  # remembered for the session
        assert s.execute("echo quiet").ok and len(answers.requests) == 2  # read-only: no ask


def test_hard_denies_never_reach_the_prompt(project: Path) -> None:
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        result = s.execute("sudo true")
        assert not result.allowed and answers.requests == []
        assert "hard deny" in result.decision.reason


def test_tool_schema_is_exactly_the_model_arguments(project: Path) -> None:
    schema = tool_schema()
    assert schema["name"] == "bash"
    inputs = schema["input_schema"]
    assert set(inputs["properties"]) == {
        "command",
        "cwd",
        "timeout",
        "description",
        "escape_sandbox",
        "run_in_background",
    }
    assert inputs["required"] == ["command"] and inputs["additionalProperties"] is False
    with session(project, autonomy="yolo") as s:
        assert s.tool_schema() == schema


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"command": "echo", "writable": ["/"]}, "unknown argument"),
        ({"command": "echo", "network": "allow"}, "unknown argument"),
        ({"command": "echo", "backend": "none"}, "unknown argument"),
        ({"cwd": "."}, "missing argument: command"),
        ({"command": "echo", "timeout": "5"}, "must be a number"),
        ({"command": "echo", "timeout": True}, "must be a number"),
        ({"command": "echo", "escape_sandbox": "true"}, "must be true or false"),
        ({"command": ["echo"]}, "must be a string"),
        ({"command": "echo", "cwd": "/etc"}, "outside every writable root"),
        ({"command": "echo", "timeout": -1}, "positive"),
        ({"command": "echo", "escape_sandbox": True, "run_in_background": True}, "background"),
    ],
)
def test_tool_calls_reject_bad_arguments(
    project: Path, arguments: dict[str, object], message: str
) -> None:
    with session(project, autonomy="yolo") as s:
        answer = s.handle_tool_call(arguments)
    assert answer.is_error and answer.result is None
    assert message in answer.text and "\nfix: " in answer.text


def test_a_tool_call_runs_with_every_argument(project: Path) -> None:
    (project / "sub").mkdir()
    arguments = {name: None for name in TOOL_PROPERTIES} | {
        "command": "pwd",
        "cwd": "sub",
        "timeout": 30,
        "description": "where am I",
        "escape_sandbox": False,
        "run_in_background": False,
    }
    with session(project, autonomy="yolo") as s:
        answer = s.handle_tool_call(arguments)
        result = answer.result
        assert not answer.is_error and result is not None and answer.text == result.to_text()
        assert result.ok and result.stdout.strip() == str(project / "sub")
        assert result.description == "where am I"


def test_closing_removes_the_session_dir_and_refuses_more_work(project: Path) -> None:
    with session(project, autonomy="yolo") as s:
        private = s.session_dir
        assert private.is_dir()
    assert not private.exists()
    with pytest.raises(UsageError, match="closed"):
        s.execute("echo")
    assert os.path.isdir(project)
