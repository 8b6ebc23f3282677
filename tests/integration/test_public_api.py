"""The package's public API as the README shows it: a bare ``import stockade`` is enough."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def python(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60
    )


def test_the_readme_example_runs_after_a_bare_import(project: Path) -> None:
    code = (
        "import stockade\n"
        f"result = stockade.runner.run(['pwd'], project={str(project)!r}, timeout=600)\n"
        "print(result.exit_code, result.stdout.strip(), result.posture.summary()[:5])\n"
    )
    done = python(code, project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", str(project), "bwrap"]


def test_sandbox_and_run_are_exported(project: Path) -> None:
    code = (
        "import stockade\n"
        "from stockade import Sandbox, run, RunResult, ToolResult\n"
        "assert Sandbox is stockade.runner.Sandbox and run is stockade.runner.run\n"
        f"with Sandbox.for_project({str(project)!r}) as box:\n"
        "    print(box.run(['true']).exit_code, isinstance(run(['true']), RunResult))\n"
        "print(sorted({'Sandbox', 'run', 'ToolResult'} - set(stockade.__all__)))\n"
    )
    done = python(code, project)
    assert (done.returncode, done.stdout) == (0, "0 True\n[]\n"), done.stderr


def test_unknown_names_are_still_attribute_errors(project: Path) -> None:
    done = python("import stockade\nstockade.no_such_thing", project)
    assert "has no attribute 'no_such_thing'" in done.stderr
