"""Bounded output capture and the stale-session sweep."""

from __future__ import annotations

import os
from pathlib import Path

from stockade.runner import BoundedOutput
from stockade.sandbox.session_dir import PREFIX, SessionDir, sweep_stale_sessions
from stockade.spills import SpillDir


def test_small_output_is_kept_whole(tmp_path: Path) -> None:
    out = BoundedOutput(100, SpillDir(tmp_path / "output"), "spill")
    out.write(b"hello ")
    out.write(b"world")
    assert out.finish() == "hello world"
    assert not out.truncated and out.spill_path is None
    assert not (tmp_path / "output").exists()


def test_large_output_keeps_head_and_tail_and_spills_everything(tmp_path: Path) -> None:
    out = BoundedOutput(100, SpillDir(tmp_path / "output"), "spill")
    data = b"".join(b"%05d\n" % i for i in range(1000))
    for start in range(0, len(data), 37):
        out.write(data[start : start + 37])
    text = out.finish()
    assert out.truncated
    assert text.startswith("00000\n")
    assert text.endswith("00999\n")
    assert out.spill_path is not None
    assert "output truncated" in text and f"full output in {out.spill_path}" in text
    assert out.spill_path.read_bytes() == data


def test_a_spill_past_its_cap_keeps_the_first_bytes_and_says_so(tmp_path: Path) -> None:
    out = BoundedOutput(1024, SpillDir(tmp_path / "output"), "spill", spill_cap=2048)
    out.write(b"x" * 5000)
    text = out.finish()
    assert out.spill_path is not None and out.spill_path.read_bytes() == b"x" * 2048
    assert "spill files are capped at 2 KiB; 2952 bytes dropped" in text


def test_session_dir_is_private_and_removed(tmp_path: Path) -> None:
    with SessionDir.create(tmp_path) as session:
        assert session.root.name.startswith(PREFIX)
        # root: searchable (the jail user must reach tmp/ and net/), never listable
        assert (session.root.stat().st_mode & 0o777) == (0o711 if os.geteuid() == 0 else 0o700)
        assert (session.tmp.stat().st_mode & 0o777) == 0o700
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
