"""``stockade status``: what a command would be confined by here, and why if it cannot be."""

from __future__ import annotations

import json
from typing import Any

import click

from stockade.cli.options import sandbox_from_options, sandbox_options
from stockade.errors import SandboxUnavailable


@click.command()
@sandbox_options
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(as_json: bool, **options: object) -> int:
    """Show the backend, posture, writable roots, masked paths and network mode."""
    try:
        with sandbox_from_options(options) as sandbox:
            policy = sandbox.policy
            data: dict[str, Any] = {
                "available": True,
                "backend": sandbox.backend.name,
                "posture": sandbox.posture.to_dict(),
                "project": str(policy.project),
                "writable_roots": [str(p) for p in policy.writable],
                "masked_paths": [str(m.path) for m in policy.masked],
                "protected_paths": [str(p.path) for p in policy.protected],
                "network": policy.network.value,
                "env_dropped": list(policy.dropped_env),
            }
    except SandboxUnavailable as error:
        data = {"available": False, "reason": error.message, "fix": error.fix}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return 0
    from rich.console import Console

    console = Console(highlight=False)
    if not data["available"]:
        console.print(f"[red]no sandbox available[/red]: {data['reason']}")
        console.print(f"  [yellow]fix:[/yellow] {data['fix']}")
        return 0
    console.print(f"[bold]posture[/bold]   {data['posture']['summary']}")
    for gap in data["posture"]["gaps"]:
        console.print(f"  [yellow]not enforced:[/yellow] {gap}")
    console.print(f"[bold]network[/bold]   {data['network']}")
    console.print("[bold]writable[/bold]  " + "\n          ".join(data["writable_roots"]))
    console.print("[bold]masked[/bold]    " + ("\n          ".join(data["masked_paths"]) or "-"))
    console.print(
        f"[bold]protected[/bold] {len(data['protected_paths'])} paths read-only "
        "inside writable roots"
    )
    if data["env_dropped"]:
        console.print("[bold]env[/bold]       dropped " + ", ".join(data["env_dropped"]))
    return 0
