"""What the benchmarks' tables share: the median and p90 of samples, and the table itself.

Imported by the scripts next to it (``python benchmarks/X.py`` puts this directory on the path).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The sample at ``fraction`` of the sorted samples (0.9: p90), the largest at most."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(samples: Sequence[float]) -> tuple[float, float]:
    """(median, p90) of the samples."""
    return statistics.median(samples), percentile(samples, 0.9)


def ratios(
    rows: Sequence[tuple[str, float, float]], baseline: float
) -> list[tuple[str, float, float, float]]:
    """``(what, median, p90)`` rows with each median's ratio to ``baseline`` added."""
    return [(name, median, p90, median / baseline) for name, median, p90 in rows]


def print_table(
    rows: Sequence[tuple[str, float, float, float]], *, width: int, ratio: str = "ratio"
) -> None:
    """One line per row ``(what, median ms, p90 ms, ratio)``; ``ratio`` heads the last column
    (what the ratio is against, e.g. "vs baseline")."""
    column = max(len(ratio) + 1, 7)
    print(f"{'what':{width}s} {'median ms':>10s} {'p90 ms':>8s} {ratio:>{column}s}")
    for name, median, p90, times in rows:
        print(f"{name:{width}s} {median:10.2f} {p90:8.2f} {times:{column - 1}.2f}x")
