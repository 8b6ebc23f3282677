"""The file tools of a ``Session``: read_file, list_dir, write_file, edit_file.

They run outside the jail, in stockade's own process, so each one is checked against the
sandbox's policy first (``file_tools.PathGuard``: what the jail could read or write), then
authorised by the gate like a command, and recorded in the ledger. A write or edit of an
existing file needs an unchanged earlier read in the same session (its digest), re-checked
under the open directory just before the write.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from stockade.errors import StockadeError, UsageError
from stockade.permissions import actions
from stockade.permissions.actions import ActionPlan, Effect
from stockade.permissions.prompt import PromptFunction
from stockade.permissions.verdict import Decision
from stockade.session_core import SESSION_PROMPT, SessionCore

if TYPE_CHECKING:
    from stockade.file_tools import DirListing, FileChange, FileContent, WriteTarget


class FileTools(SessionCore):
    """A session's file tools (mixed into ``Session``)."""

    def read_file(
        self,
        path: str | os.PathLike[str],
        *,
        offset: int = 1,
        limit: int | None = None,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> FileContent:
        """Read lines ``offset``.. (1-based; ``limit`` lines, at most MAX_READ_BYTES) of a file
        the sandbox could read. Records the whole file's digest: write/edit need it."""
        from stockade.file_tools import is_secret, read_lines

        self._require_open()
        self._require_file_tools("read_file")
        real = self._refusing("read_file", path, (Effect.READ,), lambda: self.guard.readable(path))
        plan = actions.read_file(self.guard.shown(real), secret=is_secret(real))
        decision = self._authorise(plan, prompt)
        started = time.monotonic()
        try:
            content = read_lines(self.guard, real, offset=offset, limit=limit)
        except StockadeError as error:
            self._finish_entry(decision, error.exit_code, time.monotonic() - started)
            raise
        with self._lock:
            self._digests[real] = content.digest
        self._finish_entry(decision, 0, time.monotonic() - started)
        return content

    def list_dir(
        self,
        path: str | os.PathLike[str] = ".",
        *,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> DirListing:
        """The entries of a directory the sandbox could read (at most MAX_LIST_ENTRIES)."""
        from stockade.file_tools import list_directory

        self._require_open()
        self._require_file_tools("list_dir")
        real = self._refusing("list_dir", path, (Effect.READ,), lambda: self.guard.readable(path))
        decision = self._authorise(actions.list_dir(self.guard.shown(real)), prompt)
        started = time.monotonic()
        try:
            listing = list_directory(self.guard, real)
        except StockadeError as error:
            self._finish_entry(decision, error.exit_code, time.monotonic() - started)
            raise
        self._finish_entry(decision, 0, time.monotonic() - started)
        return listing

    def write_file(
        self,
        path: str | os.PathLike[str],
        content: str,
        *,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> FileChange:
        """Create a file, or replace one this session read and that is unchanged since.

        Only inside a writable root, never on a protected path; missing parent directories
        are created. Replacing content with less of it is a truncation (tier high)."""
        if not isinstance(content, str):
            raise UsageError("content must be a string", fix="pass the new file content as text")
        self._require_open()
        self._require_file_tools("write_file")
        target = self._write_target("write_file", path)
        data = content.encode("utf-8")
        existing = self._current(target)
        if not target.protected:
            self._require_fresh(target, existing)
        truncates = existing is not None and len(data) < len(existing)
        plan = actions.write_file(target.shown, truncates=truncates, protected=target.protected)
        decision = self._authorise(plan, prompt)
        return self._commit(target, existing, data, decision, replacements=0)

    def edit_file(
        self,
        path: str | os.PathLike[str],
        old_string: str,
        new_string: str,
        *,
        replace_all: bool = False,
        prompt: PromptFunction | str | None = SESSION_PROMPT,
    ) -> FileChange:
        """Replace ``old_string`` with ``new_string`` in a file this session read (and that is
        unchanged since). ``old_string`` must occur exactly once unless ``replace_all``."""
        if not isinstance(old_string, str) or not isinstance(new_string, str):
            raise UsageError("old_string and new_string must be strings", fix="pass text")
        if not old_string:
            raise UsageError("old_string is empty", fix="give the exact text to replace")
        if old_string == new_string:
            raise UsageError("old_string and new_string are the same", fix="nothing to change")
        self._require_open()
        self._require_file_tools("edit_file")
        target = self._write_target("edit_file", path)
        existing = self._current(target)
        if existing is None:
            raise UsageError(
                f"{target.shown} does not exist", fix="create it with write_file instead"
            )
        if not target.protected:
            self._require_fresh(target, existing)
        try:
            text = existing.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(
                f"{target.shown} is not UTF-8 text", fix="edit text files only"
            ) from None
        count = text.count(old_string)
        if count == 0:
            raise UsageError(
                f"old_string was not found in {target.shown}",
                fix="copy the exact text (whitespace included) from a fresh read_file",
            )
        if count > 1 and not replace_all:
            raise UsageError(
                f"old_string occurs {count} times in {target.shown}",
                fix="include more surrounding text to make it unique, or pass replace_all=True",
            )
        updated = text.replace(old_string, new_string, -1 if replace_all else 1)
        effects = (
            (Effect.FILE_WRITE, Effect.PROTECTED_PATH) if target.protected else (Effect.FILE_WRITE,)
        )
        plan = ActionPlan(f"edit_file {target.shown}", effects, None, (target.shown,))
        decision = self._authorise(plan, prompt)
        replaced = count if replace_all else 1
        return self._commit(target, existing, updated.encode("utf-8"), decision, replaced)

    # -- helpers -------------------------------------------------------------------------

    def _write_target(self, action: str, path: str | os.PathLike[str]) -> WriteTarget:
        return self._refusing(action, path, (Effect.FILE_WRITE,), lambda: self.guard.writable(path))

    def _current(self, target: WriteTarget) -> bytes | None:
        from stockade.file_tools import Beneath

        with Beneath(target, create=False) as place:
            return place.read()

    def _require_fresh(self, target: WriteTarget, existing: bytes | None) -> None:
        """An existing file may only be replaced after this session read it, unchanged."""
        from stockade.file_tools import digest

        if existing is None:
            return
        with self._lock:
            known = self._digests.get(target.real)
        if known is None:
            raise UsageError(
                f"{target.shown} exists and was not read in this session",
                fix="read_file it first: write/edit only change files read in this session",
            )
        if digest(existing) != known:
            raise UsageError(
                f"{target.shown} changed since this session read it",
                fix="read_file it again, then retry with its current content in mind",
            )

    def _commit(
        self,
        target: WriteTarget,
        expected: bytes | None,
        data: bytes,
        decision: Decision,
        replacements: int,
    ) -> FileChange:
        """Write, re-checking under the open directory that nothing changed meanwhile (a
        prompt can take a while), then remember the new digest."""
        from stockade.file_tools import Beneath, FileChange, digest

        started = time.monotonic()
        try:
            with Beneath(target, create=True) as place:
                if place.read() != expected:
                    raise UsageError(
                        f"{target.shown} changed while the write was being approved",
                        fix="read_file it again, then retry",
                    )
                place.replace(data)
        except StockadeError as error:
            self._finish_entry(decision, error.exit_code, time.monotonic() - started)
            raise
        new_digest = digest(data)
        with self._lock:
            self._digests[target.real] = new_digest
        self._finish_entry(decision, 0, time.monotonic() - started)
        return FileChange(
            path=target.shown,
            real_path=target.real,
            created=expected is None,
            size=len(data),
            replacements=replacements,
            digest=new_digest,
        )

    def _require_file_tools(self, action: str) -> None:
        if self.sandbox.review is not None:
            raise UsageError(
                f"{action} is off in a review workspace: the file tools run outside the jail and "
                "would touch the project itself, not the review layer",
                fix="use the bash tool (cat, sed -i, a heredoc): its changes land in the layer",
            )
