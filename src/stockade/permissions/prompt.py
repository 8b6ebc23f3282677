"""Asking a person: the prompt interface and the interactive terminal prompt.

The gate never talks to a terminal itself. When a verdict is "ask" it builds a
:class:`PromptRequest` (the question plus the answers that make sense for it) and hands it to
a :data:`Prompt` - any callable returning a :class:`Choice`. The CLI uses
:class:`TerminalPrompt`; the MCP server maps the request to an elicitation; a library caller
passes its own function. Nobody to ask (headless) is ``prompt=None``: the gate denies.

Keys (``KEYS`` below): ``A``/Enter allow once, ``S``/``M`` allow for this session, ``P`` allow
for this project (persisted), ``E`` allow exactly this command for this project, ``D``/Esc deny
once, ``N`` never for this project (persisted deny), ``X`` never exactly this command.

``S``, ``P`` and ``N`` store the *generalised* rule (``git commit *`` for ``git commit -m x``;
see :mod:`stockade.permissions.generalise`), ``E`` and ``X`` the exact text; the prompt shows
both before anything is stored, and offers ``E``/``X`` only when they differ. A request offers
only the choices that mean something for it: never ``P``/``N`` on a sandbox-escape prompt
(escapes are never persisted), never ``S``/``P`` when a floor would ask again anyway (a
destructive command asks every time below yolo), ``S`` only where a session outlives the
question (a Session, an MCP connection, ``stockade exec`` with ``STOCKADE_SESSION_ID``).
"""

from __future__ import annotations

import enum
import os
import select
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import IO, Protocol

from stockade.tiers import Tier


class Choice(enum.Enum):
    """A person's answer to a prompt."""

    ALLOW_ONCE = "once"
    ALLOW_SESSION = "session"
    ALLOW_PROJECT = "project"
    ALLOW_PROJECT_EXACT = "project-exact"
    DENY_ONCE = "deny"
    DENY_PROJECT = "never"
    DENY_PROJECT_EXACT = "never-exact"

    def __str__(self) -> str:
        return self.value

    @property
    def allows(self) -> bool:
        return self in (
            Choice.ALLOW_ONCE,
            Choice.ALLOW_SESSION,
            Choice.ALLOW_PROJECT,
            Choice.ALLOW_PROJECT_EXACT,
        )

    @property
    def exact(self) -> bool:
        """Stores the exact text rather than the generalised rule."""
        return self in (Choice.ALLOW_PROJECT_EXACT, Choice.DENY_PROJECT_EXACT)


# --- keys (auditable) ----------------------------------------------------------------------
ENTER_KEYS = ("\r", "\n")
ESCAPE_KEY = "\x1b"
KEYS: dict[str, Choice] = {
    "a": Choice.ALLOW_ONCE,
    "\r": Choice.ALLOW_ONCE,
    "\n": Choice.ALLOW_ONCE,
    "s": Choice.ALLOW_SESSION,
    "m": Choice.ALLOW_SESSION,
    "p": Choice.ALLOW_PROJECT,
    "e": Choice.ALLOW_PROJECT_EXACT,
    "d": Choice.DENY_ONCE,
    ESCAPE_KEY: Choice.DENY_ONCE,
    "n": Choice.DENY_PROJECT,
    "x": Choice.DENY_PROJECT_EXACT,
}
LABELS: dict[Choice, str] = {
    Choice.ALLOW_ONCE: "[A]llow once (Enter)",
    Choice.ALLOW_SESSION: "[S]ession: always this session",
    Choice.ALLOW_PROJECT: "[P]roject: always for this project",
    Choice.ALLOW_PROJECT_EXACT: "[E]xactly this, always for this project",
    Choice.DENY_ONCE: "[D]eny (Esc)",
    Choice.DENY_PROJECT: "[N]ever for this project",
    Choice.DENY_PROJECT_EXACT: "never e[X]actly this",
}
# The key of each choice that stores a rule (shown next to the rule it stores).
STORING_KEYS: dict[Choice, str] = {
    Choice.ALLOW_SESSION: "S",
    Choice.ALLOW_PROJECT: "P",
    Choice.DENY_PROJECT: "N",
    Choice.ALLOW_PROJECT_EXACT: "E",
    Choice.DENY_PROJECT_EXACT: "X",
}
INTERRUPT_KEYS = ("\x03", "\x04")  # Ctrl-C, Ctrl-D: deny once


@dataclass(frozen=True)
class PromptRequest:
    """Everything a prompt shows; ``choices`` are the only answers the gate will accept."""

    action: str
    tier: Tier
    reason: str
    choices: tuple[Choice, ...]
    escape: bool = False  # the command asks to run outside the sandbox
    needs_permission: bool = True  # ordinary permission is part of the question
    asking: tuple[str, ...] = ()  # the segments/subjects that need the answer
    cwd: str = ""
    autonomy: str = ""
    remember: tuple[str, ...] = ()  # the rules S/P/N store (generalised where safe)
    exact: tuple[str, ...] = ()  # the rules E/X store (the exact text)

    @property
    def question(self) -> str:
        if self.escape and self.needs_permission:
            what = "run this OUTSIDE the sandbox (needs permission and a sandbox escape)"
        elif self.escape:
            what = "run this OUTSIDE the sandbox (sandbox escape)"
        else:
            what = "run this"
        return f"Allow stockade to {what}?"


