"""The seccomp filter every confined command runs under.

Namespaces and Landlock leave kernel attack surface reachable: ptrace, io_uring, new user
namespaces, the mount API, keyrings, eBPF, TIOCSTI terminal injection, and AF_UNIX sockets
(docker.sock, the session bus and tmux sockets are known full escapes), and sockets of any
family. This module turns the tables below (the deny table, the socket allow-list, the
Landlock-only rows) into a classic-BPF program and delivers it three ways:

* :func:`filter_fd` — a sealed memfd for bubblewrap's ``--seccomp FD``;
* :func:`preexec_installer` — ``no_new_privs`` + the filter, loaded
  in a forked child before ``exec``;
* :func:`supervised_installer` — the same with a user-notification listener, for the
  Landlock backend, whose supervisor performs the metadata calls (``supervisor.py``).

Default action: allow. Listed syscalls: fail with the listed errno, or go to the supervisor.
Any other architecture or ABI (i386 via ``int 0x80``, x32 on x86_64, arm32 on aarch64): the
process is killed. Only x86_64 and aarch64 are supported natively.

Compiling with libseccomp costs tens of milliseconds (most of it importing pyseccomp), so the
compiled program is cached on disk, keyed by (arch, libseccomp version, table hash, options),
written atomically and authenticated on read with a MAC whose key no jail can read
(``userdirs.mac``); a warm run never imports pyseccomp. Anything that prevents building or
loading the filter raises :class:`~stockade.errors.SandboxUnavailable`: a command never runs
without it.

A program in the cache is loaded into the next run's filter, so the cache directory is
read-only inside every jail (the policy protects stockade's state like ``.stockade/``) and a
program whose MAC does not verify is compiled again, never loaded.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final, NamedTuple

try:  # the builtin module: hashlib would also load OpenSSL (~2.5 ms on every command)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without it
    from hashlib import blake2b

from stockade.errors import SandboxUnavailable

# --------------------------------------------------------------------------------------------
# The deny table. One row per rule; a syscall may appear on several rows (they are OR-ed).
# `args` = ((argument index, mask, value), ...): the rule matches when every
# (arg & mask) == value.
# --------------------------------------------------------------------------------------------

TIOCSTI: Final = 0x5412  # push a byte into the terminal's input queue: types commands for you
TIOCLINUX: Final = 0x541C  # Linux console tricks, including selection paste (same effect)
AF_UNIX: Final = 1
AF_INET: Final = 2
AF_INET6: Final = 10
AF_NETLINK: Final = 16
SOCK_STREAM: Final = 1
SOCK_DGRAM: Final = 2
SOCK_RAW: Final = 3
SOCK_SEQPACKET: Final = 5
IPPROTO_TCP: Final = 6
IPPROTO_UDP: Final = 17
NETLINK_ROUTE: Final = 0
MSG_FASTOPEN: Final = 0x2000_0000
LOW_32_BITS: Final = 0xFFFF_FFFF  # ioctl cmd / socket domain are ints: the kernel ignores the
#                                   high half, so attackers set high bits to dodge a plain EQ.
CLONE_SIGHAND: Final = 0x0000_0800

NAMESPACE_CLONE_FLAGS: Final[dict[str, int]] = {
    "CLONE_NEWNS": 0x0002_0000,
    "CLONE_NEWCGROUP": 0x0200_0000,
    "CLONE_NEWUTS": 0x0400_0000,
    "CLONE_NEWIPC": 0x0800_0000,
    "CLONE_NEWUSER": 0x1000_0000,
    "CLONE_NEWPID": 0x2000_0000,
    "CLONE_NEWNET": 0x4000_0000,
    "CLONE_NEWTIME": 0x0000_0080,
}


class DenyRule(NamedTuple):
    """One row of the deny table: `syscall` fails with `errno` (optionally only on args)."""

    syscall: str
    errno: int
    reason: str
    args: tuple[tuple[int, int, int], ...] = ()  # ((index, mask, value), ...)
    above: tuple[tuple[int, int], ...] = ()  # ((index, value), ...): arg > value, all 64 bits


def _eperm(reason: str, *names: str) -> tuple[DenyRule, ...]:
    return tuple(DenyRule(name, errno.EPERM, reason) for name in names)


DENY_TABLE: Final[tuple[DenyRule, ...]] = (
    *_eperm(
        "read/write other processes' memory", "ptrace", "process_vm_readv", "process_vm_writev"
    ),
    *_eperm(
        "io_uring bypasses seccomp for the operations it performs; frequent kernel CVEs",
        "io_uring_setup",
        "io_uring_enter",
        "io_uring_register",
    ),
    *_eperm("new or foreign namespaces reach kernel surface the jail hides", "unshare", "setns"),
    *_eperm(
        "(re)mounting could undo the jail's filesystem view",
        "mount",
        "umount2",
        "pivot_root",
        "open_tree",
        "move_mount",
        "fsopen",
        "fsconfig",
        "fsmount",
        "fspick",
        "mount_setattr",
    ),
    *_eperm(
        "kernel keyrings are shared state outside the jail", "keyctl", "add_key", "request_key"
    ),
    *_eperm(
        "eBPF and perf: large kernel attack surface, kernel memory reads", "bpf", "perf_event_open"
    ),
    *_eperm("userfaultfd is the classic primitive for kernel race exploits", "userfaultfd"),
    *_eperm(
        "loading a new kernel or kernel modules",
        "kexec_load",
        "kexec_file_load",
        "init_module",
        "finit_module",
        "delete_module",
    ),
    *_eperm(
        "host-level operations (matter when the Landlock backend runs as root)",
        "reboot",
        "swapon",
        "swapoff",
        "acct",
        "iopl",
        "ioperm",
    ),
    *_eperm(
        "opens any file by handle, bypassing paths ('shocker' container escape)",
        "open_by_handle_at",
    ),
    DenyRule(
        "ioctl",
        errno.EPERM,
        "TIOCSTI injects keystrokes into the user's terminal",
        args=((1, LOW_32_BITS, TIOCSTI),),
    ),
    DenyRule(
        "ioctl",
        errno.EPERM,
        "TIOCLINUX can paste into the console",
        args=((1, LOW_32_BITS, TIOCLINUX),),
    ),
    *(
        DenyRule(
            "clone",
            errno.EPERM,
            f"clone({flag}) is unshare by another name",
            args=((0, value, value),),
        )
        for flag, value in NAMESPACE_CLONE_FLAGS.items()
    ),
    DenyRule(
        "clone3",
        errno.ENOSYS,
        "flags live in memory seccomp cannot inspect; libc falls "
        "back to clone(), which is checked (same as Docker and Flatpak)",
    ),
)

# --------------------------------------------------------------------------------------------
# setuid/setgid bits: refused on every backend, always. A file the jail writes into a writable
# root belongs to that root's owner on the host (root, for a root launcher), so a setuid bit
# would hand that owner's privileges to any local user who runs it. mkdir/mkdirat need no rule:
# the kernel drops setuid/setgid from their mode (a directory only inherits setgid from its
# parent, which gives nobody a privilege); chmod cannot tell a directory from a file, so
# ``chmod g+s DIR`` is refused too. openat2's mode sits in a struct seccomp cannot read: it
# fails with ENOSYS, so callers fall back to openat, which is checked.
# --------------------------------------------------------------------------------------------

S_ISUID: Final = 0o4000
S_ISGID: Final = 0o2000
O_CREAT: Final = 0o100  # the same on x86_64 and aarch64
O_TMPFILE_BIT: Final = 0o20000000  # __O_TMPFILE: unnamed file, linkable later
SETID_BITS: Final = (S_ISUID, S_ISGID)

# syscall -> index of its mode argument (chmod family: the new mode; creation: the file mode).
SETID_MODE_ARGUMENT: Final[dict[str, int]] = {
    "chmod": 1,
    "fchmod": 1,
    "fchmodat": 2,
    "fchmodat2": 2,
    "creat": 1,
    "mknod": 1,
    "mknodat": 2,
}
# open/openat use their mode only when creating: (flags argument, mode argument).
SETID_OPEN_ARGUMENTS: Final[dict[str, tuple[int, int]]] = {"open": (1, 2), "openat": (2, 3)}

SETID_RULES: Final[tuple[DenyRule, ...]] = (
    *(
        DenyRule(
            syscall,
            errno.EPERM,
            "setuid/setgid bits: a file the jail writes would run with its host owner's "
            "privileges (root, for a root launcher)",
            args=((index, bit, bit),),
        )
        for syscall, index in SETID_MODE_ARGUMENT.items()
        for bit in SETID_BITS
    ),
    *(
        DenyRule(
            syscall,
            errno.EPERM,
            "creating a file with setuid/setgid bits",
            args=((flags, creating, creating), (mode, bit, bit)),
        )
        for syscall, (flags, mode) in SETID_OPEN_ARGUMENTS.items()
        for creating in (O_CREAT, O_TMPFILE_BIT)
        for bit in SETID_BITS
    ),
    DenyRule(
        "openat2",
        errno.ENOSYS,
        "its mode lives in memory seccomp cannot inspect; libc falls back to openat(), "
        "which is checked",
    ),
)


# --------------------------------------------------------------------------------------------
# Sockets: an allow-list. socket() and socketpair() get exactly the families, types and
# protocols below; anything else fails with EPERM. MPTCP, SCTP and SMC speak over TCP ports
# but are not TCP to Landlock (MPTCP even falls back to plain TCP), VSOCK reaches the
# hypervisor host from any network namespace, and AF_PACKET, TIPC, RDS, AF_ALG, Bluetooth,
# CAN, XDP, ... are kernel surface that builds, tests and package managers do not use.
# --------------------------------------------------------------------------------------------


class SocketAllowance(NamedTuple):
    """One allowed (family, type, protocol) combination, with why it is needed."""

    family: int
    types: tuple[int, ...]  # socket()'s type argument without SOCK_NONBLOCK / SOCK_CLOEXEC
    protocols: tuple[int, ...]
    why: str


NETLINK_ROUTE_SOCKETS: Final = SocketAllowance(
    AF_NETLINK,
    (SOCK_RAW, SOCK_DGRAM),
    (NETLINK_ROUTE,),
    "interface and address queries: getifaddrs(), getaddrinfo(AI_ADDRCONFIG), Node's "
    "os.networkInterfaces(); changing them needs CAP_NET_ADMIN, which the jail lacks",
)
UNIX_SOCKETS: Final = SocketAllowance(
    AF_UNIX,
    (SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET),
    (0,),
    "AF_UNIX sockets reach docker.sock, the session bus, tmux: escapes "
    "(allowed by sandbox.allow_unix_sockets = true)",
)
# The row of the compiled allow-list that refuses AF_UNIX when it is not allowed.
UNIX_SOCKET_RULE: Final = DenyRule(
    "socket", errno.EPERM, UNIX_SOCKETS.why, args=((0, LOW_32_BITS, AF_UNIX),)
)
# Where Landlock's TCP port rules are the network filter (no network namespace): TCP only.
TCP_SOCKETS: Final[tuple[SocketAllowance, ...]] = (
    SocketAllowance(AF_INET, (SOCK_STREAM,), (0, IPPROTO_TCP), "TCP, filtered by Landlock"),
    SocketAllowance(AF_INET6, (SOCK_STREAM,), (0, IPPROTO_TCP), "TCP, filtered by Landlock"),
    NETLINK_ROUTE_SOCKETS,
)
# Inside a network namespace (bwrap), or with the network allowed: UDP as well (DNS, QUIC).
IP_SOCKETS: Final[tuple[SocketAllowance, ...]] = (
    SocketAllowance(AF_INET, (SOCK_STREAM,), (0, IPPROTO_TCP), "TCP"),
    SocketAllowance(AF_INET, (SOCK_DGRAM,), (0, IPPROTO_UDP), "UDP"),
    SocketAllowance(AF_INET6, (SOCK_STREAM,), (0, IPPROTO_TCP), "TCP"),
    SocketAllowance(AF_INET6, (SOCK_DGRAM,), (0, IPPROTO_UDP), "UDP"),
    NETLINK_ROUTE_SOCKETS,
)
# socketpair() makes two connected ends and reaches nothing: AF_UNIX only, always (asyncio,
# libuv and curl use it for their self-pipes, Node for its child processes' stdio).
SOCKETPAIR_SOCKETS: Final[tuple[SocketAllowance, ...]] = (
    UNIX_SOCKETS._replace(why="a connected pair reaches nothing outside"),
)
SOCK_TYPE_MASK: Final = 0xF  # the low bits of the type argument; the rest are flags


def socket_allow_list(*, allow_unix_sockets: bool, tcp_only: bool) -> tuple[SocketAllowance, ...]:
    """What socket() may create: TCP (plus UDP unless `tcp_only`), netlink route queries,
    and AF_UNIX when allowed."""
    allowed = TCP_SOCKETS if tcp_only else IP_SOCKETS
    return (*allowed, UNIX_SOCKETS) if allow_unix_sockets else allowed


def _allow_list_rules(syscall: str, allowed: tuple[SocketAllowance, ...]) -> list[DenyRule]:
    """Deny rows equivalent to `allowed`: seccomp compares arguments, it cannot say "none of",
    so every value below the largest allowed one that is not allowed gets a row and
    everything above it one more (compared on all 64 bits, so high bits never dodge it)."""
    out: list[DenyRule] = []

    def deny(
        reason: str, args: tuple[tuple[int, int, int], ...], above: tuple[int, int] | None = None
    ) -> None:
        out.append(DenyRule(syscall, errno.EPERM, reason, args, (above,) if above else ()))

    families = sorted({a.family for a in allowed})
    why = f"{syscall}(): only {', '.join(_FAMILY_NAMES[f] for f in families)} (an allow-list)"
    deny(why, (), above=(0, families[-1]))
    for family in range(families[-1]):
        if family in families:
            continue
        if family == AF_UNIX and syscall == "socket":
            out.append(UNIX_SOCKET_RULE)  # refused for its own reason
        else:
            deny(why, ((0, LOW_32_BITS, family),))
    for family in families:
        same = [a for a in allowed if a.family == family]
        kinds = sorted({t for a in same for t in a.types})
        name = _FAMILY_NAMES[family]
        for sock_type in range(SOCK_TYPE_MASK + 1):
            if sock_type not in kinds:
                deny(
                    f"{syscall}({name}): only types {kinds}",
                    ((0, LOW_32_BITS, family), (1, SOCK_TYPE_MASK, sock_type)),
                )
        for sock_type in kinds:
            protocols = sorted({p for a in same if sock_type in a.types for p in a.protocols})
            reason = f"{syscall}({name}, type {sock_type}): only protocols {protocols}"
            match = ((0, LOW_32_BITS, family), (1, SOCK_TYPE_MASK, sock_type))
            deny(reason, match, above=(2, protocols[-1]))
            for protocol in range(protocols[-1]):
                if protocol not in protocols:
                    deny(reason, (*match, (2, LOW_32_BITS, protocol)))
    return out


_FAMILY_NAMES: Final = {
    AF_UNIX: "AF_UNIX",
    AF_INET: "AF_INET",
    AF_INET6: "AF_INET6",
    AF_NETLINK: "AF_NETLINK",
}


def socket_rules(*, allow_unix_sockets: bool, tcp_only: bool) -> tuple[DenyRule, ...]:
    """The socket() and socketpair() rows for these options."""
    allowed = socket_allow_list(allow_unix_sockets=allow_unix_sockets, tcp_only=tcp_only)
    return (
        *_allow_list_rules("socket", allowed),
        *_allow_list_rules("socketpair", SOCKETPAIR_SOCKETS),
    )


# --------------------------------------------------------------------------------------------
# Without a network namespace (the Landlock backend with the network denied or allow-listed),
# two more ways around Landlock's TCP rules, which check connect() and bind() only:
# --------------------------------------------------------------------------------------------

LANDLOCK_NETWORK_RULES: Final[tuple[DenyRule, ...]] = (
    *(
        DenyRule(
            name,
            errno.EPERM,
            "TCP Fast Open (MSG_FASTOPEN) connects from sendto/sendmsg without the connect() "
            "Landlock checks",
            args=((index, MSG_FASTOPEN, MSG_FASTOPEN),),
        )
        for name, index in (("sendto", 3), ("sendmsg", 2), ("sendmmsg", 3))
    ),
)
LISTEN_RULE: Final = DenyRule(
    "listen",
    errno.EPERM,
    "listen() on an unbound TCP socket binds a random port on every address without the "
    "bind() Landlock checks",
)


# --------------------------------------------------------------------------------------------
# Metadata under Landlock, which has no right for it: chmod, chown, utimes and xattrs would
# succeed on any file the user owns (as root: every root-owned file). The Landlock backend
# sends them to its supervisor (sandbox/supervisor.py), which performs them itself when the
# file lies in a writable root and refuses them elsewhere. What it does not handle is denied.
# --------------------------------------------------------------------------------------------


class SupervisedRule(NamedTuple):
    """A syscall the supervisor performs on the jail's behalf (SECCOMP_RET_USER_NOTIF)."""

    syscall: str
    reason: str
    args: tuple[tuple[int, int, int], ...] = ()  # as in DenyRule
    above: tuple[tuple[int, int], ...] = ()


