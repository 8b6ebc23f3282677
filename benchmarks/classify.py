"""Benchmark: how fast is ``stockade.classify`` on realistic agent commands?

Prints one table. Every stage runs over the same corpus of distinct commands (see
``corpus.py``), cold: classify keeps no cache, so each call parses and classifies from scratch.
Each figure is the median of several runs; the baseline rows (tree-sitter alone, then
stockade's parser) are measured in the same process, and the last column is each stage's
throughput relative to tree-sitter alone.

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
from stockade.shell import get_parser, parse


def measure(function: Callable[[str], object], commands: list[str], runs: int) -> dict[str, float]:
    """Median over ``runs`` of: throughput (commands/s), median and p99 latency (µs)."""
    for command in commands[:200]:  # warm up the parser and the interpreter's caches
        function(command)
    rates: list[float] = []
    medians: list[float] = []
    p99s: list[float] = []
    clock = time.perf_counter_ns
    for _ in range(runs):
        latencies: list[int] = []
        gc.collect()
        gc.disable()
        try:
            started = clock()
            for command in commands:
                before = clock()
                function(command)
                latencies.append(clock() - before)
            elapsed = clock() - started
        finally:
            gc.enable()
        latencies.sort()
        rates.append(len(commands) / (elapsed / 1e9))
        medians.append(latencies[len(latencies) // 2] / 1000)
        p99s.append(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] / 1000)
    return {
        "rate": statistics.median(rates),
        "median": statistics.median(medians),
        "p99": statistics.median(p99s),
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
    results = {name: measure(function, commands, arguments.runs) for name, function in stages}
    baseline = results[stages[0][0]]["rate"]
    print(
        f"{len(commands)} distinct commands, median of {arguments.runs} runs, one core, "
        f"Python {sys.version.split()[0]}"
    )
    print()
    print(
        f"| {'stage':<36} | {'commands/s':>11} | {'median µs':>9} | {'p99 µs':>7} | "
        f"{'× baseline':>10} |"
    )
    print(f"|{'-' * 38}|{'-' * 13}|{'-' * 11}|{'-' * 9}|{'-' * 12}|")
    for name, _ in stages:
        result = results[name]
        print(
            f"| {name:<36} | {result['rate']:>11,.0f} | {result['median']:>9.1f} | "
            f"{result['p99']:>7.1f} | {result['rate'] / baseline:>10.2f} |"
        )
    target = results[stages[-1][0]]["rate"]
    print()
    print(
        f"target ≥ 50,000 commands/s: {'met' if target >= 50_000 else 'NOT met'} ({target:,.0f}/s)"
    )


if __name__ == "__main__":
    main()
