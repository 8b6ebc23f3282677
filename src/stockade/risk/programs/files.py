"""Programs that create, change and delete files: ``mkdir``/``touch`` (low), ``cp``/``mv``
(medium), ``rm`` (high; recursive and force destructive, of ``/`` or ``~`` a built-in hard
deny), ``chmod`` (world-writable modes a hard deny), ``tee``/``sort -o``/``uniq`` outputs,
``shred``. Where a written file lands decides the rest: a device is destructive; a protected
file, the home directory or an absolute path outside ``/tmp`` is high.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stockade.risk.flags import command, flag, optional, program, read, value, write
from stockade.risk.model import Args, Call, D, Flag, Found, H, L, M, R, Spec
from stockade.risk.paths import (
    DANGER_NAMES,
    DANGER_ORDER,
    HOME_VAR,
    P_DEVICE,
    danger,
    is_secret,
    path_class,
)

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

# --- rm ------------------------------------------------------------------------------------------

_RM_RECURSIVE = flag("-r", "-R", "--recursive")
_RM_FORCE = flag("-f", "--force")
_RM_NO_PRESERVE = flag("--no-preserve-root")


#: The letters of the short spellings (``-rf`` is ``-r -f`` in any order).
_RECURSIVE_LETTERS = frozenset(name[1] for name in _RM_RECURSIVE.names if len(name) == 2)
_FORCE_LETTERS = frozenset(name[1] for name in _RM_FORCE.names if len(name) == 2)


def rm_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """rm: high; recursive+force (in any spelling) destructive; of / or ~ its own rule ids.
    Its words are read here: an argument only known at run time may be its flags."""
    recursive = force = no_preserve = dynamic_flags = options_done = False
    targets: list[tuple[str, bool]] = []
    for word, static in zip(call.words[1:], call.static[1:], strict=False):
        if not options_done:
            if word == "--":
                options_done = True
                continue
            if not static and word[:1] in "$`" and HOME_VAR.match(word) is None:
                dynamic_flags = True  # "$X" may expand to -rf
            elif word.startswith("--"):
                recursive = recursive or word in _RM_RECURSIVE.names
                force = force or word in _RM_FORCE.names
                no_preserve = no_preserve or word in _RM_NO_PRESERVE.names
                continue
            elif word[:1] == "-" and len(word) > 1:
                recursive = recursive or not _RECURSIVE_LETTERS.isdisjoint(word)
                force = force or not _FORCE_LETTERS.isdisjoint(word)
                continue
        targets.append((word, static))
    spelled = "recursive and force" if recursive and force else "recursive"
    if recursive or no_preserve:
        worst: str | None = "root" if no_preserve else None
        for word, static in targets:
            kind = danger(word, static, ctx.cwd)
            if kind is not None and (worst is None or DANGER_ORDER[kind] < DANGER_ORDER[worst]):
                worst = kind
        if worst is not None:
            found.add(
                D, f"rm.recursive-force-{worst}", f"{spelled} delete of {DANGER_NAMES[worst]}"
            )
        elif recursive and force:
            found.add(D, "rm.recursive-force", "rm with recursive and force flags")
    if dynamic_flags:
        found.add(
            D,
            "rm.dynamic-flags",
            'an argument only known at run time may be flags (write `rm -- "$X"`)',
        )
    for word, static in targets:
        if path_class(word, static, ctx.cwd) == P_DEVICE:
            found.add(D, "write.device", f"deletes the device node {word!r}")
        elif is_secret(word, static):
            found.add(H, "secret.read", f"deletes {word!r}, which looks like a secret")


# --- chmod / chown / chgrp -----------------------------------------------------------------------

_OCTAL_MODE = re.compile(r"^0*[0-7]{1,4}$")
_SYMBOLIC_CLAUSE = re.compile(r"^([ugoa]*)((?:[-+=][rwxXstugo]*)+)$")
_ACTION = re.compile(r"[-+=][rwxXstugo]*")


def world_writable(mode: str) -> bool:
    """``777``, ``0666``, ``o+w``, ``a+rwx``, ``ugo=rwx``, ``o=u``… (others may write)."""
    if _OCTAL_MODE.match(mode):
        return int(mode[-1]) & 2 == 2
    for clause in mode.split(","):
        match = _SYMBOLIC_CLAUSE.match(clause)
        if match is None:
            continue
        who, actions = match.groups()
        if "o" not in who and "a" not in who:
            continue
        for action in _ACTION.findall(actions):
            if action[0] in "+=" and ("w" in action or "u" in action or "g" in action):
                return True
    return False


def setuid(mode: str) -> bool:
    if _OCTAL_MODE.match(mode):
        digits = mode.lstrip("0")
        return len(digits) == 4 and int(digits[0]) & 6 != 0
    return any(
        "s" in action and action[0] in "+="
        for clause in mode.split(",")
        for action in _ACTION.findall(clause)
    )


_RECURSIVE = flag("-R", "--recursive")
_REFERENCE = read("--reference")


def _ownership(name: str) -> tuple[Flag, ...]:
    """The options of chmod, chown or chgrp: coreutils gives the three the same ones (and
    chown/chgrp ``--from``)."""
    own: tuple[Flag, ...] = (value("--from"),) if name != "chmod" else ()
    return (
        _RECURSIVE,
        _REFERENCE,
        flag("-c", "--changes", "-f", "--silent", "--quiet", "-v", "--verbose"),
        flag("-h", "--no-dereference", "--dereference", "-H", "-L", "-P"),
        flag("--preserve-root", "--no-preserve-root"),
        *own,
    )


def chmod_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """chmod: low in the project; world-writable modes and setuid are flagged; recursive
    changes of /, ~ or system directories are destructive. chown/chgrp are high. The mode
    can look like an option (``chmod -w f``), so the words are read here."""
    name = args.name
    spec = args.spec
    letters = set(spec.index.short) if spec is not None else set()
    recursive = False
    mode: tuple[str, bool] | None = None
    targets: list[tuple[str, bool]] = []
    for word, static in zip(call.words[1:], call.static[1:], strict=False):
        if word.startswith("--"):
            recursive = recursive or word in _RECURSIVE.names
            if word.partition("=")[0] in _REFERENCE.names:
                mode = ("", True)
            continue
        if word[:1] == "-" and len(word) > 1 and set(word[1:]) <= letters:
            recursive = recursive or "R" in word
            continue
        if mode is None:
            mode = (word, static)  # the mode, or chown's owner
        else:
            targets.append((word, static))
    found.add(
        L if name == "chmod" else H, "program.table", f"{name} changes permissions or ownership"
    )
    if name == "chmod" and mode is not None:
        text, static = mode
        if not static:
            found.add(H, "program.table", "chmod: the mode is only known at run time")
        elif world_writable(text):
            found.add(D, "chmod.world-writable", f"chmod {text} makes files writable by every user")
        elif setuid(text):
            found.add(H, "chmod.setuid", f"chmod {text} sets the setuid/setgid bit")
    for word, static in targets:
        if recursive and danger(word, static, ctx.cwd) is not None:
            found.add(D, "fs.recursive-system", f"{name} -R of {word!r}")
        ctx.write_target(found, word, static, name)


# --- outputs that count like a redirect ----------------------------------------------------------

_TEE_APPEND = flag("-a", "--append")


def tee_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    files = [(word, static) for word, static, _, _ in args.operands]
    if not files:
        found.add(R, "program.table", "tee without files only copies stdin to stdout")
    append = args.has(_TEE_APPEND)
    for word, static in files:
        ctx.write_target(found, word, static, "redirect", append)


#: A Perl substitution or transliteration without interpolation, code flags (``e``) or code
#: blocks: the one shape of Perl rename's expression that is known not to run code.
_SAFE_SUBSTITUTION = re.compile(
    r"(?:s|y|tr)([/|#,:!])"
    r"(?:(?!\1)[^\\$@`]|\\[^\\$@]|\$(?=\1))*"  # the pattern (``$`` only as its end anchor)
    r"\1(?:(?!\1)[^\\$@`]|\\[^\\$@])*\1[gimsxr]*"
)
#: What makes an expression Perl code: calls, blocks, variables, backticks, named builtins.
_PERL_CODE = re.compile(r"[(){};$@`]|\b(?:system|exec|qx|open|eval|unlink|require|do)\b")


def rename_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``rename EXPR FILE…`` (the Perl rename of Debian/Ubuntu) evaluates EXPR as Perl code;
    util-linux ``rename FROM TO FILE…`` does not. A plain ``s/a/b/`` or ``y/a-z/A-Z/`` and
    plain text (util-linux's FROM) are renames; anything else that reads as Perl fails closed."""
    if not args.operands:
        return
    expression, static, _, _ = args.operands[0]
    if not static:
        found.add(
            D, "interpreter.inline-code", "rename: the Perl expression is only known at run time"
        )
    elif _SAFE_SUBSTITUTION.fullmatch(expression) is not None and "(?" not in expression:
        return
    elif (expression[:1] in ("s", "y") and expression[1:2] in "/|#,:!") or _PERL_CODE.search(
        expression
    ):
        found.add(D, "interpreter.inline-code", "rename evaluates its expression as Perl code")


