"""Resource limits for a confined command: rlimits, a per-run cgroup, and what they explain.

Three layers, because none suffices alone:

* **rlimits** (:func:`rlimit_preexec`) are per process and inherited: address space, file size,
  CPU seconds, open files, processes, and core dumps always off. RLIMIT_NPROC counts *all* of
  the real user's processes and the kernel exempts uid 0 from it entirely, so it cannot stop a
  fork bomb run as root.
* **a per-run cgroup** (:class:`RunCgroup`) caps the whole tree: ``pids.max`` (the only fork-
  bomb guard for root) and ``memory.max``, and kills everything in it at the end. cgroup v2
  where a writable subtree exists (root, or a delegated subtree); else the v1 ``pids`` and
  ``memory`` controllers where writable (hybrid layouts, as root). A v2 hierarchy without
  controllers is still used for ``cgroup.kill``.
* **the wall-clock timeout and output bounds** are the runner's; their numbers live here.

:func:`describe` says which of these are enforced on this machine and why not, so the posture
never overstates. New groups are made under the launcher's own cgroup (so they stay inside
any limits it is already under) and are named ``stockade-<pid>-<n>``; :func:`sweep_stale`
kills and removes those whose creator died (stockade killed with SIGKILL).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import resource
import signal
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final, NamedTuple

from stockade.errors import ConfigError, SandboxUnavailable, UsageError

MiB: Final = 1 << 20
GiB: Final = 1 << 30

# Limit field -> the rlimit it sets. Core dumps are always off (RLIMIT_CORE = 0).
RLIMITS: Final[dict[str, int]] = {
    "address_space_bytes": resource.RLIMIT_AS,
    "processes": resource.RLIMIT_NPROC,
    "file_size_bytes": resource.RLIMIT_FSIZE,
    "cpu_seconds": resource.RLIMIT_CPU,
    "open_files": resource.RLIMIT_NOFILE,
}
_SIZE_UNITS: Final = {"": 1, "k": 1 << 10, "m": MiB, "g": GiB, "t": 1 << 40}
_CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
_KILL_DEADLINE_S: Final = 5.0


class _LimitFields(NamedTuple):
    """What one confined run may consume. ``None`` = not limited by this mechanism."""

    wall_timeout_s: float | None = 600.0
    address_space_bytes: int | None = None  # off by default: breaks Go, JVM, V8 reservations
    processes: int | None = 4096  # RLIMIT_NPROC: all of the user's processes; not for root
    file_size_bytes: int | None = 8 * GiB
    cpu_seconds: int | None = None
    open_files: int | None = 4096
    memory_max_bytes: int | None = 4 * GiB  # cgroup
    pids_max: int | None = 1024  # cgroup
    output_bytes_per_stream: int = 1 * MiB
    # Each spill file (the full output of a truncated stream) stops at this size; the result
    # says so. None: uncapped.
    output_spill_bytes: int | None = 64 * MiB
    # The session temp dir as a per-command tmpfs of this size (bwrap backend): a loop that
    # fills it ends with ENOSPC instead of filling the host's disk. None: the host directory
    # itself (persists across commands, not capped).
    tmp_size_bytes: int | None = 2 * GiB


class Limits(_LimitFields):
    """What one confined run may consume (validated on creation). ``None`` = not limited by
    this mechanism. A NamedTuple rather than a dataclass: it is created on every command's
    start-up path, where importing dataclasses alone costs milliseconds."""

    __slots__ = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Limits:
        limits = super().__new__(cls, *args, **kwargs)
        limits._check()
        return limits

    def _replace(self, **changes: Any) -> Limits:
        """A copy with ``changes``, validated like a new one."""
        return type(self)(**{**self._asdict(), **changes})

    def _check(self) -> None:
        for name in self._fields:
            value = getattr(self, name)
            if name == "wall_timeout_s":
                ok = value is None or (
                    isinstance(value, int | float)
                    and not isinstance(value, bool)
                    and math.isfinite(value)
                    and value > 0
                )
                if not ok:
                    raise UsageError(
                        f"limits: wall_timeout_s must be a positive number of "
                        f"seconds, not {value!r}",
                        fix="e.g. wall_timeout_s = 600, or omit it for no limit",
                    )
                continue
            if value is None and name != "output_bytes_per_stream":
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise UsageError(
                    f"limits: {name} must be a positive integer, not {value!r}",
                    fix=f"e.g. {name} = {self._field_defaults.get(name) or 1024}",
                )
        if self.processes is not None and self.processes < 8:
            raise UsageError(
                f"limits: processes = {self.processes} cannot even start a shell",
                fix="use at least 8 (the sandbox itself needs a few)",
            )
        if self.pids_max is not None and self.pids_max < 8:
            raise UsageError(
                f"limits: pids_max = {self.pids_max} cannot even start a shell",
                fix="use at least 8",
            )
        if self.memory_max_bytes is not None and self.memory_max_bytes < 16 * MiB:
            raise UsageError(
                "limits: memory_max_bytes below 16 MiB cannot start a shell",
                fix="use e.g. '512M' or more",
            )
        if self.output_bytes_per_stream < 1024:
            raise UsageError(
                "limits: output_bytes_per_stream below 1 KiB hides every error",
                fix="use e.g. '1M' (the default)",
            )

    @classmethod
    def from_settings(cls, table: Mapping[str, object], *, where: str = "settings") -> Limits:
        """Build from a settings table; sizes may be strings like ``'512M'`` or ``'2GiB'``."""
        known = set(cls._fields)
        values: dict[str, object] = {}
        for key, raw in table.items():
            if key not in known:
                raise ConfigError(
                    f"{where}: unknown limit {key!r}", fix=f"use one of: {', '.join(sorted(known))}"
                )
            sized = key.endswith("bytes") or key.endswith("per_stream")
            values[key] = (
                parse_size(raw, key=key, where=where) if (sized and isinstance(raw, str)) else raw
            )
        try:
            return cls(**values)
        except UsageError as exc:
            raise ConfigError(f"{where}: {exc.message}", fix=exc.fix) from None


def parse_size(text: str, *, key: str = "size", where: str = "settings") -> int:
    """'512M', '1.5G', '2GiB', '1048576' -> bytes (binary units)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text.lower())
    if not match:
        raise ConfigError(
            f"{where}: {key} = {text!r} is not a size",
            fix="write a number of bytes or e.g. '512M', '2G'",
        )
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2)])


