"""Settings: the one model every part of stockade reads, merged from layered sources.

Layers, weakest first: the user file (``<config dir>/settings.toml``, or ``STOCKADE_CONFIG`` /
``--config``), the project file (``<project>/.stockade/settings.toml``), the local file
(``<project>/.stockade/settings.local.toml``), the environment (``STOCKADE_*``), then the
command-line flags. Reading and checking one layer is ``stockade.settings_layers``; this module
merges them and decides what a repository may change on its own.

**Layers only tighten.** Security lists are unions: a project can add masks, write-denies,
deny/ask rules and denied domains, but never remove the user's. A project or local value that
would *loosen* confinement compared with what the layers before it give (the rules are the
tables below) takes effect only in a workspace the user has trusted (``stockade trust``,
recorded in the user's data dir against a digest of both project files); otherwise it is
ignored and listed by name in ``Settings.ignored``. The environment and the flags are the
operator speaking: they override.

A broken layer (syntax, unknown key, wrong type, bad path) stops stockade with the error:
running with a weaker policy than the user wrote is never the fallback.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from stockade.errors import ConfigError, UsageError
from stockade.net.mode import NetworkMode
from stockade.sandbox.environment import passthrough_loosening
from stockade.sandbox.identity import DEFAULT_JAIL_GID, DEFAULT_JAIL_UID, JailUser
from stockade.sandbox.policy import PROTECTED_NAMES, PolicyRequest, canonical, default_read_deny
from stockade.settings_layers import (
    DEFAULT_ORIGIN,
    ENV_CONFIG,
    LAYER_ORDER,
    DomainEntry,
    FlagOverrides,
    Layer,
    Origin,
    Problem,
    Value,
    read_environment,
    read_file_layer,
    read_flags,
)
from stockade.tiers import Tier
from stockade.vocabulary import AUTONOMY_LEVELS

if TYPE_CHECKING:  # pragma: no cover
    from stockade.net.domains import DomainPolicy
    from stockade.sandbox.limits import Limits

__all__ = [
    "FlagOverrides",
    "IgnoredEntry",
    "LayerInfo",
    "NetworkSettings",
    "Origin",
    "PermissionSettings",
    "Problem",
    "RiskSettings",
    "SandboxSettings",
    "Settings",
    "TrustStatus",
    "Value",
    "load_settings",
    "project_files",
    "user_file",
    "validate_settings",
]

# ---------------------------------------------------------------------------------------------
# Security tables: what a project or local layer may only do in a trusted workspace
# ---------------------------------------------------------------------------------------------

PROJECT_SETTINGS = Path(".stockade") / "settings.toml"
LOCAL_SETTINGS = Path(".stockade") / "settings.local.toml"

# Layers written by the repository (untrusted until the user says otherwise) and by the operator.
GATED_LAYERS = frozenset({"project", "local"})
OPERATOR_LAYERS = frozenset({"user", "env", "flag"})

# How much a backend confines; a project may not pick a weaker one.
BACKEND_STRENGTH: dict[str, int] = {"none": 0, "landlock": 1, "auto": 2, "bwrap": 2, "seatbelt": 2}
# How much network a mode gives; a project may not widen it.
NETWORK_WIDTH: dict[NetworkMode, int] = {
    NetworkMode.DENY: 0,
    NetworkMode.ALLOWLIST: 1,
    NetworkMode.ALLOW: 2,
}

# Lists that only ever tighten: every layer's entries are kept.
TIGHTENING_LISTS: tuple[str, ...] = (
    "sandbox.toolchains",  # not security: jail-owned caches, per project (any layer may add)
    "sandbox.read_deny",
    "sandbox.write_deny_within_allow",
    "network.denied_domains",
    "permissions.deny",
    "permissions.ask",
)
# Lists whose entries may loosen; the rule for each is in LIST_LOOSENING below.
GATED_LISTS: tuple[str, ...] = (
    "sandbox.writable_roots",
    "sandbox.write_allow_extra",
    "sandbox.read_allow_within_deny",
    "sandbox.env_passthrough",
    "network.allowed_domains",
    "permissions.allow",
)
LIST_KEYS: tuple[str, ...] = TIGHTENING_LISTS + GATED_LISTS

SCALAR_DEFAULTS: dict[str, Any] = {
    "sandbox.enabled": True,
    "sandbox.backend": "auto",
    "sandbox.network": NetworkMode.DENY,
    "sandbox.allow_unix_sockets": False,
    "sandbox.root_jail": False,
    "sandbox.warm": True,
    "sandbox.jail_uid": DEFAULT_JAIL_UID,
    "sandbox.jail_gid": DEFAULT_JAIL_GID,
    "sandbox.allow_writable_home": False,
    "network.allow_private": False,
    "permissions.autonomy": None,  # not configured: the permissions engine's own default
}


def _limit_defaults() -> dict[str, int | float | None]:
    """What a project's limit is compared with when no layer before it set one: the library
    defaults (including the 600 s wall-clock limit of the agent path - the operator path runs
    without one unless a layer sets it, so comparing with 600 s is the stricter choice)."""
    from stockade.sandbox.limits import Limits

    return dict(Limits()._asdict())


def _rank_autonomy(level: str | None) -> int:
    """Unset autonomy ranks as the lowest level: a project raising it from "whatever the
    engine defaults to" could reach past what a headless run would allow."""
    return AUTONOMY_LEVELS.index(level) if level is not None else 0


