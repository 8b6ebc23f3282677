"""The proxy's end of the jail bridge: a unix socket on which relays hand over connections.

Each jail's relay (``stockade.net.bridge``) connects here once, before the jailed command
starts, and from then on sends every TCP connection it accepts as a file descriptor
(``SCM_RIGHTS``, one byte per message). The proxy serves the received socket like any client.
The relay therefore never opens a connection of its own after its start, and its seccomp
filter forbids it to (see the bridge).

What arrives is checked before it is served: it must be a connected TCP stream socket (IPv4 or
IPv6); anything else a hijacked relay might send (a pipe, a file, a unix socket) is closed
unread. The number of relays and of descriptors per message are bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import stat
from collections.abc import Callable

from stockade.errors import UsageError

log = logging.getLogger("stockade.net.proxy")

MAX_RELAYS = 256  # relay connections at once (one per running jail)
MAX_FDS_PER_MESSAGE = 4  # a relay sends one; extra ones are closed by the kernel (MSG_CTRUNC)
MAX_UNIX_PATH = 107


def prepare_unix_path(path: str) -> None:
    """Refuse a path that is too long or holds something other than an old socket; remove an
    old socket (a crashed proxy's) so it can be bound again."""
    if len(os.fsencode(path)) > MAX_UNIX_PATH:
        raise UsageError(
            f"unix socket path too long ({len(path)} bytes, the limit is {MAX_UNIX_PATH}): {path}",
            fix="use a shorter directory for the session's sockets",
        )
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path).st_mode
        if not stat.S_ISSOCK(mode):
            raise UsageError(
                f"{path} exists and is not a socket; refusing to replace it",
                fix="choose a path inside the session's own directory",
            )
        os.unlink(path)


def remove_if_same(path: str, inode: tuple[int, int] | None) -> None:
    """Unlink ``path`` only if it is still the socket we bound (device, inode)."""
    if inode is None:
        return
    with contextlib.suppress(OSError):
        info = os.lstat(path)
        if (info.st_dev, info.st_ino) == inode:
            os.unlink(path)


def socket_inode(path: str) -> tuple[int, int]:
    os.chmod(path, 0o600)
    info = os.stat(path)
    return info.st_dev, info.st_ino


def adoptable(fd: int) -> socket.socket | None:
    """The received descriptor as a socket if it is a TCP stream (else it is closed)."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError:  # not a socket at all
        os.close(fd)
        return None
    if sock.family not in (socket.AF_INET, socket.AF_INET6) or sock.type != socket.SOCK_STREAM:
        sock.close()
        return None
    try:
        sock.getpeername()  # connected (a listening or fresh socket is of no use to anyone)
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        sock.close()
        return None
    return sock


class HandoffListener:
    """Accept relays on ``path`` and pass every valid received socket to ``adopt`` (on the
    event loop's thread). ``close`` ends everything and removes the socket file."""

    def __init__(self, path: str, adopt: Callable[[socket.socket], None]) -> None:
        self.path = path
        self._adopt = adopt
        self._loop: asyncio.AbstractEventLoop | None = None
        self._listener: socket.socket | None = None
        self._relays: set[socket.socket] = set()
        self._inode: tuple[int, int] | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        prepare_unix_path(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)
            self._inode = socket_inode(self.path)
            listener.listen(64)
            listener.setblocking(False)
        except BaseException:
            listener.close()
            raise
        self._loop, self._listener = loop, listener
        loop.add_reader(listener.fileno(), self._accept)

    def _accept(self) -> None:
        assert self._listener is not None and self._loop is not None
        while True:
            try:
                relay, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                log.exception("stockade proxy: accepting a relay failed")
                return
            if len(self._relays) >= MAX_RELAYS:
                relay.close()
                continue
            relay.setblocking(False)
            self._relays.add(relay)
            self._loop.add_reader(relay.fileno(), self._receive, relay)

    def _receive(self, relay: socket.socket) -> None:
        while True:
            try:
                data, fds, _flags, _address = socket.recv_fds(relay, 1, MAX_FDS_PER_MESSAGE)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                data, fds = b"", []
            if not data and not fds:  # the relay is gone
                self._drop(relay)
                return
            for fd in fds:
                sock = adoptable(fd)
                if sock is not None:
                    self._adopt(sock)

    def _drop(self, relay: socket.socket) -> None:
        if self._loop is not None:
            with contextlib.suppress(ValueError, OSError):
                self._loop.remove_reader(relay.fileno())
        self._relays.discard(relay)
        relay.close()

    def close(self) -> None:
        for relay in list(self._relays):
            self._drop(relay)
        listener, self._listener = self._listener, None
        if listener is not None:
            if self._loop is not None:
                with contextlib.suppress(ValueError, OSError):
                    self._loop.remove_reader(listener.fileno())
            listener.close()
        remove_if_same(self.path, self._inode)
        self._inode = None
