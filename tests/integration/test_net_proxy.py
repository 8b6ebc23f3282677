"""The allow-list proxy against real loopback servers: CONNECT, plain HTTP, SOCKS5, refusals.

Test host names (``*.test``) reach the loopback servers through the policy's test-only
resolver override; since loopback is private, the rules for reachable hosts carry
``allow_private`` exactly as a real LAN host would need to.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.errors import StockadeError
from stockade.net.addresses import IPAddress
from stockade.net.domains import DomainPolicy
from stockade.net.proxy import AllowListProxy, EventKind, ProxyEvent
from stockade.net.upstream import ConnectionGate
from tests.netsupport import (
    EchoServer,
    HttpServer,
    TestCA,
    make_test_ca,
    raw_connection,
    recv_all,
    recv_exactly,
    socks5_connect,
)

pytestmark = pytest.mark.integration

TEST_HOSTS = {
    "allowed.test": "127.0.0.1",  # allowed with allow_private: reachable
    "denied.test": "127.0.0.1",  # on the deny list
    "unlisted.test": "127.0.0.1",  # on no list
    "rebind.test": "127.0.0.1",  # allowed, but without allow_private: rebinding
    "metadata.test": "169.254.169.254",  # allowed with allow_private: still never
    "mapped.test": "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "evil.example.test": "127.0.0.1",  # denied inside an allowed wildcard
    "www.example.test": "127.0.0.1",
}


def make_policy(**overrides: object) -> DomainPolicy:
    options: dict[str, object] = {
        "allowed_domains": ["rebind.test", "mapped.test"],
        "private_domains": ["allowed.test", "metadata.test", "*.example.test"],
        "denied_domains": ["denied.test", "evil.example.test"],
        "test_mode": True,
        "test_hosts": TEST_HOSTS,
    }
    options.update(overrides)
    return DomainPolicy.from_lists(**options)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Safety net: if a bug let a refused address through, fail instead of sending a packet.

    This machine may only send to loopback; the refusal under test happens before this point.
    """
    real_connect = ConnectionGate._connect

    async def guarded(self: ConnectionGate, address: IPAddress, port: int) -> object:
        if not (address.version == 4 and address.is_loopback) and str(address) != "::1":
            raise AssertionError(f"the proxy tried to connect to {address}")
        return await real_connect(self, address, port)

    monkeypatch.setattr(ConnectionGate, "_connect", guarded)


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer("origin") as server:
        yield server


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    with EchoServer() as server:
        yield server


@pytest.fixture
def events() -> list[ProxyEvent]:
    return []


@pytest.fixture
def proxy(events: list[ProxyEvent]) -> Iterator[AllowListProxy]:
    with AllowListProxy(make_policy(), on_event=events.append) as running:
        yield running


def opener(proxy: AllowListProxy) -> urllib.request.OpenerDirector:
    handler = urllib.request.ProxyHandler({"http": proxy.url, "https": proxy.url})
    return urllib.request.build_opener(handler)


def tcp(proxy: AllowListProxy) -> tuple[str, int]:
    assert proxy.tcp_address is not None
    return proxy.tcp_address


def connect_tunnel(
    proxy: AllowListProxy, target: str, extra: bytes = b""
) -> tuple[bytes, socket.socket]:
    """Send CONNECT; return (response head, socket positioned after the head)."""
    sock = socket.create_connection(tcp(proxy), timeout=10)
    sock.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode() + extra)
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        if not chunk:
            break
        head += chunk
    return head, sock


# --- HTTP CONNECT ---------------------------------------------------------------------------


def test_connect_tunnel_to_allowed_host(proxy: AllowListProxy, echo: EchoServer) -> None:
    # bytes sent right behind the CONNECT head (before the 200) must arrive too
    head, sock = connect_tunnel(proxy, f"allowed.test:{echo.port}", extra=b"early ")
    with sock:
        assert head.startswith(b"HTTP/1.1 200 ")
        sock.sendall(b"late")
        assert recv_exactly(sock, 10) == b"early late"
    assert echo.connections == 1


def test_connect_half_close_is_propagated(proxy: AllowListProxy, echo: EchoServer) -> None:
    head, sock = connect_tunnel(proxy, f"allowed.test:{echo.port}")
    with sock:
        assert b" 200 " in head
        sock.sendall(b"all of it")
        sock.shutdown(socket.SHUT_WR)  # the echo server sees EOF, answers, closes
        assert recv_all(sock) == b"all of it"


