"""The Landlock backend's supervisor: metadata calls performed on the jail's behalf.

Landlock has no access right for metadata, so without this chmod, chown, utimes and extended
attributes succeed on every file the jailed user owns - the masked private key made
world-readable, a host config made executable; as root, every root-owned file. The seccomp
filter sends these calls here instead (``SECCOMP_RET_USER_NOTIF``, rows in ``seccomp.py``).
The supervisor runs in the run's launcher, outside the jail, and for every call:

1. reads the arguments once from the caller's memory and takes its own reference to the
   objects they name (``pidfd_getfd`` for an fd, ``/proc/TID/cwd`` for ``AT_FDCWD``), then
   asks the kernel whether the notification is still live (``SECCOMP_IOCTL_NOTIF_ID_VALID``),
   so nothing read can have come from a recycled pid;
2. resolves the path itself to an ``O_PATH`` fd and decides from *that fd's* location (its
   ``/proc/self/fd`` link, never the caller's string) whether it lies in a writable root and
   outside every protected and masked path;
3. performs the call on that fd (``AT_EMPTY_PATH``, ``/proc/self/fd/N``) and answers with its
   result. The kernel never re-reads the caller's memory, so swapping the string, the fd or
   a symlink after the check changes nothing (the user-notification TOCTOU).

It acts with the jail's credentials (the launcher of a root jail drops its capabilities
first), so the kernel's own permission checks answer exactly as for the caller. When the
supervisor is gone the listener closes and every supervised call fails with ENOSYS: it fails
closed. Answers: the kernel's, or EPERM outside the writable roots.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import stat
import struct
import sys
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from stockade.sandbox.policy import is_within

# --------------------------------------------------------------------------------------------
# What each supervised call is, as data: where its target and operands are
# --------------------------------------------------------------------------------------------


class Call(NamedTuple):
    """How a supervised syscall names its target and what it does to it.

    ``target``: ``path`` (arg 0 is a path, relative to the cwd), ``at`` (arg 0 a dirfd, arg
    1 a path), ``fd`` (arg 0 an fd). ``operands``: indices of the remaining arguments.
    """

    action: str  # chmod | chown | utimes | setxattr | removexattr | listen | connect
    target: str
    follow: bool  # follow a final symlink (unless the flags argument says otherwise)
    operands: tuple[int, ...]
    flags: int | None = None  # index of the AT_* flags argument
    times: str = ""  # layout of the times argument: utimbuf | timeval | timespec


CALLS: Final[dict[str, Call]] = {
    "chmod": Call("chmod", "path", True, (1,)),
    "fchmod": Call("chmod", "fd", True, (1,)),
    "fchmodat": Call("chmod", "at", True, (2,)),
    "fchmodat2": Call("chmod", "at", True, (2,), flags=3),
    "chown": Call("chown", "path", True, (1, 2)),
    "lchown": Call("chown", "path", False, (1, 2)),
    "fchown": Call("chown", "fd", True, (1, 2)),
    "fchownat": Call("chown", "at", True, (2, 3), flags=4),
    "utime": Call("utimes", "path", True, (1,), times="utimbuf"),
    "utimes": Call("utimes", "path", True, (1,), times="timeval"),
    "futimesat": Call("utimes", "at", True, (2,), times="timeval"),
    "utimensat": Call("utimes", "at", True, (2,), flags=3, times="timespec"),
    "setxattr": Call("setxattr", "path", True, (1, 2, 3, 4)),
    "lsetxattr": Call("setxattr", "path", False, (1, 2, 3, 4)),
    "fsetxattr": Call("setxattr", "fd", True, (1, 2, 3, 4)),
    "removexattr": Call("removexattr", "path", True, (1,)),
    "lremovexattr": Call("removexattr", "path", False, (1,)),
    "fremovexattr": Call("removexattr", "fd", True, (1,)),
    "listen": Call("listen", "fd", True, (1,)),
    "connect": Call("connect", "fd", True, (1, 2)),
}

# Native syscall numbers (checked against libseccomp by the unit tests).
SYSCALL_NUMBERS: Final[dict[str, dict[str, int]]] = {
    "x86_64": {
        "chmod": 90,
        "fchmod": 91,
        "fchmodat": 268,
        "fchmodat2": 452,
        "chown": 92,
        "lchown": 94,
        "fchown": 93,
        "fchownat": 260,
        "utime": 132,
        "utimes": 235,
        "futimesat": 261,
        "utimensat": 280,
        "setxattr": 188,
        "lsetxattr": 189,
        "fsetxattr": 190,
        "removexattr": 197,
        "lremovexattr": 198,
        "fremovexattr": 199,
        "listen": 50,
        "connect": 42,
    },
    "aarch64": {
        "fchmod": 52,
        "fchmodat": 53,
        "fchmodat2": 452,
        "fchown": 55,
        "fchownat": 54,
        "utimensat": 88,
        "setxattr": 5,
        "lsetxattr": 6,
        "fsetxattr": 7,
        "removexattr": 14,
        "lremovexattr": 15,
        "fremovexattr": 16,
        "listen": 201,
        "connect": 203,
    },
}

SETID_BITS: Final = stat.S_ISUID | stat.S_ISGID  # refused everywhere: they act on the host
PATH_MAX: Final = 4096
XATTR_NAME_MAX: Final = 255
XATTR_SIZE_MAX: Final = 65536
AT_FDCWD: Final = -100
AT_SYMLINK_NOFOLLOW: Final = 0x100
AT_EMPTY_PATH: Final = 0x1000
PRIVATE_OBJECTS: Final = ("pipe:", "socket:", "anon_inode:")  # fd links with no host path
DELETED: Final = " (deleted)"
MAX_RECORDED_DENIALS: Final = 16
SOCKADDR_MAX: Final = 128  # sizeof(struct sockaddr_storage)
PROXY_HOST: Final = "127.0.0.1"  # where the allow-list proxy listens

# --------------------------------------------------------------------------------------------
# The kernel interface: seccomp user notification, pidfds, another process's memory
# --------------------------------------------------------------------------------------------


class _SeccompData(ctypes.Structure):
    _fields_ = [
        ("nr", ctypes.c_int),
        ("arch", ctypes.c_uint32),
        ("instruction_pointer", ctypes.c_uint64),
        ("args", ctypes.c_uint64 * 6),
    ]


class _Notification(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("pid", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("data", _SeccompData),
    ]


class _Response(ctypes.Structure):
    _fields_ = [
        ("id", ctypes.c_uint64),
        ("val", ctypes.c_int64),
        ("error", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
    ]


class _IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


_NOTIF_RECV: Final = 0xC050_2100  # _IOWR('!', 0, struct seccomp_notif)
_NOTIF_SEND: Final = 0xC018_2101  # _IOWR('!', 1, struct seccomp_notif_resp)
_NOTIF_ID_VALID: Final = 0x4008_2102  # _IOW('!', 2, __u64)
_NOTIF_SET_FLAGS: Final = 0x4008_2104  # _IOW('!', 4, __u64), Linux 6.6
_USER_NOTIF_FD_SYNC_WAKE_UP: Final = 1  # wake the supervisor on the caller's CPU
_SYS_PIDFD_OPEN: Final = 434
_SYS_PIDFD_GETFD: Final = 438
_PIDFD_THREAD: Final = os.O_EXCL  # Linux 6.9: a pidfd for a thread
_PAGE: Final = os.sysconf("SC_PAGE_SIZE")

_libc = ctypes.CDLL(None, use_errno=True)
_ioctl = _libc.ioctl
_ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
_ioctl.restype = ctypes.c_int
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_process_vm_readv = _libc.process_vm_readv
_process_vm_readv.argtypes = [
    ctypes.c_int,
    ctypes.POINTER(_IoVec),
    ctypes.c_ulong,
    ctypes.POINTER(_IoVec),
    ctypes.c_ulong,
    ctypes.c_ulong,
]
_process_vm_readv.restype = ctypes.c_ssize_t
_fchownat = _libc.fchownat
_fchownat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint, ctypes.c_uint, ctypes.c_int]
_utimensat = _libc.utimensat
_utimensat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int]
_libc_connect = _libc.connect
_libc_connect.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_uint]
_futimens = _libc.futimens  # glibc's utimensat() refuses a NULL path
_futimens.argtypes = [ctypes.c_int, ctypes.c_void_p]


_READ_BUFFER = ctypes.create_string_buffer(PATH_MAX)  # the launcher is single-threaded


class CallError(Exception):
    """The supervised call fails with this errno."""

    def __init__(self, err: int, why: str = "") -> None:
        super().__init__(err, why)
        self.errno = err
        self.why = why


class Stale(Exception):
    """The notification is no longer live (the caller died or was interrupted): no answer."""


def _check(result: int) -> int:
    if result < 0:
        raise CallError(ctypes.get_errno())
    return result


def _os_call(action: Callable[[], object]) -> None:
    try:
        action()
    except OSError as error:
        raise CallError(error.errno or errno.EIO) from None


class Tracee:
    """The calling thread of one notification: its memory, cwd and fds, each taken once and
    validated against the notification before use."""

    def __init__(self, listener: int, notification_id: int, tid: int) -> None:
        self.listener = listener
        self.id = notification_id
        self.tid = tid
        self._pidfd: int | None = None
        self.owned: list[int] = []

    def validate(self) -> None:
        """Everything taken so far came from the caller: it is still blocked in this call."""
        value = ctypes.c_uint64(self.id)
        if _ioctl(self.listener, _NOTIF_ID_VALID, ctypes.byref(value)) != 0:
            raise Stale

    def read(self, address: int, size: int) -> bytes:
        """`size` bytes at `address`, or fewer where the mapping ends (EFAULT if none)."""
        if size == 0:
            return b""
        if address == 0:
            raise CallError(errno.EFAULT)
        buffer = _READ_BUFFER if size <= len(_READ_BUFFER) else ctypes.create_string_buffer(size)
        local = _IoVec(ctypes.addressof(buffer), size)
        pages = (address + size - 1) // _PAGE - address // _PAGE + 1
        remote = (_IoVec * pages)()
        start, end = address, address + size
        for index in range(pages):  # one element per page: a partial read stops at a page
            stop = min(end, (start // _PAGE + 1) * _PAGE)
            remote[index].base, remote[index].len = start, stop - start
            start = stop
        count = _process_vm_readv(self.tid, ctypes.byref(local), 1, remote, pages, 0)
        if count <= 0:
            raise CallError(errno.EFAULT)
        return buffer.raw[:count]

    def read_string(self, address: int, limit: int, too_long: int) -> bytes:
        """A NUL-terminated string of at most `limit` bytes (NUL included)."""
        data = self.read(address, limit)
        end = data.find(b"\0")
        if end < 0:
            raise CallError(too_long if len(data) == limit else errno.EFAULT)
        return data[:end]

    def fd(self, number: int) -> int:
        """Our own duplicate of the caller's fd `number` (the same open file)."""
        if self._pidfd is None:
            self._pidfd = self._open_pidfd()
        dup = int(_syscall(ctypes.c_long(_SYS_PIDFD_GETFD), self._pidfd, number & 0xFFFF_FFFF, 0))
        if dup < 0:
            err = ctypes.get_errno()
            raise CallError(errno.EBADF if err in (errno.EBADF, errno.ESRCH) else err)
        self.owned.append(dup)
        return dup

    def _open_pidfd(self) -> int:
        pidfd = int(_syscall(ctypes.c_long(_SYS_PIDFD_OPEN), self.tid, _PIDFD_THREAD))
        if pidfd < 0 and ctypes.get_errno() == errno.EINVAL:  # before Linux 6.9: by process
            pidfd = int(_syscall(ctypes.c_long(_SYS_PIDFD_OPEN), self.tgid(), 0))
        if pidfd < 0:
            raise CallError(ctypes.get_errno() or errno.ESRCH)
        self.owned.append(pidfd)
        return pidfd

    def cwd(self) -> int:
        try:
            fd = os.open(f"/proc/{self.tid}/cwd", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as error:
            raise CallError(error.errno or errno.ESRCH) from None
        self.owned.append(fd)
        return fd

    def tgid(self) -> int:
        try:
            with open(f"/proc/{self.tid}/status", "rb") as status:
                for line in status:
                    if line.startswith(b"Tgid:"):
                        return int(line.split()[1])
        except OSError:
            pass
        raise Stale

    def close(self) -> None:
        for fd in self.owned:
            os.close(fd)
        self.owned.clear()


# --------------------------------------------------------------------------------------------
# Where a change may land
# --------------------------------------------------------------------------------------------


class WritableTree(NamedTuple):
    """The writable roots minus what stays read-only inside them (canonical paths)."""

    roots: tuple[str, ...]
    read_only: tuple[str, ...] = ()  # protected and masked paths

    def allows(self, path: str) -> bool:
        return any(is_within(path, root) for root in self.roots) and not any(
            is_within(path, inner) for inner in self.read_only
        )


def location(fd: int) -> str:
    """Where our fd points, from our own /proc/self/fd link (the caller cannot change it)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


def may_change(fd: int, tree: WritableTree, *, callers_own: bool) -> bool:
    """True when the object behind `fd` lies in the writable tree - or, when `fd` is a copy
    of one of the caller's own fds (`callers_own`), is a private object with no host path (a
    pipe, socket, anonymous inode, memfd). A path that resolved to such an object went
    through a /proc magic link, possibly one of ours: never."""
    where = location(fd)
    if where.startswith(PRIVATE_OBJECTS):
        return callers_own
    if not where.startswith("/"):
        return False  # unreachable from our root, or unknown: never
    if where.endswith(DELETED):
        try:
            unlinked = os.fstat(fd).st_nlink == 0
        except OSError:
            return False
        if unlinked and where.startswith("/memfd:"):
            return callers_own
        where = where[: -len(DELETED)]
    return tree.allows(where)


# --------------------------------------------------------------------------------------------
# The supervisor
# --------------------------------------------------------------------------------------------


class Supervisor:
    """Answers the notifications of one listener fd (the launcher polls ``fileno()``)."""

    def __init__(
        self,
        listener: int,
        tree: WritableTree,
        *,
        proxy_port: int | None = None,
        machine: str | None = None,
    ) -> None:
        self.listener = listener
        self.tree = tree
        self.proxy_port = proxy_port  # the only TCP endpoint connect() may reach
        numbers = SYSCALL_NUMBERS[machine or os.uname().machine]
        self._calls = {number: (name, CALLS[name]) for name, number in numbers.items()}
        self.handled = 0
        self.denials: list[str] = []
        self.denied = 0
        flags = ctypes.c_uint64(_USER_NOTIF_FD_SYNC_WAKE_UP)
        _ioctl(listener, _NOTIF_SET_FLAGS, ctypes.byref(flags))  # a hint; older kernels: no

    def fileno(self) -> int:
        return self.listener

    def handle(self) -> None:
        """Receive one notification and answer it (nothing when it went stale)."""
        notification = _Notification()
        if _ioctl(self.listener, _NOTIF_RECV, ctypes.byref(notification)) != 0:
            return  # ENOENT: the caller was interrupted before we got it; EINTR: poll again
        tracee = Tracee(self.listener, notification.id, notification.pid)
        try:
            result = self._answer(tracee, notification.data)
            error = 0
        except CallError as failure:
            result, error = 0, -failure.errno
            if failure.why:
                self._record(failure.why)
        except Stale:  # answered anyway: a stale id gets ENOENT, a live caller never hangs
            result, error = 0, -errno.EPERM
        finally:
            tracee.close()
        self.handled += 1
        response = _Response(notification.id, result, error, 0)
        _ioctl(self.listener, _NOTIF_SEND, ctypes.byref(response))  # ENOENT: caller gone

    def _record(self, why: str) -> None:
        self.denied += 1
        if len(self.denials) < MAX_RECORDED_DENIALS:
            self.denials.append(why)

    def _answer(self, tracee: Tracee, data: _SeccompData) -> int:
        known = self._calls.get(data.nr)
        if known is None:
            raise CallError(errno.ENOSYS)
        name, call = known
        args = [int(a) for a in data.args]
        target = _Target.take(tracee, call, args)
        operands = _Operands.take(tracee, call, args)
        tracee.validate()  # from here on nothing is read from the caller again
        fd = target.open(tracee)
        if call.action == "listen":
            return _listen(fd, operands.number(0))
        if call.action == "connect":
            return _connect(fd, operands.value, self.proxy_port)
        if not may_change(fd, self.tree, callers_own=target.path is None or not target.path):
            where = location(fd).removesuffix(DELETED) or "?"
            raise CallError(errno.EPERM, f"{name} {where}: outside the writable roots")
        _ACTIONS[call.action](fd, target, operands)
        return 0


class _Target(NamedTuple):
    """What a call acts on: a path resolved against a base fd, or one of the caller's fds."""

    base: int | None  # caller's dirfd number; None: AT_FDCWD
    path: bytes | None  # None: the fd itself
    follow: bool
    empty_ok: bool  # AT_EMPTY_PATH: an empty path means the base itself
    fd_call: bool  # fchmod/fchown/fsetxattr/...: the kernel's fd semantics (O_PATH: EBADF)

    @classmethod
    def take(cls, tracee: Tracee, call: Call, args: Sequence[int]) -> _Target:
        flags = args[call.flags] & 0xFFFF_FFFF if call.flags is not None else 0
        if flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH):
            raise CallError(errno.EINVAL)
        follow = call.follow and not flags & AT_SYMLINK_NOFOLLOW
        empty_ok = bool(flags & AT_EMPTY_PATH)
        if call.target == "fd":
            return cls(_int32(args[0]), None, follow, empty_ok, True)
        base = None if call.target == "path" else _int32(args[0])
        pointer = args[0] if call.target == "path" else args[1]
        if call.action == "utimes" and call.times == "timespec" and pointer == 0:
            if base is None or base == AT_FDCWD:
                raise CallError(errno.EFAULT)
            if flags:
                raise CallError(errno.EINVAL)
            return cls(base, None, follow, empty_ok, True)  # utimensat(fd, NULL, ...)
        path = tracee.read_string(pointer, PATH_MAX, errno.ENAMETOOLONG)
        if not path and not empty_ok:
            raise CallError(errno.ENOENT)
        if path.startswith(b"/proc/self") or path.startswith(b"/proc/thread-self"):
            path = _own_proc(path, tracee)
        return cls(base, path, follow, empty_ok, False)

    def open(self, tracee: Tracee) -> int:
        """Our fd for the object (O_PATH for paths): the one object the decision is about."""
        if self.path is None:  # the caller's fd itself
            fd = tracee.fd(self.base if self.base is not None else -1)
            tracee.validate()
            return fd
        if not self.path:  # AT_EMPTY_PATH: the dirfd itself
            fd = tracee.cwd() if self.base in (None, AT_FDCWD) else tracee.fd(self.base or 0)
            tracee.validate()
            return fd
        if self.path.startswith(b"/"):
            base = AT_FDCWD
        else:
            base = tracee.cwd() if self.base in (None, AT_FDCWD) else tracee.fd(self.base or 0)
            tracee.validate()  # the base fd came from the caller too
        flags = os.O_PATH | os.O_CLOEXEC | (0 if self.follow else os.O_NOFOLLOW)
        try:
            fd = os.open(self.path, flags, dir_fd=base)
        except OSError as error:
            raise CallError(error.errno or errno.ENOENT) from None
        tracee.owned.append(fd)
        return fd


