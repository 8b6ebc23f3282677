"""Python package managers: pip, uv, poetry, pipx, conda, hatch, pdm, rye, pipenv, twine,
flit. Querying is read-only, installing high (builds run code), publishing destructive; their
``run`` subcommands run a command (classified); ``uv tool run``/``pipx run`` may download it
first (at least high).
"""

from __future__ import annotations

from stockade.risk.flags import flag, read, value
from stockade.risk.model import D, Flag, H, L, M, R, Spec, SubTable
from stockade.risk.nested import REPL
from stockade.risk.wrappers import PACKAGE_SCRIPT, PLAIN_RUNNER, runner

UV_RUN = runner(
    L,
    value("--with", "--with-editable", "--with-requirements", "--python", "-p", "--package"),
    value("--extra", "--group", "--directory", "--project", "--index", "--default-index"),
    value("--index-url", "--extra-index-url", "--python-platform"),
    read("--env-file"),
    flag("--isolated", "--no-sync", "--frozen", "--locked", "--no-project", "--all-packages"),
    flag("--all-extras", "--no-dev", "--dev", "--only-dev", "--active", "--no-active", "-q"),
    flag("--quiet", "-v", "--verbose", "--offline", "--no-cache", "--script", "--no-env-file"),
    flag("--exact", "--no-editable"),
    Flag(("-m", "--module"), takes="module"),
)
UV_TOOL_RUN = runner(
    H,
    value("--from", "--with", "--with-editable", "--with-requirements", "--python", "-p"),
    value("--index", "--index-url", "--extra-index-url"),
    flag("--isolated", "--no-cache", "-q", "-v", "--offline"),
)
PIPX_RUN = runner(
    H,
    value("--spec", "--python", "--pip-args", "--index-url"),
    flag("--no-cache", "--system-site-packages", "-q", "-v", "--verbose", "--quiet"),
)
CONDA_RUN = runner(
    L,
    value("-n", "--name", "-p", "--prefix", "--cwd"),
    flag("--no-capture-output", "--live-stream", "-v"),
)

_PIP: SubTable = {
    "": R,
    "install": Spec(H, "subcommand.table", flags=(flag("--dry-run", tier=R),)),
    "uninstall": H,
    "download": H,
    "wheel": H,
    "list": R,
    "show": R,
    "freeze": R,
    "check": R,
    "help": R,
    "search": R,
    "index": R,
    "inspect": R,
    "debug": R,
    "hash": R,
    "completion": R,
    "config": {"": R, "list": R, "get": R, "debug": R, "set": M, "unset": M, "edit": M},
    "cache": {"": R, "dir": R, "info": R, "list": R, "remove": M, "purge": M},
}

_UV: SubTable = {
    "": R,
    "run": UV_RUN,
    "sync": H,
    "lock": M,
    "add": H,
    "remove": M,
    "tree": R,
    "venv": L,
    "init": L,
    "build": M,
    "publish": Spec(D, "subcommand.table", flags=(flag("--dry-run", tier=L),)),
    "export": L,
    "format": M,
    "help": R,
    "version": R,
    "pip": {**_PIP, "compile": M, "sync": H, "tree": R},
    "tool": {
        "run": UV_TOOL_RUN,
        "install": H,
        "uninstall": H,
        "upgrade": H,
        "list": R,
        "dir": R,
        "update-shell": H,
    },
    "python": {
        "list": R,
        "find": R,
        "dir": R,
        "install": H,
        "uninstall": H,
        "pin": L,
        "upgrade": H,
    },
    "cache": {"dir": R, "clean": M, "prune": M, "size": R},
    "self": {"version": R, "update": H},
    "generate-shell-completion": R,
}

_POETRY: SubTable = {
    "": R,
    "install": H,
    "add": H,
    "remove": M,
    "update": H,
    "lock": M,
    "sync": H,
    "run": PLAIN_RUNNER,
    "shell": REPL,
    "show": R,
    "check": R,
    "version": R,
    "build": M,
    "publish": D,
    "new": L,
    "init": L,
    "export": L,
    "search": R,
    "about": R,
    "list": R,
    "help": R,
    "env": {"info": R, "list": R, "use": M, "remove": M, "activate": R},
    "config": {"": R, "--list": R},
    "source": {"add": M, "remove": M, "show": R},
    "cache": {"list": R, "clear": M},
    "self": {"show": R, "update": H, "add": H, "install": H},
    "debug": {"info": R, "resolve": R},
    "python": {"list": R, "install": H, "remove": M},
}

