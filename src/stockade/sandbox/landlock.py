"""Landlock: kernel-enforced file and network rules for machines where bwrap cannot run.

Containers, CI runners and hardened kernels often forbid user namespaces, so bubblewrap is out;
Landlock (Linux 5.13+) still lets an unprivileged process restrict itself. A ruleset is built in
the parent (:func:`prepare`), then the forked child calls :meth:`Ruleset.enforce` between fork
and exec: ``no_new_privs``, ``landlock_restrict_self``, and for root, dropping every capability.
No extra process, two or three syscalls in the child.

Landlock is allow-list only: access is granted by rules on a path or any of its ancestors. Two
consequences shape this module:

* **Masked paths** (no read): reads are granted on every *sibling* along the path down to the
  masked entry instead of on its ancestors. Ancestors keep only READ_DIR, so their listings (and
  the names inside a masked directory) stay visible; contents do not.
* **Protected paths** (read-only inside a writable root): writes are granted on every sibling
  along the path instead of on the root. The directories on the way down are *frozen*: their
  existing entries stay writable, but nothing can be created, removed or renamed directly in
  them. Anything weaker lets a write, a rename of a writable sibling or a symlink land inside
  the protected path. :func:`describe` states this, so the posture never overstates.

Only access rights the running ABI knows are used (REFER from 2, TRUNCATE from 3, TCP from 4,
IOCTL_DEV from 5, IPC scoping from 6, audit-log flags from 7).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final, NamedTuple

from stockade.errors import SandboxUnavailable, UsageError
from stockade.net.bridge import proxy_environment
from stockade.net.mode import NetworkMode
from stockade.sandbox import seccomp
from stockade.sandbox.backend import Stdio, Unavailable, proxy_not_running
from stockade.sandbox.identity import posture_identity
from stockade.sandbox.launcher import LauncherJail, Supervision, launch
from stockade.sandbox.limits import RunLimits
from stockade.sandbox.policy import SandboxPolicy, is_within
from stockade.sandbox.posture import Posture
from stockade.sandbox.supervisor import Supervisor, WritableTree

# --------------------------------------------------------------------------------------------
# The kernel ABI, as data: right name -> (bit, first ABI that knows it)
# --------------------------------------------------------------------------------------------

FS_RIGHTS: Final[dict[str, tuple[int, int]]] = {
    "execute": (1 << 0, 1),
    "write_file": (1 << 1, 1),
    "read_file": (1 << 2, 1),
    "read_dir": (1 << 3, 1),
    "remove_dir": (1 << 4, 1),
    "remove_file": (1 << 5, 1),
    "make_char": (1 << 6, 1),
    "make_dir": (1 << 7, 1),
    "make_reg": (1 << 8, 1),
    "make_sock": (1 << 9, 1),
    "make_fifo": (1 << 10, 1),
    "make_block": (1 << 11, 1),
    "make_sym": (1 << 12, 1),
    "refer": (1 << 13, 2),
    "truncate": (1 << 14, 3),
    "ioctl_dev": (1 << 15, 5),
}
NET_RIGHTS: Final[dict[str, tuple[int, int]]] = {
    "bind_tcp": (1 << 0, 4),
    "connect_tcp": (1 << 1, 4),
}
SCOPES: Final[dict[str, tuple[int, int]]] = {
    "abstract_unix_socket": (1 << 0, 6),
    "signal": (1 << 1, 6),
}
RESTRICT_SELF_LOG_NEW_EXEC_ON: Final = 1 << 1  # ABI 7: audit-log denials after exec
LOGGING_ABI: Final = 7

# What each kind of grant means, by right name (filtered by ABI at build time).
READ: Final = ("execute", "read_file", "read_dir", "ioctl_dev")
WRITE: Final = (
    "write_file",
    "remove_dir",
    "remove_file",
    "make_dir",
    "make_reg",
    "make_sock",
    "make_fifo",
    "make_sym",
    "refer",
    "truncate",
)  # never make_char / make_block
ONLY_FOR_FILES: Final = ("execute", "write_file", "read_file", "truncate", "ioctl_dev")
# Ancestors of a masked path keep listing (names visible); of a protected path, nothing.
READ_ANCESTOR: Final = ("read_dir",)
WRITE_ANCESTOR: Final[tuple[str, ...]] = ()

# Device files every program expects to open for writing, even with writes confined. Not
# /dev/pts (other terminals of the user: typing into them, reading their keystrokes) and not
# /dev/ptmx (a new terminal's other end would live in /dev/pts). The terminal the command was
# started on is granted by the backend, per run (it holds that one's fds anyway).
DEFAULT_WRITABLE_FILES: Final = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
)
# Below /dev, only these are readable (names stay listable): no terminals, no disks (as root,
# a raw block device would hand out every masked file), no input, sound or video devices.
DEVICE_DIRECTORY: Final = "/dev"
READABLE_DEVICES: Final = (
    *DEFAULT_WRITABLE_FILES,
    "/dev/shm",
    "/dev/mqueue",
    "/dev/hugepages",
)

# Syscall numbers: the same on x86_64 and aarch64 (unified table).
_SYS_CREATE_RULESET: Final = 444
_SYS_ADD_RULE: Final = 445
_SYS_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1 << 0
_RULE_PATH_BENEATH: Final = 1
_RULE_NET_PORT: Final = 2
_PR_SET_NO_NEW_PRIVS: Final = 38
_PR_CAPBSET_DROP: Final = 24
_PR_CAP_AMBIENT: Final = 47
_PR_CAP_AMBIENT_CLEAR_ALL: Final = 4
_SYS_CAPSET: Final = {"x86_64": 126, "aarch64": 91}
_LINUX_CAPABILITY_VERSION_3: Final = 0x20080522


def mask(names: Iterable[str], abi: int) -> int:
    """The bits of these rights that ABI `abi` knows about."""
    table = {**FS_RIGHTS, **NET_RIGHTS, **SCOPES}
    return sum(bit for name in set(names) for bit, since in [table[name]] if since <= abi)


def handled_fs(abi: int) -> int:
    return mask(FS_RIGHTS, abi)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_prctl.restype = ctypes.c_int


def abi_version() -> int:
    """The Landlock ABI of the running kernel; 0 when Landlock is missing or disabled."""
    version = _syscall(
        ctypes.c_long(_SYS_CREATE_RULESET),
        None,
        ctypes.c_long(0),
        ctypes.c_long(_CREATE_RULESET_VERSION),
    )
    return max(int(version), 0)


# --------------------------------------------------------------------------------------------
# Policy and plan
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LandlockPolicy:
    """What the confined command may touch. Paths are canonicalised (realpath) on creation."""

    writable_roots: Sequence[str] = ()
    protected_paths: Sequence[str] = ()  # read-only, even inside a writable root
    masked_paths: Sequence[str] = ()  # neither readable nor writable
    readable_within_masked: Sequence[str] = ()  # read-only again inside a masked path
    readable_roots: Sequence[str] = ("/",)
    writable_files: Sequence[str] = DEFAULT_WRITABLE_FILES
    readable_devices: Sequence[str] = READABLE_DEVICES  # all else below /dev is unreadable
    terminals: Sequence[str] = ()  # the command's own terminal devices: read and write
    restrict_network: bool = True  # TCP bind/connect denied (ABI >= 4) ...
    allowed_tcp_port: int | None = None  # ... except connecting to this port (the proxy)
    scope_ipc: bool = True  # abstract unix sockets and signals stay inside (ABI >= 6)
    log_denials: bool = False  # audit-log the command's denials (ABI >= 7)
    drop_capabilities: bool = True  # for root: empty the bounding set and capability sets
    allow_unix_sockets: bool = False  # (seccomp's; here for what the posture may claim)

    def __post_init__(self) -> None:
        for name in (
            "writable_roots",
            "protected_paths",
            "masked_paths",
            "readable_within_masked",
            "readable_roots",
            "writable_files",
            "readable_devices",
            "terminals",
        ):
            paths = getattr(self, name)
            if isinstance(paths, str):
                raise UsageError(
                    f"landlock policy: {name} must be a list of paths, not a string",
                    fix=f"write {name} = [{paths!r}]",
                )
            for path in paths:
                if not os.path.isabs(path):
                    raise UsageError(
                        f"landlock policy: {name} entry {path!r} is not absolute",
                        fix="use absolute paths (the policy layer resolves them)",
                    )
            canonical = tuple(dict.fromkeys(os.path.realpath(p) for p in paths))
            object.__setattr__(self, name, canonical)
        port = self.allowed_tcp_port
        if port is not None and not (isinstance(port, int) and 0 < port < 65536):
            raise UsageError(
                f"landlock policy: allowed_tcp_port {port!r} is not a TCP port",
                fix="use a port between 1 and 65535 (the proxy's)",
            )


@dataclass(frozen=True)
class PlannedRule:
    path: str
    rights: int
    is_dir: bool


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _open_path(path: str) -> tuple[int, os.stat_result] | None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    st = os.fstat(fd)
    if stat.S_ISLNK(st.st_mode):  # a rule on a symlink would grant its target: never
        os.close(fd)
        return None
    return fd, st


_Snapshot = tuple[str, int, int]  # (directory, inode, mtime_ns) of a directory walked


def _grant(
    root: str,
    rights: int,
    exceptions: Sequence[str],
    ancestor_rights: int,
    file_rights: int,
    out: dict[str, PlannedRule],
    walked: list[_Snapshot],
) -> None:
    """Grant `rights` on everything under `root` except under `exceptions` (sibling trick)."""
    relevant = [e for e in exceptions if _under(e, root)]
    if any(_under(root, e) for e in exceptions):
        return  # root itself is excluded (or lies inside an exception)
    opened = _open_path(root)
    if opened is None:
        return  # missing or a symlink: nothing to grant (fails closed)
    fd, st = opened
    os.close(fd)
    is_dir = stat.S_ISDIR(st.st_mode)
    if not relevant or not is_dir:
        _add(out, root, rights if is_dir else rights & file_rights, is_dir)
        return
    _add(out, root, rights & ancestor_rights, True)
    walked.append((root, st.st_ino, st.st_mtime_ns))
    try:
        children = sorted(entry.name for entry in os.scandir(root))
    except OSError:
        return  # unlistable: its children stay inaccessible
    for name in children:
        _grant(
            os.path.join(root, name), rights, relevant, ancestor_rights, file_rights, out, walked
        )


def _add(out: dict[str, PlannedRule], path: str, rights: int, is_dir: bool) -> None:
    if rights:
        previous = out.get(path)
        out[path] = PlannedRule(path, rights | (previous.rights if previous else 0), is_dir)


def plan(policy: LandlockPolicy, abi: int) -> tuple[PlannedRule, ...]:
    """Every path rule the ruleset will hold, computed from the live filesystem."""
    return _plan(policy, abi)[0]


def _plan(
    policy: LandlockPolicy, abi: int
) -> tuple[tuple[PlannedRule, ...], tuple[_Snapshot, ...]]:
    walked: list[_Snapshot] = []
    read, write = mask(READ, abi), mask(WRITE, abi)
    file_rights = mask(ONLY_FOR_FILES, abi)
    out: dict[str, PlannedRule] = {}
    hidden = (*policy.masked_paths, *_hidden_devices(policy))
    for root in policy.readable_roots:
        _grant(root, read, hidden, mask(READ_ANCESTOR, abi), file_rights, out, walked)
    _grant_devices(policy, abi, out, walked)
    for allowed in policy.readable_within_masked:  # only masks nested inside it still apply
        inner = [m for m in policy.masked_paths if _under(m, allowed) and m != allowed]
        _grant(allowed, read, inner, mask(READ_ANCESTOR, abi), file_rights, out, walked)
    no_write = (*policy.protected_paths, *policy.masked_paths)
    for root in policy.writable_roots:
        _grant(root, write, no_write, mask(WRITE_ANCESTOR, abi), file_rights, out, walked)
    for path in policy.writable_files:
        _grant(path, mask(("write_file", "truncate"), abi), no_write, 0, file_rights, out, walked)
    return tuple(out[path] for path in sorted(out)), tuple(walked)


def _hidden_devices(policy: LandlockPolicy) -> tuple[str, ...]:
    """/dev, when a readable root covers it: only the listed devices are granted below it."""
    covered = any(_under(DEVICE_DIRECTORY, root) for root in policy.readable_roots)
    return (DEVICE_DIRECTORY,) if covered else ()


def _grant_devices(
    policy: LandlockPolicy, abi: int, out: dict[str, PlannedRule], walked: list[_Snapshot]
) -> None:
    """Listing /dev, reading the allowed devices, and the command's own terminals."""
    if not _hidden_devices(policy):
        return
    read, file_rights = mask(READ, abi), mask(ONLY_FOR_FILES, abi)
    _add(out, DEVICE_DIRECTORY, mask(READ_ANCESTOR, abi), True)
    for device in policy.readable_devices:
        _grant(device, read, policy.masked_paths, 0, file_rights, out, walked)
    for terminal in policy.terminals:
        both = read | mask(("write_file",), abi)
        _grant(terminal, both, policy.masked_paths, 0, file_rights, out, walked)