# --------------------------------------------------------------------------------------------
# rlimits
# --------------------------------------------------------------------------------------------


def planned_rlimits(limits: Limits) -> list[tuple[int, int]]:
    """(resource, value) pairs, clamped to the current hard limits (only root may raise)."""
    out = [(resource.RLIMIT_CORE, 0)]
    for name, res in RLIMITS.items():
        value = getattr(limits, name)
        if value is not None:
            hard = resource.getrlimit(res)[1]
            out.append((res, value if hard == resource.RLIM_INFINITY else min(value, hard)))
    return out


def rlimit_preexec(limits: Limits) -> Callable[[], None]:
    """A callable for the child between fork and exec that sets soft = hard = the limit."""
    planned = planned_rlimits(limits)
    setrlimit = resource.setrlimit

    def apply() -> None:
        for res, value in planned:
            setrlimit(res, (value, value))

    return apply


class RunLimits:
    """The limits of one run, applied either from outside to a started process that has not
    run the command yet (bwrap's block-fd window: no preexec, so Python can vfork), in the
    child between fork and exec (backends without that window), or - in a warm jail - by the
    command itself before it execs (``planned``) and from outside before its request (the
    cgroup, or one made ahead that it adopts)."""

    def __init__(
        self,
        limits: Limits,
        cgroup: RunCgroup | None = None,
        *,
        recipe: CgroupRecipe | None = None,
    ) -> None:
        """``cgroup``: the run's group, made already; ``recipe``: how to make it when first
        needed (a warm jail may instead hand over one it made ahead, with the command's
        process already in it: ``adopt``)."""
        self.limits = limits
        self._cgroup = cgroup
        self.recipe = recipe if cgroup is None else None  # until the cgroup is made
        self.made_from = self.recipe  # for good
        self._remove_later: Callable[[RunCgroup], None] | None = None
        self._planned = planned_rlimits(limits)

    @property
    def cgroup(self) -> RunCgroup | None:
        """The run's cgroup (made now if it is wanted and not made yet), or None."""
        if self._cgroup is None and self.recipe is not None:
            recipe, self.recipe = self.recipe, None
            self._cgroup = recipe.make()
        return self._cgroup

    def adopt(self, cgroup: RunCgroup, *, remove: Callable[[RunCgroup], None]) -> None:
        """Take ``cgroup``, made from this run's recipe ahead of time, as the run's; at the
        end its processes are killed here and ``remove`` removes the emptied group (off the
        command's path: an rmdir waits for the kernel's cgroup lock, which a move into
        another group holds for an RCU grace period)."""
        if self._cgroup is not None:
            raise RuntimeError("this run has its cgroup already")
        self._cgroup, self.recipe, self._remove_later = cgroup, None, remove

    @property
    def planned(self) -> list[tuple[int, int]]:
        """(resource, value) pairs the command's rlimits are set to (soft = hard)."""
        return list(self._planned)

    def apply_to(self, pid: int) -> None:
        """prlimit(2) and cgroup membership for ``pid``; raises SandboxUnavailable on failure."""
        try:
            for res, value in self._planned:
                resource.prlimit(pid, res, (value, value))
        except ProcessLookupError:
            return  # killed in its first instants: it runs nothing, its exit status says so
        except OSError as error:
            raise SandboxUnavailable(
                f"could not apply resource limits to the sandbox: {error}",
                fix="run `stockade doctor`; set the failing limit to none to run without it",
            ) from None
        self.apply_cgroup(pid)

    def apply_cgroup(self, pid: int) -> None:
        """Move ``pid`` (not yet running the command) into the run's cgroup, if it has one;
        raises SandboxUnavailable on failure."""
        if self.cgroup is None:
            return
        try:
            self.cgroup.add(pid)
        except ProcessLookupError:
            return  # killed in its first instants: it runs nothing, its exit status says so
        except OSError as error:
            raise SandboxUnavailable(
                f"could not move the command into its cgroup: {error}",
                fix="run `stockade doctor`; set limits.memory_max_bytes / pids_max to none "
                "to run without a cgroup",
            ) from None

    def preexec(self) -> Callable[[], None]:
        """The same, for the child between fork and exec (cgroup first, then rlimits)."""
        steps = [self.cgroup.join_preexec()] if self.cgroup is not None else []
        steps.append(rlimit_preexec(self.limits))

        def apply() -> None:
            for step in steps:
                step()

        return apply

    def finish(self) -> CgroupReport | None:
        """Kill whatever is left in the run's cgroup, read what it counted, remove it."""
        cgroup, self.recipe = self._cgroup, None  # (one never made has nothing to report)
        if cgroup is None:
            return None
        report = cgroup.report()
        if self._remove_later is None:
            cgroup.remove()
        else:
            cgroup.kill_all()
            self._remove_later(cgroup)
        return report


