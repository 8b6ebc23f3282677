"""Parse a shell command with tree-sitter-bash into flat, unquoted *segments*.

A segment is one simple command as bash would run it: its argv with quoting removed, its leading
``VAR=value`` assignments, its redirects, its place in a pipeline and the command or process
substitutions nested inside it (as child segment lists). The risk classifier works on segments
only, so every decision about shell *syntax* is made here and every decision about *risk* in
``risk.py``.

tree-sitter-bash is an editor grammar; on a few inputs its tree disagrees with what bash runs.
Each known disagreement is handled so that the result is either what bash runs or a *problem*
(which makes the classifier fail closed):

* A pipeline at the very end of the input sends the GLR parser down a slow path (~40x); a
  newline is appended before parsing (a trailing newline never changes what bash runs).
* After a multi-stage pipeline a newline can be swallowed so the next line's command becomes
  arguments of the last stage (tree-sitter-bash #347, also #316). Such a command node has an
  unescaped newline *between* its words; that newline is replaced by ``;`` (which is what bash
  reads it as) and the input is parsed again.
* A backslash-newline inside a word (``r\\<newline>m``) is one word to bash but two nodes to the
  grammar; words separated only by line continuations are joined again.
* Text the grammar silently drops (``python3 - <<EOF`` loses the ``-``) shows up as a non-blank
  gap between sibling nodes and is reported as a problem.
* The grammar's C scanner passes code points to ``isalpha``/``isdigit`` (defined only up to
  255): ``{`` followed by a character beyond the Basic Multilingual Plane crashes the process
  (SIGSEGV, tree-sitter-bash #337) and smaller ones read garbage. The scanner therefore never sees
  a non-ASCII byte: each one is replaced by ``%`` (same length, so offsets hold; to bash, as to
  the grammar, both are plain word characters outside ``${…}``) and all text is sliced from the
  original. This also stops Unicode spaces, which bash does not split on, from splitting words.
* Raw control characters (``\\r``, ``\\x00``…) and invalid UTF-8 are reported as problems: bash
  and the grammar may split such text differently.

Nothing here raises on any input: :func:`parse` returns problems as data.
"""

from __future__ import annotations

import itertools
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

#: Inputs longer than this (in UTF-8 bytes) are not parsed at all: classify fails closed.
MAX_INPUT_BYTES = 64 * 1024
#: Command/process substitutions and inline shell code nested deeper than this fail closed.
MAX_SUBSTITUTION_DEPTH = 8
#: Syntax-tree nesting deeper than this (``((((…))))``) fails closed instead of recursing.
MAX_TREE_DEPTH = 100
#: How many swallowed newlines (tree-sitter-bash #347) are repaired before giving up.
MAX_REPAIRS = 16


class Problem(NamedTuple):
    """Something that makes the command impossible to analyse; the classifier fails closed."""

    code: str
    """Stable id: ``parse.error``, ``parse.too-long``, ``parse.too-deep``, …"""
    detail: str
    text: str
    """The offending source text (shortened)."""


class Assignment(NamedTuple):
    """A ``NAME=value`` (or ``NAME+=value``) word before a command or on its own."""

    name: str
    value: str
    """Unquoted; dynamic parts keep their source text (``$HOME``)."""
    static: bool
    """False if the value contains expansions or substitutions."""


class Redirect(NamedTuple):
    """One redirection; ``op`` as written, ``target`` unquoted."""

    op: str
    """``> >> >| &> &>> < >& <& << <<- <<<``."""
    target: str
    """File word, descriptor number, heredoc delimiter or here-string text."""
    static: bool
    fd: int | None = None
    """Explicit descriptor (``2>``), else None."""
    body: str | None = None
    """Heredoc body text; None for other redirects."""


class Substitution(NamedTuple):
    """A ``$(…)``/backtick command substitution or a ``<(…)``/``>(…)`` process substitution."""

    kind: str
    """``$(``, ````` ``, ``<(`` or ``>(``."""
    segments: tuple[Segment, ...]


Feed = tuple[range, ...]
"""Where a segment's stdin may come from: ranges of indices into its segment list."""


def _extend_feed(feed: Feed, start: int, stop: int) -> Feed:
    """Add segments ``start..stop`` to a feed, merging with an adjacent last range."""
    if stop <= start:
        return feed
    if feed and feed[-1].stop == start:
        return (*feed[:-1], range(feed[-1].start, stop))
    return (*feed, range(start, stop))


