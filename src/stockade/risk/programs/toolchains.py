"""Build tools and language toolchains: cargo, go, rustup, gradle, maven, dotnet, swift, mix,
make, bundler, pre-commit, alembic, mkdocs, compilers and bundlers. Building is medium (it runs
project code), testing low, installing and fetching high, publishing destructive. ``make``
counts every target (``install``/``deploy`` high, ``help`` read-only) and checks ``VAR=value``
arguments like assignments (``make SHELL=…``).
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade.risk.flags import flag, optional, read, value
from stockade.risk.hooks import ASSIGNMENT_WORD, check_assignment
from stockade.risk.model import Args, Call, D, Flag, Found, H, L, M, R, Spec, SubTable
from stockade.risk.nested import REPL, SCRIPT_FILE
from stockade.risk.wrappers import PLAIN_RUNNER, runner
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

RUSTUP_RUN = runner(L, flag("--install"), operands=1)

#: ``make`` targets that are not medium (every target on the command line counts).
MAKE_TARGETS: dict[str, Tier] = {
    "help": R,
    "install": H,
    "uninstall": H,
    "deploy": H,
    "publish": H,
    "release": H,
    "upload": H,
    "push": H,
    "docker-push": H,
}
_MAKE_DRY_RUN = flag(
    "-n", "--dry-run", "--just-print", "--recon", "-q", "--question", "-p", "--print-data-base"
)


def make_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """make: medium; every target counts; ``-n`` (a dry run) is at most low."""
    targets: list[tuple[Tier, str]] = []
    for word, static, _, _ in args.operands:
        if ASSIGNMENT_WORD.match(word) is not None:
            name, _, text = word.partition("=")
            check_assignment(found, name, text, static)
        elif not static:
            found.add(D, "subcommand.dynamic", f"make: target {word!r} only known at run time")
        else:
            targets.append((MAKE_TARGETS.get(word, M), word))
    tier, target = max(targets, default=(M, ""))
    dry_run = args.has(_MAKE_DRY_RUN)
    if dry_run:
        tier = min(tier, L)
    shown = f"{args.name} {target}" if target else args.name
    found.add(tier, "program.table", f"{shown} is {tier.label}" + (" (dry run)" if dry_run else ""))


_CARGO: SubTable = {
    "": R,
    "build": M,
    "b": M,
    "check": L,
    "c": L,
    "test": L,
    "t": L,
    "run": M,
    "r": M,
    "bench": L,
    "doc": L,
    "d": L,
    "clippy": Spec(L, "subcommand.table", flags=(flag("--fix", tier=M),)),
    "fmt": Spec(M, "subcommand.table", flags=(flag("--check", tier=R),)),
    "clean": M,
    "new": L,
    "init": L,
    "add": H,
    "remove": M,
    "rm": M,
    "update": M,
    "fetch": M,
    "install": H,
    "uninstall": H,
    "publish": Spec(D, "subcommand.table", flags=(flag("--dry-run", "-n", tier=L),)),
    "yank": D,
    "login": H,
    "logout": L,
    "owner": H,
    "search": R,
    "tree": R,
    "metadata": R,
    "pkgid": R,
    "locate-project": R,
    "verify-project": R,
    "version": R,
    "help": R,
    "package": M,
    "vendor": M,
    "generate-lockfile": M,
    "fix": M,
    "rustc": M,
    "rustdoc": L,
    "report": R,
    "info": R,
    "config": R,
    "nextest": L,
    "llvm-cov": L,
    "audit": R,
    "deny": R,
    "outdated": R,
    "expand": R,
    "udeps": L,
    "watch": M,
    "make": M,
    "miri": L,
    "tarpaulin": L,
    "machete": R,
    "sort": M,
    "insta": M,
    "hack": L,
}

_GO: SubTable = {
    "": R,
    "build": M,
    "test": L,
    "vet": R,
    "fmt": M,
    "run": M,
    "get": H,
    "install": H,
    "list": R,
    "env": Spec(R, "subcommand.table", flags=(flag("-w", "-u", tier=M),)),
    "version": R,
    "doc": R,
    "generate": H,
    "clean": M,
    "fix": M,
    "bug": L,
    "help": R,
    "telemetry": L,
    "tool": M,
    "mod": {
        "tidy": M,
        "download": M,
        "verify": R,
        "graph": R,
        "why": R,
        "init": L,
        "edit": M,
        "vendor": M,
    },
    "work": {"init": L, "use": L, "edit": M, "sync": M, "vendor": M},
}

_RUSTUP: SubTable = {
    "": R,
    "show": R,
    "which": R,
    "doc": L,
    "default": M,
    "update": H,
    "install": H,
    "uninstall": H,
    "check": R,
    "override": M,
    "run": RUSTUP_RUN,
    "completions": R,
    "toolchain": {"list": R, "install": H, "uninstall": H, "link": M},
    "target": {"list": R, "add": H, "remove": M},
    "component": {"list": R, "add": H, "remove": M},
    "self": H,
    "set": M,
}

_GRADLE: SubTable = {
    "": M,
    "*": M,
    "test": L,
    "check": L,
    "tasks": R,
    "projects": R,
    "properties": R,
    "dependencies": R,
    "dependencyInsight": R,
    "help": R,
    "build": M,
    "assemble": M,
    "clean": M,
    "run": M,
    "bootRun": M,
    "jar": M,
    "compileJava": L,
    "compileKotlin": L,
    "lint": R,
    "publish": D,
    "publishToMavenLocal": M,
    "uploadArchives": D,
    "wrapper": M,
    "init": L,
    "installDist": M,
}

_MAVEN: SubTable = {
    "": M,
    "*": M,
    "test": L,
    "verify": L,
    "validate": R,
    "compile": L,
    "test-compile": L,
    "package": M,
    "install": M,
    "clean": M,
    "site": M,
    "deploy": D,
    "release:perform": D,
    "release:prepare": H,
    "dependency:tree": R,
    "dependency:list": R,
    "help:effective-pom": R,
    "versions:display-dependency-updates": R,
    "exec:java": M,
    "exec:exec": H,
    "spring-boot:run": M,
    "checkstyle:check": R,
    "spotless:apply": M,
    "spotless:check": R,
}

_DOTNET: SubTable = {
    "": R,
    "--info": R,
    "--list-sdks": R,
    "--list-runtimes": R,
    "build": M,
    "test": L,
    "run": M,
    "watch": M,
    "restore": H,
    "clean": M,
    "format": Spec(M, "subcommand.table", flags=(flag("--verify-no-changes", tier=R),)),
    "publish": M,
    "pack": L,
    "new": L,
    "sln": M,
    "list": R,
    "add": H,
    "remove": M,
    "tool": {"list": R, "run": M, "*": H},
    "nuget": {"push": D, "delete": D, "*": H},
    "workload": {"list": R, "*": H},
    "dev-certs": H,
    "user-secrets": H,
    "ef": M,
    "help": R,
    "sdk": {"check": R},
}

_SWIFT: SubTable = {
    "": REPL,
    "*": SCRIPT_FILE,
    "build": M,
    "test": L,
    "run": M,
    "repl": REPL,
    "package": {
        "resolve": H,
        "update": H,
        "init": L,
        "describe": R,
        "dump-package": R,
        "show-dependencies": R,
        "clean": M,
        "reset": M,
        "edit": M,
        "unedit": M,
        "generate-xcodeproj": M,
        "*": H,
    },
    "format": M,
    "--version": R,
}

_MIX: SubTable = {
    "": M,
    "*": M,
    "test": L,
    "compile": L,
    "format": Spec(M, "subcommand.table", flags=(flag("--check-formatted", tier=R),)),
    "deps.get": H,
    "deps.update": H,
    "deps.tree": R,
    "hex.publish": D,
    "phx.server": M,
    "ecto.migrate": H,
    "ecto.drop": D,
    "ecto.reset": D,
    "help": R,
    "credo": R,
    "dialyzer": R,
}

_PRE_COMMIT: SubTable = {
    "": M,
    "run": M,
    "install": H,
    "uninstall": H,
    "install-hooks": M,
    "autoupdate": M,
    "clean": M,
    "gc": M,
    "validate-config": R,
    "validate-manifest": R,
    "sample-config": R,
    "try-repo": H,
    "migrate-config": M,
    "help": R,
}

_BUNDLE: SubTable = {
    "": H,
    "install": H,
    "update": H,
    "add": H,
    "remove": M,
    "exec": PLAIN_RUNNER,
    "list": R,
    "show": R,
    "info": R,
    "check": R,
    "outdated": R,
    "lock": M,
    "config": {"list": R, "get": R, "*": M},
    "clean": M,
    "init": L,
}

_ALEMBIC: SubTable = {
    "": R,
    "current": R,
    "history": R,
    "heads": R,
    "branches": R,
    "show": R,
    "check": R,
    "upgrade": H,
    "downgrade": H,
    "stamp": H,
    "revision": L,
    "merge": L,
    "init": L,
    "edit": M,
}

_MKDOCS: SubTable = {"": R, "build": M, "serve": M, "new": L, "gh-deploy": D, "get-deps": R}


def _make() -> Spec:
    return Spec(
        None,
        flags=(
            _MAKE_DRY_RUN,
            read("-f", "--file", "--makefile"),
            value("-C", "--directory", "-I", "--include-dir", "-o", "--old-file", "-W"),
            value("--what-if", "--assume-new", "--assume-old"),
            optional("-j", "--jobs", "-l", "--load-average", "--debug", "--output-sync", "-O"),
            Flag(("-E", "--eval"), takes="code"),
            flag(*(f"-{letter}" for letter in "BdeiKkrRSstvw"), "--always-make", "--keep-going"),
        ),
        check=make_check,
        examples=(
            ("make", M),
            ("make test", M),
            ("make help", R),
            ("make install", H),
            ("make -n install", L),
            ("make SHELL=/tmp/evil", D, "env.exec-hook"),
            ("make --eval='x: ; rm -rf /' x", D, "interpreter.inline-code"),
            ("make -f ~/x.mk", H, "read.outside-project"),
        ),
    )


SPECS: dict[str, Spec] = {
    "make": _make(),
    "cargo": Spec(
        R,
        subcommands=_CARGO,
        flags=(value("-Z", "--color", "-C"), Flag(("--config",), takes="value")),
        examples=(
            ("cargo test", L),
            ("cargo build --release", M),
            ("cargo clippy --fix", M),
            ("cargo fmt --check", R),
            ("cargo publish --dry-run", L),
            ("cargo install ripgrep", H),
        ),
    ),
    "go": Spec(
        R,
        subcommands=_GO,
        flags=(value("-C"),),
        examples=(("go test ./...", L), ("go env GOPATH", R), ("go env -w X=y", M)),
    ),
    "rustup": Spec(R, subcommands=_RUSTUP, examples=(("rustup run stable cargo test", L),)),
    "gradle": Spec(
        M,
        subcommands=_GRADLE,
        flags=(
            value("-p", "--project-dir", "-x", "--exclude-task"),
            read("-b", "--build-file", "-c", "--settings-file"),
            Flag(("-I", "--init-script"), takes="script"),
        ),
        examples=(("gradle test", L), ("./gradlew build", M)),
    ),
    "mvn": Spec(
        M,
        subcommands=_MAVEN,
        flags=(
            read("-f", "--file", "-s", "--settings", "-gs", "--global-settings"),
            value("-P", "--activate-profiles", "-pl", "--projects", "-rf", "--resume-from"),
            value("-T", "--threads"),
        ),
        examples=(("mvn test", L), ("mvn deploy", D)),
    ),
    "dotnet": Spec(R, subcommands=_DOTNET, examples=(("dotnet format --verify-no-changes", R),)),
    "swift": Spec(None, subcommands=_SWIFT, examples=(("swift build", M), ("swift", D))),
    "mix": Spec(M, subcommands=_MIX, examples=(("mix format --check-formatted", R),)),
    "pre-commit": Spec(
        M,
        subcommands=_PRE_COMMIT,
        flags=(read("-c", "--config"),),
        examples=(("pre-commit validate-config", R), ("pre-commit run", M)),
    ),
    "bundle": Spec(H, subcommands=_BUNDLE, examples=(("bundle exec rspec", D),)),
    "alembic": Spec(R, subcommands=_ALEMBIC),
    "mkdocs": Spec(R, subcommands=_MKDOCS, examples=(("mkdocs gh-deploy", D),)),
    "cargo-nextest": Spec(L, operands=("file",)),
}
#: The same tools under their wrapper or alias names.
SPECS["gmake"] = SPECS["make"]  # GNU make on BSD and macOS
SPECS["bmake"] = SPECS["make"]  # BSD make: the options that matter here are make's
SPECS["gradlew"] = SPECS["gradle"]  # the project's gradle wrapper
SPECS["mvnw"] = SPECS["mvn"]  # the project's maven wrapper
SPECS["prek"] = SPECS["pre-commit"]  # a pre-commit reimplementation, same commands
SPECS["bundler"] = SPECS["bundle"]

#: Compilers, build tools and bundlers read the project's sources: their options are not
#: reviewed (each has hundreds); an option they do not list is a plain flag and ``--x=VALUE``
#: values are checked as files read. The compilers' options that run other code are checked
#: (:func:`compiler_check`).
_COMPILER = "compiler (hundreds of options; the ones that run other code are checked)"
_BUILD_TOOL = "build tool (runs the project's build, at medium; options not reviewed)"
NOT_REVIEWED: dict[str, str] = {
    name: _COMPILER for name in "gcc g++ cc c++ clang clang++ tcc javac kotlinc scalac".split()
}
NOT_REVIEWED.update(
    {
        name: _BUILD_TOOL
        for name in """ninja meson scons bazel bazelisk buck2 ant sbt lein webpack vite rollup
            esbuild parcel turbo nx lerna tsup swc babel tox nox sphinx-build jekyll hugo zola rustc
            ld ar ranlib strip objcopy as nasm ldd""".split()
    }
)
#: Compiler options that run a program or load code into the compiler (gcc's ``-wrapper``
#: runs the compiler passes under a program, ``-B`` takes them from a directory, ``-specs`` can
#: name programs; clang's ``-Xclang -load`` and ``-fpass-plugin`` load shared objects; javac's
#: ``-processor``/``-Xplugin`` run annotation processors and plugins).
_COMPILER_EXEC = (
    "-wrapper",
    "-fplugin",
    "-fpass-plugin",
    "-B",
    "-specs",
    "--specs",
    "-Xclang",
    "-processor",
    "-processorpath",
    "--processor-path",
    "-Xplugin",
    "-J",
)


def compiler_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    for word in call.words[1:]:
        if word.startswith(_COMPILER_EXEC):
            found.add(D, "compiler.exec-option", f"{call.words[0]} {word} runs or loads other code")
            return


SPECS.update(
    {
        name: Spec(
            L if kind == _COMPILER else M,
            operands=("read",),
            flags=None,
            check=compiler_check if kind == _COMPILER else None,
            examples=(("gcc -wrapper sh,-c,id x.c", D, "compiler.exec-option"),)
            if name == "gcc"
            else (),
        )
        for name, kind in NOT_REVIEWED.items()
    }
)
