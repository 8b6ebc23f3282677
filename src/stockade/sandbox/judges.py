"""Judges: does a file the jail created make a host program run code?

The post-run guard (``stockade.sandbox.guard``) asks the judge named in the protected-names
table (``stockade.vocabulary.PROTECTED_NAMES``) about every file a command created or changed
at a protected name. A judge returns the reason the host would run something, or None for
ordinary data. What cannot be read or parsed is judged exec-capable (fail closed).

Reviewers: the tables at the top are the policy; each entry says what runs it.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from stockade.sandbox import gitconfig
from stockade.vocabulary import (
    ANYTHING,
    CLAUDE_SETTINGS,
    GEMINI_SETTINGS,
    GIT_CONFIG,
    GIT_HOOKS,
    GITMODULES,
    HARMLESS,
    IDEA,
    MCP_JSON,
    PYTHON_SITE,
    VSCODE,
)

# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------

#: Hook names git runs (githooks(5)); anything else in a hooks directory (``*.sample``, husky's
#: helpers) is inert.
GIT_HOOK_NAMES: Final = frozenset(
    {
        "applypatch-msg",
        "pre-applypatch",
        "post-applypatch",
        "pre-commit",
        "pre-merge-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-rebase",
        "post-checkout",
        "post-merge",
        "pre-push",
        "pre-receive",
        "update",
        "proc-receive",
        "post-receive",
        "post-update",
        "reference-transaction",
        "push-to-checkout",
        "pre-auto-gc",
        "post-rewrite",
        "sendemail-validate",
        "fsmonitor-watchman",
        "p4-changelist",
        "p4-prepare-changelist",
        "p4-post-changelist",
        "p4-pre-submit",
        "post-index-change",
    }
)

#: Claude Code settings that run commands or loosen what it asks before running them.
CLAUDE_EXEC_KEYS: Final = frozenset(
    {
        "hooks",
        "statusLine",
        "apiKeyHelper",
        "awsAuthRefresh",
        "awsCredentialExport",
        "otelHeadersHelper",
        "env",
        "mcpServers",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
    }
)
#: Claude Code permission settings that loosen (deny rules only tighten).
CLAUDE_LOOSENING_PERMISSIONS: Final = frozenset({"allow", "additionalDirectories", "defaultMode"})
#: Gemini CLI settings (old flat and new nested names) that run commands or auto-approve them.
GEMINI_EXEC_KEYS: Final = frozenset(
    {
        "mcpServers",
        "toolDiscoveryCommand",
        "toolCallCommand",
        "discoveryCommand",
        "callCommand",
        "hooks",
        "autoAccept",
    }
)
#: VS Code setting names (any dot-separated segment) that name a program, its arguments or
#: its environment: extensions run them when the folder opens.
VSCODE_EXEC_SEGMENT: Final = re.compile(
    r"(?i)^(\w*path|paths|\w*executable|\w*command|commands|cmd|\w*shell|shellargs|"
    r"\w*interpreter\w*|runtime\w*|binary|wrapper|profiles|env|args|alternatetools)$"
)
#: JetBrains: file watchers run commands on save, startup tasks when the project opens.
IDEA_EXEC_FILES: Final = frozenset({"watcherTasks.xml"})
IDEA_EXEC_MARKS: Final = ("projectstartup", "startuptasks")
#: Python runs these from a site-packages directory at every interpreter start.
PYTHON_SITE_EXEC: Final = re.compile(r"(\.pth|^(usercustomize|sitecustomize)\.pyc?)$")

MAX_JUDGED_BYTES: Final = 1 << 20  # a bigger config file is judged exec-capable unread

Verdict = str | None  # the reason the host would run it, or None


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------


class Unreadable(Exception):
    """The file cannot be judged: treat it as exec-capable."""


def read_text(path: Path) -> str:
    """What a host tool would read at ``path`` (symlinks followed), refusing FIFOs, devices
    and oversized files without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise Unreadable(str(error)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        if info.st_size > MAX_JUDGED_BYTES:
            raise Unreadable(f"larger than {MAX_JUDGED_BYTES} bytes")
        data = os.read(fd, MAX_JUDGED_BYTES + 1)
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def load_json(path: Path) -> Any:
    """JSON or JSONC (comments, trailing commas - what VS Code and the agents accept)."""
    text = read_text(path)
    try:
        return json.loads(_strip_jsonc(text))
    except ValueError as error:
        raise Unreadable(f"not JSON: {error}") from None


def _strip_jsonc(text: str) -> str:
    out: list[str] = []
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = index + 1
            while end < length and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[index : end + 1])
            index = end + 1
        elif text.startswith("//", index):
            index = text.find("\n", index)
            index = length if index < 0 else index
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = length if end < 0 else end + 2
        else:
            out.append(char)
            index += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


# ---------------------------------------------------------------------------------------------
# File judges: one file the jail created, where a host tool reads it
# ---------------------------------------------------------------------------------------------


