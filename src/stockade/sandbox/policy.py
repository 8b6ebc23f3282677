"""SandboxPolicy: what a confined command may touch, resolved once per session.

The tables at the top decide what is masked and what is protected; review them here. Everything
is canonicalised with realpath and de-duplicated, so backends compare real paths only.

Order of application (bwrap mounts, Landlock rules): read-only root, read-deny masks,
read-allow-within-deny re-binds, writable roots, write-deny-within-allow and protected paths.
Nested entries resolve "most specific wins" (see ``bwrap.py``).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple

from stockade.errors import UsageError
from stockade.net.mode import NetworkMode as NetworkMode  # re-exported: policies carry it
from stockade.sandbox.environment import child_environment, dropped_names
from stockade.sandbox.identity import JailUser
from stockade.userdirs import cache_dir, cache_key, cache_key_path, state_paths
from stockade.vocabulary import CARGO_HOME_PROTECTED as CARGO_STORE_PROTECTED
from stockade.vocabulary import HOME_SECRETS, ROOT_ONLY_SECRETS
from stockade.vocabulary import PROTECTED_NAMES as VOCABULARY_PROTECTED

if TYPE_CHECKING:  # overlay.py imports this module
    from stockade.sandbox.overlay import Layer

# ---------------------------------------------------------------------------------------------
# Security tables
# ---------------------------------------------------------------------------------------------

# Masked (empty) inside the jail, relative to the user's home directory: the credential stores
# of the shared vocabulary (each with its tool there).
DEFAULT_READ_DENY_IN_HOME: tuple[str, ...] = tuple(secret.path for secret in HOME_SECRETS)

# Masked when stockade runs as root (the table, with what each entry is, is in the shared
# vocabulary; ``*`` is a glob). Also masked as root: the credential stores of every home
# directory in the passwd database, not only root's own.
ROOT_ONLY_READ_DENY: tuple[str, ...] = tuple(secret.path for secret in ROOT_ONLY_SECRETS)

# stockade owns these kernel filesystems inside the jail (fresh /proc and /dev, the kernel
# table of bwrap.py); a setting that masks below them would only break that, e.g. make the
# PID-namespace proof fail. Refused with the fix.
KERNEL_FILESYSTEMS: tuple[Path, ...] = (Path("/proc"), Path("/sys"), Path("/dev"))

# Host sockets and agent directories that hand out capabilities a read-only file system does
# not stop (connect() ignores read-only mounts): docker, the system and session buses.
HOST_SOCKET_READ_DENY: tuple[str, ...] = (
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/containerd",
    "/run/podman",
    "/run/dbus",
    "/run/user",
)

# Read-only even inside a writable root, including when they do not exist yet (so they cannot
# be created): things that run code on the host later, or configure stockade itself. The table,
# with the threat of each name, is in the shared vocabulary.
PROTECTED_NAMES: tuple[str, ...] = tuple(p.name for p in VOCABULARY_PROTECTED)
# Which of the above are directories (a missing one is protected with an empty directory).
PROTECTED_DIRECTORY_NAMES: frozenset[str] = frozenset(
    p.name for p in VOCABULARY_PROTECTED if p.is_dir
)

# Inside a writable dependency store the executable/config parts stay read-only: the store is
# data, not code that runs later on the host.
CARGO_HOME_PROTECTED: tuple[str, ...] = tuple(p.name for p in CARGO_STORE_PROTECTED)
CARGO_HOME_PROTECTED_DIRECTORIES: frozenset[str] = frozenset(
    p.name for p in CARGO_STORE_PROTECTED if p.is_dir
)


class ProtectedPath(NamedTuple):
    """A path kept read-only inside a writable root. ``exists`` False means stockade must put an
    empty placeholder (directory when ``is_dir``) there for the duration of the run."""

    path: Path
    is_dir: bool
    exists: bool


class MaskedPath(NamedTuple):
    """A read-denied path: directories get an empty tmpfs, files an empty read-only file."""

    path: Path
    is_dir: bool


class PolicyRequest(NamedTuple):
    """What the operator asked for; ``resolve_policy`` turns it into a SandboxPolicy.

    All paths must be absolute (``~`` is expanded); relative paths are an error, because a
    setting that silently means something else in another directory is worse than none.
    """

    project: Path
    cwd: Path | None = None
    writable: Sequence[Path] = ()
    network: NetworkMode = NetworkMode.DENY
    read_deny: Sequence[Path] = ()
    read_allow_within_deny: Sequence[Path] = ()
    write_deny_within_allow: Sequence[Path] = ()
    env_passthrough: Sequence[str] = ()
    env_extra: Mapping[str, str] = MappingProxyType({})
    include_default_masks: bool = True
    allow_unix_sockets: bool = False
    # A root launcher's command runs as this unprivileged user (bwrap; see identity.py) ...
    jail_user: JailUser = JailUser()
    # ... unless the operator explicitly accepts a command running as host root.
    root_jail: bool = False


class SandboxPolicy(NamedTuple):
    """The resolved, canonical policy every backend enforces."""

    project: Path
    cwd: Path
    session_tmp: Path
    writable: tuple[Path, ...]
    masked: tuple[MaskedPath, ...]
    read_allow_within_deny: tuple[Path, ...]
    protected: tuple[ProtectedPath, ...]
    network: NetworkMode
    env: Mapping[str, str]
    dropped_env: tuple[str, ...] = ()
    write_deny_within_allow: tuple[Path, ...] = ()
    cargo_home: Path | None = None
    allow_unix_sockets: bool = False
    # allowlist mode: where the allow-list proxy listens (set by the Sandbox that runs it)
    proxy_socket_dir: Path | None = None  # holds the unix socket (bwrap binds it in)
    proxy_port: int | None = None  # TCP port on the host's loopback (backends without netns)
    # the session temp dir as a fresh tmpfs of this size per command (None: the host dir)
    session_tmp_size: int | None = None
    # Set when stockade runs as root: the host user the command must run as (bwrap drops to
    # it); None when the launcher is not root, or with root_jail.
    jail_user: JailUser | None = None
    root_jail: bool = False  # root launcher, and the operator accepted host root inside
    # --review: the project is this copy-on-write layer inside the jail (sandbox/overlay.py);
    # only a backend with a mount namespace (bwrap) can run such a policy
    layer: Layer | None = None

    @property
    def guarded_roots(self) -> tuple[Path, ...]:
        """Writable roots that get protected paths (all but the private session temp dir)."""
        return tuple(root for root in self.writable if root != self.session_tmp)

    def with_fresh_protection(self) -> SandboxPolicy:
        """Re-check which protected paths exist now; a run calls this right before it starts,
        while it holds its placeholder lease."""
        return self._replace(
            protected=tuple(
                _protected_paths(
                    writable=self.guarded_roots,
                    cargo_homes=[self.cargo_home] if self.cargo_home else [],
                    extra=self.write_deny_within_allow,
                    hidden=self._hidden_by_mask,
                )
            ),
        )

    def _hidden_by_mask(self, path: Path) -> bool:
        return _hidden_by_mask(path, self.masked, self.read_allow_within_deny, self.writable)

    def with_cwd(self, cwd: Path) -> SandboxPolicy:
        """The same policy run from another directory, which must be inside a writable root."""
        real = _existing_directory(cwd, "working directory", "cwd")
        _require_cwd_inside(real, self.writable)
        return self._replace(cwd=real, env={**self.env, "PWD": str(real)})

    def is_writable(self, path: Path) -> bool:
        """True if ``path`` (canonicalised) lies inside a writable root and is not protected."""
        real = Path(os.path.realpath(path))
        if any(is_within(real, p.path) for p in self.protected):
            return False
        return any(is_within(real, root) for root in self.writable)

    @property
    def placeholders(self) -> list[tuple[Path, bool]]:
        """Protected paths that do not exist yet: (path, is_dir). A backend that must create
        mount points for them creates exactly these; the runner removes them afterwards."""
        return [(p.path, p.is_dir) for p in self.protected if not p.exists]

    @property
    def shape(self) -> str:
        """What a cached probe result depends on: the kinds of confinement, not the paths."""
        who = f"uid={self.jail_user.uid}:{self.jail_user.gid}" if self.jail_user else "uid=self"
        return f"net={self.network.value},{who}" + (",root-jail" if self.root_jail else "")


def is_within(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or below it (both canonical). Compared as strings: ``Path.parents``
    builds a Path per ancestor, which made policy resolution a visible part of every run."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def innermost_root(path: Path, roots: Iterable[Path], *, strictly: bool = False) -> Path | None:
    """The deepest of ``roots`` that contains ``path`` (``strictly``: a proper ancestor)."""
    containing = (r for r in roots if is_within(path, r) and not (strictly and r == path))
    return max(containing, key=lambda r: len(r.parts), default=None)


def canonical(path: Path | str) -> Path:
    """Expand ``~`` and resolve symlinks; the only path form the policy stores."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def home_directories() -> list[Path]:
    """$HOME and the passwd home (when they differ): masks apply below both."""
    homes = [Path(os.path.expanduser("~"))]
    with contextlib.suppress(KeyError):
        homes.append(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return _unique(canonical(h) for h in homes)


def default_read_deny() -> list[Path]:
    """The built-in mask list for this user (home secrets, host sockets, root-only files)."""
    homes = home_directories()
    paths = [home / name for home in homes for name in DEFAULT_READ_DENY_IN_HOME]
    paths += [Path(p) for p in HOST_SOCKET_READ_DENY]
    if os.geteuid() == 0:
        for home in every_home_directory():
            if home not in homes:
                paths += _secrets_below(home)
        paths += root_only_secret_paths()
    return paths


def _secrets_below(home: Path) -> list[Path]:
    """The credential stores that exist below ``home``: one listing of the home decides which
    entries need a closer look (cheap enough to do for every account as root)."""
    try:
        with os.scandir(home) as entries:
            present = {entry.name for entry in entries}
    except OSError:
        return []
    found = []
    for name in DEFAULT_READ_DENY_IN_HOME:
        first, _, rest = name.partition("/")
        if first in present and (not rest or os.path.lexists(home / name)):
            found.append(home / name)
    return found


def root_only_secret_paths() -> list[Path]:
    """The entries of the root-only table that exist here (globs expanded)."""
    import glob

    found: list[Path] = []
    for pattern in ROOT_ONLY_READ_DENY:
        if "*" in pattern:
            found += [Path(p) for p in sorted(glob.glob(pattern))]
        elif os.path.lexists(pattern):
            found.append(Path(pattern))
    return found


def every_home_directory() -> list[Path]:
    """The home directory of every account that owns one (root can read them all). System
    accounts whose "home" is a shared directory (/usr/sbin, /var/mail) are skipped: they do not
    own it."""
    homes = []
    for entry in pwd.getpwall():
        home = entry.pw_dir
        if not home or home == "/" or entry.pw_uid == 0:
            continue
        try:
            if os.stat(home).st_uid == entry.pw_uid:
                homes.append(canonical(home))
        except OSError:
            continue
    return _unique(homes)


def cargo_home(env: Mapping[str, str]) -> Path | None:
    """CARGO_HOME (default ~/.cargo) when it exists: a store that cannot be overlaid."""
    path = Path(env.get("CARGO_HOME") or os.path.expanduser("~/.cargo"))
    return canonical(path) if path.is_dir() else None


def go_module_cache(env: Mapping[str, str]) -> Path | None:
    """GOMODCACHE, only when explicitly set and existing."""
    value = env.get("GOMODCACHE")
    return canonical(value) if value and Path(value).is_dir() else None


def resolve_policy(
    request: PolicyRequest,
    *,
    session_tmp: Path,
    host_env: Mapping[str, str] | None = None,
) -> SandboxPolicy:
    """Validate and canonicalise ``request``. Raises UsageError (exit 2) with the fix on bad
    input: missing or unreadable paths, relative paths, a writable root inside a mask, a working
    directory outside every writable root."""
    env = dict(os.environ if host_env is None else host_env)
    project = _existing_directory(request.project, "project directory", "--project")
    cwd = _existing_directory(request.cwd or Path.cwd(), "working directory", "cd")

    session_tmp = canonical(session_tmp)
    cargo = cargo_home(env)
    stores = [store for store in (cargo, go_module_cache(env)) if store is not None]
    extra_writable = [_existing_path(p, "writable path", "--writable") for p in request.writable]
    writable = _unique([project, session_tmp, *stores, *extra_writable])

    allow_within = _unique(
        _absolute(p, "read_allow_within_deny") for p in request.read_allow_within_deny
    )
    deny_candidates = [_outside_kernel_filesystems(p) for p in request.read_deny]
    if request.include_default_masks:
        # built-in entries are absolute already; most do not exist, so look before resolving
        defaults = [canonical(p) for p in default_read_deny() if os.path.lexists(p)]
        deny_candidates = defaults + deny_candidates
    # the key that authenticates stockade's caches: never readable inside, whatever else
    # (made now if it is missing, so that it exists to be masked)
    cache_key()
    deny_candidates.append(cache_key_path())
    masked = _masks(deny_candidates)

    for root in writable:
        for mask in masked:
            if is_within(root, mask.path) and not any(is_within(root, a) for a in allow_within):
                raise UsageError(
                    f"writable path {root} is inside the masked (read-denied) path {mask.path}",
                    fix=f"choose a writable path outside {mask.path}, or add it to "
                    "read_allow_within_deny",
                )

    # stockade's own state: read-only inside whatever is writable. The cache dir is made now
    # if missing: protecting a missing path protects its first missing parent (all of
    # ~/.cache when $HOME is writable and ~/.cache does not exist yet).
    with contextlib.suppress(OSError):
        cache_dir().mkdir(parents=True, exist_ok=True, mode=0o700)
    deny_within = tuple(
        _unique(
            [
                *(_absolute(p, "write_deny_within_allow") for p in request.write_deny_within_allow),
                *(canonical(p) for p in state_paths(env)),
            ]
        )
    )
    protected = _protected_paths(
        writable=[w for w in writable if w != session_tmp],
        cargo_homes=[cargo] if cargo is not None else [],
        extra=deny_within,
        hidden=lambda path: _hidden_by_mask(path, masked, allow_within, writable),
    )
    _require_cwd_inside(cwd, writable)

    child_env = child_environment(
        env,
        session_dir=session_tmp,
        passthrough=request.env_passthrough,
        extra=request.env_extra,
    )
    child_env["PWD"] = str(cwd)
    dropped = tuple(dropped_names(env, request.env_passthrough))
    as_root = os.geteuid() == 0
    return SandboxPolicy(
        project=project,
        cwd=cwd,
        session_tmp=session_tmp,
        writable=tuple(writable),
        masked=tuple(masked),
        read_allow_within_deny=tuple(allow_within),
        protected=tuple(protected),
        network=request.network,
        env=child_env,
        dropped_env=dropped,
        write_deny_within_allow=deny_within,
        cargo_home=cargo,
        allow_unix_sockets=request.allow_unix_sockets,
        jail_user=request.jail_user if as_root and not request.root_jail else None,
        root_jail=as_root and request.root_jail,
    )


def _outside_kernel_filesystems(path: Path | str) -> Path:
    """A read_deny entry, refused when it lies in /proc, /sys or /dev (which stockade sets up
    itself, with the OCI runtime's kernel masks)."""
    resolved = _absolute(path, "read_deny")
    for kernel in KERNEL_FILESYSTEMS:
        if is_within(resolved, kernel) or is_within(Path(os.path.abspath(path)), kernel):
            raise UsageError(
                f"read_deny entry {os.fspath(path)!r} is in {kernel}, which stockade sets up "
                "itself inside the jail (fresh, with the kernel's sensitive files masked)",
                fix=f"remove it from read_deny; nothing below {kernel} can be masked by settings",
            )
    return resolved


def _require_cwd_inside(cwd: Path, writable: Sequence[Path]) -> None:
    if not any(is_within(cwd, root) for root in writable):
        raise UsageError(
            f"working directory {cwd} is outside every writable root "
            f"({', '.join(str(w) for w in writable)})",
            fix="run from inside the project, or pass --project/--writable for this directory",
        )


def _absolute(path: Path | str, what: str) -> Path:
    expanded = Path(os.path.expanduser(os.fspath(path)))
    if not expanded.is_absolute():
        raise UsageError(
            f"{what} entry {os.fspath(path)!r} is a relative path",
            fix="use an absolute path, ~/..., or ${PROJECT_ROOT}/...",
        )
    return canonical(expanded)


def _existing_directory(path: Path, what: str, flag: str) -> Path:
    real = canonical(path)
    if not real.exists():
        raise UsageError(f"{what} {path} does not exist", fix=f"check the path given to {flag}")
    if not real.is_dir():
        raise UsageError(f"{what} {path} is not a directory", fix=f"give {flag} a directory")
    if not os.access(real, os.R_OK | os.X_OK):
        raise UsageError(
            f"{what} {path} is not readable by this user",
            fix=f"fix its permissions or choose another {flag}",
        )
    return real


def _existing_path(path: Path, what: str, flag: str) -> Path:
    real = canonical(path)
    if not Path(os.path.expanduser(os.fspath(path))).is_absolute():
        raise UsageError(f"{what} {path} is relative", fix=f"give {flag} an absolute path")
    if not real.exists():
        raise UsageError(
            f"{what} {path} does not exist", fix=f"create it first or fix the path given to {flag}"
        )
    return real


def _masks(paths: Iterable[Path]) -> list[MaskedPath]:
    masks: list[MaskedPath] = []
    seen: set[Path] = set()
    for path in paths:
        if path in seen or not os.path.lexists(path):
            continue  # nothing to hide; creating it needs a writable parent, which is checked
        seen.add(path)
        masks.append(MaskedPath(path=path, is_dir=path.is_dir()))
    return masks


def _hidden_by_mask(
    path: Path,
    masked: Sequence[MaskedPath],
    allow_within: Sequence[Path],
    writable: Sequence[Path],
) -> bool:
    """True when the mount that decides what ``path`` shows is a mask (the deepest covering
    mount; at equal depth allow-within beats mask beats writable, as in the mount order). Such
    a path is already empty and read-only; a read-only re-bind of it would EXPOSE the host
    content the mask hides, so it must not be protected that way."""
    best: tuple[int, int] = (-1, -1)
    hidden = False
    layers = (
        (writable, 0, False),
        ([m.path for m in masked], 1, True),
        ([a for a in allow_within if a.exists()], 2, False),
    )
    for paths, rank, is_mask in layers:
        for candidate in paths:
            key = (len(candidate.parts), rank)
            if is_within(path, candidate) and key > best:
                best, hidden = key, is_mask
    return hidden


def _protected_paths(
    *,
    writable: Sequence[Path],
    cargo_homes: Sequence[Path],
    extra: Sequence[Path],
    hidden: Callable[[Path], bool] = lambda path: False,
) -> list[ProtectedPath]:
    wanted: list[tuple[Path, bool]] = []
    for root in writable:
        if root in cargo_homes:
            wanted += [
                (root / name, name in CARGO_HOME_PROTECTED_DIRECTORIES)
                for name in CARGO_HOME_PROTECTED
            ]
            continue
        wanted += [(root / name, name in PROTECTED_DIRECTORY_NAMES) for name in PROTECTED_NAMES]
        wanted += _linked_git_dir_paths(root)
    wanted += [(path, path.is_dir()) for path in extra]

    result: list[ProtectedPath] = []
    seen: set[Path] = set()
    for path, is_dir in wanted:
        protected = _first_missing_or_self(path, is_dir, writable)
        if protected is None or protected.path in seen or hidden(protected.path):
            continue
        seen.add(protected.path)
        result.append(protected)
    return result


def _first_missing_or_self(
    path: Path, is_dir: bool, writable: Sequence[Path]
) -> ProtectedPath | None:
    """The path to mount over: the path itself (canonical) when it exists, else its first
    missing component (so ``.git/hooks`` without ``.git`` protects ``.git``). None when the
    path is not inside a writable root (read-only anyway) or lies below a file.

    Candidates are a canonical writable root plus a few components, so the common case walks
    those components with one lstat each; a symlink among them takes the general path."""
    root = innermost_root(path, writable)
    if root is not None:
        current = root
        for name in path.parts[len(root.parts) :]:
            current = current / name
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                if not stat.S_ISDIR(os.lstat(current.parent).st_mode):
                    return None  # below a file (e.g. .git/hooks when .git is a gitdir file)
                return ProtectedPath(current, is_dir or current != path, exists=False)
            except OSError:
                break  # unreadable: let the general path decide
            if stat.S_ISLNK(mode):
                break
        else:
            return ProtectedPath(path, stat.S_ISDIR(mode) if path != root else True, exists=True)
    return _first_missing_or_self_slow(path, is_dir, writable)


def _first_missing_or_self_slow(
    path: Path, is_dir: bool, writable: Sequence[Path]
) -> ProtectedPath | None:
    """The general case of ``_first_missing_or_self``: symlinks resolved with realpath."""
    if os.path.lexists(path):
        real = canonical(path)
        if not any(is_within(real, root) for root in writable):
            return None
        return ProtectedPath(path=real, is_dir=real.is_dir(), exists=True)
    current = path
    while not os.path.lexists(current.parent):
        current = current.parent
    parent = canonical(current.parent)
    if not parent.is_dir():
        return None  # below a file (e.g. .git/hooks when .git is a worktree's gitdir file)
    if not any(is_within(parent, root) for root in writable):
        return None
    missing_is_dir = is_dir or current != path
    return ProtectedPath(path=parent / current.name, is_dir=missing_is_dir, exists=False)


def _linked_git_dir_paths(root: Path) -> list[tuple[Path, bool]]:
    """For a worktree or submodule, ``.git`` is a file naming the real git dir; protect that
    dir's hooks and config (and the common dir's) too."""
    marker = root / ".git"
    if not marker.is_file():
        return []
    protected: list[tuple[Path, bool]] = [(marker, False)]  # pointing it elsewhere = new hooks
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return protected
    if not text.startswith("gitdir:"):
        return protected
    git_dir = Path(text.removeprefix("gitdir:").strip())
    if not git_dir.is_absolute():
        git_dir = root / git_dir
    git_dirs = [canonical(git_dir)]
    common = git_dirs[0] / "commondir"
    if common.is_file():
        try:
            common_dir = Path(common.read_text(encoding="utf-8").strip())
        except OSError:
            common_dir = None
        if common_dir is not None:
            git_dirs.append(
                canonical(common_dir if common_dir.is_absolute() else git_dirs[0] / common_dir)
            )
    protected += [(d / "hooks", True) for d in git_dirs]
    return protected + [(d / "config", False) for d in git_dirs]


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    result = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            result.append(path)
    return result
