"""stockade's own fetches: refused when the network is denied, filtered when allow-listed."""

from __future__ import annotations

import json
import shutil
import socket
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

import stockade.net.fetch as fetch_module
from stockade.errors import PermissionDenied, UsageError
from stockade.net.addresses import IPAddress
from stockade.net.domains import DecisionSource, DomainPolicy
from stockade.net.fetch import FetchError, FetchRefused, fetch
from stockade.net.mode import NetworkMode
from tests.netsupport import HttpServer, TestCA, make_test_ca

pytestmark = pytest.mark.integration

TEST_HOSTS = {
    "allowed.test": "127.0.0.1",
    "other.test": "127.0.0.1",
    "denied.test": "127.0.0.1",
    "rebind.test": "127.0.0.1",
    "metadata.test": "169.254.169.254",
}
POLICY = DomainPolicy.from_lists(
    allowed_domains=["rebind.test"],
    private_domains=["allowed.test", "other.test", "metadata.test"],
    denied_domains=["denied.test"],
    test_mode=True,
    test_hosts=TEST_HOSTS,
)


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Safety net: fail rather than send a packet anywhere but loopback; records connects."""
    connected: list[str] = []
    real = fetch_module.open_socket

    def guarded(address: IPAddress, port: int, timeout: float) -> socket.socket:
        if not (address.version == 4 and address.is_loopback) and str(address) != "::1":
            raise AssertionError(f"fetch tried to connect to {address}")
        connected.append(f"{address}:{port}")
        return real(address, port, timeout)

    monkeypatch.setattr(fetch_module, "open_socket", guarded)
    return connected


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer("origin") as server:
        yield server


def test_deny_mode_refuses_without_connecting(origin: HttpServer, loopback_only: list[str]) -> None:
    with pytest.raises(FetchRefused) as caught:
        fetch(f"http://allowed.test:{origin.port}/hello", mode="deny", policy=POLICY)
    assert "network mode 'deny'" in caught.value.message
    assert caught.value.fix and "allowlist" in caught.value.fix
    assert isinstance(caught.value, PermissionDenied)
    assert loopback_only == [] and origin.requests == []


def test_allowlisted_fetch(origin: HttpServer) -> None:
    result = fetch(f"http://Allowed.TEST:{origin.port}/hello", mode=NetworkMode.ALLOWLIST,
                   policy=POLICY)  # fmt: skip
    assert result.status == 200
    assert result.text() == "hello from origin\n"
    assert result.address == "127.0.0.1" and not result.truncated
    assert result.decision is not None and result.decision.rule_text == "allowed.test"
    headers = dict(origin.requests[0].headers)
    assert headers["Host"] == f"allowed.test:{origin.port}"


def test_post_with_body(origin: HttpServer) -> None:
    result = fetch(f"http://allowed.test:{origin.port}/echo", mode="allowlist", policy=POLICY,
                   method="POST", body=b"data", headers={"X-Test": "1"})  # fmt: skip
    seen = json.loads(result.body)
    assert seen["method"] == "POST" and seen["body"] == "data"
    assert ["X-Test", "1"] in seen["headers"]


@pytest.mark.parametrize(
    ("host", "source", "fix_part"),
    [
        ("unlisted.test", DecisionSource.NO_MATCH, "add `unlisted.test` to [network] allowed_"),
        ("denied.test", DecisionSource.DENY_RULE, "remove `denied.test`"),
        ("rebind.test", DecisionSource.ADDRESS, "allow_private = true"),
        ("metadata.test", DecisionSource.ADDRESS, "always refused"),
    ],
)
def test_allowlist_refusals(
    origin: HttpServer, loopback_only: list[str], host: str, source: DecisionSource, fix_part: str
) -> None:
    with pytest.raises(FetchRefused) as caught:
        fetch(f"http://{host}:{origin.port}/hello", mode="allowlist", policy=POLICY)
    decision = caught.value.decision
    assert decision is not None and decision.source is source
    assert fix_part in (caught.value.fix or "")
    assert loopback_only == [] and origin.requests == []


def test_allow_mode_allows_private_but_never_metadata(
    origin: HttpServer, loopback_only: list[str]
) -> None:
    result = fetch(f"http://127.0.0.1:{origin.port}/hello", mode="allow")
    assert result.status == 200 and result.decision is None
    with pytest.raises(FetchRefused, match="metadata"):
        fetch("http://169.254.169.254/latest/meta-data/", mode="allow")
    with pytest.raises(FetchRefused, match="metadata"):
        fetch("http://[::ffff:169.254.169.254]/", mode="allow")
    assert loopback_only == [f"127.0.0.1:{origin.port}"]


def test_body_is_bounded(origin: HttpServer) -> None:
    result = fetch(f"http://allowed.test:{origin.port}/big/100000", mode="allowlist",
                   policy=POLICY, max_bytes=1000)  # fmt: skip
    assert result.truncated and result.body == b"x" * 1000
    exact = fetch(f"http://allowed.test:{origin.port}/big/1000", mode="allowlist",
                  policy=POLICY, max_bytes=1000)  # fmt: skip
    assert not exact.truncated and len(exact.body) == 1000


def test_redirects_are_decided_per_hop(origin: HttpServer) -> None:
    base = f"http://allowed.test:{origin.port}"
    to_other = f"{base}/redirect/302?to=http://other.test:{origin.port}/hello"
    result = fetch(to_other, mode="allowlist", policy=POLICY, headers={"Authorization": "x"})
    assert result.status == 200 and result.text() == "hello from origin\n"
    assert result.url == f"http://other.test:{origin.port}/hello"
    assert result.redirects == (to_other,)
    assert "Authorization" not in dict(origin.requests[-1].headers)  # not sent to a new host
    to_denied = f"{base}/redirect/307?to=http://denied.test:{origin.port}/hello"
    with pytest.raises(FetchRefused, match="deny rule"):
        fetch(to_denied, mode="allowlist", policy=POLICY)
    assert [seen.path for seen in origin.requests][-1].startswith("/redirect/")
    loop = f"{base}/redirect/302?to={base}/hello"
    assert fetch(loop, mode="allowlist", policy=POLICY, max_redirects=0).status == 302


@pytest.fixture(scope="module")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestCA]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    yield make_test_ca(tmp_path_factory.mktemp("ca"), ["allowed.test"])


def test_https_verifies_the_name_not_the_address(test_ca: TestCA, tmp_path: Path) -> None:
    with HttpServer("tls", tls=(test_ca.cert, test_ca.key)) as server:
        ok = fetch(f"https://allowed.test:{server.port}/hello", mode="allowlist", policy=POLICY,
                   ssl_context=test_ca.client_context())  # fmt: skip
        assert ok.text() == "hello from tls\n"
        # same server, same pinned address, but the name is not in the certificate
        with pytest.raises(FetchError, match="certificate"):
            fetch(f"https://other.test:{server.port}/hello", mode="allowlist", policy=POLICY,
                  ssl_context=test_ca.client_context())  # fmt: skip
        # and the system trust store does not know the test CA
        with pytest.raises(FetchError, match="certificate"):
            fetch(f"https://allowed.test:{server.port}/hello", mode="allowlist", policy=POLICY)


def test_connection_refused_is_a_fetch_error() -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    with pytest.raises(FetchError, match="cannot connect"):
        fetch(f"http://allowed.test:{port}/", mode="allowlist", policy=POLICY)


@pytest.mark.parametrize(
    "url", ["ftp://allowed.test/", "file:///etc/passwd", "http://user@allowed.test/",
            "http://127.1/", "http:///nohost"],
)  # fmt: skip
def test_bad_urls_are_usage_errors(url: str) -> None:
    with pytest.raises(UsageError):
        fetch(url, mode="allowlist", policy=POLICY)


def test_allowlist_mode_needs_a_policy() -> None:
    with pytest.raises(UsageError, match="DomainPolicy"):
        fetch("http://allowed.test/", mode="allowlist")


def test_a_redirect_from_https_to_http_is_refused(test_ca: TestCA, origin: HttpServer) -> None:
    """Issue 17.5: no scheme downgrade on a hop (the plain-text hop could be read or changed)."""
    with HttpServer("tls", tls=(test_ca.cert, test_ca.key)) as server:
        url = (
            f"https://allowed.test:{server.port}/redirect/302"
            f"?to=http://allowed.test:{origin.port}/hello"
        )
        with pytest.raises(FetchRefused, match="https to http"):
            fetch(url, mode="allowlist", policy=POLICY, ssl_context=test_ca.client_context())
    assert origin.requests == []


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://allowed.test/x", "data:,x"])
def test_a_redirect_to_another_scheme_is_refused(origin: HttpServer, target: str) -> None:
    url = f"http://allowed.test:{origin.port}/redirect/302?to={target}"
    with pytest.raises(FetchRefused, match="scheme"):
        fetch(url, mode="allowlist", policy=POLICY)


def test_every_hop_is_put_to_the_callers_check(origin: HttpServer) -> None:
    """The caller's check sees each hop (host, port) before it is connected to, in every mode."""
    seen: list[tuple[str, int]] = []

    def check(host: str, port: int, url: str) -> None:
        seen.append((host, port))
        if host == "other.test":
            raise FetchRefused(f"{host} refused by the caller", fix=None, decision=None)

    base = f"http://allowed.test:{origin.port}"
    url = f"{base}/redirect/302?to=http://other.test:{origin.port}/hello"
    for mode in ("allow", "allowlist"):
        seen.clear()
        with pytest.raises(FetchRefused, match=r"other\.test refused by the caller"):
            fetch(url, mode=mode, policy=POLICY, check_hop=check)
        assert seen == [("allowed.test", origin.port), ("other.test", origin.port)]
    assert all(r.path.startswith("/redirect/") for r in origin.requests)


def test_the_number_of_hops_is_capped(origin: HttpServer) -> None:
    base = f"http://allowed.test:{origin.port}"
    url = f"{base}/hello"
    for _ in range(3):
        url = f"{base}/redirect/302?to={urllib.parse.quote(url, safe='')}"
    with pytest.raises(FetchError, match="too many redirects"):
        fetch(url, mode="allowlist", policy=POLICY, max_redirects=2)
    assert fetch(url, mode="allowlist", policy=POLICY, max_redirects=3).status == 200