def judge_file(judge: str, path: Path) -> Verdict:
    """Why the host would run something because of ``path`` (judged by ``judge``)."""
    if judge == HARMLESS:
        return None
    if judge == ANYTHING:
        return "the host runs whatever is here"
    try:
        return _FILE_JUDGES[judge](path)
    except Unreadable as error:
        return f"cannot be judged ({error}), so it is treated as code"
    except KeyError:
        return "no judge for it, so it is treated as code"


def git_config_exec(
    path: Path, *, sections: tuple[str, ...] | None = None
) -> list[gitconfig.ExecEntry]:
    """The exec-capable entries of a git config file (raises Unreadable)."""
    return gitconfig.exec_entries(gitconfig.parse(read_text(path)), sections=sections)


def _git_config(path: Path) -> Verdict:
    found = git_config_exec(path)
    return _entries_reason(found)


def _gitmodules(path: Path) -> Verdict:
    return _entries_reason(git_config_exec(path, sections=("submodule",)))


def _entries_reason(found: list[gitconfig.ExecEntry]) -> Verdict:
    if not found:
        return None
    first = found[0]
    more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
    return f"{first.entry.key}: {first.reason}{more}"


def _git_hook(path: Path) -> Verdict:
    if path.name in GIT_HOOK_NAMES:
        return f"git runs the {path.name} hook"
    return None


def _mcp_json(path: Path) -> Verdict:
    return _mcp_servers(load_json(path))


def _mcp_servers(document: Any) -> Verdict:
    """Local MCP servers (those with a command) start as programs when the agent starts."""
    if not isinstance(document, dict):
        return None
    for key in ("mcpServers", "servers", "mcp_servers"):
        servers = document.get(key)
        if isinstance(servers, dict):
            for name, server in servers.items():
                if isinstance(server, dict) and server.get("command"):
                    return f"starts the MCP server {name!r} ({server['command']})"
    return None


def _claude_settings(path: Path) -> Verdict:
    document = load_json(path)
    if not isinstance(document, dict):
        return None
    for key in sorted(CLAUDE_EXEC_KEYS & set(document)):
        if document[key]:
            return f"Claude Code setting {key!r} runs commands or enables servers"
    permissions = document.get("permissions")
    if isinstance(permissions, dict):
        loosening = sorted(CLAUDE_LOOSENING_PERMISSIONS & set(permissions))
        if any(permissions[k] for k in loosening):
            return f"Claude Code permissions.{loosening[0]} lets commands run unasked"
    return None


def _gemini_settings(path: Path) -> Verdict:
    document = load_json(path)
    servers = _mcp_servers(document)
    if servers:
        return servers
    for key in _keys(document):
        if key in GEMINI_EXEC_KEYS:
            return f"Gemini CLI setting {key!r} runs commands"
    return None


def _vscode(path: Path) -> Verdict:
    if path.name == "tasks.json":
        document = load_json(path)
        if any(value == "folderOpen" for key, value in _items(document) if key == "runOn"):
            return "a task that VS Code runs when the folder opens"
        return None
    if path.name == "mcp.json":
        return _mcp_servers(load_json(path))
    if path.name == "settings.json":
        for key in _keys(load_json(path)):
            if key.startswith("terminal.integrated.") or any(
                VSCODE_EXEC_SEGMENT.match(segment) for segment in key.strip("[]").split(".")
            ):
                return f"VS Code setting {key!r} names a program or its environment"
        return None
    return None


def _idea(path: Path) -> Verdict:
    if path.name in IDEA_EXEC_FILES:
        return "JetBrains file watchers run commands on save"
    if path.suffix == ".xml":
        text = read_text(path).lower()
        if any(mark in text for mark in IDEA_EXEC_MARKS):
            return "JetBrains startup tasks run when the project opens"
    return None


def _python_site(path: Path) -> Verdict:
    if PYTHON_SITE_EXEC.search(path.name):
        return "Python runs it at every interpreter start"
    return None


_FILE_JUDGES: Final[dict[str, Callable[[Path], Verdict]]] = {
    GIT_CONFIG: _git_config,
    GITMODULES: _gitmodules,
    GIT_HOOKS: _git_hook,
    MCP_JSON: _mcp_json,
    CLAUDE_SETTINGS: _claude_settings,
    GEMINI_SETTINGS: _gemini_settings,
    VSCODE: _vscode,
    IDEA: _idea,
    PYTHON_SITE: _python_site,
}


def _keys(document: Any) -> list[str]:
    return [key for key, _value in _items(document)]


def _items(document: Any) -> list[tuple[str, Any]]:
    """Every (key, value) of a JSON document, at any depth."""
    found: list[tuple[str, Any]] = []
    stack = [document]
    while stack:
        current = stack.pop()
        if isinstance(current, dict):
            for key, value in current.items():
                found.append((str(key), value))
                stack.append(value)
        elif isinstance(current, list):
            stack.extend(current)
    return found
