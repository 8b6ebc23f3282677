"""Where a path argument points, and whether it names a secret or a protected file.

The names come from :mod:`stockade.vocabulary` (the sandbox masks and protects the same
things): secret file names and directories anywhere, the credential stores below a home
directory (``HOME_SECRETS``: reading any path at or below one is a secret read), and the
protected names (``PROTECTED_NAMES`` plus ``CLASSIFIER_ONLY_PROTECTED``: writing one can loosen
the jail or run code later). The rest is the classifier's own: devices, ``/tmp``, system
directories, and the spellings of ``/`` and ``~`` that deletions must never reach.
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

import re

from stockade.vocabulary import (
    CLASSIFIER_ONLY_PROTECTED,
    HOME_SECRETS,
    PROTECTED_NAMES,
    SECRET_DIRECTORIES,
    SECRET_FILE_EXCEPTIONS,
    SECRET_FILES,
    SECRET_PATHS,
)

# --- secrets -----------------------------------------------------------------------------------

_SECRET_GLOBS = tuple(glob for entry in SECRET_FILES for glob in entry.globs)


def _glob_regex(globs: tuple[str, ...]) -> str:
    """One regex for file-name globs, grouped so that it matches without backtracking:
    exact names, ``PREFIX*``, ``*.EXT`` and ``PREFIX*SUFFIX`` (``*`` never crosses a ``/``)."""
    exact = sorted(re.escape(g) for g in globs if "*" not in g)
    prefixes = sorted(re.escape(g[:-1]) for g in globs if g.count("*") == 1 and g.endswith("*"))
    extensions = sorted(re.escape(g[2:]) for g in globs if g.startswith("*.") and g.count("*") == 1)
    middles = [
        re.escape(g.split("*")[0]) + r"[^/]*" + re.escape(g.split("*")[1])
        for g in globs
        if g.count("*") == 1 and not g.startswith("*") and not g.endswith("*")
    ]
    if any(g.count("*") > 1 or "?" in g or "[" in g for g in globs):
        raise ValueError("secret globs may hold one `*` (and no `?` or `[`)")
    parts = [f"(?:{'|'.join(exact)})", f"(?:{'|'.join(prefixes)})[^/]*"]
    parts += [rf"[^/]*\.(?:{'|'.join(extensions)})", *middles]
    return "|".join(parts)


#: A file name that holds credentials wherever it is (from ``SECRET_FILES``; ``.ssh`` and the
#: other ``SECRET_DIRECTORIES`` count as names too: ``tar czf x.tgz .ssh``).
SECRET_FILE = re.compile(
    _glob_regex(_SECRET_GLOBS) + "|" + "|".join(re.escape(name) for name in SECRET_DIRECTORIES)
)
#: A cheap necessary condition for SECRET_FILE, checked first: a secret file name starts with
#: ``.``, with one of these literal prefixes, or has one of these extensions (derived from the
#: globs, cut to six characters so that there are few; a test holds the condition to the regex).
_LITERAL_STARTS = {
    glob.split("*")[0][:6] for glob in _SECRET_GLOBS if not glob.startswith((".", "*"))
}
SECRET_PREFIXES: tuple[str, ...] = tuple(
    sorted(
        prefix
        for prefix in _LITERAL_STARTS
        if not any(prefix != other and prefix.startswith(other) for other in _LITERAL_STARTS)
    )
)
#: The prefixes by their first character (the hot path looks up one short tuple).
PREFIXES_BY_START: dict[str, tuple[str, ...]] = {
    start: tuple(prefix for prefix in SECRET_PREFIXES if prefix[0] == start)
    for start in sorted({prefix[0] for prefix in SECRET_PREFIXES})
}
SECRET_EXTENSIONS: frozenset[str] = frozenset(
    glob.rpartition(".")[2] for glob in _SECRET_GLOBS if glob.startswith("*.")
)
_HOME_PREFIX = r"(?:~[\w.-]*|\$HOME|\$\{HOME\}|/root|/home/[^/]+|/Users/[^/]+)/"
_SECRET_PATH_ALTERNATIVES = "|".join(re.escape(path) for path in SECRET_PATHS)
_HOME_SECRET_ALTERNATIVES = "|".join(
    re.escape(secret.path) for secret in sorted(HOME_SECRETS, key=lambda s: -len(s.path))
)
#: Paths below a secret directory anywhere, the SECRET_PATHS anywhere, and every HOME_SECRETS
#: entry (and anything below it) in a home directory.
SECRET_DIR = re.compile(
    r"(?:^|[/=@:])(?:" + "|".join(re.escape(name) for name in SECRET_DIRECTORIES) + r")/"
    r"|(?:^|/)(?:" + _SECRET_PATH_ALTERNATIVES + r")(?:/|$)"
    r"|(?:^|[=@:])" + _HOME_PREFIX + r"(?:" + _HOME_SECRET_ALTERNATIVES + r")(?:/|$)"
)
#: SECRET_DIR's names that do not start with a dot (``Library/Keychains``): the cheap test in
#: ``is_secret`` looks for a dot component first, and must not miss these.
_UNDOTTED_SECRET_PATHS: tuple[str, ...] = tuple(
    name
    for name in (*SECRET_DIRECTORIES, *SECRET_PATHS, *(secret.path for secret in HOME_SECRETS))
    if not name.startswith(".")
)
#: The HOME_SECRETS entries, relative to the home directory (``cd ~ && cat .netrc``).
HOME_SECRET_PATH = re.compile(r"^(?:\./)*(?:" + _HOME_SECRET_ALTERNATIVES + r")(?:/|$)")
#: Dot-globs that can match secret files (``cat .*``, ``cat .e*``).
DOT_GLOB = re.compile(r"(?:^|/)\.[\w-]*[*?\[]")


def is_secret_name(name: str) -> bool:
    """Does a file name (the last path component) hold credentials? Glob characters in it are
    read as matching nothing, so ``.env*`` and ``*.key`` count."""
    if name in SECRET_FILE_EXCEPTIONS:
        return False
    if SECRET_FILE.fullmatch(name) is not None:
        return True
    if "*" in name or "?" in name:
        bare = name.replace("*", "").replace("?", "")
        return (
            bool(bare)
            and bare not in SECRET_FILE_EXCEPTIONS
            and SECRET_FILE.fullmatch(bare) is not None
        )
    return False


def _may_be_secret_name(name: str) -> bool:
    """A necessary condition for :func:`is_secret_name` (a test holds it to the regex): a
    secret name starts with ``.``, with one of the literal prefixes, or has a secret
    extension; a glob must meet it with its ``*`` and ``?`` read as matching nothing."""
    if (
        name[:1] == "."
        or (name[:1] in PREFIXES_BY_START and name.startswith(PREFIXES_BY_START[name[0]]))
        or name.rpartition(".")[2] in SECRET_EXTENSIONS
    ):
        return True
    if "*" in name or "?" in name:
        bare = name.replace("*", "").replace("?", "")
        return bare != name and _may_be_secret_name(bare)
    return False


def is_secret(word: str, static: bool) -> bool:
    """Does an argument name a secret? Its last path component (after ``/``, ``=``, ``@`` or
    ``:``, so ``--env-file=.env``, ``@.env`` and ``host:.env`` count), a secret directory or
    home credential store in it, or (when it expands) a dot-glob."""
    last = word
    for separator in "/=@:":
        if separator in last:
            last = last.rpartition(separator)[2]
    if last and _may_be_secret_name(last) and is_secret_name(last.rstrip("/")):
        return True
    if (
        "/" in word
        and (
            "/." in word
            or word[0] == "."
            or "=." in word
            or "@." in word
            or ":." in word
            or any(path in word for path in _UNDOTTED_SECRET_PATHS)
        )
        and SECRET_DIR.search(word) is not None
    ):
        return True
    return not static and DOT_GLOB.search(word) is not None


def may_be_secret(word: str) -> bool:
    """False only for a plain file name that cannot be a secret (the commonest argument):
    the hot path's shortcut before :func:`is_secret`."""
    return (
        word[0] in MAY_START
        or "/" in word
        or "*" in word
        or (word[0] in PREFIXES_BY_START and word.startswith(PREFIXES_BY_START[word[0]]))
        or word.rpartition(".")[2] in SECRET_EXTENSIONS
    )