def _own_proc(path: bytes, tracee: Tracee) -> bytes:
    """/proc/self means the caller, not us: glibc's lchmod goes through /proc/self/fd/N."""
    for prefix, replacement in (
        (b"/proc/thread-self", f"/proc/{tracee.tgid()}/task/{tracee.tid}".encode()),
        (b"/proc/self", f"/proc/{tracee.tgid()}".encode()),
    ):
        if path == prefix or path.startswith(prefix + b"/"):
            return replacement + path[len(prefix) :]
    return path


class _Operands(NamedTuple):
    """The rest of a call's arguments, copied out of the caller: numbers and buffers."""

    numbers: tuple[int, ...]
    times: bytes | None = None  # two struct timespec, or None for "now"
    name: bytes = b""
    value: bytes = b""

    def number(self, index: int) -> int:
        return self.numbers[index]

    @classmethod
    def take(cls, tracee: Tracee, call: Call, args: Sequence[int]) -> _Operands:
        numbers = tuple(args[i] for i in call.operands)
        if call.action == "utimes":
            return cls(numbers, _times(tracee, call.times, numbers[0]))
        if call.action == "connect":
            size = numbers[1] & 0xFFFF_FFFF
            if size > SOCKADDR_MAX:
                raise CallError(errno.EINVAL)
            address = tracee.read(numbers[0], size) if size else b""
            if len(address) != size:
                raise CallError(errno.EFAULT)
            return cls(numbers, value=address)
        if call.action in ("setxattr", "removexattr"):
            name = tracee.read_string(numbers[0], XATTR_NAME_MAX + 1, errno.ERANGE)
            if not name:
                raise CallError(errno.ERANGE)
            if call.action == "removexattr":
                return cls(numbers, name=name)
            pointer, size, flags = numbers[1], numbers[2], numbers[3]
            if flags & ~0x3 & 0xFFFF_FFFF:  # XATTR_CREATE | XATTR_REPLACE
                raise CallError(errno.EINVAL)
            if size > XATTR_SIZE_MAX:
                raise CallError(errno.E2BIG)
            value = tracee.read(pointer, size) if size else b""
            if len(value) != size:
                raise CallError(errno.EFAULT)
            return cls(numbers, name=name, value=value)
        return cls(numbers)


