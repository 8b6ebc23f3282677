"""Applying a changeset to the project, carefully.

The changes were written by a confined command; applying them is stockade writing into the
project with the operator's rights, so it must not be steered by what it writes or by what
changed in the project since:

* every path is opened one component at a time below an fd of the project directory, with
  ``O_NOFOLLOW``: a symlink planted in the project (or in the changeset) makes that path fail,
  it is never followed, and nothing is ever written outside the project;
* a file is replaced atomically: its content is streamed into a new file in the same
  directory (holes kept, never read into memory whole), which then takes the file's name;
* symlinks are created as links (their targets are data, never followed); set-user-ID and
  set-group-ID bits are never applied;
* before anything is written, every chosen change is checked against what the project held
  when the change was made (``records.py``); any conflict refuses the whole apply, with the
  list; changes to protected paths and special files are refused, never applied.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from stockade.errors import StockadeError, UsageError
from stockade.review import records
from stockade.review.scan import ADDED, DELETED, Change, Entry

COPY_CHUNK: Final = 1 << 20
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
NEVER_APPLIED_BITS: Final = stat.S_ISUID | stat.S_ISGID


class ApplyConflict(StockadeError):
    """The project changed under some paths since the run: nothing was applied. Exit code 1."""

    exit_code = 1

    def __init__(self, conflicts: Sequence[tuple[str, str]], changeset_id: str) -> None:
        listing = "; ".join(f"{path}: {why}" for path, why in conflicts)
        super().__init__(
            f"not applied - the project changed under {len(conflicts)} path"
            f"{'s' if len(conflicts) != 1 else ''} since the run: {listing}",
            fix=f"review them (stockade changes show {changeset_id} --diff), apply the other "
            "paths by name, or discard the changeset",
        )
        self.conflicts = tuple(conflicts)


class ApplyFailed(StockadeError):
    """Writing a change failed part-way (a planted symlink, a full disk). Exit code 1."""

    exit_code = 1


class ApplyResult(NamedTuple):
    """What an apply did: the changes now in the project, and those it refused (with why)."""

    applied: tuple[Change, ...]
    refused: tuple[Change, ...]


def select(entries: Sequence[Entry], paths: Iterable[str] | None) -> list[Entry]:
    """The entries ``paths`` name (a path selects itself and everything below it), plus the
    new directories above them, which must exist first (and the deletion a new directory
    replaces). UsageError for a path that selects nothing."""
    if paths is None:
        return list(entries)
    chosen: set[int] = set()
    for path in (p.strip("/") for p in paths):
        matches = {i for i, e in enumerate(entries) if _within(e.change.path, path)}
        if not matches:
            raise UsageError(
                f"the changeset has no change at {path or '.'}",
                fix="`stockade changes show ID` lists the changed paths",
            )
        chosen |= matches
    needed = {ancestor for i in chosen for ancestor in _ancestors(entries[i].change.path)}
    new_directories = {
        e.change.path for e in entries if e.change.kind == ADDED and e.change.type == "directory"
    }
    for index, entry in enumerate(entries):
        if entry.change.path in needed and entry.change.path in new_directories:
            chosen.add(index)
    return [entries[i] for i in sorted(chosen)]


def _within(path: str, root: str) -> bool:
    return not root or path == root or path.startswith(root + "/")


def _ancestors(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:index]) for index in range(1, len(parts))]


def check(
    project: Path, entries: Sequence[Entry], known: Mapping[str, records.Record]
) -> list[tuple[str, str]]:
    """Every chosen change whose path the project changed since the change was made."""
    found = []
    for entry in entries:
        change = entry.change
        whole_tree = change.kind == DELETED and change.type == "directory"
        record = known.get(change.path)
        reason = records.conflict(record, project / change.path, whole_tree=whole_tree)
        if change.kind == ADDED and reason is not None and _replaces_deleted(entry, entries):
            reason = None  # the deletion at the same path carries the check
        if reason is not None:
            found.append((change.path, reason))
    return found


def _replaces_deleted(entry: Entry, entries: Sequence[Entry]) -> bool:
    return any(e.change.kind == DELETED and e.change.path == entry.change.path for e in entries)


def apply_entries(
    project: Path,
    identity: Sequence[int],
    entries: Sequence[Entry],
    *,
    owner: tuple[int, int] | None = None,
) -> list[Entry]:
    """Write ``entries`` (already checked and without refused ones) into ``project``:
    deletions deepest first, then everything else parents first. ``identity`` is the project
    directory's (st_dev, st_ino) when the run started. ``owner``: as root, who new entries
    belong to (the project's owner); replaced files keep their owner."""
    root = _open_project(project, identity)
    writer = _Writer(root, owner)
    deletions = [e for e in entries if e.change.kind == DELETED]
    deletions.sort(key=lambda e: e.change.path.count("/"), reverse=True)
    others = sorted((e for e in entries if e.change.kind != DELETED), key=lambda e: e.change.path)
    done: list[Entry] = []
    current = ""
    try:
        for entry in (*deletions, *others):
            current = entry.change.path
            if entry.change.kind == DELETED:
                writer.delete(current)
            else:
                writer.write(entry)
            done.append(entry)
    except OSError as error:
        applied = len(done)
        raise ApplyFailed(
            f"applying stopped at {current}: {error.strerror or error} "
            f"({applied} change{'s' if applied != 1 else ''} applied before it)",
            fix="check that path in the project (a symlink or a file where a directory was "
            "expected is never followed), then apply the rest again",
        ) from None
    finally:
        writer.close()
    return done


def _open_project(project: Path, identity: Sequence[int]) -> int:
    try:
        fd = os.open(project, _DIR_FLAGS)
    except OSError as error:
        raise ApplyFailed(
            f"cannot open the project {project}: {error.strerror}",
            fix="check the project directory (a symlink in its place is never followed)",
        ) from None
    info = os.fstat(fd)
    if list(identity) and [info.st_dev, info.st_ino] != list(identity):
        os.close(fd)
        raise ApplyFailed(
            f"{project} is not the directory the changeset was made from (it was replaced "
            "since the run)",
            fix="discard the changeset, or restore the project directory",
        )
    return fd


class _Writer:
    """The writes of one apply, each below the project fd and never through a symlink."""

    def __init__(self, root: int, owner: tuple[int, int] | None) -> None:
        self._root = root
        self._owner = owner
        self._directories: dict[str, int] = {"": root}

    def close(self) -> None:
        for fd in self._directories.values():
            os.close(fd)
        self._directories = {}

    def _directory(self, rel: str) -> int:
        """An fd of directory ``rel`` of the project, walked with O_NOFOLLOW."""
        if rel in self._directories:
            return self._directories[rel]
        parent, _, name = rel.rpartition("/")
        fd = os.open(name, _DIR_FLAGS, dir_fd=self._directory(parent))
        self._directories[rel] = fd
        return fd

    def _forget(self, rel: str) -> None:
        for key in [k for k in self._directories if k and _within(k, rel)]:
            os.close(self._directories.pop(key))

    def delete(self, rel: str) -> None:
        parent, _, name = rel.rpartition("/")
        directory = self._directory(parent)
        try:
            info = os.lstat(name, dir_fd=directory)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            self._forget(rel)
            import shutil  # only deletions of directories need it

            shutil.rmtree(name, dir_fd=directory)  # fd-based: never leaves the directory
        else:
            os.unlink(name, dir_fd=directory)

    def write(self, entry: Entry) -> None:
        change = entry.change
        parent, _, name = change.path.rpartition("/")
        directory = self._directory(parent)
        if change.type == "directory":
            self._make_directory(directory, name, entry)
        elif change.type == "symlink":
            assert entry.target is not None
            temporary = _temporary_name(name)
            os.symlink(entry.target, temporary, dir_fd=directory)
            try:
                if self._owner is not None:
                    os.chown(temporary, *self._owner, dir_fd=directory, follow_symlinks=False)
                os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                _unlink_quietly(temporary, directory)
                raise
        else:
            assert entry.upper is not None
            self._replace_file(directory, name, entry.upper)

    def _make_directory(self, parent: int, name: str, entry: Entry) -> None:
        assert entry.upper is not None
        mode = stat.S_IMODE(os.lstat(entry.upper).st_mode) & ~NEVER_APPLIED_BITS
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
            created = True
        except FileExistsError:
            created = False
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        try:
            if created and self._owner is not None:
                os.fchown(fd, *self._owner)
            os.fchmod(fd, mode)
        finally:
            os.close(fd)

    def _replace_file(self, directory: int, name: str, upper: Path) -> None:
        source = os.open(upper, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            info = os.fstat(source)
            owner = self._owner
            if owner is not None:
                try:  # a replaced file keeps its owner
                    old = os.lstat(name, dir_fd=directory)
                    owner = (old.st_uid, old.st_gid)
                except FileNotFoundError:
                    pass
            temporary = _temporary_name(name)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            target = os.open(temporary, flags, 0o600, dir_fd=directory)
            try:
                try:
                    copy_data(source, target, info.st_size)
                    if owner is not None:
                        os.fchown(target, *owner)
                    os.fchmod(target, stat.S_IMODE(info.st_mode) & ~NEVER_APPLIED_BITS)
                    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
                finally:
                    os.close(target)
                os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
            except BaseException:
                _unlink_quietly(temporary, directory)
                raise
        finally:
            os.close(source)


def _temporary_name(name: str) -> str:
    return f".{name[:200]}.stockade-{os.urandom(4).hex()}"


def _unlink_quietly(name: str, directory: int) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=directory)


def copy_data(source: int, target: int, size: int) -> None:
    """Copy ``size`` bytes, keeping holes (SEEK_DATA/SEEK_HOLE): a sparse 4 GiB file stays
    sparse and is never held in memory."""
    offset = 0
    while offset < size:
        try:
            data = os.lseek(source, offset, os.SEEK_DATA)
        except OSError as error:
            if error.errno == errno.ENXIO:  # only a hole remains
                break
            data = offset  # no SEEK_DATA here: copy everything
        try:
            end = os.lseek(source, data, os.SEEK_HOLE)
        except OSError:
            end = size
        _copy_range(source, target, data, min(end, size))
        offset = end
    os.ftruncate(target, size)


def _copy_range(source: int, target: int, start: int, end: int) -> None:
    position = start
    while position < end:
        count = min(end - position, 1 << 30)
        try:
            copied = os.copy_file_range(source, target, count, position, position)
        except OSError as error:
            if error.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                raise
            copied = _copy_plainly(source, target, position, min(end, position + count))
        if copied == 0:
            break
        position += copied


def _copy_plainly(source: int, target: int, start: int, end: int) -> int:
    position = start
    while position < end:
        chunk = os.pread(source, min(COPY_CHUNK, end - position), position)
        if not chunk:
            break
        written = 0
        while written < len(chunk):
            written += os.pwrite(target, chunk[written:], position + written)
        position += len(chunk)
    return position - start
