"""Quarantine: where the post-run guard moves planted code, and how to put it back.

Every item is a directory ``<data dir>/quarantine/<id>/`` holding the moved file or directory
(symlinks stay symlinks: nothing is ever followed) and ``record.json`` saying where it came
from and why. The data dir is stockade's own state, read-only inside every jail, so a command
cannot reach what was taken from it. ``stockade quarantine`` lists the items and ``stockade
quarantine restore ID`` moves one back.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, NamedTuple

from stockade.errors import UsageError

RECORD = "record.json"


class Record(NamedTuple):
    """One quarantined item. ``action``: ``moved`` (the original path is gone), ``copied``
    (the original was rewritten without what runs code, or restored from before the command)."""

    id: str
    original: Path
    stored: Path
    reason: str
    action: str
    time: float

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["original"], data["stored"] = str(self.original), str(self.stored)
        return data


def quarantine_dir() -> Path:
    from stockade.userdirs import data_dir

    return data_dir() / "quarantine"


def _new_item() -> tuple[str, Path]:
    base = quarantine_dir()
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    while True:
        item_id = time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()
        try:
            (base / item_id).mkdir(mode=0o700)
            return item_id, base / item_id
        except FileExistsError:
            continue


def _write_record(record: Record) -> None:
    (record.stored.parent / RECORD).write_text(json.dumps(record.to_dict()), encoding="utf-8")


def move_aside(path: Path, reason: str) -> Record:
    """Move ``path`` (file, directory or symlink, never followed) into quarantine."""
    item_id, directory = _new_item()
    stored = directory / (path.name or "item")
    _move(path, stored)
    record = Record(item_id, path, stored, reason, "moved", time.time())
    _write_record(record)
    return record


def keep_copy(path: Path, reason: str, *, content: bytes | None = None) -> Record:
    """Store a copy of ``path`` (or ``content``, what it held) before the guard rewrites it."""
    item_id, directory = _new_item()
    stored = directory / (path.name or "item")
    if content is not None:
        stored.write_bytes(content)
    elif path.is_symlink():
        os.symlink(os.readlink(path), stored)
    elif path.is_dir():
        shutil.copytree(path, stored, symlinks=True)
    else:
        shutil.copy2(path, stored, follow_symlinks=False)
    record = Record(item_id, path, stored, reason, "copied", time.time())
    _write_record(record)
    return record


def _move(source: Path, target: Path) -> None:
    try:
        os.rename(source, target)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:  # another file system: copy, then remove
            raise
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
        source.unlink()
    elif source.is_dir():
        shutil.copytree(source, target, symlinks=True)
        shutil.rmtree(source)
    else:
        shutil.copy2(source, target, follow_symlinks=False)
        source.unlink()


def records() -> list[Record]:
    """Every quarantined item, oldest first."""
    found: list[Record] = []
    try:
        entries = sorted(os.scandir(quarantine_dir()), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        record = _read(Path(entry.path))
        if record is not None:
            found.append(record)
    return found


def _read(directory: Path) -> Record | None:
    try:
        data = json.loads((directory / RECORD).read_text(encoding="utf-8"))
        return Record(
            id=str(data["id"]),
            original=Path(data["original"]),
            stored=Path(data["stored"]),
            reason=str(data["reason"]),
            action=str(data["action"]),
            time=float(data["time"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def restore(item_id: str, *, replace: bool = False) -> Record:
    """Put a quarantined item back where it came from. The current file there (for a copied
    item: the rewritten one) is kept aside unless ``replace``; an occupied path without
    ``replace`` is a UsageError."""
    directory = quarantine_dir() / item_id
    record = _read(directory) if "/" not in item_id else None
    if record is None:
        raise UsageError(
            f"no quarantined item {item_id!r}", fix="`stockade quarantine` lists the items"
        )
    if os.path.lexists(record.original):
        if not replace:
            raise UsageError(
                f"{record.original} exists; restoring would replace it",
                fix=f"stockade quarantine restore {item_id} --replace",
            )
        if record.original.is_dir() and not record.original.is_symlink():
            shutil.rmtree(record.original)
        else:
            record.original.unlink()
    record.original.parent.mkdir(parents=True, exist_ok=True)
    _move(record.stored, record.original)
    with contextlib.suppress(OSError):
        (directory / RECORD).unlink()
        directory.rmdir()
    return record
