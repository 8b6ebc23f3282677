"""``stockade exec --network allowlist``: a host no list covers is asked about on the terminal
while the connection waits (issue 18.2), and a headless exec refuses it naming the fix.

Judged at the origin server. The unlisted name is ``localhost`` (``--noproxy`` replaces the
jail's NO_PROXY, which would keep it local), let through to loopback by the user settings'
``allow_private``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.integration.test_cli_permissions import Terminal
from tests.netsupport import HttpServer

pytestmark = pytest.mark.integration


@pytest.fixture
def origin() -> Iterator[HttpServer]:
    with HttpServer("origin") as server:
        yield server


@pytest.fixture(autouse=True)
def private_addresses_allowed() -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "stockade"
    config.mkdir(parents=True, exist_ok=True)
    (config / "settings.toml").write_text("[network]\nallow_private = true\n")


def curl(port: int) -> str:
    return f"curl -sS --noproxy none.invalid -w ' STATUS %{{http_code}}' http://localhost:{port}/"


EXEC = ("exec", "--network", "allowlist", "--autonomy", "auto-accept")


def test_the_terminal_is_asked_while_the_connection_waits(
    project: Path, origin: HttpServer
) -> None:
    term = Terminal(*EXEC, curl(origin.port), cwd=project)
    screen = term.expect("[A]llow once")
    assert f"connect to localhost:{origin.port}" in screen
    term.press(b"a")
    assert term.finish() == 0
    assert "STATUS 404" in term.seen.decode()  # the origin answered (it has no "/")
    assert [r.path for r in origin.requests] == ["/"]


def test_headless_exec_refuses_the_host_and_names_the_fix(
    project: Path, origin: HttpServer
) -> None:
    result = run_cli(*EXEC, curl(origin.port), cwd=project)
    assert "STATUS 403" in result.stdout, result.stdout + result.stderr
    assert f"stockade refused the connection to localhost:{origin.port}" in result.stdout
    assert "--allow-domain localhost" in result.stdout
    assert origin.requests == []
