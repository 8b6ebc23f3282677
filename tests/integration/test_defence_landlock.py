"""The Landlock backend's rules, proven on real forked children (as root and as sbxtest).

Every forbidden action is first shown to succeed without Landlock (the control run, with DAC
opened wide), so a denial under Landlock can only come from Landlock.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from stockade.sandbox import landlock as ll
from stockade.sandbox import seccomp
from stockade.sandbox.probes import access as access_probe
from tests.integration import defence_support
from tests.integration.defence_support import as_identity, identities, probe, run
from tests.netsupport import tcp_listener

ABI = ll.abi_version()
pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(ABI < 1, reason="Landlock is not available on this kernel"),
]
shared_tmp = defence_support.shared_tmp  # fixture
ACCESS = ["/usr/bin/python3", "-I", "-S", str(Path(access_probe.__file__).resolve())]


@pytest.fixture
def tree(shared_tmp: Path) -> Path:
    """proj/{src/a, .git/{hooks/pre-commit, config, info/exclude}}, outside/, secret/key."""
    for d in ["proj/src", "proj/.git/hooks", "proj/.git/info", "outside", "secret"]:
        (shared_tmp / d).mkdir(parents=True)
    for f in [
        "proj/src/a",
        "proj/.git/hooks/pre-commit",
        "proj/.git/config",
        "proj/.git/info/exclude",
        "secret/key",
        "outside/existing",
    ]:
        (shared_tmp / f).write_text("original\n")
    for root, dirs, files in os.walk(shared_tmp):  # DAC wide open: only Landlock can deny
        for name in dirs + files:
            os.chmod(os.path.join(root, name), 0o777)
    return shared_tmp


def policy_for(tree: Path, **overrides: object) -> ll.LandlockPolicy:
    return ll.LandlockPolicy(
        **{  # type: ignore[arg-type]
            "writable_roots": [str(tree / "proj")],
            "protected_paths": [str(tree / "proj/.git/hooks"), str(tree / "proj/.git/config")],
            "masked_paths": [str(tree / "secret")],
            **overrides,
        }
    )


def try_ops(
    identity: str, ops: list[str], preexec: Callable[[], None] | None = None
) -> dict[str, str]:
    out = run([*ACCESS, *ops], identity, preexec_fn=preexec)
    assert out.returncode == 0, out.stderr
    result: dict[str, str] = json.loads(out.stdout)
    return result


def fs_ops(tree: Path) -> dict[str, str]:
    """op -> expected outcome under the policy."""
    p = tree / "proj"
    return {
        f"write:{p}/src/new": "OK",
        f"write:{p}/src/a": "OK",
        f"read:{p}/.git/hooks/pre-commit": "OK",
        f"read:{tree}/outside/existing": "OK",
        f"list:{tree}/secret": "OK",  # names stay visible (documented)
        f"write:{tree}/outside/new": "EACCES",
        f"write:{tree}/outside/existing": "EACCES",
        f"write:{p}/.git/hooks/pre-commit": "EACCES",
        f"write:{p}/.git/hooks/post-checkout": "EACCES",
        f"write:{p}/.git/config": "EACCES",
        f"symlink:{p}/src/a:{p}/.git/hooks/pre-push": "EACCES",
        f"rename:{p}/.git/hooks:{p}/.git/hooks-old": "EACCES",  # swap in a writable dir
        f"rename:{p}/.git/info:{p}/.git/hooks": "EACCES",
        f"rename:{p}/src:{p}/moved": "EACCES",  # the root is frozen (documented)
        f"mkdir:{p}/.stockade": "EACCES",
        f"read:{tree}/secret/key": "EACCES",
        f"write:{tree}/secret/key": "EACCES",
    }


@pytest.mark.parametrize("identity", identities())
def test_files_writes_protected_and_masked_paths(identity: str, tree: Path) -> None:
    expected = fs_ops(tree)
    with ll.prepare(policy_for(tree)) as ruleset:
        confined = try_ops(identity, list(expected), ruleset.enforce)
    assert confined == expected
    assert (tree / "proj/.git/hooks/pre-commit").read_text() == "original\n"
    assert (tree / "proj/src/new").exists()


@pytest.mark.parametrize("identity", identities())
def test_control_every_denied_file_action_works_without_landlock(identity: str, tree: Path) -> None:
    denied = [op for op, outcome in fs_ops(tree).items() if outcome != "OK"]
    assert set(try_ops(identity, denied).values()) == {"OK"}


@pytest.fixture
def tcp_server() -> Iterator[int]:
    with tcp_listener() as port:
        yield port


needs_net = pytest.mark.skipif(ABI < 4, reason="TCP rules need Landlock ABI 4")


@needs_net
@pytest.mark.parametrize("identity", identities())
def test_tcp_connect_and_bind_denied(identity: str, tree: Path, tcp_server: int) -> None:
    ops = [f"connect:{tcp_server}", "bind:0"]
    assert try_ops(identity, ops) == {f"connect:{tcp_server}": "OK", "bind:0": "OK"}
    with ll.prepare(policy_for(tree)) as ruleset:
        assert try_ops(identity, ops, ruleset.enforce) == {
            f"connect:{tcp_server}": "EACCES",
            "bind:0": "EACCES",
        }


@needs_net
@pytest.mark.parametrize("identity", identities())
def test_only_the_allowed_proxy_port_is_reachable(
    identity: str, tree: Path, tcp_server: int
) -> None:
    other = socket.socket()
    other.bind(("127.0.0.1", 0))
    other.listen(1)
    try:
        other_port = other.getsockname()[1]
        ops = [f"connect:{tcp_server}", f"connect:{other_port}", "bind:0"]
        with ll.prepare(policy_for(tree, allowed_tcp_port=tcp_server)) as ruleset:
            assert try_ops(identity, ops, ruleset.enforce) == {
                f"connect:{tcp_server}": "OK",
                f"connect:{other_port}": "EACCES",
                "bind:0": "EACCES",
            }
    finally:
        other.close()


needs_scope = pytest.mark.skipif(ABI < 6, reason="IPC scoping needs Landlock ABI 6")


@needs_scope
@pytest.mark.parametrize("identity", identities())
def test_signals_and_abstract_sockets_stay_inside(identity: str, tree: Path) -> None:
    neighbour = subprocess.Popen(["sleep", "60"], **as_identity(identity))
    name = f"stockade-test-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen(4)
    try:
        ops = [f"kill:{neighbour.pid}", f"abstract:{name}"]
        assert set(try_ops(identity, ops).values()) == {"OK"}
        with ll.prepare(policy_for(tree)) as ruleset:
            assert try_ops(identity, ops, ruleset.enforce) == {
                f"kill:{neighbour.pid}": "EPERM",
                f"abstract:{name}": "EPERM",
            }
    finally:
        server.close()
        neighbour.kill()
        neighbour.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="capabilities matter for root")
def test_root_loses_every_capability(tree: Path) -> None:
    with ll.prepare(policy_for(tree)) as ruleset:
        out = subprocess.run(
            ["grep", "^Cap", "/proc/self/status"],
            capture_output=True,
            text=True,
            preexec_fn=ruleset.enforce,
            check=True,
        )
    caps = dict(line.split(":\t") for line in out.stdout.splitlines())
    assert set(caps.values()) == {"0000000000000000"}, caps


@pytest.mark.parametrize("identity", identities())
def test_full_landlock_backend_chain_with_seccomp(identity: str, tree: Path) -> None:
    """Landlock then seccomp in one preexec: files, syscalls and ordinary programs."""
    install_seccomp = seccomp.preexec_installer(allow_unix_sockets=False, cache=tree / "cache")
    with ll.prepare(policy_for(tree)) as ruleset:

        def confine() -> None:
            ruleset.enforce()
            install_seccomp()

        syscalls = json.loads(run(probe(), identity, preexec_fn=confine).stdout)
        files = try_ops(identity, list(fs_ops(tree)), confine)
        shell = run(
            ["/bin/sh", "-c", f"cd {tree}/proj/src && echo ok > b && cat b && ls"],
            identity,
            preexec_fn=confine,
        )
    enosys = {r.syscall for r in seccomp.rules(allow_unix_sockets=False) if r.errno == errno.ENOSYS}
    assert {v for k, v in syscalls.items() if k.split(":")[0] not in enosys} == {"EPERM"}
    assert files == fs_ops(tree)
    assert shell.stdout.split() == ["ok", "a", "b", "new"], shell.stderr


def test_a_ruleset_is_reusable_until_a_walked_directory_changes(tree: Path) -> None:
    with ll.prepare(policy_for(tree)) as ruleset:
        assert ruleset.is_current()
        for _ in range(3):
            assert try_ops("self", [f"write:{tree}/proj/src/a"], ruleset.enforce) == {
                f"write:{tree}/proj/src/a": "OK"
            }
        # (no second is_current() here: the walk includes shared ancestors such as /tmp,
        # which other processes change at any time)
        (tree / "proj/newdir").mkdir()  # proj is walked (ancestor of a protected path)
        assert not ruleset.is_current()
    assert not ruleset.is_current()  # closed


def test_apply_in_a_forked_child_and_parent_stays_free(tree: Path) -> None:
    code = (
        "import sys; from stockade.sandbox import landlock as ll\n"
        f"ll.apply(ll.LandlockPolicy(writable_roots=[{str(tree / 'proj')!r}]))\n"
        f"open({str(tree / 'outside/x')!r}, 'w')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert "PermissionError" in out.stderr
    (tree / "outside/x").write_text("the parent is not confined\n")


@pytest.mark.parametrize("identity", identities())
def test_memory_and_environment_of_outside_processes_are_unreadable(
    identity: str, tree: Path
) -> None:
    """describe() claims this (Landlock's ptrace restriction covers /proc/PID/environ|mem)."""
    neighbour = subprocess.Popen(["sleep", "60"], **as_identity(identity))
    try:
        ops = [f"read:/proc/{neighbour.pid}/environ", f"read:/proc/{neighbour.pid}/cmdline"]
        assert set(try_ops(identity, ops).values()) == {"OK"}
        with ll.prepare(policy_for(tree)) as ruleset:
            assert try_ops(identity, ops, ruleset.enforce) == {
                ops[0]: "EACCES",
                ops[1]: "OK",
            }  # cmdline stays visible (documented)
    finally:
        neighbour.kill()
        neighbour.wait()
