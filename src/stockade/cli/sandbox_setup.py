"""Settings and a proven Sandbox from the operator's flags - no click here, so the fast path
of ``stockade run`` (``cli/flags.py``) shares it with the click commands.

The flags are the last and strongest settings layer: they become ``FlagOverrides`` and
``Settings.load`` merges them over the files and the environment (``stockade.settings``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from stockade.net.mode import NetworkMode
from stockade.settings_layers import FlagOverrides

if TYPE_CHECKING:  # pragma: no cover
    from stockade.runner import Sandbox
    from stockade.settings import Problem, Settings


def flags_from_options(options: dict[str, Any]) -> FlagOverrides:
    """The flags layer from click's parsed options."""
    return FlagOverrides(
        writable=tuple(options.get("writable") or ()),
        network=options.get("network"),
        env_passthrough=tuple(options.get("env_passthrough") or ()),
        backend=options.get("backend"),
        unsafe=bool(options.get("unsafe")),
        allow_writable_home=bool(options.get("allow_writable_home")),
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
    sandbox = Sandbox(
        request,
        backend=settings.backend,
        limits=settings.limits(wall_timeout_default=None),
        domain_policy=settings.domain_policy()
        if request.network is NetworkMode.ALLOWLIST
        else None,
    )
    if sandbox.proxy is not None:  # allowlist: refusals and first uses go into the ledger
        _record_network_events(sandbox)
    return sandbox


def _record_network_events(sandbox: Sandbox) -> None:
    import os

    from stockade.permissions.ledger import Ledger, new_session_id
    from stockade.permissions.network import ledger_hook, with_stored_denials
    from stockade.permissions.rules import RuleStore

    assert sandbox.proxy is not None
    project = sandbox.policy.project
    sandbox.proxy.policy = with_stored_denials(sandbox.proxy.policy, RuleStore().rules(project))
    sandbox.proxy.set_event_hook(
        ledger_hook(
            Ledger(),
            session=os.environ.get("STOCKADE_SESSION_ID") or new_session_id(),
            project=str(project),
            posture=sandbox.posture.summary(),
        )
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
