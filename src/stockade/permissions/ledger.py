"""The ledger: every decision - allowed, denied, prompted (and the answer), bypassed - in SQLite.

One row per decision, written *before* the command runs (so a run that is killed is still on
record) and completed with the exit code afterwards. The database is WAL-journalled in the user
data dir (see :mod:`stockade.permissions.database` for why it survives many concurrent writers
and a SIGKILL mid-write). This module imports only the standard library, and ``sqlite3`` only
when a ledger is first opened, so the operator path (``stockade run``) stays fast.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable

T = TypeVar("T")

LEDGER_DB = "ledger.db"

# decision column values
ALLOWED = "allowed"
DENIED = "denied"
BYPASSED = "bypassed"  # the operator path: no gate, the person typing is the authority
DECISIONS = (ALLOWED, DENIED, BYPASSED)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time REAL NOT NULL,
    session TEXT NOT NULL,
    project TEXT NOT NULL,
    action TEXT NOT NULL,
    kind TEXT NOT NULL,
    tier TEXT,
    effects TEXT NOT NULL,
    source TEXT NOT NULL,
    autonomy TEXT,
    posture TEXT,
    decision TEXT NOT NULL,
    answer TEXT,
    reason TEXT NOT NULL,
    pid INTEGER NOT NULL,
    exit_code INTEGER,
    duration REAL
);
CREATE INDEX IF NOT EXISTS decisions_by_session ON decisions (session, id);
CREATE INDEX IF NOT EXISTS decisions_by_time ON decisions (time)
"""
_SCHEMA_VERSION = 1
_COLUMNS = (
    "id, time, session, project, action, kind, tier, effects, source, autonomy, posture, "
    "decision, answer, reason, pid, exit_code, duration"
)


SESSION_ENV_VAR: Final = "STOCKADE_SESSION_ID"  # groups several CLI calls in one session


def new_session_id() -> str:
    """A short, time-sortable, unique id: ``20250101-120000-3fa9c2``."""
    return time.strftime("%Y%m%d-%H%M%S-") + os.urandom(3).hex()


def session_id_from_environment() -> str:
    """The session ``STOCKADE_SESSION_ID`` names, else a new one (one command, one session)."""
    return os.environ.get(SESSION_ENV_VAR) or new_session_id()


class LedgerEntry(NamedTuple):
    """One decision. ``tier`` None means the action was not classified (operator path);
    ``answer`` is the prompt answer (``once``/``session``/``project``/``deny``/``never``),
    ``headless`` when nobody could be asked, None when no prompt was needed. ``time`` and
    ``pid`` left None are filled in when the entry is recorded. (A NamedTuple, not a
    dataclass: this module is on the ``stockade run`` path and must import fast.)"""

    session: str
    project: str
    action: str
    kind: str
    tier: str | None
    effects: tuple[str, ...]
    source: str
    autonomy: str | None
    posture: str | None
    decision: str
    reason: str
    answer: str | None = None
    time: float | None = None
    pid: int | None = None
    exit_code: int | None = None
    duration: float | None = None
    id: int | None = None

    @property
    def prompted(self) -> bool:
        return self.answer is not None and self.answer != "headless"

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["effects"] = list(self.effects)
        data["prompted"] = self.prompted
        return data


class SessionReport(NamedTuple):
    """The completion report of a session: counts by decision and by tier."""

    session: str
    total: int
    by_decision: dict[str, int]
    by_tier: dict[str, int]
    prompted: int
    started: float | None
    ended: float | None

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()

    def summary(self) -> str:
        decisions = ", ".join(f"{n} {d}" for d, n in self.by_decision.items() if n) or "none"
        tiers = ", ".join(f"{n} {t}" for t, n in self.by_tier.items() if n) or "-"
        return (
            f"session {self.session}: {self.total} decisions ({decisions}; "
            f"{self.prompted} prompted); by tier: {tiers}"
        )


def default_ledger_path() -> Path:
    from stockade.userdirs import data_dir

    return data_dir() / LEDGER_DB


