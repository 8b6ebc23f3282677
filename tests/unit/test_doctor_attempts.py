"""The escape battery's table is well-formed: every attempt has a class, a judge the host
knows, steps the in-jail runner knows, and requirements and admissions that exist."""

from __future__ import annotations

import inspect
import re
from collections import Counter

import pytest

from stockade.doctor.attempts import ATTEMPTS, CLASSES, SCENARIOS, Attempt
from stockade.doctor.judges import ADMISSIONS, JUDGES, REQUIREMENTS, WHILE_HOLDING, git_exec_keys
from stockade.doctor.quick import expected_seccomp_errnos
from stockade.sandbox.probes import escapes
from stockade.vocabulary import HOME_SECRETS

PREFIXES = (
    "fs.",
    "protected.",
    "secrets.",
    "kernel.",
    "processes.",
    "persistence.",
    "network.",
    "allowlist.",
    "environment.",
    "state.",
    "seccomp.",
    "setuid.",
    "metadata.",
    "terminals.",
    "planted.",
)


def test_there_are_well_over_forty_attempts_in_at_least_eight_classes() -> None:
    assert len(ATTEMPTS) >= 100
    assert len({attempt.klass for attempt in ATTEMPTS}) >= 8


def test_attempt_names_are_unique() -> None:
    duplicates = [name for name, n in Counter(a.name for a in ATTEMPTS).items() if n > 1]
    assert not duplicates


def test_every_class_is_declared_and_tried() -> None:
    used = {attempt.klass for attempt in ATTEMPTS}
    assert used == set(CLASSES)
    assert all(CLASSES.values())


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=lambda a: a.name)
def test_every_attempt_is_well_formed(attempt: Attempt) -> None:
    assert attempt.name.startswith(PREFIXES), attempt.name
    assert attempt.does
    assert attempt.steps, "an attempt must do something inside"
    assert attempt.judge, "an attempt must be judged from the host"
    assert attempt.scenario in SCENARIOS
    assert attempt.phase in ("now", "hold", "last")
    for judge in attempt.judge:
        assert judge.kind in JUDGES, judge
        if judge.kind in WHILE_HOLDING:
            assert attempt.phase == "hold", "the host can only see it while the jail holds it"
    for verb, *args in attempt.steps:
        assert verb in escapes.VERBS, verb
        parameters = list(inspect.signature(escapes.VERBS[verb]).parameters.values())[1:]
        required = [p for p in parameters if p.default is inspect.Parameter.empty]
        assert len(required) <= len(args) <= len(parameters), (verb, args)
    for need in attempt.needs:
        assert need.partition(":")[0] in REQUIREMENTS, need
    assert attempt.admitted is None or attempt.admitted in ADMISSIONS


def test_hold_attempts_leave_something_for_the_host_to_see() -> None:
    holding_verbs = {verb for verb in escapes.VERBS if verb.startswith("hold-")}
    for attempt in ATTEMPTS:
        uses_hold = any(step[0] in holding_verbs for step in attempt.steps)
        assert uses_hold == (attempt.phase == "hold"), attempt.name


def test_every_credential_store_of_the_vocabulary_is_tried() -> None:
    tried = {a.name for a in ATTEMPTS if a.klass == "secrets"}
    for secret in HOME_SECRETS:
        assert f"secrets.home.{secret.path.lstrip('.')}" in tried


def test_kernel_files_are_never_opened_in_a_way_that_writes() -> None:
    """Harmless by construction: kernel files are held open, never written or truncated."""
    for attempt in ATTEMPTS:
        for verb, *args in attempt.steps:
            touches_kernel = any(a.startswith(("/proc/sys", "/sys", "/proc/sysrq")) for a in args)
            if touches_kernel:
                assert verb in ("hold-open", "listing"), (attempt.name, verb)


def test_placeholders_are_well_formed() -> None:
    pattern = re.compile(r"\{([a-z][a-z0-9_]*)(?::[^{}]+)?\}")
    for attempt in ATTEMPTS:
        for text in [part for step in attempt.steps for part in step] + list(attempt.needs):
            for name in pattern.findall(text):
                assert name.islower(), (attempt.name, name)


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("[core]\n\tfsmonitor = x\n", ["core.fsmonitor"]),
        ("[core]\n\tbare = false\n\tfilemode = true\n", []),
        ('[filter "lfs"]\n\tclean = git-lfs clean\n', ["filter.lfs.clean"]),
        ("[alias]\n\tst = !sh -c x\n", ["alias.st"]),
        ("# [core]\n; fsmonitor = x\n[user]\n\tname = me\n", []),
        ("[Core]\n\tHooksPath = .husky\n", ["core.hookspath"]),
        ('[includeIf "gitdir:~/x/"]\n\tpath = ~/evil\n', ["includeif.gitdir:~/x/.path"]),
    ],
)
def test_git_config_exec_keys(text: str, keys: list[str]) -> None:
    assert git_exec_keys(text) == keys


def test_the_live_seccomp_check_expects_every_denied_call_to_fail() -> None:
    observed = {"ptrace": "ESRCH", "clone3": "EINVAL", "socket:AF_UNIX": "OK", "getpid": "OK"}
    assert expected_seccomp_errnos(observed, allow_unix_sockets=False) == {
        "ptrace": "EPERM",
        "clone3": "ENOSYS",
        "socket:AF_UNIX": "EPERM",
    }
    assert "socket:AF_UNIX" not in expected_seccomp_errnos(observed, allow_unix_sockets=True)
