"""Permission rules: namespaced glob patterns that allow, ask or deny, and where they are kept.

A rule lives in exactly one namespace and is only ever matched against subjects of that
namespace, so a ``domain`` rule can never allow a shell command and a ``bash`` rule can never
allow a host:

==================  ===========================================  ============================
namespace           subject                                      pattern example
==================  ===========================================  ============================
``bash``            one env-stripped command segment             ``npm run test *``
``domain``          a host (``host`` or ``host:port``)           ``*.github.com``
``mcp``             a dotted MCP tool id ``mcp.<server>.<tool>``  ``mcp.github.*``
==================  ===========================================  ============================

``mcp`` rules decide the tool calls of MCP servers run behind ``stockade run --stdio --gate``
(and any action plan with an ``mcp`` subject). Two namespaces of earlier versions are retired
(``RETIRED_NAMESPACES``): nothing ever read them, so storing one is refused with the reason
and the way to get what it promised; old rows of them are ignored.

Glob language (every namespace but ``domain``): ``*`` matches any text, ``[*]`` is a literal
star, everything else is literal. A pattern ending in `` *`` also matches the bare command, so
``git push *`` covers ``git push``. ``domain`` uses the proxy's host language
(:mod:`stockade.net.domains`): ``example.com``, ``*.example.com`` (subdomains, not the apex),
optional ``:port``.

Scopes: ``config`` (from settings, read-only here), ``session`` and ``project`` (persisted in
SQLite in the user data dir, keyed by the canonical project path - never in the repository,
so nothing an agent writes can loosen its own rules). Session rules live in memory for as long
as a Session (or an MCP connection) lives; for one-shot ``stockade exec`` calls that share a
``STOCKADE_SESSION_ID`` they are kept in the same database under that id, for
``SESSION_RULE_TTL_S`` after they were given. Every rule has a stable id derived from what it
says, so adding the same rule twice is one rule.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from stockade.errors import ConfigError, UsageError

if TYPE_CHECKING:
    import sqlite3

RULES_DB = "permissions.db"
LITERAL_STAR = "[*]"
SESSION_RULE_TTL_S = 24 * 3600.0  # a persisted session answer is forgotten a day after it


class Namespace(enum.Enum):
    BASH = "bash"
    DOMAIN = "domain"
    MCP = "mcp"

    def __str__(self) -> str:
        return self.value


# Namespaces that used to be accepted and never acted: storing one is refused with this
# (message, fix), so a careful user is not left believing a rule does something.
RETIRED_NAMESPACES: dict[str, tuple[str, str]] = {
    "workspace_trust": (
        "workspace trust is recorded by `stockade trust`, bound to a digest of the project's "
        "settings files (any change to them asks again); a path rule would trust files nobody "
        "reviewed, so stockade has no workspace_trust rules",
        "run `stockade trust --project DIR` (`stockade trust --revoke` undoes it)",
    ),
    "hook": (
        "stockade runs no hooks of its own: git hooks run inside the sandbox like any other "
        "command, and .git/hooks is read-only there, so a hook rule would decide nothing",
        "decide what hooks' commands may do with bash rules (stockade permissions add)",
    ),
}


def refuse_retired(name: str) -> None:
    """Raise UsageError if ``name`` is a retired namespace (``RETIRED_NAMESPACES``)."""
    retired = RETIRED_NAMESPACES.get(name.strip().lower())
    if retired is not None:
        message, fix = retired
        raise UsageError(f"{name.strip()} rules are not supported: {message}", fix=fix)


class RuleDecision(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"

    def __str__(self) -> str:
        return self.value


class Scope(enum.Enum):
    CONFIG = "config"
    SESSION = "session"
    PROJECT = "project"

    def __str__(self) -> str:
        return self.value


# Evaluation (and listing) priority: every deny before any ask before any allow; within a
# decision, settings before session before project. The gate relies on this order.
DECISION_ORDER = (RuleDecision.DENY, RuleDecision.ASK, RuleDecision.ALLOW)
SCOPE_ORDER = (Scope.CONFIG, Scope.SESSION, Scope.PROJECT)
_ID_PREFIX = {Scope.CONFIG: "c", Scope.SESSION: "s", Scope.PROJECT: "p"}


# --- patterns ---------------------------------------------------------------------------


def escape_glob(text: str) -> str:
    """A pattern that matches exactly ``text`` (its stars made literal)."""
    return text.replace("*", LITERAL_STAR)


def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    body = pattern
    bare_ok = body.endswith(" *") and not body.endswith(LITERAL_STAR)
    if bare_ok:
        body = body[:-2]
    for index, piece in enumerate(body.split(LITERAL_STAR)):
        if index:
            parts.append(re.escape("*"))
        parts.append(".*".join(re.escape(chunk) for chunk in piece.split("*")))
    tail = r"(?:\s.*)?" if bare_ok else ""
    return re.compile("".join(parts) + tail, re.DOTALL)


Matcher = Callable[[str], bool]


@functools.lru_cache(maxsize=4096)
def compile_matcher(namespace: Namespace, pattern: str) -> Matcher:
    """The predicate a (validated) pattern stands for, in its namespace's language."""
    if namespace is Namespace.DOMAIN:
        from stockade.net.domains import DomainRule, InvalidHost, normalise_host, split_host_port

        rule = DomainRule.parse(pattern)

        def match_host(subject: str) -> bool:
            try:
                host_text, port = split_host_port(subject.strip())
                host = normalise_host(host_text)
            except InvalidHost:
                return False
            if port is None:
                return rule.port is None and rule.matches(host, 0)
            return rule.matches(host, port)

        return match_host
    regex = _glob_regex(pattern)
    return lambda subject: regex.fullmatch(subject.strip()) is not None


