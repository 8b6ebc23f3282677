"""Settings FILES really change what a confined command can do: every list, through the real
``stockade`` command line and real bwrap sandboxes. Each test also runs the control (without
the setting) so it can fail."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.settings_support import write_local, write_project, write_user

pytestmark = pytest.mark.integration


def sandboxed(
    project: Path, script: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "--", "sh", "-c", script, cwd=project, env=env)


def can_write(project: Path, target: Path) -> bool:
    result = sandboxed(project, f'echo x > "{target}" && echo WROTE')
    assert result.returncode in (0, 1, 2), result.stderr
    return "WROTE" in result.stdout


def can_read(project: Path, target: Path) -> str:
    return sandboxed(project, f'cat "{target}" 2>/dev/null || true').stdout


# -- every list from a settings file --------------------------------------------------------


def test_read_deny_masks_and_allow_within_re_exposes(project: Path, visible_dir: Path) -> None:
    secrets = visible_dir / "secrets"
    (secrets / "public").mkdir(parents=True)
    (secrets / "key").write_text("PRIVATE-KEY\n")
    (secrets / "public" / "readme").write_text("PUBLIC\n")
    assert can_read(project, secrets / "key") == "PRIVATE-KEY\n"  # control: visible by default

    write_user(f'[sandbox]\nread_deny = ["{secrets}"]\n')
    assert can_read(project, secrets / "key") == ""
    assert can_read(project, secrets / "public" / "readme") == ""

    write_user(
        f'[sandbox]\nread_deny = ["{secrets}"]\nread_allow_within_deny = ["{secrets}/public"]\n'
    )
    assert can_read(project, secrets / "key") == ""
    assert can_read(project, secrets / "public" / "readme") == "PUBLIC\n"
    assert not can_write(project, secrets / "public" / "readme")  # re-exposed read-only


def test_writable_roots_and_write_allow_extra_become_writable(
    project: Path, visible_dir: Path
) -> None:
    extra, more = visible_dir / "extra", visible_dir / "more"
    extra.mkdir()
    more.mkdir()
    assert not can_write(project, extra / "f")  # control
    assert not can_write(project, more / "f")
    write_user(f'[sandbox]\nwritable_roots = ["{extra}"]\nwrite_allow_extra = ["{more}"]\n')
    assert can_write(project, extra / "f")
    assert can_write(project, more / "f")
    assert (extra / "f").read_text() == "x\n" and (more / "f").read_text() == "x\n"


def test_write_deny_within_allow_is_read_only_inside_the_project(project: Path) -> None:
    (project / "keep").mkdir()
    (project / "keep" / "data").write_text("original\n")
    assert can_write(project, project / "keep" / "data")  # control: the project is writable
    (project / "keep" / "data").write_text("original\n")

    write_user('[sandbox]\nwrite_deny_within_allow = ["${PROJECT_ROOT}/keep"]\n')
    assert not can_write(project, project / "keep" / "data")
    assert not can_write(project, project / "keep" / "new")
    assert can_write(project, project / "other")
    assert (project / "keep" / "data").read_text() == "original\n"
    assert not (project / "keep" / "new").exists()


def test_env_passthrough_lets_a_secret_looking_variable_in(project: Path) -> None:
    env = {**os.environ, "MY_API_TOKEN": "tok-123"}
    script = 'echo "token=${MY_API_TOKEN:-none}"'
    assert sandboxed(project, script, env).stdout == "token=none\n"  # control: scrubbed
    write_user('[sandbox]\nenv_passthrough = ["MY_API_TOKEN"]\n')
    assert sandboxed(project, script, env).stdout == "token=tok-123\n"


def test_a_wall_clock_limit_from_settings_kills_the_run(project: Path) -> None:
    write_user("[sandbox.limits]\nwall_timeout_s = 1\n")
    result = run_cli("run", "--", "sleep", "30", cwd=project)
    assert result.returncode == 124
    assert "timed out after 1s" in result.stderr


def test_network_mode_from_the_file_and_the_flag_wins(project: Path) -> None:
    write_user('[sandbox]\nnetwork = "allow"\n')
    assert json.loads(run_cli("status", "--json", cwd=project).stdout)["network"] == "allow"
    data = json.loads(run_cli("status", "--json", "--network", "deny", cwd=project).stdout)
    assert data["network"] == "deny"


def test_a_write_deny_on_a_masked_path_keeps_it_masked(project: Path) -> None:
    """Regression: protecting a masked path used to re-bind the host content over the mask."""
    (project / "vendor").mkdir()
    (project / "vendor" / "secret").write_text("TOPSECRET\n")
    write_user('[sandbox]\nread_deny = ["${PROJECT_ROOT}/vendor"]\n')
    write_project(project, '[sandbox]\nwrite_deny_within_allow = ["${PROJECT_ROOT}/vendor"]\n')
    assert can_read(project, project / "vendor" / "secret") == ""
    assert not can_write(project, project / "vendor" / "secret")


# -- layers and trust in real runs ----------------------------------------------------------


def test_project_layers_add_masks_without_trust(project: Path, visible_dir: Path) -> None:
    secret = visible_dir / "team-secret"
    secret.write_text("TEAM\n")
    write_project(project, f'[sandbox]\nread_deny = ["{secret}"]\n')
    write_local(project, "[sandbox]\nread_deny = []\n")  # cannot cancel it
    assert can_read(project, secret) == ""


def test_untrusted_loosening_is_ignored_until_trusted_and_again_after_a_change(
    project: Path, visible_dir: Path
) -> None:
    outside = visible_dir / "outside"
    outside.mkdir()
    write_project(project, f'[sandbox]\nwritable_roots = ["{outside}"]\n')

    result = sandboxed(project, f'echo x > "{outside}/f" && echo WROTE')
    assert "WROTE" not in result.stdout
    assert "ignored 1 loosening setting" in result.stderr

    status = json.loads(run_cli("status", "--json", cwd=project).stdout)
    ignored = status["settings"]["ignored"]
    assert [entry["key"] for entry in ignored] == ["sandbox.writable_roots"]
    assert ignored[0]["origin"]["line"] == 2

    refused = run_cli("trust", cwd=project)  # no terminal: shows, then refuses
    assert refused.returncode == 2
    assert "sandbox.writable_roots" in refused.stdout and "--yes" in refused.stderr
    assert can_write(project, outside / "f") is False

    trusted = run_cli("trust", "--yes", cwd=project)
    assert trusted.returncode == 0, trusted.stderr
    assert str(outside) in trusted.stdout
    assert can_write(project, outside / "f")

    write_project(project, f'[sandbox]\nwritable_roots = ["{outside}"]\n# edited\n')
    assert not can_write(project, outside / "g")
    status = json.loads(run_cli("status", "--json", cwd=project).stdout)
    assert status["settings"]["trust"]["stale"] is True

    assert run_cli("trust", "--yes", cwd=project).returncode == 0
    assert can_write(project, outside / "g")
    revoked = run_cli("trust", "--revoke", cwd=project)
    assert "revoked" in revoked.stdout
    assert not can_write(project, outside / "h")


def test_the_jail_cannot_write_stockades_own_settings(project: Path, visible_dir: Path) -> None:
    """Even when a writable root contains the user's settings file (STOCKADE_CONFIG here)."""
    user_file = project / "my-stockade.toml"
    user_file.write_text('[sandbox]\nnetwork = "deny"\n')
    env = {**os.environ, "STOCKADE_CONFIG": str(user_file)}
    result = sandboxed(project, f'echo "[sandbox]" >> "{user_file}" && echo WROTE', env)
    assert "WROTE" not in result.stdout
    assert user_file.read_text() == '[sandbox]\nnetwork = "deny"\n'