def _looser_limit(new: int | float | None, current: int | float | None) -> bool:
    """None is unlimited; a bigger number allows more."""
    if current is None:
        return False
    return new is None or new > current


# Scalar rules: (new value, value so far) -> why the new value loosens, or None.
SCALAR_LOOSENING: dict[str, Callable[[Any, Any], str | None]] = {
    "sandbox.enabled": lambda new, cur: "turns the sandbox off" if cur and not new else None,
    "sandbox.backend": lambda new, cur: (
        f"a weaker backend than {cur!r}" if BACKEND_STRENGTH[new] < BACKEND_STRENGTH[cur] else None
    ),
    "sandbox.network": lambda new, cur: (
        f"more network than {cur.value!r}" if NETWORK_WIDTH[new] > NETWORK_WIDTH[cur] else None
    ),
    "sandbox.allow_unix_sockets": lambda new, cur: (
        "lets the jail create unix sockets" if new and not cur else None
    ),
    "sandbox.root_jail": lambda new, cur: (
        "runs commands as host root when stockade runs as root" if new and not cur else None
    ),
    # a warm jail keeps every guarantee of a fresh one (sandbox/warm.py): either way is fine
    "sandbox.warm": lambda new, cur: None,
    "sandbox.jail_uid": lambda new, cur: (
        "changes the host uid a root launcher's commands run as" if new != cur else None
    ),
    "sandbox.jail_gid": lambda new, cur: (
        "changes the host gid a root launcher's commands run as" if new != cur else None
    ),
    "sandbox.allow_writable_home": lambda new, cur: (
        "lets the home directory (or a parent) be a writable root" if new and not cur else None
    ),
    "network.allow_private": lambda new, cur: (
        "lets allowed names reach private and loopback addresses" if new and not cur else None
    ),
    "permissions.autonomy": lambda new, cur: (
        f"more autonomy than {cur or AUTONOMY_LEVELS[0]!r}"
        if _rank_autonomy(new) > _rank_autonomy(cur)
        else None
    ),
}


class _Baseline(NamedTuple):
    """What the user's own layers protect, canonical: a project entry reaching into any of it
    loosens the user's policy."""

    project: Path
    masks: tuple[Path, ...]
    write_denied: tuple[Path, ...]


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _writable_loosens(path: Path, base: _Baseline) -> str | None:
    real = canonical(path)
    if not _within(real, base.project):
        return "a writable path outside the project"
    protected = [base.project / name for name in PROTECTED_NAMES]
    for guarded in (*protected, *base.write_denied):
        if _within(real, guarded):
            return f"makes the read-only path {guarded} writable"
    for mask in base.masks:
        if _within(real, mask):
            return f"a writable path inside the masked path {mask}"
    return None


