"""What the Seatbelt profile and the environment allow-list cost on the run path.

Prints two tables, median and p90 of N interleaved runs, with ratios against a baseline
measured in the same process:

* profile: building the Seatbelt profile for a realistic policy (every home credential store
  of the vocabulary masked, every protected name, CARGO_HOME) - on a Mac, for every command
  whose policy the session has not seen yet - against building bwrap's mount arguments for the
  same policy (the Linux equivalent, built for every command);
* environment: a fresh interpreter building the child environment from this shell's variables
  (plus the secrets of ``EXTRA``), first call included (the allow-list compiles its credential
  patterns then) - against the deny-pattern implementation it replaced (``git show
  2992bc0:src/stockade/sandbox/environment.py``, written to a temp dir and loaded by path).

    python benchmarks/seatbelt.py [--runs 31]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType

from stockade.sandbox.bwrap import mount_arguments
from stockade.sandbox.policy import (
    GLOB_CHARACTERS,
    MaskedPath,
    NetworkMode,
    ProtectedPath,
    SandboxPolicy,
)
from stockade.sandbox.seatbelt import _profile, seatbelt_profile
from stockade.vocabulary import CARGO_HOME, HOME_SECRETS, PROTECTED_NAMES, ROOT

BASELINE_COMMIT = "2992bc0"
EXTRA = {
    "DATABASE_URL": "postgres://app:pw@db/app",
    "GITHUB_PAT": "github_pat_" + "a" * 40,
    "HTTPS_PROXY": "http://proxy.corp:3128",
    "LC_ALL": "C.UTF-8",
}
CHILD = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
started = time.perf_counter()
from {module} import child_environment
imported = time.perf_counter()
child_environment(os.environ, session_dir=Path("/var/tmp/s"))
done = time.perf_counter()
print(json.dumps({{"import": imported - started, "first_call": done - imported}}))
"""


def realistic_policy() -> SandboxPolicy:
    home, project, cargo = (
        Path("/Users/bench"),
        Path("/Users/bench/code/app"),
        Path("/Users/bench/.cargo"),
    )
    session = Path("/private/var/folders/zz/x/T/stockade-session-1-0-0/tmp")
    masked = [MaskedPath(home / s.path, "." not in Path(s.path).name[1:]) for s in HOME_SECRETS]
    places = {ROOT: project, CARGO_HOME: cargo}  # every name protected as if it existed
    protected = [
        ProtectedPath(places[p.where] / p.name, p.is_dir, p.judge, p.threat)
        for p in PROTECTED_NAMES
        if p.where in places and p.mount and not GLOB_CHARACTERS & set(p.name)
    ]
    return SandboxPolicy(
        project=project, cwd=project, session_tmp=session, writable=(project, session, cargo),
        masked=tuple(masked), read_allow_within_deny=(), protected=tuple(protected),
        network=NetworkMode.DENY, env=MappingProxyType({}), cargo_home=cargo,
    )  # fmt: skip


def summary(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def row(name: str, samples: list[float], baseline: list[float] | None, unit: float) -> str:
    median, p90 = summary(samples)
    ratio = f"{median / statistics.median(baseline):6.2f}x" if baseline else "      -"
    return f"  {name:<46} {median * unit:9.1f} {p90 * unit:9.1f}  {ratio}"


def timed(function: Callable[[], object], repeat: int = 50) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        function()
    return (time.perf_counter() - started) / repeat


def profile_table(runs: int) -> None:
    policy = realistic_policy()
    bwrap: list[float] = []
    seatbelt: list[float] = []
    cached: list[float] = []

    def uncached() -> str:
        _profile.cache_clear()  # a session's first command (or changed protected paths)
        return seatbelt_profile(policy)

    for _ in range(runs):  # interleaved
        bwrap.append(timed(lambda: mount_arguments(policy)))
        seatbelt.append(timed(uncached))
        cached.append(timed(lambda: seatbelt_profile(policy)))
    size = len(seatbelt_profile(policy))
    print(f"profile for {len(policy.masked)} masks, {len(policy.protected)} protected paths "
          f"({size} bytes of SBPL), microseconds")  # fmt: skip
    print(f"  {'':<46} {'median':>9} {'p90':>9}  ratio")
    print(row("bwrap mount arguments (baseline)", bwrap, None, 1e6))
    print(row("Seatbelt profile", seatbelt, bwrap, 1e6))
    print(row("Seatbelt profile, same policy again (cached)", cached, bwrap, 1e6))


def environment_table(runs: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        old = subprocess.run(
            ["git", "show", f"{BASELINE_COMMIT}:src/stockade/sandbox/environment.py"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        Path(temp, "old_environment.py").write_text(old)
        src = str(Path(__file__).resolve().parent.parent / "src")
        env = {**os.environ, **EXTRA, "PYTHONPATH": src}
        results: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
        for _ in range(runs):  # interleaved fresh interpreters
            for label, module in (
                ("old", "old_environment"),
                ("new", "stockade.sandbox.environment"),
            ):
                done = subprocess.run(
                    [sys.executable, "-c", CHILD.format(module=module), temp],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                for key, value in json.loads(done.stdout).items():
                    results[label].setdefault(key, []).append(value)
    print(f"\nenvironment for {len(os.environ) + len(EXTRA)} host variables, fresh process, "
          "milliseconds")  # fmt: skip
    print(f"  {'':<46} {'median':>9} {'p90':>9}  ratio")
    for key in ("import", "first_call"):
        print(row(f"deny pattern, {key} (baseline)", results["old"][key], None, 1e3))
        print(row(f"allow-list, {key}", results["new"][key], results["old"][key], 1e3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=31)
    runs = parser.parse_args().runs
    profile_table(runs)
    environment_table(runs)


if __name__ == "__main__":
    main()
