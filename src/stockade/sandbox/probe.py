"""The startup probe: before claiming a posture, spawn a real jail and check that it holds.

One spawn checks the essentials: a canary write inside a writable root succeeds, a write
outside every root fails, a host kernel tunable cannot be opened for writing, the jail has its
own PID namespace (its ``/proc/self/ns/pid`` inode differs from the host's), and (network deny)
the only network interface is loopback. ``stockade doctor`` runs the longer, separate live
checks.

A backend that could not even create its sandbox because user namespaces are not permitted is
*unavailable* (``ProbeResult.unavailable``): ``auto`` may try the next backend. Every other
failure is a failed proof, which ``auto`` turns into a refusal.

Results are cached per process, and on disk keyed by what they depend on (backend binary,
kernel, uid, policy shape) and authenticated (``userdirs.read_json_cache``), so the CLI does
not pay for a probe on every command; a run whose sandbox then fails to start invalidates the
entry (``forget``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import NamedTuple

from stockade.errors import BackendUnavailable, StockadeError
from stockade.sandbox.backend import Backend
from stockade.sandbox.policy import SandboxPolicy, is_within
from stockade.sandbox.posture import Posture
from stockade.userdirs import read_json_cache, write_json_cache

CACHE_FILE = "probe.json"
CACHE_TTL_SECONDS = 24 * 3600

# A host kernel tunable: opened for writing (and closed, never written) by the probe.
KERNEL_TUNABLE = "/proc/sys/kernel/core_pattern"

# How bwrap says it cannot create its namespaces: the backend is unavailable, not failing.
USERNS_UNAVAILABLE_MARKERS = (
    "no permissions to create",
    "no permissions to creating",
    "creating new namespace failed",
    "setting up uid map",
    "not allow non-privileged user namespaces",
)

# Runs inside the jail with /bin/sh. Arguments: inside-file outside-file netns|shared.
# It prints one finding per line; "done" last proves it ran to the end.
PROBE_SCRIPT = r"""
( : > "$1" ) 2>/dev/null && echo inside-write-ok && rm -f "$1"
( : > "$2" ) 2>/dev/null && echo outside-write-succeeded
( exec 3>>"$4" ) 2>/dev/null && echo kernel-tunable-writable
echo "pidns:$(readlink /proc/self/ns/pid)"
if [ "$3" = netns ]; then
  while IFS=: read -r name rest; do
    name=$(echo $name)
    case "$rest" in *[0-9]*) [ "$name" = lo ] || echo "netif:$name";; esac
  done < /proc/net/dev
