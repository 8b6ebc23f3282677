"""risk.classify: git is subcommand-aware — every spelling of the dangerous forms."""

from __future__ import annotations

import pytest

from stockade.tiers import Tier
from tests.unit.risk_helpers import D, H, L, M, R, assert_rule, assert_tier

FORCE_PUSH = [
    "git push --force",
    "git push -f",
    "git push -f origin main",
    "git push origin main -f",
    "git push origin main --force",
    "git push --force-with-lease",
    "git push --force-with-lease=main",
    "git push --force-with-lease=main:abc123 origin main",
    "git push --force-with-lease --force-if-includes",
    "git push -uf origin x",
    "git push -fu origin x",
    "git push -vf",
    "git push origin +main",
    "git push origin +HEAD:main",
    "git push origin +refs/heads/a:refs/heads/a",
    "git push origin main +dev",
    "git -C repo push --force",
    "git -c user.name=x push -f",
    "git --git-dir=.git push -f",
    "git --no-pager push --force",
    "git push --no-verify --force",
    "GIT_TRACE=1 git push -f",
    "git -c remote.origin.push=+refs/heads/*:refs/heads/* push",
    "git -c push.default=matching push",
    "git push origin $BRANCH",
    "timeout 9 git push -f",
    "bash -c 'git push --force'",
]


@pytest.mark.parametrize("command", FORCE_PUSH)
def test_force_push_in_every_spelling(command: str) -> None:
    assert_rule(command, "git.push-force", D)


@pytest.mark.parametrize(
    "command",
    [
        "git push --delete origin x",
        "git push -d origin x",
        "git push origin :x",
        "git push origin :refs/tags/v1",
        "git push --mirror",
        "git push --prune origin",
        "git push origin --delete x y",
    ],
)
def test_pushes_that_delete(command: str) -> None:
    assert_rule(command, "git.push-delete", D)


@pytest.mark.parametrize(
    "command",
    [
        "git push",
        "git push origin main",
        "git push -u origin feature/x",
        "git push --tags",
        "git push origin HEAD",
        "git push --set-upstream origin x",
        "git push -o ci.skip origin x",
        "git push --follow-tags",
    ],
)
def test_ordinary_pushes_are_high(command: str) -> None:
    assert_rule(command, "git.push", H)


