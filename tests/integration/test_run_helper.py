"""The run helper (``cli/run_client.py``, ``cli/run_helper.py``): ``stockade run`` handed to
a warm per-user helper, which must behave exactly like the command line in its own process -
same output, exit code, ledger record, environment, signals - and must never serve a client
in another situation (no_new_privs, another umask...). Which process ran the jail is judged
from the host: a command's ancestry holds the helper or the command line itself."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.cli.run_client import helper_dir
from tests.process_support import processes_with, wait_until

pytestmark = pytest.mark.integration


@pytest.fixture
def helper_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The environment of a client that uses the helper; the helpers it started are ended
    afterwards (by pid)."""
    monkeypatch.setenv("STOCKADE_RUN_HELPER", "1")
    before = set(helpers())
    yield dict(os.environ)
    for pid in set(helpers()) - before:
        os.kill(pid, signal.SIGTERM)  # between requests a helper ends cleanly
    if not wait_until(lambda: not (set(helpers()) - before)):
        for pid in set(helpers()) - before:  # (a test that failed mid-request)
            os.kill(pid, signal.SIGKILL)


def helpers() -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if b"stockade.cli.run_helper" in argv and int(entry) != os.getpid():
            found.append(int(entry))
    return found


def cli(*args: str, env: dict[str, str], cwd: Path, **kwargs: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "stockade", *args],
        cwd=cwd, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        **kwargs,  # type: ignore[arg-type]
    )  # fmt: skip


def run(*args: str, env: dict[str, str], cwd: Path, **kwargs: object) -> tuple[int, str, str]:
    process = cli(*args, env=env, cwd=cwd, **kwargs)
    out, err = process.communicate(timeout=120)
    return process.returncode, out, err


def served_by_helper(marker: str) -> bool:
    """Whether the running ``sleep MARKER`` descends from a run helper (else from the client)."""
    (pid,) = processes_with(f"sleep {marker}")
    chain = []
    while pid > 1:
        with open(f"/proc/{pid}/status") as status:
            pid = next(int(line.split()[1]) for line in status if line.startswith("PPid:"))
        chain.append(pid)
    return any(p in helpers() for p in chain)


def start_helper(env: dict[str, str], project: Path) -> None:
    """The first run starts the helper (and runs in its own process); wait until it listens.
    (A socket file alone proves nothing: a killed helper leaves its file behind.)"""
    assert run("run", "--", "true", env=env, cwd=project)[0] == 0
    assert wait_until(lambda: bool(helpers()), timeout=30)
    assert wait_until(a_helper_listens, timeout=30)


def a_helper_listens() -> bool:
    """Whether a run helper process holds a listening socket in the helper directory, as
    the kernel lists them (``/proc/net/unix``: the accepting flag, the inode, the path)."""
    directory = helper_dir(create=False)
    if directory is None:
        return False
    listening = set()
    with open("/proc/net/unix") as table:
        for row in list(table)[1:]:
            fields = row.split()
            if (
                len(fields) == 8
                and int(fields[3], 16) & 0x10000
                and fields[7].startswith(directory)
            ):
                listening.add(f"socket:[{fields[6]}]")
    for pid in helpers():
        with contextlib.suppress(OSError):
            if listening & {
                os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")
            }:
                return True
    return False


