"""stockade's own HTTP fetches on an agent's behalf (the MCP ``fetch`` tool), under the policy.

The agent must not get through stockade what its jail would refuse, so:

* mode ``deny``: every fetch is refused (FetchRefused), nothing is resolved or connected;
* mode ``allowlist``: the URL's host is decided by the same DomainPolicy as the proxy, resolved
  once, every address vetted, and the connection made to exactly a vetted address;
* mode ``allow``: no domain filtering, but addresses are still vetted with private ranges
  allowed, so cloud-metadata and unspecified addresses stay refused (stockade's own identity
  must never fetch instance credentials for an agent).

TLS is verified against the *name* (SNI + certificate hostname check), not the pinned address.
Redirects are followed (at most ``max_redirects``), each hop decided afresh. The body is read
up to ``max_bytes``; the rest is dropped and ``truncated`` says so.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from stockade.errors import PermissionDenied, StockadeError, UsageError
from stockade.net.addresses import IPAddress
from stockade.net.domains import (
    Decision,
    DecisionSource,
    DomainPolicy,
    InvalidHost,
    normalise_host,
    split_host_port,
)
from stockade.net.mode import NetworkMode
from stockade.net.resolve import ResolveError, resolve, vet

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
USER_AGENT = "stockade-fetch/0.1"
_READ_CHUNK = 64 * 1024
_CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})


class FetchRefused(PermissionDenied):
    """The network policy refused the fetch; ``decision`` says which rule and how to allow it."""

    def __init__(self, message: str, *, fix: str | None, decision: Decision | None) -> None:
        super().__init__(message, fix=fix)
        self.decision = decision


class FetchError(StockadeError):
    """The fetch was allowed but failed: name did not resolve, connect/TLS/HTTP error, timeout."""


@dataclass(frozen=True)
class FetchResult:
    """One HTTP response (the last one, after redirects)."""

    url: str
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool
    address: str  # the vetted address that was connected to
    decision: Decision | None  # None in mode ``allow``
    redirects: tuple[str, ...] = ()

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)

    def text(self) -> str:
        """The body decoded with the response's charset (UTF-8 if none), errors replaced."""
        content_type = self.header("Content-Type") or ""
        charset = "utf-8"
        for part in content_type.split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, "replace")
        except LookupError:
            return self.body.decode("utf-8", "replace")


@dataclass(frozen=True)
class _Target:
    scheme: str
    host: str
    port: int
    path: str


def fetch(
    url: str,
    *,
    mode: NetworkMode | str,
    policy: DomainPolicy | None = None,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    body: bytes | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = DEFAULT_MAX_REDIRECTS,
    ssl_context: ssl.SSLContext | None = None,
) -> FetchResult:
    """Fetch ``url`` under the network policy; raise FetchRefused, FetchError or UsageError.

    ``policy`` is required in mode ``allowlist``. ``timeout`` bounds the whole fetch including
    redirects. ``ssl_context`` defaults to the system trust store with hostname checking.
    """
    network = NetworkMode.parse(mode) if isinstance(mode, str) else mode
    if network is NetworkMode.DENY:
        raise FetchRefused(
            f"network access is denied, so {url} was not fetched (network mode 'deny')",
            fix='set [sandbox] network = "allowlist" and add the host to [network] '
            "allowed_domains (or pass --allow-domain HOST)",
            decision=None,
        )
    if network is NetworkMode.ALLOWLIST and policy is None:
        raise UsageError("fetch in allowlist mode needs the DomainPolicy")
    deadline = time.monotonic() + timeout
    context = ssl_context or ssl.create_default_context()
    request_headers = dict(headers or {})
    redirects: list[str] = []
    current_method, current_body = method.upper(), body
    while True:
        target = _parse_url(url)
        decision, addresses = _authorise(network, policy, target)
        result = _exchange(
            target, addresses, current_method, request_headers, current_body,
            deadline=deadline, max_bytes=max_bytes, context=context,
        )  # fmt: skip
        location = result.header("Location")
        if result.status not in REDIRECT_STATUSES or not location or max_redirects <= 0:
            return FetchResult(
                url=url, status=result.status, reason=result.reason, headers=result.headers,
                body=result.body, truncated=result.truncated, address=result.address,
                decision=decision, redirects=tuple(redirects),
            )  # fmt: skip
        if len(redirects) >= max_redirects:
            raise FetchError(f"too many redirects (more than {max_redirects}) from {url}")
        next_url = urljoin(url, location)
        if result.status == 303 or (result.status in (301, 302) and current_method == "POST"):
            current_method, current_body = "GET", None
        if _parse_url(next_url).host != target.host:  # never forward credentials to a new host
            request_headers = {
                k: v for k, v in request_headers.items() if k.lower() not in _CREDENTIAL_HEADERS
            }
        redirects.append(url)
        url = next_url


