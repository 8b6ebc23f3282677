"""click options for the commands that build a sandbox (run, status, doctor, exec, mcp), built
from the flag table in ``cli/flags.py``; what the flags then do lives in ``cli/sandbox_setup``
(re-exported here for the commands that import it from this module).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from stockade.cli.flags import CONFIG_FLAG, PROJECT_FLAG, SANDBOX_FLAGS, Flag
from stockade.cli.sandbox_setup import (
    flags_from_options as flags_from_options,
)
from stockade.cli.sandbox_setup import (
    ignored_notice as ignored_notice,
)
from stockade.cli.sandbox_setup import (
    problems_from_options as problems_from_options,
)
from stockade.cli.sandbox_setup import (
    sandbox_for as sandbox_for,
)
from stockade.cli.sandbox_setup import (
    sandbox_from_options as sandbox_from_options,
)
from stockade.cli.sandbox_setup import (
    settings_from_options as settings_from_options,
)

F = TypeVar("F", bound=Callable[..., Any])

_PATH_TYPES = {
    "dir": {"file_okay": False},
    "file": {"dir_okay": False},
    "any": {},
}


def click_option(flag: Flag) -> Callable[[F], F]:
    """The click option for one row of the flag table."""
    kwargs: dict[str, Any] = {"help": flag.help}
    if flag.kind == "switch":
        kwargs.update(is_flag=True, default=False)
    else:
        kwargs["default"] = None
        if flag.kind == "multi":
            kwargs["multiple"] = True
        if flag.metavar:
            kwargs["metavar"] = flag.metavar
    if flag.choices:
        kwargs["type"] = click.Choice(list(flag.choices))
    elif flag.positive_number:
        kwargs["type"] = click.FloatRange(min=0, min_open=True)
    elif flag.kind_of_path is not None:
        kwargs["type"] = click.Path(path_type=Path, **_PATH_TYPES[flag.kind_of_path])
    option: Callable[[F], F] = click.option(flag.name, flag.dest, **kwargs)
    return option


def with_flags(flags: Sequence[Flag]) -> Callable[[F], F]:
    """Decorate a click command with these rows, in table order."""

    def decorate(function: F) -> F:
        for flag in reversed(flags):
            function = click_option(flag)(function)
        return function

    return decorate


def project_option(function: F) -> F:
    """``--project DIR`` on its own, for commands that read settings but build no sandbox."""
    return click_option(PROJECT_FLAG)(function)


def config_option(function: F) -> F:
    return click_option(CONFIG_FLAG)(function)


def sandbox_options(function: F) -> F:
    """Decorate a click command with the operator's sandbox flags."""
    return with_flags(SANDBOX_FLAGS)(function)
