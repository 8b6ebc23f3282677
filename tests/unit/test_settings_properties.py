"""Property: no combination of project and local layers makes the policy weaker than the user's
own layer alone - unless the user trusted the workspace.

"Weaker" is defined concretely, per dimension, by ``weakenings`` below:

* files: a probe path that is writable on the host, or readable where it was masked, according
  to the real bwrap mount plan (``mount_arguments`` of the resolved policy: the last mount
  covering a path decides) - an oracle independent of the settings code;
* fewer entries in any tightening list (read_deny, write_deny_within_allow, denied_domains,
  deny and ask rules);
* a weaker backend (none < landlock < auto/bwrap) or the sandbox switched off;
* more network (deny < allowlist < allow), more allowed or private domains, allow_private,
  allow_unix_sockets;
* a secret-looking variable passed through that the user did not pass;
* a higher autonomy level, an allow rule the user did not write;
* a looser resource limit (higher, or none);
* a lower risk tier for any program, whatever the classifier's built-in tier.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stockade.errors import UsageError
from stockade.sandbox.bwrap import mount_arguments
from stockade.sandbox.environment import is_secret_name
from stockade.sandbox.policy import SandboxPolicy, resolve_policy
from stockade.settings import BACKEND_STRENGTH, NETWORK_WIDTH, Settings, project_files
from stockade.settings_layers import AUTONOMY_LEVELS
from stockade.tiers import Tier
from tests.settings_support import write, write_user

# Paths are written as the settings files would write them; {pool} and {home} are filled in.
MASKS = [
    "{pool}/a",
    "{pool}/b/c",
    "${{PROJECT_ROOT}}/secret",
    "${{PROJECT_ROOT}}/vendor",
    "~/.ssh",
    "{home}/.aws",
]
ALLOW_WITHIN = [
    "~/.ssh",
    "~/.ssh/config",
    "{pool}/a/sub",
    "{pool}",
    "${{PROJECT_ROOT}}/secret/pub",
    "${{PROJECT_ROOT}}/build",
]
WRITABLE = [
    "${{PROJECT_ROOT}}/build",
    "${{PROJECT_ROOT}}/vendor/x",
    "${{PROJECT_ROOT}}/.git/hooks/sub",
    "${{PROJECT_ROOT}}/.stockade",
    "${{PROJECT_ROOT}}/link-out",
    "${{PROJECT_ROOT}}/..",
    "{pool}/w1",
    "{pool}/w2",
]
DENY_WITHIN = ["${{PROJECT_ROOT}}/vendor", "${{PROJECT_ROOT}}/build/keep", "{pool}/w1/keep"]
ENV_NAMES = ["LANG", "RUST_LOG", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK"]
DOMAINS: list[Any] = [
    "pypi.org",
    "*.example.com",
    {"domain": "nas.lan", "allow_private": True},
    {"domain": "pypi.org", "allow_private": True},
]
DENIED = ["evil.com", "*.bad.org"]
RULES = ["bash:make *", "bash:rm *", "bash:git push*"]
PROGRAMS = ["make", "ls", "newtool"]
TIER_LABELS = [tier.label for tier in Tier]
LIMIT_VALUES: dict[str, list[Any]] = {
    "pids_max": ["none", 16, 512, 4096],
    "memory_max_bytes": ["none", "64M", "4G"],
    "wall_timeout_s": ["none", 5, 600],
}

# Files under these (relative to the fixture's root) are probed for writes and reads.
WRITE_PROBES = [
    "project/f",
    "project/build/f",
    "project/build/keep/f",
    "project/vendor/f",
    "project/vendor/x/f",
    "project/.git/hooks/f",
    "project/.git/hooks/sub/f",
    "project/.stockade/f",
    "outside/f",
    "pool/w1/f",
    "pool/w1/keep/f",
    "pool/w2/f",
    "f",
]
READ_PROBES = [
    "home/.ssh/id",
    "home/.ssh/config/f",
    "home/.aws/credentials",
    "pool/a/f",
    "pool/a/sub/f",
    "pool/b/c/f",
    "project/secret/f",
    "project/secret/pub/f",
    "project/vendor/x/f",
]


def _paths(pool: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), max_size=3)


LAYER = st.fixed_dictionaries(
    {},
    optional={
        "sandbox.enabled": st.booleans(),
        "sandbox.backend": st.sampled_from(sorted(BACKEND_STRENGTH)),
        "sandbox.network": st.sampled_from(["deny", "allow", "allowlist"]),
        "sandbox.writable_roots": _paths(WRITABLE),
        "sandbox.write_allow_extra": _paths(WRITABLE),
        "sandbox.read_deny": _paths(MASKS),
        "sandbox.read_allow_within_deny": _paths(ALLOW_WITHIN),
        "sandbox.write_deny_within_allow": _paths(DENY_WITHIN),
        "sandbox.env_passthrough": _paths(ENV_NAMES),
        "sandbox.allow_unix_sockets": st.booleans(),
        **{
            f"sandbox.limits.{name}": st.sampled_from(values)
            for name, values in LIMIT_VALUES.items()
        },
        "network.allowed_domains": st.lists(st.sampled_from(DOMAINS), max_size=2),
        "network.denied_domains": _paths(DENIED),
        "network.allow_private": st.booleans(),
        "permissions.autonomy": st.sampled_from([*AUTONOMY_LEVELS, "default", "auto"]),
        "permissions.allow": _paths(RULES),
        "permissions.deny": _paths(RULES),
        "permissions.ask": _paths(RULES),
        **{f"risk.programs.{p}": st.sampled_from(TIER_LABELS) for p in PROGRAMS},
    },
)


def to_toml(layer: dict[str, Any], root: Path) -> str:
    """A layer dict as the text of a settings file."""
    tables: dict[str, list[str]] = {}
    for key, value in layer.items():
        table, _, name = key.rpartition(".")
        tables.setdefault(table, []).append(f"{name} = {_toml(value, root)}")
    return "".join(f"[{t}]\n" + "\n".join(lines) + "\n" for t, lines in tables.items())


def _toml(value: Any, root: Path) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v, root) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v, root)}" for k, v in value.items()) + " }"
    text = value.format(pool=root / "pool", home=root / "home")
    return json.dumps(text)


# -- the oracle -----------------------------------------------------------------------------


def mount_states(policy: SandboxPolicy, probes: list[Path]) -> dict[Path, str]:
    """What the bwrap mount plan gives each probe: the last mount covering it decides."""
    args = mount_arguments(policy)
    state = dict.fromkeys(probes, "read-only")
    index = 0
    while index < len(args):
        op = args[index]
        if op in ("--bind", "--ro-bind"):
            source, target = args[index + 1], args[index + 2]
            index += 3
            if op == "--bind":
                kind = "writable"
            else:
                kind = "hidden" if source == "/dev/null" else "read-only"
        elif op in ("--tmpfs", "--dev", "--proc"):
            target = args[index + 1]
            index += 2
            kind = "hidden"
        elif op == "--remount-ro":
            index += 2
            continue
        else:
            raise AssertionError(f"unexpected mount op {op}")
        for probe in probes:
            if probe == Path(target) or Path(target) in probe.parents:
                state[probe] = kind
    return state


def resolved(settings: Settings, root: Path) -> SandboxPolicy | None:
    try:
        return resolve_policy(
            settings.policy_request(cwd=settings.project),
            session_tmp=root / "session",
            host_env={"HOME": str(root / "home"), "PATH": "/usr/bin"},
        )
    except UsageError:
        return None  # refused to run: never weaker


def weakenings(user: Settings, merged: Settings, root: Path) -> list[str]:
    found: list[str] = []
    us, ms = user.sandbox, merged.sandbox
    tightening = [
        ("read_deny", us.read_deny, ms.read_deny),
        ("write_deny_within_allow", us.write_deny_within_allow, ms.write_deny_within_allow),
        ("denied_domains", user.network.denied_domains, merged.network.denied_domains),
        ("deny rules", user.permissions.deny, merged.permissions.deny),
        ("ask rules", user.permissions.ask, merged.permissions.ask),
    ]
    found += [f"fewer {name}" for name, mine, theirs in tightening if not set(mine) <= set(theirs)]
    if BACKEND_STRENGTH[merged.backend] < BACKEND_STRENGTH[user.backend]:
        found.append(f"weaker backend {merged.backend} < {user.backend}")
    if merged.backend != "none" and NETWORK_WIDTH[ms.network] > NETWORK_WIDTH[us.network]:
        found.append(f"more network {ms.network} > {us.network}")
    for name in ("allowed_domains", "private_domains"):
        extra = set(getattr(merged.network, name)) - set(getattr(user.network, name))
        if extra:
            found.append(f"more {name}: {extra}")
    if merged.network.allow_private and not user.network.allow_private:
        found.append("allow_private")
    if ms.allow_unix_sockets and not us.allow_unix_sockets:
        found.append("allow_unix_sockets")
    secrets = {n for n in ms.env_passthrough if is_secret_name(n)} - set(us.env_passthrough)
    if secrets:
        found.append(f"secret variables passed: {secrets}")
    rank = {None: 0, **{level: i for i, level in enumerate(AUTONOMY_LEVELS)}}
    if rank[merged.autonomy] > rank[user.autonomy]:
        found.append(f"autonomy {merged.autonomy} > {user.autonomy}")
    if set(merged.permissions.allow) - set(user.permissions.allow):
        found.append("more allow rules")
    mine, theirs = user.limits(), merged.limits()
    for name in LIMIT_VALUES:
        a, b = getattr(mine, name), getattr(theirs, name)
        if a is not None and (b is None or b > a):
            found.append(f"looser limit {name}: {b} > {a}")
    for program in PROGRAMS:
        for builtin in Tier:
            if merged.risk.tier_for(program, builtin) < user.risk.tier_for(program, builtin):
                found.append(f"lower tier for {program} (built-in {builtin})")
                break
    user_policy, merged_policy = resolved(user, root), resolved(merged, root)
    if user_policy is not None and merged_policy is not None and merged.backend != "none":
        probes = [root / p for p in WRITE_PROBES + READ_PROBES]
        before, after = mount_states(user_policy, probes), mount_states(merged_policy, probes)
        for probe in probes:
            if after[probe] == "writable" and before[probe] != "writable":
                found.append(f"{probe} became writable")
            if before[probe] == "hidden" and after[probe] != "hidden":
                found.append(f"{probe} became readable")
    return found


# -- fixture and properties -----------------------------------------------------------------


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project with every directory the pools name, outside /tmp (the jail's private /tmp
    would hide paths under it for the wrong reason)."""
    root = Path(os.path.realpath(tempfile.mkdtemp(prefix="stockade-prop-", dir="/var/tmp")))
    for relative in [
        "project/build/keep",
        "project/vendor/x",
        "project/.git/hooks/sub",
        "project/.stockade",
        "project/secret/pub",
        "pool/a/sub",
        "pool/b/c",
        "pool/w1/keep",
        "pool/w2",
        "home/.ssh/config",
        "home/.aws",
        "outside",
        "session",
    ]:
        (root / relative).mkdir(parents=True, exist_ok=True)
    (root / "project" / "link-out").symlink_to(root / "outside")
    monkeypatch.setenv("HOME", str(root / "home"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def load_layers(
    root: Path,
    user: dict[str, Any],
    project: dict[str, Any] | None,
    local: dict[str, Any] | None,
    *,
    trusted: bool,
) -> tuple[Settings, Settings]:
    """(user layer alone, all layers merged) for the same project."""
    work = root / "project"
    write_user(to_toml(user, root))
    project_file, local_file = project_files(work)
    project_file.unlink(missing_ok=True)
    local_file.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKADE_")}
    alone = Settings.load(work, env=env, cwd=work)
    if project is not None:
        write(project_file, to_toml(project, root))
    if local is not None:
        write(local_file, to_toml(local, root))
    merged = Settings.load(work, env=env, cwd=work, trusted=trusted)
    return alone, merged


@given(user=LAYER, project=st.none() | LAYER, local=st.none() | LAYER)
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_untrusted_project_layers_never_weaken_the_user_policy(
    world: Path,
    user: dict[str, Any],
    project: dict[str, Any] | None,
    local: dict[str, Any] | None,
) -> None:
    alone, merged = load_layers(world, user, project, local, trusted=False)
    assert weakenings(alone, merged, world) == []


@given(user=LAYER, project=LAYER)
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_user_layer_merged_with_itself_is_not_weaker(
    world: Path, user: dict[str, Any], project: dict[str, Any]
) -> None:
    """The oracle itself: identical policies are never reported weaker."""
    alone, _ = load_layers(world, user, None, None, trusted=False)
    assert weakenings(alone, alone, world) == []


ORACLE_SEES = [
    {"sandbox.enabled": False},
    {"sandbox.backend": "landlock"},
    {"sandbox.network": "allow"},
    {"sandbox.writable_roots": ["{pool}/w1"]},
    {"sandbox.write_allow_extra": ["${{PROJECT_ROOT}}/link-out"]},
    {"sandbox.writable_roots": ["${{PROJECT_ROOT}}/.git/hooks/sub"]},
    {"sandbox.writable_roots": ["${{PROJECT_ROOT}}/vendor/x"]},
    {"sandbox.read_allow_within_deny": ["~/.ssh"]},
    {"sandbox.read_allow_within_deny": ["{pool}/a/sub"]},
    {"sandbox.env_passthrough": ["GITHUB_TOKEN"]},
    {"sandbox.allow_unix_sockets": True},
    {"sandbox.limits.pids_max": 4096},
    {"network.allowed_domains": ["pypi.org"]},
    {"network.allow_private": True},
    {"permissions.autonomy": "yolo"},
    {"permissions.allow": ["bash:rm *"]},
    {"risk.programs.newtool": "low"},
]


@pytest.mark.parametrize("project", ORACLE_SEES, ids=lambda d: next(iter(d)))
def test_trusting_lets_each_loosening_through_and_the_oracle_sees_it(
    world: Path, project: dict[str, Any]
) -> None:
    """So the property above can fail: trusted, every one of these IS weaker."""
    user = {
        "sandbox.read_deny": ["{pool}/a"],
        "sandbox.write_deny_within_allow": ["${{PROJECT_ROOT}}/vendor"],
        "sandbox.limits.pids_max": 512,
        "permissions.autonomy": "balanced",
    }
    alone, untrusted = load_layers(world, user, project, None, trusted=False)
    assert weakenings(alone, untrusted, world) == []
    assert untrusted.ignored
    alone, trusted = load_layers(world, user, project, None, trusted=True)
    assert weakenings(alone, trusted, world) != []
