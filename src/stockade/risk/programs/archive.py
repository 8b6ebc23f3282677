"""Archives and compressors: listing is read-only, creating low, extracting medium (and where it
extracts to counts: ``-C /opt`` is high); the commands tar can run (``--to-command``, ``-I``,
checkpoint actions, rsh) are classified as commands. Each compressor has its own options: ``-l``
lists for gzip and xz but picks the legacy format for lz4.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import command, flag, optional, read, value, write
from stockade.risk.model import Args, Call, D, Example, Flag, Found, H, L, M, R, Spec

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

# --- tar -----------------------------------------------------------------------------------------

_TAR_MODES = {"c": "create", "t": "list", "x": "extract", "r": "append", "u": "update"}
_TAR_MODES.update({"A": "catenate", "d": "diff"})
#: The tier of each mode (any other, or none, extracts: medium).
_TAR_TIERS = {"list": R, "diff": R, "create": L, "append": L, "update": L}
_TAR_MODE_FLAGS = (
    flag("-c", "--create"),
    flag("-t", "--list"),
    flag("-x", "--extract", "--get"),
    flag("-r", "--append"),
    flag("-u", "--update"),
    flag("-A", "--catenate", "--concatenate"),
    flag("-d", "--diff", "--compare"),
    flag("--delete"),
)
_TAR_RUNS = command(
    "--to-command",
    "--use-compress-program",
    "-I",
    "--rsh-command",
    "--rmt-command",
    "--info-script",
    "-F",
    "--new-volume-script",
)
_TAR_CHECKPOINT = value("--checkpoint-action")
_TAR_DIRECTORY = value("-C", "--directory")
_TAR_ARCHIVE = value("-f", "--file")
_TAR_LISTS = read("-T", "--files-from", "-X", "--exclude-from")
_TAR_ABSOLUTE = flag("-P", "--absolute-names")
_TAR_REMOVE = flag("--remove-files")
_TAR_VALUES = value(
    *("-g", "--listed-incremental", "-K", "--starting-file", "-L", "--tape-length", "-N"),
    *("--newer", "--after-date", "--newer-mtime", "-V", "--label", "-b", "--blocking-factor"),
    *("--exclude", "--owner", "--group", "--mode", "--mtime", "--transform", "--xform"),
    *("--index-file", "--format", "-H", "--checkpoint"),
)
_TAR_PLAIN = flag(*(f"-{letter}" for letter in "vzjJakpOmSwWhiBGoMRsU"), "--verbose", "--gzip")


def tar_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """tar's words are read here: the first may be an old-style bundle (``tar xzf a.tgz``),
    and a bundle's value letters take the following words in order (``-fC a.tar dir``)."""
    spec = args.spec
    short = spec.index.short if spec is not None else {}
    long = spec.index.long if spec is not None else {}
    words = call.words
    count = len(words)
    mode = ""
    directory: tuple[str, bool] | None = None
    absolute = remove = False
    archives: list[tuple[str, bool]] = []
    operands: list[tuple[str, bool]] = []
    statics = call.static
    index = 1
    while index < count:
        word = words[index]
        static = statics[index]
        if word[:2] == "--":
            name, eq, text = word.partition("=")
            option = long.get(name)
            if option is not None and option.values and not eq and index + 1 < count:
                index += 1
                text, static = words[index], statics[index]
            mode = _long_mode(option, name) or mode
            absolute = absolute or option is _TAR_ABSOLUTE
            remove = remove or option is _TAR_REMOVE
            _tar_value(ctx, found, call, option, name, text, static)
            if option is _TAR_DIRECTORY:
                directory = (text, static)
            elif option is _TAR_ARCHIVE and text:
                archives.append((text, static))
        elif (word[:1] == "-" and len(word) > 1) or (
            index == 1 and all(char in short for char in word)  # old style: `tar xzf a.tgz`
        ):
            takers: list[Flag] = []
            for char in word[1:] if word[0] == "-" else word:
                option = short.get(char)
                if option is None:
                    continue
                if option.values:
                    takers.append(option)
                elif option is _TAR_ABSOLUTE:
                    absolute = True
                elif not mode and char in _TAR_MODES:
                    mode = _TAR_MODES[char]
            for option in takers:
                index += 1
                if index >= count:
                    break
                text, static = words[index], statics[index]
                if option is _TAR_DIRECTORY:
                    directory = (text, static)
                elif option is _TAR_ARCHIVE:
                    archives.append((text, static))
                elif option is not _TAR_VALUES:
                    _tar_value(ctx, found, call, option, option.names[0], text, static)
        else:
            operands.append((word, static))
        index += 1
    tier = _TAR_TIERS.get(mode, M)
    rule = "archive.extract" if tier == M else "program.table"
    found.add(tier, rule, f"tar {mode or '(no mode)'} is {tier.label}")
    if remove:
        found.add(H, "rm.delete", "tar --remove-files deletes the archived files")
    if tier == M:
        if absolute:
            found.add(H, "write.outside-project", "tar -P extracts to absolute paths")
        if directory is not None:
            ctx.write_target(found, directory[0], directory[1], "tar")
        elif ctx.cwd is not None:
            ctx.write_target(found, ".", True, "tar")
    for word, static in archives:
        if tier == L:
            ctx.write_target(found, word, static, "tar")
        else:
            ctx.read_path(found, word, static)
    for word, static in operands:
        ctx.read_path(found, word, static)


