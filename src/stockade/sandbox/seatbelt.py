"""The Seatbelt backend (macOS): an SBPL profile generated from the same SandboxPolicy the Linux
backends enforce, applied by ``/usr/bin/sandbox-exec``.

In a Seatbelt profile the **last matching rule wins** (the order biu, Anthropic's
sandbox-runtime and Codex rely on), so the order below *is* the policy:

1. ``(version 1)``, ``(allow default)``: everything not named below stays as it is outside.
2. Reads: deny ``file-read*`` of each masked path (``subpath`` for directories, ``literal`` for
   files), re-allow each read-allow-within-deny path; directories on the way down to a
   re-allowed path keep their metadata (``realpath`` must ``lstat`` them).
3. Writes: ``(deny file-write* file-link)``; allow the device files every program writes
   (``/dev/null``, ``/dev/tty``, ``/dev/ptmx``, ``/dev/ttys*``, ``/dev/fd/*``) and each writable
   root (the session temp dir is the only one below ``/private/tmp`` or
   ``/private/var/folders``); deny each protected path that exists (one that does not exist
   yet is left to the post-run guard, as on Linux: ``git init`` must work) and each masked or
   re-exposed path inside a writable root (there is no throwaway layer as with bwrap's tmpfs);
   pin the directories between a writable root and a denied path against rename
   (``file-write-unlink``), so ``mv .git x`` cannot move ``.git/hooks`` out of its rule; no
   directory clones (``clonefile`` copies a tree without asking about each file).
4. Services that act outside the sandbox on a confined process's behalf (launchd jobs,
   LaunchServices, Apple Events, preference writes, the keychain, the pasteboard): denied.
   ``(allow default)`` keeps mach lookups, sysctl reads and IPC working for ordinary programs
   (what deny-default profiles must list one by one); these are the lookups that would not be
   confined. Signals and process details reach only the command's own processes.
5. Network: ``(deny network*)`` unless allowed; in allowlist mode only the allow-list proxy's
   port on localhost. Unix sockets follow ``allow_unix_sockets`` (as seccomp's AF_UNIX rule
   does on Linux).

When paths nest (a writable root inside a masked path, a mask inside a re-exposed path), the
rules of each step are emitted in layers so that the deepest path decides, exactly as bwrap's
mount order does. Paths are written with macOS's ``/private`` prefixes (``/tmp``, ``/var`` and
``/etc`` are symlinks there) and as SBPL string literals; a path SBPL cannot spell safely (a
control character, bytes that are not UTF-8) is refused, never approximated.

The environment is set *inside* the sandbox by ``/usr/bin/env -i``, as on Linux.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final, NamedTuple

from stockade.errors import SandboxUnavailable, UsageError
from stockade.net.bridge import proxy_environment
from stockade.net.mode import NetworkMode
from stockade.sandbox.backend import ProcessGroupJail, Stdio, Unavailable, proxy_not_running
from stockade.sandbox.limits import RunLimits
from stockade.sandbox.policy import MaskedPath, ProtectedPath, SandboxPolicy, is_within
from stockade.sandbox.posture import Posture

SANDBOX_EXEC: Final = "/usr/bin/sandbox-exec"  # never from PATH: a planted one would be trusted
ENV_PROGRAM: Final = "/usr/bin/env"
DEFAULT_PATH: Final = "/usr/bin:/bin:/usr/sbin:/sbin"

# ---------------------------------------------------------------------------------------------
# Security tables
# ---------------------------------------------------------------------------------------------

# Top-level names that are symlinks into /private on macOS; Seatbelt matches resolved paths.
PRIVATE_ALIASES: Final[tuple[str, ...]] = ("/tmp", "/var", "/etc")

# Device files a confined program may write, as SBPL filters. Literals are exact; the regex
# entries are a fixed prefix plus digits (terminals, the process's own descriptors).
WRITABLE_DEVICES: Final[tuple[tuple[str, str], ...]] = (
    ("literal", "/dev/null"),
    ("literal", "/dev/tty"),
    ("literal", "/dev/ptmx"),
    ("regex-digits", "/dev/ttys"),  # pseudo-terminals: /dev/ttys000, ...
    ("regex-digits", "/dev/fd/"),  # reopening an fd the process already has (bash's >(...))
)

# Operations through which a confined process would have a system service act outside the
# sandbox for it, each with what it would otherwise allow.
OUTSIDE_ACTIONS: Final[tuple[tuple[str, str], ...]] = (
    ("job-creation", "launchd would start a job (launchctl submit/bootstrap) unconfined"),
    ("lsopen", "LaunchServices would open an application or document unconfined (open(1))"),
    ("appleevent-send", "Apple Events would let osascript make Terminal run a command"),
    ("user-preference-write", "cfprefsd would write ~/Library/Preferences for the caller"),
)

# Mach services a confined process must not reach, each with why. Everything else stays
# reachable under (allow default): ordinary programs need dozens of lookups.
DENIED_SERVICES: Final[tuple[tuple[str, str], ...]] = (
    ("com.apple.coreservices.launchservicesd", "LaunchServices: starts applications"),
    ("com.apple.lsd.open", "LaunchServices: opens documents and applications"),
    ("com.apple.lsd.openurl", "LaunchServices: opens URLs in other applications"),
    ("com.apple.lsd.modifydb", "LaunchServices: registers URL and file handlers"),
    ("com.apple.coreservices.appleevents", "Apple Events: scripts other applications"),
    ("com.apple.xpc.smd", "ServiceManagement: registers login items and daemons"),
    ("com.apple.SecurityServer", "the login keychain (securityd): stored passwords"),
    ("com.apple.securityd.xpc", "the data-protection keychain: stored passwords"),
    ("com.apple.pasteboard.1", "the pasteboard: what the user copied"),
    (
        "com.apple.coreservices.uauseractivitypasteboardclient.xpc",
        "the pasteboard's continuity client: what the user copied",
    ),
)

# The macOS DNS resolver's socket: with the network allowed, name lookups go through it even
# when unix sockets are otherwise refused.
DNS_RESOLVER_SOCKET: Final = "/private/var/run/mDNSResponder"

_REGEX_SPECIAL: Final = frozenset("\\.^$|?*+()[]{}")
_CONTROL: Final = re.compile("[\x00-\x1f\x7f]")


# ---------------------------------------------------------------------------------------------
# Spelling paths for SBPL
# ---------------------------------------------------------------------------------------------


def macos_path(path: Path | str) -> str:
    """``path`` as Seatbelt sees it: ``/tmp``, ``/var`` and ``/etc`` under ``/private``."""
    text = os.fspath(path)
    for alias in PRIVATE_ALIASES:
        if text == alias or text.startswith(alias + "/"):
            return "/private" + text
    return text


def sbpl_string(text: str) -> str:
    """``text`` as an SBPL string literal: backslashes and quotes escaped; everything else
    (spaces, parentheses, non-ASCII) is literal inside quotes. Control characters and
    undecodable bytes are refused: no escape for them is documented to survive the parser."""
    bad = _CONTROL.search(text)
    if bad is not None:
        raise UsageError(
            f"the path {text!r} contains a control character ({ord(bad.group()):#04x}), which "
            "a Seatbelt profile cannot name safely",
            fix="rename it, or keep it out of the writable roots and masked paths",
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(
                f"the path {text!r} is not valid UTF-8, which a Seatbelt profile cannot name",
                fix="rename it, or keep it out of the writable roots and masked paths",
            ) from None
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def regex_quote(text: str) -> str:
    """``text`` with every POSIX regex metacharacter escaped, to match itself literally."""
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def _filters(path: str, is_dir: bool, *, deny: bool) -> list[str]:
    """The filters naming ``path``: a file is a ``literal``; a directory a ``subpath`` (itself
    and below), and for denies its ``literal`` too (Codex found ``subpath`` alone let the
    first ``mkdir`` of a missing protected directory through)."""
    quoted = sbpl_string(path)
    if not is_dir:
        return [f"(literal {quoted})"]
    if deny:
        return [f"(literal {quoted})", f"(subpath {quoted})"]
    return [f"(subpath {quoted})"]


def _rule(action: str, operations: str, filters: Sequence[str]) -> list[str]:
    """One rule, one filter per line (nothing when there are no filters)."""
    if not filters:
        return []
    return [f"({action} {operations}", *(f"  {f}" for f in filters[:-1]), f"  {filters[-1]})"]


# ---------------------------------------------------------------------------------------------
# Nesting: the deepest path decides
# ---------------------------------------------------------------------------------------------


class _Entry(NamedTuple):
    path: str  # macOS spelling
    is_dir: bool
    allow: bool


def _contains(outer: _Entry, inner: _Entry) -> bool:
    return outer.path == inner.path or (outer.is_dir and is_within(inner.path, outer.path))


def _layers(entries: Iterable[_Entry], *, allow_first: bool) -> list[list[_Entry]]:
    """Group entries into rules emitted in order, so that with last-match-wins every entry
    overrides the entries of the other kind that contain it (bwrap's "deepest mount wins").

    At the same path the second kind wins (deny over allow for writes, re-allow over mask for
    reads), as in bwrap's rank order. Unnested policies give two layers: the first kind, then
    the second."""
    rank = {allow_first: 0, not allow_first: 1}
    ordered = sorted(set(entries), key=lambda e: (e.path.count("/"), rank[e.allow], e.path))
    level: dict[_Entry, int] = {}
    for index, entry in enumerate(ordered):
        base = rank[entry.allow]
        over = [
            level[c] + 1 for c in ordered[:index] if c.allow != entry.allow and _contains(c, entry)
        ]
        level[entry] = max([base, *over])
    grouped: dict[int, list[_Entry]] = {}
    for entry in sorted(ordered, key=lambda e: e.path):
        grouped.setdefault(level[entry], []).append(entry)
    return [grouped[key] for key in sorted(grouped)]


def _layered_rules(entries: Iterable[_Entry], operations: str, *, allow_first: bool) -> list[str]:
    lines: list[str] = []
    for layer in _layers(entries, allow_first=allow_first):
        allow = layer[0].allow
        filters = [f for e in layer for f in _filters(e.path, e.is_dir, deny=not allow)]
        lines += _rule("allow" if allow else "deny", operations, filters)
    return lines


# ---------------------------------------------------------------------------------------------
# The profile
# ---------------------------------------------------------------------------------------------


def seatbelt_profile(policy: SandboxPolicy) -> str:
    """The SBPL profile that enforces ``policy`` (deterministic: same policy, same text;
    remembered, since a session's commands mostly share one)."""
    return _profile(
        _ProfileInputs(
            writable=policy.writable,
            masked=policy.masked,
            read_allow_within_deny=policy.read_allow_within_deny,
            protected=policy.protected,
            network=policy.network,
            proxy_port=policy.proxy_port,
            allow_unix_sockets=policy.allow_unix_sockets,
        )
    )


class _ProfileInputs(NamedTuple):
    """The parts of a SandboxPolicy a profile depends on (hashable, unlike the policy)."""

    writable: tuple[Path, ...]
    masked: tuple[MaskedPath, ...]
    read_allow_within_deny: tuple[Path, ...]
    protected: tuple[ProtectedPath, ...]
    network: NetworkMode
    proxy_port: int | None
    allow_unix_sockets: bool


@functools.lru_cache(maxsize=16)
def _profile(policy: _ProfileInputs) -> str:
    lines = [
        "(version 1)",
        "; stockade: generated from the sandbox policy; the last matching rule wins",
        "(allow default)",
        "",
        *_read_rules(policy),
        "",
        *_write_rules(policy),
        "",
        *_service_rules(),
        "",
        *_network_rules(policy),
    ]
    return "\n".join(lines) + "\n"


def _ancestors_within(path: str, top: str) -> list[str]:
    """The directories above ``path`` that are ``top`` or below it, deepest first."""
    found = []
    current = path
    while current != "/":
        current = current.rsplit("/", 1)[0] or "/"
        if not is_within(current, top):
            break
        found.append(current)
    return found


def _read_rules(policy: _ProfileInputs) -> list[str]:
    masks = [_Entry(macos_path(m.path), m.is_dir, allow=False) for m in policy.masked]
    # A re-exposed path is named as a subpath whatever it is: for a file that is the file.
    reexposed = [
        _Entry(path, True, allow=True)
        for path in map(macos_path, policy.read_allow_within_deny)
        if any(is_within(path, m.path) for m in masks)
    ]
    lines = ["; reads: masked paths are unreadable; re-exposed paths inside them readable"]
    lines += _layered_rules([*masks, *reexposed], "file-read*", allow_first=False)
    ancestors: set[str] = set()
    for entry in reexposed:
        covers = [m.path for m in masks if m.is_dir and is_within(entry.path, m.path)]
        if covers:
            ancestors.update(_ancestors_within(entry.path, max(covers, key=len)))
    lines += _rule(
        "allow", "file-read-metadata", [f"(literal {sbpl_string(a)})" for a in sorted(ancestors)]
    )
    return lines


def _write_rules(policy: _ProfileInputs) -> list[str]:
    roots = [macos_path(root) for root in policy.writable]
    candidates = [(macos_path(p.path), p.is_dir) for p in policy.protected]
    candidates += [(macos_path(m.path), m.is_dir) for m in policy.masked]
    candidates += [(macos_path(p), True) for p in policy.read_allow_within_deny]
    denied: list[tuple[str, bool, str]] = []  # (path, is_dir, its innermost writable root)
    for path, is_dir in candidates:
        containing = [root for root in roots if is_within(path, root)]
        if containing:  # outside every root it is read-only anyway
            denied.append((path, is_dir, max(containing, key=len)))
    entries = [_Entry(root, True, allow=True) for root in roots]
    entries += [_Entry(path, is_dir, allow=False) for path, is_dir, _root in denied]
    devices = [
        f"(literal {sbpl_string(name)})"
        if kind == "literal"
        else f"(regex {sbpl_string('^' + regex_quote(name) + '[0-9]+$')})"
        for kind, name in WRITABLE_DEVICES
    ]
    pins = {pin for path, _is_dir, root in denied for pin in _ancestors_within(path, root)}

    lines = [
        "; writes: only the writable roots, never their protected paths",
        "(deny file-write* file-link)",
    ]
    lines += _rule("allow", "file-write*", devices)
    lines += _layered_rules(entries, "file-write* file-link", allow_first=True)
    lines += ["; the directories above a protected path cannot be renamed away"]
    lines += _rule(
        "deny", "file-write-unlink", [f"(literal {sbpl_string(p)})" for p in sorted(pins)]
    )
    lines += ["; clonefile(2) copies a whole tree without asking about each file in it"]
    lines += ["(deny file-clone (vnode-type DIRECTORY))"]
    return lines


def _service_rules() -> list[str]:
    lines = ["; services that would act outside the sandbox for a confined process"]
    lines += [f"(deny {operation})" for operation, _why in OUTSIDE_ACTIONS]
    lines += _rule(
        "deny", "mach-lookup", [f"(global-name {sbpl_string(name)})" for name, _ in DENIED_SERVICES]
    )
    lines += [
        "; signals and process details reach only the command's own processes",
        "(deny signal)",
        "(allow signal (target same-sandbox))",
        "(deny process-info*)",
        "(allow process-info* (target same-sandbox))",
    ]
    return lines


def _network_rules(policy: _ProfileInputs) -> list[str]:
    lines = [f"; network: {policy.network.value}"]
    if policy.network is NetworkMode.ALLOW:
        if not policy.allow_unix_sockets:
            lines += [
                "(deny network-outbound (remote unix-socket))",
                "(deny network-bind (local unix-socket))",
                f"(allow network-outbound (remote unix-socket (path-literal "
                f"{sbpl_string(DNS_RESOLVER_SOCKET)})))",
            ]
        return lines
    lines.append("(deny network*)")
    if policy.network is NetworkMode.ALLOWLIST:
        lines.append(f'(allow network-outbound (remote ip "localhost:{_proxy_port(policy)}"))')
    if policy.allow_unix_sockets:
        lines += [
            "(allow network-outbound (remote unix-socket))",
            "(allow network-bind (local unix-socket))",
            "(allow network-inbound (local unix-socket))",
        ]
    return lines


def _proxy_port(policy: SandboxPolicy | _ProfileInputs) -> int:
    if policy.proxy_port is None:
        raise proxy_not_running()
    return int(policy.proxy_port)


# ---------------------------------------------------------------------------------------------
# The backend
# ---------------------------------------------------------------------------------------------


def command_line(
    policy: SandboxPolicy, argv: Sequence[str], *, sandbox_exec: str = SANDBOX_EXEC
) -> list[str]:
    """``sandbox-exec -p PROFILE -- env -i NAME=VALUE ... CMD``: the profile applies before
    env(1) runs, and the environment is set inside."""
    env = dict(policy.env)
    env.setdefault("PATH", DEFAULT_PATH)
    if policy.network is NetworkMode.ALLOWLIST:
        env.update(proxy_environment(_proxy_port(policy)))
    pairs = [f"{name}={value}" for name, value in env.items()]
    return [sandbox_exec, "-p", seatbelt_profile(policy), "--", ENV_PROGRAM, "-i", *pairs, *argv]


class SeatbeltBackend:
    """macOS's kernel sandbox, driven by a profile generated from the policy. No PID or
    network namespace and no syscall filter: the posture says so.

    ``platform`` and ``sandbox_exec`` exist for tests, which drive the backend's launch and
    its refusal on Linux with a stand-in for sandbox-exec."""

    name = "seatbelt"

    def __init__(self, *, platform: str = sys.platform, sandbox_exec: str = SANDBOX_EXEC) -> None:
        self.platform = platform
        self.sandbox_exec = sandbox_exec

    def unavailable(self) -> Unavailable | None:
        if self.platform != "darwin":
            return Unavailable(
                reason=f"the seatbelt backend is macOS-only (this is {self.platform})",
                fix="use --backend auto, bwrap or landlock here; `stockade profile seatbelt` "
                "prints the profile on any system",
            )
        if not os.access(self.sandbox_exec, os.X_OK):
            return Unavailable(
                reason=f"{self.sandbox_exec} is missing or not executable",
                fix="it ships with macOS; check that /usr/bin is intact (SIP)",
            )
        return None

    def posture(self, policy: SandboxPolicy, *, proven: bool) -> Posture:
        network = {
            NetworkMode.DENY: "denied (Seatbelt: loopback too)",
            NetworkMode.ALLOW: "allowed",
            NetworkMode.ALLOWLIST: "allow-list proxy port only",
        }[policy.network]
        gaps = [
            "no PID namespace: the command shares the host's process table (signals and "
            "process details are limited to its own processes)",
            "no private /tmp: /tmp and the per-user temp and cache dirs are not writable; "
            "TMPDIR points at the session's own temp dir",
            "no syscall filter: Seatbelt confines files, network and services, not the "
            "kernel interface",
            "masked paths are unreadable, not empty: their names stay listable",
            "sandbox-exec is deprecated by Apple (still enforced by the kernel)",
        ]
        if policy.network is NetworkMode.DENY:
            gaps.append("network deny also refuses loopback: macOS has no private network")
        if policy.network is NetworkMode.ALLOW:
            gaps.append("network allowed: the command shares the host network")
        if policy.allow_unix_sockets:
            gaps.append("unix sockets allowed: a reachable host socket may be an escape")
        return Posture(
            backend=self.name,
            confined=True,
            proven=proven,
            filesystem=f"writes confined to {len(policy.writable)} roots (Seatbelt)",
            network=network,
            pid_namespace=False,
            env_scrubbed=True,
            masked_paths=len(policy.masked),
            gaps=tuple(gaps),
        )

    def spawn(
        self,
        policy: SandboxPolicy,
        argv: Sequence[str],
        *,
        stdin: Stdio = None,
        stdout: Stdio = None,
        stderr: Stdio = None,
        limits: RunLimits | None = None,
    ) -> ProcessGroupJail:
        missing = self.unavailable()
        if missing is not None:
            raise SandboxUnavailable(missing.reason, fix=missing.fix)
        command = command_line(policy, argv, sandbox_exec=self.sandbox_exec)
        try:
            process = subprocess.Popen(
                command,
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                env={},  # nothing acts on sandbox-exec itself; env(1) sets the command's
                cwd=policy.cwd,
                start_new_session=True,
                preexec_fn=limits.preexec() if limits is not None else None,
            )
        except (OSError, subprocess.SubprocessError) as error:
            raise SandboxUnavailable(
                f"sandbox-exec could not be started: {error}",
                fix="run `stockade doctor` for details",
            ) from None
        return ProcessGroupJail(process)
