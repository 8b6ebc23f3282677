"""Toolchain presets: persistent download caches that belong to the jail, never to the host.

Every package manager's cache is also a code store: cargo extracts ``.crate`` files without
checking them again, npx runs what its cache holds, pip and uv install cached wheels, pnpm and
bun hard-link their store into projects, Go links what GOCACHE holds. A cache the jail writes
and the host later reads is therefore a way to run code on the host. So the host's own caches
stay read-only inside every jail (offline builds from them still work), and a preset gives the
jail its *own* persistent caches instead, one set per project:

    [sandbox]
    toolchains = ["node", "python"]

Each preset below is a set of variables pointed at ``<cache home>/stockade-toolchains/
<project>/<preset>/``, which becomes a writable root. Without a preset the same tools still
work, with caches in the session's temp dir (gone when the session ends). Reviewers: the table
is the whole feature.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from stockade.errors import UsageError


class Variable(NamedTuple):
    """``name`` is set to ``value`` with ``{store}`` replaced by the preset's store; with
    ``append`` it is added to the host's value (space-separated) instead of replacing it."""

    name: str
    value: str
    append: bool = False


class Toolchain(NamedTuple):
    tools: str
    variables: tuple[Variable, ...]


TOOLCHAINS: Final[dict[str, Toolchain]] = {
    "node": Toolchain(
        "npm and npx, pnpm, yarn (1 and 2+), bun",
        (
            Variable("npm_config_cache", "{store}/npm"),
            Variable("npm_config_store_dir", "{store}/pnpm-store"),
            Variable("YARN_CACHE_FOLDER", "{store}/yarn"),
            Variable("YARN_GLOBAL_FOLDER", "{store}/yarn-berry"),
            Variable("BUN_INSTALL_CACHE_DIR", "{store}/bun"),
        ),
    ),
    "python": Toolchain(
        "pip, uv, poetry, pipx",
        (
            Variable("PIP_CACHE_DIR", "{store}/pip"),
            Variable("UV_CACHE_DIR", "{store}/uv"),
            Variable("POETRY_CACHE_DIR", "{store}/poetry"),
            Variable("PIPX_HOME", "{store}/pipx"),
            Variable("PIPX_BIN_DIR", "{store}/pipx/bin"),
        ),
    ),
    "rust": Toolchain(
        "cargo (registry, git checkouts, cargo install); the host's config.toml is copied in",
        (Variable("CARGO_HOME", "{store}/cargo"),),
    ),
    "go": Toolchain(
        "go modules, build cache, go install",
        (
            Variable("GOPATH", "{store}/go"),
            Variable("GOMODCACHE", "{store}/go/pkg/mod"),
            Variable("GOCACHE", "{store}/go-build"),
        ),
    ),
    "java": Toolchain(
        "gradle (user home: caches, wrapper distributions), maven (local repository)",
        (
            Variable("GRADLE_USER_HOME", "{store}/gradle"),
            Variable("MAVEN_OPTS", "-Dmaven.repo.local={store}/m2", append=True),
        ),
    ),
}

STORE_DIR_NAME: Final = "stockade-toolchains"


class Prepared(NamedTuple):
    """The stores to make writable and the variables to set inside the jail."""

    stores: tuple[Path, ...]
    env: dict[str, str]


def check_names(names: Sequence[str]) -> None:
    """UsageError (exit 2) for a preset name that does not exist."""
    for name in names:
        if name not in TOOLCHAINS:
            raise UsageError(
                f"unknown toolchain preset {name!r}",
                fix=f"use some of: {', '.join(TOOLCHAINS)}",
            )


def store_root(project: Path) -> Path:
    """Where this project's jail caches live: below the user's cache home, outside the
    project and outside stockade's own (read-only) state."""
    from stockade.userdirs import cache_dir

    digest = hashlib.sha256(os.fsencode(project)).hexdigest()[:12]
    return cache_dir().parent / STORE_DIR_NAME / f"{project.name or 'root'}-{digest}"


def prepare(names: Sequence[str], project: Path, host_env: Mapping[str, str]) -> Prepared:
    """Create the stores of the chosen presets and compute their variables."""
    check_names(names)
    stores: list[Path] = []
    env: dict[str, str] = {}
    for name in dict.fromkeys(names):
        store = store_root(project) / name
        store.mkdir(parents=True, exist_ok=True, mode=0o700)
        stores.append(Path(os.path.realpath(store)))
        for variable in TOOLCHAINS[name].variables:
            value = variable.value.format(store=stores[-1])
            if not variable.append:
                Path(value).mkdir(parents=True, exist_ok=True, mode=0o700)
            elif host_env.get(variable.name):
                value = f"{host_env[variable.name]} {value}"
            env[variable.name] = value
        if name == "rust":
            _copy_cargo_config(host_env, stores[-1] / "cargo", project)
    return Prepared(tuple(stores), env)


def _copy_cargo_config(host_env: Mapping[str, str], cargo_home: Path, project: Path) -> None:
    """Cargo reads ``$CARGO_HOME/config.toml``; the host's (registry mirrors, proxies) is
    copied in unless cargo finds it anyway on its walk up from the project. Credentials are
    a separate file and never copied."""
    host = Path(host_env.get("CARGO_HOME") or os.path.expanduser("~/.cargo"))
    source = next((host / n for n in ("config.toml", "config") if (host / n).is_file()), None)
    cargo_home.mkdir(exist_ok=True, mode=0o700)
    target = cargo_home / "config.toml"
    found_on_walk = host.name == ".cargo" and host.parent in (project, *project.parents)
    if source is None or found_on_walk:
        target.unlink(missing_ok=True)
        return
    shutil.copyfile(source, target)
