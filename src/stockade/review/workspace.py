"""A Sandbox's review workspace: one changeset and its layer, shared by every command.

``Sandbox(..., review=True)`` (``stockade run --review``, ``Session(workspace="review")``,
``stockade mcp --review``) owns one of these. It makes the changeset and the layer up front,
so a machine where the layer cannot work is refused before anything runs. For each command it
hands the runner a policy whose project is the layer (:meth:`command`), with the protected
paths judged by what the *layer* shows (bwrap binds them from there), and afterwards records
what the project held under every new change. Applying or discarding needs every command of
the workspace to have ended; afterwards the next command starts a fresh changeset.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stockade.errors import UsageError
from stockade.review import changesets, records
from stockade.review.apply import ApplyResult
from stockade.review.scan import Change, merged_lookup
from stockade.review.store import Changeset
from stockade.sandbox.overlay import Layer
from stockade.sandbox.policy import GLOB_CHARACTERS, ProtectedPath, SandboxPolicy, is_within


class ReviewWorkspace:
    """The changeset and layer of one Sandbox (see the module docstring)."""

    def __init__(self, policy: SandboxPolicy, *, backend: str, posture: str) -> None:
        self._policy = policy
        self._produced_by: dict[str, Any] = {
            "backend": backend,
            "posture": posture,
            "policy": _policy_summary(policy),
        }
        self._lock = threading.Lock()  # the changeset, the layer, the running commands
        self._meta_lock = threading.Lock()  # the metadata (commands end on other threads)
        self._changeset: Changeset | None = None
        self._layer: Layer | None = None
        self._running: dict[int, int] = {}  # token -> start (coarse ns) of running commands
        self._window_start: int | None = None  # earliest start since the last record
        self._tokens = 0
        self._open()

    # -- lifecycle --------------------------------------------------------------------------

    def _open(self) -> None:
        changeset = Changeset.create(self._policy.project, dict(self._produced_by))
        try:
            self._layer = Layer.create(
                self._policy.project, changeset.directory, self._policy.jail_user
            )
        except BaseException:
            changeset.remove()
            raise
        self._changeset = changeset

    @property
    def changeset_id(self) -> str | None:
        """The id of the current changeset (None after an apply or discard emptied it)."""
        return self._changeset.id if self._changeset is not None else None

    def close(self) -> str | None:
        """Stop using the layer. An empty changeset is removed; otherwise it is kept (state
        finished) for ``stockade changes``. Returns the kept changeset's id."""
        with self._lock:
            self._close_layer()
            changeset, self._changeset = self._changeset, None
        if changeset is None:
            return None
        self._record(changeset, self._window_start or records.coarse_now_ns())
        if not changesets.entries(changeset):
            changeset.remove()
            return None
        changeset.finish()
        return changeset.id

    def _close_layer(self) -> None:
        if self._layer is not None:
            self._layer.close()
            self._layer = None

    # -- commands ---------------------------------------------------------------------------

    @contextmanager
    def command(self, policy: SandboxPolicy, argv: Sequence[str]) -> Iterator[SandboxPolicy]:
        """The policy for one command on the layer, for as long as the command runs.
        ``policy`` has its protection looked up for this command already (the Sandbox does
        that for every run); here it is narrowed to what the layer shows."""
        with self._lock:
            if self._changeset is None:
                self._open()
            assert self._changeset is not None and self._layer is not None
            changeset, layer = self._changeset, self._layer
            self._tokens += 1
            token = self._tokens
            start = records.coarse_now_ns()
            self._running[token] = start
            if self._window_start is None:
                self._window_start = start
        try:
            fresh = self._protected_in_layer(policy, changeset)
            self._note_command(changeset, fresh, argv)
            yield fresh._replace(layer=layer)
        finally:
            with self._lock:
                self._running.pop(token, None)
                since = self._window_start or start
                self._window_start = min(self._running.values(), default=None)
            self._record(changeset, since)

    def _protected_in_layer(self, policy: SandboxPolicy, changeset: Changeset) -> SandboxPolicy:
        """The protected paths as the layer shows them: bwrap binds read-only what exists in
        the merged view (a name an earlier command of this changeset created included - in
        the layer a mount point leaves nothing on the host); what the layer lacks is left to
        the guard and to ``apply``, which never applies a change to a protected path."""
        project = policy.project
        protected = []
        for item in policy.protected:
            if is_within(item.path, project):
                found = merged_lookup(changeset.upper, project, os.path.relpath(item.path, project))
                if found is None:
                    continue  # deleted in the layer: nothing to bind
                item = item._replace(is_dir=stat.S_ISDIR(found.st_mode))
            protected.append(item)
        for guarded in policy.guarded:
            if not is_within(guarded.path, project) or GLOB_CHARACTERS & set(str(guarded.path)):
                continue
            rel = os.path.relpath(guarded.path, project)
            found = merged_lookup(changeset.upper, project, rel)
            if found is not None and not stat.S_ISLNK(found.st_mode):
                is_dir = stat.S_ISDIR(found.st_mode)
                protected.append(
                    ProtectedPath(guarded.path, is_dir, judge=guarded.judge, threat=guarded.threat)
                )
        return policy._replace(protected=tuple(protected))

    def _note_command(
        self, changeset: Changeset, policy: SandboxPolicy, argv: Sequence[str]
    ) -> None:
        project = policy.project
        inside = [p.path for p in policy.protected] + [g.path for g in policy.guarded]
        protected = {os.path.relpath(path, project) for path in inside if is_within(path, project)}
        with self._meta_lock:
            meta = changeset.meta
            meta["protected"] = sorted({*meta.get("protected", ()), *protected})
            meta.setdefault("commands", []).append({"argv": list(argv), "started": time.time()})
            meta["command"] = _command_line(meta["commands"])
            changeset.save()

    def _record(self, changeset: Changeset, since: int) -> None:
        with self._meta_lock:
            if changeset.directory.exists() and changesets.record_lower(changeset, since):
                changeset.save()

    # -- what the user does with it ---------------------------------------------------------

    def changes(self) -> list[Change]:
        changeset = self._changeset
        if changeset is None:
            return []
        self._record(changeset, self._window_start or records.coarse_now_ns())
        return changesets.changes(changeset)

    def diff(self, paths: Iterable[str] | None = None) -> str:
        changeset = self._changeset
        return changesets.diff(changeset, paths) if changeset is not None else ""

    def apply(self, paths: Iterable[str] | None = None) -> ApplyResult:
        """Apply (all, or the changes ``paths`` select) into the project."""
        with self._lock:
            changeset = self._idle_changeset("apply")
            self._close_layer()  # no overlay may be alive while its layers change
            self._record(changeset, self._window_start or records.coarse_now_ns())
            try:
                result = changesets.apply(changeset, paths)
            finally:
                if changeset.directory.exists():
                    self._reopen_layer(changeset)
                else:
                    self._changeset = None
            return result

    def discard(self) -> None:
        with self._lock:
            changeset = self._idle_changeset("discard")
            self._close_layer()
            changesets.discard(changeset)
            self._changeset = None

    def _idle_changeset(self, action: str) -> Changeset:
        if self._running:
            raise UsageError(
                f"cannot {action} while {len(self._running)} command(s) still run in the "
                "review layer",
                fix="wait for them to end, or kill them first",
            )
        if self._changeset is None:
            raise UsageError(f"nothing to {action}: the review layer holds no changes")
        return self._changeset

    def _reopen_layer(self, changeset: Changeset) -> None:
        self._layer = Layer.create(
            self._policy.project, changeset.directory, self._policy.jail_user
        )


def _command_line(commands: list[dict[str, Any]]) -> str:
    import shlex

    lines = [shlex.join(str(a) for a in c.get("argv", ())) for c in commands]
    return lines[0] if len(lines) == 1 else f"{len(lines)} commands: " + "; ".join(lines[-3:])


def _policy_summary(policy: SandboxPolicy) -> dict[str, Any]:
    """Which policy produced the changeset (what was writable, the network, who ran it)."""
    return {
        "project": str(policy.project),
        "writable": [str(p) for p in policy.writable],
        "network": policy.network.value,
        "masked": len(policy.masked),
        "protected": len(policy.protected),
        "jail_user": list(policy.jail_user) if policy.jail_user else None,
    }
