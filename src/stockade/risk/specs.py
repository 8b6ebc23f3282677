"""How a :class:`~stockade.risk.model.Spec` is applied to a command: the option parser, the
program's tier (and the flags that change it), what each flag value and operand is, the
subcommand walk, and the command a wrapper runs.

Nothing here knows a particular program: every option, operand kind and subcommand comes from
the spec. The option parser follows getopt and getopt_long: bundled short flags (``-rf``), a
short flag's value glued on or in the next word (``-fFILE``, ``-f FILE``), ``--long=VALUE`` or
``--long VALUE``, whole-word options (``-exec``), ``-NUM``, and ``--`` ending the options. An
option the spec does not list is taken to be a plain flag (the safe reading: a value it might
take is then checked as an operand), except for programs that run a command, where it fails
closed (``wrapper.unknown-option``): the command could not be found reliably.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.hooks import SECRET_EXPANSION, check_git_setting
from stockade.risk.model import (
    STOPPING,
    Args,
    Call,
    D,
    Flag,
    Found,
    Given,
    H,
    R,
    Spec,
    SubTable,
    Takes,
)
from stockade.risk.paths import is_secret
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

#: A lone one of these is a version or help invocation: read-only for a known program.
VERSION_FLAGS = frozenset({"--version", "-V", "--help", "-h"})
#: Words that end an ``argv`` value (find's ``-exec … ;`` and ``-exec … {} +``).
TERMINATORS = frozenset({";", "+"})
#: Rules whose programs a lone ``--help``/``--version`` does not make read-only (``shutdown -h``).
_VERSION_RULES = frozenset({"program.table", "subcommand.table", "interpreter.stdin"})
#: Flag value kinds after which option parsing stops (the rest is the code's arguments).
_STOPPING_FLAGS = frozenset({"code", "module"})


def parse_args(spec: Spec, call: Call, start: int, name: str) -> Args:
    """Parse ``call.words[start:]`` against ``spec``'s flags and operand kinds."""
    words = call.words
    statics = call.static
    count = len(words)
    short = spec.index.short
    long = spec.index.long
    operands = spec.operands
    last = len(operands) - 1
    args = Args(name, count, spec)
    slot = 0
    options_done = False
    index = start
    while index < count:
        word = words[index]
        first = word[:1]
        if not options_done and len(word) > 1 and (first == "-" or (first == "+" and word in long)):
            if word == "--":
                options_done = True
                args.end_of_options = index
                index += 1
                continue
            flag = long.get(word)
            given_name = word
            attached: str | None = None
            if flag is None and word[1] == "-":
                key, eq, value = word.partition("=")
                flag = long.get(key)
                if flag is None:
                    args.unknown.append(word)
                    index += 1
                    continue
                given_name = key
                if eq:
                    attached = value
            elif flag is None:
                if word[1:].isdigit():  # `head -5`, `nice -10`, `kill -9`
                    index += 1
                    continue
                for position in range(1, len(word)):
                    char = word[position]
                    short_flag = short.get(char)
                    if short_flag is None:
                        args.unknown.append("-" + char)
                        continue
                    if short_flag.values:
                        flag = short_flag
                        given_name = "-" + char
                        rest = word[position + 1 :]
                        attached = rest or None
                        break
                    args.given.append(Given(short_flag, "-" + char, (), (), index))
                if flag is None:
                    index += 1
                    continue
            index = _take_values(args, flag, given_name, attached, call, index)
            if args.rest < count:
                break
            continue
        kind = operands[slot] if slot <= last else operands[last]
        if kind in STOPPING:
            args.rest = index
            break
        args.operands.append((word, statics[index], index, kind))
        slot += 1
        index += 1
    if "pattern" in operands and args.operands and _pattern_given(args):
        # `grep -e PATTERN FILE…`: the pattern came with an option, so no operand is one
        kinds = tuple(kind for kind in operands if kind != "pattern") or ("value",)
        last = len(kinds) - 1
        args.operands = [
            (word, static, position, kinds[min(slot, last)])
            for slot, (word, static, position, _) in enumerate(args.operands)
        ]
    return args


def _pattern_given(args: Args) -> bool:
    for given in args.given:
        values = given.flag.values
        if "pattern" in values or "pattern-file" in values:
            return True
    return False


def _take_values(
    args: Args, flag: Flag, name: str, attached: str | None, call: Call, index: int
) -> int:
    """Record ``flag`` given at word ``index`` with its values; return the next word's index
    (setting ``args.rest`` when the flag ends option parsing)."""
    words = call.words
    statics = call.static
    kinds = flag.values
    if not kinds:
        args.given.append(Given(flag, name, (), (), index))
        return index + 1
    kind = kinds[0]
    if kind == "optional":
        if attached is None:
            args.given.append(Given(flag, name, (), (), index))
        else:
            args.given.append(Given(flag, name, (attached,), (statics[index],), index))
        return index + 1
    if kind == "argv":
        end = index + 1
        while end < len(words) and words[end] not in TERMINATORS:
            end += 1
        args.given.append(
            Given(flag, name, words[index + 1 : end], statics[index + 1 : end], index)
        )
        return end + 1
    values: list[str] = []
    value_statics: list[bool] = []
    following = index + 1
    if attached is not None:
        values.append(attached)
        value_statics.append(statics[index])
    while len(values) < len(kinds) and following < len(words):
        values.append(words[following])
        value_statics.append(statics[following])
        following += 1
    args.given.append(Given(flag, name, tuple(values), tuple(value_statics), index))
    if kind in _STOPPING_FLAGS:
        args.rest = following
    return following