def _parse_url(url: str) -> _Target:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise UsageError(f"can only fetch http:// and https:// URLs, not {url!r}")
    if "@" in parts.netloc:
        raise UsageError(f"user names in URLs are not supported: {url!r}")
    default_port = 443 if scheme == "https" else 80
    try:
        raw_host, port = split_host_port(parts.netloc, default_port=default_port)
        host = normalise_host(raw_host)
    except InvalidHost as error:
        raise UsageError(f"invalid URL {url!r}: {error.message}", fix=error.fix) from None
    assert port is not None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return _Target(scheme, host, port, path)


def _authorise(
    network: NetworkMode, policy: DomainPolicy | None, target: _Target
) -> tuple[Decision | None, list[IPAddress]]:
    """Decide, resolve once, vet every address; raise FetchRefused / FetchError."""
    resolver_policy = policy or DomainPolicy()
    if network is NetworkMode.ALLOWLIST:
        assert policy is not None
        decision = policy.decide(target.host, target.port)
    else:  # allow: any name, only the always-refused address classes are kept out
        decision = Decision(
            host=target.host, port=target.port, allowed=True, source=DecisionSource.ALLOW_RULE,
            reason="network mode 'allow'", allow_private=True,
        )  # fmt: skip
    if not decision.allowed:
        raise FetchRefused(decision.reason, fix=decision.fix, decision=decision)
    try:
        addresses = resolve(resolver_policy, target.host, target.port)
    except ResolveError as error:
        raise FetchError(str(error)) from None
    vetted = vet(decision, addresses)
    if not vetted.allowed:
        raise FetchRefused(vetted.reason, fix=vetted.fix, decision=vetted)
    return (decision if network is NetworkMode.ALLOWLIST else None), addresses


@dataclass(frozen=True)
class _Response:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool
    address: str

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)


def open_socket(address: IPAddress, port: int, timeout: float) -> socket.socket:
    """Connect to exactly this vetted address (an IP literal: no name lookup happens)."""
    family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect((str(address), port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except BaseException:
        sock.close()
        raise
    return sock


class _PinnedConnection(http.client.HTTPConnection):
    """HTTP(S) to a name, over a socket already connected to a vetted address."""

    def __init__(self, target: _Target, sock: socket.socket, context: ssl.SSLContext | None):
        super().__init__(target.host, target.port, timeout=sock.gettimeout())
        self._pinned = sock
        self._tls = context

    def connect(self) -> None:
        if self._tls is None:
            self.sock = self._pinned
        else:  # SNI and certificate hostname check use the name, not the address
            self.sock = self._tls.wrap_socket(self._pinned, server_hostname=self.host)


def _remaining(deadline: float, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise FetchError(f"timed out {what}")
    return left


def _exchange(
    target: _Target,
    addresses: list[IPAddress],
    method: str,
    headers: Mapping[str, str],
    body: bytes | None,
    *,
    deadline: float,
    max_bytes: int,
    context: ssl.SSLContext,
) -> _Response:
    sock: socket.socket | None = None
    failures: list[str] = []
    for address in addresses:
        try:
            sock = open_socket(address, target.port, _remaining(deadline, "connecting"))
            break
        except OSError as error:
            failures.append(f"{address}: {error.strerror or error}")
    if sock is None:
        raise FetchError(f"cannot connect to {target.host}:{target.port} ({'; '.join(failures)})")
    address = sock.getpeername()[0]
    connection = _PinnedConnection(target, sock, context if target.scheme == "https" else None)
    try:
        sent = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity", **headers}
        connection.request(method, target.path, body=body, headers=sent)
        response = connection.getresponse()
        chunks: list[bytes] = []
        size = 0
        truncated = False
        while True:
            live = connection.sock  # the TLS wrapper, if any, replaced the raw socket
            if live is not None:
                live.settimeout(_remaining(deadline, f"reading {target.host}"))
            chunk = response.read(min(_READ_CHUNK, max_bytes - size + 1))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                truncated = True
                break
        data = b"".join(chunks)[:max_bytes]
        return _Response(
            status=response.status,
            reason=response.reason,
            headers=tuple(response.getheaders()),
            body=data,
            truncated=truncated,
            address=address,
        )
    except ssl.SSLCertVerificationError as error:
        raise FetchError(
            f"TLS certificate for {target.host} did not verify: {error.verify_message}"
        ) from None
    except (OSError, http.client.HTTPException) as error:
        raise FetchError(f"fetching from {target.host}:{target.port} failed: {error}") from None
    finally:
        connection.close()
        sock.close()
