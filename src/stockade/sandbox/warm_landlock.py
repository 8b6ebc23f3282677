"""A warm Landlock jail: a pre-forked spawner, already restricted, that forks each command.

The spawner is started exactly like a cold Landlock command (``LandlockBackend.confinement``
and ``launcher.launch``): the ruleset built in the parent, Landlock and then the supervised
seccomp filter applied between fork and exec, its own session, and a launcher above it that is
its subreaper, hosts the seccomp supervisor (metadata calls of every command of the jail are
answered by it) and ends every process of the jail when stockade goes away (EOF on its
pipe). The spawner *is* the first confined process and every command is a fork of it, so each
runs under exactly the ruleset and filter a cold run of the same policy would get. Per command
it adds what a cold run adds per command: its session, rlimits, working directory,
environment, the cgroup (at the gate) and a subreaper monitor that kills what the command
leaves.

The ruleset describes the filesystem as it was when it was built (rules on the siblings of
masked and protected paths), so ``matches`` asks the ruleset whether the directories it walked
changed (``Ruleset.is_current``) and compares the Landlock policy a fresh run would get now;
either difference retires the spawner. A command whose stdio is a terminal runs cold: a cold
ruleset lets it reopen that terminal, the jail's (built with none) would not.

The integration point with the Landlock backend is ``LandlockBackend.confinement`` alone:
whatever the cold path applies to a command, the spawner gets.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Final

from stockade.errors import SandboxUnavailable
from stockade.sandbox import spawner as spawner_module
from stockade.sandbox.backend import Stdio
from stockade.sandbox.identity import JailUser
from stockade.sandbox.landlock import (
    LandlockBackend,
    LandlockPolicy,
    Ruleset,
    command_environment,
    policy_for,
    terminals_of,
)
from stockade.sandbox.launcher import launch
from stockade.sandbox.policy import SandboxPolicy
from stockade.sandbox.warm import SpawnerJail

SPAWNER_SCRIPT: Final = Path(spawner_module.__file__).resolve()


def pool_key(policy: SandboxPolicy) -> Hashable:
    """Policies with different keys never share a spawner (``matches`` decides the rest)."""
    return (
        policy.writable,
        policy.network,
        policy.masked,
        policy.read_allow_within_deny,
        policy.proxy_port,
        policy.allow_unix_sockets,
    )


class LandlockWarmJail(SpawnerJail):
    """One restricted spawner under its launcher (a ``warm.StartedJail``)."""

    scratch: tuple[str, ...] = ()  # no mount namespace: nothing is the jail's own
    jail_user: JailUser | None = None  # Landlock runs as the launcher's user
    shares_host_pids: bool = True  # no PID namespace

    def __init__(self, backend: LandlockBackend, fresh: SandboxPolicy, control_fd: int) -> None:
        super().__init__()
        self.key: Hashable = pool_key(fresh)
        confinement = backend.confinement(fresh)
        self._ruleset: Ruleset = confinement.ruleset
        self._landlock: LandlockPolicy = self._ruleset.policy
        try:
            failure_write = self._failure_pipe()
            try:
                self._jail = launch(
                    [sys.executable, "-I", "-S", str(SPAWNER_SCRIPT), str(control_fd)],
                    env={}, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=failure_write, confine=confinement.steps,
                    supervision=confinement.supervision, pass_fds=(control_fd,),
                )  # fmt: skip
            except subprocess.SubprocessError as error:
                raise SandboxUnavailable(
                    f"Landlock/seccomp could not be applied to the warm jail: {error}",
                    fix="run `stockade doctor --backend landlock` for details",
                ) from None
            finally:
                os.close(failure_write)
        except BaseException:
            self.release()
            raise

    def matches(self, fresh: SandboxPolicy) -> bool:
        if self._jail is None or self._jail.process.poll() is not None:
            return False  # its launcher is gone: nobody answers the jail's supervised calls
        if not self._ruleset.is_current():
            return False
        return pool_key(fresh) == self.key and policy_for(fresh) == self._landlock

    def command_env(self, policy: SandboxPolicy) -> dict[str, str]:
        return command_environment(policy)

    def release(self) -> None:
        self._ruleset.close()
        super().release()


TERMINAL_NEEDED: Final = "its stdio is a terminal, which only a ruleset of its own lets it reopen"


class Starter:
    """The ``warm.JailStarter`` of the Landlock backend."""

    def __init__(self) -> None:
        self._backend = LandlockBackend()

    def start(self, fresh: SandboxPolicy, control_fd: int) -> LandlockWarmJail:
        return LandlockWarmJail(self._backend, fresh, control_fd)

    def cold_reason(self, fresh: SandboxPolicy, stdio: Sequence[Stdio]) -> str | None:
        return TERMINAL_NEEDED if terminals_of(stdio) else None

    key = staticmethod(pool_key)
