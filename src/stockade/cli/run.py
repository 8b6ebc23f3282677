"""``stockade run``: the operator path - run a command confined, streaming its output.

Plainly valid arguments never reach this click command: ``stockade.cli.main`` parses them
with the same flag table (``cli/flags.py``) and calls ``operator_run`` directly. click handles
help and every malformed invocation, with its usual messages.
"""

from __future__ import annotations

import click

from stockade.cli.flags import RUN_FLAGS, SANDBOX_FLAGS
from stockade.cli.operator_run import operator_run
from stockade.cli.options import with_flags


@click.command(context_settings={"allow_interspersed_args": False, "ignore_unknown_options": False})
@with_flags(SANDBOX_FLAGS)
@with_flags(RUN_FLAGS)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def run(command: tuple[str, ...], timeout: float | None, stdio: bool, **options: object) -> int:
    """Run COMMAND confined: writes only inside the project and its writable roots, secrets
    masked, network denied unless allowed, own PID namespace, scrubbed environment.

    Put the command after `--`:  stockade run -- make test

    \b
    An MCP server, with every tool call gated (mcp.<server>.<tool> rules):
      stockade run --stdio --gate --server-name github -- npx -y @modelcontextprotocol/server-github
    """
    if not command:
        raise click.UsageError("no command given; put it after --, e.g. stockade run -- ls")
    if stdio and timeout is not None:
        raise click.UsageError("--stdio runs a long-lived program: drop --timeout")
    if stdio and options.get("as_json"):
        raise click.UsageError("--json captures the output, --stdio hands it over: pass one")
    gate_only = [
        name
        for name, given in (
            ("--server-name", options.get("server_name") is not None),
            ("--autonomy", options.get("autonomy") is not None),
            ("--headless", bool(options.get("headless"))),
        )
        if given
    ]
    if options.get("gate") and not stdio:
        raise click.UsageError("--gate reads an MCP server's stdio: add --stdio")
    if gate_only and not options.get("gate"):
        raise click.UsageError(f"{', '.join(gate_only)} only apply with --stdio --gate")
    return operator_run(command, timeout=timeout, stdio=stdio, options=dict(options))
