"""Parse a shell command with tree-sitter-bash into flat, unquoted *segments*.

A segment is one simple command as bash would run it: its argv with quoting removed, its leading
``VAR=value`` assignments, its redirects, its place in a pipeline and the command or process
substitutions nested inside it (as child segment lists). The risk classifier works on segments
only, so every decision about shell *syntax* is made here and every decision about *risk* in
:mod:`stockade.risk`.

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

Layout: ``model`` (the result types and limits), ``syntax`` (node categories, escapes),
``words`` → ``redirects`` → ``commands`` → ``walk`` (the tree walk, one layer each),
``parser`` (tree-sitter, input checks, repairs) and ``fast`` (plain commands without
tree-sitter; ``tests/unit/test_shell_fast_path.py`` holds it to the tree walk's result).
"""

from __future__ import annotations

from stockade.shell.fast import fast_parse
from stockade.shell.model import (
    MAX_INPUT_BYTES,
    MAX_REPAIRS,
    MAX_SUBSTITUTION_DEPTH,
    MAX_TREE_DEPTH,
    Assignment,
    Feed,
    ParsedCommand,
    Problem,
    Redirect,
    Segment,
    Substitution,
)
from stockade.shell.parser import ShellParser, get_parser, parse
from stockade.shell.syntax import decode_ansi_c

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_REPAIRS",
    "MAX_SUBSTITUTION_DEPTH",
    "MAX_TREE_DEPTH",
    "Assignment",
    "Feed",
    "ParsedCommand",
    "Problem",
    "Redirect",
    "Segment",
    "ShellParser",
    "Substitution",
    "decode_ansi_c",
    "fast_parse",
    "get_parser",
    "parse",
]
