"""Read ONE settings layer - a TOML file, the environment or the command line - into typed
values that remember where they came from.

Nothing here merges or decides what is safe (that is ``stockade.settings``); this module only
turns text into checked values and, for everything it cannot accept, a ``Problem`` naming the
file, the line and the key, with the fix. It never stops at the first problem, so
``stockade config validate`` can list them all.

The vocabulary (what keys exist, what each accepts, how the environment variables are spelled)
is the data at the top.
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

from stockade.net.mode import NetworkMode
from stockade.vocabulary import AUTONOMY_ALIASES, AUTONOMY_LEVELS, BACKEND_NAMES

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

LAYER_ORDER: tuple[str, ...] = ("user", "project", "local", "env", "flag")

BACKENDS: tuple[str, ...] = BACKEND_NAMES

TRUE_WORDS = frozenset({"1", "on", "true", "yes", "enabled"})
FALSE_WORDS = frozenset({"0", "off", "false", "no", "disabled"})
NETWORK_DENY_WORDS = frozenset({"deny", "denied", "block", "off"})
NETWORK_ALLOW_WORDS = frozenset({"allow", "allowed", "on"})
NETWORK_ALLOWLIST_WORDS = frozenset({"allowlist", "allow-list", "allow_list"})

ENV_SANDBOX = "STOCKADE_SANDBOX"
ENV_NETWORK = "STOCKADE_SANDBOX_NETWORK"
ENV_WRITABLE_ROOTS = "STOCKADE_SANDBOX_WRITABLE_ROOTS"
ENV_AUTONOMY = "STOCKADE_AUTONOMY"
ENV_CONFIG = "STOCKADE_CONFIG"


class Kind(enum.Enum):
    """What a key accepts; the value is how an error message describes it."""

    BOOL = "true or false"
    JAIL_ID = "a number from 1 to 4294967294"
    BACKEND = "one of: " + ", ".join(BACKENDS)
    NETWORK = "one of: deny, allow, allowlist"
    AUTONOMY = "one of: " + ", ".join(AUTONOMY_LEVELS)
    PATHS = "a list of absolute paths"
    MASK_PATHS = "a list of absolute paths outside /proc, /sys and /dev"
    EXISTING_PATHS = "a list of absolute paths that exist"
    ENV_NAMES = "a list of environment variable names"
    TOOLCHAINS = "a list of toolchain presets: node, python, rust, go, java"
    RULES = "a list of rule strings"
    ALLOWED_DOMAINS = 'a list of domain patterns (or { domain = "...", allow_private = true })'
    DOMAINS = "a list of domain patterns"
    LIMITS = "a table of limits"
    TIERS = "a table of program = tier"


SCHEMA: dict[str, dict[str, Kind]] = {
    "sandbox": {
        "enabled": Kind.BOOL,
        "backend": Kind.BACKEND,
        "network": Kind.NETWORK,
        "writable_roots": Kind.EXISTING_PATHS,
        "read_deny": Kind.MASK_PATHS,
        "read_allow_within_deny": Kind.PATHS,
        "write_allow_extra": Kind.EXISTING_PATHS,
        "write_deny_within_allow": Kind.PATHS,
        "env_passthrough": Kind.ENV_NAMES,
        "allow_unix_sockets": Kind.BOOL,
        "root_jail": Kind.BOOL,
        "warm": Kind.BOOL,
        "jail_uid": Kind.JAIL_ID,
        "jail_gid": Kind.JAIL_ID,
        "allow_writable_home": Kind.BOOL,
        "toolchains": Kind.TOOLCHAINS,
        "limits": Kind.LIMITS,
    },
    "network": {
        "allowed_domains": Kind.ALLOWED_DOMAINS,
        "denied_domains": Kind.DOMAINS,
        "allow_private": Kind.BOOL,
    },
    "permissions": {
        "autonomy": Kind.AUTONOMY,
        "allow": Kind.RULES,
        "deny": Kind.RULES,
        "ask": Kind.RULES,
    },
    "risk": {
        "programs": Kind.TIERS,
    },
}

# Keys people reach for that live elsewhere: "did you mean ...?" points there.
KNOWN_MISPLACEMENTS: dict[str, str] = {
    "network.mode": "sandbox.network",
    "sandbox.allowed_domains": "network.allowed_domains",
    "sandbox.denied_domains": "network.denied_domains",
    "sandbox.autonomy": "permissions.autonomy",
}

# Prefixes other tools put on the same settings (fs_read_deny, sandboxNetwork, ...).
IGNORED_KEY_PREFIXES: tuple[str, ...] = (
    "filesystem_",
    "fs_",
    "file_",
    "sandbox_",
    "network_",
    "net_",
    "permissions_",
    "permission_",
    "perm_",
    "risk_",
)

_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
PROJECT_ROOT_VARIABLE = "PROJECT_ROOT"

T = TypeVar("T")


# ---------------------------------------------------------------------------------------------
# What a layer produces
# ---------------------------------------------------------------------------------------------


class Origin(NamedTuple):
    """Where a value was set: the layer, the file (or variable/flag) and the line."""

    layer: str  # "default" or one of LAYER_ORDER
    source: str = ""
    line: int | None = None

    def __str__(self) -> str:
        if self.layer == "default":
            return "default"
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{self.layer} ({where})" if where else self.layer

    def to_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "source": self.source or None, "line": self.line}


DEFAULT_ORIGIN = Origin("default")


class Value(NamedTuple, Generic[T]):
    """A setting's value together with its origin."""

    value: T
    origin: Origin