def apply(ctx: Context, found: Found, call: Call, name: str, spec: Spec, start: int = 1) -> None:
    """Classify ``call`` (its words from ``start`` on) with ``spec``."""
    words = call.words
    count = len(words)
    if (
        count == start + 1
        and words[start] in VERSION_FLAGS
        and spec.tier is not None
        and spec.rule in _VERSION_RULES
    ):
        found.add(R, "program.version", f"{name} {words[start]} only prints information")
        return
    if spec.subcommands is not None:
        subcommands(ctx, found, call, name, spec, start)
        return
    args = parse_args(spec, call, start, name)
    tier = spec.tier
    why = spec.why
    if spec.index.set_flags:
        for flag in spec.index.set_flags:
            given = args.first(flag)
            if given is not None:
                tier = flag.tier
                why = flag.why or f"{name} {given.name} is {tier.label if tier else '?'}"
                break
    if tier is not None and (
        not spec.runs_command or spec.rule != "program.table" or (tier > R and args.rest < count)
    ):
        # a wrapper's program.table tier is a floor for what it runs
        found.add(tier, spec.rule, why or f"{name} is {tier.label}")
    if args.unknown and spec.runs_command:
        found.add(
            D, "wrapper.unknown-option", f"{name}: option {args.unknown[0]!r} we cannot parse"
        )
        return
    if spec.check is not None:
        spec.check(ctx, found, call, args)
    for given in args.given:
        flag = given.flag
        if flag.rule is not None and flag.tier is not None:
            found.add(flag.tier, flag.rule, flag.why or f"{name} {given.name}")
        if flag.values:
            _flag_values(ctx, found, call, args, given)
    for word, static, _, kind in args.operands:
        if kind != "value" and kind != "file":
            value(ctx, found, call, args, kind, word, static, name)
    if "file" in spec.operands:
        secret_arguments(found, call, start)
    if spec.check is None and args.rest < count:
        _run_rest(ctx, found, call, args, spec)
    elif spec.check is None and spec.runs_command:
        found.add(R, "wrapper.no-command", f"{name} without a command runs nothing")
    if False in call.static:
        secret_expansions(found, call, start, args.rest)


def _flag_values(ctx: Context, found: Found, call: Call, args: Args, given: Given) -> None:
    kinds = given.flag.values
    what = f"{args.name} {given.name}"
    if not given.values and "code" in kinds:
        found.add(D, "interpreter.inline-code", f"{what} without its code (fails closed)")
        return
    if kinds[0] == "argv":
        value_argv(ctx, found, call, args, given.values, given.statics)
        return
    for kind, word, static in zip(kinds, given.values, given.statics, strict=False):
        if kind != "value":
            value(ctx, found, call, args, kind, word, static, what)


def value(
    ctx: Context,
    found: Found,
    call: Call,
    args: Args,
    kind: Takes,
    word: str,
    static: bool,
    what: str,
) -> None:
    """Apply what a flag value or operand is (see :data:`~stockade.risk.model.Takes`)."""
    if kind == "read" or kind == "pattern-file":
        ctx.read_path(found, word, static)
    elif kind == "write":
        ctx.write_target(found, word, static, args.name)
    elif kind == "file":
        if is_secret(word, static):
            found.add(H, "secret.read", f"{what} uses {word!r}, which looks like a secret")
    elif kind == "program":
        run_program(ctx, found, call, word, static, what)
    elif kind == "command":
        ctx.embedded(found, call, word, static, what)
    elif kind == "code":
        found.add(D, "interpreter.inline-code", f"{what} runs inline code")
        if not static and ctx.download_fed(call):
            found.add(D, "download.pipe-to-shell", f"{what} runs downloaded code")
    elif kind == "script":
        ctx.script(found, call, word, static, what)
    elif kind == "module":
        ctx.python_module(found, call, word, static, args.rest)
    elif kind == "git-config":
        check_git_setting(found, word, static, what)
    elif kind == "argv":
        value_argv(ctx, found, call, args, (word,), (static,))


def value_argv(
    ctx: Context,
    found: Found,
    call: Call,
    args: Args,
    words: tuple[str, ...],
    statics: tuple[bool, ...],
) -> None:
    """A command line a flag carries (``find -exec CMD {} ;``): ``{}`` is what was found."""
    if not words:
        return
    placeholder = args.placeholder
    replaced = tuple(placeholder if w == "{}" else w.replace("{}", placeholder) for w in words)
    ctx.command(found, call.replaced(replaced, statics))


