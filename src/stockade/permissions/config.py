"""What the settings model hands to the permission gate: plain values, already layered.

The gate never reads a settings file. The settings layer (user -> project -> local, env, flags)
builds one ``PermissionConfig`` and passes it in; tests and library callers build one directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from stockade.permissions.rules import Rule, config_rules
from stockade.tiers import Tier


@dataclass(frozen=True)
class PermissionConfig:
    """``[permissions]`` and ``[risk]`` settings.

    ``autonomy`` is the settings-file level (None: not set; ``yolo`` is refused there).
    ``allow``/``deny``/``ask`` are rule entries ``[namespace:]pattern`` (no prefix: ``bash``),
    e.g. ``"npm test *"``, ``"domain:*.github.com"``, ``"mcp:mcp.github.*"``.
    ``program_overrides`` is ``[risk] programs`` (program name -> tier) for the classifier;
    ``program_floors`` are tiers an untrusted project asked for, which may only *raise* a
    program's tier (the gate applies them to every segment running that program).
    """

    autonomy: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    program_overrides: Mapping[str, Tier] = field(default_factory=lambda: MappingProxyType({}))
    program_floors: Mapping[str, Tier] = field(default_factory=lambda: MappingProxyType({}))

    def rules(self) -> tuple[Rule, ...]:
        """The entries as validated rules (ConfigError naming the bad entry otherwise)."""
        return config_rules(allow=self.allow, deny=self.deny, ask=self.ask)
