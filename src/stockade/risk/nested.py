"""Code a command runs: shells, interpreters, ``eval``/``source``, REPLs, ``python -m``, and the
code in ``[[ … ]]``/``(( … ))`` subscripts.

Static shell code in a language the parser reads (``bash -c 'ls'``, a quoted heredoc into
``sh``, ``eval ls``) is parsed and classified like any command (``shell.nested-code``); code
only known at run time, code in another shell language (zsh, fish, …) and inline code of other
interpreters (``python -c``) is destructive. A script file is medium in the project, high
outside it, destructive when only known at run time or downloaded in the same command.
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stockade.risk.downloads import download_fed
from stockade.risk.model import Args, Call, D, Flag, Found, H, L, M, R, Spec, Takes
from stockade.risk.paths import FOUND, P_PLAIN, STDIN_PATHS, VENV_ACTIVATE, path_class
from stockade.risk.specs import secret_arguments
from stockade.shell import Redirect
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

# =============================================================================================
# Shells. The POSIX family's code is bash-compatible, so static code is classified; the others
# speak another language the parser would misread (zsh glob qualifiers run code), so it is not.
# =============================================================================================

#: Shells whose code the bash parser reads faithfully: static code is classified.
POSIX_SHELLS = frozenset("sh bash rbash dash ash posh".split())
#: Other shells: their static code is destructive, but read as bash too, so that the rules it
#: trips (``zsh -c 'rm -rf /'``: the built-in hard deny) are reported.
OTHER_SHELLS = frozenset("zsh ksh mksh pdksh yash fish csh tcsh elvish nu xonsh".split())

#: Set options every POSIX shell takes as ``-x``/``+x`` (``set`` letters), besides its own.
_SET_LETTERS = "abCefhmnuvx"


def _version(*names: str) -> Flag:
    return Flag(names, tier=R, rule="program.version", why="only prints information")


def _posix_flags(letters: str, *own: Flag) -> tuple[Flag, ...]:
    """A shell's flags: its set letters (``-e``, ``+e``), ``-o``/``+o`` OPTION, ``-c``, ``-s``,
    ``-i`` and its own. Built per shell: each shell's set is its own tuple."""
    letters = "".join(dict.fromkeys(letter for letter in letters if letter not in "cions"))
    flags = (
        Flag(("-c",), why="the first operand is shell code"),
        Flag(("-s",), why="reads the code from stdin"),
        Flag(("-i",)),
        Flag(("-o", "+o"), takes="value"),
        *(Flag((f"-{letter}",)) for letter in letters),
        *(Flag((f"+{letter}",)) for letter in letters),
        Flag(("-n",), why="only checks syntax"),
        *own,
    )
    if not any("--version" in flag.names for flag in own):
        flags = (*flags, _version("--version", "--help"))
    return flags


_BASH = _posix_flags(
    _SET_LETTERS + "kptBEHPT",
    Flag(("-l", "--login")),
    Flag(("-r", "--restricted")),
    Flag(("-D", "--dump-strings", "--dump-po-strings")),
    Flag(("-O", "+O"), takes="value"),
    Flag(("--rcfile", "--init-file"), takes="script", why="runs the file as shell code"),
    Flag(("--norc", "--noprofile", "--noediting", "--posix", "--verbose", "--debugger")),
    Flag(("--pretty-print", "--debug")),
    Flag(("--version", "--help"), tier=R, rule="program.version"),
)


def _shell(flags: tuple[Flag, ...], *examples: tuple[str, Tier] | tuple[str, Tier, str]) -> Spec:
    return Spec(
        None, operands=("script", "value"), flags=flags, check=shell_check, examples=examples
    )


# =============================================================================================
# Interpreters: inline code, a module, a script file or stdin. (Their version flags carry
# ``program.version``; the flags in SYNTAX_CHECKS run nothing at all.)
# =============================================================================================


def _code(*names: str) -> Flag:
    return Flag(names, takes="code")


