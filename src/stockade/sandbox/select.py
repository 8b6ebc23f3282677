"""Backend selection: prove before claiming, refuse rather than degrade.

``auto`` takes the first backend (in ``AUTO_ORDER``) whose probe proves enforcement for this
policy; a backend named explicitly must work or it is an error with its reason - never a silent
switch to another. ``none`` (unconfined) is only ever an explicit choice.
"""

from __future__ import annotations

from typing import NamedTuple

from stockade.errors import SandboxUnavailable, UsageError
from stockade.sandbox.backend import Backend, Unavailable
from stockade.sandbox.policy import SandboxPolicy
from stockade.sandbox.posture import Posture
from stockade.sandbox.probe import ProbeResult, prove
from stockade.vocabulary import AUTO_ORDER, BACKEND_NAMES


class Selection(NamedTuple):
    backend: Backend
    posture: Posture
    probe: ProbeResult | None


def make_backend(name: str) -> Backend:
    if name == "bwrap":
        from stockade.sandbox.bwrap import BwrapBackend

        return BwrapBackend()
    if name == "none":
        from stockade.sandbox.local import LocalBackend

        return LocalBackend()
    if name == "landlock":
        from stockade.sandbox.landlock import LandlockBackend

        return LandlockBackend()
    if name == "seatbelt":
        from stockade.sandbox.seatbelt import SeatbeltBackend

        return SeatbeltBackend()
    raise UsageError(
        f"unknown sandbox backend {name!r}", fix=f"use one of: {', '.join(BACKEND_NAMES)}"
    )


def backend_identity(backend: Backend) -> str:
    """What a cached probe of this backend depends on (its binary, for bwrap)."""
    binary = getattr(backend, "binary", None)
    if binary is None:
        return backend.name
    found = binary()
    return repr(found)


def select_backend(name: str, policy: SandboxPolicy) -> Selection:
    """Pick and prove a backend for ``policy``; raise SandboxUnavailable with every reason."""
    if name == "none":
        backend = make_backend("none")
        return Selection(backend, backend.posture(policy, proven=False), None)
    candidates = AUTO_ORDER if name == "auto" else (name,)
    reasons: list[str] = []
    fixes: list[str] = []
    for candidate in candidates:
        backend = make_backend(candidate)
        missing = backend.unavailable()
        if isinstance(missing, Unavailable):
            reasons.append(f"{candidate}: {missing.reason}")
            fixes.append(missing.fix)
            continue
        result = prove(backend, policy, identity=backend_identity(backend))
        if result.ok:
            return Selection(backend, backend.posture(policy, proven=True), result)
        reasons.append(f"{candidate}: " + "; ".join(result.failures))
        fixes.append(_fix_for(result))
    raise SandboxUnavailable(
        "no sandbox backend can prove enforcement here - " + " | ".join(reasons),
        fix=" or ".join(dict.fromkeys(fixes))
        + " (to run unconfined anyway, pass --unsafe or set STOCKADE_SANDBOX=off)",
    )


def _fix_for(result: ProbeResult) -> str:
    text = " ".join(result.failures).lower()
    if "namespace" in text or "permission" in text or "operation not permitted" in text:
        return (
            "enable unprivileged user namespaces: sudo sysctl -w "
            "kernel.unprivileged_userns_clone=1 (Debian) or "
            "kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04+)"
        )
    return "run `stockade doctor` for details"
