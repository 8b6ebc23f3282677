"""The classifier's types: what it returns (:class:`Reason`, :class:`Assessment`), how a program
is described (:class:`Spec`, :class:`Flag` and what a flag's value is, :data:`Takes`), and the
working records of one classification (:class:`Found`, :class:`Call`, :class:`Args`).

A program module (``stockade.risk.programs.*``) is a list of Specs: the option set of one
program, what its operands are, its subcommands, the small analyser (``check``) for what data
cannot say, and examples that a test runs. The engine applies a Spec generically
(:mod:`stockade.risk.specs`); nothing about a particular program lives in the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, NamedTuple, TypeAlias, Union

from stockade.shell import Segment
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

R = Tier.READ_ONLY
L = Tier.LOW
M = Tier.MEDIUM
H = Tier.HIGH
D = Tier.DESTRUCTIVE

Words: TypeAlias = tuple[str, ...]
Statics: TypeAlias = tuple[bool, ...]

# --- results ---------------------------------------------------------------------------------


class Reason(NamedTuple):
    """Why one segment got its tier: a stable rule id, the segment text, the tier, a detail.
    (Immutable; a NamedTuple rather than a dataclass because classify makes one per segment
    and this is twice as fast to build.)"""

    rule_id: str
    segment: str
    tier: Tier
    detail: str


@dataclass(frozen=True, slots=True)
class Assessment:
    """The result of :func:`stockade.risk.classify`: the command's tier (the maximum over
    everything it runs), the deciding reason(s) of every segment in source order, and the
    parsed segments."""

    tier: Tier
    reasons: tuple[Reason, ...]
    segments: tuple[Segment, ...]

    @property
    def rule_ids(self) -> frozenset[str]:
        """Every rule id among the reasons (what the permissions layer matches hard denies on)."""
        return frozenset(reason.rule_id for reason in self.reasons)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready view (``stockade classify --json``)."""
        return {
            "tier": self.tier.label,
            "reasons": [
                {
                    "rule_id": reason.rule_id,
                    "segment": reason.segment,
                    "tier": reason.tier.label,
                    "detail": reason.detail,
                }
                for reason in self.reasons
            ],
        }


# --- what a flag's value (or an operand) is ------------------------------------------------------

Takes: TypeAlias = Literal[
    "value",
    "file",
    "read",
    "write",
    "output",
    "pattern",
    "pattern-file",
    "optional",
    "program",
    "command",
    "argv",
    "code",
    "script",
    "module",
    "rest",
    "git-config",
]
"""What a word is, for a flag's value or a positional operand:

=============  ===============================================================================
value          a plain value (a count, a name, a format); only ``$SECRET`` expansions count
file           may name a file the program uses: a secret name raises it (``secret.read``)
read           a file whose content is read: secrets and paths outside the project are high
write          a file that is written: devices destructive; protected, home, outside high
output         a file the program writes its output to, counted like ``> FILE`` (a project
               file is medium, ``/tmp`` low)
pattern        a search pattern (fills a search tool's pattern operand)
pattern-file   a file of search patterns: read, and it fills the pattern operand
optional       an optional value glued to the flag (``-i.bak``), never the next word
program        a program (name or path) the command runs: classified as a command word, so
               the segment is at least as dangerous as that program
command        shell code the command runs: parsed and classified like any command
argv           the following words, up to ``;`` or ``+`` (or the end), are a command line
               the program runs: classified
code           inline code in a language the classifier does not read: destructive
script         a script file an interpreter runs; the words after it are its arguments
module         a Python module run as a program (``python -m``)
rest           the words from here on are not this program's options: its check decides
               what they are (a container's command, git's subcommand)
git-config     a git ``key=value`` setting: keys that run programs are destructive
=============  ===============================================================================

As operands, ``argv``, ``command``, ``script`` and ``rest`` end option parsing: the words from
there on belong to what runs.
"""

