"""``stockade changes``: the changesets that review runs and sessions kept - list, show (with a
diff), apply (all or some paths) or discard. The project changes only on ``apply``.

The paths, link targets and commands in a changeset are the jail's own text: the listings print
them through :mod:`stockade.printable` (control and bidi characters escaped, commands clipped),
so a file name cannot repaint the review; ``--json`` carries them whole."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from stockade.cli.options import project_option
from stockade.printable import clipped, printable
from stockade.review.report import readable_size, summary_line

if TYPE_CHECKING:  # pragma: no cover
    from stockade.review.scan import Change
    from stockade.review.store import Changeset


def _project(project: Path | None) -> Path:
    return Path(os.path.realpath(project if project is not None else os.getcwd()))


def _entry_dict(changeset: Changeset, with_changes: bool = True) -> dict[str, Any]:
    from stockade.review.changesets import changes

    data: dict[str, Any] = {
        "id": changeset.id,
        "created": time.strftime(
            "%Y-%m-%dT%H:%M:%S%z", time.localtime(float(changeset.meta.get("created", 0)))
        ),
        "command": changeset.meta.get("command", ""),
        "state": changeset.state,
        "project": str(changeset.project),
        "backend": changeset.meta.get("backend"),
        "posture": changeset.meta.get("posture"),
    }
    if with_changes:
        data["changes"] = [_change_dict(c) for c in changes(changeset)]
    return data


def _change_dict(change: Change) -> dict[str, Any]:
    data: dict[str, Any] = {
        "path": change.path,
        "kind": change.kind,
        "size": change.size,
        "type": change.type,
    }
    if change.refused:
        data["refused"] = change.refused
    return data


STATE_NOTES = {
    "running": "its run or session is still going",
    "interrupted": "its run was killed; what it wrote before is kept",
}


@click.group(invoke_without_command=True)
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print the changesets as JSON.")
@click.pass_context
def changes(ctx: click.Context, project: Path | None, as_json: bool) -> int:
    """List the project's pending changesets (newest first): what review runs
    (`stockade run --review`) and review sessions changed, kept out of the project until you
    apply them."""
    if ctx.invoked_subcommand is not None:
        return 0
    from stockade.review.store import changesets

    root = _project(project)
    found = [
        c
        for c in changesets()
        if c.project == root or (project is None and root.is_relative_to(c.project))
    ]
    if as_json:
        click.echo(json.dumps({"changesets": [_entry_dict(c) for c in found]}, indent=2))
        return 0
    if not found:
        click.echo(f"no pending changesets for {printable(str(root))}")
        return 0
    from stockade.review.changesets import changes as changes_of

    for changeset in found:
        data = _entry_dict(changeset, with_changes=False)
        note = STATE_NOTES.get(changeset.state)
        state = f"  [{changeset.state}: {note}]" if note else ""
        click.echo(f"{changeset.id}  {data['created']}  {clipped(data['command'])}{state}")
        click.echo(f"    {summary_line(changes_of(changeset))}")
    return 0


@changes.command("show")
@click.argument("changeset_id", metavar="ID")
@click.option("--diff", "with_diff", is_flag=True, help="Print a unified diff of text files.")
@click.option("--json", "as_json", is_flag=True, help="Print the changeset as JSON.")
def show(changeset_id: str, with_diff: bool, as_json: bool) -> int:
    """What changeset ID holds: every change with its kind and size, what made it."""
    from stockade.review.changesets import diff, entries
    from stockade.review.diff import describe
    from stockade.review.store import Changeset

    changeset = Changeset.open(changeset_id)
    if as_json:
        click.echo(json.dumps(_entry_dict(changeset), indent=2))
        return 0
    found = entries(changeset)
    data = _entry_dict(changeset, with_changes=False)
    note = STATE_NOTES.get(changeset.state)
    click.echo(f"changeset {changeset.id} of {printable(str(changeset.project))} "
               f"({changeset.state}" + (f": {note}" if note else "") + ")")  # fmt: skip
    click.echo(f"  made {data['created']} by: {clipped(data['command'])}")
    click.echo(f"  under: {printable(str(data['posture']))}")
    click.echo(f"  {summary_line([e.change for e in found])}")
    for entry in found:
        change = entry.change
        sized = change.type != "directory" or change.kind == "deleted"  # what it held
        size = f"  {readable_size(change.size)}" if sized else ""
        extra = printable(describe(entry, changeset.project))
        refused = f"  REFUSED: {printable(change.refused)}" if change.refused else ""
        shown = printable(change.path) + ("/" if change.type == "directory" else "")
        click.echo(f"  {change.kind:<8}  {shown}{size}{'  ' + extra if extra else ''}{refused}")
    if with_diff and found:
        click.echo("")
        click.echo(diff(changeset), nl=False)
    return 0


@changes.command("apply")
@click.argument("changeset_id", metavar="ID")
@click.argument("paths", nargs=-1, metavar="[PATH]...")
def apply(changeset_id: str, paths: tuple[str, ...]) -> int:
    """Apply changeset ID to the project: all of it, or only the PATHs (each with what is
    below it). Refused, with the list, when the project changed under a path since the run."""
    from stockade.review import changesets
    from stockade.review.store import Changeset

    changeset = Changeset.open(changeset_id)
    changeset.take()
    try:
        selection = changesets.resolve_selection(changeset, paths, Path.cwd()) if paths else None
        result = changesets.apply(changeset, selection)
    finally:
        changeset.release()
    click.echo(
        f"applied {len(result.applied)} change{'s' if len(result.applied) != 1 else ''} to "
        f"{printable(str(changeset.project))}: {summary_line(list(result.applied))}"
    )
    for change in result.refused:
        click.echo(f"  not applied: {printable(change.path)}: {printable(change.refused or '')}")
    if not changeset.directory.exists():
        click.echo(f"changeset {changeset.id} is fully applied and removed")
    else:
        rest = changeset.id
        click.echo(f"the rest stays in changeset {rest} (stockade changes show {rest})")
    return 0


@changes.command("discard")
@click.argument("changeset_id", metavar="ID")
def discard(changeset_id: str) -> int:
    """Drop changeset ID and everything in it; the project stays as it is."""
    from stockade.review import changesets
    from stockade.review.store import Changeset

    changeset = Changeset.open(changeset_id)
    changeset.take()
    count = len(changesets.changes(changeset))
    changesets.discard(changeset)
    click.echo(f"discarded changeset {changeset_id} ({count} change{'s' if count != 1 else ''}); "
               "the project is unchanged")  # fmt: skip
    return 0