def _unmask_loosens(path: Path, base: _Baseline) -> str | None:
    real = canonical(path)
    for mask in base.masks:
        if _within(real, mask) or _within(mask, real):
            return f"re-exposes the masked path {mask}"
    return None


# List rules: (entry, the user's protections) -> why the entry loosens, or None.
LIST_LOOSENING: dict[str, Callable[[Any, _Baseline], str | None]] = {
    "sandbox.writable_roots": _writable_loosens,
    "sandbox.write_allow_extra": _writable_loosens,
    "sandbox.read_allow_within_deny": _unmask_loosens,
    "sandbox.env_passthrough": lambda name, _: passthrough_loosening(name),
    "network.allowed_domains": lambda entry, _: (
        "allows a network destination (reaching private addresses)"
        if entry.allow_private
        else "allows a network destination"
    ),
    "permissions.allow": lambda rule, _: "an allow rule",
}

# Risk overrides from an untrusted project can only raise a program's tier: one that is lower
# than the user's own override is ignored; one for a program the user did not override becomes
# a floor (the classifier's tier, raised to at least this).


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------


class SandboxSettings(NamedTuple):
    enabled: bool = True
    backend: str = "auto"
    network: NetworkMode = NetworkMode.DENY
    writable_roots: tuple[Path, ...] = ()
    read_deny: tuple[Path, ...] = ()
    read_allow_within_deny: tuple[Path, ...] = ()
    write_allow_extra: tuple[Path, ...] = ()
    write_deny_within_allow: tuple[Path, ...] = ()
    env_passthrough: tuple[str, ...] = ()
    allow_unix_sockets: bool = False
    root_jail: bool = False  # a root launcher's commands may run as host root (weaker)
    warm: bool = True  # a long-lived jail per policy for sessions (STOCKADE_WARM overrides)
    jail_uid: int = DEFAULT_JAIL_UID  # ... otherwise they run as this host uid/gid
    jail_gid: int = DEFAULT_JAIL_GID
    allow_writable_home: bool = False
    toolchains: tuple[str, ...] = ()
    # Only the limits some layer set (parsed: bytes, seconds; None = unlimited).
    limits: Mapping[str, int | float | None] = MappingProxyType({})


class NetworkSettings(NamedTuple):
    allowed_domains: tuple[str, ...] = ()
    private_domains: tuple[str, ...] = ()  # allowed, and may resolve to private addresses
    denied_domains: tuple[str, ...] = ()
    allow_private: bool = False


class PermissionSettings(NamedTuple):
    """For the permissions engine: ``autonomy`` is a canonical level (see AUTONOMY_LEVELS) or
    None when no layer set one; the rule lists are strings in the engine's own syntax."""

    autonomy: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


class RiskSettings(NamedTuple):
    """Per-program tier overrides for the classifier. ``programs`` replace the built-in tier;
    ``floors`` (from an untrusted project) can only raise it. Use ``tier_for``."""

    programs: Mapping[str, Tier] = MappingProxyType({})
    floors: Mapping[str, Tier] = MappingProxyType({})

    def tier_for(self, program: str, builtin: Tier) -> Tier:
        tier = self.programs.get(program, builtin)
        floor = self.floors.get(program)
        return max(tier, floor) if floor is not None else tier


class LayerInfo(NamedTuple):
    name: str
    source: str | None
    loaded: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "loaded": self.loaded}


class IgnoredEntry(NamedTuple):
    """A loosening value from an untrusted project layer that was not applied."""

    key: str
    value: str
    origin: Origin
    reason: str

    def __str__(self) -> str:
        return f"{self.key} = {self.value} from {self.origin}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "origin": self.origin.to_dict(),
            "reason": self.reason,
        }