_NODE_CHECK = Flag(("-c", "--check"), why="only checks syntax")
_RUBY_CHECK = Flag(("-c",), why="only checks syntax")
_PHP_LINT = Flag(("-l", "--syntax-check"), why="only checks syntax")
_PERL_CHECK = Flag(("-c",), why="only checks syntax")
#: Flags with which an interpreter only checks syntax: nothing runs, even with a script.
SYNTAX_CHECKS = frozenset({_NODE_CHECK, _RUBY_CHECK, _PHP_LINT, _PERL_CHECK})
_NODE_TEST = Flag(("--test",), tier=L, why="node --test runs the project's tests")
_MODULE: Takes = "module"


def _python_flags() -> tuple[Flag, ...]:
    return (
        _code("-c"),
        Flag(("-m",), takes=_MODULE),
        Flag(("-W", "-X", "--check-hash-based-pycs"), takes="value"),
        Flag(tuple(f"-{letter}" for letter in "bBdEiIOPqsSuvx")),
        _version("-V", "--version", "-h", "--help", "-?", "--help-env", "--help-xoptions"),
    )


def _interpreter(
    flags: tuple[Flag, ...], *examples: tuple[str, Tier] | tuple[str, Tier, str]
) -> Spec:
    return Spec(
        None, operands=("script", "value"), flags=flags, check=interpreter_check, examples=examples
    )


# =============================================================================================
# ``python -m MODULE``: a tier, or the program the module is (``python -m pip`` is ``pip``).
# =============================================================================================

PYTHON_MODULES: dict[str, Tier | str] = {
    **{
        name: name
        for name in """pytest pip mypy ruff black isort flake8 pylint pyright bandit pycodestyle
            pydocstyle pyflakes vulture coverage tox nox twine poetry uv pipx mkdocs alembic
            hatch pdm autopep8 yapf radon""".split()
    },
    "pre_commit": "pre-commit",
    **{name: R for name in "json.tool pydoc tabnanny pyclbr site sysconfig platform".split()},
    **{name: R for name in "this tokenize dis ast calendar uuid base64 pip_audit".split()},
    **{name: L for name in "unittest doctest venv virtualenv compileall py_compile".split()},
    **{name: L for name in "zipfile tarfile pytest_benchmark hypothesis".split()},
    **{name: M for name in "build gzip sphinx uvicorn gunicorn flask django streamlit".split()},
    **{name: M for name in "jupyter notebook ipykernel nuitka PyInstaller maturin".split()},
    **{name: M for name in "cProfile profile pdb trace".split()},
    **{name: H for name in "ensurepip http.server webbrowser smtpd ftplib".split()},
    **{name: D for name in "timeit code asyncio sqlite3 idlelib IPython runpy".split()},
}


def python_module(
    ctx: Context, found: Found, call: Call, module: str, static: bool, rest: int
) -> None:
    """``python -m MODULE``: a tier from PYTHON_MODULES, or the program the module is."""
    if not static:
        found.add(D, "subcommand.dynamic", "python -m: module only known at run time")
        return
    entry = PYTHON_MODULES.get(module)
    if entry is None and module.endswith(".__main__"):
        entry = PYTHON_MODULES.get(module[: -len(".__main__")])
    if isinstance(entry, str):
        ctx.command(found, call.replaced((entry, *call.words[rest:]), (True, *call.static[rest:])))
    elif entry is not None:
        found.add(entry, "python.module", f"python -m {module} is {entry.label}")
        secret_arguments(found, call)
    else:
        found.add(
            H,
            "python.unknown-module",
            f"python -m {module}: a module not in the table runs arbitrary code",
        )


# =============================================================================================
# What runs the code: the checks.
# =============================================================================================


