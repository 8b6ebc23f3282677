"""What the post-run guard costs: a confined ``true`` in a git repository with and without it
(interleaved, same process; under Landlock the guard also copies and compares the protected
paths), and the repository scan below the writable roots on trees of several sizes: the first
scan (a one-shot run), a refresh by ctimes, and a refresh with inotify watches (a session's
later commands).

    python benchmarks/guard.py [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from stockade.runner import Sandbox
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from stockade.sandbox.repo_index import RepoIndex
from timing import print_table, scratch_dir, summary


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return (time.perf_counter() - start) * 1000


def tree(root: Path, directories: int, files_per_directory: int = 5) -> None:
    """A project-like tree: ``directories`` directories, 30 per level, a few files each."""
    made = 0
    frontier = [root]
    while made < directories:
        parent = frontier.pop(0)
        for index in range(30):
            if made >= directories:
                break
            child = parent / f"d{index}"
            child.mkdir()
            for number in range(files_per_directory):
                (child / f"f{number}.txt").write_bytes(b"")
            frontier.append(child)
            made += 1


def _scan_once(root: Path) -> None:
    index = RepoIndex([root])
    index.refresh()
    index.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)
    rows: list[tuple[str, float, float, float]] = []
    base = scratch_dir()
    try:
        project = base / "project"
        project.mkdir()
        # a repository: its hooks and config are what bwrap binds and Landlock copies back
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        os.chdir(project)
        for backend in ("bwrap", "landlock"):
            with Sandbox(
                PolicyRequest(project=project, cwd=project), backend=backend, limits=limits
            ) as box:
                begin = box._begin_guard
                box.run(["true"])
                plain: list[float] = []
                guarded: list[float] = []
                for _ in range(args.runs):  # interleaved: the same machine state for both
                    guarded.append(timed(lambda: box.run(["true"])))
                    box._begin_guard = lambda policy, on_finding=None: None  # type: ignore[method-assign]
                    plain.append(timed(lambda: box.run(["true"])))
                    box._begin_guard = begin  # type: ignore[method-assign]
            p_median, p_p90 = summary(plain)
            g_median, g_p90 = summary(guarded)
            rows.append((f"Sandbox.run(['true']) {backend}, no guard", p_median, p_p90, 1.0))
            rows.append(
                (f"Sandbox.run(['true']) {backend}, guard", g_median, g_p90, g_median / p_median)
            )
        for directories in (1_000, 10_000, 50_000):
            root = base / f"tree-{directories}"
            root.mkdir()
            tree(root, directories)
            first = [timed(lambda: _scan_once(root)) for _ in range(5)]  # noqa: B023
            index = RepoIndex([root])
            index.refresh()
            by_ctime = [timed(index.refresh) for _ in range(args.runs)]
            index.start()  # a second command: watch everything
            index.refresh()
            watched = [timed(index.refresh) for _ in range(args.runs)]
            index.close()
            f_median, f_p90 = summary(first)
            rows.append((f"repository scan, {directories} dirs, first", f_median, f_p90, 1.0))
            for label, samples in (("by ctimes", by_ctime), ("inotify-watched", watched)):
                median, p90 = summary(samples)
                rows.append((f"  refresh {label}", median, p90, median / f_median))
    finally:
        os.chdir("/")
        shutil.rmtree(base, ignore_errors=True)
    print(f"uid {os.geteuid()}, {args.runs} runs per row, {os.uname().release}")
    print_table(rows, width=48)


if __name__ == "__main__":
    main()