def test_dry_run_push_is_low() -> None:
    assert_tier("git push --dry-run --force", L)
    assert_tier("git push -n origin main", L)


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git reset --hard", "git.reset-hard"),
        ("git reset --hard HEAD~2", "git.reset-hard"),
        ("git reset --hard origin/main", "git.reset-hard"),
        ("git reset -q --hard", "git.reset-hard"),
        ("git clean -f", "git.clean-force"),
        ("git clean -fd", "git.clean-force"),
        ("git clean -df", "git.clean-force"),
        ("git clean -xfd", "git.clean-force"),
        ("git clean --force", "git.clean-force"),
        ("git clean -f -d -x", "git.clean-force"),
        ("git clean -d", "git.clean-force"),
        ("git clean -i", "git.clean-force"),
        ("git -c clean.requireForce=false clean", "git.exec-config"),
        ("git branch -d x", "git.branch-delete"),
        ("git branch -D x", "git.branch-delete"),
        ("git branch --delete x", "git.branch-delete"),
        ("git branch -rd origin/x", "git.branch-delete"),
        ("git branch -d -r origin/x", "git.branch-delete"),
        ("git branch -Dq x", "git.branch-delete"),
        ("git update-ref -d refs/heads/x", "git.branch-delete"),
        ("git checkout src/app.py", "git.discard-changes"),
        ("git checkout README.md", "git.discard-changes"),
        ("git checkout .", "git.discard-changes"),
        ("git checkout -- .", "git.discard-changes"),
        ("git checkout -- a.py", "git.discard-changes"),
        ("git checkout HEAD -- a.py", "git.discard-changes"),
        ("git checkout abc1234 -- a.py", "git.discard-changes"),
        ("git checkout main -- src", "git.discard-changes"),
        ("git checkout -f", "git.discard-changes"),
        ("git checkout -f main", "git.discard-changes"),
        ("git checkout --force main", "git.discard-changes"),
        ("git checkout -p", "git.discard-changes"),
        ("git checkout --ours a.py", "git.discard-changes"),
        ("git checkout --theirs .", "git.discard-changes"),
        ("git checkout src", "git.discard-changes"),
        ("git checkout tests", "git.discard-changes"),
        ("git checkout some/dir", "git.discard-changes"),
        ("git restore a.py", "git.discard-changes"),
        ("git restore .", "git.discard-changes"),
        ("git restore -W a.py", "git.discard-changes"),
        ("git restore --source=HEAD~1 a.py", "git.discard-changes"),
        ("git restore -SW a.py", "git.discard-changes"),
        ("git restore --staged --worktree a.py", "git.discard-changes"),
        ("git switch --discard-changes main", "git.discard-changes"),
        ("git switch -f main", "git.discard-changes"),
        ("git stash drop", "git.discard-changes"),
        ("git stash clear", "git.stash-clear"),
        ("git worktree remove --force ../wt", "git.discard-changes"),
        ("git reflog expire --expire=now --all", "git.history-rewrite"),
        ("git reflog delete HEAD@{1}", "git.history-rewrite"),
        ("git filter-branch --tree-filter x", "git.history-rewrite"),
        ("git filter-repo --path x", "git.history-rewrite"),
    ],
)
def test_destructive_git_forms(command: str, rule: str) -> None:
    assert_rule(command, rule, D)