def frozen_directories(policy: LandlockPolicy) -> tuple[str, ...]:
    """Directories inside writable roots where nothing can be created, removed or renamed."""
    frozen: set[str] = set()
    for root in policy.writable_roots:
        for exc in (*policy.protected_paths, *policy.masked_paths):
            if _under(exc, root) and exc != root:
                parent = os.path.dirname(exc)
                while _under(parent, root):
                    frozen.add(parent)
                    if parent == root:
                        break
                    parent = os.path.dirname(parent)
    return tuple(sorted(frozen))


# --------------------------------------------------------------------------------------------
# Building and enforcing
# --------------------------------------------------------------------------------------------


def _fail(what: str, err: int) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"Landlock: {what} failed: {os.strerror(err)}",
        fix="Landlock needs Linux 5.13+ with 'landlock' in the lsm= boot parameter "
        "(see /sys/kernel/security/lsm); inside a container, allow the landlock_* syscalls",
    )


@dataclass
class Ruleset:
    """A built ruleset fd, ready to be enforced by any number of children."""

    fd: int
    abi: int
    policy: LandlockPolicy
    rules: tuple[PlannedRule, ...]
    restrict_flags: int
    drop_caps: bool
    _cap_last: int = field(default=0, repr=False)
    walked: tuple[_Snapshot, ...] = field(default=(), repr=False)

    def is_current(self) -> bool:
        """True while no directory walked for sibling rules gained or lost an entry.

        Lets a session reuse one ruleset across runs (building one walks the filesystem and
        costs about a millisecond); rebuild when this turns False.
        """
        for path, ino, mtime in self.walked:
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                return False
            if (st.st_ino, st.st_mtime_ns) != (ino, mtime):
                return False
        return self.fd >= 0

    def enforce(self) -> None:
        """Restrict the calling process for good. Safe between fork and exec.

        Order: no_new_privs, landlock_restrict_self, then (root) capabilities. Raises OSError in
        the child; subprocess reports that as SubprocessError and the command does not run.
        """
        if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        if (
            _syscall(
                ctypes.c_long(_SYS_RESTRICT_SELF),
                ctypes.c_long(self.fd),
                ctypes.c_long(self.restrict_flags),
            )
            != 0
        ):
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
        if self.drop_caps:
            _drop_all_capabilities(self._cap_last, bounding=os.geteuid() == 0)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Ruleset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_all_capabilities(cap_last: int, *, bounding: bool) -> None:
    """Empty the bounding set (root: so exec cannot regain anything), ambient and current sets.

    Only root may shrink the bounding set; for anyone else it does not matter (no_new_privs
    stops setuid and file capabilities from granting anything at exec).
    """
    for cap in range(cap_last + 1 if bounding else 0):
        if _prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err != errno.EINVAL:  # EINVAL: capability unknown to this kernel
                raise OSError(err, f"prctl(PR_CAPBSET_DROP, {cap}): {os.strerror(err)}")
    _prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    number = _SYS_CAPSET.get(os.uname().machine)
    if (
        number is None
        or _syscall(ctypes.c_long(number), ctypes.byref(header), ctypes.byref(data)) != 0
    ):
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")


