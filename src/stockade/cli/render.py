"""Rendering for people: one rich Console setup for every command that prints with rich.

On a terminal rich wraps to the terminal's width. Piped (to a file, ``grep``, an agent), a line
stays one line: rich would otherwise hard-wrap at 80 columns and split paths and reasons in
two. Text that came from outside stockade (paths, commands, settings values) goes through
``safe`` before it is printed: its control and bidi characters are escaped
(:mod:`stockade.printable`) and rich markup in it (``[red]``) is shown, never interpreted.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console


def console(*, stderr: bool = False) -> Console:
    """A Console that never hard-wraps piped output."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    piped = not stream.isatty()
    return Console(highlight=False, soft_wrap=piped, stderr=stderr)


def safe(text: object) -> str:
    """``text`` for a rich markup string: printable, with its own brackets escaped."""
    from rich.markup import escape

    from stockade.printable import printable

    return escape(printable(str(text)))
