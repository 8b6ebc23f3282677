"""Nothing planted: code a command leaves for the host to run later is gone when it ends.

Each test lets a real jail (bwrap and Landlock) write what a host program would run - git's
config and hooks wherever git finds them, agent and editor config, dependency stores, the
home directory's startup files - and then checks, from the host side, the exact file that
program would read. The guard's quarantine must hold what it took."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stockade.runner import RunResult, Sandbox
from stockade.sandbox import quarantine
from stockade.sandbox.policy import PolicyRequest

pytestmark = pytest.mark.integration

FSMONITOR = "git config core.fsmonitor 'touch /var/tmp/pwned'"


def jail(project: Path, script: str, backend: str, **request: object) -> RunResult:
    policy = PolicyRequest(project=project, cwd=project, **request)  # type: ignore[arg-type]
    with Sandbox(policy, backend=backend) as sandbox:
        result = sandbox.run(["/bin/sh", "-c", script])
    assert result.posture.confined and result.posture.backend == backend
    return result


def host_git_config(repository: Path, key: str) -> str:
    """What the host's git would use for ``key`` in ``repository``."""
    found = subprocess.run(
        ["git", "-C", str(repository), "config", "--get", key],
        capture_output=True,
        text=True,
        check=False,
    )
    return found.stdout.strip()


def git_init(path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(path)], check=True)


def quarantined(path: Path) -> bool:
    return any(record.original == path for record in quarantine.records())


# -- 16.1 git runs what the jail wrote ---------------------------------------------------------


def test_a_repository_created_inside_keeps_no_fsmonitor_and_no_hooks(
    project: Path, backend: str
) -> None:
    result = jail(
        project,
        f"git init -q && {FSMONITOR} && git config alias.st '!touch /var/tmp/pwned' && "
        "git config user.name kept && printf '#!/bin/sh\\n' > .git/hooks/pre-commit && "
        "chmod +x .git/hooks/pre-commit",
        backend,
    )
    assert result.exit_code == 0, result.stderr
    assert host_git_config(project, "core.fsmonitor") == ""
    assert host_git_config(project, "alias.st") == ""
    assert host_git_config(project, "user.name") == "kept", "ordinary config was lost"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert (project / ".git" / "hooks" / "pre-commit.sample").exists()
    assert quarantined(project / ".git" / "config")
    assert quarantined(project / ".git" / "hooks" / "pre-commit")
    assert "stockade: cleaned" in result.stderr and "stockade: quarantined" in result.stderr
    assert {f.action for f in result.guard} == {"cleaned", "quarantined"}


def test_an_existing_repositorys_hooks_and_config_stay_as_they_were(
    project: Path, backend: str
) -> None:
    git_init(project)
    config = (project / ".git" / "config").read_bytes()
    result = jail(
        project,
        f"{FSMONITOR}; echo evil > .git/hooks/post-checkout; rm -f .git/hooks/*.sample; exit 0",
        backend,
    )
    assert (project / ".git" / "config").read_bytes() == config
    assert not (project / ".git" / "hooks" / "post-checkout").exists()
    assert (project / ".git" / "hooks" / "pre-commit.sample").exists()
    if backend == "landlock":  # restored after the command, and said so
        assert "stockade: restored" in result.stderr


def test_a_nested_repository_planted_anywhere_is_cleaned(project: Path, backend: str) -> None:
    result = jail(
        project,
        f"mkdir -p vendor/deep/lib && cd vendor/deep/lib && git init -q && {FSMONITOR} && "
        "echo x > .git/hooks/post-merge",
        backend,
    )
    assert result.exit_code == 0, result.stderr
    nested = project / "vendor" / "deep" / "lib"
    assert host_git_config(nested, "core.fsmonitor") == ""
    assert not (nested / ".git" / "hooks" / "post-merge").exists()