class Prompt(Protocol):
    """Answer a prompt request; must return one of ``request.choices``."""

    def __call__(self, request: PromptRequest) -> Choice: ...


PromptFunction = Callable[[PromptRequest], Choice]


class TerminalPrompt:
    """The interactive prompt: one keypress on a terminal, read in cbreak mode.

    ``input_fd`` must be a terminal (the CLI checks ``isatty`` before choosing this prompt);
    output goes to ``output`` (stderr by default, so the command's stdout stays clean).
    A key that is not offered rings the bell and waits; EOF or Ctrl-C means deny once.
    """

    def __init__(self, input_fd: int | None = None, output: IO[str] | None = None) -> None:
        self.input_fd = sys.stdin.fileno() if input_fd is None else input_fd
        self.output = output if output is not None else sys.stderr

    def __call__(self, request: PromptRequest) -> Choice:
        self._show(request)
        choice = self._read_choice(request.choices)
        self.output.write(f" {choice.value}\n")
        self.output.flush()
        return choice

    def _show(self, request: PromptRequest) -> None:
        out = self.output
        for line in describe(request):
            out.write(f"{line}\n")
        out.write("  " + "  ".join(LABELS[c] for c in request.choices) + "\n> ")
        out.flush()

    def _read_choice(self, offered: tuple[Choice, ...]) -> Choice:
        with _cbreak(self.input_fd):
            while True:
                key = self._read_key()
                if key is None or key in INTERRUPT_KEYS:
                    return Choice.DENY_ONCE
                choice = KEYS.get(key.lower())
                if choice is not None and choice in offered:
                    return choice
                self.output.write("\a")
                self.output.flush()

    def _read_key(self) -> str | None:
        try:
            data = os.read(self.input_fd, 1)
        except OSError:
            return None
        if not data:
            return None
        if data == ESCAPE_KEY.encode():
            # A lone Esc means deny; Esc followed at once by more bytes is an arrow/function
            # key sequence, which is swallowed and ignored.
            if _more_input(self.input_fd, timeout=0.05):
                with suppress(OSError):
                    os.read(self.input_fd, 32)
                return ""
            return ESCAPE_KEY
        return data.decode("utf-8", errors="replace")


ESCAPE_NOTE = "an escape runs without confinement; it is never remembered beyond this session"


def question_facts(request: PromptRequest, description: str | None = None) -> list[tuple[str, str]]:
    """(label, text) lines of a question, printable (control and bidi characters escaped):
    what would run, the agent's stated purpose, where, how risky, why it asks. Shared by the
    terminal prompt and MCP elicitation."""
    from stockade.printable import printable

    facts = [("command", printable(request.action, keep_newlines=True))]
    if description:
        facts.append(("purpose (as the agent describes it)", printable(description)))
    if request.cwd:
        facts.append(("in", printable(request.cwd)))
    facts += [("risk", str(request.tier)), ("why", printable(request.reason))]
    if request.escape:
        facts.append(("note", ESCAPE_NOTE))
    return facts


def describe(request: PromptRequest) -> list[str]:
    """The terminal lines of a question, before its choices: the facts, then what each
    remembering answer stores."""

    lines = ["", request.question]
    lines += [f"  {label + ':':8} {text}" for label, text in question_facts(request)]
    return lines + stored_lines(request)


def stored_lines(request: PromptRequest) -> list[str]:
    """What the remembering answers store: ``S/P/N store: `git commit *```, then the exact
    rules of ``E``/``X`` when they are offered."""
    from stockade.printable import printable

    lines = []
    broad = [STORING_KEYS[c] for c in request.choices if c in STORING_KEYS and not c.exact]
    narrow = [STORING_KEYS[c] for c in request.choices if c in STORING_KEYS and c.exact]
    if broad and request.remember:
        shown = ", ".join(f"`{printable(rule)}`" for rule in request.remember)
        lines.append(f"  {'/'.join(broad)} store: {shown}")
    if narrow and request.exact:
        shown = ", ".join(f"`{printable(rule)}`" for rule in request.exact)
        lines.append(f"  {'/'.join(narrow)} store: {shown}")
    return lines


def _more_input(fd: int, *, timeout: float) -> bool:
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready)


@contextmanager
def _cbreak(fd: int) -> Iterator[None]:
    """Put a terminal in cbreak mode (one key at a time, no echo, Ctrl-C read as a key) and
    restore it after."""
    import termios
    import tty

    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield  # not a terminal: read bytes as they come
        return
    try:
        tty.setcbreak(fd)
        attributes = termios.tcgetattr(fd)
        attributes[3] &= ~(termios.ECHO | termios.ISIG)  # Ctrl-C arrives as a key: deny
        termios.tcsetattr(fd, termios.TCSANOW, attributes)
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


def fixed_answer(choice: Choice) -> PromptFunction:
    """A prompt that always gives ``choice`` when it is offered, else denies once (scripts)."""

    def answer(request: PromptRequest) -> Choice:
        return choice if choice in request.choices else Choice.DENY_ONCE

    return answer
