"""The gate: turn a tier into a decision - allow, ask or deny - and say who decided and why.

Evaluation order for each segment of a command (first match wins)::

    1. built-in hard denies      HARD_DENY_RULES (classifier rule ids)   deny, no prompt possible
    2. explicit deny rules       settings / session / project            deny
       explicit ask rules        settings / session / project            ask (every level)
    3. allow rules               settings / session / project            allow, bounded by floors
    4. built-in ask defaults     BUILTIN_ASK_RULES (not at yolo)          ask
    5. the autonomy ceiling      tier <= ceiling ? allow : ask

A command's segments (including those inside ``$(...)`` and ``<(...)``) combine as: any deny ->
deny; else any ask -> ask; else allow. Floors bound even an allow rule: a destructive segment
always asks below yolo, a sandbox escape always asks (at every level), and a hard deny can
never be allowed. Non-shell actions (:mod:`stockade.permissions.actions`) go through the
same steps with their effect tier and their rule namespace.

Every :class:`Verdict` names its deciding :class:`Source` (built-in rule id, user rule id,
autonomy level, or - after a prompt - the answer) and a human reason. ``check`` is pure
(nothing is recorded); ``resolve``/``decide`` turn a verdict into a :class:`Decision`, apply
what the answer remembers, and write the ledger.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from stockade.errors import UsageError
from stockade.permissions.actions import HARD_DENY_EFFECTS, ActionPlan
from stockade.permissions.autonomy import (
    ENV_VAR,
    LADDER,
    Autonomy,
    EffectiveAutonomy,
    effective_autonomy,
    parse_autonomy,
)
from stockade.permissions.config import PermissionConfig
from stockade.permissions.ledger import (
    ALLOWED,
    DENIED,
    Ledger,
    LedgerEntry,
    SessionReport,
    new_session_id,
)
from stockade.permissions.prompt import Choice, PromptFunction
from stockade.permissions.rules import (
    Namespace,
    Rule,
    RuleBook,
    RuleDecision,
    RuleStore,
    SessionRules,
    canonical_project,
    escape_glob,
    first_match,
)
from stockade.permissions.verdict import (
    Decision,
    Outcome,
    Part,
    Source,
    SourceKind,
    Verdict,
    shorten,
)
from stockade.risk.rules import HARD_DENIES
from stockade.sandbox.posture import Posture
from stockade.tiers import Tier

# --- 1. built-in hard denies (classifier rule id -> what it is) -----------------------------
# Nothing can allow these: no rule, no answer, no autonomy level (yolo included). The
# classifier recognises the shapes through every quoting, wrapper and substitution trick; the
# gate only trusts its stable rule ids. The table is the classifier's rule table
# (stockade.risk.rules), so the two cannot drift apart.
HARD_DENY_RULES: Mapping[str, str] = HARD_DENIES

# --- 4. built-in ask defaults (bash globs; an allow rule overrides them) -------------------
# Asked at every level below yolo for a network destination (``domain`` namespace) that no
# rule covers: the allow-list is the operator's, autonomy alone never widens it.
NEW_DOMAIN_ASK = "builtin.ask.new-domain"

BUILTIN_ASK_RULES: dict[str, tuple[str, ...]] = {
    "builtin.ask.rm": ("rm *",),
    "builtin.ask.git-push": ("git push *",),
    "builtin.ask.git-commit": ("git commit *",),
    "builtin.ask.git-reset": ("git reset *",),
    "builtin.ask.package-install": (
        "npm install *",
        "npm i *",
        "npm ci *",
        "npm add *",
        "pnpm install *",
        "pnpm i *",
        "pnpm add *",
        "yarn add *",
        "yarn install *",
        "bun install *",
        "bun add *",
        "pip install *",
        "pip3 install *",
        "python -m pip install *",
        "python3 -m pip install *",
        "uv pip install *",
        "uv add *",
        "poetry add *",
        "poetry install *",
        "pipx install *",
        "gem install *",
        "bundle install *",
        "cargo install *",
        "cargo add *",
        "go install *",
        "go get *",
        "apt install *",
        "apt-get install *",
        "brew install *",
        "dnf install *",
        "yum install *",
        "apk add *",
    ),
    "builtin.ask.cargo-build": ("cargo build *",),
    "builtin.ask.cargo-run": ("cargo run *",),
    "builtin.ask.make": ("make *",),
    "builtin.ask.docker": ("docker*",),
}


# --- what the gate needs from the classifier (stockade.risk's contract) ---------------------


class ReasonLike(Protocol):
    @property
    def rule_id(self) -> str: ...
    @property
    def segment(self) -> str: ...
    @property
    def tier(self) -> Tier: ...
    @property
    def detail(self) -> str: ...


class SubstitutionLike(Protocol):
    @property
    def segments(self) -> Sequence[SegmentLike]: ...


class SegmentLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def words(self) -> Sequence[str]: ...
    @property
    def env_stripped(self) -> str: ...
    @property
    def substitutions(self) -> Sequence[SubstitutionLike]: ...


class AssessmentLike(Protocol):
    @property
    def tier(self) -> Tier: ...
    @property
    def reasons(self) -> Sequence[ReasonLike]: ...
    @property
    def segments(self) -> Sequence[SegmentLike]: ...


Classifier = Callable[[str], AssessmentLike]


# --- the gate ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Item:
    """One thing to judge: a segment, a leftover classifier finding, or an action subject."""

    text: str
    tier: Tier
    namespace: Namespace | None
    allow_subjects: tuple[str, ...]  # matched by allow rules (exact text only: loosening)
    tighten_subjects: tuple[str, ...]  # matched by deny/ask rules (every spelling: tightening)
    remember: str | None
    hard_deny: tuple[str, str] | None = None  # (id, what)
    why_tier: str = ""
    builtin_asks: bool = False
    asks_by_default: str | None = None  # a built-in ask for this action plan (id)
    words: tuple[str, ...] = ()  # a shell segment's unquoted words (for the generalised rule)


class Gate:
    """Decides commands and actions for one project and one session.

    ``autonomy`` is the requested level; ``posture`` the sandbox the commands will run under
    (None: no sandbox) - ``auto-accept`` is lowered to ``balanced`` unless it is confining and
    proven (``gate.autonomy.warning`` says so). ``classifier`` defaults to
    ``stockade.risk.classify`` with the config's program overrides. ``session_rules`` holds
    what "allow for this session" remembers (default: in memory, as long as this gate);
    ``offer_session=False`` never offers that answer (a one-shot command without a session id).
    """

    def __init__(
        self,
        *,
        project: str | os.PathLike[str] | None = None,
        autonomy: Autonomy | str = Autonomy.BALANCED,
        posture: Posture | None = None,
        config: PermissionConfig | None = None,
        store: RuleStore | None = None,
        ledger: Ledger | None = None,
        session_id: str | None = None,
        classifier: Classifier | None = None,
        session_rules: SessionRules | None = None,
        offer_session: bool = True,
    ) -> None:
        self.project = canonical_project(project if project is not None else os.getcwd())
        self.config = config if config is not None else PermissionConfig()
        requested = autonomy if isinstance(autonomy, Autonomy) else parse_autonomy(autonomy)
        self.posture = posture
        self.autonomy = effective_autonomy(requested, posture)
        self.store = store if store is not None else RuleStore()
        self.session_id = session_id or new_session_id()
        self.session_rules = (
            session_rules if session_rules is not None else SessionRules(self.project)
        )
        # "allow for this session" is offered only where a session outlives the question
        self.offer_session = offer_session
        self.rulebook = RuleBook(self.project, self.config.rules(), self.session_rules, self.store)
        self._ledger = ledger
        self._classifier = classifier

    @property
    def ledger(self) -> Ledger:
        if self._ledger is None:
            self._ledger = Ledger()
        return self._ledger

    def classify(self, command: str) -> AssessmentLike:
        if self._classifier is None:
            import importlib

            risk = importlib.import_module("stockade.risk")
            overrides = dict(self.config.program_overrides) or None

            def classify(text: str) -> AssessmentLike:
                return risk.classify(text, program_overrides=overrides)  # type: ignore[no-any-return]

            self._classifier = classify
        return self._classifier(command)

    def hard_denied(self, command: str) -> str | None:
        """The built-in hard deny ``command`` hits (its rule id), or None."""
        found = _hard_deny(self.classify(command).reasons)
        return found[0] if found is not None else None

    def _tier_of(self, command: str) -> Tier:
        return self.classify(command).tier

    # -- judging --------------------------------------------------------------------------

    def check(self, command: str, *, escape: bool = False, cwd: str | None = None) -> Verdict:
        """The verdict on a shell command (pure: asks nobody, records nothing)."""
        assessment = self.classify(command)
        items = _items_from_assessment(command, assessment, self.config.program_floors)
        effects = ("shell", "sandbox-escape") if escape else ("shell",)
        return self._judge(command, "bash", assessment.tier, items, effects, escape, cwd)

    def check_action(self, plan: ActionPlan, *, cwd: str | None = None) -> Verdict:
        """The verdict on a non-shell action plan, through the same steps."""
        hard = next(
            ((e.value, HARD_DENY_EFFECTS[e]) for e in plan.effects if e in HARD_DENY_EFFECTS),
            None,
        )
        namespace, subject = plan.subject if plan.subject else (None, "")
        subjects = (subject,) if subject else ()
        item = _Item(
            text=subject or plan.action,
            tier=plan.tier,
            namespace=namespace,
            allow_subjects=subjects,
            tighten_subjects=subjects,
            remember=_remember_pattern(namespace, subject) if subject else None,
            hard_deny=hard,
            why_tier=", ".join(e.value for e in plan.effects),
            asks_by_default=NEW_DOMAIN_ASK if namespace is Namespace.DOMAIN else None,
        )
        effects = tuple(e.value for e in plan.effects)
        return self._judge(plan.action, plan.kind, plan.tier, [item], effects, False, cwd)

    def _judge(
        self,
        action: str,
        kind: str,
        tier: Tier,
        items: Sequence[_Item],
        effects: tuple[str, ...],
        escape: bool,
        cwd: str | None,
    ) -> Verdict:
        rules = self.rulebook.snapshot()
        level = self.autonomy.level
        parts = tuple(_judge_item(item, rules, level) for item in items)
        where = os.path.realpath(cwd or os.getcwd())
        outcome, source, reason = _combine(parts)
        if outcome is Outcome.ASK and not escape:
            parts = tuple(
                self._generalise(item, part) for item, part in zip(items, parts, strict=True)
            )
        needs_permission = outcome is Outcome.ASK
        if escape and outcome is not Outcome.DENY:
            approved = self.session_rules.escape_approved(where, action)
            if outcome is Outcome.ALLOW and approved:
                source = Source(SourceKind.ANSWER, "session-escape")
                reason = "sandbox escape approved for this session (same directory and command)"
            elif outcome is Outcome.ALLOW:
                outcome = Outcome.ASK
                source = Source(SourceKind.FLOOR, "sandbox-escape")
                reason = "a sandbox escape always asks"
            else:
                reason = f"{reason}; and it asks to run outside the sandbox"
        choices: tuple[Choice, ...] = ()
        if outcome is Outcome.ASK:
            session = self.offer_session and (not escape or self.session_rules.keeps_escapes)
            choices = _choices(parts, escape, needs_permission, session=session)
        return Verdict(
            action=action,
            kind=kind,
            outcome=outcome,
            tier=tier,
            source=source,
            reason=reason,
            autonomy=self.autonomy,
            parts=parts,
            effects=effects,
            escape=escape,
            needs_permission=needs_permission if outcome is Outcome.ASK else False,
            choices=choices,
            cwd=where,
            project=self.project,
        )

    def _generalise(self, item: _Item, part: Part) -> Part:
        """Add the generalised rule to an asking shell segment (see ``generalise``)."""
        from dataclasses import replace

        from stockade.permissions.generalise import generalised

        if part.outcome is not Outcome.ASK or item.namespace is not Namespace.BASH:
            return part
        if part.remember is None or not item.words:
            return part
        general = generalised(item.text, item.words, item.tier, self._tier_of)
        if general is None or general == part.remember:
            return part
        fix = part.fix and part.fix.replace(_quote(part.remember), _quote(general))
        return replace(part, general=general, fix=fix)

    # -- deciding -------------------------------------------------------------------------

    def decide(self, verdict: Verdict, prompt: PromptFunction | None) -> Decision:
        """Ask ``prompt`` when the verdict is ask (None: headless, deny), apply, record."""
        if verdict.outcome is Outcome.ASK and prompt is not None:
            return self.resolve(verdict, prompt(verdict.prompt_request()))
        return self.resolve(verdict, None)

    def resolve(self, verdict: Verdict, answer: Choice | None) -> Decision:
        """Turn a verdict (and, for ask, the answer - None when nobody could answer) into a
        decision; remember what the answer says to remember; write the ledger entry.

        An answer that was not offered raises UsageError (a prompt callback bug), nothing is
        remembered and nothing runs.
        """
        decision = self._apply(verdict, answer)
        entry_id = self.record(decision)
        return _with_ledger_id(decision, entry_id)

    def _apply(self, verdict: Verdict, answer: Choice | None) -> Decision:
        if answer is not None and answer not in verdict.choices:
            offered = ", ".join(c.value for c in verdict.choices) or "nothing (no prompt)"
            raise UsageError(
                f"prompt answer {answer.value!r} was not offered for this request",
                fix=f"return one of request.choices: {offered}",
            )
        if verdict.outcome is Outcome.ALLOW:
            return Decision(verdict, True, verdict.source, verdict.reason)
        if verdict.outcome is Outcome.DENY:
            return Decision(verdict, False, verdict.source, verdict.reason, fix=_deny_fix(verdict))
        if answer is None:
            return Decision(
                verdict,
                False,
                Source(SourceKind.ANSWER, "headless"),
                f"needs a prompt and nobody can answer (headless): {verdict.reason}",
                headless=True,
                fix=headless_fix(verdict),
            )
        source = Source(SourceKind.ANSWER, answer.value)
        remembered: list[Rule] = []
        if answer is Choice.ALLOW_SESSION:
            if verdict.escape:
                self.session_rules.approve_escape(verdict.cwd, verdict.action)
            for part in _to_remember(verdict):
                remembered.append(
                    self.session_rules.add(
                        part.namespace,  # type: ignore[arg-type]
                        _pattern_for(part, exact=verdict.escape),
                        RuleDecision.ALLOW,
                        source="prompt answer",
                    )
                )
        elif answer in _PROJECT_ANSWERS:
            decision = RuleDecision.ALLOW if answer.allows else RuleDecision.DENY
            for part in _to_remember(verdict):
                remembered.append(
                    self.store.add(
                        self.project,
                        part.namespace,  # type: ignore[arg-type]
                        _pattern_for(part, exact=answer.exact),
                        decision,
                        source="prompt answer",
                    )
                )
        scope = {
            Choice.ALLOW_ONCE: "allowed once",
            Choice.ALLOW_SESSION: "allowed for this session",
            Choice.ALLOW_PROJECT: "allowed for this project",
            Choice.ALLOW_PROJECT_EXACT: "allowed for this project (exact command)",
            Choice.DENY_ONCE: "denied once",
            Choice.DENY_PROJECT: "denied for this project",
            Choice.DENY_PROJECT_EXACT: "denied for this project (exact command)",
        }[answer]
        if remembered:
            kept = ", ".join(f"`{r.namespace}:{r.pattern}`" for r in remembered)
            scope = f"{scope} as {kept}"
        reason = f"{scope} when asked ({verdict.reason})"
        fix = None
        if not answer.allows:
            fix = (
                "the person at the prompt refused it"
                if answer is Choice.DENY_ONCE
                else "remove the deny rule: stockade permissions remove "
                + " ".join(r.id for r in remembered)
            )
        return Decision(
            verdict,
            answer.allows,
            source,
            reason,
            answer=answer,
            remembered=tuple(remembered),
            fix=fix,
        )

    def completion_report(self) -> SessionReport:
        """Counts by decision and tier for this gate's session (print it when a session ends)."""
        return self.ledger.report(self.session_id)

    def record(self, decision: Decision) -> int:
        """Write ``decision`` to the ledger; return the entry id."""
        verdict = decision.verdict
        answer = (
            "headless"
            if decision.headless
            else (decision.answer.value if decision.answer is not None else None)
        )
        posture = self.posture.summary() if self.posture is not None else "no sandbox"
        if verdict.escape and decision.allowed:
            posture = "sandbox escape: UNCONFINED"
        return self.ledger.record(
            LedgerEntry(
                session=self.session_id,
                project=self.project,
                action=verdict.action,
                kind=verdict.kind,
                tier=verdict.tier.label,
                effects=verdict.effects,
                source=str(decision.source),
                autonomy=_autonomy_text(verdict.autonomy),
                posture=posture,
                decision=ALLOWED if decision.allowed else DENIED,
                answer=answer,
                reason=decision.reason,
            )
        )


