"""``find`` and ``fd``: listing files is read-only; ``-exec``/``-execdir``/``-ok`` (fd's
``-x``/``-X``) run a command, classified with ``{}`` standing for a path below the start
directory (a path for the checks on paths, but whatever was found when it is the program or
the script: destructive); ``-delete`` deletes (of ``/`` or ``~`` the hard deny); ``-fprint``
writes; searching for secret names is a secret read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import flag, optional, read, value
from stockade.risk.model import Args, Call, D, Flag, Found, H, M, R, Spec
from stockade.risk.paths import DANGER_NAMES, FOUND, danger, is_secret
from stockade.risk.specs import TERMINATORS, value_argv
from stockade.risk.specs import value as take_value

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

_EXEC = Flag(("-exec", "-execdir", "-ok", "-okdir"), takes="argv")
_DELETE = flag("-delete")
_NAME_TESTS = Flag(
    ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname"),
    takes="value",
)
_REGEX_TESTS = value("-regex", "-iregex")
_WRITES = Flag(("-fprint", "-fprint0", "-fls"), takes="output")
_WRITES_FORMATTED = Flag(("-fprintf",), takes=("output", "value"))
#: Options that select no files, so ``find / -maxdepth 2 -delete`` still deletes everything.
_NOT_FILTERS = (
    flag("-depth", "-d", "-xdev", "-mount", "-follow", "-noleaf", "-ignore_readdir_race"),
    flag("-noignore_readdir_race", "-daystart", "-print", "-print0", "-nowarn", "-warn"),
    value("-maxdepth", "-mindepth", "-regextype"),
)
_NOT_FILTER_SET = frozenset(_NOT_FILTERS)
_BEFORE_STARTS = frozenset({"-H", "-L", "-P", "-O0", "-O1", "-O2", "-O3"})


def find_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """find's expression is read here, one whole-word option at a time (its spellings and what
    their values are come from the spec): the start directories, then the tests and actions."""
    words = call.words
    statics = call.static
    count = len(words)
    index = 1
    while index < count and (words[index] in _BEFORE_STARTS or words[index] == "-D"):
        index += 2 if words[index] == "-D" else 1
    starts: list[tuple[str, bool]] = []
    while index < count and (words[index][:1] not in "-(!)," or words[index] == "-"):
        starts.append((words[index], statics[index]))
        index += 1
    start, start_static = starts[0] if starts else (".", True)
    for word, static in starts:
        ctx.read_path(found, "/." if word == "/" else word, static)
    args.placeholder = start.rstrip("/") + "/" + FOUND if start_static else "$FOUND"
    options = _FIND_OPTIONS
    filtered = False
    while index < count:
        word = words[index]
        flag = options.get(word)
        index += 1
        if flag is None:
            filtered = filtered or word[:1] == "-"  # an unlisted test filters (the safe side)
            continue
        if flag is _EXEC:
            end = index
            while end < count and words[end] not in TERMINATORS:
                end += 1
            value_argv(ctx, found, call, args, words[index:end], statics[index:end])
            index = end + 1
            filtered = True
            continue
        if flag is _DELETE:
            kind = danger(start, start_static, ctx.cwd)
            if kind is not None and not filtered:
                found.add(
                    D,
                    f"rm.recursive-force-{kind}",
                    f"find {start} -delete deletes {DANGER_NAMES[kind]}",
                )
            elif kind is not None:
                found.add(D, "find.delete-wide", f"find -delete across {DANGER_NAMES[kind]}")
            else:
                found.add(H, "find.delete", "find -delete deletes the files it matches")
            continue
        if flag not in _NOT_FILTER_SET:
            filtered = True
        for kind in flag.values:
            if index >= count:
                break
            text, static = words[index], statics[index]
            index += 1
            if flag is _NAME_TESTS:
                if is_secret(text, False):
                    found.add(H, "secret.read", f"find looks for secret files ({text!r})")
            elif kind != "value" and kind != "optional":
                take_value(ctx, found, call, args, kind, text, static, f"find {word}")


def fd_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """fd runs ``-x``/``-X`` commands with ``{}`` (and ``{/}``, ``{.}``…) as a found path."""
    args.placeholder = "./" + FOUND


SPECS: dict[str, Spec] = {
    "find": Spec(
        R,
        parse=False,
        flags=(
            _EXEC,
            _DELETE,
            _NAME_TESTS,
            _REGEX_TESTS,
            _WRITES,
            _WRITES_FORMATTED,
            *_NOT_FILTERS,
            read("-files0-from"),
            value("-amin", "-anewer", "-atime", "-cmin", "-cnewer", "-context", "-ctime"),
            value("-fstype", "-gid", "-group", "-inum", "-links", "-mmin", "-mtime", "-newer"),
            value("-perm", "-size", "-type", "-uid", "-used", "-user", "-xtype", "-samefile"),
            value("-printf", "-D", *(f"-newer{x}{y}" for x in "aBcm" for y in "aBcmt")),
            optional("-O"),
            flag("-empty", "-false", "-true", "-nouser", "-nogroup", "-readable", "-writable"),
            flag("-executable", "-ls", "-prune", "-quit", "-not", "-a", "-and", "-o", "-or"),
            flag("-H", "-L", "-P"),
        ),
        check=find_check,
        why="find lists files",
        examples=(
            ("find . -name '*.py'", R),
            ("find . -name '*.pyc' -delete", H, "find.delete"),
            ("find / -delete", D, "rm.recursive-force-root"),
            ("find / -name '*.tmp' -delete", D, "find.delete-wide"),
            ("find . -exec grep -l TODO {} +", R),
            ("find . -execdir python3 {} \\;", D, "interpreter.dynamic-script"),
            ("find . -exec {} \\;", D, "command.dynamic"),
            ("find . -name '*.sh' -execdir bash {} \\;", D, "interpreter.dynamic-script"),
            ("find . -fprint list.txt", M, "redirect.overwrite"),
            ("find . -name .env", H, "secret.read"),
            ("find . -files0-from .env", H, "secret.read"),
            ("find ~ -exec cat {} \\;", H, "read.outside-project"),
        ),
    ),
    "fd": Spec(
        R,
        operands=("pattern", "value"),
        flags=(
            Flag(("-x", "--exec", "-X", "--exec-batch"), takes="argv"),
            value("-d", "--max-depth", "--min-depth", "--exact-depth", "-E", "--exclude"),
            value("-t", "--type", "-e", "--extension", "-S", "--size", "--changed-within"),
            value("--changed-before", "-o", "--owner", "-c", "--color", "-j", "--threads"),
            value("--max-results", "--base-directory", "--path-separator", "--search-path"),
            value("--batch-size", "--and", "--format"),
            read("--ignore-file"),
            flag(*(f"-{letter}" for letter in "HIusigFalLp01q")),
        ),
        check=fd_check,
        why="fd lists files",
        examples=(
            ("fd test", R),
            ("fd -e py -x rm", H, "rm.delete"),
            ("fd -x sh -c 'x'", D),
            ("fd -x {} ;", D, "command.dynamic"),
        ),
    ),
}
#: find's options by spelling (all are whole words: ``-name``, ``-H``)
_FIND_OPTIONS = {name: flag for flag in SPECS["find"].flags or () for name in flag.names}
SPECS["gfind"] = SPECS["find"]  # GNU find on BSD and macOS
SPECS["fdfind"] = SPECS["fd"]  # Debian's name for fd
