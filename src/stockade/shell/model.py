"""What a parsed command is: segments, their words, assignments, redirects and substitutions,
and the limits beyond which parsing fails closed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

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


def extend_feed(feed: Feed, start: int, stop: int) -> Feed:
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
