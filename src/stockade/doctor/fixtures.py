"""Host-side things an escape would reach, for ``doctor --deep``: listeners that record every
connection or datagram (tripwires), a sentinel process the jail must not see, signal, trace or
read, and a pseudo-terminal the jail must not write into.

All of them belong to the doctor, live only while the battery runs, and change nothing else on
the host: a tripwire answers "200 OK" and closes, the sentinel sleeps, the terminal is read.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPLY = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nok\n"

#: Which signal each signalling attempt sends; the sentinel blocks them all, so one that
#: arrives stays pending where the host can see it (/proc/PID/status), race-free.
SENTINEL_SIGNALS: dict[str, int] = {
    "kill": signal.SIGUSR1,
    "killpg": signal.SIGUSR2,
    "pidfd": signal.SIGRTMIN + 2,
    "sigqueue": signal.SIGRTMIN + 3,
}

_SENTINEL_CODE = """
import ctypes, os, signal, sys, time
ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: die with the doctor
signal.pthread_sigmask(signal.SIG_BLOCK, [int(s) for s in sys.argv[3].split(",") if s])
secret = os.read(int(sys.argv[4]), 256)
os.close(int(sys.argv[4]))
memory = ctypes.create_string_buffer(secret)
sys.stdout.write(f"{ctypes.addressof(memory)} {len(secret)}\\n")
sys.stdout.flush()
while True:
    time.sleep(3600)
