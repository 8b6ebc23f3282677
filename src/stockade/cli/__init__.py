"""The ``stockade`` command line: a thin layer that parses flags, calls the API and renders.

Subcommands live one module per command under ``stockade.cli`` and are imported only when
invoked (``cli/app.py``); ``stockade run`` does not even import click (``main``).
"""

from __future__ import annotations

import os
import sys

from stockade.errors import StockadeError

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: the run helper's client must start fast
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# name -> "module:attribute"; each module holds one click command (or group).
COMMANDS: dict[str, str] = {
    "changes": "stockade.cli.changes:changes",
    "check": "stockade.cli.check:check",
    "classify": "stockade.cli.classify:classify",
    "config": "stockade.cli.config:config",
    "doctor": "stockade.cli.doctor:doctor",
    "exec": "stockade.cli.exec:exec_command",
    "ledger": "stockade.cli.ledger:ledger",
    "mcp": "stockade.cli.mcp:mcp",
    "permissions": "stockade.cli.permissions:permissions",
    "profile": "stockade.cli.profile:profile",
    "quarantine": "stockade.cli.quarantine:quarantine",
    "run": "stockade.cli.run:run",
    "status": "stockade.cli.status:status",
    "trust": "stockade.cli.trust:trust",
}


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning stockade's own errors into one clear line + exit code.

    ``stockade run`` first asks the run helper (``cli/run_client.py``), which keeps a warm
    jail and everything else loaded; without one, plainly valid arguments skip click
    altogether (see ``cli/flags.py``): it is the per-command path, and importing click costs
    as much as a confined ``true``."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["run"] and argv is None:
        from stockade.cli import run_client

        code = run_client.run(args[1:])
        if code is not None:
            return code
        try:
            return guarded(lambda: run_here(args))
        finally:
            run_client.start_missing_helper()
    return guarded(lambda: run_here(args))


def run_here(args: list[str]) -> int:
    """The command line in this process."""
    if args[:1] == ["run"]:
        parsed = run_arguments(args[1:])
        if parsed is not None:
            from stockade.cli.operator_run import operator_run

            options, command = parsed
            return operator_run(
                command, timeout=options.pop("timeout"), stdio=options.pop("stdio"),
                options=options,
            )  # fmt: skip
    return _click_main(args)


def run_arguments(args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """``stockade run ARGS`` parsed without click, or None when click must parse them."""
    from stockade.cli.flags import parse_run_arguments

    return parse_run_arguments(args)


def guarded(action: Callable[[], int]) -> int:
    """``action()``, with stockade's own errors as one line and their exit code, Ctrl-C as
    130, and a bug as one line (the traceback with ``STOCKADE_DEBUG=1``) and 70."""
    try:
        return action()
    except StockadeError as error:
        report_error(error)
        return error.exit_code
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one clear line, the traceback only on request
        if os.environ.get("STOCKADE_DEBUG"):
            raise
        _say(f"stockade: internal error: {type(error).__name__}: {error}")
        _say("  fix: this is a bug; rerun with STOCKADE_DEBUG=1 and report it")
        return 70


def _click_main(args: list[str]) -> int:
    import click

    from stockade.cli.app import cli

    try:
        result = cli.main(args=args, prog_name="stockade", standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        error.show()
        return 2 if isinstance(error, click.UsageError) else error.exit_code
    except click.exceptions.Abort:
        _say("stockade: aborted")
        return 130
    return result if isinstance(result, int) else 0


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def report_error(error: StockadeError) -> None:
    """Print ``stockade: <message>`` and, on its own line, the fix."""
    _say(f"stockade: {error.message}")
    if error.fix:
        _say(f"  fix: {error.fix}")


if __name__ == "__main__":
    sys.exit(main())
