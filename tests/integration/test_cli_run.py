"""The ``stockade run`` / ``status`` / ``doctor`` command lines, driven as real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.integration


def test_run_streams_output_and_returns_the_exit_code(project: Path) -> None:
    result = run_cli("run", "--", "sh", "-c", "echo out; echo err >&2; exit 3", cwd=project)
    assert result.returncode == 3
    assert result.stdout == "out\n"
    assert "err" in result.stderr


def test_run_without_double_dash_keeps_command_flags(project: Path) -> None:
    result = run_cli("run", "ls", "-a", cwd=project)
    assert result.returncode == 0
    assert "." in result.stdout.split()


def test_write_inside_succeeds_and_home_is_denied(project: Path, visible_dir: Path) -> None:
    home = visible_dir / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    result = run_cli(
        "run",
        "--",
        "sh",
        "-c",
        'echo a > inside.txt; echo b > "$HOME/outside.txt"',
        cwd=project,
        env=env,
    )
    assert result.returncode != 0
    assert (project / "inside.txt").exists()
    assert not (home / "outside.txt").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run"], "no command given"),
        (["run", "--no-such-flag", "--", "true"], "No such option"),
        (["run", "--writable", "/nonexistent/stockade", "--", "true"], "does not exist"),
        (["run", "--project", "/nonexistent/stockade", "--", "true"], "does not exist"),
        (["run", "--timeout", "-1", "--", "true"], "-1"),
        (["run", "--network", "sideways", "--", "true"], "sideways"),
    ],
)
def test_bad_input_is_one_clear_line_and_exit_2(
    project: Path, args: list[str], message: str
) -> None:
    result = run_cli(*args, cwd=project)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_writable_root_inside_a_masked_directory_is_refused(
    project: Path, visible_dir: Path
) -> None:
    home = visible_dir / "home"
    (home / ".ssh" / "sub").mkdir(parents=True)
    env = {**os.environ, "HOME": str(home)}
    result = run_cli(
        "run", "--writable", str(home / ".ssh" / "sub"), "--", "true", cwd=project, env=env
    )
    assert result.returncode == 2
    assert "masked" in result.stderr and "fix:" in result.stderr


def test_bad_environment_values_are_usage_errors(project: Path) -> None:
    env = {**os.environ, "STOCKADE_SANDBOX_NETWORK": "maybe"}
    result = run_cli("run", "--", "true", cwd=project, env=env)
    assert result.returncode == 2
    assert "STOCKADE_SANDBOX_NETWORK" in result.stderr


def test_missing_bwrap_refuses_with_125_and_the_install_command(project: Path) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    result = run_cli("run", "--backend", "bwrap", "--", "/bin/true", cwd=project, env=env)
    assert result.returncode == 125
    assert "apt-get install bubblewrap" in result.stderr


def test_non_enforcing_bwrap_refuses_with_125(project: Path, visible_dir: Path) -> None:
    fake = visible_dir / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "bubblewrap 0.8.0"; exit 0;; esac\n'
        "echo 'bwrap: No permissions to create a new namespace' >&2; exit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:/usr/bin:/bin"}
    result = run_cli("run", "--backend", "bwrap", "--", "/bin/true", cwd=project, env=env)
    assert result.returncode == 125
    assert "namespace" in result.stderr
    assert "--unsafe" in result.stderr


def test_unsafe_runs_unconfined_and_says_so(project: Path) -> None:
    result = run_cli("run", "--unsafe", "--", "true", cwd=project)
    assert result.returncode == 0
    assert "UNCONFINED" in result.stderr
    env = {**os.environ, "STOCKADE_SANDBOX": "off"}
    assert "UNCONFINED" in run_cli("run", "--", "true", cwd=project, env=env).stderr


def test_timeout_exits_124_with_a_message(project: Path) -> None:
    result = run_cli("run", "--timeout", "0.5", "--", "sleep", "30", cwd=project)
    assert result.returncode == 124
    assert "timed out after 0.5s" in result.stderr


def _spawn_cli(project: Path, *command: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "stockade", "run", "--", *command],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_line(process: subprocess.Popen[str], text: str) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    assert text in line, line


def test_sigint_and_sigterm_are_forwarded_to_the_confined_command(project: Path) -> None:
    for signum, expected in ((signal.SIGINT, 42), (signal.SIGTERM, 43)):
        process = _spawn_cli(
            project,
            "sh",
            "-c",
            'trap "echo got-int; exit 42" INT; trap "echo got-term; exit 43" TERM; '
            "echo ready; while :; do sleep 0.1; done",
        )
        _wait_for_line(process, "ready")
        process.send_signal(signum)
        out, _ = process.communicate(timeout=20)
        assert process.returncode == expected, out


def test_sigkill_of_stockade_takes_the_jail_with_it(project: Path) -> None:
    marker = f"stockade-orphan-{os.getpid()}"
    process = _spawn_cli(project, "sh", "-c", f"echo ready; exec sleep 300 {marker}")
    _wait_for_line(process, "ready")
    process.kill()
    process.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
        if not alive.stdout.strip():
            break
        time.sleep(0.1)
    assert not alive.stdout.strip(), "the confined command outlived stockade"


def test_status_json_reports_posture_and_policy(project: Path) -> None:
    result = run_cli("status", "--json", cwd=project)
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert data["available"] is True
    assert data["backend"] == "bwrap"
    assert data["posture"]["proven"] is True
    assert str(project) in data["writable_roots"]
    assert data["network"] == "deny"


def test_auto_falls_back_to_landlock_without_bwrap(project: Path) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    data = json.loads(run_cli("status", "--json", cwd=project, env=env).stdout)
    assert data["backend"] == "landlock"
    assert data["posture"]["proven"] is True
    assert any("PID namespace" in gap for gap in data["posture"]["gaps"])


def test_status_explains_an_unavailable_backend(project: Path) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    data = json.loads(
        run_cli("status", "--json", "--backend", "bwrap", cwd=project, env=env).stdout
    )
    assert data["available"] is False
    assert "bubblewrap" in data["reason"]


def test_doctor_proves_every_protection(project: Path) -> None:
    result = run_cli("doctor", "--json", cwd=project, timeout=120)
    data = json.loads(result.stdout)
    failed = [c for c in data["checks"] if not c["ok"]]
    assert result.returncode == 0, failed
    names = {c["name"] for c in data["checks"]}
    assert {
        "write inside writable roots",
        "write outside blocked",
        "secrets masked",
        "network denied",
        "host processes hidden",
        "secret env scrubbed",
    } <= names


def test_doctor_proves_the_landlock_backend(project: Path) -> None:
    result = run_cli("doctor", "--json", "--backend", "landlock", cwd=project, timeout=120)
    data = json.loads(result.stdout)
    assert result.returncode == 0, [c for c in data["checks"] if not c["ok"]]
    unclaimed = {c["name"] for c in data["checks"] if not c["claimed"]}
    # Landlock has no PID namespace, and restores protected paths instead of making them read-only
    assert unclaimed == {"host processes hidden", "protected paths read-only"}


def test_doctor_fails_with_fix_when_no_sandbox(project: Path) -> None:
    env = {**os.environ, "PATH": "/nonexistent"}
    result = run_cli("doctor", "--backend", "bwrap", cwd=project, env=env)
    assert result.returncode == 1
    assert "✗" in result.stdout and "fix" in result.stdout


@pytest.mark.parametrize("backend", ["bwrap", "landlock"])
def test_doctor_proves_allowlist_mode(project: Path, backend: str) -> None:
    result = run_cli(
        "doctor", "--json", "--network", "allowlist", "--allow-domain", "example.com",
        "--backend", backend, cwd=project, timeout=120,
    )  # fmt: skip
    data = json.loads(result.stdout)
    assert result.returncode == 0, [c for c in data["checks"] if not c["ok"]]
    names = {c["name"] for c in data["checks"]}
    assert {"allow-listed host reachable", "denied host refused", "network denied"} <= names
