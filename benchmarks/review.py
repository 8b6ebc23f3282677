"""What a review layer costs: start-up with and without ``--review``, and applying a
changeset of many small files. Interleaved in one process so every row sees the same machine.

Rows (median and p90 of interleaved samples; ratio against the row's baseline):

* ``stockade run -- true`` against ``stockade run --review -- true`` (the CLI, a process per
  command: changeset, layer and the empty changeset's removal included);
* a fresh ``Sandbox`` and its first ``run(["true"])``, without and with ``review=True``;
* ``Sandbox.run(["true"])`` on a prepared sandbox, without and with the layer;
* listing (``changes()``) and applying (``apply()``) a changeset of ``--files`` small files,
  against copying the same files with ``shutil.copytree`` (the floor for writing them).

    python benchmarks/review.py [--runs 20] [--apply-runs 5] [--files 10000]

Run it as root and as an unprivileged user: the layer is mounted differently.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stockade.runner import Sandbox
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from timing import print_table, scratch_dir, summary
from uid_drop import interleaved  # the same interleaving as the root jail's benchmark

Sample = Callable[[], object]
Row = tuple[str, float, float, float]


def pair(rows: list[Row], label: str, measured: dict[str, tuple[float, float]]) -> None:
    base = measured["plain"][0]
    rows.append((f"{label}", *measured["plain"], 1.0))
    rows.append((f"{label}, --review", *measured["review"], measured["review"][0] / base))


def startup_rows(project: Path, runs: int, limits: Limits) -> list[Row]:
    rows: list[Row] = []
    command = [sys.executable, "-m", "stockade", "run"]

    def cli(*extra: str) -> Sample:
        def action() -> None:
            subprocess.run([*command, *extra, "--", "true"], cwd=project, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip

        return action

    pair(rows, "stockade run -- true", interleaved(
        {"plain": cli(), "review": cli("--review")}, runs))  # fmt: skip

    request = PolicyRequest(project=project, cwd=project)

    def cold(review: bool) -> Sample:
        def action() -> None:
            with Sandbox(request, backend="bwrap", limits=limits, review=review) as sandbox:
                assert sandbox.run(["true"]).exit_code == 0

        return action

    pair(rows, "cold Sandbox + run(true)", interleaved(
        {"plain": cold(False), "review": cold(True)}, runs))  # fmt: skip

    with (
        Sandbox(request, backend="bwrap", limits=limits) as plain,
        Sandbox(request, backend="bwrap", limits=limits, review=True) as review,
    ):
        warm = interleaved(
            {"plain": lambda: plain.run(["true"]), "review": lambda: review.run(["true"])}, runs
        )
    pair(rows, "warm Sandbox.run(true)", warm)
    return rows


def apply_rows(project: Path, runs: int, files: int, limits: Limits) -> list[Row]:
    request = PolicyRequest(project=project, cwd=project)
    write = f"mkdir -p many && cd many && seq 1 {files} | while read n; do echo $n > f$n; done"
    listed: list[float] = []
    applied: list[float] = []
    copied: list[float] = []
    for _ in range(runs):
        shutil.rmtree(project / "many", ignore_errors=True)
        with Sandbox(request, backend="bwrap", limits=limits, review=True) as sandbox:
            assert sandbox.review is not None
            assert sandbox.run(["/bin/sh", "-c", write]).exit_code == 0
            start = time.perf_counter()
            found = sandbox.review.changes()
            listed.append((time.perf_counter() - start) * 1000)
            assert len(found) == files + 1
            changeset = sandbox.review.changeset_id
            from stockade.review.store import Changeset

            upper = Changeset.open(str(changeset)).upper / "many"
            target = Path(tempfile.mkdtemp(dir=project.parent)) / "many"
            start = time.perf_counter()
            shutil.copytree(upper, target)
            copied.append((time.perf_counter() - start) * 1000)
            shutil.rmtree(target.parent)
            start = time.perf_counter()
            result = sandbox.review.apply()
            applied.append((time.perf_counter() - start) * 1000)
            assert len(result.applied) == files + 1
    base = summary(copied)
    rows: list[Row] = [
        (f"shutil.copytree of the {files} files (the floor)", *base, 1.0),
        (f"changes(): list a changeset of {files} files", *summary(listed),
         summary(listed)[0] / base[0]),
        (f"apply(): {files} small files into the project", *summary(applied),
         summary(applied)[0] / base[0]),
    ]  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--apply-runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=10_000)
    args = parser.parse_args()
    base = scratch_dir()
    data = Path(tempfile.mkdtemp(prefix="stockade-bench-data-", dir="/var/tmp"))
    os.environ["XDG_DATA_HOME"] = str(data)  # changesets of the benchmark stay apart
    project = base / "project"
    project.mkdir()
    (project / "README").write_text("a project\n")
    os.chdir(project)
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)
    try:
        rows = startup_rows(project, args.runs, limits)
        rows += apply_rows(project, args.apply_runs, args.files, limits)
    finally:
        os.chdir("/")
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(data, ignore_errors=True)
    who = "root" if os.geteuid() == 0 else f"uid {os.geteuid()}"
    print(f"{who}, {args.runs} interleaved runs per start-up row, {args.apply_runs} per apply "
          f"row, {os.uname().release}")  # fmt: skip
    print_table(rows, width=56)


if __name__ == "__main__":
    main()
