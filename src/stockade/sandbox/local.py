"""The ``none`` backend: run unconfined. Only ever an explicit operator choice (``--unsafe`` or
``STOCKADE_SANDBOX=off``); every result's posture says so. The environment is still scrubbed."""

from __future__ import annotations

from collections.abc import Sequence

from stockade.sandbox.backend import Stdio, Unavailable
from stockade.sandbox.launcher import LauncherJail, launch
from stockade.sandbox.limits import RunLimits
from stockade.sandbox.policy import SandboxPolicy
from stockade.sandbox.posture import Posture, unconfined


class LocalBackend:
    name = "none"

    def unavailable(self) -> Unavailable | None:
        return None

    def posture(self, policy: SandboxPolicy, *, proven: bool) -> Posture:
        return unconfined("the operator chose to run without a sandbox (--unsafe / backend none)")

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
        # Unconfined, but still a run: it leaves no process behind (see launcher.py).
        return launch(
            argv,
            env=policy.env,
            cwd=policy.cwd,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            confine=[limits.preexec()] if limits is not None else [],
        )
