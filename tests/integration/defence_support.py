"""Shared by the defence integration tests: raw bwrap argv, identities, the probe path.

The tests build bwrap's argv directly (not through the backend) so that seccomp, Landlock and
the limits are proven on their own. Every test runs as the current user and, when that is
root, again as the unprivileged user `sbxtest` (via setuid in the child).
"""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import stockade.sandbox.probes.syscalls as _probe_module

PROBE = Path(_probe_module.__file__).resolve()
BWRAP = "/usr/bin/bwrap"
UNPRIVILEGED = "sbxtest"

JAIL = [
    BWRAP,
    "--unshare-all",
    "--unshare-user",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
]


def identities() -> list[str]:
    """'self', plus 'sbxtest' when we are root and can become it."""
    out = ["self"]
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(UNPRIVILEGED)
            out.append(UNPRIVILEGED)
        except KeyError:
            pass
    return out


def is_root(identity: str) -> bool:
    return identity == "self" and os.geteuid() == 0


def as_identity(identity: str) -> dict[str, Any]:
    """Popen keyword arguments that run the child as `identity`."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    if identity == "self":
        return {"env": {**env, "HOME": os.environ.get("HOME", "/")}}
    entry = pwd.getpwnam(identity)
    return {
        "user": entry.pw_uid,
        "group": entry.pw_gid,
        "extra_groups": [],
        "cwd": "/",
        "env": {**env, "HOME": entry.pw_dir},
    }


def jail(
    inside: Sequence[str],
    *,
    seccomp_fd: int | None = None,
    extra: Sequence[str] = (),
    base: Sequence[str] = JAIL,
) -> list[str]:
    argv = [*base, *extra]
    if seccomp_fd is not None:
        argv += ["--seccomp", str(seccomp_fd)]
    return [*argv, "--", *inside]


def probe(*args: str) -> list[str]:
    return ["/usr/bin/python3", "-I", "-S", str(PROBE), *args]


def run(
    argv: Sequence[str],
    identity: str,
    *,
    fds: Sequence[int] = (),
    timeout: float = 60,
    **kwargs: Any,
) -> subprocess.CompletedProcess[str]:
    """Run argv as `identity`, passing `fds`; the fds are closed in the parent afterwards."""
    try:
        return subprocess.run(
            list(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            pass_fds=tuple(fds),
            **{**as_identity(identity), **kwargs},
        )
    finally:
        for fd in fds:
            os.close(fd)


def needs_bwrap() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not Path(BWRAP).exists(), reason="bubblewrap is not installed")


PYTHON = sys.executable


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A fresh directory that `sbxtest` can reach (pytest's own base dir is 0700 for root)."""
    import shutil
    import tempfile

    path = Path(tempfile.mkdtemp(prefix="stockade-defence-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
