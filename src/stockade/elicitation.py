"""Putting the gate's question to a person through MCP elicitation: a form with one field,
``decision``, whose answers are exactly the ones the terminal prompt offers (once, session,
project, exactly-this for the project, deny, never, never-exactly-this), with what each one
stores spelled out. Shared by ``stockade mcp`` and ``stockade run --stdio --gate``; it speaks
plain JSON (no SDK types), so the gate's relay can use it on the raw stream.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from stockade.permissions.prompt import Choice, PromptRequest, question_facts
from stockade.printable import printable

# The answer values on the wire, one per choice (auditable).
ANSWERS: Final[Mapping[Choice, str]] = {
    Choice.ALLOW_ONCE: "allow_once",
    Choice.ALLOW_SESSION: "allow_session",
    Choice.ALLOW_PROJECT: "allow_project",
    Choice.ALLOW_PROJECT_EXACT: "allow_project_exact",
    Choice.DENY_ONCE: "deny",
    Choice.DENY_PROJECT: "deny_project",
    Choice.DENY_PROJECT_EXACT: "deny_project_exact",
}
_TITLES: Final[Mapping[Choice, str]] = {
    Choice.ALLOW_ONCE: "Allow once",
    Choice.ALLOW_SESSION: "Allow for this session",
    Choice.ALLOW_PROJECT: "Always allow in this project",
    Choice.ALLOW_PROJECT_EXACT: "Always allow exactly this in this project",
    Choice.DENY_ONCE: "Deny",
    Choice.DENY_PROJECT: "Never in this project",
    Choice.DENY_PROJECT_EXACT: "Never exactly this in this project",
}


def offered(request: PromptRequest) -> list[Choice]:
    """The request's choices, in the form's order."""
    return [choice for choice in ANSWERS if choice in request.choices]


def title(choice: Choice, request: PromptRequest | None = None) -> str:
    """The label of one answer, naming the rule it stores (``Always allow in this project:
    `git commit *```)."""
    text = _TITLES[choice]
    if request is None or choice in (Choice.ALLOW_ONCE, Choice.DENY_ONCE):
        return text
    rules = request.exact if choice.exact else request.remember
    if not rules:
        return text
    return f"{text}: " + ", ".join(f"`{printable(rule)}`" for rule in rules)


def question_key(request: PromptRequest, choices: Sequence[Choice], *, salt: str = "") -> str:
    """A key that names this exact question: a changed question is asked again."""
    text = json.dumps(
        [
            salt,
            request.action,
            request.cwd,
            request.tier.label,
            request.escape,
            [c.value for c in choices],
            list(request.remember),
            list(request.exact),
        ]
    )
    return "stockade-approval-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def question_text(request: PromptRequest, description: str | None = None) -> str:
    """The form's message: what would run, where, why it asks, and each answer's rule."""
    lines = [request.question]
    lines += [f"{label}: {text}" for label, text in question_facts(request, description)]
    stored = [c for c in offered(request) if c not in (Choice.ALLOW_ONCE, Choice.DENY_ONCE)]
    if stored:
        lines.append("answers that are remembered:")
        lines += [f"  {ANSWERS[c]}: {title(c, request)}" for c in stored]
    return "\n".join(lines)


def answer_schema(
    choices: Sequence[Choice], request: PromptRequest | None = None
) -> dict[str, Any]:
    """The form: one required string field ``decision``, a titled single-select (``oneOf``
    with ``const``/``title``) that also carries a plain ``enum`` for older clients."""
    return {
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "description": "allow_once: run it this time; allow_session: also what the "
                "session rule covers, until this session ends; allow_project / deny_project: "
                "store the rule shown for this project; *_exact: store the exact text; "
                "deny: do not run it",
                "enum": [ANSWERS[choice] for choice in choices],
                "oneOf": [
                    {"const": ANSWERS[choice], "title": title(choice, request)}
                    for choice in choices
                ],
            }
        },
        "required": ["decision"],
    }


def answer_from_content(action: object, content: object, choices: Sequence[Choice]) -> Choice:
    """The person's choice from an elicitation result's ``action`` and ``content``; anything
    but an accepted, offered answer is a denial."""
    if action != "accept" or not isinstance(content, Mapping):
        return Choice.DENY_ONCE
    value = content.get("decision")
    for choice in choices:
        if ANSWERS[choice] == value:
            return choice
    return Choice.DENY_ONCE
