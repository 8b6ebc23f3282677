"""Looking at the host's processes from a test: the judge of what a jail left running."""

from __future__ import annotations

import os
import time
from collections.abc import Callable


def processes_with(marker: str) -> list[int]:
    """Host pids whose argv is exactly ``marker`` split on spaces (``sleep 4242.12``)."""
    wanted = marker.encode().split(b" ")
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                argv = handle.read().split(b"\0")[:-1]
        except OSError:
            continue
        if argv == wanted:
            found.append(int(entry))
    return found


def wait_until(condition: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``condition`` until it holds (True) or ``timeout`` passes (False)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def status_ids(pid: int) -> dict[str, list[int]]:
    """The Uid and Gid lines of /proc/PID/status (real, effective, saved, filesystem)."""
    ids: dict[str, list[int]] = {}
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("Uid", "Gid"):
                ids[name] = [int(v) for v in value.split()]
    return ids