# --- building items ---------------------------------------------------------------------------


def _flatten(segments: Iterable[SegmentLike]) -> Iterator[SegmentLike]:
    """Every segment, including those inside command and process substitutions."""
    for segment in segments:
        yield segment
        for substitution in getattr(segment, "substitutions", ()):
            yield from _flatten(substitution.segments)


def _tighten_forms(segment: SegmentLike) -> tuple[str, ...]:
    """Every spelling a deny/ask rule should see: the text, the unquoted words, the command
    name without its directory (``/bin/rm`` -> ``rm``)."""
    forms = [segment.env_stripped, segment.text]
    words = list(segment.words)
    if words:
        forms.append(" ".join(words))
        base = os.path.basename(words[0])
        if base and base != words[0]:
            forms.append(" ".join([base, *words[1:]]))
    return tuple(dict.fromkeys(f.strip() for f in forms if f and f.strip()))


def _items_from_assessment(
    command: str, assessment: AssessmentLike, floors: Mapping[str, Tier] | None = None
) -> list[_Item]:
    """One item per segment, tiered by the reasons that name it; reasons that name no segment
    become their own items (no allow rule can cover them). If the items' tiers fall short of
    the classifier's overall tier, the whole command is added at that tier: the gate never
    judges a command as safer than the classifier did."""
    items: list[_Item] = []
    attributed: set[int] = set()
    reasons = list(assessment.reasons)
    seen: set[int] = set()
    for segment in _flatten(assessment.segments):
        if id(segment) in seen:
            continue
        seen.add(id(segment))
        keys = {segment.text, segment.env_stripped}
        mine = [r for r in reasons if r.segment in keys]
        attributed.update(id(r) for r in mine)
        subject = (segment.env_stripped or segment.text).strip()
        tier = max((r.tier for r in mine), default=assessment.tier)
        why = _why(mine, tier)
        floor = _program_floor(segment, floors)
        if floor is not None and floor[1] > tier:
            tier = floor[1]
            why = f"{floor[0]} is at least {tier} by settings"
        items.append(
            _Item(
                text=subject,
                tier=tier,
                namespace=Namespace.BASH,
                allow_subjects=(subject,) if subject else (),
                tighten_subjects=_tighten_forms(segment),
                remember=escape_glob(subject) if subject else None,
                hard_deny=_hard_deny(mine),
                why_tier=why,
                builtin_asks=True,
                words=tuple(segment.words),
            )
        )
    leftovers: dict[str, list[ReasonLike]] = {}
    for reason in reasons:
        if id(reason) not in attributed:
            leftovers.setdefault(reason.segment or command, []).append(reason)
    for text, found in leftovers.items():
        tier = max(r.tier for r in found)
        items.append(
            _Item(
                text=text,
                tier=tier,
                namespace=Namespace.BASH,
                allow_subjects=(),
                tighten_subjects=(text.strip(),),
                remember=None,
                hard_deny=_hard_deny(found),
                why_tier=_why(found, tier),
            )
        )
    if not items or max(item.tier for item in items) < assessment.tier:
        items.append(
            _Item(
                text=command,
                tier=assessment.tier,
                namespace=Namespace.BASH,
                allow_subjects=(),
                tighten_subjects=(command.strip(),),
                remember=None,
                why_tier=f"the classifier rates the whole command {assessment.tier}",
            )
        )
    return items