class CgroupRecipe(NamedTuple):
    """How the runs of one Sandbox get their cgroups (``RunCgroup.create``'s arguments):
    equal recipes make equal groups, so one made ahead of time serves any run of it."""

    limits: Limits
    support: CgroupSupport
    track: bool

    def make(self) -> RunCgroup:
        return RunCgroup.create(self.limits, self.support, track=self.track)


# --------------------------------------------------------------------------------------------
# cgroups: detection
# --------------------------------------------------------------------------------------------


class CgroupSupport(NamedTuple):
    """Where per-run groups can be made on this machine, and why not where they cannot."""

    v2_parent: Path | None = None  # a writable v2 directory for run groups
    v2_controllers: frozenset[str] = frozenset()  # of memory/pids, usable under v2_parent
    v1_parents: Mapping[str, Path] = MappingProxyType({})  # "pids"/"memory" -> dir
    notes: tuple[str, ...] = ()

    def enforces(self, controller: str) -> bool:
        return controller in self.v2_controllers or controller in self.v1_parents


def _own_cgroups() -> tuple[str | None, dict[str, str]]:
    """(v2 path, {v1 controller: path}) from /proc/self/cgroup."""
    v2, v1 = None, {}
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controllers == "":
                v2 = path
            for c in controllers.split(","):
                v1[c] = path
    return v2, v1


def _mounts() -> tuple[tuple[str, Path] | None, dict[str, tuple[str, Path]]]:
    """(v2 (root, mountpoint), {v1 controller: (root, mountpoint)}) from mountinfo."""
    v2, v1 = None, {}
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            parts, rparts = left.split(), right.split()
            if len(parts) < 5 or len(rparts) < 3:
                continue
            root, mountpoint, fstype = parts[3], Path(parts[4]), rparts[0]
            if fstype == "cgroup2" and v2 is None:
                v2 = (root, mountpoint)
            elif fstype == "cgroup":
                for option in rparts[2].split(","):
                    if option in ("pids", "memory") and option not in v1:
                        v1[option] = (root, mountpoint)
    return v2, v1


