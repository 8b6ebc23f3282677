"""Each limit tripped through the product path (Sandbox.run), not a hand-built jail: the run
ends with a clear message, the host stays responsive, nothing is left behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from stockade.runner import Sandbox
from stockade.sandbox.limits import Limits, detect_cgroups
from stockade.sandbox.policy import PolicyRequest

pytestmark = pytest.mark.integration

MiB = 1 << 20


def sandbox(project: Path, **limits: object) -> Sandbox:
    return Sandbox(
        PolicyRequest(project=project, cwd=project),
        backend="bwrap",
        limits=Limits(**limits),  # type: ignore[arg-type]
    )


def test_fork_bomb_ends_and_leaves_nothing(project: Path) -> None:
    if os.geteuid() == 0 and not detect_cgroups().enforces("pids"):
        pytest.skip("as root only a pids cgroup contains a fork bomb, and none is writable")
    marker = f"stockade-forkbomb-{os.getpid()}"
    bomb = f"bomb() {{ bomb | bomb & }}; bomb; sleep 3 # {marker}"
    with sandbox(project, processes=64, pids_max=64, wall_timeout_s=20) as box:
        result = box.run(["/bin/bash", "-c", bomb])
    assert not result.timed_out  # the bomb fizzled; the shell finished on its own
    assert "Resource temporarily unavailable" in result.stderr or result.limit_message
    if os.geteuid() == 0 and box.policy.jail_user is None:  # rlimits exempt host root
        assert result.limit_message and "process limit" in result.limit_message
    assert subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout == b""
    assert subprocess.run(["true"]).returncode == 0  # the host still forks


def test_memory_bomb_ends_with_a_clear_message(project: Path) -> None:
    grow = "x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n"
    if os.geteuid() == 0 and detect_cgroups().enforces("memory"):
        limits: dict[str, object] = {"memory_max_bytes": 128 * MiB}
    else:
        limits = {"address_space_bytes": 512 * MiB}
    with sandbox(project, wall_timeout_s=60, **limits) as box:
        result = box.run(["/usr/bin/python3", "-c", grow])
    assert result.exit_code != 0
    if "memory_max_bytes" in limits:
        assert result.limit_message and "memory limit" in result.limit_message
    else:
        assert "MemoryError" in result.stderr


def test_filling_the_session_temp_dir_ends_with_a_clear_message(project: Path) -> None:
    fill = 'i=0; while :; do head -c 1048576 /dev/zero > "$TMPDIR/f$i" || exit 1; i=$((i+1)); done'
    with sandbox(project, tmp_size_bytes=32 * MiB, wall_timeout_s=60) as box:
        result = box.run(["/bin/sh", "-c", fill])
        assert result.exit_code == 1
        assert (
            result.limit_message and "session temp dir is capped at 32 MiB" in result.limit_message
        )
        # the cap is per command: the next one starts with an empty temp dir
        assert box.run(["/bin/sh", "-c", 'ls "$TMPDIR" | wc -l']).stdout.strip() == "0"


def test_one_huge_file_hits_the_file_size_limit(project: Path) -> None:
    with sandbox(project, file_size_bytes=8 * MiB, wall_timeout_s=60) as box:
        result = box.run(["/bin/sh", "-c", "head -c 100000000 /dev/zero > big.bin"])
    assert result.exit_code != 0
    assert (project / "big.bin").stat().st_size <= 8 * MiB
