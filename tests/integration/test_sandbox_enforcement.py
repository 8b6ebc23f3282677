"""Real sandboxes, really trying the forbidden thing: writes outside, masked secrets, the
network, host processes, secret env, protected paths. Every test runs under each backend that
claims the protection (bwrap and Landlock), as root and as an unprivileged user."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.runner import Sandbox, run
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import NetworkMode, PolicyRequest
from tests.netsupport import tcp_listener

pytestmark = pytest.mark.integration


@pytest.fixture
def home(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake home with real-looking secrets, visible inside the jail (not below /tmp)."""
    path = visible_dir / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_ed25519").write_text("PRIVATE KEY MATERIAL\n")
    (path / ".aws").mkdir()
    (path / ".aws" / "credentials").write_text("aws_secret_access_key=abc\n")
    (path / ".netrc").write_text("machine example.com password hunter2\n")
    (path / "notes.txt").write_text("public\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def src(project: Path) -> Path:
    """A subdirectory of the project, for tests that only need *a* writable place."""
    path = project / "src"
    path.mkdir()
    return path


def sh(script: str, backend: str = "bwrap", **kwargs: object) -> tuple[int, str, str]:
    result = run(["/bin/sh", "-c", script], backend=backend, **kwargs)  # type: ignore[arg-type]
    assert result.posture.confined and result.posture.proven
    assert result.posture.backend == backend
    return result.exit_code, result.stdout, result.stderr


def test_write_inside_project_succeeds_and_persists(src: Path, backend: str) -> None:
    code, _, err = sh("cd src && echo hello > made.txt && mkdir -p a/b && touch a/b/c", backend)
    assert code == 0, err
    assert (src / "made.txt").read_text() == "hello\n"
    assert (src / "a" / "b" / "c").exists()


def test_bwrap_allows_new_top_level_entries(project: Path) -> None:
    code, _, err = sh("echo hello > made-inside.txt && mkdir top")
    assert code == 0, err
    assert (project / "made-inside.txt").read_text() == "hello\n"


def test_write_outside_every_root_fails(
    project: Path, home: Path, visible_dir: Path, backend: str
) -> None:
    _code, _, err = sh(
        f"echo x > {home}/pwned.txt; echo y > {visible_dir}/pwned.txt; exit 0", backend
    )
    assert not (home / "pwned.txt").exists()
    assert not (visible_dir / "pwned.txt").exists()
    assert ("Read-only file system" if backend == "bwrap" else "Permission denied") in err


def test_masked_secrets_are_empty_and_public_files_readable(
    project: Path, home: Path, backend: str
) -> None:
    _code, out, _ = sh(
        "ls -A ~/.ssh ~/.aws; cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc 2>&1; "
        "cat ~/notes.txt",
        backend,
    )
    assert "PRIVATE KEY" not in out
    assert "aws_secret_access_key" not in out
    assert "hunter2" not in out
    assert "public" in out


def test_masked_directory_cannot_be_written_either(project: Path, home: Path, backend: str) -> None:
    code, _, _ = sh("echo evil > ~/.ssh/authorized_keys", backend)
    assert code != 0
    assert not (home / ".ssh" / "authorized_keys").exists()


def test_read_allow_within_deny_and_write_deny_within_allow(
    src: Path, project: Path, visible_dir: Path, backend: str
) -> None:
    config = visible_dir / "config"
    (config / "public").mkdir(parents=True)
    (config / "token").write_text("SECRET\n")
    (config / "public" / "settings").write_text("visible\n")
    (project / "vendor").mkdir()
    (project / "vendor" / "lib.py").write_text("original\n")
    request = PolicyRequest(
        project=project,
        cwd=project,
        read_deny=(config,),
        read_allow_within_deny=(config / "public",),
        write_deny_within_allow=(project / "vendor",),
    )
    with Sandbox(request, backend=backend) as sandbox:
        result = sandbox.run(
            [
                "/bin/sh",
                "-c",
                f"cat {config}/token; cat {config}/public/settings; "
                "echo changed > vendor/lib.py; echo ok > src/src.txt",
            ]
        )
    assert "SECRET" not in result.stdout
    assert "visible" in result.stdout
    assert (project / "vendor" / "lib.py").read_text() == "original\n"
    assert (src / "src.txt").read_text() == "ok\n"


def test_protected_paths_cannot_be_changed_and_planted_ones_are_moved_aside(
    project: Path, backend: str
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".stockade").mkdir()
    (project / ".stockade" / "settings.toml").write_text("[sandbox]\n")
    before = set(os.listdir(project))
    script = (
        "echo evil > .git/hooks/pre-commit; "
        "echo '[core] fsmonitor = evil' >> .git/config; "
        "echo x >> .stockade/settings.toml; "
        'echo \'{"mcpServers": {"x": {"command": "evil"}}}\' > .mcp.json; '
        "mkdir .vscode && echo '{\"editor.tabSize\": 2}' > .vscode/settings.json; exit 0"
    )
    sh(script, backend)
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    assert (project / ".stockade" / "settings.toml").read_text() == "[sandbox]\n"
    assert not (project / ".mcp.json").exists(), "a planted MCP server was left in place"
    # ordinary editor settings are project data: kept
    assert (project / ".vscode" / "settings.json").exists()
    assert set(os.listdir(project)) == before | {".vscode"}


def test_protected_paths_cannot_be_swapped_by_renaming_their_parent(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sh("mv .git .git-old || exit 0; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit")
    assert (project / ".git" / "HEAD").exists(), "the .git directory was moved away"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert not (project / ".git-old").exists()


def test_git_works_inside_the_sandbox(project: Path, backend: str) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    code, out, err = sh(
        "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b "
        "GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; "
        "echo one > f.txt && git add f.txt && git commit -q -m first && "
        "git branch feature && git status --short && git log --oneline | wc -l && git branch",
        backend,
    )
    assert code == 0, err
    assert "feature" in out
    log = subprocess.run(
        ["git", "-C", str(project), "log", "--oneline"], capture_output=True, text=True, check=True
    )
    assert "first" in log.stdout


def test_symlink_inside_project_pointing_outside_gives_no_write(
    src: Path, visible_dir: Path, backend: str
) -> None:
    outside = visible_dir / "outside"
    outside.mkdir()
    (src / "link").symlink_to(outside)
    code, _, _ = sh("echo x > src/link/escaped.txt", backend)
    assert code != 0
    assert not (outside / "escaped.txt").exists()


def test_session_tmp_is_private_writable_and_exported(project: Path, backend: str) -> None:
    _code, out, err = sh(
        'echo data > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$PIP_CACHE_DIR"'
        "; echo scratch > /tmp/stockade-test-x",
        backend,
    )
    lines = out.splitlines()
    assert lines[0] == "data", err
    assert "stockade-session-" in lines[1]
    # bwrap: /tmp is a private tmpfs (the write succeeds and vanishes); Landlock: denied
    assert not Path("/tmp/stockade-test-x").exists()


def test_secret_environment_is_dropped_and_passthrough_honoured(
    project: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_leak")
    monkeypatch.setenv("DEPLOY_PASSWORD", "pw")
    monkeypatch.setenv("HARMLESS_SETTING", "fine")
    monkeypatch.setenv("LC_PAPER", "de_DE.UTF-8")
    _code, out, _ = sh("env", backend)
    assert "ghp_leak" not in out and "DEPLOY_PASSWORD" not in out
    assert "LC_PAPER=de_DE.UTF-8" in out  # on the allow-list
    assert "HARMLESS_SETTING" not in out  # the default environment is an allow-list
    with Sandbox.for_project(
        project, env_passthrough=["DEPLOY_PASSWORD"], backend=backend
    ) as sandbox:
        assert "DEPLOY_PASSWORD=pw" in sandbox.run(["env"]).stdout


@pytest.fixture
def host_listener() -> Iterator[int]:
    with tcp_listener(b"hello-from-host\n") as port:
        yield port


PY_CONNECT = (
    "import socket,sys\n"
    "try:\n"
    "    s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=3)\n"
    "    print('CONNECTED', s.recv(100))\n"
    "except OSError as e:\n"
    "    print('REFUSED', e)\n"
)


def test_network_denied_cannot_reach_host_loopback(
    project: Path, host_listener: int, backend: str
) -> None:
    result = run(["/usr/bin/python3", "-c", PY_CONNECT, str(host_listener)], backend=backend)
    assert "REFUSED" in result.stdout, result.stdout + result.stderr
    assert result.posture.network.startswith("denied")


def test_network_denied_refuses_udp_without_a_network_namespace(project: Path) -> None:
    script = (
        "import socket\n"
        "try:\n"
        "    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "    print('UDP')\n"
        "except OSError as e:\n"
        "    print('REFUSED', e)\n"
    )
    result = run(["/usr/bin/python3", "-c", script], backend="landlock")
    assert "REFUSED" in result.stdout, result.stdout + result.stderr


def test_network_allow_shares_the_host_network(
    project: Path, host_listener: int, backend: str
) -> None:
    result = run(
        ["/usr/bin/python3", "-c", PY_CONNECT, str(host_listener)], network=NetworkMode.ALLOW
    )
    assert "CONNECTED" in result.stdout, result.stdout + result.stderr


def test_host_processes_are_invisible(project: Path) -> None:
    """bwrap only: the Landlock backend has no PID namespace and does not claim this."""
    marker = f"stockade-test-sentinel-{os.getpid()}"
    sentinel = subprocess.Popen(["/bin/sh", "-c", "sleep 30", marker])
    try:
        _code, out, _ = sh(
            "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '; ls /proc | grep -c '^[0-9]'"
        )
        assert marker not in out
        assert int(out.split()[-1]) < 10
    finally:
        sentinel.kill()
        sentinel.wait()


def test_exit_codes_and_signals_propagate(project: Path, backend: str) -> None:
    assert sh("exit 7", backend)[0] == 7
    assert sh("kill -TERM $$", backend)[0] == 128 + 15
    if backend == "bwrap":  # env(1) in the jail reports a missing program as 127
        assert run(["/nonexistent-program"]).exit_code == 127


def test_timeout_kills_the_whole_tree(project: Path, backend: str) -> None:
    marker = f"stockade-timeout-test-{backend}-{os.getpid()}"
    sleeper = f"sh -c 'sleep 60' {marker}"
    result = run(
        ["/bin/sh", "-c", f"({sleeper} & {sleeper} & wait) ; echo done"],
        timeout=0.5,
        backend=backend,
    )
    assert result.timed_out and result.exit_code == 124
    assert "done" not in result.stdout
    leftovers = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert leftovers.stdout.strip() == "", "processes survived the timeout"


def test_output_is_bounded_and_fully_saved(project: Path, backend: str) -> None:
    result = run(
        ["/bin/sh", "-c", "seq 1 200000"],
        limits=Limits(output_bytes_per_stream=4096),
        backend=backend,
    )
    assert result.truncated
    assert len(result.stdout) < 4096 + 300
    assert result.stdout.startswith("1\n2\n") and result.stdout.endswith("200000\n")
    assert result.stdout_path is not None
    assert result.stdout_path.read_text().count("\n") == 200000


def test_stdin_is_passed_when_given(project: Path) -> None:
    assert run(["cat"], input=b"piped\n").stdout == "piped\n"
    assert run(["cat"]).stdout == ""  # no input: /dev/null, never our terminal


def test_a_git_worktree_runs_and_its_gitdir_pointer_is_protected(
    visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    main = visible_dir / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(
        ["git", "-C", str(main), "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
         "--allow-empty", "-m", "root"],
        check=True,
    )  # fmt: skip
    worktree = visible_dir / "wt"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(worktree)], check=True)
    monkeypatch.chdir(worktree)
    pointer = (worktree / ".git").read_text()
    _code, out, err = sh("git status --short; echo 'gitdir: /elsewhere' > .git; echo done")
    assert "done" in out, err
    assert (worktree / ".git").read_text() == pointer
