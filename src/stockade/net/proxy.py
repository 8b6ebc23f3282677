"""The allow-list proxy: the jail's only way out when the network mode is ``allowlist``.

Clients arrive on a TCP or unix listener, or - from a bwrap jail - handed over by the jail's
relay as sockets (``stockade.net.handoff``). Each speaks one of three protocols, told apart by
the first byte it sends:

* ``0x05``: SOCKS5, CONNECT only, no authentication, IPv4 / domain / IPv6 address types.
  Refusals get the standard reply codes (0x02 "not allowed by ruleset" for policy refusals).
* ``0x04``: SOCKS4, answered with "request rejected" (unsupported: it cannot carry names).
* an ASCII letter: HTTP/1.x. ``CONNECT host:port`` opens a tunnel; any other method must use an
  absolute ``http://`` URI and is forwarded. Plain forwarding always uses ``Connection: close``
  on both sides: the proxy forwards exactly one request per client connection, frames the
  request body itself (Content-Length or chunked; both at once is refused as smuggling) and
  relays the response until the origin closes. That keeps it correct without parsing response
  framing, and makes it impossible to slip a second, unchecked request down an allowed
  connection. ``Host`` is rewritten from the URI, hop-by-hop headers are dropped.

Every connection is decided by ``DomainPolicy`` (a host no rule covers goes to its ``ask``
hook while the connection waits), then the name is resolved once, EVERY address is vetted
(``stockade.net.addresses``) and the proxy connects to exactly a vetted address. Refusals
answer 403 with a body naming the host, the reason, the rule and how to allow it. What the
proxy reports (refusals, first uses) and logs is capped (``stockade.net.events``).

``AllowListProxy`` runs the asyncio loop in a background thread so synchronous callers can use
it. It fails closed: stopping (or a crash of the loop) closes the listeners, removes the unix
socket and aborts every relayed connection; nothing is ever passed through unchecked.

Relaying uses plain ``asyncio.Protocol`` callbacks (no coroutine per chunk): bytes received on
one side are written straight to the other transport, with reading paused while the other side's
write buffer is full. See benchmarks/proxy.py for the numbers.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import queue
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from stockade.errors import StockadeError, UsageError
from stockade.net.addresses import IPAddress
from stockade.net.domains import (
    Decision,
    DecisionSource,
    DomainPolicy,
    InvalidHost,
    normalise_host,
    split_host_port,
)
from stockade.net.events import MAX_EVENTS_PER_PROXY, EventLimiter, LogLimiter
from stockade.net.events import EventHook as EventHook  # re-exported: the proxy's API
from stockade.net.events import EventKind as EventKind
from stockade.net.events import Protocol as Protocol
from stockade.net.events import ProxyEvent as ProxyEvent
from stockade.net.handoff import HandoffListener, prepare_unix_path, remove_if_same, socket_inode
from stockade.net.resolve import ResolveError, resolve_async, vet

log = logging.getLogger(__name__)

# --- tunables ---------------------------------------------------------------------------------
MAX_HEAD_BYTES = 64 * 1024  # request / response head (request line + headers)
MAX_HEADERS = 128
HANDSHAKE_TIMEOUT = 30.0  # seconds for a client to send its request
CONNECT_TIMEOUT = 10.0  # seconds to reach the origin (all vetted addresses together)
RESPONSE_HEAD_TIMEOUT = 300.0  # seconds for an origin to start answering a plain HTTP request
WRITE_BUFFER_HIGH = 1024 * 1024  # pause the reading side once this much is queued
READ_SIZE = 1024 * 1024  # bytes per socket read while relaying
MAX_CONNECTIONS = 512  # client connections at once; more are closed immediately
MAX_REMEMBERED_ANSWERS = 4096  # bool answers of a plain ask hook kept per proxy (memory bound)

# Headers that describe one hop, never forwarded (RFC 9110 §7.6.1, plus the proxy ones).
# Transfer-Encoding is deliberately kept: the body is forwarded byte for byte, still chunked.
HOP_BY_HOP_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "upgrade",
    }
)

SOCKS_VERSION = 5
SOCKS_REPLY_SUCCEEDED = 0x00
SOCKS_REPLY_GENERAL_FAILURE = 0x01
SOCKS_REPLY_NOT_ALLOWED = 0x02
SOCKS_REPLY_NETWORK_UNREACHABLE = 0x03
SOCKS_REPLY_HOST_UNREACHABLE = 0x04
SOCKS_REPLY_CONNECTION_REFUSED = 0x05
SOCKS_REPLY_TTL_EXPIRED = 0x06
SOCKS_REPLY_COMMAND_NOT_SUPPORTED = 0x07
SOCKS_REPLY_ADDRESS_TYPE_NOT_SUPPORTED = 0x08
# ----------------------------------------------------------------------------------------------

_TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_CHUNK_SIZE_LINE = re.compile(rb"^([0-9A-Fa-f]+)(;[^\r\n]*)?\r\n$")


class _Refused(Exception):
    """A decision to refuse, carried to the protocol handler that answers it."""

    def __init__(self, decision: Decision, address: str | None = None) -> None:
        super().__init__(decision.reason)
        self.decision = decision
        self.address = address


class _UpstreamFailed(Exception):
    """The origin could not be reached; ``socks_code`` and ``status`` say how to report it."""

    def __init__(self, message: str, *, status: int, socks_code: int) -> None:
        super().__init__(message)
        self.status = status
        self.socks_code = socks_code


class BadRequest(Exception):
    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _Closed(Exception):
    """The peer closed before sending what the protocol requires."""


class _Endpoint(asyncio.Protocol):
    """One side of a proxied connection.

    During the handshake it buffers bytes for the async ``read_*`` helpers; once relaying, every
    chunk received is written straight to ``sink`` and flow control pauses ``source`` while this
    side's write buffer is full.
    """

    def __init__(self, registry: set[_Endpoint]) -> None:
        self.transport: asyncio.Transport | None = None
        self.sink: _Endpoint | None = None  # where bytes received here go when relaying
        self.source: _Endpoint | None = None  # whose reading pauses when our writes back up
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
            raise _Closed("connection closed")
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

    def write(self, data: bytes) -> None:
        if self.transport is not None and not self.lost:
            self.transport.write(data)

    async def drain(self) -> None:
        if self.lost:
            raise _Closed("connection closed")
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


async def _settle() -> None:
    """Let callbacks scheduled by transport aborts run, so their sockets are really closed."""
    for _ in range(3):
        await asyncio.sleep(0)


def relay(client: _Endpoint, upstream: _Endpoint) -> None:
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


def pipe_one_way(source: _Endpoint, destination: _Endpoint) -> None:
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


class AllowListProxy:
    """The allow-list proxy, served from a background thread with its own event loop.

    ``unix_path``: listen on this unix socket (created 0600; an old socket there is replaced).
    ``handoff_path``: accept jail relays here; they hand over their clients' sockets (see
    ``stockade.net.handoff``). ``tcp_port``: listen on 127.0.0.1 at this port (0 picks a free
    one). With none of them, a free TCP port is used. ``on_event`` receives a ProxyEvent for
    refusals and for the first allowed use of each host, within the limits of
    ``stockade.net.events`` (repeats summarised, a lifetime budget, a final tally on stop); it
    runs on the proxy thread, so keep it quick. If it raises for a first use, that connection
    is refused (it could not be recorded).

    The policy's ``ask`` hook (hosts no rule covers) runs on one worker thread, one question
    at a time, while the connection waits. A hook that answers with a ``Decision`` is asked
    for every such connection (it keeps its own memory: once / session / project); a plain
    ``bool`` answer is remembered by the proxy for that host.
    """

    def __init__(
        self,
        policy: DomainPolicy,
        *,
        unix_path: str | os.PathLike[str] | None = None,
        handoff_path: str | os.PathLike[str] | None = None,
        tcp_port: int | None = None,
        on_event: EventHook | None = None,
        connect_timeout: float = CONNECT_TIMEOUT,
        handshake_timeout: float = HANDSHAKE_TIMEOUT,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        self.policy = policy
        self._unix_path = os.fspath(unix_path) if unix_path is not None else None
        self._handoff_path = os.fspath(handoff_path) if handoff_path is not None else None
        listens = unix_path is not None or handoff_path is not None
        self._tcp_port = 0 if tcp_port is None and not listens else tcp_port
        self._on_event = on_event
        self._refusal_tap: Callable[[Decision], None] | None = None
        self.connect_timeout = connect_timeout
        self.handshake_timeout = handshake_timeout
        self.max_connections = max_connections
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._tcp_address: tuple[str, int] | None = None
        self._unix_inode: tuple[int, int] | None = None
        self._endpoints: set[_Endpoint] = set()
        self._clients = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._used_hosts: set[str] = set()
        self._answers: dict[str, bool] = {}  # plain-bool hooks only (see the class docstring)
        self._questions: queue.SimpleQueue[_Question | None] | None = None
        self._pending: dict[str, asyncio.Future[object]] = {}  # host -> its open question
        self._handoff: HandoffListener | None = None
        self._events = EventLimiter(self._deliver_event, schedule=self._call_later)
        self._log = LogLimiter(log)

    # -- lifecycle --
    def start(self, timeout: float = 10.0) -> AllowListProxy:
        """Bind the listeners and serve in a background thread; raise if binding fails."""
        if self._thread is not None:
            raise UsageError("this proxy was already started; create a new AllowListProxy")
        self._thread = threading.Thread(target=self._run, name="stockade-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise StockadeError("the network proxy did not start in time")
        if self._startup_error is not None:
            self._thread.join()
            error = self._startup_error
            if isinstance(error, StockadeError):
                raise error
            raise StockadeError(
                f"the network proxy could not start: {error}",
                fix="check that the socket path's directory exists and is writable",
            ) from error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Close the listeners and every connection; afterwards nothing gets through.

        Returns once the proxy thread has finished (unless called from that thread itself,
        e.g. from ``on_event``, where it only requests the stop).
        """
        loop, stop = self._loop, self._stop_requested
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # loop already gone
                loop.call_soon_threadsafe(stop.set)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def __enter__(self) -> AllowListProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def set_event_hook(self, hook: EventHook | None) -> None:
        """Replace ``on_event`` (e.g. once the ledger it writes to is known)."""
        self._on_event = hook

    def set_refusal_tap(self, tap: Callable[[Decision], None] | None) -> None:
        """Also tell ``tap`` about every refusal as it happens, before any summarising (for
        in-memory consumers such as a running command's result; keep it quick)."""
        self._refusal_tap = tap

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._ready.is_set()

    @property
    def unix_path(self) -> str | None:
        """The unix socket path (bind this into the jail), or None."""
        return self._unix_path

    @property
    def handoff_path(self) -> str | None:
        """The relays' hand-off socket path (bind its directory into the jail), or None."""
        return self._handoff_path

    @property
    def tcp_address(self) -> tuple[str, int] | None:
        """``("127.0.0.1", port)`` once started with a TCP listener, else None."""
        return self._tcp_address

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` for the TCP listener (raises if there is none)."""
        if self._tcp_address is None:
            raise UsageError("this proxy has no TCP listener")
        host, port = self._tcp_address
        return f"http://{host}:{port}"

    # -- the loop thread --
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as error:  # recorded; start() reports it
            if not self._ready.is_set():
                self._startup_error = error
            else:
                log.exception("stockade proxy loop crashed; all connections closed")
        finally:
            self._shutdown_endpoints()
            with contextlib.suppress(Exception):  # let the aborts actually close the sockets
                loop.run_until_complete(_settle())
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
            self._remove_unix_socket()
            self._ready.set()

    async def _serve(self) -> None:
        loop = asyncio.get_running_loop()
        self._stop_requested = asyncio.Event()
        servers: list[asyncio.base_events.Server] = []
        try:
            if self._unix_path is not None:
                servers.append(await self._bind_unix(loop, self._unix_path))
            if self._handoff_path is not None:
                self._handoff = HandoffListener(self._handoff_path, self._adopt)
                self._handoff.start(loop)
            if self._tcp_port is not None:
                server = await loop.create_server(
                    self._new_client, host="127.0.0.1", port=self._tcp_port
                )
                port = server.sockets[0].getsockname()[1]
                self._tcp_address = ("127.0.0.1", port)
                servers.append(server)
            self._ready.set()
            await self._stop_requested.wait()
        finally:
            for server in servers:
                server.close()
            if self._handoff is not None:
                self._handoff.close()
            self._remove_unix_socket()
            for task in list(self._tasks):
                task.cancel()
            self._shutdown_endpoints()
            if self._tasks:
                await asyncio.gather(*self._tasks, return_exceptions=True)
            await _settle()
            self._stop_questions()
            self._events.close()  # the last summaries and the final tally

    async def _bind_unix(
        self, loop: asyncio.AbstractEventLoop, path: str
    ) -> asyncio.base_events.Server:
        prepare_unix_path(path)
        server = await loop.create_unix_server(self._new_client, path=path)
        self._unix_inode = socket_inode(path)
        return server

    def _remove_unix_socket(self) -> None:
        if self._unix_path is not None:
            remove_if_same(self._unix_path, self._unix_inode)
        self._unix_inode = None

    def _shutdown_endpoints(self) -> None:
        for endpoint in list(self._endpoints):
            endpoint.abort()
        self._endpoints.clear()

    def _new_client(self) -> _Endpoint:
        endpoint = _ClientEndpoint(self._endpoints, self)
        return endpoint

    def _adopt(self, sock: socket.socket) -> None:
        """Serve a client socket a jail relay handed over (already checked: a TCP stream)."""
        loop = asyncio.get_running_loop()
        task = loop.create_task(self._serve_adopted(sock))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve_adopted(self, sock: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(self._new_client, sock)
        except OSError:
            sock.close()

    def _client_started(self, client: _ClientEndpoint) -> None:
        if self._clients >= self.max_connections:
            self._log.log(
                logging.WARNING,
                "too-many",
                "too many proxy connections (%d); closing a new one",
                self._clients,
            )
            client.abort()
            return
        self._clients += 1
        client.counted = True
        task = asyncio.get_running_loop().create_task(self._handle(client))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- one client --
    async def _handle(self, client: _Endpoint) -> None:
        try:
            async with asyncio.timeout(self.handshake_timeout):
                first = await client.read_exactly(1)
            client._buffer[:0] = first
            if first[0] == SOCKS_VERSION:
                await self._handle_socks5(client)
            elif first[0] == 4:
                client.write(b"\x00\x5b" + b"\x00" * 6)  # SOCKS4: request rejected
                client.close()
            elif first.isalpha():
                await self._handle_http(client)
            else:
                client.abort()
        except (_Closed, TimeoutError, ConnectionError):
            client.abort()
        except asyncio.CancelledError:
            client.abort()
            raise
        except Exception:  # a bug must not take the proxy down; this connection fails closed
            self._log.log(
                logging.ERROR, "bug", "stockade proxy: unexpected error; connection closed",
                exc=True,
            )  # fmt: skip
            client.abort()

    async def _authorise(self, protocol: Protocol, host: str, port: int) -> Decision:
        """Decide by policy (asking if configured), then emit a refusal event if refused."""
        policy = self.policy
        decision = policy.match(host, port)
        if decision.source is DecisionSource.NO_MATCH and policy.ask is not None:
            decision = await self._ask(policy, decision)
        if not decision.allowed:
            self._emit(EventKind.REFUSED, protocol, decision, None)
            raise _Refused(decision)
        return decision

    async def _ask(self, policy: DomainPolicy, decision: Decision) -> Decision:
        """Put a host no rule covers to the ask hook, off the loop, one question at a time
        (a person answers one at a time, and the next connection to the same host then finds
        the answer). The connection waits meanwhile; other connections are served."""
        host = decision.host
        if host in self._answers:
            return policy.apply_answer(decision, self._answers[host])
        future = self._pending.get(host)
        if future is None:  # connections to a host being asked about share that question
            loop = asyncio.get_running_loop()
            future = self._pending[host] = loop.create_future()
            future.add_done_callback(lambda _done: self._pending.pop(host, None))
            self._question_queue().put(_Question(policy, decision, loop, future))
        answer = await asyncio.shield(future)
        if isinstance(answer, Decision):
            return answer
        if isinstance(answer, bool) and len(self._answers) < MAX_REMEMBERED_ANSWERS:
            self._answers[host] = answer
        if host in self._answers:
            return policy.apply_answer(decision, self._answers[host])
        return policy.apply_answer(decision, answer if isinstance(answer, bool) else None)

    def _question_queue(self) -> queue.SimpleQueue[_Question | None]:
        if self._questions is None:
            self._questions = queue.SimpleQueue()
            threading.Thread(
                target=_ask_worker, args=(self._questions,), name="stockade-proxy-ask",
                daemon=True,  # a question nobody answers must not keep the process alive
            ).start()  # fmt: skip
        return self._questions

    def _stop_questions(self) -> None:
        if self._questions is not None:
            self._questions.put(None)
            self._questions = None

    async def _open_upstream(
        self, protocol: Protocol, decision: Decision
    ) -> tuple[_Endpoint, IPAddress]:
        """Resolve once, vet every address, connect to a vetted one; record first use."""
        host, port = decision.host, decision.port
        try:
            async with asyncio.timeout(self.connect_timeout):
                addresses = await resolve_async(self.policy, host, port)
        except (ResolveError, TimeoutError) as error:
            raise _UpstreamFailed(
                f"cannot resolve {host}: {error}",
                status=502,
                socks_code=SOCKS_REPLY_HOST_UNREACHABLE,
            ) from None
        vetted = vet(decision, addresses)
        if not vetted.allowed:
            self._emit(EventKind.REFUSED, protocol, vetted, ", ".join(map(str, addresses)))
            raise _Refused(vetted, ", ".join(map(str, addresses)))
        if host not in self._used_hosts:
            try:
                self._emit(EventKind.FIRST_USE, protocol, decision, str(addresses[0]), strict=True)
            except Exception as error:
                raise _UpstreamFailed(
                    f"could not record the first use of {host}: {error}",
                    status=502,
                    socks_code=SOCKS_REPLY_GENERAL_FAILURE,
                ) from None
            if len(self._used_hosts) < MAX_EVENTS_PER_PROXY * 8:  # memory bound, see events
                self._used_hosts.add(host)
        last_error: OSError | None = None
        try:
            async with asyncio.timeout(self.connect_timeout):
                for address in addresses:
                    try:
                        upstream = await self._connect(address, port)
                    except OSError as error:
                        last_error = error
                        continue
                    return upstream, address
        except TimeoutError:
            raise _UpstreamFailed(
                f"timed out connecting to {host}:{port}",
                status=504,
                socks_code=SOCKS_REPLY_TTL_EXPIRED,
            ) from None
        code = SOCKS_REPLY_GENERAL_FAILURE
        if last_error is not None:
            code = {
                errno.ECONNREFUSED: SOCKS_REPLY_CONNECTION_REFUSED,
                errno.ENETUNREACH: SOCKS_REPLY_NETWORK_UNREACHABLE,
                errno.EHOSTUNREACH: SOCKS_REPLY_HOST_UNREACHABLE,
            }.get(last_error.errno or 0, SOCKS_REPLY_GENERAL_FAILURE)
        reason = last_error.strerror if last_error is not None else "no address"
        raise _UpstreamFailed(
            f"cannot connect to {host}:{port}: {reason}", status=502, socks_code=code
        )

    async def _connect(self, address: IPAddress, port: int) -> _Endpoint:
        """Open a TCP connection to exactly this (vetted) address: an IP literal, no lookup."""
        loop = asyncio.get_running_loop()
        _, upstream = await loop.create_connection(
            lambda: _Endpoint(self._endpoints), host=str(address), port=port
        )
        return upstream

    def _emit(
        self,
        kind: EventKind,
        protocol: Protocol,
        decision: Decision,
        address: str | None,
        *,
        strict: bool = False,
    ) -> None:
        tap = self._refusal_tap
        if tap is not None and kind is EventKind.REFUSED:
            try:
                tap(decision)
            except Exception:
                self._log.log(logging.ERROR, "tap", "stockade proxy: refusal tap failed", exc=True)
        if self._on_event is None:
            return
        event = ProxyEvent(
            kind=kind,
            protocol=protocol,
            host=decision.host,
            port=decision.port,
            decision=decision,
            address=address,
            time=time.time(),
        )
        self._events.offer(event, strict=strict)

    def _deliver_event(self, event: ProxyEvent) -> None:
        hook = self._on_event
        if hook is not None:
            hook(event)

    def _call_later(self, delay: float, callback: Callable[[], None]) -> object:
        loop = self._loop
        if loop is None or loop.is_closed():
            return None
        return loop.call_later(delay, callback)

    # -- SOCKS5 --
    async def _handle_socks5(self, client: _Endpoint) -> None:
        async with asyncio.timeout(self.handshake_timeout):
            _version, count = await client.read_exactly(2)
            methods = await client.read_exactly(count)
            if 0 not in methods:
                client.write(b"\x05\xff")  # no acceptable methods: we only do "no auth"
                client.close()
                return
            client.write(b"\x05\x00")
            version, command, _reserved, address_type = await client.read_exactly(4)
            raw_host, raw_name = "", b""
            if version != SOCKS_VERSION:
                client.abort()
                return
            if address_type == 1:
                raw_host = str(ipaddress.IPv4Address(await client.read_exactly(4)))
            elif address_type == 4:
                raw_host = str(ipaddress.IPv6Address(await client.read_exactly(16)))
            elif address_type == 3:
                length = (await client.read_exactly(1))[0]
                raw_name = await client.read_exactly(length)
            else:
                self._socks_reply(client, SOCKS_REPLY_ADDRESS_TYPE_NOT_SUPPORTED)
                return
            port = int.from_bytes(await client.read_exactly(2), "big")
        if command != 1:
            self._socks_reply(client, SOCKS_REPLY_COMMAND_NOT_SUPPORTED)
            return
        try:
            if address_type == 3:
                raw_host = raw_name.decode("utf-8")
            if port == 0:
                raise InvalidHost("port 0")
            decision = await self._authorise("socks5", raw_host, port)
            upstream, _address = await self._open_upstream("socks5", decision)
        except (InvalidHost, UnicodeDecodeError):
            self._socks_reply(client, SOCKS_REPLY_HOST_UNREACHABLE)
            return
        except _Refused:
            self._socks_reply(client, SOCKS_REPLY_NOT_ALLOWED)
            return
        except _UpstreamFailed as failure:
            self._socks_reply(client, failure.socks_code)
            return
        client.write(bytes([5, SOCKS_REPLY_SUCCEEDED, 0, 1, 0, 0, 0, 0, 0, 0]))
        relay(client, upstream)

    @staticmethod
    def _socks_reply(client: _Endpoint, code: int) -> None:
        client.write(bytes([5, code, 0, 1, 0, 0, 0, 0, 0, 0]))
        client.close()

    # -- HTTP --
    async def _handle_http(self, client: _Endpoint) -> None:
        try:
            async with asyncio.timeout(self.handshake_timeout):
                head = await client.read_until(b"\r\n\r\n", MAX_HEAD_BYTES)
            method, target, version, headers = parse_request_head(head)
            if method == "CONNECT":
                host, port = parse_authority(target, default_port=None)
                protocol: Protocol = "http-connect"
            else:
                host, port, origin_target = parse_absolute_uri(target)
                protocol = "http"
            decision = await self._authorise(protocol, host, port)
            upstream, _address = await self._open_upstream(protocol, decision)
        except BadRequest as error:
            self._http_error(client, error.status, str(error))
            return
        except InvalidHost as error:
            self._http_error(client, 400, error.message)
            return
        except _Refused as refusal:
            self._http_refusal(client, refusal.decision)
            return
        except _UpstreamFailed as failure:
            self._http_error(client, failure.status, str(failure))
            return
        if method == "CONNECT":
            client.write(f"{version} 200 Connection established\r\n\r\n".encode())
            relay(client, upstream)
            return
        request = ForwardRequest(method, origin_target, version, headers, host, port)
        await self._forward_http(client, upstream, request)

    async def _forward_http(
        self, client: _Endpoint, upstream: _Endpoint, request: ForwardRequest
    ) -> None:
        host, port = request.host, request.port
        try:
            framing = body_framing(request.headers)
        except BadRequest as error:
            upstream.close()
            self._http_error(client, error.status, str(error))
            return
        upstream.write(build_request_head(request))
        body = asyncio.get_running_loop().create_task(forward_body(client, upstream, framing))
        body.add_done_callback(lambda task: _abort_on_failure(task, upstream))
        try:
            async with asyncio.timeout(RESPONSE_HEAD_TIMEOUT):
                while True:
                    head = await upstream.read_until(b"\r\n\r\n", MAX_HEAD_BYTES)
                    status, response = rewrite_response_head(head)
                    client.write(response)
                    if not 100 <= status < 200 or status == 101:
                        break
        except (_Closed, BadRequest, TimeoutError):
            upstream.abort()
            failure = body.exception() if body.done() and not body.cancelled() else None
            body.cancel()
            if isinstance(failure, BadRequest):
                self._http_error(client, failure.status, str(failure))
            elif isinstance(failure, _Closed):
                client.abort()
            else:
                self._http_error(client, 502, f"{host}:{port} sent no valid HTTP response")
            return
        pipe_one_way(upstream, client)
        try:
            await body
        except (_Closed, BadRequest, ConnectionError):
            upstream.close()
        if client.transport is not None:  # the body is done; a pipelined request is ignored
            client.transport.pause_reading()

    def _http_refusal(self, client: _Endpoint, decision: Decision) -> None:
        lines = [
            f"stockade refused the connection to {_shown(decision.host)}:{decision.port}.",
            f"reason: {decision.reason}",
            f"rule: {decision.rule_text or 'none matched (not on the allow-list)'}",
        ]
        if decision.fix:
            lines.append(f"to allow it: {decision.fix}")
        body = ("\n".join(lines) + "\n").encode()
        extra = f"X-Stockade-Decision: {decision.source.value}\r\n"
        self._http_respond(client, 403, "Forbidden", body, extra)

    def _http_error(self, client: _Endpoint, status: int, message: str) -> None:
        reasons = {
            400: "Bad Request",
            431: "Request Header Fields Too Large",
            502: "Bad Gateway",
            504: "Gateway Timeout",
        }
        body = f"stockade proxy: {message}\n".encode()
        self._http_respond(client, status, reasons.get(status, "Error"), body, "")

    @staticmethod
    def _http_respond(client: _Endpoint, status: int, reason: str, body: bytes, extra: str) -> None:
        head = (
            f"HTTP/1.1 {status} {reason}\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\n"
            f"{extra}"
            "Connection: close\r\n\r\n"
        )
        client.write(head.encode() + body)
        client.close()


class _ClientEndpoint(_Endpoint):
    """A client connection: starts the handler as soon as it is accepted."""

    def __init__(self, registry: set[_Endpoint], proxy: AllowListProxy) -> None:
        super().__init__(registry)
        self._proxy = proxy

    counted = False  # set once the proxy counts it against max_connections

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        self._proxy._client_started(self)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self.counted:
            self.counted = False
            self._proxy._clients -= 1


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@dataclass(frozen=True)
class _Question:
    """One question for the ask hook, answered on the worker thread."""

    policy: DomainPolicy
    decision: Decision
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[object]


def _ask_worker(questions: queue.SimpleQueue[_Question | None]) -> None:
    """Answer questions in order until told to stop (None). A hook that fails answers None:
    nobody said yes, so the host stays refused."""
    while (question := questions.get()) is not None:
        hook = question.policy.ask
        try:
            answer: object = hook(question.decision.host, question.decision.port) if hook else None
        except Exception:
            log.exception("stockade proxy: the ask hook failed; %s refused", question.decision.host)
            answer = None
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            question.loop.call_soon_threadsafe(_settle_future, question.future, answer)


def _settle_future(future: asyncio.Future[object], answer: object) -> None:
    if not future.done():
        future.set_result(answer)


# --- HTTP head parsing (pure functions, unit-tested) ------------------------------------------


def parse_request_head(head: bytes) -> tuple[str, str, str, list[tuple[str, str]]]:
    """Split a request head into method, target, version and headers; strict on syntax."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not _TOKEN.match(parts[0]):
        raise BadRequest("malformed request line")
    method, target, version = (part.decode("latin-1") for part in parts)
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        raise BadRequest(f"unsupported HTTP version {version!r}")
    return method, target, version, parse_header_lines(lines[1:])


def parse_header_lines(lines: list[bytes]) -> list[tuple[str, str]]:
    if len(lines) > MAX_HEADERS:
        raise BadRequest("too many header fields", status=431)
    headers: list[tuple[str, str]] = []
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not _TOKEN.match(name):  # also rejects obs-fold and "Name :"
            raise BadRequest("malformed header field")
        if b"\r" in value or b"\n" in value or b"\x00" in value:
            raise BadRequest("malformed header value")
        headers.append((name.decode("latin-1"), value.strip(b" \t").decode("latin-1")))
    return headers


def parse_authority(target: str, *, default_port: int | None) -> tuple[str, int]:
    """``host:port`` (CONNECT) -> normalised host and port."""
    host, port = split_host_port(target, default_port=default_port)
    if port is None:
        raise BadRequest(f"CONNECT target needs a port: {target!r}")
    return normalise_host(host), port


def parse_absolute_uri(target: str) -> tuple[str, int, str]:
    """``http://host[:port]/path?q`` -> host, port, origin-form target."""
    if not target.lower().startswith("http://"):
        if target.lower().startswith("https://"):
            raise BadRequest("https URLs go through CONNECT, not plain forwarding")
        raise BadRequest("a proxy request needs an absolute http:// URI")
    rest = target[len("http://") :]
    end = len(rest)
    for separator in "/?#":
        index = rest.find(separator)
        if index >= 0:
            end = min(end, index)
    authority, path = rest[:end], rest[end:]
    if "@" in authority:
        raise BadRequest("user names in proxy URLs are not supported")
    host, port = split_host_port(authority, default_port=80)
    if port is None or not authority:
        raise BadRequest(f"no host in {target!r}")
    path = path.split("#", 1)[0]
    if not path.startswith("/"):
        path = "/" + path
    if any(ch in path for ch in " \r\n\x00"):
        raise BadRequest("invalid characters in the request target")
    return normalise_host(host), port, path


def _connection_tokens(headers: list[tuple[str, str]]) -> set[str]:
    tokens: set[str] = set()
    for name, value in headers:
        if name.lower() == "connection":
            tokens.update(token.strip().lower() for token in value.split(","))
    return tokens


def _end_to_end(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    dropped = (HOP_BY_HOP_HEADERS | _connection_tokens(headers)) - {"transfer-encoding"}
    return [(name, value) for name, value in headers if name.lower() not in dropped]


@dataclass(frozen=True)
class ForwardRequest:
    """A parsed plain-HTTP proxy request (absolute URI already split)."""

    method: str
    origin_target: str
    version: str
    headers: list[tuple[str, str]]
    host: str
    port: int


def build_request_head(request: ForwardRequest) -> bytes:
    """The head sent upstream: origin-form target, Host from the URI, Connection: close."""
    host, port = request.host, request.port
    shown_host = f"[{host}]" if ":" in host else host
    authority = shown_host if port == 80 else f"{shown_host}:{port}"
    kept = [(n, v) for n, v in _end_to_end(request.headers) if n.lower() != "host"]
    lines = [f"{request.method} {request.origin_target} {request.version}", f"Host: {authority}"]
    lines += [f"{name}: {value}" for name, value in kept]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def rewrite_response_head(head: bytes) -> tuple[int, bytes]:
    """Parse a response head; return its status and the head to send on (Connection: close)."""
    lines = head[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        raise BadRequest("malformed response status line")
    status = int(parts[1])
    headers = parse_header_lines(lines[1:])
    if 100 <= status < 200 and status != 101:
        return status, head  # interim responses pass unchanged
    out = [lines[0].decode("latin-1")]
    out += [f"{name}: {value}" for name, value in _end_to_end(headers)]
    out.append("Connection: close")
    return status, ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")


@dataclass(frozen=True)
class BodyFraming:
    """How the request body ends: ``chunked``, or ``length`` bytes (0: no body)."""

    chunked: bool = False
    length: int = 0


def body_framing(headers: list[tuple[str, str]]) -> BodyFraming:
    """Request body framing per RFC 9112 §6.3, refusing the ambiguous cases (smuggling)."""
    encodings = [v for n, v in headers if n.lower() == "transfer-encoding"]
    lengths = [v for n, v in headers if n.lower() == "content-length"]
    if encodings:
        if lengths:
            raise BadRequest("both Transfer-Encoding and Content-Length: ambiguous body")
        codings = [c.strip().lower() for v in encodings for c in v.split(",")]
        if codings[-1] != "chunked" or codings.count("chunked") != 1:
            raise BadRequest("unsupported Transfer-Encoding (the last coding must be chunked)")
        return BodyFraming(chunked=True)
    values = {v.strip() for value in lengths for v in value.split(",")}
    if not values:
        return BodyFraming()
    if len(values) != 1:
        raise BadRequest("conflicting Content-Length values")
    (value,) = values
    if not value.isascii() or not value.isdigit():
        raise BadRequest("invalid Content-Length")
    return BodyFraming(length=int(value))


async def forward_body(client: _Endpoint, upstream: _Endpoint, framing: BodyFraming) -> None:
    """Copy exactly one request body from the client to the origin, byte for byte."""
    if framing.chunked:
        while True:
            line = await client.read_until(b"\r\n", 4096)
            match = _CHUNK_SIZE_LINE.match(line)
            if match is None:
                raise BadRequest("malformed chunk size line")
            size = int(match.group(1), 16)
            upstream.write(line)
            if size == 0:
                break
            await _copy_exactly(client, upstream, size)
            if await client.read_exactly(2) != b"\r\n":
                raise BadRequest("malformed chunk")
            upstream.write(b"\r\n")
        while True:  # trailer fields, then the empty line
            line = await client.read_until(b"\r\n", MAX_HEAD_BYTES)
            upstream.write(line)
            if line == b"\r\n":
                return
    await _copy_exactly(client, upstream, framing.length)


def _abort_on_failure(task: asyncio.Task[None], upstream: _Endpoint) -> None:
    """A request body that cannot be forwarded makes the whole exchange fail."""
    if not task.cancelled() and task.exception() is not None:
        upstream.abort()


async def _copy_exactly(client: _Endpoint, upstream: _Endpoint, count: int) -> None:
    while count > 0:
        data = await client.read_some(min(count, 256 * 1024))
        if not data:
            raise _Closed("client closed inside the request body")
        upstream.write(data)
        count -= len(data)
        await upstream.drain()
