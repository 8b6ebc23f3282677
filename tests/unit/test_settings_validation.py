"""Every settings error names the file, the line and the key, and says how to fix it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stockade.errors import ConfigError
from stockade.settings import Problem, Settings, validate_settings
from stockade.settings_layers import suggest_key
from tests.settings_support import user_settings_path, write, write_project, write_user


def problems(project: Path, env: dict[str, str] | None = None) -> list[Problem]:
    _layers, found = validate_settings(project, env=env)
    return found


def only(project: Path, env: dict[str, str] | None = None) -> Problem:
    found = problems(project, env)
    assert len(found) == 1, found
    return found[0]


# -- unknown keys ---------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["fsReadDeny", "fs_read_deny", "readDeny", "read-deny"])
def test_unknown_keys_suggest_the_real_one(tmp_path: Path, spelling: str) -> None:
    path = write_user(f'[sandbox]\nnetwork = "deny"\n{spelling} = ["/x"]\n')
    problem = only(tmp_path)
    assert problem.source == str(path)
    assert problem.line == 3
    assert problem.key == f"sandbox.{spelling}"
    assert "did you mean read_deny?" in problem.message
    assert problem.fix == "rename it to read_deny"
    assert str(problem).startswith(f"{path}:3: sandbox.{spelling}: unknown key")


@pytest.mark.parametrize(
    ("section", "key", "hint"),
    [
        (None, "read_deny", "[sandbox] read_deny"),
        (None, "sandbx", "[sandbox]"),
        (None, "permission", "[permissions]"),
        ("sandbox", "allowedDomains", "[network] allowed_domains"),
        ("network", "mode", "[sandbox] network"),
        ("sandbox", "writeable_roots", "writable_roots"),
        ("sandbox", "sandboxNetwork", "network"),
        ("permissions", "autonomyLevel", "autonomy"),
    ],
)
def test_suggestions(section: str | None, key: str, hint: str) -> None:
    assert suggest_key(key, section) == hint


def test_nothing_close_lists_the_valid_keys(tmp_path: Path) -> None:
    write_user("[risk]\nzzz = 1\n")
    problem = only(tmp_path)
    assert "unknown key 'zzz' in [risk]" in problem.message
    assert problem.fix == "valid keys here: programs"


def test_an_unknown_table_is_located_at_its_header(tmp_path: Path) -> None:
    write_user('[sandbox]\nnetwork = "deny"\n\n[sandbx]\nx = 1\n')
    problem = only(tmp_path)
    assert (problem.line, problem.key) == (4, "sandbx")
    assert "did you mean [sandbox]?" in problem.message


def test_unknown_limit_suggests_the_field(tmp_path: Path) -> None:
    write_user('[sandbox.limits]\nmemory = "1G"\n')
    problem = only(tmp_path)
    assert (problem.line, problem.key) == (2, "sandbox.limits.memory")
    assert "did you mean memory_max_bytes?" in problem.message


def test_test_hosts_is_refused_with_a_reason(tmp_path: Path) -> None:
    write_user('[network.test_hosts]\n"a.test" = "127.0.0.1"\n')
    problem = only(tmp_path)
    assert "test-only" in problem.message and problem.key == "network.test_hosts"


# -- types and values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line", "key", "message"),
    [
        ('[sandbox]\nenabled = "yes"\n', 2, "sandbox.enabled", "must be true or false"),
        ('[sandbox]\nread_deny = "~/.ssh"\n', 2, "sandbox.read_deny", "must be a list"),
        ("[sandbox]\nread_deny = [1]\n", 2, "sandbox.read_deny[0]", "must be a string"),
        ('[sandbox]\nbackend = "docker"\n', 2, "sandbox.backend", "unknown sandbox backend"),
        ('[sandbox]\nnetwork = "sometimes"\n', 2, "sandbox.network", "unknown network mode"),
        ("[sandbox]\nnetwork = 1\n", 2, "sandbox.network", "not a number"),
        ('[permissions]\nautonomy = "reckless"\n', 2, "permissions.autonomy", "unknown autonomy"),
        ('[permissions]\nallow = ["ok", ""]\n', 2, "permissions.allow[1]", "non-empty string"),
        ('[permissions]\ndeny = "bash:rm *"\n', 2, "permissions.deny", "must be a list"),
        ('[risk]\nprograms = { make = "lowish" }\n', 2, "risk.programs.make", "unknown tier"),
        ("[risk]\nprograms = { make = 1 }\n", 2, "risk.programs.make", "must be a string"),
        ('[risk]\nprograms = "make"\n', 2, "risk.programs", "must be a table"),
        ('[sandbox.limits]\npids_max = "many"\n', 2, "sandbox.limits.pids_max", "positive integer"),
        ("[sandbox.limits]\npids_max = 2\n", 2, "sandbox.limits.pids_max", "cannot even start"),
        ("[sandbox.limits]\nwall_timeout_s = true\n", 2, "sandbox.limits.wall_timeout_s", "number"),
        ('[sandbox]\nenv_passthrough = ["MY VAR"]\n', 2, "sandbox.env_passthrough[0]", "not an"),
        ('[network]\nallowed_domains = ["*"]\n', 2, "network.allowed_domains[0]", "every host"),
        (
            '[network]\nallowed_domains = [\n  "ok.com",\n  "bad host",\n]\n',
            4,
            "network.allowed_domains[1]",
            "invalid domain pattern",
        ),
        (
            '[network]\nallowed_domains = [{ domain = "x.lan", private = true }]\n',
            2,
            "network.allowed_domains[0].private",
            "unknown key 'private'",
        ),
        ("[network]\nallow_private = 1\n", 2, "network.allow_private", "true or false"),
        ("sandbox = 1\n", 1, "sandbox", "must be a table"),
    ],
)
def test_wrong_values_name_file_line_and_key(
    tmp_path: Path, text: str, line: int, key: str, message: str
) -> None:
    path = write_user(text)
    problem = only(tmp_path)
    assert (problem.source, problem.line, problem.key) == (str(path), line, key)
    assert message in problem.message
    assert problem.fix


def test_dotted_keys_and_nested_tables_are_located(tmp_path: Path) -> None:
    write_user(
        """\
        [sandbox]
        network = "deny"
        limits.pids_max = "x"

        [risk.programs]
        make = "low"
        cargo = "cheap"
        """
    )
    located = {(p.key, p.line) for p in problems(tmp_path)}
    assert located == {("sandbox.limits.pids_max", 3), ("risk.programs.cargo", 7)}


# -- paths ----------------------------------------------------------------------------------


def test_relative_paths_are_rejected_saying_so(tmp_path: Path) -> None:
    write_user('[sandbox]\nread_deny = [\n  "/abs",\n  "secrets/keys",\n]\n')
    problem = only(tmp_path)
    assert (problem.line, problem.key) == (4, "sandbox.read_deny[1]")
    assert "'secrets/keys' is a relative path" in problem.message
    assert "not allowed" in problem.message
    assert "${PROJECT_ROOT}/secrets/keys" in (problem.fix or "")


def test_unset_variables_are_named(tmp_path: Path) -> None:
    write_user('[sandbox]\nread_deny = ["${STOCKADE_TEST_NOT_SET}/x"]\n')
    problem = only(tmp_path)
    assert "${STOCKADE_TEST_NOT_SET}" in problem.message and "not set" in problem.message


def test_writable_paths_must_exist(tmp_path: Path) -> None:
    write_user('[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/missing"]\n')
    problem = only(tmp_path)
    assert problem.key == "sandbox.writable_roots[0]"
    assert "does not exist" in problem.message


def test_project_files_are_checked_too(tmp_path: Path) -> None:
    path = write_project(tmp_path, "[sandbox]\nread_deny = ['rel']\n")
    problem = only(tmp_path)
    assert problem.source == str(path) and problem.line == 2


# -- syntax and files -----------------------------------------------------------------------


def test_syntax_errors_name_file_and_line(tmp_path: Path) -> None:
    path = write_user('[sandbox]\nnetwork = "deny"\nread_deny = ["/a" "/b"]\n')
    problem = only(tmp_path)
    assert (problem.source, problem.line) == (str(path), 3)
    assert problem.message.startswith("TOML syntax error:")
    assert "column" not in problem.message


def test_an_unterminated_string_points_at_the_last_line(tmp_path: Path) -> None:
    write_user('[sandbox]\nnetwork = "deny\n')
    problem = only(tmp_path)
    assert problem.line == 2 and "syntax error" in problem.message


def test_a_duplicate_key_is_a_syntax_error_with_its_line(tmp_path: Path) -> None:
    write_user('[sandbox]\nnetwork = "deny"\n\nnetwork = "allow"\n')
    assert only(tmp_path).line == 4


def test_binary_garbage_is_reported(tmp_path: Path) -> None:
    user_settings_path().parent.mkdir(parents=True)
    user_settings_path().write_bytes(b'[sandbox]\nnetwork = "\xff"\n')
    problem = only(tmp_path)
    assert "UTF-8" in problem.message and problem.line == 2


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
def test_an_unreadable_user_file_stops_stockade(tmp_path: Path) -> None:
    path = write_user('[sandbox]\nnetwork = "deny"\n')
    path.chmod(0)
    with pytest.raises(ConfigError, match="cannot read"):
        Settings.load(tmp_path)


def test_a_named_config_file_must_exist(tmp_path: Path) -> None:
    env = {**os.environ, "STOCKADE_CONFIG": str(tmp_path / "nope.toml")}
    problem = only(tmp_path, env)
    assert "does not exist" in problem.message and problem.source.endswith("nope.toml")


def test_stockade_config_replaces_the_user_file(tmp_path: Path) -> None:
    write_user('[sandbox]\nnetwork = "allow"\n')
    other = write(tmp_path / "other.toml", '[sandbox]\nread_deny = ["/srv/secret"]\n')
    settings = Settings.load(tmp_path, env={**os.environ, "STOCKADE_CONFIG": str(other)})
    assert settings.sandbox.read_deny == (Path("/srv/secret"),)
    assert settings.sandbox.network.value == "deny"


# -- collecting and stopping ----------------------------------------------------------------


def test_every_problem_is_listed_not_just_the_first(tmp_path: Path) -> None:
    write_user(
        """\
        [sandbox]
        readDeny = []
        backend = "docker"
        [permissions]
        autonomy = 3
        """
    )
    write_project(tmp_path, "[sandbox]\nread_deny = ['x']\n")
    found = problems(tmp_path, {**os.environ, "STOCKADE_SANDBOX_NETWORK": "maybe"})
    assert [(p.key, p.line) for p in found] == [
        ("sandbox.readDeny", 2),
        ("sandbox.backend", 3),
        ("permissions.autonomy", 5),
        ("sandbox.read_deny[0]", 2),
        ("sandbox.network", None),
    ]


def test_a_broken_user_file_stops_stockade_with_exit_2(tmp_path: Path) -> None:
    write_user('[sandbox]\nread_deny = ["~/.secrets"]\nnetwork = "nope"\nbackend = 1\n')
    with pytest.raises(ConfigError) as caught:
        Settings.load(tmp_path)
    error = caught.value
    assert error.exit_code == 2
    assert f"{user_settings_path()}:3: sandbox.network" in error.message
    assert "and 1 more problem;" in error.message
    assert "stockade config validate" in error.message
    assert error.fix


@pytest.mark.parametrize(
    ("variable", "value", "key"),
    [
        ("STOCKADE_SANDBOX", "maybe", "sandbox.enabled"),
        ("STOCKADE_SANDBOX_NETWORK", "sideways", "sandbox.network"),
        ("STOCKADE_SANDBOX_WRITABLE_ROOTS", "relative/dir", "sandbox.writable_roots[0]"),
        ("STOCKADE_SANDBOX_WRITABLE_ROOTS", "/nonexistent/stockade", "sandbox.writable_roots[0]"),
        ("STOCKADE_AUTONOMY", "reckless", "permissions.autonomy"),
    ],
)
def test_bad_environment_values_name_the_variable(
    tmp_path: Path, variable: str, value: str, key: str
) -> None:
    problem = only(tmp_path, {**os.environ, variable: value})
    assert (problem.source, problem.line, problem.key) == (variable, None, key)
    assert problem.fix


def test_a_backend_that_does_not_exist_is_a_validation_problem(tmp_path: Path) -> None:
    write_user('[sandbox]\nbackend = "container"\n')
    problem = only(tmp_path, dict(os.environ))
    assert problem.key == "sandbox.backend"
    assert "bwrap" in problem.fix
