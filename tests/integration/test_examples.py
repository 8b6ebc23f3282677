"""The sample agent loop in examples/ runs end to end, through the library and through
``stockade mcp``, and both paths answer every call alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_loop.py"
# What the scripted model's 16 turns get back: ok (False) or an error result (True).
EXPECTED_ERRORS = [False, False, True, False, True, False, True, False, True, False, True,
                   False, True, False, True, False]  # fmt: skip


def transcript(project: Path, via: str) -> list[dict]:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--project", str(project), "--via", via, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("via", ["session", "mcp"])
def test_the_agent_loop_survives_every_bad_call(project: Path, via: str) -> None:
    turns = transcript(project, via)
    assert [turn["is_error"] for turn in turns] == EXPECTED_ERRORS
    by_call = {json.dumps(turn["call"]): turn["text"] for turn in turns}
    assert "hello from the agent" in by_call[json.dumps({"command": "cat notes.txt"})]
    assert "hard deny" in by_call[json.dumps({"command": "rm -rf /"})]
    escaped = by_call[json.dumps({"command": "touch ../escaped.txt"})]
    assert escaped.startswith("exit code: 1") and "shell: bash (" in escaped
    # judged on the host: the write inside happened, the one outside did not
    assert (project / "notes.txt").read_text() == "hello from the agent\n"
    assert not (project.parent / "escaped.txt").exists()