def test_a_submodules_git_dir_is_protected(project: Path, backend: str) -> None:
    git_init(project)
    module = project / ".git" / "modules" / "lib"
    module.mkdir(parents=True)
    (module / "HEAD").write_text("ref: refs/heads/main\n")
    (module / "config").write_text("[core]\n\tbare = false\n")
    (module / "hooks").mkdir()
    jail(
        project,
        "printf '[core]\\n\\tfsmonitor = touch /var/tmp/pwned\\n' >> .git/modules/lib/config; "
        "echo evil > .git/modules/lib/hooks/post-checkout; "
        "mkdir -p .git/modules/new/hooks && echo x > .git/modules/new/HEAD && "
        "printf '[core]\\n\\tpager = evil\\n' > .git/modules/new/config; exit 0",
        backend,
    )
    assert "fsmonitor" not in (module / "config").read_text()
    assert not (module / "hooks" / "post-checkout").exists()
    assert "pager" not in (project / ".git" / "modules" / "new" / "config").read_text()


def test_commondir_and_gitdir_pointers_cannot_redirect_git(project: Path, backend: str) -> None:
    git_init(project)
    planted = (
        "mkdir -p elsewhere/hooks && printf '[core]\\n\\tfsmonitor = evil\\n' > elsewhere/config"
        " && echo ../elsewhere > .git/commondir; "
        "mkdir -p sub other && echo 'ref: refs/heads/main' > other/HEAD && "
        "printf '[core]\\n\\tfsmonitor = evil\\n' > other/config && "
        "echo 'gitdir: ../other' > sub/.git; exit 0"
    )
    jail(project, planted, backend)
    assert not (project / ".git" / "commondir").exists()
    assert host_git_config(project, "core.fsmonitor") == ""
    assert "fsmonitor" not in (project / "other" / "config").read_text()
    assert host_git_config(project / "sub", "core.fsmonitor") == ""


def test_hooks_path_into_the_work_tree_is_protected(project: Path, backend: str) -> None:
    git_init(project)
    subprocess.run(["git", "-C", str(project), "config", "core.hooksPath", ".husky"], check=True)
    jail(project, "mkdir -p .husky && echo 'touch /var/tmp/pwned' > .husky/pre-commit", backend)
    assert not (project / ".husky" / "pre-commit").exists()
    (project / ".husky").mkdir(exist_ok=True)
    jail(project, "echo 'touch /var/tmp/pwned' > .husky/pre-push; exit 0", backend)
    assert not (project / ".husky" / "pre-push").exists()


def test_gitmodules_with_a_command_url_is_cleaned(project: Path, backend: str) -> None:
    git_init(project)
    jail(
        project,
        "cat > .gitmodules <<'EOF'\n"
        '[submodule "x"]\n\tpath = x\n\turl = ext::sh -c touch% /var/tmp/pwned\n'
        '[submodule "y"]\n\tpath = y\n\turl = https://example.com/y.git\nEOF\n',
        backend,
    )
    text = (project / ".gitmodules").read_text()
    assert "ext::" not in text
    assert "https://example.com/y.git" in text, "the ordinary submodule was lost"


def test_a_protected_symlink_cannot_be_replaced(project: Path, backend: str) -> None:
    git_init(project)
    hooks = project / ".git" / "hooks"
    for sample in hooks.iterdir():
        sample.unlink()
    hooks.rmdir()
    (project / "shared-hooks").mkdir()
    hooks.symlink_to("../shared-hooks")
    jail(
        project,
        "rm .git/hooks; mkdir .git/hooks && echo evil > .git/hooks/pre-commit; "
        "echo evil > shared-hooks/pre-push; exit 0",
        backend,
    )
    assert hooks.is_symlink() and os.readlink(hooks) == "../shared-hooks"
    assert not (project / "shared-hooks" / "pre-push").exists()


# -- 16.2 other tools run what the jail wrote --------------------------------------------------

AGENT_CONFIG = {
    ".claude/settings.json": '{"hooks": {"Stop": [{"hooks": [{"command": "evil"}]}]}}',
    ".cursor/mcp.json": '{"mcpServers": {"x": {"command": "evil"}}}',
    ".mcp.json": '{"mcpServers": {"x": {"command": "evil"}}}',
    ".gemini/settings.json": '{"toolDiscoveryCommand": "evil"}',
    ".vscode/tasks.json": '{"tasks": [{"command": "evil", "runOptions": {"runOn": "folderOpen"}}]}',
    ".idea/watcherTasks.xml": "<project><component name='ProjectTasksOptions'/></project>",
    ".envrc": "touch /var/tmp/pwned",
    ".devcontainer/devcontainer.json": '{"initializeCommand": "evil"}',
}


