"""The per-run launcher of backends without a PID namespace (Landlock, none).

Without a PID namespace nothing ends a run's processes when its command ends: a ``setsid`` or
daemonised child, or a background job, outlives ``stockade run`` whenever no cgroup can be made
(an unprivileged user, most containers). So every such run gets a launcher: a fork of stockade
made in ``subprocess``'s child, before the command, which

* is ``PR_SET_CHILD_SUBREAPER``: every orphan of the run becomes its child, so the run's
  processes are exactly the launcher's descendants, whatever they do (setsid, double fork);
* forks the command (which confines itself in ``confine`` and execs) and, when the command
  ends, kills every descendant (its process group first), reaps them, and exits with the
  command's status (128+N for signal N);
* takes requests from stockade on a pipe: a signal number to deliver to the command's process
  group, or SIGKILL to end the whole run. When stockade dies the pipe reads EOF and the
  launcher ends the run: the run is ended even when stockade is killed;
* hosts the Landlock backend's seccomp supervisor (``supervisor.py``).

It stays Python in a forked copy of stockade (an exec of a fresh interpreter would cost more
than the rest of the run), closes every fd it does not need (it holds none of stockade's
pipes, sockets or databases), and touches nothing but os, signal and ctypes state.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import select
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, NamedTuple, NoReturn

from stockade.errors import SandboxUnavailable
from stockade.sandbox.backend import Stdio

KILL_DEADLINE_SECONDS: Final = 5.0  # processes in uninterruptible sleep are left after this
_PR_SET_CHILD_SUBREAPER: Final = 36
_FAILED_TO_START: Final = 127
_MAX_FD: Final = 1 << 20

_libc = ctypes.CDLL(None, use_errno=True)


class Supervision(NamedTuple):
    """How a command is put under a seccomp supervisor: ``install`` runs in the command's
    process (loads the filter, returns the listener); ``serve`` runs in the launcher and
    returns the object it polls and asks to ``handle()`` notifications."""

    install: Callable[[], int]
    serve: Callable[[int], Any]


class LauncherJail:
    """A command started through a launcher (see the module docstring)."""

    def __init__(self, process: subprocess.Popen[bytes], control: int, status: int) -> None:
        self.process = process
        self._control = control
        self._status = status
        os.set_blocking(status, False)
        self._pending = b""
        self._closed = False
        self.report: dict[str, Any] = {}

    def _request(self, signum: int) -> None:
        if self._control < 0:
            return
        try:
            os.write(self._control, bytes([signum]))
        except BrokenPipeError:
            self._launcher_gone()
        except OSError:  # full (it is busy) or closed: it acts on what it already has
            pass

    def _launcher_gone(self) -> None:
        """The launcher closed its end: it ended the run and reported, or it was killed. In
        the second case end what we can reach, the command's process group."""
        self._read_reports()
        command = self.report.get("command")
        if "exit" not in self.report and "error" not in self.report and command:
            with contextlib.suppress(OSError):
                os.killpg(int(command), signal.SIGKILL)

    def signal_command(self, signum: int) -> None:
        self._request(signum)

    def kill_all(self) -> None:
        self._request(signal.SIGKILL)

    def exit_code(self, returncode: int) -> int:
        """The command's status as the launcher reported it."""
        self._read_reports()
        if "error" in self.report:
            raise SandboxUnavailable(
                f"the sandbox launcher failed: {self.report['error']}",
                fix="run `stockade doctor`; report this with `stockade doctor --json`",
            )
        if "exit" in self.report:
            return int(self.report["exit"])
        if returncode < 0:  # the launcher itself was killed: the command with it
            self._launcher_gone()
            return 128 - returncode
        raise SandboxUnavailable(
            f"the sandbox launcher ended without a report (status {returncode})",
            fix="run `stockade doctor`; report this with `stockade doctor --json`",
        )

    def _read_reports(self) -> None:
        """Merge the launcher's records (one JSON object a line) read so far into report."""
        if self._status < 0:
            return
        with contextlib.suppress(OSError):
            while chunk := os.read(self._status, 65536):
                self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict):
                    self.report.update(record)

    def close(self) -> None:
        """Release the pipes; a launcher still running reads EOF and ends the run."""
        if self._closed:
            return
        self._closed = True
        for fd in (self._control, self._status):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._control = self._status = -1


