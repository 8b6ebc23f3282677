"""The jail-side relay: 127.0.0.1:<port> inside the jail -> the allow-list proxy outside.

In ``allowlist`` mode the jail has its own, empty network namespace (loopback only), so the
only way out is the allow-list proxy's hand-off socket, bind-mounted into the jail at
``JAIL_SOCKET_PATH``. Tools want a TCP proxy address, so this bridge listens on
``127.0.0.1:JAIL_PROXY_PORT`` inside the jail and hands every accepted connection - the
socket itself, as a file descriptor (``SCM_RIGHTS``) - to the proxy, which then serves it
directly. The relay copies no bytes and never connects anywhere.

Run it as the jail's command, wrapping the real one::

    python3 -I -S /path/to/stockade/net/bridge.py --listen-port 3128 \\
        --socket /run/stockade/proxy.sock [--proxy-env] [--seccomp-file F] -- CMD ARGS...

(``python3 -m stockade.net.bridge ...`` works too.) This file imports only the standard library
and nothing from stockade, so it can run by path with ``-I -S`` (fast start, no site-packages,
no PYTHON* variables from the jail's environment).

Process model: the bridge binds the listener and connects to the hand-off socket *before* CMD
exists, then forks. The *child* becomes the relay: it makes itself non-dumpable (CMD, running
as the same user, cannot open its ``/proc/PID/mem``) and installs its own seccomp filter,
``RELAY_DENIED_SYSCALLS`` (no new sockets, no connect, no bind, no exec), then says so on a
pipe. Only then does the *parent* install CMD's filter and exec CMD. So nothing CMD does can
make the relay reach another socket: it holds exactly one connection, to the proxy, and the
kernel refuses it any other. CMD keeps the bridge's PID and is the jail's main process:
signals reach it directly, job control works, and its exit status is exactly its own (bwrap
reports death by signal N as 128+N). The relay asks the kernel to SIGKILL it when CMD exits
(PR_SET_PDEATHSIG) and ignores SIGINT/SIGQUIT, so a Ctrl-C that CMD survives keeps its network.

Failing closed: if the proxy is gone (never reached, or closed since), the relay answers the
client itself (HTTP 502 or a SOCKS5 failure), saying the network proxy is not running. It
cannot reconnect, and there is no other route out of the namespace.

Exit status: CMD's own. The bridge's own failures before CMD runs: 2 bad arguments, 125 cannot
listen or cannot confine the relay or CMD, 126 CMD not executable, 127 CMD not found.
"""

from __future__ import annotations

# Only what binding, confining and exec'ing need is imported (CMD's start waits for it):
# ``_socket`` and ``_signal`` rather than ``socket``/``signal`` (those import enum, ~10 ms),
# and ctypes (for prctl) before the fork, so the relay child has nothing left to import.
import _signal  # type: ignore[import-not-found]  # no stubs; `signal` imports enum (~5 ms)
import _socket
import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~7 ms here
if TYPE_CHECKING:
    from collections.abc import Callable

JAIL_SOCKET_PATH = "/run/stockade/proxy.sock"
JAIL_PROXY_PORT = 3128
LISTEN_HOST = "127.0.0.1"
NO_PROXY = "localhost,127.0.0.1,::1"

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
HANDOFF_MESSAGE = b"c"  # one byte per handed-off connection; the fd rides along

# --- the relay's own filter (auditable) -----------------------------------------------------
# On top of the jail's filter, the relay may not create, connect or bind any socket, nor exec
# anything: after setup it only accepts on its listener and sends what it accepted down the
# one connection it already holds. Numbers per architecture (the kernel's syscall tables).
RELAY_DENIED_SYSCALLS = ("socket", "socketpair", "connect", "bind", "listen", "execve", "execveat")
SYSCALL_NUMBERS: dict[str, tuple[int, dict[str, int]]] = {
    # machine: (AUDIT_ARCH_*, {syscall: number})
    "x86_64": (0xC000003E, {
        "socket": 41, "connect": 42, "bind": 49, "listen": 50, "socketpair": 53,
        "execve": 59, "execveat": 322,
    }),
    "aarch64": (0xC00000B7, {
        "socket": 198, "socketpair": 199, "bind": 200, "listen": 201, "connect": 203,
        "execve": 221, "execveat": 281,
    }),
}  # fmt: skip
X32_SYSCALL_BIT = 0x4000_0000  # x86_64's x32 ABI: same arch value, numbers with this bit set
# ----------------------------------------------------------------------------------------------

USAGE = (
    "usage: bridge.py [--listen-port PORT] [--socket PATH] [--proxy-env] "
    "[--seccomp-file BPF] -- CMD [ARGS...]\n"
    f"  hand the connections to 127.0.0.1:PORT (default {JAIL_PROXY_PORT}) to the proxy's "
    f"hand-off socket PATH (default {JAIL_SOCKET_PATH}) while CMD runs\n"
)


