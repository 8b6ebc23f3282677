"""The guard's judges, git config parsing, quarantine and the repository index - pure logic on
real files (no jail): what runs code on the host, what is ordinary data."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stockade.sandbox import gitconfig, judges, quarantine
from stockade.sandbox.repo_index import RepoIndex
from stockade.vocabulary import (
    CLAUDE_SETTINGS,
    GEMINI_SETTINGS,
    IDEA,
    MCP_JSON,
    PYTHON_SITE,
    VSCODE,
)

CONFIGS = [
    "[core]\n\tbare = false\n\tfsmonitor = /evil\n",
    "[core] fsmonitor = evil\n",
    '[alias]\n  x = "!sh -c \\"echo hi\\"" ; comment\n  y = log\n',
    '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = evil\\\n  continued\n',
    '[Remote "Origin"]\n\turl = ext::sh -c evil\n',
    '[url "ext::sh -c x"]\n\tinsteadOf = https://\n',
    "[pager]\n\tlog = false\n\tdiff = evil\n",
    "[core.Sub]\n\tfoo = bar # c\n",
    '[include]\n\tpath = ../x\n[includeIf "gitdir:/x/"]\n\tpath = y\n',
    '[credential]\n\thelper = store\n[credential "https://x"]\n\thelper = !evil\n',
    '[core]\n\tpager\n\teditor = "vim  -u"  \n',
]


@pytest.mark.parametrize("text", CONFIGS)
def test_the_parser_reads_what_git_reads(text: str, tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.write_text(text)
    listed = subprocess.run(
        ["git", "config", "--file", str(config), "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    ours = [f"{e.key}={e.value or ''}" for e in gitconfig.parse(text)]
    theirs = [line if "=" in line else f"{line}=" for line in listed]
    assert [s.lower() for s in ours] == [s.lower() for s in theirs]


def test_exec_capable_entries_and_ordinary_ones() -> None:
    text = "".join(CONFIGS)
    keys = {e.entry.key for e in gitconfig.exec_entries(gitconfig.parse(text))}
    assert {"core.fsmonitor", "alias.x", "filter.lfs.smudge", "remote.Origin.url"} <= keys
    assert {"pager.diff", "include.path", "credential.https://x.helper", "core.editor"} <= keys
    assert not keys & {"core.bare", "alias.y", "pager.log", "credential.helper", "core.sub.foo"}
    assert not gitconfig.exec_entries(gitconfig.parse("[core]\n\tfsmonitor = false\n"))


def test_removing_entries_keeps_the_rest_valid(tmp_path: Path) -> None:
    text = "[core] fsmonitor = evil\n[user]\n\tname = kept\n[alias]\n\tx = !evil \\\n  more\n"
    found = gitconfig.exec_entries(gitconfig.parse(text))
    cleaned = gitconfig.without(text, [f.entry for f in found])
    config = tmp_path / "config"
    config.write_text(cleaned)
    listed = subprocess.run(
        ["git", "config", "--file", str(config), "--list"], capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.splitlines() == ["user.name=kept"]


@pytest.mark.parametrize(
    ("judge", "name", "content", "runs"),
    [
        (MCP_JSON, ".mcp.json", '{"mcpServers": {"a": {"command": "x"}}}', True),
        (MCP_JSON, ".mcp.json", '{"mcpServers": {"a": {"url": "https://x"}}}', False),
        (CLAUDE_SETTINGS, "settings.json", '{"hooks": {}, "model": "x"}', False),
        (CLAUDE_SETTINGS, "settings.json", '{"hooks": {"Stop": [{"x": 1}]}}', True),
        (CLAUDE_SETTINGS, "settings.json", '{"permissions": {"deny": ["Bash(rm:*)"]}}', False),
        (CLAUDE_SETTINGS, "settings.json", '{"permissions": {"allow": ["Bash(*)"]}}', True),
        (GEMINI_SETTINGS, "settings.json", '{"tools": {"discoveryCommand": "x"}}', True),
        (VSCODE, "settings.json", '// jsonc\n{"editor.tabSize": 2,}', False),
        (VSCODE, "settings.json", '{"python.defaultInterpreterPath": "/x"}', True),
        (VSCODE, "settings.json", '{"terminal.integrated.env.linux": {"A": "1"}}', True),
        (VSCODE, "tasks.json", '{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}', True),
        (VSCODE, "tasks.json", '{"tasks": [{"label": "build", "command": "make"}]}', False),
        (VSCODE, "launch.json", '{"configurations": []}', False),
        (IDEA, "watcherTasks.xml", "<project/>", True),
        (IDEA, "workspace.xml", "<component name='ProjectStartupSharedConfiguration'/>", True),
        (IDEA, "misc.xml", "<project version='4'/>", False),
        (PYTHON_SITE, "evil.pth", "import os", True),
        (PYTHON_SITE, "usercustomize.py", "", True),
        (PYTHON_SITE, "six.py", "", False),
        (MCP_JSON, ".mcp.json", "{not json", True),  # unreadable: treated as code
    ],
)
def test_file_judges(tmp_path: Path, judge: str, name: str, content: str, runs: bool) -> None:
    path = tmp_path / name
    path.write_text(content)
    assert bool(judges.judge_file(judge, path)) is runs


def test_judges_never_block_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / ".mcp.json"
    os.mkfifo(fifo)
    assert judges.judge_file(MCP_JSON, fifo)


def test_quarantine_moves_aside_and_restores(tmp_path: Path) -> None:
    planted = tmp_path / "hooks" / "pre-commit"
    planted.parent.mkdir()
    planted.write_text("evil\n")
    record = quarantine.move_aside(planted, "a hook")
    assert not planted.exists()
    assert [r.id for r in quarantine.records()] == [record.id]
    planted.write_text("new\n")
    with pytest.raises(Exception, match="exists"):
        quarantine.restore(record.id)
    quarantine.restore(record.id, replace=True)
    assert planted.read_text() == "evil\n"
    assert quarantine.records() == []


def test_quarantine_keeps_symlinks_as_symlinks(tmp_path: Path) -> None:
    link = tmp_path / "config"
    link.symlink_to("/etc/passwd")
    record = quarantine.move_aside(link, "a link")
    assert record.stored.is_symlink() and os.readlink(record.stored) == "/etc/passwd"


def test_repo_index_finds_new_repositories_and_rereads_only_what_changed(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "c").mkdir()
    index = RepoIndex([tmp_path])
    assert index.refresh().git_entries == ()
    (tmp_path / "a" / "b" / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "c" / ".git").write_text("gitdir: ../a\n")
    found = set(index.refresh().git_entries)
    assert found == {tmp_path / "a" / "b" / "repo" / ".git", tmp_path / "c" / ".git"}


def test_repo_index_reports_what_it_cannot_list(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can list any directory")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    hidden.chmod(0o300)
    try:
        assert hidden in RepoIndex([tmp_path]).refresh().unlistable
    finally:
        hidden.chmod(0o755)


def test_repo_index_with_inotify_watches_finds_what_changed(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    index = RepoIndex([tmp_path])
    index.start()  # first command: the full scan
    assert index.refresh().git_entries == ()
    index.start()  # second command: watch every directory
    assert index.refresh().git_entries == ()
    (deep / ".git").mkdir()
    assert index.refresh().git_entries == (deep / ".git",)
    (deep / ".git").rmdir()
    (tmp_path / "a" / "new" / "x").mkdir(parents=True)
    (tmp_path / "a" / "new" / "x" / ".git").write_text("gitdir: /elsewhere\n")
    assert index.refresh().git_entries == (tmp_path / "a" / "new" / "x" / ".git",)
    index.close()
