"""Review layers: an overlayfs over the project, so that a command's writes to it land in a
copy-on-write layer of stockade's own instead of in the project.

One overlay superblock serves every command of a run or session (so concurrent commands see
one consistent layer): lower = the project, upper and work = the changeset's directories in
the user's data dir (``review/store.py``). It is made once, detached, by a short-lived helper
process inside a user namespace of its own (an unprivileged user may mount overlayfs there;
as root, the helper first switches to the jail user, with the project and the changeset id-mapped
as ``identity.py`` does for writable roots). The helper hands back two fds: the detached mount
and its user namespace. For each command, the child that execs bwrap joins that namespace,
makes a mount namespace of its own and attaches a clone of the layer over the project
(``mount_stage.py``); bwrap then binds the project as usual and sees the layer. Nothing is ever
mounted on the host.

Before the command starts, :meth:`Layer.verify` proves from the host that what the sandbox
shows at the project is this layer, and that nothing writable below it is anything else. Where
overlayfs cannot be used (no overlay in the kernel, a mount below the project, a layer inside
the project, a filesystem overlayfs refuses) :class:`LayerUnavailable` says why: a review run
never falls back to writing through.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from stockade.errors import SandboxUnavailable
from stockade.sandbox import mount_stage
from stockade.sandbox.identity import JailUser
from stockade.sandbox.policy import is_within

# ---------------------------------------------------------------------------------------------
# How the layer is mounted (what review/scan.py can rely on when it reads the upper dir)
# ---------------------------------------------------------------------------------------------

LAYER_SOURCE: Final = "stockade-review"  # the "device" name mountinfo shows
UPPER_NAME: Final = "upper"  # below the changeset directory
WORK_NAME: Final = "work"
# overlayfs options besides the layers, each with why:
LAYER_OPTIONS: tuple[tuple[str, str | None], ...] = (
    # overlay's own attributes (whiteouts, opaque directories) as user.overlay.* xattrs: the
    # only kind a user namespace may set
    ("userxattr", None),
    # a renamed directory is copied and the old one deleted (rename(2) says EXDEV and mv
    # copies): the upper dir stays a plain tree, no redirect attributes to follow
    ("redirect_dir", "nofollow"),
    # a copied-up file holds all of its data in the upper dir (apply reads only the upper)
    ("metacopy", "off"),
    # no inode index or xino: nothing but the tree itself in the upper and work dirs
    ("index", "off"),
    ("xino", "off"),
)
MOUNT_FLAGS: Final = mount_stage.MOUNT_ATTR_NOSUID | mount_stage.MOUNT_ATTR_NODEV
# Writable mounts that may sit inside the project in the jail without being the layer: they
# hold nothing of the host's (the session temp dir as a capped tmpfs, say)
SCRATCH_FILESYSTEMS: Final = frozenset({"tmpfs"})
HELPER_PROGRAM: Final = "/bin/true"  # what the helper execs once it has handed over the layer
HELPER_TIMEOUT_SECONDS: Final = 30.0
FIX_GENERAL: Final = (
    "run without --review, or keep the project and stockade's data dir on a local filesystem "
    "(ext4, xfs, btrfs, tmpfs) on Linux 6.8 or later"
)


class LayerUnavailable(SandboxUnavailable):
    """A review layer cannot be made here; the message says why. Exit code 125."""


def unusable(project: Path, directory: Path) -> LayerUnavailable | None:
    """Why an overlay with ``project`` as lower and ``directory`` holding upper/work cannot
    work, found before anything is started (the kernel has the last word when mounting)."""
    if not _kernel_has_overlay():
        return LayerUnavailable(
            "--review needs overlayfs, which this kernel does not offer",
            fix="load it (sudo modprobe overlay) or run without --review",
        )
    if is_within(directory, project) or is_within(project, directory):
        return LayerUnavailable(
            f"stockade's changeset store {directory.parent} is inside the project {project}; "
            "overlayfs cannot use a layer inside another",
            fix="set XDG_DATA_HOME to a directory outside the project",
        )
    below = mounts_below(project)
    if below:
        return LayerUnavailable(
            f"the project has other filesystems mounted below it ({', '.join(below[:3])}); "
            "a review layer would show their mount points empty",
            fix="unmount them, or run without --review",
        )
    return None


def _kernel_has_overlay() -> bool:
    try:
        with open("/proc/filesystems", encoding="ascii") as listing:
            if any(line.split()[-1:] == ["overlay"] for line in listing):
                return True
    except OSError:
        return False
    # not loaded yet: the module loads on first use when it is installed
    release = os.uname().release
    return any(
        Path(f"/lib/modules/{release}/kernel/fs/overlayfs/overlay.ko{suffix}").exists()
        for suffix in ("", ".xz", ".zst", ".gz")
    )


def _unescape(field: str) -> str:
    r"""mountinfo writes space, tab, newline and backslash as \040, \011, \012, \134."""
    if "\\" not in field:
        return field
    out, index = [], 0
    while index < len(field):
        if field[index] == "\\" and field[index + 1 : index + 4].isdigit():
            out.append(chr(int(field[index + 1 : index + 4], 8)))
            index += 4
        else:
            out.append(field[index])
            index += 1
    return "".join(out)


class MountEntry:
    """One line of /proc/PID/mountinfo: where, which device, read-only or not, which type."""

    __slots__ = ("device", "fstype", "id", "parent", "point", "read_only")

    def __init__(self, line: str) -> None:
        fields = line.split()
        separator = fields.index("-")
        self.id, self.parent = fields[0], fields[1]
        self.device = fields[2]  # major:minor
        self.point = Path(_unescape(fields[4]))
        self.read_only = "ro" in fields[5].split(",")
        self.fstype = fields[separator + 1]


def read_mountinfo(pid: int | str = "self") -> list[MountEntry]:
    with open(f"/proc/{pid}/mountinfo", encoding="utf-8", errors="surrogateescape") as info:
        return [MountEntry(line) for line in info if line.strip()]


def visible_mounts(entries: Sequence[MountEntry]) -> list[MountEntry]:
    """The mounts path lookup can reach: on a reachable parent, not below a sibling mounted
    over one of their ancestors, and not covered by a mount stacked on the same point."""
    by_id = {entry.id: entry for entry in entries}
    children: dict[str, list[MountEntry]] = {}
    for entry in entries:
        children.setdefault(entry.parent, []).append(entry)
    memo: dict[str, bool] = {}

    def reachable(entry: MountEntry) -> bool:
        if entry.id not in memo:
            memo[entry.id] = False  # a cycle (never expected) counts as unreachable
            shadowed = any(
                sibling.point != entry.point and is_within(entry.point, sibling.point)
                for sibling in children.get(entry.parent, ())
            )
            parent = by_id.get(entry.parent)
            memo[entry.id] = not shadowed and (parent is None or reachable(parent))
        return memo[entry.id]

    def covered(entry: MountEntry) -> bool:
        return any(child.point == entry.point for child in children.get(entry.id, ()))

    return [entry for entry in entries if reachable(entry) and not covered(entry)]


def mounts_below(project: Path) -> list[str]:
    """Mount points strictly inside ``project`` in this process's namespace."""
    try:
        entries = read_mountinfo()
    except OSError:
        return []
    return [str(e.point) for e in entries if e.point != project and is_within(e.point, project)]


