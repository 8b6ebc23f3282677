"""bwrap mount ordering: parents before children, most specific wins."""

from __future__ import annotations

from pathlib import Path

from stockade.sandbox.bwrap import BwrapBinary, build_argv, mount_arguments
from stockade.sandbox.policy import (
    GuardedPath,
    MaskedPath,
    NetworkMode,
    ProtectedPath,
    SandboxPolicy,
)


def policy(**kwargs: object) -> SandboxPolicy:
    defaults: dict[str, object] = {
        "project": Path("/home/u/p"),
        "cwd": Path("/home/u/p"),
        "session_tmp": Path("/tmp/s/tmp"),
        "writable": (Path("/home/u/p"), Path("/tmp/s/tmp")),
        "masked": (),
        "read_allow_within_deny": (),
        "protected": (),
        "network": NetworkMode.DENY,
        "env": {"PATH": "/usr/bin"},
    }
    defaults.update(kwargs)
    return SandboxPolicy(**defaults)  # type: ignore[arg-type]


def positions(args: list[str], *targets: str) -> list[int]:
    """Where each target is first mounted."""
    return [args.index(t) for t in targets]


def test_skeleton_comes_first_and_tmp_before_session_bind() -> None:
    args = mount_arguments(policy())
    assert args[:3] == ["--ro-bind", "/", "/"]
    tmpfs = args.index("/tmp")
    assert tmpfs < args.index("/tmp/s/tmp")


def test_mask_inside_writable_root_is_applied_after_the_bind() -> None:
    args = mount_arguments(
        policy(
            writable=(Path("/home/u"),),
            masked=(MaskedPath(Path("/home/u/.ssh"), True),),
        )
    )
    bind, mask = positions(args, "/home/u", "/home/u/.ssh")
    assert bind < mask
    assert args[mask - 1] == "--tmpfs"
    assert args[-2:] == ["--remount-ro", "/home/u/.ssh"]


def test_writable_inside_allowed_inside_mask_keeps_every_layer() -> None:
    args = mount_arguments(
        policy(
            writable=(Path("/home/u/.config/gh/cache"),),
            masked=(MaskedPath(Path("/home/u/.config"), True),),
            read_allow_within_deny=(Path("/"),),  # exists; placed by depth like any other
        )
    )
    mask, cache = positions(args, "/home/u/.config", "/home/u/.config/gh/cache")
    assert mask < cache


def test_protected_paths_are_bound_read_only_after_the_writable_bind() -> None:
    args = mount_arguments(
        policy(
            protected=(
                ProtectedPath(Path("/home/u/p/.git/hooks"), True),
                ProtectedPath(Path("/home/u/p/.vscode"), True),
            )
        )
    )
    bind, hooks, vscode = positions(args, "/home/u/p", "/home/u/p/.git/hooks", "/home/u/p/.vscode")
    assert bind < min(hooks, vscode)
    assert args[hooks - 1 : hooks + 2] == ["--ro-bind", *["/home/u/p/.git/hooks"] * 2]
    assert args[vscode - 1 : vscode + 2] == ["--ro-bind", *["/home/u/p/.vscode"] * 2]


def test_guarded_names_and_outside_symlink_targets_get_no_mount() -> None:
    """A protected name that does not exist has no mount point on the host, so bwrap must not
    be asked to make one (it would create it on the host): the post-run guard judges it."""
    args = mount_arguments(
        policy(
            protected=(ProtectedPath(Path("/etc/hooks"), True, link=Path("/home/u/p/.husky")),),
            guarded=(GuardedPath(Path("/home/u/p/.bashrc"), False),),
        )
    )
    assert "/home/u/p/.bashrc" not in args
    assert "/etc/hooks" not in args
    assert "--tmpfs" not in args[args.index("/home/u/p") :]


def test_file_masks_use_the_unreadable_session_file() -> None:
    args = mount_arguments(
        policy(
            masked=(MaskedPath(Path("/home/u/.netrc"), False),),
            mask_file=Path("/tmp/s/masked-file"),
            substitutes=((Path("/home/u/.npmrc"), Path("/tmp/s/substitutes/0-npmrc")),),
        )
    )
    netrc, npmrc = positions(args, "/home/u/.netrc", "/home/u/.npmrc")
    assert args[netrc - 2 : netrc + 1] == ["--ro-bind", "/tmp/s/masked-file", "/home/u/.netrc"]
    assert args[npmrc - 1] == "/tmp/s/substitutes/0-npmrc"


def test_argv_sets_env_inside_and_never_shares_net_when_denied() -> None:
    binary = BwrapBinary("/usr/bin/bwrap", (0, 8, 0))
    argv = build_argv(binary, policy(), ["ls", "-la"], status_fd=5, block_fd=6)
    assert "--share-net" not in argv
    assert "--disable-userns" in argv
    separator = argv.index("--")
    assert argv[separator + 1 : separator + 3] == ["/usr/bin/env", "-i"]
    assert "PATH=/usr/bin" in argv[separator:]
    assert argv[-2:] == ["ls", "-la"]
    allowed = build_argv(
        binary, policy(network=NetworkMode.ALLOW), ["true"], status_fd=5, block_fd=6
    )
    assert "--share-net" in allowed


def test_old_bwrap_without_disable_userns() -> None:
    argv = build_argv(
        BwrapBinary("/usr/bin/bwrap", (0, 7, 0)), policy(), ["true"], status_fd=5, block_fd=6
    )
    assert "--disable-userns" not in argv