class TrustStatus(NamedTuple):
    """``needed``: the project layers hold loosening entries; ``trusted``: the user recorded
    trust for exactly these contents; ``stale``: a record exists, for other contents."""

    needed: bool = False
    trusted: bool = False
    stale: bool = False
    digest: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "needed": self.needed,
            "trusted": self.trusted,
            "stale": self.stale,
            "digest": self.digest,
        }


class Settings(NamedTuple):
    """The merged settings for one project. Build with ``Settings.load``."""

    project: Path
    sandbox: SandboxSettings = SandboxSettings()
    network: NetworkSettings = NetworkSettings()
    permissions: PermissionSettings = PermissionSettings()
    risk: RiskSettings = RiskSettings()
    layers: tuple[LayerInfo, ...] = ()
    ignored: tuple[IgnoredEntry, ...] = ()
    trust: TrustStatus = TrustStatus()
    values: Mapping[str, Value[Any]] = MappingProxyType({})
    lists: Mapping[str, tuple[Value[Any], ...]] = MappingProxyType({})
    user_file: Path | None = None

    # -- building --------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        project: str | os.PathLike[str] | None = None,
        *,
        cwd: Path | None = None,
        flags: FlagOverrides | None = None,
        env: Mapping[str, str] | None = None,
        trusted: bool | None = None,
    ) -> Settings:
        """Read every layer for ``project`` (default: the current directory) and merge them.
        ``trusted`` overrides the trust store (None: look it up). Raises ConfigError (exit 2)
        naming the first problem when any layer is invalid."""
        return load_settings(project, cwd=cwd, flags=flags, env=env, trusted=trusted)

    # -- what the rest of stockade consumes ------------------------------------------------

    @property
    def backend(self) -> str:
        """The backend name for ``select_backend``: ``none`` when the sandbox is off."""
        return self.sandbox.backend if self.sandbox.enabled else "none"

    @property
    def autonomy(self) -> str | None:
        return self.permissions.autonomy

    def policy_request(
        self, project: str | os.PathLike[str] | None = None, cwd: Path | None = None
    ) -> PolicyRequest:
        """The sandbox request these settings describe. stockade's own settings and state
        directories are added to write_deny_within_allow, so a jail whose writable roots
        include them (a project at ``~``, say) still cannot rewrite its own configuration."""
        if project is not None and canonical(Path(project)) != canonical(self.project):
            raise UsageError(
                f"these settings were loaded for {self.project}, not {project}",
                fix="load Settings for the project you run in",
            )
        sandbox = self.sandbox
        return PolicyRequest(
            project=self.project,
            cwd=cwd,
            writable=_unique_paths([*sandbox.writable_roots, *sandbox.write_allow_extra]),
            network=sandbox.network,
            read_deny=sandbox.read_deny,
            read_allow_within_deny=sandbox.read_allow_within_deny,
            write_deny_within_allow=_unique_paths(
                [*sandbox.write_deny_within_allow, *stockade_state_paths(self.user_file)]
            ),
            env_passthrough=sandbox.env_passthrough,
            allow_unix_sockets=sandbox.allow_unix_sockets,
            root_jail=sandbox.root_jail,
            jail_user=JailUser(sandbox.jail_uid, sandbox.jail_gid),
            toolchains=sandbox.toolchains,
            allow_writable_home=sandbox.allow_writable_home,
        )

    def limits(self, *, wall_timeout_default: float | None = None) -> Limits:
        """Resource limits: the configured ones over ``Limits`` defaults. The wall-clock limit
        is ``wall_timeout_default`` unless a layer sets it (the operator path passes None)."""
        from stockade.sandbox.limits import Limits

        table: dict[str, object] = {"wall_timeout_s": wall_timeout_default}
        table.update(self.sandbox.limits)
        return Limits.from_settings(table, where="[sandbox.limits]")

    def domain_policy(self) -> DomainPolicy:
        """The allow-list proxy's policy. Never in test mode: settings cannot reach the
        test-only resolver override."""
        from stockade.net.domains import DomainPolicy

        network = self.network
        return DomainPolicy.from_lists(
            network.allowed_domains,
            network.denied_domains,
            allow_private=network.allow_private,
            private_domains=network.private_domains,
            test_mode=False,
        )

    # -- explaining ------------------------------------------------------------------------

    def origin(self, key: str, index: int | None = None) -> Origin:
        """Where ``key`` (dotted, e.g. ``sandbox.network``) got its value; for a list, where
        entry ``index`` came from."""
        if index is not None:
            return self.lists[key][index].origin
        value = self.values.get(key)
        return value.origin if value is not None else DEFAULT_ORIGIN

    def entries(self, key: str) -> tuple[Value[Any], ...]:
        """A list setting's entries with their origins (e.g. ``permissions.allow``)."""
        return self.lists.get(key, ())

    def list_counts(self) -> dict[str, int]:
        """Merged list sizes, as ``doctor`` and ``status`` print them."""
        sandbox = self.sandbox
        return {
            "read-deny": len(sandbox.read_deny),
            "allow-within": len(sandbox.read_allow_within_deny),
            "write-extra": len({*sandbox.writable_roots, *sandbox.write_allow_extra}),
            "deny-within": len(sandbox.write_deny_within_allow),
        }

    def counts_line(self) -> str:
        """``read-deny=3 allow-within=1 write-extra=2 deny-within=1``."""
        return " ".join(f"{name}={count}" for name, count in self.list_counts().items())

    def loaded_layers(self) -> list[str]:
        return [layer.name for layer in self.layers if layer.loaded]

    def summary(self) -> dict[str, Any]:
        """For ``status --json`` / ``doctor``: layers, trust, ignored entries, counts."""
        return {
            "valid": True,
            "layers": [layer.to_dict() for layer in self.layers],
            "loaded": self.loaded_layers(),
            "trust": self.trust.to_dict(),
            "ignored": [entry.to_dict() for entry in self.ignored],
            "counts": self.list_counts(),
            "counts_line": self.counts_line(),
        }

    def to_dict(self, *, origins: bool = False) -> dict[str, Any]:
        """The merged settings as plain data, optionally with each value's origin."""
        out: dict[str, Any] = {}
        for key in sorted({*self.values, *self.lists}):
            section, _, name = key.partition(".")
            target = out.setdefault(section, {})
            parts = name.split(".")
            for part in parts[:-1]:
                target = target.setdefault(part, {})
            if key in self.lists:
                items = self.lists[key]
                target[parts[-1]] = [_entry_dict(item, origins) for item in items]
            else:
                target[parts[-1]] = _entry_dict(self.values[key], origins)
        return out


