"""Settings and a proven Sandbox from the operator's flags - no click here, so the fast path
of ``stockade run`` (``cli/flags.py``) shares it with the click commands.

The flags are the last and strongest settings layer: they become ``FlagOverrides`` and
``Settings.load`` merges them over the files and the environment (``stockade.settings``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from stockade.errors import UsageError
from stockade.net.mode import NetworkMode
from stockade.settings_layers import FlagOverrides

if TYPE_CHECKING:  # pragma: no cover
    from stockade.permissions.gate import Gate
    from stockade.permissions.prompt import PromptFunction
    from stockade.runner import Sandbox
    from stockade.settings import Problem, Settings


def flags_from_options(options: dict[str, Any]) -> FlagOverrides:
    """The flags layer from click's parsed options.

    Flags that contradict each other are one UsageError (exit 2), never a silent winner:
    ``--allow-domain`` implies ``--network allowlist`` and conflicts with any other mode;
    ``--unsafe`` conflicts with a confining ``--backend``. (An explicit ``--backend`` beats
    ``STOCKADE_SANDBOX=off`` and a file's ``enabled = false``: see ``read_flags``.)"""
    domains = tuple(domain_flag(text) for text in options.get("allowed_domains") or ())
    network = options.get("network")
    if domains and network is None:
        network = NetworkMode.ALLOWLIST.value
    elif domains and network != NetworkMode.ALLOWLIST.value:
        raise UsageError(
            f"--allow-domain needs --network allowlist, not --network {network}",
            fix="drop --network (--allow-domain implies allowlist) or drop --allow-domain",
        )
    backend = options.get("backend")
    if options.get("unsafe") and backend not in (None, "none"):
        raise UsageError(f"--unsafe contradicts --backend {backend}", fix="pass only one of them")
    return FlagOverrides(
        writable=tuple(options.get("writable") or ()),
        network=network,
        env_passthrough=tuple(options.get("env_passthrough") or ()),
        backend=backend,
        unsafe=bool(options.get("unsafe")),
        allow_writable_home=bool(options.get("allow_writable_home")),
        config=options.get("config_file"),
        allowed_domains=domains,
    )


def domain_flag(text: str) -> str:
    """One ``--allow-domain`` value: a host pattern, ``host:port``, or a pasted URL whose
    scheme is dropped (``https://api.github.com/`` is ``api.github.com``). A URL with a path,
    query or user name is refused: the proxy allows hosts, never paths."""
    from urllib.parse import urlsplit

    if "://" not in text:
        return text
    parts = urlsplit(text.strip())
    host = parts.netloc
    if parts.scheme.lower() not in ("http", "https") or not host:
        raise UsageError(
            f"--allow-domain {text!r} is not a host", fix="give a host, e.g. api.github.com"
        )
    if parts.path not in ("", "/") or parts.query or parts.fragment or "@" in host:
        raise UsageError(
            f"--allow-domain takes a host, not a URL with a path: {text!r}",
            fix=f"use --allow-domain {host.rpartition('@')[2]} (hosts are allowed, never paths)",
        )
    return host


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


def sandbox_for(settings: Settings, *, review: bool = False, warm: bool = False) -> Sandbox:
    """A proven Sandbox for ``settings``, run from the current directory (``review``: on a
    copy-on-write layer over the project).

    The operator path has no default wall-clock limit (a dev server may run for hours);
    ``[sandbox.limits] wall_timeout_s`` or ``--timeout`` set one. A command line runs one
    command, so it takes a fresh jail unless ``warm`` (and ``[sandbox] warm``) says
    otherwise; ``STOCKADE_WARM`` overrides both."""
    from stockade.runner import Sandbox

    request = settings.policy_request(cwd=Path.cwd())
    sandbox = Sandbox(
        request,
        backend=settings.backend,
        limits=settings.limits(wall_timeout_default=None),
        domain_policy=settings.domain_policy()
        if request.network is NetworkMode.ALLOWLIST
        else None,
        review=review,
        warm=warm and settings.sandbox.warm,
    )
    if sandbox.proxy is not None:  # allowlist: refusals and first uses go into the ledger
        _record_network_events(sandbox)
    return sandbox


def _record_network_events(sandbox: Sandbox) -> None:

    from stockade.permissions.ledger import Ledger, session_id_from_environment
    from stockade.permissions.network import ledger_hook, with_stored_denials
    from stockade.permissions.rules import RuleStore

    assert sandbox.proxy is not None
    project = sandbox.policy.project
    sandbox.proxy.policy = with_stored_denials(sandbox.proxy.policy, RuleStore().rules(project))
    sandbox.proxy.set_event_hook(
        ledger_hook(
            Ledger(),
            session=session_id_from_environment(),
            project=str(project),
            posture=sandbox.posture.summary(),
        )
    )


def gate_network(sandbox: Sandbox, gate: Gate, prompt: PromptFunction | None) -> None:
    """The agent path (``stockade exec``): a host no list covers goes to ``gate`` - a stored
    rule answers, else ``prompt`` asks (on the terminal, while the connection waits), else
    it is refused; the proxy's events go into the gate's ledger under its session."""
    from stockade.permissions.network import NetworkGate

    if sandbox.proxy is None:
        return
    checker = NetworkGate(gate, sandbox.proxy.policy, sandbox.policy.network, session_prompt=prompt)
    checker.connect(
        sandbox.proxy,
        ledger=gate.ledger,
        session=gate.session_id,
        posture=sandbox.posture.summary(),
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
