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

from stockade.risk.downloads import download_fed
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
from stockade.risk.paths import is_secret, may_be_secret
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

#: A lone one of these is a version or help invocation: read-only for a known program.
VERSION_FLAGS = frozenset({"--version", "-V", "--help", "-h"})
#: Words that end an ``argv`` value (find's ``-exec … ;`` and ``-exec … {} +``).
TERMINATORS = frozenset({";", "+"})
#: Flag value kinds after which option parsing stops (the rest is the code's arguments).
_STOPPING_FLAGS = frozenset({"code", "module"})
#: Flag value kinds that are not simply the next word.
_SPECIAL_VALUES = frozenset({"optional", "argv"})
#: The arguments a direct application hands to :func:`value` (which only reads ``name`` and
#: ``rest`` for the kinds a direct spec can have).
_NO_ARGS = Args("", 0)


def parse_args(spec: Spec, call: Call, start: int, name: str) -> Args:
    """Parse ``call.words[start:]`` against ``spec``'s flags and operand kinds."""
    words = call.words
    statics = call.static
    count = len(words)
    flags = spec.index
    short = flags.short
    long = flags.long
    operands = spec.operands
    last = len(operands) - 1
    args = Args(name, count, spec)
    given = args.given
    found_operands = args.operands
    #: a short bundle is only plain flags nobody reads: skip it whole
    quick = not flags.short_values and not spec.records_flags
    plus = flags.plus
    slot = 0
    options_done = False
    index = start
    while index < count:
        word = words[index]
        if (
            not options_done
            and len(word) > 1
            and (word[0] == "-" or (plus and word[0] == "+" and word in long))
        ):
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
                    args.unknown = args.unknown or word
                    index += 1
                    continue
                given_name = key
                if eq:
                    attached = value
            elif flag is None:
                if quick or word[1:].isdigit():  # plain flags nobody reads; `head -5`
                    index += 1
                    continue
                for position in range(1, len(word)):
                    char = word[position]
                    short_flag = short.get(char)
                    if short_flag is None:
                        args.unknown = args.unknown or "-" + char
                    elif short_flag.values:
                        flag = short_flag
                        given_name = "-" + char
                        attached = word[position + 1 :] or None
                        break
                    else:
                        given.append(Given(short_flag, "-" + char, (), (), index))
                if flag is None:
                    index += 1
                    continue
            if flag.simple:  # the commonest option with a value, inline
                if attached is not None:
                    given.append(Given(flag, given_name, (attached,), (statics[index],), index))
                    index += 1
                elif index + 1 < count:
                    index += 1
                    given.append(
                        Given(flag, given_name, (words[index],), (statics[index],), index - 1)
                    )
                    index += 1
                else:
                    given.append(Given(flag, given_name, (), (), index))
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
        found_operands.append((word, statics[index], index, kind))
        slot += 1
        index += 1
        options_done = options_done or spec.stops_options
    if "pattern" in operands and args.operands and _pattern_given(args):
        # `grep -e PATTERN FILE…`: the pattern came with an option, so no operand is one
        kinds = spec.operands_without_pattern
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
    if len(kinds) == 1 and kind not in _SPECIAL_VALUES:
        if attached is not None:
            given = Given(flag, name, (attached,), (statics[index],), index)
            following = index + 1
        elif index + 1 < len(words):
            given = Given(flag, name, (words[index + 1],), (statics[index + 1],), index)
            following = index + 2
        else:
            given = Given(flag, name, (), (), index)
            following = index + 1
        args.given.append(given)
        if kind in _STOPPING_FLAGS:
            args.rest = following
        return following
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
    if count == start + 1 and spec.versioned and words[start] in VERSION_FLAGS:
        found.add(R, "program.version", f"{name} {words[start]} only prints information")
        return
    if spec.trivial:
        if spec.tier is not None:
            found.add(spec.tier, spec.rule, spec.details.get(name) or spec.detail(name))
        if False in call.static:
            secret_expansions(found, call, start, count)
        return
    if spec.direct:
        _apply_direct(ctx, found, call, name, spec, start)
        return
    if spec.subcommands is not None:
        subcommands(ctx, found, call, name, spec, start)
        return
    if not spec.parse:
        args = Args(name, count, spec)
    elif spec.operands[0] == "rest" and (start >= count or words[start][:1] != "-"):
        args = Args(name, start, spec)  # nothing before what the check reads (`git status`)
    else:
        args = parse_args(spec, call, start, name)
    tier = spec.tier
    why = ""
    order = spec.index.set_order
    if order:
        best: Given | None = None
        for given in args.given:
            position = order.get(given.flag)
            if position is not None and (best is None or position < order[best.flag]):
                best = given
        if best is not None:
            tier = best.flag.tier
            why = best.flag.why or f"{name} {best.name} is {tier.label if tier else '?'}"
    if tier is not None and (
        not spec.runs_command or spec.rule != "program.table" or (tier > R and args.rest < count)
    ):
        # a wrapper's program.table tier is a floor for what it runs
        found.add(tier, spec.rule, why or (spec.details.get(name) or spec.detail(name)))
    if args.unknown and spec.runs_command:
        found.add(D, "wrapper.unknown-option", f"{name}: option {args.unknown!r} we cannot parse")
        return
    if spec.check is not None:
        spec.check(ctx, found, call, args)
    if spec.flag_effects:
        for given in args.given:
            flag = given.flag
            if flag.rule is not None and flag.tier is not None:
                found.add(flag.tier, flag.rule, flag.why or f"{name} {given.name}")
            if not flag.inert:
                _flag_values(ctx, found, call, args, given)
    if spec.operand_effects:
        for word, static, _, kind in args.operands:
            if kind == "read":
                ctx.read_path(found, word, static)
            elif kind != "value" and kind != "file":
                value(ctx, found, call, args, kind, word, static, name)
    if spec.file_operands:
        secret_arguments(found, call, start)
    if spec.check is None and args.rest < count:
        _run_rest(ctx, found, call, args, spec)
    elif spec.check is None and spec.runs_command:
        found.add(R, "wrapper.no-command", f"{name} without a command runs nothing")
    if False in call.static:
        secret_expansions(found, call, start, args.rest)