def _entry_dict(item: Value[Any], origins: bool) -> Any:
    value = plain_value(item.value)
    if not origins:
        return value
    return {"value": value, "origin": item.origin.to_dict()}


def plain_value(value: Any) -> Any:
    """A settings value as JSON/TOML-friendly data."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, Tier):
        return value.label
    if isinstance(value, NetworkMode):
        return value.value
    if isinstance(value, DomainEntry):
        if value.allow_private:
            return {"domain": value.pattern, "allow_private": True}
        return value.pattern
    return value


def _display(value: Any) -> str:
    plain = plain_value(value)
    if isinstance(plain, dict):
        return f"{plain['domain']} (allow_private)"
    if isinstance(plain, bool):
        return "true" if plain else "false"
    if plain is None:
        return "none"
    return str(plain)


def _unique_paths(paths: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))


def stockade_state_paths(user_file: Path | None = None) -> list[Path]:
    """stockade's own config and data directories (settings, trust records, rules) and the
    user settings file: never writable from inside a jail, even when a writable root contains
    them."""
    from stockade.userdirs import state_paths

    paths = state_paths()
    if user_file is not None and not _within(canonical(user_file), canonical(paths[0])):
        paths.append(user_file)
    return paths


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def user_file(
    env: Mapping[str, str], flags: FlagOverrides | None = None, *, cwd: Path | None = None
) -> tuple[Path, bool]:
    """The user layer's file and whether it was named explicitly (then it must exist)."""
    base = cwd or Path.cwd()
    if flags is not None and flags.config is not None:
        return base / os.path.expanduser(flags.config), True
    named = env.get(ENV_CONFIG)
    if named:
        return base / os.path.expanduser(named), True
    from stockade.userdirs import config_dir

    return config_dir() / "settings.toml", False


