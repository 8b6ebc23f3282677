"""The model-facing ``bash`` tool: its schema, the check of what a model sends, the result a
model reads back, and which shell runs the command.

A model sends whatever JSON it likes. ``check_tool_arguments`` accepts only the names in
``TOOL_PROPERTIES``, each of its JSON type and within ``ARGUMENT_LIMITS``, and says in one line
what to change otherwise; ``Session.handle_tool_call`` turns that (and every other refusal)
into a :class:`ToolResult` with ``is_error`` set, so an agent loop never dies on a bad call.

The shell is looked up on every call (``detect_shell``) and named in every result: a model that
writes bash syntax learns when ``/bin/sh`` runs it instead, and an operator who installs or
removes bash mid-session sees the change in the next result.
"""

from __future__ import annotations

import math
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from stockade.errors import StockadeError, UsageError

if TYPE_CHECKING:
    from stockade.session import ExecResult

# ---------------------------------------------------------------------------------------------
# The tool (auditable: this is everything a model may say about a command)
# ---------------------------------------------------------------------------------------------

TOOL_NAME: Final = "bash"
TOOL_DESCRIPTION: Final = (
    "Run a shell command (bash syntax) in the project, inside a sandbox: writes only inside "
    "the project's writable roots, secrets masked, network as the operator configured it. "
    "Risky commands may need the user's approval and can be denied. The result gives the "
    "exit code, the (bounded) output, the shell and the sandbox posture it ran under."
)
TOOL_PROPERTIES: Final[Mapping[str, Mapping[str, Any]]] = {
    "command": {"type": "string", "description": "The command to run (bash syntax)."},
    "cwd": {
        "type": "string",
        "description": "Working directory, relative to the project root or absolute; it must "
        "be inside a writable root. Default: the project root.",
    },
    "timeout": {
        "type": "number",
        "exclusiveMinimum": 0,
        "description": "Seconds before the whole command tree is killed (exit code 124). "
        "Default: the session's wall-clock limit (none for background commands).",
    },
    "description": {
        "type": "string",
        "description": "What the command does, in a few words, for the person approving it.",
    },
    "escape_sandbox": {
        "type": "boolean",
        "default": False,
        "description": "Run this one command outside the sandbox. The user is asked every "
        "time; without someone to ask it is denied. Cannot run in the background.",
    },
    "run_in_background": {
        "type": "boolean",
        "default": False,
        "description": "Start the command and return a handle id at once; read its new output "
        "with bash_output(id), stop it with bash_kill(id). It dies with the session.",
    },
}
TOOL_REQUIRED: Final = ("command",)

# What one argument may hold, beyond its type. The command limit is the classifier's input
# limit (``stockade.shell.MAX_INPUT_BYTES``; a test keeps them equal): a longer command is
# unanalysable anyway, and the kernel refuses a single argument over 128 KiB.
MAX_COMMAND_BYTES: Final = 64 * 1024
MAX_CWD_BYTES: Final = 4096  # PATH_MAX
MAX_DESCRIPTION_CHARS: Final = 1000  # shown on the prompt and kept in the ledger
MAX_TIMEOUT_S: Final = 7 * 24 * 3600.0  # beyond this, leave it out: background has no limit
MAX_SHOWN_VALUE: Final = 60  # characters of a bad value quoted back to the model

_JSON_KIND: Final[Mapping[str, str]] = {"string": "a string", "number": "a number",
                                         "boolean": "true or false"}  # fmt: skip


def tool_schema() -> dict[str, Any]:
    """The JSON schema of the model-facing ``bash`` tool (name, description, input schema)."""
    return {
        "name": TOOL_NAME,
        "description": TOOL_DESCRIPTION,
        "input_schema": {
            "type": "object",
            "properties": {name: dict(spec) for name, spec in TOOL_PROPERTIES.items()},
            "required": list(TOOL_REQUIRED),
            "additionalProperties": False,
        },
    }


def check_tool_arguments(arguments: object) -> dict[str, Any]:
    """Validate model-supplied ``bash`` arguments: only the known names, each of its type and
    within its limits; raise UsageError naming what to change.

    Unknown names are rejected, never ignored - a model asking for ``writable`` or
    ``network`` must learn that it cannot have them. ``null`` counts as "not given"."""
    if not isinstance(arguments, Mapping):
        raise UsageError(
            f"the {TOOL_NAME} tool takes a JSON object of arguments, not {_json_name(arguments)}",
            fix='send an object such as {"command": "ls -la"}',
        )
    unknown = sorted(_name(name) for name in arguments if name not in TOOL_PROPERTIES)
    if unknown:
        raise UsageError(
            f"unknown argument(s) for the {TOOL_NAME} tool: {', '.join(unknown)}",
            fix=f"use only: {', '.join(TOOL_PROPERTIES)} (sandbox settings are the operator's)",
        )
    missing = [name for name in TOOL_REQUIRED if arguments.get(name) is None]
    if missing:
        raise UsageError(
            f"missing argument: {', '.join(missing)}",
            fix='pass the shell command to run, e.g. {"command": "ls -la"}',
        )
    checked: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None:
            continue
        kind = TOOL_PROPERTIES[name]["type"]
        if not _has_kind(value, kind):
            raise UsageError(
                f"argument {name} must be {_JSON_KIND[kind]}, not {_json_name(value)} "
                f"{_shown(value)}",
                fix=f"pass {name} as {_JSON_KIND[kind]}",
            )
        checked[name] = value
    _check_command(checked["command"])
    if "cwd" in checked:
        _check_text("cwd", checked["cwd"], max_bytes=MAX_CWD_BYTES, nul_ok=False)
    if "description" in checked:
        _check_description(checked["description"])
    if "timeout" in checked:
        _check_timeout(checked["timeout"])
    if checked.get("escape_sandbox") and checked.get("run_in_background"):
        raise UsageError(
            "a sandbox escape cannot run in the background",
            fix="run the escaped command in the foreground, or without escape_sandbox",
        )
    return checked


