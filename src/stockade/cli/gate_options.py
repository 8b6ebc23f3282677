"""Permission options shared by the agent-path commands (``exec``, ``check``), and how the
layered settings become the gate's configuration."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from stockade.errors import UsageError
from stockade.permissions.autonomy import (
    LEVEL_NAMES,
    Autonomy,
    AutonomyChoice,
    choose_autonomy,
    parse_autonomy,
)
from stockade.permissions.config import PermissionConfig
from stockade.permissions.gate import Gate
from stockade.permissions.ledger import SESSION_ENV_VAR
from stockade.sandbox.posture import Posture

if TYPE_CHECKING:  # pragma: no cover
    from stockade.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def autonomy_options(function: F) -> F:
    """Decorate a click command with --autonomy, --yolo and --headless."""
    decorators = [
        click.option(
            "--autonomy",
            default=None,
            metavar="LEVEL",
            help=f"How much runs without asking: {LEVEL_NAMES}. Default: STOCKADE_AUTONOMY, "
            "then [permissions] autonomy, else balanced with a terminal and ask headless.",
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


def settings_with_autonomy(options: dict[str, Any]) -> Settings:
    """Every settings layer with the flags on top, ``--autonomy``/``--yolo`` included (the
    settings model validates them and records where the level came from)."""
    from stockade.cli.options import flags_from_options
    from stockade.settings import Settings

    level = options.get("autonomy")
    if options.get("yolo"):
        if level is not None and parse_autonomy(level) is not Autonomy.YOLO:
            raise UsageError(f"--yolo contradicts --autonomy {level}", fix="pass only one")
        level = Autonomy.YOLO.value
    flags = flags_from_options(options)._replace(autonomy=level)
    return Settings.load(options.get("project"), flags=flags)


def permission_config(settings: Settings | None) -> PermissionConfig:
    """``[permissions]`` and ``[risk]`` from the merged settings (empty without settings)."""
    if settings is None:
        return PermissionConfig()
    permissions = settings.permissions
    return PermissionConfig(
        autonomy=permissions.autonomy,
        allow=tuple(permissions.allow),
        deny=tuple(permissions.deny),
        ask=tuple(permissions.ask),
        program_overrides=settings.risk.programs,
        program_floors=settings.risk.floors,
    )


def autonomy_choice(
    settings: Settings, options: dict[str, Any], *, interactive: bool | None = None
) -> AutonomyChoice:
    """The requested level: from a flag or STOCKADE_AUTONOMY (explicit, may be yolo), from a
    settings file (never yolo), else the interactive/headless default (``interactive``:
    whether someone can answer; default: a terminal and no --headless)."""
    if interactive is None:
        interactive = is_interactive(options)
    level = settings.autonomy
    if level is None:
        return choose_autonomy(interactive=interactive)
    origin = settings.origin("permissions.autonomy")
    if origin.layer == "flag":
        choice = choose_autonomy(flag=level, interactive=interactive)
    elif origin.layer == "env":
        choice = choose_autonomy(env=level, interactive=interactive)
    else:
        choice = choose_autonomy(configured=level, interactive=interactive)
    return AutonomyChoice(choice.level, str(origin))


def gate_for(settings: Settings, options: dict[str, Any], *, posture: Posture | None) -> Gate:
    """The gate for one CLI call of this project, level and sandbox posture.

    A one-shot command has no session of its own: "allow for this session" is offered only
    when ``STOCKADE_SESSION_ID`` names one, and the answer is then kept under that id in the
    rules database, so the next call with the same id finds it."""
    from stockade.permissions.rules import RuleStore, SessionRules, canonical_project

    session_id = os.environ.get(SESSION_ENV_VAR) or None
    store = RuleStore()
    session_rules = None
    if session_id is not None:
        session_rules = SessionRules(
            canonical_project(settings.project), store=store, session=session_id
        )
    return Gate(
        project=settings.project,
        autonomy=autonomy_choice(settings, options).level,
        posture=posture,
        config=permission_config(settings),
        store=store,
        session_id=session_id,
        session_rules=session_rules,
        offer_session=session_id is not None,
    )