def _apply_direct(
    ctx: Context, found: Found, call: Call, name: str, spec: Spec, start: int
) -> None:
    """:func:`apply` for the commonest shapes, without building :class:`Args`: a spec with no
    check and no subcommands whose values are paths or values (``cat``, ``head``, ``cp``,
    ``grep``) or a wrapper (``timeout``, ``nice``). The options are read as
    :func:`parse_args` reads them."""
    words = call.words
    count = len(words)
    wrapper = spec.runs_command
    if start >= count and not wrapper:  # no arguments (`git status`, `pwd`)
        if spec.tier is not None:
            found.add(spec.tier, spec.rule, spec.details.get(name) or spec.detail(name))
        return
    statics = call.static
    short = spec.index.short
    long = spec.index.long
    order = spec.index.set_order
    quick = not spec.index.short_values and not wrapper
    operands = spec.operands
    # a search pattern may come with an option anywhere: then no operand is the pattern
    pending: list[tuple[str, bool]] | None = (
        [] if operands is not spec.operands_without_pattern else None
    )
    pattern_given = False
    last = len(operands) - 1
    chosen: Flag | None = None
    chosen_name = ""
    unknown = ""
    rest = count
    slot = 0
    options_done = False
    index = start
    while index < count:
        word = words[index]
        if not options_done and len(word) > 1 and word[0] == "-":
            if word == "--":
                options_done = True
                index += 1
                continue
            flag = long.get(word)
            given_name = word
            attached: str | None = None
            if flag is None and word[1] == "-":
                key, eq, text = word.partition("=")
                flag = long.get(key)
                given_name = key
                if eq:
                    attached = text
                if flag is None and not unknown:
                    unknown = word
            elif flag is None and not quick and not word[1:].isdigit():
                for position in range(1, len(word)):
                    option = short.get(word[position])
                    if option is None:
                        unknown = unknown or "-" + word[position]
                        continue
                    if option.values:
                        flag = option
                        given_name = "-" + word[position]
                        attached = word[position + 1 :] or None
                        break
                    if option.tier is not None:
                        if option.rule is not None:
                            found.add(
                                option.tier, option.rule, option.why or f"{name} -{word[position]}"
                            )
                        elif chosen is None or order[option] < order[chosen]:
                            chosen, chosen_name = option, "-" + word[position]
            if flag is None:
                index += 1
                continue
            if flag.tier is not None:
                if flag.rule is not None:
                    found.add(flag.tier, flag.rule, flag.why or f"{name} {given_name}")
                elif chosen is None or order[flag] < order[chosen]:
                    chosen, chosen_name = flag, given_name
            kinds = flag.values
            index += 1
            if not kinds or kinds[0] == "optional":
                continue
            what = f"{name} {given_name}"
            for position, kind in enumerate(kinds):
                if position == 0 and attached is not None:
                    text, static = attached, statics[index - 1]
                elif index < count:
                    text, static = words[index], statics[index]
                    index += 1
                else:
                    break
                if kind == "pattern" or kind == "pattern-file":
                    pattern_given = True
                if kind != "value" and kind != "pattern":
                    value(ctx, found, call, _NO_ARGS, kind, text, static, what)
            continue
        if pending is not None:
            pending.append((word, statics[index]))
            index += 1
            continue
        kind = operands[slot] if slot <= last else operands[last]
        slot += 1
        options_done = options_done or spec.stops_options  # getopt "+": wrappers, awk
        if kind == "read":
            ctx.read_path(found, word, statics[index])
        elif kind == "write":
            ctx.write_target(found, word, statics[index], name)
        elif kind == "output":
            ctx.write_target(found, word, statics[index], "redirect")
        elif kind == "argv":
            rest = index
            break
        index += 1
    if pending:
        kinds = spec.operands_without_pattern if pattern_given else operands
        last = len(kinds) - 1
        for slot, (word, static) in enumerate(pending):
            kind = kinds[slot] if slot <= last else kinds[last]
            if kind == "read":
                ctx.read_path(found, word, static)
            elif kind == "write" or kind == "output":
                ctx.write_target(found, word, static, name if kind == "write" else "redirect")
    tier = spec.tier
    if chosen is not None and chosen.tier is not None:  # a flag that sets the tier
        tier = chosen.tier
        found.add(tier, spec.rule, chosen.why or f"{name} {chosen_name} is {tier.label}")
    elif tier is not None and (
        not wrapper or spec.rule != "program.table" or (tier > R and rest < count)
    ):
        found.add(
            tier, spec.rule, (spec.details.get(name) or spec.detail(name))
        )  # a wrapper's tier is a floor
    if spec.file_operands:
        secret_arguments(found, call, start)
    if False in statics:
        secret_expansions(found, call, start, rest)
    if wrapper:
        if unknown:
            found.add(D, "wrapper.unknown-option", f"{name}: option {unknown!r} we cannot parse")
        elif rest < count:
            ctx.command(found, call.shifted(rest))
        else:
            found.add(R, "wrapper.no-command", f"{name} without a command runs nothing")


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
    elif kind == "output":
        ctx.write_target(found, word, static, "redirect")
    elif kind == "file":
        if is_secret(word, static):
            found.add(H, "secret.read", f"{what} uses {word!r}, which looks like a secret")
    elif kind == "program":
        run_program(ctx, found, call, word, static, what)
    elif kind == "command":
        ctx.embedded(found, call, word, static, what)
    elif kind == "code":
        found.add(D, "interpreter.inline-code", f"{what} runs inline code")
        if not static and download_fed(call):
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
        if named and (not static or may_be_secret(named)) and is_secret(named, static):
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
            if flag is not None and flag.rule is not None and flag.tier is not None:
                found.add(flag.tier, flag.rule, flag.why or f"{name} {key}")
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
