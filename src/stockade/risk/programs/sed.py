"""sed: read-only, unless ``-i`` (medium), a ``w`` file in the script (the target's tier), an
``e`` command or ``s///e`` flag (destructive). A script that does not parse, is only known at
run time, or sits in a file the classifier does not read (``-f``) fails closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import flag, optional, read, value
from stockade.risk.model import Args, Call, D, Found, Given, H, M, R, Spec
from stockade.risk.paths import HARMLESS_DEVICES

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

_EXPRESSION = value("-e", "--expression")
_IN_PLACE = optional("-i", "--in-place")
_SANDBOX = flag("--sandbox")
_SCRIPT_FILE = read(
    "-f",
    "--file",
    tier=D,
    rule="sed.unparsed",
    why="the sed script is in a file the classifier does not read",
)


def sed_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    in_place: Given | None = None
    sandbox = script_file = False
    scripts: list[tuple[str, bool]] = []
    for given in args.given:
        flag = given.flag
        if flag is _EXPRESSION and given.values:
            scripts.append((given.values[0], given.statics[0]))
        elif flag is _IN_PLACE:
            in_place = given
        elif flag is _SANDBOX:
            sandbox = True
        elif flag is _SCRIPT_FILE:
            script_file = True
    operands = [(word, static) for word, static, _, _ in args.operands]
    if in_place is not None and not in_place.values and operands[:1] == [("", True)]:
        operands = operands[1:]  # BSD `sed -i '' …`
    if not scripts and not script_file and operands:
        scripts.append(operands[0])
        operands = operands[1:]
    if in_place is not None:
        found.add(M, "sed.in-place", "sed -i rewrites its files")
    for script, static in scripts:
        if not static:
            found.add(D, "sed.unparsed", "the sed script is only known at run time")
            continue
        result = scan(script)
        if result is None:
            found.add(D, "sed.unparsed", "sed script we cannot parse")
            continue
        executes, writes, reads = result
        if executes and not sandbox:
            found.add(D, "sed.exec", "the sed script runs shell commands (e)")
        for target in writes if not sandbox else ():
            if target not in HARMLESS_DEVICES:
                found.add(M, "sed.write", f"the sed script writes {target!r}")
                ctx.write_target(found, target, True, "sed")
        for source in reads:
            ctx.read_path(found, source, True)
    for word, static in operands:
        if in_place is not None:
            ctx.write_target(found, word, static, "sed")
        else:
            ctx.read_path(found, word, static)


def scan(script: str) -> tuple[bool, list[str], list[str]] | None:
    """Scan a sed script: (runs commands, files written, files read), or None when it does
    not parse (the caller fails closed)."""
    executes = False
    writes: list[str] = []
    reads: list[str] = []
    text = script
    length = len(text)
    index = 0

    def rest_of_line(start: int) -> tuple[str, int]:
        end = text.find("\n", start)
        end = length if end < 0 else end
        return text[start:end].strip(), end

    def delimited(start: int, delimiter: str) -> int:
        """Index just past the closing delimiter of a regex/replacement part, or -1."""
        position = start
        while position < length:
            char = text[position]
            if char == "\\":
                position += 2
                continue
            if char == delimiter:
                return position + 1
            if char == "\n" and delimiter != "\n":
                return -1
            position += 1
        return -1

    def address(start: int) -> int:
        position = start
        if position < length and text[position].isdigit():
            while position < length and (text[position].isdigit() or text[position] == "~"):
                position += 1
        elif position < length and text[position] == "$":
            position += 1
        elif position < length and text[position] in "/\\":
            if text[position] == "\\":
                if position + 1 >= length:
                    return -1
                delimiter = text[position + 1]
                position += 2
            else:
                delimiter = "/"
                position += 1
            position = delimited(position, delimiter)
            if position < 0:
                return -1
            while position < length and text[position] in "IM":
                position += 1
        return position

    while index < length:
        char = text[index]
        if char in " \t\n;":
            index += 1
            continue
        if char == "#":
            index = rest_of_line(index)[1]
            continue
        start = index
        index = address(index)
        if index < 0:
            return None
        if index > start and index < length and text[index] == ",":
            index += 1
            if index < length and text[index] in "+~":
                index += 1
                while index < length and text[index].isdigit():
                    index += 1
            else:
                index = address(index)
                if index < 0:
                    return None
        while index < length and text[index] in " \t!":
            index += 1
        if index >= length:
            return None if index > start else (executes, writes, reads)
        command = text[index]
        index += 1
        if command in "{}=dDgGhHlnNpPxzF":
            pass
        elif command in "qQLl":
            while index < length and (text[index].isdigit() or text[index] in " \t"):
                index += 1
        elif command in ":btTv":
            while index < length and text[index] not in ";\n}":
                index += 1
        elif command in "aic":
            line, index = rest_of_line(index)
            while line.endswith("\\") and index < length:
                line, index = rest_of_line(index + 1)
        elif command in "rRwW":
            name, index = rest_of_line(index)
            (reads if command in "rR" else writes).append(name)
        elif command == "e":
            executes = True
            index = rest_of_line(index)[1]
        elif command in "sy":
            if index >= length or text[index] in "\\\n":
                return None
            delimiter = text[index]
            index = delimited(index + 1, delimiter)
            if index < 0:
                return None
            index = delimited(index, delimiter)
            if index < 0:
                return None
            if command == "s":
                while index < length and (text[index] in "gpiImMe" or text[index].isdigit()):
                    executes = executes or text[index] == "e"
                    index += 1
                if index < length and text[index] in "wW":
                    name, index = rest_of_line(index + 1)
                    writes.append(name)
        else:
            return None
        while index < length and text[index] in " \t":
            index += 1
        if index < length and text[index] not in ";\n}#":
            return None
    return executes, writes, reads


_GNU_SED = (
    _EXPRESSION,
    _IN_PLACE,
    _SANDBOX,
    _SCRIPT_FILE,
    value("-l", "--line-length"),
    flag("-n", "--quiet", "--silent", "--debug", "--follow-symlinks", "--posix", "-E", "-r"),
    flag("--regexp-extended", "-s", "--separate", "-u", "--unbuffered", "-z", "--null-data"),
)

SPECS: dict[str, Spec] = {
    "sed": Spec(
        R,
        flags=_GNU_SED,
        check=sed_check,
        why="sed reads and prints",
        examples=(
            ("sed 's/a/b/' f", R),
            ("sed -n '1,20p' file.txt", R),
            ("sed -i 's/a/b/' f", M, "sed.in-place"),
            ("sed -i '' 's/a/b/' f", M, "sed.in-place"),
            ("sed 's/x/y/e' f", D, "sed.exec"),
            ("sed -f fix.sed f", D, "sed.unparsed"),
            ("sed -n p .env", H, "secret.read"),
            ("sed 'w ~/.bashrc' f", H, "write.protected"),
        ),
    ),
}
SPECS["gsed"] = SPECS["sed"]  # GNU sed on BSD and macOS