def _cap_last() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except OSError:
        return 63  # drop everything a 64-bit mask can name; unknown ones give EINVAL


def prepare(policy: LandlockPolicy, *, abi: int | None = None) -> Ruleset:
    """Build the ruleset in the parent (walks the filesystem, adds rules).

    Raises SandboxUnavailable when Landlock is unavailable or a rule is refused. Prepare once per
    run: the sibling rules describe the filesystem as it is now (an entry created later in a
    masked path's ancestor directory has no rule, so it stays unreadable).
    """
    running = abi_version()
    abi = running if abi is None else min(abi, running)
    if abi < 1:
        raise SandboxUnavailable(
            "Landlock is not available on this kernel",
            fix="use a Linux 5.13+ kernel booted with 'landlock' in lsm= "
            "(check /sys/kernel/security/lsm), or use the bwrap backend",
        )
    attr = _RulesetAttr(handled_fs(abi), 0, 0)
    if abi >= 4 and policy.restrict_network:
        attr.handled_access_net = mask(NET_RIGHTS, abi)
    if abi >= 6 and policy.scope_ipc:
        attr.scoped = mask(SCOPES, abi)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    fd = int(
        _syscall(
            ctypes.c_long(_SYS_CREATE_RULESET),
            ctypes.byref(attr),
            ctypes.c_long(size),
            ctypes.c_long(0),
        )
    )
    if fd < 0:
        raise _fail("landlock_create_ruleset", ctypes.get_errno())
    try:
        rules, walked = _plan(policy, abi)
        for rule in rules:
            _add_path_rule(fd, rule)
        if attr.handled_access_net and policy.allowed_tcp_port is not None:
            port = _NetPortAttr(mask(("connect_tcp",), abi), policy.allowed_tcp_port)
            if _syscall(
                ctypes.c_long(_SYS_ADD_RULE),
                ctypes.c_long(fd),
                ctypes.c_long(_RULE_NET_PORT),
                ctypes.byref(port),
                ctypes.c_long(0),
            ):
                raise _fail(f"allowing TCP port {policy.allowed_tcp_port}", ctypes.get_errno())
    except BaseException:
        os.close(fd)
        raise
    flags = RESTRICT_SELF_LOG_NEW_EXEC_ON if policy.log_denials and abi >= LOGGING_ABI else 0
    return Ruleset(fd, abi, policy, rules, flags, policy.drop_capabilities, _cap_last(), walked)


