"""The ``none`` backend: run unconfined. Only ever an explicit operator choice (``--unsafe`` or
``STOCKADE_SANDBOX=off``); every result's posture says so. The environment is still scrubbed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from stockade.sandbox.backend import Jail, ProcessGroupJail, Stdio, Unavailable
from stockade.sandbox.launcher import launch
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
    ) -> Jail:
        if sys.platform != "linux":  # no subreaper: the process group is all there is
            process = subprocess.Popen(
                list(argv),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env=dict(policy.env),
                cwd=policy.cwd,
                start_new_session=True,
                preexec_fn=limits.preexec() if limits is not None else None,
            )
            return ProcessGroupJail(process)
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