class Layer:
    """The detached overlay for one changeset, and what a command's child needs to use it.

    ``close()`` drops the launcher's references; the superblock goes away when the last
    command that uses it has ended."""

    def __init__(self, project: Path, directory: Path, mount_fd: int, userns_fd: int) -> None:
        self.project = project
        self.directory = directory
        self._mount_fd = mount_fd
        self._userns_fd = userns_fd
        info = os.fstat(mount_fd)
        self.device = f"{os.major(info.st_dev)}:{os.minor(info.st_dev)}"

    @property
    def closed(self) -> bool:
        return self._mount_fd < 0

    @classmethod
    def create(cls, project: Path, directory: Path, jail_user: JailUser | None) -> Layer:
        """Mount the overlay (detached) with ``directory/upper`` and ``directory/work``; as
        root, as ``jail_user``. Raises LayerUnavailable with the kernel's reason."""
        problem = unusable(project, directory)
        if problem is not None:
            raise problem
        options: list[tuple[str, str | None]] = [
            ("source", LAYER_SOURCE),
            ("lowerdir+", os.fspath(project)),
            # relative to the helper's working directory, the changeset directory: as the jail
            # user it could not walk there through root's 0700 home
            ("upperdir", UPPER_NAME),
            ("workdir", WORK_NAME),
            *LAYER_OPTIONS,
        ]
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        detached: list[int] = []
        try:
            steps = cls._helper_prefix(project, directory, jail_user, detached)
            steps.append(_make_and_send(options, theirs))
            stage = mount_stage.Stage(steps)
            try:
                helper = subprocess.Popen(
                    [HELPER_PROGRAM], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, env={}, preexec_fn=stage,
                )  # fmt: skip
            except (OSError, subprocess.SubprocessError) as error:
                reason = stage.failure() or str(error)
                raise LayerUnavailable(
                    f"cannot mount the review layer over {project}: {reason}", fix=FIX_GENERAL
                ) from None
            finally:
                stage.close()
            theirs.close()
            helper.wait(timeout=HELPER_TIMEOUT_SECONDS)
            fds = mount_stage.receive_fds(ours, 2)
        finally:
            ours.close()
            if theirs.fileno() >= 0:
                theirs.close()
            for fd in detached:
                os.close(fd)
        if len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise LayerUnavailable(
                f"cannot mount the review layer over {project}: the helper handed back no layer",
                fix=FIX_GENERAL,
            )
        return cls(project, directory, fds[0], fds[1])

    @staticmethod
    def _helper_prefix(
        project: Path, directory: Path, jail_user: JailUser | None, detached: list[int]
    ) -> list[mount_stage.Step]:
        """The helper's steps up to its own user namespace. As root: the project (read-only:
        it is only the lower layer) and the changeset directory id-mapped so that their owners
        appear as the jail user, then the switch to it - the layer belongs to the jail user,
        like everything else a root launcher's command uses."""
        if jail_user is None:
            return [
                mount_stage.change_directory(directory),
                mount_stage.own_user_namespace(os.getuid(), os.getgid()),
            ]
        from stockade.sandbox import idmap
        from stockade.sandbox.identity import owner_of

        trees = [
            idmap.IdmapMount(project, True, *owner_of(project)),
            idmap.IdmapMount(directory, False, *owner_of(directory)),
        ]
        try:
            detached += idmap.detached_mounts(trees, jail_user.uid, jail_user.gid)
        except idmap.IdmapError as error:
            raise LayerUnavailable(
                f"cannot give the jail user ({jail_user.describe()}) the review layer: "
                f"{error.strerror}",
                fix=FIX_GENERAL,
            ) from None
        return [
            mount_stage.new_mount_namespace(),
            mount_stage.attach(detached[0], project),
            mount_stage.attach(detached[1], directory),
            mount_stage.change_directory(directory),
            mount_stage.switch_user(jail_user.uid, jail_user.gid),
            mount_stage.own_user_namespace(jail_user.uid, jail_user.gid),
        ]

    def command_steps(self) -> list[mount_stage.Step]:
        """A command's part, after any switch to the jail user: join the layer's user
        namespace, make a mount namespace of its own, attach the layer over the project."""
        if self.closed:
            raise SandboxUnavailable(
                "this review layer is closed", fix="start a new review run or session"
            )
        return [
            mount_stage.join_user_namespace(self._userns_fd),
            mount_stage.new_mount_namespace(),
            mount_stage.attach_clone(self._mount_fd, self.project),
        ]

    def verify(self, pid: int, block_fd: int) -> None:
        """Host-side proof, before the command starts, that the sandbox (its first process
        ``pid``) sees this layer at the project and nothing writable below it but the layer
        (protected re-binds are read-only, or the layer itself). bwrap reports the pid as
        soon as the process exists; its mounts are final once it waits on ``block_fd``."""
        try:
            if not _wait_until_reading(pid, block_fd):
                return  # the sandbox died while setting up: bwrap's exit status says why
            entries = read_mountinfo(pid)
        except OSError as error:
            raise SandboxUnavailable(
                f"cannot check the review layer inside the sandbox: {error}",
                fix="run `stockade doctor`; report this as a bug",
            ) from None
        entries = visible_mounts(entries)
        at_project = [e for e in entries if e.point == self.project]
        problem = None
        if not at_project or at_project[-1].device != self.device:
            found = f"{at_project[-1].fstype} {at_project[-1].device}" if at_project else "none"
            problem = f"the project is not the review layer inside the sandbox (found {found})"
        else:
            for entry in entries:
                if (
                    is_within(entry.point, self.project)
                    and entry.device != self.device
                    and not entry.read_only
                    and entry.fstype not in SCRATCH_FILESYSTEMS
                ):
                    problem = f"{entry.point} is writable and not part of the review layer"
                    break
        if problem is not None:
            raise SandboxUnavailable(
                f"{problem}: refusing to run the command",
                fix="run `stockade doctor`; report this as a bug",
            )

    def close(self) -> None:
        for fd in (self._mount_fd, self._userns_fd):
            if fd >= 0:
                os.close(fd)
        self._mount_fd = self._userns_fd = -1


