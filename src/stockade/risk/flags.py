"""Short spellings for the flags in program specs: ``value("-n", "--lines")`` is
``Flag(("-n", "--lines"), takes="value")``. Each call makes a new Flag, so two programs share
one only where a module passes the same object to both on purpose (a check that serves them
finds it by identity: ``awk``'s ``-f`` in gawk, mawk and nawk); a check shared by specs that
each have their own Flag must look for the option by name. No two programs share a whole
option set (a test checks that).

A reviewed option set lists every option that takes a value (with what the value is) and every
option that changes the tier; an option it does not list is taken to be a plain flag.
"""

from __future__ import annotations

from stockade.risk.model import Flag
from stockade.tiers import Tier


def flag(*names: str, tier: Tier | None = None, rule: str | None = None, why: str = "") -> Flag:
    """An option without a value (``tier`` as in :class:`~stockade.risk.model.Flag`)."""
    return Flag(names, tier, rule, None, why)


def value(*names: str) -> Flag:
    """Options whose value is a plain value (a count, a name, a format)."""
    return Flag(names, takes="value")


def optional(*names: str) -> Flag:
    """Options with an optional value glued on (``--color[=WHEN]``, ``-i[SUFFIX]``)."""
    return Flag(names, takes="optional")


def read(*names: str, tier: Tier | None = None, rule: str | None = None, why: str = "") -> Flag:
    """Options whose value is a file the program reads."""
    return Flag(names, tier, rule, "read", why)


def write(*names: str) -> Flag:
    """Options whose value is a file the program writes."""
    return Flag(names, takes="write")


def program(*names: str) -> Flag:
    """Options whose value is a program the program runs (classified as a command)."""
    return Flag(names, takes="program")


def command(*names: str) -> Flag:
    """Options whose value is shell code the program runs (parsed and classified)."""
    return Flag(names, takes="command")