def proxy_environment(port: int = JAIL_PROXY_PORT, host: str = LISTEN_HOST) -> dict[str, str]:
    """The variables that point a jailed program at the bridge (upper- and lower-case).

    ``ALL_PROXY`` uses ``socks5h`` so clients that prefer SOCKS let the proxy resolve names
    (the jail has no resolver of its own). ``NO_PROXY`` keeps the jail's own loopback local.
    """
    http = f"http://{host}:{port}"
    values = {
        "HTTP_PROXY": http,
        "HTTPS_PROXY": http,
        "ALL_PROXY": f"socks5h://{host}:{port}",
        "NO_PROXY": NO_PROXY,
    }
    return {**values, **{name.lower(): value for name, value in values.items()}}


# --- seccomp programs (struct sock_filter arrays) ----------------------------------------------


def relay_filter_program(machine: str | None = None) -> bytes:
    """The relay's BPF program: ``RELAY_DENIED_SYSCALLS`` fail with EPERM, any foreign
    architecture or ABI kills the process, everything else is left to the jail's filter."""
    arch, numbers = SYSCALL_NUMBERS[machine or os.uname().machine]
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ/JGE|K, BPF_RET|K
    allow, eperm, kill = 0x7FFF_0000, 0x0005_0000 | 1, 0x8000_0000
    denied = [numbers[name] for name in RELAY_DENIED_SYSCALLS]
    allow_at = 4 + len(denied)  # after the 4 header instructions and one check per syscall
    eperm_at, kill_at = allow_at + 1, allow_at + 2

    def to(target: int, here: int) -> int:  # a jump offset counts from the next instruction
        return target - here - 1

    program = [
        (load, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, to(kill_at, 1), arch),
        (load, 0, 0, 0),  # seccomp_data.nr
        (jge, to(kill_at, 3), 0, X32_SYSCALL_BIT),
    ]
    for index, number in enumerate(denied):
        program.append((jeq, to(eperm_at, 4 + index), 0, number))
    program += [(ret, 0, 0, allow), (ret, 0, 0, eperm), (ret, 0, 0, kill)]
    return b"".join(  # struct sock_filter {u16 code; u8 jt; u8 jf; u32 k}, little-endian
        code.to_bytes(2, "little") + bytes((jt, jf)) + k.to_bytes(4, "little")
        for code, jt, jf, k in program
    )


def filter_installer(program: bytes) -> Callable[[], str | None] | str:
    """Prepare a BPF program (``struct sock_filter`` array) for installing; return the
    installer (two prctl calls: no_new_privs, which bwrap has already set, then the filter;
    it returns an error message or None), or an error message if it cannot be prepared."""
    if not program or len(program) % 8:
        return "not a BPF program"
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)

    def install() -> str | None:
        _keepalive = (buffer, fprog)  # the kernel reads them during the prctl below
        libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
            return f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}"
        del _keepalive
        return None

    return install


def install_filter(program: bytes) -> str | None:
    """Install a BPF program on this thread now; an error message or None."""
    installer = filter_installer(program)
    return installer if isinstance(installer, str) else installer()


def _prctl() -> Callable[..., int] | None:
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None


# --- the relay (runs in the forked child; everything it needs was prepared before the fork) ---


def _refuse(client: _socket.socket) -> None:
    """Answer in the client's own protocol that the proxy is unreachable, then close."""
    try:
        client.settimeout(2.0)
        first = client.recv(1)
        if first == b"\x05":
            client.sendall(b"\x05\xff")  # SOCKS5: no acceptable method
        elif first:
            body = b"stockade: the network proxy is not running; connections are refused.\n"
            client.sendall(
                b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
            )
    except OSError:
        pass


def _die_with_parent(parent: int, prctl: Callable[..., int] | None) -> None:
    """Make the kernel kill this process when CMD (the parent) exits (poll if that fails), and
    make it non-dumpable: CMD runs as the same user and must not open its /proc/PID/mem."""
    if prctl is None or prctl(PR_SET_PDEATHSIG, _signal.SIGKILL, 0, 0, 0) != 0:
        import threading

        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if prctl is not None:
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _relay_forever(
    listener: _socket.socket,
    handoff: _socket.socket | None,
    parent: int,
    confine: Callable[[], str | None],
    ready: int,
) -> None:
    """Confine this process, tell the parent, then hand each accepted connection over."""
    _die_with_parent(parent, _prctl())
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # a Ctrl-C CMD survives keeps its network
    _signal.signal(_signal.SIGQUIT, _signal.SIG_IGN)
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # never hold CMD's terminal or output pipes open
            os.dup2(null, fd)
    except OSError:
        pass
    if confine() is not None:
        os._exit(1)  # the parent sees no "ready" and refuses to run CMD
    os.write(ready, b"1")
    os.close(ready)
    rights = (_socket.SOL_SOCKET, _socket.SCM_RIGHTS)
    while True:
        try:
            fd, _address = listener._accept()  # type: ignore[attr-defined]  # (fd, address)
        except OSError:
            continue
        client = _socket.socket(fileno=fd)
        if handoff is not None:
            try:
                handoff.sendmsg([HANDOFF_MESSAGE], [(*rights, fd.to_bytes(4, sys.byteorder))])
            except OSError:  # the proxy is gone: from now on every connection is refused
                handoff.close()
                handoff = None
        if handoff is None:
            _refuse(client)
        client.close()


