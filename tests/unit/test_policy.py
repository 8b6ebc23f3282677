"""Policy resolution: canonical paths, masks, protected paths, validation errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.sandbox.policy import (
    PROTECTED_NAMES,
    NetworkMode,
    PolicyRequest,
    SandboxPolicy,
    resolve_policy,
)


def resolve(project: Path, **kwargs: object) -> SandboxPolicy:
    session = project.parent / "session-tmp"
    session.mkdir(exist_ok=True)
    return resolve_policy(
        PolicyRequest(project=project, cwd=project, **kwargs), session_tmp=session
    )  # type: ignore[arg-type]


def test_project_and_session_are_writable_and_canonical(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    policy = resolve(link)
    assert policy.project == real
    assert real in policy.writable
    assert (tmp_path / "session-tmp") in policy.writable
    assert policy.network is NetworkMode.DENY


def test_duplicate_writable_roots_are_merged(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    policy = resolve(project, writable=(project, tmp_path / "p" / "."))
    assert policy.writable.count(project) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"writable": (Path("/nonexistent/stockade"),)}, "does not exist"),
        ({"read_deny": (Path("relative/dir"),)}, "relative path"),
        ({"write_deny_within_allow": (Path("vendor"),)}, "relative path"),
    ],
)
def test_bad_paths_are_usage_errors(
    tmp_path: Path, kwargs: dict[str, object], message: str
) -> None:
    project = tmp_path / "p"
    project.mkdir()
    with pytest.raises(UsageError, match=message) as caught:
        resolve(project, **kwargs)
    assert caught.value.fix
    assert caught.value.exit_code == 2


def test_missing_project_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        resolve_policy(PolicyRequest(project=tmp_path / "nope", cwd=tmp_path), session_tmp=tmp_path)


def test_unreadable_project_is_a_usage_error(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root can read any directory")
    project = tmp_path / "locked"
    project.mkdir(mode=0o000)
    try:
        with pytest.raises(UsageError, match="not readable"):
            resolve_policy(PolicyRequest(project=project, cwd=tmp_path), session_tmp=tmp_path)
    finally:
        project.chmod(0o755)


def test_writable_root_inside_a_mask_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    secret = tmp_path / "secret"
    (secret / "inner").mkdir(parents=True)
    project.mkdir()
    with pytest.raises(UsageError, match="inside the masked"):
        resolve(project, read_deny=(secret,), writable=(secret / "inner",))


def test_writable_root_inside_allow_within_deny_is_accepted(tmp_path: Path) -> None:
    project = tmp_path / "p"
    secret = tmp_path / "secret"
    (secret / "public" / "cache").mkdir(parents=True)
    project.mkdir()
    policy = resolve(
        project,
        read_deny=(secret,),
        read_allow_within_deny=(secret / "public",),
        writable=(secret / "public" / "cache",),
    )
    assert secret / "public" / "cache" in policy.writable


def test_cwd_outside_writable_roots_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    elsewhere = tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    with pytest.raises(UsageError, match="outside every writable root"):
        resolve_policy(PolicyRequest(project=project, cwd=elsewhere), session_tmp=project)


def test_cwd_symlink_into_outside_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    outside = tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "escape").symlink_to(outside)
    policy = resolve(project)
    with pytest.raises(UsageError, match="outside every writable root"):
        policy.with_cwd(project / "escape")


def test_masks_only_existing_paths_and_default_home_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".netrc").write_text("machine x password y\n")
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "p"
    project.mkdir()
    policy = resolve(project)
    masked = {m.path: m.is_dir for m in policy.masked}
    assert masked[home / ".ssh"] is True
    assert masked[home / ".netrc"] is False
    assert home / ".aws" not in masked


def test_root_only_secrets_masked_when_root(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    masked = {m.path for m in resolve(project).masked}
    assert (Path("/etc/shadow") in masked) == (os.geteuid() == 0)


def test_a_fresh_project_has_nothing_to_mount_only_names_to_guard(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    policy = resolve(project)
    assert policy.protected == ()
    guarded = {g.path for g in policy.guarded}
    for name in PROTECTED_NAMES:
        assert project / name in guarded, name
    assert project / ".bashrc" not in guarded, "shell rc files matter only in $HOME"


def test_existing_git_dir_protects_hooks_and_config_only(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    protected = {p.path: p for p in resolve(project).protected}
    assert project / ".git" not in protected
    assert protected[project / ".git" / "hooks"].is_dir
    assert not protected[project / ".git" / "config"].is_dir


def test_worktree_gitdir_file_protects_the_real_git_dir(tmp_path: Path) -> None:
    project = tmp_path / "p"
    main_git = tmp_path / "p" / "main.git"
    worktree_git = main_git / "worktrees" / "wt"
    (worktree_git).mkdir(parents=True)
    (main_git / "hooks").mkdir()
    (main_git / "config").write_text("")
    (worktree_git / "commondir").write_text("../..\n")
    (project / ".git").write_text(f"gitdir: {worktree_git}\n")
    policy = resolve(project)
    protected = {p.path for p in policy.protected}
    assert project / ".git" in protected, "the pointer itself"
    assert main_git / "hooks" in protected
    assert main_git / "config" in protected
    assert worktree_git / "hooks" in {g.path for g in policy.guarded}


def test_hooks_path_into_the_work_tree_is_protected(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n\thooksPath = .husky/_\n")
    (project / ".husky" / "_").mkdir(parents=True)
    protected = {p.path for p in resolve(project).protected}
    assert project / ".husky" / "_" in protected
    assert project / ".husky" in protected


def test_a_refresh_finds_the_same_protection_as_the_resolve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every run refreshes the protected names: a root inside $HOME and a hooksPath from the
    user's git config must survive that, not only the first resolve."""
    home = tmp_path / "home"
    (home / ".config" / "fish").mkdir(parents=True)
    (home / ".gitconfig").write_text("[core]\n\thooksPath = .husky\n")
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "p"
    (project / ".husky").mkdir(parents=True)
    policy = resolve(project, writable=(home / ".config",))
    protected = {p.path for p in policy.protected}
    assert {home / ".config" / "fish", project / ".husky"} <= protected
    fresh = policy.with_fresh_protection()
    assert fresh.protected == policy.protected
    assert fresh.guarded == policy.guarded


