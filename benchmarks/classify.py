"""Benchmark: how fast is ``stockade.classify`` on realistic agent commands?

Prints one table. Every stage runs over the same corpus of distinct commands (see
``corpus.py``), cold: classify keeps no cache, so each call parses and classifies from scratch.
Throughput is commands per CPU-second of the benchmark thread (one core; on a shared machine
wall-clock time also counts time spent waiting for the CPU, so it is shown alongside);
latency is timed per call in a separate pass. Each figure is the median of several runs in
which the stages are interleaved; the baseline (tree-sitter alone) is measured in the same
process, and the last column is each stage's throughput relative to it.

    python benchmarks/classify.py [--runs 7] [--size 1500]
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import corpus
from stockade.risk import classify
from stockade.shell import fast_parse, get_parser, parse


def throughput(function: Callable[[str], object], commands: list[str]) -> tuple[float, float]:
    """One pass: (commands per CPU-second of this thread, commands per wall-second)."""
    gc.collect()
    gc.disable()
    try:
        cpu_started = time.thread_time_ns()
        wall_started = time.perf_counter_ns()
        for command in commands:
            function(command)
        wall = time.perf_counter_ns() - wall_started
        cpu = time.thread_time_ns() - cpu_started
    finally:
        gc.enable()
    return len(commands) / (cpu / 1e9), len(commands) / (wall / 1e9)


def latencies(function: Callable[[str], object], commands: list[str]) -> tuple[float, float]:
    """One pass timing each call: (median µs, p99 µs), wall clock."""
    clock = time.perf_counter_ns
    samples: list[int] = []
    gc.collect()
    gc.disable()
    try:
        for command in commands:
            before = clock()
            function(command)
            samples.append(clock() - before)
    finally:
        gc.enable()
    samples.sort()
    return (
        samples[len(samples) // 2] / 1000,
        samples[min(len(samples) - 1, int(len(samples) * 0.99))] / 1000,
    )


def measure(
    stages: list[tuple[str, Callable[[str], object]]], commands: list[str], runs: int
) -> dict[str, dict[str, float]]:
    """Median over ``runs`` of each stage's figures; stages are interleaved within each run so
    that load from other processes hits them alike."""
    for _, function in stages:
        for command in commands[:200]:  # warm up the parser and the interpreter's caches
            function(command)
    figures: dict[str, dict[str, list[float]]] = {
        name: {"cpu_rate": [], "wall_rate": [], "median": [], "p99": []} for name, _ in stages
    }
    for _ in range(runs):
        for name, function in stages:
            cpu_rate, wall_rate = throughput(function, commands)
            median, p99 = latencies(function, commands)
            for key, value in (
                ("cpu_rate", cpu_rate),
                ("wall_rate", wall_rate),
                ("median", median),
                ("p99", p99),
            ):
                figures[name][key].append(value)
    return {
        name: {key: statistics.median(values) for key, values in stage.items()}
        for name, stage in figures.items()
    }


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--runs", type=int, default=7)
    options.add_argument("--size", type=int, default=1500)
    arguments = options.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core, as the target says
    commands = corpus(arguments.size)
    assert len(set(commands)) == len(commands) >= 1000, "the corpus must be ≥1000 distinct"
    tree_sitter = get_parser().parser

    def tree_sitter_only(command: str) -> object:
        return tree_sitter.parse(command.encode() + b"\n")

    stages: list[tuple[str, Callable[[str], object]]] = [
        ("tree-sitter parse only (baseline)", tree_sitter_only),
        ("stockade.shell.parse (segments)", parse),
        ("stockade.classify (cold, no cache)", classify),
    ]
    results = measure(stages, commands, arguments.runs)
    fast = [command for command in commands if fast_parse(command) is not None]
    rest = [command for command in commands if fast_parse(command) is None]
    split = measure(
        [(f"classify: fast-path commands ({len(fast)})", classify)], fast, arguments.runs
    )
    split.update(
        measure([(f"classify: tree-sitter commands ({len(rest)})", classify)], rest, arguments.runs)
    )
    baseline = results[stages[0][0]]["cpu_rate"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"{len(commands)} distinct commands, median of {arguments.runs} interleaved runs, one "
        f"core, Python {sys.version.split()[0]}, load average {load:.1f} on "
        f"{os.cpu_count()} CPUs"
    )
    print(
        "throughput: commands per CPU-second of the benchmark thread (wall-clock rate in "
        "brackets); latency: per call, wall clock"
    )
    print()
    print(
        f"| {'stage':<44} | {'commands/s':>11} | {'(wall)':>9} | {'median µs':>9} | "
        f"{'p99 µs':>7} | {'× baseline':>10} |"
    )
    print(f"|{'-' * 46}|{'-' * 13}|{'-' * 11}|{'-' * 11}|{'-' * 9}|{'-' * 12}|")
    for name in [name for name, _ in stages] + list(split):
        result = results.get(name) or split[name]
        print(
            f"| {name:<44} | {result['cpu_rate']:>11,.0f} | {result['wall_rate']:>9,.0f} | "
            f"{result['median']:>9.1f} | {result['p99']:>7.1f} | "
            f"{result['cpu_rate'] / baseline:>10.2f} |"
        )
    target = results[stages[-1][0]]["cpu_rate"]
    print()
    print(
        f"target ≥ 50,000 commands/s: {'met' if target >= 50_000 else 'NOT met'} ({target:,.0f}/s)"
    )


if __name__ == "__main__":
    main()
