"""Results name the shell that ran the command, looked up again on every call."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from stockade import tool_calls
from stockade.session import Session
from tests.mcp_support import connect, text

pytestmark = pytest.mark.integration


def test_each_result_names_the_shell_found_for_that_call(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bash = shutil.which("bash", path=tool_calls.SHELL_SEARCH_PATH)
    assert bash is not None
    with Session(project, autonomy="yolo") as s:
        first = s.execute("echo $0")
        assert first.shell == tool_calls.Shell("bash", bash)
        assert first.stdout.strip() == bash and f"shell: bash ({bash})" in first.to_text()
        monkeypatch.setattr(tool_calls, "SHELL_SEARCH_PATH", "/nonexistent")  # bash is gone
        second = s.execute("echo $0")
        assert second.shell == tool_calls.Shell("sh", "/bin/sh")
        assert second.stdout.strip() == "/bin/sh"
        assert "shell: sh (/bin/sh; not bash: bash-only syntax fails)" in second.to_text()
        started = s.execute("true", run_in_background=True)
        assert started.shell == second.shell and "shell: sh" in started.to_text()


def test_a_missing_explicit_shell_is_one_clear_error(project: Path) -> None:
    from stockade.errors import UsageError

    with pytest.raises(UsageError, match="'no-such-shell' is not installed"):
        Session(project, shell="no-such-shell")


def test_mcp_results_name_the_shell(project: Path) -> None:
    async def main() -> str:
        async with connect(project) as client:
            return text(await client.call_tool("bash", {"command": "true"}))

    assert "\nshell: bash (" in anyio.run(main)
