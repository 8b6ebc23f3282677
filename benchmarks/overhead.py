"""Per-command overhead of stockade: what a confined ``true`` costs against bare exec and raw
bubblewrap, measured in one process (same machine state for every row).

Rows (each: ``--runs`` spawns, median and p90 wall time, ratio against raw bwrap):

* ``/bin/true`` bare
* raw ``bwrap`` with exactly the namespace and mount flags stockade builds for this project
* the same raw bwrap plus ``--seccomp FD`` (stockade's filter, warm cache)
* stockade's library path: ``Sandbox.run(["true"])`` on a prepared session (bwrap backend),
  and the one-shot ``stockade.run(["true"])`` (session set-up included)
* the Landlock backend through the library path (Landlock + seccomp in the child)
* the ``stockade run -- true`` command line (a fresh interpreter per run)

    python benchmarks/overhead.py [--runs 50]
"""

from __future__ import annotations

import argparse
import compileall
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import stockade
from stockade.runner import Sandbox, run
from stockade.sandbox import seccomp
from stockade.sandbox.bwrap import BASE_FLAGS, find_bwrap, mount_arguments
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from timing import print_table, ratios, summary


def measure(action: Callable[[], object], runs: int) -> tuple[float, float]:
    """(median, p90) in milliseconds, after one warm-up."""
    action()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return summary(samples)


def spawn(argv: list[str], **kwargs: object) -> Callable[[], None]:
    def action() -> None:
        subprocess.run(argv, check=True, **kwargs)  # type: ignore[call-overload]

    return action


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    # Installed packages run from bytecode; make sure ours does too even when the environment
    # says PYTHONDONTWRITEBYTECODE (a fresh interpreter per CLI run would recompile every time).
    compileall.compile_dir(str(Path(stockade.__file__).parent), quiet=1)
    project = Path(tempfile.mkdtemp(prefix="stockade-bench-", dir="/var/tmp"))
    os.chdir(project)
    request = PolicyRequest(project=project, cwd=project)
    # No wall-clock limit and no cgroup caps: the rows compare confinement, not accounting.
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)
    rows: list[tuple[str, float, float]] = []

    rows.append(("/bin/true (bare exec)", *measure(spawn(["/bin/true"]), args.runs)))

    with Sandbox(request, backend="bwrap", limits=limits) as sandbox:
        binary = find_bwrap()
        assert not isinstance(binary, type(None))
        policy = sandbox.policy.with_fresh_protection()
        raw = [binary.path, *BASE_FLAGS, "--disable-userns", *mount_arguments(policy)]  # type: ignore[union-attr]
        raw += ["--chdir", str(project), "--", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
                "/bin/true"]  # fmt: skip
        rows.append(("raw bwrap, stockade's flags (baseline)", *measure(spawn(raw), args.runs)))

        def raw_with_seccomp() -> None:
            fd = seccomp.filter_fd(allow_unix_sockets=False)
            try:
                command = [*raw[:1], "--seccomp", str(fd), *raw[1:]]
                subprocess.run(command, check=True, pass_fds=(fd,))
            finally:
                os.close(fd)

        rows.append(("raw bwrap + --seccomp FD", *measure(raw_with_seccomp, args.runs)))
        rows.append((
            "stockade library: Sandbox.run(['true']) (bwrap)",
            *measure(lambda: sandbox.run(["true"]), args.runs),
        ))  # fmt: skip
    rows.append((
        "stockade library: stockade.run(['true']) one-shot",
        *measure(lambda: run(["true"], project=project, limits=limits), args.runs),
    ))  # fmt: skip
    with Sandbox(request, backend="landlock", limits=limits) as landlocked:
        rows.append((
            "stockade library: Sandbox.run(['true']) (Landlock)",
            *measure(lambda: landlocked.run(["true"]), args.runs),
        ))  # fmt: skip
    cli = [sys.executable, "-m", "stockade", "run", "--", "true"]
    script = Path(sys.executable).parent / "stockade"
    if script.exists():
        cli = [str(script), "run", "--", "true"]
    rows.append(("stockade run -- true (CLI)", *measure(spawn(cli), args.runs)))

    baseline = rows[1][1]
    print(f"uid {os.geteuid()}, {args.runs} runs per row, {os.uname().release}")
    print_table(ratios(rows, baseline), width=52, ratio="vs raw bwrap")


if __name__ == "__main__":
    main()