def project_files(project: Path) -> tuple[Path, Path]:
    """The project and local layer files of ``project``."""
    return project / PROJECT_SETTINGS, project / LOCAL_SETTINGS


class _Read(NamedTuple):
    project: Path
    layers: list[Layer]
    infos: list[LayerInfo]
    problems: list[Problem]
    user_path: Path


def _read_all(
    project: str | os.PathLike[str] | None,
    *,
    cwd: Path | None,
    flags: FlagOverrides | None,
    env: Mapping[str, str] | None,
) -> _Read:
    env = dict(os.environ if env is None else env)
    here = cwd or Path.cwd()
    root = canonical(here / os.path.expanduser(os.fspath(project)) if project else here)
    layers: list[Layer] = []
    infos: list[LayerInfo] = []
    problems: list[Problem] = []

    user_path, required = user_file(env, flags, cwd=here)
    project_path, local_path = project_files(root)
    for name, path, must in (
        ("user", user_path, required),
        ("project", project_path, False),
        ("local", local_path, False),
    ):
        layer, found = read_file_layer(name, path, project=root, env=env, required=must)
        problems += found
        infos.append(LayerInfo(name, str(path), layer is not None))
        if layer is not None:
            layers.append(layer)

    env_layer, found = read_environment(env, project=root)
    problems += found
    layers.append(env_layer)
    infos.append(LayerInfo("env", None, bool(env_layer.scalars or env_layer.lists)))
    if flags is not None:
        flag_layer, found = read_flags(flags, cwd=here)
        problems += found
        layers.append(flag_layer)
        has_flags = bool(flag_layer.scalars or any(flag_layer.lists.values()))
        infos.append(LayerInfo("flag", None, has_flags))
    return _Read(root, layers, infos, problems, user_path)


