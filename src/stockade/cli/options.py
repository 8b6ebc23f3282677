"""Sandbox options shared by the commands that build a sandbox (run, status, doctor, exec)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from stockade.errors import UsageError
from stockade.runner import Sandbox
from stockade.sandbox.policy import NetworkMode, PolicyRequest

F = TypeVar("F", bound=Callable[..., Any])

TRUE_WORDS = {"1", "on", "true", "yes", "enabled"}
FALSE_WORDS = {"0", "off", "false", "no", "disabled"}


def sandbox_options(function: F) -> F:
    """Decorate a click command with the operator's sandbox flags."""
    decorators = [
        click.option(
            "--project",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Project root (writable). Default: the current directory.",
        ),
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
            help="deny (default): loopback only; allow: share the host network; allowlist: "
            "only the domains given with --allow-domain (through stockade's proxy).",
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
            type=click.Choice(["auto", "bwrap", "landlock", "container", "none"]),
            default=None,
            help="Sandbox backend (default auto: bwrap if it proves enforcement, else Landlock).",
        ),
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


def sandbox_from_options(options: dict[str, Any]) -> Sandbox:
    """Build a proven Sandbox from flags and the STOCKADE_SANDBOX* environment variables.

    The operator path has no default wall-clock limit (a dev server may run for hours);
    ``--timeout`` sets one."""
    from stockade.sandbox.limits import Limits

    request = request_from_options(options)
    domain_policy = None
    if request.network is NetworkMode.ALLOWLIST:
        from stockade.net.domains import DomainPolicy

        domain_policy = DomainPolicy.from_lists(options.get("allowed_domains") or ())
    return Sandbox(
        request,
        backend=backend_from_options(options),
        limits=Limits(wall_timeout_s=None),
        domain_policy=domain_policy,
    )


def backend_from_options(options: dict[str, Any]) -> str:
    if options.get("unsafe"):
        return "none"
    if options.get("backend"):
        return str(options["backend"])
    enabled = os.environ.get("STOCKADE_SANDBOX")
    if enabled is not None:
        word = enabled.strip().lower()
        if word in FALSE_WORDS:
            return "none"
        if word not in TRUE_WORDS:
            raise UsageError(
                f"STOCKADE_SANDBOX={enabled!r} is not understood",
                fix="use 1/on/true/yes/enabled or 0/off/false/no/disabled",
            )
    return "auto"


def request_from_options(options: dict[str, Any]) -> PolicyRequest:
    cwd = Path.cwd()
    project = _absolute(options.get("project") or cwd)
    writable = [_absolute(p) for p in options.get("writable") or ()]
    extra = os.environ.get("STOCKADE_SANDBOX_WRITABLE_ROOTS", "")
    for entry in filter(None, extra.split(":")):
        if not os.path.isabs(os.path.expanduser(entry)):
            raise UsageError(
                f"STOCKADE_SANDBOX_WRITABLE_ROOTS entry {entry!r} is a relative path",
                fix="use absolute paths, separated by ':'",
            )
        writable.append(Path(os.path.expanduser(entry)))
    return PolicyRequest(
        project=project,
        cwd=cwd,
        writable=tuple(writable),
        network=_network(options.get("network")),
        env_passthrough=tuple(options.get("env_passthrough") or ()),
    )


def _absolute(path: Path) -> Path:
    return Path(os.path.abspath(os.path.expanduser(path)))


def _network(flag: str | None) -> NetworkMode:
    if flag:
        return NetworkMode(flag)
    value = os.environ.get("STOCKADE_SANDBOX_NETWORK")
    if value is None:
        return NetworkMode.DENY
    word = value.strip().lower()
    if word in {"deny", "denied", "block", "off"}:
        return NetworkMode.DENY
    if word in {"allow", "allowed", "on"}:
        return NetworkMode.ALLOW
    if word in {"allowlist", "allow-list"}:
        return NetworkMode.ALLOWLIST
    raise UsageError(
        f"STOCKADE_SANDBOX_NETWORK={value!r} is not understood",
        fix="use deny/denied/block/off or allow/allowed/on",
    )
