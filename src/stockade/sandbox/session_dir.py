"""The private per-session directory, and the sweep that removes what a killed run left behind.

Layout (the outer directory is never writable inside the jail)::

    stockade-session-<pid>-<starttime>-<random>/   0700, owned by the host user (0711 for
                                                    root: the jail user must reach tmp/ and
                                                    net/, which only its own jails id-map)
        tmp/          the jail's TMPDIR and cache root (a writable root)
        output/       full stdout/stderr of runs whose captured output was truncated
        guard/        one journal per running command (the post-run guard's plan)
        masked-file   an empty, unreadable file that masks files
        substitutes/  per-session copies of ~/.npmrc and the like, credentials removed

``pid`` and ``starttime`` (from /proc) identify the owning process, so a later start can tell a
live session from one whose owner died (even of SIGKILL) and remove it - after finishing the
post-run guard of any command that was still running (``stockade.sandbox.guard.recover``). A
pid reused by another process has a different start time.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

PREFIX = "stockade-session-"
PROC = "/proc"  # absent on macOS


def _process_start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (start time in clock ticks), or None if the process is gone.

    Without /proc (macOS) a live pid reads as "0", the start time its sessions are named with:
    a reused pid then keeps a stale directory until it exits, never deletes a live one."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        if os.path.isdir(f"{PROC}/self"):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass  # alive, another user's
        return "0"
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = data[data.rindex(b")") + 2 :].split()
    return fields[19].decode()


class SessionDir:
    """A fresh private directory for one session; ``close()`` removes it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / "tmp"
        self.output = root / "output"
        self._closed = False

    @classmethod
    def create(cls, base: Path | None = None) -> SessionDir:
        """Sweep stale sessions of this user, then make a new one under ``base`` (default: the
        system temp dir)."""
        parent = Path(base) if base is not None else system_temp_dir()
        sweep_stale_sessions(parent)
        pid = os.getpid()
        start = _process_start_time(pid) or "0"
        while True:  # tempfile.mkdtemp's loop, without importing tempfile on the hot path
            root = parent / f"{PREFIX}{pid}-{start}-{os.urandom(6).hex()}"
            try:
                root.mkdir(mode=0o700)
            except FileExistsError:
                continue
            if os.geteuid() == 0:  # searchable, not listable; every entry inside stays 0700
                root.chmod(0o711)
            break
        root = Path(os.path.realpath(root))
        (root / "tmp").mkdir(mode=0o700)
        return cls(root)

    def close(self) -> None:
        """Remove the whole directory. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> SessionDir:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def system_temp_dir() -> Path:
    """$TMPDIR when it is a writable directory, else /tmp (tempfile's first candidates)."""
    value = os.environ.get("TMPDIR", "")
    if value and os.path.isdir(value) and os.access(value, os.W_OK | os.X_OK):
        return Path(value)
    return Path("/tmp")


def sweep_stale_sessions(parent: Path) -> list[Path]:
    """Remove session dirs in ``parent`` owned by this user whose owning process is gone."""
    removed: list[Path] = []
    uid = os.getuid()
    try:
        entries = os.scandir(parent)
    except OSError:
        return removed
    with entries:
        for entry in entries:
            if not entry.name.startswith(PREFIX):
                continue
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid or not entry.is_dir(
                    follow_symlinks=False
                ):
                    continue
                pid_text, start, _ = entry.name[len(PREFIX) :].split("-", 2)
                pid = int(pid_text)
            except (OSError, ValueError):
                continue
            if _process_start_time(pid) == start:
                continue  # owner alive
            root = Path(entry.path)
            if (root / "guard").is_dir():
                from stockade.sandbox.guard import recover

                recover(root)
            shutil.rmtree(root, ignore_errors=True)
            removed.append(root)
    return removed