_MCP_PATTERN = re.compile(r"^mcp\.[A-Za-z0-9_.*\-\[\]]+$")


def validate_pattern(namespace: Namespace, pattern: str) -> str:
    """Return the pattern in canonical form, or raise UsageError saying what is wrong."""
    text = pattern.strip() if isinstance(pattern, str) else ""
    if not text:
        raise UsageError(f"empty {namespace} pattern", fix="give a pattern, e.g. 'npm test *'")
    if namespace is Namespace.DOMAIN:
        from stockade.net.domains import DomainRule, InvalidDomainPattern

        try:
            return str(DomainRule.parse(text))
        except InvalidDomainPattern as error:
            raise UsageError(error.message, fix=error.fix) from None
    if namespace is Namespace.MCP and not _MCP_PATTERN.match(text):
        raise UsageError(
            f"invalid mcp pattern {pattern!r}",
            fix="use a dotted tool id starting with 'mcp.', e.g. mcp.github.*",
        )
    return text


def parse_rule_text(text: str) -> tuple[Namespace, str]:
    """Split a settings-style entry ``[namespace:]pattern``; no known prefix means ``bash``.

    ``domain:*.github.com``, ``mcp:mcp.github.*``, ``npm test *`` (bash).
    """
    if not isinstance(text, str):
        raise ConfigError(f"permission rule {text!r} is not a string", fix="quote the rule")
    head, sep, rest = text.partition(":")
    if sep:
        refuse_retired(head)
        for namespace in Namespace:
            if head.strip().lower() == namespace.value:
                return namespace, validate_pattern(namespace, rest)
    return Namespace.BASH, validate_pattern(Namespace.BASH, text)


