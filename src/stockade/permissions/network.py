"""The allow-list proxy meets the permission engine (``domain`` namespace).

* Every refusal and every first use of a domain the proxy reports goes into the ledger.
* Stored ``domain`` deny rules join the proxy's deny list (deny wins there too).
* With someone to ask, a host no list or rule covers is put to the gate as a network action
  plan; the person's answer is remembered like any other (once / session / project) and a
  stored allow rule answers without asking next time. Autonomy alone never allows a new
  domain (the gate's ``builtin.ask.new-domain``): the allow-list is an operator decision, so
  without a rule or an answer it stays refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from stockade.errors import ConfigError
from stockade.permissions.actions import network
from stockade.permissions.ledger import ALLOWED, DENIED, Ledger, LedgerEntry
from stockade.permissions.rules import Namespace, Rule, RuleDecision

if TYPE_CHECKING:
    from stockade.net.domains import AskHook, DomainPolicy
    from stockade.net.proxy import ProxyEvent
    from stockade.permissions.gate import Gate
    from stockade.permissions.prompt import PromptFunction


def ledger_hook(
    ledger: Ledger, *, session: str, project: str, posture: str
) -> Callable[[ProxyEvent], None]:
    """The proxy's ``on_event``: one ledger entry per refusal or first use of a domain."""
    from stockade.net.proxy import EventKind

    def record(event: ProxyEvent) -> None:
        refused = event.kind is EventKind.REFUSED
        ledger.record(
            LedgerEntry(
                session=session,
                project=project,
                action=f"{event.host}:{event.port} ({event.protocol})",
                kind="domain",
                tier=None,
                effects=("network",),
                source=f"proxy:{event.decision.source.value}",
                autonomy=None,
                posture=posture,
                decision=DENIED if refused else ALLOWED,
                reason=event.decision.reason,
            )
        )

    return record


def with_stored_denials(policy: DomainPolicy, rules: Iterable[Rule]) -> DomainPolicy:
    """``policy`` plus every stored ``domain`` deny rule. A deny rule the proxy's matcher
    cannot express stops here (ConfigError) rather than being skipped - a skipped deny would
    loosen things."""
    from stockade.errors import StockadeError
    from stockade.net.domains import DomainRule

    extra = []
    for rule in rules:
        if rule.namespace is not Namespace.DOMAIN or rule.decision is not RuleDecision.DENY:
            continue
        try:
            extra.append(DomainRule.parse(rule.pattern, source=f"rule {rule.id}"))
        except StockadeError as error:
            raise ConfigError(
                f"domain deny rule {rule.id} ({rule.pattern!r}) cannot be applied by the "
                f"network proxy: {error.message}",
                fix=f"stockade permissions remove {rule.id}, then add it as host or *.suffix",
            ) from None
    if not extra:
        return policy
    return dataclasses.replace(policy, denied=(*policy.denied, *extra))


def ask_hook(gate: Gate, prompt: PromptFunction | None) -> AskHook:
    """The proxy's ``ask``: a stored rule answers; else the person is asked through the gate
    (``prompt`` None: headless, refused and recorded)."""

    def ask(host: str, port: int) -> bool | None:
        # the gate asks by default for a destination no rule covers (builtin.ask.new-domain)
        verdict = gate.check_action(network(host, action=f"connect to {host}:{port}"))
        return gate.decide(verdict, prompt).allowed

    return ask
