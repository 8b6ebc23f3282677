"""Content readers: they print or summarise files (``cat``, ``head``, ``jq``, ``diff``…).

Read-only in the project; a secret file (``.env``, ``~/.ssh/id_rsa``) or a path outside the
project is high, in every spelling: operands and options that take a file (``diff
--from-file=.env``). Pagers and viewers that run a program given in an option (``man -P``,
``bat --pager``) are at least as dangerous as that program.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stockade.risk.flags import command, flag, optional, read, value, write
from stockade.risk.model import Args, Call, D, Flag, Found, H, R, Spec

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context


def pager_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``less +CMD``/``more +CMD``: an initial command with ``!`` or ``|`` runs a shell (less
    expands ``%`` and ``#`` in it to file names first, so it is not read)."""
    for word, _, _, _ in args.operands:
        if word[:1] == "+" and ("!" in word or "|" in word):
            found.add(D, "interpreter.inline-code", f"{args.name} {word} runs a shell command")


def jq_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """A jq filter can print the whole environment (``env``, ``$ENV``): secrets. A filter only
    known at run time, or kept in a file the classifier does not read (``-f``), may."""
    if args.has(_JQ_FILTER_FILE):
        found.add(H, "env.dump", "jq -f: the filter file may print the environment")
        return
    for word, static, _, kind in args.operands:
        if kind == "pattern" and (not static or _JQ_ENV.search(word) is not None):
            found.add(H, "env.dump", "the jq filter may print the environment ($ENV, env)")
            return


_JQ_FILTER_FILE = Flag(("-f", "--from-file"), takes="pattern-file")
#: ``$ENV`` and the ``env`` builtin (not a field ``.env`` or a variable ``$env``).
_JQ_ENV = re.compile(r"\$ENV\b|(?<![\w.$])env\b")