class DomainEntry(NamedTuple):
    """One ``allowed_domains`` entry; ``allow_private`` lets this rule reach LAN addresses."""

    pattern: str
    allow_private: bool = False

    def __str__(self) -> str:
        return f"{self.pattern} (allow_private)" if self.allow_private else self.pattern


class Problem(NamedTuple):
    """One thing wrong with a layer, located as precisely as the source allows."""

    source: str
    line: int | None
    key: str
    message: str
    fix: str | None = None

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line else self.source
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "line": self.line,
            "key": self.key,
            "message": self.message,
            "fix": self.fix,
        }


class Layer:
    """The checked values of one layer. Scalars are flat dotted keys (``sandbox.network``,
    ``sandbox.limits.pids_max``, ``risk.programs.make``); lists keep every entry's origin.
    ``content`` is the file's bytes exactly as parsed (for trust digests)."""

    def __init__(self, name: str, source: str | None = None, content: bytes | None = None):
        self.name = name
        self.source = source
        self.content = content
        self.scalars: dict[str, Value[Any]] = {}
        self.lists: dict[str, list[Value[Any]]] = {}


class FlagOverrides(NamedTuple):
    """The operator's command-line flags; the last and strongest layer."""

    writable: tuple[Path, ...] = ()
    network: str | None = None
    env_passthrough: tuple[str, ...] = ()
    backend: str | None = None
    unsafe: bool = False
    autonomy: str | None = None
    config: Path | None = None
    allowed_domains: tuple[str, ...] = ()
    allow_writable_home: bool = False


class _Invalid(Exception):
    """A value that cannot be accepted: the message and the fix, located by the caller."""

    def __init__(self, message: str, fix: str | None = None, *, at: tuple[str | int, ...] = ()):
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.at = at  # sub-path (index, key) below the key being checked


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def read_file_layer(
    name: str,
    path: Path,
    *,
    project: Path,
    env: Mapping[str, str],
    required: bool = False,
) -> tuple[Layer | None, list[Problem]]:
    """Read and check one settings file. A missing file is no layer (an error only when
    ``required``, i.e. named explicitly); an unreadable or broken one is a problem."""
    source = str(path)
    try:
        with open(path, "rb") as handle:
            content = handle.read()
    except FileNotFoundError:
        if not required:
            return None, []
        return None, [
            Problem(source, None, "", "the settings file does not exist", _CONFIG_FILE_FIX)
        ]
    except OSError as error:
        return None, [
            Problem(
                source,
                None,
                "",
                f"cannot read the settings file: {error.strerror or error}",
                "fix its permissions, or point STOCKADE_CONFIG / --config at a readable file",
            )
        ]
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as error:
        line = content[: error.start].count(b"\n") + 1
        return None, [Problem(source, line, "", "the file is not valid UTF-8", "save it as UTF-8")]
    import tomllib

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        return None, [_syntax_problem(source, text, error)]
    from stockade.toml_lines import key_lines

    layer = Layer(name=name, source=source, content=content)
    checker = _Checker(layer, source, key_lines(text), project=project, env=env)
    checker.document(document)
    return layer, checker.problems


