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
from stockade.sandbox.launcher import LauncherJail, launch
from stockade.sandbox.policy import SandboxPolicy

SPAWNER_SCRIPT: Final = Path(spawner_module.__file__).resolve()
FAILURE_BYTES: Final = 4096


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


class LandlockWarmJail:
    """One restricted spawner under its launcher (a ``warm.StartedJail``)."""

    scratch: tuple[str, ...] = ()  # no mount namespace: nothing is the jail's own
    jail_user: JailUser | None = None  # Landlock runs as the launcher's user
    shares_host_pids: bool = True  # no PID namespace

    def __init__(self, backend: LandlockBackend, fresh: SandboxPolicy, control_fd: int) -> None:
        self.key: Hashable = pool_key(fresh)
        self._failure_read = -1
        self._jail: LauncherJail | None = None
        confinement = backend.confinement(fresh)
        self._ruleset: Ruleset = confinement.ruleset
        self._landlock: LandlockPolicy = self._ruleset.policy
        self._env = confinement.env
        try:
            self._failure_read, failure_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
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

    @property
    def process(self) -> subprocess.Popen[bytes]:
        """The launcher's process (it ends once the spawner and all it started ended)."""
        assert self._jail is not None
        return self._jail.process

    def matches(self, fresh: SandboxPolicy) -> bool:
        if self._jail is None or self._jail.process.poll() is not None:
            return False  # its launcher is gone: nobody answers the jail's supervised calls
        if not self._ruleset.is_current():
            return False
        return pool_key(fresh) == self.key and policy_for(fresh) == self._landlock

    def command_env(self, policy: SandboxPolicy) -> dict[str, str]:
        return command_environment(policy)

    def kill(self) -> None:
        # the launcher kills every process of the jail (it is their subreaper); the pool
        # also asks the monitors and kills the commands' process groups
        if self._jail is not None:
            self._jail.kill_all()

    def wait(self, timeout: float) -> bool:
        if self._jail is None:
            return True
        try:
            self._jail.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def failure(self) -> str:
        if self._failure_read < 0:
            return ""
        try:
            text = os.read(self._failure_read, FAILURE_BYTES).decode(errors="replace")
        except OSError:
            return ""
        lines = [line for line in text.strip().splitlines() if line.strip()]
        return lines[-1] if lines else ""

    def release(self) -> None:
        self._ruleset.close()
        if self._jail is not None:
            self._jail.close()
        if self._failure_read >= 0:
            os.close(self._failure_read)
            self._failure_read = -1


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
