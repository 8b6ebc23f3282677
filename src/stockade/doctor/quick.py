"""``stockade doctor``: prove every claimed protection with a live probe, and say how to fix
what does not hold.

The host side prepares things the jail must not reach (a secret directory added to the mask
list, a TCP listener on the host's loopback, an abstract unix socket, a sentinel process, a
secret-looking environment variable), runs ``sandbox/probes/enforcement.py`` inside a real
sandbox, and judges its report; then it runs ``sandbox/probes/syscalls.py`` to see that the
syscalls the seccomp filter denies really fail. Nothing here is simulated.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stockade.doctor.fixtures import environment
from stockade.errors import StockadeError
from stockade.net.domains import DomainPolicy
from stockade.runner import Sandbox
from stockade.sandbox.environment import visible_python
from stockade.sandbox.policy import NetworkMode, PolicyRequest, SandboxPolicy
from stockade.sandbox.posture import Posture
from stockade.userdirs import cache_dir

if TYPE_CHECKING:  # pragma: no cover
    from stockade.settings import Problem, Settings

PROBES_DIR = Path(__file__).resolve().parent.parent / "sandbox" / "probes"
ENFORCEMENT_SCRIPT = PROBES_DIR / "enforcement.py"
SYSCALLS_SCRIPT = PROBES_DIR / "syscalls.py"
SECRET_ENV_NAME = "STOCKADE_DOCTOR_SECRET_TOKEN"


@dataclass(frozen=True)
class Check:
    """One line of the doctor's report."""

    name: str
    ok: bool
    detail: str
    fix: str | None = None
    claimed: bool = True  # False: this backend does not claim the protection (not a failure)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "claimed": self.claimed,
            "detail": self.detail,
            "fix": self.fix,
        }


@dataclass
class DoctorReport:
    checks: list[Check] = field(default_factory=list)
    posture: Posture | None = None
    settings: dict[str, Any] | None = None  # Settings.summary(), or the problems

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "posture": self.posture.to_dict() if self.posture else None,
            "settings": self.settings,
            "checks": [check.to_dict() for check in self.checks],
        }


def settings_checks(settings: Settings) -> list[Check]:
    """The settings' part of the report: validation result, layers and merged list counts,
    and - when the workspace is untrusted - every loosening entry that was ignored."""
    layers = ", ".join(settings.loaded_layers()) or "none (built-in defaults)"
    checks = [Check("settings", True, f"valid; layers: {layers}; {settings.counts_line()}")]
    if settings.ignored:
        changed = " (changed since it was trusted)" if settings.trust.stale else ""
        names = "; ".join(str(entry) for entry in settings.ignored)
        checks.append(
            Check(
                "workspace trust",
                True,
                f"untrusted workspace{changed}: {len(settings.ignored)} loosening entries "
                f"ignored: {names} (review them, then `stockade trust` enables them)",
            )
        )
    elif settings.trust.needed:
        checks.append(
            Check("workspace trust", True, "trusted: the project's loosening settings apply")
        )
    return checks


def invalid_settings_check(problems: Sequence[Problem]) -> Check:
    """A failing check that lists every settings problem (stockade will not run)."""
    first = problems[0]
    return Check(
        "settings",
        False,
        f"{len(problems)} problem{'s' if len(problems) != 1 else ''}: "
        + "; ".join(str(problem) for problem in problems),
        first.fix,
    )


