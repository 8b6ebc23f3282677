"""File tools with guardrails: what ``read_file``/``write_file``/``edit_file``/``list_dir`` may
touch, and how they touch it without being tricked.

These run in stockade's own, unconfined process on an agent's behalf, so they must not give the
agent what its jail would refuse:

* reads and listings never reach a masked path (what the jail hides stays hidden);
* writes land only inside a writable root and never on a protected path (``.git/hooks``,
  ``.stockade/``, shell rc files, ...) - the policy's own tables decide both;
* a path is judged after ``..`` and symlinks are resolved (realpath), and then opened one
  component at a time with ``O_NOFOLLOW`` beneath its writable root, so a directory swapped for
  a symlink between the check and the write makes the write fail instead of escaping; what a
  read actually opened is checked again through ``/proc/self/fd``;
* a file is replaced atomically (temporary file + rename in the same directory), so a hard link
  to a file elsewhere is never written through.

The session decides *whether* (the gate, the read-before-write digest); this module only says
*where* and does the I/O.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from stockade.errors import PermissionDenied, UsageError
from stockade.sandbox.policy import SandboxPolicy, innermost_root, is_within
from stockade.vocabulary import (
    HOME_SECRETS,
    SECRET_DIRECTORIES,
    SECRET_FILE_EXCEPTIONS,
    SECRET_FILES,
    SECRET_PATHS,
)

# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

# Reading one of these is a secret read (tier high: it asks below auto-accept). The names come
# from the vocabulary the classifier and the sandbox use: SECRET_NAME_GLOBS against the file
# name, SECRET_DIRECTORY_NAMES against every directory above it, the SECRET_PATHS anywhere in
# the path and the HOME_SECRETS below the home directory.
SECRET_NAME_GLOBS: tuple[str, ...] = tuple(glob for entry in SECRET_FILES for glob in entry.globs)
SECRET_DIRECTORY_NAMES: frozenset[str] = frozenset(SECRET_DIRECTORIES)

MAX_READ_BYTES = 256 * 1024  # text returned by one read_file call
MAX_LIST_ENTRIES = 1000  # entries returned by one list_dir call
_CHUNK = 1024 * 1024
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class FileContent:
    """What ``read_file`` returns: the selected lines (bounded) and the whole file's digest."""

    path: str  # as shown to people: relative to the project when inside it
    real_path: Path
    content: str
    first_line: int  # 1-based number of the first line in ``content``
    lines: int  # lines in ``content``
    total_lines: int
    size: int  # bytes in the file
    truncated: bool  # more lines were selected than MAX_READ_BYTES allows
    digest: str  # sha256 of the whole file, what write/edit compare against


@dataclass(frozen=True)
class FileChange:
    """What ``write_file``/``edit_file`` did."""

    path: str
    real_path: Path
    created: bool
    size: int  # bytes in the file now
    replacements: int  # edit_file: how many occurrences were replaced (write_file: 0)
    digest: str


@dataclass(frozen=True)
class DirEntry:
    name: str
    kind: str  # file | directory | symlink | other
    size: int | None  # bytes, for files


@dataclass(frozen=True)
class DirListing:
    path: str
    real_path: Path
    entries: tuple[DirEntry, ...]
    total: int  # entries in the directory
    truncated: bool  # more than MAX_LIST_ENTRIES


@dataclass(frozen=True)
class WriteTarget:
    """A write destination judged against the policy: ``real`` is inside ``root``."""

    shown: str
    real: Path
    root: Path
    protected: bool

    @property
    def parts(self) -> tuple[str, ...]:
        """The components below the root (the last one is the file name)."""
        return self.real.relative_to(self.root).parts


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_secret(path: Path) -> bool:
    """True when ``path`` looks like key material or credentials (see the tables above)."""
    if path.name in SECRET_FILE_EXCEPTIONS:
        return False
    if any(part in SECRET_DIRECTORY_NAMES for part in path.parent.parts):
        return True
    if any(fnmatch.fnmatchcase(path.name, pattern) for pattern in SECRET_NAME_GLOBS):
        return True
    text = f"/{path.as_posix().strip('/')}/"
    if any(f"/{secret}/" in text for secret in SECRET_PATHS):
        return True
    for home in {Path.home(), Path.home().resolve()}:  # `path` is resolved, $HOME may not be
        if is_within(path, home):
            below = f"{path.relative_to(home).as_posix()}/"
            return any(below.startswith(f"{secret.path}/") for secret in HOME_SECRETS)
    return False


class PathGuard:
    """Judges paths for the file tools against one sandbox policy. Relative paths are taken
    relative to ``base`` (the project)."""

    def __init__(self, policy: SandboxPolicy, base: Path) -> None:
        self.policy = policy
        self.base = base

    def absolute(self, path: str | os.PathLike[str]) -> Path:
        text = os.fspath(path)
        if not text or "\0" in text:
            raise UsageError(f"invalid path {text!r}", fix="pass a file path")
        candidate = Path(os.path.expanduser(text))
        return candidate if candidate.is_absolute() else self.base / candidate

    def shown(self, real: Path) -> str:
        """How a path is shown in prompts and the ledger: project-relative when inside it."""
        if is_within(real, self.policy.project):
            relative = real.relative_to(self.policy.project)
            return str(relative) if relative.parts else "."
        return str(real)

    def masked_by(self, real: Path) -> Path | None:
        """The mask hiding ``real`` from the jail, if one does (and no re-allow undoes it)."""
        for mask in self.policy.masked:
            if is_within(real, mask.path) and not any(
                is_within(real, allowed) for allowed in self.policy.read_allow_within_deny
            ):
                return mask.path
        return None

    def readable(self, path: str | os.PathLike[str]) -> Path:
        """The canonical path to read; PermissionDenied when the jail could not read it."""
        real = Path(os.path.realpath(self.absolute(path)))
        self.require_visible(real, os.fspath(path))
        return real

    def require_visible(self, real: Path, asked: str) -> None:
        mask = self.masked_by(real)
        if mask is not None:
            raise PermissionDenied(
                f"{asked} is hidden from the sandbox ({mask} is masked), so the file tools "
                "cannot read it either",
                fix="read it yourself, or change the masked paths in the sandbox settings",
            )

    def writable(self, path: str | os.PathLike[str]) -> WriteTarget:
        """Where a write to ``path`` would land, with symlinks and ``..`` resolved.

        PermissionDenied when that is outside every writable root. A protected path is
        returned with ``protected=True``: the gate hard-denies it (and records that)."""
        asked = self.absolute(path)
        real = Path(os.path.realpath(asked))
        root = innermost_root(real, self.policy.writable, strictly=True)
        if root is None:
            how = " (through a symlink or '..')" if Path(os.path.normpath(asked)) != real else ""
            raise PermissionDenied(
                f"{os.fspath(path)} resolves to {real}{how}, which is outside every writable "
                f"root ({', '.join(str(r) for r in self.policy.writable)})",
                fix="write inside the project, or add a writable root in the sandbox settings",
            )
        # existing protected names and those not created yet alike (a file tool runs on the
        # host: it can refuse a new .git/hooks/x outright, no guard needed)
        protected = self.policy.with_fresh_protection().protection_of(real) is not None
        return WriteTarget(self.shown(real), real, root, protected)


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


def read_lines(
    guard: PathGuard,
    real: Path,
    *,
    offset: int = 1,
    limit: int | None = None,
    max_bytes: int = MAX_READ_BYTES,
) -> FileContent:
    """Read lines ``offset`` .. ``offset+limit-1`` (1-based) of a regular file, at most
    ``max_bytes`` of them, and the digest of the whole file."""
    if offset < 1:
        raise UsageError(f"offset must be 1 or more, got {offset}", fix="lines count from 1")
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be 1 or more, got {limit}", fix="omit it to read all")
    fd = _open_regular(real, shown=guard.shown(real))
    try:
        guard.require_visible(Path(os.readlink(f"/proc/self/fd/{fd}")), guard.shown(real))
        hasher = hashlib.sha256()
        kept = bytearray()
        size = 0
        line = 1  # number of the line the next byte belongs to
        last = None if limit is None else offset + limit - 1
        truncated = False
        ends_with_newline = True
        while chunk := os.read(fd, _CHUNK):
            hasher.update(chunk)
            size += len(chunk)
            ends_with_newline = chunk.endswith(b"\n")
            start = 0
            while start < len(chunk):
                newline = chunk.find(b"\n", start)
                end = len(chunk) if newline < 0 else newline + 1
                if line >= offset and (last is None or line <= last) and not truncated:
                    room = max_bytes - len(kept)
                    piece = chunk[start:end]
                    if len(piece) > room:
                        kept += piece[:room]
                        truncated = True
                    else:
                        kept += piece
                if newline < 0:
                    break
                line += 1
                start = end
    finally:
        os.close(fd)
    total = 0 if size == 0 else line - (1 if ends_with_newline else 0)
    text = bytes(kept).decode("utf-8", errors="replace")
    shown_lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return FileContent(
        path=guard.shown(real),
        real_path=real,
        content=text,
        first_line=offset,
        lines=shown_lines,
        total_lines=total,
        size=size,
        truncated=truncated,
        digest=hasher.hexdigest(),
    )


def _open_regular(real: Path, *, shown: str) -> int:
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except FileNotFoundError:
        raise UsageError(f"{shown} does not exist", fix="check the path (list_dir helps)") from None
    except IsADirectoryError:
        raise UsageError(f"{shown} is a directory", fix="use list_dir for directories") from None
    except OSError as error:
        raise UsageError(f"cannot open {shown}: {error.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise UsageError(f"{shown} is {kind}", fix="read_file reads regular files only")
    os.set_blocking(fd, True)
    return fd


def list_directory(guard: PathGuard, real: Path, *, limit: int = MAX_LIST_ENTRIES) -> DirListing:
    """The entries of a directory, sorted by name, at most ``limit`` of them; masked entries
    are left out (the jail sees them empty)."""
    shown = guard.shown(real)
    try:
        fd = os.open(real, _DIR_FLAGS)
    except FileNotFoundError:
        raise UsageError(f"{shown} does not exist", fix="check the path") from None
    except NotADirectoryError:
        raise UsageError(f"{shown} is not a directory", fix="use read_file for files") from None
    except OSError as error:
        raise UsageError(f"cannot list {shown}: {error.strerror}") from None
    try:
        guard.require_visible(Path(os.readlink(f"/proc/self/fd/{fd}")), shown)
        names = sorted(os.listdir(fd))
        entries = []
        for name in names[:limit]:
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            entries.append(_entry(name, info))
    finally:
        os.close(fd)
    return DirListing(
        path=shown,
        real_path=real,
        entries=tuple(entries),
        total=len(names),
        truncated=len(names) > limit,
    )


def _entry(name: str, info: os.stat_result) -> DirEntry:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return DirEntry(name, "file", info.st_size)
    if stat.S_ISDIR(mode):
        return DirEntry(name, "directory", None)
    if stat.S_ISLNK(mode):
        return DirEntry(name, "symlink", None)
    return DirEntry(name, "other", None)


# ---------------------------------------------------------------------------------------------
# Writing (beneath a writable root, never following a symlink)
# ---------------------------------------------------------------------------------------------


class Beneath:
    """The directory holding a write target, opened component by component from its writable
    root with ``O_NOFOLLOW``; use as a context manager."""

    def __init__(self, target: WriteTarget, *, create: bool) -> None:
        self.target = target
        self.name = target.parts[-1]
        self.fd = -1
        fd = os.open(target.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        for part in target.parts[:-1]:
            fd = self._descend(fd, part, create)
            if fd < 0:
                break  # a missing directory (not created): there is no file yet
        self.fd = fd

    def _descend(self, fd: int, part: str, create: bool) -> int:
        """Open directory ``part`` below ``fd`` (closing ``fd``); -1 when it is missing and
        ``create`` is False."""
        try:
            try:
                return os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return -1
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                return os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as error:  # ELOOP / ENOTDIR: a symlink or file where a directory was
            raise PermissionDenied(
                f"{self.target.shown}: {part!r} is not a plain directory ({error.strerror}); "
                "the file tools do not write through symlinks",
                fix="write to the real path",
            ) from None
        finally:
            os.close(fd)

    @property
    def exists(self) -> bool:
        return self.fd >= 0

    def read(self) -> bytes | None:
        """The current content, or None when there is no file (yet)."""
        if self.fd < 0:
            return None
        try:
            fd = os.open(self.name, _OPEN_FLAGS, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as error:
            raise UsageError(f"cannot open {self.target.shown}: {error.strerror}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UsageError(
                    f"{self.target.shown} is not a regular file", fix="write to a file path"
                )
            os.set_blocking(fd, True)
            parts = []
            while chunk := os.read(fd, _CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        finally:
            os.close(fd)

    def replace(self, data: bytes) -> None:
        """Write ``data`` to a temporary file next to the target and rename it over the
        target (keeping the target's permission bits)."""
        try:
            mode = stat.S_IMODE(os.stat(self.name, dir_fd=self.fd, follow_symlinks=False).st_mode)
        except FileNotFoundError:
            mode = None
        temporary = f".{self.name}.stockade-{os.urandom(4).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, 0o666, dir_fd=self.fd)
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.rename(temporary, self.name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self.fd)
            raise

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