METADATA_REASON: Final = "metadata change: performed by the supervisor inside writable roots only"
# The chmod family, by the index of its mode argument. Only modes without setuid/setgid go to
# the supervisor: libseccomp lets an unconditional rule shadow the conditional ones of the
# same call, so a mode with either bit meets the EPERM rows of SETID_RULES instead.
SETID_MASK: Final = 0o6000
CHMOD_MODE_ARGUMENT: Final[dict[str, int]] = {
    "chmod": 1,
    "fchmod": 1,
    "fchmodat": 2,
    "fchmodat2": 2,
}
SUPERVISED_METADATA: Final[tuple[SupervisedRule, ...]] = (
    *(
        SupervisedRule(name, METADATA_REASON, args=((index, SETID_MASK, 0),))
        for name, index in CHMOD_MODE_ARGUMENT.items()
    ),
    *(
        SupervisedRule(name, METADATA_REASON)
        for name in (
            "chown",
            "lchown",
            "fchown",
            "fchownat",
            "utime",
            "utimes",
            "futimesat",
            "utimensat",
            "setxattr",
            "lsetxattr",
            "fsetxattr",
            "removexattr",
            "lremovexattr",
            "fremovexattr",
        )
    ),
)
SUPERVISED_LISTEN: Final = SupervisedRule(
    "listen", "listen(): allowed on AF_UNIX sockets only, performed by the supervisor"
)
SUPERVISED_CONNECT: Final = SupervisedRule(
    "connect",
    "connect(): Landlock filters TCP by port only; the supervisor connects to the allow-list "
    "proxy's address alone (127.0.0.1), never another host on that port",
)

