"""``Sandbox.start()``: background commands confined like foreground ones, bounded incremental
output, timeouts, kill, and death with the sandbox / the process that owns it."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.runner import Sandbox
from stockade.sandbox.limits import Limits
from tests.process_support import processes_with, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def sandbox(project: Path) -> Iterator[Sandbox]:
    with Sandbox.for_project(project, limits=Limits(output_bytes_per_stream=4096)) as box:
        yield box


def test_output_is_read_incrementally_then_the_exit_code(sandbox: Sandbox) -> None:
    command = sandbox.start(["sh", "-c", "echo one; sleep 0.5; echo two >&2; exit 3"])
    assert wait_until(lambda: "one" in command.read_new().stdout or not command.running)
    assert command.wait(10) == 3
    rest = command.read_new()
    assert rest.stdout == ""  # already read
    assert rest.stderr == "two\n"
    assert (rest.running, rest.exit_code) == (False, 3)
    assert command.posture.confined


def test_a_flood_is_bounded_per_read_and_the_log_keeps_everything(sandbox: Sandbox) -> None:
    command = sandbox.start(["sh", "-c", "seq 1 100000"])
    assert command.wait(20) == 0
    out = command.read_new()
    assert out.truncated
    assert len(out.stdout) < 4096 + 200
    assert out.stdout.startswith("1\n2\n3\n")
    assert out.stdout.endswith("99999\n100000\n")
    assert out.stdout_path is not None
    full = out.stdout_path.read_text()
    assert full == "".join(f"{n}\n" for n in range(1, 100001))


def test_background_commands_are_confined_like_foreground_ones(
    sandbox: Sandbox, project: Path, visible_dir: Path
) -> None:
    outside = visible_dir / "outside.txt"
    command = sandbox.start(["sh", "-c", f"echo in > inside.txt; echo out > {outside}"])
    assert command.wait(10) != 0
    assert (project / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    assert "Read-only file system" in command.read_new().stderr


def test_timeout_kills_the_tree_with_124(sandbox: Sandbox) -> None:
    command = sandbox.start(["sh", "-c", "sleep 4242.11 & sleep 4242.11"], timeout=0.5)
    assert command.wait(20) == 124
    final = command.read_new()
    assert final.timed_out
    assert final.limit_message is not None and "wall-clock" in final.limit_message
    assert wait_until(lambda: not processes_with("sleep 4242.11"))


def test_kill_stops_every_process_of_the_tree(sandbox: Sandbox) -> None:
    command = sandbox.start(["sh", "-c", "sleep 4242.12 & sleep 4242.12 & wait"])
    assert wait_until(lambda: len(processes_with("sleep 4242.12")) == 2)
    assert command.kill() == 128 + signal.SIGKILL
    assert not command.running
    assert wait_until(lambda: not processes_with("sleep 4242.12"))


def test_kill_right_after_start_never_hangs(sandbox: Sandbox) -> None:
    """Killed in its first instants, the sandbox's init may not have its process group yet
    and outlives the bwrap launcher unless the kill is repeated."""
    for _ in range(40):
        command = sandbox.start(["sleep", "4242.16"])
        killer = threading.Thread(target=command.kill)
        killer.start()
        killer.join(timeout=15)
        assert not killer.is_alive(), "kill() hung"
        assert command.exit_code == 137
    assert wait_until(lambda: not processes_with("sleep 4242.16"))


def test_closing_the_sandbox_kills_its_background_commands(project: Path) -> None:
    with Sandbox.for_project(project) as box:
        command = box.start(["sleep", "4242.13"])
        assert wait_until(lambda: bool(processes_with("sleep 4242.13")))
    assert not command.running
    assert wait_until(lambda: not processes_with("sleep 4242.13"))
    with pytest.raises(UsageError, match="closed"):
        box.start(["true"])


def test_a_command_started_from_a_short_lived_thread_outlives_that_thread(
    sandbox: Sandbox,
) -> None:
    started = []
    worker = threading.Thread(target=lambda: started.append(sandbox.start(["sleep", "4242.14"])))
    worker.start()
    worker.join()
    time.sleep(0.5)  # PR_SET_PDEATHSIG would have fired by now had the worker spawned bwrap
    assert started[0].running
    assert processes_with("sleep 4242.14")
    started[0].kill()


def test_start_refuses_bad_input(sandbox: Sandbox, visible_dir: Path) -> None:
    with pytest.raises(UsageError, match="no command"):
        sandbox.start([])
    with pytest.raises(UsageError, match="positive"):
        sandbox.start(["true"], timeout=0)
    with pytest.raises(UsageError, match="outside every writable root"):
        sandbox.start(["true"], cwd=visible_dir)


OWNER = textwrap.dedent(
    """
    import sys, time
    from stockade.runner import Sandbox
    box = Sandbox.for_project(sys.argv[1])
    box.start(["sleep", "4242.15"])
    print("started", flush=True)
    time.sleep(600)
    """
)


def test_background_commands_die_with_the_process_that_owns_them(project: Path) -> None:
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(project)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        assert owner.stdout.readline() == "started\n"
        assert wait_until(lambda: bool(processes_with("sleep 4242.15")))
    finally:
        owner.kill()
        owner.wait()
    assert wait_until(lambda: not processes_with("sleep 4242.15"))