# read(2)'s number per machine, as /proc/PID/syscall shows it
READ_SYSCALL: Final = {"x86_64": 0, "aarch64": 63}
SETUP_TIMEOUT_SECONDS: Final = 30.0


def _wait_until_reading(pid: int, fd: int) -> bool:
    """Wait until process ``pid`` blocks reading ``fd`` (True), or is gone (False). Polled,
    with a short, growing interval: bwrap's setup takes milliseconds. Where the syscall file
    may not be read (a stricter ptrace policy) the wait channel says "in a pipe read"."""
    wanted = READ_SYSCALL.get(os.uname().machine)
    deadline = time.monotonic() + SETUP_TIMEOUT_SECONDS
    pause = 0.0002
    while True:
        try:
            if _reading(pid, fd, wanted):
                return True
        except (FileNotFoundError, ProcessLookupError):
            return False
        if time.monotonic() > deadline:
            raise OSError(f"the sandbox did not finish its setup in {SETUP_TIMEOUT_SECONDS:g}s")
        time.sleep(pause)
        pause = min(pause * 2, 0.001)


def _reading(pid: int, fd: int, read_number: int | None) -> bool:
    try:
        with open(f"/proc/{pid}/syscall", encoding="ascii") as current:
            fields = current.read().split()
    except PermissionError:
        with open(f"/proc/{pid}/wchan", encoding="ascii") as channel:
            return "pipe_read" in channel.read()
    return fields[:1] == [str(read_number)] and len(fields) > 1 and int(fields[1], 16) == fd


def _make_and_send(
    options: Sequence[tuple[str, str | None]], channel: socket.socket
) -> mount_stage.Step:
    """The helper's last step: create the overlay (detached) and send it, with the user
    namespace that owns it, to the launcher."""

    def make() -> None:
        layer = mount_stage.detached_filesystem("overlay", options, mount_flags=MOUNT_FLAGS)
        userns = os.open("/proc/self/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        try:
            mount_stage.send_fds(channel, [layer, userns])()
        finally:
            os.close(layer)
            os.close(userns)

    return make
