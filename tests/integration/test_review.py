"""Review workspaces, for real: overlayfs over the project, a real jail, real applies.

Every outcome is judged from the host: the project tree is snapshotted before the run and
compared after the run, after ``apply`` and after ``discard``; what a jail would have written
outside the project is looked for where it would have landed. Run as root and as an
unprivileged user (the layer is mounted differently in the two cases).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from stockade.review import ApplyConflict
from stockade.review import changesets as ops
from stockade.review.apply import ApplyFailed, apply_entries
from stockade.review.store import Changeset, store_dir
from stockade.runner import Sandbox
from stockade.session import AsyncSession, Session
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

SCRIPT = r"""
set -e
echo modified >> kept.txt
rm gone.txt
echo new > added.txt
mv old-name.txt new-name.txt
mkdir -p fresh/deeper && echo deep > fresh/deeper/file.txt
mv tree tree-moved
rm -rf replaced && mkdir replaced && echo inside > replaced/new.txt
ln -s "$OUTSIDE" escape
chmod 600 mode.txt
( echo x > .git/hooks/pre-commit ) 2>/dev/null && echo HOOK-WRITTEN || true
( echo x > .mcp.json ) 2>/dev/null && echo MCP-WRITTEN || true
mkdir .claude && echo '{"hooks": {}}' > .claude/settings.json
"""


def tree(root: Path) -> dict[str, Any]:
    """Everything below ``root``: type, permission bits, content or link target."""
    found: dict[str, Any] = {}
    for directory, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(directory) / name
            info = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                found[rel] = ("file", stat.S_IMODE(info.st_mode), path.read_bytes())
    return found


def make_project(project: Path) -> None:
    for name, text in {
        "kept.txt": "kept\n",
        "gone.txt": "gone\n",
        "old-name.txt": "renamed\n",
        "mode.txt": "mode\n",
        "tree/a.txt": "a\n",
        "tree/sub/b.txt": "b\n",
        "replaced/old.txt": "old\n",
        ".git/hooks/README": "hooks\n",
        ".mcp.json": "{}\n",
    }.items():
        path = project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (project / "mode.txt").chmod(0o644)


def review_run(project: Path, script: str) -> str:
    """``stockade run --review`` from the CLI; returns the changeset id it reports."""
    result = run_cli("run", "--review", "--", "/bin/sh", "-c", script, cwd=project)
    assert result.returncode == 0, result.stderr
    assert "HOOK-WRITTEN" not in result.stdout and "MCP-WRITTEN" not in result.stdout
    assert "the project is untouched" in result.stderr, result.stderr
    listed = json.loads(run_cli("changes", "--json", cwd=project).stdout)["changesets"]
    return str(listed[0]["id"])


def kinds(project: Path, changeset_id: str) -> dict[str, str]:
    data = json.loads(run_cli("changes", "show", changeset_id, "--json", cwd=project).stdout)
    return {c["path"]: c["kind"] for c in data["changes"]}


def store_is_empty() -> bool:
    store = store_dir()
    return not store.exists() or not os.listdir(store)


def test_run_review_changes_nothing_until_apply(project: Path, visible_dir: Path) -> None:
    make_project(project)
    outside = visible_dir / "outside"
    outside.mkdir()
    before = tree(project)
    changeset = review_run(project, SCRIPT.replace("$OUTSIDE", str(outside)))
    assert tree(project) == before  # the host project is untouched
    assert kinds(project, changeset) == {
        "kept.txt": "modified",
        "gone.txt": "deleted",
        "added.txt": "added",
        "old-name.txt": "deleted",
        "new-name.txt": "added",
        "fresh": "added",
        "fresh/deeper": "added",
        "fresh/deeper/file.txt": "added",
        "tree": "deleted",
        "tree-moved": "added",
        "tree-moved/a.txt": "added",
        "tree-moved/sub": "added",
        "tree-moved/sub/b.txt": "added",
        "replaced/old.txt": "deleted",
        "replaced/new.txt": "added",
        "escape": "added",
        "mode.txt": "modified",
        ".claude": "added",  # a protected name created in the layer: listed, never applied
        ".claude/settings.json": "added",
    }
    diff = run_cli("changes", "show", changeset, "--diff", cwd=project).stdout
    assert "+modified" in diff and "-gone" in diff and "(outside the project)" in diff

    applied = run_cli("changes", "apply", changeset, cwd=project)
    assert applied.returncode == 0, applied.stderr
    after = tree(project)
    assert after["kept.txt"][2] == b"kept\nmodified\n"
    assert "gone.txt" not in after and "old-name.txt" not in after and "tree" not in after
    assert after["new-name.txt"][2] == b"renamed\n"
    assert after["fresh/deeper/file.txt"][2] == b"deep\n"
    assert after["tree-moved/sub/b.txt"][2] == b"b\n"
    assert "replaced/old.txt" not in after and after["replaced/new.txt"][2] == b"inside\n"
    assert after["escape"] == ("link", str(outside))  # a link, never followed
    assert after["mode.txt"][1] == 0o600
    assert ".claude/settings.json" not in after and ".git/hooks/pre-commit" not in after
    assert after[".mcp.json"][2] == b"{}\n"
    assert os.listdir(outside) == []
    # what was refused stays in the changeset (listed, never applied) until it is discarded
    assert kinds(project, changeset) == {".claude": "added", ".claude/settings.json": "added"}
    assert run_cli("changes", "discard", changeset, cwd=project).returncode == 0
    assert store_is_empty()  # then nothing is left behind


def test_discard_leaves_the_project_and_the_store_as_they_were(project: Path) -> None:
    make_project(project)
    before = tree(project)
    changeset = review_run(project, "echo x > new.txt; rm kept.txt; rm -rf tree")
    assert tree(project) == before
    result = run_cli("changes", "discard", changeset, cwd=project)
    assert result.returncode == 0, result.stderr
    assert tree(project) == before
    assert store_is_empty()
    assert "no pending changesets" in run_cli("changes", cwd=project).stdout


def test_the_listings_show_the_jails_names_and_commands_escaped(project: Path) -> None:
    """A file name or link target the jail chose cannot repaint the reviewer's terminal."""
    make_project(project)
    script = "touch \"$(printf 'a\\033[2Jb')\"; ln -s \"$(printf 't\\033]0;x\\007')\" link"
    changeset = review_run(project, script + " # \u202e")
    shown = run_cli("changes", "show", changeset, cwd=project).stdout
    listed = run_cli("changes", cwd=project).stdout
    assert "a\\x1b[2Jb" in shown and "-> t\\x1b]0;x\\x07" in shown, shown
    assert "\\u202e" in shown and "\\u202e" in listed
    assert "\x1b" not in shown + listed and "\u202e" not in shown + listed
    assert run_cli("changes", "discard", changeset, cwd=project).returncode == 0