# -- the commands ---------------------------------------------------------------------------


def test_a_broken_user_file_stops_run_with_exit_2(project: Path) -> None:
    write_user('[sandbox]\nreadDeny = ["~/.x"]\n')
    result = run_cli("run", "--", "true", cwd=project)
    assert result.returncode == 2
    assert "settings.toml:2: sandbox.readDeny" in result.stderr
    assert "did you mean read_deny?" in result.stderr
    assert "fix: rename it to read_deny" in result.stderr
    assert "Traceback" not in result.stderr


def test_config_validate_lists_every_problem(project: Path) -> None:
    write_user('[sandbox]\nfs_read_deny = []\nnetwork = "sideways"\n')
    write_project(project, "[sandbox]\nread_deny = ['relative']\n")
    result = run_cli("config", "validate", cwd=project)
    assert result.returncode == 2
    assert result.stdout.count("✗") == 3
    assert "did you mean read_deny?" in result.stdout
    assert "unknown network mode 'sideways'" in result.stdout
    assert "settings.toml:2: sandbox.read_deny[0]: 'relative' is a relative path" in result.stdout
    data = json.loads(run_cli("config", "validate", "--json", cwd=project).stdout)
    assert data["valid"] is False and len(data["problems"]) == 3

    write_user('[sandbox]\nnetwork = "deny"\n')
    write_project(project, '[sandbox]\nread_deny = ["${PROJECT_ROOT}/x"]\n')
    ok = run_cli("config", "validate", cwd=project)
    assert ok.returncode == 0 and "settings are valid" in ok.stdout


