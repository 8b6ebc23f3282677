"""Permission options shared by the agent-path commands (``exec``, ``check``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from stockade.permissions.autonomy import ENV_VAR, LEVEL_NAMES, AutonomyChoice, choose_autonomy
from stockade.permissions.config import PermissionConfig
from stockade.permissions.gate import Gate
from stockade.sandbox.posture import Posture

F = TypeVar("F", bound=Callable[..., Any])

SESSION_ENV_VAR = "STOCKADE_SESSION_ID"  # groups several `stockade exec` calls in one session


def autonomy_options(function: F) -> F:
    """Decorate a click command with --autonomy, --yolo and --headless."""
    decorators = [
        click.option(
            "--autonomy",
            default=None,
            metavar="LEVEL",
            help=f"How much runs without asking: {LEVEL_NAMES}. "
            f"Default: {ENV_VAR}, else balanced with a terminal, ask when headless.",
        ),
        click.option(
            "--yolo", is_flag=True, default=False, help="Autonomy yolo: run without prompts."
        ),
        click.option(
            "--headless",
            is_flag=True,
            default=False,
            help="Never prompt (also the default without a terminal): what would ask is denied.",
        ),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def is_interactive(options: dict[str, Any]) -> bool:
    """A person can answer prompts: stdin and stderr are a terminal and --headless is off."""
    if options.get("headless"):
        return False
    return sys.stdin.isatty() and sys.stderr.isatty()


def permission_config() -> PermissionConfig:
    """The ``[permissions]`` settings. The settings model plugs in here; until then none."""
    return PermissionConfig()


def autonomy_from_options(options: dict[str, Any], config: PermissionConfig) -> AutonomyChoice:
    return choose_autonomy(
        flag=options.get("autonomy"),
        yolo=bool(options.get("yolo")),
        env=os.environ.get(ENV_VAR),
        configured=config.autonomy,
        interactive=is_interactive(options),
    )


def gate_from_options(options: dict[str, Any], *, project: str, posture: Posture | None) -> Gate:
    config = permission_config()
    choice = autonomy_from_options(options, config)
    return Gate(
        project=project,
        autonomy=choice.level,
        posture=posture,
        config=config,
        session_id=os.environ.get(SESSION_ENV_VAR) or None,
    )