def launch(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str | os.PathLike[str],
    stdin: Stdio = None,
    stdout: Stdio = None,
    stderr: Stdio = None,
    confine: Sequence[Callable[[], None]] = (),
    supervision: Supervision | None = None,
    pass_fds: Sequence[int] = (),
) -> LauncherJail:
    """Start ``argv`` under a launcher. ``confine`` runs in the command's own process before
    exec (limits, Landlock), then the supervised filter is installed when ``supervision``;
    ``pass_fds``: more fds the command inherits (a warm jail's control socket).

    Raises what ``subprocess.Popen`` raises: a failing ``confine`` step is a SubprocessError,
    a missing program a FileNotFoundError; no process is left in either case.
    """
    control_read, control_write = os.pipe()
    status_read, status_write = os.pipe()
    os.set_blocking(control_write, False)
    plan = _Plan(control_read, status_write, tuple(confine), supervision)
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            preexec_fn=plan.split,
            pass_fds=tuple(pass_fds),
        )
    except BaseException:
        for fd in (control_write, status_read):
            os.close(fd)
        raise
    finally:
        os.close(control_read)
        os.close(status_write)
    return LauncherJail(process, control_write, status_read)


class _Plan(NamedTuple):
    control: int  # read end of stockade's request pipe
    status: int  # write end of the report pipe
    confine: tuple[Callable[[], None], ...]
    supervision: Supervision | None

    def split(self) -> None:
        """In subprocess's child: become the launcher, and let a fork of us be the command.

        The fork returns from here (subprocess then closes fds and execs the command); the
        launcher never returns."""
        if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        handoff = socket.socketpair() if self.supervision is not None else None
        command = os.fork()
        if command == 0:
            self._become_command(handoff)
            return
        _Launcher(self, command, handoff).run()

    def _become_command(self, handoff: tuple[socket.socket, socket.socket] | None) -> None:
        os.setsid()  # its own session and group: the group is what signals go to
        for step in self.confine:
            step()
        if self.supervision is None or handoff is None:
            return
        handoff[0].close()
        listener = self.supervision.install()
        try:
            socket.send_fds(handoff[1], [b"L"], [listener])
        finally:
            os.close(listener)  # the command must never hold its own listener
            handoff[1].close()