def run_program(ctx: Context, found: Found, call: Call, word: str, static: bool, what: str) -> None:
    """A program an option names (``rg --pre PROG``): the segment is at least as dangerous as
    that program run on its own."""
    if not static:
        found.add(D, "command.dynamic", f"{what}: the program is only known at run time")
        return
    ctx.command(found, call.replaced((word,), (True,)))


def _run_rest(ctx: Context, found: Found, call: Call, args: Args, spec: Spec) -> None:
    """The operand that ends option parsing, in a spec without a check: the command a
    wrapper runs, a script, or shell code."""
    words = call.words
    rest = args.rest
    operands = spec.operands
    slot = min(len(args.operands), len(operands) - 1)
    kind = operands[slot]
    if kind == "argv":
        ctx.command(found, call.shifted(rest))
    elif kind == "script":
        ctx.script(found, call, words[rest], call.static[rest], args.name)
    elif kind == "rest":
        return
    elif all(call.static[rest:]):
        ctx.nested(found, call, " ".join(words[rest:]), "shell.nested-code", args.name)
    else:
        found.add(D, "command.dynamic", f"{args.name}: the command is only known at run time")


def secret_expansions(found: Found, call: Call, start: int, end: int) -> None:
    """Any word that expands a variable named like a secret (``$API_TOKEN``) is high."""
    for index in range(start, min(end, len(call.words))):
        word = call.words[index]
        if not call.static[index] and "$" in word and SECRET_EXPANSION.search(word) is not None:
            found.add(H, "secret.env-var", "expands a variable named like a secret")
            return


def secret_arguments(found: Found, call: Call, start: int = 1) -> None:
    """Any argument (or ``--opt=value``) naming a secret file raises the tier to high."""
    for word, static in zip(call.words[start:], call.static[start:], strict=False):
        named = word.partition("=")[2] if word[:1] == "-" else word
        if named and is_secret(named, static):
            found.add(H, "secret.read", f"uses {named!r}, which looks like a secret")
        elif not static and "$" in word and SECRET_EXPANSION.search(word) is not None:
            found.add(H, "secret.env-var", "expands a variable named like a secret")


def subcommands(ctx: Context, found: Found, call: Call, name: str, spec: Spec, start: int) -> None:
    """Walk a spec's subcommand table (``gh pr create``, ``docker compose up``); the spec's own
    flags are the options allowed before a subcommand."""
    words = call.words
    count = len(words)
    table = spec.subcommands
    assert table is not None
    node: SubTable = table
    entry: Tier | Spec | SubTable = D
    long = spec.index.long
    short = spec.index.short
    path_end = "?"
    index = start
    while True:
        while index < count:
            word = words[index]
            if word[:1] not in "-+" or len(word) < 2 or word in node:
                break
            if node is table and word in VERSION_FLAGS:
                found.add(R, "program.version", f"{name} {word} only prints information")
                return
            key, eq, attached = word.partition("=")
            flag = (
                long.get(key) if key[1:2] == "-" else short.get(key[1:2]) if len(key) == 2 else None
            )
            if flag is not None and flag.values and not eq:
                for kind, position in zip(flag.values, range(index + 1, count), strict=False):
                    value(
                        ctx,
                        found,
                        call,
                        Args(name, count),
                        kind,
                        words[position],
                        call.static[position],
                        f"{name} {key}",
                    )
                index += 1 + len(flag.values)
            else:
                if flag is not None and flag.values and eq:
                    value(
                        ctx,
                        found,
                        call,
                        Args(name, count),
                        flag.values[0],
                        attached,
                        call.static[index],
                        f"{name} {key}",
                    )
                index += 1
        if index >= count:
            entry = node.get("", node.get("*", D))
            path_end = ""
            break
        if not call.static[index]:
            found.add(
                D,
                "subcommand.dynamic",
                f"{' '.join(words[:index])}: subcommand only known at run time",
            )
            return
        listed = node.get(words[index])
        if listed is None:
            default = node.get("*")
            if default is None:
                found.add(
                    D,
                    "subcommand.unknown",
                    f"{' '.join(words[: index + 1])}: not in the subcommand table (may be a "
                    "plugin or alias)",
                )
                return
            entry = default
            path_end = "*"
            break
        entry = listed
        index += 1
        if isinstance(entry, (Tier, Spec)):
            path_end = words[index - 1]
            break
        node = entry
    shown = " ".join(words[:index]) + (" …" if path_end == "*" else "")
    if isinstance(entry, Tier):
        found.add(entry, "subcommand.table", f"{shown} is {entry.label}")
        secret_arguments(found, call)
    elif isinstance(entry, Spec):
        apply(ctx, found, call, shown, entry, index)
        if entry.check is None:
            secret_arguments(found, call)
    else:  # a nested table reached without a subcommand (never in the shipped tables)
        found.add(D, "subcommand.unknown", f"{shown}: incomplete subcommand")
