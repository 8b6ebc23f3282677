"""A confined command running in the background: bounded incremental output, kill, wait.

``Sandbox.start()`` spawns the command (same backend, limits and post-run guard as
``Sandbox.run``) and hands it to a :class:`RunningCommand`, whose reader thread drains both
pipes so the command never blocks on a full pipe. Output is kept in a *window* per stream
that ``read_new()`` empties: between two reads at most ``limit`` bytes per stream are kept
(the first and last halves, with a marker saying how much was left out), and everything is
also appended to a log file in the session's output directory, so nothing is lost.

When the command ends (or is killed, or reaches its deadline) the reader thread releases
what the run held - the jail's fds, the run's cgroup - and runs the post-run guard. What the
sandbox denied, and what the guard moved aside, is explained in stockade's own lines in the
stderr window (``note``).
"""

from __future__ import annotations

import collections
import os
import select
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from stockade.errors import SandboxUnavailable
from stockade.sandbox.backend import Jail
from stockade.sandbox.limits import Limits, RunLimits, explain_exit
from stockade.sandbox.posture import Posture
from stockade.spills import SpillFile, create_private_file

if TYPE_CHECKING:
    from stockade.sandbox.denials import Explainer

READ_CHUNK = 65536
KILL_RETRY_SECONDS = 0.05  # between kill attempts while the tree is still there


