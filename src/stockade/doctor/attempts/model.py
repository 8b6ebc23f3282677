"""The types of the escape battery's table, and the small constructors its rows use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: The attempt classes, in report order, with what each one proves.
CLASSES: Final[dict[str, str]] = {
    "filesystem": "writes outside the writable roots",
    "protected": "protected paths stay read-only inside writable roots",
    "secrets": "masked credential stores and root-only files stay unreadable",
    "kernel": "host kernel interfaces (/proc/sys, sysrq, cgroups, /sys) are out of reach",
    "processes": "host processes are invisible and cannot be signalled or traced",
    "persistence": "no process outlives the run",
    "network-deny": "network deny: nothing leaves the jail",
    "network-allowlist": "allowlist: only allow-listed hosts, only through the proxy",
    "environment": "secrets in the launcher's environment do not reach the command",
    "stockade-state": "stockade's own config, data, cache and runtime state stay read-only",
    "seccomp": "syscalls the seccomp filter denies really fail",
    "setuid": "no setuid/setgid files, file capabilities or device nodes",
    "metadata": "no mode, time or xattr changes outside the roots or on protected files",
    "terminals": "other terminals and consoles are out of reach",
    "planted-code": "nothing the host runs later (agents, editors, git, cargo) can be planted",
}

SCENARIOS: Final[dict[str, str]] = {
    "confined": "network deny; project, a second root and ~/.cache, ~/.config, ~/.local "
    "writable (parents of stockade's own state)",
    "allowlist": "network allowlist through stockade's proxy; only the project writable",
}


@dataclass(frozen=True)
class Judge:
    """One host-side check: ``kind`` names a function in ``judges.py``."""

    kind: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Attempt:
    name: str
    klass: str
    does: str
    steps: tuple[tuple[str, ...], ...]
    judge: tuple[Judge, ...]
    scenario: str = "confined"
    phase: str = "now"  # now | hold (inspected while the jail waits) | last (just before exit)
    needs: tuple[str, ...] = ()
    admitted: str | None = None
    disruptive: bool = False  # changes shared lab state: runs after the others of its phase


def any_of(*judges: Judge) -> tuple[Judge, ...]:
    """The attempt got out if any of these judges says so."""
    return judges


def appeared(path: str) -> Judge:
    return Judge("appeared", (path,))


def changed(path: str) -> Judge:
    return Judge("changed", (path,))


def tree_changed(path: str) -> Judge:
    """The directory tree holds other content than before (names, modes, bytes): what the
    host's tools would see, whatever inodes it has."""
    return Judge("tree-changed", (path,))


def marked(path: str) -> Judge:
    """The file now holds the attempt's own marker: the jail's bytes reached it."""
    return Judge("marked", (path,))


def gone(path: str) -> Judge:
    return Judge("gone", (path,))


def token(token_name: str, where: str = "{x}") -> Judge:
    return Judge("token", (where, token_name))


def hit(kind: str, address: str = "") -> Judge:
    """A host tripwire of ``kind`` (tcp, tcp6, udp, udp6, unix-stream, unix-dgram, abstract)
    on ``address``, made for this attempt; ``{trip}`` is its port, path or name."""
    return Judge("hit", (kind, address))


def held(kind: str, expected: str = "") -> Judge:
    """The jailed process holds an fd at ``{slot}``: ``kind`` is write (open for writing) or
    read (open at all) - the real file or device, not the /dev/null a mask puts there -, anon
    (an anonymous inode named ``expected``), unix (an AF_UNIX socket) or pts (a host
    terminal)."""
    return Judge("held", (kind, expected))
