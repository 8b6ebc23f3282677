"""A protected path inside (or equal to) a masked path must not be re-bound read-only from the
host: that re-bind would expose exactly what the mask hides. Found by the settings property
test (a project's write_deny_within_allow on a path the user masks)."""

from __future__ import annotations

from pathlib import Path

from stockade.sandbox.bwrap import mount_arguments
from stockade.sandbox.policy import PolicyRequest, resolve_policy


def _policy(tmp_path: Path, **request: object):  # type: ignore[no-untyped-def]
    project = tmp_path / "project"
    session = tmp_path / "session"
    session.mkdir(exist_ok=True)
    return resolve_policy(
        PolicyRequest(project=project, cwd=project, **request),  # type: ignore[arg-type]
        session_tmp=session,
        host_env={"HOME": str(tmp_path / "home")},
    )


def test_write_deny_on_a_masked_directory_does_not_unmask_it(tmp_path: Path) -> None:
    vendor = tmp_path / "project" / "vendor"
    vendor.mkdir(parents=True)
    policy = _policy(tmp_path, read_deny=(vendor,), write_deny_within_allow=(vendor,))
    assert vendor in [m.path for m in policy.masked]
    assert vendor not in [p.path for p in policy.protected]
    assert vendor not in [p.path for p in policy.with_fresh_protection().protected]
    assert _ro_bind_of(mount_arguments(policy), vendor) is False


def test_builtin_protected_names_inside_a_masked_git_dir_stay_masked(tmp_path: Path) -> None:
    git = tmp_path / "project" / ".git"
    (git / "hooks").mkdir(parents=True)
    (git / "config").write_text("[core]\n")
    policy = _policy(tmp_path, read_deny=(git,))
    protected = {p.path for p in policy.protected}
    assert git / "hooks" not in protected and git / "config" not in protected


def test_protection_below_an_allow_within_re_bind_is_kept(tmp_path: Path) -> None:
    secret = tmp_path / "project" / "secret"
    (secret / "public" / "keep").mkdir(parents=True)
    policy = _policy(
        tmp_path,
        read_deny=(secret,),
        read_allow_within_deny=(secret / "public",),
        write_deny_within_allow=(secret / "public" / "keep",),
    )
    assert secret / "public" / "keep" in {p.path for p in policy.protected}


def test_protection_of_unmasked_paths_is_unchanged(tmp_path: Path) -> None:
    (tmp_path / "project" / ".git" / "hooks").mkdir(parents=True)
    policy = _policy(tmp_path)
    assert tmp_path / "project" / ".git" / "hooks" in {p.path for p in policy.protected}


def _ro_bind_of(args: list[str], target: Path) -> bool:
    return any(
        arg == "--ro-bind" and args[index + 1] == str(target) for index, arg in enumerate(args)
    )
