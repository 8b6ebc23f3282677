"""Every program the classifier knows, by name: the specs of the program modules here and of
:mod:`stockade.risk.nested` (shells, interpreters) and :mod:`stockade.risk.wrappers` (programs
that run other programs). A name in two modules is an error; a name not here is an unknown
program (destructive).

:data:`NOT_REVIEWED` lists, with the reason, the programs that read files whose option sets
have not been reviewed yet (``tests/unit/test_risk_specs.py`` requires every other reader and
searcher to have a reviewed set).
"""

from __future__ import annotations

from types import ModuleType

from stockade.risk import nested, wrappers
from stockade.risk.model import Spec
from stockade.risk.programs import (
    archive,
    awk,
    builtins,
    cloud,
    docker,
    files,
    find,
    git,
    javascript,
    linters,
    python,
    readers,
    remote,
    search,
    sed,
    system,
    toolchains,
)

#: The modules that define specs, in the order they are read.
MODULES: tuple[ModuleType, ...] = (
    builtins,
    nested,
    wrappers,
    readers,
    search,
    files,
    find,
    sed,
    awk,
    archive,
    remote,
    git,
    docker,
    cloud,
    javascript,
    python,
    toolchains,
    linters,
    system,
)


def _collect() -> tuple[dict[str, Spec], dict[str, str]]:
    specs: dict[str, Spec] = {}
    not_reviewed: dict[str, str] = {}
    for module in MODULES:
        for name, spec in module.SPECS.items():
            if name in specs:
                raise ValueError(f"{name!r} is specified in two modules")
            specs[name] = spec
        not_reviewed.update(getattr(module, "NOT_REVIEWED", {}))
    return specs, not_reviewed


#: Program name → its spec.
SPECS, NOT_REVIEWED = _collect()
#: Versioned interpreter names map to the table entry: python3.12 → python, perl5.36 → perl.
VERSIONED = nested.VERSIONED


def known(name: str) -> bool:
    """Is ``name`` a program the tables know (so a function of that name may be shadowing
    it, and both are classified)?"""
    return name in SPECS