# Syscalls too new for libseccomp 2.5, by number: from 424 on x86_64 and aarch64 share one
# table. (A foreign-architecture compile, used by the unit tests, skips them.)
NEW_SYSCALL_NUMBERS: Final[dict[str, int]] = {
    "setxattrat": 463,
    "removexattrat": 466,
    "file_setattr": 469,
}
# inode flag ioctls: FS_IOC_SETFLAGS (both sizes), FS_IOC_FSSETXATTR, FS_IOC_SETVERSION (both
# sizes), FS_IOC_ENABLE_VERITY, FS_IOC_SET_ENCRYPTION_POLICY. They work on a read-only fd.
INODE_FLAG_IOCTLS: Final[dict[str, int]] = {
    "FS_IOC_SETFLAGS": 0x4008_6602,
    "FS_IOC32_SETFLAGS": 0x4004_6602,
    "FS_IOC_FSSETXATTR": 0x401C_5820,
    "FS_IOC_SETVERSION": 0x4008_7602,
    "FS_IOC32_SETVERSION": 0x4004_7602,
    "FS_IOC_ENABLE_VERITY": 0x4080_6685,
    "FS_IOC_SET_ENCRYPTION_POLICY": 0x800C_6613,
}
UNSUPERVISED_METADATA_RULES: Final[tuple[DenyRule, ...]] = (
    *(
        DenyRule(
            name,
            errno.ENOSYS,
            "metadata calls newer than the supervisor: ENOSYS makes libc fall back to the "
            "supervised ones",
        )
        for name in NEW_SYSCALL_NUMBERS
    ),
    *(
        DenyRule(
            "ioctl",
            errno.EPERM,
            f"{name} changes inode flags even through a read-only fd",
            args=((1, LOW_32_BITS, cmd),),
        )
        for name, cmd in INODE_FLAG_IOCTLS.items()
    ),
)

