"""The host side of the deep battery: what must hold for an attempt to mean something
(requirements), what a posture openly admits (admissions), and the judges that decide from the
host whether an attempt got out.

A judge never trusts what the jail says about itself. It looks at the lab (did a file appear,
change, vanish, gain a setuid bit), at the tripwires (did a listener get a connection), at the
jailed process through /proc from outside (which fds it holds and in which mode, its children's
namespaces and tracer), at the sentinel (pending signals, tracer) and at the kernel's key list.
Files the jail wrote into the exchange dir count only for what they contain: a token the host
never gave the jail can only be there if the jail read it where it should not have.

Each judge returns None (nothing got out) or one line saying what got out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from stockade.doctor.fixtures import SENTINEL_SIGNALS, Tripwire, processes_with
from stockade.doctor.lab import KEYRING_PREFIX, Lab
from stockade.sandbox import gitconfig
from stockade.sandbox.posture import Posture

# --------------------------------------------------------------------------------------------
# The scene: everything a judge may look at
# --------------------------------------------------------------------------------------------


@dataclass
class Planned:
    """One attempt made concrete for one run: its steps resolved, its fd slot, tag, marker."""

    name: str
    steps: list[list[str]]
    judges: list[tuple[str, tuple[str, ...]]]
    phase: str
    slot: int | None = None
    tag: str = ""
    mark: str = ""
    tripwire: Tripwire | None = None

    def to_spec(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "steps": self.steps,
            "phase": self.phase,
            "slot": self.slot,
            "tag": self.tag,
            "mark": self.mark,
        }


@dataclass
class Scene:
    """One jail of the battery, as the host sees it."""

    lab: Lab
    scenario: str
    posture: Posture | None  # None: the unconfined self-test (tests only)
    allow_unix_sockets: bool
    host_checks: dict[str, str | None]
    state: dict[str, list[str]]
    before: dict[str, Fingerprint | None] = field(default_factory=dict)
    before_trees: dict[str, TreeFingerprint | None] = field(default_factory=dict)
    next_slot: int = 100  # fd numbers handed out for held objects
    jail: list[tuple[int, str]] = field(default_factory=list)  # (host pid, comm) while holding
    proxy_port: int | None = None

    @property
    def unconfined(self) -> bool:
        return self.posture is None

    def main_pid(self) -> int | None:
        return next((pid for pid, comm in self.jail if comm == "sk-main"), None)

    def child_pid(self, tag: str) -> int | None:
        return next((pid for pid, comm in self.jail if comm == f"sk-{tag}"), None)


# --------------------------------------------------------------------------------------------
# Requirements: "name" or "name:argument"; a check returns None when met, else the reason
# --------------------------------------------------------------------------------------------


def _root(scene: Scene, _: str) -> str | None:
    return None if os.geteuid() == 0 else "not root: the host user cannot do this either"


def _exists(scene: Scene, path: str) -> str | None:
    return None if os.path.lexists(path) else f"{path} does not exist on this host"


def _host_writable(scene: Scene, path: str) -> str | None:
    return _host_access(path, os.W_OK, f"open {path} for writing")


def _host_readable(scene: Scene, path: str) -> str | None:
    return _host_access(path, os.R_OK, f"read {path}")


def _host_access(path: str, mode: int, doing: str) -> str | None:
    if not os.path.exists(path):
        return f"{path} does not exist on this host"
    if not os.access(path, mode):
        return f"the host user cannot {doing} either"
    return None


def _host_listing(scene: Scene, path: str) -> str | None:
    try:
        names = os.listdir(path)
    except OSError:
        return f"{path} does not exist on this host"
    return None if names else f"{path} is empty on this host"


def _host_can(scene: Scene, what: str) -> str | None:
    problem = scene.host_checks.get(what, "not checked")
    return None if problem is None else f"the host itself cannot ({what}: {problem})"


def _ipv6(scene: Scene, _: str) -> str | None:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return "no IPv6 loopback on this host"
    return None


def _host_address(family: str) -> Callable[[Scene, str], str | None]:
    def check(scene: Scene, _: str) -> str | None:
        if scene.lab.values.get(family) is None:
            return f"this host has no {'IPv6' if family == 'host6' else 'IPv4'} network address"
        return None

    return check


def _mptcp(scene: Scene, _: str) -> str | None:
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262).close()
    except OSError as error:
        return f"the kernel has no MPTCP ({error.strerror})"
    return None


def _tcp_fastopen(scene: Scene, _: str) -> str | None:
    try:
        value = int(Path("/proc/sys/net/ipv4/tcp_fastopen").read_text())
    except (OSError, ValueError):
        return "TCP Fast Open is unknown to this kernel"
    return None if value & 1 else "TCP Fast Open (client side) is off on this host"


def _user_xattrs(scene: Scene, _: str) -> str | None:
    scratch = scene.lab.root / "xattr-check"
    try:
        scratch.write_text("x")
        os.setxattr(scratch, "user.stockade-doctor", b"1")
    except OSError as error:
        return f"the lab's file system has no user xattrs ({error.strerror})"
    finally:
        scratch.unlink(missing_ok=True)
    return None


def _machine(scene: Scene, wanted: str) -> str | None:
    machine = platform.machine()
    return None if machine == wanted else f"only on {wanted} (this is {machine})"


def _file_handle(scene: Scene, _: str) -> str | None:
    if scene.lab.values.get("key_handle") is None:
        return "the lab's file system does not export file handles"
    return None


def _state_files(scene: Scene, group: str) -> str | None:
    if scene.state.get(group):
        return None
    return {
        "filters": "no compiled seccomp filter is cached in stockade's state dirs",
        "keys": "no private key file in stockade's state dirs",
    }.get(group, f"no {group} files in stockade's state dirs")


def _proxy_port(scene: Scene, _: str) -> str | None:
    return None if scene.proxy_port else "no allow-list proxy port (unconfined self-test)"


def _in_jail_bridge(scene: Scene, _: str) -> str | None:
    if scene.posture is None or not scene.posture.network_namespace:
        return "this backend has no in-jail bridge (the command reaches the proxy directly)"
    return None


REQUIREMENTS: dict[str, Callable[[Scene, str], str | None]] = {
    "root": _root,
    "exists": _exists,
    "host-writable": _host_writable,
    "host-readable": _host_readable,
    "host-listing": _host_listing,
    "host-can": _host_can,
    "ipv6": _ipv6,
    "host-ipv4": _host_address("host4"),
    "host-ipv6": _host_address("host6"),
    "mptcp": _mptcp,
    "tcp-fastopen": _tcp_fastopen,
    "user-xattrs": _user_xattrs,
    "machine": _machine,
    "file-handle": _file_handle,
    "state-files": _state_files,
    "proxy-port": _proxy_port,
    "in-jail-bridge": _in_jail_bridge,
}


def unmet(scene: Scene, needs: tuple[str, ...]) -> str | None:
    """The first requirement (already resolved) that does not hold here, as a reason."""
    for need in needs:
        name, _, argument = need.partition(":")
        problem = REQUIREMENTS[name](scene, argument)
        if problem is not None:
            return problem
    return None


# --------------------------------------------------------------------------------------------
# Admissions: limitations a posture states openly. An attempt that gets out through one of them
# is not-applicable (with the posture's words), never held.
# --------------------------------------------------------------------------------------------


def _no_pid_namespace(scene: Scene) -> str | None:
    posture = scene.posture
    if posture is None or posture.pid_namespace:
        return None
    return (
        f"the {posture.backend} backend has no PID namespace; its posture says host "
        "processes are visible"
    )


def _unix_sockets_allowed(scene: Scene) -> str | None:
    if scene.posture is None or not scene.allow_unix_sockets:
        return None
    return "unix sockets are allowed by the settings (sandbox.allow_unix_sockets = true)"


def _proxy_port_any_address(scene: Scene) -> str | None:
    return _gap_saying(scene, "every address")


def _gap_saying(scene: Scene, words: str) -> str | None:
    if scene.posture is None:
        return None
    return next((gap for gap in scene.posture.gaps if words in gap), None)


def _kernel_files_readable(scene: Scene) -> str | None:
    return _gap_saying(scene, "kernel files in /proc and /sys")


def _host_root(scene: Scene) -> str | None:
    if scene.posture is None or scene.posture.identity != "runs as HOST ROOT":
        return None
    return _gap_saying(scene, "runs as host root")


ADMISSIONS: dict[str, Callable[[Scene], str | None]] = {
    "no-pid-namespace": _no_pid_namespace,
    "unix-sockets-allowed": _unix_sockets_allowed,
    "proxy-port-any-address": _proxy_port_any_address,
    "kernel-files-readable": _kernel_files_readable,
    "host-root": _host_root,
}

# --------------------------------------------------------------------------------------------
# Fingerprints: what "changed" compares
# --------------------------------------------------------------------------------------------


class Fingerprint(NamedTuple):
    """What ``changed`` compares: for a directory its identity only (entries appearing are
    judged on their own), for a symlink its target, for anything else its identity, mode,
    owner, size, times and a hash of its content."""

    kind: int
    device: int
    inode: int
    target: str = ""
    mode: int = 0
    owner: tuple[int, int] = (0, 0)
    size: int = 0
    digest: str = ""
    mtime: int = 0
    ctime: int = 0


def fingerprint(path: str) -> Fingerprint | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    identity = Fingerprint(stat.S_IFMT(info.st_mode), info.st_dev, info.st_ino)
    if stat.S_ISDIR(info.st_mode):
        return identity
    if stat.S_ISLNK(info.st_mode):
        # a symlink is what it points at: one put back as it was (the guard restores a
        # replaced protected link) is the same link to every program that follows it
        return Fingerprint(stat.S_IFLNK, 0, 0, target=os.readlink(path))
    digest = ""
    if stat.S_ISREG(info.st_mode):
        with contextlib.suppress(OSError), open(path, "rb") as handle:
            digest = hashlib.sha256(handle.read(1 << 22)).hexdigest()
    return identity._replace(
        mode=info.st_mode & 0o7777,
        owner=(info.st_uid, info.st_gid),
        size=info.st_size,
        digest=digest,
        mtime=info.st_mtime_ns,
        ctime=info.st_ctime_ns,
    )


def _describe_change(before: Fingerprint | None, after: Fingerprint | None) -> str:
    if before is None:
        return "appeared"
    if after is None:
        return "was removed"
    for field_name, what in (
        ("inode", "was replaced (another inode)"),
        ("kind", "was replaced (another kind of file)"),
        ("target", f"now points to {after.target}"),
        ("mode", f"mode changed {before.mode:o} -> {after.mode:o}"),
        ("owner", f"owner changed {before.owner} -> {after.owner}"),
        ("size", "size changed"),
        ("digest", "content changed"),
        ("mtime", "modification time changed"),
    ):
        if getattr(before, field_name) != getattr(after, field_name):
            return what
    return "its inode changed (ctime: xattrs, links or a chown)"


TreeFingerprint = tuple[tuple[str, int, int, str], ...]  # (relative path, kind, mode, content)


def tree_fingerprint(path: str) -> TreeFingerprint | None:
    """What a directory tree holds, by content: every entry's name, kind, mode and content
    (a file's hash, a link's target). Not inodes: a tree put back as it was (Landlock's
    guard restores a protected directory from its copy) is the same tree to every program."""
    try:
        root = os.lstat(path)
    except OSError:
        return None
    entries: list[tuple[str, int, int, str]] = [(".", stat.S_IFMT(root.st_mode), 0, "")]
    if not stat.S_ISDIR(root.st_mode):
        return ((".", stat.S_IFMT(root.st_mode), root.st_mode & 0o7777, repr(fingerprint(path))),)
    for directory, names, files in os.walk(path):
        names.sort()
        for name in sorted(names + files):
            full = os.path.join(directory, name)
            with contextlib.suppress(OSError):
                info = os.lstat(full)
                content = ""
                if stat.S_ISLNK(info.st_mode):
                    content = os.readlink(full)
                elif stat.S_ISREG(info.st_mode):
                    with open(full, "rb") as handle:
                        content = hashlib.sha256(handle.read(1 << 22)).hexdigest()
                relative = os.path.relpath(full, path)
                entries.append(
                    (relative, stat.S_IFMT(info.st_mode), info.st_mode & 0o7777, content)
                )
    return tuple(entries)


def trees_to_fingerprint(planned: Planned) -> list[str]:
    return [args[0] for kind, args in planned.judges if kind == "tree-changed"]


def paths_to_fingerprint(planned: Planned) -> list[str]:
    paths = []
    for kind, args in planned.judges:
        if kind in ("changed", "gone", "appeared"):
            paths.append(args[0])
    return paths


# --------------------------------------------------------------------------------------------
# The judges
# --------------------------------------------------------------------------------------------

Judgement = Callable[[Scene, Planned, tuple[str, ...]], "str | None"]


def _appeared(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    path = args[0]
    if scene.before.get(path) is None and os.path.lexists(path):
        return f"{path} appeared on the host"
    return None


def _changed(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    path = args[0]
    before, after = scene.before.get(path), fingerprint(path)
    if before != after:
        return f"{path} {_describe_change(before, after)}"
    return None


def _tree_changed(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    path = args[0]
    before, after = scene.before_trees.get(path), tree_fingerprint(path)
    if before != after:
        if after is None:
            return f"{path} was removed from the host"
        added = sorted({e[0] for e in after} - {e[0] for e in before or ()})
        what = f"now also holds {', '.join(added[:3])}" if added else "holds other content"
        return f"{path} {what}"
    return None


def _gone(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    path = args[0]
    if scene.before.get(path) is not None and not os.path.lexists(path):
        return f"{path} was removed from the host"
    return None


def _contains(path: str, needle: str) -> bool:
    if not needle:
        return False
    try:
        with open(path, "rb") as handle:
            return needle.encode() in handle.read(1 << 24)
    except OSError:
        return False


def _marked(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    if _contains(args[0], planned.mark):
        return f"{args[0]} now holds what the jail wrote"
    return None


def _marked_listed(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    written = [path for path in scene.state.get(args[0], []) if _contains(path, planned.mark)]
    if written:
        return "the jail rewrote " + ", ".join(written)
    return None


def _token(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    where, name = args
    if _contains(where, scene.lab.tokens[name]):
        return f"the jail read the {name} token"
    return None


def _any_env_token(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    leaked = [
        name[4:]
        for name, value in scene.lab.tokens.items()
        if name.startswith("env:") and _contains(args[0], value)
    ]
    if leaked:
        return "the jail read the launcher's values of " + ", ".join(sorted(leaked))
    return None


def _leaked_listed(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    group, where = args
    try:
        copied = Path(where).read_bytes()
    except OSError:
        return None
    leaked = []
    for path in scene.state.get(group, []):
        with contextlib.suppress(OSError):
            content = Path(path).read_bytes().strip()
            if content and content in copied:
                leaked.append(path)
    if leaked:
        return "the jail read " + ", ".join(leaked)
    return None


def _same_content(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    host_path, where = args
    try:
        host, copied = Path(host_path).read_bytes(), Path(where).read_bytes()
    except OSError:
        return None
    if host and host == copied:
        return f"the jail read {host_path} (its copy matches the host's file)"
    return None


def _same_listing(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    import json

    path, where = args
    try:
        seen = json.loads(Path(where).read_text())
        host = sorted(os.listdir(path))
    except (OSError, ValueError):
        return None
    if host and seen == host:
        return f"the jail listed the host's {path} ({', '.join(host[:5])})"
    return None


def _hit(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    wire = planned.tripwire
    if wire is not None and wire.hits:
        return f"the host {wire.kind} listener {wire.address} got {wire.hits[0]}"
    return None


def _fd(pid: int, slot: int) -> tuple[str, int, os.stat_result] | None:
    """(link target, open flags, stat) of fd ``slot`` of host process ``pid``, or None."""
    try:
        target = os.readlink(f"/proc/{pid}/fd/{slot}")
        with open(f"/proc/{pid}/fdinfo/{slot}", encoding="utf-8") as handle:
            flags = next(int(line.split()[1], 8) for line in handle if line.startswith("flags:"))
        info = os.stat(f"/proc/{pid}/fd/{slot}")
    except (OSError, StopIteration, ValueError):
        return None
    return target, flags, info


def _held(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    kind, expected = args
    pid = scene.main_pid()
    if pid is None or planned.slot is None:
        return None
    slots = range(planned.slot, planned.slot + 64) if kind == "pts" else (planned.slot,)
    for slot in slots:
        found = _fd(pid, slot)
        if found is None:
            continue
        target, flags, info = found
        writable = flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR)
        null = stat.S_ISCHR(info.st_mode) and info.st_rdev == os.makedev(1, 3)
        real = not null and not stat.S_ISDIR(info.st_mode)
        if kind == "write" and writable and real:
            return f"the jail holds {target} open for writing (the real one, not a mask)"
        if kind == "read" and real:
            return f"the jail holds {target} open for reading (the real one, not a mask)"
        if kind == "anon" and target == f"anon_inode:{expected}":
            return f"the jail made {expected} (the host sees {target} in its fd table)"
        if kind == "unix" and target.startswith("socket:") and _is_unix_socket(pid, target):
            return "the jail holds an AF_UNIX socket"
        if kind == "pts" and stat.S_ISCHR(info.st_mode) and info.st_dev == _host_devpts():
            return f"the jail holds a host terminal ({target}) open for writing"
    return None


def _is_unix_socket(pid: int, target: str) -> bool:
    inode = target[len("socket:[") : -1]
    try:
        with open(f"/proc/{pid}/net/unix", encoding="utf-8") as handle:
            return any(line.split()[6:7] == [inode] for line in handle)
    except OSError:
        return False


def _host_devpts() -> int:
    try:
        return os.stat("/dev/pts").st_dev
    except OSError:
        return -1


def _namespace(pid: int | None) -> str | None:
    if pid is None:
        return None
    try:
        return os.readlink(f"/proc/{pid}/ns/user")
    except OSError:
        return None


def _new_user_namespace(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    child, main = _namespace(scene.child_pid(planned.tag)), _namespace(scene.main_pid())
    if child is not None and main is not None and child != main:
        return f"a child of the jail is in a new user namespace ({child})"
    return None


def _tracer(pid: int | None) -> int:
    if pid is None:
        return 0
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _traced_child(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    tracer = _tracer(scene.child_pid(planned.tag))
    return f"a child of the jail is traced by pid {tracer}" if tracer else None


def _traced_sentinel(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    tracer = _tracer(scene.lab.sentinel.pid)
    return f"the host sentinel process is traced by pid {tracer}" if tracer else None


def _keyring(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    name = f"{KEYRING_PREFIX}{planned.tag}"
    try:
        with open("/proc/keys", encoding="utf-8") as handle:
            found = any(f" {name}:" in line for line in handle)
    except OSError:
        return None
    return f"the kernel's key list shows the jail's new keyring {name}" if found else None


def _pending(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    number = int(SENTINEL_SIGNALS[args[0]])
    try:
        pending = scene.lab.sentinel.pending()
    except OSError:
        return None
    if number in pending:
        return f"signal {number} reached the host sentinel process (pending there)"
    return None


def _alive(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    marker, _ = args
    found = [pid for pid, _ in processes_with(marker)]
    if found:
        return f"process {found[0]} is still running after the run returned"
    return None


def _privileged_file(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    path = args[0]
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode):
        return f"{path} is a device node on the host"
    if stat.S_ISREG(info.st_mode) and info.st_mode & (stat.S_ISUID | stat.S_ISGID):
        bits = "setuid" if info.st_mode & stat.S_ISUID else "setgid"
        return f"{path} is {bits} on the host (mode {info.st_mode & 0o7777:o}, owner {info.st_uid})"
    return None


def _file_capability(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    try:
        os.getxattr(args[0], "security.capability")
    except OSError:
        return None
    return f"{args[0]} carries a file capability on the host"


def _executable(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    try:
        info = os.stat(args[0])
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode) and info.st_mode & 0o111:
        return f"{args[0]} is an executable hook on the host"
    return None


def git_exec_keys(text: str) -> list[str]:
    """The entries of a git config file's text that make the host's git run a program, by
    the post-run guard's table and parser (``stockade.sandbox.gitconfig``: one definition)."""
    return [found.entry.key for found in gitconfig.exec_entries(gitconfig.parse(text))]


