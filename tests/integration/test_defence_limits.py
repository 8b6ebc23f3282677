"""Each limit tripped for real inside a bwrap jail (own PID namespace), as root and sbxtest.

The fork bomb is dangerous if a limit silently fails, so it always runs under an *outer*
safety net the test sets up itself, independent of the module under test: a pids cgroup of
its own when we are root, and RLIMIT_NPROC for an unprivileged user (root is exempt from it),
plus a short timeout. Every test checks that no process is left behind.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import resource
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stockade.sandbox import limits as L
from tests.integration import defence_support
from tests.integration.defence_support import identities, jail, needs_bwrap
from tests.process_support import processes_mentioning

pytestmark = [pytest.mark.integration, needs_bwrap()]
shared_tmp = defence_support.shared_tmp  # fixture
SUPPORT = L.detect_cgroups()
OUTER_PIDS_MAX = 200
BOMB = (
    "import os, sys\n"
    "said = False\n"
    "while True:\n"
    "    try:\n"
    "        os.fork()\n"
    "    except OSError:\n"
    "        if not said:\n"
    "            print('fork refused', flush=True); said = True\n"
)
MEMORY_BOMB = "x = []\nwhile True:\n    x.append(b'\\x01' * (16 << 20))\n"


def with_marker(code: str) -> tuple[list[str], str]:
    marker = f"stockade-limit-test-{uuid.uuid4().hex}"
    return ["/usr/bin/python3", "-c", code, marker], marker


def wait_until_gone(marker: str, seconds: float = 10) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := processes_mentioning(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def outer_pids_cgroup() -> Iterator[Path | None]:
    """Root only: a pids cgroup of the test's own, capping everything under it."""
    parent = SUPPORT.v1_parents.get("pids") or (
        SUPPORT.v2_parent if "pids" in SUPPORT.v2_controllers else None
    )
    if os.geteuid() != 0 or parent is None:
        yield None
        return
    outer = parent / f"stockade-test-safety-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    outer.mkdir()
    (outer / "pids.max").write_text(str(OUTER_PIDS_MAX))
    yield outer
    for pid in (outer / "cgroup.procs").read_text().split():
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(pid), 9)
    for _ in range(200):
        try:
            outer.rmdir()
            break
        except OSError:
            time.sleep(0.01)


def user_process_count(uid: int) -> int:
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count


def chain(*steps: Callable[[], None]) -> Callable[[], None]:
    def run_all() -> None:
        for step in steps:
            step()

    return run_all


def become(identity: str) -> Callable[[], None]:
    """Drop to `identity` inside preexec, *after* root-only steps such as joining cgroups."""
    if identity == "self":
        return lambda: None
    entry = pwd.getpwnam(identity)

    def drop() -> None:
        os.setgroups([])
        os.setgid(entry.pw_gid)
        os.setuid(entry.pw_uid)

    return drop


def join(cgroup: Path | None) -> Callable[[], None]:
    if cgroup is None:
        return lambda: None
    target = cgroup / "cgroup.procs"
    return lambda: target.write_text("0")


def uid_of(identity: str) -> int:
    return os.geteuid() if identity == "self" else pwd.getpwnam(identity).pw_uid


def env_for(identity: str) -> dict[str, str]:
    return defence_support.as_identity(identity)["env"]  # type: ignore[no-any-return]


def spawn(
    argv: list[str], identity: str, preexec: Callable[[], None], **kwargs: object
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=preexec,
        env=env_for(identity),
        cwd="/",
        **kwargs,
    )  # type: ignore[call-overload]


# ------------------------------------------------------------------------------- fork bomb


