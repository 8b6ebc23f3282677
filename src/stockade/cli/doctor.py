"""``stockade doctor``: live proof of every protection, with the fix for each failure."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from stockade.cli.options import problems_from_options, sandbox_options, settings_from_options
from stockade.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from stockade.doctor import DoctorReport


@click.command()
@sandbox_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def doctor(as_json: bool, **options: object) -> int:
    """Prove enforcement with live probes; exit 1 if any claimed protection does not hold
    (2 if the settings are invalid)."""
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

    console = make_console()
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
