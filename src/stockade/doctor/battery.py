"""``stockade doctor --deep``: run the escape battery in a few real jails and judge every
attempt from the host side.

One lab (``lab.py``), two jails built through the public ``Sandbox`` with the operator's real
masks and deny lists: ``confined`` (network deny, with extra writable roots that are parents of
stockade's own state) and ``allowlist`` (the proxy). Each jail runs
``sandbox/probes/escapes.py`` with every attempt of its scenario as data (and once more for
the few that rename shared directories); the host inspects the jail while it waits (open
fds, children, tracers), then judges after the command returned (files, listeners,
survivors, the terminal). Each attempt ends as one of:

* ``held`` - it ran and nothing got out;
* ``escaped`` - the host saw it get out (the detail says what, and what the jail's calls got);
* ``not-applicable`` - it cannot mean anything here (not root, the kernel lacks the feature,
  the host itself cannot do it), or it got out through a gap the backend's posture states;
* ``error`` - it could not be run or judged (the jail failed, the attempt crashed, the
  scenario's control - an allowed write, an allowed host - did not work): never ``held``.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import secrets
import select
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stockade.doctor.attempts import ATTEMPTS, Attempt
from stockade.doctor.fixtures import Tripwire, kill_processes, processes_with
from stockade.doctor.judges import (
    ADMISSIONS,
    JUDGES,
    WHILE_HOLDING,
    Planned,
    Scene,
    fingerprint,
    paths_to_fingerprint,
    tree_fingerprint,
    trees_to_fingerprint,
    unmet,
)
from stockade.doctor.lab import Lab, Lookup
from stockade.doctor.quick import PROBES_DIR, with_test_hosts
from stockade.errors import StockadeError
from stockade.net.bridge import JAIL_PROXY_PORT
from stockade.sandbox.environment import visible_python
from stockade.sandbox.policy import NetworkMode, PolicyRequest

if TYPE_CHECKING:  # pragma: no cover - the runner is imported when a jail is built
    from stockade.runner import Sandbox

ESCAPES_SCRIPT = PROBES_DIR / "escapes.py"
OUTCOMES = ("held", "escaped", "not-applicable", "error")
RUN_TIMEOUT_SECONDS = 60.0
SURVIVOR_GRACE_SECONDS = 1.0  # how long the host waits for a run's processes to be gone
PTS_SLOTS = 64
UNCONFINED = "unconfined"  # the self-test mode: no sandbox at all (tests only)

_PLACEHOLDER = re.compile(r"\{([a-z][a-z0-9_]*)(?::([^{}]+))?\}")


@dataclass(frozen=True)
class AttemptResult:
    name: str
    klass: str
    outcome: str
    detail: str
    does: str = ""  # what the attempt tries (from the table)

    def to_dict(self) -> dict[str, str]:
        return {
            "name": self.name,
            "class": self.klass,
            "outcome": self.outcome,
            "detail": self.detail,
            "does": self.does,
        }


@dataclass
class DeepReport:
    backend: str
    identity: str
    results: list[AttemptResult] = field(default_factory=list)
    duration: float = 0.0
    jails: dict[str, str] = field(default_factory=dict)  # scenario -> posture summary or error

    @property
    def ok(self) -> bool:
        return not any(r.outcome in ("escaped", "error") for r in self.results)

    def counts(self) -> dict[str, int]:
        return {outcome: sum(r.outcome == outcome for r in self.results) for outcome in OUTCOMES}

    def by_class(self) -> dict[str, dict[str, int]]:
        table: dict[str, dict[str, int]] = {}
        for result in self.results:
            row = table.setdefault(result.klass, dict.fromkeys(OUTCOMES, 0))
            row[result.outcome] += 1
        return table

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "backend": self.backend,
            "identity": self.identity,
            "duration_seconds": round(self.duration, 2),
            "counts": self.counts(),
            "jails": self.jails,
            "attempts": [r.to_dict() for r in self.results],
        }


def identity() -> str:
    """Who the battery runs as (the jail's proof differs for root and everyone else)."""
    uid = os.geteuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    return "root" if uid == 0 else f"user {name}"


def run_deep(
    request: PolicyRequest,
    *,
    backend: str = "auto",
    attempts: Sequence[Attempt] = ATTEMPTS,
    timeout: float = RUN_TIMEOUT_SECONDS,
) -> DeepReport:
    """Run ``attempts`` under ``backend`` with the operator's masks and deny lists from
    ``request`` (its project, writable roots and network mode are replaced by the lab's).
    ``backend="unconfined"`` runs them with no sandbox at all: the self-test that every attempt
    can fail."""
    started = time.monotonic()
    report = DeepReport(backend=backend, identity=identity())
    with Lab.create() as lab, lab.environment():
        checks = _host_checks(lab)
        for scenario in ("confined", "allowlist"):
            chosen = [a for a in attempts if a.scenario == scenario]
            if chosen:
                report.results += _run_scenario(
                    lab, scenario, chosen, request, backend, checks, timeout, report
                )
        lab_prefix = f"{lab.root}/"
    order = {a.name: i for i, a in enumerate(attempts)}
    does = {a.name: a.does for a in attempts}
    report.results = sorted(
        (
            replace(r, detail=r.detail.replace(lab_prefix, "<lab>/"), does=does.get(r.name, ""))
            for r in report.results
        ),
        key=lambda r: order.get(r.name, len(order)),
    )
    report.duration = time.monotonic() - started
    return report


# --------------------------------------------------------------------------------------------
# One scenario: build the jail, plan the attempts, run, judge
# --------------------------------------------------------------------------------------------


def _scenario_request(lab: Lab, scenario: str, operator: PolicyRequest) -> PolicyRequest:
    """The lab's roots and network with the operator's masks and deny lists."""
    confined = scenario == "confined"
    return PolicyRequest(
        project=lab.project,
        cwd=lab.project,
        writable=lab.writable_roots if confined else (),
        network=NetworkMode.DENY if confined else NetworkMode.ALLOWLIST,
        read_deny=operator.read_deny,
        read_allow_within_deny=operator.read_allow_within_deny,
        write_deny_within_allow=operator.write_deny_within_allow,
        include_default_masks=operator.include_default_masks,
        allow_unix_sockets=operator.allow_unix_sockets,
    )


def _run_scenario(
    lab: Lab,
    scenario: str,
    attempts: list[Attempt],
    operator: PolicyRequest,
    backend: str,
    checks: dict[str, str | None],
    timeout: float,
    report: DeepReport,
) -> list[AttemptResult]:
    with ExitStack() as stack:
        control_wire = lab.tripwires.add("tcp", "127.0.0.1") if scenario == "allowlist" else None
        sandbox: Sandbox | None = None
        if backend == UNCONFINED:
            report.jails[scenario] = "unconfined (self-test)"
            _seed_state()
        else:
            built = _build_jail(lab, scenario, operator, backend, control_wire)
            if isinstance(built, str):
                report.jails[scenario] = f"could not be built: {built}"
                why = f"the {scenario} jail could not be built: {built}"
                return [AttemptResult(a.name, a.klass, "error", why) for a in attempts]
            sandbox = stack.enter_context(built)
            report.backend = sandbox.posture.backend
            report.jails[scenario] = sandbox.posture.summary()
        scene = Scene(
            lab=lab,
            scenario=scenario,
            posture=sandbox.posture if sandbox else None,
            allow_unix_sockets=operator.allow_unix_sockets,
            host_checks=checks,
            state=lab.state_files(),
            proxy_port=sandbox.policy.proxy_port if sandbox else None,
        )
        values = _scene_values(scene, sandbox, control_wire)
        plans: list[tuple[Attempt, Planned]] = []
        results: dict[str, AttemptResult] = {}
        for number, attempt in enumerate(attempts):
            planned = _plan(scene, attempt, values, number)
            if isinstance(planned, AttemptResult):
                results[attempt.name] = planned
            else:
                plans.append((attempt, planned))
        controls = _controls(lab, scenario, values, control_wire)
        for planned in [*(p for _, p in plans), *controls]:
            for path in paths_to_fingerprint(planned):
                scene.before[path] = fingerprint(path)
            for path in trees_to_fingerprint(planned):
                scene.before_trees[path] = tree_fingerprint(path)
        # Attempts that change what others are judged by (renaming .git, stockade's dirs) run
        # in a second command of the same jail, after the first one was judged.
        first = [p for a, p in plans if not a.disruptive]
        late = [p for a, p in plans if a.disruptive]
        ran = _execute(scene, sandbox, first, controls, timeout)
        runs = dict.fromkeys((p.name for p in first), ran)
        if late:
            runs.update(
                dict.fromkeys(
                    (p.name for p in late),
                    _execute(scene, sandbox, late, [], timeout, suffix="-late"),
                )
            )
        failed = ran.failed_controls
        for attempt, planned in plans:
            results[attempt.name] = _outcome(scene, attempt, planned, runs[planned.name], failed)
            _remove_privileged(planned)
        return [results[a.name] for a in attempts]


def _build_jail(
    lab: Lab, scenario: str, operator: PolicyRequest, backend: str, control: Tripwire | None
) -> Sandbox | str:
    """The scenario's sandbox, built like any other, or why it could not be."""
    from stockade.runner import Sandbox

    domain_policy = None
    if control is not None:  # the allow-listed test host is the control's listener
        domain_policy = with_test_hosts(None, allowed_port=int(control.address))
    try:
        return Sandbox(
            _scenario_request(lab, scenario, operator), backend=backend, domain_policy=domain_policy
        )
    except StockadeError as error:
        return str(error)


def _scene_values(
    scene: Scene, sandbox: Sandbox | None, control: Tripwire | None
) -> dict[str, Any]:
    """The lab's placeholder values plus this jail's own (its session dir, the proxy)."""
    session_root = sandbox.session_dir.root if sandbox else scene.lab.root / "session"
    session_root.mkdir(exist_ok=True)
    return {
        **scene.lab.values,
        "session_root": str(session_root),
        "proxy_port": str(scene.proxy_port) if scene.proxy_port else None,
        "bridge_port": str(JAIL_PROXY_PORT),
        "allowed_port": control.address if control else None,
    }


@dataclass
class RunOutcome:
    """One command of a jail, as the host saw it."""

    report: dict[str, Any]  # the probe's own account: which steps ran, with which errno
    held: bool  # the jail reached the hold phase and the host inspected it
    escapes: dict[str, list[str]]  # per attempt: what the host's judges saw get out
    problem: str  # what went wrong running the jail ("" when nothing did)
    failed_controls: list[str] = field(default_factory=list)


def _plan(
    scene: Scene, attempt: Attempt, values: dict[str, Any], number: int
) -> Planned | AttemptResult:
    """Make one attempt concrete, or say why it is not applicable here."""
    tag = f"a{number}"
    mark = f"{scene.lab.id}-mark-{tag}-{secrets.token_hex(6)}"
    own: dict[str, Any] = {
        "x": str(scene.lab.exchange / f"{scene.scenario}-{attempt.name.replace('/', '-')}"),
        "tag": tag,
        "name": attempt.name.replace(".", "-"),
        "marker": f"{scene.lab.id}-survivor-{tag}",
    }
    try:
        needs = tuple(_fill(need, own, values) for need in attempt.needs)
    except _NotHere as missing:
        return AttemptResult(attempt.name, attempt.klass, "not-applicable", str(missing))
    reason = unmet(scene, needs)
    if reason is not None:
        return AttemptResult(attempt.name, attempt.klass, "not-applicable", reason)
    planned = Planned(
        name=attempt.name, steps=[], judges=[], phase=attempt.phase, tag=tag, mark=mark
    )
    try:
        for judge in attempt.judge:
            args = tuple(_fill(a, own, values) for a in judge.args)
            if judge.kind == "hit":
                planned.tripwire = _tripwire(scene, args, values)
                own["trip"] = planned.tripwire.address
            planned.judges.append((judge.kind, args))
        held = [args for kind, args in planned.judges if kind == "held"]
        if held:  # an fd number for the jail to put what it made at, where the host looks
            planned.slot = own["slot"] = scene.next_slot
            scene.next_slot += PTS_SLOTS if held[0][0] == "pts" else 1
        planned.steps = [[_fill(part, own, values) for part in step] for step in attempt.steps]
    except _NotHere as missing:
        return AttemptResult(attempt.name, attempt.klass, "not-applicable", str(missing))
    except KeyError as unknown:
        return AttemptResult(attempt.name, attempt.klass, "error", f"unknown placeholder {unknown}")
    except OSError as error:
        return AttemptResult(
            attempt.name, attempt.klass, "error", f"the host could not prepare it: {error}"
        )
    return planned


def _tripwire(scene: Scene, args: tuple[str, ...], values: dict[str, Any]) -> Tripwire:
    kind, address = args
    if kind == "tcp-proxy-port":
        return scene.lab.tripwires.add("tcp", address, int(values["proxy_port"]))
    return scene.lab.tripwires.add(kind, address)


class _NotHere(Exception):
    """A placeholder whose value this machine does not have (no IPv6 address, no cgroup v2)."""


def _fill(text: str, own: dict[str, Any], values: dict[str, Any]) -> str:
    def replace(match: re.Match[str]) -> str:
        name, key = match.group(1), match.group(2)
        value = own[name] if name in own else values[name]
        if isinstance(value, Lookup):
            value = value.get(key or "")
        if value is None:
            raise _NotHere(
                f"this host has no {name.replace('_', ' ')}" + (f" ({key})" if key else "")
            )
        return str(value)

    return _PLACEHOLDER.sub(replace, text)


def _controls(
    lab: Lab, scenario: str, values: dict[str, Any], wire: Tripwire | None
) -> list[Planned]:
    """What must work in each jail, or its refusals prove nothing: a write inside the
    project (confined), a request to the allow-listed host (allowlist)."""
    if scenario == "confined":
        target = str(lab.exchange / "control-write-inside")
        return [
            Planned(
                "control.write-inside",
                [["write", target]],
                [("marked", (target,))],
                "now",
                mark=f"{lab.id}-control",
            )
        ]
    assert wire is not None
    url = f"http://{values['allowed']}:{wire.address}/"
    return [
        Planned(
            "control.allowed-host",
            [["proxy-http", url]],
            [("hit", ("tcp", "127.0.0.1"))],
            "now",
            tripwire=wire,
        )
    ]


# --------------------------------------------------------------------------------------------
# Running one jail: the spec, the hold protocol, the survivors
# --------------------------------------------------------------------------------------------


def _execute(
    scene: Scene,
    sandbox: Sandbox | None,
    plans: list[Planned],
    controls: list[Planned],
    timeout: float,
    *,
    suffix: str = "",
) -> RunOutcome:
    """Run one command of the jail with ``plans`` (and the ``controls``), inspect it while it
    holds, and judge everything after it returned."""
    lab = scene.lab
    name = f"{scene.scenario}{suffix}"
    # in the exchange dir: a writable root, so the jail may open them for writing
    ready_fifo, release_fifo = (lab.exchange / f"{name}.{end}" for end in ("ready", "release"))
    for fifo in (ready_fifo, release_fifo):
        os.mkfifo(fifo, 0o600)
    spec_path = lab.root / f"{name}.spec.json"
    report_path = lab.exchange / f"{name}.report.json"
    phase_order = ("now", "hold", "last")
    ordered = sorted([*controls, *plans], key=lambda p: phase_order.index(p.phase))
    spec = {
        "attempts": [p.to_spec() for p in ordered],
        "ready_fifo": str(ready_fifo),
        "release_fifo": str(release_fifo),
        "report": str(report_path),
        "keyring_prefix": "stockade-doctor-",
        "listed": scene.state,
        "hosts": {lab.values["allowed"]: "127.0.0.1", lab.values["denied"]: "127.0.0.1"},
    }
    spec_path.write_text(json.dumps(spec))
    argv = [visible_python(), "-I", "-S", str(ESCAPES_SCRIPT), str(spec_path)]
    ready_fd = os.open(ready_fifo, os.O_RDONLY | os.O_NONBLOCK)
    done_read, done_write = os.pipe()
    finished: dict[str, Any] = {}

    def run() -> None:
        try:
            finished["result"] = _run_probe(scene, sandbox, argv, timeout)
        except BaseException as error:  # reported as this jail's problem, never raised
            finished["error"] = error
        finally:
            os.write(done_write, b"x")

    thread = threading.Thread(target=run, name=f"doctor-{name}", daemon=True)
    thread.start()
    holding: dict[str, list[str]] = {}
    reached = False
    try:
        readable, _, _ = select.select([ready_fd, done_read], [], [], timeout + 5)
        if ready_fd in readable:
            reached = True
            lab.tripwires.settle()
            scene.jail = processes_with(str(spec_path))
            for planned in plans:
                holding[planned.name] = _escapes(scene, planned, holding=True)
        _release(release_fifo)
        thread.join(timeout + 10)
    finally:
        os.close(ready_fd)
        os.close(done_read)
        os.close(done_write)
    survivors = _judge_survivors(scene, plans)
    lab.tripwires.settle()
    kill_processes(str(spec_path))
    for planned in plans:
        for kind, args in planned.judges:
            if kind == "alive":
                kill_processes(args[0])
    problem = ""
    if "error" in finished:
        problem = f"the jail failed to run: {finished['error']}"
    elif "result" in finished:
        code, stderr = finished["result"]
        if code != 0:
            problem = f"the probe exited {code}: {stderr.strip()[-400:]}"
    else:
        problem = "the jail did not finish"
    try:
        probe_report = json.loads(report_path.read_text())
    except (OSError, ValueError):
        probe_report = {}
    escapes = {  # the files, listeners, tokens... as the host sees them after the run
        p.name: holding.get(p.name, [])
        + survivors.get(p.name, [])
        + _escapes(scene, p, holding=False)
        for p in plans
    }
    failed = [c.name for c in controls if not _escapes(scene, c, holding=False)]
    return RunOutcome(probe_report, reached, escapes, problem, failed)


def _run_probe(
    scene: Scene, sandbox: Sandbox | None, argv: list[str], timeout: float
) -> tuple[int, str]:
    if sandbox is not None:
        result = sandbox.run(argv, timeout=timeout)
        return result.exit_code, result.stderr
    completed = subprocess.run(  # the unconfined self-test: the host's whole environment
        argv,
        cwd=scene.lab.project,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
        check=False,
    )
    return completed.returncode, completed.stderr


def _release(fifo: Path) -> None:
    """Open the release FIFO for writing and close it: the jail's poll() sees the hang-up."""
    try:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # no reader: the jail is gone already
        return
    os.close(fd)


def _judge_survivors(scene: Scene, plans: Iterable[Planned]) -> dict[str, list[str]]:
    """Right after the run returned: is any process that tried to outlive it still alive?
    A run's own kill may still be in flight, so the host allows a short grace for them to be
    gone (it stops waiting as soon as they are)."""
    wanted = [p for p in plans if any(kind == "alive" for kind, _ in p.judges)]
    deadline = time.monotonic() + SURVIVOR_GRACE_SECONDS
    found: dict[str, list[str]] = {}
    while True:
        found = {
            p.name: lines
            for p in wanted
            if (lines := _escapes(scene, p, holding=False, only="alive"))
        }
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


def _escapes(
    scene: Scene, planned: Planned, *, holding: bool, only: str | None = None
) -> list[str]:
    """What the judges of one phase saw get out (empty: nothing)."""
    lines = []
    for kind, args in planned.judges:
        if (kind in WHILE_HOLDING) != holding or (only is not None and kind != only):
            continue
        if not holding and only is None and kind == "alive":
            continue  # judged right after the run, by _judge_survivors
        try:
            line = JUDGES[kind](scene, planned, args)
        except Exception as error:  # a judge that cannot judge makes the attempt an error
            line = f"judge-error: {kind}: {type(error).__name__}: {error}"
        if line:
            lines.append(line)
    return lines


def _outcome(
    scene: Scene, attempt: Attempt, planned: Planned, ran: RunOutcome, failed_controls: list[str]
) -> AttemptResult:
    def result(outcome: str, detail: str) -> AttemptResult:
        return AttemptResult(attempt.name, attempt.klass, outcome, detail)

    entry = ran.report.get(attempt.name)
    if entry is None:
        why = ran.problem or "the probe stopped before this attempt"
        return result("error", f"did not run: {why}")
    steps = "; ".join(str(s) for s in entry.get("steps", ()))
    if not entry.get("ran"):
        return result("error", f"the attempt failed to run: {entry.get('error')} (steps: {steps})")
    lines = ran.escapes.get(attempt.name, [])
    broken = [line for line in lines if line.startswith("judge-error: ")]
    if broken:
        return result("error", broken[0])
    inside = f"inside: {steps}" if steps else "inside: nothing ran"
    if lines:
        admitted = ADMISSIONS[attempt.admitted](scene) if attempt.admitted else None
        if admitted is not None:
            return result("not-applicable", f"got out ({lines[0]}), as stated: {admitted}")
        return result("escaped", f"{lines[0]} ({inside})")
    skipped = [s for s in entry.get("steps", ()) if str(s).startswith("skipped: ")]
    if skipped and len(skipped) == len(entry.get("steps", ())):
        return result("not-applicable", str(skipped[0]).removeprefix("skipped: "))
    if failed_controls:
        return result(
            "error",
            f"the jail's control ({', '.join(failed_controls)}) failed, so a refusal proves "
            f"nothing ({inside})",
        )
    if attempt.phase == "hold" and not ran.held:
        return result(
            "error",
            f"the jail never reached the point where the host inspects it: {ran.problem} "
            f"({inside})",
        )
    for kind, args in planned.judges:
        if kind == "alive" and not os.path.exists(args[1]):
            return result("error", f"the process never started ({inside})")
    return result("held", inside)


def _remove_privileged(planned: Planned) -> None:
    """A setuid file or device node an escape made must not outlive its judgement."""
    for kind, args in planned.judges:
        if kind in ("privileged-file", "file-capability"):
            with suppress(OSError):
                os.unlink(args[0])


def _seed_state() -> None:
    """The unconfined self-test builds no jail, so it caches a filter the way a jail would
    (into the lab's cache dir), for the state attempts to have something to attack."""
    from stockade.sandbox import seccomp
    from stockade.userdirs import write_json_cache

    seccomp.build_filter_program(allow_unix_sockets=False)
    write_json_cache("probe.json", {})


def _host_checks(lab: Lab) -> dict[str, str | None]:
    """What the seccomp attempts try, done by the host itself (unconfined) once."""
    scratch = lab.root / "host-check"
    scratch.write_text("x")
    try:
        completed = subprocess.run(
            [visible_python(), "-I", "-S", str(ESCAPES_SCRIPT), "--host-check", str(scratch)],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        checks: dict[str, str | None] = json.loads(completed.stdout)
    except (OSError, ValueError, subprocess.SubprocessError) as error:
        return {"error": str(error)}
    finally:
        scratch.unlink(missing_ok=True)
    return checks
