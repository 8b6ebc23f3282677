"""The Seatbelt backend from the command line on this (Linux) machine: `stockade profile
seatbelt` prints what a Mac would enforce, and `--backend seatbelt` refuses in one line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.sbpl_evaluator import Request, decide

pytestmark = pytest.mark.integration


def test_profile_prints_the_profile_for_this_project(project: Path) -> None:
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".mcp.json").write_text("{}\n")
    result = run_cli("profile", "seatbelt", "--project", str(project), cwd=project)
    assert result.returncode == 0, result.stderr
    profile = result.stdout
    assert profile.startswith("(version 1)\n")
    inside = "/private" + str(project) if str(project).startswith("/var/") else str(project)
    assert decide(profile, Request("file-write-create", path=f"{inside}/src/x")) == "allow"
    assert decide(profile, Request("file-write-create", path=f"{inside}/.git/hooks/x")) == "deny"
    assert decide(profile, Request("file-write-create", path=f"{inside}/.mcp.json")) == "deny"
    assert decide(profile, Request("network-outbound", remote_ip="localhost:80")) == "deny"
    assert "stockade-session-EXAMPLE/tmp" in profile
    assert sorted(p.name for p in project.iterdir()) == [".git", ".mcp.json"], "nothing created"


def test_profile_in_allowlist_mode_names_the_proxy_port_and_the_domains(project: Path) -> None:
    result = run_cli(
        "profile", "seatbelt", "--network", "allowlist", "--allow-domain", "pypi.org",
        cwd=project,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert decide(result.stdout, Request("network-outbound", remote_ip="localhost:3128")) == "allow"
    assert "; domains (enforced by the proxy, not by this profile): pypi.org" in result.stdout


def test_profile_takes_the_settings_layers_into_account(project: Path) -> None:
    (project / "vendor").mkdir()
    (project / ".stockade").mkdir()
    (project / ".stockade" / "settings.toml").write_text(
        '[sandbox]\nwrite_deny_within_allow = ["${PROJECT_ROOT}/vendor"]\n'
    )
    result = run_cli("profile", "seatbelt", cwd=project)
    assert result.returncode == 0, result.stderr
    inside = "/private" + str(project) if str(project).startswith("/var/") else str(project)
    assert decide(result.stdout, Request("file-write-create", path=f"{inside}/vendor/x")) == "deny"


def test_profile_rejects_other_backends(project: Path) -> None:
    result = run_cli("profile", "bwrap", cwd=project)
    assert result.returncode == 2
    assert "seatbelt" in result.stderr


@pytest.mark.skipif(sys.platform == "darwin", reason="on macOS the backend is available")
def test_backend_seatbelt_refuses_in_one_line_on_linux(project: Path) -> None:
    result = run_cli("run", "--backend", "seatbelt", "--", "touch", "ran", cwd=project)
    assert result.returncode == 125  # no sandbox can be proven (README: run's exit codes)
    lines = result.stderr.splitlines()
    assert len(lines) == 2, result.stderr
    assert lines[0].startswith("stockade: ") and "macOS-only" in lines[0]
    assert lines[1].startswith("  fix: ")
    assert not (project / "ran").exists()  # refused, not run unconfined
