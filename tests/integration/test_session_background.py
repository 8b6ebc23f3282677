"""Background commands of a Session: handle ids, incremental output, kill, confinement, death
with the session, ledger completion."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.permissions.ledger import Ledger
from stockade.session import AsyncSession
from tests.process_support import processes_with, wait_until
from tests.session_support import Answers, classifier, session

pytestmark = pytest.mark.integration


def test_background_handle_output_and_ledger(project: Path) -> None:
    with session(project, autonomy="yolo") as s:
        started = s.execute("echo first; sleep 0.5; echo second", run_in_background=True)
        assert started.allowed and started.exit_code is None
        handle = started.background_id
        assert handle == "bg-1" and "bash_output" in started.to_text()
        assert wait_until(lambda: "first" in s.output(handle).stdout)
        assert wait_until(lambda: not s.output(handle).running)
        final = s.output(handle)
        assert (final.running, final.exit_code, final.stdout) == (False, 0, "")
        [entry] = Ledger().entries(session=s.session_id)
        assert entry.exit_code == 0
        assert s.background_ids() == ["bg-1"]


def test_background_commands_are_confined(project: Path, visible_dir: Path) -> None:
    outside = visible_dir / "bg-outside"
    with session(project, autonomy="yolo") as s:
        handle = s.execute(f"touch {outside}", run_in_background=True).background_id
        assert handle is not None
        assert wait_until(lambda: not s.output(handle).running)
        assert not outside.exists()


def test_kill_and_unknown_ids(project: Path) -> None:
    with session(project, autonomy="yolo") as s:
        handle = s.execute("sleep 4242.21", run_in_background=True).background_id
        assert handle is not None
        assert wait_until(lambda: bool(processes_with("sleep 4242.21")))
        stopped = s.kill(handle)
        assert not stopped.running and stopped.exit_code == 137
        assert wait_until(lambda: not processes_with("sleep 4242.21"))
        with pytest.raises(UsageError, match="no background command 'bg-9'"):
            s.output("bg-9")


def test_background_commands_die_with_the_session(project: Path) -> None:
    with session(project, autonomy="yolo") as s:
        s.execute("sleep 4242.22", run_in_background=True)
        assert wait_until(lambda: bool(processes_with("sleep 4242.22")))
        session_id = s.session_id
    assert wait_until(lambda: not processes_with("sleep 4242.22"))
    [entry] = Ledger().entries(session=session_id)
    assert entry.exit_code == 137  # recorded when the session closed


def test_background_runs_pass_the_gate_like_foreground_ones(project: Path) -> None:
    answers = Answers(None)
    with session(project, autonomy="balanced", prompt=answers) as s:
        denied = s.execute("rm -f x", run_in_background=True)
        assert not denied.allowed and denied.background_id is None
        assert len(answers.requests) == 1


def test_async_session_with_an_async_prompt(project: Path) -> None:
    asked: list[str] = []

    async def prompt(request: object) -> object:
        from stockade.permissions.prompt import Choice

        asked.append(request.action)  # type: ignore[attr-defined]
        await asyncio.sleep(0)
        return Choice.ALLOW_ONCE

    async def main() -> None:
        async with AsyncSession(
            project, autonomy="balanced", prompt=prompt, classifier=classifier()
        ) as s:
            result = await s.execute("rm -f nothing")
            assert result.ok and asked == ["rm -f nothing"]
            started = await s.execute("sleep 4242.23", run_in_background=True)
            handle = started.background_id
            assert handle is not None
            await asyncio.sleep(1.0)  # the worker thread that asked is idle by now
            assert (await s.output(handle)).running
            change = await s.write_file("made.txt", "hi\n")
            assert change.created
            assert (await s.read_file("made.txt")).content == "hi\n"
        assert not processes_with("sleep 4242.23") or wait_until(
            lambda: not processes_with("sleep 4242.23")
        )

    asyncio.run(main())
    time.sleep(0)


OWNER = """
import sys, time
from stockade import Session
session = Session(sys.argv[1], autonomy="yolo")
session.execute("sleep 4242.24", run_in_background=True)
print(session.session_dir, flush=True)
time.sleep(600)
"""


def test_a_killed_owner_leaves_no_process_and_its_dir_is_swept(
    project: Path, visible_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # session dirs in a temp dir of this test's own: any stockade that starts on this machine
    # sweeps a dead owner's dir from the shared one, before this test's own session could
    own_temp = visible_dir / "temp"
    own_temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(own_temp))
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER, str(project)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        private = Path(owner.stdout.readline().strip())
        assert private.is_dir()
        assert wait_until(lambda: bool(processes_with("sleep 4242.24")))
    finally:
        owner.kill()
        owner.wait()
    assert wait_until(lambda: not processes_with("sleep 4242.24"))
    assert private.is_dir()  # SIGKILL: nobody could clean up...
    with session(project, autonomy="yolo"):
        assert not private.exists()  # ...so the next session sweeps it