SUPPORTED_MACHINES: Final[dict[str, str]] = {"x86_64": "X86_64", "aarch64": "AARCH64"}

# A cached program: magic line, a MAC (userdirs.mac: keyed BLAKE2b over the file name and the
# program, with the key no jail can read), then the program itself.
_CACHE_MAGIC: Final = b"stockade-seccomp-bpf/2\n"
_DIGEST_SIZE: Final = 32
_MAC_PURPOSE: Final = "seccomp-filter"
_BPF_INSTRUCTION_SIZE: Final = 8
_BPF_MAXINSNS: Final = 4096

_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_SET_SECCOMP: Final = 22
_SECCOMP_MODE_FILTER: Final = 2


class FilterOptions(NamedTuple):
    """What a filter is built for (see :func:`rules`)."""

    allow_unix_sockets: bool
    network_by_landlock: bool = False
    supervise: bool = False


def rules(
    *, allow_unix_sockets: bool, network_by_landlock: bool = False, supervise: bool = False
) -> tuple[DenyRule, ...]:
    """The deny rows the filter is built from for these options.

    `network_by_landlock`: no network namespace, the network is denied or allow-listed by
    Landlock's TCP rules (TCP-only sockets, no Fast Open, no autobinding listen()).
    `supervise`: the Landlock backend's supervisor handles metadata calls (see
    :func:`supervised_rules`); the calls it cannot handle are denied.
    """
    table = (
        *DENY_TABLE,
        *SETID_RULES,
        *socket_rules(allow_unix_sockets=allow_unix_sockets, tcp_only=network_by_landlock),
    )
    if network_by_landlock:
        table = (*table, *LANDLOCK_NETWORK_RULES)
        if not (allow_unix_sockets and supervise):  # listen() has no use but AF_UNIX here
            table = (*table, LISTEN_RULE)
    if supervise:
        table = (*table, *UNSUPERVISED_METADATA_RULES)
    return table