#: Rules of specs a lone ``--help``/``--version`` makes read-only (not ``shutdown -h``).
_VERSIONED_RULES = frozenset({"program.table", "subcommand.table", "interpreter.stdin"})
#: Operand kinds after which option parsing stops (the rest belongs to what runs).
STOPPING: frozenset[str] = frozenset({"argv", "command", "script", "rest"})
#: The operand and flag value kinds the engine's direct path (``specs._apply_direct``) reads.
_DIRECT_OPERANDS = frozenset({"value", "read", "write", "output", "file", "pattern", "argv"})
_DIRECT_VALUES = frozenset(
    {"value", "read", "write", "output", "file", "optional", "program", "command"}
    | {"pattern", "pattern-file"}
)


@dataclass(frozen=True, eq=False, slots=True)
class Flag:
    """One option of one program: its spellings, what it does to the tier, what its value is.

    ``names`` are spelled as typed: ``-f`` (a short option, which may be bundled: ``-rf``, and
    may carry its value glued on: ``-fFILE``), ``--file`` (``--file=FILE`` or ``--file FILE``),
    or a whole word (``-exec``, ``+x``). ``takes`` is None for an option without a value, a
    :data:`Takes` for one value, or a tuple for several (``jq --rawfile NAME FILE``).

    ``tier`` without ``rule`` is the program's tier when the flag is given (it replaces the
    spec's; the first such flag in the spec's order wins: ``black --check`` is read-only).
    ``tier`` with ``rule`` is a finding of its own (``awk -f FILE``: ``awk.exec``).
    """

    names: tuple[str, ...]
    tier: Tier | None = None
    rule: str | None = None
    takes: Takes | tuple[Takes, ...] | None = None
    why: str = ""
    values: tuple[Takes, ...] = field(init=False, repr=False, compare=False)
    #: its values need no handling (plain values, patterns): the engine can skip them
    inert: bool = field(init=False, repr=False, compare=False)
    #: one value, glued on or the next word, after which option parsing goes on
    simple: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in self.names:
            if len(name) < 2 or name[0] not in "-+":
                raise ValueError(f"flag name {name!r} must start with - or +")
        takes = self.takes
        values: tuple[Takes, ...] = (
            () if takes is None else (takes,) if isinstance(takes, str) else takes
        )
        object.__setattr__(self, "values", values)
        inert = all(kind in ("value", "optional", "pattern") for kind in values)
        object.__setattr__(self, "inert", inert)
        simple = len(values) == 1 and values[0] not in ("optional", "argv", "code", "module")
        object.__setattr__(self, "simple", simple)

    @property
    def sets_tier(self) -> bool:
        """Does this flag replace the program's tier (rather than add a finding)?"""
        return self.tier is not None and self.rule is None


Example: TypeAlias = tuple[str, Tier] | tuple[str, Tier, str]
"""A command and the tier it must get (and optionally a rule id it must report)."""

Check: TypeAlias = Callable[["Context", "Found", "Call", "Args"], None]
"""The analyser for what a spec's data cannot say (a sed script, tar's mode, git checkout)."""

SubTable: TypeAlias = Mapping[str, Union[Tier, "Spec", "SubTable"]]
"""Subcommands: a tier, a spec (options, checks) or a nested table. ``""`` is the entry when
no subcommand follows, ``"*"`` the entry of an unlisted one (absent: an unknown subcommand may
be a plugin or an alias, so it fails closed)."""


class FlagIndex:
    """A spec's flags, indexed for the option parser (built once per spec)."""

    __slots__ = ("long", "plus", "set_flags", "set_order", "short", "short_values")

    def __init__(self, flags: tuple[Flag, ...]) -> None:
        self.short: dict[str, Flag] = {}
        self.long: dict[str, Flag] = {}
        for flag in flags:
            for name in flag.names:
                table = self.short if len(name) == 2 and name[0] == "-" else self.long
                key = name[1] if table is self.short else name
                if key in table:
                    raise ValueError(f"option {name} is listed twice")
                table[key] = flag
        self.set_flags = tuple(flag for flag in flags if flag.sets_tier)
        #: are there whole-word options spelled with ``+`` (``+x``)?
        self.plus = any(name[0] == "+" for name in self.long)
        #: does any short option take a value (so a bundle must be read char by char)?
        self.short_values = any(
            flag.values or flag.tier is not None for flag in self.short.values()
        )
        self.set_order = {flag: position for position, flag in enumerate(self.set_flags)}


