"""Helpers for Session tests: a recording prompt, and sessions with private rule/ledger stores.

Until the real classifier (``stockade.risk``) is on this branch, sessions here use the gate's
test double ``StubClassifier`` with a few extra programs; the tier of a command is therefore
exactly what the table below says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stockade.permissions.prompt import Choice, PromptRequest
from stockade.session import Session
from stockade.tiers import Tier
from tests.permissions_support import DEFAULT_TABLE, StubClassifier

TABLE = {
    **DEFAULT_TABLE,
    "pwd": (Tier.READ_ONLY, "program.read-only"),
    "seq": (Tier.READ_ONLY, "program.read-only"),
    "sleep": (Tier.READ_ONLY, "program.read-only"),
    "printf": (Tier.READ_ONLY, "program.read-only"),
    "sh -c": (Tier.DESTRUCTIVE, "interpreter.inline"),
}


def classifier() -> StubClassifier:
    return StubClassifier(table=dict(TABLE))


@dataclass
class Answers:
    """A prompt that answers from a script (default: the first offered choice) and records
    every request it was shown."""

    answer: Choice | None = Choice.ALLOW_ONCE
    requests: list[PromptRequest] = field(default_factory=list)

    def __call__(self, request: PromptRequest) -> Choice:
        self.requests.append(request)
        if self.answer is None or self.answer not in request.choices:
            return Choice.DENY_ONCE
        return self.answer


def session(project: Path, **options: Any) -> Session:
    options.setdefault("classifier", classifier())
    return Session(project, **options)
