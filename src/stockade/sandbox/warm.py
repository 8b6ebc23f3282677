"""Warm jails: one long-lived jail per policy, each command started inside it by a spawner.

A cold run builds the whole jail for every command (~35 mounts, the seccomp fd, the uid drop,
the status handshake). A warm jail is built once, with the same policy, and runs
``spawner.py`` (stdlib only, in the jail); every command is one request to it over a unix
socket (see that module for what happens inside). The backend-specific part - how a jail is
started and what its plan is - lives in ``warm_bwrap.py`` and ``warm_landlock.py``; this
module is the host side of the protocol and the pool.

Per-command guarantees stay those of a fresh jail:

* its own session and process group, its rlimits (set by the command before it execs), its
  cgroup and its identity: the spawner's spare command announces itself on the control
  socket, and its host pid and uids come with that message from the kernel
  (``SCM_CREDENTIALS``); the uids are checked (root launcher: the jail user) and the pid moved
  into the run's cgroup *before* the request is sent - nothing of a command runs before.
  Moving a process into a cgroup costs the kernel an RCU grace period (~6 ms here, on the
  command's path); so once a command with a cgroup took its spare, the next spare is checked
  and moved into a cgroup made for the next run ahead of time, by the jail's *keeper*
  thread, and that run adopts it (``WarmJail._keep``);
* every process it leaves is killed when it ends (its monitor is a subreaper), and when
  stockade goes away (the monitor reads EOF);
* signals, timeouts and output bounds are the runner's, unchanged; the posture is the
  Sandbox's.

A jail is used only while its plan is exactly what a fresh jail would get now
(``StartedJail.matches``: e.g. ``git init`` made ``.git/hooks`` that a fresh jail binds
read-only): otherwise it is retired (closed once its running commands end) and a new one is
built. A jail whose spawner or a command's monitor died, or that could not kill a command's
processes, is killed and replaced - never bypassed. An idle jail is closed after
``IDLE_SECONDS``.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import IO, Final, Generic, NamedTuple, Protocol, TypeVar

from stockade.errors import SandboxUnavailable
from stockade.sandbox import spawner as protocol
from stockade.sandbox.backend import Stdio
from stockade.sandbox.bash_direct import direct_exec
from stockade.sandbox.identity import JailUser, check_running_as
from stockade.sandbox.limits import CgroupRecipe, RunCgroup, RunLimits
from stockade.sandbox.policy import SandboxPolicy

IDLE_SECONDS: Final = 60.0  # an unused jail is closed after this long
START_TIMEOUT_SECONDS: Final = 30.0  # for the spawner's hello and a command's gate
KILL_TIMEOUT_SECONDS: Final = protocol.KILL_DEADLINE_SECONDS + 5.0  # monitor's answer to kill
_UCRED: Final = 12  # struct ucred: pid_t, uid_t, gid_t


class ColdOnly(Exception):
    """This policy's commands must run in fresh jails for now (a backend's ``cold_reason``):
    the Sandbox runs them cold, which is never weaker."""


class StartedJail(Protocol):
    """A jail running the spawner, as the backend started it."""

    key: Hashable  # jails are looked up by this; equal keys can share a jail
    scratch: tuple[str, ...]  # what the spawner empties between commands
    jail_user: JailUser | None  # every process must run as this host user (root launcher)
    shares_host_pids: bool  # no PID namespace: the pids the spawner sees are the host's

    def matches(self, fresh: SandboxPolicy) -> bool:
        """True while the jail is exactly what a fresh jail for ``fresh`` (its protected
        paths looked up just now) would be."""

    def command_env(self, policy: SandboxPolicy) -> dict[str, str]:
        """The environment a command of ``policy`` gets in this jail."""

    def kill(self) -> None:
        """Kill every process of the jail (the fallback when its protocol broke down)."""

    def wait(self, timeout: float) -> bool:
        """Wait for the jail's processes to end; True when they have."""

    def release(self) -> None:
        """Release what the jail held on the host (fds, the ruleset); idempotent."""

    def failure(self) -> str:
        """What the jail said before it failed (bwrap's or the spawner's stderr)."""


class _ColdJail(Protocol):
    """The cold path's jail object that runs a spawner (``BwrapJail``, ``LauncherJail``)."""

    @property
    def process(self) -> subprocess.Popen[bytes]: ...
    def kill_all(self) -> None: ...
    def close(self) -> None: ...


