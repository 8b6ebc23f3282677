"""Backend selection: prove before claiming, refuse rather than degrade.

``auto`` takes the first backend (in ``AUTO_ORDER``) that is *available* here and proves
enforcement for this policy. It moves on to the next one only when a backend cannot run at
all (not installed, no user namespaces); a backend that ran and failed a check is a refusal
with the reason, never a quiet switch to a weaker one - otherwise anything that can make a
proof fail (a repository's settings, say) could choose the weaker backend. A backend named
explicitly must work or it is an error. ``none`` (unconfined) is only ever an explicit choice.

A run whose backend differs from the last run in the same project says so
(:func:`note_backend`).
"""

from __future__ import annotations

from pathlib import Path
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
        if not result.unavailable:
            raise SandboxUnavailable(
                f"the {candidate} sandbox started but did not prove enforcement - "
                + " | ".join(reasons)
                + (" (auto never falls back to a weaker backend after a failed check)"
                   if name == "auto" else ""),
                fix=fixes[-1],
            )  # fmt: skip
    raise SandboxUnavailable(
        "no sandbox backend can prove enforcement here - " + " | ".join(reasons),
        fix=" or ".join(dict.fromkeys(fixes))
        + " (to run unconfined anyway, pass --unsafe or set STOCKADE_SANDBOX=off)",
    )


def _fix_for(result: ProbeResult) -> str:
    if result.fix:
        return result.fix
    text = " ".join(result.failures).lower()
    if "namespace" in text or "permission" in text or "operation not permitted" in text:
        return (
            "enable unprivileged user namespaces: sudo sysctl -w "
            "kernel.unprivileged_userns_clone=1 (Debian) or "
            "kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04+)"
        )
    return "run `stockade doctor` for details"


LAST_BACKENDS = "last-backends.json"  # in the data dir: project -> backend of its last run
LAST_BACKENDS_KEPT = 512


def note_backend(project: Path, backend: str) -> str | None:
    """Record ``backend`` as this project's latest and say so when the previous run here used
    another one (a changed backend changes what is enforced)."""
    from stockade.userdirs import data_dir, read_json_document, write_json_document

    path = data_dir() / LAST_BACKENDS
    seen = read_json_document(path)
    key = str(project)
    previous = seen.pop(key, None)
    seen[key] = backend
    if previous != backend or len(seen) > LAST_BACKENDS_KEPT:
        kept = dict(list(seen.items())[-LAST_BACKENDS_KEPT:])
        write_json_document(path, kept)
    if isinstance(previous, str) and previous != backend:
        return (
            f"sandbox backend changed: this run uses {backend}, the last run in {project} "
            f"used {previous}"
        )
    return None
