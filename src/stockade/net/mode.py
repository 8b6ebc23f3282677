"""The three network modes; chosen by the operator only (an agent can never widen them)."""

from __future__ import annotations

import enum

from stockade.errors import ConfigError


class NetworkMode(enum.StrEnum):
    """``deny``: loopback only. ``allow``: the host network. ``allowlist``: only via the proxy."""

    DENY = "deny"
    ALLOW = "allow"
    ALLOWLIST = "allowlist"

    @classmethod
    def parse(cls, text: str) -> NetworkMode:
        """Accept ``deny``/``allow``/``allowlist`` (any case, ``allow-list`` too)."""
        key = text.strip().lower().replace("-", "").replace("_", "")
        for mode in cls:
            if mode.value == key:
                return mode
        raise ConfigError(
            f"unknown network mode {text!r}",
            fix="use one of: deny (default), allow, allowlist",
        )