_CONFIG_FILE_FIX = "create it, or unset STOCKADE_CONFIG / drop --config to use the default file"


def _syntax_problem(source: str, text: str, error: Exception) -> Problem:
    message = str(error)
    match = re.search(r"\(at line (\d+), column (\d+)\)$", message)
    if match:
        line: int | None = int(match.group(1))
        message = message[: match.start()].strip()
    elif message.endswith("(at end of document)"):
        line = text.count("\n") + (0 if text.endswith("\n") else 1)
        message = message.removesuffix("(at end of document)").strip() + " at the end of the file"
    else:
        line = None
    return Problem(
        source,
        line,
        "",
        f"TOML syntax error: {message}",
        "fix the TOML syntax on that line (see https://toml.io)",
    )


class _Checker:
    """Walks one parsed document, filling a Layer and collecting every problem."""

    def __init__(
        self,
        layer: Layer,
        source: str,
        lines: Mapping[tuple[str | int, ...], int],
        *,
        project: Path,
        env: Mapping[str, str],
    ) -> None:
        self.layer = layer
        self.source = source
        self.lines = lines
        self.project = project
        self.env = env
        self.problems: list[Problem] = []

    def line(self, path: tuple[str | int, ...]) -> int | None:
        from stockade.toml_lines import line_of

        return line_of(self.lines, path)

    def origin(self, path: tuple[str | int, ...]) -> Origin:
        return Origin(self.layer.name, self.source, self.line(path))

    def problem(self, path: tuple[str | int, ...], message: str, fix: str | None = None) -> None:
        self.problems.append(Problem(self.source, self.line(path), _key_text(path), message, fix))

    def document(self, document: Mapping[str, Any]) -> None:
        for section, table in document.items():
            if section not in SCHEMA:
                self.unknown((section,), section, None)
                continue
            if not isinstance(table, dict):
                self.problem(
                    (section,),
                    f"must be a table ([{section}]), not {_type_name(table)}",
                    f"write the settings under a [{section}] header",
                )
                continue
            for key, raw in table.items():
                kind = SCHEMA[section].get(key)
                if kind is None:
                    self.unknown((section, key), key, section)
                    continue
                self.value(section, key, kind, raw)

    def unknown(self, path: tuple[str | int, ...], key: str, section: str | None) -> None:
        if section == "network" and key == "test_hosts":
            self.problem(
                path,
                "test_hosts is a test-only resolver override and is never read from settings",
                "remove it; tests pass test hosts to DomainPolicy directly",
            )
            return
        hint = suggest_key(key, section)
        where = f"[{section}]" if section else "the top level"
        message = f"unknown key {key!r} in {where}"
        if hint:
            self.problem(path, f"{message} (did you mean {hint}?)", f"rename it to {hint}")
        else:
            valid = sorted(SCHEMA[section]) if section else [f"[{s}]" for s in SCHEMA]
            self.problem(path, message, "valid keys here: " + ", ".join(valid))

    def value(self, section: str, key: str, kind: Kind, raw: Any) -> None:
        path: tuple[str | int, ...] = (section, key)
        dotted = f"{section}.{key}"
        if kind is Kind.LIMITS:
            self.limits(path, raw)
            return
        if kind is Kind.TIERS:
            self.tiers(path, raw)
            return
        parser = _LIST_PARSERS.get(kind)
        if parser is not None:
            if not isinstance(raw, list):
                self.problem(path, f"must be {kind.value}, not {_type_name(raw)}", _list_fix(key))
                return
            entries = self.layer.lists.setdefault(dotted, [])
            for index, item in enumerate(raw):
                try:
                    parsed = parser(item, self.project, self.env)
                except _Invalid as error:
                    self.problem((*path, index, *error.at), error.message, error.fix)
                    continue
                entries.append(Value(parsed, self.origin((*path, index))))
            return
        try:
            parsed = parse_scalar(kind, raw)
        except _Invalid as error:
            self.problem(path, error.message, error.fix)
            return
        self.layer.scalars[dotted] = Value(parsed, self.origin(path))

    def limits(self, path: tuple[str | int, ...], raw: Any) -> None:
        if not isinstance(raw, dict):
            self.problem(
                path,
                f"must be {Kind.LIMITS.value}, not {_type_name(raw)}",
                "write [sandbox.limits] with lines like pids_max = 512",
            )
            return
        known = limit_names()
        for name, value in raw.items():
            key_path = (*path, name)
            if name not in known:
                hint = _closest(_normalise(name), known)
                message = f"unknown limit {name!r}" + (f" (did you mean {hint}?)" if hint else "")
                self.problem(key_path, message, f"use one of: {', '.join(sorted(known))}")
                continue
            try:
                parsed = parse_limit(name, value)
            except _Invalid as error:
                self.problem(key_path, error.message, error.fix)
                continue
            self.layer.scalars[f"sandbox.limits.{name}"] = Value(parsed, self.origin(key_path))

    def tiers(self, path: tuple[str | int, ...], raw: Any) -> None:
        if not isinstance(raw, dict):
            self.problem(
                path,
                f"must be {Kind.TIERS.value}, not {_type_name(raw)}",
                'write programs = { mytool = "low" }',
            )
            return
        from stockade.tiers import Tier

        for program, value in raw.items():
            key_path = (*path, program)
            if not program or any(ch.isspace() or ch == "/" for ch in program):
                self.problem(
                    key_path,
                    f"{program!r} is not a program name",
                    "use the command's name as typed, e.g. make or cargo",
                )
                continue
            if not isinstance(value, str):
                self.problem(
                    key_path, f"the tier must be a string, not {_type_name(value)}", _TIER_FIX
                )
                continue
            try:
                tier = Tier.parse(value)
            except ValueError:
                self.problem(key_path, f"unknown tier {value!r}", _TIER_FIX)
                continue
            self.layer.scalars[f"risk.programs.{program}"] = Value(tier, self.origin(key_path))