@dataclass(frozen=True, eq=False, slots=True)
class Spec:
    """What the classifier knows about one program (or one subcommand).

    ``tier`` is the tier of a plain invocation (None: the ``check`` decides), reported under
    ``rule``. ``operands`` says what the positional words are (the last kind repeats). ``flags``
    is the reviewed option set; None means it was not reviewed (such a program sits on
    ``programs.NOT_REVIEWED``, and its unknown options are taken to be plain flags). ``check``
    runs after the options are parsed; a spec with a check handles its own ``argv``/``script``/
    ``command`` operands. ``examples`` are commands a test classifies. ``parse=False``: the
    check reads the words itself (tar's old-style bundles, chmod's mode that looks like an
    option), with the spec's flags as its data. ``options_first``: the options end at the first
    operand, as getopt's ``+`` mode does (``awk PROGRAM -x`` has a file ``-x``); a program that
    runs a command always reads its options so (``timeout 5 -s x`` runs ``-s``).
    """

    tier: Tier | None
    rule: str = "program.table"
    operands: tuple[Takes, ...] = ("value",)
    flags: tuple[Flag, ...] | None = ()
    subcommands: SubTable | None = None
    check: Check | None = None
    examples: tuple[Example, ...] = ()
    why: str = ""
    parse: bool = True
    options_first: bool = False
    index: FlagIndex = field(init=False, repr=False, compare=False)
    #: do the options end at the first operand (getopt's ``+``: wrappers, awk)?
    stops_options: bool = field(init=False, repr=False, compare=False)
    runs_command: bool = field(init=False, repr=False, compare=False)
    trivial: bool = field(init=False, repr=False, compare=False)
    #: must plain flags be recorded (a check reads them, or unknown ones fail closed)?
    records_flags: bool = field(init=False, repr=False, compare=False)
    #: does a lone ``--version``/``--help`` make it read-only?
    versioned: bool = field(init=False, repr=False, compare=False)
    #: the detail of the spec's own finding, per name it is reported under
    details: dict[str, str] = field(init=False, repr=False, compare=False)
    #: simple enough for the engine's direct path (no check, no subcommands, nothing run)
    direct: bool = field(init=False, repr=False, compare=False)
    operands_without_pattern: tuple[Takes, ...] = field(init=False, repr=False, compare=False)
    file_operands: bool = field(init=False, repr=False, compare=False)
    flag_effects: bool = field(init=False, repr=False, compare=False)
    operand_effects: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        flags = self.flags or ()
        object.__setattr__(self, "index", FlagIndex(flags))
        object.__setattr__(self, "runs_command", "argv" in self.operands)
        object.__setattr__(self, "stops_options", self.options_first or self.runs_command)
        # nothing to parse: no check, no subcommands, plain operands, flags without effects
        trivial = (
            self.check is None
            and self.subcommands is None
            and all(kind == "value" for kind in self.operands)
            and all(not flag.values and flag.tier is None for flag in flags)
        )
        object.__setattr__(self, "trivial", trivial)
        object.__setattr__(
            self,
            "records_flags",
            (self.check is not None and bool(flags)) or "argv" in self.operands,
        )
        object.__setattr__(self, "details", {})
        # a lone --version/--help only prints (not for rules of their own: `shutdown -h`)
        versioned = self.tier is not None and self.rule in _VERSIONED_RULES
        object.__setattr__(self, "versioned", versioned)
        direct = (
            self.check is None
            and self.subcommands is None
            and all(kind in _DIRECT_OPERANDS for kind in self.operands)
            and all(_DIRECT_VALUES.issuperset(flag.values) for flag in flags)
        )
        object.__setattr__(self, "direct", direct)
        #: the operand kinds when an option gave the search pattern (``grep -e P FILE``)
        without = (
            tuple(kind for kind in self.operands if kind != "pattern") or ("value",)
            if "pattern" in self.operands
            else self.operands
        )
        object.__setattr__(self, "operands_without_pattern", without)
        object.__setattr__(self, "file_operands", "file" in self.operands)
        # what the generic pass has to look at after the check
        object.__setattr__(
            self,
            "flag_effects",
            any(not f.inert or (f.tier is not None and f.rule is not None) for f in flags),
        )
        object.__setattr__(
            self,
            "operand_effects",
            any(kind not in ("value", "file", "rest") for kind in self.operands),
        )

    def detail(self, name: str) -> str:
        """What the spec's own finding says (``why``, else ``NAME is TIER``)."""
        text = self.details.get(name)
        if text is None:
            label = self.tier.label if self.tier is not None else "decided by its check"
            text = self.details[name] = self.why or f"{name} is {label}"
        return text