"""


@dataclass
class Tripwire:
    """One host listener made for one attempt; ``hits`` says what reached it."""

    kind: str
    address: str  # what the jail is told: a port number, a socket path or an abstract name
    hits: list[str] = field(default_factory=list)


class Tripwires:
    """Every listener of a battery run, served by one thread (accept, record, answer, close)."""

    def __init__(self, socket_dir: Path, prefix: str) -> None:
        self._socket_dir = socket_dir
        self._prefix = prefix
        self._selector = selectors.DefaultSelector()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._wires: dict[int, Tripwire] = {}
        self._handling = threading.Lock()  # the serving thread or settle(), never both
        self._wake_read, self._wake_write = os.pipe()
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._stop = False
        self._counter = 0
        self._thread = threading.Thread(target=self._serve, name="doctor-tripwires", daemon=True)
        self._thread.start()

    def add(self, kind: str, host: str = "", port: int = 0) -> Tripwire:
        """Listen for ``kind`` (tcp, tcp6, udp, udp6, unix-stream, unix-dgram, abstract) on
        ``host`` (and ``port``, 0 for any free one)."""
        with self._lock:
            self._counter += 1
            number = self._counter
        sock, address = self._open(kind, host, port, number)
        wire = Tripwire(kind, address)
        sock.setblocking(False)
        with self._lock:
            self._sockets.append(sock)
            self._wires[sock.fileno()] = wire
            self._selector.register(sock, selectors.EVENT_READ, ("listen", wire))
        os.write(self._wake_write, b"x")
        return wire

    def _open(self, kind: str, host: str, port: int, number: int) -> tuple[socket.socket, str]:
        if kind in ("tcp", "tcp6", "udp", "udp6"):
            family = socket.AF_INET6 if kind.endswith("6") else socket.AF_INET
            sock_type = socket.SOCK_DGRAM if kind.startswith("udp") else socket.SOCK_STREAM
            sock = socket.socket(family, sock_type)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((host, port))
            if sock_type == socket.SOCK_STREAM:
                sock.listen(16)
            return sock, str(sock.getsockname()[1])
        sock_type = socket.SOCK_DGRAM if kind == "unix-dgram" else socket.SOCK_STREAM
        sock = socket.socket(socket.AF_UNIX, sock_type)
        if kind == "abstract":
            name = f"{self._prefix}-{number}"
            sock.bind("\0" + name)
        else:
            name = str(self._socket_dir / f"{number}.sock")
            sock.bind(name)
            os.chmod(name, 0o777)
        if sock_type == socket.SOCK_STREAM:
            sock.listen(16)
        return sock, name

    def _serve(self) -> None:
        while not self._stop:
            for key, _ in self._selector.select(timeout=None):
                if key.data is None:
                    os.read(self._wake_read, 4096)
                    continue
                role, wire = key.data
                with self._handling, contextlib.suppress(OSError):
                    self._handle(key.fileobj, role, wire)  # type: ignore[arg-type]

    def settle(self) -> None:
        """Take in every connection and datagram already queued at a listener (the serving
        thread may not have got to it yet), so a judge never misses one."""
        with self._lock:
            listeners = list(self._sockets)
        with self._handling:
            for sock in listeners:
                while True:
                    try:
                        self._handle(sock, "listen", self._wires[sock.fileno()])
                    except (BlockingIOError, InterruptedError):
                        break
                    except OSError:
                        break

    def _handle(self, sock: socket.socket, role: str, wire: Tripwire) -> None:
        if role == "connection":
            with contextlib.suppress(OSError):
                data = sock.recv(4096)
                wire.hits[-1] += f", sent {data[:60]!r}"
                sock.sendall(REPLY)
            self._selector.unregister(sock)
            sock.close()
            return
        if sock.type == socket.SOCK_DGRAM:
            data, peer = sock.recvfrom(4096)
            wire.hits.append(f"a datagram from {peer or 'a unix socket'}: {data[:60]!r}")
            return
        connection, peer = sock.accept()
        connection.setblocking(False)
        wire.hits.append(f"a connection from {peer or 'a unix socket'}")
        self._selector.register(connection, selectors.EVENT_READ, ("connection", wire))

    def close(self) -> None:
        self._stop = True
        os.write(self._wake_write, b"x")
        self._thread.join(timeout=5)
        for sock in self._sockets:
            sock.close()
        for fd in (self._wake_read, self._wake_write):
            os.close(fd)
        self._selector.close()


@dataclass
class Sentinel:
    """A host process of the same user: a token in its argv (``argv_token``), one in its
    environment, one only in its memory (at ``address``); it blocks SENTINEL_SIGNALS."""

    process: subprocess.Popen[bytes]
    address: int
    length: int

    @property
    def pid(self) -> int:
        return self.process.pid

    def status(self) -> dict[str, str]:
        """/proc/PID/status as a dict (TracerPid, SigPnd, ShdPnd...)."""
        with open(f"/proc/{self.pid}/status", encoding="utf-8") as handle:
            return dict(
                line.split(":\t", 1) for line in handle.read().splitlines() if ":\t" in line
            )

    def pending(self) -> set[int]:
        status = self.status()
        mask = int(status.get("SigPnd", "0"), 16) | int(status.get("ShdPnd", "0"), 16)
        return {number for number in range(1, 65) if mask & (1 << (number - 1))}

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()


def start_sentinel(
    *,
    argv: list[str],
    environ_token: str,
    environment: dict[str, str],
    memory_token: str,
    cwd: Path,
    stdin: int | None,
) -> Sentinel:
    """Start a sentinel (``argv``: its visible prefix and token); returns once it has blocked
    its signals and reported where its memory token is."""
    read_end, write_end = os.pipe()
    os.write(write_end, memory_token.encode())
    os.close(write_end)
    signals = ",".join(str(int(number)) for number in SENTINEL_SIGNALS.values())
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _SENTINEL_CODE, *argv, signals, str(read_end)],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={
            **environment,
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "STOCKADE_SENTINEL": environ_token,
        },
        cwd=cwd,
        pass_fds=(read_end,),
        start_new_session=True,
    )
    os.close(read_end)
    assert process.stdout is not None
    line = process.stdout.readline().decode().split()
    if len(line) != 2:
        process.kill()
        process.wait()
        raise RuntimeError("the sentinel process did not start")
    return Sentinel(process, int(line[0]), int(line[1]))


@contextlib.contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` in the doctor's own environment while the block runs; then every name
    is as it was (set to its old value, or unset)."""
    previous = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class Terminal:
    """A pseudo-terminal pair on the host; what anything writes to its terminal side can be
    read back from the controlling side."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        os.set_blocking(self.master, False)
        self._seen = b""

    def output(self) -> bytes:
        """Everything written to the terminal side so far."""
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            self._seen += chunk
        return self._seen

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


def processes_with(needle: str) -> list[tuple[int, str]]:
    """Live host processes (pid, comm) whose command line contains ``needle`` (zombies and
    bubblewrap's own processes left out)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if needle.encode() not in handle.read():
                    continue
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read()
        except OSError:
            continue
        comm = fields[fields.index(b"(") + 1 : fields.rindex(b")")].decode(errors="replace")
        state = fields[fields.rindex(b")") + 2 : fields.rindex(b")") + 3]
        if state not in (b"Z", b"X") and comm != "bwrap":
            found.append((int(name), comm))
    return found


def kill_processes(needle: str) -> None:
    """SIGKILL every live process whose command line contains ``needle`` (the battery's own)."""
    for pid, _ in processes_with(needle):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