def man_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``man -Hbrowser`` runs the browser; ``man -l FILE`` formats local files."""
    html = args.first(_MAN_HTML)
    if html is not None and html.value:
        ctx.embedded(found, call, html.value, html.statics[0], f"{args.name} -H")
    local = args.has(_MAN_LOCAL)
    for word, static, _, _ in args.operands:
        if local or "/" in word or word[:1] == "~":  # man reads a page name with a / as a file
            ctx.read_path(found, word, static)


_MAN_HTML = optional("-H", "--html")
_MAN_LOCAL = flag("-l", "--local-file")


def _checksum() -> Spec:
    """The coreutils checksum tools (one program, md5sum.c, built per algorithm)."""
    return Spec(
        R,
        operands=("read",),
        flags=(flag("-c", "--check", "-b", "--binary", "-t", "--text", "-z", "--zero", "--tag"),),
        examples=(("sha256sum dist/pkg.tgz", R), ("sha256sum .env", H, "secret.read")),
    )


_SHA = _checksum()

SPECS: dict[str, Spec] = {
    "cat": Spec(
        R,
        operands=("read",),
        flags=(flag("-A", "-b", "-e", "-E", "-n", "-s", "-t", "-T", "-u", "-v"),),
        examples=(("cat README.md", R), ("cat .env", H, "secret.read"), ("cat /etc/passwd", H)),
    ),
    "tac": Spec(R, operands=("read",), flags=(value("-s", "--separator"), flag("-b", "-r"))),
    "nl": Spec(
        R,
        operands=("read",),
        flags=(
            value("-b", "--body-numbering", "-d", "--section-delimiter", "-f"),
            value("--footer-numbering", "-h", "--header-numbering", "-i", "--line-increment"),
            value("-l", "--join-blank-lines", "-n", "--number-format", "-s"),
            value("--number-separator", "-v", "--starting-line-number", "-w", "--number-width"),
        ),
    ),
    "head": Spec(
        R,
        operands=("read",),
        flags=(value("-c", "--bytes", "-n", "--lines"), flag("-q", "-v", "-z")),
        examples=(("head -n 3 .env", H, "secret.read"), ("head -5 src/main.py", R)),
    ),
    "tail": Spec(
        R,
        operands=("read",),
        flags=(
            value("-c", "--bytes", "-n", "--lines", "--pid", "-s", "--sleep-interval"),
            value("--max-unchanged-stats"),
            flag("-f", "-F", "-q", "-v", "-z", "--retry"),
            optional("--follow"),
        ),
        examples=(("tail -f log.txt", R), ("tail -n 5 ~/.aws/credentials", H)),
    ),
    "less": Spec(
        R,
        operands=("read",),
        flags=(
            value("-b", "--buffers", "-h", "--max-back-scroll", "-j", "--jump-target"),
            value("-p", "--pattern", "-P", "--prompt", "-t", "--tag", "-x", "--tabs"),
            value("-y", "--max-forw-scroll", "-z", "--window", '-"', "--quotes", "-#"),
            value("--shift", "-D", "--color", "--line-num-width", "--rscroll"),
            value("--status-col-width", "--wheel-lines", "--lesskey-content"),
            read("-k", "--lesskey-file", "--lesskey-src", "-T", "--tag-file"),
            write("-o", "--log-file", "-O", "--LOG-FILE"),
        ),
        check=pager_check,
        examples=(
            ("less +G f", R),
            ("less '+!rm -rf /' f", D, "interpreter.inline-code"),
            ("less -o /etc/x f", H, "write.outside-project"),
            ("less -k .env f", H, "secret.read"),
        ),
    ),
    "more": Spec(
        R,
        operands=("read",),
        flags=(value("-n", "--lines"), flag("-d", "-f", "-l", "-c", "-p", "-s", "-u", "-e")),
        check=pager_check,
        examples=(("more '+|sh' f", D, "interpreter.inline-code"), ("more .env", H)),
    ),
    "bat": Spec(
        R,
        operands=("read",),
        flags=(
            command("--pager"),
            value("-l", "--language", "-H", "--highlight-line", "-r", "--line-range"),
            value("--file-name", "--diff-context", "--tabs", "--wrap", "--terminal-width"),
            value("--color", "--italic-text", "--decorations", "--paging", "-m"),
            value("--map-syntax", "--ignored-suffix", "--theme", "--style"),
        ),
        examples=(
            ("bat src/main.rs", R),
            ("bat --pager 'less -R' x", R),
            ("bat --pager 'rm -rf ~' x", D, "rm.recursive-force-home"),
        ),
    ),
    "strings": Spec(
        R,
        operands=("read",),
        flags=(
            value("-n", "--bytes", "-t", "--radix", "-T", "--target", "-e", "--encoding"),
            value("-s", "--output-separator", "-U", "--unicode"),
            flag("-a", "-d", "-f", "-w", "-o"),
        ),
    ),
    "xxd": Spec(
        R,
        operands=("read", "write"),
        flags=(value("-c", "-g", "-l", "-o", "-s", "-n", "-R"),),
        examples=(("xxd bin/x", R), ("xxd a.bin /etc/x", H, "write.outside-project")),
    ),
    "od": Spec(
        R,
        operands=("read",),
        flags=(
            value("-A", "--address-radix", "-j", "--skip-bytes", "-N", "--read-bytes"),
            value("-t", "--format", "--endian", "-S"),
            optional("--strings", "-w", "--width"),
        ),
    ),
    "hexdump": Spec(
        R,
        operands=("read",),
        flags=(
            value("-e", "--format", "-n", "--length", "-s", "--skip"),
            read("-f", "--format-file"),
            optional("-L", "--color"),
        ),
    ),
    "base64": Spec(R, operands=("read",), flags=(value("-w", "--wrap"), flag("-d", "-i"))),
    "base32": Spec(R, operands=("read",), flags=(value("-w", "--wrap"), flag("-d", "-i"))),
    "basenc": Spec(R, operands=("read",), flags=(value("-w", "--wrap"), flag("-d", "-i"))),
    "md5sum": _SHA,
    "sha1sum": _SHA,
    "sha224sum": _SHA,
    "sha256sum": _SHA,
    "sha384sum": _SHA,
    "sha512sum": _SHA,
    "b2sum": Spec(R, operands=("read",), flags=(value("-l", "--length"), flag("-c", "--check"))),
    "cksum": Spec(
        R, operands=("read",), flags=(value("-a", "--algorithm", "-l", "--length"), flag("-c"))
    ),
    "wc": Spec(
        R,
        operands=("read",),
        flags=(read("--files0-from"), flag("-c", "-m", "-l", "-L", "-w")),
        examples=(("wc -l src/*.py", R), ("wc --files0-from=.env", H, "secret.read")),
    ),
    "cut": Spec(
        R,
        operands=("read",),
        flags=(
            value("-b", "--bytes", "-c", "--characters", "-d", "--delimiter", "-f"),
            value("--fields", "--output-delimiter"),
        ),
        examples=(("cut -d: -f1 names.txt", R), ("cut -d / -f 2 x", R), ("cut -f2 .env", H)),
    ),
    "paste": Spec(R, operands=("read",), flags=(value("-d", "--delimiters"), flag("-s", "-z"))),
    "join": Spec(R, operands=("read",), flags=(value("-a", "-e", "-j", "-o", "-t", "-v"),)),
    "comm": Spec(
        R, operands=("read",), flags=(value("--output-delimiter"), flag("-1", "-2", "-3"))
    ),
    "fold": Spec(R, operands=("read",), flags=(value("-w", "--width"), flag("-b", "-s"))),
    "fmt": Spec(
        R, operands=("read",), flags=(value("-p", "--prefix", "-w", "--width", "-g", "--goal"),)
    ),
    "column": Spec(
        R,
        operands=("read",),
        flags=(
            value("-n", "--table-name", "-O", "--table-order", "-N", "--table-columns"),
            value("-l", "--table-columns-limit", "-E", "--table-noextreme", "-H"),
            value("--table-hide", "-R", "--table-right", "-T", "--table-truncate", "-W"),
            value("--table-wrap", "-r", "--tree", "-i", "--tree-id", "-p", "--tree-parent"),
            value("-c", "--output-width", "-o", "--output-separator", "-s", "--separator"),
        ),
    ),
    "expand": Spec(R, operands=("read",), flags=(value("-t", "--tabs"), flag("-i"))),
    "unexpand": Spec(R, operands=("read",), flags=(value("-t", "--tabs"), flag("-a"))),
    "rev": Spec(R, operands=("read",), flags=()),
    "iconv": Spec(
        R,
        operands=("read",),
        flags=(value("-f", "--from-code", "-t", "--to-code"), write("-o", "--output")),
        examples=(("iconv -f latin1 -t utf8 a.txt", R), ("iconv -o ~/x a", H, "write.home")),
    ),
    "diff": Spec(
        R,
        operands=("read",),
        flags=(
            value("-C", "-U", "-W", "--width", "-F", "--show-function-line", "--label"),
            value("--tabsize", "-x", "--exclude", "-S", "--starting-file", "-I"),
            value("--ignore-matching-lines", "-D", "--ifdef", "--line-format"),
            value("--old-line-format", "--new-line-format", "--unchanged-line-format"),
            value("--old-group-format", "--new-group-format", "--unchanged-group-format"),
            value("--changed-group-format", "--horizon-lines", "--palette"),
            optional("--context", "--unified", "--color"),
            read("--from-file", "--to-file", "-X", "--exclude-from"),
            flag("-c", "-u", "-r", "-N", "-q", "-s", "-y", "-i", "-w", "-b", "-B", "-a", "-e"),
        ),
        examples=(("diff a.txt b.txt", R), ("diff --from-file=.env a", H, "secret.read")),
    ),
    "cmp": Spec(
        R,
        operands=("read",),
        flags=(value("-i", "--ignore-initial", "-n", "--bytes"), flag("-b", "-l", "-s")),
    ),
    "zcat": Spec(R, operands=("read",), flags=(value("-S", "--suffix"), flag("-f", "-q", "-v"))),
    "jq": Spec(
        R,
        operands=("pattern", "read"),
        flags=(
            _JQ_FILTER_FILE,
            value("-L", "--indent"),
            Flag(("--arg", "--argjson"), takes=("value", "value")),
            Flag(("--slurpfile", "--rawfile"), takes=("value", "read")),
            flag("-n", "-r", "-j", "-a", "-s", "-e", "-C", "-M", "-S", "-c", "--tab", "--seq"),
        ),
        examples=(
            ("jq . package.json", R),
            ("jq . credentials.json", H, "secret.read"),
            ("jq --rawfile k .env -n '$k'", H, "secret.read"),
            ("jq -f prog.jq data.json", H, "env.dump"),
            ("jq -n env", H, "env.dump"),
            ("jq -n '$ENV.API_KEY'", H, "env.dump"),
            ("jq '.env.production' config.json", R),
        ),
        check=jq_check,
    ),
    "man": Spec(
        R,
        flags=(
            command("-P", "--pager"),
            _MAN_HTML,
            _MAN_LOCAL,
            read("-C", "--config-file"),
            value("-M", "--manpath", "-S", "-s", "--sections", "-e", "--extension", "-L"),
            value("--locale", "-m", "--systems", "-p", "--preprocessor", "-r", "--prompt"),
            value("-R", "--recode", "-E", "--encoding"),
            optional("-T", "--troff-device", "-X", "--gxditview", "--warnings"),
        ),
        check=man_check,
        examples=(
            ("man ls", R),
            ("man -Pcat ls", R),
            ("man -P 'sh -c \"rm -rf ~\"' ls", D, "rm.recursive-force-home"),
        ),
    ),
    "shuf": Spec(
        R,
        operands=("read",),
        flags=(
            value("-i", "--input-range", "-n", "--head-count"),
            write("-o", "--output"),
            read("--random-source"),
        ),
    ),
}
SPECS["batcat"] = SPECS["bat"]  # Debian's name for bat
SPECS["hd"] = SPECS["hexdump"]  # hexdump -C
SPECS["gzcat"] = SPECS["zcat"]

#: Readers whose options are not reviewed yet: an option they do not list is a plain flag,
#: and ``--opt=VALUE`` values are checked like their operands (they are file readers, so a
#: value glued to a short option, ``-fFILE``, is the one spelling left unchecked).
NOT_REVIEWED: dict[str, str] = {
    "most": "a pager like less; rarely used by agents",
    "pr": "paginates files; its options are layout values",
    "diff3": "compares three files",
    "sdiff": "side-by-side diff; -o FILE writes (not modelled)",
    "colordiff": "a diff wrapper that passes options to diff",
    "bzcat": "decompresses to stdout",
    "xzcat": "decompresses to stdout",
    "zstdcat": "decompresses to stdout",
    "lz4cat": "decompresses to stdout",
    "zless": "less on a compressed file (a script around less)",
    "zmore": "more on a compressed file",
    "gojq": "a jq clone",
    "xmllint": "XML checker; --output FILE writes (not modelled)",
    "readelf": "binary inspection",
    "objdump": "binary inspection",
    "nm": "binary inspection",
    "size": "binary inspection",
    "tsort": "topological sort of one file",
    "look": "prefix search in a sorted file",
    "csvlook": "csvkit table printer",
    "info": "GNU info reader (-o FILE writes; not modelled)",
    "tldr": "prints community cheat sheets",
    "sum": "legacy checksum",
    "md5": "BSD checksum",
    "shasum": "the Perl checksum script",
}
SPECS.update({name: Spec(R, operands=("read",), flags=None) for name in NOT_REVIEWED})