def run_doctor(
    request: PolicyRequest, *, backend: str = "auto", domain_policy: DomainPolicy | None = None
) -> DoctorReport:
    """Build a sandbox like ``stockade run`` would and probe it live."""
    from stockade.sandbox.probe import forget

    forget()  # the doctor proves afresh; it never trusts a cached probe
    report = DoctorReport()
    with ExitStack() as stack:
        canary = stack.enter_context(_secret_canary())
        request = request._replace(read_deny=(*request.read_deny, canary))
        stack.enter_context(environment({SECRET_ENV_NAME: secrets.token_hex(8)}))
        origin_port = None
        if request.network is NetworkMode.ALLOWLIST:
            origin_port = stack.enter_context(_test_origin())
            domain_policy = with_test_hosts(domain_policy)
        try:
            sandbox = stack.enter_context(
                Sandbox(request, backend=backend, domain_policy=domain_policy, warm=False)
            )  # like `stockade run`: one command, a fresh jail
        except StockadeError as error:
            report.checks.append(Check("sandbox", False, error.message, error.fix))
            return report
        report.posture = sandbox.posture
        report.checks.append(
            Check(
                "sandbox",
                sandbox.posture.confined,
                sandbox.posture.summary(),
                None if sandbox.posture.confined else "drop --unsafe / STOCKADE_SANDBOX=off",
            )
        )
        if not sandbox.posture.confined:
            return report
        port = stack.enter_context(_tcp_listener())
        abstract = stack.enter_context(_abstract_listener())
        marker = stack.enter_context(_sentinel_process())
        before = _listing(sandbox.policy.project)
        spec = _spec(sandbox.policy, canary, port, abstract, marker)
        if origin_port is not None:
            spec["allowlist"] = {
                "allowed_url": f"http://{DOCTOR_ALLOWED_HOST}:{origin_port}/",
                "denied_url": f"http://{DOCTOR_DENIED_HOST}:{origin_port}/",
            }
        result = sandbox.run(
            [visible_python(), "-I", str(ENFORCEMENT_SCRIPT), json.dumps(spec)], timeout=60
        )
        leftovers = sorted(_listing(sandbox.policy.project) - before)
        try:
            findings = json.loads(result.stdout)
        except ValueError:
            report.checks.append(
                Check(
                    "probe",
                    False,
                    f"the in-jail probe failed (exit {result.exit_code}): "
                    f"{result.stderr.strip()[-300:]}",
                    "run `stockade run -- python3 -c 'print(1)'` to see the failure",
                )
            )
            return report
        report.checks += judge(findings, sandbox.policy, sandbox.posture, spec, canary)
        report.checks.append(seccomp_check(sandbox))
        report.checks.append(
            Check(
                "no leftovers",
                not leftovers,
                "the project is unchanged after the run"
                if not leftovers
                else f"the run left {', '.join(leftovers)} in the project",
                None if not leftovers else "report this as a bug",
            )
        )
    return report


def judge(
    findings: dict[str, Any],
    policy: SandboxPolicy,
    posture: Posture,
    spec: dict[str, Any],
    canary: Path,
) -> list[Check]:
    """Turn the in-jail report into checks, each with the reason and the fix. A protection the
    backend does not claim is shown as not claimed, never as passing."""
    return [
        _write_inside_check(findings, policy, posture),
        _write_outside_check(findings, spec),
        _protected_check(findings, posture),
        _masked_check(findings, canary, posture),
        _network_check(findings, policy, posture),
        *_allowlist_checks(findings),
        _pid_check(findings, posture),
        _env_check(findings),
    ]


def _write_inside_check(findings: dict[str, Any], policy: SandboxPolicy, posture: Posture) -> Check:
    name = "write inside writable roots"
    tmp = findings["write_session_tmp"]
    if not tmp["ok"]:
        return Check(
            name,
            False,
            f"a write in the session temp dir failed: {tmp.get('error')}",
            "check that the system temp dir is writable by this user",
        )
    inside = findings["write_inside"]
    if inside["ok"]:
        return Check(
            name, True, f"wrote and removed canaries in {policy.project} and the session temp dir"
        )
    if str(policy.project) in posture.frozen_dirs:
        return Check(
            name,
            True,
            f"wrote in the session temp dir; {policy.project} itself is "
            f"frozen by the {posture.backend} backend (no new top-level entries)",
        )
    return Check(
        name,
        False,
        f"a write inside the project failed: {inside.get('error')}",
        "check that the project directory is writable by this user",
    )


def _write_outside_check(findings: dict[str, Any], spec: dict[str, Any]) -> Check:
    outside = findings["write_outside"]
    if not outside["ok"]:
        return Check(
            "write outside blocked",
            True,
            f"{spec['outside']} could not be written ({outside.get('error')})",
        )
    return Check(
        "write outside blocked",
        False,
        f"a write to {spec['outside']} SUCCEEDED outside every writable root",
        "the sandbox is not confining writes; report this",
    )


def _protected_check(findings: dict[str, Any], posture: Posture) -> Check:
    if not posture.protected_read_only:
        return Check(
            "protected paths read-only",
            True,
            f"not claimed: the {posture.backend} backend restores protected paths after each "
            "command (they are writable while it runs)",
            claimed=False,
        )
    writable = [p["path"] for p in findings["write_protected"] if p["ok"]]
    if not writable:
        return Check(
            "protected paths read-only",
            True,
            f"{len(findings['write_protected'])} protected paths refused writes",
        )
    return Check(
        "protected paths read-only",
        False,
        "writable: " + ", ".join(writable),
        "report this as a bug",
    )


def _masked_check(findings: dict[str, Any], canary: Path, posture: Posture) -> Check:
    leaks = [
        m["path"]
        for m in findings["masked"]
        if m["readable"] or (posture.masks_hide_names and m["entries"])
    ]
    if not leaks:
        seen = "look empty" if posture.masks_hide_names else "have unreadable contents"
        return Check(
            "secrets masked",
            True,
            f"{len(findings['masked'])} masked paths (including a test secret at {canary}) {seen}",
        )
    return Check(
        "secrets masked",
        False,
        "masked paths are readable: " + ", ".join(leaks),
        "report this as a bug",
    )


