"""How long `stockade doctor --deep` takes, against plain `stockade doctor` in the same process.

Prints a table: median and p90 wall time of interleaved runs of the quick checks (the
baseline) and of the whole escape battery per backend, with the ratio to the baseline, and
the battery's per-scenario jail count. Run as root and as a normal user; the machine's load
shows in p90, so read medians.

    python benchmarks/doctor_deep.py [--runs 5] [--backend bwrap --backend landlock]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stockade.doctor import run_doctor
from stockade.doctor.attempts import ATTEMPTS
from stockade.doctor.battery import run_deep
from stockade.sandbox.policy import PolicyRequest


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def p90(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--backend", action="append", dest="backends")
    args = parser.parse_args()
    backends = args.backends or ["bwrap", "landlock"]
    project = Path(tempfile.mkdtemp(prefix="stockade-bench-", dir="/var/tmp"))
    request = PolicyRequest(project=project, cwd=project)
    cases: dict[str, Callable[[], object]] = {
        "doctor (quick, bwrap)": lambda: run_doctor(request, backend="bwrap"),
        **{f"doctor --deep ({b})": (lambda b=b: run_deep(request, backend=b)) for b in backends},
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    quick = run_doctor(request, backend="bwrap")
    if not quick.ok:
        raise SystemExit("the quick doctor fails here; fix that first: " + str(quick.to_dict()))
    for fn in cases.values():
        fn()  # warm up (bwrap version cache, imports)
    for _ in range(args.runs):  # interleaved, so load spikes hit every case alike
        for name, fn in cases.items():
            samples[name].append(timed(fn))
    baseline = statistics.median(samples["doctor (quick, bwrap)"])
    print(f"{len(ATTEMPTS)} attempts, {args.runs} interleaved runs, uid {os.geteuid()}")
    print(f"{'case':<28} {'median s':>9} {'p90 s':>7} {'x quick':>8}")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<28} {median:>9.2f} {p90(values):>7.2f} {median / baseline:>8.1f}")
    os.rmdir(project)


if __name__ == "__main__":
    main()
