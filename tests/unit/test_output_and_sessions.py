"""Bounded output capture and the stale-session sweep."""

from __future__ import annotations

import os
from pathlib import Path

from stockade.runner import BoundedOutput
from stockade.sandbox.session_dir import PREFIX, SessionDir, sweep_stale_sessions


def test_small_output_is_kept_whole(tmp_path: Path) -> None:
    out = BoundedOutput(100, tmp_path / "spill")
    out.write(b"hello ")
    out.write(b"world")
    assert out.finish() == "hello world"
    assert not out.truncated
    assert not (tmp_path / "spill").exists()


def test_large_output_keeps_head_and_tail_and_spills_everything(tmp_path: Path) -> None:
    out = BoundedOutput(100, tmp_path / "spill")
    data = b"".join(b"%05d\n" % i for i in range(1000))
    for start in range(0, len(data), 37):
        out.write(data[start : start + 37])
    text = out.finish()
    assert out.truncated
    assert text.startswith("00000\n")
    assert text.endswith("00999\n")
    assert "output truncated" in text and str(tmp_path / "spill") in text
    assert (tmp_path / "spill").read_bytes() == data


def test_session_dir_is_private_and_removed(tmp_path: Path) -> None:
    with SessionDir.create(tmp_path) as session:
        assert session.root.name.startswith(PREFIX)
        assert (session.root.stat().st_mode & 0o777) == 0o700
        assert session.tmp.is_dir()
    assert not session.root.exists()


def test_sweep_removes_sessions_of_dead_owners_only(tmp_path: Path) -> None:
    live = SessionDir.create(tmp_path)
    dead = tmp_path / f"{PREFIX}999999999-12345-abcdef"
    (dead / "tmp").mkdir(parents=True)
    reused_pid = tmp_path / f"{PREFIX}{os.getpid()}-1-abcdef"  # our pid, wrong start time
    reused_pid.mkdir()
    removed = sweep_stale_sessions(tmp_path)
    assert set(removed) == {dead, reused_pid}
    assert live.root.exists()
    live.close()