class _Launcher:
    """The launcher's loop: serve notifications and requests until the command ends, then end
    every other process of the run and report."""

    def __init__(
        self,
        plan: _Plan,
        command: int,
        handoff: tuple[socket.socket, socket.socket] | None,
    ) -> None:
        self.plan = plan
        self.command = command
        self.command_status: int | None = None
        self.stop = False
        self.supervisor: Any = None
        self.handoff = handoff
        self._wake = self._waker = -1

    def run(self) -> NoReturn:
        gc.disable()  # a collection would touch, and so copy, all of stockade's heap pages
        report: dict[str, Any] = {}
        with contextlib.suppress(OSError):  # first: who to end if the launcher itself dies
            os.write(self.plan.status, json.dumps({"command": self.command}).encode() + b"\n")
        try:
            listener = self._receive_listener()
            self._keep_only({self.plan.control, self.plan.status, listener})
            self._wake, self._waker = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
            self._install_signals()
            if listener >= 0 and self.plan.supervision is not None:
                self.supervisor = self.plan.supervision.serve(listener)
            self._serve(listener)
            report["killed"] = self._end_run()
            report["exit"] = self._exit_code()
        except BaseException as error:  # never leave the run behind, say why
            with contextlib.suppress(BaseException):
                self._end_run()
            report = {"error": f"{type(error).__name__}: {error}"}
        if self.supervisor is not None:
            report["denied"] = self.supervisor.denied
            report["denials"] = self.supervisor.denials
            report["supervised"] = self.supervisor.handled
        with contextlib.suppress(OSError):
            os.write(self.plan.status, json.dumps(report).encode() + b"\n")
        os._exit(int(report.get("exit", _FAILED_TO_START)) & 0xFF)

    def _receive_listener(self) -> int:
        if self.handoff is None:
            return -1
        ours, theirs = self.handoff
        theirs.close()
        try:
            _, fds, _, _ = socket.recv_fds(ours, 16, 1)
        except OSError:
            fds = []
        ours.close()
        return fds[0] if fds else -1  # none: the command failed before its filter

    def _keep_only(self, keep: set[int]) -> None:
        """Close every fd but `keep`; stdio becomes /dev/null (the command has its own)."""
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            if fd != null:
                os.dup2(null, fd)
        keep = {fd for fd in keep if fd >= 0} | {0, 1, 2}
        low = 3
        for fd in sorted(keep | {_MAX_FD}):
            if fd >= low:
                os.closerange(low, fd)
                low = fd + 1

    def _install_signals(self) -> None:
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # stockade gone: keep ending the run
        signal.set_wakeup_fd(self._waker, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)

        def end(signum: int, frame: object) -> None:
            self.stop = True

        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, end)

    def _serve(self, listener: int) -> None:
        poller = select.poll()
        poller.register(self.plan.control, select.POLLIN)
        poller.register(self._wake, select.POLLIN)
        if self.supervisor is not None:
            poller.register(listener, select.POLLIN)
        ended = self._reap()  # the SIGCHLD handler is in place: later exits wake the poll
        while not self.stop and not ended:
            for fd, events in poller.poll():
                if fd == listener:
                    if events & select.POLLIN:
                        self.supervisor.handle()
                    elif events & (select.POLLHUP | select.POLLERR):
                        poller.unregister(listener)  # no process uses the filter any more
                elif fd == self.plan.control:
                    self._requests(poller)
                else:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self._wake, 4096)
                    ended = self._reap()

    def _requests(self, poller: select.poll) -> None:
        data = os.read(self.plan.control, 256)
        if not data:  # stockade closed the jail, or died
            self.stop = True
            poller.unregister(self.plan.control)
            return
        for signum in data:
            if signum == signal.SIGKILL:
                self.stop = True
            elif self.command_status is None:
                with contextlib.suppress(OSError):
                    os.killpg(self.command, signum)

    def _reap(self) -> bool:
        """Reap what has exited; True once the command has."""
        if self.command_status is None:
            # Seen before it is reaped, its process group id cannot have been reused yet.
            with contextlib.suppress(ChildProcessError):
                if os.waitid(os.P_PID, self.command, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                    with contextlib.suppress(OSError):
                        os.killpg(self.command, signal.SIGKILL)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            if pid == self.command:
                self.command_status = status
        return self.command_status is not None

    def _end_run(self) -> int:
        """Kill every descendant and reap them; how many were killed."""
        if self.command_status is None:
            with contextlib.suppress(OSError):
                os.killpg(self.command, signal.SIGKILL)
        if self._wake < 0:
            self._wake, self._waker = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        killed: set[int] = set()
        deadline = time.monotonic() + KILL_DEADLINE_SECONDS
        me = os.getpid()
        while True:
            self._reap()
            try:
                os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return len(killed - {self.command})  # no child: no descendant either
            for pid in descendants(me):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    killed.add(pid)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return len(killed - {self.command})
            select.select([self._wake], [], [], remaining)  # until the next child exits
            with contextlib.suppress(BlockingIOError):
                os.read(self._wake, 4096)

    def _exit_code(self) -> int:
        status = self.command_status
        if status is None:
            return 128 + signal.SIGKILL
        if os.WIFSIGNALED(status):
            return 128 + os.WTERMSIG(status)
        return os.WEXITSTATUS(status)


def descendants(ancestor: int) -> set[int]:
    """Every process below `ancestor`, from the parent links in /proc (one pass)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat_file:
                fields = stat_file.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    pending = [ancestor]
    while pending:
        for child in children.get(pending.pop(), []):
            if child not in found:
                found.add(child)
                pending.append(child)
    return found