def _program_floor(
    segment: SegmentLike, floors: Mapping[str, Tier] | None
) -> tuple[str, Tier] | None:
    """The settings floor for the program a segment runs (by its command name), if any."""
    if not floors or not segment.words:
        return None
    name = os.path.basename(segment.words[0])
    floor = floors.get(name)
    return None if floor is None else (name, floor)


def _hard_deny(reasons: Sequence[ReasonLike]) -> tuple[str, str] | None:
    for reason in reasons:
        if reason.rule_id in HARD_DENY_RULES:
            return reason.rule_id, HARD_DENY_RULES[reason.rule_id]
    return None


def _why(reasons: Sequence[ReasonLike], tier: Tier) -> str:
    top = [r for r in reasons if r.tier == tier] or list(reasons)
    if not top:
        return f"rated {tier}"
    first = top[0]
    detail = f": {first.detail}" if first.detail else ""
    return f"{first.rule_id}{detail}"


def _remember_pattern(namespace: Namespace | None, subject: str) -> str | None:
    if namespace is None:
        return None
    if namespace is Namespace.DOMAIN:
        return subject.strip().lower()
    return escape_glob(subject.strip())


# --- judging one item ---------------------------------------------------------------------------


def _judge_item(item: _Item, rules: Sequence[Rule], level: Autonomy) -> Part:
    def part(
        outcome: Outcome,
        source: Source,
        reason: str,
        *,
        rememberable: bool = False,
        fix: str | None = None,
    ) -> Part:
        return Part(
            text=item.text,
            tier=item.tier,
            outcome=outcome,
            source=source,
            reason=reason,
            namespace=item.namespace,
            remember=item.remember,
            rememberable=rememberable and item.remember is not None,
            fix=fix,
        )

    label = shorten(item.text)
    # 1. built-in hard denies
    if item.hard_deny is not None:
        rule_id, what = item.hard_deny
        return part(
            Outcome.DENY,
            Source(SourceKind.BUILTIN_DENY, rule_id),
            f"`{label}` is a built-in hard deny ({what}); it can never be allowed",
        )
    floor = item.tier is Tier.DESTRUCTIVE and level is not Autonomy.YOLO
    namespace = item.namespace
    if namespace is not None:
        # 2. explicit deny rules, then explicit ask rules
        rule = first_match(rules, namespace, RuleDecision.DENY, item.tighten_subjects)
        if rule is not None:
            return part(
                Outcome.DENY,
                Source(SourceKind.RULE, rule.id),
                f"`{label}` matches the {rule.scope} deny rule `{rule.pattern}`",
            )
        rule = first_match(rules, namespace, RuleDecision.ASK, item.tighten_subjects)
        if rule is not None:
            return part(
                Outcome.ASK,
                Source(SourceKind.RULE, rule.id),
                f"`{label}` matches the {rule.scope} ask rule `{rule.pattern}`",
                fix=f"remove the ask rule {rule.id} to stop being asked",
            )
        # 3. allow rules, bounded by the destructive floor
        rule = first_match(rules, namespace, RuleDecision.ALLOW, item.allow_subjects)
        if rule is not None and floor:
            return part(
                Outcome.ASK,
                Source(SourceKind.FLOOR, "destructive"),
                f"`{label}` is destructive ({item.why_tier}); destructive actions always ask "
                f"below yolo, even with the allow rule `{rule.pattern}` ({rule.id})",
                fix=_floor_fix(),
            )
        if rule is not None:
            return part(
                Outcome.ALLOW,
                Source(SourceKind.RULE, rule.id),
                f"`{label}` matches the {rule.scope} allow rule `{rule.pattern}`",
            )
    # 4. built-in ask defaults (yolo prompts for nothing)
    if item.asks_by_default is not None and level is not Autonomy.YOLO:
        return part(
            Outcome.ASK,
            Source(SourceKind.BUILTIN_ASK, item.asks_by_default),
            f"`{label}` is a network destination no rule covers; the allow-list is widened only "
            "by a rule or an answer, never by autonomy alone",
            rememberable=True,
            fix=_builtin_ask_fix(item),
        )
    if item.builtin_asks and level is not Autonomy.YOLO:
        for ask_id, patterns in BUILTIN_ASK_RULES.items():
            if any(
                _builtin_matcher(pattern)(subject)
                for pattern in patterns
                for subject in item.tighten_subjects
            ):
                return part(
                    Outcome.ASK,
                    Source(SourceKind.BUILTIN_ASK, ask_id),
                    f"`{label}` asks by default ({ask_id})",
                    rememberable=not floor,
                    fix=_floor_fix() if floor else _builtin_ask_fix(item),
                )
    # 5. the autonomy ceiling
    ceiling = level.ceiling
    if level.auto_runs(item.tier):
        return part(
            Outcome.ALLOW,
            Source(SourceKind.AUTONOMY, level.value),
            f"{item.tier} is within what {level} runs without asking (up to {ceiling})",
        )
    limit = "nothing" if ceiling is None else f"up to {ceiling}"
    return part(
        Outcome.ASK,
        Source(SourceKind.AUTONOMY, level.value),
        f"`{label}` is {item.tier} ({item.why_tier}); {level} runs {limit} without asking",
        rememberable=not floor,
        fix=_floor_fix() if floor else _autonomy_fix(item),
    )


