"""What one confined ``/bin/true`` costs on every path, cold and warm, in one table.

Every row runs in this one process, interleaved: each round runs every row once, in a new
order, so machine noise (this machine is shared) hits every row alike. The ratio column is
against raw minimal bubblewrap measured in the same rounds.

Rows:

* bare exec; raw ``bwrap`` with a minimal flag set; raw ``bwrap`` with stockade's flags (its
  mount plan, ``--seccomp FD``, ``env -i``); sandlock (Landlock in process), if installed
* ``Sandbox.run`` on the bwrap backend, cold (a fresh jail per command) and warm
* ``Session.execute("/bin/true")`` (classify, gate, ledger, run; warm when the Sandbox is),
  and once more with the default limits: a cgroup per command where cgroups are writable
* ``Sandbox.run`` on the landlock backend, cold and warm
* the MCP ``bash`` tool: one ``tools/call`` round trip to a ``stockade mcp`` subprocess
* the command line: ``stockade run -- true`` in its own process (``STOCKADE_RUN_HELPER=0``),
  and through the run helper (the first run starts it; it is ended afterwards)

Then 1,000 commands in a row through one Session: throughput, and the RSS of this process
and of the warm jail's processes before and after (no growth means no leak per command).

Every stockade row has the guard around each command (snapshot before, judgement after) and
no cgroup caps (the rows compare confinement, not accounting), but the one that says so and
the command line. Each row's commands are a round apart, as an agent's are.

Runs against older checkouts too (``PYTHONPATH=/path/to/src``): rows a checkout cannot do
are ``n/a``. ``sandlock`` is a benchmark-only extra: ``pip install sandlock``.

    python benchmarks/warm.py [--runs 40] [--commands 1000]
"""

from __future__ import annotations

import argparse
import compileall
import inspect
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import stockade
from stockade.runner import Sandbox
from stockade.sandbox import seccomp
from stockade.sandbox.bwrap import BASE_FLAGS, find_bwrap, mount_arguments
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from stockade.session import Session

RAW_MINIMAL = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-all",
               "--die-with-parent"]  # fmt: skip
BASELINE = "raw bwrap, minimal flags"
Action = Callable[[], object]


def spawn(argv: list[str], **kwargs: Any) -> Action:
    def action() -> None:
        subprocess.run(argv, check=True, **kwargs)

    return action


def supports_warm() -> bool:
    return "warm" in inspect.signature(Sandbox.__init__).parameters


def sandbox(project: Path, backend: str, *, warm: bool | None) -> Sandbox:
    # No wall-clock limit and no cgroup caps: the rows compare confinement, not accounting.
    limits = Limits(wall_timeout_s=None, memory_max_bytes=None, pids_max=None)
    request = PolicyRequest(project=project, cwd=project)
    if supports_warm():
        return Sandbox(request, backend=backend, limits=limits, warm=warm)
    if warm:
        raise LookupError("this checkout has no warm jails")
    return Sandbox(request, backend=backend, limits=limits)


def raw_stockade_flags(box: Sandbox, project: Path) -> Action:
    binary = find_bwrap()
    assert not isinstance(binary, type(None))
    argv = [binary.path, *BASE_FLAGS, "--disable-userns", *mount_arguments(box.policy)]  # type: ignore[union-attr]
    argv += ["--chdir", str(project), "--", "/usr/bin/env", "-i", "PATH=/usr/bin:/bin",
             "/bin/true"]  # fmt: skip

    def action() -> None:
        fd = seccomp.filter_fd(allow_unix_sockets=False)
        try:
            subprocess.run([argv[0], "--seccomp", str(fd), *argv[1:]], check=True, pass_fds=(fd,))
        finally:
            os.close(fd)

    return action


def sandlock_row(project: Path) -> Action | None:
    try:
        import sandlock  # type: ignore[import-not-found]
    except ImportError:
        return None
    box = sandlock.Sandbox(fs_readable=["/"], fs_writable=[str(project)])

    def action() -> None:
        assert box.run(["/bin/true"]).success

    action()  # fails here, not in the table, where sandlock cannot confine
    return action


