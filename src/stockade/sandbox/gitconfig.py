"""Git config files: which entries make the host's git run a program, and how to remove them.

A repository the jail created (or a submodule's config, or a ``.gitmodules``) is ordinary
project data except for the entries below: each one makes a later, ordinary ``git status``,
``git log`` or ``git commit`` on the host run a command the jail chose. The post-run guard
(``stockade.sandbox.guard``) moves such a file to quarantine and writes it back without them.

The parser follows git's syntax (``config.txt``): ``[section]``, ``[section "subsection"]``,
the legacy ``[section.subsection]``, an entry on the same line as its header, values with
quotes, escapes, comments and backslash continuations. Reviewers: the tables are the policy.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

# ---------------------------------------------------------------------------------------------
# Exec-capable entries
# ---------------------------------------------------------------------------------------------

#: (section, name) -> what git does with it. Matched whatever the subsection.
EXEC_KEYS: Final[dict[tuple[str, str], str]] = {
    ("core", "fsmonitor"): "runs a program on every git status",
    ("core", "hookspath"): "moves the hooks to a directory of the jail's choosing",
    ("core", "pager"): "runs a program for every paged command (git log, git diff)",
    ("core", "editor"): "runs a program for commit messages",
    ("core", "sshcommand"): "runs a program for every ssh fetch and push",
    ("core", "askpass"): "runs a program when git needs a password",
    ("core", "gitproxy"): "runs a program for git:// connections",
    ("core", "alternaterefscommand"): "runs a program on fetch",
    ("core", "worktree"): "points git's work tree (checkouts write there) elsewhere",
    ("sequence", "editor"): "runs a program for git rebase -i",
    ("diff", "external"): "runs a program for every git diff",
    ("diff", "command"): "a diff driver: runs a program for git diff",
    ("diff", "textconv"): "runs a program for git diff and git log -p",
    ("merge", "driver"): "runs a program on merge",
    ("mergetool", "cmd"): "runs a program for git mergetool",
    ("difftool", "cmd"): "runs a program for git difftool",
    ("filter", "clean"): "runs a program on git add and git status",
    ("filter", "smudge"): "runs a program on checkout",
    ("filter", "process"): "runs a long-running program on add, status and checkout",
    ("interactive", "difffilter"): "runs a program for git add -p",
    ("gpg", "program"): "runs a program to sign or verify",
    ("gpg", "defaultkeycommand"): "runs a program to find the signing key",
    ("remote", "uploadpack"): "runs a program on fetch from a local path",
    ("remote", "receivepack"): "runs a program on push to a local path",
    ("uploadpack", "packobjectshook"): "runs a program on fetch",
    ("imap", "tunnel"): "runs a program for git imap-send",
    ("instaweb", "httpd"): "runs a program for git instaweb",
    ("browser", "cmd"): "runs a program for git web--browse",
    ("man", "cmd"): "runs a program for git help",
    ("trailer", "cmd"): "runs a program for commit trailers",
    ("trailer", "command"): "runs a program for commit trailers",
    ("tar", "command"): "runs a program for git archive",
    ("sendemail", "sendmailcmd"): "runs a program for git send-email",
    ("sendemail", "tocmd"): "runs a program for git send-email",
    ("sendemail", "cccmd"): "runs a program for git send-email",
    ("sendemail", "headercmd"): "runs a program for git send-email",
    ("hook", "command"): "a config-defined hook: git runs it",
    ("include", "path"): "includes another file, which can hold any of these",
    ("includeif", "path"): "includes another file, which can hold any of these",
}
#: Sections every entry of which runs a program when its value starts with "!".
BANG_SECTIONS: Final[dict[str, str]] = {
    "alias": "a shell alias: runs a program when the alias is used",
    "submodule": "an update command: runs a program on git submodule update",
}
#: Credential helpers that are git's own programs; any other helper is a program of the jail's.
BUILTIN_CREDENTIAL_HELPERS: Final = frozenset(
    {"", "store", "cache", "osxkeychain", "manager", "manager-core", "libsecret", "wincred"}
)
#: Values git reads as a boolean: for ``pager.<cmd>`` and ``core.fsmonitor`` these run nothing.
BOOLEAN_WORDS: Final = frozenset({"true", "false", "yes", "no", "on", "off", "1", "0", ""})
#: A URL scheme that runs a program (git's protocol.ext.allow defaults to never; a config may
#: allow it, and a .gitmodules URL may carry it).
COMMAND_URL_MARK: Final = "ext::"


class Entry(NamedTuple):
    """One ``name = value`` of a config file. Lines are 0-based; ``on_header`` when the entry
    shares its first line with the section header."""

    section: str  # lower case
    subsection: str | None  # case-sensitive ("" never: None when absent)
    name: str  # lower case
    value: str | None  # None for a bare boolean ``name``
    first_line: int
    last_line: int
    on_header: bool
    header_end: int  # column after "]" when on_header, else 0

    @property
    def key(self) -> str:
        middle = f".{self.subsection}" if self.subsection is not None else ""
        return f"{self.section}{middle}.{self.name}"


class ExecEntry(NamedTuple):
    entry: Entry
    reason: str


def parse(text: str) -> list[Entry]:
    """Every entry of a config file (malformed lines are skipped, as far as they go)."""
    lines = text.split("\n")
    entries: list[Entry] = []
    section, subsection = "", None
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.lstrip()
        start = index
        index += 1
        if not stripped or stripped[0] in "#;":
            continue
        column = len(line) - len(stripped)
        on_header, header_end = False, 0
        if stripped.startswith("["):
            header = _parse_header(line, column)
            if header is None:
                continue
            section, subsection, header_end = header
            rest = line[header_end:].strip()
            if not rest or rest[0] in "#;":
                continue
            tail = line[header_end:]
            on_header, column = True, header_end + len(tail) - len(tail.lstrip())
        name_end = column
        while name_end < len(line) and (line[name_end].isalnum() or line[name_end] == "-"):
            name_end += 1
        name = line[column:name_end].lower()
        if not name or not section:
            continue
        after = line[name_end:].lstrip()
        if not after or after[0] in "#;":
            entries.append(
                Entry(section, subsection, name, None, start, start, on_header, header_end)
            )
            continue
        if after[0] != "=":
            continue
        raw = after[1:]
        while _continues(raw) and index < len(lines):
            raw = raw[:-1] + "\n" + lines[index]
            index += 1
        value = _parse_value(raw)
        entries.append(
            Entry(section, subsection, name, value, start, index - 1, on_header, header_end)
        )
    return entries


def _parse_header(line: str, column: int) -> tuple[str, str | None, int] | None:
    end = column + 1
    while end < len(line) and (line[end].isalnum() or line[end] in "-."):
        end += 1
    name = line[column + 1 : end]
    subsection: str | None = None
    if end < len(line) and line[end] == " ":
        while end < len(line) and line[end] == " ":
            end += 1
        if end >= len(line) or line[end] != '"':
            return None
        end += 1
        chars: list[str] = []
        while end < len(line) and line[end] != '"':
            if line[end] == "\\" and end + 1 < len(line):
                end += 1
            chars.append(line[end])
            end += 1
        subsection = "".join(chars)
        end += 1
    if end >= len(line) or line[end] != "]":
        return None
    if subsection is None and "." in name:
        name, _, legacy = name.partition(".")
        subsection = legacy.lower()
    return name.lower(), subsection, end + 1


def _continues(raw: str) -> bool:
    """True when a value line ends in an unescaped backslash (outside a comment)."""
    quoted = False
    escaped = False
    for char in raw:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char in "#;" and not quoted:
            return False
    return escaped


def _parse_value(raw: str) -> str:
    out: list[str] = []
    quoted = False
    pending_space = ""
    index = 0
    raw = raw.strip(" \t")
    while index < len(raw):
        char = raw[index]
        index += 1
        if char == "\n":
            continue  # a continuation
        if char in "#;" and not quoted:
            break
        if char in " \t" and not quoted:
            pending_space += char
            continue
        if pending_space:
            out.append(pending_space if out else "")
            pending_space = ""
        if char == '"':
            quoted = not quoted
        elif char == "\\" and index < len(raw):
            escaped = raw[index]
            index += 1
            out.append({"n": "\n", "t": "\t", "b": "\b"}.get(escaped, escaped))
        else:
            out.append(char)
    return "".join(out)


def exec_entries(
    entries: Iterable[Entry], *, sections: Iterable[str] | None = None
) -> list[ExecEntry]:
    """The entries that make git run a program (``sections`` limits the search, e.g. to
    ``submodule`` for a .gitmodules file)."""
    wanted = set(sections) if sections is not None else None
    found: list[ExecEntry] = []
    for entry in entries:
        if wanted is not None and entry.section not in wanted:
            continue
        reason = _exec_reason(entry)
        if reason is not None:
            found.append(ExecEntry(entry, reason))
    return found


def _exec_reason(entry: Entry) -> str | None:
    value = (entry.value or "").strip()
    if COMMAND_URL_MARK in value.lower() or (
        entry.subsection is not None and COMMAND_URL_MARK in entry.subsection.lower()
    ):
        return "an ext:: URL: git runs it as a command"
    if entry.section == "protocol" and entry.name == "allow" and value.lower() == "always":
        return "allows every transport, including ext:: commands"
    if entry.section in BANG_SECTIONS and value.startswith("!"):
        return BANG_SECTIONS[entry.section]
    if entry.section == "pager" and value.lower() not in BOOLEAN_WORDS:
        return "runs a program as the pager of a git command"
    if entry.section == "credential" and entry.name == "helper":
        return None if value in BUILTIN_CREDENTIAL_HELPERS else "runs a credential helper"
    if (entry.section, entry.name) == ("core", "fsmonitor") and value.lower() in BOOLEAN_WORDS:
        return None
    return EXEC_KEYS.get((entry.section, entry.name))


def hooks_path(text: str) -> str | None:
    """The last ``core.hooksPath`` a config sets (what git uses), or None."""
    found = None
    for entry in parse(text):
        if (entry.section, entry.name) == ("core", "hookspath") and entry.value:
            found = entry.value
    return found


def without(text: str, entries: Iterable[Entry]) -> str:
    """``text`` with these entries removed (their header stays when they share its line)."""
    lines = text.split("\n")
    drop: set[int] = set()
    for entry in entries:
        if entry.on_header:
            lines[entry.first_line] = lines[entry.first_line][: entry.header_end]
            drop.update(range(entry.first_line + 1, entry.last_line + 1))
        else:
            drop.update(range(entry.first_line, entry.last_line + 1))
    return "\n".join(line for number, line in enumerate(lines) if number not in drop)
