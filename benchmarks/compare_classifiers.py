"""Compare two classifiers: this checkout's and the one at a git ref (default ``main``).

Every command of the test corpus (``corpus.py``), every command string in the classifier's
tests, and a large generated set (every known program with its own options, paths, secrets,
URLs, wrappers and pipes, seeded so that runs repeat) is classified by both; the script prints
how many changed tier, a table of old → new tiers, and every change with both sets of rules.
Each classifier runs in its own process (the ref's ``src/stockade`` is exported with ``git
archive``), so the two never share a module.

    python benchmarks/compare_classifiers.py [--base main] [--generated 20000] [--show 400]
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from corpus import corpus  # noqa: E402

#: Run in each child: classify the commands on stdin, print [tier, rule ids] per command.
CHILD = """
import json, sys
from stockade.risk import classify
commands = json.load(sys.stdin)
out = []
for command in commands:
    a = classify(command)
    out.append([a.tier.label, sorted(a.rule_ids)])
json.dump(out, sys.stdout)
"""
TEST_FILES = sorted((ROOT / "tests" / "unit").glob("test_risk*.py"))

PATHS = [
    "src/main.py",
    "README.md",
    ".env",
    ".env.example",
    "~/.ssh/id_rsa",
    "~/.aws/credentials",
    "/etc/passwd",
    "/etc/shadow",
    "/tmp/x",
    "/dev/sda",
    "/dev/null",
    "~/notes.txt",
    "build",
    "dist/",
    ".git/hooks/pre-commit",
    ".bashrc",
    ".vscode/settings.json",
    "-",
    "$OUT",
    "*.py",
    "key.pem",
    "/",
    "~",
    ".",
    "..",
    "https://example.com/install.sh",
    "host:/srv/x",
    "x.tgz",
]
VALUES = ["5", "x", "'a b'", "main", "HEAD~1", "origin", "json", "'{print $1}'", "s/a/b/", "-"]
SHAPES = [
    "{cmd}",
    "{cmd} | sh",
    "cd /tmp && {cmd}",
    "timeout 5 {cmd}",
    "{cmd} > out.txt",
    "bash -c '{cmd}'",
    "{cmd} && sh x.sh",
    "echo $({cmd})",
    "sudo {cmd}",
    "xargs {cmd}",
]


def test_commands() -> list[str]:
    """Every string that is the first item of a tuple or an item of a list in the tests."""
    found: list[str] = []
    for path in TEST_FILES:
        for node in ast.walk(ast.parse(path.read_text())):
            items = node.elts if isinstance(node, ast.List | ast.Tuple) else []
            if isinstance(node, ast.Tuple):
                items = items[:1]
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value:
                    found.append(item.value)
    return found


def generated(count: int, seed: int = 7) -> list[str]:
    """Commands made of every known program with its own options (from the specs)."""
    from stockade.risk.model import Spec
    from stockade.risk.programs import SPECS

    rnd = random.Random(seed)
    names = sorted(SPECS)
    options: dict[str, list[str]] = {}
    for name in names:
        spec: Spec = SPECS[name]
        spellings = [n for flag in (spec.flags or ()) for n in flag.names]
        if spec.subcommands:
            spellings += [key for key in spec.subcommands if key not in ("", "*")]
        options[name] = spellings or ["-x"]
    out: list[str] = []
    for _ in range(count):
        name = rnd.choice(names)
        words = [name]
        for _ in range(rnd.randint(0, 4)):
            pick = rnd.random()
            if pick < 0.45:
                words.append(rnd.choice(options[name]))
            elif pick < 0.8:
                words.append(rnd.choice(PATHS))
            else:
                words.append(rnd.choice(VALUES))
        command = " ".join(words)
        out.append(rnd.choice(SHAPES).format(cmd=command) if rnd.random() < 0.3 else command)
    return out


def run(source: Path, commands: list[str]) -> list[list[object]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(commands),
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(source), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    result: list[list[object]] = json.loads(done.stdout)
    return result


def main() -> None:
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--base", default="main")
    options.add_argument("--generated", type=int, default=20000)
    options.add_argument("--show", type=int, default=400)
    arguments = options.parse_args()
    commands = list(
        dict.fromkeys([*corpus(1500), *test_commands(), *generated(arguments.generated)])
    )
    with tempfile.TemporaryDirectory() as temp:
        archive = Path(temp) / "base.tar"
        subprocess.run(
            ["git", "-C", str(ROOT), "archive", "-o", str(archive), arguments.base, "src/stockade"],
            check=True,
        )
        with tarfile.open(archive) as tar:
            tar.extractall(temp, filter="data")
        old = run(Path(temp) / "src", commands)
    new = run(ROOT / "src", commands)
    changes = [
        (command, before, after)
        for command, before, after in zip(commands, old, new, strict=True)
        if before[0] != after[0]
    ]
    print(f"{len(commands)} distinct commands, {len(changes)} changed tier (base {arguments.base})")
    print()
    print("| old → new | commands |")
    print("|---|---|")
    for (before, after), number in sorted(Counter((b[0], a[0]) for _, b, a in changes).items()):
        print(f"| {before} → {after} | {number} |")
    print()
    for command, before, after in sorted(changes, key=lambda c: (c[1][0], c[2][0], c[0]))[
        : arguments.show
    ]:
        print(f"{before[0]:>11} → {after[0]:<11} {command!r}")
        print(f"{'':>26}was {', '.join(before[1])}; now {', '.join(after[1])}")


if __name__ == "__main__":
    main()
