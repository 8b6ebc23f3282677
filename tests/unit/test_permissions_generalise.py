"""The generalised rule a remembering answer stores (real classifier): the verb stays, the
arguments vary - except where an argument could matter, then it is the exact text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stockade.permissions.gate import HARD_DENY_RULES, Gate, Outcome, SourceKind
from stockade.permissions.generalise import (
    HARD_DENY_EXAMPLES,
    check_new_rule,
    covered_hard_denies,
    instance,
    matches_everything,
)
from stockade.permissions.prompt import Choice
from stockade.permissions.rules import Namespace, RuleDecision, compile_matcher


@pytest.fixture
def gate(tmp_path: Path) -> Gate:
    return Gate(project=tmp_path, autonomy="ask")  # everything asks: every command has a rule


def stored(gate: Gate, command: str) -> tuple[str, ...]:
    verdict = gate.check(command)
    assert verdict.outcome is Outcome.ASK
    return verdict.remembers()


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git commit -m 'fix typo'", "git commit *"),
        ("git commit", "git commit *"),
        ("npm run test -- --grep x", "npm run test *"),
        ("npm install left-pad", "npm install left-pad *"),  # the package is kept
        ("pytest tests/test_a.py -q", "pytest *"),
        ("cargo build --release", "cargo build *"),
        ("git push origin main", "git push origin *"),
        ("FOO=1 make test", "make test *"),
    ],
)
def test_the_verb_is_kept_and_the_arguments_vary(gate: Gate, command: str, rule: str) -> None:
    assert stored(gate, command) == (rule,)
    assert Choice.ALLOW_PROJECT_EXACT in gate.check(command).choices


@pytest.mark.parametrize(
    "command",
    [
        "rm notes.txt",  # its arguments are what it deletes
        "python3 script.py",  # runs code
        "env FOO=1 ls",  # runs the command in its arguments
        "curl https://example.com",  # names where data goes
        "cat .env",  # the argument raises the tier (secret)
        "sed -i s/a/b/ file.txt",  # the flag raises the tier (in place)
        "git push --force origin main",  # destructive
        "./run.sh",  # a path, not a plain program name
        "/usr/bin/git commit -m x",  # idem
        "docker ps",  # its arguments decide what runs
        "chmod 644 notes.txt",
    ],
)
def test_what_could_matter_is_never_generalised(gate: Gate, command: str) -> None:
    verdict = gate.check(command)
    if verdict.outcome is not Outcome.ASK:
        return
    assert all(part.general is None for part in verdict.asking), verdict.parts
    assert Choice.ALLOW_PROJECT_EXACT not in verdict.choices


def test_every_hard_deny_example_is_hard_denied_and_each_rule_has_one(gate: Gate) -> None:
    hit = set()
    for example in HARD_DENY_EXAMPLES:
        verdict = gate.check(example)
        assert verdict.outcome is Outcome.DENY and verdict.source.kind is SourceKind.BUILTIN_DENY
        hit.add(verdict.source.id)
    assert hit == set(HARD_DENY_RULES)


WORDS = st.sampled_from(
    ["git", "commit", "push", "npm", "run", "test", "install", "make", "rm", "-rf", "/", "~",
     "-m", "x", "'a b'", "src/a.py", "*", "sudo", "curl", "|", "sh", "&&", "ls", "cargo", "--"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=6))
def test_a_generalised_rule_matches_its_command_and_never_a_hard_deny(
    tmp_path_factory: pytest.TempPathFactory, words: list[str]
) -> None:
    gate = Gate(project=tmp_path_factory.getbasetemp(), autonomy="ask")
    verdict = gate.check(" ".join(words))
    for part in verdict.asking:
        if part.general is None:
            continue
        assert not matches_everything(part.general) and not part.general.startswith("*")
        assert compile_matcher(Namespace.BASH, part.general)(part.text)
        assert covered_hard_denies(Namespace.BASH, part.general) == []


@pytest.mark.parametrize(
    ("pattern", "decision", "refused", "warned"),
    [
        ("*", RuleDecision.ALLOW, "would allow every command", None),
        ("* *", RuleDecision.ALLOW, "would allow every command", None),
        ("*", RuleDecision.DENY, None, "matches every command"),
        ("sudo *", RuleDecision.ALLOW, "can never apply", None),
        ("chmod 777 *", RuleDecision.ALLOW, "can never apply", None),
        ("curl * | sh", RuleDecision.ALLOW, "can never apply", None),
        ("rm *", RuleDecision.ALLOW, None, "also matches built-in hard denies"),
        ("* --version", RuleDecision.ALLOW, None, "starts with `*`"),
        ("npm test *", RuleDecision.ALLOW, None, None),
        ("sudo *", RuleDecision.DENY, None, None),  # denying them again is harmless
    ],
)
def test_rules_are_checked_before_they_are_stored(
    gate: Gate, pattern: str, decision: RuleDecision, refused: str | None, warned: str | None
) -> None:
    refusal, warnings = check_new_rule(Namespace.BASH, pattern, decision, gate.hard_denied)
    assert (refusal is None) is (refused is None) and (refused or "") in (refusal or "")
    if warned is None:
        assert warnings == []
    else:
        assert any(warned in w for w in warnings), warnings


def test_a_pattern_instance_is_a_command_it_matches() -> None:
    assert instance("sudo *") == "sudo"
    assert instance("git push * --force") == "git push x --force"
    assert instance("ls [*].py") == "ls *.py"
    for pattern in ("sudo *", "git push * --force", "ls [*].py"):
        assert compile_matcher(Namespace.BASH, pattern)(instance(pattern))