def validate_settings(
    project: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    flags: FlagOverrides | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[list[LayerInfo], list[Problem]]:
    """Check every layer; return which were found and EVERY problem (empty: valid)."""
    read = _read_all(project, cwd=cwd, flags=flags, env=env)
    return read.infos, read.problems


def settings_error(problems: Sequence[Problem]) -> ConfigError:
    """One ConfigError for a list of problems: the first in full, the count of the rest."""
    first = problems[0]
    message = f"invalid settings: {first}"
    if len(problems) > 1:
        message += (
            f" (and {len(problems) - 1} more problem{'s' if len(problems) > 2 else ''}; "
            "`stockade config validate` lists them all)"
        )
    return ConfigError(message, fix=first.fix)


def load_settings(
    project: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    flags: FlagOverrides | None = None,
    env: Mapping[str, str] | None = None,
    trusted: bool | None = None,
) -> Settings:
    """See ``Settings.load``."""
    read = _read_all(project, cwd=cwd, flags=flags, env=env)
    if read.problems:
        raise settings_error(read.problems)
    return _merge(read, trusted=trusted)


def _merge(read: _Read, *, trusted: bool | None) -> Settings:
    project = read.project
    gated_layers = [layer for layer in read.layers if layer.name in GATED_LAYERS]
    trust = _TrustCheck(project, read.layers, trusted)
    computed: list[_Baseline] = []

    def base() -> _Baseline:
        """The user's own protections, built only when a gated layer has list entries to check
        (resolving every default mask costs a realpath each, on every command)."""
        if not computed:
            computed.append(_baseline(project, read.layers))
        return computed[0]

    limit_defaults = _limit_defaults()
    values: dict[str, Value[Any]] = {
        key: Value(value, DEFAULT_ORIGIN) for key, value in SCALAR_DEFAULTS.items()
    }
    lists: dict[str, list[Value[Any]]] = {key: [] for key in LIST_KEYS}
    floors: dict[str, Value[Tier]] = {}
    ignored: list[IgnoredEntry] = []

    def withhold(key: str, value: Any, origin: Origin, reason: str) -> bool:
        """True (and listed) when a loosening entry must be ignored."""
        if trust.allows():
            return False
        ignored.append(IgnoredEntry(key, _display(value), origin, reason))
        return True

    for layer in read.layers:
        gated = layer.name in GATED_LAYERS
        for key, new in layer.scalars.items():
            current = values.get(key)
            if key.startswith("risk.programs."):
                if gated and _risk_withheld(key, new, current, floors, withhold):
                    continue
                values[key] = new
                continue
            if key.startswith("sandbox.limits."):
                so_far = current.value if current else limit_defaults[key.rsplit(".", 1)[1]]
                reason = "raises a resource limit" if _looser_limit(new.value, so_far) else None
            else:
                assert current is not None
                reason = SCALAR_LOOSENING[key](new.value, current.value)
            if gated and reason and withhold(key, new.value, new.origin, reason):
                continue
            values[key] = new
        for key, entries in layer.lists.items():
            target = lists[key]
            for entry in entries:
                rule = LIST_LOOSENING.get(key)
                reason = rule(entry.value, base()) if (gated and rule) else None
                if reason and withhold(key, entry.value, entry.origin, reason):
                    continue
                if all(existing.value != entry.value for existing in target):
                    target.append(entry)
        switched_on = layer.scalars.get("sandbox.enabled")
        if (
            layer.name in {"env", "flag"}
            and switched_on is not None
            and switched_on.value
            and values["sandbox.backend"].value == "none"
        ):
            # STOCKADE_SANDBOX=on must confine, even over a file's backend = "none".
            values["sandbox.backend"] = Value("auto", switched_on.origin)

    domains: tuple[DomainEntry, ...] = _values(lists["network.allowed_domains"])
    return Settings(
        project=project,
        sandbox=SandboxSettings(
            enabled=values["sandbox.enabled"].value,
            backend=values["sandbox.backend"].value,
            network=values["sandbox.network"].value,
            writable_roots=_values(lists["sandbox.writable_roots"]),
            read_deny=_values(lists["sandbox.read_deny"]),
            read_allow_within_deny=_values(lists["sandbox.read_allow_within_deny"]),
            write_allow_extra=_values(lists["sandbox.write_allow_extra"]),
            write_deny_within_allow=_values(lists["sandbox.write_deny_within_allow"]),
            env_passthrough=_values(lists["sandbox.env_passthrough"]),
            allow_unix_sockets=values["sandbox.allow_unix_sockets"].value,
            root_jail=values["sandbox.root_jail"].value,
            warm=values["sandbox.warm"].value,
            jail_uid=values["sandbox.jail_uid"].value,
            jail_gid=values["sandbox.jail_gid"].value,
            allow_writable_home=values["sandbox.allow_writable_home"].value,
            toolchains=_values(lists["sandbox.toolchains"]),
            limits=MappingProxyType(
                {
                    key.removeprefix("sandbox.limits."): value.value
                    for key, value in values.items()
                    if key.startswith("sandbox.limits.")
                }
            ),
        ),
        network=NetworkSettings(
            allowed_domains=tuple(d.pattern for d in domains if not d.allow_private),
            private_domains=tuple(d.pattern for d in domains if d.allow_private),
            denied_domains=_values(lists["network.denied_domains"]),
            allow_private=values["network.allow_private"].value,
        ),
        permissions=PermissionSettings(
            autonomy=values["permissions.autonomy"].value,
            allow=_values(lists["permissions.allow"]),
            deny=_values(lists["permissions.deny"]),
            ask=_values(lists["permissions.ask"]),
        ),
        risk=RiskSettings(
            programs=MappingProxyType(
                {
                    key.removeprefix("risk.programs."): value.value
                    for key, value in values.items()
                    if key.startswith("risk.programs.")
                }
            ),
            floors=MappingProxyType(
                {key.removeprefix("risk.programs."): v.value for key, v in floors.items()}
            ),
        ),
        layers=tuple(read.infos),
        ignored=tuple(sorted(ignored, key=_reading_order)),
        trust=trust.status(present=bool(gated_layers)),
        values=MappingProxyType(values),
        lists=MappingProxyType({key: tuple(items) for key, items in lists.items()}),
        user_file=read.user_path,
    )


def _reading_order(entry: IgnoredEntry) -> tuple[int, int]:
    """Ignored entries in the order a reader meets them: layer, then line."""
    layer = LAYER_ORDER.index(entry.origin.layer) if entry.origin.layer in LAYER_ORDER else 0
    return layer, entry.origin.line or 0


def _values(entries: Sequence[Value[Any]]) -> tuple[Any, ...]:
    return tuple(entry.value for entry in entries)


def _risk_withheld(
    key: str,
    new: Value[Tier],
    current: Value[Any] | None,
    floors: dict[str, Value[Tier]],
    withhold: Callable[[str, Any, Origin, str], bool],
) -> bool:
    """The risk rule for a project/local override; True when ``new`` must not become an
    override (then it may still be kept as a floor)."""
    if current is not None:
        if new.value >= current.value:
            return False  # raises the user's own override: tightening
        return withhold(key, new.value, new.origin, f"lowers the tier set by {current.origin}")
    reason = "could lower the built-in tier (kept only as a minimum: it can raise, not lower)"
    if not withhold(key, new.value, new.origin, reason):
        return False
    floor = floors.get(key)
    if floor is None or new.value > floor.value:
        floors[key] = new
    return True


def _baseline(project: Path, layers: Sequence[Layer]) -> _Baseline:
    """The user's own protections (defaults + operator layers), canonical."""
    masks = [canonical(p) for p in default_read_deny()]
    denied = [canonical(p) for p in stockade_state_paths()]
    for layer in layers:
        if layer.name not in OPERATOR_LAYERS:
            continue
        masks += [canonical(v.value) for v in layer.lists.get("sandbox.read_deny", ())]
        denied += [
            canonical(v.value) for v in layer.lists.get("sandbox.write_deny_within_allow", ())
        ]
        user_path = layer.source
        if layer.name == "user" and user_path:
            denied.append(canonical(user_path))
    return _Baseline(project=project, masks=tuple(masks), write_denied=tuple(denied))


class _TrustCheck:
    """Looks the workspace up in the trust store once, and only when a loosening entry needs
    the answer (the run path never reads the store for a project that only tightens)."""

    def __init__(self, project: Path, layers: Sequence[Layer], forced: bool | None) -> None:
        self.project = project
        self.forced = forced
        self.present = {layer.name: layer.content for layer in layers if layer.name in GATED_LAYERS}
        self._answer: bool | None = None
        self._stale = False
        self.consulted = False

    @property
    def digest(self) -> str | None:
        if not self.present:
            return None
        from stockade.trust import workspace_digest

        return workspace_digest([(name, self.present.get(name)) for name in ("project", "local")])

    def allows(self) -> bool:
        """Whether a loosening entry may apply; asking marks trust as needed."""
        self.consulted = True
        if self._answer is None:
            if self.forced is not None:
                self._answer = self.forced
            else:
                from stockade.trust import find_record

                record = find_record(self.project)
                digest = self.digest
                self._answer = record is not None and record.digest == digest
                self._stale = record is not None and not self._answer
        return self._answer

    def status(self, *, present: bool) -> TrustStatus:
        if not present:
            return TrustStatus()
        return TrustStatus(
            needed=self.consulted,
            trusted=bool(self.consulted and self._answer),
            stale=self._stale,
            digest=self.digest,
        )
