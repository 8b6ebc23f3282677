"""SandboxPolicy: what a confined command may touch, resolved once per session.

The tables at the top decide what is masked and what is protected; review them here. Everything
is canonicalised with realpath and de-duplicated, so backends compare real paths only.

Order of application (bwrap mounts, Landlock rules): read-only root, read-deny masks,
read-allow-within-deny re-binds, writable roots, write-deny-within-allow and protected paths.
Nested entries resolve "most specific wins" (see ``bwrap.py``).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import pwd
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, NamedTuple

from stockade.errors import UsageError
from stockade.net.mode import NetworkMode as NetworkMode  # re-exported: policies carry it
from stockade.sandbox.environment import confined_environment, credential_kind
from stockade.sandbox.identity import JailUser
from stockade.userdirs import cache_dir, cache_key, cache_key_path, state_paths
from stockade.vocabulary import (
    ANYTHING,
    CARGO_HOME,
    GIT_CONFIG,
    GIT_HOOKS,
    HOME,
    HOME_SECRETS,
    ROOT,
    ROOT_ONLY_SECRETS,
    ProtectedName,
)
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

# Protected names (the table, with the threat of each, where it applies and how a created one
# is judged, is in the shared vocabulary): bound read-only when they exist; judged by the
# post-run guard (stockade.sandbox.guard) when a command creates them.
PROTECTED_NAMES: tuple[str, ...] = tuple(p.name for p in VOCABULARY_PROTECTED if p.where == ROOT)
GLOB_CHARACTERS = frozenset("*?[")


class ProtectedPath(NamedTuple):
    """A protected name that exists: bound read-only as it is (bwrap), or snapshotted and
    restored after each command (Landlock). ``path`` is canonical; ``link`` is the name as
    written when it is a symlink (the guard keeps the link itself from being replaced)."""

    path: Path
    is_dir: bool
    judge: str = ANYTHING
    threat: str = ""
    link: Path | None = None


class GuardedPath(NamedTuple):
    """A protected name that does not exist yet. Mounting over it would need a mount point
    on the host (a leftover), so whatever a command creates there is judged after it.
    ``path`` may hold a glob component (``.git/modules/*/config``)."""

    path: Path
    is_dir: bool
    judge: str = ANYTHING
    threat: str = ""


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
    toolchains: Sequence[str] = ()  # opt-in persistent jail caches (stockade.sandbox.toolchains)
    allow_writable_home: bool = False  # $HOME (or a parent) as a writable root: refused unless
    #                                    set, and then its startup files are protected


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
    cargo_home: Path | None = None  # the host's CARGO_HOME (read-only inside unless a root)
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
    guarded: tuple[GuardedPath, ...] = ()  # protected names that do not exist (yet)
    stores: tuple[Path, ...] = ()  # the host's dependency stores: read-only inside
    toolchain_stores: tuple[Path, ...] = ()  # jail-owned caches (writable, never guarded)
    # (host path, per-session copy without credential lines) for files such as ~/.npmrc
    substitutes: tuple[tuple[Path, Path], ...] = ()
    mask_file: Path | None = None  # an empty, unreadable file for masking files (bwrap)
    # $HOME and the passwd home: their protected names apply where a writable root overlaps
    # them, and their git config may point core.hooksPath into a root
    homes: tuple[Path, ...] = ()

    @property
    def guarded_roots(self) -> tuple[Path, ...]:
        """Writable roots the host's tools see later: all but the private session temp dir
        and the jail-owned toolchain caches."""
        private = {self.session_tmp, *self.toolchain_stores}
        return tuple(root for root in self.writable if root not in private)

    def with_fresh_protection(self) -> SandboxPolicy:
        """Find which protected names exist now (``resolve_policy`` calls this, and a run
        right before it starts: the previous command may have created a repository, whose
        hooks are now protected)."""
        protected, guarded = _protection(
            roots=self.guarded_roots,
            homes=self.homes,
            cargo_homes=[self.cargo_home] if self.cargo_home else [],
            extra=self.write_deny_within_allow,
            hidden=_mask_decides(
                self.masked,
                tuple(a for a in self.read_allow_within_deny if a.exists()),
                self.writable,
            ),
        )
        return self._replace(protected=tuple(protected), guarded=tuple(guarded))

    def with_cwd(self, cwd: Path) -> SandboxPolicy:
        """The same policy run from another directory, which must be inside a writable root."""
        real = _existing_directory(cwd, "working directory", "cwd")
        _require_cwd_inside(real, self.writable)
        return self._replace(cwd=real, env={**self.env, "PWD": str(real)})

    def is_writable(self, path: Path) -> bool:
        """True if ``path`` (canonicalised) lies inside a writable root and is not protected."""
        real = Path(os.path.realpath(path))
        if self.protection_of(real) is not None:
            return False
        return any(is_within(real, root) for root in self.writable)

    def protection_of(self, path: Path) -> ProtectedPath | GuardedPath | None:
        """The protected name ``path`` (canonical) is at or below, existing or not."""
        for item in self.protected:
            if is_within(path, item.path):
                return item
        for guarded in self.guarded:
            if matches_or_below(path, guarded.path):
                return guarded
        return None

    @property
    def shape(self) -> str:
        """What a cached probe result depends on: the kinds of confinement, not the paths."""
        who = f"uid={self.jail_user.uid}:{self.jail_user.gid}" if self.jail_user else "uid=self"
        return f"net={self.network.value},{who}" + (",root-jail" if self.root_jail else "")


def is_within(path: Path | str, root: Path | str) -> bool:
    """``path`` is ``root`` or below it (both canonical, as Paths or strings). Compared as
    strings: ``Path.parents`` builds a Path per ancestor, which made policy resolution a
    visible part of every run."""
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


def matches_or_below(path: Path, pattern: Path) -> bool:
    """``path`` is at or below ``pattern``, whose components may be globs (fnmatch)."""
    if not GLOB_CHARACTERS & set(str(pattern)):
        return is_within(path, pattern)
    from fnmatch import fnmatchcase

    parts, wanted = path.parts, pattern.parts
    return len(parts) >= len(wanted) and all(
        fnmatchcase(part, want) for part, want in zip(parts, wanted, strict=False)
    )


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
    """The host's CARGO_HOME (default ~/.cargo) when it exists: read-only inside the jail
    (a cache the host builds from is a code store; the ``rust`` toolchain preset gives the
    jail a cargo home of its own)."""
    path = Path(env.get("CARGO_HOME") or os.path.expanduser("~/.cargo"))
    return canonical(path) if path.is_dir() else None


def go_module_cache(env: Mapping[str, str]) -> Path | None:
    """GOMODCACHE, only when explicitly set and existing (read-only inside, like cargo's)."""
    value = env.get("GOMODCACHE")
    return canonical(value) if value and Path(value).is_dir() else None


def resolve_policy(
    request: PolicyRequest,
    *,
    session_tmp: Path,
    host_env: Mapping[str, str] | None = None,
    session_root: Path | None = None,
) -> SandboxPolicy:
    """Validate and canonicalise ``request``. Raises UsageError (exit 2) with the fix on bad
    input: missing or unreadable paths, relative paths, a writable root inside a mask, a
    working directory outside every writable root, $HOME (or a parent) as a writable root
    without ``allow_writable_home``. ``session_root`` (the session's private directory, not
    writable inside) receives the per-session copies of ``substitutes``."""
    env = dict(os.environ if host_env is None else host_env)
    project = _existing_directory(request.project, "project directory", "--project")
    cwd = _existing_directory(request.cwd or Path.cwd(), "working directory", "cd")

    session_tmp = canonical(session_tmp)
    cargo = cargo_home(env)
    stores = tuple(store for store in (cargo, go_module_cache(env)) if store is not None)
    toolchain_stores: tuple[Path, ...] = ()
    toolchain_env: dict[str, str] = {}
    if request.toolchains:
        from stockade.sandbox import toolchains

        prepared = toolchains.prepare(request.toolchains, project, env)
        toolchain_stores, toolchain_env = prepared.stores, prepared.env
    extra_writable = [_existing_path(p, "writable path", "--writable") for p in request.writable]
    writable = _unique([project, session_tmp, *toolchain_stores, *extra_writable])
    homes = home_directories()
    if not request.allow_writable_home:
        _refuse_writable_home([project, *extra_writable], homes)

    allow_within = _unique(
        _absolute(p, "read_allow_within_deny") for p in request.read_allow_within_deny
    )
    deny_candidates = [_outside_kernel_filesystems(p) for p in request.read_deny]
    substitutes: list[tuple[Path, Path]] = []
    if request.include_default_masks:
        # built-in entries are absolute already; most do not exist, so look before resolving
        defaults = [canonical(p) for p in default_read_deny() if os.path.lexists(p)]
        if session_root is not None:
            # replaced by a copy instead of masked (a backend that cannot bind the copy at
            # the original path masks it and points the tool at the copy)
            substitutes = _substitutes(homes, session_root)
            replaced = {host for host, _copy in substitutes}
            defaults = [p for p in defaults if p not in replaced]
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
    private = {session_tmp, *toolchain_stores}
    guarded_roots = [w for w in writable if w not in private]
    _require_cwd_inside(cwd, writable)

    child_env, dropped = confined_environment(
        env,
        session_dir=session_tmp,
        passthrough=request.env_passthrough,
        extra=request.env_extra,
    )
    child_env.update(toolchain_env)
    child_env["PWD"] = str(cwd)
    as_root = os.geteuid() == 0
    return SandboxPolicy(
        project=project,
        cwd=cwd,
        session_tmp=session_tmp,
        writable=tuple(writable),
        masked=tuple(masked),
        read_allow_within_deny=tuple(allow_within),
        protected=(),  # found below, by the same call every run makes
        network=request.network,
        env=child_env,
        dropped_env=tuple(variable.name for variable in dropped),
        write_deny_within_allow=deny_within,
        cargo_home=cargo,
        allow_unix_sockets=request.allow_unix_sockets,
        jail_user=request.jail_user if as_root and not request.root_jail else None,
        root_jail=as_root and request.root_jail,
        stores=tuple(s for s in stores if not any(is_within(s, r) for r in guarded_roots)),
        toolchain_stores=toolchain_stores,
        substitutes=tuple(substitutes),
        mask_file=_mask_file(session_root) if session_root is not None else None,
        homes=tuple(homes),
    ).with_fresh_protection()


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


def _refuse_writable_home(roots: Sequence[Path], homes: Sequence[Path]) -> None:
    """$HOME, a parent of it, or / as a writable root puts every startup file, git's and
    ssh's config and ~/.local/bin in reach: refused unless the operator asks for it."""
    for root in roots:
        for home in homes:
            if not is_within(home, root):
                continue
            what = (
                "your home directory" if root == home else f"a parent of your home directory {home}"
            )
            raise UsageError(
                f"writable root {root} is {what}: a command could plant code that your shell, "
                "git, ssh and Python run later",
                fix="run in a project directory, or pass --allow-writable-home "
                "(sandbox.allow_writable_home = true) to allow it with the home directory's "
                "startup files protected",
            )


def _substitutes(homes: Sequence[Path], session_root: Path) -> list[tuple[Path, Path]]:
    """Per-session copies of home files that hold both settings a tool needs and credentials
    (``~/.npmrc``): the credential lines dropped, readable only by this user."""
    import re

    copies: list[tuple[Path, Path]] = []
    directory = session_root / "substitutes"
    for home in homes:
        for secret in HOME_SECRETS:
            source = home / secret.path
            if secret.keep_lines is None or not source.is_file():
                continue
            try:
                lines = source.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue  # unreadable: it stays masked
            pattern = re.compile(secret.keep_lines)
            kept = [
                line for line in lines if pattern.search(line) and credential_kind(line) is None
            ]
            # searchable, not listable, and an unguessable name: a root launcher's jail user
            # must reach the copy (a root session dir is 0711), nobody else can find it
            directory.mkdir(mode=0o711, exist_ok=True)
            directory.chmod(0o711)
            copy = directory / f"{os.urandom(8).hex()}-{source.name.lstrip('.')}"
            copy.write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
            copy.chmod(0o644)
            copies.append((canonical(source), copy))
    return copies


def _mask_file(session_root: Path) -> Path:
    """An empty file nobody can read: masking a file with it makes a read fail with EACCES
    (which stockade can explain) instead of silently returning nothing."""
    path = session_root / "masked-file"
    if not path.exists():
        path.touch(mode=0o000)
        path.chmod(0o000)
    return path


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


@functools.lru_cache(maxsize=8)
def _mask_decides(
    masked: tuple[MaskedPath, ...],
    allow_within: tuple[Path, ...],
    writable: tuple[Path, ...],
) -> Callable[[str], bool]:
    """A test of whether the mount that decides what a path shows is a mask (the deepest
    covering mount; at equal depth allow-within beats mask beats writable, as in the mount
    order). Such a path is already empty and read-only; a read-only re-bind of it would EXPOSE
    the host content the mask hides, so it must not be protected that way. ``allow_within``:
    the allow-within paths that exist (one that does not is no mount). The test depends on
    these mounts alone, so it is kept per mount set and remembers its answers: every command
    asks it again about the same names."""
    layers = [(str(path), (len(path.parts), 0), False) for path in writable]
    layers += [(str(m.path), (len(m.path.parts), 1), True) for m in masked]
    layers += [(str(a), (len(a.parts), 2), False) for a in allow_within]
    answers: dict[str, bool] = {}

    def hidden(path: str) -> bool:
        known = answers.get(path)
        if known is not None:
            return known
        best: tuple[int, int] = (-1, -1)
        is_hidden = False
        for candidate, key, is_mask in layers:
            if key > best and is_within(path, candidate):
                best, is_hidden = key, is_mask
        if len(answers) < MASK_ANSWERS_KEPT:
            answers[path] = is_hidden
        return is_hidden

    return hidden


def _protection(
    *,
    roots: Sequence[Path],
    homes: Sequence[Path],
    cargo_homes: Sequence[Path],
    extra: Sequence[Path],
    hidden: Callable[[str], bool],
) -> tuple[list[ProtectedPath], list[GuardedPath]]:
    """Split the protected names that apply here into those that exist (mount-protected) and
    those that do not (judged after each command). A name applies only inside a root the
    host's tools see later - $HOME and CARGO_HOME names too, so they count only when a
    writable root contains them."""
    wanted: list[tuple[Path, ProtectedName]] = []
    for root in roots:
        wanted += [(root, n) for n in _NAMES_BY_PLACE[ROOT]]
        wanted += _linked_git_dir_names(root)
        wanted += _hooks_path_names(root, homes)
    # $HOME and CARGO_HOME names matter only where a root overlaps them (most runs: nowhere)
    for home in _overlapping(homes, roots):
        wanted += [(home, n) for n in _home_names()]
    for cargo in _overlapping(cargo_homes, roots):
        wanted += [(cargo, n) for n in _NAMES_BY_PLACE[CARGO_HOME]]
    wanted += [
        (path, ProtectedName("", path.is_dir(), "listed in write_deny_within_allow"))
        for path in extra
    ]

    protected: list[ProtectedPath] = []
    guarded: list[GuardedPath] = []
    seen: set[str] = set()
    bound: set[Path] = set()
    prefixes = tuple(str(root).rstrip("/") + "/" for root in roots)
    root_texts = {str(root) for root in roots}
    lookups = _Lookups()
    for base, name in wanted:
        text = f"{base}/{name.name}" if name.name else str(base)
        if text in seen or not (text.startswith(prefixes) or text in root_texts):
            continue
        seen.add(text)
        if hidden(text):
            continue
        path = _path(text)
        pattern = _is_pattern(name.name)
        if pattern or not name.mount:
            guarded.append(GuardedPath(path, name.is_dir, name.judge, name.threat))
        if not name.mount:
            continue
        candidates = _glob(base, name.name) if pattern else [path]
        for candidate in candidates:
            item = _existing(candidate, name, roots, lookups)
            if item is not None and item.path not in bound:
                bound.add(item.path)
                protected.append(item)
            elif item is None and not pattern and lookups.may_be_created(candidate):
                guarded.append(GuardedPath(candidate, name.is_dir, name.judge, name.threat))
    return protected, guarded


MASK_ANSWERS_KEPT: Final = 4096  # per mount set: every protected name, many times over


@functools.lru_cache(maxsize=4096)
def _path(text: str) -> Path:
    """One Path per protected name (a Path is immutable; building it is not free)."""
    return Path(text)


@functools.lru_cache(maxsize=256)
def _is_pattern(name: str) -> bool:
    return bool(GLOB_CHARACTERS & set(name))


class _Lookups:
    """What one protection lookup asks the filesystem more than once (many names share a
    parent directory), asked once per lookup - never across lookups: each must see now."""

    def __init__(self) -> None:
        self._canonical: dict[str, Path] = {}
        self._directory: dict[str, bool] = {}

    def canonical(self, path: Path) -> Path:
        text = str(path)
        found = self._canonical.get(text)
        if found is None:
            found = self._canonical[text] = canonical(text)
        return found

    def may_be_created(self, path: Path) -> bool:
        """False below a file (``.git/hooks`` when ``.git`` is a worktree's gitdir file)."""
        current = os.path.dirname(str(path))
        while True:
            known = self._directory.get(current)
            if known is not None:
                return known
            try:
                answer = stat.S_ISDIR(os.stat(current).st_mode)
            except FileNotFoundError:
                current = os.path.dirname(current)
                continue
            except OSError:
                answer = False
            self._directory[current] = answer
            return answer


_NAMES_BY_PLACE: dict[str, tuple[ProtectedName, ...]] = {
    place: tuple(n for n in VOCABULARY_PROTECTED if n.where == place)
    for place in (ROOT, HOME, CARGO_HOME)
}


def _overlapping(places: Sequence[Path], roots: Sequence[Path]) -> list[Path]:
    return [p for p in places if any(is_within(p, r) or is_within(r, p) for r in roots)]


@functools.cache
def _home_names() -> tuple[ProtectedName, ...]:
    """$HOME's protected names, and every credential store that does not exist yet (a
    created ``~/.aws/config`` or ``~/.kube/config`` names programs the host's CLI runs)."""
    names = list(_NAMES_BY_PLACE[HOME])
    listed = {n.name for n in names}
    names += [
        ProtectedName(s.path, False, f"{s.tool}: a created one can name programs", where=HOME)
        for s in HOME_SECRETS
        if s.path not in listed
    ]
    return tuple(names)


def _glob(base: Path, pattern: str) -> list[Path]:
    """The matches of ``pattern`` below ``base`` (taken literally); one stat when the
    directory above its first wildcard does not exist (most projects: ``.git/worktrees``)."""
    text = str(base)
    above = above_wildcard(f"{text}/{pattern}")
    if above is not None and not os.path.isdir(above):
        return []
    return [Path(p) for p in sorted(glob.glob(glob.escape(text) + "/" + pattern))]


@functools.lru_cache(maxsize=1024)
def above_wildcard(text: str) -> str | None:
    """The directory above the first component of absolute ``text`` with a wildcard (where
    a glob of it starts listing), or None when it has none. When that directory does not
    exist, the glob matches nothing."""
    if not GLOB_CHARACTERS & set(text):
        return None
    parts = text.split("/")
    first = next(i for i, part in enumerate(parts) if GLOB_CHARACTERS & set(part))
    return "/".join(parts[:first]) or "/"


def _existing(
    path: Path, name: ProtectedName, roots: Sequence[Path], lookups: _Lookups
) -> ProtectedPath | None:
    """The canonical protected path when ``path`` exists (through a symlink: its target,
    with the link recorded so the guard keeps the link itself from being swapped); None when
    it does not exist or resolves outside every root with no link to keep."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    link = path if stat.S_ISLNK(info.st_mode) else None
    if link is not None or lookups.canonical(path.parent) != path.parent:
        real = canonical(path)
        inside = any(is_within(real, root) for root in roots)
        if not inside and link is None:
            return None  # read-only there anyway
        try:
            info = os.stat(real)
        except OSError:
            info = os.lstat(path)  # dangling: only the link is kept
        path = real
    return ProtectedPath(path, stat.S_ISDIR(info.st_mode), name.judge, name.threat, link)


def _linked_git_dir_names(root: Path) -> list[tuple[Path, ProtectedName]]:
    """For a worktree or submodule, ``.git`` is a file naming the real git dir: keep the
    pointer from being redirected, and protect that dir's hooks and config (and the common
    dir's) too."""
    marker = root / ".git"
    if not marker.is_file():
        return []
    pointer = ProtectedName(".git", False, "points git at a repository (its config and hooks)")
    found: list[tuple[Path, ProtectedName]] = [(root, pointer)]
    try:
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return found
    if not text.startswith("gitdir:"):
        return found
    git_dir = Path(text.removeprefix("gitdir:").strip())
    git_dirs = [canonical(git_dir if git_dir.is_absolute() else root / git_dir)]
    try:
        common = (git_dirs[0] / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        common = ""
    if common:
        common_dir = Path(common)
        git_dirs.append(
            canonical(common_dir if common_dir.is_absolute() else git_dirs[0] / common_dir)
        )
    hooks = ProtectedName("hooks", True, "the linked repository's hooks", judge=GIT_HOOKS)
    config = ProtectedName("config", False, "the linked repository's config", judge=GIT_CONFIG)
    return found + [(d, hooks) for d in git_dirs] + [(d, config) for d in git_dirs]


def _hooks_path_names(root: Path, homes: Sequence[Path]) -> list[tuple[Path, ProtectedName]]:
    """``core.hooksPath`` (repository, user or system config) pointing into a writable root -
    husky's ``.husky`` - holds hooks the host's git runs: protect that directory like
    ``.git/hooks`` (and, for husky 9's ``.husky/_``, the scripts it sources from its parent)."""
    configs = [root / ".git" / "config", Path("/etc/gitconfig")]
    for home in homes:
        configs += [home / ".gitconfig", home / ".config" / "git" / "config"]
    found: list[tuple[Path, ProtectedName]] = []
    for config in configs:
        try:
            value = _hooks_path(config.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        if not value:
            continue
        directory = Path(os.path.expanduser(value))
        directory = Path(os.path.normpath(root / directory))
        name = ProtectedName(
            "", True, f"core.hooksPath in {config}: git runs the hooks here", judge=GIT_HOOKS
        )
        found.append((directory, name))
        if directory.name == "_":
            found.append((directory.parent, name._replace(judge=ANYTHING)))
    return found


@functools.lru_cache(maxsize=32)
def _hooks_path(text: str) -> str | None:
    """``gitconfig.hooks_path``, remembered by the config's text (read again every time:
    only the parse, the same for the same text, is kept)."""
    from stockade.sandbox.gitconfig import hooks_path

    return hooks_path(text)


def _unique(paths: Iterable[Path]) -> list[Path]:
    seen: set[Path] = set()
    result = []
    for path in paths:
        if path not in seen:
            seen.add(path)
            result.append(path)
    return result
