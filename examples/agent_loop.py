"""A complete agent loop without a model SDK: a scripted "model" sends tool calls - good ones,
and the bad ones real models send - and reads back what stockade answers.

The loop is the part you keep: give the model ``tool_schema()``, pass each tool call to
``Session.handle_tool_call`` verbatim, send ``result.text`` back. Nothing a model sends can
end the loop: an unknown argument, a wrong type, a cwd outside the project, a denied command
- each comes back as an error result that says what to change, and this model, like a real
one, corrects itself and carries on.

    python examples/agent_loop.py --project /tmp/demo            # through the library
    python examples/agent_loop.py --project /tmp/demo --via mcp  # through `stockade mcp`

``--json`` prints the transcript as JSON (the tests read it). Nobody is asked anything here
(headless, autonomy balanced): whatever would need a person's approval is denied, with the fix.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# One step of the script: what the model sends, and - if stockade answers with an error - the
# corrected call it sends next (None: it gives up on that step and moves on).
SCRIPT: list[tuple[Any, Any]] = [
    ({"command": "ls -la", "description": "look around"}, None),
    ({"command": "echo 'hello from the agent' > notes.txt"}, None),
    ({"command": "cat notes.txt", "writable": ["/"]}, {"command": "cat notes.txt"}),
    ({"cwd": "."}, {"command": "pwd"}),  # forgot the command
    ({"command": ["ls", "-l"]}, {"command": "ls -l"}),  # an array instead of a string
    ({"command": "ls", "cwd": "/etc"}, {"command": "ls", "cwd": "."}),  # outside the roots
    ({"command": "ls", "timeout": "30"}, {"command": "ls", "timeout": 30}),  # a string number
    ({"command": "rm -rf /"}, None),  # a hard deny: the model gives up
    ({"command": "touch ../escaped.txt"}, None),  # runs; the sandbox refuses the write
    ("ls", {"command": "ls"}),  # not even an object
]


@dataclass
class Turn:
    """One tool call and what came back."""

    call: Any
    is_error: bool
    text: str


class ScriptedModel:
    """Stands in for the model: it sends the next call of its script, and when the last
    answer was an error, the corrected call instead (as a model would after reading it)."""

    def __init__(self, script: list[tuple[Any, Any]]) -> None:
        self._steps: Iterator[tuple[Any, Any]] = iter(script)
        self._correction: Any = None

    def next_call(self, last: Turn | None) -> Any:
        if last is not None and last.is_error and self._correction is not None:
            call, self._correction = self._correction, None
            return call
        step = next(self._steps, None)
        if step is None:
            return None
        call, self._correction = step
        return call


def run_with_session(project: Path) -> list[Turn]:
    """The loop on the library: ``Session.handle_tool_call`` never raises for a model's call."""
    from stockade import Session

    turns: list[Turn] = []
    model = ScriptedModel(SCRIPT)
    with Session(project, autonomy="balanced", prompt=None) as session:
        while (call := model.next_call(turns[-1] if turns else None)) is not None:
            result = session.handle_tool_call(call)
            turns.append(Turn(call, result.is_error, result.text))
    return turns


def run_with_mcp(project: Path) -> list[Turn]:
    """The same loop through ``stockade mcp``, with the official MCP SDK's client."""
    import anyio
    from mcp.client.client import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "stockade", "mcp", "--project", str(project)),
            *("--headless", "--autonomy", "balanced"),
        ],
        cwd=str(project),
    )

    async def loop() -> list[Turn]:
        turns: list[Turn] = []
        model = ScriptedModel(SCRIPT)
        async with Client(server) as client:
            while (call := model.next_call(turns[-1] if turns else None)) is not None:
                # MCP carries arguments as an object; a model that sends anything else is
                # answered by the client library, so send it as the one argument it got wrong
                arguments = call if isinstance(call, dict) else {"arguments": call}
                result = await client.call_tool("bash", arguments)
                text = "\n".join(getattr(part, "text", "") for part in result.content)
                turns.append(Turn(call, bool(result.is_error), text))
        return turns

    return anyio.run(loop)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--project", type=Path, default=Path.cwd())
    parser.add_argument("--via", choices=("session", "mcp"), default="session")
    parser.add_argument("--json", action="store_true", help="print the transcript as JSON")
    options = parser.parse_args()
    run = run_with_session if options.via == "session" else run_with_mcp
    turns = run(options.project.resolve())
    if options.json:
        print(json.dumps([asdict(turn) for turn in turns], indent=2))
        return 0
    for number, turn in enumerate(turns, 1):
        mark = "error" if turn.is_error else "ok"
        print(f"--- {number}. model sends {json.dumps(turn.call)} -> {mark}")
        print(turn.text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
