"""The fast path: plain commands parsed without tree-sitter, building exactly what the tree
walk builds (``tests/unit/test_shell_fast_path.py`` compares the two)."""

from __future__ import annotations

import re

from stockade.shell.model import (
    MAX_SUBSTITUTION_DEPTH,
    Assignment,
    Feed,
    ParsedCommand,
    Redirect,
    Segment,
    Substitution,
)

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
    r"|((?:[A-Za-z0-9_@%+=:,./~*?-]+|'[^']*'|\"(?:[^\"$`\\]|"
    + _FAST_DOLLAR
    + r")*\"|"
    + _FAST_DOLLAR
    + r")+)|(.)"
)
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
    {
        "if",
        "then",
        "else",
        "elif",
        "fi",
        "for",
        "while",
        "until",
        "do",
        "done",
        "case",
        "esac",
        "function",
        "select",
        "time",
        "coproc",
        "in",
        "declare",
        "export",
        "local",
        "readonly",
        "typeset",
        "unset",
    }
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
            segment = _new_segment(
                Segment,
                (
                    text,
                    tuple(words),
                    (True,) * len(words),
                    (),
                    (),
                    (),
                    text,
                    0,
                    0,
                    (),
                    "command",
                    None,
                ),
            )
            return ParsedCommand(command, (segment,))
    if _FAST_CHARS.fullmatch(command) is None:
        return None
    if command[:3] == "if ":
        return _fast_parse_if(command, depth)
    if _FAST_NEEDS_SCAN.search(command) is None:
        return _fast_parse_unquoted(command)
    if _FAST_NEEDS_TOKENS.search(command) is None:
        unquoted = _FAST_SIMPLE_QUOTES.sub("", command)
        if "'" not in unquoted and '"' not in unquoted:
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
        if (
            pending is not None
            or first < 0
            or (
                not words
                and (
                    redirects or operator == "|" or previous == "|" or command[position - 1] == "="
                )
            )
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
        segments.append(
            _fast_segment(
                command,
                first,
                last,
                name_start,
                words,
                statics,
                assignments,
                redirects,
                subs,
                pipeline_id,
                stage,
                pipeline_start,
            )
        )
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
        segments.append(
            _fast_segment(
                command,
                first,
                last,
                name_start,
                words,
                statics,
                assignments,
                redirects,
                subs,
                pipeline_id,
                stage,
                pipeline_start,
            )
        )
    elif previous != ";":
        return None  # empty, or ends in `|`, `&&`, `||`
    return ParsedCommand(command, tuple(segments))


def _fast_parse_if(command: str, depth: int) -> ParsedCommand | None:
    """``if A; then B; fi`` (and ``… else C; fi``) on one line: bash runs the same simple
    commands as ``A; B; C``, and the tree walk builds the same segments for it. Any keyword
    among the words (a nested ``if``, ``then`` as an argument, ``elif``) goes to tree-sitter."""
    if command[-4:] != "; fi":
        return None
    condition, has_then, rest = command[3:-4].partition("; then ")
    if not has_then:
        return None
    then, has_else, otherwise = rest.partition("; else ")
    parts = [condition, then, otherwise] if has_else else [condition, then]
    for part in parts:
        if (
            part[:1] in ("", " ")
            or part[-1:] in ";&| "
            or ";;" in part
            or not _FAST_KEYWORD_WORDS.isdisjoint(part.split())
            or _FAST_BALANCED.fullmatch(part) is None  # a quote must not run into `; then`
        ):
            return None
    flat = fast_parse("; ".join(parts), depth)
    if flat is None:
        return None
    return ParsedCommand(command, flat.segments)


_FAST_BALANCED = re.compile(r"(?:[^'\"]|'[^']*'|\"[^\"]*\")*")
#: Words that make a part of an ``if`` more than simple commands (also quoted: ``'fi'``).
_FAST_KEYWORD_WORDS = frozenset(
    {*_FAST_KEYWORDS, "!", "{", "}", "[[", "]]"}
    | {f"{q}{k}{q}" for k in ("if", "then", "else", "elif", "fi") for q in ("'", '"')}
)


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
            segment = _new_segment(
                Segment,
                (text, (), (), tuple(assignments), (), (), "", 0, 0, feed, "assignment", None),
            )
        else:
            stripped = text.split(None, len(assignments))[-1] if assignments else text
            segment = _new_segment(
                Segment,
                (
                    text,
                    tuple(words),
                    (True,) * len(words),
                    tuple(assignments),
                    tuple(redirects),
                    (),
                    stripped,
                    pipeline_id,
                    stage,
                    feed,
                    "command",
                    None,
                ),
            )
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