@pytest.mark.parametrize(
    ("command", "tier"),
    [
        ("git branch", R),
        ("git branch -a", R),
        ("git branch -r", R),
        ("git branch -vv", R),
        ("git branch --list", R),
        ("git branch -l 'f*'", R),
        ("git branch --show-current", R),
        ("git branch --merged main", R),
        ("git branch --contains abc", R),
        ("git branch --sort=-committerdate", R),
        ("git branch x", L),
        ("git branch x main", L),
        ("git branch -c x y", L),
        ("git branch -m old new", M),
        ("git branch -M old new", H),
        ("git branch -f main abc", H),
        ("git branch -u origin/x", L),
        ("git branch --set-upstream-to=origin/x", L),
        ("git tag", R),
        ("git tag -l", R),
        ("git tag --list 'v*'", R),
        ("git tag -n", R),
        ("git tag --contains abc", R),
        ("git tag v1", L),
        ("git tag -a v1 -m 'release'", L),
        ("git tag -s v1 -m x", L),
        ("git tag -f v1", M),
        ("git tag -d v1", H),
        ("git tag -v v1", R),
        ("git remote", R),
        ("git remote -v", R),
        ("git remote show origin", R),
        ("git remote get-url origin", R),
        ("git remote add up url", M),
        ("git remote set-url origin url", M),
        ("git remote remove up", M),
        ("git stash", L),
        ("git stash -u", L),
        ("git stash push -m x", L),
        ("git stash save x", L),
        ("git stash list", R),
        ("git stash show", R),
        ("git stash pop", M),
        ("git stash apply", M),
        ("git stash branch x", M),
        ("git config user.name", R),
        ("git config --get a.b", R),
        ("git config --list --show-origin", R),
        ("git config get user.name", R),
        ("git config list", R),
        ("git config user.name Bot", M),
        ("git config set a.b c", M),
        ("git config --unset a.b", M),
        ("git config --global user.name x", H),
        ("git config --global --unset a.b", H),
        ("git config -f x.cfg a.b c", H),
        ("git worktree list", R),
        ("git worktree add ../x", L),
        ("git worktree remove ../x", H),
        ("git worktree prune", M),
        ("git submodule", R),
        ("git submodule status", R),
        ("git submodule update --init --recursive", M),
        ("git submodule deinit -f x", H),
        ("git checkout main --", L),
        ("git checkout origin/main --", L),
        ("git checkout -", L),
        ("git checkout @{-2}", L),
        ("git checkout -t origin/feature", L),
        ("git checkout --detach v1.2", L),
        ("git checkout -b x", L),
        ("git checkout -b x origin/x", L),
        ("git checkout -B x", M),
        ("git checkout --detach", L),
        ("git checkout --orphan x", L),
        ("git switch x", L),
        ("git switch -c x", L),
        ("git switch -C x", M),
        ("git switch --detach v1", L),
        ("git restore --staged a.py", L),
        ("git restore -S .", L),
        ("git reset", L),
        ("git reset a.py", M),
        ("git reset -- a.py", L),
        ("git reset HEAD a.py", L),
        ("git reset HEAD", L),
        ("git reset -p", L),
        ("git reset HEAD~1", M),
        ("git reset --soft HEAD~1", M),
        ("git reset --mixed x", M),
        ("git reset --keep x", M),
        ("git merge x", M),
        ("git merge --abort", L),
        ("git merge --continue", M),
        ("git rebase main", M),
        ("git rebase -i HEAD~3", M),
        ("git rebase --abort", L),
        ("git rebase --continue", M),
        ("git cherry-pick x", M),
        ("git cherry-pick --abort", L),
        ("git revert x", M),
        ("git am p.mbox", M),
        ("git am --abort", L),
        ("git bisect start", L),
        ("git bisect good", L),
        ("git bisect log", R),
        ("git bisect run make test", M),
        ("git bisect run rm -rf x", D),
        ("git reflog", R),
        ("git reflog show main", R),
        ("git update-ref refs/heads/x abc", H),
        ("git rm a", M),
        ("git rm --cached .env", H),
        ("git rm --cached a", L),
        ("git rm -rf dir", H),
        ("git gc", M),
        ("git gc --prune=now", H),
        ("git notes list", R),
        ("git notes add -m x", L),
        ("git notes remove", M),
        ("git grep foo", R),
        ("git grep -O foo", D),
        ("git log --output=out.txt", M),
        ("git diff --output=/etc/x", H),
        ("git apply --check p.diff", R),
        ("git apply p.diff", M),
        ("git lfs ls-files", R),
        ("git lfs pull", M),
        ("git sparse-checkout list", R),
        ("git sparse-checkout set src", M),
        ("git difftool", M),
        ("git difftool -x sh", D),
        ("git commit -m x", M),
        ("git commit --amend", M),
        ("git commit -am x", M),
        ("git fetch --all --prune", M),
        ("git pull --rebase origin main", M),
        ("git clone url", M),
        ("git init", L),
        ("git add -p", L),
        ("git add .env", H),
        ("git diff .env", H),
        ("git show HEAD:.env", H),
        ("git mv a b", M),
        ("git format-patch -3", R),
        ("git archive -o x.tgz HEAD", L),
        ("git ls-remote origin", R),
        ("git -C ../other status", R),
        ("git --no-pager log", R),
        ("git -p log", R),
        ("git --version", R),
        ("git help", R),
        ("git", R),
        ("git --exec-path", R),
        ("git --exec-path=/tmp/x status", D),
    ],
)
def test_git_subcommand_tiers(command: str, tier: int) -> None:
    assert_tier(command, Tier(tier))


