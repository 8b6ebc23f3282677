"""The ``stockade`` command line: a thin layer that parses flags, calls the API and renders.

Subcommands live one module per command under ``stockade.cli`` and are imported only when
invoked, so ``stockade run -- true`` pays for click and the run path, nothing else.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from stockade.errors import StockadeError

# name -> "module:attribute"; each module holds one click command (or group).
COMMANDS: dict[str, str] = {
    "check": "stockade.cli.check:check",
    "classify": "stockade.cli.classify:classify",
    "config": "stockade.cli.config:config",
    "doctor": "stockade.cli.doctor:doctor",
    "exec": "stockade.cli.exec:exec_command",
    "ledger": "stockade.cli.ledger:ledger",
    "mcp": "stockade.cli.mcp:mcp",
    "permissions": "stockade.cli.permissions:permissions",
    "run": "stockade.cli.run:run",
    "status": "stockade.cli.status:status",
    "trust": "stockade.cli.trust:trust",
}


class LazyGroup(click.Group):
    """A click group that imports a subcommand's module only when that subcommand runs."""

    def __init__(self, *args: Any, lazy_commands: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy_commands = lazy_commands

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = self._lazy_commands.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, attribute = target.split(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(package_name="stockade")
def cli() -> None:
    """stockade: decide whether an agent's shell command may run, and confine it when it does."""


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning stockade's own errors into one clear line + exit code."""
    try:
        result = cli.main(args=argv, prog_name="stockade", standalone_mode=False)
    except StockadeError as error:
        report_error(error)
        return error.exit_code
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        error.show()
        return 2 if isinstance(error, click.UsageError) else error.exit_code
    except click.exceptions.Abort:
        click.echo("stockade: aborted", err=True)
        return 130
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one clear line, the traceback only on request
        if os.environ.get("STOCKADE_DEBUG"):
            raise
        click.echo(f"stockade: internal error: {type(error).__name__}: {error}", err=True)
        click.echo("  fix: this is a bug; rerun with STOCKADE_DEBUG=1 and report it", err=True)
        return 70
    return result if isinstance(result, int) else 0


def report_error(error: StockadeError) -> None:
    """Print ``stockade: <message>`` and, on its own line, the fix."""
    click.echo(f"stockade: {error.message}", err=True)
    if error.fix:
        click.echo(f"  fix: {error.fix}", err=True)


if __name__ == "__main__":
    sys.exit(main())