_TIER_FIX = "use one of: read-only, low, medium, high, destructive"


def _key_text(path: Sequence[str | int]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def _type_name(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}
    for kind, name in names.items():
        if type(value) is kind:
            return f"{name} ({value!r})" if not isinstance(value, str) else f"the string {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return type(value).__name__


def _list_fix(key: str) -> str:
    return f'write it as a list, e.g. {key} = ["..."]'


# ---------------------------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------------------------


def parse_scalar(kind: Kind, raw: Any) -> Any:
    """Check and convert a scalar setting; raises _Invalid."""
    if kind is Kind.BOOL:
        if not isinstance(raw, bool):
            raise _Invalid(
                f"must be true or false, not {_type_name(raw)}",
                "write true or false without quotes",
            )
        return raw
    if kind is Kind.JAIL_ID:
        if isinstance(raw, bool) or not isinstance(raw, int) or not 0 < raw < 4_294_967_295:
            raise _Invalid(
                f"must be {kind.value}, not {raw!r}",
                "pick an id no user, group or subordinate range uses, e.g. 2000000000",
            )
        return raw
    if not isinstance(raw, str):
        raise _Invalid(f"must be {kind.value}, not {_type_name(raw)}", f"use {kind.value}")
    if kind is Kind.BACKEND:
        word = raw.strip().lower()
        if word not in BACKENDS:
            raise _Invalid(f"unknown sandbox backend {raw!r}", f"use {kind.value}")
        return word
    if kind is Kind.NETWORK:
        word = raw.strip().lower().replace("-", "").replace("_", "")
        if word not in {mode.value for mode in NetworkMode}:
            raise _Invalid(f"unknown network mode {raw!r}", f"use {kind.value}")
        return NetworkMode(word)
    if kind is Kind.AUTONOMY:
        return parse_autonomy(raw)
    raise AssertionError(kind)  # pragma: no cover - every scalar kind is handled above


def parse_autonomy(text: str) -> str:
    """Canonical autonomy level for ``text`` (aliases accepted); raises _Invalid."""
    word = text.strip().lower().replace("_", "-")
    word = AUTONOMY_ALIASES.get(word, word)
    if word == "autoaccept":
        word = "auto-accept"
    if word not in AUTONOMY_LEVELS:
        aliases = ", ".join(f"{a}={b}" for a, b in AUTONOMY_ALIASES.items())
        raise _Invalid(
            f"unknown autonomy level {text!r}",
            f"use one of: {', '.join(AUTONOMY_LEVELS)} (aliases: {aliases})",
        )
    return word


def limit_names() -> list[str]:
    from stockade.sandbox.limits import Limits

    return list(Limits._fields)


def parse_limit(name: str, raw: Any) -> int | float | None:
    """One ``[sandbox.limits]`` value: numbers, sizes like ``'512M'``, or ``'none'``."""
    from stockade.errors import ConfigError
    from stockade.sandbox.limits import Limits

    if isinstance(raw, str) and raw.strip().lower() in {"none", "unlimited"}:
        value: Any = None
    elif isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise _Invalid(
            f"must be a number, a size such as '512M', or 'none', not {_type_name(raw)}",
            f"e.g. {name} = {getattr(Limits, name) or 1024}",
        )
    else:
        value = raw
    try:
        limits = Limits.from_settings({name: value}, where="limits")
    except ConfigError as error:
        message = error.message.removeprefix("limits: ").removeprefix("limits: ")
        raise _Invalid(message, error.fix) from None
    parsed: int | float | None = getattr(limits, name)
    return parsed


def expand_path(text: str, *, project: Path, env: Mapping[str, str]) -> Path:
    """``~`` and ``${VAR}`` (``${PROJECT_ROOT}`` is the project) expanded; the result must be
    absolute. Raises _Invalid naming the missing variable or the relative path."""
    if not text.strip():
        raise _Invalid("an empty path is not allowed", "remove the entry or write a path")
    expanded = text
    if expanded == "~" or expanded.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        expanded = home + expanded[1:]
    elif expanded.startswith("~"):
        expanded = os.path.expanduser(expanded)
        if expanded.startswith("~"):
            raise _Invalid(f"{text!r}: unknown user in {text.split('/')[0]!r}")

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == PROJECT_ROOT_VARIABLE:
            return str(project)
        if not _ENV_NAME.match(name):
            raise _Invalid(f"{text!r}: ${{{name}}} is not a variable name")
        value = env.get(name)
        if value is None:
            raise _Invalid(
                f"{text!r} uses ${{{name}}}, which is not set",
                f"set {name}, or write the path without it",
            )
        return value

    expanded = _VARIABLE.sub(substitute, expanded)
    if not os.path.isabs(expanded):
        raise _Invalid(
            f"{text!r} is a relative path; relative paths are not allowed in settings "
            "(they would mean something different in every directory)",
            f"write an absolute path: /..., ~/... or ${{PROJECT_ROOT}}/{text.lstrip('./')}",
        )
    return Path(expanded)


def _parse_path(item: Any, project: Path, env: Mapping[str, str]) -> Path:
    if not isinstance(item, str):
        raise _Invalid(f"a path must be a string, not {_type_name(item)}", "quote the path")
    return expand_path(item, project=project, env=env)


def _parse_mask_path(item: Any, project: Path, env: Mapping[str, str]) -> Path:
    """A read_deny entry: never below /proc, /sys or /dev, which stockade sets up itself (a
    mask there could only break it, e.g. fail the PID-namespace proof)."""
    from stockade.sandbox.policy import KERNEL_FILESYSTEMS

    path = _parse_path(item, project, env)
    for kernel in KERNEL_FILESYSTEMS:
        if path == kernel or kernel in path.parents:
            raise _Invalid(
                f"{item!r} is in {kernel}, which stockade sets up itself inside the jail",
                f"remove it: nothing below {kernel} can be masked by settings",
            )
    return path


def _parse_existing_path(item: Any, project: Path, env: Mapping[str, str]) -> Path:
    path = _parse_path(item, project, env)
    if not os.path.exists(path):
        raise _Invalid(
            f"{item!r} does not exist ({path})",
            "create it first (a writable path must exist), or fix the path",
        )
    return path


def _parse_env_name(item: Any, project: Path, env: Mapping[str, str]) -> str:
    if not isinstance(item, str) or not _ENV_NAME.match(item):
        raise _Invalid(
            f"{item!r} is not an environment variable name",
            "use names like MY_API_TOKEN (letters, digits, underscores)",
        )
    return item


def _parse_toolchain(item: Any, project: Path, env: Mapping[str, str]) -> str:
    from stockade.sandbox.toolchains import TOOLCHAINS

    if not isinstance(item, str) or item.strip().lower() not in TOOLCHAINS:
        raise _Invalid(
            f"unknown toolchain preset {item!r}", f"use some of: {', '.join(TOOLCHAINS)}"
        )
    return item.strip().lower()


def _parse_rule(item: Any, project: Path, env: Mapping[str, str]) -> str:
    if not isinstance(item, str) or not item.strip():
        raise _Invalid(
            f"a rule must be a non-empty string, not {_type_name(item)}",
            'write rules as strings, e.g. "bash:git status*"',
        )
    return item


def _parse_domain(item: Any, project: Path, env: Mapping[str, str]) -> str:
    if not isinstance(item, str):
        raise _Invalid(
            f"a domain pattern must be a string, not {_type_name(item)}",
            'write e.g. "example.com" or "*.example.com"',
        )
    from stockade.errors import ConfigError
    from stockade.net.domains import DomainRule

    try:
        DomainRule.parse(item)
    except ConfigError as error:
        raise _Invalid(error.message, error.fix) from None
    return item


_DOMAIN_TABLE_FIX = 'write { domain = "nas.lan", allow_private = true }'


def _parse_allowed_domain(item: Any, project: Path, env: Mapping[str, str]) -> DomainEntry:
    if isinstance(item, dict):
        unknown = sorted(set(item) - {"domain", "allow_private"})
        if unknown:
            raise _Invalid(
                f"unknown key {unknown[0]!r} in a domain entry",
                _DOMAIN_TABLE_FIX,
                at=(unknown[0],),
            )
        if "domain" not in item:
            raise _Invalid("a domain entry needs a domain", _DOMAIN_TABLE_FIX)
        private = item.get("allow_private", False)
        if not isinstance(private, bool):
            raise _Invalid(
                f"allow_private must be true or false, not {_type_name(private)}",
                "write true or false without quotes",
                at=("allow_private",),
            )
        return DomainEntry(_parse_domain(item["domain"], project, env), private)
    return DomainEntry(_parse_domain(item, project, env))


_LIST_PARSERS: dict[Kind, Callable[[Any, Path, Mapping[str, str]], Any]] = {
    Kind.PATHS: _parse_path,
    Kind.MASK_PATHS: _parse_mask_path,
    Kind.EXISTING_PATHS: _parse_existing_path,
    Kind.ENV_NAMES: _parse_env_name,
    Kind.TOOLCHAINS: _parse_toolchain,
    Kind.RULES: _parse_rule,
    Kind.DOMAINS: _parse_domain,
    Kind.ALLOWED_DOMAINS: _parse_allowed_domain,
}


# ---------------------------------------------------------------------------------------------
# "Did you mean ...?"
# ---------------------------------------------------------------------------------------------


def _normalise(key: str) -> str:
    """camelCase, kebab-case and dotted spellings -> snake_case."""
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key)
    snake = re.sub(r"[-.\s]+", "_", snake).lower()
    return re.sub(r"_+", "_", snake).strip("_")


