"""The allow-list proxy and ``fetch`` meet the permission engine (``domain`` namespace).

One check decides every host a session's network would reach - a connection from inside the
jail (through the proxy) and every hop of ``Session.fetch``:

1. the operator's lists (``[network]`` allow/deny, ``--allow-domain``) plus the stored
   ``domain`` deny rules (deny wins);
2. a host no list covers goes to the gate (``builtin.ask.new-domain``): a ``domain`` rule
   answers, else the person is asked - through the prompt of the command that is running
   (MCP elicitation, the terminal, a callback), while the connection waits - and the answer is
   kept as chosen: *once* for the rest of that command, *session*, or *project* (a stored rule);
3. nobody to ask (headless) refuses. Autonomy never adds a host: at ``yolo`` the question is
   skipped, so in ``allowlist`` mode the answer is no.

A refusal says which host was refused, why, and how to allow it. Every refusal and first use
the proxy reports goes into the ledger (summarised, within the limits of
``stockade.net.events``); a question asked is recorded by the gate with its answer.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stockade.errors import ConfigError
from stockade.net.domains import Decision as HostDecision
from stockade.net.domains import DecisionSource
from stockade.net.mode import NetworkMode
from stockade.permissions.actions import network
from stockade.permissions.ledger import ALLOWED, DENIED, Ledger, LedgerEntry
from stockade.permissions.prompt import Choice
from stockade.permissions.rules import Namespace, Rule, RuleDecision
from stockade.permissions.verdict import Outcome, SourceKind, shorten

if TYPE_CHECKING:
    from stockade.net.domains import AskHook, DomainPolicy
    from stockade.net.proxy import AllowListProxy, ProxyEvent
    from stockade.permissions.gate import Gate
    from stockade.permissions.prompt import PromptFunction
    from stockade.permissions.verdict import Decision, Verdict

# --- limits (auditable) ---------------------------------------------------------------------
MAX_QUESTIONS_PER_COMMAND = 8  # new hosts asked about while one command runs; then refused
MAX_REFUSALS_LISTED = 20  # distinct refused hosts a command's result names; the rest counted
# ----------------------------------------------------------------------------------------------


def allow_fix(host: str) -> str:
    """How to let ``host`` through, for refusal messages (the proxy's 403 body, results)."""
    return (
        f"`stockade permissions add allow --namespace domain {host}` (for this project), or "
        f"list it: `--allow-domain {host}` / [network] allowed_domains"
    )


def ledger_hook(
    ledger: Ledger, *, session: str, project: str, posture: str
) -> Callable[[ProxyEvent], None]:
    """The proxy's ``on_event``: one ledger entry per refusal or first use it reports (a
    summary event's action ends in ``xN``: it stands for N connections)."""
    from stockade.net.proxy import EventKind

    def record(event: ProxyEvent) -> None:
        refused = event.kind is EventKind.REFUSED
        times = f" x{event.count}" if event.summary else ""
        reason = f"{event.note}; last: {event.decision.reason}" if event.note else (
            event.decision.reason
        )  # fmt: skip
        ledger.record(
            LedgerEntry(
                session=session,
                project=project,
                action=f"{event.subject}{times}",
                kind="domain",
                tier=None,
                effects=("network",),
                source=f"proxy:{event.decision.source.value}",
                autonomy=None,
                posture=posture,
                decision=DENIED if refused else ALLOWED,
                reason=reason,
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
            parsed = DomainRule.parse(rule.pattern, source=f"rule {rule.id}")
        except StockadeError as error:
            raise ConfigError(
                f"domain deny rule {rule.id} ({rule.pattern!r}) cannot be applied by the "
                f"network proxy: {error.message}",
                fix=f"stockade permissions remove {rule.id}, then add it as host or *.suffix",
            ) from None
        if parsed not in policy.denied:
            extra.append(parsed)
    if not extra:
        return policy
    return dataclasses.replace(policy, denied=(*policy.denied, *extra))


@dataclass(frozen=True)
class NetworkRefusal:
    """A host a command's connections were refused for: how often, why, how to allow it."""

    host: str
    port: int
    count: int
    reason: str
    fix: str | None

    def line(self) -> str:
        if not self.host:  # the sum of the hosts not listed one by one
            return f"refused {self.count} more: {self.reason}"
        times = f" x{self.count}" if self.count > 1 else ""
        fix = f"; to allow it: {self.fix}" if self.fix else ""
        return f"refused {self.host}:{self.port}{times}: {self.reason}{fix}"


@dataclass
class AskScope:
    """While one command runs: who to ask, what was answered "once", what was refused."""

    prompt: PromptFunction | None
    command: str = ""
    answers: dict[str, HostDecision] = field(default_factory=dict)
    questions: int = 0
    refusals: dict[tuple[str, int], NetworkRefusal] = field(default_factory=dict)
    unlisted_refusals: int = 0  # refusals beyond MAX_REFUSALS_LISTED distinct hosts

    def note_refusal(self, decision: HostDecision) -> None:
        key = (decision.host, decision.port)
        known = self.refusals.get(key)
        if known is not None:
            self.refusals[key] = dataclasses.replace(known, count=known.count + 1)
        elif len(self.refusals) < MAX_REFUSALS_LISTED:
            self.refusals[key] = NetworkRefusal(
                decision.host, decision.port, 1, decision.reason, decision.fix
            )
        else:
            self.unlisted_refusals += 1

    def summary(self) -> list[NetworkRefusal]:
        """The refusals to name in the command's result (the rest summed up in one line)."""
        listed = list(self.refusals.values())
        if self.unlisted_refusals:
            listed.append(
                NetworkRefusal(
                    host="",
                    port=0,
                    count=self.unlisted_refusals,
                    reason=f"connections to more than {MAX_REFUSALS_LISTED} other hosts",
                    fix=None,
                )
            )
        return listed


class NetworkGate:
    """The one network check of a session (see the module docstring).

    ``session_prompt`` asks when no command's own prompt is active (a library Session's
    callback; None: headless outside a command). ``policy`` is the operator's lists; stored
    ``domain`` deny rules are joined to it here.
    """

    def __init__(
        self,
        gate: Gate,
        policy: DomainPolicy,
        mode: NetworkMode,
        *,
        session_prompt: PromptFunction | None,
    ) -> None:
        self.gate = gate
        self.mode = mode
        self.session_prompt = session_prompt
        self.policy = with_stored_denials(policy, gate.store.rules(gate.project))
        self._scopes: list[AskScope] = []
        self._lock = threading.Lock()

    # -- the proxy's side --
    def connect(self, proxy: AllowListProxy, *, ledger: Ledger, session: str, posture: str) -> None:
        """Wire ``proxy``: this policy with its ask hook, the ledger, the refusal tap."""
        proxy.policy = dataclasses.replace(self.policy, ask=self.ask_hook())
        proxy.set_event_hook(
            ledger_hook(ledger, session=session, project=str(self.gate.project), posture=posture)
        )
        proxy.set_refusal_tap(self.note_refusal)

    def ask_hook(self) -> AskHook:
        """The proxy's ``ask``: the check for a host no list covers, asked in the running
        command's scope (or the session's prompt)."""

        def ask(host: str, port: int) -> HostDecision:
            scope = self.current_scope()
            prompt = scope.prompt if scope is not None else self.session_prompt
            command = f" (while running `{shorten(scope.command)}`)" if scope else ""
            action = f"let the jailed command connect to {host}:{port}{command}"
            return self.decide_unlisted(host, port, prompt=prompt, scope=scope, action=action)

        return ask

    def note_refusal(self, decision: HostDecision) -> None:
        """Every refusal the proxy makes, before any summarising: the running commands name
        them in their results."""
        with self._lock:
            for scope in self._scopes:
                scope.note_refusal(decision)

    @contextlib.contextmanager
    def asking(self, prompt: PromptFunction | None, command: str = "") -> Iterator[AskScope]:
        """While a command runs: its prompt answers the proxy's questions, and its refusals
        are collected. Scopes nest; the newest one asks."""
        scope = AskScope(prompt=prompt, command=command)
        with self._lock:
            self._scopes.append(scope)
        try:
            yield scope
        finally:
            with self._lock:
                self._scopes.remove(scope)

    def current_scope(self) -> AskScope | None:
        with self._lock:
            return self._scopes[-1] if self._scopes else None

    # -- fetch's side --
    def check_fetch(
        self, host: str, port: int, *, action: str, prompt: PromptFunction | None
    ) -> Decision | HostDecision:
        """One hop of a fetch: a refusal by the lists (or by autonomy, which never adds a
        host) as a HostDecision; else the gate's decision (a network action is tier high and
        the person may be asked), recorded in the ledger."""
        found = self.policy.match(host, port)
        if found.source is DecisionSource.DENY_RULE:
            return found
        verdict = self.gate.check_action(network(host, action=action))
        unlisted = found.source is DecisionSource.NO_MATCH
        if unlisted and self._widened_by_autonomy(verdict):
            return _refused(host, port, self._yolo_reason(host, verdict), allow_fix(host))
        return self.gate.decide(verdict, prompt)

    def _widened_by_autonomy(self, verdict: Verdict) -> bool:
        """Would this verdict add a host to the allow-list on autonomy alone (yolo)?"""
        return (
            self.mode is NetworkMode.ALLOWLIST
            and verdict.outcome is Outcome.ALLOW
            and verdict.source.kind is not SourceKind.RULE
        )

    @staticmethod
    def _yolo_reason(host: str, verdict: Verdict) -> str:
        return (
            f"{host} is not on the allow-list, and autonomy never adds a host "
            f"({verdict.autonomy.level.value} skips the question, so the answer is no)"
        )

    # -- the proxy's check --
    def decide_unlisted(
        self,
        host: str,
        port: int,
        *,
        prompt: PromptFunction | None,
        scope: AskScope | None,
        action: str,
    ) -> HostDecision:
        """Decide a host no list covers: a rule, else the person (remembered as chosen), else
        refused - and never allowed by autonomy alone."""
        if scope is not None and host in scope.answers:
            return scope.answers[host]
        verdict = self.gate.check_action(network(host, action=action))
        if verdict.outcome is Outcome.DENY:
            rule = verdict.source.id
            return _refused(
                host,
                port,
                verdict.reason,
                f"remove the deny rule: stockade permissions remove {rule}",
            )
        if self._widened_by_autonomy(verdict):  # yolo skipped the question: the answer is no
            return _refused(host, port, self._yolo_reason(host, verdict), allow_fix(host))
        if verdict.outcome is Outcome.ALLOW:
            return self._allowed(host, port, verdict.reason)
        return self._ask(host, port, verdict, prompt, scope)

    def _ask(
        self,
        host: str,
        port: int,
        verdict: Verdict,
        prompt: PromptFunction | None,
        scope: AskScope | None,
    ) -> HostDecision:
        if prompt is None:
            return _refused(
                host,
                port,
                f"{host} is not on the allow-list and nobody can be asked (headless)",
                allow_fix(host),
            )
        if scope is not None and scope.questions >= MAX_QUESTIONS_PER_COMMAND:
            return _refused(
                host,
                port,
                f"{host} is not on the allow-list, and this command already asked about "
                f"{MAX_QUESTIONS_PER_COMMAND} new hosts",
                allow_fix(host),
            )
        if scope is not None:
            scope.questions += 1
        try:
            decision = self.gate.decide(verdict, prompt)
        except Exception as error:  # e.g. a client that cannot be asked while a tool call runs
            return _refused(host, port, f"{host} is not on the allow-list and asking failed "
                            f"({error})", allow_fix(host))  # fmt: skip
        answer = self._from_answer(host, port, decision)
        if scope is not None and decision.answer in (Choice.ALLOW_ONCE, Choice.DENY_ONCE):
            scope.answers[host] = answer  # "once": for the rest of this command
        return answer

    def _from_answer(self, host: str, port: int, decision: Decision) -> HostDecision:
        if decision.allowed:
            return self._allowed(host, port, decision.reason)
        answered = decision.reason.split(" (", 1)[0]  # "denied once when asked", ...
        return _refused(host, port, f"{host} is not on the allow-list and was {answered}", (
            decision.fix if decision.answer is Choice.DENY_PROJECT and decision.fix
            else allow_fix(host)
        ))  # fmt: skip

    def _allowed(self, host: str, port: int, reason: str) -> HostDecision:
        return HostDecision(
            host=host,
            port=port,
            allowed=True,
            source=DecisionSource.ASK_ALLOWED,
            reason=reason,
            allow_private=self.policy.allow_private,
        )


def _refused(host: str, port: int, reason: str, fix: str) -> HostDecision:
    return HostDecision(
        host=host, port=port, allowed=False, source=DecisionSource.ASK_REFUSED, reason=reason,
        fix=fix,
    )  # fmt: skip