@contextmanager
def mcp_client(project: Path) -> Iterator[Action]:
    """A ``stockade mcp`` subprocess and a blocking ``tools/call bash`` on it."""
    from anyio.from_thread import start_blocking_portal
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stockade", "mcp", "--autonomy", "yolo", "--project", str(project)],
        env=dict(os.environ),
        cwd=str(project),
    )
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(params)) as client,
    ):

        def action() -> None:
            result = portal.call(client.call_tool, "bash", {"command": "/bin/true"})
            assert not result.is_error, result

        yield action


def helpers() -> list[int]:
    """Run helpers started by this benchmark's command line rows (ended at the end)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if b"stockade.cli.run_helper" in handle.read().split(b"\0"):
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def cli_argv() -> list[str]:
    script = Path(sys.executable).parent / "stockade"
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "stockade"]
    return [*argv, "run", "--", "true"]


def cli_without_helper(project: Path) -> Action:
    return spawn(cli_argv(), cwd=project, env={**os.environ, "STOCKADE_RUN_HELPER": "0"})


@contextmanager
def cli_action(project: Path) -> Iterator[Action]:
    env = {name: value for name, value in os.environ.items() if name != "STOCKADE_RUN_HELPER"}
    action = spawn(cli_argv(), cwd=project, env=env)
    before = set(helpers())
    action()  # starts the run helper, where there is one; wait until it answers
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not set(helpers()) - before:
        time.sleep(0.05)
    for _ in range(3):
        action()
    try:
        yield action
    finally:
        for pid in set(helpers()) - before:
            os.kill(pid, 15)


def measure(rows: dict[str, Action | None], runs: int) -> dict[str, list[float]]:
    """Interleaved: one warm-up round, then ``runs`` rounds of every row in a random order."""
    samples: dict[str, list[float]] = {name: [] for name, action in rows.items() if action}
    names = list(samples)
    for round_number in range(runs + 1):
        random.shuffle(names)
        for name in names:
            action = rows[name]
            assert action is not None
            start = time.perf_counter()
            action()
            if round_number:
                samples[name].append((time.perf_counter() - start) * 1000)
    return samples


def p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]


def rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            with open(f"/proc/{current}/task/{current}/children") as listing:
                queue += [int(p) for p in listing.read().split()]
        except OSError:
            pass
    return found


def jail_rss_kib(session: Session) -> int:
    warm = getattr(session.sandbox, "_warm", None)
    if warm is None:
        return 0
    total = 0
    for jail in warm.jails():
        process = getattr(jail.started, "_jail", None) or jail.started
        root = process.process.pid
        total += sum(rss_kib(pid) for pid in descendants(root))
    return total


def settled_jail_rss_kib(session: Session) -> int:
    """The jail's RSS once the spare for the next command is ready (a spare being forked
    would count twice)."""
    readings = []
    for _ in range(20):
        readings.append(jail_rss_kib(session))
        time.sleep(0.05)
    return min(readings)


def many_commands(session: Session, count: int) -> list[str]:
    session.execute("/bin/true")
    before = (rss_kib(os.getpid()), settled_jail_rss_kib(session))
    start = time.perf_counter()
    for _ in range(count):
        assert session.execute("/bin/true").exit_code == 0
    elapsed = time.perf_counter() - start
    after = (rss_kib(os.getpid()), settled_jail_rss_kib(session))
    return [
        f"{count} x Session.execute('/bin/true'): {elapsed:.2f} s, "
        f"{count / elapsed:.0f} commands/s ({'warm' if session.sandbox.warm else 'cold'})"
        if hasattr(session.sandbox, "warm")
        else f"{count} x Session.execute('/bin/true'): {elapsed:.2f} s, "
        f"{count / elapsed:.0f} commands/s (cold)",
        f"RSS of this process: {before[0] / 1024:.1f} MiB before, {after[0] / 1024:.1f} MiB "
        f"after ({(after[0] - before[0]) / 1024:+.1f} MiB)",
        f"RSS of the warm jail's processes: {before[1] / 1024:.1f} MiB before, "
        f"{after[1] / 1024:.1f} MiB after ({(after[1] - before[1]) / 1024:+.1f} MiB)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--commands", type=int, default=1000)
    parser.add_argument("--skip", action="append", default=[], help="leave out rows by name")
    args = parser.parse_args()
    # Installed packages run from bytecode; ours must too even when PYTHONDONTWRITEBYTECODE
    # is set (every CLI run is a fresh interpreter).
    compileall.compile_dir(str(Path(stockade.__file__).parent), quiet=1)
    project = Path(tempfile.mkdtemp(prefix="stockade-bench-", dir="/var/tmp"))
    os.chdir(project)
    rows: dict[str, Action | None] = {}
    with ExitStack() as stack:
        cold = stack.enter_context(sandbox(project, "bwrap", warm=False))
        rows["bare exec /bin/true"] = spawn(["/bin/true"])
        rows[BASELINE] = spawn(["bwrap", *RAW_MINIMAL, "--", "/bin/true"])
        rows["raw bwrap, stockade's flags + seccomp"] = raw_stockade_flags(cold, project)
        rows["sandlock (Landlock, in process)"] = sandlock_row(project)
        rows["Sandbox.run, bwrap, cold"] = lambda: cold.run(["/bin/true"])
        try:
            warm = stack.enter_context(sandbox(project, "bwrap", warm=True))
            rows["Sandbox.run, bwrap, warm"] = lambda: warm.run(["/bin/true"])
        except LookupError:
            rows["Sandbox.run, bwrap, warm"] = None
        session = stack.enter_context(
            Session(project, autonomy="yolo", backend="bwrap", limits=cold.limits)
        )
        rows["Session.execute('/bin/true')"] = lambda: session.execute("/bin/true")
        capped = stack.enter_context(Session(project, autonomy="yolo", backend="bwrap"))
        rows["Session.execute, default limits (cgroups)"] = lambda: capped.execute("/bin/true")
        landlock_cold = stack.enter_context(sandbox(project, "landlock", warm=False))
        rows["Sandbox.run, landlock, cold"] = lambda: landlock_cold.run(["/bin/true"])
        try:
            landlock_warm = stack.enter_context(sandbox(project, "landlock", warm=True))
            rows["Sandbox.run, landlock, warm"] = lambda: landlock_warm.run(["/bin/true"])
        except LookupError:
            rows["Sandbox.run, landlock, warm"] = None
        if "mcp" not in args.skip:
            rows["MCP tools/call bash (round trip)"] = stack.enter_context(mcp_client(project))
        rows["stockade run -- true (CLI, no helper)"] = cli_without_helper(project)
        rows["stockade run -- true (CLI, run helper)"] = stack.enter_context(cli_action(project))
        for name in args.skip:
            rows.pop(name, None)
        samples = measure(rows, args.runs)
        baseline = statistics.median(samples[BASELINE])
        warm_session = getattr(session.sandbox, "warm", False)
        print(
            f"uid {os.geteuid()}, {args.runs} interleaved rounds, {os.uname().release}, "
            f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}; Session is "
            f"{'warm' if warm_session else 'cold'}"
        )
        print(f"| {'what':40s} | {'median ms':>9s} | {'p90 ms':>7s} | {'vs raw bwrap':>12s} |")
        print(f"|{'-' * 42}|{'-' * 11}|{'-' * 9}|{'-' * 14}|")
        for name, action in rows.items():
            if action is None or name not in samples:
                print(f"| {name:40s} | {'n/a':>9s} | {'n/a':>7s} | {'':>12s} |")
                continue
            median = statistics.median(samples[name])
            print(
                f"| {name:40s} | {median:9.2f} | {p90(samples[name]):7.2f} | "
                f"{median / baseline:11.2f}x |"
            )
        if args.commands:
            print()
            for line in many_commands(session, args.commands):
                print(line)


if __name__ == "__main__":
    main()