FAILURE_BYTES: Final = 4096  # of what a jail said before it failed


class SpawnerJail:
    """What both backends' warm jails share (see ``StartedJail``): the cold path's jail
    running the spawner, and the pipe its stderr goes to (what it said if it failed)."""

    def __init__(self) -> None:
        self._jail: _ColdJail | None = None
        self._failure_read = -1

    def _failure_pipe(self) -> int:
        """Make the failure pipe; returns the write end for the jail's stderr (close it
        after the spawn)."""
        self._failure_read, failure_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        return failure_write

    @property
    def process(self) -> subprocess.Popen[bytes]:
        """The jail's outermost process (bwrap; Landlock: the launcher)."""
        assert self._jail is not None
        return self._jail.process

    def kill(self) -> None:
        if self._jail is not None:
            self._jail.kill_all()

    def wait(self, timeout: float) -> bool:
        if self._jail is None:
            return True
        try:
            self._jail.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def failure(self) -> str:
        if self._failure_read < 0:
            return ""
        try:
            text = os.read(self._failure_read, FAILURE_BYTES).decode(errors="replace")
        except OSError:
            return ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def release(self) -> None:
        if self._jail is not None:
            self._jail.close()
        if self._failure_read >= 0:
            os.close(self._failure_read)
            self._failure_read = -1


class JailStarter(Protocol):
    """A backend's way to start warm jails."""

    def start(self, policy: SandboxPolicy, control_fd: int) -> StartedJail:
        """Start a jail for ``policy`` with the spawner on ``control_fd`` (runs on the pool's
        long-lived thread); raises ColdOnly when the policy cannot be served warm."""

    def cold_reason(self, policy: SandboxPolicy, stdio: Sequence[Stdio]) -> str | None:
        """Why a command of ``policy`` on ``stdio`` must run in a fresh jail, or None."""

    def key(self, policy: SandboxPolicy) -> Hashable:
        """Policies with different keys never share a jail (``matches`` decides the rest)."""


