"""git is subcommand-aware: every spelling of the dangerous forms (force pushes, ``reset
--hard``, ``clean -f``, branch deletion, discarding edits, history rewrites), the settings and
options that make git run programs (``-c core.pager=…``, ``--upload-pack``, ``rebase -x``), and
subcommands not in the table fail closed (they may be aliases or ``git-*`` programs).

``git checkout NAME`` switches branches only if NAME is a branch; when NAME is also (or only)
a path, it overwrites that path's uncommitted edits. Which one it is cannot be known from the
command, so only the spellings that are provably a branch switch are low (``-b``, ``--detach``,
``NAME --``, ``-``); ``git switch NAME`` is the unambiguous spelling.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stockade.risk.flags import flag, optional, read, value, write
from stockade.risk.hooks import check_git_setting
from stockade.risk.model import Args, Call, Check, D, Flag, Found, H, L, M, R, Spec
from stockade.risk.paths import is_secret, may_be_secret
from stockade.risk.specs import apply
from stockade.tiers import Tier

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import Context

# =============================================================================================
# Subcommands not in GIT_SUBCOMMANDS or GIT_SPECS (below) are unknown and fail closed.
# =============================================================================================

GIT_SUBCOMMANDS: dict[str, Tier] = {
    # read-only
    "status": R,
    "diff": R,
    "log": R,
    "show": R,
    "blame": R,
    "annotate": R,
    "shortlog": R,
    "describe": R,
    "rev-parse": R,
    "rev-list": R,
    "ls-files": R,
    "ls-tree": R,
    "ls-remote": R,
    "cat-file": R,
    "grep": R,
    "show-ref": R,
    "for-each-ref": R,
    "name-rev": R,
    "merge-base": R,
    "cherry": R,
    "whatchanged": R,
    "count-objects": R,
    "fsck": R,
    "verify-commit": R,
    "verify-tag": R,
    "verify-pack": R,
    "check-ignore": R,
    "check-attr": R,
    "check-ref-format": R,
    "check-mailmap": R,
    "var": R,
    "help": R,
    "version": R,
    "range-diff": R,
    "diff-tree": R,
    "diff-files": R,
    "diff-index": R,
    "show-branch": R,
    "request-pull": R,
    "get-tar-commit-id": R,
    "column": R,
    "interpret-trailers": R,
    "stripspace": R,
    "patch-id": R,
    "mailinfo": R,
    "fmt-merge-msg": R,
    "show-index": R,
    "unpack-file": L,
    "merge-tree": R,
    "difftool": M,
    "citool": M,
    "gui": M,
    "gitk": M,
    # low: reversible, in-repository
    "add": L,
    "init": L,
    "format-patch": L,
    "archive": L,
    "bundle": L,
    "hash-object": L,
    "commit-tree": L,
    "mktag": L,
    "mktree": L,
    "update-index": L,
    "read-tree": M,
    "write-tree": L,
    "notes": L,
    "bisect": L,
    "sparse-checkout": M,
    "maintenance": M,
    "rerere": L,
    "replay": M,
    # medium: mutating but recoverable
    "commit": M,
    "fetch": M,
    "pull": M,
    "merge": M,
    "rebase": M,
    "cherry-pick": M,
    "revert": M,
    "am": M,
    "apply": M,
    "mv": M,
    "rm": M,
    "clone": M,
    "submodule": M,
    "gc": M,
    "repack": M,
    "pack-refs": M,
    "lfs": M,
    "symbolic-ref": M,
    "hook": M,
    "stage": L,
    "mergetool": M,
    "checkout-index": D,
    # high: hard to undo, leaves the machine
    "push": H,
    "prune": H,
    "replace": H,
    "update-ref": H,
    "send-email": H,
    "send-pack": H,
    "daemon": H,
    "instaweb": H,
    "http-push": H,
    "credential": H,
    "credential-store": H,
    "credential-cache": H,
    "imap-send": H,
    "svn": H,
    "p4": H,
    "cvsimport": H,
    "fast-import": H,
    "fast-export": L,
    "upload-pack": H,
    "receive-pack": H,
    "shell": D,
}

#: ``git stash SUB``: (tier, rule).
GIT_STASH: dict[str, tuple[Tier, str]] = {
    "list": (R, "git.subcommand"),
    "show": (R, "git.subcommand"),
    "push": (L, "git.subcommand"),
    "save": (L, "git.subcommand"),
    "create": (L, "git.subcommand"),
    "store": (L, "git.subcommand"),
    "apply": (M, "git.subcommand"),
    "pop": (M, "git.subcommand"),
    "branch": (M, "git.subcommand"),
    "drop": (D, "git.discard-changes"),
    "clear": (D, "git.stash-clear"),
}
#: A previous branch (``-``, ``@{-1}``): never a path, so ``git checkout -`` switches.
_PREVIOUS_BRANCH = re.compile(r"^(?:-|@\{-\d+\})$")


def _exec(*names: str) -> Flag:
    """Options whose value is a program git runs (``--upload-pack``, ``--receive-pack``)."""
    return Flag(names, D, "git.exec-option", "value", "names a program git runs")


def _given(args: Args, *names: str) -> bool:
    """Was any of these spellings given? (git's short flags bundle: ``-fu``.)"""
    return any(given.name in names for given in args.given)


def _operands(args: Args) -> list[tuple[str, bool]]:
    return [(word, static) for word, static, _, _ in args.operands]


def _paths_after_dashdash(args: Args) -> bool:
    end = args.end_of_options
    return end >= 0 and any(index > end for _, _, index, _ in args.operands)


def _global_config(call: Call) -> list[str]:
    """The keys of ``git -c KEY=VALUE`` before the subcommand (lower-case)."""
    keys = []
    words = call.words
    for index in range(1, len(words) - 1):
        if words[index] == "-c":
            keys.append(words[index + 1].partition("=")[0].lower())
        elif words[index][:1] != "-":
            break
    return keys


# --- the analysers -------------------------------------------------------------------------------


def push_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if _given(args, "-n", "--dry-run"):
        found.add(L, "git.push", "git push --dry-run only shows what would happen")
        return
    operands = _operands(args)
    if _given(args, "-f", "--force", "--force-with-lease"):
        found.add(D, "git.push-force", "force push overwrites the remote history")
    if any(word[:1] == "+" or (not static and word[:1] in "$`") for word, static in operands):
        found.add(D, "git.push-force", "a +refspec (or one only known at run time) forces")
    if _given(args, "-d", "--delete", "--mirror", "--prune") or any(
        word[:1] == ":" for word, _ in operands
    ):
        found.add(D, "git.push-delete", "the push deletes remote branches or tags")
    if any(key.startswith(("remote.", "push.", "branch.")) for key in _global_config(call)):
        found.add(D, "git.push-force", "a -c setting changes what push sends")
    found.add(H, "git.push", "git push publishes commits")


def reset_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    operands = _operands(args)
    if _given(args, "--hard"):
        found.add(D, "git.reset-hard", "git reset --hard discards uncommitted changes")
    elif _given(args, "--keep", "--merge", "--soft") or (
        operands and operands[0][0] not in ("HEAD", "@") and args.end_of_options < 0
    ):
        found.add(M, "git.subcommand", "git reset moves the branch (recoverable via reflog)")
    else:
        found.add(L, "git.subcommand", "git reset unstages changes")


def clean_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if _given(args, "-n", "--dry-run"):
        found.add(R, "git.subcommand", "git clean -n only lists what would be deleted")
    else:
        found.add(D, "git.clean-force", "git clean deletes untracked files")


def branch_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    operands = _operands(args)
    listing = _given(args, *_BRANCH_LISTING)
    if _given(args, "-d", "-D", "--delete"):
        found.add(D, "git.branch-delete", "deleting a branch can lose commits")
    elif _given(args, "-M", "--force") or (_given(args, "-f") and operands):
        found.add(H, "git.subcommand", "git branch -M/-f overwrites a branch")
    elif _given(args, "-m", "--move"):
        found.add(M, "git.subcommand", "git branch -m renames a branch")
    elif _given(args, "-c", "-C", "--copy") or (operands and not listing):
        found.add(L, "git.subcommand", "git branch creates a branch")
    elif _given(args, *_BRANCH_SETTINGS):
        found.add(L, "git.subcommand", "git branch sets upstream/description")
    else:
        found.add(R, "git.subcommand", "git branch lists branches")


_BRANCH_LISTING = (
    *("-a", "-l", "-r", "-v", "--list", "--all", "--remotes", "--verbose", "--merged"),
    *("--no-merged", "--contains", "--no-contains", "--points-at", "--show-current"),
    *("--format", "--sort", "--column"),
)
_BRANCH_SETTINGS = (
    *("-u", "--set-upstream-to", "--unset-upstream", "--track", "--no-track"),
    "--edit-description",
)


def tag_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    operands = _operands(args)
    if _given(args, "-d", "--delete"):
        found.add(H, "git.subcommand", "git tag -d deletes a tag")
    elif _given(args, "-v", "--verify"):
        found.add(R, "git.subcommand", "git tag -v verifies a tag")
    elif _given(args, *_TAG_LISTING) or not operands:
        found.add(R, "git.subcommand", "git tag lists tags")
    elif _given(args, "-f", "--force"):
        found.add(M, "git.subcommand", "git tag -f moves a tag")
    else:
        found.add(L, "git.subcommand", "git tag creates a tag")


_TAG_LISTING = (
    *("-l", "-n", "--list", "--contains", "--no-contains", "--merged", "--no-merged"),
    *("--points-at", "--sort", "--format", "--column"),
)


def checkout_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """Only a provable branch switch is low; ``git checkout NAME`` may restore a path."""
    operands = _operands(args)
    before = [op for op in args.operands if args.end_of_options < 0 or op[2] < args.end_of_options]
    if _given(args, "-f", "--force", "--ours", "--theirs", "-p", "--patch", "-m", "--merge"):
        found.add(D, "git.discard-changes", "git checkout -f/--ours/--patch/-m overwrites edits")
    elif _given(args, "--pathspec-from-file") or _paths_after_dashdash(args):
        found.add(D, "git.discard-changes", "git checkout -- PATH discards edits")
    elif _given(args, "-b", "-B", "--orphan"):
        tier = M if _given(args, "-B") else L
        found.add(tier, "git.subcommand", "git checkout -b creates and switches to a branch")
    elif _given(args, "--detach") or (_given(args, "-t", "--track") and len(before) <= 1):
        found.add(L, "git.subcommand", "git checkout --detach/--track switches branches")
    elif not operands:
        found.add(R, "git.subcommand", "git checkout without arguments shows tracking info")
    elif len(before) == 1 and (
        args.end_of_options >= 0 or (operands[0][1] and _PREVIOUS_BRANCH.match(operands[0][0]))
    ):
        found.add(L, "git.subcommand", f"git checkout {operands[0][0]} switches branches")
    else:
        found.add(
            D,
            "git.discard-changes",
            f"git checkout {operands[0][0]} restores that path (discarding its edits) if it "
            "is one; write `git switch NAME` or `git checkout NAME --` to switch branches",
        )


def switch_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if _given(args, "-f", "--force", "--discard-changes"):
        found.add(D, "git.discard-changes", "git switch --discard-changes drops edits")
    elif _given(args, "-C", "--force-create"):
        found.add(M, "git.subcommand", "git switch -C resets a branch")
    else:
        found.add(L, "git.subcommand", "git switch changes branches")


def restore_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    staged = _given(args, "-S", "--staged")
    worktree = _given(args, "-W", "--worktree")
    if staged and not worktree and not _given(args, "-s", "--source"):
        found.add(L, "git.subcommand", "git restore --staged unstages changes")
    else:
        found.add(D, "git.discard-changes", "git restore discards edits in the work tree")


def stash_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    operands = _operands(args)
    sub = operands[0][0] if operands else "push"
    tier, rule = GIT_STASH.get(sub, (D, "git.unknown-subcommand"))
    found.add(tier, rule, f"git stash {sub} is {tier.label}")


def config_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    operands = _operands(args)
    names = [word for word, _ in operands]
    if names and names[0] in ("get", "list"):
        found.add(R, "git.subcommand", f"git config {names[0]} reads settings")
        return
    if names and names[0] in ("set", "unset", "rename-section", "remove-section", "edit"):
        names = names[1:]
        writing = True
    else:
        writing = _given(args, *_CONFIG_WRITES) or len(names) >= 2
    if not writing:
        found.add(R, "git.subcommand", "git config reads settings")
        return
    scope = H if _given(args, "--global", "--system", "--file", "-f") else M
    found.add(scope, "git.config-write", "git config changes settings")
    if names:
        setting = names[0] + "=" + (names[1] if len(names) > 1 else "")
        check_git_setting(found, setting, all(s for _, s in operands), "git config")
        if names[0].lower().startswith("alias.") and len(names) > 1 and "!" in names[1]:
            found.add(D, "git.exec-config", "a git alias that runs a shell command")


_CONFIG_WRITES = (
    *("--unset", "--unset-all", "--add", "--replace-all", "--rename-section"),
    *("--remove-section", "--edit", "-e"),
)


def _first_word(args: Args, default: str) -> str:
    return args.operands[0][0] if args.operands else default


def remote_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    sub = _first_word(args, "")
    tier = R if sub in ("", "show", "get-url") else M
    found.add(tier, "git.subcommand", f"git remote {sub} is {tier.label}".replace("  ", " "))


def worktree_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    sub = _first_word(args, "list")
    if sub == "remove" and _given(args, "-f", "--force"):
        found.add(D, "git.discard-changes", "git worktree remove --force drops its edits")
        return
    tier = {"list": R, "add": L, "remove": H, "prune": M}.get(sub, L)
    found.add(tier, "git.subcommand", f"git worktree {sub} is {tier.label}")


def submodule_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    sub = _first_word(args, "status")
    if sub == "foreach":
        found.add(D, "git.exec-option", "git submodule foreach runs a shell command")
        code = [(word, static) for word, static, _, _ in args.operands[1:]]
        if code and all(static for _, static in code):
            ctx.nested(found, call, " ".join(w for w, _ in code), "git.exec-option", "foreach")
        return
    tier = R if sub in ("status", "summary") else H if sub == "deinit" and _given(args, "-f") else M
    found.add(tier, "git.subcommand", f"git submodule {sub} is {tier.label}")


def sequencer_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """merge/cherry-pick/revert/am/rebase: ``--abort``/``--quit`` are low."""
    name = args.name
    if _given(args, "--abort", "--quit"):
        found.add(L, "git.subcommand", f"{name} --abort restores the previous state")
    else:
        found.add(M, "git.subcommand", f"{name} is medium")


def bisect_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    sub = _first_word(args, "")
    if sub == "run":
        found.add(L, "git.subcommand", "git bisect run runs a command per step")
        ctx.command(found, call.shifted(args.operands[0][2] + 1))
    else:
        tier = R if sub in ("", "log", "view", "visualize", "terms", "help") else L
        found.add(tier, "git.subcommand", f"git bisect {sub} is {tier.label}")


def reflog_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    sub = _first_word(args, "show")
    if sub in ("expire", "delete", "drop"):
        found.add(D, "git.history-rewrite", f"git reflog {sub} destroys the safety net")
    else:
        found.add(R, "git.subcommand", "git reflog shows history")


def update_ref_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if _given(args, "-d", "--stdin"):
        found.add(D, "git.branch-delete", "git update-ref -d/--stdin can delete refs")
    else:
        found.add(H, "git.subcommand", "git update-ref moves a ref")


def rm_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if _given(args, "--cached"):
        found.add(L, "git.subcommand", "git rm --cached only untracks files")
    elif _given(args, "-f", "--force"):
        found.add(H, "git.subcommand", "git rm -f deletes files with unsaved changes")
    else:
        found.add(M, "git.subcommand", "git rm deletes committed files")


def gc_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    prune = args.first(_GC_PRUNE)
    if prune is not None and prune.value not in (None, "2.weeks.ago"):
        found.add(H, "git.subcommand", "git gc --prune drops unreachable commits")
    else:
        found.add(M, "git.subcommand", "git gc repacks the repository")


def notes_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    sub = _first_word(args, "list")
    tier = R if sub in ("list", "show", "get-ref") else M if sub in ("remove", "prune") else L
    found.add(tier, "git.subcommand", f"git notes {sub} is {tier.label}")


def apply_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    if _given(args, "--check", "--stat", "--numstat", "--summary") and not _given(args, "--apply"):
        found.add(R, "git.subcommand", "git apply --check/--stat only inspects the patch")
    else:
        found.add(M, "git.subcommand", "git apply changes files")


def listing_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """sparse-checkout/lfs: listing forms are read-only, the rest medium."""
    sub = _first_word(args, "")
    if sub in ("list", "ls-files", "status", "env", "version", "logs", "track", ""):
        found.add(R, "git.subcommand", f"{args.name} {sub} only lists".replace("  ", " "))
    else:
        found.add(M, "git.subcommand", f"{args.name} {sub} changes the work tree")


_GC_PRUNE = optional("--prune")


#: log/diff/show/format-patch ``--output=FILE`` writes a file, like ``> FILE``.
def _reader_output() -> Flag:
    return Flag(("--output",), takes="output")


def git_check(ctx: Context, found: Found, call: Call, args: Args) -> None:
    """git: global options (``-C``, ``-c k=v``, ``--git-dir``…), then the subcommand."""
    words = call.words
    if args.given:  # global options (most git commands have none)
        if args.has(_INFO, _LIST_CMDS):
            found.add(R, "program.version", "git only prints information")
            return
        exec_path = args.first(_EXEC_PATH)
        if exec_path is not None and exec_path.values:
            found.add(D, "git.exec-option", "git --exec-path= runs git programs from there")
            return
        if exec_path is not None:
            found.add(R, "program.version", "git --exec-path only prints information")
            return
    index = args.rest
    if index >= len(words):
        found.add(R, "git.subcommand", "git without a subcommand prints help")
        return
    if not call.static[index]:
        found.add(D, "subcommand.dynamic", "git: subcommand only known at run time")
        return
    sub = words[index]
    spec = GIT_SPECS.get(sub)
    if spec is not None:
        apply(ctx, found, call, f"git {sub}", spec, index + 1)
    elif sub in GIT_SUBCOMMANDS:
        tier = GIT_SUBCOMMANDS[sub]
        found.add(tier, "git.subcommand", f"git {sub} is {tier.label}")
    else:
        found.add(
            D,
            "git.unknown-subcommand",
            f"git {sub}: not a known subcommand (may be an alias or a git-* program)",
        )
    for word, static in zip(words[index + 1 :], call.static[index + 1 :], strict=False):
        if word[:1] == "-" and "=" not in word:
            continue
        if word.startswith(("ext::", "fd::")):
            found.add(D, "git.exec-option", f"git {sub} {word} runs a program")
        named = word.partition("=")[2] if word[:1] == "-" else word
        if (
            static
            and named
            and may_be_secret(named)
            and not word.startswith(("-c", "--config"))
            and is_secret(named, static)
        ):
            found.add(H, "secret.read", f"git {sub} touches {word!r}, which looks like a secret")


_INFO = flag(
    *("--version", "-v", "--help", "-h", "--html-path", "--man-path", "--info-path"),
    why="only prints information",
)
_EXEC_PATH = optional("--exec-path")
_LIST_CMDS = value("--list-cmds")


def _sub(check: Check | None = None, tier: Tier | None = None, *flags: Flag) -> Spec:
    """A git subcommand's spec: its analyser (or its tier) and its options."""
    return Spec(tier, "git.subcommand", flags=flags, check=check)


def _template() -> Flag:
    return Flag(
        ("--template",), H, "write.protected", "value", "a template directory installs hooks"
    )


#: Subcommands whose options decide their tier.
GIT_SPECS: dict[str, Spec] = {
    "push": _sub(
        push_check,
        None,
        flag("-n", "--dry-run", "-f", "--force", "-d", "--delete", "--mirror", "--prune"),
        optional("--force-with-lease", "--signed", "--recurse-submodules"),
        _exec("--receive-pack", "--exec"),
        value("-o", "--push-option", "--repo"),
        flag("-u", "--set-upstream", "--tags", "--follow-tags", "--all", "--no-verify", "-v"),
        flag("-q", "--atomic", "--porcelain", "--thin", "--force-if-includes", "-4", "-6"),
    ),
    "reset": _sub(
        reset_check,
        None,
        flag("--hard", "--keep", "--merge", "--soft", "--mixed", "-q", "-p", "-N"),
        value("--pathspec-from-file"),
    ),
    "clean": _sub(
        clean_check,
        None,
        flag("-n", "--dry-run", "-f", "--force", "-d", "-x", "-X", "-i"),
        value("-e", "--exclude"),
    ),
    "branch": _sub(
        branch_check,
        None,
        flag("-d", "-D", "--delete", "-M", "-f", "--force", "-m", "--move", "-c", "-C", "--copy"),
        flag("-a", "-l", "-r", "-v", "--list", "--all", "--remotes", "--verbose", "-q"),
        flag("--show-current", "--unset-upstream", "--no-track", "--edit-description"),
        value("-u", "--set-upstream-to", "--contains", "--no-contains", "--merged"),
        value("--no-merged", "--points-at", "--sort", "--format"),
        optional("-t", "--track", "--column", "--abbrev", "--color"),
    ),
    "tag": _sub(
        tag_check,
        None,
        flag("-d", "--delete", "-v", "--verify", "-l", "--list", "-f", "--force", "-a", "-s"),
        flag("--annotate", "--sign"),
        optional("-n", "--column"),
        value("-m", "--message", "-u", "--local-user", "--contains", "--no-contains"),
        value("--merged", "--no-merged", "--points-at", "--sort", "--format", "--cleanup"),
        read("-F", "--file"),
    ),
    "checkout": _sub(
        checkout_check,
        None,
        flag("-f", "--force", "--ours", "--theirs", "-p", "--patch", "-m", "--merge", "-q"),
        flag("--detach", "--no-track", "--guess", "--no-guess", "--overlay", "--progress"),
        flag("--ignore-other-worktrees", "-l"),
        value("-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"),
        optional("-t", "--track", "--recurse-submodules"),
    ),
    "switch": _sub(
        switch_check,
        None,
        flag("-f", "--force", "--discard-changes", "-d", "--detach", "-m", "--merge", "-q"),
        value("-c", "-C", "--create", "--force-create", "--orphan", "--conflict"),
        optional("-t", "--track", "--recurse-submodules"),
    ),
    "restore": _sub(
        restore_check,
        None,
        flag("-S", "--staged", "-W", "--worktree", "-p", "--patch", "--ours", "--theirs"),
        value("-s", "--source", "--pathspec-from-file", "--conflict"),
    ),
    "stash": _sub(stash_check, None, flag("-u", "-a", "-k", "-p", "-q"), value("-m", "--message")),
    "config": _sub(
        config_check,
        None,
        value("--file", "-f", "--blob", "--type", "--default", "--comment", "--value", "--url"),
        flag("--global", "--system", "--local", "--worktree", *_CONFIG_WRITES, "-l", "--list"),
        flag("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--show-origin"),
    ),
    "remote": _sub(remote_check, None, flag("-v", "--verbose")),
    "worktree": _sub(
        worktree_check, None, flag("-f", "--force", "--detach", "--lock"), value("-b", "-B")
    ),
    "submodule": _sub(
        submodule_check, None, flag("--recursive", "-q", "--quiet", "-f", "--force", "--init")
    ),
    "rebase": _sub(
        sequencer_check,
        None,
        Flag(
            ("-x", "--exec"),
            D,
            "git.exec-option",
            "command",
            "git rebase --exec runs a shell command",
        ),
        flag("--abort", "--quit", "--continue", "--skip", "-i", "--interactive"),
        value("--onto", "-s", "--strategy", "-X", "--strategy-option"),
    ),
    "merge": _sub(
        sequencer_check,
        None,
        flag("--abort", "--quit"),
        value("-m", "-s", "-X"),
        read("-F", "--file"),
    ),
    "cherry-pick": _sub(sequencer_check, None, flag("--abort", "--quit"), value("-m", "-s", "-X")),
    "revert": _sub(sequencer_check, None, flag("--abort", "--quit"), value("-m", "-s", "-X")),
    "am": _sub(
        sequencer_check,
        None,
        flag("--abort", "--quit"),
        value("--directory", "--exclude", "--include"),
    ),
    "bisect": _sub(bisect_check),
    "reflog": _sub(reflog_check),
    "update-ref": _sub(update_ref_check, None, flag("-d", "--stdin", "--no-deref"), value("-m")),
    "rm": _sub(
        rm_check,
        None,
        flag("--cached", "-f", "--force", "-r", "-q", "-n"),
        value("--pathspec-from-file"),
    ),
    "gc": _sub(gc_check, None, _GC_PRUNE),
    "notes": _sub(notes_check, None, value("--ref", "-m", "-F")),
    "grep": _sub(
        None,
        R,
        Flag(
            ("-O", "--open-files-in-pager"),
            D,
            "git.exec-option",
            "optional",
            "runs a pager program",
        ),
        value("-e", "-A", "-B", "-C", "--max-depth", "-m", "--max-count", "--threads"),
        read("-f"),
    ),
    **{
        name: _sub(None, R, _reader_output(), read("-O"), value("-n", "--format", "-U"))
        for name in ("log", "diff", "show", "format-patch", "whatchanged")
    },
    "apply": _sub(
        apply_check,
        None,
        flag("--check", "--stat", "--numstat", "--summary", "--apply", "-R", "--reverse"),
        value("-p", "-C", "--directory", "--exclude", "--include"),
    ),
    "sparse-checkout": _sub(listing_check),
    "lfs": _sub(listing_check),
    "difftool": _sub(
        None,
        M,
        Flag(("-x", "--extcmd"), D, "git.exec-option", "value", "git difftool -x runs a program"),
        value("-t", "--tool"),
    ),
    "filter-branch": Spec(
        D, "git.history-rewrite", why="rewrites history; old commits become unreachable"
    ),
    "filter-repo": Spec(
        D, "git.history-rewrite", why="rewrites history; old commits become unreachable"
    ),
    "clone": _sub(
        None,
        M,
        _exec("-u", "--upload-pack"),
        _template(),
        Flag(("-c", "--config"), takes="git-config"),
        value("-b", "--branch", "-o", "--origin", "--depth", "--reference", "-j", "--jobs"),
        value("--filter", "--separate-git-dir", "--shallow-since", "--shallow-exclude"),
    ),
    "init": _sub(None, L, _template(), value("-b", "--initial-branch", "--separate-git-dir")),
    "fetch": _sub(None, M, _exec("--upload-pack"), value("--depth", "-j", "--jobs")),
    "pull": _sub(sequencer_check, None, _exec("--upload-pack"), value("--depth", "-s", "-X")),
    "ls-remote": _sub(None, R, _exec("--upload-pack", "--exec")),
    "archive": _sub(
        None, L, _exec("--exec"), write("-o", "--output"), value("--format", "--prefix", "--remote")
    ),
    "send-pack": _sub(None, H, _exec("--receive-pack", "--exec")),
}

SPECS: dict[str, Spec] = {
    "git": Spec(
        None,
        operands=("rest",),
        flags=(
            _INFO,
            _EXEC_PATH,
            Flag(("-c",), takes="git-config"),
            Flag(
                ("--config-env",),
                D,
                "git.exec-config",
                "value",
                "takes a setting's value from the environment",
            ),
            value("-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"),
            value("--attr-source"),
            _LIST_CMDS,
            flag("-p", "--paginate", "-P", "--no-pager", "--bare", "--no-replace-objects"),
            flag("--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs"),
            flag("--icase-pathspecs", "--no-optional-locks", "--no-lazy-fetch", "--no-advice"),
        ),
        check=git_check,
        examples=(
            ("git status", R),
            ("git push --force", D, "git.push-force"),
            ("git checkout Makefile", D, "git.discard-changes"),
            ("git checkout main", D, "git.discard-changes"),
            ("git checkout main --", L),
            ("git checkout -", L),
            ("git checkout -b feature/x", L),
            ("git switch main", L),
            ("git -c core.pager='sh -c id' log", D, "git.exec-config"),
            ("git rebase -x 'make test' main", D, "git.exec-option"),
        ),
    ),
}
