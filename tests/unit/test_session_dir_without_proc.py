"""Without /proc (macOS) the sweep must still tell live sessions from dead ones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stockade.sandbox import session_dir
from stockade.sandbox.session_dir import SessionDir, sweep_stale_sessions


def test_a_live_session_survives_the_sweep_and_a_dead_one_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_dir, "PROC", str(tmp_path / "no-proc"))
    live = SessionDir.create(tmp_path)
    assert "-0-" in live.root.name  # named with the start time macOS has: none
    exited = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                            capture_output=True, text=True, check=True)  # fmt: skip
    dead_pid = exited.stdout.strip()
    dead = tmp_path / f"{session_dir.PREFIX}{dead_pid}-0-abcdef"
    dead.mkdir()
    removed = sweep_stale_sessions(tmp_path)
    assert removed == [dead]
    assert live.root.exists()
    live.close()