def _git_exec(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    try:
        text = Path(args[0]).read_text(errors="replace")
    except OSError:
        return None
    keys = git_exec_keys(text)
    if keys:
        return f"{args[0]} sets {', '.join(keys)} (git runs it on the host)"
    return None


def _pty(scene: Scene, planned: Planned, args: tuple[str, ...]) -> str | None:
    marker = scene.lab.tokens[f"pty:{args[0]}"]
    if marker.encode() in scene.lab.terminal.output():
        return f"the jail's text arrived in the host terminal {scene.lab.terminal.path}"
    return None


JUDGES: dict[str, Judgement] = {
    "appeared": _appeared,
    "changed": _changed,
    "tree-changed": _tree_changed,
    "gone": _gone,
    "marked": _marked,
    "marked-listed": _marked_listed,
    "token": _token,
    "any-env-token": _any_env_token,
    "leaked-listed": _leaked_listed,
    "same-content": _same_content,
    "same-listing": _same_listing,
    "hit": _hit,
    "held": _held,
    "new-user-namespace": _new_user_namespace,
    "traced-child": _traced_child,
    "traced-sentinel": _traced_sentinel,
    "keyring": _keyring,
    "pending": _pending,
    "alive": _alive,
    "privileged-file": _privileged_file,
    "file-capability": _file_capability,
    "executable": _executable,
    "git-exec": _git_exec,
    "pty": _pty,
}

#: Judges that look at the jail while it holds (fds, children, tracers); the rest run after.
WHILE_HOLDING = frozenset(
    {"held", "new-user-namespace", "traced-child", "traced-sentinel", "keyring"}
)