def _add_path_rule(ruleset_fd: int, rule: PlannedRule) -> None:
    opened = _open_path(rule.path)
    if opened is None:
        return  # vanished or replaced by a symlink since planning: grant nothing
    fd, st = opened
    try:
        rights = rule.rights
        if not stat.S_ISDIR(st.st_mode):
            rights &= mask(ONLY_FOR_FILES, 99)
        if not rights:
            return
        attr = _PathBeneathAttr(rights, fd)
        if _syscall(
            ctypes.c_long(_SYS_ADD_RULE),
            ctypes.c_long(ruleset_fd),
            ctypes.c_long(_RULE_PATH_BENEATH),
            ctypes.byref(attr),
            ctypes.c_long(0),
        ):
            raise _fail(f"adding a rule for {rule.path}", ctypes.get_errno())
    finally:
        os.close(fd)


def apply(policy: LandlockPolicy) -> None:
    """Prepare and enforce in the calling process (for a forked child, or a wrapper)."""
    with prepare(policy) as ruleset:
        try:
            ruleset.enforce()
        except OSError as exc:
            raise _fail("restricting the process", exc.errno or errno.EPERM) from None


# --------------------------------------------------------------------------------------------
# What the posture may claim
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LandlockPosture:
    abi: int
    enforced: tuple[str, ...]
    not_enforced: tuple[str, ...]