def shell_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``sh``/``bash``/…: inline code (``-c``), stdin (``-s``, ``-``, none) or a script."""
    name = args.name
    given = {g.name for g in args.given}
    words = call.words
    rest = args.rest
    if "-n" in given:
        found.add(R, "program.version", f"{name} -n only checks syntax")
        return
    code_flag = next((g for g in args.given if g.name in ("-c", "--command")), None)
    if code_flag is not None:
        if code_flag.values:
            code, static = code_flag.values[0], code_flag.statics[0]
        elif rest < len(words):
            code, static = words[rest], call.static[rest]
        else:
            code, static = "", True
        if static and name in POSIX_SHELLS:
            ctx.nested(found, call, code, "shell.nested-code", f"{name} -c")
        elif static:
            found.add(
                D,
                "interpreter.inline-code",
                f"{name} -c runs {name} code, which the bash parser cannot read faithfully",
            )
            ctx.nested(found, call, code, "shell.nested-code", f"{name} -c code, read as bash,")
        else:
            found.add(D, "interpreter.inline-code", f"{name} -c runs code only known at run time")
            if download_fed(call):
                found.add(D, "download.pipe-to-shell", f"{name} -c runs downloaded code")
        return
    if rest >= len(words) and any(g.flag.rule == "program.version" for g in args.given):
        return  # the generic pass reported program.version
    if rest < len(words) and words[rest] == "-" and call.static[rest]:
        rest += 1  # POSIX: a lone `-` ends the options; the script follows
        if rest >= len(words):
            stdin_code(ctx, found, call, name)
            return
    if "-s" in given or rest >= len(words):
        stdin_code(ctx, found, call, name)
    else:
        script(ctx, found, call, words[rest], call.static[rest], name)


def interpreter_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """python, node, perl, ruby, …: inline code and modules are flag values (the generic pass
    reports them); here: syntax checks, a script, stdin."""
    name = args.name
    words = call.words
    version = False
    for given in args.given:
        flag = given.flag
        if flag in SYNTAX_CHECKS:
            found.add(R, "program.version", f"{name}: a syntax check runs nothing")
            return
        if "code" in flag.values or "module" in flag.values or flag is _NODE_TEST:
            return  # reported by the generic pass
        version = version or flag.rule == "program.version"
    rest = args.rest
    stdin = any(word == "-" for word, *_ in args.operands) or (
        rest < len(words) and words[rest] == "-"
    )
    if version and not stdin and rest >= len(words):
        return
    if stdin or rest >= len(words):
        stdin_code(ctx, found, call, name)
    else:
        script(ctx, found, call, words[rest], call.static[rest], name)


def script(ctx: Context, found: Found, call: Call, path: str, static: bool, what: str) -> None:
    """An interpreter runs the script file ``path``."""
    if not static:
        found.add(D, "interpreter.dynamic-script", f"{what} runs {path!r}, only known at run time")
        if download_fed(call):
            found.add(D, "download.pipe-to-shell", f"{what} runs downloaded code")
        return
    if path in STDIN_PATHS:
        stdin_code(ctx, found, call, what)
    elif path.endswith(FOUND):
        found.add(D, "interpreter.dynamic-script", f"{what} runs every file find matched")
    elif ctx.is_downloaded(path):
        found.add(D, "download.run-downloaded", f"{what} runs {path!r}, downloaded in this command")
    elif path_class(path, True, ctx.cwd) == P_PLAIN:
        found.add(M, "interpreter.script", f"{what} runs the project script {path!r}")
    else:
        found.add(H, "interpreter.outside-script", f"{what} runs {path!r} from outside the project")


_EXPANDS_IN_HEREDOC = re.compile(r"[$`\\]")


def heredoc_code(redirect: Redirect) -> tuple[str, bool]:
    """The code a heredoc or here-string holds, and whether it is known before it runs."""
    if redirect.op == "<<<":
        return redirect.target, redirect.static
    code = redirect.body or ""
    quoted = "'" in redirect.target or '"' in redirect.target or "\\" in redirect.target
    return code, quoted or _EXPANDS_IN_HEREDOC.search(code) is None


def stdin_code(ctx: Context, found: Found, call: Call, what: str) -> None:
    """An interpreter reads its code from stdin: a heredoc, a here-string, a file, a pipe or
    the terminal. Static code a POSIX shell reads is classified like any command."""
    seg = call.seg
    program = call.words[0].rpartition("/")[2]
    source: Redirect | None = None
    for redirect in seg.redirects:
        if redirect.op in ("<<", "<<-", "<<<", "<") and redirect.fd in (None, 0):
            source = redirect
    if source is not None and source.op == "<":
        path = source.target
        if source.static and (path in STDIN_PATHS or path.startswith("/dev/fd/")):
            found.add(D, "interpreter.stdin", f"{what} reads code from {path!r}")
        else:
            script(ctx, found, call, path, source.static, what)
    elif source is not None:
        code, readable = heredoc_code(source)
        if readable and program in POSIX_SHELLS:
            ctx.nested(found, call, code, "shell.nested-code", f"the code {what} reads")
        else:
            found.add(D, "interpreter.stdin", f"{what} runs the text on its stdin as code")
            if readable and program in OTHER_SHELLS:
                ctx.nested(found, call, code, "shell.nested-code", f"the code {what} reads")
    elif seg.fed_by:
        found.add(D, "pipe.to-interpreter", f"a pipe feeds {what}, which runs it as code")
    else:
        found.add(D, "interpreter.stdin", f"{what} reads code from stdin or the terminal")
    if download_fed(call):
        found.add(D, "download.pipe-to-shell", f"{what} runs downloaded code")


def eval_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``eval ARGS``: the joined arguments are shell code; static code is classified."""
    if len(call.words) > 1 and all(call.static[1:]):
        ctx.nested(found, call, " ".join(call.words[1:]), "shell.nested-code", "eval")
    elif len(call.words) > 1:
        found.add(D, "interpreter.eval", "eval runs code only known at run time")
        if download_fed(call):
            found.add(D, "download.pipe-to-shell", "eval runs downloaded code")