def _closest(key: str, candidates: Iterable[str]) -> str | None:
    """The one candidate ``key`` abbreviates (``memory`` -> ``memory_max_bytes``), else the
    closest spelling."""
    import difflib

    names = sorted(candidates)
    prefixed = [name for name in names if key and name.startswith(key + "_")]
    if len(prefixed) == 1:
        return prefixed[0]
    matches = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return matches[0] if matches else None


def suggest_key(key: str, section: str | None) -> str | None:
    """The key the user probably meant: same section first (``read_deny``), else another
    section's key written in full (``[network] allowed_domains``); None if nothing is close."""
    normal = _normalise(key)
    stripped = [normal] + [
        normal[len(prefix) :] for prefix in IGNORED_KEY_PREFIXES if normal.startswith(prefix)
    ]
    if section is None:
        for candidate in stripped:
            if candidate in SCHEMA:
                return f"[{candidate}]"
    else:
        misplaced = KNOWN_MISPLACEMENTS.get(f"{section}.{normal}")
        if misplaced:
            other, name = misplaced.split(".")
            return f"[{other}] {name}"
        for candidate in stripped:
            if candidate in SCHEMA[section]:
                return candidate
    for other, keys in SCHEMA.items():
        if other == section:
            continue
        for candidate in stripped:
            if candidate in keys:
                return f"[{other}] {candidate}"
    if section is None:
        close = _closest(normal, SCHEMA)
        return f"[{close}]" if close else None
    for candidate in stripped:
        close = _closest(candidate, SCHEMA[section])
        if close:
            return close
    return None


