"""The run helper: a per-user process that runs ``stockade run`` commands in warm jails.

Started by the command line itself (``run_client.py``) when none answers, with that command
line's exact environment, and ended after ``IDLE_SECONDS`` without a request. For each
request it does what ``stockade run`` does in its own process - the same settings (loaded
again), the same policy (resolved again, and a cached Sandbox reused only when a new one
would enforce exactly its policy), the same proofs, the same ledger record, the client's own
stdin/stdout/stderr and working directory - so the client needs nothing but an interpreter.

It never weakens anything:

* it serves only a client that is exactly what it is itself, as the kernel says from
  ``/proc/PID``: the peer credentials (``SO_PEERCRED``) are its own uid and gid, and the
  program, groups, umask, capabilities, no_new_privs and seccomp state, rlimits,
  namespaces, cgroup, LSM label and root directory are byte for byte its own; each request
  runs with the client's own environment (``/proc/PID/environ``), from which the settings,
  the policy and the command's environment are derived as in the client's own process;
* its socket is in a private directory (0700, this user's); a client under no_new_privs or
  seccomp (a command inside a jail) is refused - the helper would not carry those;
* it serves one request at a time (another client meanwhile is told to run it itself), and
  when its own code changed on disk it declines and exits;
* anything it cannot do exactly as the command line would (help, ``--stdio``, ``--gate``, a
  command line click must parse) it declines, and the client runs it itself.

Ctrl-C and the other terminal signals reach the command as they do in the command line
(``forward_signals``: the client relays them); when the client goes away, the command is
killed, as a command line's jail dies with it.

    python -m stockade.cli.run_helper SOCKET_PATH
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final

from stockade.cli import guarded, run_arguments
from stockade.cli.run_client import (
    DECLINED,
    EXIT_PREFIX,
    SIGNAL_PREFIX,
    STATUS,
    confined,
    environment,
    helper_dir,
    situation,
)

if TYPE_CHECKING:
    from stockade.runner import Sandbox
    from stockade.settings import Settings

IDLE_SECONDS: Final = 120.0
MAX_REQUEST: Final = 16 << 20
CACHED_SANDBOXES: Final = 8
PACKAGE: Final = Path(__file__).resolve().parent.parent


def code_signature() -> tuple[tuple[str, int, int], ...]:
    """What stockade's code on disk is now: a helper whose code changed must not serve."""
    found = []
    for directory, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if name.endswith(".py"):
                info = os.stat(os.path.join(directory, name))
                found.append((os.path.join(directory, name), info.st_mtime_ns, info.st_size))
    return tuple(sorted(found))


class SandboxCache:
    """Proven Sandboxes by settings and working directory; one is reused only when a
    Sandbox built now would enforce exactly its policy (``Sandbox.still_serves``)."""

    def __init__(self) -> None:
        self._entries: list[tuple[Settings, Path, Sandbox]] = []

    def sandbox_for(self, settings: Settings) -> Sandbox:
        from stockade.cli.sandbox_setup import sandbox_for

        cwd = Path.cwd()
        request = settings.policy_request(cwd=cwd)
        for entry in list(self._entries):
            cached_settings, cached_cwd, sandbox = entry
            if cached_settings == settings and cached_cwd == cwd:
                if sandbox.still_serves(request):
                    sandbox.backend_change = None  # noted when it was built
                    return sandbox
                self._entries.remove(entry)
                sandbox.close()
        sandbox = sandbox_for(settings, warm=True)
        self._entries.append((settings, cwd, sandbox))
        while len(self._entries) > CACHED_SANDBOXES:
            self._entries.pop(0)[2].close()
        return sandbox

    def close(self) -> None:
        entries, self._entries = self._entries, []
        for _settings, _cwd, sandbox in entries:
            sandbox.close()


