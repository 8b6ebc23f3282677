"""Changesets on disk: where a review layer lives between the run and the user's decision.

Layout, in the user's data dir (read-only inside every jail, like all of stockade's state)::

    changesets/                 0700
        <id>/                   one changeset (a short hex id)
            meta.json           what made it and what the project held (authenticated, atomic)
            lock                held (flock) by the run or session that writes the layer
            upper/  work/       overlayfs's upper and work dirs (same filesystem, as required)

A changeset is made as ``.<id>.new`` and renamed into place once its metadata exists, so a
crash never leaves one half-made under its id (the next start sweeps such leftovers). Its
metadata is replaced atomically and carries a MAC (``userdirs.write_json_document``): one that
does not verify is refused, never trusted. The owner holds the lock for as long as commands
may write the layer; a changeset marked running whose lock is free belongs to a run that died
(SIGKILL): it is listed as interrupted, and can be applied or discarded like any other.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from pathlib import Path
from typing import Any, Final

from stockade.errors import UsageError
from stockade.userdirs import data_dir, read_json_document, write_json_document

STORE_NAME: Final = "changesets"
META_NAME: Final = "meta.json"
LOCK_NAME: Final = "lock"
UPPER_NAME: Final = "upper"
WORK_NAME: Final = "work"
ID_BYTES: Final = 3  # six hex digits
FORMAT_VERSION: Final = 1

RUNNING: Final = "running"
FINISHED: Final = "finished"
INTERRUPTED: Final = "interrupted"  # shown, never stored: running, but nobody holds the lock


def store_dir() -> Path:
    return data_dir() / STORE_NAME


class Changeset:
    """One changeset directory and its metadata (``meta``, a plain dict saved as JSON)."""

    def __init__(self, directory: Path, meta: dict[str, Any]) -> None:
        self.directory = directory
        self.meta = meta
        self._lock_fd = -1

    @property
    def id(self) -> str:
        return str(self.meta["id"])

    @property
    def project(self) -> Path:
        return Path(self.meta["project"])

    @property
    def upper(self) -> Path:
        return self.directory / UPPER_NAME

    @property
    def work(self) -> Path:
        return self.directory / WORK_NAME

    @property
    def holds_lock(self) -> bool:
        return self._lock_fd >= 0

    @property
    def state(self) -> str:
        """running (its run or session is alive), finished, or interrupted (its run died)."""
        stored = str(self.meta.get("state", FINISHED))
        if stored != RUNNING or self.holds_lock:
            return stored
        return RUNNING if self.in_use() else INTERRUPTED

    # -- making one -------------------------------------------------------------------------

    @classmethod
    def create(cls, project: Path, meta: dict[str, Any]) -> Changeset:
        """A new, empty changeset for ``project``, locked by this process (state running)."""
        store = store_dir()
        store.mkdir(parents=True, exist_ok=True, mode=0o700)
        sweep_unfinished(store)
        while True:
            new_id = os.urandom(ID_BYTES).hex()
            if not (store / new_id).exists():
                break
        staging = store / f".{new_id}.new"
        staging.mkdir(mode=0o700)
        try:
            lock_fd = _lock(staging / LOCK_NAME, wait=False)
            assert lock_fd is not None
            (staging / UPPER_NAME).mkdir(mode=0o700)
            (staging / WORK_NAME).mkdir(mode=0o700)
            # the layer's root directory shows the upper's own mode: the project's
            os.chmod(staging / UPPER_NAME, stat.S_IMODE(os.stat(project).st_mode))
            info = os.stat(project)
            full = {
                "version": FORMAT_VERSION,
                "id": new_id,
                "project": str(project),
                "project_identity": [info.st_dev, info.st_ino],
                "created": time.time(),
                "state": RUNNING,
                "commands": [],
                "records": {},
                "placeholders": [],
                "protected": [],
                **meta,
            }
            write_json_document(staging / META_NAME, full)
            if not read_json_document(staging / META_NAME):
                raise OSError(errno.EIO, f"cannot write {staging / META_NAME}")
            os.rename(staging, store / new_id)
        except BaseException:
            remove_tree(staging)
            raise
        changeset = cls(store / new_id, full)
        changeset._lock_fd = lock_fd
        return changeset

    # -- finding them -----------------------------------------------------------------------

    @classmethod
    def open(cls, changeset_id: str) -> Changeset:
        """The changeset ``changeset_id``; UsageError (exit 2) when there is none or its
        metadata does not verify."""
        if not changeset_id or not all(c in "0123456789abcdef" for c in changeset_id):
            raise UsageError(
                f"{changeset_id!r} is not a changeset id",
                fix="`stockade changes` lists the ids of this project's changesets",
            )
        directory = store_dir() / changeset_id
        meta = read_json_document(directory / META_NAME)
        if not directory.is_dir():
            raise UsageError(
                f"there is no changeset {changeset_id}",
                fix="`stockade changes` lists the ids of this project's changesets",
            )
        if meta.get("id") != changeset_id:
            raise UsageError(
                f"the metadata of changeset {changeset_id} is missing or not stockade's own",
                fix=f"inspect {directory} and remove it by hand",
            )
        return cls(directory, meta)

    # -- state ------------------------------------------------------------------------------

    def save(self) -> None:
        """Replace the metadata atomically (a new file renamed over the old one)."""
        write_json_document(self.directory / META_NAME, self.meta)

    def in_use(self) -> bool:
        """True while another process (the run or session writing the layer) holds the lock."""
        if self.holds_lock:
            return False
        fd = _lock(self.directory / LOCK_NAME, wait=False)
        if fd is None:
            return True
        os.close(fd)
        return False

    def take(self) -> None:
        """Hold the lock (for apply or discard); UsageError when a live run holds it."""
        if self.holds_lock:
            return
        fd = _lock(self.directory / LOCK_NAME, wait=False)
        if fd is None:
            raise UsageError(
                f"changeset {self.id} is in use by a run or session that is still going",
                fix="wait until it ends (or stop it), then try again",
            )
        self._lock_fd = fd

    def release(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1

    def finish(self) -> None:
        """The owner is done writing the layer: mark it finished and release the lock."""
        if self.directory.exists() and self.meta.get("state") == RUNNING:
            self.meta["state"] = FINISHED
            self.save()
        self.release()

    def remove(self) -> None:
        """Delete the changeset entirely (after apply or discard): nothing is left behind."""
        staging = self.directory.with_name(f".{self.id}.gone")
        with contextlib.suppress(FileNotFoundError):
            os.rename(self.directory, staging)
        self.release()
        remove_tree(staging)


def changesets(project: Path | None = None) -> list[Changeset]:
    """The changesets (of ``project``, when given), newest first."""
    store = store_dir()
    try:
        names = os.listdir(store)
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if name.startswith("."):
            continue
        meta = read_json_document(store / name / META_NAME)
        if meta.get("id") != name:
            continue
        if project is not None and meta.get("project") != str(project):
            continue
        found.append(Changeset(store / name, meta))
    found.sort(key=lambda c: float(c.meta.get("created", 0)), reverse=True)
    return found


def sweep_unfinished(store: Path) -> None:
    """Remove changesets a crash left half-made or half-removed (nobody holds their lock)."""
    try:
        names = os.listdir(store)
    except OSError:
        return
    for name in names:
        if not (name.startswith(".") and name.endswith((".new", ".gone"))):
            continue
        path = store / name
        fd = _lock(path / LOCK_NAME, wait=False, create=False)
        if fd is None and (path / LOCK_NAME).exists():
            continue  # still being made by a live process
        if fd is not None:
            os.close(fd)
        remove_tree(path)


def _lock(path: Path, *, wait: bool, create: bool = True) -> int | None:
    """An fd holding an exclusive flock on ``path``, or None when another process holds it.
    Close-on-exec: a jail never inherits it."""
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_tree(path: Path) -> None:
    """rmtree that also removes what the layer made unreadable (overlayfs's work dir is mode
    000; a command may chmod its directories to nothing): every directory is made
    accessible to its owner first."""
    if not os.path.lexists(path):
        return
    pending = [path]
    while pending:
        directory = pending.pop()
        with contextlib.suppress(OSError):
            os.chmod(directory, 0o700)
        try:
            with os.scandir(directory) as entries:
                pending += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    import shutil

    shutil.rmtree(path, ignore_errors=True)
