"""Helpers for Session tests: a recording prompt, and sessions on the real classifier.

(Rule and ledger stores are private to each test: conftest points the XDG dirs at a temp dir.)
``classifier()`` is the gate's test double, for tests that must state a tier exactly.
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
    """A Session on the real classifier (``stockade.risk``) unless ``classifier=`` is given."""
    return Session(project, **options)
