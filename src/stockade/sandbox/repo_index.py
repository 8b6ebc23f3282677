"""Where the git repositories below the writable roots are, kept current cheaply.

A command can create a repository anywhere in the project (``git init vendor/x``, a clone, a
submodule checkout), and a host git - a shell prompt in that directory, a ``git status`` in the
parent for a submodule - then runs its config and hooks. Finding every ``.git`` means visiting
every directory. A session does that once (on a thread, while its first command runs); when a
second command starts it also watches every directory with inotify (a one-shot run never pays
for watches), and from then on a ``refresh`` re-reads only the directories the kernel
reported. Where a watch is refused (the user's watch limit) or events were lost, it
falls back to comparing each directory's ctime, which moves whenever an entry in it is added,
removed or renamed and which a command cannot set back.
``.git`` directories themselves are not descended into (the guard looks inside them), nor
symlinks, nor the paths in ``skip``.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from stockade.sandbox.inotify import Watcher

DIRECTORY_BUDGET: Final = 500_000  # directories per scan; beyond it the scan says so
UNTRUSTED_CTIME_NS: Final = 50_000_000  # a ctime this close to the scan may hide a change


class _Directory(NamedTuple):
    inode: int
    ctime_ns: int
    trusted: bool  # False: changed so recently that an entry may have been missed
    children: tuple[str, ...]  # full paths of the subdirectories
    git_entries: tuple[str, ...]  # full paths of the .git entries in it
    listable: bool
    watched: bool  # inotify reports every later change of its entries


class Scan(NamedTuple):
    git_entries: tuple[Path, ...]
    complete: bool  # False when the directory budget ran out
    directories: int
    unlistable: tuple[Path, ...] = ()  # directories this user cannot read (mode -wx)


class RepoIndex:
    """The ``.git`` entries below ``roots``. ``refresh()`` brings it up to date; ``start()``
    does the first full scan on a thread (it may overlap a command: whatever the command
    changes afterwards has a newer ctime and is read again by the next ``refresh``)."""

    def __init__(self, roots: Iterable[Path], *, skip: Iterable[Path] = ()) -> None:
        self.roots = tuple(roots)
        self.skip = frozenset(str(p) for p in skip)
        self._cache: dict[str, _Directory] = {}
        self._lock = threading.Lock()
        self._builder: threading.Thread | None = None
        self._watcher: Watcher | None = None  # made by the second command (one-shots: never)
        self._watching = False
        self._no_inotify = False

    def close(self) -> None:
        builder = self._builder
        if builder is not None:
            builder.join()
        with self._lock:
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None

    def start(self) -> None:
        """Called as each command starts: the first time, begin the full scan in the
        background; the second time, begin watching what the scan found."""
        with self._lock:
            if self._builder is not None or self._watching or self._no_inotify:
                return
            if self._cache and self._watcher is None:
                try:
                    from stockade.sandbox.inotify import Watcher

                    self._watcher = Watcher()
                except OSError:
                    self._no_inotify = True  # ctimes only
                    return
            work = self._watch_all if self._cache else self.refresh
            builder = threading.Thread(target=work, name="stockade-repo-index", daemon=True)
            builder.start()  # published once started: another thread may join it at once
            self._builder = builder

    @property
    def ready(self) -> bool:
        """Watching, with no scan running: a refresh costs what changed (safe to poll)."""
        return self._watching and not self.busy

    def _watch_all(self) -> None:
        """Watch every known directory; one that changed since it was read is read again by
        the next refresh (a watch only reports what happens after it was added)."""
        with self._lock:
            watcher = self._watcher
            if watcher is None:
                return
            for directory, entry in list(self._cache.items()):
                if not watcher.watch(directory):
                    continue
                try:
                    info = os.lstat(directory)
                except OSError:
                    continue
                same = (entry.inode, entry.ctime_ns) == (info.st_ino, info.st_ctime_ns)
                self._cache[directory] = entry._replace(watched=same and entry.trusted)
            self._watching = True

    def refresh(self, budget: int = DIRECTORY_BUDGET) -> Scan:
        builder = self._builder
        if builder is not None and builder is not threading.current_thread():
            builder.join()
            self._builder = None
        with self._lock:
            return self._refresh(budget)

    @property
    def busy(self) -> bool:
        builder = self._builder
        return builder is not None and builder.is_alive()

    def _refresh(self, budget: int) -> Scan:
        cache = self._cache
        skip = self.skip
        now = time.time_ns()
        watcher = self._watcher if self._watching else None
        changed = watcher.changed() if watcher is not None else None
        stack = [str(root) for root in self.roots]
        seen: dict[str, _Directory] = {}
        found: list[Path] = []
        unlistable: list[Path] = []
        lstat = os.lstat
        while stack:
            directory = stack.pop()
            if directory in seen or directory in skip:
                continue
            if len(seen) >= budget:
                self._cache = {**cache, **seen}
                return Scan(tuple(found), False, len(seen), tuple(unlistable))
            cached = cache.get(directory)
            if cached is None or changed is None or not cached.watched or directory in changed:
                try:
                    info = lstat(directory)
                except OSError:
                    continue
                if (
                    cached is None
                    or not (cached.trusted or cached.watched)
                    or cached.ctime_ns != info.st_ctime_ns
                    or cached.inode != info.st_ino
                    or (changed is not None and directory in changed)
                ):
                    if not stat.S_ISDIR(info.st_mode):
                        continue
                    cached = _read(directory, info, now, watcher)
            seen[directory] = cached
            if not cached.listable:
                unlistable.append(Path(directory))
            if cached.git_entries:
                found += [Path(entry) for entry in cached.git_entries]
            stack += cached.children
        self._cache = seen
        return Scan(tuple(found), True, len(seen), tuple(unlistable))


def _read(directory: str, info: os.stat_result, now: int, watcher: Watcher | None) -> _Directory:
    children: list[str] = []
    git_entries: list[str] = []
    listable = True
    prefix = directory.rstrip("/") + "/"
    watched = watcher is not None and watcher.watch(directory)  # before reading: no gap
    try:
        with os.scandir(directory) as entries:
            for item in entries:
                if item.name == ".git":
                    git_entries.append(prefix + ".git")
                elif item.is_dir(follow_symlinks=False):
                    children.append(prefix + item.name)
    except OSError:
        listable = False  # e.g. mode -wx: entries can be created but not listed
    trusted = listable and now - info.st_ctime_ns > UNTRUSTED_CTIME_NS
    return _Directory(
        info.st_ino,
        info.st_ctime_ns,
        trusted,
        tuple(children),
        tuple(git_entries),
        listable,
        watched,
    )
