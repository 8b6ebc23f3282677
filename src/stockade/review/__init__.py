"""Review workspaces: every change a command makes to the project lands in a copy-on-write
layer (a *changeset*) that the user lists, diffs, applies or discards.

``sandbox/overlay.py`` mounts the layer; this package reads it (``scan``), keeps it
(``store``), judges what the project held (``records``), shows it (``diff``), applies it with
care (``apply``) and ties it to a Sandbox (``workspace``). ``docs/review.md`` has the design.
"""

from __future__ import annotations

from stockade.review.apply import ApplyConflict, ApplyFailed, ApplyResult
from stockade.review.scan import Change

__all__ = ["ApplyConflict", "ApplyFailed", "ApplyResult", "Change"]