def describe(policy: LandlockPolicy, *, abi: int | None = None) -> LandlockPosture:
    """Exactly what this backend enforces for `policy` on this kernel, and what it cannot."""
    abi = abi_version() if abi is None else abi
    if abi < 1:
        return LandlockPosture(0, (), ("Landlock is not available: nothing is enforced",))
    on: list[str] = []
    off: list[str] = []
    roots = ", ".join(policy.writable_roots) or "none"
    on.append(f"writes only under: {roots} (plus {', '.join(policy.writable_files)})")
    if policy.protected_paths:
        on.append("read-only inside writable roots: " + ", ".join(policy.protected_paths))
    frozen = frozen_directories(policy)
    if frozen:
        off.append(
            "to keep protected/masked paths closed, these directories are frozen: "
            "existing entries stay writable, but nothing can be created, removed or "
            "renamed directly in them: " + ", ".join(frozen)
        )
    if policy.masked_paths:
        on.append("unreadable: " + ", ".join(policy.masked_paths))
        off.append(
            "names (not contents) inside masked directories and their parents remain "
            "listable; files created later next to a masked path are unreadable"
        )
    if abi < 2:
        off.append("ABI 1: cross-directory rename/link (REFER) is always denied")
    if abi < 3:
        off.append("truncate() is not controlled (Landlock ABI < 3)")
    if _hidden_devices(policy):
        on.append(
            "devices: below /dev only "
            + ", ".join(policy.readable_devices)
            + " are readable (names stay listable); no other terminal (/dev/pts, /dev/ptmx), "
            "disk, input or console device, so other terminal sessions get nothing; the "
            "command's own terminal stays usable"
        )
    on.append(
        "metadata (chmod, chown, utimes, extended attributes): changed only inside the "
        "writable roots, by a seccomp supervisor that decides from the file it opened itself "
        "(never from the caller's path); setuid/setgid bits refused; without the supervisor "
        "these calls fail (ENOSYS)"
    )
    if abi >= 4 and policy.restrict_network:
        if policy.allowed_tcp_port is None:
            on.append("TCP bind and connect denied")
            reachable = "no port of it is"
        elif policy.allow_unix_sockets:  # connect() is Landlock's alone: ports, not hosts
            on.append(f"TCP bind denied; TCP connect only to port {policy.allowed_tcp_port}")
            reachable = (
                f"port {policy.allowed_tcp_port} is, on every address (Landlock filters "
                "ports, not hosts; with AF_UNIX allowed the supervisor does not check the host)"
            )
        else:
            on.append(
                f"TCP bind denied; TCP connect only to the allow-list proxy, 127.0.0.1:"
                f"{policy.allowed_tcp_port} (Landlock checks the port, the supervisor the host)"
            )
            reachable = f"only the proxy's port {policy.allowed_tcp_port} is"
        on.append(
            "sockets: TCP only (and netlink route queries); MPTCP, SCTP, SMC, UDP, raw, "
            "packet, vsock and every other family refused by seccomp, as are TCP Fast Open "
            "and listen(), which would skip Landlock's connect and bind checks"
        )
        off.append(
            "no network namespace: the host loopback is reachable only through Landlock's "
            f"TCP port rules: {reachable}"
        )
    else:
        off.append("network is NOT restricted (Landlock ABI < 4 or restriction off)")
    if abi >= 6 and policy.scope_ipc:
        on.append("signals and abstract unix sockets cannot reach outside the sandbox")
    else:
        off.append(
            "signals and abstract unix sockets are not scoped (Landlock ABI < 6): the jail "
            "can signal the user's other processes, its launcher too (killing it lets the "
            "run's leftover processes escape; the supervisor fails closed)"
        )
    if policy.drop_capabilities:
        on.append("no capabilities (bounding set emptied) when run as root")
    on.append("ptrace of and /proc/PID/{mem,environ} of processes outside: denied (Landlock)")
    on.append(
        "processes: when the command ends, every process it started is killed (a "
        "subreaper launcher), with or without a cgroup, and when stockade dies"
    )
    if os.geteuid() == 0:
        off.append(
            "run as root: uid 0 stays host root for file permissions (no user namespace, no "
            "idmap); the root-only masks and the setuid/setgid refusal are the protection"
        )
    off.extend(
        [
            "no PID namespace: host processes and their command lines are visible in /proc "
            "(not their memory, environment or fds); hiding them would take every open() "
            "through the supervisor, which cannot be decided race-free from a path",
            "no mount namespace: host /tmp and /dev/shm are shared (readable, not writable), "
            "and the rest of the host filesystem is visible read-only; so POSIX semaphores "
            "and shared memory are unavailable (Python multiprocessing locks and process "
            "pools fail)",
            "kernel files in /proc and /sys (/proc/keys, /proc/timer_list, /sys/firmware, "
            "...) stay readable: a Landlock exception below /proc would also hide every "
            "process started after the rules, /proc/self included",
            "connect() to pathname unix sockets is not restricted by Landlock (seccomp blocks "
            "AF_UNIX unless allowed)",
            "environment: only what the runner scrubs",
        ]
    )
    return LandlockPosture(abi, tuple(on), tuple(off))


