"""The words for a changeset: sizes, the one-line summary, what ``run --review`` prints when
its command is done. No click here: ``stockade run`` (its fast path) prints these too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from stockade.review.scan import ADDED, DELETED, MODIFIED, Change


class Summary(NamedTuple):
    """Counts and bytes per kind, for the one-line report after a run."""

    added: int
    modified: int
    deleted: int
    bytes_added: int
    bytes_modified: int
    bytes_deleted: int
    refused: int

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.deleted)


def summary(found: Sequence[Change]) -> Summary:
    def of(kind: str) -> list[Change]:
        return [c for c in found if c.kind == kind]

    return Summary(
        added=len(of(ADDED)),
        modified=len(of(MODIFIED)),
        deleted=len(of(DELETED)),
        bytes_added=sum(c.size for c in of(ADDED)),
        bytes_modified=sum(c.size for c in of(MODIFIED)),
        bytes_deleted=sum(c.size for c in of(DELETED)),
        refused=sum(1 for c in found if c.refused),
    )


def readable_size(size: int) -> str:
    """1.5 KiB, 3.0 GiB, 12 B."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop returns


def summary_line(found: Sequence[Change]) -> str:
    """The one-line summary: 2 added (1.2 KiB), 1 modified (4 B), 1 deleted (2 B), and how
    many changes are refused."""
    counts = summary(found)
    parts = [
        f"{count} {kind} ({readable_size(size)})"
        for count, kind, size in (
            (counts.added, "added", counts.bytes_added),
            (counts.modified, "modified", counts.bytes_modified),
            (counts.deleted, "deleted", counts.bytes_deleted),
        )
        if count
    ]
    text = ", ".join(parts) or "no changes"
    if counts.refused:
        text += f"; {counts.refused} refused (protected path or special file: never applied)"
    return text


def report_kept(changeset_id: str | None) -> str:
    """What ``run --review`` prints when the command is done."""
    if changeset_id is None:
        return "stockade: review: the command changed nothing in the project"
    from stockade.review.changesets import changes
    from stockade.review.store import Changeset

    found = changes(Changeset.open(changeset_id))
    return (
        f"stockade: review: the project is untouched; the changes are kept as changeset "
        f"{changeset_id}: {summary_line(found)}\n"
        f"  stockade changes show {changeset_id} --diff | stockade changes apply "
        f"{changeset_id} [PATH...] | stockade changes discard {changeset_id}"
    )
