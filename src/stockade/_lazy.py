"""Lazy re-exports for package ``__init__`` modules (PEP 562): a name is imported from its
module on first use, so importing a package stays cheap on the per-command path. Submodules
load the same way: ``import stockade; stockade.runner.run(...)`` works without importing
``stockade.runner`` first."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs milliseconds here
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, MutableMapping, Sequence
    from typing import Any


def lazy_exports(
    package: str,
    table: Mapping[str, str],
    namespace: MutableMapping[str, Any],
    names: Sequence[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: ``table`` maps a public name to the
    module that defines it; a loaded value is cached in the package's ``namespace``."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif not name.startswith("_") and name.isidentifier():
            value = _submodule(package, name)
        else:
            value = None
        if value is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(names)

    return __getattr__, __dir__


def _submodule(package: str, name: str) -> Any:
    """``package.name`` imported, or None when there is no such submodule (an error raised
    while importing one that exists propagates: it is a real problem, not a missing name)."""
    full = f"{package}.{name}"
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as error:
        if error.name == full:
            return None
        raise
