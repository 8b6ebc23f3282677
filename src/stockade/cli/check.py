"""``stockade check 'CMD'``: the verdict and why, per segment - without running anything."""

from __future__ import annotations

import json
from typing import Any

import click

from stockade.cli.gate_options import (
    autonomy_options,
    gate_for,
    is_interactive,
    settings_with_autonomy,
)
from stockade.cli.options import sandbox_for, sandbox_options
from stockade.errors import SandboxUnavailable, UsageError
from stockade.permissions.gate import Outcome, Verdict, headless_fix
from stockade.permissions.prompt import stored_lines
from stockade.printable import clipped, printable


@click.command()
@sandbox_options
@autonomy_options
@click.option(
    "--escape-sandbox", "escape", is_flag=True, default=False, help="Judge it as an escape."
)
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON.")
@click.argument("command")
def check(command: str, escape: bool, as_json: bool, **options: object) -> int:
    """Show what `stockade exec COMMAND` would decide, and why. Runs nothing, records nothing."""
    import os

    if not command.strip():
        raise UsageError("empty command", fix="pass the command as one string: stockade check 'ls'")
    settings = settings_with_autonomy(options)
    sandbox_note = None
    try:
        with sandbox_for(settings) as sandbox:
            posture = sandbox.posture
    except SandboxUnavailable as error:  # exec would refuse; the verdict is still useful
        posture = None
        sandbox_note = f"no sandbox: {error.message} (exec would refuse to run)"
    gate = gate_for(settings, options, posture=posture)
    verdict = gate.check(command, escape=escape, cwd=os.getcwd())
    headless = not is_interactive(options)
    fix = headless_fix(verdict) if headless and verdict.outcome is Outcome.ASK else None
    if as_json:
        click.echo(json.dumps(_to_dict(verdict, headless, fix, sandbox_note), indent=2))
        return 0
    click.echo(verdict.line())
    for note in (gate.autonomy.warning, sandbox_note):
        if note:
            click.echo(f"  note: {note}")
    click.echo(f"  autonomy: {gate.autonomy.level} (posture: {_posture(posture)})")
    if len(verdict.parts) > 1 or verdict.parts[0].text != verdict.action:
        for part in verdict.parts:
            click.echo(f"  - {part.outcome:5} {part.tier.label:11} {clipped(part.text)}")
            click.echo(f"    {printable(part.reason)} [{part.source}]")
    if verdict.outcome is Outcome.ASK:
        offered = ", ".join(c.value for c in verdict.choices)
        if headless:
            click.echo("  headless: would be denied (nobody can answer the prompt)")
            if fix:
                click.echo(f"  fix: {fix}")
        else:
            click.echo(f"  would prompt: {offered}")
            for line in stored_lines(verdict.prompt_request()):
                click.echo(line)
    return 0


def _posture(posture: Any) -> str:
    return "no sandbox" if posture is None else str(posture.summary())


def _to_dict(
    verdict: Verdict, headless: bool, fix: str | None, sandbox_note: str | None
) -> dict[str, Any]:
    return {
        "command": verdict.action,
        "outcome": verdict.outcome.value,
        "tier": verdict.tier.label,
        "source": str(verdict.source),
        "reason": verdict.reason,
        "autonomy": verdict.autonomy.level.value,
        "requested_autonomy": verdict.autonomy.requested.value,
        "autonomy_warning": verdict.autonomy.warning,
        "escape": verdict.escape,
        "choices": [c.value for c in verdict.choices],
        "remembers": list(verdict.remembers()) if verdict.outcome is Outcome.ASK else [],
        "remembers_exact": (
            list(verdict.remembers(exact=True)) if verdict.outcome is Outcome.ASK else []
        ),
        "headless": headless,
        "headless_outcome": "deny" if headless and verdict.outcome is Outcome.ASK else None,
        "fix": fix,
        "sandbox": sandbox_note,
        "segments": [
            {
                "text": p.text,
                "tier": p.tier.label,
                "outcome": p.outcome.value,
                "source": str(p.source),
                "reason": p.reason,
            }
            for p in verdict.parts
        ],
    }
