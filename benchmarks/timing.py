"""What the benchmarks share: the median and p90 of samples, the table, a scratch directory.

Imported by the scripts next to it (``python benchmarks/X.py`` puts this directory on the path).
"""

from __future__ import annotations

import os
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path


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


def scratch_dir(*, private_state: bool = False) -> Path:
    """A fresh directory below /var/tmp (``/tmp`` is private inside a jail) that the jail user
    of a root launcher can reach; with ``private_state``, stockade's ledger, rule store and
    caches go below it too, so a benchmark never touches the operator's."""
    work = Path(tempfile.mkdtemp(prefix="stockade-bench-", dir="/var/tmp"))
    work.chmod(0o755)
    if private_state:
        for name in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
            os.environ[name] = str(work / name)
    return work