class OutputWindow:
    """The output of one stream since the last ``take()``, bounded to ``limit`` bytes: the
    first and last halves are kept and the middle is counted, never stored."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head = bytearray()
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size = 0
        self._omitted = 0

    def write(self, chunk: bytes) -> None:
        half = self.limit // 2
        if len(self._head) < half:
            room = half - len(self._head)
            self._head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        keep = self.limit - half
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size > keep:
            first = self._tail[0]
            excess = self._tail_size - keep
            if len(first) <= excess:
                self._tail.popleft()
                self._tail_size -= len(first)
                self._omitted += len(first)
            else:
                self._tail[0] = first[excess:]
                self._tail_size -= excess
                self._omitted += excess

    def take(self, log_path: Path | None) -> tuple[str, int]:
        """The window as text (with a marker where bytes were left out) and how many bytes were
        left out; the window is empty afterwards."""
        head, tail, omitted = bytes(self._head), b"".join(self._tail), self._omitted
        self._head, self._tail, self._tail_size, self._omitted = (
            bytearray(),
            collections.deque(),
            0,
            0,
        )
        if not omitted:
            return (head + tail).decode("utf-8", errors="replace"), 0
        where = f"; full output in {log_path}" if log_path is not None else ""
        marker = f"\n[stockade: output truncated - {omitted} bytes omitted{where}]\n"
        return (head + marker.encode() + tail).decode("utf-8", errors="replace"), omitted


@dataclass(frozen=True)
class NewOutput:
    """What a background command wrote since the previous read, and its state now."""

    stdout: str
    stderr: str
    running: bool
    exit_code: int | None  # None while running
    truncated: bool  # some of this window was left out (the log files have all of it)
    timed_out: bool = False
    limit_message: str | None = None
    stdout_path: Path | None = None
    stderr_path: Path | None = None


class RunningCommand:
    """One confined command started by ``Sandbox.start()``. Thread-safe."""

    def __init__(
        self,
        *,
        argv: tuple[str, ...],
        jail: Jail,
        run_limits: RunLimits,
        cleanup: Callable[[], object],
        posture: Posture,
        limits: Limits,
        timeout: float | None,
        log_stem: Path,
        terminate: Callable[[Jail], None],
        explainer: Explainer | None = None,
    ) -> None:
        self.argv = argv
        self.posture = posture
        self.warm: bool = getattr(jail, "warm", False)  # in a warm jail (sandbox/warm.py)
        self.pid = jail.process.pid
        self.started = time.monotonic()
        self.timeout = timeout
        self._jail = jail
        self._run_limits = run_limits
        self._cleanup = cleanup
        self._explainer = explainer
        self._limits = limits
        self._terminate = terminate
        self._lock = threading.Lock()
        self._signal_lock = threading.Lock()  # held while signalling and while reaping
        self._done = threading.Event()
        self._stop_requested = False
        self._timed_out = False
        self._exit_code: int | None = None
        self._ended: float | None = None
        self._limit_message: str | None = None
        limit = limits.output_bytes_per_stream
        self._windows = {"stdout": OutputWindow(limit), "stderr": OutputWindow(limit)}
        self._log_paths = {
            "stdout": log_stem.with_name(log_stem.name + ".stdout"),
            "stderr": log_stem.with_name(log_stem.name + ".stderr"),
        }
        self._truncated = False
        self._reader = threading.Thread(
            target=self._drain, name=f"stockade-bg-{self.pid}", daemon=True
        )
        self._reader.start()

    # -- the reader thread ----------------------------------------------------------------

    def _drain(self) -> None:
        process = self._jail.process
        deadline = None if self.timeout is None else self.started + self.timeout
        logs: dict[str, SpillFile] = {}
        try:
            with selectors.DefaultSelector() as selector:
                for name, pipe in (("stdout", process.stdout), ("stderr", process.stderr)):
                    if pipe is not None:
                        selector.register(pipe, selectors.EVENT_READ, name)
                while selector.get_map():
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        self._timed_out = True
                        self._signal_safely(self._terminate)
                        deadline = None  # keep draining what the dying tree still writes
                        continue
                    for key, _ in selector.select(remaining):
                        chunk = os.read(key.fd, READ_CHUNK)
                        if not chunk:
                            selector.unregister(key.fileobj)
                            key.fileobj.close()  # type: ignore[union-attr]
                            continue
                        self._store(key.data, chunk, logs)
            self._wait_for_exit(deadline)
        except BaseException:
            self._signal_safely(lambda jail: jail.kill_all())  # never leave it running unwatched
            raise
        finally:
            for log in logs.values():
                with suppress(OSError):
                    log.close()
            self._finish()

    def _store(self, stream: str, chunk: bytes, logs: dict[str, SpillFile]) -> None:
        log = logs.get(stream)
        if log is None:  # a fresh private dir (spills.py): never an existing file or symlink
            log = logs[stream] = SpillFile(
                create_private_file(self._log_paths[stream]),
                self._log_paths[stream],
                self._limits.output_spill_bytes,
            )
        log.write(chunk)
        with self._lock:
            self._windows[stream].write(chunk)
        if stream == "stderr" and self._explainer is not None:
            for line in self._explainer.feed(chunk):
                self.note(line)

    def note(self, line: str) -> None:
        """Add one of stockade's own lines (a denial explained, planted code moved aside) to
        the stderr window."""
        with self._lock:
            self._windows["stderr"].write(f"{line}\n".encode())

    def _wait_for_exit(self, deadline: float | None) -> None:
        """Wait until the launcher exits *without reaping it* (a pidfd turns readable), then
        reap it under the signal lock: a pid is never signalled after it could be reused. A
        command of a warm jail is signalled through its monitor, never by pid: it is waited
        for directly."""
        process = self._jail.process
        if not isinstance(process, subprocess.Popen):
            while True:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                try:
                    process.wait(timeout=remaining)
                    return
                except subprocess.TimeoutExpired:
                    self._timed_out = True
                    self._signal_safely(self._terminate)
                    deadline = None
        with self._signal_lock:
            if process.returncode is not None:
                return  # already reaped (by the grace-period wait of a terminate)
            pidfd = os.pidfd_open(process.pid)
        try:
            while process.returncode is None:
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([pidfd], [], [], remaining)
                if ready:
                    break
                self._timed_out = True
                self._signal_safely(self._terminate)
                deadline = None
        finally:
            os.close(pidfd)
        with self._signal_lock:
            process.wait()

    def _signal_safely(self, action: Callable[[Jail], None]) -> None:
        with self._signal_lock:
            if self._jail.process.returncode is None:
                action(self._jail)

    def _finish(self) -> None:
        """Record how it ended, release the jail and the cgroup, run the post-run guard."""
        from stockade.runner import TIMEOUT_EXIT_CODE

        code: int
        error: str | None = None
        try:
            with self._signal_lock:
                returncode = self._jail.process.wait()
            code = TIMEOUT_EXIT_CODE if self._timed_out else self._jail.exit_code(returncode)
        except SandboxUnavailable as failure:
            code, error = failure.exit_code, f"stockade: {failure}\n"
        finally:
            self._jail.close()
            report = self._run_limits.finish()
            if self._explainer is not None:
                for line in self._explainer.flush():
                    self.note(line)
            self._cleanup()
        with self._lock:
            if error is not None:
                self._windows["stderr"].write(error.encode())
            self._exit_code = code
            self._ended = time.monotonic()
            self._limit_message = explain_exit(
                code, self._limits, report, timed_out=self._timed_out, timeout_s=self.timeout
            )
        self._done.set()

    # -- the public side ------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    @property
    def exit_code(self) -> int | None:
        """The command's exit code (128+N for signal N, 124 on timeout); None while running."""
        with self._lock:
            return self._exit_code

    @property
    def duration(self) -> float:
        with self._lock:
            end = self._ended if self._ended is not None else time.monotonic()
        return end - self.started

    def read_new(self) -> NewOutput:
        """Everything written since the previous call (bounded), and whether it still runs."""
        with self._lock:
            done = self._exit_code is not None
            stdout, out_omitted = self._windows["stdout"].take(self._log_paths["stdout"])
            stderr, err_omitted = self._windows["stderr"].take(self._log_paths["stderr"])
            return NewOutput(
                stdout=stdout,
                stderr=stderr,
                running=not done,
                exit_code=self._exit_code,
                truncated=bool(out_omitted or err_omitted),
                timed_out=self._timed_out if done else False,
                limit_message=self._limit_message,
                stdout_path=self._log_paths["stdout"] if out_omitted else None,
                stderr_path=self._log_paths["stderr"] if err_omitted else None,
            )

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the command to end; its exit code, or None if ``timeout`` passed first."""
        self._done.wait(timeout)
        return self.exit_code

    def terminate(self) -> int:
        """SIGTERM the confined process group, then kill the whole tree after a grace period;
        returns the exit code once everything is gone."""
        self._signal_safely(self._terminate)
        return self._settle()

    def kill(self) -> int:
        """Kill every process of the confined tree now; returns the exit code.

        Repeated until the tree is gone: killed in its first instants, a bwrap sandbox may
        not have its process group yet, and its init can outlive the launcher."""
        while True:
            self._signal_safely(lambda jail: jail.kill_all())
            if self._done.wait(KILL_RETRY_SECONDS):
                return self._settle()

    def _settle(self) -> int:
        self._done.wait()
        code = self.exit_code
        assert code is not None  # set before _done
        return code

    def signal(self, signum: int = signal.SIGTERM) -> None:
        """Deliver ``signum`` to the confined process group (no waiting)."""
        self._signal_safely(lambda jail: jail.signal_command(signum))