def test_write_deny_within_allow_is_guarded_while_missing(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    policy = resolve(project, write_deny_within_allow=(project / "vendor" / "lib",))
    assert project / "vendor" / "lib" in {g.path for g in policy.guarded}
    (project / "vendor" / "lib").mkdir(parents=True)
    assert project / "vendor" / "lib" in {p.path for p in policy.with_fresh_protection().protected}


def test_is_writable_respects_protection(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".git" / "hooks").mkdir(parents=True)
    policy = resolve(project)
    assert policy.is_writable(project / "src" / "main.py")
    assert not policy.is_writable(project / ".git" / "hooks" / "pre-commit")
    assert not policy.is_writable(tmp_path / "elsewhere")


def test_environment_is_scrubbed_and_redirected(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    env = {
        "PATH": "/usr/bin",
        "GITHUB_TOKEN": "x",
        "aws_secret_access_key": "y",
        "MY_PASSWORD": "z",
        "SSH_AUTH_SOCK": "/run/agent",
        "EDITOR": "vi",
        "TMPDIR": "/host",
    }
    session = tmp_path / "session-tmp"
    session.mkdir()
    policy = resolve_policy(
        PolicyRequest(project=project, cwd=project, env_passthrough=("MY_PASSWORD",)),
        session_tmp=session,
        host_env=env,
    )
    assert policy.env["PATH"] == "/usr/bin"
    assert policy.env["EDITOR"] == "vi"
    assert policy.env["MY_PASSWORD"] == "z"
    for name in ("GITHUB_TOKEN", "aws_secret_access_key", "SSH_AUTH_SOCK"):
        assert name not in policy.env
    assert policy.env["TMPDIR"] == str(session)
    assert policy.env["PIP_CACHE_DIR"].startswith(str(session))
    assert "GITHUB_TOKEN" in policy.dropped_env
