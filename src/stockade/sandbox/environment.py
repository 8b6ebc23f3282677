"""The environment a confined command sees: an allow-list of host variables, plus redirections.

A deny pattern always misses one (``DATABASE_URL`` with a password, ``GITHUB_PAT``,
``MYSQL_PWD``, ``SENTRY_DSN``, CI job tokens), so the default is a minimal environment: only the
variables of ``ENVIRONMENT_ALLOW_LIST`` (the shared vocabulary: locale, terminal, toolchain
locations, ...) leave the host, and even those are dropped when their *value* looks like a
credential (``CREDENTIAL_VALUES``). What the operator passes by name (``--env NAME``,
``sandbox.env_passthrough``) passes as it is.

The result is applied *inside* the jail (the bwrap and Seatbelt backends run
``/usr/bin/env -i NAME=VALUE ... CMD``), never on the launcher, so variables such as
``LD_PRELOAD`` cannot act on the sandbox launcher before containment.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple

from stockade.vocabulary import CREDENTIAL_VALUES, ENVIRONMENT_ALLOW_LIST, SECRET_NAME_PATTERN

# Variables dropped by exact name even though an allow-list would drop them anyway: they point
# at host sockets or agents that would hand the jail a capability (ssh keys, the session bus,
# a docker daemon) even with every file masked, and settings must not pass them lightly.
HOST_CAPABILITY_VARIABLES: frozenset[str] = frozenset(
    {
        "SSH_AUTH_SOCK",
        "SSH_AGENT_PID",
        "GPG_AGENT_INFO",
        "DBUS_SESSION_BUS_ADDRESS",
        "DOCKER_HOST",
        "CONTAINER_HOST",
        "XDG_RUNTIME_DIR",
    }
)

# Caches redirected below the per-session temp dir (relative names), so tools that write
# caches work without making the user's real caches writable.
SESSION_REDIRECTS: dict[str, str] = {
    "TMPDIR": "",
    "TMP": "",
    "TEMP": "",
    "npm_config_cache": "npm-cache",
    "XDG_CACHE_HOME": "cache",
    "PIP_CACHE_DIR": "pip-cache",
    "GOCACHE": "go-build",
}

# Set by stockade for every command (the host value is replaced, not passed or dropped).
SET_BY_STOCKADE: frozenset[str] = frozenset({*SESSION_REDIRECTS, "PWD"})

_ALLOWED_NAMES: frozenset[str] = frozenset(
    name for group in ENVIRONMENT_ALLOW_LIST for name in group.names if not name.endswith("*")
)
_ALLOWED_PREFIXES: tuple[str, ...] = tuple(
    name[:-1] for group in ENVIRONMENT_ALLOW_LIST for name in group.names if name.endswith("*")
)

# Why a variable stayed on the host (status lists these next to the names, never values).
NOT_ON_ALLOW_LIST = "not on the allow-list"
SECRET_LOOKING_NAME = "its name looks like a secret"
HOST_CAPABILITY = "it hands out a host capability (agent or bus socket)"


class DroppedVariable(NamedTuple):
    """A host variable the jail does not get, and why (``reason`` never quotes the value)."""

    name: str
    reason: str


def is_secret_name(name: str) -> bool:
    """True when a variable name looks like it holds a credential."""
    return bool(SECRET_NAME_PATTERN.search(name)) or name in HOST_CAPABILITY_VARIABLES


def is_allow_listed(name: str) -> bool:
    """True when the allow-list names ``name`` (exactly or by prefix)."""
    return name in _ALLOWED_NAMES or name.startswith(_ALLOWED_PREFIXES)


def passes_by_default(name: str) -> bool:
    """True when ``name`` reaches the jail without being passed explicitly (if its value does
    not look like a credential)."""
    return is_allow_listed(name) and not is_secret_name(name)


@functools.cache
def _credential_pattern(index: int) -> re.Pattern[str]:
    return re.compile(CREDENTIAL_VALUES[index].pattern)


def credential_kind(value: str) -> str | None:
    """What kind of credential ``value`` looks like ("a GitHub token"), or None.

    Only the shapes whose markers occur in the value are searched (and compiled, once): most
    values contain none, and compiling every pattern would cost a run 1-2 ms."""
    folded = value.casefold()
    for index, shape in enumerate(CREDENTIAL_VALUES):
        if any(marker in folded for marker in shape.markers) and _credential_pattern(index).search(
            value
        ):
            return shape.what
    return None


def passthrough_loosening(name: str) -> str:
    """Why passing ``name`` explicitly loosens the default environment (for settings trust):
    it lets in a variable the default withholds, or lifts the value check of a listed one."""
    if passes_by_default(name):
        return "lets a credential-looking value of an allowed variable into the jail"
    return "passes a variable the default environment keeps on the host"


def _drop_reason(name: str, value: str) -> str | None:
    if name in HOST_CAPABILITY_VARIABLES:
        return HOST_CAPABILITY
    if SECRET_NAME_PATTERN.search(name):
        return SECRET_LOOKING_NAME
    if not is_allow_listed(name):
        return NOT_ON_ALLOW_LIST
    kind = credential_kind(value)
    return f"its value looks like a credential ({kind})" if kind else None


def judge_environment(
    host: Mapping[str, str], passthrough: Iterable[str] = ()
) -> tuple[dict[str, str], list[DroppedVariable]]:
    """Split ``host`` into what passes (name -> value) and what is dropped (sorted by name).
    Names in ``passthrough`` always pass: the operator chose them. Names stockade sets itself
    (``SET_BY_STOCKADE``) are in neither unless passed explicitly."""
    explicit = set(passthrough)
    passed: dict[str, str] = {}
    dropped: list[DroppedVariable] = []
    for name, value in host.items():
        if name in SET_BY_STOCKADE and name not in explicit:
            continue
        reason = None if name in explicit else _drop_reason(name, value)
        if reason is None:
            passed[name] = value
        else:
            dropped.append(DroppedVariable(name, reason))
    return passed, sorted(dropped)


def child_environment(
    host: Mapping[str, str],
    *,
    session_dir: Path,
    passthrough: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Build the confined command's environment.

    ``passthrough`` names variables the operator explicitly allowed; ``extra`` sets values
    outright (used for proxy variables). Redirections come last so a host ``TMPDIR`` can never
    point the jail back at a shared directory.
    """
    return confined_environment(
        host, session_dir=session_dir, passthrough=passthrough, extra=extra
    )[0]


def confined_environment(
    host: Mapping[str, str],
    *,
    session_dir: Path,
    passthrough: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], list[DroppedVariable]]:
    """``child_environment`` and what it dropped, from one look at each value."""
    env, dropped = judge_environment(host, passthrough)
    if extra:
        env.update(extra)
    for name, relative in SESSION_REDIRECTS.items():
        env[name] = str(session_dir / relative) if relative else str(session_dir)
    return env, dropped


def dropped_variables(
    host: Mapping[str, str], passthrough: Iterable[str] = ()
) -> list[DroppedVariable]:
    """What ``child_environment`` would drop, with the reason; for status (values never
    shown)."""
    return judge_environment(host, passthrough)[1]


def dropped_names(host: Mapping[str, str], passthrough: Iterable[str] = ()) -> list[str]:
    """Names that ``child_environment`` would drop; for status output (values never shown)."""
    return [variable.name for variable in dropped_variables(host, passthrough)]


def visible_python() -> str:
    """An interpreter that is visible inside a jail, for stockade's own stdlib-only helpers
    (the network bridge, doctor probes): the system python3, else this one (a venv below
    /tmp would be hidden by the jail's private /tmp)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable
