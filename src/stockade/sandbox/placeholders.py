"""Placeholders for protected paths that do not exist yet, and their safe removal.

To keep ``.git/hooks`` or ``.bashrc`` from being *created* inside a writable root, the jail
mounts an empty read-only file or directory there, and bwrap must create that mount point on
the host. The placeholder is a leftover unless removed - but removing it while another jail of
the same root still has it mounted would silently detach that jail's protection (the kernel
unmounts mounts on unlinked dentries). So placeholders are reference-counted per writable root
with flock(2):

* every run holds a shared lock on each of its writable roots for its whole duration, and
  records the placeholders it creates in that root's list (append-only, one line each);
* when a run ends it tries to upgrade to an exclusive lock without waiting; only the last user
  of a root gets it, and removes every recorded placeholder that is still empty;
* a run killed with SIGKILL releases its locks with its fds, so the next start sweeps.

The registry lives in the user's cache dir, never in the project; that dir is read-only inside
every jail, and each line carries a MAC (``userdirs.mac``): a line that does not verify is
never acted on, so a forged list cannot make a later start delete anything.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from stockade.sandbox.policy import SandboxPolicy, innermost_root
from stockade.sandbox.session_dir import system_temp_dir
from stockade.userdirs import cache_dir, mac, verify

_LINE_PURPOSE = "placeholder-list"


def registry_dir() -> Path:
    """The per-user lock/list directory (falls back to a private temp dir if the cache dir is
    not writable, e.g. a read-only home in CI)."""
    for candidate in (
        cache_dir() / "placeholders",
        system_temp_dir() / f"stockade-placeholders-{os.getuid()}",
    ):
        try:
            candidate.mkdir(parents=True, exist_ok=True, mode=0o700)
            if os.access(candidate, os.W_OK):
                return candidate
        except OSError:
            continue
    raise OSError("no writable directory for the placeholder registry")


def _key(root: Path) -> str:
    """A file name for a root's lock and list. A collision only makes two roots share a lock
    (more conservative, still correct), so a cheap checksum is enough."""
    raw = os.fsencode(root)
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"


class PlaceholderLease:
    """Shared locks on a set of writable roots for the duration of one run."""

    def __init__(self, roots: Iterable[Path]) -> None:
        self._registry = registry_dir()
        self._locks: dict[Path, int] = {}
        try:
            for root in sorted(set(roots)):
                fd = os.open(
                    self._registry / f"{_key(root)}.lock",
                    os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                    0o600,
                )
                fcntl.flock(fd, fcntl.LOCK_SH)
                self._locks[root] = fd
        except BaseException:
            self.release()
            raise

    def record(self, placeholders: Iterable[tuple[Path, bool]]) -> None:
        """Note placeholders about to be created, under the root that contains each."""
        lines: dict[Path, list[str]] = {}
        for path, is_dir in placeholders:
            root = innermost_root(path, self._locks)
            if root is not None:
                entry = f"{'d' if is_dir else 'f'} {path}"
                tag = mac(_LINE_PURPOSE, entry.encode()).hex()
                lines.setdefault(root, []).append(f"{tag} {entry}\n")
        for root, entries in lines.items():
            fd = os.open(
                self._registry / f"{_key(root)}.list",
                os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC,
                0o600,
            )
            try:
                for entry in entries:
                    os.write(fd, entry.encode())
            finally:
                os.close(fd)

    def release(self) -> None:
        """Drop the locks; the last holder of a root removes that root's placeholders."""
        locks, self._locks = self._locks, {}
        for root, fd in locks.items():
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                pass  # another run still uses this root; it cleans up when it ends
            else:
                _remove_listed(self._registry / f"{_key(root)}.list")
            finally:
                os.close(fd)

    def __enter__(self) -> PlaceholderLease:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


@contextmanager
def protection_for_run(policy: SandboxPolicy) -> Iterator[SandboxPolicy]:
    """Hold the placeholder lease for a run and yield the policy with its protected paths
    re-checked under that lease (what exists now, what needs a placeholder)."""
    with PlaceholderLease(policy.guarded_roots) as lease:
        fresh = policy.with_fresh_protection()
        lease.record(fresh.placeholders)
        yield fresh


def sweep_placeholders() -> int:
    """Remove placeholders left by runs that died; returns how many lists were cleaned."""
    try:
        registry = registry_dir()
    except OSError:
        return 0
    cleaned = 0
    for listing in registry.glob("*.list"):
        lock = listing.with_suffix(".lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        try:
            _remove_listed(listing)
            cleaned += 1
        finally:
            os.close(fd)
    return cleaned


def _remove_listed(listing: Path) -> None:
    try:
        lines = listing.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return
    for line in sorted(set(lines), key=len, reverse=True):  # children before parents
        tag, _, entry = line.partition(" ")
        try:
            genuine = verify(_LINE_PURPOSE, bytes.fromhex(tag), entry.encode())
        except ValueError:
            genuine = False
        if not genuine:
            continue  # not written by us: never act on it
        kind, _, raw = entry.partition(" ")
        _remove_if_empty(Path(raw), want_dir=kind == "d")
    with contextlib.suppress(FileNotFoundError):
        listing.unlink()


def _remove_if_empty(path: Path, *, want_dir: bool) -> None:
    """Delete ``path`` only if it is still what a placeholder is: an empty file or directory."""
    try:
        info = path.lstat()
    except OSError:
        return
    with contextlib.suppress(OSError):
        if want_dir and stat.S_ISDIR(info.st_mode):
            path.rmdir()  # fails, and the directory is kept, if anything was put inside
        elif not want_dir and stat.S_ISREG(info.st_mode) and info.st_size == 0:
            path.unlink()
