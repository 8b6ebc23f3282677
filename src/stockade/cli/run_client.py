"""The client side of the run helper: ``stockade run`` hands its command to a warm helper.

A ``stockade run`` spends most of its time before the command starts: the interpreter,
importing stockade, settings, the policy, the jail. The *run helper* is a per-user process
that keeps all of that warm (``run_helper.py``); this module is what the command line does
first, importing nothing but the standard library's cheapest modules:

* it connects to the helper for *exactly this process's situation* - its socket name is a
  digest of the uids and groups, the umask, the rlimits, the namespaces, the cgroup, the
  capability sets, the LSM label and which interpreter and stockade it runs (a helper only
  ever serves a client it could have been started by; it checks all of it again from
  ``/proc`` against itself, and runs each request with that client's own environment);
* sends the arguments, the working directory and its stdin/stdout/stderr (``SCM_RIGHTS``),
  forwards SIGINT/SIGTERM/SIGHUP/SIGQUIT, and exits with the command's exit code;
* when there is no helper (or it is busy, declines, or the command line needs click) it
  returns None and the command runs in this process exactly as it always did; a missing
  helper is then started in the background for the next run (socket activation by the CLI).

``STOCKADE_RUN_HELPER=0`` turns it off. A process with ``no_new_privs`` or a seccomp filter
(inside a sandbox, say) never uses it: a helper outside would not carry those restrictions.
The socket lives in a private directory (0700, owned by this user: ``$XDG_RUNTIME_DIR/stockade``
or ``/tmp/stockade-run-<uid>``).
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # no stubs; `signal` imports enum
import _socket
import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs milliseconds here
if TYPE_CHECKING:
    from collections.abc import Sequence

SWITCH = "STOCKADE_RUN_HELPER"  # "0"/"false"/"no"/"off": every run in its own process
OFF = ("0", "false", "no", "off")
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
EXIT_PREFIX = b"exit "
SIGNAL_PREFIX = b"signal "
DECLINED = b"cold"  # the helper will not run this one: run it in this process
NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "time", "user", "uts")
STATUS_FIELDS = (  # the /proc/PID/status lines that say what a process may do
    b"Uid:", b"Gid:", b"Groups:", b"Umask:", b"NoNewPrivs:", b"Seccomp:", b"CapInh:",
    b"CapPrm:", b"CapEff:", b"CapBnd:", b"CapAmb:",
)  # fmt: skip
HELPER_LOST_EXIT = 125

_pending_start: str | None = None  # the socket a helper should be started for


def enabled() -> bool:
    return os.environ.get(SWITCH, "").strip().lower() not in OFF


def situation(pid: int | str = "self") -> tuple[bytes, ...]:
    """What process ``pid`` may do, as the kernel tells it: its status (ids, groups, umask,
    capabilities, no_new_privs, seccomp: ``STATUS``), rlimits, cgroup, LSM label, namespaces
    and root directory. (Its environment the helper takes from each request.)"""
    base = f"/proc/{pid}"
    try:
        program = os.readlink(f"{base}/exe").encode()
    except OSError:
        program = b"-"
    parts = [program, _status_lines(_read(f"{base}/status"))]
    parts += [_read(f"{base}/limits"), _read(f"{base}/cgroup"), _read(f"{base}/attr/current")]
    for name in NAMESPACES:
        try:
            parts.append(os.readlink(f"{base}/ns/{name}").encode())
        except OSError:
            parts.append(b"-")
    try:
        root = os.stat(f"{base}/root")
        parts.append(b"%d:%d" % (root.st_dev, root.st_ino))
    except OSError:
        parts.append(b"-")
    return tuple(parts)


STATUS = 1  # the index of the status lines in a situation


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b"-"


def environment(pid: int | str = "self") -> dict[bytes, bytes]:
    """Process ``pid``'s environment as it was given to it (``/proc/PID/environ``)."""
    entries = (entry.partition(b"=") for entry in _read(f"/proc/{pid}/environ").split(b"\0"))
    return {name: value for name, _, value in entries if name}