class WarmJail:
    """One started jail and its control socket; thread-safe."""

    def __init__(
        self, started: StartedJail, control: socket.socket, scope: bool, spawner: int
    ) -> None:
        self.started = started
        self.key = started.key
        self.scope = scope  # commands get a Landlock domain of their own (ABI 6)
        self._control = control
        self.spawner_pid = spawner  # in stockade's PID namespace
        self._spawner = os.pidfd_open(spawner)  # readable once the spawner is gone
        self._lock = threading.Lock()
        self._active = 0
        self._processes: set[WarmProcess] = set()  # the commands running now
        self._idle_since = time.monotonic()
        self.retired = False  # no new commands; closed when the last one ends
        self.broken = ""  # why it was killed (a protocol failure); "" while healthy
        self._closed = False
        # the next spare, checked and in a cgroup made ahead for the next run (the keeper's)
        self._spare_lock = threading.Lock()  # taken after _lock, never before it
        self._prepared: _PreparedSpare | None = None
        self._keeper: queue.SimpleQueue[_KeeperTask] | None = None
        self._keeper_thread: threading.Thread | None = None
        self._keeper_wake_read, self._keeper_wake_write = os.pipe2(os.O_CLOEXEC)
        self._spare_cgroups: list[RunCgroup] = []  # made ahead, used by no run: removed at close

    @classmethod
    def start(cls, starter: JailStarter, policy: SandboxPolicy) -> WarmJail:
        """Start a jail for ``policy`` and wait for its spawner's hello."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        try:
            started = starter.start(policy, theirs.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        try:
            scope, spawner = _hello(ours, started)
            return cls(started, ours, scope, spawner)
        except BaseException:
            ours.close()
            started.kill()
            started.wait(KILL_TIMEOUT_SECONDS)
            started.release()
            raise

    # -- state -----------------------------------------------------------------------------

    @property
    def usable(self) -> bool:
        with self._lock:
            return not (self.retired or self.broken or self._closed)

    def idle_for(self, now: float) -> float:
        with self._lock:
            return now - self._idle_since if self._active == 0 else 0.0

    @property
    def active(self) -> int:
        with self._lock:
            return self._active

    def _finished_one(self, process: WarmProcess) -> None:
        with self._lock:
            self._processes.discard(process)
            self._active -= 1
            if self._active == 0:
                self._idle_since = time.monotonic()
            close = self._active == 0 and (self.retired or bool(self.broken))
        if close:
            self.close()

    def retire(self) -> None:
        """No new commands; close as soon as none is running."""
        with self._lock:
            self.retired = True
            close = self._active == 0
        if close:
            self.close()

    def fail(self, why: str) -> None:
        """The protocol broke down: end every command (its monitor kills what it started)
        and kill every process of the jail now."""
        with self._lock:
            if not self.broken:
                self.broken = why
            processes = list(self._processes)
            groups = [p.pid for p in processes if p.pid > 0]
        for process in processes:
            process.request(protocol.KILL)
        self.started.kill()
        if self.started.shares_host_pids:  # no PID namespace ends the commands with it
            for group in groups:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(group, signal.SIGKILL)

    # -- commands --------------------------------------------------------------------------

    def spawn(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        *,
        stdin: Stdio,
        stdout: Stdio,
        stderr: Stdio,
        limits: RunLimits | None,
    ) -> WarmCommand:
        """Start ``argv`` in this jail (its cwd and environment from ``policy``)."""
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        streams = _Streams(stdin, stdout, stderr)
        env = self.started.command_env(policy)
        planned = limits.planned if limits is not None else []
        try:
            with self._lock:
                if self.retired or self.broken or self._closed or self._spawner_gone():
                    raise _Stale()
                pid = self._ready_spare(limits)
                flags = protocol.FLAG_FRESH if self._active == 0 else ""
                direct = direct_exec(argv, env)  # bash's start-up skipped where it only execs
                message = protocol.request(
                    [os.fsencode(a) for a in argv],
                    [os.fsencode(f"{k}={v}") for k, v in env.items()],
                    os.fsencode(policy.cwd),
                    planned,
                    flags,
                    direct=[os.fsencode(a) for a in direct.argv] if direct else (),
                    shlvl=direct.shlvl.encode() if direct else b"",
                )
                fds = [theirs.fileno(), *streams.child_fds]
                self._send(message, fds)
                self._active += 1
                process = WarmProcess(self, channel, streams, pid)
                self._processes.add(process)
                self._prepare_next(limits.made_from if limits is not None else None)
        except BaseException:
            channel.close()
            streams.close_all()
            raise
        finally:
            theirs.close()
            streams.close_child_ends()
        return WarmCommand(self, process)

    def _ready_spare(self, limits: RunLimits | None) -> int:
        """The host pid of the spare command that will take the next request, checked (the
        jail user's uids) and in the run's cgroup. Holding the lock: one request at a time."""
        with self._spare_lock:
            prepared, self._prepared = self._prepared, None
            pid = self._checked(*self._next_spare()) if prepared is None else prepared.pid
        if prepared is not None and prepared.cgroup is not None:
            if limits is not None and limits.recipe == prepared.recipe:  # (none made yet)
                limits.adopt(prepared.cgroup, remove=self._remove_later)
                return pid
            self._spare_cgroups.append(prepared.cgroup)  # (another recipe: moved out below)
        if limits is not None and limits.cgroup is not None:
            limits.apply_cgroup(pid)
        return pid

    def _checked(self, pid: int, uid: int, gid: int) -> int:
        """``pid`` once its uids are the jail user's (a root launcher's jail); else the jail
        is killed and the run refused."""
        user = self.started.jail_user
        if user is not None:
            if (uid, gid) != (user.uid, user.gid):
                self.broken = f"a spare command ran as uid {uid}, gid {gid}"
                self.started.kill()  # (the lock may be held: no fail())
                raise SandboxUnavailable(
                    f"a command of the warm jail runs as uid {uid}, gid {gid}, not as the jail "
                    f"user ({user.describe()})",
                    fix="run `stockade doctor`; report this as a bug",
                )
            check_running_as(pid, user)
        return pid

    def _prepare_next(self, recipe: CgroupRecipe | None) -> None:
        """Have the keeper ready the next spare, in a cgroup of ``recipe`` when there is one
        (lock held)."""
        if self._keeper is None:
            self._keeper = queue.SimpleQueue()
            self._keeper_thread = threading.Thread(
                target=self._keep, args=(self._keeper,), name="stockade-warm-keeper",
                daemon=True,
            )  # fmt: skip
            self._keeper_thread.start()
        self._keeper.put(_NextSpare(recipe))

    def _remove_later(self, cgroup: RunCgroup) -> None:
        """Remove an emptied run cgroup on the keeper (now, once the jail is closing)."""
        with self._lock:
            keeper = self._keeper
            if keeper is not None:
                keeper.put(cgroup)
                return
        cgroup.remove()

    def _keep(self, requests: queue.SimpleQueue[_KeeperTask]) -> None:
        """The keeper: for each command that took a spare, check the next spare (and move it
        into a cgroup made for the next run) off the command's path - ``_ready_spare`` takes
        it; a failure here leaves it to ``_ready_spare``, which says what went wrong - and
        remove the groups of runs that ended. Ends at None, after what came before it."""
        while (task := requests.get()) is not None:
            if isinstance(task, RunCgroup):
                task.remove()
                continue
            recipe = task.recipe
            with self._spare_lock:
                if self._prepared is not None or self._closed or self.broken or self.retired:
                    continue
                try:
                    pid = self._checked(*self._next_spare(self._keeper_wake_read))
                except (_Stale, SandboxUnavailable):
                    continue  # the jail is broken now: the next spawn says so
                cgroup = None if recipe is None else _in_new_cgroup(recipe, pid)
                self._prepared = _PreparedSpare(pid, cgroup, recipe)

    def _next_spare(self, closing: int | None = None) -> tuple[int, int, int]:
        """(pid, uid, gid) of the spare's announcement, waiting for it if need be (the keeper
        also stops waiting when ``closing`` is readable: the jail is closing)."""
        control = self._control.fileno()
        watched = [control, self._spawner] + ([closing] if closing is not None else [])
        ready, _, _ = select.select(watched, [], [], START_TIMEOUT_SECONDS)
        if closing is not None and closing in ready:
            raise _Stale()
        if control not in ready:
            self.broken = "its spawner made no spare command"
            raise _Stale()
        try:
            data, ancillary, _flags, _address = self._control.recvmsg(64, socket.CMSG_SPACE(_UCRED))
        except OSError:
            data, ancillary = b"", []
        if data != b"%08x" % len(protocol.SPARE) + protocol.SPARE:
            self.broken = "its spawner said something else than a spare"
            raise _Stale()
        return _credentials(ancillary)

    def _spawner_gone(self) -> bool:
        return bool(select.select([self._spawner], [], [], 0)[0])

    def _send(self, message: bytes, fds: Sequence[int]) -> None:
        """The request in one write when it fits (the spare wakes once), its fds on the
        first byte."""
        try:
            sent = self._control.sendmsg(
                [message], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, _fd_bytes(fds))]
            )
            if sent < len(message):
                self._control.sendall(message[sent:])
        except OSError as error:
            self.broken = f"its spawner is gone ({error})"
            raise _Stale() from None

    # -- closing ---------------------------------------------------------------------------

    def close(self) -> None:
        """End the jail: the spawner exits at EOF and the jail with it; killed when it does
        not. Safe to call twice."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            keeper, self._keeper = self._keeper, None
        if keeper is not None:
            keeper.put(None)
            os.write(self._keeper_wake_write, b"x")  # a keeper waiting for a spare stops
            assert self._keeper_thread is not None
            self._keeper_thread.join()  # (after the removals queued before)
        prepared, self._prepared = self._prepared, None
        os.close(self._keeper_wake_read)
        os.close(self._keeper_wake_write)
        self._control.close()
        os.close(self._spawner)
        if not self.started.wait(KILL_TIMEOUT_SECONDS):
            self.started.kill()
            self.started.wait(KILL_TIMEOUT_SECONDS)
        self.started.release()
        if prepared is not None and prepared.cgroup is not None:
            self._spare_cgroups.append(prepared.cgroup)
        for cgroup in self._spare_cgroups:
            cgroup.remove()  # (the jail is gone: what was in them is too)
        self._spare_cgroups.clear()


