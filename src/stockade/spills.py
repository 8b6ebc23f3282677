"""Spill files: where the full output of a run goes when its captured output is truncated.

They are written by the launcher - root, for a root launcher - so a name a jail could predict,
or a directory it could write, would let it plant a symlink and make a later run overwrite any
file the launcher can write. So every spill goes into a **fresh private directory** (0700,
created for one Sandbox or one-shot run, opened without following symlinks), every file is
created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to that directory's fd, and each file is
**capped** (``Limits.output_spill_bytes``): past the cap the rest is dropped and the result says
so. The base directories (the session's private dir, or ``<cache dir>/output``) are never
writable inside a jail.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Final

_DIRECTORY_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class SpillDir:
    """A fresh private directory below ``base``, made on first use; ``open`` creates a file in
    it that did not exist before."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.path: Path | None = None
        self._fd: int | None = None

    def directory(self) -> Path:
        """The directory's path (created now if needed), for files opened by name later."""
        self._directory()
        assert self.path is not None
        return self.path

    def open(self, name: str, cap: int | None) -> SpillFile:
        if "/" in name or name in ("", ".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        fd = os.open(name, _FILE_FLAGS, 0o600, dir_fd=self._directory())
        assert self.path is not None
        return SpillFile(fd, self.path / name, cap)

    def _directory(self) -> int:
        if self._fd is None:
            self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
            base_fd = os.open(self.base, _DIRECTORY_FLAGS)
            try:
                info = os.fstat(base_fd)
                if info.st_uid != os.geteuid() or info.st_mode & 0o022:
                    raise PermissionError(f"{self.base} is not private to this user")
                while True:
                    name = f"spill-{os.urandom(6).hex()}"
                    try:
                        os.mkdir(name, 0o700, dir_fd=base_fd)
                        break
                    except FileExistsError:
                        continue
                self._fd = os.open(name, _DIRECTORY_FLAGS, dir_fd=base_fd)
            finally:
                os.close(base_fd)
            self.path = self.base / name
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def create_private_file(path: Path) -> int:
    """A new file at ``path`` (in a directory made by :class:`SpillDir`), never an existing
    one, never through a symlink."""
    return os.open(path, _FILE_FLAGS, 0o600)


class SpillFile:
    """One spill file, written up to ``cap`` bytes (None: no cap)."""

    def __init__(self, fd: int, path: Path, cap: int | None) -> None:
        self.path = path
        self.cap = cap
        self.written = 0
        self.dropped = 0
        self._fd: int | None = fd
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # pragma: no cover - O_EXCL made it
            raise OSError(f"{path} is not a regular file")

    def write(self, data: bytes) -> None:
        if self._fd is None:
            return
        room = len(data) if self.cap is None else max(0, self.cap - self.written)
        keep = data[:room]
        self.dropped += len(data) - len(keep)
        view = memoryview(keep)
        while view:
            count = os.write(self._fd, view)
            view = view[count:]
            self.written += count

    @property
    def capped(self) -> bool:
        return self.dropped > 0

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def human_size(size: int) -> str:
    """64 KiB, 64 MiB: the cap as a result states it."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} bytes"
