"""The terminal prompt, driven through a real pseudo-terminal: every key, offered choices only,
Esc vs arrow keys, EOF, and the terminal left as it was found."""

from __future__ import annotations

import io
import os
import termios
import threading
import time
from collections.abc import Iterator

import pytest

from stockade.permissions.prompt import Choice, PromptRequest, TerminalPrompt, fixed_answer
from stockade.tiers import Tier

ALL = (
    Choice.ALLOW_ONCE,
    Choice.ALLOW_SESSION,
    Choice.ALLOW_PROJECT,
    Choice.DENY_ONCE,
    Choice.DENY_PROJECT,
)
ESCAPE_CHOICES = (Choice.ALLOW_ONCE, Choice.ALLOW_SESSION, Choice.DENY_ONCE)


def request(choices: tuple[Choice, ...] = ALL, *, escape: bool = False) -> PromptRequest:
    return PromptRequest(
        action="npm install left-pad",
        tier=Tier.HIGH,
        reason="high is above what balanced runs without asking",
        choices=choices,
        escape=escape,
        cwd="/srv/app",
    )


@pytest.fixture
def pty() -> Iterator[tuple[int, int]]:
    controller, terminal = os.openpty()
    try:
        yield controller, terminal
    finally:
        os.close(controller)
        os.close(terminal)


def ask(pty: tuple[int, int], keys: bytes, req: PromptRequest) -> tuple[Choice, str]:
    """Start the prompt on the terminal side, type ``keys`` once it waits for a key (as a
    person would), and return its answer and what it printed."""
    controller, terminal = pty
    output = io.StringIO()
    result: list[Choice] = []
    thread = threading.Thread(
        target=lambda: result.append(TerminalPrompt(terminal, output)(req)), daemon=True
    )
    thread.start()
    wait_for_prompt(output)
    os.write(controller, keys)
    thread.join(5)
    assert result, f"the prompt did not answer after {keys!r}"
    return result[0], output.getvalue()


def wait_for_prompt(output: io.StringIO) -> None:
    deadline = time.monotonic() + 5
    while "> " not in output.getvalue() and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.05)  # past the print: now in cbreak mode, blocked reading a key


@pytest.mark.parametrize(
    ("keys", "choice"),
    [
        (b"a", Choice.ALLOW_ONCE),
        (b"A", Choice.ALLOW_ONCE),
        (b"\r", Choice.ALLOW_ONCE),
        (b"\n", Choice.ALLOW_ONCE),
        (b"s", Choice.ALLOW_SESSION),
        (b"M", Choice.ALLOW_SESSION),
        (b"p", Choice.ALLOW_PROJECT),
        (b"d", Choice.DENY_ONCE),
        (b"\x1b", Choice.DENY_ONCE),
        (b"N", Choice.DENY_PROJECT),
        (b"\x03", Choice.DENY_ONCE),  # Ctrl-C
        (b"\x04", Choice.DENY_ONCE),  # Ctrl-D
    ],
)
def test_each_key(pty: tuple[int, int], keys: bytes, choice: Choice) -> None:
    assert ask(pty, keys, request())[0] is choice


def test_keys_not_offered_are_ignored_with_a_bell(pty: tuple[int, int]) -> None:
    choice, output = ask(pty, b"pnxs", request(ESCAPE_CHOICES, escape=True))
    assert choice is Choice.ALLOW_SESSION
    assert output.count("\a") == 3


def test_escape_prompt_shows_no_project_choices(pty: tuple[int, int]) -> None:
    _, output = ask(pty, b"d", request(ESCAPE_CHOICES, escape=True))
    assert "[P]roject" not in output and "[N]ever" not in output
    assert "[S]ession" in output and "OUTSIDE the sandbox" in output


def test_prompt_shows_command_risk_reason_and_choices(pty: tuple[int, int]) -> None:
    _, output = ask(pty, b"a", request())
    for text in ("npm install left-pad", "high", "balanced", "/srv/app", "[N]ever"):
        assert text in output
    assert output.rstrip().endswith("once")


def test_arrow_keys_are_not_a_lone_escape(pty: tuple[int, int]) -> None:
    controller, terminal = pty
    output = io.StringIO()
    result: list[Choice] = []
    thread = threading.Thread(
        target=lambda: result.append(TerminalPrompt(terminal, output)(request())), daemon=True
    )
    thread.start()
    wait_for_prompt(output)
    os.write(controller, b"\x1b[B")  # arrow down arrives as one burst: swallowed
    thread.join(0.5)
    assert thread.is_alive() and result == []  # still waiting for a real key
    os.write(controller, b"s")
    thread.join(5)
    assert result == [Choice.ALLOW_SESSION]


def test_eof_denies() -> None:
    read_end, write_end = os.pipe()
    os.close(write_end)
    try:
        assert TerminalPrompt(read_end, io.StringIO())(request()) is Choice.DENY_ONCE
    finally:
        os.close(read_end)


def test_terminal_settings_are_restored(pty: tuple[int, int]) -> None:
    _, terminal = pty
    before = termios.tcgetattr(terminal)
    ask(pty, b"a", request())
    assert termios.tcgetattr(terminal) == before


def test_the_key_is_not_echoed(pty: tuple[int, int]) -> None:
    controller, _ = pty
    assert ask(pty, b"p", request())[0] is Choice.ALLOW_PROJECT
    os.set_blocking(controller, False)
    try:
        echoed = os.read(controller, 100)
    except BlockingIOError:
        echoed = b""
    assert b"p" not in echoed


def test_fixed_answer_gives_its_choice_only_when_offered() -> None:
    assert fixed_answer(Choice.ALLOW_PROJECT)(request()) is Choice.ALLOW_PROJECT
    assert fixed_answer(Choice.ALLOW_PROJECT)(request(ESCAPE_CHOICES)) is Choice.DENY_ONCE
