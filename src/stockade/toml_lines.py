"""Where each key and array element of a TOML document is written: ``tomllib`` parses values
but keeps no positions, and a settings error that cannot name its line is hard to fix.

``key_lines`` scans text that ``tomllib`` has already accepted, so it can be lenient about
syntax; it only has to track what it must skip (strings of all four kinds, comments, nested
arrays and inline tables) to see where each key path begins. Paths are tuples of key parts and
array indexes: ``("sandbox", "read_deny", 2)`` is the third element of ``sandbox.read_deny``,
whether it was written under ``[sandbox]``, as a dotted key or inside an inline table.
"""

from __future__ import annotations

from collections.abc import Mapping

KeyPath = tuple[str | int, ...]

_BARE_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}


def key_lines(text: str) -> dict[KeyPath, int]:
    """Map every key path (and array element) in ``text`` to its 1-based line number."""
    return _Scanner(text).scan()


def line_of(lines: Mapping[KeyPath, int], path: KeyPath) -> int | None:
    """The line of ``path``, else of its nearest written ancestor (a table header, say)."""
    for end in range(len(path), 0, -1):
        line = lines.get(path[:end])
        if line is not None:
            return line
    return None


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.lines: dict[KeyPath, int] = {}
        self.array_tables: dict[KeyPath, int] = {}

    # -- positions -------------------------------------------------------------------------

    @property
    def line(self) -> int:
        return self.text.count("\n", 0, self.pos) + 1

    def peek(self, count: int = 1) -> str:
        return self.text[self.pos : self.pos + count]

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def record(self, path: KeyPath, line: int) -> None:
        self.lines.setdefault(path, line)

    # -- whitespace and comments -----------------------------------------------------------

    def skip_blank(self, *, newlines: bool) -> None:
        """Skip spaces, tabs, comments and (when ``newlines``) line breaks."""
        while not self.at_end():
            char = self.peek()
            if char in " \t\r" or (newlines and char == "\n"):
                self.pos += 1
            elif char == "#":
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def skip_to_line_end(self) -> None:
        end = self.text.find("\n", self.pos)
        self.pos = len(self.text) if end < 0 else end + 1

    # -- document --------------------------------------------------------------------------

    def scan(self) -> dict[KeyPath, int]:
        table: KeyPath = ()
        while True:
            self.skip_blank(newlines=True)
            if self.at_end():
                return self.lines
            line = self.line
            if self.peek(2) == "[[":
                self.pos += 2
                name = tuple(self.key())
                index = self.array_tables.get(name, -1) + 1
                self.array_tables[name] = index
                self.record(name, line)
                table = (*name, index)
                self.record(table, line)
                self.pos = self.text.index("]]", self.pos) + 2
            elif self.peek() == "[":
                self.pos += 1
                table = tuple(self.key())
                self.record(table, line)
                self.pos = self.text.index("]", self.pos) + 1
            else:
                self.key_value(table)
            self.skip_to_line_end()

    def key_value(self, prefix: KeyPath) -> None:
        line = self.line
        parts = self.key()
        for depth in range(1, len(parts) + 1):
            self.record((*prefix, *parts[:depth]), line)
        self.skip_blank(newlines=False)
        self.pos += 1  # "="
        self.value((*prefix, *parts))

    def key(self) -> list[str]:
        """A dotted key: bare or quoted parts separated by dots (stops at anything else)."""
        parts: list[str] = []
        while True:
            self.skip_blank(newlines=False)
            char = self.peek()
            if char == '"':
                parts.append(self.basic_string())
            elif char == "'":
                parts.append(self.literal_string())
            else:
                start = self.pos
                while not self.at_end() and self.peek() in _BARE_KEY_CHARS:
                    self.pos += 1
                parts.append(self.text[start : self.pos])
            self.skip_blank(newlines=False)
            if self.peek() != ".":
                return parts
            self.pos += 1

    # -- values ----------------------------------------------------------------------------

    def value(self, path: KeyPath) -> None:
        self.skip_blank(newlines=False)
        char = self.peek()
        if self.peek(3) in ('"""', "'''"):
            self.multiline_string(self.peek(3))
        elif char == '"':
            self.basic_string()
        elif char == "'":
            self.literal_string()
        elif char == "[":
            self.array(path)
        elif char == "{":
            self.inline_table(path)
        else:  # number, bool, date: runs until a delimiter
            while not self.at_end() and self.peek() not in ",]}\n#":
                self.pos += 1

    def array(self, path: KeyPath) -> None:
        self.pos += 1  # "["
        index = 0
        while True:
            self.skip_blank(newlines=True)
            if self.at_end() or self.peek() == "]":
                self.pos += 1
                return
            self.record((*path, index), self.line)
            self.value((*path, index))
            index += 1
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.pos += 1

    def inline_table(self, path: KeyPath) -> None:
        self.pos += 1  # "{"
        while True:
            self.skip_blank(newlines=True)
            if self.at_end() or self.peek() == "}":
                self.pos += 1
                return
            self.key_value(path)
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.pos += 1

    def basic_string(self) -> str:
        self.pos += 1  # opening quote
        out: list[str] = []
        while not self.at_end():
            char = self.peek()
            self.pos += 1
            if char == '"':
                break
            if char == "\\":
                code = self.peek()
                self.pos += 1
                if code in ("u", "U"):
                    width = 4 if code == "u" else 8
                    out.append(chr(int(self.text[self.pos : self.pos + width], 16)))
                    self.pos += width
                else:
                    out.append(_ESCAPES.get(code, code))
            else:
                out.append(char)
        return "".join(out)

    def literal_string(self) -> str:
        end = self.text.index("'", self.pos + 1)
        content = self.text[self.pos + 1 : end]
        self.pos = end + 1
        return content

    def multiline_string(self, quote: str) -> None:
        self.pos += 3
        while True:
            end = self.text.index(quote, self.pos)
            if quote == '"""' and _escaped(self.text, end):
                self.pos = end + 1
                continue
            self.pos = end + 3
            while self.peek() == quote[0]:  # up to two quotes may close the content
                self.pos += 1
            return


def _escaped(text: str, index: int) -> bool:
    """True when the character at ``index`` follows an odd number of backslashes."""
    count = 0
    while index - count - 1 >= 0 and text[index - count - 1] == "\\":
        count += 1
    return count % 2 == 1
