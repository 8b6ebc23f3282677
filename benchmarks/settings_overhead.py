"""What the layered settings cost on the ``stockade run`` path.

Prints two tables, medians (and p90) of N interleaved runs each:

* import time: the sum of every module's own import time reported by ``-X importtime`` for
  ``stockade run --unsafe -- true`` (``--unsafe`` so that only Python start-up and imports
  vary, not bwrap), and "added": the own time of modules the first (reference) scenario never
  imports - with a baseline tree, exactly what the settings layer adds to the run path, which
  is far less noisy than the difference of two totals;
* wall time of the confined ``stockade run -- true`` CLI.

Scenarios: no settings files; a user file; user + project + local files whose loosening
entries are ignored (an untrusted workspace, so the trust store is consulted). With
``--baseline-src DIR`` (the ``src`` of a checkout from before the settings layer, e.g.
``git archive <commit> src | tar -x -C /tmp/base``) the same CLI from that tree is measured
in the same process, and every row gets a ratio against it.

Bytecode caches are enabled (``PYTHONDONTWRITEBYTECODE`` is unset for the children) and
warmed up first, as on an installed system.

    python benchmarks/settings_overhead.py [--runs 21] [--baseline-src /tmp/base/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

USER_FILE = """\
[sandbox]
read_deny = ["~/.secrets-bench"]
write_deny_within_allow = ["${PROJECT_ROOT}/vendor"]
[sandbox.limits]
pids_max = 512
[permissions]
autonomy = "balanced"
deny = ["bash:curl *"]
"""
PROJECT_FILE = """\
[sandbox]
network = "allow"
read_deny = ["${PROJECT_ROOT}/.env"]
[permissions]
allow = ["bash:make *"]
"""
LOCAL_FILE = """\
[sandbox]
env_passthrough = ["GITHUB_TOKEN"]
"""


def child_env(base: Path, src: Path | None, *, with_user: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STOCKADE_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        env[name] = str(base / name)
    if not with_user:
        env["XDG_CONFIG_HOME"] = str(base / "empty-config")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def import_times(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[str, int]:
    """Every imported module's own import time (microseconds), from ``-X importtime``."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    times: dict[str, int] = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _cumulative, raw = line.split(":", 1)[1].split("|")
        times[raw.strip()] = times.get(raw.strip(), 0) + int(own)
    return times


def wall_ms(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def summarise(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--baseline-src", type=Path, default=None)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="stockade-bench-", dir="/var/tmp") as tmp:
        base = Path(tmp)
        project = base / "project"
        (project / ".stockade").mkdir(parents=True)
        config = base / "XDG_CONFIG_HOME" / "stockade"
        config.mkdir(parents=True)
        (config / "settings.toml").write_text(USER_FILE)
        layered = base / "layered"
        (layered / ".stockade").mkdir(parents=True)
        (layered / ".stockade" / "settings.toml").write_text(PROJECT_FILE)
        (layered / ".stockade" / "settings.local.toml").write_text(LOCAL_FILE)

        scenarios: list[tuple[str, Path, dict[str, str]]] = []
        if args.baseline_src is not None:
            scenarios.append(
                (
                    "baseline tree, no files",
                    project,
                    child_env(base, args.baseline_src.resolve(), with_user=False),
                )
            )
        scenarios += [
            ("no settings files", project, child_env(base, None, with_user=False)),
            ("user file", project, child_env(base, None, with_user=True)),
            ("user + project + local", layered, child_env(base, None, with_user=True)),
        ]
        unsafe = ["-m", "stockade", "run", "--unsafe", "--", "true"]
        confined = ["-m", "stockade", "run", "--", "true"]
        imports: dict[str, list[dict[str, int]]] = {name: [] for name, _, _ in scenarios}
        walls: dict[str, list[float]] = {name: [] for name, _, _ in scenarios}
        for _name, cwd, env in scenarios:  # warm up: bytecode caches, probe caches
            wall_ms(confined, cwd, env)
            import_times(unsafe, cwd, env)
        for _ in range(args.runs):  # interleaved, so drift hits every scenario alike
            for name, cwd, env in scenarios:
                imports[name].append(import_times(unsafe, cwd, env))
                walls[name].append(wall_ms(confined, cwd, env))

    reference = scenarios[0][0]
    # "added": modules the reference run never imports (with a baseline tree: what this
    # change adds to the run path; without one: what a settings file adds to no files).
    known = set().union(*imports[reference])

    def added(times: dict[str, int]) -> float:
        return sum(us for module, us in times.items() if module not in known) / 1000

    def total(times: dict[str, int]) -> float:
        return sum(times.values()) / 1000

    ref_import = summarise([total(t) for t in imports[reference]])[0]
    ref_wall = summarise(walls[reference])[0]
    print(f"{args.runs} runs each, medians (p90); ratios against '{reference}'\n")
    header = (
        f"{'scenario':<26} {'imports ms':>16} {'ratio':>6} {'added ms':>9} "
        f"{'run -- true ms':>18} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for name, _, _ in scenarios:
        total_med, total_p90 = summarise([total(t) for t in imports[name]])
        added_med, _ = summarise([added(t) for t in imports[name]])
        wall_med, wall_p90 = summarise(walls[name])
        print(
            f"{name:<26} {total_med:>7.1f} ({total_p90:>5.1f}) {total_med / ref_import:>6.2f} "
            f"{added_med:>9.1f} {wall_med:>8.1f} ({wall_p90:>6.1f}) {wall_med / ref_wall:>6.2f}"
        )
    print("\nadded modules (median own import time, ms):")
    for name, _, _ in scenarios[1:]:
        modules = sorted({m for t in imports[name] for m in t} - known)
        parts = [
            f"{m} {statistics.median([t.get(m, 0) for t in imports[name]]) / 1000:.2f}"
            for m in modules
        ]
        print(f"  {name}: " + (", ".join(parts) or "-"))


if __name__ == "__main__":
    main()