class Ledger:
    """Append-only decision log. Thread-safe; one connection per process (re-opened after a
    fork), opened lazily on first use.

    An unreadable database file (not SQLite, a damaged image) is moved aside once and a new
    ledger starts: the old file is kept for inspection, the command still runs and is still
    recorded, and one line on stderr says what happened and where (``notice``)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_ledger_path()
        self._connection: sqlite3.Connection | None = None
        self._pid = 0
        self._lock = threading.Lock()
        self.notice: str | None = None  # set when an unreadable ledger was moved aside

    def _db(self) -> sqlite3.Connection:
        if self._connection is None or self._pid != os.getpid():
            from stockade.permissions.database import connect

            self._connection = connect(self.path, _SCHEMA, _SCHEMA_VERSION)
            self._pid = os.getpid()
        return self._connection

    def close(self) -> None:
        with self._lock:
            self._drop_connection()

    def _drop_connection(self) -> None:
        if self._connection is not None and self._pid == os.getpid():
            self._connection.close()
        self._connection = None

    def _guarded(self, operation: Callable[[], T], *, retry: bool = True) -> T:
        """Run ``operation`` (lock held); if the file turns out unreadable, move it aside, say
        so once on stderr, and run it again on a fresh ledger (``retry=False``: give up)."""
        from stockade.permissions.database import DatabaseCorrupt, quarantine

        try:
            return operation()
        except DatabaseCorrupt as corrupt:
            self._drop_connection()
            moved = quarantine(self.path)
            where = f"moved it to {moved}" if moved else "another stockade process moved it"
            self.notice = (
                f"stockade: warning: the ledger {self.path} was unreadable ({corrupt.detail}); "
                f"{where} and started a new ledger"
            )
            print(self.notice, file=sys.stderr, flush=True)
            if not retry:
                raise
            return operation()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------

    def record(self, entry: LedgerEntry) -> int:
        """Append ``entry``; return its id."""
        from stockade.permissions.database import write_one

        values = (
            time.time() if entry.time is None else entry.time,
            entry.session,
            entry.project,
            entry.action,
            entry.kind,
            entry.tier,
            json.dumps(list(entry.effects)),
            entry.source,
            entry.autonomy,
            entry.posture,
            entry.decision,
            entry.answer,
            entry.reason,
            os.getpid() if entry.pid is None else entry.pid,
            entry.exit_code,
            entry.duration,
        )
        sql = (
            f"INSERT INTO decisions ({_COLUMNS.removeprefix('id, ')}) "
            f"VALUES ({', '.join('?' * len(values))})"
        )
        with self._lock:
            cursor = self._guarded(lambda: write_one(self._db(), self.path, sql, values))
            return int(cursor.lastrowid or 0)

    def finish(self, entry_id: int, *, exit_code: int, duration: float) -> None:
        """Complete an entry with how the command ended."""
        from stockade.permissions.database import write_one

        sql = "UPDATE decisions SET exit_code = ?, duration = ? WHERE id = ?"
        with self._lock:
            # no retry: after a move the entry is in the old file, there is nothing to update
            self._guarded(
                lambda: write_one(self._db(), self.path, sql, (exit_code, duration, entry_id)),
                retry=False,
            )

    # -- reading -----------------------------------------------------------------------------

    def entries(
        self,
        *,
        session: str | None = None,
        since: float | None = None,
        project: str | None = None,
        limit: int | None = None,
    ) -> list[LedgerEntry]:
        """Entries oldest first; ``limit`` keeps the most recent ones."""
        if not self.path.exists():
            return []
        clauses: list[str] = []
        args: list[Any] = []
        for column, value in (("session", session), ("project", project)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value)
        if since is not None:
            clauses.append("time >= ?")
            args.append(since)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        tail = ""
        if limit is not None:
            tail = " LIMIT ?"
            args.append(limit)
        sql = f"SELECT {_COLUMNS} FROM decisions {where} ORDER BY id DESC{tail}"
        with self._lock:
            rows = self._guarded(lambda: self._read(lambda db: db.execute(sql, args).fetchall()))
        return [_entry(row) for row in reversed(rows)]

    def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        from stockade.permissions.database import read

        return read(self.path, lambda: query(self._db()))

    def report(self, session: str) -> SessionReport:
        """Counts by decision and tier for ``session`` (the completion report)."""
        entries = self.entries(session=session)
        decisions = Counter(e.decision for e in entries)
        tiers = Counter(e.tier or "unclassified" for e in entries)
        from stockade.tiers import Tier

        tier_order = [t.label for t in Tier] + ["unclassified"]
        return SessionReport(
            session=session,
            total=len(entries),
            by_decision={d: decisions.get(d, 0) for d in DECISIONS},
            by_tier={t: tiers[t] for t in tier_order if tiers.get(t)},
            prompted=sum(1 for e in entries if e.prompted),
            started=entries[0].time if entries else None,
            ended=entries[-1].time if entries else None,
        )

    def count(self) -> int:
        if not self.path.exists():
            return 0
        with self._lock:
            return int(
                self._guarded(
                    lambda: self._read(
                        lambda db: db.execute("SELECT count(*) FROM decisions").fetchone()[0]
                    )
                )
            )


def _entry(row: Sequence[Any]) -> LedgerEntry:
    (
        id_,
        time_,
        session,
        project,
        action,
        kind,
        tier,
        effects,
        source,
        autonomy,
        posture,
        decision,
        answer,
        reason,
        pid,
        exit_code,
        duration,
    ) = row
    try:
        effect_list = tuple(str(e) for e in json.loads(effects))
    except (ValueError, TypeError):
        effect_list = ()
    return LedgerEntry(
        id=id_,
        time=time_,
        session=session,
        project=project,
        action=action,
        kind=kind,
        tier=tier,
        effects=effect_list,
        source=source,
        autonomy=autonomy,
        posture=posture,
        decision=decision,
        answer=answer,
        reason=reason,
        pid=pid,
        exit_code=exit_code,
        duration=duration,
    )


def record_operator_run(
    argv: Sequence[str], *, project: str, posture: str, ledger: Ledger | None = None
) -> tuple[Ledger, int]:
    """Record an operator-path run (``stockade run``): no gate, decision ``bypassed``."""
    import shlex

    ledger = ledger if ledger is not None else Ledger()
    entry_id = ledger.record(
        LedgerEntry(
            session=session_id_from_environment(),
            project=project,
            action=shlex.join(argv),
            kind="operator",
            tier=None,
            effects=("shell",),
            source="operator",
            autonomy=None,
            posture=posture,
            decision=BYPASSED,
            reason="operator path: the person running `stockade run` is the authority",
        )
    )
    return ledger, entry_id