def _long_mode(option: Flag | None, name: str) -> str:
    if option in _TAR_MODE_FLAGS and option is not None:
        return "delete" if name == "--delete" else _TAR_MODES[option.names[0][1]]
    return ""


def _tar_value(
    ctx: Context, found: Found, call: Call, option: Flag | None, name: str, text: str, static: bool
) -> None:
    """What a value tar was given runs or reads."""
    if option is _TAR_RUNS:
        ctx.embedded(found, call, text, static, f"tar {name}")
    elif option is _TAR_CHECKPOINT and text.startswith("exec="):
        ctx.embedded(found, call, text[5:], static, "tar checkpoint exec")
    elif option is _TAR_LISTS:
        ctx.read_path(found, text, static)


# --- compressors ---------------------------------------------------------------------------------


def _compressor(*flags: Flag, examples: tuple[Example, ...] = ()) -> Spec:
    return Spec(M, operands=("write",), flags=flags, examples=examples)


SPECS: dict[str, Spec] = {
    "tar": Spec(
        None,
        parse=False,
        flags=(
            *_TAR_MODE_FLAGS,
            _TAR_RUNS,
            _TAR_CHECKPOINT,
            _TAR_DIRECTORY,
            _TAR_ARCHIVE,
            _TAR_LISTS,
            _TAR_ABSOLUTE,
            _TAR_REMOVE,
            _TAR_VALUES,
            _TAR_PLAIN,
        ),
        check=tar_check,
        examples=(
            ("tar -tzf a.tgz", R),
            ("tar -czf out.tgz src", L),
            ("tar xzf a.tgz", M, "archive.extract"),
            ("tar -xf a.tar -C /opt", H, "write.outside-project"),
            ("tar -xf a.tar --to-command='sh -c x'", D),
            ("tar -I 'sh -c x' -xf a", D),
            ("tar czf a.tgz .env", H, "secret.read"),
            ("tar -cf /dev/sda .", D, "write.device"),
        ),
    ),
    "zip": Spec(
        L,
        operands=("write", "read"),
        flags=(
            command("-TT", "--unzip-command"),
            Flag(("-m", "--move"), H, "rm.delete", why="zip -m deletes the files it archived"),
            write("-b", "--temp-path", "-O", "--output-file", "-lf", "--logfile-path"),
            read("-i@", "-x@"),
            value("-n", "--suffixes", "-t", "--from-date", "-tt", "--before-date", "-P"),
            value("--password", "-s", "--split-size", "-Z", "--compression-method"),
            flag(*(f"-{letter}" for letter in "rqjJTudfFgvDAocyzXe0123456789"), "-la"),
        ),
        examples=(
            ("zip -r out.zip src", L),
            ("zip x.zip .env", H, "secret.read"),
            ("zip -T -TT 'rm -rf ~' a.zip f", D, "rm.recursive-force-home"),
            ("zip -T -TT 'unzip -tq' a.zip f", L),
            ("zip -m a.zip f", H, "rm.delete"),
        ),
    ),
    "unzip": Spec(
        M,
        operands=("read", "file"),
        flags=(
            flag("-l", "-t", "-Z", "-v", "-p", "-z", tier=R, why="lists or tests the archive"),
            write("-d"),
            value("-P", "-x"),
            flag(*(f"-{letter}" for letter in "ofnqjCLaXUVKbBMcsWD")),
        ),
        examples=(
            ("unzip dist.zip", M),
            ("unzip -l dist.zip", R),
            ("unzip -o a.zip -d /opt", H, "write.outside-project"),
        ),
    ),
    "gzip": _compressor(
        flag("-c", "--stdout", "-l", "--list", "-t", "--test", tier=R),
        flag("-k", "--keep", tier=L),
        value("-S", "--suffix"),
        flag(*(f"-{letter}" for letter in "dfnNqrvL"), "--rsyncable", "--synchronous", "--fast"),
        examples=(("gzip big.log", M), ("gzip -l a.gz", R), ("gzip -k a", L)),
    ),
    "bzip2": _compressor(
        flag("-c", "--stdout", "-t", "--test", tier=R),
        flag("-k", "--keep", tier=L),
        flag(*(f"-{letter}" for letter in "dzfqvsL"), "--fast", "--best"),
        examples=(("bzip2 -t a.bz2", R), ("bzip2 a", M)),
    ),
    "xz": _compressor(
        flag("-c", "--stdout", "-l", "--list", "-t", "--test", tier=R),
        flag("-k", "--keep", tier=L),
        value("-T", "--threads", "-F", "--format", "-C", "--check", "-S", "--suffix"),
        value("-M", "--memlimit", "--memlimit-compress", "--memlimit-decompress"),
        read("--files", "--files0"),
        flag(*(f"-{letter}" for letter in "zdfeqvH")),
        examples=(("xz -l a.xz", R), ("xz a", M)),
    ),
    # zstd and lz4 keep their input unless told otherwise (``--rm``): a new file, low
    "zstd": Spec(
        L,
        operands=("write",),
        flags=(
            flag("-c", "--stdout", "-l", "-t", "--test", tier=R),
            flag("--rm", tier=M, why="zstd --rm deletes its input"),
            write("-o", "--output-dir-flat", "--output-dir-mirror", "--trace"),
            read("-D", "--patch-from", "--filelist"),
            optional("-T", "-B", "-M", "-b", "-e", "-i", "--fast", "--long", "--format"),
            flag("-k", "--keep", "-d", "--decompress", "-f", "--force", "-r", "-q", "-v"),
        ),
        examples=(
            ("zstd -l a.zst", R),
            ("zstd big.log", L),
            ("zstd --rm big.log", M),
            ("zstd -o /etc/x a", H, "write.outside-project"),
        ),
    ),
    "lz4": Spec(
        L,
        operands=("write",),
        flags=(
            flag("-c", "--stdout", "-t", "--test", "--list", tier=R),
            flag("--rm", tier=M, why="lz4 --rm deletes its input"),
            read("-D"),
            optional("-B", "-b", "-e", "-i"),
            flag("-l", why="the legacy (kernel) format, not a listing"),
            flag("-d", "-z", "-f", "-k", "-m", "-r", "-v", "-q", "--content-size"),
        ),
        examples=(("lz4 -l a out.lz4", L), ("lz4 --list a.lz4", R), ("lz4 --rm a", M)),
    ),
    "pigz": _compressor(
        flag("-c", "--stdout", "-l", "--list", "-t", "--test", tier=R),
        flag("-k", "--keep", tier=L),
        value("-p", "--processes", "-b", "--blocksize", "-S", "--suffix", "-C", "--comment"),
        flag(*(f"-{letter}" for letter in "dfiKmMnNqrRTvYzF"), "--fast", "--best"),
        examples=(("pigz -l a.gz", R), ("pigz a", M)),
    ),
    "7z": Spec(
        R,
        subcommands={
            "": R,
            "l": R,
            "t": R,
            "i": R,
            "h": R,
            "b": R,
            "a": L,
            "u": M,
            "x": M,
            "e": M,
            "d": M,
            "rn": M,
        },
        examples=(("7z x a.7z", M), ("7z l a.7z", R)),
    ),
}
SPECS["gtar"] = SPECS["tar"]  # GNU tar on BSD and macOS
SPECS["bsdtar"] = SPECS["tar"]  # libarchive's tar takes GNU tar's options that matter here
SPECS["gunzip"] = SPECS["gzip"]  # gzip -d
SPECS["bunzip2"] = SPECS["bzip2"]  # bzip2 -d
SPECS["unxz"] = SPECS["xz"]  # xz -d
SPECS["unzstd"] = SPECS["zstd"]  # zstd -d
SPECS["7za"] = SPECS["7z"]  # the 7-Zip command line, standalone
SPECS["7zz"] = SPECS["7z"]