_UTIME_NOW: Final = (1 << 30) - 1


def _times(tracee: Tracee, layout: str, pointer: int) -> bytes | None:
    """The times argument as two struct timespec (the kernel's utimensat layout)."""
    if pointer == 0:
        return None
    if layout == "timespec":
        raw = tracee.read(pointer, 32)
        if len(raw) != 32:
            raise CallError(errno.EFAULT)
        return raw
    if layout == "utimbuf":  # two time_t: access, modification
        raw = tracee.read(pointer, 16)
        if len(raw) != 16:
            raise CallError(errno.EFAULT)
        atime, mtime = struct.unpack("<qq", raw)
        return struct.pack("<4q", atime, 0, mtime, 0)
    raw = tracee.read(pointer, 32)  # two struct timeval: seconds, microseconds
    if len(raw) != 32:
        raise CallError(errno.EFAULT)
    a_sec, a_usec, m_sec, m_usec = struct.unpack("<4q", raw)
    if not (0 <= a_usec < 1_000_000 and 0 <= m_usec < 1_000_000):
        raise CallError(errno.EINVAL)
    return struct.pack("<4q", a_sec, a_usec * 1000, m_sec, m_usec * 1000)


def _int32(value: int) -> int:
    """An int argument (fd, dirfd) as the kernel reads it: the low 32 bits, signed."""
    low = value & 0xFFFF_FFFF
    return low - (1 << 32) if low & 0x8000_0000 else low