def test_agent_and_editor_config_that_runs_commands_is_moved_aside(
    project: Path, backend: str
) -> None:
    script = "; ".join(
        f"mkdir -p $(dirname {name}) && printf '%s' '{content}' > {name}"
        for name, content in AGENT_CONFIG.items()
    )
    script += "; printf '{\"editor.tabSize\": 2}' > .vscode/settings.json"
    result = jail(project, script, backend)
    for name in AGENT_CONFIG:
        assert not (project / name).exists(), name
    assert (project / ".vscode" / "settings.json").exists(), "ordinary settings are kept"
    assert len([f for f in result.guard if f.action == "quarantined"]) == len(AGENT_CONFIG)


def test_existing_agent_config_is_read_only(project: Path, backend: str) -> None:
    (project / ".vscode").mkdir()
    (project / ".vscode" / "settings.json").write_text("{}\n")
    jail(
        project,
        'echo \'{"python.defaultInterpreterPath": "evil"}\' > .vscode/settings.json; exit 0',
        backend,
    )
    assert (project / ".vscode" / "settings.json").read_text() == "{}\n"


def test_the_hosts_dependency_stores_are_read_only(
    project: Path, visible_dir: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cargo = visible_dir / "cargo-home"
    source = cargo / "registry" / "src" / "index.crates.io-1949cf8c6b5b557f" / "dep-1.0.0"
    source.mkdir(parents=True)
    (source / "build.rs").write_text("fn main() {}\n")
    cache = cargo / "registry" / "cache" / "index.crates.io-1949cf8c6b5b557f"
    cache.mkdir(parents=True)
    gomod = visible_dir / "gomod" / "example.com" / "m@v1.0.0"
    gomod.mkdir(parents=True)
    (gomod / "m.go").write_text("package m\n")
    monkeypatch.setenv("CARGO_HOME", str(cargo))
    monkeypatch.setenv("GOMODCACHE", str(visible_dir / "gomod"))
    result = jail(
        project,
        f"echo 'fn main() {{ evil() }}' > {source}/build.rs; echo x > {cache}/dep-2.0.0.crate; "
        f"echo evil > {gomod}/m.go; exit 0",
        backend,
    )
    assert (source / "build.rs").read_text() == "fn main() {}\n"
    assert not (cache / "dep-2.0.0.crate").exists()
    assert (gomod / "m.go").read_text() == "package m\n"
    assert "read-only store" in result.stderr and 'toolchains = ["rust"]' in result.stderr


def test_a_toolchain_preset_gives_the_jail_its_own_cargo_home(
    visible_cache: Path,
    project: Path,
    visible_dir: Path,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    host = visible_dir / "cargo-home"
    host.mkdir()
    (host / "config.toml").write_text("[net]\nretry = 3\n")
    monkeypatch.setenv("CARGO_HOME", str(host))
    result = jail(
        project,
        'mkdir -p "$CARGO_HOME/registry" && echo x > "$CARGO_HOME/registry/planted" && '
        'echo "$CARGO_HOME" && cat "$CARGO_HOME/config.toml"',
        backend,
        toolchains=("rust",),
    )
    assert result.exit_code == 0, result.stderr
    store = Path(result.stdout.splitlines()[0])
    assert host not in store.parents and store != host
    assert "retry = 3" in result.stdout, "the host's cargo config was not carried over"
    assert os.listdir(host) == ["config.toml"]
    assert (store / "registry" / "planted").exists(), "the jail's cache did not persist"


# -- 16.3 the home directory as a writable root ------------------------------------------------


@pytest.fixture
def home(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = visible_dir / "home"
    path.mkdir()
    (path / ".bashrc").write_text("# the user's\n")
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.chdir(path)
    return path


HOME_PLANTS = (
    ".zshenv",
    ".bash_login",
    ".bash_logout",
    ".config/fish/config.fish",
    ".ssh/authorized_keys",
    ".local/bin/ls",
    ".local/lib/python3.11/site-packages/evil.pth",
    ".config/autostart/evil.desktop",
    ".config/systemd/user/evil.service",
    ".aws/config",
)


def test_a_writable_home_keeps_its_startup_files(home: Path, backend: str) -> None:
    script = "echo evil >> .bashrc; " + "; ".join(
        f"mkdir -p $(dirname {name}) && echo evil > {name}" for name in HOME_PLANTS
    )
    script += "; mkdir -p .config/git && printf '[core]\\n\\tpager = evil\\n' > .config/git/config"
    script += "; echo notes > notes.txt; exit 0"
    jail(home, script, backend, allow_writable_home=True)
    assert (home / ".bashrc").read_text() == "# the user's\n"
    for name in HOME_PLANTS:
        assert not (home / name).exists(), name
    assert "pager" not in (home / ".config" / "git" / "config").read_text()
    assert (home / "notes.txt").read_text() == "notes\n", "ordinary files in home are kept"


def test_a_writable_root_inside_home_keeps_the_startup_files_below_it(
    home: Path, backend: str
) -> None:
    """``--writable ~/.config`` holds startup files too: they stay protected in every command
    the Sandbox runs, not only in the policy it resolved first."""
    config = home / ".config"
    (config / "fish").mkdir(parents=True)
    project = home.parent / "project"
    project.mkdir()
    script = (
        f"echo evil > {config}/fish/config.fish; "
        f"mkdir -p {config}/autostart && echo evil > {config}/autostart/evil.desktop; "
        f"echo notes > {config}/notes.txt; exit 0"
    )
    jail(project, script, backend, writable=(config,))
    assert not (config / "fish" / "config.fish").exists()
    assert not (config / "autostart" / "evil.desktop").exists()
    assert (config / "notes.txt").read_text() == "notes\n", "ordinary files there are kept"


def test_hooks_path_from_the_users_git_config_is_protected(home: Path, backend: str) -> None:
    (home / ".gitconfig").write_text("[core]\n\thooksPath = .husky\n")
    project = home.parent / "project"
    git_init(project)
    (project / ".husky").mkdir()
    jail(project, "echo 'touch /var/tmp/pwned' > .husky/pre-commit; exit 0", backend)
    assert not (project / ".husky" / "pre-commit").exists()


# -- while a command runs, and after stockade itself was killed --------------------------------


def test_a_hook_planted_by_a_long_running_command_goes_while_it_runs(
    project: Path, backend: str
) -> None:
    from tests.process_support import wait_until

    config = project / ".git" / "config"
    with Sandbox(PolicyRequest(project=project, cwd=project), backend=backend) as sandbox:
        command = sandbox.start(
            ["/bin/sh", "-c", f"git init -q && {FSMONITOR} && exec sleep 4242.63"]
        )
        seen = ""

        def cleaned() -> bool:
            nonlocal seen
            seen += command.read_new().stderr
            return config.exists() and "fsmonitor" not in config.read_text() and "cleaned" in seen

        assert wait_until(cleaned), seen
        assert command.running, "the guard should act while the command still runs"
        command.kill()


def test_a_killed_stockade_leaves_no_planted_code(project: Path, backend: str) -> None:
    import signal
    import sys

    from tests.process_support import processes_with, wait_until

    process = subprocess.Popen(
        [sys.executable, "-m", "stockade", "run", "--backend", backend, "--", "/bin/sh", "-c",
         f"git init -q && {FSMONITOR} && echo ready && exec sleep 4242.64"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    for pid in processes_with("sleep 4242.64"):  # landlock: no PID namespace to end it
        os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not processes_with("sleep 4242.64"))
    # the next start of stockade finishes the guard of the killed run (if the poller had not)
    with Sandbox(PolicyRequest(project=project, cwd=project), backend=backend):
        pass
    assert host_git_config(project, "core.fsmonitor") == ""
