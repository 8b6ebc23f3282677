"""The tree-sitter parser: one per thread, input checks, the repair loop for swallowed newlines,
and error reporting."""

from __future__ import annotations

import threading
from typing import Any

from stockade.shell.fast import fast_parse
from stockade.shell.model import (
    MAX_INPUT_BYTES,
    MAX_REPAIRS,
    ParsedCommand,
    Problem,
    Segment,
    Substitution,
)
from stockade.shell.syntax import (
    C_ERROR,
    C_OTHER,
    C_TOKEN,
    CATEGORY_BY_NAME,
    CONTROL_CHARS,
    NON_ASCII_BYTE,
    TOKEN_CATEGORY,
)
from stockade.shell.walk import Walk


class ShellParser:
    """A reusable tree-sitter-bash parser: create once, call :meth:`parse` many times.

    A tree-sitter Parser holds state, so one instance must not be shared between threads;
    :func:`parse` keeps one per thread.
    """

    def __init__(self, *, fast_path: bool = True) -> None:
        """``fast_path=False`` sends every command through tree-sitter (the tests compare the
        two paths)."""
        import tree_sitter
        import tree_sitter_bash

        self.fast_path = fast_path

        self.language = tree_sitter.Language(tree_sitter_bash.language())
        self.parser = tree_sitter.Parser(self.language)
        # kind ids are 16-bit (ERROR is 65535): a flat list indexed by id is the fastest map
        categories = [C_OTHER] * 65536
        categories[65535] = C_ERROR
        for kind_id in range(self.language.node_kind_count):
            name = self.language.node_kind_for_id(kind_id)
            if name is None:
                continue
            if self.language.node_kind_is_named(kind_id):
                categories[kind_id] = CATEGORY_BY_NAME.get(name, C_OTHER)
            else:
                categories[kind_id] = TOKEN_CATEGORY.get(name, C_TOKEN)
        self._categories = categories

    def parse(self, command: str, *, depth: int = 0, fast_path: bool = True) -> ParsedCommand:
        """Parse ``command`` into segments. Never raises: problems are returned as data.

        ``depth`` is the substitution depth the command is nested at (for ``sh -c 'code'``
        analysed as part of an outer command).
        """
        try:
            return self._parse(command, depth, fast_path)
        except RecursionError:
            return ParsedCommand(
                command, (), (Problem("parse.too-deep", "command nested too deeply", ""),)
            )
        except Exception as error:  # pragma: no cover - last line of defence: never raise
            return ParsedCommand(
                command,
                (),
                (Problem("parse.internal", f"parser failed: {type(error).__name__}", ""),),
            )

    def _parse(self, command: str, depth: int, fast_path: bool = True) -> ParsedCommand:
        if not isinstance(command, str):
            return ParsedCommand(
                repr(command), (), (Problem("parse.not-text", "command is not a string", ""),)
            )
        if self.fast_path and fast_path:
            fast = fast_parse(command, depth)
            if fast is not None:
                return fast
        try:
            srcb = command.encode("utf-8")
        except UnicodeEncodeError:
            return ParsedCommand(
                command,
                (),
                (Problem("parse.invalid-text", "command is not valid UTF-8 text", ""),),
            )
        if len(srcb) > MAX_INPUT_BYTES:
            return ParsedCommand(
                command,
                (),
                (
                    Problem(
                        "parse.too-long",
                        f"command is {len(srcb)} bytes, over the {MAX_INPUT_BYTES}-byte limit",
                        command[:80],
                    ),
                ),
            )
        control = CONTROL_CHARS.search(command)
        if control is not None:
            return ParsedCommand(
                command,
                (),
                (
                    Problem(
                        "parse.control-char",
                        f"control character {control.group()!r} in the command (bash and the "
                        "parser may split it differently)",
                        command[max(0, control.start() - 20) : control.end() + 20],
                    ),
                ),
            )
        src = command
        for _ in range(MAX_REPAIRS + 1):
            result, repairs = self._parse_once(src, srcb, depth)
            if not repairs:
                return result._replace(source=command) if src is not command else result
            # replace each swallowed newline by `;` (same length: all offsets stay valid)
            buffer = bytearray(srcb)
            for offset in repairs:
                buffer[offset] = 0x3B
            srcb = bytes(buffer)
            src = srcb.decode("utf-8")
        return ParsedCommand(
            command,
            (),
            (Problem("parse.misparse", "could not split the command into lines reliably", ""),),
        )

    def _reparse(self, code: str, depth: int) -> ParsedCommand:
        """Parse code found inside a parsed command (backticks in a heredoc)."""
        return self._parse(code, depth)

    def _parse_once(self, src: str, srcb: bytes, depth: int) -> tuple[ParsedCommand, list[int]]:
        # The C scanner never sees a non-ASCII byte (tree-sitter-bash #337, see module doc);
        # offsets are unchanged, so every text is still sliced from the original bytes.
        scanned = srcb if len(src) == len(srcb) else NON_ASCII_BYTE.sub(b"%", srcb)
        # a trailing newline never changes what bash runs and avoids the slow GLR path
        tree = self.parser.parse(scanned if scanned.endswith(b"\n") else scanned + b"\n")
        root = tree.root_node
        walk = Walk(src, srcb, self._categories, self._reparse)
        if root.has_error:
            _describe_error(walk, root)
            return ParsedCommand(src, (), tuple(walk.problems)), []
        out: list[Segment] = []
        walk.container(root, out, (), depth, 0, None)
        if walk.repairs:
            return ParsedCommand(src, ()), walk.repairs
        if walk.pipelines:
            _renumber_pipelines(out)
        return ParsedCommand(src, tuple(out), tuple(walk.problems), walk.functions), []


