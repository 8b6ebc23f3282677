"""The small interface every sandbox backend implements (bwrap, landlock, none).

A backend turns a SandboxPolicy and an argv into a running ``Jail``; the runner owns stdio,
timeouts and signals and talks to the jail only through this interface.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Sequence
from typing import IO, Any, NamedTuple, Protocol

from stockade.errors import SandboxUnavailable
from stockade.sandbox.limits import RunLimits
from stockade.sandbox.policy import SandboxPolicy
from stockade.sandbox.posture import Posture

# stdin/stdout/stderr as subprocess accepts them: None (inherit), PIPE, DEVNULL, fd or file.
Stdio = int | IO[Any] | None


def proxy_not_running() -> SandboxUnavailable:
    """The refusal of every backend asked for allowlist mode without the proxy started (a
    backend used directly, not through ``stockade.Sandbox``)."""
    return SandboxUnavailable(
        "allowlist network mode needs the allow-list proxy, which is not running",
        fix="run through stockade.Sandbox / the CLI, which start the proxy",
    )


class Unavailable(NamedTuple):
    """Why a backend cannot run here, and what fixes it."""

    reason: str
    fix: str


class ConfinedProcess(Protocol):
    """What the runner uses of a confined command's process: ``subprocess.Popen``, or a
    command of a warm jail (``warm.WarmProcess``)."""

    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> Any: ...  # int once it ended (Popen declares it so)
    @property
    def stdin(self) -> IO[bytes] | None: ...
    @property
    def stdout(self) -> IO[bytes] | None: ...
    @property
    def stderr(self) -> IO[bytes] | None: ...

    def wait(self, timeout: float | None = None) -> int: ...
    def poll(self) -> int | None: ...
    def communicate(
        self, input: bytes | None = None, timeout: float | None = None
    ) -> tuple[bytes, bytes]: ...


class Jail(Protocol):
    """One confined command, started."""

    @property
    def process(self) -> ConfinedProcess: ...

    def signal_command(self, signum: int) -> None:
        """Deliver ``signum`` to the confined command's process group (Ctrl-C, SIGTERM)."""

    def kill_all(self) -> None:
        """Kill every process of the confined tree, now."""

    def exit_code(self, returncode: int) -> int:
        """Translate the launcher's return code into the command's (raises SandboxUnavailable
        if the sandbox failed before the command started)."""

    def close(self) -> None:
        """Release the jail's fds; idempotent."""


class Backend(Protocol):
    name: str

    def unavailable(self) -> Unavailable | None:
        """None when this backend can run here; otherwise the reason and fix."""

    def posture(self, policy: SandboxPolicy, *, proven: bool) -> Posture:
        """What this backend enforces for ``policy``."""

    def spawn(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        *,
        stdin: Stdio = None,
        stdout: Stdio = None,
        stderr: Stdio = None,
        limits: RunLimits | None = None,
    ) -> Jail:
        """Start ``argv`` confined by ``policy``; ``limits`` must hold before the command
        runs its first instruction."""


class ProcessGroupJail:
    """A command started in its own session, where neither a PID namespace nor the Linux
    launcher (``launcher.py``: Landlock, none) can end its tree: its process group - and the
    run's cgroup, when there is one - is how it is signalled and stopped."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def signal_command(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)

    def kill_all(self) -> None:
        self.signal_command(signal.SIGKILL)

    def exit_code(self, returncode: int) -> int:
        return 128 - returncode if returncode < 0 else returncode

    def close(self) -> None:
        pass