def canonical_project(project: str | os.PathLike[str]) -> str:
    """The key rules are stored under: the real, absolute path of the project."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(project)))


def rule_id(
    scope: Scope, namespace: Namespace, decision: RuleDecision, pattern: str, project: str
) -> str:
    """A stable id: the same rule in the same place always gets the same id."""
    digest = hashlib.sha256(
        "\0".join((scope.value, namespace.value, decision.value, pattern, project)).encode()
    ).hexdigest()
    return f"{_ID_PREFIX[scope]}-{digest[:10]}"


@dataclass(frozen=True)
class Rule:
    """One permission rule. ``project`` is the canonical project path ('' for settings)."""

    id: str
    namespace: Namespace
    pattern: str
    decision: RuleDecision
    scope: Scope
    project: str = ""
    created: float = 0.0
    source: str = ""

    @classmethod
    def create(
        cls,
        namespace: Namespace,
        pattern: str,
        decision: RuleDecision,
        scope: Scope,
        *,
        project: str = "",
        source: str = "",
    ) -> Rule:
        pattern = validate_pattern(namespace, pattern)
        key = "" if scope is Scope.CONFIG else project
        return cls(
            id=rule_id(scope, namespace, decision, pattern, key),
            namespace=namespace,
            pattern=pattern,
            decision=decision,
            scope=scope,
            project=key,
            created=time.time(),
            source=source,
        )

    def matches(self, namespace: Namespace, subject: str) -> bool:
        """True only for a subject of this rule's own namespace that the pattern covers."""
        return namespace is self.namespace and compile_matcher(self.namespace, self.pattern)(
            subject
        )

    def describe(self) -> str:
        return f"{self.decision} {self.namespace}:{self.pattern} ({self.scope}, {self.id})"


def priority(rules: Iterable[Rule]) -> list[Rule]:
    """Rules in evaluation order: deny, ask, allow; settings, session, project; then age."""
    return sorted(
        rules,
        key=lambda r: (DECISION_ORDER.index(r.decision), SCOPE_ORDER.index(r.scope), r.created),
    )


def config_rules(
    *, allow: Sequence[str] = (), deny: Sequence[str] = (), ask: Sequence[str] = ()
) -> tuple[Rule, ...]:
    """Rules from the settings lists (``[permissions] allow/deny/ask``)."""
    rules: list[Rule] = []
    for decision, entries in (
        (RuleDecision.DENY, deny),
        (RuleDecision.ASK, ask),
        (RuleDecision.ALLOW, allow),
    ):
        for entry in entries:
            try:
                namespace, pattern = parse_rule_text(entry)
            except UsageError as error:
                raise ConfigError(
                    f"[permissions] {decision}: {error.message}", fix=error.fix
                ) from None
            rules.append(Rule.create(namespace, pattern, decision, Scope.CONFIG, source="settings"))
    return tuple(dict.fromkeys(rules).keys())


# --- session rules (memory) -------------------------------------------------------------


@dataclass
class SessionRules:
    """Rules and sandbox-escape approvals that last as long as one session (thread-safe).

    With a ``store`` the rules are also written under ``session`` (an id the caller chose,
    ``STOCKADE_SESSION_ID``), so the next process with that id sees them. Escape approvals are
    never written anywhere: ``keeps_escapes`` is False then, and nobody is offered one."""

    project: str
    store: RuleStore | None = None
    session: str = ""
    _rules: dict[str, Rule] = field(default_factory=dict)
    _escapes: set[tuple[str, str]] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def keeps_escapes(self) -> bool:
        return self.store is None

    def add(
        self, namespace: Namespace, pattern: str, decision: RuleDecision, *, source: str = ""
    ) -> Rule:
        rule = Rule.create(
            namespace, pattern, decision, Scope.SESSION, project=self.project, source=source
        )
        if self.store is not None:
            self.store.add_session_rule(self.session, rule)
        with self._lock:
            return self._rules.setdefault(rule.id, rule)

    def remove(self, rule_id: str) -> Rule | None:
        with self._lock:
            return self._rules.pop(rule_id, None)

    def rules(self) -> list[Rule]:
        with self._lock:
            mine = list(self._rules.values())
        if self.store is None:
            return mine
        stored = self.store.session_rules(self.session, self.project)
        return list({rule.id: rule for rule in [*stored, *mine]}.values())

    def approve_escape(self, cwd: str, command: str) -> None:
        """Remember an escape for this exact working directory + command (never persisted)."""
        if not self.keeps_escapes:
            return
        with self._lock:
            self._escapes.add((cwd, command))

    def escape_approved(self, cwd: str, command: str) -> bool:
        with self._lock:
            return (cwd, command) in self._escapes