def _builtin_matcher(pattern: str) -> Callable[[str], bool]:
    from stockade.permissions.rules import compile_matcher

    return compile_matcher(Namespace.BASH, pattern)


def _combine(parts: Sequence[Part]) -> tuple[Outcome, Source, str]:
    """Any deny -> deny; else any ask -> ask; else allow. The deciding part is the first deny,
    else the highest-tier ask, else the highest-tier allow."""
    for outcome in (Outcome.DENY, Outcome.ASK, Outcome.ALLOW):
        matching = [p for p in parts if p.outcome is outcome]
        if not matching:
            continue
        chosen = matching[0] if outcome is Outcome.DENY else max(matching, key=lambda p: p.tier)
        return outcome, chosen.source, chosen.reason
    raise ValueError("nothing to judge")  # pragma: no cover - items are never empty


def _choices(
    parts: Sequence[Part], escape: bool, needs_permission: bool, *, session: bool = True
) -> tuple[Choice, ...]:
    """Only the answers that mean something: no P/N for escapes (never persisted), no S/P when
    a floor or an ask rule would ask again anyway, no S where no session outlives the answer,
    E/X only when the exact rule differs from the generalised one."""
    asking = [p for p in parts if p.outcome is Outcome.ASK]
    remember_allow = all(p.rememberable for p in asking) if needs_permission else True
    remember_deny = bool(asking) and all(p.remember is not None for p in asking)
    exact_differs = any(p.general is not None for p in asking)
    choices = [Choice.ALLOW_ONCE]
    if remember_allow:
        if session:
            choices.append(Choice.ALLOW_SESSION)
        if not escape:
            choices.append(Choice.ALLOW_PROJECT)
            if exact_differs:
                choices.append(Choice.ALLOW_PROJECT_EXACT)
    choices.append(Choice.DENY_ONCE)
    if remember_deny and not escape:
        choices.append(Choice.DENY_PROJECT)
        if exact_differs:
            choices.append(Choice.DENY_PROJECT_EXACT)
    return tuple(choices)


