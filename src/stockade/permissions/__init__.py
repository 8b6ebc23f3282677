"""Permissions: turn a risk tier into allow / ask / deny, ask a person, record it in the ledger.

    autonomy.py  the ladder (ask < conservative < balanced < auto-accept < yolo)
    rules.py     namespaced glob rules; session (memory) and project (SQLite) scopes
    gate.py      the verdict combiner (hard denies, rules, floors, ask defaults, autonomy)
    verdict.py   Verdict (before asking) and Decision (after), with their deciding source
    actions.py   typed action plans for non-shell effects (file writes, network, ...)
    prompt.py    the Prompt callback interface and the terminal prompt
    ledger.py    every decision in SQLite (WAL), with per-session completion reports

Names are imported lazily (PEP 562): ``stockade run`` imports only ``ledger`` and must not pay
for the gate, the rules or the classifier.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade._lazy import lazy_exports

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.permissions.actions import ActionPlan, Effect
    from stockade.permissions.autonomy import Autonomy, choose_autonomy, effective_autonomy
    from stockade.permissions.config import PermissionConfig
    from stockade.permissions.gate import Gate, headless_fix
    from stockade.permissions.ledger import Ledger, LedgerEntry, SessionReport
    from stockade.permissions.prompt import Choice, Prompt, PromptRequest, TerminalPrompt
    from stockade.permissions.rules import Namespace, Rule, RuleDecision, RuleStore, Scope
    from stockade.permissions.verdict import Decision, Outcome, Source, SourceKind, Verdict

_LAZY: dict[str, str] = {
    "ActionPlan": "stockade.permissions.actions",
    "Autonomy": "stockade.permissions.autonomy",
    "Choice": "stockade.permissions.prompt",
    "Decision": "stockade.permissions.verdict",
    "Effect": "stockade.permissions.actions",
    "Gate": "stockade.permissions.gate",
    "Ledger": "stockade.permissions.ledger",
    "LedgerEntry": "stockade.permissions.ledger",
    "Namespace": "stockade.permissions.rules",
    "Outcome": "stockade.permissions.verdict",
    "PermissionConfig": "stockade.permissions.config",
    "Prompt": "stockade.permissions.prompt",
    "PromptRequest": "stockade.permissions.prompt",
    "Rule": "stockade.permissions.rules",
    "RuleDecision": "stockade.permissions.rules",
    "RuleStore": "stockade.permissions.rules",
    "Scope": "stockade.permissions.rules",
    "SessionReport": "stockade.permissions.ledger",
    "Source": "stockade.permissions.verdict",
    "SourceKind": "stockade.permissions.verdict",
    "TerminalPrompt": "stockade.permissions.prompt",
    "Verdict": "stockade.permissions.verdict",
    "choose_autonomy": "stockade.permissions.autonomy",
    "effective_autonomy": "stockade.permissions.autonomy",
    "headless_fix": "stockade.permissions.gate",
}

__all__ = [
    "ActionPlan",
    "Autonomy",
    "Choice",
    "Decision",
    "Effect",
    "Gate",
    "Ledger",
    "LedgerEntry",
    "Namespace",
    "Outcome",
    "PermissionConfig",
    "Prompt",
    "PromptRequest",
    "Rule",
    "RuleDecision",
    "RuleStore",
    "Scope",
    "SessionReport",
    "Source",
    "SourceKind",
    "TerminalPrompt",
    "Verdict",
    "choose_autonomy",
    "effective_autonomy",
    "headless_fix",
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
