"""The proxy's HTTP side: ``CONNECT`` tunnels and plain forwarding of one request.

An ASCII letter as the first byte means HTTP/1.x. ``CONNECT host:port`` opens a tunnel; any
other method must use an absolute ``http://`` URI and is forwarded. Plain forwarding always uses
``Connection: close`` on both sides: the proxy forwards exactly one request per client
connection, frames the request body itself (Content-Length or chunked; both at once is refused
as smuggling) and relays the response until the origin closes. That keeps it correct without
parsing response framing, and makes it impossible to slip a second, unchecked request down an
allowed connection. ``Host`` is rewritten from the URI, hop-by-hop headers are dropped.

Refusals answer 403 with a body naming the host, the reason, the rule and how to allow it.
The head parsing below is pure functions (unit-tested in tests/unit/test_net_http_parsing.py).
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stockade.net.connection import (
    MAX_HEAD_BYTES,
    BadRequest,
    Endpoint,
    PeerClosed,
    Refused,
    UpstreamFailed,
    pipe_one_way,
    relay,
)
from stockade.net.domains import Decision, InvalidHost, normalise_host, split_host_port
from stockade.net.events import Protocol

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.net.upstream import ConnectionGate

# --- tunables ---------------------------------------------------------------------------------
MAX_HEADERS = 128
RESPONSE_HEAD_TIMEOUT = 300.0  # seconds for an origin to start answering a plain HTTP request

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
# ----------------------------------------------------------------------------------------------

_TOKEN = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_CHUNK_SIZE_LINE = re.compile(rb"^([0-9A-Fa-f]+)(;[^\r\n]*)?\r\n$")


async def serve_http(client: Endpoint, gate: ConnectionGate, handshake_timeout: float) -> None:
    """Read one request head, decide it, then tunnel (CONNECT), forward, or answer the refusal."""
    try:
        async with asyncio.timeout(handshake_timeout):
            head = await client.read_until(b"\r\n\r\n", MAX_HEAD_BYTES)
        method, target, version, headers = parse_request_head(head)
        if method == "CONNECT":
            host, port = parse_authority(target, default_port=None)
            protocol: Protocol = "http-connect"
        else:
            host, port, origin_target = parse_absolute_uri(target)
            protocol = "http"
        decision = await gate.authorise(protocol, host, port)
        upstream, _address = await gate.open_upstream(protocol, decision)
    except BadRequest as error:
        _error(client, error.status, str(error))
        return
    except InvalidHost as error:
        _error(client, 400, error.message)
        return
    except Refused as refusal:
        _refusal(client, refusal.decision)
        return
    except UpstreamFailed as failure:
        _error(client, failure.status, str(failure))
        return
    if method == "CONNECT":
        client.write(f"{version} 200 Connection established\r\n\r\n".encode())
        relay(client, upstream)
        return
    request = ForwardRequest(method, origin_target, version, headers, host, port)
    await _forward(client, upstream, request)


async def _forward(client: Endpoint, upstream: Endpoint, request: ForwardRequest) -> None:
    """Send one request (head, then its body) upstream and relay the response until it ends."""
    host, port = request.host, request.port
    try:
        framing = body_framing(request.headers)
    except BadRequest as error:
        upstream.close()
        _error(client, error.status, str(error))
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
    except (PeerClosed, BadRequest, TimeoutError):
        upstream.abort()
        failure = body.exception() if body.done() and not body.cancelled() else None
        body.cancel()
        if isinstance(failure, BadRequest):
            _error(client, failure.status, str(failure))
        elif isinstance(failure, PeerClosed):
            client.abort()
        else:
            _error(client, 502, f"{host}:{port} sent no valid HTTP response")
        return
    pipe_one_way(upstream, client)
    try:
        await body
    except (PeerClosed, BadRequest, ConnectionError):
        upstream.close()
    if client.transport is not None:  # the body is done; a pipelined request is ignored
        client.transport.pause_reading()


def _refusal(client: Endpoint, decision: Decision) -> None:
    lines = [
        f"stockade refused the connection to {_shown(decision.host)}:{decision.port}.",
        f"reason: {decision.reason}",
        f"rule: {decision.rule_text or 'none matched (not on the allow-list)'}",
    ]
    if decision.fix:
        lines.append(f"to allow it: {decision.fix}")
    body = ("\n".join(lines) + "\n").encode()
    extra = f"X-Stockade-Decision: {decision.source.value}\r\n"
    _respond(client, 403, "Forbidden", body, extra)


def _error(client: Endpoint, status: int, message: str) -> None:
    reasons = {
        400: "Bad Request",
        431: "Request Header Fields Too Large",
        502: "Bad Gateway",
        504: "Gateway Timeout",
    }
    body = f"stockade proxy: {message}\n".encode()
    _respond(client, status, reasons.get(status, "Error"), body, "")


def _respond(client: Endpoint, status: int, reason: str, body: bytes, extra: str) -> None:
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"{extra}"
        "Connection: close\r\n\r\n"
    )
    client.write(head.encode() + body)
    client.close()


def _shown(host: str) -> str:
    return f"[{host}]" if ":" in host else host


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
    authority = _shown(host) if port == 80 else f"{_shown(host)}:{port}"
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


async def forward_body(client: Endpoint, upstream: Endpoint, framing: BodyFraming) -> None:
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


def _abort_on_failure(task: asyncio.Task[None], upstream: Endpoint) -> None:
    """A request body that cannot be forwarded makes the whole exchange fail."""
    if not task.cancelled() and task.exception() is not None:
        upstream.abort()


async def _copy_exactly(client: Endpoint, upstream: Endpoint, count: int) -> None:
    while count > 0:
        data = await client.read_some(min(count, 256 * 1024))
        if not data:
            raise PeerClosed("client closed inside the request body")
        upstream.write(data)
        count -= len(data)
        await upstream.drain()
