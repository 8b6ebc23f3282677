"""What "never host root inside" costs a root launcher: the bwrap backend with the uid drop
(id-mapped roots, the jail user) against the same backend keeping host root inside
(``root_jail``), interleaved in one process so both see the same machine state.

Rows (median and p90 of ``--runs`` interleaved samples each, ratio against the root jail):

* cold: a fresh ``Sandbox`` and its first ``run(["true"])`` - the CLI's per-command path
  (the probe result is cached, as on any machine after the first command);
* warm: ``Sandbox.run(["true"])`` on a prepared session;
* the kernel table's share: warm runs with and without its mounts (both dropping).

    sudo python benchmarks/uid_drop.py [--runs 40]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stockade.runner import Sandbox
from stockade.sandbox import bwrap
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from timing import print_table, summary

Sample = Callable[[], object]


def interleaved(actions: dict[str, Sample], runs: int) -> dict[str, tuple[float, float]]:
    """(median, p90) in milliseconds per action; one warm-up each, then A B A B ..."""
    for action in actions.values():
        action()
    samples: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(runs):
        for name, action in actions.items():
            start = time.perf_counter()
            action()
            samples[name].append((time.perf_counter() - start) * 1000)
    return {name: summary(values) for name, values in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run this as root: the uid drop only happens for a root launcher")
    project = Path(tempfile.mkdtemp(prefix="stockade-bench-", dir="/var/tmp"))
    os.chdir(project)
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)
    dropping = PolicyRequest(project=project, cwd=project)
    as_root = dropping._replace(root_jail=True)

    def cold(request: PolicyRequest) -> Sample:
        def action() -> None:
            with Sandbox(request, backend="bwrap", limits=limits) as sandbox:
                assert sandbox.run(["true"]).exit_code == 0

        return action

    rows: list[tuple[str, float, float, float]] = []
    measured = interleaved({"root": cold(as_root), "drop": cold(dropping)}, args.runs)
    base = measured["root"][0]
    rows.append(("cold Sandbox + run, host root inside (root_jail)", *measured["root"], 1.0))
    rows.append(("cold Sandbox + run, jail user (default)", *measured["drop"],
                 measured["drop"][0] / base))  # fmt: skip

    with (
        Sandbox(as_root, backend="bwrap", limits=limits) as root_box,
        Sandbox(dropping, backend="bwrap", limits=limits) as drop_box,
    ):
        table = bwrap.kernel_mounts()

        def without_table() -> None:
            saved = list(bwrap._kernel_memo)
            bwrap._kernel_memo[:] = []
            original = bwrap.kernel_mounts
            bwrap.kernel_mounts = lambda: []  # type: ignore[assignment]
            try:
                drop_box.run(["true"])
            finally:
                bwrap.kernel_mounts = original  # type: ignore[assignment]
                bwrap._kernel_memo[:] = saved

        measured = interleaved(
            {
                "root": lambda: root_box.run(["true"]),
                "drop": lambda: drop_box.run(["true"]),
                "no-table": without_table,
            },
            args.runs,
        )
    base = measured["root"][0]
    rows.append(("warm Sandbox.run, host root inside (root_jail)", *measured["root"], 1.0))
    rows.append(("warm Sandbox.run, jail user (default)", *measured["drop"],
                 measured["drop"][0] / base))  # fmt: skip
    rows.append((f"warm Sandbox.run, jail user, without the {len(table)} kernel mounts",
                 *measured["no-table"], measured["no-table"][0] / base))  # fmt: skip

    print(f"uid {os.geteuid()}, {args.runs} interleaved runs per row, {os.uname().release}")
    print_table(rows, width=64)


if __name__ == "__main__":
    main()
