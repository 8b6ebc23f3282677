"""Reading a review layer: what the upper dir of an overlay says changed in the project.

The layer is mounted with the options of ``sandbox/overlay.py`` (user xattrs, no redirects, no
metacopy), so the upper dir is a plain tree with three kinds of marks:

* a **whiteout** - a character device 0:0, or (Linux 6.7+) an empty file carrying
  ``user.overlay.whiteout`` - hides the project's entry of that name: a deletion;
* an **opaque** directory (``user.overlay.opaque = y``) replaces the project's directory of
  that name: every entry of the project's one that it does not hold is deleted;
* anything else is the new content: a file, symlink or directory the project does not have is
  added; one it has is modified when its content, target, type or permission bits differ (a
  file copied up and left unchanged is no change).

A rename is a deletion plus an addition (directories are copied: ``redirect_dir=nofollow``).
Paths are relative to the project, ``/``-separated.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Final, NamedTuple

ADDED: Final = "added"
MODIFIED: Final = "modified"
DELETED: Final = "deleted"

WHITEOUT_XATTR: Final = "user.overlay.whiteout"
OPAQUE_XATTR: Final = "user.overlay.opaque"
COMPARE_CHUNK: Final = 1 << 20


class Change(NamedTuple):
    """One change to the project: ``kind`` is added, modified or deleted; ``size`` the bytes of
    the new file (of the removed one for a deletion; 0 for directories); ``type`` file,
    directory, symlink or special; ``refused`` why apply will not apply it, if it will not."""

    path: str
    kind: str
    size: int
    type: str = "file"
    refused: str | None = None


class Entry(NamedTuple):
    """A change with what apply needs: the upper entry holding the new content (None for a
    deletion), the symlink target, and the opaque directory the change belongs to (the
    nearest ancestor that replaced the project's directory as a whole, or None)."""

    change: Change
    upper: Path | None
    target: str | None = None
    replaced_dir: str | None = None


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISLNK(mode):
        return "symlink"
    return "special"


def is_whiteout(path: Path, info: os.stat_result) -> bool:
    if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
        return True
    return stat.S_ISREG(info.st_mode) and info.st_size == 0 and _has_xattr(path, WHITEOUT_XATTR)


def is_opaque(path: Path) -> bool:
    try:
        return os.getxattr(path, OPAQUE_XATTR, follow_symlinks=False) == b"y"
    except OSError:
        return False


def _has_xattr(path: Path, name: str) -> bool:
    try:
        os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return False
    return True


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def same_content(first: Path, second: Path) -> bool:
    """Byte-for-byte equality, streamed (files of any size)."""
    with open(first, "rb", buffering=0) as one, open(second, "rb", buffering=0) as two:
        while True:
            a, b = one.read(COMPARE_CHUNK), two.read(COMPARE_CHUNK)
            if a != b:
                return False
            if not a:
                return True


def scan(upper: Path, project: Path, *, ignore: Collection[str] = ()) -> list[Entry]:
    """Every change the layer holds, sorted by path. ``ignore``: paths whose upper entry is
    stockade's own mount point (an empty file or directory bwrap made for a protected path that
    did not exist) and is still empty."""
    walker = _Walker(frozenset(ignore))
    walker.walk(upper, project, "", None)
    walker.found.sort(key=lambda entry: entry.change.path)
    return walker.found


class _Pair(NamedTuple):
    """One name in the upper dir and what the project has under it (``below`` None: none)."""

    rel: str
    upper: Path
    info: os.stat_result
    lower: Path | None
    below: os.stat_result | None


class _Walker:
    """Walks the upper dir beside the project's tree, collecting entries."""

    def __init__(self, ignore: frozenset[str]) -> None:
        self.ignore = ignore
        self.found: list[Entry] = []

    def walk(
        self, upper_dir: Path, lower_dir: Path | None, prefix: str, replaced: str | None
    ) -> None:
        """``replaced``: the directory (relative) that replaced the project's as a whole and
        holds this one, if any."""
        try:
            names = sorted(os.listdir(upper_dir))
        except OSError:
            return
        if replaced is not None and lower_dir is not None:
            # inside a directory that replaced the project's: what the upper lacks is gone
            for name in sorted(set(_listdir(lower_dir)) - set(names)):
                gone = _lstat(lower_dir / name)
                if gone is not None:
                    self.found.append(_deletion(f"{prefix}{name}", gone, replaced))
        for name in names:
            upper = upper_dir / name
            info = _lstat(upper)
            if info is None:
                continue
            lower = lower_dir / name if lower_dir is not None else None
            below = _lstat(lower) if lower is not None else None
            pair = _Pair(f"{prefix}{name}", upper, info, lower, below)
            if is_whiteout(upper, info):
                if below is not None:
                    self.found.append(_deletion(pair.rel, below, replaced))
            elif pair.rel in self.ignore and below is None and _empty(upper, info):
                continue
            elif stat.S_ISDIR(info.st_mode):
                self._directory(pair, replaced)
            else:
                self._leaf(pair, replaced)

    def _directory(self, pair: _Pair, replaced: str | None) -> None:
        rel, upper, below = pair.rel, pair.upper, pair.below
        if below is None or not stat.S_ISDIR(below.st_mode):
            if below is not None:  # a file or symlink became a directory
                self.found.append(_deletion(rel, below, replaced))
            self.found.append(
                Entry(Change(rel, ADDED, 0, "directory"), upper, replaced_dir=replaced)
            )
            self.walk(upper, None, rel + "/", replaced)
            return
        if stat.S_IMODE(pair.info.st_mode) != stat.S_IMODE(below.st_mode):
            self.found.append(
                Entry(Change(rel, MODIFIED, 0, "directory"), upper, replaced_dir=replaced)
            )
        if replaced is None and is_opaque(upper):  # replaced as a whole (rm -rf dir; mkdir dir)
            replaced = rel
        self.walk(upper, pair.lower, rel + "/", replaced)

    def _leaf(self, pair: _Pair, replaced: str | None) -> None:
        rel, upper, info, below = pair.rel, pair.upper, pair.info, pair.below
        kind = kind_of(info.st_mode)
        target = os.readlink(upper) if kind == "symlink" else None
        size = info.st_size if kind == "file" else 0
        added = Entry(Change(rel, ADDED, size, kind), upper, target, replaced)
        if below is None:
            self.found.append(added)
        elif stat.S_ISDIR(below.st_mode):  # a directory became a file or symlink
            self.found += [_deletion(rel, below, replaced), added]
        elif pair.lower is not None and _differs(upper, info, pair.lower, below):
            self.found.append(Entry(Change(rel, MODIFIED, size, kind), upper, target, replaced))


def _differs(upper: Path, info: os.stat_result, lower: Path, below: os.stat_result) -> bool:
    if stat.S_IFMT(info.st_mode) != stat.S_IFMT(below.st_mode):
        return True
    if stat.S_IMODE(info.st_mode) != stat.S_IMODE(below.st_mode):
        return True
    if stat.S_ISLNK(info.st_mode):
        return os.readlink(upper) != os.readlink(lower)
    if stat.S_ISREG(info.st_mode):
        return info.st_size != below.st_size or not same_content(upper, lower)
    return True  # special files: recorded, never applied


def _deletion(rel: str, below: os.stat_result, replaced: str | None) -> Entry:
    kind = kind_of(below.st_mode)
    size = below.st_size if kind == "file" else 0
    return Entry(Change(rel, DELETED, size, kind), None, replaced_dir=replaced)


def _listdir(path: Path) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _empty(path: Path, info: os.stat_result) -> bool:
    if stat.S_ISDIR(info.st_mode):
        try:
            return not os.listdir(path)
        except OSError:
            return False
    return stat.S_ISREG(info.st_mode) and info.st_size == 0


def tree_size(path: Path) -> int:
    """Bytes in the regular files below ``path`` (symlinks not followed)."""
    total = 0
    for directory, _dirs, files in os.walk(path):
        for name in files:
            info = _lstat(Path(directory) / name)
            if info is not None and stat.S_ISREG(info.st_mode):
                total += info.st_size
    return total


def with_tree_sizes(found: list[Entry], project: Path) -> list[Entry]:
    """``found`` with each deleted directory's size: the bytes of the files it held (walked
    only for showing; recording does not need it)."""
    return [
        entry._replace(change=entry.change._replace(size=tree_size(project / entry.change.path)))
        if entry.change.kind == DELETED and entry.change.type == "directory"
        else entry
        for entry in found
    ]


def merged_lookup(upper: Path, project: Path, rel: str) -> os.stat_result | None:
    """What the layer shows at ``rel`` (lstat of the entry that wins), or None when the merged
    view has nothing there. Symlinks along the way are not followed (None below one)."""
    upper_dir: Path | None = upper
    lower_dir: Path | None = project
    found: os.stat_result | None = None
    for name in _parts(rel):
        if found is not None and not stat.S_ISDIR(found.st_mode):
            return None
        over = upper_dir / name if upper_dir is not None else None
        over_info = _lstat(over) if over is not None else None
        under = lower_dir / name if lower_dir is not None else None
        if over is not None and over_info is not None:
            if is_whiteout(over, over_info):
                return None
            found = over_info
            opaque = stat.S_ISDIR(over_info.st_mode) and is_opaque(over)
            under_info = None if opaque or under is None else _lstat(under)
            upper_dir = over if stat.S_ISDIR(over_info.st_mode) else None
            keep_lower = under_info is not None and stat.S_ISDIR(under_info.st_mode)
            lower_dir = under if keep_lower else None
            continue
        found = _lstat(under) if under is not None else None
        if found is None:
            return None
        upper_dir = None
        lower_dir = under if stat.S_ISDIR(found.st_mode) else None
    return found


def _parts(rel: str) -> Iterator[str]:
    return (part for part in rel.split("/") if part and part != ".")
