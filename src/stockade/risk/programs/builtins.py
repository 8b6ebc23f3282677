"""Shell builtins and harmless utilities: ``echo``, ``pwd``, ``ls``, ``whoami``… (read-only),
``cd`` (later relative paths resolve where it went), ``alias``/``trap`` (their code is
classified), ``printenv``/``set`` (bare, they print every variable: secrets), ``hash -p``
(rebinds a program name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import command, flag, read, value, write
from stockade.risk.model import Args, Call, D, Found, H, L, R, Spec
from stockade.risk.nested import arithmetic
from stockade.risk.paths import HOME_VAR
from stockade.tiers import Tier
from stockade.vocabulary import SECRET_NAME_PATTERN

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context


def cd_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``cd``/``pushd``: read-only, but later relative paths resolve where it went. (Its
    words are read here: ``-L``/``-P``/``-e`` are its only options.)"""
    words = call.words
    index = 1
    while index < len(words) and words[index][:1] == "-" and len(words[index]) > 1:
        index += 1
    if index >= len(words):
        ctx.cwd = "~" if args.name == "cd" else "?"
        return
    target, static = words[index], call.static[index]
    if not static and HOME_VAR.match(target) is None:
        ctx.cwd = "?"
    elif target[:1] in "/~":
        ctx.cwd = target
    elif HOME_VAR.match(target) is not None:
        ctx.cwd = "~" + HOME_VAR.sub("", target)
    elif target == "-":
        ctx.cwd = "?"
    elif ctx.cwd is not None and ctx.cwd != "?":
        ctx.cwd = ctx.cwd.rstrip("/") + "/" + target


def let_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    arithmetic(found, call.words[1:])


def alias_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``alias name='cmd'``: the value is classified as the command it stands for."""
    found.add(L if len(call.words) > 1 else R, "shell.declaration", "alias")
    for word, static, _, _ in args.operands:
        name, eq, text = word.partition("=")
        if not eq:
            continue
        if not static:
            found.add(D, "command.dynamic", f"alias {name}: value only known at run time")
        elif text.strip():
            ctx.nested(found, call, text, "shell.nested-code", f"alias {name}")


def trap_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``trap 'CODE' SIGNAL…``: CODE runs later in this shell, so it is classified."""
    operands = args.operands
    found.add(L if operands else R, "shell.declaration", "trap")
    if len(operands) >= 2:
        code, static, _, _ = operands[0]
        if not static:
            found.add(D, "command.dynamic", "trap: code only known at run time")
        elif code.strip() and code != "-":
            ctx.nested(found, call, code, "shell.nested-code", "trap")


def printenv_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    names = [word for word, _, _, _ in args.operands if word[:1] != "-"]
    if not names:
        found.add(H, "env.dump", f"{args.name} without names prints every variable (secrets)")
    elif any(SECRET_NAME_PATTERN.search(name) for name in names):
        found.add(H, "secret.env-var", f"{args.name} prints a variable named like a secret")
    else:
        found.add(R, "program.table", f"{args.name} prints named variables")


def set_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if len(call.words) == 1:
        found.add(H, "env.dump", "set without arguments prints every variable (secrets)")
    else:
        found.add(R, "program.table", "set changes shell options or positional parameters")


_HASH_PATH = value("-p")


def lookup_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``type``, ``hash``: name lookups; ``hash -p PATH NAME`` rebinds a name."""
    if args.has(_HASH_PATH):
        found.add(D, "command.dynamic", "hash -p makes a program name run another file")
    else:
        found.add(R, "shell.lookup", f"{args.name} only looks names up")


def _none(tier: Tier, names: str) -> dict[str, Spec]:
    """Programs whose arguments are not files (or are files whose metadata only is read)."""
    return {name: Spec(tier) for name in names.split()}


SPECS: dict[str, Spec] = {
    **_none(
        R,
        """echo printf true false : pwd sleep yes seq expr factor numfmt tty locale whoami id
        groups uname arch nproc uptime free vmstat iostat mpstat lscpu lsblk lsusb lspci lsmod
        lsof who w last users getconf cal ncal tput clear dirs popd shift return exit break
        continue wait jobs times caller help compgen complete compopt logname bc ps pgrep
        pstree top htop btop history netstat ss nvidia-smi sw_vers systeminfo""",
    ),
    # metadata only: listing, stat, sizes, name lookups
    **_none(
        R,
        """ls dir vdir exa eza lsd stat df realpath readlink basename dirname pathchk
        which whereis test [ mountpoint namei locate mlocate plocate""",
    ),
    # …but a list of names read from a file is echoed back in error messages (``du:
    # cannot access 'API_KEY=…'``): that file is read like a reader's operand
    "du": Spec(
        R,
        flags=(
            read("--files0-from", "-X", "--exclude-from"),
            value("-d", "--max-depth", "-B", "--block-size", "-t", "--threshold", "--time-style"),
            value("--exclude", "--time"),
        ),
        examples=(("du -sh dist", R), ("du --files0-from=.env", H, "secret.read")),
    ),
    "file": Spec(
        R,
        flags=(
            read("-f", "--files-from", "-m", "--magic-file"),
            value("-e", "--exclude", "-F", "--separator", "-P", "--parameter"),
        ),
        examples=(("file build/app", R), ("file -f .env", H, "secret.read")),
    ),
    "tr": Spec(R, flags=(flag("-c", "-C", "--complement", "-d", "--delete", "-s", "-t"),)),
    "tree": Spec(R, flags=(write("-o"), value("-L", "-P", "-I", "--charset", "--filelimit"))),
    **_none(
        L,
        """read getopts ulimit umask shopt bind fg bg disown unalias suspend stty notify-send
        say pbcopy pbpaste xclip xsel wl-copy ping ping6 traceroute tracepath mtr dig
        nslookup host whois""",
    ),
    "mapfile": Spec(
        L,
        flags=(command("-C"), value("-c", "-d", "-n", "-O", "-s", "-u"), flag("-t")),
        examples=(("mapfile -C 'rm -rf /' -c 1 < f", D, "rm.recursive-force-root"),),
    ),
    "readarray": Spec(
        L, flags=(command("-C"), value("-c", "-d", "-n", "-O", "-s", "-u"), flag("-t"))
    ),
    "cd": Spec(R, check=cd_check, parse=False, why="cd changes the working directory"),
    "pushd": Spec(R, check=cd_check, parse=False, why="pushd changes the working directory"),
    "let": Spec(None, check=let_check),
    "alias": Spec(None, check=alias_check, examples=(("alias ll='ls -la'", L),)),
    "trap": Spec(None, check=trap_check, examples=(("trap 'rm -rf /' EXIT", D),)),
    "printenv": Spec(
        None,
        check=printenv_check,
        examples=(("printenv HOME", R), ("printenv", H, "env.dump"), ("printenv API_KEY", H)),
    ),
    "set": Spec(None, check=set_check, examples=(("set -euo pipefail", R), ("set", H))),
    "type": Spec(None, check=lookup_check),
    "hash": Spec(None, flags=(_HASH_PATH,), check=lookup_check),
}
