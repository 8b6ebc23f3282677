"""What the Landlock backend's launcher and supervisor cost, interleaved in one process.

Rows (every round runs each row once, in rotating order; median and p90 per row):

* ``/bin/true`` bare, and the backend as it was before the launcher: one fork, Landlock and
  the seccomp filter in the child, no supervisor (the baseline of the ratios)
* the backend now: a subreaper launcher, the supervised filter (``LandlockBackend.spawn``)
* ``Sandbox.run(['true'])`` with the Landlock backend, and with ``none`` (also launched)
* a metadata call inside the jail: ``chmod`` per call, supervised (Landlock) against
  unsupervised (``none``), measured by the jailed process itself over many calls
* ``tar x`` of an archive of ``--files`` files (mode and times set on each), Landlock vs none

    python benchmarks/landlock.py [--rounds 30] [--files 500]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stockade.runner import Sandbox
from stockade.sandbox import landlock, seccomp
from stockade.sandbox.limits import Limits, RunLimits
from stockade.sandbox.policy import PolicyRequest
from timing import percentile

CHMOD_LOOP = """
import os, sys, time
path = sys.argv[1]
open(path, "w").close()
start = time.perf_counter()
for i in range(2000):
    os.chmod(path, 0o600 if i % 2 else 0o644)
print((time.perf_counter() - start) / 2000 * 1e6)
"""


def interleaved(rows: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per call of each row, the rows taking turns (after one warm-up each)."""
    samples: dict[str, list[float]] = {name: [] for name in rows}
    names = list(rows)
    for action in rows.values():
        action()
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            rows[name]()
            samples[name].append((time.perf_counter() - start) * 1000)
    return samples


def table(title: str, samples: dict[str, list[float]], baseline: str, unit: str) -> None:
    base = statistics.median(samples[baseline])
    print(f"\n{title}")
    print(f"{'what':58s} {'median ' + unit:>12s} {'p90 ' + unit:>10s} {'vs baseline':>12s}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:58s} {median:12.2f} {percentile(values, 0.9):10.2f} {median / base:11.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--files", type=int, default=500)
    args = parser.parse_args()
    project = Path(tempfile.mkdtemp(prefix="stockade-bench-", dir="/var/tmp"))
    try:
        measure_all(project, args.rounds, args.files)
    finally:
        shutil.rmtree(project, ignore_errors=True)


def measure_all(project: Path, rounds: int, files: int) -> None:
    work = project / "work"  # the project root itself may be frozen under Landlock
    work.mkdir()
    os.chdir(project)
    request = PolicyRequest(project=project, cwd=project)
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)

    with (
        Sandbox(request, backend="landlock", limits=limits) as landlocked,
        Sandbox(request, backend="none", limits=limits) as unconfined,
    ):
        policy = landlocked.policy

        def before() -> None:
            """The backend before this change: Landlock + filter in the forked child."""
            ruleset = landlock.prepare(landlock.policy_for(policy))
            install = seccomp.preexec_installer(allow_unix_sockets=False, network_by_landlock=True)
            steps = [RunLimits(limits, None).preexec(), ruleset.enforce, install]
            try:
                subprocess.run(
                    ["true"],
                    start_new_session=True,
                    preexec_fn=lambda: [step() for step in steps] and None,
                    check=True,
                    env=dict(policy.env),
                )
            finally:
                ruleset.close()

        def now() -> None:
            jail = landlocked.backend.spawn(
                policy, ["true"], stdin=subprocess.DEVNULL, limits=RunLimits(limits, None)
            )
            jail.process.wait()
            jail.exit_code(jail.process.returncode)
            jail.close()

        spawn_rows = {
            "/bin/true (bare exec)": lambda: subprocess.run(["/bin/true"], check=True),
            "before: Landlock + filter in the child (baseline)": before,
            "now: launcher + Landlock + supervised filter": now,
            "Sandbox.run(['true']), Landlock": lambda: landlocked.run(["true"]),
            "Sandbox.run(['true']), none (launcher only)": lambda: unconfined.run(["true"]),
        }
        samples = interleaved(spawn_rows, rounds)
        print(f"uid {os.geteuid()}, {rounds} interleaved rounds, {os.uname().release}")
        table("per command", samples, "before: Landlock + filter in the child (baseline)", "ms")

        target = str(work / "chmod-target")

        def chmod_cost(box: Sandbox) -> float:
            result = box.run([sys.executable, "-I", "-S", "-c", CHMOD_LOOP, target])
            return float(result.stdout.split()[-1])

        per_call: dict[str, list[float]] = {"chmod, none (baseline)": [], "chmod, Landlock": []}
        for _ in range(max(3, rounds // 10)):
            per_call["chmod, none (baseline)"].append(chmod_cost(unconfined))
            per_call["chmod, Landlock"].append(chmod_cost(landlocked))
        table("one metadata call, timed inside the jail", per_call, "chmod, none (baseline)", "us")

        tree = work / "tree"
        for index in range(files):
            path = tree / f"d{index % 20}" / f"f{index}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x")
        subprocess.run(["tar", "cf", str(work / "tree.tar"), "-C", str(work), "tree"], check=True)
        script = f"rm -rf {work}/out && mkdir {work}/out && tar xf {work}/tree.tar -C {work}/out"
        tar_rows = {
            f"tar x of {files} files, none (baseline)": lambda: unconfined.run(
                ["/bin/sh", "-c", script]
            ),
            f"tar x of {files} files, Landlock": lambda: landlocked.run(["/bin/sh", "-c", script]),
        }
        tar_samples = interleaved(tar_rows, max(5, rounds // 3))
        table("an archive unpacked", tar_samples, next(iter(tar_rows)), "ms")


if __name__ == "__main__":
    main()
