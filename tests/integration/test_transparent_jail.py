"""A transparent jail: git, cargo and the host see nothing stockade made; what the sandbox
denies is explained. Judged from the host side (listings, host git, the files themselves),
under bwrap and Landlock, as root and as an unprivileged user."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.runner import Sandbox, run
from stockade.sandbox.policy import NetworkMode, PolicyRequest
from tests.process_support import processes_with, wait_until

pytestmark = pytest.mark.integration

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "a",
    "GIT_AUTHOR_EMAIL": "a@example.com",
    "GIT_COMMITTER_NAME": "a",
    "GIT_COMMITTER_EMAIL": "a@example.com",
}


@pytest.fixture
def git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)


def sh(script: str, backend: str, **kwargs: object) -> tuple[int, str, str]:
    result = run(["/bin/sh", "-c", script], backend=backend, **kwargs)  # type: ignore[arg-type]
    assert result.posture.confined and result.posture.backend == backend
    return result.exit_code, result.stdout, result.stderr


def host_git(project: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(project), *args], capture_output=True, text=True, check=True
    ).stdout


def stockade_run(backend: str, script: str) -> list[str]:
    """The argv of ``stockade run --backend BACKEND -- /bin/sh -c SCRIPT`` in a new process."""
    stockade = [sys.executable, "-m", "stockade", "run", "--backend", backend]
    return [*stockade, "--", "/bin/sh", "-c", script]


def everything_below(root: Path) -> set[str]:
    """Every path below ``root`` (what ``find`` shows), relative."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_git_init_add_commit_in_a_fresh_project(project: Path, backend: str, git_env: None) -> None:
    (project / "main.py").write_text("print('hi')\n")
    code, out, err = sh(
        "git init -q -b main && git add -A && git commit -q -m first && git status --porcelain",
        backend,
    )
    assert code == 0, err
    assert out == "", f"git status inside shows: {out!r}"
    assert "first" in host_git(project, "log", "--oneline")
    assert host_git(project, "status", "--porcelain") == ""
    # a second command in the same repository: its hooks and config now exist and are protected
    code, out, err = sh(
        "echo more >> main.py && git commit -qam second && git log --oneline", backend
    )
    assert code == 0, err
    assert "second" in out


def test_git_add_all_works_in_a_project_without_dotfiles(
    project: Path, backend: str, git_env: None
) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    (project / "a.txt").write_text("a\n")
    code, out, err = sh("git add -A && git commit -q -m one && git status --porcelain", backend)
    assert code == 0, err
    assert out == ""
    assert host_git(project, "ls-files").split() == ["a.txt"]


def test_new_top_level_files_work_on_every_backend(project: Path, backend: str) -> None:
    code, _, err = sh("echo hello > made.txt && mkdir top && touch top/x", backend)
    assert code == 0, err
    assert (project / "made.txt").read_text() == "hello\n"


def test_the_host_sees_nothing_new_while_a_command_runs(
    project: Path, backend: str, git_env: None
) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    (project / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(project), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(project), "commit", "-qm", "one"], check=True)
    before = everything_below(project)
    with Sandbox(PolicyRequest(project=project, cwd=project), backend=backend) as sandbox:
        command = sandbox.start(["/bin/sh", "-c", "echo ready; exec sleep 4242.61"])
        seen = ""

        def ready() -> bool:
            nonlocal seen
            seen += command.read_new().stdout
            return "ready" in seen

        assert wait_until(ready)
        assert everything_below(project) == before
        assert host_git(project, "status", "--porcelain") == ""
        command.kill()
    assert everything_below(project) == before


