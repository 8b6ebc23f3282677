"""allowlist network mode end to end: a jailed program reaches an allowed test host only
through the session's proxy; a denied host gets 403; a direct connection fails; stopping the
proxy fails closed. Under both backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.net.domains import DomainPolicy
from stockade.runner import Sandbox
from stockade.sandbox.policy import NetworkMode, PolicyRequest
from tests.netsupport import HttpServer

pytestmark = pytest.mark.integration

FETCH = (
    "import sys, urllib.request, urllib.error\n"
    "try:\n"
    "    with urllib.request.urlopen(sys.argv[1], timeout=10) as r:\n"
    "        print('STATUS', r.status, r.read().decode().strip())\n"
    "except urllib.error.HTTPError as e:\n"
    "    print('STATUS', e.code, e.read().decode().strip()[:200])\n"
    "except OSError as e:\n"
    "    print('FAILED', e)\n"
)
DIRECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)\n"
    "    print('CONNECTED')\n"
    "except OSError as e:\n"
    "    print('REFUSED', e)\n"
)


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer(files={"/": b"hello from allowed\n"}) as server:
        yield server


def policy() -> DomainPolicy:
    # test hosts live on loopback, so they need the per-rule private exception
    return DomainPolicy.from_lists(
        private_domains=["allowed.test"],
        denied_domains=["denied.test"],
        test_mode=True,
        test_hosts={"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"},
    )


@pytest.fixture(params=["bwrap", "landlock"])
def sandbox(request: pytest.FixtureRequest, project: Path) -> Iterator[Sandbox]:
    with Sandbox(
        PolicyRequest(project=project, cwd=project, network=NetworkMode.ALLOWLIST),
        backend=request.param,
        domain_policy=policy(),
    ) as box:
        yield box


def python(sandbox: Sandbox, script: str, *args: str) -> str:
    result = sandbox.run(["/usr/bin/python3", "-c", script, *args], timeout=30)
    return result.stdout + result.stderr


def test_allowed_host_is_reached_through_the_proxy(sandbox: Sandbox, origin: HttpServer) -> None:
    out = python(sandbox, FETCH, f"http://allowed.test:{origin.port}/")
    assert "STATUS 200 hello from allowed" in out


def test_denied_host_gets_403_naming_the_rule(sandbox: Sandbox, origin: HttpServer) -> None:
    out = python(sandbox, FETCH, f"http://denied.test:{origin.port}/")
    assert "STATUS 403" in out
    assert "denied" in out.lower()


def test_unlisted_host_is_refused(sandbox: Sandbox, origin: HttpServer) -> None:
    out = python(sandbox, FETCH, f"http://other.test:{origin.port}/")
    assert "STATUS 403" in out


def test_direct_connections_bypassing_the_proxy_fail(sandbox: Sandbox, origin: HttpServer) -> None:
    assert "REFUSED" in python(sandbox, DIRECT, str(origin.port))


def test_curl_honours_the_proxy_environment(sandbox: Sandbox, origin: HttpServer) -> None:
    result = sandbox.run(
        ["curl", "-sS", "--max-time", "10", f"http://allowed.test:{origin.port}/"], timeout=30
    )
    assert "hello from allowed" in result.stdout, result.stderr


def test_stopped_proxy_fails_closed(sandbox: Sandbox, origin: HttpServer) -> None:
    assert sandbox.proxy is not None
    sandbox.proxy.stop()
    out = python(sandbox, FETCH, f"http://allowed.test:{origin.port}/")
    assert "hello from allowed" not in out
    assert "STATUS 502" in out or "FAILED" in out


def test_the_command_still_cannot_open_unix_sockets(sandbox: Sandbox) -> None:
    """The bwrap bridge needs AF_UNIX to reach the proxy; the command behind it must not."""
    script = (
        "import socket\n"
        "try:\n"
        "    socket.socket(socket.AF_UNIX)\n"
        "    print('UNIX OPEN')\n"
        "except OSError as e:\n"
        "    print('REFUSED', e)\n"
    )
    assert "REFUSED" in python(sandbox, script)
