"""The warm jail's wire format and the spawner's scratch cleaning, without a jail."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stockade.runner import warm_enabled
from stockade.sandbox import spawner

FIELDS = st.lists(st.binary(max_size=64), max_size=12)


@given(FIELDS)
def test_fields_round_trip(fields: list[bytes]) -> None:
    assert spawner.decode(spawner.encode(fields)) == fields


@pytest.mark.parametrize("damaged", [b"5:abc", b"x:abc", b"3abc", b"-1:"])
def test_damaged_fields_are_refused(damaged: bytes) -> None:
    with pytest.raises(ValueError):
        spawner.decode(damaged)


def test_a_request_carries_argv_env_cwd_limits_and_flags() -> None:
    message = spawner.request(
        [b"/bin/echo", b"a b", b""], [b"A=1", b"B=x=y"], b"/work", [(7, 64), (1, 0)], "f"
    )
    assert int(message[:8], 16) == len(message) - 8
    parsed = spawner.Request(message[8:])
    assert parsed.argv == [b"/bin/echo", b"a b", b""]
    assert parsed.env == {b"A": b"1", b"B": b"x=y"}
    assert parsed.cwd == b"/work"
    assert parsed.rlimits == [(7, 64), (1, 0)]
    assert spawner.FLAG_FRESH in parsed.flags


def test_a_request_without_a_command_is_refused() -> None:
    with pytest.raises(ValueError):
        spawner.Request(spawner.request([], [], b"/", [], "")[8:])


def test_scratch_is_emptied_but_what_was_there_stays(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    (scratch / "mount-point").mkdir()  # there when the spawner started: kept
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the jail's\n")
    kept = spawner.Scratch(str(scratch))
    (scratch / "file").write_text("x")
    (scratch / "dir" / "deeper").mkdir(parents=True)
    (scratch / "dir" / "deeper" / "f").write_text("x")
    (scratch / "link").symlink_to(outside)
    locked = scratch / "locked"
    locked.mkdir()
    (locked / "f").write_text("x")
    locked.chmod(0)
    scratch.chmod(0o700)
    kept.empty()
    assert sorted(os.listdir(scratch)) == ["mount-point"]
    assert (outside / "keep.txt").read_text() == "not the jail's\n"  # a symlink is not followed
    assert scratch.stat().st_mode & 0o777 == kept.mode  # its mode as it was


@pytest.mark.parametrize(
    ("variable", "setting", "expected"),
    [
        (None, None, True),
        (None, False, False),
        ("0", True, False),
        ("off", None, False),
        ("1", False, True),
        ("", False, False),
    ],
)
def test_the_warm_switch(
    variable: str | None, setting: bool | None, expected: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if variable is None:
        monkeypatch.delenv("STOCKADE_WARM", raising=False)
    else:
        monkeypatch.setenv("STOCKADE_WARM", variable)
    assert warm_enabled(setting) is expected


def test_warm_is_a_sandbox_setting_any_layer_may_set(tmp_path: Path) -> None:
    from stockade.settings import Settings
    from tests.settings_support import write_project, write_user

    assert Settings.load(tmp_path, env=dict(os.environ), cwd=tmp_path).sandbox.warm is True
    write_user("[sandbox]\nwarm = false\n")
    assert Settings.load(tmp_path, env=dict(os.environ), cwd=tmp_path).sandbox.warm is False
    write_project(tmp_path, "[sandbox]\nwarm = true\n")  # either way keeps every guarantee
    settings = Settings.load(tmp_path, env=dict(os.environ), cwd=tmp_path)
    assert settings.sandbox.warm is True and not settings.ignored


def test_the_warm_thread_registers_the_stdlib_fork_hooks_before_it_forks() -> None:
    """A module that registers a lock with os.register_at_fork, imported by another thread
    while ours is mid-fork, gets its lock released under the importer ("release unlocked
    lock" in the MCP server's first asyncio.to_thread): they are imported before we fork."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from stockade.sandbox.warm import _LongLivedThread\n"
        "assert 'concurrent.futures.thread' not in sys.modules\n"
        "thread = _LongLivedThread()\n"
        "thread.submit(lambda: 1).result()\n"
        "thread.shutdown()\n"
        "print(sorted({'concurrent.futures.thread', 'logging'} & set(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "['concurrent.futures.thread', 'logging']"
