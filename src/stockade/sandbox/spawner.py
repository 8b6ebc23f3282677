"""The in-jail spawner of a warm jail: starts each command of a long-lived jail.

A warm jail is set up once (mounts, namespaces, seccomp, the jail user; or Landlock and
seccomp) and runs this file as its only long-lived process. stockade sends it one request per
command over a unix socket: argv, environment, working directory, rlimits, and - as
``SCM_RIGHTS`` - a fresh per-command socket (the *channel*) and the command's three stdio fds.

Forks are kept off the command's path: the spawner always has one *spare* waiting - a
*monitor* and the *command* process it forked - and makes the next spare when that one takes
a request:

* the spare command calls ``setsid()`` (its own session and process group, as bwrap's
  ``--new-session`` gives a fresh jail), enters a Landlock domain of its own that scopes
  signals and abstract unix sockets (ABI 6+: it cannot signal the spawner, its monitor or
  another command), and waits on the control socket. With a request it hands the channel to
  its monitor, empties the scratch directories when asked (``fresh``: no other command of the
  jail is running - ``/tmp``, ``/dev/shm``, the capped session temp dir..., so each command
  starts with them empty as in a fresh jail), takes its stdio, lowers its rlimits, changes
  directory and execs (``execvp`` semantics, including ``/bin/sh`` for a script without
  ``#!``; 127/126 and env's message when it cannot, like the ``env -i`` of a fresh jail).
  Before it waits for a request it says ``spare`` on the control socket: stockade reads its
  host pid and uids from the kernel's ``SCM_CREDENTIALS`` on that message, checks them (a
  root launcher's jail user) and moves it into the run's cgroup *before* it sends the
  request, so nothing of a command ever runs unchecked or outside its cgroup;
* the monitor is a subreaper: every orphan of the command becomes its child, whatever it does
  (``setsid``, double fork). It relays stockade's requests on the channel (a signal for the
  command's process group; ``kill``), and when the command ends it kills every process the
  command left, reaps them, and reports ``exit N`` (N < 0: killed by signal -N). When stockade
  goes away (the channel reads EOF) it kills the command's processes too.

The spawner and the monitors are not dumpable (a command running as the same user cannot open
their ``/proc/PID/mem`` or fds); the jail's seccomp filter denies ptrace. When stockade closes
the control socket the spare command reads EOF, the spare ends, and so does the spawner.

Like ``net/bridge.py`` this file imports only the standard library and nothing from stockade,
so it runs by path with ``python3 -I -S``. Usage::

    python3 -I -S spawner.py CONTROL_FD [--scratch DIR]...

Wire format: every message is a list of byte strings, each as ``<length>:<bytes>``. A request
on the control socket (a stream) is prefixed with its length as 8 hex digits; its four fds ride
on its first byte. Messages on the channel (``SOCK_SEQPACKET``) are single strings.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # no stubs; `signal` imports enum
import _socket
import os
import resource
import select
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs milliseconds here
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

# --- the protocol (shared with stockade.sandbox.warm, which imports these names) ------------
REQUEST_HEADER = 8  # hex digits of the request length
MAX_REQUEST = 64 << 20
FDS_PER_REQUEST = 4  # per-command socket, stdin, stdout, stderr
FLAG_FRESH = "f"  # empty the scratch dirs first (no other command is running)
SPARE = b"spare"  # a spare command, on the control socket: its credentials come with it
STARTED = b"started"  # "started PID": PID as the monitor's PID namespace sees it
SETUP_FAILED = b"failed setup"  # the command could not be set up (its stderr says why)
KILL = b"kill"
SIGNAL_PREFIX = b"signal "
EXIT_PREFIX = b"exit "
LEFTOVER_PREFIX = b"leftover "  # the command's processes could not all be killed
SPAWNER_READY_PREFIX = b"spawner "  # the spawner's first message: "spawner scope=0|1"
EXIT_NOT_RUN = 125  # the command never ran (stopped at the gate, setup failed)
EXIT_NOT_FOUND = 127
EXIT_NOT_EXECUTABLE = 126
# ----------------------------------------------------------------------------------------------

PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
KILL_DEADLINE_SECONDS = 5.0
ENOENT, ENOTDIR, ENOEXEC, EACCES = 2, 20, 8, 13
# Python ignores these at start-up; a command gets them back at their defaults (as
# subprocess's restore_signals gives every command of a fresh jail).
RESTORED_SIGNALS = ("SIGPIPE", "SIGXFSZ")
S_IFMT, S_IFDIR = 0o170000, 0o040000
DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

# Landlock: a ruleset that handles no file or network access and only scopes signals and
# abstract unix sockets (ABI 6). Syscall numbers are the same on x86_64 and aarch64.
LANDLOCK_CREATE_RULESET = 444
LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0
LANDLOCK_SCOPE_SIGNAL = 1 << 1
LANDLOCK_SCOPE_ABI = 6


def encode(fields: Sequence[bytes]) -> bytes:
    """``<length>:<bytes>`` for each field, concatenated."""
    return b"".join(b"%d:%s" % (len(field), field) for field in fields)


def decode(data: bytes) -> list[bytes]:
    """The inverse of ``encode``; raises ValueError on anything malformed."""
    fields, position = [], 0
    while position < len(data):
        colon = data.index(b":", position)
        length = int(data[position:colon])
        start = colon + 1
        if length < 0 or start + length > len(data):
            raise ValueError("truncated field")
        fields.append(data[start : start + length])
        position = start + length
    return fields


def request(
    argv: Sequence[bytes],
    env: Sequence[bytes],
    cwd: bytes,
    rlimits: Sequence[tuple[int, int]],
    flags: str,
    direct: Sequence[bytes] = (),
    shlvl: bytes = b"",
) -> bytes:
    """One request as the control socket carries it (header included). ``direct``: the
    program ``argv`` (a ``bash -c``) would exec, to exec in bash's place, with bash's
    ``SHLVL`` (``_exec_direct``)."""
    fields = [b"run", flags.encode(), cwd, b"%d" % len(argv), *argv, b"%d" % len(env), *env]
    fields += [b"%d" % len(rlimits), *(b"%d=%d" % pair for pair in rlimits)]
    fields += [b"%d" % len(direct), *direct, shlvl]
    body = encode(fields)
    return b"%08x" % len(body) + body


class Request:
    """A parsed request."""

    def __init__(self, data: bytes) -> None:
        fields = decode(data)
        if not fields or fields[0] != b"run":
            raise ValueError("not a run request")
        self.flags = fields[1].decode()
        self.cwd = fields[2]
        argc = int(fields[3])
        self.argv = fields[4 : 4 + argc]
        envc = int(fields[4 + argc])
        env_start = 5 + argc
        self.env = dict(entry.split(b"=", 1) for entry in fields[env_start : env_start + envc])
        limits_at = env_start + envc
        count = int(fields[limits_at])
        self.rlimits = [
            tuple(int(part) for part in entry.split(b"="))
            for entry in fields[limits_at + 1 : limits_at + 1 + count]
        ]
        direct_at = limits_at + 1 + count
        directc = int(fields[direct_at])
        self.direct = fields[direct_at + 1 : direct_at + 1 + directc]
        self.shlvl = fields[direct_at + 1 + directc]
        if not self.argv:
            raise ValueError("empty argv")


# --- kernel helpers ---------------------------------------------------------------------------


def _load_libc() -> Any:
    try:
        import ctypes
    except ImportError:  # pragma: no cover - ctypes is part of every CPython build
        return None
    return ctypes.CDLL(None, use_errno=True)


_libc = _load_libc()


def _prctl(option: int, value: int) -> bool:
    return _libc is not None and _libc.prctl(option, value, 0, 0, 0) == 0


def scoped_ruleset() -> int:
    """A Landlock ruleset fd that handles no file or network access and only scopes signals
    and abstract unix sockets (ABI 6), for each command to enter; -1 when the kernel cannot."""
    if _libc is None:
        return -1
    if _libc.syscall(LANDLOCK_CREATE_RULESET, None, 0, 1) < LANDLOCK_SCOPE_ABI:  # ..._VERSION
        return -1
    import ctypes

    class RulesetAttr(ctypes.Structure):
        _fields_ = [
            ("handled_access_fs", ctypes.c_uint64),
            ("handled_access_net", ctypes.c_uint64),
            ("scoped", ctypes.c_uint64),
        ]

    attr = RulesetAttr(0, 0, LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET)
    fd = int(_libc.syscall(LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0))
    return fd if fd >= 0 else -1


def enter_scoped_domain(ruleset: int) -> bool:
    """Put the calling process (and what it starts) into a Landlock domain of its own."""
    if _libc is None or not _prctl(PR_SET_NO_NEW_PRIVS, 1):
        return False
    return bool(_libc.syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0) == 0)


# --- scratch directories ----------------------------------------------------------------------


class Scratch:
    """A directory the jail can write that a fresh jail would have empty: what is in it when
    the spawner starts (mount points, bwrap's device nodes) stays, everything else goes."""

    def __init__(self, path: str) -> None:
        self.path = path
        info = os.stat(path, follow_symlinks=False)
        self.device, self.mode = info.st_dev, info.st_mode & 0o7777
        self.keep = frozenset(os.listdir(path))

    def empty(self) -> None:
        try:
            fd = os.open(self.path, DIRECTORY_FLAGS)
        except OSError:
            return
        try:
            if os.fstat(fd).st_mode & 0o7777 != self.mode:
                os.chmod(fd, self.mode)
            for name in os.listdir(fd):
                if name not in self.keep:
                    _remove(fd, name, self.device)
        except OSError:
            pass
        finally:
            os.close(fd)


def _remove(parent: int, name: str, device: int) -> None:
    """Remove ``name`` below the directory ``parent``: never following a symlink, never
    crossing into another mount."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except OSError:
        return
    if info.st_mode & S_IFMT != S_IFDIR:
        _quietly(os.unlink, name, dir_fd=parent)
        return
    if info.st_dev != device:
        return  # a mount point: not ours to empty
    try:
        os.chmod(name, 0o700, dir_fd=parent)  # a directory the command made unlistable
        fd = os.open(name, DIRECTORY_FLAGS, dir_fd=parent)
    except OSError:
        return
    try:
        if os.fstat(fd).st_dev == device:
            for entry in os.listdir(fd):
                _remove(fd, entry, device)
    finally:
        os.close(fd)
    _quietly(os.rmdir, name, dir_fd=parent)


# --- the command (child of the monitor) -------------------------------------------------------


def _command(
    control: _socket.socket,
    link: _socket.socket,
    notify: int,
    scratch: Sequence[Scratch],
    ruleset: int,
) -> None:
    """The spare command, forked before its request: its own session and Landlock domain,
    then it takes the next request from the control socket, hands the per-command channel
    to its monitor, sets itself up and execs. Never returns."""
    try:
        os.setsid()
        for name in RESTORED_SIGNALS:
            _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
        scoped = ruleset < 0 or enter_scoped_domain(ruleset)
        # stockade checks who we are (the kernel's SCM_CREDENTIALS on this message) and
        # moves us into the run's cgroup before it sends us anything
        control.sendall(b"%08x" % len(SPARE) + SPARE)
        received = _receive(control)
        if received is None:
            os._exit(0)  # stockade closed the jail
        body, fds = received
        if len(fds) != FDS_PER_REQUEST:
            os._exit(EXIT_NOT_RUN)  # a broken protocol: the monitor and the spawner end too
        channel, *stdio = fds
        link.sendmsg([b"c"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, _fd_bytes([channel]))])
        link.close()
        control.close()
        job = Request(body)
        if not scoped:
            _fail_setup(notify, "cannot enter the per-command Landlock domain")
        if FLAG_FRESH in job.flags:
            for directory in scratch:
                directory.empty()
        for target, fd in enumerate(stdio):
            os.dup2(fd, target)  # dup2 clears close-on-exec on the target
        for which, value in job.rlimits:
            resource.setrlimit(which, (value, value))
        os.chdir(job.cwd)
        os.close(channel)
    except (OSError, ValueError, IndexError) as error:
        _fail_setup(notify, str(error))
    if job.direct:
        _exec_direct(job.direct, job.env, job.shlvl)
    _exec(job.argv, job.env, notify)


def _fail_setup(notify: int, message: str) -> None:
    try:
        os.write(2, f"stockade: the warm jail could not start the command: {message}\n".encode())
        os.write(notify, b"setup")
    finally:
        os._exit(EXIT_NOT_RUN)


def _search(program: bytes, path: bytes) -> list[bytes]:
    """Where execvp(3) and bash look for ``program``, in order (an empty entry: here)."""
    if b"/" in program:
        return [program]
    return [os.path.join(d or b".", program) for d in path.split(b":")]


def _exec_direct(argv: list[bytes], env: dict[bytes, bytes], shlvl: bytes) -> None:
    """Exec ``argv`` as ``bash -c`` would exec that plain command line (see
    ``stockade.sandbox.bash_direct``): its PATH search, and bash's environment for the
    program. Returns (and bash runs the command) for anything but a clean exec: a PWD that
    is not the working directory, nothing found, not executable, a script without ``#!``."""
    pwd = env.get(b"PWD", b"")
    try:
        here, there = os.stat(b"."), os.stat(pwd)
    except OSError:
        return
    if (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino):
        return
    path = env.get(b"PATH")
    if path is None:
        return  # (stockade sends a direct program only with a PATH)
    given = {**env, b"SHLVL": shlvl}
    for candidate in _search(argv[0], path):
        given[b"_"] = candidate
        try:
            os.execve(candidate, argv, given)
        except OSError as failure:
            if failure.errno not in (ENOENT, ENOTDIR):
                return  # bash decides (and says) what happens with this one


def _exec(argv: list[bytes], env: dict[bytes, bytes], notify: int) -> None:
    """execvp(3), as env(1) runs the command of a fresh jail: a PATH search with the
    command's own PATH (EACCES remembered, the search goes on), a file without ``#!``
    (ENOEXEC) run by /bin/sh; env's message and 127/126 when nothing runs."""
    program = argv[0]
    error = ENOENT
    for candidate in _search(program, env.get(b"PATH", b"/usr/local/bin:/usr/bin:/bin")):
        try:
            os.execve(candidate, argv, env)
        except OSError as failure:
            number = failure.errno or ENOENT
            if number == ENOEXEC:
                try:
                    os.execve(b"/bin/sh", [b"/bin/sh", candidate, *argv[1:]], env)
                except OSError as shell_failure:
                    number = shell_failure.errno or ENOENT
            if number == EACCES:
                error = EACCES
            elif number not in (ENOENT, ENOTDIR):
                error = number
                break
    shown = program.decode(errors="replace")
    os.write(2, f"env: '{shown}': {os.strerror(error)}\n".encode())
    os.write(notify, b"exec")
    os._exit(EXIT_NOT_FOUND if error == ENOENT else EXIT_NOT_EXECUTABLE)


# --- the monitor (child of the spawner) -------------------------------------------------------


def _children() -> list[int]:
    pid = os.getpid()
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as listing:
            return [int(p) for p in listing.read().split()]
    except OSError:
        return []


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _end_everything(group: int) -> bool:
    """Kill the command's process group and every process left below the monitor (orphans
    come to it: it is a subreaper), and reap them. False when some could not be killed
    before the deadline."""
    _quietly(os.killpg, group, _signal.SIGKILL)
    deadline = time.monotonic() + KILL_DEADLINE_SECONDS
    while True:
        _reap()
        left = _children()
        if not left:
            return True
        if time.monotonic() > deadline:
            return False
        for pid in left:
            _quietly(os.kill, pid, _signal.SIGKILL)
        try:
            os.waitpid(-1, 0)  # one of the killed ones; what it had comes to us next round
        except ChildProcessError:
            return True


def _monitor(control: _socket.socket, taken: int, scratch: Sequence[Scratch], ruleset: int) -> None:
    """The spare monitor: a subreaper that forks the spare command, tells the spawner when
    the command took a request (so it makes the next spare), then relays stockade's requests,
    ends everything the command left and reports. Never returns."""
    try:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        link, command_link = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
        notify_read, notify_write = os.pipe2(os.O_CLOEXEC)
        command = os.fork()
        if command == 0:
            link.close()
            os.close(notify_read)
            os.close(taken)
            _command(control, command_link, notify_write, scratch, ruleset)
        control.close()
        command_link.close()
        os.close(notify_write)
        channels = _receive_fds(link)
        if not channels:
            os._exit(0)  # no request (the jail is closing): the spawner sees no token
        _quietly(os.write, taken, b"t")  # (a spawner that died cannot take it; we go on)
        os.close(taken)
        channel = channels[0]
        # EOF: the command exec'd (or died before). Until then it may be reading the gate's
        # answer on the channel, so nothing is read from it here.
        failure = os.read(notify_read, 16)
        os.close(notify_read)
        if not failure:
            _send(channel, STARTED + b" %d" % command)
        elif failure == b"setup":
            _send(channel, SETUP_FAILED)
        status = _wait_for(command, channel)
        if not _end_everything(command):
            _send(channel, LEFTOVER_PREFIX + b"%d" % len(_children()))
        _send(channel, EXIT_PREFIX + b"%d" % status)
    except BaseException as error:  # never let a monitor fall back into the spawner's loop
        try:
            os.write(2, f"stockade: warm jail monitor failed: {error!r}\n".encode())
        finally:
            os._exit(EXIT_NOT_RUN)
    os._exit(0)


def _wait_for(command: int, channel: int) -> int:
    """Relay stockade's requests until the command exits; its exit code (-N: signal N).
    At EOF (stockade is gone) the command's processes are killed and the monitor exits."""
    pidfd = os.pidfd_open(command)
    while True:
        ready, _, _ = select.select([pidfd, channel], [], [])
        if pidfd in ready:
            _, wait_status = os.waitpid(command, 0)
            os.close(pidfd)
            return os.waitstatus_to_exitcode(wait_status)
        message = os.read(channel, 64)
        if not message:
            _end_everything(command)
            os._exit(0)
        if message == KILL:
            _quietly(os.killpg, command, _signal.SIGKILL)
            _quietly(os.kill, command, _signal.SIGKILL)
        elif message.startswith(SIGNAL_PREFIX) and message[len(SIGNAL_PREFIX) :].isdigit():
            _quietly(os.killpg, command, int(message[len(SIGNAL_PREFIX) :]))


def _send(channel: int, message: bytes) -> None:
    _quietly(os.write, channel, message)


def _quietly(action: Callable[..., object], *args: Any, **kwargs: Any) -> None:
    """``action(*args)``, where an OSError only means there is nothing left to do."""
    try:
        action(*args, **kwargs)
    except OSError:
        return


# --- the spawner's loop -----------------------------------------------------------------------


def _fd_bytes(fds: Sequence[int]) -> bytes:
    return b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds)