_PIPX: SubTable = {
    "": R,
    "list": R,
    "environment": R,
    "run": PIPX_RUN,
    "install": H,
    "uninstall": H,
    "upgrade": H,
    "upgrade-all": H,
    "reinstall": H,
    "reinstall-all": H,
    "inject": H,
    "uninject": M,
    "ensurepath": H,
    "completions": R,
}

_CONDA: SubTable = {
    "": R,
    "list": R,
    "info": R,
    "search": R,
    "config": {"": R, "--show": R, "*": M},
    "env": {"list": R, "export": R, "create": H, "remove": H, "update": H},
    "install": H,
    "create": H,
    "update": H,
    "upgrade": H,
    "remove": H,
    "uninstall": H,
    "clean": M,
    "run": CONDA_RUN,
    "activate": L,
    "deactivate": L,
    "init": H,
    "doctor": R,
}

_HATCH: SubTable = {
    "": R,
    "*": PACKAGE_SCRIPT,
    "run": PLAIN_RUNNER,
    "build": M,
    "publish": D,
    "test": L,
    "fmt": M,
    "version": R,
    "env": {"show": R, "*": M},
    "shell": REPL,
    "new": L,
    "clean": M,
    "status": R,
    "project": R,
    "dep": R,
    "config": {"show": R, "*": M},
    "python": {"show": R, "*": H},
}

_PUBLISHER: SubTable = {"": R, "check": R, "upload": D, "register": D}

_RUN_ONLY: SubTable = {"": R, "run": PLAIN_RUNNER, "*": H}


SPECS: dict[str, Spec] = {
    "pip": Spec(
        R,
        subcommands=_PIP,
        flags=(
            value("--python", "--proxy", "--retries", "--timeout", "--cache-dir"),
            Flag(("--log",), takes="write"),
        ),
        examples=(("pip list", R), ("pip install requests", H), ("pip install --dry-run x", R)),
    ),
    "uv": Spec(
        R,
        subcommands=_UV,
        flags=(
            value("--directory", "--project", "--python", "-p", "--cache-dir", "--color"),
            read("--config-file"),
        ),
        examples=(
            ("uv run pytest", L),
            ("uv run -m pytest", L),
            ("uv run script.py", M),
            ("uv run --unknown-flag pytest", D, "wrapper.unknown-option"),
            ("uv tool run ruff check", H),
            ("uv sync", H),
        ),
    ),
    "poetry": Spec(
        R,
        subcommands=_POETRY,
        flags=(value("-C", "--directory", "-P", "--project"),),
        examples=(("poetry run pytest", L), ("poetry install", H)),
    ),
    "pipx": Spec(R, subcommands=_PIPX, examples=(("pipx run black .", H),)),
    "conda": Spec(
        R,
        subcommands=_CONDA,
        flags=(value("-n", "--name", "-p", "--prefix"),),
        examples=(("conda run -n env pytest", L),),
    ),
    "hatch": Spec(R, subcommands=_HATCH, examples=(("hatch run test", L),)),
    "pdm": Spec(
        R,
        subcommands={
            **_RUN_ONLY,
            "install": H,
            "add": H,
            "sync": H,
            "lock": M,
            "build": M,
            "publish": D,
            "list": R,
            "show": R,
        },
        examples=(("pdm run pytest", L),),
    ),
    "rye": Spec(
        R,
        subcommands={
            **_RUN_ONLY,
            "sync": H,
            "add": H,
            "build": M,
            "publish": D,
            "test": L,
            "lint": R,
            "fmt": M,
        },
    ),
    "pipenv": Spec(
        R,
        subcommands={
            **_RUN_ONLY,
            "install": H,
            "sync": H,
            "lock": M,
            "graph": R,
            "shell": REPL,
            "check": R,
            "--venv": R,
            "--where": R,
        },
        examples=(("pipenv run pytest", L),),
    ),
    "twine": Spec(R, subcommands=_PUBLISHER, examples=(("twine upload dist/*", D),)),
    "flit": Spec(R, subcommands={"": R, "build": M, "publish": D, "install": H}),
}
#: mamba and micromamba are conda's faster reimplementations (the same command line).
SPECS["mamba"] = SPECS["conda"]
SPECS["micromamba"] = SPECS["conda"]
