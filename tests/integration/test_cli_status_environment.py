"""`stockade status` lists which variables a confined command gets and which stay on the host,
by name and reason - never a value."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.integration

SECRET_VALUES = {
    "DATABASE_URL": "postgres://app:hunter2-status@db/app",
    "EDITOR": "ghp_statusstatusstatusstatusstatus0123",
    "MY_TOOL_HOME": "/opt/my-tool",
}


def test_status_lists_passed_and_dropped_names_without_values(project: Path) -> None:
    env = {**os.environ, **SECRET_VALUES, "LC_PAPER": "de_DE.UTF-8"}
    result = run_cli("status", "--json", "--env", "MY_TOOL_HOME", cwd=project, env=env)
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)["environment"]
    assert "LC_PAPER" in listing["passed"] and "PATH" in listing["passed"]
    assert "TMPDIR" in listing["passed"]  # set by stockade
    assert listing["passed_explicitly"] == ["MY_TOOL_HOME"]
    dropped = {entry["name"]: entry["reason"] for entry in listing["dropped"]}
    assert dropped["DATABASE_URL"] == "not on the allow-list"
    assert dropped["EDITOR"] == "its value looks like a credential (a GitHub token)"
    text = run_cli("status", cwd=project, env=env)
    for output in (result.stdout, text.stdout, text.stderr):
        assert "hunter2-status" not in output and "ghp_status" not in output
    assert "stay on the host (values never shown)" in text.stdout
    assert "DATABASE_URL" in text.stdout