def _fds_in(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == _socket.SOL_SOCKET and kind == _socket.SCM_RIGHTS:
            usable = len(payload) - len(payload) % 4
            fds += [int.from_bytes(payload[i : i + 4], sys.byteorder) for i in range(0, usable, 4)]
    return fds


def _receive_fds(link: _socket.socket) -> list[int]:
    try:
        _data, ancillary, _flags, _address = link.recvmsg(
            16, _socket.CMSG_SPACE(4), _socket.MSG_CMSG_CLOEXEC
        )
    except OSError:
        return []
    return _fds_in(ancillary)


def _receive(control: _socket.socket) -> tuple[bytes, list[int]] | None:
    """One request and its fds; None at EOF (stockade closed the jail)."""
    fds: list[int] = []
    header = b""
    while len(header) < REQUEST_HEADER:
        data, ancillary, _flags, _address = control.recvmsg(
            REQUEST_HEADER - len(header), _socket.CMSG_SPACE(4 * FDS_PER_REQUEST),
            _socket.MSG_CMSG_CLOEXEC,
        )  # fmt: skip
        fds += _fds_in(ancillary)
        if not data:
            for fd in fds:
                os.close(fd)
            return None
        header += data
    length = int(header, 16)
    if length > MAX_REQUEST:
        raise ValueError("request too large")
    body = bytearray()
    while len(body) < length:
        chunk = control.recv(min(1 << 20, length - len(body)))
        if not chunk:
            raise ValueError("truncated request")
        body += chunk
    return bytes(body), fds


def serve(control_fd: int, scratch: Sequence[str]) -> int:
    """Say hello, then keep one spare monitor and command waiting for the next request; when
    the spare takes one, make the next. Ends when stockade closes the control socket.

    The spawner is a subreaper too: the processes of a command whose monitor died come to
    it, and everything that comes to it that is not a monitor is killed at once - except the
    children it had before it served anything (in allowlist mode the network bridge forked
    its relay, then exec'ed the spawner: the relay is the jail's, not a command's)."""
    _prctl(PR_SET_DUMPABLE, 0)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    os.set_inheritable(control_fd, False)
    wake_read, wake_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    _signal.set_wakeup_fd(wake_write)
    _signal.signal(_signal.SIGCHLD, _ignore)  # a handler, so that SIGCHLD wakes the loop
    dirs = [Scratch(path) for path in scratch if os.path.isdir(path)]
    ruleset = scoped_ruleset()
    control = _socket.socket(fileno=control_fd)
    hello = SPAWNER_READY_PREFIX + b"scope=%d" % (ruleset >= 0)
    control.sendall(b"%08x" % len(hello) + hello)
    monitors: set[int] = set()
    jails_own = set(_children())
    while True:
        taken_read, taken_write = os.pipe2(os.O_CLOEXEC)
        spare = os.fork()
        if spare == 0:
            for fd in (taken_read, wake_read, wake_write):
                os.close(fd)
            _signal.set_wakeup_fd(-1)
            _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
            _monitor(control, taken_write, dirs, ruleset)
        os.close(taken_write)
        monitors.add(spare)
        token = b""
        while not token:
            ready, _, _ = select.select([taken_read, wake_read], [], [])
            if wake_read in ready:
                _quietly(os.read, wake_read, 64)
                _reap_and_end_orphans(monitors, jails_own)
            if taken_read in ready:
                token = os.read(taken_read, 1) or b"-"
        os.close(taken_read)
        if token != b"t":
            return 0  # the spare ended without a request: the jail is closing (or broke)


def _ignore(signum: int, frame: object) -> None:
    """SIGCHLD's handler: the wakeup fd does the work."""


def _reap_and_end_orphans(monitors: set[int], jails_own: set[int]) -> None:
    """Reap the monitors that ended; kill every other child (orphans of a monitor that died
    before it could end its command) but the jail's own (a reaped one's pid may be a
    command's next)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        monitors.discard(pid)
        jails_own.discard(pid)
    for pid in _children():
        if pid not in monitors and pid not in jails_own:
            _quietly(os.kill, pid, _signal.SIGKILL)


def main(argv: list[str]) -> int:
    if not argv or not argv[0].isdigit():
        sys.stderr.write("usage: spawner.py CONTROL_FD [--scratch DIR]...\n")
        return 2
    scratch, rest = [], argv[1:]
    while rest:
        if rest[0] != "--scratch" or len(rest) < 2:
            sys.stderr.write(f"spawner.py: unexpected argument {rest[0]!r}\n")
            return 2
        scratch.append(rest[1])
        rest = rest[2:]
    return serve(int(argv[0]), scratch)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