class _Stale(Exception):
    """This jail cannot take commands any more; the pool starts another one."""


class _PreparedSpare(NamedTuple):
    """The next spare, its uids checked, in ``cgroup`` made from ``recipe`` for the next run
    (None: no cgroup wanted, or moving it failed)."""

    pid: int
    cgroup: RunCgroup | None
    recipe: CgroupRecipe | None


def _in_new_cgroup(recipe: CgroupRecipe, pid: int) -> RunCgroup | None:
    """A cgroup made from ``recipe`` with ``pid`` moved in; None when either failed (the
    run then does it itself, and says why when it fails again)."""
    try:
        made = recipe.make()
    except SandboxUnavailable:
        return None
    try:
        made.add(pid)
    except OSError:
        made.remove()
        return None
    return made


class _NextSpare(NamedTuple):
    """A keeper task: ready the next spare (in a cgroup of ``recipe``, if any)."""

    recipe: CgroupRecipe | None


_KeeperTask = _NextSpare | RunCgroup | None  # None: stop


def _hello(control: socket.socket, started: StartedJail) -> tuple[bool, int]:
    """Wait for the spawner's first message; its host uid must be the jail user's. Whether
    it scopes each command, and its host pid."""
    ready, _, _ = select.select([control], [], [], START_TIMEOUT_SECONDS)
    if not ready:
        raise SandboxUnavailable(
            "the warm jail's spawner did not start", fix=_FIX_RUN_DOCTOR + _COLD_FIX
        )
    data, ancillary, _flags, _address = control.recvmsg(64, socket.CMSG_SPACE(_UCRED))
    if not data.startswith(b"%08x" % (len(data) - 8)) or protocol.SPAWNER_READY_PREFIX not in data:
        detail = started.failure()
        raise SandboxUnavailable(
            "the warm jail could not be set up" + (f": {detail}" if detail else ""),
            fix=_FIX_RUN_DOCTOR + _COLD_FIX,
        )
    pid, uid, gid = _credentials(ancillary)
    user = started.jail_user
    if user is not None:
        if (uid, gid) != (user.uid, user.gid):
            raise SandboxUnavailable(
                f"the warm jail's spawner runs as uid {uid}, gid {gid}, not as the jail user "
                f"({user.describe()})",
                fix="run `stockade doctor`; report this as a bug",
            )
        check_running_as(pid, user)
    return data.endswith(b"scope=1"), pid


