"""Real sandboxes, really trying the forbidden thing: writes outside, masked secrets, the
network, host processes, secret env, protected paths. Run as root and as an unprivileged user."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.runner import Sandbox, run
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import NetworkMode, PolicyRequest

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


def sh(script: str, **kwargs: object) -> tuple[int, str, str]:
    result = run(["/bin/sh", "-c", script], **kwargs)  # type: ignore[arg-type]
    assert result.posture.confined and result.posture.proven
    return result.exit_code, result.stdout, result.stderr


def test_write_inside_project_succeeds_and_persists(project: Path) -> None:
    code, _, err = sh("echo hello > made-inside.txt && mkdir -p a/b && touch a/b/c")
    assert code == 0, err
    assert (project / "made-inside.txt").read_text() == "hello\n"
    assert (project / "a" / "b" / "c").exists()


def test_write_outside_every_root_fails(project: Path, home: Path, visible_dir: Path) -> None:
    _code, _, err = sh(f"echo x > {home}/pwned.txt; echo y > {visible_dir}/pwned.txt; exit 0")
    assert not (home / "pwned.txt").exists()
    assert not (visible_dir / "pwned.txt").exists()
    assert "Read-only file system" in err


def test_masked_secrets_are_empty_and_public_files_readable(project: Path, home: Path) -> None:
    _code, out, _ = sh(
        "ls -A ~/.ssh ~/.aws; cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc 2>&1; "
        "cat ~/notes.txt"
    )
    assert "PRIVATE KEY" not in out
    assert "aws_secret_access_key" not in out
    assert "hunter2" not in out
    assert "public" in out


def test_masked_directory_cannot_be_written_either(project: Path, home: Path) -> None:
    code, _, _ = sh("echo evil > ~/.ssh/authorized_keys")
    assert code != 0
    assert not (home / ".ssh" / "authorized_keys").exists()


def test_read_allow_within_deny_and_write_deny_within_allow(
    project: Path, visible_dir: Path
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
    with Sandbox(request) as sandbox:
        result = sandbox.run(
            [
                "/bin/sh",
                "-c",
                f"cat {config}/token; cat {config}/public/settings; "
                "echo changed > vendor/lib.py; echo ok > src.txt",
            ]
        )
    assert "SECRET" not in result.stdout
    assert "visible" in result.stdout
    assert (project / "vendor" / "lib.py").read_text() == "original\n"
    assert (project / "src.txt").read_text() == "ok\n"


def test_protected_paths_cannot_be_written_or_created_and_leave_nothing(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    before = set(os.listdir(project))
    script = (
        "echo evil > .git/hooks/pre-commit; "
        "echo '[core] fsmonitor = evil' >> .git/config; "
        "echo evil > .bashrc; mkdir .vscode; "
        "mkdir -p .stockade && echo x > .stockade/settings.toml; "
        "echo '{}' > .mcp.json; exit 0"
    )
    sh(script)
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert "fsmonitor" not in (project / ".git" / "config").read_text()
    assert set(os.listdir(project)) == before, "placeholders or files were left behind"


def test_protected_paths_cannot_be_swapped_by_renaming_their_parent(project: Path) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sh(
        "mv .git .git-old || exit 0; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit"
    )
    assert (project / ".git" / "HEAD").exists(), "the .git directory was moved away"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert not (project / ".git-old").exists()


def test_git_works_inside_the_sandbox(project: Path) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    code, out, err = sh(
        "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b "
        "GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b; "
        "echo one > f.txt && git add f.txt && git commit -q -m first && "
        "git branch feature && git status --short && git log --oneline | wc -l && git branch"
    )
    assert code == 0, err
    assert "feature" in out
    log = subprocess.run(
        ["git", "-C", str(project), "log", "--oneline"], capture_output=True, text=True, check=True
    )
    assert "first" in log.stdout


def test_symlink_inside_project_pointing_outside_gives_no_write(
    project: Path, visible_dir: Path
) -> None:
    outside = visible_dir / "outside"
    outside.mkdir()
    (project / "link").symlink_to(outside)
    code, _, _ = sh("echo x > link/escaped.txt")
    assert code != 0
    assert not (outside / "escaped.txt").exists()


def test_session_tmp_is_private_writable_and_exported(project: Path) -> None:
    code, out, err = sh(
        'echo data > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "$PIP_CACHE_DIR"'
        " && echo scratch > /tmp/x && ls /tmp"
    )
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "data"
    assert "stockade-session-" in lines[1]
    assert not Path("/tmp/x").exists()


def test_secret_environment_is_dropped_and_passthrough_honoured(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_leak")
    monkeypatch.setenv("DEPLOY_PASSWORD", "pw")
    monkeypatch.setenv("HARMLESS_SETTING", "fine")
    _code, out, _ = sh("env")
    assert "ghp_leak" not in out and "DEPLOY_PASSWORD" not in out
    assert "HARMLESS_SETTING=fine" in out
    with Sandbox.for_project(project, env_passthrough=["DEPLOY_PASSWORD"]) as sandbox:
        assert "DEPLOY_PASSWORD=pw" in sandbox.run(["env"]).stdout


@pytest.fixture
def host_listener() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"hello-from-host\n")
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


PY_CONNECT = (
    "import socket,sys\n"
    "try:\n"
    "    s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=3)\n"
    "    print('CONNECTED', s.recv(100))\n"
    "except OSError as e:\n"
    "    print('REFUSED', e)\n"
)


def test_network_denied_cannot_reach_host_loopback(project: Path, host_listener: int) -> None:
    result = run(["/usr/bin/python3", "-c", PY_CONNECT, str(host_listener)])
    assert "REFUSED" in result.stdout, result.stdout + result.stderr
    assert result.posture.network == "denied"


def test_network_allow_shares_the_host_network(project: Path, host_listener: int) -> None:
    result = run(
        ["/usr/bin/python3", "-c", PY_CONNECT, str(host_listener)], network=NetworkMode.ALLOW
    )
    assert "CONNECTED" in result.stdout, result.stdout + result.stderr


def test_host_processes_are_invisible(project: Path) -> None:
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


def test_exit_codes_and_signals_propagate(project: Path) -> None:
    assert sh("exit 7")[0] == 7
    assert sh("kill -TERM $$")[0] == 128 + 15
    assert run(["/nonexistent-program"]).exit_code == 127


def test_timeout_kills_the_whole_tree(project: Path) -> None:
    marker = "stockade-timeout-test"
    result = run(["/bin/sh", "-c", f"(sleep 60 & sleep 60 & wait) ; echo {marker}"], timeout=0.5)
    assert result.timed_out and result.exit_code == 124
    assert marker not in result.stdout
    leftovers = subprocess.run(["pgrep", "-f", "sleep 60"], capture_output=True, text=True)
    assert leftovers.stdout.strip() == "", "processes survived the timeout"


def test_output_is_bounded_and_fully_saved(project: Path) -> None:
    result = run(["/bin/sh", "-c", "seq 1 200000"], limits=Limits(output_bytes_per_stream=4096))
    assert result.truncated
    assert len(result.stdout) < 4096 + 300
    assert result.stdout.startswith("1\n2\n") and result.stdout.endswith("200000\n")
    assert result.stdout_path is not None
    assert result.stdout_path.read_text().count("\n") == 200000


def test_stdin_is_passed_when_given(project: Path) -> None:
    assert run(["cat"], input=b"piped\n").stdout == "piped\n"
    assert run(["cat"]).stdout == ""  # no input: /dev/null, never our terminal
