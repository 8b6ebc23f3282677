"""A warm bubblewrap jail: the cold path's jail, built once, with the spawner as its command.

The jail is exactly the one a cold run would build for the policy (``BwrapBackend.spawn``:
mounts, namespaces, the seccomp filter, the uid drop of a root launcher and its host-side
check; in allowlist mode the network bridge, with the spawner as the bridge's command), so
its *plan* - the mount arguments and the identity - is what tells whether it can serve a
policy: ``matches`` recomputes what a fresh jail would get now (protected paths looked up
again, the jail user's view of the masks) and compares.

A warm jail leaves nothing on the host: like a fresh jail it binds read-only the protected
names that exist and makes no mount point for those that do not (the guard judges those
after each command, host side, around warm and cold commands alike). When a protected name
appears or disappears, the plan changes and the jail is replaced. A review run (its
copy-on-write layer attached per command by the launcher, ``policy.layer``) is served cold
(``cold_reason``).

Scratch: ``/tmp``, ``/dev`` (what bwrap put there stays), ``/dev/shm``, the capped session
temp dir (a per-command tmpfs in a cold run) and, in allowlist mode, the fresh ``/run``; the
spawner empties them before a command when no other command of the jail is running, so
commands run one after another each start with them empty, as in a fresh jail. Commands that
run at the same time share them (and the jail's PID namespace and loopback), as commands of
one session share the project.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from stockade.net.bridge import proxy_environment
from stockade.net.jail import JAIL_PROXY_PORT
from stockade.sandbox import spawner as spawner_module
from stockade.sandbox.backend import Stdio
from stockade.sandbox.bwrap import DEFAULT_PATH, BwrapBackend, mount_arguments
from stockade.sandbox.environment import visible_python
from stockade.sandbox.identity import JailUser, jail_user_view
from stockade.sandbox.policy import NetworkMode, ProtectedPath, SandboxPolicy
from stockade.sandbox.warm import SpawnerJail

SPAWNER_SCRIPT: Final = Path(spawner_module.__file__).resolve()
ALWAYS_SCRATCH: Final = ("/tmp", "/dev", "/dev/shm")
ALLOWLIST_SCRATCH: Final = "/run"  # a fresh tmpfs in allowlist mode (the proxy dir stays)


class Plan(NamedTuple):
    """Everything a bwrap jail is built from, except the command, its cwd and environment."""

    mounts: tuple[str, ...]
    network: NetworkMode
    jail_user: JailUser | None
    root_jail: bool
    allow_unix_sockets: bool
    proxy_socket_dir: Path | None
    id_mapped: tuple[tuple[Path, bool, int, int], ...]


class Inputs(NamedTuple):
    """What a jail's plan depends on beyond its pool key (the same writable roots, masks,
    network...): the protected paths found now, which read-allowed paths exist (only those
    are re-bound), and - for a root launcher - the owners and modes the jail user's view is
    computed from (which masks it can reach, how the roots are id-mapped). Equal inputs,
    equal plan; different inputs are compared by the plan itself."""

    protected: tuple[ProtectedPath, ...]
    allowed_exist: tuple[bool, ...]
    view: tuple[object, ...]


def inputs_of(policy: SandboxPolicy) -> Inputs:
    """The inputs of ``policy``'s plan."""
    allowed = tuple(path.exists() for path in policy.read_allow_within_deny)
    return Inputs(policy.protected, allowed, _view_inputs(policy))


@functools.lru_cache(maxsize=4)
def _homes(home_variable: str | None, uid: int) -> tuple[Path, ...]:
    """``home_directories()`` for this $HOME and uid, looked up once: the passwd lookup costs
    more than the rest of a warm command's plan check. (A passwd home changed under a running
    session would only leave the old home read-only to the jail user, the new one unmapped.)"""
    from stockade.sandbox.policy import home_directories

    return tuple(home_directories())


def _view_inputs(policy: SandboxPolicy) -> tuple[object, ...]:
    """The stat fields ``identity.jail_user_view`` decides by: owner and mode of the trees
    the jail user gets (writable roots, homes, the proxy dir), of every directory above
    them and above each mask."""
    if policy.jail_user is None:
        return ()
    homes = _homes(os.environ.get("HOME"), os.getuid())
    masks = tuple(m.path for m in policy.masked)
    fields: list[object] = [homes]
    for path in _view_paths(policy.writable, homes, masks, policy.proxy_socket_dir):
        try:
            info = os.stat(path)
            fields.append((path, info.st_mode, info.st_uid, info.st_gid))
        except OSError:
            fields.append((path, None))
    return tuple(fields)


