"""What the gate says: a :class:`Verdict` before anyone is asked, a :class:`Decision` after.

Both name their deciding :class:`Source` - a built-in rule id, a user rule id, the autonomy
level, a floor, or the prompt answer - and carry a reason a person can read.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from stockade.errors import PermissionDenied
from stockade.permissions.autonomy import EffectiveAutonomy
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.permissions.rules import Namespace, Rule
from stockade.tiers import Tier


class Outcome(enum.Enum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"

    def __str__(self) -> str:
        return self.value


class SourceKind(enum.Enum):
    BUILTIN_DENY = "builtin-deny"  # id: the classifier's rule id or the effect
    RULE = "rule"  # id: the user rule's id (c-/s-/p-...)
    FLOOR = "floor"  # id: destructive | sandbox-escape
    BUILTIN_ASK = "builtin-ask"  # id: builtin.ask.*
    AUTONOMY = "autonomy"  # id: the effective level
    ANSWER = "answer"  # id: the prompt answer, or "headless"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Source:
    """Who decided: ``builtin-deny:privilege.sudo``, ``rule:p-3fa9c2d1e0``, ``autonomy:ask``."""

    kind: SourceKind
    id: str

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.id}"


@dataclass(frozen=True)
class Part:
    """The verdict on one segment (or one action subject)."""

    text: str
    tier: Tier
    outcome: Outcome
    source: Source
    reason: str
    namespace: Namespace | None = None
    remember: str | None = None  # the exact pattern (E/X answers), None: cannot be remembered
    rememberable: bool = False  # would a remembered allow stop the next prompt?
    fix: str | None = None  # for an ask: how to stop being asked
    general: str | None = None  # the generalised pattern S/P/N store (None: the exact one)

    @property
    def stored(self) -> str | None:
        """What an S/P/N answer stores for this part: the generalised rule, else the exact."""
        return self.general or self.remember


@dataclass(frozen=True)
class Verdict:
    """The gate's answer before anyone is asked."""

    action: str
    kind: str
    outcome: Outcome
    tier: Tier
    source: Source
    reason: str
    autonomy: EffectiveAutonomy
    parts: tuple[Part, ...] = ()
    effects: tuple[str, ...] = ()
    escape: bool = False
    needs_permission: bool = False  # an ask that is about more than the escape
    choices: tuple[Choice, ...] = ()  # offered when the outcome is ask
    cwd: str = ""
    project: str = ""

    @property
    def asking(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.outcome is Outcome.ASK)

    def line(self) -> str:
        """One line for people: ``allow (medium): npm test - ... [autonomy:balanced]``."""
        escape = " + sandbox escape" if self.escape else ""
        return (
            f"{self.outcome} ({self.tier}{escape}): {shorten(self.action)} - {self.reason} "
            f"[{self.source}]"
        )

    def remembers(self, *, exact: bool = False) -> tuple[str, ...]:
        """The rules a remembering answer stores, as ``namespace:pattern`` (bash bare):
        S/P/N store the generalised rules, E/X (``exact``) the exact ones. An escape's
        session answer is always exact (it approves this directory and command only)."""
        shown = []
        for part in self.asking:
            pattern = part.remember if exact or self.escape else part.stored
            if pattern is None or part.namespace is None:
                continue
            shown.append(
                pattern if part.namespace is Namespace.BASH else f"{part.namespace}:{pattern}"
            )
        return tuple(dict.fromkeys(shown))

    def prompt_request(self) -> PromptRequest:
        """The question to put to a person for an ``ask`` verdict."""
        if self.outcome is not Outcome.ASK:
            raise ValueError(f"nothing to ask: the verdict is {self.outcome}")
        return PromptRequest(
            action=self.action,
            tier=self.tier,
            reason=self.reason,
            choices=self.choices,
            escape=self.escape,
            needs_permission=self.needs_permission,
            asking=tuple(p.text for p in self.asking),
            cwd=self.cwd,
            autonomy=str(self.autonomy.level),
            remember=self.remembers(),
            exact=self.remembers(exact=True),
        )


@dataclass(frozen=True)
class Decision:
    """What happens: allowed or not, who decided, the answer if one was asked for."""

    verdict: Verdict
    allowed: bool
    source: Source
    reason: str
    answer: Choice | None = None
    headless: bool = False
    remembered: tuple[Rule, ...] = ()
    fix: str | None = None
    ledger_id: int | None = None

    def line(self) -> str:
        word = "allowed" if self.allowed else "denied"
        escape = " + sandbox escape" if self.verdict.escape else ""
        return (
            f"{word} ({self.verdict.tier}{escape}): {shorten(self.verdict.action)} - "
            f"{self.reason} [{self.source}]"
        )

    def raise_if_denied(self) -> None:
        if not self.allowed:
            raise PermissionDenied(f"denied: {self.reason}", fix=self.fix)


def shorten(text: str, limit: int = 120) -> str:
    """One printable line of at most ``limit`` characters, for messages (control and bidi
    characters escaped: see :mod:`stockade.printable`)."""
    from stockade.printable import printable

    flat = printable(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."
