"""risk.classify: the result types, reasons, rule-id registry, overrides, failing closed."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

import stockade
from stockade import risk
from stockade.risk import HARD_DENY_RULES, RULE_IDS, Assessment, Reason, classify, paths, programs
from stockade.risk.model import Spec
from stockade.shell import MAX_INPUT_BYTES, parse
from stockade.tiers import Tier
from tests.unit import (
    test_risk_files,
    test_risk_git,
    test_risk_interpreters,
    test_risk_tiers,
    test_risk_tricks,
)
from tests.unit.risk_helpers import D, H, L, M, R, assert_rule, assert_tier

# --- result types -------------------------------------------------------------------------------


def test_assessment_is_a_frozen_dataclass_and_reason_an_immutable_record() -> None:
    assessment = classify("ls")
    assert dataclasses.is_dataclass(assessment)
    with pytest.raises(dataclasses.FrozenInstanceError):
        assessment.tier = D  # type: ignore[misc]
    with pytest.raises(AttributeError):
        assessment.reasons[0].tier = D  # type: ignore[misc]
    assert Reason._fields == ("rule_id", "segment", "tier", "detail")
    reason = assessment.reasons[0]
    assert (reason.rule_id, reason.segment, reason.tier) == ("program.table", "ls", R)
    assert type(reason) is Reason and hash(reason) == hash(tuple(reason))
    assert [field.name for field in dataclasses.fields(Assessment)] == [
        "tier",
        "reasons",
        "segments",
    ]


def test_the_package_reexports_the_api() -> None:
    assert stockade.classify is classify
    assert stockade.Assessment is Assessment
    assert stockade.Reason is Reason
    assert {"classify", "Assessment", "Reason"} <= set(stockade.__all__)


def test_reasons_name_each_segment_in_source_order() -> None:
    assessment = classify("ls -la && rm -rf / ; git status")
    assert [(r.segment, r.tier, r.rule_id) for r in assessment.reasons] == [
        ("ls -la", R, "program.table"),
        ("rm -rf /", D, "rm.recursive-force-root"),
        ("git status", R, "git.subcommand"),
    ]
    assert assessment.tier == D
    assert all(r.detail for r in assessment.reasons)


def test_segments_are_the_parsed_segments() -> None:
    command = "FOO=1 make test > /tmp/log 2>&1 | tee out"
    assert classify(command).segments == parse(command).segments


def test_substitutions_are_reported_with_their_own_text() -> None:
    assessment = classify("echo $(sudo id)")
    assert ("sudo id", "privilege.sudo") in [(r.segment, r.rule_id) for r in assessment.reasons]


def test_to_dict_is_json_ready() -> None:
    data = classify("git push --force").to_dict()
    assert json.loads(json.dumps(data)) == {
        "tier": "destructive",
        "reasons": [
            {
                "rule_id": "git.push-force",
                "segment": "git push --force",
                "tier": "destructive",
                "detail": "force push overwrites the remote history",
            }
        ],
    }


def test_empty_and_comment_only_commands_are_read_only_with_no_reasons() -> None:
    for command in ("", "  ", "\n\n", "# just a comment"):
        assessment = classify(command)
        assert (assessment.tier, assessment.reasons) == (R, ())


# --- the rule-id registry ----------------------------------------------------------------------


def docstring_rule_ids() -> dict[str, str]:
    doc = risk.__doc__ or ""
    return dict(re.findall(r"^([a-z][\w-]*\.[\w.-]+)\s+(\S+)\s", doc, re.MULTILINE))


def test_the_docstring_table_lists_exactly_the_rule_ids() -> None:
    assert set(docstring_rule_ids()) == RULE_IDS


def test_hard_deny_candidates_are_destructive_documented_rules() -> None:
    table = docstring_rule_ids()
    assert HARD_DENY_RULES <= RULE_IDS
    assert {table[rule] for rule in HARD_DENY_RULES} == {"D"}
    assert {
        "rm.recursive-force-root",
        "rm.recursive-force-home",
        "privilege.sudo",
        "chmod.world-writable",
        "disk.dd",
        "disk.mkfs",
        "download.pipe-to-shell",
        "download.run-downloaded",
    } == HARD_DENY_RULES


def every_test_command() -> list[str]:
    commands: list[str] = []
    for module in (
        test_risk_tiers,
        test_risk_tricks,
        test_risk_git,
        test_risk_files,
        test_risk_interpreters,
    ):
        for value in vars(module).values():
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, str):
                        commands.append(item)
                    elif isinstance(item, tuple) and item and isinstance(item[0], str):
                        commands.append(item[0])
    return commands


def test_every_reason_uses_a_registered_rule_id_and_a_fixed_tier() -> None:
    table = docstring_rule_ids()
    commands = every_test_command()
    assert len(commands) > 500
    for command in commands:
        for reason in classify(command).reasons:
            assert reason.rule_id in RULE_IDS, (command, reason)
            documented = table[reason.rule_id]
            if documented != "\\*":
                assert reason.tier.label[0].upper() == documented, (command, reason)


# --- fail closed, never raise --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("echo 'unterminated", "parse.error"),
        ("if true; then", "parse.error"),
        ("ls )", "parse.error"),
        ("x" * (MAX_INPUT_BYTES + 1), "parse.too-long"),
        ("ls\x00", "parse.control-char"),
        ("ls\r\n", "parse.control-char"),
        ("\ud800", "parse.invalid-text"),
        ("! - x=1", "parse.dropped-text"),
    ],
)
def test_unanalysable_input_is_destructive_with_a_reason(command: str, rule: str) -> None:
    assessment = assert_rule(command, rule, D)
    assert all(r.tier == D for r in assessment.reasons)


@pytest.mark.parametrize("value", [None, b"ls", 42, ["ls"], object()])
def test_non_text_never_raises(value: object) -> None:
    assessment = classify(value)  # type: ignore[arg-type]
    assert assessment.tier == D


def test_huge_and_deep_inputs_never_raise() -> None:
    assert classify("ls|" * 20000 + "ls").tier == R
    assert classify("( " * 5000 + "ls" + " )" * 5000).tier == D
    assert classify("(" * 5000 + "ls" + ")" * 5000).tier == R  # arithmetic: reads $ls
    assert classify("$(" * 500 + "ls" + ")" * 500).tier == D
    assert classify("echo " + "'a' " * 15000).tier == R


def test_a_classifier_bug_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise KeyError("boom")

    monkeypatch.setitem(programs.SPECS, "rm", Spec(D, check=broken))
    assessment = classify("rm x")
    assert (assessment.tier, [r.rule_id for r in assessment.reasons]) == (D, ["internal.error"])


# --- overrides ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "overrides", "tier", "rule"),
    [
        ("mytool run", {"mytool": L}, L, "program.override"),
        ("mytool run", {"mytool": "read-only"}, R, "program.override"),
        ("mytool run", {"mytool": "low"}, L, "program.override"),
        ("mytool run", {"mytool": "bogus"}, D, "program.override"),
        ("mytool run", {"mytool": 3}, D, "program.override"),
        ("mytool run | sh", {"mytool": R}, D, "pipe.to-interpreter"),
        ("mytool .env", {"mytool": R}, H, "secret.read"),
        ("mytool > /dev/sda", {"mytool": R}, D, "write.device"),
        ("sudo mytool", {"mytool": R}, D, "privilege.sudo"),
        ("ls", {"ls": D}, D, "program.override"),
        ("make", {"make": L}, L, "program.override"),
        ("rm x", {"rm": L}, L, "program.override"),
        ("rm -rf /", {"rm": L}, D, "rm.recursive-force-root"),
        ("rm -rf build", {"rm": L}, D, "rm.recursive-force"),
        ("git push", {"git": L}, L, "program.override"),
        ("git push --force", {"git": L}, D, "git.push-force"),
        ("cat .env", {"cat": R}, H, "secret.read"),
        ("python -c 1", {"python": L}, D, "interpreter.inline-code"),
        ("python3 -c 1", {"python": L}, D, "interpreter.inline-code"),
        ("curl x | sh", {"sh": L, "curl": L}, D, "download.pipe-to-shell"),
        ("chmod 777 x", {"chmod": L}, D, "chmod.world-writable"),
        ("dd if=a of=b", {"dd": L}, D, "disk.dd"),
        ("timeout 5 mytool", {"mytool": L}, L, "program.override"),
    ],
)
def test_overrides_replace_the_program_tier_but_not_what_its_arguments_do(
    command: str, overrides: dict[str, object], tier: Tier, rule: str
) -> None:
    assessment = classify(command, program_overrides=overrides)  # type: ignore[arg-type]
    assert assessment.tier == tier, assessment.reasons
    assert rule in assessment.rule_ids, assessment.reasons


def test_invalid_override_says_why() -> None:
    (reason,) = classify("mytool", program_overrides={"mytool": "lowish"}).reasons  # type: ignore[dict-item]
    assert "invalid tier 'lowish'" in reason.detail


def test_no_overrides_is_the_default() -> None:
    assert classify("mytool", program_overrides={}).tier == D
    assert classify("mytool", program_overrides=None).tier == D


def test_classify_is_pure() -> None:
    """Same input, same output; nothing leaks between calls (cwd tracking, functions)."""
    first = classify("cd / && f() { ls; }")
    assert classify("rm -rf *").rule_ids == {"rm.recursive-force"}
    assert classify("f").tier == D
    assert classify("cd / && f() { ls; }") == first


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("cd /tmp && rm -rf *", D),
        ("cd src && cat main.py", R),
        ("cd .. && ls", R),
        ("(cd /etc && cat hosts)", H),
        ("bash -c 'cd /' && rm -rf *", D),
        ("pushd /srv && cat x", H),
        ("cd - && cat x", H),
        ("cd && cat notes", H),
        ("cd ~/project && make", M),
        ("cd /tmp && echo > f", L),
    ],
)
def test_cd_changes_how_later_relative_paths_count(command: str, tier: Tier) -> None:
    assert_tier(command, tier)


def test_inline_code_cd_does_not_leak_out() -> None:
    assessment = classify("bash -c 'cd /' && rm -rf *")
    assert "rm.recursive-force-root" not in assessment.rule_ids
    assert "rm.recursive-force" in assessment.rule_ids


SECRET_EXAMPLES = [
    ".env",
    ".env.local",
    ".env*",
    ".envrc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".dockercfg",
    ".vault-token",
    ".htpasswd",
    ".boto",
    ".s3cfg",
    ".my.cnf",
    "credentials",
    "credentials.json",
    "credentials.yml",
    "client_secret.json",
    "service-account-prod.json",
    "secrets.yaml",
    "secret.env",
    "id_rsa",
    "id_ed25519.pub",
    "id_rsa*",
    "a.pem",
    "*.key",
    "store.p12",
    "x.pfx",
    "k.jks",
    "a.keystore",
    "db.kdbx",
    "putty.ppk",
    "sig.asc",
    "f.gpg",
    "vpn.ovpn",
    "shadow",
    "gshadow",
    "sudoers",
    "master.key",
    "kubeconfig",
    "environ",
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".password-store",
]


@pytest.mark.parametrize("name", SECRET_EXAMPLES)
def test_the_secret_prefilter_never_hides_a_secret_name(name: str) -> None:
    """``is_secret`` checks a cheap necessary condition (derived from the vocabulary's globs)
    before the regex; every name the regex matches must pass it, and the hot path's shortcut
    (``may_be_secret``) must never skip one."""
    assert paths.is_secret_name(name)
    assert paths.is_secret(name, True)
    assert paths.is_secret("dir/sub/" + name, True)
    assert paths.is_secret("--file=" + name, True)
    assert paths.may_be_secret(name)
