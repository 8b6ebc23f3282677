"""Deciding a proxied connection and opening its upstream, the same for every protocol.

Every connection is decided by ``DomainPolicy`` (a host no rule covers goes to its ``ask``
hook while the connection waits, ``stockade.net.questions``), then the name is resolved once,
EVERY address is vetted (``stockade.net.addresses``) and the proxy connects to exactly a vetted
address. Refusals and the first use of each host are reported (``stockade.net.events``).
"""

from __future__ import annotations

import asyncio
import errno

from stockade.net.addresses import IPAddress
from stockade.net.connection import Endpoint, Refused, UpstreamFailed
from stockade.net.domains import Decision, DecisionSource, DomainPolicy
from stockade.net.events import MAX_EVENTS_PER_PROXY, EventKind, EventReporter, Protocol
from stockade.net.questions import HostQuestions
from stockade.net.resolve import ResolveError, resolve_async, vet
from stockade.net.socks import (
    SOCKS_REPLY_CONNECTION_REFUSED,
    SOCKS_REPLY_GENERAL_FAILURE,
    SOCKS_REPLY_HOST_UNREACHABLE,
    SOCKS_REPLY_NETWORK_UNREACHABLE,
    SOCKS_REPLY_TTL_EXPIRED,
)

CONNECT_TIMEOUT = 10.0  # seconds to reach the origin (all vetted addresses together)

# How a failed connect is answered to a SOCKS client (HTTP clients get 502 for all of them).
_SOCKS_CODE_OF_ERRNO = {
    errno.ECONNREFUSED: SOCKS_REPLY_CONNECTION_REFUSED,
    errno.ENETUNREACH: SOCKS_REPLY_NETWORK_UNREACHABLE,
    errno.EHOSTUNREACH: SOCKS_REPLY_HOST_UNREACHABLE,
}


class ConnectionGate:
    """Authorises connections and opens upstreams for one proxy, on its loop thread.

    ``policy`` may be replaced while the proxy runs (the next connection uses the new one).
    Upstream endpoints join ``registry``, so that stopping the proxy aborts them too.
    """

    def __init__(
        self,
        policy: DomainPolicy,
        *,
        reporter: EventReporter,
        registry: set[Endpoint],
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.policy = policy
        self.connect_timeout = connect_timeout
        self._reporter = reporter
        self._registry = registry
        self._questions = HostQuestions()
        self._used_hosts: set[str] = set()

    async def authorise(self, protocol: Protocol, host: str, port: int) -> Decision:
        """Decide by policy (asking if configured), then emit a refusal event if refused."""
        policy = self.policy
        decision = policy.match(host, port)
        if decision.source is DecisionSource.NO_MATCH and policy.ask is not None:
            decision = await self._questions.ask(policy, decision)
        if not decision.allowed:
            self._reporter.emit(EventKind.REFUSED, protocol, decision, None)
            raise Refused(decision)
        return decision

    async def open_upstream(
        self, protocol: Protocol, decision: Decision
    ) -> tuple[Endpoint, IPAddress]:
        """Resolve once, vet every address, connect to a vetted one; record first use."""
        host, port = decision.host, decision.port
        try:
            async with asyncio.timeout(self.connect_timeout):
                addresses = await resolve_async(self.policy, host, port)
        except (ResolveError, TimeoutError) as error:
            raise UpstreamFailed(
                f"cannot resolve {host}: {error}",
                status=502,
                socks_code=SOCKS_REPLY_HOST_UNREACHABLE,
            ) from None
        vetted = vet(decision, addresses)
        if not vetted.allowed:
            self._reporter.emit(EventKind.REFUSED, protocol, vetted, ", ".join(map(str, addresses)))
            raise Refused(vetted, ", ".join(map(str, addresses)))
        if host not in self._used_hosts:
            self._record_first_use(protocol, decision, addresses[0])
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
            raise UpstreamFailed(
                f"timed out connecting to {host}:{port}",
                status=504,
                socks_code=SOCKS_REPLY_TTL_EXPIRED,
            ) from None
        code = SOCKS_REPLY_GENERAL_FAILURE
        if last_error is not None:
            code = _SOCKS_CODE_OF_ERRNO.get(last_error.errno or 0, SOCKS_REPLY_GENERAL_FAILURE)
        reason = last_error.strerror if last_error is not None else "no address"
        raise UpstreamFailed(
            f"cannot connect to {host}:{port}: {reason}", status=502, socks_code=code
        )

    def close(self) -> None:
        """The proxy is stopping: no more questions."""
        self._questions.stop()

    def _record_first_use(self, protocol: Protocol, decision: Decision, address: IPAddress) -> None:
        """Report the first use of a host; a first use that cannot be recorded is refused."""
        host = decision.host
        try:
            self._reporter.emit(EventKind.FIRST_USE, protocol, decision, str(address), strict=True)
        except Exception as error:
            raise UpstreamFailed(
                f"could not record the first use of {host}: {error}",
                status=502,
                socks_code=SOCKS_REPLY_GENERAL_FAILURE,
            ) from None
        if len(self._used_hosts) < MAX_EVENTS_PER_PROXY * 8:  # memory bound, see events
            self._used_hosts.add(host)

    async def _connect(self, address: IPAddress, port: int) -> Endpoint:
        """Open a TCP connection to exactly this (vetted) address: an IP literal, no lookup."""
        loop = asyncio.get_running_loop()
        _, upstream = await loop.create_connection(
            lambda: Endpoint(self._registry), host=str(address), port=port
        )
        return upstream