fi
echo done
"""


class ProbeResult(NamedTuple):
    ok: bool
    failures: tuple[str, ...] = ()
    cached: bool = False
    unavailable: bool = False  # the sandbox could not be created at all (no user namespaces)
    fix: str | None = None  # what the backend said fixes its failure, when it said


_process_cache: dict[str, ProbeResult] = {}


def cache_key(backend: Backend, identity: str, policy: SandboxPolicy) -> str:
    uname = os.uname()
    return "|".join(
        [
            backend.name,
            identity,
            uname.release,
            uname.version,
            str(os.getuid()),
            str(os.geteuid()),
            policy.shape,
        ]
    )


def outside_target(policy: SandboxPolicy) -> Path:
    """A path outside every writable root whose parent exists, preferring places the host user
    could really write (so a broken sandbox would show). Never below /tmp, which is a private
    scratch tmpfs inside the jail (writes there succeed and vanish)."""
    candidates = [policy.project.parent, Path.home(), Path("/var/tmp"), Path("/")]
    candidates = [c for c in candidates if not is_within(c, Path("/tmp"))]
    name = f".stockade-probe-{os.urandom(6).hex()}"
    fallback = None
    for directory in candidates:
        target = directory / name
        if policy.is_writable(target) or not directory.is_dir():
            continue
        if os.access(directory, os.W_OK):
            return target
        fallback = fallback or target
    return fallback or Path("/") / name


def prove(backend: Backend, policy: SandboxPolicy, *, identity: str) -> ProbeResult:
    """Return a cached result for this backend/kernel/shape or run the probe now."""
    key = cache_key(backend, identity, policy)
    if key in _process_cache:
        return _process_cache[key]
    stored = read_json_cache(CACHE_FILE).get(key)
    if isinstance(stored, dict) and time.time() - float(stored.get("at", 0)) < CACHE_TTL_SECONDS:
        result = ProbeResult(
            ok=bool(stored.get("ok")), failures=tuple(stored.get("failures", ())), cached=True
        )
        _process_cache[key] = result
        return result
    result = run_probe(backend, policy)
    if not result.ok:
        return result  # failures are never cached: fixing the machine must take effect at once
    _process_cache[key] = result
    cache = read_json_cache(CACHE_FILE)
    cache[key] = {"ok": result.ok, "failures": list(result.failures), "at": time.time()}
    write_json_cache(CACHE_FILE, cache)
    return result


def forget() -> None:
    """Drop cached results (after a sandbox failed to start despite a cached success)."""
    _process_cache.clear()
    write_json_cache(CACHE_FILE, {})


def run_probe(backend: Backend, policy: SandboxPolicy) -> ProbeResult:
    inside = policy.session_tmp / f".stockade-probe-{os.urandom(6).hex()}"
    outside = outside_target(policy)
    claims = backend.posture(policy, proven=False)
    netns = "netns" if claims.network_namespace else "shared"
    argv = [
        "/bin/sh",
        "-c",
        PROBE_SCRIPT,
        "probe",
        str(inside),
        str(outside),
        netns,
        KERNEL_TUNABLE,
    ]
    return _spawn_probe(backend, policy.with_fresh_protection(), argv, outside, claims)


def _spawn_probe(
    backend: Backend, policy: SandboxPolicy, argv: list[str], outside: Path, claims: Posture
) -> ProbeResult:
    try:
        jail = backend.spawn(
            policy,
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except BackendUnavailable as error:
        return ProbeResult(ok=False, failures=(error.message,), unavailable=True, fix=error.fix)
    except StockadeError as error:
        return _start_failure(error.message, error.fix)
    try:
        out, err = jail.process.communicate(timeout=30)
        code = jail.exit_code(jail.process.returncode)
    except subprocess.TimeoutExpired:
        jail.kill_all()
        jail.process.wait()
        return ProbeResult(ok=False, failures=("the probe sandbox did not finish in 30s",))
    except StockadeError as error:
        detail = err.decode(errors="replace").strip().splitlines()
        return _start_failure(detail[-1] if detail else error.message)
    finally:
        jail.close()
        if os.path.lexists(outside):
            os.unlink(outside)
    failures = _judge(out.decode(errors="replace"), code, claims)
    return ProbeResult(ok=not failures, failures=failures)


def _start_failure(reason: str, fix: str | None = None) -> ProbeResult:
    return ProbeResult(
        ok=False,
        failures=(f"could not start a sandbox: {reason}",),
        unavailable=any(marker in reason.lower() for marker in USERNS_UNAVAILABLE_MARKERS),
        fix=fix,
    )


def _host_pid_namespace() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return ""


def _judge(output: str, code: int, claims: Posture) -> tuple[str, ...]:
    """Check the probe's findings against what the backend claims (never more)."""
    lines = output.splitlines()
    failures = []
    if "done" not in lines:
        failures.append(f"the probe did not complete (exit status {code})")
    if "inside-write-ok" not in lines:
        failures.append("a write inside the session's writable root failed")
    if "outside-write-succeeded" in lines:
        failures.append("a write outside every writable root succeeded")
    if "kernel-tunable-writable" in lines:
        failures.append(f"the host kernel tunable {KERNEL_TUNABLE} could be opened for writing")
    if claims.pid_namespace:
        inside = next((line[6:] for line in lines if line.startswith("pidns:")), "")
        if not inside.startswith("pid:[") or inside == _host_pid_namespace():
            failures.append(
                "the jail is not in its own PID namespace (its namespace inode is the host's)"
            )
    if claims.network_namespace:
        interfaces = [line[6:] for line in lines if line.startswith("netif:")]
        if interfaces:
            failures.append(
                "network deny unenforced: the jail sees interfaces " + ", ".join(interfaces)
            )
    return tuple(failures)