def _network_check(findings: dict[str, Any], policy: SandboxPolicy, posture: Posture) -> Check:
    if policy.network is NetworkMode.ALLOW:
        return Check(
            "network", True, "network allowed by the operator (--network allow)", claimed=False
        )
    problems = []
    interfaces = findings["interfaces"] or []
    if posture.network_namespace and interfaces != ["lo"]:
        problems.append(f"interfaces visible: {', '.join(interfaces) or 'none'}")
    if findings["tcp_host_loopback"]["connected"]:
        problems.append("a TCP listener on the host's 127.0.0.1 was reachable")
    if findings["abstract_socket"]["connected"]:
        problems.append("a host abstract unix socket was reachable")
    if not posture.network_namespace and findings["udp_socket"]["created"]:
        problems.append("a UDP socket could be created")
    if problems:
        return Check(
            "network denied",
            False,
            "network deny UNENFORCED: " + "; ".join(problems),
            "the backend cannot isolate the network here; see `stockade status`",
        )
    how = (
        "only loopback inside"
        if posture.network_namespace
        else "TCP refused by Landlock, UDP refused by seccomp"
    )
    return Check("network denied", True, f"{how}; host 127.0.0.1 and abstract sockets unreachable")


def _allowlist_checks(findings: dict[str, Any]) -> list[Check]:
    """allowlist mode: a test host on the allow list is reached through the proxy, a denied
    one gets 403 (the direct route is covered by the network check)."""
    fetched = findings.get("allowlist")
    if not fetched:
        return []
    allowed, denied = fetched["allowed"], fetched["denied"]
    return [
        Check(
            "allow-listed host reachable",
            allowed.get("status") == 200,
            "an allowed test host answered through the proxy"
            if allowed.get("status") == 200
            else f"the allowed test host was not reached: {allowed}",
            None
            if allowed.get("status") == 200
            else "run `stockade status` to see the "
            "proxy address; check that the jail's python honours HTTP_PROXY",
        ),
        Check(
            "denied host refused",
            denied.get("status") == 403,
            "a denied test host got 403 from the proxy"
            if denied.get("status") == 403
            else f"the denied test host was not refused with 403: {denied}",
            None if denied.get("status") == 403 else "report this as a bug",
        ),
    ]


def _pid_check(findings: dict[str, Any], posture: Posture) -> Check:
    if not posture.pid_namespace:
        return Check(
            "host processes hidden",
            True,
            f"not claimed: the {posture.backend} backend has no PID namespace "
            "(host command lines are visible)",
            claimed=False,
        )
    if not findings["sentinel_pids"]:
        return Check(
            "host processes hidden",
            True,
            f"a host sentinel process is invisible ({findings['process_count']} processes visible)",
        )
    return Check(
        "host processes hidden",
        False,
        "the jail can see host processes",
        "the PID namespace is not working",
    )


def seccomp_check(sandbox: Sandbox) -> Check:
    """Live: the syscalls the filter denies really fail inside this backend's jail.

    ``sandbox/probes/syscalls.py`` calls each with arguments the kernel itself rejects with
    another errno, so an unfiltered call is harmless and shows as that errno (or OK)."""
    name = "seccomp filter in force"
    result = sandbox.run([visible_python(), "-I", "-S", str(SYSCALLS_SCRIPT)], timeout=60)
    try:
        observed = json.loads(result.stdout)
    except ValueError:
        return Check(
            name,
            False,
            f"the syscall probe failed (exit {result.exit_code}): {result.stderr.strip()[-300:]}",
            "run `stockade run -- python3 -c 'print(1)'` to see the failure",
        )
    expected = expected_seccomp_errnos(
        observed, allow_unix_sockets=sandbox.policy.allow_unix_sockets
    )
    if not expected:
        return Check(name, False, "the syscall probe tried nothing on this architecture", None)
    wrong = [
        f"{probe} returned {observed[probe]} (expected {errno_name})"
        for probe, errno_name in expected.items()
        if observed.get(probe) != errno_name
    ]
    if wrong:
        return Check(
            name,
            False,
            "denied syscalls are NOT refused: " + "; ".join(wrong),
            "the seccomp filter is not applied (a replaced cached filter?): "
            "delete stockade's cache dir and run `stockade doctor` again; report this",
        )
    return Check(name, True, f"{len(expected)} denied syscalls really failed inside (EPERM/ENOSYS)")


