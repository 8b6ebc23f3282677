"""The default environment is an allow-list: what passes, what is dropped, and why."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stockade.sandbox.environment import (
    NOT_ON_ALLOW_LIST,
    SECRET_LOOKING_NAME,
    child_environment,
    credential_kind,
    dropped_names,
    dropped_variables,
    is_allow_listed,
    judge_environment,
    passes_by_default,
)
from stockade.vocabulary import CREDENTIAL_VALUES, ENVIRONMENT_ALLOW_LIST

SESSION = Path("/var/tmp/stockade-session-x/tmp")

# Secrets under names the old deny pattern (KEY|TOKEN|SECRET|PASSW|CREDENTIAL) misses, and
# CI job tokens: each must stay on the host.
MISSED_BY_THE_NAME_PATTERN = {
    "DATABASE_URL": "postgres://app:hunter2@db.internal:5432/app",
    "GITHUB_PAT": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789",
    "MYSQL_PWD": "hunter2",
    "SENTRY_DSN": "https://0123456789abcdef@o12345.ingest.sentry.io/42",
    "CI_JOB_JWT": "eyJhbGciOiJSUzI1NiJ9.eyJuYW1lc3BhY2VfaWQiOiIxIn0.c2lnbmF0dXJl",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "abcdef0123456789",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.actions.githubusercontent.com/x",
    "REDIS_URL": "redis://:s3cret@cache:6379/0",
    "PGPASSFILE": "/home/me/.pgpass",
}


def env(**extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": "/home/me", "LANG": "C.UTF-8", **extra}


@pytest.mark.parametrize("name", sorted(MISSED_BY_THE_NAME_PATTERN))
def test_secrets_under_names_the_pattern_misses_are_dropped(name: str) -> None:
    host = env(**{name: MISSED_BY_THE_NAME_PATTERN[name]})
    passed = child_environment(host, session_dir=SESSION)
    assert name not in passed
    assert MISSED_BY_THE_NAME_PATTERN[name] not in passed.values()
    assert name in dropped_names(host)


def test_a_plain_locale_passes() -> None:
    passed = child_environment(env(LC_ALL="de_DE.UTF-8", TZ="Europe/Berlin"), session_dir=SESSION)
    assert passed["LANG"] == "C.UTF-8"
    assert passed["LC_ALL"] == "de_DE.UTF-8"
    assert passed["TZ"] == "Europe/Berlin"
    assert passed["PATH"] == "/usr/bin:/bin"


def test_an_unknown_harmless_variable_stays_on_the_host() -> None:
    host = env(HARMLESS_SETTING="fine")
    assert "HARMLESS_SETTING" not in child_environment(host, session_dir=SESSION)
    assert ("HARMLESS_SETTING", NOT_ON_ALLOW_LIST) in dropped_variables(host)


@pytest.mark.parametrize(
    ("name", "value", "kind"),
    [
        ("HTTPS_PROXY", "http://me:pw@proxy.corp:3128", "a URL with a user name or password"),
        ("PIP_INDEX_URL", "https://__token__:pypi-AgEIcHlwaS5vcmcCJDA@pypi.corp/simple",
         "a URL with a user name or password"),
        ("GOPROXY", "https://ghp_0123456789abcdefghij0123456789abcdef@goproxy.corp",
         "a URL with a user name or password"),
        ("EDITOR", "ghp_0123456789abcdefghij0123456789abcdef", "a GitHub token"),
        ("TERM", "gho_0123456789abcdefghij0123456789abcdef", "a GitHub token"),
        ("PAGER", "glpat-0123456789abcdefghij", "a GitLab token"),
        ("PAGER", "xoxb-1234567890-abcdefghij", "a Slack token"),
        ("PAGER", "AKIAIOSFODNN7EXAMPLE", "an AWS access key id"),
        ("PAGER", "ASIAIOSFODNN7EXAMPLE", "an AWS access key id"),
        ("PAGER", "sk-proj-0123456789abcdefghijkl", "an OpenAI / Anthropic API key"),
        ("PAGER", "sk_live_0123456789abcdef", "a Stripe key"),
        ("PAGER", "npm_0123456789abcdefghijklmnopqrstuvwxyz", "an npm token"),
        ("PAGER", "pypi-AgEIcHlwaS5vcmcCJDA0", "a PyPI token"),
        ("PAGER", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig", "a JSON web token"),
    ],
)  # fmt: skip
def test_an_allowed_name_with_a_credential_looking_value_is_dropped(
    name: str, value: str, kind: str
) -> None:
    assert passes_by_default(name)
    host = env(**{name: value})
    assert name not in child_environment(host, session_dir=SESSION)
    assert (name, f"its value looks like a credential ({kind})") in dropped_variables(host)


def test_an_explicitly_passed_name_passes_even_with_a_credential_looking_value() -> None:
    host = env(HTTPS_PROXY="http://me:pw@proxy.corp:3128", GITHUB_PAT="ghp_" + "a" * 36)
    passed = child_environment(host, session_dir=SESSION, passthrough=["HTTPS_PROXY", "GITHUB_PAT"])
    assert passed["HTTPS_PROXY"] == "http://me:pw@proxy.corp:3128"
    assert passed["GITHUB_PAT"] == "ghp_" + "a" * 36
    assert dropped_names(host, ["HTTPS_PROXY", "GITHUB_PAT"]) == []


def test_secret_looking_names_are_dropped_even_if_allowed_by_prefix() -> None:
    assert is_allow_listed("LC_API_TOKEN")
    assert not passes_by_default("LC_API_TOKEN")
    assert ("LC_API_TOKEN", SECRET_LOOKING_NAME) in dropped_variables(env(LC_API_TOKEN="x"))


def test_session_redirects_replace_host_values_and_are_not_listed_as_dropped() -> None:
    host = env(TMPDIR="/host/tmp", PIP_CACHE_DIR="/host/pip", PWD="/somewhere")
    passed = child_environment(host, session_dir=SESSION)
    assert passed["TMPDIR"] == str(SESSION)
    assert passed["PIP_CACHE_DIR"] == str(SESSION / "pip-cache")
    assert "PWD" not in passed  # the policy sets it to the working directory
    assert dropped_names(host) == []


def test_extra_values_are_set_outright() -> None:
    extra = {"HTTP_PROXY": "http://127.0.0.1:3128"}
    passed = child_environment(env(), session_dir=SESSION, extra=extra)
    assert passed["HTTP_PROXY"] == "http://127.0.0.1:3128"


def test_status_lists_names_and_reasons_never_values() -> None:
    host = env(**MISSED_BY_THE_NAME_PATTERN)
    passed, dropped = judge_environment(host)
    listed = repr(dropped)
    for value in MISSED_BY_THE_NAME_PATTERN.values():
        assert value not in listed
    assert [d.name for d in dropped] == sorted(MISSED_BY_THE_NAME_PATTERN)
    assert set(passed) == {"PATH", "HOME", "LANG"}


@pytest.mark.parametrize(
    "value",
    [
        "/usr/local/bin:/usr/bin:/bin",
        "en_US.UTF-8",
        "xterm-256color",
        "https://proxy.golang.org,direct",
        "https://pypi.org/simple",
        "/Users/alice/.cargo",
        "vim -u NONE",
        "sk_SK.UTF-8",  # Slovak, not a Stripe key
        "truecolor",
        "-R --mouse",
    ],
)
def test_ordinary_values_do_not_look_like_credentials(value: str) -> None:
    assert credential_kind(value) is None


def test_the_tables_are_well_formed() -> None:
    names = [name for group in ENVIRONMENT_ALLOW_LIST for name in group.names]
    assert len(names) == len(set(names))
    assert all(group.why for group in ENVIRONMENT_ALLOW_LIST)
    assert "XDG_RUNTIME_DIR" not in names  # a socket directory is a capability, not a setting
    assert not any(name.startswith(("SSH_", "DBUS_", "DOCKER_")) for name in names)
    assert all(value.what for value in CREDENTIAL_VALUES)


@pytest.mark.parametrize("index", range(len(CREDENTIAL_VALUES)))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_of_a_credential_shape_contains_one_of_its_markers(
    index: int, data: st.DataObject
) -> None:
    """The markers pre-screen values; a match without a marker would slip through unsearched."""
    shape = CREDENTIAL_VALUES[index]
    value = data.draw(st.from_regex(shape.pattern))
    assert any(marker in value.casefold() for marker in shape.markers), value
    assert credential_kind(value) is not None


@pytest.mark.parametrize("shape", CREDENTIAL_VALUES, ids=lambda shape: shape.what)
def test_markers_are_lowercase_literals(shape: object) -> None:
    markers = shape.markers  # type: ignore[attr-defined]
    assert markers and all(m == m.casefold() and m for m in markers)
