"""Where stockade keeps per-user state: settings, the ledger and rules, caches - and how a
cached document is authenticated.

Never inside a project: nothing an agent can write may loosen its own jail. The XDG variables
(XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME) relocate everything, which tests rely on.

**Nothing a jail writes can weaken a later run.** Every path of :func:`state_paths` is read-only
inside every jail, whatever is writable (the policy adds them to its protected paths). On top
of that, caches whose content decides confinement (the compiled seccomp filter, probe results,
the bwrap version) carry a MAC: keyed BLAKE2b - a MAC by construction, so HMAC's nesting is not
needed - with a 32-byte key in ``<data dir>/cache.key`` (mode 0600, masked inside every jail).
A document whose MAC does not verify is treated as absent and rebuilt, never trusted; a
checksum anybody can recompute would not be authentication.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

try:  # the builtin module: hashlib would also load OpenSSL (~2.5 ms on every command)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

APP = "stockade"
CACHE_KEY_NAME: Final = "cache.key"
CACHE_KEY_BYTES: Final = 32
MAC_BYTES: Final = 32


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


def runtime_dir(env: Mapping[str, str] | None = None) -> Path | None:
    """``$XDG_RUNTIME_DIR/stockade`` (sockets and other per-login state), when the login has a
    runtime dir."""
    value = (os.environ if env is None else env).get("XDG_RUNTIME_DIR", "")
    return Path(value) / APP if os.path.isabs(value) else None


def state_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """Everything of stockade's own that a jail must never write: the config, data, cache and
    runtime directories, and a ``STOCKADE_CONFIG`` file."""
    paths = [config_dir(), data_dir(), cache_dir()]
    runtime = runtime_dir(env)
    if runtime is not None:
        paths.append(runtime)
    named = (os.environ if env is None else env).get("STOCKADE_CONFIG")
    if named:
        paths.append(Path(os.path.abspath(os.path.expanduser(named))))
    return paths


# ---------------------------------------------------------------------------------------------
# The cache key and MACs
# ---------------------------------------------------------------------------------------------


def cache_key_path() -> Path:
    return data_dir() / CACHE_KEY_NAME


_key_memo: dict[Path, bytes] = {}


def cache_key() -> bytes:
    """The key that authenticates caches, created on first use. When it cannot be kept (a
    read-only home) a key for this process only: what it signs never verifies in another
    process, so caches are rebuilt every time instead of trusted."""
    path = cache_key_path()
    if path not in _key_memo:
        _key_memo[path] = _read_key(path) or _new_key(path) or os.urandom(CACHE_KEY_BYTES)
    return _key_memo[path]


def _read_key(path: Path) -> bytes | None:
    key = read_own_file(path, CACHE_KEY_BYTES, forbidden_mode=0o077)  # nobody else may know it
    return key if key is not None and len(key) == CACHE_KEY_BYTES else None


def read_own_file(path: Path, max_bytes: int, *, forbidden_mode: int) -> bytes | None:
    """Up to ``max_bytes`` of a regular file we own, opened without following a symlink;
    None when it is missing, someone else's, or has any bit of ``forbidden_mode`` set (then
    someone else could have written or read it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_mode & forbidden_mode
        ):
            return None
        return os.read(fd, max_bytes + 1)
    finally:
        os.close(fd)


def _new_key(path: Path) -> bytes | None:
    """A fresh random key, written O_EXCL|O_NOFOLLOW with mode 0600 and renamed into place
    (replacing an invalid one: every cache it signed is rebuilt)."""
    directory = path.parent
    key = os.urandom(CACHE_KEY_BYTES)
    temporary = directory / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600
        )
        try:
            os.write(fd, key)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        return None
    return key


def mac(purpose: str, *parts: bytes) -> bytes:
    """The MAC of ``parts`` for ``purpose`` (a short label: a MAC for one cache never verifies
    for another)."""
    digest = blake2b(key=cache_key(), digest_size=MAC_BYTES, person=purpose.encode()[:16])
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.digest()


def verify(purpose: str, tag: bytes, *parts: bytes) -> bool:
    """True when ``tag`` is our MAC of ``parts`` (compared in constant time)."""
    from _operator import _compare_digest  # what hmac.compare_digest is, without OpenSSL

    return bool(_compare_digest(mac(purpose, *parts), tag))


# ---------------------------------------------------------------------------------------------
# Authenticated JSON caches
# ---------------------------------------------------------------------------------------------


def _canonical_json(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def read_json_cache(name: str) -> dict[str, Any]:
    """A small JSON document from the cache dir; empty when missing, unreadable or not
    authenticated by our key (a cache is only ever an optimisation, and never trusted)."""
    return read_json_document(cache_dir() / name)


def write_json_cache(name: str, data: dict[str, Any]) -> None:
    """Atomically replace a cache document with its MAC; failures are ignored (caches are
    optional)."""
    write_json_document(cache_dir() / name, data)


def read_json_document(path: Path) -> dict[str, Any]:
    """A JSON document stockade wrote (cache or state) at ``path``, or empty when it is
    missing, unreadable, a symlink, or its MAC does not verify."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        with os.fdopen(fd, encoding="utf-8") as handle:
            envelope = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(envelope, dict):
        return {}
    data, tag = envelope.get("data"), envelope.get("mac")
    if not isinstance(data, dict) or not isinstance(tag, str):
        return {}
    try:
        tag_bytes = bytes.fromhex(tag)
    except ValueError:
        return {}
    genuine = verify("json-document", tag_bytes, path.name.encode(), _canonical_json(data))
    return data if genuine else {}


def write_json_document(path: Path, data: dict[str, Any]) -> None:
    """Atomically replace the document at ``path`` (a new O_EXCL file renamed over it, so a
    planted symlink is replaced, never followed); failures are ignored."""
    tag = mac("json-document", path.name.encode(), _canonical_json(data))
    directory = path.parent
    temporary = directory / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}"
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(temporary, "x", encoding="utf-8") as handle:
            json.dump({"mac": tag.hex(), "data": data}, handle)
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
