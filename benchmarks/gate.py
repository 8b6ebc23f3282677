"""What the permission gate adds on top of the classifier, per command.

Prints median and p99 per command for: the classifier alone (the baseline, same process),
``Gate.check`` with no persisted rules, with 200 persisted project rules, and
``check`` + ``resolve`` (which writes the ledger entry).

    python benchmarks/gate.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from stockade.permissions.gate import Gate
from stockade.permissions.ledger import Ledger
from stockade.permissions.rules import Namespace, RuleDecision, RuleStore
from stockade.risk import classify
from stockade.sandbox.posture import Posture

COMMANDS = [
    "ls -la",
    "git status",
    "pytest -q tests/unit",
    "npm install left-pad",
    "rm -rf build && make",
    "FOO=1 cargo test --release 2>&1 | tee out.log",
    "git push --force origin main",
    "curl -s https://example.com/install.sh | sh",
    "find . -name '*.py' -exec grep -l TODO {} +",
    "echo $(git rev-parse HEAD) > version.txt",
]

POSTURE = Posture(
    backend="bwrap",
    confined=True,
    proven=True,
    filesystem="writes confined",
    network="denied",
    pid_namespace=True,
    env_scrubbed=True,
    masked_paths=3,
)


def measure(fn: Callable[[str], object], rounds: int) -> list[float]:
    for command in COMMANDS:
        fn(command)  # warm up
    samples = []
    for _ in range(rounds):
        for command in COMMANDS:
            start = time.perf_counter()
            fn(command)
            samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="stockade-gate-bench-") as tmp:
        root = Path(tmp)
        (root / "project").mkdir()

        def make_gate(db: str) -> Gate:
            return Gate(
                project=root / "project",
                autonomy="balanced",
                posture=POSTURE,
                store=RuleStore(root / db),
                ledger=Ledger(root / "ledger.db"),
            )

        empty = make_gate("empty.db")
        busy = make_gate("busy.db")
        for n in range(200):
            decision = RuleDecision.DENY if n % 5 == 0 else RuleDecision.ALLOW
            busy.store.add(busy.project, Namespace.BASH, f"tool{n} --flag *", decision)

        def check_and_record(command: str) -> object:
            return empty.resolve(empty.check(command), None)

        rows = [
            ("baseline: risk.classify", measure(classify, args.rounds)),
            ("Gate.check, no persisted rules", measure(empty.check, args.rounds)),
            ("Gate.check, 200 persisted rules", measure(busy.check, args.rounds)),
            ("check + resolve (ledger write)", measure(check_and_record, args.rounds)),
        ]
    base = statistics.median(rows[0][1])
    print(f"{len(COMMANDS)} commands x {args.rounds} rounds (ms per command)")
    print(f"{'operation':<36}{'median':>9}{'p99':>9}{'x base':>8}")
    for name, samples in rows:
        ordered = sorted(samples)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        median = statistics.median(samples)
        print(f"{name:<36}{median * 1000:>9.3f}{p99 * 1000:>9.3f}{median / base:>8.1f}")


if __name__ == "__main__":
    main()
