"""The shared vocabulary is the one source: its consumers agree with it."""

from __future__ import annotations

import pytest

from stockade import vocabulary
from stockade.permissions.autonomy import Autonomy
from stockade.sandbox import policy
from stockade.sandbox.select import make_backend


def test_the_autonomy_enum_spells_the_vocabulary_levels_in_order() -> None:
    assert tuple(level.value for level in Autonomy) == vocabulary.AUTONOMY_LEVELS


def test_no_autonomy_alias_leads_to_yolo() -> None:
    assert "yolo" not in vocabulary.AUTONOMY_ALIASES.values()
    assert set(vocabulary.AUTONOMY_ALIASES.values()) <= set(vocabulary.AUTONOMY_LEVELS)


@pytest.mark.parametrize("name", [n for n in vocabulary.BACKEND_NAMES if n != "auto"])
def test_every_backend_name_makes_a_backend_of_that_name(name: str) -> None:
    assert make_backend(name).name == name


def test_auto_tries_only_named_backends() -> None:
    assert set(vocabulary.AUTO_ORDER) < set(vocabulary.BACKEND_NAMES)


def test_home_secrets_are_unique_relative_paths_with_their_tool() -> None:
    paths = [secret.path for secret in vocabulary.HOME_SECRETS]
    assert len(paths) == len(set(paths))
    for secret in vocabulary.HOME_SECRETS:
        assert not secret.path.startswith(("/", "~")), secret
        assert secret.tool, secret


def test_the_sandbox_masks_every_home_secret() -> None:
    assert set(policy.DEFAULT_READ_DENY_IN_HOME) == {s.path for s in vocabulary.HOME_SECRETS}


def test_protected_names_are_unique_and_each_names_its_threat_and_judge() -> None:
    from stockade.sandbox.judges import _FILE_JUDGES

    places = [(p.where, p.name) for p in vocabulary.PROTECTED_NAMES]
    assert len(places) == len(set(places))
    assert all(p.threat for p in vocabulary.PROTECTED_NAMES)
    assert {p.where for p in vocabulary.PROTECTED_NAMES} == {
        vocabulary.ROOT,
        vocabulary.HOME,
        vocabulary.CARGO_HOME,
    }
    known = {*_FILE_JUDGES, vocabulary.ANYTHING, vocabulary.HARMLESS}
    assert {p.judge for p in vocabulary.PROTECTED_NAMES} <= known
    root_names = {p.name for p in vocabulary.PROTECTED_NAMES if p.where == vocabulary.ROOT}
    assert set(policy.PROTECTED_NAMES) == root_names


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("GITHUB_TOKEN", True),
        ("aws_secret_access_key", True),
        ("DB_PASSWORD", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("PATH", False),
        ("HOME", False),
    ],
)
def test_the_secret_name_pattern(name: str, secret: bool) -> None:
    assert bool(vocabulary.SECRET_NAME_PATTERN.search(name)) is secret
