"""The proxy's HTTP head handling: strict parsing, URI splitting, header rewriting, framing."""

from __future__ import annotations

import pytest

from stockade.net.domains import InvalidHost
from stockade.net.proxy import (
    BadRequest,
    BodyFraming,
    ForwardRequest,
    body_framing,
    build_request_head,
    parse_absolute_uri,
    parse_authority,
    parse_request_head,
    rewrite_response_head,
)


def head(*lines: str) -> bytes:
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def test_parse_request_head() -> None:
    method, target, version, headers = parse_request_head(
        head("GET http://a.test/x HTTP/1.1", "Host: a.test", "X-Thing:  spaced  ")
    )
    assert (method, target, version) == ("GET", "http://a.test/x", "HTTP/1.1")
    assert headers == [("Host", "a.test"), ("X-Thing", "spaced")]


@pytest.mark.parametrize(
    "bad",
    [
        head("GET http://a.test/ HTTP/2.0"),
        head("GET  http://a.test/ HTTP/1.1"),
        head("GET http://a.test/"),
        head("G(T http://a.test/ HTTP/1.1"),
        head("GET http://a.test/ HTTP/1.1", "Host : a.test"),  # space before colon: smuggling
        head("GET http://a.test/ HTTP/1.1", "X-A: 1", " folded"),  # obs-fold
        head("GET http://a.test/ HTTP/1.1", "NoColon"),
        head("GET http://a.test/ HTTP/1.1", *[f"X-{i}: 1" for i in range(200)]),
    ],
)
def test_parse_request_head_rejects(bad: bytes) -> None:
    with pytest.raises(BadRequest):
        parse_request_head(bad)


def test_parse_authority() -> None:
    assert parse_authority("Example.com:443", default_port=None) == ("example.com", 443)
    assert parse_authority("[::1]:8443", default_port=None) == ("::1", 8443)
    with pytest.raises(BadRequest):
        parse_authority("example.com", default_port=None)
    with pytest.raises(InvalidHost):
        parse_authority("127.1:443", default_port=None)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("http://a.test/x?y=1", ("a.test", 80, "/x?y=1")),
        ("HTTP://A.test:8080", ("a.test", 8080, "/")),
        ("http://a.test?q", ("a.test", 80, "/?q")),
        ("http://a.test/p#frag", ("a.test", 80, "/p")),
        ("http://[2001:db8::1]:81/", ("2001:db8::1", 81, "/")),
    ],
)
def test_parse_absolute_uri(uri: str, expected: tuple[str, int, str]) -> None:
    assert parse_absolute_uri(uri) == expected


@pytest.mark.parametrize(
    "uri", ["/relative", "https://a.test/", "ftp://a.test/", "http://user:pw@a.test/", "http:///x"]
)
def test_parse_absolute_uri_rejects(uri: str) -> None:
    with pytest.raises((BadRequest, InvalidHost)):
        parse_absolute_uri(uri)


def test_request_head_is_rewritten_for_the_origin() -> None:
    request = ForwardRequest(
        method="POST",
        origin_target="/submit",
        version="HTTP/1.1",
        headers=[
            ("Host", "evil.test"),  # must not survive: Host comes from the checked URI
            ("Connection", "keep-alive, X-Secret-Hop"),
            ("Proxy-Connection", "keep-alive"),
            ("Proxy-Authorization", "Basic Zm9vOmJhcg=="),
            ("Keep-Alive", "timeout=5"),
            ("TE", "trailers"),
            ("Upgrade", "websocket"),
            ("X-Secret-Hop", "1"),
            ("Transfer-Encoding", "chunked"),
            ("Accept", "*/*"),
        ],
        host="a.test",
        port=8080,
    )
    text = build_request_head(request).decode()
    assert text.startswith("POST /submit HTTP/1.1\r\nHost: a.test:8080\r\n")
    assert text.endswith("Connection: close\r\n\r\n")
    lowered = text.lower()
    for gone in ("evil.test", "keep-alive", "proxy-", "x-secret-hop", "upgrade", "te: "):
        assert gone not in lowered
    assert "Transfer-Encoding: chunked" in text  # the body is forwarded as it came
    assert "Accept: */*" in text


def test_default_port_is_omitted_and_ipv6_bracketed() -> None:
    plain = ForwardRequest("GET", "/", "HTTP/1.1", [], "a.test", 80)
    assert b"\r\nHost: a.test\r\n" in build_request_head(plain)
    v6 = ForwardRequest("GET", "/", "HTTP/1.1", [], "2001:db8::1", 8080)
    assert b"\r\nHost: [2001:db8::1]:8080\r\n" in build_request_head(v6)


def test_response_head_forces_connection_close() -> None:
    original = ["HTTP/1.1 200 OK", "Connection: keep-alive", "Keep-Alive: timeout=5"]
    status, rewritten = rewrite_response_head(head(*original, "Content-Length: 3"))
    assert status == 200
    assert rewritten == head("HTTP/1.1 200 OK", "Content-Length: 3", "Connection: close")


def test_interim_response_passes_unchanged() -> None:
    interim = head("HTTP/1.1 100 Continue")
    assert rewrite_response_head(interim) == (100, interim)


def test_response_head_rejects_garbage() -> None:
    with pytest.raises(BadRequest):
        rewrite_response_head(head("SSH-2.0-OpenSSH"))


@pytest.mark.parametrize(
    ("headers", "framing"),
    [
        ([], BodyFraming()),
        ([("Content-Length", "12")], BodyFraming(length=12)),
        ([("Content-Length", "12"), ("content-length", "12")], BodyFraming(length=12)),
        ([("Transfer-Encoding", "chunked")], BodyFraming(chunked=True)),
        ([("Transfer-Encoding", "gzip, chunked")], BodyFraming(chunked=True)),
    ],
)
def test_body_framing(headers: list[tuple[str, str]], framing: BodyFraming) -> None:
    assert body_framing(headers) == framing


@pytest.mark.parametrize(
    "headers",
    [
        [("Content-Length", "3"), ("Transfer-Encoding", "chunked")],  # CL.TE smuggling
        [("Content-Length", "3"), ("Content-Length", "4")],
        [("Content-Length", "3, 4")],
        [("Content-Length", "-1")],
        [("Content-Length", "0x10")],
        [("Transfer-Encoding", "gzip")],
        [("Transfer-Encoding", "chunked, gzip")],
        [("Transfer-Encoding", "chunked, chunked")],
    ],
)
def test_body_framing_refuses_ambiguity(headers: list[tuple[str, str]]) -> None:
    with pytest.raises(BadRequest):
        body_framing(headers)
