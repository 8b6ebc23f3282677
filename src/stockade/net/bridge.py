"""The jail-side relay: 127.0.0.1:<port> inside the jail -> the proxy's unix socket outside.

In ``allowlist`` mode the jail has its own, empty network namespace (loopback only), so the
only way out is the allow-list proxy's unix socket, bind-mounted into the jail at
``JAIL_SOCKET_PATH``. Tools want a TCP proxy address, so this bridge listens on
``127.0.0.1:JAIL_PROXY_PORT`` inside the jail and copies each connection to that socket.

Run it as the jail's command, wrapping the real one::

    python3 -I -S /path/to/stockade/net/bridge.py --listen-port 3128 \\
        --socket /run/stockade/proxy.sock [--proxy-env] -- CMD ARGS...

(``python3 -m stockade.net.bridge ...`` works too.) This file imports only the standard library
and nothing from stockade, so it can run by path with ``-I -S`` (fast start, no site-packages,
no PYTHON* variables from the jail's environment).

Process model: the bridge binds the listener first (so CMD can connect at once), then forks.
The *child* becomes the relay; the *parent* execs CMD. CMD therefore keeps the bridge's PID
and is the jail's main process: signals reach it directly, job control works, and its exit
status is exactly its own (bwrap reports death by signal N as 128+N). The relay asks the
kernel to SIGKILL it when CMD exits (PR_SET_PDEATHSIG), so nothing is left behind, and it
ignores SIGINT/SIGQUIT so a Ctrl-C that CMD survives does not cut its network.

Failing closed: if the proxy is gone, the relay cannot connect and answers the client itself
(HTTP 502 or a SOCKS5 failure), saying the network proxy is not running. There is no other
route out of the namespace.

Exit status: CMD's own. The bridge's own failures before CMD runs: 2 bad arguments, 125 cannot
listen, 126 CMD not executable, 127 CMD not found.
"""

from __future__ import annotations

# Only what binding and exec'ing CMD need is imported up front: CMD's start waits for it. The
# relay child imports socket/threading/signal itself (see _relay_forever).
import _socket
import os
import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs ~7 ms here
if TYPE_CHECKING:
    import socket

JAIL_SOCKET_PATH = "/run/stockade/proxy.sock"
JAIL_PROXY_PORT = 3128
LISTEN_HOST = "127.0.0.1"
NO_PROXY = "localhost,127.0.0.1,::1"

BUFFER_SIZE = 256 * 1024
PR_SET_PDEATHSIG = 1

USAGE = (
    "usage: bridge.py [--listen-port PORT] [--socket PATH] [--proxy-env] "
    "[--seccomp-file BPF] -- CMD [ARGS...]\n"
    f"  relay 127.0.0.1:PORT (default {JAIL_PROXY_PORT}) to the unix socket PATH "
    f"(default {JAIL_SOCKET_PATH}) while CMD runs\n"
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


# --- the relay (runs in the forked child; imports its own modules, off CMD's start path) ------


def _copy(source: socket.socket, destination: socket.socket) -> None:
    """Copy until EOF, then pass the EOF on (half-close) so the other direction can finish."""
    import contextlib
    import socket

    buffer = bytearray(BUFFER_SIZE)
    view = memoryview(buffer)
    try:
        while count := source.recv_into(buffer):
            destination.sendall(view[:count])
        destination.shutdown(socket.SHUT_WR)
    except OSError:  # one side broke: end both directions
        for sock in (source, destination):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def _refuse(client: socket.socket) -> None:
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


def _serve_connection(client: socket.socket, socket_path: str) -> None:
    import socket
    import threading

    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(socket_path)
    except OSError:
        _refuse(client)
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_copy, args=(upstream, client), daemon=True)
    back.start()
    _copy(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _die_with_parent(parent: int) -> None:
    """Make the kernel kill this process when CMD (the parent) exits; poll if that fails."""
    import signal
    import threading

    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError, ImportError):
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _relay_forever(listener_fd: int, socket_path: str, parent: int) -> None:
    import signal
    import socket
    import threading

    _die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C that CMD survives keeps its network
    signal.signal(signal.SIGQUIT, signal.SIG_IGN)
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # never hold CMD's terminal or output pipes open
            os.dup2(null, fd)
    except OSError:
        pass
    listener = socket.socket(fileno=listener_fd)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            continue
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve_connection, args=(client, socket_path), daemon=True).start()


# --- command line -----------------------------------------------------------------------------


def _fail(message: str, code: int) -> int:
    sys.stderr.write(f"stockade bridge: {message}\n")
    return code


def _install_seccomp(path: str) -> str | None:
    """Load a compiled BPF program (``struct sock_filter`` array) and install it on this
    process; no_new_privs is already set by bwrap. Returns an error message or None."""
    import ctypes

    try:
        with open(path, "rb") as handle:
            program = handle.read()
    except OSError as error:
        return f"reading {path}: {error.strerror}"
    if not program or len(program) % 8:
        return f"{path} is not a BPF program"

    class SockFprog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
    libc.prctl(pr_set_no_new_privs, 1, 0, 0, 0)
    if libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
        return f"prctl(PR_SET_SECCOMP): {os.strerror(ctypes.get_errno())}"
    return None


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


def main(argv: list[str] | None = None) -> int:
    """Bind, fork the relay, exec CMD. Only returns (with an exit code) if CMD cannot run."""
    parsed = _parse(sys.argv[1:] if argv is None else argv)
    if isinstance(parsed, str):
        sys.stderr.write(USAGE)
        return _fail(parsed, 2)
    port, socket_path, with_env, seccomp_file, command = parsed
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)  # close-on-exec
    try:
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind((LISTEN_HOST, port))
        listener.listen(128)
    except OSError as error:
        return _fail(f"cannot listen on {LISTEN_HOST}:{port}: {error.strerror}", 125)
    parent = os.getpid()
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() == 0:
        try:
            _relay_forever(listener.detach(), socket_path, parent)
        finally:
            os._exit(0)
    listener.close()  # CMD must not hold the listener (it is close-on-exec anyway)
    if seccomp_file is not None:
        # The relay needs AF_UNIX to reach the proxy; CMD gets the stricter filter on top.
        problem = _install_seccomp(seccomp_file)
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