MAY_START = frozenset("~.$")


# --- protected files ------------------------------------------------------------------------


def _protected_for_classifier() -> tuple[str, ...]:
    """The names whose write the classifier rates ``write.protected``, wherever they are in a
    path: the sandbox's PROTECTED_NAMES that are dot names (a name the sandbox protects only
    below CARGO_HOME, or a plain ``bin`` below home, is left to the location checks: a write
    in the home directory is high anyway) and CLASSIFIER_ONLY_PROTECTED."""
    names = [
        entry.name
        for entry in PROTECTED_NAMES
        if entry.name.startswith(".") and getattr(entry, "where", "root") != "cargo-home"
    ]
    return (*names, *(entry.name for entry in CLASSIFIER_ONLY_PROTECTED))


PROTECTED_FOR_CLASSIFIER: tuple[str, ...] = _protected_for_classifier()
#: A path that would let the agent loosen its own jail or plant code the host runs later
#: (a ``*`` in a name, ``.git/worktrees/*/config.worktree``, stands for one path component).
PROTECTED_PATH = re.compile(
    r"(?:^|/)(?:"
    + "|".join(
        re.escape(name).replace(r"\*", "[^/]*")
        for name in sorted(PROTECTED_FOR_CLASSIFIER, key=len, reverse=True)
    )
    + r")(?:/|$)"
)
if not all(name.startswith(".") for name in PROTECTED_FOR_CLASSIFIER):  # is_protected's shortcut
    raise ValueError("every name the classifier protects must start with a dot")


