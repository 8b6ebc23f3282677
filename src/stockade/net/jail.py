"""What the sandbox backend needs to wire ``allowlist`` mode into a jail.

The pieces: the allow-list proxy listens on a unix socket in a host directory that holds
nothing else; the backend mounts that directory read-only at ``JAIL_SOCKET_DIR`` inside the
jail (over a fresh tmpfs at ``/run``, so no mount point is ever created on the host), runs
``bridge_command(cmd)`` as the jail's command inside an unshared network namespace, and
applies ``proxy_environment()`` inside the jail.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from stockade.net import bridge
from stockade.net.bridge import JAIL_PROXY_PORT, JAIL_SOCKET_PATH, proxy_environment

JAIL_SOCKET_DIR = str(PurePosixPath(JAIL_SOCKET_PATH).parent)
SOCKET_NAME = PurePosixPath(JAIL_SOCKET_PATH).name
BRIDGE_SCRIPT = Path(bridge.__file__).resolve()

__all__ = [
    "BRIDGE_SCRIPT",
    "JAIL_PROXY_PORT",
    "JAIL_SOCKET_DIR",
    "JAIL_SOCKET_PATH",
    "SOCKET_NAME",
    "bridge_command",
    "bwrap_mount_args",
    "proxy_environment",
]


def bridge_command(
    command: Sequence[str],
    *,
    python: str = sys.executable,
    port: int = JAIL_PROXY_PORT,
    socket_path: str = JAIL_SOCKET_PATH,
    proxy_env: bool = False,
    seccomp_file: str | None = None,
) -> list[str]:
    """argv that runs ``command`` inside the jail behind the bridge.

    ``python`` and ``BRIDGE_SCRIPT`` must be visible inside the jail. ``-I -S``: isolated
    mode (no PYTHON* variables, no user site) and no site import, for a fast, clean start.
    With ``proxy_env`` the bridge adds ``proxy_environment(port)`` before exec'ing ``command``;
    with ``seccomp_file`` (a path inside the jail) it installs that filter on ``command``.
    """
    argv = [python, "-I", "-S", str(BRIDGE_SCRIPT), "--listen-port", str(port)]
    argv += ["--socket", socket_path]
    if proxy_env:
        argv.append("--proxy-env")
    if seccomp_file is not None:
        argv += ["--seccomp-file", seccomp_file]
    return [*argv, "--", *command]


def bwrap_mount_args(host_socket_dir: str | Path) -> list[str]:
    """bwrap arguments that make the proxy socket appear at ``JAIL_SOCKET_PATH``.

    Put them after the root/dev/proc mounts. ``/run`` becomes an empty tmpfs (hiding the
    host's runtime sockets too), then the socket directory is bound read-only on top:
    connecting to a socket needs no write access to the mount, and the jail can neither
    delete nor replace the socket.
    """
    return ["--tmpfs", "/run", "--ro-bind", str(host_socket_dir), JAIL_SOCKET_DIR]