def source_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """``source FILE``/``. FILE`` runs the file in this shell; venv activation is medium."""
    words = call.words
    name = args.name
    if len(words) > 1 and call.static[1] and VENV_ACTIVATE.match(words[1]) is not None:
        found.add(M, "interpreter.source-venv", f"{name} {words[1]} activates a virtualenv")
        return
    if len(words) > 1 and call.static[1] and ctx.is_downloaded(words[1]):
        found.add(D, "download.run-downloaded", f"{name} {words[1]}: downloaded in this command")
    found.add(D, "interpreter.source", f"{name} runs a file's code in the current shell")
    if download_fed(call):
        found.add(D, "download.pipe-to-shell", f"{name} runs downloaded code")


def history_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if any(word in ("-l", "-ln", "-nl") for word in call.words[1:]):
        found.add(R, "shell.lookup", "fc -l lists history")
    else:
        found.add(D, "interpreter.eval", "fc re-runs commands from the history")


_ARITH_OPERATOR = re.compile(r"(?:^|\s)-(?:eq|ne|lt|le|gt|ge)(?:\s|$)")
_ARITH_CODE = re.compile(r"\[[^\]]*(?:\$\(|`)")


def test(found: Found, operands: tuple[str, ...]) -> None:
    """``[[ … ]]``: reading only, unless an arithmetic comparison evaluates code."""
    found.add(R, "shell.test", "a conditional test")
    if _ARITH_OPERATOR.search(" ".join(operands)) is not None:
        arithmetic(found, operands)


def arithmetic(found: Found, operands: tuple[str, ...]) -> None:
    """``(( … ))``/``let``: an array subscript holding ``$(…)`` or backticks runs it."""
    if _ARITH_CODE.search(" ".join(operands)) is not None:
        found.add(D, "shell.arith-injection", "arithmetic evaluates code in a subscript")
    else:
        found.add(R, "shell.arithmetic", "arithmetic on shell variables")


# =============================================================================================
# The specs.
# =============================================================================================

