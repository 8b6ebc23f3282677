"""Posture: what a run was actually confined by. Every result carries one; it never overstates.

A property is listed as enforced only when the backend applies it *and* a probe proved the
backend works on this machine; everything else is named in ``gaps``.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Posture(NamedTuple):
    backend: str
    confined: bool
    proven: bool
    filesystem: str
    network: str
    pid_namespace: bool
    env_scrubbed: bool
    masked_paths: int
    seccomp: bool = False
    landlock: bool = False
    network_namespace: bool = False  # own (empty) network namespace: only loopback inside
    masks_hide_names: bool = False  # masked directories look empty (not just unreadable)
    frozen_dirs: tuple[str, ...] = ()  # no entries can be created/removed directly in these
    limits: tuple[str, ...] = ()
    gaps: tuple[str, ...] = ()
    # who the command is on the host when stockade runs as root ("" when it runs as the
    # launcher's own, unprivileged user)
    identity: str = ""
    notice: str = ""  # said once on stderr per session (what this backend does not enforce)
    protected_read_only: bool = True  # False: protected paths are restored after each command

    def summary(self) -> str:
        """One line for humans: ``bwrap (proven): writes confined to 3 roots, ...``."""
        if not self.confined:
            return f"{self.backend}: UNCONFINED - nothing is enforced"
        parts = [self.filesystem, f"network {self.network}"]
        if self.masked_paths:
            parts.append(f"{self.masked_paths} secret paths masked")
        if self.pid_namespace:
            parts.append("own PID namespace")
        if self.env_scrubbed:
            parts.append("env scrubbed")
        if self.seccomp:
            parts.append("seccomp")
        if self.landlock:
            parts.append("landlock")
        if self.identity:
            parts.append(self.identity)
        proven = "proven" if self.proven else "NOT proven"
        return f"{self.backend} ({proven}): " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        data["summary"] = self.summary()
        return data


def unconfined(reason: str) -> Posture:
    """The posture of an explicit operator choice to run without a sandbox."""
    return Posture(
        backend="none",
        confined=False,
        proven=False,
        filesystem="unconfined",
        network="unconfined",
        pid_namespace=False,
        env_scrubbed=True,
        masked_paths=0,
        gaps=(reason,),
    )
