"""The operator's flags as data, shared by click and by the fast path of ``stockade run``.

``stockade run -- CMD`` is the hottest command line: importing click alone costs about as much
as running a confined ``true``. So ``run`` is parsed here first, from the same table the click
options are built from (``cli/options.py``, ``cli/run.py``). This parser accepts only plainly
valid input - anything else (help, an unknown or malformed flag, a bad choice, no command)
returns None and click parses the same arguments, with its usual messages.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from stockade.net.mode import NetworkMode
from stockade.settings_layers import BACKENDS


class Flag(NamedTuple):
    """One long option: ``value`` takes one argument, ``multi`` may repeat, ``switch`` takes
    none. ``choices`` restricts values; ``kind_of_path`` is "dir", "file" or "any" for paths;
    ``positive_number`` values are floats above zero."""

    name: str
    dest: str
    kind: str
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    kind_of_path: str | None = None
    positive_number: bool = False


NETWORK_MODES = tuple(mode.value for mode in NetworkMode)

PROJECT_FLAG = Flag(
    "--project", "project", "value",
    "Project root (writable). Default: the current directory.", "DIRECTORY",
    kind_of_path="dir",
)  # fmt: skip
CONFIG_FLAG = Flag(
    "--config", "config_file", "value",
    "Use FILE as the user settings layer (like STOCKADE_CONFIG).", "FILE", kind_of_path="file",
)  # fmt: skip

REVIEW_FLAG = Flag(
    "--review", "review", "switch",
    "Every change to the project lands in a copy-on-write layer, kept as a changeset: the "
    "project is untouched until `stockade changes apply ID`.",
)  # fmt: skip

SANDBOX_FLAGS: tuple[Flag, ...] = (
    PROJECT_FLAG,
    Flag("--writable", "writable", "multi", "Another writable root (repeatable).", "PATH",
         kind_of_path="any"),
    Flag("--network", "network", "value",
         "deny (default): loopback only; allow: share the host network; allowlist: only the "
         "allowed domains, through the proxy.", choices=NETWORK_MODES),
    Flag("--allow-domain", "allowed_domains", "multi",
         "With --network allowlist: a reachable domain (example.com, *.example.com, optional "
         ":port; repeatable).", "DOMAIN"),
    Flag("--env", "env_passthrough", "multi",
         "Pass this variable through even if it looks like a secret (repeatable).", "NAME"),
    Flag("--backend", "backend", "value", "Sandbox backend (default: from settings, else auto).",
         choices=BACKENDS),
    CONFIG_FLAG,
    Flag("--unsafe", "unsafe", "switch", "Run without any sandbox (every run says so)."),
    Flag("--allow-writable-home", "allow_writable_home", "switch",
         "Allow the home directory (or a parent, or /) as a writable root; its startup files, "
         "git and ssh config and ~/.local/bin are then protected."),
)  # fmt: skip

RUN_FLAGS: tuple[Flag, ...] = (
    Flag("--timeout", "timeout", "value",
         "Kill the whole confined process tree after this long (exit 124).", "SECONDS",
         positive_number=True),
    Flag("--stdio", "stdio", "switch",
         "For long-lived stdio programs such as MCP servers: COMMAND talks over stockade's own "
         "stdin/stdout (no copy, no buffering), stockade writes nothing to stdout, no "
         "wall-clock limit applies, signals are forwarded."),
    Flag("--gate", "gate", "switch",
         "With --stdio, for MCP servers: read the JSON-RPC stream and put every tools/call "
         "through the permission gate as mcp.<server>.<tool> (rules, autonomy, the client's "
         "elicitation, ledger) before it reaches COMMAND; a denied call never does."),
    Flag("--server-name", "server_name", "value",
         "With --gate: the <server> part of mcp.<server>.<tool> (default: from COMMAND).",
         "NAME"),
    Flag("--autonomy", "autonomy", "value",
         "With --gate: how much runs without asking (default: STOCKADE_AUTONOMY, then "
         "[permissions] autonomy, else balanced when the client can answer, ask otherwise).",
         "LEVEL"),
    Flag("--headless", "headless", "switch",
         "With --gate: never ask the client; what would ask is denied."),
    Flag("--json", "as_json", "switch",
         "Capture the output and print the result as one JSON object (exit code, stdout, "
         "stderr, posture) instead of streaming it."),
    REVIEW_FLAG,
)  # fmt: skip


def parse_run_arguments(args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """(options, command) for ``stockade run ARGS`` when ARGS are plainly valid, else None.

    Options come first; ``--`` or the first word that is not an option starts the command
    (click's ``allow_interspersed_args=False``). Defaults match click's (None, (), False).
    """
    flags = {flag.name: flag for flag in (*SANDBOX_FLAGS, *RUN_FLAGS)}
    options: dict[str, Any] = {
        flag.dest: () if flag.kind == "multi" else (False if flag.kind == "switch" else None)
        for flag in flags.values()
    }
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            index += 1
            break
        if not word.startswith("-") or word == "-":
            break
        name, has_value, value = word.partition("=")
        flag = flags.get(name)
        if flag is None:
            return None  # help, a typo, a short option: click explains
        if flag.kind == "switch":
            if has_value:
                return None
            options[flag.dest] = True
            index += 1
            continue
        if not has_value:
            if index + 1 >= len(args):
                return None
            value = args[index + 1]
            index += 1
        index += 1
        if flag.choices and value not in flag.choices:
            return None
        if flag.kind == "multi":
            options[flag.dest] = (*options[flag.dest], value)
        else:
            options[flag.dest] = value
    command = args[index:]
    typed = _typed(options)
    if not command or typed is None:
        return None
    return typed, command


def _typed(options: dict[str, Any]) -> dict[str, Any] | None:
    """Convert values the way the click options do (paths, the timeout); None when click would
    reject one (a timeout that is not a positive number, --timeout with --stdio)."""
    from pathlib import Path

    for key in ("project", "config_file"):
        if options[key] is not None:
            options[key] = Path(options[key])
    options["writable"] = tuple(Path(p) for p in options["writable"])
    if options["timeout"] is not None:
        try:
            seconds = float(options["timeout"])
        except ValueError:
            return None
        if not seconds > 0 or math.isnan(seconds) or options["stdio"]:
            return None
        options["timeout"] = seconds
    if options["as_json"] and options["stdio"]:
        return None  # click explains the conflict
    if options["gate"] or options["server_name"] or options["autonomy"] or options["headless"]:
        return None  # the gate is long-lived: click parses it (and explains misuse)
    return options