SPECS: dict[str, Spec] = {
    # --- low: reversible, in the project --------------------------------------------------
    "mkdir": Spec(
        L,
        operands=("write",),
        flags=(value("-m", "--mode"), flag("-p", "--parents", "-v", "-Z"), optional("--context")),
        examples=(("mkdir -p build/out", L), ("mkdir /opt/app", H, "write.outside-project")),
    ),
    "touch": Spec(
        L,
        operands=("write",),
        flags=(
            value("-d", "--date", "-r", "--reference", "-t", "--time"),
            flag("-a", "-c", "--no-create", "-h", "--no-dereference", "-m"),
        ),
        examples=(("touch notes.md", L), ("touch ~/x", H, "write.home")),
    ),
    "rmdir": Spec(
        L, operands=("write",), flags=(flag("-p", "--parents", "-v", "--ignore-fail-on-non-empty"),)
    ),
    "mktemp": Spec(
        L,
        operands=("write",),
        flags=(write("-p"), value("--suffix"), optional("--tmpdir"), flag("-d", "-q", "-u", "-t")),
    ),
    "mkfifo": Spec(L, operands=("write",), flags=(value("-m", "--mode"), optional("--context"))),
    "ln": Spec(
        L,
        operands=("write",),
        flags=(
            value("-S", "--suffix"),
            optional("--backup"),
            write("-t", "--target-directory"),
            flag("-s", "--symbolic", "-f", "--force", "-n", "-r", "-T", "-v", "-L", "-P", "-b"),
        ),
        examples=(("ln -s target link", L), ("ln -sf x ~/.bashrc", H, "write.protected")),
    ),
    "split": Spec(
        L,
        operands=("read", "write"),
        flags=(
            value("-a", "--suffix-length", "-b", "--bytes", "-C", "--line-bytes", "-l"),
            value("--lines", "-n", "--number", "-t", "--separator", "--additional-suffix"),
            optional("--numeric-suffixes", "--hex-suffixes"),
            command("--filter"),
        ),
        examples=(
            ("split -l 100 big.log part-", L),
            ("split --filter='rm -rf ~' f", D, "rm.recursive-force-home"),
        ),
    ),
    "csplit": Spec(
        L,
        operands=("read", "value"),
        flags=(value("-b", "--suffix-format", "-n", "--digits"), write("-f", "--prefix")),
    ),
    # --- medium: mutating but recoverable ------------------------------------------------
    "cp": Spec(
        M,
        operands=("write",),
        flags=(
            write("-t", "--target-directory"),
            value("-S", "--suffix", "--no-preserve", "--sparse"),
            optional("--backup", "--preserve", "--reflink", "--update", "--context"),
        ),
        examples=(
            ("cp a.txt b.txt", M),
            ("cp img /dev/sda", D, "write.device"),
            ("cp .env /tmp/x", H),
        ),
    ),
    "mv": Spec(
        M,
        operands=("write",),
        flags=(
            write("-t", "--target-directory"),
            value("-S", "--suffix"),
            optional("--backup", "--update", "--context"),
        ),
        examples=(("mv old.py new.py", M), ("mv -t /etc x", H, "write.outside-project")),
    ),
    "install": Spec(
        M,
        operands=("write",),
        flags=(
            value("-m", "--mode", "-o", "--owner", "-g", "--group", "-S", "--suffix"),
            write("-t", "--target-directory"),
            program("--strip-program"),
            optional("--backup", "--context"),
        ),
        examples=(("install -m 755 bin/x out/x", M), ("install --strip-program=/tmp/s x y", H)),
    ),
    "rename": Spec(
        M,
        operands=("value", "write"),
        flags=(Flag(("-e", "-E"), takes="code"), flag("-v", "-n", "-f", "-s", "-o")),
        check=rename_check,
        examples=(
            ("rename 's/a/b/e' *.txt", D, "interpreter.inline-code"),
            ("rename 'system(\"id\")' f", D, "interpreter.inline-code"),
            ("rename 's/a/@{[`id`]}/' f", D, "interpreter.inline-code"),
            ("rename 's/(?{ system 1 })//' f", D, "interpreter.inline-code"),
            ("rename 's/\\.htm$/.html/' *.htm", M),
            ("rename 's/x/$ENV{HOME}/' f", D, "interpreter.inline-code"),
            ("rename 's/ /_/g' *.txt", M),
            ("rename 'y/A-Z/a-z/' *", M),
            ("rename .htm .html *.htm", M),
        ),
    ),
    "truncate": Spec(
        M,
        operands=("write",),
        flags=(value("-s", "--size"), read("-r", "--reference"), flag("-c", "-o")),
    ),
    "sponge": Spec(M, operands=("write",), flags=(flag("-a"),)),
    "dos2unix": Spec(M, operands=("write",), flags=(value("-c", "--convmode"),)),
    "unix2dos": Spec(M, operands=("write",), flags=(value("-c", "--convmode"),)),
    "patch": Spec(
        M,
        operands=("write", "read"),
        flags=(
            value("-p", "--strip", "-B", "--prefix", "-z", "--suffix", "-V"),
            value("--version-control", "-D", "--ifdef", "-F", "--fuzz", "-Y"),
            value("--basename-prefix", "--reject-format", "--quoting-style", "-g", "--get"),
            read("-i", "--input"),
            write("-o", "--output", "-r", "--reject-file", "-d", "--directory"),
            optional("--merge", "--backup-if-mismatch"),
        ),
        examples=(("patch -p1 < fix.patch", M), ("patch -i .env x", H, "secret.read")),
    ),
    "tee": Spec(
        R,
        flags=(_TEE_APPEND, flag("-i", "-p"), optional("--output-error")),
        check=tee_check,
        examples=(("echo data | tee /tmp/x", L), ("tee /dev/sda < img", D, "write.device")),
    ),
    "sort": Spec(
        R,
        operands=("read",),
        flags=(
            Flag(("-o", "--output"), takes="output"),
            program("--compress-program"),
            read("--files0-from", "--random-source"),
            write("-T", "--temporary-directory"),
            value("-k", "--key", "-t", "--field-separator", "-S", "--buffer-size"),
            value("--batch-size", "--parallel", "--sort"),
            optional("--check"),
        ),
        examples=(
            ("sort names.txt", R),
            ("sort -o out.txt in.txt", M, "redirect.overwrite"),
            ("sort -o /tmp/sorted.txt in.txt", L),
            ("sort --compress-program=gzip f", M),
            ("sort --compress-program=sh f", D, "interpreter.stdin"),
        ),
    ),
    "uniq": Spec(
        R,
        operands=("read", "output"),
        flags=(
            value("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"),
            optional("--all-repeated", "--group"),
        ),
        examples=(("uniq -c counts.txt", R), ("uniq in.txt /etc/out", H)),
    ),
    # --- high: ownership, attributes, deletion -------------------------------------------
    "chown": Spec(None, flags=_ownership("chown"), check=chmod_check, parse=False),
    "chgrp": Spec(None, flags=_ownership("chgrp"), check=chmod_check, parse=False),
    "chmod": Spec(
        None,
        parse=False,
        flags=_ownership("chmod"),
        check=chmod_check,
        examples=(
            ("chmod +x run.sh", L),
            ("chmod 777 f", D, "chmod.world-writable"),
            ("chmod -R 755 /", D, "fs.recursive-system"),
            ("chmod 4755 bin/x", H, "chmod.setuid"),
        ),
    ),
    "chattr": Spec(
        H,
        operands=("value", "write"),
        flags=(value("-v", "-p"), flag("-R", "-V", "-f")),
    ),
    "setfacl": Spec(
        H,
        operands=("write",),
        flags=(
            value("-m", "--modify", "-x", "--remove", "--set"),
            read("-M", "--modify-file", "-X", "--remove-file", "--set-file", "--restore"),
        ),
    ),
    "mknod": Spec(
        H, operands=("write", "value"), flags=(value("-m", "--mode"), optional("--context"))
    ),
    "rm": Spec(
        H,
        "rm.delete",
        operands=("value",),
        flags=(
            _RM_RECURSIVE,
            _RM_FORCE,
            _RM_NO_PRESERVE,
            flag("-i", "-I", "-d", "--dir", "-v", "--verbose", "--one-file-system"),
            optional("--interactive", "--preserve-root"),
        ),
        check=rm_check,
        parse=False,
        why="rm deletes files",
        examples=(
            ("rm file.txt", H, "rm.delete"),
            ("rm -rf build", D, "rm.recursive-force"),
            ("rm -rf /", D, "rm.recursive-force-root"),
            ('rm "$f"', D, "rm.dynamic-flags"),
            ('rm -- "$f"', H),
        ),
    ),
    "unlink": Spec(H, "rm.delete", check=rm_check, parse=False, why="unlink deletes a file"),
    "shred": Spec(D, "fs.shred", why="shred destroys file contents beyond recovery"),
    "wipe": Spec(D, "fs.shred", why="wipe destroys file contents beyond recovery"),
    "srm": Spec(D, "fs.shred", why="srm destroys file contents beyond recovery"),
}