def _on_disk(mount: tuple[str, Path], cgroup_path: str) -> Path | None:
    root, mountpoint = mount
    if root != "/" and not (cgroup_path + "/").startswith(root.rstrip("/") + "/"):
        return None  # our group is outside what is mounted here (another cgroup namespace)
    relative = cgroup_path[len(root.rstrip("/")) :] if root != "/" else cgroup_path
    return mountpoint / relative.lstrip("/")


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def detect_cgroups() -> CgroupSupport:
    """Find where this process may create per-run cgroups, preferring v2."""
    own_v2, own_v1 = _own_cgroups()
    mount_v2, mounts_v1 = _mounts()
    notes: list[str] = []
    v2_parent, v2_controllers = None, frozenset[str]()
    if mount_v2 and own_v2 is not None:
        here = _on_disk(mount_v2, own_v2)
        if here is not None and _writable_dir(here):
            available = set(_read(here / "cgroup.controllers").split())
            enabled = set(_read(here / "cgroup.subtree_control").split())
            is_root = own_v2 == "/"
            for c in ("memory", "pids"):
                if c in enabled or (c in available and is_root and _enable(here, c)):
                    v2_controllers |= {c}
            v2_parent = here
            missing = {"memory", "pids"} - v2_controllers
            if missing:
                why = (
                    "bound to cgroup v1 hierarchies"
                    if mounts_v1
                    else "not delegated to this subtree"
                )
                notes.append(
                    f"cgroup v2 at {here} lacks {', '.join(sorted(missing))} "
                    f"({why}); it is used to track and kill the run"
                )
        else:
            notes.append(
                f"cgroup v2: {here or 'our group'} is not writable by uid "
                f"{os.geteuid()} (no delegated subtree)"
            )
    v1_parents: dict[str, Path] = {}
    for controller in ("pids", "memory"):
        if controller in v2_controllers:
            continue
        mount = mounts_v1.get(controller)
        if mount is None or controller not in own_v1:
            notes.append(f"no cgroup {controller} controller is mounted")
            continue
        here = _on_disk(mount, own_v1[controller])
        if here is not None and _writable_dir(here):
            v1_parents[controller] = here
        else:
            notes.append(f"cgroup v1 {controller}: {here} is not writable by uid {os.geteuid()}")
    return CgroupSupport(v2_parent, v2_controllers, v1_parents, tuple(notes))


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _enable(parent: Path, controller: str) -> bool:
    try:
        _write(parent / "cgroup.subtree_control", f"+{controller}")
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------------------------
# cgroups: one run
# --------------------------------------------------------------------------------------------

_counter = itertools.count()
_NAME = re.compile(r"stockade-(\d+)-\d+$")


class CgroupReport:
    """What the kernel counted for a run's group (zeros where not available)."""

    __slots__ = ("memory_peak_bytes", "oom_kills", "pids_limit_hits")

    def __init__(
        self, pids_limit_hits: int = 0, oom_kills: int = 0, memory_peak_bytes: int = 0
    ) -> None:
        self.pids_limit_hits = pids_limit_hits
        self.oom_kills = oom_kills
        self.memory_peak_bytes = memory_peak_bytes

    def __repr__(self) -> str:
        return (
            f"CgroupReport(pids_limit_hits={self.pids_limit_hits}, oom_kills={self.oom_kills}, "
            f"memory_peak_bytes={self.memory_peak_bytes})"
        )


