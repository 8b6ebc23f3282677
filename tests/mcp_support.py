"""Drive a real ``stockade mcp`` subprocess with the ``mcp`` SDK's own client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

# "auto" negotiates the 2026-07-28 protocol (questions come back as InputRequiredResult);
# "legacy" the initialize handshake (questions are elicitation/create requests mid-call).
MODES = ("auto", "legacy")


@dataclass
class Elicitor:
    """An elicitation callback that answers ``decision`` (or declines) and records questions."""

    decision: str = "allow_once"
    action: str = "accept"
    asked: list[types.ElicitRequestFormParams] = field(default_factory=list)

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        content = {"decision": self.decision} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


@asynccontextmanager
async def connect(
    project: Path,
    *,
    mode: str = "auto",
    elicit: Elicitor | None = None,
    args: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "stockade", "mcp", "--project", str(project), *args],
        env=env if env is not None else dict(os.environ),
        cwd=str(project),
    )
    async with Client(params, elicitation_callback=elicit, mode=mode) as client:
        yield client


def text(result: types.CallToolResult) -> str:
    assert result.content and isinstance(result.content[0], types.TextContent)
    return result.content[0].text
