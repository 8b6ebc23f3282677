"""The in-jail relay cannot be driven (issue 16.6).

In ``allowlist`` mode the jail's first process forks a relay that carries the command's TCP
connections to the proxy. It runs next to the command, as the same user, so the command tries
to take it over: it finds the relay, rewrites the proxy socket path in the relay's memory
through ``/proc/PID/mem`` to the path of a unix listener this test holds on the host, and
then connects to the relay. Judged from the host side: the listener must get no connection.
(On the code before the fix the relay connected to whatever path it was told to.)
"""

from __future__ import annotations

import secrets
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.net.domains import DomainPolicy
from stockade.net.jail import JAIL_SOCKET_PATH
from stockade.runner import Sandbox
from stockade.sandbox.policy import NetworkMode, PolicyRequest
from tests.conftest import VISIBLE_TMP

pytestmark = pytest.mark.integration

# Run inside the jail: find the relay, rewrite every copy of the proxy socket path in its
# writable memory, then make it carry a connection. Prints what it managed, for diagnosis
# only (the verdict is the host listener's).
HIJACK = r"""
import os, re, socket, sys
old, new = sys.argv[1].encode(), sys.argv[2].encode()
assert len(old) == len(new)
me, parent = os.getpid(), os.getppid()
relays = []
for name in os.listdir("/proc"):
    if not name.isdigit() or int(name) in (me, parent):
        continue
    try:
        with open(f"/proc/{name}/cmdline", "rb") as handle:
            if b"bridge" in handle.read():
                relays.append(int(name))
    except OSError:
        pass
print("relays", relays)
rewritten = 0
for pid in relays:
    try:
        mem = open(f"/proc/{pid}/mem", "r+b", buffering=0)
        maps = open(f"/proc/{pid}/maps").read().splitlines()
    except OSError as error:
        print("cannot open", pid, error)
        continue
    for line in maps:
        fields = line.split()
        if not fields[1].startswith("rw"):
            continue
        start, end = (int(value, 16) for value in fields[0].split("-"))
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except OSError:
            continue
        for found in re.finditer(re.escape(old), data):
            try:
                mem.seek(start + found.start())
                mem.write(new)
                rewritten += 1
            except OSError as error:
                print("write failed", error)
print("rewritten", rewritten)
try:
    with socket.create_connection(("127.0.0.1", 3128), timeout=5) as conn:
        conn.sendall(b"GET http://example.test/ HTTP/1.1\r\nHost: example.test\r\n\r\n")
        print("answer", conn.recv(200))
except OSError as error:
    print("connect", error)
"""


class UnixListener:
    """A unix stream listener on the host that counts the connections it gets."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.connections = 0
        self.connected = threading.Event()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        path.chmod(0o777)  # whoever the jail runs as may connect: only the relay must not
        self._server.listen(16)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.connections += 1
            self.connected.set()
            conn.close()

    def close(self) -> None:
        self._server.close()
        self.path.unlink(missing_ok=True)


@pytest.fixture
def listener() -> Iterator[UnixListener]:
    """A listener at a path exactly as long as the jail's proxy socket path, in a directory
    the jail can see (so only the relay's own confinement keeps it out)."""
    directory = Path(VISIBLE_TMP) / f"sk{secrets.token_hex(2)}"
    directory.mkdir(mode=0o755)
    name_length = len(JAIL_SOCKET_PATH) - len(str(directory)) - 1
    assert name_length > 0
    path = directory / ("s" * name_length)
    assert len(str(path)) == len(JAIL_SOCKET_PATH)
    server = UnixListener(path)
    try:
        yield server
    finally:
        server.close()
        directory.rmdir()


def test_the_command_cannot_make_the_relay_connect_elsewhere(
    project: Path, listener: UnixListener
) -> None:
    with Sandbox(
        PolicyRequest(project=project, cwd=project, network=NetworkMode.ALLOWLIST),
        backend="bwrap",
        domain_policy=DomainPolicy(),
    ) as sandbox:
        result = sandbox.run(
            ["/usr/bin/python3", "-c", HIJACK, JAIL_SOCKET_PATH, str(listener.path)], timeout=60
        )
    detail = result.stdout + result.stderr
    assert result.exit_code == 0, detail
    assert listener.connections == 0, f"the relay connected to the host listener: {detail}"


def test_the_listener_is_reachable_without_the_jail(listener: UnixListener) -> None:
    """The control: the same listener does count a plain connection (so 0 above means held)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(listener.path))
    assert listener.connected.wait(30)
    assert listener.connections == 1