def is_protected(word: str) -> bool:
    """Would writing ``word`` loosen the jail or plant code the host runs later?"""
    return "." in word and PROTECTED_PATH.search(word) is not None


# --- other places --------------------------------------------------------------------------------

#: Devices that are safe to read and write.
HARMLESS_DEVICES = frozenset(
    """/dev/null /dev/zero /dev/random /dev/urandom /dev/stdin /dev/stdout /dev/stderr
        /dev/tty""".split()
)
#: Absolute paths a content reader may read without raising the tier.
HARMLESS_READ_PATHS = frozenset(
    """/etc/os-release /etc/lsb-release /etc/debian_version /etc/hostname /etc/timezone
        /proc/cpuinfo /proc/meminfo /proc/version /proc/loadavg /proc/uptime""".split()
)
TMP_PREFIXES = ("/tmp/", "/var/tmp/", "/private/tmp/")
#: What an interpreter reading one of these reads is its stdin.
STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
#: Top-level system directories: recursive deletion or permission changes are catastrophic.
SYSTEM_DIRS = frozenset(
    """bin boot dev etc home lib lib32 lib64 libx32 media mnt opt proc root run sbin snap
        srv sys usr var Applications Library System Users Volumes private nix""".split()
)
#: Directories whose programs are the programs of the same name (``/usr/bin/env`` is ``env``).
SYSTEM_BIN_DIRS = frozenset(
    """/bin /usr/bin /usr/local/bin /sbin /usr/sbin /usr/local/sbin /opt/homebrew/bin
        /opt/local/bin /run/current-system/sw/bin /snap/bin /usr/libexec""".split()
)
#: Tool directories (project and user installs) whose programs are trusted by name.
TOOL_BIN_DIR = re.compile(
    r"^(?:\./)?(?:node_modules/\.bin|\.venv/bin|venv/bin|\.tox/[\w.-]+/bin|"
    r"(?:~|\$HOME|\$\{HOME\})/(?:\.local/bin|\.cargo/bin|go/bin|\.bun/bin|\.deno/bin|"
    r"\.npm-global/bin|\.pyenv/shims|\.rbenv/shims|\.volta/bin))$"
)
#: Venv activation scripts: ``source`` of these is project set-up, not arbitrary code.
VENV_ACTIVATE = re.compile(r"^(?:\./)?(?:[\w.-]+/)*bin/activate$")
#: What find and fd put where ``{}`` was: a path below the start directory (static for path
#: checks), but as a program or script it is whatever was found.
FOUND = "…"

