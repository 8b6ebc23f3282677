"""The allow-list proxy: the jail's only way out when the network mode is ``allowlist``.

Clients arrive on a TCP or unix listener, or - from a bwrap jail - handed over by the jail's
relay as sockets (``stockade.net.handoff``). Each speaks one of three protocols, told apart by
the first byte it sends:

* ``0x05``: SOCKS5, CONNECT only (``stockade.net.socks``).
* ``0x04``: SOCKS4, answered with "request rejected" (unsupported: it cannot carry names).
* an ASCII letter: HTTP/1.x, a ``CONNECT`` tunnel or one plainly forwarded request
  (``stockade.net.http_proxy``).

Every connection is decided and its upstream opened the same way (``stockade.net.upstream``):
``DomainPolicy`` first (a host no rule covers goes to its ``ask`` hook while the connection
waits, ``stockade.net.questions``), then the name is resolved once, EVERY address is vetted
(``stockade.net.addresses``) and the proxy connects to exactly a vetted address. Refusals
answer 403 with a body naming the host, the reason, the rule and how to allow it. What the
proxy reports (refusals, first uses) and logs is capped (``stockade.net.events``). Bytes are
relayed by ``stockade.net.connection``.

``AllowListProxy`` runs the asyncio loop in a background thread so synchronous callers can use
it. It fails closed: stopping (or a crash of the loop) closes the listeners, removes the unix
socket and aborts every relayed connection; nothing is ever passed through unchecked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
from collections.abc import Callable
from types import TracebackType

from stockade.errors import StockadeError, UsageError
from stockade.net.connection import BadRequest as BadRequest  # re-exported: the proxy's API
from stockade.net.connection import Endpoint, PeerClosed, settle
from stockade.net.domains import Decision, DomainPolicy
from stockade.net.events import MAX_EVENTS_PER_PROXY as MAX_EVENTS_PER_PROXY
from stockade.net.events import EventHook as EventHook
from stockade.net.events import EventKind as EventKind
from stockade.net.events import EventReporter, LogLimiter
from stockade.net.events import Protocol as Protocol
from stockade.net.events import ProxyEvent as ProxyEvent
from stockade.net.handoff import HandoffListener, prepare_unix_path, remove_if_same, socket_inode
from stockade.net.http_proxy import BodyFraming as BodyFraming
from stockade.net.http_proxy import ForwardRequest as ForwardRequest
from stockade.net.http_proxy import body_framing as body_framing
from stockade.net.http_proxy import build_request_head as build_request_head
from stockade.net.http_proxy import parse_absolute_uri as parse_absolute_uri
from stockade.net.http_proxy import parse_authority as parse_authority
from stockade.net.http_proxy import parse_request_head as parse_request_head
from stockade.net.http_proxy import rewrite_response_head as rewrite_response_head
from stockade.net.http_proxy import serve_http
from stockade.net.socks import SOCKS4_VERSION, SOCKS_VERSION, reject_socks4, serve_socks5
from stockade.net.upstream import CONNECT_TIMEOUT, ConnectionGate

log = logging.getLogger(__name__)

# --- tunables ---------------------------------------------------------------------------------
HANDSHAKE_TIMEOUT = 30.0  # seconds for a client to send its request
MAX_CONNECTIONS = 512  # client connections at once; more are closed immediately
# ----------------------------------------------------------------------------------------------


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
    at a time, while the connection waits (``stockade.net.questions``: a ``Decision`` answer
    is asked for again, a plain ``bool`` is remembered for that host).
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
        self._unix_path = os.fspath(unix_path) if unix_path is not None else None
        self._handoff_path = os.fspath(handoff_path) if handoff_path is not None else None
        listens = unix_path is not None or handoff_path is not None
        self._tcp_port = 0 if tcp_port is None and not listens else tcp_port
        self.handshake_timeout = handshake_timeout
        self.max_connections = max_connections
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Event | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._tcp_address: tuple[str, int] | None = None
        self._unix_inode: tuple[int, int] | None = None
        self._endpoints: set[Endpoint] = set()
        self._clients = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._handoff: HandoffListener | None = None
        self._log = LogLimiter(log)
        self._events = EventReporter(on_event, schedule=self._call_later, log=self._log)
        self._gate = ConnectionGate(
            policy,
            reporter=self._events,
            registry=self._endpoints,
            connect_timeout=connect_timeout,
        )

    @property
    def policy(self) -> DomainPolicy:
        """The domain policy; replacing it takes effect from the next connection."""
        return self._gate.policy

    @policy.setter
    def policy(self, policy: DomainPolicy) -> None:
        self._gate.policy = policy

    @property
    def connect_timeout(self) -> float:
        """Seconds to reach the origin (all vetted addresses together)."""
        return self._gate.connect_timeout

    @connect_timeout.setter
    def connect_timeout(self, seconds: float) -> None:
        self._gate.connect_timeout = seconds

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
        self._events.on_event = hook

    def set_refusal_tap(self, tap: Callable[[Decision], None] | None) -> None:
        """Also tell ``tap`` about every refusal as it happens, before any summarising (for
        in-memory consumers such as a running command's result; keep it quick)."""
        self._events.refusal_tap = tap

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
                loop.run_until_complete(settle())
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
            await settle()
            self._gate.close()
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

    def _new_client(self) -> Endpoint:
        return _ClientEndpoint(self._endpoints, self)

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

    def _call_later(self, delay: float, callback: Callable[[], None]) -> object:
        loop = self._loop
        if loop is None or loop.is_closed():
            return None
        return loop.call_later(delay, callback)

    # -- one client --
    async def _handle(self, client: Endpoint) -> None:
        """Tell the protocol by the first byte and serve it; any failure closes the client."""
        try:
            async with asyncio.timeout(self.handshake_timeout):
                first = await client.read_exactly(1)
            client.unread(first)
            if first[0] == SOCKS_VERSION:
                await serve_socks5(client, self._gate, self.handshake_timeout)
            elif first[0] == SOCKS4_VERSION:
                reject_socks4(client)
            elif first.isalpha():
                await serve_http(client, self._gate, self.handshake_timeout)
            else:
                client.abort()
        except (PeerClosed, TimeoutError, ConnectionError):
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


class _ClientEndpoint(Endpoint):
    """A client connection: starts the handler as soon as it is accepted."""

    def __init__(self, registry: set[Endpoint], proxy: AllowListProxy) -> None:
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
