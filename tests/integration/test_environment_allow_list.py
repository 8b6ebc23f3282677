"""The jail gets a minimal environment: judged from the host side, by reading the file in which
the jailed command recorded everything it received (names *and* values)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.runner import Sandbox
from stockade.sandbox.policy import NetworkMode

pytestmark = pytest.mark.integration

# Secrets under names the old deny pattern misses, CI job tokens, and an allowed name whose
# value carries a password: none of these values may reach the jail.
WITHHELD = {
    "DATABASE_URL": "postgres://app:hunter2-db@db.internal:5432/app",
    "GITHUB_PAT": "github_pat_11ABCDEFG0_leakedleakedleakedleakedleaked",
    "MYSQL_PWD": "hunter2-mysql",
    "SENTRY_DSN": "https://leakedsentrykey0123@o12345.ingest.sentry.io/42",
    "CI_JOB_JWT": "eyJhbGciOiJSUzI1NiJ9.eyJsZWFrZWQiOiJ5ZXMifQ.bGVha2Vkc2ln",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "leaked-actions-token",
    "HARMLESS_SETTING": "not-on-the-list",
    "HTTPS_PROXY": "http://me:hunter2-proxy@proxy.corp:3128",
}
PASSED = {"LANG": "C.UTF-8", "LC_PAPER": "de_DE.UTF-8", "TZ": "Europe/Berlin"}
EXPLICIT = {"MY_TOOL_URL": "https://user:explicitly-passed@tool.corp/"}


def received(path: Path) -> dict[str, str]:
    """The environment the jailed command wrote (``env -0``), read on the host."""
    entries = path.read_bytes().split(b"\0")
    pairs = (entry.decode().partition("=") for entry in entries if entry)
    return {name: value for name, _, value in pairs}


def test_only_the_allow_list_and_explicit_names_reach_the_jail(
    project: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    for name, value in {**WITHHELD, **PASSED, **EXPLICIT}.items():
        monkeypatch.setenv(name, value)
    (project / "out").mkdir()  # Landlock freezes the project root itself
    record = project / "out" / "received.env"
    with Sandbox.for_project(project, env_passthrough=list(EXPLICIT), backend=backend) as box:
        result = box.run(["/bin/sh", "-c", 'exec /usr/bin/env -0 > "$1"', "sh", str(record)])
        assert result.exit_code == 0, result.stderr
        assert box.posture.proven
    raw = record.read_bytes()
    for name, value in WITHHELD.items():
        assert value.encode() not in raw, f"{name} reached the jail"
    env = received(record)
    assert {name: env.get(name) for name in PASSED} == PASSED
    assert env["MY_TOOL_URL"] == EXPLICIT["MY_TOOL_URL"]  # the operator chose it
    assert env["HOME"] and env["PATH"]
    assert env["TMPDIR"] != "/tmp" and env["PWD"] == str(project)


def test_allowlist_mode_still_points_the_jail_at_its_proxy(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", WITHHELD["HTTPS_PROXY"])
    record = project / "received.env"
    with Sandbox.for_project(project, network=NetworkMode.ALLOWLIST, backend="bwrap") as box:
        result = box.run(["/bin/sh", "-c", 'exec /usr/bin/env -0 > "$1"', "sh", str(record)])
        assert result.exit_code == 0, result.stderr
    env = received(record)
    assert env["HTTPS_PROXY"] == env["HTTP_PROXY"] == "http://127.0.0.1:3128"
    assert env["ALL_PROXY"].startswith("socks5h://127.0.0.1:")
    assert WITHHELD["HTTPS_PROXY"].encode() not in record.read_bytes()
