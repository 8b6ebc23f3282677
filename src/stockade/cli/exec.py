"""``stockade exec 'CMD'``: the agent path - classify, gate, prompt (or headless), sandbox, ledger.

The verdict line goes to stderr before the command runs; a refusal exits 126 with the reason
and the way out. With a terminal a person answers prompts; without one (an agent calling this)
anything that would prompt is denied.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from stockade.cli.gate_options import (
    autonomy_options,
    gate_for,
    is_interactive,
    settings_with_autonomy,
)
from stockade.cli.options import ignored_notice, sandbox_for, sandbox_options
from stockade.cli.sandbox_setup import gate_network
from stockade.errors import PermissionDenied, UsageError

if TYPE_CHECKING:  # pragma: no cover
    from stockade.permissions.verdict import Decision
    from stockade.runner import RunResult


def shell_argv(command: str) -> list[str]:
    """``bash -c CMD`` when bash exists (what the classifier models), else ``/bin/sh -c``."""
    from stockade.tool_calls import detect_shell

    return [detect_shell().path, "-c", command]


@click.command(name="exec")
@sandbox_options
@autonomy_options
@click.option(
    "--escape-sandbox",
    "escape",
    is_flag=True,
    default=False,
    help="Run this one command outside the sandbox (always asks; denied when headless).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Kill the whole process tree after this long (exit 124).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Capture the output and print verdict, decision and result as one JSON object.",
)
@click.argument("command")
def exec_command(
    command: str, escape: bool, timeout: float | None, as_json: bool, **options: object
) -> int:
    """Decide whether COMMAND may run (risk tier + autonomy + rules), then run it confined.

    COMMAND is one shell string:  stockade exec 'pytest -q && ruff check .'
    """
    if not command.strip():
        raise UsageError("empty command", fix="pass the command as one string: stockade exec 'ls'")
    interactive = is_interactive(options)
    settings = settings_with_autonomy(options)
    notice = ignored_notice(settings)
    if notice:
        click.echo(notice, err=True)
    with sandbox_for(settings) as sandbox:
        gate = gate_for(settings, options, posture=sandbox.posture)
        if gate.autonomy.warning:
            click.echo(f"stockade: warning: {gate.autonomy.warning}", err=True)
        verdict = gate.check(command, escape=escape, cwd=os.getcwd())
        prompt = None
        if interactive:
            from stockade.permissions.prompt import TerminalPrompt

            prompt = TerminalPrompt()
        gate_network(sandbox, gate, prompt)  # allowlist: unlisted hosts go to the gate too
        decision = gate.decide(verdict, prompt)
        if not decision.allowed:
            if as_json:
                click.echo(json.dumps(_decision_dict(decision, None, None), indent=2))
                click.echo(f"stockade: {decision.line()}", err=True)
                return PermissionDenied.exit_code
            raise PermissionDenied(decision.line(), fix=decision.fix)
        click.echo(f"stockade: {decision.line()}", err=True)
        runner = sandbox
        if escape:
            from stockade.runner import Sandbox

            runner = Sandbox(
                settings.policy_request(cwd=Path.cwd()),
                backend="none",
                limits=settings.limits(wall_timeout_default=None),
            )
            click.echo("stockade: WARNING sandbox escape: running UNCONFINED", err=True)
        elif not sandbox.posture.confined:
            click.echo(
                "stockade: WARNING running UNCONFINED - " + "; ".join(sandbox.posture.gaps),
                err=True,
            )
        started = time.monotonic()
        argv = shell_argv(command)
        try:
            result = runner.run(argv, timeout=timeout, stream=not as_json, forward_signals=True)
        finally:
            if runner is not sandbox:
                runner.close()
        if decision.ledger_id is not None:
            gate.ledger.finish(
                decision.ledger_id, exit_code=result.exit_code, duration=time.monotonic() - started
            )
    if result.timed_out:
        seconds = timeout if timeout is not None else sandbox.limits.wall_timeout_s or 0
        click.echo(f"stockade: timed out after {seconds:g}s; the process tree was killed", err=True)
    if as_json:
        click.echo(json.dumps(_decision_dict(decision, result, argv[0]), indent=2))
    return result.exit_code


def _decision_dict(
    decision: Decision, result: RunResult | None, shell: str | None
) -> dict[str, Any]:
    """What ``exec --json`` prints: the verdict, the decision and, when it ran, the result."""
    from stockade.cli.operator_run import run_result_dict

    verdict = decision.verdict
    return {
        "command": verdict.action,
        "allowed": decision.allowed,
        "outcome": verdict.outcome.value,
        "tier": verdict.tier.label,
        "source": str(decision.source),
        "reason": decision.reason,
        "fix": decision.fix,
        "answer": decision.answer.value if decision.answer else None,
        "remembered": [f"{r.namespace}:{r.pattern}" for r in decision.remembered],
        "autonomy": verdict.autonomy.level.value,
        "escape": verdict.escape,
        "ledger_id": decision.ledger_id,
        "shell": shell,
        "result": run_result_dict(result) if result is not None else None,
    }
