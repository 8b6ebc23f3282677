"""The file tools: reads the jail could do, writes only where the jail could write, never on
protected paths, never through symlinks or '..', only after an up-to-date read."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from stockade.errors import PermissionDenied, UsageError
from stockade.file_tools import MAX_READ_BYTES
from stockade.permissions.ledger import Ledger
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.session import ActionDenied, Session
from tests.session_support import Answers, session

pytestmark = pytest.mark.integration


def last_entry(s: Session):  # type: ignore[no-untyped-def]
    return Ledger().entries(session=s.session_id)[-1]


def test_read_returns_lines_and_records_a_digest(project: Path) -> None:
    (project / "notes.txt").write_text("one\ntwo\nthree\nfour")
    with session(project, autonomy="balanced") as s:
        whole = s.read_file("notes.txt")
        assert (whole.content, whole.total_lines, whole.lines) == ("one\ntwo\nthree\nfour", 4, 4)
        part = s.read_file(project / "notes.txt", offset=2, limit=2)
        assert (part.content, part.first_line, part.lines) == ("two\nthree\n", 2, 2)
        assert part.digest == whole.digest and whole.size == 18
        assert last_entry(s).action == "read_file notes.txt"
        with pytest.raises(UsageError, match="does not exist"):
            s.read_file("missing.txt")
        with pytest.raises(UsageError, match="directory"):
            s.read_file(".")


def test_reads_are_bounded(project: Path) -> None:
    (project / "big.txt").write_bytes(b"x" * 99 + b"\n" * 1 + b"y" * (MAX_READ_BYTES * 2))
    with session(project, autonomy="balanced") as s:
        big = s.read_file("big.txt")
        assert big.truncated and len(big.content) == MAX_READ_BYTES
        assert big.size == 100 + 2 * MAX_READ_BYTES


def test_write_creates_files_and_parents(project: Path) -> None:
    with session(project, autonomy="balanced") as s:
        change = s.write_file("src/pkg/new.py", "print('hi')\n")
        assert change.created and change.path == "src/pkg/new.py"
        assert (project / "src/pkg/new.py").read_text() == "print('hi')\n"
        assert last_entry(s).decision == "allowed" and last_entry(s).exit_code == 0


def test_existing_files_must_be_read_first_and_unchanged(project: Path) -> None:
    target = project / "app.py"
    target.write_text("a = 1\n")
    with session(project, autonomy="balanced") as s:
        with pytest.raises(UsageError, match="was not read in this session"):
            s.write_file("app.py", "a = 2\n")
        with pytest.raises(UsageError, match="was not read in this session"):
            s.edit_file("app.py", "1", "2")
        s.read_file("app.py")
        target.write_text("a = 10\n")  # someone else changed it
        with pytest.raises(UsageError, match="changed since this session read it"):
            s.edit_file("app.py", "10", "2")
        s.read_file("app.py")
        assert s.edit_file("app.py", "10", "2").replacements == 1
        assert s.write_file("app.py", "a = 3  # rewritten\n").created is False  # own write
        assert target.read_text() == "a = 3  # rewritten\n"


def test_edit_replaces_exactly_once_unless_told(project: Path) -> None:
    (project / "m.py").write_text("x = 1\nx = 1\ny = 2\n")
    with session(project, autonomy="balanced") as s:
        s.read_file("m.py")
        with pytest.raises(UsageError, match="occurs 2 times"):
            s.edit_file("m.py", "x = 1", "x = 3")
        with pytest.raises(UsageError, match="not found"):
            s.edit_file("m.py", "z = 1", "z = 3")
        with pytest.raises(UsageError, match="the same"):
            s.edit_file("m.py", "y", "y")
        assert s.edit_file("m.py", "y = 2", "y = 5").replacements == 1
        assert s.edit_file("m.py", "x = 1", "x = 3", replace_all=True).replacements == 2
        assert (project / "m.py").read_text() == "x = 3\nx = 3\ny = 5\n"
        with pytest.raises(UsageError, match="create it with write_file"):
            s.edit_file("nope.py", "a", "b")


def test_truncating_a_file_is_high_and_asks(project: Path) -> None:
    (project / "data.txt").write_text("a lot of text\n")
    answers = Answers(Choice.DENY_ONCE)
    with session(project, autonomy="balanced", prompt=answers) as s:
        s.read_file("data.txt")
        with pytest.raises(ActionDenied) as denied:
            s.write_file("data.txt", "a\n")
        assert denied.value.decision.verdict.tier.label == "high"
        assert answers.requests[0].action == "write_file data.txt"
        assert (project / "data.txt").read_text() == "a lot of text\n"


@pytest.mark.parametrize("name", [".git/hooks/pre-commit", ".stockade/rules", ".vscode/tasks.json"])
def test_protected_paths_are_hard_denied_and_recorded(project: Path, name: str) -> None:
    answers = Answers(Choice.ALLOW_ONCE)
    with session(project, autonomy="yolo", prompt=answers) as s:
        with pytest.raises(ActionDenied, match="hard deny"):
            s.write_file(name, "evil\n")
        entry = last_entry(s)
        assert (entry.decision, entry.source) == ("denied", "builtin-deny:protected-path")
    assert answers.requests == [] and not (project / name).exists()


def test_an_existing_protected_file_cannot_be_edited(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".git/config").write_text("[core]\n")
    with session(project, autonomy="yolo") as s:
        s.read_file(".git/config")
        with pytest.raises(ActionDenied):
            s.edit_file(".git/config", "[core]", "[core]\n\thooksPath = /tmp")
    assert (project / ".git/config").read_text() == "[core]\n"


def test_writes_outside_the_writable_roots_are_refused(project: Path, visible_dir: Path) -> None:
    outside = visible_dir / "outside"
    outside.mkdir()
    (outside / "target.txt").write_text("keep\n")
    os.symlink(outside, project / "dirlink")
    os.symlink(outside / "target.txt", project / "filelink")
    with session(project, autonomy="yolo") as s:
        for path in (
            str(outside / "target.txt"),
            "../outside/target.txt",
            "dirlink/target.txt",
            "dirlink/new.txt",
            "filelink",
            "sub/../../outside/new.txt",
        ):
            with pytest.raises(PermissionDenied, match="outside every writable root"):
                s.write_file(path, "pwned\n")
        entry = last_entry(s)
        assert (entry.decision, entry.source) == ("denied", "sandbox-policy")
    assert (outside / "target.txt").read_text() == "keep\n"
    assert sorted(os.listdir(outside)) == ["target.txt"]


def test_a_directory_swapped_for_a_symlink_while_asking_is_not_followed(
    project: Path, visible_dir: Path
) -> None:
    outside = visible_dir / "elsewhere"
    outside.mkdir()
    (project / "sub").mkdir()
    (project / "sub/data.txt").write_text("long original content\n")
    (outside / "data.txt").write_text("keep\n")

    def swap_then_allow(request: PromptRequest) -> Choice:
        shutil.rmtree(project / "sub")
        os.symlink(outside, project / "sub")
        return Choice.ALLOW_ONCE

    with session(project, autonomy="balanced", prompt=swap_then_allow) as s:
        s.read_file("sub/data.txt")
        with pytest.raises(PermissionDenied, match="symlinks"):
            s.write_file("sub/data.txt", "short\n")  # truncation: asks, and swaps
    assert (outside / "data.txt").read_text() == "keep\n"


def test_writes_replace_the_file_so_hard_links_are_not_written_through(
    project: Path, visible_dir: Path
) -> None:
    outside = visible_dir / "linked.txt"
    outside.write_text("outside\n")
    os.link(outside, project / "linked.txt")
    with session(project, autonomy="yolo") as s:
        s.read_file("linked.txt")
        s.write_file("linked.txt", "inside now\n")
    assert outside.read_text() == "outside\n"
    assert (project / "linked.txt").read_text() == "inside now\n"


def test_masked_paths_cannot_be_read_or_listed(
    project: Path, visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = visible_dir / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_ed25519").write_text("PRIVATE KEY\n")
    monkeypatch.setenv("HOME", str(home))
    os.symlink(home / ".ssh/id_ed25519", project / "key-link")
    with session(project, autonomy="yolo") as s:
        for path in (str(home / ".ssh/id_ed25519"), "key-link"):
            with pytest.raises(PermissionDenied, match="masked"):
                s.read_file(path)
        with pytest.raises(PermissionDenied, match="masked"):
            s.list_dir(str(home / ".ssh"))
        assert last_entry(s).source == "sandbox-policy"
        names = [e.name for e in s.list_dir(str(home)).entries]
        assert ".ssh" in names  # the name is listed (as the jail shows it), the content not


def test_secret_files_are_high_tier_reads(project: Path) -> None:
    (project / ".env").write_text("TOKEN=1\n")
    answers = Answers(Choice.DENY_ONCE)
    with session(project, autonomy="balanced", prompt=answers) as s:
        with pytest.raises(ActionDenied):
            s.read_file(".env")
        assert answers.requests[0].tier.label == "high"
    with session(project) as s, pytest.raises(ActionDenied, match="headless"):
        s.read_file(".env")  # headless: nobody can answer


def test_list_dir_is_sorted_and_typed(project: Path) -> None:
    (project / "b.txt").write_text("12345")
    (project / "a").mkdir()
    os.symlink("b.txt", project / "c")
    with session(project, autonomy="balanced") as s:
        listing = s.list_dir()
    assert [(e.name, e.kind, e.size) for e in listing.entries] == [
        ("a", "directory", None),
        ("b.txt", "file", 5),
        ("c", "symlink", None),
    ]
    assert (listing.total, listing.truncated, listing.path) == (3, False, ".")
