"""Where stockade keeps per-user state: settings, the ledger and rules, caches.

Never inside a project: nothing an agent can write may loosen its own jail. The XDG variables
(XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME) relocate everything, which tests rely on.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

APP = "stockade"


def _xdg(variable: str, default: str) -> Path | None:
    """The XDG base directory rule (what platformdirs does on Linux), without importing
    platformdirs on the per-command path: an absolute $VARIABLE, else the default."""
    if not sys.platform.startswith("linux"):
        return None
    value = os.environ.get(variable, "")
    return Path(value if os.path.isabs(value) else os.path.expanduser(default)) / APP


def config_dir() -> Path:
    found = _xdg("XDG_CONFIG_HOME", "~/.config")
    if found is not None:
        return found
    import platformdirs

    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    found = _xdg("XDG_DATA_HOME", "~/.local/share")
    if found is not None:
        return found
    import platformdirs

    return Path(platformdirs.user_data_dir(APP))


def cache_dir() -> Path:
    found = _xdg("XDG_CACHE_HOME", "~/.cache")
    if found is not None:
        return found
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP))


def read_json_cache(name: str) -> dict[str, Any]:
    """A small JSON document from the cache dir; empty when missing or unreadable (a cache
    is only ever an optimisation)."""
    try:
        with open(cache_dir() / name, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json_cache(name: str, data: dict[str, Any]) -> None:
    """Atomically replace a cache document; failures are ignored (caches are optional)."""
    directory = cache_dir()
    temporary = directory / f".{name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(temporary, "x", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temporary, directory / name)
    except OSError:
        temporary.unlink(missing_ok=True)
