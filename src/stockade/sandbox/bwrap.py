"""The bubblewrap backend: namespaces, a read-only root, and bind mounts built from the policy.

Mount order matters: bwrap applies its arguments in order and a later mount hides everything
below its path. Mounts are therefore emitted parent-before-child (by path depth), and at the
same path in policy order: writable bind, read-deny mask, read-allow re-bind, protected
re-bind. That gives "most specific wins" for every nesting (a mask inside a writable root, a
writable root inside an allow-within-deny path, a protected file inside a writable root).

Launch protocol (no preexec, so Python can vfork): bwrap reports the host pid of the sandbox's
first process on ``--json-status-fd`` and then waits on ``--block-fd`` before it starts the
command. In that window ``before_start`` applies rlimits and cgroup membership to the pid, so
the command inherits them. The same status stream later says whether the command really
started, which separates "sandbox setup failed" from "command failed".

When stockade runs as root the command never runs as host root (``identity.py``): the child
that execs bwrap first builds a private mount namespace with id-mapped roots and switches to
the jail user, so bwrap itself runs unprivileged; ``before_start`` also checks, from the host,
that the sandbox's first process really is the jail user before the command may start.

With a review layer (``policy.layer``, ``overlay.py``) the same child also attaches the layer
over the project in a mount namespace of its own (after the switch to the jail user, as root),
and ``before_start`` proves from the host that the sandbox sees the layer there. The child's
steps come from ``mount_stage.py``, which says why one failed.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from stockade.errors import SandboxUnavailable
from stockade.net.jail import JAIL_SOCKET_DIR, bridge_command
from stockade.sandbox import identity, mount_stage, seccomp
from stockade.sandbox.backend import Stdio, Unavailable, proxy_not_running
from stockade.sandbox.environment import visible_python
from stockade.sandbox.identity import JailUser
from stockade.sandbox.limits import RunLimits
from stockade.sandbox.overlay import Layer
from stockade.sandbox.policy import (
    NetworkMode,
    ProtectedPath,
    SandboxPolicy,
    innermost_root,
    is_within,
)
from stockade.sandbox.posture import Posture
from stockade.userdirs import read_json_cache, write_json_cache

# --------------------------------------------------------------------------------------------
# The host kernel's interfaces, inside every jail, as root and unprivileged. The reference is
# the OCI runtime's default spec (runc, crun and Docker ship it as readonlyPaths and
# maskedPaths): these are kernel-wide, not per namespace, so a fresh /proc still shows them.
# Entries this kernel does not have are skipped.
# --------------------------------------------------------------------------------------------

# Read-only: tunables (core_pattern runs a program as host root on the next crash), the magic
# SysRq trigger, IRQ affinity, bus and filesystem settings.
KERNEL_READ_ONLY: tuple[str, ...] = (
    "/proc/bus",
    "/proc/fs",
    "/proc/irq",
    "/proc/sys",
    "/proc/sysrq-trigger",
)
# Masked (an empty read-only directory, or /dev/null for a file): kernel memory, keyrings,
# timer and scheduler internals (ASLR and side-channel aids), firmware tables, power meters
# (RAPL energy readings leak what other processes compute).
KERNEL_MASKED: tuple[str, ...] = (
    "/proc/acpi",
    "/proc/asound",
    "/proc/interrupts",
    "/proc/kcore",
    "/proc/keys",
    "/proc/latency_stats",
    "/proc/sched_debug",
    "/proc/scsi",
    "/proc/timer_list",
    "/proc/timer_stats",
    "/sys/devices/virtual/powercap",
    "/sys/firmware",
)
# /sys and the cgroup files below it are read-only already: the host root is bound read-only
# (recursively) before anything else.

# Namespaces and process flags, always. --unshare-user is explicit because --unshare-all only
# *tries* one, and --disable-userns requires it.
BASE_FLAGS: tuple[str, ...] = (
    "--unshare-all",
    "--unshare-user",
    "--die-with-parent",
    "--new-session",
    "--cap-drop",
    "ALL",
)

# The filesystem skeleton before any policy mount: read-only host root, fresh /dev and /proc
# (own PID namespace), and a private /tmp (host /tmp holds other programs' sockets and files).
SKELETON: tuple[tuple[str, ...], ...] = (
    ("--ro-bind", "/", "/"),
    ("--dev", "/dev"),
    ("--proc", "/proc"),
    ("--tmpfs", "/tmp"),
)

PRIVATE_TMP = Path("/tmp")  # replaced by a private tmpfs in the skeleton
PACKAGE_DIR = Path(os.path.realpath(Path(__file__).parent.parent))  # the stockade package
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
COMMAND_FILTER_NAME = "command.bpf"  # allowlist mode: the command's own seccomp filter
COMMAND_FILTER_IN_JAIL = f"{JAIL_SOCKET_DIR}/{COMMAND_FILTER_NAME}"
ENV_PROGRAM = "/usr/bin/env"
STATUS_TIMEOUT_SECONDS = 30.0
VERSION_CACHE = "bwrap-version.json"

# Rank of a mount among mounts at the same path (later wins).
_RANK_SKELETON, _RANK_WRITABLE, _RANK_MASK, _RANK_ALLOW, _RANK_PROTECT = range(5)


class Mount(NamedTuple):
    path: Path
    rank: int
    args: tuple[str, ...]


def mount_arguments(policy: SandboxPolicy) -> list[str]:
    """Translate the policy into ordered bwrap mount arguments.

    Every mount lands on a path that exists: a protected name is bound read-only only when
    it exists (what a command creates is judged by the post-run guard), so bwrap never
    creates a mount point - nothing appears on the host, during or after a run."""
    mounts = [Mount(Path(a[-1]), _RANK_SKELETON, a) for a in SKELETON]
    if policy.network is NetworkMode.ALLOWLIST and policy.proxy_socket_dir is not None:
        # A fresh /run (hiding the host's runtime sockets) with the proxy socket dir on top.
        mounts.append(Mount(Path("/run"), _RANK_SKELETON, ("--tmpfs", "/run")))
        mounts.append(
            Mount(
                Path(JAIL_SOCKET_DIR),
                _RANK_SKELETON,
                ("--ro-bind", str(policy.proxy_socket_dir), JAIL_SOCKET_DIR),
            )
        )
    if _hidden_by_private_tmp(PACKAGE_DIR):
        # stockade's own in-jail helpers (the network bridge, doctor probes) must stay visible
        mounts.append(Mount(PACKAGE_DIR, _RANK_SKELETON, ("--ro-bind", *[str(PACKAGE_DIR)] * 2)))
    for root in policy.writable:
        if root == policy.session_tmp and policy.session_tmp_size is not None:
            capped = ("--size", str(policy.session_tmp_size), "--tmpfs", str(root))
            mounts.append(Mount(root, _RANK_WRITABLE, capped))
            continue
        mounts.append(Mount(root, _RANK_WRITABLE, ("--bind", str(root), str(root))))
    for mask in policy.masked:
        mounts.append(
            Mount(mask.path, _RANK_MASK, _empty(mask.path, mask.is_dir, policy.mask_file))
        )
    for host, copy in policy.substitutes:
        mounts.append(Mount(host, _RANK_MASK, ("--ro-bind", str(copy), str(host))))
    for allowed in policy.read_allow_within_deny:
        if allowed.exists():
            mounts.append(Mount(allowed, _RANK_ALLOW, ("--ro-bind", str(allowed), str(allowed))))
    for item in _bound_protected(policy):
        target = str(item.path)
        mounts.append(Mount(item.path, _RANK_PROTECT, ("--ro-bind", target, target)))
    for ancestor in _pinned_ancestors(policy):
        mounts.append(Mount(ancestor, _RANK_WRITABLE, ("--bind", str(ancestor), str(ancestor))))
    mounts += kernel_mounts()
    mounts.sort(key=lambda m: (len(m.path.parts), m.rank))
    arguments = [arg for mount in mounts for arg in mount.args]
    # Empty tmpfs mounts (masks) turn read-only last: mount points for re-binds below them
    # must be created first (inside the tmpfs, never on the host).
    for mount in mounts:
        if mount.args[0] == "--tmpfs" and mount.rank != _RANK_SKELETON:
            arguments += ["--remount-ro", str(mount.path)]
    return arguments


_kernel_memo: list[Mount] = []


def kernel_mounts() -> list[Mount]:
    """The kernel table as mounts (after the fresh /proc: deeper paths sort later). Sources
    of the read-only binds come from the host's /proc, which shows the same kernel-wide
    files; which entries exist is looked up once per process."""
    if not _kernel_memo:
        for path in KERNEL_READ_ONLY:
            if os.path.exists(path):
                _kernel_memo.append(Mount(Path(path), _RANK_PROTECT, ("--ro-bind", path, path)))
        for path in KERNEL_MASKED:
            if os.path.exists(path):
                empty = _empty(Path(path), os.path.isdir(path))
                _kernel_memo.append(Mount(Path(path), _RANK_MASK, empty))
    return list(_kernel_memo)


def _bound_protected(policy: SandboxPolicy) -> list[ProtectedPath]:
    """Protected paths that need a read-only bind: existing ones inside a writable root (a
    symlinked name whose target lies outside is read-only already; the guard keeps the link)."""
    return [item for item in policy.protected if innermost_root(item.path, policy.writable)]


def _hidden_by_private_tmp(path: Path) -> bool:
    return is_within(path, PRIVATE_TMP)


def _pinned_ancestors(policy: SandboxPolicy) -> list[Path]:
    """Directories between a writable root and a protected path inside it.

    They get a writable self-bind so they become mount points: renaming a mount point fails
    (EBUSY). Otherwise ``mv .git .git-old && mkdir -p .git/hooks`` would move the read-only
    mount away with the old directory and leave a writable ``.git/hooks`` under the old name.
    """
    pinned: dict[Path, None] = {}
    for item in _bound_protected(policy):
        root = innermost_root(item.path, policy.writable, strictly=True)
        if root is None:
            continue
        for ancestor in item.path.parents:
            if ancestor == root:
                break
            pinned[ancestor] = None
    return list(pinned)


def _empty(path: Path, is_dir: bool, mask_file: Path | None = None) -> tuple[str, ...]:
    """An empty stand-in: a tmpfs for a directory; for a file, ``mask_file`` (the session's
    unreadable empty file: a read fails with EACCES, which stockade explains), else
    /dev/null."""
    if is_dir:
        return ("--tmpfs", str(path))
    return ("--ro-bind", str(mask_file or "/dev/null"), str(path))


class BwrapBinary(NamedTuple):
    path: str
    version: tuple[int, ...]

    @property
    def supports_disable_userns(self) -> bool:
        return self.version >= (0, 8, 0)


def find_bwrap() -> BwrapBinary | Unavailable:
    """Locate bwrap and learn its version (cached on disk, keyed by the binary's identity)."""
    path = shutil.which("bwrap")
    if path is None:
        return Unavailable(
            reason="bubblewrap (bwrap) is not installed",
            fix="sudo apt-get install bubblewrap (Debian/Ubuntu) or dnf install bubblewrap",
        )
    info = os.stat(path)
    identity = f"{path}:{info.st_ino}:{info.st_mtime_ns}:{info.st_size}"
    cache = read_json_cache(VERSION_CACHE)
    version = cache.get(identity)
    if not isinstance(version, list):
        try:
            output = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=10, check=False
            ).stdout
        except (OSError, subprocess.SubprocessError) as error:
            return Unavailable(reason=f"cannot run {path}: {error}", fix="reinstall bubblewrap")
        version = [int(p) for p in output.split()[-1].split(".") if p.isdigit()] if output else []
        write_json_cache(VERSION_CACHE, {identity: version})
    return BwrapBinary(path=path, version=tuple(version))