# --- the working records of one classification ------------------------------------------------


class Found:
    """The findings for one segment: its highest tier and the rules that reached it
    (``every``, when asked for, keeps lower findings too)."""

    __slots__ = ("every", "items", "tier")

    def __init__(self, keep_every: bool = False) -> None:
        self.tier: Tier = R
        self.items: list[tuple[str, str]] = []
        self.every: list[tuple[Tier, str, str]] | None = [] if keep_every else None

    def add(self, tier: Tier, rule: str, detail: str) -> None:
        if self.every is not None:
            self.every.append((tier, rule, detail))
        if tier > self.tier:
            self.tier = tier
            self.items = [(rule, detail)]
        elif tier == self.tier:
            self.items.append((rule, detail))


class Call:
    """One (possibly unwrapped) command: its words and the segment it came from. (A class with
    slots rather than a named tuple: the checks read its fields often, and slot reads are the
    interpreter's fast case.)"""

    __slots__ = ("depth", "seg", "siblings", "static", "words")

    def __init__(
        self,
        seg: Segment,
        words: Words,
        static: Statics,
        siblings: tuple[Segment, ...],
        depth: int,
    ) -> None:
        self.seg = seg
        self.words = words
        self.static = static
        self.siblings = siblings
        self.depth = depth

    def shifted(self, start: int) -> Call:
        """The command that starts at word ``start`` (a wrapper's wrapped command)."""
        return Call(self.seg, self.words[start:], self.static[start:], self.siblings, self.depth)

    def replaced(self, words: Words, static: Statics) -> Call:
        return Call(self.seg, words, static, self.siblings, self.depth)


class Given:
    """A flag as given on the command line, with its value(s)."""

    __slots__ = ("flag", "index", "name", "statics", "values")

    def __init__(self, flag: Flag, name: str, values: Words, statics: Statics, index: int) -> None:
        self.flag = flag
        self.name = name
        self.values = values
        self.statics = statics
        self.index = index

    def __repr__(self) -> str:
        return f"Given({self.name!r}, {self.values!r})"

    @property
    def value(self) -> str | None:
        return self.values[0] if self.values else None


class Args:
    """A command's arguments parsed against its spec: the flags given (with their values), the
    operands (word, static, index, kind), where the unparsed rest starts (what a wrapper runs,
    an interpreter's script), and options the spec does not list."""

    __slots__ = (
        "end_of_options",
        "given",
        "name",
        "operands",
        "placeholder",
        "rest",
        "spec",
        "unknown",
    )

    def __init__(self, name: str, rest: int, spec: Spec | None = None) -> None:
        self.name = name
        self.spec = spec
        self.given: list[Given] = []
        self.operands: list[tuple[str, bool, int, Takes]] = []
        self.rest = rest
        #: the first option the spec does not list ("" when there is none)
        self.unknown = ""
        #: what ``{}`` stands for in an ``argv`` value (find's start directory)
        self.placeholder = "./…"
        #: the index of a ``--`` that ended the options, else -1
        self.end_of_options = -1

    def has(self, *flags: Flag) -> bool:
        return any(given.flag in flags for given in self.given)

    def first(self, *flags: Flag) -> Given | None:
        for given in self.given:
            if given.flag in flags:
                return given
        return None

    def all(self, *flags: Flag) -> list[Given]:
        return [given for given in self.given if given.flag in flags]
