"""Showing a change: a unified diff for text files, one line for everything else.

A file is shown as text when both sides are at most ``DIFF_MAX_BYTES``, hold no NUL byte and
decode as UTF-8; otherwise it is named (``Binary files a/x and b/x differ``, git's wording).
Directories, symlinks and permission changes are one line each; a symlink that points out of
the project says so.
"""

from __future__ import annotations

import difflib
import os
import stat
from pathlib import Path
from typing import Final

from stockade.review.scan import ADDED, DELETED, MODIFIED, Change, Entry

DIFF_MAX_BYTES: Final = 1 << 20
NULL: Final = "/dev/null"


def describe(entry: Entry, project: Path) -> str:
    """What ``entry`` is beyond its kind and size: a symlink's target (and whether it points
    out of the project), a permission change ("" when there is nothing to add)."""
    change = entry.change
    if change.type == "symlink" and entry.target is not None:
        outside = points_outside(entry.target, project, change.path)
        return f"-> {entry.target}" + (" (outside the project)" if outside else "")
    if change.kind != MODIFIED or entry.upper is None:
        return ""
    try:
        new_mode = stat.S_IMODE(os.lstat(entry.upper).st_mode)
        old_mode = stat.S_IMODE(os.lstat(project / change.path).st_mode)
    except OSError:
        return ""
    return f"mode {old_mode:04o} -> {new_mode:04o}" if old_mode != new_mode else ""


def points_outside(target: str, project: Path, path: str) -> bool:
    """True when a symlink at ``path`` (relative to ``project``) with ``target`` names a place
    outside the project (judged lexically: it is never followed)."""
    base = (project / path).parent
    resolved = Path(os.path.normpath(base / target))
    return resolved != project and project not in resolved.parents


def unified(entry: Entry, project: Path) -> str:
    """The diff of one change, ready to print (ends with a newline)."""
    change = entry.change
    old = None if change.kind == ADDED else project / change.path
    new = None if change.kind == DELETED else entry.upper
    label_old = NULL if old is None else f"a/{change.path}"
    label_new = NULL if new is None else f"b/{change.path}"
    if change.kind == DELETED and change.type == "directory" and old is not None:
        return f"deleted directory {change.path}\n" + _deleted_tree(old, change.path)
    if change.type != "file" or (old is not None and not old.is_file()):
        extra = describe(entry, project)
        return f"{change.kind} {change.type} {change.path}{'  ' + extra if extra else ''}\n"
    return _file_diff(old, new, label_old, label_new, describe(entry, project), change)


def _deleted_tree(directory: Path, rel: str) -> str:
    """The files a deleted directory held, each as a deletion."""
    parts = []
    for root, dirs, files in os.walk(directory):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            shown = f"{rel}/{path.relative_to(directory)}"
            if path.is_symlink() or not path.is_file():
                parts.append(f"deleted {shown}\n")
                continue
            text = _text(path)
            if text is None:
                parts.append(f"Binary files a/{shown} and {NULL} differ\n")
            else:
                parts.append(_unified(text, "", f"a/{shown}", NULL))
    return "".join(parts)


def _file_diff(
    old: Path | None, new: Path | None, label_old: str, label_new: str, extra: str, change: Change
) -> str:
    old_text, new_text = _text(old), _text(new)
    if old_text is None or new_text is None:
        return f"Binary files {label_old} and {label_new} differ\n"
    body = _unified(old_text, new_text, label_old, label_new)
    if not body:
        return f"{change.kind} {change.path}: {extra or 'no content change'}\n"
    return (f"{extra} {change.path}\n" if extra else "") + body


def _unified(old_text: str, new_text: str, label_old: str, label_new: str) -> str:
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True),
        new_text.splitlines(keepends=True),
        fromfile=label_old,
        tofile=label_new,
    )
    missing_newline = "\n\\ No newline at end of file\n"
    return "".join(line if line.endswith("\n") else line + missing_newline for line in lines)


def _text(path: Path | None) -> str | None:
    """The file's text, "" for none, None when it is binary or too large to show."""
    if path is None:
        return ""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size > DIFF_MAX_BYTES:
            return None
        data = b""
        while chunk := os.read(fd, DIFF_MAX_BYTES + 1 - len(data)):
            data += chunk
            if len(data) > DIFF_MAX_BYTES:
                return None
    finally:
        os.close(fd)
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