@pytest.mark.parametrize("identity", identities())
def test_fork_bomb_is_contained_and_leaves_nothing(
    identity: str, outer_pids_cgroup: Path | None
) -> None:
    uid = uid_of(identity)
    if uid == 0 and outer_pids_cgroup is None:
        pytest.skip("as root only a pids cgroup can contain a fork bomb; none is writable")
    limits = L.Limits(wall_timeout_s=3, pids_max=48, processes=user_process_count(uid) + 40)
    safety = [join(outer_pids_cgroup)]  # the test's own net, independent of the module
    if uid != 0:
        budget = user_process_count(uid) + 80
        safety.append(lambda: resource.setrlimit(resource.RLIMIT_NPROC, (budget, budget)))
    support = SUPPORT
    if outer_pids_cgroup is not None:  # the run's group nests inside the safety group
        support = L.CgroupSupport(
            SUPPORT.v2_parent,
            SUPPORT.v2_controllers,
            {**SUPPORT.v1_parents, "pids": outer_pids_cgroup},
        )
    run = L.RunCgroup.create(limits, support) if uid == 0 else None
    argv, marker = with_marker(BOMB)
    steps = [
        *safety,
        *([run.join_preexec()] if run else []),
        become(identity),
        L.rlimit_preexec(limits),
    ]
    proc = spawn(jail(argv), identity, chain(*steps))
    try:
        time.sleep(1.0)
        assert subprocess.run(["/bin/true"], timeout=30).returncode == 0  # host responsive
        if run is not None:
            assert len(run.pids()) <= limits.pids_max  # type: ignore[operator]
        try:
            proc.wait(timeout=limits.wall_timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        else:
            timed_out = False
        assert timed_out, "a fork bomb never ends by itself"
        if run is not None:
            assert run.kill_all()
        proc.kill()
        out, _ = proc.communicate(timeout=30)
        assert "fork refused" in out
        if run is not None:
            report = run.report()
            assert report.pids_limit_hits > 0
            message = L.explain_exit(proc.returncode, limits, report, timed_out=True)
            assert message is not None and "process limit (48) was reached" in message
        assert wait_until_gone(marker) == []
    finally:
        proc.kill()
        proc.wait()
        if run is not None:
            run.remove()
            assert run.dirs == {}
    assert wait_until_gone(marker) == []


# ----------------------------------------------------------------------------- memory bomb


@pytest.mark.parametrize("identity", identities())
def test_memory_bomb_hits_the_address_space_limit(identity: str) -> None:
    limits = L.Limits(address_space_bytes=768 << 20, wall_timeout_s=60)
    argv, marker = with_marker(MEMORY_BOMB)
    proc = spawn(jail(argv), identity, chain(become(identity), L.rlimit_preexec(limits)))
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "MemoryError" in err
    assert wait_until_gone(marker) == []


@pytest.mark.skipif(
    os.geteuid() != 0 or not SUPPORT.enforces("memory"),
    reason="needs a writable memory cgroup (root on this machine)",
)
def test_memory_bomb_hits_the_cgroup_memory_limit() -> None:
    limits = L.Limits(memory_max_bytes=256 << 20, wall_timeout_s=60)
    outer_safety = 2 << 30  # if the cgroup failed, RLIMIT_AS still stops it at 2 GiB
    argv, marker = with_marker(MEMORY_BOMB)
    with L.RunCgroup.create(limits) as run:
        proc = spawn(
            jail(argv),
            "self",
            chain(
                run.join_preexec(),
                L.rlimit_preexec(limits),
                lambda: resource.setrlimit(resource.RLIMIT_AS, (outer_safety, outer_safety)),
            ),
        )
        proc.communicate(timeout=60)
        report = run.report()
        assert report.oom_kills >= 1
        assert report.memory_peak_bytes <= limits.memory_max_bytes  # type: ignore[operator]
        message = L.explain_exit(proc.returncode, limits, report)
        assert message is not None and "memory limit (256 MiB) was reached" in message
        assert proc.returncode == 128 + 9  # bwrap reports the SIGKILL of its child
    assert wait_until_gone(marker) == []


# ---------------------------------------------------------------------------- disk filling


FILLERS = {
    "shell": (["/bin/sh", "-c", 'head -c 100M /dev/zero > "$0/big"'], "SIGXFSZ"),
    "python": (
        [
            "/usr/bin/python3",
            "-c",
            "import sys\nf = open(sys.argv[1] + '/big', 'wb')\n"
            "while True:\n    f.write(b'x' * (1 << 20))\n",
        ],
        "File too large",
    ),
}


@pytest.mark.parametrize("identity", identities())
@pytest.mark.parametrize("filler", sorted(FILLERS))
def test_disk_filling_loop_stops_at_the_file_size_limit(
    identity: str, filler: str, shared_tmp: Path
) -> None:
    shared_tmp.chmod(0o777)
    limits = L.Limits(file_size_bytes=8 << 20)
    argv, expected = FILLERS[filler]
    bind = ["--bind", str(shared_tmp), str(shared_tmp)]
    proc = spawn(
        jail([*argv, str(shared_tmp)], extra=bind),
        identity,
        chain(become(identity), L.rlimit_preexec(limits)),
    )
    _, err = proc.communicate(timeout=60)
    assert "bwrap:" not in err, err
    assert (shared_tmp / "big").stat().st_size == 8 << 20
    if expected == "SIGXFSZ":
        message = L.explain_exit(proc.returncode, limits)
        assert message is not None and "file size limit (8 MiB) was exceeded" in message
    else:
        assert proc.returncode == 1 and expected in err


# ---------------------------------------------------------------------------- cgroup hygiene


@pytest.mark.skipif(
    os.geteuid() != 0 or not (SUPPORT.v2_parent or SUPPORT.v1_parents),
    reason="needs a writable cgroup",
)
def test_stale_groups_of_a_dead_stockade_are_swept() -> None:
    """stockade killed with SIGKILL leaves its run group and processes; the next start sweeps."""
    code = (
        "import subprocess, time\n"
        "from stockade.sandbox import limits as L\n"
        "run = L.RunCgroup.create(L.Limits())\n"
        "subprocess.Popen(['sh', '-c', 'sleep 300', 'stockade-orphan-marker'],"
        " preexec_fn=run.join_preexec(), start_new_session=True)\n"
        "print(*run.dirs.values(), flush=True)\n"
        "time.sleep(300)\n"
    )
    launcher = subprocess.Popen(
        [defence_support.PYTHON, "-c", code], stdout=subprocess.PIPE, text=True
    )
    assert launcher.stdout is not None
    dirs = [Path(p) for p in launcher.stdout.readline().split()]
    launcher.kill()  # SIGKILL: no cleanup ran
    launcher.wait()
    assert dirs and all(d.exists() for d in dirs)
    assert processes_mentioning("stockade-orphan-marker")
    assert L.sweep_stale() >= len(dirs)
    assert not any(d.exists() for d in dirs)
    assert wait_until_gone("stockade-orphan-marker") == []


@pytest.mark.skipif(os.geteuid() == 0, reason="checks the unprivileged posture")
def test_unprivileged_posture_states_missing_cgroups() -> None:
    posture = L.describe(L.Limits())
    if SUPPORT.enforces("pids"):
        pytest.skip("this user has a delegated cgroup")
    assert any("pids cap" in line for line in posture.not_enforced)
    assert any(f"RLIMIT_NPROC = {L.Limits().processes}" in line for line in posture.enforced)