def test_config_validate_checks_the_merged_policy(project: Path, visible_dir: Path) -> None:
    masked = visible_dir / "masked"
    (masked / "inner").mkdir(parents=True)
    write_user(f'[sandbox]\nread_deny = ["{masked}"]\nwritable_roots = ["{masked}/inner"]\n')
    result = run_cli("config", "validate", cwd=project)
    assert result.returncode == 2
    assert "inside the masked" in result.stdout


def test_config_show_with_origins(project: Path) -> None:
    user = write_user('[sandbox]\nnetwork = "deny"\nread_deny = ["/srv/x"]\n')
    write_project(project, '[sandbox]\nnetwork = "allow"\n')
    text = run_cli("config", "show", "--origin", cwd=project).stdout
    assert f'network = "deny"  # user ({user}:2)' in text
    assert "# ignored (untrusted workspace" in text and "sandbox.network = allow" in text
    data = json.loads(run_cli("config", "show", "--json", "--origin", cwd=project).stdout)
    assert data["settings"]["sandbox"]["read_deny"] == [
        {"value": "/srv/x", "origin": {"layer": "user", "source": str(user), "line": 3}}
    ]
    assert [entry["key"] for entry in data["ignored"]] == ["sandbox.network"]


def test_status_and_doctor_report_layers_counts_and_ignored_entries(project: Path) -> None:
    write_user(
        """\
        [sandbox]
        read_deny = ["/srv/a", "/srv/b", "/srv/c"]
        read_allow_within_deny = ["/srv/a/pub"]
        write_deny_within_allow = ["${PROJECT_ROOT}/keep"]
        """
    )
    (project / "out").mkdir()
    (project / "build").mkdir()
    write_project(
        project,
        """\
        [sandbox]
        write_allow_extra = ["${PROJECT_ROOT}/out", "${PROJECT_ROOT}/build"]
        [permissions]
        allow = ["bash:make *"]
        """,
    )
    line = "read-deny=3 allow-within=1 write-extra=2 deny-within=1"
    status = json.loads(run_cli("status", "--json", cwd=project).stdout)
    assert status["settings"]["counts_line"] == line
    assert status["settings"]["loaded"] == ["user", "project"]
    assert [e["key"] for e in status["settings"]["ignored"]] == ["permissions.allow"]
    text = run_cli("status", cwd=project).stdout
    assert line in text and "ignored permissions.allow = bash:make *" in text

    doctor = run_cli("doctor", "--json", cwd=project, timeout=120)
    report = json.loads(doctor.stdout)
    assert doctor.returncode == 0, [c for c in report["checks"] if not c["ok"]]
    checks = {c["name"]: c for c in report["checks"]}
    assert line in checks["settings"]["detail"]
    assert "layers: user, project" in checks["settings"]["detail"]
    assert "permissions.allow = bash:make *" in checks["workspace trust"]["detail"]
    assert report["settings"]["counts_line"] == line


def test_status_and_doctor_with_invalid_settings(project: Path) -> None:
    write_user('[sandbox]\nnetwork = "sideways"\nbackend = 3\n')
    status = run_cli("status", "--json", cwd=project)
    assert status.returncode == 2
    problems = json.loads(status.stdout)["settings"]["problems"]
    assert [p["key"] for p in problems] == ["sandbox.network", "sandbox.backend"]
    doctor = run_cli("doctor", cwd=project)
    assert doctor.returncode == 2
    assert "✗ settings: 2 problems" in doctor.stdout
