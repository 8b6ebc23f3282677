"""The autonomy ladder: how much an agent may run without asking.

The ladder is plain data (``LADDER``) so a reviewer can audit it at a glance. A level says the
highest tier that runs without a prompt; everything above it asks. Two guardrails hold at every
level except ``yolo`` and are applied by the gate, not here: a destructive action always asks,
and a sandbox escape always asks (at every level, yolo included).

Where the level comes from, highest precedence first: ``--yolo`` / ``--autonomy``, the
``STOCKADE_AUTONOMY`` variable, the settings file, then the default - ``balanced`` when a person
can answer prompts, ``ask`` when nobody can (headless). ``yolo`` is only ever reached by an
explicit flag or variable, never from a settings file, and no alias leads to it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from stockade.errors import ConfigError, UsageError
from stockade.sandbox.posture import Posture
from stockade.tiers import Tier

ENV_VAR = "STOCKADE_AUTONOMY"


class Autonomy(enum.Enum):
    """An autonomy level; the value is its user-facing spelling."""

    ASK = "ask"
    CONSERVATIVE = "conservative"
    BALANCED = "balanced"
    AUTO_ACCEPT = "auto-accept"
    YOLO = "yolo"

    def __str__(self) -> str:
        return self.value

    @property
    def ceiling(self) -> Tier | None:
        """The highest tier that runs without asking, or None when everything asks."""
        return LADDER[self].auto_runs_up_to

    def auto_runs(self, tier: Tier) -> bool:
        ceiling = self.ceiling
        return ceiling is not None and tier <= ceiling


@dataclass(frozen=True)
class Rung:
    """One row of the ladder table."""

    auto_runs_up_to: Tier | None  # None: nothing runs without asking
    still_prompts: str


# --- the ladder (the table, as data) ----------------------------------------------
LADDER: dict[Autonomy, Rung] = {
    Autonomy.ASK: Rung(None, "everything"),
    Autonomy.CONSERVATIVE: Rung(Tier.READ_ONLY, "low and above"),
    Autonomy.BALANCED: Rung(Tier.MEDIUM, "high, destructive"),
    Autonomy.AUTO_ACCEPT: Rung(Tier.HIGH, "destructive"),
    Autonomy.YOLO: Rung(Tier.DESTRUCTIVE, "nothing"),
}

# Other spellings people use. None of them leads to yolo: reaching it is always explicit.
ALIASES: dict[str, Autonomy] = {
    "default": Autonomy.ASK,
    "auto": Autonomy.AUTO_ACCEPT,
    "accept": Autonomy.AUTO_ACCEPT,
    "auto_accept": Autonomy.AUTO_ACCEPT,
    "autoaccept": Autonomy.AUTO_ACCEPT,
}

INTERACTIVE_DEFAULT = Autonomy.BALANCED  # a person can answer prompts
HEADLESS_DEFAULT = Autonomy.ASK  # nobody can: anything that would prompt is denied

# auto-accept's high ceiling is only honoured under a proven, confining sandbox.
UNPROVEN_AUTO_ACCEPT_FALLBACK = Autonomy.BALANCED

LEVEL_NAMES = ", ".join(level.value for level in Autonomy)


def parse_autonomy(text: str, *, where: str = "--autonomy") -> Autonomy:
    """Parse a level or alias (case-insensitive); UsageError naming ``where`` otherwise."""
    key = text.strip().lower() if isinstance(text, str) else ""
    for level in Autonomy:
        if level.value == key:
            return level
    if key in ALIASES:
        return ALIASES[key]
    raise UsageError(
        f"unknown autonomy level {text!r} in {where}",
        fix=f"use one of: {LEVEL_NAMES} (aliases: {', '.join(ALIASES)})",
    )


@dataclass(frozen=True)
class AutonomyChoice:
    """The level asked for and where that came from (``--autonomy``, ``default``, ...)."""

    level: Autonomy
    origin: str


def choose_autonomy(
    *,
    flag: str | None = None,
    yolo: bool = False,
    env: str | None = None,
    configured: str | None = None,
    interactive: bool,
) -> AutonomyChoice:
    """Pick the requested level by precedence: flags, ``STOCKADE_AUTONOMY``, settings, default.

    ``configured`` is the settings value; a settings file cannot say ``yolo`` (ConfigError),
    because reaching yolo must be a choice made for this run, by flag or variable.
    """
    if yolo:
        if flag is not None and parse_autonomy(flag) is not Autonomy.YOLO:
            raise UsageError(f"--yolo contradicts --autonomy {flag}", fix="pass only one of them")
        return AutonomyChoice(Autonomy.YOLO, "--yolo")
    if flag is not None:
        return AutonomyChoice(parse_autonomy(flag), "--autonomy")
    if env is not None and env.strip():
        return AutonomyChoice(parse_autonomy(env, where=ENV_VAR), ENV_VAR)
    if configured is not None:
        level = parse_autonomy(configured, where="[permissions] autonomy")
        if level is Autonomy.YOLO:
            raise ConfigError(
                "[permissions] autonomy = 'yolo' is not accepted from a settings file",
                fix=f"pass --yolo or set {ENV_VAR}=yolo for the runs that need it",
            )
        return AutonomyChoice(level, "[permissions] autonomy")
    if interactive:
        return AutonomyChoice(INTERACTIVE_DEFAULT, "default")
    return AutonomyChoice(HEADLESS_DEFAULT, "headless default")


@dataclass(frozen=True)
class EffectiveAutonomy:
    """The level that actually applies, the one requested, and why they differ (if they do)."""

    level: Autonomy
    requested: Autonomy
    warning: str | None = None


def effective_autonomy(requested: Autonomy, posture: Posture | None) -> EffectiveAutonomy:
    """Lower ``auto-accept`` to ``balanced`` unless the sandbox is confining *and* proven.

    ``posture`` None means no sandbox will be used (or none could be built).
    """
    if requested is not Autonomy.AUTO_ACCEPT:
        return EffectiveAutonomy(requested, requested)
    if posture is not None and posture.confined and posture.proven:
        return EffectiveAutonomy(requested, requested)
    why = "no sandbox" if posture is None else posture.summary()
    fallback = UNPROVEN_AUTO_ACCEPT_FALLBACK
    return EffectiveAutonomy(
        fallback,
        requested,
        warning=(
            f"auto-accept needs an active, proven sandbox ({why}); "
            f"running as {fallback} (high-tier commands will ask)"
        ),
    )
