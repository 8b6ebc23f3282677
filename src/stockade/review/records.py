"""What the project held under a changed path, and whether it still does: no silent overwrite.

When a change first shows up in the layer (after the command that made it), stockade records
what the project had at that path: type, permission bits, size, mtime, ctime, inode and, for a
file, a BLAKE2b hash of its content (streamed); for a symlink, its target. Apply compares the
project now with that record:

* the entry is the same one, untouched (type, inode, size, mtime and ctime equal): fine;
* it is not, but it has the same type, bits and content (rewritten with the same bytes): fine;
* anything else - changed, replaced, removed, created where the layer adds: a conflict.

A ctime can be set by nobody but the kernel, so one at or after the start of the command that
made the change means the project changed *during* that command: the copy in the layer may be
based on either version, and the record itself is not the "before" - always a conflict. For a
directory the layer deletes or replaces as a whole, every entry below it is checked that way
too (a file the project gained since must not vanish silently).
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path
from typing import Any, Final

try:  # the builtin module: hashlib would also load OpenSSL
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from stockade.review.scan import kind_of

HASH_CHUNK: Final = 1 << 20
CLOCK_REALTIME_COARSE: Final = 5  # Linux: the clock file timestamps are taken from

Record = dict[str, Any]


def coarse_now_ns() -> int:
    """Now, on the clock the kernel stamps ctimes with (it may lag the precise clock by a
    tick): a change made after this moment has a ctime at or after it."""
    try:
        return time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
    except OSError:  # not Linux: one second of margin instead
        return time.time_ns() - 1_000_000_000


def file_hash(path: Path) -> str:
    digest = blake2b(digest_size=32)
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        while chunk := os.read(fd, HASH_CHUNK):
            digest.update(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


def snapshot(path: Path, since_ns: int) -> Record:
    """The record of what ``path`` is now; ``since_ns``: when the command that changed it
    started (kept, to tell a change during that command from one after it)."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return {"type": "absent", "since": since_ns}
    record: Record = {
        "type": kind_of(info.st_mode),
        "mode": stat.S_IMODE(info.st_mode),
        "size": info.st_size,
        "mtime": info.st_mtime_ns,
        "ctime": info.st_ctime_ns,
        "ino": info.st_ino,
        "since": since_ns,
    }
    if stat.S_ISREG(info.st_mode):
        try:
            record["hash"] = file_hash(path)
        except OSError:
            record["hash"] = None
    elif stat.S_ISLNK(info.st_mode):
        record["target"] = os.readlink(path)
    return record


def conflict(record: Record | None, path: Path, *, whole_tree: bool) -> str | None:
    """Why applying over ``path`` would overwrite something the review did not see, or None.
    ``record`` None: the project had nothing there (an addition). ``whole_tree``: the change
    deletes or replaces the directory at ``path``, so everything below it counts."""
    try:
        now = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        now = None
    if record is None or record.get("type") == "absent":
        if now is not None:
            return "the project now has something at this path"
        return None
    if now is None:
        return "the project no longer has this path"
    since = int(record.get("since", 0))
    if int(record.get("ctime", 0)) >= since:
        return "the project changed this path while the command ran"
    if kind_of(now.st_mode) != record.get("type"):
        return f"the project's {record.get('type')} became a {kind_of(now.st_mode)}"
    if not _same_entry(now, record) and not _same_content(path, now, record):
        return "the project changed this path since the run"
    if whole_tree and stat.S_ISDIR(now.st_mode):
        newer = _changed_below(path, since)
        if newer is not None:
            return f"the project changed {newer} below it since the run started"
    return None


def _same_entry(now: os.stat_result, record: Record) -> bool:
    if stat.S_ISDIR(now.st_mode):  # a directory's own times change with its entries
        return now.st_ino == record.get("ino") and stat.S_IMODE(now.st_mode) == record.get("mode")
    return (
        now.st_ino == record.get("ino")
        and now.st_size == record.get("size")
        and now.st_mtime_ns == record.get("mtime")
        and now.st_ctime_ns == record.get("ctime")
    )


def _same_content(path: Path, now: os.stat_result, record: Record) -> bool:
    if stat.S_IMODE(now.st_mode) != record.get("mode"):
        return False
    if stat.S_ISLNK(now.st_mode):
        return os.readlink(path) == record.get("target")
    if stat.S_ISREG(now.st_mode) and record.get("hash"):
        return now.st_size == record.get("size") and file_hash(path) == record["hash"]
    return stat.S_ISDIR(now.st_mode)


def _changed_below(directory: Path, since_ns: int) -> str | None:
    """The first entry below ``directory`` changed at or after ``since_ns`` (by ctime)."""
    for root, dirs, files in os.walk(directory):
        for name in (*dirs, *files):
            path = Path(root) / name
            try:
                if os.lstat(path).st_ctime_ns >= since_ns:
                    return os.path.relpath(path, directory)
            except OSError:
                continue
    return None