HOME_VAR = re.compile(r"^(?:\$HOME|\$\{HOME\})(?=/|$)")
PWD_VAR = re.compile(r"^(?:\$PWD|\$\{PWD\}|\$\(pwd\)|`pwd`)(?=/|$)")
_ROOT_TARGET = re.compile(r"^/+(?:\.\.?/+)*(?:\.\.?|\*|\.\*|\.\[!.\]\*)?/*$")
_HOME_TARGET = re.compile(r"^~[\w.-]*(?:/+(?:\.\.?/+)*(?:\.|\*|\.\*)?)?/*$")
_OTHER_HOME_TARGET = re.compile(r"^/+(?:home|Users)/+[^/*]+/*(?:\*|\.\*)?/*$|^/+root(?:/+\*?)?/*$")
_SYSTEM_TARGET = re.compile(r"^/+(?:" + "|".join(sorted(SYSTEM_DIRS)) + r")(?:/+(?:\*|\.\*)?)?/*$")
_UNSET_VAR_TARGET = re.compile(r"^\$\{?(?!HOME\b)[A-Za-z_]\w*\}?/+(?:\*|\.\*)?/*$")

# path classes; ELSEWHERE: relative to a directory `cd` went to that is not known
P_PLAIN, P_TMP, P_HARMLESS, P_DEVICE, P_ABS, P_HOME, P_DYNAMIC, P_ELSEWHERE = range(8)
#: Classes a content read raises to high.
OUTSIDE = frozenset({P_ABS, P_HOME, P_DEVICE, P_ELSEWHERE})

DANGER_ORDER = {"root": 0, "home": 1, "system": 2}
DANGER_NAMES = {"root": "/", "home": "~ (a home directory)", "system": "a system directory"}


def absolute_class(path: str) -> int:
    if path.startswith("/dev/"):
        if path in HARMLESS_DEVICES or path.startswith(("/dev/fd/", "/dev/shm/")):
            return P_HARMLESS
        if path.startswith(("/dev/tcp/", "/dev/udp/")):
            return P_ABS
        return P_DEVICE
    if path.startswith(TMP_PREFIXES) or path in ("/tmp", "/var/tmp"):
        return P_TMP
    return P_ABS


def path_class(word: str, static: bool, cwd: str | None) -> int:
    """Where a path argument points: project, /tmp, a device, absolute, home, unknown.
    ``cwd`` is where ``cd`` went (None: the project; ``?``: somewhere unknown)."""
    if not word:
        return P_PLAIN
    first = word[0]
    if first == "/":
        return absolute_class(word)
    if first == "~" or HOME_VAR.match(word) is not None:
        return P_HOME
    if not static and first in "$`":
        pwd = PWD_VAR.match(word)
        if pwd is None:
            return P_DYNAMIC
        word = "." + word[pwd.end() :]
    if cwd is None:
        return P_PLAIN
    if cwd == "?":
        return P_ELSEWHERE
    if cwd.startswith("~"):
        return P_HOME
    return absolute_class(cwd.rstrip("/") + "/" + word)


def danger(word: str, static: bool, cwd: str | None) -> str | None:
    """Is a deletion target ``/``, ``~`` or a system directory in any spelling?
    Returns ``root``, ``home``, ``system`` or None."""
    target = word
    if not static:
        if _UNSET_VAR_TARGET.match(target) is not None:
            return "root"  # `$DIR/*` is `/*` when DIR is unset or empty
        if HOME_VAR.match(target) is not None:
            target = "~" + HOME_VAR.sub("", target)
        elif target[:1] in "$`":
            return None
    if target[:1] not in "/~":
        if cwd is None or cwd == "?" or target.startswith(".."):
            return None
        target = cwd.rstrip("/") + "/" + target if cwd != "/" else "/" + target
    if target[:1] == "~":
        return "home" if _HOME_TARGET.match(target) is not None else None
    if _ROOT_TARGET.match(target) is not None:
        return "root"
    if _OTHER_HOME_TARGET.match(target) is not None:
        return "home"
    if _SYSTEM_TARGET.match(target) is not None:
        return "system"
    return None
