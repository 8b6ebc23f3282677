"""Warm jails: every command of a session in one long-lived jail, with the guarantees of a
fresh one - its own session and process group, its limits and cgroup, nothing it starts left
behind, signals and timeouts, the jail user, empty scratch directories - and a jail that is
replaced, never reused, when a fresh one would be built differently or when it broke.

Everything that matters is judged from the host: which processes exist, their uids and
cgroups, what appeared in the project. Each test runs on bwrap and on Landlock where the
backend has the property. Most projects are *complete* (every protected name exists, so their
read-only binds and the guard are in play); ``test_nothing_is_left_on_the_host`` runs a bare
one.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stockade.errors import SandboxUnavailable
from stockade.runner import Sandbox, warm_enabled
from stockade.sandbox import warm as warm_module
from stockade.sandbox.identity import DEFAULT_JAIL_UID
from stockade.sandbox.limits import Limits, detect_cgroups
from stockade.sandbox.policy import PolicyRequest
from stockade.sandbox.warm import WarmJail
from stockade.session import Session
from stockade.vocabulary import PROTECTED_NAMES
from tests.process_support import processes_with, status_ids, wait_until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not warm_enabled(), reason="STOCKADE_WARM=0: the cold path is forced"),
]

NO_CGROUP = Limits(memory_max_bytes=None, pids_max=None)


def complete(project: Path) -> Path:
    """Create every protected name (see the module docstring) and ``src/``: with protected
    names in it, Landlock freezes the project root itself."""
    (project / "src").mkdir(exist_ok=True)
    for name in PROTECTED_NAMES:
        path = project / name.name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.is_dir:
            path.mkdir(exist_ok=True)
        else:
            path.touch()
    return project


@pytest.fixture
def sandbox(project: Path, backend: str) -> Iterator[Sandbox]:
    complete(project)
    with Sandbox.for_project(project, backend=backend, limits=NO_CGROUP, warm=True) as box:
        yield box


def jails(sandbox: Sandbox) -> list[WarmJail]:
    assert sandbox._warm is not None
    return sandbox._warm.jails()


def spawner_pid(jail: WarmJail) -> int:
    """The host pid of the jail's spawner, as the kernel gave it with its hello."""
    return jail.spawner_pid


def sh(sandbox: Sandbox, script: str, **kwargs: object) -> tuple[int, str, str]:
    result = sandbox.run(["/bin/sh", "-c", script], **kwargs)  # type: ignore[arg-type]
    assert result.warm, "the command did not run in the warm jail"
    return result.exit_code, result.stdout, result.stderr


def two_in_one_jail(sandbox: Sandbox, run: Callable[[str], str]) -> bool:
    """Two commands in a row took the same jail. Tried a few times: a Landlock jail is
    rightly replaced when a directory its ruleset walked changed meanwhile (another test
    run making its directory in /tmp/pytest-of-USER)."""
    for _ in range(5):
        assert run("one") == "one\n"
        first = [j.spawner_pid for j in jails(sandbox)]
        assert run("two") == "two\n"
        if [j.spawner_pid for j in jails(sandbox)] == first and len(first) == 1:
            return True
    return False


def test_commands_share_one_long_lived_jail(sandbox: Sandbox) -> None:
    assert two_in_one_jail(sandbox, lambda word: sh(sandbox, f"echo {word}")[1])


def test_each_command_has_its_own_session_and_process_group(sandbox: Sandbox) -> None:
    ids = []
    for _ in range(2):
        code, out, _ = sh(sandbox, "ps -o pid=,pgid=,sid= -p $$")
        assert code == 0
        pid, group, session = out.split()
        assert pid == group == session  # the command leads its own session and group
        ids.append(session)
    assert ids[0] != ids[1]


def test_what_a_command_leaves_running_is_killed_when_it_ends(sandbox: Sandbox) -> None:
    code, _, _ = sh(
        sandbox,
        "sleep 4243.1 & setsid sleep 4243.2 & (sleep 4243.3 &); "
        "nohup sh -c 'sleep 4243.4' >/dev/null 2>&1 & echo started",
    )
    assert code == 0
    for marker in ("sleep 4243.1", "sleep 4243.2", "sleep 4243.3", "sleep 4243.4"):
        assert processes_with(marker) == [], f"{marker} outlived its command"