# --- command line -----------------------------------------------------------------------------


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"stockade bridge: {message}\n")
    return code


def _command_filter(path: str) -> Callable[[], str | None] | str:
    """CMD's compiled filter from ``path``, prepared for installing (or an error message)."""
    try:
        with open(path, "rb") as handle:
            program = handle.read()
    except OSError as error:
        return f"reading {path}: {error.strerror}"
    prepared = filter_installer(program)
    return f"{path}: {prepared}" if isinstance(prepared, str) else prepared


def _parse(argv: list[str]) -> tuple[int, str, bool, str | None, list[str]] | str:
    """Return (port, socket path, proxy env?, seccomp file, command) or an error message."""
    port, path, with_env = JAIL_PROXY_PORT, JAIL_SOCKET_PATH, False
    seccomp_file: str | None = None
    index = 0
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            command = argv[index + 1 :]
            if not command:
                return "no command given after --"
            return port, path, with_env, seccomp_file, command
        if arg == "--proxy-env":
            with_env = True
            index += 1
            continue
        if arg in ("--listen-port", "--socket", "--seccomp-file") and index + 1 < len(argv):
            value = argv[index + 1]
            if arg == "--socket":
                path = value
            elif arg == "--seccomp-file":
                seccomp_file = value
            elif value.isdigit() and 0 < int(value) < 65536:
                port = int(value)
            else:
                return f"invalid --listen-port {value!r} (1-65535)"
            index += 2
            continue
        return f"unexpected argument {arg!r}"
    return "missing '--' before the command"


def _connect_handoff(path: str) -> _socket.socket | None:
    """The one connection the relay will ever have: to the proxy's hand-off socket (None when
    the proxy is not there; the relay then refuses every connection)."""
    handoff = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)  # close-on-exec
    try:
        handoff.connect(path)
    except OSError:
        handoff.close()
        return None
    return handoff


def main(argv: list[str] | None = None) -> int:
    """Bind, connect, fork the relay, wait until it is confined, exec CMD. Only returns (with
    an exit code) if CMD cannot run."""
    parsed = _parse(sys.argv[1:] if argv is None else argv)
    if isinstance(parsed, str):
        sys.stderr.write(USAGE)
        return _fail(parsed, 2)
    port, socket_path, with_env, seccomp_file, command = parsed
    if os.uname().machine not in SYSCALL_NUMBERS:
        return _fail(f"cannot confine the network relay on {os.uname().machine}", 125)
    confine_relay = filter_installer(relay_filter_program())
    confine_command = _command_filter(seccomp_file) if seccomp_file is not None else None
    for problem in (confine_relay, confine_command):
        if isinstance(problem, str):
            return _fail(f"cannot confine the command: {problem}", 125)
    assert not isinstance(confine_relay, str) and not isinstance(confine_command, str)
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)  # close-on-exec
    try:
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind((LISTEN_HOST, port))
        listener.listen(128)
    except OSError as error:
        return _fail(f"cannot listen on {LISTEN_HOST}:{port}: {error.strerror}", 125)
    handoff = _connect_handoff(socket_path)
    ready_read, ready_write = os.pipe()  # both close-on-exec
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        try:
            os.close(ready_read)
            _relay_forever(listener, handoff, parent, confine_relay, ready_write)
        finally:
            os._exit(0)
    listener.close()  # CMD must hold neither the listener nor the proxy connection
    if handoff is not None:
        handoff.close()
    os.close(ready_write)
    confined = os.read(ready_read, 1) == b"1"
    os.close(ready_read)
    if not confined:
        return _fail("cannot confine the network relay (seccomp); refusing to run", 125)
    if confine_command is not None:
        # The bridge needed AF_UNIX to reach the proxy; CMD gets the stricter filter on top.
        problem = confine_command()
        if problem:
            return _fail(f"cannot confine the command: {problem}", 125)
    environment = dict(os.environ)
    if with_env:
        environment.update(proxy_environment(port))
    try:
        os.execvpe(command[0], command, environment)
    except FileNotFoundError:
        return _fail(f"command not found: {command[0]}", 127)
    except OSError as error:
        return _fail(f"cannot run {command[0]}: {error.strerror}", 126)


if __name__ == "__main__":
    sys.exit(main())