def build_argv(
    binary: BwrapBinary,
    policy: SandboxPolicy,
    argv: Sequence[str],
    *,
    status_fd: int,
    block_fd: int,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full bwrap command line. The environment is set *inside* the jail by env(1)."""
    command = [binary.path, *BASE_FLAGS]
    if binary.supports_disable_userns:
        command.append("--disable-userns")
    if policy.jail_user is not None:
        # the jail user sees itself as uid 0 of the jail's own namespace: HOME, whoami and
        # the owners of the roots look as they did for a root launcher
        command += ["--uid", "0", "--gid", "0"]
    if policy.network is NetworkMode.ALLOW:
        command.append("--share-net")
    command += mount_arguments(policy)
    command += ["--chdir", str(policy.cwd)]
    command += ["--json-status-fd", str(status_fd), "--block-fd", str(block_fd)]
    if seccomp_fd is not None:
        command += ["--seccomp", str(seccomp_fd)]
    env = dict(policy.env)
    env.setdefault("PATH", DEFAULT_PATH)
    if policy.network is NetworkMode.ALLOWLIST:  # the only way out: the bridge to the proxy
        if policy.proxy_socket_dir is None:
            raise proxy_not_running()
        argv = bridge_command(
            argv,
            python=visible_python(),
            proxy_env=True,
            seccomp_file=COMMAND_FILTER_IN_JAIL if _bridge_filters_command(policy) else None,
        )
    command += ["--", ENV_PROGRAM, "-i", *(f"{k}={v}" for k, v in env.items()), *argv]
    return command


def _bridge_filters_command(policy: SandboxPolicy) -> bool:
    """In allowlist mode the jail's first process is the bridge, which reaches the proxy over
    a unix socket; unless unix sockets are allowed anyway, the launcher's filter must let it
    have one and the bridge installs the strict filter (no AF_UNIX) on the command itself."""
    return (
        policy.network is NetworkMode.ALLOWLIST
        and policy.proxy_socket_dir is not None
        and not policy.allow_unix_sockets
    )


def _place_command_filter(socket_dir: Path) -> None:
    """The command's strict filter, next to the proxy socket (bound read-only into the jail),
    written once per session."""
    command_filter = socket_dir / COMMAND_FILTER_NAME
    if not command_filter.exists():
        temporary = command_filter.with_suffix(".tmp")
        temporary.write_bytes(seccomp.build_filter_program(allow_unix_sockets=False))
        os.replace(temporary, command_filter)


class BwrapJail:
    """A command running under bwrap; see the module docstring for the launch protocol."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        status_read: int,
        block_write: int,
        jail_user: JailUser | None = None,
        layer: tuple[Layer, int] | None = None,
    ) -> None:
        self.process = process
        self._status_read = status_read
        self._block_write = block_write
        self._status_buffer = b""
        self.sandbox_pid: int | None = None
        self._closed = False
        self._jail_user = jail_user
        self._layer = layer  # the review layer, and the block fd's number in the sandbox

    def start(self, limits: RunLimits | None) -> None:
        """Wait for the sandbox to exist, apply ``limits`` to it, then let the command go."""
        first = self._read_status_line()
        if first is not None:
            try:
                self.sandbox_pid = int(json.loads(first)["child-pid"])
            except (ValueError, KeyError, TypeError):
                self.sandbox_pid = None
        try:
            if self.sandbox_pid is None:
                # bwrap failed before creating the sandbox (exit_code() then reports its
                # message) - or it hangs, which must not start a command without its limits.
                try:
                    self.process.wait(timeout=STATUS_TIMEOUT_SECONDS)
                except subprocess.TimeoutExpired:
                    raise SandboxUnavailable(
                        "bubblewrap did not report its sandbox process",
                        fix="run `stockade doctor`; check that bwrap supports --json-status-fd",
                    ) from None
            else:
                if self._jail_user is not None:
                    identity.check_running_as(self.sandbox_pid, self._jail_user)
                if self._layer is not None:
                    layer, block_fd = self._layer
                    layer.verify(self.sandbox_pid, block_fd)
                if limits is not None:
                    limits.apply_to(self.sandbox_pid)
        except BaseException:
            self.kill_all()
            raise
        finally:
            with contextlib.suppress(OSError):  # bwrap already gone: exit_code() says why
                os.write(self._block_write, b"1")
            os.close(self._block_write)
            self._block_write = -1

    def _read_status_line(self) -> bytes | None:
        while b"\n" not in self._status_buffer:
            ready, _, _ = select.select([self._status_read], [], [], STATUS_TIMEOUT_SECONDS)
            if not ready:
                return None
            chunk = os.read(self._status_read, 4096)
            if not chunk:
                return None
            self._status_buffer += chunk
        line, _, self._status_buffer = self._status_buffer.partition(b"\n")
        return line

    def signal_command(self, signum: int) -> None:
        if self.sandbox_pid is None:
            self.kill_all()
            return
        try:
            # The sandbox's first process called setsid(), so its pid is the process group of
            # the whole confined tree; its own init ignores signals it has no handler for.
            os.killpg(self.sandbox_pid, signum)
        except ProcessLookupError:
            pass
        except PermissionError:
            self.kill_all()

    def kill_all(self) -> None:
        # Killing the monitor kills the sandbox init (PR_SET_PDEATHSIG), and the death of a PID
        # namespace's init kills every process in it. In its first instants the init has no
        # process group of its own yet and can outlive the monitor: kill it by pid as well.
        targets = ((self.sandbox_pid, True), (self.sandbox_pid, False), (self.process.pid, False))
        for pid, group in targets:
            if pid is None:
                continue
            try:
                if group:
                    os.killpg(pid, signal.SIGKILL)
                else:
                    os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def exit_code(self, returncode: int) -> int:
        """bwrap returns the command's status (128+N for a signal); if the status stream never
        said the command started, the sandbox itself failed."""
        rest = b""
        while True:
            try:
                chunk = os.read(self._status_read, 4096)
            except (BlockingIOError, OSError):
                break
            if not chunk:
                break
            rest += chunk
        for line in (self._status_buffer + rest).splitlines():
            try:
                document = json.loads(line)
            except ValueError:
                continue
            if isinstance(document, dict) and "exit-code" in document:
                return int(document["exit-code"])
        if returncode < 0:  # bwrap itself was killed (timeout or kill_all)
            return 128 - returncode
        raise SandboxUnavailable(
            f"bubblewrap failed to set up the sandbox (exit status {returncode}); "
            "its message is above",
            fix="run `stockade doctor` to see which protection cannot be set up here",
        )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in (self._status_read, self._block_write):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)