#: For subcommand tables: a subcommand that reads code from the terminal (``poetry shell``).
REPL = Spec(D, "interpreter.stdin", why="reads code from the terminal")
#: For subcommand tables: a subcommand whose next word is inline code (``bun -e``).
INLINE_CODE = Spec(D, "interpreter.inline-code", why="runs inline code")
#: For subcommand tables: a subcommand that runs a script file (``deno run main.ts``).
SCRIPT_FILE = Spec(None, operands=("script",))

SPECS: dict[str, Spec] = {
    # --- POSIX shells: static code is classified ------------------------------------------
    "bash": _shell(
        _BASH,
        ("bash -c 'ls'", R, "shell.nested-code"),
        ("bash -lc 'git status'", R),
        ('bash -c "$CMD"', D, "interpreter.inline-code"),
        ("bash -c 'rm -rf /'", D, "rm.recursive-force-root"),
        ("bash --rcfile /tmp/x build.sh", H, "interpreter.outside-script"),
        ("bash -n build.sh", R),
        ("bash build.sh", M),
    ),
    "sh": _shell(_posix_flags(_SET_LETTERS + "I"), ("sh -c 'echo hi'", R), ("sh x.sh", M)),
    "dash": _shell(_posix_flags(_SET_LETTERS + "IEVq"), ("dash -c ls", R)),
    "ash": _shell(_posix_flags(_SET_LETTERS + "l"), ("ash -c ls", R)),
    "posh": _shell(_posix_flags(_SET_LETTERS), ("posh -c ls", R)),
    # --- other shell languages: their code is not read ------------------------------------
    "zsh": _shell(
        _posix_flags(_SET_LETTERS + "dfgklprtwyBCDEFGHIJKLMNOPQRSTUVWXYZ"),
        ("zsh -c ls", D, "interpreter.inline-code"),
        ("zsh --version", R),
    ),
    "ksh": _shell(_posix_flags(_SET_LETTERS + "klprtBDEGHT"), ("ksh -c ls", D)),
    "mksh": _shell(_posix_flags(_SET_LETTERS + "klprtTUX"), ("mksh -c ls", D)),
    "pdksh": _shell(_posix_flags(_SET_LETTERS + "klprt"), ("pdksh -c ls", D)),
    "yash": _shell(_posix_flags(_SET_LETTERS + "l"), ("yash -c ls", D)),
    "fish": _shell(
        (
            Flag(("-c", "--command"), takes="value", why="runs fish code"),
            Flag(("-C", "--init-command"), takes="code"),
            Flag(("-p", "--profile", "-o", "--debug-output"), takes="write"),
            Flag(("-d", "--debug"), takes="value"),
            Flag(("-n", "--no-execute"), why="only checks syntax"),
            Flag(("-i", "--interactive", "-l", "--login", "-N", "--no-config", "-P", "--private")),
            _version("-v", "--version", "-h", "--help"),
        ),
        ("fish -c ls", D, "interpreter.inline-code"),
        ("fish --command=ls", D, "interpreter.inline-code"),
    ),
    "csh": _shell(_posix_flags("bcefimnstvxVX"), ("csh -c ls", D)),
    "tcsh": _shell(_posix_flags("bcdefFilmnqstvxVX"), ("tcsh -c ls", D)),
    "elvish": _shell((Flag(("-c",)), Flag(("-i", "-norc"))), ("elvish -c ls", D)),
    "nu": _shell(
        (Flag(("-c", "--commands"), takes="value"), _version("-v", "--version", "-h", "--help")),
        ("nu -c ls", D),
    ),
    "xonsh": _shell((Flag(("-c",), takes="value"), Flag(("-i", "-l"))), ("xonsh -c ls", D)),
    # --- interpreters ---------------------------------------------------------------------
    "python": _interpreter(
        _python_flags(),
        ("python -c 'print(1)'", D, "interpreter.inline-code"),
        ("python -m pytest -q", L),
        ("python -m http.server", H),
        ("python x.py", M),
        ("python /tmp/x.py", H),
        ("python -V", R),
        ("python -", D, "interpreter.stdin"),
    ),
    "pypy": _interpreter(_python_flags(), ("pypy3 -c 1", D), ("pypy x.py", M)),
    "ipython": _interpreter(
        (
            _code("-c"),
            Flag(("-m",), takes=_MODULE),
            Flag(("--profile", "--ipython-dir", "--config"), takes="value"),
            Flag(("-i",)),
            _version("-V", "--version", "-h", "--help"),
        ),
        ("ipython -c 1", D),
    ),
    "node": _interpreter(
        (
            _code("-e", "--eval", "-p", "--print"),
            Flag(
                ("-r", "--require", "--import", "--loader", "--experimental-loader"), takes="script"
            ),
            Flag(("--env-file",), takes="read"),
            Flag(
                ("--inspect-port", "--title", "--conditions", "-C", "--input-type"), takes="value"
            ),
            _NODE_CHECK,
            _NODE_TEST,
            _version("-v", "--version", "-h", "--help"),
        ),
        ("node -e 1", D),
        ("node --test", L),
        ("node --check app.js", R),
        ("node -r /tmp/hook.js app.js", H),
        ("node --env-file=.env app.js", H, "secret.read"),
        ("node dist/index.js", M),
    ),
    "ts-node": _interpreter(
        (
            _code("-e", "--eval", "-p", "--print"),
            Flag(("-r", "--require"), takes="script"),
            Flag(("-P", "--project"), takes="read"),
            Flag(("-O", "--compiler-options"), takes="value"),
            _version("-v", "--version", "-h", "--help"),
        ),
        ("ts-node -e 1", D),
    ),
    "tsx": _interpreter(
        (
            _code("-e", "--eval", "-p", "--print"),
            Flag(("-r", "--require", "--import"), takes="script"),
            Flag(("--tsconfig",), takes="read"),
            _version("-v", "--version", "-h", "--help"),
        ),
        ("tsx -e 1", D),
        ("tsx src/main.ts", M),
    ),
    "perl": _interpreter(
        (
            _code("-e", "-E", "-M", "-m"),
            Flag(("-I",), takes="value"),
            Flag(("-x", "-C", "-d", "-D", "-i", "-l", "-0", "-F", "-W", "-X"), takes="optional"),
            Flag(("-V",), R, "program.version", "optional", "prints perl's configuration"),
            Flag(tuple(f"-{letter}" for letter in "anpsStTuUw")),
            _PERL_CHECK,
            _version("-v", "--version", "-h", "--help"),
        ),
        ("perl -ne 'print' f", D, "interpreter.inline-code"),
        ("perl -MFoo x.pl", D),
        ("perl -c x.pl", R),
        ("perl Makefile.PL", M),
    ),
    "ruby": _interpreter(
        (
            _code("-e"),
            Flag(("-r",), takes="script"),
            Flag(("-I", "-C", "-E", "--encoding"), takes="value"),
            Flag(
                ("-F", "-K", "-x", "-0", "-W", "--enable", "--disable", "--dump"), takes="optional"
            ),
            Flag(tuple(f"-{letter}" for letter in "adlnpsSvwy")),
            _RUBY_CHECK,
            _version("--version", "-h", "--help"),
        ),
        ("ruby -e 'p 1'", D),
        ("ruby -c script.rb", R),
        ("ruby bin/setup", M),
    ),
    "php": _interpreter(
        (
            _code("-r", "-B", "-R", "-E", "-d", "-z"),
            Flag(("-F", "-f"), takes="script"),
            Flag(("-c", "-t"), takes="read"),
            Flag(("-S",), takes="value", tier=H, rule="program.table", why="php -S serves files"),
            Flag(("-a",), why="interactive: reads code from the terminal"),
            _PHP_LINT,
            _version("-v", "--version", "-h", "--help", "-i", "-m"),
        ),
        ("php -r 'echo 1;'", D),
        ("php -l x.php", R),
        ("php -d auto_prepend_file=/tmp/x x.php", D),
    ),
    "lua": _interpreter(
        (_code("-e"), Flag(("-l",), takes="script"), Flag(("-i", "-E", "-W")), _version("-v")),
        ("lua -e 'print(1)'", D),
    ),
    "luajit": _interpreter(
        (
            _code("-e"),
            Flag(("-b",), D, "interpreter.inline-code", why="luajit -b takes its own options"),
            Flag(("-l",), takes="script"),
            Flag(("-j", "-O"), takes="optional"),
            Flag(("-i", "-E")),
            _version("-v"),
        ),
        ("luajit -e 1", D),
    ),
    "Rscript": _interpreter(
        (
            _code("-e"),
            Flag(("--default-packages",), takes="value"),
            _version("--version", "--help"),
        ),
        ("Rscript -e 1", D),
    ),
    "R": _interpreter(
        (_code("-e"), Flag(("-f", "--file"), takes="script"), _version("--version", "--help")),
        ("R -e 1", D),
    ),
    "julia": _interpreter(
        (
            _code("-e", "--eval", "-E", "--print", "-J", "--sysimage"),
            Flag(("-L", "--load"), takes="script"),
            Flag(("-p", "--procs", "-C", "--cpu-target", "-O", "-t", "--threads"), takes="value"),
            Flag(("--project",), takes="optional"),
            Flag(("-i", "-q", "--quiet")),
            _version("-v", "--version", "-h", "--help"),
        ),
        ("julia -e 1", D),
    ),
    "osascript": _interpreter(
        (_code("-e"), Flag(("-l", "-s"), takes="value"), Flag(("-i",))),
        ("osascript -e 'beep'", D),
    ),
    "tclsh": _interpreter((Flag(("-encoding",), takes="value"),), ("tclsh x.tcl", M)),
    "wish": _interpreter((Flag(("-encoding",), takes="value"),), ("wish x.tcl", M)),
    "expect": _interpreter(
        (
            _code("-c"),
            Flag(("-f",), takes="script"),
            Flag(("-i", "-d", "-D", "-b", "-n", "-N")),
            _version("-v"),
        ),
        ("expect -c 'spawn ls'", D),
    ),
    "groovy": _interpreter(
        (
            _code("-e"),
            Flag(("-cp", "-classpath", "--classpath", "-D"), takes="value"),
            Flag(("-l",), takes="value", tier=H, rule="program.table", why="groovy -l listens"),
            Flag(("-n", "-p", "-i")),
            _version("-v", "--version", "-h", "--help"),
        ),
        ("groovy -e 1", D),
    ),
    # --- shell code run by shell builtins ---------------------------------------------------
    "eval": Spec(
        None,
        check=eval_check,
        examples=(("eval ls", R, "shell.nested-code"), ('eval "$x"', D, "interpreter.eval")),
    ),
    "source": Spec(
        None,
        check=source_check,
        examples=(("source .venv/bin/activate", M), ("source ./env.sh", D)),
    ),
    "fc": Spec(None, check=history_check, examples=(("fc -l", R), ("fc -s", D))),
    # --- REPLs and debuggers: they run what they read -------------------------------------
    **{
        name: Spec(
            D,
            "interpreter.stdin",
            flags=(_version("--version", "-v", "-V", "--help", "-h"),),
            why=f"{name} runs code it reads (a REPL or debugger)",
        )
        for name in "irb jshell ghci scala kotlin clojure guile racket sbcl clisp gdb lldb".split()
    },
}
SPECS["."] = SPECS["source"]
SPECS["rbash"] = SPECS["bash"]  # bash, restricted

#: Versioned interpreter names map to the table entry: python3.12 → python, perl5.36 → perl.
VERSIONED = re.compile(r"^(python|pypy|perl|ruby|php|lua|node|pip|tclsh|wish)[\d.]*$")
