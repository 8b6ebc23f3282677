"""``stockade doctor``: live proof of every protection, with the fix for each failure;
``--deep`` runs the escape battery instead."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from stockade.cli.options import problems_from_options, sandbox_options, settings_from_options
from stockade.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from stockade.doctor import DoctorReport
    from stockade.doctor.battery import DeepReport

OUTCOME_MARKS = {
    "held": "[green]✓[/green]",
    "escaped": "[red]✗[/red]",
    "error": "[red]![/red]",
    "not-applicable": "[dim]–[/dim]",
}


@click.command()
@sandbox_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--deep",
    is_flag=True,
    help="Run the escape battery: every claim tried for real, judged from the host side.",
)
@click.option(
    "--all", "show_all", is_flag=True, help="With --deep: list every attempt, not only failures."
)
def doctor(as_json: bool, deep: bool, show_all: bool, **options: object) -> int:
    """Prove enforcement with live probes; exit 1 if any claimed protection does not hold
    (with --deep: if any attempt escaped or could not run), 2 if the settings are invalid."""
    from stockade.doctor import (
        DoctorReport,
        invalid_settings_check,
        run_doctor,
        settings_checks,
    )

    try:
        settings = settings_from_options(options)
    except ConfigError as error:
        from stockade.settings import Problem

        problems = problems_from_options(options)
        problems = problems or [Problem("settings", None, "", error.message, error.fix)]
        report = DoctorReport(
            checks=[invalid_settings_check(problems)],
            settings={"valid": False, "problems": [p.to_dict() for p in problems]},
        )
        _render(report, as_json)
        return error.exit_code
    request = settings.policy_request(cwd=Path.cwd())
    if deep:
        from stockade.doctor.battery import run_deep

        deep_report = run_deep(request, backend=settings.backend)
        _render_deep(deep_report, as_json, show_all)
        return 0 if deep_report.ok else 1
    report = run_doctor(
        request,
        backend=settings.backend,
        domain_policy=settings.domain_policy() if request.network == "allowlist" else None,
    )
    report.checks[:0] = settings_checks(settings)
    report.settings = settings.summary()
    _render(report, as_json)
    return 0 if report.ok else 1


def _render(report: DoctorReport, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    from stockade.cli.render import console as make_console
    from stockade.cli.render import safe

    console = make_console()
    for check in report.checks:
        mark = "[green]✓[/green]" if check.ok else "[red]✗[/red]"
        if not check.claimed:
            mark = "[dim]–[/dim]"
        console.print(f"{mark} {check.name}: {safe(check.detail)}")
        if not check.ok and check.fix:
            console.print(f"    [yellow]fix:[/yellow] {safe(check.fix)}")
    verdict = (
        "[green]all protections hold[/green]" if report.ok else "[red]protections missing[/red]"
    )
    console.print(f"\n{verdict}")


def _render_deep(report: DeepReport, as_json: bool, show_all: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    from rich.table import Table

    from stockade.cli.render import console as make_console
    from stockade.cli.render import safe
    from stockade.doctor.attempts import CLASSES

    console = make_console()
    console.print(
        f"escape battery: {len(report.results)} attempts, backend {report.backend}, "
        f"as {report.identity}, {report.duration:.1f} s"
    )
    for scenario, summary in report.jails.items():
        console.print(f"  [dim]{scenario} jail:[/dim] {safe(summary)}")
    table = Table(box=None, pad_edge=False, show_edge=False)
    table.add_column("class")
    for column in ("held", "escaped", "n/a", "error"):
        table.add_column(column, justify="right")
    counts = report.by_class()
    for klass in CLASSES:
        row = counts.get(klass)
        if row is not None:
            table.add_row(
                klass,
                str(row["held"]),
                f"[red]{row['escaped']}[/red]" if row["escaped"] else "0",
                str(row["not-applicable"]),
                f"[red]{row['error']}[/red]" if row["error"] else "0",
            )
    console.print(table)
    shown = [r for r in report.results if show_all or r.outcome in ("escaped", "error")]
    if shown:
        console.print()
    for result in shown:
        console.print(
            f"{OUTCOME_MARKS[result.outcome]} {result.name} [dim]({result.outcome})[/dim]: "
            f"{safe(result.does)}"
        )
        console.print(
            f"    {safe(result.detail)}", style="dim" if result.outcome == "held" else None
        )
    totals = report.counts()
    if report.ok:
        verdict = (
            f"[green]every attempt held[/green] ({totals['not-applicable']} not applicable here)"
        )
    else:
        verdict = (
            f"[red]{totals['escaped']} escaped, {totals['error']} could not be judged[/red] "
            f"({totals['held']} held, {totals['not-applicable']} not applicable)"
        )
    console.print(f"\n{verdict}")
