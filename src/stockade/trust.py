"""Workspace trust: the user's recorded decision that a project's own settings may loosen
confinement.

A record lives in the user's data directory (never in the project: nothing an agent can write
may loosen its own jail), keyed by the canonical project path, and holds a digest of the exact
bytes of the project and local settings layers. Any change to either file - or one appearing
or disappearing - changes the digest, so the workspace is untrusted again until the user looks
at it and trusts it anew.

The store is one JSON document, ``<data dir>/trusted-workspaces.json``::

    {"version": 1,
     "workspaces": {"/home/me/code/app": {"digest": "sha256:…",
                                          "trusted_at": "2025-01-31T12:00:00+00:00",
                                          "enabled": ["sandbox.network = allow (project …:3)"]}}}

Reading fails closed: a missing, unreadable or malformed store means "not trusted".
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from stockade.errors import ConfigError

STORE_NAME = "trusted-workspaces.json"
STORE_VERSION = 1
DIGEST_DOMAIN = b"stockade workspace trust v1\0"


class TrustRecord(NamedTuple):
    project: str
    digest: str
    trusted_at: str
    enabled: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "digest": self.digest,
            "trusted_at": self.trusted_at,
            "enabled": list(self.enabled),
        }


def workspace_digest(layers: Sequence[tuple[str, bytes | None]]) -> str:
    """Digest of the named layers' exact contents (None: the file does not exist)."""
    import hashlib

    digest = hashlib.sha256(DIGEST_DOMAIN)
    for name, content in layers:
        digest.update(name.encode() + b"\0")
        if content is None:
            digest.update(b"absent\0")
        else:
            digest.update(b"present\0" + str(len(content)).encode() + b"\0" + content)
    return "sha256:" + digest.hexdigest()


def store_path() -> Path:
    from stockade.userdirs import data_dir

    return data_dir() / STORE_NAME


def find_record(project: Path) -> TrustRecord | None:
    """The record for ``project`` (canonical path), or None; never raises."""
    entry = _read_store(strict=False).get(_key(project))
    if not isinstance(entry, dict):
        return None
    digest, when = entry.get("digest"), entry.get("trusted_at")
    if not isinstance(digest, str) or not isinstance(when, str):
        return None
    enabled = entry.get("enabled")
    names = tuple(str(e) for e in enabled) if isinstance(enabled, list) else ()
    return TrustRecord(_key(project), digest, when, names)


def is_trusted(project: Path, digest: str) -> bool:
    record = find_record(project)
    return record is not None and record.digest == digest


def record_trust(project: Path, digest: str, enabled: Sequence[str]) -> TrustRecord:
    """Record that the user trusts ``project`` with exactly these layer contents."""
    from datetime import UTC, datetime

    record = TrustRecord(
        _key(project),
        digest,
        datetime.now(UTC).isoformat(timespec="seconds"),
        tuple(enabled),
    )
    with _locked():
        workspaces = _read_store(strict=True)
        workspaces[record.project] = {
            "digest": record.digest,
            "trusted_at": record.trusted_at,
            "enabled": list(record.enabled),
        }
        _write_store(workspaces)
    return record


def revoke_trust(project: Path) -> bool:
    """Forget the record for ``project``; True if there was one."""
    with _locked():
        workspaces = _read_store(strict=True)
        if workspaces.pop(_key(project), None) is None:
            return False
        _write_store(workspaces)
    return True


def _key(project: Path) -> str:
    return os.path.realpath(project)


def _read_store(*, strict: bool) -> dict[str, Any]:
    path = store_path()
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        if strict:
            raise ConfigError(
                f"the workspace trust store {path} is unreadable: {error}",
                fix=f"fix or delete {path} (deleting it untrusts every workspace)",
            ) from None
        return {}
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    if not isinstance(workspaces, dict) or data.get("version") != STORE_VERSION:
        if strict:
            raise ConfigError(
                f"the workspace trust store {path} has an unknown format",
                fix=f"delete {path} (this untrusts every workspace)",
            )
        return {}
    return workspaces


def _write_store(workspaces: dict[str, Any]) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{STORE_NAME}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": STORE_VERSION, "workspaces": workspaces}, handle, indent=2)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """Serialise read-modify-write of the store between stockade processes."""
    import fcntl

    lock_path = store_path().with_suffix(".lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