def _has_kind(value: object, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, int | float) and not isinstance(value, bool)  # number


def _check_command(command: str) -> None:
    if not command.strip():
        raise UsageError("the command is empty", fix='pass the shell command, e.g. "ls -la"')
    _check_text("command", command, max_bytes=MAX_COMMAND_BYTES, nul_ok=False)


def _check_text(name: str, value: str, *, max_bytes: int, nul_ok: bool) -> None:
    if not nul_ok and "\0" in value:
        raise UsageError(f"argument {name} contains a NUL character", fix=f"remove it from {name}")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise UsageError(
            f"argument {name} is not valid Unicode (it holds a lone surrogate)",
            fix=f"send {name} as well-formed UTF-8 text",
        ) from None
    if size > max_bytes:
        hint = (
            "write the script to a file (write_file) and run that file"
            if name == "command"
            else f"shorten {name}"
        )
        raise UsageError(f"argument {name} is {size} bytes; the limit is {max_bytes}", fix=hint)


def _check_description(text: str) -> None:
    _check_text("description", text, max_bytes=4 * MAX_DESCRIPTION_CHARS, nul_ok=True)
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise UsageError(
            f"argument description is {len(text)} characters; the limit is {MAX_DESCRIPTION_CHARS}",
            fix="describe the command in a few words",
        )


def _check_timeout(seconds: float) -> None:
    # ints compare exactly with floats (10**400 is "over the limit", never an OverflowError)
    if (isinstance(seconds, float) and not math.isfinite(seconds)) or not seconds > 0:
        raise UsageError(
            f"timeout must be a positive number of seconds, got {_shown(seconds)}",
            fix="pass seconds > 0, or leave timeout out for the default",
        )
    if seconds > MAX_TIMEOUT_S:
        raise UsageError(
            f"timeout {_shown(seconds)} s is over the limit of {MAX_TIMEOUT_S:g} s (7 days)",
            fix="pass a shorter timeout, or run it with run_in_background and no timeout",
        )


def _json_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _name(name: object) -> str:
    """An argument name as the model sent it: bare when it is a plain identifier."""
    text = str(name)
    return text if text.isidentifier() and text.isascii() else _shown(text)


def _shown(value: object) -> str:
    """A bad value as the model should see it: JSON-ish, bounded, printable."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > MAX_SHOWN_VALUE:
        text = text[: MAX_SHOWN_VALUE - 3] + "..."
    return text


# ---------------------------------------------------------------------------------------------
# What the model reads back
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolResult:
    """The answer to one tool call: the text for the model, whether it is an error (a bad
    call, a refusal, a denial - nothing ran), and the ExecResult when the gate judged it.

    A command that ran and exited non-zero is not an error: its exit code is in the text."""

    text: str
    is_error: bool
    result: ExecResult | None = None

    def to_text(self) -> str:
        return self.text

    @classmethod
    def from_exec(cls, result: ExecResult) -> ToolResult:
        return cls(result.to_text(), not result.allowed, result)

    @classmethod
    def from_error(cls, error: StockadeError) -> ToolResult:
        return cls(error_text(error), True, None)


def error_text(error: StockadeError) -> str:
    """An error as a model reads it: what is wrong, then what to change."""
    return f"error: {error.message}" + (f"\nfix: {error.fix}" if error.fix else "")


# ---------------------------------------------------------------------------------------------
# The shell
# ---------------------------------------------------------------------------------------------

SHELL_SEARCH_PATH: Final = "/usr/local/bin:/usr/bin:/bin"  # never the agent's own PATH entries


class Shell(NamedTuple):
    """The shell a command runs under: its name and the executable."""

    name: str
    path: str

    def __str__(self) -> str:
        note = "" if self.name == "bash" else "; not bash: bash-only syntax fails"
        return f"{self.name} ({self.path}{note})"


def detect_shell(preferred: str | None = None) -> Shell:
    """The shell for this call: ``preferred`` (a name or absolute path) when given, else bash
    when installed (what the classifier models), else ``/bin/sh``. Looked up every time."""
    if preferred:
        path = (
            preferred
            if os.path.isabs(preferred) and os.access(preferred, os.X_OK)
            else shutil.which(preferred, path=SHELL_SEARCH_PATH)
        )
        if path is None:
            raise UsageError(
                f"the shell {preferred!r} is not installed",
                fix="install it, or build the Session without shell= to use bash or /bin/sh",
            )
        return Shell(os.path.basename(preferred), path)
    bash = shutil.which("bash", path=SHELL_SEARCH_PATH)
    return Shell("bash", bash) if bash else Shell("sh", "/bin/sh")