def _id(value: int) -> int:
    """A uid_t/gid_t argument; -1 (all bits set) means "leave unchanged"."""
    low = value & 0xFFFF_FFFF
    return -1 if low == 0xFFFF_FFFF else low


def _magic(fd: int) -> str:
    return f"/proc/self/fd/{fd}"


def _is_symlink(fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.fstat(fd).st_mode)
    except OSError:
        return False


def _chmod(fd: int, target: _Target, operands: _Operands) -> None:
    mode = operands.number(0) & 0o7777
    if mode & SETID_BITS:
        raise CallError(errno.EPERM, "chmod: setuid/setgid bits are refused in the sandbox")
    if target.fd_call:
        _os_call(lambda: os.fchmod(fd, mode))
    elif _is_symlink(fd):
        raise CallError(errno.EOPNOTSUPP)  # Linux cannot chmod a symlink
    else:
        _os_call(lambda: os.chmod(_magic(fd), mode))


def _chown(fd: int, target: _Target, operands: _Operands) -> None:
    uid, gid = _id(operands.number(0)), _id(operands.number(1))
    if target.fd_call:
        _os_call(lambda: os.fchown(fd, uid, gid))
    else:
        _check(_fchownat(fd, b"", uid & 0xFFFF_FFFF, gid & 0xFFFF_FFFF, AT_EMPTY_PATH))