def test_nothing_is_left_after_stockade_is_killed(project: Path, backend: str) -> None:
    before = everything_below(project)
    home = Path(os.path.expanduser("~"))
    home_before = set(os.listdir(home))
    process = subprocess.Popen(
        stockade_run(backend, "echo ready; exec sleep 4242.62"),
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line == b"ready\n", process.stderr.read() if process.stderr else b""
        assert everything_below(project) == before
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    # bwrap: the PID namespace dies with its init; landlock: the run's launcher reads EOF on
    # its pipe from the dead stockade and kills every process of the run
    assert wait_until(lambda: not processes_with("sleep 4242.62"), timeout=30), [
        (pid, Path(f"/proc/{pid}/status").read_text()) for pid in processes_with("sleep 4242.62")
    ]
    assert everything_below(project) == before
    assert set(os.listdir(home)) - home_before <= {".cache", ".local"}


needs_cargo = pytest.mark.skipif(shutil.which("cargo") is None, reason="cargo is not installed")


@needs_cargo
@pytest.mark.parametrize("state", ["missing", "empty"])
def test_cargo_new_and_build_with_a_fresh_cargo_home(
    project: Path, visible_dir: Path, backend: str, state: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    cargo_home = visible_dir / "cargo-home"
    if state == "empty":
        cargo_home.mkdir()
    monkeypatch.setenv("CARGO_HOME", str(cargo_home))
    code, out, err = sh(
        "cargo new -q --vcs none app && cd app && cargo build -q && ./target/debug/app", backend
    )
    assert code == 0, err
    assert "Hello, world!" in out
    if state == "empty":
        assert os.listdir(cargo_home) == [], "the host's CARGO_HOME was written"
    else:
        assert not cargo_home.exists()


def test_a_read_only_project_runs_and_writes_fail_as_on_the_host(
    visible_dir: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can write any directory; run unprivileged")
    project = visible_dir / "readonly"
    project.mkdir()
    (project / "README").write_text("read me\n")
    project.chmod(0o555)
    monkeypatch.chdir(project)
    try:
        code, out, err = sh("cat README; touch new.txt", backend)
    finally:
        project.chmod(0o755)
    assert "read me" in out
    assert code != 0 and "Permission denied" in err
    assert "stockade: sandbox denied" not in err, "a host permission was blamed on the sandbox"


@pytest.fixture
def secrets_home(visible_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$HOME with an ssh key and a .netrc in it (both masked in every jail)."""
    home = visible_dir / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("KEY\n")
    (home / ".netrc").write_text("machine x password y\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def test_denied_writes_and_masked_reads_are_explained(
    project: Path, visible_dir: Path, backend: str, secrets_home: Path
) -> None:
    home = secrets_home
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    outside = visible_dir / "outside.txt"
    result = run(
        [
            "/bin/sh",
            "-c",
            f"echo x > {outside}; echo y >> .git/config; cat ~/.ssh/id_ed25519; cat ~/.netrc; "
            "python3 -c \"open('" + str(visible_dir / "py.txt") + "', 'w')\"; exit 0",
        ],
        backend=backend,
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("stockade: ")]
    text = "\n".join(lines)
    assert f"{outside}: outside the writable roots" in text, result.stderr
    assert "--writable" in text
    assert f"{visible_dir / 'py.txt'}: outside the writable roots" in text
    assert f"{project / '.git' / 'config'}: protected" in text or backend == "landlock", text
    assert f"{home / '.ssh' / 'id_ed25519'}: masked" in text
    assert f"{home / '.netrc'}: masked" in text
    assert {d.path for d in result.denials} >= {outside, home / ".ssh" / "id_ed25519"}


def test_home_as_a_writable_root_is_refused(
    visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = visible_dir / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for project in (home, visible_dir, Path("/")):
        with pytest.raises(UsageError, match="home directory"):
            Sandbox(PolicyRequest(project=project, cwd=project), backend="bwrap").close()
    with pytest.raises(UsageError, match="home directory"):
        Sandbox(
            PolicyRequest(project=visible_dir / "home", cwd=home, writable=(Path("/"),)),
            backend="bwrap",
        ).close()


def test_home_as_a_writable_root_is_refused_on_the_command_line(
    visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = visible_dir / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    result = subprocess.run(
        [sys.executable, "-m", "stockade", "run", "--", "true"],
        cwd=home,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "home directory" in result.stderr and "--allow-writable-home" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2


# -- toolchain presets: real installs, caches that belong to the jail --------------------------

needs_npm = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


def _tree_state(path: Path) -> set[tuple[str, int]]:
    """Every entry below ``path`` with its mtime (what a host tool would see changed)."""
    if not path.exists():
        return set()
    return {(str(p), p.lstat().st_mtime_ns) for p in [path, *path.rglob("*")]}


@needs_npm
def test_the_node_preset_keeps_npms_cache_for_the_jail(
    visible_cache: Path, project: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stockade.sandbox.toolchains import store_root

    host_cache = Path(os.path.expanduser("~/.npm"))
    host_before = _tree_state(host_cache)
    install = [
        "npm",
        "install",
        "--no-audit",
        "--no-fund",
        "--no-update-notifier",
        "is-number@7.0.0",
    ]
    request = PolicyRequest(
        project=project, cwd=project, network=NetworkMode.ALLOW, toolchains=("node",)
    )
    with Sandbox(request, backend=backend) as sandbox:
        result = sandbox.run(install, timeout=300)
    assert result.exit_code == 0, result.stderr
    assert (project / "node_modules" / "is-number" / "package.json").exists()
    store = store_root(project) / "node" / "npm"
    assert any(store.rglob("*")), "npm's cache did not land in the jail's store"
    assert _tree_state(host_cache) == host_before, "the host's npm cache was written"
    # a later session, offline, installs from the jail's own cache
    shutil.rmtree(project / "node_modules")
    offline = PolicyRequest(project=project, cwd=project, toolchains=("node",))
    with Sandbox(offline, backend=backend) as sandbox:
        again = sandbox.run([*install, "--offline"], timeout=300)
    assert again.exit_code == 0, again.stderr
    assert (project / "node_modules" / "is-number" / "package.json").exists()


def test_the_python_preset_keeps_pips_cache_for_the_jail(
    visible_cache: Path, project: Path, backend: str
) -> None:
    """A real pip install through the preset. (This machine's pip index does not send
    cacheable responses, so the cache's persistence is shown with pip's own cache dir.)"""
    from stockade.sandbox.toolchains import store_root

    host_cache = Path(os.path.expanduser("~/.cache/pip"))
    host_before = _tree_state(host_cache)
    request = PolicyRequest(
        project=project, cwd=project, network=NetworkMode.ALLOW, toolchains=("python",)
    )
    script = (
        "/usr/bin/python3 -m venv venv && venv/bin/python -m pip install -q "
        "--disable-pip-version-check six==1.16.0 && venv/bin/python -c 'import six; "
        'print(six.__version__)\' && touch "$(venv/bin/python -m pip cache dir)/kept"'
    )
    with Sandbox(request, backend=backend) as sandbox:
        result = sandbox.run(["/bin/sh", "-c", script], timeout=300)
    assert result.exit_code == 0, result.stderr
    assert "1.16.0" in result.stdout
    store = store_root(project) / "python" / "pip"
    assert (store / "kept").exists(), "pip's cache dir is not the jail's store"
    assert _tree_state(host_cache) == host_before, "the host's pip cache was written"
    offline = PolicyRequest(project=project, cwd=project, toolchains=("python",))
    with Sandbox(offline, backend=backend) as sandbox:
        again = sandbox.run(["/bin/sh", "-c", 'ls "$(venv/bin/python -m pip cache dir)"'])
    assert "kept" in again.stdout, again.stderr


@needs_npm
def test_npmrc_reaches_the_jail_without_its_tokens(
    project: Path, visible_dir: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = visible_dir / "home"
    home.mkdir()
    (home / ".npmrc").write_text(
        "registry=https://registry.example.test/\n"
        "//registry.example.test/:_authToken=npm_SECRET123\n"
        "_auth=c2VjcmV0\n"
    )
    monkeypatch.setenv("HOME", str(home))
    _code, out, err = sh(
        "npm config get registry --no-update-notifier; "
        'cat ~/.npmrc "${NPM_CONFIG_USERCONFIG:-/dev/null}" 2>/dev/null; exit 0',
        backend,
    )
    assert "https://registry.example.test/" in out, err
    assert "SECRET" not in out and "c2VjcmV0" not in out


# -- explanations where agents and people read them ---------------------------------------------


def _denial_script(home: Path, outside: Path) -> str:
    return (
        f"echo x > {outside}; echo y >> .git/config; cat {home}/.ssh/id_ed25519; "
        f"cat {home}/.netrc; echo done; exit 0"
    )


def test_a_streamed_run_explains_on_a_terminal_without_changing_the_output(
    project: Path, visible_dir: Path, secrets_home: Path, backend: str
) -> None:
    """stockade run with stderr on a terminal: the command still sees a terminal on stderr,
    its lines arrive unchanged and in order, each denial is explained right after its line."""
    import pty
    import select
    import time

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    outside = visible_dir / "outside.txt"
    script = "[ -t 2 ] && echo stderr-is-a-terminal >&2; " + _denial_script(secrets_home, outside)
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        stockade_run(backend, script),
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
    )
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        elif process.poll() is not None:
            break
    out, _ = process.communicate(timeout=60)
    os.close(controller)
    text = seen.decode(errors="replace").replace("\r\n", "\n")
    assert out == b"done\n"
    assert "stderr-is-a-terminal" in text
    lines = text.splitlines()
    own = [n for n, line in enumerate(lines) if line.startswith("stockade: sandbox denied")]
    assert len(own) == (4 if backend == "bwrap" else 3), text
    for number in own:  # each right after the line it explains
        path = lines[number].removeprefix("stockade: sandbox denied ").split(":")[0]
        assert path.rsplit("/", 1)[-1] in lines[number - 1], text
    assert f"{outside}: outside the writable roots" in text
    assert f"{secrets_home / '.ssh' / 'id_ed25519'}: masked" in text


def test_a_streamed_run_explains_on_a_pipe(
    project: Path, visible_dir: Path, secrets_home: Path, backend: str
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    outside = visible_dir / "outside.txt"
    result = subprocess.run(
        stockade_run(backend, _denial_script(secrets_home, outside)),
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout == "done\n"
    assert f"{outside}: outside the writable roots" in result.stderr
    assert f"{secrets_home / '.netrc'}: masked" in result.stderr
    if backend == "bwrap":
        assert f"{project / '.git' / 'config'}: protected" in result.stderr


def test_the_mcp_result_carries_the_explanation(project: Path, visible_dir: Path) -> None:
    import anyio

    from tests.mcp_support import connect
    from tests.mcp_support import text as result_text

    outside = visible_dir / "outside.txt"

    async def main() -> str:
        async with connect(project, args=["--autonomy", "yolo"]) as client:
            result = await client.call_tool("bash", {"command": f"echo x > {outside}; true"})
            return result_text(result)

    reply = anyio.run(main)
    assert f"stockade: sandbox denied {outside}: outside the writable roots" in reply
    assert not outside.exists()