# --------------------------------------------------------------------------------------------
# The backend: same interface as bwrap, applied in the child between fork and exec
# --------------------------------------------------------------------------------------------


def policy_for(sandbox_policy: SandboxPolicy) -> LandlockPolicy:
    """Translate the shared SandboxPolicy into Landlock terms.

    Landlock cannot deny one entry of a writable directory without freezing that directory
    (the sibling rules above), and a frozen project root or ``.git`` stops git and every tool
    that creates files. So the built-in protected names are *not* kernel-enforced here: the
    post-run guard copies them before each command and restores them after it (and moves
    whatever a command created at a protected name aside). Only paths the operator listed in
    ``write_deny_within_allow`` (stockade's own state among them) and masks inside writable
    roots stay kernel-enforced, freezing their parents - the posture names those."""
    explicit = [
        p
        for p in sandbox_policy.protected
        if any(is_within(p.path, d) for d in sandbox_policy.write_deny_within_allow)
    ]
    return LandlockPolicy(
        writable_roots=tuple(str(p) for p in sandbox_policy.writable),
        protected_paths=tuple(str(p.path) for p in explicit),
        masked_paths=(
            *(str(m.path) for m in sandbox_policy.masked),
            *(str(host) for host, _copy in sandbox_policy.substitutes),
        ),
        readable_within_masked=tuple(str(p) for p in sandbox_policy.read_allow_within_deny),
        restrict_network=sandbox_policy.network is not NetworkMode.ALLOW,
        allow_unix_sockets=sandbox_policy.allow_unix_sockets,
        allowed_tcp_port=sandbox_policy.proxy_port
        if sandbox_policy.network is NetworkMode.ALLOWLIST
        else None,
    )


