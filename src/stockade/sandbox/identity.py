"""Who a confined command is on the host: never host root.

As root, bubblewrap maps the jail's uid 0 to host uid 0: without capabilities, but still the
owner of every root-owned file, so the command could open ``/proc/sys`` tunables for writing,
read ``0600`` keys under ``/etc`` and leave setuid-root binaries behind. So when stockade runs
as root, the bwrap backend runs the command as a dedicated unprivileged **jail user** instead
(``DEFAULT_JAIL_UID``/``DEFAULT_JAIL_GID``, configurable with ``sandbox.jail_uid`` and
``sandbox.jail_gid``):

* the writable roots are id-mapped read-write, and the home directories and the proxy socket
  directory read-only, so that their owner appears as the jail user (``idmap.py``): the
  command can use them as before, and what it writes lands on disk owned by each root's
  owner (root for root-owned roots);
* everything else is seen with its real owners, so host root-only files are unreadable and
  ``/proc/sys`` is not writable by plain file permissions;
* inside, bwrap presents the jail user as uid 0 (``whoami`` says root, the project looks
  root-owned, as before), which is uid 0 of the jail's own user namespace only.

When that cannot be set up (a filesystem without id-mapped mounts, no CAP_SYS_ADMIN, a writable
root the jail user cannot reach) stockade refuses and names the fix; ``sandbox.root_jail =
true`` is the explicit choice to run as host root anyway, and the posture then says so.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, NamedTuple

from stockade.errors import BackendUnavailable, SandboxUnavailable

if TYPE_CHECKING:  # policy.py imports JailUser from here
    from stockade.sandbox.policy import SandboxPolicy

# The default jail uid and gid. Chosen outside every range something else hands out: regular
# users (1000-60000), systemd's DynamicUser (61184-65519) and container ranges
# (524288-1879048191), the default subordinate ids of useradd (100000-600100000) and systemd's
# foreign range (2147352576-2147418111), and below 2^31 (some programs keep ids signed). At
# start stockade also checks that no user, group or /etc/subuid|subgid range on this machine
# uses it.
DEFAULT_JAIL_UID: Final = 2_000_000_000
DEFAULT_JAIL_GID: Final = 2_000_000_000

ROOT_JAIL_FIX: Final = (
    "set sandbox.root_jail = true in your user settings to run commands as host root "
    "anyway (weaker: setuid bits are still refused, root-only files masked)"
)


class JailUser(NamedTuple):
    """The host uid/gid a root launcher's command runs as."""

    uid: int = DEFAULT_JAIL_UID
    gid: int = DEFAULT_JAIL_GID

    def describe(self) -> str:
        return f"host uid {self.uid}, gid {self.gid}"


_conflicts: dict[JailUser, str | None] = {}


def conflict(user: JailUser) -> str | None:
    """Why ``user`` must not be the jail user on this machine (an account, a group or a
    subordinate id range already uses it), or None. Checked once per process."""
    if user in _conflicts:
        return _conflicts[user]
    found: str | None = None
    if not 0 < user.uid < 4_294_967_295 or not 0 < user.gid < 4_294_967_295:
        found = "the jail uid and gid must be between 1 and 4294967294"
    else:
        found = _account_using(user) or _subordinate_range_using(user)
    _conflicts[user] = found
    return found


def _account_using(user: JailUser) -> str | None:
    import grp
    import pwd

    try:
        return f"uid {user.uid} belongs to the user {pwd.getpwuid(user.uid).pw_name!r}"
    except KeyError:
        pass
    try:
        return f"gid {user.gid} belongs to the group {grp.getgrgid(user.gid).gr_name!r}"
    except KeyError:
        return None


def _subordinate_range_using(user: JailUser) -> str | None:
    for path, wanted in (("/etc/subuid", user.uid), ("/etc/subgid", user.gid)):
        try:
            lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.strip().split(":")
            if len(parts) != 3 or not parts[1].isdigit() or not parts[2].isdigit():
                continue
            first, count = int(parts[1]), int(parts[2])
            if first <= wanted < first + count:
                return f"id {wanted} is in {parts[0]}'s subordinate range in {path}"
    return None


def require_usable(user: JailUser) -> None:
    """Refuse (with the fix) a jail user that something on this machine already uses."""
    problem = conflict(user)
    if problem is not None:
        raise SandboxUnavailable(
            f"the jail user cannot be used here: {problem}",
            fix="choose a free id with sandbox.jail_uid / sandbox.jail_gid in your user settings",
        )