def test_connect_relays_a_large_transfer_intact(proxy: AllowListProxy, origin: HttpServer) -> None:
    size = 24 * 1024 * 1024
    _head, sock = connect_tunnel(proxy, f"allowed.test:{origin.port}")
    with sock:
        sock.sendall(f"GET /big/{size} HTTP/1.0\r\nHost: allowed.test\r\n\r\n".encode())
        data = recv_all(sock)
    body = data.split(b"\r\n\r\n", 1)[1]
    assert hashlib.sha256(body).digest() == hashlib.sha256(b"x" * size).digest()


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> TestCA:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    return make_test_ca(tmp_path_factory.mktemp("ca"), ["allowed.test"])


def test_https_through_connect_verifies_the_name(proxy: AllowListProxy, test_ca: TestCA) -> None:
    with HttpServer("tls-origin", tls=(test_ca.cert, test_ca.key)) as server:
        connection = http.client.HTTPSConnection(
            *tcp(proxy),
            context=test_ca.client_context(),
            timeout=10,
        )
        connection.set_tunnel("allowed.test", server.port)
        connection.request("GET", "/hello")
        response = connection.getresponse()
        assert response.status == 200
        assert response.read() == b"hello from tls-origin\n"
        connection.close()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_https_through_proxy(proxy: AllowListProxy, test_ca: TestCA) -> None:
    with HttpServer("tls-origin", tls=(test_ca.cert, test_ca.key)) as server:
        result = subprocess.run(
            ["curl", "-sS", "--max-time", "20", "--cacert", str(test_ca.ca_cert),
             "-x", proxy.url, f"https://allowed.test:{server.port}/hello"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello from tls-origin\n"


# --- plain HTTP forwarding --------------------------------------------------------------------


def test_plain_http_get_and_post(proxy: AllowListProxy, origin: HttpServer) -> None:
    with opener(proxy).open(f"http://allowed.test:{origin.port}/hello", timeout=10) as response:
        assert response.read() == b"hello from origin\n"
        assert response.headers["Connection"] == "close"
        assert response.headers["Keep-Alive"] is None  # hop-by-hop, dropped
    request = urllib.request.Request(
        f"http://allowed.test:{origin.port}/echo", data=b"payload", method="POST"
    )
    with opener(proxy).open(request, timeout=10) as response:
        seen = json.loads(response.read())
    assert seen["method"] == "POST" and seen["path"] == "/echo" and seen["body"] == "payload"


def test_plain_http_rewrites_host_and_strips_hop_by_hop(
    proxy: AllowListProxy, origin: HttpServer
) -> None:
    connection = http.client.HTTPConnection(*tcp(proxy), timeout=10)
    connection.putrequest("GET", f"http://allowed.test:{origin.port}/echo", skip_host=True)
    connection.putheader("Host", "evil.test")  # domain fronting attempt
    connection.putheader("Proxy-Authorization", "Basic c2VjcmV0")
    connection.putheader("Connection", "keep-alive, X-Hop")
    connection.putheader("X-Hop", "1")
    connection.putheader("X-End", "2")
    connection.endheaders()
    seen = json.loads(connection.getresponse().read())
    headers = {name.lower(): value for name, value in seen["headers"]}
    assert headers["host"] == f"allowed.test:{origin.port}"
    assert headers["connection"] == "close"
    assert "proxy-authorization" not in headers and "x-hop" not in headers
    assert headers["x-end"] == "2"


def test_plain_http_chunked_request_body(proxy: AllowListProxy, origin: HttpServer) -> None:
    connection = http.client.HTTPConnection(*tcp(proxy), timeout=10)
    body = iter([b"first,", b"second,", b"third"])
    connection.request(
        "PUT", f"http://allowed.test:{origin.port}/echo", body=body, encode_chunked=True
    )
    seen = json.loads(connection.getresponse().read())
    assert seen["body"] == "first,second,third"


def test_plain_http_second_request_on_same_connection_is_not_forwarded(
    proxy: AllowListProxy, origin: HttpServer
) -> None:
    # A client that ignores "Connection: close" and pipelines a request to another host must
    # not get it through unchecked on the already-allowed connection.
    first = f"GET http://allowed.test:{origin.port}/hello HTTP/1.1\r\nHost: x\r\n\r\n"
    second = f"GET http://denied.test:{origin.port}/echo HTTP/1.1\r\nHost: x\r\n\r\n"
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall((first + second).encode())
        data = recv_all(sock)
    assert data.count(b"HTTP/1.1 ") == 1
    assert b"hello from origin" in data
    assert [seen.path for seen in origin.requests] == ["/hello"]


def test_smuggling_shapes_get_400(proxy: AllowListProxy, origin: HttpServer) -> None:
    request = (
        f"POST http://allowed.test:{origin.port}/echo HTTP/1.1\r\nHost: x\r\n"
        "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    )
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(request.encode())
        assert recv_all(sock).startswith(b"HTTP/1.1 400 ")
    assert origin.requests == []


@pytest.mark.parametrize(
    ("request_line", "status"),
    [
        (b"GET /relative HTTP/1.1\r\nHost: allowed.test\r\n\r\n", b"400"),
        (b"GET https://allowed.test/ HTTP/1.1\r\n\r\n", b"400"),
        (b"GET http://127.1/ HTTP/1.1\r\n\r\n", b"400"),
        (b"CONNECT allowed.test HTTP/1.1\r\n\r\n", b"400"),
        (b"GET http://allowed.test/ HTTP/1.1\r\nX: " + b"a" * 70000 + b"\r\n\r\n", b"431"),
    ],
)
def test_malformed_requests(proxy: AllowListProxy, request_line: bytes, status: bytes) -> None:
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(request_line)
        assert recv_all(sock).startswith(b"HTTP/1.1 " + status + b" ")


def test_non_proxy_protocols_are_closed(proxy: AllowListProxy) -> None:
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(b"\x16\x03\x01\x00\x05hello")  # a TLS ClientHello sent to the proxy itself
        assert recv_all(sock) == b""
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00")  # SOCKS4
        assert recv_all(sock)[:2] == b"\x00\x5b"


def test_unreachable_origin_is_502(proxy: AllowListProxy) -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        closed_port = placeholder.getsockname()[1]
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener(proxy).open(f"http://allowed.test:{closed_port}/", timeout=10)
    assert caught.value.code == 502
    assert b"cannot connect" in caught.value.read()


# --- refusals ---------------------------------------------------------------------------------


def refusal(proxy: AllowListProxy, url: str) -> tuple[int, str, str]:
    with pytest.raises(urllib.error.HTTPError) as caught:
        opener(proxy).open(url, timeout=10)
    error = caught.value
    return error.code, error.headers["X-Stockade-Decision"], error.read().decode()


def test_unlisted_host_is_refused_with_how_to_allow(
    proxy: AllowListProxy, origin: HttpServer, events: list[ProxyEvent]
) -> None:
    code, source, body = refusal(proxy, f"http://unlisted.test:{origin.port}/hello")
    assert (code, source) == (403, "no-match")
    assert "unlisted.test is not on the allow-list" in body
    assert "add `unlisted.test` to [network] allowed_domains" in body
    assert origin.requests == []
    assert [(e.kind, e.host) for e in events] == [(EventKind.REFUSED, "unlisted.test")]


def test_deny_wins_over_allowed_wildcard(proxy: AllowListProxy, origin: HttpServer) -> None:
    code, source, body = refusal(proxy, f"http://evil.example.test:{origin.port}/hello")
    assert (code, source) == (403, "deny-rule")
    assert "deny rule `evil.example.test`" in body
    assert "remove `evil.example.test` from [network] denied_domains" in body
    with opener(proxy).open(f"http://www.example.test:{origin.port}/hello", timeout=10) as ok:
        assert ok.status == 200
    assert [seen.path for seen in origin.requests] == ["/hello"]


def test_connect_refusal_is_403_with_body(proxy: AllowListProxy, echo: EchoServer) -> None:
    head, sock = connect_tunnel(proxy, f"denied.test:{echo.port}")
    with sock:
        rest = recv_all(sock)
    assert head.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert b"denied.test" in rest and b"to allow it:" in rest
    assert echo.connections == 0


def test_port_restricted_rule(events: list[ProxyEvent], origin: HttpServer) -> None:
    policy = make_policy(private_domains=[f"allowed.test:{origin.port + 1}"])
    with AllowListProxy(policy) as proxy:
        code, source, _ = refusal(proxy, f"http://allowed.test:{origin.port}/hello")
    assert (code, source) == (403, "no-match")


# --- rebinding: allowed names that resolve to private / metadata addresses --------------------


def test_allowed_name_resolving_to_loopback_is_refused(
    proxy: AllowListProxy, origin: HttpServer, events: list[ProxyEvent]
) -> None:
    code, source, body = refusal(proxy, f"http://rebind.test:{origin.port}/hello")
    assert (code, source) == (403, "address")
    assert "resolves to 127.0.0.1, a loopback address" in body
    assert "allow_private = true for `rebind.test`" in body
    assert origin.requests == []
    assert events[-1].kind is EventKind.REFUSED and events[-1].address == "127.0.0.1"


def test_ipv4_mapped_loopback_is_refused(proxy: AllowListProxy, origin: HttpServer) -> None:
    code, source, body = refusal(proxy, f"http://mapped.test:{origin.port}/hello")
    assert (code, source) == (403, "address")
    assert "127.0.0.1" in body and "loopback" in body


def test_metadata_address_refused_even_with_allow_private(proxy: AllowListProxy) -> None:
    code, source, body = refusal(proxy, "http://metadata.test/latest/meta-data/")
    assert (code, source) == (403, "address")
    assert "169.254.169.254" in body and "metadata" in body
    assert "always refused" in body


def test_ip_literal_target_is_checked_like_a_name(origin: HttpServer) -> None:
    policy = make_policy(allowed_domains=["127.0.0.1", "[::ffff:127.0.0.1]"])
    with AllowListProxy(policy) as proxy:
        code, source, _ = refusal(proxy, f"http://127.0.0.1:{origin.port}/hello")
        assert (code, source) == (403, "address")
        head, sock = connect_tunnel(proxy, f"[::ffff:127.0.0.1]:{origin.port}")
        sock.close()
        assert head.startswith(b"HTTP/1.1 403 ")
    assert origin.requests == []


def test_real_resolver_rebinding_localhost(origin: HttpServer) -> None:
    # "localhost" goes through the system resolver (/etc/hosts), no test override involved.
    with AllowListProxy(DomainPolicy.from_lists(["localhost"])) as proxy:
        code, source, body = refusal(proxy, f"http://localhost:{origin.port}/hello")
    assert (code, source) == (403, "address")
    assert "loopback" in body
    with AllowListProxy(DomainPolicy.from_lists(private_domains=["localhost"])) as proxy:
        # every address is tried in order (::1 may come first; the origin is on 127.0.0.1)
        url = f"http://localhost:{origin.port}/hello"
        with opener(proxy).open(url, timeout=10) as response:
            assert response.read() == b"hello from origin\n"


# --- SOCKS5 -----------------------------------------------------------------------------------


def test_socks5_domain_connect(proxy: AllowListProxy, echo: EchoServer) -> None:
    code, sock = socks5_connect(tcp(proxy), "allowed.test", echo.port)
    with sock:
        assert code == 0
        sock.sendall(b"ping")
        assert recv_exactly(sock, 4) == b"ping"


def test_socks5_ip_address_types(echo: EchoServer) -> None:
    policy = make_policy(private_domains=["127.0.0.1"], allowed_domains=["::1"])
    with AllowListProxy(policy) as proxy:
        code, sock = socks5_connect(tcp(proxy), "127.0.0.1", echo.port)
        with sock:
            assert code == 0
            sock.sendall(b"v4")
            assert recv_exactly(sock, 2) == b"v4"
        code, sock = socks5_connect(tcp(proxy), "::1", echo.port)
        sock.close()
        assert code == 0x02  # ::1 is loopback and that rule has no allow_private


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("denied.test", 0x02),
        ("unlisted.test", 0x02),
        ("rebind.test", 0x02),
        ("metadata.test", 0x02),
        ("127.1", 0x04),  # not a valid host
    ],
)
def test_socks5_refusal_codes(
    proxy: AllowListProxy, echo: EchoServer, host: str, expected: int
) -> None:
    code, sock = socks5_connect(tcp(proxy), host, echo.port)
    sock.close()
    assert code == expected
    assert echo.connections == 0


def test_socks5_protocol_errors(proxy: AllowListProxy, echo: EchoServer) -> None:
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(b"\x05\x01\x02")  # only username/password offered
        assert recv_all(sock) == b"\x05\xff"
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(b"\x05\x01\x00")
        assert recv_exactly(sock, 2) == b"\x05\x00"
        sock.sendall(b"\x05\x02\x00\x03\x0callowed.test" + echo.port.to_bytes(2, "big"))  # BIND
        assert recv_exactly(sock, 2) == b"\x05\x07"
    with raw_connection(tcp(proxy)) as sock:
        sock.sendall(b"\x05\x01\x00")
        recv_exactly(sock, 2)
        sock.sendall(b"\x05\x01\x00\x09")  # unknown address type
        assert recv_exactly(sock, 2) == b"\x05\x08"


def test_socks5_unreachable_origin_code(proxy: AllowListProxy) -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        closed_port = placeholder.getsockname()[1]
    code, sock = socks5_connect(tcp(proxy), "allowed.test", closed_port)
    sock.close()
    assert code == 0x05  # connection refused


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_socks5h(proxy: AllowListProxy, origin: HttpServer) -> None:
    assert proxy.tcp_address is not None
    socks = f"socks5h://127.0.0.1:{proxy.tcp_address[1]}"
    ok = subprocess.run(
        ["curl", "-sS", "--max-time", "20", "-x", socks, f"http://allowed.test:{origin.port}/hello"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout == "hello from origin\n"
    refused = subprocess.run(
        ["curl", "-sS", "--max-time", "20", "-x", socks, f"http://denied.test:{origin.port}/"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert refused.returncode == 97  # curl: proxy handshake error
    assert "(2)" in refused.stderr  # SOCKS reply 2: not allowed by ruleset


# --- events -----------------------------------------------------------------------------------


def test_first_use_is_reported_once_per_host(
    proxy: AllowListProxy, origin: HttpServer, events: list[ProxyEvent]
) -> None:
    for _ in range(3):
        with opener(proxy).open(f"http://allowed.test:{origin.port}/hello", timeout=10):
            pass
    refusal(proxy, f"http://denied.test:{origin.port}/")
    refusal(proxy, f"http://denied.test:{origin.port}/")
    proxy.stop()  # a repeat within the window is summarised when the window ends, or here
    summary = [(e.kind, e.host, e.protocol, e.count, e.summary) for e in events]
    assert summary == [
        (EventKind.FIRST_USE, "allowed.test", "http", 1, False),
        (EventKind.REFUSED, "denied.test", "http", 1, False),
        (EventKind.REFUSED, "denied.test", "http", 1, True),
    ]
    assert "refused 1 more time within" in events[2].message
    first = events[0]
    assert first.address == "127.0.0.1" and first.decision.rule_text == "allowed.test"
    assert "denied_domains" in (events[1].decision.fix or "")


def test_unrecordable_first_use_fails_closed(origin: HttpServer) -> None:
    def broken_ledger(event: ProxyEvent) -> None:
        raise OSError("ledger is read-only")

    with AllowListProxy(make_policy(), on_event=broken_ledger) as proxy:
        with pytest.raises(urllib.error.HTTPError) as caught:
            opener(proxy).open(f"http://allowed.test:{origin.port}/hello", timeout=10)
        assert caught.value.code == 502
        assert b"could not record" in caught.value.read()
    assert origin.requests == []


def test_ask_hook_is_asked_once_per_host(origin: HttpServer) -> None:
    asked: list[str] = []
    gate = threading.Event()

    def ask(host: str, port: int) -> bool | None:
        asked.append(host)
        gate.wait(10)  # like a person thinking; the proxy loop must not block meanwhile
        return {"www.example.test": True, "unlisted.test": False}.get(host)

    policy = make_policy(private_domains=[], allow_private=True, ask=ask)
    with AllowListProxy(policy) as proxy:
        url = f"http://www.example.test:{origin.port}/hello"
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            waiting = [pool.submit(opener(proxy).open, url, timeout=20) for _ in range(3)]
            # another host is decided meanwhile: the loop is not blocked by the prompt
            code, source, _ = refusal(proxy, f"http://denied.test:{origin.port}/")
            assert (code, source) == (403, "deny-rule")
            gate.set()
            assert all(future.result().status == 200 for future in waiting)
        code, source, _ = refusal(proxy, f"http://unlisted.test:{origin.port}/")
        assert (code, source) == (403, "ask-refused")
    assert asked == ["www.example.test", "unlisted.test"]


def test_policy_can_be_replaced_while_running(proxy: AllowListProxy, origin: HttpServer) -> None:
    url = f"http://unlisted.test:{origin.port}/hello"
    assert refusal(proxy, url)[0] == 403
    proxy.policy = make_policy(private_domains=["unlisted.test"])
    with opener(proxy).open(url, timeout=10) as response:
        assert response.status == 200


# --- listeners and failing closed -------------------------------------------------------------


def test_unix_socket_listener(tmp_path: Path, echo: EchoServer) -> None:
    path = tmp_path / "proxy.sock"
    with AllowListProxy(make_policy(), unix_path=path) as proxy:
        assert proxy.unix_path == str(path) and proxy.tcp_address is None
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        code, sock = socks5_connect(str(path), "allowed.test", echo.port)
        with sock:
            assert code == 0
            sock.sendall(b"unix")
            assert recv_exactly(sock, 4) == b"unix"
    assert not path.exists()  # removed on stop


def test_unix_path_that_is_not_a_socket_is_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "important.txt"
    path.write_text("keep me")
    with pytest.raises(StockadeError, match="not a socket"):
        AllowListProxy(make_policy(), unix_path=path).start()
    assert path.read_text() == "keep me"


def test_stopped_proxy_fails_closed(tmp_path: Path, echo: EchoServer) -> None:
    path = tmp_path / "proxy.sock"
    proxy = AllowListProxy(make_policy(), unix_path=path, tcp_port=0).start()
    address = proxy.tcp_address
    assert address is not None
    head, tunnel = connect_tunnel(proxy, f"allowed.test:{echo.port}")
    assert b" 200 " in head
    tunnel.sendall(b"before")
    assert recv_exactly(tunnel, 6) == b"before"
    proxy.stop()
    assert not proxy.running
    # the established tunnel is cut ...
    with tunnel:
        try:
            tunnel.sendall(b"after")
            leftover = tunnel.recv(100)
        except OSError:
            leftover = b""
        assert leftover == b""
    # ... and new connections are refused, on both listeners
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5)
    assert not path.exists()
    with socket.socket(socket.AF_UNIX) as sock, pytest.raises(FileNotFoundError):
        sock.connect(str(path))


def test_max_connections(echo: EchoServer) -> None:
    with AllowListProxy(make_policy(), max_connections=1) as proxy:
        code, first = socks5_connect(tcp(proxy), "allowed.test", echo.port)
        with first, raw_connection(tcp(proxy)) as second:
            assert code == 0
            try:
                second.sendall(b"\x05\x01\x00")
                data = second.recv(10)
            except OSError:  # reset or broken pipe: closed either way
                data = b""
            assert data == b""
            first.sendall(b"still")
            assert recv_exactly(first, 5) == b"still"


def test_start_twice_is_an_error(proxy: AllowListProxy) -> None:
    with pytest.raises(StockadeError, match="already started"):
        proxy.start()


def test_no_thread_left_after_stop() -> None:
    before = {thread.name for thread in threading.enumerate()}
    with AllowListProxy(make_policy()):
        assert "stockade-proxy" in {thread.name for thread in threading.enumerate()}
    assert "stockade-proxy" not in {thread.name for thread in threading.enumerate()} - before
    assert os.path.exists("/proc/self")  # sanity: still alive


def test_stop_from_the_event_hook_does_not_deadlock(origin: HttpServer) -> None:
    holder: list[AllowListProxy] = []

    def on_event(event: ProxyEvent) -> None:
        holder[0].stop()  # e.g. the session ends because of what it saw

    proxy = AllowListProxy(make_policy(), on_event=on_event)
    holder.append(proxy)
    proxy.start()
    address = tcp(proxy)
    with raw_connection(address) as sock:
        sock.sendall(f"GET http://denied.test:{origin.port}/ HTTP/1.1\r\n\r\n".encode())
        recv_all(sock)  # answered or cut: either way nothing got through
    proxy.stop()  # from this thread: waits for the proxy thread to end
    assert not proxy.running
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(address, timeout=5)
    assert origin.requests == []
