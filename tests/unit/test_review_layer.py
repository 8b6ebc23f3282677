"""The review layer's logic without mounting anything: reading an upper dir the way overlayfs
does, the records that stop a silent overwrite, choosing paths, mountinfo visibility, the
launch stage's error channel and hole-keeping copies.

Upper dirs are built by hand with overlayfs's own marks (xattr whiteouts and opaque
directories, which any user may set; character-device whiteouts as root only).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.review import records
from stockade.review.apply import copy_data, select
from stockade.review.report import readable_size, summary_line
from stockade.review.scan import OPAQUE_XATTR, WHITEOUT_XATTR, Change, merged_lookup, scan
from stockade.sandbox import mount_stage
from stockade.sandbox.overlay import MountEntry, visible_mounts


def whiteout(path: Path) -> None:
    path.write_bytes(b"")
    os.setxattr(path, WHITEOUT_XATTR, b"y")


def opaque(path: Path) -> None:
    path.mkdir()
    os.setxattr(path, OPAQUE_XATTR, b"y")


@pytest.fixture
def layer(tmp_path: Path) -> tuple[Path, Path]:
    project, upper = tmp_path / "project", tmp_path / "upper"
    for name, text in {"same.txt": "same\n", "edit.txt": "old\n", "gone.txt": "gone\n",
                       "dir/a.txt": "a\n", "dir/b.txt": "b\n", "mode.txt": "m\n",
                       "link": None, "swap": "file\n"}.items():  # fmt: skip
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text is None:
            path.symlink_to("same.txt")
        else:
            path.write_text(text)
    upper.mkdir()
    return project, upper


def kinds(found: list[Change]) -> dict[str, str]:
    return {c.path: c.kind for c in found}


def test_scan_reads_overlay_marks(layer: tuple[Path, Path]) -> None:
    project, upper = layer
    (upper / "same.txt").write_text("same\n")  # copied up, unchanged: no change
    (upper / "edit.txt").write_text("new\n")
    whiteout(upper / "gone.txt")
    opaque(upper / "dir")  # rm -rf dir; mkdir dir; echo > dir/c.txt
    (upper / "dir" / "c.txt").write_text("c\n")
    (upper / "mode.txt").write_text("m\n")
    (upper / "mode.txt").chmod(0o600)
    (upper / "link").symlink_to("edit.txt")
    (upper / "swap").mkdir()  # a file became a directory
    (upper / "swap" / "inner").write_text("i\n")
    (upper / "new").mkdir()
    (upper / "new" / "file").write_text("n\n")
    found = [e.change for e in scan(upper, project)]
    assert kinds(found) == {
        "edit.txt": "modified",
        "gone.txt": "deleted",
        "dir/a.txt": "deleted",
        "dir/b.txt": "deleted",
        "dir/c.txt": "added",
        "mode.txt": "modified",
        "link": "modified",
        "swap": "added",  # after the deletion of the file of the same name
        "swap/inner": "added",
        "new": "added",
        "new/file": "added",
    }
    assert [c.kind for c in found if c.path == "swap"] == ["deleted", "added"]
    sizes = {c.path: c.size for c in found if c.kind != "deleted" or c.type == "file"}
    assert sizes["edit.txt"] == 4 and sizes["gone.txt"] == 5


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a whiteout device needs root")
def test_a_character_device_whiteout_is_a_deletion(layer: tuple[Path, Path]) -> None:
    project, upper = layer
    os.mknod(upper / "gone.txt", 0o600 | 0o020000, os.makedev(0, 0))
    assert kinds([e.change for e in scan(upper, project)]) == {"gone.txt": "deleted"}


def test_placeholders_are_ignored_only_while_empty(layer: tuple[Path, Path]) -> None:
    project, upper = layer
    (upper / ".bashrc").write_bytes(b"")
    (upper / ".vscode").mkdir()
    assert scan(upper, project, ignore={".bashrc", ".vscode"}) == []
    (upper / ".bashrc").write_text("alias ls='rm -rf'\n")
    assert kinds([e.change for e in scan(upper, project, ignore={".bashrc", ".vscode"})]) == {
        ".bashrc": "added"
    }


def test_merged_lookup_follows_overlay_rules(layer: tuple[Path, Path]) -> None:
    project, upper = layer
    whiteout(upper / "gone.txt")
    opaque(upper / "dir")
    (upper / "dir" / "c.txt").write_text("c\n")
    assert merged_lookup(upper, project, "same.txt") is not None  # from the project
    assert merged_lookup(upper, project, "gone.txt") is None
    assert merged_lookup(upper, project, "dir/a.txt") is None  # hidden by the opaque dir
    assert merged_lookup(upper, project, "dir/c.txt") is not None
    assert merged_lookup(upper, project, "same.txt/below") is None
    assert merged_lookup(upper, project, "missing") is None


def test_records_tell_unchanged_from_changed(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("one\n")
    record = records.snapshot(path, path.stat().st_ctime_ns + 1)  # the command started later
    assert records.conflict(record, path, whole_tree=False) is None
    path.write_text("one\n")  # rewritten with the same bytes
    assert records.conflict(record, path, whole_tree=False) is None
    path.write_text("two\n")
    assert "changed" in str(records.conflict(record, path, whole_tree=False))
    path.unlink()
    assert "no longer" in str(records.conflict(record, path, whole_tree=False))
    assert records.conflict(None, path, whole_tree=False) is None
    path.write_text("created\n")
    assert "now has" in str(records.conflict(None, path, whole_tree=False))


def test_a_record_made_after_its_command_started_is_a_conflict(tmp_path: Path) -> None:
    path = tmp_path / "file"
    since = records.coarse_now_ns()
    path.write_text("changed while the command ran\n")
    record = records.snapshot(path, since)
    assert "while the command ran" in str(records.conflict(record, path, whole_tree=False))


def test_a_deleted_directory_conflicts_with_anything_new_below_it(tmp_path: Path) -> None:
    directory = tmp_path / "dir"
    directory.mkdir()
    (directory / "old").write_text("old\n")
    newest = max(p.stat().st_ctime_ns for p in (directory, directory / "old"))
    record = records.snapshot(directory, newest + 1)  # the command started after both
    assert records.conflict(record, directory, whole_tree=True) is None
    (directory / "old").write_text("changed since the run started\n")
    assert "old below it" in str(records.conflict(record, directory, whole_tree=True))


def test_select_takes_the_new_directories_above_a_path(layer: tuple[Path, Path]) -> None:
    project, upper = layer
    (upper / "new" / "deeper").mkdir(parents=True)
    (upper / "new" / "deeper" / "file").write_text("x\n")
    (upper / "new" / "other").write_text("o\n")
    (upper / "edit.txt").write_text("new\n")
    found = scan(upper, project)
    chosen = [e.change.path for e in select(found, ["new/deeper/file"])]
    assert chosen == ["new", "new/deeper", "new/deeper/file"]
    assert [e.change.path for e in select(found, ["new/"])] == [
        "new",
        "new/deeper",
        "new/deeper/file",
        "new/other",
    ]
    with pytest.raises(UsageError, match="no change at nothing"):
        select(found, ["nothing"])


def _mount(line: str) -> MountEntry:
    return MountEntry(line)


def test_visible_mounts_skip_covered_and_shadowed_ones() -> None:
    lines = [
        "1 0 254:0 / / ro - ext4 /dev/vda rw",
        "2 1 254:0 /p /p rw - ext4 /dev/vda rw",  # the project, covered by the layer
        "3 2 0:39 / /p ro - overlay stockade-review rw",  # covered by bwrap's bind
        "4 3 0:39 / /p rw - overlay stockade-review rw",
        "5 2 254:0 /p/sub /p/sub rw - ext4 /dev/vda rw",  # below a covered mount
        "6 4 0:39 /hooks /p/.git/hooks ro - overlay stockade-review rw",
        "7 1 0:50 / /a/b rw - tmpfs tmpfs rw",  # shadowed by 8, mounted over /a later
        "8 1 0:51 / /a rw - tmpfs tmpfs rw",
        "9 1 0:52 / /with\\040space rw - tmpfs tmpfs rw",
    ]
    visible = {m.id for m in visible_mounts([_mount(line) for line in lines])}
    assert visible == {"1", "4", "6", "8", "9"}
    assert str(_mount(lines[-1]).point) == "/with space"


def test_a_failing_stage_step_says_why_in_the_launcher() -> None:
    def refuse() -> None:
        raise OSError(1, "attaching the layer: Operation not permitted")

    stage = mount_stage.Stage([refuse])
    try:
        with pytest.raises(subprocess.SubprocessError):
            subprocess.Popen(["/bin/true"], preexec_fn=stage)
        assert stage.failure() == "[Errno 1] attaching the layer: Operation not permitted"
    finally:
        stage.close()


def test_copy_data_keeps_holes(tmp_path: Path) -> None:
    source, target = tmp_path / "sparse", tmp_path / "copy"
    with open(source, "wb") as handle:
        handle.truncate(64 * 1024**2)
        handle.seek(32 * 1024**2)
        handle.write(b"middle")
    read = os.open(source, os.O_RDONLY)
    write = os.open(target, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        copy_data(read, write, os.fstat(read).st_size)
    finally:
        os.close(read)
        os.close(write)
    assert target.read_bytes() == source.read_bytes()
    assert target.stat().st_blocks * 512 < 1024**2


def test_sizes_and_summaries_read_well() -> None:
    assert [readable_size(n) for n in (12, 1536, 3 * 1024**3)] == ["12 B", "1.5 KiB", "3.0 GiB"]
    found = [
        Change("a", "added", 10),
        Change("b", "deleted", 5),
        Change(".git/hooks/x", "added", 1, refused="protected path .git/hooks: never applied"),
    ]
    assert summary_line(found) == (
        "2 added (11 B), 1 deleted (5 B); 1 refused (protected path or special file: never applied)"
    )