# ---------------------------------------------------------------------------------------------
# Which trees the jail user needs, and whether it can reach them
# ---------------------------------------------------------------------------------------------


class Tree(NamedTuple):
    """A directory the jail user needs: writable (``read_only`` False) or only reachable."""

    path: Path
    read_only: bool


def owner_of(path: Path) -> tuple[int, int]:
    info = os.stat(path)
    return info.st_uid, info.st_gid


def _within(path: Path, root: Path) -> bool:
    inner, outer = str(path), str(root)
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def plan(trees: Iterable[Tree], user: JailUser) -> list[tuple[Path, bool, int, int]]:
    """The id-mapped mounts that give ``user`` the trees: (path, read_only, owner uid, owner
    gid), parents first. A tree inside another with the same owner needs no mount of its own
    unless it must be writable and the outer one is read-only; a tree already owned by the
    jail user needs none."""
    chosen: list[tuple[Path, bool, int, int]] = []
    for tree in sorted(set(trees), key=lambda t: (len(t.path.parts), t.read_only, str(t.path))):
        uid, gid = owner_of(tree.path)
        if (uid, gid) == (user.uid, user.gid):
            continue
        covered = any(
            _within(tree.path, path) and (owner_uid, owner_gid) == (uid, gid)
            and (tree.read_only or not read_only)
            for path, read_only, owner_uid, owner_gid in chosen
        )  # fmt: skip
        if not covered:
            chosen.append((tree.path, tree.read_only, uid, gid))
    return chosen


def unreachable(
    path: Path, user: JailUser, mapped: Sequence[tuple[Path, bool, int, int]]
) -> Path | None:
    """The first directory above ``path`` the jail user cannot search (as it will see it, with
    the id-mapped mounts of ``mapped`` in place), or None."""
    for ancestor in reversed(path.parents):
        try:
            info = os.stat(ancestor)
        except OSError:
            return ancestor
        uid, gid = info.st_uid, info.st_gid
        containing = [m for m in mapped if _within(ancestor, m[0])]
        if containing:  # the innermost mount decides what its owners look like
            _root, _read_only, owner_uid, owner_gid = max(containing, key=lambda m: len(m[0].parts))
            uid = user.uid if uid == owner_uid else uid
            gid = user.gid if gid == owner_gid else gid
        if not _searchable(info.st_mode, uid, gid, user):
            return ancestor
    return None


def _searchable(mode: int, uid: int, gid: int, user: JailUser) -> bool:
    if uid == user.uid:
        return bool(mode & stat.S_IXUSR)
    if gid == user.gid:
        return bool(mode & stat.S_IXGRP)
    return bool(mode & stat.S_IXOTH)


def describe_unreachable(tree: Path, blocker: Path, user: JailUser) -> SandboxUnavailable:
    try:
        info = os.stat(blocker)
        how = f"mode {stat.S_IMODE(info.st_mode):04o}, owner uid {info.st_uid}"
    except OSError as error:
        how = str(error)
    return SandboxUnavailable(
        f"the jail user ({user.describe()}) cannot reach {tree}: {blocker} is not searchable "
        f"for it ({how})",
        fix=f"make {blocker} searchable (chmod o+x {blocker}), run stockade as the user who "
        f"owns {tree}, or {ROOT_JAIL_FIX}",
    )


# ---------------------------------------------------------------------------------------------
# The drop, for one spawn
# ---------------------------------------------------------------------------------------------


class Drop:
    """Everything one spawn needs to run its launcher as the jail user: ``preexec`` for the
    child, the policy as the jail user will see it (masks it could never reach are left out:
    it cannot read them anyway, and bwrap could not mount over them), and ``close`` for the
    launcher's copies of the detached mounts, once the child has started."""

    def __init__(
        self, policy: SandboxPolicy, preexec: Callable[[], None], fds: Sequence[int]
    ) -> None:
        self.policy = policy
        self.preexec = preexec
        self._fds = list(fds)

    def close(self) -> None:
        fds, self._fds = self._fds, []
        for fd in fds:
            os.close(fd)


def _trees_and_mapping(
    policy: SandboxPolicy, user: JailUser
) -> tuple[list[Tree], list[tuple[Path, bool, int, int]]]:
    """The trees the jail user needs and the id-mapped mounts that give them to it."""
    from stockade.sandbox.policy import home_directories

    trees = [Tree(root, read_only=False) for root in policy.writable]
    trees += [  # a home of "/" (some containers) is no home: mapping it would map everything
        Tree(home, read_only=True)
        for home in home_directories()
        if home != Path("/") and home.is_dir()
    ]
    if policy.proxy_socket_dir is not None:
        trees.append(Tree(policy.proxy_socket_dir, read_only=True))
    return trees, plan(trees, user)