# ---------------------------------------------------------------------------------------------
# The environment and the command line
# ---------------------------------------------------------------------------------------------


def read_environment(env: Mapping[str, str], *, project: Path) -> tuple[Layer, list[Problem]]:
    """The ``STOCKADE_*`` variables as a layer (``STOCKADE_CONFIG`` only picks the user file)."""
    layer = Layer(name="env")
    problems: list[Problem] = []

    def problem(variable: str, key: str, message: str, fix: str) -> None:
        problems.append(Problem(variable, None, key, message, fix))

    enabled = env.get(ENV_SANDBOX)
    if enabled is not None:
        word = enabled.strip().lower()
        if word in TRUE_WORDS or word in FALSE_WORDS:
            layer.scalars["sandbox.enabled"] = Value(word in TRUE_WORDS, Origin("env", ENV_SANDBOX))
        else:
            problem(
                ENV_SANDBOX,
                "sandbox.enabled",
                f"{ENV_SANDBOX}={enabled!r} is not understood",
                "use 1/on/true/yes/enabled or 0/off/false/no/disabled",
            )
    network = env.get(ENV_NETWORK)
    if network is not None:
        mode = parse_network_word(network)
        if mode is None:
            problem(
                ENV_NETWORK,
                "sandbox.network",
                f"{ENV_NETWORK}={network!r} is not understood",
                "use deny/denied/block/off, allow/allowed/on, or allowlist",
            )
        else:
            layer.scalars["sandbox.network"] = Value(mode, Origin("env", ENV_NETWORK))
    roots = env.get(ENV_WRITABLE_ROOTS)
    if roots:
        entries = layer.lists.setdefault("sandbox.writable_roots", [])
        for index, entry in enumerate(filter(None, roots.split(":"))):
            try:
                path = expand_path(entry, project=project, env=env)
            except _Invalid as error:
                problem(
                    ENV_WRITABLE_ROOTS,
                    f"sandbox.writable_roots[{index}]",
                    f"{ENV_WRITABLE_ROOTS} entry {error.message}",
                    "use absolute paths separated by ':'",
                )
                continue
            if not os.path.exists(path):
                problem(
                    ENV_WRITABLE_ROOTS,
                    f"sandbox.writable_roots[{index}]",
                    f"{ENV_WRITABLE_ROOTS} entry {entry!r} does not exist",
                    "create it first, or remove it from the variable",
                )
                continue
            entries.append(Value(path, Origin("env", ENV_WRITABLE_ROOTS)))
    autonomy = env.get(ENV_AUTONOMY)
    if autonomy is not None:
        try:
            level = parse_autonomy(autonomy)
        except _Invalid as error:
            problem(
                ENV_AUTONOMY,
                "permissions.autonomy",
                f"{ENV_AUTONOMY}: {error.message}",
                error.fix or "",
            )
        else:
            layer.scalars["permissions.autonomy"] = Value(level, Origin("env", ENV_AUTONOMY))
    return layer, problems


