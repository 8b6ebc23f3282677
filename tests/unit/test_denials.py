"""Denial explanations from real error messages, and the guard's journal after a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from stockade.sandbox.denials import Explainer
from stockade.sandbox.guard import DONE_RECORD, RunGuard, plan_for, recover, write_record
from stockade.sandbox.policy import PolicyRequest, SandboxPolicy, resolve_policy


@pytest.fixture
def policy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SandboxPolicy:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("x")
    cargo = tmp_path / "cargo"
    (cargo / "registry").mkdir(parents=True)
    project = tmp_path / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    monkeypatch.setenv("HOME", str(home))
    session = tmp_path / "session"
    session.mkdir()
    return resolve_policy(
        PolicyRequest(project=project, cwd=project),
        session_tmp=session,
        host_env={"HOME": str(home), "CARGO_HOME": str(cargo)},
    )


def reasons(policy: SandboxPolicy, output: str) -> list[str]:
    explainer = Explainer(policy)
    explainer.explain_text(output)
    return [f"{d.path.name}: {d.reason.split(' (')[0]}" for d in explainer.denials]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("touch: cannot touch '{out}/x': Read-only file system", "x: outside the writable roots"),
        (
            "mkdir: cannot create directory ‘{out}/d’: Read-only file system",
            "d: outside the writable roots",
        ),
        (
            "/bin/sh: 1: cannot create {out}/y: Read-only file system",
            "y: outside the writable roots",
        ),
        ("OSError: [Errno 30] Read-only file system: '{out}/p'", "p: outside the writable roots"),
        ("Error: EROFS: read-only file system, open '{out}/n'", "n: outside the writable roots"),
        ("open {out}/g: read-only file system", "g: outside the writable roots"),
        (
            "error: failed to create directory `{cargo}/registry/cache`\n\nCaused by:\n"
            "  Read-only file system (os error 30)",
            "cache: read-only store",
        ),
        (
            "error: could not lock config file .git/config: Read-only file system",
            "config: protected",
        ),
        ("mv: cannot move '.git' to 'old': Device or resource busy", ".git: protected"),
        ("cat: {home}/.ssh/id_rsa: No such file or directory", "id_rsa: masked"),
        ("cat: {home}/.netrc: Permission denied", ".netrc: masked"),
    ],
)
def test_common_error_formats_are_explained(
    policy: SandboxPolicy, tmp_path: Path, template: str, expected: str
) -> None:
    output = template.format(
        out=tmp_path / "elsewhere", cargo=tmp_path / "cargo", home=tmp_path / "home"
    )
    assert reasons(policy, output) == [expected]


def test_what_the_sandbox_did_not_cause_is_not_explained(
    policy: SandboxPolicy, tmp_path: Path
) -> None:
    output = (
        "cat: missing.txt: No such file or directory\n"  # an ordinary missing file
        "grep: src/x: Permission denied\n"  # inside the project: the host's own permission
        "ls: hello world\n"
    )
    assert reasons(policy, output) == []


def test_each_path_is_explained_once_and_the_rest_counted(
    policy: SandboxPolicy, tmp_path: Path
) -> None:
    lines = [f"touch: cannot touch '{tmp_path}/e/{n}': Read-only file system" for n in range(12)]
    explainer = Explainer(policy)
    out = explainer.explain_text("\n".join(lines + lines[:1]))
    assert len(explainer.denials) == 8
    assert out[-1] == "stockade: ... and 4 more paths denied by the sandbox"


def test_output_arriving_in_pieces_is_explained_at_the_line_end(
    policy: SandboxPolicy, tmp_path: Path
) -> None:
    explainer = Explainer(policy)
    line = f"touch: cannot touch '{tmp_path}/e/x': Read-only file system\n".encode()
    assert explainer.feed(line[:20]) == []
    assert explainer.feed(line[20:])[0].startswith("stockade: sandbox denied")


def test_a_journal_left_by_a_killed_run_is_finished_by_recover(
    policy: SandboxPolicy, tmp_path: Path
) -> None:
    session = tmp_path / "dead-session"
    project = policy.project
    guard = RunGuard(
        plan_for(policy.with_fresh_protection(), mounted=True), journal=session / "guard" / "1.json"
    )
    assert (session / "guard" / "1.json").exists()
    del guard  # the stockade that owned it was killed: nothing finishes it
    planted = project / ".mcp.json"
    planted.write_text('{"mcpServers": {"x": {"command": "evil"}}}')
    os.utime(planted)
    found = recover(session)
    assert [f.path for f in found] == [planted]
    assert not planted.exists()
    assert json.loads((session / "guard" / "1.json").read_text()) == {"done": True}
    planted.write_text('{"mcpServers": {"x": {"command": "evil"}}}')  # after the run: not its
    assert recover(session) == [] and planted.exists()


def test_a_journal_slot_is_rewritten_in_place_and_always_parses(tmp_path: Path) -> None:
    slot = tmp_path / "guard" / "1.json"
    long_record = json.dumps({"plan": "x" * 500})
    write_record(slot, long_record)
    write_record(slot, DONE_RECORD)
    assert json.loads(slot.read_text()) == {"done": True}
    assert len(slot.read_bytes()) == len(long_record)  # padded, never shrunk
    write_record(slot, long_record + " ")
    assert json.loads(slot.read_text()) == {"plan": "x" * 500}


def test_a_finished_guard_never_writes_a_slot_another_command_took(
    policy: SandboxPolicy, tmp_path: Path
) -> None:
    """The poller's copy of the running guards may outlive a command: a late check must not
    act for it (what it finds belongs to the next command's guard) nor write its slot."""
    slot = tmp_path / "guard" / "1.json"
    guard = RunGuard(plan_for(policy.with_fresh_protection(), mounted=True), journal=slot)
    guard.finish()
    write_record(slot, json.dumps({"plan": "the next command's"}))
    planted = policy.project / ".mcp.json"  # by the next command, judged by its own guard
    planted.write_text('{"mcpServers": {"x": {"command": "evil"}}}')
    assert guard.check_live() == []
    assert planted.exists()
    assert json.loads(slot.read_text()) == {"plan": "the next command's"}
