"""The post-run guard: code a command planted for the host to run later is moved aside.

Mount protection needs a mount point, and a protected name that does not exist yet has none
(creating one would leave an artifact on the host and break git). So what a command *creates*
at a protected name - a repository from ``git init`` with a ``core.fsmonitor``, an active
hook, a ``.vscode/tasks.json`` that runs on folder open, a ``~/.bashrc`` when the home
directory is writable - is judged when the command ends (and every second while it runs), and
whatever the host would run is moved into quarantine (``stockade.sandbox.quarantine``),
reported in the result, on stderr (one line each) and in the ledger. Git config files and
``.gitmodules`` are written back without the offending entries (the original is kept).

Where protected names exist but cannot be mounted (the Landlock backend), they are copied
before the command and restored after it; whatever changed is kept in quarantine.

Git repositories anywhere below the writable roots (nested clones, submodules, worktrees,
``gitdir:`` and ``commondir`` pointers) are found with ``RepoIndex`` and judged the same way.
A journal in the session directory lets the next stockade start finish the check of a run
whose stockade was killed (SIGKILL) before it could. Journals are slots, written in place
(``write_record``): a command's journal takes a free slot and marks it done at the end.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from stockade.sandbox import gitconfig, judges, quarantine
from stockade.sandbox.policy import (
    GuardedPath,
    ProtectedPath,
    SandboxPolicy,
    above_wildcard,
    is_within,
)
from stockade.sandbox.repo_index import RepoIndex
from stockade.vocabulary import ANYTHING, GIT_CONFIG, GIT_HOOKS, GITMODULES, HARMLESS

if TYPE_CHECKING:
    from stockade.permissions.ledger import Ledger

POLL_SECONDS: Final = 1.0  # how often running commands are re-checked (shallow names only)
CLOCK_MARGIN_NS: Final = 20_000_000  # file timestamps come from a coarse clock
SNAPSHOT_FILE_LIMIT: Final = 2_000  # entries per protected directory copied for restoring
SNAPSHOT_BYTES_LIMIT: Final = 16 << 20  # bytes copied per command, over all protected paths
CREATED_WALK_LIMIT: Final = 10_000  # files judged inside one created directory
GITDIR_DEPTH_LIMIT: Final = 8  # nesting of .git/modules/<a>/modules/<b>/...
_CLOCK_REALTIME_COARSE: Final = getattr(time, "CLOCK_REALTIME_COARSE", 5)


class Finding(NamedTuple):
    """What the guard did about one path. ``action``: ``quarantined`` (moved aside),
    ``cleaned`` (rewritten without what runs code; original in quarantine), ``restored`` (put
    back as it was before the command; the changed one in quarantine), ``unchecked`` (could
    not be judged - say so rather than claim it is clean)."""

    path: Path
    reason: str
    action: str
    record_id: str | None = None

    def line(self) -> str:
        if self.action == "unchecked":
            return f"stockade: could not check {self.path} for planted code: {self.reason}"
        where = ""
        item = self.record_id
        if item is not None:
            where = {
                "quarantined": f"; put it back: stockade quarantine restore {item}",
                "cleaned": f"; the original: stockade quarantine restore {item} --replace",
                "restored": f"; the changed one is in quarantine as {item}",
            }.get(self.action, f"; quarantine item {item}")
        return f"stockade: {self.action} {self.path}: {self.reason}{where}"

    def to_dict(self) -> dict[str, Any]:
        return {**self._asdict(), "path": str(self.path), "line": self.line()}


class GuardPlan(NamedTuple):
    """What one command's guard checks; serialisable for the journal."""

    project: Path
    roots: tuple[Path, ...]
    protected: tuple[ProtectedPath, ...]
    guarded: tuple[GuardedPath, ...]
    skip: tuple[Path, ...]  # masked paths: never walked
    mounted: bool  # protected paths are read-only inside (bwrap, Seatbelt): nothing to restore

    def to_json(self) -> dict[str, Any]:
        return {
            "project": str(self.project),
            "roots": [str(r) for r in self.roots],
            "protected": [
                [str(p.path), p.is_dir, p.judge, p.threat, _str(p.link)] for p in self.protected
            ],
            "guarded": [[str(g.path), g.is_dir, g.judge, g.threat] for g in self.guarded],
            "skip": [str(s) for s in self.skip],
            "mounted": self.mounted,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GuardPlan:
        return cls(
            project=Path(data["project"]),
            roots=tuple(Path(r) for r in data["roots"]),
            protected=tuple(
                ProtectedPath(Path(p), bool(d), j, t, Path(link) if link else None)
                for p, d, j, t, link in data["protected"]
            ),
            guarded=tuple(GuardedPath(Path(p), bool(d), j, t) for p, d, j, t in data["guarded"]),
            skip=tuple(Path(s) for s in data["skip"]),
            mounted=bool(data["mounted"]),
        )


def _str(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def plan_for(policy: SandboxPolicy, *, mounted: bool) -> GuardPlan:
    """What to guard for one command. Without mounts (Landlock) the protected paths are
    snapshotted and restored - except those the kernel keeps read-only anyway (below
    ``write_deny_within_allow``, stockade's own state among them): the jail cannot change
    them, and restoring them would undo what the launcher itself wrote there during the run
    (a freshly cached seccomp filter)."""
    protected = policy.protected
    if not mounted:
        enforced = policy.write_deny_within_allow
        protected = tuple(p for p in protected if not any(is_within(p.path, d) for d in enforced))
    return GuardPlan(
        project=policy.project,
        roots=policy.guarded_roots,
        protected=protected,
        guarded=policy.guarded,
        skip=tuple(m.path for m in policy.masked),
        mounted=mounted,
    )


def coarse_now_ns() -> int:
    """The clock file timestamps are taken from, a little early (it lags by up to a tick)."""
    return time.clock_gettime_ns(_CLOCK_REALTIME_COARSE) - CLOCK_MARGIN_NS


# ---------------------------------------------------------------------------------------------
# Snapshots of protected paths (for backends that cannot make them read-only)
# ---------------------------------------------------------------------------------------------


class _Copy(NamedTuple):
    relative: str
    kind: str  # "file" | "dir" | "link"
    identity: tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns
    stored: str | None  # copy below the snapshot directory, or the link's target
    mode: int


class Snapshot:
    """Copies of the protected paths as they were before a command, to put them back.

    Copies live flat in ``directory`` and are never rewritten: a file whose identity (inode,
    size, mtime, ctime) is the same as in ``reuse`` - the previous command's snapshot - keeps
    that copy, so a session's commands copy only what changed since the last one."""

    def __init__(self, directory: Path, entries: dict[str, list[_Copy]], complete: bool) -> None:
        self.directory = directory
        self.entries = entries
        self.complete = complete

    @classmethod
    def take(
        cls, directory: Path, protected: Sequence[ProtectedPath], reuse: Snapshot | None = None
    ) -> Snapshot:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        budget = [SNAPSHOT_BYTES_LIMIT]
        entries: dict[str, list[_Copy]] = {}
        complete = True
        earlier = reuse.entries if reuse is not None and reuse.directory == directory else {}
        for item in protected:
            known = {c.relative: c for c in earlier.get(str(item.path), [])}
            copies: list[_Copy] = []
            for relative, info in _tree(item.path, SNAPSHOT_FILE_LIMIT):
                same = known.get(relative)
                if same is not None and same.identity == _identity(info):
                    copies.append(same)
                else:
                    copies.append(_copy_one(item.path, relative, info, directory, budget))
            complete &= len(copies) < SNAPSHOT_FILE_LIMIT
            entries[str(item.path)] = copies
        return cls(directory, entries, complete)

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "entries": {k: [list(c) for c in v] for k, v in self.entries.items()},
            "complete": self.complete,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        entries = {
            key: [_Copy(r, k, tuple(i), s, m) for r, k, i, s, m in value]
            for key, value in data["entries"].items()
        }
        return cls(Path(data["directory"]), entries, bool(data["complete"]))

    def restore(self, protected: Sequence[ProtectedPath]) -> list[Finding]:
        """Put back what changed; keep what the command made there in quarantine."""
        findings: list[Finding] = []
        for item in protected:
            before = {c.relative: c for c in self.entries.get(str(item.path), [])}
            now = dict(_tree(item.path, SNAPSHOT_FILE_LIMIT * 2))
            moved: list[str] = []
            for relative in sorted(now, key=lambda r: (r.count("/"), r)):
                if any(relative.startswith(m + "/") for m in moved):
                    continue
                path = _join(item.path, relative)
                copy = before.get(relative)
                if copy is None:
                    moved.append(relative)
                    reason = f"created where it is read-only inside the jail ({item.threat})"
                    findings.append(_move(path, reason))
                elif copy.kind != "dir" and _identity(now[relative]) != copy.identity:
                    findings.append(self._put_back(item, path, copy, changed=True))
            for relative, copy in before.items():
                if relative not in now and copy.kind != "dir":
                    path = _join(item.path, relative)
                    findings.append(self._put_back(item, path, copy, changed=False))
        return findings

    def _put_back(self, item: ProtectedPath, path: Path, copy: _Copy, *, changed: bool) -> Finding:
        how = "changed" if changed else "removed"
        what = f"{how} inside the jail, where it is read-only ({item.threat})"
        record_id = None
        try:
            if changed:
                record_id = quarantine.move_aside(path, what).id
            if copy.kind == "link":
                assert copy.stored is not None
                os.symlink(copy.stored, path)
            elif copy.stored is None:
                return Finding(
                    path,
                    what + "; too large to have been copied, so not restored",
                    "quarantined",
                    record_id,
                )
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(self.directory / copy.stored, path, follow_symlinks=False)
                os.chmod(path, copy.mode)
        except OSError as error:
            return Finding(path, f"{what}; restoring failed: {error}", "unchecked", record_id)
        return Finding(path, what, "restored", record_id)


def _tree(root: Path, limit: int) -> Iterator[tuple[str, os.stat_result]]:
    """``root`` and (for a directory) what is below it, relative, never following links."""
    try:
        info = os.lstat(root)
    except OSError:
        return
    yield "", info
    if not stat.S_ISDIR(info.st_mode):
        return
    count = 0
    stack = [""]
    while stack:
        relative = stack.pop()
        try:
            with os.scandir(_join(root, relative)) as entries:
                children = sorted(entries, key=lambda e: e.name)
        except OSError:
            continue
        for entry in children:
            count += 1
            if count > limit:
                return
            child = f"{relative}/{entry.name}" if relative else entry.name
            try:
                child_info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            yield child, child_info
            if stat.S_ISDIR(child_info.st_mode):
                stack.append(child)


def _join(root: Path, relative: str) -> Path:
    return root / relative if relative else root


def _identity(info: os.stat_result) -> tuple[int, int, int, int]:
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _copy_one(
    root: Path, relative: str, info: os.stat_result, directory: Path, budget: list[int]
) -> _Copy:
    path = _join(root, relative)
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        return _Copy(relative, "dir", _identity(info), None, mode)
    if stat.S_ISLNK(info.st_mode):
        return _Copy(relative, "link", _identity(info), os.readlink(path), mode)
    stored = None
    if stat.S_ISREG(info.st_mode) and info.st_size <= budget[0]:
        name = f"{os.urandom(8).hex()}-{path.name}"
        try:
            shutil.copy2(path, directory / name, follow_symlinks=False)
            stored = name
            budget[0] -= info.st_size
        except OSError:
            stored = None
    return _Copy(relative, "file", _identity(info), stored, mode)


# ---------------------------------------------------------------------------------------------
# Acting on what was judged
# ---------------------------------------------------------------------------------------------


def _move(path: Path, reason: str) -> Finding:
    try:
        record = quarantine.move_aside(path, reason)
    except OSError as error:
        return Finding(path, f"{reason}; moving it aside failed: {error}", "unchecked")
    return Finding(path, reason, "quarantined", record.id)


def _clean_git_config(path: Path, judge: str, reason: str) -> Finding:
    """Keep the original in quarantine and write the file back without its exec entries
    (a regular file only: a symlinked config is moved aside whole, never written through)."""
    try:
        if os.path.islink(path) or not path.is_file():
            return _move(path, reason)
        sections = ("submodule",) if judge == GITMODULES else None
        text = judges.read_text(path)
        found = gitconfig.exec_entries(gitconfig.parse(text), sections=sections)
        record = quarantine.keep_copy(path, reason, content=path.read_bytes())
        temporary = path.with_name(f".{path.name}.stockade-{os.getpid()}")
        temporary.write_text(gitconfig.without(text, [f.entry for f in found]), encoding="utf-8")
        os.chmod(temporary, stat.S_IMODE(os.lstat(path).st_mode))
        os.replace(temporary, path)
    except (OSError, judges.Unreadable) as error:
        return _move(path, f"{reason} ({error})")
    return Finding(path, reason + " (entries removed)", "cleaned", record.id)


def _act(path: Path, judge: str, reason: str) -> Finding:
    if judge in (GIT_CONFIG, GITMODULES):
        return _clean_git_config(path, judge, reason)
    return _move(path, reason)


# ---------------------------------------------------------------------------------------------
# One command's guard
# ---------------------------------------------------------------------------------------------


class RunGuard:
    """Started right before a command, finished right after it (and polled while it runs)."""

    def __init__(
        self,
        plan: GuardPlan,
        *,
        journal: Path | None = None,
        index: RepoIndex | None = None,
        since_ns: int | None = None,
        snapshot: Snapshot | None = None,
        baseline: dict[str, tuple[int, int]] | None = None,
        links: dict[str, str] | None = None,
        previous: Snapshot | None = None,
    ) -> None:
        self.plan = plan
        self.since_ns = coarse_now_ns() if since_ns is None else since_ns
        self.journal = journal
        self.index = index
        self.findings: list[Finding] = []
        self.on_finding: Callable[[Finding], None] | None = None
        self._lock = threading.Lock()
        self._handled: set[Path] = set()
        self._reported: set[tuple[Path, str, str]] = set()
        self._finished = False
        self.links = links if links is not None else _links(plan)
        if snapshot is None and not plan.mounted and plan.protected:
            directory = previous.directory if previous is not None else _snapshot_dir(journal)
            snapshot = Snapshot.take(directory, plan.protected, reuse=previous)
        self.snapshot = snapshot
        self.baseline = baseline if baseline is not None else _baseline(plan)
        if journal is not None:
            self._write_journal()

    # -- journal ---------------------------------------------------------------------------

    def _write_journal(self) -> None:
        """Write the journal (every command: its plan encoded once per plan, the rest now)."""
        assert self.journal is not None
        rest = json.dumps(
            {
                "since_ns": self.since_ns,
                "snapshot": self.snapshot.to_json() if self.snapshot else None,
                "baseline": self.baseline,
                "links": self.links,
            }
        )
        write_record(self.journal, '{"plan": ' + _plan_json(self.plan) + ", " + rest[1:])

    @classmethod
    def from_journal(cls, journal: Path) -> RunGuard | None:
        """The guard a journal holds; None when its command was finished (a done slot)."""
        data = json.loads(journal.read_text(encoding="utf-8"))
        if data.get("done"):
            return None
        snapshot = Snapshot.from_json(data["snapshot"]) if data.get("snapshot") else None
        plan = GuardPlan.from_json(data["plan"])
        guard = cls(
            plan,
            since_ns=int(data["since_ns"]),
            snapshot=snapshot,
            baseline={k: (int(a), int(b)) for k, (a, b) in data.get("baseline", {}).items()},
            links={str(k): str(v) for k, v in data.get("links", {}).items()},
        )
        guard.journal = journal
        return guard

    # -- checking --------------------------------------------------------------------------

    def check_live(self) -> list[Finding]:
        """While the command runs: the protected and guarded names, and repositories anywhere
        once the session's index is watched (a refresh then costs only what changed)."""
        with self._lock:
            if self._finished:
                return []  # (the poller's copy of the list may outlive the command)
            found = self._check_names()
            if self.index is not None and self.index.ready:
                found += self._check_repositories()
            return self._report(found)

    def finish(self) -> list[Finding]:
        """After the command: everything, including repositories anywhere below the roots.
        Returns every finding of this command (live ones included); marks its journal slot
        done, after which nothing of this guard writes it again (another command may take it)."""
        with self._lock:
            found = self._check_names()
            found += self._check_repositories()
            self._report(found)
            self._finished = True
            if self.journal is not None:
                with contextlib.suppress(OSError):
                    write_record(self.journal, DONE_RECORD)
            return list(self.findings)

    def subscribe(self, callback: Callable[[Finding], None]) -> None:
        """Call ``callback`` for every finding, those already made first."""
        with self._lock:
            for finding in self.findings:
                callback(finding)
            self.on_finding = callback

    def _report(self, found: list[Finding]) -> list[Finding]:
        """Record and announce new findings (an unchecked directory is said once)."""
        new = [f for f in found if (f.path, f.action, f.reason) not in self._reported]
        for finding in new:
            self._reported.add((finding.path, finding.action, finding.reason))
            self.findings.append(finding)
            if self.on_finding is not None:
                self.on_finding(finding)
        return new

    def _check_names(self) -> list[Finding]:
        found: list[Finding] = []
        found += self._check_links()
        if self.snapshot is not None:
            restored = self.snapshot.restore(self.plan.protected)
            found += restored
            self._handled.update(f.path for f in restored)
            if restored:  # what was put back has new inodes: compare with it from now on
                self.snapshot = Snapshot.take(
                    self.snapshot.directory, self.plan.protected, reuse=self.snapshot
                )
                if self.journal is not None:
                    self._write_journal()
        for guarded in self.plan.guarded:
            for path in _candidates(guarded.path):
                if path in self._handled or self._is_protected(path) or not self._is_new(path):
                    continue
                found += self._judge_created(path, guarded)
        return found

    def _check_links(self) -> list[Finding]:
        """A protected name that is a symlink stays that symlink."""
        found: list[Finding] = []
        for link, original in self.links.items():
            path = Path(link)
            with contextlib.suppress(OSError):
                if os.readlink(path) == original:
                    continue
            if path in self._handled:
                continue
            self._handled.add(path)
            reason = "replaced a protected symlink inside the jail"
            record_id = None
            try:
                if os.path.lexists(path):
                    record_id = quarantine.move_aside(path, reason).id
                os.symlink(original, path)
            except OSError as error:
                found.append(
                    Finding(path, f"{reason}; restoring it failed: {error}", "unchecked", record_id)
                )
                continue
            found.append(Finding(path, reason, "restored", record_id))
        return found

    def _is_protected(self, path: Path) -> bool:
        """Below a protected path: read-only inside (bwrap) or restored (the snapshot)."""
        return any(is_within(path, p.path) for p in self.plan.protected)

    def _is_new(self, path: Path) -> bool:
        try:
            info = os.lstat(path)
        except OSError:
            return False
        before = self.baseline.get(str(path))
        return before is None or before != (info.st_ino, info.st_ctime_ns)

    def _judge_created(self, path: Path, guarded: GuardedPath) -> list[Finding]:
        self._handled.add(path)
        judge = guarded.judge
        if judge == HARMLESS:
            return []
        what = f"created inside the jail at a protected name: {guarded.threat}"
        if judge == ANYTHING or not path.is_dir() or path.is_symlink():
            if judge == ANYTHING:
                return [_move(path, what)]
            verdict = judges.judge_file(judge, path)
            return [_act(path, judge, f"{verdict} ({guarded.threat})")] if verdict else []
        found: list[Finding] = []
        depth_one = judge == GIT_HOOKS
        for relative, info in _tree(path, CREATED_WALK_LIMIT):
            if not relative or stat.S_ISDIR(info.st_mode) or (depth_one and "/" in relative):
                continue
            child = path / relative
            verdict = judges.judge_file(judge, child)
            if verdict:
                found.append(_act(child, judge, f"{verdict} ({guarded.threat})"))
        return found

    # -- repositories anywhere below the roots ---------------------------------------------

    def _check_repositories(self) -> list[Finding]:
        protected = [p.path for p in self.plan.protected]
        index = self.index or RepoIndex(self.plan.roots, skip=(*self.plan.skip, *protected))
        try:
            scan = index.refresh()
        finally:
            if index is not self.index:
                index.close()
        found: list[Finding] = []
        if not scan.complete:
            found.append(
                Finding(
                    self.plan.project, f"stopped after {scan.directories} directories", "unchecked"
                )
            )
        found += [
            Finding(d, "the directory cannot be listed by this user", "unchecked")
            for d in scan.unlistable
        ]
        for entry in scan.git_entries:
            if self._is_protected(entry) and entry.is_dir():
                continue
            if entry.is_symlink():
                if self._changed(entry):
                    found.append(
                        _move(
                            entry,
                            "a .git symlink made inside the jail points git at another repository",
                        )
                    )
                continue
            if entry.is_file():
                found += self._check_pointer(entry)
            elif entry.is_dir():
                found += self._check_git_dir(entry, 0)
        return found

    def _changed(self, path: Path) -> bool:
        try:
            return os.lstat(path).st_ctime_ns >= self.since_ns
        except OSError:
            return False

    def _check_pointer(self, marker: Path) -> list[Finding]:
        """A ``.git`` file (worktree, submodule): judge the git dir it names when a writable
        root holds it."""
        try:
            text = judges.read_text(marker).strip()
        except judges.Unreadable as error:
            return (
                [_move(marker, f"a .git pointer that cannot be read ({error})")]
                if self._changed(marker)
                else []
            )
        if not text.startswith("gitdir:"):
            return []
        target = Path(text.removeprefix("gitdir:").strip())
        target = Path(os.path.realpath(target if target.is_absolute() else marker.parent / target))
        if not any(is_within(target, root) for root in self.plan.roots) or not target.is_dir():
            return []
        return self._check_git_dir(target, 0)

    def _check_git_dir(self, git_dir: Path, depth: int) -> list[Finding]:
        found: list[Finding] = []
        for name in ("config", "config.worktree"):
            config = git_dir / name
            if self._fresh(config) and config.exists():
                reason = judges.judge_file(GIT_CONFIG, config)
                if reason:
                    why = f"{reason} (a repository's config, read by host git)"
                    found.append(_act(config, GIT_CONFIG, why))
        hooks = git_dir / "hooks"
        if hooks.is_dir() and not self._is_protected(hooks):
            found += self._check_hooks(hooks)
        commondir = git_dir / "commondir"
        if (
            self._fresh(commondir)
            and os.path.lexists(commondir)
            and git_dir.parent.name != "worktrees"
        ):
            found.append(_move(commondir, "points git at another directory's config and hooks"))
        if depth < GITDIR_DEPTH_LIMIT:
            for sub in _git_dirs_below(git_dir / "modules"):
                found += self._check_git_dir(sub, depth + 1)
            for worktree in _children(git_dir / "worktrees"):
                found += self._check_worktree(git_dir, worktree)
        return found

    def _fresh(self, path: Path) -> bool:
        return path not in self._handled and not self._is_protected(path) and self._changed(path)

    def _check_hooks(self, hooks: Path) -> list[Finding]:
        found: list[Finding] = []
        for entry in _children(hooks):
            if entry.name in judges.GIT_HOOK_NAMES and self._fresh(entry):
                self._handled.add(entry)
                found.append(_move(entry, f"git runs the {entry.name} hook on the host"))
        return found

    def _check_worktree(self, git_dir: Path, worktree: Path) -> list[Finding]:
        found = []
        commondir = worktree / "commondir"
        if self._fresh(commondir):
            try:
                value = commondir.read_text(encoding="utf-8").strip()
            except OSError:
                value = ""
            target = Path(os.path.realpath(worktree / value)) if value else None
            if target != Path(os.path.realpath(git_dir)):
                found.append(_move(commondir, "a worktree's commondir points git elsewhere"))
        config = worktree / "config.worktree"
        if self._fresh(config):
            reason = judges.judge_file(GIT_CONFIG, config)
            if reason:
                found.append(_act(config, GIT_CONFIG, f"{reason} (a worktree's config)"))
        return found


DONE_RECORD: Final = '{"done": true}'  # a journal slot whose command was judged


def write_record(path: Path, text: str) -> None:
    """Replace the JSON in ``path`` with ``text`` in one write, never shrinking the file:
    ``text`` is padded with blanks (valid after JSON) to the file's size. A write that
    returns is whole even if stockade is killed right after, and there is no moment without
    a record - without the new file and the rename per command that cost ext4 0.2 ms."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, flags, 0o600)
    try:
        data = text.encode().ljust(os.fstat(fd).st_size, b" ")
        if os.pwrite(fd, data, 0) != len(data):
            raise OSError(f"short write to {path}")
    finally:
        os.close(fd)


@functools.lru_cache(maxsize=8)
def _plan_json(plan: GuardPlan) -> str:
    """A plan as the journal holds it (the same plan for command after command)."""
    return json.dumps(plan.to_json())


def _links(plan: GuardPlan) -> dict[str, str]:
    """What each protected symlink says before the command."""
    found: dict[str, str] = {}
    for item in plan.protected:
        if item.link is not None:
            with contextlib.suppress(OSError):
                found[str(item.link)] = os.readlink(item.link)
    return found


def _baseline(plan: GuardPlan) -> dict[str, tuple[int, int]]:
    """(inode, ctime) of the guarded names that exist before the command (globs expanded)."""
    found: dict[str, tuple[int, int]] = {}
    for guarded in plan.guarded:
        for path in _candidates(guarded.path):
            with contextlib.suppress(OSError):
                info = os.lstat(path)
                found[str(path)] = (info.st_ino, info.st_ctime_ns)
    return found


def _candidates(pattern: Path) -> list[Path]:
    """The paths that exist now for a guarded name (a glob's matches)."""
    text = str(pattern)
    above = above_wildcard(text)
    if above is None:
        return [pattern] if os.path.lexists(text) else []
    if not os.path.isdir(above):
        return []  # (glob would find nothing; most projects have no .git/worktrees)
    import glob

    return [Path(p) for p in glob.glob(text)]


def _children(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as entries:
            return [Path(e.path) for e in entries]
    except OSError:
        return []


def _git_dirs_below(modules: Path) -> list[Path]:
    """Submodule git dirs below ``.git/modules`` (names may hold slashes)."""
    found: list[Path] = []
    stack = [(modules, 0)]
    while stack:
        directory, depth = stack.pop()
        for child in _children(directory):
            if not child.is_dir() or child.is_symlink():
                continue
            if (child / "HEAD").exists() or (child / "config").exists():
                found.append(child)
            elif depth < GITDIR_DEPTH_LIMIT:
                stack.append((child, depth + 1))
    return found


def _snapshot_dir(journal: Path | None) -> Path:
    """The session's snapshot directory (removed with the session), else a private one."""
    if journal is not None:
        return journal.parent / "snapshots"
    import tempfile

    return Path(tempfile.mkdtemp(prefix="stockade-snapshot-"))


# ---------------------------------------------------------------------------------------------
# While commands run: a poller; after a crash: recovery from the journal
# ---------------------------------------------------------------------------------------------


class LivePoller:
    """Re-checks the guards of running commands every ``POLL_SECONDS`` (a dev server may run
    for hours; a hook planted at its start is moved aside within a second, not at its end).

    It ticks on its own and is not woken for each command: a wake-up on the command's path
    would take the GIL from it (measured: 0.6 ms of a 6 ms warm command). Only after
    ``IDLE_TICKS`` ticks without a command does it sleep until the next one arrives."""

    IDLE_TICKS: Final = 30

    def __init__(self) -> None:
        self._guards: set[RunGuard] = set()
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._asleep = False

    def add(self, guard: RunGuard) -> None:
        with self._condition:
            if self._stopped:
                return
            self._guards.add(guard)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="stockade-guard", daemon=True
                )
                self._thread.start()
            elif self._asleep:
                self._condition.notify()

    def remove(self, guard: RunGuard) -> None:
        with self._condition:
            self._guards.discard(guard)

    def close(self) -> None:
        with self._condition:
            self._stopped = True
            self._guards.clear()
            self._condition.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _loop(self) -> None:
        idle = 0
        while True:
            with self._condition:
                if not self._guards and idle >= self.IDLE_TICKS:
                    self._asleep = True
                    while not self._guards and not self._stopped:
                        self._condition.wait()
                    self._asleep = False
                if self._stopped:
                    return
                self._condition.wait(POLL_SECONDS)
                if self._stopped:
                    return
                guards = list(self._guards)
            idle = 0 if guards else idle + 1
            for guard in guards:
                with contextlib.suppress(Exception):  # a failing check never stops the poller
                    guard.check_live()


def recover(session_root: Path) -> list[Finding]:
    """Finish the guards of a dead session's runs (its stockade was killed mid-command)."""
    found: list[Finding] = []
    for journal in sorted((session_root / "guard").glob("*.json")):
        try:
            guard = RunGuard.from_journal(journal)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if guard is not None:
            found += guard.finish()
    for finding in found:
        print(f"{finding.line()} (left by a stockade run that was killed)", file=sys.stderr)
    record_in_ledger(found, project=None)
    return found


def record_in_ledger(
    findings: Sequence[Finding],
    *,
    project: Path | None,
    session: str | None = None,
    ledger: Ledger | None = None,
) -> None:
    """One ledger row per finding (best effort: the finding is on stderr and in the result)."""
    if not findings:
        return
    try:
        from stockade.permissions.ledger import Ledger, LedgerEntry, session_id_from_environment

        target = ledger if ledger is not None else Ledger()
        try:
            for finding in findings:
                target.record(
                    LedgerEntry(
                        session=session or session_id_from_environment(),
                        project=str(project or finding.path.parent),
                        action=str(finding.path),
                        kind="guard",
                        tier=None,
                        effects=("planted-code",),
                        source="guard",
                        autonomy=None,
                        posture=None,
                        decision=finding.action,
                        reason=finding.line().removeprefix("stockade: "),
                    )
                )
        finally:
            if ledger is None:
                target.close()
    except Exception as error:  # the ledger must never hide a finding
        print(
            f"stockade: warning: guard findings not recorded in the ledger: {error}",
            file=sys.stderr,
        )
