"""``stockade run``: the operator path - run a command confined, streaming its output."""

from __future__ import annotations

import sys
from contextlib import nullcontext, redirect_stdout
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from stockade.cli.options import (
    ignored_notice,
    sandbox_for,
    sandbox_options,
    settings_from_options,
)


@click.command(context_settings={"allow_interspersed_args": False, "ignore_unknown_options": False})
@sandbox_options
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="SECONDS",
    help="Kill the whole confined process tree after this long (exit 124).",
)
@click.option(
    "--stdio",
    is_flag=True,
    default=False,
    help="For long-lived stdio programs such as MCP servers: COMMAND talks over stockade's own "
    "stdin/stdout (no copy, no buffering), stockade writes nothing to stdout, no wall-clock "
    "limit applies, signals are forwarded.",
)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command: tuple[str, ...], timeout: float | None, stdio: bool, **options: object) -> int:
    """Run COMMAND confined: writes only inside the project and its writable roots, secrets
    masked, network denied unless allowed, own PID namespace, scrubbed environment.

    Put the command after `--`:  stockade run -- make test
    """
    if not command:
        raise click.UsageError("no command given; put it after --, e.g. stockade run -- ls")
    if stdio and timeout is not None:
        raise click.UsageError("--stdio runs a long-lived program: drop --timeout")
    settings = settings_from_options(options)
    notice = ignored_notice(settings)
    if notice:
        click.echo(notice, err=True)
    # Under --stdio, stdout belongs to COMMAND: anything stockade itself prints goes to stderr.
    with redirect_stdout(sys.stderr) if stdio else nullcontext(), sandbox_for(settings) as sandbox:
        if stdio:  # even a configured [sandbox.limits] wall_timeout_s
            sandbox.limits = replace(sandbox.limits, wall_timeout_s=None)
        if not sandbox.posture.confined:
            click.echo(
                "stockade: WARNING running UNCONFINED - " + "; ".join(sandbox.posture.gaps),
                err=True,
            )
        record = _record_bypass(command, sandbox)
        result = sandbox.run(list(command), timeout=timeout, stream=True, forward_signals=True)
    if record is not None:
        record(result.exit_code, result.duration)
    if result.timed_out:
        seconds = timeout if timeout is not None else sandbox.limits.wall_timeout_s or 0
        click.echo(
            f"stockade: timed out after {seconds:g}s; the confined process tree was killed",
            err=True,
        )
    return result.exit_code


if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable


def _record_bypass(command: tuple[str, ...], sandbox: Any) -> Callable[[int, float], None] | None:
    """Ledger entry for the operator path (decision ``bypassed``); sqlite is imported only here,
    so the run path stays fast. A ledger failure warns and never stops the operator's run."""
    from stockade.errors import StockadeError
    from stockade.permissions.ledger import record_operator_run

    try:
        ledger, entry_id = record_operator_run(
            command, project=str(sandbox.policy.project), posture=sandbox.posture.summary()
        )
    except StockadeError as error:
        click.echo(f"stockade: warning: not recorded in the ledger: {error}", err=True)
        return None

    def finish(exit_code: int, duration: float) -> None:
        try:
            ledger.finish(entry_id, exit_code=exit_code, duration=duration)
        except StockadeError as error:
            click.echo(f"stockade: warning: ledger: {error}", err=True)

    return finish
