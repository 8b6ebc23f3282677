"""Linters, formatters, type checkers and test runners. Checking is read-only, rewriting files
medium (``--fix``, ``--write``, ``-i``), running the project's tests low. Each tool's own flags
say which: ``black --check`` only reads, ``prettier --write`` rewrites.
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

from stockade.risk.flags import flag, read, value, write
from stockade.risk.model import Flag, H, L, M, R, Spec, SubTable


def _ruff_check() -> Spec:
    return Spec(
        R,
        "subcommand.table",
        operands=("file",),
        flags=(
            flag("--no-fix", tier=R),
            flag("--fix", "--fix-only", "--unsafe-fixes", tier=M),
            read("--config"),
            write("-o", "--output-file"),
            value("--select", "--ignore", "--extend-select", "--extend-ignore", "--exclude"),
            value("--extend-exclude", "--per-file-ignores", "--target-version"),
            value("--line-length", "--output-format", "--cache-dir", "--stdin-filename"),
        ),
    )


def _biome(*writers: str) -> Spec:
    return Spec(
        R,
        "subcommand.table",
        operands=("file",),
        flags=(flag(*writers, tier=M), read("--config-path"), value("--max-diagnostics")),
    )


def _formatter(*writers: str) -> Spec:
    """A formatter that only prints unless told to rewrite its files."""
    return Spec(R, operands=("file",), flags=(flag(*writers, tier=M),))


_RUFF: SubTable = {
    "": R,
    "*": _ruff_check(),
    "check": _ruff_check(),
    "format": Spec(
        M,
        "subcommand.table",
        operands=("file",),
        flags=(
            flag("--check", "--diff", tier=R),
            read("--config"),
            value("--line-length", "--target-version", "--exclude", "--stdin-filename"),
        ),
    ),
    "rule": R,
    "config": R,
    "linter": R,
    "version": R,
    "clean": M,
    "server": M,
    "analyze": R,
}

_BIOME: SubTable = {
    "": R,
    "check": _biome("--write", "--apply", "--fix", "--apply-unsafe"),
    "lint": _biome("--write", "--apply", "--fix"),
    "format": _biome("--write"),
    "ci": R,
    "init": L,
    "migrate": M,
    "version": R,
    "explain": R,
    "rage": R,
    "search": R,
}

_GOLANGCI: SubTable = {
    "": R,
    "run": Spec(
        R,
        "subcommand.table",
        operands=("file",),
        flags=(flag("--fix", tier=M), read("-c", "--config"), value("--timeout", "-j")),
    ),
    "linters": R,
    "version": R,
    "help": R,
    "config": R,
    "cache": {"status": R, "clean": M},
    "fmt": M,
    "formatters": R,
}


SPECS: dict[str, Spec] = {
    "ruff": Spec(
        R,
        subcommands=_RUFF,
        flags=(read("--config"),),
        examples=(
            ("ruff check src", R),
            ("ruff check --fix .", M),
            ("ruff format --check .", R),
            ("ruff format .", M),
            ("ruff check -o /etc/x .", H, "write.outside-project"),
        ),
    ),
    "biome": Spec(R, subcommands=_BIOME, examples=(("biome check --write .", M),)),
    "golangci-lint": Spec(
        R,
        subcommands=_GOLANGCI,
        flags=(read("-c", "--config"),),
        examples=(("golangci-lint run --fix", M),),
    ),
    "tsc": Spec(
        M,
        operands=("file",),
        flags=(
            flag("--noEmit", "--showConfig", "--listFilesOnly", tier=R),
            read("-p", "--project"),
            value("--outDir", "--target", "--module", "--lib", "--jsx", "--rootDir"),
        ),
        examples=(("tsc", M), ("tsc --noEmit", R), ("tsc -p tsconfig.json", M)),
    ),
    "eslint": Spec(
        R,
        operands=("file",),
        flags=(
            flag("--fix-dry-run", tier=R),
            flag("--fix", tier=M),
            read("-c", "--config", "--ignore-path", "--resolve-plugins-relative-to"),
            write("-o", "--output-file"),
            value("--ext", "--rule", "--plugin", "--parser", "-f", "--format", "--env"),
            value("--global", "--max-warnings", "--cache-location"),
            Flag(("--rulesdir",), takes="script"),
        ),
        examples=(("eslint src", R), ("eslint --fix src", M), ("eslint --fix-dry-run src", R)),
    ),
    "prettier": Spec(
        R,
        operands=("file",),
        flags=(
            flag("--write", "-w", tier=M),
            read("--config", "--ignore-path"),
            value("--parser", "--plugin", "--print-width", "--tab-width", "--end-of-line"),
        ),
        examples=(("prettier --check .", R), ("prettier --write .", M)),
    ),
    "gofmt": _formatter("-w"),
    "goimports": _formatter("-w"),
    "rustfmt": Spec(M, operands=("file",), flags=(flag("--check", tier=R), read("--config-path"))),
    "clang-format": _formatter("-i"),
    "clang-tidy": _formatter("--fix", "-fix", "--fix-errors", "-fix-errors"),
    "codespell": _formatter("-w", "--write-changes"),
    "typos": _formatter("-w", "--write-changes"),
    "black": Spec(
        M,
        operands=("read",),
        flags=(
            flag("--check", "--diff", tier=R),
            read("--config"),
            value("-l", "--line-length", "-t", "--target-version", "--include", "--exclude"),
            value("--extend-exclude", "--force-exclude", "--stdin-filename", "-W", "--workers"),
            value("--required-version", "--python-cell-magics", "--color"),
            flag("-S", "-C", "-q", "-v", "--fast", "--safe", "--preview", "--quiet"),
        ),
        examples=(("black .", M), ("black --check .", R)),
    ),
    "isort": Spec(
        M,
        operands=("read",),
        flags=(
            flag("--check", "--check-only", "-c", "--diff", tier=R),
            read("--settings-path", "--sp", "--settings-file", "--settings"),
            value("-l", "--line-length", "-p", "--project", "-m", "--multi-line", "--profile"),
            value("-a", "--add-import", "--rm", "--remove-import", "-o", "--thirdparty"),
            value("-b", "--known-standard-library", "-f", "--future", "-s", "--skip"),
            value("--sg", "--skip-glob", "--src", "--src-path", "-j", "--jobs"),
            value("--virtual-env", "--conda-env", "--filter-files"),
        ),
        examples=(("isort .", M), ("isort --check-only .", R)),
    ),
    "autopep8": Spec(
        M,
        operands=("read",),
        flags=(
            flag("--diff", "-d", tier=R),
            read("--global-config"),
            value("--select", "--ignore", "--max-line-length", "-j", "--jobs", "-p"),
            value("--pep8-passes", "--exclude", "--line-range", "--range", "--indent-size"),
            flag("-i", "--in-place", "-r", "--recursive", "-a", "--aggressive", "-v"),
        ),
    ),
    "yapf": Spec(
        M,
        operands=("read",),
        flags=(
            flag("--diff", "-d", tier=R),
            value("--style", "-l", "--lines", "-e", "--exclude", "-p"),
            flag("-i", "--in-place", "-r", "--recursive", "-m", "--print-modified", "-vv"),
        ),
    ),
}

#: Checkers and test runners read (and run) the project's code: their options are not
#: reviewed; an option they do not list is a plain flag and ``--x=VALUE`` values are checked
#: as files read. (Test runners are low: they run the project's own tests.)
NOT_REVIEWED: dict[str, str] = {
    **{
        name: "a checker: reads the project"
        for name in """mypy pyright flake8 pylint pyflakes pycodestyle pydocstyle bandit vulture
            radon pyre staticcheck cppcheck tflint checkov semgrep cloc tokei scc shellcheck
            hadolint yamllint markdownlint actionlint checkmake""".split()
    },
    **{
        name: "a test runner: runs the project's tests"
        for name in "pytest py.test jest vitest mocha ava karma ctest coverage".split()
    },
    **{name: "a formatter: rewrites files" for name in ("autoflake", "pyupgrade")},
    **{name: "key and certificate tools" for name in ("openssl", "ssh-keygen")},
}
_TIERS = {"a checker: reads the project": R, "a formatter: rewrites files": M}
SPECS.update(
    {
        name: Spec(_TIERS.get(kind, L), operands=("read",), flags=None)
        for name, kind in NOT_REVIEWED.items()
    }
)
