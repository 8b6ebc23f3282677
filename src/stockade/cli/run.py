"""``stockade run``: the operator path - run a command confined, streaming its output."""

from __future__ import annotations

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
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command: tuple[str, ...], timeout: float | None, **options: object) -> int:
    """Run COMMAND confined: writes only inside the project and its writable roots, secrets
    masked, network denied unless allowed, own PID namespace, scrubbed environment.

    Put the command after `--`:  stockade run -- make test
    """
    if not command:
        raise click.UsageError("no command given; put it after --, e.g. stockade run -- ls")
    settings = settings_from_options(options)
    notice = ignored_notice(settings)
    if notice:
        click.echo(notice, err=True)
    with sandbox_for(settings) as sandbox:
        if not sandbox.posture.confined:
            click.echo(
                "stockade: WARNING running UNCONFINED - " + "; ".join(sandbox.posture.gaps),
                err=True,
            )
        result = sandbox.run(list(command), timeout=timeout, stream=True, forward_signals=True)
    if result.timed_out:
        seconds = timeout if timeout is not None else sandbox.limits.wall_timeout_s or 0
        click.echo(
            f"stockade: timed out after {seconds:g}s; the confined process tree was killed",
            err=True,
        )
    return result.exit_code
