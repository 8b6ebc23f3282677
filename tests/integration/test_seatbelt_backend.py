"""The Seatbelt backend's launch and its refusal, driven on this Linux machine with a stand-in
for ``/usr/bin/sandbox-exec`` that records its arguments and enforces nothing.

What macOS's kernel then enforces cannot be tested here; ``stockade doctor`` proves it on a Mac.
What can be tested: the command line (profile, env(1) inside, nothing on the launcher), and that
the real startup probe refuses a sandbox-exec that does not enforce, instead of degrading.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stockade.errors import SandboxUnavailable
from stockade.sandbox import select
from stockade.sandbox.policy import PolicyRequest, resolve_policy
from stockade.sandbox.probe import run_probe
from stockade.sandbox.seatbelt import ENV_PROGRAM, SeatbeltBackend, seatbelt_profile
from stockade.vocabulary import BACKEND_NAMES

pytestmark = pytest.mark.integration

STAND_IN = """#!/bin/sh
# stands in for sandbox-exec: records its arguments and environment, enforces NOTHING
printf '%s\\0' "$@" > {record}.args
/usr/bin/env > {record}.env
[ "$1" = -p ] && [ "$3" = -- ] || exit 64
shift 3
exec "$@"
"""


@pytest.fixture
def stand_in(visible_dir: Path) -> tuple[SeatbeltBackend, Path]:
    record = visible_dir / "sandbox-exec-record"
    script = visible_dir / "sandbox-exec"
    script.write_text(STAND_IN.format(record=record))
    script.chmod(0o755)
    return SeatbeltBackend(platform="darwin", sandbox_exec=str(script)), record


@pytest.fixture
def session_tmp(visible_dir: Path) -> Path:
    path = visible_dir / "session" / "tmp"
    path.mkdir(parents=True)
    return path


def test_the_command_line_applies_the_profile_then_sets_the_environment_inside(
    project: Path,
    session_tmp: Path,
    stand_in: tuple[SeatbeltBackend, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend, record = stand_in
    monkeypatch.setenv("DATABASE_URL", "postgres://app:hunter2@db/app")
    monkeypatch.setenv("LC_PAPER", "de_DE.UTF-8")
    policy = resolve_policy(PolicyRequest(project=project), session_tmp=session_tmp)
    jail = backend.spawn(policy, ["/bin/sh", "-c", "echo ran > made"], stdin=subprocess.DEVNULL)
    try:
        assert jail.exit_code(jail.process.wait(timeout=30)) == 0
    finally:
        jail.close()
    assert (project / "made").read_text() == "ran\n"
    args = record.with_suffix(".args").read_bytes().decode().split("\0")[:-1]
    assert args[:3] == ["-p", seatbelt_profile(policy), "--"]
    assert args[3:5] == [ENV_PROGRAM, "-i"]
    assert "LC_PAPER=de_DE.UTF-8" in args
    assert f"PWD={project}" in args
    assert args[-3:] == ["/bin/sh", "-c", "echo ran > made"]
    assert "hunter2" not in "".join(args)
    launcher_env = record.with_suffix(".env").read_text()
    assert "LC_PAPER" not in launcher_env and "hunter2" not in launcher_env  # env -i inside


def test_a_sandbox_exec_that_does_not_enforce_is_refused_not_trusted(
    project: Path,
    session_tmp: Path,
    stand_in: tuple[SeatbeltBackend, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    backend, _record = stand_in
    policy = resolve_policy(PolicyRequest(project=project), session_tmp=session_tmp)
    result = run_probe(backend, policy)
    assert not result.ok
    assert "a write outside every writable root succeeded" in result.failures
    monkeypatch.setattr(select, "make_backend", lambda name: backend)
    monkeypatch.setattr(
        select, "prove", lambda backend, policy, identity: run_probe(backend, policy)
    )
    with pytest.raises(SandboxUnavailable, match="write outside every writable root"):
        select.select_backend("seatbelt", policy)
    assert not [p for p in project.parent.iterdir() if p.name.startswith(".stockade-probe")]


def test_on_linux_the_backend_says_it_is_macos_only(project: Path, session_tmp: Path) -> None:
    backend = SeatbeltBackend(platform="linux")
    missing = backend.unavailable()
    assert missing is not None and "macOS-only" in missing.reason
    policy = resolve_policy(PolicyRequest(project=project), session_tmp=session_tmp)
    with pytest.raises(SandboxUnavailable, match="macOS-only"):
        backend.spawn(policy, ["/bin/true"])
    assert "seatbelt" in BACKEND_NAMES


def test_a_missing_sandbox_exec_is_named(visible_dir: Path) -> None:
    backend = SeatbeltBackend(platform="darwin", sandbox_exec=str(visible_dir / "nope"))
    missing = backend.unavailable()
    assert missing is not None and "missing" in missing.reason
    assert not os.path.exists(visible_dir / "nope")


def test_the_posture_claims_no_namespace_and_names_what_it_lacks(
    project: Path, session_tmp: Path
) -> None:
    policy = resolve_policy(PolicyRequest(project=project), session_tmp=session_tmp)
    posture = SeatbeltBackend(platform="darwin").posture(policy, proven=True)
    assert posture.confined and not posture.pid_namespace and not posture.network_namespace
    assert not posture.seccomp and not posture.masks_hide_names
    gaps = " ".join(posture.gaps)
    for lack in ("no PID namespace", "no private /tmp", "no syscall filter", "loopback"):
        assert lack in gaps