def _visible(
    policy: SandboxPolicy, user: JailUser, mapped: Sequence[tuple[Path, bool, int, int]]
) -> SandboxPolicy:
    """Masks the jail user could never reach are left out (bwrap could not mount over them)."""
    return policy._replace(
        masked=tuple(m for m in policy.masked if unreachable(m.path, user, mapped) is None)
    )


def jail_user_view(
    policy: SandboxPolicy,
) -> tuple[SandboxPolicy, tuple[tuple[Path, bool, int, int], ...]]:
    """The policy as ``prepare_drop`` hands it to bwrap and the id-mapped mounts it makes,
    without making any: what a warm jail's plan is compared by (a mask becomes reachable
    when a directory is chmod'ed, a root gets another owner)."""
    if policy.jail_user is None:
        return policy, ()
    _trees, mapped = _trees_and_mapping(policy, policy.jail_user)
    return _visible(policy, policy.jail_user, mapped), tuple(mapped)


def prepare_drop(policy: SandboxPolicy) -> Drop:
    """Plan and make the id-mapped mounts for ``policy.jail_user``; raises SandboxUnavailable
    with the fix when the jail user cannot be given the roots."""
    from stockade.sandbox import idmap

    user = policy.jail_user
    assert user is not None
    require_usable(user)
    trees, mapped = _trees_and_mapping(policy, user)
    for tree in trees:
        blocker = unreachable(tree.path, user, mapped)
        if blocker is not None:
            raise describe_unreachable(tree.path, blocker, user)
    mounts = [idmap.IdmapMount(path, ro, uid, gid) for path, ro, uid, gid in mapped]
    try:
        fds = idmap.detached_mounts(mounts, user.uid, user.gid)
    except idmap.NoUserNamespaces as error:
        raise BackendUnavailable(
            f"bubblewrap cannot run here: {error.strerror}",
            fix="allow user namespaces (sysctl user.max_user_namespaces, or the container's "
            "seccomp profile), or use the landlock backend",
        ) from None
    except idmap.IdmapError as error:
        raise SandboxUnavailable(
            f"cannot run the command as the jail user ({user.describe()}) instead of host "
            f"root: {error.strerror}",
            fix="keep the project on a filesystem with id-mapped mounts (ext4, xfs, btrfs, "
            "tmpfs) and run stockade with CAP_SYS_ADMIN, or " + ROOT_JAIL_FIX,
        ) from None
    preexec = idmap.preexec([m.path for m in mounts], fds, user.uid, user.gid)
    return Drop(_visible(policy, user, mapped), preexec, fds)


def check_running_as(pid: int, user: JailUser) -> None:
    """Host-side proof, before the command starts, that the sandbox's first process runs as
    ``user`` (real, effective, saved and filesystem ids). A process that is already gone
    (killed in its first instants) runs nothing: there is nothing to check, and the jail's
    exit status says what happened."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="ascii", errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return
    except OSError as error:
        raise SandboxUnavailable(
            f"cannot check who the sandbox runs as: {error}", fix="run `stockade doctor`"
        ) from None
    ids = {}
    for line in status.splitlines():
        name, _, value = line.partition(":")
        if name in ("Uid", "Gid"):
            ids[name] = {int(v) for v in value.split()}
    if ids.get("Uid") != {user.uid} or ids.get("Gid") != {user.gid}:
        raise SandboxUnavailable(
            f"the sandbox is not running as the jail user ({user.describe()}): {ids}",
            fix="run `stockade doctor`; report this as a bug",
        )


def posture_identity(policy: SandboxPolicy, *, drops: bool) -> tuple[str, tuple[str, ...]]:
    """What a posture says about who the command is on the host, and the gap it leaves when
    that is host root. ``drops``: the backend runs ``policy.jail_user`` (bwrap does)."""
    if drops and policy.jail_user is not None:
        return f"runs as {policy.jail_user.describe()} (never host root)", ()
    if os.geteuid() != 0:
        return "", ()
    why = (
        "sandbox.root_jail = true"
        if policy.root_jail
        else "this backend cannot switch to the jail user: no id-mapped mounts here"
    )
    return "runs as HOST ROOT", (
        f"the command runs as host root ({why}): root-only files outside the masked table "
        "are readable and what it writes belongs to root; setuid/setgid bits are refused "
        "(seccomp) and the root-only table is masked",
    )
