"""Where stockade keeps per-user state: settings, the ledger and rules, caches.

Never inside a project: nothing an agent can write may loosen its own jail. The XDG variables
(XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME) relocate everything, which tests rely on.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

APP = "stockade"


def config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP))


def cache_dir() -> Path:
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
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, directory / name)
    except OSError:
        pass
