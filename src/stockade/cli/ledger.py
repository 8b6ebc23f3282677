"""``stockade ledger``: every decision recorded, filtered by session and time; --json for tools."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from stockade.errors import UsageError
from stockade.printable import DISPLAY_LIMIT, clipped

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, *, now: float | None = None) -> float:
    """``30s``/``10m``/``2h``/``3d``/``1w`` ago, or an ISO date/time (local time)."""
    now = time.time() if now is None else now
    relative = _RELATIVE.match(text.lower())
    if relative:
        return now - float(relative.group(1)) * _UNITS[relative.group(2)]
    try:
        return datetime.fromisoformat(text.strip()).timestamp()
    except ValueError:
        raise UsageError(
            f"--since {text!r} is not a time",
            fix="use a duration like 10m, 2h, 3d or a date like 2025-01-31 or 2025-01-31T09:00",
        ) from None


@click.command()
@click.option("--session", default=None, metavar="ID", help="Only this session (with its report).")
@click.option("--since", default=None, metavar="WHEN", help="Only since: 10m, 2h, 3d, or a date.")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Only decisions in this project (default: every project).",
)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print entries (and report) as JSON.")
def ledger(
    session: str | None, since: str | None, project: Path | None, limit: int, as_json: bool
) -> int:
    """List recorded decisions: allowed, denied, prompted (and the answer), bypassed.

    Long commands are clipped and control characters escaped; --json has them whole."""
    from stockade.permissions.ledger import Ledger
    from stockade.permissions.rules import canonical_project

    store = Ledger()
    since_time = parse_since(since) if since else None
    key = canonical_project(project) if project is not None else None
    entries = store.entries(session=session, since=since_time, project=key, limit=limit)
    report = store.report(session) if session else None
    if as_json:
        data: dict[str, Any] = {"entries": [e.to_dict() for e in entries]}
        if report is not None:
            data["report"] = report.to_dict()
        click.echo(json.dumps(data, indent=2))
        return 0
    if not entries:
        scope = f" for session {clipped(session, 40)}" if session else ""
        click.echo("no decisions recorded" + scope)
    for entry in entries:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
        answer = f" ({entry.answer})" if entry.answer else ""
        code = "" if entry.exit_code is None else f" exit {entry.exit_code}"
        click.echo(
            f"{stamp}  {clipped(entry.session, 40)}  {entry.decision}{answer}{code}  "
            f"{entry.tier or '-'}  {clipped(entry.action)}"
        )
        click.echo(
            f"    {clipped(entry.reason, 2 * DISPLAY_LIMIT)} "
            f"[{clipped(entry.source, 80)}; autonomy {entry.autonomy or '-'}]"
        )
    if report is not None:
        click.echo(report.summary())
    return 0
