"""The seccomp filter every confined command runs under.

Namespaces and Landlock leave kernel attack surface reachable: ptrace, io_uring, new user
namespaces, the mount API, keyrings, eBPF, TIOCSTI terminal injection, and AF_UNIX sockets
(docker.sock, the session bus and tmux sockets are known full escapes). This module turns the
deny table below into a classic-BPF program and delivers it two ways:

* :func:`filter_fd` — a sealed memfd for bubblewrap's ``--seccomp FD``;
* :func:`preexec_installer` — ``no_new_privs`` + the filter, loaded
  in a forked child before ``exec`` (the Landlock backend).

Default action: allow. Listed syscalls: fail with the listed errno. Any other architecture or
ABI (i386 via ``int 0x80``, x32 on x86_64, arm32 on aarch64): the process is killed. Only
x86_64 and aarch64 are supported natively.

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
AF_PACKET: Final = 17
SOCK_DGRAM: Final = 2
SOCK_RAW: Final = 3
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

UNIX_SOCKET_RULE: Final = DenyRule(
    "socket",
    errno.EPERM,
    "AF_UNIX sockets reach docker.sock, the session bus, tmux: escapes "
    "(allowed by sandbox.allow_unix_sockets = true)",
    args=((0, LOW_32_BITS, AF_UNIX),),
)

# For backends without a network namespace (Landlock): Landlock filters TCP only, so in deny
# and allow-list modes UDP, raw and packet sockets are refused here.
_SOCK_TYPE_MASK: Final = 0xF  # the low bits of socket()'s type; the rest are flags
DATAGRAM_SOCKET_RULES: Final[tuple[DenyRule, ...]] = (
    *(
        DenyRule(
            "socket",
            errno.EPERM,
            "without a network namespace only TCP is filtered (by Landlock): no UDP, raw or "
            "packet sockets",
            args=((0, LOW_32_BITS, family), (1, _SOCK_TYPE_MASK, sock_type)),
        )
        for family in (AF_INET, AF_INET6)
        for sock_type in (SOCK_DGRAM, SOCK_RAW)
    ),
    DenyRule(
        "socket",
        errno.EPERM,
        "packet sockets see and forge raw traffic",
        args=((0, LOW_32_BITS, AF_PACKET),),
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


def rules(*, allow_unix_sockets: bool, deny_datagrams: bool = False) -> tuple[DenyRule, ...]:
    """The rows the filter is built from for these options."""
    table = (*DENY_TABLE, *SETID_RULES)
    table = table if allow_unix_sockets else (*table, UNIX_SOCKET_RULE)
    return (*table, *DATAGRAM_SOCKET_RULES) if deny_datagrams else table


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
    rows = [(r.syscall, r.errno, r.args) for r in table]
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
    *, allow_unix_sockets: bool, deny_datagrams: bool = False, machine: str | None = None
) -> str:
    """What a cached program depends on, hashed: arch, libseccomp, the table, the options."""
    material = (
        _CACHE_MAGIC.decode().strip(),
        machine or _machine(),
        _libseccomp_identity(),
        _table_digest(rules(allow_unix_sockets=allow_unix_sockets, deny_datagrams=deny_datagrams)),
        allow_unix_sockets,
        deny_datagrams,
    )
    return blake2b(repr(material).encode(), digest_size=16).hexdigest()


def compile_program(
    *, allow_unix_sockets: bool, deny_datagrams: bool = False, machine: str | None = None
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
    try:
        flt = sc.SyscallFilter(sc.ALLOW)
        if arch != sc.system_arch():
            flt.add_arch(arch)
            flt.remove_arch(sc.Arch.NATIVE)
        # Anything not native (i386, x32, arm32) is killed: the rules below only name native
        # syscall numbers, so another ABI would otherwise walk straight past them.
        flt.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        for rule in rules(allow_unix_sockets=allow_unix_sockets, deny_datagrams=deny_datagrams):
            number = sc.resolve_syscall(arch, rule.syscall)
            if number == -1:
                raise SandboxUnavailable(
                    f"seccomp filter: libseccomp {libseccomp_version()} does not know "
                    f"syscall {rule.syscall!r}",
                    fix="upgrade libseccomp (2.5 or newer)",
                )
            args = [sc.Arg(index, sc.MASKED_EQ, mask, value) for index, mask, value in rule.args]
            # By name: libseccomp resolves it natively, then translates for the target arch
            # (and skips syscalls that do not exist there, e.g. iopl on aarch64).
            flt.add_rule(sc.ERRNO(rule.errno), rule.syscall, *args)
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
    from stockade.userdirs import verify

    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None  # someone else could have written it: do not trust it
        blob = os.read(fd, len(_CACHE_MAGIC) + _DIGEST_SIZE + _BPF_MAXINSNS * 8 + 1)
    finally:
        os.close(fd)
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
    *, allow_unix_sockets: bool, deny_datagrams: bool = False, cache: Path | None = None
) -> bytes:
    """The compiled BPF program (array of ``struct sock_filter``) for these options.

    Memoised per process, then the disk cache (`cache` overrides the directory), then
    libseccomp. Raises SandboxUnavailable when it cannot be built.
    """
    key = cache_key(allow_unix_sockets=allow_unix_sockets, deny_datagrams=deny_datagrams)
    where = (cache or cache_dir()) / f"{key}.bpf"
    memo_key = f"{where}"
    if memo_key in _memo:
        return _memo[memo_key]
    program = _read_cached(where)
    if program is None:
        program = compile_program(
            allow_unix_sockets=allow_unix_sockets, deny_datagrams=deny_datagrams
        )
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


def preexec_installer(
    *, allow_unix_sockets: bool, deny_datagrams: bool = False, cache: Path | None = None
) -> Callable[[], None]:
    """Prepare in the parent; the returned callable runs in the child between fork and exec.

    The child side makes exactly two prctl calls (no_new_privs, then the filter) on buffers
    built here, so nothing heavy happens after fork. Call it last in a preexec chain: after
    the cgroup move, rlimits and Landlock. It raises OSError in the child on failure, which
    subprocess reports as SubprocessError — the command never runs unfiltered.
    """
    program = build_filter_program(
        allow_unix_sockets=allow_unix_sockets, deny_datagrams=deny_datagrams, cache=cache
    )
    import ctypes

    class _SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // _BPF_INSTRUCTION_SIZE, ctypes.addressof(buffer))
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    fprog_address = ctypes.addressof(fprog)

    def install() -> None:
        _keepalive = (buffer, fprog)  # the kernel reads them during the prctl below
        if prctl(_PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, fprog_address, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"loading the seccomp filter: {os.strerror(err)}")
        del _keepalive

    return install


def describe(*, allow_unix_sockets: bool) -> tuple[str, ...]:
    """One line per reason, for `status`/`doctor`: what the filter denies and why."""
    by_reason: dict[tuple[str, int], list[str]] = {}
    for rule in rules(allow_unix_sockets=allow_unix_sockets):
        conditions = ", ".join(f"arg{index} = {value:#x}" for index, _, value in rule.args)
        name = f"{rule.syscall}({conditions})" if conditions else rule.syscall
        by_reason.setdefault((rule.reason, rule.errno), []).append(name)
    lines = [
        f"{', '.join(names)} -> {errno.errorcode[err]}: {reason}"
        for (reason, err), names in by_reason.items()
    ]
    lines.append("other architectures and ABIs (i386, x32, arm32): process killed")
    if allow_unix_sockets:
        lines.append("AF_UNIX sockets: allowed (sandbox.allow_unix_sockets = true)")
    return tuple(lines)