def test_a_timeout_kills_the_whole_tree(sandbox: Sandbox) -> None:
    result = sandbox.run(
        ["sh", "-c", "sleep 4243.5 & setsid sleep 4243.6 & sleep 4243.7"], timeout=1
    )
    assert result.warm and result.timed_out and result.exit_code == 124
    for marker in ("sleep 4243.5", "sleep 4243.6", "sleep 4243.7"):
        assert processes_with(marker) == []


def test_rlimits_are_set_for_each_command(project: Path, backend: str) -> None:
    complete(project)
    limits = NO_CGROUP._replace(open_files=321, file_size_bytes=1 << 20)
    with Sandbox.for_project(project, backend=backend, limits=limits, warm=True) as box:
        code, out, _ = sh(box, "ulimit -n; ulimit -f")
    assert code == 0
    assert out.split() == ["321", str((1 << 20) // 512)]  # ulimit -f counts 512-byte blocks


def test_signals_reach_the_command(sandbox: Sandbox, project: Path) -> None:
    command = sandbox.start(
        ["sh", "-c", f"trap 'echo term > {project}/src/got; exit 7' TERM; echo ready; "
         "while :; do sleep 0.05; done"]
    )  # fmt: skip
    assert command.warm
    assert wait_until(lambda: "ready" in command.read_new().stdout)
    assert command.terminate() == 7
    assert (project / "src" / "got").read_text() == "term\n"


def test_background_commands_run_warm_and_die_with_the_sandbox(project: Path, backend: str) -> None:
    complete(project)
    with Sandbox.for_project(project, backend=backend, limits=NO_CGROUP, warm=True) as box:
        command = box.start(["sh", "-c", "setsid sleep 4243.8 & sleep 4243.9"])
        assert command.warm
        assert wait_until(lambda: processes_with("sleep 4243.9"))
    assert processes_with("sleep 4243.8") == [] and processes_with("sleep 4243.9") == []


@pytest.mark.skipif(os.geteuid() != 0, reason="the jail user replaces host root only for root")
def test_commands_run_as_the_jail_user_never_host_root(sandbox: Sandbox) -> None:
    if sandbox.backend.name != "bwrap":
        pytest.skip("Landlock runs as the launcher's user (its posture says so)")
    command = sandbox.start(["sleep", "4244.1"])
    try:
        assert wait_until(lambda: processes_with("sleep 4244.1"))
        (pid,) = processes_with("sleep 4244.1")
        ids = status_ids(pid)
        assert set(ids["Uid"]) == {DEFAULT_JAIL_UID} and set(ids["Gid"]) == {DEFAULT_JAIL_UID}
    finally:
        command.kill()


def test_each_command_joins_its_own_cgroup_before_it_runs(project: Path, backend: str) -> None:
    support = detect_cgroups()
    if not support.enforces("pids"):
        pytest.skip("no writable cgroup with the pids controller here")
    complete(project)
    limits = Limits(memory_max_bytes=None, pids_max=64)
    with Sandbox.for_project(project, backend=backend, limits=limits, warm=True) as box:
        groups = []
        for marker in ("sleep 4244.2", "sleep 4244.3"):
            command = box.start(marker.split())
            assert command.warm
            assert wait_until(lambda marker=marker: processes_with(marker))  # type: ignore[misc]
            (pid,) = processes_with(marker)
            with open(f"/proc/{pid}/cgroup") as cgroups:
                mine = [line for line in cgroups.read().splitlines() if "stockade-" in line]
            assert mine, f"{marker} is in no run cgroup"
            groups.append(mine)
            command.kill()
        assert groups[0] != groups[1]
        # and the cap holds: 100 sleeps cannot all start under pids_max = 64
        result = box.run(
            ["sh", "-c", "for i in $(seq 100); do sleep 2 & done 2>/dev/null; wait"], timeout=30
        )
        assert result.warm
        assert result.limit_message and "process limit" in result.limit_message


def test_a_cgroup_made_ahead_holds_the_next_command_and_none_is_left(
    project: Path, backend: str
) -> None:
    """The keeper moves the next spare into the next run's cgroup while nothing runs; that
    run gets it (with the caps), and closing the Sandbox leaves no group of ours behind."""
    support = detect_cgroups()
    if not support.enforces("pids"):
        pytest.skip("no writable cgroup with the pids controller here")
    parents = [p for p in (support.v2_parent, *support.v1_parents.values()) if p is not None]
    ours = f"stockade-{os.getpid()}-"
    limits = Limits(memory_max_bytes=None, pids_max=48)
    with Sandbox.for_project(project, backend=backend, limits=limits, warm=True) as box:
        assert box.run(["true"]).warm
        (jail,) = jails(box)
        made_ahead = lambda: jail._prepared is not None and jail._prepared.cgroup is not None  # noqa: E731
        assert wait_until(made_ahead)
        assert jail._prepared is not None and jail._prepared.cgroup is not None
        ahead = {str(path) for path in jail._prepared.cgroup.dirs.values()}
        command = box.start(["sleep", "4244.4"])
        assert wait_until(lambda: processes_with("sleep 4244.4"))
        (pid,) = processes_with("sleep 4244.4")
        with open(f"/proc/{pid}/cgroup") as cgroups:
            paths = [line.split(":", 2)[2] for line in cgroups.read().splitlines()]
        inside = {str(parent / Path(path).name) for parent in parents for path in paths}
        assert ahead <= inside, (ahead, paths)  # the group made ahead, in every hierarchy
        caps = [Path(d) / "pids.max" for d in ahead if (Path(d) / "pids.max").exists()]
        assert caps and all(cap.read_text().strip() == "48" for cap in caps)
        command.kill()
    assert not [name for parent in parents for name in os.listdir(parent) if name.startswith(ours)]


def test_scratch_directories_are_empty_for_each_command(project: Path) -> None:
    complete(project)
    with Sandbox.for_project(project, backend="bwrap", limits=NO_CGROUP, warm=True) as box:
        made = "touch /tmp/left /dev/shm/left $TMPDIR/left /dev/left; mkdir -p /tmp/d/e; echo ok"
        assert sh(box, made)[1] == "ok\n"
        code, out, _ = sh(box, "ls -A /tmp/left /dev/shm/left $TMPDIR/left /dev/left /tmp/d 2>&1")
    assert code != 0 and out.count("No such file") == 5


def test_commands_inherit_no_stray_descriptors(sandbox: Sandbox) -> None:
    code, out, _ = sh(sandbox, "ls /proc/self/fd")
    assert code == 0
    assert out.split() == ["0", "1", "2", "3"]  # 3: ls's own listing of the directory


def test_a_command_cannot_signal_its_spawner_or_monitor(sandbox: Sandbox) -> None:
    jail = jails(sandbox)[0] if jails(sandbox) else None
    if jail is None:
        sh(sandbox, "true")
        jail = jails(sandbox)[0]
    if not jail.scope:
        pytest.skip("Landlock ABI < 6: signals are not scoped on this kernel")
    _, out, _ = sh(sandbox, "kill -9 $PPID; echo monitor=$?")
    assert "monitor=0" not in out
    assert not jail.broken  # the jail is intact (retired at most, when a walked dir changed)
    assert sh(sandbox, "echo still")[1] == "still\n"


def test_a_plan_that_changed_gets_a_new_jail_never_the_stale_one(
    project: Path, backend: str
) -> None:
    """A repository made on the host after the jail started: a fresh bwrap jail binds its
    hooks read-only, so the running jail - built when there was no ``.git/hooks`` - must not
    take the next command (Landlock: the guard restores them, as after a cold command).
    Judged on the host: no hook."""
    (project / "src").mkdir()
    with Sandbox.for_project(project, backend=backend, limits=NO_CGROUP, warm=True) as box:
        assert sh(box, "true")[0] == 0
        (stale,) = jails(box)
        (project / ".git" / "hooks").mkdir(parents=True)
        (project / ".git" / "config").write_text("[core]\n")
        sh(box, "echo 'touch /var/tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/*")
        assert not (project / ".git" / "hooks" / "pre-commit").exists()
        if backend == "bwrap":  # (Landlock: the hooks are restored, not in the ruleset, so
            assert stale not in jails(box)  # a fresh ruleset is the running one's)


def test_a_denied_write_is_explained_as_in_a_fresh_jail(sandbox: Sandbox, project: Path) -> None:
    """A write this user could make but the jail denies (next to the project, outside every
    writable root): refused, and explained exactly as after a cold command."""
    outside = project.parent / "outside-the-roots"
    write = ["sh", "-c", f"echo x > {outside}"]
    cold = Sandbox.for_project(project, backend=sandbox.backend.name, limits=NO_CGROUP, warm=False)
    with cold:
        cold.run(["true"])  # the backend's one-time notice
        expected = cold.run(write)
    sh(sandbox, "true")
    warm = sandbox.run(write)
    assert warm.exit_code != 0 and not outside.exists()
    assert warm.warm and warm.denials and warm.denials == expected.denials
    assert warm.stderr == expected.stderr


def gone(*markers: str) -> bool:
    return not any(processes_with(marker) for marker in markers)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_dead_spawner_is_replaced(sandbox: Sandbox) -> None:
    sh(sandbox, "true")
    (jail,) = jails(sandbox)
    spawner = spawner_pid(jail)
    os.kill(spawner, signal.SIGKILL)
    assert wait_until(lambda: not alive(spawner))
    assert sh(sandbox, "echo again")[1] == "again\n"
    assert jail not in jails(sandbox)


def test_a_broken_jail_is_killed_with_everything_in_it(sandbox: Sandbox) -> None:
    command = sandbox.start(["sh", "-c", "setsid sleep 4244.4 & sleep 4244.5"])
    assert wait_until(lambda: processes_with("sleep 4244.5") and processes_with("sleep 4244.4"))
    (jail,) = jails(sandbox)
    jail.fail("a simulated protocol failure")
    assert command.wait(30) is not None
    assert command.exit_code != 0
    assert wait_until(
        lambda: not processes_with("sleep 4244.5") and not processes_with("sleep 4244.4")
    )
    assert sh(sandbox, "echo new jail")[1] == "new jail\n"
    assert jail not in jails(sandbox)


def test_a_command_whose_monitor_dies_leaves_nothing_running(sandbox: Sandbox) -> None:
    """The monitor is stockade's; if it dies anyway (the kernel's OOM killer, a bug), the
    command's processes come to the spawner, which kills them, and the jail is replaced."""
    command = sandbox.start(["sh", "-c", "setsid sleep 4244.6 & exec sleep 4244.7"])
    assert wait_until(lambda: processes_with("sleep 4244.7") and processes_with("sleep 4244.6"))
    (main,) = processes_with("sleep 4244.7")
    with open(f"/proc/{main}/status") as status:
        monitor = next(int(line.split()[1]) for line in status if line.startswith("PPid:"))
    with open(f"/proc/{monitor}/cmdline", "rb") as cmdline:
        assert b"spawner.py" in cmdline.read()
    os.kill(monitor, signal.SIGKILL)
    assert command.wait(30) is not None and command.exit_code != 0
    assert wait_until(
        lambda: not processes_with("sleep 4244.7") and not processes_with("sleep 4244.6")
    )
    assert sh(sandbox, "echo fine")[1] == "fine\n"


def test_an_idle_jail_is_closed(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warm_module, "IDLE_SECONDS", 0.2)
    sh(sandbox, "true")
    (jail,) = jails(sandbox)
    assert wait_until(lambda: not alive(jail.spawner_pid))
    assert sh(sandbox, "echo woken")[1] == "woken\n"


def test_nothing_is_left_on_the_host(project: Path, backend: str) -> None:
    """A bare project (no protected name exists) runs warm, and its jail makes nothing on
    the host for the names it protects: not while it lives, not after."""
    (project / "app.py").write_text("print(1)\n")
    before = sorted(os.listdir(project))
    with Session(project, autonomy="yolo", backend=backend, limits=NO_CGROUP) as session:
        result = session.execute("ls -A")
        assert result.exit_code == 0 and result.stdout.split() == before
        assert session.sandbox.run(["true"]).warm
        assert sorted(os.listdir(project)) == before
    assert sorted(os.listdir(project)) == before


def test_sessions_run_warm(project: Path, backend: str) -> None:
    complete(project)
    with Session(project, autonomy="yolo", backend=backend, limits=NO_CGROUP) as session:
        assert two_in_one_jail(session.sandbox, lambda word: session.execute(f"echo {word}").stdout)


def test_the_cold_path_can_be_forced(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    complete(project)
    monkeypatch.setenv("STOCKADE_WARM", "0")
    with Sandbox.for_project(project, backend="bwrap", limits=NO_CGROUP) as box:
        assert not box.warm and not box.run(["true"]).warm
    monkeypatch.delenv("STOCKADE_WARM")
    with Sandbox.for_project(project, backend="bwrap", limits=NO_CGROUP, warm=False) as box:
        assert not box.run(["true"]).warm


def test_a_jail_that_cannot_start_is_a_refusal_not_a_bypass(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    complete(project)
    from stockade.sandbox import warm_bwrap

    monkeypatch.setattr(warm_bwrap, "SPAWNER_SCRIPT", project / "missing-spawner.py")
    with (
        Sandbox.for_project(project, backend="bwrap", limits=NO_CGROUP, warm=True) as box,
        pytest.raises(SandboxUnavailable) as refused,
    ):
        box.run(["touch", str(project / "ran")])
    assert "STOCKADE_WARM=0" in (refused.value.fix or "")
    assert not (project / "ran").exists()


def test_exit_codes_and_missing_programs_read_like_a_fresh_jail(sandbox: Sandbox) -> None:
    assert sh(sandbox, "exit 3")[0] == 3
    assert sh(sandbox, "kill -TERM $$")[0] == 128 + signal.SIGTERM
    missing = sandbox.run(["/nonexistent-program"])
    assert missing.warm and missing.exit_code == 127
    assert "No such file or directory" in missing.stderr
    script = sandbox.policy.project / "noshebang"
    script.write_text("echo from sh\n")
    script.chmod(0o755)
    result = sandbox.run([str(script)])
    assert result.warm and result.stdout == "from sh\n"  # execvp runs it with /bin/sh


def test_stdin_and_streams_are_the_commands(sandbox: Sandbox) -> None:
    sh(sandbox, "true")  # the backend's one-time notice goes with the first command
    result = sandbox.run(["sh", "-c", "cat; echo err >&2"], input=b"from stdin\n")
    assert result.warm and (result.stdout, result.stderr) == ("from stdin\n", "err\n")


def test_a_sandbox_still_serves_its_own_request_until_a_substitute_changes(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the run helper reuses a Sandbox by: a policy resolved again equals its own, the
    per-session copy of ``~/.npmrc`` compared by content (and the new copy removed)."""
    home = project.parent / "home"  # (visible to a root launcher's jail user)
    home.mkdir()
    (home / ".npmrc").write_text("registry=https://registry.example/\n//x/:_authToken=s3cret\n")
    monkeypatch.setenv("HOME", str(home))
    request = PolicyRequest(project=project, cwd=project)
    with Sandbox(request, backend="bwrap", limits=NO_CGROUP) as box:
        assert box.policy.substitutes
        copies = box.session_dir.root / "substitutes"
        assert box.still_serves(request) and box.still_serves(request)
        assert len(os.listdir(copies)) == len(box.policy.substitutes)
        (home / ".npmrc").write_text("registry=https://other.example/\n")
        assert not box.still_serves(request)


def test_review_runs_are_served_cold_and_say_why(project: Path) -> None:
    """The review layer is attached to each command's own mount namespace: a review
    Sandbox starts no warm jail, and each result names the reason."""
    with Sandbox.for_project(
        project, backend="bwrap", limits=NO_CGROUP, warm=True, review=True
    ) as box:
        box.prewarm()
        result = box.run(["sh", "-c", "echo staged > staged.txt"])
        assert result.exit_code == 0 and not result.warm
        assert result.cold_reason and "review" in result.cold_reason
        assert not (project / "staged.txt").exists()  # on the layer, not in the project
        assert box._warm is not None and not box._warm.jails()
