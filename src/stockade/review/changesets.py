"""What can be done with a changeset, from a Session or the CLI: list its changes, record what
the project held under them, diff, apply (all or some paths), discard.

A change is never applied when it touches a protected path (``.git/hooks``, ``.stockade/``,
shell rc files, ... - the same table the jail enforces, and whatever the run's policy
protected) or is a special file: it is listed with the reason and left out.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from stockade.errors import UsageError
from stockade.review import records
from stockade.review.apply import ApplyConflict, ApplyResult, apply_entries, check, select
from stockade.review.diff import unified
from stockade.review.scan import DELETED, Change, Entry, scan, with_tree_sizes
from stockade.review.store import Changeset
from stockade.sandbox.policy import PROTECTED_NAMES

SPECIAL_REFUSAL: Final = "a device, fifo or socket: never applied"


def entries(changeset: Changeset) -> list[Entry]:
    """The changeset's changes as they are now, each with its refusal (if any)."""
    protected = protected_paths(changeset)
    found = scan(changeset.upper, changeset.project, ignore=changeset.meta.get("placeholders", ()))
    found = with_tree_sizes(found, changeset.project)
    return [entry._replace(change=_with_refusal(entry.change, protected)) for entry in found]


def changes(changeset: Changeset) -> list[Change]:
    return [entry.change for entry in entries(changeset)]


def protected_paths(changeset: Changeset) -> set[str]:
    """The project's protected paths, relative: the table's names and whatever the run's
    policy protected (recorded per command)."""
    return {*PROTECTED_NAMES, *changeset.meta.get("protected", ())}


def _with_refusal(change: Change, protected: set[str]) -> Change:
    if change.type == "special":
        return change._replace(refused=SPECIAL_REFUSAL)
    for path in sorted(protected):
        if _within(change.path, path) or _within(path, change.path):
            return change._replace(refused=f"protected path {path}: never applied")
    return change


def _within(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it; a component of ``root`` may be a glob
    (``.git/modules/*/config``), as protected names are."""
    parts, pattern = path.split("/"), root.split("/")
    return len(parts) >= len(pattern) and all(
        fnmatch.fnmatchcase(part, glob) for part, glob in zip(parts, pattern, strict=False)
    )


def record_lower(changeset: Changeset, since_ns: int) -> bool:
    """Record what the project holds under every change seen for the first time (once per
    path: the first record is the "before"). True when something new was recorded."""
    known = changeset.meta.setdefault("records", {})
    added = False
    ignore = changeset.meta.get("placeholders", ())
    for entry in scan(changeset.upper, changeset.project, ignore=ignore):
        path = entry.change.path
        if path in known or not os.path.lexists(changeset.project / path):
            continue  # recorded already, or an addition: the project must still lack it
        known[path] = records.snapshot(changeset.project / path, since_ns)
        added = True
    return added


def diff(changeset: Changeset, paths: Iterable[str] | None = None) -> str:
    """The unified diff of the changes (all, or those ``paths`` select)."""
    chosen = select(entries(changeset), paths)
    return "".join(unified(entry, changeset.project) for entry in chosen)


def apply(changeset: Changeset, paths: Iterable[str] | None = None) -> ApplyResult:
    """Apply the changes ``paths`` select (all when None) and drop them from the changeset;
    a changeset with nothing left is removed. Raises ApplyConflict (nothing written) when the
    project changed under a chosen path since the run. The caller holds the changeset's lock
    and no command is using its layer."""
    current = entries(changeset)
    if not current:
        raise UsageError(
            f"changeset {changeset.id} holds no changes", fix="discard it: nothing to apply"
        )
    chosen = select(current, paths)
    refused = tuple(e.change for e in chosen if e.change.refused)
    wanted = [e for e in chosen if not e.change.refused]
    known = changeset.meta.get("records", {})
    conflicts = check(changeset.project, wanted, known)
    if conflicts:
        raise ApplyConflict(conflicts, changeset.id)
    owner = _owner(changeset.project)
    identity = changeset.meta.get("project_identity", [])
    done = apply_entries(changeset.project, identity, wanted, owner=owner)
    if len(done) == len(current):
        changeset.remove()  # everything is in the project now
    else:
        _forget(changeset, done)
        if not entries(changeset):
            changeset.remove()
    return ApplyResult(applied=tuple(e.change for e in done), refused=refused)


def _owner(project: Path) -> tuple[int, int] | None:
    """As root, new entries belong to the project's owner (as the jail's writes would)."""
    if os.geteuid() != 0:
        return None
    info = os.stat(project)
    return info.st_uid, info.st_gid


def _forget(changeset: Changeset, done: Sequence[Entry]) -> None:
    """Drop applied changes from the upper dir (the project has them now) and their records.
    Inside a directory that replaced the project's as a whole, the copy stays: it equals the
    project now, and removing it would hide the project's entry."""
    known = changeset.meta.get("records", {})
    for entry in sorted(done, key=lambda e: e.change.path.count("/"), reverse=True):
        known.pop(entry.change.path, None)
        if entry.replaced_dir is not None:
            continue
        upper = changeset.upper / entry.change.path
        try:
            if entry.change.type == "directory" and entry.change.kind != DELETED:
                os.rmdir(upper)  # only once empty: what remains below is still pending
            else:
                os.unlink(upper)
        except OSError:
            continue
    changeset.save()


def discard(changeset: Changeset) -> None:
    """Drop the changeset and everything in it; the project is untouched."""
    changeset.remove()


def resolve_selection(changeset: Changeset, paths: Sequence[str], cwd: Path) -> list[str]:
    """Paths the operator typed (relative to ``cwd``, or absolute) as paths in the project."""
    project = changeset.project
    chosen = []
    for typed in paths:
        absolute = Path(os.path.normpath(cwd / typed))
        if absolute != project and project not in absolute.parents:
            raise UsageError(
                f"{typed} is not inside the changeset's project {project}",
                fix="name paths inside the project (relative to it or to the current directory)",
            )
        chosen.append(os.path.relpath(absolute, project) if absolute != project else "")
    return chosen
