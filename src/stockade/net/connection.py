"""One proxied connection: the two endpoints, the relay between them, and the ways a
connection ends before it relays.

Relaying uses plain ``asyncio.Protocol`` callbacks (no coroutine per chunk): bytes received on
one side are written straight to the other transport, with reading paused while the other side's
write buffer is full. See benchmarks/proxy.py for the numbers.
"""

from __future__ import annotations

import asyncio

from stockade.net.domains import Decision

# --- tunables ---------------------------------------------------------------------------------
MAX_HEAD_BYTES = 64 * 1024  # request / response head (request line + headers)
WRITE_BUFFER_HIGH = 1024 * 1024  # pause the reading side once this much is queued
READ_SIZE = 1024 * 1024  # bytes per socket read while relaying
# ----------------------------------------------------------------------------------------------


class Refused(Exception):
    """A decision to refuse, carried to the protocol handler that answers it."""

    def __init__(self, decision: Decision, address: str | None = None) -> None:
        super().__init__(decision.reason)
        self.decision = decision
        self.address = address


class UpstreamFailed(Exception):
    """The origin could not be reached; ``socks_code`` and ``status`` say how to report it."""

    def __init__(self, message: str, *, status: int, socks_code: int) -> None:
        super().__init__(message)
        self.status = status
        self.socks_code = socks_code


class BadRequest(Exception):
    """The client's request is malformed or too large; ``status`` is the HTTP answer."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class PeerClosed(Exception):
    """The peer closed before sending what the protocol requires."""


class Endpoint(asyncio.Protocol):
    """One side of a proxied connection.

    During the handshake it buffers bytes for the async ``read_*`` helpers; once relaying, every
    chunk received is written straight to ``sink`` and flow control pauses ``source`` while this
    side's write buffer is full.
    """

    def __init__(self, registry: set[Endpoint]) -> None:
        self.transport: asyncio.Transport | None = None
        self.sink: Endpoint | None = None  # where bytes received here go when relaying
        self.source: Endpoint | None = None  # whose reading pauses when our writes back up
        self.close_on_eof = False  # one-way relay: EOF here closes both sides
        self.eof = False
        self.lost = False
        self._buffer = bytearray()
        self._waiter: asyncio.Future[None] | None = None
        self._drain_waiter: asyncio.Future[None] | None = None
        self._write_paused = False
        self._reading_paused = False
        self._registry = registry

    # -- asyncio.Protocol callbacks --
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH)
        # asyncio's selector transports read at most ``max_size`` (256 KiB) per callback; a
        # bigger read halves the relay's CPU per byte (benchmarks/proxy.py). An attribute other
        # transports simply do not have, so setting it is harmless there.
        transport.max_size = READ_SIZE  # type: ignore[attr-defined]
        self._registry.add(self)

    def data_received(self, data: bytes) -> None:
        sink = self.sink
        if sink is not None:
            if sink.transport is not None:
                sink.transport.write(data)
            return
        self._buffer += data
        if len(self._buffer) > MAX_HEAD_BYTES and self.transport is not None:
            self.transport.pause_reading()
            self._reading_paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        sink = self.sink
        if sink is None:
            return True
        if self.close_on_eof:
            self.close()
            sink.close()
        elif sink.transport is not None and sink.transport.can_write_eof():
            sink.transport.write_eof()
            if sink.eof:  # both directions finished
                self.close()
                sink.close()
        else:
            sink.close()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.eof = True
        self._registry.discard(self)
        self._wake()
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)
        for peer in (self.sink, self.source):
            if peer is not None:
                peer.close()

    def pause_writing(self) -> None:
        self._write_paused = True
        if self.source is not None and self.source.transport is not None:
            self.source.transport.pause_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        if self.source is not None and self.source.transport is not None:
            self.source.transport.resume_reading()
        if self._drain_waiter is not None and not self._drain_waiter.done():
            self._drain_waiter.set_result(None)

    # -- handshake helpers --
    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    async def _wait(self) -> None:
        if self.eof:
            raise PeerClosed("connection closed")
        self.resume()
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    async def read_exactly(self, count: int) -> bytes:
        while len(self._buffer) < count:
            await self._wait()
        data = bytes(self._buffer[:count])
        del self._buffer[:count]
        return data

    async def read_until(self, separator: bytes, limit: int) -> bytes:
        start = 0
        while True:
            index = self._buffer.find(separator, start)
            if index >= 0:
                end = index + len(separator)
                if end > limit:
                    break
                data = bytes(self._buffer[:end])
                del self._buffer[:end]
                return data
            if len(self._buffer) > limit:
                break
            start = max(0, len(self._buffer) - len(separator) + 1)
            await self._wait()
        raise BadRequest("request head too large", status=431)

    async def read_some(self, limit: int = 256 * 1024) -> bytes:
        """Up to ``limit`` buffered bytes, waiting for at least one; b"" at EOF."""
        while not self._buffer:
            if self.eof:
                return b""
            await self._wait()
        data = bytes(self._buffer[:limit])
        del self._buffer[:limit]
        return data

    def resume(self) -> None:
        """Undo a pause the handshake buffer limit caused (relaying has its own flow control)."""
        if self._reading_paused and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()

    def take_buffer(self) -> bytes:
        data = bytes(self._buffer)
        self._buffer.clear()
        return data

    def unread(self, data: bytes) -> None:
        """Put ``data`` back in front of the buffer (a peeked protocol byte)."""
        self._buffer[:0] = data

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.lost:
            self.transport.write(data)

    async def drain(self) -> None:
        if self.lost:
            raise PeerClosed("connection closed")
        if self._write_paused:
            self._drain_waiter = asyncio.get_running_loop().create_future()
            try:
                await self._drain_waiter
            finally:
                self._drain_waiter = None

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    def abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()


async def settle() -> None:
    """Let callbacks scheduled by transport aborts run, so their sockets are really closed."""
    for _ in range(3):
        await asyncio.sleep(0)


def relay(client: Endpoint, upstream: Endpoint) -> None:
    """Pipe both directions until both have ended (or either side fails)."""
    pending = client.take_buffer()
    if pending:
        upstream.write(pending)
    late = upstream.take_buffer()
    if late:
        client.write(late)
    client.sink = client.source = upstream
    upstream.sink = upstream.source = client
    for side, other in ((client, upstream), (upstream, client)):
        if side.lost:
            other.close()
        elif side.eof and other.transport is not None:  # EOF that arrived before the relay
            if other.transport.can_write_eof():
                other.transport.write_eof()
            else:
                other.close()
    if client.eof and upstream.eof:
        client.close()
        upstream.close()
    for side in (client, upstream):
        side.resume()


def pipe_one_way(source: Endpoint, destination: Endpoint) -> None:
    """Pipe ``source`` -> ``destination``; the end of ``source`` closes both."""
    late = source.take_buffer()
    if late:
        destination.write(late)
    source.sink = destination
    source.close_on_eof = True
    destination.source = source
    if source.eof:
        source.close()
        destination.close()
    else:
        source.resume()
