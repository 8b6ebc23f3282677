"""The agent paths in allowlist mode (issue 18.2): ``stockade mcp`` (a real server under the
SDK's client) and ``stockade exec`` (on a real terminal).

* ``--allow-domain D`` reaches the session: the ``fetch`` tool gets D.
* A host no list covers, reached by ``bash`` through the proxy, goes to the gate while the
  connection waits: the question arrives as an elicitation, the answer decides, "allow for
  this session" is not asked again; headless, the refusal names the host and the way to allow
  it, both in the proxy's 403 body and in the tool result.
* ``stockade exec`` asks the terminal while the connection waits; headless, it refuses.

Judged at the origin server (which requests arrived). ``localhost`` is the unlisted name and
``127.0.0.1`` the listed one: both reach the same loopback origin, which the user settings
let through with ``allow_private`` (the test origin lives on loopback).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from tests.conftest import run_cli
from tests.integration.test_cli_permissions import Terminal
from tests.mcp_support import MODES, Elicitor, connect, text
from tests.netsupport import HttpServer, allow_private_in_user_settings

pytestmark = pytest.mark.integration


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer("origin") as server:
        yield server


@pytest.fixture(autouse=True)
def private_addresses_allowed() -> None:
    allow_private_in_user_settings()


ALLOWLIST = ["--network", "allowlist", "--allow-domain", "127.0.0.1"]


def test_fetch_reaches_an_allowed_domain(project: Path, origin: HttpServer) -> None:
    async def main() -> None:
        async with connect(project, args=[*ALLOWLIST, "--autonomy", "yolo"]) as client:
            result = await client.call_tool(
                "fetch", {"url": f"http://127.0.0.1:{origin.port}/hello"}
            )
        assert not result.is_error, text(result)
        assert "hello from origin" in text(result)

    anyio.run(main)
    assert [r.path for r in origin.requests] == ["/hello"]


def curl(port: int) -> dict[str, str]:
    """curl to the unlisted name through the proxy (``--noproxy`` replaces the jail's NO_PROXY,
    which keeps ``localhost`` local otherwise)."""
    url = f"http://localhost:{port}/hello"
    return {"command": f"curl -sS --noproxy none.invalid -w '\\nSTATUS %{{http_code}}' {url}"}


@pytest.mark.parametrize("mode", MODES)
def test_an_unlisted_host_is_asked_by_elicitation_while_it_waits(
    project: Path, origin: HttpServer, mode: str
) -> None:
    """Legacy connections get the question mid-call; 2026-07-28 ones as an input-required
    round while the command keeps running (it is not started over: one request arrives)."""
    elicitor = Elicitor("allow_session")

    async def main() -> None:
        args = [*ALLOWLIST, "--autonomy", "auto-accept"]
        async with connect(project, mode=mode, elicit=elicitor, args=args) as client:
            first = await client.call_tool("bash", curl(origin.port))
            second = await client.call_tool("bash", curl(origin.port))
        for result in (first, second):
            assert not result.is_error, text(result)
            assert "STATUS 200" in text(result) and "hello from origin" in text(result)

    anyio.run(main)
    questions = [q.message for q in elicitor.asked]
    assert len(questions) == 1, questions  # "for this session": not asked again
    assert f"localhost:{origin.port}" in questions[0]
    assert [r.path for r in origin.requests] == ["/hello", "/hello"]


@pytest.mark.parametrize("mode", MODES)
def test_a_denied_answer_refuses_the_connection(
    project: Path, origin: HttpServer, mode: str
) -> None:
    elicitor = Elicitor("deny")

    async def main() -> None:
        args = [*ALLOWLIST, "--autonomy", "auto-accept"]
        async with connect(project, mode=mode, elicit=elicitor, args=args) as client:
            result = await client.call_tool("bash", curl(origin.port))
        assert "STATUS 403" in text(result)

    anyio.run(main)
    assert len(elicitor.asked) == 1
    assert origin.requests == []


@pytest.mark.parametrize("flags", [["--headless"], []], ids=["headless", "no-elicitation"])
def test_headless_refusal_names_the_host_and_the_fix(
    project: Path, origin: HttpServer, flags: list[str]
) -> None:
    async def main() -> None:
        args = [*ALLOWLIST, "--autonomy", "auto-accept", *flags]
        async with connect(project, mode="legacy", args=args) as client:
            result = await client.call_tool("bash", curl(origin.port))
        body = text(result)
        assert "STATUS 403" in body
        shown = f"localhost:{origin.port}"
        proxy_body, _, summary = body.partition("network refusals:")
        assert shown in proxy_body and "to allow it" in proxy_body  # the proxy's 403 body
        assert shown in summary and "to allow it" in summary  # the tool result's own line

    anyio.run(main)
    assert origin.requests == []


# --- stockade exec ---------------------------------------------------------------------------


def curl_line(port: int) -> str:
    return f"curl -sS --noproxy none.invalid -w ' STATUS %{{http_code}}' http://localhost:{port}/"


EXEC = ("exec", "--network", "allowlist", "--autonomy", "auto-accept")


def test_the_terminal_is_asked_while_the_connection_waits(
    project: Path, origin: HttpServer
) -> None:
    term = Terminal(*EXEC, curl_line(origin.port), cwd=project)
    screen = term.expect("[A]llow once")
    assert f"connect to localhost:{origin.port}" in screen
    term.press(b"a")
    assert term.finish() == 0
    assert "STATUS 404" in term.seen.decode()  # the origin answered (it has no "/")
    assert [r.path for r in origin.requests] == ["/"]


def test_headless_exec_refuses_the_host_and_names_the_fix(
    project: Path, origin: HttpServer
) -> None:
    result = run_cli(*EXEC, curl_line(origin.port), cwd=project)
    assert "STATUS 403" in result.stdout, result.stdout + result.stderr
    assert f"stockade refused the connection to localhost:{origin.port}" in result.stdout
    assert "--allow-domain localhost" in result.stdout
    assert origin.requests == []
