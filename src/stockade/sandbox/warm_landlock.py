"""A warm Landlock jail: a pre-forked spawner, already restricted, that forks each command.

The spawner is started like a cold Landlock command (``LandlockBackend.confinement``: the
ruleset built in the parent, Landlock and then seccomp applied between fork and exec, its own
session) - it *is* the first confined process, and every command is a fork of it, so each runs
under exactly the ruleset and filter a cold run of the same policy would get. Per command it
adds what a cold run adds per command: its session, rlimits, working directory, environment,
the cgroup (at the gate) and a subreaper monitor that kills what the command leaves.

The ruleset describes the filesystem as it was when it was built (rules on the siblings of
masked and protected paths), so ``matches`` asks the ruleset whether the directories it walked
changed (``Ruleset.is_current``) and compares the Landlock policy a fresh run would get now;
either difference retires the spawner.

The integration point with the Landlock backend is ``LandlockBackend.confinement`` alone:
whatever the cold path applies to a command, the spawner gets.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Final

from stockade.net.bridge import proxy_environment
from stockade.net.mode import NetworkMode
from stockade.sandbox import spawner as spawner_module
from stockade.sandbox.identity import JailUser
from stockade.sandbox.landlock import LandlockBackend, LandlockPolicy, Ruleset, policy_for
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
    """One restricted spawner (a ``warm.StartedJail``)."""

    scratch: tuple[str, ...] = ()  # no mount namespace: nothing is the jail's own
    jail_user: JailUser | None = None  # Landlock runs as the launcher's user
    shares_host_pids: bool = True  # no PID namespace

    def __init__(self, backend: LandlockBackend, fresh: SandboxPolicy, control_fd: int) -> None:
        confinement = backend.confinement(fresh)
        self._ruleset: Ruleset = confinement.ruleset
        self._landlock: LandlockPolicy = self._ruleset.policy
        self.key: Hashable = pool_key(fresh)
        self._failure_read = -1
        try:
            self._failure_read, failure_write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
            steps = confinement.steps

            def confine() -> None:
                for step in steps:
                    step()

            try:
                self.process = subprocess.Popen(
                    [sys.executable, "-I", "-S", str(SPAWNER_SCRIPT), str(control_fd)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=failure_write,
                    env={}, cwd="/", start_new_session=True, preexec_fn=confine,
                    pass_fds=(control_fd,),
                )  # fmt: skip
            except subprocess.SubprocessError as error:
                from stockade.errors import SandboxUnavailable

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
        if not self._ruleset.is_current():
            return False
        return pool_key(fresh) == self.key and policy_for(fresh) == self._landlock

    def command_env(self, policy: SandboxPolicy) -> dict[str, str]:
        env = dict(policy.env)
        if policy.network is NetworkMode.ALLOWLIST and policy.proxy_port is not None:
            env.update(proxy_environment(policy.proxy_port))
        return env

    def kill(self) -> None:
        # the spawner only: no PID namespace ends the commands with it; their monitors end
        # them (the pool asks them first), and the spare's command reads EOF when the pool
        # closes the control socket
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.process.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> bool:
        try:
            self.process.wait(timeout=timeout)
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
        if self._failure_read >= 0:
            os.close(self._failure_read)
            self._failure_read = -1


class Starter:
    """The ``warm.JailStarter`` of the Landlock backend."""

    def __init__(self) -> None:
        self._backend = LandlockBackend()

    def start(self, fresh: SandboxPolicy, control_fd: int) -> LandlockWarmJail:
        return LandlockWarmJail(self._backend, fresh, control_fd)

    def cold_reason(self, fresh: SandboxPolicy) -> str | None:
        return None  # a Landlock jail mounts nothing

    key = staticmethod(pool_key)