def supervised_rules(
    *, allow_unix_sockets: bool, network_by_landlock: bool = False, supervise: bool = False
) -> tuple[SupervisedRule, ...]:
    """The syscalls the supervisor handles for these options (none unless `supervise`)."""
    if not supervise:
        return ()
    if not network_by_landlock:
        return SUPERVISED_METADATA
    # With AF_UNIX allowed, connect() stays Landlock's alone: the supervisor could not connect
    # a unix socket for the jail without skipping Landlock's abstract-socket scope.
    network = (SUPERVISED_LISTEN,) if allow_unix_sockets else (SUPERVISED_CONNECT,)
    return (*SUPERVISED_METADATA, *network)


# --------------------------------------------------------------------------------------------
# Building
# --------------------------------------------------------------------------------------------


def _machine() -> str:
    machine = os.uname().machine
    if machine not in SUPPORTED_MACHINES:
        raise SandboxUnavailable(
            f"seccomp filter: architecture {machine!r} is not supported "
            f"(only {', '.join(SUPPORTED_MACHINES)})",
            fix="run on x86_64 or aarch64, or choose backend = none explicitly",
        )
    return machine


_libseccomp_version_memo: list[str] = []


def libseccomp_version() -> str:
    """libseccomp's version via a bare dlopen (importing pyseccomp costs ~20 ms)."""
    if _libseccomp_version_memo:
        return _libseccomp_version_memo[0]
    import ctypes

    class _Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint)]

    try:
        lib = ctypes.CDLL("libseccomp.so.2")
    except OSError as exc:
        raise SandboxUnavailable(
            f"seccomp filter cannot be built: libseccomp is not installed ({exc})",
            fix="install libseccomp (Debian/Ubuntu: apt install libseccomp2)",
        ) from None
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    v = lib.seccomp_version().contents
    version = f"{v.major}.{v.minor}.{v.micro}"
    _libseccomp_version_memo.append(version)
    return version


def _table_digest(table: tuple[DenyRule, ...]) -> str:
    rows = [(r.syscall, r.errno, r.args, r.above) for r in table]
    return blake2b(repr(rows).encode(), digest_size=16).hexdigest()