#: Said once per session on stderr: what a landlock run does not enforce that bwrap does.
LANDLOCK_NOTICE: Final = (
    "stockade: landlock backend - unlike bwrap, protected paths (.git/hooks, .git/config, "
    "editor and agent config) are restored after each command instead of being read-only "
    "during it, there is no PID or mount namespace (host processes visible, /tmp shared), and "
    "file masks hide contents, not names; `stockade status` lists every gap"
)

#: Substituted home files (per-session copies without credentials) that a tool can be
#: pointed at by a variable, since Landlock cannot bind the copy at the original path.
SUBSTITUTE_VARIABLES: Final = {".npmrc": "NPM_CONFIG_USERCONFIG"}


class Confinement(NamedTuple):
    """What confines a command, built in the parent: the ruleset (close it after the
    spawn), the child's steps before exec (Landlock; then ``supervision`` installs the
    supervised seccomp filter, whose supervisor the launcher runs) and its environment."""

    ruleset: Ruleset
    steps: tuple[Callable[[], None], ...]
    supervision: Supervision
    env: dict[str, str]


class LandlockBackend:
    """For machines where bubblewrap cannot run (no user namespaces): Landlock filesystem and
    TCP rules, IPC scoping, seccomp, no_new_privs. No PID or mount namespace - the posture
    says so."""

    name = "landlock"

    def unavailable(self) -> Unavailable | None:
        if abi_version() < 1:
            return Unavailable(
                reason="Landlock is not available on this kernel",
                fix="use a Linux 5.13+ kernel with 'landlock' in its lsm= list "
                "(see /sys/kernel/security/lsm)",
            )
        return None

    def posture(self, policy: SandboxPolicy, *, proven: bool) -> Posture:
        landlock_policy = policy_for(policy)
        described = describe(landlock_policy)
        who, root_gaps = posture_identity(policy, drops=False)  # as root: host root
        network = {
            NetworkMode.DENY: "denied (TCP by Landlock, every other socket by seccomp)",
            NetworkMode.ALLOW: "allowed",
            NetworkMode.ALLOWLIST: "allow-list proxy port only",
        }[policy.network]
        gaps = (
            "protected paths are restored after each command, not read-only during it (a "
            "host tool reading them while the command runs sees its changes)",
            *described.not_enforced,
        )
        return Posture(
            backend=self.name,
            confined=True,
            proven=proven,
            filesystem=f"writes and metadata changes confined to {len(policy.writable)} roots "
            f"(Landlock ABI {described.abi}, seccomp supervisor), no other terminal or device",
            network=network,
            pid_namespace=False,
            env_scrubbed=True,
            masked_paths=len(policy.masked),
            seccomp=True,
            landlock=True,
            frozen_dirs=frozen_directories(landlock_policy),
            gaps=(*gaps, *root_gaps),
            identity=who,
            notice=LANDLOCK_NOTICE,
            protected_read_only=False,
        )

    def confinement(
        self, policy: SandboxPolicy, stdio: Sequence[Stdio] = (None, None, None)
    ) -> Confinement:
        """What confines a command of ``policy`` whose stdio is ``stdio`` (its terminals may be
        reopened), built here in the parent. A cold run applies it to one command; a warm jail
        once, to its spawner, whose forks are the commands (``warm_landlock.py``): both paths
        confine through this."""
        landlock_policy = replace(policy_for(policy), terminals=terminals_of(stdio))
        if policy.network is NetworkMode.ALLOWLIST and policy.proxy_port is None:
            raise proxy_not_running()
        ruleset = prepare(landlock_policy)
        install_filter = seccomp.supervised_installer(
            allow_unix_sockets=policy.allow_unix_sockets,
            network_by_landlock=policy.network is not NetworkMode.ALLOW,
        )
        tree = metadata_tree(policy, landlock_policy)
        proxy = policy.proxy_port if policy.network is NetworkMode.ALLOWLIST else None
        supervision = Supervision(install_filter, _supervisor_for(tree, ruleset, proxy))
        return Confinement(ruleset, (ruleset.enforce,), supervision, command_environment(policy))

    def spawn(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        *,
        stdin: Stdio = None,
        stdout: Stdio = None,
        stderr: Stdio = None,
        limits: RunLimits | None = None,
    ) -> LauncherJail:
        # Everything is built here in the parent; the child only runs a few syscalls.
        confinement = self.confinement(policy, (stdin, stdout, stderr))
        steps = [limits.preexec()] if limits is not None else []
        steps += confinement.steps  # then the filter (last: it may deny prctl paths)
        try:
            return launch(
                argv,
                env=confinement.env,
                cwd=policy.cwd,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                confine=steps,
                supervision=confinement.supervision,
            )
        except subprocess.SubprocessError as error:
            raise SandboxUnavailable(
                f"Landlock/seccomp could not be applied to the command: {error}",
                fix=_why_confinement_failed(),
            ) from None
        finally:
            confinement.ruleset.close()