def test_apply_refuses_when_the_project_changed_under_a_path(project: Path) -> None:
    make_project(project)
    changeset = review_run(project, "echo layer >> kept.txt; echo new > added.txt")
    (project / "kept.txt").write_text("edited on the host\n")
    refused = run_cli("changes", "apply", changeset, cwd=project)
    assert refused.returncode == 1
    assert "kept.txt" in refused.stderr and "changed" in refused.stderr
    assert (project / "kept.txt").read_text() == "edited on the host\n"
    assert not (project / "added.txt").exists()  # all or nothing
    # the other path can be applied by name
    assert run_cli("changes", "apply", changeset, "added.txt", cwd=project).returncode == 0
    assert (project / "added.txt").read_text() == "new\n"
    assert kinds(project, changeset) == {"kept.txt": "modified"}


def test_apply_refuses_a_path_the_host_created_meanwhile(project: Path) -> None:
    make_project(project)
    changeset = review_run(project, "echo layer > both.txt")
    (project / "both.txt").write_text("host\n")
    assert run_cli("changes", "apply", changeset, cwd=project).returncode == 1
    assert (project / "both.txt").read_text() == "host\n"


def test_apply_never_follows_a_symlink_planted_in_the_project(
    project: Path, visible_dir: Path
) -> None:
    make_project(project)
    outside = visible_dir / "outside"
    outside.mkdir()
    changeset_id = review_run(project, "mkdir made && echo secret > made/file.txt")
    (project / "made").symlink_to(outside)  # planted after the run
    refused = run_cli("changes", "apply", changeset_id, cwd=project)
    assert refused.returncode == 1 and "made" in refused.stderr
    assert os.listdir(outside) == []
    # Below the conflict check, the writer itself refuses to walk through the link.
    changeset = Changeset.open(changeset_id)
    wanted = [e for e in ops.entries(changeset) if e.change.path == "made/file.txt"]
    identity = changeset.meta["project_identity"]
    with pytest.raises(ApplyFailed, match=r"made/file\.txt"):
        apply_entries(project, identity, wanted)
    assert os.listdir(outside) == []
    # control: a plain open of the same path would have written outside
    assert (project / "made" / "file.txt").resolve().parent == outside


