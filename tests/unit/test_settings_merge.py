"""Layer precedence, environment spellings, path expansion, tighten-only merging and trust."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.net.domains import DecisionSource
from stockade.net.mode import NetworkMode
from stockade.settings import FlagOverrides, Settings, stockade_state_paths
from stockade.tiers import Tier
from stockade.trust import find_record, record_trust, revoke_trust, store_path
from tests.settings_support import write_local, write_project, write_user


def load(
    project: Path,
    *,
    env: dict[str, str] | None = None,
    flags: FlagOverrides | None = None,
    trusted: bool | None = None,
) -> Settings:
    return Settings.load(
        project, env={**os.environ, **(env or {})}, flags=flags, cwd=project, trusted=trusted
    )


def ignored_keys(settings: Settings) -> list[str]:
    return [entry.key for entry in settings.ignored]


# -- precedence -----------------------------------------------------------------------------


def test_defaults_without_any_file(tmp_path: Path) -> None:
    settings = load(tmp_path)
    assert settings.backend == "auto"
    assert settings.sandbox.network is NetworkMode.DENY
    assert settings.autonomy is None
    assert settings.loaded_layers() == []
    assert settings.origin("sandbox.network").layer == "default"
    assert settings.counts_line() == "read-deny=0 allow-within=0 write-extra=0 deny-within=0"


def test_each_layer_wins_over_the_one_before(tmp_path: Path) -> None:
    """user < project < local < env < flags, for a trusted workspace."""
    write_user('[permissions]\nautonomy = "ask"\n')
    write_project(tmp_path, '[permissions]\nautonomy = "conservative"\n')
    write_local(tmp_path, '[permissions]\nautonomy = "balanced"\n')
    env = {"STOCKADE_AUTONOMY": "auto-accept"}
    flags = FlagOverrides(autonomy="yolo")
    ladder = [
        (load(tmp_path, env=env, flags=flags, trusted=True), "yolo", "flag"),
        (load(tmp_path, env=env, trusted=True), "auto-accept", "env"),
        (load(tmp_path, trusted=True), "balanced", "local"),
    ]
    for settings, level, layer in ladder:
        assert (settings.autonomy, settings.origin("permissions.autonomy").layer) == (level, layer)
    os.unlink(tmp_path / ".stockade" / "settings.local.toml")
    settings = load(tmp_path, trusted=True)
    assert (settings.autonomy, settings.origin("permissions.autonomy").layer) == (
        "conservative",
        "project",
    )


def test_untrusted_layers_still_tighten_in_order(tmp_path: Path) -> None:
    write_user('[permissions]\nautonomy = "yolo"\n[sandbox]\nnetwork = "allow"\n')
    write_project(
        tmp_path, '[permissions]\nautonomy = "auto-accept"\n[sandbox]\nnetwork = "allowlist"\n'
    )
    write_local(tmp_path, '[permissions]\nautonomy = "conservative"\n')
    settings = load(tmp_path)
    assert settings.autonomy == "conservative"
    assert settings.sandbox.network is NetworkMode.ALLOWLIST
    assert settings.ignored == ()
    assert settings.trust.needed is False


def test_environment_and_flags_are_the_operator_and_override_files(tmp_path: Path) -> None:
    write_user('[sandbox]\nnetwork = "deny"\nbackend = "bwrap"\n')
    settings = load(tmp_path, env={"STOCKADE_SANDBOX_NETWORK": "allow"})
    assert settings.sandbox.network is NetworkMode.ALLOW
    assert settings.origin("sandbox.network").source == "STOCKADE_SANDBOX_NETWORK"
    settings = load(
        tmp_path,
        env={"STOCKADE_SANDBOX_NETWORK": "allow"},
        flags=FlagOverrides(network="deny", backend="none"),
    )
    assert settings.sandbox.network is NetworkMode.DENY
    assert settings.backend == "none"
    assert str(settings.origin("sandbox.backend")) == "flag (--backend)"


def test_sandbox_on_in_the_environment_overrides_backend_none(tmp_path: Path) -> None:
    write_user('[sandbox]\nbackend = "none"\n')
    assert load(tmp_path).backend == "none"
    settings = load(tmp_path, env={"STOCKADE_SANDBOX": "on"})
    assert settings.backend == "auto"
    assert settings.origin("sandbox.backend").source == "STOCKADE_SANDBOX"


def test_unsafe_flag_and_sandbox_off_mean_backend_none(tmp_path: Path) -> None:
    assert load(tmp_path, flags=FlagOverrides(unsafe=True)).backend == "none"
    assert load(tmp_path, env={"STOCKADE_SANDBOX": "off"}).backend == "none"
    write_user("[sandbox]\nenabled = false\n")
    assert load(tmp_path).backend == "none"


# -- environment spellings ------------------------------------------------------------------


@pytest.mark.parametrize("word", ["1", "on", "true", "yes", "enabled", "ON", " Yes "])
def test_sandbox_on_words(tmp_path: Path, word: str) -> None:
    write_user("[sandbox]\nenabled = false\n")
    assert load(tmp_path, env={"STOCKADE_SANDBOX": word}).sandbox.enabled is True


@pytest.mark.parametrize("word", ["0", "off", "false", "no", "disabled", "OFF"])
def test_sandbox_off_words(tmp_path: Path, word: str) -> None:
    assert load(tmp_path, env={"STOCKADE_SANDBOX": word}).backend == "none"


@pytest.mark.parametrize(
    ("word", "mode"),
    [
        ("deny", "deny"),
        ("denied", "deny"),
        ("block", "deny"),
        ("off", "deny"),
        ("allow", "allow"),
        ("allowed", "allow"),
        ("on", "allow"),
        ("ALLOW", "allow"),
        ("allowlist", "allowlist"),
    ],
)
def test_network_words(tmp_path: Path, word: str, mode: str) -> None:
    settings = load(tmp_path, env={"STOCKADE_SANDBOX_NETWORK": word})
    assert settings.sandbox.network.value == mode


def test_writable_roots_variable_is_colon_separated_with_expansion(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    home = tmp_path / "home"
    (home / "b").mkdir(parents=True)
    env = {"STOCKADE_SANDBOX_WRITABLE_ROOTS": f"{tmp_path}/a::~/b:", "HOME": str(home)}
    settings = load(tmp_path, env=env)
    assert settings.sandbox.writable_roots == (tmp_path / "a", home / "b")


@pytest.mark.parametrize(
    ("word", "level"),
    [
        ("ask", "ask"),
        ("default", "ask"),
        ("conservative", "conservative"),
        ("balanced", "balanced"),
        ("auto-accept", "auto-accept"),
        ("auto_accept", "auto-accept"),
        ("auto", "auto-accept"),
        ("accept", "auto-accept"),
        ("YOLO", "yolo"),
    ],
)
def test_autonomy_levels_and_aliases(tmp_path: Path, word: str, level: str) -> None:
    assert load(tmp_path, env={"STOCKADE_AUTONOMY": word}).autonomy == level
    write_user(f'[permissions]\nautonomy = "{word}"\n')
    assert load(tmp_path).autonomy == level


# -- paths ----------------------------------------------------------------------------------


def test_path_expansion(tmp_path: Path) -> None:
    write_user(
        """\
        [sandbox]
        read_deny = ["~/.private", "${STOCKADE_TEST_DIR}/keys", "${PROJECT_ROOT}/.env", "/abs"]
        """
    )
    env = {"HOME": "/home/someone", "STOCKADE_TEST_DIR": "/srv/data"}
    settings = load(tmp_path, env=env)
    assert settings.sandbox.read_deny == (
        Path("/home/someone/.private"),
        Path("/srv/data/keys"),
        Path(os.path.realpath(tmp_path)) / ".env",
        Path("/abs"),
    )


def test_relative_writable_flags_are_taken_from_the_current_directory(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    settings = load(tmp_path, flags=FlagOverrides(writable=(Path("out"),)))
    assert settings.sandbox.writable_roots == (tmp_path / "out",)


# -- unions ---------------------------------------------------------------------------------


def test_security_lists_are_unions_a_project_cannot_empty_them(tmp_path: Path) -> None:
    write_user(
        """\
        [sandbox]
        read_deny = ["/srv/user-secret"]
        write_deny_within_allow = ["${PROJECT_ROOT}/vendor"]
        [network]
        denied_domains = ["evil.example"]
        [permissions]
        deny = ["bash:curl *"]
        ask = ["bash:git push*"]
        """
    )
    write_project(
        tmp_path,
        """\
        [sandbox]
        read_deny = []
        write_deny_within_allow = []
        [network]
        denied_domains = []
        [permissions]
        deny = []
        ask = []
        """,
    )
    write_local(
        tmp_path,
        """\
        [sandbox]
        read_deny = ["/srv/local-secret", "/srv/user-secret"]
        [permissions]
        deny = ["bash:rm *"]
        """,
    )
    settings = load(tmp_path)
    assert settings.sandbox.read_deny == (Path("/srv/user-secret"), Path("/srv/local-secret"))
    assert settings.origin("sandbox.read_deny", 0).layer == "user"  # first origin kept
    assert settings.sandbox.write_deny_within_allow == (Path(tmp_path) / "vendor",)
    assert settings.network.denied_domains == ("evil.example",)
    assert settings.permissions.deny == ("bash:curl *", "bash:rm *")
    assert settings.permissions.ask == ("bash:git push*",)
    assert settings.ignored == ()


# -- loosening ------------------------------------------------------------------------------

LOOSENING = [
    ("[sandbox]\nenabled = false\n", "sandbox.enabled"),
    ('[sandbox]\nbackend = "none"\n', "sandbox.backend"),
    ('[sandbox]\nbackend = "landlock"\n', "sandbox.backend"),
    ('[sandbox]\nnetwork = "allow"\n', "sandbox.network"),
    ('[sandbox]\nnetwork = "allowlist"\n', "sandbox.network"),
    ('[sandbox]\nwritable_roots = ["/var/tmp"]\n', "sandbox.writable_roots"),
    ('[sandbox]\nwrite_allow_extra = ["/var/tmp"]\n', "sandbox.write_allow_extra"),
    ('[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/.."]\n', "sandbox.writable_roots"),
    ('[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/.git/hooks"]\n', "sandbox.writable_roots"),
    ('[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/.stockade"]\n', "sandbox.writable_roots"),
    ('[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/link-out"]\n', "sandbox.writable_roots"),
    ('[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/vendor/x"]\n', "sandbox.writable_roots"),
    ('[sandbox]\nread_allow_within_deny = ["~/.ssh"]\n', "sandbox.read_allow_within_deny"),
    ('[sandbox]\nread_allow_within_deny = ["~/.ssh/config"]\n', "sandbox.read_allow_within_deny"),
    (
        '[sandbox]\nread_allow_within_deny = ["/srv/user-secret"]\n',
        "sandbox.read_allow_within_deny",
    ),
    ('[sandbox]\nenv_passthrough = ["GITHUB_TOKEN"]\n', "sandbox.env_passthrough"),
    ('[sandbox]\nenv_passthrough = ["SSH_AUTH_SOCK"]\n', "sandbox.env_passthrough"),
    # the default environment is an allow-list: any explicit pass-through widens it (a name
    # it withholds, or a listed name's credential-looking value)
    ('[sandbox]\nenv_passthrough = ["DATABASE_URL"]\n', "sandbox.env_passthrough"),
    ('[sandbox]\nenv_passthrough = ["HTTPS_PROXY"]\n', "sandbox.env_passthrough"),
    ("[sandbox]\nallow_unix_sockets = true\n", "sandbox.allow_unix_sockets"),
    ("[sandbox]\nroot_jail = true\n", "sandbox.root_jail"),
    ("[sandbox]\njail_uid = 1000\n", "sandbox.jail_uid"),
    ("[sandbox]\njail_gid = 1000\n", "sandbox.jail_gid"),
    ("[sandbox.limits]\npids_max = 4096\n", "sandbox.limits.pids_max"),
    ('[sandbox.limits]\noutput_spill_bytes = "none"\n', "sandbox.limits.output_spill_bytes"),
    ('[sandbox.limits]\nmemory_max_bytes = "none"\n', "sandbox.limits.memory_max_bytes"),
    ('[sandbox.limits]\nwall_timeout_s = "none"\n', "sandbox.limits.wall_timeout_s"),
    ('[network]\nallowed_domains = ["pypi.org"]\n', "network.allowed_domains"),
    (
        '[network]\nallowed_domains = [{ domain = "nas.lan", allow_private = true }]\n',
        "network.allowed_domains",
    ),
    ("[network]\nallow_private = true\n", "network.allow_private"),
    ('[permissions]\nautonomy = "auto-accept"\n', "permissions.autonomy"),
    ('[permissions]\nallow = ["bash:make *"]\n', "permissions.allow"),
    ('[risk]\nprograms = { make = "read-only" }\n', "risk.programs.make"),
    ('[risk]\nprograms = { newtool = "low" }\n', "risk.programs.newtool"),
]

USER_BASELINE = """\
[sandbox]
read_deny = ["/srv/user-secret"]
write_deny_within_allow = ["${PROJECT_ROOT}/vendor"]
[sandbox.limits]
pids_max = 512
memory_max_bytes = "1G"
wall_timeout_s = 600
[permissions]
autonomy = "balanced"
[risk]
programs = { make = "medium" }
"""


@pytest.fixture
def baseline_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "vendor" / "x").mkdir(parents=True)
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".stockade").mkdir()
    (project / "link-out").symlink_to("/var/tmp")
    write_user(USER_BASELINE)
    return project


@pytest.mark.parametrize(("text", "key"), LOOSENING)
@pytest.mark.parametrize("layer", ["project", "local"])
def test_loosening_from_an_untrusted_project_is_ignored_and_named(
    baseline_project: Path, text: str, key: str, layer: str
) -> None:
    writer = write_project if layer == "project" else write_local
    path = writer(baseline_project, text)
    user_only = load(baseline_project, trusted=False)  # the same files, nothing trusted
    assert ignored_keys(user_only) == [key]
    entry = user_only.ignored[0]
    assert entry.origin.layer == layer
    assert entry.origin.source == str(path)
    assert entry.origin.line == text.count("\n", 0, text.index(key.split(".")[-1])) + 1
    assert entry.reason and entry.value
    assert user_only.trust.needed and not user_only.trust.trusted
    trusted = load(baseline_project, trusted=True)
    assert trusted.ignored == ()
    assert trusted.trust.needed and trusted.trust.trusted
    assert trusted != user_only


def test_writable_roots_outside_the_project_are_ignored_untrusted(baseline_project: Path) -> None:
    write_project(baseline_project, '[sandbox]\nwritable_roots = ["/var/tmp"]\n')
    assert load(baseline_project).sandbox.writable_roots == ()
    assert load(baseline_project, trusted=True).sandbox.writable_roots == (Path("/var/tmp"),)


NOT_LOOSENING = [
    '[sandbox]\nenabled = true\nbackend = "bwrap"\nnetwork = "deny"\n',
    '[sandbox]\nwritable_roots = ["${PROJECT_ROOT}/build"]\n',
    '[sandbox]\nwrite_allow_extra = ["${PROJECT_ROOT}/build"]\n',
    '[sandbox]\nread_deny = ["${PROJECT_ROOT}/secrets"]\n'
    'read_allow_within_deny = ["${PROJECT_ROOT}/secrets/public"]\n',
    "[sandbox]\nallow_unix_sockets = false\n",
    "[sandbox.limits]\npids_max = 100\ncpu_seconds = 60\nwall_timeout_s = 30\n",
    '[network]\ndenied_domains = ["*.evil.example"]\nallow_private = false\n',
    '[permissions]\nautonomy = "conservative"\ndeny = ["bash:curl *"]\nask = ["bash:*"]\n',
    '[risk]\nprograms = { make = "high" }\n',
]


@pytest.mark.parametrize("text", NOT_LOOSENING)
def test_tightening_from_an_untrusted_project_applies(baseline_project: Path, text: str) -> None:
    (baseline_project / "build").mkdir()
    write_project(baseline_project, text)
    settings = load(baseline_project)
    assert settings.ignored == ()
    assert settings.trust.needed is False
    assert settings == load(baseline_project, trusted=True)


def test_autonomy_with_no_user_level_may_only_be_ask(tmp_path: Path) -> None:
    write_project(tmp_path, '[permissions]\nautonomy = "default"\n')
    assert load(tmp_path).autonomy == "ask"
    write_project(tmp_path, '[permissions]\nautonomy = "conservative"\n')
    settings = load(tmp_path)
    assert settings.autonomy is None
    assert ignored_keys(settings) == ["permissions.autonomy"]


def test_untrusted_risk_overrides_only_raise(baseline_project: Path) -> None:
    write_project(baseline_project, '[risk]\nprograms = { make = "high", ls = "low" }\n')
    risk = load(baseline_project).risk
    assert risk.programs == {"make": Tier.HIGH}  # raises the user's own override
    assert risk.floors == {"ls": Tier.LOW}
    assert risk.tier_for("ls", Tier.READ_ONLY) is Tier.LOW  # raised
    assert risk.tier_for("ls", Tier.DESTRUCTIVE) is Tier.DESTRUCTIVE  # never lowered
    trusted = load(baseline_project, trusted=True).risk
    assert trusted.tier_for("ls", Tier.DESTRUCTIVE) is Tier.LOW
    assert trusted.floors == {}


def test_limits_merge_to_the_tighter_value_untrusted(baseline_project: Path) -> None:
    write_project(baseline_project, "[sandbox.limits]\npids_max = 64\nopen_files = 100000\n")
    settings = load(baseline_project)
    limits = settings.limits()
    assert limits.pids_max == 64
    assert limits.open_files == 4096  # raising the default was ignored
    assert limits.memory_max_bytes == 1 << 30
    assert limits.wall_timeout_s == 600
    assert ignored_keys(settings) == ["sandbox.limits.open_files"]


# -- trust ----------------------------------------------------------------------------------


def test_trust_is_recorded_outside_the_project_and_any_change_asks_again(tmp_path: Path) -> None:
    write_user('[sandbox]\nnetwork = "deny"\n')
    write_project(tmp_path, '[sandbox]\nnetwork = "allow"\n')
    untrusted = load(tmp_path)
    assert untrusted.sandbox.network is NetworkMode.DENY
    assert untrusted.trust.digest and untrusted.trust.digest.startswith("sha256:")

    record_trust(tmp_path, untrusted.trust.digest, [str(e) for e in untrusted.ignored])
    assert store_path().is_file()
    assert not str(store_path()).startswith(str(tmp_path))
    assert list((tmp_path / ".stockade").iterdir()) == [tmp_path / ".stockade" / "settings.toml"]
    trusted = load(tmp_path)
    assert trusted.sandbox.network is NetworkMode.ALLOW
    assert trusted.trust.trusted and trusted.ignored == ()

    write_project(tmp_path, '[sandbox]\nnetwork = "allow"\n# a comment is a change too\n')
    changed = load(tmp_path)
    assert changed.sandbox.network is NetworkMode.DENY
    assert changed.trust.stale and not changed.trust.trusted

    write_project(tmp_path, '[sandbox]\nnetwork = "allow"\n')
    assert load(tmp_path).trust.trusted  # the trusted contents again
    write_local(tmp_path, "")  # a new (even empty) local layer changes the digest
    assert not load(tmp_path).trust.trusted


def test_revoke_forgets_the_record(tmp_path: Path) -> None:
    write_project(tmp_path, '[permissions]\nallow = ["bash:make *"]\n')
    digest = load(tmp_path).trust.digest
    assert digest is not None
    record_trust(tmp_path, digest, [])
    assert load(tmp_path).permissions.allow == ("bash:make *",)
    assert revoke_trust(tmp_path) is True
    assert find_record(tmp_path) is None
    assert load(tmp_path).permissions.allow == ()
    assert revoke_trust(tmp_path) is False


def test_trust_is_keyed_by_the_canonical_project_path(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    write_project(real, '[sandbox]\nnetwork = "allow"\n')
    digest = load(real).trust.digest
    assert digest is not None
    record_trust(tmp_path / "alias", digest, [])
    assert load(real).sandbox.network is NetworkMode.ALLOW


def test_a_corrupt_trust_store_means_untrusted(tmp_path: Path) -> None:
    write_project(tmp_path, '[sandbox]\nnetwork = "allow"\n')
    store_path().parent.mkdir(parents=True, exist_ok=True)
    store_path().write_text("{not json")
    assert load(tmp_path).sandbox.network is NetworkMode.DENY


def test_a_project_that_only_tightens_never_reads_the_trust_store(tmp_path: Path) -> None:
    write_project(tmp_path, '[sandbox]\nread_deny = ["/srv/x"]\n')
    store_path().parent.mkdir(parents=True, exist_ok=True)
    store_path().mkdir()  # reading it would fail loudly in strict mode; it is never read
    settings = load(tmp_path)
    assert settings.trust.needed is False


# -- what the rest of stockade consumes -----------------------------------------------------


def test_policy_request_carries_every_list(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()
    (tmp_path / "out").mkdir()
    write_user(
        """\
        [sandbox]
        network = "allow"
        allow_unix_sockets = true
        writable_roots = ["${PROJECT_ROOT}/build"]
        write_allow_extra = ["${PROJECT_ROOT}/out", "${PROJECT_ROOT}/build"]
        read_deny = ["/srv/secret"]
        read_allow_within_deny = ["/srv/secret/public"]
        write_deny_within_allow = ["${PROJECT_ROOT}/build/keep"]
        env_passthrough = ["MY_TOKEN"]
        """
    )
    settings = load(tmp_path)
    request = settings.policy_request(cwd=tmp_path)
    assert request.project == tmp_path
    assert request.cwd == tmp_path
    assert request.writable == (tmp_path / "build", tmp_path / "out")
    assert request.network is NetworkMode.ALLOW
    assert request.read_deny == (Path("/srv/secret"),)
    assert request.read_allow_within_deny == (Path("/srv/secret/public"),)
    assert request.write_deny_within_allow[0] == tmp_path / "build" / "keep"
    assert set(stockade_state_paths()) <= set(request.write_deny_within_allow)
    assert request.env_passthrough == ("MY_TOKEN",)
    assert request.allow_unix_sockets is True
    assert settings.counts_line() == "read-deny=1 allow-within=1 write-extra=2 deny-within=1"


def test_policy_request_refuses_another_project(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="loaded for"):
        load(tmp_path).policy_request(project=tmp_path / "elsewhere")


def test_limits_none_and_defaults(tmp_path: Path) -> None:
    write_user('[sandbox.limits]\nmemory_max_bytes = "512M"\ncpu_seconds = 30\npids_max = "none"\n')
    limits = load(tmp_path).limits()
    assert limits.memory_max_bytes == 512 << 20
    assert limits.cpu_seconds == 30
    assert limits.pids_max is None
    assert limits.wall_timeout_s is None  # the operator path has no default
    assert load(tmp_path).limits(wall_timeout_default=600).wall_timeout_s == 600


def test_domain_policy_is_built_from_the_lists_never_in_test_mode(tmp_path: Path) -> None:
    write_user(
        """\
        [network]
        allowed_domains = ["*.example.com", { domain = "nas.lan", allow_private = true }]
        denied_domains = ["bad.example.com"]
        """
    )
    policy = load(tmp_path).domain_policy()
    assert policy.test_mode is False
    assert policy.match("a.example.com", 443).allowed
    assert policy.match("bad.example.com", 443).source is DecisionSource.DENY_RULE
    assert policy.match("nas.lan", 80).allow_private
    assert not policy.match("a.example.com", 443).allow_private
    assert not policy.match("other.org", 443).allowed


def test_permission_entries_keep_their_origins(tmp_path: Path) -> None:
    user = write_user('[permissions]\nallow = [\n  "bash:ls*",\n  "bash:git status*",\n]\n')
    settings = load(tmp_path)
    assert settings.permissions.allow == ("bash:ls*", "bash:git status*")
    entries = settings.entries("permissions.allow")
    assert [(e.origin.source, e.origin.line) for e in entries] == [(str(user), 3), (str(user), 4)]


def test_show_renders_valid_toml_with_origins(tmp_path: Path) -> None:
    from stockade.cli.config import render_toml

    write_user(
        """\
        [sandbox]
        read_deny = ["/srv/a b", "/srv/\\"q\\""]
        [sandbox.limits]
        pids_max = "none"
        memory_max_bytes = "1G"
        [network]
        allowed_domains = [{ domain = "nas.lan", allow_private = true }]
        [risk]
        programs = { "g++" = "low" }
        """
    )
    write_project(tmp_path, '[sandbox]\nnetwork = "allow"\n')
    settings = load(tmp_path)
    for origins in (False, True):
        text = render_toml(settings, origins=origins)
        parsed = tomllib.loads(text)
        assert parsed["sandbox"]["read_deny"] == ["/srv/a b", '/srv/"q"']
        assert parsed["sandbox"]["limits"] == {"pids_max": "none", "memory_max_bytes": 1 << 30}
        assert parsed["risk"]["programs"] == {"g++": "low"}
        assert parsed["network"]["allowed_domains"] == [
            {"domain": "nas.lan", "allow_private": True}
        ]
        assert "autonomy" not in parsed["permissions"]
        assert "# ignored (untrusted workspace" in text
    assert "# user (" in render_toml(settings, origins=True)
