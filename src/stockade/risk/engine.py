"""The walker: :func:`classify` parses a command and classifies every segment, substitution and
redirect target; :class:`Context` holds one classification's state and the checks every
program shares (paths read and written, nested code, how a command word is resolved).

What a program does is not here: a command word is resolved to a :class:`~stockade.risk.model.Spec`
(``stockade.risk.programs``) and the spec is applied (:mod:`stockade.risk.specs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from stockade.risk import nested
from stockade.risk.downloads import MAY_DOWNLOAD, is_download
from stockade.risk.hooks import SECRET_EXPANSION, check_assignment
from stockade.risk.model import (
    Assessment,
    Call,
    D,
    Found,
    H,
    L,
    M,
    R,
    Reason,
)
from stockade.risk.paths import (
    FOUND,
    HARMLESS_READ_PATHS,
    HOME_SECRET_PATH,
    MAY_START,
    OUTSIDE,
    P_ABS,
    P_DEVICE,
    P_DYNAMIC,
    P_ELSEWHERE,
    P_HARMLESS,
    P_HOME,
    P_TMP,
    PREFIXES_BY_START,
    PROTECTED_PATH,
    SECRET_EXTENSIONS,
    SYSTEM_BIN_DIRS,
    TOOL_BIN_DIR,
    is_secret,
    path_class,
)
from stockade.risk.programs import SPECS, VERSIONED, known
from stockade.risk.specs import apply, secret_expansions
from stockade.shell import MAX_SUBSTITUTION_DEPTH, Segment, fast_parse, parse
from stockade.tiers import Tier

_new_reason = tuple.__new__  # Reason(...) without the NamedTuple wrapper's argument parsing
_NO_NAMES: frozenset[str] = frozenset()
#: Rules an override cannot remove: they are about the arguments, not the program.
_NEVER_OVERRIDDEN = ("secret.", "read.", "write.", "pipe.", "download.", "privilege.", "env.")
#: Destructive rules an override does replace: they only say the program is not known.
_OVERRIDABLE = frozenset(
    {"program.unknown", "subcommand.unknown", "git.unknown-subcommand", "command.dynamic"}
)


def classify(command: str, *, program_overrides: Mapping[str, Tier] | None = None) -> Assessment:
    """Classify a shell command. Pure, never raises: anything unexpected is destructive.

    ``program_overrides`` sets the tier of programs by name (settings ``[risk] programs``);
    it replaces what the tables say about that program, but destructive findings about its
    arguments (``rm -rf``, a force push, inline code, the built-in hard denies) and the checks
    on secrets, paths, privileges, redirects and pipes still apply.
    """
    try:
        return _classify(command, program_overrides)
    except RecursionError:
        return _failed(command, "parse.too-deep", "the command is nested too deeply to analyse")
    except Exception as error:  # fail closed on a classifier bug rather than raise
        return _failed(command, "internal.error", f"classifier error: {type(error).__name__}")


def _failed(command: object, rule: str, detail: str) -> Assessment:
    text = command if isinstance(command, str) else repr(command)
    return Assessment(D, (Reason(rule, shorten(text), D, detail),), ())


def shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _classify(command: str, program_overrides: Mapping[str, Tier] | None) -> Assessment:
    parsed = fast_parse(command) if type(command) is str else None
    if parsed is None:
        parsed = parse(command, fast_path=type(command) is not str)
    if parsed.problems:
        return Assessment(
            D,
            tuple(
                Reason(p.code, p.text or shorten(parsed.source), D, p.detail)
                for p in parsed.problems
            ),
            parsed.segments,
        )
    context = Context(_overrides(program_overrides), parsed.functions)
    tier = context.run(parsed.segments, 0)
    return Assessment(tier, tuple(context.reasons), parsed.segments)


def _overrides(overrides: Mapping[str, Tier] | None) -> dict[str, tuple[Tier, str]]:
    """Validate overrides without raising: a value that is not a tier counts as destructive.
    Returns name → (tier, how to describe it)."""
    if not overrides:
        return {}
    result: dict[str, tuple[Tier, str]] = {}
    for name, value in overrides.items():
        tier: Tier | None = None
        if isinstance(value, Tier):
            tier = value
        elif isinstance(value, str):
            try:
                tier = Tier.parse(value)
            except ValueError:
                tier = None
        if tier is None:
            result[str(name)] = (
                D,
                f"{name}: invalid tier {value!r} in settings (treated as destructive)",
            )
        else:
            result[str(name)] = (tier, f"{name} is {tier.label} by settings")
    return result


class Context:
    """State of one classification: reasons found so far, functions, the working directory,
    files downloaded earlier in the command."""

    __slots__ = ("cwd", "defined", "downloaded", "functions", "overrides", "reasons")

    def __init__(
        self,
        overrides: dict[str, tuple[Tier, str]],
        functions: Mapping[str, tuple[str, ...]],
    ) -> None:
        self.overrides = overrides
        self.functions: Mapping[str, tuple[str, ...]] = functions
        self.defined: set[str] | frozenset[str] = _NO_NAMES  # a set once a function is defined
        self.reasons: list[Reason] = []
        # None: the project directory; "?": somewhere unknown; else the static path `cd`'d to
        self.cwd: str | None = None
        #: files a downloader wrote earlier in this command (``curl -o f …``), as resolved paths
        self.downloaded: set[str] | None = None

    # -- segments ------------------------------------------------------------------------------

    def run(self, segments: tuple[Segment, ...], depth: int) -> Tier:
        """Classify segments in order; return the highest tier (their reasons are recorded)."""
        top = R
        if depth > MAX_SUBSTITUTION_DEPTH:
            self.reasons.append(
                Reason(
                    "parse.too-deep",
                    shorten(segments[0].text) if segments else "",
                    D,
                    f"nested deeper than {MAX_SUBSTITUTION_DEPTH} levels",
                )
            )
            return D
        for segment in segments:
            tier = self.segment(segment, segments, depth)
            if tier > top:
                top = tier
        return top

    def segment(self, seg: Segment, siblings: tuple[Segment, ...], depth: int) -> Tier:
        (
            text,
            words,
            static,
            assignments,
            redirects,
            substitutions,
            _,
            _,
            _,
            _,
            kind,
            in_function,
        ) = seg
        top = R
        for substitution in substitutions:
            tier = self.run(substitution.segments, depth + 1)
            if tier > top:
                top = tier
        found = Found()
        if kind == "command":
            self.command(found, Call(seg, words, static, siblings, depth))
        elif kind == "assignment":
            found.add(L, "shell.assignment", "sets a shell variable")
        elif kind == "declaration":
            self.declaration(found, seg)
        elif kind == "test":
            nested.test(found, seg.words[1:])
        elif kind == "arithmetic":
            nested.arithmetic(found, seg.words[1:])
        elif kind == "control":
            found.add(R, "shell.control", "a loop or case word list")
        else:
            found.add(R, "shell.redirect-only", "redirects without a command")
        if assignments:
            self.assignments(found, assignments)
        if redirects:
            self.redirects(found, seg)
        if in_function is not None:
            if not isinstance(self.defined, set):
                self.defined = set()
            self.defined.add(in_function)
        if "@P}" in text:
            found.add(D, "interpreter.eval", "${…@P} expands a prompt string, which runs $(…)")
        tier = found.tier
        items = found.items
        if len(items) == 1:
            rule, detail = items[0]
            self.reasons.append(_new_reason(Reason, (rule, text, tier, detail)))
        else:
            for rule, detail in dict.fromkeys(items):  # in order, without repeats
                self.reasons.append(_new_reason(Reason, (rule, text, tier, detail)))
        return tier if tier > top else top

    def nested(self, found: Found, call: Call, code: str, rule: str, what: str) -> Tier:
        """Classify shell code a command runs (``sh -c CODE``, ``watch CMD``, tar's
        ``--to-command``) one level deeper; its reasons are recorded, its tier returned."""
        parsed = parse(code, depth=call.depth + 1)
        if parsed.problems:
            for problem in parsed.problems:
                self.reasons.append(
                    Reason(problem.code, problem.text or shorten(code), D, problem.detail)
                )
            found.add(D, rule, f"{what} cannot be analysed")
            return D
        if parsed.functions:
            self.functions = {**parsed.functions, **self.functions}
        saved = self.cwd  # the code runs in a child process: its `cd` does not leak out
        tier = self.run(parsed.segments, call.depth + 1)
        self.cwd = saved
        found.add(tier, rule, f"{what} runs {shorten(code, 60)!r}")
        return tier

    def embedded(self, found: Found, call: Call, text: str, static: bool, what: str) -> None:
        """A command another program runs (tar's ``--to-command``, rsync's ``-e``, a pager)."""
        if not static:
            found.add(D, "shell.nested-code", f"{what}: command only known at run time")
            return
        self.nested(found, call, text, "shell.nested-code", what)

    # -- shell-level constructs ----------------------------------------------------------------

    def assignments(self, found: Found, assignments: Iterable[object]) -> None:
        for assignment in assignments:
            check_assignment(
                found,
                getattr(assignment, "name", ""),
                getattr(assignment, "value", ""),
                getattr(assignment, "static", False),
            )

    def declaration(self, found: Found, seg: Segment) -> None:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset``."""
        words = seg.words
        keyword = words[0] if words else ""
        operands = [w for w in words[1:] if not w.startswith(("-", "+"))]
        flags = "".join(w[1:] for w in words[1:] if w.startswith(("-", "+")))
        if keyword in ("unset", "local"):
            found.add(L, "shell.declaration", f"{keyword} changes shell variables")
        elif not operands and not seg.assignments:
            if flags and set(flags) <= set("fF"):
                found.add(R, "shell.lookup", "lists shell functions")
            else:
                found.add(H, "env.dump", f"{keyword} without names prints variables (secrets)")
        else:
            found.add(L, "shell.declaration", f"{keyword} sets shell variables")
        for word, static in zip(words[1:], seg.static[1:], strict=False):
            if not static and SECRET_EXPANSION.search(word) is not None:
                found.add(H, "secret.env-var", "expands a variable named like a secret")

    # -- redirects and paths -------------------------------------------------------------------

    def redirects(self, found: Found, seg: Segment) -> None:
        for redirect in seg.redirects:
            op = redirect.op
            if op in ("<<", "<<-", "<<<") or op.endswith("-"):
                continue  # stdin text (interpreters check it) or closing a descriptor
            target = redirect.target
            if op in (">&", "<&") and (target.isdigit() or target == "-"):
                continue  # duplicating a descriptor
            if op in ("<", "<&"):
                self.read_path(found, target, redirect.static)
                continue
            self.write_target(found, target, redirect.static, "redirect", op in (">>", "&>>"))
            if (
                redirect.static
                and seg.words
                and seg.words[0].rpartition("/")[2] in MAY_DOWNLOAD
                and is_download(seg.words)
            ):
                self.record_download(target)

    def read_path(self, found: Found, word: str, static: bool) -> None:
        """A file a content reader reads: secrets and outside-project paths are high.
        A lone ``/`` is a separator argument (``cut -d /``, ``tr / _``), not a file."""
        if word == "/" or not word:
            return
        if (
            static
            and self.cwd is None
            and (
                word == "."
                or (  # `not paths.may_be_secret(word)`, inlined: this is the hot path
                    word[0] not in MAY_START
                    and "/" not in word
                    and "*" not in word
                    and word.rpartition(".")[2] not in SECRET_EXTENSIONS
                    and not (
                        word[0] in PREFIXES_BY_START and word.startswith(PREFIXES_BY_START[word[0]])
                    )
                )
            )
        ):
            return  # the project or a plain file name in it (the commonest cases): nothing to do
        if is_secret(word, static):
            found.add(H, "secret.read", f"reads {word!r}, which looks like a secret")
            return
        kind = path_class(word, static, self.cwd)
        if kind == P_HOME and self.cwd and HOME_SECRET_PATH.match(word) is not None:
            found.add(H, "secret.read", f"reads {word!r}, a credential store in the home directory")
        elif kind in OUTSIDE and word not in HARMLESS_READ_PATHS:
            found.add(H, "read.outside-project", f"reads {word!r} outside the project")

    def write_target(
        self, found: Found, word: str, static: bool, what: str, append: bool = False
    ) -> None:
        """A file a command writes. ``what`` is ``redirect`` (which sets the base tier for a
        project file) or a program name (whose own tier covers project files)."""
        kind = path_class(word, static, self.cwd)
        if kind == P_HARMLESS:
            return
        if kind == P_DEVICE:
            found.add(D, "write.device", f"writes to the raw device {word!r}")
        elif "." in word and PROTECTED_PATH.search(word) is not None:  # see paths.is_protected
            found.add(
                H,
                "write.protected",
                f"writes {word!r}, which can loosen the jail or run code later",
            )
        elif kind == P_HOME:
            found.add(H, "write.home", f"writes {word!r} in the home directory")
        elif kind == P_ABS:
            found.add(H, "write.outside-project", f"writes {word!r} outside the project")
        elif kind in (P_DYNAMIC, P_ELSEWHERE):
            found.add(H, "write.dynamic", f"writes to {word!r}, which is only known at run time")
        elif kind == P_TMP:
            found.add(L, "write.tmp", f"writes {word!r} under /tmp")
        elif what == "redirect":
            if append:
                found.add(L, "redirect.append", f"appends to {word!r}")
            else:
                found.add(M, "redirect.overwrite", f"overwrites {word!r}")
        if is_secret(word, static):
            found.add(H, "secret.read", f"writes or copies {word!r}, which looks like a secret")

    def record_download(self, path: str) -> None:
        """Remember a file a downloader writes, so running it later in this command counts as
        running downloaded code."""
        if self.downloaded is None:
            self.downloaded = set()
        self.downloaded.add(self.resolved(path))

    def is_downloaded(self, path: str) -> bool:
        return self.downloaded is not None and self.resolved(path) in self.downloaded

    def resolved(self, path: str) -> str:
        """``path`` relative to where ``cd`` went, without ``./`` (for comparing paths)."""
        while path.startswith("./"):
            path = path[2:].lstrip("/")
        if path[:1] in "/~" or self.cwd is None:
            return path
        return self.cwd.rstrip("/") + "/" + path

    # -- commands ------------------------------------------------------------------------------

    def command(self, found: Found, call: Call) -> None:
        """Resolve the command word (paths, functions, overrides) and classify the command."""
        words = call.words
        if not words:
            found.add(R, "wrapper.no-command", "nothing to run")
            return
        name = words[0]
        if not call.static[0]:
            found.add(D, "command.dynamic", f"the command word {name!r} is only known at run time")
            return
        key = name
        if "/" in name:
            directory, _, base = name.rpartition("/")
            if directory not in SYSTEM_BIN_DIRS and TOOL_BIN_DIR.match(directory) is None:
                self.path_executable(found, call, name)
                return
            key = base
        if key in self.functions:
            if call.seg.in_function == key:
                found.add(D, "shell.fork-bomb", f"function {key!r} calls itself")
                return
            if key in self.defined:
                found.add(R, "shell.function-call", f"calls the function {key!r} defined above")
                if not known(key):
                    return
        if not self.overrides:
            spec = SPECS.get(key)
            if spec is not None:  # the commonest case, without the dispatch below
                apply(self, found, call, key, spec)
                return
        override = self.overrides.get(key) if self.overrides else None
        if override is None and key not in SPECS:
            versioned = VERSIONED.match(key)
            if versioned is not None:
                key = versioned.group(1)
                override = self.overrides.get(key) if self.overrides else None
        if override is not None:
            self.overridden(found, call, key, *override)
        else:
            self.program(found, call, key)

    def program(self, found: Found, call: Call, key: str) -> None:
        spec = SPECS.get(key)
        if spec is not None:
            apply(self, found, call, key, spec)
        elif key.startswith("mkfs."):
            found.add(D, "disk.mkfs", f"{key} creates a filesystem")
        else:
            found.add(
                D,
                "program.unknown",
                f"{key!r} is not in the program table (unknown programs "
                "are destructive; settings [risk] programs can set its tier)",
            )

    def overridden(self, found: Found, call: Call, key: str, tier: Tier, why: str) -> None:
        """Settings set this program's tier. What the arguments do still counts: destructive
        findings (force push, ``rm -rf``, inline code…) and the checks on secrets, paths,
        privileges and pipes are kept; only the program's own tier is replaced."""
        tables = Found(keep_every=True)
        self.program(tables, call, key)
        found.add(tier, "program.override", why)
        for word, static in zip(call.words[1:], call.static[1:], strict=False):
            named = word.partition("=")[2] if word[:1] == "-" else word
            if named and is_secret(named, static):
                found.add(H, "secret.read", f"uses {named!r}, which looks like a secret")
        for rule_tier, rule, detail in tables.every or ():
            if (rule_tier == D and rule not in _OVERRIDABLE) or rule.startswith(_NEVER_OVERRIDDEN):
                found.add(rule_tier, rule, detail)

    def path_executable(self, found: Found, call: Call, name: str) -> None:
        """``./script``, ``bin/tool``, ``/opt/x/bin/y``: code from a path, not a known program."""
        if name.endswith(FOUND):
            found.add(D, "command.dynamic", "runs every file find matched as a program")
        elif self.is_downloaded(name):
            found.add(D, "download.run-downloaded", f"runs {name!r}, downloaded in this command")
        elif name[0] not in "/~$" and self.cwd is None:
            found.add(M, "command.project-executable", f"runs the project's {name!r}")
        else:
            found.add(H, "command.outside-executable", f"runs {name!r} from outside the project")
        if False in call.static:
            secret_expansions(found, call, 1, len(call.words))

    # -- code run by interpreters (see nested.py) ----------------------------------------------
    # Reached through the context because nested.py imports specs.py, which applies them.

    def script(self, found: Found, call: Call, path: str, static: bool, what: str) -> None:
        nested.script(self, found, call, path, static, what)

    def python_module(self, found: Found, call: Call, module: str, static: bool, rest: int) -> None:
        nested.python_module(self, found, call, module, static, rest)
