"""The guard around every command of one Sandbox (``sandbox/guard.py`` does the judging).

Each command, warm or cold, gets a ``RunGuard``: a snapshot of the guarded names before it
starts, live polling while it runs, and after it ends the judgement (planted code moved aside,
protected files restored) recorded in the ledger. What the commands of one Sandbox share lives
here: the repository index (its first full scan overlaps the first command, later ones only
refresh), the live poller, and the last command's snapshot, where the next one starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from stockade.sandbox.policy import SandboxPolicy

if TYPE_CHECKING:
    from stockade.permissions.ledger import Ledger
    from stockade.sandbox.guard import Finding, LivePoller, RunGuard, Snapshot
    from stockade.sandbox.repo_index import RepoIndex


class CommandGuards:
    """The guards of one Sandbox's commands; thread-safe (background commands overlap)."""

    def __init__(self, journal_dir: Path) -> None:
        self._journal_dir = journal_dir
        self._lock = threading.Lock()
        self._poller: LivePoller | None = None
        self._repo_index: RepoIndex | None = None
        self._snapshot: Snapshot | None = None  # the last command's copies (Landlock)
        self._free_journals: list[Path] = []  # journal slots of finished commands
        self._count = 0

    def begin(
        self,
        policy: SandboxPolicy,
        *,
        mounted: bool,
        on_finding: Callable[[str], None] | None = None,
    ) -> RunGuard:
        """Start the guard of one command of ``policy`` (its protection looked up now;
        ``mounted``: protected paths are read-only mounts, as in bwrap, not restored)."""
        from stockade.sandbox.guard import LivePoller, RunGuard, plan_for
        from stockade.sandbox.repo_index import RepoIndex

        with self._lock:
            if self._free_journals:
                journal = self._free_journals.pop()
            else:
                self._count += 1
                journal = self._journal_dir / f"{self._count}.json"
            if self._repo_index is None or self._repo_index.roots != policy.guarded_roots:
                if self._repo_index is not None:
                    self._repo_index.close()
                self._repo_index = RepoIndex(policy.guarded_roots)
            index = self._repo_index
            if self._poller is None:
                self._poller = LivePoller()
            poller = self._poller
        index.skip = frozenset(
            str(p) for p in (*(m.path for m in policy.masked), *(p.path for p in policy.protected))
        )
        index.start()  # the first full scan overlaps the command; later ones only refresh
        guard = RunGuard(
            plan_for(policy, mounted=mounted),
            journal=journal,
            index=index,
            previous=self._snapshot,
        )
        with self._lock:
            self._snapshot = guard.snapshot or self._snapshot
        if on_finding is not None:
            guard.subscribe(lambda finding: on_finding(finding.line()))
        poller.add(guard)
        return guard

    def end(
        self,
        guard: RunGuard | None,
        policy: SandboxPolicy,
        *,
        session: str | None = None,
        ledger: Ledger | None = None,
    ) -> list[Finding]:
        """Judge the command once it ended; what was found is recorded in ``ledger`` (None:
        the user's default) under ``session``."""
        if guard is None:
            return []
        if self._poller is not None:
            self._poller.remove(guard)
        findings = guard.finish()
        with self._lock:
            if guard.journal is not None:
                self._free_journals.append(guard.journal)  # marked done: the next may take it
            if guard.snapshot is not None:
                self._snapshot = guard.snapshot  # as restored: the next command starts here
        if findings:
            from stockade.sandbox.guard import record_in_ledger

            record_in_ledger(findings, project=policy.project, session=session, ledger=ledger)
        return findings

    def close(self) -> None:
        if self._poller is not None:
            self._poller.close()
        if self._repo_index is not None:
            self._repo_index.close()