# Where distributions install libseccomp; its file identity keys the cache without loading it.
_LIBSECCOMP_PATHS: Final = (
    "/usr/lib/x86_64-linux-gnu/libseccomp.so.2",
    "/usr/lib/aarch64-linux-gnu/libseccomp.so.2",
    "/usr/lib64/libseccomp.so.2",
    "/lib64/libseccomp.so.2",
    "/usr/lib/libseccomp.so.2",
)


def _libseccomp_identity() -> str:
    """What identifies the installed libseccomp: the file it resolves to (device, inode, size,
    mtime) when it is in a standard place - a stat, where asking it for its version costs a
    ctypes import and a dlopen on every command - else its version."""
    for candidate in _LIBSECCOMP_PATHS:
        try:
            real = os.path.realpath(candidate)
            st = os.stat(real)
        except OSError:
            continue
        return f"{real}:{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
    return libseccomp_version()


def cache_key(
    *,
    allow_unix_sockets: bool,
    network_by_landlock: bool = False,
    supervise: bool = False,
    machine: str | None = None,
) -> str:
    """What a cached program depends on, hashed: arch, libseccomp, the table, the options."""
    options = FilterOptions(allow_unix_sockets, network_by_landlock, supervise)
    material = (
        _CACHE_MAGIC.decode().strip(),
        machine or _machine(),
        _libseccomp_identity(),
        _table_digest(rules(**options._asdict())),
        sorted(supervised_rules(**options._asdict())),
        tuple(options),
    )
    return blake2b(repr(material).encode(), digest_size=16).hexdigest()


def compile_program(
    *,
    allow_unix_sockets: bool,
    network_by_landlock: bool = False,
    supervise: bool = False,
    machine: str | None = None,
) -> bytes:
    """Compile the filter with libseccomp (slow path: imports pyseccomp).

    `machine` other than the native one is for tests: libseccomp can emit a program for a
    foreign architecture, which lets unit tests check the aarch64 program on x86_64.
    """
    import tempfile

    machine = machine or _machine()
    try:
        import pyseccomp as sc
    except (ImportError, RuntimeError) as exc:  # pyseccomp raises RuntimeError without the lib
        raise SandboxUnavailable(
            f"seccomp filter cannot be built: {exc}",
            fix="install libseccomp (apt install libseccomp2) and the pyseccomp package",
        ) from None
    arch = getattr(sc.Arch, SUPPORTED_MACHINES[machine])
    native = arch == sc.system_arch()
    options = FilterOptions(allow_unix_sockets, network_by_landlock, supervise)
    try:
        flt = sc.SyscallFilter(sc.ALLOW)
        if not native:
            flt.add_arch(arch)
            flt.remove_arch(sc.Arch.NATIVE)
        # Anything not native (i386, x32, arm32) is killed: the rules below only name native
        # syscall numbers, so another ABI would otherwise walk straight past them.
        flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        actions: list[tuple[int, DenyRule | SupervisedRule]] = [
            (sc.ERRNO(rule.errno), rule) for rule in rules(**options._asdict())
        ]
        actions += [(sc.NOTIFY, rule) for rule in supervised_rules(**options._asdict())]
        for action, rule in actions:
            syscall: int | str = rule.syscall
            if sc.resolve_syscall(arch, rule.syscall) == -1:
                if rule.syscall not in NEW_SYSCALL_NUMBERS:
                    raise SandboxUnavailable(
                        f"seccomp filter: libseccomp {libseccomp_version()} does not know "
                        f"syscall {rule.syscall!r}",
                        fix="upgrade libseccomp (2.5 or newer)",
                    )
                if not native:
                    continue  # libseccomp cannot translate a bare number to another arch
                syscall = NEW_SYSCALL_NUMBERS[rule.syscall]
            args = [sc.Arg(index, sc.MASKED_EQ, mask, value) for index, mask, value in rule.args]
            args += [sc.Arg(index, sc.GT, value) for index, value in rule.above]
            # By name: libseccomp resolves it natively, then translates for the target arch
            # (and skips syscalls that do not exist there, e.g. iopl on aarch64).
            flt.add_rule(action, syscall, *args)
        with tempfile.TemporaryFile() as out:
            flt.export_bpf(out)
            out.seek(0)
            program = out.read()
    except OSError as exc:
        raise SandboxUnavailable(
            f"seccomp filter cannot be built: libseccomp failed: {exc}",
            fix="upgrade libseccomp (2.5 or newer); report this with `stockade doctor --json`",
        ) from None
    _check_program(program)
    return program


def _check_program(program: bytes) -> None:
    n = len(program) // _BPF_INSTRUCTION_SIZE
    if len(program) % _BPF_INSTRUCTION_SIZE or not 0 < n <= _BPF_MAXINSNS:
        raise SandboxUnavailable(
            f"seccomp filter: compiled program has an invalid size ({len(program)} bytes)",
            fix="upgrade libseccomp; report this with `stockade doctor --json`",
        )


