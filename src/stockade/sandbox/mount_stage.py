"""The mount stage: namespaces and mounts made in the child between fork and exec of bwrap.

Two things change what a confined command sees before bubblewrap starts, and both happen here,
in the child that is about to exec bwrap, so nothing they mount ever exists on the host:

* the root jail (``identity.py``, ``idmap.py``): a private mount namespace, the id-mapped roots
  attached, then the switch to the unprivileged jail user;
* the review layer (``overlay.py``): the user namespace that owns the layer's overlayfs
  superblock is joined, a mount namespace of its own is made, and a clone of the layer is
  attached over the project - as root after the switch to the jail user, unprivileged first.

The launcher prepares everything (fds, byte strings) beforehand; a step makes only syscalls.
A step that fails raises OSError naming what it did; :class:`Stage` also writes that line to a
pipe the launcher reads (``subprocess`` itself reports only "Exception occurred in
preexec_fn"), so the refusal can say why.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import socket
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

# Syscall numbers: the same on x86_64 and aarch64 (the new mount API uses the generic table).
SYS_OPEN_TREE: Final = 428
SYS_MOVE_MOUNT: Final = 429
SYS_FSOPEN: Final = 430
SYS_FSCONFIG: Final = 431
SYS_FSMOUNT: Final = 432
AT_FDCWD: Final = -100
AT_EMPTY_PATH: Final = 0x1000
AT_RECURSIVE: Final = 0x8000
OPEN_TREE_CLONE: Final = 1
OPEN_TREE_CLOEXEC: Final = os.O_CLOEXEC
MOVE_MOUNT_F_EMPTY_PATH: Final = 0x4
FSOPEN_CLOEXEC: Final = 1
FSMOUNT_CLOEXEC: Final = 1
FSCONFIG_SET_FLAG: Final = 0
FSCONFIG_SET_STRING: Final = 1
FSCONFIG_CMD_CREATE: Final = 6
MOUNT_ATTR_NOSUID: Final = 0x2
MOUNT_ATTR_NODEV: Final = 0x4
CLONE_NEWNS: Final = 0x0002_0000
CLONE_NEWUSER: Final = 0x1000_0000
MS_REC: Final = 0x4000
MS_PRIVATE: Final = 1 << 18
PR_SET_DUMPABLE: Final = 4
PR_SET_NO_NEW_PRIVS: Final = 38

Step = Callable[[], None]

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong,
                       ctypes.c_void_p]  # fmt: skip
libc.unshare.argtypes = [ctypes.c_int]
libc.setns.argtypes = [ctypes.c_int, ctypes.c_int]
libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                       ctypes.c_ulong]  # fmt: skip


def errno_error(what: str) -> OSError:
    """An OSError for the failed libc call ``what``, with the errno it left."""
    number = ctypes.get_errno()
    return OSError(number, f"{what}: {os.strerror(number)}")


def _check(result: int, what: str) -> int:
    if result < 0:
        raise errno_error(what)
    return result


# ---------------------------------------------------------------------------------------------
# Steps (each returns the closure the child runs)
# ---------------------------------------------------------------------------------------------


def new_mount_namespace() -> Step:
    """unshare(CLONE_NEWNS), then make every mount private: nothing mounted below may
    propagate back to the namespace it was copied from (the host's)."""

    def enter() -> None:
        _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
        _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")

    return enter


def attach(fd: int, target: Path) -> Step:
    """Attach the detached mount ``fd`` over ``target`` (it can be attached only once)."""
    path = os.fsencode(target)

    def move() -> None:
        moved = libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH)
        _check(moved, f"move_mount({target})")

    return move


def attach_clone(fd: int, target: Path) -> Step:
    """Attach a fresh clone of the detached mount ``fd`` over ``target``: the same superblock
    (one overlay for every command of a session), a mount of this namespace's own."""
    path = os.fsencode(target)

    def clone_and_move() -> None:
        flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE
        clone = _check(libc.syscall(SYS_OPEN_TREE, fd, b"", flags), "cloning the layer mount")
        try:
            moved = libc.syscall(
                SYS_MOVE_MOUNT, clone, b"", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH
            )
            _check(moved, f"move_mount(layer, {target})")
        finally:
            os.close(clone)

    return clone_and_move


def switch_user(uid: int, gid: int) -> Step:
    """Become ``uid``/``gid`` for real, effective and saved ids, with no supplementary
    groups (a root launcher's drop to the jail user)."""

    def switch() -> None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)

    return switch


def no_new_privs() -> Step:
    def set_flag() -> None:
        _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")

    return set_flag


