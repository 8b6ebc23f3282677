"""The per-program specs (``stockade.risk.programs``, ``nested``, ``wrappers``): every spec's own
examples classify as it says, every program that reads or searches has a reviewed option set
(or sits on the commented ``NOT_REVIEWED`` list), and no two programs share an option set."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import ModuleType

import pytest

from stockade.risk import classify
from stockade.risk.model import Flag, Spec
from stockade.risk.programs import MODULES, NOT_REVIEWED, SPECS
from stockade.risk.rules import RULE_IDS
from stockade.tiers import Tier
from tests.unit.risk_helpers import assert_rule, assert_tier


def _walk(where: str, value: object) -> Iterator[tuple[str, Spec]]:
    """Every spec reachable from a spec, a subcommand table or a module's table of specs."""
    if isinstance(value, Spec):
        yield where, value
        if value.subcommands is not None:
            yield from _walk(where, value.subcommands)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, Spec | Mapping):
                yield from _walk(f"{where} {key}".strip(), item)


def _module_specs(module: ModuleType) -> Iterator[tuple[str, Spec]]:
    for attribute, value in vars(module).items():
        if attribute == "SPECS":
            yield from _walk("", value)
        elif isinstance(value, Mapping | Spec):
            # specs a check dispatches to (git's subcommands, npm run, docker run…)
            yield from _walk(attribute.strip("_").lower().replace("_specs", ""), value)


def all_specs() -> dict[int, tuple[str, Spec]]:
    """Each distinct spec once (aliases share one), with the first name it was found under."""
    found: dict[int, tuple[str, Spec]] = {}
    for module in MODULES:
        for name, spec in _module_specs(module):
            found.setdefault(id(spec), (name, spec))
    return found


EXAMPLES = [
    pytest.param(example, id=f"{name}: {example[0]}")
    for name, spec in all_specs().values()
    for example in spec.examples
]


def test_the_examples_of_every_module_are_collected() -> None:
    """Guards the parametrized test below against collecting nothing: each module that
    defines specs contributes examples."""
    assert len(EXAMPLES) > 450
    for module in MODULES:
        assert any(spec.examples for _, spec in _module_specs(module)), module.__name__


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_spec_example_classifies_as_it_says(
    example: tuple[str, Tier] | tuple[str, Tier, str],
) -> None:
    command, tier = example[0], example[1]
    if len(example) == 3:
        assert example[2] in RULE_IDS, f"{example[2]!r} is not a rule id"
        assert_rule(command, example[2], tier)
    else:
        assert_tier(command, tier)


# --- reviewed option sets --------------------------------------------------------------------

#: Operand and value kinds that mean a program reads (or searches) files.
READS = frozenset({"read", "pattern", "pattern-file", "file"})


def _reads(spec: Spec) -> bool:
    return bool(READS & set(spec.operands)) or any(
        READS & set(flag.values) for flag in spec.flags or ()
    )


def test_every_program_that_reads_or_searches_has_a_reviewed_option_set() -> None:
    """A reader's options decide what it reads (``grep -f FILE``, ``rg --pre PROG``): each has
    a reviewed set (``flags`` is a tuple), or is on ``NOT_REVIEWED`` with the reason."""
    missing = sorted(
        name
        for name, spec in SPECS.items()
        if _reads(spec) and spec.flags is None and name not in NOT_REVIEWED
    )
    assert not missing, f"readers without a reviewed option set: {missing}"


def test_the_not_reviewed_list_is_exactly_the_specs_without_an_option_set() -> None:
    unlisted = sorted(
        name for name, spec in SPECS.items() if spec.flags is None and name not in NOT_REVIEWED
    )
    reviewed = sorted(
        name for name in NOT_REVIEWED if name in SPECS and SPECS[name].flags is not None
    )
    unknown = sorted(name for name in NOT_REVIEWED if name not in SPECS)
    assert (unlisted, reviewed, unknown) == ([], [], [])
    assert all(reason for reason in NOT_REVIEWED.values())


def test_no_two_programs_share_an_option_set() -> None:
    """A name for the same program (``egrep``, ``gsed``, ``podman``) is the same spec object;
    distinct specs never share their option tuple (grep's ``-T`` is a plain flag, rg's takes a
    value: a shared set would make one of them wrong)."""
    owners: dict[int, str] = {}
    for name, spec in all_specs().values():
        if spec.flags:
            other = owners.setdefault(id(spec.flags), name)
            assert other == name, f"{name} and {other} share an option set"


def test_a_short_option_is_listed_once_per_program() -> None:
    """FlagIndex refuses an option listed twice; building every spec's index proves it."""
    for _, spec in all_specs().values():
        assert spec.index is not None


@pytest.mark.parametrize(
    ("flag", "problem"),
    [
        (lambda: Flag(("x",)), "must start with - or +"),
        (lambda: Spec(None, flags=(Flag(("-a",)), Flag(("-a",)))), "listed twice"),
    ],
)
def test_malformed_specs_are_refused(flag: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        flag()  # type: ignore[operator]


# --- the direct path ---------------------------------------------------------------------------


def _both_ways(command: str, spec: Spec) -> tuple[object, object]:
    """Classify ``command`` with the spec's direct path and with the generic one."""
    direct = classify(command)
    object.__setattr__(spec, "direct", False)
    try:
        generic = classify(command)
    finally:
        object.__setattr__(spec, "direct", True)
    return (direct.tier, direct.rule_ids), (generic.tier, generic.rule_ids)


def corpus_commands_for(spec: Spec) -> list[str]:
    """Every option spelling of ``spec`` with a value and operands after it (secrets, paths
    outside the project, ``--``), under each name the spec has."""
    names = [name for name, other in SPECS.items() if other is spec][:1]
    commands = []
    for name in names:
        for flag in spec.flags or ():
            for spelling in flag.names:
                commands.append(f"{name} {spelling} .env ~/x sh -c id")
                if len(spelling) == 2:
                    commands.append(f"{name} {spelling}/etc/x f.txt")
                else:
                    commands.append(f"{name} {spelling}=.env f.txt")
        commands += [f"{name} -- -x .env", f"{name} -q .env /etc/x", f"{name} -5 $API_KEY"]
    return commands


DIRECT = [
    pytest.param(spec, command, id=command)
    for _, spec in all_specs().values()
    if spec.direct
    for command in (
        *(example[0] for example in spec.examples),
        *corpus_commands_for(spec),
    )
]


@pytest.mark.parametrize(("spec", "command"), DIRECT)
def test_the_direct_path_decides_as_the_generic_one(spec: Spec, command: str) -> None:
    """``specs._apply_direct`` reads options as ``parse_args`` does, without building Args (it
    is the hot path for cat, grep, timeout…): both must give the same tier and rules."""
    direct, generic = _both_ways(command, spec)
    assert direct == generic
