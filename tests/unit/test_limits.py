"""Limits: validation, settings parsing, rlimit planning, exit explanations, posture text."""

from __future__ import annotations

import resource
import signal
from pathlib import Path

import pytest

from stockade.errors import ConfigError, UsageError
from stockade.sandbox import limits as L


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"wall_timeout_s": 0}, "wall_timeout_s"),
        ({"wall_timeout_s": float("inf")}, "wall_timeout_s"),
        ({"wall_timeout_s": True}, "wall_timeout_s"),
        ({"address_space_bytes": -1}, "address_space_bytes"),
        ({"open_files": 1.5}, "open_files"),
        ({"cpu_seconds": True}, "cpu_seconds"),
        ({"processes": 2}, "cannot even start"),
        ({"pids_max": 1}, "cannot even start"),
        ({"memory_max_bytes": 1024}, "16 MiB"),
        ({"output_bytes_per_stream": 10}, "1 KiB"),
        ({"output_bytes_per_stream": None}, "output_bytes_per_stream"),
    ],
)
def test_invalid_limits_are_refused_with_a_fix(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        L.Limits(**kwargs)  # type: ignore[arg-type]
    assert info.value.fix


def test_defaults_are_valid_and_core_dumps_always_off() -> None:
    planned = dict(L.planned_rlimits(L.Limits()))
    assert planned[resource.RLIMIT_CORE] == 0
    assert resource.RLIMIT_AS not in planned  # off by default
    assert planned[resource.RLIMIT_NOFILE] == 4096


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1048576", 1 << 20),
        ("512M", 512 << 20),
        ("512MiB", 512 << 20),
        ("2g", 2 << 30),
        ("1.5G", 3 << 29),
        ("64k", 64 << 10),
        (" 3 GB ", 3 << 30),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert L.parse_size(text) == expected


def test_from_settings_reads_sizes_and_names_the_bad_key() -> None:
    limits = L.Limits.from_settings(
        {"memory_max_bytes": "512M", "pids_max": 64, "output_bytes_per_stream": "64k"}
    )
    assert (limits.memory_max_bytes, limits.pids_max) == (512 << 20, 64)
    assert limits.output_bytes_per_stream == 64 << 10
    with pytest.raises(ConfigError, match=r"stockade\.toml: unknown limit 'pid_max'"):
        L.Limits.from_settings({"pid_max": 5}, where="stockade.toml")
    with pytest.raises(ConfigError, match="'lots' is not a size"):
        L.Limits.from_settings({"file_size_bytes": "lots"})
    with pytest.raises(ConfigError, match="pids_max"):
        L.Limits.from_settings({"pids_max": 0})


def test_rlimits_are_clamped_to_the_current_hard_limit() -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    planned = dict(L.planned_rlimits(L.Limits(open_files=10**9)))
    assert planned[resource.RLIMIT_NOFILE] == (
        10**9 if hard == resource.RLIM_INFINITY else min(10**9, hard)
    )


@pytest.mark.parametrize(
    ("rc", "report", "timed_out", "expected"),
    [
        (-signal.SIGXFSZ, None, False, "file size limit (8 MiB)"),
        (128 + signal.SIGXFSZ, None, False, "file size limit (8 MiB)"),  # through bwrap
        (128 + signal.SIGXCPU, None, False, "CPU time limit (5 s)"),
        (137, L.CgroupReport(oom_kills=1), False, "memory limit (256 MiB) was reached"),
        (
            -9,
            L.CgroupReport(pids_limit_hits=40),
            True,
            "wall-clock limit of 3 s; the process limit (32) was reached: 40 forks refused",
        ),
    ],
)
def test_exits_caused_by_limits_are_explained(
    rc: int, report: L.CgroupReport | None, timed_out: bool, expected: str
) -> None:
    limits = L.Limits(
        file_size_bytes=8 << 20,
        cpu_seconds=5,
        memory_max_bytes=256 << 20,
        pids_max=32,
        wall_timeout_s=3,
    )
    message = L.explain_exit(rc, limits, report, timed_out=timed_out)
    assert message is not None and expected in message


def test_ordinary_failures_are_not_blamed_on_limits() -> None:
    assert L.explain_exit(1, L.Limits(), L.CgroupReport()) is None
    assert L.explain_exit(0, L.Limits()) is None


def test_posture_for_root_without_a_pids_cgroup_says_fork_bombs_are_not_contained() -> None:
    posture = L.describe(L.Limits(), L.CgroupSupport(notes=("no cgroup here",)), euid=0)
    text = " ".join(posture.not_enforced)
    assert "exempts uid 0" in text
    assert "fork bomb run as root is NOT contained" in text
    assert "no cgroup here" in text


def test_posture_with_v1_controllers() -> None:
    support = L.CgroupSupport(v1_parents={"pids": Path("/x"), "memory": Path("/y")})
    posture = L.describe(L.Limits(memory_max_bytes=1 << 30), support, euid=1000)
    text = " ".join(posture.enforced)
    assert "pids cap 1024 for the whole run (cgroup v1)" in text
    assert "memory cap 1 GiB" in text
    assert "RLIMIT_NPROC = 4096" in text


def test_mountinfo_paths_map_to_disk() -> None:
    assert L._on_disk(("/", Path("/sys/fs/cgroup/pids")), "/a/b") == Path("/sys/fs/cgroup/pids/a/b")
    assert L._on_disk(("/a", Path("/mnt")), "/a/b") == Path("/mnt/b")
    assert L._on_disk(("/other", Path("/mnt")), "/a/b") is None