@functools.lru_cache(maxsize=8)
def _view_paths(
    writable: tuple[Path, ...],
    homes: tuple[Path, ...],
    masks: tuple[Path, ...],
    proxy_socket_dir: Path | None,
) -> tuple[str, ...]:
    """Every directory ``_view_inputs`` looks at, sorted (the same for the same policy)."""
    tops = [*writable, *homes, *masks]
    if proxy_socket_dir is not None:
        tops.append(proxy_socket_dir)
    paths: set[str] = set()
    for top in tops:
        path = str(top)
        while path not in paths:
            paths.add(path)
            path = os.path.dirname(path)
    return tuple(sorted(paths))


def plan_of(policy: SandboxPolicy) -> Plan:
    view, mapped = jail_user_view(policy)
    return Plan(
        mounts=tuple(mount_arguments(view)),
        network=policy.network,
        jail_user=policy.jail_user,
        root_jail=policy.root_jail,
        allow_unix_sockets=policy.allow_unix_sockets,
        proxy_socket_dir=policy.proxy_socket_dir,
        id_mapped=mapped,
    )


def pool_key(policy: SandboxPolicy) -> Hashable:
    """A cheap key: policies with different keys never share a jail (``matches`` decides
    the rest)."""
    return (
        policy.writable,
        policy.network,
        policy.masked,
        policy.read_allow_within_deny,
        policy.proxy_socket_dir,
        policy.jail_user,
        policy.root_jail,
        policy.allow_unix_sockets,
        policy.session_tmp_size,
    )


def scratch_dirs(policy: SandboxPolicy) -> tuple[str, ...]:
    dirs = list(ALWAYS_SCRATCH)
    if policy.session_tmp_size is not None:
        dirs.append(str(policy.session_tmp))
    if policy.network is NetworkMode.ALLOWLIST and policy.proxy_socket_dir is not None:
        dirs.append(ALLOWLIST_SCRATCH)
    return tuple(dirs)


def command_environment(policy: SandboxPolicy) -> dict[str, str]:
    """What a command of ``policy`` gets (the cold path: ``env -i`` with these, and the
    bridge's proxy variables in allowlist mode)."""
    env = dict(policy.env)
    env.setdefault("PATH", DEFAULT_PATH)
    if policy.network is NetworkMode.ALLOWLIST:
        env.update(proxy_environment(JAIL_PROXY_PORT))
    return env


REVIEW_LAYER: Final = (
    "a review run's copy-on-write layer is attached to each command's own mount namespace"
)


def cold_reason(fresh: SandboxPolicy, stdio: Sequence[Stdio] = ()) -> str | None:
    """Why a command of ``fresh`` must run in a fresh jail (None: a warm jail can serve)."""
    return REVIEW_LAYER if fresh.layer is not None else None


class BwrapWarmJail(SpawnerJail):
    """One bwrap jail running the spawner (a ``warm.StartedJail``)."""

    shares_host_pids: bool = False  # its own PID namespace: killing it ends all in it

    def __init__(self, backend: BwrapBackend, fresh: SandboxPolicy, control_fd: int) -> None:
        super().__init__()
        try:
            self.plan = plan_of(fresh)
            self._inputs = inputs_of(fresh)
            self.key: Hashable = pool_key(fresh)
            self.scratch = scratch_dirs(fresh)
            self.jail_user = fresh.jail_user
            failure_write = self._failure_pipe()
            argv = [visible_python(), "-I", "-S", str(SPAWNER_SCRIPT), str(control_fd)]
            for directory in self.scratch:
                argv += ["--scratch", directory]
            try:
                self._jail = backend.spawn(
                    fresh, argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=failure_write, pass_fds=(control_fd,),
                )  # fmt: skip
            finally:
                os.close(failure_write)
        except BaseException:
            self.release()
            raise

    def matches(self, fresh: SandboxPolicy) -> bool:
        inputs = inputs_of(fresh)
        if inputs == self._inputs:
            return True  # (same pool key) the same plan, without building it again
        if plan_of(fresh) != self.plan:
            return False
        self._inputs = inputs
        return True

    def command_env(self, policy: SandboxPolicy) -> dict[str, str]:
        return command_environment(policy)


class Starter:
    """The ``warm.JailStarter`` of the bwrap backend."""

    def __init__(self, backend: BwrapBackend) -> None:
        self._backend = backend

    def start(self, fresh: SandboxPolicy, control_fd: int) -> BwrapWarmJail:
        return BwrapWarmJail(self._backend, fresh, control_fd)

    cold_reason = staticmethod(cold_reason)
    key = staticmethod(pool_key)