def test_a_change_below_a_protected_path_is_never_applied(project: Path) -> None:
    make_project(project)
    changeset_id = review_run(project, "echo ok > fine.txt")
    changeset = Changeset.open(changeset_id)
    hooks = changeset.upper / ".git" / "hooks"
    hooks.mkdir(parents=True)  # as if something had got past the jail's read-only hooks
    (hooks / "post-checkout").write_text("#!/bin/sh\necho pwned\n")
    listed = {c.path: c for c in ops.changes(changeset)}
    assert listed[".git/hooks/post-checkout"].refused is not None
    result = run_cli("changes", "apply", changeset_id, cwd=project)
    assert result.returncode == 0, result.stderr
    assert "not applied: .git/hooks/post-checkout" in result.stdout
    assert not (project / ".git" / "hooks" / "post-checkout").exists()
    assert (project / "fine.txt").read_text() == "ok\n"


def test_two_changesets_on_one_project_do_not_mix(project: Path) -> None:
    make_project(project)
    first = review_run(project, "echo one > one.txt; echo first >> kept.txt")
    second = review_run(project, "echo two > two.txt")
    assert first != second
    assert kinds(project, first) == {"one.txt": "added", "kept.txt": "modified"}
    assert kinds(project, second) == {"two.txt": "added"}  # it never saw the first one
    assert run_cli("changes", "apply", second, cwd=project).returncode == 0
    assert (project / "two.txt").exists() and not (project / "one.txt").exists()
    assert kinds(project, first) == {"one.txt": "added", "kept.txt": "modified"}
    assert run_cli("changes", "discard", first, cwd=project).returncode == 0
    assert (project / "kept.txt").read_text() == "kept\n"
    assert store_is_empty()