_PROJECT_ANSWERS = (
    Choice.ALLOW_PROJECT,
    Choice.ALLOW_PROJECT_EXACT,
    Choice.DENY_PROJECT,
    Choice.DENY_PROJECT_EXACT,
)


def _pattern_for(part: Part, *, exact: bool) -> str:
    pattern = part.remember if exact else part.stored
    assert pattern is not None  # _to_remember keeps only parts with a pattern
    return pattern


def _to_remember(verdict: Verdict) -> list[Part]:
    return [p for p in verdict.asking if p.remember is not None and p.namespace is not None]


# --- messages ---------------------------------------------------------------------------------


def _autonomy_text(autonomy: EffectiveAutonomy) -> str:
    if autonomy.level is autonomy.requested:
        return autonomy.level.value
    return f"{autonomy.level.value} (requested {autonomy.requested.value})"


def _needed_level(tier: Tier) -> Autonomy:
    for level, rung in LADDER.items():
        if rung.auto_runs_up_to is not None and tier <= rung.auto_runs_up_to:
            return level
    return Autonomy.YOLO  # pragma: no cover - yolo runs everything


def _allow_rule_fix(item: _Item) -> str:
    if item.namespace is None or item.remember is None:
        return "answer the prompt interactively"
    prefix = "" if item.namespace is Namespace.BASH else f"--namespace {item.namespace} "
    return f"add an allow rule: stockade permissions add allow {prefix}{_quote(item.remember)}"


