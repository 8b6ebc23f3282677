"""The classifier and the file tools take secret and protected names from
``stockade.vocabulary`` (the sandbox's list): every entry there is rated, and where the views
differ the difference is stated here."""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade import file_tools
from stockade.risk import classify, paths
from stockade.risk.hooks import SECRET_EXPANSION
from stockade.vocabulary import (
    CLASSIFIER_ONLY_PROTECTED,
    HOME_SECRETS,
    PROTECTED_NAMES,
    SECRET_DIRECTORIES,
    SECRET_FILE_EXCEPTIONS,
    SECRET_FILES,
    SECRET_NAME_WORDS,
    SECRET_PATHS,
)

GLOBS = [glob for entry in SECRET_FILES for glob in entry.globs]


def _named(glob: str, star: str = "x") -> str:
    return glob.replace("*", star)


@pytest.mark.parametrize("secret", HOME_SECRETS, ids=lambda secret: secret.path)
def test_every_home_credential_store_is_rated_a_secret_read(secret: object) -> None:
    path = secret.path  # type: ignore[attr-defined]
    for command in (f"cat ~/{path}", f"cat $HOME/{path}/x", f"cat /home/u/{path}"):
        assert "secret.read" in classify(command).rule_ids, command
    assert "secret.read" in classify(f"cd ~ && cat {path}").rule_ids
    assert file_tools.is_secret(Path.home() / path)
    assert file_tools.is_secret(Path.home() / path / "x")


@pytest.mark.parametrize("glob", GLOBS)
def test_every_secret_file_name_is_a_secret_read_for_the_classifier_and_the_file_tools(
    glob: str,
) -> None:
    name = _named(glob)
    assert "secret.read" in classify(f"cat {name}").rule_ids
    assert "secret.read" in classify(f"cat dir/{name}").rule_ids
    assert file_tools.is_secret(Path("/project") / name)


@pytest.mark.parametrize("glob", GLOBS)
def test_the_secret_prefilter_never_hides_a_glob_of_a_secret_name(glob: str) -> None:
    """``find -name GLOB`` and ``cat .e*`` are checked with glob characters read as matching
    nothing: the cheap condition before the regex must let every spelling through."""
    for star in ("", "x", "*", "?"):
        name = _named(glob, star)
        if name.replace("*", "").replace("?", "") in SECRET_FILE_EXCEPTIONS:
            continue
        assert paths.is_secret(name, False), name
        assert paths.may_be_secret(name), name


@pytest.mark.parametrize("name", sorted(SECRET_FILE_EXCEPTIONS))
def test_templates_of_secret_files_are_not_secrets(name: str) -> None:
    assert "secret.read" not in classify(f"cat {name}").rule_ids
    assert not file_tools.is_secret(Path("/project") / name)


@pytest.mark.parametrize("directory", SECRET_DIRECTORIES)
def test_secret_directories_count_anywhere(directory: str) -> None:
    assert "secret.read" in classify(f"cat backup/{directory}/x").rule_ids
    assert file_tools.is_secret(Path("/project/backup") / directory / "x")


@pytest.mark.parametrize("secret", SECRET_PATHS)
def test_secret_paths_count_anywhere(secret: str) -> None:
    assert "secret.read" in classify(f"cat backup/{secret}").rule_ids
    assert file_tools.is_secret(Path("/project/backup") / secret)


def test_the_file_tools_tables_are_the_vocabulary() -> None:
    assert tuple(GLOBS) == file_tools.SECRET_NAME_GLOBS
    assert frozenset(SECRET_DIRECTORIES) == file_tools.SECRET_DIRECTORY_NAMES


# --- protected names ---------------------------------------------------------------------------


def test_the_classifier_protects_the_sandboxs_dot_names_and_exactly_its_own_extra_ones() -> None:
    """The classifier's view is PROTECTED_NAMES' dot names plus CLASSIFIER_ONLY_PROTECTED
    (``.zshenv``, ``.git/info/attributes``…: rated ``write.protected``, not enforced by the
    sandbox). The sandbox names it leaves out are those below CARGO_HOME or without a dot
    (``bin`` below home): the classifier rates a write there by where it is (home: high)."""
    sandbox = {entry.name for entry in PROTECTED_NAMES}
    extra = {entry.name for entry in CLASSIFIER_ONLY_PROTECTED}
    assert not extra & sandbox
    assert set(paths.PROTECTED_FOR_CLASSIFIER) - sandbox == extra
    left_out = sandbox - set(paths.PROTECTED_FOR_CLASSIFIER)
    assert all(
        not entry.name.startswith(".") or getattr(entry, "where", "root") == "cargo-home"
        for entry in PROTECTED_NAMES
        if entry.name in left_out
    )


@pytest.mark.parametrize("name", paths.PROTECTED_FOR_CLASSIFIER)
def test_every_protected_name_is_a_protected_write(name: str) -> None:
    target = _named(name, "a")
    for command in (f"echo x > {target}", f"echo x > {target}/x", f"touch sub/{target}"):
        assert "write.protected" in classify(command).rule_ids, command


@pytest.mark.parametrize("word", SECRET_NAME_WORDS)
def test_secret_variable_names_come_from_the_vocabulary(word: str) -> None:
    assert SECRET_EXPANSION.search(f"${{MY_{word}}}") is not None
    assert "secret.env-var" in classify(f"echo $MY_{word}_X").rule_ids
    assert "secret.env-var" not in classify("echo $HOME").rule_ids