class Segment(NamedTuple):
    """One simple command (or bare assignment, test, control word list) as bash runs it."""

    text: str
    """Source text of the segment, including its redirects."""
    words: tuple[str, ...]
    """argv with quoting removed; ``words[0]`` is the command name. Parts bash would expand
    (``$X``, ``$(…)``, unquoted globs, brace expansion) keep their source text."""
    static: tuple[bool, ...]
    """Parallel to ``words``: True if the word's runtime value is exactly ``words[i]``."""
    assignments: tuple[Assignment, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    substitutions: tuple[Substitution, ...] = ()
    env_stripped: str = ""
    """The command text without leading ``VAR=value`` assignments (for permission globs)."""
    pipeline: int = 0
    """Id of the innermost pipeline this segment is a stage of (0: not in a pipeline)."""
    stage: int = 0
    """0-based position in that pipeline; > 0 means stdin comes from earlier stages."""
    fed_by: Feed = ()
    """Index ranges (into the same segment list) of segments whose output may reach this stdin
    via pipes: all earlier stages, also through an enclosing group (``curl x | (cd /tmp && sh)``:
    sh is fed by curl). Ranges, not indices, so a 30,000-stage pipeline stays linear in size."""
    kind: str = "command"
    """``command``; ``assignment`` (bare ``VAR=x``); ``declaration`` (export, local, …);
    ``test`` (``[[ … ]]``); ``arithmetic`` (``(( … ))``); ``control`` (for/case word lists);
    ``redirect`` (redirects without a command)."""
    in_function: str | None = None
    """Name of the function whose body holds this segment, if any."""

    @property
    def name(self) -> str:
        """The command word after unquoting (``""`` for segments without words)."""
        return self.words[0] if self.words else ""

    def is_static(self, index: int) -> bool:
        """True if word ``index`` exists and has no expansion of any kind."""
        return 0 <= index < len(self.static) and self.static[index]


class ParsedCommand(NamedTuple):
    """The result of parsing one command string."""

    source: str
    segments: tuple[Segment, ...]
    problems: tuple[Problem, ...] = ()
    functions: Mapping[str, tuple[str, ...]] = {}
    """Functions defined in the command: name → the command names called in its body."""


# --- node categories ------------------------------------------------------------------------
# Each tree-sitter kind id maps to one small int through a flat list (the cheapest lookup
# Python offers); anonymous tokens get categories too, so no string compare is needed.

_C_OTHER = 0
_C_CONTAINER = 1  # program, subshell, do_group, if/elif/else, while, case_item
_C_PIPELINE = 2
_C_LIST = 3
_C_REDIRECTED = 4
_C_COMMAND = 5
_C_ASSIGN = 6
_C_ASSIGNS = 7
_C_DECL = 8
_C_TEST = 9
_C_FUNCTION = 10
_C_COMMENT = 11
_C_FILE_REDIRECT = 12
_C_HEREDOC_REDIRECT = 13
_C_HERESTRING_REDIRECT = 14
_C_WORD = 15
_C_RAW_STRING = 16
_C_STRING = 17
_C_ANSI_C = 18
_C_CONCAT = 19
_C_EXPANSION = 20
_C_CMD_SUB = 21
_C_PROC_SUB = 22
_C_COMMAND_NAME = 23
_C_STRING_CONTENT = 24
_C_CONTROL = 25  # for/select/case/c-style for: word lists + bodies
_C_ERROR = 26
_C_COMPOUND = 27  # { …; } and (( … ))
_C_VARIABLE_NAME = 28
_C_TOKEN = 29  # any other anonymous token
_C_PIPE_OP = 30  # | and |&
_C_DOLLAR = 31  # the `$` of $"…"
_C_HEREDOC_START = 32
_C_HEREDOC_BODY = 33
_C_HEREDOC_END = 34
_C_FILE_DESCRIPTOR = 35
_C_SEPARATOR = 36  # && || ; & ;; (ignored, structure carries the meaning)
_C_TRANSLATED = 37  # $"…": a double-quoted string behind an anonymous `$`

_CATEGORY_BY_NAME: dict[str, int] = {
    "program": _C_CONTAINER,
    "subshell": _C_CONTAINER,
    "do_group": _C_CONTAINER,
    "if_statement": _C_CONTAINER,
    "elif_clause": _C_CONTAINER,
    "else_clause": _C_CONTAINER,
    "while_statement": _C_CONTAINER,
    "case_item": _C_CONTAINER,
    "negated_command": _C_CONTAINER,
    "compound_statement": _C_COMPOUND,
    "for_statement": _C_CONTROL,
    "c_style_for_statement": _C_CONTROL,
    "case_statement": _C_CONTROL,
    "pipeline": _C_PIPELINE,
    "list": _C_LIST,
    "redirected_statement": _C_REDIRECTED,
    "command": _C_COMMAND,
    "variable_assignment": _C_ASSIGN,
    "variable_assignments": _C_ASSIGNS,
    "declaration_command": _C_DECL,
    "unset_command": _C_DECL,
    "test_command": _C_TEST,
    "function_definition": _C_FUNCTION,
    "comment": _C_COMMENT,
    "file_redirect": _C_FILE_REDIRECT,
    "heredoc_redirect": _C_HEREDOC_REDIRECT,
    "herestring_redirect": _C_HERESTRING_REDIRECT,
    "word": _C_WORD,
    "number": _C_WORD,
    "raw_string": _C_RAW_STRING,
    "string": _C_STRING,
    "translated_string": _C_TRANSLATED,
    "ansi_c_string": _C_ANSI_C,
    "concatenation": _C_CONCAT,
    "simple_expansion": _C_EXPANSION,
    "expansion": _C_EXPANSION,
    "command_substitution": _C_CMD_SUB,
    "process_substitution": _C_PROC_SUB,
    "command_name": _C_COMMAND_NAME,
    "string_content": _C_STRING_CONTENT,
    "variable_name": _C_VARIABLE_NAME,
    "heredoc_start": _C_HEREDOC_START,
    "heredoc_body": _C_HEREDOC_BODY,
    "heredoc_end": _C_HEREDOC_END,
    "file_descriptor": _C_FILE_DESCRIPTOR,
}
_TOKEN_CATEGORY: dict[str, int] = {
    "|": _C_PIPE_OP,
    "|&": _C_PIPE_OP,
    "$": _C_DOLLAR,
    "&&": _C_SEPARATOR,
    "||": _C_SEPARATOR,
    ";": _C_SEPARATOR,
    "&": _C_SEPARATOR,
    ";;": _C_SEPARATOR,
    ";&": _C_SEPARATOR,
    ";;&": _C_SEPARATOR,
    "\n": _C_SEPARATOR,
}

_STATEMENTS = frozenset(
    {
        _C_CONTAINER,
        _C_PIPELINE,
        _C_LIST,
        _C_REDIRECTED,
        _C_COMMAND,
        _C_ASSIGN,
        _C_ASSIGNS,
        _C_DECL,
        _C_TEST,
        _C_FUNCTION,
        _C_CONTROL,
        _C_COMPOUND,
    }
)
_REDIRECTS = frozenset({_C_FILE_REDIRECT, _C_HEREDOC_REDIRECT, _C_HERESTRING_REDIRECT})
_IGNORED = frozenset({_C_COMMENT, _C_SEPARATOR, _C_TOKEN, _C_PIPE_OP})

# Whitespace allowed between sibling nodes: blanks, newlines and line continuations.
_BLANK_GAP = re.compile(rb"(?:[ \t\n]|\\\n)*")
_ONLY_CONTINUATIONS = re.compile(rb"(?:\\\n)+")
# A variable name, optionally subscripted (`a[$i]`), as bash accepts before `=`.
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?", re.S)
# Backtick command substitutions in heredoc text (group 1 is None when unterminated).
_BACKTICK_SPAN = re.compile(r"(?<!\\)(?:\\\\)*`((?:[^`\\]|\\.)*)(`?)", re.S)
_BACKTICK_UNESCAPE = re.compile(r"\\([`\\$])")
_QUOTED_DELIMITER = re.compile(r"['\"\\]")
# `cmd - <<EOF`, `cmd - 2>&1`: a `-` argument the grammar drops before a redirect
_LONE_DASH = re.compile(rb"(?:[ \t]|\\\n)+-(?:[ \t]|\\\n)+")
# Every byte of a multi-byte UTF-8 character; replaced by `%` before the C scanner sees it.
_NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")
# Characters bash and the grammar may split differently; the input fails closed on them.
_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# If none of these occurs anywhere in the command, no word needs unescaping or glob checks.
_WORD_SPECIAL = re.compile(r"[\\*?\[{]")
# Unquoted text that bash expands: globs and brace expansion ({a,b} or {1..3}).
_UNQUOTED_EXPANDS = re.compile(r"(?<!\\)[*?\[]|(?<!\\)\{[^{}]*(?:,|\.\.)[^{}]*\}")
_UNQUOTED_ESCAPE = re.compile(r"\\(\n|.)", re.S)
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ANSI_C_ESCAPE = re.compile(
    r"\\(?:([abeEfnrtv\\'\"?])|([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})"
    r"|U([0-9a-fA-F]{1,8})|c(.)|(.))",
    re.S,
)
_ANSI_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def _unescape_unquoted(text: str) -> str:
    """Remove backslash quoting from an unquoted word: ``\\x`` → ``x``, ``\\<newline>`` → ''."""
    if "\\" not in text:
        return text
    return _UNQUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_double_quoted(text: str) -> str:
    """Inside ``"…"`` a backslash only escapes ``$ ` " \\`` and newline (which it removes)."""
    if "\\" not in text:
        return text
    return _DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _ansi_c_replace(match: re.Match[str]) -> str:
    simple, octal, hex2, uni4, uni8, ctrl, other = match.groups()
    if simple is not None:
        return _ANSI_SIMPLE[simple]
    if octal is not None:
        return chr(int(octal, 8) & 0xFF)
    if hex2 is not None:
        return chr(int(hex2, 16))
    if uni4 is not None or uni8 is not None:
        code = int(uni4 or uni8 or "0", 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    if ctrl is not None:
        if ctrl == "\\":
            return "\x1c"
        return chr(ord(ctrl.upper()) & 0x1F) if ctrl.isascii() else "\ufffd"
    return "\\" + other


def decode_ansi_c(body: str) -> str:
    """Decode the inside of ``$'…'`` as bash does (``\\x72`` → ``r``, ``\\047`` → ``'``)."""
    if "\\" not in body:
        return body
    return _ANSI_C_ESCAPE.sub(_ansi_c_replace, body)


class _Walk:
    """State of one parse: source text, problems found, counters."""

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
        self.plain = _WORD_SPECIAL.search(src) is None
        self.cat = cat
        self.problems: list[Problem] = []
        self.functions: dict[str, tuple[str, ...]] = {}
        self.pipelines = 0
        self.repairs: list[int] = []

    # -- helpers -------------------------------------------------------------------------

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

    def gap(self, start: int, end: int, in_command: bool) -> bool:
        """Check the text between two sibling nodes (called unless it is one blank).

        Returns True when the siblings are glued into one word (no gap, or only line
        continuations). A raw newline inside a command means the grammar merged two lines
        (recorded for repair); any other non-blank text was dropped by the grammar.
        """
        if end <= start:
            return True
        gap = self.srcb[start:end]
        if _BLANK_GAP.fullmatch(gap) is None:
            self.problem(
                "parse.dropped-text",
                "the parser skipped part of the command, so what bash runs is unknown",
                start,
                end,
            )
            return False
        if _ONLY_CONTINUATIONS.fullmatch(gap) is not None:
            return True
        if in_command and b"\n" in gap:
            index = gap.replace(b"\\\n", b"  ").find(b"\n")
            if index >= 0:
                self.repairs.append(start + index)
        return False

    # -- statements ------------------------------------------------------------------------

    def statement(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """Append the segments of one statement node (any statement category) to ``out``."""
        cat = self.cat[node.kind_id]
        if cat == _C_COMMAND:
            out.append(self.command(node, feed, depth, function, 0, 0))
            return
        if tree_depth > MAX_TREE_DEPTH:
            self.problem(
                "parse.too-deep",
                f"syntax nested deeper than {MAX_TREE_DEPTH} levels",
                node.start_byte,
                node.end_byte,
            )
            return
        if cat in (_C_CONTAINER, _C_LIST, _C_COMPOUND):
            self.container(node, out, feed, depth, tree_depth, function)
        elif cat == _C_PIPELINE or (cat == _C_REDIRECTED and self.flattenable(node)):
            self.chain(node, out, feed, depth, tree_depth, function)
        elif cat == _C_REDIRECTED:
            self.redirected(node, out, feed, depth, tree_depth, function, 0, 0)
        elif cat in (_C_ASSIGN, _C_ASSIGNS):
            out.append(self.bare_assignments(node, feed, depth, function))
        elif cat == _C_DECL:
            out.append(self.declaration(node, feed, depth, function))
        elif cat == _C_TEST:
            out.append(self.test(node, feed, depth, function))
        elif cat == _C_FUNCTION:
            self.function_definition(node, out, feed, depth, tree_depth)
        elif cat == _C_CONTROL:
            self.control(node, out, feed, depth, tree_depth, function)
        elif cat != _C_COMMENT:
            self.problem(
                "parse.unsupported",
                f"unsupported shell construct {node.type!r}",
                node.start_byte,
                node.end_byte,
            )

    def container(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """Statements in sequence: program, lists, groups, if/while bodies, negation."""
        cat_of = self.cat
        srcb = self.srcb
        prev_end = -1
        arithmetic = self.cat[node.kind_id] == _C_COMPOUND and node.type == "compound_statement"
        for child in node.children:
            start = child.start_byte
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                self.gap(prev_end, start, False)
            prev_end = child.end_byte
            cat = cat_of[child.kind_id]
            if cat == _C_COMMAND:
                out.append(self.command(child, feed, depth, function, 0, 0))
            elif cat in _STATEMENTS:
                self.statement(child, out, feed, depth, tree_depth + 1, function)
            elif cat in _REDIRECTS:
                # `{ …; } > file` inside a larger construct
                out.append(self.redirect_only(child, feed, depth, function))
            elif cat in _IGNORED:
                continue
            else:
                # words in a statement position: `(( … ))` arithmetic, case patterns
                kind = "arithmetic" if arithmetic else "control"
                out.append(self.control_words(node, [child], feed, depth, function, kind))

    def flattenable(self, node: Any) -> bool:
        """A redirected pipeline or list (``a | b 2>&1``, ``a && b > f``) whose redirects hold
        no heredoc that continues the line (those keep the grammar's structure)."""
        cat_of = self.cat
        body = node.named_children[0] if node.named_child_count else None
        if body is None or cat_of[body.kind_id] not in (_C_PIPELINE, _C_LIST):
            return False
        for child in node.children:
            if cat_of[child.kind_id] == _C_HEREDOC_REDIRECT and any(
                cat_of[grandchild.kind_id] in _STATEMENTS or grandchild.type == "|"
                for grandchild in child.children
            ):
                return False
        return True

    def flatten(self, node: Any, tokens: list[tuple[str, Any]], tree_depth: int) -> None:
        """The units and operators of nested pipeline/list/redirected nodes, in source order:
        ``("unit", node)``, ``("op", "|" / "&&" / "||")``, ``("redirect", node)`` (the
        redirects of ``node`` apply to the unit before them)."""
        cat_of = self.cat
        if tree_depth > MAX_TREE_DEPTH:
            self.problem(
                "parse.too-deep",
                f"syntax nested deeper than {MAX_TREE_DEPTH} levels",
                node.start_byte,
                node.end_byte,
            )
            return
        if cat_of[node.kind_id] == _C_REDIRECTED:
            self.flatten(node.named_children[0], tokens, tree_depth + 1)
            tokens.append(("redirect", node))
            return
        srcb = self.srcb
        prev_end = -1
        for child in node.children:
            start = child.start_byte
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                self.gap(prev_end, start, False)
            prev_end = child.end_byte
            cat = cat_of[child.kind_id]
            if cat in (_C_PIPE_OP, _C_SEPARATOR):
                tokens.append(("op", "|" if cat == _C_PIPE_OP else child.type))
            elif cat in (_C_PIPELINE, _C_LIST) or (
                cat == _C_REDIRECTED and self.flattenable(child)
            ):
                self.flatten(child, tokens, tree_depth + 1)
            elif cat in _STATEMENTS:
                tokens.append(("unit", child))
            elif cat not in _IGNORED:
                self.problem(
                    "parse.unsupported",
                    f"unexpected {child.type!r} in a pipeline or list",
                    child.start_byte,
                    child.end_byte,
                )

    def chain(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """Pipelines and ``&&``/``||`` lists with bash's precedence. The grammar nests them
        wrongly (``a | b && c`` as ``a | (b && c)``, ``a && b 2>f | c`` as ``(a && b 2>f) | c``),
        so the nodes are flattened into units and operators and regrouped: ``|`` binds
        tighter than ``&&``/``||``."""
        tokens: list[tuple[str, Any]] = []
        self.flatten(node, tokens, tree_depth)
        groups: list[list[tuple[Any, list[Any]]]] = [[]]  # pipelines of (unit, redirect nodes)
        expect_unit = True
        for kind, value in tokens:
            if kind == "unit" and expect_unit:
                groups[-1].append((value, []))
                expect_unit = False
            elif kind == "redirect" and not expect_unit:
                groups[-1][-1][1].append(value)
            elif kind == "op" and not expect_unit:
                if value != "|":
                    groups.append([])
                expect_unit = True
            else:
                self.problem(
                    "parse.unsupported",
                    "a pipeline or list the parser could not follow",
                    node.start_byte,
                    node.end_byte,
                )
                return
        for group in groups:
            pipeline_id = 0
            if len(group) > 1:
                self.pipelines += 1
                pipeline_id = self.pipelines
            stage_feed = feed
            for stage, (unit, redirect_nodes) in enumerate(group):
                start = len(out)
                self.unit(unit, out, stage_feed, depth, tree_depth, function, pipeline_id, stage)
                for redirect_node in redirect_nodes:
                    if len(out) > start:
                        self.redirected(
                            redirect_node, out, stage_feed, depth, tree_depth + 1, function,
                            pipeline_id, stage, body_done=True,
                        )
                stage_feed = _extend_feed(stage_feed, start, len(out))

    def unit(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
    ) -> None:
        """One stage of a pipeline (or a lone command of a list)."""
        cat = self.cat[node.kind_id]
        if cat == _C_COMMAND:
            out.append(self.command(node, feed, depth, function, pipeline_id, stage))
            return
        first = len(out)
        if cat == _C_REDIRECTED:
            self.redirected(node, out, feed, depth, tree_depth + 1, function, pipeline_id, stage)
        else:
            self.statement(node, out, feed, depth, tree_depth + 1, function)
        if pipeline_id:
            for i in range(first, len(out)):
                if out[i].pipeline == 0:
                    out[i] = out[i]._replace(pipeline=pipeline_id, stage=stage)

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
        """Flatten (possibly nested) pipeline nodes into one pipeline with numbered stages.

        Returns where the first stage's segments start when the grammar put segments that bash
        runs before the pipeline into it (``a && b 2>f | c``), else None."""
        cat_of = self.cat
        srcb = self.srcb
        prev_end = -1
        first_stage: int | None = None
        piped = False
        stage_feed = feed
        stage_start = len(out)
        for child in node.children:
            start = child.start_byte
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                self.gap(prev_end, start, False)
            prev_end = child.end_byte
            cat = cat_of[child.kind_id]
            if cat == _C_PIPE_OP:
                stage[0] += 1
                stage_feed = _extend_feed(stage_feed, stage_start, len(out))
                stage_start = len(out)
                piped = True
            elif cat in _STATEMENTS:
                last_stage = self.stage_item(
                    child, out, stage_feed, feed, depth, tree_depth, function, pipeline_id, stage
                )
                if last_stage is not None:
                    stage_start = last_stage
                    if not piped:
                        first_stage = last_stage
            elif cat not in _IGNORED:
                self.problem(
                    "parse.unsupported",
                    f"unexpected {child.type!r} in a pipeline",
                    child.start_byte,
                    child.end_byte,
                )
        return first_stage

    def stage_item(
        self,
        child: Any,
        out: list[Segment],
        stage_feed: Feed,
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: list[int],
    ) -> int | None:
        """One statement between pipe operators. Returns the index where the stage's own
        segments start when that is not where the statement's segments start (the grammar
        puts list elements that bash runs outside the pipeline into it)."""
        cat_of = self.cat
        cat = cat_of[child.kind_id]
        if cat == _C_COMMAND:
            out.append(self.command(child, stage_feed, depth, function, pipeline_id, stage[0]))
        elif cat == _C_PIPELINE:
            return self.pipeline(
                child, out, stage_feed, depth, tree_depth + 1, function, pipeline_id, stage
            )
        elif cat == _C_LIST:
            # the grammar reads `a | b && c` as `a | (b && c)`; bash runs `(a | b) && c`: the
            # list's first element continues the pipeline, the rest run after it, unfed
            items = [c for c in child.children if cat_of[c.kind_id] in _STATEMENTS]
            if not items:
                return None
            result = self.stage_item(
                items[0], out, stage_feed, feed, depth, tree_depth + 1, function, pipeline_id,
                stage,
            )
            for item in items[1:]:
                self.statement(item, out, feed, depth, tree_depth + 1, function)
            return result
        elif cat == _C_REDIRECTED:
            first = len(out)
            inner_start = self.redirected(
                child,
                out,
                stage_feed,
                depth,
                tree_depth + 1,
                function,
                pipeline_id,
                stage[0],
                stage,
            )
            body = child.named_children[0] if child.named_child_count else None
            if (
                body is not None
                and cat_of[body.kind_id] == _C_LIST
                and body.named_child_count
                and len(out) > first + 1
            ):
                # the grammar reads `a && b 2>f | c` as `(a && b 2>f) | c`; bash runs
                # `a && (b 2>f | c)`: only the list's last command (or the stages of its last
                # pipeline, `a && b | d 2>f | c`) belong to this pipeline
                tail = cat_of[body.named_children[-1].kind_id]
                last = len(out) - 1
                if tail == _C_COMMAND:
                    out[last] = out[last]._replace(pipeline=pipeline_id, stage=stage[0])
                    return last
                inner = out[last].pipeline
                if tail == _C_PIPELINE and inner:
                    begin = last
                    while begin > first and out[begin - 1].pipeline == inner:
                        begin -= 1
                    base = stage[0]
                    for i in range(begin, last + 1):
                        out[i] = out[i]._replace(pipeline=pipeline_id, stage=base + out[i].stage)
                    stage[0] = out[last].stage
                    return begin
            return inner_start
        else:
            first = len(out)
            self.statement(child, out, stage_feed, depth, tree_depth + 1, function)
            for i in range(first, len(out)):
                if out[i].pipeline == 0:
                    out[i] = out[i]._replace(pipeline=pipeline_id, stage=stage[0])
        return None

    def redirected(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
        stages: list[int] | None = None,
        body_done: bool = False,
    ) -> int | None:
        """A statement with redirects (and, after a heredoc, possibly the rest of the line).

        ``stages`` is the stage counter of an enclosing pipeline: ``a | b 2>&1 | c`` is one
        pipeline to bash, though the grammar nests ``a | b 2>&1`` as a redirected pipeline.
        Returns what :meth:`pipeline` returns for such a nested pipeline. ``body_done``: the
        body was already walked (by :meth:`chain`) and its last segment is ``out[-1]``."""
        inner_start: int | None = None
        cat_of = self.cat
        redirects: list[Redirect] = []
        subs: list[Substitution] = []
        trailing: list[Any] = []  # statements the grammar hangs inside a heredoc redirect
        extra: list[tuple[str, bool]] = []  # `a && b > f x`: x is an argument of b
        first = len(out) - 1 if body_done and out else len(out)
        body_is_command = False
        body_ends_in_command = False
        body_end = 0
        has_body = False
        prev_end = -1
        for child in node.children:
            start = child.start_byte
            cat = cat_of[child.kind_id]
            if prev_end >= 0 and (start != prev_end + 1 or self.srcb[prev_end] != 32):
                if (
                    has_body
                    and cat in _REDIRECTS
                    and _LONE_DASH.fullmatch(self.srcb, prev_end, start) is not None
                ):
                    # `python3 - <<EOF`, `cat - 2>&1`: the grammar drops a `-` argument that
                    # stands right before a redirect
                    extra.append(("-", True))
                else:
                    self.gap(prev_end, start, False)
            prev_end = child.end_byte
            if cat in _REDIRECTS:
                redirects.extend(self.redirect(child, subs, depth, trailing, extra))
                if extra and not body_ends_in_command:
                    self.problem(
                        "parse.error",
                        "words after a redirect of a compound command (bash rejects this)",
                        child.start_byte,
                        child.end_byte,
                    )
            elif not has_body and cat in _STATEMENTS:
                has_body = True
                body_ends_in_command = _ends_in_command(child, cat_of)
                body_end = child.end_byte
                if body_done:
                    continue
                if cat == _C_COMMAND:
                    body_is_command = True
                    out.append(self.command(child, feed, depth, function, pipeline_id, stage))
                elif cat == _C_PIPELINE and stages is not None and pipeline_id:
                    inner_start = self.pipeline(
                        child, out, feed, depth, tree_depth + 1, function, pipeline_id, stages
                    )
                elif cat == _C_PIPELINE:
                    self.pipelines += 1
                    self.pipeline(
                        child, out, feed, depth, tree_depth + 1, function, self.pipelines, [0]
                    )
                else:
                    self.statement(child, out, feed, depth, tree_depth + 1, function)
            elif cat not in _IGNORED:
                self.problem(
                    "parse.unsupported",
                    f"unexpected {child.type!r} in a redirected statement",
                    child.start_byte,
                    child.end_byte,
                )
        if len(out) > first:
            # bash applies a redirect after a list/pipeline to its last command (the grammar
            # hangs it on the whole list, tree-sitter-bash #345)
            last = out[-1]
            changes: dict[str, Any] = {
                "redirects": last.redirects + tuple(redirects),
                "substitutions": last.substitutions + tuple(subs),
            }
            if extra and last.kind == "command":
                changes["words"] = last.words + tuple(text for text, _ in extra)
                changes["static"] = last.static + tuple(flag for _, flag in extra)
            if body_is_command:
                changes["text"] = self.node_text(node)
                if last.env_stripped:
                    changes["env_stripped"] = last.env_stripped + self.text(body_end, node.end_byte)
            elif body_ends_in_command and redirects and not trailing:
                # `a | b > f`: b's text includes the redirect, as when it stands alone
                tail = self.text(body_end, node.end_byte)
                changes["text"] = last.text + tail
                if last.env_stripped:
                    changes["env_stripped"] = last.env_stripped + tail
            out[-1] = last._replace(**changes)
        else:
            out.append(
                Segment(
                    self.node_text(node),
                    (),
                    (),
                    (),
                    tuple(redirects),
                    tuple(subs),
                    "",
                    pipeline_id,
                    stage,
                    feed,
                    "redirect",
                    function,
                )
            )
        if trailing:
            self.heredoc_trailing(trailing, out, feed, depth, tree_depth, function, first)
        return inner_start

    def heredoc_trailing(
        self,
        trailing: list[Any],
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        first: int,
    ) -> None:
        """``cat <<EOF | sh`` — the grammar nests ``| sh`` inside the heredoc redirect."""
        cat_of = self.cat
        body_feed = _extend_feed(feed, first, len(out))
        for node in trailing:
            children = node.children
            piped = bool(children) and cat_of[children[0].kind_id] == _C_PIPE_OP
            if not piped:
                self.statement(node, out, feed, depth, tree_depth + 1, function)
                continue
            pipeline_id = out[first].pipeline if len(out) > first else 0
            if pipeline_id == 0:
                self.pipelines += 1
                pipeline_id = self.pipelines
                for i in range(first, len(out)):
                    out[i] = out[i]._replace(pipeline=pipeline_id, stage=0)
            stage = [max((s.stage for s in out[first:] if s.pipeline == pipeline_id), default=0)]
            # `| sh && rm x`: the grammar puts a list after the pipe; only its first
            # pipeline is fed by the heredoc command
            for child in children:
                cat = cat_of[child.kind_id]
                if cat == _C_PIPE_OP:
                    stage[0] += 1
                elif cat == _C_LIST:
                    grand = child.children
                    for index, item in enumerate(grand):
                        if cat_of[item.kind_id] not in _STATEMENTS:
                            continue
                        if index == 0:
                            self.stage_statement(
                                item,
                                out,
                                body_feed,
                                depth,
                                tree_depth,
                                function,
                                pipeline_id,
                                stage,
                            )
                        else:
                            self.statement(item, out, feed, depth, tree_depth + 1, function)
                elif cat in _STATEMENTS:
                    self.stage_statement(
                        child, out, body_feed, depth, tree_depth, function, pipeline_id, stage
                    )

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
        """One statement that is (the start of) the next stage of an existing pipeline."""
        cat = self.cat[node.kind_id]
        if cat == _C_PIPELINE:
            self.pipeline(node, out, feed, depth, tree_depth + 1, function, pipeline_id, stage)
            return
        first = len(out)
        self.statement(node, out, feed, depth, tree_depth + 1, function)
        for i in range(first, len(out)):
            if out[i].pipeline == 0:
                out[i] = out[i]._replace(pipeline=pipeline_id, stage=stage[0])

    # -- simple commands -------------------------------------------------------------------

    def command(
        self,
        node: Any,
        feed: Feed,
        depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
    ) -> Segment:
        """The hot path: one ``command`` node → one Segment."""
        cat_of = self.cat
        src = self.src
        srcb = self.srcb
        ascii_src = self.ascii
        plain = self.plain
        words: list[str] = []
        static: list[bool] = []
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        subs: list[Substitution] = []
        name_start = -1
        prev_end = -1
        for child in node.children:
            start = child.start_byte
            end = child.end_byte
            glued = False
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                glued = self.gap(prev_end, start, name_start >= 0) and bool(words)
            prev_end = end
            cat = cat_of[child.kind_id]
            if cat == _C_WORD:
                text = src[start:end] if ascii_src else srcb[start:end].decode("utf-8", "replace")
                if plain:
                    is_static = True
                else:
                    is_static = _UNQUOTED_EXPANDS.search(text) is None
                    text = _unescape_unquoted(text)
            elif cat == _C_COMMAND_NAME:
                name_start = start
                inner = child.children
                if len(inner) == 1:
                    text, is_static = self.word(inner[0], subs, depth)
                else:
                    text, is_static = self.word_parts(inner, subs, depth)
            elif cat == _C_ASSIGN and name_start < 0:
                assignments.append(self.assignment(child, subs, depth))
                continue
            elif cat in _REDIRECTS:
                extra: list[tuple[str, bool]] = []
                redirects.extend(self.redirect(child, subs, depth, None, extra))
                for extra_text, extra_static in extra:
                    words.append(extra_text)
                    static.append(extra_static)
                continue
            elif cat == _C_DOLLAR:
                # `$"…"` (locale translation) is an anonymous `$` glued to a string
                text, is_static = "", True
            elif cat == _C_COMMENT:
                continue
            else:
                text, is_static = self.word(child, subs, depth)
            if glued:
                words[-1] += text
                static[-1] = static[-1] and is_static
            else:
                words.append(text)
                static.append(is_static)
        node_start = node.start_byte
        node_end = prev_end if prev_end >= 0 else node.end_byte
        text = src[node_start:node_end] if ascii_src else self.text(node_start, node_end)
        if name_start < 0:
            env_stripped = ""
        elif name_start == node_start:
            env_stripped = text
        else:
            env_stripped = self.text(name_start, node_end)
        return Segment(
            text,
            tuple(words),
            tuple(static),
            tuple(assignments),
            tuple(redirects),
            tuple(subs),
            env_stripped,
            pipeline_id,
            stage,
            feed,
            "command" if words else "assignment",
            function,
        )

    def assignment(self, node: Any, subs: list[Substitution], depth: int) -> Assignment:
        assignment = self._assignment(node, subs, depth)
        if _VARIABLE_NAME.fullmatch(assignment.name) is None:
            # `--x=y`: the grammar calls it an assignment, bash runs it as a command
            self.problem(
                "parse.misparse",
                f"{assignment.name!r} is not a variable name, so bash runs this as a command",
                node.start_byte,
                node.end_byte,
            )
        return assignment

    def _assignment(self, node: Any, subs: list[Substitution], depth: int) -> Assignment:
        name = ""
        value_parts: list[Any] = []
        seen_op = False
        for child in node.children:
            if seen_op:
                value_parts.append(child)
            elif child.type in ("=", "+="):
                seen_op = True
            else:
                name += self.node_text(child)
                # `a[$(cmd)]=1`: a subscript can run substitutions
                self.collect_substitutions(child, subs, depth)
        if not value_parts:
            return Assignment(name, "", True)
        if len(value_parts) == 1:
            value, is_static = self.word(value_parts[0], subs, depth)
        else:
            value, is_static = self.word_parts(value_parts, subs, depth)
        return Assignment(name, value, is_static)

    def bare_assignments(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        subs: list[Substitution] = []
        if self.cat[node.kind_id] == _C_ASSIGN:
            assignments = [self.assignment(node, subs, depth)]
        else:
            assignments = [
                self.assignment(child, subs, depth)
                for child in node.children
                if self.cat[child.kind_id] == _C_ASSIGN
            ]
        return Segment(
            self.node_text(node),
            (),
            (),
            tuple(assignments),
            (),
            tuple(subs),
            "",
            0,
            0,
            feed,
            "assignment",
            function,
        )

    def declaration(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset`` + arguments."""
        subs: list[Substitution] = []
        words: list[str] = []
        static: list[bool] = []
        assignments: list[Assignment] = []
        children = node.children
        if len(children) > 1 and children[0].end_byte == children[1].start_byte:
            # `export$X`: one word to bash (a command named export…), not the builtin
            self.problem(
                "parse.misparse",
                "a declaration keyword glued to more text is not a declaration",
                node.start_byte,
                node.end_byte,
            )
        for child in children:
            cat = self.cat[child.kind_id]
            if cat == _C_ASSIGN:
                assignments.append(self.assignment(child, subs, depth))
            elif cat == _C_COMMENT:
                continue
            elif not child.is_named or cat == _C_VARIABLE_NAME:
                words.append(self.node_text(child))
                static.append(True)
            else:
                text, is_static = self.word(child, subs, depth)
                words.append(text)
                static.append(is_static)
        text = self.node_text(node)
        return Segment(
            text,
            tuple(words),
            tuple(static),
            tuple(assignments),
            (),
            tuple(subs),
            text,
            0,
            0,
            feed,
            "declaration",
            function,
        )

    def test(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        """``[[ … ]]`` / ``[ … ]``: the test only reads, but substitutions in it run."""
        subs: list[Substitution] = []
        self.collect_substitutions(node, subs, depth)
        children = node.children
        opener = children[0].type if children and not children[0].is_named else "[["
        # the operands, as written: the classifier looks for arithmetic-injection tricks
        operands = tuple(self.node_text(c) for c in children[1:-1])
        text = self.node_text(node)
        return Segment(
            text,
            (opener, *operands),
            (True,) + (False,) * len(operands),
            (),
            (),
            tuple(subs),
            text,
            0,
            0,
            feed,
            "test",
            function,
        )

    def control_words(
        self,
        owner: Any,
        nodes: list[Any],
        feed: Feed,
        depth: int,
        function: str | None,
        kind: str,
    ) -> Segment:
        subs: list[Substitution] = []
        for child in nodes:
            if self.cat[child.kind_id] in (_C_CMD_SUB, _C_PROC_SUB):
                self.substitution(child, subs, depth)
            else:
                self.collect_substitutions(child, subs, depth)
        first = owner.children[0] if owner.child_count else None
        keyword = first.type if first is not None and not first.is_named else owner.type
        text = self.text(nodes[0].start_byte, nodes[-1].end_byte)
        return Segment(
            text,
            (keyword, *(self.node_text(n) for n in nodes)),
            (True,) + (False,) * len(nodes),
            (),
            (),
            tuple(subs),
            "",
            0,
            0,
            feed,
            kind,
            function,
        )

    def control(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """for/select/case/c-style for: the word lists are expanded, the bodies run."""
        words: list[Any] = []
        for child in node.children:
            cat = self.cat[child.kind_id]
            if cat in _STATEMENTS:
                self.statement(child, out, feed, depth, tree_depth + 1, function)
            elif cat in _REDIRECTS:
                out.append(self.redirect_only(child, feed, depth, function))
            elif cat not in _IGNORED and child.is_named:
                words.append(child)
        if words:
            kind = "arithmetic" if node.type == "c_style_for_statement" else "control"
            out.append(self.control_words(node, words, feed, depth, function, kind))

    def redirect_only(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        subs: list[Substitution] = []
        redirects = self.redirect(node, subs, depth, None, None)
        return Segment(
            self.node_text(node),
            (),
            (),
            (),
            tuple(redirects),
            tuple(subs),
            "",
            0,
            0,
            feed,
            "redirect",
            function,
        )

    def function_definition(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
    ) -> None:
        """The body is classified as if it runs (it may be called); the name is recorded."""
        name = ""
        first = len(out)
        for child in node.children:
            cat = self.cat[child.kind_id]
            if cat == _C_WORD and not name:
                name = _unescape_unquoted(self.node_text(child))
            elif cat in _STATEMENTS:
                self.statement(child, out, feed, depth, tree_depth + 1, name or "?")
            elif cat in _REDIRECTS:
                out.append(self.redirect_only(child, feed, depth, name or "?"))
        called = {segment.words[0] for segment in out[first:] if segment.words}
        self.functions[name] = tuple(sorted(called))

    # -- redirects -------------------------------------------------------------------------

    def redirect(
        self,
        node: Any,
        subs: list[Substitution],
        depth: int,
        trailing: list[Any] | None,
        extra: list[tuple[str, bool]] | None,
    ) -> list[Redirect]:
        """One redirect node (plus any redirect the grammar nests inside a heredoc redirect:
        ``cat <<EOF > f`` puts ``> f`` inside the heredoc node). Words after the target
        (``ls > f x``) are arguments of the command to bash but children of the redirect to the
        grammar; they go to ``extra`` (or, where no command can take them, become a problem)."""
        cat_of = self.cat
        cat = cat_of[node.kind_id]
        fd: int | None = None
        op = ""
        targets: list[Any] = []
        body: str | None = None
        nested: list[Redirect] = []
        for child in node.children:
            ccat = cat_of[child.kind_id]
            if ccat == _C_FILE_DESCRIPTOR:
                digits = self.node_text(child)
                fd = int(digits) if digits.isdigit() and len(digits) < 6 else -1
            elif ccat == _C_HEREDOC_BODY:
                body = self.node_text(child)
                self.collect_substitutions(child, subs, depth)
                if "`" in body and targets and _QUOTED_DELIMITER.search(
                    self.node_text(targets[0])
                ) is None:
                    self.heredoc_backticks(child, subs, depth)
            elif ccat in (_C_HEREDOC_END, _C_ERROR, _C_COMMENT):
                continue
            elif ccat == _C_HEREDOC_START:
                targets.append(child)
            elif cat == _C_HEREDOC_REDIRECT and ccat == _C_FILE_REDIRECT:
                # `cat <<EOF > file`: a sibling redirect of the command, nested by the grammar
                nested.extend(self.redirect(child, subs, depth, None, extra))
            elif cat == _C_HEREDOC_REDIRECT and (ccat in _STATEMENTS or ccat in _REDIRECTS):
                if trailing is None:
                    self.problem(
                        "parse.unsupported",
                        "a command after a heredoc in an unexpected place",
                        child.start_byte,
                        child.end_byte,
                    )
                else:
                    trailing.append(child)
            elif not child.is_named:
                if not op:
                    op = child.type
                    if cat == _C_HEREDOC_REDIRECT and self.node_text(child).startswith("-<<"):
                        # `python3 -<<EOF` is `python3 - <<EOF`; the grammar glues the `-` on
                        if extra is None:
                            self.problem(
                                "parse.misparse",
                                "a `-` glued to a heredoc where no command can take it",
                                child.start_byte,
                                child.end_byte,
                            )
                        else:
                            extra.append(("-", True))
                elif ccat not in _IGNORED:
                    op += child.type  # `<&-`, `>&-`
            else:
                targets.append(child)
        if cat == _C_HEREDOC_REDIRECT:
            delimiter = self.node_text(targets[0]) if targets else ""
            if len(targets) > 1:
                # `rm <<EOF -rf /`: words after the delimiter are arguments of the command
                self.extra_words(node, targets[1:], subs, depth, extra)
            return [Redirect(op, delimiter, True, fd, body or ""), *nested]
        if not targets:
            return [Redirect(op, "", True, fd)]
        groups = self.split_words(targets)
        target, is_static = self.word_parts(groups[0], subs, depth)
        if len(groups) > 1:
            self.extra_words(node, [n for group in groups[1:] for n in group], subs, depth, extra)
        return [Redirect(op, target, is_static, fd)]

    def extra_words(
        self,
        node: Any,
        nodes: list[Any],
        subs: list[Substitution],
        depth: int,
        extra: list[tuple[str, bool]] | None,
    ) -> None:
        """Words the grammar hangs on a redirect belong to the command (or are a problem)."""
        if extra is None:
            self.problem(
                "parse.unsupported",
                "words after a redirect target where no command can take them",
                node.start_byte,
                node.end_byte,
            )
        for group in self.split_words(nodes):
            word = self.word_parts(group, subs, depth)
            if extra is not None:
                extra.append(word)

    def heredoc_backticks(self, body: Any, subs: list[Substitution], depth: int) -> None:
        """Backticks in an unquoted heredoc run, but the grammar leaves them as plain text:
        find each `…` span in the body's text pieces and parse it as a substitution."""
        for child in body.children or [body]:
            if child is not body and child.is_named and self.cat[child.kind_id] != _C_OTHER:
                continue  # $(…), ${…}: parsed already
            text = self.node_text(child)
            for match in _BACKTICK_SPAN.finditer(text):
                if not match.group(2):
                    self.problem(
                        "parse.error",
                        "unterminated backtick in a heredoc",
                        child.start_byte,
                        child.end_byte,
                    )
                    return
                code = _BACKTICK_UNESCAPE.sub(r"\1", match.group(1))
                if depth + 1 > MAX_SUBSTITUTION_DEPTH or self.reparse is None:
                    self.problem(
                        "parse.too-deep",
                        f"substitutions nested deeper than {MAX_SUBSTITUTION_DEPTH}",
                        child.start_byte,
                        child.end_byte,
                    )
                    return
                inner = self.reparse(code, depth + 1)
                self.problems.extend(inner.problems)
                subs.append(Substitution("`", inner.segments))

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

    # -- words -----------------------------------------------------------------------------

    def word(self, node: Any, subs: list[Substitution], depth: int) -> tuple[str, bool]:
        """Unquote one word-like node; returns (text, static)."""
        cat = self.cat[node.kind_id]
        if cat == _C_WORD:
            raw = self.node_text(node)
            if self.plain:
                return raw, True
            return _unescape_unquoted(raw), _UNQUOTED_EXPANDS.search(raw) is None
        if cat == _C_RAW_STRING:
            return self.node_text(node)[1:-1], True
        if cat == _C_STRING:
            return self.double_quoted(node, subs, depth)
        if cat == _C_TRANSLATED:
            return self.word_parts([c for c in node.children if c.is_named], subs, depth)
        if cat == _C_ANSI_C:
            return decode_ansi_c(self.node_text(node)[2:-1]), True
        if cat == _C_CONCAT:
            return self.word_parts(node.children, subs, depth)
        if cat in (_C_CMD_SUB, _C_PROC_SUB):
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
                if cat == _C_DOLLAR and part.end_byte < len(self.srcb) and (
                    _EXPANSION_START.match(self.srcb, part.end_byte) is not None
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
            unquoted.append(self.node_text(part) if cat == _C_WORD else "\x00")
            is_static = is_static and part_static
        if is_static and len(parts) > 1 and not self.plain:
            is_static = _UNQUOTED_EXPANDS.search("".join(unquoted)) is None
        return "".join(pieces), is_static

    def double_quoted(self, node: Any, subs: list[Substitution], depth: int) -> tuple[str, bool]:
        pieces: list[str] = []
        is_static = True
        for child in node.children:
            cat = self.cat[child.kind_id]
            if cat == _C_STRING_CONTENT:
                pieces.append(_unescape_double_quoted(self.node_text(child)))
            elif not child.is_named:
                if child.end_byte - child.start_byte > 1:
                    # the grammar folds whitespace before the closing quote into its token:
                    # `" "` and `" $a "` end in a `"` token whose text is ` "`
                    text = self.node_text(child)
                    if text.endswith('"') and text[:-1].isspace():
                        pieces.append(text[:-1])
                continue
            elif cat == _C_CMD_SUB:
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
                if cat in (_C_CMD_SUB, _C_PROC_SUB):
                    self.substitution(child, subs, depth)
                elif child.child_count:
                    stack.append(child)

    def substitution(self, node: Any, subs: list[Substitution], depth: int) -> None:
        children = node.children
        kind = children[0].type if children and not children[0].is_named else "$("
        if kind in ("$`", "``"):
            kind = "`"
        if depth + 1 > MAX_SUBSTITUTION_DEPTH:
            self.problem(
                "parse.too-deep",
                f"substitutions nested deeper than {MAX_SUBSTITUTION_DEPTH}",
                node.start_byte,
                node.end_byte,
            )
            subs.append(Substitution(kind, ()))
            return
        inner: list[Segment] = []
        for child in children:
            cat = self.cat[child.kind_id]
            if cat in _STATEMENTS:
                self.statement(child, inner, (), depth + 1, 0, None)
            elif cat in _REDIRECTS:
                # `$(< file)` reads the file
                inner.append(self.redirect_only(child, (), depth + 1, None))
        subs.append(Substitution(kind, tuple(inner)))


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
        categories = [_C_OTHER] * 65536
        categories[65535] = _C_ERROR
        for kind_id in range(self.language.node_kind_count):
            name = self.language.node_kind_for_id(kind_id)
            if name is None:
                continue
            if self.language.node_kind_is_named(kind_id):
                categories[kind_id] = _CATEGORY_BY_NAME.get(name, _C_OTHER)
            else:
                categories[kind_id] = _TOKEN_CATEGORY.get(name, _C_TOKEN)
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
        control = _CONTROL_CHARS.search(command)
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
        scanned = srcb if len(src) == len(srcb) else _NON_ASCII_BYTE.sub(b"%", srcb)
        # a trailing newline never changes what bash runs and avoids the slow GLR path
        tree = self.parser.parse(scanned if scanned.endswith(b"\n") else scanned + b"\n")
        root = tree.root_node
        walk = _Walk(src, srcb, self._categories, self._reparse)
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


def _ends_in_command(node: Any, cat_of: list[int]) -> bool:
    """True if the statement ``node`` ends in a simple command (through lists and pipelines)."""
    while node is not None and cat_of[node.kind_id] in (_C_LIST, _C_PIPELINE):
        node = node.named_children[-1] if node.named_child_count else None
    return node is not None and cat_of[node.kind_id] == _C_COMMAND


def _describe_error(walk: _Walk, root: Any) -> None:
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


# --- the fast path ----------------------------------------------------------------------------
# Most agent commands are plain words joined by `|`, `&&`, `||`, `;` with simple redirects:
# `git status`, `pytest -x -q 2>&1 | tail -20`. For those, tree-sitter (and the walk over its
# tree) is most of the cost of classifying, and the result is fully determined by a tiny
# grammar. `fast_parse` recognises exactly that grammar and builds the same ParsedCommand the
# tree-sitter path builds (tests compare the two on generated and real commands); anything
# outside it (a `$`, a backslash, a glob, a keyword, a heredoc, a tab…) returns None and goes
# to tree-sitter.

_FAST_MAX_LENGTH = 2048
# Only these characters: no `$`, backtick, backslash, glob, brace, `#`, `!`, `(`, newline, tab
# or non-ASCII character.
_FAST_CHARS = re.compile(r"[A-Za-z0-9_@%+=:,./~ '\"|&;<>$(){}*?-]*")
# One alternative per token kind: spaces, operator, redirect, word, anything else (bail out).
# `$NAME`, `${NAME}` and `$(command)` without nesting, double quotes or backticks inside.
# (An unbraced `$NAME` only at the end of a word or before `/` or `"`: the grammar mis-splits
# `a'q'$X.y`.)
_FAST_DOLLAR = (
    r"\$(?:[A-Za-z_][A-Za-z0-9_]*(?=[/\"\s;&|<>]|$)|\{[A-Za-z_][A-Za-z0-9_]*\}"
    r"|\([^()\"`$\\]*\))"
)
_FAST_SCAN = re.compile(
    r"( +)|(&&|\|\||[;|])|(&>>|&>|[0-9]?(?:>>|>&|>|<))"
    r"|((?:[A-Za-z0-9_@%+=:,./~*?-]+|'[^']*'|\"(?:[^\"$`\\]|" + _FAST_DOLLAR + r")*\"|"
    + _FAST_DOLLAR + r")+)|(.)"
)
# What can follow a `$` that starts an expansion.
_EXPANSION_START = re.compile(rb"[A-Za-z0-9_{(@*#?$!-]")
# Without these characters, words and operators can be split with str methods…
_FAST_NEEDS_SCAN = re.compile(r"['\"$(){}*?]")
# … and also with quotes, if no quoted text holds a blank, an operator or an expansion.
_FAST_NEEDS_TOKENS = re.compile(r"[$(){}*?]")
_FAST_SIMPLE_QUOTES = re.compile(r"'[^' |&;<>]*'|\"[^\" |&;<>$`\\]*\"")
_FAST_SUBSTITUTION = re.compile(r"\$\(([^()\"`$\\]*)\)")
_FAST_OPERATOR = re.compile(r"(&&|\|\||[;|])")
_FAST_REDIRECT = re.compile(r"([0-9]?)(&>>|&>|>>|>&|>|<)(.*)")
# One command of plain words: the commonest shape, split without a tokenizer.
_FAST_PLAIN = re.compile(r" *[A-Za-z0-9_@%+=:,./~-][A-Za-z0-9_@%+=:,./~ -]*")
_FAST_PIECE = re.compile(r"'([^']*)'|\"([^\"]*)\"|([^'\"]+)")
_FAST_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# First words the grammar turns into something other than a simple command.
_FAST_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
     "function", "select", "time", "coproc", "in", "declare", "export", "local", "readonly",
     "typeset", "unset"}
)


_FAST_KEYWORD_GLUED = re.compile("(?:" + "|".join(sorted(_FAST_KEYWORDS)) + ")['\"$]")


def _fast_bad_name(word: str) -> bool:
    """Command words the grammar treats specially: keywords (also quoted: `if''`), `a+=1` and
    `--x=y` (it calls them assignments), `-`, `@`/`%`/`?` (parse errors in that position),
    and expansions and globs (it sometimes cuts `$NAME` in two there)."""
    if not _FAST_BAD_NAME_CHARS.isdisjoint(word) or word == "-" or word in _FAST_KEYWORDS:
        return True
    if "'" in word or '"' in word:
        return _fast_word(word) in _FAST_KEYWORDS or _FAST_KEYWORD_GLUED.match(word) is not None
    return False


_FAST_BAD_NAME_CHARS = frozenset("=@%$*?")
_new_segment = tuple.__new__  # a Segment with every field given, without NamedTuple overhead


def _fast_word(text: str) -> str:
    """Remove the quotes of a fast-path word (no escapes can occur in one)."""
    if "'" not in text and '"' not in text:
        return text
    return "".join(m.group(1) or m.group(2) or m.group(3) or "" for m in _FAST_PIECE.finditer(text))


def fast_parse(command: str, depth: int = 0) -> ParsedCommand | None:
    """Parse a command that lies within the fast-path grammar; None means "use tree-sitter".
    ``depth`` is the substitution depth the command is at (as for :func:`parse`)."""
    if len(command) > _FAST_MAX_LENGTH:
        return None
    if _FAST_PLAIN.fullmatch(command) is not None:
        # the commonest shape: one command, plain words (`git status`, `ls -la src`)
        words = command.split()
        if not _fast_bad_name(words[0]):
            text = command.strip(" ")
            segment = _new_segment(Segment, (text, tuple(words), (True,) * len(words), (), (),
                                             (), text, 0, 0, (), "command", None))
            return ParsedCommand(command, (segment,))
    if _FAST_CHARS.fullmatch(command) is None:
        return None
    if _FAST_NEEDS_SCAN.search(command) is None:
        return _fast_parse_unquoted(command)
    if _FAST_NEEDS_TOKENS.search(command) is None and (
        _FAST_SIMPLE_QUOTES.sub("", command).find("'") < 0
        and _FAST_SIMPLE_QUOTES.sub("", command).find('"') < 0
    ):
        return _fast_parse_unquoted(command)  # quotes hold no blank or operator
    segments: list[Segment] = []
    words = []
    statics: list[bool] = []
    subs: list[Substitution] = []
    assignments: list[Assignment] = []
    redirects: list[Redirect] = []
    pending: tuple[str, int | None] | None = None  # a redirect waiting for its target
    first = name_start = -1
    position = last = 0
    pipelines = pipeline_id = stage = pipeline_start = 0
    previous = ""
    for space, operator, redirect, word, bad in _FAST_SCAN.findall(command):
        if space:
            position += len(space)
            continue
        if bad:
            return None
        if word:
            end = position + len(word)
            static = True
            if "$" in word or "*" in word or "?" in word:
                expanded = _fast_expansions(word, subs, depth)
                if expanded is None:
                    return None
                static = expanded
            if pending is not None:
                target = _fast_word(word)
                if pending[0] == ">&" and not target.isdigit():
                    return None
                redirects.append(Redirect(pending[0], target, static, pending[1]))
                pending = None
            elif name_start < 0 and _FAST_ASSIGNMENT.match(word) is not None:
                name, _, value = word.partition("=")
                if not static and ("'" in value or '"' in value):
                    return None  # the grammar cuts `A=a'b'$X/y` in two (tree-sitter fails closed)
                assignments.append(Assignment(name, _fast_word(value), static))
            else:
                if name_start < 0:
                    if _fast_bad_name(word):
                        return None
                    name_start = position
                words.append(_fast_word(word))
                statics.append(static)
            if first < 0:
                first = position
            position = last = end
            continue
        if redirect:
            # after the command word, separated from the word before it, one target each
            if pending is not None or name_start < 0 or command[position - 1] != " ":
                return None
            fd = None
            if redirect[0].isdigit():
                fd = int(redirect[0])
                redirect = redirect[1:]
            pending = (redirect, fd)
            position += len(redirect) + (fd is not None)
            last = position
            continue
        # an operator ends a command
        if pending is not None or first < 0 or (
            not words and (redirects or operator == "|" or previous == "|"
                           or command[position - 1] == "=")
        ):
            return None  # `; a`, `a && && b`, `| a`, `a >`, `X=1 | b`, `a | X=1`, `A=||b`
        if previous == "|":
            stage += 1
        else:
            stage = 0
            pipeline_start = len(segments)
            pipeline_id = 0
            if operator == "|":
                pipelines += 1
                pipeline_id = pipelines
        segments.append(_fast_segment(command, first, last, name_start, words, statics,
                                      assignments, redirects, subs, pipeline_id, stage,
                                      pipeline_start))
        words = []
        statics = []
        subs = []
        assignments = []
        redirects = []
        first = name_start = -1
        previous = operator
        position += len(operator)
    if pending is not None:
        return None
    if first >= 0:
        if previous == "|":
            stage += 1
        else:
            stage = pipeline_id = 0
        if not words and (redirects or stage):
            return None
        segments.append(_fast_segment(command, first, last, name_start, words, statics,
                                      assignments, redirects, subs, pipeline_id, stage,
                                      pipeline_start))
    elif previous != ";":
        return None  # empty, or ends in `|`, `&&`, `||`
    return ParsedCommand(command, tuple(segments))


def _fast_parse_unquoted(command: str) -> ParsedCommand | None:
    """The fast path when operators and words can be split with str methods: no quotes, or
    only quotes around text without blanks or operators (``grep -n 'TODO' src``)."""
    quoted = "'" in command or '"' in command
    pieces = _FAST_OPERATOR.split(command)
    segments: list[Segment] = []
    pipelines = pipeline_id = stage = pipeline_start = 0
    previous = ""
    count = len(pieces)
    for index in range(0, count, 2):
        part = pieces[index]
        operator = pieces[index + 1] if index + 1 < count else ""
        tokens = part.split()
        if not tokens:
            if operator or previous != ";" or index == 0:
                return None  # `; a`, `a && && b`, `a |` (only a trailing `;` may end it)
            break
        words: list[str] = []
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        position = 0
        size = len(tokens)
        if "=" not in part and "<" not in part and ">" not in part and "&" not in part:
            if _fast_bad_name(tokens[0]):
                return None
            # plain words only (the commonest piece)
            words = [_fast_word(token) for token in tokens] if quoted else tokens
            position = size
        while position < size:
            token = tokens[position]
            position += 1
            first = token[0]
            if first in "<>&" or (first.isdigit() and len(token) > 1 and token[1] in "<>"):
                redirect = _FAST_REDIRECT.fullmatch(token)
                if redirect is None or not words:
                    return None
                fd_text, op, target = redirect.groups()
                if not target:
                    if position >= size:
                        return None
                    target = tokens[position]
                    position += 1
                if "<" in target or ">" in target or "&" in target:
                    return None
                if quoted:
                    target = _fast_word(target)
                if op == ">&" and not target.isdigit():
                    return None
                redirects.append(Redirect(op, target, True, int(fd_text) if fd_text else None))
            elif "<" in token or ">" in token or "&" in token:
                return None  # glued redirects (`a>f`), a lone `&`
            elif not words and _FAST_ASSIGNMENT.match(token) is not None:
                name, _, value = token.partition("=")
                assignments.append(Assignment(name, _fast_word(value) if quoted else value, True))
            else:
                if not words and _fast_bad_name(token):
                    return None
                words.append(_fast_word(token) if quoted else token)
        if previous == "|":
            stage += 1
        else:
            stage = 0
            pipeline_start = len(segments)
            pipeline_id = 0
            if operator == "|":
                pipelines += 1
                pipeline_id = pipelines
        text = part.strip(" ")
        feed: Feed = (range(pipeline_start, pipeline_start + stage),) if stage else ()
        if not words:
            if redirects or pipeline_id or (operator and part.endswith("=")):
                return None  # `A=||b`: the grammar reads the operator as the value
            segment = _new_segment(Segment, (text, (), (), tuple(assignments), (), (), "", 0, 0,
                                             feed, "assignment", None))
        else:
            stripped = text.split(None, len(assignments))[-1] if assignments else text
            segment = _new_segment(Segment, (text, tuple(words), (True,) * len(words),
                                             tuple(assignments), tuple(redirects), (), stripped,
                                             pipeline_id, stage, feed, "command", None))
        segments.append(segment)
        previous = operator
    if previous not in ("", ";"):
        return None
    return ParsedCommand(command, tuple(segments))


def _fast_expansions(word: str, subs: list[Substitution], depth: int) -> bool | None:
    """Is a fast-path word static (no expansion, no unquoted glob)? Its `$(…)` substitutions
    are parsed (fast path only) and added to ``subs``; None when one cannot be (the caller
    falls back to tree-sitter)."""
    static = True
    for piece in _FAST_PIECE.finditer(word):
        unquoted = piece.group(3)
        if unquoted is not None and ("*" in unquoted or "?" in unquoted):
            static = False  # a glob
        text = piece.group(2) if piece.group(2) is not None else unquoted
        if text is None or "$" not in text:
            continue  # single-quoted, or nothing to expand
        static = False
        for match in _FAST_SUBSTITUTION.finditer(text):
            if depth + 1 > MAX_SUBSTITUTION_DEPTH:
                return None
            inner = fast_parse(match.group(1), depth + 1)
            if inner is None or not inner.segments:
                return None
            subs.append(Substitution("$(", inner.segments))
    return static


def _fast_segment(
    command: str,
    first: int,
    last: int,
    name_start: int,
    words: list[str],
    statics: list[bool],
    assignments: list[Assignment],
    redirects: list[Redirect],
    subs: list[Substitution],
    pipeline_id: int,
    stage: int,
    pipeline_start: int,
) -> Segment:
    text = command[first:last]
    feed: Feed = (range(pipeline_start, pipeline_start + stage),) if stage else ()
    if not words:
        return Segment(
            text, (), (), tuple(assignments), (), tuple(subs), "", 0, 0, feed, "assignment"
        )
    return Segment(
        text,
        tuple(words),
        tuple(statics),
        tuple(assignments),
        tuple(redirects),
        tuple(subs),
        text if not assignments else command[name_start:last],
        pipeline_id,
        stage,
        feed,
    )