_FIX_RUN_DOCTOR: Final = "run `stockade doctor`"
_COLD_FIX: Final = "; STOCKADE_WARM=0 runs every command in a fresh jail"


def _credentials(ancillary: list[tuple[int, int, bytes]]) -> tuple[int, int, int]:
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= _UCRED:
            return (
                int.from_bytes(data[0:4], "little", signed=True),
                int.from_bytes(data[4:8], "little"),
                int.from_bytes(data[8:12], "little"),
            )
    raise SandboxUnavailable(
        "the warm jail sent a message without the kernel's credentials",
        fix="run `stockade doctor`; report this as a bug",
    )


def _fd_bytes(fds: Sequence[int]) -> bytes:
    return b"".join(fd.to_bytes(4, "little") for fd in fds)


class _Streams:
    """The command's stdio as the runner asked for it: fds to send, pipe ends to keep."""

    def __init__(self, stdin: Stdio, stdout: Stdio, stderr: Stdio) -> None:
        self.child_fds: list[int] = []
        self._child_owned: list[int] = []  # fds we made for the child (closed once sent)
        self.parent: list[IO[bytes] | None] = []
        try:
            for index, spec in enumerate((stdin, stdout, stderr)):
                if spec == subprocess.STDOUT and index == 2:
                    self.child_fds.append(self.child_fds[1])
                    self.parent.append(None)
                    continue
                self._add(index, spec)
        except BaseException:
            self.close_all()
            raise

    def _add(self, index: int, spec: Stdio) -> None:
        if spec is None:
            self.child_fds.append(_inherited(index, self._child_owned))
            self.parent.append(None)
        elif spec == subprocess.PIPE:
            read, write = os.pipe2(os.O_CLOEXEC)
            child, mine = (read, write) if index == 0 else (write, read)
            self._child_owned.append(child)
            self.child_fds.append(child)
            self.parent.append(open(mine, "wb" if index == 0 else "rb"))  # noqa: SIM115
        elif spec == subprocess.DEVNULL:
            fd = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
            self._child_owned.append(fd)
            self.child_fds.append(fd)
            self.parent.append(None)
        elif isinstance(spec, int):
            self.child_fds.append(spec)
            self.parent.append(None)
        else:
            self.child_fds.append(spec.fileno())
            self.parent.append(None)

    def close_child_ends(self) -> None:
        owned, self._child_owned = self._child_owned, []
        for fd in owned:
            os.close(fd)

    def close_all(self) -> None:
        self.close_child_ends()
        for stream in self.parent:
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _inherited(index: int, owned: list[int]) -> int:
    """This process's own stdio fd ``index``, or /dev/null when it is closed."""
    try:
        os.fstat(index)
        return index
    except OSError:
        fd = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
        owned.append(fd)
        return fd


