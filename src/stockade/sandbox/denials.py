"""Explaining denials: when the sandbox stopped a write or a read, say which path, why, and
what would allow it - instead of leaving the agent with the kernel's "Read-only file system".

No tracing: the command's own error messages are matched (coreutils, shells, git, Python,
Node, cargo and Rust, Go, Java all print the path next to the errno text) and each path is
checked against the policy. Only what the policy explains is reported: a permission the host
itself refuses (a read-only project, a root-owned file) is the host's business, not ours.

``Explainer`` is fed output incrementally; ``StderrTee`` relays a streamed command's stderr to
the terminal unchanged (through a pty when stderr is one, so tools keep their colours and
progress bars) and prints each explanation right after the line it explains.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import select
import sys
import termios
import threading
from collections import deque
from pathlib import Path
from typing import IO, Final, NamedTuple

from stockade.sandbox.policy import (
    KERNEL_FILESYSTEMS,
    SandboxPolicy,
    canonical,
    innermost_root,
    is_within,
)

# ---------------------------------------------------------------------------------------------
# Tables: what the errors look like
# ---------------------------------------------------------------------------------------------

#: errno texts as tools print them (strerror, Node/Go/Java/Rust spellings), by errno name.
ERROR_TEXTS: Final[dict[str, tuple[str, ...]]] = {
    "EROFS": ("read-only file system", "erofs", "os error 30", "errno 30"),
    "EACCES": ("permission denied", "eacces", "os error 13", "errno 13", "accessdeniedexception"),
    "EPERM": ("operation not permitted", "eperm", "os error 1)", "errno 1]"),
    "EBUSY": ("device or resource busy", "ebusy", "os error 16", "errno 16"),
    "ENOENT": ("no such file or directory", "enoent", "os error 2)", "errno 2]", "filenotfound"),
}
#: A path as tools quote it: 'x', ‘x’, "x", `x`, or a bare token with a slash or a dot start.
QUOTED: Final = re.compile(r"""'([^'\n]+)'|‘([^’\n]+)’|"([^"\n]+)"|`([^`\n]+)`""")
BARE: Final = re.compile(r"(?<![\w/.-])((?:/|\./|\.\./|\.[\w-]+/|\w[\w.-]*/)[^\s:,;'\"`()\[\]]*)")
CONTEXT_LINES: Final = 6  # cargo prints the path a few lines above "Caused by: ... os error"
MAX_EXPLAINED: Final = 8  # per command; then one line says how many more
STOP_CHECK_SECONDS: Final = 0.2  # how often the relay looks whether the command has ended
DRAIN_SECONDS: Final = 0.05  # after it ended: output still arriving within this is relayed


class Denial(NamedTuple):
    path: Path
    reason: str
    remedy: str

    def line(self) -> str:
        return f"stockade: sandbox denied {self.path}: {self.reason} - {self.remedy}"