def _renumber_pipelines(out: list[Segment]) -> None:
    """Number pipelines 1, 2, … in source order within each segment list (the walk numbers
    them in tree order, across substitutions): ids only mean something within one list."""
    numbers: dict[int, int] = {}
    for index, segment in enumerate(out):
        if segment.pipeline:
            number = numbers.setdefault(segment.pipeline, len(numbers) + 1)
            if number != segment.pipeline:
                segment = out[index] = segment._replace(pipeline=number)
        if segment.substitutions and any(
            inner.pipeline for sub in segment.substitutions for inner in sub.segments
        ):
            subs = []
            for sub in segment.substitutions:
                inner_segments = list(sub.segments)
                _renumber_pipelines(inner_segments)
                subs.append(Substitution(sub.kind, tuple(inner_segments)))
            out[index] = segment._replace(substitutions=tuple(subs))


def _describe_error(walk: Walk, root: Any) -> None:
    """Report a parse error, naming the first ERROR/MISSING node so the reason says where."""
    cursor = root.walk()
    for _ in range(100_000):
        node = cursor.node
        if node is not None and (node.is_error or node.is_missing):
            what = f"missing {node.type!r}" if node.is_missing else "unexpected text"
            walk.problem(
                "parse.error",
                f"the command does not parse as bash ({what} at byte {node.start_byte})",
                max(0, node.start_byte - 20),
                node.end_byte + 20,
            )
            return
        if cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                break
        else:
            continue
        break
    walk.problem("parse.error", "the command does not parse as bash", 0, 80)


_LOCAL = threading.local()


def get_parser() -> ShellParser:
    """The calling thread's shared parser (created on first use)."""
    parser: ShellParser | None = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = ShellParser()
        _LOCAL.parser = parser
    return parser


def parse(command: str, *, depth: int = 0, fast_path: bool = True) -> ParsedCommand:
    """Parse ``command`` with the thread's shared parser. Never raises. ``fast_path=False``
    skips the fast path (for a caller that already tried :func:`fast_parse`)."""
    try:
        parser = get_parser()
    except Exception as error:  # pragma: no cover - tree-sitter missing or broken install
        return ParsedCommand(
            command,
            (),
            (Problem("parse.unavailable", f"tree-sitter-bash is unavailable: {error}", ""),),
        )
    return parser.parse(command, depth=depth, fast_path=fast_path)