@pytest.mark.parametrize(
    "command",
    [
        "git checkout main",
        "git checkout master",
        "git checkout develop",
        "git checkout feature/login",
        "git checkout origin/main",
        "git checkout v1.2.3",
        "git checkout abc1234",
        "git checkout HEAD~3",
        "git checkout Makefile",
        "git checkout -q main",
        "git checkout main a.py",
    ],
)
def test_git_checkout_of_a_name_fails_closed_unless_provably_a_branch_switch(command: str) -> None:
    """``git checkout NAME`` restores NAME if it is a path (losing its edits), and whether it
    is one cannot be known from the command: only ``-b``, ``--detach``, ``NAME --`` and ``-``
    are provably branch switches. (Tried on a real repository: ``git checkout Makefile`` lost
    an edit at ``balanced``.) ``git switch NAME`` is the unambiguous spelling, and low."""
    assessment = assert_rule(command, "git.discard-changes", D)
    assert "git switch" in " ".join(r.detail for r in assessment.reasons)


@pytest.mark.parametrize(
    "command",
    [
        "git -c core.pager='sh -c id' log",
        "git -c core.sshCommand=x fetch",
        "git -c core.fsmonitor=x status",
        "git -c core.hooksPath=/tmp/h commit -m x",
        "git -c alias.x='!sh' x",
        "git -c diff.external=x diff",
        "git -c filter.a.smudge=x checkout .",
        "git -c core.editor=x commit",
        "git -c credential.helper='!x' fetch",
        "git -c include.path=/tmp/c status",
        "git -c protocol.ext.allow=always clone ext::x",
        "git -c url.evil.insteadOf=https:// fetch",
        "git -c uploadpack.packObjectsHook=x fetch",
        "git -c gpg.program=x commit -S",
        "git -c sequence.editor=x rebase -i",
        "git -c merge.x.driver=x merge y",
        "git -c diff.foo.textconv=x diff",
        "git -c $KEY=$VALUE status",
        "git --config-env=core.pager=X log",
        "git config core.pager 'sh -c x'",
        "git config alias.x '!rm -rf /'",
        "git config --global core.sshCommand x",
        "git config core.hooksPath .hooks",
        "git config --global include.path /tmp/x",
        "git config set core.fsmonitor x",
        "git clone --config core.hooksPath=x url",
        "git clone -c core.fsmonitor=x url",
        "git -c core.askPass=x fetch",
    ],
)
def test_settings_that_run_programs(command: str) -> None:
    assessment = assert_tier(command, D)
    assert assessment.rule_ids & {"git.exec-config", "git.unknown-subcommand"}


def test_an_alias_without_bang_fails_closed_when_used() -> None:
    assert_rule("git -c alias.st=status st", "git.unknown-subcommand", D)


@pytest.mark.parametrize(
    "command",
    [
        "git clone ext::sh -c id",
        "git clone 'ext::sh -c touch% /tmp/x' x",
        "git fetch --upload-pack='rm -rf /' origin",
        "git clone -u x url",
        "git clone --upload-pack=x url",
        "git pull --upload-pack=x",
        "git push --receive-pack=x",
        "git push --exec=x",
        "git ls-remote --upload-pack=x url",
        "git archive --exec=x --remote=r",
        "git rebase -x 'make test' main",
        "git rebase --exec='ls' main",
        "git rebase -xls main",
        "git submodule foreach 'git pull'",
        "git submodule foreach --recursive ls",
        "git grep --open-files-in-pager=vim x",
        "git clone fd::3 x",
    ],
)
def test_options_that_run_programs(command: str) -> None:
    assert_rule(command, "git.exec-option", D)


@pytest.mark.parametrize(
    "command",
    [
        "git frobnicate",
        "git st",
        "git co main",
        "git lg",
        "git $SUB",
        "git annex sync",
        "git flow init",
    ],
)
def test_unknown_subcommands_fail_closed(command: str) -> None:
    assert_tier(command, D)


def test_global_options_are_skipped_before_the_subcommand() -> None:
    assert_tier("git -C /some/repo --git-dir=/x/.git --work-tree /x -c a.b=c status", R)
    assert_tier("git --namespace ns -P log", R)
    assert_tier("git -C . -c color.ui=always diff", R)


def test_git_template_installs_hooks() -> None:
    assert_tier("git clone --template=/tmp/t url", H)
