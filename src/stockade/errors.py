"""The exceptions stockade raises on purpose.

Every error carries a one-line message and, where there is one, the fix. The CLI prints both and
exits with the error's code; it never shows a traceback for these. Exit codes follow the
conventions of ``timeout``/``env``: 2 bad usage, 124 timed out, 125 refused to run.
"""

from __future__ import annotations


class StockadeError(Exception):
    """Base class: a message for the user and, optionally, how to fix it."""

    exit_code: int = 1

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return self.message if not self.fix else f"{self.message} (fix: {self.fix})"


class UsageError(StockadeError):
    """Bad input from the caller: flags, paths, arguments. Exit code 2."""

    exit_code = 2


class ConfigError(UsageError):
    """A settings file or variable is invalid; names the file, line and key where known."""


class SandboxUnavailable(StockadeError):
    """No backend can prove enforcement, so stockade refuses to run. Exit code 125."""

    exit_code = 125


class BackendUnavailable(SandboxUnavailable):
    """A backend cannot run on this machine at all (e.g. user namespaces are not permitted):
    ``auto`` may try the next one. Any other SandboxUnavailable from a backend that ran is a
    failed proof, and a refusal."""


class PermissionDenied(StockadeError):
    """The permission gate denied the command (or a prompt was refused). Exit code 126."""

    exit_code = 126