class BwrapBackend:
    """Linux namespaces via bubblewrap: the default and strongest backend."""

    name = "bwrap"
    supports_review = True  # a mount namespace: a review layer can be attached (overlay.py)

    def __init__(self) -> None:
        self._binary: BwrapBinary | Unavailable | None = None

    def binary(self) -> BwrapBinary | Unavailable:
        if self._binary is None:
            self._binary = find_bwrap()
        return self._binary

    def unavailable(self) -> Unavailable | None:
        found = self.binary()
        if isinstance(found, Unavailable):
            return found
        return user_namespaces_unavailable()

    def posture(self, policy: SandboxPolicy, *, proven: bool) -> Posture:
        network = {
            NetworkMode.DENY: "denied",
            NetworkMode.ALLOW: "allowed",
            NetworkMode.ALLOWLIST: "allow-list proxy only",
        }[policy.network]
        gaps = []
        if policy.network is NetworkMode.ALLOW:
            gaps.append("network allowed: the command shares the host network")
        if policy.allow_unix_sockets:
            gaps.append("unix sockets allowed: a reachable host socket may be an escape")
        who, root_gaps = identity.posture_identity(policy, drops=True)
        gaps += root_gaps
        return Posture(
            backend=self.name,
            confined=True,
            proven=proven,
            filesystem=f"writes confined to {len(policy.writable)} roots",
            network=network,
            pid_namespace=True,
            env_scrubbed=True,
            masked_paths=len(policy.masked),
            seccomp=True,
            network_namespace=policy.network is not NetworkMode.ALLOW,
            masks_hide_names=True,
            gaps=tuple(gaps),
            identity=who,
        )

    def spawn(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        *,
        stdin: Stdio = None,
        stdout: Stdio = None,
        stderr: Stdio = None,
        limits: RunLimits | None = None,
        pass_fds: Sequence[int] = (),
    ) -> BwrapJail:
        """``pass_fds``: more fds the command inherits (a warm jail's control socket)."""
        binary = self.binary()
        if isinstance(binary, Unavailable):
            raise SandboxUnavailable(binary.reason, fix=binary.fix)
        # Fail closed: filter_fd raises SandboxUnavailable if the filter cannot be built.
        bridge_filters = _bridge_filters_command(policy)
        if bridge_filters:
            assert policy.proxy_socket_dir is not None
            _place_command_filter(policy.proxy_socket_dir)
        # A root launcher's command runs as the jail user: id-mapped roots, then the uid drop,
        # in the child before it execs bwrap (raises SandboxUnavailable with the fix).
        if policy.jail_user is None and policy.layer is None:
            return self._launch(
                policy, argv, binary, bridge_filters=bridge_filters, preexec=None,
                stdio=(stdin, stdout, stderr), limits=limits, pass_fds=pass_fds,
            )  # fmt: skip
        steps: list[mount_stage.Step] = []
        drop = identity.prepare_drop(policy) if policy.jail_user is not None else None
        if drop is not None:
            # The launcher cannot change another user's rlimits without CAP_SYS_RESOURCE, so
            # the child sets them (and joins the run's cgroup) while it is still root.
            if limits is not None:
                steps.append(limits.preexec())
                limits = None
            steps.append(drop.preexec)
            policy = drop.policy
        if policy.layer is not None:  # --review: the layer over the project, as the jail user
            steps += policy.layer.command_steps()
        stage = mount_stage.Stage(steps)
        try:
            return self._launch(
                policy, argv, binary, bridge_filters=bridge_filters, preexec=stage,
                stdio=(stdin, stdout, stderr), limits=limits, pass_fds=pass_fds,
            )  # fmt: skip
        finally:
            stage.close()
            if drop is not None:
                drop.close()

    def _launch(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        binary: BwrapBinary,
        *,
        bridge_filters: bool,
        preexec: mount_stage.Stage | None,
        stdio: tuple[Stdio, Stdio, Stdio],
        limits: RunLimits | None,
        pass_fds: Sequence[int] = (),
    ) -> BwrapJail:
        seccomp_fd = seccomp.filter_fd(
            allow_unix_sockets=policy.allow_unix_sockets or bridge_filters
        )
        status_read, status_write = os.pipe()
        block_read, block_write = os.pipe()
        command = build_argv(
            binary,
            policy,
            argv,
            status_fd=status_write,
            block_fd=block_read,
            seccomp_fd=seccomp_fd,
        )
        inherited = (status_write, block_read, seccomp_fd, *pass_fds)
        stdin, stdout, stderr = stdio
        try:
            process = subprocess.Popen(
                command,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env={},
                pass_fds=inherited,
                process_group=0,
                preexec_fn=preexec,
            )
        except subprocess.SubprocessError as error:
            for fd in (status_read, status_write, block_read, block_write, seccomp_fd):
                os.close(fd)
            reason = (preexec.failure() if preexec is not None else None) or str(error)
            what = " and ".join(
                step
                for step, taken in (
                    ("switch to the jail user", policy.jail_user is not None),
                    ("attach the review layer", policy.layer is not None),
                )
                if taken
            )
            fix = identity.ROOT_JAIL_FIX if policy.jail_user is not None else "run without --review"
            raise SandboxUnavailable(
                f"could not {what} before starting bubblewrap: {reason}",
                fix=f"run `stockade doctor`; {fix}",
            ) from None
        except BaseException:
            for fd in (status_read, status_write, block_read, block_write, seccomp_fd):
                os.close(fd)
            raise
        for fd in (status_write, block_read, seccomp_fd):
            os.close(fd)
        layer = (policy.layer, block_read) if policy.layer is not None else None
        jail = BwrapJail(process, status_read, block_write, jail_user=policy.jail_user, layer=layer)
        jail.start(limits)
        return jail


# Where the kernel says whether user namespaces may be created (Debian's switch, the limit).
USERNS_SWITCHES: tuple[tuple[str, str], ...] = (
    (
        "/proc/sys/kernel/unprivileged_userns_clone",
        "sudo sysctl -w kernel.unprivileged_userns_clone=1",
    ),
    ("/proc/sys/user/max_user_namespaces", "sudo sysctl -w user.max_user_namespaces=16384"),
)


def user_namespaces_unavailable() -> Unavailable | None:
    """bwrap needs an unprivileged user namespace (also as root: the command runs as the
    unprivileged jail user); a switch that forbids it makes the backend unavailable."""
    for path, fix in USERNS_SWITCHES:
        try:
            with open(path, encoding="ascii") as switch:
                value = switch.read().strip()
        except OSError:
            continue
        if value == "0":
            return Unavailable(
                reason=f"user namespaces are disabled ({path} = 0)",
                fix=f"{fix}, or use the landlock backend",
            )
    return None