class RunCgroup:
    """A per-run group in every usable hierarchy; the child joins them all in preexec."""

    def __init__(self, limits: Limits, dirs: dict[str, Path]) -> None:
        self.limits = limits
        self.dirs = dirs  # "v2" / "pids" / "memory" -> created directory

    @classmethod
    def create(
        cls, limits: Limits, support: CgroupSupport | None = None, *, track: bool = True
    ) -> RunCgroup:
        """Make the groups and write the limits. Raises SandboxUnavailable if a write fails.

        Only hierarchies that enforce a configured cap are used, plus the v2 group for
        tracking and ``cgroup.kill`` when ``track`` (a backend with its own PID namespace does
        not need it). Each hierarchy costs the kernel an RCU grace period when the run's
        first process is moved in, a few milliseconds per command."""
        support = detect_cgroups() if support is None else support
        name = f"stockade-{os.getpid()}-{next(_counter)}"
        wanted = {
            controller
            for controller, value in (
                ("memory", limits.memory_max_bytes),
                ("pids", limits.pids_max),
            )
            if value is not None
        }
        run = cls(limits, {})
        try:
            if support.v2_parent is not None and (track or wanted & support.v2_controllers):
                run.dirs["v2"] = _mkdir(support.v2_parent / name)
            for controller, parent in support.v1_parents.items():
                if controller in wanted:
                    run.dirs[controller] = _mkdir(parent / name)
            run._write_limits(support)
        except OSError as exc:
            run.remove()
            raise SandboxUnavailable(
                f"cgroup setup failed: {exc}",
                fix="check that the cgroup filesystem is writable, or set "
                "limits.memory_max_bytes / pids_max to none to run without a cgroup",
            ) from None
        return run

    def _write_limits(self, support: CgroupSupport) -> None:
        memory, pids = self.limits.memory_max_bytes, self.limits.pids_max
        v2 = self.dirs.get("v2")
        if v2 is not None and "memory" in support.v2_controllers and memory is not None:
            _write(v2 / "memory.max", str(memory))
            with contextlib.suppress(OSError):
                _write(v2 / "memory.swap.max", "0")
        if v2 is not None and "pids" in support.v2_controllers and pids is not None:
            _write(v2 / "pids.max", str(pids))
        if "memory" in self.dirs and memory is not None:
            _write(self.dirs["memory"] / "memory.limit_in_bytes", str(memory))
            with contextlib.suppress(OSError):  # only with swap accounting
                _write(self.dirs["memory"] / "memory.memsw.limit_in_bytes", str(memory))
        if "pids" in self.dirs and pids is not None:
            _write(self.dirs["pids"] / "pids.max", str(pids))

    def join_preexec(self) -> Callable[[], None]:
        """A callable for the child (before Landlock and seccomp) that moves it into the groups."""
        targets = [os.fsencode(d / "cgroup.procs") for d in self.dirs.values()]

        def join() -> None:
            for target in targets:
                fd = os.open(target, os.O_WRONLY | os.O_CLOEXEC)
                try:
                    os.write(fd, b"0")  # 0 = the writing process
                finally:
                    os.close(fd)

        return join

    def add(self, pid: int) -> None:
        """Move a started process (e.g. the sandbox's first process, before it runs the
        command) into every group; its children follow."""
        for directory in self.dirs.values():
            _write(directory / "cgroup.procs", str(pid))

    def pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs.values():
            found |= {int(p) for p in _read(d / "cgroup.procs").split()}
        return found

    def report(self) -> CgroupReport:
        out = CgroupReport()
        for key in ("v2", "pids"):
            if key in self.dirs:
                events = _keyed(_read(self.dirs[key] / "pids.events"))
                out.pids_limit_hits = max(out.pids_limit_hits, events.get("max", 0))
        if "v2" in self.dirs:
            out.oom_kills = _keyed(_read(self.dirs["v2"] / "memory.events")).get("oom_kill", 0)
            out.memory_peak_bytes = _int(_read(self.dirs["v2"] / "memory.peak"))
        if "memory" in self.dirs:
            d = self.dirs["memory"]
            out.oom_kills = max(
                out.oom_kills, _keyed(_read(d / "memory.oom_control")).get("oom_kill", 0)
            )
            out.memory_peak_bytes = max(
                out.memory_peak_bytes, _int(_read(d / "memory.max_usage_in_bytes"))
            )
        return out

    def kill_all(self) -> bool:
        """SIGKILL everything in the groups and wait until they are empty. True if emptied."""
        v2 = self.dirs.get("v2")
        if v2 is not None and (v2 / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(v2 / "cgroup.kill", "1")
        deadline = time.monotonic() + _KILL_DEADLINE_S
        while True:
            alive = self.pids()
            if not alive:
                return True
            if time.monotonic() > deadline:
                return False
            for pid in alive:  # v1 has no cgroup.kill: repeat until no one is left to fork
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and remove the groups (deepest first). Safe to call twice."""
        self.kill_all()
        for key in list(self.dirs):
            d = self.dirs[key]
            for _ in range(200):  # rmdir is EBUSY until the last task has fully exited
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)
            del self.dirs[key]

    def __enter__(self) -> RunCgroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _mkdir(path: Path) -> Path:
    path.mkdir(mode=0o755)
    return path


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        return 0


def _keyed(text: str) -> dict[str, int]:
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            out[key] = int(value)
    return out


def sweep_stale(support: CgroupSupport | None = None) -> int:
    """Kill and remove run groups whose creating stockade process is gone. Returns how many."""
    support = detect_cgroups() if support is None else support
    parents = [p for p in (support.v2_parent, *support.v1_parents.values()) if p is not None]
    removed = 0
    for parent in parents:
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        for entry in entries:
            match = _NAME.match(entry.name)
            if not match or not entry.is_dir() or _alive(int(match.group(1))):
                continue
            stale = RunCgroup(Limits(), {"stale": entry})
            stale.remove()
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# --------------------------------------------------------------------------------------------
# Explaining results and stating the posture
# --------------------------------------------------------------------------------------------


def explain_exit(
    returncode: int,
    limits: Limits,
    report: CgroupReport | None = None,
    *,
    timed_out: bool = False,
    timeout_s: float | None = None,
) -> str | None:
    """Why a run ended, when a limit was involved (several can be: a fork bomb hits the
    process cap and then the timeout); None when no limit explains it.

    Understands both a direct child (negative signal) and bwrap's 128+signal convention.
    """
    reasons = []
    sig = -returncode if returncode < 0 else returncode - 128 if returncode > 128 else 0
    if timed_out:
        seconds = timeout_s if timeout_s is not None else limits.wall_timeout_s
        reasons.append(f"killed at the wall-clock limit of {seconds or 0:g} s")
    if sig == signal.SIGXFSZ:
        reasons.append(
            f"killed: the file size limit ({_human(limits.file_size_bytes)}) was exceeded"
        )
    if sig == signal.SIGXCPU:
        reasons.append(f"killed: the CPU time limit ({limits.cpu_seconds} s) was used up")
    if report is not None and report.oom_kills:
        reasons.append(
            f"the memory limit ({_human(limits.memory_max_bytes)}) was reached: "
            f"{report.oom_kills} process(es) killed by the kernel"
        )
    if report is not None and report.pids_limit_hits:
        reasons.append(
            f"the process limit ({limits.pids_max}) was reached: "
            f"{report.pids_limit_hits} forks refused"
        )
    return "; ".join(reasons) or None


def _human(n: int | None) -> str:
    if n is None:
        return "none"
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


class LimitsPosture(NamedTuple):
    enforced: tuple[str, ...]
    not_enforced: tuple[str, ...]


def describe(
    limits: Limits,
    support: CgroupSupport | None = None,
    *,
    euid: int | None = None,
    can_cap_tmp: bool = True,
) -> LimitsPosture:
    """Exactly which limits hold on this machine for this user, and why the others do not."""
    support = detect_cgroups() if support is None else support
    euid = os.geteuid() if euid is None else euid
    on, off = ["core dumps: off"], list(support.notes)
    for name, _res in RLIMITS.items():
        value = getattr(limits, name)
        if value is None:
            continue
        if name == "processes" and euid == 0:
            off.append("RLIMIT_NPROC does not apply: the kernel exempts uid 0 from it")
        elif name == "processes":
            on.append(
                f"RLIMIT_NPROC = {value} (counts every process of uid {euid}, not just this run)"
            )
        else:
            shown = _human(value) if name.endswith("bytes") else value
            on.append(f"RLIMIT {name} = {shown}")
    for controller, value in (("pids", limits.pids_max), ("memory", limits.memory_max_bytes)):
        if value is None:
            continue
        where = (
            "cgroup v2"
            if controller in support.v2_controllers
            else "cgroup v1"
            if controller in support.v1_parents
            else None
        )
        shown = _human(value) if controller == "memory" else value
        if where:
            on.append(f"{controller} cap {shown} for the whole run ({where})")
        else:
            off.append(
                f"{controller} cap {shown}: no writable cgroup with the {controller} controller"
            )
    if not support.enforces("pids") and euid == 0:
        off.append(
            "a fork bomb run as root is NOT contained (no pids cgroup, and rlimits "
            "exempt root); give stockade a writable cgroup or run as a normal user"
        )
    if limits.tmp_size_bytes is not None and not can_cap_tmp:
        off.append("the session temp dir is not size-capped (this backend has no mount namespace)")
    elif limits.tmp_size_bytes is not None:
        on.append(
            f"session temp dir capped at {_human(limits.tmp_size_bytes)} per command "
            "(a fresh tmpfs each command; bwrap backend)"
        )
    else:
        off.append("the session temp dir is not size-capped (limits.tmp_size_bytes = none)")
    if support.v2_parent is not None or support.v1_parents:
        on.append("at the end every process of the run is killed via its cgroup")
    else:
        off.append("no cgroup: processes are killed via the process group / PID namespace only")
    return LimitsPosture(tuple(on), tuple(off))