# --------------------------------------------------------------------------------------------
# The on-disk cache
# --------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where compiled programs are kept: ``<user cache dir>/stockade/seccomp``."""
    from stockade.userdirs import cache_dir as user_cache_dir

    return user_cache_dir() / "seccomp"


def _read_cached(path: Path) -> bytes | None:
    """The cached program at `path`, or None when missing, foreign-owned, corrupt or not
    authenticated by our key (then it is rebuilt: a cache is never trusted on its word)."""
    from stockade.userdirs import read_own_file, verify

    size = len(_CACHE_MAGIC) + _DIGEST_SIZE + _BPF_MAXINSNS * _BPF_INSTRUCTION_SIZE
    blob = read_own_file(path, size, forbidden_mode=0o022)  # nobody else may have written it
    if blob is None:
        return None
    head, tag = blob[: len(_CACHE_MAGIC)], blob[len(_CACHE_MAGIC) :][:_DIGEST_SIZE]
    program = blob[len(_CACHE_MAGIC) + _DIGEST_SIZE :]
    if head != _CACHE_MAGIC or not verify(_MAC_PURPOSE, tag, path.name.encode(), program):
        return None
    n = len(program) // _BPF_INSTRUCTION_SIZE
    if len(program) % _BPF_INSTRUCTION_SIZE or not 0 < n <= _BPF_MAXINSNS:
        return None
    return program


def _write_cached(path: Path, program: bytes) -> None:
    """Write atomically (temp file + rename in the same dir); a cache failure is not fatal."""
    import tempfile

    from stockade.userdirs import mac

    tag = mac(_MAC_PURPOSE, path.name.encode(), program)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".bpf")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(_CACHE_MAGIC + tag + program)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass  # read-only home, full disk: compile again next time


_memo: dict[str, bytes] = {}


def build_filter_program(
    *,
    allow_unix_sockets: bool,
    network_by_landlock: bool = False,
    supervise: bool = False,
    cache: Path | None = None,
) -> bytes:
    """The compiled BPF program (array of ``struct sock_filter``) for these options.

    Memoised per process, then the disk cache (`cache` overrides the directory), then
    libseccomp. Raises SandboxUnavailable when it cannot be built.
    """
    options = FilterOptions(allow_unix_sockets, network_by_landlock, supervise)
    key = cache_key(**options._asdict())
    where = (cache or cache_dir()) / f"{key}.bpf"
    memo_key = f"{where}"
    if memo_key in _memo:
        return _memo[memo_key]
    program = _read_cached(where)
    if program is None:
        program = compile_program(**options._asdict())
        _write_cached(where, program)
    _memo[memo_key] = program
    return program


# --------------------------------------------------------------------------------------------
# Delivering it
# --------------------------------------------------------------------------------------------

_F_ADD_SEALS: Final = 1033
_SEALS: Final = 0x1 | 0x2 | 0x4 | 0x8  # F_SEAL_SEAL | SHRINK | GROW | WRITE


def filter_fd(*, allow_unix_sockets: bool, cache: Path | None = None) -> int:
    """A fresh read-only fd holding the program, positioned at 0, for ``bwrap --seccomp FD``.

    It is a sealed memfd (nobody can change it) and close-on-exec: pass it to bwrap with
    ``subprocess.Popen(..., pass_fds=(fd,))`` so only bwrap inherits it, and close it in the
    parent after spawning. bwrap reads it to EOF, so use a new fd for every run.
    """
    import fcntl

    program = build_filter_program(allow_unix_sockets=allow_unix_sockets, cache=cache)
    try:
        fd = os.memfd_create("stockade-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError as exc:
        raise SandboxUnavailable(
            f"seccomp filter: cannot create a memfd for bwrap ({exc})",
            fix="a Linux kernel 3.17 or newer is required",
        ) from None
    try:
        os.write(fd, program)
        fcntl.fcntl(fd, _F_ADD_SEALS, _SEALS)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError:
        os.close(fd)
        raise
    return fd


_SYS_SECCOMP: Final = {"x86_64": 317, "aarch64": 277}
_SECCOMP_SET_MODE_FILTER: Final = 1
_FILTER_FLAG_NEW_LISTENER: Final = 1 << 3
_FILTER_FLAG_WAIT_KILLABLE_RECV: Final = 1 << 5  # Linux 5.19: no EINTR once it is handled


class _Loader:
    """The program in buffers built in the parent, and the few calls that load it in the
    child (nothing heavy happens after fork)."""

    def __init__(self, program: bytes) -> None:
        import ctypes

        class _SockFprog(ctypes.Structure):
            _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

        self._ctypes = ctypes
        self._buffer = ctypes.create_string_buffer(program, len(program))
        self._fprog = _SockFprog(
            len(program) // _BPF_INSTRUCTION_SIZE, ctypes.addressof(self._buffer)
        )
        self._address = ctypes.addressof(self._fprog)
        libc = ctypes.CDLL(None, use_errno=True)
        self._prctl = libc.prctl
        self._prctl.argtypes = [
            ctypes.c_int,
            ctypes.c_ulong,
            ctypes.c_void_p,
            ctypes.c_ulong,
            ctypes.c_ulong,
        ]
        self._prctl.restype = ctypes.c_int
        self._syscall = libc.syscall
        self._syscall.restype = ctypes.c_long
        self._seccomp_nr = _SYS_SECCOMP[_machine()]

    def _fail(self, what: str) -> OSError:
        err = self._ctypes.get_errno()
        return OSError(err, f"{what}: {os.strerror(err)}")

    def _no_new_privs(self) -> None:
        if self._prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            raise self._fail("prctl(PR_SET_NO_NEW_PRIVS)")

    def install(self) -> None:
        self._no_new_privs()
        if self._prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, self._address, 0, 0) != 0:
            raise self._fail("loading the seccomp filter")

    def install_with_listener(self) -> int:
        """Load the filter and return its user-notification fd (close-on-exec)."""
        c = self._ctypes
        self._no_new_privs()
        for flags in (
            _FILTER_FLAG_NEW_LISTENER | _FILTER_FLAG_WAIT_KILLABLE_RECV,
            _FILTER_FLAG_NEW_LISTENER,
        ):
            fd = int(
                self._syscall(
                    c.c_long(self._seccomp_nr),
                    c.c_long(_SECCOMP_SET_MODE_FILTER),
                    c.c_long(flags),
                    c.c_void_p(self._address),
                )
            )
            if fd >= 0:
                return fd
            if c.get_errno() != errno.EINVAL:
                break  # EINVAL: a kernel before 5.19 does not know WAIT_KILLABLE_RECV
        raise self._fail("loading the seccomp filter with a supervisor (user notification)")


