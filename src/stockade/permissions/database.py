"""SQLite plumbing shared by the rule store and the ledger: open safely, write with retries.

Both databases live in the user data dir (never in a project) and are written by many
processes at once (every ``stockade exec``, every agent session). The choices that make that
safe are here, in one place:

* WAL journal: readers never block the writer and a process killed mid-write (even SIGKILL)
  leaves the database readable - the half-written transaction is simply not in it.
* ``synchronous=NORMAL``: a commit is durable against a crashed *process*; only a power loss can
  drop the last commits (never corrupt the file). That is the right trade for a ledger written
  on every command.
* Every write is ``BEGIN IMMEDIATE`` (take the write lock up front, so a transaction never has
  to upgrade a stale read snapshot - the one case a busy timeout cannot fix) with a busy
  timeout, plus a bounded retry with jitter for the residual ``database is locked`` cases
  (journal-mode switch on a brand-new file, WAL recovery after a crash).
* Files are created 0600 in a 0700 directory: the ledger names every command a user ran.
* A file SQLite cannot read (not a database, a malformed image) is :class:`DatabaseCorrupt`,
  never a traceback. What happens next is the owner's choice: the ledger moves the file aside
  (``quarantine``) and starts a new one - the audit trail is kept, not lost; the rule store
  refuses, because silently starting without the user's deny rules would loosen.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from stockade.errors import StockadeError

BUSY_TIMEOUT_MS = 10_000
RETRY_SECONDS = 30.0  # give up (and say so) after this long of continuous contention

T = TypeVar("T")


class DatabaseError(StockadeError):
    """A stockade database could not be opened or written."""


class DatabaseCorrupt(DatabaseError):
    """SQLite cannot read the file at ``path``: it is not a database or its image is damaged."""

    def __init__(self, path: Path, error: sqlite3.Error, *, fix: str | None = None) -> None:
        super().__init__(f"{path} is unreadable ({error})", fix=fix)
        self.path = path
        self.detail = str(error)


# SQLITE_CORRUPT and SQLITE_NOTADB: the file itself is damaged (busy/locked is something else).
_CORRUPT_CODES = frozenset({11, 26})


def is_corrupt(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _CORRUPT_CODES
    text = str(error).lower()
    return "not a database" in text or "malformed" in text


def quarantine(path: Path) -> Path | None:
    """Move an unreadable database (and its -wal/-shm files) aside as
    ``<name>.corrupt-<time>``; return the new name, or None when another process already did
    (the path now holds a different file, which is left alone)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}-{os.getpid()}")
    try:
        os.rename(path, target)
    except FileNotFoundError:
        return None
    for suffix in ("-wal", "-shm"):
        with suppress(OSError):
            os.rename(f"{path}{suffix}", f"{target}{suffix}")
    return target


def _is_busy(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def retrying(operation: Callable[[], T], *, path: Path) -> T:
    """Run ``operation``, retrying on SQLITE_BUSY with jittered backoff for ``RETRY_SECONDS``."""
    deadline = time.monotonic() + RETRY_SECONDS
    delay = 0.002
    while True:
        try:
            return operation()
        except sqlite3.Error as error:
            if is_corrupt(error):
                raise DatabaseCorrupt(path, error) from None
            if not isinstance(error, sqlite3.OperationalError):
                raise DatabaseError(f"cannot use {path}: {error}") from None
            if not _is_busy(error) or time.monotonic() > deadline:
                raise DatabaseError(
                    f"cannot write {path}: {error}",
                    fix="check the file's permissions and free disk space; "
                    "if another process holds it locked, retry",
                ) from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.1)


def connect(path: Path, schema: str, version: int) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` with ``schema`` applied once.
    Raises DatabaseCorrupt when the file is not a readable database."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        connection = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
        )
    except (OSError, sqlite3.Error) as error:
        raise DatabaseError(
            f"cannot open {path}: {error}",
            fix="check that the stockade data directory is writable by you",
        ) from None

    def prepare() -> None:
        connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if connection.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
            connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        if connection.execute("PRAGMA user_version").fetchone()[0] == version:
            return
        with _immediate(connection):
            if connection.execute("PRAGMA user_version").fetchone()[0] != version:
                for statement in filter(None, (s.strip() for s in schema.split(";"))):
                    connection.execute(statement)
                connection.execute(f"PRAGMA user_version={version}")

    try:
        retrying(prepare, path=path)
    except BaseException:
        connection.close()
        raise
    return connection


@contextmanager
def _immediate(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            with suppress(sqlite3.Error):
                connection.execute("ROLLBACK")
        raise


def read(path: Path, work: Callable[[], T]) -> T:
    """Run a read, with SQLite's errors turned into DatabaseError/DatabaseCorrupt."""
    try:
        return work()
    except sqlite3.Error as error:
        if is_corrupt(error):
            raise DatabaseCorrupt(path, error) from None
        raise DatabaseError(f"cannot read {path}: {error}") from None


def write_one(
    connection: sqlite3.Connection, path: Path, sql: str, parameters: Sequence[object]
) -> sqlite3.Cursor:
    """Run one statement as its own transaction (SQLite's autocommit: as atomic as
    ``write``, in one call instead of three - the ledger writes two per command)."""
    return retrying(lambda: connection.execute(sql, parameters), path=path)


def write(connection: sqlite3.Connection, path: Path, work: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction, retried as a whole when busy."""

    def attempt() -> T:
        with _immediate(connection):
            return work(connection)

    return retrying(attempt, path=path)
