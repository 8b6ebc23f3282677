"""awk is analysed rather than always destructive: a program without ``system()``,
``getline``, pipes or output redirection only reads (``awk '{print $1}'``). A program the
classifier does not see fails closed: a program file (``-f``, gawk's ``-E``, mawk's
``-W exec``), an include file (``-i``, except gawk's ``inplace``), an extension (``-l``), the
gawk debugger (``-D``). Each awk has its own options; plain ``awk`` may be any of them, so it
takes gawk's and mawk's.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stockade.risk.flags import flag, optional, value
from stockade.risk.model import Args, Call, D, Flag, Found, H, M, R, Spec

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

#: awk constructs that run commands or write files.
AWK_DANGER = re.compile(
    r"system\s*\(|getline|\|&|\|\s*\"|\bprintf?\b[^;{}\n]*(?:>|(?<!\|)\|(?!\|))|@load|@include"
)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: mawk ``-W`` options that run nothing (abbreviations included); any other (``exec``) fails
#: closed.
_HARMLESS_W = re.compile(
    r"^(?:d|du|dum|dump|h|he|hel|help|i|in|interactive|p|posix_space|"
    r"r|random=\d+|s|sprintf=\d+|u|usage|v|ve|version)$"
)

_UNSEEN = "the awk program is in a file the classifier does not read"

# POSIX awk's options (every awk has them)
_PROGRAM_FILE = Flag(("-f",), D, "awk.exec", "read", _UNSEEN)
_POSIX_VALUES = value("-F", "-v")
# gawk's (plain awk may be gawk: it takes these too)
_GNU_PROGRAM_FILE = Flag(("--file", "-E", "--exec"), D, "awk.exec", "read", _UNSEEN)
_GNU_VALUES = value("--field-separator", "--assign")
_SOURCE = value("-e", "--source")
_INCLUDE = value("-i", "--include")
_LOAD = Flag(("-l", "--load"), D, "awk.exec", "value", "awk loads a native extension")
_DEBUG = Flag(("-D", "--debug"), D, "awk.exec", "optional", "the gawk debugger runs what it reads")
_OUTPUTS = optional("-d", "--dump-variables", "-o", "--pretty-print", "-p", "--profile")
_LINT = optional("-L", "--lint")
_SANDBOX = flag("-S", "--sandbox", why="no system(), redirection or extensions")
_GNU_PLAIN = flag(
    *("-b", "-c", "-C", "-g", "-h", "-I", "-k", "-M", "-N", "-n", "-O", "-P", "-r", "-s", "-t"),
    *("-V", "--traditional", "--posix", "--csv", "--bignum", "--optimize"),
)
# mawk's (and gawk's, for compatibility): -W OPTION
_W = value("-W")


def awk_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """The program (the first operand, or ``-e`` texts) is scanned; the other operands are
    files read (``name=value`` operands are assignments)."""
    programs: list[tuple[str, bool]] = []
    program_file = sandbox = False
    for given in args.given:
        flag = given.flag
        if flag is _SOURCE and given.values:
            programs.append((given.values[0], given.statics[0]))
        elif flag is _PROGRAM_FILE or flag is _GNU_PROGRAM_FILE:
            program_file = True
        elif flag is _SANDBOX:
            sandbox = True
        elif flag is _INCLUDE and given.value == "inplace":
            found.add(M, "awk.in-place", "gawk -i inplace rewrites its files")
        elif flag is _INCLUDE:
            found.add(D, "awk.exec", f"awk includes {given.value!r}, which is not read")
        elif flag is _OUTPUTS and given.values:
            ctx.write_target(found, given.values[0], given.statics[0], "awk")
        elif (
            flag is _W
            and given.value is not None
            and any(_HARMLESS_W.match(part) is None for part in given.value.split(","))
        ):
            found.add(D, "awk.exec", f"awk -W {given.value}: a program file or option")
    operands = list(args.operands)
    if not programs and not program_file:
        if operands:
            word, static, _, _ = operands.pop(0)
            programs.append((word, static))
        else:
            programs.append(("", True))
    for program, static in programs:
        if not static:
            found.add(D, "awk.exec", "the awk program is only known at run time")
        elif AWK_DANGER.search(program) is not None and not sandbox:
            found.add(D, "awk.exec", "the awk program can run commands or write files")
        else:
            found.add(R, "awk.program", "the awk program only reads and prints")
        if "ENVIRON" in program:
            found.add(H, "secret.env-var", "the awk program reads the environment")
    for word, static, _, _ in operands:
        if not _ASSIGNMENT.match(word):
            ctx.read_path(found, word, static)


SPECS: dict[str, Spec] = {
    "gawk": Spec(
        None,
        flags=(
            _PROGRAM_FILE,
            _POSIX_VALUES,
            _GNU_PROGRAM_FILE,
            _GNU_VALUES,
            _SOURCE,
            _INCLUDE,
            _LOAD,
            _DEBUG,
            _OUTPUTS,
            _LINT,
            _SANDBOX,
            _GNU_PLAIN,
            _W,
        ),
        check=awk_check,
        options_first=True,  # gawk's getopt string starts with "+"
        examples=(
            ("gawk '{print}' f", R, "awk.program"),
            ("awk '{print}' src/main.py -f x", R, "awk.program"),
            ("awk '{print $1}' data.txt", R, "awk.program"),
            ("gawk -f prog.awk f", D, "awk.exec"),
            ("awk -f prog.awk data.txt", D, "awk.exec"),
            ("gawk -E prog.awk", D, "awk.exec"),
            ("gawk --exec=prog.awk", D, "awk.exec"),
            ("awk -W exec prog.awk", D, "awk.exec"),
            ("gawk -i inplace '{print}' f", M, "awk.in-place"),
            ("gawk -i lib.awk '{print}' f", D, "awk.exec"),
            ("gawk -l ./ext.so 'BEGIN{}'", D, "awk.exec"),
            ("gawk --sandbox 'BEGIN{system(\"id\")}'", R),
            ("gawk -o/etc/x '{print}' f", H, "write.outside-project"),
            ("awk '{print}' .env", H, "secret.read"),
        ),
    ),
    "mawk": Spec(
        None,
        flags=(_PROGRAM_FILE, _POSIX_VALUES, _W),
        check=awk_check,
        options_first=True,
        examples=(
            ("mawk -W version", R),
            ("mawk -W exec prog.awk", D, "awk.exec"),
            ("mawk -Wi '{print}' f", R),
            ("mawk 'BEGIN{system(\"ls\")}'", D, "awk.exec"),
        ),
    ),
    "nawk": Spec(
        None,
        flags=(_PROGRAM_FILE, _POSIX_VALUES, flag("-d", "-version", "--version", "-safe")),
        check=awk_check,
        options_first=True,
        examples=(("nawk -f p.awk f", D, "awk.exec"), ("nawk '{print}' f", R)),
    ),
}
#: ``awk`` is gawk or mawk (or nawk): gawk's options include the others' (``-W`` too).
SPECS["awk"] = SPECS["gawk"]
