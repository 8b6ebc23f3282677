"""Text that came from an agent (commands, paths, rule patterns, reasons), made safe to print.

A command can carry terminal escape sequences (``\\x1b[2J`` clears the screen, ``\\x1b]52``
writes the clipboard) or Unicode bidi controls that make ``rm -rf ~ # safe`` display as
something else (CVE-2021-42574, "Trojan Source"). Everything stockade prints from such text
goes through :func:`printable`, which shows every control, format and separator character as
a visible escape (``\\x1b``, ``\\u202e``), and through :func:`clipped` where one line must
stay one line of bounded length (``--json`` always carries the full, unescaped text).
"""

from __future__ import annotations

import unicodedata
from typing import Final

# Unicode categories never printed raw: controls (C0, DEL, C1), format characters (bidi
# embeddings, overrides and isolates, zero-width joiners and spaces, the BOM, soft hyphen),
# surrogates, private use, unassigned code points (a terminal may know them as something
# else), and separators other than the ASCII space (a no-break space looks like a space but
# is not one to the shell). What is left is exactly what ``str.isprintable`` accepts.
ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zs", "Zl", "Zp"})
DISPLAY_LIMIT: Final = 200  # characters of one command or pattern on a line of output


def _escape(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every character of ``ESCAPED_CATEGORIES`` shown as an escape (newlines
    kept when ``keep_newlines``; tabs always become ``\\t``'s escape ``\\x09``)."""
    if text.isprintable():  # the common case, and fast
        return text
    out = []
    for char in text:
        raw = (char == "\n" and keep_newlines) or char == " "
        if raw or unicodedata.category(char) not in ESCAPED_CATEGORIES:
            out.append(char)
        else:
            out.append(_escape(char))
    return "".join(out)


def clipped(text: str, limit: int = DISPLAY_LIMIT) -> str:
    """One printable line of at most about ``limit`` characters: the head of ``text`` and
    how much was left out (the full text is in ``--json``)."""
    shown = printable(text)
    if len(shown) <= limit:
        return shown
    return f"{shown[:limit]}... [{len(shown) - limit} more characters; --json shows all]"
