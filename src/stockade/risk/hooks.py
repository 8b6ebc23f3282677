"""Settings that make programs run code of the setter's choosing: environment variables
(``LD_PRELOAD``, ``PAGER``, ``GIT_SSH_COMMAND``…), git configuration keys (``core.pager``,
``alias.x=!…``) and ssh ``-o`` options (``ProxyCommand``). Plain data, and the two small checks
that apply it.
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

import re

from stockade.risk.model import D, Found, H
from stockade.vocabulary import SECRET_NAME_WORDS

#: Variables that make programs (or the shell) run code of the assigner's choosing.
EXEC_HOOK_VARS = frozenset(
    """LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT DYLD_INSERT_LIBRARIES DYLD_LIBRARY_PATH
        DYLD_FRAMEWORK_PATH BASH_ENV ENV PROMPT_COMMAND PS4 SHELLOPTS BASHOPTS IFS BASH_FUNC
        GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS
        GIT_PROXY_COMMAND GIT_EXEC_PATH GIT_TEMPLATE_DIR GIT_CONFIG_PARAMETERS
        GIT_CONFIG_COUNT GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG GIT_EDITOR
        GIT_SEQUENCE_EDITOR EDITOR VISUAL LESSOPEN LESSCLOSE BROWSER PYTHONSTARTUP PYTHONHOME
        PERL5OPT PERL5LIB PERLLIB PERL5DB RUBYOPT RUBYLIB RUSTC_WRAPPER
        RUSTC_WORKSPACE_WRAPPER CARGO_BUILD_RUSTC_WRAPPER CARGO_TARGET_DIR_RUNNER SHELL
        MAKESHELL CONFIG_SHELL npm_config_script_shell npm_config_node_options
        npm_config_userconfig YARN_RC_FILENAME RIPGREP_CONFIG_PATH ACKRC BAT_CONFIG_PATH
        LESSKEY LESSKEYIN LESSKEY_SYSTEM MANOPT""".split()
)
#: Prefixes of exec-hook variables (``GIT_CONFIG_KEY_0``, ``BASH_FUNC_f%%``).
EXEC_HOOK_PREFIXES = ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_", "CARGO_TARGET_")
#: Pager variables: they run their value, so only the values in SAFE_PAGERS are harmless.
PAGER_VARS = frozenset(
    """PAGER GIT_PAGER MANPAGER SYSTEMD_PAGER BAT_PAGER DELTA_PAGER GH_PAGER AWS_PAGER
        PSQL_PAGER ACK_PAGER ACK_PAGER_COLOR""".split()
)
SAFE_PAGERS = frozenset(
    {
        "",
        "cat",
        "less",
        "more",
        "most",
        "true",
        "less -R",
        "less -r",
        "less -FRX",
        "less -FRSX",
        "less -FX",
        "less -X",
    }
)
#: Compiler-like variables: harmless when set to a known compiler.
TOOL_VARS = frozenset("CC CXX CPP FC LD AR NM RANLIB RUSTC".split())
SAFE_TOOL = re.compile(
    r"^(?:(?:ccache|sccache) )?(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+|zig cc|zig c\+\+|tcc|icc|"
    r"gfortran|ld|ld\.lld|ld\.gold|lld|ar|llvm-ar|nm|llvm-nm|ranlib|rustc|cpp)(?:-\d+)?$"
)
_JAVA_AGENT = re.compile(r"-javaagent|-agentlib|-agentpath|-XX:On|-Xbootclasspath")
#: Option variables: harmless unless they load code.
OPTION_VARS: dict[str, re.Pattern[str]] = {
    "NODE_OPTIONS": re.compile(
        r"(?:^|\s)(?:-r|--require|--import|--loader|"
        r"--experimental-loader|--env-file|--inspect)"
    ),
    "JAVA_TOOL_OPTIONS": _JAVA_AGENT,
    "_JAVA_OPTIONS": _JAVA_AGENT,
    "JDK_JAVA_OPTIONS": _JAVA_AGENT,
}
#: Variables that change where programs and their configuration are found.
PATH_VARS = frozenset("PATH HOME XDG_CONFIG_HOME ZDOTDIR GNUPGHOME".split())
#: A shell expansion of a variable named like a secret (``$API_TOKEN``, ``${#DB_PASSWORD}``):
#: the words are the vocabulary's, as in the sandbox's environment scrub.
SECRET_EXPANSION = re.compile(
    r"\$\{?[!#]?[A-Za-z_]*(?:" + "|".join(SECRET_NAME_WORDS) + ")", re.IGNORECASE
)

#: git ``-c``/``config`` keys that make git run a program (lower-case; ``.*`` is any part).
GIT_EXEC_KEYS = re.compile(
    r"""(?x)^(?:
        core\.(?:pager|sshcommand|editor|fsmonitor|hookspath|askpass|gitproxy|worktree|
              alternaterefscommand|attributesfile|excludesfile)
      | alias\..* | pager\..* | diff\..*\.(?:textconv|command) | diff\.external
      | filter\..* | merge\..*\.driver | credential(?:\..*)?\.helper | sequence\.editor
      | gpg(?:\..*)?\.program | uploadpack\.packobjectshook | include\.path | includeif\..*
      | remote\..*\.(?:uploadpack|receivepack|proxy) | protocol\..*allow | url\..*
      | ssh\.variant | instaweb\..* | sendemail\..* | web\.browser | browser\..*\.(?:cmd|path)
      | man\..*\.(?:cmd|path) | difftool\..*\.(?:cmd|path) | mergetool\..*\.(?:cmd|path)
      | receive\..* | http\..*\.?proxy | http\.proxy | submodule\..*\.update
      | core\.sshcommand | init\.templatedir | clean\.requireforce | safe\.directory
    )$"""
)
#: ssh ``-o`` options that run a local command (or pull in a file that could).
SSH_EXEC_OPTION = re.compile(
    r"(?i)^\s*(?:ProxyCommand|LocalCommand|PermitLocalCommand|KnownHostsCommand|"
    r"ProxyUseFdpass|Match|Include)\b"
)


#: A ``NAME=value`` (or ``NAME+=value``) argument that ``env`` and ``make`` read as an
#: assignment (checked with :func:`check_assignment`).
ASSIGNMENT_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")


def check_assignment(found: Found, name: str, value: str, static: bool) -> None:
    """``NAME=value`` before a command, bare, exported or given to ``env``/``make``."""
    base = name.partition("[")[0].rstrip("+")
    if base in PAGER_VARS:
        if not static or value.strip() not in SAFE_PAGERS:
            found.add(D, "env.exec-hook", f"{base} runs its value as a program")
    elif base in EXEC_HOOK_VARS or base.startswith(EXEC_HOOK_PREFIXES):
        found.add(D, "env.exec-hook", f"{base} makes programs run code of the caller's choice")
    elif base in TOOL_VARS:
        if not static or SAFE_TOOL.match(value.strip()) is None:
            found.add(D, "env.exec-hook", f"{base} names the compiler/tool builds will run")
    elif base in OPTION_VARS:
        if not static or OPTION_VARS[base].search(value) is not None:
            found.add(D, "env.exec-hook", f"{base} loads code into every process")
    elif base in PATH_VARS:
        found.add(H, "env.path", f"{base} changes where programs and their settings are found")
    if not static and SECRET_EXPANSION.search(value) is not None:
        found.add(H, "secret.env-var", "expands a variable named like a secret")


def check_git_setting(found: Found, setting: str, static: bool, what: str) -> None:
    """A ``key=value`` git setting: keys that run programs are destructive."""
    name, _, value = setting.partition("=")
    name = name.lower()
    if (
        (name == "core.pager" or name.startswith("pager."))
        and static
        and (value.strip() in SAFE_PAGERS or value.strip() in ("false", "true", "0", "1"))
    ):
        return  # `git -c core.pager=cat log`: a harmless pager
    if GIT_EXEC_KEYS.match(name) is not None:
        if name.startswith("alias.") and "!" not in value and static:
            return  # an alias to a git subcommand; using it fails closed as unknown
        found.add(D, "git.exec-config", f"{what} {name}: a setting that runs programs")
    elif not static:
        found.add(D, "git.exec-config", f"{what}: setting only known at run time")
