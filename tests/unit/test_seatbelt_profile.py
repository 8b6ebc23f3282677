"""Golden tests: fixed policies -> the exact Seatbelt profiles in ``tests/golden/seatbelt/``.

A change to the generator shows up as a diff of these files. To accept an intended change,
regenerate them and review the diff (``tests/golden/README.md``)::

    STOCKADE_REGENERATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/unit/test_seatbelt_profile.py
    git diff tests/golden/
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stockade.errors import SandboxUnavailable, UsageError
from stockade.sandbox.policy import MaskedPath, NetworkMode
from stockade.sandbox.seatbelt import macos_path, regex_quote, sbpl_string, seatbelt_profile
from tests import sbpl_evaluator
from tests.seatbelt_support import GOLDEN_POLICIES, HOME, HOME_MASKS, policy

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "seatbelt"
REGENERATE = os.environ.get("STOCKADE_REGENERATE_GOLDEN") == "1"


@pytest.mark.parametrize("name", sorted(GOLDEN_POLICIES))
def test_the_profile_matches_its_golden_file(name: str) -> None:
    profile = seatbelt_profile(GOLDEN_POLICIES[name])
    golden = GOLDEN / f"{name}.sb"
    if REGENERATE:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(profile, encoding="utf-8")
    assert golden.exists(), f"no golden file {golden}: regenerate (see tests/golden/README.md)"
    assert profile == golden.read_text(encoding="utf-8")


def test_every_golden_file_belongs_to_a_policy() -> None:
    """A stale golden file (its policy renamed or removed) is an error, not dead weight."""
    assert {p.stem for p in GOLDEN.glob("*.sb")} == set(GOLDEN_POLICIES)


@pytest.mark.parametrize("name", sorted(GOLDEN_POLICIES))
def test_every_golden_profile_parses_as_rules(name: str) -> None:
    assert sbpl_evaluator.rules(seatbelt_profile(GOLDEN_POLICIES[name]))


def test_the_same_policy_gives_the_same_profile() -> None:
    assert seatbelt_profile(policy()) == seatbelt_profile(policy())


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/tmp", "/private/tmp"),
        ("/tmp/x", "/private/tmp/x"),
        ("/var/folders/zz/T", "/private/var/folders/zz/T"),
        ("/etc/hosts", "/private/etc/hosts"),
        ("/private/tmp/x", "/private/tmp/x"),
        ("/tmpfoo", "/tmpfoo"),
        ("/variable", "/variable"),
        ("/Users/alice/tmp", "/Users/alice/tmp"),
    ],
)
def test_macos_paths_get_their_private_prefix(path: str, expected: str) -> None:
    assert macos_path(path) == expected


@pytest.mark.parametrize(
    ("text", "literal"),
    [
        ("/a b/c", '"/a b/c"'),
        ('/say "hi"', '"/say \\"hi\\""'),
        ("/back\\slash", '"/back\\\\slash"'),
        ("/(paren)", '"/(paren)"'),
        ("/ünï 🐍", '"/ünï 🐍"'),
        ("/semi;colon", '"/semi;colon"'),
    ],
)
def test_sbpl_strings_escape_quotes_and_backslashes(text: str, literal: str) -> None:
    assert sbpl_string(text) == literal
    assert sbpl_evaluator.parse(literal) == [text]  # and read back as the same path


@pytest.mark.parametrize("text", ["/new\nline", "/tab\tx", "/nul\x00", "/del\x7f", "/bad\udcff"])
def test_a_path_sbpl_cannot_spell_safely_is_refused(text: str) -> None:
    with pytest.raises(UsageError):
        sbpl_string(text)


def test_a_policy_with_such_a_path_is_refused_not_approximated() -> None:
    bad = policy(masked=(*HOME_MASKS, MaskedPath(HOME / "line\nbreak", True)))
    with pytest.raises(UsageError, match="control character"):
        seatbelt_profile(bad)


def test_regex_quote_escapes_every_metacharacter() -> None:
    import re

    text = "/a.b^c$d|e?f*g+h(i)j[k]l{m}n\\o"
    assert re.fullmatch(regex_quote(text), text)
    assert not re.fullmatch(regex_quote("/a.b"), "/aXb")


def test_allowlist_without_a_running_proxy_is_refused() -> None:
    with pytest.raises(SandboxUnavailable):
        seatbelt_profile(policy(network=NetworkMode.ALLOWLIST)._replace(proxy_port=None))
