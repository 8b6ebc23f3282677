"""A warm jail execs a plain ``bash -c`` command itself (``sandbox/bash_direct.py``): what
the program gets, and what happens when it cannot run, must be exactly what bash gives.

Each command runs twice in the same warm jail: as ``bash -c CMD`` (exec'd directly when
plain) and as ``bash -c CMD BASH``, which only sets ``$0`` to what it is anyway and is never
exec'd directly, so bash itself runs it. Output, errors and exit codes must be the same (the
order of the environment aside: bash passes on its variables in its own order)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from stockade.runner import RunResult, Sandbox, warm_enabled
from stockade.sandbox.bash_direct import SYSTEM_BASH, direct_exec
from stockade.sandbox.limits import Limits
from stockade.sandbox.policy import PolicyRequest
from stockade.sandbox.warm_bwrap import command_environment

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not warm_enabled(), reason="STOCKADE_WARM=0: the cold path is forced"),
]

BASH = SYSTEM_BASH[-1]
COMMANDS = [
    "env",
    "printenv SHLVL _ PWD",
    "cat /proc/self/cmdline",
    "ls -la /nonexistent-dir",
    "no-such-program-4711 --flag",
    "./noshebang one two",
    "./not-executable",
    "./src",
    "src/tool arg",
    "/usr/bin/env -u PWD /usr/bin/printenv PWD",
]


@pytest.fixture(params=[None, "4"], ids=["no-shlvl", "shlvl-4"])
def sandbox(
    project: Path, backend: str, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[Sandbox]:
    """A warm Sandbox whose commands get no SHLVL (the default), or one of 4."""
    if request.param is None:
        monkeypatch.delenv("SHLVL", raising=False)
    else:
        monkeypatch.setenv("SHLVL", request.param)
    (project / "src").mkdir()
    (project / "noshebang").write_text('echo "script $0 $*"\n')
    (project / "noshebang").chmod(0o755)
    (project / "not-executable").write_text("echo no\n")
    (project / "src" / "tool").write_text("#!/bin/sh\necho tool $1\n")
    (project / "src" / "tool").chmod(0o755)
    policy = PolicyRequest(project=project, cwd=project, env_passthrough=("SHLVL",))
    limits = Limits(memory_max_bytes=None, pids_max=None)
    with Sandbox(policy, backend=backend, limits=limits, warm=True) as box:
        box.run(["true"])  # (the backend's one-time notice goes with the first command)
        yield box


def outcome(result: RunResult) -> tuple[int, list[str], str]:
    return result.exit_code, sorted(result.stdout.splitlines()), result.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_plain_command_gets_what_bash_would_give_it(sandbox: Sandbox, command: str) -> None:
    assert direct_exec([BASH, "-c", command], command_environment(sandbox.policy)) is not None
    direct = sandbox.run([BASH, "-c", command])
    through_bash = sandbox.run([BASH, "-c", command, BASH])
    assert direct.warm and through_bash.warm
    assert outcome(direct) == outcome(through_bash)


def test_from_a_subdirectory_too(sandbox: Sandbox, project: Path) -> None:
    runs = [sandbox.run([BASH, "-c", "env", *extra], cwd=project / "src") for extra in ([], [BASH])]
    assert outcome(runs[0]) == outcome(runs[1]) and "SHLVL=" in runs[0].stdout
