"""``stockade doctor --deep``: the escape battery runs in real jails, judges from the host,
cannot pass for an attempt that cannot fail, and leaves nothing behind.

The battery's verdict on today's backends (which attempts escape) is ``.ci/run``'s business;
these tests prove the battery itself: every attempt gets out of an unconfined run, every
attempt runs and is judged (no ``error``) under bwrap and under Landlock, as whoever runs the
tests (``.ci/run`` runs them as root and as an unprivileged user).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from stockade.doctor.attempts import ATTEMPTS, CLASSES, Attempt, Judge
from stockade.doctor.battery import OUTCOMES, run_deep
from stockade.doctor.fixtures import processes_with
from stockade.doctor.lab import LAB_PARENTS, Lab
from stockade.doctor.quick import seccomp_check
from stockade.runner import Sandbox
from stockade.sandbox import seccomp
from stockade.sandbox.policy import PolicyRequest
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

BACKENDS = ["bwrap", "landlock"]


def _request(project: Path) -> PolicyRequest:
    return PolicyRequest(project=project)


def test_every_attempt_gets_out_of_an_unconfined_run(project: Path) -> None:
    """No attempt is a test that cannot fail: with nothing enforcing, each one escapes, or is
    not applicable on this machine for a stated reason (never held, never an error)."""
    report = run_deep(_request(project), backend="unconfined")
    by_outcome = {o: [r for r in report.results if r.outcome == o] for o in OUTCOMES}
    assert not by_outcome["held"], [(r.name, r.detail) for r in by_outcome["held"]]
    assert not by_outcome["error"], [(r.name, r.detail) for r in by_outcome["error"]]
    for result in by_outcome["not-applicable"]:
        assert not result.detail.startswith("got out"), result  # admissions are for postures
    assert len(by_outcome["escaped"]) >= 100
    assert {r.klass for r in by_outcome["escaped"]} == set(CLASSES)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_battery_runs_and_judges_every_attempt(project: Path, backend: str) -> None:
    result = run_cli("doctor", "--deep", "--json", "--backend", backend, cwd=project, timeout=300)
    report = json.loads(result.stdout)
    assert report["backend"] == backend
    assert len(report["attempts"]) == len(ATTEMPTS) >= 40
    assert len({a["class"] for a in report["attempts"]}) >= 8
    assert {set(a) >= {"name", "class", "outcome", "detail"} for a in report["attempts"]} == {True}
    errors = [(a["name"], a["detail"]) for a in report["attempts"] if a["outcome"] == "error"]
    assert not errors
    escaped = [a["name"] for a in report["attempts"] if a["outcome"] == "escaped"]
    assert report["ok"] is (not escaped)
    assert result.returncode == (0 if report["ok"] else 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_human_report_names_every_class_and_each_escape(project: Path, backend: str) -> None:
    result = run_cli("doctor", "--deep", "--backend", backend, cwd=project, timeout=300)
    assert "escape battery:" in result.stdout
    for klass in CLASSES:
        assert klass in result.stdout
    assert ("every attempt held" in result.stdout) == (result.returncode == 0)


def test_an_attempt_that_cannot_run_is_an_error_never_held(project: Path) -> None:
    broken = Attempt(
        "fs.broken",
        "filesystem",
        "a step the runner does not know",
        (("no-such-verb", "x"),),
        (Judge("marked", ("{outside}/never",)),),
    )
    crashing = Attempt(
        "fs.crashing",
        "filesystem",
        "a step whose arguments make it raise",
        (("chmod", "{outside}/truncate-me", "not-octal"),),
        (Judge("changed", ("{outside}/truncate-me",)),),
    )
    report = run_deep(_request(project), backend="bwrap", attempts=[broken, crashing])
    assert [r.outcome for r in report.results] == ["error", "error"]


def test_the_battery_leaves_nothing_behind(project: Path) -> None:
    before = {p for parent in LAB_PARENTS for p in parent.glob("stockade-doctor-*")}
    report = run_deep(_request(project), backend="landlock")
    assert report.results
    after = {p for parent in LAB_PARENTS for p in parent.glob("stockade-doctor-*")}
    assert after <= before
    assert not processes_with("stockade-doctor-")
    assert not [p for p in Path("/dev/shm").glob("stockade-doctor-*")]
    assert not os.environ.get("STOCKADE_DOCTOR_API_KEY")  # the doctor's own env is restored


def test_the_lab_fills_every_placeholder(project: Path) -> None:
    from stockade.doctor.battery import _fill

    own = {"x": "x", "tag": "t", "name": "n", "marker": "m", "trip": "1", "slot": "100"}
    extra = {"session_root": "/s", "proxy_port": "1", "bridge_port": "2", "allowed_port": "3"}
    with Lab.create() as lab:
        values = {**lab.values, **extra}
        for attempt in ATTEMPTS:
            texts = [p for step in attempt.steps for p in step] + list(attempt.needs)
            texts += [a for judge in attempt.judge for a in judge.args]
            for text in texts:
                try:
                    _fill(text, own, values)
                except KeyError as unknown:  # a missing *value* is fine (not on this host)
                    pytest.fail(f"{attempt.name}: unknown placeholder {unknown}")
                except Exception as error:
                    assert "this host has no" in str(error), error


ALLOW_ALL = struct.pack("HBBI", 0x06, 0, 0, 0x7FFF0000)  # BPF_RET|BPF_K SECCOMP_RET_ALLOW


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_live_seccomp_check_fails_when_the_filter_lets_everything_through(
    project: Path, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Sandbox(_request(project), backend=backend) as sandbox:
        assert seccomp_check(sandbox).ok
    monkeypatch.setattr(seccomp, "build_filter_program", lambda **_: ALLOW_ALL)
    with Sandbox(_request(project), backend=backend) as sandbox:  # a warm jail has its filter
        failed = seccomp_check(sandbox)
    assert not failed.ok
    assert "ptrace" in failed.detail and failed.fix


def test_plain_doctor_checks_seccomp_live(project: Path) -> None:
    result = run_cli("doctor", "--json", cwd=project, timeout=120)
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    assert checks["seccomp filter in force"]["ok"], checks["seccomp filter in force"]


def test_refusals_prove_nothing_when_the_allowed_host_is_unreachable_too(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The allowlist jail's control (a request to the allowed host) must get through; when it
    does not, the refusals around it are errors, not held."""
    from stockade.doctor import battery

    original = battery.with_test_hosts

    def nothing_allowed(policy: object, *, allowed_port: int | None = None) -> object:
        return original(None, allowed_port=1)  # the control's port is not on the list

    monkeypatch.setattr(battery, "with_test_hosts", nothing_allowed)
    chosen = [a for a in ATTEMPTS if a.name in ("allowlist.ip-literal-http", "allowlist.socks5-ip")]
    report = run_deep(_request(project), backend="bwrap", attempts=chosen)
    assert [r.outcome for r in report.results] == ["error", "error"]
    assert all("control" in r.detail for r in report.results)


def test_a_jail_that_cannot_be_built_makes_every_attempt_an_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no bubblewrap to be found
    report = run_deep(_request(project), backend="bwrap", attempts=ATTEMPTS[:3])
    assert {r.outcome for r in report.results} == {"error"}
    assert "could not be built" in report.results[0].detail
    assert not report.ok


def test_a_lab_left_by_a_killed_doctor_is_swept_by_the_next(project: Path) -> None:
    from stockade.doctor.lab import OWNER_LOCK, sweep_stale_labs

    parent = LAB_PARENTS[0]
    stale = parent / "stockade-doctor-stale-test"
    (stale / "project").mkdir(parents=True)
    (stale / OWNER_LOCK).write_text("")  # nobody holds it: its doctor is gone
    with Lab.create() as lab:
        assert not stale.exists()
        sweep_stale_labs(parent)
        assert lab.root.exists(), "a running doctor's lab is never swept"
