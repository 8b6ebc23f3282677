"""Landlock planning logic: ABI masks, policy validation, and the sibling trick on a real tree.

Planning walks a real directory tree but needs no Landlock; enforcement is proven in
tests/integration/test_defence_landlock.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stockade.errors import UsageError
from stockade.sandbox import landlock as ll

ABI = 7
READ = ll.mask(ll.READ, ABI)
WRITE = ll.mask(ll.WRITE, ABI)
READ_DIR = ll.mask(("read_dir",), ABI)
FILE_ONLY = ll.mask(ll.ONLY_FOR_FILES, ABI)


def bit(name: str) -> int:
    return ll.FS_RIGHTS[name][0]


@pytest.mark.parametrize(
    ("abi", "present", "absent"),
    [
        (1, ["execute", "make_sym"], ["refer", "truncate", "ioctl_dev"]),
        (2, ["refer"], ["truncate", "ioctl_dev"]),
        (3, ["refer", "truncate"], ["ioctl_dev"]),
        (5, ["refer", "truncate", "ioctl_dev"], []),
    ],
)
def test_fs_rights_follow_the_abi(abi: int, present: list[str], absent: list[str]) -> None:
    handled = ll.handled_fs(abi)
    for name in present:
        assert handled & bit(name)
    for name in absent:
        assert not handled & bit(name)


def test_network_and_scopes_only_from_their_abi() -> None:
    assert ll.mask(ll.NET_RIGHTS, 3) == 0
    assert ll.mask(ll.NET_RIGHTS, 4) == 0b11
    assert ll.mask(ll.SCOPES, 5) == 0
    assert ll.mask(ll.SCOPES, 6) == 0b11


def test_writes_never_include_device_creation() -> None:
    assert not WRITE & (bit("make_char") | bit("make_block"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"writable_roots": ["relative/dir"]}, "not absolute"),
        ({"masked_paths": "/home/u/.ssh"}, "list of paths"),
        ({"allowed_tcp_port": 0}, "not a TCP port"),
        ({"allowed_tcp_port": 70000}, "not a TCP port"),
    ],
)
def test_bad_policies_are_refused_with_a_fix(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message) as info:
        ll.LandlockPolicy(**kwargs)  # type: ignore[arg-type]
    assert info.value.fix


def test_paths_are_canonicalised_and_deduplicated(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    policy = ll.LandlockPolicy(writable_roots=[str(tmp_path / "link"), str(tmp_path / "real/")])
    assert policy.writable_roots == (str(tmp_path / "real"),)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """home/{.ssh/id, .bashrc, proj/{.git/{hooks/pre-commit, config, info/x}, src/a}}"""
    home = tmp_path / "home"
    for d in ["home/.ssh", "home/proj/.git/hooks", "home/proj/.git/info", "home/proj/src"]:
        (tmp_path / d).mkdir(parents=True)
    for f in [
        "home/.ssh/id",
        "home/.bashrc",
        "home/proj/.git/hooks/pre-commit",
        "home/proj/.git/config",
        "home/proj/.git/info/x",
        "home/proj/src/a",
    ]:
        (tmp_path / f).write_text("x")
    (home / "ssh-link").symlink_to(home / ".ssh")
    return home


def rules_by_path(policy: ll.LandlockPolicy) -> dict[str, int]:
    return {r.path: r.rights for r in ll.plan(policy, ABI)}


def test_masked_directory_gets_no_rule_its_siblings_get_read(tree: Path) -> None:
    policy = ll.LandlockPolicy(
        readable_roots=[str(tree)], masked_paths=[str(tree / ".ssh")], writable_files=[]
    )
    rules = rules_by_path(policy)
    assert str(tree / ".ssh") not in rules
    assert not any(p.startswith(str(tree / ".ssh") + "/") for p in rules)
    assert rules[str(tree)] == READ_DIR  # the ancestor: names only
    assert rules[str(tree / "proj")] == READ
    assert rules[str(tree / ".bashrc")] == READ & FILE_ONLY  # a file: file rights only
    assert str(tree / "ssh-link") not in rules  # a symlink would grant its target


def test_protected_path_freezes_ancestors_and_opens_siblings(tree: Path) -> None:
    proj = tree / "proj"
    policy = ll.LandlockPolicy(
        readable_roots=[],
        writable_files=[],
        writable_roots=[str(proj)],
        protected_paths=[str(proj / ".git/hooks"), str(proj / ".git/config")],
    )
    rules = rules_by_path(policy)
    assert str(proj) not in rules and str(proj / ".git") not in rules  # frozen: no write
    assert rules[str(proj / "src")] == WRITE
    assert rules[str(proj / ".git/info")] == WRITE
    assert str(proj / ".git/hooks") not in rules
    assert str(proj / ".git/config") not in rules
    assert ll.frozen_directories(policy) == (str(proj), str(proj / ".git"))


def test_protected_path_that_does_not_exist_yet_still_freezes_its_parent(tree: Path) -> None:
    proj = tree / "proj"
    policy = ll.LandlockPolicy(
        readable_roots=[],
        writable_files=[],
        writable_roots=[str(proj)],
        protected_paths=[str(proj / ".stockade")],
    )
    rules = rules_by_path(policy)
    assert str(proj) not in rules
    assert rules[str(proj / "src")] == WRITE


def test_writable_root_without_exceptions_is_one_rule(tree: Path) -> None:
    policy = ll.LandlockPolicy(
        readable_roots=[], writable_files=[], writable_roots=[str(tree / "proj")]
    )
    assert rules_by_path(policy) == {str(tree / "proj"): WRITE}


def test_masked_path_inside_a_writable_root_is_neither_readable_nor_writable(tree: Path) -> None:
    proj = tree / "proj"
    policy = ll.LandlockPolicy(
        readable_roots=[str(tree)],
        writable_files=[],
        writable_roots=[str(proj)],
        masked_paths=[str(proj / "src")],
    )
    rules = rules_by_path(policy)
    assert str(proj / "src") not in rules
    assert str(proj / "src/a") not in rules


def test_rules_on_the_same_path_are_merged(tree: Path) -> None:
    proj = tree / "proj"
    policy = ll.LandlockPolicy(
        readable_roots=[str(tree)],
        writable_files=[],
        writable_roots=[str(proj)],
        masked_paths=[str(tree / ".ssh")],
    )
    assert rules_by_path(policy)[str(proj)] == READ | WRITE


@pytest.mark.parametrize("abi", [1, 3, 4, 6, 7])
def test_describe_never_claims_what_the_abi_cannot_do(abi: int, tree: Path) -> None:
    policy = ll.LandlockPolicy(
        writable_roots=[str(tree / "proj")],
        allowed_tcp_port=3128,
        protected_paths=[str(tree / "proj/.git/hooks")],
    )
    posture = ll.describe(policy, abi=abi)
    claims = " ".join(posture.enforced)
    caveats = " ".join(posture.not_enforced)
    assert ("TCP" in claims) == (abi >= 4)
    assert ("signals" in claims) == (abi >= 6)
    assert "no PID namespace" in caveats
    assert "frozen" in caveats
    if abi >= 4:  # the supervisor checks the host of connect() unless AF_UNIX is allowed
        assert "127.0.0.1:3128" in claims and "every address" not in caveats
        with_unix = ll.describe(
            ll.LandlockPolicy(allowed_tcp_port=3128, allow_unix_sockets=True), abi=abi
        )
        assert "every address" in " ".join(with_unix.not_enforced)


def test_below_dev_only_the_listed_devices_are_readable_and_six_writable() -> None:
    rules = {r.path: r.rights for r in ll.plan(ll.LandlockPolicy(), ABI)}
    below = {path: rights for path, rights in rules.items() if path.startswith("/dev/")}
    assert rules["/dev"] == READ_DIR  # names listable, nothing else
    assert set(below) <= set(ll.READABLE_DEVICES), set(below) - set(ll.READABLE_DEVICES)
    writable = {path for path, rights in below.items() if rights & bit("write_file")}
    assert writable == {p for p in ll.DEFAULT_WRITABLE_FILES if Path(p).exists()}
    assert not any(path.startswith(("/dev/pts", "/dev/ptmx", "/dev/console")) for path in rules)
    for path in ("/", "/usr", "/etc"):  # the rest of the host stays readable
        assert rules.get(path, 0) & READ_DIR


def test_the_commands_own_terminal_is_granted_and_nothing_else_in_dev_pts() -> None:
    import os

    controller, terminal = os.openpty()
    try:
        name = os.ttyname(terminal)
        rules = {r.path: r.rights for r in ll.plan(ll.LandlockPolicy(terminals=[name]), ABI)}
        assert rules[name] & bit("write_file") and rules[name] & bit("read_file")
        assert [p for p in rules if p.startswith("/dev/pts")] == [name]
    finally:
        os.close(terminal)
        os.close(controller)


def test_devices_are_left_alone_when_no_readable_root_covers_dev(tree: Path) -> None:
    policy = ll.LandlockPolicy(readable_roots=[str(tree)], writable_files=[])
    assert not any(r.path.startswith("/dev") for r in ll.plan(policy, ABI))


def test_describe_without_landlock_claims_nothing() -> None:
    posture = ll.describe(ll.LandlockPolicy(), abi=0)
    assert posture.enforced == ()
