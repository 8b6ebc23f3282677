"""When ``bash -c STRING`` would only exec one program: that program's argv, so a warm jail
can exec it itself and skip bash's start-up (about 1.4 ms of a 6 ms command here).

For a *plain* string - one simple command of plain words, no quoting, expansion, glob,
redirection, assignment, operator or comment, and not a bash builtin or keyword - bash
splits it on blanks, searches ``PATH`` and execs the program in its own process (the
"one-shot" optimisation). Doing that ourselves must give the program exactly what bash
would: the same argv, and bash's changes to the environment (``PWD`` kept when it names the
working directory, ``SHLVL`` adjusted, ``_`` set to the program's path).
Which adjustments this host's bash makes is asked from bash itself once, in a fixed
environment (``_bash_behaviour``); an environment holding any variable bash treats
specially (``BASH_ENV``, ``SHELLOPTS``, exported functions, ...) is left to bash.

The spawner does the rest (``spawner._exec_direct``): the ``PATH`` search, and bash itself
for anything that is not a clean exec (not found, not executable, a script without ``#!``,
a ``PWD`` that is not the working directory), so messages and exit codes stay bash's own.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

# Where a system bash lives; a program merely named bash elsewhere is run as it is.
SYSTEM_BASH: Final = ("/bin/bash", "/usr/bin/bash")

# A plain word: nothing bash would expand, quote, glob, redirect or treat as an operator
# (no ``~`` either: bash expands it after ``=`` or ``:`` in assignment-like arguments).
PLAIN_WORD: Final = re.compile(r"[A-Za-z0-9_./:=,+@%-]+")
BLANKS: Final = re.compile(r"[ \t]+")


def _names(listing: str) -> frozenset[str]:
    return frozenset(listing.split())


# `compgen -k` and `compgen -b` of bash 5.2: a first word bash runs itself
BASH_KEYWORDS: Final = _names(
    "if then else elif fi case esac for select while until do done in function time "
    "{ } ! [[ ]] coproc"
)
BASH_BUILTINS: Final = _names(
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue "
    "declare dirs disown echo enable eval exec exit export false fc fg getopts hash help "
    "history jobs kill let local logout mapfile popd printf pushd pwd read readarray "
    "readonly return set shift shopt source suspend test times trap true type typeset "
    "ulimit umask unalias unset wait"
)

# Variables bash reads at start-up, changes, or does not pass on as it got them (bash(1),
# "Shell Variables"): with any of them in the environment, bash runs the command itself.
# PWD, SHLVL and _ are the three whose changes are modelled (see the module doc); OLDPWD bash
# keeps only when it names a directory, so it is left to bash too.
BASH_VARIABLES: Final = _names(
    "BASH BASHOPTS BASHPID BASH_ALIASES BASH_ARGC BASH_ARGV BASH_ARGV0 BASH_CMDS "
    "BASH_COMMAND BASH_COMPAT BASH_ENV BASH_EXECUTION_STRING BASH_LINENO "
    "BASH_LOADABLES_PATH BASH_REMATCH BASH_SOURCE BASH_SUBSHELL BASH_VERSINFO BASH_VERSION "
    "BASH_XTRACEFD CHILD_MAX COLUMNS COMP_CWORD COMP_KEY COMP_LINE COMP_POINT COMP_TYPE "
    "COMP_WORDBREAKS COMP_WORDS COMPREPLY COPROC DIRSTACK EMACS ENV EPOCHREALTIME "
    "EPOCHSECONDS EUID EXECIGNORE FCEDIT FIGNORE FUNCNAME FUNCNEST GLOBIGNORE GLOBSORT "
    "GROUPS HISTCMD HISTCONTROL HISTFILE HISTFILESIZE HISTIGNORE HISTSIZE HISTTIMEFORMAT "
    "HOSTFILE HOSTNAME HOSTTYPE IFS IGNOREEOF INPUTRC INSIDE_EMACS LINENO LINES MACHTYPE "
    "MAIL MAILCHECK MAILPATH MAPFILE OLDPWD OPTARG OPTERR OPTIND OSTYPE PIPESTATUS "
    "POSIXLY_CORRECT PPID PROMPT_COMMAND PROMPT_DIRTRIM PS0 PS1 PS2 PS3 PS4 RANDOM "
    "READLINE_ARGUMENT READLINE_LINE READLINE_MARK READLINE_POINT REPLY SECONDS SHELLOPTS "
    "SRANDOM TIMEFORMAT TMOUT UID auto_resume histchars"
)
EXPORTED_FUNCTION_PREFIX: Final = "BASH_FUNC_"
SHLVL_PLAIN: Final = re.compile(r"[0-9]{1,3}")  # other values bash rewrites its own way
SHLVL_WARNS_AT: Final = 999  # bash resets a level of 1000 or more, with a warning


class DirectExec(NamedTuple):
    """What to exec instead of bash: the words, and bash's ``SHLVL`` for the program."""

    argv: tuple[str, ...]
    shlvl: str