def _status_lines(status: bytes) -> bytes:
    return b"\n".join(line for line in status.splitlines() if line.startswith(STATUS_FIELDS))


def confined(status_lines: bytes) -> bool:
    """True under no_new_privs or a seccomp filter: a helper would not carry them."""
    for line in status_lines.splitlines():
        name, _, value = line.partition(b":")
        if name in (b"NoNewPrivs", b"Seccomp") and value.strip() not in (b"0", b""):
            return True
    return False


def helper_dir(*, create: bool) -> str | None:
    """The private directory for this user's helper sockets, or None when none is safe."""
    uid = os.getuid()
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = os.path.join(runtime, "stockade") if runtime else f"/tmp/stockade-run-{uid}"
    if create:
        try:
            os.mkdir(base, 0o700)
        except FileExistsError:
            pass
        except OSError:
            return None
    try:
        info = os.lstat(base)
    except OSError:
        return None
    private = info.st_uid == uid and (info.st_mode & 0o170077) == 0o040000  # a dir, 0700
    return base if private else None


def socket_path(directory: str, identity: bytes) -> str:
    import zlib

    digest = b"%08x%08x" % (zlib.crc32(identity), zlib.adler32(identity))  # a locator only
    stockade = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    where = (sys.executable + "\0" + stockade).encode()
    digest += b"%08x" % zlib.crc32(where)
    return os.path.join(directory, f"run-{digest.decode()}.sock")


def run(args: Sequence[str]) -> int | None:
    """The exit code of ``stockade run ARGS`` as the helper ran it, or None: run it in this
    process (and call ``start_missing_helper`` afterwards)."""
    global _pending_start
    if not enabled():
        return None
    me = situation()
    if confined(me[STATUS]):
        return None
    directory = helper_dir(create=True)
    if directory is None:
        return None
    path = socket_path(directory, b"\0\0".join(me))  # (with this interpreter and stockade)
    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        connection.connect(path)
    except OSError:
        connection.close()
        _pending_start = path
        return None
    try:
        return _ask(connection, args)
    finally:
        connection.close()


def _ask(connection: _socket.socket, args: Sequence[str]) -> int | None:
    try:
        fds = [os.dup(fd) for fd in (0, 1, 2)]  # fails when one is closed: run it here
    except OSError:
        return None
    try:
        body = b"\0".join([b"run", os.fsencode(os.getcwd()), *(os.fsencode(a) for a in args)])
        header = b"%08x" % len(body)
        payload = b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)
        connection.sendmsg([header + body], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, payload)])
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)
    return _wait(connection)


def _wait(connection: _socket.socket) -> int | None:
    """Relay this process's signals until the helper reports the exit code."""

    def relay(signum: int, frame: object) -> None:
        try:
            connection.send(SIGNAL_PREFIX + b"%d\n" % signum)
        except OSError:
            return  # the helper is gone: the wait below says so

    previous = {}
    for name in FORWARDED:
        number = getattr(_signal, name)
        previous[number] = _signal.signal(number, relay)
    try:
        buffer = b""
        while True:
            chunk = connection.recv(4096)
            if not chunk:
                sys.stderr.write(
                    "stockade: the run helper ended before the command did\n"
                    f"  fix: run it again; {SWITCH}=0 runs every command in its own process\n"
                )
                return HELPER_LOST_EXIT
            buffer += chunk
            while b"\n" in buffer:
                line, _, buffer = buffer.partition(b"\n")
                if line == DECLINED:
                    return None
                if line.startswith(EXIT_PREFIX):
                    return int(line[len(EXIT_PREFIX) :])
    finally:
        for number, handler in previous.items():
            _signal.signal(number, handler)


def start_missing_helper() -> None:
    """Start the helper this run could not find, in the background, for the next run."""
    global _pending_start
    path, _pending_start = _pending_start, None
    if path is None:
        return
    import contextlib
    import subprocess

    with contextlib.suppress(OSError):  # no helper: the next run is in its own process too
        subprocess.Popen(
            [sys.executable, "-m", "stockade.cli.run_helper", path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, cwd="/",
        )  # fmt: skip
