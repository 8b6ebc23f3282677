"""The base of the tree walk: the state of one parse, how problems and dropped text are
recorded, and how nodes become shell words (quoting removed, substitutions collected)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from stockade.shell.model import (
    MAX_SUBSTITUTION_DEPTH,
    Feed,
    ParsedCommand,
    Problem,
    Segment,
    Substitution,
)
from stockade.shell.syntax import (
    BLANK_GAP,
    C_ANSI_C,
    C_CMD_SUB,
    C_CONCAT,
    C_DOLLAR,
    C_PROC_SUB,
    C_RAW_STRING,
    C_STRING,
    C_STRING_CONTENT,
    C_TRANSLATED,
    C_WORD,
    EXPANSION_START,
    ONLY_CONTINUATIONS,
    REDIRECTS,
    STATEMENTS,
    UNQUOTED_EXPANDS,
    WORD_SPECIAL,
    decode_ansi_c,
    unescape_double_quoted,
    unescape_unquoted,
)


class WordWalk:
    """State of one parse: source text, problems found, counters; nodes to words."""

    __slots__ = (
        "ascii",
        "cat",
        "functions",
        "pipelines",
        "plain",
        "problems",
        "repairs",
        "reparse",
        "src",
        "srcb",
    )

    def __init__(
        self,
        src: str,
        srcb: bytes,
        cat: list[int],
        reparse: Callable[[str, int], ParsedCommand] | None = None,
    ) -> None:
        self.reparse = reparse
        self.src = src
        self.srcb = srcb
        self.ascii = len(src) == len(srcb)
        # no backslash, glob or brace anywhere → words need no unescaping or expansion checks
        self.plain = WORD_SPECIAL.search(src) is None
        self.cat = cat
        self.problems: list[Problem] = []
        self.functions: dict[str, tuple[str, ...]] = {}
        self.pipelines = 0
        self.repairs: list[int] = []

    def text(self, start: int, end: int) -> str:
        if self.ascii:
            return self.src[start:end]
        return self.srcb[start:end].decode("utf-8", "replace")

    def node_text(self, node: Any) -> str:
        if self.ascii:
            return self.src[node.start_byte : node.end_byte]
        return self.srcb[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def problem(self, code: str, detail: str, start: int, end: int) -> None:
        snippet = self.text(start, end)
        if len(snippet) > 120:
            snippet = snippet[:117] + "..."
        self.problems.append(Problem(code, detail, snippet))

    def problem_at(self, code: str, detail: str, node: Any) -> None:
        """``problem`` for the text of one node."""
        self.problem(code, detail, node.start_byte, node.end_byte)

    def gap(self, start: int, end: int, in_command: bool) -> bool:
        """Check the text between two sibling nodes (called unless it is one blank).

        Returns True when the siblings are glued into one word (no gap, or only line
        continuations). A raw newline inside a command means the grammar merged two lines
        (recorded for repair); any other non-blank text was dropped by the grammar.
        """
        if end <= start:
            return True
        gap = self.srcb[start:end]
        if BLANK_GAP.fullmatch(gap) is None:
            self.problem(
                "parse.dropped-text",
                "the parser skipped part of the command, so what bash runs is unknown",
                start,
                end,
            )
            return False
        if ONLY_CONTINUATIONS.fullmatch(gap) is not None:
            return True
        if in_command and b"\n" in gap:
            index = gap.replace(b"\\\n", b"  ").find(b"\n")
            if index >= 0:
                self.repairs.append(start + index)
        return False

    def split_words(self, nodes: list[Any]) -> list[list[Any]]:
        """Group sibling nodes into shell words: nodes glued without blanks form one word."""
        groups: list[list[Any]] = [[nodes[0]]]
        for previous, current in itertools.pairwise(nodes):
            if self.gap(previous.end_byte, current.start_byte, False):
                groups[-1].append(current)
            else:
                if b"\n" in self.srcb[previous.end_byte : current.start_byte].replace(b"\\\n", b""):
                    # the grammar merged the next line into this redirect (#316)
                    self.problem(
                        "parse.misparse",
                        "a redirect target runs into the next line (the parser merged lines)",
                        previous.start_byte,
                        current.end_byte,
                    )
                groups.append([current])
        return groups

    def word(self, node: Any, subs: list[Substitution], depth: int) -> tuple[str, bool]:
        """Unquote one word-like node; returns (text, static)."""
        cat = self.cat[node.kind_id]
        if cat == C_WORD:
            raw = self.node_text(node)
            if self.plain:
                return raw, True
            return unescape_unquoted(raw), UNQUOTED_EXPANDS.search(raw) is None
        if cat == C_RAW_STRING:
            return self.node_text(node)[1:-1], True
        if cat == C_STRING:
            return self.double_quoted(node, subs, depth)
        if cat == C_TRANSLATED:
            return self.word_parts([c for c in node.children if c.is_named], subs, depth)
        if cat == C_ANSI_C:
            return decode_ansi_c(self.node_text(node)[2:-1]), True
        if cat == C_CONCAT:
            return self.word_parts(node.children, subs, depth)
        if cat in (C_CMD_SUB, C_PROC_SUB):
            self.substitution(node, subs, depth)
            return self.node_text(node), False
        # expansions, arithmetic, brace expressions, anything else: not static, and any
        # substitution inside still runs
        self.collect_substitutions(node, subs, depth)
        return self.node_text(node), False

    def word_parts(
        self, parts: list[Any], subs: list[Substitution], depth: int
    ) -> tuple[str, bool]:
        """Join the pieces of one word (``'r''m'``, ``-{r,f}``); returns (text, static).

        The grammar splits brace expansion into plain pieces (``{`` ``r,f`` ``}``), so the
        unquoted pieces are checked again as a whole, quoted pieces replaced by a placeholder
        (a quoted comma or brace does not expand)."""
        pieces: list[str] = []
        unquoted: list[str] = []
        is_static = True
        cat_of = self.cat
        for part in parts:
            cat = cat_of[part.kind_id]
            if not part.is_named:
                raw = self.node_text(part)
                if (
                    cat == C_DOLLAR
                    and part.end_byte < len(self.srcb)
                    and (EXPANSION_START.match(self.srcb, part.end_byte) is not None)
                ):
                    # the grammar cut `$NAME` in two: `A=1'q'$X.y` becomes `A=1q$` and a
                    # command `X.y`; what bash runs is not what the tree says
                    self.problem(
                        "parse.misparse",
                        "the parser split a $-expansion from its name",
                        part.start_byte,
                        part.end_byte + 1,
                    )
                pieces.append(raw)
                unquoted.append(raw)
                is_static = False
                continue
            text, part_static = self.word(part, subs, depth)
            pieces.append(text)
            unquoted.append(self.node_text(part) if cat == C_WORD else "\x00")
            is_static = is_static and part_static
        if is_static and len(parts) > 1 and not self.plain:
            is_static = UNQUOTED_EXPANDS.search("".join(unquoted)) is None
        return "".join(pieces), is_static

    def double_quoted(self, node: Any, subs: list[Substitution], depth: int) -> tuple[str, bool]:
        pieces: list[str] = []
        is_static = True
        for child in node.children:
            cat = self.cat[child.kind_id]
            if cat == C_STRING_CONTENT:
                pieces.append(unescape_double_quoted(self.node_text(child)))
            elif not child.is_named:
                if child.end_byte - child.start_byte > 1:
                    # the grammar folds whitespace before the closing quote into its token:
                    # `" "` and `" $a "` end in a `"` token whose text is ` "`
                    text = self.node_text(child)
                    if text.endswith('"') and text[:-1].isspace():
                        pieces.append(text[:-1])
                continue
            elif cat == C_CMD_SUB:
                self.substitution(child, subs, depth)
                pieces.append(self.node_text(child))
                is_static = False
            else:
                self.collect_substitutions(child, subs, depth)
                pieces.append(self.node_text(child))
                is_static = False
        return "".join(pieces), is_static

    def collect_substitutions(self, node: Any, subs: list[Substitution], depth: int) -> None:
        """Find every command/process substitution below ``node`` (they all run)."""
        cat_of = self.cat
        stack = [node]
        while stack:
            current = stack.pop()
            for child in current.children:
                cat = cat_of[child.kind_id]
                if cat in (C_CMD_SUB, C_PROC_SUB):
                    self.substitution(child, subs, depth)
                elif child.child_count:
                    stack.append(child)

    def substitution(self, node: Any, subs: list[Substitution], depth: int) -> None:
        children = node.children
        kind = children[0].type if children and not children[0].is_named else "$("
        if kind in ("$`", "``"):
            kind = "`"
        if depth + 1 > MAX_SUBSTITUTION_DEPTH:
            self.problem_at(
                "parse.too-deep", f"substitutions nested deeper than {MAX_SUBSTITUTION_DEPTH}", node
            )
            subs.append(Substitution(kind, ()))
            return
        inner: list[Segment] = []
        for child in children:
            cat = self.cat[child.kind_id]
            if cat in STATEMENTS:
                self.statement(child, inner, (), depth + 1, 0, None)
            elif cat in REDIRECTS:
                # `$(< file)` reads the file
                inner.append(self.redirect_only(child, (), depth + 1, None))
        subs.append(Substitution(kind, tuple(inner)))

    # -- the recursive entry points, defined by the layers above (walk.py) -----------------

    def statement(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        raise NotImplementedError

    def stage_statement(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: list[int],
    ) -> None:
        raise NotImplementedError

    def pipeline(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: list[int],
    ) -> int | None:
        raise NotImplementedError

    def command(
        self,
        node: Any,
        feed: Feed,
        depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
    ) -> Segment:
        raise NotImplementedError

    def redirect_only(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        raise NotImplementedError
