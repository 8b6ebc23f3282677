"""The verdict combiner: every evaluation step, the floors, multi-segment commands, answers,
headless runs and action plans. The classifier is a stub here (tiers stated exactly); the
real classifier is exercised in tests/unit/test_permissions_real_classifier.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stockade.errors import PermissionDenied, UsageError
from stockade.permissions import actions
from stockade.permissions.autonomy import Autonomy
from stockade.permissions.config import PermissionConfig
from stockade.permissions.gate import HARD_DENY_RULES, Outcome, SourceKind
from stockade.permissions.prompt import Choice, PromptRequest
from stockade.permissions.rules import Namespace, RuleDecision, RuleStore
from stockade.tiers import Tier
from tests.permissions_support import StubClassifier, StubReason, make_gate, posture

ALL_CHOICES = (
    Choice.ALLOW_ONCE,
    Choice.ALLOW_SESSION,
    Choice.ALLOW_PROJECT,
    Choice.DENY_ONCE,
    Choice.DENY_PROJECT,
)
# ... and when the generalised rule differs from the exact text, the exact variants too
WITH_EXACT = (
    Choice.ALLOW_ONCE,
    Choice.ALLOW_SESSION,
    Choice.ALLOW_PROJECT,
    Choice.ALLOW_PROJECT_EXACT,
    Choice.DENY_ONCE,
    Choice.DENY_PROJECT,
    Choice.DENY_PROJECT_EXACT,
)


def config(**lists: list[str]) -> PermissionConfig:
    return PermissionConfig(**{k: tuple(v) for k, v in lists.items()})  # type: ignore[arg-type]


# --- step 5: the autonomy ceiling, every level x tier ---------------------------------------

TIER_COMMANDS = {
    Tier.READ_ONLY: "ls -la",
    Tier.LOW: "pytest -q",
    Tier.MEDIUM: "sed -i s/a/b/ f",
    Tier.HIGH: "curl https://example.com",
    Tier.DESTRUCTIVE: "python -c 'print(1)'",
}
EXPECTED = {  # the issue's ladder table
    Autonomy.ASK: {},
    Autonomy.CONSERVATIVE: {Tier.READ_ONLY},
    Autonomy.BALANCED: {Tier.READ_ONLY, Tier.LOW, Tier.MEDIUM},
    Autonomy.AUTO_ACCEPT: {Tier.READ_ONLY, Tier.LOW, Tier.MEDIUM, Tier.HIGH},
    Autonomy.YOLO: set(Tier),
}


@pytest.mark.parametrize("level", list(Autonomy))
@pytest.mark.parametrize("tier", list(Tier))
def test_autonomy_ceiling_against_the_tier(tmp_path: Path, level: Autonomy, tier: Tier) -> None:
    verdict = make_gate(tmp_path, autonomy=level).check(TIER_COMMANDS[tier])
    assert verdict.tier is tier
    expected = Outcome.ALLOW if tier in EXPECTED[level] else Outcome.ASK
    assert verdict.outcome is expected, verdict.line()
    if expected is Outcome.ALLOW or tier is not Tier.DESTRUCTIVE:
        assert verdict.source.kind is SourceKind.AUTONOMY
        assert verdict.source.id == level.value


def test_auto_accept_without_a_proven_sandbox_behaves_as_balanced(tmp_path: Path) -> None:
    high = TIER_COMMANDS[Tier.HIGH]
    proven = make_gate(tmp_path, autonomy="auto-accept").check(high)
    assert proven.outcome is Outcome.ALLOW
    unproven = make_gate(tmp_path, autonomy="auto-accept", sandbox=posture(proven=False))
    verdict = unproven.check(high)
    assert verdict.outcome is Outcome.ASK
    assert verdict.source.id == "balanced"
    assert unproven.autonomy.warning and "balanced" in unproven.autonomy.warning


# --- step 1: built-in hard denies ----------------------------------------------------------


@pytest.mark.parametrize("level", list(Autonomy))
def test_hard_denies_deny_at_every_level_without_a_prompt(tmp_path: Path, level: Autonomy) -> None:
    gate = make_gate(tmp_path, autonomy=level)
    verdict = gate.check("sudo ls")
    assert verdict.outcome is Outcome.DENY
    assert verdict.source.kind is SourceKind.BUILTIN_DENY
    assert verdict.source.id == "privilege.sudo"
    assert verdict.choices == ()
    asked: list[PromptRequest] = []

    def prompt(request: PromptRequest) -> Choice:  # pragma: no cover - must not be called
        asked.append(request)
        return Choice.ALLOW_ONCE

    decision = gate.decide(verdict, prompt)
    assert not decision.allowed and asked == []


def test_a_hard_deny_cannot_be_allowed_by_any_rule(tmp_path: Path) -> None:
    gate = make_gate(
        tmp_path, autonomy=Autonomy.YOLO, config=config(allow=["sudo *", "rm -rf /", "*"])
    )
    gate.store.add(gate.project, Namespace.BASH, "*", RuleDecision.ALLOW)
    gate.session_rules.add(Namespace.BASH, "sudo ls", RuleDecision.ALLOW)
    for command in ("sudo ls", "rm -rf /"):
        verdict = gate.check(command)
        assert verdict.outcome is Outcome.DENY, command
        assert verdict.source.kind is SourceKind.BUILTIN_DENY
        with pytest.raises(UsageError):
            gate.resolve(verdict, Choice.ALLOW_ONCE)  # not offered: nothing to answer


def test_a_hard_deny_hidden_in_one_segment_denies_the_command(tmp_path: Path) -> None:
    verdict = make_gate(tmp_path, autonomy="yolo").check("ls && echo $(sudo id) && pytest")
    assert verdict.outcome is Outcome.DENY
    assert verdict.source.id == "privilege.sudo"


def test_hard_deny_table_holds_the_issue_shapes() -> None:
    described = " ".join(HARD_DENY_RULES.values())
    for shape in ("rm -rf /", "rm -rf ~", "sudo", "chmod 777", "dd", "mkfs", "| sh"):
        assert shape in described, shape


# --- step 2: explicit deny (and ask) rules ---------------------------------------------------


def test_deny_rule_beats_allow_rules_and_autonomy(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="yolo", config=config(allow=["ls *"], deny=["ls *"]))
    verdict = gate.check("ls -la")
    assert verdict.outcome is Outcome.DENY
    assert verdict.source.kind is SourceKind.RULE
    assert verdict.source.id.startswith("c-")


@pytest.mark.parametrize(
    "spelling", ["rm -rf build", "/bin/rm -rf build", "'rm' -rf build", "FOO=1 rm -rf build"]
)
def test_deny_rules_see_every_spelling(tmp_path: Path, spelling: str) -> None:
    gate = make_gate(tmp_path, autonomy="yolo", config=config(deny=["rm -rf *"]))
    assert gate.check(spelling).outcome is Outcome.DENY


def test_persisted_deny_rule_denies_in_a_new_session(tmp_path: Path) -> None:
    first = make_gate(tmp_path)
    first.store.add(first.project, Namespace.BASH, "make *", RuleDecision.DENY)
    verdict = make_gate(tmp_path).check("make all")
    assert verdict.outcome is Outcome.DENY
    assert verdict.source.id.startswith("p-")


def test_ask_rule_asks_even_at_yolo_and_cannot_be_remembered_away(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="yolo", config=config(ask=["ls *"], allow=["ls *"]))
    verdict = gate.check("ls")
    assert verdict.outcome is Outcome.ASK
    assert verdict.source.kind is SourceKind.RULE
    assert Choice.ALLOW_SESSION not in verdict.choices
    assert Choice.ALLOW_PROJECT not in verdict.choices


# --- step 3: allow rules and the floors ------------------------------------------------------


def test_allow_rule_runs_a_high_command_at_balanced(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["curl https://example.com"]))
    verdict = gate.check("curl https://example.com")
    assert verdict.outcome is Outcome.ALLOW
    assert verdict.source.kind is SourceKind.RULE


def test_allow_rules_match_only_the_exact_env_stripped_text(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["curl https://example.com"]))
    assert gate.check("TOKEN=x curl https://example.com").outcome is Outcome.ALLOW
    assert gate.check("curl 'https://example.com'").outcome is Outcome.ASK  # not the same text


def test_allow_rule_for_rm_rf_star_still_asks_at_balanced(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["rm -rf *"]))
    verdict = gate.check("rm -rf build")
    assert verdict.outcome is Outcome.ASK
    assert verdict.source.kind is SourceKind.FLOOR
    assert verdict.source.id == "destructive"
    assert "rm -rf *" in verdict.reason
    # remembering cannot help: only once / deny / never are offered
    assert verdict.choices == (Choice.ALLOW_ONCE, Choice.DENY_ONCE, Choice.DENY_PROJECT)


@pytest.mark.parametrize("level", [a for a in Autonomy if a is not Autonomy.YOLO])
def test_destructive_floor_holds_at_every_level_below_yolo(tmp_path: Path, level: Autonomy) -> None:
    gate = make_gate(tmp_path, autonomy=level, config=config(allow=["rm -rf *"]))
    assert gate.check("rm -rf build").outcome is Outcome.ASK


def test_at_yolo_an_allow_rule_or_autonomy_runs_destructive(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="yolo", config=config(allow=["rm -rf *"]))
    verdict = gate.check("rm -rf build")
    assert verdict.outcome is Outcome.ALLOW and verdict.source.kind is SourceKind.RULE
    assert make_gate(tmp_path, autonomy="yolo").check("rm -rf build").outcome is Outcome.ALLOW


# --- step 4: built-in ask defaults -----------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "rule_id"),
    [
        ("make all", "builtin.ask.make"),
        ("git commit -m x", "builtin.ask.git-commit"),
        ("rm notes.txt", "builtin.ask.rm"),
        ("npm install left-pad", "builtin.ask.package-install"),
    ],
)
def test_builtin_ask_defaults_ask_even_within_the_ceiling(
    tmp_path: Path, command: str, rule_id: str
) -> None:
    verdict = make_gate(tmp_path, autonomy="auto-accept").check(command)
    assert verdict.outcome is Outcome.ASK
    assert verdict.source.kind is SourceKind.BUILTIN_ASK
    assert verdict.source.id == rule_id
    # rm's arguments are what it deletes: its rule is always the exact command
    assert verdict.choices == (ALL_CHOICES if command.startswith("rm") else WITH_EXACT)


def test_an_allow_rule_overrides_a_builtin_ask_default(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["make *"]))
    assert gate.check("make all").outcome is Outcome.ALLOW


def test_yolo_skips_the_builtin_ask_defaults(tmp_path: Path) -> None:
    assert make_gate(tmp_path, autonomy="yolo").check("make all").outcome is Outcome.ALLOW


# --- combining segments ---------------------------------------------------------------------


def test_any_deny_denies_the_command(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(deny=["pytest *"]))
    verdict = gate.check("ls && pytest -q && curl https://example.com")
    assert verdict.outcome is Outcome.DENY
    assert [p.outcome for p in verdict.parts] == [Outcome.ALLOW, Outcome.DENY, Outcome.ASK]


def test_else_any_ask_asks(tmp_path: Path) -> None:
    verdict = make_gate(tmp_path).check("ls && curl https://example.com && pytest")
    assert verdict.outcome is Outcome.ASK
    assert [p.text for p in verdict.asking] == ["curl https://example.com"]


def test_else_allow(tmp_path: Path) -> None:
    assert make_gate(tmp_path).check("ls && pytest && echo done").outcome is Outcome.ALLOW


def test_an_allow_rule_covers_only_its_own_segment(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["curl https://example.com"]))
    assert gate.check("curl https://example.com && ls").outcome is Outcome.ALLOW
    assert gate.check("curl https://example.com && npm install x").outcome is Outcome.ASK


def test_substitutions_are_judged_as_their_own_segments(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["echo *"]))
    verdict = gate.check("echo $(rm -rf build)")
    assert verdict.outcome is Outcome.ASK
    assert [p.text for p in verdict.asking] == ["rm -rf build"]


def test_findings_that_name_no_segment_cannot_be_allowed_by_rules(tmp_path: Path) -> None:
    stub = StubClassifier(
        extra_reasons=(StubReason("pipe.sink", "ls | mystery", Tier.HIGH, "pipes into x"),)
    )
    gate = make_gate(tmp_path, classifier=stub, config=config(allow=["*"]))
    verdict = gate.check("ls")
    assert verdict.outcome is Outcome.ASK
    assert verdict.asking[0].text == "ls | mystery"
    assert Choice.ALLOW_SESSION not in verdict.choices


def test_the_gate_never_rates_a_command_below_the_classifier(tmp_path: Path) -> None:
    stub = StubClassifier(overall=Tier.DESTRUCTIVE)
    verdict = make_gate(tmp_path, classifier=stub, config=config(allow=["ls"])).check("ls")
    assert verdict.tier is Tier.DESTRUCTIVE
    assert verdict.outcome is Outcome.ASK


def test_unknown_programs_fail_closed(tmp_path: Path) -> None:
    verdict = make_gate(tmp_path, autonomy="auto-accept").check("frobnicate --all")
    assert verdict.tier is Tier.DESTRUCTIVE and verdict.outcome is Outcome.ASK


# --- sandbox escapes ------------------------------------------------------------------------


@pytest.mark.parametrize("level", list(Autonomy))
def test_an_escape_always_asks_and_never_offers_persisting(tmp_path: Path, level: Autonomy) -> None:
    verdict = make_gate(tmp_path, autonomy=level).check("ls", escape=True)
    assert verdict.outcome is Outcome.ASK
    assert verdict.escape
    assert Choice.ALLOW_PROJECT not in verdict.choices
    assert Choice.DENY_PROJECT not in verdict.choices
    assert verdict.choices == (Choice.ALLOW_ONCE, Choice.ALLOW_SESSION, Choice.DENY_ONCE)


def test_escape_only_prompt_is_about_the_escape(tmp_path: Path) -> None:
    verdict = make_gate(tmp_path).check("ls", escape=True)
    assert verdict.source.kind is SourceKind.FLOOR and verdict.source.id == "sandbox-escape"
    assert not verdict.needs_permission
    assert "sandbox escape" in verdict.prompt_request().question


def test_one_prompt_covers_permission_and_escape_with_narrow_scopes(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    verdict = gate.check("curl https://example.com", escape=True)
    assert verdict.outcome is Outcome.ASK and verdict.needs_permission and verdict.escape
    assert verdict.choices == (Choice.ALLOW_ONCE, Choice.ALLOW_SESSION, Choice.DENY_ONCE)
    request = verdict.prompt_request()
    assert "needs permission and a sandbox escape" in request.question
    gate.resolve(verdict, Choice.ALLOW_SESSION)
    again = gate.check("curl https://example.com", escape=True)
    assert again.outcome is Outcome.ALLOW and again.source.id == "session-escape"
    assert gate.store.rules(gate.project) == []  # nothing persisted


def test_escape_approval_is_for_the_exact_directory_and_command(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    first = gate.check("ls", escape=True, cwd=str(tmp_path))
    gate.resolve(first, Choice.ALLOW_SESSION)
    assert gate.check("ls", escape=True, cwd=str(tmp_path)).outcome is Outcome.ALLOW
    other_dir = tmp_path / "project"
    assert gate.check("ls", escape=True, cwd=str(other_dir)).outcome is Outcome.ASK
    assert gate.check("ls -a", escape=True, cwd=str(tmp_path)).outcome is Outcome.ASK
    assert make_gate(tmp_path).check("ls", escape=True, cwd=str(tmp_path)).outcome is Outcome.ASK


def test_escape_of_a_denied_command_is_denied(tmp_path: Path) -> None:
    assert make_gate(tmp_path).check("sudo ls", escape=True).outcome is Outcome.DENY


@pytest.mark.parametrize("level", list(Autonomy))
def test_headless_denies_escapes_at_every_level(tmp_path: Path, level: Autonomy) -> None:
    gate = make_gate(tmp_path, autonomy=level)
    decision = gate.decide(gate.check("ls", escape=True), None)
    assert not decision.allowed and decision.headless
    assert "headless" in (decision.fix or "")


# --- answers ----------------------------------------------------------------------------------


def test_allow_once_remembers_nothing(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    decision = gate.resolve(gate.check("npm install x"), Choice.ALLOW_ONCE)
    assert decision.allowed and decision.source.kind is SourceKind.ANSWER
    assert decision.source.id == "once" and decision.remembered == ()
    assert gate.check("npm install x").outcome is Outcome.ASK


def test_allow_session_remembers_for_this_session_only(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    decision = gate.resolve(gate.check("ls && npm install x"), Choice.ALLOW_SESSION)
    assert [r.pattern for r in decision.remembered] == ["npm install x *"]  # generalised
    assert gate.check("npm install x").outcome is Outcome.ALLOW
    assert gate.check("npm install x --save-dev").outcome is Outcome.ALLOW
    assert gate.check("npm install y").outcome is Outcome.ASK
    assert make_gate(tmp_path).check("npm install x").outcome is Outcome.ASK


def test_allow_project_is_persisted_for_new_sessions(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    decision = gate.resolve(gate.check("curl https://example.com"), Choice.ALLOW_PROJECT)
    [rule] = decision.remembered
    assert rule.id.startswith("p-") and rule.decision is RuleDecision.ALLOW
    fresh = make_gate(tmp_path)
    verdict = fresh.check("curl https://example.com")
    assert verdict.outcome is Outcome.ALLOW and verdict.source.id == rule.id


def test_remembered_commands_with_stars_match_only_themselves(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="ask")
    gate.resolve(gate.check("ls *.py"), Choice.ALLOW_PROJECT_EXACT)
    assert gate.check("ls *.py").outcome is Outcome.ALLOW
    assert gate.check("ls secret.py").outcome is Outcome.ASK


def test_never_persists_a_deny_and_the_next_session_is_not_asked(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    decision = gate.resolve(gate.check("npm install x"), Choice.DENY_PROJECT)
    assert not decision.allowed
    assert decision.fix and decision.remembered[0].id in decision.fix
    verdict = make_gate(tmp_path).check("npm install x")
    assert verdict.outcome is Outcome.DENY and verdict.choices == ()


def test_deny_once_denies_and_asks_again_next_time(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    decision = gate.resolve(gate.check("npm install x"), Choice.DENY_ONCE)
    assert not decision.allowed and decision.source.id == "deny"
    with pytest.raises(PermissionDenied):
        decision.raise_if_denied()
    assert gate.check("npm install x").outcome is Outcome.ASK


def test_an_answer_that_was_not_offered_is_refused_and_remembers_nothing(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    verdict = gate.check("ls", escape=True)
    with pytest.raises(UsageError):
        gate.resolve(verdict, Choice.ALLOW_PROJECT)
    assert gate.store.rules(gate.project) == []
    assert gate.ledger.count() == 0


def test_decide_passes_the_request_to_the_prompt_callback(tmp_path: Path) -> None:
    gate = make_gate(tmp_path)
    seen: list[PromptRequest] = []

    def prompt(request: PromptRequest) -> Choice:
        seen.append(request)
        return Choice.ALLOW_ONCE

    decision = gate.decide(gate.check("npm install x"), prompt)
    assert decision.allowed and decision.answer is Choice.ALLOW_ONCE
    [request] = seen
    assert request.action == "npm install x" and request.tier is Tier.HIGH
    assert request.choices == WITH_EXACT and request.asking == ("npm install x",)
    assert (request.remember, request.exact) == (("npm install x *",), ("npm install x",))
    assert gate.decide(gate.check("ls"), prompt).allowed and len(seen) == 1  # no prompt


# --- headless -----------------------------------------------------------------------------------


def test_headless_denies_what_would_ask_and_names_the_ways_out(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="ask")
    decision = gate.decide(gate.check("pytest -q"), None)
    assert not decision.allowed and decision.headless
    assert decision.source.kind is SourceKind.ANSWER and decision.source.id == "headless"
    fix = decision.fix or ""
    assert "--autonomy balanced" in fix
    assert "STOCKADE_AUTONOMY=balanced" in fix
    assert "stockade permissions add allow 'pytest *'" in fix  # the generalised rule


def test_headless_message_for_the_destructive_floor_names_yolo(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="auto-accept")
    decision = gate.decide(gate.check("rm -rf build"), None)
    assert not decision.allowed
    assert "--yolo" in (decision.fix or "") and "STOCKADE_AUTONOMY" in (decision.fix or "")


def test_headless_allows_what_needs_no_prompt(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="ask", config=config(allow=["pytest *"]))
    assert gate.decide(gate.check("pytest -q"), None).allowed


# --- the ledger ---------------------------------------------------------------------------------


def test_every_decision_is_recorded_with_its_source(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, session_id="s1", config=config(deny=["make *"]))
    gate.decide(gate.check("ls"), None)
    gate.decide(gate.check("make all"), None)
    gate.decide(gate.check("curl https://example.com"), None)
    gate.decide(gate.check("npm install x"), lambda r: Choice.ALLOW_ONCE)
    gate.decide(gate.check("sudo ls"), None)
    entries = gate.ledger.entries(session="s1")
    assert [(e.action, e.decision, e.answer) for e in entries] == [
        ("ls", "allowed", None),
        ("make all", "denied", None),
        ("curl https://example.com", "denied", "headless"),
        ("npm install x", "allowed", "once"),
        ("sudo ls", "denied", None),
    ]
    assert [e.source.split(":")[0] for e in entries] == [
        "autonomy",
        "rule",
        "answer",
        "answer",
        "builtin-deny",
    ]
    first = entries[0]
    assert first.tier == "read-only" and first.autonomy == "balanced"
    assert first.project == gate.project and first.kind == "bash"
    assert first.posture and "bwrap (proven)" in first.posture
    report = gate.completion_report()
    assert report.by_decision == {"allowed": 2, "denied": 3, "bypassed": 0}
    assert report.prompted == 1


def test_the_ledger_notes_a_lowered_autonomy(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, autonomy="auto", sandbox=posture(proven=False), session_id="s")
    gate.decide(gate.check("ls"), None)
    [entry] = gate.ledger.entries(session="s")
    assert entry.autonomy == "balanced (requested auto-accept)"


# --- action plans ---------------------------------------------------------------------------------


def test_file_write_goes_through_the_same_ladder(tmp_path: Path) -> None:
    plan = actions.write_file("src/a.py")
    assert make_gate(tmp_path, autonomy="conservative").check_action(plan).outcome is Outcome.ASK
    verdict = make_gate(tmp_path).check_action(plan)
    assert verdict.outcome is Outcome.ALLOW and verdict.tier is Tier.MEDIUM
    assert verdict.effects == ("file-write",) and verdict.kind == "file-write"


@pytest.mark.parametrize(
    ("plan", "tier"),
    [
        (actions.read_file("README.md"), Tier.READ_ONLY),
        (actions.read_file(".env", secret=True), Tier.HIGH),
        (actions.write_file("a", truncates=True), Tier.HIGH),
        (actions.delete_file("a"), Tier.HIGH),
        (actions.write_files(("a", "b")), Tier.HIGH),
        (actions.network("example.com"), Tier.HIGH),
        (actions.mcp_tool("mcp.x.run", (actions.Effect.CODE_EXECUTION,)), Tier.DESTRUCTIVE),
        (actions.mcp_tool("mcp.x.send", (actions.Effect.IRREVERSIBLE,)), Tier.DESTRUCTIVE),
    ],
)
def test_effects_map_to_tiers(plan: actions.ActionPlan, tier: Tier) -> None:
    assert plan.tier is tier


@pytest.mark.parametrize("level", list(Autonomy))
def test_protected_paths_are_hard_denied_at_every_level(tmp_path: Path, level: Autonomy) -> None:
    gate = make_gate(tmp_path, autonomy=level, config=config(allow=["mcp:mcp.stockade.*"]))
    plan = actions.write_file(".git/hooks/pre-commit", protected=True, tool="mcp.stockade.write")
    verdict = gate.check_action(plan)
    assert verdict.outcome is Outcome.DENY
    assert verdict.source.kind is SourceKind.BUILTIN_DENY
    assert verdict.source.id == "protected-path"


def test_domain_rules_decide_network_actions(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["domain:*.github.com"], deny=["domain:x.io"]))
    assert gate.check_action(actions.network("api.github.com")).outcome is Outcome.ALLOW
    assert gate.check_action(actions.network("x.io:443")).outcome is Outcome.DENY
    asked = gate.check_action(actions.network("pypi.org"))
    assert asked.outcome is Outcome.ASK and asked.choices == ALL_CHOICES
    gate.resolve(asked, Choice.ALLOW_PROJECT)
    [rule] = gate.store.rules(gate.project)
    assert (rule.namespace, rule.pattern) == (Namespace.DOMAIN, "pypi.org")
    assert make_gate(tmp_path).check_action(actions.network("pypi.org")).outcome is Outcome.ALLOW


def test_a_domain_rule_never_allows_a_shell_command_and_vice_versa(tmp_path: Path) -> None:
    stub = StubClassifier(table={"example.com": (Tier.HIGH, "x")})
    gate = make_gate(tmp_path, classifier=stub, config=config(allow=["domain:example.com"]))
    assert gate.check("example.com").outcome is Outcome.ASK
    gate2 = make_gate(tmp_path, config=config(allow=["example.com", "*"]))
    assert gate2.check_action(actions.network("example.com")).outcome is Outcome.ASK


def test_mcp_rules_cover_tool_calls_but_not_the_floor(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, config=config(allow=["mcp:mcp.github.*"]))
    create = actions.mcp_tool("mcp.github.create_issue", (actions.Effect.NETWORK,))
    assert gate.check_action(create).outcome is Outcome.ALLOW
    run = actions.mcp_tool("mcp.github.run", (actions.Effect.CODE_EXECUTION,))
    verdict = gate.check_action(run)
    assert verdict.outcome is Outcome.ASK and verdict.source.id == "destructive"


def test_a_plan_without_a_subject_cannot_be_remembered(tmp_path: Path) -> None:
    verdict = make_gate(tmp_path, autonomy="ask").check_action(actions.read_file("a"))
    assert verdict.outcome is Outcome.ASK
    assert verdict.choices == (Choice.ALLOW_ONCE, Choice.DENY_ONCE)


def test_rule_store_is_shared_between_gates_of_one_project_only(tmp_path: Path) -> None:
    gate = make_gate(tmp_path, project=tmp_path / "a")
    gate.resolve(gate.check("npm install x"), Choice.ALLOW_PROJECT)
    assert make_gate(tmp_path, project=tmp_path / "a").check("npm install x").outcome is (
        Outcome.ALLOW
    )
    assert make_gate(tmp_path, project=tmp_path / "b").check("npm install x").outcome is (
        Outcome.ASK
    )
    assert len(RuleStore(tmp_path / "permissions.db").rules()) == 1


# --- invariants over random commands, rules and levels ----------------------------------------

SEGMENTS = [
    "ls",
    "pytest",
    "make all",
    "rm notes.txt",
    "rm -rf build",
    "sudo ls",
    "curl https://example.com",
    "python -c x",
    "git push --force",
    "echo $(rm -rf build)",
    "frobnicate",
]
PATTERNS = ["*", "ls *", "rm *", "rm -rf *", "sudo *", "make *", "curl *", "git push *", "echo *"]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    segments=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4),
    allow=st.lists(st.sampled_from(PATTERNS), max_size=3),
    deny=st.lists(st.sampled_from(PATTERNS), max_size=1),
    level=st.sampled_from(list(Autonomy)),
    escape=st.booleans(),
)
def test_floors_hold_for_any_rules_and_level(
    tmp_path_factory: pytest.TempPathFactory,
    segments: list[str],
    allow: list[str],
    deny: list[str],
    level: Autonomy,
    escape: bool,
) -> None:
    tmp = tmp_path_factory.mktemp("gate")
    gate = make_gate(tmp, autonomy=level, config=config(allow=allow, deny=deny))
    command = " && ".join(segments)
    verdict = gate.check(command, escape=escape)
    if any(s.startswith("sudo") for s in segments):
        assert verdict.outcome is Outcome.DENY  # a hard deny is never allowed
        assert verdict.source.kind in (SourceKind.BUILTIN_DENY, SourceKind.RULE)
    if verdict.outcome is Outcome.ALLOW:
        assert not escape  # an escape always asks (no session approval here)
        if level is not Autonomy.YOLO:
            assert verdict.tier is not Tier.DESTRUCTIVE  # destructive always asks below yolo
            assert all(p.tier is not Tier.DESTRUCTIVE for p in verdict.parts)
    if escape and verdict.outcome is Outcome.ASK:
        assert Choice.ALLOW_PROJECT not in verdict.choices
        assert Choice.DENY_PROJECT not in verdict.choices
    if verdict.outcome is Outcome.ASK:
        decision = gate.decide(verdict, None)
        assert not decision.allowed and decision.headless
    outcomes = {p.outcome for p in verdict.parts}
    expected = (
        Outcome.DENY
        if Outcome.DENY in outcomes
        else Outcome.ASK
        if Outcome.ASK in outcomes or escape
        else Outcome.ALLOW
    )
    assert verdict.outcome is expected


def test_program_floors_only_raise_a_segment_tier(tmp_path: Path) -> None:
    floors = PermissionConfig(program_floors={"pytest": Tier.HIGH, "rm": Tier.LOW})
    gate = make_gate(tmp_path, config=floors)
    raised = gate.check("pytest -q && ls")
    assert raised.outcome is Outcome.ASK
    assert [p.tier for p in raised.parts] == [Tier.HIGH, Tier.READ_ONLY]
    assert "pytest is at least high by settings" in raised.reason
    assert gate.check("rm -rf build").parts[0].tier is Tier.DESTRUCTIVE  # never lowered
