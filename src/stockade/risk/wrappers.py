"""Programs that run another command: wrappers (``nice``, ``timeout``, ``env``, ``xargs``,
``watch``…), privilege switches (``sudo``), package runners (``npx``, ``uv run``) and
schedulers (``at``, ``systemd-run``). What they run is classified; a wrapper's own tier is a
floor. An option a wrapper's spec does not list fails closed (``wrapper.unknown-option``): the
wrapped command could not be found reliably.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stockade.risk.flags import command, flag, optional, program, read, value, write
from stockade.risk.hooks import ASSIGNMENT_WORD, check_assignment
from stockade.risk.model import Args, Call, D, Example, Flag, Found, H, L, M, R, Spec, Takes
from stockade.risk.nested import heredoc_code
from stockade.risk.specs import secret_arguments
from stockade.shell import parse
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

#: ``npm run`` scripts with these words in their name are high (they usually ship things).
SHIPPING_SCRIPT = re.compile(r"deploy|publish|release|upload|ship|prod", re.IGNORECASE)


def _command_after(values: int) -> tuple[Takes, ...]:
    """The operand kinds of a program that runs the command after ``values`` plain words."""
    plain: Takes = "value"
    return (*(plain,) * values, "argv")


def wrapper(
    floor: Tier,
    *flags: Flag,
    operands: tuple[str, ...] = (),
    examples: tuple[Example, ...] = (),
) -> Spec:
    """A wrapper: its options, ``operands`` before the command (``timeout DURATION``), and the
    floor its command is classified at."""
    return Spec(floor, operands=_command_after(len(operands)), flags=flags, examples=examples)


def run_command(ctx: Context, found: Found, call: Call, start: int, floor: Tier, what: str) -> None:
    """Classify the command at ``call.words[start:]``, at least at ``floor``."""
    if start >= len(call.words):
        found.add(R, "wrapper.no-command", f"{what} without a command runs nothing")
        return
    if floor > R:
        found.add(floor, "program.table", f"{what} is at least {floor.label}")
    ctx.command(found, call.shifted(start))


# --- the checks ----------------------------------------------------------------------------------


def env_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``env [-i] [-u N] [-C DIR] [-S STR] [NAME=V]… [CMD…]``; bare ``env`` dumps secrets."""
    words = call.words
    split = args.first(_ENV_SPLIT)
    if split is not None:
        text = split.value or ""
        if not split.statics[:1] or not split.statics[0]:
            found.add(D, "command.dynamic", "env -S: the command is only known at run time")
            return
        parsed = parse(text, depth=call.depth + 1)
        if parsed.problems or len(parsed.segments) != 1 or not parsed.segments[0].words:
            ctx.nested(found, call, text, "command.dynamic", "env -S string")
            found.add(D, "command.dynamic", "env -S string is not one simple command")
            return
        inner = parsed.segments[0]
        ctx.assignments(found, inner.assignments)
        rest = args.rest
        ctx.command(
            found,
            call.replaced(inner.words + words[rest:], inner.static + call.static[rest:]),
        )
        return
    index = args.rest
    if index < len(words) and words[index] == "-":
        index += 1
    while index < len(words) and "=" in words[index] and ASSIGNMENT_WORD.match(words[index]):
        name, _, assigned = words[index].partition("=")
        check_assignment(found, name, assigned, call.static[index])
        index += 1
    if index >= len(words):
        found.add(H, "env.dump", "env without a command prints every variable (secrets)")
        return
    ctx.command(found, call.shifted(index))


def xargs_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``xargs [opts] CMD args``: CMD runs with arguments read from stdin (unknown words,
    possibly flags), so they are classified as dynamic."""
    words = call.words
    index = args.rest
    if index >= len(words):
        found.add(R, "program.table", "xargs without a command runs echo")
        return
    replace: str | None = None
    given = args.first(_XARGS_REPLACE, _XARGS_REPLACE_OPTIONAL)
    if given is not None:
        replace = given.value if given.value is not None else "{}"
    inner_words = list(words[index:])
    inner_static = list(call.static[index:])
    if replace:
        for position, word in enumerate(inner_words):
            if position and replace in word:
                inner_words[position] = word.replace(replace, "$XARGS")
                inner_static[position] = False
    else:
        inner_words.append("$XARGS")
        inner_static.append(False)
    ctx.command(found, call.replaced(tuple(inner_words), tuple(inner_static)))


def watch_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``watch [opts] CMD…``: without ``-x`` the words are joined and run by ``sh -c``."""
    words = call.words
    index = args.rest
    if index >= len(words):
        found.add(R, "wrapper.no-command", "watch without a command")
    elif args.has(_WATCH_EXEC):
        ctx.command(found, call.shifted(index))
    elif all(call.static[index:]):
        ctx.nested(found, call, " ".join(words[index:]), "shell.nested-code", "watch")
    else:
        found.add(D, "command.dynamic", "watch: the command is only known at run time")


