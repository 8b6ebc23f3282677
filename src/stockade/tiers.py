"""The five risk tiers, ordered from harmless to catastrophic."""

from __future__ import annotations

import enum


class Tier(enum.IntEnum):
    """Risk tier of a command; compare with ``<``/``max`` (the order is the severity)."""

    READ_ONLY = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    DESTRUCTIVE = 4

    @property
    def label(self) -> str:
        """The user-facing spelling: ``read-only``, ``low``, ... ``destructive``."""
        return _LABELS[self]

    @classmethod
    def parse(cls, text: str) -> Tier:
        """Accept ``read-only``/``read_only``/``READ_ONLY``; raise ValueError otherwise."""
        key = text.strip().lower().replace("_", "-")
        for tier, label in _LABELS.items():
            if label == key:
                return tier
        raise ValueError(f"unknown tier {text!r}; expected one of: {', '.join(_LABELS.values())}")

    def __str__(self) -> str:
        return self.label


_LABELS: dict[Tier, str] = {
    Tier.READ_ONLY: "read-only",
    Tier.LOW: "low",
    Tier.MEDIUM: "medium",
    Tier.HIGH: "high",
    Tier.DESTRUCTIVE: "destructive",
}
