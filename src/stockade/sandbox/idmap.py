"""Id-mapped mounts, via ctypes: how a root launcher lets an unprivileged uid use its roots.

An id-mapped mount shows a directory tree with its owners translated: files owned by host root
on disk appear owned by the jail uid, and what the jail uid creates lands on disk owned by
root. The kernel interface (Linux 5.12+; ext4, xfs, btrfs, tmpfs since 6.3 and others):

1. a user namespace whose uid/gid maps say "owner -> jail uid" (identity for every other id);
   only its file descriptor is needed, so a helper process creates it and exits;
2. ``open_tree(path, OPEN_TREE_CLONE | AT_RECURSIVE)``: a detached copy of the tree at path;
3. ``mount_setattr(fd, MOUNT_ATTR_IDMAP, userns_fd)``: the copy's ids go through that map;
4. ``move_mount(fd, path)``: attach it over the original, in a private mount namespace.

Steps 1-3 run in the launcher (a detached mount affects nobody until it is attached, so a
filesystem that cannot be id-mapped is found and named here, before anything starts). Step 4,
``unshare(CLONE_NEWNS)`` and the switch to the jail uid run in the child between fork and exec
(:func:`preexec`), so the mounts exist only in that child's namespace.
"""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from stockade.sandbox import mount_stage

# The new mount API's numbers and the libc handle are the launch stage's (mount_stage); these
# only id-mapping uses (the same on x86_64 and aarch64)
_SYS_MOUNT_SETATTR: Final = 442
_MOUNT_ATTR_RDONLY: Final = 0x1
_MOUNT_ATTR_IDMAP: Final = 0x0010_0000
_MOUNT_ATTR_SIZE_VER0: Final = 32
_LAST_ID: Final = 4_294_967_294  # (uid_t)-1 is "no id"


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class IdmapError(OSError):
    """An id-mapped mount cannot be made; ``str(self)`` names the path and the reason."""


class NoUserNamespaces(IdmapError):
    """This process may not create user namespaces at all (so bwrap could not run either)."""


def _errno_error(what: str) -> IdmapError:
    number = ctypes.get_errno()
    return IdmapError(number, f"{what}: {os.strerror(number)}")


def id_map_lines(owner: int, target: int) -> str:
    """A uid_map/gid_map: ``owner`` (on disk) appears as ``target``; every other id maps to
    itself except ``target`` itself (its outside id is taken), which appears as nobody."""
    if owner == target:
        return f"0 0 {_LAST_ID + 1}\n"
    extents = [(owner, target, 1)]
    start = 0
    for excluded in sorted({owner, target}):
        if excluded > start:
            extents.append((start, start, excluded - start))
        start = excluded + 1
    if start <= _LAST_ID:
        extents.append((start, start, _LAST_ID + 1 - start))
    return "".join(f"{inside} {outside} {count}\n" for inside, outside, count in extents)


_namespaces: dict[tuple[int, int, int, int], int] = {}
_namespaces_lock = threading.Lock()


def mapping_namespace(owner_uid: int, owner_gid: int, uid: int, gid: int) -> int:
    """An fd of a user namespace mapping ``owner_uid/gid`` to ``uid/gid`` (kept for the life of
    the process: one helper process per distinct mapping)."""
    key = (owner_uid, owner_gid, uid, gid)
    with _namespaces_lock:
        if key not in _namespaces:
            _namespaces[key] = _new_mapping_namespace(owner_uid, owner_gid, uid, gid)
        return _namespaces[key]


def _new_mapping_namespace(owner_uid: int, owner_gid: int, uid: int, gid: int) -> int:

    def enter_new_namespace() -> None:
        if mount_stage.libc.unshare(mount_stage.CLONE_NEWUSER) != 0:
            raise _errno_error("unshare(CLONE_NEWUSER)")

    try:
        helper = subprocess.Popen(
            ["/bin/cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
            preexec_fn=enter_new_namespace,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError) as error:
        raise NoUserNamespaces(
            errno.EPERM, f"user namespaces are not permitted here ({error})"
        ) from None
    try:
        with open(f"/proc/{helper.pid}/uid_map", "w", encoding="ascii") as uid_map:
            uid_map.write(id_map_lines(owner_uid, uid))
        with open(f"/proc/{helper.pid}/gid_map", "w", encoding="ascii") as gid_map:
            gid_map.write(id_map_lines(owner_gid, gid))
        fd = os.open(f"/proc/{helper.pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    except OSError as error:
        raise IdmapError(error.errno or errno.EPERM, f"cannot map ids: {error}") from None
    finally:
        assert helper.stdin is not None
        helper.stdin.close()
        helper.wait()
    return fd


class IdmapMount(NamedTuple):
    """One tree to show id-mapped: its on-disk owner appears as the jail user."""

    path: Path
    read_only: bool
    owner_uid: int
    owner_gid: int


def detached_mounts(mounts: Sequence[IdmapMount], uid: int, gid: int) -> list[int]:
    """Detached, id-mapped copies of ``mounts`` (fds, in order). Raises IdmapError naming the
    first path that cannot be id-mapped; nothing is attached anywhere."""
    fds: list[int] = []
    try:
        for mount in mounts:
            fd = mount_stage.libc.syscall(
                mount_stage.SYS_OPEN_TREE,
                mount_stage.AT_FDCWD,
                os.fsencode(mount.path),
                mount_stage.OPEN_TREE_CLONE
                | mount_stage.OPEN_TREE_CLOEXEC
                | mount_stage.AT_RECURSIVE,
            )
            if fd < 0:
                raise _errno_error(f"open_tree({mount.path})")
            fds.append(fd)
            flags = _MOUNT_ATTR_IDMAP | mount_stage.MOUNT_ATTR_NOSUID | mount_stage.MOUNT_ATTR_NODEV
            attr = _MountAttr(
                attr_set=flags | (_MOUNT_ATTR_RDONLY if mount.read_only else 0),
                userns_fd=mapping_namespace(mount.owner_uid, mount.owner_gid, uid, gid),
            )
            result = mount_stage.libc.syscall(
                _SYS_MOUNT_SETATTR,
                fd,
                b"",
                mount_stage.AT_EMPTY_PATH | mount_stage.AT_RECURSIVE,
                ctypes.byref(attr),
                _MOUNT_ATTR_SIZE_VER0,
            )
            if result != 0:
                raise _errno_error(f"id-mapping {mount.path}")
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def preexec(targets: Sequence[Path], fds: Sequence[int], uid: int, gid: int) -> Callable[[], None]:
    """The child's part, between fork and exec: a private mount namespace, the detached
    mounts attached over ``targets``, then the jail uid/gid (no groups) and no_new_privs.

    Everything is prepared here; the child makes only syscalls (``mount_stage.py``, shared with
    the review layer). An error raises OSError in the child, which subprocess reports - the
    command never starts as root."""
    return mount_stage.sequence(
        [
            mount_stage.new_mount_namespace(),
            *(mount_stage.attach(fd, path) for fd, path in zip(fds, targets, strict=True)),
            mount_stage.switch_user(uid, gid),
            mount_stage.no_new_privs(),
        ]
    )
