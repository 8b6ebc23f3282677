"""``auto`` never downgrades because a proof failed, a repository cannot make the proof fail
by masking kernel interfaces, and a run whose backend changed says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.errors import SandboxUnavailable, UsageError
from stockade.runner import Sandbox
from stockade.sandbox import probe
from stockade.sandbox.policy import PolicyRequest
from tests.conftest import run_cli

pytestmark = pytest.mark.integration


def test_a_repository_cannot_mask_proc_to_downgrade_the_backend(project: Path) -> None:
    """0.1: a project's read_deny of /proc/1 failed bwrap's PID-namespace check and ``auto``
    quietly ran the command under Landlock."""
    (project / ".stockade").mkdir()
    (project / ".stockade" / "settings.toml").write_text('[sandbox]\nread_deny = ["/proc/1"]\n')
    result = run_cli("run", "--", "/bin/sh", "-c", "echo ran > ran", cwd=project)
    assert result.returncode == 2, result.stderr
    assert not (project / "ran").exists()
    lines = result.stderr.strip().splitlines()
    assert "/proc" in lines[0] and "read_deny" in lines[0]
    assert "fix:" in result.stderr


@pytest.mark.parametrize("path", ["/proc/self", "/sys/kernel", "/dev/shm", "/proc"])
def test_masks_below_kernel_filesystems_are_refused(project: Path, path: str) -> None:
    with pytest.raises(UsageError, match="read_deny"):
        Sandbox(PolicyRequest(project=project, read_deny=(Path(path),)))


def test_auto_refuses_when_bwrap_ran_and_failed_a_check(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_judge = probe._judge

    def failing_judge(output: str, code: int, claims: probe.Posture) -> tuple[str, ...]:
        found = real_judge(output, code, claims)
        return (*found, "a check failed") if claims.backend == "bwrap" else found

    monkeypatch.setattr(probe, "_judge", failing_judge)
    monkeypatch.setattr(probe, "_process_cache", {})  # prove it now, not from an earlier test
    with pytest.raises(SandboxUnavailable) as refused:
        Sandbox(PolicyRequest(project=project), backend="auto")
    assert "bwrap" in refused.value.message and "a check failed" in refused.value.message
    assert "landlock" not in refused.value.message


def test_auto_takes_landlock_only_when_bwrap_is_unavailable(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on PATH
    with Sandbox(PolicyRequest(project=project), backend="auto") as sandbox:
        assert sandbox.posture.backend == "landlock"


def test_a_backend_change_in_the_same_project_is_reported(project: Path) -> None:
    with Sandbox(PolicyRequest(project=project), backend="bwrap") as sandbox:
        assert sandbox.run(["true"]).backend_change is None  # first run here: nothing to say
    with Sandbox(PolicyRequest(project=project), backend="landlock") as sandbox:
        change = sandbox.run(["true"]).backend_change
        assert change is not None and "bwrap" in change and "landlock" in change
    with Sandbox(PolicyRequest(project=project), backend="landlock") as sandbox:
        assert sandbox.run(["true"]).backend_change is None


def test_the_cli_says_when_the_backend_changed(project: Path) -> None:
    assert run_cli("run", "--backend", "bwrap", "--", "true", cwd=project).returncode == 0
    result = run_cli("run", "--backend", "landlock", "--", "true", cwd=project)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "backend changed" in line]
    assert len(notes) == 1 and "bwrap" in notes[0] and "landlock" in notes[0]