class Explainer:
    """Matches error lines against ``policy``; each (path, reason) is explained once."""

    def __init__(self, policy: SandboxPolicy) -> None:
        self.policy = policy
        self.denials: list[Denial] = []
        self.unexplained = 0
        self._seen: set[tuple[Path, str]] = set()
        self._partial = b""
        self._recent: deque[list[str]] = deque(maxlen=CONTEXT_LINES)

    def feed(self, chunk: bytes) -> list[str]:
        """New explanation lines for the complete lines in ``chunk``."""
        data = self._partial + chunk
        *complete, self._partial = data.split(b"\n")
        lines: list[str] = []
        for raw in complete:
            lines += self._line(raw.decode("utf-8", errors="replace"))
        return lines

    def flush(self) -> list[str]:
        """Explanations for the last line (no newline), and the count of those left out."""
        partial, self._partial = self._partial, b""
        lines = self._line(partial.decode("utf-8", errors="replace")) if partial else []
        if self.unexplained:
            more = self.unexplained
            self.unexplained = 0
            lines.append(f"stockade: ... and {more} more paths denied by the sandbox")
        return lines

    def explain_text(self, text: str) -> list[str]:
        lines = self.feed(text.encode("utf-8", errors="replace"))
        return lines + self.flush()

    def _line(self, line: str) -> list[str]:
        lowered = line.lower()
        errors = [name for name, texts in ERROR_TEXTS.items() if any(t in lowered for t in texts)]
        candidates = _paths(line)
        if not errors:
            if candidates:
                self._recent.append(candidates)
            return []
        if not candidates and self._recent:
            candidates = self._recent[-1]
        self._recent.clear()
        denial = None
        for candidate in _nearest_first(line, candidates, errors):
            denial = self._classify(candidate, errors)
            if denial is not None:
                break
        if denial is None or (denial.path, denial.reason) in self._seen:
            return []
        self._seen.add((denial.path, denial.reason))
        if len(self.denials) >= MAX_EXPLAINED:
            self.unexplained += 1
            return []
        self.denials.append(denial)
        return [denial.line()]

    def _classify(self, shown: str, errors: list[str]) -> Denial | None:
        policy = self.policy
        path = Path(os.path.normpath(policy.cwd / os.path.expanduser(shown)))
        mask = self._mask_of(path)
        if mask is not None:
            return Denial(
                path,
                f"masked ({mask} is a credential store, hidden from every command)",
                "to expose part of it, add that path to [sandbox] read_allow_within_deny in "
                "your own settings",
            )
        if errors == ["ENOENT"]:
            return None  # a missing file is only the sandbox's doing inside a mask
        real = canonical(path)
        protection = (
            policy.protection_of(real) if any(is_within(real, r) for r in policy.writable) else None
        )
        if protection is not None:
            if policy.write_deny_within_allow and any(
                is_within(real, p) for p in policy.write_deny_within_allow
            ):
                remedy = "remove it from [sandbox] write_deny_within_allow to allow it"
            else:
                remedy = "protected: cannot be allowed"
            return Denial(real, f"protected ({protection.threat})", remedy)
        pinned = self._pinned(real)
        if pinned is not None and "EBUSY" in errors:
            return Denial(
                real,
                f"protected (it holds the protected path {pinned} and cannot be moved or removed)",
                "protected: cannot be allowed",
            )
        if any(is_within(real, root) for root in policy.writable):
            return None  # inside a writable root: the host's own permissions said no
        for kernel in KERNEL_FILESYSTEMS:
            if is_within(real, kernel):
                return Denial(
                    real, "a kernel interface (read-only in every jail)", "cannot be allowed"
                )
        for store in policy.stores:
            if is_within(real, store):
                preset = "rust" if store == policy.cargo_home else "go"
                return Denial(
                    real,
                    "read-only store (the host builds from it, so a jail never writes it)",
                    f'[sandbox] toolchains = ["{preset}"] gives the jail a cache of its own',
                )
        if "EROFS" not in errors and not _host_could_write(real):
            return None  # the host would refuse it too
        directory = real if real.is_dir() else _existing_parent(real)
        return Denial(
            real,
            "outside the writable roots",
            f"fix: --writable {directory} (or [sandbox] writable_roots in the settings)",
        )

    def _mask_of(self, path: Path) -> Path | None:
        allowed = self.policy.read_allow_within_deny
        real = canonical(path)
        hidden = [m.path for m in self.policy.masked]
        hidden += [host for host, _copy in self.policy.substitutes]  # masked where not bound
        for mask in hidden:
            inside = is_within(path, mask) or is_within(real, mask)
            if inside and not any(is_within(path, a) for a in allowed):
                return mask
        return None

    def _pinned(self, path: Path) -> Path | None:
        """A directory between a writable root and a protected path (bound in place)."""
        for item in self.policy.protected:
            root = innermost_root(item.path, self.policy.writable, strictly=True)
            if (
                root is not None
                and path != root
                and is_within(item.path, path)
                and is_within(path, root)
            ):
                return item.path
        return None


def _paths(line: str) -> list[str]:
    found = ["".join(groups) for groups in QUOTED.findall(line)]
    unquoted = QUOTED.sub(" ", line)
    found += [m.rstrip(".") for m in BARE.findall(unquoted)]
    return [p for p in found if p and ("/" in p or p.startswith("."))]


