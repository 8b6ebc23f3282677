"""``stockade quarantine [restore ID]``: what the post-run guard moved aside, and putting it back.

The guard moves planted code (an active git hook, a repository's ``core.fsmonitor``, an agent
config that starts a server) out of the writable roots when a command ends; each item keeps
where it came from and why. Restoring is the user's decision, on the host, never the jail's.
"""

from __future__ import annotations

import json
import time

import click

from stockade.printable import printable


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the items as JSON.")
@click.pass_context
def quarantine(context: click.Context, as_json: bool) -> None:
    """List what the post-run guard moved aside (newest last)."""
    if context.invoked_subcommand is not None:
        return
    from stockade.sandbox.quarantine import records

    items = records()
    if as_json:
        click.echo(json.dumps([item.to_dict() for item in items], indent=2))
        return
    if not items:
        click.echo("nothing in quarantine")
        return
    for item in items:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(item.time))
        original, reason = printable(str(item.original)), printable(item.reason)
        click.echo(f"{item.id}  {when}  {item.action:6s}  {original}\n    {reason}")


@quarantine.command()
@click.argument("item_id", metavar="ID")
@click.option("--replace", is_flag=True, help="Replace what is at the original path now.")
def restore(item_id: str, replace: bool) -> None:
    """Move item ID back to where it came from."""
    from stockade.sandbox.quarantine import restore as put_back

    record = put_back(item_id, replace=replace)
    click.echo(f"restored {printable(str(record.original))}")
