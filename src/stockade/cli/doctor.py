"""``stockade doctor``: live proof of every protection, with the fix for each failure."""

from __future__ import annotations

import json

import click

from stockade.cli.options import backend_from_options, request_from_options, sandbox_options


@click.command()
@sandbox_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def doctor(as_json: bool, **options: object) -> int:
    """Prove enforcement with live probes; exit 1 if any claimed protection does not hold."""
    from stockade.doctor import run_doctor

    report = run_doctor(request_from_options(options), backend=backend_from_options(options))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return 0 if report.ok else 1
    from rich.console import Console

    console = Console(highlight=False)
    for check in report.checks:
        mark = "[green]✓[/green]" if check.ok else "[red]✗[/red]"
        if not check.claimed:
            mark = "[dim]–[/dim]"
        console.print(f"{mark} {check.name}: {check.detail}")
        if not check.ok and check.fix:
            console.print(f"    [yellow]fix:[/yellow] {check.fix}")
    verdict = (
        "[green]all protections hold[/green]" if report.ok else "[red]protections missing[/red]"
    )
    console.print(f"\n{verdict}")
    return 0 if report.ok else 1