class Helper:
    """The listening socket, the request loop, and what it keeps warm."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.me = situation()
        self.code = code_signature()
        self.sandboxes = SandboxCache()
        self._requests: queue.Queue[socket.socket] = queue.Queue(maxsize=1)
        self._busy = threading.Lock()
        self.listener = _listen(path)
        self._bound = os.stat(path).st_ino  # ours to remove at the end, and only ours

    def serve(self) -> None:
        _between_requests()
        threading.Thread(target=self._accept, name="stockade-helper-accept", daemon=True).start()
        try:
            while True:
                try:
                    connection = self._requests.get(timeout=IDLE_SECONDS)
                except queue.Empty:
                    return
                try:
                    answer = self._handle(connection)
                finally:
                    self._busy.release()  # everything of the request is undone: the next may come
                    with contextlib.suppress(OSError):
                        connection.sendall(
                            answer if isinstance(answer, bytes) else DECLINED + b"\n"
                        )
                    connection.close()
                if answer is None:
                    return  # our code changed: the next client starts a new helper
        finally:
            self.close()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            if self._busy.acquire(blocking=False):
                self._requests.put(connection)
            else:  # one request at a time: this client runs it in its own process
                _decline(connection)

    def _handle(self, connection: socket.socket) -> bytes | None:
        """Serve one client: the line to answer it (its exit code, or declined); None when
        this helper must end (its code changed)."""
        declined = DECLINED + b"\n"
        pid = self._trusted_peer(connection)
        if pid is None:
            return declined
        if code_signature() != self.code:
            return None
        received = _receive(connection)
        if received is None:
            return declined
        fields, fds = received
        try:
            cwd, args = os.fsdecode(fields[1]), [os.fsdecode(a) for a in fields[2:]]
            parsed = run_arguments(args)
            if (
                fields[0] != b"run"
                or parsed is None
                or parsed[0].get("stdio")
                or len(fds) != 3
                or os.path.realpath(cwd) != os.path.realpath(os.readlink(f"/proc/{pid}/cwd"))
            ):
                return declined
            with _environment_of(pid):
                code = self._run(connection, cwd, parsed, fds)
        finally:
            for fd in fds:
                os.close(fd)
        return EXIT_PREFIX + b"%d\n" % code

    def _trusted_peer(self, connection: socket.socket) -> int | None:
        """The client's pid when it is exactly this helper's situation, else None."""
        import struct

        credentials = connection.getsockopt(
            socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
        )
        pid, uid, gid = (int(value) for value in struct.unpack("3i", credentials))
        if (uid, gid) != (os.getuid(), os.getgid()):
            return None
        theirs = situation(pid)
        if confined(theirs[STATUS]) or theirs != self.me:
            return None
        return pid

    def _run(
        self, connection: socket.socket, cwd: str, parsed: tuple[dict[str, object], list[str]],
        fds: list[int],
    ) -> int:  # fmt: skip
        """The command line's run, on the client's cwd and stdio, its signals relayed."""
        from stockade.cli.operator_run import operator_run

        options, command = parsed
        saved = [os.dup(fd) for fd in (0, 1, 2)]
        running = threading.Event()
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(number, _end_request)
        try:
            os.chdir(cwd)
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
            running.set()
            threading.Thread(
                target=_relay_signals, args=(connection, running), daemon=True,
                name="stockade-helper-signals",
            ).start()  # fmt: skip
            return guarded(
                lambda: operator_run(
                    command, timeout=options.pop("timeout"),  # type: ignore[arg-type]
                    stdio=False, options=options, sandboxes=self.sandboxes,
                )
            )  # fmt: skip
        except _Ended as ended:  # as the command line dies of it before the command runs
            return 128 + ended.signum
        finally:
            running.clear()
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            for target, fd in enumerate(saved):
                os.dup2(fd, target)
                os.close(fd)
            _between_requests()
            os.chdir("/")

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self._bound:
                os.unlink(self.path)
        self.listener.close()
        self.sandboxes.close()


def _between_requests() -> None:
    """SIGTERM and SIGHUP end the helper (cleanly: its jails close); SIGINT and SIGQUIT
    have nothing to reach (the helper has no terminal; the client relays them in requests)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_helper)
    signal.signal(signal.SIGHUP, _exit_helper)


def _exit_helper(signum: int, frame: object) -> None:
    raise SystemExit(0)


class _Ended(BaseException):
    """SIGTERM, SIGHUP or SIGQUIT before the command started (the runner's forwarding
    takes them over while it runs)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _end_request(signum: int, frame: object) -> None:
    raise _Ended(signum)


def _listen(path: str) -> socket.socket:
    """Bind ``path`` (only in the private helper directory); a live helper there wins."""
    directory = helper_dir(create=False)
    if directory is None or os.path.dirname(path) != directory:
        raise SystemExit(f"stockade run helper: {path} is not in a private helper directory")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
    except OSError:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
            raise SystemExit(0) from None  # another helper serves this situation already
        except OSError:
            os.unlink(path)  # a dead helper's socket
            listener.bind(path)
        finally:
            probe.close()
    listener.listen(8)
    return listener


@contextlib.contextmanager
def _environment_of(pid: int) -> Iterator[None]:
    """The client's environment (as the kernel gave it to the client) for its request: the
    settings, the policy and the command's environment are derived from it, as they would be
    in the client's own process. (What is cached across requests is compared again.)"""
    theirs = environment(pid)
    saved = dict(os.environb)
    try:
        os.environb.clear()
        os.environb.update(theirs)
        yield
    finally:
        os.environb.clear()
        os.environb.update(saved)


def _decline(connection: socket.socket) -> None:
    with contextlib.suppress(OSError):
        connection.sendall(DECLINED + b"\n")


def _receive(connection: socket.socket) -> tuple[list[bytes], list[int]] | None:
    """The request (NUL-separated fields) and the client's three stdio fds."""
    connection.settimeout(10)
    try:
        data, ancillary, _flags, _address = connection.recvmsg(65536, socket.CMSG_SPACE(12))
        fds: list[int] = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                fds += [
                    int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)
                ]
        if len(data) < 8:
            raise ValueError("short request")
        length = int(data[:8], 16)
        if length > MAX_REQUEST:
            raise ValueError("request too large")
        body = data[8:]
        while len(body) < length:
            chunk = connection.recv(min(1 << 20, length - len(body)))
            if not chunk:
                raise ValueError("truncated request")
            body += chunk
    except (OSError, ValueError):
        return None
    finally:
        connection.settimeout(None)
    return body.split(b"\0"), fds


def _relay_signals(connection: socket.socket, running: threading.Event) -> None:
    """The client's signals, delivered to this process while its command runs (the runner's
    forwarding relays them to the jail); when the client goes away, the command is killed."""
    buffer = b""
    while running.is_set():
        try:
            chunk = connection.recv(4096)
        except OSError:
            chunk = b""
        if not chunk:  # gone: as its jail would die with it, the command is killed
            while running.is_set():  # the runner kills the whole tree at the second SIGINT
                os.kill(os.getpid(), signal.SIGINT)
                running.wait(0.05)  # (one pending SIGINT absorbs another sent meanwhile)
            return
        buffer += chunk
        while b"\n" in buffer:
            line, _, buffer = buffer.partition(b"\n")
            number = line[len(SIGNAL_PREFIX) :]
            if line.startswith(SIGNAL_PREFIX) and number.isdigit() and running.is_set():
                os.kill(os.getpid(), int(number))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m stockade.cli.run_helper SOCKET_PATH\n")
        return 2
    if confined(situation()[STATUS]):
        return 0  # never serve from inside a sandbox
    Helper(argv[0]).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