def command_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``command -v x`` looks a name up; ``command [-p] x …`` runs x."""
    if args.has(_COMMAND_LOOKUP):
        found.add(R, "shell.lookup", f"{args.name} -v only looks names up")
        return
    run_command(ctx, found, call, args.rest, R, args.name)


def exec_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``exec CMD`` replaces the shell with CMD; bare ``exec`` only applies redirects."""
    if len(call.words) == 1:
        found.add(R, "shell.redirect-only", "exec applies its redirects to the shell")
        return
    run_command(ctx, found, call, args.rest, R, "exec")


def busybox_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``busybox APPLET args``: classify the applet like the program of the same name."""
    if len(call.words) == 1 or call.words[1].startswith("-"):
        found.add(R, "program.table", "busybox without an applet lists its applets")
        return
    ctx.command(found, call.shifted(1))


def privileged_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """sudo/doas/su/pkexec…: destructive whatever they run (the spec's tier); the wrapped
    command is still classified so its own rules (``rm -rf /``) are reported too."""
    if args.rest < len(call.words) and args.name not in ("su", "newgrp", "sg"):
        ctx.command(found, call.shifted(args.rest))


def flock_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``flock [opts] LOCKFILE CMD…`` or ``flock [opts] LOCKFILE -c CODE``: ``-c`` is only
    read right after the lock file (flock looks for it there, not among its options)."""
    words = call.words
    index = args.rest
    if index < len(words) and words[index] in ("-c", "--command"):
        if index + 1 >= len(words):
            found.add(R, "wrapper.no-command", "flock -c without a command runs nothing")
            return
        found.add(L, "program.table", "flock is at least low")
        ctx.embedded(found, call, words[index + 1], call.static[index + 1], "flock -c")
        return
    run_command(ctx, found, call, index, L, "flock")


def runner_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``npx tsc``, ``uv run pytest``, ``poetry run x``: classify what the runner runs (at
    least at the runner's tier, which the generic pass reported)."""
    words = call.words
    index = args.rest
    floor = args.spec.tier if args.spec is not None and args.spec.tier is not None else L
    if any("module" in g.flag.values or "command" in g.flag.values for g in args.given):
        found.add(floor, "program.table", f"{args.name} is at least {floor.label}")
        return  # the module or command is classified with the flag's value
    if index >= len(words):
        found.add(R, "wrapper.no-command", f"{args.name} without a command")
    elif words[index].endswith(".py") and call.static[index]:
        ctx.command(found, call.replaced(("python", *words[index:]), (True, *call.static[index:])))
    else:
        ctx.command(found, call.shifted(index))


def package_script_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``npm run build``: project scripts are low; ones that ship things are high."""
    shown = args.name
    if not args.operands:
        found.add(R, "npm.script", f"{shown} lists the scripts")
        return
    name, static, _, _ = args.operands[0]
    if not static:
        found.add(D, "subcommand.dynamic", f"{shown}: script name only known at run time")
    elif SHIPPING_SCRIPT.search(name) is not None:
        found.add(H, "npm.script", f"{shown} {name}: scripts that deploy/publish are high")
    else:
        found.add(L, "npm.script", f"{shown} {name} runs a project script")
    secret_arguments(found, call)


def at_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """at/batch: high (runs later, outside the session); the commands they read from a
    heredoc or here-string are classified, a pipe into them is shell code."""
    name = args.name
    if args.has(_AT_LIST):
        found.add(R, "program.table", "at -l/-c lists or shows jobs")
        return
    found.add(H, "system.persistence", f"{name} runs commands later, outside the session")
    if args.has(_AT_REMOVE):
        return
    for redirect in call.seg.redirects:
        if redirect.op in ("<<", "<<-", "<<<"):
            code, readable = heredoc_code(redirect)
            if readable:
                ctx.nested(found, call, code, "system.persistence", f"the {name} job")
            else:
                found.add(D, "interpreter.stdin", f"{name} runs text known only at run time")
            return
    if any(given.name == "-f" for given in args.given):  # at's -f or batch's own
        found.add(D, "interpreter.source", f"{name} -f runs a file's commands later")
    elif call.seg.fed_by:
        found.add(D, "pipe.to-interpreter", f"a pipe feeds {name}, which runs it as code")


# --- the specs -----------------------------------------------------------------------------------

_ENV_SPLIT = value("-S", "--split-string")
_XARGS_REPLACE = value("-I")
_XARGS_REPLACE_OPTIONAL = optional("-i", "--replace")
_WATCH_EXEC = flag("-x", "--exec")
_COMMAND_LOOKUP = flag("-v", "-V")
_AT_LIST = flag("-l", "-c")
_AT_REMOVE = flag("-r", "-d")
_AT_FILE = read("-f")


def _privileged(rule: str, *flags: Flag, operands: tuple[str, ...] = ()) -> Spec:
    return Spec(
        D,
        rule,
        operands=_command_after(len(operands)),
        flags=flags,
        check=privileged_check,
        why="runs a command with other privileges",
    )


def runner(floor: Tier, *flags: Flag, operands: int = 0) -> Spec:
    """A package runner: its options (``-c`` shell code, ``-m`` a module), ``operands`` before
    the command (``rustup run TOOLCHAIN``), and the floor (high when it may download the
    program first)."""
    return Spec(floor, operands=_command_after(operands), flags=flags, check=runner_check)


#: ``npm run X`` and friends: a project script.
PACKAGE_SCRIPT = Spec(None, check=package_script_check)
#: A runner without options of its own (``poetry run``, ``bundle exec``).
PLAIN_RUNNER = runner(L)


def npm_exec() -> Spec:
    """``npm exec``/``npx``: its options (each use builds its own set)."""
    return runner(
        L,
        value("-p", "--package", "-w", "--workspace", "--prefix"),
        flag("-y", "--yes", "--no", "-q", "--quiet", "--ws", "--workspaces"),
        flag("--include-workspace-root", "--no-install", "--ignore-existing"),
        command("-c", "--call"),
    )


SPECS: dict[str, Spec] = {
    # --- wrappers: (floor, options, operands before the command) --------------------------
    "nice": wrapper(R, value("-n", "--adjustment"), examples=(("nice -n 5 ls", R),)),
    "timeout": wrapper(
        R,
        value("-s", "--signal", "-k", "--kill-after"),
        flag("-v", "--verbose", "--preserve-status", "--foreground"),
        operands=("duration",),
        examples=(("timeout 10 pytest", L), ("timeout -Z 5 ls", D, "wrapper.unknown-option")),
    ),
    "nohup": wrapper(L, examples=(("nohup ls", L), ("nohup", R))),
    "time": wrapper(
        R,
        value("-f", "--format"),
        write("-o", "--output"),
        flag("-p", "--portability", "-v", "--verbose", "-a", "--append", "-q", "--quiet"),
        examples=(("time make", M), ("time -o /etc/x ls", H, "write.outside-project")),
    ),
    "stdbuf": wrapper(R, value("-i", "--input", "-o", "--output", "-e", "--error")),
    "setsid": wrapper(L, flag("-c", "--ctty", "-f", "--fork", "-w", "--wait")),
    "chronic": wrapper(R, flag("-e", "-v")),
    "ionice": wrapper(R, value("-c", "--class", "-n", "--classdata"), flag("-t", "--ignore")),
    "builtin": wrapper(R),
    "coproc": wrapper(R),
    "unbuffer": wrapper(R, flag("-p")),
    "caffeinate": wrapper(R, value("-t", "-w"), flag("-d", "-i", "-m", "-s", "-u")),
    "catchsegv": wrapper(R),
    "xvfb-run": wrapper(
        L,
        value("-n", "--server-num", "-s", "--server-args", "-p", "--xauth-protocol"),
        value("-w", "--wait"),
        write("-e", "--error-file", "-f", "--auth-file"),
        flag("-a", "--auto-servernum"),
    ),
    "dbus-run-session": wrapper(L, read("--config-file"), program("--dbus-daemon")),
    "taskset": wrapper(R, flag("-a", "--all-tasks", "-c", "--cpu-list"), operands=("mask",)),
    "chrt": wrapper(
        L,
        value("-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"),
        flag("-a", "--all-tasks", "-b", "--batch", "-d", "--deadline", "-f", "--fifo"),
        flag("-i", "--idle", "-o", "--other", "-r", "--rr", "-R", "--reset-on-fork"),
        flag("-v", "--verbose"),
        operands=("priority",),
    ),
    "strace": wrapper(
        L,
        write("-o", "--output"),
        value("-a", "-b", "-e", "-E", "-I", "-p", "-P", "-s", "-S", "-u", "-X"),
        flag(*(f"-{letter}" for letter in "cCdDfFhiknqrtTvVwxyYzZ")),
    ),
    "ltrace": wrapper(
        L,
        write("-o", "--output"),
        value("-a", "-A", "-e", "-E", "-l", "-n", "-p", "-s", "-u"),
        flag(*(f"-{letter}" for letter in "bcCdDfhiLrStTVwx")),
    ),
    "valgrind": wrapper(L, flag("-h", "-q", "-v")),
    "entr": wrapper(L, flag(*(f"-{letter}" for letter in "acdnprsz"))),
    "proxychains": wrapper(H, read("-f"), flag("-q")),
    "proxychains4": wrapper(H, read("-f"), flag("-q")),
    "torsocks": wrapper(
        H,
        value("-u", "--user", "-p", "--pass", "-a", "--address", "-P", "--port"),
        flag("-i", "--isolate", "-d", "--debug", "-q", "--quiet", "-6"),
    ),
    "flock": Spec(
        L,
        operands=("value", "argv"),
        flags=(
            value("-w", "--wait", "--timeout", "-E", "--conflict-exit-code"),
            flag("-s", "--shared", "-x", "-e", "--exclusive", "-u", "--unlock", "-n", "--nb"),
            flag("--nonblock", "-o", "--close", "-F", "--no-fork", "--verbose"),
        ),
        check=flock_check,
        examples=(
            ("flock /tmp/lock make", M),
            ("flock -n /tmp/l -c 'rm -rf /'", D, "rm.recursive-force-root"),
            ("flock /tmp/l -c 'ls'", L),
        ),
    ),
    # --- wrappers with their own syntax ---------------------------------------------------
    "env": Spec(
        None,
        operands=("argv",),
        flags=(
            flag("-i", "--ignore-environment", "-0", "--null", "-v", "--debug"),
            value("-u", "--unset", "-C", "--chdir"),
            _ENV_SPLIT,
            optional("--block-signal", "--default-signal", "--ignore-signal"),
            flag("--list-signal-handling"),
        ),
        check=env_check,
        examples=(("env FOO=1 ls", R), ("env", H, "env.dump"), ("env -S 'rm -rf /'", D)),
    ),
    "xargs": Spec(
        None,
        operands=("argv",),
        flags=(
            flag("-0", "--null", "-o", "--open-tty", "-p", "--interactive"),
            flag("-r", "--no-run-if-empty", "-t", "--verbose", "-x", "--exit", "--show-limits"),
            read("-a", "--arg-file"),
            value("-d", "--delimiter", "-E", "-L", "--max-lines", "-n", "--max-args"),
            value("-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"),
            optional("-e", "--eof", "-l"),
            _XARGS_REPLACE,
            _XARGS_REPLACE_OPTIONAL,
        ),
        check=xargs_check,
        examples=(("xargs grep TODO", R), ("xargs rm -rf", D), ("xargs -a .env echo", H)),
    ),
    "watch": Spec(
        None,
        operands=("command",),
        flags=(
            value("-n", "--interval", "-q", "--equexit", "-s", "--shotsdir"),
            optional("-d", "--differences"),
            _WATCH_EXEC,
            flag("-b", "--beep", "-c", "--color", "-C", "--no-color", "-e", "--errexit"),
            flag("-g", "--chgexit", "-p", "--precise", "-r", "--no-rerun", "-t", "--no-title"),
            flag("-w", "--no-wrap", "--no-linewrap"),
        ),
        check=watch_check,
        examples=(("watch -n 5 git status", R), ("watch 'rm -rf /'", D)),
    ),
    "command": Spec(
        None,
        operands=("argv",),
        flags=(_COMMAND_LOOKUP, flag("-p")),
        check=command_check,
        examples=(("command -v git", R), ("command rm -rf /", D)),
    ),
    "exec": Spec(
        None,
        operands=("argv",),
        flags=(value("-a"), flag("-c", "-l")),
        check=exec_check,
        examples=(("exec > /dev/null", R), ("exec bash", D)),
    ),
    "busybox": Spec(None, check=busybox_check, examples=(("busybox rm -rf /", D),)),
    # --- privilege switches: destructive whatever they run --------------------------------
    "sudo": _privileged(
        "privilege.sudo",
        flag(*(f"-{letter}" for letter in "AbBEHiKklnNPSsVv"), "--preserve-env"),
        value("-C", "-D", "-g", "-h", "-p", "-R", "-r", "-T", "-t", "-U", "-u"),
        value("--close-from", "--chdir", "--group", "--host", "--prompt", "--chroot"),
        value("--role", "--type", "--command-timeout", "--other-user", "--user"),
    ),
    "doas": _privileged("privilege.sudo", flag("-L", "-n", "-s"), value("-C", "-u")),
    "su": _privileged(
        "privilege.switch-user",
        command("-c", "--command", "--session-command"),
        program("-s", "--shell"),
        value("-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"),
        flag("-l", "--login", "-m", "-p", "--preserve-environment", "-P", "--pty"),
        operands=("user",),
    ),
    "pkexec": _privileged(
        "privilege.switch-user", value("--user"), flag("--disable-internal-agent", "--keep-cwd")
    ),
    "run0": _privileged(
        "privilege.switch-user",
        value("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--nice"),
        value("--unit", "--property", "--description", "--slice", "--background"),
        flag("--no-ask-password", "--machine"),
    ),
    "runuser": _privileged(
        "privilege.switch-user",
        value("-u", "--user", "-g", "--group", "-G", "--supp-group", "-s", "--shell"),
        command("-c", "--command", "--session-command"),
        value("-w", "--whitelist-environment"),
        flag("-l", "--login", "-m", "-p", "--preserve-environment", "-P", "--pty"),
    ),
    "chroot": _privileged(
        "privilege.switch-user",
        value("--groups", "--userspec"),
        flag("--skip-chdir"),
        operands=("root",),
    ),
    "sg": _privileged("privilege.switch-user", command("-c"), operands=("group",)),
    "newgrp": _privileged("privilege.switch-user", operands=("group",)),
    "nsenter": _privileged(
        "privilege.switch-user",
        value("-t", "--target", "-S", "--setuid", "-G", "--setgid", "-w", "--wd"),
        optional(*(f"-{letter}" for letter in "muinpUCT")),
        flag("-a", "--all", "-r", "--root", "-F", "--no-fork", "--preserve-credentials"),
    ),
    # --- package runners (and the subcommand runners' shared shapes) ----------------------
    "npx": npm_exec(),
    "pnpx": runner(
        H,
        value("--package"),
        flag("--silent", "-s"),
        command("-c", "--shell-mode"),
    ),
    "bunx": runner(H, value("-p", "--package"), flag("--bun")),
    "uvx": runner(
        H,
        value("--from", "--with", "--with-editable", "--with-requirements", "--python", "-p"),
        value("--index", "--index-url", "--extra-index-url"),
        flag("--isolated", "--no-cache", "-q", "-v", "--offline"),
    ),
    # --- schedulers: run later, outside the session ---------------------------------------
    "at": Spec(
        None,
        operands=("value",),
        flags=(_AT_LIST, _AT_REMOVE, _AT_FILE, value("-q", "-t"), flag("-m", "-M", "-v")),
        check=at_check,
        examples=(("at now <<< 'rm -rf /'", D), ("at -l", R)),
    ),
    "batch": Spec(
        None,
        operands=("value",),
        flags=(read("-f"), value("-q"), flag("-m", "-M", "-v")),
        check=at_check,
        examples=(("batch -f jobs.txt", D, "interpreter.source"), ("batch <<< 'make'", H)),
    ),
    "systemd-run": Spec(
        H,
        "system.persistence",
        operands=("argv",),
        flags=(
            value("-p", "--property", "-u", "--unit", "-E", "--setenv", "-M", "--machine"),
            value("-H", "--host", "--description", "--slice", "--uid", "--gid", "--nice"),
            value("--working-directory", "--service-type", "--path-property"),
            value("--socket-property", "--timer-property"),
            value("--on-active", "--on-boot", "--on-startup", "--on-unit-active"),
            value("--on-unit-inactive", "--on-calendar"),
            flag("--user", "--system", "--scope", "-r", "--remain-after-exit", "--send-sighup"),
            flag("-S", "--shell", "-t", "--pty", "-P", "--pipe", "-q", "--quiet", "-G"),
            flag("--collect", "--wait", "--no-block", "--no-ask-password", "-d", "--same-dir"),
            flag("--on-timezone-change", "--on-clock-change", "--slice-inherit"),
        ),
        examples=(("systemd-run --user rm -rf /", D), ("systemd-run -p MemoryMax=1G make", H)),
    ),
}
