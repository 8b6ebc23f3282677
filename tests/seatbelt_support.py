"""Fixed sandbox policies for the Seatbelt golden and decision tests.

They are built as SandboxPolicy values directly, with made-up macOS paths (``/Users/alice``),
never from this machine's home or file system, so the generated profiles are the same on every
machine. The protected names come from the shared vocabulary, as ``resolve_policy`` would use
them.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

from stockade.sandbox.policy import (
    GLOB_CHARACTERS,
    GuardedPath,
    MaskedPath,
    NetworkMode,
    ProtectedPath,
    SandboxPolicy,
)
from stockade.vocabulary import CARGO_HOME as IN_CARGO_HOME
from stockade.vocabulary import PROTECTED_NAMES, ROOT, ProtectedName

HOME = Path("/Users/alice")
PROJECT = HOME / "code" / "app"
SESSION_TMP = Path("/var/folders/zz/abc123/T/stockade-session-4242-0-0123456789ab/tmp")
CARGO_HOME = HOME / ".cargo"
PROXY_PORT = 40123

# What exists in the made-up project: a git repository with hooks and config, an MCP server
# list and editor settings. (Protected names that do not exist are not denied, on any backend:
# `git init` must work; the post-run guard judges what a command created.)
EXISTING_IN_PROJECT = frozenset({".git/hooks", ".git/config", ".mcp.json", ".vscode"})
EXISTING_IN_CARGO = frozenset({"bin", "config.toml", "env"})

HOME_MASKS = (
    MaskedPath(HOME / ".ssh", True),
    MaskedPath(HOME / ".aws", True),
    MaskedPath(HOME / ".gnupg", True),
    MaskedPath(HOME / ".config" / "gh", True),
    MaskedPath(HOME / ".netrc", False),
    MaskedPath(HOME / ".npmrc", False),
    MaskedPath(Path("/var/run/docker.sock"), False),
)

Entry = ProtectedPath | GuardedPath  # an existing protected path, or one not created yet


def _entries(root: Path, where: str, existing: frozenset[str]) -> list[Entry]:
    """The protected names of ``where`` below ``root`` as resolve_policy makes them: existing
    ones bound read-only, the others guarded (globs and judged-only names are guarded)."""
    names: list[ProtectedName] = [p for p in PROTECTED_NAMES if p.where == where]
    entries: list[Entry] = []
    for name in names:
        path = root / name.name
        if name.mount and name.name in existing:
            entries.append(ProtectedPath(path, name.is_dir, name.judge, name.threat))
        elif not GLOB_CHARACTERS & set(name.name):
            entries.append(GuardedPath(path, name.is_dir, name.judge, name.threat))
    return entries


def protected_in(root: Path, existing: frozenset[str] = EXISTING_IN_PROJECT) -> list[Entry]:
    """The protected names of a writable root, each existing or not as ``existing`` says."""
    return _entries(root, ROOT, existing)


def cargo_protected() -> list[Entry]:
    return _entries(CARGO_HOME, IN_CARGO_HOME, EXISTING_IN_CARGO)


def policy(
    *,
    project: Path = PROJECT,
    extra_writable: tuple[Path, ...] = (),
    masked: tuple[MaskedPath, ...] = HOME_MASKS,
    allow_within: tuple[Path, ...] = (),
    protected: list[Entry] | None = None,
    deny_within: tuple[Path, ...] = (),
    network: NetworkMode = NetworkMode.DENY,
    allow_unix_sockets: bool = False,
) -> SandboxPolicy:
    """A policy like ``resolve_policy`` makes for ``project`` on a Mac."""
    if protected is None:
        protected = protected_in(project) + cargo_protected()
    protected += [ProtectedPath(path, True) for path in deny_within]
    return SandboxPolicy(
        project=project,
        cwd=project,
        session_tmp=SESSION_TMP,
        writable=(project, SESSION_TMP, CARGO_HOME, *extra_writable),
        masked=masked,
        read_allow_within_deny=allow_within,
        protected=tuple(e for e in protected if isinstance(e, ProtectedPath)),
        guarded=tuple(e for e in protected if isinstance(e, GuardedPath)),
        network=network,
        env=MappingProxyType({"PATH": "/usr/bin:/bin", "HOME": str(HOME)}),
        write_deny_within_allow=deny_within,
        cargo_home=CARGO_HOME,
        allow_unix_sockets=allow_unix_sockets,
        proxy_port=PROXY_PORT if network is NetworkMode.ALLOWLIST else None,
    )


TOOL = HOME / ".config" / "tool"
SECRETS = PROJECT / "secrets"
ODD_PROJECT = HOME / 'code/my "quoted" app (v2) \\ ünïcødé 🐍'

GOLDEN_POLICIES: dict[str, SandboxPolicy] = {
    "defaults": policy(),
    "read-deny": policy(
        masked=(
            *HOME_MASKS,
            MaskedPath(HOME / "Documents" / "taxes", True),
            MaskedPath(HOME / "notes.txt", False),
        ),
    ),
    "read-allow-within-deny": policy(
        masked=(*HOME_MASKS, MaskedPath(TOOL, True)), allow_within=(TOOL / "public",)
    ),
    "write-deny-within-allow": policy(deny_within=(PROJECT / "vendor",)),
    "extra-writable": policy(extra_writable=(HOME / "shared-build", Path("/tmp/scratch"))),
    # Each kind inside the other, twice: the deepest path decides, as with bwrap's mounts.
    "nested": policy(
        masked=(
            *HOME_MASKS,
            MaskedPath(TOOL, True),
            MaskedPath(SECRETS, True),
            MaskedPath(SECRETS / "pub" / "private", True),
        ),
        allow_within=(TOOL / "public", SECRETS / "pub"),
        extra_writable=(TOOL / "public" / "cache", SECRETS / "pub" / "out"),
        protected=[
            *protected_in(PROJECT),
            *cargo_protected(),
            *protected_in(TOOL / "public" / "cache"),
            *protected_in(SECRETS / "pub" / "out"),
        ],
    ),
    "protected-not-yet-existing": policy(
        protected=[
            GuardedPath(PROJECT / ".git", True),  # no repository yet: .git itself
            *(p for p in protected_in(PROJECT, frozenset()) if p.path.parent == PROJECT),
            *cargo_protected(),
        ]
    ),
    "network-allow": policy(network=NetworkMode.ALLOW),
    "network-allowlist": policy(network=NetworkMode.ALLOWLIST),
    "network-deny-unix-sockets": policy(allow_unix_sockets=True),
    "network-allow-unix-sockets": policy(network=NetworkMode.ALLOW, allow_unix_sockets=True),
    "project-below-tmp": policy(project=Path("/tmp/build")),
    "odd-paths": policy(
        project=ODD_PROJECT,
        masked=(*HOME_MASKS, MaskedPath(HOME / "Library/Application Support/Secret (Tool)", True)),
    ),
}
