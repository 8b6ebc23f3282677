"""The vocabulary of the tree walk: tree-sitter node kinds mapped to small categories, the
patterns that find gaps, globs and escapes, and bash's unquoting rules (plain, double-quoted,
``$'…'``)."""

from __future__ import annotations

import re

# --- node categories ------------------------------------------------------------------------
# Each tree-sitter kind id maps to one small int through a flat list (the cheapest lookup
# Python offers); anonymous tokens get categories too, so no string compare is needed.

C_OTHER = 0
C_CONTAINER = 1  # program, subshell, do_group, if/elif/else, while, case_item
C_PIPELINE = 2
C_LIST = 3
C_REDIRECTED = 4
C_COMMAND = 5
C_ASSIGN = 6
C_ASSIGNS = 7
C_DECL = 8
C_TEST = 9
C_FUNCTION = 10
C_COMMENT = 11
C_FILE_REDIRECT = 12
C_HEREDOC_REDIRECT = 13
_C_HERESTRING_REDIRECT = 14
C_WORD = 15
C_RAW_STRING = 16
C_STRING = 17
C_ANSI_C = 18
C_CONCAT = 19
_C_EXPANSION = 20
C_CMD_SUB = 21
C_PROC_SUB = 22
C_COMMAND_NAME = 23
C_STRING_CONTENT = 24
C_CONTROL = 25  # for/select/case/c-style for: word lists + bodies
C_ERROR = 26
C_COMPOUND = 27  # { …; } and (( … ))
C_VARIABLE_NAME = 28
C_TOKEN = 29  # any other anonymous token
C_PIPE_OP = 30  # | and |&
C_DOLLAR = 31  # the `$` of $"…"
C_HEREDOC_START = 32
C_HEREDOC_BODY = 33
C_HEREDOC_END = 34
C_FILE_DESCRIPTOR = 35
C_SEPARATOR = 36  # && || ; & ;; (ignored, structure carries the meaning)
C_TRANSLATED = 37  # $"…": a double-quoted string behind an anonymous `$`

CATEGORY_BY_NAME: dict[str, int] = {
    "program": C_CONTAINER,
    "subshell": C_CONTAINER,
    "do_group": C_CONTAINER,
    "if_statement": C_CONTAINER,
    "elif_clause": C_CONTAINER,
    "else_clause": C_CONTAINER,
    "while_statement": C_CONTAINER,
    "case_item": C_CONTAINER,
    "negated_command": C_CONTAINER,
    "compound_statement": C_COMPOUND,
    "for_statement": C_CONTROL,
    "c_style_for_statement": C_CONTROL,
    "case_statement": C_CONTROL,
    "pipeline": C_PIPELINE,
    "list": C_LIST,
    "redirected_statement": C_REDIRECTED,
    "command": C_COMMAND,
    "variable_assignment": C_ASSIGN,
    "variable_assignments": C_ASSIGNS,
    "declaration_command": C_DECL,
    "unset_command": C_DECL,
    "test_command": C_TEST,
    "function_definition": C_FUNCTION,
    "comment": C_COMMENT,
    "file_redirect": C_FILE_REDIRECT,
    "heredoc_redirect": C_HEREDOC_REDIRECT,
    "herestring_redirect": _C_HERESTRING_REDIRECT,
    "word": C_WORD,
    "number": C_WORD,
    "raw_string": C_RAW_STRING,
    "string": C_STRING,
    "translated_string": C_TRANSLATED,
    "ansi_c_string": C_ANSI_C,
    "concatenation": C_CONCAT,
    "simple_expansion": _C_EXPANSION,
    "expansion": _C_EXPANSION,
    "command_substitution": C_CMD_SUB,
    "process_substitution": C_PROC_SUB,
    "command_name": C_COMMAND_NAME,
    "string_content": C_STRING_CONTENT,
    "variable_name": C_VARIABLE_NAME,
    "heredoc_start": C_HEREDOC_START,
    "heredoc_body": C_HEREDOC_BODY,
    "heredoc_end": C_HEREDOC_END,
    "file_descriptor": C_FILE_DESCRIPTOR,
}
TOKEN_CATEGORY: dict[str, int] = {
    "|": C_PIPE_OP,
    "|&": C_PIPE_OP,
    "$": C_DOLLAR,
    "&&": C_SEPARATOR,
    "||": C_SEPARATOR,
    ";": C_SEPARATOR,
    "&": C_SEPARATOR,
    ";;": C_SEPARATOR,
    ";&": C_SEPARATOR,
    ";;&": C_SEPARATOR,
    "\n": C_SEPARATOR,
}

STATEMENTS = frozenset(
    {
        C_CONTAINER,
        C_PIPELINE,
        C_LIST,
        C_REDIRECTED,
        C_COMMAND,
        C_ASSIGN,
        C_ASSIGNS,
        C_DECL,
        C_TEST,
        C_FUNCTION,
        C_CONTROL,
        C_COMPOUND,
    }
)
REDIRECTS = frozenset({C_FILE_REDIRECT, C_HEREDOC_REDIRECT, _C_HERESTRING_REDIRECT})
IGNORED = frozenset({C_COMMENT, C_SEPARATOR, C_TOKEN, C_PIPE_OP})

# Whitespace allowed between sibling nodes: blanks, newlines and line continuations.
BLANK_GAP = re.compile(rb"(?:[ \t\n]|\\\n)*")
ONLY_CONTINUATIONS = re.compile(rb"(?:\\\n)+")
# A variable name, optionally subscripted (`a[$i]`), as bash accepts before `=`.
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[.*\])?", re.S)
# Backtick command substitutions in heredoc text (group 1 is None when unterminated).
BACKTICK_SPAN = re.compile(r"(?<!\\)(?:\\\\)*`((?:[^`\\]|\\.)*)(`?)", re.S)
BACKTICK_UNESCAPE = re.compile(r"\\([`\\$])")
QUOTED_DELIMITER = re.compile(r"['\"\\]")
# `cmd - <<EOF`, `cmd - 2>&1`: a `-` argument the grammar drops before a redirect
LONE_DASH = re.compile(rb"(?:[ \t]|\\\n)+-(?:[ \t]|\\\n)+")
# Every byte of a multi-byte UTF-8 character; replaced by `%` before the C scanner sees it.
NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")
# Characters bash and the grammar may split differently; the input fails closed on them.
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# If none of these occurs anywhere in the command, no word needs unescaping or glob checks.
WORD_SPECIAL = re.compile(r"[\\*?\[{]")
# Unquoted text that bash expands: globs and brace expansion ({a,b} or {1..3}).
UNQUOTED_EXPANDS = re.compile(r"(?<!\\)[*?\[]|(?<!\\)\{[^{}]*(?:,|\.\.)[^{}]*\}")
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


def unescape_unquoted(text: str) -> str:
    """Remove backslash quoting from an unquoted word: ``\\x`` → ``x``, ``\\<newline>`` → ''."""
    if "\\" not in text:
        return text
    return _UNQUOTED_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def unescape_double_quoted(text: str) -> str:
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


# What can follow a `$` that starts an expansion.
EXPANSION_START = re.compile(rb"[A-Za-z0-9_{(@*#?$!-]")
