"""How much seccomp, Landlock and the seccomp cache cost per command.

Prints a table: median wall time of N spawns of /bin/true per configuration, with the
difference and ratio against a baseline measured in the same process. Run as root and as a
normal user; numbers are noisy on small machines, so read medians, not single runs.

    python benchmarks/defence.py [--runs 50]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stockade.sandbox import landlock, seccomp

TRUE = ["/bin/true"]
BWRAP = [
    "/usr/bin/bwrap",
    "--unshare-all",
    "--unshare-user",
    "--die-with-parent",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
]


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm up
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def spawn(argv: list[str], **kwargs: object) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(argv, check=True, **kwargs)  # type: ignore[call-overload]

    return run


def noop() -> None:
    pass


def project(tmp: Path) -> landlock.LandlockPolicy:
    for d in ["proj/src", "proj/.git/hooks", "proj/.git/objects", "home/.ssh", "home/docs"]:
        (tmp / d).mkdir(parents=True, exist_ok=True)
    return landlock.LandlockPolicy(
        writable_roots=[str(tmp / "proj"), tempfile.gettempdir()],
        protected_paths=[str(tmp / "proj/.git/hooks"), str(tmp / "proj/.git/config")],
        masked_paths=[str(tmp / "home/.ssh")],
    )


def compile_times(runs: int) -> tuple[float, float, float, bool]:
    """Fresh interpreters: import time, then the first build with an empty vs a warm cache.

    Returns (import ms, cold build ms, warm build ms, warm path imported pyseccomp?).
    """
    code = (
        "import time, sys; from pathlib import Path; t0 = time.perf_counter();"
        "from stockade.sandbox import seccomp; t1 = time.perf_counter();"
        "seccomp.build_filter_program(allow_unix_sockets=False, cache=Path(sys.argv[1]));"
        "t2 = time.perf_counter(); print(t1 - t0, t2 - t1, 'pyseccomp' in sys.modules)"
    )
    imports: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    warm_imported = False
    for _ in range(runs):
        cache = tempfile.mkdtemp(prefix="stockade-bench-")
        for bucket in (cold, warm):
            out = subprocess.run(
                [sys.executable, "-c", code, cache], capture_output=True, text=True, check=True
            ).stdout.split()
            imports.append(float(out[0]))
            bucket.append(float(out[1]))
            if bucket is warm:
                warm_imported |= out[2] == "True"
        shutil.rmtree(cache)
    ms = [statistics.median(x) * 1000 for x in (imports, cold, warm)]
    return ms[0], ms[1], ms[2], warm_imported


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    runs = parser.parse_args().runs
    tmp = Path(tempfile.mkdtemp(prefix="stockade-bench-"))
    cache = tmp / "cache"
    try:
        install = seccomp.preexec_installer(allow_unix_sockets=False, cache=cache)
        policy = project(tmp)
        ruleset = landlock.prepare(policy)

        def landlock_and_seccomp() -> None:
            ruleset.enforce()
            install()

        def landlock_fresh_ruleset() -> None:
            with landlock.prepare(policy) as fresh:

                def confine() -> None:
                    fresh.enforce()
                    install()

                subprocess.run(TRUE, check=True, preexec_fn=confine)

        def bwrap_with_seccomp() -> None:
            fd = seccomp.filter_fd(allow_unix_sockets=False, cache=cache)
            try:
                subprocess.run(
                    [*BWRAP, "--seccomp", str(fd), "--", *TRUE], check=True, pass_fds=(fd,)
                )
            finally:
                os.close(fd)

        rows: list[tuple[str, float, str]] = []
        bare = median_ms(spawn(TRUE), runs)
        rows.append(("bare exec /bin/true (baseline)", bare, "bare"))
        fork = median_ms(spawn(TRUE, preexec_fn=noop), runs)
        rows.append(("exec with a no-op preexec (fork, not vfork)", fork, "bare"))
        rows.append(
            ("exec + seccomp in preexec", median_ms(spawn(TRUE, preexec_fn=install), runs), "bare")
        )
        rows.append(
            (
                "exec + Landlock + seccomp in preexec (ruleset reused)",
                median_ms(spawn(TRUE, preexec_fn=landlock_and_seccomp), runs),
                "bare",
            )
        )
        rows.append(
            (
                "exec + Landlock (ruleset built per run) + seccomp",
                median_ms(landlock_fresh_ruleset, runs),
                "bare",
            )
        )
        raw_bwrap = median_ms(spawn([*BWRAP, "--", *TRUE]), runs)
        rows.append(("raw bwrap (baseline for the next row)", raw_bwrap, "bwrap"))
        rows.append(
            (
                "raw bwrap + --seccomp FD (warm cache, new memfd per run)",
                median_ms(bwrap_with_seccomp, runs),
                "bwrap",
            )
        )
        filter_fd_only = median_ms(
            lambda: os.close(seccomp.filter_fd(allow_unix_sockets=False, cache=cache)), runs
        )
        build = median_ms(lambda: landlock.prepare(policy).close(), runs)
        ruleset.close()

        print(
            f"uid {os.geteuid()}, {runs} runs each, median; Landlock ABI "
            f"{landlock.abi_version()}, {len(ruleset.rules)} Landlock rules"
        )
        print(f"{'configuration':<60} {'ms':>8} {'+ms':>8} {'ratio':>7}")
        for name, ms, against in rows:
            base = bare if against == "bare" else raw_bwrap
            print(f"{name:<60} {ms:8.3f} {ms - base:+8.3f} {ms / base:7.2f}")
        print()
        print(f"{'in-process costs':<60} {'ms':>8}")
        print(
            f"{'filter_fd() with the program memoised (per bwrap run)':<60} {filter_fd_only:8.3f}"
        )
        print(f"{'landlock.prepare() for this policy (walk + rules)':<60} {build:8.3f}")
        imported, cold, warm, leaked = compile_times(max(3, runs // 10))
        print(f"{'import stockade.sandbox.seccomp, fresh interpreter':<60} {imported:8.3f}")
        print(f"{'first filter build, empty cache (imports pyseccomp, compiles)':<60} {cold:8.3f}")
        print(
            f"{'first filter build, warm cache (reads, no pyseccomp)':<60} {warm:8.3f}"
            + ("   (!) pyseccomp was imported" if leaked else "")
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