def test_sigkill_of_stockade_leaves_a_listable_discardable_changeset(
    project: Path, visible_dir: Path
) -> None:
    make_project(project)
    before = tree(project)
    marker = visible_dir / "started"
    script = f"echo half > half.txt; rm kept.txt; : > {marker}; exec sleep 60"
    launcher = subprocess.Popen(
        [sys.executable, "-m", "stockade", "run", "--review", "--writable", str(visible_dir),
         "--", "/bin/sh", "-c", script],
        cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert launcher.poll() is None, "the review run ended before it was killed"
            assert time.monotonic() < deadline, "the review run never started"
            time.sleep(0.02)
        listed = json.loads(run_cli("changes", "--json", cwd=project).stdout)["changesets"]
        assert [c["state"] for c in listed] == ["running"]
        launcher.send_signal(signal.SIGKILL)
    finally:
        launcher.kill()
        launcher.wait()
    assert tree(project) == before
    listed = json.loads(run_cli("changes", "--json", cwd=project).stdout)["changesets"]
    [entry] = listed
    assert entry["state"] == "interrupted"
    assert {c["path"]: c["kind"] for c in entry["changes"]} == {
        "half.txt": "added",
        "kept.txt": "deleted",
    }
    assert run_cli("changes", "discard", entry["id"], cwd=project).returncode == 0
    assert tree(project) == before and store_is_empty()


def test_review_is_refused_where_no_layer_can_be_attached(project: Path) -> None:
    make_project(project)
    before = tree(project)
    for flags in (("--backend", "landlock"), ("--unsafe",)):
        result = run_cli("run", "--review", *flags, "--", "/bin/sh", "-c", "echo x > new.txt",
                         cwd=project)  # fmt: skip
        assert result.returncode == 125, result.stderr
        assert "--review needs a mount namespace" in result.stderr
        assert "straight into the project" in result.stderr
    assert tree(project) == before and store_is_empty()


def test_a_review_session_shares_one_layer_and_applies_on_request(project: Path) -> None:
    make_project(project)
    before = tree(project)
    with Session(project, workspace="review", autonomy="yolo") as s:
        assert s.workspace == "review"
        assert s.execute("echo one > one.txt").ok
        assert s.execute("cat one.txt && echo two >> one.txt && rm gone.txt").ok
        assert {(c.path, c.kind) for c in s.changes()} == {
            ("one.txt", "added"),
            ("gone.txt", "deleted"),
        }
        assert "+two" in s.diff("one.txt")
        assert tree(project) == before
        with pytest.raises(Exception, match="review workspace"):
            s.write_file("direct.txt", "would bypass the layer")
        background = s.execute("sleep 30", run_in_background=True)
        assert background.background_id is not None
        with pytest.raises(Exception, match="still run"):
            s.apply()
        s.kill(background.background_id)
        result = s.apply(["one.txt"])
        assert [c.path for c in result.applied] == ["one.txt"]
        assert (project / "one.txt").read_text() == "one\ntwo\n"
        assert (project / "gone.txt").exists()
        assert s.execute("cat one.txt").stdout == "one\ntwo\n"  # the layer shows the project
        assert [c.path for c in s.changes()] == ["gone.txt"]
        s.discard()
        assert s.changes() == []
        assert s.execute("echo later > later.txt").ok  # a fresh changeset
        kept = s.changeset_id
    assert not (project / "later.txt").exists()
    assert kept is not None and [c.path for c in ops.changes(Changeset.open(kept))] == ["later.txt"]


def test_an_async_review_session_applies_and_discards_like_a_session(project: Path) -> None:
    import asyncio

    make_project(project)
    before = tree(project)

    async def work() -> None:
        async with AsyncSession(project, workspace="review", autonomy="yolo") as s:
            assert s.workspace == "review" and s.changeset_id is not None
            assert (await s.execute("echo one > one.txt && rm gone.txt")).ok
            assert {(c.path, c.kind) for c in await s.changes()} == {
                ("one.txt", "added"),
                ("gone.txt", "deleted"),
            }
            assert "+one" in await s.diff("one.txt")
            assert tree(project) == before
            assert [c.path for c in (await s.apply(["one.txt"])).applied] == ["one.txt"]
            await s.discard()
            assert await s.changes() == []

    asyncio.run(work())
    assert (project / "one.txt").read_text() == "one\n"
    assert (project / "gone.txt").exists()


def test_a_file_over_two_gib_is_streamed_and_stays_sparse(project: Path) -> None:
    big = project / "big.bin"
    with open(big, "wb") as handle:
        handle.truncate(2 * 1024**3 + 4096)  # sparse: 2 GiB + 4 KiB of holes
    with Sandbox.for_project(project, review=True) as sandbox:
        assert sandbox.run(["/bin/sh", "-c", "printf tail >> big.bin"]).exit_code == 0
        assert sandbox.review is not None
        [change] = sandbox.review.changes()
        assert (change.path, change.kind, change.size) == ("big.bin", "modified", 2**31 + 4100)
        assert big.stat().st_size == 2**31 + 4096
        sandbox.review.apply()
    info = big.stat()
    assert info.st_size == 2**31 + 4100
    assert info.st_blocks * 512 < 16 * 1024**2  # holes kept
    with open(big, "rb") as handle:
        handle.seek(-9, os.SEEK_END)
        assert handle.read() == b"\0\0\0\0\0tail"


def test_no_leftovers_on_the_host(project: Path) -> None:
    """Protected paths that do not exist get their mount points inside the layer, never in
    the project; an empty run keeps no changeset."""
    (project / "file.txt").write_text("x\n")
    result = run_cli("run", "--review", "--", "/bin/true", cwd=project)
    assert result.returncode == 0, result.stderr
    assert "changed nothing" in result.stderr
    assert sorted(os.listdir(project)) == ["file.txt"]
    assert store_is_empty()


def test_conflict_error_lists_every_path(project: Path) -> None:
    make_project(project)
    with Sandbox.for_project(project, review=True) as sandbox:
        sandbox.run(["/bin/sh", "-c", "echo 1 >> kept.txt; echo 2 >> mode.txt"])
        (project / "kept.txt").write_text("host 1\n")
        (project / "mode.txt").write_text("host 2\n")
        assert sandbox.review is not None
        with pytest.raises(ApplyConflict) as raised:
            sandbox.review.apply()
        assert {path for path, _ in raised.value.conflicts} == {"kept.txt", "mode.txt"}


def test_a_changeset_store_inside_the_project_is_refused(project: Path) -> None:
    env = {**os.environ, "XDG_DATA_HOME": str(project / "data")}
    result = run_cli("run", "--review", "--", "/bin/true", cwd=project, env=env)
    assert result.returncode == 125, result.stderr
    assert "inside the project" in result.stderr and "XDG_DATA_HOME" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting below the project needs root")
def test_a_filesystem_mounted_below_the_project_is_refused(project: Path) -> None:
    (project / "mnt").mkdir()
    script = (
        f"mount -t tmpfs none {project}/mnt && "
        f"exec {sys.executable} -m stockade run --review -- /bin/true"
    )
    # in a private mount namespace of its own: nothing is mounted on the host
    result = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", script],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 125, result.stderr
    assert "mounted below it" in result.stderr


def test_the_kernel_says_why_it_refuses_a_layer(project: Path) -> None:
    from stockade.sandbox.overlay import Layer, LayerUnavailable

    changeset = Changeset.create(project, {})
    try:
        (changeset.upper).rmdir()  # an upper dir the kernel cannot resolve
        with pytest.raises(LayerUnavailable, match="upper") as raised:
            Layer.create(project, changeset.directory, None)
        assert "cannot mount the review layer" in raised.value.message
    finally:
        changeset.remove()


def test_mcp_review_keeps_the_agents_changes_for_the_cli(project: Path) -> None:
    import anyio

    from tests.mcp_support import connect, text

    make_project(project)
    before = tree(project)

    async def main() -> None:
        async with connect(project, args=["--review", "--yolo"]) as client:
            result = await client.call_tool("bash", {"command": "echo agent > made.txt"})
            assert text(result).startswith("exit code: 0")
            refused = await client.call_tool("write_file", {"path": "x.txt", "content": "x"})
            assert refused.is_error and "review workspace" in text(refused)

    anyio.run(main)
    assert tree(project) == before
    [entry] = json.loads(run_cli("changes", "--json", cwd=project).stdout)["changesets"]
    assert [(c["path"], c["kind"]) for c in entry["changes"]] == [("made.txt", "added")]
    assert entry["state"] == "finished"
    assert run_cli("changes", "apply", entry["id"], cwd=project).returncode == 0
    assert (project / "made.txt").read_text() == "agent\n"