def _utimes(fd: int, target: _Target, operands: _Operands) -> None:
    times = operands.times
    buffer = ctypes.create_string_buffer(times, 32) if times is not None else None
    pointer = ctypes.addressof(buffer) if buffer is not None else None
    if target.fd_call:
        _check(_futimens(fd, pointer))
    else:
        _check(_utimensat(fd, b"", pointer, AT_EMPTY_PATH))


def _setxattr(fd: int, target: _Target, operands: _Operands) -> None:
    flags = operands.number(3) & 0x3
    if target.fd_call:
        _os_call(lambda: os.setxattr(fd, operands.name, operands.value, flags))
    elif _is_symlink(fd):
        raise CallError(errno.EPERM)  # user.* cannot sit on a symlink; the rest needs caps
    else:
        _os_call(lambda: os.setxattr(_magic(fd), operands.name, operands.value, flags))


def _removexattr(fd: int, target: _Target, operands: _Operands) -> None:
    if target.fd_call:
        _os_call(lambda: os.removexattr(fd, operands.name))
    elif _is_symlink(fd):
        raise CallError(errno.EPERM)
    else:
        _os_call(lambda: os.removexattr(_magic(fd), operands.name))


def _listen(fd: int, backlog: int) -> int:
    """listen() on AF_UNIX only: on an unbound TCP socket it would bind every address."""
    try:
        family = socket.socket(fileno=os.dup(fd))
    except OSError as error:
        raise CallError(error.errno or errno.ENOTSOCK) from None
    try:
        if family.family != socket.AF_UNIX:
            raise CallError(errno.EPERM, "listen on a TCP socket: not in this sandbox")
        _os_call(lambda: family.listen(_int32(backlog)))
    finally:
        family.close()
    return 0