def _nearest_first(line: str, candidates: list[str], errors: list[str]) -> list[str]:
    """Candidates ordered by distance from the errno text (the program name comes first on
    the line and is rarely the path meant)."""
    lowered = line.lower()
    positions = [lowered.find(t) for name in errors for t in ERROR_TEXTS[name] if t in lowered]
    anchor = min(positions) if positions else len(line)

    def distance(candidate: str) -> int:
        where = line.rfind(candidate)
        return abs(anchor - (where + len(candidate))) if where >= 0 else len(line)

    return sorted(dict.fromkeys(candidates), key=distance)


def _existing_parent(path: Path) -> Path:
    current = path.parent
    while not current.exists() and current != current.parent:
        current = current.parent
    return current


def _host_could_write(path: Path) -> bool:
    target = path if path.exists() else _existing_parent(path)
    return os.access(target, os.W_OK)


# ---------------------------------------------------------------------------------------------
# Streamed runs: relay stderr, explain as it passes
# ---------------------------------------------------------------------------------------------


class StderrTee:
    """The command's stderr for a streamed run: a pty when our stderr is a terminal (tools
    keep colours and progress bars), else a pipe. A thread copies every chunk to our stderr
    at once and adds the explanation lines after the lines they explain."""

    def __init__(self, explainer: Explainer, sink: IO[bytes] | None = None) -> None:
        self.explainer = explainer
        self.sink = sink if sink is not None else sys.stderr.buffer
        self.notices: list[str] = []
        target = self.sink.fileno() if hasattr(self.sink, "fileno") else -1
        if target >= 0 and os.isatty(target):
            self._read, self.command_end = os.openpty()
            _mirror_terminal(target, self.command_end)
        else:
            self._read, self.command_end = os.pipe()
        self._thread = threading.Thread(target=self._relay, name="stockade-stderr", daemon=True)
        self._stopping = threading.Event()
        self._writing = threading.Lock()

    def start(self) -> None:
        """Call after the command was spawned: our copy of its end is closed here."""
        os.close(self.command_end)
        self.command_end = -1
        self._thread.start()

    def note(self, line: str) -> None:
        """Print a stockade line now (a guard finding while the command runs)."""
        self._write(f"{line}\n".encode())

    def finish(self) -> None:
        """After the command exited: drain what is left (not waiting for descendants that
        keep the stream open), then explain the last partial line."""
        self._stopping.set()
        self._thread.join()
        for line in self.explainer.flush():
            self._write(f"{line}\n".encode())
        with contextlib.suppress(OSError):
            os.close(self._read)
        if self.command_end >= 0:
            os.close(self.command_end)

    def _relay(self) -> None:
        while True:
            # blocks until output arrives (never delays it); the timeout only notices the end
            timeout = DRAIN_SECONDS if self._stopping.is_set() else STOP_CHECK_SECONDS
            ready, _, _ = select.select([self._read], [], [], timeout)
            if not ready:
                if self._stopping.is_set():
                    return
                continue
            try:
                chunk = os.read(self._read, 65536)
            except OSError:  # EIO: every slave end of the pty is closed
                return
            if not chunk:
                return
            # line by line: each explanation right after the line it explains
            rest = chunk
            while (end := rest.find(b"\n")) >= 0:
                line, rest = rest[: end + 1], rest[end + 1 :]
                self._write(line + self._explain(line))
            if rest:
                self._write(rest)
                self.explainer.feed(rest)

    def _explain(self, data: bytes) -> bytes:
        return b"".join(f"{line}\n".encode() for line in self.explainer.feed(data))

    def _write(self, data: bytes) -> None:
        with self._writing, contextlib.suppress(OSError, ValueError):
            self.sink.write(data)
            self.sink.flush()


def _mirror_terminal(terminal: int, slave: int) -> None:
    """The pty reports our terminal's size, and passes newlines through untranslated (our
    terminal translates them)."""
    with contextlib.suppress(OSError):
        size = fcntl.ioctl(terminal, termios.TIOCGWINSZ, b"\0" * 8)
        fcntl.ioctl(slave, termios.TIOCSWINSZ, size)
    with contextlib.suppress(termios.error):
        attributes = termios.tcgetattr(slave)
        attributes[1] &= ~termios.OPOST
        termios.tcsetattr(slave, termios.TCSANOW, attributes)