def expected_seccomp_errnos(
    observed: dict[str, str], *, allow_unix_sockets: bool
) -> dict[str, str]:
    """For each probe the in-jail script ran, the errno name the filter must produce."""
    import errno as errno_codes

    from stockade.sandbox import seccomp

    by_syscall = {rule.syscall: errno_codes.errorcode[rule.errno] for rule in seccomp.DENY_TABLE}
    if not allow_unix_sockets:
        by_syscall["socket"] = errno_codes.errorcode[seccomp.UNIX_SOCKET_RULE.errno]
    return {
        probe: by_syscall[probe.split(":")[0]]
        for probe in observed
        if probe.split(":")[0] in by_syscall
    }


def _env_check(findings: dict[str, Any]) -> Check:
    if not findings["secret_env_visible"]:
        return Check("secret env scrubbed", True, f"{SECRET_ENV_NAME} did not reach the command")
    return Check(
        "secret env scrubbed",
        False,
        f"{SECRET_ENV_NAME} reached the command",
        "report this as a bug",
    )


def _spec(
    policy: SandboxPolicy, canary: Path, port: int, abstract: str, marker: str
) -> dict[str, Any]:
    from stockade.sandbox.probe import outside_target

    project = policy.project
    protected = [str(project / ".stockade" / "doctor-canary")]
    if (project / ".git").is_dir():
        protected.append(str(project / ".git" / "hooks" / "stockade-doctor-canary"))
    return {
        "inside": str(project / f".stockade-doctor-{secrets.token_hex(4)}"),
        "inside_tmp": str(policy.session_tmp / f".stockade-doctor-{secrets.token_hex(4)}"),
        "outside": str(outside_target(policy)),
        "protected": protected,
        "masked": [str(canary)]
        + [str(m.path) for m in policy.masked if str(m.path) != str(canary)],
        "host_port": port,
        "abstract_name": abstract,
        "sentinel_marker_hex": marker.encode().hex(),
        "secret_env_name": SECRET_ENV_NAME,
    }


def _listing(directory: Path) -> set[str]:
    try:
        return set(os.listdir(directory))
    except OSError:
        return set()


DOCTOR_ALLOWED_HOST = "stockade-doctor-allowed.test"
DOCTOR_DENIED_HOST = "stockade-doctor-denied.test"


def with_test_hosts(
    policy: DomainPolicy | None,
    *,
    allowed: str = DOCTOR_ALLOWED_HOST,
    denied: str = DOCTOR_DENIED_HOST,
    allowed_port: int | None = None,
) -> DomainPolicy:
    """The operator's domain policy plus two test-only names that point at the doctor's own
    loopback listeners: one allowed (on ``allowed_port`` only, when given, with the
    private-address exception loopback needs), one denied. Only the doctor builds this;
    settings can never enable test hosts."""
    from stockade.net.domains import DomainPolicy, DomainRule

    base = policy if policy is not None else DomainPolicy()
    rule = allowed if allowed_port is None else f"{allowed}:{allowed_port}"
    return replace(
        base,
        allowed=(*base.allowed, DomainRule.parse(rule, allow_private=True)),
        denied=(*base.denied, DomainRule.parse(denied)),
        test_mode=True,
        test_hosts={**base.test_hosts, allowed: "127.0.0.1", denied: "127.0.0.1"},
    )


@contextmanager
def _test_origin() -> Iterator[int]:
    """A tiny HTTP origin on the host's loopback for the allowlist checks."""
    import http.server

    class Hello(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"stockade doctor origin\n"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def _secret_canary() -> Iterator[Path]:
    """A directory holding a fake secret, outside /tmp (which the jail replaces anyway, so a
    canary there would pass for the wrong reason)."""
    root = cache_dir() / f"doctor-{secrets.token_hex(6)}"
    secret = root / "secret"
    secret.mkdir(parents=True, mode=0o700)
    (secret / "id_canary").write_text("not a real key\n")
    try:
        yield secret
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def _tcp_listener() -> Iterator[int]:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    with _accepting(server):
        yield server.getsockname()[1]


@contextmanager
def _abstract_listener() -> Iterator[str]:
    name = f"stockade-doctor-{secrets.token_hex(6)}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(8)
    with _accepting(server):
        yield name


@contextmanager
def _accepting(server: socket.socket) -> Iterator[None]:
    """Accept (and drop) connections in the background so a leak shows as a success."""
    stop = threading.Event()

    def loop() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
                connection.close()
            except OSError:
                continue

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=2)
        server.close()


@contextmanager
def _sentinel_process() -> Iterator[str]:
    marker = f"stockade-doctor-sentinel-{secrets.token_hex(6)}"
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
    try:
        yield marker
    finally:
        process.kill()
        process.wait()