# --- project rules (SQLite in the user data dir) ----------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rules (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    namespace TEXT NOT NULL,
    decision TEXT NOT NULL,
    pattern TEXT NOT NULL,
    created REAL NOT NULL,
    source TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS rules_by_project ON rules (project, created);
CREATE TABLE IF NOT EXISTS session_rules (
    session TEXT NOT NULL,
    id TEXT NOT NULL,
    project TEXT NOT NULL,
    namespace TEXT NOT NULL,
    decision TEXT NOT NULL,
    pattern TEXT NOT NULL,
    created REAL NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (session, id)
)
"""
_SCHEMA_VERSION = 2  # 2: session_rules (answers kept for one STOCKADE_SESSION_ID)


def default_rules_path() -> Path:
    from stockade.userdirs import data_dir

    return data_dir() / RULES_DB


class RuleStore:
    """Project-scoped rules persisted in SQLite; safe to use from many processes and threads.

    One connection per process (re-opened after a fork or when the file is replaced). Reads are
    cached per project and revalidated on every call with SQLite's ``data_version``, which
    changes whenever another connection commits: a rule added by any process is seen by the
    next check in every other, without re-reading unchanged rules on every command.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else default_rules_path()
        self._connection: sqlite3.Connection | None = None
        self._identity: tuple[int, int, int] = (0, 0, 0)  # pid, st_dev, st_ino
        self._cache: dict[str | None, tuple[int, list[Rule]]] = {}
        self._lock = threading.RLock()

    @contextmanager
    def _readable(self) -> Iterator[None]:
        """Turn an unreadable rules file into one clear refusal. It is never moved aside or
        replaced silently: starting without the user's deny rules would loosen."""
        import sqlite3

        from stockade.permissions.database import DatabaseCorrupt, DatabaseError, is_corrupt

        try:
            yield
        except (DatabaseCorrupt, sqlite3.Error) as error:
            if isinstance(error, sqlite3.Error) and not is_corrupt(error):
                raise DatabaseError(f"cannot read {self.path}: {error}") from None
            detail = error.detail if isinstance(error, DatabaseCorrupt) else str(error)
            self._connection = None
            raise DatabaseError(
                f"the permission rules database {self.path} is unreadable ({detail})",
                fix=f"move it aside (mv {self.path} {self.path}.corrupt) - its rules stop "
                "applying until you add them again - or restore it from a backup",
            ) from None

    def _db(self) -> sqlite3.Connection:
        """The open connection, re-opened when this is a forked child or the file changed."""
        try:
            stat = os.stat(self.path)
            identity = (os.getpid(), stat.st_dev, stat.st_ino)
        except OSError:
            identity = (os.getpid(), 0, 0)
        if self._connection is None or identity != self._identity:
            from stockade.permissions.database import connect

            if self._connection is not None and self._identity[0] == os.getpid():
                self._connection.close()
            self._connection = connect(self.path, _SCHEMA, _SCHEMA_VERSION)
            stat = os.stat(self.path)
            self._identity = (os.getpid(), stat.st_dev, stat.st_ino)
            self._cache.clear()
        return self._connection

    def close(self) -> None:
        with self._lock:
            if self._connection is not None and self._identity[0] == os.getpid():
                self._connection.close()
            self._connection = None
            self._cache.clear()

    def add(
        self,
        project: str | os.PathLike[str],
        namespace: Namespace,
        pattern: str,
        decision: RuleDecision,
        *,
        source: str = "",
    ) -> Rule:
        """Persist a rule for ``project`` (idempotent) and return it."""
        from stockade.permissions.database import write_one

        rule = Rule.create(
            namespace,
            pattern,
            decision,
            Scope.PROJECT,
            project=canonical_project(project),
            source=source,
        )
        row = _row(rule)
        with self._lock, self._readable():
            db = self._db()
            self._cache.clear()  # our own commits do not change data_version
            write_one(db, self.path, _INSERT, row)
            stored = self._select(db, "WHERE id = ?", (rule.id,))
        return stored[0] if stored else rule

    def remove(self, rule_id: str) -> Rule | None:
        """Delete a rule by id (any project, and any session's kept answers); return it, or
        None when there was none."""
        from stockade.permissions.database import write_one

        if not self.path.exists():
            return None
        with self._lock, self._readable():
            db = self._db()
            found = self._select(db, "WHERE id = ?", (rule_id,), strict=False)
            if not found:
                found = self._select(
                    db, "WHERE id = ?", (rule_id,), strict=False, table="session_rules"
                )
            if found:
                self._cache.clear()
                write_one(db, self.path, _DELETE, (rule_id,))
                write_one(db, self.path, _DELETE_SESSION, (rule_id,))
        return found[0] if found else None

    def retired_rows(self, project: str | os.PathLike[str]) -> list[tuple[str, str, str]]:
        """(id, namespace, pattern) of stored rows in retired namespaces: ignored, listed so
        they can be removed."""
        if not self.path.exists():
            return []
        names = tuple(RETIRED_NAMESPACES)
        with self._lock, self._readable():
            rows = (
                self._db()
                .execute(
                    "SELECT id, namespace, pattern FROM rules WHERE project = ? AND namespace "
                    f"IN ({', '.join('?' * len(names))}) ORDER BY created",
                    (canonical_project(project), *names),
                )
                .fetchall()
            )
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def remove_retired(self, rule_id: str) -> tuple[str, str] | None:
        """Delete a stored row of a retired namespace by id; return (namespace, pattern)."""
        from stockade.permissions.database import write_one

        if not self.path.exists():
            return None
        names = tuple(RETIRED_NAMESPACES)
        query = (
            "SELECT namespace, pattern FROM rules WHERE id = ? AND namespace "
            f"IN ({', '.join('?' * len(names))})"
        )
        with self._lock, self._readable():
            db = self._db()
            found = db.execute(query, (rule_id, *names)).fetchone()
            if found is None:
                return None
            write_one(db, self.path, _DELETE, (rule_id,))
        return str(found[0]), str(found[1])

    def add_session_rule(self, session: str, rule: Rule) -> None:
        """Keep a session answer under ``session`` (forgetting ones past their time)."""
        from stockade.permissions.database import write

        row = (session, *_row(rule))
        expired = time.time() - SESSION_RULE_TTL_S

        def insert(connection: sqlite3.Connection) -> None:
            connection.execute("DELETE FROM session_rules WHERE created < ?", (expired,))
            connection.execute(_INSERT_SESSION, row)

        with self._lock, self._readable():
            write(self._db(), self.path, insert)

    def session_rules(self, session: str, project: str | os.PathLike[str]) -> list[Rule]:
        """The answers kept for ``session`` in ``project`` that are not yet forgotten."""
        if not session or not self.path.exists():
            return []
        since = time.time() - SESSION_RULE_TTL_S
        with self._lock, self._readable():
            return self._select(
                self._db(),
                "WHERE session = ? AND project = ? AND created >= ?",
                (session, canonical_project(project), since),
                table="session_rules",
            )

    def all_session_rules(self, project: str | os.PathLike[str]) -> list[tuple[str, Rule]]:
        """(session id, rule) for every kept session answer of ``project`` (for listing)."""
        if not self.path.exists():
            return []
        since = time.time() - SESSION_RULE_TTL_S
        with self._lock, self._readable():
            rows = (
                self._db()
                .execute(
                    "SELECT session, id FROM session_rules WHERE project = ? AND created >= ? "
                    "ORDER BY created",
                    (canonical_project(project), since),
                )
                .fetchall()
            )
            rules = {
                r.id: r
                for r in self._select(
                    self._db(),
                    "WHERE project = ?",
                    (canonical_project(project),),
                    table="session_rules",
                )
            }
        return [(session, rules[rule_id]) for session, rule_id in rows if rule_id in rules]

    def rules(self, project: str | os.PathLike[str] | None = None) -> list[Rule]:
        """Rules of one project (canonicalised), or of every project when None."""
        if not self.path.exists():  # reading never creates the database
            return []
        key = None if project is None else canonical_project(project)
        with self._lock, self._readable():
            db = self._db()
            version = int(db.execute("PRAGMA data_version").fetchone()[0])
            cached = self._cache.get(key)
            if cached is not None and cached[0] == version:
                return list(cached[1])
            if key is None:
                rules = self._select(db, "", ())
            else:
                rules = self._select(db, "WHERE project = ?", (key,))
            self._cache[key] = (version, rules)
            return list(rules)

    @staticmethod
    def _select(
        connection: sqlite3.Connection,
        where: str,
        args: tuple[str | float, ...],
        *,
        strict: bool = True,
        table: str = "rules",
    ) -> list[Rule]:
        """Rows as rules. A row this version cannot evaluate is never silently skipped (a
        skipped deny would loosen) - except one in a namespace it does not know, which has no
        subjects here. ``strict=False`` (for removal) does not validate patterns."""
        rows = connection.execute(
            f"SELECT id, project, namespace, decision, pattern, created, source FROM {table} "
            f"{where} ORDER BY created, id",
            args,
        ).fetchall()
        rules = []
        for rule_id_, project, namespace, decision, pattern, created, source in rows:
            if namespace not in _NAMESPACE_VALUES:
                continue
            try:
                kind = Namespace(namespace)
                rule = Rule(
                    id=rule_id_,
                    namespace=kind,
                    pattern=validate_pattern(kind, pattern) if strict else pattern,
                    decision=RuleDecision(decision),
                    scope=Scope.PROJECT if table == "rules" else Scope.SESSION,
                    project=project,
                    created=created,
                    source=source,
                )
            except (ValueError, UsageError):
                raise ConfigError(
                    f"persisted permission rule {rule_id_} is not understood "
                    f"({decision} {namespace}:{pattern!r})",
                    fix=f"remove it: stockade permissions remove {rule_id_}",
                ) from None
            rules.append(rule)
        return rules