def _builtin_ask_fix(item: _Item) -> str:
    return (
        f"{_allow_rule_fix(item)} (built-in ask defaults apply at every level below yolo; "
        f"--autonomy yolo or {ENV_VAR}=yolo skips them)"
    )


def _autonomy_fix(item: _Item) -> str:
    needed = _needed_level(item.tier)
    raise_it = f"raise the level with --autonomy {needed} or {ENV_VAR}={needed}"
    if needed is Autonomy.AUTO_ACCEPT:
        raise_it += " (honoured only under a proven sandbox)"
    if item.remember is None:
        return raise_it
    return f"{raise_it}, or {_allow_rule_fix(item)}"


def _floor_fix() -> str:
    return (
        "destructive actions ask at every level below yolo: answer the prompt interactively, "
        f"or pass --yolo (--autonomy yolo, {ENV_VAR}=yolo) for this run"
    )


def headless_fix(verdict: Verdict) -> str:
    """How to get past an ask when nobody can answer: the flags, the variable, the rule."""
    if verdict.escape and not verdict.needs_permission:
        return (
            "sandbox escapes are denied in headless runs at every autonomy level; "
            "run it interactively to approve the escape, or without escaping"
        )
    fixes = [p.fix for p in verdict.asking if p.fix]
    text = "; ".join(dict.fromkeys(fixes)) or (
        f"run interactively, raise the level with --autonomy or {ENV_VAR}, "
        "or add an allow rule (stockade permissions add allow PATTERN)"
    )
    if verdict.escape:
        text += "; and sandbox escapes are denied in headless runs at every autonomy level"
    return text


def _deny_fix(verdict: Verdict) -> str | None:
    if verdict.source.kind is SourceKind.BUILTIN_DENY:
        return "built-in hard denies cannot be allowed; run it yourself outside stockade"
    if verdict.source.kind is SourceKind.RULE and verdict.source.id.startswith("c-"):
        return "remove the entry from [permissions] deny in your settings"
    if verdict.source.kind is SourceKind.RULE:
        return f"remove the deny rule: stockade permissions remove {verdict.source.id}"
    return None


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _with_ledger_id(decision: Decision, entry_id: int) -> Decision:
    from dataclasses import replace

    return replace(decision, ledger_id=entry_id)


__all__ = [
    "BUILTIN_ASK_RULES",
    "HARD_DENY_RULES",
    "Decision",
    "Gate",
    "Outcome",
    "Part",
    "Source",
    "SourceKind",
    "Verdict",
    "headless_fix",
]
