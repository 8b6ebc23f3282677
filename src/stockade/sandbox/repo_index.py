"""Where the git repositories below the writable roots are, kept current cheaply.

A command can create a repository anywhere in the project (``git init vendor/x``, a clone, a
submodule checkout), and a host git - a shell prompt in that directory, a ``git status`` in the
parent for a submodule - then runs its config and hooks. Finding every ``.git`` means visiting
every directory; a session does it once, then only re-reads directories whose ctime changed
(a directory's ctime moves whenever an entry in it is added, removed or renamed, and a command
cannot set it back). ``.git`` directories themselves are not descended into (the guard looks
inside them), nor symlinks, nor the paths in ``skip``.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Final, NamedTuple

DIRECTORY_BUDGET: Final = 200_000  # directories per refresh; beyond it the scan says so
UNTRUSTED_CTIME_NS: Final = 50_000_000  # a ctime this close to the scan may hide a change


class _Directory(NamedTuple):
    inode: int
    ctime_ns: int
    trusted: bool  # False: changed so recently that an entry may have been missed
    subdirectories: tuple[str, ...]
    git_entries: tuple[str, ...]
    listable: bool


class Scan(NamedTuple):
    git_entries: tuple[Path, ...]
    complete: bool  # False when the directory budget ran out
    directories: int
    unlistable: tuple[Path, ...] = ()  # directories this user cannot read (mode -wx)


class RepoIndex:
    """The ``.git`` entries below ``roots``; ``refresh()`` brings it up to date."""

    def __init__(self, roots: Iterable[Path], *, skip: Iterable[Path] = ()) -> None:
        self.roots = tuple(roots)
        self.skip = frozenset(str(p) for p in skip)
        self._cache: dict[str, _Directory] = {}

    def refresh(self, budget: int = DIRECTORY_BUDGET) -> Scan:
        stack = [str(root) for root in self.roots]
        seen: dict[str, _Directory] = {}
        found: list[Path] = []
        unlistable: list[Path] = []
        visited = 0
        while stack:
            directory = stack.pop()
            if directory in seen or directory in self.skip:
                continue
            visited += 1
            if visited > budget:
                self._cache = {**self._cache, **seen}
                return Scan(tuple(found), False, visited - 1, tuple(unlistable))
            entry = self._current(directory)
            if entry is None:
                continue
            seen[directory] = entry
            if not entry.listable:
                unlistable.append(Path(directory))
            found += [Path(directory, name) for name in entry.git_entries]
            stack += [os.path.join(directory, name) for name in entry.subdirectories]
        self._cache = seen
        return Scan(tuple(found), True, visited, tuple(unlistable))

    def _current(self, directory: str) -> _Directory | None:
        try:
            info = os.lstat(directory)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        cached = self._cache.get(directory)
        if (
            cached is not None
            and cached.trusted
            and (cached.inode, cached.ctime_ns) == (info.st_ino, info.st_ctime_ns)
        ):
            return cached
        subdirectories: list[str] = []
        git_entries: list[str] = []
        listable = True
        try:
            with os.scandir(directory) as entries:
                for item in entries:
                    if item.name == ".git":
                        git_entries.append(item.name)
                    elif item.is_dir(follow_symlinks=False):
                        subdirectories.append(item.name)
        except OSError:
            listable = False  # e.g. mode -wx: entries can be created but not listed
        trusted = listable and time.time_ns() - info.st_ctime_ns > UNTRUSTED_CTIME_NS
        return _Directory(
            info.st_ino,
            info.st_ctime_ns,
            trusted,
            tuple(subdirectories),
            tuple(git_entries),
            listable,
        )
