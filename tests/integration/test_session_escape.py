"""Sandbox escapes: one audited step outside, asked every time, never persisted, foreground
only, denied headless at every level, the rest of the session still confined, all ledgered."""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.permissions.ledger import Ledger
from stockade.permissions.prompt import Choice
from stockade.permissions.rules import RuleStore
from tests.session_support import Answers, session

pytestmark = pytest.mark.integration

LEVELS = ["ask", "conservative", "balanced", "auto-accept", "yolo"]


def test_an_approved_escape_runs_unconfined_and_says_so(project: Path, visible_dir: Path) -> None:
    outside = visible_dir / "escaped.txt"
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        result = s.execute(f"touch {outside}", escape_sandbox=True)
        assert result.ok and result.escaped and outside.exists()
        assert result.posture is not None and not result.posture.confined
        assert "UNCONFINED" in result.to_text()
        request = answers.requests[0]
        assert request.escape and "OUTSIDE the sandbox" in request.question
        # the session's sandbox is untouched: the next command is confined again
        outside.unlink()
        confined = s.execute(f"touch {outside}")
        assert confined.exit_code != 0 and not outside.exists()
        assert confined.posture is not None and confined.posture.confined
        assert s.posture.confined


def test_escapes_ask_every_time_unless_allowed_for_this_exact_pair(project: Path) -> None:
    (project / "sub").mkdir()
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        s.execute("true", escape_sandbox=True)
        s.execute("true", escape_sandbox=True)
        assert len(answers.requests) == 2  # once means once
        answers.answer = Choice.ALLOW_SESSION
        s.execute("echo pair", escape_sandbox=True)
        assert s.execute("echo pair", escape_sandbox=True).ok
        assert len(answers.requests) == 3  # same cwd + command: remembered
        s.execute("echo pair ", escape_sandbox=True)
        s.execute("echo pair", escape_sandbox=True, cwd="sub")
        assert len(answers.requests) == 5  # another command or directory asks again
        for request in answers.requests:
            assert Choice.ALLOW_PROJECT not in request.choices
            assert Choice.DENY_PROJECT not in request.choices


def test_escape_approvals_are_never_persisted(project: Path) -> None:
    answers = Answers(Choice.ALLOW_SESSION)
    with session(project, autonomy="yolo", prompt=answers) as s:
        assert s.execute("echo once", escape_sandbox=True).ok
    assert RuleStore().rules(project) == []
    with session(project, autonomy="yolo", prompt=answers) as s:
        assert s.execute("echo once", escape_sandbox=True).ok
    assert len(answers.requests) == 2


def test_a_denied_escape_aborts_instead_of_running_confined(project: Path) -> None:
    answers = Answers(Choice.DENY_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        result = s.execute("touch marker", escape_sandbox=True)
        assert not result.allowed and result.exit_code == 126
        assert not (project / "marker").exists()


def test_escapes_are_foreground_only(project: Path) -> None:
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        with pytest.raises(UsageError, match="background"):
            s.execute("true", escape_sandbox=True, run_in_background=True)
        assert answers.requests == []


@pytest.mark.parametrize("level", LEVELS)
def test_headless_denies_escapes_at_every_level(project: Path, level: str) -> None:
    with session(project, autonomy=level) as s:
        result = s.execute("touch marker", escape_sandbox=True)
        assert not result.allowed and result.decision.headless
        assert "sandbox escapes are denied in headless runs" in (result.decision.fix or "")
        assert not (project / "marker").exists()


def test_every_escape_is_in_the_ledger(project: Path) -> None:
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        s.execute("echo a", escape_sandbox=True)
        answers.answer = Choice.DENY_ONCE
        s.execute("echo b", escape_sandbox=True)
        recorded = Ledger().entries(session=s.session_id)
    assert [e.action for e in recorded] == ["echo a", "echo b"]
    assert all("sandbox-escape" in e.effects for e in recorded)
    assert [e.decision for e in recorded] == ["allowed", "denied"]
    assert recorded[0].posture == "sandbox escape: UNCONFINED"
    assert recorded[0].exit_code == 0
