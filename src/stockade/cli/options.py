"""Sandbox options shared by the commands that build a sandbox (run, status, doctor, exec).

The flags are the last and strongest settings layer: they become ``FlagOverrides`` and
``Settings.load`` merges them over the files and the environment (``stockade.settings``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from stockade.net.mode import NetworkMode
from stockade.settings_layers import BACKENDS, FlagOverrides

if TYPE_CHECKING:  # pragma: no cover
    from stockade.runner import Sandbox
    from stockade.settings import Problem, Settings

F = TypeVar("F", bound=Callable[..., Any])


def project_option(function: F) -> F:
    """``--project DIR`` on its own, for commands that read settings but build no sandbox."""
    return click.option(
        "--project",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Project root (writable). Default: the current directory.",
    )(function)


def config_option(function: F) -> F:
    return click.option(
        "--config",
        "config_file",
        type=click.Path(dir_okay=False, path_type=Path),
        default=None,
        metavar="FILE",
        help="Use FILE as the user settings layer (like STOCKADE_CONFIG).",
    )(function)


def sandbox_options(function: F) -> F:
    """Decorate a click command with the operator's sandbox flags."""
    decorators = [
        project_option,
        click.option(
            "--writable",
            "writable",
            multiple=True,
            type=click.Path(path_type=Path),
            metavar="PATH",
            help="Another writable root (repeatable).",
        ),
        click.option(
            "--network",
            type=click.Choice([m.value for m in NetworkMode]),
            default=None,
            help="deny (default): loopback only; allow: share the host network; "
            "allowlist: only the allowed domains, through the proxy.",
        ),
        click.option(
            "--allow-domain",
            "allowed_domains",
            multiple=True,
            metavar="DOMAIN",
            help="With --network allowlist: a reachable domain (example.com, *.example.com, "
            "optional :port; repeatable).",
        ),
        click.option(
            "--env",
            "env_passthrough",
            multiple=True,
            metavar="NAME",
            help="Pass this variable through even if it looks like a secret (repeatable).",
        ),
        click.option(
            "--backend",
            type=click.Choice(BACKENDS),
            default=None,
            help="Sandbox backend (default: from settings, else auto).",
        ),
        config_option,
        click.option(
            "--unsafe",
            is_flag=True,
            default=False,
            help="Run without any sandbox (every run says so).",
        ),
    ]
    for decorator in reversed(decorators):
        function = decorator(function)
    return function


def flags_from_options(options: dict[str, Any]) -> FlagOverrides:
    """The flags layer from click's parsed options."""
    return FlagOverrides(
        writable=tuple(options.get("writable") or ()),
        network=options.get("network"),
        env_passthrough=tuple(options.get("env_passthrough") or ()),
        backend=options.get("backend"),
        unsafe=bool(options.get("unsafe")),
        config=options.get("config_file"),
        allowed_domains=tuple(options.get("allowed_domains") or ()),
    )


def settings_from_options(options: dict[str, Any]) -> Settings:
    """Load every settings layer for the chosen project, with the flags on top. Raises
    ConfigError (exit 2) when a layer is invalid: never a weaker policy as the fallback."""
    from stockade.settings import Settings

    return Settings.load(options.get("project"), flags=flags_from_options(options))


def problems_from_options(options: dict[str, Any]) -> list[Problem]:
    """Every problem in every layer (for reports after ``settings_from_options`` failed)."""
    from stockade.settings import validate_settings

    _layers, problems = validate_settings(options.get("project"), flags=flags_from_options(options))
    return problems


def sandbox_for(settings: Settings) -> Sandbox:
    """A proven Sandbox for ``settings``, run from the current directory.

    The operator path has no default wall-clock limit (a dev server may run for hours);
    ``[sandbox.limits] wall_timeout_s`` or ``--timeout`` set one."""
    from stockade.runner import Sandbox

    request = settings.policy_request(cwd=Path.cwd())
    return Sandbox(
        request,
        backend=settings.backend,
        limits=settings.limits(wall_timeout_default=None),
        domain_policy=settings.domain_policy()
        if request.network is NetworkMode.ALLOWLIST
        else None,
    )


def sandbox_from_options(options: dict[str, Any]) -> Sandbox:
    """Settings from every layer + flags, then a proven Sandbox."""
    return sandbox_for(settings_from_options(options))


def ignored_notice(settings: Settings) -> str | None:
    """One line for stderr when an untrusted project's loosening settings were ignored."""
    if not settings.ignored:
        return None
    count = len(settings.ignored)
    return (
        f"stockade: ignored {count} loosening setting{'s' if count != 1 else ''} from this "
        "untrusted workspace (`stockade status` lists them; `stockade trust` enables them)"
    )
