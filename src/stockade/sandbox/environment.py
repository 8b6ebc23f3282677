"""The environment a confined command sees: host variables minus secrets, plus redirections.

The tables below decide what leaves the host. They are applied *inside* the jail (the bwrap
backend runs ``/usr/bin/env -i NAME=VALUE ... CMD``), never on the launcher, so variables such as
``LD_PRELOAD`` cannot act on bwrap before containment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from stockade.vocabulary import SECRET_NAME_PATTERN

# Variables whose NAME matches SECRET_NAME_PATTERN (the shared vocabulary) are dropped unless
# explicitly passed through.

# Variables dropped by exact name: they point at host sockets or agents that would hand the
# jail a capability (ssh keys, the session bus, a docker daemon) even with every file masked.
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


def is_secret_name(name: str) -> bool:
    """True when a variable name looks like it holds a credential."""
    return bool(SECRET_NAME_PATTERN.search(name)) or name in HOST_CAPABILITY_VARIABLES


def child_environment(
    host: Mapping[str, str],
    *,
    session_dir: Path,
    passthrough: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Build the confined command's environment.

    ``passthrough`` names variables the operator explicitly allowed even though they look like
    secrets; ``extra`` sets values outright (used for proxy variables). Redirections come last
    so a host ``TMPDIR`` can never point the jail back at a shared directory.
    """
    allowed = set(passthrough)
    env = {
        name: value for name, value in host.items() if name in allowed or not is_secret_name(name)
    }
    if extra:
        env.update(extra)
    for name, relative in SESSION_REDIRECTS.items():
        env[name] = str(session_dir / relative) if relative else str(session_dir)
    return env


def dropped_names(host: Mapping[str, str], passthrough: Iterable[str] = ()) -> list[str]:
    """Names that ``child_environment`` would drop; for status output (values never shown)."""
    allowed = set(passthrough)
    return sorted(name for name in host if name not in allowed and is_secret_name(name))


def visible_python() -> str:
    """An interpreter that is visible inside a jail, for stockade's own stdlib-only helpers
    (the network bridge, doctor probes): the system python3, else this one (a venv below
    /tmp would be hidden by the jail's private /tmp)."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return sys.executable