class WarmProcess:
    """The command's side of ``subprocess.Popen`` that the runner uses: its pipes, ``wait``,
    ``poll``, ``communicate``. ``returncode`` is the command's (negative: killed by that
    signal); ``pid`` is its host pid."""

    def __init__(self, jail: WarmJail, channel: socket.socket, streams: _Streams, pid: int) -> None:
        self.stdin, self.stdout, self.stderr = streams.parent
        self.pid = pid
        self.returncode: int | None = None
        self.started = False  # the monitor said the command exec'd
        self.setup_failed = False  # ... or that the jail could not set it up (cwd, limits)
        self.lost = ""  # why the monitor went away without a report
        self._jail = jail
        self._channel = channel
        self._reading = threading.Lock()
        self._exited = threading.Event()
        self._kill_deadline: float | None = None
        self._counted = True  # holds one of the jail's active slots

    # -- the gate --------------------------------------------------------------------------

    # -- waiting ---------------------------------------------------------------------------

    def poll(self) -> int | None:
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def wait(self, timeout: float | None = None) -> int:
        """The command's return code once its monitor reported it; raises
        ``subprocess.TimeoutExpired`` like Popen."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._reading.acquire(timeout=-1 if remaining is None else remaining):
                try:
                    if self.returncode is None:
                        self._read_for(remaining)
                finally:
                    self._reading.release()
            late = deadline is not None and time.monotonic() >= deadline
            if self.returncode is None and late:
                raise subprocess.TimeoutExpired("warm command", timeout or 0.0)
        return self.returncode

    def _read_for(self, remaining: float | None) -> None:
        """Read the monitor's messages for up to ``remaining`` seconds (None: until the
        report). Past the kill deadline the whole jail is killed: its EOF ends the wait."""
        limit = remaining
        if self._kill_deadline is not None:
            until_kill = max(0.0, self._kill_deadline - time.monotonic())
            limit = until_kill if limit is None else min(limit, until_kill)
        ready, _, _ = select.select([self._channel], [], [], limit)
        if not ready:
            if self._kill_deadline is not None and time.monotonic() >= self._kill_deadline:
                self._jail.fail("a command's monitor did not answer a kill request")
                self._kill_deadline = None
            return
        try:
            data = self._channel.recv(64)
        except OSError:
            data = b""
        self._handle(data)

    def _handle(self, data: bytes) -> None:
        if not data:
            self.lost = self._jail.broken or "the command's monitor in the warm jail died"
            self._jail.fail(self.lost)  # its processes are nobody's now: end the jail
            self._set_returncode(-9)
        elif data.startswith(protocol.STARTED):
            self.started = True
        elif data == protocol.SETUP_FAILED:
            self.setup_failed = True
        elif data.startswith(protocol.LEFTOVER_PREFIX):
            self._jail.fail("a command's processes could not all be killed")
        elif data.startswith(protocol.EXIT_PREFIX):
            try:
                code = int(data[len(protocol.EXIT_PREFIX) :])
            except ValueError:
                code = protocol.EXIT_NOT_RUN
            self._set_returncode(code)

    def _set_returncode(self, code: int) -> None:
        self.returncode = code
        self._exited.set()
        if self._counted:
            self._counted = False
            self._jail._finished_one(self)

    def communicate(
        self, input: bytes | None = None, timeout: float | None = None
    ) -> tuple[bytes, bytes]:
        """Feed stdin, read stdout and stderr to EOF, wait (what ``Popen.communicate`` does,
        for pipes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if self.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                if input:
                    self.stdin.write(input)
                self.stdin.close()
        chunks: dict[int, list[bytes]] = {}
        streams = [s for s in (self.stdout, self.stderr) if s is not None]
        for stream in streams:
            chunks[stream.fileno()] = []
        while streams:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired("warm command", timeout or 0.0)
            ready, _, _ = select.select(streams, [], [], remaining)
            for stream in ready:
                data = os.read(stream.fileno(), 65536)
                if data:
                    chunks[stream.fileno()].append(data)
                else:
                    streams.remove(stream)
        out = b"".join(chunks[self.stdout.fileno()]) if self.stdout is not None else b""
        err = b"".join(chunks[self.stderr.fileno()]) if self.stderr is not None else b""
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(remaining)
        for pipe in (self.stdout, self.stderr):
            if pipe is not None:
                pipe.close()
        return out, err

    # -- requests to the monitor -----------------------------------------------------------

    def request(self, message: bytes) -> None:
        if self.returncode is not None:
            return
        with contextlib.suppress(OSError):  # the monitor is gone: wait() reports it
            self._channel.send(message)
        if message == protocol.KILL and self._kill_deadline is None:
            self._kill_deadline = time.monotonic() + KILL_TIMEOUT_SECONDS

    def close(self) -> None:
        self._channel.close()
        if self._counted:  # never reported: the jail cannot know what is left of it
            self._counted = False
            self._jail.fail("a command was abandoned before it reported")
            self._jail._finished_one(self)


class WarmCommand:
    """A command running in a warm jail, as the runner sees any jail (``backend.Jail``)."""

    warm = True  # (cold jails have no such attribute)

    def __init__(self, jail: WarmJail, process: WarmProcess) -> None:
        self.jail = jail
        self.process = process
        self._closed = False

    def signal_command(self, signum: int) -> None:
        self.process.request(protocol.SIGNAL_PREFIX + b"%d" % signum)

    def kill_all(self) -> None:
        self.process.request(protocol.KILL)

    def exit_code(self, returncode: int) -> int:
        if self.process.setup_failed:
            raise SandboxUnavailable(
                "the warm jail could not set up the command; its message is above",
                fix=_FIX_RUN_DOCTOR + _COLD_FIX,
            )
        if self.process.lost:
            raise SandboxUnavailable(
                f"the warm jail failed while the command ran: {self.process.lost}; the jail "
                "was killed with every process in it",
                fix=_FIX_RUN_DOCTOR + _COLD_FIX,
            )
        return 128 - returncode if returncode < 0 else returncode

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.process.close()


T = TypeVar("T")


class _Pending(Generic[T]):
    """The result of a call made on the pool's thread, once it is there."""

    def __init__(self, call: Callable[[], T]) -> None:
        self.call = call
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._value = self.call()
        except BaseException as error:  # handed to whoever waits for the result
            self._error = error
        finally:
            self._done.set()

    def result(self) -> T:
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


class _LongLivedThread:
    """One thread that lives as long as the pool and makes its calls in order: bwrap's
    ``--die-with-parent`` (PR_SET_PDEATHSIG) fires when the *thread* that forked it exits."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[_Pending[WarmJail] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, call: Callable[[], WarmJail]) -> _Pending[WarmJail]:
        pending = _Pending(call)
        with self._lock:
            if self._thread is None:
                _register_fork_hooks_first()
                self._thread = threading.Thread(
                    target=self._serve, name="stockade-warm", daemon=True
                )
                self._thread.start()
        self._queue.put(pending)
        return pending

    def _serve(self) -> None:
        while (pending := self._queue.get()) is not None:
            pending.run()

    def shutdown(self) -> None:
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join()


def _register_fork_hooks_first() -> None:
    """Import the stdlib modules that register a lock with ``os.register_at_fork`` before a
    thread of ours forks. CPython runs a fork's *before* hooks and its *after* hooks from two
    copies of the list: a module imported by another thread in between (the MCP server's
    first ``asyncio.to_thread`` imports ``concurrent.futures.thread``) gets only its
    ``after_in_parent`` hook run, which releases a lock that fork never took - while the
    importing thread holds it ("RuntimeError: release unlocked lock" in ``submit``)."""
    import concurrent.futures.thread  # noqa: F401
    import logging  # noqa: F401


class WarmPool:
    """The warm jails of one Sandbox: looked up by plan, started on a long-lived thread
    (bwrap's ``--die-with-parent`` follows the thread that forked it), closed when idle."""

    def __init__(self, starter: JailStarter) -> None:
        self._starter = starter
        self._key_of = starter.key
        self._jails: list[WarmJail] = []  # usable ones first; retired ones close themselves
        self._retired: list[WarmJail] = []
        self._starting: dict[Hashable, _Pending[WarmJail]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._thread = _LongLivedThread()
        self._reaper: threading.Thread | None = None

    def spawn(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        *,
        stdin: Stdio = None,
        stdout: Stdio = None,
        stderr: Stdio = None,
        limits: RunLimits | None = None,
    ) -> WarmCommand:
        """Start ``argv`` in the warm jail for ``policy`` (made now if no jail matches the
        policy exactly). ``policy``'s protection was looked up just now (the Sandbox does it
        once per command, for the guard and for this). Raises ColdOnly when the command
        cannot be served warm."""
        fresh = policy
        reason = self._starter.cold_reason(fresh, (stdin, stdout, stderr))
        if reason is not None:
            raise ColdOnly(reason)
        for _attempt in range(3):
            jail = self._jail_for(fresh)
            try:
                return jail.spawn(
                    policy, argv, stdin=stdin, stdout=stdout, stderr=stderr, limits=limits
                )
            except _Stale:
                self._retire(jail)
        raise SandboxUnavailable(
            "the warm jail kept failing before it could start the command",
            fix=_FIX_RUN_DOCTOR + _COLD_FIX,
        )

    def prewarm(self, policy: SandboxPolicy) -> None:
        """Start the jail for ``policy`` in the background (when none is there or coming)."""
        fresh = policy.with_fresh_protection()
        if self._starter.cold_reason(fresh, (subprocess.DEVNULL,) * 3) is not None:
            return
        key = self._key_of(fresh)
        with self._lock:
            if self._closed or key in self._starting:
                return
            if any(jail.key == key and jail.usable for jail in self._jails):
                return
            self._starting[key] = self._thread.submit(lambda: self._start(key, fresh))

    def _start(self, key: Hashable, policy: SandboxPolicy) -> WarmJail:
        try:
            jail = WarmJail.start(self._starter, policy)
        finally:
            with self._lock:
                self._starting.pop(key, None)
        with self._lock:
            if not self._closed:
                self._jails.append(jail)
                self._ensure_reaper()
                return jail
        jail.close()
        raise SandboxUnavailable("this sandbox is closed", fix="run commands before close()")

    def _jail_for(self, fresh: SandboxPolicy) -> WarmJail:
        """A jail that matches ``fresh`` (protected paths looked up now), started if need be."""
        policy = fresh
        key = self._key_of(policy)
        while True:
            with self._lock:
                if self._closed:
                    raise SandboxUnavailable("this sandbox is closed", fix="run before close()")
                stale = []
                found = None
                for jail in self._jails:
                    if not jail.usable:
                        stale.append(jail)
                    elif jail.key == key and found is None:
                        found = jail
                pending = self._starting.get(key)
                if found is None and pending is None:
                    pending = self._starting[key] = self._thread.submit(
                        lambda: self._start(key, policy)
                    )
            for jail in stale:
                self._retire(jail)
            if found is not None:
                if found.started.matches(policy):
                    return found
                self._retire(found)  # a fresh jail would be built differently now
                continue
            assert pending is not None
            jail = pending.result()
            if jail.started.matches(policy):
                return jail
            self._retire(jail)

    def _retire(self, jail: WarmJail) -> None:
        with self._lock:
            if jail in self._jails:
                self._jails.remove(jail)
                self._retired.append(jail)
            self._retired = [j for j in self._retired if j.active or j is jail]
        jail.retire()

    def _ensure_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(
                target=self._reap_idle, name="stockade-warm-idle", daemon=True
            )
            self._reaper.start()

    def _reap_idle(self) -> None:
        with self._lock:
            while not self._closed:
                now = time.monotonic()
                idle = [j for j in self._jails if j.idle_for(now) >= IDLE_SECONDS]
                if idle:
                    self._lock.release()
                    try:
                        for jail in idle:
                            self._retire(jail)
                    finally:
                        self._lock.acquire()
                    continue
                self._wake.wait(IDLE_SECONDS / 4)

    def jails(self) -> list[WarmJail]:
        """The jails taking commands now."""
        with self._lock:
            return [jail for jail in self._jails if jail.usable]

    def close(self) -> None:
        """Close every jail (the Sandbox killed the commands that were still running)."""
        with self._lock:
            self._closed = True
            jails, self._jails = [*self._jails, *self._retired], []
            self._retired = []
            self._wake.notify_all()
        self._thread.shutdown()
        for jail in jails:
            jail.close()
