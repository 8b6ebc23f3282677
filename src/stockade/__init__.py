"""stockade: make it safe to let AI coding agents run shell commands.

The public API is re-exported here and imported lazily (PEP 562), so that ``import stockade``
and the CLI start fast; type checkers see the real names through the TYPE_CHECKING block.
Submodules load on first attribute access too (``stockade.runner.run(...)`` after a bare
``import stockade``).
"""

from __future__ import annotations

from stockade._lazy import lazy_exports
from stockade.errors import (
    ConfigError,
    PermissionDenied,
    SandboxUnavailable,
    StockadeError,
    UsageError,
)

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: every command line imports this package
if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk import Assessment as Assessment
    from stockade.risk import Reason as Reason
    from stockade.risk import classify as classify
    from stockade.runner import RunResult as RunResult
    from stockade.runner import Sandbox as Sandbox
    from stockade.runner import run as run
    from stockade.session import AsyncSession as AsyncSession
    from stockade.session import ExecResult as ExecResult
    from stockade.session import Session as Session
    from stockade.settings import Settings as Settings
    from stockade.tiers import Tier as Tier
    from stockade.tool_calls import ToolResult as ToolResult

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "Assessment": "stockade.risk",
    "AsyncSession": "stockade.session",
    "ExecResult": "stockade.session",
    "Reason": "stockade.risk",
    "RunResult": "stockade.runner",
    "Sandbox": "stockade.runner",
    "Session": "stockade.session",
    "Settings": "stockade.settings",
    "Tier": "stockade.tiers",
    "ToolResult": "stockade.tool_calls",
    "classify": "stockade.risk",
    "run": "stockade.runner",
}

__all__ = [
    "ConfigError",
    "PermissionDenied",
    "SandboxUnavailable",
    "StockadeError",
    "UsageError",
    *_LAZY,
]


__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