def test_a_run_through_the_helper_is_the_runs_own(
    project: Path, helper_env: dict[str, str]
) -> None:
    start_helper(helper_env, project)
    (project / "src").mkdir()
    code, out, err = run(
        "run", "--", "sh", "-c", "echo out; echo err >&2; echo made > src/f; exit 3",
        env=helper_env, cwd=project,
    )  # fmt: skip
    assert (code, out, err) == (3, "out\n", "err\n")
    assert (project / "src" / "f").read_text() == "made\n"
    code, out, _ = run("run", "--json", "--", "sh", "-c", "cat; echo $LANG", env={
        **helper_env, "LANG": "C.UTF-8"}, cwd=project, stdin=subprocess.PIPE)  # fmt: skip
    assert code == 0
    document = json.loads(out)
    assert document["stdout"] == "C.UTF-8\n" and document["posture"]["confined"]
    ledger = subprocess.run(
        [sys.executable, "-m", "stockade", "ledger", "--json"], cwd=project, env=helper_env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert len(json.loads(ledger.stdout)["entries"]) == 3  # every run, helper or not


def test_the_helper_runs_them_warm(project: Path, helper_env: dict[str, str]) -> None:
    start_helper(helper_env, project)
    process = cli("run", "--", "sleep", "4245.1", env=helper_env, cwd=project)
    try:
        assert wait_until(lambda: processes_with("sleep 4245.1"))
        assert served_by_helper("4245.1")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


def test_each_client_brings_its_own_environment(project: Path, helper_env: dict[str, str]) -> None:
    start_helper(helper_env, project)
    for value in ("C.UTF-8", "POSIX"):
        code, out, _ = run("run", "--", "sh", "-c", "echo $LANG", env={**helper_env, "LANG": value},
                           cwd=project)  # fmt: skip
        assert (code, out) == (0, f"{value}\n")


def test_ctrl_c_reaches_the_command_and_a_second_one_kills_it(
    project: Path, helper_env: dict[str, str]
) -> None:
    start_helper(helper_env, project)
    (project / "src").mkdir()
    script = f"trap 'echo int >> {project}/src/got' INT; echo ready; while :; do sleep 4245.2; done"
    process = cli("run", "--", "sh", "-c", script, env=helper_env, cwd=project)
    assert process.stdout is not None
    assert process.stdout.readline() == "ready\n"
    assert wait_until(lambda: processes_with("sleep 4245.2"))
    assert served_by_helper("4245.2")
    process.send_signal(signal.SIGINT)
    assert wait_until(lambda: (project / "src" / "got").exists())
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    assert process.returncode != 0
    assert wait_until(lambda: not processes_with("sleep 4245.2"))


def test_a_killed_client_takes_its_command_with_it(
    project: Path, helper_env: dict[str, str]
) -> None:
    start_helper(helper_env, project)
    process = cli("run", "--", "sh", "-c", "setsid sleep 4245.4 & sleep 4245.3", env=helper_env,
                  cwd=project)  # fmt: skip
    assert wait_until(lambda: processes_with("sleep 4245.3"))
    assert served_by_helper("4245.3")
    process.kill()
    process.communicate(timeout=60)
    assert wait_until(lambda: not processes_with("sleep 4245.3") and not processes_with(
        "sleep 4245.4"))  # fmt: skip


def test_a_client_in_another_situation_is_never_served(
    project: Path, helper_env: dict[str, str]
) -> None:
    """no_new_privs (a process inside a sandbox has it) and another umask each get their own
    process, never the helper started by a client without them."""
    start_helper(helper_env, project)
    for wrapper in (["setpriv", "--no-new-privs"], ["sh", "-c", 'umask 077; exec "$@"', "sh"]):
        process = subprocess.Popen(
            [*wrapper, sys.executable, "-m", "stockade", "run", "--", "sleep", "4245.5"],
            cwd=project, env=helper_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            assert wait_until(lambda: processes_with("sleep 4245.5"), timeout=60)
            assert not served_by_helper("4245.5")
        finally:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=60)


def test_the_helper_can_be_turned_off(project: Path, helper_env: dict[str, str]) -> None:
    start_helper(helper_env, project)
    process = cli("run", "--", "sleep", "4245.6", env={**helper_env, "STOCKADE_RUN_HELPER": "0"},
                  cwd=project)  # fmt: skip
    try:
        assert wait_until(lambda: processes_with("sleep 4245.6"), timeout=60)
        assert not served_by_helper("4245.6")
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)


def test_its_socket_is_in_a_private_directory(project: Path, helper_env: dict[str, str]) -> None:
    start_helper(helper_env, project)
    directory = helper_dir(create=False)
    assert directory is not None
    info = os.stat(directory)
    assert info.st_uid == os.getuid() and info.st_mode & 0o077 == 0