def parse_network_word(text: str) -> NetworkMode | None:
    """The environment's spellings of a network mode, or None if not understood."""
    word = text.strip().lower()
    if word in NETWORK_DENY_WORDS:
        return NetworkMode.DENY
    if word in NETWORK_ALLOW_WORDS:
        return NetworkMode.ALLOW
    if word in NETWORK_ALLOWLIST_WORDS:
        return NetworkMode.ALLOWLIST
    return None


def read_flags(flags: FlagOverrides, *, cwd: Path) -> tuple[Layer, list[Problem]]:
    """Command-line flags as a layer. Relative ``--writable`` paths are taken from the current
    directory (the shell's convention for arguments), but must exist."""
    layer = Layer(name="flag")
    problems: list[Problem] = []

    def scalar(flag: str, key: str, parse: Callable[[], Any]) -> None:
        try:
            layer.scalars[key] = Value(parse(), Origin("flag", flag))
        except _Invalid as error:
            problems.append(Problem(flag, None, key, error.message, error.fix))

    def listed(flag: str, key: str, texts: Iterable[Any], parse: Callable[[Any], Any]) -> None:
        entries = layer.lists.setdefault(key, [])
        for text in texts:
            try:
                entries.append(Value(parse(text), Origin("flag", flag)))
            except _Invalid as error:
                problems.append(Problem(flag, None, key, error.message, error.fix))

    def existing_path(path: Path) -> Path:
        absolute = Path(os.path.abspath(cwd / os.path.expanduser(path)))
        if not absolute.exists():
            raise _Invalid(
                f"writable path {path} does not exist",
                "create it first or fix the path given to --writable",
            )
        return absolute

    def env_name(name: str) -> str:
        if not _ENV_NAME.match(name):
            raise _Invalid(
                f"{name!r} is not an environment variable name",
                "pass a variable name, e.g. --env MY_API_TOKEN",
            )
        return name

    if flags.unsafe:
        layer.scalars["sandbox.enabled"] = Value(False, Origin("flag", "--unsafe"))
    if flags.allow_writable_home:
        origin = Origin("flag", "--allow-writable-home")
        layer.scalars["sandbox.allow_writable_home"] = Value(True, origin)
    if (backend := flags.backend) is not None:
        scalar("--backend", "sandbox.backend", lambda: parse_scalar(Kind.BACKEND, backend))
        if backend != "none" and not flags.unsafe:
            # The strongest layer names a confining backend: it runs, whatever
            # STOCKADE_SANDBOX=off or a file's `enabled = false` said (never silently none).
            layer.scalars["sandbox.enabled"] = Value(True, Origin("flag", "--backend"))
    if (network := flags.network) is not None:
        scalar("--network", "sandbox.network", lambda: parse_scalar(Kind.NETWORK, network))
    if (autonomy := flags.autonomy) is not None:
        scalar("--autonomy", "permissions.autonomy", lambda: parse_autonomy(autonomy))
    listed("--writable", "sandbox.writable_roots", flags.writable, existing_path)
    listed("--env", "sandbox.env_passthrough", flags.env_passthrough, env_name)
    listed(
        "--allow-domain",
        "network.allowed_domains",
        flags.allowed_domains,
        lambda text: _parse_allowed_domain(text, cwd, {}),
    )
    return layer, problems