def _row(rule: Rule) -> tuple[str, str, str, str, str, float, str]:
    """A rule as the columns of ``rules`` (``session_rules`` puts the session id first)."""
    return (
        rule.id,
        rule.project,
        rule.namespace.value,
        rule.decision.value,
        rule.pattern,
        rule.created,
        rule.source,
    )


_INSERT = "INSERT OR IGNORE INTO rules VALUES (?, ?, ?, ?, ?, ?, ?)"
_DELETE = "DELETE FROM rules WHERE id = ?"
_INSERT_SESSION = "INSERT OR IGNORE INTO session_rules VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
_DELETE_SESSION = "DELETE FROM session_rules WHERE id = ?"
_NAMESPACE_VALUES = frozenset(n.value for n in Namespace)


# --- the combined view the gate evaluates -------------------------------------------------


@dataclass(frozen=True)
class RuleBook:
    """Settings, session and project rules for one project, in priority order."""

    project: str
    config: tuple[Rule, ...] = ()
    session: SessionRules | None = None
    store: RuleStore | None = None

    def snapshot(self) -> list[Rule]:
        """Every rule that applies now (project rules freshly read), in evaluation order."""
        rules = list(self.config)
        if self.session is not None:
            rules += self.session.rules()
        if self.store is not None:
            rules += self.store.rules(self.project)
        return priority(rules)


def first_match(
    rules: Sequence[Rule],
    namespace: Namespace,
    decision: RuleDecision,
    subjects: Iterable[str],
) -> Rule | None:
    """The first rule (in priority order) with ``decision`` that covers any of ``subjects``."""
    candidates = [r for r in rules if r.decision is decision and r.namespace is namespace]
    if not candidates:
        return None
    subject_list = [s for s in subjects if s]
    for rule in candidates:
        if any(rule.matches(namespace, subject) for subject in subject_list):
            return rule
    return None