def own_user_namespace(uid: int, gid: int) -> Step:
    """A new user namespace (and mount namespace owned by it) in which ``uid``/``gid`` map to
    themselves and nothing else does; ``setgroups`` is denied, as the kernel requires for an
    unprivileged gid map. The caller keeps its ids, gains the namespace's capabilities until it
    execs (enough to mount overlayfs), and bwrap later nests its own namespace inside."""

    def enter() -> None:
        # a process that switched ids is not dumpable, which makes /proc/self root-owned
        _check(libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")
        _check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare(CLONE_NEWUSER|CLONE_NEWNS)")
        _write_proc("/proc/self/setgroups", "deny")
        _write_proc("/proc/self/uid_map", f"{uid} {uid} 1\n")
        _write_proc("/proc/self/gid_map", f"{gid} {gid} 1\n")
        _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")

    return enter


def join_user_namespace(fd: int) -> Step:
    """setns(2) into the user namespace ``fd``: its owner (this uid, in the parent namespace)
    has every capability there, so the child may mount in a mount namespace it then owns."""

    def join() -> None:
        _check(libc.setns(fd, CLONE_NEWUSER), "setns(user namespace of the layer)")

    return join


def change_directory(path: Path) -> Step:
    """chdir(2): the working directory follows the process into namespaces it makes later, so
    names relative to it resolve where the path itself could no longer be reached."""

    def change() -> None:
        os.chdir(path)

    return change


def _write_proc(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode("ascii"))
    finally:
        os.close(fd)


def sequence(steps: Iterable[Step]) -> Step:
    """One step that runs ``steps`` in order."""
    ordered = tuple(steps)

    def run() -> None:
        for step in ordered:
            step()

    return run


# ---------------------------------------------------------------------------------------------
# Building a filesystem with the new mount API (fsopen / fsconfig / fsmount)
# ---------------------------------------------------------------------------------------------


def detached_filesystem(
    fstype: str, options: Sequence[tuple[str, str | None]], *, mount_flags: int = 0
) -> int:
    """A new, detached mount of a new ``fstype`` superblock configured with ``options``
    (``(key, None)`` is a flag); attached nowhere until someone moves it. Raises OSError with
    the kernel's own explanation (the fs context's log) when the filesystem refuses."""
    context = _check(libc.syscall(SYS_FSOPEN, fstype.encode(), FSOPEN_CLOEXEC), f"fsopen({fstype})")
    try:
        for key, value in options:
            if value is None:
                result = libc.syscall(SYS_FSCONFIG, context, FSCONFIG_SET_FLAG, key.encode(),
                                      None, 0)  # fmt: skip
            else:
                result = libc.syscall(SYS_FSCONFIG, context, FSCONFIG_SET_STRING, key.encode(),
                                      os.fsencode(value), 0)  # fmt: skip
            if result < 0:
                raise _with_log(errno_error(f"{fstype} option {key}"), context)
        if libc.syscall(SYS_FSCONFIG, context, FSCONFIG_CMD_CREATE, None, None, 0) < 0:
            raise _with_log(errno_error(f"creating the {fstype} filesystem"), context)
        return _check(
            libc.syscall(SYS_FSMOUNT, context, FSMOUNT_CLOEXEC, mount_flags), f"fsmount({fstype})"
        )
    finally:
        os.close(context)


def _with_log(error: OSError, context: int) -> OSError:
    """``error`` with the messages the kernel left in the fs context ("e overlayfs: ...")."""
    messages = []
    for _ in range(16):
        try:
            line = os.read(context, 512).decode(errors="replace").strip()
        except OSError:
            break
        if not line:
            break
        messages.append(line[2:] if line[1:2] == " " else line)
    if not messages:
        return error
    return OSError(error.errno, f"{error.strerror} ({'; '.join(messages)})")


def send_fds(channel: socket.socket, fds: Sequence[int]) -> Step:
    """Hand ``fds`` (as they are when the step runs) to the other end of ``channel``."""

    def send() -> None:
        socket.send_fds(channel, [b"fds"], list(fds))

    return send


def receive_fds(channel: socket.socket, count: int) -> list[int]:
    """The fds a child sent with :func:`send_fds` (an empty list if it sent none)."""
    _message, fds, _flags, _address = socket.recv_fds(channel, 16, count)
    return list(fds)


# ---------------------------------------------------------------------------------------------
# The stage as a whole
# ---------------------------------------------------------------------------------------------


class Stage:
    """``preexec_fn`` for a launch: runs the steps in order; on failure the child writes the
    reason to a pipe before subprocess reports its generic error, and :meth:`failure` returns
    it in the launcher. Close it once the child has started (or failed)."""

    def __init__(self, steps: Iterable[Step]) -> None:
        self.steps = tuple(steps)
        self._read, self._write = os.pipe()  # close-on-exec: gone from the child once it execs

    def __call__(self) -> None:
        try:
            for step in self.steps:
                step()
        except BaseException as error:
            with contextlib.suppress(OSError):
                os.write(self._write, str(error).encode(errors="replace")[:2000])
            raise

    def failure(self) -> str | None:
        """What the child said before it failed (None when it said nothing)."""
        self._close_write()
        if self._read < 0:
            return None
        os.set_blocking(self._read, False)
        try:
            said = os.read(self._read, 4000).decode(errors="replace").strip()
        except OSError:
            said = ""
        return said or None

    def _close_write(self) -> None:
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def close(self) -> None:
        self._close_write()
        if self._read >= 0:
            os.close(self._read)
            self._read = -1