def _connect(fd: int, address: bytes, proxy_port: int | None) -> int:
    """connect() for the jail: TCP only to the allow-list proxy, never to another host on
    its port (Landlock filters ports, not addresses); no AF_UNIX (abstract sockets would skip
    Landlock's scope). Performed on our duplicate of the caller's socket, with the address we
    checked, so the kernel never re-reads the caller's."""
    family = int.from_bytes(address[:2], sys.byteorder) if len(address) >= 2 else -1
    if family in (socket.AF_INET, socket.AF_INET6):
        host, port = _inet_endpoint(family, address)
        if proxy_port is None or port != proxy_port or host != PROXY_HOST:
            raise CallError(
                errno.EACCES, f"connect {host}:{port}: the network is limited to its proxy"
            )
    elif family not in (socket.AF_UNSPEC, socket.AF_NETLINK):
        raise CallError(errno.EPERM, f"connect (address family {family}): not in this sandbox")
    buffer = ctypes.create_string_buffer(address, len(address))
    return _check(_libc_connect(fd, buffer, len(address)))


def _inet_endpoint(family: int, address: bytes) -> tuple[str, int]:
    """(host, port) of a sockaddr_in / sockaddr_in6; a v4-mapped v6 address as IPv4."""
    if family == socket.AF_INET:
        if len(address) < 16:
            raise CallError(errno.EINVAL)
        return socket.inet_ntop(socket.AF_INET, address[4:8]), int.from_bytes(address[2:4], "big")
    if len(address) < 24:
        raise CallError(errno.EINVAL)
    host = socket.inet_ntop(socket.AF_INET6, address[8:24])
    return host.removeprefix("::ffff:"), int.from_bytes(address[2:4], "big")


_ACTIONS: Final[dict[str, Callable[[int, _Target, _Operands], None]]] = {
    "chmod": _chmod,
    "chown": _chown,
    "utimes": _utimes,
    "setxattr": _setxattr,
    "removexattr": _removexattr,
}