class _Behaviour(NamedTuple):
    """What this host's bash does to the environment of a program it execs."""

    shlvl_unset: str  # SHLVL when none was inherited
    shlvl_change: int  # added to an inherited SHLVL


def plain_words(command: str) -> tuple[str, ...] | None:
    """The words of ``command`` when bash would exec them as one program, else None."""
    words = tuple(word for word in BLANKS.split(command) if word)
    if not words or not all(PLAIN_WORD.fullmatch(word) for word in words):
        return None
    first = words[0]
    if "=" in first or first in BASH_KEYWORDS or first in BASH_BUILTINS:
        return None
    return words


def direct_exec(argv: Sequence[str], env: Mapping[str, str]) -> DirectExec | None:
    """The program to exec in place of ``argv`` when it is ``SYSTEM_BASH -c PLAIN`` and
    ``env`` holds nothing bash would treat specially; None: run ``argv`` as it is."""
    if len(argv) != 3 or argv[1] != "-c" or argv[0] not in SYSTEM_BASH:
        return None
    words = plain_words(argv[2])
    if words is None or "PATH" not in env or not _plain_pwd(env.get("PWD")):
        return None
    if any(name in BASH_VARIABLES or name.startswith(EXPORTED_FUNCTION_PREFIX) for name in env):
        return None
    behaviour = _bash_behaviour(os.path.realpath(argv[0]))
    if behaviour is None:
        return None
    inherited = env.get("SHLVL")
    if inherited is None:
        return DirectExec(words, behaviour.shlvl_unset)
    if not SHLVL_PLAIN.fullmatch(inherited) or int(inherited) >= SHLVL_WARNS_AT:
        return None
    return DirectExec(words, str(max(0, int(inherited) + behaviour.shlvl_change)))


def _plain_pwd(pwd: str | None) -> bool:
    """An absolute PWD without ``.``/``..``/empty components: bash keeps it as it is when it
    names the working directory (the spawner checks that; bash would canonicalise others)."""
    if pwd is None or not pwd.startswith("/"):
        return False
    return pwd == "/" or all(part not in ("", ".", "..") for part in pwd[1:].split("/"))


@functools.cache
def _bash_behaviour(bash: str) -> _Behaviour | None:
    """Ask ``bash`` (in a fixed, clean environment) what it passes to a program it execs
    for ``-c``; None when it does not exec in place or changes more than is modelled."""
    seen = [_env_bash_gives(bash, shlvl) for shlvl in (None, "5")]
    if any(env is None for env in seen):
        return None
    unset, five = seen
    assert unset is not None and five is not None
    expected = {"PATH", "PWD", "SHLVL", "_"}
    if set(unset) != expected or set(five) != expected:
        return None
    if unset["_"] != "/usr/bin/env" or unset["PWD"] != "/" or five["PWD"] != "/":
        return None
    try:
        return _Behaviour(unset["SHLVL"], int(five["SHLVL"]) - 5)
    except ValueError:
        return None


def _env_bash_gives(bash: str, shlvl: str | None) -> dict[str, str] | None:
    env = {"PATH": "/usr/bin:/bin", "PWD": "/"}
    if shlvl is not None:
        env["SHLVL"] = shlvl
    try:
        done = subprocess.run(
            [bash, "-c", "/usr/bin/env -0"], env=env, cwd="/", capture_output=True,
            timeout=10, check=True, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    entries = (entry.partition("=") for entry in done.stdout.decode().split("\0") if entry)
    return {name: value for name, _, value in entries}