def command_environment(policy: SandboxPolicy) -> dict[str, str]:
    """The environment a command of ``policy`` gets: the policy's, the per-session copies of
    substituted home files by their variables, the proxy's variables in allowlist mode."""
    env = dict(policy.env)
    for host, copy in policy.substitutes:
        variable = SUBSTITUTE_VARIABLES.get(host.name)
        if variable is not None:
            env.setdefault(variable, str(copy))
    if policy.network is NetworkMode.ALLOWLIST and policy.proxy_port is not None:
        env.update(proxy_environment(policy.proxy_port))
    return env


def _why_confinement_failed() -> str:
    """The likely cause when the child could not confine itself, for the error's fix line."""
    try:
        with open("/proc/self/status") as status:
            filtered = any(line.split() == ["Seccomp:", "2"] for line in status)
    except OSError:
        filtered = False
    if filtered:  # a listener already exists above us: the kernel allows one per process
        return (
            "stockade itself runs under a seccomp filter: if that is another stockade "
            "Landlock jail, run this outside it (its seccomp supervisor cannot be nested); "
            "otherwise run `stockade doctor --backend landlock` for details"
        )
    return "run `stockade doctor --backend landlock` for details"


def metadata_tree(policy: SandboxPolicy, landlock_policy: LandlockPolicy) -> WritableTree:
    """Where the supervisor may change metadata: the writable roots minus every protected and
    masked path - all of the policy's protected paths, also those Landlock itself leaves
    writable (a path check per call needs no frozen directory)."""
    read_only = (*(str(p.path) for p in policy.protected), *landlock_policy.protected_paths)
    return WritableTree(
        tuple(landlock_policy.writable_roots),
        tuple(dict.fromkeys((*read_only, *landlock_policy.masked_paths))),
    )


def _supervisor_for(
    tree: WritableTree, ruleset: Ruleset, proxy_port: int | None
) -> Callable[[int], Supervisor]:
    """What the launcher runs once it holds the listener: it takes the jail's credentials
    (root: no capabilities, like the jail), so the calls it performs get the caller's answers."""
    cap_last = ruleset._cap_last

    def serve(listener: int) -> Supervisor:
        if ruleset.drop_caps and os.geteuid() == 0:
            _drop_all_capabilities(cap_last, bounding=False)
        return Supervisor(listener, tree, proxy_port=proxy_port)

    return serve


def terminals_of(stdio: Sequence[Stdio]) -> tuple[str, ...]:
    """The terminal devices the command inherits as stdin/stdout/stderr (None: ours)."""
    found: list[str] = []
    for number, given in enumerate(stdio):
        if given is None:
            fd = number
        elif isinstance(given, int) and given >= 0:
            fd = given
        elif hasattr(given, "fileno"):
            try:
                fd = given.fileno()
            except (OSError, ValueError):
                continue
        else:
            continue
        try:
            if os.isatty(fd):
                found.append(os.ttyname(fd))
        except OSError:
            continue
    return tuple(dict.fromkeys(found))
