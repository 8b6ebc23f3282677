"""The bounded window a background command's output is kept in between two reads."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from stockade.background import OutputWindow


def test_small_output_is_returned_whole_and_the_window_empties() -> None:
    window = OutputWindow(1024)
    window.write(b"hello ")
    window.write(b"world\n")
    assert window.take(None) == ("hello world\n", 0)
    assert window.take(None) == ("", 0)


def test_large_output_keeps_head_and_tail_and_names_the_log() -> None:
    window = OutputWindow(10)
    window.write(b"0123456789abcdefghij")
    text, omitted = window.take(Path("/x/run.stdout"))
    assert omitted == 10
    assert text.startswith("01234\n[stockade: output truncated - 10 bytes omitted")
    assert "full output in /x/run.stdout" in text
    assert text.endswith("]\nfghij")


@given(
    limit=st.integers(min_value=2, max_value=64),
    chunks=st.lists(st.binary(min_size=0, max_size=40), max_size=20),
)
def test_window_is_bounded_and_keeps_exactly_the_first_and_last_bytes(
    limit: int, chunks: list[bytes]
) -> None:
    window = OutputWindow(limit)
    for chunk in chunks:
        window.write(chunk)
    data = b"".join(chunks)
    head = bytes(window._head)
    tail = b"".join(window._tail)
    assert len(head) + len(tail) <= limit
    if len(data) <= limit:
        assert head + tail == data
        assert window._omitted == 0
    else:
        half = limit // 2
        assert head == data[:half]
        assert tail == data[len(data) - (limit - half) :]
        assert window._omitted == len(data) - limit