def preexec_installer(
    *,
    allow_unix_sockets: bool,
    network_by_landlock: bool = False,
    cache: Path | None = None,
) -> Callable[[], None]:
    """Prepare in the parent; the returned callable runs in the child between fork and exec.

    The child side makes exactly two prctl calls (no_new_privs, then the filter) on buffers
    built here, so nothing heavy happens after fork. Call it last in a preexec chain: after
    the cgroup move, rlimits and Landlock. It raises OSError in the child on failure, which
    subprocess reports as SubprocessError — the command never runs unfiltered.
    """
    program = build_filter_program(
        allow_unix_sockets=allow_unix_sockets,
        network_by_landlock=network_by_landlock,
        cache=cache,
    )
    return _Loader(program).install


def supervised_installer(
    *,
    allow_unix_sockets: bool,
    network_by_landlock: bool = False,
    cache: Path | None = None,
) -> Callable[[], int]:
    """Like :func:`preexec_installer`, for a filter whose metadata calls (see
    :func:`supervised_rules`) go to a supervisor: the callable returns the listener fd, which
    the child must hand to the supervisor and close before it execs. While nobody holds the
    listener, every supervised call fails with ENOSYS: the filter fails closed."""
    program = build_filter_program(
        allow_unix_sockets=allow_unix_sockets,
        network_by_landlock=network_by_landlock,
        supervise=True,
        cache=cache,
    )
    return _Loader(program).install_with_listener


def describe(
    *, allow_unix_sockets: bool, network_by_landlock: bool = False, supervise: bool = False
) -> tuple[str, ...]:
    """One line per reason, for `status`/`doctor`: what the filter denies and why."""
    options = FilterOptions(allow_unix_sockets, network_by_landlock, supervise)
    by_reason: dict[tuple[str, str], list[str]] = {}
    socket_calls = ("socket", "socketpair")
    for rule in rules(**options._asdict()):
        if rule.syscall in socket_calls:
            continue  # summarised from the allow-list below
        conditions = ", ".join(f"arg{index} = {value:#x}" for index, _, value in rule.args)
        name = f"{rule.syscall}({conditions})" if conditions else rule.syscall
        by_reason.setdefault((rule.reason, errno.errorcode[rule.errno]), []).append(name)
    for supervised in supervised_rules(**options._asdict()):
        by_reason.setdefault((supervised.reason, "supervisor"), []).append(supervised.syscall)
    lines = [
        f"{', '.join(names)} -> {action}: {reason}" for (reason, action), names in by_reason.items()
    ]
    allowed = socket_allow_list(allow_unix_sockets=allow_unix_sockets, tcp_only=network_by_landlock)
    lines.append(
        "socket() -> EPERM except: "
        + "; ".join(
            f"{_FAMILY_NAMES[a.family]} type {'/'.join(map(str, a.types))} protocol "
            f"{'/'.join(map(str, a.protocols))} ({a.why})"
            for a in allowed
        )
    )
    lines.append("socketpair() -> EPERM except AF_UNIX (a connected pair reaches nothing)")
    lines.append("other architectures and ABIs (i386, x32, arm32): process killed")
    if allow_unix_sockets:
        lines.append("AF_UNIX sockets: allowed (sandbox.allow_unix_sockets = true)")
    return tuple(lines)
