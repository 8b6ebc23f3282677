"""What stockade prints from agent text: controls and bidi characters visible, lines bounded."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stockade.printable import clipped, printable


def test_escapes_controls_bidi_and_separators() -> None:
    assert printable("ls -la") == "ls -la"
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("x\u202ey\u2066z\u200b") == "x\\u202ey\\u2066z\\u200b"
    assert printable("rm\u00a0-rf") == "rm\\xa0-rf"  # looks like a space, is not one
    assert printable("one\ntwo\ttab") == "one\\x0atwo\\x09tab"
    assert printable("one\ntwo", keep_newlines=True) == "one\ntwo"
    assert printable("\u2028\U000e0001") == "\\u2028\\U000e0001"
    assert printable("café ünïcode") == "café ünïcode"  # ordinary letters stay


@given(st.text())
def test_the_result_is_always_printable_on_one_line(text: str) -> None:
    shown = printable(text)
    assert shown.isprintable() and "\n" not in shown


def test_clipping_says_how_much_was_left_out() -> None:
    assert clipped("short") == "short"
    long = clipped("x" * 1000, 100)
    assert long.startswith("x" * 100) and "900 more characters; --json shows all" in long


def test_the_doctor_prints_outside_text_literally(capsys: pytest.CaptureFixture[str]) -> None:
    from stockade.cli.doctor import _render
    from stockade.doctor import Check, DoctorReport

    path = "/work/[red]proj\x1b[2J"
    report = DoctorReport(checks=[Check("write inside writable roots", False, path, path)])
    _render(report, as_json=False)
    out = capsys.readouterr().out
    assert "/work/[red]proj\\x1b[2J" in out  # markup shown, control escaped
    assert "\x1b" not in out


def test_status_prints_variable_names_literally(capsys: pytest.CaptureFixture[str]) -> None:
    from stockade.cli.render import console
    from stockade.cli.status import print_environment

    name = "ODD[bold]NAME\x1b"
    listing = {
        "passed": [name],
        "passed_explicitly": [name],
        "dropped": [{"name": name, "reason": "secret-looking name"}],
    }
    print_environment(console(), listing)
    out = capsys.readouterr().out
    assert out.count("ODD[bold]NAME\\x1b") == 3 and "\x1b" not in out
