"""The terminal prompt keeps its promises: "S" only where a session outlives the answer (and
then it really is remembered), "P"/"N" store the generalised rule they show, "E"/"X" the exact
text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.terminal_support import Terminal

pytestmark = pytest.mark.integration

ASKS = ("exec", "--autonomy", "conservative")  # `touch` is low: conservative asks


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def test_one_shot_exec_offers_no_session_answer_without_a_session_id(project: Path) -> None:
    term = Terminal(*ASKS, "touch made.txt", cwd=project)
    screen = term.expect("[D]eny")
    assert "[S]ession" not in screen and "[P]roject" in screen
    term.press(b"s")  # not offered: ignored
    term.press(b"a")
    assert term.finish() == 0


def test_a_session_answer_is_remembered_by_the_next_call_with_that_id(project: Path) -> None:
    first = Terminal(*ASKS, "touch made.txt", cwd=project, env=env(STOCKADE_SESSION_ID="s1"))
    first.expect("[S]ession")
    first.press(b"s")
    assert first.finish() == 0
    same = run_cli(*ASKS, "touch other.txt", cwd=project, env=env(STOCKADE_SESSION_ID="s1"))
    assert same.returncode == 0, same.stderr  # headless: the session rule answered
    assert "session allow rule `touch *`" in same.stderr
    other = run_cli(*ASKS, "touch other.txt", cwd=project, env=env(STOCKADE_SESSION_ID="s2"))
    assert other.returncode == 126 and "headless" in other.stderr
    bare = run_cli(*ASKS, "touch other.txt", cwd=project)
    assert bare.returncode == 126
    listed = json.loads(run_cli("permissions", "list", "--json", cwd=project).stdout)
    [kept] = listed["session_rules"]
    assert (kept["session"], kept["pattern"], kept["decision"]) == ("s1", "touch *", "allow")


def test_project_answer_stores_the_generalised_rule_it_showed(project: Path) -> None:
    term = Terminal(*ASKS, "git commit --allow-empty -m 'first'", cwd=project)
    screen = term.expect("[D]eny")
    assert "P/N store: `git commit *`" in screen
    assert "E/X store: `git commit --allow-empty -m 'first'`" in screen
    term.press(b"p")
    term.finish()
    again = run_cli(*ASKS, "git commit -m second", cwd=project)
    assert "project allow rule `git commit *`" in again.stderr, again.stderr


def test_exact_answer_stores_only_the_exact_text(project: Path) -> None:
    term = Terminal(*ASKS, "touch made.txt", cwd=project)
    term.expect("[E]xactly")
    term.press(b"e")
    assert term.finish() == 0
    assert run_cli(*ASKS, "touch made.txt", cwd=project).returncode == 0
    other = run_cli(*ASKS, "touch other.txt", cwd=project)
    assert other.returncode == 126 and not (project / "other.txt").exists()


def test_never_stores_the_generalised_deny_and_x_the_exact(project: Path) -> None:
    term = Terminal(*ASKS, "touch made.txt", cwd=project)
    term.expect("[N]ever")
    term.press(b"x")
    assert term.finish() == 126
    assert run_cli(*ASKS, "--yolo", "touch other.txt", cwd=project).returncode == 2  # conflict
    assert run_cli("exec", "--yolo", "touch other.txt", cwd=project).returncode == 0
    assert run_cli("exec", "--yolo", "touch made.txt", cwd=project).returncode == 126
    term = Terminal(*ASKS, "touch third.txt", cwd=project)
    term.expect("[N]ever")
    term.press(b"n")
    assert term.finish() == 126
    assert run_cli("exec", "--yolo", "touch fourth.txt", cwd=project).returncode == 126


def test_dangerous_arguments_are_never_generalised(project: Path) -> None:
    term = Terminal(*ASKS, "rm -f notes.txt", cwd=project)
    screen = term.expect("[D]eny")
    assert "[E]xactly" not in screen and "P/N store: `rm -f notes.txt`" in screen
    term.press(b"d")
    assert term.finish() == 126
